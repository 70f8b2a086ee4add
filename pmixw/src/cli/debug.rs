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
