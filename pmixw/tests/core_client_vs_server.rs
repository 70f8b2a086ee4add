//! Our two halves against each other (issue #6 item 4): `pmixw probe` as
//! every rank under `pmixw run`, our client library on our server in
//! every dialect it can be steered to, and `pmixw query` as a tool against
//! a running `pmixw run`.

use pmix_test_kit::process;

use pmix_types::enums::{AllocDirective, Scope};
use pmix_types::{Info, Proc, Value};
use pmix_wire::client::{Client, ClientEnv, FenceOpts, GroupOpts, Queries};
use pmix_wire::server::{net, HostEvent, JobSpec};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

fn pmixw() -> &'static str {
    env!("CARGO_BIN_EXE_pmixw")
}

#[test]
fn probe_passes_every_check_under_pmixw_run() {
    let o = process::run_within(
        Command::new(pmixw()).args([
            "run",
            "-n",
            "4",
            "--timeout",
            "60",
            pmixw(),
            "probe",
            "--events",
        ]),
        Duration::from_secs(90),
        "the job",
    );
    let out = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{out}");
    for r in 0..4 {
        let last = out
            .lines()
            .find(|l| l.starts_with(&format!("[{r}] probe: ")))
            .unwrap_or_else(|| panic!("no summary of rank {r}:\n{out}"));
        assert!(last.ends_with(", 0 failures"), "{last}");
        for p in 0..4 {
            let want = format!("[{r}] ok get rank {p} probe.str: String(Some(\"hello-from-{p}\"))");
            assert!(out.lines().any(|l| l == want), "no {want:?}\n{out}");
        }
        assert!(
            out.contains(&format!("[{r}] ok resolve peers: 0,1,2,3")),
            "{out}"
        );
    }
    // ranks 1-3 see rank 0's event; rank 0 spawns a job of its own
    assert_eq!(
        out.matches("ok event delivered: status 3131 from rank 0")
            .count(),
        3,
        "{out}"
    );
    // the job of `pmixw probe` is `run-pmixw-<pid>-<hex>` (never `pmix…`)
    assert!(
        out.contains("[0] ok spawn: new namespace run-pmixw-"),
        "{out}"
    );
}

#[test]
fn probe_abort_ends_the_job_with_its_status() {
    let o = process::run_within(
        Command::new(pmixw()).args([
            "run",
            "-n",
            "2",
            "--timeout",
            "60",
            pmixw(),
            "probe",
            "--abort",
            "7",
        ]),
        Duration::from_secs(60),
        "the job",
    );
    assert_eq!(
        o.status.code(),
        Some(7),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Our client library on our server, in each dialect a client can be
/// told to speak (by the one URI variable it finds): put/commit/fence/get,
/// log, credentials, and the dialect the server saw.
#[test]
fn our_client_on_our_server_in_every_dialect() {
    for (var, dialect) in [
        ("PMIX_SERVER_URI41", pmix_codec::Dialect::V41),
        ("PMIX_SERVER_URI4", pmix_codec::Dialect::V4),
        ("PMIX_SERVER_URI3", pmix_codec::Dialect::V3),
        ("PMIX_SERVER_URI21", pmix_codec::Dialect::V21),
        ("PMIX_SERVER_URI2", pmix_codec::Dialect::V20),
    ] {
        let server = net::start(vec![JobSpec {
            nspace: "both".into(),
            nprocs: 2,
            hostname: net::hostname(),
            info: vec![],
        }])
        .unwrap();
        let ranks: Vec<_> = (0..2u32)
            .map(|r| {
                let env: Vec<(String, String)> = server
                    .client_env("both", r)
                    .into_iter()
                    .filter(|(k, _)| !k.starts_with("PMIX_SERVER_URI") || k == var)
                    .collect();
                std::thread::spawn(move || {
                    let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
                    let mut c = Client::init_with(ClientEnv::from_env(get).unwrap()).unwrap();
                    c.put(
                        Scope::GLOBAL,
                        &format!("both.{r}"),
                        Value::Uint64(u64::from(r) * 11),
                    );
                    c.commit().unwrap();
                    c.fence(
                        FenceOpts::new()
                            .collect_data(true)
                            .timeout(Duration::from_secs(30)),
                    )
                    .unwrap();
                    let peer = 1 - r;
                    let v: u64 = c
                        .get(&Proc::new("both", peer), &format!("both.{peer}"))
                        .unwrap();
                    assert_eq!(v, u64::from(peer) * 11);
                    let text = Info::new(
                        "pmix.log.stderr",
                        Value::String(Some("from our client\n".into())),
                    );
                    c.log(&[text], &[]).unwrap();
                    let ns = c.query(Queries::new().ask(["pmix.qry.ns"])).unwrap();
                    assert_eq!(ns[0].value, Value::String(Some("both".into())));
                    let both = [Proc::new("both", 0), Proc::new("both", 1)];
                    assert_eq!(
                        c.group_construct("grp", &both, GroupOpts::new()).unwrap(),
                        Some(u64::MAX)
                    );
                    c.group_destruct("grp", &[]).unwrap();
                    c.connect(&both, &[]).unwrap();
                    c.disconnect(&both, &[]).unwrap();
                    // what a single-node host does not offer says so
                    let e = c.allocation(AllocDirective::NEW, &[]).unwrap_err();
                    assert!(e.to_string().contains("NOT_SUPPORTED"), "{e}");
                    let cred = c.get_credential(&[]).unwrap();
                    assert_eq!(cred.len(), 8);
                    c.validate_credential(&cred, &[]).unwrap();
                    c.finalize().unwrap();
                })
            })
            .collect();
        for h in ranks {
            h.join().unwrap_or_else(|_| panic!("{var}: a rank failed"));
        }
        let mut seen = Vec::new();
        let mut logs = 0;
        while let Ok(e) = server.events.try_recv() {
            match e {
                HostEvent::Connected(_, f) => seen.push(f.dialect),
                HostEvent::Log { .. } => logs += 1,
                _ => {}
            }
        }
        assert_eq!(seen, vec![dialect, dialect], "{var}");
        assert_eq!(logs, 2, "{var}");
    }
}

/// `pmixw query --pid` as a tool against a running `pmixw run`.
#[test]
fn pmixw_query_asks_pmixw_run() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("q-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let job = Command::new(pmixw())
        .args(["run", "-n", "1", "--timeout", "60", "/bin/sleep", "3"])
        .env("TMPDIR", &dir)
        .spawn()
        .unwrap();
    let pid = job.id();
    let file = dir.join(format!("pmix.{}.tool.{pid}", net::hostname()));
    let start = Instant::now();
    while !file.exists() {
        assert!(start.elapsed() < Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = Command::new(pmixw())
        .args(["query", "--pid", &pid.to_string(), "pmix.qry.ns"])
        .env("TMPDIR", &dir)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains(&format!("sleep-{pid}-")), "{out}");
    let o = process::output_within(job, Duration::from_secs(30), "the job");
    assert!(o.status.success());
    let _ = std::fs::remove_dir_all(&dir);
}
