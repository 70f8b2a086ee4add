//! The seam between the server core and the driver's peer checks: what
//! the driver learned of a peer before its handshake, and the question the
//! core asks it about a rank claim. The driver's answer through /proc and
//! sock_diag is `net::peercred`; tests answer in memory.

#![forbid(unsafe_code)]

/// What the driver knows of a peer before its handshake.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PeerInfo {
    /// The owner uid of the peer's socket.
    pub uid: Option<u32>,
    /// The inode of the peer's socket (to find the process holding it).
    pub inode: Option<u64>,
}

/// Decide whether the process holding socket `inode` is `launched` or a
/// descendant: `Some(true)`, `Some(false)` (found elsewhere or nowhere
/// under it), or `None` (cannot tell). The core asks this for a client
/// that claims a rank whose process the host registered.
pub trait Verify: Send {
    /// Whether the socket `inode` belongs to process `launched` or a descendant (see [`Verify`]).
    fn descends(&mut self, inode: u64, launched: u32) -> Option<bool>;
}
