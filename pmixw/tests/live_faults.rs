//! The fault matrix of `pmixw run` (issue 38, spec-notes/robustness.md
//! "Launcher faults"): one table of stages × kinds of death × wires ×
//! stores (PMIx also under the ds21 store), each case a job of 3 ranks of
//! `interop/c/fault.c` in which rank 1 (or the child it spawned) dies at
//! that stage in that way, and one of two ranks dying at once. Each case
//! checks the launcher's exit status,
//! its line naming the rank and why, what the peers saw (an error, not a
//! hang, when they were blocked on the victim), that nothing is left in
//! the job's session (the ranks' descendants included) and that its
//! private TMPDIR is empty; it prints the time until every rank was
//! gone. Cases run 4 at a time; each is bounded by a hang guard only.
//! Also: a rank's descendants end with the job, stdin reaches rank 0
//! only, from a pipe and from a terminal, the launcher's signals go on
//! to the ranks (SIGUSR1, SIGUSR2, SIGCONT; SIGTSTP as SIGSTOP), and a
//! SIGKILLed launcher or DVM leaves nothing: its guard ends the ranks and
//! their descendants and removes its files.

use pmix_test_kit::{ds_client, interop, process};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Where a rank dies: (name, served on the PMIx wire, on the PMI wires).
const STAGES: &[(&str, bool, bool)] = &[
    ("before", true, true),
    ("handshake", true, true),
    ("init", true, true),
    ("fence", true, true),
    ("fence0", true, true),
    // a PMI get answers at once: nothing waits in it
    ("get", true, false),
    ("finalized", true, true),
    // a spawn (PMIx_Spawn, PMI-1's and PMI-2's spawn commands) and
    // PMIx_Connect: the victim dies inside its spawn, or after it while
    // its child waits in a connect with it; its child dies inside its
    // init (PMI: half the init line, the victim, its spawn answered, in
    // the job's fence after it), or after it while the victim waits in a
    // connect. PMI has no connect
    ("spawn", true, true),
    ("connect", true, false),
    ("spawnchild", true, true),
    ("connectchild", true, false),
];

/// How it dies: (name, the launcher's status for it, its line).
const KINDS: &[(&str, i32, &str)] = &[
    ("kill", 137, "was killed by signal 9"),
    ("segv", 139, "was killed by signal 11"),
    ("exit", 3, "exited with status 3"),
    ("abort", 7, "aborted with status 7"),
];

const WIRES: &[&str] = &["pmix", "pmi1", "pmi2"];

/// The stores a case's PMIx ranks read job and peer data from: the
/// server's answers, and the ds21 shared-memory store (`--dstore`,
/// libpmix 4.2.2 clients; PMI ranks have no store).
const STORES: &[bool] = &[false, true];

/// What the peers of a case must report.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Peers {
    /// Every peer prints "failed": it was waiting on the victim.
    Error,
    /// Every peer completes.
    Done,
    /// Each peer fails or completes: the victim died inside a fence it had
    /// entered, and a server may complete the fence with its contribution
    /// when the late peer's arrival is read before the victim's end.
    Either,
    /// The job's end is the host's (an abort): each peer completes, fails
    /// or is ended by the launcher, within its grace.
    Ended,
}

#[derive(Debug, Clone)]
struct Case {
    wire: &'static str,
    /// Under the ds21 store (`--dstore`).
    dstore: bool,
    stage: &'static str,
    kind: &'static str,
    status: i32,
    line: String,
    peers: Peers,
    /// A line (its start) the rank waiting on the victim prints: its
    /// error (a spawn's or connect's), not a hang.
    waiter: Option<&'static str>,
}

/// Every case of the table.
fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for (&wire, &dstore) in WIRES
        .iter()
        .flat_map(|w| STORES.iter().map(move |d| (w, d)))
    {
        if dstore && wire != "pmix" {
            continue;
        }
        for &(stage, pmix, pmi) in STAGES {
            if !(if wire == "pmix" { pmix } else { pmi }) {
                continue;
            }
            for &(kind, status, line) in KINDS {
                // no abort without a connection (before, handshake, the
                // child's spawnchild) or after it ended (finalized)
                if kind == "abort"
                    && matches!(stage, "before" | "handshake" | "finalized" | "spawnchild")
                {
                    continue;
                }
                // at spawnchild and connectchild the one that dies is the
                // child, rank 0 of the spawned job
                let child = matches!(stage, "spawnchild" | "connectchild");
                let who = if child { 0 } else { 1 };
                // PMI-2's abort carries no status: 1, as MPICH's mpiexec
                let (status, line) = match (wire, kind) {
                    ("pmi2", "abort") => (1, "aborted with status 1".to_string()),
                    _ => (status, line.to_string()),
                };
                let (line, peers) = match (stage, kind) {
                    ("finalized", _) => (
                        format!("rank 1 of fault-X {line} after finalizing"),
                        Peers::Done,
                    ),
                    (_, "abort") => (format!("rank {who} {line}"), Peers::Ended),
                    ("fence" | "fence0", _) => (
                        format!("rank 1 of fault-X {line} before finalizing"),
                        Peers::Either,
                    ),
                    // PMI: the victim enters the fence the peers wait in
                    // once its child has died, maybe before the launcher
                    // ends the job (then the fence completes)
                    ("spawnchild", _) if wire != "pmix" => (
                        format!("rank 0 of fault-X {line} before finalizing"),
                        Peers::Either,
                    ),
                    _ => (
                        format!("rank {who} of fault-X {line} before finalizing"),
                        Peers::Error,
                    ),
                };
                // who waits on the victim in a spawn or connect gets an
                // error (after an abort the host ends the job instead)
                let waiter = match (stage, kind) {
                    (_, "abort") => None,
                    ("connect", _) => Some("fault child 0: connect failed: "),
                    ("spawnchild", _) if wire != "pmix" => None,
                    ("spawnchild" | "connectchild", _) => Some("fault peer 1: "),
                    _ => None,
                };
                out.push(Case {
                    wire,
                    dstore,
                    stage,
                    kind,
                    status,
                    line,
                    peers,
                    waiter,
                });
            }
        }
    }
    out
}

/// A job run in a session of its own, with its outcome.
struct Run {
    out: Output,
    secs: f64,
    /// Processes of the job's session still there after it ended.
    left: Vec<String>,
    /// Files left in its private TMPDIR.
    files: Vec<String>,
}

/// The processes of session `sid`: "pid state command".
fn in_session(sid: u32) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp session ...
        let Some(close) = stat.rfind(')') else {
            continue;
        };
        let f: Vec<&str> = stat[close + 2..].split(' ').collect();
        if f.get(3).and_then(|s| s.parse::<u32>().ok()) == Some(sid) {
            out.push(format!(
                "{} {} {}",
                e.file_name().to_string_lossy(),
                f[0],
                &stat[..close + 1]
            ));
        }
    }
    out
}

/// Start `cmd` as the leader of a new session (its pid the session's id)
/// with `tmp` as TMPDIR, stdin from `stdin`, stdout and stderr piped.
fn session_leader(cmd: &mut Command, tmp: &Path, stdin: Stdio) -> std::process::Child {
    cmd.env("TMPDIR", tmp)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setsid between fork and exec is async-signal-safe
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    cmd.spawn().unwrap()
}

/// Run `cmd` as the leader of a new session (its pid the session's id),
/// with `tmp` as TMPDIR, stdin from `stdin`; wait (hang guard only), then
/// list what is left in the session and in `tmp`.
fn run_in_session(mut cmd: Command, tmp: &Path, stdin: Stdio) -> Run {
    let start = Instant::now();
    let child = session_leader(&mut cmd, tmp, stdin);
    let sid = child.id();
    let out = process::output_within(child, Duration::from_secs(120), "pmixw run (fault case)");
    let secs = start.elapsed().as_secs_f64();
    // what a killed rank's group leaves goes within the launcher's run;
    // a moment for the kernel to finish reaping what just exited
    let mut left = in_session(sid);
    for _ in 0..50 {
        if left.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
        left = in_session(sid);
    }
    let files = std::fs::read_dir(tmp)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    Run {
        out,
        secs,
        left,
        files,
    }
}

/// A fresh private directory under the build tree.
fn fresh_dir(name: &str) -> PathBuf {
    let d = interop::default_out_dir()
        .parent()
        .unwrap()
        .join("faults")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn fault_program() -> Option<PathBuf> {
    process::require(
        "libpmix 4.2.2 (the fault matrix's program)",
        pmix_test_kit::hosts::libpmix4_dev()
            .and_then(|_| interop::build_c("fault", &interop::default_out_dir())),
    )
}

/// A case's `--grace`: generous, since peers get their errors at once and
/// the grace only bounds a hang; after an abort it is what the job's end
/// takes (the peers are ended by SIGTERM once it has passed, the host's
/// part), so there 1 s: the matrix's abort cases were three quarters of
/// its time with 5 s.
fn grace(abort: bool) -> &'static str {
    if abort {
        "1"
    } else {
        "5"
    }
}

/// One case: its problems (empty when it passed) and a line for the log.
fn check(exe: &Path, c: &Case, root: &Path, i: usize) -> (Vec<String>, String) {
    let tmp = root.join(format!("tmp{i}"));
    let sync = root.join(format!("sync{i}"));
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::create_dir_all(&sync).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pmixw"));
    cmd.args(["run", "--grace", grace(c.kind == "abort")])
        .args(["--mpi", c.wire, "-n", "3"])
        .env("FAULT_SYNC", &sync)
        .env_remove("PMIXW_DSTORE");
    if c.dstore {
        // libpmix says which store each client took
        cmd.arg("--dstore").env("PMIX_MCA_gds_base_verbose", "2");
    }
    cmd.arg(exe).args([c.wire, c.stage, c.kind, "1"]);
    let r = run_in_session(cmd, &tmp, Stdio::null());
    let stdout = String::from_utf8_lossy(&r.out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&r.out.stderr).into_owned();
    let mut bad = Vec::new();
    let status = r.out.status.code().unwrap_or(-1);
    if status != c.status {
        bad.push(format!("status {status}, not {}", c.status));
    }
    // the namespace is the program's name, a pid and a number
    let said = stderr
        .lines()
        .map(|l| {
            let mut w: Vec<&str> = l.split(' ').collect();
            for x in w.iter_mut() {
                if x.starts_with("fault-") {
                    *x = "fault-X";
                }
            }
            w.join(" ")
        })
        .any(|l| l.contains(&c.line));
    if !said {
        bad.push(format!("no line {:?}", c.line));
    }
    for p in [0, 2] {
        let me = format!("fault peer {p}: ");
        let failed = stdout
            .lines()
            .any(|l| l.starts_with(&me) && l.contains(" failed: "));
        let done = stdout.lines().any(|l| l == format!("{me}done"));
        let ok = match c.peers {
            Peers::Error => failed,
            Peers::Done => done,
            Peers::Either => done || failed,
            Peers::Ended => true,
        };
        if !ok {
            bad.push(format!("peer {p}: not {:?}", c.peers));
        }
    }
    // under the store, both peers (which initialise in every case) took
    // it, and no client's init the hash store (a spawned child takes ds21
    // too);
    // its segment files are what the TMPDIR check below finds first
    if c.dstore {
        // (libpmix's client stores a spawn's answer with hash whatever
        // the store: pmix_client_spawn.c, not the job's own data)
        let init: String = stderr
            .lines()
            .filter(|l| !l.contains("pmix_client_spawn.c"))
            .collect::<Vec<_>>()
            .join("\n");
        let ds21 = ds_client::job_info_stored_with(&init, "ds21");
        let hash = ds_client::job_info_stored_with(&init, "hash");
        if ds21 < 2 || hash > 0 {
            bad.push(format!(
                "{ds21} clients took the ds21 store (not 2 or more), {hash} hash"
            ));
        }
    }
    let mut said_by_waiter = String::new();
    let waited = c.waiter.map(|w| {
        stdout
            .lines()
            .find(|l| l.starts_with(w) && l.contains(" failed: "))
            .map(str::to_string)
    });
    match &waited {
        Some(None) => bad.push(format!("no error for the waiting rank ({:?})", c.waiter)),
        Some(Some(l)) => said_by_waiter = format!(" ({l})"),
        None => {}
    }
    let head = format!(
        "{:<5} {:<4} {:<12} {:<6} status {:>3} in {:.2} s{said_by_waiter}",
        c.wire,
        if c.dstore { "ds21" } else { "" },
        c.stage,
        c.kind,
        status,
        r.secs,
    );
    case_done(bad, head, &r, &[&tmp, &sync])
}

/// A case's end: what is left in its session and TMPDIR added to its
/// problems `bad`, its log line (`head`, then why it failed), its output
/// kept when it failed, its directories `dirs` removed.
fn case_done(mut bad: Vec<String>, head: String, r: &Run, dirs: &[&Path]) -> (Vec<String>, String) {
    if !r.left.is_empty() {
        bad.push(format!("left in the session: {:?}", r.left));
    }
    if !r.files.is_empty() {
        bad.push(format!("left in TMPDIR: {:?}", r.files));
    }
    let log = if bad.is_empty() {
        head
    } else {
        format!("{head}  FAIL: {}", bad.join("; "))
    };
    if !bad.is_empty() {
        bad.push(format!(
            "stdout:\n{}stderr:\n{}",
            String::from_utf8_lossy(&r.out.stdout),
            String::from_utf8_lossy(&r.out.stderr)
        ));
    }
    for d in dirs {
        let _ = std::fs::remove_dir_all(d);
    }
    (bad, log)
}

/// Run `check` on every case, 4 at a time (the index gives each its own
/// directories under `root`), printing each case's line; fail with every
/// case that failed.
fn run_cases<C: std::fmt::Debug + Sync>(
    all: &[C],
    root: &Path,
    check: impl Fn(&C, &Path, usize) -> (Vec<String>, String) + Sync,
) {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Vec::new());
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(c) = all.get(i) else { break };
                let (bad, log) = check(c, root, i);
                println!("{log}");
                results.lock().unwrap().push((i, bad));
            });
        }
    });
    println!(
        "{} cases in {:.1} s",
        all.len(),
        start.elapsed().as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(root);
    let mut failed: Vec<(usize, Vec<String>)> = results
        .into_inner()
        .unwrap()
        .into_iter()
        .filter(|(_, b)| !b.is_empty())
        .collect();
    failed.sort_by_key(|(i, _)| *i);
    assert!(
        failed.is_empty(),
        "{} of {} cases failed:\n{}",
        failed.len(),
        all.len(),
        failed
            .iter()
            .map(|(i, b)| format!("{:?}: {}", all[*i], b.join("\n")))
            .collect::<Vec<_>>()
            .join("\n\n")
    );
}

#[test]
fn every_death_at_every_stage_on_every_wire_ends_the_job_cleanly() {
    let Some(exe) = fault_program() else { return };
    let all = cases();
    // PMIx without and with the ds21 store, PMI-1, PMI-2
    // (PMIx: 25 + 15 at the spawn and connect stages; PMI: 21 + 7 at
    // the spawn stages)
    assert_eq!(all.len(), 40 + 40 + 28 + 28, "the table's cases");
    run_cases(&all, &fresh_dir("matrix"), |c, root, i| {
        check(&exe, c, root, i)
    });
}

/// Where several ranks die at once: (stage, on the PMI wires too).
const SEVERAL_STAGES: &[(&str, bool)] = &[("init", true), ("fence", true), ("get", false)];

/// How the two victims (ranks 1 and 2 of 4) die, each its own way.
const SEVERAL_KINDS: &[(&str, &str)] = &[
    ("kill", "kill"),
    ("kill", "segv"),
    ("exit", "segv"),
    ("abort", "kill"),
    ("abort", "abort"),
];

/// A case of several ranks dying at the same stage.
#[derive(Debug, Clone)]
struct Several {
    wire: &'static str,
    stage: &'static str,
    kinds: (&'static str, &'static str),
}

fn several_cases() -> Vec<Several> {
    let mut out = Vec::new();
    for &wire in WIRES {
        for &(stage, pmi) in SEVERAL_STAGES {
            if wire != "pmix" && !pmi {
                continue;
            }
            for &kinds in SEVERAL_KINDS {
                out.push(Several { wire, stage, kinds });
            }
        }
    }
    out
}

/// The launcher's word on a rank's end, from one of its lines: (rank,
/// the status it stands for). `rank R of NS was killed by signal S
/// before finalizing` (128 + S), `… exited with status S before
/// finalizing`, `rank R aborted with status S: …`.
fn end_said(line: &str) -> Option<(u32, i32)> {
    let rest = line.strip_prefix("pmixw run: rank ")?;
    let (rank, rest) = rest.split_once(' ')?;
    let rank = rank.parse().ok()?;
    let num = |after: &str| -> Option<i32> {
        let t = rest.split_once(after)?.1;
        t.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
    };
    if rest.starts_with("aborted with status ") {
        return Some((rank, num("status ")?));
    }
    if !rest.ends_with(" before finalizing") {
        return None;
    }
    if rest.contains(" was killed by signal ") {
        return Some((rank, 128 + num("signal ")?));
    }
    Some((rank, num("exited with status ")?))
}

/// One case of [`several_cases`]: ranks 1 and 2 of 4 die at the stage.
/// The job's status is the first rank to end's, as the launcher saw it:
/// its first line naming a rank's end (a failure before finalizing or an
/// abort) names a victim, with the job's status; both victims are named;
/// the peers (0 and 3) got an error when they waited on the victims (no
/// abort: the job's end is then the host's); nothing is left.
fn check_several(exe: &Path, c: &Several, root: &Path, i: usize) -> (Vec<String>, String) {
    let tmp = root.join(format!("tmp{i}"));
    let sync = root.join(format!("sync{i}"));
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::create_dir_all(&sync).unwrap();
    let kinds = format!("{},{}", c.kinds.0, c.kinds.1);
    let abort = c.kinds.0 == "abort" || c.kinds.1 == "abort";
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pmixw"));
    cmd.args(["run", "--grace", grace(abort), "--mpi", c.wire, "-n", "4"])
        .env("FAULT_SYNC", &sync)
        .env_remove("PMIXW_DSTORE")
        .arg(exe)
        .args([c.wire, c.stage, &kinds, "1,2"]);
    let r = run_in_session(cmd, &tmp, Stdio::null());
    let stdout = String::from_utf8_lossy(&r.out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&r.out.stderr).into_owned();
    let mut bad = Vec::new();
    let status = r.out.status.code().unwrap_or(-1);
    let ends: Vec<(u32, i32)> = stderr.lines().filter_map(end_said).collect();
    match ends.first() {
        Some(&(rank, st)) if (rank == 1 || rank == 2) && st == status => {}
        first => bad.push(format!(
            "status {status}, the first end said {first:?}: not a victim's with that status"
        )),
    }
    for v in [1, 2] {
        if !ends.iter().any(|&(r, _)| r == v) {
            bad.push(format!("victim {v}'s end not said"));
        }
    }
    for p in [0, 3] {
        let me = format!("fault peer {p}: ");
        let failed = stdout
            .lines()
            .any(|l| l.starts_with(&me) && l.contains(" failed: "));
        let done = stdout.lines().any(|l| l == format!("{me}done"));
        let ok = abort || failed || (c.stage == "fence" && done);
        if !ok {
            bad.push(format!("peer {p}: neither an error nor (fence) done"));
        }
    }
    let head = format!(
        "{:<5} {:<6} {:<11} status {:>3} (first said: {:?}) in {:.2} s",
        c.wire,
        c.stage,
        kinds,
        status,
        ends.first(),
        r.secs,
    );
    case_done(bad, head, &r, &[&tmp, &sync])
}

/// Two ranks die at the same stage, by the same signal or different
/// ones, or abort: the first to end sets the status, nothing is left.
#[test]
fn several_ranks_dying_at_once_end_the_job_with_the_first_ones_status() {
    let Some(exe) = fault_program() else { return };
    let all = several_cases();
    assert_eq!(all.len(), 15 + 10 + 10, "the table's cases");
    run_cases(&all, &fresh_dir("several"), |c, root, i| {
        check_several(&exe, c, root, i)
    });
}

#[test]
fn the_launchers_lines_say_which_rank_ended_how() {
    assert_eq!(
        end_said("pmixw run: rank 2 of j-1 was killed by signal 9 before finalizing"),
        Some((2, 137))
    );
    assert_eq!(
        end_said("pmixw run: rank 1 of j-1 exited with status 3 before finalizing"),
        Some((1, 3))
    );
    assert_eq!(
        end_said("pmixw run: rank 1 aborted with status 8: fault abort"),
        Some((1, 8))
    );
    assert_eq!(
        end_said("pmixw run: rank 1 of j-1 exited with status 3 after finalizing"),
        None
    );
}

/// `pmixw run` of `sh -c SCRIPT` on `n` ranks, in a session of its own.
fn sh_job(n: u32, script: &str, stdin: Stdio, name: &str) -> Run {
    let tmp = fresh_dir(name);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pmixw"));
    cmd.args(["run", "-n", &n.to_string(), "sh", "-c", script]);
    let r = run_in_session(cmd, &tmp, stdin);
    let _ = std::fs::remove_dir_all(&tmp);
    r
}

/// The issue's case: rank 1 fails while the others' shells wait in a
/// child `sleep 20`; each rank's process group ends with the job, so no
/// `sleep` outlives it (before, both were left, re-parented to init).
#[test]
fn a_ranks_descendants_end_with_the_job() {
    let r = sh_job(
        3,
        r#"if [ "$PMIX_RANK" = 1 ]; then sleep 1; exit 3; fi; sleep 20"#,
        Stdio::null(),
        "descendants",
    );
    let err = String::from_utf8_lossy(&r.out.stderr);
    println!("ended in {:.2} s", r.secs);
    assert_eq!(r.out.status.code(), Some(3), "{err}");
    assert!(r.left.is_empty(), "left: {:?}\n{err}", r.left);
    assert!(r.files.is_empty(), "{:?}", r.files);
    // a rank that ends well, leaving a child behind: the child is ended
    // with the job (its group), the job's status stays 0
    let r = sh_job(2, "sleep 30 & exit 0", Stdio::null(), "orphan");
    assert_eq!(r.out.status.code(), Some(0));
    assert!(r.left.is_empty(), "left: {:?}", r.left);
}

/// A rank's descendant that left its process group and session
/// (`setsid`): ending the ranks' groups misses it, so the launcher's
/// guard ends it, found by the run's mark, before the launcher exits
/// (mpirun 4.1.4 and prterun 5.0.11 leave it running).
#[test]
fn a_ranks_setsid_descendant_ends_with_the_job() {
    let tmp = fresh_dir("setsid");
    let sync = fresh_dir("setsid-sync");
    let mark = format!("setsid-{}", std::process::id());
    // the rank exits once its child has left the group (its file, written
    // after setsid)
    let script = r#"setsid sh -c 'touch "$FAULT_SYNC/s.$PMIX_RANK"; exec sleep 311' &
        while [ ! -e "$FAULT_SYNC/s.$PMIX_RANK" ]; do sleep 0.01; done; exit 0"#;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pmixw"));
    cmd.args(["run", "-n", "2", "sh", "-c", script])
        .env("FAULT_SYNC", &sync)
        .env("FAULT_MARK", &mark);
    let r = run_in_session(cmd, &tmp, Stdio::null());
    let err = String::from_utf8_lossy(&r.out.stderr);
    assert_eq!(r.out.status.code(), Some(0), "{err}");
    // the launcher has exited: what it leaves is left now
    let left = marked("FAULT_MARK", &mark);
    println!("ended in {:.2} s", r.secs);
    assert!(left.is_empty(), "left: {left:?}");
    assert!(r.left.is_empty(), "left in the session: {:?}", r.left);
    assert!(r.files.is_empty(), "{:?}", r.files);
    let _ = std::fs::remove_dir_all(&tmp);
    let _ = std::fs::remove_dir_all(&sync);
}

/// A rank's descendant that clears its environment as well as leaving its
/// group and session (`env -i setsid`): no mark and no group find it,
/// but it was re-parented to the launcher, a child subreaper, and the
/// launcher ends what is left below it before it exits (guard.rs
/// `end_left`; mpirun 4.1.4 and prterun 5.0.11 leave it running).
#[test]
fn a_ranks_descendant_without_its_environment_ends_with_the_job() {
    let tmp = fresh_dir("envless");
    let sync = fresh_dir("envless-sync");
    // the descendant writes its pid (after setsid, with no environment)
    // where its rank waits for it, then sleeps
    let script = r#"env -i setsid sh -c 'echo $$ > "$1/p.$2"; exec sleep 313' x "$FAULT_SYNC" "$PMIX_RANK" &
        while [ ! -s "$FAULT_SYNC/p.$PMIX_RANK" ]; do sleep 0.01; done; exit 0"#;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pmixw"));
    cmd.args(["run", "-n", "2", "sh", "-c", script])
        .env("FAULT_SYNC", &sync);
    let r = run_in_session(cmd, &tmp, Stdio::null());
    let err = String::from_utf8_lossy(&r.out.stderr);
    assert_eq!(r.out.status.code(), Some(0), "{err}");
    let pids: Vec<i32> = (0..2)
        .filter_map(|k| std::fs::read_to_string(sync.join(format!("p.{k}"))).ok())
        .filter_map(|p| p.trim().parse().ok())
        .collect();
    assert_eq!(pids.len(), 2, "the descendants' pids: {pids:?}\n{err}");
    // the launcher has exited: a pid still running `sleep 313` is left
    let left: Vec<i32> = pids
        .iter()
        .copied()
        .filter(|p| {
            let cmdline = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
            let state = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
            cmdline == b"sleep\x00313\x00" && !state.contains(") Z ")
        })
        .collect();
    for &p in &left {
        // SAFETY: kill(2) of what this test left behind
        unsafe {
            libc::kill(p, libc::SIGKILL);
        }
    }
    println!("ended in {:.2} s", r.secs);
    assert!(left.is_empty(), "left: {left:?}");
    assert!(r.files.is_empty(), "{:?}", r.files);
    let _ = std::fs::remove_dir_all(&tmp);
    let _ = std::fs::remove_dir_all(&sync);
}

const READ: &str = r#"read x; echo "rank $PMIX_RANK got <$x>""#;

/// As mpirun and prterun: the launcher's stdin goes to rank 0, every
/// other rank reads /dev/null.
#[test]
fn stdin_from_a_pipe_reaches_rank_0_only() {
    let tmp = fresh_dir("stdin-pipe");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pmixw"));
    cmd.args(["run", "--keep-going", "-n", "2", "sh", "-c", READ])
        .env("TMPDIR", &tmp)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(b"hi\n").unwrap();
    let out = process::output_within(child, Duration::from_secs(120), "pmixw run reading stdin");
    let _ = std::fs::remove_dir_all(&tmp);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("rank 0 got <hi>"), "{text}");
    assert!(text.contains("rank 1 got <>"), "{text}");
}

/// A terminal: the ranks are not in its foreground group (each has its
/// own), so reading it would stop them (SIGTTIN); the launcher, in the
/// foreground, feeds rank 0 what is typed through a pipe.
#[test]
fn stdin_from_a_terminal_reaches_rank_0_through_the_launcher() {
    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty fills two fds; no name, termios or size asked
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty");
    // SAFETY: both fds are ours from here on
    let (master, slave) = unsafe {
        use std::os::fd::FromRawFd;
        (
            std::fs::File::from_raw_fd(master),
            std::os::fd::OwnedFd::from_raw_fd(slave),
        )
    };
    let tmp = fresh_dir("stdin-tty");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pmixw"));
    cmd.args(["run", "--keep-going", "-n", "2", "sh", "-c", READ])
        .env("TMPDIR", &tmp)
        .stdin(Stdio::from(slave))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setsid and ioctl between fork and exec: async-signal-safe;
    // the terminal becomes the launcher's controlling terminal, the
    // launcher its foreground group
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            libc::ioctl(0, libc::TIOCSCTTY, 0);
            Ok(())
        });
    }
    let child = cmd.spawn().unwrap();
    use std::io::Write;
    (&master).write_all(b"typed\n").unwrap();
    let out = process::output_within(child, Duration::from_secs(120), "pmixw run on a terminal");
    let _ = std::fs::remove_dir_all(&tmp);
    drop(master);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("rank 0 got <typed>"), "{text}");
    assert!(text.contains("rank 1 got <>"), "{text}");
}

/// Start `pmixw run ARGS` as a session leader with `tmp` as TMPDIR, its
/// stderr read line by line.
fn start_in_session(
    args: &[&str],
    tmp: &Path,
    env: &[(&str, &Path)],
) -> (std::process::Child, std::sync::mpsc::Receiver<String>) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pmixw"));
    cmd.args(args).envs(env.iter().copied());
    let mut child = session_leader(&mut cmd, tmp, Stdio::null());
    let err = process::lines_of(child.stderr.take().unwrap());
    (child, err)
}

/// Wait (hang guard) until the session `sid` is empty; its leftovers.
fn session_empties(sid: u32) -> Vec<String> {
    let start = Instant::now();
    loop {
        let left: Vec<String> = in_session(sid)
            .into_iter()
            .filter(|l| l.split(' ').nth(1) != Some("Z"))
            .collect();
        if left.is_empty() || start.elapsed() > Duration::from_secs(120) {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Wait (hang guard) until `n` files `ready.R` are in `dir`.
fn ranks_ready(dir: &Path, n: u32) {
    process::wait_until("the ranks set their traps", || {
        (0..n).all(|r| dir.join(format!("ready.{r}")).exists())
    });
}

fn kill(pid: u32, sig: i32) {
    // SAFETY: kill(2) of one positive pid, our child
    unsafe {
        libc::kill(pid as i32, sig);
    }
}

/// SIGINT, SIGTERM and SIGHUP to the launcher: every rank gets SIGTERM
/// (as mpirun 4.1.4's ranks do; prterun 5.0.11 ends them too), the run
/// exits 128 + the signal, nothing is left in its session or TMPDIR.
#[test]
fn a_signalled_launcher_ends_every_rank_with_sigterm() {
    for (sig, name) in [
        (libc::SIGINT, "int"),
        (libc::SIGTERM, "term"),
        (libc::SIGHUP, "hup"),
    ] {
        let tmp = fresh_dir(&format!("sig-{name}"));
        let sync = fresh_dir(&format!("sig-{name}-sync"));
        let script = r#"for s in INT TERM HUP; do trap "echo rank $PMIX_RANK got $s; exit 9" $s; done
            touch "$SYNC/ready.$PMIX_RANK"; sleep 600 & wait"#;
        let (child, err) = start_in_session(
            &["run", "-n", "2", "sh", "-c", script],
            &tmp,
            &[("SYNC", &sync)],
        );
        let sid = child.id();
        ranks_ready(&sync, 2);
        kill(sid, sig);
        let out = process::output_within(child, Duration::from_secs(120), "signalled pmixw run");
        let left = session_empties(sid);
        let text = String::from_utf8_lossy(&out.stdout);
        let said: Vec<String> = err.try_iter().collect();
        assert_eq!(out.status.code(), Some(128 + sig), "{said:?}");
        for r in 0..2 {
            assert!(text.contains(&format!("rank {r} got TERM")), "{text}");
        }
        assert!(
            said.iter()
                .any(|l| l.contains(&format!("signal {sig}; ending the job"))),
            "{said:?}"
        );
        assert!(left.is_empty(), "{left:?}");
        assert_eq!(
            std::fs::read_dir(&tmp).unwrap().count(),
            0,
            "files left in TMPDIR"
        );
        let _ = std::fs::remove_dir_all(&tmp);
        let _ = std::fs::remove_dir_all(&sync);
    }
}

/// Ranks that ignore SIGTERM: a second SIGINT kills them at once instead
/// of after the grace (600 s here, beyond the hang guard); mpirun 4.1.4
/// and prterun 5.0.11 exit at once too, but leave those ranks running.
#[test]
fn a_second_sigint_kills_the_job_at_once() {
    let tmp = fresh_dir("sig-twice");
    let sync = fresh_dir("sig-twice-sync");
    let script =
        r#"trap "" TERM; touch "$SYNC/ready.$PMIX_RANK"; sleep 600 & while :; do wait; done"#;
    let (child, err) = start_in_session(
        &["run", "--grace", "600", "-n", "2", "sh", "-c", script],
        &tmp,
        &[("SYNC", &sync)],
    );
    let sid = child.id();
    ranks_ready(&sync, 2);
    kill(sid, libc::SIGINT);
    let first = err
        .recv_timeout(process::HANG)
        .expect("the launcher's line on the first SIGINT");
    assert!(first.contains("signal 2; ending the job"), "{first}");
    kill(sid, libc::SIGINT);
    let out = process::output_within(
        child,
        Duration::from_secs(120),
        "pmixw run after a second SIGINT",
    );
    let left = session_empties(sid);
    let said: Vec<String> = err.try_iter().collect();
    assert_eq!(out.status.code(), Some(130), "{said:?}");
    assert!(
        said.iter()
            .any(|l| l.contains("signalled again; killing the job")),
        "{said:?}"
    );
    assert!(left.is_empty(), "{left:?}");
    let _ = std::fs::remove_dir_all(&tmp);
    let _ = std::fs::remove_dir_all(&sync);
}

/// The processes other than zombies whose environment holds `VAR=value`
/// ("pid state (comm)"): what a job left wherever it went, a descendant
/// that left the job's session (`setsid`) too.
fn marked(var: &str, value: &str) -> Vec<String> {
    let entry = format!("{var}={value}");
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(env) = std::fs::read(e.path().join("environ")) else {
            continue;
        };
        if !env.split(|&b| b == 0).any(|v| v == entry.as_bytes()) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        let Some(close) = stat.rfind(')') else {
            continue;
        };
        let state = stat[close + 2..].split(' ').next().unwrap_or("");
        if state != "Z" {
            out.push(format!(
                "{} {state} {}",
                e.file_name().to_string_lossy(),
                &stat[..close + 1]
            ));
        }
    }
    out
}

/// Wait (hang guard) until `dir` is empty; what is left in it.
fn dir_empties(dir: &Path) -> Vec<String> {
    let start = Instant::now();
    loop {
        let files: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        if files.is_empty() || start.elapsed() > Duration::from_secs(120) {
            return files;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Wait (hang guard) until no process holds `VAR=value`; those left.
fn marked_gone(var: &str, value: &str) -> Vec<String> {
    let start = Instant::now();
    loop {
        let left = marked(var, value);
        if left.is_empty() || start.elapsed() > Duration::from_secs(120) {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// SIGKILL of the launcher while the ranks wait in a fence (one rank
/// held, asleep before it): on every wire the launcher's guard
/// (guard.rs) ends the ranks and removes the launcher's rendezvous files,
/// so nothing of the job is left, in its session or anywhere (a variable
/// of the test's the ranks inherit), and the TMPDIR is empty without a
/// next launcher to take the files over (mpirun 4.1.4 leaves
/// `ompi.vm.0`, prterun 5.0.11 `prtrn.<pid>`). A next launcher with the
/// same namespace then runs and leaves nothing either.
#[test]
fn ranks_of_a_killed_launcher_are_ended_by_its_guard() {
    let Some(exe) = fault_program() else { return };
    for wire in WIRES {
        let tmp = fresh_dir(&format!("killed-{wire}"));
        let sync = fresh_dir(&format!("killed-{wire}-sync"));
        let mark = format!("killed-{wire}-{}", std::process::id());
        let exe = exe.display().to_string();
        let (mut child, _err) = start_in_session(
            &[
                "run", "--nspace", "killed", "--mpi", wire, "-n", "2", &exe, wire, "hold", "none",
                "1",
            ],
            &tmp,
            &[("FAULT_SYNC", &sync), ("FAULT_MARK", Path::new(&mark))],
        );
        let sid = child.id();
        process::wait_until("the held rank started", || sync.join("victim.1").exists());
        // the peer is in (or on its way into) the fence; the held rank
        // sleeps 3 s before it
        std::thread::sleep(Duration::from_millis(300));
        // pmixw, its guard, the 2 ranks
        assert!(marked("FAULT_MARK", &mark).len() >= 4);
        let killed = Instant::now();
        kill(sid, libc::SIGKILL);
        let _ = child.wait();
        let left = session_empties(sid);
        let elsewhere = marked_gone("FAULT_MARK", &mark);
        let files = dir_empties(&tmp);
        println!(
            "{wire}: ranks gone and files removed {:.2} s after the launcher's SIGKILL",
            killed.elapsed().as_secs_f64()
        );
        assert!(left.is_empty(), "{wire}: {left:?}");
        assert!(elsewhere.is_empty(), "{wire}: {elsewhere:?}");
        assert!(files.is_empty(), "{wire}: {files:?}");
        let next = Command::new(env!("CARGO_BIN_EXE_pmixw"))
            .args(["run", "--nspace", "killed", "-n", "1", "true"])
            .env("TMPDIR", &tmp)
            .output()
            .unwrap();
        assert!(
            next.status.success(),
            "{}",
            String::from_utf8_lossy(&next.stderr)
        );
        assert!(dir_empties(&tmp).is_empty());
        let _ = std::fs::remove_dir_all(&tmp);
        let _ = std::fs::remove_dir_all(&sync);
    }
}

/// SIGKILL of the launcher whose ranks are no PMIx clients (`sh`, a child
/// `sleep` in the rank's group, another that left it with `setsid`, a
/// third the rank waits for), with the ds21 store asked for: nothing
/// notices the lost server, so the guard ends them all, the `setsid` one
/// by the run's mark in its environment, and removes the rendezvous files
/// and the store's directory. mpirun 4.1.4 and prterun 5.0.11 leave every
/// process running (and their session directories).
#[test]
fn a_killed_launchers_plain_ranks_and_their_descendants_are_ended() {
    let tmp = fresh_dir("killed-sh");
    let sync = fresh_dir("killed-sh-sync");
    let mark = format!("killed-sh-{}", std::process::id());
    let script = r#"trap '' TERM; sleep 301 & setsid sleep 302 & touch "$FAULT_SYNC/ready.$PMIX_RANK"; sleep 303"#;
    let (mut child, _err) = start_in_session(
        &["run", "--dstore", "-n", "3", "sh", "-c", script],
        &tmp,
        &[("FAULT_SYNC", &sync), ("FAULT_MARK", Path::new(&mark))],
    );
    let sid = child.id();
    ranks_ready(&sync, 3);
    // pmixw, its guard, and per rank: sh and three sleeps (the last
    // started after the rank's file)
    process::wait_until("every rank's three sleeps", || {
        marked("FAULT_MARK", &mark).len() == 2 + 3 * 4
    });
    let killed = Instant::now();
    kill(sid, libc::SIGKILL);
    let _ = child.wait();
    let left = session_empties(sid);
    let elsewhere = marked_gone("FAULT_MARK", &mark);
    let files = dir_empties(&tmp);
    println!(
        "every process gone and files removed {:.2} s after the launcher's SIGKILL (the ranks ignore SIGTERM: the grace, 1 s)",
        killed.elapsed().as_secs_f64()
    );
    assert!(left.is_empty(), "{left:?}");
    assert!(elsewhere.is_empty(), "{elsewhere:?}");
    assert!(files.is_empty(), "{files:?}");
    let _ = std::fs::remove_dir_all(&tmp);
    let _ = std::fs::remove_dir_all(&sync);
}

/// SIGKILL of `pmixw dvm` while a job it runs waits (`sh` ranks, one
/// child `sleep` each, another `setsid`): its guard ends the ranks and
/// their descendants and removes the DVM's rendezvous files (its tool
/// file and `pmix.sys.<host>`); the submitting `pmixw run --dvm` sees
/// its server gone and ends.
#[test]
fn a_killed_dvms_jobs_are_ended_by_its_guard() {
    let tmp = fresh_dir("killed-dvm");
    let sync = fresh_dir("killed-dvm-sync");
    let mark = format!("killed-dvm-{}", std::process::id());
    let env = [
        ("PMIX_SYSTEM_TMPDIR", tmp.as_path()),
        ("FAULT_MARK", Path::new(&mark)),
    ];
    let (mut dvm, _err) = start_in_session(&["dvm"], &tmp, &env);
    let sid = dvm.id();
    process::wait_until("the DVM's system file", || {
        std::fs::read_dir(&tmp)
            .unwrap()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("pmix.sys."))
    });
    let script = r#"sleep 401 & setsid sleep 402 & touch "$FAULT_SYNC/ready.$PMIX_RANK"; wait"#;
    let mut submit = Command::new(env!("CARGO_BIN_EXE_pmixw"));
    submit
        .args(["run", "--dvm", "-n", "2", "sh", "-c", script])
        .env("TMPDIR", &tmp)
        .env("PMIX_SYSTEM_TMPDIR", &tmp)
        .env("FAULT_SYNC", &sync)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut submit = submit.spawn().unwrap();
    ranks_ready(&sync, 2);
    let killed = Instant::now();
    kill(sid, libc::SIGKILL);
    let _ = dvm.wait();
    let left = session_empties(sid);
    let elsewhere = marked_gone("FAULT_MARK", &mark);
    let files = dir_empties(&tmp);
    println!(
        "the DVM's job gone and its files removed {:.2} s after its SIGKILL",
        killed.elapsed().as_secs_f64()
    );
    let st = process::wait_exit(&mut submit, "pmixw run --dvm after its DVM was killed");
    assert!(left.is_empty(), "{left:?}");
    assert!(elsewhere.is_empty(), "{elsewhere:?}");
    assert!(files.is_empty(), "{files:?}");
    assert!(!st.success(), "the submitter saw its job end well: {st:?}");
    let _ = std::fs::remove_dir_all(&tmp);
    let _ = std::fs::remove_dir_all(&sync);
}

/// A TMPDIR that cannot take a file: refused at start in one line, status 1.
#[test]
fn an_unusable_tmpdir_is_refused_in_one_line() {
    let dir = fresh_dir("bad-tmpdir");
    let file = dir.join("a-file");
    std::fs::write(&file, "x").unwrap();
    for bad in [dir.join("missing"), file] {
        let out = Command::new(env!("CARGO_BIN_EXE_pmixw"))
            .args(["run", "-n", "1", "true"])
            .env("TMPDIR", &bad)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!(
                "pmixw run: TMPDIR {}: cannot create a file there",
                bad.display()
            )),
            "{err}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The processes of session `sid` other than its leader (the launcher):
/// (pid, state).
fn ranks_states(sid: u32) -> Vec<(u32, String)> {
    in_session(sid)
        .into_iter()
        // the launcher's guard is no rank: it is not stopped with them
        .filter(|l| !l.ends_with("(pmixw-guard)"))
        .filter_map(|l| {
            let mut w = l.split(' ');
            let pid: u32 = w.next()?.parse().ok()?;
            let st = w.next()?.to_string();
            (pid != sid).then_some((pid, st))
        })
        .collect()
}

/// Whether every process of session `sid` but the launcher is stopped:
/// in state T; or D, a shell stopped in a vfork waiting for its stopped
/// child's exec (dash forks each `sleep` so); or Z, a `sleep` that ended
/// just before its stopped shell could reap it.
fn ranks_stopped(sid: u32) -> bool {
    let s = ranks_states(sid);
    s.iter().any(|(_, st)| st == "T")
        && s.iter()
            .all(|(_, st)| matches!(st.as_str(), "T" | "D" | "Z"))
}

/// The launcher's state (R, S, T, ...) in its session `sid`.
fn launcher_state(sid: u32) -> String {
    in_session(sid)
        .into_iter()
        .find_map(|l| {
            let mut w = l.split(' ');
            (w.next()? == sid.to_string()).then(|| w.next().unwrap_or("").to_string())
        })
        .unwrap_or_default()
}

/// Wait (hang guard) until `lines` holds every one of `want`, reading
/// what `rx` brings.
fn lines_arrive(rx: &std::sync::mpsc::Receiver<String>, lines: &mut Vec<String>, want: &[String]) {
    let start = Instant::now();
    while !want.iter().all(|w| lines.contains(w)) {
        assert!(
            start.elapsed() < process::HANG,
            "no {want:?} in {lines:?} (hang guard)"
        );
        if let Ok(l) = rx.recv_timeout(Duration::from_millis(50)) {
            lines.push(l);
        }
    }
}

/// Kills what is left of session `sid` when dropped: a test that fails
/// with the ranks stopped leaves nothing behind.
struct SessionGuard(u32);
impl Drop for SessionGuard {
    fn drop(&mut self) {
        for l in in_session(self.0) {
            if let Some(pid) = l.split(' ').next().and_then(|p| p.parse().ok()) {
                kill(pid, libc::SIGKILL);
            }
        }
    }
}

/// Ranks of `sh` trapping SIGUSR1, SIGUSR2, SIGTSTP, SIGCONT and SIGTERM
/// (a line each; TERM then exits 9), waiting in a loop of `sleep`s for
/// `$SYNC/end`.
const TRAPS: &str = r#"for s in USR1 USR2 TSTP CONT; do trap "echo rank $PMIX_RANK got $s" $s; done
    trap "echo rank $PMIX_RANK got TERM; exit 9" TERM
    touch "$SYNC/ready.$PMIX_RANK"
    while [ ! -e "$SYNC/end" ]; do sleep 0.05; done"#;

/// As mpirun 4.1.4 and prterun 5.0.11 (checked by hand): SIGUSR1 and
/// SIGUSR2 to the launcher reach every rank's group; SIGTSTP stops every
/// rank's group (as SIGSTOP: no rank sees a SIGTSTP) while the launcher
/// runs on; SIGCONT continues them; the job then ends as it would have
/// (status 0), nothing left.
#[test]
fn usr1_usr2_tstp_and_cont_are_forwarded_to_every_rank() {
    let tmp = fresh_dir("fwd");
    let sync = fresh_dir("fwd-sync");
    let (mut child, err) = start_in_session(
        &["run", "-n", "2", "sh", "-c", TRAPS],
        &tmp,
        &[("SYNC", &sync)],
    );
    let sid = child.id();
    let _guard = SessionGuard(sid);
    let out = process::lines_of(child.stdout.take().unwrap());
    let mut lines = Vec::new();
    ranks_ready(&sync, 2);
    let got = |s: &str| -> Vec<String> { (0..2).map(|r| format!("rank {r} got {s}")).collect() };
    kill(sid, libc::SIGUSR1);
    lines_arrive(&out, &mut lines, &got("USR1"));
    kill(sid, libc::SIGUSR2);
    lines_arrive(&out, &mut lines, &got("USR2"));
    kill(sid, libc::SIGTSTP);
    process::wait_until("every rank's group stopped", || ranks_stopped(sid));
    assert_ne!(launcher_state(sid), "T", "the launcher runs on");
    kill(sid, libc::SIGCONT);
    lines_arrive(&out, &mut lines, &got("CONT"));
    process::wait_until("every rank running again", || {
        ranks_states(sid)
            .iter()
            .all(|(_, st)| st != "T" && st != "D")
    });
    std::fs::write(sync.join("end"), "").unwrap();
    let o = process::output_within(child, Duration::from_secs(120), "pmixw run, forwarding");
    lines.extend(out.iter());
    let said: Vec<String> = err.try_iter().collect();
    let left = session_empties(sid);
    assert_eq!(o.status.code(), Some(0), "{said:?}\n{lines:?}");
    assert!(
        !lines.iter().any(|l| l.contains("got TSTP")),
        "a rank saw SIGTSTP, not SIGSTOP: {lines:?}"
    );
    for sig in [libc::SIGUSR1, libc::SIGUSR2, libc::SIGTSTP, libc::SIGCONT] {
        assert!(
            said.iter()
                .any(|l| l == &format!("pmixw run: forwarding signal {sig} to the job")),
            "{sig}: {said:?}"
        );
    }
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0, "TMPDIR");
    let _ = std::fs::remove_dir_all(&tmp);
    let _ = std::fs::remove_dir_all(&sync);
}

/// Ranks stopped by a forwarded SIGTSTP, then the launcher signalled
/// (SIGTERM): the ranks get the SIGTERM (continued to act on it) and the
/// job ends 143 without waiting out a grace of 600 s (beyond the hang
/// guard) for the SIGKILL.
#[test]
fn stopped_ranks_end_with_a_signalled_launcher() {
    let tmp = fresh_dir("fwd-stop-term");
    let sync = fresh_dir("fwd-stop-term-sync");
    let (mut child, err) = start_in_session(
        &["run", "--grace", "600", "-n", "2", "sh", "-c", TRAPS],
        &tmp,
        &[("SYNC", &sync)],
    );
    let sid = child.id();
    let _guard = SessionGuard(sid);
    let out = process::lines_of(child.stdout.take().unwrap());
    ranks_ready(&sync, 2);
    kill(sid, libc::SIGTSTP);
    process::wait_until("every rank's group stopped", || ranks_stopped(sid));
    kill(sid, libc::SIGTERM);
    let o = process::output_within(child, Duration::from_secs(120), "pmixw run, stopped ranks");
    let lines: Vec<String> = out.iter().collect();
    let said: Vec<String> = err.try_iter().collect();
    let left = session_empties(sid);
    assert_eq!(o.status.code(), Some(143), "{said:?}\n{lines:?}");
    for r in 0..2 {
        assert!(
            lines.contains(&format!("rank {r} got TERM")),
            "{lines:?}\n{said:?}"
        );
    }
    assert!(left.is_empty(), "{left:?}");
    let _ = std::fs::remove_dir_all(&tmp);
    let _ = std::fs::remove_dir_all(&sync);
}
