//! Every example in the written wire spec is checked against the code, so
//! that the spec cannot drift from it (spec-notes/encoding-v41.md and
//! spec-notes/divergences.md).
//!
//! The pages hold lines of this form (inside code blocks):
//!
//! ```text
//! example:       FORMAT TYPE JSON => HEX @ EVIDENCE
//! encode:        FORMAT TYPE JSON => HEX @ EVIDENCE
//! decode:        FORMAT TYPE HEX => JSON @ EVIDENCE
//! refuse-decode: FORMAT TYPE HEX => STATUS @ EVIDENCE
//! refuse-encode: FORMAT TYPE JSON => STATUS @ EVIDENCE
//! pending:       FORMAT TYPE JSON => HEX @ EVIDENCE
//! ```
//!
//! * FORMAT: a dialect (`v41`, `v3`, `v61`, ...) with optional suffixes
//!   `-native` (psquash native: fixed-width integers) and `-fullydesc`.
//! * TYPE: a data type name (`INFO`, `PMIX_INFO` or its code).
//! * JSON: a one-line JSON array of bare values (spec-notes/json.md).
//! * HEX: bytes, spaces allowed; `XX*N` is byte XX repeated N times.
//! * STATUS: the PMIx status the codec answers (`Error::status()`).
//! * EVIDENCE: free text, except that a first word naming a shared vector
//!   (`v5.0.11/v41/BOOL_true`) or a row of our 4.2.2 corpus
//!   (`corpus/v4.2.2/v41.tsv BOOL/true`) is checked to hold exactly HEX.
//!
//! `example` checks both directions: the JSON encodes to HEX and HEX decodes
//! to the JSON. `encode`/`decode` check one direction (lossy or
//! accept-only cases). `pending` is a libpmix fact the code does not follow
//! yet: the test asserts that it still does not, so that the line is
//! promoted to `example` as soon as the code is fixed.

use pmix_codec::{decode, encode, BufferType, Dialect, Format};
use pmix_types::{DataType, Value};
use std::collections::BTreeSet;
use std::path::PathBuf;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn vectors_dir() -> PathBuf {
    repo().join("corpus/releases/vectors")
}

#[derive(Debug)]
struct Line {
    page: &'static str,
    lineno: usize,
    kind: String,
    format: Format,
    ty: DataType,
    left: String,
    right: String,
    evidence: String,
}

impl Line {
    fn at(&self) -> String {
        format!("{}:{}", self.page, self.lineno)
    }
}

const KINDS: &[&str] = &[
    "example",
    "encode",
    "decode",
    "refuse-decode",
    "refuse-encode",
    "pending",
];

fn parse_format(s: &str) -> Option<Format> {
    let mut parts = s.split('-');
    let dialect = Dialect::parse(parts.next()?)?;
    let mut f = Format::new(dialect, BufferType::NonDesc);
    for p in parts {
        match p {
            "fullydesc" => f.buffer_type = BufferType::FullyDesc,
            "native" => f.fixed_ints = true,
            _ => return None,
        }
    }
    Some(f)
}

fn parse_hex(s: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    for tok in s.split_whitespace() {
        let (bytes, times) = match tok.split_once('*') {
            Some((b, n)) => (b, n.parse::<usize>().map_err(|e| format!("{tok}: {e}"))?),
            None => (tok, 1),
        };
        let b = pmix_types::hex::decode(bytes).map_err(|e| format!("{tok}: {e}"))?;
        for _ in 0..times {
            out.extend_from_slice(&b);
        }
    }
    Ok(out)
}

fn parse_json(ty: DataType, s: &str) -> Result<Vec<Value>, String> {
    let arr: Vec<serde_json::Value> = serde_json::from_str(s).map_err(|e| format!("{s}: {e}"))?;
    arr.into_iter()
        .map(|j| Value::from_bare_json(ty, j.clone()).map_err(|e| format!("{j}: {e}")))
        .collect()
}

fn load(page: &'static str) -> Vec<Line> {
    let path = repo().join("spec-notes").join(page);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let t = raw.trim();
        let Some((kind, rest)) = t.split_once(':') else {
            continue;
        };
        if !KINDS.contains(&kind) {
            continue;
        }
        let at = format!("{page}:{}", i + 1);
        let (body, evidence) = rest
            .rsplit_once(" @ ")
            .unwrap_or_else(|| panic!("{at}: no evidence (` @ …`)"));
        let (left, right) = body
            .rsplit_once(" => ")
            .unwrap_or_else(|| panic!("{at}: no ` => `"));
        let mut words = left.trim().splitn(3, ' ');
        let fmt = words.next().unwrap_or_default();
        let ty = words.next().unwrap_or_default();
        let left = words.next().unwrap_or_default().trim().to_string();
        lines.push(Line {
            page,
            lineno: i + 1,
            kind: kind.to_string(),
            format: parse_format(fmt).unwrap_or_else(|| panic!("{at}: bad format {fmt:?}")),
            ty: DataType::parse(ty).unwrap_or_else(|| panic!("{at}: bad type {ty:?}")),
            left,
            right: right.trim().to_string(),
            evidence: evidence.trim().to_string(),
        });
    }
    lines
}

/// What a vector or corpus row named by a line's evidence holds.
struct Recorded {
    /// libpmix's pack status for the case.
    pack_rc: i32,
    /// The packed bytes (none when the pack failed).
    bytes: Option<Vec<u8>>,
}

/// The vector or corpus row a line's evidence names, if it names one.
fn evidence_record(l: &Line) -> Option<Recorded> {
    let first = l.evidence.split_whitespace().next()?;
    if ["v3.2.5/", "v5.0.11/", "v6.1.0/", "v7.0.0a1/"]
        .iter()
        .any(|p| first.starts_with(p))
    {
        let (folder, name) = first.rsplit_once('/').expect("release/folder/case");
        let manifest = vectors_dir().join(folder).join("manifest.tsv");
        let text = std::fs::read_to_string(&manifest)
            .unwrap_or_else(|e| panic!("{}: {}: {e}", l.at(), manifest.display()));
        // columns: type, type_id, case, num_vals, pack_rc, ...
        let row = text
            .lines()
            .map(|r| r.split('\t').collect::<Vec<_>>())
            .find(|c| c.len() > 4 && format!("{}_{}", c[0], c[2]) == name)
            .unwrap_or_else(|| panic!("{}: no case {name} in {}", l.at(), manifest.display()));
        let pack_rc = row[4].parse().expect("pack_rc");
        let bin = vectors_dir().join(format!("{first}.bin"));
        return Some(Recorded {
            pack_rc,
            bytes: std::fs::read(bin).ok(),
        });
    }
    if first.starts_with("corpus/") {
        let case = l
            .evidence
            .split_whitespace()
            .nth(1)
            .unwrap_or_else(|| panic!("{}: corpus evidence without TYPE/case", l.at()));
        let (ty, name) = case.split_once('/').expect("TYPE/case");
        let path = repo().join(first);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {}: {e}", l.at(), path.display()));
        // columns: type, case, num_vals, pack_rc, hex, json
        let row = text
            .lines()
            .map(|r| r.split('\t').collect::<Vec<_>>())
            .find(|c| c.len() > 4 && c[0] == ty && c[1] == name)
            .unwrap_or_else(|| panic!("{}: no row {case} in {first}", l.at()));
        let pack_rc = row[3].parse().expect("pack_rc");
        let bytes = (pack_rc == 0).then(|| pmix_types::hex::decode(row[4]).expect("corpus hex"));
        return Some(Recorded { pack_rc, bytes });
    }
    None
}

/// A line's claim checked against the vector or corpus row it cites.
fn check_evidence(l: &Line) -> Result<(), String> {
    let Some(rec) = evidence_record(l) else {
        return Ok(());
    };
    if l.kind == "refuse-encode" {
        let want: i32 = l.right.parse().map_err(|e| format!("status: {e}"))?;
        if rec.pack_rc != want {
            return Err(format!(
                "evidence {}: libpmix's pack status is {}, page says {want}",
                l.evidence, rec.pack_rc
            ));
        }
        return Ok(());
    }
    let page = match l.kind.as_str() {
        "decode" | "refuse-decode" => parse_hex(&l.left)?,
        _ => parse_hex(&l.right)?,
    };
    match rec.bytes {
        Some(ev) if ev == page => Ok(()),
        Some(ev) => Err(format!(
            "evidence {} holds {}, page says {}",
            l.evidence,
            hexs(&ev),
            hexs(&page)
        )),
        None => Err(format!(
            "evidence {}: libpmix failed to pack it ({})",
            l.evidence, rec.pack_rc
        )),
    }
}

fn hexs(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Check one line; `Err` says why it does not hold.
fn check(l: &Line) -> Result<(), String> {
    let (fmt, ty) = (&l.format, l.ty);
    let encode_to = |json: &str, hex: &str| -> Result<(), String> {
        let want = parse_hex(hex)?;
        let values = parse_json(ty, json)?;
        let got = encode(fmt, ty, &values).map_err(|e| format!("encode failed: {e}"))?;
        if got != want {
            return Err(format!(
                "encodes to {}, page says {}",
                hexs(&got),
                hexs(&want)
            ));
        }
        Ok(())
    };
    let decode_to = |hex: &str, json: &str| -> Result<(), String> {
        let bytes = parse_hex(hex)?;
        let want = parse_json(ty, json)?;
        let got = decode(fmt, ty, &bytes).map_err(|e| format!("decode failed: {e}"))?;
        if got != want {
            let got: Vec<_> = got.iter().map(Value::to_bare_json).collect();
            return Err(format!("decodes to {}", serde_json::Value::from(got)));
        }
        Ok(())
    };
    let status =
        |s: &str| -> Result<i32, String> { s.parse().map_err(|e| format!("status {s:?}: {e}")) };
    check_evidence(l)?;
    match l.kind.as_str() {
        "example" => {
            encode_to(&l.left, &l.right)?;
            decode_to(&l.right, &l.left)
        }
        "encode" => encode_to(&l.left, &l.right),
        "decode" => decode_to(&l.left, &l.right),
        "refuse-decode" => {
            let bytes = parse_hex(&l.left)?;
            let want = status(&l.right)?;
            match decode(fmt, ty, &bytes) {
                Ok(v) => Err(format!("decoded to {v:?} instead of failing with {want}")),
                Err(e) if e.status() == want => Ok(()),
                Err(e) => Err(format!("fails with {} ({e}), page says {want}", e.status())),
            }
        }
        "refuse-encode" if l.right == "json" => match parse_json(ty, &l.left) {
            Ok(v) => Err(format!("the value model accepts {v:?}")),
            Err(_) => Ok(()),
        },
        "refuse-encode" => {
            let values = parse_json(ty, &l.left)?;
            let want = status(&l.right)?;
            match encode(fmt, ty, &values) {
                Ok(b) => Err(format!(
                    "encoded to {} instead of failing with {want}",
                    hexs(&b)
                )),
                Err(e) if e.status() == want => Ok(()),
                Err(e) => Err(format!("fails with {} ({e}), page says {want}", e.status())),
            }
        }
        "pending" => {
            parse_json(ty, &l.left)?;
            parse_hex(&l.right)?;
            match (encode_to(&l.left, &l.right), decode_to(&l.right, &l.left)) {
                (Ok(()), Ok(())) => Err(
                    "the code now follows this libpmix fact: change `pending:` to `example:` \
                     and update the text around it"
                        .into(),
                ),
                _ => Ok(()),
            }
        }
        k => Err(format!("unknown kind {k}")),
    }
}

fn run(page: &'static str) -> Vec<Line> {
    let lines = load(page);
    let failures: Vec<String> = lines
        .iter()
        .filter_map(|l| {
            check(l)
                .err()
                .map(|e| format!("{}: {} {}: {e}", l.at(), l.kind, l.ty))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} spec lines do not hold:\n{}",
        failures.len(),
        lines.len(),
        failures.join("\n")
    );
    lines
}

#[test]
fn encoding_v41_examples_hold() {
    let lines = run("encoding-v41.md");
    // one entry per type: every code 0-75 has at least one checked line
    let covered: BTreeSet<DataType> = lines.iter().map(|l| l.ty).collect();
    let missing: Vec<_> = DataType::ALL
        .iter()
        .filter(|t| !covered.contains(t))
        .map(|t| t.short_name())
        .collect();
    assert!(
        missing.is_empty(),
        "types without a checked example: {missing:?}"
    );
    // the modern dialect is what the page is about
    let v41 = lines
        .iter()
        .filter(|l| l.format == Format::V41 && l.kind == "example")
        .count();
    assert!(v41 >= 80, "only {v41} v41 examples");
}

#[test]
fn divergence_examples_hold() {
    let lines = run("divergences.md");
    assert!(lines.len() >= 15, "only {} checked lines", lines.len());
}

#[test]
fn the_line_parser_rejects_what_it_should() {
    assert!(parse_format("v41-fullydesc").is_some());
    assert!(parse_format("v41-native-fullydesc").unwrap().fixed_ints);
    assert!(parse_format("v41-bogus").is_none());
    assert_eq!(parse_hex("6e*3 00").unwrap(), b"nnn\0");
    assert!(parse_hex("0g").is_err());
    assert!(parse_json(DataType::Uint8, "[256]").is_err());
    // a line that does not hold is reported
    let bad = Line {
        page: "test",
        lineno: 1,
        kind: "example".into(),
        format: Format::V41,
        ty: DataType::Bool,
        left: "[true]".into(),
        right: "02 00".into(),
        evidence: "none".into(),
    };
    assert!(check(&bad).is_err());
    // and so is a vector that does not hold the bytes
    let bad_ev = Line {
        right: "02 01".into(),
        evidence: "v5.0.11/v41/BOOL_false".into(),
        ..bad
    };
    assert!(check(&bad_ev).unwrap_err().contains("evidence"));
}

#[test]
fn partial_unpack_continues_the_unit() {
    // divergences.md §20: libpmix leaves `06` (the third item, without a
    // count) in the buffer; we keep the item and hand it out next
    use pmix_codec::DataBuffer;
    let mut buf = DataBuffer::from_bytes(Format::V41, parse_hex("06 02 04 06").unwrap().into());
    let first = buf.unpack(DataType::Int32, 2).unwrap();
    assert_eq!(first.values, vec![Value::Int32(1), Value::Int32(2)]);
    assert_eq!((first.left_in_unit, first.status()), (1, -19));
    // another type first is refused and changes nothing
    let e = buf.unpack(DataType::String, 1).unwrap_err();
    assert_eq!(e.status(), -27);
    let rest = buf.unpack(DataType::Int32, 5).unwrap();
    assert_eq!(rest.values, vec![Value::Int32(3)]);
    assert_eq!((rest.left_in_unit, rest.status()), (0, 0));
    assert!(buf.unread().is_empty());
}

#[test]
fn a_failed_pack_writes_nothing() {
    // divergences.md §21: libpmix leaves the count (and earlier items)
    use pmix_codec::DataBuffer;
    use pmix_types::{Regex, Value as V};
    let mut buf = DataBuffer::new(Format::V41);
    buf.pack(DataType::Uint8, &[V::Uint8(7)]).unwrap();
    let before = buf.as_bytes().to_vec();
    let bad = V::Regex(Box::new(Regex::Text("node01".into())));
    let good = V::Regex(Box::new(Regex::Text("raw:n1".into())));
    let e = buf.pack(DataType::Regex, &[good, bad]).unwrap_err();
    assert_eq!(e.status(), -27);
    assert_eq!(buf.as_bytes(), &before[..], "torn unit left behind");
    // an unregistered type in v3: libpmix leaves `00 00 00 01`
    let mut v3 = DataBuffer::new(Format::new(Dialect::V3, BufferType::NonDesc));
    let e = v3.pack(
        DataType::ProcNspace,
        &parse_json(DataType::ProcNspace, r#"["x"]"#).unwrap(),
    );
    assert_eq!(e.unwrap_err().status(), -16);
    assert!(v3.as_bytes().is_empty());
}
