//! Client → server requests as typed messages (protocol.md §5), for the
//! commands implemented so far; every other command is kept as its raw
//! payload (`Request::Other`) so a conversation still round-trips.
//!
//! A request payload is a run of pack units in the connection's format:
//! the COMMAND first, then the command's fields (each with its count).

use crate::dialect::Format;
use crate::error::{Error, ErrorKind, Result};
use crate::DataBuffer;
use bytes::Bytes;
use pmix_types::hex::serde_bytes_hex;
use pmix_types::{App, Buffer, DataType, Info, PString, Proc, Query, Value};
use serde::Serialize;

/// `pmix_cmd_t` values.
pub mod cmd {
    pub const REQ: u8 = 0;
    pub const ABORT: u8 = 1;
    pub const COMMIT: u8 = 2;
    pub const FENCENB: u8 = 3;
    pub const GETNB: u8 = 4;
    pub const FINALIZE: u8 = 5;
    pub const PUBLISHNB: u8 = 6;
    pub const LOOKUPNB: u8 = 7;
    pub const UNPUBLISHNB: u8 = 8;
    pub const CONNECTNB: u8 = 10;
    pub const DISCONNECTNB: u8 = 11;
    pub const NOTIFY: u8 = 12;
    pub const REGEVENTS: u8 = 13;
    pub const DEREGEVENTS: u8 = 14;
    pub const QUERY: u8 = 15;
    pub const SPAWNNB: u8 = 9;
    pub const ALLOC: u8 = 17;
    pub const JOB_CONTROL: u8 = 18;
    pub const MONITOR: u8 = 19;
    pub const GET_CREDENTIAL: u8 = 20;
    pub const VALIDATE_CRED: u8 = 21;
    pub const IOF_PULL: u8 = 22;
    pub const GROUP_CONSTRUCT: u8 = 24;
    pub const GROUP_DESTRUCT: u8 = 28;
    pub const IOF_DEREG: u8 = 29;
    pub const FABRIC_REGISTER: u8 = 30;
    pub const FABRIC_UPDATE: u8 = 31;
    pub const LOG: u8 = 16;
    pub const IOF_PUSH: u8 = 23;
    /// Defined since 4.0, but no version's client packs it (joining is
    /// driven by events); servers answer a lone STATUS.
    pub const GROUP_JOIN: u8 = 25;
    /// As GROUP_JOIN: defined, never sent.
    pub const GROUP_INVITE: u8 = 26;
    pub const GROUP_LEAVE: u8 = 27;
    pub const COMPUTE_DEVICE_DISTANCES: u8 = 32;
    /// 5.0+.
    pub const REFRESH_CACHE: u8 = 33;
    /// 6.0+.
    pub const RESBLK: u8 = 34;
    /// 6.0+.
    pub const SESSION_CTRL: u8 = 35;
    /// 6.0+; defined, never sent by a client.
    pub const REQ_SYSINFO: u8 = 36;
    /// 5.0+.
    pub const RESOLVE_PEERS: u8 = 37;
    /// 5.0+.
    pub const RESOLVE_NODE: u8 = 38;
    /// master only.
    pub const GDS_FALLBACK: u8 = 39;
}

/// A request. Its JSON form (for the inspector) names the command in
/// `command` and carries the fields by name.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "command", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Request {
    /// `PMIX_REQ_CMD`: the job-info request of PMIx_Init.
    Req,
    Abort {
        status: i32,
        message: Option<PString>,
        procs: Vec<Proc>,
    },
    /// Blobs of packed KVALs per scope.
    Commit {
        blobs: Vec<(u8, Buffer)>,
    },
    Fence {
        procs: Vec<Proc>,
        info: Vec<Info>,
    },
    /// `key`: `None` when not sent (older clients), `Some(None)` for a NULL key.
    Get {
        nspace: Option<PString>,
        rank: u32,
        info: Vec<Info>,
        key: Option<Option<PString>>,
    },
    Finalize,
    /// `PMIX_PUBLISHNB_CMD`: the publisher's uid and the data to publish.
    Publish {
        uid: u32,
        info: Vec<Info>,
    },
    /// `PMIX_LOOKUPNB_CMD`: keys are packed one unit each.
    Lookup {
        uid: u32,
        keys: Vec<Option<PString>>,
        info: Vec<Info>,
    },
    /// `PMIX_UNPUBLISHNB_CMD`: as LOOKUP; no keys means "all I published".
    Unpublish {
        uid: u32,
        keys: Vec<Option<PString>>,
        info: Vec<Info>,
    },
    /// `PMIX_CONNECTNB_CMD`.
    Connect {
        procs: Vec<Proc>,
        info: Vec<Info>,
    },
    /// `PMIX_DISCONNECTNB_CMD`.
    Disconnect {
        procs: Vec<Proc>,
        info: Vec<Info>,
    },
    /// `PMIX_NOTIFY_CMD`: the source is implicitly the sender.
    Notify {
        status: i32,
        range: u8,
        info: Vec<Info>,
    },
    /// `PMIX_REGEVENTS_CMD`: no codes registers a default handler.
    RegEvents {
        codes: Vec<i32>,
        info: Vec<Info>,
    },
    /// `PMIX_DEREGEVENTS_CMD`: one STATUS unit per code; no reply.
    DeregEvents {
        codes: Vec<i32>,
    },
    Query {
        queries: Vec<Query>,
    },
    /// `PMIX_SPAWNNB_CMD`: job-level info, then the apps.
    Spawn {
        info: Vec<Info>,
        apps: Vec<App>,
    },
    /// `PMIX_ALLOC_CMD`.
    Alloc {
        directive: u8,
        info: Vec<Info>,
    },
    /// `PMIX_JOB_CONTROL_CMD`.
    JobControl {
        targets: Vec<Proc>,
        directives: Vec<Info>,
    },
    /// `PMIX_MONITOR_CMD`: one INFO saying what to monitor.
    Monitor {
        monitor: Info,
        error: i32,
        directives: Vec<Info>,
    },
    /// `PMIX_GET_CREDENTIAL_CMD`.
    GetCredential {
        info: Vec<Info>,
    },
    /// `PMIX_VALIDATE_CRED_CMD`.
    ValidateCred {
        #[serde(with = "serde_bytes_hex")]
        credential: Bytes,
        directives: Vec<Info>,
    },
    /// `PMIX_IOF_PULL_CMD`.
    IofPull {
        procs: Vec<Proc>,
        directives: Vec<Info>,
        channels: u16,
        local_id: u64,
    },
    /// `PMIX_GROUP_CONSTRUCT_CMD`.
    GroupConstruct {
        group: Option<PString>,
        procs: Vec<Proc>,
        info: Vec<Info>,
    },
    /// `PMIX_GROUP_DESTRUCT_CMD`.
    GroupDestruct {
        group: Option<PString>,
        info: Vec<Info>,
    },
    /// `PMIX_IOF_DEREG_CMD`.
    IofDereg {
        directives: Vec<Info>,
        remote_id: u64,
    },
    /// `PMIX_FABRIC_REGISTER_CMD`.
    FabricRegister {
        directives: Vec<Info>,
    },
    /// `PMIX_FABRIC_UPDATE_CMD`.
    FabricUpdate {
        index: u64,
    },
    /// `PMIX_LOG_CMD`: the timestamp is sent only to servers of 3.0 or
    /// later, which in practice means connections in the v3+ dialects.
    Log {
        timestamp: Option<u64>,
        data: Vec<Info>,
        directives: Vec<Info>,
    },
    /// `PMIX_IOF_PUSH_CMD`: the data is left out when stdin reached EOF.
    IofPush {
        targets: Vec<Proc>,
        directives: Vec<Info>,
        #[serde(serialize_with = "hex_opt")]
        data: Option<Bytes>,
    },
    /// `PMIX_GROUP_LEAVE_CMD`.
    GroupLeave {
        group: Option<PString>,
        info: Vec<Info>,
    },
    /// `PMIX_COMPUTE_DEVICE_DISTANCES_CMD`.
    DeviceDistances {
        topology: pmix_types::Topology,
        cpuset: pmix_types::Cpuset,
        info: Vec<Info>,
    },
    /// `PMIX_REFRESH_CACHE` (5.0+): refetch the job data of one proc.
    RefreshCache {
        nspace: Option<PString>,
        rank: u32,
    },
    /// `PMIX_RESBLK_CMD` (6.0+): a resource-block directive.
    ResBlock {
        directive: u8,
        block: Option<PString>,
        units: Vec<pmix_types::ResourceUnit>,
        info: Vec<Info>,
    },
    /// `PMIX_SESSION_CTRL_CMD` (6.0+).
    SessionCtrl {
        session: u32,
        directives: Vec<Info>,
    },
    /// `PMIX_RESOLVE_PEERS_CMD` (5.0+): the procs of `nspace` on `node`.
    ResolvePeers {
        node: Option<PString>,
        nspace: Option<PString>,
    },
    /// `PMIX_RESOLVE_NODE_CMD` (5.0+): the nodes hosting `nspace`.
    ResolveNode {
        nspace: Option<PString>,
    },
    /// `PMIX_GDS_FALLBACK_CMD` (master): the client switched to `module`
    /// and wants its job data again, answered like REQ.
    GdsFallback {
        module: Option<PString>,
    },
    /// Any other command (GROUP_JOIN, GROUP_INVITE and REQ_SYSINFO, which no
    /// client packs, and codes from 40 on), its fields unparsed.
    Other {
        #[serde(rename = "code")]
        command: u8,
        #[serde(with = "serde_bytes_hex")]
        rest: Bytes,
    },
}

/// Whether a LOG request carries its TIME: libpmix sends it only to
/// servers of 3.0 or later, whose connections use the v3+ dialects
/// (protocol.md §5.1; `pmix_log.c` of 4.2.2 tests the server's version).
fn log_has_time(fmt: &Format) -> bool {
    !matches!(
        fmt.dialect,
        crate::Dialect::V12 | crate::Dialect::V20 | crate::Dialect::V21
    )
}

fn hex_list<S: serde::Serializer>(v: &[Bytes], s: S) -> std::result::Result<S::Ok, S::Error> {
    s.collect_seq(v.iter().map(|b| pmix_types::hex::encode(b)))
}

fn hex_opt<S: serde::Serializer>(v: &Option<Bytes>, s: S) -> std::result::Result<S::Ok, S::Error> {
    match v {
        Some(b) => s.serialize_some(&pmix_types::hex::encode(b)),
        None => s.serialize_none(),
    }
}

/// `read` if anything is left in `b`, else `None`: the trailing fields
/// older peers leave out, and what a failed reply stops before.
fn if_more<T>(
    b: &mut DataBuffer,
    read: impl FnOnce(&mut DataBuffer) -> Result<T>,
) -> Result<Option<T>> {
    if b.unread().is_empty() {
        Ok(None)
    } else {
        read(b).map(Some)
    }
}

/// SIZE + INFOs if anything is left, else `None`.
fn opt_infos(b: &mut DataBuffer, field: &str) -> Result<Option<Vec<Info>>> {
    if_more(b, |b| Ok(infos(counted(b, DataType::Info, field)?)))
}

fn byte_object(b: &mut DataBuffer, field: &str) -> Result<Bytes> {
    match one(b, DataType::ByteObject, field)? {
        Value::ByteObject(x) => Ok(x.0),
        other => Err(unexpected(other)),
    }
}

fn proc_rank(b: &mut DataBuffer, field: &str) -> Result<u32> {
    match one(b, DataType::ProcRank, field)? {
        Value::ProcRank(r) => Ok(r),
        other => Err(unexpected(other)),
    }
}

fn data_range(b: &mut DataBuffer, field: &str) -> Result<u8> {
    match one(b, DataType::DataRange, field)? {
        Value::DataRange(r) => Ok(r),
        other => Err(unexpected(other)),
    }
}

/// An error unless every byte of the message was read.
fn all_read(b: &DataBuffer, what: impl FnOnce() -> String) -> Result<()> {
    if b.unread().is_empty() {
        Ok(())
    } else {
        Err(Error::new(ErrorKind::Invalid(what()), b.position()))
    }
}

fn byte_objects(b: &mut DataBuffer, field: &str) -> Result<Vec<Bytes>> {
    let mut out = Vec::new();
    while !b.unread().is_empty() {
        out.push(byte_object(b, field)?);
    }
    Ok(out)
}

fn one(b: &mut DataBuffer, ty: DataType, field: &str) -> Result<Value> {
    b.unpack_one(ty).map_err(|e| e.in_field(field))
}

fn size(b: &mut DataBuffer, field: &str) -> Result<u64> {
    match one(b, DataType::Size, field)? {
        Value::Size(n) => Ok(n),
        other => Err(unexpected(other)),
    }
}

/// `SIZE n`, then (only if n > 0) a unit of n items of `ty`.
fn counted(b: &mut DataBuffer, ty: DataType, field: &str) -> Result<Vec<Value>> {
    let n = size(b, field)?;
    if n == 0 {
        return Ok(Vec::new());
    }
    let u = b
        .unpack(ty, usize::try_from(n).unwrap_or(usize::MAX))
        .map_err(|e| e.in_field(field))?;
    if u.values.len() as u64 != n || u.left_in_unit != 0 {
        return Err(Error::new(
            ErrorKind::Invalid(format!("{field}: {n} announced")),
            b.position(),
        ));
    }
    Ok(u.values)
}

fn put_counted(b: &mut DataBuffer, ty: DataType, values: Vec<Value>) -> Result<()> {
    b.pack(DataType::Size, &[Value::Size(values.len() as u64)])?;
    if !values.is_empty() {
        b.pack(ty, &values)?;
    }
    Ok(())
}

fn procs(v: Vec<Value>) -> Vec<Proc> {
    v.into_iter()
        .filter_map(|x| {
            if let Value::Proc(p) = x {
                Some(*p)
            } else {
                None
            }
        })
        .collect()
}
fn infos(v: Vec<Value>) -> Vec<Info> {
    v.into_iter()
        .filter_map(|x| {
            if let Value::Info(i) = x {
                Some(*i)
            } else {
                None
            }
        })
        .collect()
}
fn uint32(b: &mut DataBuffer, field: &str) -> Result<u32> {
    match one(b, DataType::Uint32, field)? {
        Value::Uint32(n) => Ok(n),
        other => Err(unexpected(other)),
    }
}
fn string(v: Value) -> Option<PString> {
    if let Value::String(s) = v {
        s
    } else {
        None
    }
}

impl Request {
    pub fn command(&self) -> u8 {
        match self {
            Request::Req => cmd::REQ,
            Request::Abort { .. } => cmd::ABORT,
            Request::Commit { .. } => cmd::COMMIT,
            Request::Fence { .. } => cmd::FENCENB,
            Request::Get { .. } => cmd::GETNB,
            Request::Finalize => cmd::FINALIZE,
            Request::Publish { .. } => cmd::PUBLISHNB,
            Request::Lookup { .. } => cmd::LOOKUPNB,
            Request::Unpublish { .. } => cmd::UNPUBLISHNB,
            Request::Connect { .. } => cmd::CONNECTNB,
            Request::Disconnect { .. } => cmd::DISCONNECTNB,
            Request::Notify { .. } => cmd::NOTIFY,
            Request::RegEvents { .. } => cmd::REGEVENTS,
            Request::DeregEvents { .. } => cmd::DEREGEVENTS,
            Request::Query { .. } => cmd::QUERY,
            Request::Spawn { .. } => cmd::SPAWNNB,
            Request::Alloc { .. } => cmd::ALLOC,
            Request::JobControl { .. } => cmd::JOB_CONTROL,
            Request::Monitor { .. } => cmd::MONITOR,
            Request::GetCredential { .. } => cmd::GET_CREDENTIAL,
            Request::ValidateCred { .. } => cmd::VALIDATE_CRED,
            Request::IofPull { .. } => cmd::IOF_PULL,
            Request::GroupConstruct { .. } => cmd::GROUP_CONSTRUCT,
            Request::GroupDestruct { .. } => cmd::GROUP_DESTRUCT,
            Request::IofDereg { .. } => cmd::IOF_DEREG,
            Request::FabricRegister { .. } => cmd::FABRIC_REGISTER,
            Request::FabricUpdate { .. } => cmd::FABRIC_UPDATE,
            Request::Log { .. } => cmd::LOG,
            Request::IofPush { .. } => cmd::IOF_PUSH,
            Request::GroupLeave { .. } => cmd::GROUP_LEAVE,
            Request::DeviceDistances { .. } => cmd::COMPUTE_DEVICE_DISTANCES,
            Request::RefreshCache { .. } => cmd::REFRESH_CACHE,
            Request::ResBlock { .. } => cmd::RESBLK,
            Request::SessionCtrl { .. } => cmd::SESSION_CTRL,
            Request::ResolvePeers { .. } => cmd::RESOLVE_PEERS,
            Request::ResolveNode { .. } => cmd::RESOLVE_NODE,
            Request::GdsFallback { .. } => cmd::GDS_FALLBACK,
            Request::Other { command, .. } => *command,
        }
    }

    /// Decode a request payload in the connection's format.
    pub fn decode(fmt: &Format, payload: &[u8]) -> Result<Request> {
        let mut b = DataBuffer::from_bytes(*fmt, Bytes::copy_from_slice(payload));
        let command = match one(&mut b, DataType::Command, "command")? {
            Value::Command(c) => c,
            other => return Err(unexpected(other)),
        };
        let r = match command {
            cmd::REQ => Request::Req,
            cmd::FINALIZE => Request::Finalize,
            cmd::ABORT => {
                let status = status(&mut b, "status")?;
                let message = string(one(&mut b, DataType::String, "message")?);
                Request::Abort {
                    status,
                    message,
                    procs: procs(counted(&mut b, DataType::Proc, "procs")?),
                }
            }
            cmd::COMMIT => {
                let mut blobs = Vec::new();
                while !b.unread().is_empty() {
                    let scope = match one(&mut b, DataType::Scope, "scope")? {
                        Value::Scope(s) => s,
                        other => return Err(unexpected(other)),
                    };
                    let buf = match one(&mut b, DataType::Buffer, "blob")? {
                        Value::Buffer(x) => *x,
                        other => return Err(unexpected(other)),
                    };
                    blobs.push((scope, buf));
                }
                Request::Commit { blobs }
            }
            cmd::FENCENB => {
                let p = procs(counted(&mut b, DataType::Proc, "procs")?);
                Request::Fence {
                    procs: p,
                    info: infos(counted(&mut b, DataType::Info, "info")?),
                }
            }
            cmd::GETNB => {
                let nspace = string(one(&mut b, DataType::String, "nspace")?);
                let rank = proc_rank(&mut b, "rank")?;
                let info = infos(counted(&mut b, DataType::Info, "info")?);
                let key = if_more(&mut b, |b| Ok(string(one(b, DataType::String, "key")?)))?;
                Request::Get {
                    nspace,
                    rank,
                    info,
                    key,
                }
            }
            cmd::SPAWNNB => {
                let info = infos(counted(&mut b, DataType::Info, "info")?);
                let apps = counted(&mut b, DataType::App, "apps")?
                    .into_iter()
                    .filter_map(|x| match x {
                        Value::App(a) => Some(*a),
                        _ => None,
                    })
                    .collect();
                Request::Spawn { info, apps }
            }
            cmd::ALLOC => {
                let directive = match one(&mut b, DataType::AllocDirective, "directive")? {
                    Value::AllocDirective(d) => d,
                    other => return Err(unexpected(other)),
                };
                Request::Alloc {
                    directive,
                    info: infos(counted(&mut b, DataType::Info, "info")?),
                }
            }
            cmd::JOB_CONTROL => {
                let targets = procs(counted(&mut b, DataType::Proc, "targets")?);
                Request::JobControl {
                    targets,
                    directives: infos(counted(&mut b, DataType::Info, "directives")?),
                }
            }
            cmd::MONITOR => {
                let monitor = match one(&mut b, DataType::Info, "monitor")? {
                    Value::Info(i) => *i,
                    other => return Err(unexpected(other)),
                };
                let error = status(&mut b, "error")?;
                Request::Monitor {
                    monitor,
                    error,
                    directives: infos(counted(&mut b, DataType::Info, "directives")?),
                }
            }
            cmd::GET_CREDENTIAL => Request::GetCredential {
                info: infos(counted(&mut b, DataType::Info, "info")?),
            },
            cmd::VALIDATE_CRED => {
                let credential = byte_object(&mut b, "credential")?;
                Request::ValidateCred {
                    credential,
                    directives: infos(counted(&mut b, DataType::Info, "directives")?),
                }
            }
            cmd::IOF_PULL => {
                let p = procs(counted(&mut b, DataType::Proc, "procs")?);
                let directives = infos(counted(&mut b, DataType::Info, "directives")?);
                let channels = match one(&mut b, DataType::IofChannel, "channels")? {
                    Value::IofChannel(c) => c,
                    other => return Err(unexpected(other)),
                };
                Request::IofPull {
                    procs: p,
                    directives,
                    channels,
                    local_id: size(&mut b, "local_id")?,
                }
            }
            cmd::GROUP_CONSTRUCT => {
                let group = string(one(&mut b, DataType::String, "group")?);
                let p = procs(counted(&mut b, DataType::Proc, "procs")?);
                Request::GroupConstruct {
                    group,
                    procs: p,
                    info: infos(counted(&mut b, DataType::Info, "info")?),
                }
            }
            cmd::GROUP_DESTRUCT => {
                let group = string(one(&mut b, DataType::String, "group")?);
                Request::GroupDestruct {
                    group,
                    info: infos(counted(&mut b, DataType::Info, "info")?),
                }
            }
            cmd::IOF_DEREG => {
                let directives = infos(counted(&mut b, DataType::Info, "directives")?);
                Request::IofDereg {
                    directives,
                    remote_id: size(&mut b, "remote_id")?,
                }
            }
            cmd::FABRIC_REGISTER => Request::FabricRegister {
                directives: infos(counted(&mut b, DataType::Info, "directives")?),
            },
            cmd::FABRIC_UPDATE => Request::FabricUpdate {
                index: size(&mut b, "index")?,
            },
            cmd::PUBLISHNB => {
                let uid = uint32(&mut b, "uid")?;
                Request::Publish {
                    uid,
                    info: infos(counted(&mut b, DataType::Info, "info")?),
                }
            }
            cmd::LOOKUPNB | cmd::UNPUBLISHNB => {
                let uid = uint32(&mut b, "uid")?;
                let n = size(&mut b, "nkeys")?;
                let mut keys = Vec::new();
                for _ in 0..n {
                    // each key is its own unit, so a hostile count runs out of bytes
                    keys.push(string(one(&mut b, DataType::String, "keys")?));
                }
                let info = infos(counted(&mut b, DataType::Info, "info")?);
                if command == cmd::LOOKUPNB {
                    Request::Lookup { uid, keys, info }
                } else {
                    Request::Unpublish { uid, keys, info }
                }
            }
            cmd::CONNECTNB | cmd::DISCONNECTNB => {
                let p = procs(counted(&mut b, DataType::Proc, "procs")?);
                let info = infos(counted(&mut b, DataType::Info, "info")?);
                if command == cmd::CONNECTNB {
                    Request::Connect { procs: p, info }
                } else {
                    Request::Disconnect { procs: p, info }
                }
            }
            cmd::NOTIFY => {
                let status = status(&mut b, "status")?;
                let range = data_range(&mut b, "range")?;
                Request::Notify {
                    status,
                    range,
                    info: infos(counted(&mut b, DataType::Info, "info")?),
                }
            }
            cmd::REGEVENTS => {
                let codes = counted(&mut b, DataType::Status, "codes")?
                    .into_iter()
                    .map(status_of)
                    .collect::<Result<_>>()?;
                Request::RegEvents {
                    codes,
                    info: infos(counted(&mut b, DataType::Info, "info")?),
                }
            }
            cmd::DEREGEVENTS => {
                let mut codes = Vec::new();
                while !b.unread().is_empty() {
                    codes.push(status(&mut b, "codes")?);
                }
                Request::DeregEvents { codes }
            }
            cmd::QUERY => {
                let q = counted(&mut b, DataType::Query, "queries")?;
                let queries = q
                    .into_iter()
                    .filter_map(|x| {
                        if let Value::Query(q) = x {
                            Some(*q)
                        } else {
                            None
                        }
                    })
                    .collect();
                Request::Query { queries }
            }
            cmd::LOG => {
                let timestamp = if log_has_time(fmt) {
                    match one(&mut b, DataType::Time, "timestamp")? {
                        Value::Time(t) => Some(t),
                        other => return Err(unexpected(other)),
                    }
                } else {
                    None
                };
                let data = infos(counted(&mut b, DataType::Info, "data")?);
                Request::Log {
                    timestamp,
                    data,
                    directives: infos(counted(&mut b, DataType::Info, "directives")?),
                }
            }
            cmd::IOF_PUSH => {
                let targets = procs(counted(&mut b, DataType::Proc, "targets")?);
                let directives = infos(counted(&mut b, DataType::Info, "directives")?);
                let data = if_more(&mut b, |b| byte_object(b, "data"))?;
                Request::IofPush {
                    targets,
                    directives,
                    data,
                }
            }
            cmd::GROUP_LEAVE => {
                let group = string(one(&mut b, DataType::String, "group")?);
                Request::GroupLeave {
                    group,
                    info: infos(counted(&mut b, DataType::Info, "info")?),
                }
            }
            cmd::COMPUTE_DEVICE_DISTANCES => {
                let topology = match one(&mut b, DataType::Topo, "topology")? {
                    Value::Topo(t) => *t,
                    other => return Err(unexpected(other)),
                };
                let cpuset = match one(&mut b, DataType::ProcCpuset, "cpuset")? {
                    Value::ProcCpuset(c) => c,
                    other => return Err(unexpected(other)),
                };
                Request::DeviceDistances {
                    topology,
                    cpuset,
                    info: infos(counted(&mut b, DataType::Info, "info")?),
                }
            }
            cmd::REFRESH_CACHE => {
                let nspace = string(one(&mut b, DataType::String, "nspace")?);
                let rank = proc_rank(&mut b, "rank")?;
                Request::RefreshCache { nspace, rank }
            }
            cmd::RESBLK => {
                let directive = match one(&mut b, DataType::ResBlockDirective, "directive")? {
                    Value::ResBlockDirective(d) => d,
                    other => return Err(unexpected(other)),
                };
                let block = string(one(&mut b, DataType::String, "block")?);
                let units = counted(&mut b, DataType::ResourceUnit, "units")?
                    .into_iter()
                    .filter_map(|x| match x {
                        Value::ResourceUnit(u) => Some(u),
                        _ => None,
                    })
                    .collect();
                Request::ResBlock {
                    directive,
                    block,
                    units,
                    info: infos(counted(&mut b, DataType::Info, "info")?),
                }
            }
            cmd::SESSION_CTRL => {
                let session = uint32(&mut b, "session")?;
                Request::SessionCtrl {
                    session,
                    directives: infos(counted(&mut b, DataType::Info, "directives")?),
                }
            }
            cmd::RESOLVE_PEERS => {
                let node = string(one(&mut b, DataType::String, "node")?);
                let nspace = string(one(&mut b, DataType::String, "nspace")?);
                Request::ResolvePeers { node, nspace }
            }
            cmd::RESOLVE_NODE => Request::ResolveNode {
                nspace: string(one(&mut b, DataType::String, "nspace")?),
            },
            cmd::GDS_FALLBACK => Request::GdsFallback {
                module: string(one(&mut b, DataType::String, "module")?),
            },
            command => {
                return Ok(Request::Other {
                    command,
                    rest: Bytes::copy_from_slice(b.unread()),
                })
            }
        };
        all_read(&b, || {
            format!(
                "{} bytes after the last field of command {command}",
                b.unread().len()
            )
        })?;
        Ok(r)
    }

    /// The request payload in the connection's format.
    pub fn encode(&self, fmt: &Format) -> Result<Vec<u8>> {
        let mut b = DataBuffer::new(*fmt);
        b.pack(DataType::Command, &[Value::Command(self.command())])?;
        let proc_values = |p: &[Proc]| {
            p.iter()
                .map(|p| Value::Proc(Box::new(p.clone())))
                .collect::<Vec<_>>()
        };
        let info_values = |i: &[Info]| {
            i.iter()
                .map(|x| Value::Info(Box::new(x.clone())))
                .collect::<Vec<_>>()
        };
        match self {
            Request::Req | Request::Finalize => {}
            Request::Abort {
                status,
                message,
                procs,
            } => {
                b.pack(DataType::Status, &[Value::Status(*status)])?;
                b.pack(DataType::String, &[Value::String(message.clone())])?;
                put_counted(&mut b, DataType::Proc, proc_values(procs))?;
            }
            Request::Commit { blobs } => {
                for (scope, buf) in blobs {
                    b.pack(DataType::Scope, &[Value::Scope(*scope)])?;
                    b.pack(DataType::Buffer, &[Value::Buffer(Box::new(buf.clone()))])?;
                }
            }
            Request::Fence { procs, info } => {
                put_counted(&mut b, DataType::Proc, proc_values(procs))?;
                put_counted(&mut b, DataType::Info, info_values(info))?;
            }
            Request::Get {
                nspace,
                rank,
                info,
                key,
            } => {
                b.pack(DataType::String, &[Value::String(nspace.clone())])?;
                b.pack(DataType::ProcRank, &[Value::ProcRank(*rank)])?;
                put_counted(&mut b, DataType::Info, info_values(info))?;
                if let Some(k) = key {
                    b.pack(DataType::String, &[Value::String(k.clone())])?;
                }
            }
            Request::Spawn { info, apps } => {
                put_counted(&mut b, DataType::Info, info_values(info))?;
                let v = apps
                    .iter()
                    .map(|a| Value::App(Box::new(a.clone())))
                    .collect();
                put_counted(&mut b, DataType::App, v)?;
            }
            Request::Alloc { directive, info } => {
                b.pack(
                    DataType::AllocDirective,
                    &[Value::AllocDirective(*directive)],
                )?;
                put_counted(&mut b, DataType::Info, info_values(info))?;
            }
            Request::JobControl {
                targets,
                directives,
            } => {
                put_counted(&mut b, DataType::Proc, proc_values(targets))?;
                put_counted(&mut b, DataType::Info, info_values(directives))?;
            }
            Request::Monitor {
                monitor,
                error,
                directives,
            } => {
                b.pack(DataType::Info, &[Value::Info(Box::new(monitor.clone()))])?;
                b.pack(DataType::Status, &[Value::Status(*error)])?;
                put_counted(&mut b, DataType::Info, info_values(directives))?;
            }
            Request::GetCredential { info } | Request::FabricRegister { directives: info } => {
                put_counted(&mut b, DataType::Info, info_values(info))?;
            }
            Request::ValidateCred {
                credential,
                directives,
            } => {
                b.pack(
                    DataType::ByteObject,
                    &[Value::ByteObject(Box::new(pmix_types::Hex(
                        credential.clone(),
                    )))],
                )?;
                put_counted(&mut b, DataType::Info, info_values(directives))?;
            }
            Request::IofPull {
                procs,
                directives,
                channels,
                local_id,
            } => {
                put_counted(&mut b, DataType::Proc, proc_values(procs))?;
                put_counted(&mut b, DataType::Info, info_values(directives))?;
                b.pack(DataType::IofChannel, &[Value::IofChannel(*channels)])?;
                b.pack(DataType::Size, &[Value::Size(*local_id)])?;
            }
            Request::GroupConstruct { group, procs, info } => {
                b.pack(DataType::String, &[Value::String(group.clone())])?;
                put_counted(&mut b, DataType::Proc, proc_values(procs))?;
                put_counted(&mut b, DataType::Info, info_values(info))?;
            }
            Request::GroupDestruct { group, info } => {
                b.pack(DataType::String, &[Value::String(group.clone())])?;
                put_counted(&mut b, DataType::Info, info_values(info))?;
            }
            Request::IofDereg {
                directives,
                remote_id,
            } => {
                put_counted(&mut b, DataType::Info, info_values(directives))?;
                b.pack(DataType::Size, &[Value::Size(*remote_id)])?;
            }
            Request::FabricUpdate { index } => {
                b.pack(DataType::Size, &[Value::Size(*index)])?;
            }
            Request::Publish { uid, info } => {
                b.pack(DataType::Uint32, &[Value::Uint32(*uid)])?;
                put_counted(&mut b, DataType::Info, info_values(info))?;
            }
            Request::Lookup { uid, keys, info } | Request::Unpublish { uid, keys, info } => {
                b.pack(DataType::Uint32, &[Value::Uint32(*uid)])?;
                b.pack(DataType::Size, &[Value::Size(keys.len() as u64)])?;
                for k in keys {
                    b.pack(DataType::String, &[Value::String(k.clone())])?;
                }
                put_counted(&mut b, DataType::Info, info_values(info))?;
            }
            Request::Connect { procs, info } | Request::Disconnect { procs, info } => {
                put_counted(&mut b, DataType::Proc, proc_values(procs))?;
                put_counted(&mut b, DataType::Info, info_values(info))?;
            }
            Request::Notify {
                status,
                range,
                info,
            } => {
                b.pack(DataType::Status, &[Value::Status(*status)])?;
                b.pack(DataType::DataRange, &[Value::DataRange(*range)])?;
                put_counted(&mut b, DataType::Info, info_values(info))?;
            }
            Request::RegEvents { codes, info } => {
                let v = codes.iter().map(|c| Value::Status(*c)).collect();
                put_counted(&mut b, DataType::Status, v)?;
                put_counted(&mut b, DataType::Info, info_values(info))?;
            }
            Request::DeregEvents { codes } => {
                for c in codes {
                    b.pack(DataType::Status, &[Value::Status(*c)])?;
                }
            }
            Request::Query { queries } => {
                let v = queries
                    .iter()
                    .map(|q| Value::Query(Box::new(q.clone())))
                    .collect();
                put_counted(&mut b, DataType::Query, v)?;
            }
            Request::Log {
                timestamp,
                data,
                directives,
            } => {
                if let Some(t) = timestamp {
                    b.pack(DataType::Time, &[Value::Time(*t)])?;
                }
                put_counted(&mut b, DataType::Info, info_values(data))?;
                put_counted(&mut b, DataType::Info, info_values(directives))?;
            }
            Request::IofPush {
                targets,
                directives,
                data,
            } => {
                put_counted(&mut b, DataType::Proc, proc_values(targets))?;
                put_counted(&mut b, DataType::Info, info_values(directives))?;
                if let Some(d) = data {
                    b.pack(
                        DataType::ByteObject,
                        &[Value::ByteObject(Box::new(pmix_types::Hex(d.clone())))],
                    )?;
                }
            }
            Request::GroupLeave { group, info } => {
                b.pack(DataType::String, &[Value::String(group.clone())])?;
                put_counted(&mut b, DataType::Info, info_values(info))?;
            }
            Request::DeviceDistances {
                topology,
                cpuset,
                info,
            } => {
                b.pack(DataType::Topo, &[Value::Topo(Box::new(topology.clone()))])?;
                b.pack(DataType::ProcCpuset, &[Value::ProcCpuset(cpuset.clone())])?;
                put_counted(&mut b, DataType::Info, info_values(info))?;
            }
            Request::RefreshCache { nspace, rank } => {
                b.pack(DataType::String, &[Value::String(nspace.clone())])?;
                b.pack(DataType::ProcRank, &[Value::ProcRank(*rank)])?;
            }
            Request::ResBlock {
                directive,
                block,
                units,
                info,
            } => {
                b.pack(
                    DataType::ResBlockDirective,
                    &[Value::ResBlockDirective(*directive)],
                )?;
                b.pack(DataType::String, &[Value::String(block.clone())])?;
                let v = units.iter().cloned().map(Value::ResourceUnit).collect();
                put_counted(&mut b, DataType::ResourceUnit, v)?;
                put_counted(&mut b, DataType::Info, info_values(info))?;
            }
            Request::SessionCtrl {
                session,
                directives,
            } => {
                b.pack(DataType::Uint32, &[Value::Uint32(*session)])?;
                put_counted(&mut b, DataType::Info, info_values(directives))?;
            }
            Request::ResolvePeers { node, nspace } => {
                b.pack(DataType::String, &[Value::String(node.clone())])?;
                b.pack(DataType::String, &[Value::String(nspace.clone())])?;
            }
            Request::ResolveNode { nspace: s } | Request::GdsFallback { module: s } => {
                b.pack(DataType::String, &[Value::String(s.clone())])?;
            }
            Request::Other { rest, .. } => {
                let mut out = b.as_bytes().to_vec();
                out.extend_from_slice(rest);
                return Ok(out);
            }
        }
        Ok(b.as_bytes().to_vec())
    }
}

/// A server → client reply. Replies carry no command: the request's tag
/// says which layout to expect.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reply {
    /// REQ: the namespace, then job-level KVALs until the end (protocol.md §6).
    JobInfo {
        nspace: Option<PString>,
        kvals: Vec<pmix_types::Kval>,
    },
    /// A bare STATUS: COMMIT, FENCENB, FINALIZE, ABORT, REGEVENTS, … and
    /// the error convention for every command.
    Status(i32),
    /// GETNB: status, then zero or more byte objects of PROC + KVALs.
    Get {
        status: i32,
        #[serde(serialize_with = "hex_list")]
        blobs: Vec<Bytes>,
    },
    /// QUERY: status, then SIZE + INFOs.
    Query { status: i32, info: Vec<Info> },
    /// LOOKUPNB: status, then (only on success) SIZE + PDATAs.
    Lookup {
        status: i32,
        data: Vec<pmix_types::Pdata>,
    },
    /// ALLOC, JOB_CONTROL, MONITOR, VALIDATE_CRED, FABRIC_*: status, then
    /// SIZE + INFOs (`None`: the server sent nothing after the status).
    Infos {
        status: i32,
        info: Option<Vec<Info>>,
    },
    /// GET_CREDENTIAL: status, then the credential and SIZE + INFOs.
    Credential {
        status: i32,
        #[serde(serialize_with = "hex_opt")]
        credential: Option<Bytes>,
        info: Option<Vec<Info>>,
    },
    /// IOF_PULL (the remote reference id) and GROUP_CONSTRUCT (the context
    /// id, optional): status, then a SIZE.
    Id { status: i32, id: Option<u64> },
    /// SPAWNNB: status, then the new namespace and its job-level KVALs.
    Spawn {
        status: i32,
        nspace: Option<Option<PString>>,
        kvals: Vec<pmix_types::Kval>,
    },
    /// CONNECTNB: status, then one byte object per involved namespace.
    Connect {
        status: i32,
        #[serde(serialize_with = "hex_list")]
        blobs: Vec<Bytes>,
    },
    /// COMPUTE_DEVICE_DISTANCES: status, then SIZE + DEVICE_DISTs.
    Distances {
        status: i32,
        distances: Option<Vec<pmix_types::DeviceDist>>,
    },
    /// RESOLVE_PEERS: status, then (on success) SIZE + PROCs.
    Peers {
        status: i32,
        procs: Option<Vec<Proc>>,
    },
    /// RESOLVE_NODE: status, then (on success) the comma-separated node list.
    Nodes {
        status: i32,
        nodelist: Option<Option<PString>>,
    },
    /// A layout not typed yet.
    Raw(#[serde(with = "serde_bytes_hex")] Bytes),
}

fn status_of(v: Value) -> Result<i32> {
    match v {
        Value::Status(s) => Ok(s),
        other => Err(unexpected(other)),
    }
}

fn status(b: &mut DataBuffer, field: &str) -> Result<i32> {
    status_of(one(b, DataType::Status, field)?).map_err(|e| e.in_field(field))
}

/// A value of another type than the one unpacked (unpack never gives
/// one; an error rather than a panic all the same).
#[cold]
fn unexpected(v: Value) -> Error {
    Error::new(
        ErrorKind::Invalid(format!("unpack gave an unexpected {}", v.data_type())),
        0,
    )
}

impl Reply {
    /// Decode the reply to a request with `command`.
    pub fn decode(fmt: &Format, command: u8, payload: &[u8]) -> Result<Reply> {
        match Self::decode_as(fmt, command, payload) {
            Ok(r) => Ok(Self::canonical(r)),
            // the error convention: a lone STATUS answers any command
            Err(e) => {
                match crate::decode(fmt, DataType::Status, payload).map(|v| v.as_slice().to_vec()) {
                    Ok(v) if v.len() == 1 => {
                        let s = status_of(v[0].clone())?;
                        // the same answer as the canonical bytes of that status give
                        let lone = Reply::Status(s).encode(fmt)?;
                        Ok(match Self::decode_as(fmt, command, &lone) {
                            Ok(r) => Self::canonical(r),
                            Err(_) => Reply::Status(s),
                        })
                    }
                    _ => Err(e),
                }
            }
        }
    }

    /// Nothing after the status: the canonical form is a lone STATUS.
    fn canonical(r: Reply) -> Reply {
        match r {
            Reply::Infos { status, info: None }
            | Reply::Credential {
                status,
                credential: None,
                info: None,
            }
            | Reply::Id { status, id: None }
            | Reply::Distances {
                status,
                distances: None,
            }
            | Reply::Peers {
                status,
                procs: None,
            }
            | Reply::Nodes {
                status,
                nodelist: None,
            }
            | Reply::Spawn {
                status,
                nspace: None,
                ..
            } => Reply::Status(status),
            Reply::Lookup { status, data } if status != 0 && data.is_empty() => {
                Reply::Status(status)
            }
            r => r,
        }
    }

    fn decode_as(fmt: &Format, command: u8, payload: &[u8]) -> Result<Reply> {
        let mut b = DataBuffer::from_bytes(*fmt, Bytes::copy_from_slice(payload));
        let r = match command {
            cmd::REQ | cmd::GDS_FALLBACK => {
                let nspace = string(one(&mut b, DataType::String, "nspace")?);
                let mut kvals = Vec::new();
                while !b.unread().is_empty() {
                    match one(&mut b, DataType::Kval, "kval")? {
                        Value::Kval(k) => kvals.push(*k),
                        other => return Err(unexpected(other)),
                    }
                }
                Reply::JobInfo { nspace, kvals }
            }
            cmd::GETNB => {
                let status = status(&mut b, "status")?;
                let mut blobs = Vec::new();
                while !b.unread().is_empty() {
                    match one(&mut b, DataType::ByteObject, "blob")? {
                        Value::ByteObject(x) => blobs.push(x.0),
                        other => return Err(unexpected(other)),
                    }
                }
                Reply::Get { status, blobs }
            }
            cmd::QUERY => {
                let status = status(&mut b, "status")?;
                let info = opt_infos(&mut b, "info")?.unwrap_or_default();
                Reply::Query { status, info }
            }
            cmd::ALLOC
            | cmd::JOB_CONTROL
            | cmd::MONITOR
            | cmd::VALIDATE_CRED
            | cmd::FABRIC_REGISTER
            | cmd::FABRIC_UPDATE
            | cmd::RESBLK
            | cmd::SESSION_CTRL => {
                let status = status(&mut b, "status")?;
                Reply::Infos {
                    status,
                    info: opt_infos(&mut b, "info")?,
                }
            }
            cmd::GET_CREDENTIAL => {
                let status = status(&mut b, "status")?;
                let credential = if_more(&mut b, |b| byte_object(b, "credential"))?;
                Reply::Credential {
                    status,
                    credential,
                    info: opt_infos(&mut b, "info")?,
                }
            }
            cmd::IOF_PULL | cmd::GROUP_CONSTRUCT => {
                let status = status(&mut b, "status")?;
                let id = if_more(&mut b, |b| size(b, "id"))?;
                Reply::Id { status, id }
            }
            cmd::SPAWNNB => {
                let status = status(&mut b, "status")?;
                let nspace = if_more(&mut b, |b| Ok(string(one(b, DataType::String, "nspace")?)))?;
                let mut kvals = Vec::new();
                while !b.unread().is_empty() {
                    match one(&mut b, DataType::Kval, "kval")? {
                        Value::Kval(k) => kvals.push(*k),
                        other => return Err(unexpected(other)),
                    }
                }
                Reply::Spawn {
                    status,
                    nspace,
                    kvals,
                }
            }
            cmd::CONNECTNB => {
                let status = status(&mut b, "status")?;
                Reply::Connect {
                    status,
                    blobs: byte_objects(&mut b, "blob")?,
                }
            }
            cmd::LOOKUPNB => {
                let status = status(&mut b, "status")?;
                let data = if status == 0 {
                    counted(&mut b, DataType::Pdata, "data")?
                        .into_iter()
                        .filter_map(|x| match x {
                            Value::Pdata(d) => Some(*d),
                            _ => None,
                        })
                        .collect()
                } else {
                    Vec::new()
                };
                Reply::Lookup { status, data }
            }
            cmd::COMPUTE_DEVICE_DISTANCES => {
                let status = status(&mut b, "status")?;
                let distances = if_more(&mut b, |b| {
                    Ok(counted(b, DataType::DeviceDist, "distances")?
                        .into_iter()
                        .filter_map(|x| match x {
                            Value::DeviceDist(d) => Some(*d),
                            _ => None,
                        })
                        .collect())
                })?;
                Reply::Distances { status, distances }
            }
            cmd::RESOLVE_PEERS => {
                let status = status(&mut b, "status")?;
                let procs = if_more(&mut b, |b| Ok(procs(counted(b, DataType::Proc, "procs")?)))?;
                Reply::Peers { status, procs }
            }
            cmd::RESOLVE_NODE => {
                let status = status(&mut b, "status")?;
                let nodelist =
                    if_more(&mut b, |b| Ok(string(one(b, DataType::String, "nodelist")?)))?;
                Reply::Nodes { status, nodelist }
            }
            cmd::COMMIT
            | cmd::FENCENB
            | cmd::FINALIZE
            | cmd::ABORT
            | cmd::PUBLISHNB
            | cmd::UNPUBLISHNB
            | cmd::DISCONNECTNB
            | cmd::NOTIFY
            | cmd::REGEVENTS
            | cmd::LOG
            | cmd::IOF_PUSH
            | cmd::GROUP_DESTRUCT
            | cmd::GROUP_LEAVE
            | cmd::IOF_DEREG
            | cmd::REFRESH_CACHE
            // never sent by any client; servers answer NOT_SUPPORTED
            | cmd::GROUP_JOIN
            | cmd::GROUP_INVITE
            | cmd::REQ_SYSINFO => Reply::Status(status(&mut b, "status")?),
            _ => return Ok(Reply::Raw(Bytes::copy_from_slice(payload))),
        };
        all_read(&b, || "bytes after the reply".into())?;
        Ok(r)
    }

    /// The reply payload in the connection's format.
    pub fn encode(&self, fmt: &Format) -> Result<Vec<u8>> {
        let mut b = DataBuffer::new(*fmt);
        match self {
            Reply::JobInfo { nspace, kvals } => {
                b.pack(DataType::String, &[Value::String(nspace.clone())])?;
                for k in kvals {
                    b.pack(DataType::Kval, &[Value::Kval(Box::new(k.clone()))])?;
                }
            }
            Reply::Status(s) => b.pack(DataType::Status, &[Value::Status(*s)])?,
            Reply::Get { status, blobs } => {
                b.pack(DataType::Status, &[Value::Status(*status)])?;
                for x in blobs {
                    b.pack(
                        DataType::ByteObject,
                        &[Value::ByteObject(Box::new(pmix_types::Hex(x.clone())))],
                    )?;
                }
            }
            Reply::Query { status, info } => {
                b.pack(DataType::Status, &[Value::Status(*status)])?;
                if *status == 0 || !info.is_empty() {
                    let v = info
                        .iter()
                        .map(|x| Value::Info(Box::new(x.clone())))
                        .collect();
                    put_counted(&mut b, DataType::Info, v)?;
                }
            }
            Reply::Lookup { status, data } => {
                b.pack(DataType::Status, &[Value::Status(*status)])?;
                if *status == 0 {
                    let v = data
                        .iter()
                        .map(|d| Value::Pdata(Box::new(d.clone())))
                        .collect();
                    put_counted(&mut b, DataType::Pdata, v)?;
                } else if !data.is_empty() {
                    return Err(Error::new(
                        ErrorKind::Invalid("a failed LOOKUP reply carries no data".into()),
                        0,
                    ));
                }
            }
            Reply::Infos { status, info } => {
                b.pack(DataType::Status, &[Value::Status(*status)])?;
                if let Some(i) = info {
                    let v = i.iter().map(|x| Value::Info(Box::new(x.clone()))).collect();
                    put_counted(&mut b, DataType::Info, v)?;
                }
            }
            Reply::Credential {
                status,
                credential,
                info,
            } => {
                b.pack(DataType::Status, &[Value::Status(*status)])?;
                if let Some(c) = credential {
                    b.pack(
                        DataType::ByteObject,
                        &[Value::ByteObject(Box::new(pmix_types::Hex(c.clone())))],
                    )?;
                }
                if let Some(i) = info {
                    if credential.is_none() {
                        return Err(Error::new(
                            ErrorKind::Invalid(
                                "credential reply: info without a credential".into(),
                            ),
                            0,
                        ));
                    }
                    let v = i.iter().map(|x| Value::Info(Box::new(x.clone()))).collect();
                    put_counted(&mut b, DataType::Info, v)?;
                }
            }
            Reply::Id { status, id } => {
                b.pack(DataType::Status, &[Value::Status(*status)])?;
                if let Some(n) = id {
                    b.pack(DataType::Size, &[Value::Size(*n)])?;
                }
            }
            Reply::Spawn {
                status,
                nspace,
                kvals,
            } => {
                b.pack(DataType::Status, &[Value::Status(*status)])?;
                match nspace {
                    Some(ns) => b.pack(DataType::String, &[Value::String(ns.clone())])?,
                    None if !kvals.is_empty() => {
                        return Err(Error::new(
                            ErrorKind::Invalid("spawn reply: KVALs without a namespace".into()),
                            0,
                        ))
                    }
                    None => {}
                }
                for k in kvals {
                    b.pack(DataType::Kval, &[Value::Kval(Box::new(k.clone()))])?;
                }
            }
            Reply::Connect { status, blobs } => {
                b.pack(DataType::Status, &[Value::Status(*status)])?;
                for x in blobs {
                    b.pack(
                        DataType::ByteObject,
                        &[Value::ByteObject(Box::new(pmix_types::Hex(x.clone())))],
                    )?;
                }
            }
            Reply::Distances { status, distances } => {
                b.pack(DataType::Status, &[Value::Status(*status)])?;
                if let Some(d) = distances {
                    let v = d
                        .iter()
                        .map(|x| Value::DeviceDist(Box::new(x.clone())))
                        .collect();
                    put_counted(&mut b, DataType::DeviceDist, v)?;
                }
            }
            Reply::Peers { status, procs } => {
                b.pack(DataType::Status, &[Value::Status(*status)])?;
                if let Some(p) = procs {
                    put_counted(
                        &mut b,
                        DataType::Proc,
                        p.iter().map(|p| Value::Proc(Box::new(p.clone()))).collect(),
                    )?;
                }
            }
            Reply::Nodes { status, nodelist } => {
                b.pack(DataType::Status, &[Value::Status(*status)])?;
                if let Some(n) = nodelist {
                    b.pack(DataType::String, &[Value::String(n.clone())])?;
                }
            }
            Reply::Raw(bytes) => return Ok(bytes.to_vec()),
        }
        Ok(b.as_bytes().to_vec())
    }
}

/// An event the server pushes to a client unsolicited, on tag 0
/// (protocol.md §5.4 "NOTIFY, server → client"): COMMAND 12, STATUS code,
/// PROC source, SIZE + INFOs (if > 0), then a DATA_RANGE that the normal
/// notify path appends and the connect-time replay of cached events omits.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EventNotice {
    pub status: i32,
    pub source: Proc,
    pub info: Vec<Info>,
    pub range: Option<u8>,
}

impl EventNotice {
    pub fn decode(fmt: &Format, payload: &[u8]) -> Result<EventNotice> {
        let mut b = DataBuffer::from_bytes(*fmt, Bytes::copy_from_slice(payload));
        match one(&mut b, DataType::Command, "command")? {
            Value::Command(cmd::NOTIFY) => {}
            Value::Command(c) => {
                return Err(Error::new(
                    ErrorKind::Invalid(format!("tag-0 message with command {c}, not NOTIFY")),
                    0,
                ))
            }
            other => return Err(unexpected(other)),
        }
        let status = status(&mut b, "status")?;
        let source = match one(&mut b, DataType::Proc, "source")? {
            Value::Proc(p) => *p,
            other => return Err(unexpected(other)),
        };
        let info = infos(counted(&mut b, DataType::Info, "info")?);
        let range = if_more(&mut b, |b| data_range(b, "range"))?;
        all_read(&b, || "bytes after the event's range".into())?;
        Ok(EventNotice {
            status,
            source,
            info,
            range,
        })
    }

    pub fn encode(&self, fmt: &Format) -> Result<Vec<u8>> {
        let mut b = DataBuffer::new(*fmt);
        b.pack(DataType::Command, &[Value::Command(cmd::NOTIFY)])?;
        b.pack(DataType::Status, &[Value::Status(self.status)])?;
        b.pack(
            DataType::Proc,
            &[Value::Proc(Box::new(self.source.clone()))],
        )?;
        let v = self
            .info
            .iter()
            .map(|x| Value::Info(Box::new(x.clone())))
            .collect();
        put_counted(&mut b, DataType::Info, v)?;
        if let Some(r) = self.range {
            b.pack(DataType::DataRange, &[Value::DataRange(r)])?;
        }
        Ok(b.as_bytes().to_vec())
    }
}

/// Forwarded output, server → client or tool on tag 2 (protocol.md §5.2
/// "IOF"; packed by `pmix_iof.c` and `pmix_server_ops.c` of 4.2.2, read by
/// `client_iof_handler`): the source, the channel, the requester's
/// reference id, SIZE + INFOs, then the data. An empty tag-2 message (the
/// socket is closing) is not an `IofData`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IofData {
    pub source: Proc,
    pub channel: u16,
    pub refid: u64,
    pub info: Vec<Info>,
    #[serde(with = "serde_bytes_hex")]
    pub data: Bytes,
}

impl IofData {
    pub fn decode(fmt: &Format, payload: &[u8]) -> Result<IofData> {
        let mut b = DataBuffer::from_bytes(*fmt, Bytes::copy_from_slice(payload));
        let source = match one(&mut b, DataType::Proc, "source")? {
            Value::Proc(p) => *p,
            other => return Err(unexpected(other)),
        };
        let channel = match one(&mut b, DataType::IofChannel, "channel")? {
            Value::IofChannel(c) => c,
            other => return Err(unexpected(other)),
        };
        let refid = size(&mut b, "refid")?;
        let info = infos(counted(&mut b, DataType::Info, "info")?);
        let data = byte_object(&mut b, "data")?;
        all_read(&b, || "bytes after the forwarded data".into())?;
        Ok(IofData {
            source,
            channel,
            refid,
            info,
            data,
        })
    }

    pub fn encode(&self, fmt: &Format) -> Result<Vec<u8>> {
        let mut b = DataBuffer::new(*fmt);
        b.pack(
            DataType::Proc,
            &[Value::Proc(Box::new(self.source.clone()))],
        )?;
        b.pack(DataType::IofChannel, &[Value::IofChannel(self.channel)])?;
        b.pack(DataType::Size, &[Value::Size(self.refid)])?;
        let v = self
            .info
            .iter()
            .map(|x| Value::Info(Box::new(x.clone())))
            .collect();
        put_counted(&mut b, DataType::Info, v)?;
        b.pack(
            DataType::ByteObject,
            &[Value::ByteObject(Box::new(pmix_types::Hex(
                self.data.clone(),
            )))],
        )?;
        Ok(b.as_bytes().to_vec())
    }
}
