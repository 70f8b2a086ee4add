//! The ds21 store's driver side (spec-notes/dstore.md): `files` (glibc,
//! 64-bit Linux only) creates and maps a session's files and runs the lock
//! protocol, as the [`SharedStore`](crate::server::dstore::SharedStore)
//! the server core calls; [`snapshot`] reads a store directory back
//! (tests, `pmixw inspect`). The byte layout itself is the core's
//! ([`crate::server::dstore::layout`]).

pub mod snapshot;

#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
mod files;
#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
pub use files::Session;
