#![no_main]
//! Thin wrapper: the logic lives in test-kit/src/decode_paths.rs,
//! which codec/tests/core_decode_paths.rs runs on stable Rust. The owned,
//! borrowed and typed decodings of any input must agree.

use pmix_test_kit::decode_paths;

use pmix_wire_fuzz as _; // the allocation cap (fuzz/src/lib.rs)

libfuzzer_sys::fuzz_target!(|data: &[u8]| decode_paths::decode_paths(data));
