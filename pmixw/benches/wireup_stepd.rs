//! slurmstepd on libpmix against slurmstepd on pmix-wire's libpmix.so.2
//! (issue 35 item 5): the same job, N libpmix 4.2.2 clients
//! (interop/c/bench_wireup.c: init, put 4 keys, commit, fence with data,
//! get every peer's 4 keys, finalize) under `srun --mpi=pmix -N k -n N
//! --ntasks-per-node=⌈N/k⌉` on two private Slurm clusters of k nodes
//! (interop/src/slurm): one whose slurmstepd's PMIx plugin opens its own
//! libpmix 4.2.2, one whose opens ours (`Cluster::start_serving_traced`,
//! our trace off), alternating, `BENCH_REPS` jobs of each per point, in
//! one run. One line per point:
//!
//!     nodes=<k> N=<n> libpmix/ours: wall <w>x, stepd cpu <c>x, stepd rss <r>x
//!
//! the ratios of the medians (above 1: ours less), then each side's
//! median [min-max] of
//!
//! * wall: srun's, the whole job;
//! * stepd CPU: user + system of the job's slurmstepds (one per node,
//!   summed), each reaped by the bench (a child subreaper, as in
//!   wireup_scale: test-kit/src/wireup.rs) with `wait4`, whose figure
//!   holds the tasks it waited for, less what the ranks report as their
//!   own (`cpu`, getrusage at their end; the forked child's work before
//!   its exec is counted as the rank's);
//! * stepd RSS: the largest peak RSS (VmHWM) of a stepd of the job,
//!   sampled every 10 ms by a thread of the bench while the job runs;
//!
//! and when the last rank ended each phase (the clients stamp them).
//! Not a test: nothing asserts a speed; it stops if a job fails. Our
//! library is pmix-capi's cdylib beside the bench's pmixw, built first:
//!
//!     cargo build --release -p pmix-capi
//!     nice -n 19 cargo bench -p pmixw --bench wireup_stepd
//!
//!     BENCH_NODES=1,2        nodes per point (default; at most 16)
//!     BENCH_N=8,64,256       ranks per point (default)
//!     BENCH_REPS=5           jobs of each side per point (default)

use pmix_test_kit::hosts::grid;
use pmix_test_kit::interop::build_c;
use pmix_test_kit::slurm::{Cluster, MAX_NODES, TASKS_PER_NODE};
use pmix_test_kit::wireup::{become_subreaper, list, ms, once_sampled, phases_line, Run};
use std::path::{Path, PathBuf};
use std::process::exit;

/// A column: its name, what it reads of a job, its unit.
type Column = (&'static str, fn(&Run) -> f64, &'static str);

/// One job of `n` clients on `k` nodes of `c`, the stepds' RSS sampled.
fn job(c: &Cluster, client: &Path, k: usize, n: usize) -> Run {
    let per = n.div_ceil(k).to_string();
    let mut cmd = c.srun();
    cmd.args(["--mpi=pmix", "-N", &k.to_string(), "-n", &n.to_string()])
        .args(["--ntasks-per-node", &per])
        .arg(client);
    once_sampled(c, &mut cmd, k, true)
}

/// Median [min-max] of `key` over `runs`, with `unit`.
fn spread(runs: &[Run], key: impl Fn(&Run) -> f64, unit: &str) -> (f64, String) {
    let mut v: Vec<f64> = runs.iter().map(key).collect();
    v.sort_by(f64::total_cmp);
    let med = v[v.len() / 2];
    (
        med,
        format!("{med:.1} {unit} [{:.1}-{:.1}]", v[0], v[v.len() - 1]),
    )
}

fn main() {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let client = build_c("bench_wireup", &out).unwrap_or_else(|e| panic!("{e}"));
    let reps = list("BENCH_REPS", &[5])
        .first()
        .copied()
        .unwrap_or(5)
        .max(1);
    let nodes = list("BENCH_NODES", &[1, 2]);
    let sizes = list("BENCH_N", &[8, 64, 256]);
    let most = nodes.iter().copied().max().unwrap_or(1);
    if most > MAX_NODES {
        eprintln!("BENCH_NODES asks for {most} nodes, a cluster has at most {MAX_NODES}");
        exit(1);
    }
    let ctx = grid::Ctx::new(env!("CARGO_BIN_EXE_pmixw").into(), out.join("wireup-stepd"));
    let lib = grid::our_libpmix(&ctx).unwrap_or_else(|e| {
        eprintln!("{e}");
        exit(1)
    });
    // before the clusters start: their stepds, orphaned, become our children
    if !become_subreaper() {
        eprintln!("cannot become a child subreaper: the stepds' CPU would not be counted");
        exit(1);
    }
    let start = |serving: bool| {
        let r = if serving {
            Cluster::start_serving_traced(most, &lib.join("libpmix.so.2"), false)
        } else {
            Cluster::start(most)
        };
        r.unwrap_or_else(|e| {
            eprintln!("cannot start a Slurm cluster: {e}");
            exit(1)
        })
    };
    let (theirs, ours) = (start(false), start(true));
    println!(
        "wireup of N libpmix 4.2.2 clients under srun --mpi=pmix on k nodes, slurmstepd on \
         libpmix 4.2.2 and on pmix-wire's libpmix, {reps} jobs of each alternating; ratios of \
         the medians, libpmix/ours"
    );
    let mut summary = Vec::new();
    for &k in &nodes {
        // the first job on a node loads Slurm's plugins there
        job(&theirs, &client, k, k);
        job(&ours, &client, k, k);
        for &n in &sizes {
            if n < k {
                continue;
            }
            if n.div_ceil(k) > TASKS_PER_NODE {
                println!("nodes={k} N={n} skipped: more than {TASKS_PER_NODE} ranks a node");
                continue;
            }
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for _ in 0..reps {
                a.push(job(&theirs, &client, k, n));
                b.push(job(&ours, &client, k, n));
            }
            let short = a.iter().chain(&b).filter(|r| r.stepds < k).count();
            let cols: [Column; 3] = [
                ("wall", |r| ms(r.wall), "ms"),
                ("stepd cpu", Run::stepd_cpu_ms, "ms"),
                ("stepd rss", |r| r.stepd_rss_kib as f64 / 1024.0, "MB"),
            ];
            let mut ratios = Vec::new();
            let mut lines = Vec::new();
            for (name, key, unit) in cols {
                let (ma, sa) = spread(&a, key, unit);
                let (mb, sb) = spread(&b, key, unit);
                ratios.push(format!("{name} {:.2}x", ma / mb.max(1e-3)));
                lines.push(format!(
                    "    {name} median [min-max]: libpmix {sa}, ours {sb}"
                ));
            }
            println!("nodes={k} N={n} libpmix/ours: {}", ratios.join(", "));
            for l in lines {
                println!("{l}");
            }
            if short > 0 {
                println!("    ({short} jobs had fewer than {k} stepds reaped: their CPU is short)");
            }
            a.sort_by_key(|r| r.wall);
            b.sort_by_key(|r| r.wall);
            println!("{}", phases_line("lib", &a[reps / 2]));
            println!("{}", phases_line("ours", &b[reps / 2]));
            summary.push(format!(
                "nodes={k} N={n} libpmix/ours: {}",
                ratios.join(", ")
            ));
        }
    }
    println!("summary:");
    for l in summary {
        println!("{l}");
    }
    theirs.stop();
    ours.stop();
    let _ = std::fs::remove_dir_all(&ctx.scratch);
}
