//! The value model: one Rust type per PMIx type.
//!
//! `Value` has one variant per `pmix_data_type_t`. Structures mirror the
//! C structs field by field, except where C keeps state the wire does not
//! carry (documented on the field). Strings that C allows to be NULL are
//! `Option<PString>`; fixed arrays (`pmix_nspace_t`, `pmix_key_t`) are
//! the length-checked [`Nspace`] and [`Key`].

use crate::datatype::DataType;
#[cfg(feature = "serde")]
use crate::hex::serde_bytes_hex;
use crate::pstring::{Key, Nspace, PString};
use crate::rank::*;
use bytes::Bytes;
#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

/// `pmix_info_directives_t` bits.
pub mod directives {
    /// No bit set: the attribute is optional (the default).
    pub const OPTIONAL: u32 = 0x0000_0000;
    /// `PMIX_INFO_REQD`: the receiver must honour the attribute or fail the call.
    pub const REQD: u32 = 0x0000_0001;
    /// `PMIX_INFO_ARRAY_END`: marks the last element of an info array.
    pub const ARRAY_END: u32 = 0x0000_0002;
    /// `PMIX_INFO_REQD_PROCESSED`: a required attribute has been processed.
    pub const REQD_PROCESSED: u32 = 0x0000_0004;
    /// `PMIX_INFO_QUALIFIER`: the attribute qualifies another one in the same array.
    pub const QUALIFIER: u32 = 0x0000_0008;
    /// `PMIX_INFO_PERSISTENT`: the value must not be freed by the receiver.
    pub const PERSISTENT: u32 = 0x0000_0010;
    /// The lowest of the bits `PMIX_INFO_DIR_RESERVED` leaves to host-defined directives.
    pub const DIR_USER_BASE: u32 = 0x0001_0000;
    /// `PMIX_INFO_DIR_RESERVED`: the 16 high bits, left to host-defined directives.
    pub const DIR_USER_MASK: u32 = 0xffff_0000;
}

/// `struct timeval`, both halves as the 64-bit integers the wire carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Timeval {
    /// Seconds (`tv_sec`).
    pub sec: i64,
    /// Microseconds (`tv_usec`).
    pub usec: i64,
}

/// `pmix_proc_t`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct Proc {
    /// The namespace: the job the process belongs to.
    pub nspace: Nspace,
    /// The process's rank in its namespace, or a special rank ([`RANK_WILDCARD`] …).
    pub rank: u32,
}

impl Proc {
    /// The process `rank` of namespace `nspace` (truncated to `PMIX_MAX_NSLEN`).
    pub fn new(nspace: &str, rank: u32) -> Proc {
        Proc {
            nspace: Nspace::from(nspace),
            rank,
        }
    }

    /// A process of `nspace` at a typed rank: `Proc::at("ns", Rank::WILDCARD)`.
    pub fn at(nspace: &str, rank: crate::rank::Rank) -> Proc {
        Proc::new(nspace, rank.wire())
    }

    /// The rank as the standard's type.
    pub fn rank(&self) -> crate::rank::Rank {
        crate::rank::Rank::new(self.rank)
    }

    /// Every process of this namespace (rank WILDCARD): where job-level
    /// data lives.
    pub fn job(&self) -> Proc {
        Proc {
            nspace: self.nspace.clone(),
            rank: RANK_WILDCARD,
        }
    }
}

/// `pmix_info_t`.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct Info {
    /// The attribute's key (`pmix.job.size` …).
    pub key: Key,
    /// `pmix_info_directives_t` bits ([`directives`]).
    pub flags: u32,
    /// The attribute's value.
    pub value: Value,
}

impl Info {
    /// An optional attribute: `key` = `value`, no directive bits.
    pub fn new(key: &str, value: Value) -> Info {
        Info {
            key: Key::from(key),
            flags: 0,
            value,
        }
    }

    /// Whether this info qualifies a request's key (its
    /// [`directives::QUALIFIER`] bit: PMIx_Get's qualified values).
    pub fn is_qualifier(&self) -> bool {
        self.flags & directives::QUALIFIER != 0
    }
}

/// `pmix_pdata_t`.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct Pdata {
    /// The process that published the datum.
    pub proc: Proc,
    /// The published key.
    pub key: Key,
    /// The published value.
    pub value: Value,
}

/// `pmix_kval_t` (internal to libpmix, but on the wire).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct Kval {
    /// The key, which libpmix allows to be NULL.
    pub key: Option<PString>,
    /// The value stored under the key.
    pub value: Value,
}

/// `pmix_app_t`.
#[derive(Clone, Debug, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct App {
    /// The executable to start.
    pub cmd: Option<PString>,
    /// Its argument vector, `argv[0]` included.
    pub argv: Vec<PString>,
    /// `NAME=value` strings added to its environment.
    pub env: Vec<PString>,
    /// The working directory, if not the caller's.
    pub cwd: Option<PString>,
    /// How many processes of this application to start.
    pub maxprocs: i32,
    /// Attributes for this application (`pmix.mapby` …).
    pub info: Vec<Info>,
}

/// `pmix_data_array_t`: a typed array, or the typeless `{UNDEF, size, NULL}`
/// form that libpmix produces when it copies a value with no array.
///
/// JSON: `{"type": "INT32", "elements": [1, -1]}` (elements in their bare
/// form) or `{"type": "UNDEF", "size": 2}`.
#[derive(Clone, Debug, PartialEq)]
pub enum DataArray {
    /// Elements all of `elem_type` (never UNDEF; a VALUE array holds tagged values).
    Typed {
        /// The type of every element.
        elem_type: DataType,
        /// The elements, each a value of `elem_type`.
        elements: Vec<Value>,
    },
    /// Type UNDEF with a size and no elements.
    Undef {
        /// The element count the descriptor claims.
        size: u64,
    },
}

impl DataArray {
    /// A typed array; every element must be of `elem_type`, else the
    /// offending element's type is returned. UNDEF gives the typeless form.
    pub fn new(elem_type: DataType, elements: Vec<Value>) -> Result<DataArray, DataType> {
        if let Some(bad) = elements.iter().find(|e| e.data_type() != elem_type) {
            return Err(bad.data_type());
        }
        if elem_type == DataType::Undef {
            return Ok(DataArray::Undef {
                size: elements.len() as u64,
            });
        }
        Ok(DataArray::Typed {
            elem_type,
            elements,
        })
    }
    /// The typeless `{UNDEF, size, NULL}` array.
    pub fn undef(size: u64) -> DataArray {
        DataArray::Undef { size }
    }
    /// The element type: UNDEF for the typeless form.
    pub fn elem_type(&self) -> DataType {
        match self {
            DataArray::Typed { elem_type, .. } => *elem_type,
            DataArray::Undef { .. } => DataType::Undef,
        }
    }
    /// The number of elements the descriptor claims.
    pub fn size(&self) -> u64 {
        match self {
            DataArray::Typed { elements, .. } => elements.len() as u64,
            DataArray::Undef { size } => *size,
        }
    }
}

#[cfg(feature = "serde")]
impl Serialize for DataArray {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("type", self.elem_type().short_name())?;
        match self {
            DataArray::Typed { elements, .. } => {
                let list: Vec<serde_json::Value> = elements.iter().map(bare_to_json).collect();
                m.serialize_entry("elements", &list)?;
            }
            DataArray::Undef { size } => m.serialize_entry("size", size)?,
        }
        m.end()
    }
}

#[cfg(feature = "serde")]
impl<'de> Deserialize<'de> for DataArray {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Raw {
            #[cfg_attr(feature = "serde", serde(rename = "type", with = "type_name"))]
            ty: DataType,
            elements: Option<Vec<serde_json::Value>>,
            size: Option<u64>,
        }
        let r = Raw::deserialize(d)?;
        match (r.ty, r.elements, r.size) {
            (DataType::Undef, None, size) => Ok(DataArray::Undef {
                size: size.unwrap_or(0),
            }),
            (DataType::Undef, Some(_), _) => {
                Err(D::Error::custom("an UNDEF array has a size, not elements"))
            }
            (ty, elements, None) => {
                let elements = elements
                    .unwrap_or_default()
                    .into_iter()
                    .map(|j| value_from_bare_json(ty, j))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(D::Error::custom)?;
                Ok(DataArray::Typed {
                    elem_type: ty,
                    elements,
                })
            }
            (_, _, Some(_)) => Err(D::Error::custom("only an UNDEF array has a size")),
        }
    }
}

/// `pmix_query_t`.
#[derive(Clone, Debug, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct Query {
    /// The keys asked for (`pmix.qry.ns` …).
    pub keys: Vec<PString>,
    /// Attributes narrowing the query (`pmix.nsp` …).
    pub qualifiers: Vec<Info>,
}

/// `pmix_proc_info_t`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct ProcInfo {
    /// The process described.
    pub proc: Proc,
    /// The node it runs on.
    pub hostname: Option<PString>,
    /// The path of its executable.
    pub executable_name: Option<PString>,
    /// `pid_t`, carried as the UINT32 the wire uses.
    pub pid: u32,
    /// Not transmitted by any dialect: always 0 after unpacking.
    pub exit_code: i32,
    /// Its `pmix_proc_state_t` ([`crate::names::proc_state`]).
    pub state: u8,
}

/// `pmix_envar_t`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct Envar {
    /// The environment variable's name.
    pub envar: Option<PString>,
    /// The value to set, prepend or append.
    pub value: Option<PString>,
    /// The separator character used when prepending or appending (`:`).
    pub separator: u8,
}

/// `pmix_coord_t`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct Coord {
    /// `pmix_coord_view_t`: 1 logical, 2 physical (0 undefined).
    pub view: u8,
    /// The coordinate in each dimension.
    pub coord: Vec<u32>,
}

/// `pmix_regattr_t`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct RegAttr {
    /// The attribute's name as the standard spells it (`PMIX_JOB_SIZE`).
    pub name: Option<PString>,
    /// The attribute string (a `pmix_key_t`).
    pub string: Key,
    /// A `pmix_data_type_t` code (kept numeric: any code may be named).
    #[cfg_attr(feature = "serde", serde(rename = "type"))]
    pub ty: u16,
    /// Lines of human-readable description.
    pub description: Vec<PString>,
}

/// `PMIX_REGEX` content, in the three forms the preg framework writes.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Regex {
    /// A `pmix[…]` (native) or `raw:…` string, written raw with its NUL and no length.
    Text(PString),
    /// A `blob:` (compress component) block: the exact bytes written.
    Blob(#[cfg_attr(feature = "serde", serde(with = "serde_bytes_hex"))] Bytes),
    /// Any other string: a whole count + STRING pack unit.
    Packed(Option<PString>),
}

/// `pmix_cpuset_t`: the hwloc list form of the bitmap ("0-3,8"), or None
/// for a NULL bitmap. The source is always "hwloc" on the wire.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct Cpuset {
    /// The list form of the bitmap (`0-3,8`), None for a NULL bitmap.
    pub cpus: Option<PString>,
}

/// `pmix_topology_t`: hwloc XML and the raw hwloc support structures the
/// sender's hwloc exported (present only when the XML is).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct Topology {
    /// The hwloc XML, None for no topology.
    pub xml: Option<PString>,
    /// hwloc's exported support structures (empty without XML).
    #[cfg_attr(feature = "serde", serde(with = "serde_bytes_hex"))]
    pub support: Bytes,
}

/// `pmix_geometry_t`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct Geometry {
    /// The index of the fabric the coordinates are in.
    pub fabric: u64,
    /// The device's unique identifier.
    pub uuid: Option<PString>,
    /// The device's operating-system name (`eth0`, `mlx5_0`).
    pub osname: Option<PString>,
    /// The device's coordinates, one per view.
    pub coordinates: Vec<Coord>,
}

/// `pmix_device_distance_t`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct DeviceDist {
    /// The device's unique identifier.
    pub uuid: Option<PString>,
    /// The device's operating-system name.
    pub osname: Option<PString>,
    /// Its `pmix_device_type_t` bits ([`crate::names::device_type`]).
    #[cfg_attr(feature = "serde", serde(rename = "type"))]
    pub devtype: u64,
    /// The minimum distance from the process's cpus to the device.
    pub mindist: u16,
    /// The maximum distance from the process's cpus to the device.
    pub maxdist: u16,
}

/// `pmix_endpoint_t`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct Endpoint {
    /// The endpoint's device's unique identifier.
    pub uuid: Option<PString>,
    /// The endpoint's device's operating-system name.
    pub osname: Option<PString>,
    /// The fabric-specific endpoint address.
    #[cfg_attr(feature = "serde", serde(with = "serde_bytes_hex"))]
    pub endpt: Bytes,
}

/// `pmix_proc_stats_t`.
#[derive(Clone, Debug, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct ProcStats {
    /// The node the process runs on.
    pub node: Option<PString>,
    /// The process.
    pub proc: Proc,
    /// Its pid.
    pub pid: u32,
    /// Its command.
    pub cmd: Option<PString>,
    /// Its state character as in `/proc/PID/stat` (`R`, `S` …).
    pub state: u8,
    /// CPU time used.
    pub time: Timeval,
    /// Not transmitted: always 0 after unpacking.
    #[cfg_attr(feature = "serde", serde(with = "float32"))]
    pub percent_cpu: f32,
    /// Scheduling priority.
    pub priority: i32,
    /// Number of threads.
    pub num_threads: u16,
    /// Proportional set size, MB.
    #[cfg_attr(feature = "serde", serde(with = "float32"))]
    pub pss: f32,
    /// Virtual memory size, MB.
    #[cfg_attr(feature = "serde", serde(with = "float32"))]
    pub vsize: f32,
    /// Resident set size, MB.
    #[cfg_attr(feature = "serde", serde(with = "float32"))]
    pub rss: f32,
    /// Not transmitted: always 0 after unpacking.
    #[cfg_attr(feature = "serde", serde(with = "float32"))]
    pub peak_vsize: f32,
    /// The cpu it last ran on.
    pub processor: u16,
    /// When the sample was taken.
    pub sample_time: Timeval,
}

/// `pmix_disk_stats_t`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct DiskStats {
    /// The disk's name (`sda`).
    pub disk: Option<PString>,
    /// Reads completed (`/proc/diskstats` field 4).
    pub reads_completed: u64,
    /// Adjacent reads merged.
    pub reads_merged: u64,
    /// Sectors read.
    pub sectors_read: u64,
    /// Milliseconds spent reading.
    pub milliseconds_reading: u64,
    /// Writes completed.
    pub writes_completed: u64,
    /// Adjacent writes merged.
    pub writes_merged: u64,
    /// Sectors written.
    pub sectors_written: u64,
    /// Milliseconds spent writing.
    pub milliseconds_writing: u64,
    /// I/Os in progress at sampling time.
    pub num_ios_in_progress: u64,
    /// Milliseconds spent doing I/O.
    pub milliseconds_io: u64,
    /// Weighted milliseconds spent doing I/O.
    pub weighted_milliseconds_io: u64,
}

impl DiskStats {
    /// The eleven counters in wire order.
    pub fn counters(&self) -> [u64; 11] {
        [
            self.reads_completed,
            self.reads_merged,
            self.sectors_read,
            self.milliseconds_reading,
            self.writes_completed,
            self.writes_merged,
            self.sectors_written,
            self.milliseconds_writing,
            self.num_ios_in_progress,
            self.milliseconds_io,
            self.weighted_milliseconds_io,
        ]
    }
    /// From the disk name and the eleven counters in wire order.
    pub fn from_counters(disk: Option<PString>, c: [u64; 11]) -> DiskStats {
        let [reads_completed, reads_merged, sectors_read, milliseconds_reading, writes_completed, writes_merged, sectors_written, milliseconds_writing, num_ios_in_progress, milliseconds_io, weighted_milliseconds_io] =
            c;
        DiskStats {
            disk,
            reads_completed,
            reads_merged,
            sectors_read,
            milliseconds_reading,
            writes_completed,
            writes_merged,
            sectors_written,
            milliseconds_writing,
            num_ios_in_progress,
            milliseconds_io,
            weighted_milliseconds_io,
        }
    }
}

/// `pmix_net_stats_t`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct NetStats {
    /// The interface's name (`eth0`).
    pub net_interface: Option<PString>,
    /// Bytes received.
    pub num_bytes_recvd: u64,
    /// Packets received.
    pub num_packets_recvd: u64,
    /// Receive errors.
    pub num_recv_errs: u64,
    /// Bytes sent.
    pub num_bytes_sent: u64,
    /// Packets sent.
    pub num_packets_sent: u64,
    /// Send errors.
    pub num_send_errs: u64,
}

impl NetStats {
    /// The six counters in wire order.
    pub fn counters(&self) -> [u64; 6] {
        [
            self.num_bytes_recvd,
            self.num_packets_recvd,
            self.num_recv_errs,
            self.num_bytes_sent,
            self.num_packets_sent,
            self.num_send_errs,
        ]
    }
    /// From the interface name and the six counters in wire order.
    pub fn from_counters(net_interface: Option<PString>, c: [u64; 6]) -> NetStats {
        let [num_bytes_recvd, num_packets_recvd, num_recv_errs, num_bytes_sent, num_packets_sent, num_send_errs] =
            c;
        NetStats {
            net_interface,
            num_bytes_recvd,
            num_packets_recvd,
            num_recv_errs,
            num_bytes_sent,
            num_packets_sent,
            num_send_errs,
        }
    }
}

/// `pmix_node_stats_t`.
#[derive(Clone, Debug, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct NodeStats {
    /// The node's name.
    pub node: Option<PString>,
    /// Load average over 1 minute.
    #[cfg_attr(feature = "serde", serde(with = "float32"))]
    pub la: f32,
    /// Load average over 5 minutes.
    #[cfg_attr(feature = "serde", serde(with = "float32"))]
    pub la5: f32,
    /// Load average over 15 minutes.
    #[cfg_attr(feature = "serde", serde(with = "float32"))]
    pub la15: f32,
    /// Total memory, MB.
    #[cfg_attr(feature = "serde", serde(with = "float32"))]
    pub total_mem: f32,
    /// Free memory, MB.
    #[cfg_attr(feature = "serde", serde(with = "float32"))]
    pub free_mem: f32,
    /// Buffer memory, MB.
    #[cfg_attr(feature = "serde", serde(with = "float32"))]
    pub buffers: f32,
    /// Page-cache memory, MB.
    #[cfg_attr(feature = "serde", serde(with = "float32"))]
    pub cached: f32,
    /// Swap cache, MB.
    #[cfg_attr(feature = "serde", serde(with = "float32"))]
    pub swap_cached: f32,
    /// Total swap, MB.
    #[cfg_attr(feature = "serde", serde(with = "float32"))]
    pub swap_total: f32,
    /// Free swap, MB.
    #[cfg_attr(feature = "serde", serde(with = "float32"))]
    pub swap_free: f32,
    /// Mapped memory, MB.
    #[cfg_attr(feature = "serde", serde(with = "float32"))]
    pub mapped: f32,
    /// When the sample was taken.
    pub sample_time: Timeval,
    /// Per-disk statistics.
    pub diskstats: Vec<DiskStats>,
    /// Per-interface statistics.
    pub netstats: Vec<NetStats>,
}

/// Internal `pmix_buffer_t` (PMIX_BUFFER, 26): its buffer type byte and bytes.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct Buffer {
    /// The buffer's `pmix_bfrops_buffer_type_t` (1 non-described, 2 fully described).
    pub buffer_type: u8,
    /// The packed bytes it holds.
    #[cfg_attr(feature = "serde", serde(with = "serde_bytes_hex"))]
    pub bytes: Bytes,
}

/// `pmix_device_t` (v6.0+).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct Device {
    /// The device's unique identifier.
    pub uuid: Option<PString>,
    /// The device's operating-system name.
    pub osname: Option<PString>,
    /// Its `pmix_device_type_t` bits ([`crate::names::device_type`]).
    #[cfg_attr(feature = "serde", serde(rename = "type"))]
    pub devtype: u64,
}

/// `pmix_resource_unit_t` (v6.0+).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct ResourceUnit {
    /// The `pmix_device_type_t` of the unit.
    #[cfg_attr(feature = "serde", serde(rename = "type"))]
    pub devtype: u64,
    /// How many of them.
    pub count: u64,
}

/// `pmix_node_pid_t` (v6.1+).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct NodePid {
    /// The node's name.
    pub hostname: Option<PString>,
    /// The node's identifier.
    pub nodeid: u32,
    /// The process id on that node.
    pub pid: u32,
}

/// `pmix_regex_t` (PMIX_REGEX2, master).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct Regex2 {
    /// The regex component that produced the data (`native`, `raw` …).
    #[cfg_attr(feature = "serde", serde(rename = "type"))]
    pub kind: Option<PString>,
    /// The regex's bytes as that component wrote them.
    #[cfg_attr(feature = "serde", serde(with = "serde_bytes_hex"))]
    pub data: Bytes,
}

// `Value` and its JSON mapping, generated from the rows of the one type
// table (`type_table.rs`): one variant per type, holding the row's Rust type.
macro_rules! values {
    ($( $code:literal $variant:ident $name:literal ( $($inner:ty)? ) $form:ty, $print:ident ; )*) => {
        /// One PMIx value of any type. The variant is the type.
        #[derive(Clone, Debug, PartialEq)]
        pub enum Value {
            $(
                #[doc = concat!("A value of the type [`DataType::", stringify!($variant), "`].")]
                $variant $( ($inner) )? ,
            )*
        }

        impl Value {
            /// The data type this value has.
            #[inline]
            pub fn data_type(&self) -> DataType {
                match self {
                    $( values!(@pat $variant $($inner)?) => DataType::$variant, )*
                }
            }
        }

        #[cfg(feature = "serde")]
        /// The bare JSON form of a value whose type is known from context.
        pub(crate) fn bare_to_json(v: &Value) -> serde_json::Value {
            match v {
                $( values!(@bind x $variant $($inner)?) => values!(@ser x $($inner)?), )*
            }
        }

        #[cfg(feature = "serde")]
        /// A value of type `ty` from its bare JSON form.
        pub fn value_from_bare_json(ty: DataType, j: serde_json::Value) -> Result<Value, serde_json::Error> {
            Ok(match ty {
                $( DataType::$variant => values!(@de j $variant $($inner)?), )*
            })
        }
    };
    (@pat $variant:ident) => { Value::$variant };
    (@pat $variant:ident $inner:ty) => { Value::$variant(_) };
    (@bind $x:ident $variant:ident) => { Value::$variant };
    (@bind $x:ident $variant:ident $inner:ty) => { Value::$variant($x) };
    (@ser $x:ident) => { serde_json::Value::Null };
    (@ser $x:ident $inner:ty) => { json::to_json::<$inner>($x) };
    (@de $j:ident $variant:ident) => {{ json::expect_null($j)?; Value::$variant }};
    (@de $j:ident $variant:ident $inner:ty) => { Value::$variant(json::from_json::<$inner>($j)?) };
}

impl From<crate::rank::Rank> for Value {
    fn from(r: crate::rank::Rank) -> Self {
        Value::ProcRank(r.wire())
    }
}

crate::type_table!(values);

/// Raw bytes whose JSON form is lower-case hex (byte objects, data buffers).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct Hex(#[cfg_attr(feature = "serde", serde(with = "serde_bytes_hex"))] pub Bytes);

impl From<&[u8]> for Hex {
    fn from(b: &[u8]) -> Self {
        Hex(Bytes::copy_from_slice(b))
    }
}

/// Values hold byte objects boxed (`Value` stays 24 bytes): build them
/// with `.into()` from a slice or from `Bytes`.
impl From<&[u8]> for Box<Hex> {
    fn from(b: &[u8]) -> Self {
        Box::new(Hex::from(b))
    }
}

impl From<Bytes> for Box<Hex> {
    fn from(b: Bytes) -> Self {
        Box::new(Hex(b))
    }
}

impl std::ops::Deref for Hex {
    type Target = Bytes;
    fn deref(&self) -> &Bytes {
        &self.0
    }
}

/// An `f32` whose JSON form survives NaN and infinities (as the strings
/// "nan", "-nan", "inf", "-inf"). Equality is bitwise, so NaN == NaN.
#[derive(Clone, Copy, Debug, Default)]
pub struct F32(pub f32);
/// An `f64`, as [`F32`].
#[derive(Clone, Copy, Debug, Default)]
pub struct F64(pub f64);

impl PartialEq for F32 {
    fn eq(&self, o: &Self) -> bool {
        self.0.to_bits() == o.0.to_bits()
    }
}
impl PartialEq for F64 {
    fn eq(&self, o: &Self) -> bool {
        self.0.to_bits() == o.0.to_bits()
    }
}

#[cfg(feature = "serde")]
impl Serialize for F32 {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        float32::serialize(&self.0, s)
    }
}
#[cfg(feature = "serde")]
impl<'de> Deserialize<'de> for F32 {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        float32::deserialize(d).map(F32)
    }
}
#[cfg(feature = "serde")]
impl Serialize for F64 {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        float64::serialize(&self.0, s)
    }
}
#[cfg(feature = "serde")]
impl<'de> Deserialize<'de> for F64 {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        float64::deserialize(d).map(F64)
    }
}

#[cfg(feature = "serde")]
macro_rules! float_mod {
    ($m:ident, $t:ty) => {
        pub(crate) mod $m {
            use serde::{de, Deserialize, Deserializer, Serializer};
            pub fn serialize<S: Serializer>(v: &$t, s: S) -> Result<S::Ok, S::Error> {
                if v.is_nan() {
                    s.serialize_str(if v.is_sign_negative() { "-nan" } else { "nan" })
                } else if v.is_infinite() {
                    s.serialize_str(if *v < 0.0 { "-inf" } else { "inf" })
                } else {
                    s.serialize_f64(*v as f64)
                }
            }
            pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<$t, D::Error> {
                #[derive(Deserialize)]
                #[serde(untagged)]
                enum F {
                    N(f64),
                    S(String),
                }
                match F::deserialize(d)? {
                    F::N(x) => Ok(x as $t),
                    F::S(s) => match s.as_str() {
                        "nan" => Ok(<$t>::NAN),
                        "-nan" => Ok(-<$t>::NAN),
                        "inf" => Ok(<$t>::INFINITY),
                        "-inf" => Ok(<$t>::NEG_INFINITY),
                        _ => Err(de::Error::custom(format!("not a number: {s:?}"))),
                    },
                }
            }
        }
    };
}
#[cfg(feature = "serde")]
float_mod!(float32, f32);
#[cfg(feature = "serde")]
float_mod!(float64, f64);

/// A type name in JSON: the short name ("INT32").
#[cfg(feature = "serde")]
mod type_name {
    use crate::DataType;
    use serde::{de, Deserialize, Deserializer};
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DataType, D::Error> {
        let s = String::deserialize(d)?;
        DataType::parse(&s).ok_or_else(|| de::Error::custom(format!("unknown data type {s:?}")))
    }
}

#[cfg(feature = "serde")]
mod json {
    use serde::de::DeserializeOwned;
    use serde::Serialize;
    pub fn to_json<T: Serialize>(x: &T) -> serde_json::Value {
        serde_json::to_value(x).expect("value model serialises infallibly")
    }
    pub fn from_json<T: DeserializeOwned>(j: serde_json::Value) -> Result<T, serde_json::Error> {
        serde_json::from_value(j)
    }
    pub fn expect_null(j: serde_json::Value) -> Result<(), serde_json::Error> {
        if j.is_null() {
            Ok(())
        } else {
            Err(serde::de::Error::custom("expected null"))
        }
    }
}

#[cfg(feature = "serde")]
impl Serialize for Value {
    /// The tagged form: `{"type": "INT32", "value": 5}`.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("type", self.data_type().short_name())?;
        m.serialize_entry("value", &bare_to_json(self))?;
        m.end()
    }
}

#[cfg(feature = "serde")]
impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Raw {
            #[cfg_attr(feature = "serde", serde(rename = "type", with = "type_name"))]
            ty: DataType,
            #[cfg_attr(feature = "serde", serde(default))]
            value: serde_json::Value,
        }
        let r = Raw::deserialize(d)?;
        value_from_bare_json(r.ty, r.value).map_err(D::Error::custom)
    }
}

#[cfg(feature = "serde")]
impl Value {
    /// The bare JSON form (no type tag): what `pmixw decode --type T` prints per element.
    pub fn to_bare_json(&self) -> serde_json::Value {
        bare_to_json(self)
    }
    /// A value of type `ty` from its bare JSON form.
    pub fn from_bare_json(ty: DataType, j: serde_json::Value) -> Result<Value, serde_json::Error> {
        value_from_bare_json(ty, j)
    }
}

#[cfg(all(test, feature = "serde"))]
mod tests {
    use super::*;

    #[test]
    fn tagged_and_bare_json() {
        let v = Value::Info(Box::new(Info::new("k", Value::Int32(-5))));
        let j = serde_json::to_value(&v).unwrap();
        assert_eq!(
            j,
            serde_json::json!({"type":"INFO","value":{"key":"k","flags":0,"value":{"type":"INT32","value":-5}}})
        );
        assert_eq!(serde_json::from_value::<Value>(j).unwrap(), v);
        let arr = Value::DataArray(Box::new(
            DataArray::new(DataType::Uint8, vec![Value::Uint8(1)]).unwrap(),
        ));
        assert_eq!(
            arr.to_bare_json(),
            serde_json::json!({"type":"UINT8","elements":[1]})
        );
        assert_eq!(
            Value::from_bare_json(DataType::DataArray, arr.to_bare_json()).unwrap(),
            arr
        );
        let u = Value::DataArray(Box::new(DataArray::undef(2)));
        assert_eq!(
            u.to_bare_json(),
            serde_json::json!({"type":"UNDEF","size":2})
        );
        assert_eq!(
            Value::from_bare_json(DataType::DataArray, u.to_bare_json()).unwrap(),
            u
        );
        let f = Value::Double(F64(f64::NEG_INFINITY));
        assert_eq!(
            Value::from_bare_json(DataType::Double, f.to_bare_json()).unwrap(),
            f
        );
        assert!(Value::from_bare_json(DataType::Undef, serde_json::json!(1)).is_err());
    }
}

#[cfg(test)]
mod size {
    /// A `Vec<Value>` of integers costs 24 bytes per item, not 40 or 48:
    /// variants larger than 16 bytes are boxed (issue 10).
    #[test]
    fn value_is_at_most_24_bytes() {
        assert!(std::mem::size_of::<super::Value>() <= 24);
    }
}
