//! Untrusted bytes never panic; errors say where they are; hostile counts,
//! lengths and nesting are refused before anything is allocated for them.
//!
//! Memory: a counting global allocator (per thread, so the tests of this
//! binary can run in parallel) measures the peak bytes allocated while
//! decoding. The bound, for an input of n bytes, is [`bound`]:
//! 160·n + 64 KiB. The densest input is one-byte items (BOOL, small flex
//! integers), each of which becomes a 48-byte `Value`; while the values of
//! a later unit are appended, the result vector's old and doubled buffers
//! and the unit's own vector are alive at once (up to 3 × 48 bytes per
//! item; measured worst 113 bytes per input byte, three units of BOOL:
//! `units_of_one_byte_items_stay_within_the_bound`). The constant covers
//! fixed costs.

mod common;

use common::{formats, label, unit_types, units};
use pmix_codec::internal::{flex_encode, zigzag, MAX_DEPTH};
use pmix_codec::{decode, encode, BufferType, DataBuffer, Dialect, ErrorKind, Format, Ints};
use pmix_test_kit::targets::{check_decode, roundtrip, selector, split, unpack_any};
use pmix_types::*;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

// ---------------------------------------------------------------- memory

struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn account(delta: isize) {
    // try_with: the allocator may run while the thread is being torn down
    let _ = LIVE.try_with(|l| {
        let now = l.get() + delta;
        l.set(now);
        let _ = PEAK.try_with(|p| p.set(p.get().max(now)));
    });
}

// SAFETY: every call is forwarded to the system allocator unchanged; the
// bookkeeping uses const-initialised thread-locals, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        // SAFETY: the caller's layout, forwarded.
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            account(l.size() as isize);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        // SAFETY: the caller's layout, forwarded.
        let p = unsafe { System.alloc_zeroed(l) };
        if !p.is_null() {
            account(l.size() as isize);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        account(-(l.size() as isize));
        // SAFETY: p was allocated by System with layout l.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        // SAFETY: forwarded; p was allocated by System with layout l.
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            // counted as if old and new coexisted, as a moving realloc does
            account(new as isize);
            account(-(l.size() as isize));
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// The allocation bound for decoding `n` bytes. The constant covers one
/// decode's minimum budget of zero-byte items (1024 POINTERs of ~72 bytes
/// each, with the result vector's regrowth) for inputs shorter than that.
fn bound(n: usize) -> usize {
    160 * n + (256 << 10)
}

/// Peak bytes allocated by this thread while `f` runs (including what `f`
/// returns and drops).
fn peak_during<T>(f: impl FnOnce() -> T) -> usize {
    let base = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(base));
    drop(f());
    (PEAK.with(Cell::get) - base).max(0) as usize
}

/// Decode `payload` as `ty` in `fmt` with every check of the fuzz targets,
/// within the allocation bound; then the round trip if it decoded.
fn hostile(fmt: &Format, ty: DataType, payload: &[u8]) {
    let mut ok = false;
    let peak = peak_during(|| ok = check_decode(fmt, ty, payload).is_some());
    assert!(
        peak <= bound(payload.len()),
        "{peak} bytes allocated decoding {} bytes as {ty} in {}: {}",
        payload.len(),
        label(fmt),
        hex(payload)
    );
    if ok {
        let mut data = selector(ty, fmt).to_vec();
        data.extend_from_slice(payload);
        roundtrip(&data);
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

// ------------------------------------------------------ generic mutation

/// For every format and every type it registers: a small valid encoding
/// (the shortest of a few generated units that hold at least one value).
fn samples() -> Vec<(Format, DataType, Vec<u8>)> {
    let mut runner = TestRunner::deterministic();
    let mut out = Vec::new();
    for fmt in formats() {
        for ty in unit_types(&fmt) {
            let strategy = units(ty, fmt.dialect);
            let mut best: Option<Vec<u8>> = None;
            for _ in 0..6 {
                let u = strategy.new_tree(&mut runner).unwrap().current();
                let Some(vals) = u.into_iter().find(|v| !v.is_empty()) else {
                    continue;
                };
                let b = encode(&fmt, ty, &vals).unwrap();
                match &best {
                    Some(x) if x.len() <= b.len() => {}
                    _ => best = Some(b),
                }
            }
            out.push((
                fmt,
                ty,
                best.unwrap_or_else(|| encode(&fmt, ty, &[]).unwrap()),
            ));
        }
    }
    out
}

#[test]
fn every_truncation_and_bit_flip_of_valid_encodings_is_handled() {
    let samples = samples();
    assert!(samples.len() > 900);
    for (fmt, ty, bytes) in &samples {
        assert!(decode(fmt, *ty, bytes).is_ok());
        for cut in 0..bytes.len() {
            let part = &bytes[..cut];
            let r = decode(fmt, *ty, part);
            // a unit cut short never decodes (a cut at 0 is an empty buffer)
            if cut > 0 {
                let e = r.expect_err("a truncated unit must not decode");
                assert!(e.offset <= cut, "offset {} past the cut at {cut}", e.offset);
            }
            hostile(fmt, *ty, part);
        }
        for i in 0..bytes.len().min(48) {
            for bit in 0..8 {
                let mut m = bytes.clone();
                m[i] ^= 1 << bit;
                hostile(fmt, *ty, &m);
            }
        }
    }
}

/// Encodings of huge integers: in flex128 (as unsigned and as zig-zag
/// signed values) and in fixed big-endian width 4 and 8.
fn hostile_flex() -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    for u in [
        (1u64 << 31) - 1,
        zigzag((1i64 << 31) - 1),
        1 << 56,
        zigzag(1 << 56),
        u64::MAX,
        zigzag(-1),
        zigzag(i64::from(i32::MIN)),
    ] {
        let mut b = Vec::new();
        flex_encode(&mut b, u);
        v.push(b);
    }
    v.push(vec![0xff; 10]); // longer than any flex integer
    v
}

const HOSTILE_FIXED: &[&[u8]] = &[
    &[0x7f, 0xff, 0xff, 0xff],
    &[0xff, 0xff, 0xff, 0xff],
    &[0x80, 0x00, 0x00, 0x00],
    &[0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00],
    &[0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
];

#[test]
fn huge_integers_spliced_at_every_position_are_handled() {
    let flex = hostile_flex();
    for (fmt, ty, bytes) in samples() {
        let list: Vec<&[u8]> = match fmt.ints() {
            Ints::Flex => flex.iter().map(Vec::as_slice).collect(),
            Ints::Fixed => HOSTILE_FIXED.to_vec(),
        };
        for p in 0..bytes.len().min(64) {
            for h in &list {
                // over the integer that starts here (1 byte of a flex
                // count, or as many bytes as the hostile value has)
                for w in [1, h.len()] {
                    let mut m = bytes[..p].to_vec();
                    m.extend_from_slice(h);
                    m.extend_from_slice(bytes.get(p + w..).unwrap_or(&[]));
                    hostile(&fmt, ty, &m);
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]
    #[test]
    fn random_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..200)) {
        unpack_any(&data);
        roundtrip(&data);
        pmix_test_kit::targets::buffer_ops(&data);
        if let Some((ty, fmt, payload)) = split(&data) {
            hostile(&fmt, ty, payload);
        }
    }
}

#[test]
fn golden_vectors_decode_within_the_allocation_bound() {
    let mut n = 0;
    let mut worst = (0.0f64, 0usize);
    for g in common::golden::all() {
        let (ty, fmt, payload) = (g.ty, g.fmt, &g.bytes[..]);
        let data = [&selector(ty, &fmt)[..], payload].concat();
        let peak = peak_during(|| decode(&fmt, ty, payload));
        assert!(
            peak <= bound(payload.len()),
            "{peak} bytes for {}",
            hex(&data)
        );
        // the ratio is meaningful where the constant does not dominate
        let ratio = peak as f64 / payload.len().max(1) as f64;
        if payload.len() >= 256 && ratio > worst.0 {
            worst = (ratio, payload.len());
        }
        n += 1;
    }
    assert!(n > 1000);
    eprintln!(
        "worst: {:.1} bytes allocated per input byte ({}-byte input)",
        worst.0, worst.1
    );
}

// ------------------------------------------- counts in array-like fields

/// A value whose encoding holds the count or length `n` in the named field.
type Builder = fn(usize) -> Value;

fn s(n: usize) -> PString {
    PString::from_bytes(&vec![b'a'; n]).unwrap()
}

fn one_info() -> Info {
    Info::new("a", Value::Uint8(1))
}

/// Every array-like field: (type, field, builder with n elements/bytes).
fn fields() -> Vec<(DataType, &'static str, Builder)> {
    use DataType as T;
    vec![
        (T::String, "string length", |n| {
            Value::String(Some(s(n - 1)))
        }),
        (T::ByteObject, "byte object size", |n| {
            Value::ByteObject(Box::new(Hex(vec![1; n].into())))
        }),
        (T::CompressedString, "compressed string size", |n| {
            Value::CompressedString(Box::new(Hex(vec![1; n].into())))
        }),
        (T::CompressedByteObject, "compressed bytes size", |n| {
            Value::CompressedByteObject(Box::new(Hex(vec![1; n].into())))
        }),
        (T::DataBuffer, "data buffer size", |n| {
            Value::DataBuffer(Box::new(Hex(vec![1; n].into())))
        }),
        (T::Buffer, "buffer bytes", |n| {
            Value::Buffer(Box::new(Buffer {
                buffer_type: 1,
                bytes: vec![1; n].into(),
            }))
        }),
        (T::Endpoint, "endpoint bytes", |n| {
            Value::Endpoint(Box::new(Endpoint {
                uuid: None,
                osname: None,
                endpt: vec![1; n].into(),
            }))
        }),
        (T::Regex2, "regex2 data", |n| {
            Value::Regex2(Box::new(Regex2 {
                kind: None,
                data: vec![1; n].into(),
            }))
        }),
        (T::DataArray, "data array size", |n| {
            Value::DataArray(Box::new(
                DataArray::new(DataType::Uint8, vec![Value::Uint8(1); n]).unwrap(),
            ))
        }),
        (T::DataArray, "array of strings", |n| {
            Value::DataArray(Box::new(
                DataArray::new(DataType::String, vec![Value::String(None); n]).unwrap(),
            ))
        }),
        (T::App, "argv", |n| {
            Value::App(Box::new(App {
                argv: vec![s(1); n],
                ..App::default()
            }))
        }),
        (T::App, "env", |n| {
            Value::App(Box::new(App {
                env: vec![s(1); n],
                ..App::default()
            }))
        }),
        (T::App, "ninfo", |n| {
            Value::App(Box::new(App {
                info: vec![one_info(); n],
                ..App::default()
            }))
        }),
        (T::Query, "nkeys", |n| {
            Value::Query(Box::new(Query {
                keys: vec![s(1); n],
                qualifiers: vec![],
            }))
        }),
        (T::Query, "nqual", |n| {
            Value::Query(Box::new(Query {
                keys: vec![],
                qualifiers: vec![one_info(); n],
            }))
        }),
        (T::InfoArray, "info array size", |n| {
            Value::InfoArray(vec![one_info(); n].into())
        }),
        (T::Coord, "coordinate dims", |n| {
            Value::Coord(Box::new(Coord {
                view: 1,
                coord: vec![1; n],
            }))
        }),
        (T::Geometry, "coordinates", |n| {
            Value::Geometry(Box::new(Geometry {
                coordinates: vec![Coord::default(); n],
                ..Geometry::default()
            }))
        }),
        (T::RegAttr, "description", |n| {
            Value::RegAttr(Box::new(RegAttr {
                description: vec![s(1); n],
                ..RegAttr::default()
            }))
        }),
        (T::NodeStats, "disk stats", |n| {
            Value::NodeStats(Box::new(NodeStats {
                diskstats: vec![DiskStats::default(); n],
                ..NodeStats::default()
            }))
        }),
        (T::NodeStats, "net stats", |n| {
            Value::NodeStats(Box::new(NodeStats {
                netstats: vec![NetStats::default(); n],
                ..NodeStats::default()
            }))
        }),
        (T::Topo, "topology xml", |n| {
            Value::Topo(Box::new(Topology {
                xml: Some(s(n - 1)),
                support: vec![1; 32].into(),
            }))
        }),
        (T::ProcCpuset, "cpuset text", |n| {
            Value::ProcCpuset(Cpuset {
                cpus: Some(s(n - 1)),
            })
        }),
        (T::Proc, "nspace", |n| {
            Value::Proc(Box::new(Proc {
                nspace: Nspace::from_bytes(&vec![b'a'; n - 1]).unwrap(),
                rank: 1,
            }))
        }),
        (T::Int32, "unit count", |_| Value::Int32(1)),
    ]
}

/// Where the encodings of `a` and `b` first differ.
fn first_difference(a: &[u8], b: &[u8]) -> usize {
    a.iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()))
}

#[test]
fn counts_of_2_31_and_2_56_in_every_array_like_field_are_refused() {
    let flex = hostile_flex();
    let mut tried = 0;
    for fmt in [
        Format::V41,
        Format::new(Dialect::V41, BufferType::FullyDesc),
        Format::new(Dialect::V3, BufferType::NonDesc),
        Format::new(Dialect::V7, BufferType::NonDesc),
        Format {
            fixed_ints: true,
            ..Format::V41
        },
    ] {
        for (ty, field, build) in fields() {
            if !fmt.dialect.registers(ty) {
                continue;
            }
            // 77 vs 78 items (or 77 vs 78 values in the unit): the first
            // differing byte is inside the count
            let (a, b) = if field == "unit count" {
                (
                    encode(&fmt, ty, &vec![build(1); 77]).unwrap(),
                    encode(&fmt, ty, &vec![build(1); 78]).unwrap(),
                )
            } else {
                (
                    encode(&fmt, ty, &[build(77)]).unwrap(),
                    encode(&fmt, ty, &[build(78)]).unwrap(),
                )
            };
            assert!(decode(&fmt, ty, &a).is_ok());
            let d = first_difference(&a, &b);
            // the count's first byte and width
            let (start, width) = match fmt.ints() {
                Ints::Flex => (d, if a[d] >= 0x80 { 2 } else { 1 }),
                Ints::Fixed => {
                    // big-endian: the low byte differs; 8-byte counts have
                    // 7 zero bytes before it, 4-byte counts 3
                    let w =
                        if d >= 7 && a[d - 7..d].iter().all(|&x| x == 0) && ty != DataType::Int32 {
                            8
                        } else {
                            4
                        };
                    (d + 1 - w, w)
                }
            };
            let list: Vec<Vec<u8>> = match fmt.ints() {
                Ints::Flex => flex.clone(),
                Ints::Fixed if width == 8 => vec![
                    vec![0x00, 0x00, 0x00, 0x00, 0x7f, 0xff, 0xff, 0xff],
                    vec![0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00],
                    vec![0xff; 8],
                ],
                Ints::Fixed => vec![vec![0x7f, 0xff, 0xff, 0xff], vec![0xff, 0xff, 0xff, 0xff]],
            };
            // (the one-byte zig-zag -1 is a small count when read unsigned)
            for h in list.into_iter().filter(|h| h.len() > 1) {
                let mut m = a[..start].to_vec();
                m.extend_from_slice(&h);
                m.extend_from_slice(&a[start + width..]);
                let e = decode(&fmt, ty, &m).expect_err("a huge count must be refused");
                assert!(
                    matches!(
                        e.kind,
                        ErrorKind::CountTooLarge { .. }
                            | ErrorKind::ValueOutOfRange { .. }
                            | ErrorKind::ReadPastEnd { .. }
                            | ErrorKind::BadString(_)
                    ),
                    "{field} of {ty} in {}: {e}",
                    label(&fmt)
                );
                // (at the count, at the type tag fixed-width dialects put
                // before an INT/SIZE count, or where the items begin: after
                // it and, in a described unit, the type tag)
                assert!(
                    e.offset + 2 >= start && e.offset <= start + h.len() + 2,
                    "{field} of {ty} in {}: count at {start}, error at {}: {e}",
                    label(&fmt),
                    e.offset
                );
                hostile(&fmt, ty, &m);
                tried += 1;
            }
        }
    }
    assert!(tried > 300, "{tried}");
}

// ----------------------------------------------------------------- nesting

/// Thread stack for the deep-nesting tests: 1 MiB in optimised builds
/// (what a server's worker thread may have); debug frames are larger.
const STACK: usize = if cfg!(debug_assertions) {
    8 << 20
} else {
    1 << 20
};

/// `depth` levels of `wrap` around `leaf`.
fn nest(depth: usize, leaf: Value, wrap: fn(Value) -> Value) -> Value {
    (0..depth).fold(leaf, |v, _| wrap(v))
}

fn in_array(v: Value) -> Value {
    Value::DataArray(Box::new(
        DataArray::new(DataType::DataArray, vec![v]).unwrap(),
    ))
}
fn in_value_array(v: Value) -> Value {
    Value::DataArray(Box::new(
        DataArray::new(DataType::Value, vec![Value::Value(Box::new(v))]).unwrap(),
    ))
}
fn in_info_array(v: Value) -> Value {
    Value::DataArray(Box::new(
        DataArray::new(
            DataType::Info,
            vec![Value::Info(Box::new(Info::new("k", v)))],
        )
        .unwrap(),
    ))
}

/// The bytes of a unit holding `depth` levels: the unit header, `depth`
/// copies of the per-level prefix, the leaf and `depth` copies of the
/// per-level suffix (found by diffing 1, 2 and 3 levels).
fn deep_bytes(
    fmt: &Format,
    ty: DataType,
    depth: usize,
    leaf: &Value,
    wrap: fn(Value) -> Value,
) -> Vec<u8> {
    let enc = |d: usize| encode(fmt, ty, &[nest(d, leaf.clone(), wrap)]).unwrap();
    let (e1, e2, e3) = (enc(1), enc(2), enc(3));
    let pre = first_difference(&e1, &e2);
    // per level: e2 = head + P + (e1 without head and tail) + S + tail
    let grow = e2.len() - e1.len();
    assert_eq!(e3.len() - e2.len(), grow);
    let tail_len = e1
        .iter()
        .rev()
        .zip(e2.iter().rev())
        .take_while(|(a, b)| a == b)
        .count()
        .min(e1.len() - pre);
    // P is what e2 inserts at `pre`; the suffix S what it inserts before the tail
    let ins_total = grow;
    let suffix_len = {
        // try every split of the insertion into P and S; the right one rebuilds e3
        (0..=ins_total)
            .find(|&sl| {
                let pl = ins_total - sl;
                let p = &e2[pre..pre + pl];
                let sfx = &e2[e2.len() - tail_len - sl..e2.len() - tail_len];
                let mut t = e2[..pre].to_vec();
                t.extend_from_slice(p);
                t.extend_from_slice(&e2[pre..e2.len() - tail_len]);
                t.extend_from_slice(sfx);
                t.extend_from_slice(&e2[e2.len() - tail_len..]);
                t == e3
            })
            .expect("levels repeat")
    };
    let pl = ins_total - suffix_len;
    let p = e2[pre..pre + pl].to_vec();
    let sfx = e2[e2.len() - tail_len - suffix_len..e2.len() - tail_len].to_vec();
    let mut out = e1[..pre].to_vec();
    for _ in 1..depth {
        out.extend_from_slice(&p);
    }
    out.extend_from_slice(&e1[pre..e1.len() - tail_len]);
    for _ in 1..depth {
        out.extend_from_slice(&sfx);
    }
    out.extend_from_slice(&e1[e1.len() - tail_len..]);
    if depth == 3 {
        assert_eq!(out, e3, "reconstruction");
    }
    out
}

#[test]
fn nesting_10000_deep_is_refused_without_exhausting_the_stack() {
    // DATA_ARRAY of DATA_ARRAY; of VALUE holding DATA_ARRAY; of INFO whose
    // value is a DATA_ARRAY
    let chains: [fn(Value) -> Value; 3] = [in_array, in_value_array, in_info_array];
    let ty = DataType::DataArray;
    let leaf = Value::DataArray(Box::new(
        DataArray::new(DataType::Uint8, vec![Value::Uint8(7)]).unwrap(),
    ));
    let mut cases = Vec::new();
    for fmt in [
        Format::V41,
        Format::new(Dialect::V41, BufferType::FullyDesc),
        Format::new(Dialect::V3, BufferType::NonDesc),
        Format::new(Dialect::V7, BufferType::FullyDesc),
    ] {
        for wrap in chains {
            let check3 = deep_bytes(&fmt, ty, 3, &leaf, wrap);
            assert_eq!(
                check3,
                encode(&fmt, ty, &[nest(3, leaf.clone(), wrap)]).unwrap()
            );
            cases.push((fmt, ty, deep_bytes(&fmt, ty, 10_000, &leaf, wrap)));
        }
    }
    let h = std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || {
            for (fmt, ty, b) in cases {
                let peak = peak_during(|| {
                    let e = decode(&fmt, ty, &b).expect_err("10 000 levels must be refused");
                    assert!(
                        matches!(e.kind, ErrorKind::TooDeep { max } if max == MAX_DEPTH),
                        "{ty} in {}: {e}",
                        label(&fmt)
                    );
                    assert!(e.offset < b.len());
                });
                assert!(peak <= bound(b.len()));
            }
        })
        .unwrap();
    h.join().expect("no stack overflow");
}

#[test]
fn encoder_and_decoder_agree_on_the_depth_cap() {
    // whatever depth the encoder accepts, the decoder accepts, and the
    // first depth the encoder refuses (TooDeep) the decoder refuses too
    let h = std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(|| {
            let fmt = Format::V41;
            let leaf = Value::DataArray(Box::new(DataArray::new(DataType::Uint8, vec![]).unwrap()));
            let mut last_ok = None;
            for depth in 0..(MAX_DEPTH as usize + 5) {
                let v = nest(depth, leaf.clone(), in_array);
                match encode(&fmt, DataType::DataArray, std::slice::from_ref(&v)) {
                    Ok(b) => {
                        assert_eq!(decode(&fmt, DataType::DataArray, &b).unwrap(), vec![v]);
                        last_ok = Some(depth);
                    }
                    Err(e) => {
                        assert!(matches!(e.kind, ErrorKind::TooDeep { .. }), "{e}");
                        let b = deep_bytes(&fmt, DataType::DataArray, depth, &leaf, in_array);
                        let d = decode(&fmt, DataType::DataArray, &b).unwrap_err();
                        assert!(matches!(d.kind, ErrorKind::TooDeep { .. }), "{d}");
                        break;
                    }
                }
            }
            let last = last_ok.expect("shallow values encode");
            assert!(
                last + 1 >= MAX_DEPTH as usize - 1 && last < MAX_DEPTH as usize + 1,
                "{last}"
            );
        })
        .unwrap();
    h.join().expect("no stack overflow");
}

// ---------------------------------------------- strings and integers

const V41: Format = Format::V41;
const V3: Format = Format::new(Dialect::V3, BufferType::NonDesc);

fn err(fmt: &Format, ty: DataType, bytes: &[u8]) -> pmix_codec::Error {
    let e = decode(fmt, ty, bytes).expect_err("hostile input must be refused");
    assert!(e.offset <= bytes.len());
    hostile(fmt, ty, bytes);
    e
}

#[test]
fn negative_lengths_and_counts_are_refused() {
    // flex: a string of length -1 (zig-zag 1), -2^31; a unit of -1 items
    for len in [1u64, zigzag(i64::from(i32::MIN))] {
        let mut b = vec![0x02];
        flex_encode(&mut b, len);
        b.extend(b"abc\0");
        let e = err(&V41, DataType::String, &b);
        assert!(matches!(e.kind, ErrorKind::ValueOutOfRange { .. }), "{e}");
        assert_eq!(e.offset, 1);
    }
    assert!(matches!(
        err(&V41, DataType::Int32, &[0x01]).kind,
        ErrorKind::ValueOutOfRange { .. }
    ));
    // fixed: length 0xffffffff, 0x80000000; a unit of -1 items
    for len in [[0xff, 0xff, 0xff, 0xff], [0x80, 0, 0, 0]] {
        let mut b = vec![0, 0, 0, 1];
        b.extend(len);
        b.extend(b"abc\0");
        let e = err(&V3, DataType::String, &b);
        assert!(matches!(e.kind, ErrorKind::ValueOutOfRange { .. }), "{e}");
        assert_eq!(e.offset, 4);
    }
    let e = err(&V3, DataType::Int32, &[0xff, 0xff, 0xff, 0xff]);
    assert!(matches!(e.kind, ErrorKind::ValueOutOfRange { .. }), "{e}");
}

#[test]
fn strings_without_nul_or_with_inner_nul_are_refused() {
    for fmt in [V41, V3] {
        let unit = encode(&fmt, DataType::String, &[Value::String(Some(s(3)))]).unwrap();
        // "aaa\0" → "aaab": no terminator
        let mut m = unit.clone();
        *m.last_mut().unwrap() = b'b';
        assert!(matches!(
            err(&fmt, DataType::String, &m).kind,
            ErrorKind::BadString(_)
        ));
        // "a\0a\0": NUL inside
        let mut m = unit.clone();
        let n = m.len();
        m[n - 3] = 0;
        assert!(matches!(
            err(&fmt, DataType::String, &m).kind,
            ErrorKind::BadString(_)
        ));
        // cut before the NUL
        let e = err(&fmt, DataType::String, &unit[..unit.len() - 1]);
        assert!(matches!(e.kind, ErrorKind::ReadPastEnd { .. }), "{e}");
    }
    // a 256-byte namespace does not fit pmix_nspace_t: refused, not truncated
    let mut b = vec![0x02];
    flex_encode(&mut b, zigzag(257));
    b.extend([b'n'; 256]);
    b.extend([0x00, 0x00]);
    let e = err(&V41, DataType::Proc, &b);
    assert!(matches!(e.kind, ErrorKind::BadString(_)), "{e}");
    assert_eq!(e.path, vec!["nspace".to_string()]);
}

#[test]
fn flex_integers_wider_than_their_type_are_refused() {
    use DataType as T;
    // (type, largest integer its width holds on the wire: signed types are
    // zig-zag coded, so that is the unsigned maximum of the width too)
    let widths: [(Value, u64); 13] = [
        (Value::Int16(0), u64::from(u16::MAX)),
        (Value::Uint16(0), u64::from(u16::MAX)),
        (Value::Int32(0), u64::from(u32::MAX)),
        (Value::Int(0), u64::from(u32::MAX)),
        (Value::Uint32(0), u64::from(u32::MAX)),
        (Value::Uint(0), u64::from(u32::MAX)),
        (Value::Pid(0), u64::from(u32::MAX)),
        (Value::Status(0), u64::from(u32::MAX)),
        (Value::ProcRank(0), u64::from(u32::MAX)),
        (Value::InfoDirectives(0), u64::from(u32::MAX)),
        (Value::IofChannel(0), u64::from(u16::MAX)),
        (Value::DataTypeCode(0), u64::from(u16::MAX)),
        (Value::LocType(0), u64::from(u16::MAX)),
    ];
    for (zero, max) in widths {
        // the encoding of 0 ends in the integer's single 0x00 byte (after
        // any type tag, as PID has): put the widest values there
        let ty = zero.data_type();
        let z = encode(&V41, ty, &[zero]).unwrap();
        assert_eq!(z.last(), Some(&0));
        let at = z.len() - 1;
        let mut ok = z[..at].to_vec();
        flex_encode(&mut ok, max);
        assert!(decode(&V41, ty, &ok).is_ok(), "{ty} max");
        let mut b = z[..at].to_vec();
        flex_encode(&mut b, max + 1);
        let e = err(&V41, ty, &b);
        assert!(
            matches!(e.kind, ErrorKind::ValueOutOfRange { .. }),
            "{ty}: {e}"
        );
        assert_eq!(e.offset, at, "{ty}");
    }
    // every flex-coded integer type: 10 continuation bytes, and a varint cut short
    for ty in [
        T::Int16,
        T::Int32,
        T::Int64,
        T::Uint16,
        T::Uint32,
        T::Uint64,
        T::Int,
        T::Uint,
        T::Size,
        T::Pid,
        T::Status,
        T::Time,
        T::ProcRank,
        T::InfoDirectives,
        T::DevType,
    ] {
        let mut b = vec![0x02];
        b.extend([0xff; 10]);
        let e = err(&V41, ty, &b);
        assert!(
            matches!(
                e.kind,
                ErrorKind::ValueOutOfRange { .. } | ErrorKind::ReadPastEnd { .. }
            ),
            "{ty}: {e}"
        );
        let e = err(&V41, ty, &[0x02, 0xff, 0xff]);
        assert!(matches!(e.kind, ErrorKind::ReadPastEnd { .. }), "{ty}: {e}");
    }
}

#[test]
fn described_buffers_check_their_tags() {
    let fd = Format::new(Dialect::V41, BufferType::FullyDesc);
    // count tagged UINT32 instead of INT32
    let e = err(&fd, DataType::Int32, &[0x0e, 0x02, 0x09, 0x02]);
    assert!(matches!(e.kind, ErrorKind::BadCountTag(14)));
    assert_eq!(e.status(), -20);
    // unit of BOOL read as INT32
    let e = err(&fd, DataType::Int32, &[0x09, 0x02, 0x01, 0x01]);
    assert!(matches!(e.kind, ErrorKind::TypeMismatch { .. }));
    assert_eq!(e.status(), -22);
}

#[test]
fn pointer_units_are_capped() {
    // POINTER items carry one sentinel byte for any count: capped at 1024
    let ok = encode(&V41, DataType::Pointer, &vec![Value::Pointer; 1024]).unwrap();
    assert_eq!(decode(&V41, DataType::Pointer, &ok).unwrap().len(), 1024);
    assert!(encode(&V41, DataType::Pointer, &vec![Value::Pointer; 1025]).is_err());
    let mut b = Vec::new();
    flex_encode(&mut b, zigzag(1025));
    b.extend(&ok[ok.len() - (ok.len() - 2)..]);
    let e = err(&V41, DataType::Pointer, &b);
    assert!(matches!(e.kind, ErrorKind::CountTooLarge { .. }), "{e}");
    let mut b = Vec::new();
    flex_encode(&mut b, zigzag(i64::from(i32::MAX)));
    b.push(0x01);
    assert!(matches!(
        err(&V41, DataType::Pointer, &b).kind,
        ErrorKind::CountTooLarge { .. }
    ));
}

/// Regression: the cap on zero-byte items (POINTER) once applied per
/// unit, so many small POINTER units made `decode` allocate ~1024 `Value`s
/// per 3 input bytes. One budget now covers the whole decode.
#[test]
fn zero_byte_items_stay_within_the_bound() {
    let mut unit = Vec::new();
    flex_encode(&mut unit, zigzag(1024));
    unit.push(0x00); // the sentinel byte
    let payload = unit.repeat(1000);
    for (fmt, ty, p) in [
        (V41, DataType::Pointer, payload),
        // v12: a 4-byte count and nothing else
        (
            Format::new(Dialect::V12, BufferType::NonDesc),
            DataType::ProcState,
            [0u8, 0, 4, 0].repeat(1000),
        ),
    ] {
        let peak = peak_during(|| decode(&fmt, ty, &p));
        assert!(
            peak <= bound(p.len()),
            "{peak} bytes allocated decoding {} bytes of {ty} units in {}",
            p.len(),
            label(&fmt)
        );
    }
}

#[test]
fn data_buffer_errors_leave_the_buffer_readable() {
    // a good unit, a truncated one: the first reads, the second fails
    // without moving the read position, rewind reads the first again
    let good = encode(&V41, DataType::String, &[Value::String(Some(s(2)))]).unwrap();
    let mut bytes = good.clone();
    bytes.extend(&good[..good.len() - 1]);
    let mut buf = DataBuffer::from_bytes(V41, bytes.into());
    assert!(buf.unpack(DataType::String, 1).is_ok());
    let at = buf.position();
    let e = buf.unpack(DataType::String, 1).unwrap_err();
    assert!(e.offset >= at && e.offset <= buf.as_bytes().len());
    assert_eq!(buf.position(), at);
    buf.rewind();
    assert_eq!(
        buf.unpack(DataType::String, 1).unwrap().values,
        vec![Value::String(Some(s(2)))]
    );
}

#[test]
fn selector_round_trips() {
    for fmt in formats() {
        let sel = selector(DataType::Info, &fmt);
        let (ty, back, rest) = split(&sel).unwrap();
        assert_eq!((ty, back, rest.len()), (DataType::Info, fmt, 0));
    }
}

#[test]
fn units_of_one_byte_items_stay_within_the_bound() {
    // the densest input: one-byte items (BOOL, UINT8, small flex ints), in
    // one unit or split into units of every size, whose values are appended
    for ty in [
        DataType::Bool,
        DataType::Uint8,
        DataType::Int32,
        DataType::Uint64,
    ] {
        for fmt in [V41, V3] {
            for split in [1usize, 2, 3, 7, 64, 1000] {
                let mut payload = Vec::new();
                let per = 4000 / split;
                for _ in 0..split {
                    let unit = encode(&fmt, ty, &vec![zero_of(ty); per]).unwrap();
                    payload.extend(unit);
                }
                let peak = peak_during(|| decode(&fmt, ty, &payload).unwrap());
                assert!(
                    peak <= bound(payload.len()),
                    "{peak} bytes for {} bytes: {ty} in {} units, {}",
                    payload.len(),
                    split,
                    label(&fmt)
                );
            }
        }
    }
}

fn zero_of(ty: DataType) -> Value {
    match ty {
        DataType::Bool => Value::Bool(false),
        DataType::Uint8 => Value::Uint8(0),
        DataType::Int32 => Value::Int32(0),
        _ => Value::Uint64(0),
    }
}
