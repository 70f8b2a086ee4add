//! What the multi-node wireup benches share (pmixw/benches/wireup_slurm.rs,
//! wireup_scale.rs, wireup_stepd.rs): one job under the private Slurm
//! cluster, timed, with the phase stamps its ranks print (`t <phase> <µs
//! since the epoch>`, interop/c/bench_wireup.c and
//! pmixw/examples/light_rank.rs), our nodes' `PMIXW_TRAFFIC` reports, the
//! launchers' own CPU, the stepds' own CPU and (sampled) peak RSS.
//!
//! The launchers' CPU: a job step's `slurmstepd` is no child of ours
//! (slurmd daemonizes it), so the bench makes itself a child subreaper
//! ([`become_subreaper`], before the cluster starts): each step's stepd,
//! orphaned, becomes our child, and when it exits we reap it
//! ([`reap_stepds`]). Then the CPU of our terminated children
//! (`getrusage(RUSAGE_CHILDREN)`) grows, over one job, by srun's, every
//! stepd's and everything the stepds waited for: the tasks (ours:
//! `pmixw run` and its ranks; Slurm's: the ranks). The ranks report their
//! own CPU (`cpu <ns>`, every thread's: the light rank from
//! CLOCK_PROCESS_CPUTIME_ID, bench_wireup.c from getrusage), and what is
//! left is the launchers': srun, slurmstepd and, for ours, `pmixw run`.
//! Each stepd's own usage comes from the `wait4` that reaps it (its and
//! its tasks'), less the ranks' reports.
//!
//! A rank's report holds what its process cost before its `main` began:
//! the launcher's own work in the child it forked (slurmstepd's task
//! set-up runs there, ~1.6 ms a rank; ours starts ranks with
//! posix_spawn), the exec and the loader. The light rank also reports
//! that part (`cpu_main <ns>`), and [`Run::launcher_cpu_ms`] gives the
//! launcher what is its own: the tree's CPU less the ranks' work from
//! `main` on, less what the same program costs to start and end when
//! nothing but a plain posix_spawn starts it ([`bare_start_us`], measured
//! in the same run), the same for either launcher.

use crate::slurm::{which, Cluster};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The phases each rank stamps.
pub const PHASES: [&str; 6] = ["start", "init", "commit", "fence", "get", "finalize"];

/// One job.
pub struct Run {
    /// srun's wall time.
    pub wall: Duration,
    /// Per phase: when the last rank ended it, in ms after the launch.
    pub phases: [f64; 6],
    /// Our nodes' traffic counters, summed over the nodes (ours only).
    pub traffic: BTreeMap<String, u64>,
    /// CPU of srun, the stepds and their descendants, in µs (0 unless the
    /// bench is a subreaper and every stepd was reaped).
    pub tree_cpu_us: u64,
    /// The ranks' own CPU as they reported it (`cpu <ns>` lines), in µs.
    pub rank_cpu_us: u64,
    /// The ranks' CPU from their `main` on, in µs: their `cpu` less their
    /// `cpu_main` (the light rank prints both; bench_wireup.c's ranks,
    /// without it, count whole).
    pub rank_main_cpu_us: u64,
    /// How many ranks reported (`cpu` lines).
    pub ranks: usize,
    /// How many stepds were reaped after the job.
    pub stepds: usize,
    /// CPU of the reaped stepds and of the tasks they waited for, in µs
    /// ([`reap_stepds`]).
    pub stepd_cpu_us: u64,
    /// The largest peak RSS of a stepd of the job, in KiB ([`StepdRss`];
    /// 0 unless sampled, [`once_sampled`]).
    pub stepd_rss_kib: u64,
    /// The largest peak RSS a rank reported (`rss <KiB>` lines), in KiB.
    pub rank_rss_kib: u64,
    /// The peak RSS of each reaped stepd's tree, summed over them, in KiB:
    /// per stepd the largest of its own and its waited-for descendants'
    /// (`wait4`'s `ru_maxrss`), i.e. the node's server for either side
    /// (Slurm's libpmix lives in the stepd; ours is `pmixw run`, the
    /// stepd's child), unless a rank outgrew it.
    pub stepd_tree_rss_kib: u64,
    /// The `server_rss <KiB>` lines of ours (`pmixw run --stats`, one a
    /// node), summed, in KiB; 0 without them.
    pub server_rss_kib: u64,
}

impl Run {
    /// The launchers' CPU (srun, slurmstepd, `pmixw run`), in ms: the
    /// tree's less the ranks' work from `main` on and less `bare_us` (µs:
    /// [`bare_start_us`]) a rank for its process's own start and end.
    pub fn launcher_cpu_ms(&self, bare_us: f64) -> f64 {
        let left = self.tree_cpu_us.saturating_sub(self.rank_main_cpu_us) as f64;
        (left - bare_us * self.ranks as f64).max(0.0) / 1e3
    }

    /// The tree's CPU less the ranks' whole reports, in ms: the launchers'
    /// CPU as counted before 2026-12-03 evening, a rank's start before its
    /// `main` (the launcher's part in it too) given to the rank, and the
    /// process's end after its report to the launcher.
    pub fn launcher_cpu_whole_ms(&self) -> f64 {
        self.tree_cpu_us.saturating_sub(self.rank_cpu_us) as f64 / 1e3
    }

    /// The stepds' own CPU, in ms: theirs and their tasks' ([`reap_stepds`])
    /// less what the ranks report as their own.
    pub fn stepd_cpu_ms(&self) -> f64 {
        self.stepd_cpu_us.saturating_sub(self.rank_cpu_us) as f64 / 1e3
    }
}

/// Make this process the subreaper of its descendants (Linux
/// `PR_SET_CHILD_SUBREAPER`): orphaned stepds become its children. Call it
/// before the cluster starts.
pub fn become_subreaper() -> bool {
    // SAFETY: prctl with integer arguments only
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 }
}

/// CPU (user + system) of this process's terminated, waited-for children
/// and their waited-for descendants, in µs.
pub fn children_cpu_us() -> u64 {
    // SAFETY: getrusage on a zeroed local struct
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru);
        tv_us(ru.ru_utime) + tv_us(ru.ru_stime)
    }
}

/// Our zombie children named `slurmstepd`.
fn zombie_stepds() -> Vec<i32> {
    let me = std::process::id().to_string();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            // "pid (comm) state ppid …"
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            let Some((comm, rest)) = stat.split_once(" (").and_then(|(_, r)| r.rsplit_once(") "))
            else {
                return false;
            };
            let mut f = rest.split_whitespace();
            comm == "slurmstepd" && f.next() == Some("Z") && f.next() == Some(me.as_str())
        })
        .collect()
}

/// Reap the stepds of the last job (`want` of them, one per node of the
/// step) as they exit, waiting up to `limit`: how many were reaped,
/// their CPU (user + system, in µs, as `wait4` reports it: each stepd's
/// own and that of the children it waited for, its tasks), and the sum of
/// their trees' peak RSS in KiB (per stepd `wait4`'s `ru_maxrss`: the
/// largest of its own and its waited-for descendants'). Only zombies
/// named slurmstepd whose parent we are are waited for, so the cluster's
/// own daemons (our children too) are left alone.
pub fn reap_stepds(want: usize, limit: Duration) -> (usize, u64, u64) {
    let start = Instant::now();
    let (mut got, mut cpu_us, mut rss) = (0, 0, 0u64);
    // one look at least (a limit of zero: the zombies there now)
    loop {
        for pid in zombie_stepds() {
            let mut status = 0;
            // SAFETY: wait4 on one pid that is our zombie child, into a
            // zeroed local struct
            let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
            if unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut ru) } == pid {
                got += 1;
                cpu_us += tv_us(ru.ru_utime) + tv_us(ru.ru_stime);
                rss += ru.ru_maxrss.max(0) as u64;
            }
        }
        if got >= want || start.elapsed() >= limit {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    (got, cpu_us, rss)
}

fn tv_us(t: libc::timeval) -> u64 {
    t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64
}

/// Samples the peak RSS (`VmHWM` of `/proc/<pid>/status`) of a cluster's
/// slurmstepds while a job runs, from a thread of its own, every
/// [`StepdRss::EVERY`]: VmHWM only grows, so the last sample of a stepd
/// is its peak up to then (what it reaches in its last few ms before it
/// exits is missed). A process named slurmstepd is asked once whether it
/// is a stepd of the cluster ([`crate::slurm::is_stepd_of`]); one named
/// otherwise (but slurmd, whose child is about to exec slurmstepd) is
/// passed over from then on, a task once it has exec'd among them.
pub struct StepdRss {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<u64>,
}

impl StepdRss {
    /// How often the stepds are sampled.
    pub const EVERY: Duration = Duration::from_millis(10);

    /// Start sampling the stepds of the cluster whose slurm.conf is `conf`.
    pub fn start(conf: &Path) -> StepdRss {
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let (flag, conf) = (stop.clone(), conf.to_path_buf());
        let thread = std::thread::spawn(move || {
            let mut seen: BTreeMap<u32, bool> = BTreeMap::new();
            let mut peak: BTreeMap<u32, u64> = BTreeMap::new();
            loop {
                let last = flag.load(Ordering::Relaxed);
                let pids = std::fs::read_dir("/proc")
                    .into_iter()
                    .flatten()
                    .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok());
                for pid in pids {
                    if seen.get(&pid) == Some(&false) {
                        continue;
                    }
                    let comm =
                        std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
                    match comm.trim() {
                        // a stepd, or a task it forked that has not yet
                        // exec'd (its RSS the stepd's pages it shares)
                        "slurmstepd" => {
                            let ours = *seen
                                .entry(pid)
                                .or_insert_with(|| crate::slurm::is_stepd_of(pid, &conf));
                            if let Some(kib) = ours.then(|| hwm_kib(pid)).flatten() {
                                let p = peak.entry(pid).or_insert(0);
                                *p = (*p).max(kib);
                            }
                        }
                        // slurmd's child before it execs slurmstepd
                        "slurmd" => {}
                        _ => {
                            seen.insert(pid, false);
                        }
                    }
                }
                if last {
                    return peak.values().copied().max().unwrap_or(0);
                }
                std::thread::sleep(Self::EVERY);
            }
        });
        StepdRss { stop, thread }
    }

    /// One last sample, then the largest peak RSS of any stepd seen, in
    /// KiB (0: none seen).
    pub fn finish(self) -> u64 {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread.join().unwrap_or(0)
    }
}

/// `VmHWM` of a live process, in KiB.
fn hwm_kib(pid: u32) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Wait (up to 30 s) until no job is left and every node is idle: a job
/// submitted while the last one's nodes are still completing waits for
/// the scheduler's next pass ("queued and waiting for resources", 0.3-3 s
/// seen), which is no part of either side's wireup.
pub fn settle(c: &Cluster) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(30) {
        let out = |prog: &str, args: &[&str]| {
            Command::new(which(prog).unwrap_or_else(|| prog.into()))
                .envs(c.env())
                .args(args)
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                .unwrap_or_default()
        };
        let jobs = out("squeue", &["-h"]);
        let nodes = out("sinfo", &["-h", "-N", "-o", "%t"]);
        if jobs.trim().is_empty() && nodes.lines().all(|l| l.trim() == "idle") {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Run one job on `nodes` nodes (after [`settle`]), exit the bench with its
/// output if it fails; then reap its stepds (up to 10 s) and count the
/// tree's CPU.
pub fn once(c: &Cluster, cmd: &mut Command, nodes: usize) -> Run {
    once_sampled(c, cmd, nodes, false)
}

/// [`once`], and with `rss` the stepds' peak RSS sampled meanwhile
/// ([`StepdRss`], a thread of the bench: off where only CPU and wall are
/// wanted, its polling competing with the job).
pub fn once_sampled(c: &Cluster, cmd: &mut Command, nodes: usize, rss: bool) -> Run {
    settle(c);
    // stepds of an earlier job that ended late are not this job's
    reap_stepds(usize::MAX, Duration::ZERO);
    let sampler = rss.then(|| StepdRss::start(c.conf()));
    let cpu0 = children_cpu_us();
    let epoch_us = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64);
    let start = Instant::now();
    let o = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("srun");
    let wall = start.elapsed();
    if !o.status.success() {
        eprintln!(
            "!! job failed: {cmd:?}\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
        std::process::exit(1);
    }
    let (stepds, stepd_cpu_us, stepd_tree_rss_kib) = reap_stepds(nodes, Duration::from_secs(10));
    let stepd_rss_kib = sampler.map_or(0, StepdRss::finish);
    let tree_cpu_us = children_cpu_us().saturating_sub(cpu0);
    let out = String::from_utf8_lossy(&o.stdout);
    let mut phases = [0f64; 6];
    for (i, p) in PHASES.iter().enumerate() {
        let tag = format!("t {p} ");
        let last = out
            .lines()
            .filter_map(|l| l.strip_prefix(&tag)?.trim().parse::<i64>().ok())
            .max();
        phases[i] = last.map_or(0.0, |t| (t - epoch_us) as f64 / 1e3);
    }
    let (rank_cpu_us, rank_main_cpu_us, ranks) = rank_cpu(&out);
    let rank_rss_kib = out
        .lines()
        .filter_map(|l| l.strip_prefix("rss ")?.trim().parse::<u64>().ok())
        .max()
        .unwrap_or(0);
    let err = String::from_utf8_lossy(&o.stderr);
    let server_rss_kib = err
        .lines()
        .filter_map(|l| {
            l.trim()
                .strip_prefix("server_rss ")?
                .trim()
                .parse::<u64>()
                .ok()
        })
        .sum();
    // "pmixw-traffic node=<i> key=value …", one line per node
    let mut traffic = BTreeMap::new();
    for l in err.lines() {
        let Some(rest) = l.trim().strip_prefix("pmixw-traffic ") else {
            continue;
        };
        for kv in rest.split_whitespace() {
            if let Some((k, v)) = kv.split_once('=') {
                if k != "node" {
                    *traffic.entry(k.to_string()).or_insert(0) += v.parse::<u64>().unwrap_or(0);
                }
            }
        }
        *traffic.entry("nodes".into()).or_insert(0) += 1;
    }
    Run {
        wall,
        phases,
        traffic,
        tree_cpu_us,
        rank_cpu_us,
        rank_main_cpu_us,
        ranks,
        stepds,
        stepd_cpu_us,
        stepd_rss_kib,
        rank_rss_kib,
        stepd_tree_rss_kib,
        server_rss_kib,
    }
}

/// The ranks' CPU in µs from their output: their `cpu <ns>` lines summed,
/// the same less their `cpu_main <ns>` lines (each light rank prints one;
/// summed, as the lines of the ranks may interleave), and how many
/// reported.
fn rank_cpu(out: &str) -> (u64, u64, usize) {
    let field = |l: &str, key: &str| l.strip_prefix(key)?.trim().parse::<u64>().ok();
    let (mut whole, mut before_main, mut ranks) = (0u64, 0u64, 0usize);
    for l in out.lines() {
        if let Some(v) = field(l, "cpu ") {
            whole += v;
            ranks += 1;
        } else if let Some(v) = field(l, "cpu_main ") {
            before_main += v;
        }
    }
    (
        whole / 1_000,
        whole.saturating_sub(before_main) / 1_000,
        ranks,
    )
}

/// What the program `prog` costs to start and end by itself, in µs of CPU
/// a process: `n` of `prog bare` (the light rank's mode that prints its
/// `cpu` and `cpu_main` and exits) started by this process with a plain
/// posix_spawn (std's, no pre-exec work), 16 at a time, their CPU as
/// `getrusage(RUSAGE_CHILDREN)` grows, less the little they report from
/// `main` on. 0 when a start fails or `n` is 0. Call between jobs (the
/// stepds this process reaps count in the same usage).
pub fn bare_start_us(prog: &Path, n: usize) -> f64 {
    let cpu0 = children_cpu_us();
    let mut own = 0u64;
    let mut left = n;
    while left > 0 {
        let batch = left.min(16);
        let kids: Vec<_> = (0..batch)
            .map(|_| {
                Command::new(prog)
                    .arg("bare")
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::null())
                    .spawn()
            })
            .collect();
        for k in kids {
            let Ok(out) = k.and_then(|k| k.wait_with_output()) else {
                return 0.0;
            };
            if !out.status.success() {
                return 0.0;
            }
            own += rank_cpu(&String::from_utf8_lossy(&out.stdout)).1;
        }
        left -= batch;
    }
    let tree = children_cpu_us().saturating_sub(cpu0);
    tree.saturating_sub(own) as f64 / n.max(1) as f64
}

/// A comma-separated list of counts from the environment, or `default`.
pub fn list(var: &str, default: &[usize]) -> Vec<usize> {
    std::env::var(var)
        .ok()
        .map(|v| v.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| default.to_vec())
}

/// Milliseconds of a duration.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// A line of /proc/meminfo in KiB (`MemAvailable`, …), 0 if absent.
pub fn meminfo_kib(key: &str) -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// This process's soft limit on processes (RLIMIT_NPROC, from
/// /proc/self/limits), or None when unlimited or unknown.
pub fn nproc_limit() -> Option<u64> {
    std::fs::read_to_string("/proc/self/limits")
        .ok()?
        .lines()
        .find(|l| l.starts_with("Max processes"))?
        .split_whitespace()
        .nth(2)?
        .parse()
        .ok()
}

/// The first job on a node loads Slurm's plugins there (it took ~1 s
/// once): one job of each side on `k` nodes, one rank a node, before the
/// measured ones (Slurm's `--mpi=pmix`, then ours through PMI-2).
pub fn warm_up(c: &Cluster, k: usize, pmixw: &str, prog: &Path, args: &[String]) -> [Run; 2] {
    let ks = k.to_string();
    [
        once(
            c,
            c.srun()
                .args(["--mpi=pmix", "-N", &ks, "--ntasks-per-node=1"])
                .arg(prog)
                .args(args),
            k,
        ),
        once(
            c,
            c.srun()
                .args(["--mpi=pmi2", "-N", &ks, "--ntasks-per-node=1", pmixw])
                .args(["run", "-n", &ks])
                .arg(prog)
                .args(args),
            k,
        ),
    ]
}

/// What our nodes exchanged with each other per rank of a job of `n`
/// (the nodes' `PMIXW_TRAFFIC` reports summed), and the nodes' PMI-2 waits
/// and own CPU (of `k` nodes), and the GETs their servers answered: three
/// lines.
pub fn traffic_lines(r: &Run, n: usize, k: usize) -> String {
    let t = &r.traffic;
    let per_rank = |key: &str| *t.get(key).unwrap_or(&0) as f64 / n.max(1) as f64;
    let per_node_ms = |key: &str| *t.get(key).unwrap_or(&0) as f64 / k.max(1) as f64 / 1e3;
    format!(
        "    ours between nodes, per rank: fence data {:.0} B; PMI-2 put {:.2} msgs \
         {:.0} B, fence {:.3}, get {:.2} msgs {:.0} B; bridge {:.3} frames {:.1} B \
         (of them {:.3} fetches of a node's fence data, {:.3} direct modexes) \
         ({} node reports)\n    ours, PMI-2 waits per node (ms): put {:.1}, fence {:.1}, get {:.1}; \
         pmixw run's own CPU per node {:.1} ms\n    ours, GETs answered per rank {:.2}, \
         ranks' data sent per rank {:.1}",
        per_rank("data"),
        per_rank("put"),
        per_rank("put_bytes"),
        per_rank("fence"),
        per_rank("get"),
        per_rank("get_bytes"),
        per_rank("bridge_frames"),
        per_rank("bridge_bytes"),
        per_rank("fetch"),
        per_rank("dmodex"),
        t.get("nodes").copied().unwrap_or(0),
        per_node_ms("put_us"),
        per_node_ms("fence_us"),
        per_node_ms("get_us"),
        per_node_ms("cpu_us"),
        per_rank("server_gets"),
        per_rank("server_blobs")
    )
}

/// When the last rank of `r` ended each phase, one line for side `who`.
pub fn phases_line(who: &str, r: &Run) -> String {
    format!(
        "    phases {who:>4} (ms, last rank): {}",
        PHASES
            .iter()
            .zip(r.phases)
            .map(|(p, v)| format!("{p} {v:.0}"))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// `reps` jobs of each side of N = `n` ranks of `prog args` on `k` nodes,
/// alternating, Slurm's first: `srun --mpi=pmix -N k -n N
/// --ntasks-per-node=⌈N/k⌉` and ours, `srun --mpi=pmi2 -N k
/// --ntasks-per-node=1 pmixw run -n N --timeout 600 OURS_FLAGS` with
/// `PMIXW_TRAFFIC` set. (Slurm's runs, ours.)
pub fn alternate(
    c: &Cluster,
    (k, n, reps): (usize, usize, usize),
    pmixw: &str,
    (prog, args): (&Path, &[String]),
    ours_flags: &[&str],
) -> (Vec<Run>, Vec<Run>) {
    let (ks, ns, per) = (
        k.to_string(),
        n.to_string(),
        n.div_ceil(k.max(1)).to_string(),
    );
    let (mut slurm, mut ours) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        slurm.push(once(
            c,
            c.srun()
                .args([
                    "--mpi=pmix",
                    "-N",
                    &ks,
                    "-n",
                    &ns,
                    "--ntasks-per-node",
                    &per,
                ])
                .arg(prog)
                .args(args),
            k,
        ));
        ours.push(once(
            c,
            c.srun()
                .env("PMIXW_TRAFFIC", "1")
                .args(["--mpi=pmi2", "-N", &ks, "--ntasks-per-node=1", pmixw])
                .args(["run", "-n", &ns, "--timeout", "600"])
                .args(ours_flags)
                .arg(prog)
                .args(args),
            k,
        ));
    }
    (slurm, ours)
}

#[cfg(test)]
mod tests {
    #[test]
    fn ranks_cpu_from_main_on() {
        // two light ranks' lines, interleaved as srun may pass them on
        let out = "rss 10\ncpu 3000000\nrss 11\ncpu 5000000\ncpu_main 1000000\n\
                   t start 1\ncpu_main 2000000\n";
        assert_eq!(super::rank_cpu(out), (8_000, 5_000, 2));
        // bench_wireup.c prints no cpu_main: its ranks count whole
        assert_eq!(
            super::rank_cpu("cpu 4000000\ncpu 4000000\n"),
            (8_000, 8_000, 2)
        );
        assert_eq!(super::rank_cpu(""), (0, 0, 0));
    }
}
