//! The PMI server's driver: the ranks' `PMI_FD` sockets (one socketpair a
//! rank, the launcher keeping its end) and an optional `PMI_PORT` TCP
//! listener, multiplexed with poll(2) on the caller's thread. It only
//! moves bytes: everything else is the core's ([`super::server`]).

use super::server::{ConnId, Event, Output, Server};
use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::time::Duration;

enum Stream {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Stream {
    fn fd(&self) -> RawFd {
        match self {
            Stream::Unix(s) => s.as_raw_fd(),
            Stream::Tcp(s) => s.as_raw_fd(),
        }
    }
    fn read(&mut self, b: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Unix(s) => s.read(b),
            Stream::Tcp(s) => s.read(b),
        }
    }
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Unix(s) => s.write(b),
            Stream::Tcp(s) => s.write(b),
        }
    }
}

struct Peer {
    stream: Stream,
    out: Vec<u8>,
    /// Close once `out` is written.
    closing: bool,
}

/// The driver: the core, its connections and the listener.
pub struct Driver {
    core: Server,
    peers: HashMap<ConnId, Peer>,
    listener: Option<TcpListener>,
    next: ConnId,
}

impl Driver {
    /// A driver around `core`.
    pub fn new(core: Server) -> Driver {
        Driver {
            core,
            peers: HashMap::new(),
            listener: None,
            next: 1,
        }
    }

    /// The core, to register jobs and answer spawns.
    pub fn core(&mut self) -> &mut Server {
        &mut self.core
    }

    /// A socketpair for rank `rank` of `kvsname`: the driver keeps one
    /// end; the other is returned, inheritable (no close-on-exec), for the
    /// rank's `PMI_FD`. The caller drops it once the rank is started.
    pub fn socketpair(&mut self, kvsname: &str, rank: u32) -> std::io::Result<OwnedFd> {
        let (ours, theirs) = UnixStream::pair()?;
        ours.set_nonblocking(true)?;
        // SAFETY: fcntl on a descriptor we own
        let ok = unsafe { libc::fcntl(theirs.as_raw_fd(), libc::F_SETFD, 0) };
        if ok < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let id = self.next;
        self.next += 1;
        self.core.open(id, Some((kvsname, rank)));
        self.peers.insert(
            id,
            Peer {
                stream: Stream::Unix(ours),
                out: Vec::new(),
                closing: false,
            },
        );
        Ok(OwnedFd::from(theirs))
    }

    /// Listen for `PMI_PORT` connections on `addr` (`0.0.0.0:0`); the
    /// port bound.
    pub fn listen(&mut self, addr: &str) -> std::io::Result<u16> {
        let l = TcpListener::bind(addr)?;
        l.set_nonblocking(true)?;
        let port = l.local_addr()?.port();
        self.listener = Some(l);
        Ok(port)
    }

    /// Wait up to `timeout` for bytes, move them, and return the host
    /// events the core produced.
    pub fn step(&mut self, timeout: Duration) -> Vec<Event> {
        let mut fds: Vec<libc::pollfd> = Vec::with_capacity(self.peers.len() + 1);
        let mut ids = Vec::with_capacity(self.peers.len());
        if let Some(l) = &self.listener {
            fds.push(libc::pollfd {
                fd: l.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            });
        }
        for (id, p) in &self.peers {
            let mut events = libc::POLLIN;
            if !p.out.is_empty() {
                events |= libc::POLLOUT;
            }
            fds.push(libc::pollfd {
                fd: p.stream.fd(),
                events,
                revents: 0,
            });
            ids.push(*id);
        }
        let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: fds is a valid array of fds.len() pollfd structs
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
        if n > 0 {
            let skip = usize::from(self.listener.is_some());
            if skip == 1 && fds[0].revents & libc::POLLIN != 0 {
                self.accept();
            }
            let mut buf = vec![0u8; 64 << 10];
            for (i, id) in ids.iter().enumerate() {
                let re = fds[i + skip].revents;
                if re & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
                    self.read(*id, &mut buf);
                }
            }
        }
        let events = self.drain();
        self.flush();
        events
    }

    fn accept(&mut self) {
        let Some(l) = &self.listener else { return };
        while let Ok((s, _)) = l.accept() {
            if s.set_nonblocking(true).is_err() {
                continue;
            }
            let _ = s.set_nodelay(true);
            let id = self.next;
            self.next += 1;
            self.core.open(id, None);
            self.peers.insert(
                id,
                Peer {
                    stream: Stream::Tcp(s),
                    out: Vec::new(),
                    closing: false,
                },
            );
        }
    }

    fn read(&mut self, id: ConnId, buf: &mut [u8]) {
        loop {
            let Some(p) = self.peers.get_mut(&id) else {
                return;
            };
            match p.stream.read(buf) {
                Ok(0) => {
                    self.peers.remove(&id);
                    self.core.closed(id);
                    return;
                }
                Ok(n) => self.core.handle_input(id, &buf[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => {
                    self.peers.remove(&id);
                    self.core.closed(id);
                    return;
                }
            }
        }
    }

    fn drain(&mut self) -> Vec<Event> {
        let mut events = Vec::new();
        while let Some(o) = self.core.poll_output() {
            match o {
                Output::Send(id, b) => {
                    if let Some(p) = self.peers.get_mut(&id) {
                        p.out.extend_from_slice(&b);
                    }
                }
                Output::Close(id) => {
                    if let Some(p) = self.peers.get_mut(&id) {
                        p.closing = true;
                    }
                }
                Output::Host(e) => events.push(e),
            }
        }
        events
    }

    /// Write what is queued, as far as the sockets take it.
    pub fn flush(&mut self) {
        let mut gone = Vec::new();
        for (id, p) in self.peers.iter_mut() {
            while !p.out.is_empty() {
                match p.stream.write(&p.out) {
                    Ok(n) if n > 0 => {
                        p.out.drain(..n);
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    _ => {
                        gone.push(*id);
                        break;
                    }
                }
            }
            if p.closing && p.out.is_empty() {
                gone.push(*id);
            }
        }
        for id in gone {
            self.peers.remove(&id);
            self.core.closed(id);
        }
    }

    /// Events the core produced outside [`Driver::step`] (after
    /// [`Server::spawned`], say), with their bytes queued.
    pub fn pending(&mut self) -> Vec<Event> {
        let e = self.drain();
        self.flush();
        e
    }
}
