//! Wireup across Slurm nodes (issue 14 item 5): N libpmix 4.2.2 clients
//! (test-kit/c/bench_wireup.c: init, put 4 keys, commit, fence with
//! data, get every peer's 4 keys, finalize) over the two nodes of the
//! private cluster (test-kit/src/slurm), N/2 per node, under
//!
//! * ours: `srun --mpi=pmi2 -N 2 --ntasks-per-node=1 pmixw run -n N`
//!   (our server on each node, bridged through Slurm's PMI-2), and
//! * Slurm's: `srun --mpi=pmix -N 2 --ntasks-per-node=N/2` (libpmix
//!   inside each slurmstepd),
//!
//! in the same run, N = 8, 32, 128 (`BENCH_N` to change). Prints the best
//! wall time of `BENCH_REPS` (default 3) srun jobs and the ratio. Not a
//! test: nothing asserts a speed; it fails only if a job fails. Run it
//! niced on a shared machine:
//!
//!     nice -n 19 cargo bench --bench wireup_slurm

use pmix_test_kit::interop::build_c;
use pmix_test_kit::slurm::Cluster;
use std::path::PathBuf;
use std::process::{exit, Command, Stdio};
use std::time::{Duration, Instant};

fn once(cmd: &mut Command) -> Duration {
    let start = Instant::now();
    let o = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .expect("srun");
    let wall = start.elapsed();
    if !o.status.success() {
        eprintln!(
            "!! job failed: {cmd:?}\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
        exit(1);
    }
    wall
}

fn main() {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let client = build_c("bench_wireup", &out).unwrap_or_else(|e| panic!("{e}"));
    let pmixw = env!("CARGO_BIN_EXE_pmixw");
    let reps: usize = std::env::var("BENCH_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let sizes: Vec<usize> = std::env::var("BENCH_N")
        .ok()
        .map(|v| v.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![8, 32, 128]);
    let c = Cluster::start(2).unwrap_or_else(|e| {
        eprintln!("cannot start the Slurm cluster: {e}");
        exit(1)
    });
    println!("wireup of N libpmix 4.2.2 clients on 2 Slurm nodes (N/2 each): best of {reps}");
    println!(
        "{:>4} {:>16} {:>16} {:>9}",
        "N", "srun --mpi=pmix", "pmixw via pmi2", "pmix/ours"
    );
    for n in sizes {
        let per = (n / 2).max(1).to_string();
        let ns = n.to_string();
        let best =
            |f: &mut dyn FnMut() -> Duration| (0..reps).map(|_| f()).min().unwrap_or_default();
        let slurm = best(&mut || {
            once(
                c.srun()
                    .args(["--mpi=pmix", "-N", "2", "--ntasks-per-node", &per])
                    .arg(&client),
            )
        });
        let ours = best(&mut || {
            once(
                c.srun()
                    .args(["--mpi=pmi2", "-N", "2", "--ntasks-per-node=1", pmixw])
                    .args(["run", "-n", &ns, "--timeout", "300"])
                    .arg(&client),
            )
        });
        println!(
            "{:>4} {:>14.1}ms {:>14.1}ms {:>8.2}x",
            n,
            slurm.as_secs_f64() * 1e3,
            ours.as_secs_f64() * 1e3,
            slurm.as_secs_f64() / ours.as_secs_f64()
        );
    }
    println!("target: pmix/ours >= 1x at every N");
    c.stop();
}
