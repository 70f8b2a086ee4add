//! Child processes in tests: stopped when dropped, waited for with hang
//! guards, and the rule for a peer that is not installed.

/// A child process stopped when dropped, so no path leaves one behind:
/// SIGTERM first, so a launcher (mpirun, prterun, `pmixw run`) removes its
/// session directory and rendezvous files, then SIGKILL after [`STOP_GRACE`].
pub struct Kill(pub std::process::Child);

impl Drop for Kill {
    fn drop(&mut self) {
        crate::hosts::stop(&mut self.0, STOP_GRACE);
    }
}

/// How long a child stopped with SIGTERM has to clean up and exit.
pub const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// A hang guard: how long a test waits for an event (a file, a line, a
/// process's end) before it calls the wait a hang. Generous on purpose:
/// a loaded machine never reaches it while the thing still progresses.
pub const HANG: std::time::Duration = std::time::Duration::from_secs(600);

/// Wait until `done` holds, polling; past [`HANG`] the test fails saying
/// that `what` hung.
pub fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !done() {
        assert!(start.elapsed() < HANG, "hung: {what} (waited {HANG:?})");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Wait for `file` to appear while `maker` (the process that writes it)
/// runs: its end first fails the test at once, a hang after [`HANG`].
pub fn wait_for_file(file: &std::path::Path, maker: &mut std::process::Child) {
    wait_until(&format!("no {} yet", file.display()), || {
        if let Ok(Some(st)) = maker.try_wait() {
            panic!("{} never appeared: its maker ended ({st})", file.display());
        }
        file.exists()
    });
}

/// Wait for `child` to end (hang guard [`HANG`], naming `what`).
pub fn wait_exit(child: &mut std::process::Child, what: &str) -> std::process::ExitStatus {
    let mut st = None;
    wait_until(&format!("{what} still runs"), || {
        st = child.try_wait().unwrap();
        st.is_some()
    });
    st.unwrap()
}

/// Wait for a child with a deadline; whether it succeeded, and its stdout
/// as text. Its pipes are drained while it runs (see [`output_within`]);
/// past the deadline it is stopped and the test fails, showing what it
/// printed.
pub fn finish(mut c: Kill, limit: std::time::Duration, what: &str) -> (bool, String) {
    let o = collect(&mut c.0, limit, what);
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

/// Run `cmd` with its stdout and stderr piped and collect its whole
/// output, as [`output_within`] does: past `limit` it is stopped and the
/// test fails, naming `what` and showing what it printed so far. A
/// command that cannot start fails the test, naming `what` and the error.
pub fn run_within(
    cmd: &mut std::process::Command,
    limit: std::time::Duration,
    what: &str,
) -> std::process::Output {
    let child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what} ({e}): {cmd:?}"));
    output_within(child, limit, what)
}

/// Wait for a child with a deadline and collect its whole output (what it
/// piped). Both pipes are drained while it runs, so a child that writes
/// more than a pipe holds (64 KiB) is not blocked. Past the deadline it is
/// stopped ([`crate::hosts::stop`]) and the test fails, showing what it
/// printed; so it does when it has ended but what it left running holds
/// its pipes open past the deadline.
pub fn output_within(
    mut c: std::process::Child,
    limit: std::time::Duration,
    what: &str,
) -> std::process::Output {
    collect(&mut c, limit, what)
}

/// A buffer a pipe is read into, to its end, by a thread of its own; the
/// waiter may look at it at any time. The thread drops `done` when it ends.
fn drain(
    r: Option<impl std::io::Read + Send + 'static>,
    done: &std::sync::mpsc::Sender<()>,
) -> std::sync::Arc<std::sync::Mutex<Vec<u8>>> {
    let buf = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    if let Some(mut r) = r {
        let (buf, done) = (buf.clone(), done.clone());
        std::thread::spawn(move || {
            let mut chunk = vec![0; 1 << 16];
            loop {
                match r.read(&mut chunk) {
                    Ok(0) => break,
                    Ok(n) => buf.lock().unwrap().extend_from_slice(&chunk[..n]),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            drop(done);
        });
    }
    buf
}

/// [`output_within`] on a borrowed child (so [`finish`] keeps its
/// [`Kill`] guard).
fn collect(
    c: &mut std::process::Child,
    limit: std::time::Duration,
    what: &str,
) -> std::process::Output {
    let start = std::time::Instant::now();
    let (done, drained) = std::sync::mpsc::channel();
    let out = drain(c.stdout.take(), &done);
    let err = drain(c.stderr.take(), &done);
    drop(done);
    // whether both readers have ended (their pipes closed) within `wait`
    let all_read = |wait: std::time::Duration| {
        matches!(
            drained.recv_timeout(wait),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected)
        )
    };
    let taken = |b: &std::sync::Mutex<Vec<u8>>| std::mem::take(&mut *b.lock().unwrap());
    let ended = loop {
        match c.try_wait() {
            Ok(Some(st)) => break Some(st),
            Ok(None) if start.elapsed() < limit => {
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            Ok(None) => break None,
            Err(e) => panic!("cannot wait for {what} ({e})"),
        }
    };
    let why = match ended {
        Some(status) if all_read(limit.saturating_sub(start.elapsed())) => {
            return std::process::Output {
                status,
                stdout: taken(&out),
                stderr: taken(&err),
            };
        }
        Some(st) => format!("ended ({st}), but what it left running holds its pipes open"),
        None => {
            crate::hosts::stop(c, STOP_GRACE);
            // what it wrote before it was stopped (a pipe that what it
            // left running still holds is read no further)
            all_read(STOP_GRACE);
            "was stopped".to_string()
        }
    };
    panic!(
        "{what} did not finish in {limit:?}: it {why}; its stdout:\n{}\nits stderr:\n{}",
        String::from_utf8_lossy(&taken(&out)),
        String::from_utf8_lossy(&taken(&err)),
    );
}

/// The lines a reader yields, as they come, on a channel (read by a thread
/// that ends with the reader).
pub fn lines_of(r: impl std::io::Read + Send + 'static) -> std::sync::mpsc::Receiver<String> {
    use std::io::BufRead;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(r).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// A live peer a test needs (a `crate::hosts` finder's answer). Found:
/// Some. Missing: under CI (`CI=true`, where `.ci/setup` installed it)
/// the test fails; elsewhere it says what it skipped and gets None.
pub fn require<T>(what: &str, found: Result<T, String>) -> Option<T> {
    match found {
        Ok(t) => Some(t),
        Err(why) if crate::hosts::in_ci() => {
            panic!("{what}: {why}; CI installs it with .ci/setup, so it must be found")
        }
        Err(why) => {
            eprintln!("SKIPPED {what}: {why}");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    /// A child writing more than a pipe holds (64 KiB) to both of its
    /// pipes, stderr first, completes: both are drained while it runs.
    #[test]
    fn a_child_writing_a_mebibyte_to_each_pipe_completes() {
        let c = Command::new("sh")
            .args(["-c", "yes e | head -c 1048576 >&2; yes o | head -c 1048576"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let o = output_within(c, HANG, "a loud child");
        assert!(o.status.success(), "{:?}", o.status);
        assert_eq!(o.stdout, b"o\n".repeat(1 << 19));
        assert_eq!(o.stderr, b"e\n".repeat(1 << 19));
    }

    /// Past its limit a child is stopped with SIGTERM (its trap runs) and
    /// the test fails, naming it, its limit and what it printed, before
    /// the stop and after.
    #[test]
    fn a_child_past_its_limit_is_stopped_and_its_output_shown() {
        let script =
            "trap 'echo stopped >&2; exit 3' TERM; echo started; while :; do sleep 0.1; done";
        let limit = std::time::Duration::from_secs(3);
        let e = std::panic::catch_unwind(|| {
            run_within(Command::new("sh").args(["-c", script]), limit, "a sleeper")
        })
        .expect_err("a child that never ends fails the test");
        let msg = e.downcast_ref::<String>().expect("a formatted panic");
        assert!(
            msg.starts_with("a sleeper did not finish in 3s: it was stopped;"),
            "{msg}"
        );
        assert!(msg.contains("its stdout:\nstarted\n"), "{msg}");
        assert!(msg.contains("its stderr:\nstopped\n"), "{msg}");
    }

    /// A command that cannot start (a name on no PATH) fails the test,
    /// naming it and why.
    #[test]
    fn a_command_that_cannot_start_is_named() {
        let e = std::panic::catch_unwind(|| {
            let mut cmd = Command::new("pmixw-test-kit-no-such-program");
            run_within(&mut cmd, HANG, "a missing program")
        })
        .expect_err("no such program");
        let msg = e.downcast_ref::<String>().expect("a formatted panic");
        assert!(msg.starts_with("cannot start a missing program ("), "{msg}");
    }
}
