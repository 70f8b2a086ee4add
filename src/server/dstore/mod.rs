//! An opt-in shared-memory store for libpmix 4.2.x clients (gds ds21,
//! issue 26 item 5; spec-notes/dstore.md): with it, a client reads job
//! data and its peers' committed data from shared memory instead of its
//! own hash (whose key lookups are linear in the number of peers' keys).
//!
//! [`layout`] is the byte layout as pure functions (sans-IO, unit
//! tested); `files` (glibc, 64-bit Linux only) creates and maps the files
//! and runs the lock protocol. The server core calls a [`SharedStore`]
//! the driver installs ([`super::Server::set_shared_store`]).

pub mod layout;
pub mod snapshot;

#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
mod files;
#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
pub use files::Session;

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
}

#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
impl SharedStore for Session {
    fn add_nspace(&mut self, nspace: &str, local: u32) -> bool {
        match Session::add_nspace(self, nspace, local) {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!("dstore: namespace {nspace} not stored: {e}");
                false
            }
        }
    }
    fn env(&self) -> Vec<(String, String)> {
        Session::env(self)
    }
    fn store(&mut self, nspace: &str, batches: &[Batch]) {
        if let Err(e) = Session::store(self, nspace, batches) {
            tracing::warn!("dstore: {nspace}: {e}");
        }
    }
}
