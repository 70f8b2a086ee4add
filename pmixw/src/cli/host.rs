//! The host layer every wire of `pmixw run` stands on (nothing here
//! imports a wire's module): a job's ranks ([`Job`]), how a rank's exit
//! is reported ([`exit_code`]), the signals a run catches, a client's
//! `PMIx_Log` lines, and starting ranks. `PMIx_Spawn` (run.rs) and PMI's
//! `spawn` (run_pmi.rs) both reach [`spawn_job`], which names the new job,
//! has the wire's server register it, and starts every rank of every
//! application with the wire's environment; the ranks join the run's
//! [`Job`], whose loop ends them and reports their failures as it does
//! the first job's. What differs between the wires (the server's
//! registration, each rank's environment, what the server is told once a
//! rank runs) is a [`Wire`]. How a run ends (abort, failure, escalation,
//! a caught signal, the timeout) is one [`Ending`] for every launcher.

use pmix_types::{Proc, RANK_WILDCARD};
use pmix_wire::server::{net, HostEvent};
use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One rank: its process, name and what became of it.
pub(super) struct Rank {
    pub(super) child: Child,
    pub(super) nspace: String,
    pub(super) rank: u32,
    pub(super) status: Option<i32>,
    pub(super) finalized: bool,
}

/// A job's ranks; those still running are killed when it is dropped.
pub(super) struct Job(pub(super) Vec<Rank>);
impl Drop for Job {
    fn drop(&mut self) {
        for r in &mut self.0 {
            if r.status.is_none() {
                let _ = r.child.kill();
                let _ = r.child.wait();
            }
        }
    }
}

impl Job {
    /// SIGTERM to the running ranks, then up to `grace` for them to end.
    pub(super) fn end_within(&mut self, grace: Duration) {
        self.signal_running(libc::SIGTERM);
        let deadline = Instant::now() + grace;
        while self.0.iter_mut().any(|r| r.status.is_none()) && Instant::now() < deadline {
            for r in self.0.iter_mut().filter(|r| r.status.is_none()) {
                if let Ok(Some(st)) = r.child.try_wait() {
                    r.status = Some(exit_code(st));
                }
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// A kill or signal a client or tool asked for (the core has already
    /// answered): to the running ranks it names.
    pub(super) fn control(&mut self, e: &HostEvent) {
        match e {
            HostEvent::Kill { targets, .. } => {
                for r in self.0.iter_mut().filter(|r| r.status.is_none()) {
                    if hits(targets, &r.nspace, r.rank) {
                        let _ = r.child.kill();
                    }
                }
            }
            HostEvent::Signal {
                targets, signal, ..
            } => {
                for r in self.0.iter().filter(|r| r.status.is_none()) {
                    if hits(targets, &r.nspace, r.rank) {
                        net::signal_pid(r.child.id(), *signal);
                    }
                }
            }
            _ => {}
        }
    }

    pub(super) fn signal_running(&mut self, sig: i32) {
        for r in &mut self.0 {
            if r.status.is_none() {
                net::signal_pid(r.child.id(), sig);
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
pub(super) trait Wire {
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
    wire: &mut dyn Wire,
    ranks: &mut Job,
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
                eprintln!("pmixw run: {e}");
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
    wire: &mut dyn Wire,
    ranks: &mut Job,
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
    let child = c
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", app.cmd))?;
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
    /// [`Job`] is dropped).
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

    /// Rank `rank` aborted asking `status` (logged): if this is what ends
    /// the job, the status it ends with (0 becomes 1), for the caller to
    /// tell the others; None when the job was already ending.
    pub(super) fn aborted(&mut self, rank: u32, status: i32, message: &str) -> Option<i32> {
        eprintln!("pmixw run: rank {rank} aborted with status {status}: {message}");
        if self.aborted.is_some() || self.failed.is_some() {
            return None;
        }
        let code = if status == 0 { 1 } else { status };
        self.aborted = Some(code);
        self.term_at = Some(Instant::now() + self.grace);
        Some(code)
    }

    /// Rank `rank` of `ns` ended with `st` before it finalized (logged):
    /// its status if this ends the job, for the caller to tell the
    /// others; None when the job was already ending or goes on.
    pub(super) fn failed(&mut self, ns: &str, rank: u32, st: ExitStatus) -> Option<i32> {
        let code = exit_code(st);
        eprintln!(
            "pmixw run: rank {rank} of {ns} {} before finalizing",
            match st.signal() {
                Some(s) => format!("was killed by signal {s}"),
                None => format!("exited with status {code}"),
            }
        );
        if self.keep_going || self.failed.is_some() || self.aborted.is_some() {
            return None;
        }
        self.failed = Some(code);
        self.term_at = Some(Instant::now() + self.grace);
        Some(code)
    }

    /// After each round of the loop: end the job on a caught signal,
    /// escalate, and say whether the run is over.
    pub(super) fn check(
        &mut self,
        ranks: &mut Job,
        caught: &[(i32, Arc<AtomicBool>)],
    ) -> Option<Outcome> {
        if let Some(&(sig, _)) = caught.iter().find(|(_, f)| f.load(Ordering::Relaxed)) {
            eprintln!("pmixw run: signal {sig}; ending the job");
            ranks.end_within(self.grace);
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
            eprintln!("pmixw run: timeout after {t:?}; killing the job");
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

    impl Wire for Recorder {
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
        let mut ranks = Job(Vec::new());
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
}
