//! An async driver for the client core on tokio: one TCP stream, no
//! thread of its own, deadlines from the core ([`Core::poll_timeout`]).
//! For hosts that already run tokio; [`super::Client`] is the blocking
//! driver of the same core.
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
//! c.finalize().await?;
//! # Ok(()) }
//! ```

use super::blocking::euid_egid;
use super::core::{parse_uri, read_as, status_reply, ClientEnv, ClientError, Core, Event, Result};
use super::options::{FenceOpts, GetOpts};
use pmix_codec::msg::{EventNotice, Reply, Request};
use pmix_types::enums::Scope;
use pmix_types::{Proc, TypeMismatch, Value};
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
    /// How long each request may wait for its reply.
    pub timeout: Duration,
}

impl AsyncClient {
    /// PMIx_Init from this process's environment.
    pub async fn init() -> Result<AsyncClient> {
        Self::connect(ClientEnv::from_env(|k| std::env::var(k).ok())?).await
    }

    /// PMIx_Init with an explicit environment: connect, handshake, job
    /// info.
    pub async fn connect(env: ClientEnv) -> Result<AsyncClient> {
        let (u, g) = euid_egid();
        let (_, host, port) = parse_uri(&env.uri)?;
        let mut core = Core::new(env, u, g)?;
        let timeout = super::blocking::DEFAULT_TIMEOUT;
        core.set_handshake_deadline(Instant::now() + timeout);
        let sock = TcpStream::connect((host.as_str(), port)).await?;
        sock.set_nodelay(true).ok();
        let mut c = AsyncClient {
            core,
            sock,
            buf: vec![0u8; 64 * 1024],
            notices: VecDeque::new(),
            timeout,
        };
        c.wait(|e| matches!(e, Event::Connected { .. }), "handshake")
            .await?;
        // the core refuses a job-info reply that is a bare status
        c.request(&Request::Req, "job info").await?;
        Ok(c)
    }

    /// Our identity.
    pub fn proc(&self) -> &Proc {
        &self.core.env.proc
    }

    /// The sans-IO core (its caches, its format).
    pub fn core(&self) -> &Core {
        &self.core
    }

    /// Write what the core queued, then read until `want` matches an event
    /// or a deadline of the core passes (notices are kept meanwhile).
    async fn wait(
        &mut self,
        mut want: impl FnMut(&Event) -> bool,
        op: &'static str,
    ) -> Result<Event> {
        loop {
            while let Some(b) = self.core.poll_transmit() {
                self.sock.write_all(&b).await?;
            }
            while let Some(e) = self.core.poll_event() {
                if want(&e) {
                    return Ok(e);
                }
                match e {
                    Event::Notice(n) => self.notices.push_back(n),
                    Event::TimedOut { .. } => return Err(ClientError::Timeout(op)),
                    _ => {}
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
                    0 => {
                        return Err(ClientError::Protocol(format!(
                            "{op}: the server closed the connection"
                        )))
                    }
                    n => self.core.handle_input(&self.buf[..n], Instant::now())?,
                },
                () = sleep => self.core.handle_timeout(Instant::now()),
            }
        }
    }

    /// Send any request and wait for its reply, within [`Self::timeout`].
    pub async fn request(&mut self, req: &Request, op: &'static str) -> Result<Reply> {
        let by = Instant::now() + self.timeout;
        let tag = self
            .core
            .send_by(req, by)?
            .ok_or_else(|| ClientError::Protocol("request without reply".into()))?;
        match self
            .wait(
                |e| matches!(e, Event::Reply { tag: t, .. } if *t == tag),
                op,
            )
            .await?
        {
            Event::Reply { reply, .. } => Ok(reply),
            _ => Err(ClientError::Protocol(format!("{op}: no reply"))),
        }
    }

    /// PMIx_Put.
    pub fn put(&mut self, scope: Scope, key: &str, value: impl Into<Value>) {
        self.core.put(scope, key, value.into())
    }

    /// PMIx_Commit.
    pub async fn commit(&mut self) -> Result<()> {
        let req = self.core.commit_request()?;
        let r = self.request(&req, "commit").await?;
        status_reply("commit", &r)
    }

    /// PMIx_Fence, as [`super::Client::fence`] (no procs given: our whole
    /// namespace).
    pub async fn fence(&mut self, opts: FenceOpts) -> Result<()> {
        let info = opts.to_info();
        let req = self.core.fence_request(opts.procs, info);
        match self.request(&req, "fence").await? {
            Reply::Raw(_) | Reply::Get { status: 0, .. } => Ok(()),
            r => status_reply("fence", &r),
        }
    }

    /// PMIx_Get, read as `T` (`Value` itself included): what the core
    /// holds, else a GET round trip.
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
        let v = self.get_value(proc, key, &opts).await?;
        read_as(key, v)
    }

    async fn get_value(&mut self, proc: &Proc, key: &str, opts: &GetOpts) -> Result<Value> {
        match self.core.plan_get(proc, key, &opts.to_info()).settled() {
            Ok(answer) => answer,
            Err(req) => {
                let r = self.request(&req, "get").await?;
                self.core.absorb_get(proc, key, r)
            }
        }
    }

    /// The next event notice (PMIx_Register_event_handler's deliveries),
    /// waiting at most `timeout`.
    pub async fn next_notice(&mut self, timeout: Duration) -> Result<EventNotice> {
        if let Some(n) = self.notices.pop_front() {
            return Ok(n);
        }
        let wait = self.wait(|e| matches!(e, Event::Notice(_)), "event");
        match tokio::time::timeout(timeout, wait).await {
            Ok(Ok(Event::Notice(n))) => Ok(n),
            Ok(Ok(_)) => Err(ClientError::Protocol("event: not a notice".into())),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(ClientError::Timeout("event")),
        }
    }

    /// PMIx_Finalize.
    pub async fn finalize(mut self) -> Result<()> {
        let r = self.request(&Request::Finalize, "finalize").await?;
        status_reply("finalize", &r)
    }
}
