#![no_main]
//! Thin wrapper: the logic (and the list of known libpmix divergences)
//! lives in test-kit/src/differential.rs, which codec/tests/libpmix_diff_replay.rs runs over
//! corpus/fuzz/diff_unpack/ on stable Rust. libpmix runs in child processes,
//! one per format.

use pmix_test_kit::differential;

use pmix_wire_fuzz as _; // the allocation cap (fuzz/src/lib.rs)

libfuzzer_sys::fuzz_target!(|data: &[u8]| differential::fuzz_one(differential::diff_unpack, data));
