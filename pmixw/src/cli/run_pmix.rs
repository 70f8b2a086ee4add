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
//! files; nothing is left behind. [`PmixStart`] is the PMIx wire's part in
//! starting ranks, for this job and a joint one (run_joint.rs).

use super::host::{self, catch_signals, Ending, Job, Outcome, Ranks};
use super::wake::{Wake, Waker};
use pmix_types::status::codes;
use pmix_types::RANK_WILDCARD;
use pmix_types::{Info, Proc, Value};
use pmix_wire::server::{net, AppSpec, HostEvent, HostFacts, JobSpec};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitCode, ExitStatus};
use std::time::Duration;

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
pub(super) struct Files(Vec<std::path::PathBuf>);
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
pub(super) fn system_rendezvous() -> Result<Files, String> {
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

/// The directory a libpmix 4.2.2 or 5.0.11 tool searches for servers'
/// rendezvous files, with no attribute and by pid or namespace alike:
/// `$PMIX_SYSTEM_TMPDIR`, else `$TMPDIR`, `$TEMP`, `$TMP`, else /tmp
/// (spec-notes/client.md, "How a libpmix tool finds its server").
fn tool_search_dir() -> std::path::PathBuf {
    ["PMIX_SYSTEM_TMPDIR", "TMPDIR", "TEMP", "TMP"]
        .iter()
        .find_map(|k| std::env::var_os(k).filter(|v| !v.is_empty()))
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| "/tmp".into())
}

/// The server writes its tool files in the tmpdir (`$TMPDIR`, else /tmp);
/// where libpmix tools look elsewhere (`PMIX_SYSTEM_TMPDIR` set, or only
/// `TEMP`/`TMP`), the same files there too, removed on every exit. A
/// directory we cannot write is a warning: tools then need `--pid`.
fn tool_search_copies(nspace: &str) -> Option<Files> {
    use pmix_wire::server::net::rendezvous;
    let dir = tool_search_dir();
    let ours = std::env::temp_dir();
    let same = |a: &std::path::Path, b: &std::path::Path| {
        a == b
            || a.canonicalize()
                .ok()
                .is_some_and(|x| b.canonicalize().ok() == Some(x))
    };
    if same(&dir, &ours) {
        return None;
    }
    let host = net::hostname();
    let pid = std::process::id();
    let own = ours.join(format!("pmix.{host}.tool.{pid}"));
    let text = std::fs::read_to_string(&own).ok()?;
    let names = [
        format!("pmix.{host}.tool.{pid}"),
        format!("pmix.{host}.tool.{nspace}"),
    ];
    match rendezvous::write(&dir, &names, &text) {
        Ok(w) => Some(Files(w)),
        Err(e) => {
            eprintln!(
                "pmixw run: warning: cannot write the tool rendezvous files in {} ({e}); tools that search there will not find this job",
                dir.display()
            );
            None
        }
    }
}

/// Start our server for a job of one namespace `ns` of `nprocs` ranks on
/// `host`: tools (pquery, pps) find it through files in the tmpdir, and
/// with `dstore` libpmix 4.2.x clients find a ds21 store there; `wake` is
/// told when it has host events for the loop ([`host::drive`]).
pub(super) fn start_server(
    ns: &str,
    nprocs: u32,
    host: String,
    dstore: bool,
    wake: &Waker,
) -> std::io::Result<net::Running> {
    net::start_opts(
        vec![JobSpec {
            nspace: ns.to_string(),
            nprocs,
            hostname: host,
            info: Vec::new(),
        }],
        net::Options {
            rendezvous: Some(std::env::temp_dir()),
            dstore: dstore.then(std::env::temp_dir),
            on_event: Some(wake.hook()),
            ..net::Options::default()
        },
    )
}

/// What prterun tells a job beyond libpmix's job data and `pmixw run`
/// can say too (issue 36, spec-notes/keys.md): the node's physical memory
/// (`pmix.pmem`, /proc/meminfo's MemTotal in bytes); the session's
/// temporary directory (`pmix.tmpdir`: the tmpdir tools and the ds21
/// store use) and `pmix.fqdn` false (the node's name as the host reports
/// it, not fully qualified); each rank's parent (`pmix.ppid`: this
/// launcher, which starts every rank itself).
pub(super) fn host_facts() -> HostFacts {
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map(|kb| kb.saturating_mul(1024));
    // no `pmix.tmpdir`: prterun gives its own session directory there,
    // and Open MPI 4.1.4 removes what it is given, whole, at finalize
    // (given the user's tmpdir, it removed the user's files)
    HostFacts {
        node: mem
            .map(|b| Info::new("pmix.pmem", Value::Uint64(b)))
            .into_iter()
            .collect(),
        session: vec![Info::new("pmix.fqdn", Value::Bool(false))],
        rank: vec![Info::new("pmix.ppid", Value::Pid(std::process::id()))],
    }
}

pub fn run(job: &Job) -> Result<ExitCode, String> {
    let (nspace, app) = (&job.nspace, job.app());
    let n = app.n;
    // caught from here on: the job is ended and the rendezvous files removed
    let caught = catch_signals();
    let forward = super::procgroup::forward_signals();
    let mut wake = Wake::new().map_err(|e| format!("cannot make the loop's wake: {e}"))?;
    let server = start_server(nspace, n, net::hostname(), job.dstore, &wake.waker())
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
    // the directory a libpmix tool searches, when it is not ours
    let _tool_files = tool_search_copies(nspace);
    // --system: also this node's system server (`pmix.sys.<host>`)
    let _system_file = if job.system {
        Some(system_rendezvous()?)
    } else {
        None
    };

    server.call({
        let (ns, exe) = (nspace.clone(), app.exe.clone());
        // what prterun tells a job of its app, node and session (issue 36)
        let spec = AppSpec {
            size: n,
            argv: std::iter::once(app.exe.clone())
                .chain(app.argv.iter().cloned())
                .collect(),
            wdir: std::env::current_dir()
                .ok()
                .map(|d| d.display().to_string()),
        };
        move |s| {
            s.set_executable(&ns, &exe);
            s.set_memory_probe(Box::new(resident_mb));
            s.set_apps(&ns, vec![spec]);
            s.set_offset(&ns, 0);
            s.set_host_facts(host_facts());
        }
    });
    let mut ranks = Ranks(Vec::new());
    let mut start = PmixStart::new(&server, job.dialect);
    start.forward_output = true;
    for r in 0..n {
        host::start_rank(&mut start, &mut ranks, nspace, n, r, &app.launch())?;
    }
    let mut wire = Single {
        server,
        dialect: job.dialect,
        nspace: nspace.clone(),
        stats: job.stats,
        spawned_jobs: 0,
        namespaces: vec![nspace.clone()],
        running_spawns: Vec::new(),
    };
    let code = host::drive(&mut wire, &mut wake, ranks, job.ending(), &caught, &forward);
    // what the ranks wrote last is copied out before this launcher ends
    super::output::drain(Duration::from_secs(5));
    wire.server.stop();
    Ok(code)
}

/// A PMIx job on one node, as the host loop sees it.
struct Single {
    server: net::Running,
    dialect: Option<&'static str>,
    nspace: String,
    /// `--stats`
    stats: bool,
    spawned_jobs: u32,
    /// Every namespace of the run, for the cleanups they registered.
    namespaces: Vec<String>,
    /// Spawned namespaces whose end is still to be reported.
    running_spawns: Vec<String>,
}

/// The host events every PMIx job answers alike: an abort (the others
/// told at once), a finalize, a log, a lost connection, a kill or signal.
/// Any other is handed back.
pub(super) fn serve_common(
    server: &net::Running,
    e: HostEvent,
    ranks: &mut Ranks,
    ending: &mut Ending,
) -> Option<HostEvent> {
    match e {
        HostEvent::Aborted {
            proc,
            status,
            message,
        } => {
            let message = message.unwrap_or_default();
            if let Some(code) = ending.aborted(proc.rank, status, &message) {
                announce(server, codes::PMIX_ERR_PROC_ABORTED, proc, code);
            }
        }
        HostEvent::Finalized(p) => ranks.finalized(&p.nspace.to_string(), p.rank),
        HostEvent::Log { data, .. } => host::print_log(&data),
        HostEvent::Lost(p) => ending.lost(&p.nspace.to_string(), p.rank),
        e @ (HostEvent::Kill { .. } | HostEvent::Signal { .. }) => ranks.control(&e),
        e => return Some(e),
    }
    None
}

/// Tell the server that rank `rank` of `ns` ended with `code`.
pub(super) fn tell_exit(server: &net::Running, ns: &str, rank: u32, code: i32) {
    let ns = ns.to_string();
    server.post(move |s| s.set_proc_exit(&ns, rank, code));
}

impl Single {
    /// A PMIx_Spawn: a new job of every app's ranks, in a namespace of its
    /// own, through the launcher PMI spawn uses (host.rs).
    fn spawn(
        &mut self,
        request: u64,
        requester: Proc,
        apps: &[pmix_types::App],
        ranks: &mut Ranks,
    ) {
        let mut start = PmixStart::new(&self.server, self.dialect);
        start.forward_output = true;
        let (ns, result) = spawn_apps(
            &mut start,
            ranks,
            &self.nspace,
            &mut self.spawned_jobs,
            requester,
            apps,
        );
        self.namespaces.push(ns.clone());
        self.running_spawns.push(ns.clone());
        let result = result.map(|()| ns).map_err(|_| codes::PMIX_ERR_NOT_FOUND);
        self.server.call(move |s| s.spawned(request, result));
    }
}

/// Start the job a PMIx_Spawn of `requester` asks for (named after
/// `parent` and the `seq`-th spawn): its namespace, and whether every rank
/// started. What prterun tells a child (its parent, its apps) is
/// registered with it; its ranks follow every rank in `ranks`.
pub(super) fn spawn_apps(
    start: &mut PmixStart,
    ranks: &mut Ranks,
    parent: &str,
    seq: &mut u32,
    requester: Proc,
    apps: &[pmix_types::App],
) -> (String, Result<(), String>) {
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
    start.spawn = Some((requester, specs, ranks.0.len() as u32));
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
    host::spawn_job(start, ranks, parent, seq, &apps)
}

impl host::Wire for Single {
    fn exited(&mut self, ns: &str, rank: u32, code: i32) {
        tell_exit(&self.server, ns, rank, code);
    }

    fn serve(&mut self, ranks: &mut Ranks, ending: &mut Ending) {
        while let Ok(e) = self.server.events.try_recv() {
            if let Some(HostEvent::Spawn {
                request,
                requester,
                apps,
                ..
            }) = serve_common(&self.server, e, ranks, ending)
            {
                self.spawn(request, requester, &apps, ranks);
            }
        }
        // a spawned job whose ranks have all ended: its end reported
        let server = &self.server;
        self.running_spawns.retain(|ns| {
            let mut of_ns = ranks.0.iter().filter(|r| r.nspace == *ns).peekable();
            of_ns.peek().is_none() || of_ns.any(|r| r.status.is_none()) || {
                let code = ranks
                    .0
                    .iter()
                    .filter(|r| r.nspace == *ns)
                    .filter_map(|r| r.status)
                    .find(|c| *c != 0)
                    .unwrap_or(0);
                job_ended(server, ns, code);
                false
            }
        });
    }

    fn failed(&mut self, ns: &str, rank: u32, st: ExitStatus, code: i32) {
        announce_failure(&self.server, Proc::new(ns, rank), st, code);
    }

    fn finish(&mut self, o: Outcome) -> ExitCode {
        clean_up(&self.server, &self.namespaces);
        if self.stats && matches!(o, Outcome::Done(_)) {
            print_server_rss(&self.server);
        }
        host::exit_of(o)
    }
}

/// `--stats`: `server_rss <KiB>` on stderr, this process's peak RSS (the
/// launcher and its server are one process), and `server_gets <requests>
/// <blobs>`: the GETs for ranks' data the server answered and the ranks'
/// byte objects their replies carried (`Server::get_counts`).
pub(super) fn print_server_rss(server: &net::Running) {
    if let Some(c) = server.call(|s| s.get_counts()) {
        eprintln!("server_gets {} {}", c.requests, c.blobs);
    }
    let hwm = std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1).map(str::to_string))
        .unwrap_or_default();
    eprintln!("server_rss {hwm}");
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
pub(super) fn clean_up(server: &net::Running, namespaces: &[String]) {
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
pub(super) fn job_ended(server: &net::Running, ns: &str, code: i32) {
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

/// The PMIx wire's part in starting ranks ([`host::Starter`]): each rank's
/// environment from the server (under the `--dialect` URI variable only,
/// if one was named), and the server told each rank's pid; for a spawn,
/// the new namespace registered with its parent, apps and offset.
pub(super) struct PmixStart<'a> {
    pub(super) server: &'a net::Running,
    pub(super) dialect: Option<&'static str>,
    /// The spawn being started: who asked, what its apps are (as
    /// `pmix.app.*` tells them), and the ranks started before it.
    pub(super) spawn: Option<(Proc, Vec<AppSpec>, u32)>,
    /// Each rank's environment, by namespace.
    envs: std::collections::HashMap<String, Vec<Vec<(String, String)>>>,
    /// The ranks of a node's share of a job across nodes (run_pmi2.rs):
    /// they do not see this launcher's own PMI-2 variables, and whatever
    /// process claims a rank is not checked against its pid.
    pub(super) pmi2_task: bool,
    /// The ranks' stdout and stderr go through this launcher to the tools
    /// that pull them (output.rs): a PMIx job on one node, as prterun.
    pub(super) forward_output: bool,
}

impl<'a> PmixStart<'a> {
    pub(super) fn new(server: &'a net::Running, dialect: Option<&'static str>) -> PmixStart<'a> {
        PmixStart {
            server,
            dialect,
            spawn: None,
            envs: Default::default(),
            pmi2_task: false,
            forward_output: false,
        }
    }
}

impl host::Starter for PmixStart<'_> {
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
        if self.pmi2_task {
            for k in ["PMI_FD", "PMI_JOBID", "PMI_RANK", "PMI_SIZE", "PMI_SPAWNED"] {
                c.env_remove(k);
            }
        }
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
        if self.forward_output {
            super::output::capture(c, ns, rank, self.server.poster());
        }
        Ok(None)
    }

    /// Only this process or its descendants may connect as this rank; not
    /// waited for: the next rank starts at once (a claim that comes first
    /// is checked when the pid arrives).
    fn started(&mut self, ns: &str, rank: u32, pid: u32) {
        if self.pmi2_task {
            return;
        }
        let ns = ns.to_string();
        self.server.post(move |s| s.set_rank_pid(&ns, rank, pid));
    }
}
