//! An async driver for the client core on tokio: one TCP stream, no
//! thread of its own, deadlines from the core ([`Core::poll_timeout`]).
//! For hosts that already run tokio; [`super::Client`] is the blocking
//! driver of the same core. It sends what an operation of [`super::ops`]
//! asks, waits for the reply and hands it back; its operations are
//! generated from the same table as the blocking driver's, so a tokio
//! program has every call a blocking one has.
//!
//! ```no_run
//! use pmix_types::enums::Scope;
//! use pmix_types::Proc;
//! use pmix_wire::client::{AsyncClient, FenceOpts};
//! # async fn run() -> pmix_wire::client::core::Result<()> {
//! let mut c = AsyncClient::init().await?; // PMIX_NAMESPACE, PMIX_RANK, PMIX_SERVER_URI* …
//! c.put(Scope::GLOBAL, "my.key", c.proc().rank);
//! c.commit().await?;
//! c.fence(FenceOpts::new().collect_data(true)).await?;
//! let peer = Proc { nspace: c.proc().nspace.clone(), rank: 0 };
//! let v: u32 = c.get(&peer, "my.key").await?;
//! let here = c.resolve_peers(&c.proc().nspace.to_string()).await?; // PMIx_Resolve_peers
//! assert!(here.contains(c.proc()));
//! c.finalize().await?;
//! # Ok(()) }
//! ```

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
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A connected PMIx client driven by tokio.
pub struct AsyncClient {
    core: Core,
    sock: TcpStream,
    buf: Vec<u8>,
    notices: VecDeque<EventNotice>,
    /// Forwarded output (tag 2) received meanwhile ([`AsyncClient::take_outputs`]).
    outputs: VecDeque<IofData>,
    /// How long each request may wait for its reply.
    pub timeout: Duration,
}

/// The operations of the table, each `self.run(op).await`.
macro_rules! asynchronous {
    ($( $(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),*) -> $out:ty = $op:expr; )*) => {
        impl AsyncClient {
            $(
                $(#[$doc])*
                pub async fn $name(&mut self, $($arg: $ty),*) -> Result<$out> {
                    self.run($op).await
                }
            )*
        }
    };
}
ops::operations!(asynchronous);

impl AsyncClient {
    /// PMIx_Init from this process's environment.
    pub async fn init() -> Result<AsyncClient> {
        Self::init_with(ClientEnv::from_env(|k| std::env::var(k).ok())?).await
    }

    /// PMIx_Init with an explicit environment: connect, handshake, job
    /// info.
    pub async fn init_with(env: ClientEnv) -> Result<AsyncClient> {
        let (u, g) = euid_egid();
        let uri = env.uri.clone();
        Self::start(Core::new(env, u, g)?, &uri).await
    }

    /// PMIx_tool_init against the server at `uri` speaking `format`
    /// (the server assigns our identity).
    pub async fn tool_connect(uri: &str, format: pmix_codec::Format) -> Result<AsyncClient> {
        let (u, g) = euid_egid();
        Self::start(Core::new_tool(uri.into(), format, u, g, tool_info())?, uri).await
    }

    /// As [`AsyncClient::tool_connect`], bringing our identity `me` (a
    /// tool attaching to a further server: PMIx_tool_attach_to_server).
    pub async fn tool_connect_as(
        uri: &str,
        format: pmix_codec::Format,
        me: &Proc,
    ) -> Result<AsyncClient> {
        let (u, g) = euid_egid();
        let core = Core::new_tool_with_id(uri.into(), format, u, g, tool_info(), me.clone())?;
        Self::start(core, uri).await
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

    async fn start(mut core: Core, uri: &str) -> Result<AsyncClient> {
        let (_, host, port) = parse_uri(uri)?;
        let timeout = super::blocking::DEFAULT_TIMEOUT;
        core.set_handshake_deadline(Instant::now() + timeout);
        let sock = TcpStream::connect((host.as_str(), port)).await?;
        sock.set_nodelay(true).ok();
        let mut c = AsyncClient {
            core,
            sock,
            buf: vec![0u8; 64 * 1024],
            notices: VecDeque::new(),
            outputs: VecDeque::new(),
            timeout,
        };
        c.wait("handshake", |e| match e {
            Event::Connected { .. } => Ok(()),
            e => Err(e),
        })
        .await?;
        c.run(ops::job_info()).await?;
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

    /// Write what the core queued, then read until `pick` takes an event
    /// (it gives back those it does not take) or a deadline of the core
    /// passes (notices are kept meanwhile).
    async fn wait<T>(
        &mut self,
        op: &'static str,
        mut pick: impl FnMut(Event) -> std::result::Result<T, Event>,
    ) -> Result<T> {
        loop {
            while let Some(b) = self.core.poll_transmit() {
                self.sock.write_all(&b).await?;
            }
            while let Some(e) = self.core.poll_event() {
                match pick(e) {
                    Ok(t) => return Ok(t),
                    Err(Event::Notice(n)) => self.notices.push_back(n),
                    Err(Event::Output(d)) => self.outputs.push_back(d),
                    Err(Event::TimedOut { .. }) => return Err(ClientError::Timeout(op)),
                    Err(_) => {}
                }
            }
            let deadline = self.core.poll_timeout();
            let sleep = async {
                match deadline {
                    Some(d) => tokio::time::sleep_until(d.into()).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                n = self.sock.read(&mut self.buf) => match n? {
                    0 => return Err(ClientError::Closed { op }),
                    n => self.core.handle_input(&self.buf[..n], Instant::now())?,
                },
                () = sleep => self.core.handle_timeout(Instant::now()),
            }
        }
    }

    /// PMIx_Heartbeat (PMIx_Process_monitor with PMIX_SEND_HEARTBEAT): one
    /// heartbeat to a server that monitors this process; no reply.
    pub async fn heartbeat(&mut self) -> Result<()> {
        self.core.heartbeat()?;
        while let Some(b) = self.core.poll_transmit() {
            self.sock.write_all(&b).await?;
        }
        Ok(())
    }

    /// Send any request and wait for its reply, within [`Self::timeout`]
    /// (for the commands without an operation of their own).
    pub async fn request(&mut self, req: &Request, op: &'static str) -> Result<Reply> {
        let by = Instant::now() + self.timeout;
        let tag = self
            .core
            .send_by(req, by)?
            .ok_or(ClientError::Unanswered { op })?;
        self.wait(op, |e| match e {
            Event::Reply { tag: t, reply } if t == tag => Ok(reply),
            e => Err(e),
        })
        .await
    }

    /// Run one operation of [`super::ops`]: what the core answers at once,
    /// else its request, the wait, and its reply read.
    pub async fn run<O: Operation>(&mut self, mut op: O) -> Result<O::Output> {
        match op.start(&mut self.core)? {
            Start::Done(out) => Ok(out),
            Start::Ask(req) => {
                let r = self.request(&req, op.name()).await?;
                op.finish(&mut self.core, r)
            }
        }
    }

    /// PMIx_Put: `c.put(Scope::GLOBAL, "my.key", 7u32)`.
    pub fn put(&mut self, scope: Scope, key: &str, value: impl Into<Value>) {
        self.core.put(scope, key, value.into())
    }

    /// PMIx_Get, read as `T` (`Value` itself included), as
    /// [`super::Client::get`]: what the core holds, else a GET round trip.
    pub async fn get<T>(&mut self, proc: &Proc, key: &str) -> Result<T>
    where
        T: TryFrom<Value>,
        TypeMismatch: From<T::Error>,
    {
        self.get_with(proc, key, GetOpts::new()).await
    }

    /// [`AsyncClient::get`] with options, as [`super::Client::get_with`].
    pub async fn get_with<T>(&mut self, proc: &Proc, key: &str, opts: GetOpts) -> Result<T>
    where
        T: TryFrom<Value>,
        TypeMismatch: From<T::Error>,
    {
        read_as(key, self.run(ops::get(proc, key, &opts)).await?)
    }

    /// A reserved key, typed, as [`super::Client::get_key`].
    pub async fn get_key<T>(&mut self, key: typed::Key<T>) -> Result<T>
    where
        T: TryFrom<Value>,
        TypeMismatch: From<T::Error>,
    {
        read_as(key.string(), self.run(ops::get_key(key)).await?)
    }

    /// A reserved key of another process (or job), typed.
    pub async fn get_key_of<T>(&mut self, proc: &Proc, key: typed::Key<T>) -> Result<T>
    where
        T: TryFrom<Value>,
        TypeMismatch: From<T::Error>,
    {
        self.get(proc, key.string()).await
    }

    /// The next event notice whose status is in `codes` (any if empty),
    /// waiting up to `timeout`; other notices stay queued.
    pub async fn next_event(&mut self, codes: &[i32], timeout: Duration) -> Result<EventNotice> {
        if let Some(i) = self.notices.iter().position(|n| ops::wanted(codes, n)) {
            if let Some(n) = self.notices.remove(i) {
                return Ok(n);
            }
        }
        let wait = self.wait("event", |e| match e {
            Event::Notice(n) if ops::wanted(codes, &n) => Ok(n),
            e => Err(e),
        });
        match tokio::time::timeout(timeout, wait).await {
            Ok(r) => r,
            Err(_) => Err(ClientError::Timeout("event")),
        }
    }

    /// The forwarded output received so far, in order (for our pulls:
    /// [`AsyncClient::iof_pull`]).
    pub fn take_outputs(&mut self) -> Vec<IofData> {
        self.outputs.drain(..).collect()
    }

    /// PMIx_Finalize.
    pub async fn finalize(mut self) -> Result<()> {
        self.run(ops::finalize()).await
    }
}
