//! The message layer: client → server requests ([`Request`]), server →
//! client replies ([`Reply`]) and unsolicited messages ([`EventNotice`],
//! [`IofData`]) as typed messages (protocol.md §5). One table row per
//! command (`commands.rs`: code, request fields, reply layout) generates the
//! request type and both directions of its codec; the reply layouts
//! (`reply.rs`) and the unsolicited messages (`notice.rs`) are tables of
//! the same kind. Fields are read with typed reads (`field.rs`), not
//! through the generic `Value`; blobs are read through bounded
//! sub-readers and shared with the payload; every message ends with an
//! explicit "nothing left over" check. Commands without a row are kept as
//! their raw payload (`Request::Other`) so a conversation still
//! round-trips.
//!
//! A request payload is a run of pack units in the connection's format:
//! the COMMAND first, then the command's fields (each with its count).

mod commands;
mod field;
mod notice;
mod reply;
mod request;

pub use commands::{cmd, command_name};
pub use notice::{commit_kvals, DataDelete, EventNotice, IofData, ProcData};
pub use reply::{Reply, ReplyKind};
pub use request::Request;

/// What follows the STATUS of a successful GROUP_CONSTRUCT reply: each
/// libpmix release reads its own form (spec-notes/commands.md).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(Serialize))]
#[cfg_attr(feature = "serde", serde(tag = "form", rename_all = "snake_case"))]
pub enum GroupReply {
    /// Nothing (a failed construct, in every release).
    None,
    /// 4.x (`grp_cbfunc`): the context id, one SIZE (`SIZE_MAX`: none).
    V4 {
        /// The context id.
        ctxid: u64,
    },
    /// 5.0.x (`construct_cbfunc`): the final membership, SIZE + PROCs;
    /// the context id, one SIZE (`SIZE_MAX`: none); then one BYTE_OBJECT
    /// per other participating namespace (its name and job-level KVALs),
    /// which 5.0 clients do not read.
    V5 {
        /// The final membership.
        members: Vec<Proc>,
        /// The context id.
        ctxid: u64,
        /// Job data of the other namespaces.
        #[cfg_attr(feature = "serde", serde(serialize_with = "hex_list"))]
        blobs: Vec<Bytes>,
    },
    /// 6.x: the final membership, SIZE + PROCs; a BOOL saying whether a
    /// context id follows, then it (one SIZE); 6.1 adds SIZE + INFOs of
    /// group info.
    V6 {
        /// The final membership.
        members: Vec<Proc>,
        /// The context id, if one was assigned.
        ctxid: Option<u64>,
        /// The group info (6.1 and later).
        info: Option<Vec<Info>>,
    },
}

use crate::dialect::Format;
use crate::error::{Error, ErrorKind, Result};
use bytes::Bytes;
#[cfg(feature = "serde")]
use pmix_types::hex::serde_bytes_hex;
use pmix_types::{App, Buffer, Info, PString, Proc, Query};
#[cfg(feature = "serde")]
use serde::Serialize;

/// Whether the sender of a LOG request packs its TIME. libpmix (3.0 and
/// later) decides by the PMIx version it holds for the peer, not by the
/// dialect: a client packs TIME unless its server is older than 3.0
/// (`pmix_log.c`, `PMIX_PEER_IS_EARLIER(myserver, 3, ...)`), the server's
/// version coming from `PMIX_VERSION` in the client's environment (else the
/// URI variable's own: `PMIX_SERVER_URI2` means 2.0); a server unpacks TIME
/// unless the client's handshake version is older than 3.0
/// (`pmix_server_ops.c`). So a 4.2.2 client on a v20 connection to a 4.2.2
/// server sends it. `peer_version` is that version string ("4.2.2",
/// "v3.1.0"), read as libpmix does: an optional `v`, then the major.
pub fn log_sends_time(peer_version: &str) -> bool {
    let v = peer_version.strip_prefix('v').unwrap_or(peer_version);
    let digits: String = v.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse::<u64>().is_ok_and(|major| major >= 3)
}

/// Whether a LOG request must carry its TIME in this dialect: the v3+
/// dialects are spoken only by 3.0+ peers, which always send it. In v12,
/// v20 and v21 it depends on the peer's version ([`log_sends_time`]),
/// which the payload alone does not say.
fn log_time_certain(fmt: &Format) -> bool {
    !matches!(
        fmt.dialect,
        crate::Dialect::V12 | crate::Dialect::V20 | crate::Dialect::V21
    )
}

#[cfg(feature = "serde")]
fn hex_list<S: serde::Serializer>(v: &[Bytes], s: S) -> std::result::Result<S::Ok, S::Error> {
    s.collect_seq(v.iter().map(|b| pmix_types::hex::encode(b)))
}

#[cfg(feature = "serde")]
fn hex_opt<S: serde::Serializer>(v: &Option<Bytes>, s: S) -> std::result::Result<S::Ok, S::Error> {
    match v {
        Some(b) => s.serialize_some(&pmix_types::hex::encode(b)),
        None => s.serialize_none(),
    }
}
