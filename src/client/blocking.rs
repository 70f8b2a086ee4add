//! A blocking driver for the client core: one TCP socket, read timeouts,
//! no threads. It sends what an operation of [`super::ops`] asks, waits
//! for the reply and hands it back; event notices that arrive while it
//! waits are queued and handed out by [`Client::next_event`]. Its
//! operations are generated from the same table as [`super::AsyncClient`]'s.

#![forbid(unsafe_code)]

use super::core::{parse_uri, read_as, ClientEnv, ClientError, Core, Event, Result};
use super::ops::{self, Operation, Start};
use super::options::{
    FenceOpts, GetOpts, GroupOpts, JobControl, LookupOpts, Publish, Queries, Spawn,
};
use super::{euid_egid, tool_info};
use pmix_codec::msg::{EventNotice, IofData, Reply, Request};
use pmix_types::enums::{AllocDirective, DataRange, Scope};
use pmix_types::keys::typed;
use pmix_types::status::StatusCode;
use pmix_types::Rank;
use pmix_types::{Info, Pdata, Proc, TypeMismatch, Value};
use std::collections::VecDeque;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Default time to wait for any reply.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// A connected PMIx client (PMIx_Init … PMIx_Finalize).
pub struct Client {
    core: Core,
    sock: TcpStream,
    notices: VecDeque<EventNotice>,
    /// Forwarded output (tag 2) received meanwhile ([`Client::take_outputs`]).
    outputs: VecDeque<IofData>,
    /// How long a call waits for the server's answer.
    pub timeout: Duration,
    finalized: bool,
}

/// The operations of the table, each `self.run(op)`.
macro_rules! blocking {
    ($( $(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),*) -> $out:ty = $op:expr; )*) => {
        impl Client {
            $(
                $(#[$doc])*
                pub fn $name(&mut self, $($arg: $ty),*) -> Result<$out> {
                    self.run($op)
                }
            )*
        }
    };
}
ops::operations!(blocking);

impl Client {
    /// PMIx_Init from this process's environment.
    pub fn init() -> Result<Client> {
        Self::init_with(ClientEnv::from_env(|k| std::env::var(k).ok())?)
    }

    /// PMIx_Init with an explicit environment.
    pub fn init_with(env: ClientEnv) -> Result<Client> {
        let (u, g) = euid_egid();
        let uri = env.uri.clone();
        Self::start(Core::new(env, u, g)?, &uri)
    }

    /// PMIx_tool_init against the server at `uri` speaking `format`
    /// (the server assigns our identity).
    pub fn tool_connect(uri: &str, format: pmix_codec::Format) -> Result<Client> {
        let (u, g) = euid_egid();
        Self::start(Core::new_tool(uri.into(), format, u, g, tool_info())?, uri)
    }

    /// As [`Client::tool_connect`], bringing our identity `me` (a tool
    /// attaching to a further server: PMIx_tool_attach_to_server).
    pub fn tool_connect_as(uri: &str, format: pmix_codec::Format, me: &Proc) -> Result<Client> {
        let (u, g) = euid_egid();
        let core = Core::new_tool_with_id(uri.into(), format, u, g, tool_info(), me.clone())?;
        Self::start(core, uri)
    }

    /// The server's identity, as its handshake reply gave it (a tool's
    /// connection; None for a client's).
    pub fn server(&self) -> Option<&Proc> {
        self.core.server.as_ref()
    }

    /// The URI this client connected to.
    pub fn uri(&self) -> &str {
        &self.core.env.uri
    }

    fn start(core: Core, uri: &str) -> Result<Client> {
        let (_, host, port) = parse_uri(uri)?;
        let sock = TcpStream::connect((host.as_str(), port))?;
        sock.set_nodelay(true).ok();
        let mut c = Client {
            core,
            sock,
            notices: VecDeque::new(),
            outputs: VecDeque::new(),
            timeout: DEFAULT_TIMEOUT,
            finalized: false,
        };
        c.flush()?;
        c.wait("handshake", |e| match e {
            Event::Connected { .. } => Ok(()),
            e => Err(e),
        })?;
        c.run(ops::job_info())?;
        Ok(c)
    }

    /// Our identity.
    pub fn proc(&self) -> &Proc {
        &self.core.env.proc
    }

    /// Our rank.
    pub fn rank(&self) -> Rank {
        self.core.env.proc.rank()
    }

    /// Our namespace's job (rank WILDCARD): where job-level data lives.
    pub fn job(&self) -> Proc {
        self.core.env.proc.job()
    }

    /// The sans-IO core (its caches, its format).
    pub fn core(&self) -> &Core {
        &self.core
    }

    fn flush(&mut self) -> Result<()> {
        let out = self.core.poll_transmit().unwrap_or_default();
        if !out.is_empty() {
            self.sock.write_all(&out)?;
        }
        Ok(())
    }

    fn send(&mut self, req: &Request, op: &'static str) -> Result<u32> {
        let tag = self.core.send(req)?;
        self.flush()?;
        tag.ok_or(ClientError::Unanswered { op })
    }

    /// Read until `pick` takes an event (it gives back those it does not
    /// take; notices are queued meanwhile).
    fn wait<T>(
        &mut self,
        op: &'static str,
        mut pick: impl FnMut(Event) -> std::result::Result<T, Event>,
    ) -> Result<T> {
        let deadline = Instant::now() + self.timeout;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            while let Some(e) = self.core.poll_event() {
                match pick(e) {
                    Ok(t) => return Ok(t),
                    Err(Event::Notice(n)) => self.notices.push_back(n),
                    Err(Event::Output(d)) => self.outputs.push_back(d),
                    Err(_) => {}
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(ClientError::Timeout(op));
            }
            self.sock.set_read_timeout(Some(left))?;
            let n = match self.sock.read(&mut buf) {
                Ok(0) => return Err(ClientError::Closed { op }),
                Ok(n) => n,
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    return Err(ClientError::Timeout(op))
                }
                Err(e) => return Err(e.into()),
            };
            self.core.handle_input(&buf[..n], Instant::now())?;
        }
    }

    /// Send any request and wait for its reply (for the commands without
    /// an operation of their own).
    pub fn request(&mut self, req: &Request, op: &'static str) -> Result<Reply> {
        let tag = self.send(req, op)?;
        self.wait(op, |e| match e {
            Event::Reply { tag: t, reply } if t == tag => Ok(reply),
            e => Err(e),
        })
    }

    /// Run one operation of [`super::ops`]: what the core answers at once,
    /// else its request, the wait, and its reply read.
    pub fn run<O: Operation>(&mut self, mut op: O) -> Result<O::Output> {
        match op.start(&mut self.core)? {
            Start::Done(out) => Ok(out),
            Start::Ask(req) => {
                let r = self.request(&req, op.name())?;
                op.finish(&mut self.core, r)
            }
        }
    }

    /// PMIx_Heartbeat (PMIx_Process_monitor with PMIX_SEND_HEARTBEAT): one
    /// heartbeat to a server that monitors this process; no reply.
    pub fn heartbeat(&mut self) -> Result<()> {
        self.core.heartbeat()?;
        self.flush()
    }

    /// PMIx_Put: `c.put(Scope::GLOBAL, "my.key", 7u32)`.
    pub fn put(&mut self, scope: Scope, key: &str, value: impl Into<Value>) {
        self.core.put(scope, key, value.into())
    }

    /// PMIx_Get: local cache first (job info, our own puts, earlier fetches),
    /// then a GETNB round trip unless `immediate` says not to. A reserved
    /// (`pmix`…) key of our own job is resolved from the job data received
    /// at init alone, PMIX_ERR_NOT_FOUND at once when absent (the PMIx_Get
    /// RFC; libpmix 4.2.2's client does the same); other keys, and reserved
    /// keys of other namespaces, go to the server as before.
    ///
    /// The value is read as `T` (any type with `TryFrom<Value>`, `Value`
    /// itself included): `let n: u32 = c.get(&peer, "my.key")?`.
    pub fn get<T>(&mut self, proc: &Proc, key: &str) -> Result<T>
    where
        T: TryFrom<Value>,
        TypeMismatch: From<T::Error>,
    {
        self.get_with(proc, key, GetOpts::new())
    }

    /// [`Client::get`] with options: `c.get_with::<u32>(&p, k,
    /// GetOpts::new().immediate(true))`.
    pub fn get_with<T>(&mut self, proc: &Proc, key: &str, opts: GetOpts) -> Result<T>
    where
        T: TryFrom<Value>,
        TypeMismatch: From<T::Error>,
    {
        read_as(key, self.run(ops::get(proc, key, &opts))?)
    }

    /// A reserved key, typed: `c.get_key(typed::JOB_SIZE)` is a `u32`.
    /// Proc- and node-level keys are asked of our own process (our node:
    /// the one it runs on), session-, job- and app-level keys of our job
    /// (rank WILDCARD).
    pub fn get_key<T>(&mut self, key: typed::Key<T>) -> Result<T>
    where
        T: TryFrom<Value>,
        TypeMismatch: From<T::Error>,
    {
        read_as(key.string(), self.run(ops::get_key(key))?)
    }

    /// A reserved key of another process (or job), typed.
    pub fn get_key_of<T>(&mut self, proc: &Proc, key: typed::Key<T>) -> Result<T>
    where
        T: TryFrom<Value>,
        TypeMismatch: From<T::Error>,
    {
        self.get(proc, key.string())
    }

    /// The next event notice whose status is in `codes` (any if empty),
    /// waiting up to `timeout`; other notices stay queued.
    pub fn next_event(&mut self, codes: &[i32], timeout: Duration) -> Result<EventNotice> {
        if let Some(i) = self.notices.iter().position(|n| ops::wanted(codes, n)) {
            if let Some(n) = self.notices.remove(i) {
                return Ok(n);
            }
        }
        let saved = self.timeout;
        self.timeout = timeout;
        let r = self.wait("event", |e| match e {
            Event::Notice(n) if ops::wanted(codes, &n) => Ok(n),
            e => Err(e),
        });
        self.timeout = saved;
        r
    }

    /// The forwarded output received so far, in order (for our pulls:
    /// [`Client::iof_pull`]); it arrives while the client waits for
    /// anything ([`Client::next_event`] included).
    pub fn take_outputs(&mut self) -> Vec<IofData> {
        self.outputs.drain(..).collect()
    }

    /// PMIx_Finalize.
    pub fn finalize(mut self) -> Result<()> {
        self.finalized = true;
        self.run(ops::finalize())
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        if !self.finalized {
            let _ = self.sock.shutdown(std::net::Shutdown::Both);
        }
    }
}
