//! The thin blocking driver of [`Client`]: the socket a task inherits as
//! `PMI_FD`, one request at a time, every wait bounded by a timeout.

use super::{Client, Error, Request, Response};
use std::collections::BTreeMap;
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
    /// What this connection has sent and received, per command.
    pub traffic: Traffic,
}

/// Requests and bytes of one command on a [`Conn`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Count {
    /// Requests sent.
    pub requests: u64,
    /// Bytes of those requests (length prefix included).
    pub sent: u64,
    /// Bytes read while waiting for their answers.
    pub received: u64,
    /// Time from sending each request to its answer, summed.
    pub waited: Duration,
}

/// A [`Conn`]'s traffic by command name (`"kvs-put"` …): what `pmixw run`
/// reports under `PMIXW_TRAFFIC` (two additions per request, no I/O).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Traffic(pub BTreeMap<&'static str, Count>);

impl Traffic {
    /// The count of one command (zero if never sent).
    pub fn of(&self, cmd: &str) -> Count {
        self.0.get(cmd).copied().unwrap_or_default()
    }
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
            traffic: Traffic::default(),
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

    /// As [`Conn::call`], waiting at most `limit` (the core keeps the
    /// deadline: [`Client::send_by`]).
    pub fn call_within(&mut self, r: &Request, limit: Duration) -> Result<Response, Error> {
        let sent = Instant::now();
        self.client.send_by(r, sent, limit)?;
        let bytes = self.client.poll_transmit().unwrap_or_default();
        self.sock
            .write_all(&bytes)
            .map_err(|e| Error::Io(format!("{}: {e}", r.name())))?;
        let count = self.traffic.0.entry(r.name()).or_default();
        count.requests += 1;
        count.sent += bytes.len() as u64;
        if !self.client.waiting() {
            return Ok(Response::Sent);
        }
        let answer = self.answer(r);
        self.traffic.0.entry(r.name()).or_default().waited += sent.elapsed();
        answer
    }

    /// Read until the core has the answer, or says why there is none.
    fn answer(&mut self, r: &Request) -> Result<Response, Error> {
        let mut buf = [0u8; 8192];
        loop {
            self.client.handle_timeout(Instant::now());
            if let Some(a) = self.client.poll_event() {
                return a;
            }
            let left = self
                .client
                .poll_timeout()
                .map_or(Duration::from_secs(1), |at| {
                    at.saturating_duration_since(Instant::now())
                })
                .max(Duration::from_millis(1));
            let _ = self.sock.set_read_timeout(Some(left));
            match self.sock.read(&mut buf) {
                Ok(0) => return Err(Error::Closed { cmd: r.name() }),
                Ok(n) => {
                    self.client.handle_input(&buf[..n], Instant::now());
                    self.traffic.0.entry(r.name()).or_default().received += n as u64;
                }
                Err(e) if no_bytes_yet(&e) => {}
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

/// A read that timed out or was interrupted: nothing came yet, and the
/// socket is still good (a blocking read with a timeout, as the PMI-2
/// driver and `pmixw run`'s bridge readers wait).
pub fn no_bytes_yet(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock
            | std::io::ErrorKind::TimedOut
            | std::io::ErrorKind::Interrupted
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufRead;

    /// A server on the other end: answers the greeting, then each framed
    /// request with the canned answer for its command.
    fn serve(sock: UnixStream) {
        let mut r = std::io::BufReader::new(sock.try_clone().unwrap());
        let mut w = sock;
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        w.write_all(b"cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n")
            .unwrap();
        loop {
            let mut len = [0u8; 6];
            if r.read_exact(&mut len).is_err() {
                return;
            }
            let n: usize = std::str::from_utf8(&len).unwrap().trim().parse().unwrap();
            let mut body = vec![0u8; n];
            r.read_exact(&mut body).unwrap();
            let body = String::from_utf8(body).unwrap();
            let answer = if body.starts_with("cmd=fullinit;") {
                "cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=1;size=2;appnum=-1;debugged=FALSE;pmiverbose=FALSE;"
            } else if body.starts_with("cmd=kvs-put;") {
                "cmd=kvs-put-response;rc=0;"
            } else {
                "cmd=kvs-get-response;rc=0;found=TRUE;value=abc;"
            };
            w.write_all(format!("{:<6}{answer}", answer.len()).as_bytes())
                .unwrap();
        }
    }

    #[test]
    fn traffic_counts_each_command_and_its_bytes() {
        let (a, b) = UnixStream::pair().unwrap();
        let t = std::thread::spawn(move || serve(b));
        let mut c = Conn::start(a, "7.0".into(), 1, Duration::from_secs(10)).unwrap();
        assert_eq!(c.size, 2);
        c.put("k", "v").unwrap();
        c.put("k2", "v2").unwrap();
        assert_eq!(c.get("k").unwrap().as_deref(), Some("abc"));
        let put = c.traffic.of("kvs-put");
        assert_eq!(put.requests, 2);
        // "cmd=kvs-put;key=k;value=v;" and "…key=k2;value=v2;", each with
        // its 6-byte length prefix
        assert_eq!(put.sent, (6 + 26) + (6 + 28));
        assert_eq!(put.received, 2 * (6 + 26));
        let get = c.traffic.of("kvs-get");
        assert_eq!((get.requests, get.received), (1, 6 + 47));
        assert_eq!(c.traffic.of("kvs-fence"), Count::default());
        assert_eq!(c.traffic.of("fullinit").requests, 1);
        drop(c);
        t.join().unwrap();
    }
}
