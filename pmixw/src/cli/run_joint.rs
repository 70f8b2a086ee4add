//! `pmixw run -n N PROG ARGS : -n M [--mpi WIRE] PROG2 ARGS2 …`: one job
//! of several applications (mpiexec's MPMD form, a bare `:` between
//! them), each served the wire it speaks (`--mpi` per application, `auto`
//! by default: an MPICH program PMI, anything else PMIx). The job is one
//! job for both servers (issue #27): its PMI KVS and the PMIx server's
//! modex store are one store, and its PMI world barrier (`barrier_in`,
//! `kvs-fence`) and its PMIx fence are one collective, so a libpmix client
//! and an MPICH (or other PMI) client of the same job read each other's
//! keys across a fence ([`pmix_wire::pmi::joint`]; spec-notes/pmi.md §6).
//! Ranks are numbered across the applications in order; each rank's
//! application number is its application's index. Not served here: spawn
//! (either wire's is refused), `PMI_PORT`, and a job across nodes.

use super::host::{self, exit_code, exit_of, Ending, Job as Ranks, LaunchApp};
use super::run_pmi::{choose, Launcher, Mpi};
use super::run_pmix::{announce, announce_failure, PmixWire};
use pmix_types::status::codes;
use pmix_types::Proc;
use pmix_wire::pmi::fd::Driver;
use pmix_wire::pmi::joint;
use pmix_wire::pmi::server::{Event, JobSpec as PmiSpec, Server as PmiServer};
use pmix_wire::server::{net, AppSpec, HostEvent, JobSpec};
use std::collections::{BTreeMap, VecDeque};
use std::process::ExitCode;
use std::time::Duration;

/// One application of the job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppArgs {
    /// Its ranks.
    pub n: u32,
    /// The wire its ranks see.
    pub mpi: Mpi,
    /// The program.
    pub exe: String,
    /// Its arguments.
    pub argv: Vec<String>,
}

/// Whether `prog` (what follows `pmixw run`'s options) names several
/// applications.
pub fn is_mpmd(prog: &[String]) -> bool {
    prog.iter().any(|a| a == ":")
}

/// The applications of `prog`, split at each bare `:`: the first has the
/// top-level `-n` and `--mpi`; each later one may begin with its own
/// `-n N` (`--np N`) and `--mpi WIRE` (else one rank, `auto`).
pub fn split_apps(n: u32, mpi: Option<&str>, prog: &[String]) -> Result<Vec<AppArgs>, String> {
    let mut apps = Vec::new();
    for (i, seg) in prog.split(|a| a == ":").enumerate() {
        let (mut n_here, mut mpi_here) = if i == 0 {
            (Some(n), mpi.map(str::to_string))
        } else {
            (None, None)
        };
        let mut rest = seg;
        if i > 0 {
            loop {
                match rest {
                    [flag, v, more @ ..] if flag == "-n" || flag == "--np" => {
                        let v: u32 = v
                            .parse()
                            .map_err(|_| format!("application {}: -n {v:?}", i + 1))?;
                        n_here = Some(v);
                        rest = more;
                    }
                    [flag, v, more @ ..] if flag == "--mpi" => {
                        mpi_here = Some(v.clone());
                        rest = more;
                    }
                    _ => break,
                }
            }
        }
        let (exe, argv) = rest
            .split_first()
            .ok_or_else(|| format!("application {}: no program", i + 1))?;
        let n = n_here.unwrap_or(1);
        if n == 0 {
            return Err(format!("application {}: -n 0", i + 1));
        }
        apps.push(AppArgs {
            n,
            mpi: choose(mpi_here.as_deref(), exe)?,
            exe: exe.clone(),
            argv: argv.to_vec(),
        });
    }
    Ok(apps)
}

/// The job's settings, from `pmixw run`'s arguments.
pub struct Job {
    pub apps: Vec<AppArgs>,
    /// `--dialect`: the one URI variable PMIx ranks get.
    pub dialect: Option<&'static str>,
    pub nspace: String,
    pub timeout: Option<Duration>,
    pub grace: Duration,
    pub keep_going: bool,
    /// `--dstore`: the PMIx ranks read job data and every rank's fenced
    /// data (the PMI ranks' too) from a ds21 store.
    pub dstore: bool,
}

pub fn run(job: Job) -> Result<ExitCode, String> {
    if std::env::var_os("PMI_FD").is_some() {
        return Err("several applications (`:`) are not served across nodes".into());
    }
    let caught = host::catch_signals();
    let ns = job.nspace.clone();
    let total: u32 = job.apps.iter().map(|a| a.n).sum();
    let server = net::start_opts(
        vec![JobSpec {
            nspace: ns.clone(),
            nprocs: total,
            hostname: net::hostname(),
            info: Vec::new(),
        }],
        net::Options {
            rendezvous: Some(std::env::temp_dir()),
            dstore: job.dstore.then(std::env::temp_dir),
            ..net::Options::default()
        },
    )
    .map_err(|e| format!("cannot start the server: {e}"))?;
    let here = std::env::current_dir()
        .ok()
        .map(|d| d.display().to_string());
    let specs: Vec<AppSpec> = job
        .apps
        .iter()
        .map(|a| AppSpec {
            size: a.n,
            argv: std::iter::once(a.exe.clone())
                .chain(a.argv.iter().cloned())
                .collect(),
            wdir: here.clone(),
        })
        .collect();
    server.call({
        let (ns, exe) = (ns.clone(), job.apps[0].exe.clone());
        move |s| {
            s.set_executable(&ns, &exe);
            s.set_apps(&ns, specs);
        }
    });
    let mut spec = PmiSpec::single_node(&ns, total);
    spec.joint = true;
    spec.appnum = job
        .apps
        .iter()
        .enumerate()
        .flat_map(|(i, a)| std::iter::repeat_n(i as i32, a.n as usize))
        .collect();
    let mut core = PmiServer::new();
    core.register(spec);
    let mut l = Launcher::new(Driver::new(core), Mpi::Pmi1, None);
    let mut pmix = PmixWire::new(&server, job.dialect);
    let mut ranks = Ranks(Vec::new());
    let mut first = 0;
    for a in &job.apps {
        let app = LaunchApp {
            cmd: a.exe.clone(),
            argv: a.argv.clone(),
            n: a.n,
            ..Default::default()
        };
        l.mpi = a.mpi;
        let wire: &mut dyn host::Wire = if a.mpi == Mpi::Pmix {
            &mut pmix
        } else {
            &mut l
        };
        for r in first..first + a.n {
            host::start_rank(wire, &mut ranks, &ns, total, r, &app)?;
        }
        first += a.n;
    }
    // PMI ranks in the PMIx fence: rank → the PMI core's request
    let mut waiting: BTreeMap<u32, u64> = BTreeMap::new();
    let mut ending = Ending::new(job.grace, job.keep_going, job.timeout);
    // the others are told, then ended (run.rs does the same)
    let tell = |who: Proc, code: i32| announce(&server, codes::PMIX_ERR_PROC_ABORTED, who, code);
    loop {
        let mut events: VecDeque<Event> = l.driver.step(Duration::from_millis(2)).into();
        let mut newly_failed = Vec::new();
        for r in ranks.0.iter_mut().filter(|r| r.status.is_none()) {
            if let Ok(Some(st)) = r.child.try_wait() {
                let code = exit_code(st);
                r.status = Some(code);
                let (n2, rank) = (r.nspace.clone(), r.rank);
                server.post(move |s| s.set_proc_exit(&n2, rank, code));
                if code != 0 && !r.finalized {
                    newly_failed.push((r.rank, st));
                }
            }
        }
        // the PMIx side's upcalls
        while let Ok(e) = server.events.try_recv() {
            match e {
                HostEvent::Aborted {
                    proc,
                    status,
                    message,
                } => {
                    let message = message.unwrap_or_default();
                    if let Some(code) = ending.aborted(proc.rank, status, &message) {
                        tell(proc, code);
                    }
                }
                HostEvent::Finalized(p) => {
                    let pns = p.nspace.to_string();
                    for r in ranks
                        .0
                        .iter_mut()
                        .filter(|r| r.rank == p.rank && r.nspace == pns)
                    {
                        r.finalized = true;
                    }
                }
                HostEvent::Log { data, .. } => host::print_log(&data),
                HostEvent::Lost(p) => ending.lost(&p.nspace.to_string(), p.rank),
                HostEvent::HostFenceDone { proc, status } => {
                    let Some(request) = waiting.remove(&proc.rank) else {
                        continue;
                    };
                    let result = if status == codes::PMIX_SUCCESS {
                        let n2 = ns.clone();
                        server
                            .call(move |s| joint::keys_for_pmi(s, &n2))
                            .ok_or_else(|| "the PMIx server has stopped".to_string())
                    } else {
                        Err(format!(
                            "the job's PMIx fence failed ({})",
                            pmix_types::status::status_name(status).unwrap_or("an error")
                        ))
                    };
                    l.driver.core().joint_done(request, result);
                    events.extend(l.driver.pending());
                }
                HostEvent::Spawn { request, .. } => {
                    eprintln!(
                        "pmixw run: PMIx_Spawn is not served in a job of several applications"
                    );
                    server.call(move |s| s.spawned(request, Err(codes::PMIX_ERR_NOT_SUPPORTED)));
                }
                e @ (HostEvent::Kill { .. } | HostEvent::Signal { .. }) => ranks.control(&e),
                _ => {}
            }
        }
        // the PMI side's
        while let Some(e) = events.pop_front() {
            match e {
                Event::JointFence {
                    request,
                    kvsname,
                    rank,
                    puts,
                } => {
                    waiting.insert(rank, request);
                    server.post(move |s| joint::enter(s, &kvsname, rank, &puts));
                }
                Event::Lost { kvsname, rank } => {
                    ending.lost(&kvsname, rank);
                    server.post(move |s| s.host_rank_lost(&kvsname, rank));
                }
                Event::Aborted {
                    rank,
                    status,
                    message,
                    ..
                } => {
                    if let Some(code) = ending.aborted(rank, status, &message) {
                        tell(Proc::new(&ns, rank), code);
                    }
                }
                Event::Finalized { kvsname, rank } => {
                    for r in ranks
                        .0
                        .iter_mut()
                        .filter(|r| r.rank == rank && r.nspace == kvsname)
                    {
                        r.finalized = true;
                    }
                }
                Event::Spawn { request, .. } => {
                    eprintln!(
                        "pmixw run: PMI spawn is not served in a job of several applications"
                    );
                    l.driver.core().spawned(
                        request,
                        Err("spawn is not served in a job of several applications".into()),
                    );
                    events.extend(l.driver.pending());
                }
                // only a job across nodes asks these
                Event::Fence { request, .. } => {
                    l.driver
                        .core()
                        .fence_done(request, Err("no other node".into()));
                    events.extend(l.driver.pending());
                }
                Event::Name { request, .. } => {
                    l.driver
                        .core()
                        .name_done(request, Err("no name service".into()));
                    events.extend(l.driver.pending());
                }
                Event::Initialized { .. } => {}
            }
        }
        ending.first_ended_first(&mut newly_failed, |(rank, _)| (ns.clone(), *rank));
        for (rank, st) in newly_failed {
            if let Some(code) = ending.failed(&ns, rank, st) {
                announce_failure(&server, Proc::new(&ns, rank), st, code);
            }
        }
        if let Some(o) = ending.check(&mut ranks, &caught) {
            server.stop();
            return Ok(exit_of(o));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn applications_split_at_bare_colons() {
        let apps = split_apps(
            2,
            Some("pmix"),
            &args("a x : -n 3 --mpi pmi2 b -n 9 : --mpi pmi1 c"),
        )
        .unwrap();
        assert_eq!(
            apps,
            vec![
                AppArgs {
                    n: 2,
                    mpi: Mpi::Pmix,
                    exe: "a".into(),
                    argv: args("x"),
                },
                AppArgs {
                    n: 3,
                    mpi: Mpi::Pmi2,
                    exe: "b".into(),
                    argv: args("-n 9"),
                },
                AppArgs {
                    n: 1,
                    mpi: Mpi::Pmi1,
                    exe: "c".into(),
                    argv: vec![],
                },
            ]
        );
        assert!(split_apps(1, None, &args("a :")).is_err());
        assert!(split_apps(1, None, &args("a : -n x b")).is_err());
        assert!(split_apps(1, None, &args("a : -n 0 b")).is_err());
        assert!(split_apps(1, None, &args("a : --mpi what b")).is_err());
        assert!(!is_mpmd(&args("a -n 2 b")));
    }
}
