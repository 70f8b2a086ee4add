//! pmix-wire: the PMIx client, tool and server roles, and PMI-2, on top of
//! `pmix-codec`. (The `pmixw` command line and its tools are the `pmixw`
//! package; the test fixtures are `pmix-test-kit`.)
//!
//! Each role is a feature (`client`, `tool`, `server`, `tokio` for the
//! server's event-loop driver and the async client), all on by default;
//! spec-notes/api.md lists what each gates.
//!
//! The client and server cores are sans-IO: bytes in, bytes and events
//! out. Here a client core connects to a server core in memory, receives
//! its job's data and reads the job size from it:
//!
//! ```
//! # #[cfg(all(feature = "client", feature = "server"))]
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use pmix_codec::msg::Request;
//! use pmix_types::{Proc, Value, RANK_WILDCARD};
//! use pmix_wire::client::{ClientEnv, Core, Event};
//! use pmix_wire::server::{JobSpec, Server, Transmit};
//! use std::collections::HashMap;
//! use std::time::Instant;
//!
//! let mut server = Server::new();
//! server.register_nspace(JobSpec { nspace: "demo".into(), nprocs: 2, hostname: "n0".into(), info: vec![] });
//! // the variables a launcher gives rank 1 (the URI is not dialled here)
//! let env: HashMap<String, String> =
//!     server.client_env("demo", 1, "srv.0;tcp4://127.0.0.1:1").into_iter().collect();
//! let mut client = Core::new(ClientEnv::from_env(|k| env.get(k).cloned())?, 1000, 1000)?;
//! let conn = server.open();
//!
//! // carry bytes both ways until neither side has more to say
//! let mut pump = |client: &mut Core| -> Result<(), Box<dyn std::error::Error>> {
//!     loop {
//!         let out = client.poll_transmit();
//!         if let Some(bytes) = &out {
//!             server.handle_input(conn, bytes, Instant::now());
//!         }
//!         let mut replied = false;
//!         while let Some(t) = server.poll_transmit() {
//!             if let Transmit::Send(_, bytes) = t {
//!                 client.handle_input(&bytes, Instant::now())?;
//!                 replied = true;
//!             }
//!         }
//!         if out.is_none() && !replied {
//!             return Ok(());
//!         }
//!     }
//! };
//!
//! pump(&mut client)?; // the handshake
//! assert!(matches!(client.poll_event(), Some(Event::Connected { .. })));
//! client.send(&Request::Req)?; // PMIx_Init's job-info request
//! pump(&mut client)?;
//! assert!(matches!(client.poll_event(), Some(Event::Reply { .. })));
//! let job = Proc::new("demo", RANK_WILDCARD);
//! assert_eq!(client.get_local(&job, "pmix.job.size"), Some(Value::Uint32(2)));
//! # Ok(())
//! # }
//! # #[cfg(not(all(feature = "client", feature = "server")))]
//! # fn main() {}
//! ```

#![deny(missing_docs)]

#[cfg(feature = "client")]
pub mod client;
#[cfg(any(feature = "client", feature = "server"))]
pub mod link;
#[cfg(any(feature = "client", feature = "server"))]
pub mod pmi;
#[cfg(any(feature = "tool", feature = "tokio"))]
mod procfs;
#[cfg(any(feature = "client", feature = "server"))]
pub mod sansio;
#[cfg(feature = "server")]
pub mod server;
#[cfg(feature = "tool")]
pub mod tool;

/// The README's Rust snippets, compiled and run as doc tests.
#[cfg(all(doctest, feature = "client", feature = "server", feature = "tool"))]
#[doc = include_str!("../README.md")]
mod readme_doctests {}
