//! mpi4py 4.1.2's own test suite, 2 ranks, under `pmixw run` and under
//! the reference launcher of the same MPI (issue #24 item 6): Open MPI
//! 5.0.11 (PyPI wheel, PRRTE's `prterun`) and Open MPI 4.1.4 (Debian's
//! `mpirun`). Every test that fails or errors under `pmixw run` must fail
//! the same way under the reference, and `pmixw run` may skip no more
//! tests than it. `.ci/setup` installs mpi4py into `$PMIXW_VENV` (Open MPI
//! 5) and into `$PMIXW_MPI4PY_OMPI4_VENV` (built with Debian's mpicc; by
//! default `target/mpi4py-ompi4`), and unpacks the sdist's `test/` under
//! `$PMIXW_MPI4PY_SRC` (by default `target/mpi4py-4.1.2`). Outside CI a missing piece is skipped
//! with a note; in CI it fails.
//!
//! `test_spawn` is left out: Open MPI 4.1.4's mpirun hangs in it; under
//! prterun its 44 tests pass on libpmix 5.0.11 (2026-12-02, by hand; an
//! earlier note had all 40 of its spawning tests fail there, as they do
//! when prterun dies: see the Open MPI 5 subset below) but take 160 s,
//! as under `pmixw run` with Open MPI 5 (160 of the whole suite's 270
//! seconds, passing); spawning is tested where it is served (issue #24's
//! spawn/connect part). `test_dynproc` stays. Three of test_spawn's
//! tests run in the Open MPI 5 subset on our library under the wheel's
//! `mpirun` and `prterun` (below).
//!
//! With pmix-wire's libpmix.so.2 (issue #34; pmix-capi's cdylib, which
//! `cargo test --workspace` builds beside pmixw) put in place for the
//! ranks only (`env LD_LIBRARY_PATH=…` before each rank, never for the
//! launcher): the same suite with Open MPI 4.1.4 under `pmixw run`, and its
//! comm, session and dynproc tests under `mpirun` 4.1.4 and `prterun`
//! 5.0.11, each judged against the same run on libpmix; and the suite with
//! Open MPI 5.0.11 under `pmixw run`, and its comm, session and dynproc
//! tests under the wheel's `mpirun` and `prterun` 5.0.11, judged against
//! the same runs on the wheel's libpmix 5.0.11. And the other way round (issue #35): the
//! whole suite (but test_spawn) under `srun --mpi=pmix` with the ranks on
//! libpmix and slurmstepd serving them with our library, judged against
//! slurmstepd on its own libpmix.

use pmix_test_kit::process;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const VERSION: &str = "4.1.2";

/// The unpacked sdist (holding `test/main.py`).
fn suite() -> Result<PathBuf, String> {
    let dir = pmix_test_kit::hosts::mpi4py_src();
    if dir.join("test/main.py").is_file() {
        Ok(dir)
    } else {
        Err(format!(
            "{} has no test/main.py (mpi4py {VERSION}'s sdist: `bash .ci/setup`, or set PMIXW_MPI4PY_SRC)",
            dir.display()
        ))
    }
}

/// A python of `venv` that imports mpi4py at our version.
fn python_with_mpi4py(venv: &Path) -> Result<PathBuf, String> {
    let py = venv.join("bin/python");
    let ok = Command::new(&py)
        .args([
            "-c",
            "import mpi4py, sys; sys.exit(mpi4py.__version__ != sys.argv[1])",
        ])
        .arg(VERSION)
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        Ok(py)
    } else {
        Err(format!(
            "{} cannot import mpi4py {VERSION} (`bash .ci/setup`)",
            py.display()
        ))
    }
}

/// What one rank's unittest run ended with.
#[derive(Debug, Default)]
struct Summary {
    ran: Option<u32>,
    skipped: u32,
    /// "FAIL: test (class)" and "ERROR: test (class)" lines.
    bad: BTreeSet<String>,
}

fn summary(text: &str) -> Summary {
    let mut s = Summary::default();
    for line in text.lines() {
        if let Some(n) = line.strip_prefix("Ran ") {
            s.ran = n.split_whitespace().next().and_then(|n| n.parse().ok());
        }
        if line.starts_with("FAIL: ") || line.starts_with("ERROR: ") {
            s.bad.insert(line.trim().to_string());
        }
        if line.starts_with("OK") || line.starts_with("FAILED") {
            s.skipped = line
                .split("skipped=")
                .nth(1)
                .and_then(|t| t.trim_end_matches(')').split(',').next())
                .and_then(|n| n.trim().parse().ok())
                .unwrap_or(0);
        }
    }
    s
}

/// The suite under `launcher` (its arguments before the program), each
/// rank's output in its own file; the two ranks' summaries.
fn run(tag: &str, launcher: &Path, pre: &[&str], py: &Path, src: &Path) -> Vec<(Summary, String)> {
    run_with(tag, launcher, pre, py, src, &[], &["-e", "test_spawn"])
}

/// [`run`] with `rank_env` (`K=V`, given to each rank by `env`, not to
/// the launcher) and `tests` (main.py's selection) instead of the whole
/// suite but test_spawn.
fn run_with(
    tag: &str,
    launcher: &Path,
    pre: &[&str],
    py: &Path,
    src: &Path,
    rank_env: &[String],
    tests: &[&str],
) -> Vec<(Summary, String)> {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("mpi4py-{tag}"));
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    let c = Command::new(launcher)
        .args(pre)
        .arg("env")
        .args(rank_env)
        .args(["sh", "-c"])
        .arg(r#"r=${PMIX_RANK:-$OMPI_COMM_WORLD_RANK}; exec "$@" > "$OUT/rank$r" 2>&1"#)
        .arg("sh")
        .arg(py)
        .args(["test/main.py", "--no-builddir"])
        .args(tests)
        .current_dir(src)
        .env("OUT", &out)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(out.join("launcher.err")).unwrap())
        .spawn()
        .unwrap();
    let st = process::output_within(c, process::HANG, &format!("mpi4py under {tag}")).status;
    (0..2)
        .map(|r| {
            let text = std::fs::read_to_string(out.join(format!("rank{r}")))
                .unwrap_or_else(|e| panic!("{tag}: rank {r} wrote nothing ({e}); exit {st:?}"));
            (summary(&text), text)
        })
        .collect()
}

/// Ours against the reference, rank by rank.
fn compare(mpi: &str, ours: &[(Summary, String)], reference: &[(Summary, String)]) {
    for (r, ((o, text), (f, _))) in ours.iter().zip(reference).enumerate() {
        assert!(
            o.ran.is_some(),
            "{mpi} rank {r}: no unittest summary under pmixw:\n{text}"
        );
        let extra: Vec<&String> = o.bad.difference(&f.bad).collect();
        assert!(
            extra.is_empty(),
            "{mpi} rank {r}: failing under pmixw run only: {extra:#?}\n{text}"
        );
        assert!(
            o.skipped <= f.skipped,
            "{mpi} rank {r}: {} skipped under pmixw run, {} under the reference",
            o.skipped,
            f.skipped
        );
        eprintln!(
            "{mpi} rank {r}: pmixw ran {:?} ({} bad, {} skipped); reference ran {:?} ({} bad, {} skipped)",
            o.ran,
            o.bad.len(),
            o.skipped,
            f.ran,
            f.bad.len(),
            f.skipped
        );
    }
}

const PMIXW_ARGS: &[&str] = &["run", "-n", "2", "--timeout", "500"];

/// The suite with `venv`'s mpi4py under the reference launcher (`tag`,
/// found by `find`, given `pre`) and under `pmixw run`, compared.
fn against_reference(
    mpi: &str,
    venv: &Path,
    tag: &str,
    find: Result<PathBuf, String>,
    pre: &[&str],
) {
    let Some(src) = process::require("mpi4py's test suite", suite()) else {
        return;
    };
    let what = format!("mpi4py for {mpi}");
    let Some(py) = process::require(&what, python_with_mpi4py(venv)) else {
        return;
    };
    let Some(launcher) = process::require(tag, find) else {
        return;
    };
    let reference = run(tag, &launcher, pre, &py, &src);
    let pmixw = PathBuf::from(env!("CARGO_BIN_EXE_pmixw"));
    let ours = run(&format!("pmixw-{tag}"), &pmixw, PMIXW_ARGS, &py, &src);
    compare(mpi, &ours, &reference);
}

#[test]
fn mpi4py_suite_open_mpi_5() {
    against_reference(
        "Open MPI 5.0.11",
        &pmix_test_kit::hosts::venv_dir(),
        "prterun",
        pmix_test_kit::hosts::prterun5(),
        &[
            "--allow-run-as-root",
            "--map-by",
            ":OVERSUBSCRIBE",
            "-n",
            "2",
        ],
    );
}

#[test]
fn mpi4py_suite_open_mpi_4() {
    against_reference(
        "Open MPI 4.1.4",
        &pmix_test_kit::hosts::mpi4py_ompi4_venv(),
        "mpirun",
        pmix_test_kit::hosts::mpirun4(),
        &["--oversubscribe", "-n", "2"],
    );
}

/// The suite with Open MPI 4.1.4 under `pmixw run -n 2`, once on libpmix
/// and once on pmix-wire's libpmix.so.2 (pmix-capi's cdylib, built beside
/// pmixw by `cargo test --workspace`; LD_LIBRARY_PATH for this job only):
/// on ours no test fails or errors that does not on libpmix, and no more
/// are skipped; every rank's PMIx_Init is in our trace. (About 20 s a
/// run here.)
#[test]
fn mpi4py_suite_open_mpi_4_on_our_libpmix() {
    suite_on_ours(
        "Open MPI 4.1.4",
        &pmix_test_kit::hosts::mpi4py_ompi4_venv(),
        "",
        &[],
        &["-e", "test_spawn"],
        &["pmix-capi: PMIx_Init"],
    );
}

/// Five of test_spawn's tests with Open MPI 4.1.4 under `pmixw run -n 2`,
/// on libpmix and on ours, as [`mpi4py_suite_open_mpi_4_on_our_libpmix`]
/// judges the suite: the three of TestSpawnMultipleSelf, testArgsBad
/// first, made ours abort in the third while it handed the spawned job's
/// end, a non-default event, to Open MPI's default handler (2026-12-03,
/// spec-notes/capi.md); the whole of test_spawn, 44 tests, passes on both
/// by hand (about 40 s a run), too long for every CI run.
#[test]
fn mpi4py_spawn_tests_open_mpi_4_on_our_libpmix() {
    suite_on_ours(
        "Open MPI 4.1.4 (test_spawn)",
        &pmix_test_kit::hosts::mpi4py_ompi4_venv(),
        "4spawn",
        &[],
        &OMPI4_SPAWN_TESTS,
        &["pmix-capi: PMIx_Init"],
    );
}

/// The test_spawn tests run with Open MPI 4.1.4 under `pmixw run`.
const OMPI4_SPAWN_TESTS: [&str; 5] = [
    "test_spawn.TestSpawnMultipleSelf.testArgsBad",
    "test_spawn.TestSpawnMultipleSelf.testArgsOnlyAtRoot",
    "test_spawn.TestSpawnMultipleSelf.testCommSpawn",
    "test_spawn.TestSpawnSingleSelf.testCommSpawn",
    "test_spawn.TestSpawnSingleWorld.testCommSpawn",
];

/// The suite with Open MPI 5.0.11 (the PyPI wheel, which loads ours since
/// we export libpmix 5's helpers and `pmix_framework_names`) under `pmixw
/// run -n 2`, once on the wheel's libpmix 5.0.11 and once on ours, with
/// Open MPI's default transports (shared memory): on ours no test fails or
/// errors that does not on libpmix, and no more are skipped (but for
/// test_spawn, left out of both runs); every rank called our PMIx_Init, a
/// libpmix 5 helper (PMIx_Load_nspace, which Open MPI 4.1.4 never calls:
/// the wheel's libmpi, not another, ran) and PMIx_Group_construct
/// (TestIntercommCreateFromGroups: MPI_Intercomm_create_from_groups).
#[test]
fn mpi4py_suite_open_mpi_5_on_our_libpmix() {
    suite_on_ours(
        "Open MPI 5.0.11",
        &pmix_test_kit::hosts::venv_dir(),
        "5",
        &[],
        &["-e", "test_spawn"],
        &[
            "pmix-capi: PMIx_Init",
            "pmix-capi: PMIx_Load_nspace",
            "pmix-capi: PMIx_Group_construct",
        ],
    );
}

/// mpi4py's suite (`tests`) with the mpi4py in `venv` (`mpi` names it)
/// under `pmixw run -n 2`, each rank given `rank_env`, once on libpmix and
/// once on our library (made under the tmpdir, `tag` telling the runs
/// apart): on ours no test fails or errors that does not on libpmix, and no
/// more are skipped; every rank's trace on ours has each of `calls`, and no
/// rank on libpmix called ours. Skipped when a piece is missing.
fn suite_on_ours(
    mpi: &str,
    venv: &Path,
    tag: &str,
    rank_env: &[String],
    tests: &[&str],
    calls: &[&str],
) {
    use pmix_test_kit::hosts::grid;
    let Some(src) = process::require("mpi4py's test suite", suite()) else {
        return;
    };
    let Some(py) = process::require(&format!("mpi4py for {mpi}"), python_with_mpi4py(venv)) else {
        return;
    };
    let pmixw = PathBuf::from(env!("CARGO_BIN_EXE_pmixw"));
    let scratch = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("mpi4py-capi{tag}"));
    let ctx = grid::Ctx::new(pmixw.clone(), scratch);
    let Some(lib) = process::require("pmix-wire's libpmix", grid::our_libpmix(&ctx)) else {
        return;
    };
    let (t_theirs, t_ours) = (format!("pmixw-libpmix{tag}"), format!("pmixw-ours{tag}"));
    let theirs = run_with(&t_theirs, &pmixw, PMIXW_ARGS, &py, &src, rank_env, tests);
    let mut env = ours_env(&lib);
    env.extend(rank_env.iter().cloned());
    let ours = run_with(&t_ours, &pmixw, PMIXW_ARGS, &py, &src, &env, tests);
    compare(&format!("{mpi} on our libpmix"), &ours, &theirs);
    for (r, (_, text)) in ours.iter().enumerate() {
        for call in calls {
            assert!(
                text.lines().any(|l| l == *call),
                "rank {r} did not call {call:?} in our library:\n{text}"
            );
        }
    }
    for (r, (_, text)) in theirs.iter().enumerate() {
        assert!(
            !text.contains("pmix-capi: "),
            "rank {r} on libpmix called ours"
        );
    }
}

/// What puts our library (in `lib`) in place for a rank, and traces it.
fn ours_env(lib: &Path) -> Vec<String> {
    vec![
        format!("LD_LIBRARY_PATH={}", lib.display()),
        "PMIX_CAPI_TRACE=1".into(),
    ]
}

/// mpi4py's sdist, the python with mpi4py for Open MPI 4.1.4 and our
/// libpmix's directory (copied into `scratch`), or None (skipped).
fn ompi4_and_our_libpmix(scratch: &str) -> Option<(PathBuf, PathBuf, PathBuf)> {
    use pmix_test_kit::hosts::{self, grid};
    let src = process::require("mpi4py's test suite", suite())?;
    let venv = hosts::mpi4py_ompi4_venv();
    let py = process::require("mpi4py for Open MPI 4.1.4", python_with_mpi4py(&venv))?;
    let scratch = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(scratch);
    let ctx = grid::Ctx::new(env!("CARGO_BIN_EXE_pmixw").into(), scratch);
    let lib = process::require("pmix-wire's libpmix", grid::our_libpmix(&ctx))?;
    Some((src, py, lib))
}

/// mpi4py's comm, session and dynproc tests with Open MPI 4.1.4 under
/// the reference launchers, Open MPI 4.1.4's `mpirun -n 2` and PRRTE
/// 5.0.11's `prterun -n 2` (the ranks told `FLUX_JOB_ID`, as under
/// `pmixw run`: Open MPI 4.1.4 direct-launches only under a launcher it
/// recognises), each rank on libpmix and then on our libpmix.so.2 (the
/// launcher on its own): the same failures, errors and skips or fewer,
/// every rank's PMIx_Init in our trace. (test_spawn: see the top.)
#[test]
fn mpi4py_comm_session_dynproc_on_our_libpmix_under_mpirun_and_prterun() {
    use pmix_test_kit::hosts;
    subset_on_ours_under(
        "Open MPI 4.1.4",
        &hosts::mpi4py_ompi4_venv(),
        &[
            (
                "mpirun4",
                hosts::mpirun4(),
                &["--oversubscribe", "-n", "2", "-x", "OUT"][..],
                None,
            ),
            (
                "prterun5",
                hosts::prterun5(),
                PRTE_ARGS,
                Some("FLUX_JOB_ID=prterun"),
            ),
        ],
        &[],
        &[],
    );
}

/// The same tests with Open MPI 5.0.11 (the PyPI wheel and its mpi4py)
/// under the wheel's own launchers, `mpirun -n 2` and `prterun -n 2`
/// (PRRTE 5.0.11, which Open MPI 5 recognises: no hint), each rank on the
/// wheel's libpmix 5.0.11 and then on ours (the launcher keeps its own):
/// the same failures, errors and skips or fewer, every rank's PMIx_Init
/// and a libpmix 5 helper (PMIx_Load_nspace) in our trace (2026-12-02:
/// 114 tests a rank, 0 failures, 12 skipped on both, a few seconds a run).
/// With them three of test_spawn's (MPI_Comm_spawn from COMM_SELF and
/// from COMM_WORLD, MPI_Comm_spawn_multiple; about 4 s a run): the
/// children are libpmix 5.0.11's (the spawn does not pass
/// LD_LIBRARY_PATH on), and a hash-store parent, which ours is, connecting
/// to shmem2 children kills prterun 5.0.11 (SIGSEGV in libpmix 5.0.11's
/// `pmix_gds_shmem2_fetch`, spec-notes/divergences.md) unless the
/// children take hash too, which our PMIx_Spawn tells them
/// (`PMIX_MCA_gds=hash`; PMIx_Spawn in our trace). All 44 of test_spawn
/// pass on ours under prterun and under mpirun (2026-12-03, by hand,
/// about 70 s a run).
#[test]
fn mpi4py_comm_session_dynproc_open_mpi_5_on_our_libpmix_under_mpirun_and_prterun() {
    use pmix_test_kit::hosts;
    subset_on_ours_under(
        "Open MPI 5.0.11",
        &hosts::venv_dir(),
        &[
            ("mpirun5", hosts::mpirun5(), PRTE_ARGS, None),
            ("prterun5", hosts::prterun5(), PRTE_ARGS, None),
        ],
        &SPAWN_TESTS,
        &["pmix-capi: PMIx_Load_nspace", "pmix-capi: PMIx_Spawn"],
    );
}

/// The test_spawn tests the Open MPI 5 subset runs under PRRTE's launchers.
const SPAWN_TESTS: [&str; 3] = [
    "test_spawn.TestSpawnSingleSelf.testCommSpawn",
    "test_spawn.TestSpawnSingleWorld.testCommSpawn",
    "test_spawn.TestSpawnMultipleWorld.testCommSpawn",
];

/// The arguments of PRRTE 5.0.11's launchers (`prterun`, and the wheel's
/// `mpirun` over it) before the program: 2 ranks as root, `OUT` passed on.
const PRTE_ARGS: &[&str] = &[
    "--allow-run-as-root",
    "--map-by",
    ":OVERSUBSCRIBE",
    "-n",
    "2",
    "-x",
    "OUT",
];

/// A reference launcher: its tag, where it is, its arguments before the
/// program, and a `K=V` the ranks are given on both libraries.
type Launcher<'a> = (
    &'a str,
    Result<PathBuf, String>,
    &'a [&'a str],
    Option<&'a str>,
);

/// mpi4py's test_comm, test_session and test_dynproc (and `more` of its
/// tests) with the mpi4py in `venv` (`mpi` names it) under each of
/// `launchers`, each rank on libpmix and then on ours: compared, and every
/// rank on ours traced through PMIx_Init and each of `calls`. Skipped when
/// a piece is missing.
fn subset_on_ours_under(
    mpi: &str,
    venv: &Path,
    launchers: &[Launcher],
    more: &[&str],
    calls: &[&str],
) {
    use pmix_test_kit::hosts::grid;
    let Some(src) = process::require("mpi4py's test suite", suite()) else {
        return;
    };
    let Some(py) = process::require(&format!("mpi4py for {mpi}"), python_with_mpi4py(venv)) else {
        return;
    };
    let tag = mpi.replace([' ', '.'], "");
    let scratch =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("mpi4py-capi-hosts-{tag}"));
    let ctx = grid::Ctx::new(env!("CARGO_BIN_EXE_pmixw").into(), scratch);
    let Some(lib) = process::require("pmix-wire's libpmix", grid::our_libpmix(&ctx)) else {
        return;
    };
    let mut tests = vec!["test_comm", "test_session", "test_dynproc"];
    tests.extend_from_slice(more);
    for (name, found, pre, hint) in launchers {
        let Some(launcher) = process::require(name, found.clone()) else {
            return;
        };
        let base: Vec<String> = hint.iter().map(|h| h.to_string()).collect();
        let run_tag = format!("{tag}-{name}");
        let theirs = run_with(
            &format!("{run_tag}-libpmix"),
            &launcher,
            pre,
            &py,
            &src,
            &base,
            &tests,
        );
        let mut env = base.clone();
        env.extend(ours_env(&lib));
        let ours = run_with(
            &format!("{run_tag}-ours"),
            &launcher,
            pre,
            &py,
            &src,
            &env,
            &tests,
        );
        compare(
            &format!("{mpi} under {name} on our libpmix"),
            &ours,
            &theirs,
        );
        for (r, (s, text)) in ours.iter().enumerate() {
            assert!(s.ran.is_some_and(|n| n > 0), "{name} rank {r}:\n{text}");
            for call in std::iter::once(&"pmix-capi: PMIx_Init").chain(calls) {
                assert!(
                    text.lines().any(|l| l == *call),
                    "{mpi} under {name}, rank {r} did not call {call:?} in our library:\n{text}"
                );
            }
        }
        for (r, (_, text)) in theirs.iter().enumerate() {
            assert!(
                !text.contains("pmix-capi: "),
                "{mpi} under {name}, rank {r} on libpmix called ours"
            );
        }
    }
}

/// mpi4py's whole suite (but test_spawn) with Open MPI 4.1.4 under
/// `srun --mpi=pmix -N 1 -n 2` of a private Slurm cluster, the ranks on
/// libpmix 4.2.2 both times: served by slurmstepd's own libpmix, then by
/// ours (a cluster whose slurmstepd opens our library, issue 35). The
/// same failures, errors and skips or fewer; srun's stderr shows our
/// PMIx_server_setup_fork for both ranks (traced in the forked child).
/// 2026-12-02, load 11-15 on 2 cores: 2083 tests a rank, 473 skipped on
/// both; on libpmix's slurmstepd test_dynproc's testAcceptConnect,
/// testConnectAccept, testJoin and testNamePublishing error (Slurm's host
/// has no publish/lookup), on ours none. The suite on libpmix's and on
/// our slurmstepd: 156 s and 141 s (the test 304 s with both clusters'
/// start and stop), 178 s and 154 s (340 s), and 78 s and 137 s (221 s,
/// builds beside the second half); `pmixw run -n 2` took 120 s for the
/// same suite at that load, about 20 s unloaded. test_spawn is left out as under mpirun
/// 4.1.4 and for the same reason: on libpmix's slurmstepd it hangs (the
/// 600 s guard met, 2026-12-02).
#[test]
fn mpi4py_suite_under_slurmstepd_on_our_libpmix() {
    use pmix_test_kit::slurm;
    let Some((src, py, lib)) = ompi4_and_our_libpmix("mpi4py-capi-srun") else {
        return;
    };
    let Some(theirs_cluster) = slurm::for_test(1) else {
        return;
    };
    let ours_cluster = slurm::Cluster::start_serving(1, &lib.join("libpmix.so.2"))
        .unwrap_or_else(|e| panic!("the cluster serving with our libpmix: {e}"));
    let tests = ["-e", "test_spawn"];
    let env_bin = slurm::which("env").expect("env");
    let srun = slurm::which("srun").expect("srun");
    let mut runs = Vec::new();
    for (tag, c) in [
        ("srun-libpmix", &theirs_cluster),
        ("srun-ours", &ours_cluster),
    ] {
        let conf = format!("SLURM_CONF={}", c.conf().display());
        let srun = srun.to_string_lossy();
        let pre = [conf.as_str(), &srun, "--mpi=pmix", "-N", "1", "-n", "2"];
        runs.push(run_with(tag, &env_bin, &pre, &py, &src, &[], &tests));
    }
    let err = |tag: &str| {
        let p =
            PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("mpi4py-{tag}/launcher.err"));
        std::fs::read_to_string(p).unwrap_or_default()
    };
    let forks = |tag: &str| {
        err(tag)
            .lines()
            .filter(|l| *l == "pmix-capi: PMIx_server_setup_fork")
            .count()
    };
    theirs_cluster.stop();
    ours_cluster.stop();
    compare(
        "Open MPI 4.1.4 under srun, slurmstepd on our libpmix",
        &runs[1],
        &runs[0],
    );
    for (r, (s, text)) in runs[1].iter().enumerate() {
        assert!(s.ran.is_some_and(|n| n > 0), "srun rank {r}:\n{text}");
    }
    assert_eq!(forks("srun-libpmix"), 0, "{}", err("srun-libpmix"));
    assert_eq!(
        forks("srun-ours"),
        2,
        "slurmstepd did not serve on ours:\n{}",
        err("srun-ours")
    );
}

#[test]
fn unittest_summaries_are_read_per_rank() {
    let s = summary(
        "x\nERROR: testA (m.C.testA)\nFAIL: testB (m.C.testB)\n---\nRan 12 tests in 1.0s\n\nFAILED (failures=1, errors=1, skipped=3)\n",
    );
    assert_eq!(s.ran, Some(12));
    assert_eq!(s.skipped, 3);
    assert_eq!(s.bad.len(), 2);
    let s = summary("Ran 5 tests in 0.1s\n\nOK (skipped=2)\n");
    assert_eq!((s.ran, s.skipped, s.bad.len()), (Some(5), 2, 0));
    let s = summary("Ran 5 tests in 0.1s\n\nOK\n");
    assert_eq!((s.ran, s.skipped), (Some(5), 0));
}
