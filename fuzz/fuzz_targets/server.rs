#![no_main]
//! Thin wrapper: the logic is pmix_wire::server::fuzz_peers, which
//! tests/server_fuzz.rs runs over corpus/fuzz/server/ on stable Rust.

use pmix_wire_fuzz as _; // the allocation cap (fuzz/src/lib.rs)

libfuzzer_sys::fuzz_target!(|data: &[u8]| pmix_wire::server::fuzz_peers(data));
