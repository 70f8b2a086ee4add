//! Server → client replies to a request.

use super::*;

/// A server → client reply. Replies carry no command: the request's tag
/// says which layout to expect.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Reply {
    /// REQ: the namespace, then job-level KVALs until the end (protocol.md §6).
    JobInfo {
        /// The client's namespace.
        nspace: Option<PString>,
        /// The job-level data, one key-value pair each.
        kvals: Vec<pmix_types::Kval>,
    },
    /// A bare STATUS: COMMIT, FENCENB, FINALIZE, ABORT, REGEVENTS, … and
    /// the error convention for every command.
    Status(i32),
    /// GETNB: status, then zero or more byte objects of PROC + KVALs.
    Get {
        /// The `pmix_status_t` of the request (0 success).
        status: i32,
        /// Byte objects, each a PROC and its KVALs, packed.
        #[cfg_attr(feature = "serde", serde(serialize_with = "hex_list"))]
        blobs: Vec<Bytes>,
    },
    /// GETNB answered late by a libpmix server (the request waited for the
    /// data): the status in the connection's dialect, then byte objects of
    /// PROC + KVALs packed, byte objects included, in the server's own
    /// dialect `blob_dialect` (v41 for libpmix 4.2.x), whatever the peer's
    /// (`pmix_pending_resolve` packs them for `pmix_globals.mypeer`;
    /// spec-notes/divergences.md). Read only where the connection's own
    /// dialect fails.
    GetOwnDialect {
        /// The `pmix_status_t` of the request (0 success).
        status: i32,
        /// The dialect the blobs are packed in (the server's own).
        #[cfg_attr(feature = "serde", serde(serialize_with = "dialect_name"))]
        blob_dialect: crate::Dialect,
        /// Byte objects, each a PROC and its KVALs, packed in `blob_dialect`.
        #[cfg_attr(feature = "serde", serde(serialize_with = "hex_list"))]
        blobs: Vec<Bytes>,
    },
    /// QUERY: status, then SIZE + INFOs.
    Query {
        /// The `pmix_status_t` of the request (0 success).
        status: i32,
        /// The answers, one info per query key.
        info: Vec<Info>,
    },
    /// LOOKUPNB: status, then (only on success) SIZE + PDATAs.
    Lookup {
        /// The `pmix_status_t` of the request (0 success).
        status: i32,
        /// The published data found: publisher, key, value.
        data: Vec<pmix_types::Pdata>,
    },
    /// ALLOC, JOB_CONTROL, MONITOR, VALIDATE_CRED, FABRIC_*: status, then
    /// SIZE + INFOs (`None`: the server sent nothing after the status).
    Infos {
        /// The `pmix_status_t` of the request (0 success).
        status: i32,
        /// The results the server returned, if it sent any.
        info: Option<Vec<Info>>,
    },
    /// GET_CREDENTIAL: status, then the credential and SIZE + INFOs.
    Credential {
        /// The `pmix_status_t` of the request (0 success).
        status: i32,
        /// The credential, if the server sent one.
        #[cfg_attr(feature = "serde", serde(serialize_with = "hex_opt"))]
        credential: Option<Bytes>,
        /// Attributes of the credential, if sent.
        info: Option<Vec<Info>>,
    },
    /// IOF_PULL (the remote reference id) and GROUP_CONSTRUCT (the context
    /// id, optional): status, then a SIZE.
    Id {
        /// The `pmix_status_t` of the request (0 success).
        status: i32,
        /// The id, if the server sent one.
        id: Option<u64>,
    },
    /// SPAWNNB: status, then the new namespace and its job-level KVALs.
    Spawn {
        /// The `pmix_status_t` of the request (0 success).
        status: i32,
        /// The new job's namespace: `None` if absent, `Some(None)` for a NULL string.
        nspace: Option<Option<PString>>,
        /// The new job's job-level data.
        kvals: Vec<pmix_types::Kval>,
    },
    /// CONNECTNB: status, then one byte object per involved namespace.
    Connect {
        /// The `pmix_status_t` of the request (0 success).
        status: i32,
        /// One byte object of job data per namespace involved.
        #[cfg_attr(feature = "serde", serde(serialize_with = "hex_list"))]
        blobs: Vec<Bytes>,
    },
    /// COMPUTE_DEVICE_DISTANCES: status, then SIZE + DEVICE_DISTs.
    Distances {
        /// The `pmix_status_t` of the request (0 success).
        status: i32,
        /// The distance to each device, if sent.
        distances: Option<Vec<pmix_types::DeviceDist>>,
    },
    /// RESOLVE_PEERS: status, then (on success) SIZE + PROCs.
    Peers {
        /// The `pmix_status_t` of the request (0 success).
        status: i32,
        /// The processes found, if sent.
        procs: Option<Vec<Proc>>,
    },
    /// RESOLVE_NODE: status, then (on success) the comma-separated node list.
    Nodes {
        /// The `pmix_status_t` of the request (0 success).
        status: i32,
        /// The node list: `None` if absent, `Some(None)` for a NULL string.
        nodelist: Option<Option<PString>>,
    },
    /// A layout not typed yet.
    Raw(#[cfg_attr(feature = "serde", serde(with = "serde_bytes_hex"))] Bytes),
}

impl Reply {
    /// Decode the reply to a request with `command`.
    pub fn decode(fmt: &Format, command: u8, payload: &[u8]) -> Result<Reply> {
        Self::decode_bytes(fmt, command, Bytes::copy_from_slice(payload))
    }

    /// As [`Reply::decode`], without copying the payload: byte objects and
    /// blobs in the reply share it.
    pub fn decode_bytes(fmt: &Format, command: u8, payload: Bytes) -> Result<Reply> {
        match Self::decode_as(fmt, command, payload.clone()) {
            Ok(r) => Ok(Self::canonical(r)),
            // the error convention: a lone STATUS answers any command
            Err(e) => {
                match crate::decode(fmt, DataType::Status, &payload).map(|v| v.as_slice().to_vec())
                {
                    Ok(v) if v.len() == 1 => {
                        let s = status_of(v[0].clone())?;
                        // the same answer as the canonical bytes of that status give
                        let lone = Reply::Status(s).encode(fmt)?;
                        Ok(match Self::decode_as(fmt, command, Bytes::from(lone)) {
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

    fn decode_as(fmt: &Format, command: u8, payload: Bytes) -> Result<Reply> {
        let mut b = DataBuffer::from_bytes(*fmt, payload.clone());
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
                let start = b.position();
                match get_blobs(&mut b) {
                    Ok(blobs) => Reply::Get { status, blobs },
                    Err(e) if fmt.dialect != crate::Dialect::V41 => {
                        // a late answer: the blobs in libpmix's own v41
                        let own = Format {
                            dialect: crate::Dialect::V41,
                            fixed_ints: false,
                            ..*fmt
                        };
                        let mut v41 = DataBuffer::from_bytes(own, payload.slice(start..));
                        match get_blobs(&mut v41) {
                            // get_blobs read to the end of the payload
                            Ok(blobs) => {
                                return Ok(Reply::GetOwnDialect {
                                    status,
                                    blob_dialect: own.dialect,
                                    blobs,
                                })
                            }
                            Err(_) => return Err(e),
                        }
                    }
                    Err(e) => return Err(e),
                }
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
            _ => return Ok(Reply::Raw(payload)),
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
                    put_byte_object(&mut b, x)?;
                }
            }
            Reply::GetOwnDialect {
                status,
                blob_dialect,
                blobs,
            } => {
                b.pack(DataType::Status, &[Value::Status(*status)])?;
                let mut own = DataBuffer::new(Format {
                    dialect: *blob_dialect,
                    fixed_ints: false,
                    ..*fmt
                });
                for x in blobs {
                    put_byte_object(&mut own, x)?;
                }
                let mut out = b.as_bytes().to_vec();
                out.extend_from_slice(own.as_bytes());
                return Ok(out);
            }
            Reply::Query { status, info } => {
                b.pack(DataType::Status, &[Value::Status(*status)])?;
                if *status == 0 || !info.is_empty() {
                    put_infos(&mut b, info)?;
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
                    put_infos(&mut b, i)?;
                }
            }
            Reply::Credential {
                status,
                credential,
                info,
            } => {
                b.pack(DataType::Status, &[Value::Status(*status)])?;
                if let Some(c) = credential {
                    put_byte_object(&mut b, c)?;
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
                    put_infos(&mut b, i)?;
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
                    put_byte_object(&mut b, x)?;
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

/// Byte objects until the end of `b`.
fn get_blobs(b: &mut DataBuffer) -> Result<Vec<Bytes>> {
    let mut blobs = Vec::new();
    while !b.unread().is_empty() {
        match one(b, DataType::ByteObject, "blob")? {
            Value::ByteObject(x) => blobs.push(x.0),
            other => return Err(unexpected(other)),
        }
    }
    Ok(blobs)
}

#[cfg(feature = "serde")]
fn dialect_name<S: serde::Serializer>(
    d: &crate::Dialect,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(d.name())
}
