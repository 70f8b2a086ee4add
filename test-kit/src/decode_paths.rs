//! The logic of the `decode_paths` fuzz target (fuzz/fuzz_targets/
//! decode_paths.rs includes this file; codec/tests/core_decode_paths.rs runs it
//! on stable): the owned ([`decode`]), borrowed ([`decode_ref`]) and typed
//! ([`Reader::prims`], [`Reader::strs`], [`Reader::infos`]) decodings of the same bytes agree,
//! on success and on failure (same error, offset, type and field path);
//! so do [`DataBuffer::unpack_into`] appending to a vector the caller
//! keeps (whole units, and one item per call) and, for INFO,
//! [`DataBuffer::unpack_infos_into`].
//! Input layout: that of `unpack_any` (targets.rs).

use crate::targets::split;
use bytes::Bytes;
use pmix_codec::view::InfoRef;
use pmix_codec::{decode, decode_ref, decode_unit, DataBuffer, Error, Format, Prim, Reader};
use pmix_types::{DataType, Value};

/// Target `decode_paths`.
pub fn decode_paths(data: &[u8]) {
    if let Some((ty, fmt, payload)) = split(data) {
        check_paths(&fmt, ty, payload);
    }
}

fn same_error(what: &str, owned: &Error, other: &Error) {
    assert_eq!(
        (&owned.kind, owned.offset, owned.ty, &owned.path),
        (&other.kind, other.offset, other.ty, &other.path),
        "{what}: owned error {owned}, other {other}"
    );
}

/// Check that every decoding path agrees on `payload` read as `ty`.
pub fn check_paths(fmt: &Format, ty: DataType, payload: &[u8]) {
    let owned = decode(fmt, ty, payload);
    let borrowed = decode_ref(fmt, ty, payload);
    match (&owned, &borrowed) {
        (Ok(o), Ok(b)) => {
            assert_eq!(o.len(), b.len(), "{ty}: item counts differ");
            for (i, (o, b)) in o.iter().zip(b).enumerate() {
                assert_eq!(b.data_type(), ty, "{ty}[{i}] borrowed as {b:?}");
                let again = b
                    .to_value()
                    .unwrap_or_else(|e| panic!("{ty}[{i}]: a checked view fails: {e}"));
                assert_eq!(&again, o, "{ty}[{i}]: borrowed and owned differ");
            }
        }
        (Err(o), Err(b)) => same_error(&format!("{ty} borrowed"), o, b),
        (o, b) => panic!("{ty}: owned {o:?}, borrowed {b:?}"),
    }
    let units = owned.is_ok().then(|| owned_units(fmt, ty, payload));
    check_into(fmt, ty, payload, &units);
    macro_rules! typed {
        ($($t:ty),*) => {$(
            if ty == <$t as Prim>::TYPE {
                check_typed(fmt, ty, payload, &units, |r| r.prims::<$t>(), |x: &$t| x.to_value());
            }
        )*};
    }
    typed!(u64, i64, u32, i32, u16, i16, u8, i8, bool);
    if ty == DataType::String {
        check_typed(
            fmt,
            ty,
            payload,
            &units,
            |r| r.strs(),
            |s: &Option<&[u8]>| {
                Value::String(s.map(|b| pmix_types::PString::from_bytes(b).expect("checked")))
            },
        );
    }
    if ty == DataType::Info {
        check_typed(
            fmt,
            ty,
            payload,
            &units,
            |r| r.infos(),
            |i: &InfoRef| Value::Info(Box::new(i.to_info().expect("checked"))),
        );
    }
}

/// The owned decoding one unit at a time.
fn owned_units(fmt: &Format, ty: DataType, mut payload: &[u8]) -> Vec<Vec<Value>> {
    let mut units = Vec::new();
    while !payload.is_empty() {
        let (v, used) = decode_unit(fmt, ty, payload).expect("decode accepted it");
        units.push(v);
        payload = &payload[used..];
    }
    units
}

/// A typed reader unit by unit against the owned units (`None`: the owned
/// decoding failed somewhere, so the typed one must fail too, with the
/// same error as the owned decoding of that unit).
fn check_typed<'a, T>(
    fmt: &Format,
    ty: DataType,
    payload: &'a [u8],
    units: &Option<Vec<Vec<Value>>>,
    read: impl Fn(&mut Reader<'a>) -> pmix_codec::Result<Vec<T>>,
    owned: impl Fn(&T) -> Value,
) {
    let mut r = Reader::new(*fmt, payload);
    let mut k = 0;
    while !r.is_empty() {
        let at = r.position();
        match read(&mut r) {
            Ok(items) => {
                let got: Vec<Value> = items.iter().map(&owned).collect();
                if let Some(units) = units {
                    assert_eq!(
                        Some(&got),
                        units.get(k),
                        "{ty} unit {k}: typed and owned differ"
                    );
                } else {
                    let (want, _) =
                        decode_unit(fmt, ty, &payload[at..]).expect("typed accepted it");
                    assert_eq!(got, want, "{ty} unit {k}: typed and owned differ");
                }
            }
            Err(e) => {
                assert!(
                    units.is_none(),
                    "{ty} unit {k}: typed fails ({e}), owned does not"
                );
                let o = decode_unit(fmt, ty, &payload[at..]).expect_err("owned accepts the unit");
                assert_eq!(
                    (&o.kind, o.ty, &o.path),
                    (&e.kind, e.ty, &e.path),
                    "{ty} unit {k}: owned error {o}, typed {e}"
                );
                assert_eq!(o.offset + at, e.offset, "{ty} unit {k}: error offsets");
                return;
            }
        }
        k += 1;
    }
    assert!(
        units.as_ref().is_none_or(|u| u.len() == k),
        "{ty}: typed read {k} units"
    );
}

/// `DataBuffer::unpack_into` unit by unit, appending to a vector that
/// already holds a value: on success the owned units after it (and the
/// same items again one per call); on failure the owned error of that
/// unit, with the vector and the read position as they were. (A buffer
/// gives each unit the zero-item budget of the whole input, `decode` one
/// budget for all units: only where `decode` succeeded must every unit.)
fn check_into(fmt: &Format, ty: DataType, payload: &[u8], units: &Option<Vec<Vec<Value>>>) {
    let bytes = Bytes::copy_from_slice(payload);
    let mut buf = DataBuffer::from_bytes(*fmt, bytes.clone());
    let mut one = DataBuffer::from_bytes(*fmt, bytes.clone());
    // INFO units as owned `Info`s too (`unpack_infos_into`)
    let mut infos = (ty == DataType::Info).then(|| DataBuffer::from_bytes(*fmt, bytes));
    let mut info_out = vec![pmix_types::Info::new("k", Value::Undef)];
    let mut out = vec![Value::Undef];
    let mut k = 0;
    while !buf.unread().is_empty() {
        let at = buf.position();
        let before = out.len();
        let infos_before = info_out.len();
        let as_infos = infos
            .as_mut()
            .map(|b| (b.unpack_infos_into(&mut info_out), b.position()));
        match buf.unpack_into(ty, usize::MAX, &mut out) {
            Ok(left) => {
                if let Some((r, end)) = as_infos {
                    let n = r.unwrap_or_else(|e| panic!("INFO unit {k}: unpack_infos_into: {e}"));
                    let boxed: Vec<Value> = info_out[info_out.len() - n..]
                        .iter()
                        .map(|i| Value::Info(Box::new(i.clone())))
                        .collect();
                    assert_eq!(
                        boxed,
                        out[before..],
                        "INFO unit {k}: as Infos and as Values"
                    );
                    assert_eq!(end, buf.position(), "INFO unit {k}: end as Infos");
                }
                assert_eq!(left, 0, "{ty} unit {k}: a whole unit was asked for");
                assert_eq!(
                    out[0],
                    Value::Undef,
                    "{ty}: unpack_into replaced the vector"
                );
                let got = &out[before..];
                match units {
                    Some(units) => assert_eq!(
                        Some(got),
                        units.get(k).map(Vec::as_slice),
                        "{ty} unit {k}: unpack_into and owned differ"
                    ),
                    None => {
                        if let Ok((want, _)) = decode_unit(fmt, ty, &payload[at..]) {
                            assert_eq!(got, want, "{ty} unit {k}: unpack_into and owned differ");
                        }
                    }
                }
                // the same unit one item per call, through the partial-unpack queue
                let mut items = Vec::new();
                for i in 0..got.len() {
                    let left = one
                        .unpack_into(ty, 1, &mut items)
                        .unwrap_or_else(|e| panic!("{ty} unit {k}, item {i} alone: {e}"));
                    assert_eq!(left, got.len() - i - 1, "{ty} unit {k}: items left");
                }
                if got.is_empty() {
                    one.unpack_into(ty, 1, &mut items).expect("an empty unit");
                }
                assert_eq!(items, got, "{ty} unit {k}: one by one and whole differ");
                assert_eq!(one.position(), buf.position(), "{ty} unit {k}: end");
            }
            Err(e) => {
                if let Some((r, end)) = as_infos {
                    let i = r.expect_err("unpack_infos_into accepts what unpack_into refuses");
                    assert_eq!(
                        (&i.kind, i.offset, i.ty, &i.path),
                        (&e.kind, e.offset, e.ty, &e.path),
                        "INFO unit {k}: unpack_infos_into error {i}, unpack_into {e}"
                    );
                    assert_eq!(
                        (end, info_out.len()),
                        (at, infos_before),
                        "INFO unit {k}: changed on error"
                    );
                }
                assert!(
                    units.is_none(),
                    "{ty} unit {k}: unpack_into fails ({e}), owned does not"
                );
                assert_eq!(out.len(), before, "{ty} unit {k}: output changed on error");
                assert_eq!(buf.position(), at, "{ty} unit {k}: position moved on error");
                let o = decode_unit(fmt, ty, &payload[at..])
                    .expect_err("owned accepts what unpack_into refuses");
                assert_eq!(
                    (&o.kind, o.ty, &o.path),
                    (&e.kind, e.ty, &e.path),
                    "{ty} unit {k}: owned error {o}, unpack_into {e}"
                );
                assert_eq!(o.offset + at, e.offset, "{ty} unit {k}: error offsets");
                return;
            }
        }
        k += 1;
    }
    assert!(
        units.as_ref().is_none_or(|u| u.len() == k),
        "{ty}: unpack_into read {k} units"
    );
}
