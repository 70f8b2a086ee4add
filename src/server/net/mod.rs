//! The thin I/O driver of the server core: loopback TCP (as libpmix 4.x
//! clients expect) on one event loop (mio: epoll on Linux) on a thread of
//! its own, named `pmixw-server`. The loop owns the [`Server`], the
//! listener and every connection: a readable socket is read into the
//! loop's one buffer and handed to the core at once (no task, channel or
//! copy in between; a peer gets at most `READ_TURN` bytes a turn, so a
//! fast one does not starve the others); the replies the core queued are
//! written in one `writev` per peer per turn; replies queued for a peer
//! are counted in bytes, and a peer past [`Limits::max_queued_bytes`] is
//! dropped alone. Nothing wakes the loop but a socket, the host, or the
//! core's own next deadline.
//!
//! [`start`] and [`start_with`] give a blocking handle; hosts that run
//! tokio take [`spawn`]'s async handle to the same loop.

pub mod dstore;
pub mod peercred;
pub mod rendezvous;

use super::limits::{Limits, Refusal};
use super::{ConnId, HostEvent, JobSpec, PeerInfo, Server, Transmit};
use bytes::Bytes;
use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token, Waker};
use peercred::{ProcVerify, TcpTable};
use pmix_types::Rank;
use std::collections::{HashMap, VecDeque};
use std::io::{ErrorKind, IoSlice, Read, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// Kept for hosts that used it: replies are now bounded in bytes
/// ([`Limits::max_queued_bytes`]).
pub const MAX_QUEUED_REPLIES: usize = 4096;

/// One read takes at most this much.
const READ_CHUNK: usize = 16 << 10;
/// A peer told to close gets this long to take its last bytes.
const CLOSE_GRACE: Duration = Duration::from_secs(5);

/// The nspace part of our URI; the rank part is the server's pid.
pub const SERVER_NSPACE: &str = "pmixw-server";

/// This node's name as tools compute it (gethostname).
pub use crate::procfs::hostname;

fn ids() -> (u32, u32) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(2))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("Uid:"), field("Gid:"))
}

/// `ctime()`'s form of now, in UTC ("Sun Nov 22 10:24:56 2026").
fn ctime_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    pmix_types::cfmt::ctime_utc(secs)
}

/// Write the rendezvous files `pmix.<host>.tool.<pid>` and
/// `pmix.<host>.tool.<nspace>` of the first job (tools attach by pid or by
/// the job's namespace); content as libpmix writes it (protocol.md §1.4).
/// Stale files of dead pmix-wire servers are cleared first.
fn write_rendezvous(dir: &Path, uri: &str, nspace: Option<&str>) -> std::io::Result<Vec<PathBuf>> {
    let host = hostname();
    let (uid, gid) = ids();
    let pid = std::process::id();
    let text = format!("{uri}\n4.2.2\n{pid}\n{uid}:{gid}\n{}\n\n", ctime_now());
    rendezvous::remove_stale(dir, &host);
    let mut names = vec![format!("pmix.{host}.tool.{pid}")];
    names.extend(nspace.map(|n| format!("pmix.{host}.tool.{n}")));
    rendezvous::write(dir, &names, &text)
}

type CoreCall = Box<dyn FnOnce(&mut Server) + Send>;

/// What the host hands the loop.
enum Input {
    Stop,
    /// Run this on the core (the host acting on the server).
    Call(CoreCall),
}

/// `f` as a call for the loop; `done` takes its result.
fn boxed_call<R: Send + 'static>(
    f: impl FnOnce(&mut Server) -> R + Send + 'static,
    done: impl FnOnce(R) + Send + 'static,
) -> CoreCall {
    Box::new(move |s: &mut Server| done(f(s)))
}

/// The host's side of the loop: calls queue here, and the waker makes the
/// loop look at them.
#[derive(Clone)]
struct Inbox {
    tx: std::sync::mpsc::Sender<Input>,
    waker: Arc<Waker>,
}

impl Inbox {
    fn send(&self, i: Input) -> bool {
        self.tx.send(i).is_ok() && self.waker.wake().is_ok()
    }
}

/// Where host events go.
enum Sink {
    Std(std::sync::mpsc::Sender<HostEvent>),
    Tokio(tokio::sync::mpsc::UnboundedSender<HostEvent>),
}

impl Sink {
    fn send(&self, e: HostEvent) {
        let _ = match self {
            Sink::Std(s) => s.send(e).map_err(|_| ()),
            Sink::Tokio(s) => s.send(e).map_err(|_| ()),
        };
    }
}

/// Called on the server's thread each time it has queued host events
/// ([`Running::events`]), once for the events it queued together: a host whose
/// loop sleeps until it has work ([`Options::on_event`]) wakes on it
/// instead of polling the channel.
#[derive(Clone)]
pub struct EventHook(Arc<dyn Fn() + Send + Sync>);

impl EventHook {
    /// A hook running `f`. It runs on the server's thread while the loop
    /// waits for it: it should only wake something (a write to a pipe).
    pub fn new(f: impl Fn() + Send + Sync + 'static) -> EventHook {
        EventHook(Arc::new(f))
    }
}

impl std::fmt::Debug for EventHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EventHook")
    }
}

/// How to start a server.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Write the rendezvous files tools look for in this directory.
    pub rendezvous: Option<PathBuf>,
    /// Limits on peers.
    pub limits: Limits,
    /// Offer libpmix 4.2.x clients a ds21 shared-memory store
    /// (spec-notes/dstore.md) in a session directory made under this one;
    /// removed when the server stops. Where it cannot be made (not glibc
    /// on 64-bit Linux, `SM_USE_LINEAR_SEARCH` set, an I/O error) the
    /// server runs without it and says why.
    pub dstore: Option<PathBuf>,
    /// Run after the server has queued host events ([`EventHook`]).
    pub on_event: Option<EventHook>,
}

/// What both APIs share: the URI, the ranks' environments, the files.
struct Prepared {
    uri: String,
    envs: Envs,
    files: Vec<PathBuf>,
    server: Server,
    listener: std::net::TcpListener,
}

fn prepare(jobs: Vec<JobSpec>, opts: &Options) -> std::io::Result<Prepared> {
    let listener = listen_loopback()?;
    let port = listener.local_addr()?.port();
    let pid = std::process::id();
    let uri = format!("{SERVER_NSPACE}.{pid};tcp4://127.0.0.1:{port}");
    let mut server = Server::new();
    server.set_identity(SERVER_NSPACE, pid);
    server.set_limits(pending_for(&opts.limits, &jobs));
    server.set_verifier(Box::new(ProcVerify));
    if let Some(base) = &opts.dstore {
        install_dstore(&mut server, base);
    }
    let files = match &opts.rendezvous {
        Some(dir) => write_rendezvous(dir, &uri, jobs.first().map(|j| j.nspace.as_str()))?,
        None => Vec::new(),
    };
    let mut envs = Envs::default();
    for j in jobs {
        server.register_nspace(j.clone());
        envs.0.insert(
            j.nspace.clone(),
            (j.nprocs, server.client_env(&j.nspace, 0u32, &uri)),
        );
    }
    Ok(Prepared {
        uri,
        envs,
        files,
        server,
        listener,
    })
}

#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
fn install_dstore(server: &mut Server, base: &std::path::Path) {
    match dstore::Session::create(base) {
        Ok(s) => {
            tracing::info!("dstore: ds21 store in {}", s.dir().display());
            server.set_shared_store(Box::new(s));
        }
        Err(e) => tracing::warn!("dstore: not offered: {e}"),
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64")))]
fn install_dstore(_: &mut Server, _: &std::path::Path) {
    tracing::warn!("dstore: not offered: needs glibc on 64-bit Linux");
}

/// The limits a server for `jobs` applies: as given, except that the cap on
/// pending handshakes is at least the number of ranks registered at start,
/// so that a job's own ranks connecting all at once (10 000 simulated
/// clients of `benches/server_load.rs`: 5 904 were refused with the cap at
/// 4 096) are never refused; an attacker still gets at most that many.
fn pending_for(limits: &Limits, jobs: &[JobSpec]) -> Limits {
    let ranks: usize = jobs.iter().map(|j| j.nprocs as usize).sum();
    Limits {
        max_pending_handshakes: limits.max_pending_handshakes.max(ranks),
        ..limits.clone()
    }
}

/// Pending connections the kernel holds for us before we accept them.
const BACKLOG: i32 = 4096;

/// A non-blocking listener on a loopback port of the system's choosing.
fn listen_loopback() -> std::io::Result<std::net::TcpListener> {
    use socket2::{Domain, Socket, Type};
    let s = Socket::new(Domain::IPV4, Type::STREAM, None)?;
    let addr: SocketAddr = ([127, 0, 0, 1], 0).into();
    s.bind(&addr.into())?;
    // on Linux an accepted socket inherits TCP_NODELAY from its listener
    // (`accepted_sockets_inherit_nodelay`): one setsockopt per connection
    // saved
    s.set_tcp_nodelay(true)?;
    s.listen(BACKLOG)?;
    s.set_nonblocking(true)?;
    Ok(s.into())
}

/// The environment of every rank of the jobs a server started with: one
/// per namespace (its size, rank 0's), as [`Server::client_env`] differs
/// from rank to rank in `PMIX_RANK` alone; a rank's is made when it is
/// asked for (a node of a job across nodes starts its own ranks only,
/// where one for every rank of the job was N allocations a node).
#[derive(Default)]
struct Envs(HashMap<String, (u32, Vec<(String, String)>)>);

fn env_of(envs: &Envs, nspace: &str, rank: u32) -> Vec<(String, String)> {
    let Some((_, env)) = envs.0.get(nspace).filter(|(n, _)| rank < *n) else {
        return Vec::new();
    };
    env.iter()
        .map(|(k, v)| match k.as_str() {
            "PMIX_RANK" => (k.clone(), rank.to_string()),
            _ => (k.clone(), v.clone()),
        })
        .collect()
}

fn remove_files(files: &mut Vec<PathBuf>) {
    for f in files.drain(..) {
        let _ = std::fs::remove_file(f);
    }
}

/// Posts calls to a running server's core from any thread
/// ([`Running::poster`]); posting after the server stopped does nothing.
#[derive(Clone)]
pub struct Poster {
    inbox: Inbox,
}

impl Poster {
    /// Run `f` on the server core without waiting for it, in order with
    /// the other posts.
    pub fn post(&self, f: impl FnOnce(&mut Server) + Send + 'static) {
        self.inbox.send(Input::Call(Box::new(f)));
    }
}

/// A running server (blocking API: its loop runs on a thread of its own).
/// Its methods block, so call them from outside any tokio runtime; a host
/// running tokio uses [`spawn`] and [`AsyncRunning`] instead.
pub struct Running {
    /// The rendezvous URI clients are given (`<nspace>.<rank>;tcp4://...`).
    pub uri: String,
    /// Upcalls to the host, in order.
    pub events: std::sync::mpsc::Receiver<HostEvent>,
    envs: Envs,
    inbox: Inbox,
    core: Option<thread::JoinHandle<()>>,
    files: Vec<PathBuf>,
}

impl Running {
    /// The environment of one rank (see [`Server::client_env`]).
    pub fn client_env(&self, nspace: &str, rank: impl Into<Rank>) -> Vec<(String, String)> {
        env_of(&self.envs, nspace, rank.into().wire())
    }

    /// Run `f` on the server core and return its result: how the host
    /// registers namespaces and answers upcalls while the server runs.
    pub fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Server) -> R + Send + 'static,
    ) -> Option<R> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let job = boxed_call(f, move |r| {
            let _ = tx.send(r);
        });
        if !self.inbox.send(Input::Call(job)) {
            return None;
        }
        rx.recv().ok()
    }

    /// Run `f` on the server core without waiting for it to have run: for
    /// the host's notes that need no answer (a launched rank's pid, its
    /// exit). Calls run in the order they were made.
    pub fn post(&self, f: impl FnOnce(&mut Server) + Send + 'static) {
        self.inbox.send(Input::Call(Box::new(f)));
    }

    /// A handle that posts to the server core from any thread (what
    /// [`Running::post`] does), for threads the host runs beside its loop.
    pub fn poster(&self) -> Poster {
        Poster {
            inbox: self.inbox.clone(),
        }
    }

    /// The URI clients and tools connect to.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Stop serving; open connections are closed.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if let Some(h) = self.core.take() {
            self.inbox.send(Input::Stop);
            let _ = h.join();
        }
        remove_files(&mut self.files);
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// A running server for a host that runs tokio ([`spawn`]): the same loop
/// on a thread of its own, with an async handle.
pub struct AsyncRunning {
    /// The rendezvous URI clients are given.
    pub uri: String,
    /// Upcalls to the host, in order.
    pub events: tokio::sync::mpsc::UnboundedReceiver<HostEvent>,
    envs: Envs,
    inbox: Inbox,
    /// Fires when the loop's thread has ended.
    ended: Option<tokio::sync::oneshot::Receiver<()>>,
    files: Vec<PathBuf>,
}

impl AsyncRunning {
    /// The environment of one rank (see [`Server::client_env`]).
    pub fn client_env(&self, nspace: &str, rank: impl Into<Rank>) -> Vec<(String, String)> {
        env_of(&self.envs, nspace, rank.into().wire())
    }

    /// A handle that posts to the server core from any thread (what
    /// [`Running::post`] does), for threads the host runs beside its loop.
    pub fn poster(&self) -> Poster {
        Poster {
            inbox: self.inbox.clone(),
        }
    }

    /// The URI clients and tools connect to.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Run `f` on the server core and return its result.
    pub async fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Server) -> R + Send + 'static,
    ) -> Option<R> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job = boxed_call(f, move |r| {
            let _ = tx.send(r);
        });
        if !self.inbox.send(Input::Call(job)) {
            return None;
        }
        rx.await.ok()
    }

    /// Stop serving; open connections are closed.
    pub async fn stop(mut self) {
        self.inbox.send(Input::Stop);
        if let Some(ended) = self.ended.take() {
            let _ = ended.await;
        }
        remove_files(&mut self.files);
    }
}

impl Drop for AsyncRunning {
    fn drop(&mut self) {
        // the loop stops on its own thread; nothing here blocks
        self.inbox.send(Input::Stop);
        remove_files(&mut self.files);
    }
}

/// Start a server for these jobs on a loopback port of the system's
/// choosing, for a host that runs tokio: the loop runs on a thread of its
/// own (it needs no runtime), the handle's calls and events are async.
pub fn spawn(jobs: Vec<JobSpec>, opts: Options) -> std::io::Result<AsyncRunning> {
    let (etx, erx) = tokio::sync::mpsc::unbounded_channel();
    let (done_tx, done_rx) = tokio::sync::oneshot::channel();
    let (p, inbox, _thread) = launch(jobs, &opts, Sink::Tokio(etx), move || {
        let _ = done_tx.send(());
    })?;
    Ok(AsyncRunning {
        uri: p.0,
        events: erx,
        envs: p.1,
        inbox,
        ended: Some(done_rx),
        files: p.2,
    })
}

/// Start a server for these jobs on a loopback port of the system's choosing.
pub fn start(jobs: Vec<JobSpec>) -> std::io::Result<Running> {
    start_opts(jobs, Options::default())
}

/// As [`start`]; with `rendezvous`, also write the files tools look for
/// (`pmix.<host>.tool.<pid>` and `pmix.<host>.tool.<first job nspace>`) in
/// that directory, removed again when the server stops.
pub fn start_with(jobs: Vec<JobSpec>, rendezvous: Option<PathBuf>) -> std::io::Result<Running> {
    start_opts(
        jobs,
        Options {
            rendezvous,
            ..Options::default()
        },
    )
}

/// As [`start`], with every option.
pub fn start_opts(jobs: Vec<JobSpec>, opts: Options) -> std::io::Result<Running> {
    let (etx, erx) = std::sync::mpsc::channel();
    let (p, inbox, thread) = launch(jobs, &opts, Sink::Std(etx), || {})?;
    Ok(Running {
        uri: p.0,
        events: erx,
        envs: p.1,
        inbox,
        core: Some(thread),
        files: p.2,
    })
}

type Started = ((String, Envs, Vec<PathBuf>), Inbox, thread::JoinHandle<()>);

/// Prepare the server and run its loop on a thread named `pmixw-server`;
/// `ended` runs on that thread once the loop has stopped.
fn launch(
    jobs: Vec<JobSpec>,
    opts: &Options,
    events: Sink,
    ended: impl FnOnce() + Send + 'static,
) -> std::io::Result<Started> {
    let mut p = prepare(jobs, opts)?;
    let built = (|| {
        let poll = Poll::new()?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
        let mut listener = mio::net::TcpListener::from_std(p.listener.try_clone()?);
        poll.registry()
            .register(&mut listener, LISTENER, Interest::READABLE)?;
        Ok::<_, std::io::Error>((poll, waker, listener))
    })();
    let (poll, waker, listener) = match built {
        Ok(b) => b,
        Err(e) => {
            remove_files(&mut p.files);
            return Err(e);
        }
    };
    // the loop owns the listener (the clone); this one closes here
    drop(p.listener);
    let (tx, rx) = std::sync::mpsc::channel();
    let inbox = Inbox { tx, waker };
    let server = p.server;
    let on_event = opts.on_event.clone();
    let spawned = thread::Builder::new()
        .name("pmixw-server".into())
        .spawn(move || {
            Loop::new(server, poll, listener, events, on_event).run(rx);
            ended();
        });
    match spawned {
        Ok(t) => Ok(((p.uri, p.envs, p.files), inbox, t)),
        Err(e) => {
            remove_files(&mut p.files);
            Err(e)
        }
    }
}

/// The listener's token; connections use their [`ConnId`].
const LISTENER: Token = Token(usize::MAX - 1);
/// The host's calls.
const WAKER: Token = Token(usize::MAX);
/// Events taken per poll.
const EVENTS: usize = 1024;

/// A connection as the loop holds it.
struct Peer {
    stream: TcpStream,
    /// Replies not yet written, the first from `offset` on.
    out: VecDeque<Bytes>,
    offset: usize,
    /// Bytes in `out` past `offset`.
    queued: usize,
    /// The core told us to close: after the last bytes, or when its grace
    /// ends (`Loop::closing` holds when).
    closing: bool,
}

/// What a write pass left.
enum Wrote {
    /// Everything queued went (or waits for the socket to drain).
    Ok,
    /// A closing peer's last bytes went: shut down and drop it.
    Finished,
    /// The peer is gone (reset, broken pipe).
    Failed,
}

impl Peer {
    fn new(stream: TcpStream) -> Peer {
        Peer {
            stream,
            out: VecDeque::new(),
            offset: 0,
            queued: 0,
            closing: false,
        }
    }

    /// Write what is queued until the socket takes no more, in as few
    /// calls as possible (several replies in one `writev`).
    fn write_out(&mut self) -> Wrote {
        while !self.out.is_empty() {
            let mut slices = [IoSlice::new(&[]); 16];
            let mut n = 0;
            for (i, b) in self.out.iter().take(slices.len()).enumerate() {
                slices[i] = IoSlice::new(if i == 0 { &b[self.offset..] } else { b });
                n += 1;
            }
            match (&self.stream).write_vectored(&slices[..n]) {
                Ok(0) => return Wrote::Failed,
                Ok(mut w) => {
                    self.queued -= w;
                    while w > 0 {
                        let left = self.out[0].len() - self.offset;
                        if w >= left {
                            w -= left;
                            self.out.pop_front();
                            self.offset = 0;
                        } else {
                            self.offset += w;
                            w = 0;
                        }
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Wrote::Ok,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return Wrote::Failed,
            }
        }
        if self.closing {
            // our last bytes, then FIN, before the socket closes
            let _ = self.stream.shutdown(std::net::Shutdown::Write);
            return Wrote::Finished;
        }
        Wrote::Ok
    }
}

/// The event loop: the core, the listener, the connections, on one
/// thread, with no task, channel or copy between a socket and the core.
struct Loop {
    server: Server,
    poll: Poll,
    listener: mio::net::TcpListener,
    table: Option<TcpTable>,
    peers: HashMap<ConnId, Peer>,
    events: Sink,
    /// Told after the events it queued together ([`Options::on_event`]).
    on_event: Option<EventHook>,
    /// One read buffer for every connection.
    buf: Box<[u8]>,
    /// Peers with replies to write this turn.
    dirty: Vec<ConnId>,
    /// Peers that may hold more bytes than they were given this turn.
    again: Vec<ConnId>,
    /// Accepting failed (out of descriptors, mostly): try again then.
    accept_retry: Option<Instant>,
    /// Peers told to close, by the end of their grace (in order: each is
    /// now + [`CLOSE_GRACE`]); some may be gone already.
    closing: VecDeque<(Instant, ConnId)>,
}

impl Loop {
    fn new(
        server: Server,
        poll: Poll,
        listener: mio::net::TcpListener,
        events: Sink,
        on_event: Option<EventHook>,
    ) -> Loop {
        let table = listener.local_addr().ok().map(TcpTable::new);
        Loop {
            server,
            poll,
            listener,
            table,
            peers: HashMap::new(),
            events,
            on_event,
            buf: vec![0u8; READ_CHUNK].into_boxed_slice(),
            dirty: Vec::new(),
            again: Vec::new(),
            accept_retry: None,
            closing: VecDeque::new(),
        }
    }

    /// When the loop must wake without an event: the core's next deadline,
    /// a retry of accept, a closing peer's grace.
    fn next_deadline(&self) -> Option<Instant> {
        let closing = self.closing.front().map(|c| c.0);
        [self.server.poll_timeout(), self.accept_retry, closing]
            .into_iter()
            .flatten()
            .min()
    }

    fn run(mut self, inbox: std::sync::mpsc::Receiver<Input>) {
        let mut events = Events::with_capacity(EVENTS);
        loop {
            let timeout = if self.again.is_empty() {
                self.next_deadline()
                    .map(|d| d.saturating_duration_since(Instant::now()))
            } else {
                Some(Duration::ZERO)
            };
            if let Err(e) = self.poll.poll(&mut events, timeout) {
                if e.kind() != ErrorKind::Interrupted {
                    tracing::error!(target: "pmix_wire::server", "poll failed: {e}");
                    break;
                }
                continue;
            }
            let again = std::mem::take(&mut self.again);
            for id in again {
                self.read(id);
            }
            for ev in events.iter() {
                match ev.token() {
                    WAKER => {
                        while let Ok(i) = inbox.try_recv() {
                            match i {
                                Input::Call(f) => f(&mut self.server),
                                Input::Stop => return,
                            }
                        }
                    }
                    LISTENER => self.accept(),
                    Token(t) => {
                        let id = t as ConnId;
                        if ev.is_writable() {
                            self.dirty.push(id);
                        }
                        if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                            self.read(id);
                        }
                    }
                }
            }
            let now = Instant::now();
            if self.accept_retry.is_some_and(|t| t <= now) {
                self.accept_retry = None;
                self.accept();
            }
            self.server.handle_timeout(now);
            self.flush();
            self.expire(now);
        }
    }

    /// Accept every pending connection, then look all their owners up in
    /// one sock_diag round and hand them to the core.
    fn accept(&mut self) {
        let mut burst = Vec::new();
        loop {
            match self.listener.accept() {
                Ok(c) => {
                    burst.push(c);
                    if burst.len() == ACCEPT_BURST {
                        self.opened(std::mem::take(&mut burst));
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    // out of descriptors, mostly: wait a little, not spin
                    tracing::warn!(target: "pmix_wire::server", "accept failed: {e}");
                    self.accept_retry = Some(Instant::now() + Duration::from_millis(10));
                    break;
                }
            }
        }
        self.opened(burst);
    }

    fn opened(&mut self, burst: Vec<(TcpStream, SocketAddr)>) {
        if burst.is_empty() {
            return;
        }
        let addrs: Vec<SocketAddr> = burst.iter().map(|c| c.1).collect();
        let infos = match self.table.as_mut() {
            Some(t) => t.lookup_all(&addrs),
            None => vec![PeerInfo::default(); addrs.len()],
        };
        for ((mut stream, addr), info) in burst.into_iter().zip(infos) {
            tracing::debug!(target: "pmix_wire::server", %addr, uid = ?info.uid, inode = ?info.inode, "accepted");
            let Ok(id) = self.server.open_peer(info, Instant::now()) else {
                // refused and logged by the core; dropping the stream closes it
                continue;
            };
            if !cfg!(target_os = "linux") {
                let _ = stream.set_nodelay(true);
            }
            // both interests once: edge-triggered, so a writable socket
            // costs nothing until a reply waits for it, and no
            // re-registering
            if let Err(e) = self.poll.registry().register(
                &mut stream,
                Token(id as usize),
                Interest::READABLE | Interest::WRITABLE,
            ) {
                tracing::warn!(target: "pmix_wire::server", "cannot watch a connection: {e}");
                self.server.closed(id);
                continue;
            }
            // bytes that came before the registration are reported by it
            self.peers.insert(id, Peer::new(stream));
        }
    }

    /// Read what `id` sent and hand it to the core: at most [`READ_TURN`]
    /// bytes a turn, so one fast peer does not starve the others.
    fn read(&mut self, id: ConnId) {
        let mut taken = 0;
        loop {
            let Some(p) = self.peers.get(&id) else {
                return;
            };
            if p.closing {
                // the core is done with it; its bytes are not read
                return;
            }
            match (&p.stream).read(&mut self.buf) {
                Ok(0) => return self.gone(id),
                Ok(n) => {
                    self.server.handle_input(id, &self.buf[..n], Instant::now());
                    taken += n;
                    if n < self.buf.len() {
                        // a short read: the socket is empty (edge-triggered
                        // readiness comes again with the next bytes)
                        return;
                    }
                    if taken >= READ_TURN {
                        self.again.push(id);
                        return;
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return self.gone(id),
            }
        }
    }

    /// The peer ended the stream or the socket failed.
    fn gone(&mut self, id: ConnId) {
        self.peers.remove(&id);
        self.server.closed(id);
    }

    fn flush(&mut self) {
        let max = self.server.limits().max_queued_bytes;
        loop {
            // upcalls first: the host hears of an abort before its reply goes
            let mut told = false;
            while let Some(e) = self.server.poll_event() {
                self.events.send(e);
                told = true;
            }
            if let Some(h) = self.on_event.as_ref().filter(|_| told) {
                (h.0)();
            }
            let Some(t) = self.server.poll_transmit() else {
                break;
            };
            match t {
                Transmit::Send(id, bytes) => {
                    let Some(p) = self.peers.get_mut(&id) else {
                        continue;
                    };
                    if p.closing {
                        continue;
                    }
                    p.queued += bytes.len();
                    if p.queued > max {
                        // it stopped reading: drop it, and only it
                        let total = p.queued;
                        self.peers.remove(&id);
                        self.server.refuse(id, Refusal::SlowReader(total));
                        continue;
                    }
                    p.out.push_back(bytes);
                    self.dirty.push(id);
                }
                Transmit::Close(id) => {
                    if let Some(p) = self.peers.get_mut(&id) {
                        // a peer that will not take its last bytes is cut off
                        p.closing = true;
                        self.closing.push_back((Instant::now() + CLOSE_GRACE, id));
                        self.dirty.push(id);
                    }
                }
            }
        }
        for id in std::mem::take(&mut self.dirty) {
            let Some(p) = self.peers.get_mut(&id) else {
                continue;
            };
            match p.write_out() {
                Wrote::Ok => {}
                Wrote::Finished => {
                    self.peers.remove(&id);
                }
                Wrote::Failed => {
                    let closing = p.closing;
                    self.peers.remove(&id);
                    if !closing {
                        self.server.closed(id);
                    }
                }
            }
        }
    }

    /// Drop closing peers whose grace is over.
    fn expire(&mut self, now: Instant) {
        while let Some(&(deadline, id)) = self.closing.front() {
            if deadline > now {
                break;
            }
            self.closing.pop_front();
            if self.peers.get(&id).is_some_and(|p| p.closing) {
                self.peers.remove(&id);
            }
        }
    }
}

/// Connections accepted before their owners are looked up together.
const ACCEPT_BURST: usize = 64;

/// A peer's bytes read in one turn before the others get theirs.
const READ_TURN: usize = 256 << 10;

/// Send `sig` to a process the host started (no-op for pid 0 or beyond
/// i32: never a process group or every process).
pub fn signal_pid(pid: u32, sig: i32) {
    if let Ok(p) = i32::try_from(pid) {
        if p > 0 {
            // SAFETY: a plain kill(2) of one positive pid
            unsafe {
                libc::kill(p, sig);
            }
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    /// The driver sets TCP_NODELAY on its listener only: Linux copies it
    /// into every accepted socket.
    #[test]
    fn accepted_sockets_inherit_nodelay() {
        let l = super::listen_loopback().unwrap();
        let addr = l.local_addr().unwrap();
        let _c = std::net::TcpStream::connect(addr).unwrap();
        l.set_nonblocking(false).unwrap();
        let (s, _) = l.accept().unwrap();
        assert!(s.nodelay().unwrap());
    }

    /// A rank's environment, made when asked from its namespace's one, is
    /// the core's own for that rank; past the job's size there is none.
    #[test]
    fn each_ranks_environment_is_the_cores() {
        let job = |ns: &str, n| super::JobSpec {
            nspace: ns.into(),
            nprocs: n,
            hostname: "h".into(),
            info: Vec::new(),
        };
        let s = super::start(vec![job("envs.a", 3), job("envs.b", 1)]).unwrap();
        for (ns, n) in [("envs.a", 3u32), ("envs.b", 1)] {
            for r in 0..n {
                let uri = s.uri.clone();
                let nsc = ns.to_string();
                let core = s.call(move |c| c.client_env(&nsc, r, &uri)).unwrap();
                let got = s.client_env(ns, r);
                assert_eq!(got, core, "{ns} rank {r}");
                assert!(got.contains(&("PMIX_RANK".into(), r.to_string())));
            }
            assert!(s.client_env(ns, n).is_empty());
        }
        assert!(s.client_env("envs.c", 0u32).is_empty());
        s.stop();
    }
}
