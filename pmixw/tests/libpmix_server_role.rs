//! The server role (issue #5) against unmodified libpmix 4.2.2 clients:
//! interop/c/srv_client.c runs as every rank under `pmixw run` and
//! checks the values it gets (job info keys, every peer's data, lookup,
//! events, query); the same in every dialect a 4.2.2 client can be steered
//! to, two namespaces of different dialects side by side, abort, a rank
//! that dies, timeouts, hostile peers; and the core driven in memory by
//! the bytes libpmix clients sent to libpmix's own server.

use pmix_test_kit::process;

use pmix_codec::Dialect;
use pmix_test_kit::interop::{build_c, default_out_dir};
use pmix_wire::server::{net, HostEvent, JobSpec};
use process::Kill;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Command, Output as ProcOutput, Stdio};
use std::time::{Duration, Instant};

fn client_exe() -> PathBuf {
    build_c("srv_client", &default_out_dir()).unwrap_or_else(|e| panic!("{e}"))
}

/// `pmixw run ARGS`, stopped past the hang guard [`process::HANG`].
fn pmixw_run(args: &[&str]) -> ProcOutput {
    process::run_within(
        Command::new(env!("CARGO_BIN_EXE_pmixw"))
            .arg("run")
            .args(args),
        process::HANG,
        &format!("pmixw run {args:?}"),
    )
}

/// `pmixw run -n N srv_client MODE`, its --timeout a hang guard below
/// the test's own.
fn srv_client_job(n: u32, mode: &str) -> ProcOutput {
    let exe = client_exe();
    let n = n.to_string();
    pmixw_run(&["-n", &n, "--timeout", "500", exe.to_str().unwrap(), mode])
}

fn text(o: &ProcOutput) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The battery's checks every rank must pass.
const CHECKS: &[&str] = &[
    "init",
    "job_size",
    "univ_size",
    "local_size",
    "local_rank",
    "node_rank",
    "appnum",
    "local_peers",
    "hostname",
    "put",
    "commit",
    "get_all_peers",
    "fence_collect",
    "fence",
    "get_missing",
    "lookup",
    "register_event",
    "query_namespaces",
    "allocate_not_supported",
    "resolve_peers",
    "resolve_nodes",
    "get_credential",
    "validate_credential",
    "connect",
    "disconnect",
    "finalize",
];

fn assert_battery(out: &str, n: usize) {
    assert!(!out.lines().any(|l| l.starts_with("fail")), "{out}");
    for c in CHECKS {
        let got = out
            .lines()
            .filter(|l| l.split(' ').nth(1) == Some(c) && l.starts_with("ok"))
            .count();
        assert!(got >= n, "check {c}: {got} ranks of {n} passed\n{out}");
    }
    let peers = (0..n).map(|r| r.to_string()).collect::<Vec<_>>().join(",");
    assert!(out.contains(&format!("ok job_size {n}\n")), "{out}");
    assert!(out.contains(&format!("ok local_peers {peers}\n")), "{out}");
    assert!(out.contains(&format!("ok get_all_peers {n}\n")), "{out}");
    assert!(out.contains("ok lookup svc-addr\n"), "{out}");
    assert_eq!(out.matches("ok event_delivered").count(), n - 1, "{out}");
    for r in 0..n {
        assert!(out.contains(&format!("ok local_rank {r}\n")), "{out}");
        assert!(out.contains(&format!("rank {r}: 0 failures")), "{out}");
    }
}

#[test]
fn libpmix_clients_run_their_battery_under_pmixw_run() {
    let o = srv_client_job(4, "all");
    assert!(o.status.success(), "{}", text(&o));
    assert_battery(&String::from_utf8_lossy(&o.stdout), 4);
}

#[test]
fn every_dialect_a_422_client_can_be_steered_to() {
    let exe = client_exe();
    for d in ["v4", "v3", "v21", "v20"] {
        let o = pmixw_run(&[
            "-n",
            "2",
            "--dialect",
            d,
            "--timeout",
            "500",
            exe.to_str().unwrap(),
            "all",
        ]);
        assert!(o.status.success(), "{d}: {}", text(&o));
        assert_battery(&String::from_utf8_lossy(&o.stdout), 2);
    }
}

fn spawn_rank(exe: &PathBuf, env: Vec<(String, String)>, keep_uri: &str) -> Kill {
    let mut c = Command::new(exe);
    c.arg("all").stdout(Stdio::piped()).stderr(Stdio::piped());
    for (k, v) in env {
        if !k.starts_with("PMIX_SERVER_URI") || k == keep_uri {
            c.env(k, v);
        }
    }
    Kill(c.spawn().unwrap())
}

fn wait_out(k: Kill, limit: Duration) -> (bool, String) {
    process::finish(k, limit, "a rank")
}

/// Version negotiation by namespace: a job whose clients found only
/// PMIX_SERVER_URI3 speaks v3, one whose clients found URI41 speaks v41,
/// both served at once, each in its own dialect.
#[test]
fn two_namespaces_in_different_dialects_side_by_side() {
    let exe = client_exe();
    let host = "localhost".to_string();
    let job = |ns: &str| JobSpec {
        nspace: ns.into(),
        nprocs: 2,
        hostname: host.clone(),
        info: vec![],
    };
    let server = net::start(vec![job("old-v3"), job("new-v41")]).unwrap();
    let mut ranks = Vec::new();
    for (ns, var) in [
        ("old-v3", "PMIX_SERVER_URI3"),
        ("new-v41", "PMIX_SERVER_URI41"),
    ] {
        for r in 0..2 {
            ranks.push((ns, spawn_rank(&exe, server.client_env(ns, r), var)));
        }
    }
    for (ns, k) in ranks {
        let (ok, out) = wait_out(k, process::HANG);
        assert!(ok, "{ns}: {out}");
        assert!(
            out.contains("failures") && !out.contains("fail "),
            "{ns}: {out}"
        );
    }
    let mut seen = Vec::new();
    while let Ok(e) = server.events.try_recv() {
        if let HostEvent::Connected(p, f) = e {
            seen.push((p.nspace.to_string(), p.rank, f.dialect));
        }
    }
    seen.sort();
    assert_eq!(
        seen,
        vec![
            ("new-v41".into(), 0, Dialect::V41),
            ("new-v41".into(), 1, Dialect::V41),
            ("old-v3".into(), 0, Dialect::V3),
            ("old-v3".into(), 1, Dialect::V3),
        ]
    );
}

#[test]
fn an_abort_ends_the_job_with_its_status() {
    let o = srv_client_job(3, "abort");
    assert_eq!(o.status.code(), Some(7), "{}", text(&o));
    assert!(text(&o).contains("srv_client abort test"), "{}", text(&o));
}

#[test]
fn a_rank_that_dies_fails_the_fence_instead_of_hanging_it() {
    let o = srv_client_job(3, "die");
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        out.matches("ok fence_fails_when_a_rank_dies LOST_CONNECTION")
            .count(),
        2,
        "{out}"
    );
}

#[test]
fn a_job_that_outlives_its_timeout_is_killed() {
    // 124 is the timeout's status; ranks that ran to their end give 0
    let o = pmixw_run(&["-n", "2", "--timeout", "1", "/bin/sleep", "600"]);
    assert_eq!(o.status.code(), Some(124), "{}", text(&o));
}

/// Garbage instead of a handshake, an oversized frame and a cut-off
/// handshake each lose only their own connection; the job still runs.
#[test]
fn hostile_peers_lose_only_their_own_connection() {
    let exe = client_exe();
    let server = net::start(vec![JobSpec {
        nspace: "hostile".into(),
        nprocs: 2,
        hostname: "localhost".into(),
        info: vec![],
    }])
    .unwrap();
    let addr = server.uri.rsplit_once("//").unwrap().1.to_string();
    let mut bad = Vec::new();
    // a header announcing 1 GiB: refused before buffering
    let mut huge = vec![0u8; 16];
    huge[8..12].copy_from_slice(&(1u32 << 30).to_le_bytes());
    // a handshake header whose body is not a handshake
    let mut garbage = vec![0u8; 16];
    garbage[8..12].copy_from_slice(&8u32.to_le_bytes());
    garbage.extend_from_slice(b"\xff\xfe\xfdjunk");
    // and one that stops in the middle, then lingers
    let mut cut = vec![0u8; 16];
    cut[8..12].copy_from_slice(&100u32.to_le_bytes());
    cut.extend_from_slice(b"native\0");
    for bytes in [huge, garbage, cut] {
        let mut s = TcpStream::connect(&addr).unwrap();
        s.write_all(&bytes).unwrap();
        bad.push(s);
    }
    // the two closed ones see EOF (a refusal status may come first)
    for s in bad.iter_mut().take(2) {
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut buf = Vec::new();
        let _ = s.read_to_end(&mut buf);
        assert!(buf.len() <= 8, "{buf:?}");
    }
    let ranks: Vec<_> = (0..2)
        .map(|r| spawn_rank(&exe, server.client_env("hostile", r), "PMIX_SERVER_URI41"))
        .collect();
    for k in ranks {
        let (ok, out) = wait_out(k, process::HANG);
        assert!(ok, "{out}");
    }
}

/// Debian's pps (libpmix-bin, a 4.2.2 tool) finds `pmixw run`'s server
/// through its rendezvous files, connects as a tool and lists the job's
/// namespace; the files are mode 0600 and gone once the job ends. The
/// ranks run until the test releases them, so a slow machine only makes
/// every step slower (each wait is for its event, with a hang guard).
#[test]
fn pps_connects_to_pmixw_run() {
    use std::os::unix::fs::PermissionsExt;
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("rndz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let release = dir.join("release");
    let mut job = Kill(
        Command::new(env!("CARGO_BIN_EXE_pmixw"))
            .args(["run", "-n", "2", "--timeout", "500", "/bin/sh", "-c"])
            .arg("while [ ! -e \"$0\" ]; do sleep 0.05; done")
            .arg(&release)
            .env("TMPDIR", &dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let pid = job.0.id();
    let host = net::hostname();
    let file = dir.join(format!("pmix.{host}.tool.{pid}"));
    process::wait_for_file(&file, &mut job.0);
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.starts_with(&format!("{}.{pid};tcp4://127.0.0.1:", net::SERVER_NSPACE)),
        "{text}"
    );
    let pid_s = pid.to_string();
    let o = process::run_within(
        Command::new("pps")
            .args(["--pid", &pid_s])
            .env("TMPDIR", &dir),
        process::HANG,
        "pps --pid (libpmix-bin)",
    );
    let out = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{out}");
    // the job is named after its program
    assert!(out.contains(&format!("Active nspaces: sh-{pid}-")), "{out}");
    // (Debian's pquery 4.2.2 cannot be a peer: given any key it dies with
    // SIGFPE in pmix_init_registered_attrs before it connects anywhere;
    // spec-notes/server.md)
    std::fs::write(&release, "").unwrap();
    let st = process::wait_exit(&mut job.0, "pmixw run after its ranks were released");
    assert!(st.success());
    std::fs::remove_file(&release).unwrap();
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    let _ = std::fs::remove_dir(&dir);
}

/// PMIx_Spawn under `pmixw run`: the launcher really starts the new job
/// (two ranks in a namespace of their own, which wire up with each
/// other), the parent gets its namespace, and the launcher waits for it.
#[test]
fn spawn_starts_a_new_job_that_wires_up() {
    let o = srv_client_job(2, "spawn");
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success(), "{}", text(&o));
    let ns = out
        .lines()
        .find_map(|l| l.strip_prefix("ok spawn "))
        .unwrap_or_else(|| panic!("no spawn line in\n{out}"))
        .to_string();
    assert!(ns.contains("-spawn-"), "{ns}");
    for (r, peer) in [(0, 1), (1, 0)] {
        let want = format!("ok child {ns} {r} of 2 got child-{peer}");
        assert!(out.lines().any(|l| l == want), "no {want:?} in\n{out}");
    }
    assert!(!out.contains("fail "), "{out}");
}

/// PMIx_Job_control with PMIX_JOB_CTRL_KILL: the launcher kills the
/// target rank at once (it would otherwise sleep a minute) and the job's
/// status says a rank was killed.
#[test]
fn job_control_kills_the_target_rank() {
    // 137 (SIGKILL) is the kill's: the timeout gives 124, the target's
    // own end 0
    let o = srv_client_job(2, "jctrl");
    assert_eq!(o.status.code(), Some(137), "{}", text(&o));
    assert!(
        text(&o).contains("ok job_control_kill SUCCESS"),
        "{}",
        text(&o)
    );
}

/// PMIx_Connect across two namespaces: the CONNECT reply carries the other
/// job's data (which the 4.2.2 client accepts), and each rank reads the
/// other job's size afterwards.
#[test]
fn connect_across_namespaces_shares_job_data() {
    let exe = client_exe();
    let job = |ns: &str, n: u32| JobSpec {
        nspace: ns.into(),
        nprocs: n,
        hostname: "localhost".into(),
        info: vec![],
    };
    let server = net::start(vec![job("left", 2), job("right", 3)]).unwrap();
    let mut ranks = Vec::new();
    for (ns, other, n) in [("left", "right", 2), ("right", "left", 3)] {
        for r in 0..n {
            let mut c = Command::new(&exe);
            c.arg("xconnect")
                .env("SRV_PEER_NS", other)
                .envs(server.client_env(ns, r))
                .stdout(Stdio::piped());
            ranks.push((ns, Kill(c.spawn().unwrap())));
        }
    }
    for (ns, k) in ranks {
        let (ok, out) = wait_out(k, process::HANG);
        assert!(ok, "{ns}: {out}");
        let want = if ns == "left" {
            "ok xconnect_size 3"
        } else {
            "ok xconnect_size 2"
        };
        assert!(out.contains(want), "{ns}: {out}");
    }
}

/// A client that sends requests but never reads the replies is dropped
/// once MAX_QUEUED_REPLIES are waiting for it; another client of the same
/// server is served meanwhile.
#[test]
fn a_peer_that_never_reads_is_dropped_alone() {
    let exe = client_exe();
    let server = net::start(vec![JobSpec {
        nspace: "slow".into(),
        nprocs: 2,
        hostname: "localhost".into(),
        info: vec![],
    }])
    .unwrap();
    let addr = server.uri().rsplit_once("//").unwrap().1.to_string();
    let mut s = TcpStream::connect(&addr).unwrap();
    s.write_all(&pmix_test_kit::hostile::connect_frame(
        "slow",
        0,
        vec![0; 8],
    ))
    .unwrap();
    // every REQ is answered with the whole job info (hundreds of bytes)
    let req = pmix_test_kit::hostile::request_frame(101, &pmix_codec::msg::Request::Req);
    let burst: Vec<u8> = req.iter().copied().cycle().take(req.len() * 1000).collect();
    let start = Instant::now();
    let mut dropped = false;
    for _ in 0..200 {
        if s.write_all(&burst).is_err() {
            dropped = true;
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(60));
    }
    // the server gives up on it (its replies pile up unread)
    let mut lost = dropped;
    while !lost && start.elapsed() < Duration::from_secs(30) {
        if let Ok(e) = server.events.recv_timeout(Duration::from_millis(100)) {
            lost = matches!(e, HostEvent::Lost(p) if p.rank == 0);
        }
    }
    assert!(lost, "rank 0 was not dropped");
    // rank 1 is still served: init and finalize
    let k = Kill(
        Command::new(&exe)
            .arg("init")
            .envs(server.client_env("slow", 1))
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let (ok, out) = wait_out(k, process::HANG);
    assert!(ok && out.contains("ok finalize SUCCESS"), "{out}");
    drop(s);
}
