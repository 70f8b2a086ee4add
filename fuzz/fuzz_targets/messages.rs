#![no_main]
//! Thin wrapper: the logic lives in test-kit/src/targets.rs, which
//! codec/tests/core_corpus_replay.rs runs over corpus/fuzz/ on stable Rust.

use pmix_test_kit::targets;

use pmix_wire_fuzz as _; // the allocation cap (fuzz/src/lib.rs)

libfuzzer_sys::fuzz_target!(|data: &[u8]| targets::messages(data));
