//! A PMI-1/PMI-2 server core, sans-IO, with the verbs every core of the
//! crate has ([`crate::sansio`]): the driver hands it each connection's
//! bytes and the time ([`Server::handle_input`]), carries out what
//! [`Server::poll_transmit`] and [`Server::poll_event`] return, and wakes
//! it at [`Server::poll_timeout`] ([`Server::handle_timeout`]: a
//! `PMI_PORT` connection that does not name itself in time is closed); the host
//! registers jobs ([`Server::register`]) and acts on the [`Event`]s
//! (abort, spawn, finalize, a rank lost). One table ([`COMMANDS`]) drives
//! every command; every refusal is a typed [`Refusal`], logged with its
//! reason. Version negotiation follows MPICH's hydra: a PMI-1 client
//! asking 1.0 to 1.2 is answered 1.2 (barrier groups), a PMI-2 client
//! 2.0. Wire facts and evidence: spec-notes/pmi.md.
//!
//! Laid out by concern: this file holds the types, the connections and
//! the routing; `commands.rs` the command table ([`COMMANDS`]);
//! `session.rs` a connection's life (init, naming a rank, finalize,
//! abort); `kvs.rs` the per-job state (KVS, barriers and fences, node and
//! job attributes); `names.rs` the name service; `spawn.rs` spawn.
//!
//! ```
//! use pmix_wire::pmi::server::{JobSpec, Server, Transmit};
//! use std::time::Instant;
//! let mut s = Server::new();
//! s.register(JobSpec::single_node("job", 1));
//! s.open(1, Some(("job", 0)), Instant::now());
//! s.handle_input(1, b"cmd=init pmi_version=1 pmi_subversion=1\n", Instant::now());
//! assert_eq!(s.poll_transmit(), Some(Transmit::Send(1, b"cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=2\n".to_vec())));
//! ```

use commands::command;
pub use commands::{Command, COMMANDS};
mod commands;
#[cfg(unix)]
pub mod fd;
mod kvs;
mod names;
mod session;
mod spawn;

use crate::pmi::wire::{next_frame, Frame, FrameError, FrameLimits, Message};
use std::collections::{BTreeMap, BTreeSet, HashMap};

pub use crate::sansio::ConnId;
use crate::sansio::Deadlines;
use std::time::{Duration, Instant};

/// Longest kvsname, key and value the server announces (`get_maxes`) and
/// accepts: hydra's PMI_MAXKVSLEN, PMI_MAXKEYLEN, PMI_MAXVALLEN.
pub const MAX_KVSNAME: usize = 256;
/// See [`MAX_KVSNAME`].
pub const MAX_KEY: usize = 64;
/// See [`MAX_KVSNAME`].
pub const MAX_VALUE: usize = 1024;
/// The KVS bytes one job may hold (keys and values).
pub const MAX_JOB_KVS: usize = 64 << 20;
/// The most commands one spawn may carry.
pub const MAX_SPAWN_CMDS: usize = 256;

/// A job as the host registers it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobSpec {
    /// Its kvsname (PMI-2's jobid).
    pub kvsname: String,
    /// How many ranks.
    pub size: u32,
    /// The ranks served here (a multi-node job's share); all if empty.
    pub local: Vec<u32>,
    /// Each rank's application number (index = rank); 0 when missing.
    pub appnum: Vec<i32>,
    /// The universe size (`get_universe_size`, `universeSize`).
    pub universe: u32,
    /// `PMI_process_mapping`: `(vector,(0,1,N))` on one node.
    pub mapping: String,
    /// The spawning job's kvsname, for a spawned job.
    pub spawner: Option<String>,
    /// Keys the job's KVS holds from the start (a spawn's preput).
    pub preput: Vec<(String, String)>,
    /// The job is served PMIx too (issue #27): its KVS and the PMIx
    /// server's modex store are one, and its world barrier is the PMIx
    /// fence. Each rank's puts go to the host at its world barrier
    /// ([`Event::JointFence`]), which answers with the store's keys
    /// ([`Server::joint_done`]); barriers of fewer ranks are refused.
    pub joint: bool,
}

impl JobSpec {
    /// A job of `size` ranks on this one node.
    pub fn single_node(kvsname: &str, size: u32) -> JobSpec {
        JobSpec {
            kvsname: kvsname.into(),
            size,
            local: Vec::new(),
            appnum: Vec::new(),
            universe: size,
            mapping: format!("(vector,(0,1,{size}))"),
            spawner: None,
            preput: Vec::new(),
            joint: false,
        }
    }
}

/// One command of a spawn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct App {
    /// The executable.
    pub cmd: String,
    /// Its arguments (without the executable).
    pub argv: Vec<String>,
    /// How many ranks.
    pub maxprocs: u32,
    /// Its info keys (`wdir`, `host` …).
    pub info: Vec<(String, String)>,
}

/// What the host must know or do.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// A rank completed init, speaking this version.
    Initialized {
        /// Its job.
        kvsname: String,
        /// Its rank.
        rank: u32,
        /// The version agreed (1.2 or 2.0).
        version: (u32, u32),
    },
    /// A rank finalized.
    Finalized {
        /// Its job.
        kvsname: String,
        /// Its rank.
        rank: u32,
    },
    /// A rank called abort: the host ends the job.
    Aborted {
        /// Its job.
        kvsname: String,
        /// Its rank.
        rank: u32,
        /// The exit code it asked for.
        status: i32,
        /// Its message.
        message: String,
    },
    /// A rank's connection ended before it finalized.
    Lost {
        /// Its job.
        kvsname: String,
        /// Its rank.
        rank: u32,
    },
    /// A barrier or fence of a job that spans nodes: every local member
    /// has entered. The host exchanges `data` (this node's puts since the
    /// last one, [`encode_pairs`]) with the other nodes and answers
    /// [`Server::fence_done`] with every node's data concatenated.
    Fence {
        /// The id to answer with.
        request: u64,
        /// The job.
        kvsname: String,
        /// This node's puts since the last fence.
        data: Vec<u8>,
    },
    /// A name operation of a job that spans nodes: the host carries it
    /// to the job's name service (Slurm's, through PMI-2) and answers
    /// [`Server::name_done`].
    Name {
        /// The id to answer with.
        request: u64,
        /// What to do.
        op: NameOp,
    },
    /// A rank of a joint job ([`JobSpec::joint`]) entered its world
    /// barrier: the host contributes `puts` (its puts since its last
    /// barrier) to the rank's data in the PMIx store, enters the rank
    /// into the job's PMIx fence, and once that completes answers
    /// [`Server::joint_done`] with the store's keys.
    JointFence {
        /// The id to answer with.
        request: u64,
        /// The job.
        kvsname: String,
        /// The rank.
        rank: u32,
        /// Its puts since its last barrier (the last value of each key,
        /// by key).
        puts: Vec<(String, String)>,
    },
    /// A rank asked to spawn a job: the host starts it (registering it
    /// with `spawner` and `preput`) and answers [`Server::spawned`].
    Spawn {
        /// The id to answer with.
        request: u64,
        /// The spawning job.
        kvsname: String,
        /// The spawning rank.
        rank: u32,
        /// What to start.
        apps: Vec<App>,
        /// Keys the new job's KVS must hold.
        preput: Vec<(String, String)>,
    },
}

/// A name-service operation ([`Event::Name`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NameOp {
    /// Publish `name` as `port`.
    Publish {
        /// The service name.
        name: String,
        /// Its port.
        port: String,
    },
    /// Withdraw `name`.
    Unpublish {
        /// The service name.
        name: String,
    },
    /// The port of `name`.
    Lookup {
        /// The service name.
        name: String,
    },
}

/// What the driver must do on a connection ([`Server::poll_transmit`]).
pub type Transmit = crate::sansio::Transmit<Vec<u8>>;

/// What the core's parts queue, sorted into the driver's two queues
/// ([`Server::poll_transmit`], [`Server::poll_event`]), as the PMIx
/// server core does (the same types: [`crate::sansio`]).
type Output = crate::sansio::Output<Event, Vec<u8>>;
type Outbox = crate::sansio::Outbox<Event, Vec<u8>>;

/// How long a connection that came in through `PMI_PORT` may stay
/// anonymous: it must name itself (`initack` with its `pmiid`, or
/// `fullinit`) within this time, or it is closed, as the PMIx server
/// closes a connection that does not finish its handshake.
pub const IDENTIFY_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a request was refused (answered with rc≠0, or the connection
/// closed when its bytes cannot be framed).
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// The bytes are no PMI message (the connection is closed).
    #[error("{0}")]
    Frame(#[from] FrameError),
    /// A framed message that does not parse.
    #[error("{0}")]
    Malformed(#[from] crate::pmi::wire::Malformed),
    /// A command no table row names.
    #[error("unknown command {0:?}")]
    Unknown(String),
    /// A version the server does not speak.
    #[error("PMI version {0}.{1} is not supported (1.0-1.2, 2.0)")]
    Version(i64, i64),
    /// A command before init or before the rank is known.
    #[error("{0} before init")]
    NotInitialized(&'static str),
    /// A command sent in the other version's wire.
    #[error("{cmd} is a PMI-{want} command")]
    WrongWire {
        /// The command.
        cmd: &'static str,
        /// The wire it belongs to.
        want: u32,
    },
    /// A missing or unusable field.
    #[error("{cmd}: {detail}")]
    BadField {
        /// The command.
        cmd: &'static str,
        /// What is wrong.
        detail: String,
    },
    /// A rank or id this server does not hold.
    #[error("no rank {0}")]
    NoSuchRank(String),
    /// The rank is already held by another open connection.
    #[error("rank {1} of {0} is already connected")]
    Taken(String, u32),
    /// Over a limit.
    #[error("{0}")]
    Limit(String),
    /// A key or name nobody put or published (hydra's `key_not_found`,
    /// `service_not_found`): an ordinary answer, logged at debug level.
    #[error("{0}")]
    NotFound(&'static str),
    /// An anonymous connection did not name itself in time (closed).
    #[error("did not name itself (initack or fullinit) within {0:?}")]
    Unnamed(Duration),
}

/// How a request was framed, so its answer is framed alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WireKind {
    V1,
    V2,
}

/// One request, parsed.
struct Query {
    wire: WireKind,
    msg: Message,
}

/// A request answered later (a barrier, a fence, a waiting node attribute,
/// a spawn).
#[derive(Clone, Debug)]
struct Waiter {
    conn: ConnId,
    wire: WireKind,
    resp: &'static str,
    thrid: Option<String>,
    tag: Option<String>,
}

struct Barrier {
    members: BTreeSet<u32>,
    arrived: BTreeMap<u32, Waiter>,
    /// Sent to the host as this fence request.
    upstream: Option<u64>,
}

struct Job {
    spec: JobSpec,
    kvs: HashMap<String, String>,
    kvs_bytes: usize,
    node: HashMap<String, String>,
    node_waits: Vec<(String, Waiter)>,
    barriers: BTreeMap<String, Barrier>,
    conns: HashMap<u32, ConnId>,
    lost: BTreeSet<u32>,
    /// Puts not yet sent to the other nodes (a job that spans nodes).
    unsent: Vec<(String, String)>,
    /// A joint job's puts not yet given to the host, by rank (a key put
    /// again replaces its value: what waits is bounded by the KVS).
    joint_puts: BTreeMap<u32, BTreeMap<String, String>>,
}

impl Job {
    fn spans_nodes(&self) -> bool {
        !self.spec.local.is_empty() && self.spec.local.len() < self.spec.size as usize
    }

    fn local(&self) -> BTreeSet<u32> {
        if self.spec.local.is_empty() {
            (0..self.spec.size).collect()
        } else {
            self.spec.local.iter().copied().collect()
        }
    }
}

#[derive(Default)]
struct Conn {
    buf: Vec<u8>,
    who: Option<(String, u32)>,
    /// An anonymous connection's deadline to name itself.
    deadline: Option<Instant>,
    version: Option<(u32, u32)>,
    finalized: bool,
    closed: bool,
}

/// The PMI server core.
pub struct Server {
    jobs: BTreeMap<String, Job>,
    conns: HashMap<ConnId, Conn>,
    /// PMI_PORT connections name themselves by an id (`PMI_ID`).
    ids: HashMap<u32, (String, u32)>,
    published: BTreeMap<String, String>,
    spawns: HashMap<u64, (ConnId, WireKind, Option<String>)>,
    /// Fences sent to the host: job and barrier name.
    fences: HashMap<u64, (String, String)>,
    /// Joint world barriers out with the host: job, rank, who to answer.
    joints: HashMap<u64, (String, u32, Waiter)>,
    /// Name operations sent to the host: who asked, in which wire, and
    /// the answer's command.
    names: HashMap<u64, Waiter>,
    next_request: u64,
    out: Outbox,
    limits: FrameLimits,
    /// Anonymous connections by their deadline to name themselves.
    unnamed: Deadlines<ConnId>,
    identify_timeout: Duration,
}

impl Default for Server {
    fn default() -> Server {
        Server::new()
    }
}

fn field<'a>(q: &'a Query, cmd: &'static str, key: &str) -> Result<&'a str, Refusal> {
    q.msg.get(key).ok_or_else(|| Refusal::BadField {
        cmd,
        detail: format!("no {key}"),
    })
}

fn int(q: &Query, cmd: &'static str, key: &str) -> Result<i64, Refusal> {
    let v = field(q, cmd, key)?;
    v.trim().parse().map_err(|_| Refusal::BadField {
        cmd,
        detail: format!("{key}={v:?} is not a number"),
    })
}

fn check_len(cmd: &'static str, what: &str, s: &str, max: usize) -> Result<(), Refusal> {
    if s.len() > max {
        return Err(Refusal::BadField {
            cmd,
            detail: format!("{what} of {} bytes, more than {max}", s.len()),
        });
    }
    Ok(())
}

impl Server {
    /// A server with no jobs.
    pub fn new() -> Server {
        Server {
            jobs: BTreeMap::new(),
            conns: HashMap::new(),
            ids: HashMap::new(),
            published: BTreeMap::new(),
            spawns: HashMap::new(),
            fences: HashMap::new(),
            joints: HashMap::new(),
            names: HashMap::new(),
            next_request: 1,
            out: Outbox::default(),
            limits: FrameLimits::default(),
            unnamed: Deadlines::default(),
            identify_timeout: IDENTIFY_TIMEOUT,
        }
    }

    /// How long an anonymous connection may take to name itself
    /// (default [`IDENTIFY_TIMEOUT`]).
    pub fn set_identify_timeout(&mut self, t: Duration) {
        self.identify_timeout = t;
    }

    /// Set the framing limits (the longest v1 line and v2 body).
    pub fn set_limits(&mut self, limits: FrameLimits) {
        self.limits = limits;
    }

    /// Register a job (its preput keys in its KVS).
    pub fn register(&mut self, spec: JobSpec) {
        let mut job = Job {
            kvs: HashMap::new(),
            kvs_bytes: 0,
            node: HashMap::new(),
            node_waits: Vec::new(),
            barriers: BTreeMap::new(),
            conns: HashMap::new(),
            lost: BTreeSet::new(),
            unsent: Vec::new(),
            joint_puts: BTreeMap::new(),
            spec,
        };
        for (k, v) in job.spec.preput.clone() {
            job.kvs_bytes += k.len() + v.len();
            job.kvs.insert(k, v);
        }
        self.jobs.insert(job.spec.kvsname.clone(), job);
    }

    /// Whether a job is registered.
    pub fn has_job(&self, kvsname: &str) -> bool {
        self.jobs.contains_key(kvsname)
    }

    /// A value of a job's KVS (what a `get` would answer).
    pub fn kvs_value(&self, kvsname: &str, key: &str) -> Option<&str> {
        self.jobs.get(kvsname)?.kvs.get(key).map(String::as_str)
    }

    /// Let a `PMI_PORT` connection name itself `id` (its `PMI_ID`) for
    /// rank `rank` of `kvsname`.
    pub fn expect_id(&mut self, id: u32, kvsname: &str, rank: u32) {
        self.ids.insert(id, (kvsname.to_string(), rank));
    }

    /// A new connection: of a known rank (a `PMI_FD` the launcher gave
    /// it), or anonymous until `initack`/`fullinit` names it, which it must
    /// do by `now` + the identify timeout.
    pub fn open(&mut self, conn: ConnId, who: Option<(&str, u32)>, now: Instant) {
        let mut c = Conn::default();
        match who {
            Some((k, r)) => {
                c.who = Some((k.to_string(), r));
                if let Some(j) = self.jobs.get_mut(k) {
                    j.conns.insert(r, conn);
                }
            }
            None => {
                let at = now + self.identify_timeout;
                c.deadline = Some(at);
                self.unnamed.insert(at, conn);
            }
        }
        self.conns.insert(conn, c);
    }

    /// When [`Server::handle_timeout`] should next be called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.unnamed.first()
    }

    /// Close the anonymous connections whose time to name themselves has
    /// passed (logged with the reason).
    pub fn handle_timeout(&mut self, now: Instant) {
        while let Some(conn) = self.unnamed.pop_due(now) {
            if let Some(c) = self.conns.get_mut(&conn) {
                c.deadline = None;
            }
            self.drop_conn(conn, Refusal::Unnamed(self.identify_timeout));
        }
    }

    /// The connection ended (EOF or an error): a rank that had not
    /// finalized is lost, and the barriers it belonged to fail.
    pub fn closed(&mut self, conn: ConnId) {
        let Some(c) = self.conns.remove(&conn) else {
            return;
        };
        if let Some(at) = c.deadline {
            self.unnamed.remove(at, conn);
        }
        let Some((k, r)) = c.who else {
            return;
        };
        let Some(job) = self.jobs.get_mut(&k) else {
            return;
        };
        if job.conns.get(&r) == Some(&conn) {
            job.conns.remove(&r);
        }
        // a joint barrier of its own has no one left to answer
        self.joints.retain(|_, (_, _, w)| w.conn != conn);
        if c.finalized || c.closed {
            return;
        }
        tracing::debug!(target: "pmix_wire::pmi", conn, "rank {r} of {k} left before finalize");
        job.lost.insert(r);
        self.out.push_back(Output::Host(Event::Lost {
            kvsname: k.clone(),
            rank: r,
        }));
        self.fail_barriers(&k, r);
    }

    /// The next upcall for the host. A driver drains these before
    /// [`Server::poll_transmit`], as for the PMIx server core.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.out.events.pop_front()
    }

    /// The next bytes to write or connection to close, in order per
    /// connection.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.out.transmits.pop_front()
    }

    /// Bytes from a connection, at `now`: what `now` has passed expires
    /// first ([`Server::handle_timeout`]), as in every core, so bytes of a
    /// connection past its naming deadline are not read.
    pub fn handle_input(&mut self, conn: ConnId, data: &[u8], now: Instant) {
        self.handle_timeout(now);
        let lim = self.limits;
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        if c.closed {
            return;
        }
        c.buf.extend_from_slice(data);
        loop {
            let Some(c) = self.conns.get_mut(&conn) else {
                return;
            };
            let (frame, used) = match next_frame(&c.buf, lim) {
                Ok(Some(f)) => f,
                Ok(None) => return,
                Err(e) => {
                    self.drop_conn(conn, e.into());
                    return;
                }
            };
            c.buf.drain(..used);
            let wire = match frame {
                Frame::V2(_) => WireKind::V2,
                _ => WireKind::V1,
            };
            let msg = match frame.message() {
                Ok(m) => m,
                Err(e) => {
                    self.drop_conn(conn, e.into());
                    return;
                }
            };
            self.dispatch(conn, Query { wire, msg });
        }
    }

    /// Bytes that cannot be a message: logged, the connection closed (its
    /// rank is then lost, unless it finalized).
    fn drop_conn(&mut self, conn: ConnId, why: Refusal) {
        tracing::warn!(target: "pmix_wire::pmi", conn, "closing: {why}");
        self.out.push_back(Output::Close(conn));
        self.closed(conn);
    }

    fn dispatch(&mut self, conn: ConnId, q: Query) {
        tracing::trace!(target: "pmix_wire::pmi", conn, wire = ?q.wire, cmd = %q.msg.cmd, pairs = ?q.msg.pairs, "request");
        let Some(cmd) = command(&q.msg.cmd, q.wire) else {
            let r = match COMMANDS.iter().find(|c| c.name == q.msg.cmd) {
                Some(c) => Refusal::WrongWire {
                    cmd: c.name,
                    want: c.wire,
                },
                None => Refusal::Unknown(q.msg.cmd.clone()),
            };
            let resp = format!("{}_response", q.msg.cmd);
            self.refuse(conn, &q, &resp, r);
            return;
        };
        let ready = self.conns.get(&conn).is_some_and(|c| c.who.is_some());
        let inited = self.conns.get(&conn).is_some_and(|c| c.version.is_some());
        let r = if cmd.needs_rank && !(ready && inited) {
            Err(Refusal::NotInitialized(cmd.name))
        } else {
            (cmd.handler)(self, conn, &q)
        };
        if let Err(e) = r {
            self.refuse(conn, &q, cmd.response, e);
        }
    }

    fn refuse(&mut self, conn: ConnId, q: &Query, resp: &str, why: Refusal) {
        if matches!(why, Refusal::NotFound(_)) {
            tracing::debug!(target: "pmix_wire::pmi", conn, cmd = %q.msg.cmd, "answered: {why}");
        } else {
            tracing::warn!(target: "pmix_wire::pmi", conn, cmd = %q.msg.cmd, "refused: {why}");
        }
        if resp.is_empty() {
            return;
        }
        let key = if q.wire == WireKind::V1 {
            "msg"
        } else {
            "errmsg"
        };
        let text = why.to_string();
        let w = Waiter {
            conn,
            wire: q.wire,
            resp: "",
            thrid: q.msg.get("thrid").map(str::to_string),
            tag: None,
        };
        self.send_to(&w, resp, &[("rc", "1"), (key, &text)]);
    }

    fn waiter(&self, conn: ConnId, q: &Query, resp: &'static str) -> Waiter {
        Waiter {
            conn,
            wire: q.wire,
            resp,
            thrid: q.msg.get("thrid").map(str::to_string),
            tag: None,
        }
    }

    /// Send `resp` with `pairs` to a waiter (v2 answers carry its thrid).
    fn send_to(&mut self, w: &Waiter, resp: &str, pairs: &[(&str, &str)]) {
        let mut m = Message::new(resp, &[]);
        if let (WireKind::V2, Some(t)) = (w.wire, &w.thrid) {
            m.pairs.push(("thrid".into(), t.clone()));
        }
        m.pairs
            .extend(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let bytes = match w.wire {
            WireKind::V1 => m.encode_v1(),
            WireKind::V2 => match m.encode_v2() {
                Some(b) => b,
                None => {
                    tracing::warn!(target: "pmix_wire::pmi", conn = w.conn, "answer {resp} too long for v2");
                    return;
                }
            },
        };
        self.out.push_back(Output::Send(w.conn, bytes));
    }

    fn answer(&mut self, conn: ConnId, q: &Query, pairs: &[(&str, &str)]) -> Result<(), Refusal> {
        let resp = command(&q.msg.cmd, q.wire).map_or("", |c| c.response);
        let w = self.waiter(conn, q, resp);
        let mut all = vec![("rc", "0")];
        all.extend_from_slice(pairs);
        self.send_to(&w, resp, &all);
        Ok(())
    }

    fn who(&self, conn: ConnId) -> (String, u32) {
        self.conns
            .get(&conn)
            .and_then(|c| c.who.clone())
            .unwrap_or_default()
    }

    fn job(&self, conn: ConnId) -> Option<&Job> {
        self.jobs.get(&self.who(conn).0)
    }

    // ---- the handlers, in table order ----
}

/// Key/value pairs as one blob for the other nodes: each pair a u32 LE
/// key length, the key, a u32 LE value length, the value.
pub fn encode_pairs(pairs: &[(String, String)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (k, v) in pairs {
        for s in [k, v] {
            out.extend_from_slice(&(s.len() as u32).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        }
    }
    out
}

/// The inverse of [`encode_pairs`] (over concatenated blobs); None if the
/// bytes are not such pairs. Every length is checked against the bytes
/// left before anything is taken.
pub fn decode_pairs(mut b: &[u8]) -> Option<Vec<(String, String)>> {
    let take = |b: &mut &[u8]| -> Option<String> {
        let n = u32::from_le_bytes(b.get(..4)?.try_into().ok()?) as usize;
        let s = b.get(4..4usize.checked_add(n)?)?;
        let out = String::from_utf8(s.to_vec()).ok()?;
        *b = &b[4 + n..];
        Some(out)
    };
    let mut out = Vec::new();
    while !b.is_empty() {
        let k = take(&mut b)?;
        let v = take(&mut b)?;
        out.push((k, v));
    }
    Some(out)
}

impl Waiter {
    fn errkey(&self) -> &'static str {
        match self.wire {
            WireKind::V1 => "msg",
            WireKind::V2 => "errmsg",
        }
    }
}

#[cfg(test)]
mod tests;
