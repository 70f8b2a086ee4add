//! The fast paths agree with the owned `Value` path: typed packing
//! (`encode_prims`, `encode_strs`) gives the bytes of `encode`, and the
//! borrowed (`decode_ref`) and typed (`Reader::prims`, `Reader::strs`,
//! `Reader::infos`) decodings give the values and errors of `decode`, on
//! generated values of every type in every format, on every cut and on byte
//! flips of their encodings, and on the fuzz seeds of corpus/fuzz/roundtrip.
//!
//! Cases per (format, type) pair: `PMIX_PROPTEST_CASES` (default 6).

mod common;

use common::{formats, label, seeded_runner, unit_types, units};
use pmix_codec::{encode, encode_prims, encode_strs, Format, Prim};
use pmix_test_kit::decode_paths::check_paths;
use pmix_test_kit::targets::split;
use pmix_types::{DataType, Value};
use proptest::prelude::*;
use proptest::test_runner::TestRunner;

fn cases() -> u32 {
    std::env::var("PMIX_PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(6)
}

fn runner(ty: DataType, fmt: &Format, salt: u8) -> TestRunner {
    seeded_runner(ty, fmt, salt, cases())
}

/// Every decoding path on the encoding of generated units, on each of its
/// prefixes and on a flip of each byte.
#[test]
fn borrowed_typed_and_owned_decodings_agree() {
    let mut pairs = 0;
    for fmt in formats() {
        for ty in unit_types(&fmt) {
            pairs += 1;
            runner(ty, &fmt, 7)
                .run(&units(ty, fmt.dialect), |units| {
                    let mut bytes = Vec::new();
                    for u in &units {
                        bytes.extend(encode(&fmt, ty, u).expect("valid values encode"));
                    }
                    check_paths(&fmt, ty, &bytes);
                    for cut in 0..bytes.len() {
                        check_paths(&fmt, ty, &bytes[..cut]);
                    }
                    let mut flipped = bytes.clone();
                    for i in 0..flipped.len() {
                        flipped[i] ^= 0x81;
                        check_paths(&fmt, ty, &flipped);
                        flipped[i] ^= 0x81;
                    }
                    Ok(())
                })
                .unwrap_or_else(|e| panic!("{ty} in {}: {e}", label(&fmt)));
        }
    }
    assert!(pairs > 900, "only {pairs} pairs");
}

/// The seeds of the roundtrip target (the unpack_any layout): every
/// golden vector, as every type the selector names.
#[test]
fn fuzz_seeds_decode_alike_on_every_path() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/fuzz/roundtrip");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            continue;
        }
        let data = std::fs::read(&path).unwrap();
        pmix_test_kit::decode_paths::decode_paths(&data);
        // and the same bytes read as each integer type and as strings
        if let Some((_, fmt, payload)) = split(&data) {
            for ty in [DataType::Uint64, DataType::Int32, DataType::String] {
                check_paths(&fmt, ty, payload);
            }
        }
        n += 1;
    }
    assert!(n > 100, "only {n} seeds in {}", dir.display());
}

fn typed_encodes_alike<T: Prim + std::fmt::Debug>(fmt: &Format, items: &[T]) {
    let owned: Vec<Value> = items.iter().map(|x| x.to_value()).collect();
    assert_eq!(
        encode_prims(fmt, items).map_err(|e| e.to_string()),
        encode(fmt, T::TYPE, &owned).map_err(|e| e.to_string()),
        "{} in {}: {items:?}",
        T::TYPE,
        label(fmt)
    );
}

/// Typed packing writes the owned path's bytes in every format.
#[test]
fn typed_packing_matches_owned_packing() {
    for fmt in formats() {
        for ty in [DataType::Uint64, DataType::String] {
            runner(ty, &fmt, 9)
                .run(
                    &(
                        proptest::collection::vec(any::<u64>(), 0..40),
                        proptest::collection::vec(
                            proptest::collection::vec(1u8..=255, 0..40),
                            0..6,
                        ),
                    ),
                    |(w, strs)| {
                        // every width, with small and large magnitudes
                        for shift in [0, 7, 14, 31, 49, 57, 63] {
                            let w: Vec<u64> = w.iter().map(|x| x >> shift).collect();
                            macro_rules! as_each {
                                ($($t:ty),*) => {$(
                                    typed_encodes_alike(&fmt, &w.iter().map(|&x| x as $t).collect::<Vec<$t>>());
                                )*};
                            }
                            as_each!(u64, i64, u32, i32, u16, i16, u8, i8);
                            typed_encodes_alike(&fmt, &w.iter().map(|&x| x & 1 == 1).collect::<Vec<_>>());
                        }
                        let owned: Vec<Value> = strs
                            .iter()
                            .map(|s| {
                                Value::String(Some(pmix_types::PString::from_bytes(s).unwrap()))
                            })
                            .collect();
                        assert_eq!(
                            encode_strs(&fmt, &strs).unwrap(),
                            encode(&fmt, DataType::String, &owned).unwrap()
                        );
                        Ok(())
                    },
                )
                .unwrap_or_else(|e| panic!("{}: {e}", label(&fmt)));
        }
    }
}

/// A string with a NUL inside is refused by typed packing, with nothing
/// written, as by the owned path's constructors.
#[test]
fn typed_string_packing_refuses_interior_nul() {
    let mut out = vec![1, 2, 3];
    let err = pmix_codec::pack_strs(&mut out, &Format::V41, &["ok", "a\0b"]).unwrap_err();
    assert_eq!(out, [1, 2, 3]);
    assert_eq!(err.ty, Some(DataType::String));
    assert_eq!(err.path, ["[1]"]);
}
