//! A light rank (issue 37): what an MPI rank does at wireup, on
//! pmix-wire's client alone (no libpmix, no hwloc, nothing loaded but
//! libc), so that its own cost is tiny and the same under every launcher
//! and what a wireup bench measures is the launcher's.
//!
//! init; put K keys as Open MPI 5 does (endpoint blobs: `btl.tcp.5.0`,
//! `pml.ucx.5.0` in PMIX_GLOBAL scope, `btl.sm.5.0` and `MPI_THREAD_LEVEL`
//! in PMIX_LOCAL, then
//! further global blobs if K > 4); commit; fence with data; get the global keys of
//! P peers spread over the job (with the usual block placement some are on
//! other nodes), each value checked; finalize. It prints its peak RSS
//! (`rss <KiB>`), its CPU time (`cpu <ns>`, every thread's) and when each phase ended (`t <phase> <µs since the
//! epoch>`), the lines interop/c/bench_wireup.c prints, so the wireup
//! benches read both alike; nothing is printed before finalize.
//!
//!     pmixw run -n 8 target/release/examples/light_rank [K [P [BLOB]]]
//!     srun --mpi=pmix -n 8 target/release/examples/light_rank
//!
//! K (default 4) keys, P (default 8, at most N - 1) peers, BLOB (default
//! 96) the size in bytes of the largest endpoint blob. Exit status 1 with a
//! message on any failure (a wrong value included). `cpu_main <ns>` is its
//! CPU time when `main` began (what its start cost before its own code
//! ran: the launcher's work in the forked child, exec, the loader), so
//! `cpu - cpu_main` is the rank's own work.
//!
//!     light_rank bare
//!
//! does no PMIx at all: it prints `cpu` and `cpu_main` and exits, for a
//! bench to measure what starting and ending the program costs by itself.

use pmix_types::enums::Scope;
use pmix_types::keys::typed;
use pmix_types::Proc;
use pmix_wire::client::{Client, FenceOpts};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const PHASES: [&str; 6] = ["start", "init", "commit", "fence", "get", "finalize"];

/// Key `k` of a rank: its name, whether peers on every node read it (global scope), and
/// its size for a largest blob of `blob` bytes.
fn key(k: usize, blob: usize) -> (String, bool, usize) {
    match k {
        0 => ("btl.tcp.5.0".into(), true, (blob / 2).max(8)),
        1 => ("pml.ucx.5.0".into(), true, blob.max(8)),
        2 => ("btl.sm.5.0".into(), false, 64),
        3 => ("MPI_THREAD_LEVEL".into(), false, 4),
        k => (format!("light.blob.{k}"), true, (blob / 2).max(8)),
    }
}

/// The bytes rank `r` puts under key `k`: a pattern of both, so a value
/// read back from the wrong rank or key is seen.
fn blob(r: u32, k: usize, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (r as usize * 31 + k * 7 + i) as u8)
        .collect()
}

fn now_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

/// This process's CPU time so far in ns, every thread's, user and system
/// (CLOCK_PROCESS_CPUTIME_ID: the kernel brings the running thread's time
/// up to date before it answers; /proc/self/schedstat, read before,
/// lagged by what the thread had run since it was last scheduled, up to
/// a tick: about 0.8 ms a rank was missing from its report); 0 on failure.
fn cpu_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through the pointer
    if unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) } != 0 {
        return 0;
    }
    (t.tv_sec as u64).saturating_mul(1_000_000_000) + t.tv_nsec as u64
}

/// Peak resident set in KiB (VmHWM), 0 where /proc says nothing.
fn peak_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

fn arg(i: usize, default: usize) -> Result<usize, String> {
    match std::env::args().nth(i) {
        None => Ok(default),
        Some(a) => a
            .parse()
            .map_err(|_| format!("argument {i}: {a:?} is not a count")),
    }
}

fn rank() -> Result<(), Box<dyn std::error::Error>> {
    let (keys, peers, big) = (arg(1, 4)?, arg(2, 8)?, arg(3, 96)?);
    let cpu0 = cpu_ns();
    let mut t = [0i64; 6];
    t[0] = now_us();
    let mut c = Client::init()?;
    t[1] = now_us();
    let me = c.rank().wire();
    let n: u32 = c.get_key(typed::JOB_SIZE)?;
    for k in 0..keys {
        let (name, global, len) = key(k, big);
        let scope = if global { Scope::GLOBAL } else { Scope::LOCAL };
        c.put(scope, &name, blob(me, k, len));
    }
    c.commit()?;
    t[2] = now_us();
    c.fence(
        FenceOpts::new()
            .collect_data(true)
            .timeout(Duration::from_secs(600)),
    )?;
    t[3] = now_us();
    // P peers spread evenly over the others: me + 1 + j·N/P
    let peers = peers.min(n.saturating_sub(1) as usize) as u32;
    let step = n.checked_div(peers).unwrap_or(1).max(1);
    for j in 0..peers {
        let r = (me + 1 + j * step) % n;
        let r = if r == me { (r + 1) % n } else { r };
        let peer = Proc {
            rank: r,
            ..c.proc().clone()
        };
        for k in (0..keys).filter(|&k| key(k, big).1) {
            let (name, _, len) = key(k, big);
            let got: Vec<u8> = c.get(&peer, &name)?;
            if got != blob(r, k, len) {
                return Err(format!("rank {me}: {name} of rank {r} is not what it put").into());
            }
        }
    }
    t[4] = now_us();
    c.finalize()?;
    t[5] = now_us();
    let mut out = format!("rss {}\ncpu {}\ncpu_main {}\n", peak_kib(), cpu_ns(), cpu0);
    for (p, t) in PHASES.iter().zip(t) {
        out.push_str(&format!("t {p} {t}\n"));
    }
    print!("{out}");
    Ok(())
}

fn main() {
    // `light_rank bare`: no PMIx at all, the two CPU lines and exit: what
    // starting and ending this program costs, the same under any launcher
    // (wireup_scale subtracts it from both sides' launcher CPU)
    if std::env::args().nth(1).as_deref() == Some("bare") {
        let cpu0 = cpu_ns();
        print!("cpu {}\ncpu_main {cpu0}\n", cpu_ns());
        return;
    }
    if let Err(e) = rank() {
        eprintln!("light_rank: {e}");
        std::process::exit(1);
    }
}
