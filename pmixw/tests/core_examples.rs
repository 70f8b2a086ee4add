//! The crate's examples (examples/), built by `cargo test`, run for real:
//! the minimal client under `pmixw run` and under the embedding hosts
//! (blocking and tokio), the
//! namespace-listing tool against a running `pmixw run`, and the codec-only
//! example against `pmixw encode`.

use std::path::PathBuf;
use std::process::Command;

fn example(name: &str) -> PathBuf {
    // target/<profile>/pmixw → target/<profile>/examples/<name>
    let p = PathBuf::from(env!("CARGO_BIN_EXE_pmixw"))
        .parent()
        .unwrap()
        .join("examples")
        .join(name);
    if !p.exists() {
        // `cargo test` builds the examples; a filtered run may not have
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let st = Command::new(cargo)
            .args(["build", "-p", "pmix-wire", "--example", name])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .unwrap();
        assert!(st.success() && p.exists(), "{} not built", p.display());
    }
    p
}

fn check_ranks(out: &str, n: u32) {
    let all = (0..n).map(|r| r.to_string()).collect::<Vec<_>>().join(" ");
    for r in 0..n {
        let want = format!("rank {r} of {n}: {all}");
        assert!(out.lines().any(|l| l == want), "no {want:?} in\n{out}");
    }
}

#[test]
fn minimal_client_runs_under_pmixw_run_and_the_embedding_host() {
    let client = example("minimal_client");
    let o = Command::new(env!("CARGO_BIN_EXE_pmixw"))
        .args(["run", "-n", "3", "--timeout", "60"])
        .arg(&client)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    check_ranks(&String::from_utf8_lossy(&o.stdout), 3);
    run_under_host("embed_server");
}

/// The minimal client as two ranks of an embedding host example: every
/// rank prints all values, the host saw both connect and finalize.
fn run_under_host(host: &str) {
    let o = Command::new(example(host))
        .arg("2")
        .arg(example("minimal_client"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{host}: {err}");
    check_ranks(&String::from_utf8_lossy(&o.stdout), 2);
    assert_eq!(err.matches("connected (").count(), 2, "{host}: {err}");
    assert_eq!(err.matches("finalized").count(), 2, "{host}: {err}");
}

/// The tokio host: the same client, two ranks, every rank connects and
/// finalizes through the async server's upcalls.
#[test]
fn minimal_client_runs_under_the_async_embedding_host() {
    run_under_host("embed_server_async");
}

#[test]
fn list_namespaces_asks_a_running_server() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("ex-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // the rank runs until the test says so (a fixed sleep could end before
    // a loaded machine has run the example)
    let hold = dir.join("hold");
    std::fs::write(&hold, b"").unwrap();
    let script = format!("while [ -e '{}' ]; do sleep 0.05; done", hold.display());
    let mut job = pmix_test_kit::process::Kill(
        Command::new(env!("CARGO_BIN_EXE_pmixw"))
            .args([
                "run", "-n", "1", "--nspace", "held", "/bin/sh", "-c", &script,
            ])
            .env("TMPDIR", &dir)
            .spawn()
            .unwrap(),
    );
    let pid = job.0.id();
    let host = pmix_wire::tool::hostname();
    pmix_test_kit::process::wait_for_file(&dir.join(format!("pmix.{host}.tool.{pid}")), &mut job.0);
    let o = Command::new(example("list_namespaces"))
        .arg(pid.to_string())
        .env("TMPDIR", &dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "held");
    std::fs::remove_file(&hold).unwrap();
    let st = pmix_test_kit::process::wait_exit(&mut job.0, "the held job");
    assert!(st.success(), "{st}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The codec-only example prints, for each pack unit, the bytes of its
/// values for the dialect asked; `pmixw encode` given the same values as
/// JSON must print the same bytes, and an unknown dialect is an error.
#[test]
fn codec_only_packs_what_pmixw_encode_packs() {
    use std::io::Write;
    use std::process::Stdio;
    let json = |ty: &str| match ty {
        "INFO" => r#"[{"key":"pmix.job.size","flags":0,"value":{"type":"UINT32","value":4}}]"#,
        "SCOPE" => "[3]",
        "PROC_RANK" => "[4294967294]",
        other => panic!("unexpected unit {other}"),
    };
    let ex = example("codec_only");
    for args in [
        &["v41"][..],
        &["v3", "--described"],
        &["v12"],
        &["v20", "--described"],
        &["v51"],
    ] {
        let o = Command::new(&ex).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{args:?}: {err}");
        assert!(err.contains("3 units round trip"), "{args:?}: {err}");
        let out = String::from_utf8(o.stdout).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3, "{out}");
        for line in lines {
            let (ty, hex) = line.split_once(' ').unwrap();
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_pmixw"))
                .args(["encode", "--type", ty, "--dialect", args[0], "--hex"])
                .args(&args[1..])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            cmd.stdin
                .take()
                .unwrap()
                .write_all(json(ty).as_bytes())
                .unwrap();
            let enc = cmd.wait_with_output().unwrap();
            assert!(enc.status.success(), "{args:?} {ty}");
            assert_eq!(
                String::from_utf8_lossy(&enc.stdout).trim(),
                hex,
                "{args:?} {ty}"
            );
        }
    }
    let o = Command::new(&ex).arg("v99").output().unwrap();
    assert!(!o.status.success());
}
