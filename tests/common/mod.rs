//! Helpers shared by the integration tests: the annotated capture files
//! of corpus/releases/captures, as raw byte streams.

#![allow(dead_code)]

use pmix_wire::inspect::Side;

/// The bytes of one captured message: its hex, checked against the length
/// its header declares. The first message of each side is special:
/// the client's handshake header is host order, the server's handshake
/// reply is unframed.
pub fn message_bytes(hex: &str, first: bool, side: Side) -> Vec<u8> {
    let b = pmix_types::hex::decode(hex).unwrap();
    let len = match (first, side) {
        (true, Side::Server) => return b,
        (true, Side::Client) => u32::from_le_bytes(b[8..12].try_into().unwrap()),
        (false, _) => u32::from_be_bytes(b[8..12].try_into().unwrap()),
    };
    assert_eq!(b.len(), 16 + len as usize, "{hex}");
    b
}

/// Per connection: (client bytes, server bytes, C->S messages, S->C messages).
pub fn connections(text: &str) -> Vec<(Vec<u8>, Vec<u8>, usize, usize)> {
    // per connection, per message: (side, hex)
    let mut conns: Vec<Vec<(Side, String)>> = Vec::new();
    let mut in_msg = false;
    for line in text.lines() {
        let t = line.trim();
        if line.starts_with("CONNECTION") {
            conns.push(Vec::new());
            in_msg = false;
        } else if line.starts_with("  C->S #") || line.starts_with("  S->C #") {
            let side = if line.starts_with("  C->S") {
                Side::Client
            } else {
                Side::Server
            };
            if let Some(c) = conns.last_mut() {
                c.push((side, String::new()));
                in_msg = true;
            }
        } else if line.starts_with("====") {
            in_msg = false;
        } else if in_msg
            // raw bytes sit at indent 4 (header) or 6 (payload); deeper
            // lines re-show nested bytes ("decoded below")
            && line.len() - line.trim_start().len() <= 6
            && !t.is_empty()
            && t.len() % 2 == 0
            && t.bytes().all(|c| c.is_ascii_hexdigit())
        {
            if let Some(m) = conns.last_mut().and_then(|c| c.last_mut()) {
                m.1.push_str(t);
            }
        }
    }
    conns
        .into_iter()
        .map(|msgs| {
            let (mut c, mut s, mut nc, mut ns) = (Vec::new(), Vec::new(), 0, 0);
            for (side, hex) in msgs {
                match side {
                    Side::Client => {
                        c.extend(message_bytes(&hex, nc == 0, side));
                        nc += 1;
                    }
                    Side::Server => {
                        s.extend(message_bytes(&hex, ns == 0, side));
                        ns += 1;
                    }
                }
            }
            (c, s, nc, ns)
        })
        .collect()
}

/// A child process stopped when dropped, so no path leaves one behind:
/// SIGTERM first, so a launcher (mpirun, prterun, `pmixw run`) removes its
/// session directory and rendezvous files, then SIGKILL after [`STOP_GRACE`].
pub struct Kill(pub std::process::Child);

impl Drop for Kill {
    fn drop(&mut self) {
        pmix_wire::hosts::stop(&mut self.0, STOP_GRACE);
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
                pmix_wire::hosts::stop(&mut c.0, STOP_GRACE);
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
            pmix_wire::hosts::stop(&mut c, STOP_GRACE);
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

/// One connection of a shared capture file.
pub struct Captured {
    /// "<file> connection <n>", for messages.
    pub ctx: String,
    pub client: Vec<u8>,
    pub server: Vec<u8>,
    /// Messages each side sent.
    pub nc: usize,
    pub ns: usize,
}

/// Every connection of corpus/releases/captures in which the client sent
/// something.
pub fn shared_connections() -> Vec<Captured> {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus/releases/captures");
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).expect("corpus/releases/captures") {
        let path = e.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !name.ends_with(".txt") || name.contains("child_env") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for (i, (client, server, nc, ns)) in connections(&text).into_iter().enumerate() {
            if nc > 0 {
                out.push(Captured {
                    ctx: format!("{name} connection {}", i + 1),
                    client,
                    server,
                    nc,
                    ns,
                });
            }
        }
    }
    out
}

/// A live peer a test needs (a `pmix_wire::hosts` finder's answer). Found:
/// Some. Missing: under CI (`CI=true`, where `.ci/setup` installed it)
/// the test fails; elsewhere it says what it skipped and gets None.
pub fn require<T>(what: &str, found: Result<T, String>) -> Option<T> {
    match found {
        Ok(t) => Some(t),
        Err(why) if pmix_wire::hosts::in_ci() => {
            panic!("{what}: {why}; CI installs it with .ci/setup, so it must be found")
        }
        Err(why) => {
            eprintln!("SKIPPED {what}: {why}");
            None
        }
    }
}

pub mod hostile;
