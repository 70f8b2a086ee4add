//! Between C storage and pmix-types' [`Value`]: an element of a type as C
//! lays it out (in an array given to `PMIx_Data_pack`, in a
//! `pmix_data_array_t`), and a `pmix_value_t`. Everything handed to C is
//! allocated with `malloc` (C frees it with `free` or the PMIx destruct
//! macros); every pointer read is checked for NULL.

use crate::abi::*;
use pmix_types::status::codes::*;
use pmix_types::value::*;
use pmix_types::{DataType, Key, Nspace, PString};
use std::ffi::{c_char, c_void, CStr};
use std::mem::size_of;
use std::ptr;

/// A failed conversion: the `pmix_status_t` to return.
pub type Status = i32;

// The scalar types: variant, Rust type as the value model holds it, the
// C storage type (whose size is the element's).
macro_rules! scalars {
    ($m:ident) => {
        $m! {
            Byte u8, u8;
            Size u64, usize;
            Pid u32, libc::pid_t;
            Int i32, std::ffi::c_int;
            Int8 i8, i8;
            Int16 i16, i16;
            Int32 i32, i32;
            Int64 i64, i64;
            Uint u32, std::ffi::c_uint;
            Uint8 u8, u8;
            Uint16 u16, u16;
            Uint32 u32, u32;
            Uint64 u64, u64;
            Time u64, libc::time_t;
            Status i32, i32;
            Persist u8, u8;
            Scope u8, u8;
            DataRange u8, u8;
            InfoDirectives u32, u32;
            DataTypeCode u16, u16;
            ProcState u8, u8;
            ProcRank u32, u32;
            AllocDirective u8, u8;
            IofChannel u16, u16;
            JobState u8, u8;
            LinkState u8, u8;
            DevType u64, u64;
            LocType u16, u16;
            StorMedium u64, u64;
            StorAccess u64, u64;
            StorPersist u64, u64;
            StorAccessType u16, u16;
            Command u8, u8;
        }
    };
}

macro_rules! scalar_fns {
    ($( $v:ident $r:ty, $c:ty; )*) => {
        /// The C storage size of a scalar type, None for the others.
        fn scalar_size(ty: DataType) -> Option<usize> {
            match ty {
                $( DataType::$v => Some(size_of::<$c>()), )*
                DataType::Bool => Some(size_of::<bool>()),
                DataType::Float => Some(size_of::<f32>()),
                DataType::Double => Some(size_of::<f64>()),
                DataType::Timeval => Some(size_of::<libc::timeval>()),
                _ => None,
            }
        }
        /// Read a scalar of `ty` at `p`.
        ///
        /// # Safety
        /// `p` points to readable storage of `scalar_size(ty)` bytes.
        unsafe fn scalar_read(ty: DataType, p: *const u8) -> Option<Value> {
            // SAFETY: the caller guarantees the storage; unaligned reads
            // since C arrays of any type may sit anywhere the caller put them
            unsafe {
                Some(match ty {
                    DataType::Bool => Value::Bool(ptr::read_unaligned(p) != 0),
                    $( DataType::$v => Value::$v(ptr::read_unaligned(p as *const $c) as $r), )*
                    DataType::Float => Value::Float(F32(ptr::read_unaligned(p as *const f32))),
                    DataType::Double => Value::Double(F64(ptr::read_unaligned(p as *const f64))),
                    DataType::Timeval => {
                        let tv = ptr::read_unaligned(p as *const libc::timeval);
                        Value::Timeval(Timeval { sec: tv.tv_sec, usec: tv.tv_usec })
                    }
                    _ => return None,
                })
            }
        }
        /// Write a scalar value at `p`; false if `v` is not a scalar.
        ///
        /// # Safety
        /// `p` points to writable storage of the value's scalar size.
        unsafe fn scalar_write(v: &Value, p: *mut u8) -> bool {
            // SAFETY: as scalar_read, for writing
            unsafe {
                match v {
                    Value::Bool(b) => ptr::write_unaligned(p, u8::from(*b)),
                    $( Value::$v(x) => ptr::write_unaligned(p as *mut $c, *x as $c), )*
                    Value::Float(F32(x)) => ptr::write_unaligned(p as *mut f32, *x),
                    Value::Double(F64(x)) => ptr::write_unaligned(p as *mut f64, *x),
                    Value::Timeval(t) => ptr::write_unaligned(
                        p as *mut libc::timeval,
                        libc::timeval { tv_sec: t.sec, tv_usec: t.usec },
                    ),
                    _ => return false,
                }
            }
            true
        }
    };
}
scalars!(scalar_fns);

/// The byte-object types: a `pmix_byte_object_t` each.
fn is_blob(ty: DataType) -> bool {
    matches!(
        ty,
        DataType::ByteObject | DataType::CompressedString | DataType::CompressedByteObject
    )
}

fn blob_value(ty: DataType, h: Box<Hex>) -> Value {
    match ty {
        DataType::CompressedString => Value::CompressedString(h),
        DataType::CompressedByteObject => Value::CompressedByteObject(h),
        _ => Value::ByteObject(h),
    }
}

/// The types a `pmix_value_t` holds through a pointer to one element
/// (`data.proc`, `data.darray`, `data.geometry` …).
fn held_by_pointer(ty: DataType) -> bool {
    matches!(
        ty,
        DataType::Proc
            | DataType::ProcInfo
            | DataType::DataArray
            | DataType::Coord
            | DataType::ProcNspace
            | DataType::Geometry
            | DataType::DeviceDist
            | DataType::Endpoint
            | DataType::DataBuffer
            | DataType::RegAttr
            | DataType::ProcStats
            | DataType::DiskStats
            | DataType::NetStats
            | DataType::NodeStats
            | DataType::ProcCpuset
            | DataType::Topo
    )
}

fn tv_of(t: &libc::timeval) -> Timeval {
    Timeval {
        sec: t.tv_sec,
        usec: t.tv_usec,
    }
}

fn c_tv(t: &Timeval) -> libc::timeval {
    libc::timeval {
        tv_sec: t.sec,
        tv_usec: t.usec,
    }
}

fn disk_of(d: &pmix_disk_stats_t) -> DiskStats {
    // SAFETY: NULL or a C string, by the caller of read_elem
    let disk = unsafe { read_str(d.disk) };
    DiskStats::from_counters(
        disk,
        [
            d.num_reads_completed,
            d.num_reads_merged,
            d.num_sectors_read,
            d.milliseconds_reading,
            d.num_writes_completed,
            d.num_writes_merged,
            d.num_sectors_written,
            d.milliseconds_writing,
            d.num_ios_in_progress,
            d.milliseconds_io,
            d.weighted_milliseconds_io,
        ],
    )
}

fn net_of(n: &pmix_net_stats_t) -> NetStats {
    // SAFETY: NULL or a C string, by the caller of read_elem
    let name = unsafe { read_str(n.net_interface) };
    NetStats::from_counters(
        name,
        [
            n.num_bytes_recvd,
            n.num_packets_recvd,
            n.num_recv_errs,
            n.num_bytes_sent,
            n.num_packets_sent,
            n.num_send_errs,
        ],
    )
}

fn c_disk(d: &DiskStats) -> Result<pmix_disk_stats_t, Status> {
    let c = d.counters();
    Ok(pmix_disk_stats_t {
        disk: opt_str(&d.disk)?,
        num_reads_completed: c[0],
        num_reads_merged: c[1],
        num_sectors_read: c[2],
        milliseconds_reading: c[3],
        num_writes_completed: c[4],
        num_writes_merged: c[5],
        num_sectors_written: c[6],
        milliseconds_writing: c[7],
        num_ios_in_progress: c[8],
        milliseconds_io: c[9],
        weighted_milliseconds_io: c[10],
    })
}

fn c_net(n: &NetStats) -> Result<pmix_net_stats_t, Status> {
    let c = n.counters();
    Ok(pmix_net_stats_t {
        net_interface: opt_str(&n.net_interface)?,
        num_bytes_recvd: c[0],
        num_packets_recvd: c[1],
        num_recv_errs: c[2],
        num_bytes_sent: c[3],
        num_packets_sent: c[4],
        num_send_errs: c[5],
    })
}

/// The types a `pmix_value_t` holds in the union itself, as an element.
fn held_inline(ty: DataType) -> bool {
    scalar_size(ty).is_some() || is_blob(ty) || matches!(ty, DataType::String | DataType::Envar)
}

/// The C storage size of one element of `ty`, None for the types this
/// library does not convert (PMIX_ERR_NOT_SUPPORTED).
pub fn elem_size(ty: DataType) -> Option<usize> {
    if let Some(n) = scalar_size(ty) {
        return Some(n);
    }
    if is_blob(ty) {
        return Some(size_of::<pmix_byte_object_t>());
    }
    Some(match ty {
        DataType::String => size_of::<*mut c_char>(),
        DataType::Value => size_of::<pmix_value_t>(),
        DataType::Proc => size_of::<pmix_proc_t>(),
        DataType::App => size_of::<pmix_app_t>(),
        DataType::Info => size_of::<pmix_info_t>(),
        DataType::Pdata => size_of::<pmix_pdata_t>(),
        DataType::ProcInfo => size_of::<pmix_proc_info_t>(),
        DataType::DataArray => size_of::<pmix_data_array_t>(),
        DataType::Query => size_of::<pmix_query_t>(),
        DataType::Envar => size_of::<pmix_envar_t>(),
        DataType::Coord => size_of::<pmix_coord_t>(),
        DataType::ProcNspace => size_of::<pmix_nspace_t>(),
        DataType::Pointer | DataType::Regex => size_of::<*mut c_void>(),
        DataType::RegAttr => size_of::<pmix_regattr_t>(),
        DataType::Geometry => size_of::<pmix_geometry_t>(),
        DataType::DeviceDist => size_of::<pmix_device_distance_t>(),
        DataType::Endpoint => size_of::<pmix_endpoint_t>(),
        DataType::DataBuffer => size_of::<pmix_data_buffer_t>(),
        DataType::ProcStats => size_of::<pmix_proc_stats_t>(),
        DataType::DiskStats => size_of::<pmix_disk_stats_t>(),
        DataType::NetStats => size_of::<pmix_net_stats_t>(),
        DataType::NodeStats => size_of::<pmix_node_stats_t>(),
        DataType::ProcCpuset => size_of::<pmix_cpuset_t>(),
        DataType::Topo => size_of::<pmix_topology_t>(),
        _ => return None,
    })
}

// ---- reading C ----

/// A C string, None for NULL.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
pub unsafe fn read_str(p: *const c_char) -> Option<PString> {
    if p.is_null() {
        return None;
    }
    // SAFETY: non-NULL and NUL-terminated by the caller's contract
    let b = unsafe { CStr::from_ptr(p) }.to_bytes();
    PString::from_bytes(b).ok()
}

/// The bytes of a fixed array up to its first NUL (all but the last byte
/// if it holds none).
fn fixed_bytes(a: &[c_char]) -> &[u8] {
    // SAFETY: c_char and u8 have the same size and alignment
    let b = unsafe { std::slice::from_raw_parts(a.as_ptr() as *const u8, a.len()) };
    let n = b
        .iter()
        .position(|&c| c == 0)
        .unwrap_or(a.len().saturating_sub(1));
    &b[..n]
}

/// A `pmix_key_t` as a [`Key`].
pub fn read_key(k: &pmix_key_t) -> Key {
    Key::from_bytes(fixed_bytes(k)).unwrap_or_default()
}

/// A `pmix_nspace_t` as an [`Nspace`].
pub fn read_nspace(n: &pmix_nspace_t) -> Nspace {
    Nspace::from_bytes(fixed_bytes(n)).unwrap_or_default()
}

/// Copy `b` into a fixed array, truncated so that a NUL always ends it.
pub fn write_fixed(dst: &mut [c_char], b: &[u8]) {
    let n = b.len().min(dst.len().saturating_sub(1));
    for (d, s) in dst.iter_mut().zip(b[..n].iter()) {
        *d = *s as c_char;
    }
    for d in dst[n..].iter_mut() {
        *d = 0;
    }
}

/// A NULL-terminated `char **` as strings.
///
/// # Safety
/// `argv` is NULL or a NULL-terminated array of C strings.
pub unsafe fn read_argv(argv: *const *mut c_char) -> Vec<PString> {
    let mut out = Vec::new();
    if argv.is_null() {
        return out;
    }
    let mut i = 0;
    loop {
        // SAFETY: NULL-terminated by the caller's contract; we stop at NULL
        let p = unsafe { *argv.add(i) };
        if p.is_null() {
            return out;
        }
        // SAFETY: each entry is a C string
        if let Some(s) = unsafe { read_str(p) } {
            out.push(s);
        }
        i += 1;
    }
}

/// The `pmix_proc_t` at `p`.
///
/// # Safety
/// `p` points to a `pmix_proc_t`.
pub unsafe fn read_proc(p: *const pmix_proc_t) -> Proc {
    // SAFETY: the caller's contract
    let p = unsafe { &*p };
    Proc {
        nspace: read_nspace(&p.nspace),
        rank: p.rank,
    }
}

/// `n` infos at `p` (none if `p` is NULL).
///
/// # Safety
/// `p` is NULL or points to `n` `pmix_info_t`.
pub unsafe fn read_infos(p: *const pmix_info_t, n: usize) -> Result<Vec<Info>, Status> {
    if p.is_null() || n == 0 {
        return Ok(Vec::new());
    }
    (0..n)
        // SAFETY: n elements by the caller's contract
        .map(|i| unsafe { read_info(p.add(i)) })
        .collect()
}

/// The `pmix_info_t` at `p`.
///
/// # Safety
/// `p` points to a `pmix_info_t`.
pub unsafe fn read_info(p: *const pmix_info_t) -> Result<Info, Status> {
    // SAFETY: the caller's contract
    let i = unsafe { &*p };
    Ok(Info {
        key: read_key(&i.key),
        flags: i.flags,
        // SAFETY: the info's value is a pmix_value_t
        value: unsafe { read_value(&i.value) }?,
    })
}

/// The `pmix_value_t` at `v`.
///
/// # Safety
/// `v` points to a `pmix_value_t` whose union member matches its type.
pub unsafe fn read_value(v: *const pmix_value_t) -> Result<Value, Status> {
    // SAFETY: the caller's contract
    let v = unsafe { &*v };
    let ty = DataType::from_code(v.r#type).ok_or(PMIX_ERR_UNKNOWN_DATA_TYPE)?;
    let d = &v.data as *const pmix_value_data as *const u8;
    if ty == DataType::Regex {
        // a value holds a regex as a byte object (the text and its NUL)
        // SAFETY: the union holds data.bo for a REGEX
        let s = unsafe { read_str(v.data.bo.bytes) };
        return Ok(Value::Regex(Box::new(regex_of(s))));
    }
    if held_inline(ty) {
        // stored inline in the union, as in an array
        // SAFETY: the union holds the member for ty
        return unsafe { read_elem(ty, d) };
    }
    // SAFETY: for the other types the union holds a pointer to one element
    let p = unsafe { v.data.ptr } as *const u8;
    match ty {
        DataType::Undef => Ok(Value::Undef),
        DataType::Pointer => Ok(Value::Pointer),
        t if held_by_pointer(t) => {
            if p.is_null() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            // SAFETY: a non-NULL pointer to one element of ty
            unsafe { read_elem(ty, p) }
        }
        _ => Err(PMIX_ERR_NOT_SUPPORTED),
    }
}

/// One element of `ty` in C storage at `p`.
///
/// # Safety
/// `p` points to an element of `ty` as C lays it out (`elem_size(ty)` bytes).
pub unsafe fn read_elem(ty: DataType, p: *const u8) -> Result<Value, Status> {
    // SAFETY: the caller's contract covers every read below
    unsafe {
        if let Some(v) = scalar_read(ty, p) {
            return Ok(v);
        }
        if is_blob(ty) {
            let bo = ptr::read_unaligned(p as *const pmix_byte_object_t);
            let bytes = if bo.bytes.is_null() || bo.size == 0 {
                Vec::new()
            } else {
                std::slice::from_raw_parts(bo.bytes as *const u8, bo.size).to_vec()
            };
            return Ok(blob_value(ty, Box::new(Hex(bytes.into()))));
        }
        Ok(match ty {
            DataType::String => {
                Value::String(read_str(ptr::read_unaligned(p as *const *const c_char)))
            }
            DataType::Value => Value::Value(Box::new(read_value(p as *const pmix_value_t)?)),
            DataType::Proc => Value::Proc(Box::new(read_proc(p as *const pmix_proc_t))),
            DataType::ProcNspace => Value::ProcNspace(read_nspace(&*(p as *const pmix_nspace_t))),
            DataType::Info => Value::Info(Box::new(read_info(p as *const pmix_info_t)?)),
            DataType::Pdata => {
                let d = &*(p as *const pmix_pdata_t);
                Value::Pdata(Box::new(Pdata {
                    proc: read_proc(&d.proc),
                    key: read_key(&d.key),
                    value: read_value(&d.value)?,
                }))
            }
            DataType::App => {
                let a = &*(p as *const pmix_app_t);
                let maxprocs = a.maxprocs;
                Value::App(Box::new(App {
                    cmd: read_str(a.cmd),
                    argv: read_argv(a.argv),
                    env: read_argv(a.env),
                    cwd: read_str(a.cwd),
                    maxprocs,
                    info: read_infos(a.info, a.ninfo)?,
                }))
            }
            DataType::Query => {
                let q = &*(p as *const pmix_query_t);
                Value::Query(Box::new(Query {
                    keys: read_argv(q.keys),
                    qualifiers: read_infos(q.qualifiers, q.nqual)?,
                }))
            }
            DataType::ProcInfo => {
                let i = &*(p as *const pmix_proc_info_t);
                Value::ProcInfo(Box::new(ProcInfo {
                    proc: read_proc(&i.proc),
                    hostname: read_str(i.hostname),
                    executable_name: read_str(i.executable_name),
                    pid: i.pid as u32,
                    exit_code: i.exit_code,
                    state: i.state,
                }))
            }
            DataType::Envar => {
                let e = ptr::read_unaligned(p as *const pmix_envar_t);
                Value::Envar(Box::new(Envar {
                    envar: read_str(e.envar),
                    value: read_str(e.value),
                    separator: e.separator as u8,
                }))
            }
            DataType::Coord => {
                let c = &*(p as *const pmix_coord_t);
                let coord = if c.coord.is_null() {
                    Vec::new()
                } else {
                    std::slice::from_raw_parts(c.coord, c.dims).to_vec()
                };
                Value::Coord(Box::new(Coord {
                    view: c.view,
                    coord,
                }))
            }
            DataType::DataArray => {
                let a = &*(p as *const pmix_data_array_t);
                Value::DataArray(Box::new(read_darray(a)?))
            }
            // the pointer itself does not travel
            DataType::Pointer => Value::Pointer,
            DataType::Regex => {
                let text = read_str(ptr::read_unaligned(p as *const *const c_char));
                Value::Regex(Box::new(match text {
                    Some(t)
                        if t.as_bytes().starts_with(b"pmix")
                            || t.as_bytes().starts_with(b"raw:") =>
                    {
                        Regex::Text(t)
                    }
                    t => Regex::Packed(t),
                }))
            }
            DataType::RegAttr => {
                let r = &*(p as *const pmix_regattr_t);
                Value::RegAttr(Box::new(RegAttr {
                    name: read_str(r.name),
                    string: read_key(&r.string),
                    ty: r.r#type,
                    description: read_argv(r.description),
                }))
            }
            DataType::Geometry => {
                let g = &*(p as *const pmix_geometry_t);
                let mut coordinates = Vec::new();
                if !g.coordinates.is_null() {
                    for k in 0..g.ncoords {
                        match read_elem(DataType::Coord, g.coordinates.add(k) as *const u8)? {
                            Value::Coord(c) => coordinates.push(*c),
                            _ => return Err(PMIX_ERR_BAD_PARAM),
                        }
                    }
                }
                Value::Geometry(Box::new(Geometry {
                    fabric: g.fabric as u64,
                    uuid: read_str(g.uuid),
                    osname: read_str(g.osname),
                    coordinates,
                }))
            }
            DataType::ProcCpuset => Value::ProcCpuset(read_cpuset(&*(p as *const pmix_cpuset_t))?),
            DataType::Topo => {
                Value::Topo(Box::new(read_topology(&*(p as *const pmix_topology_t))?))
            }
            DataType::DeviceDist => {
                let d = &*(p as *const pmix_device_distance_t);
                Value::DeviceDist(Box::new(DeviceDist {
                    uuid: read_str(d.uuid),
                    osname: read_str(d.osname),
                    devtype: d.r#type,
                    mindist: d.mindist,
                    maxdist: d.maxdist,
                }))
            }
            DataType::Endpoint => {
                let e = &*(p as *const pmix_endpoint_t);
                let endpt = if e.endpt.bytes.is_null() || e.endpt.size == 0 {
                    Vec::new()
                } else {
                    std::slice::from_raw_parts(e.endpt.bytes as *const u8, e.endpt.size).to_vec()
                };
                Value::Endpoint(Box::new(Endpoint {
                    uuid: read_str(e.uuid),
                    osname: read_str(e.osname),
                    endpt: endpt.into(),
                }))
            }
            DataType::DataBuffer => {
                let b = &*(p as *const pmix_data_buffer_t);
                let bytes = if b.base_ptr.is_null() || b.bytes_used == 0 {
                    Vec::new()
                } else {
                    std::slice::from_raw_parts(b.base_ptr as *const u8, b.bytes_used).to_vec()
                };
                Value::DataBuffer(Box::new(Hex(bytes.into())))
            }
            DataType::ProcStats => {
                let p = &*(p as *const pmix_proc_stats_t);
                Value::ProcStats(Box::new(ProcStats {
                    node: read_str(p.node),
                    proc: read_proc(&p.proc),
                    pid: p.pid as u32,
                    cmd: read_str(p.cmd),
                    state: p.state as u8,
                    time: tv_of(&p.time),
                    percent_cpu: p.percent_cpu,
                    priority: p.priority,
                    num_threads: p.num_threads,
                    pss: p.pss,
                    vsize: p.vsize,
                    rss: p.rss,
                    peak_vsize: p.peak_vsize,
                    processor: p.processor,
                    sample_time: tv_of(&p.sample_time),
                }))
            }
            DataType::DiskStats => {
                Value::DiskStats(Box::new(disk_of(&*(p as *const pmix_disk_stats_t))))
            }
            DataType::NetStats => {
                Value::NetStats(Box::new(net_of(&*(p as *const pmix_net_stats_t))))
            }
            DataType::NodeStats => {
                let n = &*(p as *const pmix_node_stats_t);
                let diskstats = if n.diskstats.is_null() {
                    Vec::new()
                } else {
                    std::slice::from_raw_parts(n.diskstats, n.ndiskstats)
                        .iter()
                        .map(disk_of)
                        .collect()
                };
                let netstats = if n.netstats.is_null() {
                    Vec::new()
                } else {
                    std::slice::from_raw_parts(n.netstats, n.nnetstats)
                        .iter()
                        .map(net_of)
                        .collect()
                };
                Value::NodeStats(Box::new(NodeStats {
                    node: read_str(n.node),
                    la: n.la,
                    la5: n.la5,
                    la15: n.la15,
                    total_mem: n.total_mem,
                    free_mem: n.free_mem,
                    buffers: n.buffers,
                    cached: n.cached,
                    swap_cached: n.swap_cached,
                    swap_total: n.swap_total,
                    swap_free: n.swap_free,
                    mapped: n.mapped,
                    sample_time: tv_of(&n.sample_time),
                    diskstats,
                    netstats,
                }))
            }
            _ => return Err(PMIX_ERR_NOT_SUPPORTED),
        })
    }
}

/// Whether a `source` member names hwloc (NULL counts as hwloc: what the
/// struct's constructor leaves, which libpmix packs as hwloc's).
fn hwloc_source(source: *const c_char) -> bool {
    // SAFETY: NULL or the struct's C string
    source.is_null()
        || unsafe { CStr::from_ptr(source) }
            .to_bytes()
            .get(..5)
            .is_some_and(|p| p.eq_ignore_ascii_case(b"hwloc"))
}

/// A `pmix_cpuset_t` as the wire's [`Cpuset`]: its bitmap's list form
/// (hwloc prints it), None for no bitmap; another library's cpuset is
/// NOT_SUPPORTED, as in libpmix.
fn read_cpuset(c: &pmix_cpuset_t) -> Result<Cpuset, Status> {
    if !hwloc_source(c.source) {
        return Err(PMIX_ERR_NOT_SUPPORTED);
    }
    if c.bitmap.is_null() {
        return Ok(Cpuset { cpus: None });
    }
    let h = crate::hwloc::get().ok_or(PMIX_ERR_NOT_SUPPORTED)?;
    // SAFETY: an hwloc bitmap (source hwloc, non-NULL)
    let l = unsafe { h.list(c.bitmap) }.ok_or(PMIX_ERROR)?;
    Ok(Cpuset {
        cpus: Some(PString::from_bytes(&l).map_err(|_| PMIX_ERROR)?),
    })
}

/// Fill a zeroed `pmix_cpuset_t` from a [`Cpuset`]: source "hwloc", the
/// list read into a new hwloc bitmap (NULL for none).
fn write_cpuset(dst: &mut pmix_cpuset_t, c: &Cpuset) -> Result<(), Status> {
    if let Some(l) = &c.cpus {
        let h = crate::hwloc::get().ok_or(PMIX_ERR_NOT_SUPPORTED)?;
        dst.bitmap = h.parse(l.as_bytes()).ok_or(PMIX_ERR_NOMEM)?;
    }
    dst.source = c_strdup(b"hwloc")?;
    Ok(())
}

/// A `pmix_topology_t` as the wire's [`Topology`]: hwloc's XML of it and
/// its support flags, None for no topology; another library's topology is
/// NOT_SUPPORTED, as in libpmix.
fn read_topology(t: &pmix_topology_t) -> Result<Topology, Status> {
    if !hwloc_source(t.source) {
        return Err(PMIX_ERR_NOT_SUPPORTED);
    }
    if t.topology.is_null() {
        return Ok(Topology::default());
    }
    let h = crate::hwloc::get().ok_or(PMIX_ERR_NOT_SUPPORTED)?;
    // SAFETY: an hwloc topology (source hwloc, non-NULL), loaded
    let xml = unsafe { h.xml(t.topology) }.ok_or(PMIX_ERROR)?;
    // SAFETY: as above
    let support = unsafe { h.support(t.topology, None) };
    if support.len() != pmix_codec::HWLOC_SUPPORT_BYTES {
        return Err(PMIX_ERR_NOT_SUPPORTED);
    }
    Ok(Topology {
        xml: Some(PString::from_bytes(&xml).map_err(|_| PMIX_ERROR)?),
        support: support.into(),
    })
}

/// Fill a zeroed `pmix_topology_t` from a [`Topology`]: source "hwloc", a
/// new hwloc topology loaded from the XML with its support flags (NULL
/// for none).
fn write_topology(dst: &mut pmix_topology_t, t: &Topology) -> Result<(), Status> {
    if let Some(x) = &t.xml {
        let h = crate::hwloc::get().ok_or(PMIX_ERR_NOT_SUPPORTED)?;
        let topo = h.load(Some(x.as_bytes())).ok_or(PMIX_ERROR)?;
        // SAFETY: just loaded
        unsafe { h.support(topo, Some(&t.support)) };
        dst.topology = topo;
    }
    dst.source = c_strdup(b"hwloc")?;
    Ok(())
}

/// A regex's C text as the value model's form.
fn regex_of(text: Option<PString>) -> Regex {
    match text {
        Some(t) if t.as_bytes().starts_with(b"pmix") || t.as_bytes().starts_with(b"raw:") => {
            Regex::Text(t)
        }
        t => Regex::Packed(t),
    }
}

/// A regex's text, without its NUL (None for a NULL one).
fn regex_text(r: &Regex) -> Option<&[u8]> {
    match r {
        Regex::Text(t) => Some(t.as_bytes()),
        Regex::Packed(t) => t.as_ref().map(|t| t.as_bytes()),
        Regex::Blob(b) => Some(b),
    }
}

/// A `pmix_data_array_t` as a [`DataArray`].
///
/// # Safety
/// `a.array` is NULL or holds `a.size` elements of `a.type`.
pub unsafe fn read_darray(a: &pmix_data_array_t) -> Result<DataArray, Status> {
    let ty = DataType::from_code(a.r#type).ok_or(PMIX_ERR_UNKNOWN_DATA_TYPE)?;
    if ty == DataType::Undef {
        return Ok(DataArray::undef(a.size as u64));
    }
    let sz = elem_size(ty).ok_or(PMIX_ERR_NOT_SUPPORTED)?;
    if a.array.is_null() && a.size > 0 {
        return Err(PMIX_ERR_BAD_PARAM);
    }
    let mut elements = Vec::with_capacity(a.size.min(1 << 16));
    for i in 0..a.size {
        // SAFETY: size elements of sz bytes each
        elements.push(unsafe { read_elem(ty, (a.array as *const u8).add(i * sz)) }?);
    }
    DataArray::new(ty, elements).map_err(|_| PMIX_ERR_TYPE_MISMATCH)
}

// ---- writing C ----

/// `calloc(n, size)`, NOMEM on failure.
pub fn c_calloc(n: usize, size: usize) -> Result<*mut u8, Status> {
    // SAFETY: calloc has no preconditions; a NULL result is checked
    let p = unsafe { libc::calloc(n.max(1), size.max(1)) } as *mut u8;
    if p.is_null() {
        Err(PMIX_ERR_NOMEM)
    } else {
        Ok(p)
    }
}

/// A malloc'd NUL-terminated copy of `b`.
pub fn c_strdup(b: &[u8]) -> Result<*mut c_char, Status> {
    let p = c_calloc(b.len() + 1, 1)?;
    // SAFETY: p has b.len() + 1 bytes, zeroed (the NUL is there)
    unsafe { ptr::copy_nonoverlapping(b.as_ptr(), p, b.len()) };
    Ok(p as *mut c_char)
}

fn opt_str(s: &Option<PString>) -> Result<*mut c_char, Status> {
    match s {
        Some(s) => c_strdup(s.as_bytes()),
        None => Ok(ptr::null_mut()),
    }
}

/// A malloc'd NULL-terminated array of copies of `v` (NULL for none).
pub fn c_argv(v: &[PString]) -> Result<*mut *mut c_char, Status> {
    if v.is_empty() {
        return Ok(ptr::null_mut());
    }
    let a = c_calloc(v.len() + 1, size_of::<*mut c_char>())? as *mut *mut c_char;
    for (i, s) in v.iter().enumerate() {
        // SAFETY: a has v.len() + 1 slots
        unsafe { *a.add(i) = c_strdup(s.as_bytes())? };
    }
    Ok(a)
}

/// A malloc'd array of `n` elements of `ty` holding `vals`.
pub fn c_elems(ty: DataType, vals: &[Value]) -> Result<*mut c_void, Status> {
    let sz = elem_size(ty).ok_or(PMIX_ERR_NOT_SUPPORTED)?;
    let p = c_calloc(vals.len(), sz)?;
    for (i, v) in vals.iter().enumerate() {
        // SAFETY: p has vals.len() elements of sz bytes, zeroed
        unsafe { write_elem(v, p.add(i * sz)) }?;
    }
    Ok(p as *mut c_void)
}

fn write_proc(dst: &mut pmix_proc_t, p: &Proc) {
    write_fixed(&mut dst.nspace, p.nspace.as_bytes());
    dst.rank = p.rank;
}

fn write_info(dst: &mut pmix_info_t, i: &Info) -> Result<(), Status> {
    write_fixed(&mut dst.key, i.key.as_bytes());
    dst.flags = i.flags;
    write_value(&mut dst.value, &i.value)
}

fn c_infos(v: &[Info]) -> Result<*mut pmix_info_t, Status> {
    if v.is_empty() {
        return Ok(ptr::null_mut());
    }
    let p = c_calloc(v.len(), size_of::<pmix_info_t>())? as *mut pmix_info_t;
    for (k, i) in v.iter().enumerate() {
        // SAFETY: v.len() zeroed infos (all-zero is a valid pmix_info_t)
        write_info(unsafe { &mut *p.add(k) }, i)?;
    }
    Ok(p)
}

fn c_darray(a: &DataArray) -> Result<pmix_data_array_t, Status> {
    Ok(match a {
        DataArray::Undef { size } => pmix_data_array_t {
            r#type: 0,
            size: *size as usize,
            array: ptr::null_mut(),
        },
        DataArray::Typed {
            elem_type,
            elements,
        } => pmix_data_array_t {
            r#type: elem_type.code(),
            size: elements.len(),
            array: if elements.is_empty() {
                ptr::null_mut()
            } else {
                c_elems(*elem_type, elements)?
            },
        },
    })
}

fn c_blob(h: &Hex) -> Result<pmix_byte_object_t, Status> {
    if h.0.is_empty() {
        return Ok(pmix_byte_object_t {
            bytes: ptr::null_mut(),
            size: 0,
        });
    }
    let p = c_calloc(h.0.len(), 1)?;
    // SAFETY: p has h.0.len() bytes
    unsafe { ptr::copy_nonoverlapping(h.0.as_ptr(), p, h.0.len()) };
    Ok(pmix_byte_object_t {
        bytes: p as *mut c_char,
        size: h.0.len(),
    })
}

/// Write `v` as one element of its type at `p` (zeroed storage of
/// `elem_size` bytes); what it allocates belongs to the element.
///
/// # Safety
/// `p` points to writable, zeroed storage for one element of `v`'s type.
pub unsafe fn write_elem(v: &Value, p: *mut u8) -> Result<(), Status> {
    // SAFETY: the caller's contract covers every write below
    unsafe {
        if scalar_write(v, p) {
            return Ok(());
        }
        match v {
            Value::ByteObject(h) | Value::CompressedString(h) | Value::CompressedByteObject(h) => {
                ptr::write_unaligned(p as *mut pmix_byte_object_t, c_blob(h)?)
            }
            Value::String(s) => ptr::write_unaligned(p as *mut *mut c_char, opt_str(s)?),
            Value::Value(inner) => write_value(&mut *(p as *mut pmix_value_t), inner)?,
            Value::Proc(pr) => write_proc(&mut *(p as *mut pmix_proc_t), pr),
            Value::ProcNspace(n) => write_fixed(&mut *(p as *mut pmix_nspace_t), n.as_bytes()),
            Value::Info(i) => write_info(&mut *(p as *mut pmix_info_t), i)?,
            Value::Pdata(d) => {
                let dst = &mut *(p as *mut pmix_pdata_t);
                write_proc(&mut dst.proc, &d.proc);
                write_fixed(&mut dst.key, d.key.as_bytes());
                write_value(&mut dst.value, &d.value)?;
            }
            Value::App(a) => {
                let dst = &mut *(p as *mut pmix_app_t);
                dst.cmd = opt_str(&a.cmd)?;
                dst.argv = c_argv(&a.argv)?;
                dst.env = c_argv(&a.env)?;
                dst.cwd = opt_str(&a.cwd)?;
                dst.maxprocs = a.maxprocs;
                dst.info = c_infos(&a.info)?;
                dst.ninfo = a.info.len();
            }
            Value::Query(q) => {
                let dst = &mut *(p as *mut pmix_query_t);
                dst.keys = c_argv(&q.keys)?;
                dst.qualifiers = c_infos(&q.qualifiers)?;
                dst.nqual = q.qualifiers.len();
            }
            Value::ProcInfo(i) => {
                let dst = &mut *(p as *mut pmix_proc_info_t);
                write_proc(&mut dst.proc, &i.proc);
                dst.hostname = opt_str(&i.hostname)?;
                dst.executable_name = opt_str(&i.executable_name)?;
                dst.pid = i.pid as libc::pid_t;
                dst.exit_code = i.exit_code;
                dst.state = i.state;
            }
            Value::Envar(e) => ptr::write_unaligned(
                p as *mut pmix_envar_t,
                pmix_envar_t {
                    envar: opt_str(&e.envar)?,
                    value: opt_str(&e.value)?,
                    separator: e.separator as c_char,
                },
            ),
            Value::Coord(c) => {
                let dst = &mut *(p as *mut pmix_coord_t);
                dst.view = c.view;
                dst.dims = c.coord.len();
                if !c.coord.is_empty() {
                    let a = c_calloc(c.coord.len(), size_of::<u32>())? as *mut u32;
                    ptr::copy_nonoverlapping(c.coord.as_ptr(), a, c.coord.len());
                    dst.coord = a;
                }
            }
            Value::DataArray(a) => ptr::write_unaligned(p as *mut pmix_data_array_t, c_darray(a)?),
            Value::Pointer => ptr::write_unaligned(p as *mut *mut c_void, ptr::null_mut()),
            Value::Regex(r) => {
                let text = match regex_text(r) {
                    Some(t) => c_strdup(t)?,
                    None => ptr::null_mut(),
                };
                ptr::write_unaligned(p as *mut *mut c_char, text)
            }
            Value::RegAttr(r) => {
                let dst = &mut *(p as *mut pmix_regattr_t);
                dst.name = opt_str(&r.name)?;
                write_fixed(&mut dst.string, r.string.as_bytes());
                dst.r#type = r.ty;
                dst.description = c_argv(&r.description)?;
            }
            Value::Geometry(g) => {
                let dst = &mut *(p as *mut pmix_geometry_t);
                dst.fabric = g.fabric as usize;
                dst.uuid = opt_str(&g.uuid)?;
                dst.osname = opt_str(&g.osname)?;
                if !g.coordinates.is_empty() {
                    let cs: Vec<Value> = g
                        .coordinates
                        .iter()
                        .cloned()
                        .map(|c| Value::Coord(Box::new(c)))
                        .collect();
                    dst.coordinates = c_elems(DataType::Coord, &cs)? as *mut pmix_coord_t;
                }
                dst.ncoords = g.coordinates.len();
            }
            Value::ProcCpuset(c) => write_cpuset(&mut *(p as *mut pmix_cpuset_t), c)?,
            Value::Topo(t) => write_topology(&mut *(p as *mut pmix_topology_t), t)?,
            Value::DeviceDist(d) => {
                let dst = &mut *(p as *mut pmix_device_distance_t);
                dst.uuid = opt_str(&d.uuid)?;
                dst.osname = opt_str(&d.osname)?;
                dst.r#type = d.devtype;
                dst.mindist = d.mindist;
                dst.maxdist = d.maxdist;
            }
            Value::Endpoint(e) => {
                let dst = &mut *(p as *mut pmix_endpoint_t);
                dst.uuid = opt_str(&e.uuid)?;
                dst.osname = opt_str(&e.osname)?;
                dst.endpt = c_blob(&Hex(e.endpt.clone()))?;
            }
            Value::DataBuffer(h) => {
                let dst = &mut *(p as *mut pmix_data_buffer_t);
                let bo = c_blob(h)?;
                dst.base_ptr = bo.bytes;
                dst.unpack_ptr = bo.bytes;
                dst.pack_ptr = if bo.bytes.is_null() {
                    bo.bytes
                } else {
                    bo.bytes.add(bo.size)
                };
                dst.bytes_allocated = bo.size;
                dst.bytes_used = bo.size;
            }
            Value::ProcStats(s) => {
                let dst = &mut *(p as *mut pmix_proc_stats_t);
                dst.node = opt_str(&s.node)?;
                write_proc(&mut dst.proc, &s.proc);
                dst.pid = s.pid as libc::pid_t;
                dst.cmd = opt_str(&s.cmd)?;
                dst.state = s.state as c_char;
                dst.time = c_tv(&s.time);
                dst.percent_cpu = s.percent_cpu;
                dst.priority = s.priority;
                dst.num_threads = s.num_threads;
                dst.pss = s.pss;
                dst.vsize = s.vsize;
                dst.rss = s.rss;
                dst.peak_vsize = s.peak_vsize;
                dst.processor = s.processor;
                dst.sample_time = c_tv(&s.sample_time);
            }
            Value::DiskStats(d) => ptr::write_unaligned(p as *mut pmix_disk_stats_t, c_disk(d)?),
            Value::NetStats(n) => ptr::write_unaligned(p as *mut pmix_net_stats_t, c_net(n)?),
            Value::NodeStats(n) => {
                let dst = &mut *(p as *mut pmix_node_stats_t);
                dst.node = opt_str(&n.node)?;
                dst.la = n.la;
                dst.la5 = n.la5;
                dst.la15 = n.la15;
                dst.total_mem = n.total_mem;
                dst.free_mem = n.free_mem;
                dst.buffers = n.buffers;
                dst.cached = n.cached;
                dst.swap_cached = n.swap_cached;
                dst.swap_total = n.swap_total;
                dst.swap_free = n.swap_free;
                dst.mapped = n.mapped;
                dst.sample_time = c_tv(&n.sample_time);
                if !n.diskstats.is_empty() {
                    let v: Vec<Value> = n
                        .diskstats
                        .iter()
                        .cloned()
                        .map(|d| Value::DiskStats(Box::new(d)))
                        .collect();
                    dst.diskstats = c_elems(DataType::DiskStats, &v)? as *mut pmix_disk_stats_t;
                    dst.ndiskstats = v.len();
                }
                if !n.netstats.is_empty() {
                    let v: Vec<Value> = n
                        .netstats
                        .iter()
                        .cloned()
                        .map(|d| Value::NetStats(Box::new(d)))
                        .collect();
                    dst.netstats = c_elems(DataType::NetStats, &v)? as *mut pmix_net_stats_t;
                    dst.nnetstats = v.len();
                }
            }
            _ => return Err(PMIX_ERR_NOT_SUPPORTED),
        }
    }
    Ok(())
}

/// Fill the `pmix_value_t` `dst` (whose old contents are not freed) with
/// `v`: inline members for scalars, strings, byte objects and envars, a
/// malloc'd element for the others the union points to.
pub fn write_value(dst: &mut pmix_value_t, v: &Value) -> Result<(), Status> {
    let ty = v.data_type();
    // SAFETY: a zeroed union is a valid pmix_value_data
    dst.data = unsafe { std::mem::zeroed() };
    dst.r#type = ty.code();
    let d = &mut dst.data as *mut pmix_value_data as *mut u8;
    let r = (|| {
        if ty == DataType::Undef {
            return Ok(());
        }
        if let Value::Regex(r) = v {
            // as a byte object: the text and its NUL
            if let Some(t) = regex_text(r) {
                dst.data.bo = pmix_byte_object_t {
                    bytes: c_strdup(t)?,
                    size: t.len() + 1,
                };
            }
            return Ok(());
        }
        if held_inline(ty) {
            // SAFETY: the union is large enough for every inline member
            return unsafe { write_elem(v, d) };
        }
        match ty {
            // a pointer's target does not travel: NULL
            DataType::Pointer => Ok(()),
            t if held_by_pointer(t) => {
                let sz = elem_size(ty).ok_or(PMIX_ERR_NOT_SUPPORTED)?;
                let p = c_calloc(1, sz)?;
                // SAFETY: p is zeroed storage for one element
                let r = unsafe { write_elem(v, p) };
                dst.data.ptr = p as *mut c_void;
                r
            }
            _ => Err(PMIX_ERR_NOT_SUPPORTED),
        }
    })();
    if r.is_err() {
        // SAFETY: dst holds only what write_elem allocated so far
        unsafe { destruct_value(dst) };
        dst.r#type = 0;
    }
    r
}

// ---- freeing ----

unsafe fn free<T>(p: *mut T) {
    // SAFETY: p is NULL or was malloc'd (by us or by the C caller)
    unsafe { libc::free(p as *mut c_void) }
}

/// Free an array [`c_argv`] made (NULL: nothing).
///
/// # Safety
/// `a` is NULL or a NULL-terminated array whose entries were malloc'd.
pub unsafe fn free_argv(a: *mut *mut c_char) {
    if a.is_null() {
        return;
    }
    let mut i = 0;
    // SAFETY: NULL-terminated, every entry malloc'd
    unsafe {
        while !(*a.add(i)).is_null() {
            free(*a.add(i));
            i += 1;
        }
        free(a);
    }
}

unsafe fn free_infos(p: *mut pmix_info_t, n: usize) {
    if p.is_null() {
        return;
    }
    // SAFETY: n infos, malloc'd as one block
    unsafe {
        for i in 0..n {
            destruct_value(&mut (*p.add(i)).value);
        }
        free(p);
    }
}

/// Free what the element of `ty` at `p` owns (not the element itself) and
/// zero it.
///
/// # Safety
/// `p` points to an element of `ty` whose pointers are NULL or malloc'd.
pub unsafe fn destruct_elem(ty: DataType, p: *mut u8) {
    let Some(sz) = elem_size(ty) else { return };
    // SAFETY: the caller's contract covers every access below
    unsafe {
        if is_blob(ty) {
            free((*(p as *mut pmix_byte_object_t)).bytes);
        } else {
            match ty {
                DataType::String => free(ptr::read_unaligned(p as *mut *mut c_char)),
                DataType::Value => destruct_value(p as *mut pmix_value_t),
                DataType::Info => destruct_value(&mut (*(p as *mut pmix_info_t)).value),
                DataType::Pdata => destruct_value(&mut (*(p as *mut pmix_pdata_t)).value),
                DataType::App => {
                    let a = &mut *(p as *mut pmix_app_t);
                    free(a.cmd);
                    free_argv(a.argv);
                    free_argv(a.env);
                    free(a.cwd);
                    free_infos(a.info, a.ninfo);
                }
                DataType::Query => {
                    let q = &mut *(p as *mut pmix_query_t);
                    free_argv(q.keys);
                    free_infos(q.qualifiers, q.nqual);
                }
                DataType::ProcInfo => {
                    let i = &mut *(p as *mut pmix_proc_info_t);
                    free(i.hostname);
                    free(i.executable_name);
                }
                DataType::Envar => {
                    let e = ptr::read_unaligned(p as *mut pmix_envar_t);
                    free(e.envar);
                    free(e.value);
                }
                DataType::Coord => free((*(p as *mut pmix_coord_t)).coord),
                DataType::DataArray => destruct_darray(p as *mut pmix_data_array_t),
                DataType::Regex => free(ptr::read_unaligned(p as *mut *mut c_char)),
                DataType::RegAttr => {
                    let r = &mut *(p as *mut pmix_regattr_t);
                    free(r.name);
                    free_argv(r.description);
                }
                DataType::Geometry => {
                    let g = &mut *(p as *mut pmix_geometry_t);
                    free(g.uuid);
                    free(g.osname);
                    if !g.coordinates.is_null() {
                        for k in 0..g.ncoords {
                            destruct_elem(DataType::Coord, g.coordinates.add(k) as *mut u8);
                        }
                        free(g.coordinates);
                    }
                }
                DataType::ProcCpuset => crate::topology::destruct_cpuset(p as *mut pmix_cpuset_t),
                DataType::Topo => crate::topology::destruct_topology(p as *mut pmix_topology_t),
                DataType::DeviceDist => {
                    let d = &mut *(p as *mut pmix_device_distance_t);
                    free(d.uuid);
                    free(d.osname);
                }
                DataType::Endpoint => {
                    let e = &mut *(p as *mut pmix_endpoint_t);
                    free(e.uuid);
                    free(e.osname);
                    free(e.endpt.bytes);
                }
                DataType::DataBuffer => free((*(p as *mut pmix_data_buffer_t)).base_ptr),
                DataType::ProcStats => {
                    let s = &mut *(p as *mut pmix_proc_stats_t);
                    free(s.node);
                    free(s.cmd);
                }
                DataType::DiskStats => free((*(p as *mut pmix_disk_stats_t)).disk),
                DataType::NetStats => free((*(p as *mut pmix_net_stats_t)).net_interface),
                DataType::NodeStats => {
                    let n = &mut *(p as *mut pmix_node_stats_t);
                    free(n.node);
                    for (a, k, ty, sz) in [
                        (
                            n.diskstats as *mut u8,
                            n.ndiskstats,
                            DataType::DiskStats,
                            size_of::<pmix_disk_stats_t>(),
                        ),
                        (
                            n.netstats as *mut u8,
                            n.nnetstats,
                            DataType::NetStats,
                            size_of::<pmix_net_stats_t>(),
                        ),
                    ] {
                        if !a.is_null() {
                            for i in 0..k {
                                destruct_elem(ty, a.add(i * sz));
                            }
                            free(a);
                        }
                    }
                }
                _ => {}
            }
        }
        ptr::write_bytes(p, 0, sz);
    }
}

/// Free a data array's elements (not the `pmix_data_array_t` itself).
///
/// # Safety
/// `a` points to a data array whose storage is NULL or malloc'd.
pub unsafe fn destruct_darray(a: *mut pmix_data_array_t) {
    // SAFETY: the caller's contract
    unsafe {
        let a = &mut *a;
        if let (Some(ty), false) = (DataType::from_code(a.r#type), a.array.is_null()) {
            if let Some(sz) = elem_size(ty) {
                for i in 0..a.size {
                    destruct_elem(ty, (a.array as *mut u8).add(i * sz));
                }
            }
            free(a.array);
        }
        a.array = ptr::null_mut();
        a.size = 0;
    }
}

/// `PMIx_Value_destruct`: free what the value owns and make it UNDEF.
///
/// # Safety
/// `v` points to a value whose pointers are NULL or malloc'd.
pub unsafe fn destruct_value(v: *mut pmix_value_t) {
    // SAFETY: the caller's contract
    unsafe {
        let val = &mut *v;
        if let Some(ty) = DataType::from_code(val.r#type) {
            let d = &mut val.data as *mut pmix_value_data as *mut u8;
            if ty == DataType::Regex {
                free(val.data.bo.bytes);
            } else if held_inline(ty) {
                destruct_elem(ty, d);
            } else if held_by_pointer(ty) && !val.data.ptr.is_null() {
                destruct_elem(ty, val.data.ptr as *mut u8);
                free(val.data.ptr);
            }
        }
        val.r#type = 0;
        val.data = std::mem::zeroed();
    }
}
