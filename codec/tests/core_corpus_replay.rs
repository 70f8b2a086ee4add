//! Replays every file under corpus/fuzz/ through the logic of the fuzz
//! targets (test-kit/src/targets.rs) on stable Rust, every golden
//! vector from its manifest (common/golden.rs: corpus/releases/vectors and
//! corpus/v4.2.2) through the decoding targets, and every crash the
//! fuzzers found as a named test with its bytes inline.
//!
//! corpus/fuzz/<target>/ holds that target's corpus, minimized with
//! `cargo fuzz cmin` (fuzz/README.md); the golden vectors are not copied
//! into it.

mod common;

use common::golden::{self, format_of};
use pmix_codec::{BufferType, Dialect, Format};
use pmix_test_kit::targets::{self, buffer_ops_input, selector};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus/fuzz")
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<_> = rd
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.extension() != Some(std::ffi::OsStr::new("md")))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    v.sort();
    v
}

/// The fuzz target that each corpus directory feeds.
fn run_dir(name: &str, data: &[u8]) {
    match name {
        "buffer_ops" => targets::buffer_ops(data),
        "messages" => targets::messages(data),
        "unpack_any" | "decode_paths" => targets::unpack_any(data),
        "roundtrip" => targets::roundtrip(data),
        // the server role's target lives in the root package (tests/core_server_fuzz.rs),
        // the differential ones need libpmix (codec/tests/libpmix_diff_replay.rs)
        _ => {}
    }
}

#[test]
fn every_corpus_file_passes_its_target() {
    let mut n = BTreeMap::new();
    for dir in std::fs::read_dir(root()).expect("corpus/fuzz") {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        for (file, data) in files(&dir) {
            let r = std::panic::catch_unwind(|| run_dir(&name, &data));
            assert!(
                r.is_ok(),
                "corpus/fuzz/{name}/{file} fails its target; input {}",
                hex(&data)
            );
            *n.entry(name.clone()).or_insert(0) += 1;
        }
    }
    for t in ["unpack_any", "roundtrip", "buffer_ops", "messages"] {
        let c = n.get(t).copied().unwrap_or(0);
        assert!(c >= 20, "corpus/fuzz/{t} has only {c} files");
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A few DataBuffer programs for the golden vectors in `buffer_ops` (see
/// targets.rs: low 3 bits the operation, the rest its argument).
const PROGRAMS: [&[u8]; 5] = [
    &[],
    &[0x08, 0x10, 0x05, 0x02],       // unpack 1, unpack 2, pack, rewind
    &[0x08, 0x04, 0x03, 0x18],       // unpack 1, unload+load, copy_payload, unpack 3
    &[0x01, 0x06, 0x00, 0x0f, 0x20], // unpack_one, embed, unpack 0, other type, unpack 4
    &[0x18, 0x05, 0x02, 0x08, 0x08], // unpack 3, pack, rewind, unpack 1, unpack 1
];

#[test]
fn every_golden_vector_passes_the_decoding_targets() {
    let vectors = golden::all();
    let want = 5000;
    assert!(
        vectors.len() > want,
        "only {} golden vectors found",
        vectors.len()
    );
    for (i, g) in vectors.iter().enumerate() {
        let mut input = selector(g.ty, &g.fmt).to_vec();
        input.extend_from_slice(&g.bytes);
        let ops = buffer_ops_input(g.ty, &g.fmt, PROGRAMS[i % PROGRAMS.len()], &g.bytes);
        let r = std::panic::catch_unwind(|| {
            targets::unpack_any(&input);
            targets::roundtrip(&input);
            targets::buffer_ops(&ops);
        });
        assert!(r.is_ok(), "golden vector {} fails a target", g.name);
    }
}

// ------------------------------------------------ what the fuzzers found

/// The `unpack_any`/`roundtrip` input of a type code, format selector byte
/// and payload.
fn input(ty: u8, fmt: u8, payload: &str) -> Vec<u8> {
    let mut v = vec![ty, fmt];
    v.extend(pmix_types::hex::decode(&payload.replace(' ', "")).expect("hex"));
    v
}

/// roundtrip found it: POINTER units (no input bytes per item) in v41,
/// 108 pointers per unit: a million values from 3000 bytes before
/// one budget covered the whole decode call (robustness.md).
#[test]
fn regress_pointer_units_share_one_zero_byte_budget() {
    let data = input(31, 0x05, &format!("{}0477", "6c".repeat(128)));
    targets::unpack_any(&data);
    targets::roundtrip(&data);
}

/// roundtrip found it: a FLOAT sent as text that "%f" would not write
/// (".9551615", v51) comes back rounded to 6 decimals; only the second
/// pass must be exact.
#[test]
fn regress_float_text_not_in_printf_form() {
    let data = input(16, 0x06, "02 12 2e3935353136313500");
    targets::unpack_any(&data);
    targets::roundtrip(&data);
}

/// roundtrip found it (a harness defect): an empty v12 buffer read as
/// DATA_ARRAY has no units, so nothing to re-encode.
#[test]
fn regress_v12_empty_buffer_as_data_array() {
    let data = input(39, 0x60, "");
    targets::unpack_any(&data);
    targets::roundtrip(&data);
}

/// buffer_ops found it: pack (op 0x65) of the initial empty value list of
/// PROC_INFO into a v12 described buffer.
#[test]
fn regress_v12_pack_empty_proc_info() {
    targets::buffer_ops(&input(38, 0x50, "11 65 0000000000000000"));
}

/// messages found it: a reply reached through the lone-STATUS fallback (a
/// zero-count STATUS unit then a one-item unit, v3) must come back as what
/// its canonical bytes decode to.
#[test]
fn regress_lone_status_reply_is_canonical() {
    targets::messages(&input(0x7f, 0x03, "00000001 07000000 0000000000000000"));
}

#[test]
fn vector_folder_names_map_to_formats() {
    let native = format_of("v41-psquash-native").unwrap();
    assert!(native.fixed_ints && native.dialect == Dialect::V41);
    let fd = format_of("v41-native-fullydesc").unwrap();
    assert!(fd.fixed_ints && fd.buffer_type == BufferType::FullyDesc);
    assert_eq!(
        format_of("v3").unwrap(),
        Format::new(Dialect::V3, BufferType::NonDesc)
    );
    assert!(format_of("DROPPED.tsv").is_none());
}
