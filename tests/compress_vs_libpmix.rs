//! Our compression against libpmix 4.2.2's PMIx_Data_compress/decompress.

use pmix_codec::compress::{compress, decompress};
use std::io::Write;
use std::process::{Command, Stdio};

fn c(lines: &[String]) -> Vec<(bool, Vec<u8>)> {
    let exe = pmix_wire::interop::build_c("compress", &pmix_wire::interop::default_out_dir())
        .unwrap_or_else(|e| panic!("{e}"));
    let mut child = Command::new(exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(lines.join("\n").as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (ok, hex) = l.split_once(' ').unwrap();
            (ok == "1", pmix_types::hex::decode(hex).unwrap())
        })
        .collect()
}

#[test]
fn libpmix_decompresses_what_we_compress() {
    let texts: Vec<Vec<u8>> = vec![
        vec![b'a'; 8191],
        (0..20_000u32).map(|i| (i * 7 % 251) as u8).collect(),
        b"pmix.test ".repeat(500),
    ];
    let lines: Vec<String> = texts
        .iter()
        .map(|t| format!("d {}", pmix_types::hex::encode(&compress(t).unwrap())))
        .collect();
    let got = c(&lines);
    assert_eq!(got.len(), texts.len());
    for ((ok, out), want) in got.iter().zip(&texts) {
        assert!(ok, "libpmix refused our blob");
        // libpmix appends a NUL (it assumes a string)
        assert_eq!(&out[..want.len()], &want[..]);
    }
}

#[test]
fn libpmix_4_2_2_compress_never_succeeds() {
    // bfrops.md §11.4: the deflateBound check rejects every input
    let big = pmix_types::hex::encode(&vec![b'a'; 100_000]);
    let got = c(&[format!("c {big}")]);
    assert_eq!(got, vec![(false, vec![])]);
}

#[test]
fn we_decompress_a_blob_made_with_another_level() {
    use flate2::{write::ZlibEncoder, Compression};
    let data = vec![b'z'; 5000];
    let mut blob = (data.len() as u32).to_le_bytes().to_vec();
    let mut z = ZlibEncoder::new(&mut blob, Compression::fast());
    z.write_all(&data).unwrap();
    z.finish().unwrap();
    assert_eq!(decompress(&blob).unwrap(), data);
    let got = c(&[format!("d {}", pmix_types::hex::encode(&blob))]);
    assert!(got[0].0);
}
