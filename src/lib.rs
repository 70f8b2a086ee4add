//! pmix-wire: client, tool and server roles, the interop harness and the
//! `pmixw` command line, on top of `pmix-codec`.

pub mod client;
pub mod doctor;
pub mod infer;
pub mod inspect;
pub mod interop;
pub mod keycheck;
pub mod pcap;
pub mod pmi2;
pub mod relay;
pub mod server;
pub mod slurm;
pub mod tool;
pub mod verify;

// issue 13: the live PMIx hosts and the cross-version matrix
pub mod hosts;

/// The README's Rust snippets, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
mod readme_doctests {}
