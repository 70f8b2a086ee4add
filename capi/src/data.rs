//! The data functions of the standard's chapter "Data Packing and
//! Unpacking": pack, unpack, copy, print, the payload moves and
//! compression, over pmix-codec. The buffer's state lives in the caller's
//! `pmix_data_buffer_t` (base, pack and unpack pointers; malloc'd bytes).

use crate::abi::*;
use crate::conv::*;
use crate::guard::exports;
use pmix_codec::{BufferType, Dialect, Format};
use pmix_types::status::codes::*;
use pmix_types::{DataType, Value};
use std::ffi::{c_char, c_void};
use std::ptr;
use std::sync::OnceLock;

/// The wire format this process packs in: as libpmix chooses its own,
/// from `PMIX_MCA_bfrops` (a component list; default v41),
/// `PMIX_BFROP_BUFFER_TYPE` (default non-described) and
/// `PMIX_MCA_psquash=native` (fixed-width integers). Read once.
pub fn format() -> Format {
    static FMT: OnceLock<Format> = OnceLock::new();
    *FMT.get_or_init(|| {
        let get = |k: &str| std::env::var(k).ok();
        let dialect = get("PMIX_MCA_bfrops")
            .and_then(|l| pmix_codec::select::from_module_list(&l))
            .unwrap_or(Dialect::V41);
        let bt = get("PMIX_BFROP_BUFFER_TYPE")
            .map_or(BufferType::NonDesc, |v| BufferType::from_env_value(&v));
        let mut f = Format::new(dialect, bt);
        f.fixed_ints = get("PMIX_MCA_psquash").is_some_and(|v| v.trim() == "native");
        f
    })
}

/// The unread bytes of a buffer (checked: the pointers must lie in order
/// within the packed bytes).
///
/// # Safety
/// `b` is a constructed buffer.
unsafe fn unread(b: &pmix_data_buffer_t) -> Result<&[u8], Status> {
    if b.base_ptr.is_null() || b.bytes_used == 0 {
        return Ok(&[]);
    }
    let start = if b.unpack_ptr.is_null() {
        0
    } else {
        (b.unpack_ptr as usize).wrapping_sub(b.base_ptr as usize)
    };
    if start > b.bytes_used || b.bytes_used > b.bytes_allocated {
        return Err(PMIX_ERR_BAD_PARAM);
    }
    // SAFETY: base_ptr holds bytes_used bytes (checked against allocated)
    Ok(unsafe {
        std::slice::from_raw_parts((b.base_ptr as *const u8).add(start), b.bytes_used - start)
    })
}

/// Append bytes to a buffer, growing it with realloc.
fn append(b: &mut pmix_data_buffer_t, bytes: &[u8]) -> Result<(), Status> {
    if bytes.is_empty() {
        return Ok(());
    }
    let read = if b.base_ptr.is_null() || b.unpack_ptr.is_null() {
        0
    } else {
        (b.unpack_ptr as usize).wrapping_sub(b.base_ptr as usize)
    };
    if read > b.bytes_used || b.bytes_used > b.bytes_allocated && !b.base_ptr.is_null() {
        return Err(PMIX_ERR_BAD_PARAM);
    }
    let used = if b.base_ptr.is_null() {
        0
    } else {
        b.bytes_used
    };
    let need = used.checked_add(bytes.len()).ok_or(PMIX_ERR_NOMEM)?;
    if b.base_ptr.is_null() || need > b.bytes_allocated {
        let cap = need.max(b.bytes_allocated.saturating_mul(2)).max(64);
        // SAFETY: base_ptr is NULL or malloc'd; the result is checked
        let p = unsafe { libc::realloc(b.base_ptr as *mut c_void, cap) } as *mut c_char;
        if p.is_null() {
            return Err(PMIX_ERR_NOMEM);
        }
        b.base_ptr = p;
        b.bytes_allocated = cap;
    }
    // SAFETY: the allocation holds need bytes
    unsafe {
        ptr::copy_nonoverlapping(
            bytes.as_ptr(),
            (b.base_ptr as *mut u8).add(used),
            bytes.len(),
        );
        b.bytes_used = need;
        b.pack_ptr = b.base_ptr.add(need);
        b.unpack_ptr = b.base_ptr.add(read);
    }
    Ok(())
}

/// Free the bytes and zero the buffer (`PMIX_DATA_BUFFER_DESTRUCT`).
fn clear(b: &mut pmix_data_buffer_t) {
    // SAFETY: base_ptr is NULL or malloc'd
    unsafe { libc::free(b.base_ptr as *mut c_void) };
    *b = empty_buffer();
}

fn empty_buffer() -> pmix_data_buffer_t {
    pmix_data_buffer_t {
        base_ptr: ptr::null_mut(),
        pack_ptr: ptr::null_mut(),
        unpack_ptr: ptr::null_mut(),
        bytes_allocated: 0,
        bytes_used: 0,
    }
}

/// Replace the buffer's contents with malloc'd `bytes` of `len` (owned).
fn adopt(b: &mut pmix_data_buffer_t, bytes: *mut c_char, len: usize) {
    clear(b);
    if bytes.is_null() || len == 0 {
        // SAFETY: NULL or malloc'd
        unsafe { libc::free(bytes as *mut c_void) };
        return;
    }
    b.base_ptr = bytes;
    // SAFETY: len bytes at bytes
    b.pack_ptr = unsafe { bytes.add(len) };
    b.unpack_ptr = bytes;
    b.bytes_allocated = len;
    b.bytes_used = len;
}

fn data_type(code: pmix_data_type_t) -> Result<DataType, Status> {
    DataType::from_code(code).ok_or(PMIX_ERR_UNKNOWN_DATA_TYPE)
}

/// The value `src` points to for print and copy: the string itself for
/// STRING (as libpmix takes it), an element of `ty` otherwise.
///
/// # Safety
/// `src` is an element of `ty` (the chars for STRING).
unsafe fn source(ty: DataType, src: *const c_void) -> Result<Value, Status> {
    if ty == DataType::String {
        // SAFETY: a C string
        return Ok(Value::String(unsafe { read_str(src as *const c_char) }));
    }
    // SAFETY: the caller's contract
    unsafe { read_elem(ty, src as *const u8) }
}

fn status(r: Result<(), Status>) -> pmix_status_t {
    r.err().unwrap_or(PMIX_SUCCESS)
}

/// The byte object's bytes (empty for NULL).
///
/// # Safety
/// `bo.bytes` holds `bo.size` bytes or is NULL.
unsafe fn bo_bytes(bo: &pmix_byte_object_t) -> &[u8] {
    if bo.bytes.is_null() || bo.size == 0 {
        return &[];
    }
    // SAFETY: the caller's contract
    unsafe { std::slice::from_raw_parts(bo.bytes as *const u8, bo.size) }
}

/// `f` of the `size` bytes at `inbytes`, newly allocated in `*outbytes`
/// and `*nbytes`; false if a pointer is NULL or `f` answers None.
///
/// # Safety
/// `inbytes` holds `size` bytes; the out pointers are writable.
unsafe fn transform(
    inbytes: *const u8,
    size: usize,
    outbytes: *mut *mut u8,
    nbytes: *mut usize,
    f: impl FnOnce(&[u8]) -> Option<Vec<u8>>,
) -> bool {
    if inbytes.is_null() || outbytes.is_null() || nbytes.is_null() {
        return false;
    }
    // SAFETY: the caller's contract
    let data = unsafe { std::slice::from_raw_parts(inbytes, size) };
    f(data).is_some_and(|v| out_bytes(&v, outbytes, nbytes))
}

fn out_bytes(v: &[u8], out: *mut *mut u8, n: *mut usize) -> bool {
    let Ok(p) = c_calloc(v.len(), 1) else {
        return false;
    };
    // SAFETY: p has v.len() bytes; out and n were checked non-NULL
    unsafe {
        ptr::copy_nonoverlapping(v.as_ptr(), p, v.len());
        *out = p;
        *n = v.len();
    }
    true
}

exports! {
    /// `PMIx_Data_pack`: pack `num_vals` values of `type` from `src` into `buffer`.
    fn PMIx_Data_pack(
        _target: *const pmix_proc_t,
        buffer: *mut pmix_data_buffer_t,
        src: *mut c_void,
        num_vals: i32,
        r#type: pmix_data_type_t
    ) -> pmix_status_t {
        status((|| {
            if buffer.is_null() || num_vals < 0 || (src.is_null() && num_vals > 0) {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            let ty = data_type(r#type)?;
            let sz = elem_size(ty).ok_or(PMIX_ERR_NOT_SUPPORTED)?;
            let vals = (0..num_vals as usize)
                // SAFETY: src holds num_vals elements of ty
                .map(|i| unsafe { read_elem(ty, (src as *const u8).add(i * sz)) })
                .collect::<Result<Vec<_>, _>>()?;
            let bytes = pmix_codec::encode(&format(), ty, &vals).map_err(|e| e.status())?;
            // SAFETY: checked non-NULL
            append(unsafe { &mut *buffer }, &bytes)
        })())
    }

    /// `PMIx_Data_unpack`: unpack up to `*max_num_values` values of `type` into `dest`.
    fn PMIx_Data_unpack(
        _source: *const pmix_proc_t,
        buffer: *mut pmix_data_buffer_t,
        dest: *mut c_void,
        max_num_values: *mut i32,
        r#type: pmix_data_type_t
    ) -> pmix_status_t {
        status((|| {
            if buffer.is_null() || dest.is_null() || max_num_values.is_null() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            // SAFETY: checked non-NULL
            let (b, max) = unsafe { (&mut *buffer, *max_num_values) };
            if max <= 0 {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            let ty = data_type(r#type)?;
            let sz = elem_size(ty).ok_or(PMIX_ERR_NOT_SUPPORTED)?;
            let fmt = format();
            // SAFETY: a constructed buffer
            let rest = unsafe { unread(b) }?;
            if rest.is_empty() {
                return Err(PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
            }
            let (vals, used) = pmix_codec::decode_unit(&fmt, ty, rest).map_err(|e| e.status())?;
            let take = vals.len().min(max as usize);
            for (i, v) in vals[..take].iter().enumerate() {
                // SAFETY: dest holds max elements of ty
                unsafe {
                    let p = (dest as *mut u8).add(i * sz);
                    ptr::write_bytes(p, 0, sz);
                    write_elem(v, p)?;
                }
            }
            // SAFETY: checked non-NULL
            unsafe { *max_num_values = take as i32 };
            // SAFETY: used <= rest.len(), within the buffer
            let start = unsafe { (rest.as_ptr() as *mut c_char).offset_from(b.base_ptr) } as usize;
            if take == vals.len() {
                // SAFETY: within the packed bytes
                b.unpack_ptr = unsafe { b.base_ptr.add(start + used) };
                return Ok(());
            }
            // the rest of the unit becomes a unit of its own, so the next
            // unpack of this type reads it
            let mut bytes = pmix_codec::encode(&fmt, ty, &vals[take..]).map_err(|e| e.status())?;
            bytes.extend_from_slice(&rest[used..]);
            // SAFETY: the buffer's bytes were malloc'd; keep the read part
            let mut kept = empty_buffer();
            let head = unsafe { std::slice::from_raw_parts(b.base_ptr as *const u8, start) }.to_vec();
            append(&mut kept, &head)?;
            // SAFETY: kept.base_ptr holds start bytes (or is NULL when start is 0)
            kept.unpack_ptr = if kept.base_ptr.is_null() { ptr::null_mut() } else { unsafe { kept.base_ptr.add(start) } };
            append(&mut kept, &bytes)?;
            if kept.unpack_ptr.is_null() {
                kept.unpack_ptr = kept.base_ptr;
            }
            clear(b);
            *b = kept;
            Err(PMIX_ERR_UNPACK_INADEQUATE_SPACE)
        })())
    }

    /// `PMIx_Data_copy`: a newly allocated copy of the value of `type` at `src`.
    fn PMIx_Data_copy(dest: *mut *mut c_void, src: *mut c_void, r#type: pmix_data_type_t) -> pmix_status_t {
        status((|| {
            if dest.is_null() || src.is_null() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            let ty = data_type(r#type)?;
            // SAFETY: src is an element of ty
            let v = unsafe { source(ty, src) }?;
            let p = match &v {
                Value::String(Some(s)) => c_strdup(s.as_bytes())? as *mut c_void,
                Value::String(None) => return Err(PMIX_ERR_BAD_PARAM),
                v => c_elems(ty, std::slice::from_ref(v))?,
            };
            // SAFETY: checked non-NULL
            unsafe { *dest = p };
            Ok(())
        })())
    }

    /// `PMIx_Data_print`: a newly allocated text of the value of `type` at `src`, after `prefix`.
    fn PMIx_Data_print(
        output: *mut *mut c_char,
        prefix: *const c_char,
        src: *mut c_void,
        r#type: pmix_data_type_t
    ) -> pmix_status_t {
        status((|| {
            if output.is_null() || src.is_null() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            // libpmix 4.2.2 answers UNKNOWN_DATA_TYPE here (the standard: BAD_PARAM)
            let ty = data_type(r#type)?;
            // SAFETY: src is an element of ty
            let v = unsafe { source(ty, src) }?;
            // SAFETY: NULL or a C string
            let pre = unsafe { read_str(prefix) };
            let pre = pre.as_ref().map(|p| p.to_string_lossy());
            let text = pmix_codec::print(&v, pre.as_deref()).map_err(|e| e.status)?;
            let p = match text {
                Some(t) => c_strdup(t.as_bytes())?,
                None => ptr::null_mut(),
            };
            // SAFETY: checked non-NULL
            unsafe { *output = p };
            Ok(())
        })())
    }

    /// `PMIx_Data_copy_payload`: append the unread bytes of `src` to `dest`.
    fn PMIx_Data_copy_payload(dest: *mut pmix_data_buffer_t, src: *mut pmix_data_buffer_t) -> pmix_status_t {
        status((|| {
            if dest.is_null() || src.is_null() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            // SAFETY: checked non-NULL, constructed buffers
            let bytes = unsafe { unread(&*src) }?.to_vec();
            // SAFETY: checked non-NULL
            append(unsafe { &mut *dest }, &bytes)
        })())
    }

    /// `PMIx_Data_load`: the buffer takes over the payload's bytes (the payload is emptied).
    fn PMIx_Data_load(buffer: *mut pmix_data_buffer_t, payload: *mut pmix_byte_object_t) -> pmix_status_t {
        status((|| {
            if buffer.is_null() || payload.is_null() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            // SAFETY: checked non-NULL
            let (b, bo) = unsafe { (&mut *buffer, &mut *payload) };
            adopt(b, bo.bytes, bo.size);
            bo.bytes = ptr::null_mut();
            bo.size = 0;
            Ok(())
        })())
    }

    /// `PMIx_Data_unload`: the unread bytes move to `payload`; the buffer is emptied.
    fn PMIx_Data_unload(buffer: *mut pmix_data_buffer_t, payload: *mut pmix_byte_object_t) -> pmix_status_t {
        status((|| {
            if buffer.is_null() || payload.is_null() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            // SAFETY: checked non-NULL
            let (b, bo) = unsafe { (&mut *buffer, &mut *payload) };
            // SAFETY: a constructed buffer
            let rest = unsafe { unread(b) }?;
            *bo = pmix_byte_object_t { bytes: ptr::null_mut(), size: 0 };
            if !rest.is_empty() {
                let p = c_calloc(rest.len(), 1)?;
                // SAFETY: p has rest.len() bytes
                unsafe { ptr::copy_nonoverlapping(rest.as_ptr(), p, rest.len()) };
                *bo = pmix_byte_object_t { bytes: p as *mut c_char, size: rest.len() };
            }
            clear(b);
            Ok(())
        })())
    }

    /// `PMIx_Data_embed`: replace the buffer's contents with a copy of the payload's bytes.
    fn PMIx_Data_embed(buffer: *mut pmix_data_buffer_t, payload: *const pmix_byte_object_t) -> pmix_status_t {
        status((|| {
            if buffer.is_null() || payload.is_null() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            // SAFETY: checked non-NULL; bytes holds size bytes
            let bytes = unsafe { bo_bytes(&*payload) }.to_vec();
            // SAFETY: checked non-NULL
            let b = unsafe { &mut *buffer };
            clear(b);
            append(b, &bytes)?;
            b.unpack_ptr = b.base_ptr;
            Ok(())
        })())
    }

    /// `PMIx_Data_compress`: a newly allocated compressed copy of `inbytes`; false if not compressed.
    fn PMIx_Data_compress(inbytes: *const u8, size: usize, outbytes: *mut *mut u8, nbytes: *mut usize) -> bool {
        // SAFETY: as transform takes them
        unsafe { transform(inbytes, size, outbytes, nbytes, pmix_codec::compress::compress) }
    }

    /// `PMIx_Data_decompress`: a newly allocated decompressed copy of `inbytes`; false on failure.
    fn PMIx_Data_decompress(inbytes: *const u8, size: usize, outbytes: *mut *mut u8, nbytes: *mut usize) -> bool {
        // SAFETY: as transform takes them
        unsafe { transform(inbytes, size, outbytes, nbytes, |d| pmix_codec::compress::decompress(d).ok()) }
    }

    /// `PMIx_Data_buffer_construct` (`PMIX_DATA_BUFFER_CONSTRUCT`): an empty buffer.
    fn PMIx_Data_buffer_construct(buffer: *mut pmix_data_buffer_t) {
        if !buffer.is_null() {
            // SAFETY: checked non-NULL; the caller's storage, not yet holding bytes
            unsafe { buffer.write(empty_buffer()) }
        }
    }

    /// `PMIx_Data_buffer_create` (`PMIX_DATA_BUFFER_CREATE`): a malloc'd empty buffer (NULL when out of memory).
    fn PMIx_Data_buffer_create() -> *mut pmix_data_buffer_t {
        match c_calloc(1, size_of::<pmix_data_buffer_t>()) {
            // calloc's zeroes are the empty buffer
            Ok(p) => p as *mut pmix_data_buffer_t,
            Err(_) => ptr::null_mut(),
        }
    }

    /// `PMIx_Data_buffer_destruct` (`PMIX_DATA_BUFFER_DESTRUCT`): free the bytes, leave it empty.
    fn PMIx_Data_buffer_destruct(buffer: *mut pmix_data_buffer_t) {
        if !buffer.is_null() {
            // SAFETY: checked non-NULL, a constructed buffer
            clear(unsafe { &mut *buffer })
        }
    }

    /// `PMIx_Data_buffer_release` (`PMIX_DATA_BUFFER_RELEASE`): destruct a created buffer and free it.
    fn PMIx_Data_buffer_release(buffer: *mut pmix_data_buffer_t) {
        if !buffer.is_null() {
            // SAFETY: checked non-NULL, a buffer from PMIx_Data_buffer_create (malloc'd)
            unsafe {
                clear(&mut *buffer);
                libc::free(buffer as *mut c_void);
            }
        }
    }

    /// `PMIx_Data_buffer_load` (`PMIX_DATA_BUFFER_LOAD`): the buffer takes the
    /// malloc'd blob of `size` bytes, not copied, to unpack from (and frees it
    /// when destructed, as libpmix does).
    fn PMIx_Data_buffer_load(buffer: *mut pmix_data_buffer_t, data: *mut c_char, size: usize) {
        if !buffer.is_null() {
            // SAFETY: checked non-NULL; data is NULL or malloc'd with size bytes
            adopt(unsafe { &mut *buffer }, data, size)
        }
    }

    /// `PMIx_Data_buffer_unload` (`PMIX_DATA_BUFFER_UNLOAD`): the unread bytes
    /// as a malloc'd blob at `*data` and their count at `*size` (NULL and 0
    /// when none); the buffer is left empty.
    fn PMIx_Data_buffer_unload(buffer: *mut pmix_data_buffer_t, data: *mut *mut c_void, size: *mut usize) {
        if buffer.is_null() || data.is_null() || size.is_null() {
            return;
        }
        // SAFETY: all three checked non-NULL
        let (b, data, size) = unsafe { (&mut *buffer, &mut *data, &mut *size) };
        *data = ptr::null_mut();
        *size = 0;
        // SAFETY: a constructed buffer
        let Ok(rest) = (unsafe { unread(b) }) else { return };
        if !rest.is_empty() {
            let Ok(p) = c_calloc(rest.len(), 1) else { return };
            // SAFETY: p has rest.len() bytes
            unsafe { ptr::copy_nonoverlapping(rest.as_ptr(), p, rest.len()) };
            *data = p as *mut c_void;
            *size = rest.len();
        }
        clear(b);
    }
}
