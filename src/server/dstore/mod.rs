//! An opt-in shared-memory store for libpmix 4.2.x clients (gds ds21,
//! issue 26 item 5; spec-notes/dstore.md): with it, a client reads job
//! data and its peers' committed data from shared memory instead of its
//! own hash (whose key lookups are linear in the number of peers' keys).
//!
//! [`layout`] is the byte layout as pure functions (sans-IO, unit
//! tested). The driver's side, under `tokio`: `server::net::dstore`
//! (glibc, 64-bit Linux only) creates and maps the files and runs the
//! lock protocol, and `server::net::dstore::snapshot` reads a store
//! directory back. The server core calls a [`SharedStore`] the driver
//! installs ([`super::Server::set_shared_store`]).

#![forbid(unsafe_code)]

pub mod layout;

/// One rank's batch: the rank ([`layout::WILDCARD`] for job-level data)
/// and its (key, packed `pmix_value_t`) pairs.
pub type Batch = (u32, Vec<(String, Vec<u8>)>);

/// What the server core asks of a shared store. Calls are made while the
/// core runs, before any reply that depends on them is queued: job data
/// before the REQ reply, a commit before the COMMIT reply, remote ranks'
/// data before the fence replies.
pub trait SharedStore: Send {
    /// A namespace was registered with `local` ranks on this node; false
    /// if the store cannot hold it (its clients then use the socket).
    fn add_nspace(&mut self, nspace: &str, local: u32) -> bool;
    /// The variables a client of a namespace the store holds needs.
    fn env(&self) -> Vec<(String, String)>;
    /// Store batches in one write transaction.
    fn store(&mut self, nspace: &str, batches: &[Batch]);
    /// A namespace was deregistered: forget it and remove what it
    /// occupies (clients still running keep what they mapped). Nothing
    /// to do for a store that holds no files.
    fn remove_nspace(&mut self, nspace: &str) {
        let _ = nspace;
    }
}
