//! The command table: one row per `pmix_cmd_t` with the request's fields
//! (name, Rust type, wire kind, in wire order) and the layout of its
//! reply. The [`Request`] enum, its decoder and its encoder, the command
//! names and the request → reply-layout map are all generated from these
//! rows, so a field cannot be read in one direction and forgotten in the
//! other, and a command cannot have a request without a reply layout.
//! The reply layouts are the same kind of table in `reply.rs`, the
//! unsolicited messages in `notice.rs`.

use super::field::*;
use super::reply::ReplyLayout;
use super::*;

/// Generates the command codes ([`cmd`]), the [`Request`] enum and its
/// field codecs from the rows.
macro_rules! commands {
    (
        $(
            $(#[$vm:meta])*
            $code:ident = $n:literal => $V:ident $({ $( $(#[$fm:meta])* $f:ident : $T:ty = $K:ty ),* $(,)? })? => $reply:ident;
        )*
        @untyped { $( $ucode:ident = $un:literal => $ureply:ident; )* }
    ) => {
        /// `pmix_cmd_t` values, generated from the command table's rows
        /// (each named as `pmix_cmd_t` spells it without `PMIX_` and
        /// `_CMD`).
        pub mod cmd {
            $(
                #[doc = concat!("`PMIX_", stringify!($code), "_CMD`: [`Request::", stringify!($V), "`](super::Request::", stringify!($V), ").")]
                pub const $code: u8 = $n;
            )*
            $(
                #[doc = concat!("`PMIX_", stringify!($ucode), "_CMD`: no client packs it; decoded as [`Request::Other`](super::Request::Other).")]
                pub const $ucode: u8 = $un;
            )*
        }

        /// A request. Its JSON form (for the inspector) names the command in
        /// `command` and carries the fields by name.
        #[derive(Clone, Debug, PartialEq)]
        #[cfg_attr(feature = "serde", derive(Serialize))]
        #[cfg_attr(feature = "serde", serde(tag = "command", rename_all = "SCREAMING_SNAKE_CASE"))]
        pub enum Request {
            $( $(#[$vm])* $V $({ $( $(#[$fm])* $f: $T ),* })?, )*
            /// Any other command (GROUP_JOIN, GROUP_INVITE and REQ_SYSINFO, which no
            /// client packs, and codes from 40 on), its fields unparsed.
            Other {
                /// The command code (the `pmix_cmd_t` COMMAND unit).
                #[cfg_attr(feature = "serde", serde(rename = "code"))]
                command: u8,
                /// The bytes after the command, unparsed.
                #[cfg_attr(feature = "serde", serde(with = "serde_bytes_hex"))]
                rest: Bytes,
            },
        }

        impl Request {
            /// The `pmix_cmd_t` this request packs first ([`cmd`]).
            pub fn command(&self) -> u8 {
                match self {
                    $( Request::$V $({ $($f: _),* })? => cmd::$code, )*
                    Request::Other { command, .. } => *command,
                }
            }

            /// The fields after the COMMAND; `None` for a command without a typed layout.
            pub(crate) fn decode_fields(command: u8, r: &mut Rd) -> Result<Option<Request>> {
                Ok(Some(match command {
                    $( cmd::$code => Request::$V $({ $( $f: <$K as Kind>::get(r, stringify!($f))? ),* })?, )*
                    _ => return Ok(None),
                }))
            }

            /// The fields after the COMMAND, borrowed (nothing is cloned but
            /// the values of the rare structured types, see `field.rs`).
            pub(crate) fn encode_fields(&self, w: &mut Wr) -> Result<()> {
                match self {
                    $( Request::$V $({ $($f),* })? => { $($( <$K as Kind>::put(w, $f, stringify!($f))?; )*)? } )*
                    Request::Other { rest, .. } => w.out.extend_from_slice(rest),
                }
                Ok(())
            }
        }

        /// The layout of the reply to `command` (`None`: a code without a row).
        pub(crate) fn reply_layout(command: u8) -> Option<ReplyLayout> {
            match command {
                $( cmd::$code => Some(ReplyLayout::$reply), )*
                $( cmd::$ucode => Some(ReplyLayout::$ureply), )*
                _ => None,
            }
        }

        /// The name of a command code, as `pmix_cmd_t` spells it without
        /// `PMIX_` and `_CMD` (`FENCENB`, `GROUP_CONSTRUCT`).
        pub fn command_name(command: u8) -> Option<&'static str> {
            match command {
                $( cmd::$code => Some(stringify!($code)), )*
                $( cmd::$ucode => Some(stringify!($ucode)), )*
                _ => None,
            }
        }
    };
}

commands! {
    /// `PMIX_REQ_CMD`: the job-info request of PMIx_Init; nothing after
    /// the command.
    REQ = 0 => Req => JobInfo;
    /// `PMIX_ABORT_CMD`: `PMIx_Abort`'s status, message and the processes
    /// to abort (none: the whole job).
    ABORT = 1 => Abort {
        /// The exit status the caller asks for (one STATUS).
        status: i32 = One<StatusI>,
        /// The message to report (one STRING, `None` for NULL).
        message: Option<PString> = One<Str>,
        /// The processes to abort, SIZE + PROCs; empty for every process
        /// of the namespace.
        procs: Vec<Proc> = Counted<ProcI>,
    } => Status;
    /// `PMIX_COMMIT_CMD`: blobs of packed KVALs per scope.
    COMMIT = 2 => Commit {
        /// Per `pmix_scope_t`, the buffer of KVALs put in that scope: pairs
        /// of one SCOPE and one BUFFER, to the end of the payload.
        blobs: Vec<(u8, Buffer)> = UntilEnd<Pair<One<Scope>, One<Buf>>>,
    } => Status;
    /// `PMIX_FENCENB_CMD`: `PMIx_Fence` over `procs`.
    FENCENB = 3 => Fence {
        /// The participants, SIZE + PROCs.
        procs: Vec<Proc> = Counted<ProcI>,
        /// Its attributes (`pmix.collect` …), SIZE + INFOs.
        info: Vec<Info> = Counted<InfoI>,
    } => Status;
    /// `PMIX_GETNB_CMD`: `PMIx_Get` of one key of one process.
    GETNB = 4 => Get {
        /// The namespace of the process whose data is asked for (one STRING).
        nspace: Option<PString> = One<Str>,
        /// Its rank (one PROC_RANK; `PMIX_RANK_WILDCARD` for job-level data).
        rank: u32 = One<Rank>,
        /// The get's attributes (`pmix.timeout` …), SIZE + INFOs.
        info: Vec<Info> = Counted<InfoI>,
        /// The key asked for (one STRING): `None` when not sent (older
        /// clients), `Some(None)` for a NULL key.
        key: Option<Option<PString>> = Tail<One<Str>>,
    } => Get;
    /// `PMIX_FINALIZE_CMD`: `PMIx_Finalize`; nothing after the command.
    FINALIZE = 5 => Finalize => Status;
    /// `PMIX_PUBLISHNB_CMD`: the publisher's uid and the data to publish.
    PUBLISHNB = 6 => Publish {
        /// The publisher's effective uid (one UINT32).
        uid: u32 = One<U32>,
        /// The data to publish and its attributes (range, persistence),
        /// SIZE + INFOs.
        info: Vec<Info> = Counted<InfoI>,
    } => Status;
    /// `PMIX_LOOKUPNB_CMD`: keys are packed one unit each.
    LOOKUPNB = 7 => Lookup {
        /// The caller's effective uid (one UINT32).
        uid: u32 = One<U32>,
        /// The keys to look up: SIZE n, then n units of one STRING each.
        keys: Vec<Option<PString>> = EachCounted<Str>,
        /// Its attributes (range, `pmix.wait` …), SIZE + INFOs.
        info: Vec<Info> = Counted<InfoI>,
    } => Lookup;
    /// `PMIX_UNPUBLISHNB_CMD`: as LOOKUP; no keys means "all I published".
    UNPUBLISHNB = 8 => Unpublish {
        /// The caller's effective uid (one UINT32).
        uid: u32 = One<U32>,
        /// The keys to withdraw: SIZE n, then n units of one STRING each.
        keys: Vec<Option<PString>> = EachCounted<Str>,
        /// Its attributes (range), SIZE + INFOs.
        info: Vec<Info> = Counted<InfoI>,
    } => Status;
    /// `PMIX_CONNECTNB_CMD`: `PMIx_Connect`.
    CONNECTNB = 10 => Connect {
        /// The processes to connect with, SIZE + PROCs.
        procs: Vec<Proc> = Counted<ProcI>,
        /// Its attributes, SIZE + INFOs.
        info: Vec<Info> = Counted<InfoI>,
    } => Connect;
    /// `PMIX_DISCONNECTNB_CMD`: `PMIx_Disconnect`.
    DISCONNECTNB = 11 => Disconnect {
        /// The processes to disconnect from, SIZE + PROCs.
        procs: Vec<Proc> = Counted<ProcI>,
        /// Its attributes, SIZE + INFOs.
        info: Vec<Info> = Counted<InfoI>,
    } => Status;
    /// `PMIX_NOTIFY_CMD`: the source is implicitly the sender.
    NOTIFY = 12 => Notify {
        /// The event's status code (one STATUS).
        status: i32 = One<StatusI>,
        /// The `pmix_data_range_t` to notify in (one DATA_RANGE).
        range: u8 = One<Range>,
        /// The event's attributes, SIZE + INFOs.
        info: Vec<Info> = Counted<InfoI>,
    } => Status;
    /// `PMIX_REGEVENTS_CMD`: no codes registers a default handler.
    REGEVENTS = 13 => RegEvents {
        /// The status codes to be notified of, SIZE + STATUSes.
        codes: Vec<i32> = Counted<StatusI>,
        /// The registration's attributes, SIZE + INFOs.
        info: Vec<Info> = Counted<InfoI>,
    } => Status;
    /// `PMIX_DEREGEVENTS_CMD`: one STATUS unit per code; no reply.
    DEREGEVENTS = 14 => DeregEvents {
        /// The status codes to stop being notified of, one STATUS unit
        /// each to the end of the payload.
        codes: Vec<i32> = UntilEnd<One<StatusI>>,
    } => Raw;
    /// `PMIX_QUERY_CMD`: `PMIx_Query_info`.
    QUERY = 15 => Query {
        /// The queries, SIZE + QUERYs.
        queries: Vec<Query> = Counted<QueryI>,
    } => Query;
    /// `PMIX_SPAWNNB_CMD`: job-level info, then the apps.
    SPAWNNB = 9 => Spawn {
        /// Job-level attributes of the spawn, SIZE + INFOs.
        info: Vec<Info> = Counted<InfoI>,
        /// The applications to start, SIZE + APPs.
        apps: Vec<App> = Counted<AppI>,
    } => Spawn;
    /// `PMIX_ALLOC_CMD`: `PMIx_Allocation_request`.
    ALLOC = 17 => Alloc {
        /// The `pmix_alloc_directive_t` (new, extend, release …; one
        /// ALLOC_DIRECTIVE).
        directive: u8 = One<AllocDir>,
        /// What is requested, SIZE + INFOs.
        info: Vec<Info> = Counted<InfoI>,
    } => Infos;
    /// `PMIX_JOB_CONTROL_CMD`: `PMIx_Job_control`.
    JOB_CONTROL = 18 => JobControl {
        /// The processes the directives apply to, SIZE + PROCs.
        targets: Vec<Proc> = Counted<ProcI>,
        /// What to do (`pmix.jctrl.kill` …), SIZE + INFOs.
        directives: Vec<Info> = Counted<InfoI>,
    } => Infos;
    /// `PMIX_MONITOR_CMD`: one INFO saying what to monitor.
    MONITOR = 19 => Monitor {
        /// What to monitor (one INFO).
        monitor: Info = One<InfoI>,
        /// The status to raise when the monitor triggers (one STATUS).
        error: i32 = One<StatusI>,
        /// Its attributes, SIZE + INFOs.
        directives: Vec<Info> = Counted<InfoI>,
    } => Infos;
    /// `PMIX_GET_CREDENTIAL_CMD`: `PMIx_Get_credential`.
    GET_CREDENTIAL = 20 => GetCredential {
        /// Attributes of the credential asked for, SIZE + INFOs.
        info: Vec<Info> = Counted<InfoI>,
    } => Credential;
    /// `PMIX_VALIDATE_CRED_CMD`: `PMIx_Validate_credential`.
    VALIDATE_CRED = 21 => ValidateCred {
        /// The credential to validate (one BYTE_OBJECT).
        #[cfg_attr(feature = "serde", serde(with = "serde_bytes_hex"))]
        credential: Bytes = One<ByteObj>,
        /// Its attributes, SIZE + INFOs.
        directives: Vec<Info> = Counted<InfoI>,
    } => Infos;
    /// `PMIX_IOF_PULL_CMD`: `PMIx_IOF_pull`.
    IOF_PULL = 22 => IofPull {
        /// The processes whose output is wanted, SIZE + PROCs.
        procs: Vec<Proc> = Counted<ProcI>,
        /// Its attributes (`pmix.iof.cpy` …), SIZE + INFOs.
        directives: Vec<Info> = Counted<InfoI>,
        /// The `pmix_iof_channel_t` bits wanted (one IOF_CHANNEL).
        channels: u16 = One<Channel>,
        /// The requester's reference for this registration (one SIZE).
        local_id: u64 = One<SizeI>,
    } => Id;
    /// `PMIX_GROUP_CONSTRUCT_CMD`: `PMIx_Group_construct`.
    GROUP_CONSTRUCT = 24 => GroupConstruct {
        /// The group's name (one STRING).
        group: Option<PString> = One<Str>,
        /// Its members, SIZE + PROCs.
        procs: Vec<Proc> = Counted<ProcI>,
        /// Its attributes, SIZE + INFOs.
        info: Vec<Info> = Counted<InfoI>,
    } => Group;
    /// `PMIX_GROUP_DESTRUCT_CMD`: `PMIx_Group_destruct`.
    GROUP_DESTRUCT = 28 => GroupDestruct {
        /// The group's name (one STRING).
        group: Option<PString> = One<Str>,
        /// Its members as the caller knows them, SIZE + PROCs: packed by
        /// 5.0 and later clients, not by 4.x (`None`).
        procs: Option<Vec<Proc>> = DestructMembers,
        /// Its attributes, SIZE + INFOs.
        info: Vec<Info> = Counted<InfoI>,
    } => Status;
    /// `PMIX_IOF_DEREG_CMD`: `PMIx_IOF_deregister`.
    IOF_DEREG = 29 => IofDereg {
        /// Its attributes, SIZE + INFOs.
        directives: Vec<Info> = Counted<InfoI>,
        /// The reference id the server gave the pull (one SIZE).
        remote_id: u64 = One<SizeI>,
    } => Status;
    /// `PMIX_FABRIC_REGISTER_CMD`: `PMIx_Fabric_register`.
    FABRIC_REGISTER = 30 => FabricRegister {
        /// The fabric's attributes, SIZE + INFOs.
        directives: Vec<Info> = Counted<InfoI>,
    } => Infos;
    /// `PMIX_FABRIC_UPDATE_CMD`: `PMIx_Fabric_update`.
    FABRIC_UPDATE = 31 => FabricUpdate {
        /// The fabric's index at the server (one SIZE).
        index: u64 = One<SizeI>,
    } => Infos;
    /// `PMIX_LOG_CMD`: the timestamp is sent whenever the peer is 3.0 or
    /// later, whatever the dialect ([`log_sends_time`]): `None` encodes
    /// a 2.x peer's LOG, without it.
    LOG = 16 => Log {
        /// When the caller logged, seconds since the epoch (one TIME;
        /// `None`: not sent, a 2.x peer).
        timestamp: Option<u64> = LogTime,
        /// The data to log, SIZE + INFOs.
        data: Vec<Info> = Counted<InfoI>,
        /// Its attributes (where to log …), SIZE + INFOs.
        directives: Vec<Info> = Counted<InfoI>,
    } => Status;
    /// `PMIX_IOF_PUSH_CMD`: the data is left out when stdin reached EOF.
    IOF_PUSH = 23 => IofPush {
        /// The processes to deliver the input to, SIZE + PROCs.
        targets: Vec<Proc> = Counted<ProcI>,
        /// Its attributes, SIZE + INFOs.
        directives: Vec<Info> = Counted<InfoI>,
        /// The input bytes (one BYTE_OBJECT); `None` at EOF.
        #[cfg_attr(feature = "serde", serde(serialize_with = "hex_opt"))]
        data: Option<Bytes> = Tail<One<ByteObj>>,
    } => Status;
    /// `PMIX_GROUP_LEAVE_CMD`: `PMIx_Group_leave`.
    GROUP_LEAVE = 27 => GroupLeave {
        /// The group's name (one STRING).
        group: Option<PString> = One<Str>,
        /// Its attributes, SIZE + INFOs.
        info: Vec<Info> = Counted<InfoI>,
    } => Status;
    /// `PMIX_COMPUTE_DEVICE_DISTANCES_CMD`: `PMIx_Compute_distances`.
    COMPUTE_DEVICE_DISTANCES = 32 => DeviceDistances {
        /// The topology to compute in (one TOPO).
        topology: pmix_types::Topology = One<Topo>,
        /// The cpus distances are measured from (one PROC_CPUSET).
        cpuset: pmix_types::Cpuset = One<Cpus>,
        /// Its attributes (device types …), SIZE + INFOs.
        info: Vec<Info> = Counted<InfoI>,
    } => Distances;
    /// `PMIX_REFRESH_CACHE` (5.0+): refetch the job data of one proc.
    REFRESH_CACHE = 33 => RefreshCache {
        /// The process's namespace (one STRING).
        nspace: Option<PString> = One<Str>,
        /// Its rank (one PROC_RANK).
        rank: u32 = One<Rank>,
    } => Status;
    /// `PMIX_RESBLK_CMD` (6.0+): a resource-block directive.
    RESBLK = 34 => ResBlock {
        /// The `pmix_resource_block_directive_t` (one RESBLOCK_DIRECTIVE).
        directive: u8 = One<ResBlockDir>,
        /// The block's name (one STRING).
        block: Option<PString> = One<Str>,
        /// The resources in the block, SIZE + RESOURCE_UNITs.
        units: Vec<pmix_types::ResourceUnit> = Counted<ResUnit>,
        /// Its attributes, SIZE + INFOs.
        info: Vec<Info> = Counted<InfoI>,
    } => Infos;
    /// `PMIX_SESSION_CTRL_CMD` (6.0+): `PMIx_Session_control`.
    SESSION_CTRL = 35 => SessionCtrl {
        /// The session id (one UINT32).
        session: u32 = One<U32>,
        /// What to do with it, SIZE + INFOs.
        directives: Vec<Info> = Counted<InfoI>,
    } => Infos;
    /// `PMIX_RESOLVE_PEERS_CMD` (5.0+): the procs of `nspace` on `node`.
    RESOLVE_PEERS = 37 => ResolvePeers {
        /// The node (one STRING).
        node: Option<PString> = One<Str>,
        /// The namespace (one STRING).
        nspace: Option<PString> = One<Str>,
    } => Peers;
    /// `PMIX_RESOLVE_NODE_CMD` (5.0+): the nodes hosting `nspace`.
    RESOLVE_NODE = 38 => ResolveNode {
        /// The namespace (one STRING).
        nspace: Option<PString> = One<Str>,
    } => Nodes;
    /// `PMIX_GDS_FALLBACK_CMD` (master): the client switched to `module`
    /// and wants its job data again, answered like REQ.
    GDS_FALLBACK = 39 => GdsFallback {
        /// The gds module the client now uses (one STRING).
        module: Option<PString> = One<Str>,
    } => JobInfo;
    // defined, never packed by any client; servers answer NOT_SUPPORTED
    @untyped {
        GROUP_JOIN = 25 => Status;
        GROUP_INVITE = 26 => Status;
        REQ_SYSINFO = 36 => Status;
    }
}

/// A reply is read in the layout this table gives its command.
impl Reply {
    /// Decode the reply to a request with `command`.
    pub fn decode(fmt: &Format, command: u8, payload: &[u8]) -> Result<Reply> {
        Self::decode_bytes(fmt, command, Bytes::copy_from_slice(payload))
    }

    /// As [`Reply::decode`], without copying the payload: byte objects and
    /// blobs in the reply share it.
    pub fn decode_bytes(fmt: &Format, command: u8, payload: Bytes) -> Result<Reply> {
        match Self::decode_as(fmt, reply_layout(command), payload.clone()) {
            Ok(r) => Ok(Self::canonical(r)),
            // the error convention: a lone STATUS answers any command
            Err(e) => match super::reply::lone_status(fmt, &payload) {
                Some(s) => {
                    // the same answer as the canonical bytes of that status give
                    let lone = Reply::Status(s).encode(fmt)?;
                    Ok(
                        match Self::decode_as(fmt, reply_layout(command), Bytes::from(lone)) {
                            Ok(r) => Self::canonical(r),
                            Err(_) => Reply::Status(s),
                        },
                    )
                }
                None => Err(e),
            },
        }
    }
}
