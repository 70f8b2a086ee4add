//! pmix-codec: the PMIx "bfrops" wire format.
//!
//! A buffer is a bare concatenation of *pack units*: a count followed by
//! that many items of one type (bfrops.md §2). [`encode`] and [`decode`]
//! work on whole byte strings; [`DataBuffer`] has the semantics of the
//! standard's `pmix_data_buffer_t` API (pack, unpack with a maximum
//! count, copy_payload, load, unload, embed).
//!
//! ```
//! use pmix_codec::{decode, encode, BufferType, DataBuffer, Dialect, Format};
//! use pmix_types::{DataType, Info, Value};
//!
//! // libpmix 4.2.2's default format: v41, non-described
//! let info = Value::Info(Box::new(Info::new("pmix.job.size", Value::Uint32(4))));
//! let bytes = encode(&Format::V41, DataType::Info, &[info.clone()])?;
//! assert_eq!(decode(&Format::V41, DataType::Info, &bytes)?, vec![info.clone()]);
//!
//! // the same value for a PMIx 3.x peer, fully described
//! let v3 = Format::new(Dialect::V3, BufferType::FullyDesc);
//! let mut buf = DataBuffer::new(v3);
//! buf.pack(DataType::Info, &[info.clone()])?;
//! assert_eq!(&buf.as_bytes()[..6], &[0x00, 0x09, 0x00, 0x00, 0x00, 0x01]);
//! assert_eq!(buf.unpack(DataType::Info, 1)?.values, vec![info]);
//! # Ok::<(), pmix_codec::Error>(())
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

// The modules form layers; each uses only modules of the layers below it
// (never one above, so there is no import cycle: `tests/module_graph.rs`
// reads the sources and fails on any). Bottom to top:
//
// 1. leaves: `error`, `float`, `frame`, `compress`; `dialect` (over
//    `error`), `legacy` and `select` (over `dialect`);
// 2. wire primitives: `wire` (Enc, Dec, Sizer, the limits), `regex`,
//    `item`, the seam of the value codec's recursion (the `Layout` and
//    `Payload` traits), and `form`, the wire forms over the primitives
//    alone (the `Form` trait, integers, strings, blobs, generic forms);
// 3. framing: `pack` and `unpack` (units, `pmix_value_t`, DATA_ARRAY, INFO
//    lists, and in `pack` the encoded lengths); they recurse into a
//    structure or a value's payload only through the `item` traits;
// 4. `layout` (the forms over the framing helpers and each structure's
//    `Layout`; it re-exports `form`'s forms and `item::Layout`), then `dispatch` (the type table's dispatch, which
//    implements `Payload` for `Value`): nothing imports `dispatch`;
// 5. this crate root (pack units, `encode`/`decode`, over `pack`/`unpack`);
//    its `pub use` lines are the public names, not dependencies;
// 6. users of units: `buffer`, `typed`, `view`, `handshake`, `registry`;
// 7. the message layer `msg`: `msg` itself (constants) < `msg::field` (the
//    field kinds) < `msg::reply`, `msg::notice` < `msg::commands` (the command
//    table, which maps a command to its reply layout) < `msg::request`.

pub mod buffer;
pub mod compress;
pub mod dialect;
mod dispatch;
pub mod error;
pub mod float;
mod form;
pub mod frame;
pub mod handshake;
mod item;
mod layout;
mod legacy;
pub mod msg;
mod pack;
mod regex;
pub mod registry;
pub mod select;
pub mod typed;
mod unpack;
pub mod view;
pub(crate) mod wire;

pub use buffer::DataBuffer;
pub use dialect::{BufferType, Dialect, Format, Ints, Release};
pub use error::{Error, ErrorKind, Result};
/// `PMIx_Data_print` (implemented in pmix-types: it needs no wire knowledge).
pub use pmix_types::print::{print, PrintError};
pub use typed::{encode_prims, encode_strs, pack_prims, pack_strs, Prim};
pub use view::{decode_ref, Reader, ValueRef};
pub use wire::HWLOC_SUPPORT_BYTES;

use bytes::Bytes;
use pmix_types::{DataType, Value};
use wire::{Dec, Enc};

/// Append one pack unit of `values` (all of type `ty`) to `out`. On error
/// nothing is appended (libpmix leaves a torn buffer; we do not).
pub fn pack_unit(out: &mut Vec<u8>, fmt: &Format, ty: DataType, values: &[Value]) -> Result<()> {
    pack_unit_with(out, fmt, ty, values.len(), |e| {
        pack::pack_items(e, ty, values)
    })
}

/// Append one pack unit of `n` items of `ty` whose bodies `items` writes;
/// on error nothing is appended.
pub(crate) fn pack_unit_with(
    out: &mut Vec<u8>,
    fmt: &Format,
    ty: DataType,
    n: usize,
    items: impl FnOnce(&mut Enc) -> Result<()>,
) -> Result<()> {
    let start = out.len();
    let r = (|| {
        let mut e = Enc::for_format(out, fmt);
        e.dialect
            .require(ty, false)
            .map_err(|k| e.err(k).in_type(ty))?;
        if fmt.buffer_type == BufferType::FullyDesc {
            e.tag(DataType::Int32.code());
        }
        e.count32(n)?;
        if fmt.buffer_type == BufferType::FullyDesc {
            e.tag(legacy_unit_code(fmt, ty));
        }
        items(&mut e)
    })();
    if r.is_err() {
        out.truncate(start);
    }
    r
}

/// One pack unit of `values` as a new byte string.
pub fn encode(fmt: &Format, ty: DataType, values: &[Value]) -> Result<Vec<u8>> {
    // most items take a few bytes: avoid the first rounds of regrowth
    let mut out = Vec::with_capacity(16 + values.len() * 4);
    pack_unit(&mut out, fmt, ty, values)?;
    Ok(out)
}

/// The length of the pack unit [`encode`] writes for `values` (all of
/// type `ty`, values it accepts), computed from the type table's wire
/// forms without writing.
pub fn encoded_len(fmt: &Format, ty: DataType, values: &[Value]) -> usize {
    let s = wire::Sizer::for_format(fmt);
    let tags = match fmt.buffer_type {
        BufferType::FullyDesc => s.tag(DataType::Int32.code()) + s.tag(legacy_unit_code(fmt, ty)),
        BufferType::NonDesc => 0,
    };
    tags + s.count32(values.len()) + pack::items_len(&s, ty, values)
}

/// The type tag of a described unit: the legacy drivers declare some
/// types as others (COMMAND as UINT32; v12 also SCOPE as UINT, ...).
fn legacy_unit_code(fmt: &Format, ty: DataType) -> u16 {
    if fmt.dialect.is_legacy() {
        fmt.dialect.driver_code(ty)
    } else {
        ty.code()
    }
}

/// Read the header of one unit at `pos`: returns the count and the
/// position of the first item.
fn unit_header(buf: &[u8], pos: usize, fmt: &Format, ty: DataType) -> Result<(usize, usize)> {
    let mut d = Dec::from_slice(buf, pos, fmt.dialect, fmt.ints());
    d.apply(fmt);
    let n = read_unit_header(&mut d, fmt, ty)?;
    Ok((n, d.pos()))
}

/// Read the header of one unit at `d`'s position: the count (not yet
/// checked against the bytes remaining).
#[inline]
pub(crate) fn read_unit_header(d: &mut Dec, fmt: &Format, ty: DataType) -> Result<usize> {
    let described = fmt.buffer_type == BufferType::FullyDesc;
    if described {
        let at = d.pos();
        let tag = d.tag()?;
        if tag != fmt.dialect.wire_tag(DataType::Int32.code()) {
            return Err(Error::new(ErrorKind::BadCountTag(tag), at));
        }
    }
    let at = d.pos();
    let n = d.i32()?;
    if n < 0 {
        return Err(Error::new(
            ErrorKind::ValueOutOfRange {
                what: "unit count",
                value: n as i128,
            },
            at,
        )
        .in_type(ty));
    }
    if described {
        let at = d.pos();
        let tag = d.tag()?;
        if tag != fmt.dialect.wire_tag(legacy_unit_code(fmt, ty)) {
            return Err(Error::new(
                ErrorKind::TypeMismatch {
                    expected: ty,
                    found: tag,
                },
                at,
            ));
        }
    }
    Ok(n as usize)
}

/// Unpack `n` items of `ty` at `pos`; returns them and the new position.
fn items_at(
    buf: &Bytes,
    pos: usize,
    fmt: &Format,
    ty: DataType,
    n: usize,
    zero_budget: &mut usize,
) -> Result<(Vec<Value>, usize)> {
    let mut d = Dec::new(buf, pos, fmt.dialect, fmt.ints());
    d.apply(fmt);
    d.zero_budget = *zero_budget;
    let v = unpack::unpack_items(&mut d, ty, n)?;
    *zero_budget = d.zero_budget;
    Ok((v, d.pos()))
}

/// Decode every unit in `bytes` as items of `ty`, until the input is
/// exhausted; all values in order.
pub fn decode(fmt: &Format, ty: DataType, bytes: &[u8]) -> Result<Vec<Value>> {
    decode_bytes(fmt, ty, &Bytes::copy_from_slice(bytes))
}

/// As [`decode`], without copying: byte objects in the result share `buf`.
pub fn decode_bytes(fmt: &Format, ty: DataType, buf: &Bytes) -> Result<Vec<Value>> {
    fmt.dialect
        .require(ty, false)
        .map_err(|k| Error::new(k, 0).in_type(ty))?;
    let mut pos = 0;
    let mut all = Vec::new();
    let mut budget = wire::zero_item_budget(buf.len());
    while pos < buf.len() {
        let (n, p) = unit_header(buf, pos, fmt, ty)?;
        let (mut v, p) = items_at(buf, p, fmt, ty, n, &mut budget)?;
        if all.is_empty() {
            all = v; // the common single-unit case: no second copy
        } else {
            all.append(&mut v);
        }
        pos = p;
    }
    Ok(all)
}

/// Decode exactly one unit at the start of `bytes`; returns the values
/// and the number of bytes consumed.
pub fn decode_unit(fmt: &Format, ty: DataType, bytes: &[u8]) -> Result<(Vec<Value>, usize)> {
    let buf = Bytes::copy_from_slice(bytes);
    let (n, p) = unit_header(&buf, 0, fmt, ty)?;
    items_at(&buf, p, fmt, ty, n, &mut wire::zero_item_budget(buf.len()))
}

/// The codec's internal cursors and framing helpers, for this
/// repository's tests (flex128 and zig-zag coding, the nesting cap). Not
/// API: no stability promise.
#[doc(hidden)]
pub mod internal {
    pub use crate::wire::{flex_encode, zigzag, MAX_DEPTH};
}
