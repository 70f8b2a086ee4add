//! Packing: runs of items, `pmix_value_t` and DATA_ARRAY framing. One
//! item's payload is written by the wire form its type-table row names
//! (`dispatch.rs`, `layout.rs`). Layouts follow bfrops.md §4 (modern
//! dialects) with the integer family of `Enc`.

use crate::dialect::Dialect;
use crate::dialect::Ints;
use crate::error::{ErrorKind, Field, Result};
use crate::float;
use crate::item::{Layout, Payload};
use crate::legacy::InfoTypeField;
use crate::wire::{flex_encode_all, system_tag, zigzag, Enc, Sizer, HWLOC_SUPPORT_BYTES};
use pmix_types::*;

/// Pack `values`, all of type `ty`, as the items of one unit or array
/// (no count). POINTER is the one type whose items are not packed one by
/// one: any number of pointers is a single `01` byte.
pub fn pack_items(e: &mut Enc, ty: DataType, values: &[Value]) -> Result<()> {
    check_registered(e, ty)?;
    if pack_scalars(e, ty, values) {
        return Ok(());
    }
    for (i, v) in values.iter().enumerate() {
        if v.data_type() != ty {
            return Err(e
                .err(ErrorKind::Invalid(format!(
                    "element {i} is {}, not {ty}",
                    v.data_type()
                )))
                .in_type(ty));
        }
    }
    if ty == DataType::Pointer {
        if e.dialect == Dialect::V12 {
            // v12 writes nothing at all for pointers
            return Ok(());
        }
        if values.len() > crate::wire::MAX_POINTERS {
            return Err(e.err(ErrorKind::CountTooLarge {
                count: values.len() as u64,
                remaining: crate::wire::MAX_POINTERS as u64,
            }));
        }
        // one sentinel byte per call, even for zero pointers
        e.u8(1);
        return Ok(());
    }
    if let Some(tag) = system_tag(ty, e.ints, e.dialect) {
        // INT/UINT/SIZE/PID (and v12's widened types): one tag for the whole
        // call, then bare values
        e.sys_tag(tag);
        for v in values {
            match (tag, v) {
                (DataType::Uint32, Value::Pid(x)) => e.u32(*x),
                (DataType::Int32, Value::Int(x) | Value::Status(x)) => e.i32(*x),
                (DataType::Int32, Value::Uint(x) | Value::ProcRank(x)) => e.i32(*x as i32),
                (DataType::Int32, Value::Scope(x) | Value::DataRange(x) | Value::Persist(x)) => {
                    e.i32(*x as i32)
                }
                (DataType::Uint64, Value::Size(x)) => e.u64(*x),
                _ => unreachable!("system_tag covers exactly these pairs"),
            }
        }
        return Ok(());
    }
    if e.dialect == Dialect::V12 {
        match ty {
            // v12 packs nothing for these (bfrops.md §8.3): the count only
            DataType::InfoDirectives | DataType::ProcState => return Ok(()),
            DataType::DataArray | DataType::ProcInfo | DataType::Query => {
                return Err(e
                    .err(ErrorKind::NotSupported(
                        "v12 cannot pack DATA_ARRAY, PROC_INFO or QUERY",
                    ))
                    .in_type(ty));
            }
            _ => {}
        }
    }
    for (i, v) in values.iter().enumerate() {
        pack_item(e, v).map_err(|err| {
            if values.len() > 1 {
                err.in_field(format!("[{i}]"))
            } else {
                err
            }
        })?;
    }
    Ok(())
}

fn check_value_type(e: &Enc, ty: DataType) -> Result<()> {
    e.dialect
        .require(ty, true)
        .map_err(|k| e.err(k).in_type(ty))
}

/// Arrays of plain integers, written in one tight loop that also checks
/// the element types. Returns false (having written nothing) for other
/// types or on a mismatched element, which the generic path then reports.
fn pack_scalars(e: &mut Enc, ty: DataType, values: &[Value]) -> bool {
    macro_rules! each {
        ($($variant:ident => $write:ident, $flex:expr);*) => {
            match ty {
                $(DataType::$variant => {
                    if !values.iter().all(|v| matches!(v, Value::$variant(_))) {
                        return false;
                    }
                    // a closure, not a `fn` pointer (called per item where
                    // the loop is not inlined)
                    let flex = $flex;
                    match (e.ints, flex) {
                        // flex integers: one sizing of the output for the whole run
                        (Ints::Flex, Some(f)) => flex_encode_all(e.out, values.len(), values.iter().map(f)),
                        _ => {
                            for v in values {
                                if let Value::$variant(x) = v {
                                    e.$write(*x);
                                }
                            }
                        }
                    }
                    true
                })*
                _ => false,
            }
        };
    }
    each!(
        Uint64 => u64, Some(|v: &Value| if let Value::Uint64(x) = v { *x } else { 0 });
        Int64 => i64, Some(|v: &Value| if let Value::Int64(x) = v { zigzag(*x) } else { 0 });
        Uint32 => u32, Some(|v: &Value| if let Value::Uint32(x) = v { *x as u64 } else { 0 });
        Int32 => i32, Some(|v: &Value| if let Value::Int32(x) = v { zigzag(*x as i64) } else { 0 });
        Uint16 => u16, Some(|v: &Value| if let Value::Uint16(x) = v { *x as u64 } else { 0 });
        Int16 => i16, Some(|v: &Value| if let Value::Int16(x) = v { zigzag(*x as i64) } else { 0 });
        Uint8 => u8, None::<fn(&Value) -> u64>;
        Byte => u8, None::<fn(&Value) -> u64>
    )
}

fn check_registered(e: &Enc, ty: DataType) -> Result<()> {
    e.dialect
        .require(ty, false)
        .map_err(|k| e.err(k).in_type(ty))
}

pub(crate) fn infos(e: &mut Enc, list: &[Info]) -> Result<()> {
    for (i, info) in list.iter().enumerate() {
        info.pack(e)
            .map_err(|err| err.in_field(format!("info[{i}]")))?;
    }
    Ok(())
}

pub(crate) fn argv(e: &mut Enc, list: &[PString]) -> Result<()> {
    for s in list {
        e.str(Some(s))?;
    }
    Ok(())
}

pub(crate) fn timeval(e: &mut Enc, t: &Timeval) {
    e.i64(t.sec);
    e.i64(t.usec);
}

pub(crate) fn float32(e: &mut Enc, v: f32) -> Result<()> {
    let s = float::format_f32(v);
    e.str(Some(&PString::from(s.as_str())))
}

pub(crate) fn float64(e: &mut Enc, v: f64) -> Result<()> {
    let s = float::format_f64(v);
    e.str(Some(&PString::from(s.as_str())))
}

pub(crate) fn proc_(e: &mut Enc, p: &Proc) -> Result<()> {
    e.str(Some(p.nspace.as_pstring()))?;
    if e.dialect == Dialect::V12 {
        e.int(p.rank as i32); // a tagged INT in v12
    } else {
        e.u32(p.rank);
    }
    Ok(())
}

fn type_field(e: &mut Enc, code: u16, field: InfoTypeField) {
    match field {
        InfoTypeField::Tag => e.tag(code),
        InfoTypeField::TaggedInt => e.int(code as i32),
        InfoTypeField::TaggedIntV1 => e.int(crate::legacy::v2_to_v1(code) as i32),
    }
}

/// A `pmix_value_t`: the type tag, then the payload (bfrops.md §4.6).
pub(crate) fn pack_value(e: &mut Enc, v: &Value) -> Result<()> {
    let field = e.dialect.value_type_field();
    pack_value_as(e, v, field)
}

pub(crate) fn pack_value_as(e: &mut Enc, v: &Value, field: InfoTypeField) -> Result<()> {
    if e.dialect == Dialect::V12 {
        // v12's value packer sends a DATA_ARRAY of INFO as an INFO_ARRAY and
        // a PROC_RANK as an INT; other arrays it cannot send
        match v {
            Value::DataArray(a) => {
                return match &**a {
                    DataArray::Typed {
                        elem_type: DataType::Info,
                        elements,
                    } => {
                        let infos: Vec<Info> = elements
                            .iter()
                            .filter_map(|x| match x {
                                Value::Info(i) => Some((**i).clone()),
                                _ => None,
                            })
                            .collect();
                        pack_value_as(e, &Value::InfoArray(infos.into()), field)
                    }
                    _ => Err(e.err(ErrorKind::NotSupported(
                        "v12 values hold only arrays of INFO",
                    ))),
                };
            }
            Value::ProcRank(r) => return pack_value_as(e, &Value::Int(*r as i32), field),
            _ => {}
        }
    }
    let ty = v.data_type();
    if !e.dialect.value_packer_knows(ty) {
        return Err(e
            .err(ErrorKind::ValueTypeNotRegistered {
                ty,
                dialect: e.dialect.name(),
            })
            .in_type(DataType::Value));
    }
    match v {
        Value::Undef => {
            type_field(e, 0, field);
            return Ok(());
        }
        // types the C union cannot hold (libpmix master refuses them; 4.2.2 corrupts memory)
        Value::Value(_)
        | Value::Info(_)
        | Value::Pdata(_)
        | Value::App(_)
        | Value::Kval(_)
        | Value::Buffer(_) => {
            return Err(e
                .err(ErrorKind::Invalid(format!(
                    "a pmix_value_t cannot hold {ty}"
                )))
                .in_type(DataType::Value));
        }
        _ => {}
    }
    check_value_type(e, ty)?;
    e.enter()?;
    type_field(e, ty.code(), field);
    e.driver_tag(crate::legacy::value_driver_type(ty));
    let r = pack_item(e, v);
    e.leave();
    r
}

/// One item of any type.
pub fn pack_item(e: &mut Enc, v: &Value) -> Result<()> {
    pack_item_inner(e, v).map_err(|err| err.in_type(v.data_type()))
}

fn pack_item_inner(e: &mut Enc, v: &Value) -> Result<()> {
    v.pack_payload(e)
}

/// PMIX_REGEX in the form its content has (bfrops.md §4.14).
pub(crate) fn regex(e: &mut Enc, r: &Regex) -> Result<()> {
    match r {
        Regex::Text(s) => {
            crate::regex::check_text_form(s.as_bytes()).map_err(|k| e.err(k))?;
            e.raw(s.as_bytes());
            e.u8(0);
        }
        Regex::Blob(b) => {
            crate::regex::check_blob_form(b, e.release).map_err(|k| e.err(k))?;
            e.raw(b);
        }
        Regex::Packed(s) => {
            e.i32(1);
            e.str(s.as_ref())?;
        }
    }
    Ok(())
}

/// PMIX_TOPO: the XML, then the hwloc support bytes when there is XML.
pub(crate) fn topology(e: &mut Enc, t: &Topology) -> Result<()> {
    e.str(t.xml.as_ref()).field("xml")?;
    match (&t.xml, t.support.len()) {
        (Some(_), HWLOC_SUPPORT_BYTES) | (None, 0) => {
            e.raw(&t.support);
            Ok(())
        }
        _ => Err(e
            .err(ErrorKind::Invalid(format!(
                "topology support must be {} bytes with XML and none without",
                HWLOC_SUPPORT_BYTES
            )))
            .in_field("support")),
    }
}

/// DATA_ARRAY: element type tag, SIZE, elements (bfrops.md §4.10, §9.3).
pub(crate) fn pack_darray(e: &mut Enc, a: &DataArray) -> Result<()> {
    e.enter()?;
    let r = match a {
        DataArray::Undef { size } => {
            e.tag(0);
            if e.undef_size {
                e.size(*size);
                Ok(())
            } else if *size > 0 {
                // 7.0 writes no size: a typeless array of n elements cannot be sent
                Err(e.err(ErrorKind::Invalid(format!(
                    "7.0's {} carries no size for a typeless DATA_ARRAY ({size} elements)",
                    e.dialect
                ))))
            } else {
                Ok(())
            }
        }
        DataArray::Typed {
            elem_type,
            elements,
        } => {
            e.tag(elem_type.code());
            e.size(elements.len() as u64);
            if elements.is_empty() {
                // libpmix 4.2.2 writes nothing after a zero size
                Ok(())
            } else {
                e.driver_tag(*elem_type);
                pack_items(e, *elem_type, elements)
            }
        }
    };
    e.leave();
    r
}

/// The bytes `pack::pack_items` writes for `values` of type `ty` (values
/// it accepts).
pub(crate) fn items_len(s: &Sizer, ty: DataType, values: &[Value]) -> usize {
    if ty == DataType::Pointer {
        // one sentinel per run; v12 writes nothing
        return if s.dialect == Dialect::V12 { 0 } else { s.u8() };
    }
    if let Some(tag) = system_tag(ty, s.ints, s.dialect) {
        let each: usize = values
            .iter()
            .map(|v| match v {
                Value::Pid(x) => s.u32(*x),
                Value::Int(x) | Value::Status(x) => s.i32(*x),
                Value::Uint(x) | Value::ProcRank(x) => s.i32(*x as i32),
                Value::Scope(x) | Value::DataRange(x) | Value::Persist(x) => s.i32(*x as i32),
                Value::Size(x) => s.u64(*x),
                other => other.payload_len(s),
            })
            .sum();
        return s.sys_tag(tag) + each;
    }
    if s.dialect == Dialect::V12 && matches!(ty, DataType::InfoDirectives | DataType::ProcState) {
        return 0;
    }
    values.iter().map(|v| v.payload_len(s)).sum()
}

fn type_field_len(s: &Sizer, code: u16, field: InfoTypeField) -> usize {
    match field {
        InfoTypeField::Tag => s.tag(code),
        InfoTypeField::TaggedInt => s.int(code as i32),
        InfoTypeField::TaggedIntV1 => s.int(crate::legacy::v2_to_v1(code) as i32),
    }
}

/// The bytes `pack::pack_value_as` writes for `v`.
pub(crate) fn value_len(s: &Sizer, v: &Value, field: InfoTypeField) -> usize {
    if s.dialect == Dialect::V12 {
        match v {
            Value::DataArray(a) => {
                let infos: Vec<Info> = match &**a {
                    DataArray::Typed { elements, .. } => elements
                        .iter()
                        .filter_map(|x| match x {
                            Value::Info(i) => Some((**i).clone()),
                            _ => None,
                        })
                        .collect(),
                    DataArray::Undef { .. } => Vec::new(),
                };
                return value_len(s, &Value::InfoArray(infos.into()), field);
            }
            Value::ProcRank(r) => return value_len(s, &Value::Int(*r as i32), field),
            _ => {}
        }
    }
    let ty = v.data_type();
    if ty == DataType::Undef {
        return type_field_len(s, 0, field);
    }
    type_field_len(s, ty.code(), field)
        + s.driver_tag(crate::legacy::value_driver_type(ty))
        + v.payload_len(s)
}

/// The bytes `pack::pack_darray` writes for `a`.
pub(crate) fn darray_len(s: &Sizer, a: &DataArray) -> usize {
    match a {
        DataArray::Undef { size } => s.tag(0) + if s.undef_size { s.size(*size) } else { 0 },
        DataArray::Typed {
            elem_type,
            elements,
        } => {
            let head = s.tag(elem_type.code()) + s.size(elements.len() as u64);
            if elements.is_empty() {
                head
            } else {
                head + s.driver_tag(*elem_type) + items_len(s, *elem_type, elements)
            }
        }
    }
}
