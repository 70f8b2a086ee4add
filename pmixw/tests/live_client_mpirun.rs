//! Our client against the C reference: Open MPI 4.1.4's `mpirun` (which
//! hosts libpmix 4.2.2) launches `pmixw probe` as every rank; each rank
//! puts, commits, fences and reads every peer's values, publishes and
//! looks up, sends an event round trip, connects/disconnects and spawns.
//! Skips only if mpirun is absent (outside CI; in CI that fails).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pmix_test_kit::process;

/// Open MPI 4.1.4's mpirun (a failure under CI when absent).
fn mpirun() -> Option<std::path::PathBuf> {
    process::require("Open MPI 4.1.4 mpirun", pmix_test_kit::hosts::mpirun4())
}

/// Run the probe as `n` ranks; the output, or None when it hung (the
/// launcher is killed on every path).
fn run_probe(n: u32) -> Option<(bool, String)> {
    run_probe_args(n, &["--events"]).map(|(code, text)| (code == Some(0), text))
}

/// As run_probe with extra probe arguments; the exit code (None: a signal).
fn run_probe_args(n: u32, extra: &[&str]) -> Option<(Option<i32>, String)> {
    let mpirun = mpirun()?;
    // one file per call: tests of this binary run concurrently with the same n
    static CALLS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let out =
        std::env::temp_dir().join(format!("pmixw-probe-{}-{n}-{call}.out", std::process::id()));
    let file = std::fs::File::create(&out).unwrap();
    let mut child = Command::new(mpirun)
        .args([
            "--allow-run-as-root",
            "--oversubscribe",
            "-n",
            &n.to_string(),
        ])
        .arg(env!("CARGO_BIN_EXE_pmixw"))
        .arg("probe")
        .args(extra)
        .stdin(Stdio::null())
        .stdout(file.try_clone().unwrap())
        .stderr(file)
        .spawn()
        .expect("spawn mpirun");
    // a hang guard, not a timed assertion: the probe's own waits are 30 s at most
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if Instant::now() > deadline {
            // SIGTERM first: mpirun removes its session directory
            pmix_test_kit::hosts::stop(&mut child, process::STOP_GRACE);
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    let _ = std::fs::remove_file(&out);
    match status {
        Some(s) => Some((s.code(), text)),
        None => panic!("mpirun -n {n} did not finish; output so far:\n{text}"),
    }
}

fn check(n: u32) {
    let Some((ok, text)) = run_probe(n) else {
        return;
    };
    assert!(ok, "mpirun -n {n} failed:\n{text}");
    assert!(!text.contains("FAIL"), "{text}");
    for r in 0..n {
        let line = |s: &str| format!("[{r}] {s}");
        let has = |s: String| assert!(text.lines().any(|l| l == s), "missing {s:?} in\n{text}");
        for p in 0..n {
            has(line(&format!(
                "ok get rank {p} probe.rank: Uint32({})",
                1000 + p
            )));
            has(line(&format!(
                "ok get rank {p} probe.str: String(Some(\"hello-from-{p}\"))"
            )));
        }
        has(line(&format!("ok get pmix.job.size: {n}")));
        has(line(&format!("ok get pmix.nrank (own): {r}")));
        has(line(
            "ok lookup: String(Some(\"published-by-0\")) from rank 0",
        ));
        has(line(
            "ok get of a key nobody put (optional): PMIX_ERR_NOT_FOUND",
        ));
        if r != 0 {
            has(line("ok event delivered: status 3131 from rank 0"));
        }
        if n == 1 {
            has(line(
                "ok event delivered (locally, to our own handler): status 3131 from rank 0",
            ));
        }
        // one node: every rank is a local peer, and the node is this host
        let all: Vec<String> = (0..n).map(|p| p.to_string()).collect();
        has(line(&format!("ok resolve peers: {}", all.join(","))));
        has(line(&format!(
            "ok resolve nodes: {}",
            // Open MPI drops a domain part unless told to keep it
            pmix_wire::tool::hostname()
                .split('.')
                .next()
                .unwrap_or_default()
        )));
        has(line("ok connect: namespace"));
        has(line("ok disconnect: namespace"));
        if r == 0 {
            // the launcher names the spawned job: a namespace of digits, not ours
            let spawned = text
                .lines()
                .find_map(|l| l.strip_prefix("[0] ok spawn: new namespace "))
                .unwrap_or_else(|| panic!("no spawn line:\n{text}"));
            assert!(
                !spawned.is_empty() && spawned.bytes().all(|b| b.is_ascii_digit()),
                "{spawned:?}"
            );
        }
        let last = text
            .lines()
            .find(|l| l.starts_with(&line("probe: ")))
            .unwrap_or_else(|| panic!("no summary for rank {r}:\n{text}"));
        assert!(last.ends_with(" checks, 0 failures"), "{last}");
    }
}

#[test]
fn probe_under_mpirun_one_rank() {
    check(1);
}

#[test]
fn probe_under_mpirun_two_ranks() {
    check(2);
}

#[test]
fn probe_under_mpirun_four_ranks() {
    check(4);
}

#[test]
fn abort_ends_the_job_with_its_status() {
    let Some((code, text)) = run_probe_args(2, &["--abort", "7"]) else {
        return;
    };
    // mpirun exits with the status rank 0 gave PMIx_Abort
    // mpirun exits with 7, except that now and then (about one run in
    // ten here) its own teardown dies of a signal inside libpmix's
    // PMIx_server_finalize after the abort was answered; that Open MPI
    // 4.1.4 / libpmix 4.2.2 defect (a signal, after our abort got its
    // success) is told apart from a wrong status
    let teardown_crash = code.is_none()
        && (text.contains("PMIx_server_finalize") || text.contains("[0] abort returned: success"));
    assert!(code == Some(7) || teardown_crash, "{code:?}\n{text}");
    // mpirun may tear the job down before it has forwarded rank 0's
    // output (seen about one run in ten), so the lines are checked only
    // when they arrived; the answer, if printed, must be success
    if !text.is_empty() {
        assert!(text.lines().any(|l| l == "[0] abort: status 7"), "{text}");
    }
    if let Some(l) = text.lines().find(|l| l.starts_with("[0] abort returned: ")) {
        assert_eq!(l, "[0] abort returned: success");
    }
}
