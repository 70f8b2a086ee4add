//! Each rank of `pmixw run` in its own process group, ended as a group,
//! and the launcher's stdin given to one rank: what Open MPI 4.1.4's
//! mpirun and PRRTE 5.0.11's prterun do (spec-notes/robustness.md,
//! "Launcher faults"). A rank's descendants (`sh -c 'sleep 20'`, a helper
//! a program forks) end with the job instead of outliving it re-parented
//! to init.
//!
//! A process group that is not the terminal's foreground group is
//! stopped (SIGTTIN) when it reads the terminal, so a rank never reads
//! it: rank 0 of the first job gets the launcher's stdin (a file or pipe
//! as it is; a terminal through a pipe this launcher feeds while it is
//! itself in the foreground, as mpirun and prterun do), every other rank
//! /dev/null, as with both of them.
//!
//! SIGUSR1, SIGUSR2 and SIGCONT sent to the launcher go on to every
//! running rank's group, SIGTSTP as SIGSTOP (the ranks stop, the launcher
//! runs on): what mpirun 4.1.4 and prterun 5.0.11 do, checked by hand
//! (spec-notes/robustness.md, "The launcher signalled or killed").

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Whether a rank of this run has been given the launcher's stdin.
static STDIN_GIVEN: AtomicBool = AtomicBool::new(false);

/// Whether a SIGTSTP has been passed on (as SIGSTOP) and no SIGCONT
/// since: the ranks may be stopped, and a SIGTERM that ends them must be
/// followed by a SIGCONT to be acted on.
static STOPPED: AtomicBool = AtomicBool::new(false);

/// The signals passed on to the ranks: (caught, sent to each group).
const FORWARDED: [(i32, i32); 4] = [
    (libc::SIGUSR1, libc::SIGUSR1),
    (libc::SIGUSR2, libc::SIGUSR2),
    (libc::SIGTSTP, libc::SIGSTOP),
    (libc::SIGCONT, libc::SIGCONT),
];

/// The forwarded signals, caught from [`forward_signals`] on: one flag
/// each (two of the same signal within one round of the host loop are
/// passed on once, as the kernel merges a pending signal).
#[derive(Default)]
pub(super) struct Forward(Vec<(i32, Arc<AtomicBool>)>);

/// Catch the [`FORWARDED`] signals from now on (before, SIGUSR1 and
/// SIGUSR2 ended the launcher, SIGTSTP stopped it alone).
pub(super) fn forward_signals() -> Forward {
    Forward(
        FORWARDED
            .iter()
            .map(|&(s, _)| {
                let f = Arc::new(AtomicBool::new(false));
                let _ = signal_hook::flag::register(s, f.clone());
                (s, f)
            })
            .collect(),
    )
}

impl Forward {
    /// The signals caught for forwarding.
    pub(super) fn signals(&self) -> impl Iterator<Item = i32> + '_ {
        self.0.iter().map(|(s, _)| *s)
    }

    /// What was caught since the last call, in [`FORWARDED`]'s order (a
    /// stop before a continue: caught in one round, the ranks run on):
    /// each signal to be sent to every running rank's group.
    pub(super) fn take(&self) -> Vec<i32> {
        let mut out = Vec::new();
        for ((caught, f), &(_, send)) in self.0.iter().zip(FORWARDED.iter()) {
            if f.swap(false, Ordering::AcqRel) {
                super::output::say(&format!("pmixw run: forwarding signal {caught} to the job"));
                STOPPED.store(send == libc::SIGSTOP, Ordering::Release);
                out.push(send);
            }
        }
        out
    }
}

/// Whether the ranks may be stopped by a forwarded SIGTSTP.
pub(super) fn stop_forwarded() -> bool {
    STOPPED.load(Ordering::Acquire)
}

/// Once, before the first rank starts: orphaned descendants of the ranks
/// are re-parented to this launcher instead of init, so that the end of
/// a rank's group can be waited for (and its zombies reaped) here, not
/// left to an init that may never reap them (a container's).
pub(super) fn become_subreaper() {
    // SAFETY: prctl with integer arguments only
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
}

/// Rank `rank`'s command `c` made to start in a process group of its own,
/// with the stdin it gets: true when it is the run's stdin target (rank 0
/// of the first job) and the launcher's stdin is a terminal, so that
/// [`started`] must feed it.
pub(super) fn prepare(c: &mut Command, rank: u32) -> bool {
    c.process_group(0);
    if rank != 0 || STDIN_GIVEN.swap(true, Ordering::AcqRel) {
        c.stdin(Stdio::null());
        return false;
    }
    // SAFETY: isatty on fd 0
    if unsafe { libc::isatty(0) } == 1 {
        c.stdin(Stdio::piped());
        return true;
    }
    // a file or a pipe reads the same from any process group
    c.stdin(Stdio::inherit());
    false
}

/// The rank has started: when [`prepare`] said so, a thread copies the
/// terminal into its stdin until either ends.
pub(super) fn started(child: &mut Child, feed: bool) {
    if let Some(to) = child.stdin.take().filter(|_| feed) {
        let _ = std::thread::Builder::new()
            .name("stdin".into())
            .spawn(move || forward_terminal(to));
    }
}

/// Copy the terminal on fd 0 into `to`, reading only while this launcher
/// is the terminal's foreground group (in the background a read would
/// stop it; mpirun and prterun read stdin only in the foreground too).
fn forward_terminal(mut to: ChildStdin) {
    let mut buf = [0u8; 4096];
    loop {
        // SAFETY: plain calls on fd 0 and this process
        let fg = unsafe { libc::tcgetpgrp(0) == libc::getpgrp() };
        if !fg {
            std::thread::sleep(Duration::from_millis(200));
            continue;
        }
        let mut p = libc::pollfd {
            fd: 0,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one pollfd, on the stack
        if unsafe { libc::poll(&mut p, 1, 200) } <= 0 {
            continue;
        }
        // SAFETY: as above
        if unsafe { libc::tcgetpgrp(0) != libc::getpgrp() } {
            continue;
        }
        match std::io::stdin().lock().read(&mut buf) {
            // end of input (^D): the rank sees its end
            Ok(0) | Err(_) => return,
            Ok(k) => {
                if to.write_all(&buf[..k]).is_err() {
                    return;
                }
            }
        }
    }
}

/// Whether process `pid` is on its way out: the kernel has begun its
/// exit (PF_EXITING in /proc/PID/stat's flags) or it is a zombie, not yet
/// reaped. A rank's sockets close inside its exit, so a rank whose
/// connection went and which is exiting will be reaped soon.
pub(super) fn exiting(pid: u32) -> bool {
    const PF_EXITING: u64 = 0x4;
    let Some(f) = stat_fields(pid) else {
        return false;
    };
    let flags: u64 = f.get(6).and_then(|s| s.parse().ok()).unwrap_or(0);
    dead(&f) || flags & PF_EXITING != 0
}

/// The fields of /proc/`pid`/stat after the command name (which may hold
/// spaces and parentheses, hence the last `)`): state ppid pgrp session
/// tty_nr tpgid flags ...; `None` when there is no such process.
pub(super) fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(')')?.1;
    Some(rest.split_whitespace().map(str::to_string).collect())
}

/// Whether [`stat_fields`] are a zombie's or a dead process's.
pub(super) fn dead(fields: &[String]) -> bool {
    matches!(fields.first().map(String::as_str), Some("Z" | "X"))
}

/// `sig` to the process group `pgid` (a rank's, led by it).
pub(super) fn signal_group(pgid: u32, sig: i32) {
    if let Ok(g) = i32::try_from(pgid) {
        if g > 1 {
            // SAFETY: kill(2) of a negative pid: one process group
            unsafe {
                libc::kill(-g, sig);
            }
        }
    }
}

/// Whether any process is left in group `pgid`; reaps those of them that
/// are this launcher's children by now (orphans re-parented to it).
/// Call only once the group's leader has been reaped.
fn group_left(pgid: u32) -> bool {
    let g: libc::id_t = pgid;
    loop {
        // SAFETY: a zeroed siginfo_t for waitid to fill
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waitid on one process group, non-blocking
        let rc = unsafe { libc::waitid(libc::P_PGID, g, &mut info, libc::WEXITED | libc::WNOHANG) };
        // SAFETY: si_pid of what waitid filled (0 when nothing was reaped)
        if rc != 0 || unsafe { info.si_pid() } == 0 {
            break;
        }
    }
    // SAFETY: signal 0 to a group only checks that it exists
    i32::try_from(g).is_ok_and(|g| unsafe { libc::kill(-g, 0) } == 0)
}

/// End what is left of the groups `pgids` (their leaders, the ranks, all
/// reaped): SIGTERM, up to `grace` for them to go, then SIGKILL, and
/// wait until they have gone (bounded: a process stuck in the kernel is
/// not waited for forever).
pub(super) fn end_groups(pgids: &[u32], grace: Duration) {
    let left = |gs: &[u32]| -> Vec<u32> { gs.iter().copied().filter(|&g| group_left(g)).collect() };
    let mut gs = left(pgids);
    for (sig, within) in [
        (libc::SIGTERM, grace),
        (libc::SIGKILL, Duration::from_secs(5)),
    ] {
        if gs.is_empty() {
            return;
        }
        for &g in &gs {
            signal_group(g, sig);
        }
        let deadline = Instant::now() + within;
        while !gs.is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
            gs = left(&gs);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::exiting;

    #[test]
    fn a_running_process_is_not_exiting_and_an_unreaped_one_is() {
        assert!(!exiting(std::process::id()));
        let mut c = std::process::Command::new("true").spawn().unwrap();
        let pid = c.id();
        // SAFETY: a zeroed siginfo_t for waitid to fill; WNOWAIT leaves
        // the child to be reaped below
        let rc = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            libc::waitid(libc::P_PID, pid, &mut info, libc::WEXITED | libc::WNOWAIT)
        };
        assert_eq!(rc, 0);
        assert!(exiting(pid), "an ended, unreaped child");
        c.wait().unwrap();
        assert!(!exiting(pid), "reaped: no such process");
    }
}
