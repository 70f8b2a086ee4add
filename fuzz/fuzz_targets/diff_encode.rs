#![no_main]
//! Thin wrapper: the logic (and the list of known libpmix divergences)
//! lives in tests/differential/mod.rs, which tests/diff_replay.rs runs over
//! corpus/fuzz/diff_encode/ on stable Rust. libpmix runs in child processes,
//! one per format.

#[path = "../../tests/differential/mod.rs"]
mod differential;

use differential::{LibPmix, Verdict};
use std::sync::Mutex;

static LIBPMIX: Mutex<Option<LibPmix>> = Mutex::new(None);
static LISTED: Mutex<u64> = Mutex::new(0);

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let mut c = LIBPMIX.lock().unwrap_or_else(|p| p.into_inner());
    let c = c.get_or_insert_with(differential::for_fuzzing);
    match differential::diff_encode(c, data) {
        Verdict::Divergence(d) => panic!("divergence: {d}"),
        Verdict::Listed(_) => {
            let mut n = LISTED.lock().unwrap_or_else(|p| p.into_inner());
            *n += 1;
            if n.is_power_of_two() {
                eprintln!("diff: {} listed libpmix divergences so far", *n);
            }
        }
        Verdict::Agree | Verdict::Skip => {}
    }
});
