//! Entry points for fuzzing (and for replaying the fuzz corpora in normal
//! tests). Each takes arbitrary bytes and panics only when an invariant of
//! the codec is broken — never because the input is malformed.
//!
//! Input layout: byte 0 selects the data type (code modulo 76), byte 1 the
//! format (bits 0-3: dialect index modulo 9; bit 4: fully described; bit 5:
//! psquash native), the rest is the buffer.

use crate::{decode, decode_unit, encode, BufferType, DataBuffer, Dialect, Format};
use bytes::Bytes;
use pmix_types::{DataArray, DataType, Info, Value};

/// The type and format an input selects, and its payload.
pub fn split(data: &[u8]) -> Option<(DataType, Format, &[u8])> {
    let (&t, rest) = data.split_first()?;
    let (&f, payload) = rest.split_first()?;
    let ty = DataType::from_code(t as u16 % 76)?;
    let dialect = Dialect::ALL[(f & 0x0f) as usize % Dialect::ALL.len()];
    let mut fmt = Format::new(
        dialect,
        if f & 0x10 != 0 {
            BufferType::FullyDesc
        } else {
            BufferType::NonDesc
        },
    );
    fmt.fixed_ints = f & 0x20 != 0 && matches!(dialect, Dialect::V4 | Dialect::V41);
    Some((ty, fmt, payload))
}

/// The selector bytes for a type and format (the inverse of [`split`]).
pub fn selector(ty: DataType, fmt: &Format) -> [u8; 2] {
    let d = Dialect::ALL
        .iter()
        .position(|x| *x == fmt.dialect)
        .unwrap_or(0) as u8;
    let mut f = d;
    if fmt.buffer_type == BufferType::FullyDesc {
        f |= 0x10;
    }
    if fmt.fixed_ints {
        f |= 0x20;
    }
    [ty.code() as u8, f]
}

/// Decode unit by unit; whatever decodes must encode again, unit by unit,
/// and the re-encoding must decode to the same values.
pub fn roundtrip(data: &[u8]) {
    let Some((ty, fmt, payload)) = split(data) else {
        return;
    };
    let Ok(values) = decode(&fmt, ty, payload) else {
        return;
    };
    let mut rest = payload;
    let mut bytes = Vec::new();
    while !rest.is_empty() {
        let (unit, used) =
            decode_unit(&fmt, ty, rest).expect("a buffer that decodes has units that decode");
        bytes.extend(encode(&fmt, ty, &unit).expect("decoded values must encode"));
        rest = &rest[used..];
    }
    let again = decode(&fmt, ty, &bytes).expect("our own encoding must decode");
    // FLOAT/DOUBLE travel as text: a peer's text that "%f" would not print
    // (".9551615") re-encodes rounded, so only the second pass is exact
    if !values.iter().any(has_float) {
        assert_eq!(again, values, "decode(encode(v)) != v for {ty} in {fmt:?}");
    }
    // and our bytes are a fixed point
    let mut rest = &bytes[..];
    let mut twice = Vec::new();
    while !rest.is_empty() {
        let (unit, used) = decode_unit(&fmt, ty, rest).expect("decode");
        twice.extend(encode(&fmt, ty, &unit).expect("encode"));
        rest = &rest[used..];
    }
    assert_eq!(twice, bytes);
    assert_eq!(decode(&fmt, ty, &twice).expect("decode"), again);
}

/// Whether a value carries a FLOAT or DOUBLE anywhere inside.
fn has_float(v: &Value) -> bool {
    let infos = |l: &[Info]| l.iter().any(|i| has_float(&i.value));
    match v {
        Value::Float(_) | Value::Double(_) | Value::ProcStats(_) | Value::NodeStats(_) => true,
        Value::Value(x) => has_float(x),
        Value::Info(i) => has_float(&i.value),
        Value::Pdata(p) => has_float(&p.value),
        Value::Kval(k) => has_float(&k.value),
        Value::App(a) => infos(&a.info),
        Value::Query(q) => infos(&q.qualifiers),
        Value::InfoArray(l) => infos(l),
        Value::DataArray(a) => match &**a {
            DataArray::Typed { elements, .. } => elements.iter().any(has_float),
            DataArray::Undef { .. } => false,
        },
        _ => false,
    }
}

/// Decode only: any input, any type, any format; errors must locate
/// themselves inside the input.
pub fn unpack_any(data: &[u8]) {
    let Some((ty, fmt, payload)) = split(data) else {
        return;
    };
    if let Err(e) = decode(&fmt, ty, payload) {
        assert!(
            e.offset <= payload.len(),
            "error offset {} past input {}",
            e.offset,
            payload.len()
        );
    }
}

/// A sequence of DataBuffer operations driven by the input: unpack with
/// small maximum counts, rewind, copy_payload, unload/load. Whatever
/// happens, a fresh decode of the same bytes and the buffer agree.
pub fn buffer_ops(data: &[u8]) {
    let Some((ty, fmt, payload)) = split(data) else {
        return;
    };
    let mut buf = DataBuffer::from_bytes(fmt, Bytes::copy_from_slice(payload));
    let mut got = Vec::new();
    let mut ops = payload.iter().take(8).copied().cycle();
    let mut done = false;
    for _ in 0..256 {
        let max = (ops.next().unwrap_or(1) % 4) as usize + 1;
        match buf.unpack(ty, max) {
            Ok(u) => {
                assert!(u.values.len() <= max);
                got.extend(u.values);
                if buf.unread().is_empty() && u.left_in_unit == 0 {
                    done = true;
                    break;
                }
            }
            Err(_) => break,
        }
    }
    if done {
        // everything was read: the same values as a one-shot decode
        let all = decode(&fmt, ty, payload).expect("a buffer read to the end decodes");
        assert_eq!(all, got);
    }
    buf.rewind();
    let mut copy = DataBuffer::new(fmt);
    copy.copy_payload(&buf);
    assert_eq!(copy.as_bytes(), payload);
    let taken = copy.unload();
    assert_eq!(&taken[..], payload);
}
