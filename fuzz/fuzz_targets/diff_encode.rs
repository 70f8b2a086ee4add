#![no_main]
//! Thin wrapper: the logic (and the list of known libpmix divergences)
//! lives in tests/differential/mod.rs, which tests/diff_replay.rs runs over
//! corpus/fuzz/diff_encode/ on stable Rust. libpmix runs in child processes,
//! one per format.

#[path = "../../tests/differential/mod.rs"]
mod differential;

use pmix_wire_fuzz as _; // the allocation cap (fuzz/src/lib.rs)

libfuzzer_sys::fuzz_target!(|data: &[u8]| differential::fuzz_one(differential::diff_encode, data));
