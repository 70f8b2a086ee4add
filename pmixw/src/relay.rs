//! `pmixw relay`: a thin I/O driver around [`crate::inspect::Live`]. It
//! accepts PMIx connections, opens one to the real server for each, copies
//! the bytes both ways unchanged and logs every message as it completes.
//! Loopback only unless the caller allows otherwise.

#![forbid(unsafe_code)]

use crate::inspect::{render_entry, Entry, Live};
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::thread;

/// Where decoded entries go: (connection number, entry).
pub type Sink = Arc<dyn Fn(usize, &Entry) + Send + Sync>;

/// A sink printing the text form (or one JSON object per line) to stdout.
pub fn stdout_sink(json: bool) -> Sink {
    Arc::new(move |conn, e| {
        let text = if json {
            let mut v = serde_json::to_value(e).expect("JSON");
            v["connection"] = conn.into();
            format!("{v}\n")
        } else {
            format!("[{conn}] {}", render_entry(e))
        };
        let _ = std::io::stdout().lock().write_all(text.as_bytes());
    })
}

/// Refuse a non-loopback listen address unless `any` is set.
pub fn check_listen(addr: &SocketAddr, any: bool) -> Result<(), String> {
    if addr.ip().is_loopback() || any {
        Ok(())
    } else {
        Err(format!(
            "{addr} is not a loopback address; pass --any-address to listen there"
        ))
    }
}

/// Where the raw bytes go: (connection number, true if the client sent
/// them, the bytes), called before they are forwarded.
pub type RawSink = Arc<dyn Fn(usize, bool, &[u8]) + Send + Sync>;

/// A raw sink appending each side of connection N to `DIR/conn-N.client`
/// and `DIR/conn-N.server`, the input `pmixw inspect` takes.
pub fn dump_sink(dir: std::path::PathBuf) -> RawSink {
    Arc::new(move |conn, from_client, data| {
        let side = if from_client { "client" } else { "server" };
        let path = dir.join(format!("conn-{conn}.{side}"));
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(data));
        if let Err(e) = written {
            eprintln!("pmixw relay: {}: {e}", path.display());
        }
    })
}

/// Serve connections on `listener`, forwarding each to `to`, until
/// `max_connections` have been served (`None`: forever).
pub fn serve(
    listener: TcpListener,
    to: &str,
    sink: Sink,
    max_message: usize,
    max_connections: Option<usize>,
) -> std::io::Result<()> {
    serve_recording(listener, to, sink, None, max_message, max_connections)
}

/// As [`serve`], also handing every byte to `raw`.
pub fn serve_recording(
    listener: TcpListener,
    to: &str,
    sink: Sink,
    raw: Option<RawSink>,
    max_message: usize,
    max_connections: Option<usize>,
) -> std::io::Result<()> {
    let to: Vec<SocketAddr> = to.to_socket_addrs()?.collect();
    let mut workers = Vec::new();
    for (n, client) in listener.incoming().enumerate() {
        let client = client?;
        let server = TcpStream::connect(&to[..])?;
        let sink = sink.clone();
        let raw = raw.clone();
        workers.push(thread::spawn(move || {
            relay_one(n + 1, client, server, sink, raw, max_message)
        }));
        if max_connections.is_some_and(|m| n + 1 >= m) {
            break;
        }
    }
    for w in workers {
        let _ = w.join();
    }
    Ok(())
}

fn relay_one(
    conn: usize,
    client: TcpStream,
    server: TcpStream,
    sink: Sink,
    raw: Option<RawSink>,
    max: usize,
) {
    let live = Arc::new(Mutex::new(Live::new(max)));
    let pump = |mut from: TcpStream, mut to: TcpStream, from_client: bool| {
        let live = live.clone();
        let sink = sink.clone();
        let raw = raw.clone();
        move || {
            let mut buf = vec![0u8; 64 << 10];
            loop {
                let n = match from.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                if let Some(r) = &raw {
                    r(conn, from_client, &buf[..n]);
                }
                // decode before forwarding, so the request is known when
                // its reply arrives on the other pump
                let entries = {
                    let mut l = live.lock().unwrap_or_else(|p| p.into_inner());
                    if from_client {
                        l.client_bytes(&buf[..n])
                    } else {
                        l.server_bytes(&buf[..n])
                    }
                };
                for e in &entries {
                    sink(conn, e);
                }
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
            let _ = to.shutdown(Shutdown::Write);
        }
    };
    let (c2, s2) = match (client.try_clone(), server.try_clone()) {
        (Ok(c), Ok(s)) => (c, s),
        _ => return,
    };
    let up = thread::spawn(pump(client, server, true));
    let down = thread::spawn(pump(s2, c2, false));
    let _ = up.join();
    let _ = down.join();
}
