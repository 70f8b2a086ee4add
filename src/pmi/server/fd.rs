//! The PMI server's driver: the ranks' `PMI_FD` sockets (one socketpair a
//! rank, the launcher keeping its end) and an optional `PMI_PORT` TCP
//! listener, multiplexed with poll(2) on the caller's thread. It only
//! moves bytes: everything else is the core's ([`super`]).

use super::{ConnId, Event, Server, Transmit};
use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

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
    /// The read buffer, reused.
    buf: Vec<u8>,
}

impl Driver {
    /// A driver around `core`.
    pub fn new(core: Server) -> Driver {
        Driver {
            core,
            peers: HashMap::new(),
            listener: None,
            next: 1,
            buf: vec![0u8; 64 << 10],
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
        self.core.open(id, Some((kvsname, rank)), Instant::now());
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
        // no longer than until the core's next deadline
        let timeout = match self.core.poll_timeout() {
            Some(at) => timeout.min(at.saturating_duration_since(Instant::now())),
            None => timeout,
        };
        let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: fds is a valid array of fds.len() pollfd structs
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
        if n > 0 {
            let skip = usize::from(self.listener.is_some());
            if skip == 1 && fds[0].revents & libc::POLLIN != 0 {
                self.accept();
            }
            let mut buf = std::mem::take(&mut self.buf);
            for (i, id) in ids.iter().enumerate() {
                let re = fds[i + skip].revents;
                if re & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
                    self.read(*id, &mut buf);
                }
            }
            self.buf = buf;
        }
        self.core.handle_timeout(Instant::now());
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
            self.core.open(id, None, Instant::now());
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
                Ok(n) => self.core.handle_input(id, &buf[..n], Instant::now()),
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
        let events: Vec<Event> = std::iter::from_fn(|| self.core.poll_event()).collect();
        while let Some(t) = self.core.poll_transmit() {
            match t {
                Transmit::Send(id, b) => {
                    if let Some(p) = self.peers.get_mut(&id) {
                        p.out.extend_from_slice(&b);
                    }
                }
                Transmit::Close(id) => {
                    if let Some(p) = self.peers.get_mut(&id) {
                        p.closing = true;
                    }
                }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pmi::server::JobSpec;

    trait Peer: Read + Write {}
    impl<T: Read + Write> Peer for T {}

    /// The driver runs on this thread: send `q`, step until `answers`
    /// lines came back (at most 5000 steps; 0 answers: 20 steps, enough
    /// for the server to answer if it would), return them.
    fn ask(d: &mut Driver, p: &mut dyn Peer, q: &str, answers: usize) -> Vec<String> {
        p.write_all(q.as_bytes()).unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        let steps = if answers == 0 { 20 } else { 5000 };
        for _ in 0..steps {
            d.step(Duration::from_millis(1));
            if let Ok(n) = p.read(&mut buf) {
                got.extend_from_slice(&buf[..n]);
            }
            if answers > 0 && got.iter().filter(|b| **b == b'\n').count() >= answers {
                break;
            }
        }
        String::from_utf8(got)
            .unwrap()
            .split_inclusive('\n')
            .map(str::to_string)
            .collect()
    }

    /// Two ranks on their socketpairs and one over the port: a barrier
    /// across both kinds of connection, and a rank whose socket closes.
    #[test]
    fn socketpairs_and_the_port_carry_the_wire() {
        let mut core = Server::new();
        core.register(JobSpec::single_node("job", 3));
        core.expect_id(77, "job", 2);
        let mut d = Driver::new(core);
        let a = UnixStream::from(d.socketpair("job", 0).unwrap());
        let b = UnixStream::from(d.socketpair("job", 1).unwrap());
        let port = d.listen("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(("127.0.0.1", port)).unwrap();
        a.set_nonblocking(true).unwrap();
        b.set_nonblocking(true).unwrap();
        c.set_nonblocking(true).unwrap();
        let mut peers: Vec<Box<dyn Peer>> = vec![Box::new(a), Box::new(b), Box::new(c)];
        assert_eq!(
            ask(&mut d, &mut *peers[2], "cmd=initack pmiid=77\n", 4),
            [
                "cmd=initack rc=0\n",
                "cmd=set size=3\n",
                "cmd=set rank=2\n",
                "cmd=set debug=0\n"
            ]
        );
        for p in peers.iter_mut() {
            let got = ask(
                &mut d,
                &mut **p,
                "cmd=init pmi_version=1 pmi_subversion=1\n",
                1,
            );
            assert_eq!(
                got,
                ["cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=2\n"]
            );
        }
        // a barrier: nobody answered until all three are in
        assert!(ask(&mut d, &mut *peers[0], "cmd=barrier_in\n", 0).is_empty());
        assert!(ask(&mut d, &mut *peers[1], "cmd=barrier_in\n", 0).is_empty());
        assert_eq!(
            ask(&mut d, &mut *peers[2], "cmd=barrier_in\n", 1),
            ["cmd=barrier_out rc=0\n"]
        );
        for p in peers.iter_mut().take(2) {
            assert_eq!(ask(&mut d, &mut **p, "", 1), ["cmd=barrier_out rc=0\n"]);
        }
        // rank 1's socket closes: the host hears it lost
        drop(peers.remove(1));
        let mut lost = Vec::new();
        for _ in 0..5000 {
            lost.extend(d.step(Duration::from_millis(1)));
            if !lost.is_empty() {
                break;
            }
        }
        assert!(
            lost.iter()
                .any(|e| matches!(e, Event::Lost { rank: 1, .. })),
            "{lost:?}"
        );
    }
}
