//! What the server grants each peer, and why it refuses one: the limits
//! that keep hostile or broken peers harmless (spec-notes/server.md,
//! "Threat model"), and [`Refusal`], the typed reason every refused or
//! dropped connection is logged with (`tracing`, target `pmix_wire::server`).

#![forbid(unsafe_code)]

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
    /// The oldest PMIx release (major, minor) whose clients and tools are
    /// served; `None` (the default): every release whose dialect we speak,
    /// v12 on. OpenPMIx 7.0 serves 2.1 on
    /// (`pmix_codec::select::OPENPMIX7_MIN_CLIENT`); we speak the dialects
    /// it dropped, so refusing those peers would only lose them.
    pub min_peer_version: Option<(u32, u32)>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            handshake_timeout: Duration::from_secs(10),
            max_pending_handshakes: 4096,
            max_conns_per_uid: 32768,
            max_queued_bytes: 16 << 20,
            min_peer_version: None,
        }
    }
}

/// Why a connection was refused or dropped.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    /// The peer sent no complete handshake within the limit.
    #[error("no handshake within {0:?}")]
    HandshakeTimeout(Duration),
    /// Too many connections are still in their handshake.
    #[error("{0} handshakes already pending")]
    TooManyPending(usize),
    #[error("uid {uid} already has {count} connections")]
    /// One uid holds too many connections.
    TooManyForUid {
        /// The uid.
        uid: u32,
        /// Its connections.
        count: usize,
    },
    /// A message header the server refuses (too large).
    #[error("frame refused: {0}")]
    Frame(#[source] pmix_codec::frame::FrameError),
    /// The connect request does not decode (the codec's error says where).
    #[error("handshake does not parse: {0}")]
    BadHandshake(#[source] pmix_codec::Error),
    /// The peer sent what only a server sends (a handshake refusal or a
    /// tool security status): it is not a client.
    #[error("the peer answered as a server: {0}")]
    NotAClient(#[source] crate::link::LinkError),
    /// The connect request lacks an identity or a wire format the server knows.
    #[error("handshake names no process or no known format")]
    IncompleteHandshake,
    /// A client claims a rank of no namespace the host registered.
    #[error("{0} is not a rank of a registered job")]
    UnknownRank(String),
    #[error("the socket's owner is uid {socket}, the credential claims uid {claimed}")]
    /// The credential claims another uid than the socket's owner.
    UidMismatch {
        /// The uid owning the peer's socket.
        socket: u32,
        /// The uid the credential claims.
        claimed: u32,
    },
    #[error("the connecting process is not {rank}'s launched process {launched} nor a descendant")]
    /// The connecting process is neither the rank's launched process nor its descendant.
    NotTheRank {
        /// The rank claimed (`nspace.rank`).
        rank: String,
        /// The pid the host launched for it.
        launched: u32,
    },
    /// The rank is already connected by its verified process.
    #[error("{0} is already connected by its verified process")]
    RankTaken(String),
    /// An unverified connection held the rank and its verified process took it over.
    #[error("{0} was claimed by an unverified connection; the verified rank displaced it")]
    Displaced(String),
    /// The peer's release is older than [`Limits::min_peer_version`].
    #[error("PMIx {version} is older than the {}.{} this server serves from", floor.0, floor.1)]
    VersionBelowFloor {
        /// The version string of its handshake.
        version: String,
        /// The floor (major, minor).
        floor: (u32, u32),
    },
    /// A tool or launcher handshake when tools are not accepted.
    #[error("tool handshake (peer type {0}) refused")]
    ToolRefused(u8),
    /// A request from a peer that may not make one (its handshake is not
    /// complete, or it no longer speaks for anyone).
    #[error("request with tag {0} is not allowed")]
    BadRequest(u32),
    /// A request that does not decode: the codec's error says where (the
    /// byte offset in the request's payload, or in the COMMIT blob that
    /// does not decode, and the field path) and why.
    #[error("request with tag {tag} does not decode: {error}")]
    Malformed {
        /// The request's tag.
        tag: u32,
        /// Where and why it does not decode.
        #[source]
        error: pmix_codec::Error,
    },
    /// The peer left more reply bytes unread than the limit allows.
    #[error("{0} reply bytes left unread")]
    SlowReader(usize),
}

impl From<crate::link::LinkError> for Refusal {
    /// What the connection state refused: a frame over the cap, or a
    /// connect request that does not parse.
    fn from(e: crate::link::LinkError) -> Self {
        use crate::link::LinkError;
        match e {
            LinkError::Frame(f) => Refusal::Frame(f),
            LinkError::Handshake(e) => Refusal::BadHandshake(e),
            // an initiator's errors: a server never meets them
            e @ (LinkError::Refused(_) | LinkError::Security(_)) => Refusal::NotAClient(e),
        }
    }
}
