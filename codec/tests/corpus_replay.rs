//! Replays every file under corpus/fuzz/ through the logic of the fuzz
//! targets (codec/tests/common/targets.rs) on stable Rust, and checks that
//! the seed corpora hold every golden vector in each target's input layout.
//!
//! corpus/fuzz/<target>/ holds the seeds and any crash inputs of that
//! target. Seeds are made from the hex column of
//! /work/shared/vectors/*/*/manifest.tsv (OpenPMIx 3.2.5, 5.0.11, 6.1.0)
//! and corpus/v4.2.2/*.tsv (libpmix 4.2.2). To (re)write missing seeds:
//! `PMIX_WRITE_CORPUS=1 cargo test -p pmix-codec --test corpus_replay`.

mod common;

use common::targets::{self, buffer_ops_input, selector};
use pmix_codec::{BufferType, Dialect, Format};
use pmix_types::DataType;
use std::collections::{BTreeMap, BTreeSet};
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

/// The fuzz target that each corpus directory feeds. Directories with the
/// common type+format+buffer layout go through both decoding targets.
fn run_dir(name: &str, data: &[u8]) {
    match name {
        "buffer_ops" => targets::buffer_ops(data),
        "messages" => targets::messages(data),
        // the server role's target lives in the root package (tests/server_fuzz.rs)
        "server" => {}
        _ => {
            targets::unpack_any(data);
            targets::roundtrip(data);
        }
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
    for t in ["unpack_any", "roundtrip", "buffer_ops"] {
        let c = n.get(t).copied().unwrap_or(0);
        assert!(c > 1000, "corpus/fuzz/{t} has only {c} files");
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 == 1 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok())
        .collect()
}

/// The format of a vector folder or file name ("v41-psquash-native",
/// "v3-fullydesc", "v41-native-fullydesc").
fn format_of(name: &str) -> Option<Format> {
    let mut parts = name.split('-');
    let dialect = Dialect::parse(parts.next()?)?;
    let mut fmt = Format::new(dialect, BufferType::NonDesc);
    for p in parts {
        match p {
            "fullydesc" => fmt.buffer_type = BufferType::FullyDesc,
            "native" => fmt.fixed_ints = true,
            "psquash" => {}
            _ => return None,
        }
    }
    Some(fmt)
}

/// One seed: a name, the type and format, and the packed bytes.
struct Seed {
    name: String,
    ty: DataType,
    fmt: Format,
    bytes: Vec<u8>,
}

/// Every packed vector: the shared OpenPMIx releases (if present on this
/// machine) and the libpmix 4.2.2 vectors kept in the repository.
fn golden_seeds() -> Vec<Seed> {
    let mut seeds = Vec::new();
    let shared = Path::new("/work/shared/vectors");
    if let Ok(releases) = std::fs::read_dir(shared) {
        for rel in releases {
            let rel = rel.unwrap().path();
            let Ok(folders) = std::fs::read_dir(&rel) else {
                continue;
            };
            for f in folders {
                let f = f.unwrap().path();
                let manifest = f.join("manifest.tsv");
                let Some(fmt) = format_of(&f.file_name().unwrap().to_string_lossy()) else {
                    continue;
                };
                let Ok(text) = std::fs::read_to_string(&manifest) else {
                    continue;
                };
                let prefix = format!(
                    "{}-{}",
                    rel.file_name().unwrap().to_string_lossy(),
                    f.file_name().unwrap().to_string_lossy()
                );
                // type type_id case num_vals pack_rc pack_status nbytes roundtrip description hex repack_hex
                for line in text.lines().filter(|l| !l.starts_with('#')).skip(1) {
                    let c: Vec<&str> = line.split('\t').collect();
                    if c.len() < 10 || c[4] != "0" {
                        continue;
                    }
                    let Some(ty) = c[1].parse().ok().and_then(DataType::from_code) else {
                        continue;
                    };
                    for (i, h) in c[9..].iter().enumerate() {
                        if let Some(bytes) = unhex(h).filter(|b| !b.is_empty()) {
                            let suffix = if i == 0 { "" } else { "-repack" };
                            seeds.push(Seed {
                                name: format!("{prefix}-{}_{}{suffix}", c[0], c[2]),
                                ty,
                                fmt,
                                bytes,
                            });
                        }
                    }
                }
            }
        }
    }
    let ours = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus/v4.2.2");
    for f in std::fs::read_dir(&ours).expect("corpus/v4.2.2") {
        let f = f.unwrap().path();
        let stem = f.file_stem().unwrap().to_string_lossy().into_owned();
        let Some(fmt) = format_of(&stem) else {
            continue;
        };
        let text = std::fs::read_to_string(&f).unwrap();
        // type case num_vals pack_rc hex json
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let c: Vec<&str> = line.split('\t').collect();
            if c.len() < 5 || c[3] != "0" {
                continue;
            }
            let (Some(ty), Some(bytes)) = (DataType::parse(c[0]), unhex(c[4])) else {
                continue;
            };
            if !bytes.is_empty() {
                seeds.push(Seed {
                    name: format!("v4.2.2-{stem}-{}_{}", c[0], c[1]),
                    ty,
                    fmt,
                    bytes,
                });
            }
        }
    }
    seeds
}

/// A few DataBuffer programs for the buffer_ops seeds (see targets.rs:
/// low 3 bits the operation, the rest its argument).
const PROGRAMS: [&[u8]; 5] = [
    &[],
    &[0x08, 0x10, 0x05, 0x02],       // unpack 1, unpack 2, pack, rewind
    &[0x08, 0x04, 0x03, 0x18],       // unpack 1, unload+load, copy_payload, unpack 3
    &[0x01, 0x06, 0x00, 0x0f, 0x20], // unpack_one, embed, unpack 0, other type, unpack 4
    &[0x18, 0x05, 0x02, 0x08, 0x08], // unpack 3, pack, rewind, unpack 1, unpack 1
];

fn file_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[test]
fn seed_corpora_hold_every_golden_vector() {
    let seeds = golden_seeds();
    assert!(
        seeds.len() > 1000,
        "only {} golden vectors found",
        seeds.len()
    );
    let write = std::env::var_os("PMIX_WRITE_CORPUS").is_some();
    let mut missing = Vec::new();
    for (target, layout) in [("unpack_any", 0usize), ("roundtrip", 0), ("buffer_ops", 1)] {
        let dir = root().join(target);
        let have: BTreeSet<Vec<u8>> = files(&dir).into_iter().map(|(_, d)| d).collect();
        let mut want = BTreeSet::new();
        for s in &seeds {
            let input = if layout == 0 {
                let mut v = selector(s.ty, &s.fmt).to_vec();
                v.extend_from_slice(&s.bytes);
                v
            } else {
                // the program depends on the bytes only, so equal vectors dedupe
                let h = s.bytes.iter().fold(s.ty.code() as usize, |h, b| {
                    h.wrapping_mul(31).wrapping_add(usize::from(*b))
                });
                buffer_ops_input(s.ty, &s.fmt, PROGRAMS[h % PROGRAMS.len()], &s.bytes)
            };
            if have.contains(&input) || !want.insert(input.clone()) {
                continue;
            }
            if write {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(dir.join(file_name(&s.name)), &input).unwrap();
            } else {
                missing.push(format!("{target}: {}", s.name));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "{} seeds missing (PMIX_WRITE_CORPUS=1 writes them), e.g.\n{}",
        missing.len(),
        missing[..missing.len().min(20)].join("\n")
    );
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
