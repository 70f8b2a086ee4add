//! The topology and cpuset calls: `PMIx_Load_topology`,
//! `PMIx_Topology_destruct`, `PMIx_Get_cpuset`, `PMIx_Parse_cpuset_string`,
//! `PMIx_Cpuset_destruct` (hwloc's objects, through [`crate::hwloc`]) and
//! `PMIx_Get_relative_locality` (the locality strings compared as text:
//! no hwloc). What each answers, and where that is not libpmix 4.2.2's
//! answer: spec-notes/capi.md, "Topology".

use crate::abi::*;
use crate::conv::c_strdup;
use crate::guard::exports;
use crate::hwloc;
use pmix_types::status::codes::*;
use std::ffi::{c_char, c_void, CStr};
use std::sync::Mutex;

use pmix_types::names::locality::*;

/// The fields of a locality string (`NM`, `SK`, `L3` … `HT` and the
/// objects' indices, as libpmix's server writes them) and the bit each
/// sets when the two processes' indices meet.
const LOCALITY_FIELDS: &[(&[u8], u16)] = &[
    (b"NM", SHARE_NUMA),
    (b"SK", SHARE_PACKAGE),
    (b"L3", SHARE_L3CACHE),
    (b"L2", SHARE_L2CACHE),
    (b"L1", SHARE_L1CACHE),
    (b"CR", SHARE_CORE),
    (b"HT", SHARE_HWTHREAD),
];

/// Whether `s` starts with `prefix`, ASCII case ignored (strncasecmp).
fn starts_nocase(s: &[u8], prefix: &[u8]) -> bool {
    s.len() >= prefix.len() && s[..prefix.len()].eq_ignore_ascii_case(prefix)
}

/// Whether a source names hwloc ("hwloc", "hwloc:2.9.0", any case).
fn is_hwloc(source: *const c_char) -> bool {
    // SAFETY: NULL or a C string (the caller's struct member)
    !source.is_null() && starts_nocase(unsafe { CStr::from_ptr(source) }.to_bytes(), b"hwloc")
}

/// One unsigned number as C's `strtoul(s, &end, 0)` reads it (decimal,
/// `0x` hex, `0` octal, blanks before it skipped): its value and the rest,
/// None if no digit was read.
fn strtoul(s: &[u8]) -> Option<(u64, &[u8])> {
    let s = &s[s.iter().take_while(|c| c.is_ascii_whitespace()).count()..];
    let (radix, body) = if (s.starts_with(b"0x") || s.starts_with(b"0X"))
        && s.get(2).is_some_and(|c| c.is_ascii_hexdigit())
    {
        (16, &s[2..])
    } else if s.starts_with(b"0") {
        (8, s)
    } else {
        (10, s)
    };
    let n = body.iter().take_while(|c| (**c as char).is_digit(radix)).count();
    if n == 0 {
        return None;
    }
    let v = body[..n]
        .iter()
        .fold(0u64, |v, c| v.saturating_mul(u64::from(radix)).saturating_add(u64::from((*c as char).to_digit(radix).unwrap_or(0))));
    Some((v, &body[n..]))
}

/// A bitmap's list form ("0-3,8", "5-" for 5 and above) as inclusive
/// ranges, read as hwloc reads one (`hwloc_bitmap_list_sscanf`): commas
/// and blanks separate, and a list it cannot read is the empty set.
pub fn list_ranges(mut s: &[u8]) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut begin: Option<u64> = None;
    while !s.is_empty() {
        s = &s[s.iter().take_while(|c| **c == b',' || **c == b' ').count()..];
        let Some((v, next)) = strtoul(s) else {
            return Vec::new();
        };
        match (begin.take(), next.first()) {
            (Some(b), _) => out.push((b.min(v), b.max(v))),
            (None, Some(b'-')) if next.len() == 1 => {
                out.push((v, u64::MAX));
                break;
            }
            (None, Some(b'-')) => begin = Some(v),
            (None, None | Some(b',' | b' ')) => out.push((v, v)),
            _ => {}
        }
        match next.split_first() {
            None => break,
            Some((_, rest)) => s = rest,
        }
    }
    out
}

fn intersects(a: &[(u64, u64)], b: &[(u64, u64)]) -> bool {
    a.iter().any(|(a0, a1)| b.iter().any(|(b0, b1)| a0 <= b1 && b0 <= a1))
}

/// The relative locality of two processes from their locality strings
/// (`hwloc:` and colon-separated fields, PMIX_LOCALITY_STRING): they share
/// the node, and each kind of object whose indices in the first string's
/// field meet those of the second's first field of that kind. None if
/// either is not an `hwloc:` string; Err(bits) if a field of an unknown
/// kind met its counterpart (PMIX_ERROR, as libpmix answers).
pub fn relative_locality(a: &[u8], b: &[u8]) -> Option<Result<u16, u16>> {
    const PREFIX: &[u8] = b"hwloc:";
    if !starts_nocase(a, PREFIX) || !starts_nocase(b, PREFIX) {
        return None;
    }
    let split = |s: &[u8]| -> Vec<Vec<u8>> {
        s[PREFIX.len()..]
            .split(|c| *c == b':')
            .filter(|f| !f.is_empty())
            .map(<[u8]>::to_vec)
            .collect()
    };
    let (one, two) = (split(a), split(b));
    let kind = |f: &[u8]| f[..f.len().min(2)].to_vec();
    let mut loc = SHARE_NODE;
    let mut unknown = false;
    for f in &one {
        let Some(g) = two.iter().find(|g| kind(g) == kind(f)) else {
            continue;
        };
        let rest = |x: &[u8]| x.get(2..).unwrap_or_default().to_vec();
        if !intersects(&list_ranges(&rest(f)), &list_ranges(&rest(g))) {
            continue;
        }
        match LOCALITY_FIELDS.iter().find(|(k, _)| *k == kind(f).as_slice()) {
            Some((_, bit)) => loc |= bit,
            None => unknown = true,
        }
    }
    Some(if unknown { Err(loc) } else { Ok(loc) })
}

/// This process's topology, loaded once and never destroyed (every
/// `PMIx_Load_topology` hands out the same one, as libpmix does): the
/// address of its `hwloc_topology_t` and its source.
static SHARED: Mutex<Option<(usize, Vec<u8>)>> = Mutex::new(None);

/// The shared topology (loaded now if it is not yet), None if hwloc is
/// missing or cannot load this machine's.
fn shared(h: &hwloc::Hwloc) -> Option<(hwloc::Topo, Vec<u8>)> {
    let mut g = SHARED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((t, s)) = g.as_ref() {
        return Some((*t as hwloc::Topo, s.clone()));
    }
    let t = h.load(None)?;
    // the source names hwloc's version as libpmix's does ("hwloc:2.9.0"),
    // read from the root's hwlocVersion info in the topology's XML
    // SAFETY: t was just loaded
    let version = unsafe { h.xml(t) }.and_then(|x| {
        const TAG: &[u8] = b"name=\"hwlocVersion\" value=\"";
        let at = x.windows(TAG.len()).position(|w| w == TAG)? + TAG.len();
        let v: Vec<u8> = x[at..].iter().copied().take_while(|c| *c != b'"').collect();
        Some(v)
    });
    let source = match version {
        Some(v) => [b"hwloc:".as_slice(), &v].concat(),
        None => b"hwloc".to_vec(),
    };
    *g = Some((t as usize, source.clone()));
    Some((t, source))
}

/// Whether `t` is the shared topology (which a destruct must not destroy).
pub fn is_shared(t: *const c_void) -> bool {
    SHARED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_ref()
        .is_some_and(|(s, _)| *s == t as usize)
}

/// Free a topology's contents as `PMIx_Topology_destruct` does (the
/// shared one is left alive).
///
/// # Safety
/// `t` points to a `pmix_topology_t` whose members are NULL or hold what
/// this library (or libpmix) put there.
pub unsafe fn destruct_topology(t: *mut pmix_topology_t) {
    // SAFETY: the caller's contract
    let t = unsafe { &mut *t };
    if !is_hwloc(t.source) {
        return;
    }
    if !t.topology.is_null() && !is_shared(t.topology) {
        if let Some(h) = hwloc::get() {
            // SAFETY: an hwloc topology (source "hwloc") not handed out shared
            unsafe { (h.topology_destroy)(t.topology) };
        }
    }
    // SAFETY: malloc'd (strdup) by whoever filled the struct
    unsafe { libc::free(t.source as *mut c_void) };
    t.source = std::ptr::null_mut();
    t.topology = std::ptr::null_mut();
}

/// Free a cpuset's contents as `PMIx_Cpuset_destruct` does.
///
/// # Safety
/// `c` points to a `pmix_cpuset_t` whose members are NULL or hold what
/// this library (or libpmix) put there.
pub unsafe fn destruct_cpuset(c: *mut pmix_cpuset_t) {
    // SAFETY: the caller's contract
    let c = unsafe { &mut *c };
    if !is_hwloc(c.source) {
        return;
    }
    if !c.bitmap.is_null() {
        if let Some(h) = hwloc::get() {
            // SAFETY: an hwloc bitmap (source "hwloc")
            unsafe { (h.bitmap_free)(c.bitmap) };
        }
    }
    // SAFETY: malloc'd (strdup) by whoever filled the struct
    unsafe { libc::free(c.source as *mut c_void) };
    c.source = std::ptr::null_mut();
    c.bitmap = std::ptr::null_mut();
}

/// INIT unless PMIx_Init (or a singleton's) is in force.
fn initialized() -> Result<(), pmix_status_t> {
    if crate::client::initialized() {
        Ok(())
    } else {
        Err(PMIX_ERR_INIT)
    }
}

/// The checks a call handed a struct to fill makes first: the pointer
/// (BAD_PARAM), PMIx_Init (INIT), the struct's source if it names one
/// (hwloc's, else NOT_FOUND).
fn check_source<T>(p: *mut T, source: impl Fn(&T) -> *const c_char) -> Result<&'static mut T, pmix_status_t> {
    if p.is_null() {
        return Err(PMIX_ERR_BAD_PARAM);
    }
    initialized()?;
    // SAFETY: checked non-NULL, the caller's struct for this call
    let t = unsafe { &mut *p };
    let s = source(t);
    if !s.is_null() && !is_hwloc(s) {
        return Err(PMIX_ERR_NOT_FOUND);
    }
    Ok(t)
}

fn status(r: Result<(), pmix_status_t>) -> pmix_status_t {
    r.err().unwrap_or(PMIX_SUCCESS)
}

exports! {
    /// `PMIx_Load_topology`: this machine's hwloc topology (discovered once per process, the same one every call), its source `hwloc:<version>` if `topo` names none; a source other than hwloc answers PMIX_ERR_NOT_FOUND, no hwloc NOT_SUPPORTED.
    fn PMIx_Load_topology(topo: *mut pmix_topology_t) -> pmix_status_t {
        status((|| {
            let t = check_source(topo, |t| t.source)?;
            let h = hwloc::get().ok_or(PMIX_ERR_NOT_SUPPORTED)?;
            let (shared, source) = shared(h).ok_or(PMIX_ERR_NOT_SUPPORTED)?;
            if t.source.is_null() {
                t.source = c_strdup(&source)?;
            }
            t.topology = shared;
            Ok(())
        })())
    }

    /// `PMIx_Topology_destruct`: free an hwloc topology and its source (the one `PMIx_Load_topology` hands out stays alive: only the struct is cleared); others are left alone.
    fn PMIx_Topology_destruct(topo: *mut pmix_topology_t) {
        if !topo.is_null() && initialized().is_ok() {
            // SAFETY: checked non-NULL, a caller's topology
            unsafe { destruct_topology(topo) }
        }
    }

    /// `PMIx_Get_cpuset`: the process's (PMIX_CPUBIND_PROCESS) or the calling thread's (PMIX_CPUBIND_THREAD) binding as an hwloc bitmap, source "hwloc".
    fn PMIx_Get_cpuset(cpuset: *mut pmix_cpuset_t, r#ref: u8) -> pmix_status_t {
        status((|| {
            let c = check_source(cpuset, |c| c.source)?;
            let flag = match r#ref {
                0 => hwloc::CPUBIND_PROCESS,
                1 => hwloc::CPUBIND_THREAD,
                _ => return Err(PMIX_ERR_BAD_PARAM),
            };
            let h = hwloc::get().ok_or(PMIX_ERR_NOT_SUPPORTED)?;
            let (t, _) = shared(h).ok_or(PMIX_ERR_NOT_SUPPORTED)?;
            let b = h.parse(b"").ok_or(PMIX_ERR_NOMEM)?;
            // SAFETY: a loaded topology and a fresh bitmap
            if unsafe { (h.get_cpubind)(t, b, flag) } != 0 {
                // SAFETY: the bitmap made above
                unsafe { (h.bitmap_free)(b) };
                return Err(PMIX_ERR_NOT_SUPPORTED);
            }
            if c.source.is_null() {
                c.source = c_strdup(b"hwloc")?;
            }
            c.bitmap = b;
            Ok(())
        })())
    }

    /// `PMIx_Parse_cpuset_string`: `hwloc:<list>` (PMIX_CPUSET's form) as an hwloc bitmap, source "hwloc"; no colon answers BAD_PARAM, another source NOT_FOUND.
    fn PMIx_Parse_cpuset_string(cpuset_string: *const c_char, cpuset: *mut pmix_cpuset_t) -> pmix_status_t {
        status((|| {
            if cpuset_string.is_null() || cpuset.is_null() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            initialized()?;
            // SAFETY: checked non-NULL, a C string
            let s = unsafe { CStr::from_ptr(cpuset_string) }.to_bytes();
            let colon = s.iter().position(|c| *c == b':').ok_or(PMIX_ERR_BAD_PARAM)?;
            // the part before the colon starts with "hwloc" (strncasecmp of 5)
            if !starts_nocase(&s[..colon], b"hwloc") {
                return Err(PMIX_ERR_NOT_FOUND);
            }
            let h = hwloc::get().ok_or(PMIX_ERR_NOT_SUPPORTED)?;
            let b = h.parse(&s[colon + 1..]).ok_or(PMIX_ERR_NOMEM)?;
            // SAFETY: checked non-NULL, the caller's struct
            let c = unsafe { &mut *cpuset };
            c.source = match c_strdup(b"hwloc") {
                Ok(p) => p,
                Err(e) => {
                    // SAFETY: the bitmap made above
                    unsafe { (h.bitmap_free)(b) };
                    return Err(e);
                }
            };
            c.bitmap = b;
            Ok(())
        })())
    }

    /// `PMIx_Cpuset_destruct`: free an hwloc cpuset's bitmap and source; others are left alone.
    fn PMIx_Cpuset_destruct(cpuset: *mut pmix_cpuset_t) {
        if !cpuset.is_null() && initialized().is_ok() {
            // SAFETY: checked non-NULL, a caller's cpuset
            unsafe { destruct_cpuset(cpuset) }
        }
    }

    /// `PMIx_server_generate_cpuset_string`: an hwloc cpuset as `hwloc:<list>` (PMIX_CPUSET's form), malloc'd; no cpuset or bitmap answers BAD_PARAM (the string NULL), another source NOT_FOUND.
    fn PMIx_server_generate_cpuset_string(cpuset: *const pmix_cpuset_t, cpuset_string: *mut *mut c_char) -> pmix_status_t {
        status((|| {
            if cpuset_string.is_null() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            // SAFETY: checked non-NULL, the caller's pointer
            unsafe { *cpuset_string = std::ptr::null_mut() };
            // SAFETY: NULL or the caller's cpuset
            let Some(c) = (unsafe { cpuset.as_ref() }) else {
                return Err(PMIX_ERR_BAD_PARAM);
            };
            if c.bitmap.is_null() || c.source.is_null() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            if !is_hwloc(c.source) {
                return Err(PMIX_ERR_NOT_FOUND);
            }
            let h = hwloc::get().ok_or(PMIX_ERR_NOT_SUPPORTED)?;
            // SAFETY: an hwloc bitmap (source hwloc, non-NULL)
            let l = unsafe { h.list(c.bitmap) }.ok_or(PMIX_ERROR)?;
            let s = c_strdup(&[b"hwloc:".as_slice(), &l].concat())?;
            // SAFETY: checked non-NULL above
            unsafe { *cpuset_string = s };
            Ok(())
        })())
    }

    /// `PMIx_Get_relative_locality`: the PMIX_LOCALITY_* bits two processes of this node share, from their locality strings (no hwloc needed); strings not of hwloc's form answer NOT_FOUND.
    fn PMIx_Get_relative_locality(locality1: *const c_char, locality2: *const c_char, locality: *mut u16) -> pmix_status_t {
        status((|| {
            if locality1.is_null() || locality2.is_null() || locality.is_null() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            initialized()?;
            // SAFETY: checked non-NULL, C strings
            let (a, b) = unsafe { (CStr::from_ptr(locality1).to_bytes(), CStr::from_ptr(locality2).to_bytes()) };
            let r = relative_locality(a, b).ok_or(PMIX_ERR_NOT_FOUND)?;
            // SAFETY: checked non-NULL, the caller's pmix_locality_t
            unsafe { *locality = r.unwrap_or_else(|l| l) };
            r.map(|_| ()).map_err(|_| PMIX_ERROR)
        })())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_read_as_hwloc_reads_them() {
        assert_eq!(list_ranges(b"0-3,8"), vec![(0, 3), (8, 8)]);
        assert_eq!(list_ranges(b"1,3-4,9-11"), vec![(1, 1), (3, 4), (9, 11)]);
        assert_eq!(list_ranges(b"5-"), vec![(5, u64::MAX)]);
        assert_eq!(list_ranges(b""), vec![]);
        assert_eq!(list_ranges(b"0x10"), vec![(16, 16)]);
        assert_eq!(list_ranges(b"x"), vec![]);
        assert_eq!(list_ranges(b"1,,2"), vec![(1, 1), (2, 2)]);
    }

    #[test]
    fn relative_locality_as_libpmix_computes_it() {
        let r = |a: &str, b: &str| relative_locality(a.as_bytes(), b.as_bytes());
        // the values libpmix 4.2.2 gives for the same strings (capi_topo.c)
        assert_eq!(r("hwloc:SK0:L30:L20:L10:CR0:HT0", "hwloc:SK0:L30:L20:L10:CR0:HT0"), Some(Ok(0x403f)));
        assert_eq!(r("hwloc:SK0:L30:L20:L10:CR0:HT0", "hwloc:SK0:L30:L21:L11:CR1:HT1"), Some(Ok(0x4030)));
        assert_eq!(r("hwloc:NM0:SK0:CR0-3:HT0-7", "hwloc:NM1:SK1:CR2,5:HT4"), Some(Ok(0x4003)));
        assert_eq!(r("hwloc:SK0-1", "hwloc:SK1-2"), Some(Ok(0x4020)));
        assert_eq!(r("hwloc:CR0:CR1", "hwloc:CR1"), Some(Ok(0x4002)));
        assert_eq!(r("HWLOC:CR1", "hwloc:CR1"), Some(Ok(0x4002)));
        assert_eq!(r("hwloc:XX0", "hwloc:XX0"), Some(Err(0x4000)));
        assert_eq!(r("hwloc:XX0", "hwloc:XX1"), Some(Ok(0x4000)));
        assert_eq!(r("CR0", "CR0"), None);
        // where libpmix 4.2.2 crashes (no fields): the node only
        assert_eq!(r("hwloc:", "hwloc:"), Some(Ok(0x4000)));
    }
}
