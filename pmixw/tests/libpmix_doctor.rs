//! `pmixw doctor` (issue 16 item 3): under our own `pmixw run` server (in
//! two dialects), against a libpmix 4.2.2 server found through its
//! rendezvous file (interop/c/cli_server.c), with conflicting
//! variables, and with nothing to find.

use pmix_test_kit::process;

use pmixw::doctor::{analyze, diagnose};
use process::{lines_of, run_within, Kill};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// `pmixw run -n 1 [--dialect D] [env VAR=VAL...] pmixw doctor --json`.
fn doctor_under_run(dialect: Option<&str>, extra: &[&str]) -> (bool, serde_json::Value) {
    let me = env!("CARGO_BIN_EXE_pmixw");
    let mut args = vec!["run", "-n", "1", "--timeout", "60"];
    if let Some(d) = dialect {
        args.extend(["--dialect", d]);
    }
    if !extra.is_empty() {
        args.push("env");
        args.extend(extra);
    }
    args.extend([me, "doctor", "--json"]);
    let o = run_within(
        Command::new(me).args(&args),
        Duration::from_secs(90),
        "pmixw run ... doctor",
    );
    let j = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    });
    (o.status.success(), j)
}

#[test]
fn under_our_server_in_two_dialects() {
    for (d, want) in [(None, "v61 NonDesc"), (Some("v20"), "v20 NonDesc")] {
        let (ok, j) = doctor_under_run(d, &[]);
        assert!(ok, "{j:#}");
        assert_eq!(j["reachable"], true);
        assert_eq!(j["dialect"], want);
        assert_eq!(j["server_version"], "4.2.2");
        assert!(j["handshake"]
            .as_str()
            .unwrap()
            .starts_with("accepted as client "));
        assert!(j["verdict"].as_str().unwrap().starts_with("OK: "), "{j:#}");
        assert_eq!(j["conflicts"], serde_json::json!([]));
        // the four job-level keys read as the job's client, with the standard's
        // types (pmix.univ.size once gave "cannot read ... NOT_FOUND")
        assert_eq!(j["notes"], serde_json::json!([]), "{j:#}");
        assert_eq!(j["wrong_types"], serde_json::json!([]), "{j:#}");
    }
}

#[test]
fn pmi_beside_pmix_is_a_conflict() {
    let (ok, j) = doctor_under_run(None, &["PMI_SIZE=1", "PMI_RANK=0"]);
    assert!(!ok, "doctor exits 1 on a conflict");
    assert_eq!(j["reachable"], true);
    let c = j["conflicts"][0].as_str().unwrap();
    assert!(
        c.starts_with("PMI variables (PMI_RANK PMI_SIZE) beside PMIx ones (PMIX_NAMESPACE)"),
        "{c}"
    );
    assert!(j["verdict"].as_str().unwrap().starts_with("WARNING: "));
}

#[test]
fn uri_variables_naming_different_servers() {
    let (cands, r) = analyze(&env(&[
        ("PMIX_SERVER_URI3", "a.0;tcp4://127.0.0.1:1111"),
        ("PMIX_SERVER_URI41", "b.0;tcp4://127.0.0.1:2222"),
        ("PMIX_NAMESPACE", "job"),
    ]));
    // a 4.2.2 client takes the newest dialect's variable
    assert_eq!(cands[0].source, "PMIX_SERVER_URI41");
    assert_eq!(
        r.conflicts,
        [
            "PMIX_SERVER_URI41 names 127.0.0.1:2222 but PMIX_SERVER_URI3 names 127.0.0.1:1111: the client uses PMIX_SERVER_URI41",
            "PMIX_NAMESPACE=job without PMIX_RANK",
        ]
    );
    // the same server under several names is fine
    let (_, r) = analyze(&env(&[
        ("PMIX_SERVER_URI3", "a.0;tcp4://127.0.0.1:1111"),
        ("PMIX_SERVER_URI41", "a.0;tcp4://127.0.0.1:1111"),
    ]));
    assert!(r.conflicts.is_empty());
}

#[test]
fn nothing_to_find_and_nothing_listening() {
    let empty = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("doctor-empty-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let r = diagnose(&[], std::slice::from_ref(&empty));
    assert!(!r.reachable);
    assert!(r.verdict.starts_with("no PMIx server"), "{}", r.verdict);
    // a URI whose port nobody listens on (bound, then closed)
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let uri = format!("x.0;tcp4://127.0.0.1:{port}");
    let r = diagnose(
        &env(&[("PMIX_SERVER_URI41", &uri)]),
        std::slice::from_ref(&empty),
    );
    assert!(!r.reachable);
    assert!(
        r.verdict.starts_with("FAIL: PMIx server not reachable"),
        "{}",
        r.verdict
    );
    let _ = std::fs::remove_dir_all(&empty);
}

/// A C server of interop/c built against libpmix and started with
/// `args` and a fresh tmpdir: the process, its stdout lines, the tmpdir.
/// `None` (the test skips, saying why) only without libpmix-dev.
fn c_server(
    name: &str,
    args: &[&str],
) -> Option<(Kill, std::sync::mpsc::Receiver<String>, PathBuf)> {
    let present = Command::new("pkg-config")
        .args(["--exists", "pmix"])
        .status()
        .is_ok_and(|s| s.success());
    if !present {
        assert!(
            std::env::var_os("CI").is_none(),
            "libpmix-dev is missing in CI"
        );
        eprintln!("SKIPPED: libpmix-dev is not installed");
        return None;
    }
    let exe = pmix_test_kit::interop::build_c(name, &pmix_test_kit::interop::default_out_dir())
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("doctor-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut server = Kill(
        Command::new(exe)
            .args(args)
            .arg(&dir)
            .env("PMIX_MCA_gds", "hash")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let rx = lines_of(server.0.stdout.take().unwrap());
    Some((server, rx, dir))
}

#[test]
fn libpmix_server_through_its_rendezvous_file() {
    let Some((server, rx, dir)) = c_server("cli_server", &[]) else {
        return;
    };
    let line = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("cli_server ready");
    assert!(line.starts_with("ready "), "{line}");
    let r = diagnose(&[], std::slice::from_ref(&dir));
    assert!(r.reachable, "{r:#?}");
    assert!(r.source.as_deref().unwrap().starts_with("rendezvous file "));
    assert_eq!(r.server_version.as_deref(), Some("4.2.2rc2"));
    assert_eq!(r.dialect.as_deref(), Some("v41 NonDesc"));
    assert!(
        r.handshake
            .as_deref()
            .unwrap()
            .starts_with("accepted as tool clitool:0 by server "),
        "{r:#?}"
    );
    assert!(r.verdict.starts_with("OK: "), "{}", r.verdict);
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The variables cap_server gives rank `rank` of `nspace` (its lines
/// "env NSPACE RANK KEY=VALUE", without "env ").
fn rank_env(lines: &[String], nspace: &str, rank: u32) -> Vec<(String, String)> {
    let prefix = format!("{nspace} {rank} ");
    lines
        .iter()
        .filter_map(|l| l.strip_prefix(&prefix)?.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// In a libpmix 4.2.2 job's environment (interop/c/cap_server.c, the
/// variables it gives rank 0): the server, its version and dialect, and
/// its job-level reserved keys read as the job's client with the
/// standard's types; with the URI alone, as a tool where its rendezvous
/// file invites tools, else not at all; `pmixw query` as rank 1; and the
/// server still serves another client afterwards (issue 26 item 2).
#[test]
fn libpmix_server_from_a_jobs_environment() {
    let Some((server, rx, dir)) = c_server("cap_server", &["2"]) else {
        return;
    };
    // "env capns 0 KEY=VALUE" lines, then "ready"
    let mut job_env = Vec::new();
    loop {
        let line = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("cap_server ready");
        if line == "ready" {
            break;
        }
        if let Some(rest) = line.strip_prefix("env ") {
            job_env.push(rest.to_string());
        }
    }
    let r = diagnose(&rank_env(&job_env, "capns", 0), std::slice::from_ref(&dir));
    assert!(r.reachable, "{r:#?}");
    assert_eq!(r.source.as_deref(), Some("PMIX_SERVER_URI41"));
    assert_eq!(r.server_version.as_deref(), Some("4.2.2rc2"));
    assert_eq!(r.dialect.as_deref(), Some("v41 NonDesc"));
    assert_eq!(r.job.as_deref(), Some("capns rank 0"));
    // as the job's client: the job's URI is a client listener
    assert!(
        r.handshake
            .as_deref()
            .unwrap()
            .starts_with("accepted as client capns:0 by server "),
        "{r:#?}"
    );
    assert!(
        r.notes.is_empty() && r.wrong_types.is_empty() && r.conflicts.is_empty(),
        "{r:#?}"
    );
    assert!(r.verdict.starts_with("OK: "), "{}", r.verdict);
    // the URI alone: this server says in its rendezvous file that it
    // takes tools on that listener, so doctor asks as a tool
    let uri_only: Vec<(String, String)> = rank_env(&job_env, "capns", 0)
        .into_iter()
        .filter(|(k, _)| k.starts_with("PMIX_SERVER_URI"))
        .collect();
    let r = diagnose(&uri_only, std::slice::from_ref(&dir));
    assert!(
        r.handshake
            .as_deref()
            .unwrap_or_default()
            .starts_with("accepted as tool "),
        "{r:#?}"
    );
    assert!(r.verdict.starts_with("OK: "), "{}", r.verdict);
    // ... and without such a file, none: nothing is sent to it
    let empty = dir.join("none");
    std::fs::create_dir_all(&empty).unwrap();
    let r = diagnose(&uri_only, std::slice::from_ref(&empty));
    assert!(r.handshake.is_none(), "{r:#?}");
    assert!(r.verdict.starts_with("NOT CHECKED: "), "{}", r.verdict);
    // `pmixw query` in rank 1's environment asks as its client
    let o = Command::new(env!("CARGO_BIN_EXE_pmixw"))
        .args(["query", "pmix.qry.ns"])
        .env_clear()
        .envs(rank_env(&job_env, "capns", 1))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("pmix.qry.ns: "), "{out}");
    // the server lives on: a libpmix client (the job "capabort") still
    // connects and finalizes
    let srv =
        pmix_test_kit::interop::build_c("srv_client", &pmix_test_kit::interop::default_out_dir())
            .unwrap_or_else(|e| panic!("{e}"));
    let o = Command::new(srv)
        .arg("init")
        .env_clear()
        .envs(rank_env(&job_env, "capabort", 0))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        out.contains("ok init SUCCESS") && out.contains("ok finalize SUCCESS"),
        "{out}"
    );
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A bare `--uri` that no rendezvous file names: `pmixw query` refuses
/// before connecting (nothing reaches the listener), and says why.
#[test]
fn query_sends_no_tool_handshake_to_a_bare_uri() {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let empty = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("query-bare-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pmixw"));
    cmd.args(["query", "--wait", "0", "--uri"])
        .arg(format!("x.0;tcp4://127.0.0.1:{port}"))
        .arg("pmix.qry.ns")
        .env("TMPDIR", &empty);
    for (k, _) in std::env::vars() {
        if k.starts_with("PMIX_") {
            cmd.env_remove(k);
        }
    }
    let o = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("no rendezvous file in "), "{err}");
    l.set_nonblocking(true).unwrap();
    assert!(
        matches!(l.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "query connected"
    );
    let _ = std::fs::remove_dir_all(&empty);
}
