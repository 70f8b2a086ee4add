//! Wireup benchmark (issue #5 item 10): N libpmix 4.2.2 clients
//! (interop/c/bench_wireup.c: init, put 4 keys, commit, fence with
//! data, get every peer's keys, finalize) under our server (`pmixw run`)
//! and under a C launcher built on libpmix's PMIx_server_init
//! (interop/c/bench_server.c), in the same run, N = 8, 32, 128 and
//! 256 (`BENCH_N` to choose).
//! Runs `BENCH_REPS` (default 5) launches of each server, alternating, and
//! prints the median wall time with its spread (and the ratio of the best), the
//! server's and the clients' peak RSS, and the ratios C/ours; then, for
//! the median runs, when the last rank ended each phase (the clients stamp
//! them), to show where the two servers' jobs part. Not a test:
//! nothing asserts a speed; it fails only if a job fails.
//!
//!     cargo bench --bench wireup

use pmix_test_kit::interop::build_c;
use std::path::{Path, PathBuf};
use std::process::{exit, Command};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The phases each client stamps (interop/c/bench_wireup.c).
const PHASES: [&str; 6] = ["start", "init", "commit", "fence", "get", "finalize"];

struct Run {
    wall: Duration,
    server_kib: u64,
    client_kib: f64,
    /// Per phase: when the last rank ended it, in ms after the launch.
    phases: [f64; 6],
}

fn once(cmd: &mut Command) -> Run {
    let epoch_us = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64);
    let start = Instant::now();
    let o = cmd.output().expect("launch");
    let wall = start.elapsed();
    if !o.status.success() {
        eprintln!(
            "!! job failed: {:?}\n{}",
            cmd,
            String::from_utf8_lossy(&o.stderr)
        );
        exit(1);
    }
    let num = |text: &[u8], tag: &str| -> Vec<u64> {
        String::from_utf8_lossy(text)
            .lines()
            .filter_map(|l| l.strip_prefix(tag))
            .filter_map(|v| v.trim().parse().ok())
            .collect()
    };
    let clients = num(&o.stdout, "rss ");
    let server = num(&o.stderr, "server_rss ");
    let mut phases = [0f64; 6];
    for (i, p) in PHASES.iter().enumerate() {
        let last = num(&o.stdout, &format!("t {p} ")).into_iter().max();
        phases[i] = last.map_or(0.0, |t| (t as i64 - epoch_us) as f64 / 1e3);
    }
    Run {
        wall,
        server_kib: server.first().copied().unwrap_or(0),
        client_kib: clients.iter().sum::<u64>() as f64 / clients.len().max(1) as f64,
        phases,
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let client = build_c("bench_wireup", &out).unwrap_or_else(|e| panic!("{e}"));
    let cserver = build_c("bench_server", &out).unwrap_or_else(|e| panic!("{e}"));
    let pmixw = Path::new(env!("CARGO_BIN_EXE_pmixw"));
    let reps: usize = std::env::var("BENCH_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    println!(
        "wireup of N libpmix 4.2.2 clients: median of {reps} [min-max]; RSS = peak (VmHWM) of the median run"
    );
    println!(
        "{:>4} {:>22} {:>22} {:>7} {:>7} {:>12} {:>12} {:>7} {:>12} {:>12}",
        "N",
        "C wall ms",
        "our wall ms",
        "C/ours",
        "(best)",
        "C srv KiB",
        "our srv KiB",
        "C/ours",
        "C cli KiB",
        "our cli KiB"
    );
    // BENCH_N="8,32" for a shorter run
    let sizes: Vec<usize> = std::env::var("BENCH_N")
        .unwrap_or_else(|_| "8,32,128,256".into())
        .split(',')
        .filter_map(|v| v.trim().parse().ok())
        .collect();
    let mut breakdown = Vec::new();
    for n in sizes {
        let ns = n.to_string();
        // the C server and ours alternate, so load changes hit both alike
        let (mut cs, mut os) = (Vec::new(), Vec::new());
        for _ in 0..reps.max(1) {
            cs.push(once(Command::new(&cserver).arg(&ns).arg(&client)));
            os.push(once(
                Command::new(pmixw)
                    .args(["run", "-n", &ns, "--stats", "--timeout", "120"])
                    .arg(&client),
            ));
        }
        cs.sort_by_key(|r| r.wall);
        os.sort_by_key(|r| r.wall);
        let (c, ours) = (&cs[cs.len() / 2], &os[os.len() / 2]);
        let spread = |v: &[Run]| format!("[{:.0}-{:.0}]", ms(v[0].wall), ms(v[v.len() - 1].wall));
        println!(
            "{:>4} {:>8.1} {:>13} {:>8.1} {:>13} {:>6.2}x {:>6.2}x {:>12} {:>12} {:>6.2}x {:>12.0} {:>12.0}",
            n,
            ms(c.wall),
            spread(&cs),
            ms(ours.wall),
            spread(&os),
            c.wall.as_secs_f64() / ours.wall.as_secs_f64(),
            cs[0].wall.as_secs_f64() / os[0].wall.as_secs_f64(),
            c.server_kib,
            ours.server_kib,
            c.server_kib as f64 / ours.server_kib.max(1) as f64,
            c.client_kib,
            ours.client_kib
        );
        breakdown.push((n, c.phases, ours.phases));
    }
    println!("phases of the median runs: ms after the launch when the last rank ended each");
    println!(
        "{:>4} {:>6} {}",
        "N",
        "server",
        PHASES.map(|p| format!("{p:>9}")).join("")
    );
    for (n, c, ours) in breakdown {
        for (who, p) in [("C", c), ("ours", ours)] {
            println!(
                "{:>4} {:>6} {}",
                n,
                who,
                p.map(|t| format!("{t:>9.1}")).join("")
            );
        }
    }
    println!("targets: wall C/ours >= 1x, server RSS C/ours >= 1x");
}
