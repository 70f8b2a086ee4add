//! pmix-wire: client, tool and server roles, the interop harness and the
//! `pmixw` command line, on top of `pmix-codec`.

#![deny(missing_docs)]

#[cfg(feature = "client")]
pub mod client;
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod doctor;
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod infer;
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod inspect;
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod interop;
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod keycheck;
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod pcap;
#[cfg(feature = "client")]
pub mod pmi2;
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod relay;
#[cfg(feature = "server")]
pub mod server;
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod slurm;
#[cfg(feature = "tool")]
pub mod tool;
#[cfg(feature = "client")]
pub mod typed;
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod verify;

// issue 13: the live PMIx hosts and the cross-version matrix
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod hosts;
