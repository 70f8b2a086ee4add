//! Memory: decoding n bytes never allocates more than a small multiple of
//! n. A counting global allocator measures the peak during each decode;
//! this file holds a single test so nothing else allocates meanwhile.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

struct Counting;
static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let now = CURRENT.fetch_add(l.size(), Relaxed) + l.size();
        PEAK.fetch_max(now, Relaxed);
        // SAFETY: forwarding the caller's layout to the system allocator.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        CURRENT.fetch_sub(l.size(), Relaxed);
        // SAFETY: p was allocated by System with this layout.
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static A: Counting = Counting;

/// The bound: 64 bytes of decoded model per input byte, plus 64 KiB.
/// (A one-byte BOOL becomes a 40-byte `Value`; nested structures box.)
fn bound(n: usize) -> usize {
    64 * n + (64 << 10)
}

fn peak_of(data: &[u8]) -> usize {
    let base = CURRENT.load(Relaxed);
    PEAK.store(base, Relaxed);
    pmix_codec::fuzz::unpack_any(data);
    PEAK.load(Relaxed) - base
}

#[test]
fn decoding_allocates_at_most_a_small_multiple_of_the_input() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus/fuzz/seeds");
    let mut inputs: Vec<Vec<u8>> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| std::fs::read(e.unwrap().path()).unwrap())
        .collect();
    // hostile counts for every type and a few formats
    for t in 0u8..76 {
        for f in [5u8, 0x15, 3, 0x25] {
            inputs.push(vec![
                t, f, 0xfe, 0xff, 0xff, 0xff, 0x0f, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x00,
            ]);
            inputs.push(vec![
                t, f, 0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f,
            ]);
            inputs.push(vec![
                t, f, 0x00, 0x00, 0x00, 0x01, 0x7f, 0xff, 0xff, 0xff, 0x00, 0x0f, 0x7f, 0xff,
            ]);
        }
    }
    let mut worst = (0usize, 0usize);
    for d in &inputs {
        let p = peak_of(d);
        assert!(
            p <= bound(d.len()),
            "{} bytes allocated for a {}-byte input {:02x?}",
            p,
            d.len(),
            &d[..d.len().min(24)]
        );
        worst = worst.max((p, d.len()));
    }
    eprintln!("worst peak: {} bytes for a {}-byte input", worst.0, worst.1);
}
