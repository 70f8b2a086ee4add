//! hwloc, opened at run time: the few functions the topology calls and
//! the PMIX_TOPO / PMIX_PROC_CPUSET values need.
//!
//! A `pmix_topology_t` whose source is "hwloc" holds an
//! `hwloc_topology_t` and a `pmix_cpuset_t` an `hwloc_bitmap_t`: the
//! caller reads them with hwloc's own calls, so nothing but hwloc can
//! make them. The library is not linked: `libhwloc.so.15` (hwloc 2.x,
//! the one libpmix links, and the one a program using these objects has
//! loaded already, which the loader then hands back) is opened the first
//! time one of them is needed. Without it those calls answer
//! PMIX_ERR_NOT_SUPPORTED. The declarations are hwloc 2's public API
//! (`hwloc.h`): opaque pointers, but for the objects the device
//! distances and locality strings walk, whose public `struct hwloc_obj`
//! ([`Obj`]) is written from hwloc 2's `hwloc.h` (its layout is proved
//! against that header by capi/tests/libpmix_capi_topo.rs).

use std::ffi::{c_char, c_int, c_uint, c_ulong, c_void};
use std::sync::OnceLock;

/// `hwloc_topology_t`.
pub type Topo = *mut c_void;
/// `hwloc_bitmap_t`.
pub type Bitmap = *mut c_void;

/// `HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED`.
pub const FLAG_INCLUDE_DISALLOWED: c_ulong = 1 << 0;
/// `HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM`.
pub const FLAG_IS_THISSYSTEM: c_ulong = 1 << 1;
/// `HWLOC_TYPE_FILTER_KEEP_IMPORTANT`.
pub const FILTER_KEEP_IMPORTANT: c_int = 3;
/// `HWLOC_CPUBIND_PROCESS`.
pub const CPUBIND_PROCESS: c_int = 1 << 0;
/// `HWLOC_CPUBIND_THREAD`.
pub const CPUBIND_THREAD: c_int = 1 << 1;

/// `HWLOC_OBJ_PU`.
pub const OBJ_PU: c_int = 3;
/// `HWLOC_OBJ_L1CACHE`.
pub const OBJ_L1CACHE: c_int = 4;
/// `HWLOC_OBJ_L2CACHE`.
pub const OBJ_L2CACHE: c_int = 5;
/// `HWLOC_OBJ_L3CACHE`.
pub const OBJ_L3CACHE: c_int = 6;
/// `HWLOC_OBJ_PACKAGE`.
pub const OBJ_PACKAGE: c_int = 1;
/// `HWLOC_OBJ_CORE`.
pub const OBJ_CORE: c_int = 2;
/// `HWLOC_OBJ_NUMANODE`.
pub const OBJ_NUMANODE: c_int = 13;
/// `HWLOC_TYPE_DEPTH_NUMANODE`: the virtual depth of the NUMA nodes.
pub const DEPTH_NUMANODE: c_int = -3;
/// `HWLOC_TYPE_DEPTH_OS_DEVICE`: the virtual depth of the OS devices.
pub const DEPTH_OS_DEVICE: c_int = -6;
/// `HWLOC_OBJ_OSDEV_BLOCK` … `HWLOC_OBJ_OSDEV_COPROC`
/// (`hwloc_obj_osdev_type_t`, in the enum's order).
pub const OSDEV_BLOCK: c_int = 0;
/// `HWLOC_OBJ_OSDEV_GPU`.
pub const OSDEV_GPU: c_int = 1;
/// `HWLOC_OBJ_OSDEV_NETWORK`.
pub const OSDEV_NETWORK: c_int = 2;
/// `HWLOC_OBJ_OSDEV_OPENFABRICS`.
pub const OSDEV_OPENFABRICS: c_int = 3;
/// `HWLOC_OBJ_OSDEV_DMA`.
pub const OSDEV_DMA: c_int = 4;
/// `HWLOC_OBJ_OSDEV_COPROC`.
pub const OSDEV_COPROC: c_int = 5;

/// `struct hwloc_info_s`: one name=value info of an object.
#[repr(C)]
pub struct InfoS {
    /// `name`.
    pub name: *mut c_char,
    /// `value`.
    pub value: *mut c_char,
}

/// hwloc 2's public `struct hwloc_obj` (`hwloc_obj_t` points to one),
/// every member in the header's order. Read only: hwloc owns the objects.
#[repr(C)]
pub struct Obj {
    /// `type` (`hwloc_obj_type_t`).
    pub r#type: c_int,
    /// `subtype`.
    pub subtype: *mut c_char,
    /// `os_index`.
    pub os_index: c_uint,
    /// `name`.
    pub name: *mut c_char,
    /// `total_memory`.
    pub total_memory: u64,
    /// `attr` (`union hwloc_obj_attr_u *`; for an OS device its first
    /// member is the `hwloc_obj_osdev_type_t`).
    pub attr: *mut c_void,
    /// `depth`.
    pub depth: c_int,
    /// `logical_index`.
    pub logical_index: c_uint,
    /// `next_cousin`.
    pub next_cousin: *mut Obj,
    /// `prev_cousin`.
    pub prev_cousin: *mut Obj,
    /// `parent`.
    pub parent: *mut Obj,
    /// `sibling_rank`.
    pub sibling_rank: c_uint,
    /// `next_sibling`.
    pub next_sibling: *mut Obj,
    /// `prev_sibling`.
    pub prev_sibling: *mut Obj,
    /// `arity`.
    pub arity: c_uint,
    /// `children`.
    pub children: *mut *mut Obj,
    /// `first_child`.
    pub first_child: *mut Obj,
    /// `last_child`.
    pub last_child: *mut Obj,
    /// `symmetric_subtree`.
    pub symmetric_subtree: c_int,
    /// `memory_arity`.
    pub memory_arity: c_uint,
    /// `memory_first_child`.
    pub memory_first_child: *mut Obj,
    /// `io_arity`.
    pub io_arity: c_uint,
    /// `io_first_child`.
    pub io_first_child: *mut Obj,
    /// `misc_arity`.
    pub misc_arity: c_uint,
    /// `misc_first_child`.
    pub misc_first_child: *mut Obj,
    /// `cpuset`.
    pub cpuset: Bitmap,
    /// `complete_cpuset`.
    pub complete_cpuset: Bitmap,
    /// `nodeset`.
    pub nodeset: Bitmap,
    /// `complete_nodeset`.
    pub complete_nodeset: Bitmap,
    /// `infos`.
    pub infos: *mut InfoS,
    /// `infos_count`.
    pub infos_count: c_uint,
    /// `userdata`.
    pub userdata: *mut c_void,
    /// `gp_index`.
    pub gp_index: u64,
}

/// `struct hwloc_topology_support`: pointers to three structs of flags
/// (one `unsigned char` each), then a fourth this library does not read.
#[repr(C)]
pub struct Support {
    /// `struct hwloc_topology_discovery_support *`.
    pub discovery: *mut u8,
    /// `struct hwloc_topology_cpubind_support *`.
    pub cpubind: *mut u8,
    /// `struct hwloc_topology_membind_support *`.
    pub membind: *mut u8,
}

/// The sizes of the discovery, cpubind and membind support structs of
/// hwloc 2.8 and later (API 0x20800: 6, 11 and 15 flags), as a topology
/// carries them after its XML on the wire (pmix-codec's 32 bytes).
pub const SUPPORT_SIZES: [usize; 3] = [6, 11, 15];
const _: () = assert!(
    SUPPORT_SIZES[0] + SUPPORT_SIZES[1] + SUPPORT_SIZES[2] == pmix_codec::HWLOC_SUPPORT_BYTES
);

macro_rules! hwloc_fns {
    ($($field:ident = $sym:literal : fn($($a:ty),*) $(-> $r:ty)?;)*) => {
        /// The functions, resolved from the opened library.
        pub struct Hwloc {
            $(
                #[doc = concat!("`", $sym, "`.")]
                pub $field: unsafe extern "C" fn($($a),*) $(-> $r)?,
            )*
        }

        impl Hwloc {
            fn resolve(handle: *mut c_void) -> Option<Hwloc> {
                Some(Hwloc {
                    $(
                        $field: {
                            // SAFETY: a handle from dlopen and a NUL-terminated name
                            let p = unsafe { libc::dlsym(handle, concat!($sym, "\0").as_ptr() as *const c_char) };
                            if p.is_null() {
                                return None;
                            }
                            // SAFETY: hwloc 2's symbol of this name has this signature
                            unsafe { std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($a),*) $(-> $r)?>(p) }
                        },
                    )*
                })
            }
        }
    };
}

hwloc_fns! {
    api_version = "hwloc_get_api_version": fn() -> c_uint;
    topology_init = "hwloc_topology_init": fn(*mut Topo) -> c_int;
    topology_load = "hwloc_topology_load": fn(Topo) -> c_int;
    topology_destroy = "hwloc_topology_destroy": fn(Topo);
    set_io_types_filter = "hwloc_topology_set_io_types_filter": fn(Topo, c_int) -> c_int;
    set_flags = "hwloc_topology_set_flags": fn(Topo, c_ulong) -> c_int;
    set_xmlbuffer = "hwloc_topology_set_xmlbuffer": fn(Topo, *const c_char, c_int) -> c_int;
    export_xmlbuffer = "hwloc_topology_export_xmlbuffer": fn(Topo, *mut *mut c_char, *mut c_int, c_ulong) -> c_int;
    free_xmlbuffer = "hwloc_free_xmlbuffer": fn(Topo, *mut c_char);
    get_support = "hwloc_topology_get_support": fn(Topo) -> *const Support;
    bitmap_alloc = "hwloc_bitmap_alloc": fn() -> Bitmap;
    bitmap_free = "hwloc_bitmap_free": fn(Bitmap);
    bitmap_list_sscanf = "hwloc_bitmap_list_sscanf": fn(Bitmap, *const c_char) -> c_int;
    bitmap_list_asprintf = "hwloc_bitmap_list_asprintf": fn(*mut *mut c_char, Bitmap) -> c_int;
    get_cpubind = "hwloc_get_cpubind": fn(Topo, Bitmap, c_int) -> c_int;
    topology_get_depth = "hwloc_topology_get_depth": fn(Topo) -> c_int;
    get_depth_type = "hwloc_get_depth_type": fn(Topo, c_int) -> c_int;
    get_type_depth = "hwloc_get_type_depth": fn(Topo, c_int) -> c_int;
    get_nbobjs_by_depth = "hwloc_get_nbobjs_by_depth": fn(Topo, c_int) -> c_uint;
    get_obj_by_depth = "hwloc_get_obj_by_depth": fn(Topo, c_int, c_uint) -> *mut Obj;
    bitmap_isincluded = "hwloc_bitmap_isincluded": fn(Bitmap, Bitmap) -> c_int;
    bitmap_intersects = "hwloc_bitmap_intersects": fn(Bitmap, Bitmap) -> c_int;
    bitmap_isfull = "hwloc_bitmap_isfull": fn(Bitmap) -> c_int;
    bitmap_iszero = "hwloc_bitmap_iszero": fn(Bitmap) -> c_int;
    bitmap_set = "hwloc_bitmap_set": fn(Bitmap, c_uint) -> c_int;
}

/// hwloc, if `libhwloc.so.15` opens and is hwloc 2.8 or later (the
/// support sizes above); opened once.
pub fn get() -> Option<&'static Hwloc> {
    static H: OnceLock<Option<Hwloc>> = OnceLock::new();
    H.get_or_init(|| {
        // global, as a library linked with hwloc has it: hwloc's own
        // plugins (its PCI discovery, hwloc_pci.so) take its symbols from
        // the process, and fail to load beside a local copy
        // SAFETY: a NUL-terminated name; the handle is kept for the process
        let handle = unsafe {
            libc::dlopen(
                c"libhwloc.so.15".as_ptr(),
                libc::RTLD_NOW | libc::RTLD_GLOBAL,
            )
        };
        if handle.is_null() {
            return None;
        }
        let h = Hwloc::resolve(handle)?;
        // SAFETY: resolved above, no arguments
        let v = unsafe { (h.api_version)() };
        (0x20800..0x30000).contains(&v).then_some(h)
    })
    .as_ref()
}

/// `b` up to its first NUL as a C string.
fn c_string(b: &[u8]) -> std::ffi::CString {
    let n = b.iter().position(|c| *c == 0).unwrap_or(b.len());
    std::ffi::CString::new(&b[..n]).unwrap_or_default()
}

impl Hwloc {
    /// The objects at `depth` of `t` (a normal depth or a virtual one),
    /// in their logical order; NULLs left out.
    ///
    /// # Safety
    /// `t` is a loaded `hwloc_topology_t`, which outlives the objects' use.
    pub unsafe fn objs(&self, t: Topo, depth: c_int) -> Vec<&'static Obj> {
        // SAFETY: t is loaded
        let n = unsafe { (self.get_nbobjs_by_depth)(t, depth) };
        // SAFETY: indices below the level's width; hwloc's objects, alive
        // as long as t
        (0..n)
            .filter_map(|i| unsafe { (self.get_obj_by_depth)(t, depth, i).as_ref() })
            .collect()
    }

    /// A bitmap's list form ("0-3,8"), None if hwloc cannot print it.
    ///
    /// # Safety
    /// `b` is an `hwloc_bitmap_t`.
    pub unsafe fn list(&self, b: Bitmap) -> Option<Vec<u8>> {
        let mut s: *mut c_char = std::ptr::null_mut();
        // SAFETY: b is a bitmap; s receives a malloc'd string
        let n = unsafe { (self.bitmap_list_asprintf)(&mut s, b) };
        if n < 0 || s.is_null() {
            return None;
        }
        // SAFETY: a NUL-terminated string hwloc malloc'd, freed after the copy
        let out = unsafe { std::ffi::CStr::from_ptr(s) }.to_bytes().to_vec();
        // SAFETY: malloc'd by hwloc
        unsafe { libc::free(s as *mut c_void) };
        Some(out)
    }

    /// A new bitmap of a list form ("0-3,8", as hwloc reads it), None if
    /// hwloc cannot allocate one.
    pub fn parse(&self, list: &[u8]) -> Option<Bitmap> {
        let c = c_string(list);
        // SAFETY: no arguments
        let b = unsafe { (self.bitmap_alloc)() };
        if b.is_null() {
            return None;
        }
        // SAFETY: a fresh bitmap and a NUL-terminated string; an unreadable
        // list leaves the bitmap empty, as hwloc leaves it
        unsafe { (self.bitmap_list_sscanf)(b, c.as_ptr()) };
        Some(b)
    }

    /// A topology loaded as libpmix loads one: from `xml` if given, else
    /// this machine's; its I/O devices kept as far as hwloc deems them
    /// important. None if hwloc fails.
    pub fn load(&self, xml: Option<&[u8]>) -> Option<Topo> {
        let mut t: Topo = std::ptr::null_mut();
        // SAFETY: t receives a new topology
        if unsafe { (self.topology_init)(&mut t) } != 0 || t.is_null() {
            return None;
        }
        let ok = (|| {
            if let Some(x) = xml {
                let c = c_string(x);
                let len = c_int::try_from(c.as_bytes_with_nul().len()).ok()?;
                // SAFETY: t is a fresh topology, c a NUL-terminated buffer of len bytes
                if unsafe { (self.set_xmlbuffer)(t, c.as_ptr(), len) } != 0 {
                    return None;
                }
            }
            let flags = if xml.is_some() {
                FLAG_IS_THISSYSTEM | FLAG_INCLUDE_DISALLOWED
            } else {
                0
            };
            // SAFETY: t is a fresh topology, not yet loaded
            unsafe {
                if (self.set_io_types_filter)(t, FILTER_KEEP_IMPORTANT) != 0
                    || (self.set_flags)(t, flags) != 0
                    || (self.topology_load)(t) != 0
                {
                    return None;
                }
            }
            Some(())
        })();
        if ok.is_none() {
            // SAFETY: t was initialized above
            unsafe { (self.topology_destroy)(t) };
            return None;
        }
        Some(t)
    }

    /// A loaded topology's XML (hwloc 2's form), None if hwloc fails.
    ///
    /// # Safety
    /// `t` is a loaded `hwloc_topology_t`.
    pub unsafe fn xml(&self, t: Topo) -> Option<Vec<u8>> {
        let mut s: *mut c_char = std::ptr::null_mut();
        let mut len: c_int = 0;
        // SAFETY: t is loaded; s and len receive hwloc's buffer
        if unsafe { (self.export_xmlbuffer)(t, &mut s, &mut len, 0) } != 0 || s.is_null() {
            return None;
        }
        // SAFETY: a NUL-terminated buffer hwloc made, freed by hwloc after the copy
        let out = unsafe { std::ffi::CStr::from_ptr(s) }.to_bytes().to_vec();
        // SAFETY: the buffer export_xmlbuffer made for t
        unsafe { (self.free_xmlbuffer)(t, s) };
        Some(out)
    }

    /// The support structs' flags of `t`, in the wire's order
    /// (discovery, cpubind, membind), or written into them from `set`.
    ///
    /// # Safety
    /// `t` is a loaded `hwloc_topology_t`.
    pub unsafe fn support(&self, t: Topo, set: Option<&[u8]>) -> Vec<u8> {
        // SAFETY: t is loaded
        let s = unsafe { (self.get_support)(t) };
        let mut out = Vec::new();
        if s.is_null() {
            return out;
        }
        // SAFETY: hwloc's support struct of t, whose members point to
        // structs of at least SUPPORT_SIZES flags (hwloc 2.8+, checked at
        // open); libpmix writes them after an XML load too, since hwloc's
        // XML does not carry them
        unsafe {
            let parts = [(*s).discovery, (*s).cpubind, (*s).membind];
            let mut at = 0;
            for (p, n) in parts.into_iter().zip(SUPPORT_SIZES) {
                if p.is_null() {
                    return Vec::new();
                }
                match set {
                    Some(b) if b.len() >= at + n => {
                        std::ptr::copy_nonoverlapping(b[at..].as_ptr(), p, n)
                    }
                    Some(_) => {}
                    None => out.extend_from_slice(std::slice::from_raw_parts(p, n)),
                }
                at += n;
            }
        }
        out
    }
}
