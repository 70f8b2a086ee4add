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
/// as text. Past the deadline it is killed and the test fails, showing
/// what it printed.
pub fn finish(mut c: Kill, limit: std::time::Duration, what: &str) -> (bool, String) {
    let start = std::time::Instant::now();
    loop {
        match c.0.try_wait() {
            Ok(Some(st)) => {
                let mut out = String::new();
                if let Some(mut o) = c.0.stdout.take() {
                    let _ = std::io::Read::read_to_string(&mut o, &mut out);
                }
                return (st.success(), out);
            }
            Ok(None) if start.elapsed() < limit => {
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            _ => {
                let mut out = String::new();
                crate::hosts::stop(&mut c.0, STOP_GRACE);
                if let Some(mut o) = c.0.stdout.take() {
                    let _ = std::io::Read::read_to_string(&mut o, &mut out);
                }
                panic!("{what} did not finish in {limit:?}; its output:\n{out}");
            }
        }
    }
}

/// Wait for a child with a deadline and collect its whole output (what it
/// piped); past the deadline it is killed and the test fails.
pub fn output_within(
    mut c: std::process::Child,
    limit: std::time::Duration,
    what: &str,
) -> std::process::Output {
    let start = std::time::Instant::now();
    while c.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            crate::hosts::stop(&mut c, STOP_GRACE);
            panic!("{what} did not finish in {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    c.wait_with_output().unwrap()
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
