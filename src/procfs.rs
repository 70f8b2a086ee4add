//! What Linux's /proc says of a process, for the server's peer checks
//! (server/net/peercred.rs), its stale rendezvous files
//! (server/net/rendezvous.rs) and the tool's rendezvous search
//! (tool/mod.rs): one reading of `/proc/<pid>/stat` for all; and this
//! host's name as both write it into rendezvous file names.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// This host's name as libpmix uses it in file names.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "localhost".into())
}

/// The fields of `/proc/<pid>/stat` after the command name (which may
/// hold spaces and parentheses, hence the last `)`): index 0 is field 3,
/// the state.
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(')')?.1;
    Some(rest.split_whitespace().map(str::to_string).collect())
}

/// Whether `pid` exists and is not a zombie (a process that has ended
/// but is not yet reaped serves nothing).
pub(crate) fn alive(pid: u32) -> bool {
    stat_fields(pid)
        .and_then(|f| f.first().map(|s| s != "Z" && s != "X"))
        .unwrap_or(false)
}

/// When process `pid` started (None: no such process, or no /proc).
pub(crate) fn started(pid: u32) -> Option<SystemTime> {
    // field 22, starttime, in clock ticks since boot
    let ticks: u64 = stat_fields(pid)?.get(19)?.parse().ok()?;
    let btime: u64 = std::fs::read_to_string("/proc/stat")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    // SAFETY: sysconf reads a constant of the system
    let hz = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).ok()?;
    if hz == 0 {
        return None;
    }
    Some(UNIX_EPOCH + Duration::from_secs(btime) + Duration::from_millis(ticks * 1000 / hz))
}

/// Whether a file process `pid` is said to have written at `written` is
/// older than the process now holding that pid: the kernel gave a dead
/// writer's pid to another process (a wrapped pid, or a run in a fresh pid
/// namespace sharing the file's directory). `/proc/stat`'s boot time is
/// whole seconds, hence the 2 s of slack. False when either time is
/// unknown.
pub(crate) fn written_before_start(pid: u32, written: SystemTime) -> bool {
    started(pid).is_some_and(|start| written + Duration::from_secs(2) < start)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #[test]
    fn this_process_is_alive() {
        assert!(super::alive(std::process::id()));
    }

    #[test]
    fn this_process_started_before_now() {
        let t = super::started(std::process::id()).unwrap();
        assert!(t <= std::time::SystemTime::now());
    }

    #[test]
    fn an_unreaped_child_is_not_alive() {
        let mut c = std::process::Command::new("true").spawn().unwrap();
        let pid = c.id();
        // ended, not reaped: a zombie until wait()
        while std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| !s.contains(") Z"))
            .unwrap_or(false)
        {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(!super::alive(pid));
        c.wait().unwrap();
        assert!(!super::alive(pid));
    }
}
