//! The topology and cpuset calls: `PMIx_Load_topology`,
//! `PMIx_Topology_destruct`, `PMIx_Get_cpuset`, `PMIx_Parse_cpuset_string`,
//! `PMIx_Cpuset_destruct`, `PMIx_Compute_distances` (and `_nb`),
//! `PMIx_server_generate_locality_string` (hwloc's objects, through
//! [`crate::hwloc`]) and `PMIx_Get_relative_locality` (the locality
//! strings compared as text: no hwloc). What each answers, and where that
//! is not libpmix 4.2.2's answer: spec-notes/capi.md, "Topology".

use crate::abi::*;
use crate::conv::c_strdup;
use crate::guard::exports;
use crate::hwloc;
use pmix_types::status::codes::*;
use pmix_types::{DataType, DeviceDist, Info, PString, Value};
use std::ffi::{c_char, c_int, c_void, CStr};
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

/// The device types `PMIx_Compute_distances` looks for, hwloc's OS
/// device type of each (libpmix 4.2.2's set; of these it measures the
/// GPUs, network and OpenFabrics devices only).
const DEVICE_TYPES: &[(c_int, u64)] = &[
    (hwloc::OSDEV_BLOCK, pmix_types::names::device_type::BLOCK),
    (hwloc::OSDEV_GPU, pmix_types::names::device_type::GPU),
    (hwloc::OSDEV_NETWORK, pmix_types::names::device_type::NETWORK),
    (hwloc::OSDEV_OPENFABRICS, pmix_types::names::device_type::OPENFABRICS),
    (hwloc::OSDEV_DMA, pmix_types::names::device_type::DMA),
    (hwloc::OSDEV_COPROC, pmix_types::names::device_type::COPROCESSOR),
];

/// What the caller asks `PMIx_Compute_distances` for: the device types
/// (PMIX_DEVICE_TYPE, OR'd) and the devices (PMIX_DEVICE_ID: an OS name
/// or a UUID, any case), as libpmix reads them: no info array at all asks
/// for every type, an array (even of none) for those it names.
struct Wanted {
    types: u64,
    ids: Vec<Vec<u8>>,
}

impl Wanted {
    fn of(info: Option<&[Info]>) -> Wanted {
        let Some(info) = info else {
            return Wanted { types: DEVICE_TYPES.iter().fold(0, |t, (_, p)| t | p), ids: Vec::new() };
        };
        let mut w = Wanted { types: 0, ids: Vec::new() };
        for i in info {
            match (i.key.as_bytes(), &i.value) {
                (b"pmix.dev.type", Value::DevType(t) | Value::Uint64(t)) => w.types |= t,
                (b"pmix.dev.id", Value::String(Some(s))) => w.ids.push(s.as_bytes().to_vec()),
                _ => {}
            }
        }
        w
    }
}

/// A C string member as bytes (empty for NULL).
///
/// # Safety
/// `p` is NULL or a C string.
unsafe fn c_bytes<'a>(p: *const c_char) -> &'a [u8] {
    if p.is_null() {
        return b"";
    }
    // SAFETY: the caller's contract
    unsafe { CStr::from_ptr(p) }.to_bytes()
}

/// An object's info of this name (any case), as `Address` or `NodeGUID`.
fn obj_info<'a>(o: &'a hwloc::Obj, name: &[u8]) -> Option<&'a [u8]> {
    if o.infos.is_null() {
        return None;
    }
    // SAFETY: hwloc's array of infos_count infos of the object
    let infos = unsafe { std::slice::from_raw_parts(o.infos, o.infos_count as usize) };
    infos.iter().find_map(|i| {
        // SAFETY: hwloc's C strings (or NULL)
        let (n, v) = unsafe { (c_bytes(i.name), c_bytes(i.value)) };
        (n.eq_ignore_ascii_case(name) && !i.value.is_null()).then_some(v)
    })
}

/// The node's name as libpmix 4.2.2 names it in a GPU's UUID:
/// PMIX_HOSTNAME if set, else the OS's name, its domain cut off at the
/// first dot unless it is an IP address.
fn gpu_host() -> String {
    if let Ok(h) = std::env::var("PMIX_HOSTNAME") {
        return h;
    }
    let h = crate::client::hostname();
    match h.split_once('.') {
        Some((short, _)) if h.parse::<std::net::IpAddr>().is_err() => short.to_string(),
        _ => h,
    }
}

/// hwloc's common ancestor of two objects (`hwloc_get_common_ancestor_obj`,
/// a header-inline function: climbing the deeper one's parents), None if
/// a parent is missing on the way.
fn common_ancestor<'a>(mut a: &'a hwloc::Obj, mut b: &'a hwloc::Obj) -> Option<&'a hwloc::Obj> {
    // SAFETY (every parent read): hwloc's objects, alive with their topology
    let up = |o: &'a hwloc::Obj| unsafe { o.parent.as_ref() };
    while !std::ptr::eq(a, b) {
        while a.depth > b.depth {
            a = up(a)?;
        }
        while b.depth > a.depth {
            b = up(b)?;
        }
        if !std::ptr::eq(a, b) && a.depth == b.depth {
            a = up(a)?;
            b = up(b)?;
        }
    }
    Some(a)
}

/// The distance from the cpus of `cpus` to each device of the types (and
/// names) asked, in `t`, as libpmix 4.2.2 computes them: the deepest
/// object (below the machine) covering `cpus` found, each measured device
/// (GPUs but their `card*` companions, network devices with an `Address`
/// of 6 or 20 fields, OpenFabrics devices with both GUIDs; block, DMA and
/// coprocessor devices are never measured) is placed at its first
/// ancestor with cpus, and the distance is the topology's depth less the
/// depth of the two's common ancestor — or, when they share only the
/// machine, the covering object's depth plus the topology's. Every PU of
/// `cpus` is at that distance (min = max); with no PU of the machine in
/// `cpus` the minimum stays 0xffff and the maximum 0. None where libpmix's
/// own computation fails (no object covers the cpus, no device found, a
/// network device without an address it can read …), in which case it
/// asks its server.
///
/// # Safety
/// `t` is a loaded `hwloc_topology_t` and `cpus` an `hwloc_bitmap_t`.
unsafe fn compute_distances(h: &hwloc::Hwloc, t: hwloc::Topo, cpus: hwloc::Bitmap, w: &Wanted) -> Option<Vec<DeviceDist>> {
    // SAFETY (every hwloc call): t is loaded, cpus a bitmap, the objects t's
    let depth = unsafe { (h.topology_get_depth)(t) };
    let mut obj: Option<&hwloc::Obj> = None;
    for dp in 1..depth {
        let found = unsafe { h.objs(t, dp) }
            .into_iter()
            .find(|o| !o.cpuset.is_null() && unsafe { (h.bitmap_isincluded)(cpus, o.cpuset) } != 0);
        match found {
            Some(o) => obj = Some(o),
            None => break,
        }
    }
    let obj = obj?;
    let pudepth = unsafe { (h.get_type_depth)(t, hwloc::OBJ_PU) };
    let pus = unsafe { h.objs(t, pudepth) };
    let devices = unsafe { h.objs(t, hwloc::DEPTH_OS_DEVICE) };
    let mut out = Vec::new();
    for (hwtype, pxtype) in DEVICE_TYPES {
        if w.types & pxtype == 0 || ![hwloc::OSDEV_GPU, hwloc::OSDEV_NETWORK, hwloc::OSDEV_OPENFABRICS].contains(hwtype) {
            continue;
        }
        for dev in &devices {
            // SAFETY: an OS device's attributes start with its osdev type
            if dev.attr.is_null() || unsafe { *(dev.attr as *const c_int) } != *hwtype {
                continue;
            }
            // SAFETY: NULL or hwloc's C string
            let name = unsafe { c_bytes(dev.name) };
            let uuid: Vec<u8> = match *hwtype {
                hwloc::OSDEV_NETWORK => {
                    let addr = obj_info(dev, b"Address")?;
                    let scheme: &[u8] = match addr.iter().filter(|c| **c == b':').count() {
                        5 => b"ipv4://",
                        19 => b"ipv6://",
                        _ => return None,
                    };
                    [scheme, addr].concat()
                }
                hwloc::OSDEV_OPENFABRICS => {
                    let (n, s) = (obj_info(dev, b"NodeGUID")?, obj_info(dev, b"SysImageGUID")?);
                    [b"fab://".as_slice(), n, b"::", s].concat()
                }
                _ => {
                    if starts_nocase(name, b"card") {
                        continue;
                    }
                    [b"gpu://".as_slice(), gpu_host().as_bytes(), b"::", name].concat()
                }
            };
            if !w.ids.is_empty() && !w.ids.iter().any(|id| id.eq_ignore_ascii_case(name) || id.eq_ignore_ascii_case(&uuid)) {
                continue;
            }
            let mut tgt: &hwloc::Obj = dev;
            while tgt.cpuset.is_null() {
                // SAFETY: hwloc's parent, alive with t
                tgt = unsafe { tgt.parent.as_ref() }?;
            }
            let (mut min, mut max) = (u32::MAX, 0u32);
            for pu in &pus {
                if pu.cpuset.is_null() || unsafe { (h.bitmap_intersects)(pu.cpuset, cpus) } == 0 {
                    continue;
                }
                let a = common_ancestor(obj, tgt)?;
                let d = if a.depth == 0 { obj.depth + depth } else { depth - a.depth } as u32;
                min = min.min(d);
                max = max.max(d);
            }
            out.push(DeviceDist {
                uuid: PString::from_bytes(&uuid).ok(),
                osname: PString::from_bytes(name).ok(),
                devtype: *pxtype,
                // libpmix's unsigned computation kept in uint16_t
                mindist: min as u16,
                maxdist: max as u16,
            });
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The locality string of `cpus` in `t` as libpmix 4.2.2's server
/// generates it (PMIX_LOCALITY_STRING's fields, no `hwloc:` before them):
/// at each depth below the machine whose objects are packages, L3, L2 or
/// L1 caches, cores or PUs, the logical indices of those whose cpus meet
/// `cpus` (`SK0`, `L30`, `L20-1`, `CR0-1`, `HT0-1`), then the NUMA nodes'
/// (`NM0`), colon-separated; None for an unbound process (no bitmap, or
/// a full one) and for cpus that meet no object.
///
/// # Safety
/// `t` is a loaded `hwloc_topology_t`, `cpus` NULL or an `hwloc_bitmap_t`.
unsafe fn locality_string(h: &hwloc::Hwloc, t: hwloc::Topo, cpus: hwloc::Bitmap) -> Result<Option<Vec<u8>>, pmix_status_t> {
    // SAFETY (every hwloc call): t is loaded, cpus a bitmap, the objects t's
    if cpus.is_null() || unsafe { (h.bitmap_isfull)(cpus) } != 0 {
        return Ok(None);
    }
    let depth = unsafe { (h.topology_get_depth)(t) };
    let mut levels: Vec<(&[u8], c_int)> = Vec::new();
    for d in 1..depth {
        let tag: &[u8] = match unsafe { (h.get_depth_type)(t, d) } {
            hwloc::OBJ_NUMANODE => b"NM",
            hwloc::OBJ_PACKAGE => b"SK",
            hwloc::OBJ_L3CACHE => b"L3",
            hwloc::OBJ_L2CACHE => b"L2",
            hwloc::OBJ_L1CACHE => b"L1",
            hwloc::OBJ_CORE => b"CR",
            hwloc::OBJ_PU => b"HT",
            _ => continue,
        };
        levels.push((tag, d));
    }
    levels.push((b"NM", hwloc::DEPTH_NUMANODE));
    let mut fields: Vec<Vec<u8>> = Vec::new();
    for (tag, d) in levels {
        let met = h.parse(b"").ok_or(PMIX_ERR_NOMEM)?;
        for (w, o) in unsafe { h.objs(t, d) }.iter().enumerate() {
            if !o.cpuset.is_null() && unsafe { (h.bitmap_intersects)(o.cpuset, cpus) } != 0 {
                unsafe { (h.bitmap_set)(met, w as u32) };
            }
        }
        let list = if unsafe { (h.bitmap_iszero)(met) } == 0 { unsafe { h.list(met) } } else { None };
        unsafe { (h.bitmap_free)(met) };
        if let Some(l) = list {
            fields.push([tag, &l].concat());
        }
    }
    Ok((!fields.is_empty()).then(|| fields.join(&b':')))
}

/// `pmix_device_dist_cbfunc_t`.
#[allow(non_camel_case_types)]
pub type pmix_device_dist_cbfunc_t = Option<
    unsafe extern "C" fn(
        status: pmix_status_t,
        dist: *mut pmix_device_distance_t,
        ndist: usize,
        cbdata: *mut c_void,
        release_fn: crate::services::pmix_release_cbfunc_t,
        release_cbdata: *mut c_void,
    ),
>;

/// What a distances call does: answered here (the distances), or the
/// request to send to the server, or a status at once.
enum Distances {
    Computed(Vec<DeviceDist>),
    Ask(pmix_codec::msg::Request),
}

/// `PMIx_Compute_distances_nb`'s work as libpmix 4.2.2 does it before
/// anything is sent: a NULL topology is this process's, a NULL cpuset its
/// binding; the distances computed here if hwloc can; else the request
/// its server is asked (not for a singleton or a server: UNREACH; nor
/// when the topology is this process's own, which libpmix does not pack:
/// BAD_PARAM).
///
/// # Safety
/// `tp` and `cp` are NULL or the caller's structs; `info` NULL or `ninfo` infos.
unsafe fn distances_of(
    tp: *const pmix_topology_t,
    cp: *const pmix_cpuset_t,
    info: *const pmix_info_t,
    ninfo: usize,
) -> Result<Distances, pmix_status_t> {
    let infos = if info.is_null() {
        None
    } else {
        // SAFETY: the caller's array of ninfo infos
        Some(unsafe { crate::services::infos(info, ninfo) }?)
    };
    let h = hwloc::get();
    // the topology: the caller's, else this process's
    let own = h.and_then(shared);
    let topo: Option<(Option<*mut c_char>, hwloc::Topo)> = match unsafe { tp.as_ref() } {
        Some(t) => Some((Some(t.source), t.topology)),
        None => own.as_ref().map(|(t, _)| (None, *t)),
    };
    // the cpuset: the caller's, else the process's binding
    let mut mine: Option<hwloc::Bitmap> = None;
    let cpus: Option<(*mut c_char, hwloc::Bitmap)> = match unsafe { cp.as_ref() } {
        Some(c) => Some((c.source, c.bitmap)),
        None => match (h, own.as_ref()) {
            (Some(h), Some((t, _))) => h.parse(b"").and_then(|b| {
                // SAFETY: a loaded topology and a fresh bitmap
                if unsafe { (h.get_cpubind)(*t, b, hwloc::CPUBIND_PROCESS) } == 0 {
                    mine = Some(b);
                    Some((c"hwloc".as_ptr() as *mut c_char, b))
                } else {
                    // SAFETY: the bitmap made above
                    unsafe { (h.bitmap_free)(b) };
                    None
                }
            }),
            _ => None,
        },
    };
    let computed = (|| {
        let h = h?;
        let ((tsrc, t), (csrc, b)) = (topo?, cpus?);
        let tsrc = tsrc.unwrap_or(c"hwloc".as_ptr() as *mut c_char);
        if tsrc.is_null() || csrc.is_null() || !is_hwloc(tsrc) || !is_hwloc(csrc) || t.is_null() || b.is_null() {
            return None;
        }
        // SAFETY: hwloc's topology and bitmap (their sources say so)
        unsafe { compute_distances(h, t, b, &Wanted::of(infos.as_deref())) }
    })();
    // the binding's list, should the server be asked
    let mut mine_list = None;
    if let (Some(h), Some(b)) = (h, mine) {
        // SAFETY: the binding's bitmap made above, freed after its list is read
        unsafe {
            mine_list = h.list(b);
            (h.bitmap_free)(b);
        }
    }
    if let Some(d) = computed {
        return Ok(Distances::Computed(d));
    }
    // ask the server: a singleton or a server has none
    crate::client::with_client(|_, _| Ok(()))?;
    // libpmix does not pack its own topology (a NULL one: BAD_PARAM)
    let Some(t) = (unsafe { tp.as_ref() }) else {
        return Err(PMIX_ERR_BAD_PARAM);
    };
    // SAFETY: the caller's topology, read as a PMIX_TOPO
    let Value::Topo(topology) = (unsafe { crate::conv::read_elem(DataType::Topo, t as *const _ as *const u8) })? else {
        return Err(PMIX_ERR_BAD_PARAM);
    };
    let cpuset = match unsafe { cp.as_ref() } {
        // SAFETY: the caller's cpuset, read as a PMIX_PROC_CPUSET
        Some(c) => match unsafe { crate::conv::read_elem(DataType::ProcCpuset, c as *const _ as *const u8) }? {
            Value::ProcCpuset(c) => c,
            _ => return Err(PMIX_ERR_BAD_PARAM),
        },
        // the process's binding, as libpmix sends its own; none: BAD_PARAM
        None => pmix_types::Cpuset {
            cpus: Some(mine_list.and_then(|l| PString::from_bytes(&l).ok()).ok_or(PMIX_ERR_BAD_PARAM)?),
        },
    };
    Ok(Distances::Ask(pmix_codec::msg::Request::DeviceDistances {
        topology: *topology,
        cpuset,
        info: infos.unwrap_or_default(),
    }))
}

/// The server's answer to a distances request.
fn ask(req: pmix_codec::msg::Request) -> Result<Vec<DeviceDist>, pmix_status_t> {
    use pmix_codec::msg::Reply;
    crate::client::with_client(|c, _| {
        match c.request(&req, "compute_distances").map_err(crate::client::cerr)? {
            Reply::Distances { status: 0, distances } => Ok(distances.unwrap_or_default()),
            Reply::Distances { status, .. } | Reply::Status(status) => Err(status),
            _ => Err(PMIX_ERR_UNPACK_FAILURE),
        }
    })
}

/// Distances as a C array of `pmix_device_distance_t` (NULL for none).
fn c_distances(r: Result<Vec<DeviceDist>, pmix_status_t>) -> (pmix_status_t, *mut pmix_device_distance_t, usize) {
    let vals = r.map(|v| v.into_iter().map(|d| Value::DeviceDist(Box::new(d))).collect());
    let (rc, p, n) = crate::services::c_array_of(DataType::DeviceDist, vals);
    (rc, p as *mut pmix_device_distance_t, n)
}

/// The release function a distances callback is handed: frees the array.
unsafe extern "C" fn release_distances(cbdata: *mut c_void) {
    crate::guard::guarded("release distances", || {
        // SAFETY: a Box<(ptr, n)> made by the _nb call
        let b = unsafe { Box::from_raw(cbdata as *mut (usize, usize)) };
        let (p, n) = *b;
        // SAFETY: made by c_array_of
        unsafe { crate::services::free_c_array(DataType::DeviceDist, p as *mut c_void, n) };
    })
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

    /// `PMIx_Compute_distances`: the distance from a cpuset (NULL: the process's binding) to each I/O device of a topology (NULL: this process's) that the infos ask for (PMIX_DEVICE_TYPE, PMIX_DEVICE_ID; no array: every type), computed as libpmix 4.2.2 computes it (see `compute_distances`); what cannot be computed here goes to the server (a singleton: UNREACH); INIT before init.
    fn PMIx_Compute_distances(
        topo: *mut pmix_topology_t,
        cpuset: *mut pmix_cpuset_t,
        info: *const pmix_info_t,
        ninfo: usize,
        distances: *mut *mut pmix_device_distance_t,
        ndist: *mut usize,
    ) -> pmix_status_t {
        status((|| {
            initialized()?;
            if distances.is_null() || ndist.is_null() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            // SAFETY: checked non-NULL, the caller's pointers
            unsafe {
                *distances = std::ptr::null_mut();
                *ndist = 0;
            }
            // SAFETY: the caller's structs and infos
            let r = match unsafe { distances_of(topo, cpuset, info, ninfo) }? {
                Distances::Computed(d) => Ok(d),
                Distances::Ask(req) => ask(req),
            };
            let (rc, p, n) = c_distances(r);
            // SAFETY: checked non-NULL above
            unsafe {
                *distances = p;
                *ndist = n;
            }
            if rc == PMIX_SUCCESS { Ok(()) } else { Err(rc) }
        })())
    }

    /// `PMIx_Compute_distances_nb`: `PMIx_Compute_distances` whose answer goes to the callback (on a thread of ours, with a release function for the array); what the call cannot even ask (a singleton: UNREACH; INIT before init) is returned and no callback made.
    fn PMIx_Compute_distances_nb(
        topo: *mut pmix_topology_t,
        cpuset: *mut pmix_cpuset_t,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_device_dist_cbfunc_t,
        cbdata: *mut c_void,
    ) -> pmix_status_t {
        status((|| {
            initialized()?;
            // SAFETY: the caller's structs and infos
            let d = unsafe { distances_of(topo, cpuset, info, ninfo) }?;
            let Some(cb) = cbfunc else { return Ok(()) };
            let data = crate::services::Opaque(cbdata);
            crate::services::in_background("compute_distances_nb", move || {
                let data = data;
                let r = match d {
                    Distances::Computed(d) => Ok(d),
                    Distances::Ask(req) => ask(req),
                };
                let (rc, p, n) = c_distances(r);
                let rel = Box::into_raw(Box::new((p as usize, n))) as *mut c_void;
                // SAFETY: the caller's callback; the array lives until it releases it
                unsafe { cb(rc, p, n, data.0, Some(release_distances), rel) }
            })
        })())
    }

    /// `PMIx_server_generate_locality_string`: the locality of an hwloc cpuset in this process's topology (`SK0:L30:L20-1:L10-1:CR0-1:HT0-1:NM0`, as libpmix 4.2.2 writes it: no `hwloc:` before it), malloc'd; NULL for an unbound process (no bitmap, or a full one) and for cpus of no object; another source NOT_FOUND, no cpuset or string BAD_PARAM.
    fn PMIx_server_generate_locality_string(cpuset: *const pmix_cpuset_t, locality: *mut *mut c_char) -> pmix_status_t {
        status((|| {
            if locality.is_null() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            // SAFETY: NULL or the caller's cpuset
            let Some(c) = (unsafe { cpuset.as_ref() }) else {
                return Err(PMIX_ERR_BAD_PARAM);
            };
            if c.source.is_null() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            if !is_hwloc(c.source) {
                return Err(PMIX_ERR_NOT_FOUND);
            }
            let h = hwloc::get().ok_or(PMIX_ERR_NOT_SUPPORTED)?;
            let (t, _) = shared(h).ok_or(PMIX_ERR_NOT_SUPPORTED)?;
            // SAFETY: a loaded topology; an hwloc bitmap (source hwloc) or NULL
            let s = match unsafe { locality_string(h, t, c.bitmap) }? {
                Some(l) => c_strdup(&l)?,
                None => std::ptr::null_mut(),
            };
            // SAFETY: checked non-NULL above
            unsafe { *locality = s };
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
