//! The standard's C structures, field by field (pmix-standard, chapter 3
//! "Data Structures and Types"; the members later versions of the standard
//! added to the `pmix_value_t` union are included, since they decide its
//! size). One table ([`LAYOUTS`]) lists every struct with its size and
//! field offsets: the ABI test compares it with the installed headers.
#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_int, c_uint, c_void};
use std::mem::{offset_of, size_of};

/// `PMIX_MAX_NSLEN`: the longest namespace, without its NUL.
pub const PMIX_MAX_NSLEN: usize = 255;
/// `PMIX_MAX_KEYLEN`: the longest key, without its NUL.
pub const PMIX_MAX_KEYLEN: usize = 511;

/// `pmix_status_t`.
pub type pmix_status_t = c_int;
/// `pmix_rank_t`.
pub type pmix_rank_t = u32;
/// `pmix_data_type_t`.
pub type pmix_data_type_t = u16;
/// `pmix_nspace_t`: a NUL-terminated namespace in a fixed array.
pub type pmix_nspace_t = [c_char; PMIX_MAX_NSLEN + 1];
/// `pmix_key_t`: a NUL-terminated key in a fixed array.
pub type pmix_key_t = [c_char; PMIX_MAX_KEYLEN + 1];
/// `pmix_info_directives_t`.
pub type pmix_info_directives_t = u32;
/// `pmix_value_cmp_t` (an enum in C: int-sized).
pub type pmix_value_cmp_t = c_int;

/// A member of [`pmix_server_module_t`]: a host function or NULL.
pub type HostFn<F> = Option<F>;
/// The type of a module member the library never calls.
pub type UnusedFn = unsafe extern "C" fn();

/// The size and field offsets of one C struct.
#[derive(Debug)]
pub struct StructLayout {
    /// The C name (`pmix_value_t`).
    pub name: &'static str,
    /// `sizeof`.
    pub size: usize,
    /// Each field's C name and `offsetof`.
    pub fields: &'static [(&'static str, usize)],
}

// The one table of structs: defines each repr(C) struct and its row of
// LAYOUTS from the same lines (a field named `r#type` is C's `type`).
macro_rules! c_structs {
    ($( $(#[$m:meta])* struct $name:ident { $( $(#[$fm:meta])* $field:ident : $ty:ty ),* $(,)? } )*) => {
        $(
            $(#[$m])*
            #[repr(C)]
            #[derive(Clone, Copy)]
            pub struct $name { $( $(#[$fm])* pub $field: $ty ),* }
        )*
        /// Every struct this library shares with C, with its layout.
        pub const LAYOUTS: &[StructLayout] = &[ $(
            StructLayout {
                name: stringify!($name),
                size: size_of::<$name>(),
                fields: &[ $( (c_field(stringify!($field)), offset_of!($name, $field)) ),* ],
            },
        )* ];
    };
}

/// A Rust field name as C spells it (`r#type` is `type`).
const fn c_field(s: &'static str) -> &'static str {
    match s.as_bytes() {
        [b'r', b'#', ..] => {
            let (_, rest) = s.split_at(2);
            rest
        }
        _ => s,
    }
}

c_structs! {
    /// `pmix_proc_t`: a process, namespace and rank.
    struct pmix_proc_t {
        /// The namespace.
        nspace: pmix_nspace_t,
        /// The rank in it.
        rank: pmix_rank_t,
    }
    /// `pmix_byte_object_t`: a counted array of bytes.
    struct pmix_byte_object_t {
        /// The bytes (malloc'd).
        bytes: *mut c_char,
        /// How many.
        size: usize,
    }
    /// `pmix_data_array_t`: `size` elements of `type` at `array`.
    struct pmix_data_array_t {
        /// The element type.
        r#type: pmix_data_type_t,
        /// The element count.
        size: usize,
        /// The elements (malloc'd storage of `size` elements).
        array: *mut c_void,
    }
    /// `pmix_envar_t`: an environment variable directive.
    struct pmix_envar_t {
        /// The variable's name.
        envar: *mut c_char,
        /// The value.
        value: *mut c_char,
        /// The separator for prepend/append.
        separator: c_char,
    }
    /// `pmix_coord_t`: a coordinate in `dims` dimensions.
    struct pmix_coord_t {
        /// `pmix_coord_view_t`.
        view: u8,
        /// The coordinate per dimension.
        coord: *mut u32,
        /// How many dimensions.
        dims: usize,
    }
    /// `pmix_proc_info_t`: a process's description.
    struct pmix_proc_info_t {
        /// The process.
        proc: pmix_proc_t,
        /// Its node.
        hostname: *mut c_char,
        /// Its executable.
        executable_name: *mut c_char,
        /// Its pid.
        pid: libc::pid_t,
        /// Its exit code.
        exit_code: c_int,
        /// Its `pmix_proc_state_t`.
        state: u8,
    }
    /// `pmix_value_t`: a typed value.
    struct pmix_value_t {
        /// The type, which selects the member of `data`.
        r#type: pmix_data_type_t,
        /// The value.
        data: pmix_value_data,
    }
    /// `pmix_info_t`: a key, directives and a value.
    struct pmix_info_t {
        /// The key.
        key: pmix_key_t,
        /// `pmix_info_directives_t` bits.
        flags: pmix_info_directives_t,
        /// The value.
        value: pmix_value_t,
    }
    /// `pmix_pdata_t`: a published datum.
    struct pmix_pdata_t {
        /// Its publisher.
        proc: pmix_proc_t,
        /// Its key.
        key: pmix_key_t,
        /// Its value.
        value: pmix_value_t,
    }
    /// `pmix_app_t`: an application to spawn.
    struct pmix_app_t {
        /// The executable.
        cmd: *mut c_char,
        /// NULL-terminated argument vector.
        argv: *mut *mut c_char,
        /// NULL-terminated environment additions.
        env: *mut *mut c_char,
        /// The working directory.
        cwd: *mut c_char,
        /// How many processes.
        maxprocs: c_int,
        /// Attributes.
        info: *mut pmix_info_t,
        /// How many attributes.
        ninfo: usize,
    }
    /// `pmix_query_t`: keys and qualifiers.
    struct pmix_query_t {
        /// NULL-terminated keys.
        keys: *mut *mut c_char,
        /// Qualifiers.
        qualifiers: *mut pmix_info_t,
        /// How many qualifiers.
        nqual: usize,
    }
    /// `pmix_regattr_t`: a registered attribute.
    struct pmix_regattr_t {
        /// The attribute's name (`PMIX_JOB_SIZE`).
        name: *mut c_char,
        /// Its string (`pmix.job.size`).
        string: pmix_key_t,
        /// Its `pmix_data_type_t`.
        r#type: pmix_data_type_t,
        /// NULL-terminated lines of description.
        description: *mut *mut c_char,
    }
    /// `pmix_geometry_t`: a fabric device's coordinates.
    struct pmix_geometry_t {
        /// The fabric's index.
        fabric: usize,
        /// The device's UUID.
        uuid: *mut c_char,
        /// Its OS name.
        osname: *mut c_char,
        /// Its coordinates.
        coordinates: *mut pmix_coord_t,
        /// How many.
        ncoords: usize,
    }
    /// `pmix_device_distance_t`: a device's distance from the process.
    struct pmix_device_distance_t {
        /// The device's UUID.
        uuid: *mut c_char,
        /// Its OS name.
        osname: *mut c_char,
        /// Its `pmix_device_type_t`.
        r#type: u64,
        /// The smallest distance.
        mindist: u16,
        /// The largest distance.
        maxdist: u16,
    }
    /// `pmix_cpuset_t`: a processor set, the name of the library that made
    /// it and that library's bitmap.
    struct pmix_cpuset_t {
        /// The library that made the bitmap (e.g. "hwloc").
        source: *mut c_char,
        /// Its bitmap.
        bitmap: *mut c_void,
    }
    /// `pmix_topology_t`: a machine's topology, the name of the library
    /// that made it and that library's object.
    struct pmix_topology_t {
        /// The library that made the topology (e.g. "hwloc").
        source: *mut c_char,
        /// Its object (an `hwloc_topology_t` for hwloc).
        topology: *mut c_void,
    }
    /// `pmix_endpoint_t`: a fabric endpoint.
    struct pmix_endpoint_t {
        /// The device's UUID.
        uuid: *mut c_char,
        /// Its OS name.
        osname: *mut c_char,
        /// The endpoint's bytes.
        endpt: pmix_byte_object_t,
    }
    /// `pmix_proc_stats_t`: a process's resource use.
    struct pmix_proc_stats_t {
        /// Its node.
        node: *mut c_char,
        /// The process.
        proc: pmix_proc_t,
        /// Its pid.
        pid: libc::pid_t,
        /// Its command.
        cmd: *mut c_char,
        /// Its state letter (`R` …).
        state: c_char,
        /// CPU time used.
        time: libc::timeval,
        /// CPU share.
        percent_cpu: f32,
        /// Scheduling priority.
        priority: i32,
        /// Threads.
        num_threads: u16,
        /// Proportional set size.
        pss: f32,
        /// Virtual size.
        vsize: f32,
        /// Resident set size.
        rss: f32,
        /// Peak virtual size.
        peak_vsize: f32,
        /// The processor it last ran on.
        processor: u16,
        /// When sampled.
        sample_time: libc::timeval,
    }
    /// `pmix_disk_stats_t`: a disk's counters.
    struct pmix_disk_stats_t {
        /// The disk.
        disk: *mut c_char,
        /// Reads completed.
        num_reads_completed: u64,
        /// Reads merged.
        num_reads_merged: u64,
        /// Sectors read.
        num_sectors_read: u64,
        /// Time reading.
        milliseconds_reading: u64,
        /// Writes completed.
        num_writes_completed: u64,
        /// Writes merged.
        num_writes_merged: u64,
        /// Sectors written.
        num_sectors_written: u64,
        /// Time writing.
        milliseconds_writing: u64,
        /// I/Os in progress.
        num_ios_in_progress: u64,
        /// Time doing I/O.
        milliseconds_io: u64,
        /// Weighted time doing I/O.
        weighted_milliseconds_io: u64,
    }
    /// `pmix_net_stats_t`: a network interface's counters.
    struct pmix_net_stats_t {
        /// The interface.
        net_interface: *mut c_char,
        /// Bytes received.
        num_bytes_recvd: u64,
        /// Packets received.
        num_packets_recvd: u64,
        /// Receive errors.
        num_recv_errs: u64,
        /// Bytes sent.
        num_bytes_sent: u64,
        /// Packets sent.
        num_packets_sent: u64,
        /// Send errors.
        num_send_errs: u64,
    }
    /// `pmix_node_stats_t`: a node's load and memory, with its disks and interfaces.
    struct pmix_node_stats_t {
        /// The node.
        node: *mut c_char,
        /// Load average, 1 minute.
        la: f32,
        /// Load average, 5 minutes.
        la5: f32,
        /// Load average, 15 minutes.
        la15: f32,
        /// Total memory.
        total_mem: f32,
        /// Free memory.
        free_mem: f32,
        /// Buffers.
        buffers: f32,
        /// Cached.
        cached: f32,
        /// Swap cached.
        swap_cached: f32,
        /// Swap total.
        swap_total: f32,
        /// Swap free.
        swap_free: f32,
        /// Mapped.
        mapped: f32,
        /// When sampled.
        sample_time: libc::timeval,
        /// Its disks.
        diskstats: *mut pmix_disk_stats_t,
        /// How many.
        ndiskstats: usize,
        /// Its interfaces.
        netstats: *mut pmix_net_stats_t,
        /// How many.
        nnetstats: usize,
    }
    /// `pmix_server_module_t`: the host's upcalls, in the standard's
    /// order (10.2.1: the v1 and v2 members; the v3 and v4 members as
    /// those versions append them). NULL members are answered by the
    /// library (spec-notes/capi.md, "The server").
    struct pmix_server_module_t {
        /// A client connected.
        client_connected: HostFn<crate::server::client_connected_fn>,
        /// A client called PMIx_Finalize.
        client_finalized: HostFn<crate::server::client_connected_fn>,
        /// A client called PMIx_Abort.
        abort: HostFn<crate::server::abort_fn>,
        /// A fence's local participants all called in.
        fence_nb: HostFn<crate::server::fence_nb_fn>,
        /// A local client wants a remote rank's data.
        direct_modex: HostFn<crate::server::direct_modex_fn>,
        /// A client's PMIx_Publish (NULL with lookup and unpublish: the
        /// library keeps published data of one node's jobs).
        publish: HostFn<crate::server::publish_fn>,
        /// A client's PMIx_Lookup.
        lookup: HostFn<crate::server::lookup_fn>,
        /// A client's PMIx_Unpublish.
        unpublish: HostFn<crate::server::unpublish_fn>,
        /// A client asked for a new job.
        spawn: HostFn<crate::server::spawn_fn>,
        /// A connect some of whose participants are on other nodes.
        connect: HostFn<crate::server::connect_fn>,
        /// A disconnect some of whose participants are on other nodes.
        disconnect: HostFn<crate::server::connect_fn>,
        /// A registration for environmental events.
        register_events: HostFn<crate::server::register_events_fn>,
        /// Deregister events (not called, as by libpmix 4.2.2).
        deregister_events: HostFn<UnusedFn>,
        /// Listener (not called: the library listens).
        listener: HostFn<UnusedFn>,
        /// An event whose range reaches beyond this node.
        notify_event: HostFn<crate::server::notify_event_fn>,
        /// A query the library cannot answer in full.
        query: HostFn<crate::server::query_fn>,
        /// A tool connected: the host accepts and names it.
        tool_connected: HostFn<crate::server::tool_connected_fn>,
        /// A client asked to log.
        log: HostFn<crate::server::log_fn>,
        /// A PMIx_Allocation_request.
        allocate: HostFn<crate::server::allocate_fn>,
        /// Job control: the library answered the client; the host acts.
        job_control: HostFn<crate::server::job_control_fn>,
        /// A PMIx_Process_monitor the library does not run itself.
        monitor: HostFn<crate::server::monitor_fn>,
        /// v3: a client's or tool's PMIx_Get_credential.
        get_credential: HostFn<crate::server::get_cred_fn>,
        /// v3: a client's or tool's PMIx_Validate_credential.
        validate_credential: HostFn<crate::server::validate_cred_fn>,
        /// v3: a tool's or client's IOF pull or deregistration.
        iof_pull: HostFn<crate::server::iof_pull_fn>,
        /// v3: stdin a tool pushed.
        push_stdin: HostFn<crate::server::push_stdin_fn>,
        /// v4: a group construct (context id asked, or members on other
        /// nodes) or destruct, once every local member called in.
        group: HostFn<crate::server::group_fn>,
        /// v4: fabric (not called).
        fabric: HostFn<UnusedFn>,
        /// v4: client connected with infos (not called; `client_connected` is).
        client_connected2: HostFn<UnusedFn>,
    }
    /// `pmix_data_buffer_t`: packed bytes and the two positions in them.
    struct pmix_data_buffer_t {
        /// Start of the (malloc'd) memory.
        base_ptr: *mut c_char,
        /// Where the next pack writes.
        pack_ptr: *mut c_char,
        /// Where the next unpack reads.
        unpack_ptr: *mut c_char,
        /// Bytes allocated at `base_ptr`.
        bytes_allocated: usize,
        /// Bytes packed.
        bytes_used: usize,
    }
}

/// The `data` union of `pmix_value_t`: one member per kind of storage.
#[repr(C)]
#[derive(Clone, Copy)]
#[allow(missing_docs)]
pub union pmix_value_data {
    pub flag: bool,
    pub byte: u8,
    pub string: *mut c_char,
    pub size: usize,
    pub pid: libc::pid_t,
    pub integer: c_int,
    pub int8: i8,
    pub int16: i16,
    pub int32: i32,
    pub int64: i64,
    pub uint: c_uint,
    pub uint8: u8,
    pub uint16: u16,
    pub uint32: u32,
    pub uint64: u64,
    pub fval: f32,
    pub dval: f64,
    pub tv: libc::timeval,
    pub time: libc::time_t,
    pub status: pmix_status_t,
    pub rank: pmix_rank_t,
    pub nspace: *mut pmix_nspace_t,
    pub proc: *mut pmix_proc_t,
    pub bo: pmix_byte_object_t,
    pub persist: u8,
    pub scope: u8,
    pub range: u8,
    pub state: u8,
    pub pinfo: *mut pmix_proc_info_t,
    pub darray: *mut pmix_data_array_t,
    pub ptr: *mut c_void,
    pub adir: u8,
    pub envar: pmix_envar_t,
    pub coord: *mut pmix_coord_t,
    pub linkstate: u8,
    pub jstate: u8,
    pub locality: u16,
    pub devtype: u64,
    pub dbuf: *mut pmix_data_buffer_t,
}

/// Where `pmix_value_t`'s union lies and how large it is (`sizeof(v.data)`).
pub const VALUE_DATA_SIZE: usize = size_of::<pmix_value_data>();

/// `pmix_value_cmp_t` values (`PMIx_Value_compare`).
pub mod cmp {
    /// `PMIX_EQUAL`.
    pub const PMIX_EQUAL: super::pmix_value_cmp_t = 0;
    /// `PMIX_VALUE1_GREATER`.
    pub const PMIX_VALUE1_GREATER: super::pmix_value_cmp_t = 1;
    /// `PMIX_VALUE2_GREATER`.
    pub const PMIX_VALUE2_GREATER: super::pmix_value_cmp_t = 2;
    /// `PMIX_VALUE_TYPE_DIFFERENT`.
    pub const PMIX_VALUE_TYPE_DIFFERENT: super::pmix_value_cmp_t = 3;
    /// `PMIX_VALUE_INCOMPATIBLE_OBJECTS`.
    pub const PMIX_VALUE_INCOMPATIBLE_OBJECTS: super::pmix_value_cmp_t = 4;
    /// `PMIX_VALUE_COMPARISON_NOT_AVAIL`.
    pub const PMIX_VALUE_COMPARISON_NOT_AVAIL: super::pmix_value_cmp_t = 5;
}
