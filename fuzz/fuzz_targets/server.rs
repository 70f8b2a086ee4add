#![no_main]
//! Thin wrapper: the logic is pmix_test_kit::server_target::fuzz_peers, which
//! tests/core_server_fuzz.rs runs over corpus/fuzz/server/ on stable Rust.

use pmix_wire_fuzz as _; // the allocation cap (fuzz/src/lib.rs)

libfuzzer_sys::fuzz_target!(|data: &[u8]| pmix_test_kit::server_target::fuzz_peers(data));
