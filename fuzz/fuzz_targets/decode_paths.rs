#![no_main]
//! Thin wrapper: the logic lives in codec/tests/common/decode_paths.rs,
//! which codec/tests/decode_paths.rs runs on stable Rust. The owned,
//! borrowed and typed decodings of any input must agree.

#[path = "../../codec/tests/common/targets.rs"]
#[allow(dead_code)]
mod targets;

#[path = "../../codec/tests/common/decode_paths.rs"]
mod decode_paths;

use pmix_wire_fuzz as _; // the allocation cap (fuzz/src/lib.rs)

libfuzzer_sys::fuzz_target!(|data: &[u8]| decode_paths::decode_paths(data));
