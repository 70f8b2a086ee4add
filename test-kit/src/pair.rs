//! A deterministic in-memory harness for protocol logic, as quinn-proto's
//! test `Pair`: one server core and N peers (client cores, or raw peers
//! that write bytes of their own), wired in memory, with a virtual clock.
//! No socket, no thread, no sleep: time moves only when a test calls
//! [`Pair::advance`], and bytes move only in [`Pair::drive`], always in
//! the order the cores queued them, so a run is the same every time.
//!
//! Socket facts the OS would give the driver (owner uid, socket inode)
//! are what the test says; which process holds a socket and what it
//! descends from is a table ([`Procs`]) handed to the core's [`Verify`]
//! seam, the one thing a real driver asks /proc for.

#![allow(dead_code)]

use pmix_codec::msg::{Reply, Request};
use pmix_codec::Format;
use pmix_types::{Proc, Value};
use pmix_wire::client::{ClientEnv, Core, Event};
use pmix_wire::server::{ConnId, HostEvent, JobSpec, PeerInfo, Server, Transmit, Verify};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The uid and gid our client cores put in their native credential.
pub const UID: u32 = 4242;
pub const GID: u32 = 4343;

/// One side of a connection to the server.
pub struct Peer {
    /// The client core (None: a raw peer, driven by [`Pair::write_raw`]).
    pub core: Option<Core>,
    pub conn: ConnId,
    /// What its core reported, each with its place in the pair's global
    /// order of deliveries.
    pub events: Vec<(u64, Event)>,
    /// Bytes the server sent a raw peer.
    pub raw_in: Vec<u8>,
    /// The server closed the connection.
    pub closed: bool,
    /// The client core refused the server's bytes.
    pub error: Option<String>,
}

/// Which process holds which socket inode and each process's parent: the
/// process tree the core's verifier consults.
#[derive(Clone, Default)]
pub struct Procs(Arc<Mutex<Tree>>);

#[derive(Default)]
struct Tree {
    /// socket inode → the process holding it
    holder: BTreeMap<u64, u32>,
    /// process → its parent
    parent: BTreeMap<u32, u32>,
}

impl Procs {
    /// Socket `inode` is held by process `pid`, whose parent is `parent`.
    pub fn add(&self, inode: u64, pid: u32, parent: u32) {
        let mut t = self.0.lock().unwrap();
        t.holder.insert(inode, pid);
        t.parent.insert(pid, parent);
    }
}

impl Verify for Procs {
    fn descends(&mut self, inode: u64, launched: u32) -> Option<bool> {
        let t = self.0.lock().unwrap();
        let mut pid = *t.holder.get(&inode)?;
        // walk up the parents (bounded: a table can hold a cycle)
        for _ in 0..64 {
            if pid == launched {
                return Some(true);
            }
            match t.parent.get(&pid) {
                Some(&p) if p != pid => pid = p,
                _ => return Some(false),
            }
        }
        Some(false)
    }
}

pub struct Pair {
    pub server: Server,
    pub peers: Vec<Peer>,
    /// The virtual clock.
    pub now: Instant,
    /// Upcalls to the host, in order.
    pub host: Vec<HostEvent>,
    /// Every transmit of the server, in order (for determinism checks).
    pub wire: Vec<Transmit>,
    by_conn: BTreeMap<ConnId, usize>,
    seq: u64,
}

/// A job of `nprocs` ranks in `nspace` on host `h`, with no job info: what
/// a test registers with a server core it drives itself.
pub fn job_spec(nspace: &str, nprocs: u32) -> JobSpec {
    JobSpec {
        nspace: nspace.into(),
        nprocs,
        hostname: "h".into(),
        info: vec![],
    }
}

/// Rank `r`'s COMMIT (v41): key `local.<r>` in the LOCAL blob and
/// `remote.<r>` in the REMOTE one, each the value r: a rank whose data
/// another node may see only in part.
pub fn scoped_commit(r: u32) -> Request {
    use pmix_types::{Buffer, DataType, Kval};
    let kv = |scope: &str| {
        let mut buf = pmix_codec::DataBuffer::new(Format::V41);
        let k = Kval {
            key: Some(format!("{scope}.{r}").as_str().into()),
            value: Value::Uint32(r),
        };
        buf.pack(DataType::Kval, &[Value::Kval(Box::new(k))])
            .expect("a KVAL packs");
        Buffer {
            buffer_type: 1,
            bytes: bytes::Bytes::copy_from_slice(buf.as_bytes()),
        }
    };
    Request::Commit {
        blobs: vec![(1, kv("local")), (2, kv("remote"))],
    }
}

impl Pair {
    /// A server with these jobs (namespace, ranks), every rank local.
    pub fn new(jobs: &[(&str, u32)]) -> Pair {
        let mut server = Server::new();
        for (ns, n) in jobs {
            server.register_nspace(JobSpec {
                nspace: ns.to_string(),
                nprocs: *n,
                hostname: "pairhost".into(),
                info: vec![],
            });
        }
        Pair {
            server,
            peers: Vec::new(),
            now: Instant::now(),
            host: Vec::new(),
            wire: Vec::new(),
            by_conn: BTreeMap::new(),
            seq: 0,
        }
    }

    fn open(&mut self, peer: PeerInfo, core: Option<Core>) -> usize {
        let conn = self
            .server
            .open_peer(peer, self.now)
            .expect("the server accepts the connection");
        self.by_conn.insert(conn, self.peers.len());
        self.peers.push(Peer {
            core,
            conn,
            events: Vec::new(),
            raw_in: Vec::new(),
            closed: false,
            error: None,
        });
        self.peers.len() - 1
    }

    /// A client core claiming `ns:rank`, its connect request queued, from
    /// a socket the driver knows `peer` of. Not driven yet.
    pub fn client_as(&mut self, ns: &str, rank: u32, peer: PeerInfo) -> usize {
        self.client_in(ns, rank, peer, Format::V41)
    }

    /// As [`Pair::client_as`], speaking `format` (and announcing the
    /// release our client gives that dialect: `link::version_for`).
    pub fn client_in(&mut self, ns: &str, rank: u32, peer: PeerInfo, format: Format) -> usize {
        let env = ClientEnv {
            proc: Proc::new(ns, rank),
            uri: "pmixw-server.0;tcp4://127.0.0.1:1".into(),
            format,
            security: "native".into(),
            gds: "hash".into(),
            server_version: None,
        };
        let mut core = Core::new(env, UID, GID).expect("client core");
        core.set_handshake_deadline(self.now + Duration::from_secs(10));
        self.open(peer, Some(core))
    }

    /// A tool core asking the server for an identity (its handshake's
    /// info blob `info`), its connect request queued. Not driven yet.
    pub fn tool(&mut self, info: Vec<pmix_types::Info>) -> usize {
        let uri = "pmixw-server.0;tcp4://127.0.0.1:1".to_string();
        let mut core = Core::new_tool(uri, Format::V41, UID, GID, info).expect("tool core");
        core.set_handshake_deadline(self.now + Duration::from_secs(10));
        self.open(PeerInfo::default(), Some(core))
    }

    /// A client of `ns:rank` whose socket the driver knows nothing of.
    pub fn client(&mut self, ns: &str, rank: u32) -> usize {
        self.client_as(ns, rank, PeerInfo::default())
    }

    /// A client connected and initialised (handshake and job info done).
    pub fn init(&mut self, ns: &str, rank: u32) -> usize {
        let p = self.client(ns, rank);
        self.drive();
        let t = self.send(p, &Request::Req);
        self.drive();
        self.reply(p, t).expect("job info reply");
        p
    }

    /// A peer that writes only what the test gives it.
    pub fn raw(&mut self, peer: PeerInfo) -> usize {
        self.open(peer, None)
    }

    pub fn write_raw(&mut self, p: usize, bytes: &[u8]) {
        let conn = self.peers[p].conn;
        self.server.handle_input(conn, bytes, self.now);
    }

    pub fn core(&mut self, p: usize) -> &mut Core {
        self.peers[p].core.as_mut().expect("a client peer")
    }

    /// Queue a request on peer `p` (reply deadline: 60 virtual seconds);
    /// its tag.
    pub fn send(&mut self, p: usize, req: &Request) -> u32 {
        let by = self.now + Duration::from_secs(60);
        self.core(p)
            .send_by(req, by)
            .expect("request queued")
            .expect("a request with a reply")
    }

    /// Take the reply to `tag` from peer `p`'s events, if it came.
    pub fn reply(&mut self, p: usize, tag: u32) -> Option<Reply> {
        let ev = &mut self.peers[p].events;
        let i = ev
            .iter()
            .position(|(_, e)| matches!(e, Event::Reply { tag: t, .. } if *t == tag))?;
        match ev.remove(i).1 {
            Event::Reply { reply, .. } => Some(reply),
            _ => None,
        }
    }

    /// Send `req` from each peer of `ps` in turn, drive, and return the
    /// replies in the same order.
    pub fn round(&mut self, ps: &[usize], req: impl Fn(usize) -> Request) -> Vec<Reply> {
        let tags: Vec<u32> = ps.iter().map(|&p| self.send(p, &req(p))).collect();
        self.drive();
        ps.iter()
            .zip(tags)
            .map(|(&p, t)| {
                self.reply(p, t)
                    .unwrap_or_else(|| panic!("peer {p}: no reply to tag {t}"))
            })
            .collect()
    }

    /// Move bytes until nobody has anything more to say.
    pub fn drive(&mut self) {
        loop {
            let mut progress = false;
            for i in 0..self.peers.len() {
                let (conn, closed) = (self.peers[i].conn, self.peers[i].closed);
                let Some(core) = self.peers[i].core.as_mut() else {
                    continue;
                };
                while let Some(b) = core.poll_transmit() {
                    progress = true;
                    if !closed {
                        self.server.handle_input(conn, &b, self.now);
                    }
                }
            }
            while let Some(e) = self.server.poll_event() {
                progress = true;
                self.host.push(e);
            }
            while let Some(t) = self.server.poll_transmit() {
                progress = true;
                self.wire.push(t.clone());
                match t {
                    Transmit::Send(c, b) => self.deliver(c, &b),
                    Transmit::Close(c) => {
                        if let Some(&i) = self.by_conn.get(&c) {
                            self.peers[i].closed = true;
                        }
                    }
                }
            }
            if !progress {
                return;
            }
        }
    }

    fn deliver(&mut self, conn: ConnId, bytes: &[u8]) {
        let Some(&i) = self.by_conn.get(&conn) else {
            panic!("the server wrote to connection {conn}, which no peer holds");
        };
        let peer = &mut self.peers[i];
        let Some(core) = peer.core.as_mut() else {
            peer.raw_in.extend_from_slice(bytes);
            return;
        };
        if let Err(e) = core.handle_input(bytes, self.now) {
            peer.error.get_or_insert(e.to_string());
        }
        while let Some(e) = core.poll_event() {
            self.seq += 1;
            peer.events.push((self.seq, e));
        }
    }

    /// Let `d` pass on the virtual clock: every core's deadlines up to the
    /// new `now` expire, then bytes move.
    pub fn advance(&mut self, d: Duration) {
        self.now += d;
        self.server.handle_timeout(self.now);
        for peer in &mut self.peers {
            if let Some(core) = peer.core.as_mut() {
                core.handle_timeout(self.now);
                while let Some(e) = core.poll_event() {
                    self.seq += 1;
                    peer.events.push((self.seq, e));
                }
            }
        }
        self.drive();
    }

    /// The peer `p`'s core connected (the handshake reply came).
    pub fn connected(&self, p: usize) -> bool {
        self.peers[p]
            .events
            .iter()
            .any(|(_, e)| matches!(e, Event::Connected { .. }))
    }

    /// A value as GET returns it to peer `p`.
    pub fn get(&mut self, p: usize, target: &Proc, key: &str) -> Result<Value, String> {
        let req = Request::Get {
            nspace: Some(target.nspace.as_pstring().clone()),
            rank: target.rank,
            info: vec![],
            key: Some(Some(key.into())),
        };
        let t = self.send(p, &req);
        self.drive();
        let r = self.reply(p, t).ok_or("no GET reply")?;
        self.core(p)
            .absorb_get(target, key, r)
            .map_err(|e| e.to_string())
    }
}

/// What a server core has queued, taken whole: its host events and its
/// transmits, each in order (as a driver drains them: events first).
#[derive(Debug, Default, PartialEq)]
pub struct Drained {
    /// [`Server::poll_event`]'s events.
    pub events: Vec<HostEvent>,
    /// [`Server::poll_transmit`]'s bytes and closes.
    pub transmits: Vec<Transmit>,
}

impl Drained {
    /// Nothing was queued.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty() && self.transmits.is_empty()
    }

    /// The bytes written, with their connection, in order.
    pub fn sends(&self) -> impl Iterator<Item = (ConnId, &bytes::Bytes)> {
        self.transmits.iter().filter_map(|t| match t {
            Transmit::Send(c, b) => Some((*c, b)),
            Transmit::Close(_) => None,
        })
    }

    /// The connections closed, in order.
    pub fn closes(&self) -> Vec<ConnId> {
        self.transmits
            .iter()
            .filter_map(|t| match t {
                Transmit::Close(c) => Some(*c),
                Transmit::Send(..) => None,
            })
            .collect()
    }
}

/// Take everything `s` has queued.
pub fn drain(s: &mut Server) -> Drained {
    Drained {
        events: std::iter::from_fn(|| s.poll_event()).collect(),
        transmits: std::iter::from_fn(|| s.poll_transmit()).collect(),
    }
}
