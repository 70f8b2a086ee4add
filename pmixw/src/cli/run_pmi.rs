//! `pmixw run --mpi pmi1|pmi2`: the job's ranks see the simple PMI wire
//! (MPICH, Intel MPI) instead of PMIx. Each rank gets its own end of a
//! socketpair as `PMI_FD` (or, with `--pmi-port`, `PMI_PORT` and `PMI_ID`)
//! and the variables MPICH reads (`PMI_RANK`, `PMI_SIZE`, and for PMI-2
//! `MPIR_CVAR_PMI_VERSION=2`); no `PMIX_*` variable, which MPICH's
//! auto-detection would find ambiguous. The server core is
//! [`pmix_wire::pmi::server`]; spawn starts a new job whose ranks find
//! the spawner's preput keys. Ending the job: as `pmixw run` (abort
//! status, else the first failure, SIGTERM after the grace, then SIGKILL).

use pmix_wire::pmi::fd::Driver;
use pmix_wire::pmi::server::{App, Event, JobSpec, Server};
use std::collections::VecDeque;
use std::os::fd::AsRawFd;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, ExitCode};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Which wire the ranks see.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mpi {
    /// PMIx (Open MPI, libpmix programs).
    Pmix,
    /// PMI-1 (MPICH's default when it finds `PMI_SIZE`).
    Pmi1,
    /// PMI-2 (MPICH with `MPIR_CVAR_PMI_VERSION=2`).
    Pmi2,
}

/// `--mpi`: pmix, pmi1, pmi2 or auto (the program's MPI: MPICH programs
/// get PMI-1, or what `MPIR_CVAR_PMI_VERSION` asks; all others PMIx).
pub fn choose(mpi: Option<&str>, exe: &str) -> Result<Mpi, String> {
    Ok(match mpi.unwrap_or("auto") {
        "pmix" => Mpi::Pmix,
        "pmi1" | "pmi" => Mpi::Pmi1,
        "pmi2" => Mpi::Pmi2,
        "auto" => match std::env::var("MPIR_CVAR_PMI_VERSION").as_deref() {
            Ok("1") => Mpi::Pmi1,
            Ok("2") => Mpi::Pmi2,
            Ok("x") => Mpi::Pmix,
            _ if links_mpich(exe) => Mpi::Pmi1,
            _ => Mpi::Pmix,
        },
        other => return Err(format!("--mpi {other}: one of pmix pmi1 pmi2 auto")),
    })
}

/// Whether the executable links MPICH's library (its ABI's `libmpi.so.12`
/// or `libmpich`): the names its dynamic section holds.
pub fn links_mpich(exe: &str) -> bool {
    let path = if exe.contains('/') {
        Some(std::path::PathBuf::from(exe))
    } else {
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(|d| d.join(exe))
            .find(|p| p.is_file())
    };
    let Some(path) = path else { return false };
    // a program, not a data file: its first 64 MiB are enough
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    let mut bytes = Vec::new();
    use std::io::Read;
    if f.take(64 << 20).read_to_end(&mut bytes).is_err() || !bytes.starts_with(b"\x7fELF") {
        return false;
    }
    [&b"libmpi.so.12\0"[..], b"libmpich.so"]
        .iter()
        .any(|n| bytes.windows(n.len()).any(|w| w == *n))
}

/// The job's settings, from `pmixw run`'s arguments.
pub struct Job {
    pub n: u32,
    pub mpi: Mpi,
    pub port: bool,
    pub kvsname: String,
    pub timeout: Option<Duration>,
    pub grace: Duration,
    pub keep_going: bool,
    pub exe: String,
    pub argv: Vec<String>,
}

struct Rank {
    child: Child,
    kvsname: String,
    rank: u32,
    status: Option<i32>,
    finalized: bool,
}

struct Ranks(Vec<Rank>);
impl Drop for Ranks {
    fn drop(&mut self) {
        for r in &mut self.0 {
            if r.status.is_none() {
                let _ = r.child.kill();
                let _ = r.child.wait();
            }
        }
    }
}

fn exit_code(st: std::process::ExitStatus) -> i32 {
    st.code()
        .unwrap_or_else(|| 128 + st.signal().unwrap_or(libc::SIGKILL))
}

struct Launcher {
    driver: Driver,
    ranks: Ranks,
    mpi: Mpi,
    port: Option<String>,
    next_id: u32,
}

impl Launcher {
    /// Start `app`'s ranks `first..first + app.maxprocs` of job `k`.
    fn start(&mut self, k: &str, size: u32, first: u32, app: &App, spawned: bool) -> Result<(), String> {
        for rank in first..first + app.maxprocs {
            let mut c = Command::new(&app.cmd);
            c.args(&app.argv);
            // the ranks are PMI clients: nothing of PMIx may be found
            for (key, _) in std::env::vars_os() {
                let key = key.to_string_lossy().to_string();
                if key.starts_with("PMIX_") || key.starts_with("PMI_") {
                    c.env_remove(&key);
                }
            }
            c.env("PMI_RANK", rank.to_string())
                .env("PMI_SIZE", size.to_string());
            if spawned {
                c.env("PMI_SPAWNED", "1");
            }
            if self.mpi == Mpi::Pmi2 && std::env::var_os("MPIR_CVAR_PMI_VERSION").is_none() {
                c.env("MPIR_CVAR_PMI_VERSION", "2");
            }
            if self.mpi == Mpi::Pmi1 && std::env::var_os("MPIR_CVAR_PMI_VERSION").is_none() {
                c.env("MPIR_CVAR_PMI_VERSION", "1");
            }
            for (key, v) in &app.info {
                if key == "wdir" {
                    c.current_dir(v);
                }
            }
            let theirs;
            if let Some(p) = &self.port {
                let id = self.next_id;
                self.next_id += 1;
                self.driver.core().expect_id(id, k, rank);
                c.env("PMI_PORT", p).env("PMI_ID", id.to_string());
                theirs = None;
            } else {
                let fd = self
                    .driver
                    .socketpair(k, rank)
                    .map_err(|e| format!("cannot make a PMI socket: {e}"))?;
                c.env("PMI_FD", fd.as_raw_fd().to_string());
                theirs = Some(fd);
            }
            let child = c
                .spawn()
                .map_err(|e| format!("cannot start {}: {e}", app.cmd))?;
            drop(theirs);
            self.ranks.0.push(Rank {
                child,
                kvsname: k.to_string(),
                rank,
                status: None,
                finalized: false,
            });
        }
        Ok(())
    }

    fn signal_running(&mut self, sig: i32) {
        for r in &self.ranks.0 {
            if r.status.is_none() {
                if let Ok(pid) = i32::try_from(r.child.id()) {
                    // SAFETY: a signal to our own child, not yet reaped
                    unsafe { libc::kill(pid, sig) };
                }
            }
        }
    }
}

pub fn run(job: Job) -> Result<ExitCode, String> {
    let caught: Vec<(i32, Arc<AtomicBool>)> = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP]
        .into_iter()
        .map(|s| {
            let f = Arc::new(AtomicBool::new(false));
            let _ = signal_hook::flag::register(s, f.clone());
            (s, f)
        })
        .collect();
    let mut core = Server::new();
    core.register(JobSpec::single_node(&job.kvsname, job.n));
    let mut driver = Driver::new(core);
    let port = if job.port {
        let p = driver
            .listen("0.0.0.0:0")
            .map_err(|e| format!("cannot listen for PMI_PORT: {e}"))?;
        Some(format!("{}:{p}", pmix_wire::server::net::hostname()))
    } else {
        None
    };
    let mut l = Launcher {
        driver,
        ranks: Ranks(Vec::new()),
        mpi: job.mpi,
        port,
        next_id: 1,
    };
    let app = App {
        cmd: job.exe.clone(),
        argv: job.argv.clone(),
        maxprocs: job.n,
        info: Vec::new(),
    };
    l.start(&job.kvsname, job.n, 0, &app, false)?;
    let start = Instant::now();
    let mut spawned_jobs = 0;
    let (mut failed, mut aborted): (Option<i32>, Option<i32>) = (None, None);
    let (mut term_at, mut kill_at): (Option<Instant>, Option<Instant>) = (None, None);
    loop {
        let mut events: VecDeque<Event> = l.driver.step(Duration::from_millis(2)).into();
        // reap: a rank that ended before finalizing fails the job
        let mut newly_failed = Vec::new();
        for r in l.ranks.0.iter_mut().filter(|r| r.status.is_none()) {
            if let Ok(Some(st)) = r.child.try_wait() {
                r.status = Some(exit_code(st));
                if exit_code(st) != 0 && !r.finalized {
                    newly_failed.push((r.kvsname.clone(), r.rank, st));
                }
            }
        }
        while let Some(e) = events.pop_front() {
            match e {
                Event::Aborted {
                    rank,
                    status,
                    message,
                    ..
                } => {
                    eprintln!("pmixw run: rank {rank} aborted with status {status}: {message}");
                    if aborted.is_none() && failed.is_none() {
                        aborted = Some(if status == 0 { 1 } else { status });
                        term_at = Some(Instant::now() + job.grace);
                    }
                }
                Event::Finalized { kvsname, rank } => {
                    for r in l.ranks.0.iter_mut() {
                        if r.kvsname == kvsname && r.rank == rank {
                            r.finalized = true;
                        }
                    }
                }
                Event::Spawn {
                    request,
                    kvsname,
                    apps,
                    preput,
                    ..
                } => {
                    spawned_jobs += 1;
                    let k = format!("{kvsname}-spawn-{spawned_jobs}");
                    let total: u32 = apps.iter().map(|a| a.maxprocs).sum();
                    let mut spec = JobSpec::single_node(&k, total);
                    spec.spawner = Some(kvsname);
                    spec.preput = preput;
                    spec.appnum = apps
                        .iter()
                        .enumerate()
                        .flat_map(|(i, a)| std::iter::repeat_n(i as i32, a.maxprocs as usize))
                        .collect();
                    l.driver.core().register(spec);
                    let mut first = 0;
                    let mut result = Ok(());
                    for a in &apps {
                        if let Err(e) = l.start(&k, total, first, a, true) {
                            eprintln!("pmixw run: {e}");
                            result = Err(e);
                            break;
                        }
                        first += a.maxprocs;
                    }
                    l.driver.core().spawned(request, result);
                    events.extend(l.driver.pending());
                }
                Event::Lost { .. } | Event::Initialized { .. } => {}
            }
        }
        for (k, rank, st) in newly_failed {
            eprintln!(
                "pmixw run: rank {rank} of {k} {} before finalizing",
                match st.signal() {
                    Some(s) => format!("was killed by signal {s}"),
                    None => format!("exited with status {}", exit_code(st)),
                }
            );
            if job.keep_going || failed.is_some() || aborted.is_some() {
                continue;
            }
            failed = Some(exit_code(st));
            term_at = Some(Instant::now() + job.grace);
        }
        if let Some(&(sig, _)) = caught.iter().find(|(_, f)| f.load(Ordering::Relaxed)) {
            eprintln!("pmixw run: signal {sig}; ending the job");
            l.signal_running(libc::SIGTERM);
            let deadline = Instant::now() + job.grace;
            while l.ranks.0.iter_mut().any(|r| r.status.is_none()) && Instant::now() < deadline {
                for r in l.ranks.0.iter_mut().filter(|r| r.status.is_none()) {
                    if let Ok(Some(st)) = r.child.try_wait() {
                        r.status = Some(exit_code(st));
                    }
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            return Ok(ExitCode::from((128 + sig) as u8));
        }
        let now = Instant::now();
        if term_at.is_some_and(|t| now >= t) && kill_at.is_none() {
            l.signal_running(libc::SIGTERM);
            kill_at = Some(now + job.grace);
        }
        if kill_at.is_some_and(|t| now >= t) {
            l.signal_running(libc::SIGKILL);
        }
        if l.ranks.0.iter().all(|r| r.status.is_some()) {
            break;
        }
        if job.timeout.is_some_and(|t| start.elapsed() >= t) {
            eprintln!(
                "pmixw run: timeout after {:?}; killing the job",
                job.timeout.unwrap_or_default()
            );
            return Ok(ExitCode::from(124));
        }
    }
    let code = aborted
        .or(failed)
        .or_else(|| l.ranks.0.iter().filter_map(|r| r.status).find(|s| *s != 0))
        .unwrap_or(0);
    Ok(ExitCode::from(code.clamp(0, 255) as u8))
}
