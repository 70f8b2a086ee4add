//! Open MPI 5 and MPI-4 programs under `pmixw run`, issue #24 items 3–5
//! (live): dynamic jobs, job control, and a rank beside a helper process
//! of its own. Each program runs under `pmixw run` and, for reference,
//! under PRRTE 5.0.11's prterun (Open MPI 4.1.4's mpirun for its own MPI
//! programs and for job control, whose requests it accepts) where the
//! reference itself passes it reliably; ours must pass it too.
//!
//! The programs are interop/c/*.c:
//!
//! - spawn_conn.c (libpmix 4.2.2 and 5.0.11 clients): a spawned job's
//!   ranks find their parent (PMIX_PARENT_ID) and apps, both jobs connect,
//!   read each other's size and data and disconnect; PMIx_Spawn of two
//!   apps; 20 spawns in a loop; the parent hears of each child job's end.
//! - mpi_dyn.c (Open MPI 5.0.11 and 4.1.4 programs): MPI_Comm_spawn,
//!   MPI_Comm_spawn_multiple, 20 spawns, MPI_Comm_accept/connect met by
//!   MPI_Publish_name/MPI_Lookup_name, MPI_Comm_join, MPI_Intercomm_create.
//! - jctrl.c: OpenPMIx's jctrl request (preemptible, checkpoint method)
//!   and what follows from it; cleanup registration; what no host here
//!   does (restart, provision) is NOT_SUPPORTED.
//! - hbeat.c: OpenPMIx 4.2.2's jctrl example's calls (its job-control
//!   request with the checkpoint method's type unset, heartbeat
//!   monitoring, PMIx_Heartbeat, a fence): a silent rank is alerted for,
//!   a beating one is not (issue #36 item 4).
//! - groups.c: every member's PMIX_GROUP_LOCAL_CID read by every member
//!   (before and after the group's destruct), fences over a group built
//!   by PMIx_Group_invite/join and over one built with
//!   PMIX_GROUP_NOTIFY_TERMINATION (issue #36 item 6).
//! - beside.c: 8 ranks, each beside a helper it forked that connected
//!   first as the same rank (staying connected, or gone before the rank
//!   connects).
//!
//! A peer that is not installed is a skip that says so, a failure under CI.

use pmix_test_kit::hosts::{self, grid};
use pmix_test_kit::process;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

/// `pmixw run --timeout`: a hang guard per job, not a measurement.
const GUARD: &str = "300";
/// The test's own guard around a launcher.
const LIMIT: Duration = Duration::from_secs(360);

/// What a program is built with.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Kind {
    /// libpmix 4.2.2 (Debian's headers and library).
    C422,
    /// libpmix 5.0.11 (the PyPI wheel's library, 4.2.2's public headers).
    C5011,
    /// Open MPI 5.0.11's mpicc.
    Mpi5,
    /// Open MPI 4.1.4's mpicc.
    Mpi4,
}

fn scratch(what: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("dynamic-{}-{what}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `interop/c/<name>.c` built for `kind`, once per test process;
/// None when its toolchain is missing (skipped; a failure under CI).
fn build(kind: Kind, name: &str) -> Option<PathBuf> {
    static BUILT: Mutex<Option<HashMap<(Kind, String), PathBuf>>> = Mutex::new(None);
    let mut built = BUILT.lock().unwrap_or_else(|p| p.into_inner());
    let map = built.get_or_insert_with(HashMap::new);
    if let Some(p) = map.get(&(kind, name.to_string())) {
        return Some(p.clone());
    }
    let out = scratch("build");
    let exe = match kind {
        Kind::C422 => {
            process::require("libpmix 4.2.2 headers", hosts::libpmix4_dev())?;
            pmix_test_kit::interop::build_c(name, &pmix_test_kit::interop::default_out_dir())
        }
        Kind::C5011 => {
            process::require("libpmix 4.2.2 headers", hosts::libpmix4_dev())?;
            let lib = process::require("libpmix 5.0.11", hosts::libpmix5())?;
            grid::build_with_lib(name, &lib, &out)
        }
        Kind::Mpi5 => {
            let cc = process::require("Open MPI 5.0.11 mpicc", hosts::mpicc5())?;
            grid::compile_c(&cc, name, &out.join(format!("{name}-ompi5")), &[])
        }
        Kind::Mpi4 => {
            let cc = process::require("Open MPI 4.1.4 mpicc", hosts::mpicc4())?;
            grid::compile_c(&cc, name, &out.join(format!("{name}-ompi4")), &[])
        }
    }
    .unwrap_or_else(|e| panic!("{kind:?} {name}: {e}"));
    map.insert((kind, name.to_string()), exe.clone());
    Some(exe)
}

/// Run a launcher command; its exit code and stdout + stderr.
fn launch(mut c: Command, what: &str) -> (i32, String) {
    c.stdin(Stdio::null())
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        // a test run under a Flux job would lend it to Open MPI 4.1
        .env_remove("FLUX_JOB_ID");
    let o = process::run_within(&mut c, LIMIT, what);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.code().unwrap_or(-1), text)
}

/// The program under `pmixw run -n N`, in `dir`.
fn ours(n: u32, exe: &Path, args: &[&str], dir: &Path) -> (i32, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pmixw"));
    c.args(["run", "-n", &n.to_string(), "--timeout", GUARD])
        .arg(exe)
        .args(args)
        .current_dir(dir)
        .env("TMPDIR", dir);
    launch(c, &format!("pmixw run {} {args:?}", exe.display()))
}

/// A reference launcher.
#[derive(Clone, Copy, Debug)]
enum Launcher {
    /// PRRTE 5.0.11's prterun (libpmix 5.0.11's server).
    Prterun,
    /// Open MPI 4.1.4's mpirun (ORTE over libpmix 4.2.2's server).
    Mpirun4,
}

/// The program under a reference launcher; None: skipped.
fn reference(l: Launcher, n: u32, exe: &Path, args: &[&str], dir: &Path) -> Option<(i32, String)> {
    let mut c = match l {
        Launcher::Prterun => {
            let p = process::require("PRRTE 5.0.11 prterun", hosts::prterun5())?;
            let mut c = Command::new(p);
            c.args(["--allow-run-as-root", "--map-by", ":OVERSUBSCRIBE"]);
            c
        }
        Launcher::Mpirun4 => {
            let p = process::require("Open MPI 4.1.4 mpirun", hosts::mpirun4())?;
            let mut c = Command::new(p);
            c.args(["--allow-run-as-root", "--oversubscribe"]);
            c
        }
    };
    c.args(["-n", &n.to_string()])
        .arg(exe)
        .args(args)
        .current_dir(dir)
        .env("TMPDIR", dir);
    Some(launch(c, &format!("{l:?} {} {args:?}", exe.display())))
}

/// A run passed: status 0, no failed check, and `want` lines (each at
/// least as often as given).
fn passed(who: &str, (code, out): &(i32, String), want: &[(&str, usize)]) {
    assert_eq!(*code, 0, "{who}: status {code}\n{out}");
    let fails: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("fail ") || l.contains("] fail "))
        .collect();
    assert!(fails.is_empty(), "{who}: {fails:?}\n{out}");
    for (line, count) in want {
        let got = out.lines().filter(|l| l.contains(line)).count();
        assert!(got >= *count, "{who}: {got} of {count} {line:?}\n{out}");
    }
}

/// spawn_conn MODE on N ranks, under ours and under the reference.
fn spawn_conn(kind: Kind, n: u32, mode: &str, want: &[(&str, usize)]) {
    let Some(exe) = build(kind, "spawn_conn") else {
        return;
    };
    let dir = scratch(&format!("{kind:?}-{mode}"));
    // prterun for both libraries: Open MPI 4.1.4's mpirun gives a child
    // no PMIX_PARENT_ID and fails the connect (PARTIAL_SUCCESS)
    if let Some(r) = reference(Launcher::Prterun, n, &exe, &[mode], &dir) {
        passed(&format!("reference, {kind:?} {mode}"), &r, want);
    }
    let r = ours(n, &exe, &[mode], &dir);
    passed(&format!("pmixw run, {kind:?} {mode}"), &r, want);
    // one spawn: a child that took itself for the parent would have
    // spawned again (namespaces …-spawn-2, -3, …)
    if mode != "loop" {
        assert!(!r.1.contains("-spawn-2"), "{kind:?} {mode}: {}", r.1);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

const CONNECT: &[(&str, usize)] = &[
    ("ok child_has_parent", 2),
    ("ok connect_connect", 2),
    ("ok child_connect", 2),
    ("ok connect_their_key", 2),
    ("ok child_their_key", 2),
    ("ok connect_disconnect", 2),
    ("ok child_disconnect", 2),
    ("ok connect_job_end", 1),
];

#[test]
fn libpmix_422_spawn_then_connect_and_disconnect() {
    spawn_conn(Kind::C422, 2, "connect", CONNECT);
}

#[test]
fn libpmix_5011_spawn_then_connect_and_disconnect() {
    spawn_conn(Kind::C5011, 2, "connect", CONNECT);
}

const MULTIPLE: &[(&str, usize)] = &[
    ("ok child_has_parent", 3),
    ("ok child_appnum", 3),
    ("ok multiple_connect", 2),
    ("ok child_connect", 3),
    ("ok multiple_job_end", 1),
];

#[test]
fn libpmix_422_spawn_of_two_apps() {
    spawn_conn(Kind::C422, 2, "multiple", MULTIPLE);
}

#[test]
fn libpmix_5011_spawn_of_two_apps() {
    spawn_conn(Kind::C5011, 2, "multiple", MULTIPLE);
}

const LOOP: &[(&str, usize)] = &[("ok child_has_parent", 20), ("ok loop_spawns 20 of 20", 1)];

#[test]
fn libpmix_422_twenty_spawns_in_a_loop() {
    spawn_conn(Kind::C422, 1, "loop", LOOP);
}

#[test]
fn libpmix_5011_twenty_spawns_in_a_loop() {
    spawn_conn(Kind::C5011, 1, "loop", LOOP);
}

/// The "have KEY TYPE VALUE" lines a dump child printed, by key.
fn told(out: &str) -> HashMap<String, String> {
    out.lines()
        .filter_map(|l| l.strip_prefix("have "))
        .filter_map(|l| l.split_once(' '))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A spawned rank is told what prterun 5.0.11 tells it (spec-notes/
/// server.md), but the session directory (`pmix.nsdir`: we keep none).
#[test]
fn a_spawned_rank_is_told_its_parent_and_apps() {
    let Some(exe) = build(Kind::C5011, "spawn_conn") else {
        return;
    };
    let dir = scratch("dump");
    let r = ours(1, &exe, &["dump"], &dir);
    passed("pmixw run dump", &r, &[("ok child_has_parent", 1)]);
    let mine = told(&r.1);
    let parent =
        r.1.lines()
            .find_map(|l| l.strip_prefix("ok dump_spawn "))
            .map(|ns| ns.trim().trim_end_matches("-spawn-1").to_string())
            .expect("the parent's spawn line");
    assert_eq!(
        mine.get("pmix.parent").map(String::as_str),
        Some(format!("PROC {parent}:0").as_str()),
        "{mine:?}"
    );
    for (k, v) in [
        ("pmix.appnum", "UINT32 0"),
        ("pmix.apprank", "RANK 0"),
        ("pmix.reinc", "UINT32 0"),
        ("pmix.spawned", "BOOL 1"),
        ("pmix.job.size", "UINT32 1"),
        ("pmix.job.napps", "UINT32 1"),
        ("pmix.app.size", "UINT32 1"),
        ("pmix.aldr", "RANK 0"),
        // the parent job's rank came first
        ("pmix.grank", "RANK 1"),
        ("pmix.offset", "RANK 1"),
    ] {
        assert_eq!(mine.get(k).map(String::as_str), Some(v), "{k}: {mine:?}");
    }
    let argv = mine.get("pmix.app.argv").cloned().unwrap_or_default();
    assert!(argv.ends_with("child 1 dump 1"), "{argv}");
    assert_eq!(
        mine.get("pmix.wdir"),
        Some(&format!("STRING {}", dir.display()))
    );
    if let Some(r) = reference(Launcher::Prterun, 1, &exe, &["dump"], &dir) {
        passed("prterun dump", &r, &[("ok child_has_parent", 1)]);
        let theirs = told(&r.1);
        let missing: Vec<&String> = theirs
            .keys()
            .filter(|k| !mine.contains_key(*k) && *k != "pmix.nsdir")
            .collect();
        assert!(missing.is_empty(), "prterun gives {missing:?}: {theirs:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// mpi_dyn MODE on N ranks of an MPI program of `kind`, under ours (and
/// under the reference with `with_reference`).
fn mpi_dyn(kind: Kind, n: u32, mode: &str, with_reference: bool, want: &[(&str, usize)]) {
    let Some(exe) = build(kind, "mpi_dyn") else {
        return;
    };
    let dir = scratch(&format!("{kind:?}-mpi-{mode}"));
    let launcher = match kind {
        Kind::Mpi4 => Launcher::Mpirun4,
        _ => Launcher::Prterun,
    };
    if with_reference {
        if let Some(r) = reference(launcher, n, &exe, &[mode], &dir) {
            passed(&format!("reference, {kind:?} {mode}"), &r, want);
        }
    }
    let r = ours(n, &exe, &[mode], &dir);
    passed(&format!("pmixw run, {kind:?} {mode}"), &r, want);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn open_mpi_5_comm_spawn_and_spawn_multiple() {
    mpi_dyn(
        Kind::Mpi5,
        2,
        "spawn",
        true,
        &[
            ("ok child_has_parent", 2),
            ("ok spawn_merged_sum 4", 2),
            ("done", 4),
        ],
    );
    mpi_dyn(
        Kind::Mpi5,
        1,
        "multiple",
        false,
        &[
            ("ok child_has_parent", 3),
            ("ok multiple_merged_sum 4", 1),
            ("done", 4),
        ],
    );
}

#[test]
fn open_mpi_5_twenty_comm_spawns() {
    mpi_dyn(
        Kind::Mpi5,
        1,
        "loop",
        false,
        &[("ok loop_spawns 20 of 20", 1)],
    );
}

#[test]
fn open_mpi_5_accept_connect_join_and_intercomm_create() {
    mpi_dyn(
        Kind::Mpi5,
        4,
        "accept",
        true,
        &[
            ("ok lookup_name", 1),
            ("ok accept_merged_sum 4", 4),
            ("done", 4),
        ],
    );
    mpi_dyn(
        Kind::Mpi5,
        2,
        "join",
        false,
        &[("ok join_exchange 1", 1), ("ok join_exchange 0", 1)],
    );
    mpi_dyn(
        Kind::Mpi5,
        4,
        "intercomm",
        false,
        &[("ok intercomm_merged_sum 4", 4)],
    );
}

#[test]
fn open_mpi_414_dynamic_processes() {
    for (n, mode, want) in [
        (2, "spawn", "ok spawn_merged_sum 4"),
        (1, "multiple", "ok multiple_merged_sum 4"),
        (4, "accept", "ok accept_merged_sum 4"),
        (2, "join", "ok join_exchange"),
        (4, "intercomm", "ok intercomm_merged_sum 4"),
    ] {
        mpi_dyn(Kind::Mpi4, n, mode, mode == "spawn", &[(want, 1)]);
    }
}

/// The status line jctrl printed for a request, as `SUCCESS` or
/// `NOT-SUPPORTED` whichever library's names it used.
fn jstatus(out: &str, what: &str) -> String {
    out.lines()
        .find_map(|l| l.strip_prefix(&format!("status {what} ")))
        .map(|s| match s.trim() {
            "PMIX_SUCCESS" => "SUCCESS".to_string(),
            "PMIX_ERR_NOT_SUPPORTED" => "NOT-SUPPORTED".to_string(),
            other => other.to_string(),
        })
        .unwrap_or_else(|| {
            format!(
                "no status for {what} in
{out}"
            )
        })
}

fn job_control(kind: Kind) {
    let Some(exe) = build(kind, "jctrl") else {
        return;
    };
    let dir = scratch(&format!("{kind:?}-jctrl"));
    let reqs = ["preempt", "ckpt", "cleanup", "restart", "provision"];
    // Open MPI 4.1.4's mpirun accepts every request (and does nothing but
    // remove the registered file)
    if kind == Kind::C422 {
        if let Some((code, out)) = reference(Launcher::Mpirun4, 2, &exe, &reqs, &dir) {
            assert_eq!(code, 0, "{out}");
            for r in reqs {
                assert_eq!(jstatus(&out, r), "SUCCESS", "mpirun 4.1.4 {r}: {out}");
            }
        }
    }
    let (code, out) = ours(2, &exe, &reqs, &dir);
    assert_eq!(code, 0, "{out}");
    for (r, want) in [
        ("preempt", "SUCCESS"),
        ("ckpt", "SUCCESS"),
        ("cleanup", "SUCCESS"),
        ("restart", "NOT-SUPPORTED"),
        ("provision", "NOT-SUPPORTED"),
    ] {
        assert_eq!(jstatus(&out, r), want, "{kind:?} {r}: {out}");
    }
    // the checkpoint came by the method the rank registered: SIGUSR2 and
    // the PMIX_JCTRL_CHECKPOINT event
    assert!(out.contains("ckpt_seen 1 1"), "{out}");
    // the file registered for cleanup is gone with the job
    let file = out
        .lines()
        .find_map(|l| l.strip_prefix("cleanup_file "))
        .expect("cleanup_file line");
    assert!(!Path::new(file.trim()).exists(), "{file} left behind");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The lines of `out` that start with `prefix`, status names as 4.2.2
/// spells them (5.0.11's carry a `PMIX_` prefix).
fn lines_of(out: &str, prefix: &str) -> Vec<String> {
    out.lines()
        .filter(|l| l.starts_with(prefix))
        .map(|l| l.replace(" PMIX_", " "))
        .collect()
}

fn heartbeat(kind: Kind) {
    let Some(exe) = build(kind, "hbeat") else {
        return;
    };
    let dir = scratch(&format!("{kind:?}-hbeat"));
    // the reference: mpirun 4.1.4 accepts the example's requests and beats
    // (and raises no alert for the silent rank within 5 s: spec-notes/server.md)
    if kind == Kind::C422 {
        if let Some((code, out)) = reference(Launcher::Mpirun4, 2, &exe, &["5"], &dir) {
            assert_eq!(code, 0, "{out}");
            for s in ["example", "monitor", "fence"] {
                assert_eq!(
                    lines_of(&out, &format!("status {s} ")),
                    vec![format!("status {s} SUCCESS"); 2],
                    "mpirun 4.1.4 {s}: {out}"
                );
            }
            println!("mpirun 4.1.4 alerts: {:?}", lines_of(&out, "alert "));
        }
    }
    let (code, out) = ours(2, &exe, &["60"], &dir);
    assert_eq!(code, 0, "{out}");
    for s in ["example", "monitor", "fence"] {
        assert_eq!(
            lines_of(&out, &format!("status {s} ")),
            vec![format!("status {s} SUCCESS"); 2],
            "{kind:?} {s}: {out}"
        );
    }
    // rank 1 (silent, PROC_LOCAL) is alerted for, to itself; rank 0 beats
    // and hears of nobody
    assert_eq!(lines_of(&out, "alert "), ["alert 1 1"], "{kind:?}: {out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn libpmix_422_heartbeat_monitoring_alerts_for_the_silent_rank() {
    heartbeat(Kind::C422);
}

#[test]
fn libpmix_5011_heartbeat_monitoring_alerts_for_the_silent_rank() {
    heartbeat(Kind::C5011);
}

/// groups.c MODE on N ranks under ours; lclcid also under prterun for
/// the record (it reads no member's id; in async mode it hangs in the
/// group fence, so that run is not made here: spec-notes/server.md).
fn groups(kind: Kind, n: u32, mode: &str) -> Option<Vec<String>> {
    let exe = build(kind, "groups")?;
    let dir = scratch(&format!("{kind:?}-groups-{mode}"));
    if mode == "lclcid" {
        if let Some((code, out)) = reference(Launcher::Prterun, n, &exe, &[mode], &dir) {
            println!("prterun 5.0.11, {kind:?} {mode}: status {code}\n{out}");
        }
    }
    let (code, out) = ours(n, &exe, &[mode], &dir);
    assert_eq!(code, 0, "{kind:?} {mode}: {out}");
    let _ = std::fs::remove_dir_all(&dir);
    let mut lines = lines_of(&out, "");
    lines.sort();
    Some(lines)
}

fn local_cids(kind: Kind) {
    let Some(lines) = groups(kind, 3, "lclcid") else {
        return;
    };
    for r in 0..3 {
        for s in ["construct", "destruct", "fence"] {
            assert!(
                lines.contains(&format!("{s} {r} SUCCESS")),
                "{s} {r}: {lines:?}"
            );
        }
        assert!(lines.contains(&format!("ctxid {r} some")), "{lines:?}");
        // every member reads every member's, the group live and gone
        for when in ["before", "after"] {
            for of in 0..3 {
                let want = format!("lclcid {when} {r} {of} {}", 1000 + of);
                assert!(lines.contains(&want), "{want}: {lines:?}");
            }
        }
    }
}

#[test]
fn libpmix_422_group_local_context_ids_of_every_member() {
    local_cids(Kind::C422);
}

#[test]
fn libpmix_5011_group_local_context_ids_of_every_member() {
    local_cids(Kind::C5011);
}

fn async_groups(kind: Kind) {
    let Some(lines) = groups(kind, 4, "async") else {
        return;
    };
    assert!(lines.contains(&"invite 0 SUCCESS".to_string()), "{lines:?}");
    for r in [2, 3] {
        assert!(lines.contains(&format!("complete {r} 1")), "{lines:?}");
    }
    for r in [0, 2, 3] {
        assert!(
            lines.contains(&format!("groupfence {r} SUCCESS")),
            "{lines:?}"
        );
    }
    for r in [1, 2, 3] {
        assert!(
            lines.contains(&format!("termconstruct {r} SUCCESS")),
            "{lines:?}"
        );
        assert!(
            lines.contains(&format!("termfence {r} SUCCESS")),
            "{lines:?}"
        );
    }
    for r in 0..4 {
        assert!(lines.contains(&format!("fence {r} SUCCESS")), "{lines:?}");
    }
}

#[test]
fn libpmix_422_fences_over_groups_built_by_invitation() {
    async_groups(Kind::C422);
}

#[test]
fn libpmix_5011_fences_over_groups_built_by_invitation() {
    async_groups(Kind::C5011);
}

#[test]
fn libpmix_422_job_control_as_mpirun_414_accepts_it() {
    job_control(Kind::C422);
}

#[test]
fn libpmix_5011_job_control() {
    job_control(Kind::C5011);
}

/// 8 ranks, each beside its helper: all complete.
fn beside(kind: Kind, mode: &str) {
    let Some(exe) = build(kind, "beside") else {
        return;
    };
    let dir = scratch(&format!("{kind:?}-beside-{mode}"));
    let want = [("complete beside its helper", 8)];
    // the reference, prterun 5.0.11, passes a helper that stays; one gone
    // before its rank connects fails some ranks' fence with
    // PARTIAL_SUCCESS now and then under prterun and mpirun 4.1.4 alike
    // (spec-notes/server.md): no reference for it
    if mode == "stay" {
        if let Some(r) = reference(Launcher::Prterun, 8, &exe, &[mode], &dir) {
            passed(&format!("prterun, {kind:?} {mode}"), &r, &want);
        }
    }
    let r = ours(8, &exe, &[mode], &dir);
    passed(&format!("pmixw run, {kind:?} {mode}"), &r, &want);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn libpmix_422_ranks_beside_a_helper_connected_first() {
    beside(Kind::C422, "stay");
    beside(Kind::C422, "early");
}

#[test]
fn libpmix_5011_ranks_beside_a_helper_connected_first() {
    beside(Kind::C5011, "stay");
    beside(Kind::C5011, "early");
}
