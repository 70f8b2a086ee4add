//! What every fuzz target links besides its one line: the allocation cap.
//!
//! libFuzzer's `-malloc_limit_mb` works through the sanitizer's malloc
//! hooks, so a build with `--sanitizer none` (fuzz/campaign's default:
//! 2-3 times faster, see spec-notes/robustness.md) would lose it. This
//! allocator keeps it in every build: one allocation over
//! [`MAX_ALLOCATION`] aborts, and libFuzzer keeps the input as a crash.
//! Each target names the crate (`use pmix_wire_fuzz as _;`) so that it is
//! linked.

use std::alloc::{GlobalAlloc, Layout, System};

/// The largest single allocation: 256 MiB, as `-malloc_limit_mb=256`.
pub const MAX_ALLOCATION: usize = 256 << 20;

/// The system allocator, refusing (by abort) one allocation over the cap.
pub struct Capped;

fn check(size: usize) {
    if size > MAX_ALLOCATION {
        eprintln!("==pmix-wire-fuzz== allocation of {size} bytes over the cap of {MAX_ALLOCATION}");
        std::process::abort();
    }
}

// SAFETY: every call is passed unchanged to the system allocator, after a
// size check that only aborts.
unsafe impl GlobalAlloc for Capped {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        check(layout.size());
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        check(layout.size());
        System.alloc_zeroed(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        check(new_size);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static CAPPED: Capped = Capped;
