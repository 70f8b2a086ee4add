//! The standard's string helpers, with exactly libpmix 4.2.2's output
//! (checked for every 8-bit input by `types/tests/strings_vs_libpmix.rs`),
//! and the enum constants they name.

use crate::datatype::DataType;

fn lookup(table: &[(u8, &'static str)], v: u8, default: &'static str) -> &'static str {
    table
        .iter()
        .find(|(k, _)| *k == v)
        .map_or(default, |(_, s)| s)
}

const PROC_STATE_STRINGS: &[(u8, &str)] = &[
    (0, "UNDEFINED"),
    (1, "PREPPED FOR LAUNCH"),
    (2, "LAUNCH UNDERWAY"),
    (3, "PROC READY FOR RESTART"),
    (4, "PROC MARKED FOR TERMINATION"),
    (5, "PROC EXECUTING"),
    (6, "PROC HAS CONNECTED TO LOCAL PMIX SERVER"),
    (15, "PROC HAS NOT TERMINATED"),
    (20, "PROC HAS TERMINATED"),
    (50, "PROC ERROR"),
    (51, "PROC KILLED BY CMD"),
    (52, "PROC ABNORMALLY ABORTED"),
    (53, "PROC FAILED TO START"),
    (54, "PROC ABORTED BY SIGNAL"),
    (55, "PROC TERMINATED WITHOUT CALLING PMIx_Finalize"),
    (56, "PROC LOST COMMUNICATION"),
    (57, "PROC SENSOR BOUND EXCEEDED"),
    (58, "PROC CALLED PMIx_Abort"),
    (59, "PROC FAILED TO REPORT HEARTBEAT"),
    (60, "PROC WAITING TO MIGRATE"),
    (61, "PROC CANNOT BE RESTARTED"),
    (62, "PROC TERMINATED WITH NON-ZERO STATUS"),
    (63, "PROC FAILED TO LAUNCH"),
];

/// `PMIx_Proc_state_string`.
pub fn proc_state_string(v: u8) -> &'static str {
    lookup(PROC_STATE_STRINGS, v, "UNKNOWN STATE")
}

const SCOPE_STRINGS: &[(u8, &str)] = &[
    (0, "UNDEFINED"),
    (1, "SHARE ON LOCAL NODE ONLY"),
    (2, "SHARE ON REMOTE NODES ONLY"),
    (3, "SHARE ACROSS ALL NODES"),
    (4, "STORE INTERNALLY"),
];

/// `PMIx_Scope_string`.
pub fn scope_string(v: u8) -> &'static str {
    lookup(SCOPE_STRINGS, v, "UNKNOWN SCOPE")
}

const PERSISTENCE_STRINGS: &[(u8, &str)] = &[
    (0, "INDEFINITE"),
    (1, "DELETE ON FIRST ACCESS"),
    (2, "RETAIN UNTIL PUBLISHING PROCESS TERMINATES"),
    (
        3,
        "RETAIN UNTIL APPLICATION OF PUBLISHING PROCESS TERMINATES",
    ),
    (
        4,
        "RETAIN UNTIL ALLOCATION OF PUBLISHING PROCESS TERMINATES",
    ),
    (255, "INVALID"),
];

/// `PMIx_Persistence_string`.
pub fn persistence_string(v: u8) -> &'static str {
    lookup(PERSISTENCE_STRINGS, v, "UNKNOWN PERSISTENCE")
}

const DATA_RANGE_STRINGS: &[(u8, &str)] = &[
    (0, "UNDEFINED"),
    (1, "INTENDED FOR HOST RESOURCE MANAGER ONLY"),
    (2, "AVAIL ON LOCAL NODE ONLY"),
    (3, "AVAIL TO PROCESSES IN SAME JOB ONLY"),
    (4, "AVAIL TO PROCESSES IN SAME ALLOCATION ONLY"),
    (5, "AVAIL TO ANYONE WITH AUTHORIZATION"),
    (6, "AVAIL AS SPECIFIED IN DIRECTIVES"),
    (7, "AVAIL ON LOCAL PROC ONLY"),
    (255, "INVALID"),
];

/// `PMIx_Data_range_string`.
pub fn data_range_string(v: u8) -> &'static str {
    lookup(DATA_RANGE_STRINGS, v, "UNKNOWN")
}

const ALLOC_DIRECTIVE_STRINGS: &[(u8, &str)] =
    &[(1, "NEW"), (2, "EXTEND"), (3, "RELEASE"), (4, "REACQUIRE")];

/// `PMIx_Alloc_directive_string`.
pub fn alloc_directive_string(v: u8) -> &'static str {
    lookup(ALLOC_DIRECTIVE_STRINGS, v, "UNSPECIFIED")
}

const JOB_STATE_STRINGS: &[(u8, &str)] = &[
    (0, "UNDEFINED"),
    (1, "PREPPED FOR LAUNCH"),
    (2, "LAUNCHING"),
    (3, "RUNNING"),
    (4, "SUSPENDED"),
    (5, "CONNECTED"),
    (15, "UNTERMINATED"),
    (20, "TERMINATED"),
    (50, "TERMINATED WITH ERROR"),
];

/// `PMIx_Job_state_string`.
pub fn job_state_string(v: u8) -> &'static str {
    lookup(JOB_STATE_STRINGS, v, "UNKNOWN")
}

const LINK_STATE_STRINGS: &[(u8, &str)] = &[(1, "INACTIVE"), (2, "ACTIVE")];

/// `PMIx_Link_state_string`.
pub fn link_state_string(v: u8) -> &'static str {
    lookup(LINK_STATE_STRINGS, v, "UNKNOWN")
}

/// `PMIx_IOF_channel_string`: the names of the set bits, each followed by a
/// space; "NONE" when none of the four channel bits is set.
pub fn iof_channel_string(v: u16) -> String {
    let names = [(1, "STDIN"), (2, "STDOUT"), (4, "STDERR"), (8, "STDDIAG")];
    let s: String = names
        .iter()
        .filter(|(b, _)| v & b != 0)
        .map(|(_, n)| format!("{n} "))
        .collect();
    if s.is_empty() {
        "NONE".into()
    } else {
        s
    }
}

/// `PMIx_Device_type_string`: the name of exactly one device type.
pub fn device_type_string(v: u64) -> &'static str {
    match v {
        1 => "BLOCK",
        2 => "GPU",
        4 => "NETWORK",
        8 => "OPENFABRICS",
        16 => "DMA",
        32 => "COPROCESSOR",
        _ => "UNKNOWN",
    }
}

/// `PMIx_Info_directives_string`: QUALIFIER wins; else REQUIRED or
/// OPTIONAL, then ":PROCESSED" and ":END" when those bits are set.
pub fn info_directives_string(v: u32) -> String {
    use crate::value::directives::*;
    if v & QUALIFIER != 0 {
        return "QUALIFIER".into();
    }
    let mut s = String::from(if v & REQD != 0 {
        "REQUIRED"
    } else {
        "OPTIONAL"
    });
    if v & REQD_PROCESSED != 0 {
        s.push_str(":PROCESSED");
    }
    if v & ARRAY_END != 0 {
        s.push_str(":END");
    }
    s
}

/// `PMIx_Data_type_string` of an initialised libpmix 4.2.2: the name for
/// codes 1-69, "UNKNOWN" otherwise (including UNDEF and the v6/v7 codes).
pub fn data_type_string(code: u16) -> &'static str {
    match DataType::from_code(code) {
        Some(t) if (1..=69).contains(&code) => t.name(),
        _ => "UNKNOWN",
    }
}

/// `pmix_proc_state_t` values.
pub mod proc_state {
    /// `PMIX_PROC_STATE_UNDEF`: no state recorded.
    pub const UNDEF: u8 = 0;
    /// `PMIX_PROC_STATE_PREPPED`: ready to be launched.
    pub const PREPPED: u8 = 1;
    /// `PMIX_PROC_STATE_LAUNCH_UNDERWAY`: its launch has begun.
    pub const LAUNCH_UNDERWAY: u8 = 2;
    /// `PMIX_PROC_STATE_RESTART`: ready to be restarted.
    pub const RESTART: u8 = 3;
    /// `PMIX_PROC_STATE_TERMINATE`: marked for termination.
    pub const TERMINATE: u8 = 4;
    /// `PMIX_PROC_STATE_RUNNING`: the local daemon has started it.
    pub const RUNNING: u8 = 5;
    /// `PMIX_PROC_STATE_CONNECTED`: it has connected to its PMIx server.
    pub const CONNECTED: u8 = 6;
    /// `PMIX_PROC_STATE_UNTERMINATED`: the boundary; states below it are "not terminated".
    pub const UNTERMINATED: u8 = 15;
    /// `PMIX_PROC_STATE_TERMINATED`: it ended normally.
    pub const TERMINATED: u8 = 20;
    /// `PMIX_PROC_STATE_ERROR`: the boundary; states from here on are failures.
    pub const ERROR: u8 = 50;
    /// `PMIX_PROC_STATE_KILLED_BY_CMD`: killed on request.
    pub const KILLED_BY_CMD: u8 = 51;
    /// `PMIX_PROC_STATE_ABORTED`: it aborted.
    pub const ABORTED: u8 = 52;
    /// `PMIX_PROC_STATE_FAILED_TO_START`: it did not start.
    pub const FAILED_TO_START: u8 = 53;
    /// `PMIX_PROC_STATE_ABORTED_BY_SIG`: a signal ended it.
    pub const ABORTED_BY_SIG: u8 = 54;
    /// `PMIX_PROC_STATE_TERM_WO_SYNC`: it exited without calling `PMIx_Finalize`.
    pub const TERM_WO_SYNC: u8 = 55;
    /// `PMIX_PROC_STATE_COMM_FAILED`: communication with it was lost.
    pub const COMM_FAILED: u8 = 56;
    /// `PMIX_PROC_STATE_SENSOR_BOUND_EXCEEDED`: it exceeded a sensor's limit.
    pub const SENSOR_BOUND_EXCEEDED: u8 = 57;
    /// `PMIX_PROC_STATE_CALLED_ABORT`: it called `PMIx_Abort`.
    pub const CALLED_ABORT: u8 = 58;
    /// `PMIX_PROC_STATE_HEARTBEAT_FAILED`: its heartbeat did not arrive in time.
    pub const HEARTBEAT_FAILED: u8 = 59;
    /// `PMIX_PROC_STATE_MIGRATING`: failed, waiting for resources to restart.
    pub const MIGRATING: u8 = 60;
    /// `PMIX_PROC_STATE_CANNOT_RESTART`: failed and cannot be restarted.
    pub const CANNOT_RESTART: u8 = 61;
    /// `PMIX_PROC_STATE_TERM_NON_ZERO`: it exited with a non-zero status.
    pub const TERM_NON_ZERO: u8 = 62;
    /// `PMIX_PROC_STATE_FAILED_TO_LAUNCH`: it could not be launched.
    pub const FAILED_TO_LAUNCH: u8 = 63;
}

/// `pmix_scope_t` values.
pub mod scope {
    /// `PMIX_SCOPE_UNDEF`: no scope given.
    pub const UNDEF: u8 = 0;
    /// `PMIX_LOCAL`: share with processes on the same node only.
    pub const LOCAL: u8 = 1;
    /// `PMIX_REMOTE`: share with processes on other nodes only.
    pub const REMOTE: u8 = 2;
    /// `PMIX_GLOBAL`: share with every process, local and remote.
    pub const GLOBAL: u8 = 3;
    /// `PMIX_INTERNAL`: keep in the process's own store, share with no one.
    pub const INTERNAL: u8 = 4;
    /// `PMIX_DEL_LOCAL` (7.0): remove the key from what local peers see.
    pub const DEL_LOCAL: u8 = 5;
    /// `PMIX_DEL_REMOTE` (7.0): remove the key from what remote peers see.
    pub const DEL_REMOTE: u8 = 6;
    /// `PMIX_DEL_GLOBAL` (7.0): remove the key from both.
    pub const DEL_GLOBAL: u8 = 7;
    /// `PMIX_DEL_INTERNAL` (7.0): remove the key from the internal store.
    pub const DEL_INTERNAL: u8 = 8;
}

/// `pmix_persistence_t` values.
pub mod persistence {
    /// `PMIX_PERSIST_INDEF`: kept until deleted explicitly.
    pub const INDEF: u8 = 0;
    /// `PMIX_PERSIST_FIRST_READ`: deleted when first read.
    pub const FIRST_READ: u8 = 1;
    /// `PMIX_PERSIST_PROC`: kept until the publishing process ends.
    pub const PROC: u8 = 2;
    /// `PMIX_PERSIST_APP`: kept until the publishing application ends.
    pub const APP: u8 = 3;
    /// `PMIX_PERSIST_SESSION`: kept until the session (allocation) ends.
    pub const SESSION: u8 = 4;
    /// `PMIX_PERSIST_INVALID`: not a persistence (`UINT8_MAX`).
    pub const INVALID: u8 = 255;
}

/// `pmix_data_range_t` values.
pub mod data_range {
    /// `PMIX_RANGE_UNDEF`: no range given.
    pub const UNDEF: u8 = 0;
    /// `PMIX_RANGE_RM`: for the host resource manager.
    pub const RM: u8 = 1;
    /// `PMIX_RANGE_LOCAL`: processes on the local node only.
    pub const LOCAL: u8 = 2;
    /// `PMIX_RANGE_NAMESPACE`: processes of the same namespace only.
    pub const NAMESPACE: u8 = 3;
    /// `PMIX_RANGE_SESSION`: every process in the session.
    pub const SESSION: u8 = 4;
    /// `PMIX_RANGE_GLOBAL`: every process.
    pub const GLOBAL: u8 = 5;
    /// `PMIX_RANGE_CUSTOM`: the processes an accompanying info lists.
    pub const CUSTOM: u8 = 6;
    /// `PMIX_RANGE_PROC_LOCAL`: the calling process only.
    pub const PROC_LOCAL: u8 = 7;
    /// `PMIX_RANGE_INVALID`: not a range (`UINT8_MAX`).
    pub const INVALID: u8 = 255;
}

/// `pmix_alloc_directive_t` values.
pub mod alloc_directive {
    /// `PMIX_ALLOC_NEW`: request a new allocation.
    pub const NEW: u8 = 1;
    /// `PMIX_ALLOC_EXTEND`: extend the existing allocation in time or resources.
    pub const EXTEND: u8 = 2;
    /// `PMIX_ALLOC_RELEASE`: release part of the existing allocation.
    pub const RELEASE: u8 = 3;
    /// `PMIX_ALLOC_REAQUIRE`: take back resources lent to the scheduler (the standard's spelling).
    pub const REAQUIRE: u8 = 4;
}

/// `pmix_job_state_t` values.
pub mod job_state {
    /// `PMIX_JOB_STATE_UNDEF`: no state recorded.
    pub const UNDEF: u8 = 0;
    /// `PMIX_JOB_STATE_AWAITING_ALLOC`: waiting for resources.
    pub const AWAITING_ALLOC: u8 = 1;
    /// `PMIX_JOB_STATE_LAUNCH_UNDERWAY`: its launch has begun.
    pub const LAUNCH_UNDERWAY: u8 = 2;
    /// `PMIX_JOB_STATE_RUNNING`: every process has been started.
    pub const RUNNING: u8 = 3;
    /// `PMIX_JOB_STATE_SUSPENDED`: suspended.
    pub const SUSPENDED: u8 = 4;
    /// `PMIX_JOB_STATE_CONNECTED`: every process has connected to its PMIx server.
    pub const CONNECTED: u8 = 5;
    /// `PMIX_JOB_STATE_UNTERMINATED`: the boundary; states below it are "not terminated".
    pub const UNTERMINATED: u8 = 15;
    /// `PMIX_JOB_STATE_TERMINATED`: it ended normally.
    pub const TERMINATED: u8 = 20;
    /// `PMIX_JOB_STATE_TERMINATED_WITH_ERROR`: it ended with an error.
    pub const TERMINATED_WITH_ERROR: u8 = 50;
}

/// `pmix_link_state_t` values.
pub mod link_state {
    /// `PMIX_LINK_STATE_UNKNOWN`: the link's state is not known.
    pub const UNKNOWN: u8 = 0;
    /// `PMIX_LINK_DOWN`: the link is down.
    pub const DOWN: u8 = 1;
    /// `PMIX_LINK_UP`: the link is up.
    pub const UP: u8 = 2;
}

/// `pmix_iof_channel_t` bits.
pub mod iof_channel {
    /// `PMIX_FWD_NO_CHANNELS`: no channel.
    pub const NO_CHANNELS: u16 = 0;
    /// `PMIX_FWD_STDIN_CHANNEL`: standard input.
    pub const STDIN: u16 = 1;
    /// `PMIX_FWD_STDOUT_CHANNEL`: standard output.
    pub const STDOUT: u16 = 2;
    /// `PMIX_FWD_STDERR_CHANNEL`: standard error.
    pub const STDERR: u16 = 4;
    /// `PMIX_FWD_STDDIAG_CHANNEL`: the diagnostic channel, where one exists.
    pub const STDDIAG: u16 = 8;
    /// `PMIX_FWD_ALL_CHANNELS`: every channel (`0xff`).
    pub const ALL: u16 = 0xff;
}

/// `pmix_device_type_t` bits.
pub mod device_type {
    /// `PMIX_DEVTYPE_UNKNOWN`: no type known.
    pub const UNKNOWN: u64 = 0;
    /// `PMIX_DEVTYPE_BLOCK`: a block (storage) device.
    pub const BLOCK: u64 = 1;
    /// `PMIX_DEVTYPE_GPU`: a graphics processor.
    pub const GPU: u64 = 2;
    /// `PMIX_DEVTYPE_NETWORK`: a network interface.
    pub const NETWORK: u64 = 4;
    /// `PMIX_DEVTYPE_OPENFABRICS`: an OpenFabrics (verbs) device.
    pub const OPENFABRICS: u64 = 8;
    /// `PMIX_DEVTYPE_DMA`: a DMA engine.
    pub const DMA: u64 = 16;
    /// `PMIX_DEVTYPE_COPROC`: a coprocessor.
    pub const COPROCESSOR: u64 = 32;
}

/// `pmix_locality_t` bits.
pub mod locality {
    /// `PMIX_LOCALITY_UNKNOWN`: locality not known.
    pub const UNKNOWN: u16 = 0x0000;
    /// `PMIX_LOCALITY_NONLOCAL`: on another node.
    pub const NONLOCAL: u16 = 0x8000;
    /// `PMIX_LOCALITY_SHARE_HWTHREAD`: shares a hardware thread.
    pub const SHARE_HWTHREAD: u16 = 0x0001;
    /// `PMIX_LOCALITY_SHARE_CORE`: shares a core.
    pub const SHARE_CORE: u16 = 0x0002;
    /// `PMIX_LOCALITY_SHARE_L1CACHE`: shares an L1 cache.
    pub const SHARE_L1CACHE: u16 = 0x0004;
    /// `PMIX_LOCALITY_SHARE_L2CACHE`: shares an L2 cache.
    pub const SHARE_L2CACHE: u16 = 0x0008;
    /// `PMIX_LOCALITY_SHARE_L3CACHE`: shares an L3 cache.
    pub const SHARE_L3CACHE: u16 = 0x0010;
    /// `PMIX_LOCALITY_SHARE_PACKAGE`: shares a package (socket).
    pub const SHARE_PACKAGE: u16 = 0x0020;
    /// `PMIX_LOCALITY_SHARE_NUMA`: shares a NUMA domain.
    pub const SHARE_NUMA: u16 = 0x0040;
    /// `PMIX_LOCALITY_SHARE_NODE`: on the same node.
    pub const SHARE_NODE: u16 = 0x4000;
}

const COMMAND_STRINGS: &[&str] = &[
    "REQUEST INIT INFO",
    "ABORT",
    "COMMIT",
    "FENCE",
    "GET",
    "FINALIZE",
    "PUBLISH",
    "LOOKUP",
    "UNPUBLISH",
    "SPAWN",
    "CONNECT",
    "DISCONNECT",
    "NOTIFY",
    "REGISTER EVENT HANDLER",
    "DEREGISTER EVENT HANDLER",
    "QUERY",
    "LOG",
    "ALLOCATE",
    "JOB CONTROL",
    "MONITOR",
    "UNKNOWN",
    "UNKNOWN",
    "IOF PULL",
    "IOF PUSH",
    "GROUP CONSTRUCT",
    "GROUP JOIN",
    "GROUP INVITE",
    "GROUP LEAVE",
    "GROUP DESTRUCT",
    "IOF DEREG",
    "FABRIC REGISTER",
    "FABRIC UPDATE",
    "COMPUTE DEVICE DIST",
];

/// libpmix 4.2.2's (internal) name of a `pmix_cmd_t`, as PMIx_Data_print shows it.
pub fn command_string(v: u8) -> &'static str {
    COMMAND_STRINGS
        .get(v as usize)
        .copied()
        .unwrap_or("UNKNOWN")
}

fn join_bits(v: u64, names: &[&str], sep: &str) -> String {
    names
        .iter()
        .enumerate()
        .filter(|(i, n)| !n.is_empty() && v & (1u64 << i) != 0)
        .map(|(_, n)| *n)
        .collect::<Vec<_>>()
        .join(sep)
}

/// The locality text of PMIx_Data_print (bit 5, PACKAGE, prints as "CORE" in 4.2.2).
pub fn locality_string(v: u16) -> String {
    if v == 0 {
        return "UNKNOWN".into();
    }
    let names = [
        "HWTHREAD", "CORE", "L1", "L2", "L3", "CORE", "NUMA", "", "", "", "", "", "", "", "NODE",
        "NONLOCAL",
    ];
    join_bits(v as u64, &names, ":")
}

/// PMIx_Data_print's text for PMIX_STOR_MEDIUM bits ("UNKNOWN" alone wins).
pub fn storage_medium_string(v: u64) -> String {
    if v & 1 != 0 {
        return "UNKNOWN".into();
    }
    join_bits(
        v,
        &["UNKNOWN", "TAPE", "HDD", "SSD", "NVME", "PMEM", "RAM"],
        ":",
    )
}

/// PMIx_Data_print's text for PMIX_STOR_ACCESS bits.
pub fn storage_access_string(v: u64) -> String {
    join_bits(
        v,
        &["NODE", "SESSION", "JOB", "RACK", "CLUSTER", "REMOTE"],
        ":",
    )
}

/// PMIx_Data_print's text for PMIX_STOR_PERSIST bits.
pub fn storage_persistence_string(v: u64) -> String {
    join_bits(
        v,
        &[
            "TEMPORARY",
            "NODE",
            "SESSION",
            "JOB",
            "SCRATCH",
            "PROJECT",
            "ARCHIVE",
        ],
        ":",
    )
}

/// PMIx_Data_print's text for PMIX_STOR_ACCESS_TYPE bits.
pub fn storage_access_type_string(v: u16) -> String {
    join_bits(v as u64, &["READ", "WRITE"], ":")
}
