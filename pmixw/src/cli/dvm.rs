//! `pmixw dvm`: one PMIx server for many jobs on this node, as PRRTE's
//! DVM (`prte`), and `pmixw run --dvm`, which submits a job to it and
//! waits, as `prun` does (issue #36 item 7).
//!
//! The DVM starts a server with no job, writes its tool rendezvous file
//! (`pmix.<host>.tool.<pid>` in the tmpdir) and the system server's
//! (`pmix.sys.<host>` in `$PMIX_SYSTEM_TMPDIR`, else the tmpdir), so tools
//! attach to it as to a system server, and serves until SIGINT, SIGTERM
//! or SIGHUP: then the jobs still running are ended (SIGTERM, SIGKILL
//! after a second) and the files removed. A job is a PMIx_Spawn from a
//! tool: `pmixw run --dvm -n N PROG ARGS` attaches as a tool, asks for N
//! ranks of PROG with its own environment (less the PMIx, PMI, Open MPI
//! and PRRTE variables of wherever it runs) and working directory, and
//! waits for the job's PMIX_EVENT_JOB_END, whose status is its own: a
//! rank's abort status, else the first failure's (a rank ending non-zero
//! before it finalized; the job's other ranks are then ended), else 0.
//! Every job is served by the one server, so PMIx_Publish/Lookup and
//! PMIx_Connect (MPI_Publish_name/Lookup_name, MPI_Comm_accept/connect)
//! work across them. The ranks' output is the DVM's (no I/O forwarding).

use super::host::{self, Ranks};
use super::run_pmix::{self, PmixStart};
use pmix_types::status::codes;
use pmix_types::{Proc, Value};
use pmix_wire::server::{net, HostEvent};
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// What the DVM knows of one job.
#[derive(Default)]
struct JobState {
    /// The status an abort asked for.
    aborted: Option<i32>,
    /// The first failure's status.
    failed: Option<i32>,
}

/// `pmixw dvm`.
pub fn dvm() -> Result<ExitCode, String> {
    let caught = host::catch_signals();
    let server = net::start_opts(
        Vec::new(),
        net::Options {
            rendezvous: Some(std::env::temp_dir()),
            ..net::Options::default()
        },
    )
    .map_err(|e| format!("cannot start the server: {e}"))?;
    let _system = run_pmix::system_rendezvous()?;
    // if the DVM is killed, its guard ends the jobs' ranks and removes its
    // files (guard.rs)
    super::guard::start(Duration::from_secs(1));
    eprintln!("pmixw dvm: ready, {}", server.uri());
    let parent = format!("dvm-{}", std::process::id());
    let mut ranks = Ranks(Vec::new());
    let mut jobs: BTreeMap<String, JobState> = BTreeMap::new();
    let mut seq = 0;
    loop {
        if caught.iter().any(|(_, f)| f.load(Ordering::Relaxed)) {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
        for (i, st) in ranks.reap() {
            let r = &ranks.0[i];
            let code = host::exit_code(st);
            run_pmix::tell_exit(&server, &r.nspace, r.rank, code);
            if code != 0 && !r.finalized {
                let (ns, rank) = (r.nspace.clone(), r.rank);
                let j = jobs.entry(ns.clone()).or_default();
                if j.aborted.is_none() && j.failed.is_none() {
                    j.failed = Some(code);
                    run_pmix::announce_failure(&server, Proc::new(&ns, rank), st, code);
                    end_job(&mut ranks, &ns);
                }
            }
        }
        while let Ok(e) = server.events.try_recv() {
            match e {
                HostEvent::Spawn {
                    request,
                    requester,
                    apps,
                    ..
                } => {
                    let mut start = PmixStart::new(&server, None);
                    let (ns, result) = run_pmix::spawn_apps(
                        &mut start, &mut ranks, &parent, &mut seq, requester, &apps,
                    );
                    jobs.insert(ns.clone(), JobState::default());
                    let result = result.map(|()| ns).map_err(|_| codes::PMIX_ERR_NOT_FOUND);
                    server.call(move |s| s.spawned(request, result));
                }
                HostEvent::Aborted { proc, status, .. } => {
                    let ns = proc.nspace.to_string();
                    let j = jobs.entry(ns.clone()).or_default();
                    if j.aborted.is_none() && j.failed.is_none() {
                        j.aborted = Some(status);
                        run_pmix::announce(&server, codes::PMIX_ERR_PROC_ABORTED, proc, status);
                        end_job(&mut ranks, &ns);
                    }
                }
                HostEvent::Finalized(p) => ranks.finalized(&p.nspace.to_string(), p.rank),
                HostEvent::Log { data, .. } => host::print_log(&data),
                e @ (HostEvent::Kill { .. } | HostEvent::Signal { .. }) => ranks.control(&e),
                _ => {}
            }
        }
        // a job whose ranks have all ended: its end reported, its
        // cleanups done, its ranks forgotten
        let ended: Vec<String> = jobs
            .keys()
            .filter(|ns| {
                let mut of = ranks.0.iter().filter(|r| &r.nspace == *ns).peekable();
                of.peek().is_some() && of.all(|r| r.status.is_some())
            })
            .cloned()
            .collect();
        for ns in ended {
            let j = jobs.remove(&ns).unwrap_or_default();
            let first_nonzero = ranks
                .0
                .iter()
                .filter(|r| r.nspace == ns)
                .filter_map(|r| r.status)
                .find(|c| *c != 0);
            let code = j.aborted.or(j.failed).or(first_nonzero).unwrap_or(0);
            run_pmix::job_ended(&server, &ns, code);
            run_pmix::clean_up(&server, std::slice::from_ref(&ns));
            // its data forgotten: the namespace queries keep its name,
            // size and status (the last 1024 jobs, query.rs RETIRED_KEPT)
            {
                let ns = ns.clone();
                server.post(move |s| s.deregister_nspace(&ns));
            }
            for r in ranks.0.iter().filter(|r| r.nspace == ns) {
                super::guard::ended(r.child.id());
            }
            ranks.0.retain(|r| r.nspace != ns);
        }
    }
    ranks.end_within(Duration::from_secs(1), || false);
    let all: Vec<String> = jobs.keys().cloned().collect();
    run_pmix::clean_up(&server, &all);
    drop(ranks);
    // what the jobs' ranks left outside their groups (guard.rs)
    super::guard::end_marked(Duration::from_secs(1));
    server.stop();
    drop(_system);
    super::guard::done();
    eprintln!("pmixw dvm: stopped");
    Ok(ExitCode::SUCCESS)
}

/// SIGTERM to the running ranks of `ns` (SIGKILL follows when the DVM
/// stops; a rank that ignores it keeps its job open until then).
fn end_job(ranks: &mut Ranks, ns: &str) {
    for r in ranks
        .0
        .iter()
        .filter(|r| r.nspace == ns && r.status.is_none())
    {
        net::signal_pid(r.child.id(), libc::SIGTERM);
    }
}

/// Variables a submitted job does not take from where `pmixw run --dvm`
/// runs: the launcher's own (the DVM gives the ranks theirs).
fn forwarded(k: &str) -> bool {
    !["PMIX_", "PMI_", "OMPI_", "PRTE_", "PMIXW_"]
        .iter()
        .any(|p| k.starts_with(p))
}

/// `pmixw run --dvm -n N PROG ARGS`: the job submitted to this node's
/// `pmixw dvm` (its system server), its end waited for; the job's status.
pub fn submit(n: u32, prog: &[String], timeout: Option<Duration>) -> Result<ExitCode, String> {
    use pmix_wire::client::Spawn;
    let (exe, args) = prog.split_first().ok_or("no program")?;
    let mut c = pmix_wire::tool::connect(&pmix_wire::tool::Target::System)
        .map_err(|e| format!("--dvm: no pmixw dvm found: {e}"))?;
    c.register_events(&[codes::PMIX_EVENT_JOB_END], &[])
        .map_err(|e| format!("--dvm: {e}"))?;
    let app = pmix_types::App {
        cmd: Some(exe.as_str().into()),
        argv: prog.iter().map(|a| a.as_str().into()).collect(),
        env: std::env::vars()
            .filter(|(k, _)| forwarded(k))
            .map(|(k, v)| format!("{k}={v}").as_str().into())
            .collect(),
        cwd: std::env::current_dir()
            .ok()
            .map(|d| d.display().to_string().as_str().into()),
        maxprocs: i32::try_from(n).unwrap_or(i32::MAX),
        info: Vec::new(),
    };
    let _ = args;
    let ns = c
        .spawn(Spawn::new().app(app))
        .map_err(|e| format!("--dvm: the job was not started: {e}"))?;
    let wait = timeout.unwrap_or(Duration::from_secs(u32::MAX.into()));
    loop {
        let ev = c
            .next_event(&[codes::PMIX_EVENT_JOB_END], wait)
            .map_err(|e| format!("--dvm: job {ns}: {e}"))?;
        if ev.source.nspace.to_string() != ns {
            continue;
        }
        let code = ev
            .info
            .iter()
            .find(|i| i.key.as_bytes() == b"pmix.job.term.status")
            .and_then(|i| match i.value {
                Value::Status(s) | Value::Int(s) => Some(s),
                _ => None,
            })
            .unwrap_or(0);
        return Ok(ExitCode::from(code.clamp(0, 255) as u8));
    }
}
