//! The PMIx client role: a sans-IO core ([`core::Core`]), a blocking TCP
//! driver ([`Client`]) and, with the `tokio` feature, an async one
//! (`AsyncClient`).
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

#[cfg(feature = "tokio")]
pub mod asyncio;
pub mod blocking;
pub mod core;
pub mod options;

#[cfg(feature = "tokio")]
pub use self::asyncio::AsyncClient;
pub use self::blocking::Client;
pub use self::core::{ClientEnv, ClientError, Core, Event, GetPlan};
pub use self::options::{
    FenceOpts, GetOpts, GroupOpts, JobControl, LookupOpts, Publish, Queries, Spawn, SpawnApp,
};
