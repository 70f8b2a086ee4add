//! The server role, sans-IO (issue #5): a PMIx server core that libpmix
//! clients connect to. It owns no sockets, threads or clocks: the driver
//! hands it each connection's bytes with the current time and sends what
//! [`Server::poll_transmit`] returns. The host (a launcher, a resource
//! manager) registers namespaces and receives [`HostEvent`]s
//! ([`Server::poll_event`]); everything a single node can answer (modex,
//! fences, publish/lookup, events, queries) the core answers itself
//! (publish/lookup the host may take over: [`Publishing`]; connects and
//! disconnects spanning nodes: [`Connecting`]; queries the core cannot
//! answer: [`Querying`]; registrations for environmental events:
//! [`Registering`]; allocations and monitors:
//! [`Server::set_host_allocates`], [`Server::set_host_monitors`]; tool
//! connections: [`ToolConnections`]; group operations: [`Grouping`];
//! credentials: [`Server::set_host_credentials`],
//! [`Server::set_host_validates`]).
//! Layouts: spec-notes/commands.md; behaviour and evidence:
//! spec-notes/server.md.
//!
//! The verbs are those of the client core ([`crate::client::Core`]), as
//! quinn-proto names them: `handle_input` (bytes in), `handle_timeout(now)`,
//! `poll_transmit`, `poll_timeout`, `poll_event`. The core is split as
//! quinn-proto splits its `Connection`: [`Server`] (`endpoint.rs`) holds
//! the jobs (`jobs.rs`), the outbox and one state struct per area, each
//! owned by the area's module with its own verbs and its own part of
//! connection teardown: connections (`connection.rs`: the table,
//! handshakes, caps, refusals), the modex (`modex.rs`), publish/lookup
//! (`pubsub.rs`), collectives (`collective.rs`, `fence.rs`, `hosted.rs`),
//! queries (`query.rs`), event registrations (`events.rs`), the job-info
//! cache (`jobinfo.rs`), requests out with the host (`requests.rs`), tools
//! (`tool_peers.rs`), groups (`group.rs`), job control (`jobctl.rs`),
//! peer and node resolution (`resolve.rs`) and IO forwarding (`iof.rs`).
//! `endpoint.rs` also holds the driver's verbs and the request router.
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
//! use pmix_wire::server::{JobSpec, Server, Transmit};
//! use std::time::Instant;
//!
//! let mut core = Server::new();
//! core.register_nspace(JobSpec { nspace: "demo".into(), nprocs: 1, hostname: "h".into(), info: vec![] });
//! let peer = core.open();
//! // a handshake header announcing 1 GiB: refused before anything is buffered
//! let mut header = [0u8; 16];
//! header[8..12].copy_from_slice(&(1u32 << 30).to_le_bytes());
//! core.handle_input(peer, &header, Instant::now());
//! assert_eq!(core.poll_transmit(), Some(Transmit::Close(peer)));
//! ```

mod collective;
mod connect;
mod connection;
pub mod dstore;
mod endpoint;
mod events;
mod fence;
pub mod group;
mod hosted;
mod hostops;
pub mod iof;
pub mod jobctl;
mod jobinfo;
mod jobs;
pub mod limits;
mod modex;
mod monitor;
#[cfg(feature = "tokio")]
pub mod net;
mod pubsub;
pub mod query;
mod requests;
mod resolve;
mod shared_store;
mod spawn;
mod tool_peers;
mod verify;

pub use endpoint::Server;
pub use iof::IofMode;
pub use jobinfo::HostFacts;
use jobs::Committed;
pub use jobs::NodeMap;
pub use limits::{Limits, Refusal};
pub use spawn::AppSpec;
pub use tool_peers::ToolConnections;

pub use connect::Connecting;
use connection::{Conn, ConnState};
pub use events::Registering;
use fence::CollKind;
pub use group::Grouping;
pub use modex::{GetCounts, BULK_ACROSS_PEERS, BULK_AFTER, BULK_PEERS, SWEEP_AFTER};
pub use pubsub::Publishing;
pub use query::Querying;
pub use verify::{PeerInfo, Verify};

use bytes::Bytes;
use pmix_codec::msg::{GroupReply, Reply};
use pmix_codec::Format;
use pmix_types::{DataArray, DataType, Info, Kval, PString, Proc, Value};
use std::time::Duration;

/// `pmix_data_range_t` values, as the core matches them (callers use
/// [`pmix_types::enums::DataRange`]).
pub(crate) use pmix_types::names::data_range as range;

/// The rank meaning "every rank of the namespace" (callers use
/// [`pmix_types::Rank::WILDCARD`]).
pub(crate) use pmix_types::RANK_WILDCARD;
const INFO_ARRAY_END: u32 = 2;
/// How long a GET for data a local rank has not committed yet waits when
/// the request names no `pmix.timeout` (libpmix 4.2.2: 2 s, protocol.md §7.3).
pub const DEFAULT_GET_WAIT: Duration = Duration::from_secs(2);
/// How long a GET for data of a rank on another node waits when the
/// request names no `pmix.timeout`: libpmix 4.2.2's server sets no timer
/// of its own there and leaves the wait to its host's direct modex
/// (`pmix_server_get.c`: the 2 s default is for local ranks only); Slurm's
/// plugin gives up after its PMIx timeout, 300 s by default
/// (`PMIXP_TIMEOUT_DEFAULT`, `SLURM_PMIX_TIMEOUT`). A rank elsewhere that
/// commits late is found, not timed out after 2 s (issue 26).
pub const REMOTE_GET_WAIT: Duration = Duration::from_secs(300);

/// A connection, as the driver names it.
pub use crate::sansio::ConnId;

/// A job as the host registers it: one node, `nprocs` local ranks.
#[derive(Clone, Debug)]
pub struct JobSpec {
    /// The job's namespace.
    pub nspace: String,
    /// How many ranks it has (all on this node).
    pub nprocs: u32,
    /// This node's name, as the job data reports it (`pmix.hname`).
    pub hostname: String,
    /// Further job-level information, sent to every rank at init.
    pub info: Vec<Info>,
}

/// What the driver must do on a connection ([`Server::poll_transmit`]):
/// write bytes (a reply every rank of a job gets, as the job info, is one
/// buffer shared by all its sends) or close it. The type every server core
/// of the crate shares ([`crate::sansio`]).
pub type Transmit = crate::sansio::Transmit<Bytes>;

/// What the core's areas queue for the driver or the host, sorted into
/// the two queues the driver drains: [`Transmit`]s
/// ([`Server::poll_transmit`]) and [`HostEvent`]s ([`Server::poll_event`]).
pub(crate) type Output = crate::sansio::Output<HostEvent, Bytes>;

/// Upcalls to the host.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum HostEvent {
    /// A client completed its handshake, speaking this format.
    Connected(Proc, Format),
    /// A client called PMIx_Finalize.
    Finalized(Proc),
    /// A client called PMIx_Abort (the host tears the job down).
    Aborted {
        /// The client.
        proc: Proc,
        /// The exit status it asked for.
        status: i32,
        /// Its message.
        message: Option<String>,
    },
    /// A client's connection ended before it finalized.
    Lost(Proc),
    /// A client asked to log data.
    Log {
        /// The client.
        proc: Proc,
        /// What to log.
        data: Vec<Info>,
    },
    /// A collective spans ranks on other nodes: every local participant
    /// has called in. The host gathers `data` (this node's contribution,
    /// empty unless `collect`) from every node and answers with
    /// [`Server::fence_done`] and the concatenation of all contributions.
    Fence {
        /// The id to answer with.
        request: u64,
        /// The participants.
        procs: Vec<Proc>,
        /// Whether the fence collects data (`pmix.collect`).
        collect: bool,
        /// This node's contribution.
        data: Bytes,
    },
    /// A local client wants data of a rank on another node: the host asks
    /// that node's server ([`Server::modex_data`]) and answers with
    /// [`Server::dmodex_done`].
    DirectModex {
        /// The id to answer with.
        request: u64,
        /// The remote rank whose data is wanted.
        proc: Proc,
    },
    /// A local rank committed its data (a host holding direct-modex
    /// requests for it may now answer them).
    Committed(Proc),
    /// A client notified an event whose range reaches beyond this node
    /// (NAMESPACE, SESSION, GLOBAL, RM, …); local delivery is done. A host
    /// spanning nodes passes it to the other nodes' [`Server::notify`].
    Notified {
        /// The event's status code.
        code: i32,
        /// The client that notified it.
        source: Proc,
        /// Its `pmix_data_range_t` ([`range`]).
        range: u8,
        /// Its attributes.
        info: Vec<Info>,
    },
    /// A client asked to kill or terminate these procs (rank WILDCARD: the
    /// whole namespace); the core has already answered.
    Kill {
        /// Who asked.
        requester: Proc,
        /// The processes to end.
        targets: Vec<Proc>,
    },
    /// A client or tool asked to signal these procs (terminate: SIGTERM,
    /// pause: SIGSTOP, resume: SIGCONT, or the signal it named); the core
    /// has already answered.
    Signal {
        /// Who asked.
        requester: Proc,
        /// The processes to signal.
        targets: Vec<Proc>,
        /// The signal number.
        signal: i32,
    },
    /// A rank the host serves itself, entered into its job's fence with
    /// [`Server::host_fence`], is released: the fence completed
    /// (`status` PMIX_SUCCESS), or failed.
    HostFenceDone {
        /// The rank.
        proc: Proc,
        /// The fence's status.
        status: i32,
    },
    /// A client asked for a new job. The host starts it (after
    /// [`Server::register_nspace`]) and answers with [`Server::spawned`].
    Spawn {
        /// The id to answer with.
        request: u64,
        /// Who asked.
        requester: Proc,
        /// Job-level attributes of the spawn.
        info: Vec<Info>,
        /// The applications to start.
        apps: Vec<pmix_types::App>,
    },
    /// With [`IofMode::AskHost`] ([`Server::set_iof_pull`]): a tool or
    /// client asked for the output of these processes (PMIx_IOF_pull), or
    /// (`stop`) deregistered a pull (PMIx_IOF_deregister: no processes, no
    /// channels, PMIX_IOF_STOP added to its directives, as libpmix 4.2.2
    /// tells its host). The host answers with [`Server::iof_done`]; it
    /// hands the output to the core with [`Server::iof_deliver`].
    IofPull {
        /// The id to answer with.
        request: u64,
        /// Who asked.
        requester: Proc,
        /// The processes whose output is wanted.
        procs: Vec<Proc>,
        /// The `pmix_iof_channel_t` bits wanted.
        channels: u16,
        /// The pull's attributes (`pmix.iof.tag` …), the host's to honour.
        directives: Vec<Info>,
        /// A deregistration.
        stop: bool,
    },
    /// With [`Server::set_iof_stdin`] `AskHost`: a tool pushed stdin to
    /// these processes (PMIx_IOF_push). The host writes it and answers
    /// with [`Server::iof_done`].
    Stdin {
        /// The id to answer with.
        request: u64,
        /// Who pushed it.
        source: Proc,
        /// The processes to give it to.
        targets: Vec<Proc>,
        /// Its attributes.
        directives: Vec<Info>,
        /// The bytes; None at EOF.
        data: Option<Bytes>,
    },
    /// A client's PMIx_Publish, under [`Publishing::Host`]: the host
    /// keeps the data and answers with [`Server::publish_done`].
    Publish {
        /// The id to answer with.
        request: u64,
        /// The publisher.
        proc: Proc,
        /// The data and the directives (range, persistence …), as the
        /// client sent them, then `pmix.euid` (UINT32, its uid).
        info: Vec<Info>,
    },
    /// A client's PMIx_Lookup, under [`Publishing::Host`]: the host
    /// answers with [`Server::lookup_done`] (with `pmix.wait` in `info`:
    /// once the keys are published or its `pmix.timeout` passed).
    Lookup {
        /// The id to answer with.
        request: u64,
        /// The client asking.
        proc: Proc,
        /// The keys wanted.
        keys: Vec<String>,
        /// Its directives (range, `pmix.wait`, `pmix.timeout` …), then
        /// `pmix.euid`.
        info: Vec<Info>,
    },
    /// A client's PMIx_Unpublish, under [`Publishing::Host`]: the host
    /// answers with [`Server::unpublish_done`].
    Unpublish {
        /// The id to answer with.
        request: u64,
        /// The client that published.
        proc: Proc,
        /// The keys to withdraw (none: all it published).
        keys: Vec<String>,
        /// Its directives (range …), then `pmix.euid`.
        info: Vec<Info>,
    },
    /// Under [`Connecting::Host`]: every local participant of a
    /// PMIx_Connect some of whose participants run on other nodes has
    /// called in. The host completes it across the nodes and answers with
    /// [`Server::connect_done`].
    Connect {
        /// The id to answer with.
        request: u64,
        /// The participants as the first caller named them, sorted (a
        /// namespace's WILDCARD stays one).
        procs: Vec<Proc>,
        /// The first caller's attributes, then `pmix.sorted.parr` (true)
        /// and `pmix.loc.col.st` (SUCCESS), as libpmix 4.2.2 hands them.
        info: Vec<Info>,
    },
    /// Under [`Querying::Host`]: a client's or tool's PMIx_Query_info the
    /// core could not answer in full (or that asks for a refresh). The
    /// host answers with [`Server::query_done`].
    Query {
        /// The id to answer with.
        request: u64,
        /// Who asked.
        requester: Proc,
        /// Every query it sent.
        queries: Vec<pmix_types::Query>,
    },
    /// Under [`Registering::Host`]: a client or tool registered for an
    /// environmental event the host has not yet accepted a registration
    /// for. The host answers with [`Server::register_events_done`].
    RegisterEvents {
        /// The id to answer with.
        request: u64,
        /// Every code of the registration.
        codes: Vec<i32>,
        /// Its attributes.
        info: Vec<Info>,
    },
    /// With [`Server::set_host_allocates`]: a client's or tool's
    /// PMIx_Allocation_request. The host answers with
    /// [`Server::allocate_done`].
    Allocate {
        /// The id to answer with.
        request: u64,
        /// Who asked.
        requester: Proc,
        /// Its `pmix_alloc_directive_t` (new, extend, release …).
        directive: u8,
        /// What it asks for.
        info: Vec<Info>,
    },
    /// With [`Server::set_host_monitors`]: a PMIx_Process_monitor of a
    /// kind the core does not run (it runs heartbeats). The host answers
    /// with [`Server::monitor_done`].
    Monitor {
        /// The id to answer with.
        request: u64,
        /// Who asked.
        requester: Proc,
        /// What to monitor.
        monitor: Info,
        /// The status to raise when it triggers.
        error: i32,
        /// Its attributes.
        directives: Vec<Info>,
    },
    /// Under [`ToolConnections::Host`]: a tool (or launcher) completed its
    /// handshake. The host accepts and names it with
    /// [`Server::tool_connected_done`].
    ToolConnected {
        /// The id to answer with.
        request: u64,
        /// The tool's infos, then `pmix.version`, `pmix.euid`,
        /// `pmix.egid` and, when it named itself, `pmix.nspace` and
        /// `pmix.rank`.
        info: Vec<Info>,
    },
    /// As [`HostEvent::Connect`], for a PMIx_Disconnect; answered with
    /// [`Server::disconnect_done`].
    Disconnect {
        /// The id to answer with.
        request: u64,
        /// The participants, as for a connect.
        procs: Vec<Proc>,
        /// The attributes, as for a connect.
        info: Vec<Info>,
    },
    /// With [`Server::set_host_credentials`]: a client's or tool's
    /// PMIx_Get_credential. The host answers with
    /// [`Server::credential_done`].
    GetCredential {
        /// The id to answer with.
        request: u64,
        /// Who asked.
        requester: Proc,
        /// Its directives (`pmix.sec.ctype` …).
        directives: Vec<Info>,
    },
    /// With [`Server::set_host_validates`]: a client's or tool's
    /// PMIx_Validate_credential. The host answers with
    /// [`Server::validate_done`].
    ValidateCredential {
        /// The id to answer with.
        request: u64,
        /// Who asked.
        requester: Proc,
        /// The credential to validate.
        credential: bytes::Bytes,
        /// Its directives.
        directives: Vec<Info>,
    },
    /// Under [`Grouping::Host`]: every local member of a
    /// PMIx_Group_construct that asks for a context id or spans nodes has
    /// called in. The host completes it (assigning the context id) and
    /// answers with [`Server::group_done`].
    GroupConstruct {
        /// The id to answer with.
        request: u64,
        /// The group's id.
        group: String,
        /// The members as the first caller named them, sorted (a
        /// namespace's WILDCARD stays one).
        procs: Vec<Proc>,
        /// The first caller's attributes, then `pmix.sorted.parr` (true),
        /// `pmix.loc.col.st` (SUCCESS) and `pmix.grp.endpt` (the local
        /// members' data), as libpmix 4.2.2 hands them.
        info: Vec<Info>,
    },
    /// Under [`Grouping::Host`]: every local member of a
    /// PMIx_Group_destruct has called in; answered with
    /// [`Server::group_done`].
    GroupDestruct {
        /// The id to answer with.
        request: u64,
        /// The group's id.
        group: String,
        /// Its members as its construct named them.
        procs: Vec<Proc>,
        /// The first caller's attributes, then `pmix.loc.col.st`.
        info: Vec<Info>,
    },
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

/// The value of the first of `info` named `key`.
fn info_value<'a>(info: &'a [Info], key: &str) -> Option<&'a Value> {
    info.iter()
        .find(|i| i.key.as_bytes() == key.as_bytes())
        .map(|i| &i.value)
}

fn info_u32(info: &[Info], key: &str) -> Option<u32> {
    info_value(info, key).and_then(|v| match *v {
        Value::Uint32(n) => Some(n),
        Value::Int32(n) => u32::try_from(n).ok(),
        Value::Int(n) => u32::try_from(n).ok(),
        Value::Uint64(n) => u32::try_from(n).ok(),
        _ => None,
    })
}

fn info_true(info: &[Info], key: &str) -> bool {
    info.iter()
        .any(|i| i.key.as_bytes() == key.as_bytes() && !matches!(i.value, Value::Bool(false)))
}

impl Default for Server {
    fn default() -> Self {
        Server::new()
    }
}
