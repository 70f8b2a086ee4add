//! `pmixw run` of a PMIx program on one node: our server hosts the job
//! (one namespace, never beginning with `pmix`, which libpmix reserves for
//! its own keys), its N ranks get the environment a PMIx client needs and
//! inherit stdout/stderr, and the job's status is the reference launchers':
//! the abort status if a rank aborted, else the status of the first rank
//! that failed before finalizing (128 + the signal for a signal), else 0.
//!
//! A rank failing before it finalizes ends the job (unless `--keep-going`):
//! the other ranks get PMIX_ERR_PROC_ABORTED (or ..._BY_SIG) at once, are
//! sent SIGTERM after the grace period and SIGKILL after another. SIGINT,
//! SIGTERM and SIGHUP end the job the same way and remove the rendezvous
//! files; nothing is left behind. [`PmixWire`] is the PMIx wire's part in
//! starting ranks, for this job and a joint one (run_joint.rs).

use super::host::{self, catch_signals, exit_code, Job as Ranks};
use pmix_types::status::codes;
use pmix_types::RANK_WILDCARD;
use pmix_types::{Info, Proc, Value};
use pmix_wire::server::{net, AppSpec, HostEvent, JobSpec};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitCode};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The job's settings, from `pmixw run`'s arguments.
pub struct Job {
    pub n: u32,
    pub nspace: String,
    /// `--dialect`: the one URI variable the ranks get.
    pub dialect: Option<&'static str>,
    pub timeout: Option<Duration>,
    pub grace: Duration,
    pub keep_going: bool,
    /// `--system`: also this node's system server.
    pub system: bool,
    /// `--stats`: the server's peak memory at the end.
    pub stats: bool,
    /// `--dstore`: a ds21 store for libpmix 4.2.x clients.
    pub dstore: bool,
    pub exe: String,
    pub argv: Vec<String>,
}

/// A process's resident memory in MB (VmRSS of `/proc/<pid>/status`; None:
/// this process).
fn resident_mb(pid: Option<u32>) -> Option<f32> {
    let path = match pid {
        Some(p) => format!("/proc/{p}/status"),
        None => "/proc/self/status".into(),
    };
    let kib: f32 = std::fs::read_to_string(path)
        .ok()?
        .lines()
        .find(|l| l.starts_with("VmRSS:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some(kib / 1024.0)
}

/// Files removed when dropped (on every return of [`run`]).
struct Files(Vec<std::path::PathBuf>);
impl Drop for Files {
    fn drop(&mut self) {
        for f in &self.0 {
            let _ = std::fs::remove_file(f);
        }
    }
}

/// Publish the server as this node's system server: `pmix.sys.<host>` in
/// `$PMIX_SYSTEM_TMPDIR` (else the tmpdir), with the content of its own
/// `pmix.<host>.tool.<pid>` file. Refused while a live server holds it.
fn system_rendezvous() -> Result<Files, String> {
    use pmix_wire::server::net::rendezvous;
    let host = net::hostname();
    let own = std::env::temp_dir().join(format!("pmix.{host}.tool.{}", std::process::id()));
    let text = std::fs::read_to_string(&own)
        .map_err(|e| format!("--system: cannot read {}: {e}", own.display()))?;
    let dir = std::env::var_os("PMIX_SYSTEM_TMPDIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let name = format!("pmix.sys.{host}");
    let written = rendezvous::write(&dir, std::slice::from_ref(&name), &text)
        .map_err(|e| format!("--system: {}: {e}", dir.display()))?;
    if written.is_empty() {
        return Err(format!(
            "--system: {} belongs to a running server",
            dir.join(name).display()
        ));
    }
    Ok(Files(written))
}

pub fn run(job: Job) -> Result<ExitCode, String> {
    let Job {
        n,
        nspace,
        dialect,
        timeout,
        grace,
        keep_going,
        system,
        stats,
        dstore,
        exe,
        argv,
    } = job;
    let hostname = net::hostname();
    // caught from here on: the job is ended and the rendezvous files removed
    let caught = catch_signals();
    // tools (pquery, pps) find the server through files in the tmpdir
    let server = net::start_opts(
        vec![JobSpec {
            nspace: nspace.clone(),
            nprocs: n,
            hostname,
            info: Vec::new(),
        }],
        net::Options {
            rendezvous: Some(std::env::temp_dir()),
            dstore: dstore.then(std::env::temp_dir),
            ..net::Options::default()
        },
    )
    .map_err(|e| format!("cannot start the server: {e}"))?;
    // a live server already holds the name tools attach by
    let by_ns = std::env::temp_dir().join(format!("pmix.{}.tool.{nspace}", net::hostname()));
    let mine = format!("\n{}\n", std::process::id());
    if !std::fs::read_to_string(&by_ns).is_ok_and(|t| t.contains(&mine)) {
        eprintln!(
            "pmixw run: warning: {} belongs to another server; tools attaching by namespace reach that one",
            by_ns.display()
        );
    }
    // --system: also this node's system server (`pmix.sys.<host>`)
    let _system_file = if system {
        Some(system_rendezvous()?)
    } else {
        None
    };

    server.call({
        let (ns, exe) = (nspace.clone(), exe.clone());
        move |s| {
            s.set_executable(&ns, &exe);
            s.set_memory_probe(Box::new(resident_mb));
        }
    });
    // the ranks are reaped when SIGCHLD says one may have ended, not by
    // asking each of them every millisecond (N waitpid calls a loop, taken
    // from the ranks' own 2 cores at N = 256)
    let child_exited = Arc::new(AtomicBool::new(true));
    let sigchld = signal_hook::flag::register(libc::SIGCHLD, child_exited.clone()).is_ok();
    let mut job = Ranks(Vec::new());
    let mut wire = PmixWire::new(&server, dialect);
    let app = host::LaunchApp {
        cmd: exe.clone(),
        argv: argv.to_vec(),
        n,
        ..Default::default()
    };
    for r in 0..n {
        host::start_rank(&mut wire, &mut job, &nspace, n, r, &app)?;
    }

    let mut spawned_jobs = 0u32;
    // every namespace of the run, for the cleanups they registered
    let mut namespaces = vec![nspace.clone()];
    // spawned namespaces whose end is still to be reported
    let mut running_spawns: Vec<String> = Vec::new();
    // the job's status once it is ending, and when to escalate
    let mut ending = host::Ending::new(grace, keep_going, timeout);
    let outcome;
    loop {
        // reap before draining the events: the server queues a rank's
        // abort or finalize before its reply, so for an exit seen here the
        // event that explains it is already waiting below
        let mut reaped = Vec::new();
        let scan = !sigchld || child_exited.swap(false, Ordering::AcqRel);
        for (i, r) in job.0.iter_mut().enumerate().filter(|_| scan) {
            if r.status.is_none() {
                if let Ok(Some(st)) = r.child.try_wait() {
                    let code = exit_code(st);
                    r.status = Some(code);
                    let (ns, rank) = (r.nspace.clone(), r.rank);
                    server.post(move |s| s.set_proc_exit(&ns, rank, code));
                    reaped.push((i, st));
                }
            }
        }
        while let Ok(e) = server.events.try_recv() {
            match e {
                HostEvent::Aborted {
                    proc,
                    status: st,
                    message,
                } => {
                    let message = message.unwrap_or_default();
                    if let Some(code) = ending.aborted(proc.rank, st, &message) {
                        announce(&server, codes::PMIX_ERR_PROC_ABORTED, proc, code);
                    }
                }
                HostEvent::Finalized(p) => {
                    for r in job.0.iter_mut() {
                        if r.nspace == p.nspace.to_string() && r.rank == p.rank {
                            r.finalized = true;
                        }
                    }
                }
                HostEvent::Log { data, .. } => host::print_log(&data),
                HostEvent::Spawn {
                    request,
                    requester,
                    apps,
                    ..
                } => {
                    // a new job of every app's ranks, in a namespace of its
                    // own, through the launcher PMI spawn uses (host.rs)
                    // what prterun tells a child: its parent, its apps
                    let here = std::env::current_dir()
                        .ok()
                        .map(|d| d.display().to_string());
                    let specs: Vec<AppSpec> = apps
                        .iter()
                        .map(|a| AppSpec {
                            size: a.maxprocs.max(1) as u32,
                            argv: a.argv.iter().map(|s| s.to_string()).collect(),
                            wdir: a.cwd.as_ref().map(|c| c.to_string()).or(here.clone()),
                        })
                        .collect();
                    // its ranks follow every rank started so far
                    wire.spawn = Some((requester, specs, job.0.len() as u32));
                    let apps: Vec<host::LaunchApp> = apps
                        .iter()
                        .map(|a| host::LaunchApp {
                            cmd: a.cmd.as_ref().map(|c| c.to_string()).unwrap_or_default(),
                            // argv[0] is the command itself
                            argv: a.argv.iter().skip(1).map(|a| a.to_string()).collect(),
                            n: a.maxprocs.max(1) as u32,
                            env: a
                                .env
                                .iter()
                                .filter_map(|kv| {
                                    let kv = kv.to_string();
                                    let (k, v) = kv.split_once('=')?;
                                    Some((k.to_string(), v.to_string()))
                                })
                                .collect(),
                            wdir: a.cwd.as_ref().map(|c| c.to_string()),
                        })
                        .collect();
                    let (ns, result) =
                        host::spawn_job(&mut wire, &mut job, &nspace, &mut spawned_jobs, &apps);
                    namespaces.push(ns.clone());
                    running_spawns.push(ns.clone());
                    let result = result.map(|()| ns).map_err(|_| codes::PMIX_ERR_NOT_FOUND);
                    server.call(move |s| s.spawned(request, result));
                }
                HostEvent::Lost(p) => ending.lost(&p.nspace.to_string(), p.rank),
                e @ (HostEvent::Kill { .. } | HostEvent::Signal { .. }) => job.control(&e),
                _ => {}
            }
        }
        // a spawned job whose ranks have all ended: its end reported
        running_spawns.retain(|ns| {
            let mut ranks = job.0.iter().filter(|r| r.nspace == *ns).peekable();
            ranks.peek().is_none() || ranks.any(|r| r.status.is_none()) || {
                let code = job
                    .0
                    .iter()
                    .filter(|r| r.nspace == *ns)
                    .filter_map(|r| r.status)
                    .find(|c| *c != 0)
                    .unwrap_or(0);
                job_ended(&server, ns, code);
                false
            }
        });
        let mut newly_failed = Vec::new();
        for (i, st) in reaped {
            let r = &job.0[i];
            if exit_code(st) != 0 && !r.finalized {
                newly_failed.push((r.nspace.clone(), r.rank, st));
            }
        }
        ending.first_ended_first(&mut newly_failed, |(ns, rank, _)| (ns.clone(), *rank));
        for (ns, rank, st) in newly_failed {
            if let Some(code) = ending.failed(&ns, rank, st) {
                announce_failure(&server, Proc::new(&ns, rank), st, code);
            }
        }
        match ending.check(&mut job, &caught) {
            None => {}
            Some(o @ host::Outcome::Done(_)) => {
                outcome = o;
                break;
            }
            // the job was ended (a signal), or is killed as it is dropped
            Some(o) => {
                drop(job);
                clean_up(&server, &namespaces);
                server.stop();
                return Ok(host::exit_of(o));
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    clean_up(&server, &namespaces);
    server.stop();
    if stats {
        // the launcher and server are one process: its peak RSS
        let hwm = std::fs::read_to_string("/proc/self/status")
            .unwrap_or_default()
            .lines()
            .find(|l| l.starts_with("VmHWM:"))
            .and_then(|l| l.split_whitespace().nth(1).map(str::to_string))
            .unwrap_or_default();
        eprintln!("server_rss {hwm}");
    }
    Ok(host::exit_of(outcome))
}

/// A rank failed before it finalized, ending the job with `code`: the
/// standard's event to the others, before they are ended
/// (PROC_ABORTED_BY_SIG when a signal killed it, else PROC_ABORTED).
pub(super) fn announce_failure(
    server: &net::Running,
    source: Proc,
    st: std::process::ExitStatus,
    code: i32,
) {
    let event = if st.signal().is_some() {
        codes::PMIX_ERR_PROC_ABORTED_BY_SIG
    } else {
        codes::PMIX_ERR_PROC_ABORTED
    };
    announce(server, event, source, code);
}

/// Tell the failed rank's namespace, before the job is ended: `event`
/// (PROC_ABORTED or PROC_ABORTED_BY_SIG) from that rank, naming it, its
/// exit code and that the job will be terminated.
pub(super) fn announce(server: &net::Running, event: i32, source: Proc, code: i32) {
    let info = vec![
        Info::new("pmix.evproc", Value::Proc(Box::new(source.clone()))),
        Info::new("pmix.exit.code", Value::Int(code)),
        Info::new("pmix.evterm.job", Value::Bool(true)),
    ];
    server.call(move |s| {
        s.notify(
            event,
            &source,
            pmix_types::enums::DataRange::NAMESPACE,
            info,
        )
    });
}

/// The job has ended: remove what its namespaces registered for cleanup
/// (PMIX_REGISTER_CLEANUP and _DIR, as libpmix's server does when a
/// namespace ends), only what this user owns and never through a symbolic
/// link.
fn clean_up(server: &net::Running, namespaces: &[String]) {
    use std::os::unix::fs::MetadataExt;
    use std::path::Path;
    let ns = namespaces.to_vec();
    let all = server
        .call(move |s| {
            ns.iter()
                .flat_map(|n| s.take_cleanups(n))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    // SAFETY: geteuid has no preconditions
    let uid = unsafe { libc::geteuid() };
    let meta = |p: &Path| std::fs::symlink_metadata(p).ok().filter(|m| m.uid() == uid);
    for c in all {
        for f in &c.files {
            if meta(Path::new(f)).is_some_and(|m| !m.is_dir()) {
                let _ = std::fs::remove_file(f);
            }
        }
        for d in &c.dirs {
            let dir = Path::new(d);
            if !meta(dir).is_some_and(|m| m.is_dir()) {
                continue;
            }
            for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let name = e.file_name().to_string_lossy().to_string();
                if c.ignore.contains(&name) {
                    continue;
                }
                let p = e.path();
                match meta(&p) {
                    // remove_dir_all does not follow symbolic links
                    Some(m) if m.is_dir() && c.recursive => {
                        let _ = std::fs::remove_dir_all(&p);
                    }
                    Some(m) if !m.is_dir() => {
                        let _ = std::fs::remove_file(&p);
                    }
                    _ => {}
                }
            }
            if !c.leave_top {
                // only once empty
                let _ = std::fs::remove_dir(dir);
            }
        }
    }
}

/// A spawned job ended: PMIX_EVENT_JOB_END, as prterun 5.0.11 reports it
/// (src/mca/state/dvm/state_dvm.c): from the job's rank 0, range SESSION,
/// for non-default handlers, with the job's status (its first non-zero
/// exit, else 0) and the job as the affected process.
fn job_ended(server: &net::Running, ns: &str, code: i32) {
    let source = Proc::new(ns, 0);
    let info = vec![
        Info::new("pmix.evnondef", Value::Bool(true)),
        Info::new("pmix.job.term.status", Value::Status(code)),
        Info::new(
            "pmix.evproc",
            Value::Proc(Box::new(Proc::new(ns, RANK_WILDCARD))),
        ),
    ];
    server.call(move |s| {
        s.notify(
            codes::PMIX_EVENT_JOB_END,
            &source,
            pmix_types::enums::DataRange::SESSION,
            info,
        )
    });
}

/// The PMIx wire's part in starting ranks ([`host::Wire`]): each rank's
/// environment from the server (under the `--dialect` URI variable only,
/// if one was named), and the server told each rank's pid; for a spawn,
/// the new namespace registered with its parent, apps and offset.
pub(super) struct PmixWire<'a> {
    pub(super) server: &'a net::Running,
    pub(super) dialect: Option<&'static str>,
    /// The spawn being started: who asked, what its apps are (as
    /// `pmix.app.*` tells them), and the ranks started before it.
    pub(super) spawn: Option<(Proc, Vec<AppSpec>, u32)>,
    /// Each rank's environment, by namespace.
    envs: std::collections::HashMap<String, Vec<Vec<(String, String)>>>,
}

impl<'a> PmixWire<'a> {
    pub(super) fn new(server: &'a net::Running, dialect: Option<&'static str>) -> PmixWire<'a> {
        PmixWire {
            server,
            dialect,
            spawn: None,
            envs: Default::default(),
        }
    }
}

impl host::Wire for PmixWire<'_> {
    fn register(&mut self, ns: &str, total: u32, apps: &[host::LaunchApp]) {
        let Some((requester, specs, offset)) = self.spawn.take() else {
            return;
        };
        let spec = JobSpec {
            nspace: ns.to_string(),
            nprocs: total,
            hostname: net::hostname(),
            info: Vec::new(),
        };
        let uri = self.server.uri().to_string();
        let envs = self
            .server
            .call({
                let ns = ns.to_string();
                move |s| {
                    s.register_nspace(spec);
                    s.set_parent(&ns, requester);
                    s.set_apps(&ns, specs);
                    s.set_offset(&ns, offset);
                    (0..total)
                        .map(|r| s.client_env(&ns, r, &uri))
                        .collect::<Vec<_>>()
                }
            })
            .unwrap_or_default();
        self.envs.insert(ns.to_string(), envs);
        if let Some(cmd) = apps
            .first()
            .map(|a| a.cmd.clone())
            .filter(|c| !c.is_empty())
        {
            let ns = ns.to_string();
            self.server.call(move |s| s.set_executable(&ns, &cmd));
        }
    }

    fn prepare(
        &mut self,
        c: &mut Command,
        ns: &str,
        _total: u32,
        rank: u32,
    ) -> Result<Option<std::os::fd::OwnedFd>, String> {
        let env = match self.envs.get(ns) {
            Some(e) => e.get(rank as usize).cloned().unwrap_or_default(),
            // the namespace the server started with
            None => self.server.client_env(ns, rank),
        };
        for (k, v) in env {
            let skip = k.starts_with("PMIX_SERVER_URI") && self.dialect.is_some_and(|d| d != k);
            if !skip {
                c.env(k, v);
            }
        }
        // Open MPI 4.1 takes the direct-launch path (ess pmi) only under a
        // launcher its schizo framework recognises; Flux is recognised by
        // FLUX_JOB_ID alone (spec-notes/server.md)
        if std::env::var_os("FLUX_JOB_ID").is_none() {
            c.env("FLUX_JOB_ID", ns);
        }
        Ok(None)
    }

    /// Only this process or its descendants may connect as this rank; not
    /// waited for: the next rank starts at once (a claim that comes first
    /// is checked when the pid arrives).
    fn started(&mut self, ns: &str, rank: u32, pid: u32) {
        let ns = ns.to_string();
        self.server.post(move |s| s.set_rank_pid(&ns, rank, pid));
    }
}
