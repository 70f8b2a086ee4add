//! The ranks' output, forwarded as prterun forwards it: each PMIx rank's
//! stdout and stderr are pipes this launcher reads; what it reads goes
//! at once to its own stdout and stderr, and to the server core
//! ([`Server::iof_deliver`]), which hands it to every tool that pulled it
//! (`PMIx_IOF_pull`) or keeps it for the first one that will
//! (spec-notes/server.md, "IO forwarding"). One thread reads every pipe
//! (epoll; poll(2) where it is missing), however many ranks the run has. Before the launcher exits
//! it waits for that thread to have copied everything the ranks wrote.

use pmix_types::names::iof_channel;
use pmix_types::Proc;
use pmix_wire::server::net::Poster;
use pmix_wire::server::Server;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One line of the launcher's to stderr, in one write: the ranks share
/// that stderr, and a line written in pieces (as `eprintln!` writes its
/// arguments) can be split by theirs.
pub(super) fn say(line: &str) {
    let _ = std::io::stderr().write_all(format!("{line}\n").as_bytes());
}

/// One pipe a rank writes into.
struct Source {
    from: std::fs::File,
    channel: u16,
    proc: Proc,
    server: Poster,
}

/// What the reader thread has still to read, and how it is woken.
struct Readers {
    /// Pipes given since the thread last looked.
    new: Vec<Source>,
    /// Pipes open (given, not at their end yet).
    open: usize,
    /// The write end of the pipe that wakes the thread (None: no thread).
    wake: Option<std::fs::File>,
}

static READERS: Mutex<Readers> = Mutex::new(Readers {
    new: Vec::new(),
    open: 0,
    wake: None,
});

fn readers() -> std::sync::MutexGuard<'static, Readers> {
    READERS.lock().unwrap_or_else(|p| p.into_inner())
}

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

/// The reader thread, started once: its wake pipe's write end.
fn start() -> Option<std::fs::File> {
    let (r, w) = pipe()?;
    // a wake never blocks (a full pipe has woken the thread already)
    // SAFETY: fcntl on a descriptor we own
    unsafe {
        let fl = libc::fcntl(w.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(w.as_raw_fd(), libc::F_SETFL, fl | libc::O_NONBLOCK);
    }
    std::thread::Builder::new()
        .name("rank output".into())
        .spawn(move || read_all(std::fs::File::from(r)))
        .ok()?;
    Some(std::fs::File::from(w))
}

/// Rank `rank` of `nspace` (command `c`, not started yet) writes its
/// stdout and stderr into pipes read here. Without pipes or a reader it
/// keeps this launcher's (and nothing is forwarded).
pub(super) fn capture(c: &mut Command, nspace: &str, rank: u32, server: Poster) {
    let mut g = readers();
    if g.wake.is_none() {
        g.wake = start();
    }
    if g.wake.is_none() {
        return;
    }
    let (Some((out_r, out_w)), Some((err_r, err_w))) = (pipe(), pipe()) else {
        return;
    };
    c.stdout(Stdio::from(out_w));
    c.stderr(Stdio::from(err_w));
    let proc = Proc::new(nspace, rank);
    for (r, channel) in [(out_r, iof_channel::STDOUT), (err_r, iof_channel::STDERR)] {
        g.new.push(Source {
            from: std::fs::File::from(r),
            channel,
            proc: proc.clone(),
            server: server.clone(),
        });
        g.open += 1;
    }
    if let Some(w) = g.wake.as_mut() {
        let _ = w.write_all(&[1]);
    }
}

/// The reader thread: every pipe until its end, as data comes. The
/// pipes are watched with epoll, so a wake costs what is ready, not one
/// entry per open pipe: with poll(2) over every pipe each rank's start,
/// output and end scanned all 2·N of them (N = 1024 on one node: ~250 ms
/// of this thread's CPU, more than the server's GET replies). Without
/// epoll, the poll loop.
fn read_all(wake: std::fs::File) {
    // SAFETY: a new epoll instance, owned from here
    let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    if ep < 0 {
        return read_all_poll(wake);
    }
    // SAFETY: ep is a new descriptor of ours
    let ep = unsafe { OwnedFd::from_raw_fd(ep) };
    const WAKE: u64 = u64::MAX;
    let watch = |fd: i32, key: u64, op: i32| {
        let mut e = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: key,
        };
        // SAFETY: an epoll_ctl on our epoll instance and an open pipe
        unsafe { libc::epoll_ctl(ep.as_raw_fd(), op, fd, &mut e) == 0 }
    };
    if !watch(wake.as_raw_fd(), WAKE, libc::EPOLL_CTL_ADD) {
        return read_all_poll(wake);
    }
    let mut wake = wake;
    let mut open: std::collections::HashMap<u64, Source> = std::collections::HashMap::new();
    let mut next: u64 = 0;
    let mut buf = vec![0u8; 16 * 1024];
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 256];
    loop {
        let new = std::mem::take(&mut readers().new);
        for s in new {
            if watch(s.from.as_raw_fd(), next, libc::EPOLL_CTL_ADD) {
                open.insert(next, s);
                next += 1;
            } else {
                // not watched: it ends here (its rank's output is lost,
                // as with a pipe that could not be made)
                let mut g = readers();
                g.open = g.open.saturating_sub(1);
            }
        }
        // SAFETY: events has room for its length of entries
        let n = unsafe {
            libc::epoll_wait(ep.as_raw_fd(), events.as_mut_ptr(), events.len() as i32, -1)
        };
        if n < 0 {
            continue; // EINTR
        }
        for e in &events[..n as usize] {
            let key = e.u64;
            if key == WAKE {
                let mut b = [0u8; 64];
                let _ = wake.read(&mut b);
                continue;
            }
            let Some(s) = open.get_mut(&key) else {
                continue;
            };
            match s.from.read(&mut buf) {
                Ok(0) | Err(_) => {
                    watch(s.from.as_raw_fd(), key, libc::EPOLL_CTL_DEL);
                    open.remove(&key);
                    let mut g = readers();
                    g.open = g.open.saturating_sub(1);
                }
                Ok(k) => forward(s, &buf[..k]),
            }
        }
    }
}

/// [`read_all`] with poll(2) over every pipe, each round.
fn read_all_poll(mut wake: std::fs::File) {
    let mut open: Vec<Source> = Vec::new();
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        open.append(&mut readers().new);
        let mut fds: Vec<libc::pollfd> = std::iter::once(wake.as_raw_fd())
            .chain(open.iter().map(|s| s.from.as_raw_fd()))
            .map(|fd| libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        // SAFETY: `fds.len()` pollfds we own, for the call
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
        if n < 0 {
            continue; // EINTR
        }
        if fds[0].revents != 0 {
            let mut b = [0u8; 64];
            let _ = wake.read(&mut b);
        }
        let mut ended = Vec::new();
        for (i, p) in fds.iter().enumerate().skip(1) {
            if p.revents == 0 {
                continue;
            }
            let s = &mut open[i - 1];
            match s.from.read(&mut buf) {
                Ok(0) | Err(_) => ended.push(i - 1),
                Ok(k) => forward(s, &buf[..k]),
            }
        }
        for i in ended.into_iter().rev() {
            open.remove(i);
            let mut g = readers();
            g.open = g.open.saturating_sub(1);
        }
    }
}

/// `data` the rank wrote: to ours, then to the core for the tools.
fn forward(s: &Source, data: &[u8]) {
    let _ = if s.channel == iof_channel::STDOUT {
        let mut o = std::io::stdout().lock();
        o.write_all(data).and_then(|_| o.flush())
    } else {
        std::io::stderr().lock().write_all(data)
    };
    let (bytes, proc, channel) = (
        bytes::Bytes::copy_from_slice(data),
        s.proc.clone(),
        s.channel,
    );
    s.server.post(move |srv: &mut Server| {
        srv.iof_deliver(&proc, channel, bytes, Vec::new());
    });
}

/// Wait until every pipe reached its end (every rank and whatever it left
/// behind in its group has ended by now), up to `limit`: a process
/// outside the ranks' groups still holding a pipe is not waited for.
pub(super) fn drain(limit: Duration) {
    let until = Instant::now() + limit;
    while readers().open > 0 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(5));
    }
}
