//! `decode --infer` (issue 16 item 4) on buffers libpmix 4.2.2 packed
//! (corpus/v4.2.2, non-described): the layout libpmix used must rank
//! among the first candidates, and units packed one after another must be
//! found as such.

use pmix_codec::Dialect;
use pmixw::infer::infer;
use std::path::PathBuf;

/// (type, case, item count, bytes) of libpmix's vectors in one file.
fn vectors(file: &str) -> Vec<(String, String, usize, Vec<u8>)> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../corpus/v4.2.2")
        .join(file);
    let text = std::fs::read_to_string(&p).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f.len() >= 5 && f[3] == "0").then(|| {
                (
                    f[0].to_string(),
                    f[1].to_string(),
                    f[2].parse().unwrap(),
                    pmix_types::hex::decode(f[4]).unwrap(),
                )
            })
        })
        .collect()
}

/// Types whose content carries evidence (strings, keys, statuses).
const STRUCTURED: &[&str] = &[
    "STRING",
    "INFO",
    "PROC",
    "VALUE",
    "STATUS",
    "APP",
    "PDATA",
    "KVAL",
    "QUERY",
    "ENVAR",
    "BYTE_OBJECT",
    "PROC_INFO",
];

#[test]
fn libpmix_layouts_rank_first() {
    for (file, d) in [
        ("v41.tsv", Dialect::V41),
        ("v3.tsv", Dialect::V3),
        ("v20.tsv", Dialect::V20),
    ] {
        let (mut n, mut first, mut top3) = (0, 0, 0);
        let mut missed = Vec::new();
        for (ty, case, count, bytes) in vectors(file) {
            if !STRUCTURED.contains(&ty.as_str()) || bytes.is_empty() {
                continue;
            }
            n += 1;
            let c = infer(Some(d), &bytes, 3);
            let want = format!("PMIX_{ty}");
            let rank = c.iter().position(|x| {
                x.units.len() == 1 && x.units[0].ty == want && x.units[0].count == count
            });
            match rank {
                Some(0) => {
                    first += 1;
                    top3 += 1
                }
                Some(_) => top3 += 1,
                None => missed.push(format!("{ty}/{case}")),
            }
        }
        eprintln!("{file}: {n} vectors, first {first}, top 3 {top3}, missed {missed:?}");
        assert!(n > 100, "{file}: {n}");
        assert!(
            top3 * 100 >= n * 95,
            "{file}: top 3 {top3} of {n}: {missed:?}"
        );
        assert!(first * 100 >= n * 85, "{file}: first {first} of {n}");
    }
}

#[test]
fn consecutive_units_are_found() {
    let v = vectors("v41.tsv");
    let get = |ty: &str, case: &str| {
        v.iter()
            .find(|x| x.0 == ty && x.1 == case)
            .unwrap_or_else(|| panic!("{ty}/{case}"))
            .3
            .clone()
    };
    let mut bytes = get("STRING", "hello");
    bytes.extend(get("INFO", "v_proc_info"));
    bytes.extend(get("STATUS", "edges"));
    let c = infer(None, &bytes, 5);
    let layout: Vec<(&str, usize)> = c[0]
        .units
        .iter()
        .map(|u| (u.ty.as_str(), u.count))
        .collect();
    assert_eq!(
        layout,
        [("PMIX_STRING", 1), ("PMIX_INFO", 1), ("PMIX_STATUS", 5)]
    );
    // v3 packs the same values differently: not a v3 layout
    assert!(infer(Some(Dialect::V3), &bytes, 5)
        .iter()
        .all(|x| x.score < c[0].score));
}

#[test]
fn cli_json_candidates_best_first() {
    use std::io::Write;
    let hex = pmix_types::hex::encode(
        &vectors("v41.tsv")
            .into_iter()
            .find(|x| x.0 == "INFO" && x.1 == "v_proc_info")
            .unwrap()
            .3,
    );
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_pmixw"))
        .args(["decode", "--infer", "--dialect", "v41", "--hex", "--json"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    c.stdin.take().unwrap().write_all(hex.as_bytes()).unwrap();
    let o = c.wait_with_output().unwrap();
    assert!(o.status.success());
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let a = j.as_array().unwrap();
    assert_eq!(a[0]["units"][0]["type"], "PMIX_INFO");
    assert_eq!(a[0]["units"][0]["count"], 1);
    let scores: Vec<f64> = a.iter().map(|x| x["score"].as_f64().unwrap()).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
}

/// `inspect` explains what it cannot decode: libpmix 4.2.2's v20 LOG
/// request (corpus/pcap, spec-notes/pcap.md), which decodes since its TIME
/// is read (commands.md), made undecodable by a trailing SIZE unit (14
/// bytes, header nbytes raised to match), gets layouts that consume it.
#[test]
fn inspect_explains_an_undecodable_message() {
    let file =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus/pcap/libpmix-4.2.2-v20.pcap");
    let r = pmixw::pcap::read(&std::fs::read(file).unwrap(), 1 << 25).unwrap();
    let k = &r.connections[0];
    // the LOG request at client offset 1551 decodes as captured
    let at = 1551;
    let log = k.messages.iter().find(|e| e.offset == at).unwrap();
    assert!(log.error.is_none() && log.message["command"] == "LOG");
    // the frame header is big-endian on this connection
    let nbytes = u32::from_be_bytes(k.client_bytes[at + 8..at + 12].try_into().unwrap());
    assert_eq!(nbytes, log.header.unwrap().nbytes);
    assert_eq!(nbytes, 100);
    let end = at + 16 + nbytes as usize;
    let mut client = k.client_bytes[..end].to_vec();
    client[at + 8..at + 12].copy_from_slice(&(nbytes + 14).to_be_bytes());
    // count 1, v20's UINT64 tag of a size_t, 8 bytes
    client.extend_from_slice(&[0, 0, 0, 1, 0, 0x0f, 0, 0, 0, 0, 0, 0, 0, 7]);
    client.extend_from_slice(&k.client_bytes[end..]);
    let conv = pmixw::inspect::inspect(&client, &k.server_bytes, 1 << 25);
    let text = pmixw::infer::explain(&conv, &client, &k.server_bytes);
    let para = text
        .split("\n\n")
        .find(|p| p.contains("C->S @1551: 114 bytes that do not decode"))
        .unwrap_or_else(|| panic!("{text}"));
    let best = para.trim_start().lines().nth(1).unwrap();
    assert!(
        best.contains("v20") && best.contains("PMIX_INFOx1@34"),
        "{para}"
    );
}
