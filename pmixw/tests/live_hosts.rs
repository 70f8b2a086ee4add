//! The live cross-version matrix (issue 13), one test per row of
//! `pmixw interop --hosts` (interop/src/hosts/grid.rs): our client (`pmixw probe
//! --events`) under our server, libpmix 4.2.2's server harness, Open MPI
//! 4.1.4's mpirun, PRRTE 5.0.11's prterun and Open MPI 5.0.11's mpirun,
//! a python3-pmix server and Slurm's `srun --mpi=pmix` on one and two
//! nodes of a private cluster; our server hosting libpmix 4.2.2 and 5.0.11
//! C clients, Open MPI 4.1.4 and 5.0.11 programs and python3-pmix clients,
//! with the dialect each negotiates now that we advertise every URI, and
//! libpmix 4.2.2 clients across two Slurm nodes through PMI-2; and
//! unmodified libpmix and Open MPI 4.1.4 programs on pmix-wire's
//! libpmix.so.2 (for the ranks only) under mpirun, prterun and srun, each
//! judged against the same program on libpmix; mpirun and slurmstepd
//! serving libpmix ranks with our library, and hostile peers beside such
//! a Slurm job.
//! A peer that is not installed is a skip that says so, and a failure
//! under CI (where `.ci/setup` installs it).

use pmix_test_kit::process;

use pmix_test_kit::hosts::grid::{self, Outcome};

/// A context with a scratch directory of its own.
fn ctx(tag: &str) -> grid::Ctx {
    let scratch = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "hosts-{}-{}",
        std::process::id(),
        tag.replace(|c: char| !c.is_ascii_alphanumeric(), "")
    ));
    std::fs::create_dir_all(&scratch).unwrap();
    grid::Ctx::new(env!("CARGO_BIN_EXE_pmixw").into(), scratch)
}

/// Run the row of exactly `peer`; its pass reason (None: absent, skipped).
fn row(peer: &str) -> Option<String> {
    let ctx = ctx(peer);
    let row = grid::ROWS
        .iter()
        .find(|r| r.peer == peer)
        .unwrap_or_else(|| panic!("no row {peer:?}"));
    let outcome = (row.run)(&ctx);
    let _ = std::fs::remove_dir_all(&ctx.scratch);
    match outcome {
        Outcome::Pass(why) => Some(why),
        Outcome::Fail(why) => panic!("{peer}: {why}"),
        Outcome::Absent(why) => process::require::<String>(peer, Err(why)),
    }
}

fn expect(peer: &str, starts: &str) {
    if let Some(why) = row(peer) {
        assert!(why.starts_with(starts), "{peer}: {why}");
    }
}

#[test]
fn our_client_under_pmixw_run_speaks_the_newest_dialect() {
    // we advertise URI61 first, and our client takes it
    expect("pmixw run (our server)", "2 ranks, dialect v61");
}

#[test]
fn our_client_under_the_libpmix_422_server() {
    expect("libpmix 4.2.2 server (cap_server)", "2 ranks, dialect v41");
}

#[test]
fn our_client_under_open_mpi_414_mpirun() {
    expect("Open MPI 4.1.4 mpirun", "2 ranks, dialect v41");
}

#[test]
fn our_client_under_prrte_5011_prterun() {
    expect("PRRTE 5.0.11 prterun", "2 ranks, dialect v41");
}

#[test]
fn our_tool_attaches_to_prrte_5011_prterun() {
    expect(
        "PRRTE 5.0.11 prterun (pmixw query --pid)",
        "namespaces prterun-",
    );
}

#[test]
fn our_tool_attaches_to_open_mpi_5011_mpirun() {
    expect(
        "Open MPI 5.0.11 mpirun (pmixw query --pid)",
        "namespaces prterun-",
    );
}

#[test]
fn our_client_under_open_mpi_5011_mpirun() {
    expect("Open MPI 5.0.11 mpirun", "2 ranks, dialect v41");
}

/// A minimal python3-pmix server registers no appnum and offers no
/// publish/lookup/spawn: the probe skips those with the host's answer and
/// passes; the absent reserved key is NOT_FOUND at once (a GETNB would
/// have been held until PMIX_ERR_TIMEOUT, a failure).
#[test]
fn our_client_under_a_python3_pmix_server() {
    if let Some(why) = row("python3-pmix server") {
        assert!(why.starts_with("2 ranks, dialect v41"), "{why}");
        assert!(why.contains("get pmix.appnum (own)"), "{why}");
        assert!(why.contains("spawn"), "{why}");
    }
}

/// Slurm's own PMIx plugin (libpmix 4.2.2 in slurmstepd) on one node of
/// the private cluster: the probe, `--events` included, passes; its event
/// (custom code, a CUSTOM range naming only our namespace) does not reach
/// the plugin's default handler, which would cancel the step. Slurm
/// registers `pmix.appnum` as PMIX_INT (a warning on every rank) and
/// answers NOT_SUPPORTED to publish/lookup/spawn (skips).
#[test]
fn our_client_under_slurm_pmix_on_one_node() {
    if let Some(why) = row("Slurm srun --mpi=pmix, 1 node") {
        assert!(why.starts_with("2 ranks, dialect v41"), "{why}");
        assert!(why.ends_with("; 2 warnings"), "{why}");
        // the event reached rank 1 (on one node the plugin delivers it)
        assert!(!why.contains("event delivered"), "{why}");
    }
}

/// The same across both nodes of the cluster, 2 ranks on each: the step
/// survives `--events` too; the plugin does not relay the event to the
/// other node nor connect across nodes (skips).
#[test]
fn our_client_under_slurm_pmix_on_two_nodes() {
    if let Some(why) = row("Slurm srun --mpi=pmix, 2 nodes") {
        assert!(why.starts_with("4 ranks, dialect v41"), "{why}");
        assert!(why.ends_with("; 4 warnings"), "{why}");
    }
}

/// Our server on each of two Slurm nodes, bridged through PMI-2, hosting
/// one job of four libpmix 4.2.2 clients.
#[test]
fn libpmix_422_clients_under_our_server_across_slurm_nodes() {
    expect(
        "libpmix 4.2.2 C client, 2 Slurm nodes via PMI-2",
        "4 ranks on 2 nodes, one job",
    );
}

#[test]
fn libpmix_422_clients_under_our_server_pick_v41() {
    expect("libpmix 4.2.2 C client", "2 ranks, dialect v41");
}

#[test]
fn libpmix_5011_clients_under_our_server_pick_v41() {
    expect("libpmix 5.0.11 C client", "2 ranks, dialect v41");
}

#[test]
fn open_mpi_414_programs_under_our_server() {
    expect("Open MPI 4.1.4 program", "2 ranks, dialect v41");
}

#[test]
fn open_mpi_5011_programs_under_our_server() {
    expect("Open MPI 5.0.11 program", "2 ranks, dialect v41");
}

#[test]
fn python3_pmix_clients_under_our_server() {
    expect("python3-pmix client", "2 ranks, dialect v41");
}

/// pmix-wire's libpmix.so.2 (pmix-capi's cdylib, which `cargo test
/// --workspace` builds beside pmixw) in place of libpmix for the ranks
/// only: interop/c/pmix_kvs.c and Open MPI 4.1.4's interop/c/mpi_ring.c
/// under each host, run once on libpmix and once on ours in the same row,
/// print the same right lines, our trace showing every rank's init and
/// finalize.
#[test]
fn unmodified_programs_on_our_libpmix_under_open_mpi_414_mpirun() {
    expect(
        "Open MPI 4.1.4 mpirun with pmix-wire's libpmix",
        "2 ranks of pmix_kvs and mpi_ring on ours",
    );
}

#[test]
fn unmodified_programs_on_our_libpmix_under_prrte_5011_prterun() {
    expect(
        "PRRTE 5.0.11 prterun with pmix-wire's libpmix",
        "2 ranks of pmix_kvs and mpi_ring on ours",
    );
}

#[test]
fn unmodified_programs_on_our_libpmix_under_slurm_on_one_node() {
    expect(
        "Slurm srun --mpi=pmix, 1 node, with pmix-wire's libpmix",
        "2 ranks of pmix_kvs and mpi_ring on ours",
    );
}

#[test]
fn unmodified_programs_on_our_libpmix_under_slurm_on_two_nodes() {
    expect(
        "Slurm srun --mpi=pmix, 2 nodes, with pmix-wire's libpmix",
        "4 ranks of pmix_kvs and mpi_ring on ours",
    );
}

/// Open MPI 4.1.4's mpirun with our library as its libpmix (issue 35):
/// its ranks, on libpmix 4.2.2, are served by our server code through
/// ORTE's use of the server API, and print what they print under mpirun
/// on libpmix; our trace shows mpirun's PMIx_server_init.
#[test]
fn open_mpi_414_mpirun_serves_its_ranks_on_our_libpmix() {
    expect(
        "Open MPI 4.1.4 mpirun on pmix-wire's libpmix",
        "2 ranks of pmix_kvs and mpi_ring on libpmix 4.2.2, served by our library",
    );
}

/// Slurm's slurmstepd with our library as its libpmix (a private mount
/// namespace per slurmd, issue 35): libpmix 4.2.2 ranks (pmix_kvs, Open
/// MPI 4.1.4's ring) and libpmix 5.0.11 ranks (pmix_kvs linked to the
/// wheel's libpmix, Open MPI 5.0.11's ring) served by our server code on
/// one node, as on slurmstepd's own libpmix (4.2.2, which serves the
/// 5.0.11 ranks too here).
#[test]
fn slurmstepd_serves_its_ranks_on_our_libpmix_on_one_node() {
    if let Some(why) = row("srun --mpi=pmix (1 node) on pmix-wire's libpmix") {
        assert!(
            why.starts_with("2 ranks of pmix_kvs and mpi_ring (also with async modex) on libpmix 4.2.2, and of pmix_kvs and Open MPI 5.0.11's mpi_ring on libpmix 5.0.11, 1 node(s), served by our library"),
            "{why}"
        );
        assert!(why.ends_with(", as by libpmix"), "{why}");
    }
}

/// The same across two nodes: the fences go through Slurm's fence_nb
/// (its collective between the two slurmstepds) and back, and with Open
/// MPI's async modex a rank's peers' data through its direct_modex. On
/// libpmix's slurmstepd only Open MPI 5.0.11's ring may fail (it does, in
/// MPI_Init, with 3 of its 4 ranks on one node, its 4.2.2 server giving
/// the 5.0.11 clients no PMIX_LOCAL_PEERS); on ours every run passes.
#[test]
fn slurmstepd_serves_its_ranks_on_our_libpmix_on_two_nodes() {
    if let Some(why) = row("srun --mpi=pmix (2 nodes) on pmix-wire's libpmix") {
        assert!(
            why.starts_with("4 ranks of pmix_kvs and mpi_ring (also with async modex) on libpmix 4.2.2, and of pmix_kvs and Open MPI 5.0.11's mpi_ring on libpmix 5.0.11, 2 node(s), served by our library"),
            "{why}"
        );
        let failed = why
            .split_once("where libpmix's slurmstepd failed: ")
            .map_or("", |(_, f)| f);
        assert!(failed.split_whitespace().all(|t| t == "ring5"), "{why}");
    }
}

/// Our client under slurmstepd serving with our library (issue 35): our
/// server half reached through Slurm, in the newest dialect, where only
/// spawn is not offered (under libpmix's slurmstepd publish and lookup are
/// not either).
#[test]
fn our_client_under_slurmstepd_on_our_libpmix_on_one_node() {
    expect(
        "Slurm srun --mpi=pmix, 1 node, slurmstepd on pmix-wire's libpmix",
        "2 ranks, dialect v61",
    );
}

/// The same across two nodes (issue 35): Slurm's module has no publish
/// upcalls, so our library answers the probe's publish and lookups
/// NOT_SUPPORTED, as libpmix's slurmstepd does (the row checks every
/// rank skips them so), where it answered NOT_FOUND when each node kept
/// its own published data.
#[test]
fn our_client_under_slurmstepd_on_our_libpmix_on_two_nodes() {
    if let Some(why) = row("Slurm srun --mpi=pmix, 2 nodes, slurmstepd on pmix-wire's libpmix") {
        assert!(why.starts_with("4 ranks, dialect v61"), "{why}");
        for skip in ["lookup", "lookup after unpublish", "publish", "unpublish"] {
            assert!(why.contains(skip), "{why}");
        }
    }
}

/// Every row is one of the tests above.
#[test]
fn every_row_is_tested() {
    let tested = [
        "pmixw run (our server)",
        "libpmix 4.2.2 server (cap_server)",
        "Open MPI 4.1.4 mpirun",
        "PRRTE 5.0.11 prterun",
        "PRRTE 5.0.11 prterun (pmixw query --pid)",
        "Open MPI 5.0.11 mpirun",
        "Open MPI 5.0.11 mpirun (pmixw query --pid)",
        "python3-pmix server",
        "libpmix 4.2.2 C client",
        "libpmix 5.0.11 C client",
        "Open MPI 4.1.4 program",
        "Open MPI 5.0.11 program",
        "python3-pmix client",
        "Slurm srun --mpi=pmix, 1 node",
        "Slurm srun --mpi=pmix, 2 nodes",
        "libpmix 4.2.2 C client, 2 Slurm nodes via PMI-2",
        "Open MPI 4.1.4 mpirun with pmix-wire's libpmix",
        "Open MPI 4.1.4 mpirun on pmix-wire's libpmix",
        "PRRTE 5.0.11 prterun with pmix-wire's libpmix",
        "Slurm srun --mpi=pmix, 1 node, with pmix-wire's libpmix",
        "Slurm srun --mpi=pmix, 2 nodes, with pmix-wire's libpmix",
        "srun --mpi=pmix (1 node) on pmix-wire's libpmix",
        "srun --mpi=pmix (2 nodes) on pmix-wire's libpmix",
        "Slurm srun --mpi=pmix, 1 node, slurmstepd on pmix-wire's libpmix",
        "Slurm srun --mpi=pmix, 2 nodes, slurmstepd on pmix-wire's libpmix",
    ];
    let mut rows: Vec<&str> = grid::ROWS.iter().map(|r| r.peer).collect();
    let mut tested = tested.to_vec();
    rows.sort();
    tested.sort();
    assert_eq!(rows, tested);
}

/// `pmixw interop --lib` with libpmix 5.0.11 (the wheel ships no headers):
/// the harness built with 4.2.2's public headers drives 5.0.11's
/// PMIx_Data_pack/unpack/print. Every byte check passes in v41 (both
/// buffer types); the only differences are 5.0.11's print texts: status
/// values by macro name ("PMIX_ERR_NOT_FOUND" where 4.2.2 prints
/// "NOT-FOUND") and "NULL" for a NULL string in a PROC_INFO ("(null)" in
/// 4.2.2). Recorded in spec-notes/interop.md.
#[test]
fn libpmix_5011_through_422_headers_packs_like_422() {
    use pmix_test_kit::interop::{self, Cell, Tools};
    let Some(lib) = process::require("libpmix 5.0.11", pmix_test_kit::hosts::libpmix5()) else {
        return;
    };
    if process::require(
        "libpmix 4.2.2 headers",
        pmix_test_kit::hosts::libpmix4_dev(),
    )
    .is_none()
    {
        return;
    }
    let tools = Tools::build_with_lib(&lib).unwrap_or_else(|e| panic!("{e}"));
    let m = interop::run_matrix_with(&tools, &interop::default_formats()).unwrap();
    assert!(m.cases.len() > 800, "{} cases", m.cases.len());
    let mut differ = std::collections::BTreeSet::new();
    for c in &m.cases {
        for (check, cell) in &c.cells {
            match cell {
                Cell::Fail(e) => {
                    assert_eq!(check, "print", "{} [{}] {check}: {e}", c.name, c.format);
                    assert!(
                        e.contains("libpmix \"")
                            && (e.contains("Value: PMIX_") || e.contains("NULL")),
                        "{} [{}]: {e}",
                        c.name,
                        c.format
                    );
                    differ.insert(c.name.clone());
                }
                Cell::Fixed(r) => panic!("{}: a listed 4.2.2 defect passes in 5.0.11: {r}", c.name),
                _ => {}
            }
        }
    }
    let want: std::collections::BTreeSet<String> = [
        "STATUS/edges",
        "STATUS/success",
        "STATUS/error",
        "STATUS/not_found",
        "VALUE/status",
        "INFO/v_status",
        "DATA_ARRAY/of_status",
        "PROC_INFO/array2",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(differ, want);
}

/// Slurm's plugin registers `pmix.appnum` as PMIX_INT; a python3-pmix
/// server told to do the same (`--int-appnum`) stands in for it: the probe
/// reports a `warn` line on each rank and still passes.
#[test]
fn probe_warns_on_an_int_appnum_and_passes() {
    let Some(py) = process::require("python3-pmix", pmix_test_kit::hosts::python_pmix()) else {
        return;
    };
    let ctx = ctx("intappnum");
    let mut c = grid::python_server(&py, &["--int-appnum"], 2, &ctx);
    c.args([env!("CARGO_BIN_EXE_pmixw"), "probe"]);
    let r = grid::run_logged(c, &ctx, "intappnum");
    let _ = std::fs::remove_dir_all(&ctx.scratch);
    let out = r.clone().map(|(_, o)| o).unwrap_or_default();
    match grid::probe_verdict(r, 2) {
        Outcome::Pass(why) => assert!(why.ends_with("; 2 warnings"), "{why}\n{out}"),
        other => panic!("{other:?}"),
    }
    for rank in 0..2 {
        let want = format!(
            "[{rank}] warn get pmix.appnum (own): 0 as PMIX_INT (the standard: an unsigned type)"
        );
        assert!(out.lines().any(|l| l == want), "no {want:?} in\n{out}");
    }
}

/// Slurm's plugin registers a server-side default handler that cancels the
/// step on any event. A libpmix 4.2.2 server (python3-pmix) with such a
/// handler shows which events reach it: a client's LOCAL-range event does
/// (the control), a CUSTOM range naming only the client's namespace does
/// not, and neither does anything `pmixw probe --events` sends, while the
/// ranks still get their event.
#[test]
fn probe_events_never_reach_the_hosts_own_handler() {
    let Some(py) = process::require("python3-pmix", pmix_test_kit::hosts::python_pmix()) else {
        return;
    };
    let ctx = ctx("handler");
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../interop/c/");
    let job = |n: u32, argv: &[&str], tag: &str| {
        let mut c = grid::python_server(&py, &["--default-handler"], n, &ctx);
        c.args(argv);
        grid::run_logged(c, &ctx, tag).unwrap_or_else(|e| panic!("{e}"))
    };
    let py_s = py.to_string_lossy().into_owned();
    let notify = format!("{dir}py_notify.py");
    let (ok, out) = job(1, &[&py_s, &notify, "local"], "local");
    assert!(ok && out.contains("server handler saw 3131"), "{out}");
    let (ok, out) = job(1, &[&py_s, &notify, "custom"], "custom");
    assert!(ok && out.contains("notify custom 0"), "{out}");
    assert!(!out.contains("server handler saw"), "{out}");
    let r = job(
        2,
        &[env!("CARGO_BIN_EXE_pmixw"), "probe", "--events"],
        "probe",
    );
    let _ = std::fs::remove_dir_all(&ctx.scratch);
    assert!(!r.1.contains("server handler saw"), "{}", r.1);
    assert!(
        r.1.contains("[1] ok event delivered: status 3131 from rank 0"),
        "{}",
        r.1
    );
    assert!(
        matches!(grid::probe_verdict(Ok(r.clone()), 2), Outcome::Pass(_)),
        "{}",
        r.1
    );
}

/// The command line: `pmixw interop --hosts --only TEXT --json` prints the
/// selected cells as JSON objects {role, peer, result, reason}; the text
/// form ends with the count.
#[test]
fn interop_hosts_command_prints_the_grid() {
    if process::require("python3-pmix", pmix_test_kit::hosts::python_pmix()).is_none() {
        return;
    }
    let run = |args: &[&str]| {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_pmixw"))
            .args(["interop", "--hosts"])
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let v: serde_json::Value =
        serde_json::from_str(&run(&["--only", "python3-pmix client", "--json"])).unwrap();
    let cells = v.as_array().unwrap();
    assert_eq!(cells.len(), 1, "{v}");
    assert_eq!(cells[0]["role"], "server");
    assert_eq!(cells[0]["peer"], "python3-pmix client");
    assert_eq!(cells[0]["result"], "pass", "{v}");
    assert_eq!(cells[0]["reason"], "2 ranks, dialect v41");
    let text = run(&["--only", "no such peer"]);
    assert!(
        text.ends_with("hosts: 0 pass, 0 fail, 0 absent\n"),
        "{text}"
    );
}

/// Under CI (`CI=true`, or `1`) a peer that is not installed fails its
/// row's test; elsewhere the test is skipped and says what is missing and
/// how `.ci/setup` installs it. Proved on a real row, not on the helper
/// alone: this test binary re-run on the Open MPI 5.0.11 row with
/// `PMIXW_VENV` naming a directory that does not exist.
#[test]
fn an_absent_peer_fails_under_ci_and_is_skipped_elsewhere() {
    let nowhere = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("no-venv-{}", std::process::id()));
    let run = |ci: Option<&str>| {
        let mut c = std::process::Command::new(std::env::current_exe().unwrap());
        c.args(["--exact", "our_client_under_open_mpi_5011_mpirun"])
            .args(["--nocapture", "--test-threads=1"])
            .env("PMIXW_VENV", &nowhere);
        match ci {
            Some(v) => c.env("CI", v),
            None => c.env_remove("CI"),
        };
        let o = c.output().unwrap();
        let text =
            String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
        (o.status.success(), text)
    };
    let (ok, text) = run(None);
    assert!(ok, "{text}");
    assert!(
        text.contains("SKIPPED Open MPI 5.0.11 mpirun: ")
            && text.contains(&format!("{}/bin/mpirun not found", nowhere.display()))
            && text.contains("`bash .ci/setup`"),
        "{text}"
    );
    for ci in ["true", "1"] {
        let (ok, text) = run(Some(ci));
        assert!(!ok, "CI={ci}: an absent peer passed:\n{text}");
        assert!(
            text.contains("CI installs it with .ci/setup, so it must be found"),
            "CI={ci}: {text}"
        );
    }
}

/// Hostile peers beside a Slurm job on our library (issue 35): slurmstepd
/// serving with pmix-wire's libpmix (`Cluster::start_serving`, one node)
/// runs three libpmix 4.2.2 clients (interop/c/pmix_kvs.c, each first
/// writing the server's address it was given, then waiting a little),
/// while the test kit's attackers (idle connections, forged claims of
/// every rank, a liar about its uid, garbage, oversized and truncated
/// frames, then slowloris, connect/close churn and late forged claims)
/// go at the same server. Every good rank completes, srun succeeds (so
/// slurmstepd lived through it), and the slowloris is cut off.
#[test]
fn hostile_peers_beside_a_slurm_job_on_our_libpmix() {
    use pmix_test_kit::{cbuild, hostile, slurm};
    use std::time::Duration;
    let ctx = ctx("hostile-srun");
    let Some(lib) = process::require("pmix-wire's libpmix", grid::our_libpmix(&ctx)) else {
        return;
    };
    let Some(kvs) = process::require(
        "libpmix 4.2.2 and cc",
        pmix_test_kit::hosts::libpmix4_dev()
            .and_then(|_| cbuild::build_c("pmix_kvs", &cbuild::default_out_dir())),
    ) else {
        return;
    };
    let miss = slurm::missing();
    let slurm_found = match miss.is_empty() {
        true => Ok(()),
        false => Err(format!("Slurm not installed ({})", miss.join(" "))),
    };
    if process::require("Slurm", slurm_found).is_none() {
        return;
    }
    let cluster = slurm::Cluster::start_serving(1, &lib.join("libpmix.so.2"))
        .unwrap_or_else(|e| panic!("the cluster serving with our libpmix: {e}"));
    let n = 3u32;
    let addr_file = ctx.scratch.join("addr");
    let mut srun = cluster.srun();
    srun.args(["--mpi=pmix", "-N", "1", "-n", &n.to_string(), "sh", "-c"])
        .arg(r#"echo "$PMIX_NAMESPACE $PMIX_SERVER_URI41" > "$ADDR.$PMIX_RANK.tmp" && mv "$ADDR.$PMIX_RANK.tmp" "$ADDR.$PMIX_RANK"; sleep 3; exec "$0""#)
        .arg(&kvs)
        .env("ADDR", &addr_file)
        .current_dir(&ctx.scratch)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let job = process::Kill(srun.spawn().unwrap());
    let first = ctx.scratch.join("addr.0");
    process::wait_until("rank 0 wrote its server's address", || first.exists());
    let text = std::fs::read_to_string(&first).unwrap();
    let (ns, uri) = text
        .trim()
        .split_once(' ')
        .unwrap_or_else(|| panic!("{text:?}"));
    let addr = uri
        .rsplit_once("//")
        .unwrap_or_else(|| panic!("{uri}"))
        .1
        .to_string();
    let mut attack = hostile::Attack::before(&addr, ns, n);
    attack.during();
    let (ok, out) = process::finish(job, Duration::from_secs(120), "srun beside hostile peers");
    let mut got: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("pmix rank "))
        .collect();
    got.sort();
    let want: Vec<String> = (0..n)
        .map(|r| format!("pmix rank {r} of {n}: kvs ok"))
        .collect();
    assert!(
        ok && got == want,
        "srun ok {ok}, output:\n{out}\n{}",
        cluster.logs()
    );
    assert!(attack.slowloris_cut_off(), "slowloris was not cut off");
    drop(attack);
    cluster.stop();
    let _ = std::fs::remove_dir_all(&ctx.scratch);
}
