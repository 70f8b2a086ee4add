//! Launcher cost at thousands of ranks (issue 37 item 3): N light ranks
//! (pmixw/examples/light_rank.rs: pmix-wire's client alone; init, K
//! endpoint blobs put, commit, fence with data, the blobs of P peers read,
//! finalize) on k nodes of the private Slurm cluster (interop/src/slurm,
//! slurmd instances on loopback ports), N/k per node, under
//!
//! * Slurm's: `srun --mpi=pmix -N k --ntasks-per-node=N/k light_rank`
//!   (libpmix inside each slurmstepd), and
//! * ours: `srun --mpi=pmi2 -N k --ntasks-per-node=1 pmixw run -n N
//!   light_rank` (our server on each node, the fence through Slurm's
//!   PMI-2, the rest over our bridge),
//!
//! alternating, `BENCH_REPS` (default 3) jobs of each per point, in one
//! run. One line per point:
//!
//!     nodes=<k> N=<n> srun/ours=<r>x cpu srun/ours=<c>x
//!
//! the ratios of the median walls of the whole srun and of the median
//! launcher CPU (srun, the slurmstepds and, for ours, `pmixw run`: the
//! CPU of the job's process tree less the ranks' own work from their
//! `main` on and less, a rank, what the light rank costs to start and end
//! when started by a plain posix_spawn, measured before each point's
//! jobs: test-kit/src/wireup.rs), then both walls and CPUs, what a rank's
//! process cost before its `main` on each side (the launcher's work in the
//! child it forked is there), the CPU counted as before 2026-12-03 evening
//! (less the ranks' whole reports), and per rank what our
//! nodes exchanged with each other (the `PMIXW_TRAFFIC` reports: fence
//! data, PMI-2 messages and bytes, bridge frames and bytes). Slurm's side
//! between its stepds is not counted (it is inside libpmix and Slurm).
//!
//! A point is skipped, and the bench says why, when N/k is more than a
//! node may run (slurm::TASKS_PER_NODE), when N ranks would not fit the
//! process limit, or when N times the largest rank RSS measured by the
//! warm-up jobs, plus the servers' share, is more than half of
//! MemAvailable. The servers' share is measured: each side's nodes' peak
//! RSS at the last point of the same k (the stepds' trees through
//! `wait4`, and ours also `pmixw run --stats`), scaled by N over that
//! point's N; before any point of that k has run, as much again as the
//! ranks' own. Not a test: nothing asserts a speed; it stops if
//! a job fails. The light rank is an example, built first:
//!
//!     cargo build --release -p pmixw --example light_rank
//!     nice -n 19 cargo bench -p pmixw --bench wireup_scale
//!
//!     BENCH_NODES=2,4,8,16   nodes per point (default)
//!     BENCH_N=512,1024,2048,4096   ranks per point (default)
//!     BENCH_REPS=3           jobs of each side per point
//!     BENCH_KEYS=4 BENCH_PEERS=8 BENCH_BLOB=96   the light rank's K, P and
//!                            largest blob (bytes)
//!     BENCH_LIGHT_RANK=path  another light_rank binary

use pmix_test_kit::slurm::{Cluster, MAX_NODES, TASKS_PER_NODE};
use pmix_test_kit::wireup::{
    alternate, bare_start_us, become_subreaper, list, meminfo_kib, ms, nproc_limit, phases_line,
    traffic_lines, warm_up, Run,
};
use std::path::PathBuf;
use std::process::exit;

/// Where cargo puts the example beside this bench (target/<profile>/examples).
fn light_rank() -> PathBuf {
    if let Some(p) = std::env::var_os("BENCH_LIGHT_RANK") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().unwrap_or_default();
    // target/<profile>/deps/wireup_scale-<hash>
    let profile = exe
        .parent()
        .and_then(|d| d.parent())
        .map(|d| d.to_path_buf())
        .unwrap_or_default();
    profile.join("examples").join("light_rank")
}

fn median_by(v: &mut [Run], key: impl Fn(&Run) -> f64) -> f64 {
    v.sort_by(|a, b| key(a).total_cmp(&key(b)));
    key(&v[v.len() / 2])
}

fn main() {
    let light = light_rank();
    if !light.is_file() {
        eprintln!(
            "no light rank at {}: build it first with\n    cargo build --release -p pmixw --example light_rank",
            light.display()
        );
        exit(1);
    }
    let pmixw = env!("CARGO_BIN_EXE_pmixw");
    let reps = list("BENCH_REPS", &[3])
        .first()
        .copied()
        .unwrap_or(3)
        .max(1);
    let nodes: Vec<usize> = list("BENCH_NODES", &[2, 4, 8, 16]);
    let sizes = list("BENCH_N", &[512, 1024, 2048, 4096]);
    let one = |var: &str, d: usize| list(var, &[d]).first().copied().unwrap_or(d);
    let rank_args = [
        one("BENCH_KEYS", 4).to_string(),
        one("BENCH_PEERS", 8).to_string(),
        one("BENCH_BLOB", 96).to_string(),
    ];
    let most = nodes.iter().copied().max().unwrap_or(2);
    if most > MAX_NODES {
        eprintln!("BENCH_NODES asks for {most} nodes, the cluster has at most {MAX_NODES}");
        exit(1);
    }
    // before the cluster starts: its stepds, orphaned, become our children
    let cpu = become_subreaper();
    if !cpu {
        println!("(not a subreaper: the launchers' CPU is not counted)");
    }
    let c = Cluster::start(most).unwrap_or_else(|e| {
        eprintln!("cannot start the Slurm cluster: {e}");
        exit(1)
    });
    println!(
        "wireup of N light ranks (K={} P={} blob={} B) on k Slurm nodes (N/k each), {reps} jobs \
         of each side alternating; ratios of the medians",
        rank_args[0], rank_args[1], rank_args[2]
    );
    let mut summary = Vec::new();
    let mut skipped = Vec::new();
    for &k in &nodes {
        // one unmeasured job of each side first; their ranks' RSS sizes
        // the points
        let warm = warm_up(&c, k, pmixw, &light, &rank_args);
        // the last point run on k nodes: its N and each side's servers'
        // peak RSS in all (KiB)
        let mut last: Option<(usize, u64)> = None;
        let rss = warm
            .iter()
            .map(|r| r.rank_rss_kib)
            .max()
            .unwrap_or(0)
            .max(1024);
        for &n in &sizes {
            if n < k {
                continue;
            }
            let per = n.div_ceil(k);
            // the servers' share: measured at the last point of k nodes
            // and scaled by N (their data grows with N: every node holds
            // every rank's record and the job info); before one ran, a
            // rank's RSS again per rank
            let (share_kib, share_how) = match last {
                Some((n1, kib)) => (
                    kib * n as u64 / n1.max(1) as u64,
                    format!("servers {} KiB at N={n1}, x {n}/{n1}", kib),
                ),
                None => (
                    n as u64 * rss,
                    format!("servers as much again, no N on {k} nodes yet"),
                ),
            };
            let need_kib = n as u64 * rss + share_kib;
            let avail = meminfo_kib("MemAvailable");
            let why = if per > TASKS_PER_NODE {
                Some(format!(
                    "{per} ranks per node, a node runs at most {TASKS_PER_NODE}"
                ))
            } else if nproc_limit().is_some_and(|l| (n as u64) * 2 > l) {
                Some(format!(
                    "2 x {n} processes are more than the process limit {:?}",
                    nproc_limit()
                ))
            } else if avail > 0 && need_kib > avail / 2 {
                Some(format!(
                    "needs ~{} MB ({n} ranks x {rss} KiB measured; {share_how}), more than \
                     half of MemAvailable {} MB",
                    need_kib / 1024,
                    avail / 1024
                ))
            } else {
                None
            };
            if let Some(why) = why {
                println!("nodes={k} N={n} skipped: {why}");
                skipped.push((k, n, why));
                continue;
            }
            // what a light rank's process costs by itself, started and
            // ended with no launcher work: the same for both sides
            let bare = bare_start_us(&light, n);
            let (mut slurm, mut ours) =
                alternate(&c, (k, n, reps), pmixw, (&light, &rank_args), &["--stats"]);
            // each side's servers, the larger of its jobs (ours: the
            // stepds' trees, or the nodes' own report if larger)
            let servers = |v: &[Run]| {
                v.iter()
                    .map(|r| r.stepd_tree_rss_kib.max(r.server_rss_kib))
                    .max()
                    .unwrap_or(0)
            };
            let (srv_s, srv_o) = (servers(&slurm), servers(&ours));
            last = Some((n, srv_s.max(srv_o)));
            let wall_s = median_by(&mut slurm, |r| ms(r.wall));
            let cpu_s = median_by(&mut slurm, |r| r.launcher_cpu_ms(bare));
            let whole_s = median_by(&mut slurm, Run::launcher_cpu_whole_ms);
            let wall_o = median_by(&mut ours, |r| ms(r.wall));
            let cpu_o = median_by(&mut ours, |r| r.launcher_cpu_ms(bare));
            let whole_o = median_by(&mut ours, Run::launcher_cpu_whole_ms);
            // a rank's process before its main, µs (the launcher's work in
            // its child, exec, loader), the medians
            let before_main = |v: &mut [Run]| {
                median_by(v, |r| {
                    r.rank_cpu_us.saturating_sub(r.rank_main_cpu_us) as f64 / r.ranks.max(1) as f64
                })
            };
            let (pre_s, pre_o) = (before_main(&mut slurm), before_main(&mut ours));
            let ratio = wall_s / wall_o;
            let cratio = cpu_s / cpu_o.max(1e-3);
            println!("nodes={k} N={n} srun/ours={ratio:.2}x cpu srun/ours={cratio:.2}x");
            println!("    wall median: srun --mpi=pmix {wall_s:.0} ms, ours {wall_o:.0} ms");
            println!(
                "    servers' peak RSS, all nodes (KiB): srun --mpi=pmix {srv_s}, ours {srv_o}"
            );
            let stepds = |v: &[Run]| v.iter().map(|r| r.stepds).min().unwrap_or(0);
            println!(
                "    launcher CPU median (srun + stepds + pmixw run, less the ranks' own from \
                 main on and a bare start and end, {bare:.0} us, a rank): srun --mpi=pmix \
                 {cpu_s:.0} ms, ours {cpu_o:.0} ms ({} and {} of {k} stepds reaped per job, \
                 at least)",
                stepds(&slurm),
                stepds(&ours)
            );
            println!(
                "    a rank's process before its main (median, us): srun --mpi=pmix {pre_s:.0}, \
                 ours {pre_o:.0}; counted as before (less the ranks' whole reports): srun \
                 {whole_s:.0} ms, ours {whole_o:.0} ms, cpu srun/ours={:.2}x",
                whole_s / whole_o.max(1e-3)
            );
            // the median wall's job of ours for its traffic and phases
            median_by(&mut ours, |r| ms(r.wall));
            median_by(&mut slurm, |r| ms(r.wall));
            let (s, o) = (&slurm[reps / 2], &ours[reps / 2]);
            let t = &o.traffic;
            let per_rank = |key: &str| *t.get(key).unwrap_or(&0) as f64 / n as f64;
            println!(
                "    ours between nodes, per rank in all: {:.0} B, {:.3} messages",
                per_rank("put_bytes") + per_rank("get_bytes") + per_rank("bridge_bytes"),
                per_rank("put") + per_rank("fence") + per_rank("get") + per_rank("bridge_frames"),
            );
            println!("{}", traffic_lines(o, n, k));
            for (who, r) in [("srun", s), ("ours", o)] {
                println!(
                    "{}; rank RSS max {} KiB",
                    phases_line(who, r),
                    r.rank_rss_kib
                );
            }
            summary.push((k, n, ratio, cratio));
        }
    }
    println!("summary (targets: srun/ours >= 1.5x, cpu srun/ours >= 2x):");
    for (k, n, r, cr) in summary {
        println!("nodes={k} N={n} srun/ours={r:.2}x cpu srun/ours={cr:.2}x");
    }
    for (k, n, why) in skipped {
        println!("nodes={k} N={n} skipped: {why}");
    }
    c.stop();
}
