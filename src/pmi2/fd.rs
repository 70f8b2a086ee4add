//! The thin blocking driver of [`Client`]: the socket a task inherits as
//! `PMI_FD`, one request at a time, every wait bounded by a timeout.

use super::{Client, Error, Request, Response};
use std::io::{Read, Write};
use std::os::unix::io::FromRawFd;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// A connection to the PMI-2 server after `init` and `fullinit`.
pub struct Conn {
    sock: UnixStream,
    client: Client,
    /// The longest any answer may take.
    pub timeout: Duration,
    /// PMI jobid (`PMI_JOBID`, as `fullinit` was given it).
    pub jobid: String,
    /// This task's PMI-2 rank (`rank=` of the `fullinit-response`).
    pub rank: u32,
    /// The job's size (`size=` of the `fullinit-response`).
    pub size: u32,
}

fn env(name: &str) -> Result<String, Error> {
    std::env::var(name).map_err(|_| Error::NoServer(format!("{name} is not set")))
}

impl Conn {
    /// Take the inherited `PMI_FD` (closed on exec, so ranks started later
    /// do not hold it) and greet the server.
    pub fn from_env(timeout: Duration) -> Result<Conn, Error> {
        let fd: i32 = env("PMI_FD")?
            .trim()
            .parse()
            .map_err(|_| Error::NoServer("PMI_FD is not a descriptor number".into()))?;
        // SAFETY: fcntl on a descriptor number only reads/sets its flags;
        // an invalid number gives -1, checked here before the descriptor is
        // adopted.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
        if fd < 0 || flags < 0 {
            return Err(Error::NoServer(format!("PMI_FD={fd} is not open")));
        }
        // SAFETY: as above; FD_CLOEXEC keeps the ranks from inheriting it.
        unsafe { libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC) };
        // SAFETY: the descriptor is open (checked above) and inherited for
        // this process's PMI use alone: nothing else in pmixw owns it, and
        // PMI_FD is read once, by this call.
        let sock = unsafe { UnixStream::from_raw_fd(fd) };
        let jobid = env("PMI_JOBID")?;
        let rank: u32 = env("PMI_RANK")?
            .parse()
            .map_err(|_| Error::NoServer("PMI_RANK is not a number".into()))?;
        Conn::start(sock, jobid, rank, timeout)
    }

    /// Greet a server on this socket (`init`, `fullinit`).
    pub fn start(
        sock: UnixStream,
        jobid: String,
        rank: u32,
        timeout: Duration,
    ) -> Result<Conn, Error> {
        let mut c = Conn {
            sock,
            client: Client::new(),
            timeout,
            jobid: jobid.clone(),
            rank,
            size: 0,
        };
        c.call(&Request::Init)?;
        match c.call(&Request::FullInit { jobid, rank })? {
            Response::FullInit { rank: r, size, .. } if r == rank => c.size = size,
            other => {
                return Err(Error::Unexpected {
                    sent: "fullinit",
                    got: format!("{other:?}"),
                })
            }
        }
        Ok(c)
    }

    /// Send a request and wait (at most [`Conn::timeout`]) for its answer.
    pub fn call(&mut self, r: &Request) -> Result<Response, Error> {
        self.call_within(r, self.timeout)
    }

    /// As [`Conn::call`], waiting at most `limit`.
    pub fn call_within(&mut self, r: &Request, limit: Duration) -> Result<Response, Error> {
        let bytes = self.client.request(r)?;
        self.sock
            .write_all(&bytes)
            .map_err(|e| Error::Io(format!("{}: {e}", r.name())))?;
        if !self.client.waiting() {
            return Ok(Response::Sent);
        }
        let deadline = Instant::now() + limit;
        let mut buf = [0u8; 8192];
        loop {
            if let Some(a) = self.client.poll() {
                return a;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Error::Timeout {
                    cmd: r.name(),
                    secs: limit.as_secs(),
                });
            }
            let _ = self.sock.set_read_timeout(Some(left));
            match self.sock.read(&mut buf) {
                Ok(0) => return Err(Error::Closed { cmd: r.name() }),
                Ok(n) => self.client.received(&buf[..n]),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock
                            | std::io::ErrorKind::TimedOut
                            | std::io::ErrorKind::Interrupted
                    ) => {}
                Err(e) => return Err(Error::Io(format!("{}: {e}", r.name()))),
            }
        }
    }

    /// `kvs-get` of this job's key.
    pub fn get(&mut self, key: &str) -> Result<Option<String>, Error> {
        match self.call(&Request::KvsGet {
            jobid: self.jobid.clone(),
            key: key.into(),
        })? {
            Response::KvsGet(v) => Ok(v),
            other => Err(Error::Unexpected {
                sent: "kvs-get",
                got: format!("{other:?}"),
            }),
        }
    }

    /// `kvs-put`.
    pub fn put(&mut self, key: &str, value: &str) -> Result<(), Error> {
        self.call(&Request::KvsPut {
            key: key.into(),
            value: value.into(),
        })
        .map(|_| ())
    }

    /// `kvs-fence`.
    pub fn fence(&mut self) -> Result<(), Error> {
        self.call(&Request::KvsFence).map(|_| ())
    }

    /// `kvs-fence`, waiting at most `limit` (the slowest task may be busy
    /// for long before it joins).
    pub fn fence_within(&mut self, limit: Duration) -> Result<(), Error> {
        self.call_within(&Request::KvsFence, limit).map(|_| ())
    }

    /// `info-getjobattr`.
    pub fn job_attr(&mut self, key: &str) -> Result<Option<String>, Error> {
        match self.call(&Request::JobAttr { key: key.into() })? {
            Response::JobAttr(v) => Ok(v),
            other => Err(Error::Unexpected {
                sent: "info-getjobattr",
                got: format!("{other:?}"),
            }),
        }
    }
}
