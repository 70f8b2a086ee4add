//! Untrusted bytes never panic, errors say where they are, and hostile
//! counts and nesting are refused before anything is allocated for them.

use pmix_codec::fuzz::{roundtrip, selector, unpack_any};
use pmix_codec::{decode, BufferType, Dialect, ErrorKind, Format};
use pmix_types::DataType;
use proptest::prelude::*;
use std::path::PathBuf;

fn seeds() -> Vec<Vec<u8>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus/fuzz/seeds");
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| std::fs::read(e.unwrap().path()).unwrap())
        .collect();
    v.sort();
    v
}

#[test]
fn every_truncation_and_bit_flip_of_every_seed_is_handled() {
    for s in seeds() {
        for cut in 2..s.len() {
            roundtrip(&s[..cut]);
            unpack_any(&s[..cut]);
        }
        for i in 2..s.len().min(40) {
            for bit in 0..8 {
                let mut m = s.clone();
                m[i] ^= 1 << bit;
                roundtrip(&m);
                unpack_any(&m);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]
    #[test]
    fn random_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..96)) {
        roundtrip(&data);
        unpack_any(&data);
        pmix_codec::fuzz::buffer_ops(&data);
    }
}

const V41: Format = Format::V41;

fn err(ty: DataType, bytes: &[u8]) -> pmix_codec::Error {
    decode(&V41, ty, bytes).expect_err("hostile input must be refused")
}

#[test]
fn huge_counts_are_refused_against_the_bytes_remaining() {
    // DATA_ARRAY of UINT8 claiming 2^56 elements
    let e = err(
        DataType::DataArray,
        &[
            0x02, 0x0c, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01,
        ],
    );
    assert!(matches!(e.kind, ErrorKind::CountTooLarge { .. }), "{e}");
    // BYTE_OBJECT of 2^40 bytes
    let e = err(
        DataType::ByteObject,
        &[0x02, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20],
    );
    assert!(matches!(e.kind, ErrorKind::CountTooLarge { .. }), "{e}");
    // a unit of 2^31-1 INT32s
    let e = err(DataType::Int32, &[0xfe, 0xff, 0xff, 0xff, 0x0f, 0x00]);
    assert!(matches!(e.kind, ErrorKind::CountTooLarge { .. }), "{e}");
    // a string of length 2^31-1 with 2 bytes present
    let e = err(
        DataType::String,
        &[0x02, 0xfe, 0xff, 0xff, 0xff, 0x0f, 0x41, 0x00],
    );
    assert!(matches!(e.kind, ErrorKind::ReadPastEnd { .. }), "{e}");
    assert_eq!(e.offset, 1);
    // QUERY with 2^31-1 keys
    let e = err(DataType::Query, &[0x02, 0xfe, 0xff, 0xff, 0xff, 0x0f]);
    assert!(matches!(e.kind, ErrorKind::CountTooLarge { .. }), "{e}");
    assert_eq!(e.path, vec!["nkeys".to_string()]);
    // negative string length, negative unit count
    assert!(matches!(
        err(DataType::String, &[0x02, 0x03]).kind,
        ErrorKind::ValueOutOfRange { .. }
    ));
    assert!(matches!(
        err(DataType::Int32, &[0x01]).kind,
        ErrorKind::ValueOutOfRange { .. }
    ));
    // POINTER units are capped: no bytes of their own
    assert!(matches!(
        err(DataType::Pointer, &[0xfe, 0xff, 0x0f, 0x01]).kind,
        ErrorKind::CountTooLarge { .. }
    ));
}

#[test]
fn bad_strings_and_integers_are_refused() {
    // no terminating NUL
    assert!(matches!(
        err(DataType::String, &[0x02, 0x06, 0x61, 0x62, 0x63]).kind,
        ErrorKind::BadString(_)
    ));
    // NUL inside
    assert!(matches!(
        err(DataType::String, &[0x02, 0x06, 0x61, 0x00, 0x00]).kind,
        ErrorKind::BadString(_)
    ));
    // a flex value wider than a UINT16 (2^17), as libpmix refuses too
    assert!(matches!(
        err(DataType::Uint16, &[0x02, 0x80, 0x80, 0x08]).kind,
        ErrorKind::ValueOutOfRange { .. }
    ));
    // a truncated varint: 4.2.2 reads the last byte raw, we refuse
    assert!(matches!(
        err(DataType::Uint64, &[0x02, 0xff]).kind,
        ErrorKind::ReadPastEnd { .. }
    ));
    // a 256-byte namespace does not fit pmix_nspace_t: refused, not truncated
    let mut b = vec![0x02, 0x82, 0x04];
    b.extend(std::iter::repeat_n(b'n', 256));
    b.extend([0x00, 0x00]);
    let e = err(DataType::Proc, &b);
    assert!(matches!(e.kind, ErrorKind::BadString(_)), "{e}");
    assert_eq!(e.path, vec!["nspace".to_string()]);
}

/// Thread stack for the test: 1 MiB in optimised builds (what a server's
/// worker thread may have); debug frames are several times larger.
const STACK: usize = if cfg!(debug_assertions) {
    8 << 20
} else {
    1 << 20
};

#[test]
fn nesting_is_capped_without_exhausting_the_stack() {
    // 10 000 nested DATA_ARRAYs of one DATA_ARRAY each, in a thread with a small stack
    let mut b = vec![0x02];
    for _ in 0..10_000 {
        b.extend([0x27, 0x01]);
    }
    b.extend([0x0c, 0x00]);
    let h = std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || decode(&V41, DataType::DataArray, &b).unwrap_err())
        .unwrap();
    let e = h.join().expect("no stack overflow");
    assert!(matches!(e.kind, ErrorKind::TooDeep { max: 100 }), "{e}");
}

#[test]
fn described_buffers_check_their_tags() {
    let fd = Format::new(Dialect::V41, BufferType::FullyDesc);
    // count tagged UINT32 instead of INT32
    let e = decode(&fd, DataType::Int32, &[0x0e, 0x02, 0x09, 0x02]).unwrap_err();
    assert!(matches!(e.kind, ErrorKind::BadCountTag(14)));
    assert_eq!(e.status(), -20);
    // unit of BOOL read as INT32
    let e = decode(&fd, DataType::Int32, &[0x09, 0x02, 0x01, 0x01]).unwrap_err();
    assert!(matches!(e.kind, ErrorKind::TypeMismatch { .. }));
    assert_eq!(e.status(), -22);
}

#[test]
fn selector_round_trips() {
    for d in Dialect::ALL {
        let f = Format::new(*d, BufferType::FullyDesc);
        let s = selector(DataType::Info, &f);
        let data = [s[0], s[1]];
        let (ty, back, rest) = pmix_codec::fuzz::split(&data).unwrap();
        assert_eq!((ty, back, rest.len()), (DataType::Info, f, 0));
    }
}
