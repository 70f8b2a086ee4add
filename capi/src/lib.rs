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
pub mod conv;
pub mod guard;
pub mod hwloc;
mod server_store;

// The modules whose export tables make the library: declared and chained
// from one list, so a module's exports cannot be left out of `exported`.
macro_rules! export_modules {
    ($($m:ident),*) => {
        $( pub mod $m; )*
        /// Every C symbol this library exports, module by module.
        pub fn exported() -> impl Iterator<Item = &'static str> {
            [$($m::EXPORTS),*].into_iter().flatten().copied()
        }
    };
}
export_modules!(
    client, tool, services, events, iof, groups, server, data, value, construct, strings, topology,
    stubs, frameworks
);
