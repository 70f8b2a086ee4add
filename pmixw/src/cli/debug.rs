//! The debugging commands of issue 16 (`inspect --pcap`, `decode --infer`,
//! `types --keys`, `doctor`, the `--verify` garbage report and the
//! wrong-typed key warnings), kept apart from the hand-written parser so
//! that parser stays a list of flags.

use super::{emit, input_bytes, Opts};
use std::process::ExitCode;

pub(super) fn pcap_cmd(o: &Opts, path: &str) -> Result<ExitCode, String> {
    let file = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    let r = pmixw::pcap::read(&file, pmix_codec::frame::DEFAULT_MAX_MESSAGE)
        .map_err(|e| format!("{path}: {e}"))?;
    for n in &r.notes {
        eprintln!("pmixw inspect: {path}: {n}");
    }
    if r.connections.is_empty() {
        eprintln!(
            "pmixw inspect: {path}: no PMIx connection among {} packets ({} other TCP connections)",
            r.packets, r.other_tcp
        );
        return Ok(ExitCode::FAILURE);
    }
    if o.verify {
        let mut failed = false;
        for c in &r.connections {
            match pmixw::verify::verify(&c.client_bytes, &c.server_bytes) {
                Ok(v) => emit(&format!(
                    "{} -> {}: verified {} messages\n{}",
                    c.client,
                    c.server,
                    v.messages,
                    garbage_text(&v)
                ))?,
                Err(e) => {
                    failed = true;
                    eprintln!("pmixw inspect --verify: {} -> {}: {e}", c.client, c.server);
                }
            }
            for n in &c.notes {
                failed = true;
                eprintln!("pmixw inspect --verify: {} -> {}: {n}", c.client, c.server);
            }
        }
        return Ok(if failed || !r.notes.is_empty() {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        });
    }
    for c in &r.connections {
        warn_entries(&c.messages);
    }
    if o.json {
        emit(&(serde_json::to_string_pretty(&r.connections).expect("JSON") + "\n"))?;
    } else {
        emit(&pmixw::pcap::render_text(&r))?;
        for c in &r.connections {
            emit(&pmixw::infer::explain(
                &c.conversation(),
                &c.client_bytes,
                &c.server_bytes,
            ))?;
        }
    }
    let bad = r
        .connections
        .iter()
        .any(|c| !c.notes.is_empty() || c.messages.iter().any(|e| e.error.is_some()));
    Ok(if bad || !r.notes.is_empty() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The garbage bytes libpmix's legacy dialects sent, one line each.
/// `inspect --dstore DIR`: a ds21 store read back (spec-notes/dstore.md).
/// Values are unpacked as a 4.2.x client in NON_DESC mode packs them
/// (v41), shown as hex where they do not unpack.
pub(super) fn dstore_cmd(o: &Opts, dir: &str) -> Result<ExitCode, String> {
    use pmix_wire::server::dstore::layout::{get_u64, WILDCARD};
    use pmix_wire::server::net::dstore::snapshot::Snapshot;
    if o.json {
        return Err("inspect --dstore: --json is not offered".into());
    }
    let mut snap = Snapshot::load(std::path::Path::new(dir)).map_err(|e| format!("{dir}: {e}"))?;
    let z = snap.sizes;
    let mut out = format!(
        "store {dir}: segments initial {} B, meta {} B, data {} B; {} namespace(s)\n",
        z.initial,
        z.meta,
        z.data,
        snap.spaces.len()
    );
    let mut bad = false;
    for sn in &mut snap.spaces {
        let e = &sn.entry;
        out += &format!(
            "namespace {}: {} meta, {} data segment(s)\n",
            sn.name,
            get_u64(e, 272).unwrap_or(0),
            get_u64(e, 280).unwrap_or(0)
        );
        match &sn.lock {
            Some(l) if l.len() >= 32 => {
                let slots = u32::from_ne_bytes(l[8..12].try_into().expect("4 bytes"));
                let claimed = (0..slots as usize)
                    .filter_map(|i| l.get(32 + 4 * i..36 + 4 * i))
                    .filter(|f| *f != [0u8; 4])
                    .count();
                out += &format!(
                    "  lock: {} B, {slots} reader slot(s), {claimed} claimed, stride {}, mutex 0 at {}\n",
                    get_u64(l, 0).unwrap_or(0),
                    get_u64(l, 16).unwrap_or(0),
                    get_u64(l, 24).unwrap_or(0)
                );
            }
            _ => out += "  lock: none\n",
        }
        for rank in sn.ns.ranks() {
            let name = if rank == WILDCARD {
                "WILDCARD".to_string()
            } else {
                rank.to_string()
            };
            let (recs, _) = match sn.ns.walk(rank) {
                Ok(r) => r,
                Err(e) => {
                    bad = true;
                    out += &format!("  rank {name}: {e}\n");
                    continue;
                }
            };
            let valid = recs.iter().filter(|r| !r.invalid).count();
            out += &format!("  rank {name}: {valid} key(s)\n");
            for r in recs {
                let key = String::from_utf8_lossy(&r.key);
                let v = match pmix_codec::decode(
                    &pmix_codec::Format::V41,
                    pmix_types::DataType::Value,
                    &r.value,
                ) {
                    Ok(mut v) if v.len() == 1 => match v.pop() {
                        Some(pmix_types::Value::Value(inner)) => format!("{inner:?}"),
                        other => format!("{other:?}"),
                    },
                    _ => format!("(not a v41 value) {}", pmix_types::hex::encode(&r.value)),
                };
                let gone = if r.invalid { " (superseded)" } else { "" };
                out += &format!("    {key} = {v}{gone}\n");
            }
        }
    }
    emit(&out)?;
    Ok(if bad {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

pub(super) fn garbage_text(v: &pmixw::verify::Verified) -> String {
    v.garbage
        .iter()
        .map(|(side, at, g)| {
            format!(
                "  garbage: {side} offset {at}: {} (high bytes of a 1-byte enum packed as a 4-byte int; only the low byte is compared)\n",
                pmix_types::hex::encode(g)
            )
        })
        .collect()
}

/// Warn (stderr) about reserved keys whose values have the wrong type.
pub(super) fn warn_wrong_types(j: &serde_json::Value, at: &str) {
    for w in pmixw::keycheck::wrong_types(j) {
        eprintln!("pmixw: warning: {at}{w}");
    }
}

pub(super) fn warn_entries(entries: &[pmixw::inspect::Entry]) {
    for e in entries {
        let side = match e.side {
            pmixw::inspect::Side::Client => "C->S",
            pmixw::inspect::Side::Server => "S->C",
        };
        warn_wrong_types(&e.message, &format!("{side} @{}: ", e.offset));
    }
}

pub(super) fn keys_cmd(o: &Opts) -> Result<ExitCode, String> {
    use pmix_types::keys::RESERVED;
    let text = if o.json {
        let rows: Vec<serde_json::Value> = RESERVED
            .iter()
            .map(|k| {
                serde_json::json!({"name": k.name, "string": k.string, "type": k.data_type.name(),
                    "c_type": k.c_type, "level": k.level.name(), "provisional": k.provisional})
            })
            .collect();
        serde_json::to_string_pretty(&rows).expect("JSON") + "\n"
    } else {
        let mut s = format!(
            "{:<28} {:<18} {:<18} {}\n",
            "name", "string", "type", "level"
        );
        for k in RESERVED {
            s.push_str(&format!(
                "{:<28} {:<18} {:<18} {}{}\n",
                k.name,
                k.string,
                k.data_type.name(),
                k.level.name(),
                if k.provisional { " (provisional)" } else { "" }
            ));
        }
        s
    };
    emit(&text)?;
    Ok(ExitCode::SUCCESS)
}

pub(super) fn infer_cmd(o: &Opts) -> Result<ExitCode, String> {
    let bytes = input_bytes(o)?;
    if bytes.len() > pmixw::infer::MAX_INPUT {
        return Err(format!(
            "--infer reads at most {} bytes (one message), not {}",
            pmixw::infer::MAX_INPUT,
            bytes.len()
        ));
    }
    let c = pmixw::infer::infer(o.dialects.first().copied(), &bytes, 10);
    if o.json {
        emit(&(serde_json::to_string_pretty(&c).expect("JSON") + "\n"))?;
    } else {
        emit(&pmixw::infer::render_text(&c))?;
    }
    Ok(if c.is_empty() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

pub(super) fn doctor_cmd(o: &Opts) -> Result<ExitCode, String> {
    let env: Vec<(String, String)> = std::env::vars().collect();
    let r = pmixw::doctor::diagnose(&env, &pmix_wire::tool::tmpdirs());
    if o.json {
        emit(&(serde_json::to_string_pretty(&r).expect("JSON") + "\n"))?;
    } else {
        emit(&pmixw::doctor::render_text(&r))?;
    }
    Ok(
        if r.reachable && r.conflicts.is_empty() && r.wrong_types.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        },
    )
}
