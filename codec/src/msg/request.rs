//! Client → server requests.

use super::*;

/// A request. Its JSON form (for the inspector) names the command in
/// `command` and carries the fields by name.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(Serialize))]
#[cfg_attr(
    feature = "serde",
    serde(tag = "command", rename_all = "SCREAMING_SNAKE_CASE")
)]
pub enum Request {
    /// `PMIX_REQ_CMD`: the job-info request of PMIx_Init.
    Req,
    /// `PMIX_ABORT_CMD`: `PMIx_Abort`'s status, message and the processes to abort (none: the whole job).
    Abort {
        /// The exit status the caller asks for.
        status: i32,
        /// The message to report.
        message: Option<PString>,
        /// The processes to abort; empty for every process of the namespace.
        procs: Vec<Proc>,
    },
    /// Blobs of packed KVALs per scope.
    Commit {
        /// Per `pmix_scope_t`, the buffer of KVALs put in that scope.
        blobs: Vec<(u8, Buffer)>,
    },
    /// `PMIX_FENCENB_CMD`: `PMIx_Fence` over `procs`.
    Fence {
        /// The participants.
        procs: Vec<Proc>,
        /// Its attributes (`pmix.collect` …).
        info: Vec<Info>,
    },
    /// `key`: `None` when not sent (older clients), `Some(None)` for a NULL key.
    Get {
        /// The namespace of the process whose data is asked for.
        nspace: Option<PString>,
        /// Its rank (`PMIX_RANK_WILDCARD` for job-level data).
        rank: u32,
        /// The get's attributes (`pmix.timeout` …).
        info: Vec<Info>,
        /// The key asked for.
        key: Option<Option<PString>>,
    },
    /// `PMIX_FINALIZE_CMD`: `PMIx_Finalize`.
    Finalize,
    /// `PMIX_PUBLISHNB_CMD`: the publisher's uid and the data to publish.
    Publish {
        /// The publisher's effective uid.
        uid: u32,
        /// The data to publish and its attributes (range, persistence).
        info: Vec<Info>,
    },
    /// `PMIX_LOOKUPNB_CMD`: keys are packed one unit each.
    Lookup {
        /// The caller's effective uid.
        uid: u32,
        /// The keys to look up.
        keys: Vec<Option<PString>>,
        /// Its attributes (range, `pmix.wait` …).
        info: Vec<Info>,
    },
    /// `PMIX_UNPUBLISHNB_CMD`: as LOOKUP; no keys means "all I published".
    Unpublish {
        /// The caller's effective uid.
        uid: u32,
        /// The keys to withdraw.
        keys: Vec<Option<PString>>,
        /// Its attributes (range).
        info: Vec<Info>,
    },
    /// `PMIX_CONNECTNB_CMD`.
    Connect {
        /// The processes to connect with.
        procs: Vec<Proc>,
        /// Its attributes.
        info: Vec<Info>,
    },
    /// `PMIX_DISCONNECTNB_CMD`.
    Disconnect {
        /// The processes to disconnect from.
        procs: Vec<Proc>,
        /// Its attributes.
        info: Vec<Info>,
    },
    /// `PMIX_NOTIFY_CMD`: the source is implicitly the sender.
    Notify {
        /// The event's status code.
        status: i32,
        /// The `pmix_data_range_t` to notify in.
        range: u8,
        /// The event's attributes.
        info: Vec<Info>,
    },
    /// `PMIX_REGEVENTS_CMD`: no codes registers a default handler.
    RegEvents {
        /// The status codes to be notified of.
        codes: Vec<i32>,
        /// The registration's attributes.
        info: Vec<Info>,
    },
    /// `PMIX_DEREGEVENTS_CMD`: one STATUS unit per code; no reply.
    DeregEvents {
        /// The status codes to stop being notified of.
        codes: Vec<i32>,
    },
    /// `PMIX_QUERY_CMD`: `PMIx_Query_info`.
    Query {
        /// The queries.
        queries: Vec<Query>,
    },
    /// `PMIX_SPAWNNB_CMD`: job-level info, then the apps.
    Spawn {
        /// Job-level attributes of the spawn.
        info: Vec<Info>,
        /// The applications to start.
        apps: Vec<App>,
    },
    /// `PMIX_ALLOC_CMD`.
    Alloc {
        /// The `pmix_alloc_directive_t` (new, extend, release …).
        directive: u8,
        /// What is requested.
        info: Vec<Info>,
    },
    /// `PMIX_JOB_CONTROL_CMD`.
    JobControl {
        /// The processes the directives apply to.
        targets: Vec<Proc>,
        /// What to do (`pmix.jctrl.kill` …).
        directives: Vec<Info>,
    },
    /// `PMIX_MONITOR_CMD`: one INFO saying what to monitor.
    Monitor {
        /// What to monitor.
        monitor: Info,
        /// The status to raise when the monitor triggers.
        error: i32,
        /// Its attributes.
        directives: Vec<Info>,
    },
    /// `PMIX_GET_CREDENTIAL_CMD`.
    GetCredential {
        /// Attributes of the credential asked for.
        info: Vec<Info>,
    },
    /// `PMIX_VALIDATE_CRED_CMD`.
    ValidateCred {
        /// The credential to validate.
        #[cfg_attr(feature = "serde", serde(with = "serde_bytes_hex"))]
        credential: Bytes,
        /// Its attributes.
        directives: Vec<Info>,
    },
    /// `PMIX_IOF_PULL_CMD`.
    IofPull {
        /// The processes whose output is wanted.
        procs: Vec<Proc>,
        /// Its attributes (`pmix.iof.cpy` …).
        directives: Vec<Info>,
        /// The `pmix_iof_channel_t` bits wanted.
        channels: u16,
        /// The requester's reference for this registration.
        local_id: u64,
    },
    /// `PMIX_GROUP_CONSTRUCT_CMD`.
    GroupConstruct {
        /// The group's name.
        group: Option<PString>,
        /// Its members.
        procs: Vec<Proc>,
        /// Its attributes.
        info: Vec<Info>,
    },
    /// `PMIX_GROUP_DESTRUCT_CMD`.
    GroupDestruct {
        /// The group's name.
        group: Option<PString>,
        /// Its attributes.
        info: Vec<Info>,
    },
    /// `PMIX_IOF_DEREG_CMD`.
    IofDereg {
        /// Its attributes.
        directives: Vec<Info>,
        /// The reference id the server gave the pull.
        remote_id: u64,
    },
    /// `PMIX_FABRIC_REGISTER_CMD`.
    FabricRegister {
        /// The fabric's attributes.
        directives: Vec<Info>,
    },
    /// `PMIX_FABRIC_UPDATE_CMD`.
    FabricUpdate {
        /// The fabric's index at the server.
        index: u64,
    },
    /// `PMIX_LOG_CMD`: the timestamp is sent whenever the peer is 3.0 or
    /// later, whatever the dialect ([`log_sends_time`]): `None` encodes
    /// a 2.x peer's LOG, without it.
    Log {
        /// When the caller logged, seconds since the epoch.
        timestamp: Option<u64>,
        /// The data to log.
        data: Vec<Info>,
        /// Its attributes (where to log …).
        directives: Vec<Info>,
    },
    /// `PMIX_IOF_PUSH_CMD`: the data is left out when stdin reached EOF.
    IofPush {
        /// The processes to deliver the input to.
        targets: Vec<Proc>,
        /// Its attributes.
        directives: Vec<Info>,
        /// The input bytes; `None` at EOF.
        #[cfg_attr(feature = "serde", serde(serialize_with = "hex_opt"))]
        data: Option<Bytes>,
    },
    /// `PMIX_GROUP_LEAVE_CMD`.
    GroupLeave {
        /// The group's name.
        group: Option<PString>,
        /// Its attributes.
        info: Vec<Info>,
    },
    /// `PMIX_COMPUTE_DEVICE_DISTANCES_CMD`.
    DeviceDistances {
        /// The topology to compute in.
        topology: pmix_types::Topology,
        /// The cpus distances are measured from.
        cpuset: pmix_types::Cpuset,
        /// Its attributes (device types …).
        info: Vec<Info>,
    },
    /// `PMIX_REFRESH_CACHE` (5.0+): refetch the job data of one proc.
    RefreshCache {
        /// The process's namespace.
        nspace: Option<PString>,
        /// Its rank.
        rank: u32,
    },
    /// `PMIX_RESBLK_CMD` (6.0+): a resource-block directive.
    ResBlock {
        /// The `pmix_resource_block_directive_t`.
        directive: u8,
        /// The block's name.
        block: Option<PString>,
        /// The resources in the block.
        units: Vec<pmix_types::ResourceUnit>,
        /// Its attributes.
        info: Vec<Info>,
    },
    /// `PMIX_SESSION_CTRL_CMD` (6.0+).
    SessionCtrl {
        /// The session id.
        session: u32,
        /// What to do with it.
        directives: Vec<Info>,
    },
    /// `PMIX_RESOLVE_PEERS_CMD` (5.0+): the procs of `nspace` on `node`.
    ResolvePeers {
        /// The node.
        node: Option<PString>,
        /// The namespace.
        nspace: Option<PString>,
    },
    /// `PMIX_RESOLVE_NODE_CMD` (5.0+): the nodes hosting `nspace`.
    ResolveNode {
        /// The namespace.
        nspace: Option<PString>,
    },
    /// `PMIX_GDS_FALLBACK_CMD` (master): the client switched to `module`
    /// and wants its job data again, answered like REQ.
    GdsFallback {
        /// The gds module the client now uses.
        module: Option<PString>,
    },
    /// Any other command (GROUP_JOIN, GROUP_INVITE and REQ_SYSINFO, which no
    /// client packs, and codes from 40 on), its fields unparsed.
    Other {
        /// The command code.
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
        Self::decode_bytes(fmt, Bytes::copy_from_slice(payload))
    }

    /// As [`Request::decode`], without copying the payload: byte objects
    /// and blobs in the request share it.
    pub fn decode_bytes(fmt: &Format, payload: Bytes) -> Result<Request> {
        let mut b = DataBuffer::from_bytes(*fmt, payload.clone());
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
                if log_time_certain(fmt) {
                    log_fields(&mut b, true)?
                } else {
                    // v12/v20/v21: a 2.x peer leaves TIME out, a 3.0+ one
                    // sends it (log_sends_time). Read it without TIME first,
                    // then with; a TIME read as a count + SIZE fails at the
                    // SIZE (its type tag or its 8 bytes), a missing one
                    // leaves the read short. Report the attempt that got
                    // further.
                    let mut alt = DataBuffer::from_bytes(*fmt, payload.clone());
                    one(&mut alt, DataType::Command, "command")?;
                    let without = log_fields(&mut b, false).and_then(|r| {
                        all_read(&b, || "bytes after LOG's directives".into())?;
                        Ok(r)
                    });
                    match without {
                        Ok(r) => r,
                        Err(e1) => match log_fields(&mut alt, true) {
                            Ok(r) => {
                                b = alt;
                                r
                            }
                            Err(e2) => return Err(if e2.offset > e1.offset { e2 } else { e1 }),
                        },
                    }
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
                    rest: payload.slice(b.position()..),
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
                put_infos(&mut b, info)?;
            }
            Request::Get {
                nspace,
                rank,
                info,
                key,
            } => {
                b.pack(DataType::String, &[Value::String(nspace.clone())])?;
                b.pack(DataType::ProcRank, &[Value::ProcRank(*rank)])?;
                put_infos(&mut b, info)?;
                if let Some(k) = key {
                    b.pack(DataType::String, &[Value::String(k.clone())])?;
                }
            }
            Request::Spawn { info, apps } => {
                put_infos(&mut b, info)?;
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
                put_infos(&mut b, info)?;
            }
            Request::JobControl {
                targets,
                directives,
            } => {
                put_counted(&mut b, DataType::Proc, proc_values(targets))?;
                put_infos(&mut b, directives)?;
            }
            Request::Monitor {
                monitor,
                error,
                directives,
            } => {
                b.pack(DataType::Info, &[Value::Info(Box::new(monitor.clone()))])?;
                b.pack(DataType::Status, &[Value::Status(*error)])?;
                put_infos(&mut b, directives)?;
            }
            Request::GetCredential { info } | Request::FabricRegister { directives: info } => {
                put_infos(&mut b, info)?;
            }
            Request::ValidateCred {
                credential,
                directives,
            } => {
                put_byte_object(&mut b, credential)?;
                put_infos(&mut b, directives)?;
            }
            Request::IofPull {
                procs,
                directives,
                channels,
                local_id,
            } => {
                put_counted(&mut b, DataType::Proc, proc_values(procs))?;
                put_infos(&mut b, directives)?;
                b.pack(DataType::IofChannel, &[Value::IofChannel(*channels)])?;
                b.pack(DataType::Size, &[Value::Size(*local_id)])?;
            }
            Request::GroupConstruct { group, procs, info } => {
                b.pack(DataType::String, &[Value::String(group.clone())])?;
                put_counted(&mut b, DataType::Proc, proc_values(procs))?;
                put_infos(&mut b, info)?;
            }
            Request::GroupDestruct { group, info } => {
                b.pack(DataType::String, &[Value::String(group.clone())])?;
                put_infos(&mut b, info)?;
            }
            Request::IofDereg {
                directives,
                remote_id,
            } => {
                put_infos(&mut b, directives)?;
                b.pack(DataType::Size, &[Value::Size(*remote_id)])?;
            }
            Request::FabricUpdate { index } => {
                b.pack(DataType::Size, &[Value::Size(*index)])?;
            }
            Request::Publish { uid, info } => {
                b.pack(DataType::Uint32, &[Value::Uint32(*uid)])?;
                put_infos(&mut b, info)?;
            }
            Request::Lookup { uid, keys, info } | Request::Unpublish { uid, keys, info } => {
                b.pack(DataType::Uint32, &[Value::Uint32(*uid)])?;
                b.pack(DataType::Size, &[Value::Size(keys.len() as u64)])?;
                for k in keys {
                    b.pack(DataType::String, &[Value::String(k.clone())])?;
                }
                put_infos(&mut b, info)?;
            }
            Request::Connect { procs, info } | Request::Disconnect { procs, info } => {
                put_counted(&mut b, DataType::Proc, proc_values(procs))?;
                put_infos(&mut b, info)?;
            }
            Request::Notify {
                status,
                range,
                info,
            } => {
                b.pack(DataType::Status, &[Value::Status(*status)])?;
                b.pack(DataType::DataRange, &[Value::DataRange(*range)])?;
                put_infos(&mut b, info)?;
            }
            Request::RegEvents { codes, info } => {
                let v = codes.iter().map(|c| Value::Status(*c)).collect();
                put_counted(&mut b, DataType::Status, v)?;
                put_infos(&mut b, info)?;
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
                put_infos(&mut b, data)?;
                put_infos(&mut b, directives)?;
            }
            Request::IofPush {
                targets,
                directives,
                data,
            } => {
                put_counted(&mut b, DataType::Proc, proc_values(targets))?;
                put_infos(&mut b, directives)?;
                if let Some(d) = data {
                    put_byte_object(&mut b, d)?;
                }
            }
            Request::GroupLeave { group, info } => {
                b.pack(DataType::String, &[Value::String(group.clone())])?;
                put_infos(&mut b, info)?;
            }
            Request::DeviceDistances {
                topology,
                cpuset,
                info,
            } => {
                b.pack(DataType::Topo, &[Value::Topo(Box::new(topology.clone()))])?;
                b.pack(DataType::ProcCpuset, &[Value::ProcCpuset(cpuset.clone())])?;
                put_infos(&mut b, info)?;
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
                put_infos(&mut b, info)?;
            }
            Request::SessionCtrl {
                session,
                directives,
            } => {
                b.pack(DataType::Uint32, &[Value::Uint32(*session)])?;
                put_infos(&mut b, directives)?;
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

/// LOG's fields after the command: TIME if `with_time`, then SIZE + INFOs
/// data and SIZE + INFOs directives.
fn log_fields(b: &mut DataBuffer, with_time: bool) -> Result<Request> {
    let timestamp = if with_time {
        match one(b, DataType::Time, "timestamp")? {
            Value::Time(t) => Some(t),
            other => return Err(unexpected(other)),
        }
    } else {
        None
    };
    let data = infos(counted(b, DataType::Info, "data")?);
    Ok(Request::Log {
        timestamp,
        data,
        directives: infos(counted(b, DataType::Info, "directives")?),
    })
}
