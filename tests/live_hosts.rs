//! The live cross-version matrix (issue 13), one test per row of
//! `pmixw interop --hosts` (src/hosts/grid.rs): our client (`pmixw probe
//! --events`) under our server, libpmix 4.2.2's server harness, Open MPI
//! 4.1.4's mpirun, PRRTE 5.0.11's prterun and Open MPI 5.0.11's mpirun,
//! and a python3-pmix server; our server hosting libpmix 4.2.2 and 5.0.11
//! C clients, Open MPI 4.1.4 and 5.0.11 programs and python3-pmix clients,
//! with the dialect each negotiates now that we advertise every URI.
//! A peer that is not installed is a skip that says so, and a failure
//! under CI (where `.ci/setup` installs it).

mod common;

use pmix_wire::hosts::grid::{self, Outcome};

/// Run the row of `peer`; its pass reason (None: absent, skipped).
fn row(peer: &str) -> Option<String> {
    let scratch = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "hosts-{}-{}",
        std::process::id(),
        peer.replace(|c: char| !c.is_ascii_alphanumeric(), "")
    ));
    std::fs::create_dir_all(&scratch).unwrap();
    let ctx = grid::Ctx {
        pmixw: env!("CARGO_BIN_EXE_pmixw").into(),
        scratch: scratch.clone(),
    };
    let cells = grid::run(&ctx, Some(peer));
    let _ = std::fs::remove_dir_all(&scratch);
    assert_eq!(cells.len(), 1, "{peer} names one row");
    match cells.into_iter().next().unwrap().outcome {
        Outcome::Pass(why) => Some(why),
        Outcome::Fail(why) => panic!("{peer}: {why}"),
        Outcome::Absent(why) => common::require::<String>(peer, Err(why)),
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
    expect("pmixw run", "2 ranks, dialect v61");
}

#[test]
fn our_client_under_the_libpmix_422_server() {
    expect("cap_server", "2 ranks, dialect v41");
}

#[test]
fn our_client_under_open_mpi_414_mpirun() {
    expect("Open MPI 4.1.4 mpirun", "2 ranks, dialect v41");
}

#[test]
fn our_client_under_prrte_5011_prterun() {
    expect("PRRTE 5.0.11", "2 ranks, dialect v41");
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

/// Every row is one of the tests above.
#[test]
fn every_row_is_tested() {
    let tested = [
        "pmixw run",
        "cap_server",
        "Open MPI 4.1.4 mpirun",
        "PRRTE 5.0.11",
        "Open MPI 5.0.11 mpirun",
        "python3-pmix server",
        "libpmix 4.2.2 C client",
        "libpmix 5.0.11 C client",
        "Open MPI 4.1.4 program",
        "Open MPI 5.0.11 program",
        "python3-pmix client",
    ];
    for r in grid::ROWS {
        assert_eq!(
            tested.iter().filter(|t| r.peer.contains(*t)).count(),
            1,
            "row {:?} has exactly one test",
            r.peer
        );
    }
}
