//! Layout inference for non-described buffers (`pmixw decode --infer`):
//! which sequences of pack units (a type and an item count each) consume
//! the bytes exactly, ranked by how plausible their values are. Uses only
//! the public `pmix_codec::decode_unit`.
//!
//! A non-described buffer carries no type tags, so almost any byte
//! sequence decodes as *something* (a byte, a flex integer); the ranking
//! is what makes the answer useful: well-formed strings, keys that are
//! attribute names, known status codes, sane counts and few units score
//! up; control characters, huge counts and empty units score down.
//!
//! The search keeps the best `KEEP` partial layouts at each byte offset and
//! visits offsets in order, so the cost is bounded by offsets × types ×
//! `KEEP`, never exponential; inputs over `MAX_INPUT` bytes are refused.

#![forbid(unsafe_code)]

use pmix_codec::{BufferType, Dialect, Format};
use pmix_types::{DataType, Value};
use serde::Serialize;
use serde_json::Value as Json;

/// Largest input inferred (a message payload, not a file of them).
pub const MAX_INPUT: usize = 4 << 10;
/// Partial layouts kept per offset.
const KEEP: usize = 4;

/// One pack unit of a candidate layout.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Unit {
    #[serde(rename = "type")]
    pub ty: String,
    pub count: usize,
    /// Byte offset of the unit in the input.
    pub offset: usize,
    /// The decoded items (JSON form).
    pub values: Json,
    /// Other types that read the same items from the same bytes (a BYTE
    /// OBJECT is also a DATA_BUFFER; a flex-coded 0 is a STATUS, an INT and
    /// a SIZE): one reading, shown once, under its best-scoring type.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
}

/// A layout that consumes the input exactly.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Candidate {
    pub dialect: String,
    pub units: Vec<Unit>,
    pub score: f64,
}

/// Types whose units match almost any bytes: weak evidence.
fn weak(t: DataType) -> bool {
    use DataType as T;
    matches!(
        t,
        T::Byte
            | T::Int8
            | T::Uint8
            | T::Bool
            | T::Pointer
            | T::Undef
            | T::DataTypeCode
            | T::Command
            | T::Persist
            | T::Scope
            | T::DataRange
            | T::ProcState
            | T::InfoDirectives
            | T::AllocDirective
            | T::IofChannel
            | T::JobState
            | T::LinkState
            | T::DevType
            | T::LocType
            | T::StorMedium
            | T::StorAccess
            | T::StorPersist
            | T::StorAccessType
            | T::Float
            | T::Double
            | T::Time
            | T::Timeval
    )
}

/// How plausible a JSON value's strings and numbers are.
fn plausibility(j: &Json, key_context: bool) -> f64 {
    match j {
        Json::String(s) => string_score(s, key_context),
        // numbers are neutral unless absurd
        Json::Number(n) => match n.as_f64() {
            Some(x) if x.abs() <= (1u64 << 32) as f64 => 0.0,
            _ => -0.5,
        },
        Json::Array(a) => a.iter().map(|v| plausibility(v, false)).sum(),
        // a tagged value's "type" is structure, not evidence
        Json::Object(m) => m
            .iter()
            .filter(|(k, _)| *k != "type")
            .map(|(k, v)| plausibility(v, k == "key" || k == "string"))
            .sum(),
        _ => 0.0,
    }
}

fn string_score(s: &str, key: bool) -> f64 {
    if s.is_empty() {
        return -0.5;
    }
    if s.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        return -4.0;
    }
    let attr = pmix_types::attrs::attribute_name(s) != s;
    match (attr, key) {
        (true, _) => 5.0,
        (false, true) if s.starts_with("pmix.") => 3.0,
        _ => 1.0 + (s.len().min(16) as f64) / 16.0,
    }
}

/// Types that messages carry often: a small prior in their favour, so that
/// of two types with the same encoding (STRING, PROC_NSPACE) the usual one
/// ranks first.
fn common(t: DataType) -> bool {
    use DataType as T;
    matches!(
        t,
        T::String
            | T::Info
            | T::Proc
            | T::Value
            | T::Status
            | T::Int
            | T::Int32
            | T::Uint32
            | T::Uint64
            | T::Size
            | T::ByteObject
            | T::ProcRank
            | T::Pdata
            | T::App
            | T::DataArray
            | T::Query
            | T::Envar
    )
}

/// The score of one unit: a cost per unit, the evidence its values give.
/// `raw` is the unit's bytes.
fn unit_score(t: DataType, values: &[Value], raw: &[u8]) -> (f64, Json) {
    let used = raw.len();
    let j = Json::Array(values.iter().map(Value::to_bare_json).collect());
    let mut s = -2.0;
    s += match values.len() {
        0 => -3.0,
        1..=64 => 0.0,
        _ => -2.0,
    };
    // BOOLs as libpmix packs them (one byte each, 0 or 1, after the
    // count): 2 of 256 byte values, specific evidence where any byte
    // would decode; without it a bool after a byte object lost to a
    // flex-coded STATUS of the same byte (issue 26)
    let canonical_bools = t == DataType::Bool
        && !values.is_empty()
        && raw.len() >= values.len()
        && raw[raw.len() - values.len()..].iter().all(|b| *b <= 1);
    if canonical_bools {
        s += 0.75;
    } else if weak(t) {
        s -= 1.0;
    }
    if common(t) {
        s += 0.5;
    }
    if t == DataType::Status {
        for v in values {
            if let Value::Status(c) = v {
                s += if pmix_types::status::status_name(*c).is_some() {
                    1.5
                } else {
                    -3.0
                };
            }
        }
    } else {
        s += plausibility(&j, false);
    }
    // more bytes explained by one well-formed unit is better evidence
    s += (used as f64).ln_1p() * 0.1;
    (s, j)
}

/// Layouts of `bytes` in `format`, best first, at most `max` of them.
pub fn infer_format(format: &Format, bytes: &[u8], max: usize) -> Vec<Candidate> {
    if bytes.is_empty() || bytes.len() > MAX_INPUT {
        return Vec::new();
    }
    let types: Vec<DataType> = DataType::ALL
        .iter()
        .copied()
        .filter(|t| format.dialect.registers(*t))
        .collect();
    // best[p]: up to KEEP partial layouts ending at offset p, each with
    // the hash of its reading (every unit's offset, count and values):
    // layouts that read the same values from the same bytes through
    // other types are one reading, kept once with the others' types as
    // aliases, so that they do not fill the KEEP places of a different
    // reading (a byte object and a bool lost its place to BYTE_OBJECT,
    // COMPRESSED_STRING, COMPRESSED_BYTE_OBJECT and DATA_BUFFER, each
    // followed by the same STATUS)
    type Partial = (f64, Vec<Unit>, u64);
    let mut best: Vec<Vec<Partial>> = vec![Vec::new(); bytes.len() + 1];
    best[0].push((0.0, Vec::new(), 0));
    for p in 0..bytes.len() {
        if best[p].is_empty() {
            continue;
        }
        let here = std::mem::take(&mut best[p]);
        for &t in &types {
            let Ok((values, used)) = pmix_codec::decode_unit(format, t, &bytes[p..]) else {
                continue;
            };
            if used == 0 {
                continue;
            }
            let (s, j) = unit_score(t, &values, &bytes[p..p + used]);
            let unit_hash = {
                use std::hash::{Hash, Hasher};
                let mut h = std::collections::hash_map::DefaultHasher::new();
                (p, values.len(), j.to_string()).hash(&mut h);
                h.finish()
            };
            let unit = Unit {
                ty: t.name().to_string(),
                count: values.len(),
                offset: p,
                values: j,
                aliases: Vec::new(),
            };
            let slot = &mut best[p + used];
            for (ps, pu, ph) in &here {
                let score = ps + s;
                let sig = ph.rotate_left(17) ^ unit_hash;
                if let Some(e) = slot.iter_mut().find(|e| e.2 == sig) {
                    // the same reading: the better-scoring types lead
                    let mut units = pu.clone();
                    units.push(unit.clone());
                    if score > e.0 {
                        std::mem::swap(&mut e.1, &mut units);
                        e.0 = score;
                    }
                    for (kept, other) in e.1.iter_mut().zip(units) {
                        for ty in std::iter::once(other.ty).chain(other.aliases) {
                            if ty != kept.ty && !kept.aliases.contains(&ty) {
                                kept.aliases.push(ty);
                            }
                        }
                    }
                    slot.sort_by(|a, b| b.0.total_cmp(&a.0));
                    continue;
                }
                if slot.len() >= KEEP && slot.last().is_some_and(|(w, _, _)| *w >= score) {
                    continue;
                }
                let mut units = pu.clone();
                units.push(unit.clone());
                slot.push((score, units, sig));
                slot.sort_by(|a, b| b.0.total_cmp(&a.0));
                slot.truncate(KEEP);
            }
        }
        best[p] = here;
    }
    let mut out: Vec<Candidate> = best
        .pop()
        .unwrap_or_default()
        .into_iter()
        .map(|(score, units, _)| Candidate {
            dialect: format.dialect.name().to_string(),
            units,
            score: (score * 100.0).round() / 100.0,
        })
        .collect();
    out.truncate(max);
    out
}

/// Layouts in one dialect, or in every dialect when `dialect` is `None`,
/// non-described; best first, at most `max`.
pub fn infer(dialect: Option<Dialect>, bytes: &[u8], max: usize) -> Vec<Candidate> {
    let dialects: Vec<Dialect> = match dialect {
        Some(d) => vec![d],
        None => Dialect::ALL.to_vec(),
    };
    let mut all: Vec<Candidate> = dialects
        .iter()
        .flat_map(|d| infer_format(&Format::new(*d, BufferType::NonDesc), bytes, max))
        .collect();
    all.sort_by(|a, b| b.score.total_cmp(&a.score));
    all.truncate(max);
    all
}

/// One line per candidate: `score  dialect  TYPE×count, ...`.
pub fn render_text(c: &[Candidate]) -> String {
    let mut s = String::new();
    for x in c {
        let units: Vec<String> = x
            .units
            .iter()
            .map(|u| {
                let mut t = format!("{}x{}@{}", u.ty, u.count, u.offset);
                match u.aliases.len() {
                    0 => {}
                    1..=3 => t += &format!(" (or {})", u.aliases.join(", ")),
                    n => t += &format!(" (or {}, +{} more)", u.aliases[..3].join(", "), n - 3),
                }
                t
            })
            .collect();
        s.push_str(&format!(
            "{:>8.2}  {:<4} {}\n",
            x.score,
            x.dialect,
            units.join(", ")
        ));
    }
    s
}

/// For each message of an inspected conversation that did not decode, the
/// best layouts of its payload in the conversation's dialect, as text
/// (what `pmixw inspect` appends).
pub fn explain(conv: &crate::inspect::Conversation, client: &[u8], server: &[u8]) -> String {
    use crate::inspect::Side;
    use pmix_codec::frame::HEADER_LEN;
    let dialect = conv
        .format
        .split_whitespace()
        .next()
        .and_then(Dialect::parse);
    let mut s = String::new();
    for e in conv.entries.iter().filter(|e| e.error.is_some()) {
        let Some(h) = e.header else { continue };
        let (bytes, side) = match e.side {
            Side::Client => (client, "C->S"),
            Side::Server => (server, "S->C"),
        };
        let start = e.offset + HEADER_LEN;
        let Some(payload) = bytes.get(start..start + h.nbytes as usize) else {
            continue;
        };
        let c = infer(dialect, payload, 3);
        s.push_str(&format!(
            "\n{side} @{}: {} bytes that do not decode; layouts that consume them:\n",
            e.offset,
            payload.len()
        ));
        if c.is_empty() {
            s.push_str("  (none found)\n");
        }
        for line in render_text(&c).lines() {
            s.push_str(&format!("  {line}\n"));
        }
    }
    s
}
