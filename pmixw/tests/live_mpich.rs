//! MPICH 5.0.2 programs (PyPI's `mpich` wheel: its own mpicc, hydra's
//! mpiexec) under `pmixw run` serving the PMI-1 wire (issue #27), judged
//! against the same programs under MPICH's own mpiexec: a ring with
//! collectives, name publish/lookup/unpublish, MPI_Comm_spawn; at 2 and 4
//! ranks, over PMI_FD and over PMI_PORT.

use pmix_test_kit::hosts::grid::compile_c;
use pmix_test_kit::process;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// `name`.c built with `mpicc` for the test `test` (each test its own
/// file: tests run in parallel, and a file being written cannot be run).
fn build(mpicc: &Path, name: &str, test: &str) -> PathBuf {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("mpich_{name}_{test}"));
    compile_c(mpicc, name, &out, &[]).unwrap_or_else(|e| panic!("{e}"))
}

/// The program's own result lines (sorted: those ending ": ok" or
/// ": WRONG"; UCX logs diagnostics of its own on stdout when a spawned
/// peer has already gone) under `launcher args… exe`,
/// whether it succeeded, and its stderr with the other stdout lines.
fn run(launcher: &Path, args: &[&str], exe: &Path) -> (bool, Vec<String>, String) {
    let o = process::run_within(
        Command::new(launcher).args(args).arg(exe),
        Duration::from_secs(150),
        "the MPICH job",
    );
    let out = String::from_utf8_lossy(&o.stdout);
    let (mut lines, other): (Vec<String>, Vec<String>) = out
        .lines()
        .map(str::to_string)
        .partition(|l| l.ends_with(": ok") || l.ends_with(": WRONG"));
    lines.sort();
    (
        o.status.success(),
        lines,
        format!("{}{}", other.join("\n"), String::from_utf8_lossy(&o.stderr)),
    )
}

/// interop/c/pmi_kvs.c, our raw-wire PMI client, built with cc as
/// `name` (each test its own file).
fn build_pmi_kvs(name: &str) -> PathBuf {
    let exe = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    compile_c(Path::new("cc"), "pmi_kvs", &exe, &[]).unwrap_or_else(|e| panic!("{e}"))
}

/// MPICH's ranks poll busily: the tests of this file run one at a time,
/// or on 2 cores UCX's endpoint setup can time out under the other
/// tests' jobs (seen once: MPI_Comm_spawn's accept, "Endpoint timeout",
/// while the ring and Slurm tests ran beside it).
fn one_test_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn peers() -> Option<(PathBuf, PathBuf)> {
    let cc = process::require("MPICH 5.0.2 mpicc", pmix_test_kit::hosts::mpich("mpicc"))?;
    let mpiexec = process::require(
        "MPICH 5.0.2 mpiexec",
        pmix_test_kit::hosts::mpich("mpiexec"),
    )?;
    Some((cc, mpiexec))
}

/// `prog` under mpiexec and under pmixw run (auto, explicit pmi1, and
/// PMI_PORT) at 2 and 4 ranks: the same lines, all ending "ok".
fn same_as_mpiexec(prog: &str, want_lines: impl Fn(usize) -> usize) {
    let Some((cc, mpiexec)) = peers() else { return };
    let exe = build(&cc, prog, "local");
    let pmixw = PathBuf::from(env!("CARGO_BIN_EXE_pmixw"));
    for n in ["2", "4"] {
        let (ok, reference, err) = run(&mpiexec, &["-n", n], &exe);
        assert!(ok, "{prog} under mpiexec -n {n}: {reference:?}\n{err}");
        assert_eq!(
            reference.len(),
            want_lines(n.parse().unwrap()),
            "{reference:?}"
        );
        assert!(
            reference.iter().all(|l| l.ends_with(": ok")),
            "{reference:?}"
        );
        for extra in [&[][..], &["--mpi", "pmi1"], &["--pmi-port"]] {
            let mut args = vec!["run", "-n", n, "--timeout", "120"];
            args.extend_from_slice(extra);
            let (ok, ours, err) = run(&pmixw, &args, &exe);
            assert!(ok, "{prog} under pmixw {args:?}: {ours:?}\n{err}");
            assert_eq!(ours, reference, "pmixw {args:?} vs mpiexec -n {n}\n{err}");
        }
    }
}

/// Debian 12's MPICH 4.0.2 (a second column): its ring under its own
/// `mpiexec.mpich` and under pmixw run, 2 and 4 ranks. Its names and
/// spawn programs fail under its own mpiexec (MPI_Close_port crashes,
/// MPI_Comm_spawn answers "Error in spawn call"), so they are no column.
#[test]
fn a_debian_mpich_4_ring_runs_under_pmixw_run_as_under_its_mpiexec() {
    let _serial = one_test_at_a_time();
    let Some(cc) = process::require(
        "Debian's MPICH 4.0.2",
        pmix_test_kit::hosts::mpich4("mpicc"),
    ) else {
        return;
    };
    let mpiexec =
        pmix_test_kit::hosts::mpich4("mpiexec").expect("mpiexec.mpich beside mpicc.mpich");
    let exe = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("mpich4_ring");
    compile_c(&cc, "mpi_ring", &exe, &[]).unwrap_or_else(|e| panic!("{e}"));
    let pmixw = PathBuf::from(env!("CARGO_BIN_EXE_pmixw"));
    for n in ["2", "4"] {
        let (ok, reference, err) = run(&mpiexec, &["-n", n], &exe);
        assert!(
            ok && reference.len() == n.parse::<usize>().unwrap(),
            "{reference:?}\n{err}"
        );
        for extra in [&[][..], &["--pmi-port"]] {
            let mut args = vec!["run", "-n", n, "--timeout", "120"];
            args.extend_from_slice(extra);
            let (ok, ours, err) = run(&pmixw, &args, &exe);
            assert!(ok, "{args:?}: {ours:?}\n{err}");
            assert_eq!(ours, reference, "{args:?}\n{err}");
        }
    }
}

#[test]
fn an_mpich_ring_runs_under_pmixw_run_as_under_mpiexec() {
    let _serial = one_test_at_a_time();
    same_as_mpiexec("mpi_ring", |n| n);
}

#[test]
fn mpich_names_publish_lookup_unpublish_under_pmixw_run() {
    let _serial = one_test_at_a_time();
    same_as_mpiexec("mpich_names", |n| n);
}

#[test]
fn mpich_comm_spawn_under_pmixw_run() {
    let _serial = one_test_at_a_time();
    // n parents and the 2 children they spawn
    same_as_mpiexec("mpich_spawn", |n| n + 2);
}

/// `--mpi auto` serves an MPICH program PMI-1 and an Open MPI one PMIx;
/// told PMIx, the MPICH program aborts as the issue reported.
#[test]
fn auto_picks_the_programs_wire() {
    let _serial = one_test_at_a_time();
    let Some((cc, _)) = peers() else { return };
    let exe = build(&cc, "mpi_ring", "auto");
    let pmixw = PathBuf::from(env!("CARGO_BIN_EXE_pmixw"));
    let (ok, _, err) = run(
        &pmixw,
        &["run", "-n", "2", "--mpi", "pmix", "--timeout", "60"],
        &exe,
    );
    assert!(!ok);
    assert!(err.contains("PMIx"), "{err}");
    let (ok, lines, err) = run(&pmixw, &["run", "-n", "2", "--timeout", "60"], &exe);
    assert!(ok && lines.len() == 2, "{lines:?}\n{err}");
}

/// The failures and errors of an mpi4py suite run, and how many tests ran.
fn suite_result(text: &str) -> (Option<u32>, std::collections::BTreeSet<String>) {
    let ran = text
        .lines()
        .find_map(|l| l.strip_prefix("Ran ")?.split(' ').next()?.parse().ok());
    let bad = text
        .lines()
        .filter(|l| l.starts_with("FAIL:") || l.starts_with("ERROR:"))
        .map(str::to_string)
        .collect();
    (ran, bad)
}

/// mpi4py 4.1.2's own test suite with MPICH, 2 ranks: under pmixw run
/// (PMI-1: a Python program links no MPI, so `--mpi pmi1` says it) no
/// failure or error that MPICH's mpiexec does not also show, and as many
/// tests run.
#[test]
fn mpi4py_suite_with_mpich_under_pmixw_run_as_under_mpiexec() {
    let _serial = one_test_at_a_time();
    let Some((_, mpiexec)) = peers() else { return };
    let Some((py, suite)) =
        process::require("mpi4py with MPICH", pmix_test_kit::hosts::mpi4py_mpich())
    else {
        return;
    };
    // each rank writes its own file: two ranks on one pipe interleave
    // their lines, and a FAIL line cut in two is lost from the comparison
    let go = |launcher: &Path, args: &[&str], name: &str| -> Vec<String> {
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("mpich-mpi4py-{name}"));
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir_all(&out).unwrap();
        let o = process::run_within(
            Command::new(launcher)
                .args(args)
                .args(["sh", "-c", r#"exec "$@" > "$OUT/rank$PMI_RANK" 2>&1"#, "sh"])
                .arg(&py)
                .arg(&suite)
                .arg("-q")
                .env("OUT", &out)
                .current_dir(suite.parent().unwrap()),
            Duration::from_secs(1200),
            "mpi4py's suite",
        );
        (0..2)
            .map(|r| {
                std::fs::read_to_string(out.join(format!("rank{r}"))).unwrap_or_else(|e| {
                    panic!(
                        "{name}: rank {r} wrote no output ({e}); launcher said:\n{}{}",
                        String::from_utf8_lossy(&o.stdout),
                        String::from_utf8_lossy(&o.stderr)
                    )
                })
            })
            .collect()
    };
    let reference = go(&mpiexec, &["-n", "2"], "mpiexec");
    let pmixw = PathBuf::from(env!("CARGO_BIN_EXE_pmixw"));
    let ours = go(
        &pmixw,
        &["run", "-n", "2", "--mpi", "pmi1", "--timeout", "1100"],
        "pmixw",
    );
    for r in 0..2 {
        let (ran_ref, bad_ref) = suite_result(&reference[r]);
        let (ran, bad) = suite_result(&ours[r]);
        assert!(
            ran_ref.is_some(),
            "rank {r}: mpiexec's run did not finish:\n{}",
            reference[r]
        );
        assert_eq!(
            ran, ran_ref,
            "rank {r}: tests run, ours vs mpiexec's:\n{}",
            ours[r]
        );
        let extra: Vec<_> = bad.difference(&bad_ref).collect();
        assert!(
            extra.is_empty(),
            "rank {r}: failing only under pmixw run: {extra:#?}\n{}",
            ours[r]
        );
    }
}

/// A put/get/fence program speaking the PMI wire itself (PMI-1 lines and
/// PMI-2 messages; MPICH's library exports no PMI API to call) under
/// pmixw run and under MPICH's mpiexec: the same lines, all "ok".
#[test]
fn a_put_get_fence_program_in_both_wires_as_under_mpiexec() {
    let _serial = one_test_at_a_time();
    let Some((_, mpiexec)) = peers() else { return };
    let exe = build_pmi_kvs("pmi_kvs");
    let pmixw = PathBuf::from(env!("CARGO_BIN_EXE_pmixw"));
    for v in ["1", "2"] {
        let wire = format!("pmi{v}");
        for n in ["2", "4"] {
            let with = |l: &Path, args: &[&str]| {
                let o = process::run_within(
                    Command::new(l).args(args).arg(&exe).arg(v),
                    Duration::from_secs(60),
                    "pmi_kvs",
                );
                let mut l: Vec<String> = String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .map(str::to_string)
                    .collect();
                l.sort();
                (o.status.success(), l)
            };
            let (ok, reference) = with(&mpiexec, &["-n", n]);
            assert!(
                ok && reference.len() == n.parse::<usize>().unwrap(),
                "{reference:?}"
            );
            // the program reads PMI_FD only (PMI_PORT: the MPICH tests above)
            let args = ["run", "-n", n, "--mpi", &wire, "--timeout", "50"];
            let (ok, ours) = with(&pmixw, &args);
            assert!(ok, "{args:?}: {ours:?}");
            assert_eq!(ours, reference, "{args:?}");
        }
    }
}

/// Across two Slurm nodes (the private cluster of src/slurm): `srun
/// --mpi=pmi2 -N 2 --ntasks-per-node=1 pmixw run -n 4` serves MPICH's
/// ranks PMI-1 on each node, and each barrier rides on Slurm's PMI-2
/// fence with the node's puts, and names go to srun's name service: the
/// ring, names, spawn and the put/get/fence program in both wires, block
/// and cyclic.
#[test]
fn mpich_programs_across_two_slurm_nodes() {
    let _serial = one_test_at_a_time();
    let Some((cc, _)) = peers() else { return };
    let Some(c) = pmix_test_kit::slurm::for_test(2) else {
        return;
    };
    let ring = build(&cc, "mpi_ring", "slurm");
    let kvs = build_pmi_kvs("pmi_kvs_slurm");
    let go = |args: &[&str]| {
        let o = process::run_within(
            c.srun()
                .args(["--mpi=pmi2", "-N", "2", "--ntasks-per-node=1"])
                .arg(env!("CARGO_BIN_EXE_pmixw"))
                .args(["run", "-n", "4", "--timeout", "90"])
                .args(args)
                .env("PMIXW_PMI2_TIMEOUT", "60"),
            Duration::from_secs(120),
            "srun pmixw run",
        );
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(o.status.success(), "{args:?}\n{out}\n{err}\n{}", c.logs());
        out
    };
    for cyclic in [false, true] {
        let mut base: Vec<&str> = Vec::new();
        if cyclic {
            base.push("--cyclic");
        }
        let ring = ring.to_str().unwrap();
        let out = go(&[base.as_slice(), &[ring]].concat());
        pmix_test_kit::interop::assert_mpi_ring(&out, 4, "");
        // names through srun's name service: published on one node,
        // looked up on both, unpublished
        let names = build(&cc, "mpich_names", "slurm");
        let out = go(&[base.as_slice(), &[names.to_str().unwrap()]].concat());
        for r in 0..4 {
            let want = format!("names rank {r}: ok");
            assert!(out.lines().any(|l| l == want), "no {want:?} in\n{out}");
        }
        // MPI_Comm_spawn from a job across nodes: the children start on
        // the spawning rank's node
        let spawn = build(&cc, "mpich_spawn", "slurm");
        let out = go(&[base.as_slice(), &[spawn.to_str().unwrap()]].concat());
        let ok = out.lines().filter(|l| l.ends_with(": ok")).count();
        assert_eq!(ok, 6, "4 parents and 2 children:\n{out}");
        for v in ["1", "2"] {
            let wire = format!("pmi{v}");
            let args = [base.as_slice(), &["--mpi", &wire, kvs.to_str().unwrap(), v]].concat();
            let out = go(&args);
            for r in 0..4 {
                let want = format!("pmi{v} rank {r} of 4: kvs ok");
                assert!(out.lines().any(|l| l == want), "no {want:?} in\n{out}");
            }
        }
    }
}

/// One job, two wires, one store (issue #27): `pmixw run -n 2 pmix_kvs :
/// -n 2 --mpi pmiV pmi_kvs V` serves ranks 0-1 PMIx (libpmix 4.2.2) and
/// ranks 2-3 PMI (our raw-wire client, PMI-1 and PMI-2), in both orders.
/// Every rank puts its key, enters the one collective (PMIx_Fence on one
/// side, barrier_in or kvs-fence on the other) and reads every rank's key,
/// those of the other wire included; and a PMI rank that ends before the
/// barrier fails the PMIx ranks' fence (LOST_CONNECTION), not hangs it.
#[test]
fn a_job_mixing_libpmix_and_pmi_clients_shares_one_store() {
    let _serial = one_test_at_a_time();
    if process::require("libpmix 4.2.2 and cc", pmix_test_kit::hosts::libpmix4_dev()).is_none() {
        return;
    }
    let dir = pmix_test_kit::interop::default_out_dir();
    let pmix = pmix_test_kit::interop::build_c("pmix_kvs", &dir).unwrap_or_else(|e| panic!("{e}"));
    let pmi = build_pmi_kvs("pmi_kvs_mixed");
    let pmixw = PathBuf::from(env!("CARGO_BIN_EXE_pmixw"));
    let run_mixed = |args: Vec<String>| {
        let o = process::run_within(
            Command::new(&pmixw).args(&args),
            Duration::from_secs(60),
            "the mixed job",
        );
        let mut l: Vec<String> = String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(str::to_string)
            .collect();
        l.sort();
        (
            o.status.code(),
            l,
            String::from_utf8_lossy(&o.stderr).to_string(),
        )
    };
    let (pmix, pmi) = (pmix.display().to_string(), pmi.display().to_string());
    for v in ["1", "2"] {
        let wire = format!("pmi{v}");
        let pmix_app = |n: &str| {
            vec![
                "-n".into(),
                n.into(),
                "--mpi".into(),
                "pmix".into(),
                pmix.clone(),
            ]
        };
        let pmi_app = |n: &str| {
            vec![
                "-n".into(),
                n.into(),
                "--mpi".into(),
                wire.clone(),
                pmi.clone(),
                v.into(),
            ]
        };
        let head: Vec<String> = ["run", "--timeout", "50"].map(String::from).to_vec();
        let colon = vec![":".to_string()];
        // PMIx ranks first, then PMI ranks; then the other way round
        let a = [head.clone(), pmix_app("2"), colon.clone(), pmi_app("2")].concat();
        let (code, lines, err) = run_mixed(a.clone());
        assert_eq!(code, Some(0), "{a:?}: {lines:?} {err}");
        let want: Vec<String> = [
            format!("pmi{v} rank 2 of 4: kvs ok"),
            format!("pmi{v} rank 3 of 4: kvs ok"),
            "pmix rank 0 of 4: kvs ok".into(),
            "pmix rank 1 of 4: kvs ok".into(),
        ]
        .into();
        assert_eq!(lines, want, "{a:?}: {err}");
        let b = [head.clone(), pmi_app("1"), colon.clone(), pmix_app("2")].concat();
        let (code, lines, err) = run_mixed(b.clone());
        assert_eq!(code, Some(0), "{b:?}: {lines:?} {err}");
        let want: Vec<String> = [
            format!("pmi{v} rank 0 of 3: kvs ok"),
            "pmix rank 1 of 3: kvs ok".into(),
            "pmix rank 2 of 3: kvs ok".into(),
        ]
        .into();
        assert_eq!(lines, want, "{b:?}: {err}");
    }
    // a PMI rank gone before the barrier: the PMIx ranks' fence fails
    let c: Vec<String> = [
        "run",
        "--timeout",
        "50",
        "-n",
        "2",
        &pmix,
        ":",
        "-n",
        "1",
        "--mpi",
        "pmi1",
        "sh",
        "-c",
        "exit 3",
    ]
    .map(String::from)
    .to_vec();
    let (code, lines, err) = run_mixed(c.clone());
    assert_eq!(code, Some(3), "{c:?}: {lines:?} {err}");
    assert_eq!(
        err.matches("fence: LOST_CONNECTION").count(),
        2,
        "{c:?}: {lines:?} {err}"
    );
}

/// What every rank of the Python job below prints.
const PY_PROG: &str = "from mpi4py import MPI; c = MPI.COMM_WORLD; \
    print(f'{c.Get_rank()} of {c.Get_size()} sum {c.allreduce(1)} on {MPI.Get_library_version().split()[0]}: ok')";

/// `pmixw run -n 2 ARGS…` with `env`, within its time: (ok, the ": ok"
/// lines sorted, stderr).
fn run_py(args: &[&str], env: &[(&str, &str)]) -> (bool, Vec<String>, String) {
    let o = process::run_within(
        Command::new(env!("CARGO_BIN_EXE_pmixw"))
            .args(["run", "-n", "2", "--timeout", "90"])
            .args(args)
            .envs(env.iter().copied()),
        Duration::from_secs(150),
        "the MPICH Python job",
    );
    // the two ranks share the launcher's stdout: a line of one may land
    // inside the other's, so each result is cut out at its ": ok"
    let out = String::from_utf8_lossy(&o.stdout).replace('\n', "");
    let mut lines: Vec<String> = out
        .split_inclusive(": ok")
        .filter(|l| l.ends_with(": ok"))
        .map(|l| l[l.find(" of 2 ").map_or(0, |i| i.saturating_sub(1))..].to_string())
        .collect();
    lines.sort();
    (
        o.status.success(),
        lines,
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Issue 36 item 5: an MPICH program run by Python (PyPI's `mpich` and its
/// mpi4py) needs no `--mpi`: auto asks the interpreter which `mpi4py.MPI`
/// it would load, directly and through a `#!/usr/bin/env python` script;
/// `PMIXW_MPI` says it once where auto cannot see (a shell wrapper), and a
/// wrong one is refused by name. (Open MPI's Python programs still get
/// PMIx under auto: pmixw/tests/live_mpi4py.rs runs their suites so.)
#[test]
fn mpich_programs_run_by_python_need_no_option() {
    let _serial = one_test_at_a_time();
    let Some((py, _)) = process::require("mpi4py with MPICH", pmix_test_kit::hosts::mpi4py_mpich())
    else {
        return;
    };
    let py = py.to_str().unwrap();
    let want = ["0 of 2 sum 2 on MPICH: ok", "1 of 2 sum 2 on MPICH: ok"];
    let (ok, lines, err) = run_py(&[py, "-c", PY_PROG], &[]);
    assert!(ok && lines == want, "{lines:?}\n{err}");
    // a script whose interpreter is found on PATH
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("mpich-py-script");
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("job.py");
    std::fs::write(&script, format!("#!/usr/bin/env python\n{PY_PROG}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let bin = Path::new(py).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let (ok, lines, err) = run_py(&[script.to_str().unwrap()], &[("PATH", &path)]);
    assert!(ok && lines == want, "{lines:?}\n{err}");
    // a shell wrapper hides the interpreter: told PMIx, MPICH aborts;
    // PMIXW_MPI=pmi1 says it for every run
    let wrapped = ["sh", "-c", r#"exec "$0" -c "$1""#, py, PY_PROG];
    let (ok, _, _) = run_py(&wrapped, &[]);
    assert!(!ok, "MPICH told PMIx under a wrapper");
    let (ok, lines, err) = run_py(&wrapped, &[("PMIXW_MPI", "pmi1")]);
    assert!(ok && lines == want, "{lines:?}\n{err}");
    let (ok, _, err) = run_py(&wrapped, &[("PMIXW_MPI", "pmi9")]);
    assert!(
        !ok && err.contains("PMIXW_MPI=pmi9: one of pmix pmi1 pmi2 auto"),
        "{err}"
    );
}
