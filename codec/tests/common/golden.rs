//! The golden vectors, read from their manifests: the OpenPMIx 3.2.5,
//! 5.0.11, 6.1.0 and 7.0.0a1 releases in corpus/releases/vectors/*/*/manifest.tsv
//! (provenance: corpus/releases/README.md) and libpmix 4.2.2's in
//! corpus/v4.2.2/*.tsv.

use pmix_codec::{BufferType, Dialect, Format};
use pmix_types::DataType;
use std::path::PathBuf;

/// One packed vector: a name, the type and format, and its bytes.
pub struct Golden {
    pub name: String,
    pub ty: DataType,
    pub fmt: Format,
    pub bytes: Vec<u8>,
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// corpus/releases/vectors: the other releases' vectors.
pub fn release_vectors() -> PathBuf {
    repo().join("corpus/releases/vectors")
}

pub fn unhex(s: &str) -> Option<Vec<u8>> {
    pmix_types::hex::decode(s).ok()
}

/// The format of a vector folder or file name ("v41-psquash-native",
/// "v3-fullydesc", "v41-native-fullydesc").
pub fn format_of(name: &str) -> Option<Format> {
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

fn sorted_dir(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

/// The other releases' vectors.
pub fn releases() -> Vec<Golden> {
    let mut out = Vec::new();
    let root = release_vectors();
    for rel in sorted_dir(&root).into_iter().filter(|p| p.is_dir()) {
        for f in sorted_dir(&rel) {
            let folder = f.file_name().unwrap().to_string_lossy().into_owned();
            let Some(mut fmt) = format_of(&folder) else {
                continue;
            };
            // 7.0.0a1 (master): its v61 is our V7, and every dialect packs as 7.0
            if rel
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("v7."))
            {
                if fmt.dialect == Dialect::V61 {
                    fmt.dialect = Dialect::V7;
                }
                fmt.release = pmix_codec::Release::V7;
            }
            let Ok(text) = std::fs::read_to_string(f.join("manifest.tsv")) else {
                continue;
            };
            let prefix = format!("{}-{folder}", rel.file_name().unwrap().to_string_lossy());
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
                        out.push(Golden {
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
    out
}

/// libpmix 4.2.2's vectors kept in the repository (corpus/v4.2.2).
pub fn v422() -> Vec<Golden> {
    let mut out = Vec::new();
    for f in sorted_dir(&repo().join("corpus/v4.2.2")) {
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
                out.push(Golden {
                    name: format!("v4.2.2-{stem}-{}_{}", c[0], c[1]),
                    ty,
                    fmt,
                    bytes,
                });
            }
        }
    }
    out
}

/// Every golden vector: the other releases' and 4.2.2's.
pub fn all() -> Vec<Golden> {
    let mut v = releases();
    v.extend(v422());
    v
}
