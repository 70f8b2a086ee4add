//! Open MPI 4.1.4 programs (mpicc; they link libpmix 4.2.2) run under
//! `pmixw run -n 4` with nothing set by the user (issue #5 item 7):
//! MPI_Init over our server, point-to-point, collectives, MPI_Finalize.

use pmix_test_kit::process;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

fn build() -> PathBuf {
    let mpicc =
        pmix_test_kit::hosts::mpicc4().unwrap_or_else(|e| panic!("{e}: install libopenmpi-dev"));
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("mpi_ring");
    pmix_test_kit::hosts::grid::compile_c(&mpicc, "mpi_ring", &out, &[])
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn an_open_mpi_program_runs_under_pmixw_run() {
    let exe = build();
    let o = process::run_within(
        Command::new(env!("CARGO_BIN_EXE_pmixw"))
            .args(["run", "-n", "4", "--timeout", "120"])
            .arg(&exe)
            .env_remove("FLUX_JOB_ID"),
        Duration::from_secs(150),
        "the MPI job",
    );
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{out}\n{err}");
    pmix_test_kit::interop::assert_mpi_ring(&out, 4, &err);
}
