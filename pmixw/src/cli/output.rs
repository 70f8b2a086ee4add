//! The ranks' output, forwarded as prterun forwards it: each PMIx rank's
//! stdout and stderr are pipes this launcher reads; what it reads goes
//! at once to its own stdout and stderr, and to the server core
//! ([`Server::iof_deliver`]), which hands it to every tool that pulled it
//! (`PMIx_IOF_pull`) or keeps it for the first one that will
//! (spec-notes/server.md, "IO forwarding"). Before the launcher exits it
//! waits for the readers to have copied everything the ranks wrote.

use pmix_types::names::iof_channel;
use pmix_types::Proc;
use pmix_wire::server::net::Poster;
use pmix_wire::server::Server;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The reader threads still running.
static READERS: Mutex<Vec<JoinHandle<()>>> = Mutex::new(Vec::new());

/// A pipe: (read end, write end), both close-on-exec.
fn pipe() -> Option<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two fds we then own
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return None;
    }
    // SAFETY: just made, ours alone
    Some(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Rank `rank` of `nspace` (command `c`, not started yet) writes its
/// stdout and stderr into pipes read here. Without a pipe to be had it
/// keeps this launcher's (and nothing is forwarded).
pub(super) fn capture(c: &mut Command, nspace: &str, rank: u32, server: Poster) {
    let (Some((out_r, out_w)), Some((err_r, err_w))) = (pipe(), pipe()) else {
        return;
    };
    c.stdout(Stdio::from(out_w));
    c.stderr(Stdio::from(err_w));
    let source = Proc::new(nspace, rank);
    for (r, channel) in [(out_r, iof_channel::STDOUT), (err_r, iof_channel::STDERR)] {
        let (source, server) = (source.clone(), server.clone());
        let t = std::thread::Builder::new()
            .name("rank output".into())
            .spawn(move || forward(std::fs::File::from(r), channel, source, server));
        if let Ok(t) = t {
            READERS.lock().unwrap_or_else(|p| p.into_inner()).push(t);
        }
    }
}

/// Copy what the rank writes on `channel` to ours and to the core.
fn forward(mut from: std::fs::File, channel: u16, source: Proc, server: Poster) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        };
        let data = &buf[..n];
        let _ = if channel == iof_channel::STDOUT {
            let mut o = std::io::stdout().lock();
            o.write_all(data).and_then(|_| o.flush())
        } else {
            std::io::stderr().lock().write_all(data)
        };
        let (bytes, source) = (bytes::Bytes::copy_from_slice(data), source.clone());
        server.post(move |s: &mut Server| {
            s.iof_deliver(&source, channel, bytes, Vec::new());
        });
    }
}

/// Wait for the readers to reach the end of their pipes (every rank and
/// whatever it left behind in its group has ended by now), up to `limit`:
/// a process outside the ranks' groups still holding a pipe is not
/// waited for.
pub(super) fn drain(limit: Duration) {
    let until = Instant::now() + limit;
    let readers = std::mem::take(&mut *READERS.lock().unwrap_or_else(|p| p.into_inner()));
    for t in readers {
        while !t.is_finished() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        if t.is_finished() {
            let _ = t.join();
        }
    }
}
