//! Server → client replies to a request: the reply layouts, one row each,
//! generate the [`Reply`] enum and its codecs; the command table says
//! which layout answers which command, and so holds [`Reply::decode`].

use super::field::*;
use super::*;

/// Generates [`Reply`] and its field codecs from the layout rows; the
/// variants after `hand` are read and written here by hand.
macro_rules! replies {
    (
        $(
            $(#[$vm:meta])*
            $V:ident { $( $(#[$fm:meta])* $f:ident : $T:ty = $K:ty ),* $(,)? }
        )*
        @hand { $($hand:tt)* }
    ) => {
        /// A server → client reply. Replies carry no command: the request's tag
        /// says which layout to expect.
        #[derive(Clone, Debug, PartialEq)]
        #[cfg_attr(feature = "serde", derive(Serialize))]
        #[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
        pub enum Reply {
            $( $(#[$vm])* $V { $( $(#[$fm])* $f: $T ),* }, )*
            $($hand)*
        }

        /// Which variant a [`Reply`] is, without its data ([`Reply::kind`]):
        /// what an error about an unexpected reply names.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ReplyKind {
            $( #[doc = concat!("[`Reply::", stringify!($V), "`].")] $V, )*
            /// [`Reply::Status`].
            Status,
            /// [`Reply::GetOwnDialect`].
            GetOwnDialect,
            /// [`Reply::Raw`].
            Raw,
        }

        impl Reply {
            /// Which variant this is.
            pub fn kind(&self) -> ReplyKind {
                match self {
                    $( Reply::$V { .. } => ReplyKind::$V, )*
                    Reply::Status(_) => ReplyKind::Status,
                    Reply::GetOwnDialect { .. } => ReplyKind::GetOwnDialect,
                    Reply::Raw(_) => ReplyKind::Raw,
                }
            }
        }

        impl std::fmt::Display for ReplyKind {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Debug::fmt(self, f)
            }
        }

        /// Which reply layout answers a command (the command table's last column).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(crate) enum ReplyLayout {
            $( $V, )*
            /// A bare STATUS.
            Status,
            /// No reply is typed (kept as its bytes).
            Raw,
        }

        impl Reply {
            /// The fields of `layout`; `None` for [`ReplyLayout::Raw`].
            fn decode_layout(layout: ReplyLayout, r: &mut Rd) -> Result<Option<Reply>> {
                Ok(Some(match layout {
                    $( ReplyLayout::$V => Reply::$V { $( $f: <$K as Kind>::get(r, stringify!($f))? ),* }, )*
                    ReplyLayout::Status => Reply::Status(St::get(r, "status")?),
                    ReplyLayout::Raw => return Ok(None),
                }))
            }

            /// The fields of a table layout; `false` for the hand-written ones.
            fn encode_layout(&self, w: &mut Wr) -> Result<bool> {
                match self {
                    $( Reply::$V { $($f),* } => { $( <$K as Kind>::put(w, $f, stringify!($f))?; )* } )*
                    Reply::Status(s) => St::put(w, s, "status")?,
                    _ => return Ok(false),
                }
                Ok(true)
            }
        }
    };
}

replies! {
    /// REQ: the namespace, then job-level KVALs until the end (protocol.md §6).
    JobInfo {
        /// The client's namespace (one STRING).
        nspace: Option<PString> = One<Str>,
        /// The job-level data, one KVAL unit each to the end of the payload.
        kvals: Vec<pmix_types::Kval> = UntilEnd<One<KvalI>>,
    }
    /// GETNB: status, then zero or more byte objects of PROC + KVALs.
    Get {
        /// The `pmix_status_t` of the request (one STATUS; 0 success).
        status: i32 = St,
        /// Byte objects (one BYTE_OBJECT unit each, to the end), each a
        /// PROC and its KVALs, packed ([`ProcData`](super::ProcData)).
        #[cfg_attr(feature = "serde", serde(serialize_with = "hex_list"))]
        blobs: Vec<Bytes> = UntilEnd<One<ByteObj>>,
    }
    /// QUERY: status, then SIZE + INFOs.
    Query {
        /// The `pmix_status_t` of the request (one STATUS; 0 success).
        status: i32 = St,
        /// The answers, one info per query key: SIZE + INFOs (nothing when
        /// the status is an error).
        info: Vec<Info> = InfosUnlessFailed,
    }
    /// LOOKUPNB: status, then (only on success) SIZE + PDATAs.
    Lookup {
        /// The `pmix_status_t` of the request (one STATUS; 0 success).
        status: i32 = St,
        /// The published data found (publisher, key, value): SIZE + PDATAs,
        /// only on success.
        data: Vec<pmix_types::Pdata> = IfOk<Counted<PdataI>>,
    }
    /// ALLOC, JOB_CONTROL, MONITOR, VALIDATE_CRED, FABRIC_*: status, then
    /// SIZE + INFOs (`None`: the server sent nothing after the status).
    Infos {
        /// The `pmix_status_t` of the request (one STATUS; 0 success).
        status: i32 = St,
        /// The results the server returned, SIZE + INFOs, if it sent any.
        info: Option<Vec<Info>> = Tail<Counted<InfoI>>,
    }
    /// GET_CREDENTIAL: status, then the credential and SIZE + INFOs.
    Credential {
        /// The `pmix_status_t` of the request (one STATUS; 0 success).
        status: i32 = St,
        /// The credential (one BYTE_OBJECT), if the server sent one.
        #[cfg_attr(feature = "serde", serde(serialize_with = "hex_opt"))]
        credential: Option<Bytes> = Tail<One<ByteObj>>,
        /// Attributes of the credential, SIZE + INFOs, if sent.
        info: Option<Vec<Info>> = Tail<Counted<InfoI>>,
    }
    /// IOF_PULL: status, then the remote reference id (one SIZE).
    Id {
        /// The `pmix_status_t` of the request (one STATUS; 0 success).
        status: i32 = St,
        /// The id (one SIZE), if the server sent one.
        id: Option<u64> = Tail<One<SizeI>>,
    }
    /// GROUP_CONSTRUCT: status, then (on success) what the client's
    /// release reads: the context id (4.x), or the final membership and
    /// the context id (5.0, 6.x) ([`GroupReply`](super::GroupReply)).
    Group {
        /// The `pmix_status_t` of the request (one STATUS; 0 success).
        status: i32 = St,
        /// The rest, in one release's form.
        body: super::GroupReply = GroupBody,
    }
    /// SPAWNNB: status, then the new namespace and its job-level KVALs.
    Spawn {
        /// The `pmix_status_t` of the request (one STATUS; 0 success).
        status: i32 = St,
        /// The new job's namespace (one STRING): `None` if absent,
        /// `Some(None)` for a NULL string.
        nspace: Option<Option<PString>> = Tail<One<Str>>,
        /// The new job's job-level data, one KVAL unit each to the end.
        kvals: Vec<pmix_types::Kval> = UntilEnd<One<KvalI>>,
    }
    /// CONNECTNB: status, then one byte object per involved namespace.
    Connect {
        /// The `pmix_status_t` of the request (one STATUS; 0 success).
        status: i32 = St,
        /// One byte object of job data per namespace involved (one
        /// BYTE_OBJECT unit each, to the end).
        #[cfg_attr(feature = "serde", serde(serialize_with = "hex_list"))]
        blobs: Vec<Bytes> = UntilEnd<One<ByteObj>>,
    }
    /// COMPUTE_DEVICE_DISTANCES: status, then SIZE + DEVICE_DISTs.
    Distances {
        /// The `pmix_status_t` of the request (one STATUS; 0 success).
        status: i32 = St,
        /// The distance to each device, SIZE + DEVICE_DISTs, if sent.
        distances: Option<Vec<pmix_types::DeviceDist>> = Tail<Counted<DevDist>>,
    }
    /// RESOLVE_PEERS: status, then (on success) SIZE + PROCs.
    Peers {
        /// The `pmix_status_t` of the request (one STATUS; 0 success).
        status: i32 = St,
        /// The processes found, SIZE + PROCs, if sent.
        procs: Option<Vec<Proc>> = Tail<Counted<ProcI>>,
    }
    /// RESOLVE_NODE: status, then (on success) the comma-separated node list.
    Nodes {
        /// The `pmix_status_t` of the request (one STATUS; 0 success).
        status: i32 = St,
        /// The node list (one STRING): `None` if absent, `Some(None)` for
        /// a NULL string.
        nodelist: Option<Option<PString>> = Tail<One<Str>>,
    }
    @hand {
        /// A bare STATUS: COMMIT, FENCENB, FINALIZE, ABORT, REGEVENTS, … and
        /// the error convention for every command.
        Status(i32),
        /// GETNB answered late by a libpmix server (the request waited for the
        /// data): the status in the connection's dialect, then byte objects of
        /// PROC + KVALs packed, byte objects included, in the server's own
        /// dialect `blob_dialect` (v41 for libpmix 4.2.x), whatever the peer's
        /// (`pmix_pending_resolve` packs them for `pmix_globals.mypeer`;
        /// spec-notes/divergences.md). Read only where the connection's own
        /// dialect fails.
        GetOwnDialect {
            /// The `pmix_status_t` of the request (one STATUS in the
            /// connection's dialect; 0 success).
            status: i32,
            /// The dialect the blobs are packed in (the server's own).
            #[cfg_attr(feature = "serde", serde(serialize_with = "dialect_name"))]
            blob_dialect: crate::Dialect,
            /// Byte objects, each a PROC and its KVALs, packed in `blob_dialect`.
            #[cfg_attr(feature = "serde", serde(serialize_with = "hex_list"))]
            blobs: Vec<Bytes>,
        },
        /// A layout not typed yet.
        Raw(#[cfg_attr(feature = "serde", serde(with = "serde_bytes_hex"))] Bytes),
    }
}

impl Reply {
    /// Nothing after the status: the canonical form is a lone STATUS.
    pub(super) fn canonical(r: Reply) -> Reply {
        match r {
            Reply::Infos { status, info: None }
            | Reply::Credential {
                status,
                credential: None,
                info: None,
            }
            | Reply::Id { status, id: None }
            | Reply::Group {
                status,
                body: super::GroupReply::None,
            }
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

    /// Decode `payload` in `layout` (`None`: the command has no row).
    pub(super) fn decode_as(
        fmt: &Format,
        layout: Option<ReplyLayout>,
        payload: Bytes,
    ) -> Result<Reply> {
        let Some(layout) = layout else {
            return Ok(Reply::Raw(payload));
        };
        let mut r = Rd::new(*fmt, &payload);
        let reply = match Self::decode_layout(layout, &mut r) {
            Ok(Some(reply)) => reply,
            Ok(None) => return Ok(Reply::Raw(payload)),
            // a late GET answer: the blobs in libpmix's own v41
            Err(e) if layout == ReplyLayout::Get && fmt.dialect != crate::Dialect::V41 => {
                return Self::get_own_dialect(fmt, &payload).ok_or(e)
            }
            Err(e) => return Err(e),
        };
        r.finish("reply")?;
        Ok(reply)
    }

    /// The status in `fmt`, then byte objects to the end in v41.
    fn get_own_dialect(fmt: &Format, payload: &Bytes) -> Option<Reply> {
        let mut r = Rd::new(*fmt, payload);
        let status = St::get(&mut r, "status").ok()?;
        let own = Format {
            dialect: crate::Dialect::V41,
            fixed_ints: false,
            ..*fmt
        };
        let rest = payload.slice(r.pos()..);
        let mut v41 = Rd::new(own, &rest);
        let blobs = UntilEnd::<One<ByteObj>>::get(&mut v41, "blobs").ok()?;
        Some(Reply::GetOwnDialect {
            status,
            blob_dialect: own.dialect,
            blobs,
        })
    }

    /// The reply payload in the connection's format.
    pub fn encode(&self, fmt: &Format) -> Result<Vec<u8>> {
        let mut w = Wr::new(*fmt);
        if self.encode_layout(&mut w)? {
            return Ok(w.out);
        }
        match self {
            Reply::GetOwnDialect {
                status,
                blob_dialect,
                blobs,
            } => {
                St::put(&mut w, status, "status")?;
                let mut own = Wr::new(Format {
                    dialect: *blob_dialect,
                    fixed_ints: false,
                    ..*fmt
                });
                UntilEnd::<One<ByteObj>>::put(&mut own, blobs, "blobs")?;
                w.out.extend_from_slice(&own.out);
            }
            Reply::Raw(bytes) => w.out.extend_from_slice(bytes),
            // the table's layouts were written above
            _ => {}
        }
        Ok(w.out)
    }
}

/// The payload as one lone STATUS (the error convention), if it is one.
pub(super) fn lone_status(fmt: &Format, payload: &Bytes) -> Option<i32> {
    let mut r = Rd::new(*fmt, payload);
    let s = St::get(&mut r, "status").ok()?;
    r.finish("status").ok()?;
    Some(s)
}

#[cfg(feature = "serde")]
fn dialect_name<S: serde::Serializer>(
    d: &crate::Dialect,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(d.name())
}
