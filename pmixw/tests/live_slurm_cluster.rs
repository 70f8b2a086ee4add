//! The private Slurm cluster fixture (interop/src/slurm): munged, slurmctld and two
//! slurmd on this machine. One-node and two-node `srun` jobs, and Slurm's
//! own PMIx plugin (`srun --mpi=pmix`) running `pmixw probe` on both nodes.

use pmix_test_kit::process;

use pmix_test_kit::slurm::{self, Cluster};
use std::time::Duration;

fn srun(c: &Cluster, args: &[&str]) -> std::process::Output {
    process::run_within(
        c.srun().args(args),
        Duration::from_secs(120),
        &format!("srun {args:?}"),
    )
}

/// `srun -N nodes --ntasks-per-node=per printenv SLURMD_NODENAME`, which
/// must succeed: the node name each task ran on, sorted.
fn node_names(c: &Cluster, nodes: usize, per: usize) -> Vec<String> {
    let (n, p) = (nodes.to_string(), format!("--ntasks-per-node={per}"));
    let o = srun(c, &["-N", &n, &p, "printenv", "SLURMD_NODENAME"]);
    assert!(
        o.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&o.stderr),
        c.logs()
    );
    let mut names: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    names.sort();
    names
}

#[test]
fn one_and_two_node_jobs_and_slurms_pmix_plugin() {
    let Some(c) = slurm::for_test(2) else { return };
    let dir = c.dir().to_path_buf();
    // one node
    let o = srun(&c, &["-N", "1", "-n", "1", "printenv", "SLURMD_NODENAME"]);
    assert!(
        o.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&o.stderr),
        c.logs()
    );
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "n1");
    // two nodes, one task each: every node runs its share
    assert_eq!(node_names(&c, 2, 2), ["n1", "n1", "n2", "n2"]);
    // a task's exit status reaches srun
    let o = srun(
        &c,
        &["-N", "2", "-n", "2", "sh", "-c", "exit $((SLURM_PROCID*3))"],
    );
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // Slurm's PMIx plugin (libpmix inside slurmstepd) across both nodes,
    // with our client as every rank
    let o = srun(
        &c,
        &[
            "--mpi=pmix",
            "-N",
            "2",
            "-n",
            "4",
            env!("CARGO_BIN_EXE_pmixw"),
            "probe",
        ],
    );
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    eprintln!("srun --mpi=pmix pmixw probe: {:?}\n{out}\n{err}", o.status);
    // every rank of both nodes is up, sees both nodes and passes every
    // check; Slurm's PMIX_INT appnum is a warning on each rank (issue 13)
    assert!(o.status.success(), "{out}\n{err}");
    assert!(!out.contains(" FAIL "), "{out}\n{err}");
    for r in 0..4 {
        assert!(
            out.contains(&format!("[{r}] ok init: slurm.pmix.")),
            "{out}\n{err}"
        );
        assert!(
            out.contains(&format!("[{r}] ok resolve nodes: n1,n2")),
            "{out}\n{err}"
        );
        let warn = format!(
            "[{r}] warn get pmix.appnum (own): 0 as PMIX_INT (the standard: an unsigned type)"
        );
        assert!(out.lines().any(|l| l == warn), "no {warn:?} in\n{out}");
        let summary = out
            .lines()
            .find(|l| l.starts_with(&format!("[{r}] probe: ")))
            .unwrap_or_else(|| panic!("no summary of rank {r}:\n{out}"));
        assert!(summary.ends_with(" 1 warnings, 0 failures"), "{summary}");
    }
    c.stop();
    assert!(!dir.exists(), "the scratch directory is removed");
}

/// Eight slurmd on this machine (the multi-node benches use up to
/// slurm::MAX_NODES): one step of one task on every node, each node
/// running its own; then every daemon is gone and the directory removed.
#[test]
fn eight_nodes_run_one_step() {
    let Some(c) = slurm::for_test(8) else { return };
    let dir = c.dir().to_path_buf();
    assert_eq!(c.nodes().len(), 8);
    let mut want: Vec<String> = (1..=8).map(|i| format!("n{i}")).collect();
    want.sort();
    assert_eq!(node_names(&c, 8, 1), want);
    let dir_s = dir.display().to_string();
    c.stop();
    assert!(!dir.exists(), "the scratch directory is removed");
    // no daemon of this cluster is left: none names its directory
    let left: Vec<String> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            cmd.contains(&dir_s).then_some(cmd)
        })
        .collect();
    assert!(left.is_empty(), "left running: {left:?}");
}
