//! Unpacking: runs of items, `pmix_value_t` and DATA_ARRAY framing,
//! mirroring `pack.rs`; one item's payload is read by the wire form its
//! type-table row names (`dispatch.rs`, `layout.rs`). Everything read is bounded by the input; counts are checked
//! against the bytes remaining before anything is allocated.

use crate::error::{Error, ErrorKind, Field, Result};
use crate::float;
use crate::item::{Layout, Payload};
use crate::legacy::InfoTypeField;
use crate::wire::{system_tag, to_int, to_pid, to_size, Dec};
use bytes::Bytes;
use pmix_types::*;

/// Unpack `n` items of type `ty` (the count has been read by the caller).
pub fn unpack_items(d: &mut Dec, ty: DataType, n: usize) -> Result<Vec<Value>> {
    let mut out = Vec::new();
    unpack_items_into(d, ty, n, &mut out)?;
    Ok(out)
}

/// [`unpack_items`], appending to `out` (which is grown once, after the
/// count has been checked against the bytes remaining). On error `out`
/// may hold some of the items: the caller truncates it.
pub fn unpack_items_into(d: &mut Dec, ty: DataType, n: usize, out: &mut Vec<Value>) -> Result<()> {
    check_registered(d, ty)?;
    if d.dialect == crate::dialect::Dialect::V12 {
        match ty {
            // nothing was sent for these: zeros, as libpmix's storage would hold
            DataType::InfoDirectives | DataType::ProcState => {
                d.spend_zero(n).map_err(|e| e.in_type(ty))?;
                let zero = if ty == DataType::ProcState {
                    Value::ProcState(0)
                } else {
                    Value::InfoDirectives(0)
                };
                out.resize(out.len() + n, zero);
                return Ok(());
            }
            DataType::DataArray | DataType::ProcInfo | DataType::Query => {
                return Err(d
                    .err(ErrorKind::NotSupported(
                        "v12 cannot unpack DATA_ARRAY, PROC_INFO or QUERY",
                    ))
                    .in_type(ty));
            }
            DataType::Pointer => {
                d.spend_zero(n).map_err(|e| e.in_type(ty))?;
                out.resize(out.len() + n, Value::Pointer);
                return Ok(());
            }
            _ => {}
        }
    }
    if ty == DataType::Pointer {
        d.spend_zero(n).map_err(|e| e.in_type(ty))?;
        // one sentinel byte per call, even for zero pointers
        d.u8().map_err(|e| e.in_type(ty))?;
        out.resize(out.len() + n, Value::Pointer);
        return Ok(());
    }
    if system_tag(ty, d.ints, d.dialect).is_some() {
        return unpack_system_typed(d, ty, n, out).map_err(|e| e.in_type(ty));
    }
    // every other item takes at least one byte
    let at = d.pos();
    d.check_count(n as u64, 1, at).map_err(|e| e.in_type(ty))?;
    out.reserve(n);
    if let Some(r) = unpack_scalars(d, ty, n, out) {
        return r;
    }
    if ty == DataType::Info {
        // the INFO reader inlined here: each INFO is built in its box
        return read_items(
            d,
            ty,
            n,
            |d| info(d).map(|i| Value::Info(Box::new(i))),
            |v| out.push(v),
        );
    }
    read_items(d, ty, n, |d| unpack_item(d, ty), |v| out.push(v))
}

/// Read `n` items of `ty` with `read`, handing each to `each`: the count
/// is first checked against the bytes remaining (every item takes at least
/// one byte), and errors name the type and, in a run, the index.
#[inline]
pub(crate) fn read_items<'a, T>(
    d: &mut Dec<'a>,
    ty: DataType,
    n: usize,
    mut read: impl FnMut(&mut Dec<'a>) -> Result<T>,
    mut each: impl FnMut(T),
) -> Result<()> {
    let at = d.pos();
    d.check_count(n as u64, 1, at).map_err(|e| e.in_type(ty))?;
    for i in 0..n {
        let v = read(d).map_err(|err| {
            let err = err.in_type(ty);
            if n > 1 {
                err.in_field(format!("[{i}]"))
            } else {
                err
            }
        })?;
        each(v);
    }
    Ok(())
}

/// Whether a run of `ty` items is the items one after the other, each read
/// by [`unpack_item`]: not POINTER (a sentinel), not the system-tagged
/// types (one tag per run), not v12's special cases.
pub(crate) fn plain_run(d: &Dec, ty: DataType) -> bool {
    let v12_special = d.dialect == crate::dialect::Dialect::V12
        && matches!(
            ty,
            DataType::InfoDirectives
                | DataType::ProcState
                | DataType::DataArray
                | DataType::ProcInfo
                | DataType::Query
        );
    ty != DataType::Pointer && !v12_special && system_tag(ty, d.ints, d.dialect).is_none()
}

/// Arrays of plain integers and strings in one tight loop per type; `None`
/// for the other types.
fn unpack_scalars(d: &mut Dec, ty: DataType, n: usize, out: &mut Vec<Value>) -> Option<Result<()>> {
    macro_rules! each {
        ($($t:ident => $variant:ident . $read:ident),*) => {
            match ty {
                $(DataType::$t => {
                    for i in 0..n {
                        match d.$read() {
                            Ok(x) => out.push(Value::$variant(x)),
                            Err(err) => {
                                let err = err.in_type(ty);
                                return Some(Err(if n > 1 { err.in_field(format!("[{i}]")) } else { err }));
                            }
                        }
                    }
                    Some(Ok(()))
                })*
                _ => None,
            }
        };
    }
    each!(
        Uint64 => Uint64.u64,
        Int64 => Int64.i64,
        Uint32 => Uint32.u32,
        Int32 => Int32.i32,
        Uint16 => Uint16.u16,
        Int16 => Int16.i16,
        String => String.str
    )
}

/// A v12 widened 1-byte enum: libpmix packs the 1-byte variable as a
/// 4-byte int, so the upper three bytes are whatever followed it in memory;
/// only the low byte is the value.
fn to_byte(v: i128, _at: usize) -> Result<u8> {
    Ok(v as u8)
}

/// INT/UINT/SIZE/PID items: one tag naming the sender's width, then the values.
fn unpack_system_typed(d: &mut Dec, ty: DataType, n: usize, out: &mut Vec<Value>) -> Result<()> {
    let at = d.pos();
    let code = d.sys_tag()?;
    d.check_count(n as u64, 1, d.pos())?;
    out.reserve(n);
    for _ in 0..n {
        let vat = d.pos();
        let v = d.integer_as(code, ty.name(), at)?;
        out.push(match ty {
            DataType::Pid => Value::Pid(to_pid(v, vat)?),
            DataType::Int => Value::Int(to_int(v, vat)?),
            DataType::Uint => Value::Uint(to_int(v, vat)? as u32),
            DataType::Status => Value::Status(to_int(v, vat)?),
            DataType::ProcRank => Value::ProcRank(to_int(v, vat)? as u32),
            DataType::Scope => Value::Scope(to_byte(v, vat)?),
            DataType::DataRange => Value::DataRange(to_byte(v, vat)?),
            DataType::Persist => Value::Persist(to_byte(v, vat)?),
            _ => Value::Size(to_size(v, vat)?),
        });
    }
    Ok(())
}

fn check_value_type(d: &Dec, ty: DataType) -> Result<()> {
    d.dialect
        .require(ty, true)
        .map_err(|k| d.err(k).in_type(ty))
}

pub(crate) fn check_registered(d: &Dec, ty: DataType) -> Result<()> {
    d.dialect
        .require(ty, false)
        .map_err(|k| d.err(k).in_type(ty))
}

/// A type code read from the wire.
fn known_type(code: u16, at: usize) -> Result<DataType> {
    DataType::from_code(code).ok_or_else(|| Error::new(ErrorKind::UnknownType(code), at))
}

/// One INFO item, owned: what [`unpack_item`] reads for INFO, without
/// the `Box` a `Value` holds it in.
#[inline]
pub(crate) fn info(d: &mut Dec) -> Result<Info> {
    <Info as crate::item::Layout>::unpack(d).map_err(|e| e.in_type(DataType::Info))
}

pub(crate) fn infos(d: &mut Dec, n: usize) -> Result<Vec<Info>> {
    let mut v = Vec::with_capacity(n);
    for i in 0..n {
        v.push(Info::unpack(d).map_err(|e| e.in_field(format!("info[{i}]")))?);
    }
    Ok(v)
}

pub(crate) fn argv(d: &mut Dec, n: usize) -> Result<Vec<PString>> {
    let mut v = Vec::with_capacity(n);
    for i in 0..n {
        v.push(d.str_required().map_err(|e| e.in_field(format!("[{i}]")))?);
    }
    Ok(v)
}

pub(crate) fn timeval(d: &mut Dec) -> Result<Timeval> {
    Ok(Timeval {
        sec: d.i64()?,
        usec: d.i64()?,
    })
}

fn float_text(d: &mut Dec) -> Result<Option<PString>> {
    d.str()
}

pub(crate) fn float32(d: &mut Dec) -> Result<f32> {
    let at = d.pos();
    match float_text(d)? {
        // C leaves the destination untouched for a NULL string: it stays 0
        None => Ok(0.0),
        Some(s) => float::parse_f32(s.as_bytes())
            .map_err(|_| Error::new(ErrorKind::BadString("not a floating-point number"), at)),
    }
}

pub(crate) fn float64(d: &mut Dec) -> Result<f64> {
    let at = d.pos();
    match float_text(d)? {
        None => Ok(0.0),
        Some(s) => float::parse_f64(s.as_bytes())
            .map_err(|_| Error::new(ErrorKind::BadString("not a floating-point number"), at)),
    }
}

pub(crate) fn nspace(d: &mut Dec) -> Result<Nspace> {
    let at = d.pos();
    let s = d.str_required()?;
    Nspace::new(s)
        .map_err(|_| Error::new(ErrorKind::BadString("namespace longer than 255 bytes"), at))
}

/// A key, read without an intermediate `PString` (a short key is held
/// inline); the checks and errors of `str_required` and `Key::new`.
#[inline]
pub(crate) fn key(d: &mut Dec) -> Result<Key> {
    let at = d.pos();
    match d.str_ref()? {
        None => Err(Error::new(ErrorKind::NullNotAllowed, at)),
        Some(s) => Key::from_bytes(s)
            .map_err(|_| Error::new(ErrorKind::BadString("key longer than 511 bytes"), at)),
    }
}

pub(crate) fn proc_(d: &mut Dec) -> Result<Proc> {
    let nspace = nspace(d).field("nspace")?;
    let rank = if d.dialect == crate::dialect::Dialect::V12 {
        d.int().field("rank")? as u32 // a tagged INT in v12
    } else {
        d.u32().field("rank")?
    };
    Ok(Proc { nspace, rank })
}

/// A `pmix_value_t`: type tag, then the payload.
pub(crate) fn unpack_value(d: &mut Dec) -> Result<Value> {
    let field = d.dialect.value_type_field();
    unpack_value_as(d, field)
}

#[inline]
pub(crate) fn unpack_value_as(d: &mut Dec, field: InfoTypeField) -> Result<Value> {
    let ty = value_type(d, field)?;
    if ty == DataType::Undef {
        return Ok(Value::Undef);
    }
    d.enter()?;
    let r = d
        .driver_tag(crate::legacy::value_driver_type(ty))
        .and_then(|()| match leaf(d, ty) {
            Some(v) => v.map_err(|e| e.in_type(ty)),
            None => unpack_item(d, ty),
        });
    d.leave();
    r
}

/// A value of a hot leaf type (those of INFO values in practice), read
/// in place with the wire forms of its type-table row; `None` for the
/// other types, which go through the table's dispatch. Inlined into the
/// INFO reader, the `Value` is built where it is kept: a `Value` returned
/// through the dispatch's frames is copied out right after it was
/// written, a store-forwarding stall per value.
#[inline(always)]
fn leaf(d: &mut Dec, ty: DataType) -> Option<Result<Value>> {
    use crate::form::{BoolF, Boxed, Form, HexBlob, Str, I32, I64, U32, U64, U8};
    Some(match ty {
        DataType::Bool => BoolF::get(d).map(Value::Bool),
        DataType::Byte => U8::get(d).map(Value::Byte),
        DataType::Uint8 => U8::get(d).map(Value::Uint8),
        DataType::Uint32 => U32::get(d).map(Value::Uint32),
        DataType::Uint64 => U64::get(d).map(Value::Uint64),
        DataType::Int32 => I32::get(d).map(Value::Int32),
        DataType::Int64 => I64::get(d).map(Value::Int64),
        DataType::String => Str::get(d).map(Value::String),
        DataType::ByteObject => <Boxed<HexBlob> as Form<Box<Hex>>>::get(d).map(Value::ByteObject),
        _ => return None,
    })
}

/// The type field of a `pmix_value_t`, checked: a type this dialect can
/// carry in a value (UNDEF included).
#[inline(always)]
pub(crate) fn value_type(d: &mut Dec, field: InfoTypeField) -> Result<DataType> {
    let at = d.pos();
    let code = match field {
        InfoTypeField::Tag => d.tag()?,
        // v20: only the low 16 bits of the int are the type (the rest is C padding)
        InfoTypeField::TaggedInt => d.int()? as u32 as u16,
        InfoTypeField::TaggedIntV1 => {
            let v = d.int()?;
            let code =
                u16::try_from(v).map_err(|_| Error::new(ErrorKind::UnknownType(u16::MAX), at))?;
            crate::legacy::v1_to_v2(code)
        }
    };
    let ty = known_type(code, at)?;
    if !d.dialect.value_packer_knows(ty) {
        return Err(Error::new(
            ErrorKind::ValueTypeNotRegistered {
                ty,
                dialect: d.dialect.name(),
            },
            at,
        )
        .in_type(DataType::Value));
    }
    match ty {
        DataType::Undef => return Ok(ty),
        DataType::Value
        | DataType::Info
        | DataType::Pdata
        | DataType::App
        | DataType::Kval
        | DataType::Buffer => {
            return Err(Error::new(
                ErrorKind::Invalid(format!("a pmix_value_t cannot hold {ty}")),
                at,
            )
            .in_type(DataType::Value))
        }
        _ => {}
    }
    check_value_type(d, ty).map_err(|mut e| {
        e.offset = at;
        e
    })?;
    Ok(ty)
}

/// One item of type `ty`.
pub fn unpack_item(d: &mut Dec, ty: DataType) -> Result<Value> {
    unpack_item_inner(d, ty).map_err(|e| e.in_type(ty))
}

fn unpack_item_inner(d: &mut Dec, ty: DataType) -> Result<Value> {
    Value::unpack_payload(d, ty)
}

/// APP's argc: a system-typed INT, never negative, checked against the
/// bytes remaining (each argument takes at least one).
pub(crate) fn argc(d: &mut Dec) -> Result<usize> {
    let at = d.pos();
    let argc = d.int()?;
    if argc < 0 {
        return Err(Error::new(
            ErrorKind::ValueOutOfRange {
                what: "argc",
                value: argc as i128,
            },
            at,
        ));
    }
    d.check_count(argc as u64, 1, at)
}

/// PMIX_TOPO: the XML, then the hwloc support bytes when there is XML.
pub(crate) fn topology(d: &mut Dec) -> Result<Topology> {
    let xml = d.str().field("xml")?;
    let support = if xml.is_some() {
        d.take_bytes(crate::wire::HWLOC_SUPPORT_BYTES)
            .field("support")?
    } else {
        Bytes::new()
    };
    Ok(Topology { xml, support })
}

pub(crate) fn unpack_darray(d: &mut Dec) -> Result<DataArray> {
    d.enter()?;
    let r = (|| match darray_head(d)? {
        DarrayHead::Undef { size } => Ok(DataArray::Undef { size }),
        DarrayHead::Typed { ty, n: 0 } => Ok(DataArray::Typed {
            elem_type: ty,
            elements: Vec::new(),
        }),
        DarrayHead::Typed { ty, n } => Ok(DataArray::Typed {
            elem_type: ty,
            elements: unpack_items(d, ty, n).field("elements")?,
        }),
    })();
    d.leave();
    r
}

/// What a DATA_ARRAY's header says.
pub(crate) enum DarrayHead {
    Undef {
        size: u64,
    },
    /// `n` elements of `ty` follow (the v20 driver tag already read).
    Typed {
        ty: DataType,
        n: usize,
    },
}

/// A DATA_ARRAY's type and size; the caller has entered one level.
pub(crate) fn darray_head(d: &mut Dec) -> Result<DarrayHead> {
    let at = d.pos();
    let code = d.tag().field("type")?;
    let ty = known_type(code, at)?;
    if ty == DataType::Undef {
        let size = if d.undef_size {
            d.size().field("size")?
        } else {
            0
        };
        return Ok(DarrayHead::Undef { size });
    }
    let at = d.pos();
    let n = d.size().field("size")?;
    let n = if ty == DataType::Pointer {
        n as usize
    } else {
        d.check_count(n, 1, at)?
    };
    // libpmix writes nothing after a zero size (not even a POINTER
    // sentinel or a PID/INT system tag)
    if n > 0 {
        d.driver_tag(ty)?;
    }
    Ok(DarrayHead::Typed { ty, n })
}
