//! OpenPMIx 7.0.0a1's pcompress components (corpus/releases/vectors/
//! v7.0.0a1/compress-*, COMPRESS-CROSS.tsv): our decoders expand every
//! blob 7.0 made, refuse every foreign one exactly where 7.0's (and
//! 4.2.2's) did, our compressors decline where 7.0's did and write that
//! component's format, and the packed compressed types re-encode
//! byte-identically.

use pmix_codec::compress::{
    compress_with, decompress, decompress_with, expand_value_v7, Codec, COMPRESS_LIMIT_V7,
};
use pmix_codec::{decode, encode, BufferType, Dialect, Format};
use pmix_types::{DataType, Value};
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus/releases/vectors/v7.0.0a1")
}

fn read(rel: &str) -> Vec<u8> {
    std::fs::read(dir().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The rows of a TSV (comment lines and the header skipped).
fn rows(rel: &str) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(dir().join(rel)).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .skip(1)
        .map(|l| l.split('\t').map(str::to_owned).collect())
        .collect()
}

/// (folder, component, limit) of every compression folder.
fn folders() -> Vec<(String, Codec, usize)> {
    let mut v = Vec::new();
    for c in Codec::ALL {
        v.push((format!("compress-{}", c.name()), c, COMPRESS_LIMIT_V7));
        v.push((format!("compress-{}-limit1", c.name()), c, 1));
    }
    v
}

/// Every row of `file` in every compression folder, with its folder,
/// component and limit.
fn folder_rows(file: &str) -> Vec<(String, Codec, usize, Vec<String>)> {
    let mut v = Vec::new();
    for (folder, codec, limit) in folders() {
        for r in rows(&format!("{folder}/{file}")) {
            v.push((folder.clone(), codec, limit, r));
        }
    }
    v
}

#[test]
fn every_7_0_blob_expands_with_its_component() {
    let mut n = 0;
    let made = folder_rows("blobs.tsv")
        .into_iter()
        .filter(|x| x.3[3] == "true");
    for (folder, codec, _, r) in made {
        let blob = read(&format!("{folder}/blob_{}.bin", r[0]));
        let input = read(&format!("{folder}/{}", r[1]));
        assert_eq!(Codec::of_blob(&blob), Some(codec), "{folder}/{}", r[0]);
        assert_eq!(r[6], codec.name());
        assert_eq!(
            decompress_with(codec, &blob).as_deref(),
            Ok(&input[..]),
            "{folder}/{}",
            r[0]
        );
        n += 1;
    }
    assert_eq!(n, 24, "3 components × (3 + 5) blobs");
}

#[test]
fn compress_cross_table_holds_for_our_decoders() {
    let table = rows("COMPRESS-CROSS.tsv");
    assert_eq!(table.len(), 96);
    for r in table {
        let (reader, blob, input, want) = (&r[0], read(&r[1]), read(&r[2]), &r[3]);
        // 4.2.2 reads only zlib: our `decompress`, the 5.0/6.1 reader
        let got = match Codec::parse(reader) {
            Some(c) => decompress_with(c, &blob),
            None => {
                assert_eq!(reader, "4.2.2");
                decompress(&blob)
            }
        };
        match want.as_str() {
            "ok" => assert_eq!(got.as_deref(), Ok(&input[..]), "{reader} {}", r[1]),
            "failed" => assert!(got.is_err(), "{reader} {}: expanded a foreign blob", r[1]),
            w => panic!("{w}"),
        }
    }
}

#[test]
fn our_compressors_decline_as_7_0_does_and_write_its_format() {
    for (folder, codec, limit, r) in folder_rows("blobs.tsv") {
        let input = read(&format!("{folder}/{}", r[1]));
        let ours = compress_with(codec, &input, limit);
        let name = format!("{folder}/{} ({})", r[0], codec.name());
        assert_eq!(ours.is_some(), r[3] == "true", "{name}: compressed?");
        let Some(ours) = ours else { continue };
        let theirs = read(&format!("{folder}/blob_{}.bin", r[0]));
        // the prefix, the magic (and LZ4's frame descriptor flags), then
        // a stream 7.0's decoder of that component expands
        assert_eq!(ours[..4], theirs[..4], "{name}: prefix");
        let head = match codec {
            Codec::Zlib => 6,
            Codec::Zstd => 8,
            Codec::Lz4 => 10,
        };
        assert_eq!(ours[4..head], theirs[4..head], "{name}: header");
        assert_eq!(Codec::of_blob(&ours), Some(codec));
        assert_eq!(decompress_with(codec, &ours).as_deref(), Ok(&input[..]));
        for other in Codec::ALL.into_iter().filter(|&c| c != codec) {
            assert!(
                decompress_with(other, &ours).is_err(),
                "{name} read by {other:?}"
            );
        }
    }
}

fn v7() -> Format {
    Format::new(Dialect::V7, BufferType::NonDesc)
}

#[test]
fn packed_compressed_types_reencode_and_values_expand_as_7_0_does() {
    let mut expanded = 0;
    for (folder, codec, _, r) in folder_rows("manifest.tsv") {
        if r[4] != "0" {
            continue;
        }
        let name = format!("{folder}/{}_{}", r[0], r[2]);
        let ty = DataType::parse(&r[0]).unwrap();
        let bytes = pmix_types::hex::decode(&r[9]).unwrap();
        let vals = decode(&v7(), ty, &bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(encode(&v7(), ty, &vals).unwrap(), bytes, "{name}");
        // a VALUE tagged COMPRESSED_STRING: 7.0 unpacks a STRING
        if ty != DataType::Value {
            continue;
        }
        let Value::Value(inner) = &vals[0] else {
            panic!("{name}")
        };
        let Some(x) = expand_value_v7(inner, codec) else {
            continue;
        };
        if r[7].starts_with("unpack_rc=-20") {
            assert!(x.is_err(), "{name}: 7.0 fails to expand it");
            continue;
        }
        let s = x.unwrap_or_else(|e| panic!("{name}: {e}"));
        let repack = pmix_types::hex::decode(&r[10]).unwrap();
        let ours = encode(&v7(), DataType::Value, &[Value::Value(Box::new(s))]).unwrap();
        assert_eq!(ours, repack, "{name}: repacked as a STRING");
        expanded += 1;
    }
    // cstr_a256, _a8192, _nodes100 in each folder, _a64 and _a255 too
    // with limit 1; legacy_zlib_a8191 expands under zlib only
    assert_eq!(expanded, 3 * 3 + 3 * 5 + 2, "every VALUE_cstr case checked");
}
