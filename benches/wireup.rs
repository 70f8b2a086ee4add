//! Wireup benchmark (issue #5 item 10): N libpmix 4.2.2 clients
//! (tests/interop/bench_wireup.c: init, put 4 keys, commit, fence with
//! data, get every peer's keys, finalize) under our server (`pmixw run`)
//! and under a C launcher built on libpmix's PMIx_server_init
//! (tests/interop/bench_server.c), in the same run, N = 8, 32, 128 and
//! 256 (`BENCH_N` to choose).
//! Prints the best wall time of `BENCH_REPS` (default 5) launches, the
//! server's and the clients' peak RSS, and the ratios C/ours. Not a test:
//! nothing asserts a speed; it fails only if a job fails.
//!
//!     cargo bench --bench wireup

use pmix_wire::interop::build_c;
use std::path::{Path, PathBuf};
use std::process::{exit, Command};
use std::time::{Duration, Instant};

struct Run {
    wall: Duration,
    server_kib: u64,
    client_kib: f64,
}

fn once(cmd: &mut Command) -> Run {
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
    Run {
        wall,
        server_kib: server.first().copied().unwrap_or(0),
        client_kib: clients.iter().sum::<u64>() as f64 / clients.len().max(1) as f64,
    }
}

fn best(reps: usize, mut f: impl FnMut() -> Run) -> Run {
    let mut runs: Vec<Run> = (0..reps).map(|_| f()).collect();
    runs.sort_by_key(|r| r.wall);
    runs.swap_remove(0)
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
    println!("wireup of N libpmix 4.2.2 clients: best of {reps}; RSS = peak (VmHWM)");
    println!(
        "{:>4} {:>10} {:>10} {:>7} {:>12} {:>12} {:>7} {:>12} {:>12}",
        "N",
        "C wall",
        "our wall",
        "C/ours",
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
    for n in sizes {
        let ns = n.to_string();
        let c = best(reps, || once(Command::new(&cserver).arg(&ns).arg(&client)));
        let ours = best(reps, || {
            once(
                Command::new(pmixw)
                    .args(["run", "-n", &ns, "--stats", "--timeout", "120"])
                    .arg(&client),
            )
        });
        println!(
            "{:>4} {:>8.1}ms {:>8.1}ms {:>6.2}x {:>12} {:>12} {:>6.2}x {:>12.0} {:>12.0}",
            n,
            c.wall.as_secs_f64() * 1e3,
            ours.wall.as_secs_f64() * 1e3,
            c.wall.as_secs_f64() / ours.wall.as_secs_f64(),
            c.server_kib,
            ours.server_kib,
            c.server_kib as f64 / ours.server_kib.max(1) as f64,
            c.client_kib,
            ours.client_kib
        );
    }
    println!("targets: wall C/ours >= 2x, server RSS C/ours >= 1x");
}
