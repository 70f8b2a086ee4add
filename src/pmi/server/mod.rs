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
//! ```
//! use pmix_wire::pmi::server::{JobSpec, Server, Transmit};
//! use std::time::Instant;
//! let mut s = Server::new();
//! s.register(JobSpec::single_node("job", 1));
//! s.open(1, Some(("job", 0)), Instant::now());
//! s.handle_input(1, b"cmd=init pmi_version=1 pmi_subversion=1\n", Instant::now());
//! assert_eq!(s.poll_transmit(), Some(Transmit::Send(1, b"cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=2\n".to_vec())));
//! ```

#[cfg(unix)]
pub mod fd;

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

type Handler = fn(&mut Server, ConnId, &Query) -> Result<(), Refusal>;

/// One row of the command table.
pub struct Command {
    /// The request's `cmd`.
    pub name: &'static str,
    /// The answer's `cmd` (empty: no answer).
    pub response: &'static str,
    /// The PMI major version whose wire carries it (0: both).
    pub wire: u32,
    /// Whether it needs init and a known rank first.
    pub needs_rank: bool,
    handler: Handler,
}

macro_rules! row {
    ($name:literal, $resp:literal, $wire:literal, $rank:literal, $h:ident) => {
        Command {
            name: $name,
            response: $resp,
            wire: $wire,
            needs_rank: $rank,
            handler: Server::$h,
        }
    };
}

/// Every command the server answers, PMI-1 then PMI-2 (MPICH's
/// src/pmi/maint/pmi-1.1.txt, pmi-1.2.txt, pmi-2.0.txt).
pub const COMMANDS: &[Command] = &[
    row!("init", "response_to_init", 0, false, init),
    row!("initack", "initack", 1, false, initack),
    row!("get_maxes", "maxes", 1, false, get_maxes),
    row!("get_appnum", "appnum", 1, true, get_appnum),
    row!("get_my_kvsname", "my_kvsname", 1, true, get_my_kvsname),
    row!(
        "get_universe_size",
        "universe_size",
        1,
        true,
        get_universe_size
    ),
    row!("put", "put_result", 1, true, put),
    row!("get", "get_result", 1, true, get),
    row!("barrier_in", "barrier_out", 1, true, barrier_in),
    row!("publish_name", "publish_result", 1, true, publish),
    row!("unpublish_name", "unpublish_result", 1, true, unpublish),
    row!("lookup_name", "lookup_result", 1, true, lookup),
    row!("spawn", "spawn_result", 1, true, spawn_v1),
    row!("abort", "", 0, true, abort),
    row!("finalize", "finalize_ack", 1, true, finalize),
    row!("fullinit", "fullinit-response", 2, false, fullinit),
    row!("job-getid", "job-getid-response", 2, true, job_getid),
    row!(
        "info-putnodeattr",
        "info-putnodeattr-response",
        2,
        true,
        putnodeattr
    ),
    row!(
        "info-getnodeattr",
        "info-getnodeattr-response",
        2,
        true,
        getnodeattr
    ),
    row!(
        "info-getjobattr",
        "info-getjobattr-response",
        2,
        true,
        getjobattr
    ),
    row!("kvs-put", "kvs-put-response", 2, true, kvs_put),
    row!("kvs-get", "kvs-get-response", 2, true, kvs_get),
    row!("kvs-fence", "kvs-fence-response", 2, true, kvs_fence),
    row!("name-publish", "name-publish-response", 2, true, publish),
    row!(
        "name-unpublish",
        "name-unpublish-response",
        2,
        true,
        unpublish
    ),
    row!("name-lookup", "name-lookup-response", 2, true, lookup),
    row!("spawn", "spawn-response", 2, true, spawn_v2),
    row!("finalize", "finalize-response", 2, true, finalize),
];

fn command(name: &str, wire: WireKind) -> Option<&'static Command> {
    let major = match wire {
        WireKind::V1 => 1,
        WireKind::V2 => 2,
    };
    COMMANDS
        .iter()
        .find(|c| c.name == name && (c.wire == 0 || c.wire == major))
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

    /// Bytes from a connection, at `now` (the PMI wire has no deadline
    /// inside a message; `now` keeps the verbs of every core, and the
    /// naming deadline runs from [`Server::open`]).
    pub fn handle_input(&mut self, conn: ConnId, data: &[u8], now: Instant) {
        let _ = now;
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

    fn init(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let v = int(q, "init", "pmi_version")?;
        let s = int(q, "init", "pmi_subversion")?;
        let agreed = match (v, s) {
            (1, 0..=2) => (1, 2),
            (2, 0) => (2, 0),
            _ => {
                // answered like hydra's refusal, then closed
                let r = Refusal::Version(v, s);
                self.refuse(conn, q, "response_to_init", r);
                self.out.push_back(Output::Close(conn));
                if let Some(c) = self.conns.get_mut(&conn) {
                    c.closed = true;
                }
                return Ok(());
            }
        };
        if let Some(c) = self.conns.get_mut(&conn) {
            c.version = Some(agreed);
        }
        let (a, b) = (agreed.0.to_string(), agreed.1.to_string());
        self.answer(conn, q, &[("pmi_version", &a), ("pmi_subversion", &b)])?;
        let (k, r) = self.who(conn);
        if self.jobs.contains_key(&k) && agreed.0 == 1 {
            self.out.push_back(Output::Host(Event::Initialized {
                kvsname: k,
                rank: r,
                version: agreed,
            }));
        }
        Ok(())
    }

    /// Name an anonymous connection (`PMI_PORT`) as rank `r` of `k`.
    fn claim(&mut self, conn: ConnId, k: &str, r: u32) -> Result<(), Refusal> {
        let job = self
            .jobs
            .get_mut(k)
            .ok_or_else(|| Refusal::NoSuchRank(format!("{r} of {k}")))?;
        if r >= job.spec.size {
            return Err(Refusal::NoSuchRank(format!("{r} of {k}")));
        }
        if let Some(&other) = job.conns.get(&r) {
            if other != conn {
                return Err(Refusal::Taken(k.to_string(), r));
            }
        }
        job.conns.insert(r, conn);
        if let Some(c) = self.conns.get_mut(&conn) {
            c.who = Some((k.to_string(), r));
            if let Some(at) = c.deadline.take() {
                self.unnamed.remove(at, conn);
            }
        }
        Ok(())
    }

    fn initack(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let id = int(q, "initack", "pmiid")?;
        let (k, r) = u32::try_from(id)
            .ok()
            .and_then(|i| self.ids.get(&i).cloned())
            .ok_or_else(|| Refusal::NoSuchRank(format!("pmiid {id}")))?;
        self.claim(conn, &k, r)?;
        let size = self.jobs[&k].spec.size.to_string();
        // the answer, then three `set` lines (MPICH's v1-initack wire)
        self.answer(conn, q, &[])?;
        let w = self.waiter(conn, q, "set");
        self.send_to(&w, "set", &[("size", &size)]);
        self.send_to(&w, "set", &[("rank", &r.to_string())]);
        self.send_to(&w, "set", &[("debug", "0")]);
        Ok(())
    }

    fn get_maxes(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let (a, b, c) = (
            MAX_KVSNAME.to_string(),
            MAX_KEY.to_string(),
            MAX_VALUE.to_string(),
        );
        self.answer(
            conn,
            q,
            &[("kvsname_max", &a), ("keylen_max", &b), ("vallen_max", &c)],
        )
    }

    fn appnum_of(&self, conn: ConnId) -> i32 {
        let (_, r) = self.who(conn);
        self.job(conn)
            .and_then(|j| j.spec.appnum.get(r as usize).copied())
            .unwrap_or(0)
    }

    fn get_appnum(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let a = self.appnum_of(conn).to_string();
        self.answer(conn, q, &[("appnum", &a)])
    }

    fn get_my_kvsname(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let (k, _) = self.who(conn);
        self.answer(conn, q, &[("kvsname", &k)])
    }

    fn get_universe_size(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let u = self.job(conn).map_or(0, |j| j.spec.universe).to_string();
        self.answer(conn, q, &[("size", &u)])
    }

    /// Store `key` in job `k`'s KVS (`PMI_` keys are the server's).
    fn store(
        &mut self,
        cmd: &'static str,
        (k, rank): (&str, u32),
        key: &str,
        value: &str,
    ) -> Result<(), Refusal> {
        check_len(cmd, "key", key, MAX_KEY)?;
        check_len(cmd, "value", value, MAX_VALUE)?;
        if key.starts_with("PMI_") {
            return Err(Refusal::BadField {
                cmd,
                detail: format!("keys beginning with PMI_ are reserved ({key})"),
            });
        }
        let job = self
            .jobs
            .get_mut(k)
            .ok_or_else(|| Refusal::NoSuchRank(format!("job {k}")))?;
        let old = job.kvs.get(key).map_or(0, |v| key.len() + v.len());
        let new = job.kvs_bytes - old + key.len() + value.len();
        if new > MAX_JOB_KVS {
            return Err(Refusal::Limit(format!(
                "job {k} would hold {new} KVS bytes, more than {MAX_JOB_KVS}"
            )));
        }
        job.kvs_bytes = new;
        job.kvs.insert(key.to_string(), value.to_string());
        if job.spans_nodes() {
            job.unsent.push((key.to_string(), value.to_string()));
        }
        if job.spec.joint {
            job.joint_puts
                .entry(rank)
                .or_default()
                .insert(key.to_string(), value.to_string());
        }
        Ok(())
    }

    fn put(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let (mine, rank) = self.who(conn);
        let k = q.msg.get("kvsname").unwrap_or(&mine).to_string();
        if k != mine {
            return Err(Refusal::BadField {
                cmd: "put",
                detail: format!("kvsname {k} is not this rank's ({mine})"),
            });
        }
        self.store(
            "put",
            (&k, rank),
            field(q, "put", "key")?,
            field(q, "put", "value")?,
        )?;
        self.answer(conn, q, &[])
    }

    /// A job attribute: what info-getjobattr (and a PMI-1 get of a
    /// `PMI_` key) answers.
    fn jobattr(job: &Job, key: &str) -> Option<String> {
        match key {
            "PMI_process_mapping" => Some(job.spec.mapping.clone()),
            "universeSize" => Some(job.spec.universe.to_string()),
            "PMI_dead_processes" => Some(
                job.lost
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            _ => job.kvs.get(key).cloned(),
        }
    }

    fn get(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let (mine, _) = self.who(conn);
        let k = q.msg.get("kvsname").unwrap_or(&mine).to_string();
        let key = field(q, "get", "key")?;
        let job = self
            .jobs
            .get(&k)
            .ok_or_else(|| Refusal::NoSuchRank(format!("job {k}")))?;
        match Self::jobattr(job, key) {
            Some(v) => self.answer(conn, q, &[("found", "TRUE"), ("value", &v)]),
            // hydra's answer for a key nobody put
            None => Err(Refusal::NotFound("key_not_found")),
        }
    }

    /// The ranks of a barrier group: `WORLD:tag`, `NODE:tag` or
    /// `r1,r2,…:tag` (PMI 1.2), none for a plain barrier.
    fn group(
        job: &Job,
        group: Option<&str>,
    ) -> Result<(String, BTreeSet<u32>, Option<String>), Refusal> {
        let world: BTreeSet<u32> = (0..job.spec.size).collect();
        let Some(g) = group else {
            return Ok(("WORLD".into(), world, None));
        };
        let bad = |d: String| Refusal::BadField {
            cmd: "barrier_in",
            detail: d,
        };
        let (set, tag) = g.rsplit_once(':').unwrap_or((g, "0"));
        tag.parse::<u64>()
            .map_err(|_| bad(format!("group {g:?}: tag {tag:?}")))?;
        let members: BTreeSet<u32> = match set {
            "WORLD" => world,
            "NODE" => job.local(),
            list => {
                let mut m = BTreeSet::new();
                for r in list.split(',') {
                    let r: u32 = r
                        .trim()
                        .parse()
                        .map_err(|_| bad(format!("group {g:?}: rank {r:?}")))?;
                    if r >= job.spec.size {
                        return Err(bad(format!("group {g:?}: no rank {r}")));
                    }
                    m.insert(r);
                }
                m
            }
        };
        Ok((g.to_string(), members, Some(tag.to_string())))
    }

    fn barrier_in(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let (k, r) = self.who(conn);
        let job = self
            .jobs
            .get(&k)
            .ok_or_else(|| Refusal::NoSuchRank(k.clone()))?;
        let (name, members, tag) = Self::group(job, q.msg.get("group"))?;
        if !members.contains(&r) {
            return Err(Refusal::BadField {
                cmd: "barrier_in",
                detail: format!("rank {r} is not in group {name}"),
            });
        }
        // the host's fence spans every node: a group of some ranks on
        // several nodes has no collective to ride on
        let all = members.len() == job.spec.size as usize;
        if !all && job.spec.joint {
            // its PMIx clients take part in world barriers only
            return Err(Refusal::BadField {
                cmd: "barrier_in",
                detail: format!(
                    "group {name}: a job served PMI and PMIx barriers all its ranks (WORLD)"
                ),
            });
        }
        if !all && !members.is_subset(&job.local()) {
            return Err(Refusal::BadField {
                cmd: "barrier_in",
                detail: format!("group {name} spans nodes; only WORLD, NODE or local groups do"),
            });
        }
        let mut w = self.waiter(conn, q, "barrier_out");
        w.tag = tag;
        self.enter(&k, r, name, members, w);
        Ok(())
    }

    fn kvs_fence(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let (k, r) = self.who(conn);
        let members = self
            .jobs
            .get(&k)
            .map(|j| (0..j.spec.size).collect())
            .unwrap_or_default();
        let w = self.waiter(conn, q, "kvs-fence-response");
        self.enter(&k, r, "WORLD".into(), members, w);
        Ok(())
    }

    /// Rank `r` enters barrier `name`; answered when every member has.
    fn enter(&mut self, k: &str, r: u32, name: String, members: BTreeSet<u32>, w: Waiter) {
        let Some(job) = self.jobs.get_mut(k) else {
            return;
        };
        if let Some(gone) = members.iter().find(|m| job.lost.contains(m)) {
            let msg = format!("rank {gone} of {k} left before the barrier");
            self.send_to(&w, w.resp, &[("rc", "1"), (w.errkey(), &msg)]);
            return;
        }
        if job.spec.joint {
            // one collective with the PMIx clients: through the host
            let request = self.next_request;
            self.next_request += 1;
            let puts = job
                .joint_puts
                .remove(&r)
                .unwrap_or_default()
                .into_iter()
                .collect();
            self.joints.insert(request, (k.to_string(), r, w));
            self.out.push_back(Output::Host(Event::JointFence {
                request,
                kvsname: k.to_string(),
                rank: r,
                puts,
            }));
            return;
        }
        let local = job.local();
        let spans = job.spans_nodes();
        let b = job.barriers.entry(name.clone()).or_insert(Barrier {
            members,
            arrived: BTreeMap::new(),
            upstream: None,
        });
        b.arrived.insert(r, w);
        let here: Vec<u32> = b.members.intersection(&local).copied().collect();
        if !here.iter().all(|m| b.arrived.contains_key(m)) || b.upstream.is_some() {
            return;
        }
        if spans && b.members.len() > here.len() {
            // every local member is in: the other nodes' through the host
            let request = self.next_request;
            self.next_request += 1;
            b.upstream = Some(request);
            let data = encode_pairs(&std::mem::take(&mut job.unsent));
            self.fences.insert(request, (k.to_string(), name));
            self.out.push_back(Output::Host(Event::Fence {
                request,
                kvsname: k.to_string(),
                data,
            }));
            return;
        }
        self.release(k, &name, Ok(()));
    }

    /// Answer every member of barrier `name` of job `k`.
    fn release(&mut self, k: &str, name: &str, result: Result<(), String>) {
        let Some(job) = self.jobs.get_mut(k) else {
            return;
        };
        let done = job
            .barriers
            .remove(name)
            .map(|b| b.arrived)
            .unwrap_or_default();
        for w in done.values() {
            match (&result, &w.tag) {
                (Ok(()), Some(t)) => self.send_to(w, w.resp, &[("rc", "0"), ("tag", t)]),
                (Ok(()), None) => self.send_to(w, w.resp, &[("rc", "0")]),
                (Err(e), _) => self.send_to(w, w.resp, &[("rc", "1"), (w.errkey(), e)]),
            }
        }
    }

    /// The host's answer to [`Event::Fence`]: every node's data
    /// ([`encode_pairs`] blobs, concatenated), stored in the job's KVS
    /// before the barrier's members are answered; or why it failed.
    pub fn fence_done(&mut self, request: u64, result: Result<Vec<u8>, String>) {
        let Some((k, name)) = self.fences.remove(&request) else {
            return;
        };
        let result = result.and_then(|blob| {
            decode_pairs(&blob).ok_or_else(|| "the nodes' fence data does not parse".to_string())
        });
        let result = match (result, self.jobs.get_mut(&k)) {
            (Ok(pairs), Some(job)) => {
                for (key, v) in pairs {
                    job.kvs_bytes += key.len() + v.len();
                    job.kvs.insert(key, v);
                }
                Ok(())
            }
            (Ok(_), None) => return,
            (Err(e), _) => {
                tracing::warn!(target: "pmix_wire::pmi", "fence of {k} failed: {e}");
                Err(e)
            }
        };
        self.release(&k, &name, result);
    }

    /// The host's answer to [`Event::JointFence`]: the PMIx fence
    /// completed and the store holds `pairs` (every rank's keys a PMI
    /// client can read, [`crate::pmi::joint::visible_to_pmi`]), stored in the
    /// job's KVS before the rank is answered; or why it failed. A pair
    /// the KVS cannot hold (a reserved `PMI_` key, too long, over the
    /// job's bytes) is left out and logged.
    pub fn joint_done(&mut self, request: u64, result: Result<Vec<(String, String)>, String>) {
        let Some((k, r, w)) = self.joints.remove(&request) else {
            return;
        };
        let pairs = match result {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!(target: "pmix_wire::pmi", "the PMIx fence of rank {r} of {k} failed: {e}");
                self.send_to(&w, w.resp, &[("rc", "1"), (w.errkey(), &e)]);
                return;
            }
        };
        if let Some(job) = self.jobs.get_mut(&k) {
            for (key, v) in pairs {
                let why = if key.starts_with("PMI_") {
                    Some("a reserved PMI_ key")
                } else if key.len() > MAX_KEY || v.len() > MAX_VALUE {
                    Some("longer than PMI's limits")
                } else {
                    None
                };
                let old = job.kvs.get(&key).map_or(0, |o| key.len() + o.len());
                let new = job.kvs_bytes - old + key.len() + v.len();
                let why = why.or((new > MAX_JOB_KVS).then_some("over the job's KVS bytes"));
                if let Some(why) = why {
                    tracing::warn!(target: "pmix_wire::pmi", "key {key:?} of the PMIx store not given to PMI clients of {k}: {why}");
                    continue;
                }
                job.kvs_bytes = new;
                job.kvs.insert(key, v);
            }
        }
        match &w.tag {
            Some(t) => self.send_to(&w, w.resp, &[("rc", "0"), ("tag", t)]),
            None => self.send_to(&w, w.resp, &[("rc", "0")]),
        }
    }

    /// Rank `r` of `k` is gone: every barrier it belongs to fails.
    fn fail_barriers(&mut self, k: &str, r: u32) {
        let Some(job) = self.jobs.get_mut(k) else {
            return;
        };
        let names: Vec<String> = job
            .barriers
            .iter()
            .filter(|(_, b)| b.members.contains(&r))
            .map(|(n, _)| n.clone())
            .collect();
        let mut failed = Vec::new();
        for n in names {
            if let Some(b) = job.barriers.remove(&n) {
                failed.extend(b.arrived.into_values());
            }
        }
        let msg = format!("rank {r} of {k} left before the barrier completed");
        for w in failed {
            self.send_to(&w, w.resp, &[("rc", "1"), (w.errkey(), &msg)]);
        }
    }

    fn service(q: &Query) -> Result<String, Refusal> {
        q.msg
            .get("service")
            .or(q.msg.get("name"))
            .map(str::to_string)
            .ok_or_else(|| Refusal::BadField {
                cmd: "publish",
                detail: "no service name".into(),
            })
    }

    /// A job across nodes names through the host (one name service for
    /// every node); true if `op` went there.
    fn name_upstream(&mut self, conn: ConnId, q: &Query, op: NameOp) -> bool {
        if !self.job(conn).is_some_and(Job::spans_nodes) {
            return false;
        }
        let resp = command(&q.msg.cmd, q.wire).map_or("", |c| c.response);
        let w = self.waiter(conn, q, resp);
        let request = self.next_request;
        self.next_request += 1;
        self.names.insert(request, w);
        self.out
            .push_back(Output::Host(Event::Name { request, op }));
        true
    }

    /// The host's answer to [`Event::Name`]: done (with the port, for a
    /// lookup), or why not (a lookup of an unknown name included).
    pub fn name_done(&mut self, request: u64, result: Result<Option<String>, String>) {
        let Some(w) = self.names.remove(&request) else {
            return;
        };
        match result {
            Ok(Some(port)) if w.wire == WireKind::V1 => {
                self.send_to(&w, w.resp, &[("rc", "0"), ("port", &port)])
            }
            Ok(Some(port)) => self.send_to(
                &w,
                w.resp,
                &[
                    ("rc", "0"),
                    ("found", "TRUE"),
                    ("port", &port),
                    ("value", &port),
                ],
            ),
            Ok(None) => self.send_to(&w, w.resp, &[("rc", "0")]),
            Err(e) => self.send_to(&w, w.resp, &[("rc", "1"), (w.errkey(), &e)]),
        }
    }

    fn publish(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let name = Self::service(q)?;
        let port = field(q, "publish", "port")?.to_string();
        check_len("publish", "service name", &name, MAX_VALUE)?;
        check_len("publish", "port", &port, MAX_VALUE)?;
        if self.name_upstream(
            conn,
            q,
            NameOp::Publish {
                name: name.clone(),
                port: port.clone(),
            },
        ) {
            return Ok(());
        }
        if self.published.contains_key(&name) {
            // hydra: a second publish of a name fails
            return Err(Refusal::BadField {
                cmd: "publish",
                detail: "key_already_present".into(),
            });
        }
        if self.published.len() >= 1 << 16 {
            return Err(Refusal::Limit("65536 names published".into()));
        }
        self.published.insert(name, port);
        self.answer(conn, q, &[])
    }

    fn unpublish(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let name = Self::service(q)?;
        if self.name_upstream(conn, q, NameOp::Unpublish { name: name.clone() }) {
            return Ok(());
        }
        if self.published.remove(&name).is_none() {
            return Err(Refusal::NotFound("service_not_found"));
        }
        self.answer(conn, q, &[])
    }

    fn lookup(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let name = Self::service(q)?;
        if self.name_upstream(conn, q, NameOp::Lookup { name: name.clone() }) {
            return Ok(());
        }
        match self.published.get(&name).cloned() {
            Some(port) => match q.wire {
                WireKind::V1 => self.answer(conn, q, &[("port", &port)]),
                // MPICH reads `port`, Slurm's libpmi2 `value`
                WireKind::V2 => self.answer(
                    conn,
                    q,
                    &[("found", "TRUE"), ("port", &port), ("value", &port)],
                ),
            },
            None => Err(Refusal::NotFound("service_not_found")),
        }
    }

    fn spawn_v1(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        // segments: fields up to each `endcmd`
        let bad = |d: String| Refusal::BadField {
            cmd: "spawn",
            detail: d,
        };
        let mut apps = Vec::new();
        let mut preput = Vec::new();
        let mut seg: Vec<(&str, &str)> = Vec::new();
        for (k, v) in &q.msg.pairs {
            if k == "endcmd" {
                let get = |key: &str| seg.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
                let num = |key: &str| -> Result<usize, Refusal> {
                    get(key)
                        .unwrap_or("0")
                        .parse()
                        .map_err(|_| bad(format!("{key} is not a number")))
                };
                let argc = num("argcnt")?.min(seg.len());
                let argv = (1..=argc)
                    .map(|i| get(&format!("arg{i}")).unwrap_or_default().to_string())
                    .collect();
                let infos = num("info_num")?.min(seg.len());
                let info = (0..infos)
                    .filter_map(|i| {
                        Some((
                            get(&format!("info_key_{i}"))?.to_string(),
                            get(&format!("info_val_{i}"))?.to_string(),
                        ))
                    })
                    .collect();
                let pre = num("preput_num")?.min(seg.len());
                for i in 0..pre {
                    if let (Some(a), Some(b)) = (
                        get(&format!("preput_key_{i}")),
                        get(&format!("preput_val_{i}")),
                    ) {
                        preput.push((a.to_string(), b.to_string()));
                    }
                }
                apps.push(App {
                    cmd: get("execname")
                        .ok_or_else(|| bad("no execname".into()))?
                        .to_string(),
                    argv,
                    maxprocs: num("nprocs")? as u32,
                    info,
                });
                if apps.len() > MAX_SPAWN_CMDS {
                    return Err(Refusal::Limit(format!(
                        "more than {MAX_SPAWN_CMDS} commands"
                    )));
                }
                seg.clear();
            } else if k != "mcmd" {
                seg.push((k, v));
            }
        }
        self.start_spawn(conn, q, apps, preput)
    }

    fn spawn_v2(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let bad = |d: String| Refusal::BadField {
            cmd: "spawn",
            detail: d,
        };
        let mut preput = Vec::new();
        let mut segs: Vec<Vec<(&str, &str)>> = vec![Vec::new()];
        for (k, v) in &q.msg.pairs {
            if k == "subcmd" {
                if segs.len() > MAX_SPAWN_CMDS {
                    return Err(Refusal::Limit(format!(
                        "more than {MAX_SPAWN_CMDS} commands"
                    )));
                }
                segs.push(Vec::new());
            }
            if let Some(s) = segs.last_mut() {
                s.push((k, v));
            }
        }
        let head = &segs[0];
        let hget = |key: &str| head.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
        let n: usize = hget("preputcount")
            .unwrap_or("0")
            .parse()
            .map_err(|_| bad("preputcount".into()))?;
        for i in 0..n.min(head.len()) {
            if let (Some(a), Some(b)) = (hget(&format!("ppkey{i}")), hget(&format!("ppval{i}"))) {
                preput.push((a.to_string(), b.to_string()));
            }
        }
        let mut apps = Vec::new();
        for seg in &segs[1..] {
            let get = |key: &str| seg.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
            let num = |key: &str| -> Result<usize, Refusal> {
                get(key)
                    .unwrap_or("0")
                    .parse()
                    .map_err(|_| bad(format!("{key} is not a number")))
            };
            let argv = (0..num("argc")?.min(seg.len()))
                .map(|i| get(&format!("argv{i}")).unwrap_or_default().to_string())
                .collect();
            let info = (0..num("infokeycount")?.min(seg.len()))
                .filter_map(|i| {
                    Some((
                        get(&format!("infokey{i}"))?.to_string(),
                        get(&format!("infoval{i}"))?.to_string(),
                    ))
                })
                .collect();
            apps.push(App {
                cmd: get("subcmd").unwrap_or_default().to_string(),
                argv,
                maxprocs: num("maxprocs")? as u32,
                info,
            });
        }
        self.start_spawn(conn, q, apps, preput)
    }

    fn start_spawn(
        &mut self,
        conn: ConnId,
        q: &Query,
        apps: Vec<App>,
        preput: Vec<(String, String)>,
    ) -> Result<(), Refusal> {
        if apps.is_empty() || apps.iter().any(|a| a.cmd.is_empty() || a.maxprocs == 0) {
            return Err(Refusal::BadField {
                cmd: "spawn",
                detail: "a command without an executable or processes".into(),
            });
        }
        let (k, r) = self.who(conn);
        let request = self.next_request;
        self.next_request += 1;
        self.spawns.insert(
            request,
            (conn, q.wire, q.msg.get("thrid").map(str::to_string)),
        );
        self.out.push_back(Output::Host(Event::Spawn {
            request,
            kvsname: k,
            rank: r,
            apps,
            preput,
        }));
        Ok(())
    }

    /// The host's answer to [`Event::Spawn`]: started, or why not.
    pub fn spawned(&mut self, request: u64, result: Result<(), String>) {
        let Some((conn, wire, thrid)) = self.spawns.remove(&request) else {
            return;
        };
        let w = Waiter {
            conn,
            wire,
            resp: "",
            thrid,
            tag: None,
        };
        let resp = match wire {
            WireKind::V1 => "spawn_result",
            WireKind::V2 => "spawn-response",
        };
        match result {
            Ok(()) => self.send_to(&w, resp, &[("rc", "0")]),
            Err(e) => {
                tracing::warn!(target: "pmix_wire::pmi", conn, "spawn failed: {e}");
                self.send_to(&w, resp, &[("rc", "1"), (w.errkey(), &e)])
            }
        }
    }

    fn abort(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let (k, r) = self.who(conn);
        let status = q
            .msg
            .get("exitcode")
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(1);
        let message = q
            .msg
            .get("message")
            .or(q.msg.get("msg"))
            .unwrap_or_default()
            .to_string();
        if let Some(c) = self.conns.get_mut(&conn) {
            // no answer; its connection ending is no loss
            c.finalized = true;
        }
        self.out.push_back(Output::Host(Event::Aborted {
            kvsname: k,
            rank: r,
            status,
            message,
        }));
        Ok(())
    }

    fn finalize(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let (k, r) = self.who(conn);
        if let Some(c) = self.conns.get_mut(&conn) {
            c.finalized = true;
        }
        self.answer(conn, q, &[])?;
        self.out.push_back(Output::Host(Event::Finalized {
            kvsname: k,
            rank: r,
        }));
        Ok(())
    }

    fn fullinit(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        if self.conns.get(&conn).and_then(|c| c.version) != Some((2, 0)) {
            return Err(Refusal::NotInitialized("fullinit"));
        }
        let rank = q.msg.get("pmirank").or(q.msg.get("pmiid"));
        let rank = rank.and_then(|s| s.trim().parse::<u32>().ok());
        match (self.conns.get(&conn).and_then(|c| c.who.clone()), rank) {
            (Some((_, mine)), Some(asked)) if mine != asked => {
                return Err(Refusal::BadField {
                    cmd: "fullinit",
                    detail: format!("pmirank={asked} on rank {mine}'s PMI_FD"),
                })
            }
            (Some(_), _) => {}
            (None, Some(asked)) => {
                let (k, r) = match q.msg.get("pmijobid") {
                    Some(j) if self.jobs.contains_key(j) => (j.to_string(), asked),
                    _ => self
                        .ids
                        .get(&asked)
                        .cloned()
                        .ok_or_else(|| Refusal::NoSuchRank(format!("pmiid {asked}")))?,
                };
                self.claim(conn, &k, r)?;
            }
            (None, None) => {
                return Err(Refusal::BadField {
                    cmd: "fullinit",
                    detail: "no pmirank".into(),
                })
            }
        }
        let (k, r) = self.who(conn);
        let job = self
            .jobs
            .get(&k)
            .ok_or_else(|| Refusal::NoSuchRank(k.clone()))?;
        let size = job.spec.size.to_string();
        let spawner = job.spec.spawner.clone();
        let appnum = self.appnum_of(conn).to_string();
        let rs = r.to_string();
        let mut pairs = vec![
            ("pmi-version", "2"),
            ("pmi-subversion", "0"),
            ("rank", rs.as_str()),
            ("size", size.as_str()),
            ("appnum", appnum.as_str()),
        ];
        if let Some(s) = &spawner {
            pairs.push(("spawner-jobid", s));
        }
        pairs.extend([("debugged", "FALSE"), ("pmiverbose", "0")]);
        self.answer(conn, q, &pairs)?;
        self.out.push_back(Output::Host(Event::Initialized {
            kvsname: k,
            rank: r,
            version: (2, 0),
        }));
        Ok(())
    }

    fn job_getid(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let (k, _) = self.who(conn);
        self.answer(conn, q, &[("jobid", &k)])
    }

    fn putnodeattr(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let key = field(q, "info-putnodeattr", "key")?.to_string();
        let value = field(q, "info-putnodeattr", "value")?.to_string();
        check_len("info-putnodeattr", "key", &key, MAX_KEY)?;
        check_len("info-putnodeattr", "value", &value, MAX_VALUE)?;
        let (k, _) = self.who(conn);
        let job = self
            .jobs
            .get_mut(&k)
            .ok_or_else(|| Refusal::NoSuchRank(k.clone()))?;
        if job.node.len() >= 1 << 16 && !job.node.contains_key(&key) {
            return Err(Refusal::Limit("65536 node attributes".into()));
        }
        job.node.insert(key.clone(), value.clone());
        let (ready, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut job.node_waits)
            .into_iter()
            .partition(|(wk, _)| *wk == key);
        job.node_waits = keep;
        self.answer(conn, q, &[])?;
        for (_, w) in ready {
            self.send_to(
                &w,
                w.resp,
                &[("rc", "0"), ("found", "TRUE"), ("value", &value)],
            );
        }
        Ok(())
    }

    fn getnodeattr(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let key = field(q, "info-getnodeattr", "key")?.to_string();
        let wait = q.msg.get("wait") == Some("TRUE");
        let (k, _) = self.who(conn);
        let w = self.waiter(conn, q, "info-getnodeattr-response");
        let job = self
            .jobs
            .get_mut(&k)
            .ok_or_else(|| Refusal::NoSuchRank(k.clone()))?;
        match job.node.get(&key).cloned() {
            Some(v) => self.answer(conn, q, &[("found", "TRUE"), ("value", &v)]),
            None if wait => {
                job.node_waits.push((key, w));
                Ok(())
            }
            None => self.answer(conn, q, &[("found", "FALSE")]),
        }
    }

    fn getjobattr(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let key = field(q, "info-getjobattr", "key")?;
        let v = self.job(conn).and_then(|j| Self::jobattr(j, key));
        match v {
            Some(v) => self.answer(conn, q, &[("found", "TRUE"), ("value", &v)]),
            None => self.answer(conn, q, &[("found", "FALSE")]),
        }
    }

    fn kvs_put(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let (k, rank) = self.who(conn);
        self.store(
            "kvs-put",
            (&k, rank),
            field(q, "kvs-put", "key")?,
            field(q, "kvs-put", "value")?,
        )?;
        self.answer(conn, q, &[])
    }

    fn kvs_get(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let (mine, _) = self.who(conn);
        let k = q.msg.get("jobid").unwrap_or(&mine).to_string();
        let key = field(q, "kvs-get", "key")?;
        let v = self.jobs.get(&k).and_then(|j| Self::jobattr(j, key));
        match v {
            Some(v) => self.answer(conn, q, &[("found", "TRUE"), ("value", &v)]),
            None => self.answer(conn, q, &[("found", "FALSE")]),
        }
    }
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
