//! `pmixw run --mpi pmi1|pmi2`: the job's ranks see the simple PMI wire
//! (MPICH, Intel MPI) instead of PMIx. Each rank gets its own end of a
//! socketpair as `PMI_FD` (or, with `--pmi-port`, `PMI_PORT` and `PMI_ID`)
//! and the variables MPICH reads (`PMI_RANK`, `PMI_SIZE`, and for PMI-2
//! `MPIR_CVAR_PMI_VERSION=2`); no `PMIX_*` variable, which MPICH's
//! auto-detection would find ambiguous. The server core is
//! [`pmix_wire::pmi::server`]; spawn starts a new job whose ranks find
//! the spawner's preput keys. Ending the job: the host loop's (host.rs),
//! as for PMIx (abort status, else the first failure, SIGTERM after the
//! grace, then SIGKILL).

use super::host::{self, Ending, Job, LaunchApp, Mpi, Outcome, Ranks};
use super::wake::Wake;
use pmix_wire::pmi::server::fd::Driver;
use pmix_wire::pmi::server::{App, Event, JobSpec, NameOp, Server};
use std::collections::VecDeque;
use std::os::fd::AsRawFd;
use std::process::{Command, ExitCode, ExitStatus};
use std::time::Duration;

/// `--mpi`: pmix, pmi1, pmi2 or auto (the program's MPI: MPICH programs
/// get PMI-1, or what `MPIR_CVAR_PMI_VERSION` asks; all others PMIx).
/// Without `--mpi`, `$PMIXW_MPI` says it once for every run.
pub fn choose(mpi: Option<&str>, exe: &str) -> Result<Mpi, String> {
    let env = std::env::var("PMIXW_MPI").ok().filter(|v| !v.is_empty());
    let (asked, from) = match (mpi, env.as_deref()) {
        (Some(m), _) => (m, "--mpi"),
        (None, Some(m)) => (m, "PMIXW_MPI="),
        (None, None) => ("auto", "--mpi"),
    };
    Ok(match asked {
        "pmix" => Mpi::Pmix,
        "pmi1" | "pmi" => Mpi::Pmi1,
        "pmi2" => Mpi::Pmi2,
        "auto" => match std::env::var("MPIR_CVAR_PMI_VERSION").as_deref() {
            Ok("1") => Mpi::Pmi1,
            Ok("2") => Mpi::Pmi2,
            Ok("x") => Mpi::Pmix,
            _ if program_mpi(exe) == ProgramMpi::Mpich => Mpi::Pmi1,
            _ => Mpi::Pmix,
        },
        other => {
            let sep = if from == "--mpi" { " " } else { "" };
            return Err(format!("{from}{sep}{other}: one of pmix pmi1 pmi2 auto"));
        }
    })
}

/// The MPI a program will run on, as far as can be told before it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProgramMpi {
    /// MPICH's ABI (`libmpi.so.12`, `libmpich`: MPICH, Intel MPI).
    Mpich,
    /// Open MPI (`libmpi.so.40`).
    OpenMpi,
    /// Neither found.
    Unknown,
}

/// What a `DT_NEEDED` list says of the MPI.
fn mpi_of_needed(needed: &[String]) -> ProgramMpi {
    if needed
        .iter()
        .any(|l| l.starts_with("libmpi.so.12") || l.starts_with("libmpich"))
    {
        ProgramMpi::Mpich
    } else if needed.iter().any(|l| l.starts_with("libmpi.so.40")) {
        ProgramMpi::OpenMpi
    } else {
        ProgramMpi::Unknown
    }
}

/// `exe` as the ranks' `execvp` finds it.
fn find_program(exe: &str) -> Option<std::path::PathBuf> {
    if exe.contains('/') {
        Some(std::path::PathBuf::from(exe))
    } else {
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(|d| d.join(exe))
            .find(|p| p.is_file())
    }
}

/// The MPI `exe` will run on: the library it links; for a script, its
/// interpreter's (`#!`, through `env`); for a Python interpreter, the MPI
/// of the `mpi4py.MPI` extension it would import (asked of the
/// interpreter itself, as mpi4py picks it: PyPI's wheels carry one
/// extension per MPI ABI and choose by the `libmpi` they find).
pub fn program_mpi(exe: &str) -> ProgramMpi {
    program_mpi_at(exe, 0)
}

fn program_mpi_at(exe: &str, depth: u32) -> ProgramMpi {
    let Some(path) = find_program(exe) else {
        return ProgramMpi::Unknown;
    };
    // a script's first line, or an ELF file's header
    let Ok(head) = std::fs::File::open(&path).and_then(|f| {
        use std::io::Read;
        let mut head = Vec::new();
        f.take(4096).read_to_end(&mut head).map(|_| head)
    }) else {
        return ProgramMpi::Unknown;
    };
    if let Some(line) = head.strip_prefix(b"#!") {
        let line = line.split(|&c| c == b'\n').next().unwrap_or_default();
        let line = String::from_utf8_lossy(line);
        let mut words = line.split_whitespace();
        let mut interp = words.next().unwrap_or_default();
        if interp.ends_with("/env") {
            interp = words.find(|w| !w.starts_with('-')).unwrap_or_default();
        }
        return if depth < 4 && !interp.is_empty() {
            program_mpi_at(interp, depth + 1)
        } else {
            ProgramMpi::Unknown
        };
    }
    let needed = needed_libs_of(&path);
    match mpi_of_needed(&needed) {
        ProgramMpi::Unknown => {}
        known => return known,
    }
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if name.starts_with("python") || needed.iter().any(|l| l.starts_with("libpython")) {
        return python_mpi(&path);
    }
    ProgramMpi::Unknown
}

/// Ask a Python interpreter which `mpi4py.MPI` extension it would load
/// (no MPI is initialised: the lookup only finds the file; mpi4py's ABI
/// finder may load `libmpi` to tell MPICH's ABI from Open MPI's), then
/// read that file's MPI from its name or its `DT_NEEDED`.
fn python_mpi(python: &std::path::Path) -> ProgramMpi {
    const ASK: &str = "import importlib.util as u\n\
        try:\n    s = u.find_spec('mpi4py.MPI')\nexcept Exception:\n    s = None\n\
        print(s.origin if s is not None and s.origin else '')";
    let Ok(mut child) = Command::new(python)
        .args(["-c", ASK])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
    else {
        return ProgramMpi::Unknown;
    };
    // a few seconds at most: an interpreter that hangs decides nothing
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return ProgramMpi::Unknown;
            }
        }
    }
    let mut out = String::new();
    if let Some(mut o) = child.stdout.take() {
        use std::io::Read;
        let _ = o.read_to_string(&mut out);
    }
    let origin = out.lines().last().unwrap_or_default().trim();
    if origin.is_empty() {
        return ProgramMpi::Unknown;
    }
    let file = std::path::Path::new(origin)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if file.contains(".mpich.") {
        return ProgramMpi::Mpich;
    }
    if file.contains(".openmpi.") {
        return ProgramMpi::OpenMpi;
    }
    mpi_of_needed(&needed_libs_of(std::path::Path::new(origin)))
}

/// The `DT_NEEDED` names of a little-endian ELF64 file (empty for anything
/// else): the SHT_DYNAMIC section's entries, their names in the string
/// table its `sh_link` names. Every offset is checked against the bytes.
#[cfg(test)]
fn needed_libs(b: &[u8]) -> Vec<String> {
    needed_libs_at(&|o, n| Some(b.get(o..o.checked_add(n)?.min(b.len()))?.to_vec()))
}

/// [`needed_libs`] of the file at `path`, reading only its headers, its
/// dynamic section and the names (a few KiB: `pmixw run` asks this of every
/// program it starts, where reading a whole 2 MB binary cost ~2 ms).
fn needed_libs_of(path: &std::path::Path) -> Vec<String> {
    use std::os::unix::fs::FileExt;
    let Ok(f) = std::fs::File::open(path) else {
        return Vec::new();
    };
    needed_libs_at(&|o, n| {
        // a dynamic section of more than 1 MiB is no program's
        if n > 1 << 20 {
            return None;
        }
        let mut v = vec![0; n];
        let mut got = 0;
        while got < n {
            match f.read_at(&mut v[got..], u64::try_from(o.checked_add(got)?).ok()?) {
                Ok(0) => break,
                Ok(k) => got += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return None,
            }
        }
        v.truncate(got);
        Some(v)
    })
}

/// [`needed_libs`] over `at(offset, n)`: up to `n` bytes from `offset`
/// (fewer at the end, `None` past it).
fn needed_libs_at(at: &dyn Fn(usize, usize) -> Option<Vec<u8>>) -> Vec<String> {
    let exact = |o: usize, n: usize| at(o, n).filter(|v| v.len() == n);
    let u16_at = |o: usize| Some(u16::from_le_bytes(exact(o, 2)?.try_into().ok()?));
    let u32_at = |o: usize| Some(u32::from_le_bytes(exact(o, 4)?.try_into().ok()?));
    let u64_of = |v: &[u8], o: usize| -> Option<usize> {
        usize::try_from(u64::from_le_bytes(
            v.get(o..o.checked_add(8)?)?.try_into().ok()?,
        ))
        .ok()
    };
    let u64_at = |o: usize| u64_of(&exact(o, 8)?, 0);
    let go = || -> Option<Vec<String>> {
        // ELF magic, 64-bit, little-endian
        if exact(0, 6)? != b"\x7fELF\x02\x01" {
            return None;
        }
        let (shoff, shentsize, shnum) = (
            u64_at(0x28)?,
            u16_at(0x3a)? as usize,
            u16_at(0x3c)? as usize,
        );
        let sh = |i: usize| shoff.checked_add(i.checked_mul(shentsize)?);
        let mut out = Vec::new();
        for i in 0..shnum {
            let h = sh(i)?;
            if u32_at(h.checked_add(4)?)? != 6 {
                continue; // not SHT_DYNAMIC
            }
            let (off, size, link) = (
                u64_at(h.checked_add(0x18)?)?,
                u64_at(h.checked_add(0x20)?)?,
                u32_at(h.checked_add(0x28)?)? as usize,
            );
            let strtab = u64_at(sh(link)?.checked_add(0x18)?)?;
            let dynamic = exact(off, size)?;
            for e in (0..size).step_by(16) {
                let tag = u64_of(&dynamic, e)?;
                if tag == 0 {
                    break;
                }
                if tag == 1 {
                    let start = strtab.checked_add(u64_of(&dynamic, e + 8)?)?;
                    // a library's name is short; one longer than this is
                    // no MPI's
                    let name = at(start, 4096)?;
                    let end = name.iter().position(|c| *c == 0)?;
                    out.push(String::from_utf8_lossy(&name[..end]).into_owned());
                }
            }
        }
        Some(out)
    };
    go().unwrap_or_default()
}

/// The PMI wire's part in starting ranks ([`host::Starter`]): its server
/// (the driver), which version the ranks are told to speak, and how they
/// reach the server.
pub(super) struct PmiStart {
    pub(super) driver: Driver,
    pub(super) mpi: Mpi,
    pub(super) port: Option<String>,
    /// `PMI_ID`s handed out (random: a stranger on the loopback cannot
    /// claim a rank's id before the rank does without reading its
    /// environment, which only its user can).
    pub(super) ids: std::collections::HashSet<u32>,
    /// The spawn being started: its spawning job and preput keys.
    pub(super) spawn: Option<(String, Vec<(String, String)>)>,
    /// Jobs registered by a spawn (their ranks get `PMI_SPAWNED=1`).
    pub(super) spawned: std::collections::HashSet<String>,
}

impl PmiStart {
    /// A launcher serving `driver`'s core; ranks told to speak `mpi`.
    pub(super) fn new(driver: Driver, mpi: Mpi, port: Option<String>) -> PmiStart {
        PmiStart {
            driver,
            mpi,
            port,
            ids: Default::default(),
            spawn: None,
            spawned: Default::default(),
        }
    }
}

impl host::Starter for PmiStart {
    /// A spawned job: its KVS holds the preput keys, its ranks know their
    /// spawner and their application's number.
    fn register(&mut self, name: &str, total: u32, apps: &[LaunchApp]) {
        let mut spec = JobSpec::single_node(name, total);
        if let Some((spawner, preput)) = self.spawn.take() {
            spec.spawner = Some(spawner);
            spec.preput = preput;
        }
        spec.appnum = apps
            .iter()
            .enumerate()
            .flat_map(|(i, a)| std::iter::repeat_n(i as i32, a.n as usize))
            .collect();
        self.driver.core().register(spec);
        self.spawned.insert(name.to_string());
    }

    fn prepare(
        &mut self,
        c: &mut Command,
        k: &str,
        size: u32,
        rank: u32,
    ) -> Result<Option<std::os::fd::OwnedFd>, String> {
        // the ranks are PMI clients: nothing of PMIx may be found
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy().to_string();
            if key.starts_with("PMIX_") || key.starts_with("PMI_") {
                c.env_remove(&key);
            }
        }
        c.env("PMI_RANK", rank.to_string())
            .env("PMI_SIZE", size.to_string());
        if self.spawned.contains(k) {
            c.env("PMI_SPAWNED", "1");
        }
        if self.mpi == Mpi::Pmi2 && std::env::var_os("MPIR_CVAR_PMI_VERSION").is_none() {
            c.env("MPIR_CVAR_PMI_VERSION", "2");
        }
        if self.mpi == Mpi::Pmi1 && std::env::var_os("MPIR_CVAR_PMI_VERSION").is_none() {
            c.env("MPIR_CVAR_PMI_VERSION", "1");
        }
        if let Some(p) = &self.port {
            let id = loop {
                let mut b = [0u8; 4];
                let _ = std::fs::File::open("/dev/urandom")
                    .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut b));
                // positive, as MPICH's atoi reads it; never 0
                let id = (u32::from_le_bytes(b) & 0x7fff_ffff).max(1);
                if self.ids.insert(id) {
                    break id;
                }
            };
            self.driver.core().expect_id(id, k, rank);
            c.env("PMI_PORT", p).env("PMI_ID", id.to_string());
            return Ok(None);
        }
        let fd = self
            .driver
            .socketpair(k, rank)
            .map_err(|e| format!("cannot make a PMI socket: {e}"))?;
        c.env("PMI_FD", fd.as_raw_fd().to_string());
        Ok(Some(fd))
    }
}

/// A PMI spawn's command as [`host::spawn_job`] takes it (`wdir` from
/// its info).
pub(super) fn launch_app(a: &App) -> LaunchApp {
    LaunchApp {
        cmd: a.cmd.clone(),
        argv: a.argv.clone(),
        n: a.maxprocs,
        env: Vec::new(),
        wdir: a
            .info
            .iter()
            .rev()
            .find(|(k, _)| k == "wdir")
            .map(|(_, v)| v.clone()),
    }
}

pub fn run(job: &Job) -> Result<ExitCode, String> {
    let app = job.app();
    let n = app.n;
    let caught = host::catch_signals();
    let forward = super::procgroup::forward_signals();
    // started by a PMI-2 launcher (srun --mpi=pmi2): one job across nodes
    let across = match std::env::var_os("PMI_FD") {
        Some(_) => Some(Across::connect(n, job)?),
        None => None,
    };
    let mut spec = JobSpec::single_node(&job.nspace, n);
    if let Some(a) = &across {
        spec.kvsname = a.kvsname.clone();
        spec.local = a.local.clone();
        spec.mapping = a.mapping.clone();
    }
    let kvsname = spec.kvsname.clone();
    let local: Vec<u32> = if spec.local.is_empty() {
        (0..n).collect()
    } else {
        spec.local.clone()
    };
    let mut core = Server::new();
    core.register(spec);
    let mut driver = Driver::new(core);
    let port = if job.pmi_port {
        let p = driver
            .listen("127.0.0.1:0")
            .map_err(|e| format!("cannot listen for PMI_PORT: {e}"))?;
        // every rank a node serves runs on it: the loopback is enough
        Some(format!("127.0.0.1:{p}"))
    } else {
        None
    };
    let mut start = PmiStart::new(driver, app.mpi, port);
    let mut ranks = Ranks(Vec::new());
    for &r in &local {
        host::start_rank(&mut start, &mut ranks, &kvsname, n, r, &app.launch())?;
    }
    let mut wire = Pmi {
        start,
        across,
        events: VecDeque::new(),
        spawned_jobs: 0,
    };
    Ok(host::drive(
        &mut wire,
        &mut Wake::new().map_err(|e| format!("cannot make the loop's wake: {e}"))?,
        ranks,
        job.ending(),
        &caught,
        &forward,
    ))
}

/// A PMI job (on one node, or this node's share of a job across nodes),
/// as the host loop sees it.
struct Pmi {
    start: PmiStart,
    across: Option<Across>,
    /// What the core asked, to be served this round.
    events: VecDeque<Event>,
    spawned_jobs: u32,
}

impl host::Wire for Pmi {
    fn poll(&mut self, _wake: &Wake, _max: Duration) {
        // the PMI-1 driver's sockets are its wait
        let driver = &mut self.start.driver;
        self.events.extend(driver.step(Duration::from_millis(2)));
        if let Some(a) = &self.across {
            while let Ok(d) = a.done.try_recv() {
                match d {
                    Done::Fence(request, r) => driver.core().fence_done(request, r),
                    Done::Name(request, r) => driver.core().name_done(request, r),
                }
                self.events.extend(driver.pending());
            }
        }
    }

    fn serve(&mut self, ranks: &mut Ranks, ending: &mut Ending) {
        let (l, across) = (&mut self.start, &self.across);
        while let Some(e) = self.events.pop_front() {
            match e {
                Event::Aborted {
                    rank,
                    status,
                    message,
                    ..
                } => {
                    if ending.aborted(rank, status, &message).is_some() {
                        if let Some(a) = across {
                            a.abort(format!("rank {rank} aborted: {message}"));
                        }
                    }
                }
                Event::Name { request, op } => match across {
                    Some(a) => a.name(request, op),
                    None => l
                        .driver
                        .core()
                        .name_done(request, Err("no name service".into())),
                },
                Event::Fence { request, data, .. } => match across {
                    Some(a) => a.fence(request, data),
                    None => l
                        .driver
                        .core()
                        .fence_done(request, Err("no other node".into())),
                },
                Event::Finalized { kvsname, rank } => ranks.finalized(&kvsname, rank),
                Event::Spawn {
                    request,
                    kvsname,
                    apps,
                    preput,
                    ..
                } => {
                    // through the launcher PMIx_Spawn uses (host.rs)
                    l.spawn = Some((kvsname.clone(), preput));
                    let apps: Vec<LaunchApp> = apps.iter().map(launch_app).collect();
                    let (_, result) =
                        host::spawn_job(l, ranks, &kvsname, &mut self.spawned_jobs, &apps);
                    l.driver.core().spawned(request, result);
                    self.events.extend(l.driver.pending());
                }
                // only a joint job (run_joint.rs) asks this
                Event::JointFence { request, .. } => {
                    l.driver
                        .core()
                        .joint_done(request, Err("no PMIx server in this job".into()));
                    self.events.extend(l.driver.pending());
                }
                Event::Lost { kvsname, rank } => ending.lost(&kvsname, rank),
                Event::Initialized { .. } => {}
                // an event of a newer core than this host knows: said, not dropped
                other => eprintln!("pmixw run: PMI event not handled: {other:?}"),
            }
        }
    }

    fn failed(&mut self, k: &str, rank: u32, _st: ExitStatus, _code: i32) {
        if let Some(a) = &self.across {
            a.abort(format!("rank {rank} of {k} failed before finalizing"));
        }
    }

    fn finish(&mut self, o: Outcome) -> ExitCode {
        if let (Some(a), Outcome::Done(_)) = (self.across.take(), o) {
            a.finish();
        }
        host::exit_of(o)
    }
}

/// Work for the PMI-2 thread (PMI-2 answers one request at a time).
enum Work {
    Fence(u64, Vec<u8>),
    Name(u64, NameOp),
    Abort(String),
    Finalize,
}

/// What the PMI-2 thread finished.
enum Done {
    Fence(u64, Result<Vec<u8>, String>),
    Name(u64, Result<Option<String>, String>),
}

/// This node's share of a job across nodes: its PMI-2 connection to the
/// launcher (a thread, since a fence blocks until the slowest node),
/// the job's name, this node's ranks and the process mapping.
struct Across {
    kvsname: String,
    local: Vec<u32>,
    mapping: String,
    work: std::sync::mpsc::Sender<Work>,
    done: std::sync::mpsc::Receiver<Done>,
    thread: std::thread::JoinHandle<()>,
}

impl Across {
    /// This node's share of a job of `n` ranks.
    fn connect(n: u32, job: &Job) -> Result<Across, String> {
        use super::run_pmi2::{connect, fence, placement};
        use pmix_wire::pmi::client::{Request, Response};
        let (mut pmi, me, nodes, fence_limit, jobid) = connect(n, job.timeout)?;
        let share = placement(n, nodes as u32, job.cyclic);
        let mut node_of = vec![0u32; n as usize];
        for (node, ranks) in share.iter().enumerate() {
            for &r in ranks {
                node_of[r as usize] = node as u32;
            }
        }
        let (work, rx) = std::sync::mpsc::channel();
        let (tx, done) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            let mut seq = 0u64;
            for w in rx {
                match w {
                    Work::Fence(request, data) => {
                        seq += 1;
                        let r = fence(&mut pmi, fence_limit, seq, me, nodes, true, &data)
                            .map_err(|e| e.to_string());
                        let failed = r.is_err();
                        let _ = tx.send(Done::Fence(request, r));
                        if failed {
                            return;
                        }
                    }
                    Work::Name(request, op) => {
                        // srun's name service, one for every node
                        let (req, lookup) = match op {
                            NameOp::Publish { name, port } => {
                                (Request::NamePublish { name, port }, false)
                            }
                            NameOp::Unpublish { name } => (Request::NameUnpublish { name }, false),
                            NameOp::Lookup { name } => (Request::NameLookup { name }, true),
                        };
                        let r = match pmi.call(&req) {
                            Ok(Response::NameLookup(port)) => Ok(Some(port)),
                            Ok(_) => Ok(None),
                            Err(pmix_wire::pmi::client::Error::Failed { .. }) if lookup => {
                                Err("service_not_found".to_string())
                            }
                            Err(e) => Err(e.to_string()),
                        };
                        let _ = tx.send(Done::Name(request, r));
                    }
                    Work::Abort(message) => {
                        let _ = pmi.call(&Request::Abort {
                            world: true,
                            message,
                        });
                        return;
                    }
                    Work::Finalize => {
                        let _ = pmi.call(&Request::Finalize);
                        return;
                    }
                }
            }
        });
        Ok(Across {
            kvsname: format!("pmixw-{jobid}"),
            local: share[me].clone(),
            mapping: process_mapping(&node_of),
            work,
            done,
            thread,
        })
    }

    fn name(&self, request: u64, op: NameOp) {
        let _ = self.work.send(Work::Name(request, op));
    }

    fn fence(&self, request: u64, data: Vec<u8>) {
        let _ = self.work.send(Work::Fence(request, data));
    }

    fn abort(&self, message: String) {
        let _ = self.work.send(Work::Abort(message));
    }

    fn finish(self) {
        let _ = self.work.send(Work::Finalize);
        let _ = self.thread.join();
    }
}

/// `PMI_process_mapping` of ranks on nodes `node_of` (index = rank):
/// `(vector,(node,1,count),…)`, one block per run of consecutive ranks on
/// one node, neighbouring blocks merged (`(0,2,2)`: nodes 0 and 1, two
/// ranks each) as MPICH and Slurm write it.
pub fn process_mapping(node_of: &[u32]) -> String {
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for &n in node_of {
        match runs.last_mut() {
            Some((node, count)) if *node == n => *count += 1,
            _ => runs.push((n, 1)),
        }
    }
    // (first node, nodes, ranks per node)
    let mut blocks: Vec<(u32, u32, u32)> = Vec::new();
    for (node, count) in runs {
        match blocks.last_mut() {
            Some((first, nodes, per)) if *per == count && *first + *nodes == node => *nodes += 1,
            _ => blocks.push((node, 1, count)),
        }
    }
    let mut s = String::from("(vector");
    for (f, n, c) in blocks {
        s.push_str(&format!(",({f},{n},{c})"));
    }
    s.push(')');
    s
}

#[cfg(test)]
mod tests {
    use super::process_mapping;

    #[test]
    fn needed_libraries_come_from_the_dynamic_section() {
        // this test binary links libc, and names libmpi.so.12 only as data
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let libs = super::needed_libs(&me);
        assert!(libs.iter().any(|l| l.starts_with("libc.so")), "{libs:?}");
        // read where asked from the file, the same names
        assert_eq!(
            super::needed_libs_of(&std::env::current_exe().unwrap()),
            libs
        );
        assert!(!libs.iter().any(|l| l.starts_with("libmpi")), "{libs:?}");
        assert_eq!(
            super::program_mpi(std::env::current_exe().unwrap().to_str().unwrap()),
            super::ProgramMpi::Unknown
        );
        // not ELF, or cut anywhere: nothing, never a panic
        assert!(super::needed_libs(b"#!/bin/sh\n").is_empty());
        for cut in (0..me.len().min(100_000)).step_by(997) {
            let _ = super::needed_libs(&me[..cut]);
        }
    }

    #[test]
    fn mappings_as_mpich_reads_them() {
        assert_eq!(process_mapping(&[0, 0, 0]), "(vector,(0,1,3))");
        assert_eq!(process_mapping(&[0, 0, 1, 1]), "(vector,(0,2,2))");
        assert_eq!(process_mapping(&[0, 1, 0, 1]), "(vector,(0,2,1),(0,2,1))");
        assert_eq!(process_mapping(&[0, 0, 1]), "(vector,(0,1,2),(1,1,1))");
        // what the PMI-2 client's parser reads back
        for v in [vec![0, 0, 1, 1], vec![0, 1, 2, 0, 1], vec![1, 1, 0]] {
            assert_eq!(
                pmix_wire::pmi::client::parse_mapping(&process_mapping(&v), 64),
                Some(v)
            );
        }
    }
}
