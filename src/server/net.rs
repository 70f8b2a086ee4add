//! The thin I/O driver of the server core: loopback TCP (as libpmix 4.x
//! clients expect), one reader and one writer thread per connection, and
//! one thread that owns the [`Server`] and is the only one to touch it. A
//! peer that stops reading only fills its own writer's queue.

use super::{ConnId, HostEvent, JobSpec, Output, Server};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::thread;
use std::time::{Duration, Instant};

/// A connection's writer queue (`None` ends it) and its socket.
type Writer = (Sender<Option<Vec<u8>>>, TcpStream);

enum Input {
    Opened(TcpStream),
    Data(ConnId, Vec<u8>),
    Closed(ConnId),
    Stop,
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
}

impl Running {
    /// The environment of one rank (see [`Server::client_env`]).
    pub fn client_env(&self, nspace: &str, rank: u32) -> Vec<(String, String)> {
        self.envs
            .get(&(nspace.to_string(), rank))
            .cloned()
            .unwrap_or_default()
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
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Start a server for these jobs on a loopback port of the system's choosing.
pub fn start(jobs: Vec<JobSpec>) -> std::io::Result<Running> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let port = listener.local_addr()?.port();
    let uri = format!(
        "pmixw-server.{};tcp4://127.0.0.1:{port}",
        std::process::id()
    );
    let mut server = Server::new();
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
                let (wtx, wrx) = channel::<Option<Vec<u8>>>();
                thread::spawn(move || write_loop(writer, wrx));
                writers.insert(id, (wtx, stream));
                let rtx = tx.clone();
                thread::spawn(move || read_loop(id, reader, rtx));
            }
            Ok(Input::Data(id, bytes)) => server.received(id, &bytes, Instant::now()),
            Ok(Input::Closed(id)) => {
                server.closed(id);
                if let Some((w, s)) = writers.remove(&id) {
                    let _ = w.send(None);
                    let _ = s.shutdown(Shutdown::Read);
                }
            }
            Ok(Input::Stop) | Err(RecvTimeoutError::Disconnected) => {
                for (_, (w, s)) in writers.drain() {
                    let _ = w.send(None);
                    let _ = s.shutdown(Shutdown::Both);
                }
                return;
            }
            Err(RecvTimeoutError::Timeout) => {}
        }
        server.handle_timeout(Instant::now());
        while let Some(o) = server.poll_output() {
            match o {
                Output::Send(id, bytes) => {
                    if let Some((w, _)) = writers.get(&id) {
                        let _ = w.send(Some(bytes));
                    }
                }
                Output::Close(id) => {
                    if let Some((w, s)) = writers.remove(&id) {
                        let _ = w.send(None);
                        let _ = s.shutdown(Shutdown::Read);
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
