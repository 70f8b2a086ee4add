//! The thin I/O driver of the server core: loopback TCP (as libpmix 4.x
//! clients expect), one reader and one writer thread per connection, and
//! one thread that owns the [`Server`] and is the only one to touch it. A
//! peer that stops reading only fills its own writer's queue.

use super::{ConnId, HostEvent, JobSpec, Output, Server};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{
    channel, sync_channel, Receiver, RecvTimeoutError, Sender, SyncSender, TrySendError,
};
use std::thread;
use std::time::{Duration, Instant};

/// A connection's writer queue (`None` ends it) and its socket.
type Writer = (SyncSender<Option<Vec<u8>>>, TcpStream);

/// Replies queued for a peer that does not read them before it is
/// dropped: one slow or hostile peer cannot make the server hold
/// unbounded memory for it.
pub const MAX_QUEUED_REPLIES: usize = 4096;

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
    super::rendezvous::remove_stale(dir, &host);
    let mut names = vec![format!("pmix.{host}.tool.{pid}")];
    names.extend(nspace.map(|n| format!("pmix.{host}.tool.{n}")));
    super::rendezvous::write(dir, &names, &text)
}

enum Input {
    Opened(TcpStream),
    Data(ConnId, Vec<u8>),
    Closed(ConnId),
    Stop,
    /// Run this on the core (the host acting on the server).
    Call(Box<dyn FnOnce(&mut Server) + Send>),
}

/// A running server.
pub struct Running {
    /// The rendezvous URI clients are given (`<nspace>.<rank>;tcp4://...`).
    pub uri: String,
    /// Upcalls to the host, in order.
    pub events: Receiver<HostEvent>,
    envs: HashMap<(String, u32), Vec<(String, String)>>,
    input: Sender<Input>,
    core: Option<thread::JoinHandle<()>>,
    files: Vec<PathBuf>,
}

impl Running {
    /// The environment of one rank (see [`Server::client_env`]).
    pub fn client_env(&self, nspace: &str, rank: u32) -> Vec<(String, String)> {
        self.envs
            .get(&(nspace.to_string(), rank))
            .cloned()
            .unwrap_or_default()
    }

    /// Run `f` on the server core and return its result: how the host
    /// registers namespaces and answers upcalls while the server runs.
    pub fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Server) -> R + Send + 'static,
    ) -> Option<R> {
        let (tx, rx) = channel();
        let job = Box::new(move |s: &mut Server| {
            let _ = tx.send(f(s));
        });
        self.input.send(Input::Call(job)).ok()?;
        rx.recv().ok()
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
        let _ = self.input.send(Input::Stop);
        if let Some(h) = self.core.take() {
            let _ = h.join();
        }
        for f in self.files.drain(..) {
            let _ = std::fs::remove_file(f);
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Start a server for these jobs on a loopback port of the system's choosing.
pub fn start(jobs: Vec<JobSpec>) -> std::io::Result<Running> {
    start_with(jobs, None)
}

/// As [`start`]; with `rendezvous`, also write the files tools look for
/// (`pmix.<host>.tool.<pid>` and `pmix.<host>.tool.<first job nspace>`) in
/// that directory, removed again when the server stops.
pub fn start_with(jobs: Vec<JobSpec>, rendezvous: Option<PathBuf>) -> std::io::Result<Running> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let port = listener.local_addr()?.port();
    let pid = std::process::id();
    let uri = format!("{SERVER_NSPACE}.{pid};tcp4://127.0.0.1:{port}");
    let mut server = Server::new();
    server.set_identity(SERVER_NSPACE, pid);
    let files = match rendezvous {
        Some(dir) => write_rendezvous(&dir, &uri, jobs.first().map(|j| j.nspace.as_str()))?,
        None => Vec::new(),
    };
    let mut envs = HashMap::new();
    for j in jobs {
        server.register_nspace(j.clone());
        for r in 0..j.nprocs {
            envs.insert((j.nspace.clone(), r), server.client_env(&j.nspace, r, &uri));
        }
    }
    let (tx, rx) = channel();
    let (etx, erx) = channel();
    let acc = tx.clone();
    thread::spawn(move || {
        for s in listener.incoming() {
            match s {
                Ok(s) => {
                    if acc.send(Input::Opened(s)).is_err() {
                        break;
                    }
                }
                Err(_) => continue,
            }
        }
    });
    let core_tx = tx.clone();
    let core = thread::spawn(move || run_core(server, rx, core_tx, etx));
    Ok(Running {
        uri,
        events: erx,
        envs,
        input: tx,
        core: Some(core),
        files,
    })
}

fn run_core(mut server: Server, rx: Receiver<Input>, tx: Sender<Input>, events: Sender<HostEvent>) {
    let mut writers: HashMap<ConnId, Writer> = HashMap::new();
    loop {
        let wait = server
            .next_timeout()
            .map(|d| d.saturating_duration_since(Instant::now()))
            .unwrap_or(Duration::from_secs(1))
            .min(Duration::from_secs(1));
        match rx.recv_timeout(wait) {
            Ok(Input::Opened(stream)) => {
                let id = server.open();
                let (Ok(reader), Ok(writer)) = (stream.try_clone(), stream.try_clone()) else {
                    server.closed(id);
                    continue;
                };
                let (wtx, wrx) = sync_channel::<Option<Vec<u8>>>(MAX_QUEUED_REPLIES);
                thread::spawn(move || write_loop(writer, wrx));
                writers.insert(id, (wtx, stream));
                let rtx = tx.clone();
                thread::spawn(move || read_loop(id, reader, rtx));
            }
            Ok(Input::Data(id, bytes)) => server.received(id, &bytes, Instant::now()),
            Ok(Input::Closed(id)) => {
                server.closed(id);
                if let Some((w, s)) = writers.remove(&id) {
                    let _ = w.try_send(None);
                    let _ = s.shutdown(Shutdown::Read);
                }
            }
            Ok(Input::Stop) | Err(RecvTimeoutError::Disconnected) => {
                for (_, (w, s)) in writers.drain() {
                    let _ = w.try_send(None);
                    let _ = s.shutdown(Shutdown::Both);
                }
                return;
            }
            Ok(Input::Call(f)) => f(&mut server),
            Err(RecvTimeoutError::Timeout) => {}
        }
        server.handle_timeout(Instant::now());
        while let Some(o) = server.poll_output() {
            match o {
                Output::Send(id, bytes) => {
                    let full = match writers.get(&id) {
                        Some((w, _)) => {
                            matches!(w.try_send(Some(bytes)), Err(TrySendError::Full(_)))
                        }
                        None => false,
                    };
                    if full {
                        // it stopped reading: drop it, and only it
                        server.closed(id);
                        if let Some((_, s)) = writers.remove(&id) {
                            let _ = s.shutdown(Shutdown::Both);
                        }
                    }
                }
                Output::Close(id) => {
                    if let Some((w, s)) = writers.remove(&id) {
                        if w.try_send(None).is_err() {
                            let _ = s.shutdown(Shutdown::Both);
                        } else {
                            let _ = s.shutdown(Shutdown::Read);
                        }
                    }
                }
                Output::Host(e) => {
                    let _ = events.send(e);
                }
            }
        }
    }
}

fn read_loop(id: ConnId, mut s: TcpStream, tx: Sender<Input>) {
    let mut buf = vec![0u8; 64 << 10];
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if tx.send(Input::Data(id, buf[..n].to_vec())).is_err() {
                    return;
                }
            }
        }
    }
    let _ = tx.send(Input::Closed(id));
}

fn write_loop(mut s: TcpStream, rx: Receiver<Option<Vec<u8>>>) {
    while let Ok(Some(b)) = rx.recv() {
        if s.write_all(&b).is_err() {
            break;
        }
    }
    let _ = s.shutdown(Shutdown::Write);
}
