//! The message layer: client → server requests ([`Request`]), server →
//! client replies ([`Reply`]) and unsolicited messages ([`EventNotice`],
//! [`IofData`]) as typed messages (protocol.md §5). One table row per
//! command (`table.rs`: code, request fields, reply layout) generates the
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
//! `pmix_codec::command` is the same module under its former name.

mod field;
mod notice;
mod reply;
mod request;
mod table;

pub use notice::{commit_kvals, EventNotice, IofData, ProcData};
pub use reply::Reply;
pub use request::Request;
pub use table::command_name;

use crate::dialect::Format;
use crate::error::{Error, ErrorKind, Result};
use bytes::Bytes;
#[cfg(feature = "serde")]
use pmix_types::hex::serde_bytes_hex;
use pmix_types::{App, Buffer, Info, PString, Proc, Query};
#[cfg(feature = "serde")]
use serde::Serialize;

/// `pmix_cmd_t` values.
pub mod cmd {
    /// `PMIX_REQ_CMD`: a client's request for its job's data at init.
    pub const REQ: u8 = 0;
    /// `PMIX_ABORT_CMD`: `PMIx_Abort`.
    pub const ABORT: u8 = 1;
    /// `PMIX_COMMIT_CMD`: `PMIx_Commit`, the process's modex data.
    pub const COMMIT: u8 = 2;
    /// `PMIX_FENCENB_CMD`: `PMIx_Fence`.
    pub const FENCENB: u8 = 3;
    /// `PMIX_GETNB_CMD`: `PMIx_Get` of data the client does not hold.
    pub const GETNB: u8 = 4;
    /// `PMIX_FINALIZE_CMD`: `PMIx_Finalize`.
    pub const FINALIZE: u8 = 5;
    /// `PMIX_PUBLISHNB_CMD`: `PMIx_Publish`.
    pub const PUBLISHNB: u8 = 6;
    /// `PMIX_LOOKUPNB_CMD`: `PMIx_Lookup`.
    pub const LOOKUPNB: u8 = 7;
    /// `PMIX_UNPUBLISHNB_CMD`: `PMIx_Unpublish`.
    pub const UNPUBLISHNB: u8 = 8;
    /// `PMIX_CONNECTNB_CMD`: `PMIx_Connect`.
    pub const CONNECTNB: u8 = 10;
    /// `PMIX_DISCONNECTNB_CMD`: `PMIx_Disconnect`.
    pub const DISCONNECTNB: u8 = 11;
    /// `PMIX_NOTIFY_CMD`: `PMIx_Notify_event`, and the server's event messages.
    pub const NOTIFY: u8 = 12;
    /// `PMIX_REGEVENTS_CMD`: `PMIx_Register_event_handler`.
    pub const REGEVENTS: u8 = 13;
    /// `PMIX_DEREGEVENTS_CMD`: `PMIx_Deregister_event_handler`.
    pub const DEREGEVENTS: u8 = 14;
    /// `PMIX_QUERY_CMD`: `PMIx_Query_info`.
    pub const QUERY: u8 = 15;
    /// `PMIX_SPAWNNB_CMD`: `PMIx_Spawn`.
    pub const SPAWNNB: u8 = 9;
    /// `PMIX_ALLOC_CMD`: `PMIx_Allocation_request`.
    pub const ALLOC: u8 = 17;
    /// `PMIX_JOB_CONTROL_CMD`: `PMIx_Job_control`.
    pub const JOB_CONTROL: u8 = 18;
    /// `PMIX_MONITOR_CMD`: `PMIx_Process_monitor`.
    pub const MONITOR: u8 = 19;
    /// `PMIX_GET_CREDENTIAL_CMD`: `PMIx_Get_credential`.
    pub const GET_CREDENTIAL: u8 = 20;
    /// `PMIX_VALIDATE_CRED_CMD`: `PMIx_Validate_credential`.
    pub const VALIDATE_CRED: u8 = 21;
    /// `PMIX_IOF_PULL_CMD`: `PMIx_IOF_pull`.
    pub const IOF_PULL: u8 = 22;
    /// `PMIX_GROUP_CONSTRUCT_CMD`: `PMIx_Group_construct`.
    pub const GROUP_CONSTRUCT: u8 = 24;
    /// `PMIX_GROUP_DESTRUCT_CMD`: `PMIx_Group_destruct`.
    pub const GROUP_DESTRUCT: u8 = 28;
    /// `PMIX_IOF_DEREG_CMD`: `PMIx_IOF_deregister`.
    pub const IOF_DEREG: u8 = 29;
    /// `PMIX_FABRIC_REGISTER_CMD`: `PMIx_Fabric_register`.
    pub const FABRIC_REGISTER: u8 = 30;
    /// `PMIX_FABRIC_UPDATE_CMD`: `PMIx_Fabric_update`.
    pub const FABRIC_UPDATE: u8 = 31;
    /// `PMIX_LOG_CMD`: `PMIx_Log`.
    pub const LOG: u8 = 16;
    /// `PMIX_IOF_PUSH_CMD`: `PMIx_IOF_push`.
    pub const IOF_PUSH: u8 = 23;
    /// Defined since 4.0, but no version's client packs it (joining is
    /// driven by events); servers answer a lone STATUS.
    pub const GROUP_JOIN: u8 = 25;
    /// As GROUP_JOIN: defined, never sent.
    pub const GROUP_INVITE: u8 = 26;
    /// `PMIX_GROUP_LEAVE_CMD`: `PMIx_Group_leave`.
    pub const GROUP_LEAVE: u8 = 27;
    /// `PMIX_COMPUTE_DEVICE_DISTANCES_CMD`: `PMIx_Compute_distances`.
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
