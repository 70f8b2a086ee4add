//! pmix_types::enums against the installed libpmix 4.2.2: every named
//! constant has the value of its C macro in pmix_common.h (printed by
//! interop/c/enum_values.c), `Display` equals the library's
//! `PMIx_*_string` for every 8-bit value (printed by interop/c/strings.c),
//! and every value survives the codec in every dialect.

use pmix_codec::{decode, encode, BufferType, Dialect, Format};
use pmix_types::enums::*;
use pmix_types::{DataType, Rank, Value};
use std::collections::BTreeMap;
use std::process::Command;

/// Run one of the harness's C programs; `None` (a skip) outside CI when
/// libpmix or a C compiler is missing.
fn run_c(name: &str) -> Option<String> {
    let dir = pmix_test_kit::interop::default_out_dir();
    let exe = match pmix_test_kit::interop::build_c(name, &dir) {
        Ok(exe) => exe,
        Err(e) if std::env::var("CI").as_deref() != Ok("true") => {
            eprintln!("skipped: cannot build interop/c/{name}.c: {e}");
            return None;
        }
        Err(e) => panic!("{e}"),
    };
    let out = Command::new(exe).output().expect("run the C program");
    assert!(out.status.success(), "{name} failed");
    Some(String::from_utf8(out.stdout).unwrap())
}

/// (type, C macro) → value, from the C program.
fn header_values() -> Option<BTreeMap<(String, String), u64>> {
    let text = run_c("enum_values")?;
    Some(
        text.lines()
            .map(|l| {
                let f: Vec<&str> = l.split('\t').collect();
                ((f[0].into(), f[1].into()), f[2].parse().unwrap())
            })
            .collect(),
    )
}

/// (type name, C macro, value) of every constant we name.
fn ours() -> Vec<(&'static str, &'static str, u64)> {
    let mut v = Vec::new();
    macro_rules! add {
        ($($t:ident),*) => {$(
            for x in $t::KNOWN {
                v.push((stringify!($t), x.c_name().unwrap(), u64::from(x.wire())));
            }
        )*};
    }
    add!(
        Scope,
        DataRange,
        Persistence,
        ProcState,
        JobState,
        LinkState,
        AllocDirective,
        IofChannel,
        DeviceType
    );
    for r in Rank::specials() {
        v.push(("Rank", r.c_name().unwrap(), u64::from(r.wire())));
    }
    v.push((
        "Rank",
        "PMIX_RANK_VALID",
        u64::from(Rank::VALID_BOUNDARY.wire()),
    ));
    v
}

#[test]
fn every_constant_has_the_value_of_its_c_macro() {
    let Some(header) = header_values() else {
        return;
    };
    // 7.0's delete scopes are newer than the installed 4.2.2 header: their
    // values come from the 7.0 vectors (tests/core_pmix7.rs), and the
    // header must not know them
    let ours: Vec<_> = ours()
        .into_iter()
        .filter(|(t, c, _)| {
            let newer = *t == "Scope" && c.starts_with("PMIX_DEL_");
            if newer {
                assert!(!header.contains_key(&(t.to_string(), c.to_string())), "{c}");
            }
            !newer
        })
        .collect();
    for (t, c, v) in &ours {
        let want = header.get(&(t.to_string(), c.to_string()));
        assert_eq!(want, Some(v), "{t}::{c}");
    }
    // and every macro the C program prints is one of ours
    assert_eq!(header.len(), ours.len());
}

#[test]
fn display_is_the_libpmix_string_for_every_value() {
    let Some(text) = run_c("strings") else {
        return;
    };
    let mut checked = 0;
    for line in text.lines() {
        let f: Vec<&str> = line.splitn(3, '\t').collect();
        let (helper, input, want) = (f[0], f[1], f[2]);
        let Ok(n) = input.parse::<u64>() else {
            continue;
        };
        let b = n as u8;
        let ours = match helper {
            "scope" => Scope::from(b).to_string(),
            "data_range" => DataRange::from(b).to_string(),
            "persistence" => Persistence::from(b).to_string(),
            "proc_state" => ProcState::from(b).to_string(),
            "job_state" => JobState::from(b).to_string(),
            "link_state" => LinkState::from(b).to_string(),
            "alloc_directive" => AllocDirective::from(b).to_string(),
            "iof_channel" => IofChannel::from(n as u16).to_string(),
            "device_type" => DeviceType::from(n).to_string(),
            _ => continue,
        };
        assert_eq!(ours, want, "{helper}({n})");
        checked += 1;
    }
    // 256 values of each of the eight enum helpers, 12 device type patterns
    assert_eq!(checked, 8 * 256 + 12, "libpmix printed other values");
}

/// Every 8-bit value of each type, and every special rank, encoded as its
/// own data type and decoded back, in every dialect and buffer type.
#[test]
fn every_value_round_trips_through_the_codec() {
    let mut values: Vec<(DataType, Value)> = Vec::new();
    for n in 0..=u8::MAX {
        values.push((DataType::Scope, Scope::from(n).into()));
        values.push((DataType::DataRange, DataRange::from(n).into()));
        values.push((DataType::Persist, Persistence::from(n).into()));
        values.push((DataType::ProcState, ProcState::from(n).into()));
        values.push((DataType::JobState, JobState::from(n).into()));
        values.push((DataType::LinkState, LinkState::from(n).into()));
        values.push((DataType::AllocDirective, AllocDirective::from(n).into()));
        values.push((DataType::IofChannel, IofChannel::from(u16::from(n)).into()));
    }
    for v in [0x100, 0x7fff, 0x8000, 0xffff] {
        values.push((DataType::IofChannel, IofChannel::from(v).into()));
    }
    for shift in 0..64 {
        values.push((DataType::DevType, DeviceType::from(1u64 << shift).into()));
    }
    values.push((DataType::DevType, DeviceType::from(u64::MAX).into()));
    for r in Rank::specials().chain([Rank::new(0), Rank::new(12345)]) {
        values.push((DataType::ProcRank, r.into()));
    }
    let mut checked = 0;
    for &d in Dialect::ALL {
        for bt in [BufferType::NonDesc, BufferType::FullyDesc] {
            let fmt = Format::new(d, bt);
            for (ty, v) in &values {
                if !d.registers(*ty) {
                    continue;
                }
                let bytes = encode(&fmt, *ty, std::slice::from_ref(v))
                    .unwrap_or_else(|e| panic!("{d:?} {ty:?} {v:?}: {e}"));
                let back = decode(&fmt, *ty, &bytes).unwrap();
                if d == Dialect::V12 && *ty == DataType::ProcState {
                    // v12 packs nothing for PROC_STATE (spec-notes/dialects.md)
                    assert_eq!(back, [Value::ProcState(0)]);
                    continue;
                }
                assert_eq!(back, std::slice::from_ref(v), "{d:?} {bt:?} {ty:?}");
                checked += 1;
            }
        }
    }
    assert!(checked > 9 * 2 * 4 * 256, "only {checked} round trips");
}
