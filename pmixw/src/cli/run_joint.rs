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

use super::host::{self, App, Ending, Job, Mpi, Ranks};
use super::run_pmi::{choose, PmiStart};
use super::run_pmix::{
    announce, announce_failure, serve_common, start_server, tell_exit, PmixStart,
};
use super::wake::Wake;
use pmix_types::status::codes;
use pmix_types::Proc;
use pmix_wire::pmi::joint;
use pmix_wire::pmi::server::fd::Driver;
use pmix_wire::pmi::server::{Event, JobSpec as PmiSpec, Server as PmiServer};
use pmix_wire::server::{net, AppSpec, HostEvent};
use std::collections::{BTreeMap, VecDeque};
use std::process::{ExitCode, ExitStatus};
use std::time::Duration;

/// Whether `prog` (what follows `pmixw run`'s options) names several
/// applications.
pub fn is_mpmd(prog: &[String]) -> bool {
    prog.iter().any(|a| a == ":")
}

/// The applications of `prog`, split at each bare `:`: the first has the
/// top-level `-n` and `--mpi`; each later one may begin with its own
/// `-n N` (`--np N`) and `--mpi WIRE` (else one rank, `auto`).
pub fn split_apps(n: u32, mpi: Option<&str>, prog: &[String]) -> Result<Vec<App>, String> {
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
        apps.push(App {
            n,
            mpi: choose(mpi_here.as_deref(), exe)?,
            exe: exe.clone(),
            argv: argv.to_vec(),
        });
    }
    Ok(apps)
}

pub fn run(job: &Job) -> Result<ExitCode, String> {
    if std::env::var_os("PMI_FD").is_some() {
        return Err("several applications (`:`) are not served across nodes".into());
    }
    let caught = host::catch_signals();
    let forward = super::procgroup::forward_signals();
    let ns = job.nspace.clone();
    let total: u32 = job.apps.iter().map(|a| a.n).sum();
    let mut wake = Wake::new().map_err(|e| format!("cannot make the loop's wake: {e}"))?;
    let server = start_server(&ns, total, net::hostname(), job.dstore, &wake.waker())
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
        let (ns, exe) = (ns.clone(), job.app().exe.clone());
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
    let mut l = PmiStart::new(Driver::new(core), Mpi::Pmi1, None);
    let mut ranks = Ranks(Vec::new());
    {
        let mut pmix = PmixStart::new(&server, job.dialect);
        let mut first = 0;
        for a in &job.apps {
            l.mpi = a.mpi;
            let wire: &mut dyn host::Starter = if a.mpi == Mpi::Pmix {
                &mut pmix
            } else {
                &mut l
            };
            for r in first..first + a.n {
                host::start_rank(wire, &mut ranks, &ns, total, r, &a.launch())?;
            }
            first += a.n;
        }
    }
    let mut wire = Joint {
        server,
        pmi: l,
        ns,
        events: VecDeque::new(),
        waiting: BTreeMap::new(),
    };
    let code = host::drive(&mut wire, &mut wake, ranks, job.ending(), &caught, &forward);
    wire.server.stop();
    Ok(code)
}

/// A joint job, as the host loop sees it: both servers.
struct Joint {
    server: net::Running,
    pmi: PmiStart,
    ns: String,
    /// What the PMI core asked, to be served this round.
    events: VecDeque<Event>,
    /// PMI ranks in the PMIx fence: rank → the PMI core's request.
    waiting: BTreeMap<u32, u64>,
}

impl host::Wire for Joint {
    fn poll(&mut self, _wake: &Wake, _max: Duration) {
        // the PMI-1 driver's sockets are its wait
        self.events
            .extend(self.pmi.driver.step(Duration::from_millis(2)));
    }

    fn exited(&mut self, ns: &str, rank: u32, code: i32) {
        tell_exit(&self.server, ns, rank, code);
    }

    fn serve(&mut self, ranks: &mut Ranks, ending: &mut Ending) {
        let (server, ns, l) = (&self.server, &self.ns, &mut self.pmi);
        // the PMIx side's upcalls
        while let Ok(e) = server.events.try_recv() {
            match serve_common(server, e, ranks, ending) {
                Some(HostEvent::HostFenceDone { proc, status }) => {
                    let Some(request) = self.waiting.remove(&proc.rank) else {
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
                    self.events.extend(l.driver.pending());
                }
                Some(HostEvent::Spawn { request, .. }) => {
                    eprintln!(
                        "pmixw run: PMIx_Spawn is not served in a job of several applications"
                    );
                    server.call(move |s| s.spawned(request, Err(codes::PMIX_ERR_NOT_SUPPORTED)));
                }
                _ => {}
            }
        }
        // the PMI side's
        while let Some(e) = self.events.pop_front() {
            match e {
                Event::JointFence {
                    request,
                    kvsname,
                    rank,
                    puts,
                } => {
                    self.waiting.insert(rank, request);
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
                    // the others are told, then ended (as a PMIx rank's)
                    if let Some(code) = ending.aborted(rank, status, &message) {
                        announce(
                            server,
                            codes::PMIX_ERR_PROC_ABORTED,
                            Proc::new(ns, rank),
                            code,
                        );
                    }
                }
                Event::Finalized { kvsname, rank } => ranks.finalized(&kvsname, rank),
                Event::Spawn { request, .. } => {
                    eprintln!(
                        "pmixw run: PMI spawn is not served in a job of several applications"
                    );
                    l.driver.core().spawned(
                        request,
                        Err("spawn is not served in a job of several applications".into()),
                    );
                    self.events.extend(l.driver.pending());
                }
                // only a job across nodes asks these
                Event::Fence { request, .. } => {
                    l.driver
                        .core()
                        .fence_done(request, Err("no other node".into()));
                    self.events.extend(l.driver.pending());
                }
                Event::Name { request, .. } => {
                    l.driver
                        .core()
                        .name_done(request, Err("no name service".into()));
                    self.events.extend(l.driver.pending());
                }
                Event::Initialized { .. } => {}
                // an event of a newer core than this host knows: said, not dropped
                other => eprintln!("pmixw run: PMI event not handled: {other:?}"),
            }
        }
    }

    fn failed(&mut self, ns: &str, rank: u32, st: ExitStatus, code: i32) {
        announce_failure(&self.server, Proc::new(ns, rank), st, code);
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
                App {
                    n: 2,
                    mpi: Mpi::Pmix,
                    exe: "a".into(),
                    argv: args("x"),
                },
                App {
                    n: 3,
                    mpi: Mpi::Pmi2,
                    exe: "b".into(),
                    argv: args("-n 9"),
                },
                App {
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
