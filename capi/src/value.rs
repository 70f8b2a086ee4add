//! The value and info helpers (`PMIx_Value_*`, `PMIx_Info_*`,
//! `PMIx_Data_array_destruct`).

use crate::abi::*;
use crate::conv::*;
use crate::guard::{exports, intern};
use pmix_types::status::codes::*;
use pmix_types::{DataType, Value};
use std::ffi::{c_char, c_void};
use std::ptr;

fn status(r: Result<(), Status>) -> pmix_status_t {
    r.err().unwrap_or(PMIX_SUCCESS)
}

/// The value `data` points to as `PMIx_Value_load` takes it: the chars for
/// STRING, an element of `ty` for the others.
///
/// # Safety
/// `data` is NULL or as described.
unsafe fn loaded(ty: DataType, data: *const c_void) -> Result<Option<Value>, Status> {
    if data.is_null() {
        return Ok(None);
    }
    if ty == DataType::String {
        // SAFETY: a C string
        return Ok(Some(Value::String(unsafe {
            read_str(data as *const c_char)
        })));
    }
    // SAFETY: an element of ty
    unsafe { read_elem(ty, data as *const u8) }.map(Some)
}

/// A POINTER value's copy holds the same pointer (a Value keeps none).
fn keep_pointer(dest: &mut pmix_value_t, src: &pmix_value_t) {
    if src.r#type == DataType::Pointer.code() {
        // SAFETY: a POINTER value holds `ptr`
        dest.data.ptr = unsafe { src.data.ptr };
    }
}

/// Load `data` of `type` into `val` (its old contents are not freed).
///
/// # Safety
/// `val` is writable; `data` as [`loaded`] takes it.
unsafe fn load(
    val: *mut pmix_value_t,
    data: *const c_void,
    code: pmix_data_type_t,
) -> Result<(), Status> {
    if val.is_null() {
        return Err(PMIX_ERR_BAD_PARAM);
    }
    let ty = DataType::from_code(code).ok_or(PMIX_ERR_UNKNOWN_DATA_TYPE)?;
    if ty == DataType::Pointer {
        // the pointer itself (`data`), as libpmix loads it: what
        // PMIX_EVENT_RETURN_OBJECT hands an event handler back
        // SAFETY: checked non-NULL
        let val = unsafe { &mut *val };
        val.r#type = code;
        val.data.ptr = data as *mut c_void;
        return Ok(());
    }
    // SAFETY: the caller's contract
    let v = unsafe { loaded(ty, data) }?;
    // SAFETY: checked non-NULL
    let val = unsafe { &mut *val };
    match v {
        Some(v) => write_value(val, &v),
        None => {
            // no data: the type alone, nothing held; a BOOL without data
            // is true (an attribute given without a value is set), as
            // libpmix 4.2.2 loads it
            // SAFETY: a zeroed union is valid
            val.data = unsafe { std::mem::zeroed() };
            val.r#type = code;
            if ty == DataType::Bool {
                val.data.flag = true;
            }
            Ok(())
        }
    }
}

/// What `PMIx_Info_list_start` hands out: the infos added so far.
struct InfoList(Vec<pmix_types::Info>);

/// The list behind a `PMIx_Info_list_*` pointer (NULL: BAD_PARAM).
///
/// # Safety
/// `ptr` is NULL or came from `PMIx_Info_list_start` and is not released.
unsafe fn list<'a>(ptr: *mut c_void) -> Result<&'a mut InfoList, Status> {
    // SAFETY: the caller's contract
    unsafe { (ptr as *mut InfoList).as_mut() }.ok_or(PMIX_ERR_BAD_PARAM)
}

/// Add a copy of the info at `info` to the list at `ptr`.
///
/// # Safety
/// As [`list`]; `info` is NULL or an info.
unsafe fn list_copy(ptr: *mut c_void, info: *const pmix_info_t) -> Result<(), Status> {
    // SAFETY: the caller's contract
    let l = unsafe { list(ptr) }?;
    if info.is_null() {
        return Err(PMIX_ERR_BAD_PARAM);
    }
    // SAFETY: checked non-NULL
    l.0.push(unsafe { read_info(info) }?);
    Ok(())
}

/// `PMIx_Value_compare` of two values.
fn compare(a: &Value, b: &Value) -> pmix_value_cmp_t {
    use std::cmp::Ordering::*;
    if a.data_type() != b.data_type() {
        return cmp::PMIX_VALUE_TYPE_DIFFERENT;
    }
    let order = match (a, b) {
        (Value::String(x), Value::String(y)) => x.as_ref().map(|s| s.as_bytes()).cmp(&y.as_ref().map(|s| s.as_bytes())),
        (Value::Proc(x), Value::Proc(y)) => (x.nspace.as_bytes(), x.rank).cmp(&(y.nspace.as_bytes(), y.rank)),
        (Value::Float(x), Value::Float(y)) => x.0.partial_cmp(&y.0).unwrap_or(Equal),
        (Value::Double(x), Value::Double(y)) => x.0.partial_cmp(&y.0).unwrap_or(Equal),
        _ => match (number(a), number(b)) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ if a == b => Equal,
            _ => return cmp::PMIX_VALUE_COMPARISON_NOT_AVAIL,
        },
    };
    match order {
        Equal => cmp::PMIX_EQUAL,
        Greater => cmp::PMIX_VALUE1_GREATER,
        Less => cmp::PMIX_VALUE2_GREATER,
    }
}

/// An integer-valued scalar as an i128.
fn number(v: &Value) -> Option<i128> {
    Some(match v {
        Value::Bool(x) => i128::from(*x),
        Value::Byte(x) | Value::Uint8(x) | Value::Persist(x) | Value::Scope(x) | Value::DataRange(x) => i128::from(*x),
        Value::ProcState(x) | Value::AllocDirective(x) | Value::JobState(x) | Value::LinkState(x) => i128::from(*x),
        Value::Size(x) | Value::Uint64(x) | Value::Time(x) | Value::DevType(x) => i128::from(*x),
        Value::StorMedium(x) | Value::StorAccess(x) | Value::StorPersist(x) => i128::from(*x),
        Value::Pid(x) | Value::Uint(x) | Value::Uint32(x) | Value::ProcRank(x) | Value::InfoDirectives(x) => i128::from(*x),
        Value::Int(x) | Value::Int32(x) | Value::Status(x) => i128::from(*x),
        Value::Int8(x) => i128::from(*x),
        Value::Int16(x) => i128::from(*x),
        Value::Int64(x) => i128::from(*x),
        Value::Uint16(x) | Value::DataTypeCode(x) | Value::IofChannel(x) | Value::LocType(x) | Value::StorAccessType(x) => i128::from(*x),
        _ => return None,
    })
}

fn text(r: Result<Option<String>, pmix_types::print::PrintError>) -> *mut c_char {
    match r {
        Ok(Some(t)) => c_strdup(t.as_bytes()).unwrap_or(ptr::null_mut()),
        _ => ptr::null_mut(),
    }
}

exports! {
    /// `PMIx_Value_load`: load `data` of `type` into `val` (a copy; STRING data is the string).
    fn PMIx_Value_load(val: *mut pmix_value_t, data: *const c_void, r#type: pmix_data_type_t) -> pmix_status_t {
        // SAFETY: checked in load
        status(unsafe { load(val, data, r#type) })
    }

    /// `PMIx_Value_unload`: the value's payload in `*data` (a new string or byte array for STRING and BYTE_OBJECT; copied into the caller's storage at `*data` for the others), its size in `*sz`.
    fn PMIx_Value_unload(val: *mut pmix_value_t, data: *mut *mut c_void, sz: *mut usize) -> pmix_status_t {
        status((|| {
            if val.is_null() || data.is_null() || sz.is_null() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            // SAFETY: checked non-NULL
            let v = unsafe { read_value(val) }?;
            let ty = v.data_type();
            let (p, n) = match &v {
                Value::Undef | Value::String(None) => (ptr::null_mut(), 0),
                // libpmix 4.2.2: a string's size is its length, without the NUL
                Value::String(Some(s)) => (c_strdup(s.as_bytes())? as *mut c_void, s.len()),
                Value::ByteObject(h) if h.0.is_empty() => (ptr::null_mut(), 0),
                Value::ByteObject(h) => {
                    let p = c_calloc(h.0.len(), 1)?;
                    // SAFETY: p has h.0.len() bytes
                    unsafe { ptr::copy_nonoverlapping(h.0.as_ptr(), p, h.0.len()) };
                    (p as *mut c_void, h.0.len())
                }
                v => {
                    // the caller's storage for one element
                    // SAFETY: checked non-NULL
                    let dst = unsafe { *data } as *mut u8;
                    if dst.is_null() {
                        return Err(PMIX_ERR_BAD_PARAM);
                    }
                    let n = elem_size(ty).ok_or(PMIX_ERR_NOT_SUPPORTED)?;
                    // SAFETY: the caller provides storage for one element of the value's type
                    unsafe {
                        ptr::write_bytes(dst, 0, n);
                        write_elem(v, dst)?;
                    }
                    (dst as *mut c_void, n)
                }
            };
            // SAFETY: checked non-NULL
            unsafe {
                *data = p;
                *sz = n;
            }
            Ok(())
        })())
    }

    /// `PMIx_Value_xfer`: a deep copy of `src` into `dest`.
    fn PMIx_Value_xfer(dest: *mut pmix_value_t, src: *const pmix_value_t) -> pmix_status_t {
        status((|| {
            if dest.is_null() || src.is_null() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            // SAFETY: checked non-NULL
            let v = unsafe { read_value(src) }?;
            // SAFETY: checked non-NULL
            let (d, src) = unsafe { (&mut *dest, &*src) };
            write_value(d, &v)?;
            keep_pointer(d, src);
            Ok(())
        })())
    }

    /// `PMIx_Value_destruct`: free what the value holds.
    fn PMIx_Value_destruct(val: *mut pmix_value_t) {
        if !val.is_null() {
            // SAFETY: a value this library or the caller filled
            unsafe { destruct_value(val) }
        }
    }

    /// `PMIx_Value_string`: a newly allocated text of the value (as `PMIx_Data_print` of a PMIX_VALUE).
    fn PMIx_Value_string(val: *const pmix_value_t) -> *mut c_char {
        if val.is_null() {
            return ptr::null_mut();
        }
        // SAFETY: checked non-NULL
        match unsafe { read_value(val) } {
            Ok(v) => text(pmix_codec::print(&Value::Value(Box::new(v)), None)),
            Err(_) => ptr::null_mut(),
        }
    }

    /// `PMIx_Value_compare`: how `v1` compares with `v2` (type, then value).
    fn PMIx_Value_compare(v1: *mut pmix_value_t, v2: *mut pmix_value_t) -> pmix_value_cmp_t {
        if v1.is_null() || v2.is_null() {
            return cmp::PMIX_VALUE_INCOMPATIBLE_OBJECTS;
        }
        // SAFETY: checked non-NULL
        let (a, b) = unsafe { (read_value(v1), read_value(v2)) };
        let (Ok(a), Ok(b)) = (a, b) else {
            return cmp::PMIX_VALUE_COMPARISON_NOT_AVAIL;
        };
        compare(&a, &b)
    }

    /// `PMIx_Value_comparison_string`: the name of a `pmix_value_cmp_t`.
    fn PMIx_Value_comparison_string(cmp: pmix_value_cmp_t) -> *const c_char {
        intern(match cmp {
            cmp::PMIX_EQUAL => "EQUAL",
            cmp::PMIX_VALUE1_GREATER => "VALUE1 GREATER",
            cmp::PMIX_VALUE2_GREATER => "VALUE2 GREATER",
            cmp::PMIX_VALUE_TYPE_DIFFERENT => "DIFFERENT TYPES",
            cmp::PMIX_VALUE_INCOMPATIBLE_OBJECTS => "INCOMPATIBLE OBJECTS",
            cmp::PMIX_VALUE_COMPARISON_NOT_AVAIL => "COMPARISON NOT AVAILABLE",
            _ => "UNKNOWN VALUE",
        })
    }

    /// `PMIx_Info_load`: set the info's key and load `data` of `type` into its value.
    fn PMIx_Info_load(
        info: *mut pmix_info_t,
        key: *const c_char,
        data: *const c_void,
        r#type: pmix_data_type_t
    ) -> pmix_status_t {
        status((|| {
            if info.is_null() || key.is_null() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            // SAFETY: checked non-NULL
            let (i, k) = unsafe { (&mut *info, read_str(key)) };
            write_fixed(&mut i.key, k.as_ref().map_or(&[][..], |k| k.as_bytes()));
            i.flags = 0;
            // SAFETY: as load takes it
            unsafe { load(&mut i.value, data, r#type) }
        })())
    }

    /// `PMIx_Info_xfer`: a deep copy of `src` (key, directives, value) into `dest`.
    fn PMIx_Info_xfer(dest: *mut pmix_info_t, src: *const pmix_info_t) -> pmix_status_t {
        status((|| {
            if dest.is_null() || src.is_null() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            // SAFETY: checked non-NULL
            let i = unsafe { read_info(src) }?;
            // SAFETY: checked non-NULL
            let d = unsafe { &mut *dest };
            write_fixed(&mut d.key, i.key.as_bytes());
            d.flags = i.flags;
            write_value(&mut d.value, &i.value)?;
            // SAFETY: checked non-NULL
            keep_pointer(&mut d.value, unsafe { &(*src).value });
            Ok(())
        })())
    }

    /// `PMIx_Info_string`: a newly allocated text of the info (as `PMIx_Data_print` of a PMIX_INFO).
    fn PMIx_Info_string(info: *const pmix_info_t) -> *mut c_char {
        if info.is_null() {
            return ptr::null_mut();
        }
        // SAFETY: checked non-NULL
        match unsafe { read_info(info) } {
            Ok(i) => text(pmix_codec::print(&Value::Info(Box::new(i)), None)),
            Err(_) => ptr::null_mut(),
        }
    }

    /// `PMIx_Info_list_start`: a new, empty info list.
    fn PMIx_Info_list_start() -> *mut c_void {
        Box::into_raw(Box::new(InfoList(Vec::new()))) as *mut c_void
    }

    /// `PMIx_Info_list_add`: add `key` with `value` of `type` (loaded as `PMIx_Info_load` loads it) to the list.
    fn PMIx_Info_list_add(ptr: *mut c_void, key: *const c_char, value: *const c_void, r#type: pmix_data_type_t) -> pmix_status_t {
        status((|| {
            // SAFETY: zeroed storage is an empty info
            let mut i: pmix_info_t = unsafe { std::mem::zeroed() };
            // SAFETY: as PMIx_Info_load takes them
            let rc = unsafe { PMIx_Info_load(&mut i, key, value, r#type) };
            if rc != PMIX_SUCCESS {
                return Err(rc);
            }
            // SAFETY: as list_copy takes them; i was filled just above
            let r = unsafe { list_copy(ptr, &i) };
            // SAFETY: what PMIx_Info_load allocated
            unsafe { destruct_value(&mut i.value) };
            r
        })())
    }

    /// `PMIx_Info_list_insert`: add the info to the list (a copy: the caller's info stays the caller's).
    fn PMIx_Info_list_insert(ptr: *mut c_void, info: *mut pmix_info_t) -> pmix_status_t {
        // SAFETY: as list_copy takes them
        status(unsafe { list_copy(ptr, info) })
    }

    /// `PMIx_Info_list_xfer`: add a copy of the info to the list.
    fn PMIx_Info_list_xfer(ptr: *mut c_void, info: *const pmix_info_t) -> pmix_status_t {
        // SAFETY: as list_copy takes them
        status(unsafe { list_copy(ptr, info) })
    }

    /// `PMIx_Info_list_convert`: the list's infos as a new PMIX_INFO data array in `par`.
    fn PMIx_Info_list_convert(ptr: *mut c_void, par: *mut pmix_data_array_t) -> pmix_status_t {
        status((|| {
            // SAFETY: as list takes it
            let l = unsafe { list(ptr) }?;
            if par.is_null() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            let vals: Vec<Value> = l.0.iter().cloned().map(|i| Value::Info(Box::new(i))).collect();
            let array = if vals.is_empty() { ptr::null_mut() } else { c_elems(DataType::Info, &vals)? };
            // SAFETY: checked non-NULL
            unsafe {
                *par = pmix_data_array_t { r#type: DataType::Info.code(), size: vals.len(), array };
            }
            Ok(())
        })())
    }

    /// `PMIx_Info_list_release`: free the list.
    fn PMIx_Info_list_release(ptr: *mut c_void) {
        if !ptr.is_null() {
            // SAFETY: from PMIx_Info_list_start, released once
            drop(unsafe { Box::from_raw(ptr as *mut InfoList) });
        }
    }

    /// `PMIx_Data_array_destruct`: free the array's elements.
    fn PMIx_Data_array_destruct(d: *mut pmix_data_array_t) {
        if !d.is_null() {
            // SAFETY: an array this library or the caller filled
            unsafe { destruct_darray(d) }
        }
    }
}
