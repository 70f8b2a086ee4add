//! Soak (issue 38 item 4): `SOAK_JOBS` (default 10 000) consecutive
//! `pmixw run -n 8` jobs of libpmix 4.2.2 clients (interop/c/pmix_kvs.c:
//! put, fence, get of every rank), every hundredth an Open MPI 4.1.4 ring
//! (interop/c/mpi_ring.c) instead, all in one private TMPDIR. Every
//! hundred jobs (and after the last) a line: the job's server peak RSS
//! (`--stats`), this process's open fds and threads (what the harness
//! holds), the TMPDIR entries and the processes left in the jobs'
//! sessions. The last line: `soak: <jobs> jobs, rss growth <x> KiB, fds
//! growth <y>, files left <z>`. Each job is a launcher of its own, so the
//! RSS is each job's server from a fresh start. With `SOAK_DVM=1` the
//! jobs go through one persistent server instead (`pmixw dvm`, each job
//! `pmixw run --dvm -n 8`): the samples are then the DVM's own RSS
//! (VmRSS), open fds and threads, the TMPDIR entries beside the DVM's own
//! rendezvous files, and the DVM's children left (its ranks of ended jobs);
//! after the last job the DVM is stopped (SIGTERM) and what it left in the
//! TMPDIR is the `files left`. Not a test: nothing asserts a figure; it
//! fails only if a job fails.
//!
//!     SOAK_JOBS=20 cargo bench --bench soak
//!     SOAK_JOBS=20 SOAK_DVM=1 cargo bench --bench soak

use pmix_test_kit::interop::build_c;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{exit, Command};

fn count(dir: impl AsRef<Path>) -> usize {
    std::fs::read_dir(dir).map_or(0, |d| d.count())
}

/// Live (not zombie) processes whose `/proc/<pid>/stat` field `field`
/// (counted after the state: 1 the parent, 3 the session) is `value`;
/// a launcher's guard (pmixw/src/cli/guard.rs, which runs as long as its
/// DVM) is not counted.
fn processes_with(field: usize, value: u32) -> usize {
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
            f.first() != Some(&"Z")
                && !stat[..close + 1].ends_with("(pmixw-guard)")
                && f.get(field).and_then(|s| s.parse::<u32>().ok()) == Some(value)
        })
        .count()
}

/// Processes whose session is `sid` (not zombies).
fn in_session(sid: u32) -> usize {
    processes_with(3, sid)
}

/// A `/proc/<pid>/status` field's number (`VmRSS`, `Threads`).
fn status_field(pid: u32, name: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// Live (not zombie) children of `pid`.
fn children_of(pid: u32) -> usize {
    processes_with(1, pid)
}

/// The persistent server of `SOAK_DVM=1`: started in `tmp`, ready once
/// its system rendezvous file is there.
fn start_dvm(pmixw: &Path, tmp: &Path) -> std::process::Child {
    let mut child = Command::new(pmixw)
        .arg("dvm")
        .env("TMPDIR", tmp)
        .env("PMIX_SYSTEM_TMPDIR", tmp)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("pmixw dvm");
    let sys = tmp.join(format!("pmix.sys.{}", pmix_wire::tool::hostname()));
    for _ in 0..1000 {
        if sys.exists() {
            return child;
        }
        if let Ok(Some(st)) = child.try_wait() {
            eprintln!("soak: pmixw dvm ended at start: {st}");
            exit(1);
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let _ = child.kill();
    eprintln!("soak: pmixw dvm wrote no {} in 10 s", sys.display());
    exit(1)
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
    let mut dvm = std::env::var_os("SOAK_DVM")
        .filter(|v| v != "0")
        .map(|_| start_dvm(pmixw, &tmp));
    // the DVM's own rendezvous files, there while it runs
    let own = if dvm.is_some() { count(&tmp) } else { 0 };
    if let Some(d) = &dvm {
        println!(
            "soak: through one pmixw dvm (pid {}), {own} files of its own",
            d.id()
        );
    }
    let (mut first_rss, mut first_fds) = (None, None);
    let (mut rss, mut fds, mut left) = (0u64, 0usize, 0usize);
    for j in 1..=jobs {
        let mut cmd = Command::new(pmixw);
        match &dvm {
            Some(_) => cmd
                .args(["run", "--dvm", "-n", "8"])
                .env("PMIX_SYSTEM_TMPDIR", &tmp),
            None => cmd.args(["run", "--stats", "-n", "8"]),
        };
        cmd.env("TMPDIR", &tmp);
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
        left += in_session(sid);
        let sampled = j % 100 == 0 || j == jobs;
        let threads;
        match &dvm {
            Some(d) => {
                // the DVM's ranks of this job are gone once it ended
                left += children_of(d.id());
                if !sampled {
                    continue;
                }
                rss = status_field(d.id(), "VmRSS");
                fds = count(format!("/proc/{}/fd", d.id()));
                threads = status_field(d.id(), "Threads");
            }
            None => {
                rss = String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .find_map(|l| l.strip_prefix("server_rss "))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0);
                if !sampled {
                    continue;
                }
                fds = count("/proc/self/fd");
                threads = count("/proc/self/task") as u64;
            }
        }
        first_rss.get_or_insert(rss);
        first_fds.get_or_insert(fds);
        println!(
            "soak: job {j}: server rss {rss} KiB, fds {fds}, threads {threads}, tmpdir entries {}, processes left {left}",
            count(&tmp) - own
        );
    }
    if let Some(d) = &mut dvm {
        // SAFETY: kill(2) on our own child's pid
        unsafe { libc::kill(d.id() as i32, libc::SIGTERM) };
        let _ = d.wait();
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
