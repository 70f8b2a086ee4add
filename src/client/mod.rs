//! The PMIx client role: a sans-IO core ([`core::Core`]), its operations
//! ([`ops`]: each PMIx call's request and reply, sans-IO), a blocking TCP
//! driver ([`Client`]) and, with the `tokio` feature, an async one
//! (`AsyncClient`). Both drivers are generated from one table of
//! operations and offer the same calls.
//!
//! ```no_run
//! use pmix_types::enums::Scope;
//! use pmix_types::keys::typed;
//! use pmix_wire::client::{Client, FenceOpts};
//! let mut c = Client::init()?; // PMIX_NAMESPACE, PMIX_RANK, PMIX_SERVER_URI* …
//! c.put(Scope::GLOBAL, "my.key", c.rank().wire());
//! c.commit()?;
//! c.fence(FenceOpts::new().collect_data(true))?;
//! let size: u32 = c.get_key(typed::JOB_SIZE)?;
//! let peer = pmix_types::Proc { rank: size - 1, ..c.proc().clone() };
//! let v: u32 = c.get(&peer, "my.key")?;
//! assert_eq!(v, size - 1);
//! c.finalize()?;
//! # Ok::<(), pmix_wire::client::ClientError>(())
//! ```

#![forbid(unsafe_code)]

#[cfg(feature = "tokio")]
pub mod asyncio;
pub mod blocking;
pub mod core;
pub mod ops;
pub mod options;

#[cfg(feature = "tokio")]
pub use self::asyncio::AsyncClient;
pub use self::blocking::Client;
pub use self::core::{
    ClientEnv, ClientError, Core, EnvError, Event, GetPlan, Malformed, NoRendezvous, ReplyKind,
    Stale,
};
pub use self::options::{
    FenceOpts, GetOpts, GroupOpts, JobControl, LookupOpts, Publish, Queries, Spawn, SpawnApp,
};

/// Our effective uid and gid, from the owner of /proc/self (the kernel
/// gives that directory the process's effective ids): what the client
/// drivers announce in the handshake (the core only carries them).
pub(crate) fn euid_egid() -> (u32, u32) {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").map_or((0, 0), |m| (m.uid(), m.gid()))
}

/// The handshake info a tool announces: our pid and command line.
pub(crate) fn tool_info() -> Vec<pmix_types::Info> {
    vec![
        core::info("pmix.ppid", pmix_types::Value::Pid(std::process::id())),
        core::info(
            "pmix.cmd.line",
            pmix_types::Value::String(Some("pmixw".into())),
        ),
    ]
}
