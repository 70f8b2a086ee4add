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
use super::request::LogTime;
use super::*;

/// Generates the [`Request`] enum and its field codecs from the rows.
macro_rules! commands {
    (
        $(
            $(#[$vm:meta])*
            $code:ident => $V:ident $({ $( $(#[$fm:meta])* $f:ident : $T:ty = $K:ty ),* $(,)? })? => $reply:ident;
        )*
        @untyped { $( $ucode:ident => $ureply:ident; )* }
    ) => {
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
                #[cfg_attr(feature = "serde", serde(rename = "code"))]
                command: u8,
                #[cfg_attr(feature = "serde", serde(with = "serde_bytes_hex"))]
                rest: Bytes,
            },
        }

        impl Request {
            /// The `pmix_cmd_t` code.
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
    /// `PMIX_REQ_CMD`: the job-info request of PMIx_Init.
    REQ => Req => JobInfo;
    ABORT => Abort {
        status: i32 = One<StatusI>,
        message: Option<PString> = One<Str>,
        procs: Vec<Proc> = Counted<ProcI>,
    } => Status;
    /// Blobs of packed KVALs per scope.
    COMMIT => Commit {
        blobs: Vec<(u8, Buffer)> = UntilEnd<Pair<One<Scope>, One<Buf>>>,
    } => Status;
    FENCENB => Fence {
        procs: Vec<Proc> = Counted<ProcI>,
        info: Vec<Info> = Counted<InfoI>,
    } => Status;
    /// `key`: `None` when not sent (older clients), `Some(None)` for a NULL key.
    GETNB => Get {
        nspace: Option<PString> = One<Str>,
        rank: u32 = One<Rank>,
        info: Vec<Info> = Counted<InfoI>,
        key: Option<Option<PString>> = Tail<One<Str>>,
    } => Get;
    FINALIZE => Finalize => Status;
    /// `PMIX_PUBLISHNB_CMD`: the publisher's uid and the data to publish.
    PUBLISHNB => Publish {
        uid: u32 = One<U32>,
        info: Vec<Info> = Counted<InfoI>,
    } => Status;
    /// `PMIX_LOOKUPNB_CMD`: keys are packed one unit each.
    LOOKUPNB => Lookup {
        uid: u32 = One<U32>,
        keys: Vec<Option<PString>> = EachCounted<Str>,
        info: Vec<Info> = Counted<InfoI>,
    } => Lookup;
    /// `PMIX_UNPUBLISHNB_CMD`: as LOOKUP; no keys means "all I published".
    UNPUBLISHNB => Unpublish {
        uid: u32 = One<U32>,
        keys: Vec<Option<PString>> = EachCounted<Str>,
        info: Vec<Info> = Counted<InfoI>,
    } => Status;
    /// `PMIX_CONNECTNB_CMD`.
    CONNECTNB => Connect {
        procs: Vec<Proc> = Counted<ProcI>,
        info: Vec<Info> = Counted<InfoI>,
    } => Connect;
    /// `PMIX_DISCONNECTNB_CMD`.
    DISCONNECTNB => Disconnect {
        procs: Vec<Proc> = Counted<ProcI>,
        info: Vec<Info> = Counted<InfoI>,
    } => Status;
    /// `PMIX_NOTIFY_CMD`: the source is implicitly the sender.
    NOTIFY => Notify {
        status: i32 = One<StatusI>,
        range: u8 = One<Range>,
        info: Vec<Info> = Counted<InfoI>,
    } => Status;
    /// `PMIX_REGEVENTS_CMD`: no codes registers a default handler.
    REGEVENTS => RegEvents {
        codes: Vec<i32> = Counted<StatusI>,
        info: Vec<Info> = Counted<InfoI>,
    } => Status;
    /// `PMIX_DEREGEVENTS_CMD`: one STATUS unit per code; no reply.
    DEREGEVENTS => DeregEvents {
        codes: Vec<i32> = UntilEnd<One<StatusI>>,
    } => Raw;
    QUERY => Query {
        queries: Vec<Query> = Counted<QueryI>,
    } => Query;
    /// `PMIX_SPAWNNB_CMD`: job-level info, then the apps.
    SPAWNNB => Spawn {
        info: Vec<Info> = Counted<InfoI>,
        apps: Vec<App> = Counted<AppI>,
    } => Spawn;
    /// `PMIX_ALLOC_CMD`.
    ALLOC => Alloc {
        directive: u8 = One<AllocDir>,
        info: Vec<Info> = Counted<InfoI>,
    } => Infos;
    /// `PMIX_JOB_CONTROL_CMD`.
    JOB_CONTROL => JobControl {
        targets: Vec<Proc> = Counted<ProcI>,
        directives: Vec<Info> = Counted<InfoI>,
    } => Infos;
    /// `PMIX_MONITOR_CMD`: one INFO saying what to monitor.
    MONITOR => Monitor {
        monitor: Info = One<InfoI>,
        error: i32 = One<StatusI>,
        directives: Vec<Info> = Counted<InfoI>,
    } => Infos;
    /// `PMIX_GET_CREDENTIAL_CMD`.
    GET_CREDENTIAL => GetCredential {
        info: Vec<Info> = Counted<InfoI>,
    } => Credential;
    /// `PMIX_VALIDATE_CRED_CMD`.
    VALIDATE_CRED => ValidateCred {
        #[cfg_attr(feature = "serde", serde(with = "serde_bytes_hex"))]
        credential: Bytes = One<ByteObj>,
        directives: Vec<Info> = Counted<InfoI>,
    } => Infos;
    /// `PMIX_IOF_PULL_CMD`.
    IOF_PULL => IofPull {
        procs: Vec<Proc> = Counted<ProcI>,
        directives: Vec<Info> = Counted<InfoI>,
        channels: u16 = One<Channel>,
        local_id: u64 = One<SizeI>,
    } => Id;
    /// `PMIX_GROUP_CONSTRUCT_CMD`.
    GROUP_CONSTRUCT => GroupConstruct {
        group: Option<PString> = One<Str>,
        procs: Vec<Proc> = Counted<ProcI>,
        info: Vec<Info> = Counted<InfoI>,
    } => Id;
    /// `PMIX_GROUP_DESTRUCT_CMD`.
    GROUP_DESTRUCT => GroupDestruct {
        group: Option<PString> = One<Str>,
        info: Vec<Info> = Counted<InfoI>,
    } => Status;
    /// `PMIX_IOF_DEREG_CMD`.
    IOF_DEREG => IofDereg {
        directives: Vec<Info> = Counted<InfoI>,
        remote_id: u64 = One<SizeI>,
    } => Status;
    /// `PMIX_FABRIC_REGISTER_CMD`.
    FABRIC_REGISTER => FabricRegister {
        directives: Vec<Info> = Counted<InfoI>,
    } => Infos;
    /// `PMIX_FABRIC_UPDATE_CMD`.
    FABRIC_UPDATE => FabricUpdate {
        index: u64 = One<SizeI>,
    } => Infos;
    /// `PMIX_LOG_CMD`: the timestamp is sent whenever the peer is 3.0 or
    /// later, whatever the dialect ([`log_sends_time`]): `None` encodes
    /// a 2.x peer's LOG, without it.
    LOG => Log {
        timestamp: Option<u64> = LogTime,
        data: Vec<Info> = Counted<InfoI>,
        directives: Vec<Info> = Counted<InfoI>,
    } => Status;
    /// `PMIX_IOF_PUSH_CMD`: the data is left out when stdin reached EOF.
    IOF_PUSH => IofPush {
        targets: Vec<Proc> = Counted<ProcI>,
        directives: Vec<Info> = Counted<InfoI>,
        #[cfg_attr(feature = "serde", serde(serialize_with = "hex_opt"))]
        data: Option<Bytes> = Tail<One<ByteObj>>,
    } => Status;
    /// `PMIX_GROUP_LEAVE_CMD`.
    GROUP_LEAVE => GroupLeave {
        group: Option<PString> = One<Str>,
        info: Vec<Info> = Counted<InfoI>,
    } => Status;
    /// `PMIX_COMPUTE_DEVICE_DISTANCES_CMD`.
    COMPUTE_DEVICE_DISTANCES => DeviceDistances {
        topology: pmix_types::Topology = One<Topo>,
        cpuset: pmix_types::Cpuset = One<Cpus>,
        info: Vec<Info> = Counted<InfoI>,
    } => Distances;
    /// `PMIX_REFRESH_CACHE` (5.0+): refetch the job data of one proc.
    REFRESH_CACHE => RefreshCache {
        nspace: Option<PString> = One<Str>,
        rank: u32 = One<Rank>,
    } => Status;
    /// `PMIX_RESBLK_CMD` (6.0+): a resource-block directive.
    RESBLK => ResBlock {
        directive: u8 = One<ResBlockDir>,
        block: Option<PString> = One<Str>,
        units: Vec<pmix_types::ResourceUnit> = Counted<ResUnit>,
        info: Vec<Info> = Counted<InfoI>,
    } => Infos;
    /// `PMIX_SESSION_CTRL_CMD` (6.0+).
    SESSION_CTRL => SessionCtrl {
        session: u32 = One<U32>,
        directives: Vec<Info> = Counted<InfoI>,
    } => Infos;
    /// `PMIX_RESOLVE_PEERS_CMD` (5.0+): the procs of `nspace` on `node`.
    RESOLVE_PEERS => ResolvePeers {
        node: Option<PString> = One<Str>,
        nspace: Option<PString> = One<Str>,
    } => Peers;
    /// `PMIX_RESOLVE_NODE_CMD` (5.0+): the nodes hosting `nspace`.
    RESOLVE_NODE => ResolveNode {
        nspace: Option<PString> = One<Str>,
    } => Nodes;
    /// `PMIX_GDS_FALLBACK_CMD` (master): the client switched to `module`
    /// and wants its job data again, answered like REQ.
    GDS_FALLBACK => GdsFallback {
        module: Option<PString> = One<Str>,
    } => JobInfo;
    // defined, never packed by any client; servers answer NOT_SUPPORTED
    @untyped {
        GROUP_JOIN => Status;
        GROUP_INVITE => Status;
        REQ_SYSINFO => Status;
    }
}
