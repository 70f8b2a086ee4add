//! Soak (issue 38 item 4): `SOAK_JOBS` (default 10 000) consecutive
//! `pmixw run -n 8` jobs of libpmix 4.2.2 clients (interop/c/pmix_kvs.c:
//! put, fence, get of every rank), every hundredth an Open MPI 4.1.4 ring
//! (interop/c/mpi_ring.c) instead, all in one private TMPDIR. Every
//! hundred jobs (and after the last) a line: the job's server peak RSS
//! (`--stats`), this process's open fds and threads (what the harness
//! holds), the TMPDIR entries and the processes left in the jobs'
//! sessions. The last line: `soak: <jobs> jobs, rss growth <x> KiB, fds
//! growth <y>, files left <z>`. Each job is a launcher of its own, so the
//! RSS is each job's server from a fresh start; jobs through one server
//! need the persistent server (`pmixw dvm`), not sampled here yet. Not a
//! test: nothing asserts a figure; it fails only if a job fails.
//!
//!     SOAK_JOBS=20 cargo bench --bench soak

use pmix_test_kit::interop::build_c;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{exit, Command};

fn count(dir: impl AsRef<Path>) -> usize {
    std::fs::read_dir(dir).map_or(0, |d| d.count())
}

/// Processes whose session is `sid` (not zombies).
fn in_session(sid: u32) -> usize {
    let Ok(d) = std::fs::read_dir("/proc") else {
        return 0;
    };
    d.flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter(|stat| {
            let Some(close) = stat.rfind(')') else {
                return false;
            };
            let f: Vec<&str> = stat[close + 2..].split(' ').collect();
            f.first() != Some(&"Z") && f.get(3).and_then(|s| s.parse::<u32>().ok()) == Some(sid)
        })
        .count()
}

fn main() {
    let jobs: u64 = std::env::var("SOAK_JOBS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let out = pmix_test_kit::interop::default_out_dir();
    let kvs = build_c("pmix_kvs", &out).unwrap_or_else(|e| {
        eprintln!("soak: {e}");
        exit(1)
    });
    let ring = pmix_test_kit::hosts::mpicc4().and_then(|cc| {
        pmix_test_kit::cbuild::compile_c(&cc, "mpi_ring", &out.join("mpi_ring-soak"), &[])
    });
    if let Err(e) = &ring {
        eprintln!("soak: no Open MPI ring ({e}); every job is a libpmix one");
    }
    let tmp = out.join(format!("soak-tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).expect("soak TMPDIR");
    let pmixw = Path::new(env!("CARGO_BIN_EXE_pmixw"));
    let (mut first_rss, mut first_fds) = (None, None);
    let (mut rss, mut fds, mut left) = (0u64, 0usize, 0usize);
    for j in 1..=jobs {
        let mut cmd = Command::new(pmixw);
        cmd.args(["run", "--stats", "-n", "8"]).env("TMPDIR", &tmp);
        match (&ring, j % 100 == 0) {
            (Ok(r), true) => cmd.arg(r),
            _ => cmd.arg(&kvs),
        };
        // SAFETY: setsid between fork and exec is async-signal-safe
        unsafe {
            cmd.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
        let child = cmd
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("launch");
        let sid = child.id();
        let o = child.wait_with_output().expect("wait");
        if !o.status.success() {
            eprintln!(
                "soak: job {j} failed: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            exit(1);
        }
        rss = String::from_utf8_lossy(&o.stderr)
            .lines()
            .find_map(|l| l.strip_prefix("server_rss "))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        left += in_session(sid);
        if j % 100 == 0 || j == jobs {
            fds = count("/proc/self/fd");
            let threads = count("/proc/self/task");
            first_rss.get_or_insert(rss);
            first_fds.get_or_insert(fds);
            println!(
                "soak: job {j}: server rss {rss} KiB, fds {fds}, threads {threads}, tmpdir entries {}, processes left {left}",
                count(&tmp)
            );
        }
    }
    let files = count(&tmp);
    println!(
        "soak: {jobs} jobs, rss growth {} KiB, fds growth {}, files left {files}",
        rss as i64 - first_rss.unwrap_or(rss) as i64,
        fds as i64 - first_fds.unwrap_or(fds) as i64,
    );
    let _ = std::fs::remove_dir_all(&tmp);
    if left > 0 {
        eprintln!("soak: {left} processes left in the jobs' sessions");
        exit(1);
    }
}
