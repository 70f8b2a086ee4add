//! Property tests: arbitrary valid values of every type round-trip through
//! every format whose dialect registers the type (both buffer types, and
//! fixed-width integers in v4/v41), several values per unit and several
//! units per buffer; and through the DataBuffer API (partial unpacks,
//! rewind, copy_payload, unload/load).
//!
//! Cases per (format, type) pair: `PMIX_PROPTEST_CASES` (default 24).

mod common;

use bytes::Bytes;
use common::{formats, label, seeded_runner, unit_types, units, value_of};
use pmix_codec::{decode, decode_unit, encode, DataBuffer, Dialect, Format};
use pmix_types::{DataType, Value};
use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestError, TestRunner};

fn cases() -> u32 {
    std::env::var("PMIX_PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(24)
}

/// Run `check` over `cases()` generated unit lists for every (format,
/// type) pair; collect every failure (shrunk) and report them together.
fn for_every_pair(
    seed_offset: u8,
    check: impl Fn(&Format, DataType, &[Vec<Value>]) -> Result<(), TestCaseError>,
) {
    let mut failures = Vec::new();
    let mut pairs = 0;
    for fmt in formats() {
        for ty in unit_types(&fmt) {
            pairs += 1;
            let mut runner = seeded_runner(ty, &fmt, seed_offset, cases());
            let r = runner.run(&units(ty, fmt.dialect), |u| check(&fmt, ty, &u));
            match r {
                Ok(()) => {}
                Err(TestError::Fail(why, input)) => failures.push(format!(
                    "{ty} in {}: {why}\n  input: {input:?}",
                    label(&fmt)
                )),
                Err(e) => failures.push(format!("{ty} in {}: {e}", label(&fmt))),
            }
        }
    }
    assert!(pairs > 900, "only {pairs} (format, type) pairs");
    assert!(
        failures.is_empty(),
        "{} of {pairs} pairs fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_type_round_trips_in_every_format() {
    for_every_pair(1, |fmt, ty, units| {
        let mut buf = DataBuffer::new(*fmt);
        let mut all = Vec::new();
        let mut expect = Vec::new();
        for u in units {
            buf.pack(ty, u)
                .map_err(|e| TestCaseError::fail(format!("pack: {e}")))?;
            expect.extend(encode(fmt, ty, u).map_err(|e| TestCaseError::fail(e.to_string()))?);
            all.extend(u.iter().cloned());
        }
        let bytes = buf.as_bytes().to_vec();
        prop_assert_eq!(&bytes, &expect, "DataBuffer::pack and encode differ");
        // decode gives the same values
        let back = decode(fmt, ty, &bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&back, &all);
        // unit by unit: the same values, the same unit boundaries, and
        // encode(decode(bytes)) == bytes
        let mut rest = &bytes[..];
        let mut again = Vec::new();
        for u in units {
            let (got, used) =
                decode_unit(fmt, ty, rest).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(&got, u);
            again.extend(encode(fmt, ty, &got).map_err(|e| TestCaseError::fail(e.to_string()))?);
            rest = &rest[used..];
        }
        prop_assert!(rest.is_empty());
        prop_assert_eq!(&again, &bytes, "encode(decode(bytes)) != bytes");
        // the JSON form is lossless too
        for v in &all {
            let j = v.to_bare_json();
            let back =
                Value::from_bare_json(ty, j).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(&back, v);
        }
        Ok(())
    });
}

/// Unpack `buf` with the given maxima (cycled) until it is exhausted.
fn drain(buf: &mut DataBuffer, ty: DataType, maxima: &[usize]) -> Result<Vec<Value>, String> {
    let mut got = Vec::new();
    let mut left = 0;
    for &max in maxima.iter().cycle() {
        if buf.unread().is_empty() && left == 0 {
            return Ok(got);
        }
        let u = buf.unpack(ty, max).map_err(|e| e.to_string())?;
        if u.values.len() > max {
            return Err(format!("{} values for max {max}", u.values.len()));
        }
        left = u.left_in_unit;
        got.extend(u.values);
    }
    unreachable!("cycle never ends")
}

#[test]
fn data_buffer_partial_unpack_rewind_copy_unload_load() {
    for_every_pair(2, |fmt, ty, units| {
        let mut buf = DataBuffer::new(*fmt);
        for u in units {
            buf.pack(ty, u)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
        }
        let all: Vec<Value> = units.iter().flatten().cloned().collect();
        let bytes = buf.as_bytes().to_vec();
        // maxima smaller than the units: partial unpacks continue where they stopped
        let biggest = units.iter().map(Vec::len).max().unwrap_or(0);
        for maxima in [&[1usize][..], &[2, 1], &[usize::MAX]] {
            buf.rewind();
            let got = drain(&mut buf, ty, maxima).map_err(TestCaseError::fail)?;
            prop_assert_eq!(&got, &all, "maxima {:?}", maxima);
        }
        if biggest > 1 {
            // a partial unpack reports what is left, with status -19
            buf.rewind();
            let first = units.iter().position(|u| !u.is_empty()).unwrap();
            for u in &units[..first] {
                prop_assert!(buf.unpack(ty, 1).unwrap().values.is_empty() && u.is_empty());
            }
            let u = buf.unpack(ty, 1).unwrap();
            prop_assert_eq!(u.left_in_unit, units[first].len() - 1);
            prop_assert_eq!(u.status(), if units[first].len() > 1 { -19 } else { 0 });
            prop_assert_eq!(&u.values[..], &units[first][..1]);
        }
        // copy_payload copies the unread part, and does not advance the source
        buf.rewind();
        let first_len = encode(fmt, ty, &units[0]).unwrap().len();
        buf.unpack(ty, usize::MAX).unwrap();
        prop_assert_eq!(buf.position(), first_len);
        let mut copy = DataBuffer::new(*fmt);
        copy.copy_payload(&buf);
        prop_assert_eq!(copy.as_bytes(), &bytes[first_len..]);
        prop_assert_eq!(buf.position(), first_len);
        // unload takes the unread bytes and empties the buffer; load makes a
        // buffer that decodes the remaining units
        let taken: Bytes = buf.unload();
        prop_assert_eq!(&taken[..], &bytes[first_len..]);
        prop_assert!(buf.as_bytes().is_empty() && buf.unread().is_empty());
        let mut other = DataBuffer::new(*fmt);
        other.load(taken);
        let rest: Vec<Value> = units[1..].iter().flatten().cloned().collect();
        let got = drain(&mut other, ty, &[1, 3]).map_err(TestCaseError::fail)?;
        prop_assert_eq!(&got, &rest);
        // the emptied buffer can be packed into again
        buf.pack(ty, &units[0]).unwrap();
        prop_assert_eq!(buf.as_bytes(), &bytes[..first_len]);
        Ok(())
    });
}

#[test]
fn strategies_cover_every_type_with_values_of_that_type() {
    use proptest::strategy::ValueTree;
    let mut runner = TestRunner::deterministic();
    for t in DataType::ALL {
        // the newest dialect that registers the type (UNDEF: none does)
        let d = Dialect::ALL
            .iter()
            .rev()
            .copied()
            .find(|d| d.registers(*t))
            .unwrap_or(Dialect::V41);
        for _ in 0..20 {
            let v = value_of(*t, d, 2).new_tree(&mut runner).unwrap().current();
            assert_eq!(v.data_type(), *t, "{v:?}");
        }
    }
    assert_eq!(DataType::ALL.len(), 76);
}

#[test]
fn v12_sends_nothing_for_info_directives_and_proc_state() {
    // spec-notes/dialects.md: v12 writes no bytes for these items, which
    // therefore decode as zeros
    for bt in [
        pmix_codec::BufferType::NonDesc,
        pmix_codec::BufferType::FullyDesc,
    ] {
        let fmt = Format::new(Dialect::V12, bt);
        for (v, zero) in [
            (Value::InfoDirectives(0x1234), Value::InfoDirectives(0)),
            (Value::ProcState(7), Value::ProcState(0)),
        ] {
            let ty = v.data_type();
            let one = encode(&fmt, ty, std::slice::from_ref(&v)).unwrap();
            let two = encode(&fmt, ty, &[v.clone(), v.clone()]).unwrap();
            assert_eq!(one.len(), two.len(), "no bytes per item");
            assert_eq!(decode(&fmt, ty, &two).unwrap(), vec![zero.clone(), zero]);
        }
    }
}

#[test]
fn v12_refuses_data_array_proc_info_and_query_units_both_ways() {
    use pmix_codec::ErrorKind;
    let fmt = Format::new(Dialect::V12, pmix_codec::BufferType::NonDesc);
    for ty in [DataType::DataArray, DataType::ProcInfo, DataType::Query] {
        assert!(Dialect::V12.registers(ty), "{ty}");
        let e = encode(&fmt, ty, &[]).unwrap_err();
        assert!(matches!(e.kind, ErrorKind::NotSupported(_)), "{ty}: {e}");
        assert_eq!(e.status(), -47);
        // a unit of 0 and of 1 item (fixed-width count)
        for unit in [&[0u8, 0, 0, 0][..], &[0, 0, 0, 1, 0, 0, 0, 0]] {
            let e = decode(&fmt, ty, unit).unwrap_err();
            assert!(matches!(e.kind, ErrorKind::NotSupported(_)), "{ty}: {e}");
        }
    }
}
