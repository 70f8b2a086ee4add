//! Wireup across Slurm nodes (issues 14 and 26): N libpmix 4.2.2 clients
//! (interop/c/bench_wireup.c: init, put 4 keys, commit, fence with
//! data, get every peer's 4 keys, finalize) over k nodes of the private
//! cluster (interop/src/slurm), N/k per node, under
//!
//! * ours: `srun --mpi=pmi2 -N k --ntasks-per-node=1 pmixw run -n N
//!   --dstore` (our server on each node, fences through Slurm's PMI-2, the
//!   rest over our bridge; the clients read each node's ds21 store, as
//!   Slurm's read libpmix's; `BENCH_DSTORE=0`: without it, their hash), and
//! * Slurm's: `srun --mpi=pmix -N k --ntasks-per-node=N/k` (libpmix
//!   inside each slurmstepd),
//!
//! alternating, `BENCH_REPS` (default 3) jobs of each per point, for every
//! k of `BENCH_NODES` (default 2,4) and N of `BENCH_N` (default
//! 8,32,128,512). One line per point:
//!
//!     nodes=<k> N=<n> srun/ours=<r>x
//!
//! (the ratio of the median wall times of the whole srun), then both walls
//! (median [min-max]), what our nodes exchanged per rank (from the
//! `PMIXW_TRAFFIC` report of every node's `pmixw run`, summed over the
//! nodes and divided by N: fence data, PMI-2 requests and their bytes,
//! bridge frames and their bytes; and the time each node waited for
//! PMI-2), and when the last rank ended each phase (the clients stamp
//! them). Slurm's side is not counted (its stepds' traffic is inside
//! libpmix and Slurm). Not a test: nothing asserts a speed; it fails only
//! if a job fails. One command, niced on a shared machine:
//!
//!     nice -n 19 cargo bench -p pmixw --bench wireup_slurm

use pmix_test_kit::interop::build_c;
use pmix_test_kit::slurm::Cluster;
use pmix_test_kit::wireup::{alternate, list, ms, phases_line, traffic_lines, warm_up, Run};
use std::path::PathBuf;
use std::process::exit;

fn main() {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let client = build_c("bench_wireup", &out).unwrap_or_else(|e| panic!("{e}"));
    let pmixw = env!("CARGO_BIN_EXE_pmixw");
    let reps: usize = std::env::var("BENCH_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
        .max(1);
    let nodes = list("BENCH_NODES", &[2, 4]);
    let sizes = list("BENCH_N", &[8, 32, 128, 512]);
    // ours with the ds21 store its clients then read as Slurm's read
    // libpmix's (spec-notes/dstore.md), unless BENCH_DSTORE=0
    let dstore = std::env::var("BENCH_DSTORE").map_or(true, |v| v != "0");
    println!("ours: pmixw run{}", if dstore { " --dstore" } else { "" });
    let most = nodes.iter().copied().max().unwrap_or(2);
    let c = Cluster::start(most).unwrap_or_else(|e| {
        eprintln!("cannot start the Slurm cluster: {e}");
        exit(1)
    });
    println!(
        "wireup of N libpmix 4.2.2 clients on k Slurm nodes (N/k each), {reps} jobs of each side \
         alternating; ratio of the median walls"
    );
    let mut summary = Vec::new();
    for &k in &nodes {
        warm_up(&c, k, pmixw, &client, &[]);
        for &n in &sizes {
            if n < k {
                continue;
            }
            let flags: &[&str] = if dstore { &["--dstore"] } else { &[] };
            let (mut slurm, mut ours) = alternate(&c, (k, n, reps), pmixw, (&client, &[]), flags);
            slurm.sort_by_key(|r| r.wall);
            ours.sort_by_key(|r| r.wall);
            let (s, o) = (&slurm[reps / 2], &ours[reps / 2]);
            let ratio = s.wall.as_secs_f64() / o.wall.as_secs_f64();
            println!("nodes={k} N={n} srun/ours={ratio:.2}x");
            let walls = |v: &[Run]| {
                format!(
                    "{:.0} ms [{:.0}-{:.0}]",
                    ms(v[reps / 2].wall),
                    ms(v[0].wall),
                    ms(v[reps - 1].wall)
                )
            };
            println!(
                "    wall median [min-max]: srun --mpi=pmix {}, ours {}",
                walls(&slurm),
                walls(&ours)
            );
            println!("{}", traffic_lines(o, n, k));
            for (who, r) in [("srun", s), ("ours", o)] {
                println!("{}", phases_line(who, r));
            }
            summary.push((k, n, ratio));
        }
    }
    println!("summary (target: srun/ours >= 1.5x at every point):");
    for (k, n, r) in summary {
        println!(
            "nodes={k} N={n} srun/ours={r:.2}x{}",
            if r >= 1.5 { "" } else { "  (below 1.5x)" }
        );
    }
    c.stop();
}
