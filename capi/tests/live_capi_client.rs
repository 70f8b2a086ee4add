//! Unmodified libpmix 4.2.2 clients on our libpmix.so.2, under `pmixw run
//! -n 2`, once as built and once with LD_LIBRARY_PATH naming a directory
//! with our library as libpmix.so.2 (for that job only): both runs must
//! print the same, and the loader must resolve libpmix.so.2 to ours in
//! the second. interop/c/pmix_kvs.c (init, job size, put, commit, fence
//! with data, every rank's key, finalize) and interop/c/capi_client.c
//! (the other calls: non-blocking fence and get with callbacks, publish,
//! lookup, unpublish, resolve peers and nodes, query, log, connect,
//! disconnect). And an Open MPI 4.1.4 program (interop/c/mpi_ring.c,
//! mpicc: its PMIx component links libpmix.so.2) runs its ring under
//! `pmixw run -n 4` on ours, which the trace of our calls
//! (PMIX_CAPI_TRACE) shows it used; the same program built with Open MPI
//! 5.0.11's mpicc (the PyPI wheel) prints on ours under `pmixw run -n 2`
//! what it prints on the wheel's libpmix 5.0.11 (over shared memory).
//!
//! pmixw is the binary of the same cargo build (target/<profile>/pmixw,
//! which `cargo live` and `cargo test --workspace` build); without it the
//! test skips (fails under CI).

mod common;
use common::{pmixw, pmixw_output, profile_dir};
use pmix_test_kit::{hosts, interop, process};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const N: u32 = 2;

/// A directory holding our library as libpmix.so.2 (a copy of the
/// cdylib cargo built with this test, beside it in deps/).
fn our_lib_dir(out: &Path) -> PathBuf {
    let built = profile_dir().join("deps/libpmix.so");
    assert!(built.exists(), "{} not built", built.display());
    let dir = out.join("lib");
    std::fs::create_dir_all(&dir).unwrap();
    let tmp = dir.join(format!(".libpmix.so.2.{}", std::process::id()));
    std::fs::copy(&built, &tmp).unwrap();
    std::fs::rename(&tmp, dir.join("libpmix.so.2")).unwrap();
    dir
}

/// `pmixw run -n N exe`, with LD_LIBRARY_PATH=`lib` if given: success and the output lines, sorted.
fn run(pmixw: &Path, exe: &Path, lib: Option<&Path>) -> (bool, Vec<String>, String) {
    run_n(pmixw, &[exe.as_os_str()], lib, N, &[])
}

/// [`run`] of a command line `cmd` with `n` ranks and more environment.
fn run_n(
    pmixw: &Path,
    cmd: &[&std::ffi::OsStr],
    lib: Option<&Path>,
    n: u32,
    env: &[(&str, &str)],
) -> (bool, Vec<String>, String) {
    let o = pmixw_output(pmixw, cmd, lib, n, env);
    let mut lines: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(String::from)
        .collect();
    lines.sort();
    (
        o.status.success(),
        lines,
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

struct Setup {
    pmixw: PathBuf,
    out: PathBuf,
    lib: PathBuf,
}

fn setup() -> Option<Setup> {
    process::require("cc and libpmix 4.2.2", hosts::libpmix4_dev())?;
    let pmixw = process::require("pmixw of this build", pmixw())?;
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capi_live");
    std::fs::create_dir_all(&out).unwrap();
    static LIB: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let lib = LIB.get_or_init(|| our_lib_dir(&out)).clone();
    Some(Setup { pmixw, out, lib })
}

/// With `lib` first on LD_LIBRARY_PATH, the loader resolves `exe`'s
/// libpmix.so.2 (its own or its libraries') to ours.
fn assert_loads_ours(exe: &Path, lib: &Path) {
    let trace = Command::new(exe)
        .env("LD_LIBRARY_PATH", lib)
        .env("LD_TRACE_LOADED_OBJECTS", "1")
        .output()
        .unwrap();
    let trace = String::from_utf8_lossy(&trace.stdout);
    let want = format!("libpmix.so.2 => {}", lib.join("libpmix.so.2").display());
    assert!(
        trace.contains(&want),
        "the loader did not take ours:\n{trace}"
    );
}

/// Build `name` against libpmix, check the loader takes ours with
/// LD_LIBRARY_PATH, run it on both: the sorted output lines of each.
fn both(s: &Setup, name: &str) -> (Vec<String>, Vec<String>) {
    let exe = interop::build_c(name, &s.out).unwrap_or_else(|e| panic!("{e}"));
    assert_loads_ours(&exe, &s.lib);
    let (ok_c, lines_c, err_c) = run(&s.pmixw, &exe, None);
    assert!(ok_c, "{name} with libpmix: {lines_c:?}\n{err_c}");
    let (ok, lines, err) = run(&s.pmixw, &exe, Some(&s.lib));
    assert!(ok, "{name} with ours: {lines:?}\n{err}");
    (lines_c, lines)
}

#[test]
fn an_unmodified_libpmix_client_runs_on_ours_under_pmixw_run() {
    let Some(s) = setup() else { return };
    let (theirs, ours) = both(&s, "pmix_kvs");
    let want: Vec<String> = (0..N)
        .map(|r| format!("pmix rank {r} of {N}: kvs ok"))
        .collect();
    assert_eq!(theirs, want, "libpmix's run");
    assert_eq!(ours, want, "our run prints what libpmix's does");
}

#[test]
fn the_other_client_calls_answer_as_libpmix_does() {
    let Some(s) = setup() else { return };
    let (theirs, ours) = both(&s, "capi_client");
    // every call of the program printed its line, in both runs
    // 20 lines each rank prints; rank 0 publishes, unpublishes and
    // raises the event, rank 1 looks up and hears it
    assert_eq!(theirs.len(), 2 * 20 + 5, "{theirs:#?}");
    assert!(
        theirs
            .iter()
            .any(|l| l == "rank 1: event -7 from rank 0 [raised by 0]"),
        "{theirs:#?}"
    );
    assert!(
        theirs
            .iter()
            .any(|l| l == "rank 1: lookup rc=0 by rank 0 type=3 [the value]"),
        "{theirs:#?}"
    );
    assert_eq!(ours, theirs);
}

/// interop/c/capi_stubs.c under `pmixw run -n 1`: the credential and
/// fabric calls relayed to pmixw's server (a native credential, valid for
/// the connection that got it, a bogus one INVALID_CRED, every form's
/// callback), fabric deregister and the attribute registration local.
/// The same lines on ours as on libpmix 4.2.2 but for three, where
/// libpmix reports success for a fabric call pmixw refused
/// (divergences.md, "libpmix 4.2.2's fabric calls and process sets"): ours the server's
/// NOT_SUPPORTED, which libpmix's blocking update shows it sent.
#[test]
fn the_credential_and_fabric_calls_relay_as_libpmix_does() {
    let Some(s) = setup() else { return };
    let exe = interop::build_c("capi_stubs", &s.out).unwrap_or_else(|e| panic!("{e}"));
    let (ok_c, theirs, err_c) = run_n(&s.pmixw, &[exe.as_os_str()], None, 1, &[]);
    assert!(ok_c, "capi_stubs with libpmix: {theirs:?}\n{err_c}");
    let (ok, ours, err) = run_n(&s.pmixw, &[exe.as_os_str()], Some(&s.lib), 1, &[]);
    assert!(ok, "capi_stubs with ours: {ours:?}\n{err}");
    for want in [
        "rank get_credential: ret=0 len=8",
        "rank validate_credential(own): ret=0 nresults=0",
        "rank validate_credential_nb(bogus): ret=0 cb=-12",
        "rank fabric_update: ret=-47",
    ] {
        assert!(theirs.iter().any(|l| l == want), "{want}: {theirs:#?}");
    }
    // libpmix's success where the server refused, and ours
    let refused = [
        (
            "rank fabric_register: ret=0 ninfo=0",
            "rank fabric_register: ret=-47 ninfo=0",
        ),
        (
            "rank fabric_register_nb: ret=0 cb=0",
            "rank fabric_register_nb: ret=0 cb=-47",
        ),
        (
            "rank fabric_update_nb: ret=0 cb=0",
            "rank fabric_update_nb: ret=0 cb=-47",
        ),
    ];
    let mapped: Vec<String> = theirs
        .iter()
        .map(|l| {
            refused
                .iter()
                .find(|(t, _)| t == l)
                .map_or_else(|| l.clone(), |(_, o)| o.to_string())
        })
        .collect();
    let mut mapped = mapped;
    mapped.sort();
    assert_eq!(theirs.len(), 5 + 1 + 18 + 1, "{theirs:#?}");
    for (t, _) in refused {
        assert!(
            theirs.iter().any(|l| l == t),
            "libpmix no longer reports {t}"
        );
    }
    assert_eq!(ours, mapped, "ours and libpmix 4.2.2 (the refusals mapped)");
}

/// interop/c/capi_nb.c under `pmixw run -n 2`: each non-blocking form
/// (publish, lookup, unpublish, query, log, connect, disconnect, spawn,
/// job control, process monitor) and PMIx_Job_control and
/// PMIx_Process_monitor, each through its callback: the same lines on
/// ours as on libpmix 4.2.2 (a job control with no directives relayed
/// and refused by the server, not BAD_PARAM; a notice marked
/// PMIX_EVENT_NON_DEFAULT not handed to the default handler, which ours
/// did, and so handed Open MPI's the end of a spawned job, which it
/// aborts on), every form called on ours (our trace).
#[test]
fn the_non_blocking_and_job_control_forms_answer_as_libpmix_does() {
    let Some(s) = setup() else { return };
    let exe = interop::build_c("capi_nb", &s.out).unwrap_or_else(|e| panic!("{e}"));
    assert_loads_ours(&exe, &s.lib);
    let (ok_c, theirs, err_c) = run_n(&s.pmixw, &[exe.as_os_str()], None, N, &[]);
    assert!(ok_c, "capi_nb with libpmix: {theirs:?}\n{err_c}");
    let trace = [("PMIX_CAPI_TRACE", "1")];
    let (ok, ours, err) = run_n(&s.pmixw, &[exe.as_os_str()], Some(&s.lib), N, &trace);
    assert!(ok, "capi_nb with ours: {ours:?}\n{err}");
    // 16 lines every rank prints; rank 0's publish, unpublish and spawn
    // (two), rank 1's lookups (four) and notices (one), the child's one
    assert_eq!(theirs.len(), 2 * 16 + 4 + 4 + 1 + 1, "{theirs:#?}");
    for want in [
        "rank 1: lookup_nb n=1 by=0 [nb value]",
        "rank 1: lookup_nb(after unpublish) ret=0 cb=-46",
        "rank 0: spawn_nb ret=0 cb=0",
        "child rank 0: init ret=0 parent ret=0",
        "rank 0: job_control_nb(preemptible) ret=0 cb=0",
        "rank 1: process_monitor_nb(heartbeat) ret=0 cb=0",
        // a PMIX_EVENT_NON_DEFAULT notice passes the default handler by
        "rank 1: non-default notice: its handler 1, the default 0; plain notice: the default 1",
    ] {
        assert!(theirs.iter().any(|l| l == want), "{want}: {theirs:#?}");
    }
    assert_eq!(ours, theirs, "ours (left) and libpmix 4.2.2 (right)");
    for call in [
        "PMIx_Publish_nb",
        "PMIx_Lookup_nb",
        "PMIx_Unpublish_nb",
        "PMIx_Query_info_nb",
        "PMIx_Log_nb",
        "PMIx_Connect_nb",
        "PMIx_Disconnect_nb",
        "PMIx_Job_control_nb",
        "PMIx_Job_control",
        "PMIx_Process_monitor_nb",
        "PMIx_Process_monitor",
        "PMIx_Spawn_nb",
    ] {
        let traced = format!("pmix-capi: {call}");
        assert!(
            err.lines().any(|l| l == traced),
            "{call} not traced:\n{err}"
        );
    }
}

#[test]
fn an_open_mpi_program_runs_on_ours_under_pmixw_run() {
    let Some(s) = setup() else { return };
    let Some(mpicc) = process::require("Open MPI 4.1.4 mpicc", hosts::mpicc4()) else {
        return;
    };
    let exe = hosts::grid::compile_c(&mpicc, "mpi_ring", &s.out.join("mpi_ring"), &[])
        .unwrap_or_else(|e| panic!("{e}"));
    let n = 4;
    let (ok, lines, err) = run_n(
        &s.pmixw,
        &[exe.as_os_str()],
        Some(&s.lib),
        n,
        &[("PMIX_CAPI_TRACE", "1")],
    );
    assert!(ok, "{lines:?}\n{err}");
    interop::assert_mpi_ring(&lines.join("\n"), n, &err);
    // every rank initialized through us, and finalized
    for call in ["PMIx_Init", "PMIx_Fence_nb", "PMIx_Finalize"] {
        let count = err
            .lines()
            .filter(|l| *l == format!("pmix-capi: {call}"))
            .count();
        assert!(count >= n as usize, "{call} traced {count} times:\n{err}");
    }
}

/// interop/c/mpi_ring.c built with Open MPI 5.0.11's mpicc (the PyPI
/// wheel, whose libraries import libpmix 5's helpers and
/// `pmix_framework_names`): the loader takes ours for the wheel's
/// libraries, and the ring under `pmixw run -n 2` prints on ours what it
/// prints on the wheel's libpmix 5.0.11, every rank through our calls, with
/// Open MPI's default transports: shared memory between the two ranks,
/// whose modex (`btl.sm.5.0`) each rank gets of the other with
/// PMIX_IMMEDIATE, which our client asks the server (before it did not,
/// and one rank found the other unreachable: the ring hung); and once more
/// with `OMPI_MCA_btl=self,sm`, so that a fall back to tcp cannot hide it.
#[test]
fn an_open_mpi_5_program_runs_on_ours_under_pmixw_run() {
    let Some(s) = setup() else { return };
    let Some(mpicc) = process::require("Open MPI 5.0.11 mpicc", hosts::mpicc5()) else {
        return;
    };
    let exe = hosts::grid::compile_c(&mpicc, "mpi_ring", &s.out.join("mpi_ring5"), &[])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_loads_ours(&exe, &s.lib);
    for btl in [None, Some(("OMPI_MCA_btl", "self,sm"))] {
        let (ok_c, lines_c, err_c) =
            run_n(&s.pmixw, &[exe.as_os_str()], None, N, &Vec::from_iter(btl));
        assert!(ok_c, "{btl:?} on libpmix 5.0.11: {lines_c:?}\n{err_c}");
        interop::assert_mpi_ring(&lines_c.join("\n"), N, &err_c);
        let mut env = Vec::from_iter(btl);
        env.push(("PMIX_CAPI_TRACE", "1"));
        let (ok, lines, err) = run_n(&s.pmixw, &[exe.as_os_str()], Some(&s.lib), N, &env);
        assert!(ok, "{btl:?} on ours: {lines:?}\n{err}");
        assert_eq!(lines, lines_c, "{btl:?}");
        traced_open_mpi_5(&err);
    }
}

/// Every rank of an Open MPI 5 job on ours (stderr `err` of a traced run)
/// initialized through us, exchanged its modex and finalized, and used
/// libpmix 5's helpers (which 4.1.4 never calls).
fn traced_open_mpi_5(err: &str) {
    for call in [
        "PMIx_Init",
        "PMIx_Fence_nb",
        "PMIx_Finalize",
        "PMIx_Load_nspace",
        "PMIx_Info_destruct",
    ] {
        let count = err
            .lines()
            .filter(|l| *l == format!("pmix-capi: {call}"))
            .count();
        assert!(count >= N as usize, "{call} traced {count} times:\n{err}");
    }
}

/// interop/c/mpi_dyn.c (Open MPI 4.1.4): MPI_Comm_spawn from one rank,
/// and the two ranks' MPI_Open_port / Publish_name / Lookup_name /
/// Comm_accept / Comm_connect, on ours under `pmixw run` (the spawned
/// children inherit the job's LD_LIBRARY_PATH): the same checks pass as
/// under libpmix, through our Spawn, Publish, Lookup and Connect.
#[test]
fn open_mpi_dynamic_processes_run_on_ours() {
    let Some(s) = setup() else { return };
    let Some(mpicc) = process::require("Open MPI 4.1.4 mpicc", hosts::mpicc4()) else {
        return;
    };
    let exe = hosts::grid::compile_c(&mpicc, "mpi_dyn", &s.out.join("mpi_dyn"), &[])
        .unwrap_or_else(|e| panic!("{e}"));
    for (mode, n, want, calls) in [
        (
            "spawn",
            1,
            &["ok spawn_merged_sum 3", "ok child_merged_sum 3"][..],
            &["PMIx_Spawn", "PMIx_Connect"][..],
        ),
        (
            "accept",
            2,
            &["ok accept_merged_sum 2"][..],
            &["PMIx_Publish", "PMIx_Lookup", "PMIx_Connect"][..],
        ),
    ] {
        let cmd = [exe.as_os_str(), mode.as_ref()];
        let (ok_c, lines_c, err_c) = run_n(&s.pmixw, &cmd, None, n, &[]);
        let (ok, lines, err) = run_n(&s.pmixw, &cmd, Some(&s.lib), n, &[("PMIX_CAPI_TRACE", "1")]);
        assert!(ok_c, "{mode} on libpmix: {lines_c:?}\n{err_c}");
        assert!(ok, "{mode} on ours: {lines:?}\n{err}");
        for w in want {
            assert!(
                lines_c.iter().any(|l| l.ends_with(w)),
                "{mode} on libpmix: no {w:?} in {lines_c:?}"
            );
            assert!(
                lines.iter().any(|l| l.ends_with(w)),
                "{mode} on ours: no {w:?} in {lines:?}"
            );
        }
        assert!(
            !lines.iter().any(|l| l.contains("fail")),
            "{mode}: {lines:?}"
        );
        for call in calls {
            assert!(
                err.lines().any(|l| l == format!("pmix-capi: {call}")),
                "{mode}: {call} not traced:\n{err}"
            );
        }
    }
}

/// interop/c/capi_tool.c as the one rank of `pmixw run -n 1`: it
/// connects back to that server as a tool, by the URI in its
/// environment and by the server's pid (its rendezvous file), queries
/// the namespaces and finalizes; the same lines on ours as on libpmix.
#[test]
fn a_tool_connects_by_uri_and_by_pid_on_ours() {
    let Some(s) = setup() else { return };
    let exe = interop::build_c("capi_tool", &s.out).unwrap_or_else(|e| panic!("{e}"));
    for how in ["uri", "pid"] {
        let cmd = [exe.as_os_str(), how.as_ref()];
        let (ok_c, lines_c, err_c) = run_n(&s.pmixw, &cmd, None, 1, &[]);
        let (ok, lines, err) = run_n(&s.pmixw, &cmd, Some(&s.lib), 1, &[("PMIX_CAPI_TRACE", "1")]);
        assert!(ok_c, "{how} on libpmix: {lines_c:?}\n{err_c}");
        assert!(ok, "{how} on ours: {lines:?}\n{err}");
        assert_eq!(lines_c.len(), 3, "{lines_c:?}");
        assert!(
            lines_c
                .iter()
                .any(|l| l.ends_with("query rc=0 n=1 key=pmix.qry.ns type=3")),
            "{lines_c:?}"
        );
        assert_eq!(lines, lines_c, "{how}");
        assert!(
            err.lines().any(|l| l == "pmix-capi: PMIx_tool_init"),
            "{err}"
        );
    }
}

/// interop/c/capi_abort.c under `pmixw run -n 2`: rank 1's PMIx_Abort
/// ends the job with its status and message, on ours as on libpmix.
#[test]
fn pmix_abort_ends_the_job_with_its_status_on_ours() {
    let Some(s) = setup() else { return };
    let exe = interop::build_c("capi_abort", &s.out).unwrap_or_else(|e| panic!("{e}"));
    for lib in [None, Some(s.lib.as_path())] {
        let trace = [("PMIX_CAPI_TRACE", "1")];
        let env: &[(&str, &str)] = if lib.is_some() { &trace } else { &[] };
        let o = pmixw_output(&s.pmixw, &[exe.as_os_str()], lib, 2, env);
        let err = String::from_utf8_lossy(&o.stderr);
        let which = if lib.is_some() { "ours" } else { "libpmix" };
        assert_eq!(o.status.code(), Some(7), "{which}: {err}");
        assert!(
            err.contains("rank 1 aborted with status 7: capi abort test"),
            "{which}: {err}"
        );
        assert!(
            !String::from_utf8_lossy(&o.stdout).contains("wrong"),
            "{which}"
        );
        if lib.is_some() {
            assert!(err.lines().any(|l| l == "pmix-capi: PMIx_Abort"), "{err}");
        }
    }
}

/// python3-pmix (OpenPMIx 4.2.2's Python bindings, which link
/// libpmix.so.2) clients on ours: interop/c/py_client.py (init, job
/// size, put, commit, fence, every rank's key, an absent reserved key,
/// finalize) under `pmixw run -n 2`; every check passes, through us.
#[test]
fn python3_pmix_clients_run_on_ours() {
    let Some(s) = setup() else { return };
    let Some(py) = process::require("python3-pmix", hosts::python_pmix()) else {
        return;
    };
    let script = pmix_test_kit::repo().join("interop/c/py_client.py");
    let cmd = [py.as_os_str(), script.as_os_str()];
    let (ok, lines, err) = run_n(&s.pmixw, &cmd, Some(&s.lib), N, &[("PMIX_CAPI_TRACE", "1")]);
    assert!(ok, "{lines:?}\n{err}");
    // a failed check exits 1, and so the job: the verdict is the job's
    // status (the ranks' prints interleave on the shared pipe, even within
    // a line), and the calls the trace shows
    let text = lines.join("\n");
    assert!(
        text.contains("job_size") && !text.contains("fail "),
        "{text}"
    );
    for call in [
        "PMIx_Put",
        "PMIx_Commit",
        "PMIx_Fence",
        "PMIx_Get",
        "PMIx_Finalize",
    ] {
        assert!(
            err.lines().any(|l| l == format!("pmix-capi: {call}")),
            "{call} not traced:\n{err}"
        );
    }
    let inits = err.lines().filter(|l| *l == "pmix-capi: PMIx_Init").count();
    assert_eq!(inits, N as usize, "{err}");
}

/// interop/c/capi_threads.c: four threads per rank get job and process
/// keys 200 times each while the main thread puts, commits and fences;
/// every answer right on ours as on libpmix (our calls share one lock).
#[test]
fn concurrent_calls_from_threads_answer_right_on_ours() {
    let Some(s) = setup() else { return };
    let (theirs, ours) = both(&s, "capi_threads");
    let want: Vec<String> = (0..N)
        .map(|r| format!("rank {r}: 4 threads x 200 rounds, 0 wrong, main ok"))
        .collect();
    assert_eq!(theirs, want, "libpmix");
    assert_eq!(ours, want);
}

/// Open MPI 4.1.4's mpi_ring under PRRTE 5.0.11's `prterun -n 2` with no
/// launcher hint (no `FLUX_JOB_ID`): Open MPI 4.1.4 does not take PRRTE
/// 5's environment for a launch, so each rank starts as a singleton, whose
/// ess module forks its own daemon (`orted`, which inherits the rank's
/// LD_LIBRARY_PATH and so serves the singleton through our server half:
/// PMIx_server_init in our trace) and connects to it. On libpmix and on
/// ours each rank prints "rank 0 of 1"; the same lines on both, each rank
/// on ours traced through PMIx_Init and its daemon through
/// PMIx_server_init, the run on libpmix not at all.
#[test]
fn open_mpi_4_singletons_under_prterun_run_on_ours_as_on_libpmix() {
    let Some(s) = setup() else { return };
    let Some(mpicc) = process::require("Open MPI 4.1.4 mpicc", hosts::mpicc4()) else {
        return;
    };
    let Some(prterun) = process::require("PRRTE 5.0.11 prterun", hosts::prterun5()) else {
        return;
    };
    let exe = hosts::grid::compile_c(&mpicc, "mpi_ring", &s.out.join("mpi_ring_single"), &[])
        .unwrap_or_else(|e| panic!("{e}"));
    let run = |ours: bool| {
        let mut c = Command::new(&prterun);
        c.args(["--allow-run-as-root", "--map-by", ":OVERSUBSCRIBE", "-n"])
            .arg(N.to_string())
            .arg("env");
        if ours {
            c.arg(format!("LD_LIBRARY_PATH={}", s.lib.display()))
                .arg("PMIX_CAPI_TRACE=1");
        }
        c.arg(&exe)
            .current_dir(&s.out)
            .env_remove("FLUX_JOB_ID")
            .env_remove("LD_LIBRARY_PATH")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (v, _) in pmix_codec::select::SERVER_URI_VARS {
            c.env_remove(v);
        }
        let what = format!("prterun of mpi_ring, ours {ours}");
        let o = process::output_within(c.spawn().unwrap(), process::HANG, &what);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(o.status.success(), "{what}: {:?}\n{text}", o.status);
        let mut lines: Vec<String> = text
            .lines()
            .filter(|l| l.starts_with("mpi rank "))
            .map(String::from)
            .collect();
        lines.sort();
        let traced = |call: &str| {
            text.lines()
                .filter(|l| *l == format!("pmix-capi: {call}"))
                .count()
        };
        (lines, traced("PMIx_Init"), traced("PMIx_server_init"), text)
    };
    let (theirs, inits_c, servers_c, text_c) = run(false);
    let want =
        vec!["mpi rank 0 of 1: ring from 0, sum 0, bcast broadcast: ok".to_string(); N as usize];
    assert_eq!(theirs, want, "on libpmix:\n{text_c}");
    assert_eq!(
        (inits_c, servers_c),
        (0, 0),
        "libpmix's run called ours:\n{text_c}"
    );
    let (ours, inits, servers, text) = run(true);
    assert_eq!(ours, theirs, "on ours:\n{text}");
    assert!(
        inits >= N as usize && servers >= N as usize,
        "{inits} PMIx_Init, {servers} PMIx_server_init traced for {N} singletons:\n{text}"
    );
}

/// interop/c/capi_group.c under `pmixw run -n 3`, built on 4.2.2's
/// headers and linked to the wheel's libpmix 5.0.11: every rank constructs
/// a group of the job with a context id (its results: PMIX_GROUP_ID, the
/// membership, the context id), fences across it and destructs it; a
/// destruct of an unknown group and a construct without procs fail; two
/// ranks construct and destruct with the `_nb` forms; rank 0 invites the
/// others, who join from their PMIX_GROUP_INVITED handler. The same lines
/// on ours as on libpmix 5.0.11, through our Group calls. Then its
/// `leave` step (a member leaves, the others hear PMIX_GROUP_LEFT and
/// destruct without it) on ours as on libpmix 4.2.2 (5.0.11's
/// PMIx_Group_leave crashes: spec-notes/divergences.md).
#[test]
fn groups_answer_as_libpmix_5_does() {
    let Some(s) = setup() else { return };
    let Some(lib5) = process::require("libpmix 5.0.11", hosts::libpmix5()) else {
        return;
    };
    let exe = pmix_test_kit::cbuild::build_with_lib("capi_group", &lib5, &s.out)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_loads_ours(&exe, &s.lib);
    let n = 3;
    let (ok_c, theirs, err_c) = run_n(&s.pmixw, &[exe.as_os_str()], None, n, &[]);
    assert!(ok_c, "on libpmix 5.0.11: {theirs:?}\n{err_c}");
    for want in [
        "rank 0: construct gall rc=0 nres=3",
        "rank 0: construct gall result pmix.grp.mbrs type=39 type=22 size=3 0 1 2",
        "rank 0: construct gall result pmix.grp.ctxid type=4 set",
        "rank 1: construct_nb gpair rc=0 cb=0 keys pmix.grp.ctxid pmix.grp.id pmix.grp.mbrs",
        "rank 2: destruct never rc=-46",
        "rank 0: invite ginv rc=0 nres=0",
        "rank 2: invited code=-159 group=ginv from=0",
        "rank 2: join_nb cb=0 keys pmix.evrange",
    ] {
        assert!(
            theirs.iter().any(|l| l == want),
            "libpmix 5.0.11: no {want:?} in {theirs:#?}"
        );
    }
    let (ok, ours, err) = run_n(
        &s.pmixw,
        &[exe.as_os_str()],
        Some(&s.lib),
        n,
        &[("PMIX_CAPI_TRACE", "1")],
    );
    assert!(ok, "on ours: {ours:?}\n{err}");
    assert_eq!(ours, theirs);
    for call in [
        "PMIx_Group_construct",
        "PMIx_Group_construct_nb",
        "PMIx_Group_destruct",
        "PMIx_Group_destruct_nb",
        "PMIx_Group_invite",
        "PMIx_Group_join_nb",
    ] {
        assert!(
            err.lines().any(|l| l == format!("pmix-capi: {call}")),
            "{call} not traced:\n{err}"
        );
    }

    let exe4 = interop::build_c("capi_group", &s.out).unwrap_or_else(|e| panic!("{e}"));
    let cmd = [exe4.as_os_str(), "leave".as_ref()];
    let (ok_c, theirs, err_c) = run_n(&s.pmixw, &cmd, None, n, &[]);
    assert!(ok_c, "leave on libpmix 4.2.2: {theirs:?}\n{err_c}");
    for want in [
        "rank 2: leave gleave rc=0",
        "rank 0: left code=-160 group=gleave from=2",
        "rank 1: destruct gleave rc=0",
    ] {
        assert!(
            theirs.iter().any(|l| l == want),
            "libpmix 4.2.2: no {want:?} in {theirs:#?}"
        );
    }
    let (ok, ours, err) = run_n(&s.pmixw, &cmd, Some(&s.lib), n, &[("PMIX_CAPI_TRACE", "1")]);
    assert!(ok, "leave on ours: {ours:?}\n{err}");
    assert_eq!(ours, theirs);
    assert!(
        err.lines().any(|l| l == "pmix-capi: PMIx_Group_leave"),
        "{err}"
    );
}
