//! The thin I/O driver of the server core: loopback TCP (as libpmix 4.x
//! clients expect) on one tokio event loop. One task owns the [`Server`]
//! and the listener; each connection is a small task that reads into a
//! fresh buffer only when its socket is readable (an idle connection holds
//! no buffer) and writes what the core queued for it. Reads reach the core
//! through one bounded channel (a fast peer waits, it is not buffered
//! without end); replies queued for a peer are counted in bytes, and a
//! peer past [`Limits::max_queued_bytes`] is dropped alone. Nothing wakes
//! the loop but a socket, the host, or the core's own next deadline.
//!
//! Hosts that run tokio embed it with [`spawn`]; [`start`] and
//! [`start_with`] run the same loop on a thread of their own.

pub mod peercred;
pub mod rendezvous;

use super::limits::{Limits, Refusal};
use super::{ConnId, HostEvent, JobSpec, Server, Transmit};
use peercred::{ProcVerify, TcpTable};
use pmix_types::enums::Rank;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWriteExt, ReadBuf};
use tokio::net::tcp::OwnedReadHalf;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};
use tokio::task::AbortHandle;

/// Kept for hosts that used it: replies are now bounded in bytes
/// ([`Limits::max_queued_bytes`]).
pub const MAX_QUEUED_REPLIES: usize = 4096;

/// Reads waiting for the core, over all connections.
const INPUT_DEPTH: usize = 256;
/// One read takes at most this much.
const READ_CHUNK: usize = 16 << 10;
/// A peer told to close gets this long to take its last bytes.
const CLOSE_GRACE: Duration = Duration::from_secs(5);

/// The nspace part of our URI; the rank part is the server's pid.
pub const SERVER_NSPACE: &str = "pmixw-server";

/// This node's name as tools compute it (gethostname).
pub use crate::tool::hostname;

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

enum Input {
    Data(ConnId, Vec<u8>),
    Closed(ConnId),
    Stop,
    /// Run this on the core (the host acting on the server).
    Call(CoreCall),
}

/// `f` as a call for the loop, and where its result will come.
fn boxed_call<R: Send + 'static>(
    f: impl FnOnce(&mut Server) -> R + Send + 'static,
) -> (CoreCall, oneshot::Receiver<R>) {
    let (tx, rx) = oneshot::channel();
    let job = Box::new(move |s: &mut Server| {
        let _ = tx.send(f(s));
    });
    (job, rx)
}

enum Out {
    Send(bytes::Bytes),
    Close,
}

/// A connection as the loop holds it.
struct Peer {
    tx: mpsc::UnboundedSender<Out>,
    queued: Arc<AtomicUsize>,
    task: AbortHandle,
}

/// Where host events go.
enum Sink {
    Std(std::sync::mpsc::Sender<HostEvent>),
    Tokio(mpsc::UnboundedSender<HostEvent>),
}

impl Sink {
    fn send(&self, e: HostEvent) {
        let _ = match self {
            Sink::Std(s) => s.send(e).map_err(|_| ()),
            Sink::Tokio(s) => s.send(e).map_err(|_| ()),
        };
    }
}

/// How to start a server.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Write the rendezvous files tools look for in this directory.
    pub rendezvous: Option<PathBuf>,
    /// Limits on peers.
    pub limits: Limits,
}

/// What both APIs share: the URI, the ranks' environments, the files.
struct Prepared {
    uri: String,
    envs: HashMap<(String, u32), Vec<(String, String)>>,
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
    let files = match &opts.rendezvous {
        Some(dir) => write_rendezvous(dir, &uri, jobs.first().map(|j| j.nspace.as_str()))?,
        None => Vec::new(),
    };
    let mut envs = HashMap::new();
    for j in jobs {
        server.register_nspace(j.clone());
        for r in 0..j.nprocs {
            envs.insert((j.nspace.clone(), r), server.client_env(&j.nspace, r, &uri));
        }
    }
    Ok(Prepared {
        uri,
        envs,
        files,
        server,
        listener,
    })
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

fn env_of(
    envs: &HashMap<(String, u32), Vec<(String, String)>>,
    nspace: &str,
    rank: u32,
) -> Vec<(String, String)> {
    envs.get(&(nspace.to_string(), rank))
        .cloned()
        .unwrap_or_default()
}

fn remove_files(files: &mut Vec<PathBuf>) {
    for f in files.drain(..) {
        let _ = std::fs::remove_file(f);
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
    envs: HashMap<(String, u32), Vec<(String, String)>>,
    input: mpsc::Sender<Input>,
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
        let (job, rx) = boxed_call(f);
        self.input.blocking_send(Input::Call(job)).ok()?;
        rx.blocking_recv().ok()
    }

    /// Run `f` on the server core without waiting for it to have run: for
    /// the host's notes that need no answer (a launched rank's pid, its
    /// exit). Calls run in the order they were made.
    pub fn post(&self, f: impl FnOnce(&mut Server) + Send + 'static) {
        let _ = self.input.blocking_send(Input::Call(Box::new(f)));
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
            let _ = self.input.blocking_send(Input::Stop);
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

/// A running server inside the host's tokio runtime ([`spawn`]).
pub struct AsyncRunning {
    /// The rendezvous URI clients are given.
    pub uri: String,
    /// Upcalls to the host, in order.
    pub events: mpsc::UnboundedReceiver<HostEvent>,
    envs: HashMap<(String, u32), Vec<(String, String)>>,
    input: mpsc::Sender<Input>,
    task: Option<tokio::task::JoinHandle<()>>,
    files: Vec<PathBuf>,
}

impl AsyncRunning {
    /// The environment of one rank (see [`Server::client_env`]).
    pub fn client_env(&self, nspace: &str, rank: impl Into<Rank>) -> Vec<(String, String)> {
        env_of(&self.envs, nspace, rank.into().wire())
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
        let (job, rx) = boxed_call(f);
        self.input.send(Input::Call(job)).await.ok()?;
        rx.await.ok()
    }

    /// Stop serving; open connections are closed.
    pub async fn stop(mut self) {
        let _ = self.input.send(Input::Stop).await;
        if let Some(t) = self.task.take() {
            let _ = t.await;
        }
        remove_files(&mut self.files);
    }
}

impl Drop for AsyncRunning {
    fn drop(&mut self) {
        if let Some(t) = self.task.take() {
            t.abort();
        }
        remove_files(&mut self.files);
    }
}

/// Start a server for these jobs on a loopback port of the system's
/// choosing, as a task of the current tokio runtime.
pub fn spawn(jobs: Vec<JobSpec>, opts: Options) -> std::io::Result<AsyncRunning> {
    let mut p = prepare(jobs, &opts)?;
    let listener = match TcpListener::from_std(p.listener) {
        Ok(l) => l,
        Err(e) => {
            remove_files(&mut p.files);
            return Err(e);
        }
    };
    let (tx, rx) = mpsc::channel(INPUT_DEPTH);
    let (etx, erx) = mpsc::unbounded_channel();
    let lp = Loop::new(p.server, listener, tx.clone(), Sink::Tokio(etx));
    let task = tokio::spawn(lp.run(rx));
    Ok(AsyncRunning {
        uri: p.uri,
        events: erx,
        envs: p.envs,
        input: tx,
        task: Some(task),
        files: p.files,
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
    let mut p = prepare(jobs, &opts)?;
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            remove_files(&mut p.files);
            return Err(e);
        }
    };
    let (tx, rx) = mpsc::channel(INPUT_DEPTH);
    let (etx, erx) = std::sync::mpsc::channel();
    let core_tx = tx.clone();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let std_listener = p.listener;
    let server = p.server;
    let core = thread::Builder::new()
        .name("pmixw-server".into())
        .spawn(move || {
            rt.block_on(async move {
                let listener = match TcpListener::from_std(std_listener) {
                    Ok(l) => l,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                let _ = ready_tx.send(Ok(()));
                Loop::new(server, listener, core_tx, Sink::Std(etx))
                    .run(rx)
                    .await
            })
        })?;
    match ready_rx.recv() {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            remove_files(&mut p.files);
            return Err(e);
        }
        Err(_) => {
            remove_files(&mut p.files);
            return Err(std::io::Error::other("server thread ended"));
        }
    }
    Ok(Running {
        uri: p.uri,
        events: erx,
        envs: p.envs,
        input: tx,
        core: Some(core),
        files: p.files,
    })
}

/// The event loop: the core, the listener, the connections.
struct Loop {
    server: Server,
    listener: TcpListener,
    table: Option<TcpTable>,
    peers: HashMap<ConnId, Peer>,
    input: mpsc::Sender<Input>,
    events: Sink,
}

impl Loop {
    fn new(
        server: Server,
        listener: TcpListener,
        input: mpsc::Sender<Input>,
        events: Sink,
    ) -> Loop {
        let table = listener.local_addr().ok().map(TcpTable::new);
        Loop {
            server,
            listener,
            table,
            peers: HashMap::new(),
            input,
            events,
        }
    }

    async fn run(mut self, mut rx: mpsc::Receiver<Input>) {
        loop {
            let deadline = self.server.poll_timeout();
            let sleep = async {
                match deadline {
                    Some(d) => tokio::time::sleep_until(d.into()).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                input = rx.recv() => match input {
                    Some(Input::Data(id, bytes)) => self.server.handle_input(id, &bytes, Instant::now()),
                    Some(Input::Closed(id)) => {
                        self.peers.remove(&id);
                        self.server.closed(id);
                    }
                    Some(Input::Call(f)) => f(&mut self.server),
                    Some(Input::Stop) | None => break,
                },
                acc = self.listener.accept() => match acc {
                    Ok((stream, addr)) => self.opened(stream, addr),
                    Err(e) => {
                        // out of descriptors, mostly: wait a little, not spin
                        tracing::warn!(target: "pmix_wire::server", "accept failed: {e}");
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                },
                _ = sleep => {}
            }
            self.server.handle_timeout(Instant::now());
            self.flush();
        }
        for (_, p) in self.peers.drain() {
            p.task.abort();
        }
    }

    fn opened(&mut self, stream: TcpStream, addr: SocketAddr) {
        let info = self
            .table
            .as_mut()
            .map(|t| t.lookup(addr))
            .unwrap_or_default();
        tracing::debug!(target: "pmix_wire::server", %addr, uid = ?info.uid, inode = ?info.inode, "accepted");
        let Ok(id) = self.server.open_peer(info, Instant::now()) else {
            // refused and logged by the core; dropping the stream closes it
            return;
        };
        if !cfg!(target_os = "linux") {
            let _ = stream.set_nodelay(true);
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let queued = Arc::new(AtomicUsize::new(0));
        let task = tokio::spawn(connection(
            id,
            stream,
            rx,
            self.input.clone(),
            queued.clone(),
        ));
        self.peers.insert(
            id,
            Peer {
                tx,
                queued,
                task: task.abort_handle(),
            },
        );
    }

    fn flush(&mut self) {
        let max = self.server.limits().max_queued_bytes;
        loop {
            // upcalls first: the host hears of an abort before its reply goes
            while let Some(e) = self.server.poll_event() {
                self.events.send(e);
            }
            let Some(t) = self.server.poll_transmit() else {
                break;
            };
            match t {
                Transmit::Send(id, bytes) => {
                    let Some(p) = self.peers.get(&id) else {
                        continue;
                    };
                    let n = bytes.len();
                    let total = p.queued.fetch_add(n, Ordering::Relaxed) + n;
                    if total > max {
                        // it stopped reading: drop it, and only it
                        if let Some(p) = self.peers.remove(&id) {
                            p.task.abort();
                        }
                        self.server.refuse(id, Refusal::SlowReader(total));
                    } else {
                        let _ = p.tx.send(Out::Send(bytes));
                    }
                }
                Transmit::Close(id) => {
                    if let Some(p) = self.peers.remove(&id) {
                        let _ = p.tx.send(Out::Close);
                        let task = p.task;
                        // a peer that will not take its last bytes is cut off
                        tokio::spawn(async move {
                            tokio::time::sleep(CLOSE_GRACE).await;
                            task.abort();
                        });
                    }
                }
            }
        }
    }
}

thread_local! {
    /// The read buffer all connections of a driver thread share: a read
    /// fills it and copies out what came within one poll, so no buffer is
    /// held per connection or allocated per read (a 16 KiB Vec per read
    /// was the driver's malloc churn in benches/server_load).
    static READ_BUF: std::cell::RefCell<Box<[u8]>> =
        std::cell::RefCell::new(vec![0u8; READ_CHUNK].into_boxed_slice());
}

/// The next bytes from `rd`, exactly as many as came (empty: end of
/// stream). Through poll_read, not readable() + try_read: a short read
/// clears tokio's readiness, so the next read waits for epoll instead of
/// trying the socket once more for EAGAIN (one wasted recvfrom per message:
/// 11 366 of 27 964 recvfrom calls in a run of benches/server_load at
/// N = 1 000).
async fn read_some(rd: &mut OwnedReadHalf) -> std::io::Result<Vec<u8>> {
    std::future::poll_fn(|cx| {
        READ_BUF.with(|b| {
            let mut b = b.borrow_mut();
            let mut rb = ReadBuf::new(&mut b);
            Pin::new(&mut *rd)
                .poll_read(cx, &mut rb)
                .map_ok(|()| rb.filled().to_vec())
        })
    })
    .await
}

/// One connection: read when readable, write what the core queued.
async fn connection(
    id: ConnId,
    stream: TcpStream,
    mut out: mpsc::UnboundedReceiver<Out>,
    input: mpsc::Sender<Input>,
    queued: Arc<AtomicUsize>,
) {
    let (mut rd, mut wr) = stream.into_split();
    let reader = async {
        loop {
            match read_some(&mut rd).await {
                Ok(buf) if !buf.is_empty() => {
                    if input.send(Input::Data(id, buf)).await.is_err() {
                        return;
                    }
                }
                _ => break,
            }
        }
        let _ = input.send(Input::Closed(id)).await;
        // the core drops our queue, which ends the writer
        std::future::pending::<()>().await
    };
    let writer = async {
        while let Some(o) = out.recv().await {
            match o {
                Out::Send(b) => {
                    if wr.write_all(&b).await.is_err() {
                        break;
                    }
                    queued.fetch_sub(b.len(), Ordering::Relaxed);
                }
                Out::Close => {
                    // our last bytes, then FIN, before the peer is dropped
                    let _ = wr.shutdown().await;
                    break;
                }
            }
        }
    };
    tokio::select! {
        _ = reader => {}
        _ = writer => {}
    }
    // past an Out::Close the write half is shut down already; otherwise the
    // core dropped the peer (it ended the stream, or was refused) and
    // closing the socket sends the FIN: no shutdown() call on drop first
    // (one syscall per client in benches/server_load)
    wr.forget();
    // ended by the peer (a failed write) or by the core: the core forgets
    // an id it no longer holds
    let _ = input.send(Input::Closed(id)).await;
}

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
}
