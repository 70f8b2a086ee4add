//! Every payload item of every message in corpus/releases/captures — job data,
//! commits, fences, gets, queries, between libpmix 3.2.5, 4.2.2, 5.0.11 and
//! 6.1.0 peers in the v3, v41 and v61 dialects — decodes as the pack unit
//! the capture's annotation names, consuming exactly its bytes, and
//! re-encodes byte for byte. (The command layouts themselves are issue #4.)

use pmix_codec::{BufferType, Dialect, Format};
use pmix_types::DataType;

/// The type an annotation names: `cmd: COMMAND 0`, `kval {…}`, `scope: [1]`,
/// `BUFFER (type byte 1, …)`, `info: INFO x2`, …
fn annotated_type(a: &str) -> Option<DataType> {
    let body = a.trim_start_matches('=').trim();
    if body.starts_with("kval ") {
        return Some(DataType::Kval);
    }
    if body.starts_with("scope:") {
        return Some(DataType::Scope);
    }
    body.split(|c: char| !(c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit()))
        .filter(|w| w.len() > 2 && w.chars().next().is_some_and(|c| c.is_ascii_uppercase()))
        .find_map(DataType::parse)
}

#[test]
fn every_captured_payload_item_round_trips() {
    let mut items = 0;
    let mut by_dialect = std::collections::BTreeMap::new();
    for (name, text) in pmix_test_kit::captures::transcripts() {
        let mut fmt: Option<Format> = None;
        let mut hex = String::new();
        let mut in_payload = false;
        for line in text.lines() {
            if let Some(d) = line
                .trim()
                .strip_prefix("(payloads below decoded in the dialect the client announced: ")
            {
                let d = Dialect::parse(d.trim_end_matches(')')).expect("dialect");
                fmt = Some(Format::new(d, BufferType::NonDesc));
                continue;
            }
            if line.starts_with("  C->S #") || line.starts_with("  S->C #") {
                in_payload = false;
                hex.clear();
                continue;
            }
            if line.trim_start().starts_with("payload (") {
                in_payload = true;
                continue;
            }
            if !in_payload {
                continue;
            }
            let indent = line.len() - line.trim_start().len();
            let t = line.trim();
            if indent == 6 && !t.is_empty() && t.bytes().all(|c| c.is_ascii_hexdigit()) {
                hex.push_str(t);
            } else if indent == 8 && t.starts_with('=') {
                let Some(f) = fmt else { continue };
                let ty = annotated_type(t).unwrap_or_else(|| panic!("{name}: no type in {t:?}"));
                let bytes = pmix_types::hex::decode(&hex).unwrap();
                hex.clear();
                let (values, used) = pmix_codec::decode_unit(&f, ty, &bytes)
                    .unwrap_or_else(|e| panic!("{name}: {ty} {t}: {e}"));
                assert_eq!(
                    used,
                    bytes.len(),
                    "{name}: {t}: {} bytes left over",
                    bytes.len() - used
                );
                let again = pmix_codec::encode(&f, ty, &values).unwrap();
                assert_eq!(again, bytes, "{name}: {t}: re-encoding differs");
                items += 1;
                *by_dialect.entry(f.dialect.name()).or_insert(0) += 1;
            }
        }
    }
    eprintln!("{items} payload items: {by_dialect:?}");
    assert!(items >= 400, "{items} items");
    assert!(by_dialect.len() >= 3, "{by_dialect:?}");
}
