//! Slurm 22.05's slurmstepd serving with pmix-wire's libpmix offers its
//! libpmix 4.2.2 ranks the ds21 shared-memory store, as on its own
//! libpmix (issue 35; spec-notes/capi.md "The server"): `srun --mpi=pmix
//! -N 2 --ntasks-per-node=2` of interop/c/ds_client.c on a private
//! cluster whose slurmstepds open our library (`Cluster::start_serving`)
//! and on one whose open libpmix 4.2.2. On both every rank passes its
//! checks with the same lines; every client stored its job info with
//! ds21 and read every peer's number, the other node's ranks' too, on
//! libpmix's fast path, with no get of a key a rank put asking the
//! server (libpmix's own verbose output); on ours our trace shows the
//! slurmstepds' PMIx_server_setup_fork. Each node's store directory (the one
//! its ranks were given) is gone once its slurmstepd is done, on both.

use pmix_test_kit::hosts::grid;
use pmix_test_kit::interop::{build_c, default_out_dir};
use pmix_test_kit::{ds_client, process, slurm};
use std::path::Path;
use std::time::Duration;

/// The store directories the ranks were given (each prints its
/// PMIX_DSTORE_21_BASE_PATH first), one a node.
fn stores(out: &str) -> Vec<String> {
    let mut v: Vec<String> = out
        .lines()
        .filter_map(|l| l.strip_prefix("store "))
        .map(String::from)
        .collect();
    v.sort();
    v.dedup();
    v
}

/// The job on `c`: its stdout and stderr, once it succeeded.
fn job(c: &slurm::Cluster, exe: &Path, which: &str) -> (String, String) {
    let o = process::run_within(
        c.srun()
            .args(["--mpi=pmix", "-N", "2", "--ntasks-per-node=2"])
            .args([
                "sh",
                "-c",
                r#"echo "store $PMIX_DSTORE_21_BASE_PATH"; exec "$0" "$@""#,
            ])
            // 2 ranks a node, in blocks
            .args([exe.as_os_str(), "2".as_ref()])
            .env("PMIX_MCA_pmix_client_get_verbose", "2")
            .env("PMIX_MCA_gds_base_verbose", "2")
            .env_remove("PMIX_MCA_gds"),
        Duration::from_secs(120),
        &format!("srun --mpi=pmix ds_client, slurmstepd on {which}"),
    );
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    );
    assert!(o.status.success(), "{which}: {out}\n{err}\n{}", c.logs());
    (out, err)
}

fn checks(out: &str) -> Vec<&str> {
    let mut v: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("ok ") || l.starts_with("fail") || l.starts_with("rank "))
        .collect();
    v.sort();
    v
}

#[test]
fn slurmstepd_on_our_libpmix_offers_its_ranks_the_ds21_store() {
    let scratch = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("stepd-dstore");
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    let ctx = grid::Ctx::new(env!("CARGO_BIN_EXE_pmixw").into(), scratch.clone());
    let Some(lib) = process::require("pmix-wire's libpmix", grid::our_libpmix(&ctx)) else {
        return;
    };
    let Some(exe) = process::require(
        "libpmix 4.2.2 (pkg-config pmix) for interop/c/ds_client.c",
        pmix_test_kit::hosts::libpmix4_dev().and_then(|_| build_c("ds_client", &default_out_dir())),
    ) else {
        return;
    };
    let Some(theirs) = slurm::for_test(2) else {
        return;
    };
    let (t_out, t_err) = job(&theirs, &exe, "libpmix");
    let ours = slurm::Cluster::start_serving(2, &lib.join("libpmix.so.2"))
        .unwrap_or_else(|e| panic!("the cluster serving with our libpmix: {e}"));
    let (o_out, o_err) = job(&ours, &exe, "ours");
    // one store a node, removed when its slurmstepd finalizes (which may
    // trail srun's end)
    for (which, out) in [("libpmix", &t_out), ("ours", &o_out)] {
        let dirs = stores(out);
        assert_eq!(dirs.len(), 2, "{which}: {out}");
        for d in dirs {
            assert!(d.contains("/pmix_dstor_ds21_"), "{which}: {d}");
            process::wait_until(&format!("{which}'s store {d} removed"), || {
                !Path::new(&d).exists()
            });
        }
    }
    theirs.stop();
    ours.stop();
    for (which, out, err) in [("libpmix", &t_out, &t_err), ("ours", &o_out, &o_err)] {
        ds_client::assert_checks(out, 4);
        assert_eq!(
            ds_client::job_info_stored_with(err, "ds21"),
            4,
            "{which}: {err}"
        );
        assert_eq!(
            ds_client::job_info_stored_with(err, "hash"),
            0,
            "{which}: {err}"
        );
        // 4 ranks each read the 4 numbers, from their node's store
        assert_eq!(ds_client::fast_gets(err, "ds.num"), 16, "{which}: {err}");
        assert_eq!(
            ds_client::slow_gets_of_put_keys(err),
            vec![],
            "{which}: {err}"
        );
    }
    assert_eq!(
        checks(&t_out),
        checks(&o_out),
        "libpmix's slurmstepd left, ours right"
    );
    assert!(
        o_err.contains("pmix-capi: PMIx_server_setup_fork"),
        "{o_err}"
    );
    let _ = std::fs::remove_dir_all(&scratch);
}
