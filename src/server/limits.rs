//! What the server grants each peer, and why it refuses one: the limits
//! that keep hostile or broken peers harmless (spec-notes/server.md,
//! "Threat model"), and [`Refusal`], the typed reason every refused or
//! dropped connection is logged with (`tracing`, target `pmix_wire::server`).

use std::time::Duration;

/// Per-server limits on peers. [`Limits::default`] is what `pmixw run`
/// and [`super::net::start`] use.
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    /// A connection must complete its handshake within this time
    /// (slowloris, idle sockets that never speak).
    pub handshake_timeout: Duration,
    /// Connections accepted whose handshake is not yet complete; a new
    /// one beyond this is refused at once.
    pub max_pending_handshakes: usize,
    /// Open connections per socket owner (uid), when the driver knows it.
    pub max_conns_per_uid: usize,
    /// Reply bytes queued for a peer that does not read them; past this
    /// the peer is dropped, alone.
    pub max_queued_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            handshake_timeout: Duration::from_secs(10),
            max_pending_handshakes: 4096,
            max_conns_per_uid: 32768,
            max_queued_bytes: 16 << 20,
        }
    }
}

/// Why a connection was refused or dropped.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("no handshake within {0:?}")]
    HandshakeTimeout(Duration),
    #[error("{0} handshakes already pending")]
    TooManyPending(usize),
    #[error("uid {uid} already has {count} connections")]
    TooManyForUid { uid: u32, count: usize },
    #[error("frame refused: {0}")]
    Frame(String),
    #[error("handshake does not parse: {0}")]
    BadHandshake(String),
    #[error("handshake names no process or no known format")]
    IncompleteHandshake,
    #[error("{0} is not a rank of a registered job")]
    UnknownRank(String),
    #[error("the socket's owner is uid {socket}, the credential claims uid {claimed}")]
    UidMismatch { socket: u32, claimed: u32 },
    #[error("the connecting process is not {rank}'s launched process {launched} nor a descendant")]
    NotTheRank { rank: String, launched: u32 },
    #[error("{0} is already connected by its verified process")]
    RankTaken(String),
    #[error("{0} was claimed by an unverified connection; the verified rank displaced it")]
    Displaced(String),
    #[error("tool handshake (peer type {0}) refused")]
    ToolRefused(u8),
    #[error("request with tag {0} does not parse or is not allowed")]
    BadRequest(u32),
    #[error("{0} reply bytes left unread")]
    SlowReader(usize),
}
