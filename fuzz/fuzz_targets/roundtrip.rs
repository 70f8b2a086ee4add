#![no_main]
//! Thin wrapper: the logic lives in codec/tests/common/targets.rs, which
//! codec/tests/corpus_replay.rs runs over corpus/fuzz/ on stable Rust.

#[path = "../../codec/tests/common/targets.rs"]
#[allow(dead_code)]
mod targets;

use pmix_wire_fuzz as _; // the allocation cap (fuzz/src/lib.rs)

libfuzzer_sys::fuzz_target!(|data: &[u8]| targets::roundtrip(data));
