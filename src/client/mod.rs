//! The PMIx client role: a sans-IO core ([`core::Core`]), a blocking TCP
//! driver ([`Client`]) and an async one on tokio ([`AsyncClient`]).
//!
//! ```no_run
//! use pmix_wire::client::{scope, Client};
//! use pmix_types::{Proc, Value};
//! let mut c = Client::init()?; // PMIX_NAMESPACE, PMIX_RANK, PMIX_SERVER_URI* …
//! c.put(scope::GLOBAL, "my.key", Value::Uint32(c.proc().rank));
//! c.commit()?;
//! c.fence(&[], true, None)?;
//! let peer = Proc { nspace: c.proc().nspace.clone(), rank: 0 };
//! let v = c.get(&peer, "my.key", &[])?;
//! assert_eq!(v, Value::Uint32(0));
//! c.finalize()?;
//! # Ok::<(), pmix_wire::client::ClientError>(())
//! ```

pub mod asyncio;
pub mod blocking;
pub mod core;

pub use self::asyncio::AsyncClient;
pub use self::blocking::Client;
pub use self::core::{scope, ClientEnv, ClientError, Core, Event, GetPlan};
