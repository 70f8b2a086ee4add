//! The interop matrix against the installed libpmix 4.2.2: every case the
//! C generator packs, in every dialect libpmix 4.2.2 can be forced into
//! that we implement, both buffer types, in both directions. A missing
//! libpmix is a failure with instructions, never a skip.

use pmix_codec::{BufferType, Dialect, Format};
use pmix_test_kit::interop::{run_matrix, Cell};

fn formats(d: Dialect, fixed_ints: bool) -> Vec<Format> {
    [BufferType::NonDesc, BufferType::FullyDesc]
        .into_iter()
        .map(|b| Format {
            dialect: d,
            buffer_type: b,
            fixed_ints,
            release: pmix_codec::Release::default(),
        })
        .collect()
}

fn check(fmts: Vec<Format>) {
    let m = run_matrix(&fmts).unwrap_or_else(|e| panic!("interop harness unavailable: {e}"));
    let problems = m.problems();
    assert!(
        problems.is_empty(),
        "{}\n{}",
        m.table(),
        problems.join("\n")
    );
    // the matrix really ran: hundreds of cases, nearly all passing outright
    let passes = m
        .cases
        .iter()
        .flat_map(|c| &c.cells)
        .filter(|(_, c)| *c == Cell::Pass)
        .count();
    let min_passes = 600 * fmts.len();
    assert!(
        m.cases.len() >= 300 * fmts.len() && passes >= min_passes,
        "{}",
        m.table()
    );
}

#[test]
fn v41_both_buffer_types() {
    check(formats(Dialect::V41, false));
}

#[test]
fn v41_psquash_native() {
    check(formats(Dialect::V41, true));
}

#[test]
fn v4_both_buffer_types() {
    check(formats(Dialect::V4, false));
}

#[test]
fn v3_both_buffer_types() {
    check(formats(Dialect::V3, false));
}

#[test]
fn v21_both_buffer_types() {
    check(formats(Dialect::V21, false));
}

#[test]
fn v20_both_buffer_types() {
    check(formats(Dialect::V20, false));
}

#[test]
fn v12_both_buffer_types() {
    check(formats(Dialect::V12, false));
}

fn corpus_dir() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus/v4.2.2")
}

/// The formats saved in corpus/v4.2.2, by file label.
fn corpus_formats() -> Vec<Format> {
    let mut v = Vec::new();
    for d in [
        Dialect::V41,
        Dialect::V4,
        Dialect::V3,
        Dialect::V21,
        Dialect::V20,
        Dialect::V12,
    ] {
        v.extend(formats(d, false));
    }
    v.extend(formats(Dialect::V41, true));
    v
}

fn corpus_cases(fmt: &Format) -> Vec<pmix_test_kit::interop::GenCase> {
    let label = pmix_test_kit::interop::format_label(fmt);
    let path = corpus_dir().join(format!("{label}.tsv"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    pmix_test_kit::interop::parse_gen(&text).unwrap()
}

/// The committed golden files are what the installed libpmix produces
/// now: regenerate them (`pmixw interop --save-vectors corpus/v4.2.2`,
/// every dialect) when gen.c changes.
#[test]
fn corpus_is_current() {
    let tools = pmix_test_kit::interop::Tools::build()
        .unwrap_or_else(|e| panic!("interop harness unavailable: {e}"));
    for fmt in corpus_formats() {
        let label = pmix_test_kit::interop::format_label(&fmt);
        let now = tools.gen(&fmt).unwrap();
        let saved = corpus_cases(&fmt);
        assert_eq!(now.len(), saved.len(), "{label}: case count");
        for (n, s) in now.iter().zip(&saved) {
            assert_eq!(n, s, "{label}: corpus/v4.2.2/{label}.tsv is stale");
        }
    }
}

/// What survives the wire: libpmix sends floats as `printf("%f")` text
/// (6 decimals, bfrops.md §4.3), never sends a PROC_INFO's exit_code, nor
/// a PROC_STATS's percent_cpu and peak_vsize (§4.15). The packed values
/// are brought to that form before they are compared with a decoding.
fn wire_view(ty: pmix_types::DataType, json: &serde_json::Value) -> serde_json::Value {
    fn norm(j: &mut serde_json::Value) {
        match j {
            serde_json::Value::Object(m) => {
                if m.contains_key("peak_vsize") {
                    m.insert("percent_cpu".into(), 0.into());
                    m.insert("peak_vsize".into(), 0.into());
                }
                if m.contains_key("executable_name") {
                    m.insert("exit_code".into(), 0.into());
                }
                m.values_mut().for_each(norm);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(norm),
            serde_json::Value::Number(n) if n.is_f64() => {
                let x = n.as_f64().unwrap_or_default();
                let r: f64 = format!("{x:.6}").parse().unwrap_or(x);
                if let Some(v) = serde_json::Number::from_f64(r) {
                    *n = v;
                }
            }
            _ => {}
        }
    }
    let mut j = json.clone();
    norm(&mut j);
    // through the value model, so that number forms (0 and 0.0) agree
    match j {
        serde_json::Value::Array(items) => serde_json::Value::Array(
            items
                .into_iter()
                .map(|v| {
                    pmix_types::Value::from_bare_json(ty, v.clone())
                        .map(|x| x.to_bare_json())
                        .unwrap_or(v)
                })
                .collect(),
        ),
        other => other,
    }
}

/// The golden files replayed through our codec, without libpmix: our
/// decoding of libpmix's bytes gives the values libpmix packed, and our
/// encoding of those values gives libpmix's bytes. Where libpmix refused
/// to pack, we refuse with its status. Cases listed as libpmix pack
/// defects (its bytes do not represent the values) are skipped by name.
#[test]
fn corpus_replays_decode_and_encode() {
    use pmix_types::{DataType, Value};
    let mut bad = Vec::new();
    let mut checked = 0;
    for fmt in corpus_formats() {
        let label = pmix_test_kit::interop::format_label(&fmt);
        for c in corpus_cases(&fmt) {
            let name = c.name();
            let ty = DataType::parse(&c.ty).unwrap_or_else(|| panic!("{label}/{name}: type"));
            let json: serde_json::Value = serde_json::from_str(&c.json).unwrap();
            let values: Vec<Value> = json
                .as_array()
                .unwrap()
                .iter()
                .map(|v| Value::from_bare_json(ty, v.clone()).unwrap())
                .collect();
            let listed = |check| pmix_test_kit::interop::known(&name, check, &fmt).is_some();
            if c.pack_rc != 0 {
                match pmix_codec::encode(&fmt, ty, &values) {
                    Err(e) if e.status() == c.pack_rc => {}
                    _ if listed("pack") => {}
                    other => bad.push(format!(
                        "{label}/{name}: libpmix refused ({}), we gave {other:?}",
                        c.pack_rc
                    )),
                }
                continue;
            }
            if listed("pack") {
                continue;
            }
            checked += 1;
            let bytes = pmix_types::hex::decode(&c.hex).unwrap();
            match pmix_codec::decode(&fmt, ty, &bytes) {
                Ok(got) => {
                    let got_json =
                        serde_json::Value::Array(got.iter().map(Value::to_bare_json).collect());
                    // BUFFER (libpmix's internal buffer) is opaque in C: no JSON to
                    // compare. v12 carries no info flags, app cwd, PROC_STATE or
                    // INFO_DIRECTIVES payload (bfrops.md §8.3): its decoding is
                    // checked against libpmix's own unpack in the matrix instead.
                    let lossless = ty != DataType::Buffer && fmt.dialect != Dialect::V12;
                    if lossless && wire_view(ty, &got_json) != wire_view(ty, &json) {
                        bad.push(format!(
                            "{label}/{name}: decoded {got_json}, libpmix packed {json}"
                        ));
                    }
                }
                Err(e) => bad.push(format!("{label}/{name}: decode: {e}")),
            }
            match pmix_codec::encode(&fmt, ty, &values) {
                Ok(b) if b == bytes => {}
                other => bad.push(format!(
                    "{label}/{name}: encode gave {other:?}, libpmix {}",
                    c.hex
                )),
            }
        }
    }
    assert!(checked >= 4500, "only {checked} cases checked");
    assert!(
        bad.is_empty(),
        "{} failures:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// gen covers every case of the shared manifests under the same name
/// (vectors/v5.0.11/v41), except those libpmix crashes on or that depend
/// on the host or on uninitialised memory (gen.c, spec-notes/interop.md).
#[test]
fn gen_covers_the_shared_manifest_cases() {
    let shared = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../corpus/releases/vectors/v5.0.11/v41/manifest.tsv");
    let text =
        std::fs::read_to_string(&shared).unwrap_or_else(|e| panic!("{}: {e}", shared.display()));
    let ours: std::collections::HashSet<String> =
        corpus_cases(&Format::new(Dialect::V41, BufferType::NonDesc))
            .iter()
            .map(|c| c.name())
            .collect();
    let left_out = ["VALUE/darray_null", "INFO/v_darray_null"];
    let mut missing = Vec::new();
    let mut n = 0;
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("type\t"))
    {
        let f: Vec<&str> = line.split('\t').collect();
        // code 70 is DEVICE in our type table
        let ty = if f[0] == "TYPE70_UNASSIGNED" {
            "DEVICE"
        } else {
            f[0]
        };
        let name = format!("{ty}/{}", f[2]);
        n += 1;
        if !ours.contains(&name) && !left_out.contains(&name.as_str()) {
            missing.push(name);
        }
    }
    assert!(n >= 300, "{n} shared cases");
    assert!(missing.is_empty(), "gen lacks shared cases: {missing:?}");
}
