#![no_main]
//! Thin wrapper: the logic is pmix_wire::server::fuzz_peers, which
//! tests/server_fuzz.rs runs over corpus/fuzz/server/ on stable Rust.

libfuzzer_sys::fuzz_target!(|data: &[u8]| pmix_wire::server::fuzz_peers(data));
