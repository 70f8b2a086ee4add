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
use pmix_test_kit::wireup::{list, ms, once, Run, PHASES};
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
        // the first job on a node loads Slurm's plugins there (it took
        // ~1 s once): one job of each side first, not measured
        let ks = k.to_string();
        once(
            &c,
            c.srun()
                .args(["--mpi=pmix", "-N", &ks, "--ntasks-per-node=1"])
                .arg(&client),
            k,
        );
        once(
            &c,
            c.srun()
                .args(["--mpi=pmi2", "-N", &ks, "--ntasks-per-node=1", pmixw])
                .args(["run", "-n", &ks])
                .arg(&client),
            k,
        );
        for &n in &sizes {
            if n < k {
                continue;
            }
            let per = (n / k).max(1).to_string();
            let ns = n.to_string();
            let (mut slurm, mut ours) = (Vec::new(), Vec::new());
            for _ in 0..reps {
                slurm.push(once(
                    &c,
                    c.srun()
                        .args(["--mpi=pmix", "-N", &ks, "--ntasks-per-node", &per])
                        .arg(&client),
                    k,
                ));
                ours.push(once(
                    &c,
                    c.srun()
                        .env("PMIXW_TRAFFIC", "1")
                        .args(["--mpi=pmi2", "-N", &ks, "--ntasks-per-node=1", pmixw])
                        .args(["run", "-n", &ns, "--timeout", "300"])
                        .args(dstore.then_some("--dstore"))
                        .arg(&client),
                    k,
                ));
            }
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
            let t = &o.traffic;
            let per_rank = |key: &str| *t.get(key).unwrap_or(&0) as f64 / n as f64;
            let per_node_ms = |key: &str| *t.get(key).unwrap_or(&0) as f64 / k.max(1) as f64 / 1e3;
            println!(
                "    ours between nodes, per rank: fence data {:.0} B; PMI-2 put {:.2} msgs \
                 {:.0} B, fence {:.3}, get {:.2} msgs {:.0} B; bridge {:.3} frames {:.1} B \
                 ({} node reports)",
                per_rank("data"),
                per_rank("put"),
                per_rank("put_bytes"),
                per_rank("fence"),
                per_rank("get"),
                per_rank("get_bytes"),
                per_rank("bridge_frames"),
                per_rank("bridge_bytes"),
                t.get("nodes").copied().unwrap_or(0),
            );
            println!(
                "    ours, PMI-2 waits per node (ms): put {:.1}, fence {:.1}, get {:.1}",
                per_node_ms("put_us"),
                per_node_ms("fence_us"),
                per_node_ms("get_us")
            );
            for (who, r) in [("srun", s), ("ours", o)] {
                println!(
                    "    phases {who:>4} (ms, last rank): {}",
                    PHASES
                        .iter()
                        .zip(r.phases)
                        .map(|(p, v)| format!("{p} {v:.0}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
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
