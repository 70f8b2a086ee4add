//! The structure helpers PMIx v4/v5 made functions (the standard's
//! `PMIX_*_CONSTRUCT`, `_CREATE`, `_DESTRUCT`, `_FREE`, `PMIX_LOAD_*`,
//! `PMIX_CHECK_*`, `PMIX_ARGV_APPEND`, `PMIX_INFO_SET_QUALIFIER` as
//! callable symbols): programs built against libpmix 5's headers (Open MPI
//! 5 among them) call these where 4.x's headers expanded macros. Memory is
//! C's (calloc/free), as the macros' was, so either side may free it.

use crate::abi::*;
use crate::conv::*;
use crate::guard::exports;
use pmix_types::status::codes::*;
use pmix_types::value::directives::QUALIFIER;
use pmix_types::DataType;
use std::ffi::{c_char, CStr};
use std::ptr;

/// Zero `n` elements of `T` at `p` (the standard's CONSTRUCT: every
/// pointer NULL, every count 0, an undefined value).
///
/// # Safety
/// `p` is NULL or points to `n` writable `T`s.
unsafe fn zero<T>(p: *mut T, n: usize) {
    if !p.is_null() {
        // SAFETY: the caller's contract
        unsafe { ptr::write_bytes(p, 0, n) }
    }
}

/// `n` zeroed (constructed) `T`s from calloc, NULL when `n` is 0 or out of memory.
fn create<T>(n: usize) -> *mut T {
    if n == 0 || n.checked_mul(size_of::<T>()).is_none() {
        return ptr::null_mut();
    }
    c_calloc(n, size_of::<T>()).map_or(ptr::null_mut(), |p| p as *mut T)
}

/// Destruct `n` elements of `ty` at `p` (each `T`), then free the array.
///
/// # Safety
/// `p` is NULL or a malloc'd array of `n` constructed `T`s of `ty`.
unsafe fn free_array<T>(ty: DataType, p: *mut T, n: usize) {
    if p.is_null() {
        return;
    }
    for i in 0..n {
        // SAFETY: the caller's contract: n elements
        unsafe { destruct_elem(ty, p.add(i) as *mut u8) }
    }
    // SAFETY: malloc'd
    unsafe { libc::free(p as *mut libc::c_void) }
}

/// The bytes of the C string `s` up to `max` (NULL is empty).
///
/// # Safety
/// `s` is NULL or NUL-terminated within, or readable for, `max` bytes.
unsafe fn bounded<'a>(s: *const c_char, max: usize) -> &'a [u8] {
    if s.is_null() {
        return &[];
    }
    // SAFETY: strnlen reads at most max bytes
    let len = unsafe { libc::strnlen(s, max) };
    // SAFETY: len bytes are readable
    unsafe { std::slice::from_raw_parts(s as *const u8, len) }
}

exports! {
    /// `PMIx_Value_free` (`PMIX_VALUE_FREE`): destruct `n` values and free the array.
    fn PMIx_Value_free(v: *mut pmix_value_t, n: usize) {
        // SAFETY: an array from PMIx_Value_create / PMIX_VALUE_CREATE
        unsafe { free_array(DataType::Value, v, n) }
    }

    /// `PMIx_Info_construct` (`PMIX_INFO_CONSTRUCT`): empty key, no flags, an undefined value.
    fn PMIx_Info_construct(p: *mut pmix_info_t) {
        // SAFETY: one info or NULL
        unsafe { zero(p, 1) }
    }

    /// `PMIx_Info_destruct` (`PMIX_INFO_DESTRUCT`): free what the info's value holds.
    fn PMIx_Info_destruct(p: *mut pmix_info_t) {
        if !p.is_null() {
            // the value only: key and directives stay, as libpmix 5.0.11 leaves them
            // SAFETY: one constructed info
            unsafe { destruct_value(&mut (*p).value) }
        }
    }

    /// `PMIx_Info_create` (`PMIX_INFO_CREATE`): `n` constructed infos (NULL for 0).
    fn PMIx_Info_create(n: usize) -> *mut pmix_info_t {
        create(n)
    }

    /// `PMIx_Info_free` (`PMIX_INFO_FREE`): destruct `n` infos and free the array.
    fn PMIx_Info_free(p: *mut pmix_info_t, n: usize) {
        // SAFETY: an array from PMIx_Info_create
        unsafe { free_array(DataType::Info, p, n) }
    }

    /// `PMIx_Info_qualifier` (`PMIX_INFO_SET_QUALIFIER`): mark the info as qualifying another.
    fn PMIx_Info_qualifier(p: *mut pmix_info_t) {
        if !p.is_null() {
            // SAFETY: checked non-NULL
            unsafe { (*p).flags |= QUALIFIER }
        }
    }

    /// `PMIx_Pdata_construct` (`PMIX_PDATA_CONSTRUCT`).
    fn PMIx_Pdata_construct(p: *mut pmix_pdata_t) {
        // SAFETY: one pdata or NULL
        unsafe { zero(p, 1) }
    }

    /// `PMIx_Pdata_destruct` (`PMIX_PDATA_DESTRUCT`): free what its value holds.
    fn PMIx_Pdata_destruct(p: *mut pmix_pdata_t) {
        if !p.is_null() {
            // SAFETY: one constructed pdata
            unsafe { destruct_elem(DataType::Pdata, p as *mut u8) }
        }
    }

    /// `PMIx_Proc_construct` (`PMIX_PROC_CONSTRUCT`): empty namespace, rank PMIX_RANK_UNDEF.
    fn PMIx_Proc_construct(p: *mut pmix_proc_t) {
        // SAFETY: one proc or NULL
        unsafe { zero(p, 1) };
        if !p.is_null() {
            // no rank yet, as libpmix 5.0.11 constructs a proc
            // SAFETY: checked non-NULL
            unsafe { (*p).rank = pmix_types::RANK_UNDEF };
        }
    }

    /// `PMIx_Proc_create` (`PMIX_PROC_CREATE`): `n` constructed procs (NULL for 0).
    fn PMIx_Proc_create(n: usize) -> *mut pmix_proc_t {
        let p: *mut pmix_proc_t = create(n);
        for k in 0..if p.is_null() { 0 } else { n } {
            // SAFETY: n procs
            unsafe { (*p.add(k)).rank = pmix_types::RANK_UNDEF };
        }
        p
    }

    /// `PMIx_Proc_free` (`PMIX_PROC_FREE`): free an array of procs (they hold no pointers).
    fn PMIx_Proc_free(p: *mut pmix_proc_t, n: usize) {
        // SAFETY: an array from PMIx_Proc_create
        unsafe { free_array(DataType::Proc, p, n) }
    }

    /// `PMIx_App_create` (`PMIX_APP_CREATE`): `n` constructed apps (NULL for 0).
    fn PMIx_App_create(n: usize) -> *mut pmix_app_t {
        create(n)
    }

    /// `PMIx_App_free` (`PMIX_APP_FREE`): destruct `n` apps (command, argv, env, cwd, infos) and free the array.
    fn PMIx_App_free(p: *mut pmix_app_t, n: usize) {
        // SAFETY: an array from PMIx_App_create
        unsafe { free_array(DataType::App, p, n) }
    }

    /// `PMIx_Query_construct` (`PMIX_QUERY_CONSTRUCT`): no keys, no qualifiers.
    fn PMIx_Query_construct(p: *mut pmix_query_t) {
        // SAFETY: one query or NULL
        unsafe { zero(p, 1) }
    }

    /// `PMIx_Cpuset_construct` (`PMIX_CPUSET_CONSTRUCT`): no source, no bitmap.
    fn PMIx_Cpuset_construct(p: *mut pmix_cpuset_t) {
        // SAFETY: one cpuset or NULL
        unsafe { zero(p, 1) }
    }

    /// `PMIx_Load_key` (`PMIX_LOAD_KEY`): copy at most PMIX_MAX_KEYLEN chars of `src` into `key`, NUL-terminated.
    fn PMIx_Load_key(key: *mut c_char, src: *const c_char) {
        if !key.is_null() {
            // SAFETY: key is a pmix_key_t (PMIX_MAX_KEYLEN + 1 chars); src NULL or a string
            unsafe { write_fixed(std::slice::from_raw_parts_mut(key, PMIX_MAX_KEYLEN + 1), bounded(src, PMIX_MAX_KEYLEN)) }
        }
    }

    /// `PMIx_Load_nspace` (`PMIX_LOAD_NSPACE`): copy at most PMIX_MAX_NSLEN chars of `src` into `nspace`, NUL-terminated.
    fn PMIx_Load_nspace(nspace: *mut c_char, src: *const c_char) {
        if !nspace.is_null() {
            // SAFETY: nspace is a pmix_nspace_t (PMIX_MAX_NSLEN + 1 chars); src NULL or a string
            unsafe { write_fixed(std::slice::from_raw_parts_mut(nspace, PMIX_MAX_NSLEN + 1), bounded(src, PMIX_MAX_NSLEN)) }
        }
    }

    /// `PMIx_Load_procid` (`PMIX_LOAD_PROCID`): set the proc's namespace and rank.
    fn PMIx_Load_procid(p: *mut pmix_proc_t, nspace: *const c_char, rank: pmix_rank_t) {
        if !p.is_null() {
            // SAFETY: checked non-NULL; nspace NULL or a string
            unsafe {
                write_fixed(&mut (*p).nspace, bounded(nspace, PMIX_MAX_NSLEN));
                (*p).rank = rank;
            }
        }
    }

    /// `PMIx_Check_key` (`PMIX_CHECK_KEY`): whether the key is `str`, compared up to PMIX_MAX_KEYLEN chars.
    fn PMIx_Check_key(key: *const c_char, s: *const c_char) -> bool {
        // SAFETY: NULL or strings
        unsafe { bounded(key, PMIX_MAX_KEYLEN) == bounded(s, PMIX_MAX_KEYLEN) }
    }

    /// `PMIx_Check_nspace` (`PMIX_CHECK_NSPACE`): whether two namespaces
    /// match, up to PMIX_MAX_NSLEN chars; an empty (or NULL) one matches
    /// any, as the standard's macro treats an invalid namespace as a wildcard.
    fn PMIx_Check_nspace(a: *const c_char, b: *const c_char) -> bool {
        // SAFETY: NULL or strings
        let (a, b) = unsafe { (bounded(a, PMIX_MAX_NSLEN), bounded(b, PMIX_MAX_NSLEN)) };
        a.is_empty() || b.is_empty() || a == b
    }

    /// `PMIx_Argv_append_nosize` (`PMIX_ARGV_APPEND`): append a copy of
    /// `arg` to the NULL-terminated malloc'd array `*argv` (made when NULL).
    fn PMIx_Argv_append_nosize(argv: *mut *mut *mut c_char, arg: *const c_char) -> pmix_status_t {
        if argv.is_null() || arg.is_null() {
            return PMIX_ERR_BAD_PARAM;
        }
        // SAFETY: arg checked non-NULL, a string
        let copy = match c_strdup(unsafe { CStr::from_ptr(arg) }.to_bytes()) {
            Ok(c) => c,
            Err(e) => return e,
        };
        // SAFETY: argv checked non-NULL; *argv NULL or a NULL-terminated malloc'd array
        unsafe {
            let old = *argv;
            let mut n = 0;
            if !old.is_null() {
                while !(*old.add(n)).is_null() {
                    n += 1;
                }
            }
            let new = libc::realloc(old as *mut libc::c_void, (n + 2) * size_of::<*mut c_char>()) as *mut *mut c_char;
            if new.is_null() {
                libc::free(copy as *mut libc::c_void);
                return PMIX_ERR_NOMEM;
            }
            *new.add(n) = copy;
            *new.add(n + 1) = ptr::null_mut();
            *argv = new;
        }
        PMIX_SUCCESS
    }
}
