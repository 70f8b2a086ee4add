//! The client protocol core, sans-IO: bytes in, bytes and events out. It
//! owns no socket, thread or clock; `blocking.rs` drives it over TCP with
//! blocking reads, `asyncio.rs` on tokio. Its verbs are the server core's
//! (quinn-proto's names): `handle_input(bytes, now)`, `handle_timeout(now)`,
//! `poll_timeout`, `poll_transmit`, `poll_event`; deadlines (handshake,
//! [`Core::send_by`]) are instants the driver passes in, so a test can run
//! it on a virtual clock.
//!
//! Wire facts used here are listed in spec-notes/client.md.

use crate::link::{self, Incoming, Initiator, Link, LinkError, Registrations};
use bytes::Bytes;
use pmix_codec::frame::{self, DEFAULT_MAX_MESSAGE};
use pmix_codec::handshake::{peer_type, ConnectRequest};
pub use pmix_codec::msg::ReplyKind;
use pmix_codec::msg::{cmd, command_name, DataDelete, EventNotice, IofData, Reply, Request};
use pmix_codec::{DataBuffer, Format};
use pmix_types::status::codes;
use pmix_types::status::StatusCode;
use pmix_types::{Buffer, DataType, Info, Kval, PString, Proc, Value, RANK_WILDCARD};
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::time::Instant;

/// Everything that can go wrong in the client, each saying where.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server (or the local retrieval rules) answered with a PMIx status.
    #[error("{op}: {}", StatusCode(*.code))]
    Status {
        /// The operation (`"fence"`, `"get"` …).
        op: &'static str,
        /// The `pmix_status_t` (negative: an error).
        code: i32,
    },
    /// The environment the server gave does not say how to reach it
    /// (PMIX_SERVER_URI*, PMIX_NAMESPACE, PMIX_RANK missing or malformed),
    /// nor does a tool's rendezvous file.
    #[error("environment: {0}")]
    Env(#[from] EnvError),
    /// No server to connect to: what was looked for, where, and for how
    /// long (a tool's rendezvous search; PMIX_ERR_UNREACH).
    #[error("{0}")]
    Unreachable(NoRendezvous),
    /// The server's bytes do not decode.
    #[error("{op}: decoding the server's bytes: {err}")]
    Codec {
        /// The operation whose reply it was.
        op: &'static str,
        /// Where and why decoding failed.
        err: pmix_codec::Error,
    },
    /// A message header the client refuses (too large).
    #[error("framing: {0}")]
    Frame(#[from] frame::FrameError),
    /// The server answered an operation with a reply it does not take.
    #[error("{op}: unexpected {got} reply")]
    UnexpectedReply {
        /// The operation.
        op: &'static str,
        /// What came instead.
        got: ReplyKind,
    },
    /// A reply whose tag matches no request in flight.
    #[error("a reply with tag {tag} matches no request")]
    UnmatchedTag {
        /// The reply's tag.
        tag: u32,
    },
    /// A request queued before the handshake completed.
    #[error("{}: not connected (the handshake has not completed)", command_name(*.command).unwrap_or("request"))]
    NotConnected {
        /// The request's `pmix_cmd_t`.
        command: u8,
    },
    /// An operation waited for the reply to a request the server does not
    /// answer (DEREGEVENTS).
    #[error("{op}: the server does not answer this request")]
    Unanswered {
        /// The operation.
        op: &'static str,
    },
    /// An operation was started a second time (a driver's mistake: each
    /// [`super::ops::Operation`] value runs once).
    #[error("{op}: started twice")]
    Reused {
        /// The operation.
        op: &'static str,
    },
    /// The server closed the connection while an operation waited.
    #[error("{op}: the server closed the connection")]
    Closed {
        /// The operation that was waiting.
        op: &'static str,
    },
    /// The server's data decodes but lacks what the operation reads.
    #[error("{op}: {what}")]
    Malformed {
        /// The operation.
        op: &'static str,
        /// What is wrong with the data.
        what: Malformed,
    },
    /// The connection failed.
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
    /// No answer within the client's timeout (the operation named).
    #[error("{0}: timed out")]
    Timeout(&'static str),
    /// A tool gave up connecting: the last attempt's error, how long it
    /// waited, and whether the process it looked for is gone.
    #[error("{last}{}{}", .waited.map(|w| format!(" (waited {} s)", w.as_secs_f64())).unwrap_or_default(), .gone.map(|p| format!("; no process {p} runs")).unwrap_or_default())]
    GaveUp {
        /// The last attempt's error.
        last: Box<ClientError>,
        /// How long it waited for a server about to start (`None`: it
        /// did not, or the error was not one to wait out).
        waited: Option<std::time::Duration>,
        /// The pid it looked for, which no process has.
        gone: Option<u32>,
    },
    /// A value came, but not of the type the caller asked for.
    #[error("get {key}: {err}")]
    Type {
        /// The key asked for.
        key: String,
        /// What was expected and what came.
        err: pmix_types::TypeMismatch,
    },
}

impl ClientError {
    /// [`ClientError::status`] with its name (`PMIX_ERR_NOT_FOUND (-46)`).
    pub fn code(&self) -> StatusCode {
        self.status().into()
    }

    /// The operation the error happened in, where it names one.
    pub fn op(&self) -> Option<&'static str> {
        match self {
            ClientError::Status { op, .. }
            | ClientError::Codec { op, .. }
            | ClientError::UnexpectedReply { op, .. }
            | ClientError::Unanswered { op }
            | ClientError::Reused { op }
            | ClientError::Closed { op }
            | ClientError::Malformed { op, .. }
            | ClientError::Timeout(op) => Some(op),
            ClientError::Type { .. } => Some("get"),
            ClientError::NotConnected { command } => command_name(*command),
            ClientError::Env(_) => Some("init"),
            ClientError::GaveUp { last, .. } => last.op(),
            ClientError::Unreachable(_)
            | ClientError::Frame(_)
            | ClientError::UnmatchedTag { .. }
            | ClientError::Io(_) => None,
        }
    }

    /// The PMIx status this error stands for.
    pub fn status(&self) -> i32 {
        match self {
            ClientError::Status { code, .. } => *code,
            ClientError::Timeout(_) => codes::PMIX_ERR_TIMEOUT,
            ClientError::Type { .. } => codes::PMIX_ERR_TYPE_MISMATCH,
            ClientError::Io(_) | ClientError::Unreachable(_) => codes::PMIX_ERR_UNREACH,
            ClientError::GaveUp { last, .. } => last.status(),
            _ => codes::PMIX_ERROR,
        }
    }
}

/// The client's result.
pub type Result<T> = std::result::Result<T, ClientError>;

/// What the environment (or a tool's rendezvous file) lacks
/// ([`ClientError::Env`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EnvError {
    /// A variable every client needs is not set.
    #[error("{0} is not set")]
    Unset(&'static str),
    /// PMIX_RANK is not a number.
    #[error("PMIX_RANK {0:?} is not a rank")]
    NotARank(String),
    /// PMIX_NAMESPACE is longer than PMIX_MAX_NSLEN.
    #[error("PMIX_NAMESPACE is too long")]
    NamespaceTooLong,
    /// No PMIX_SERVER_URI* variable is set.
    #[error("no PMIX_SERVER_URI* variable")]
    NoServerUri,
    /// PMIX_SECURITY_MODE does not offer `native`, the one we speak.
    #[error("PMIX_SECURITY_MODE {0:?} does not offer native")]
    NoNativeSecurity(String),
    /// A server URI that is not `<id>;tcp4://<host>:<port>` (or tcp6).
    #[error("server URI {0:?} is not <id>;tcp4://<host>:<port>")]
    BadUri(String),
    /// A rendezvous file without its URI line.
    #[error("empty rendezvous file")]
    EmptyRendezvous,
    /// The server's release (PMIX_VERSION) is older than the floor the
    /// caller asked for ([`ClientEnv::require_server_at_least`]).
    #[error("the server is PMIx {version}, older than the {}.{} required", floor.0, floor.1)]
    ServerBelowFloor {
        /// PMIX_VERSION as given.
        version: String,
        /// The floor (major, minor).
        floor: (u32, u32),
    },
    /// A rendezvous file's server version that implies no dialect.
    #[error("unknown server version {0:?}")]
    UnknownVersion(String),
    /// A rendezvous file whose URI line is not ended yet.
    #[error("rendezvous file {} not yet written whole", .0.display())]
    NotWhole(std::path::PathBuf),
    /// What is wrong with this rendezvous file.
    #[error("{}: {err}", .file.display())]
    InFile {
        /// The file.
        file: std::path::PathBuf,
        /// What is wrong with it.
        err: Box<EnvError>,
    },
    /// No rendezvous file in these directories names this URI (a tool
    /// does not handshake on a listener its server did not offer tools).
    #[error(
        "no rendezvous file in {} names {uri}: a server takes tools only where it says so, and a tool handshake on another listener (a job's PMIX_SERVER_URI*) can crash a libpmix server; give file:<rendezvous file>, or run inside the job to ask as its client",
        if .dirs.is_empty() { "no directory".to_string() } else { .dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", ") }
    )]
    NoFileNames {
        /// The URI given.
        uri: String,
        /// The directories searched.
        dirs: Vec<std::path::PathBuf>,
    },
}

/// A tool's search that found no rendezvous file to use
/// ([`ClientError::Unreachable`]): what it looked for, where, and which
/// files it passed over and why.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct NoRendezvous {
    /// The file name looked for (`pmix.<host>.tool.<pid>` …).
    pub name: String,
    /// The directories searched.
    pub dirs: Vec<std::path::PathBuf>,
    /// How many levels below them.
    pub depth: u32,
    /// The files found but not used.
    pub passed: Vec<(std::path::PathBuf, Stale)>,
}

impl std::fmt::Display for NoRendezvous {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "no rendezvous file {} in ", self.name)?;
        if self.dirs.is_empty() {
            f.write_str("no directory")?;
        }
        for (i, d) in self.dirs.iter().enumerate() {
            write!(f, "{}{}", if i > 0 { ", " } else { "" }, d.display())?;
        }
        if self.depth > 0 {
            write!(f, " (and {} levels below)", self.depth)?;
        }
        for (i, (file, why)) in self.passed.iter().enumerate() {
            let lead = if i == 0 { "; passed over: " } else { ", " };
            write!(f, "{lead}{} ({why})", file.display())?;
        }
        Ok(())
    }
}

/// Why a rendezvous file was passed over ([`NoRendezvous::passed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Stale {
    /// The server it names (by pid) is gone.
    #[error("its server, pid {0}, is gone")]
    ServerGone(u32),
    /// It was written before the process it names started (a pid reused).
    #[error("written before process {0} started")]
    BeforeStart(u32),
}

/// What is wrong with data the server sent ([`ClientError::Malformed`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Malformed {
    /// A GET reply's byte object does not begin with a PROC.
    #[error("a GET reply's blob does not begin with a proc")]
    BlobWithoutProc,
    /// A `pmix.pblob` of the job info does not begin with a rank.
    #[error("a pmix.pblob does not begin with a rank")]
    PblobWithoutRank,
    /// A key that holds a comma list holds another type.
    #[error("{key} is {} (a comma list is a string)", .got.name())]
    NotAList {
        /// The key.
        key: &'static str,
        /// The type it holds.
        got: DataType,
    },
    /// An entry of a comma list of ranks is not a rank.
    #[error("entry {index} of {key} is not a rank")]
    NotARank {
        /// The key.
        key: &'static str,
        /// The entry's index (from 0).
        index: usize,
    },
}

impl From<LinkError> for ClientError {
    fn from(e: LinkError) -> Self {
        match e {
            LinkError::Frame(f) => ClientError::Frame(f),
            LinkError::Handshake(err) => ClientError::Codec {
                op: "handshake",
                err,
            },
            LinkError::Refused(code) => ClientError::Status {
                op: "handshake",
                code,
            },
            LinkError::Security(code) => ClientError::Status {
                op: "tool handshake (security)",
                code,
            },
        }
    }
}

fn codec(op: &'static str) -> impl Fn(pmix_codec::Error) -> ClientError {
    move |err| ClientError::Codec { op, err }
}

/// Data scopes of PMIx_Put, as the commit blobs carry them (callers use
/// [`pmix_types::enums::Scope`]).
mod scope {
    pub const UNDEF: u8 = 0;
    /// `PMIX_LOCAL`: visible to processes on the same node only.
    pub const LOCAL: u8 = 1;
    /// `PMIX_REMOTE`: visible to processes on other nodes only.
    pub const REMOTE: u8 = 2;
    /// `PMIX_GLOBAL`: visible to every process.
    pub const GLOBAL: u8 = 3;
    /// `PMIX_INTERNAL`: the process's own store only.
    pub const INTERNAL: u8 = 4;
    /// `PMIX_DEL_LOCAL` (7.0): a commit's section of keys deleted for local peers.
    pub const DEL_LOCAL: u8 = 5;
    /// `PMIX_DEL_REMOTE` (7.0): the same for remote peers.
    pub const DEL_REMOTE: u8 = 6;
}

/// What a client learns from the environment its server gives it.
#[derive(Clone, Debug, PartialEq)]
pub struct ClientEnv {
    /// This process's identity: PMIX_NAMESPACE and PMIX_RANK.
    pub proc: Proc,
    /// The server's URI: `<server nspace>.<rank>;tcp4://<addr>:<port>`.
    pub uri: String,
    /// The dialect and buffer type chosen from the PMIX_SERVER_URI* variable present.
    pub format: Format,
    /// PMIX_SECURITY_MODE (a list; we speak "native").
    pub security: String,
    /// PMIX_GDS_MODULE as given (we always announce "hash").
    pub gds: String,
    /// PMIX_VERSION: the server's version, where the server gave it.
    pub server_version: Option<String>,
}

impl ClientEnv {
    /// Read the variables through `get` (`std::env::var(..).ok()` in practice).
    pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Result<ClientEnv> {
        let nspace = get("PMIX_NAMESPACE").ok_or(EnvError::Unset("PMIX_NAMESPACE"))?;
        let rank = get("PMIX_RANK").ok_or(EnvError::Unset("PMIX_RANK"))?;
        let rank: u32 = rank.parse().map_err(|_| EnvError::NotARank(rank))?;
        if nspace.len() > pmix_types::MAX_NSLEN {
            return Err(EnvError::NamespaceTooLong.into());
        }
        let (format, uri) = pmix_codec::select::from_env(&get).ok_or(EnvError::NoServerUri)?;
        // the server's release decides its bytes and status numbers where
        // the dialect alone does not (a 7.0 server on v41: pmix7.md)
        let server_version = get("PMIX_VERSION");
        let format = match server_version
            .as_deref()
            .and_then(pmix_codec::Release::from_version)
        {
            Some(r) => format.of_release(r.max(format.release)),
            None => format,
        };
        let security = get("PMIX_SECURITY_MODE").unwrap_or_else(|| "native".into());
        if !security.split(',').any(|m| m.trim() == "native") {
            return Err(EnvError::NoNativeSecurity(security).into());
        }
        Ok(ClientEnv {
            proc: Proc::new(&nspace, rank),
            uri,
            format,
            security,
            gds: get("PMIX_GDS_MODULE").unwrap_or_else(|| "hash".into()),
            server_version,
        })
    }

    /// Refuse a server older than `floor` (major, minor), as OpenPMIx 7.0's
    /// client refuses servers before 3.2
    /// (`pmix_codec::select::OPENPMIX7_MIN_SERVER`). Ours sets no floor of
    /// its own: it speaks every dialect from v12 on. A server that gives no
    /// PMIX_VERSION passes (its URI variable already chose a dialect we
    /// speak); the refusal is logged with its reason.
    pub fn require_server_at_least(&self, floor: (u32, u32)) -> Result<()> {
        match &self.server_version {
            Some(v) if !pmix_codec::select::version_at_least(v, floor) => {
                let e = EnvError::ServerBelowFloor {
                    version: v.clone(),
                    floor,
                };
                tracing::warn!(target: "pmix_wire::client", "{e}");
                Err(e.into())
            }
            _ => Ok(()),
        }
    }

    /// The `NAME=value` a spawn adds to each application's environment so
    /// that libpmix children keep to the store our client has (hash):
    /// `PMIX_MCA_gds=hash` where the server offers `shmem2`
    /// (PMIX_GDS_MODULE, e.g. `shmem2,hash` from PRRTE 5.0.11). libpmix
    /// 5.0.11's server dies (SIGSEGV in `pmix_gds_shmem2_fetch`) when a
    /// job of hash-store clients and a job of shmem2 clients connect: it
    /// reads the hash job's data through shmem2's tracker, whose segment
    /// was never made (spec-notes/divergences.md, issue 34). None where
    /// the server offers no shmem2.
    pub fn spawn_store_hint(&self) -> Option<&'static str> {
        self.gds
            .split(',')
            .any(|m| m.trim() == "shmem2")
            .then_some("PMIX_MCA_gds=hash")
    }

    /// Whether a LOG request carries its TIME field, decided as libpmix
    /// 4.2.2's client decides it (`pmix_log.c`, spec-notes/commands.md):
    /// by the server's version, from PMIX_VERSION where given, else from
    /// the URI variable chosen (URI2 and URI21 mean a 2.x server). The
    /// dialect alone does not say: a 4.2.2 server on a v20 connection
    /// reads TIME.
    pub fn log_sends_time(&self) -> bool {
        match &self.server_version {
            Some(v) => pmix_codec::msg::log_sends_time(v),
            None => !matches!(
                self.format.dialect,
                pmix_codec::Dialect::V12 | pmix_codec::Dialect::V20 | pmix_codec::Dialect::V21
            ),
        }
    }
}

/// Split a server URI into (server id, host, port). Only tcp4/tcp6.
pub fn parse_uri(uri: &str) -> Result<(String, String, u16)> {
    let bad = || ClientError::Env(EnvError::BadUri(uri.into()));
    let (id, addr) = uri.split_once(';').ok_or_else(bad)?;
    let rest = addr
        .strip_prefix("tcp4://")
        .or_else(|| addr.strip_prefix("tcp6://"))
        .or_else(|| addr.strip_prefix("tcp://"))
        .ok_or_else(bad)?;
    let (host, port) = rest.rsplit_once(':').ok_or_else(bad)?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    Ok((
        id.to_string(),
        host.to_string(),
        port.parse().map_err(|_| bad())?,
    ))
}

/// How PMIx_Get is answered ([`Core::plan_get`]).
#[derive(Clone, Debug, PartialEq)]
pub enum GetPlan {
    /// From what the core holds.
    Local(Value),
    /// PMIX_ERR_NOT_FOUND at once, without asking the server.
    NotFound,
    /// Ask the server with this request, then [`Core::absorb_get`].
    Ask(Request),
}

impl GetPlan {
    /// The answer the core gives at once (the value, or
    /// PMIX_ERR_NOT_FOUND), or the GET request to send, whose reply goes
    /// to [`Core::absorb_get`].
    pub fn settled(self) -> std::result::Result<Result<Value>, Request> {
        match self {
            GetPlan::Local(v) => Ok(Ok(v)),
            GetPlan::NotFound => Ok(Err(ClientError::Status {
                op: "get",
                code: -46, // PMIX_ERR_NOT_FOUND
            })),
            GetPlan::Ask(req) => Err(req),
        }
    }
}

/// A value got for `key`, read as `T` (`ClientError::Type` names the key
/// and both types when it is not one).
pub fn read_as<T>(key: &str, v: Value) -> Result<T>
where
    T: TryFrom<Value>,
    pmix_types::TypeMismatch: From<T::Error>,
{
    T::try_from(v).map_err(|e| ClientError::Type {
        key: key.into(),
        err: e.into(),
    })
}

/// An output of the core.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// The handshake reply arrived: our index in the server's peer array.
    Connected {
        /// Our index at the server (the `pindex` of later headers).
        index: u32,
    },
    /// The reply to the request sent with `tag`.
    Reply {
        /// The request's tag.
        tag: u32,
        /// The reply, decoded by the request's command.
        reply: Reply,
    },
    /// An unsolicited event notification (tag 0).
    Notice(EventNotice),
    /// A 7.0 server's DATA_DELETE (tag 4): another client deleted a key it
    /// had committed; the core has dropped what it held of it.
    Deleted(DataDelete),
    /// Forwarded output (tag 2) for a pull of ours: its `refid` is the
    /// `local_id` our IOF_PULL sent.
    Output(IofData),
    /// A deadline passed ([`Core::handle_timeout`]): the handshake's
    /// (`tag: None`) or that of the request sent with `tag`, whose reply,
    /// should it still come, is dropped.
    TimedOut {
        /// The request's tag; `None`: the handshake.
        tag: Option<u32>,
    },
}

/// First tag libpmix clients use for replies (PMIX_PTL_TAG_DYNAMIC + 1).
const FIRST_TAG: u32 = 101;

/// The client state machine.
pub struct Core {
    /// What the environment said: identity, server URI, wire format.
    pub env: ClientEnv,
    /// The connection: framing, handshake, format, event registrations.
    link: Link<Initiator>,
    next_tag: u32,
    /// Requests awaiting their reply: tag → command.
    pending: HashMap<u32, u8>,
    /// Deadlines of requests (by time, then tag) and of the handshake.
    deadlines: BTreeSet<(Instant, u32)>,
    deadline_of: HashMap<u32, Instant>,
    handshake_deadline: Option<Instant>,
    /// Tags whose request timed out: their late replies are dropped.
    expired: BTreeSet<u32>,
    out: Vec<u8>,
    events: VecDeque<Event>,
    /// Job-level data (rank WILDCARD) and per-rank data, per namespace.
    cache: HashMap<(PString, u32), HashMap<String, Value>>,
    /// Staged puts in put order (libpmix keeps that order on the wire).
    puts: Vec<(u8, Kval)>,
    /// What earlier commits sent, for local and for remote peers: a commit
    /// after a delete sends it all again, as 7.0's client does.
    sent: [Vec<Kval>; 2],
    /// Keys deleted since the last commit, for local (0) and remote (1)
    /// peers: the next commit's DEL_LOCAL and DEL_REMOTE sections.
    dels: [Vec<PString>; 2],
    /// The namespace the server's job-info reply named (after init).
    pub job_nspace: Option<PString>,
    /// Tools: the server's identity from the handshake reply.
    pub server: Option<Proc>,
    /// The effective uid announced in the handshake (PUBLISH, LOOKUP and
    /// UNPUBLISH carry it).
    uid: u32,
    /// Groups this client constructed, with the membership a 5.0 or later
    /// server gave back (None: a 4.x server's reply, which names none):
    /// what GROUP_DESTRUCT carries to such a server, which does not keep it.
    groups: HashMap<PString, Option<Vec<Proc>>>,
}

impl Core {
    /// A core that has queued its connect request (credential: euid/egid).
    pub fn new(env: ClientEnv, euid: u32, egid: u32) -> Result<Core> {
        let req = link::offer(
            peer_type::SIMPLE_CLIENT,
            &env.format,
            (euid, egid),
            Some(env.proc.clone()),
            None,
        );
        Core::with_request(env, &req, euid)
    }

    /// A tool's core (flag TOOL_NEEDS_ID: the server assigns our identity),
    /// its connect request queued. `info` is the handshake's info blob.
    pub fn new_tool(
        uri: String,
        format: Format,
        euid: u32,
        egid: u32,
        info: Vec<Info>,
    ) -> Result<Core> {
        Core::tool(uri, format, (euid, egid), info, None)
    }

    /// A tool's core that brings its identity `proc` (flag TOOL_GIVEN_ID:
    /// a tool attaching to a further server keeps the identity its first
    /// server gave it), its connect request queued.
    pub fn new_tool_with_id(
        uri: String,
        format: Format,
        euid: u32,
        egid: u32,
        info: Vec<Info>,
        proc: Proc,
    ) -> Result<Core> {
        Core::tool(uri, format, (euid, egid), info, Some(proc))
    }

    fn tool(
        uri: String,
        format: Format,
        (euid, egid): (u32, u32),
        info: Vec<Info>,
        given: Option<Proc>,
    ) -> Result<Core> {
        let flag = match given {
            Some(_) => peer_type::TOOL_GIVEN_ID,
            None => peer_type::TOOL_NEEDS_ID,
        };
        let env = ClientEnv {
            proc: given.clone().unwrap_or_default(),
            uri,
            format,
            security: "native".into(),
            gds: "hash".into(),
            server_version: None,
        };
        let req = link::offer(flag, &format, (euid, egid), given, Some(info));
        Core::with_request(env, &req, euid)
    }

    fn with_request(env: ClientEnv, req: &ConnectRequest, uid: u32) -> Result<Core> {
        let (link, out) = Link::initiate(req, DEFAULT_MAX_MESSAGE)?;
        Ok(Core {
            env,
            link,
            next_tag: FIRST_TAG,
            pending: HashMap::new(),
            deadlines: BTreeSet::new(),
            deadline_of: HashMap::new(),
            handshake_deadline: None,
            expired: BTreeSet::new(),
            out,
            events: VecDeque::new(),
            cache: HashMap::new(),
            puts: Vec::new(),
            sent: [Vec::new(), Vec::new()],
            dels: [Vec::new(), Vec::new()],
            job_nspace: None,
            server: None,
            uid,
            groups: HashMap::new(),
        })
    }

    /// `group` was constructed: its membership as the server's reply gave
    /// it (None: a 4.x server's, which gives none).
    pub fn group_constructed(&mut self, group: &str, members: Option<Vec<Proc>>) {
        self.groups.insert(group.into(), members);
    }

    /// The membership GROUP_DESTRUCT of `group` carries: a 5.0 or later
    /// server's from its construct reply (libpmix 5.0.11's client packs it,
    /// "the server isn't storing it"); None (the 4.x form) for a group
    /// constructed with a 4.x server, or not constructed here. Forgotten.
    pub fn group_destructed(&mut self, group: &str) -> Option<Vec<Proc>> {
        self.groups.remove(&PString::from(group)).flatten()
    }

    /// The effective uid this client announced.
    pub fn uid(&self) -> u32 {
        self.uid
    }

    /// Hand out a notice that did not come from the server (our own
    /// event, which our own handlers hear: [`super::ops::notify`]).
    pub fn notice_locally(&mut self, n: EventNotice) {
        self.events.push_back(Event::Notice(n));
    }

    /// The event codes registered on this connection (PMIx_Register_event_handler).
    pub fn registrations(&self) -> &Registrations {
        &self.link.events
    }

    /// Note a registration the server accepted.
    pub fn registered(&mut self, codes: &[i32]) {
        self.link.events.register(codes);
    }

    /// The dialect and buffer type this client speaks to its server.
    pub fn format(&self) -> Format {
        self.env.format
    }

    /// Bytes to write to the server (drained), if any.
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        (!self.out.is_empty()).then(|| std::mem::take(&mut self.out))
    }

    /// The handshake must be answered by `at` (else [`Event::TimedOut`]
    /// with no tag at [`Core::handle_timeout`]).
    pub fn set_handshake_deadline(&mut self, at: Instant) {
        self.handshake_deadline = (!self.link.connected()).then_some(at);
    }

    /// As [`Core::send`], with a deadline for the reply: past it,
    /// [`Core::handle_timeout`] reports [`Event::TimedOut`] for the tag.
    pub fn send_by(&mut self, req: &Request, deadline: Instant) -> Result<Option<u32>> {
        let tag = self.send(req)?;
        if let Some(t) = tag {
            self.deadlines.insert((deadline, t));
            self.deadline_of.insert(t, deadline);
        }
        Ok(tag)
    }

    /// When [`Core::handle_timeout`] should next be called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let first = self.deadlines.first().map(|d| d.0);
        match (first, self.handshake_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Expire the deadlines that have passed by `now` (a virtual clock
    /// works as well as the real one).
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.handshake_deadline.is_some_and(|d| d <= now) {
            self.handshake_deadline = None;
            self.events.push_back(Event::TimedOut { tag: None });
        }
        while let Some(&(d, t)) = self.deadlines.first() {
            if d > now {
                break;
            }
            self.deadlines.remove(&(d, t));
            self.deadline_of.remove(&t);
            if self.pending.remove(&t).is_some() {
                self.expired.insert(t);
                self.events.push_back(Event::TimedOut { tag: Some(t) });
            }
        }
    }

    /// The next output (handshake done, a reply, an event), if any.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// Feed bytes read from the server at `now` (the driver's clock, or a
    /// virtual one). Deadlines that `now` has passed expire first, as
    /// [`Core::handle_timeout`] would expire them: a reply that comes after
    /// its request's deadline is late whichever the driver noticed first.
    pub fn handle_input(&mut self, data: &[u8], now: Instant) -> Result<()> {
        self.handle_timeout(now);
        self.link.push(data);
        while let Some(inc) = self.link.poll_incoming()? {
            let m = match inc {
                Incoming::Hello(a) => {
                    if let Some(t) = a.tool {
                        if let Some(p) = t.assigned {
                            self.env.proc = p;
                        }
                        self.server = Some(t.server);
                    }
                    self.handshake_deadline = None;
                    self.events.push_back(Event::Connected { index: a.index });
                    continue;
                }
                Incoming::Message(m) => m,
            };
            if m.header.tag == frame::tag::NOTIFY {
                let n = EventNotice::decode(&self.env.format, &m.payload)
                    .map_err(codec("event notice"))?;
                self.events.push_back(Event::Notice(n));
                continue;
            }
            if m.header.tag == frame::tag::DATA_DELETE {
                // a 7.0 server: another client deleted a committed key
                let d = DataDelete::decode(&self.env.format, &m.payload)
                    .map_err(codec("data delete"))?;
                self.absorb_delete(&d);
                self.events.push_back(Event::Deleted(d));
                continue;
            }
            if m.header.tag == frame::tag::IOF {
                // an empty IOF message: the server is closing the socket
                if !m.payload.is_empty() {
                    let d =
                        IofData::decode(&self.env.format, &m.payload).map_err(codec("IOF data"))?;
                    self.events.push_back(Event::Output(d));
                }
                continue;
            }
            if m.header.tag == frame::tag::IOF_CONTROL {
                // 7.0's IO flow control, for a process forwarding IO: we
                // forward none and know no capture of its layout
                tracing::debug!(target: "pmix_wire::client", "IOF control message ignored");
                continue;
            }
            if self.expired.remove(&m.header.tag) {
                // the reply to a request that timed out: nobody waits for it
                continue;
            }
            if let Some(d) = self.deadline_of.remove(&m.header.tag) {
                self.deadlines.remove(&(d, m.header.tag));
            }
            let Some(command) = self.pending.remove(&m.header.tag) else {
                return Err(ClientError::UnmatchedTag { tag: m.header.tag });
            };
            let reply =
                Reply::decode(&self.env.format, command, &m.payload).map_err(codec("reply"))?;
            if command == cmd::REQ {
                self.absorb_job_info(&reply)?;
            }
            self.events.push_back(Event::Reply {
                tag: m.header.tag,
                reply,
            });
        }
        Ok(())
    }

    /// Queue a heartbeat (`PMIx_Heartbeat`): an empty message on tag 1,
    /// unanswered, that a server monitoring this process counts
    /// (`PMIx_Process_monitor` with `pmix.monitor.mbeat`).
    pub fn heartbeat(&mut self) -> Result<()> {
        if !self.link.connected() {
            return Err(ClientError::NotConnected {
                command: cmd::MONITOR,
            });
        }
        let f = self.link.frame(pmix_codec::frame::tag::HEARTBEAT, &[])?;
        self.out.extend_from_slice(&f);
        Ok(())
    }

    /// A DATA_DELETE: the key is no longer the source's, whatever we
    /// fetched of it before.
    fn absorb_delete(&mut self, d: &DataDelete) {
        let Some(key) = d.key.as_ref().and_then(|k| k.as_str()) else {
            return;
        };
        let ns = d.source.nspace.as_pstring().clone();
        if let Some(m) = self.cache.get_mut(&(ns, d.source.rank)) {
            m.remove(key);
        }
    }

    /// Queue a request; returns the tag its reply will carry (`None` for
    /// commands the server does not answer).
    pub fn send(&mut self, req: &Request) -> Result<Option<u32>> {
        if !self.link.connected() {
            return Err(ClientError::NotConnected {
                command: req.command(),
            });
        }
        let payload = req.encode(&self.env.format).map_err(codec("request"))?;
        let answered = !matches!(req, Request::DeregEvents { .. });
        let tag = if answered {
            let t = self.next_tag;
            self.next_tag = if t == u32::MAX - 1 { FIRST_TAG } else { t + 1 };
            self.pending.insert(t, req.command());
            t
        } else {
            0
        };
        let f = self.link.frame(tag, &payload)?;
        // mostly nothing is queued: the frame becomes the queue, not a copy
        if self.out.is_empty() {
            self.out = f;
        } else {
            self.out.extend_from_slice(&f);
        }
        Ok(answered.then_some(tag))
    }

    /// The job-info reply: the namespace, job-level KVALs; `pmix.pblob`s
    /// carry one rank's data; `pmix.*.arr` arrays are flattened.
    fn absorb_job_info(&mut self, reply: &Reply) -> Result<()> {
        let Reply::JobInfo { nspace, kvals } = reply else {
            if let Reply::Status(s) = reply {
                return Err(ClientError::Status {
                    op: "job info",
                    code: *s,
                });
            }
            return Err(ClientError::UnexpectedReply {
                op: "job info",
                got: reply.kind(),
            });
        };
        let ns = nspace
            .clone()
            .unwrap_or_else(|| self.env.proc.nspace.as_pstring().clone());
        self.job_nspace = Some(ns.clone());
        for kv in kvals {
            let Some(key) = kv.key.as_ref().map(|k| k.to_string_lossy().into_owned()) else {
                continue;
            };
            match (&key[..], &kv.value) {
                ("pmix.pblob", Value::ByteObject(b)) => {
                    let (rank, kvs) = decode_pblob(&self.env.format, &b.0)?;
                    let m = self.cache.entry((ns.clone(), rank)).or_default();
                    for k in kvs {
                        if let Some(key) = k.key {
                            m.insert(key.to_string_lossy().into_owned(), k.value);
                        }
                    }
                }
                (_, Value::DataArray(a)) if key.ends_with(".arr") => {
                    let m = self.cache.entry((ns.clone(), RANK_WILDCARD)).or_default();
                    let elems = match &**a {
                        pmix_types::DataArray::Typed { elements, .. } => &elements[..],
                        _ => &[],
                    };
                    for v in elems {
                        if let Value::Info(i) = v {
                            m.entry(i.key.as_pstring().to_string_lossy().into_owned())
                                .or_insert_with(|| i.value.clone());
                        }
                    }
                    m.insert(key, kv.value.clone());
                }
                _ => {
                    self.cache
                        .entry((ns.clone(), RANK_WILDCARD))
                        .or_default()
                        .insert(key, kv.value.clone());
                }
            }
        }
        Ok(())
    }

    /// The FENCE request over `procs` (empty: our whole namespace).
    pub fn fence_request(&self, procs: Vec<Proc>, info: Vec<Info>) -> Request {
        let procs = if procs.is_empty() {
            vec![Proc {
                nspace: self.env.proc.nspace.clone(),
                rank: RANK_WILDCARD,
            }]
        } else {
            procs
        };
        Request::Fence { procs, info }
    }

    /// PMIx_Get's decision: the local cache first (job info, our own puts,
    /// earlier fetches); a reserved (`pmix`…) key of our own job is
    /// resolved from the job data alone (the PMIx_Get RFC; libpmix 4.2.2's
    /// client does the same); PMIX_OPTIONAL in `extra` never asks the
    /// server; anything else is a GET — PMIX_IMMEDIATE included, which the
    /// request carries so that the server answers from what it holds at
    /// once instead of waiting or asking its host (libpmix 4.2.2's and
    /// 5.0.11's clients send it too; Open MPI 5 fetches a peer's
    /// shared-memory modex so).
    pub fn plan_get(&self, proc: &Proc, key: &str, extra: &[Info]) -> GetPlan {
        let ask = |info| {
            GetPlan::Ask(Request::Get {
                nspace: Some(proc.nspace.as_pstring().clone()),
                rank: proc.rank,
                info,
                key: Some(Some(key.into())),
            })
        };
        // with qualifiers (a group's context id, …): only the server holds
        // the value those qualifiers find, and it is asked at once, as
        // libpmix 4.2.2's client asks for a qualified value (adding
        // PMIX_IMMEDIATE unless given); [`Core::absorb_get`] reads the
        // `pmix.qual.val` answer
        if extra.iter().any(Info::is_qualifier) {
            let mut info = extra.to_vec();
            if !extra
                .iter()
                .any(|i| i.key.as_pstring().as_bytes() == b"pmix.immediate")
            {
                info.push(Info::new("pmix.immediate", Value::Bool(true)));
            }
            return ask(info);
        }
        if let Some(v) = self.get_local(proc, key) {
            return GetPlan::Local(v);
        }
        let optional = extra.iter().any(|i| {
            i.key.as_pstring().as_bytes() == b"pmix.optional" && i.value == Value::Bool(true)
        });
        if self.resolves_locally(proc, key) || optional {
            return GetPlan::NotFound;
        }
        if is_reserved(key)
            && proc.nspace != self.env.proc.nspace
            && proc.rank != RANK_WILDCARD
            && self.whole_job_data()
        {
            // a reserved key of a rank of another namespace is that job's
            // data (a spawned child's PMIX_LOCAL_RANK, …): of a 4.x server
            // the namespace's whole job data is asked for (its WILDCARD
            // rank, no key), which it sends at once with each rank's part
            // (`pmix.pdata` arrays), and the answer is looked up in it.
            // Asked of the rank itself, libpmix 4.2.2's server waits until
            // that rank commits (2 s, then TIMEOUT) and a rank that never
            // commits is never answered; libpmix's client reads the key
            // from its server's shared-memory store instead.
            return GetPlan::Ask(Request::Get {
                nspace: Some(proc.nspace.as_pstring().clone()),
                rank: RANK_WILDCARD,
                info: extra.to_vec(),
                key: Some(None),
            });
        }
        ask(extra.to_vec())
    }

    /// Whether a rank's reserved key of another namespace is asked as
    /// that namespace's whole job data: of a libpmix 4.x server
    /// (PMIX_VERSION 4.…), which answers that at once and defers the
    /// rank's own. libpmix 5.0.11's server answers the rank's key from the
    /// job data itself, and cannot read a GET without a key (it logs
    /// UNPACK_READ_PAST_END_OF_BUFFER and never answers: seen under
    /// prterun 5.0.11); others are asked for the rank's key as before.
    fn whole_job_data(&self) -> bool {
        self.env
            .server_version
            .as_deref()
            .is_some_and(|v| v.starts_with("4."))
    }

    /// PMIx_Put: stage a value (visible to our own gets at once).
    pub fn put(&mut self, scope: pmix_types::enums::Scope, key: &str, value: Value) {
        if scope.is_delete() {
            // PMIx_Put(PMIX_DEL_*, key, NULL): [`Core::delete`] says
            // whether the server has deletes; this form cannot
            if let Err(e) = self.delete(scope, key) {
                tracing::warn!(target: "pmix_wire::client", "delete of {key}: {e}");
            }
            return;
        }
        let scope = scope.wire();
        let kv = Kval {
            key: Some(key.into()),
            value: value.clone(),
        };
        let sc = if scope == scope::UNDEF {
            scope::GLOBAL
        } else {
            scope
        };
        self.puts.push((sc, kv));
        let me = (
            self.env.proc.nspace.as_pstring().clone(),
            self.env.proc.rank,
        );
        self.cache.entry(me).or_default().insert(key.into(), value);
    }

    /// PMIx_Put with one of 7.0's delete scopes (DEL_LOCAL, DEL_REMOTE,
    /// DEL_GLOBAL, DEL_INTERNAL): the key is no longer ours for those
    /// peers; the next commit says so in its DEL_LOCAL and DEL_REMOTE
    /// sections, then sends everything still committed (7.0's
    /// `mark_deleted` and `_commitfn`; capture
    /// `v7.0.0a1-server_v7.0.0a1-client_delete`). A server older than 7.0
    /// has no delete: PMIX_ERR_NOT_SUPPORTED, as 7.0's client answers
    /// against 4.2.2, and nothing changes; any other scope: BAD_PARAM.
    pub fn delete(&mut self, scope: pmix_types::enums::Scope, key: &str) -> Result<()> {
        let status = |code| ClientError::Status { op: "put", code };
        if !scope.is_delete() {
            return Err(status(codes::PMIX_ERR_BAD_PARAM));
        }
        if self.env.format.release_family() < pmix_codec::Release::V7 {
            return Err(status(codes::PMIX_ERR_NOT_SUPPORTED));
        }
        let me = (
            self.env.proc.nspace.as_pstring().clone(),
            self.env.proc.rank,
        );
        if let Some(m) = self.cache.get_mut(&me) {
            m.remove(key);
        }
        let Ok(k) = PString::from_bytes(key.as_bytes()) else {
            return Err(status(codes::PMIX_ERR_BAD_PARAM));
        };
        let sides: &[usize] = match scope.wire() {
            5 => &[0],
            6 => &[1],
            7 => &[0, 1],
            // internal data never left the process
            _ => &[],
        };
        let same = |kv: &Kval| kv.key.as_ref() == Some(&k);
        for &side in sides {
            self.sent[side].retain(|kv| !same(kv));
            if !self.dels[side].contains(&k) {
                self.dels[side].push(k.clone());
            }
        }
        // staged puts of the key lose the deleted sides
        let (gone_l, gone_r) = (sides.contains(&0), sides.contains(&1));
        let internal = scope.wire() == 8;
        self.puts.retain_mut(|(sc, kv)| {
            if !same(kv) {
                return true;
            }
            if *sc == scope::INTERNAL {
                return !internal;
            }
            let l = (*sc == scope::LOCAL || *sc == scope::GLOBAL) && !gone_l;
            let r = (*sc == scope::REMOTE || *sc == scope::GLOBAL) && !gone_r;
            *sc = match (l, r) {
                (true, true) => scope::GLOBAL,
                (true, false) => scope::LOCAL,
                (false, true) => scope::REMOTE,
                (false, false) => return false,
            };
            true
        });
        Ok(())
    }

    /// PMIx_Commit's request: one blob of KVALs for LOCAL and one for
    /// REMOTE; a GLOBAL put goes into both (as libpmix 4.2.2 sends it).
    /// After a delete ([`Core::delete`]): first a DEL_LOCAL and a
    /// DEL_REMOTE section naming the deleted keys (KVALs of no value),
    /// then everything still committed, not only the new puts.
    pub fn commit_request(&mut self) -> Result<Request> {
        let fmt = self.env.format;
        let mut local = Vec::new();
        let mut remote = Vec::new();
        for (sc, kv) in std::mem::take(&mut self.puts) {
            if sc == scope::LOCAL || sc == scope::GLOBAL {
                local.push(kv.clone());
            }
            if sc == scope::REMOTE || sc == scope::GLOBAL {
                remote.push(kv);
            }
        }
        for (side, new) in [(0, &local), (1, &remote)] {
            for kv in new {
                match self.sent[side].iter_mut().find(|o| o.key == kv.key) {
                    Some(o) => *o = kv.clone(),
                    None => self.sent[side].push(kv.clone()),
                }
            }
        }
        let dels = std::mem::take(&mut self.dels);
        let resync = dels.iter().any(|d| !d.is_empty());
        if resync {
            local = self.sent[0].clone();
            remote = self.sent[1].clone();
        }
        let undef = |k: &PString| Kval {
            key: Some(k.clone()),
            value: Value::Undef,
        };
        let [dl, dr] = dels.map(|d| d.iter().map(undef).collect::<Vec<_>>());
        let mut blobs = Vec::new();
        for (sc, kvs) in [
            (scope::DEL_LOCAL, dl),
            (scope::DEL_REMOTE, dr),
            (scope::LOCAL, local),
            (scope::REMOTE, remote),
        ] {
            if kvs.is_empty() {
                continue;
            }
            let mut b = DataBuffer::new(fmt);
            for kv in kvs {
                b.pack(DataType::Kval, &[Value::Kval(Box::new(kv))])
                    .map_err(codec("commit"))?;
            }
            blobs.push((
                sc,
                Buffer {
                    // v20/v12 buffers carry no type byte
                    buffer_type: if fmt.dialect.is_legacy() {
                        0
                    } else {
                        fmt.buffer_type.code()
                    },
                    bytes: Bytes::copy_from_slice(b.as_bytes()),
                },
            ));
        }
        Ok(Request::Commit { blobs })
    }

    /// The local half of PMIx_Get: reserved keys of our own job come from
    /// the job-info cache (no round trip); anything fetched before is cached.
    pub fn get_local(&self, proc: &Proc, key: &str) -> Option<Value> {
        let ns = proc.nspace.as_pstring().clone();
        if let Some(v) = self
            .cache
            .get(&(ns.clone(), proc.rank))
            .and_then(|m| m.get(key))
        {
            return Some(v.clone());
        }
        if is_reserved(key) {
            return self
                .cache
                .get(&(ns, RANK_WILDCARD))
                .and_then(|m| m.get(key))
                .cloned();
        }
        None
    }

    /// Whether a get of `key` from `proc` is answered from local data
    /// alone: a reserved key of a namespace whose whole job data arrived
    /// at init (ours, or the one the job-info reply named). A GET reply
    /// about another namespace may carry only part of its job data (libpmix
    /// 4.2.2's server answers a tool's `pmix.job.size` of a job without its
    /// `pmix.univ.size`), so those keys still go to the server.
    pub fn resolves_locally(&self, proc: &Proc, key: &str) -> bool {
        is_reserved(key)
            && (proc.nspace == self.env.proc.nspace
                || self.job_nspace.as_ref() == Some(proc.nspace.as_pstring()))
    }

    /// Store a GETNB reply's blobs (PROC then KVALs each) and find `key`.
    pub fn absorb_get(&mut self, proc: &Proc, key: &str, reply: Reply) -> Result<Value> {
        match reply {
            Reply::Get { status, blobs } => {
                if status != 0 {
                    return Err(ClientError::Status {
                        op: "get",
                        code: status,
                    });
                }
                let mut qualified = None;
                let mut proc_data = Vec::new();
                for blob in blobs {
                    let mut b = DataBuffer::from_bytes(self.env.format, blob);
                    let p = match b.unpack_one(DataType::Proc).map_err(codec("get"))? {
                        Value::Proc(p) => p,
                        _ => {
                            return Err(ClientError::Malformed {
                                op: "get",
                                what: Malformed::BlobWithoutProc,
                            })
                        }
                    };
                    let m = self
                        .cache
                        .entry((p.nspace.as_pstring().clone(), p.rank))
                        .or_default();
                    let asked = p.nspace == proc.nspace && p.rank == proc.rank;
                    while !b.unread().is_empty() {
                        if let Value::Kval(kv) =
                            b.unpack_one(DataType::Kval).map_err(codec("get"))?
                        {
                            let Some(k) = kv.key else { continue };
                            if k.as_bytes() == QUALIFIED_VALUE.as_bytes() {
                                // a value only these qualifiers find: the
                                // answer, never cached under its bare key
                                if let Some(v) = qualified_value(&kv.value, key).filter(|_| asked) {
                                    qualified = Some(v);
                                }
                                continue;
                            }
                            if k.as_bytes() == PROC_DATA.as_bytes() {
                                // one rank's job data in the job's
                                // (libpmix's server): filed under that rank
                                proc_data.push((p.nspace.as_pstring().clone(), kv.value));
                                continue;
                            }
                            m.insert(k.to_string_lossy().into_owned(), kv.value);
                        }
                    }
                }
                for (ns, v) in proc_data {
                    self.file_proc_data(ns, &v);
                }
                if let Some(v) = qualified {
                    return Ok(v);
                }
                self.get_local(proc, key).ok_or(ClientError::Status {
                    op: "get",
                    code: -46,
                })
            }
            Reply::Status(s) => Err(ClientError::Status {
                op: "get",
                code: if s == 0 { -46 } else { s },
            }),
            other => Err(ClientError::UnexpectedReply {
                op: "get",
                got: other.kind(),
            }),
        }
    }
}

/// `PMIX_PROC_DATA`: one rank's data in a job's, an INFO array whose
/// first element is its `pmix.rank`.
const PROC_DATA: &str = "pmix.pdata";

impl Core {
    /// File a `pmix.pdata` array of namespace `ns` under the rank its first
    /// element names (nothing if it names none).
    fn file_proc_data(&mut self, ns: PString, v: &Value) {
        let Value::DataArray(a) = v else { return };
        let pmix_types::DataArray::Typed { elements, .. } = a.as_ref() else {
            return;
        };
        let rank = match elements.first() {
            Some(Value::Info(i)) if i.key.as_bytes() == b"pmix.rank" => match i.value {
                Value::ProcRank(r) | Value::Uint32(r) => r,
                _ => return,
            },
            _ => return,
        };
        let m = self.cache.entry((ns, rank)).or_default();
        for e in &elements[1..] {
            if let Value::Info(i) = e {
                m.insert(
                    i.key.as_pstring().to_string_lossy().into_owned(),
                    i.value.clone(),
                );
            }
        }
    }
}

/// The key of a value a server gives for a GET with qualifiers
/// (`pmix.qual.val`): an INFO array, the value under its key first, then
/// the qualifiers it was found with (what libpmix's server sends and its
/// client keeps apart from the bare key).
const QUALIFIED_VALUE: &str = "pmix.qual.val";

/// The value under `key` in a `pmix.qual.val` array, if it holds one.
fn qualified_value(v: &Value, key: &str) -> Option<Value> {
    let Value::DataArray(a) = v else { return None };
    let pmix_types::DataArray::Typed { elements, .. } = a.as_ref() else {
        return None;
    };
    match elements.first()? {
        Value::Info(i) if i.key.as_bytes() == key.as_bytes() => Some(i.value.clone()),
        _ => None,
    }
}

/// A key of the PMIx community's reserved namespace: it begins with
/// "pmix" (the PMIx_Get RFC; libpmix compares the first four bytes).
pub fn is_reserved(key: &str) -> bool {
    key.starts_with("pmix")
}

/// `pmix.pblob`: a PROC_RANK unit, then KVAL units.
fn decode_pblob(fmt: &Format, b: &[u8]) -> Result<(u32, Vec<Kval>)> {
    let mut d = DataBuffer::from_bytes(*fmt, Bytes::copy_from_slice(b));
    let rank = match d.unpack_one(DataType::ProcRank).map_err(codec("pblob"))? {
        Value::ProcRank(r) => r,
        _ => {
            return Err(ClientError::Malformed {
                op: "job info",
                what: Malformed::PblobWithoutRank,
            })
        }
    };
    let mut kvs = Vec::new();
    while !d.unread().is_empty() {
        if let Value::Kval(kv) = d.unpack_one(DataType::Kval).map_err(codec("pblob"))? {
            kvs.push(*kv);
        }
    }
    Ok((rank, kvs))
}

/// A bare status reply as a Result.
pub fn status_reply(op: &'static str, r: &Reply) -> Result<()> {
    match r {
        Reply::Status(0) => Ok(()),
        Reply::Status(code) => Err(ClientError::Status { op, code: *code }),
        Reply::Infos { status: 0, .. } | Reply::Query { status: 0, .. } => Ok(()),
        Reply::Infos { status, .. } | Reply::Query { status, .. } => {
            Err(ClientError::Status { op, code: *status })
        }
        other => Err(ClientError::UnexpectedReply {
            op,
            got: other.kind(),
        }),
    }
}

/// Helper for callers: an INFO.
pub fn info(key: &str, value: Value) -> Info {
    Info::new(key, value)
}
