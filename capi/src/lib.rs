//! libpmix for C programs: the PMIx standard's C API with the standard's
//! ABI, over pmix-wire. Built as `libpmix.so` (soname `libpmix.so.2`), it
//! takes libpmix's place for one process or job through LD_LIBRARY_PATH.
//!
//! Every structure and constant is written from the standard's text
//! ([`abi`]); every export is a row of an `exports!` table ([`guard`]), runs
//! inside a panic guard and checks each pointer and count it is given.
//! The data functions convert between the C structs and pmix-types'
//! `Value` ([`conv`]) and call pmix-codec. spec-notes/capi.md has the
//! threading rules and the exported set.

#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![allow(non_snake_case)]

pub mod abi;
pub mod client;
pub mod conv;
pub mod data;
pub mod guard;
pub mod strings;
pub mod value;

/// Every C symbol this library exports, module by module.
pub fn exported() -> impl Iterator<Item = &'static str> {
    [
        client::EXPORTS,
        data::EXPORTS,
        value::EXPORTS,
        strings::EXPORTS,
    ]
    .into_iter()
    .flatten()
    .copied()
}
