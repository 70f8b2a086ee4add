//! The logic of the three fuzz targets. fuzz/fuzz_targets/*.rs include this
//! file (libFuzzer, nightly); codec/tests/core_corpus_replay.rs and
//! robustness.rs run it on stable. Every function takes arbitrary bytes and
//! panics only when the codec breaks one of its own invariants, never
//! because the input is malformed.
//!
//! Input layout of `unpack_any` and `roundtrip`: byte 0 selects the data
//! type (code modulo 76), byte 1 the format (bits 0-3: index into
//! `Dialect::ALL`, modulo its length; bit 4: FULLY_DESC; bit 5:
//! fixed-width integers, honoured by v4/v41 only), the rest is the buffer.
//! `buffer_ops`: the same two bytes, byte 2 = k (modulo 16), then k
//! operation bytes, then the buffer.

use bytes::Bytes;
use pmix_codec::{decode, decode_unit, encode, BufferType, DataBuffer, Dialect, Format};
use pmix_types::{DataArray, DataType, Info, Value};
use std::collections::VecDeque;

/// The type and format an input selects, and the rest of it.
pub fn split(data: &[u8]) -> Option<(DataType, Format, &[u8])> {
    let (&t, rest) = data.split_first()?;
    let (&f, rest) = rest.split_first()?;
    let ty = DataType::from_code(u16::from(t) % 76)?;
    let dialect = Dialect::ALL[usize::from(f & 0x0f) % Dialect::ALL.len()];
    let buffer_type = if f & 0x10 != 0 {
        BufferType::FullyDesc
    } else {
        BufferType::NonDesc
    };
    let mut fmt = Format::new(dialect, buffer_type);
    fmt.fixed_ints = f & 0x20 != 0 && matches!(dialect, Dialect::V4 | Dialect::V41);
    Some((ty, fmt, rest))
}

/// The two selector bytes of a type and format (the inverse of [`split`]).
pub fn selector(ty: DataType, fmt: &Format) -> [u8; 2] {
    let d = Dialect::ALL
        .iter()
        .position(|x| *x == fmt.dialect)
        .expect("every dialect is in Dialect::ALL") as u8;
    let mut f = d;
    if fmt.buffer_type == BufferType::FullyDesc {
        f |= 0x10;
    }
    if fmt.fixed_ints {
        f |= 0x20;
    }
    [ty.code() as u8, f]
}

/// Decode `payload`, checking what holds for any input: an error lies
/// inside the input; accepted bytes give values of the requested type, and
/// reading them unit by unit gives the same values and consumes everything.
pub fn check_decode(fmt: &Format, ty: DataType, payload: &[u8]) -> Option<Vec<Vec<Value>>> {
    let values = match decode(fmt, ty, payload) {
        Ok(v) => v,
        Err(e) => {
            assert!(
                e.offset <= payload.len(),
                "error offset {} past the {}-byte input: {e}",
                e.offset,
                payload.len()
            );
            return None;
        }
    };
    for v in &values {
        assert_eq!(v.data_type(), ty, "decode of {ty} gave {v:?}");
    }
    let mut units = Vec::new();
    let mut rest = payload;
    while !rest.is_empty() {
        let (unit, used) = decode_unit(fmt, ty, rest)
            .unwrap_or_else(|e| panic!("decode accepted the buffer, decode_unit refuses: {e}"));
        assert!(used > 0 && used <= rest.len(), "unit of {used} bytes");
        units.push(unit);
        rest = &rest[used..];
    }
    let flat: Vec<Value> = units.iter().flatten().cloned().collect();
    assert_eq!(flat, values, "decode and decode_unit disagree");
    Some(units)
}

/// Target `unpack_any`: decode anything as anything.
pub fn unpack_any(data: &[u8]) {
    if let Some((ty, fmt, payload)) = split(data) {
        check_decode(&fmt, ty, payload);
    }
}

/// Encode units one after another; panics if any does not encode.
fn encode_units(fmt: &Format, ty: DataType, units: &[Vec<Value>]) -> Vec<u8> {
    let mut out = Vec::new();
    for u in units {
        let b = encode(fmt, ty, u).unwrap_or_else(|e| {
            panic!("decoded values must encode again, {ty} in {fmt:?}: {e}\n{u:?}")
        });
        out.extend(b);
    }
    out
}

/// Target `roundtrip`: whatever decodes must encode; decode(encode(v)) == v;
/// our own bytes are a fixed point (encode(decode(b)) == b).
pub fn roundtrip(data: &[u8]) {
    let Some((ty, fmt, payload)) = split(data) else {
        return;
    };
    let Some(units) = check_decode(&fmt, ty, payload) else {
        return;
    };
    let values: Vec<Value> = units.iter().flatten().cloned().collect();
    let ours = encode_units(&fmt, ty, &units);
    let units2 =
        check_decode(&fmt, ty, &ours).expect("the codec refuses bytes it has just written");
    let back: Vec<Value> = units2.iter().flatten().cloned().collect();
    // FLOAT/DOUBLE travel as text: a peer's text that "%f" would not write
    // (".9551615") comes back rounded to 6 decimals, so for values holding
    // a float only the second pass must be exact.
    if !values.iter().any(has_float) {
        assert_eq!(back, values, "decode(encode(v)) != v for {ty} in {fmt:?}");
    }
    assert_eq!(units2.len(), units.len(), "unit count changed");
    let again = encode_units(&fmt, ty, &units2);
    assert_eq!(again, ours, "encode(decode(b)) != b for {ty} in {fmt:?}");
    // all values in one unit (POINTER-like units are capped at 1024 items;
    // no units at all is not a unit)
    if !units.is_empty() && back.len() <= 1024 {
        let one = encode(&fmt, ty, &back).expect("values of several units encode as one");
        assert_eq!(decode(&fmt, ty, &one).expect("one unit decodes"), back);
    }
}

/// Whether a value holds a FLOAT or DOUBLE anywhere.
pub fn has_float(v: &Value) -> bool {
    fn any_info(l: &[Info]) -> bool {
        l.iter().any(|i| has_float(&i.value))
    }
    match v {
        Value::Float(_) | Value::Double(_) | Value::ProcStats(_) | Value::NodeStats(_) => true,
        Value::Value(x) => has_float(x),
        Value::Info(i) => has_float(&i.value),
        Value::Pdata(p) => has_float(&p.value),
        Value::Kval(k) => has_float(&k.value),
        Value::App(a) => any_info(&a.info),
        Value::Query(q) => any_info(&q.qualifiers),
        Value::InfoArray(l) => any_info(l),
        Value::DataArray(a) => match &**a {
            DataArray::Typed { elements, .. } => elements.iter().any(has_float),
            DataArray::Undef { .. } => false,
        },
        _ => false,
    }
}

/// A reference model of a `DataBuffer`: its bytes, read position, and the
/// items left over by a partial unpack. Every operation is applied to both
/// and the results compared; the model itself uses only `decode_unit`.
struct Model {
    fmt: Format,
    ty: DataType,
    buf: DataBuffer,
    bytes: Vec<u8>,
    pos: usize,
    pending: VecDeque<Value>,
    last: Vec<Value>,
    /// Whether `last` came out of an unpack (else it is the initial empty list).
    last_decoded: bool,
}

impl Model {
    fn check(&self) {
        assert_eq!(self.buf.as_bytes(), &self.bytes[..], "buffer contents");
        assert_eq!(self.buf.position(), self.pos, "read position");
        assert_eq!(self.buf.unread(), &self.bytes[self.pos..]);
    }

    fn reset_to(&mut self, bytes: Vec<u8>) {
        self.bytes = bytes;
        self.pos = 0;
        self.pending.clear();
    }

    /// Unpack at most `max` items of `ty`; returns whether it succeeded.
    fn unpack(&mut self, ty: DataType, max: usize) -> bool {
        let before = self.pos;
        let r = self.buf.unpack(ty, max);
        let ok = if max == 0 {
            assert!(r.is_err(), "unpack with room for nothing must fail");
            false
        } else if !self.pending.is_empty() {
            if ty != self.ty {
                assert!(r.is_err(), "another type before a partial unit is finished");
                false
            } else {
                let u = r.expect("the rest of a partially unpacked unit is always readable");
                let take = max.min(self.pending.len());
                let want: Vec<Value> = self.pending.drain(..take).collect();
                assert_eq!(u.values, want, "continuation of a partial unpack");
                assert_eq!(u.left_in_unit, self.pending.len());
                self.last = want;
                self.last_decoded = true;
                true
            }
        } else {
            match decode_unit(&self.fmt, ty, &self.bytes[self.pos..]) {
                Ok((vals, used)) => {
                    let u = r.unwrap_or_else(|e| {
                        panic!("decode_unit accepts the unit, DataBuffer::unpack says {e}")
                    });
                    let take = max.min(vals.len());
                    assert_eq!(u.values[..], vals[..take], "partial unpack");
                    assert_eq!(u.left_in_unit, vals.len() - take);
                    assert_eq!(u.status(), if take < vals.len() { -19 } else { 0 });
                    self.pos += used;
                    if ty == self.ty {
                        self.pending = vals[take..].iter().cloned().collect();
                        self.last = u.values;
                        self.last_decoded = true;
                    } else {
                        assert_eq!(take, vals.len(), "other types are read whole");
                    }
                    true
                }
                Err(_) => {
                    let e = r.expect_err("DataBuffer::unpack accepts what decode_unit refuses");
                    assert!(e.offset <= self.bytes.len(), "error offset {}", e.offset);
                    false
                }
            }
        };
        if !ok {
            assert_eq!(self.pos, before);
        }
        self.check();
        ok
    }

    fn step(&mut self, op: u8) {
        let arg = op >> 3;
        match op & 7 {
            0 => {
                self.unpack(self.ty, usize::from(arg % 5));
            }
            1 => {
                // unpack_one: a partial unpack of one item, refused unless it was the last
                let had = self.pending.len();
                let r = self.buf.unpack_one(self.ty);
                let ok = self.mirror_one(had);
                assert_eq!(r.is_ok(), ok, "unpack_one: {r:?}");
                if let Ok(v) = r {
                    assert_eq!(self.last, vec![v]);
                }
                self.check();
            }
            2 => {
                self.buf.rewind();
                self.pos = 0;
                self.pending.clear();
                self.check();
            }
            3 => {
                // copy_payload appends the unread bytes to a buffer that has some already
                let mut dest = DataBuffer::new(self.fmt);
                let mut want = self.pack_like_encode(&mut dest);
                want.extend_from_slice(&self.bytes[self.pos..]);
                dest.copy_payload(&self.buf);
                assert_eq!(dest.as_bytes(), &want[..], "copy_payload");
                self.check();
            }
            4 => {
                let taken = self.buf.unload();
                assert_eq!(&taken[..], &self.bytes[self.pos..], "unload");
                assert!(
                    self.buf.as_bytes().is_empty(),
                    "unload leaves the buffer empty"
                );
                let rest = self.bytes[self.pos..].to_vec();
                self.buf.load(taken);
                self.reset_to(rest);
                self.check();
            }
            5 => {
                let mut buf = std::mem::replace(&mut self.buf, DataBuffer::new(self.fmt));
                let b = self.pack_like_encode(&mut buf);
                self.buf = buf;
                self.bytes.extend(b);
                self.check();
            }
            6 => {
                let rest = self.bytes[self.pos..].to_vec();
                self.buf.embed(&rest);
                self.reset_to(rest);
                self.check();
            }
            _ => {
                // another type, read whole
                if let Some(other) = DataType::from_code(u16::from(arg) % 76) {
                    self.unpack(other, usize::MAX);
                }
            }
        }
    }

    /// Pack the last values handed out into `dest`: it must do what
    /// `encode` does, write nothing on error, and succeed for values that
    /// came out of an unpack. Returns the bytes appended.
    fn pack_like_encode(&self, dest: &mut DataBuffer) -> Vec<u8> {
        let before = dest.as_bytes().to_vec();
        let want = encode(&self.fmt, self.ty, &self.last);
        let got = dest.pack(self.ty, &self.last);
        match (want, got) {
            (Ok(b), Ok(())) => {
                assert_eq!(
                    dest.as_bytes()[before.len()..],
                    b[..],
                    "pack and encode differ"
                );
                b
            }
            (Err(a), Err(b)) => {
                assert!(
                    !self.last_decoded,
                    "values the buffer gave out must pack again: {a}"
                );
                assert_eq!(a.kind, b.kind);
                assert_eq!(dest.as_bytes(), &before[..], "a failed pack wrote bytes");
                Vec::new()
            }
            (a, b) => panic!("encode says {a:?}, DataBuffer::pack says {b:?}"),
        }
    }

    /// The model's side of `unpack_one`: an unpack with room for one item,
    /// whose result is "exactly one item and the unit done".
    fn mirror_one(&mut self, had_pending: usize) -> bool {
        if had_pending > 0 {
            let v = self.pending.pop_front().expect("pending");
            self.last = vec![v];
            self.last_decoded = true;
            return self.pending.is_empty();
        }
        match decode_unit(&self.fmt, self.ty, &self.bytes[self.pos..]) {
            Ok((vals, used)) => {
                self.pos += used;
                let n = vals.len();
                let mut it = vals.into_iter();
                self.last = it.next().into_iter().collect();
                self.last_decoded = true;
                self.pending = it.collect();
                n == 1
            }
            Err(_) => false,
        }
    }
}

/// Target `buffer_ops`: a sequence of DataBuffer operations (unpack with
/// small maxima, unpack_one, rewind, copy_payload, unload/load, pack,
/// embed, unpack of another type) checked against a model, then the rest
/// read to the end.
pub fn buffer_ops(data: &[u8]) {
    let Some((ty, fmt, rest)) = split(data) else {
        return;
    };
    let Some((&k, rest)) = rest.split_first() else {
        return;
    };
    let k = usize::from(k % 16);
    if rest.len() < k {
        return;
    }
    let (ops, payload) = rest.split_at(k);
    let mut m = Model {
        fmt,
        ty,
        buf: DataBuffer::from_bytes(fmt, Bytes::copy_from_slice(payload)),
        bytes: payload.to_vec(),
        pos: 0,
        pending: VecDeque::new(),
        last: Vec::new(),
        last_decoded: false,
    };
    m.check();
    for &op in ops {
        m.step(op);
    }
    // read what is left, 3 items at a time; every successful unpack either
    // consumes bytes or drains pending items, so this ends
    let limit = m.bytes.len() + m.pending.len() + 2;
    for _ in 0..limit {
        if !m.unpack(ty, 3) {
            break;
        }
    }
}

/// The `buffer_ops` input that runs `ops` over `payload`.
pub fn buffer_ops_input(ty: DataType, fmt: &Format, ops: &[u8], payload: &[u8]) -> Vec<u8> {
    assert!(ops.len() < 16);
    let mut v = selector(ty, fmt).to_vec();
    v.push(ops.len() as u8);
    v.extend_from_slice(ops);
    v.extend_from_slice(payload);
    v
}

/// `messages`: byte 0 selects the reply's command (the request names its
/// own), byte 1 the format as for `unpack_any`, the rest is one message
/// payload. It is read as a request, as a reply to that command, as a
/// tag-0 event and as a connect request; whatever decodes must re-encode,
/// and re-decode to the same message.
pub fn messages(data: &[u8]) {
    use pmix_codec::handshake::ConnectRequest;
    use pmix_codec::msg::{EventNotice, Reply, Request};
    let Some((&command, rest)) = data.split_first() else {
        return;
    };
    let Some((_, fmt, payload)) =
        split(&[&[0u8][..], rest].concat()).map(|(t, f, p)| (t, f, p.to_vec()))
    else {
        return;
    };
    if let Ok(r) = Request::decode(&fmt, &payload) {
        let again = r.encode(&fmt).expect("a decoded request encodes");
        assert_eq!(Request::decode(&fmt, &again).expect("re-decodes"), r);
    }
    let command = command % 40;
    if let Ok(r) = Reply::decode(&fmt, command, &payload) {
        let again = r.encode(&fmt).expect("a decoded reply encodes");
        assert_eq!(Reply::decode(&fmt, command, &again).expect("re-decodes"), r);
    }
    if let Ok(e) = EventNotice::decode(&fmt, &payload) {
        let again = e.encode(&fmt).expect("a decoded event encodes");
        assert_eq!(EventNotice::decode(&fmt, &again).expect("re-decodes"), e);
    }
    if let Ok(d) = pmix_codec::msg::IofData::decode(&fmt, &payload) {
        let again = d.encode(&fmt).expect("decoded IOF data encodes");
        assert_eq!(
            pmix_codec::msg::IofData::decode(&fmt, &again).expect("re-decodes"),
            d
        );
    }
    // the contents of a GET reply's blob and of a COMMIT blob
    if let Ok(p) = pmix_codec::msg::ProcData::decode(&fmt, &payload) {
        let again = p.encode(&fmt).expect("decoded proc data encodes");
        assert_eq!(
            pmix_codec::msg::ProcData::decode(&fmt, &again).expect("re-decodes"),
            p
        );
    }
    let blob = pmix_types::Buffer {
        buffer_type: command % 3,
        bytes: bytes::Bytes::copy_from_slice(&payload),
    };
    let _ = pmix_codec::msg::commit_kvals(&fmt, &blob);
    if let Ok(c) = ConnectRequest::decode(&payload) {
        if let Ok(again) = c.encode() {
            assert_eq!(ConnectRequest::decode(&again).expect("re-decodes"), c);
        }
    }
}
