//! The host layer every wire of `pmixw run` stands on (nothing here
//! imports a wire's module): what the run was asked for ([`Job`]), its
//! ranks ([`Ranks`]), starting them, and the one host loop, [`drive`],
//! that runs a job of any wire: it reaps the ranks, lets the wire
//! ([`Wire`]: PMIx on one node in run_pmix.rs, PMI-1/PMI-2 in run_pmi.rs,
//! a node's share of a job across nodes in run_pmi2.rs, a joint job in
//! run_joint.rs) serve its servers, and ends the job by one set of rules
//! ([`Ending`]: abort, failure, escalation, a caught signal, the timeout).
//!
//! Starting ranks: `PMIx_Spawn` (run_pmix.rs) and PMI's `spawn`
//! (run_pmi.rs) both reach [`spawn_job`], which names the new job, has the
//! wire's server register it, and starts every rank of every application
//! with the wire's environment; the ranks join the run's [`Ranks`], which
//! the loop ends and whose failures it reports as it does the first
//! job's. What differs between the wires (the server's registration, each
//! rank's environment, what the server is told once a rank runs) is a
//! [`Starter`].

use super::output::say;
use super::procgroup;
use super::wake::{Wake, IDLE_WAIT};
use pmix_types::{Proc, RANK_WILDCARD};
use pmix_wire::server::HostEvent;
use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Which wire a job's ranks see.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mpi {
    /// PMIx (Open MPI, libpmix programs).
    Pmix,
    /// PMI-1 (MPICH's default when it finds `PMI_SIZE`).
    Pmi1,
    /// PMI-2 (MPICH with `MPIR_CVAR_PMI_VERSION=2`).
    Pmi2,
}

/// One application of the job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct App {
    /// Its ranks.
    pub n: u32,
    /// The wire its ranks see.
    pub mpi: Mpi,
    /// The program.
    pub exe: String,
    /// Its arguments.
    pub argv: Vec<String>,
}

impl App {
    /// Its ranks' command, as [`start_rank`] takes it.
    pub(super) fn launch(&self) -> LaunchApp {
        LaunchApp {
            cmd: self.exe.clone(),
            argv: self.argv.clone(),
            n: self.n,
            ..Default::default()
        }
    }
}

/// What `pmixw run` was asked to run, the same for every wire (each reads
/// what concerns it).
pub struct Job {
    /// Its applications: one, or several (a joint job, run_joint.rs).
    pub apps: Vec<App>,
    /// Its namespace (a PMI-2 launch across nodes names it after the
    /// PMI-2 job id instead).
    pub nspace: String,
    /// `--dialect`: the one URI variable PMIx ranks get.
    pub dialect: Option<&'static str>,
    pub timeout: Option<Duration>,
    pub grace: Duration,
    pub keep_going: bool,
    /// `--system`: also this node's system server (PMIx on one node).
    pub system: bool,
    /// `--stats`: the server's peak memory at the end (PMIx on one node;
    /// under PMI-2, each node's, one line a node).
    pub stats: bool,
    /// `--dstore`: a ds21 store for libpmix 4.2.x clients.
    pub dstore: bool,
    /// Across nodes: rank r on node r % nodes instead of blocks.
    pub cyclic: bool,
    /// `--pmi-port`: PMI ranks reach the server by `PMI_PORT`.
    pub pmi_port: bool,
}

impl Job {
    /// The first (or only) application.
    pub(super) fn app(&self) -> &App {
        &self.apps[0]
    }

    /// The run's [`Ending`], starting now.
    pub(super) fn ending(&self) -> Ending {
        Ending::new(self.grace, self.keep_going, self.timeout)
    }
}

/// One rank: its process, name and what became of it.
pub(super) struct Rank {
    pub(super) child: Child,
    pub(super) nspace: String,
    pub(super) rank: u32,
    pub(super) status: Option<i32>,
    pub(super) finalized: bool,
}

/// A job's ranks, each the leader of its own process group
/// (procgroup.rs); those still running are killed when it is dropped,
/// with whatever is left in their groups.
pub(super) struct Ranks(pub(super) Vec<Rank>);
impl Drop for Ranks {
    fn drop(&mut self) {
        for r in &mut self.0 {
            if r.status.is_none() {
                procgroup::signal_group(r.child.id(), libc::SIGKILL);
                let _ = r.child.wait();
                r.status = Some(128 + libc::SIGKILL);
            }
        }
        self.end_groups(Duration::ZERO);
    }
}

impl Ranks {
    /// SIGTERM to the running ranks, then up to `grace` for them to end,
    /// or until `again` says a second signal came (then at once: the
    /// caller kills what is left).
    pub(super) fn end_within(&mut self, grace: Duration, again: impl Fn() -> bool) {
        self.signal_running(libc::SIGTERM);
        let deadline = Instant::now() + grace;
        while self.0.iter_mut().any(|r| r.status.is_none()) && Instant::now() < deadline {
            if again() {
                say("pmixw run: signalled again; killing the job");
                return;
            }
            for r in self.0.iter_mut().filter(|r| r.status.is_none()) {
                if let Ok(Some(st)) = r.child.try_wait() {
                    r.status = Some(exit_code(st));
                }
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// What is left in the groups of ranks that have all ended (a rank's
    /// descendants): ended, SIGTERM then SIGKILL after `grace`.
    pub(super) fn end_groups(&mut self, grace: Duration) {
        let groups: Vec<u32> = self.0.iter().map(|r| r.child.id()).collect();
        procgroup::end_groups(&groups, grace);
        // no longer the guard's to end: their ids may be reused
        for g in groups {
            super::guard::ended(g);
        }
    }

    /// A kill or signal a client or tool asked for (the core has already
    /// answered): to the running ranks it names, each with its group.
    pub(super) fn control(&mut self, e: &HostEvent) {
        match e {
            HostEvent::Kill { targets, .. } => {
                for r in self.0.iter_mut().filter(|r| r.status.is_none()) {
                    if hits(targets, &r.nspace, r.rank) {
                        procgroup::signal_group(r.child.id(), libc::SIGKILL);
                    }
                }
            }
            HostEvent::Signal {
                targets, signal, ..
            } => {
                for r in self.0.iter().filter(|r| r.status.is_none()) {
                    if hits(targets, &r.nspace, r.rank) {
                        procgroup::signal_group(r.child.id(), *signal);
                    }
                }
            }
            _ => {}
        }
    }

    /// The ranks that have ended since the last look, their status set:
    /// (index, how it ended).
    pub(super) fn reap(&mut self) -> Vec<(usize, ExitStatus)> {
        let mut out = Vec::new();
        // the children that have ended, one at a time, without reaping them
        // (waitid WNOWAIT), each reaped through its Child: as many wait
        // calls as ranks ended, where asking every running rank made
        // O(N) calls a round (N = 1024: ~10⁶ waitpid calls over a job's
        // end). An ended child that is not a running rank (none is
        // expected) leaves the rest to the scan below.
        loop {
            // SAFETY: waitid on a zeroed local siginfo_t; WNOWAIT leaves
            // the child to be reaped by its Child
            let pid = unsafe {
                let mut info: libc::siginfo_t = std::mem::zeroed();
                let rc = libc::waitid(
                    libc::P_ALL,
                    0,
                    &mut info,
                    libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
                );
                if rc != 0 {
                    break;
                }
                info.si_pid()
            };
            if pid <= 0 {
                return out;
            }
            let Some(i) = self
                .0
                .iter()
                .position(|r| r.status.is_none() && r.child.id() == pid as u32)
            else {
                break;
            };
            match self.0[i].child.try_wait() {
                Ok(Some(st)) => {
                    self.0[i].status = Some(exit_code(st));
                    out.push((i, st));
                }
                _ => break,
            }
        }
        for (i, r) in self.0.iter_mut().enumerate() {
            if r.status.is_none() {
                if let Ok(Some(st)) = r.child.try_wait() {
                    r.status = Some(exit_code(st));
                    out.push((i, st));
                }
            }
        }
        out
    }

    /// Rank `rank` of `ns` has finalized: its end is no failure.
    pub(super) fn finalized(&mut self, ns: &str, rank: u32) {
        for r in self
            .0
            .iter_mut()
            .filter(|r| r.rank == rank && r.nspace == ns)
        {
            r.finalized = true;
        }
    }

    /// `sig` to every running rank's process group (a SIGTERM followed by
    /// a SIGCONT when a forwarded SIGTSTP may have stopped them: a stopped
    /// process acts on SIGTERM only once continued).
    pub(super) fn signal_running(&mut self, sig: i32) {
        let cont = sig == libc::SIGTERM && procgroup::stop_forwarded();
        for r in &mut self.0 {
            if r.status.is_none() {
                procgroup::signal_group(r.child.id(), sig);
                if cont {
                    procgroup::signal_group(r.child.id(), libc::SIGCONT);
                }
            }
        }
    }
}

/// SIGINT, SIGTERM and SIGHUP, caught from now on: each sets its flag.
pub(super) fn catch_signals() -> Vec<(i32, Arc<AtomicBool>)> {
    [libc::SIGINT, libc::SIGTERM, libc::SIGHUP]
        .into_iter()
        .map(|s| {
            let f = Arc::new(AtomicBool::new(false));
            let _ = signal_hook::flag::register(s, f.clone());
            (s, f)
        })
        .collect()
}

/// A rank's exit as a launcher reports it: its code, or 128 + the signal.
pub(super) fn exit_code(st: std::process::ExitStatus) -> i32 {
    st.code()
        .unwrap_or_else(|| 128 + st.signal().unwrap_or(libc::SIGKILL))
}

/// A client's PMIx_Log of strings: to our stdout or stderr, as it asked.
pub(super) fn print_log(data: &[pmix_types::Info]) {
    for i in data {
        if let pmix_types::Value::String(Some(s)) = &i.value {
            match i.key.to_string().as_str() {
                "pmix.log.stdout" => print!("{s}"),
                _ => eprint!("{s}"),
            }
        }
    }
}

/// Whether `targets` names rank `rank` of `ns` (or its whole namespace).
fn hits(targets: &[Proc], ns: &str, rank: u32) -> bool {
    targets
        .iter()
        .any(|p| p.nspace.to_string() == ns && (p.rank == rank || p.rank == RANK_WILDCARD))
}

/// One application of a spawn.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct LaunchApp {
    /// The executable.
    pub cmd: String,
    /// Its arguments (without the executable).
    pub argv: Vec<String>,
    /// How many ranks.
    pub n: u32,
    /// Variables its ranks get besides the wire's.
    pub env: Vec<(String, String)>,
    /// Its working directory (else ours).
    pub wdir: Option<String>,
}

/// A wire's part in starting a job.
pub(super) trait Starter {
    /// Register job `name` of `total` ranks (`apps`' ranks in order) with
    /// the wire's server, before any rank starts.
    fn register(&mut self, name: &str, total: u32, apps: &[LaunchApp]);
    /// Give rank `rank` of `name` (of `total`) the wire's environment on
    /// `c`; what must stay open until it has started (the launcher's
    /// copy of its `PMI_FD`), dropped then.
    fn prepare(
        &mut self,
        c: &mut Command,
        name: &str,
        total: u32,
        rank: u32,
    ) -> Result<Option<OwnedFd>, String>;
    /// Rank `rank` of `name` runs as process `pid`.
    fn started(&mut self, _name: &str, _rank: u32, _pid: u32) {}
}

/// The name of a run's `seq`-th spawned job (1, 2, …), the spawning job
/// being `parent`: `<parent>-spawn-<seq>`, for either wire.
pub(super) fn spawn_name(parent: &str, seq: u32) -> String {
    format!("{parent}-spawn-{seq}")
}

/// Start a spawned job: it is named [`spawn_name`] (`seq` counts the
/// run's spawns), registered with `wire`'s server, and every rank of
/// every application started in order (rank numbers run on across the
/// applications) with the wire's environment, then the application's own
/// variables and working directory; each joins `ranks`. Stops at the
/// first rank that cannot start, logging it: its error is the result
/// (the ranks already started run on, as the job's ranks do).
pub(super) fn spawn_job(
    wire: &mut dyn Starter,
    ranks: &mut Ranks,
    parent: &str,
    seq: &mut u32,
    apps: &[LaunchApp],
) -> (String, Result<(), String>) {
    *seq += 1;
    let name = spawn_name(parent, *seq);
    let total: u32 = apps.iter().map(|a| a.n).sum();
    wire.register(&name, total, apps);
    let mut rank = 0;
    for a in apps {
        for _ in 0..a.n {
            if let Err(e) = start_rank(wire, ranks, &name, total, rank, a) {
                say(&format!("pmixw run: {e}"));
                return (name, Err(e));
            }
            rank += 1;
        }
    }
    (name, Ok(()))
}

/// Start rank `rank` of job `name` (of `total`) running `app`, with the
/// wire's environment; it joins `ranks`.
pub(super) fn start_rank(
    wire: &mut dyn Starter,
    ranks: &mut Ranks,
    name: &str,
    total: u32,
    rank: u32,
    app: &LaunchApp,
) -> Result<(), String> {
    let mut c = Command::new(&app.cmd);
    c.args(&app.argv);
    let keep = wire.prepare(&mut c, name, total, rank)?;
    c.envs(app.env.iter().map(|(k, v)| (k, v)));
    if let Some(d) = &app.wdir {
        c.current_dir(d);
    }
    // its own process group, ended as one; stdin for rank 0 only
    let feed = procgroup::prepare(&mut c, rank);
    // the run's mark, for a killed launcher's guard (guard.rs)
    super::guard::mark(&mut c);
    let mut child = c
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", app.cmd))?;
    super::guard::group(child.id());
    procgroup::started(&mut child, feed);
    drop(keep);
    wire.started(name, rank, child.id());
    ranks.0.push(Rank {
        child,
        nspace: name.to_string(),
        rank,
        status: None,
        finalized: false,
    });
    Ok(())
}

/// What a round of a run's loop comes to ([`Ending::check`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Outcome {
    /// Every rank has ended: the run's status.
    Done(i32),
    /// A signal was caught and the job ended: exit 128 + it.
    Signal(i32),
    /// The run's time is up: exit 124 (the ranks are killed when the
    /// [`Ranks`] are dropped).
    Timeout,
}

/// How a run ends, for every launcher (`pmixw run` of either wire, or
/// both): the job's status is the first abort's, else the first failure's
/// (a rank ending non-zero before it finalized, unless `--keep-going`),
/// else the first non-zero exit; once it is ending the others get SIGTERM
/// after the grace and SIGKILL after another. A caught signal ends the
/// job at once, the timeout too.
pub(super) struct Ending {
    grace: Duration,
    keep_going: bool,
    timeout: Option<Duration>,
    start: Instant,
    failed: Option<i32>,
    aborted: Option<i32>,
    term_at: Option<Instant>,
    kill_at: Option<Instant>,
    /// Ranks whose connection ended before they finalized, in that order.
    lost: Vec<(String, u32)>,
}

impl Ending {
    /// A run starting now.
    pub(super) fn new(grace: Duration, keep_going: bool, timeout: Option<Duration>) -> Ending {
        Ending {
            grace,
            keep_going,
            timeout,
            start: Instant::now(),
            failed: None,
            aborted: None,
            term_at: None,
            kill_at: None,
            lost: Vec::new(),
        }
    }

    /// Rank `rank` of `ns` lost its connection before it finalized: the
    /// first sign of its end, often seen before its exit can be reaped.
    pub(super) fn lost(&mut self, ns: &str, rank: u32) {
        if !self.lost.iter().any(|(n, r)| n == ns && *r == rank) {
            self.lost.push((ns.to_string(), rank));
        }
    }

    /// Failures reaped in one round, put in the order the ranks ended as
    /// far as their lost connections tell (the rest after, as they were):
    /// when a rank's end fails its peers' fence and they exit too, one
    /// round can reap them all, and the job's status is the first one's.
    pub(super) fn first_ended_first<T>(&self, failed: &mut [T], who: impl Fn(&T) -> (String, u32)) {
        failed.sort_by_cached_key(|f| {
            let (ns, rank) = who(f);
            self.lost
                .iter()
                .position(|(n, r)| *n == ns && *r == rank)
                .unwrap_or(usize::MAX)
        });
    }

    /// The processes of the ranks whose connections went before `rank`
    /// of `ns`'s (or before it was reaped, when its own never went) and
    /// which are still running (not reaped).
    pub(super) fn lost_before_running(&self, ns: &str, rank: u32, ranks: &Ranks) -> Vec<u32> {
        let mine = self
            .lost
            .iter()
            .position(|(n, r)| n == ns && *r == rank)
            .unwrap_or(self.lost.len());
        self.lost[..mine]
            .iter()
            .filter_map(|(n, r)| {
                ranks
                    .0
                    .iter()
                    .find(|x| x.rank == *r && x.nspace == *n && x.status.is_none())
                    .map(|x| x.child.id())
            })
            .collect()
    }

    /// Rank `rank` aborted asking `status` (logged): if this is what ends
    /// the job, the status it ends with (0 becomes 1), for the caller to
    /// tell the others; None when the job was already ending.
    pub(super) fn aborted(&mut self, rank: u32, status: i32, message: &str) -> Option<i32> {
        say(&format!(
            "pmixw run: rank {rank} aborted with status {status}: {message}"
        ));
        self.ended(if status == 0 { 1 } else { status })
    }

    /// The wire ends the job with `code` for a reason of its own (which it
    /// logs: a node lost, a fence failed, a rank that could not start), as
    /// an abort does: `code` if this is what ends the job, None when it
    /// was already ending.
    pub(super) fn ended(&mut self, code: i32) -> Option<i32> {
        if self.aborted.is_some() || self.failed.is_some() {
            return None;
        }
        self.aborted = Some(code);
        self.term_at = Some(Instant::now() + self.grace);
        Some(code)
    }

    /// Rank `rank` of `ns` ended with `st` before it finalized (logged):
    /// its status if this ends the job, for the caller to tell the
    /// others; None when the job was already ending or goes on.
    pub(super) fn failed(&mut self, ns: &str, rank: u32, st: ExitStatus) -> Option<i32> {
        let code = exit_code(st);
        say(&format!(
            "pmixw run: rank {rank} of {ns} {} before finalizing",
            match st.signal() {
                Some(s) => format!("was killed by signal {s}"),
                None => format!("exited with status {code}"),
            }
        ));
        if self.keep_going || self.failed.is_some() || self.aborted.is_some() {
            return None;
        }
        self.failed = Some(code);
        self.term_at = Some(Instant::now() + self.grace);
        Some(code)
    }

    /// When [`Ending::check`] next has something to do without being
    /// woken: the grace's SIGTERM, the SIGKILL after it, the job's
    /// timeout (none that has passed: check acted on it already).
    pub(super) fn next_due(&self) -> Option<Instant> {
        let now = Instant::now();
        let escalate = match self.kill_at {
            Some(k) => Some(k),
            None => self.term_at,
        };
        let timeout = self.timeout.map(|t| self.start + t);
        escalate
            .into_iter()
            .chain(timeout)
            .filter(|t| *t > now)
            .min()
    }

    /// After each round of the loop: end the job on a caught signal,
    /// escalate, and say whether the run is over.
    pub(super) fn check(
        &mut self,
        ranks: &mut Ranks,
        caught: &[(i32, Arc<AtomicBool>)],
    ) -> Option<Outcome> {
        if let Some(&(sig, _)) = caught.iter().find(|(_, f)| f.load(Ordering::Relaxed)) {
            // as mpirun: SIGTERM to every rank, SIGKILL after the grace;
            // a second signal (a second ^C) kills them at once (from now
            // on, before the line that says the first was seen)
            for (_, f) in caught {
                f.store(false, Ordering::Relaxed);
            }
            say(&format!("pmixw run: signal {sig}; ending the job"));
            ranks.end_within(self.grace, || {
                caught.iter().any(|(_, f)| f.load(Ordering::Relaxed))
            });
            return Some(Outcome::Signal(sig));
        }
        let now = Instant::now();
        if self.term_at.is_some_and(|t| now >= t) && self.kill_at.is_none() {
            ranks.signal_running(libc::SIGTERM);
            self.kill_at = Some(now + self.grace);
        }
        if self.kill_at.is_some_and(|t| now >= t) {
            ranks.signal_running(libc::SIGKILL);
        }
        if ranks.0.iter().all(|r| r.status.is_some()) {
            // a rank that finalized and then exited non-zero still fails it
            let code = self
                .aborted
                .or(self.failed)
                .or_else(|| ranks.0.iter().filter_map(|r| r.status).find(|s| *s != 0))
                .unwrap_or(0);
            return Some(Outcome::Done(code));
        }
        if let Some(t) = self.timeout.filter(|t| self.start.elapsed() >= *t) {
            say(&format!("pmixw run: timeout after {t:?}; killing the job"));
            return Some(Outcome::Timeout);
        }
        None
    }
}

/// The exit code of an [`Outcome`] (a status beyond 0-255 clamped).
pub(super) fn exit_of(o: Outcome) -> std::process::ExitCode {
    let code = match o {
        Outcome::Done(c) => c.clamp(0, 255),
        Outcome::Signal(sig) => 128 + sig,
        Outcome::Timeout => 124,
    };
    std::process::ExitCode::from(code as u8)
}

/// A wire's part in a running job, which [`drive`] asks in this order
/// every round: [`poll`](Wire::poll), then [`exited`](Wire::exited) for
/// each rank just reaped, [`serve`](Wire::serve), [`failed`](Wire::failed)
/// for a failure that ends the job, and once the run is over
/// [`finish`](Wire::finish).
pub(super) trait Wire {
    /// Wait for the wire's traffic, the loop's pace: by default until
    /// `wake` is woken (the wire's server and threads wake it, and the
    /// signals the loop acts on) or for `max` (the loop's next deadline).
    fn poll(&mut self, wake: &Wake, max: Duration) {
        wake.wait(max);
    }
    /// Rank `rank` of `ns` has ended with `code`.
    fn exited(&mut self, _ns: &str, _rank: u32, _code: i32) {}
    /// Answer what the wire's servers asked since the last round: an
    /// abort or lost connection goes to `ending`, a finalize to `ranks`,
    /// a spawn's ranks join `ranks`.
    fn serve(&mut self, ranks: &mut Ranks, ending: &mut Ending);
    /// Rank `rank` of `ns` failed (`st`), ending the job with `code`: tell
    /// the others.
    fn failed(&mut self, _ns: &str, _rank: u32, _st: ExitStatus, _code: i32) {}
    /// The run is over with `o` (its ranks reaped, or killed when it is not
    /// [`Outcome::Done`]): stop, and the run's exit code.
    fn finish(&mut self, o: Outcome) -> std::process::ExitCode {
        exit_of(o)
    }
}

/// The host loop of every wire: reap the ranks (when SIGCHLD says one may
/// have ended), let the wire serve, end the job on the first failure (the
/// first rank to end, [`Ending::first_ended_first`]), an abort, a caught
/// signal or the timeout, until every rank has ended; pass `forward`'s
/// signals on to the running ranks.
pub(super) fn drive(
    wire: &mut dyn Wire,
    wake: &mut Wake,
    mut ranks: Ranks,
    mut ending: Ending,
    caught: &[(i32, Arc<AtomicBool>)],
    forward: &procgroup::Forward,
) -> std::process::ExitCode {
    // not by asking each rank every round (N waitpid calls a loop, taken
    // from the ranks' own cores at N = 256); set at first: ranks may have
    // ended before this
    let child_exited = Arc::new(AtomicBool::new(true));
    let sigchld = signal_hook::flag::register(libc::SIGCHLD, child_exited.clone()).is_ok();
    // the loop sleeps until one of these (or its wire) wakes it; the flags
    // say which (registered after them: the flag is set before the wake)
    let signals: Vec<i32> = std::iter::once(libc::SIGCHLD)
        .chain(caught.iter().map(|(s, _)| *s))
        .chain(forward.signals())
        .collect();
    let woken = sigchld && wake.on_signals(&signals);
    // failures reaped but not yet taken: (namespace, rank, status, reaped at)
    let mut pending: Vec<(String, u32, ExitStatus, Instant)> = Vec::new();
    const HOLD: Duration = Duration::from_millis(200);
    const HOLD_EXITING: Duration = Duration::from_secs(5);
    // while a failure is held, or without the wakes: a short pace
    const BUSY_WAIT: Duration = Duration::from_millis(5);
    let mut first = true;
    let outcome = loop {
        // the first round looks at once: what came before the loop (a
        // rank's end before SIGCHLD woke anything) is taken now
        if !std::mem::take(&mut first) {
            let now = Instant::now();
            let max = if !woken {
                Duration::from_millis(1)
            } else if !pending.is_empty() {
                BUSY_WAIT
            } else {
                ending
                    .next_due()
                    .map_or(IDLE_WAIT, |t| t.saturating_duration_since(now))
                    .min(IDLE_WAIT)
            };
            wire.poll(wake, max);
        }
        for sig in forward.take() {
            ranks.signal_running(sig);
        }
        // reap before serving: the servers queue a rank's abort or finalize
        // before its reply, so for an exit seen here the event that
        // explains it is already waiting
        let scan = !sigchld || child_exited.swap(false, Ordering::AcqRel);
        let reaped = if scan { ranks.reap() } else { Vec::new() };
        for &(i, st) in &reaped {
            let r = &ranks.0[i];
            wire.exited(&r.nspace, r.rank, exit_code(st));
        }
        wire.serve(&mut ranks, &mut ending);
        for &(i, st) in &reaped {
            let r = &ranks.0[i];
            if r.finalized && exit_code(st) != 0 {
                // no failure of the job's, but its status, and said why
                say(&format!(
                    "pmixw run: rank {} of {} {} after finalizing",
                    r.rank,
                    r.nspace,
                    match st.signal() {
                        Some(s) => format!("was killed by signal {s}"),
                        None => format!("exited with status {}", exit_code(st)),
                    }
                ));
            }
        }
        pending.extend(
            reaped
                .into_iter()
                .map(|(i, st)| (&ranks.0[i], st))
                .filter(|(r, st)| exit_code(*st) != 0 && !r.finalized)
                .map(|(r, st)| (r.nspace.clone(), r.rank, st, Instant::now())),
        );
        ending.first_ended_first(&mut pending, |(ns, rank, _, _)| (ns.clone(), *rank));
        // a failure waits for a rank whose connection went before its own
        // and which is not reaped yet: a rank killed by SIGSEGV closes its
        // sockets before it can be reaped, and the peers its end failed
        // can exit and be reaped first. A moment at most, or while that
        // rank is exiting (on a loaded machine a killed rank's exit took
        // longer than the moment: its peer's status became the job's)
        let ready = pending
            .iter()
            .position(|(ns, rank, _, at)| {
                let before = ending.lost_before_running(ns, *rank, &ranks);
                !before.is_empty()
                    && (at.elapsed() < HOLD
                        || (at.elapsed() < HOLD_EXITING
                            && before.iter().any(|&p| procgroup::exiting(p))))
            })
            .unwrap_or(pending.len());
        for (ns, rank, st, _) in pending.drain(..ready) {
            if let Some(code) = ending.failed(&ns, rank, st) {
                wire.failed(&ns, rank, st, code);
            }
        }
        if let Some(o) = ending.check(&mut ranks, caught) {
            break o;
        }
    };
    if matches!(outcome, Outcome::Done(_)) {
        // every rank has ended: what they leave in their groups goes too,
        // and what left the groups (guard.rs: all that is left below this
        // launcher, a subreaper)
        ranks.end_groups(ending.grace);
        super::guard::end_left(ending.grace);
    } else {
        // the job was ended (a signal) or runs out of time: what is left
        // is killed before the wire stops
        drop(ranks);
        super::guard::end_left(Duration::ZERO);
    }
    wire.finish(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A wire that records what it is asked and gives each rank one
    /// variable.
    #[derive(Default)]
    struct Recorder {
        registered: Vec<(String, u32)>,
        prepared: Vec<(String, u32, u32)>,
        started: Vec<(String, u32)>,
    }

    impl Starter for Recorder {
        fn register(&mut self, name: &str, total: u32, _apps: &[LaunchApp]) {
            self.registered.push((name.into(), total));
        }
        fn prepare(
            &mut self,
            c: &mut Command,
            name: &str,
            total: u32,
            rank: u32,
        ) -> Result<Option<OwnedFd>, String> {
            self.prepared.push((name.into(), total, rank));
            c.env("WIRE_RANK", rank.to_string());
            Ok(None)
        }
        fn started(&mut self, name: &str, rank: u32, _pid: u32) {
            self.started.push((name.into(), rank));
        }
    }

    #[test]
    fn a_spawn_names_registers_and_starts_every_rank_in_order() {
        let mut w = Recorder::default();
        let mut ranks = Ranks(Vec::new());
        let mut seq = 0;
        let app = |cmd: &str, n| LaunchApp {
            cmd: cmd.into(),
            argv: vec!["-c".into(), "exit 0".into()],
            n,
            env: vec![("APP".into(), cmd.into())],
            wdir: None,
        };
        let (name, r) = spawn_job(
            &mut w,
            &mut ranks,
            "job",
            &mut seq,
            &[app("sh", 2), app("sh", 1)],
        );
        assert_eq!((name.as_str(), r), ("job-spawn-1", Ok(())));
        assert_eq!(w.registered, [("job-spawn-1".to_string(), 3)]);
        let want: Vec<(String, u32)> = (0..3).map(|r| (name.clone(), r)).collect();
        assert_eq!(w.started, want);
        assert_eq!(ranks.0.len(), 3);
        for r in &mut ranks.0 {
            assert!(r.child.wait().unwrap().success());
            r.status = Some(0);
        }
        // the second spawn of the run; a program that cannot start stops it
        let (name, r) = spawn_job(
            &mut w,
            &mut ranks,
            "job",
            &mut seq,
            &[app("sh", 1), app("/nonexistent/program", 2), app("sh", 1)],
        );
        assert_eq!(name, "job-spawn-2");
        assert!(
            r.as_ref()
                .is_err_and(|e| e.starts_with("cannot start /nonexistent/program")),
            "{r:?}"
        );
        assert_eq!(ranks.0.len(), 4, "rank 0 of job-spawn-2 started, no more");
        for r in ranks.0.iter_mut().filter(|r| r.status.is_none()) {
            r.child.wait().unwrap();
            r.status = Some(0);
        }
    }

    /// Reaped together, the rank whose connection went first is the
    /// first failure (its status the job's); the others keep their order.
    #[test]
    fn failures_reaped_together_are_ordered_by_lost_connections() {
        let mut e = Ending::new(Duration::ZERO, false, None);
        e.lost("job", 2);
        e.lost("job-spawn-1", 0);
        e.lost("job", 0);
        e.lost("job", 2);
        let mut failed = vec![
            ("job", 0),
            ("job", 1),
            ("job", 2),
            ("job-spawn-1", 0),
            ("job", 3),
        ];
        e.first_ended_first(&mut failed, |(n, r)| (n.to_string(), *r));
        assert_eq!(
            failed,
            [
                ("job", 2),
                ("job-spawn-1", 0),
                ("job", 0),
                ("job", 1),
                ("job", 3)
            ]
        );
    }

    /// What a test's wire does in its first round.
    type FirstRound = Box<dyn FnOnce(&mut Ending)>;

    /// A wire that records what the host loop asks it; its first round's
    /// `serve` does what the test says.
    #[derive(Default)]
    struct Watcher {
        first: Option<FirstRound>,
        exited: Vec<(u32, i32)>,
        failed: Vec<(u32, i32)>,
        finished: Option<Outcome>,
    }

    impl Wire for Watcher {
        fn exited(&mut self, _ns: &str, rank: u32, code: i32) {
            self.exited.push((rank, code));
        }
        fn serve(&mut self, _ranks: &mut Ranks, ending: &mut Ending) {
            if let Some(f) = self.first.take() {
                f(ending);
            }
        }
        fn failed(&mut self, _ns: &str, rank: u32, _st: ExitStatus, code: i32) {
            self.failed.push((rank, code));
        }
        fn finish(&mut self, o: Outcome) -> std::process::ExitCode {
            self.finished = Some(o);
            exit_of(o)
        }
    }

    /// Ranks of job `job` running `sh -c SCRIPT`, one per script.
    fn sh_ranks(scripts: &[&str]) -> Ranks {
        Ranks(
            scripts
                .iter()
                .enumerate()
                .map(|(i, s)| Rank {
                    child: std::os::unix::process::CommandExt::process_group(
                        Command::new("sh").args(["-c", s]),
                        0,
                    )
                    .spawn()
                    .unwrap(),
                    nspace: "job".into(),
                    rank: i as u32,
                    status: None,
                    finalized: false,
                })
                .collect(),
        )
    }

    /// Ended ranks are reaped with their status, each once, a running one
    /// not; an ended child that is no rank is left to its owner (its
    /// status still there for it), and does not stop the ranks' reaping.
    #[test]
    fn reap_takes_each_ended_rank_once_and_leaves_other_children() {
        let mut stray = Command::new("sh").args(["-c", "exit 7"]).spawn().unwrap();
        let mut ranks = sh_ranks(&["exit 3", "exit 0", "sleep 30"]);
        let mut got = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(60);
        while got.len() < 2 && Instant::now() < deadline {
            got.extend(ranks.reap().into_iter().map(|(i, st)| (i, exit_code(st))));
            std::thread::sleep(Duration::from_millis(10));
        }
        got.sort();
        assert_eq!(got, [(0, 3), (1, 0)]);
        assert_eq!(ranks.reap().len(), 0, "reaped once");
        let status: Vec<_> = ranks.0.iter().map(|r| r.status).collect();
        assert_eq!(status, [Some(3), Some(0), None]);
        assert_eq!(stray.wait().unwrap().code(), Some(7));
    }

    /// The first failure ends the job with its status: the wire is told
    /// once, the rank still running is ended, every exit is reported.
    /// [`drive`] with no grace, timeout or signals (`keep_going` as said).
    fn drive_plain(w: &mut Watcher, ranks: Ranks, keep_going: bool) {
        drive(
            w,
            &mut Wake::new().unwrap(),
            ranks,
            Ending::new(Duration::ZERO, keep_going, None),
            &[],
            &Default::default(),
        );
    }

    #[test]
    fn the_loop_ends_the_job_with_its_first_failure() {
        let mut w = Watcher::default();
        let mut ranks = sh_ranks(&["exit 0", "exit 3", "exec sleep 30"]);
        // rank 0 ends well before rank 1 fails (else the job may end it
        // first: a SIGTERM, 143, as the loop must)
        ranks.0[0].child.wait().unwrap();
        drive_plain(&mut w, ranks, false);
        assert_eq!(w.finished, Some(Outcome::Done(3)));
        assert_eq!(w.failed, [(1, 3)]);
        let mut exited = w.exited.clone();
        exited.sort();
        assert_eq!(exited, [(0, 0), (1, 3), (2, 128 + libc::SIGTERM)]);
    }

    /// Ranks reaped in one round: the one whose connection went first is
    /// the failure, whatever their order in the job.
    #[test]
    fn of_failures_reaped_together_the_first_lost_ends_the_job() {
        let mut w = Watcher {
            first: Some(Box::new(|e: &mut Ending| e.lost("job", 1))),
            ..Watcher::default()
        };
        let mut ranks = sh_ranks(&["exit 2", "exit 5"]);
        for r in &mut ranks.0 {
            r.child.wait().unwrap();
        }
        drive_plain(&mut w, ranks, false);
        assert_eq!(w.failed, [(1, 5)]);
        assert_eq!(w.finished, Some(Outcome::Done(5)));
    }

    /// An abort the wire serves ends the job with its status; the ranks
    /// it ends are no failure of their own; with --keep-going a failure
    /// does not end the job, and the first non-zero exit is its status.
    #[test]
    fn an_abort_ends_the_job_and_keep_going_waits_for_every_rank() {
        let mut w = Watcher {
            first: Some(Box::new(|e: &mut Ending| {
                assert_eq!(e.aborted(0, 0, "test"), Some(1));
                assert_eq!(e.ended(9), None, "already ending");
            })),
            ..Watcher::default()
        };
        let ranks = sh_ranks(&["exec sleep 30", "exec sleep 30"]);
        drive_plain(&mut w, ranks, false);
        assert_eq!(w.finished, Some(Outcome::Done(1)));
        assert!(w.failed.is_empty(), "{:?}", w.failed);

        let mut w = Watcher::default();
        let ranks = sh_ranks(&["exit 4", "sleep 0.2; exit 0"]);
        drive_plain(&mut w, ranks, true);
        assert_eq!(w.finished, Some(Outcome::Done(4)));
        assert!(w.failed.is_empty(), "{:?}", w.failed);
        let mut exited = w.exited.clone();
        exited.sort();
        assert_eq!(exited, [(0, 4), (1, 0)]);
    }
}
