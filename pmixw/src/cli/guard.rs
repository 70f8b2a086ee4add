//! The watch kept on a `pmixw run`'s ranks for when the launcher itself is
//! killed (SIGKILL: nothing of its own runs then). Without it the ranks of
//! a killed launcher that are no PMIx clients (`sh -c 'sleep 100'`), or
//! that are busy and never ask the lost server anything, ran on, with
//! their descendants, and its rendezvous files stayed in the tmpdir
//! (spec-notes/robustness.md, "The launcher signalled or killed").
//!
//! One process per run, started before the first rank: `pmixw` itself
//! again (`/proc/self/exe __guard`, so no other program is needed), in a
//! process group of its own, deaf to SIGINT, SIGTERM and SIGHUP, reading a
//! pipe from the launcher. The launcher writes each rank's process group
//! id as the rank starts (`g PGID`) and forgets it once the group is
//! ended (`e PGID`: an ended group's id may become another's), and `done`
//! when it has cleaned up itself (having ended, once the ranks were
//! gone, what was still below it: a descendant that left its rank's
//! group, which ending the groups missed, [`end_left`]). When
//! the pipe ends without `done` the launcher is gone, and the guard ends:
//! - every process of the groups still listed, and every process whose
//!   environment holds this run's mark (`PMIXW_GUARD=<pid>.<nonce>`, given
//!   to every rank and inherited by its descendants): a descendant that
//!   left its rank's group or session (`setsid`) is found by it. SIGTERM
//!   (SIGCONT after it, for ranks a forwarded SIGTSTP stopped), the run's
//!   grace, then SIGKILL, as the launcher ends a job; a process that
//!   clears its environment and leaves its group escapes (only a cgroup
//!   would hold it; mpirun 4.1.4 and prterun 5.0.11, while they run, end
//!   process groups only, and nothing once killed);
//! - the launcher's files: its tool rendezvous files (those of a
//!   pmix-wire server whose pid is dead) in the tmpdir and where libpmix
//!   tools search, `pmix.sys.<host>` when it was the launcher's, and its
//!   ds21 store directories (`pmix_dstor_ds21_<pid>[-k]`).
//!
//! Across nodes (run_pmi2.rs) it matters the more: Slurm's proctrack/pgid
//! ends a task's process group only, and the ranks of a killed `pmixw
//! run`, each leading a group of its own, ran on holding the step's
//! output, srun waiting for them. `pmixw dvm` keeps one too, for the
//! ranks of every job it runs.
//!
//! Cost: one process start per run (the soak bench's 10 000 jobs start
//! 10 000; the guard reads its pipe and sleeps otherwise), one write on
//! the pipe per rank, and at the job's end a look at the launcher's own
//! subtree (/proc, by the launcher; every process's environment where the
//! kernel does not list children, and in `pmixw dvm`, no subreaper).
//! PR_SET_PDEATHSIG was the other
//! way: no process, but it reaches a rank only, not its descendants, and
//! fires when the *thread* that started the rank ends.

use std::io::{BufRead, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The variable every rank carries: this run's mark.
pub(super) const MARK: &str = "PMIXW_GUARD";

/// The guard of this run, once started: its process, the pipe to it and
/// the mark.
struct Watch {
    child: Child,
    to: ChildStdin,
    mark: String,
}

static WATCH: Mutex<Option<Watch>> = Mutex::new(None);

fn watch() -> std::sync::MutexGuard<'static, Option<Watch>> {
    WATCH.lock().unwrap_or_else(|e| e.into_inner())
}

/// Start this run's guard (once; nothing watched if it cannot start, as
/// before it existed): the ranks of a killed launcher are ended after
/// `grace`, as the launcher's own end of a job gives them.
pub(super) fn start(grace: Duration) {
    let mut w = watch();
    if w.is_some() {
        return;
    }
    let pid = std::process::id();
    let mark = format!("{pid}.{:08x}", nonce());
    let child = Command::new("/proc/self/exe")
        .arg0("pmixw-guard")
        .args([
            "__guard",
            &pid.to_string(),
            &mark,
            &grace.as_millis().to_string(),
        ])
        // a launcher run inside another's rank carries that run's mark:
        // its guard does not, so that the outer guard's end of this
        // launcher leaves this guard to end this run's ranks
        .env_remove(MARK)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn();
    let Ok(mut child) = child else {
        return;
    };
    let Some(to) = child.stdin.take() else {
        let _ = child.kill();
        let _ = child.wait();
        return;
    };
    *w = Some(Watch { child, to, mark });
}

fn nonce() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish() as u32
}

/// A rank about to start carries the run's mark.
pub(super) fn mark(c: &mut Command) {
    if let Some(w) = watch().as_ref() {
        c.env(MARK, &w.mark);
    }
}

fn tell(line: &str) {
    let mut w = watch();
    if let Some(g) = w.as_mut() {
        if g.to.write_all(line.as_bytes()).is_err() {
            // the guard is gone: nothing is watched any more
            *w = None;
        }
    }
}

/// A rank started, leading group `pgid`.
pub(super) fn group(pgid: u32) {
    tell(&format!("g {pgid}\n"));
}

/// Group `pgid` has been ended: no longer watched.
pub(super) fn ended(pgid: u32) {
    tell(&format!("e {pgid}\n"));
}

/// Every rank has ended and its group too: what still carries the run's
/// mark (a rank's descendant that left its group and session, `setsid`,
/// a daemon) is ended as the guard would had the launcher been killed:
/// SIGTERM, up to `grace`, SIGKILL. Before the launcher waits for the
/// ranks' output to close, which such a descendant would hold open.
pub(super) fn end_marked(grace: Duration) {
    let Some(mark) = watch().as_ref().map(|w| format!("{MARK}={}", w.mark)) else {
        return;
    };
    end_all(&[], &|| of_the_run(&[], &mark), grace);
}

/// Every rank has ended and its group too, in a launcher that is a child
/// subreaper (procgroup::become_subreaper): what is left of the run is
/// what is left below this process, the guard excepted. Every orphan of a
/// rank's, whatever its group, session or environment, was re-parented
/// here, so [`descendants`] finds what the mark finds and what cleared
/// its environment too, looking at this process's subtree alone where
/// [`end_marked`] reads every process's environment on the host (at 512
/// ranks on 16 nodes of one machine, a third of each launcher's own CPU).
/// Where the kernel does not list children (CONFIG_PROC_CHILDREN), or
/// this process is no subreaper, [`end_marked`].
pub(super) fn end_left(grace: Duration) {
    let guard = watch().as_ref().map(|w| w.child.id());
    if !is_subreaper() || descendants(guard).is_none() {
        return end_marked(grace);
    }
    end_all(&[], &|| descendants(guard).unwrap_or_default(), grace);
}

/// Whether this process is a child subreaper.
fn is_subreaper() -> bool {
    let mut on: libc::c_int = 0;
    // SAFETY: PR_GET_CHILD_SUBREAPER writes one int through the pointer
    let rc = unsafe { libc::prctl(libc::PR_GET_CHILD_SUBREAPER, &mut on as *mut libc::c_int) };
    rc == 0 && on != 0
}

/// The live processes below this one (its children, theirs, and so on;
/// `skip` and what is below it left out), its own zombie children reaped
/// on the way; `None` when /proc does not list this process's children.
fn descendants(skip: Option<u32>) -> Option<Vec<i32>> {
    let me = std::process::id();
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    let mut todo = vec![me];
    while let Some(p) = todo.pop() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) else {
            if p == me {
                return None;
            }
            continue;
        };
        for t in tasks.flatten() {
            let Ok(list) = std::fs::read_to_string(t.path().join("children")) else {
                if p == me {
                    return None;
                }
                continue;
            };
            for c in list
                .split_whitespace()
                .filter_map(|c| c.parse::<u32>().ok())
            {
                if Some(c) == skip || !seen.insert(c) {
                    continue;
                }
                if p == me && reaped(c) {
                    continue;
                }
                if super::procgroup::stat_fields(c).is_some_and(|f| !super::procgroup::dead(&f)) {
                    if let Ok(pid) = i32::try_from(c) {
                        out.push(pid);
                    }
                }
                todo.push(c);
            }
        }
    }
    Some(out)
}

/// Reap `pid`, a child of this process, if it has ended.
fn reaped(pid: u32) -> bool {
    let Ok(p) = i32::try_from(pid) else {
        return false;
    };
    let mut st = 0;
    // SAFETY: waitpid of one child, non-blocking, into a local
    unsafe { libc::waitpid(p, &mut st, libc::WNOHANG) == p }
}

/// The launcher has cleaned up: the guard ends without doing anything.
pub(super) fn done() {
    let Some(mut w) = watch().take() else {
        return;
    };
    let _ = w.to.write_all(b"done\n");
    drop(w.to);
    let _ = w.child.wait();
}

/// `pmixw __guard PID MARK GRACE_MS`: the guard's own process.
pub(super) fn main(args: &[String]) -> std::process::ExitCode {
    // `ps` and /proc/PID/stat name it so (its comm is "exe" else)
    // SAFETY: PR_SET_NAME reads a NUL-terminated string of ≤ 16 bytes
    unsafe {
        libc::prctl(libc::PR_SET_NAME, c"pmixw-guard".as_ptr(), 0, 0, 0);
    }
    for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGPIPE] {
        // SAFETY: setting a signal's disposition to ignore
        unsafe {
            libc::signal(s, libc::SIG_IGN);
        }
    }
    // what the launcher inherited without close-on-exec (srun's PMI_FD
    // socket) is not held open here past the launcher's end
    // SAFETY: close_range on descriptors this process does not use
    if unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) } != 0 {
        let fds: Vec<i32> = std::fs::read_dir("/proc/self/fd")
            .map(|d| {
                d.flatten()
                    .filter_map(|e| e.file_name().to_str()?.parse().ok())
                    .filter(|&fd| fd > 2)
                    .collect()
            })
            .unwrap_or_default();
        for fd in fds {
            // SAFETY: closing an inherited descriptor nothing here uses
            // (the directory's own is closed by then: a failed close)
            unsafe {
                libc::close(fd);
            }
        }
    }
    let (Some(pid), Some(mark), Some(grace)) = (
        args.first().and_then(|a| a.parse::<u32>().ok()),
        args.get(1),
        args.get(2).and_then(|a| a.parse::<u64>().ok()),
    ) else {
        return std::process::ExitCode::from(2);
    };
    let mut groups: Vec<u32> = Vec::new();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let mut w = line.split(' ');
        match (w.next(), w.next().and_then(|g| g.parse::<u32>().ok())) {
            (Some("done"), _) => return std::process::ExitCode::SUCCESS,
            (Some("g"), Some(g)) if g > 1 => groups.push(g),
            (Some("e"), Some(g)) => groups.retain(|&x| x != g),
            _ => {}
        }
    }
    // the launcher is gone
    let mark = format!("{MARK}={mark}");
    end_all(
        &groups,
        &|| of_the_run(&groups, &mark),
        Duration::from_millis(grace),
    );
    remove_files(pid);
    std::process::ExitCode::SUCCESS
}

/// The processes, other than this one and zombies, in one of `groups`
/// or whose environment holds the entry `mark`.
fn of_the_run(groups: &[u32], mark: &str) -> Vec<i32> {
    let me = std::process::id();
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in rd.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Some(f) = super::procgroup::stat_fields(pid) else {
            continue;
        };
        if super::procgroup::dead(&f) {
            continue;
        }
        let in_group = f
            .get(2)
            .and_then(|g| g.parse::<u32>().ok())
            .is_some_and(|g| groups.contains(&g));
        let marked = || {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|&b| b == 0).any(|v| v == mark.as_bytes()))
        };
        if in_group || marked() {
            if let Ok(p) = i32::try_from(pid) {
                out.push(p);
            }
        }
    }
    out
}

/// SIGTERM (and SIGCONT) to what is left of the run, up to `grace` for it
/// to go, then SIGKILL until nothing is left (bounded).
fn end_all(groups: &[u32], find: &dyn Fn() -> Vec<i32>, grace: Duration) {
    let send = |pids: &[i32], sig: i32| {
        for &g in groups {
            // SAFETY: kill(2) of a negative pid: one process group
            unsafe {
                libc::kill(-(g as i32), sig);
            }
        }
        for &p in pids {
            // SAFETY: kill(2) of one process
            unsafe {
                libc::kill(p, sig);
            }
        }
    };
    let left = find();
    if left.is_empty() {
        return;
    }
    send(&left, libc::SIGTERM);
    send(&left, libc::SIGCONT);
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
        if find().is_empty() {
            return;
        }
    }
    // what forks while it is killed is found again (a few rounds at most)
    for _ in 0..500 {
        let left = find();
        if left.is_empty() {
            return;
        }
        send(&left, libc::SIGKILL);
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The dead launcher `pid`'s files: its tool rendezvous files where it
/// wrote them (those of a dead pmix-wire server), the system server's
/// file when it names `pid`, its ds21 store directories.
fn remove_files(pid: u32) {
    use pmix_wire::server::net::{self, rendezvous};
    use std::os::unix::fs::MetadataExt;
    let host = net::hostname();
    let mut dirs: Vec<std::path::PathBuf> = vec![std::env::temp_dir()];
    for k in ["PMIX_SYSTEM_TMPDIR", "TMPDIR", "TEMP", "TMP"] {
        if let Some(v) = std::env::var_os(k).filter(|v| !v.is_empty()) {
            dirs.push(v.into());
        }
    }
    dirs.dedup();
    // SAFETY: geteuid has no failure
    let me = unsafe { libc::geteuid() };
    let store = format!("pmix_dstor_ds21_{pid}");
    for d in &dirs {
        rendezvous::remove_stale(d, &host);
        let sys = d.join(format!("pmix.sys.{host}"));
        let names_pid = std::fs::read_to_string(&sys)
            .is_ok_and(|t| t.lines().nth(2).map(str::trim) == Some(&pid.to_string()));
        if names_pid && rendezvous::is_stale(&sys) {
            let _ = std::fs::remove_file(&sys);
        }
        let Ok(rd) = std::fs::read_dir(d) else {
            continue;
        };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let ours = name == store
                || name
                    .strip_prefix(&store)
                    .and_then(|r| r.strip_prefix('-'))
                    .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()));
            let Ok(md) = std::fs::symlink_metadata(e.path()) else {
                continue;
            };
            if ours && md.is_dir() && md.uid() == me {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
}
