//! The server role, sans-IO (issue #5): a PMIx server core that libpmix
//! clients connect to. It owns no sockets, threads or clocks: the driver
//! hands it each connection's bytes with the current time and sends what
//! [`Server::poll_output`] returns. The host (a launcher, a resource
//! manager) registers namespaces and receives [`HostEvent`]s; everything a
//! single node can answer (modex, fences, publish/lookup, events, queries)
//! the core answers itself. Layouts: spec-notes/commands.md; behaviour and
//! evidence: spec-notes/server.md.
//!
//! A host embedding the server (what `pmixw run` does): start it on a
//! loopback port, give each rank its environment, act on the upcalls.
//!
//! ```no_run
//! use pmix_wire::server::{net, HostEvent, JobSpec};
//! use std::process::Command;
//!
//! let server = net::start(vec![JobSpec {
//!     nspace: "demo".into(),
//!     nprocs: 2,
//!     hostname: net::hostname(),
//!     info: vec![],
//! }])?;
//! let mut ranks = Vec::new();
//! for rank in 0..2 {
//!     ranks.push(Command::new("./my_pmix_client").envs(server.client_env("demo", rank)).spawn()?);
//! }
//! for event in server.events.iter() {
//!     match event {
//!         HostEvent::Aborted { status, .. } => eprintln!("aborted: {status}"),
//!         HostEvent::Finalized(p) if p.rank == 1 => break,
//!         _ => {}
//!     }
//! }
//! for mut r in ranks {
//!     r.wait()?;
//! }
//! server.stop();
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! The core alone, without sockets (how the tests drive it): bytes in,
//! outputs out.
//!
//! ```
//! use pmix_wire::server::{JobSpec, Output, Server};
//! use std::time::Instant;
//!
//! let mut core = Server::new();
//! core.register_nspace(JobSpec { nspace: "demo".into(), nprocs: 1, hostname: "h".into(), info: vec![] });
//! let peer = core.open();
//! // a handshake header announcing 1 GiB: refused before anything is buffered
//! let mut header = [0u8; 16];
//! header[8..12].copy_from_slice(&(1u32 << 30).to_le_bytes());
//! core.received(peer, &header, Instant::now());
//! assert_eq!(core.poll_output(), Some(Output::Close(peer)));
//! ```

mod collective;
pub mod group;
pub mod jobctl;
pub mod limits;
pub mod net;
pub mod peercred;
pub mod query;
pub mod rendezvous;
mod shared;

pub use limits::{Limits, Refusal};
pub use peercred::{PeerInfo, Verify};

use bytes::Bytes;
use collective::Collective;
use pmix_codec::command::{EventNotice, Reply, Request};
use pmix_codec::frame::{frame, tag, FrameDecoder, HeaderOrder, DEFAULT_MAX_MESSAGE};
use pmix_codec::handshake::{peer_type, ClientReply, ConnectRequest, ToolReply};
use pmix_codec::registry::Registry;
use pmix_codec::{DataBuffer, Format};
use pmix_types::status::codes;
use pmix_types::{DataArray, DataType, Hex, Info, Kval, PString, Pdata, Proc, Value};
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::time::{Duration, Instant};

/// `pmix_data_range_t` values (pmix_common.h).
pub mod range {
    pub const RM: u8 = 1;
    pub const LOCAL: u8 = 2;
    pub const NAMESPACE: u8 = 3;
    pub const SESSION: u8 = 4;
    pub const GLOBAL: u8 = 5;
    pub const PROC_LOCAL: u8 = 7;
}

/// The rank meaning "every rank of the namespace".
pub const RANK_WILDCARD: u32 = u32::MAX - 1;
const INFO_ARRAY_END: u32 = 2;
/// How long a GET for data a local rank has not committed yet waits when
/// the request names no `pmix.timeout` (libpmix 4.2.2: 2 s, protocol.md §7.3).
pub const DEFAULT_GET_WAIT: Duration = Duration::from_secs(2);

/// A connection, as the driver names it.
pub type ConnId = u64;

/// A job as the host registers it: one node, `nprocs` local ranks.
#[derive(Clone, Debug)]
pub struct JobSpec {
    pub nspace: String,
    pub nprocs: u32,
    pub hostname: String,
    /// Further job-level information, sent to every rank at init.
    pub info: Vec<Info>,
}

/// What the server asks its driver or host to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Output {
    /// Write these bytes to the connection (a reply every rank of a job
    /// gets, as the job info, is one buffer shared by all its sends).
    Send(ConnId, Bytes),
    /// Close the connection (after writing what was queued for it).
    Close(ConnId),
    /// Something the host must know or act on.
    Host(HostEvent),
}

/// Upcalls to the host.
#[derive(Clone, Debug, PartialEq)]
pub enum HostEvent {
    /// A client completed its handshake, speaking this format.
    Connected(Proc, Format),
    /// A client called PMIx_Finalize.
    Finalized(Proc),
    /// A client called PMIx_Abort (the host tears the job down).
    Aborted {
        proc: Proc,
        status: i32,
        message: Option<String>,
    },
    /// A client's connection ended before it finalized.
    Lost(Proc),
    /// A client asked to log data.
    Log { proc: Proc, data: Vec<Info> },
    /// A collective spans ranks on other nodes: every local participant
    /// has called in. The host gathers `data` (this node's contribution,
    /// empty unless `collect`) from every node and answers with
    /// [`Server::fence_done`] and the concatenation of all contributions.
    Fence {
        request: u64,
        procs: Vec<Proc>,
        collect: bool,
        data: Bytes,
    },
    /// A local client wants data of a rank on another node: the host asks
    /// that node's server ([`Server::modex_data`]) and answers with
    /// [`Server::dmodex_done`].
    DirectModex { request: u64, proc: Proc },
    /// A local rank committed its data (a host holding direct-modex
    /// requests for it may now answer them).
    Committed(Proc),
    /// A client notified an event whose range reaches beyond this node
    /// (NAMESPACE, SESSION, GLOBAL, RM, …); local delivery is done. A host
    /// spanning nodes passes it to the other nodes' [`Server::notify`].
    Notified {
        code: i32,
        source: Proc,
        range: u8,
        info: Vec<Info>,
    },
    /// A client asked to kill or terminate these procs (rank WILDCARD: the
    /// whole namespace); the core has already answered.
    Kill { requester: Proc, targets: Vec<Proc> },
    /// A client or tool asked to signal these procs (terminate: SIGTERM,
    /// pause: SIGSTOP, resume: SIGCONT, or the signal it named); the core
    /// has already answered.
    Signal {
        requester: Proc,
        targets: Vec<Proc>,
        signal: i32,
    },
    /// A client asked for a new job. The host starts it (after
    /// [`Server::register_nspace`]) and answers with [`Server::spawned`].
    Spawn {
        request: u64,
        requester: Proc,
        info: Vec<Info>,
        apps: Vec<pmix_types::App>,
    },
}

enum ConnState {
    Handshake,
    Client {
        proc: Proc,
        fmt: Format,
    },
    /// A tool (or launcher) with the identity it was given or announced.
    Tool {
        proc: Proc,
        fmt: Format,
        version: String,
    },
}

struct Conn {
    /// It has been sent every committed peer's data in one GET reply.
    bulk_sent: bool,
    dec: FrameDecoder,
    /// The credential of its handshake (native: euid and egid, host order).
    credential: Bytes,
    state: ConnState,
    finalized: bool,
    /// Event codes this client registered for; `Some(empty)`: all events.
    events: Option<Vec<i32>>,
    /// What the driver knows of the peer's socket.
    peer: PeerInfo,
    /// While the handshake is pending: when it must be complete.
    deadline: Option<Instant>,
}

#[derive(Default)]
struct RankState {
    /// Connections serving this rank: one, unless a claim could not be
    /// verified either way (then, as libpmix does, every claimant is
    /// served and the rank is lost only when the last one goes).
    conns: Vec<ConnId>,
    /// The connection whose process was verified to be the rank's.
    verified: Option<ConnId>,
    /// The process the host launched for this rank, if it said.
    pid: Option<u32>,
    /// One of its connections finalized.
    finalized: bool,
    /// Its connection ended before it finalized: it can never call in.
    lost: bool,
    committed: bool,
    /// What the rank committed for local peers (LOCAL and GLOBAL scope).
    local: Vec<Kval>,
    /// What it committed for remote peers (REMOTE and GLOBAL scope); for a
    /// rank on another node, the data its server sent through the host.
    remote: Vec<Kval>,
    /// The rank runs on another node (its data comes through the host).
    elsewhere: bool,
}

struct Job {
    spec: JobSpec,
    ranks: Vec<RankState>,
    /// The job's nodes when it spans several ([`Server::set_nodes`]).
    nodes: Option<NodeMap>,
}

/// Where a job's ranks run when it spans nodes: each node's name and its
/// ranks (ascending), and which node this server is.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeMap {
    pub nodes: Vec<(String, Vec<u32>)>,
    pub me: usize,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum CollKind {
    /// With or without data collection.
    Fence(bool),
    Connect,
    Disconnect,
    GroupConstruct,
    GroupDestruct,
}

struct PendingGet {
    conn: ConnId,
    tag: u32,
    target: (String, u32),
    /// The key asked for, if any: the answer waits until the target has it.
    key: Option<String>,
    deadline: Instant,
}

enum KeyState {
    Here,
    OtherScope,
    Absent,
}

struct PendingLookup {
    conn: ConnId,
    tag: u32,
    keys: Vec<String>,
    deadline: Instant,
}

/// The server core.
pub struct Server {
    jobs: HashMap<String, Job>,
    conns: HashMap<ConnId, Conn>,
    next_conn: ConnId,
    out: VecDeque<Output>,
    collectives: Vec<Collective>,
    gets: Vec<PendingGet>,
    lookups: Vec<PendingLookup>,
    published: Vec<(String, Pdata)>,
    registry: Registry,
    max_message: usize,
    /// This server's own identity (tools are told it).
    identity: Proc,
    tools: u32,
    /// Spawn requests waiting for the host: id → (connection, tag).
    spawns: HashMap<u64, (ConnId, u32)>,
    next_request: u64,
    /// Fences waiting for the host: id → the local callers.
    fences: HashMap<u64, Vec<(ConnId, u32)>>,
    /// Direct-modex requests out with the host: id → target.
    dmodex: HashMap<u64, (String, u32)>,
    /// What the host said of each rank's process (query.rs).
    procs: HashMap<(String, u32), query::ProcRecord>,
    executables: HashMap<String, String>,
    /// Process groups (group.rs).
    groups: group::Groups,
    /// The host's memory probe for PMIX_QUERY_MEMORY_USAGE (query.rs).
    memory_probe: Option<query::MemoryProbe>,
    limits: Limits,
    /// Handshakes not yet complete, by deadline.
    pending: BTreeSet<(Instant, ConnId)>,
    /// Open connections per socket owner.
    uids: HashMap<u32, usize>,
    verifier: Option<Box<dyn Verify>>,
    /// The latest refusals, oldest first (at most [`MAX_REFUSALS_KEPT`]).
    refusals: VecDeque<(ConnId, Refusal)>,
    /// Job-info replies by (nspace, format, version): every rank of a job
    /// gets the same one, and building it is O(ranks).
    job_info_cache: std::cell::RefCell<HashMap<(String, Format, String), Reply>>,
    /// The same replies framed, as REQ sends them (shared.rs).
    job_info_frames: std::cell::RefCell<HashMap<(String, Format, String), shared::Framed>>,
}

/// Refusals kept for [`Server::poll_refusal`]; older ones are only logged.
pub const MAX_REFUSALS_KEPT: usize = 1024;

fn pstr(s: &str) -> Value {
    Value::String(Some(PString::from(s)))
}

fn kval(key: &str, value: Value) -> Kval {
    Kval {
        key: Some(PString::from(key)),
        value,
    }
}

fn info_array(mut items: Vec<Info>) -> Value {
    if let Some(last) = items.last_mut() {
        last.flags |= INFO_ARRAY_END;
    }
    let elems = items
        .into_iter()
        .map(|i| Value::Info(Box::new(i)))
        .collect();
    Value::DataArray(Box::new(
        DataArray::new(DataType::Info, elems).expect("INFO elements"),
    ))
}

fn name(p: &Proc) -> (String, u32) {
    (p.nspace.to_string(), p.rank)
}

fn info_u32(info: &[Info], key: &str) -> Option<u32> {
    info.iter()
        .find(|i| i.key.to_string() == key)
        .and_then(|i| match i.value {
            Value::Uint32(n) => Some(n),
            Value::Int32(n) => u32::try_from(n).ok(),
            Value::Int(n) => u32::try_from(n).ok(),
            Value::Uint64(n) => u32::try_from(n).ok(),
            _ => None,
        })
}

/// The uid a `native` credential claims (its first host-order u32).
fn native_uid(req: &ConnectRequest) -> Option<u32> {
    if req.psec.to_string() != "native" {
        return None;
    }
    let b: [u8; 4] = req.credential.get(..4)?.try_into().ok()?;
    Some(u32::from_ne_bytes(b))
}

fn info_true(info: &[Info], key: &str) -> bool {
    info.iter()
        .any(|i| i.key.to_string() == key && !matches!(i.value, Value::Bool(false)))
}

impl Server {
    pub fn new() -> Server {
        Server {
            jobs: HashMap::new(),
            conns: HashMap::new(),
            next_conn: 1,
            out: VecDeque::new(),
            collectives: Vec::new(),
            gets: Vec::new(),
            lookups: Vec::new(),
            published: Vec::new(),
            registry: Registry::new(Format::V41, None),
            max_message: DEFAULT_MAX_MESSAGE,
            identity: Proc::new("pmixw-server", 0),
            tools: 0,
            spawns: HashMap::new(),
            next_request: 1,
            fences: HashMap::new(),
            dmodex: HashMap::new(),
            procs: HashMap::new(),
            executables: HashMap::new(),
            groups: group::Groups::default(),
            memory_probe: None,
            limits: Limits::default(),
            pending: BTreeSet::new(),
            uids: HashMap::new(),
            verifier: None,
            refusals: VecDeque::new(),
            job_info_cache: Default::default(),
            job_info_frames: Default::default(),
        }
    }

    /// Limits on peers (handshake deadline, caps); see [`Limits`].
    pub fn set_limits(&mut self, limits: Limits) {
        self.limits = limits;
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// How to check that a connecting process is a rank's launched process
    /// (the net driver installs [`peercred::ProcVerify`]).
    pub fn set_verifier(&mut self, v: Box<dyn Verify>) {
        self.verifier = Some(v);
    }

    /// The host launched this process as this rank: a client claiming the
    /// rank must be it or its descendant (when the verifier can tell).
    /// Claims that came in before are checked now: the verified one keeps
    /// the rank, proven strays are dropped.
    pub fn set_rank_pid(&mut self, nspace: &str, rank: u32, pid: u32) {
        let Some(r) = self.rank_mut(nspace, rank) else {
            return;
        };
        r.pid = Some(pid);
        let claims = r.conns.clone();
        let who = format!("{nspace}:{rank}");
        for id in claims {
            let inode = self.conns.get(&id).and_then(|c| c.peer.inode);
            let verdict = match (inode, self.verifier.as_mut()) {
                (Some(inode), Some(v)) => v.descends(inode, pid),
                _ => None,
            };
            let Some(r) = self.rank_mut(nspace, rank) else {
                return;
            };
            match verdict {
                Some(true) if r.verified.is_none() => r.verified = Some(id),
                Some(false) if r.conns.len() > 1 => {
                    // a stray beside others: it goes, the rank stays
                    r.conns.retain(|&x| x != id);
                    if let Some(c) = self.conns.get_mut(&id) {
                        c.state = ConnState::Handshake;
                    }
                    let why = Refusal::NotTheRank {
                        rank: who.clone(),
                        launched: pid,
                    };
                    self.refuse(id, why);
                }
                _ => {}
            }
        }
    }

    fn rank_mut(&mut self, nspace: &str, rank: u32) -> Option<&mut RankState> {
        self.jobs
            .get_mut(nspace)
            .and_then(|j| j.ranks.get_mut(rank as usize))
    }

    /// The next refusal not yet taken (each is also logged with `tracing`).
    pub fn poll_refusal(&mut self) -> Option<(ConnId, Refusal)> {
        self.refusals.pop_front()
    }

    /// Open connections whose handshake is not complete.
    pub fn pending_handshakes(&self) -> usize {
        self.pending.len()
    }

    /// Open connections.
    pub fn connections(&self) -> usize {
        self.conns.len()
    }

    /// The server's own nspace and rank, as its URI names them.
    pub fn set_identity(&mut self, nspace: &str, rank: u32) {
        self.identity = Proc::new(nspace, rank);
    }

    /// Refuse messages larger than this before buffering them.
    pub fn set_max_message(&mut self, max: usize) {
        self.max_message = max;
    }

    /// Register a namespace; its ranks may then connect.
    pub fn register_nspace(&mut self, spec: JobSpec) {
        self.job_info_cache.borrow_mut().clear();
        self.job_info_frames.borrow_mut().clear();
        let ranks = (0..spec.nprocs).map(|_| RankState::default()).collect();
        self.jobs.insert(
            spec.nspace.clone(),
            Job {
                spec,
                ranks,
                nodes: None,
            },
        );
    }

    /// The environment a rank needs (PMIx_server_setup_fork): the
    /// rendezvous URI under every variable a libpmix client of any version
    /// looks for (`select::SERVER_URI_VARS`), and
    /// the modules it must use so that job data crosses the socket.
    pub fn client_env(&self, nspace: &str, rank: u32, uri: &str) -> Vec<(String, String)> {
        let mut env = vec![
            ("PMIX_NAMESPACE".into(), nspace.to_string()),
            ("PMIX_RANK".into(), rank.to_string()),
        ];
        // every dialect we speak, as a 6.1 server names them (URI61 …
        // URI12), plus 4.2.2's URI2; each client takes the newest it knows
        for (v, _) in pmix_codec::select::SERVER_URI_VARS {
            env.push((v.to_string(), uri.to_string()));
        }
        env.push(("PMIX_SECURITY_MODE".into(), "native".into()));
        env.push((
            "PMIX_BFROP_BUFFER_TYPE".into(),
            "PMIX_BFROP_BUFFER_NON_DESC".into(),
        ));
        env.push(("PMIX_GDS_MODULE".into(), "hash".into()));
        env.push(("PMIX_MCA_gds".into(), "hash".into()));
        if let Some(j) = self.jobs.get(nspace) {
            env.push(("PMIX_HOSTNAME".into(), j.spec.hostname.clone()));
        }
        env.push(("PMIX_VERSION".into(), "4.2.2".into()));
        env
    }

    /// A new connection; the driver passes the id with its bytes. No
    /// handshake deadline and no caps apply (see [`Server::open_peer`]).
    pub fn open(&mut self) -> ConnId {
        self.insert_conn(PeerInfo::default(), None)
    }

    /// A new connection from a peer the driver knows this much of, at
    /// `now`: refused (and logged) if the caps on pending handshakes or on
    /// the peer's uid are reached; else it must complete its handshake by
    /// `now +` [`Limits::handshake_timeout`].
    pub fn open_peer(&mut self, peer: PeerInfo, now: Instant) -> Result<ConnId, Refusal> {
        let refusal = if self.pending.len() >= self.limits.max_pending_handshakes {
            Some(Refusal::TooManyPending(self.pending.len()))
        } else {
            peer.uid.and_then(|uid| {
                let count = self.uids.get(&uid).copied().unwrap_or(0);
                (count >= self.limits.max_conns_per_uid)
                    .then_some(Refusal::TooManyForUid { uid, count })
            })
        };
        if let Some(r) = refusal {
            self.log_refusal(0, &peer, r.clone());
            return Err(r);
        }
        Ok(self.insert_conn(peer, Some(now + self.limits.handshake_timeout)))
    }

    fn insert_conn(&mut self, peer: PeerInfo, deadline: Option<Instant>) -> ConnId {
        let id = self.next_conn;
        self.next_conn += 1;
        if let Some(d) = deadline {
            self.pending.insert((d, id));
        }
        if let Some(uid) = peer.uid {
            *self.uids.entry(uid).or_default() += 1;
        }
        self.conns.insert(
            id,
            Conn {
                bulk_sent: false,
                dec: FrameDecoder::new(HeaderOrder::Little, self.max_message),
                credential: Bytes::new(),
                state: ConnState::Handshake,
                finalized: false,
                events: None,
                peer,
                deadline,
            },
        );
        id
    }

    fn log_refusal(&mut self, id: ConnId, peer: &PeerInfo, r: Refusal) {
        tracing::warn!(
            target: "pmix_wire::server",
            conn = id,
            uid = ?peer.uid,
            "peer refused: {r}"
        );
        if self.refusals.len() >= MAX_REFUSALS_KEPT {
            self.refusals.pop_front();
        }
        self.refusals.push_back((id, r));
    }

    /// Drop a peer for this reason: logged, kept for
    /// [`Server::poll_refusal`], and the connection closed.
    pub fn refuse(&mut self, id: ConnId, r: Refusal) {
        let peer = self.conns.get(&id).map(|c| c.peer).unwrap_or_default();
        self.log_refusal(id, &peer, r);
        self.drop_peer(id);
    }

    /// The handshake completed: no deadline any more.
    fn handshake_done(&mut self, id: ConnId) {
        if let Some(d) = self.conns.get_mut(&id).and_then(|c| c.deadline.take()) {
            self.pending.remove(&(d, id));
        }
    }

    /// Say which ranks of a namespace run on this node; the others are on
    /// other nodes, reached through the host (fence and direct modex
    /// upcalls). By default every rank is local.
    pub fn set_local_ranks(&mut self, nspace: &str, local: &[u32]) {
        if let Some(j) = self.jobs.get_mut(nspace) {
            for (r, st) in j.ranks.iter_mut().enumerate() {
                st.elsewhere = !local.contains(&(r as u32));
            }
        }
    }

    /// Say on which nodes a namespace's ranks run (this node's ranks are
    /// local, the others reached through the host) and give every rank the
    /// job data of that layout: node list, node ids, each node's peers,
    /// local and node ranks.
    pub fn set_nodes(&mut self, nspace: &str, map: NodeMap) {
        if let Some(mine) = map.nodes.get(map.me).map(|n| n.1.clone()) {
            self.set_local_ranks(nspace, &mine);
        }
        if let Some(j) = self.jobs.get_mut(nspace) {
            j.nodes = Some(map);
        }
        // the job data now describes the nodes
        self.job_info_cache.borrow_mut().clear();
        self.job_info_frames.borrow_mut().clear();
    }

    /// This node's data of a local rank for other nodes (its REMOTE and
    /// GLOBAL keys), once it has committed: the blob a host hands to
    /// [`Server::dmodex_done`] on the requesting node. Our format, one
    /// BYTE_OBJECT unit (v41) holding PROC then KVALs; servers exchange it
    /// only through their hosts.
    pub fn modex_data(&self, nspace: &str, rank: u32) -> Option<Bytes> {
        let r = self.jobs.get(nspace)?.ranks.get(rank as usize)?;
        if r.elsewhere || !r.committed {
            return None;
        }
        Self::contribution(&[(Proc::new(nspace, rank), &r.remote)])
    }

    fn contribution(parts: &[(Proc, &Vec<Kval>)]) -> Option<Bytes> {
        let mut b = DataBuffer::new(Format::V41);
        for (p, kv) in parts {
            let inner = Self::blob(&Format::V41, p, kv)?;
            b.pack(
                DataType::ByteObject,
                &[Value::ByteObject(Box::new(Hex(inner)))],
            )
            .ok()?;
        }
        Some(Bytes::copy_from_slice(b.as_bytes()))
    }

    /// Store the data of remote ranks carried by `blob` (contributions as
    /// [`Server::modex_data`] makes them, concatenated); false if it does
    /// not parse.
    fn absorb(&mut self, blob: &[u8]) -> bool {
        let mut outer = DataBuffer::from_bytes(Format::V41, Bytes::copy_from_slice(blob));
        let mut done = Vec::new();
        while !outer.unread().is_empty() {
            let Ok(Value::ByteObject(inner)) = outer.unpack_one(DataType::ByteObject) else {
                return false;
            };
            let mut b = DataBuffer::from_bytes(Format::V41, inner.0);
            let Ok(Value::Proc(p)) = b.unpack_one(DataType::Proc) else {
                return false;
            };
            let mut kv = Vec::new();
            while !b.unread().is_empty() {
                match b.unpack_one(DataType::Kval) {
                    Ok(Value::Kval(k)) => kv.push(*k),
                    _ => return false,
                }
            }
            let me = name(&p);
            if let Some(r) = self
                .jobs
                .get_mut(&me.0)
                .and_then(|j| j.ranks.get_mut(me.1 as usize))
            {
                if r.elsewhere {
                    r.remote = kv;
                    r.committed = true;
                    done.push(me);
                }
            }
        }
        for me in done {
            self.resolve_gets(&me);
        }
        true
    }

    /// The host's answer to [`HostEvent::Fence`]: the status and, for a
    /// fence that collects data, every node's contribution concatenated.
    pub fn fence_done(&mut self, request: u64, status: i32, data: &[u8]) {
        let Some(callers) = self.fences.remove(&request) else {
            return;
        };
        let st = if status == codes::PMIX_SUCCESS && !self.absorb(data) {
            codes::PMIX_ERR_BAD_PARAM
        } else {
            status
        };
        for (conn, t) in callers {
            self.reply(conn, t, &Reply::Status(st));
        }
    }

    /// The host's answer to [`HostEvent::DirectModex`]: the target's data
    /// (as [`Server::modex_data`] made it on its node) or an error status.
    pub fn dmodex_done(&mut self, request: u64, result: Result<Bytes, i32>) {
        let Some(target) = self.dmodex.remove(&request) else {
            return;
        };
        let err = match result {
            Ok(blob) if self.absorb(&blob) => return,
            Ok(_) => codes::PMIX_ERR_BAD_PARAM,
            Err(st) => st,
        };
        let (failed, keep): (Vec<_>, Vec<_>) =
            self.gets.drain(..).partition(|g| g.target == target);
        self.gets = keep;
        for g in failed {
            self.reply(g.conn, g.tag, &Reply::Status(err));
        }
    }

    /// The host's answer to [`HostEvent::Spawn`]: the new job's namespace
    /// (registered before), or the status of the failure. The requester
    /// gets STATUS, the namespace and the job's KVALs (as REQ gives them).
    pub fn spawned(&mut self, request: u64, result: Result<String, i32>) {
        let Some((conn, t)) = self.spawns.remove(&request) else {
            return;
        };
        let Some(fmt) = self.fmt_of(conn) else { return };
        let r = match result {
            Ok(ns) => match self.job_info(&fmt, &ns) {
                Some(Reply::JobInfo { nspace, kvals }) => Reply::Spawn {
                    status: codes::PMIX_SUCCESS,
                    nspace: Some(nspace),
                    kvals,
                },
                _ => Reply::Status(codes::PMIX_ERR_NOT_FOUND),
            },
            Err(st) => Reply::Status(st),
        };
        self.reply(conn, t, &r);
    }

    /// The next thing to do, if any.
    pub fn poll_output(&mut self) -> Option<Output> {
        self.out.pop_front()
    }

    /// When [`Server::handle_timeout`] should next be called.
    pub fn next_timeout(&self) -> Option<Instant> {
        self.gets
            .iter()
            .map(|g| g.deadline)
            .chain(self.lookups.iter().map(|l| l.deadline))
            .chain(self.pending.first().map(|p| p.0))
            .min()
    }

    /// Expire waits whose time has come.
    pub fn handle_timeout(&mut self, now: Instant) {
        while let Some(&(d, id)) = self.pending.first() {
            if d > now {
                break;
            }
            self.pending.remove(&(d, id));
            let r = Refusal::HandshakeTimeout(self.limits.handshake_timeout);
            self.refuse(id, r);
        }
        let (due, keep): (Vec<_>, Vec<_>) = self.gets.drain(..).partition(|g| g.deadline <= now);
        self.gets = keep;
        for g in due {
            self.reply(g.conn, g.tag, &Reply::Status(codes::PMIX_ERR_TIMEOUT));
        }
        let (due, keep): (Vec<_>, Vec<_>) = self.lookups.drain(..).partition(|l| l.deadline <= now);
        self.lookups = keep;
        for l in due {
            self.reply(l.conn, l.tag, &Reply::Status(codes::PMIX_ERR_NOT_FOUND));
        }
    }

    /// Bytes received on a connection.
    pub fn received(&mut self, id: ConnId, data: &[u8], now: Instant) {
        let Some(c) = self.conns.get_mut(&id) else {
            return;
        };
        c.dec.push(data);
        loop {
            let Some(c) = self.conns.get_mut(&id) else {
                return;
            };
            let m = match c.dec.next_message() {
                Ok(Some(m)) => m,
                Ok(None) => return,
                Err(e) => {
                    // oversize: this peer only
                    self.refuse(id, Refusal::Frame(e.to_string()));
                    return;
                }
            };
            let result = if matches!(c.state, ConnState::Handshake) {
                self.handshake(id, &m.payload)
            } else if self.message(id, m.header.tag, &m.payload, now) {
                Ok(())
            } else {
                Err(Refusal::BadRequest(m.header.tag))
            };
            if let Err(r) = result {
                self.refuse(id, r);
                return;
            }
        }
    }

    /// The connection ended (the peer closed it or the driver gave up).
    pub fn closed(&mut self, id: ConnId) {
        let Some(c) = self.conns.remove(&id) else {
            return;
        };
        if let Some(d) = c.deadline {
            self.pending.remove(&(d, id));
        }
        if let Some(uid) = c.peer.uid {
            if let Some(n) = self.uids.get_mut(&uid) {
                *n -= 1;
                if *n == 0 {
                    self.uids.remove(&uid);
                }
            }
        }
        let proc = match c.state {
            ConnState::Client { proc, .. } => proc,
            ConnState::Tool { .. } => {
                self.lookups.retain(|l| l.conn != id);
                self.gets.retain(|g| g.conn != id);
                return;
            }
            ConnState::Handshake => return,
        };
        let me = name(&proc);
        let mut last = true;
        let mut finalized = c.finalized;
        if let Some(r) = self
            .jobs
            .get_mut(&me.0)
            .and_then(|j| j.ranks.get_mut(me.1 as usize))
        {
            r.conns.retain(|&x| x != id);
            if r.verified == Some(id) {
                r.verified = None;
            }
            r.finalized |= c.finalized;
            // another claimant of the rank is still connected: it carries on
            last = r.conns.is_empty();
            finalized = r.finalized;
            if last {
                r.lost |= !r.finalized;
            }
        }
        if !last {
            self.gets.retain(|g| g.conn != id);
            self.lookups.retain(|l| l.conn != id);
            self.spawns.retain(|_, (c, _)| *c != id);
            return;
        }
        if !finalized {
            self.group_member_lost(&proc);
            self.out.push_back(Output::Host(HostEvent::Lost(proc)));
        }
        // collectives waiting for this rank can no longer complete
        let failed = self.collectives_closed(&me, !finalized);
        for (conn, t) in failed {
            self.reply(conn, t, &Reply::Status(codes::PMIX_ERR_LOST_CONNECTION));
        }
        // gets waiting for its data never get it
        let (dead, keep): (Vec<_>, Vec<_>) = self
            .gets
            .drain(..)
            .partition(|g| g.target == me || g.conn == id);
        self.gets = keep;
        for g in dead.into_iter().filter(|g| g.conn != id) {
            self.reply(
                g.conn,
                g.tag,
                &Reply::Status(codes::PMIX_ERR_LOST_CONNECTION),
            );
        }
        self.lookups.retain(|l| l.conn != id);
        self.spawns.retain(|_, (c, _)| *c != id);
    }

    fn drop_peer(&mut self, id: ConnId) {
        if self.conns.contains_key(&id) {
            self.out.push_back(Output::Close(id));
        }
        self.closed(id);
    }

    fn send(&mut self, id: ConnId, t: u32, payload: &[u8]) {
        if let Ok(b) = frame(0, t, payload, HeaderOrder::Network) {
            self.out.push_back(Output::Send(id, Bytes::from(b)));
        }
    }

    fn fmt_of(&self, id: ConnId) -> Option<Format> {
        match self.conns.get(&id).map(|c| &c.state) {
            Some(ConnState::Client { fmt, .. }) | Some(ConnState::Tool { fmt, .. }) => Some(*fmt),
            _ => None,
        }
    }

    fn reply(&mut self, id: ConnId, t: u32, r: &Reply) {
        let Some(fmt) = self.fmt_of(id) else { return };
        match r.encode(&fmt) {
            Ok(b) => self.send(id, t, &b),
            Err(_) => {
                if let Ok(b) = Reply::Status(codes::PMIX_ERR_BAD_PARAM).encode(&fmt) {
                    self.send(id, t, &b);
                }
            }
        }
    }

    fn handshake(&mut self, id: ConnId, body: &[u8]) -> Result<(), Refusal> {
        let req = ConnectRequest::decode(body).map_err(|e| Refusal::BadHandshake(e.to_string()))?;
        let refuse = |s: &mut Server, st: i32, why: Refusal| {
            s.out.push_back(Output::Send(
                id,
                ClientReply {
                    status: st,
                    index: 0,
                }
                .encode()
                .to_vec()
                .into(),
            ));
            Err(why)
        };
        if req.flag != peer_type::SIMPLE_CLIENT {
            let ok = self.tool_handshake(id, &req);
            self.handshake_done(id);
            return if ok {
                Ok(())
            } else {
                Err(Refusal::ToolRefused(req.flag))
            };
        }
        let (Some(proc), Some(fmt)) = (req.proc.clone(), req.format()) else {
            return refuse(
                self,
                codes::PMIX_ERR_BAD_PARAM,
                Refusal::IncompleteHandshake,
            );
        };
        let me = name(&proc);
        let who = format!("{}:{}", me.0, me.1);
        let Some((launched, holder)) = self
            .jobs
            .get(&me.0)
            .and_then(|j| j.ranks.get(me.1 as usize))
            .map(|r| (r.pid, r.verified))
        else {
            return refuse(self, codes::PMIX_ERR_NOT_FOUND, Refusal::UnknownRank(who));
        };
        let peer = self.conns.get(&id).map(|c| c.peer).unwrap_or_default();
        // the socket's owner must be the uid the native credential claims
        if let (Some(socket), Some(claimed)) = (peer.uid, native_uid(&req)) {
            if socket != claimed {
                let why = Refusal::UidMismatch { socket, claimed };
                return refuse(self, codes::PMIX_ERR_NO_PERMISSIONS, why);
            }
        }
        // the process must be the one launched as this rank, or under it
        let verified = match (launched, peer.inode, self.verifier.as_mut()) {
            (Some(pid), Some(inode), Some(v)) => v.descends(inode, pid),
            _ => None,
        };
        if verified == Some(false) {
            let why = Refusal::NotTheRank {
                rank: who,
                launched: launched.unwrap_or(0),
            };
            return refuse(self, codes::PMIX_ERR_NO_PERMISSIONS, why);
        }
        if holder.is_some() {
            return refuse(self, codes::PMIX_ERR_BAD_PARAM, Refusal::RankTaken(who));
        }
        let Some(rank) = self
            .jobs
            .get_mut(&me.0)
            .and_then(|j| j.ranks.get_mut(me.1 as usize))
        else {
            return refuse(self, codes::PMIX_ERR_NOT_FOUND, Refusal::UnknownRank(who));
        };
        // a verified rank displaces claimants that could not be verified;
        // an unverifiable claim is served beside the others (libpmix does
        // the same), so a stray claim never locks the real rank out
        let displaced = if verified == Some(true) {
            rank.verified = Some(id);
            std::mem::replace(&mut rank.conns, vec![id])
        } else {
            rank.conns.push(id);
            Vec::new()
        };
        for old in displaced {
            if let Some(c) = self.conns.get_mut(&old) {
                // it no longer speaks for the rank: closing it loses nothing
                c.state = ConnState::Handshake;
            }
            self.refuse(old, Refusal::Displaced(who.clone()));
        }
        self.handshake_done(id);
        if let Some(c) = self.conns.get_mut(&id) {
            c.credential = req.credential.clone();
        }
        // the namespace's first client sets its entry (and the version the
        // job info reports as pmix.bfrops.mod)
        if self.registry.peer(&proc.nspace).is_none() {
            self.registry
                .register(proc.nspace.clone(), fmt, Some(req.version.to_string()));
        }
        if let Some(c) = self.conns.get_mut(&id) {
            c.state = ConnState::Client {
                proc: proc.clone(),
                fmt,
            };
        }
        self.out.push_back(Output::Send(
            id,
            ClientReply {
                status: codes::PMIX_SUCCESS,
                index: id as u32,
            }
            .encode()
            .to_vec()
            .into(),
        ));
        tracing::debug!(target: "pmix_wire::server", conn = id, ?verified, "{who} connected");
        self.out
            .push_back(Output::Host(HostEvent::Connected(proc, fmt)));
        Ok(())
    }

    /// Tools, launchers and singletons: an identity (assigned for flags 3
    /// and 6, else the one announced), then the tool reply (protocol.md
    /// §4.3.2). Singletons (flag 9) are not served.
    fn tool_handshake(&mut self, id: ConnId, req: &ConnectRequest) -> bool {
        let fmt = req.format();
        let assigned = matches!(
            req.flag,
            peer_type::TOOL_NEEDS_ID | peer_type::LAUNCHER_NEEDS_ID
        );
        let proc = if assigned {
            self.tools += 1;
            Some(Proc::new(&format!("pmixw-tool-{}", self.tools), 0))
        } else {
            req.proc.clone()
        };
        let known = matches!(
            req.flag,
            peer_type::LEGACY_TOOL
                | peer_type::LEGACY_LAUNCHER
                | peer_type::TOOL_NEEDS_ID
                | peer_type::TOOL_GIVEN_ID
                | peer_type::TOOL_CLIENT
                | peer_type::LAUNCHER_NEEDS_ID
                | peer_type::LAUNCHER_GIVEN_ID
                | peer_type::LAUNCHER_CLIENT
        );
        let reply = |st: i32| ToolReply {
            status: st,
            assigned: if assigned { proc.clone() } else { None },
            server: self.identity.clone(),
            security_status: 0,
        };
        let (Some(fmt), true) = (fmt, known) else {
            let r = reply(codes::PMIX_ERR_NOT_SUPPORTED).encode();
            self.out.push_back(Output::Send(id, r.into()));
            return false;
        };
        let r = reply(codes::PMIX_SUCCESS).encode();
        self.out.push_back(Output::Send(id, r.into()));
        let proc = proc.unwrap_or_else(|| Proc::new("pmixw-tool", 0));
        if let Some(c) = self.conns.get_mut(&id) {
            c.state = ConnState::Tool {
                proc,
                fmt,
                version: req.version.to_string(),
            };
        }
        true
    }

    /// A tool's REQ: its namespace, its version as `pmix.bfrops.mod` and a
    /// universe of one, as libpmix 4.2.2 answers (corpus/captures-4.2.2/tool-flag3).
    fn tool_job_info(proc: &Proc, version: &str) -> Reply {
        Reply::JobInfo {
            nspace: Some(PString::from(proc.nspace.to_string().as_str())),
            kvals: vec![
                kval("pmix.bfrops.mod", pstr(version)),
                kval("pmix.univ.size", Value::Uint32(1)),
            ],
        }
    }

    /// What the job info of `nspace` in `fmt` is cached under: it also
    /// holds the version the namespace's first client announced.
    fn job_info_key(&self, fmt: &Format, nspace: &str) -> (String, Format, String) {
        let version = self
            .registry
            .peer(&pmix_types::Nspace::from(nspace))
            .and_then(|p| p.version.clone())
            .unwrap_or_default();
        (nspace.to_string(), *fmt, version)
    }

    /// The REQ reply: job-level KVALs, the session and node arrays and one
    /// per-rank blob, as libpmix 4.2.2's hash module lays them out
    /// (protocol.md §6.1; corpus/captures-4.2.2).
    fn job_info(&self, fmt: &Format, nspace: &str) -> Option<Reply> {
        let key = self.job_info_key(fmt, nspace);
        if let Some(r) = self.job_info_cache.borrow().get(&key) {
            return Some(r.clone());
        }
        let r = self.build_job_info(fmt, nspace)?;
        self.job_info_cache.borrow_mut().insert(key, r.clone());
        Some(r)
    }

    fn build_job_info(&self, fmt: &Format, nspace: &str) -> Option<Reply> {
        let j = self.jobs.get(nspace)?;
        let n = j.spec.nprocs;
        // one node holding every rank, unless the host said otherwise
        let single;
        let map = match &j.nodes {
            Some(m) => m,
            None => {
                single = NodeMap {
                    nodes: vec![(j.spec.hostname.clone(), (0..n).collect())],
                    me: 0,
                };
                &single
            }
        };
        let nlist = map
            .nodes
            .iter()
            .map(|(h, _)| h.as_str())
            .collect::<Vec<_>>()
            .join(",");
        // the version the namespace's first client announced (libpmix
        // records its bfrops module the same way)
        let version = self
            .registry
            .peer(&pmix_types::Nspace::from(nspace))
            .and_then(|p| p.version.clone())
            .unwrap_or_else(|| "4.2.2".into());
        let mut kvals = vec![
            kval("pmix.job.size", Value::Uint32(n)),
            kval("pmix.max.size", Value::Uint32(n)),
            kval("pmix.num.nodes", Value::Uint32(map.nodes.len() as u32)),
            kval("pmix.jobid", pstr(nspace)),
            kval("pmix.appnum", Value::Uint32(0)),
            kval("pmix.nlist", pstr(&nlist)),
            kval("pmix.bfrops.mod", pstr(&version)),
        ];
        for i in &j.spec.info {
            kvals.push(Kval {
                key: Some(PString::from(i.key.to_string().as_str())),
                value: i.value.clone(),
            });
        }
        kvals.push(kval(
            "pmix.ssn.arr",
            info_array(vec![
                Info::new("pmix.session.id", Value::Uint32(u32::MAX)),
                Info::new("pmix.univ.size", Value::Uint32(n)),
            ]),
        ));
        // this node's array first; as libpmix's hash module builds it,
        // pmix.hname included twice
        let order = std::iter::once(map.me).chain((0..map.nodes.len()).filter(|i| *i != map.me));
        for id in order {
            let Some((host, ranks)) = map.nodes.get(id) else {
                continue;
            };
            let peers = ranks
                .iter()
                .map(|r| r.to_string())
                .collect::<Vec<_>>()
                .join(",");
            let size = ranks.len() as u32;
            kvals.push(kval(
                "pmix.node.arr",
                info_array(vec![
                    Info::new("pmix.hname", pstr(host)),
                    Info::new("pmix.node.size", Value::Uint32(size)),
                    Info::new("pmix.hname", pstr(host)),
                    Info::new("pmix.nodeid", Value::Uint32(id as u32)),
                    Info::new("pmix.lpeers", pstr(&peers)),
                    Info::new(
                        "pmix.lldr",
                        Value::ProcRank(ranks.first().copied().unwrap_or(0)),
                    ),
                    Info::new("pmix.local.size", Value::Uint32(size)),
                ]),
            ));
        }
        // every rank's node and its place there
        let mut place = vec![(0usize, 0u16); n as usize];
        for (id, (_, ranks)) in map.nodes.iter().enumerate() {
            for (k, r) in ranks.iter().enumerate() {
                if let Some(p) = place.get_mut(*r as usize) {
                    *p = (id, k as u16);
                }
            }
        }
        for (r, (id, lrank)) in place.into_iter().enumerate() {
            let host = map.nodes.get(id).map(|n| n.0.as_str()).unwrap_or("");
            let mut b = DataBuffer::new(*fmt);
            let items = [
                kval("pmix.lrank", Value::Uint16(lrank)),
                kval("pmix.nrank", Value::Uint16(lrank)),
                kval("pmix.appnum", Value::Uint32(0)),
                kval("pmix.hname", pstr(host)),
                kval("pmix.nodeid", Value::Uint32(id as u32)),
            ];
            b.pack(DataType::ProcRank, &[Value::ProcRank(r as u32)])
                .ok()?;
            for k in items {
                b.pack(DataType::Kval, &[Value::Kval(Box::new(k))]).ok()?;
            }
            kvals.push(kval(
                "pmix.pblob",
                Value::ByteObject(Box::new(Hex(Bytes::copy_from_slice(b.as_bytes())))),
            ));
        }
        Some(Reply::JobInfo {
            nspace: Some(PString::from(nspace)),
            kvals,
        })
    }

    fn message(&mut self, id: ConnId, t: u32, payload: &[u8], now: Instant) -> bool {
        let (proc, fmt, tool) = match self.conns.get(&id).map(|c| &c.state) {
            Some(ConnState::Client { proc, fmt }) => (proc.clone(), *fmt, None),
            Some(ConnState::Tool { proc, fmt, version }) => {
                (proc.clone(), *fmt, Some(version.clone()))
            }
            _ => return false,
        };
        if t == tag::HEARTBEAT && payload.is_empty() {
            return true;
        }
        let req = match Request::decode(&fmt, payload) {
            Ok(r) => r,
            // garbage after the handshake drops this peer only
            Err(_) => return false,
        };
        if let Some(version) = tool {
            // tools are not ranks of a job: init, queries, lookups, events, finalize
            match req {
                Request::Req => {
                    let r = Self::tool_job_info(&proc, &version);
                    self.reply(id, t, &r);
                    return true;
                }
                Request::Query { .. }
                | Request::JobControl { .. }
                | Request::Get { .. }
                | Request::Lookup { .. }
                | Request::RegEvents { .. }
                | Request::DeregEvents { .. }
                | Request::Log { .. } => {}
                Request::Finalize => {
                    self.reply(id, t, &Reply::Status(codes::PMIX_SUCCESS));
                    return true;
                }
                _ => {
                    self.reply(id, t, &Reply::Status(codes::PMIX_ERR_NOT_SUPPORTED));
                    return true;
                }
            }
        }
        let me = name(&proc);
        match req {
            Request::Req => match self.job_info_frame(&fmt, &me.0, t) {
                Some(b) => self.out.push_back(Output::Send(id, b)),
                None => self.reply(id, t, &Reply::Status(codes::PMIX_ERR_NOT_FOUND)),
            },
            Request::Commit { blobs } => {
                let mut local = Vec::new();
                let mut remote = Vec::new();
                for (scope, buf) in blobs {
                    // LOCAL (1) and GLOBAL (3) data is for local peers; the
                    // client sends GLOBAL keys in both sections
                    // the blob's own type byte; v20/v12 send none, and the
                    // connection's type applies
                    let bf = Format {
                        buffer_type: match buf.buffer_type {
                            1 => pmix_codec::BufferType::NonDesc,
                            2 => pmix_codec::BufferType::FullyDesc,
                            _ => fmt.buffer_type,
                        },
                        ..fmt
                    };
                    let mut b = DataBuffer::from_bytes(bf, buf.bytes.clone());
                    while !b.unread().is_empty() {
                        match b.unpack_one(DataType::Kval) {
                            Ok(Value::Kval(k)) if scope == 1 || scope == 3 => local.push(*k),
                            Ok(Value::Kval(k)) if scope == 2 => remote.push(*k),
                            Ok(_) => {}
                            Err(_) => return false,
                        }
                    }
                }
                if let Some(r) = self
                    .jobs
                    .get_mut(&me.0)
                    .and_then(|j| j.ranks.get_mut(me.1 as usize))
                {
                    // GLOBAL keys arrive in both sections: the LOCAL one
                    // holds them for local peers, the REMOTE one for others
                    let upsert = |to: &mut Vec<Kval>, k: Kval| {
                        if let Some(old) = to.iter_mut().find(|o| o.key == k.key) {
                            *old = k;
                        } else {
                            to.push(k);
                        }
                    };
                    for k in local {
                        upsert(&mut r.local, k);
                    }
                    for k in remote {
                        upsert(&mut r.remote, k);
                    }
                    r.committed = true;
                }
                self.reply(id, t, &Reply::Status(codes::PMIX_SUCCESS));
                self.out.push_back(Output::Host(HostEvent::Committed(proc)));
                self.resolve_gets(&me);
            }
            Request::Fence { procs, info } => {
                let collect = info_true(&info, "pmix.collect");
                self.collective(CollKind::Fence(collect), id, t, &me, &procs)
            }
            Request::Connect { procs, .. } => {
                self.collective(CollKind::Connect, id, t, &me, &procs)
            }
            Request::Disconnect { procs, .. } => {
                self.collective(CollKind::Disconnect, id, t, &me, &procs)
            }
            Request::GroupConstruct { group, procs, info } => {
                let g = group.map(|g| g.to_string()).unwrap_or_default();
                let members = if procs.is_empty() {
                    self.expand(&[Proc::new(&me.0, RANK_WILDCARD)])
                } else {
                    self.expand(&procs)
                };
                self.group_construct_called(&me, &g, members, &info);
                self.collective(CollKind::GroupConstruct, id, t, &me, &procs)
            }
            Request::GroupLeave { group, .. } => {
                let g = group.map(|g| g.to_string()).unwrap_or_default();
                let st = self.group_leave(&proc, &g);
                self.reply(id, t, &Reply::Status(st));
            }
            Request::GroupDestruct { group, .. } => {
                // over the group's members (group.rs); a group we do not
                // know: every rank of the caller's job
                let g = group.map(|g| g.to_string()).unwrap_or_default();
                let all = self
                    .group_destruct_members(&g)
                    .unwrap_or_else(|| vec![Proc::new(&me.0, RANK_WILDCARD)]);
                self.collective(CollKind::GroupDestruct, id, t, &me, &all)
            }
            Request::Get {
                nspace,
                rank,
                info,
                key,
            } => {
                let ns = nspace.map(|s| s.to_string()).unwrap_or_default();
                let key = key.flatten().map(|k| k.to_string());
                self.get(id, t, &fmt, ns, rank, key, &info, now);
            }
            Request::Finalize => {
                if let Some(c) = self.conns.get_mut(&id) {
                    c.finalized = true;
                }
                // before the reply, as for an abort
                self.out.push_back(Output::Host(HostEvent::Finalized(proc)));
                self.reply(id, t, &Reply::Status(codes::PMIX_SUCCESS));
            }
            Request::Abort {
                status: st,
                message,
                ..
            } => {
                // the host hears of the abort before the client can read
                // the reply and exit: a host that reaps the exit and then
                // drains its events always finds the abort first
                self.out.push_back(Output::Host(HostEvent::Aborted {
                    proc,
                    status: st,
                    message: message.map(|m| m.to_string()),
                }));
                self.reply(id, t, &Reply::Status(codes::PMIX_SUCCESS));
            }
            Request::Publish { info, .. } => {
                for i in info {
                    let k = i.key.to_string();
                    if k.starts_with("pmix.") {
                        continue;
                    }
                    self.published.retain(|(pk, _)| *pk != k);
                    self.published.push((
                        k.clone(),
                        Pdata {
                            proc: proc.clone(),
                            key: i.key.clone(),
                            value: i.value.clone(),
                        },
                    ));
                }
                self.reply(id, t, &Reply::Status(codes::PMIX_SUCCESS));
                self.resolve_lookups();
            }
            Request::Lookup { keys, info, .. } => {
                let keys: Vec<String> = keys.into_iter().flatten().map(|k| k.to_string()).collect();
                if !self.answer_lookup(id, t, &keys) {
                    if info_true(&info, "pmix.wait") {
                        let wait = info_u32(&info, "pmix.timeout")
                            .map_or(Duration::from_secs(3600), |s| Duration::from_secs(s.into()));
                        self.lookups.push(PendingLookup {
                            conn: id,
                            tag: t,
                            keys,
                            deadline: now + wait,
                        });
                    } else {
                        self.reply(id, t, &Reply::Status(codes::PMIX_ERR_NOT_FOUND));
                    }
                }
            }
            Request::Unpublish { keys, .. } => {
                let keys: Vec<String> = keys.into_iter().flatten().map(|k| k.to_string()).collect();
                self.published
                    .retain(|(k, d)| !(d.proc == proc && (keys.is_empty() || keys.contains(k))));
                self.reply(id, t, &Reply::Status(codes::PMIX_SUCCESS));
            }
            Request::RegEvents { codes, .. } => {
                if let Some(c) = self.conns.get_mut(&id) {
                    let e = c.events.get_or_insert_with(Vec::new);
                    e.extend(codes);
                }
                self.reply(id, t, &Reply::Status(codes::PMIX_SUCCESS));
            }
            Request::DeregEvents { .. } => {}
            Request::Notify {
                status: code,
                range,
                mut info,
            } => {
                self.reply(id, t, &Reply::Status(codes::PMIX_SUCCESS));
                // beyond this node, the host spreads it (and answers nothing)
                if !matches!(range, range::LOCAL | range::PROC_LOCAL) {
                    self.out.push_back(Output::Host(HostEvent::Notified {
                        code,
                        source: proc.clone(),
                        range,
                        info: info.clone(),
                    }));
                }
                info.push(Info::new("pmix.srvr.internal.notify", Value::Bool(true)));
                self.deliver_event(Some(id), code, &proc, info, range);
            }
            Request::Query { queries } => {
                let r = self.query(&queries);
                self.reply(id, t, &r);
            }
            Request::Log { data, .. } => {
                self.reply(id, t, &Reply::Status(codes::PMIX_SUCCESS));
                self.out
                    .push_back(Output::Host(HostEvent::Log { proc, data }));
            }
            // everything else needs a host we do not have
            // the native security module: a credential is the euid and egid
            // the peer's handshake carried; it validates when it matches
            // that of the connection asking
            Request::GetCredential { .. } => {
                let cred = self
                    .conns
                    .get(&id)
                    .map(|c| c.credential.clone())
                    .unwrap_or_default();
                let r = if cred.len() == 8 {
                    Reply::Credential {
                        status: codes::PMIX_SUCCESS,
                        credential: Some(cred),
                        info: Some(vec![Info::new("pmix.sec.ctype", pstr("native"))]),
                    }
                } else {
                    Reply::Status(codes::PMIX_ERR_NOT_SUPPORTED)
                };
                self.reply(id, t, &r);
            }
            Request::ValidateCred { credential, .. } => {
                let mine = self
                    .conns
                    .get(&id)
                    .map(|c| c.credential.clone())
                    .unwrap_or_default();
                let r = if credential.len() == 8 && credential == mine {
                    Reply::Infos {
                        status: codes::PMIX_SUCCESS,
                        info: Some(vec![]),
                    }
                } else {
                    Reply::Status(codes::PMIX_ERR_INVALID_CRED)
                };
                self.reply(id, t, &r);
            }
            Request::JobControl {
                targets,
                directives,
            } => self.job_control(id, t, proc, targets, &directives),
            Request::Spawn { info, apps } => {
                let request = self.next_request;
                self.next_request += 1;
                self.spawns.insert(request, (id, t));
                self.out.push_back(Output::Host(HostEvent::Spawn {
                    request,
                    requester: proc,
                    info,
                    apps,
                }));
            }
            _ => self.reply(id, t, &Reply::Status(codes::PMIX_ERR_NOT_SUPPORTED)),
        }
        true
    }

    fn expand(&self, procs: &[Proc]) -> BTreeSet<(String, u32)> {
        let mut set = BTreeSet::new();
        for p in procs {
            if let Some(members) = self.group_expand(p) {
                set.extend(members);
                continue;
            }
            let (ns, r) = name(p);
            if r == RANK_WILDCARD {
                if let Some(j) = self.jobs.get(&ns) {
                    set.extend((0..j.spec.nprocs).map(|k| (ns.clone(), k)));
                }
            } else {
                set.insert((ns, r));
            }
        }
        set
    }

    fn collective(
        &mut self,
        kind: CollKind,
        id: ConnId,
        t: u32,
        me: &(String, u32),
        procs: &[Proc],
    ) {
        let idx = match self.join_collective(kind, me, procs, (id, t)) {
            Ok(i) => i,
            Err(st) => {
                self.reply(id, t, &Reply::Status(st));
                return;
            }
        };
        let col = &self.collectives[idx];
        if col.complete() && col.spans() {
            if let CollKind::Fence(collect) = col.kind {
                // other nodes take part: the host completes it
                let col = self.collectives.remove(idx);
                let request = self.next_request;
                self.next_request += 1;
                let data = if collect {
                    let parts: Vec<(Proc, Vec<Kval>)> = col
                        .arrived
                        .iter()
                        .map(|(_, _, (ns, r))| {
                            let kv = self
                                .jobs
                                .get(ns)
                                .and_then(|j| j.ranks.get(*r as usize))
                                .map(|st| st.remote.clone())
                                .unwrap_or_default();
                            (Proc::new(ns, *r), kv)
                        })
                        .collect();
                    let refs: Vec<(Proc, &Vec<Kval>)> =
                        parts.iter().map(|(p, k)| (p.clone(), k)).collect();
                    Self::contribution(&refs).unwrap_or_default()
                } else {
                    Bytes::new()
                };
                self.fences
                    .insert(request, col.arrived.iter().map(|a| (a.0, a.1)).collect());
                self.out.push_back(Output::Host(HostEvent::Fence {
                    request,
                    procs: col
                        .expected
                        .iter()
                        .map(|(ns, r)| Proc::new(ns, *r))
                        .collect(),
                    collect,
                    data,
                }));
                return;
            }
        }
        if col.complete() {
            let col = self.collectives.remove(idx);
            let r = match col.kind {
                CollKind::Fence(_) | CollKind::Disconnect | CollKind::GroupDestruct => {
                    Reply::Status(codes::PMIX_SUCCESS)
                }
                CollKind::Connect => Reply::Connect {
                    status: codes::PMIX_SUCCESS,
                    blobs: Vec::new(),
                },
                CollKind::GroupConstruct => Reply::Id {
                    status: codes::PMIX_SUCCESS,
                    id: Some(self.group_constructed(&col.expected)),
                },
            };
            if col.kind == CollKind::GroupDestruct {
                self.group_destructed(&col.expected);
            }
            let spaces: BTreeSet<String> = col.expected.iter().map(|(ns, _)| ns.clone()).collect();
            for (conn, tg, (own, _)) in col.arrived {
                match (&r, self.fmt_of(conn)) {
                    // CONNECT: each other namespace's job data, one byte
                    // object each (STRING nspace, then its KVALs), so the
                    // caller can read the jobs it connected to
                    (Reply::Connect { .. }, Some(fmt)) => {
                        let blobs = spaces
                            .iter()
                            .filter(|ns| **ns != own)
                            .filter_map(|ns| self.connect_blob(&fmt, ns))
                            .collect();
                        let r = Reply::Connect {
                            status: codes::PMIX_SUCCESS,
                            blobs,
                        };
                        self.reply(conn, tg, &r);
                    }
                    _ => self.reply(conn, tg, &r),
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn get(
        &mut self,
        id: ConnId,
        t: u32,
        fmt: &Format,
        ns: String,
        rank: u32,
        key: Option<String>,
        info: &[Info],
        now: Instant,
    ) {
        let Some(job) = self.jobs.get(&ns) else {
            self.reply(id, t, &Reply::Status(codes::PMIX_ERR_NOT_FOUND));
            return;
        };
        if rank == RANK_WILDCARD {
            // job-level data the REQ reply did not hold: only what the host
            // added later could be here, so the answer is "nothing"
            let mut kv = Vec::new();
            if let (Some(k), Some(Reply::JobInfo { kvals, .. })) = (&key, self.job_info(fmt, &ns)) {
                kv.extend(
                    kvals
                        .into_iter()
                        .filter(|x| x.key.as_ref().map(|s| s.to_string()) == Some(k.clone())),
                );
            }
            let blobs = if kv.is_empty() {
                Vec::new()
            } else {
                match Self::blob(fmt, &Proc::new(&ns, RANK_WILDCARD), &kv) {
                    Some(b) => vec![b],
                    None => Vec::new(),
                }
            };
            self.reply(
                id,
                t,
                &Reply::Get {
                    status: codes::PMIX_SUCCESS,
                    blobs,
                },
            );
            return;
        }
        if job.ranks.get(rank as usize).is_none() {
            self.reply(id, t, &Reply::Status(codes::PMIX_ERR_NOT_FOUND));
            return;
        }
        // what a member contributed to a group it belongs to (group.rs)
        if let Some((k, v)) = key
            .as_deref()
            .and_then(|k| Some((k, self.group_value(&(ns.clone(), rank), k, info)?)))
        {
            let r = match Self::blob(fmt, &Proc::new(&ns, rank), &[kval(k, v)]) {
                Some(b) => Reply::Get {
                    status: codes::PMIX_SUCCESS,
                    blobs: vec![b],
                },
                None => Reply::Status(codes::PMIX_ERR_BAD_PARAM),
            };
            self.reply(id, t, &r);
            return;
        }
        let state = self.has_key(&(ns.clone(), rank), key.as_deref());
        if let KeyState::Here = state {
            self.answer_get(id, t, &(ns, rank));
        } else if matches!(state, KeyState::OtherScope) || info_true(info, "pmix.immediate") {
            self.reply(id, t, &Reply::Status(codes::PMIX_ERR_NOT_FOUND));
        } else {
            let Some(target) = self.jobs.get(&ns).and_then(|j| j.ranks.get(rank as usize)) else {
                return;
            };
            let wait = info_u32(info, "pmix.timeout")
                .filter(|s| *s > 0)
                .map_or(DEFAULT_GET_WAIT, |s| Duration::from_secs(s.into()));
            let asked = self.dmodex.values().any(|x| *x == (ns.clone(), rank));
            if target.elsewhere && !asked {
                let request = self.next_request;
                self.next_request += 1;
                self.dmodex.insert(request, (ns.clone(), rank));
                self.out.push_back(Output::Host(HostEvent::DirectModex {
                    request,
                    proc: Proc::new(&ns, rank),
                }));
            }
            self.gets.push(PendingGet {
                conn: id,
                tag: t,
                target: (ns, rank),
                key,
                deadline: now + wait,
            });
        }
    }

    /// A CONNECT reply's unit: STRING nspace, then the job's KVALs as the
    /// REQ reply carries them (protocol.md §5.1 row 10).
    fn connect_blob(&self, fmt: &Format, ns: &str) -> Option<Bytes> {
        let Some(Reply::JobInfo { kvals, .. }) = self.job_info(fmt, ns) else {
            return None;
        };
        let mut b = DataBuffer::new(*fmt);
        b.pack(DataType::String, &[pstr(ns)]).ok()?;
        for k in kvals {
            b.pack(DataType::Kval, &[Value::Kval(Box::new(k))]).ok()?;
        }
        Some(Bytes::copy_from_slice(b.as_bytes()))
    }

    /// A byte object holding PROC then KVALs (the GET reply's unit).
    fn blob(fmt: &Format, p: &Proc, kvals: &[Kval]) -> Option<Bytes> {
        let mut b = DataBuffer::new(*fmt);
        b.pack(DataType::Proc, &[Value::Proc(Box::new(p.clone()))])
            .ok()?;
        for k in kvals {
            b.pack(DataType::Kval, &[Value::Kval(Box::new(k.clone()))])
                .ok()?;
        }
        Some(Bytes::copy_from_slice(b.as_bytes()))
    }

    /// Every KVAL the target committed for local peers, in one byte object
    /// (libpmix sends them all, not just the requested key: protocol.md §7.3).
    fn answer_get(&mut self, id: ConnId, t: u32, target: &(String, u32)) {
        let Some(fmt) = self.fmt_of(id) else { return };
        let kv = self
            .jobs
            .get(&target.0)
            .and_then(|j| j.ranks.get(target.1 as usize))
            .map(|r| {
                if r.elsewhere {
                    r.remote.clone()
                } else {
                    r.local.clone()
                }
            })
            .unwrap_or_default();
        let r = match Self::blob(&fmt, &Proc::new(&target.0, target.1), &kv) {
            Some(b) => Reply::Get {
                status: codes::PMIX_SUCCESS,
                blobs: std::iter::once(b).chain(self.bulk(id, target)).collect(),
            },
            None => Reply::Status(codes::PMIX_ERR_BAD_PARAM),
        };
        self.reply(id, t, &r);
    }

    /// In a job spanning nodes, the first GET reply a rank of the job gets
    /// also carries every other committed rank's data (what that rank may
    /// see: LOCAL and GLOBAL keys of ranks here, REMOTE and GLOBAL of ranks
    /// elsewhere), one byte object each. libpmix's hash gds stores every
    /// byte object under its proc and answers later GETs for those ranks
    /// from that cache (protocol.md §7.3), so a rank's wireup costs one
    /// round trip instead of one per peer; libpmix's own server gets the
    /// same effect from its shared-memory store.
    fn bulk(&mut self, id: ConnId, target: &(String, u32)) -> Vec<Bytes> {
        let Some(Conn {
            state: ConnState::Client { proc, fmt },
            bulk_sent,
            ..
        }) = self.conns.get_mut(&id)
        else {
            return Vec::new();
        };
        let Some(j) = self.jobs.get(&target.0) else {
            return Vec::new();
        };
        if *bulk_sent || j.nodes.is_none() || proc.nspace.to_string() != target.0 {
            return Vec::new();
        }
        *bulk_sent = true;
        let (fmt, me) = (*fmt, proc.rank);
        j.ranks
            .iter()
            .enumerate()
            .filter(|(r, st)| st.committed && *r as u32 != target.1 && *r as u32 != me)
            .filter_map(|(r, st)| {
                let kv = if st.elsewhere { &st.remote } else { &st.local };
                Self::blob(&fmt, &Proc::new(&target.0, r as u32), kv)
            })
            .collect()
    }

    fn resolve_gets(&mut self, target: &(String, u32)) {
        let pending = std::mem::take(&mut self.gets);
        for g in pending {
            if g.target != *target {
                self.gets.push(g);
                continue;
            }
            match self.has_key(&g.target, g.key.as_deref()) {
                KeyState::Here => self.answer_get(g.conn, g.tag, &g.target),
                KeyState::OtherScope => {
                    self.reply(g.conn, g.tag, &Reply::Status(codes::PMIX_ERR_NOT_FOUND))
                }
                KeyState::Absent => self.gets.push(g),
            }
        }
    }

    /// Whether a rank's data for this node holds `key` (any key if none):
    /// libpmix answers NOT_FOUND at once when the key exists only in the
    /// scope the requester cannot see, and waits while it does not exist
    /// (protocol.md §7.3; the 4.2.2 capture's GET for `ch.bo`).
    fn has_key(&self, target: &(String, u32), key: Option<&str>) -> KeyState {
        let Some(r) = self
            .jobs
            .get(&target.0)
            .and_then(|j| j.ranks.get(target.1 as usize))
        else {
            return KeyState::Absent;
        };
        if !r.committed {
            return KeyState::Absent;
        }
        let Some(key) = key else {
            return KeyState::Here;
        };
        let has = |v: &Vec<Kval>| {
            v.iter()
                .any(|k| k.key.as_ref().is_some_and(|s| s.to_string() == key))
        };
        let (visible, other) = if r.elsewhere {
            (&r.remote, &r.local)
        } else {
            (&r.local, &r.remote)
        };
        if has(visible) {
            KeyState::Here
        } else if has(other) {
            KeyState::OtherScope
        } else {
            KeyState::Absent
        }
    }

    fn answer_lookup(&mut self, id: ConnId, t: u32, keys: &[String]) -> bool {
        let found: Vec<Pdata> = keys
            .iter()
            .filter_map(|k| self.published.iter().find(|(pk, _)| pk == k))
            .map(|(_, d)| d.clone())
            .collect();
        if found.len() < keys.len() || keys.is_empty() {
            return false;
        }
        self.reply(
            id,
            t,
            &Reply::Lookup {
                status: codes::PMIX_SUCCESS,
                data: found,
            },
        );
        true
    }

    fn resolve_lookups(&mut self) {
        let pending = std::mem::take(&mut self.lookups);
        for l in pending {
            if !self.answer_lookup(l.conn, l.tag, &l.keys) {
                self.lookups.push(l);
            }
        }
    }

    /// An event from the host (another node, the resource manager) for
    /// this node's clients and tools, within `range` of `source`: delivered
    /// on tag 0 to every connection registered for `code`.
    pub fn notify(&mut self, code: i32, source: &Proc, range: u8, info: Vec<Info>) {
        self.deliver_event(None, code, source, info, range);
    }

    /// Deliver an event to the local connections registered for its code
    /// and within its range: PROC_LOCAL and RM reach nobody here,
    /// NAMESPACE the source's namespace, anything else every connection.
    /// The sender (`from`) delivers to itself.
    fn deliver_event(
        &mut self,
        from: Option<ConnId>,
        code: i32,
        source: &Proc,
        info: Vec<Info>,
        range: u8,
    ) {
        if matches!(range, range::PROC_LOCAL | range::RM) {
            return;
        }
        // CUSTOM with `pmix.evrange`: only the procs it lists (jobctl.rs)
        let custom = jobctl::custom_range(range, &info);
        self.emit(code, source, info, range, |cid, state| {
            Some(cid) != from
                && match state {
                    ConnState::Client { proc, .. } => match &custom {
                        Some(set) => jobctl::names(set, proc),
                        None => range != range::NAMESPACE || proc.nspace == source.nspace,
                    },
                    // a tool attached to this server sees its jobs' events
                    ConnState::Tool { .. } => true,
                    ConnState::Handshake => false,
                }
        });
    }
}

impl Server {
    /// Send an event on tag 0 to every connection that registered for
    /// `code` (or for all events) and that `want` picks.
    fn emit(
        &mut self,
        code: i32,
        source: &Proc,
        info: Vec<Info>,
        range: u8,
        want: impl Fn(ConnId, &ConnState) -> bool,
    ) {
        let targets: Vec<(ConnId, Format)> = self
            .conns
            .iter()
            .filter(|(cid, c)| {
                want(**cid, &c.state)
                    && c.events
                        .as_ref()
                        .is_some_and(|e| e.is_empty() || e.contains(&code))
            })
            .filter_map(|(cid, c)| match &c.state {
                ConnState::Client { fmt, .. } | ConnState::Tool { fmt, .. } => Some((*cid, *fmt)),
                ConnState::Handshake => None,
            })
            .collect();
        for (cid, fmt) in targets {
            let ev = EventNotice {
                status: code,
                source: source.clone(),
                info: info.clone(),
                range: Some(range),
            };
            if let Ok(b) = ev.encode(&fmt) {
                self.send(cid, tag::NOTIFY, &b);
            }
        }
    }
}

impl Default for Server {
    fn default() -> Self {
        Server::new()
    }
}

/// The `server` fuzz target's entry point (and its stable replay in
/// tests/server_fuzz.rs): a fresh server with namespaces "capns" (2 ranks)
/// and "capabort" (1 rank), those of corpus/captures-4.2.2, is driven by
/// up to four peers. Byte 0 says how many
/// (1–4); then each step is a control byte (low bits: the peer; bit 7:
/// that peer's connection ends) and, unless it ends, a length byte and
/// that many bytes from the peer. Then pending waits expire. Nothing may
/// panic, and every output must name a connection that exists.
pub fn fuzz_peers(data: &[u8]) {
    let mut s = Server::new();
    s.set_max_message(1 << 16);
    for (ns, n) in [("capns", 2), ("capabort", 1)] {
        s.register_nspace(JobSpec {
            nspace: ns.into(),
            nprocs: n,
            hostname: "fuzz".into(),
            info: vec![],
        });
    }
    let now = Instant::now();
    let Some((&first, mut rest)) = data.split_first() else {
        return;
    };
    let peers: Vec<ConnId> = (0..=(first & 3)).map(|_| s.open()).collect();
    let mut open: Vec<bool> = vec![true; peers.len()];
    let check = |s: &mut Server, open: &[bool]| {
        while let Some(o) = s.poll_output() {
            if let Output::Send(c, _) | Output::Close(c) = o {
                assert!(peers.contains(&c), "output for unknown connection {c}");
                let _ = open;
            }
        }
    };
    while let Some((&ctl, tail)) = rest.split_first() {
        let p = (ctl as usize) % peers.len();
        if ctl & 0x80 != 0 {
            s.closed(peers[p]);
            open[p] = false;
            rest = tail;
        } else {
            let Some((&len, tail)) = tail.split_first() else {
                break;
            };
            let n = (len as usize).min(tail.len());
            if open[p] {
                s.received(peers[p], &tail[..n], now);
            }
            rest = &tail[n..];
        }
        check(&mut s, &open);
    }
    s.handle_timeout(now + Duration::from_secs(3700));
    check(&mut s, &open);
    for (i, p) in peers.iter().enumerate() {
        if open[i] {
            s.closed(*p);
        }
    }
    check(&mut s, &open);
}
