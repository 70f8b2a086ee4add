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
    pub const UNDEF: u8 = 0;
    pub const PREPPED: u8 = 1;
    pub const LAUNCH_UNDERWAY: u8 = 2;
    pub const RESTART: u8 = 3;
    pub const TERMINATE: u8 = 4;
    pub const RUNNING: u8 = 5;
    pub const CONNECTED: u8 = 6;
    pub const UNTERMINATED: u8 = 15;
    pub const TERMINATED: u8 = 20;
    pub const ERROR: u8 = 50;
    pub const KILLED_BY_CMD: u8 = 51;
    pub const ABORTED: u8 = 52;
    pub const FAILED_TO_START: u8 = 53;
    pub const ABORTED_BY_SIG: u8 = 54;
    pub const TERM_WO_SYNC: u8 = 55;
    pub const COMM_FAILED: u8 = 56;
    pub const SENSOR_BOUND_EXCEEDED: u8 = 57;
    pub const CALLED_ABORT: u8 = 58;
    pub const HEARTBEAT_FAILED: u8 = 59;
    pub const MIGRATING: u8 = 60;
    pub const CANNOT_RESTART: u8 = 61;
    pub const TERM_NON_ZERO: u8 = 62;
    pub const FAILED_TO_LAUNCH: u8 = 63;
}

/// `pmix_scope_t` values.
pub mod scope {
    pub const UNDEF: u8 = 0;
    pub const LOCAL: u8 = 1;
    pub const REMOTE: u8 = 2;
    pub const GLOBAL: u8 = 3;
    pub const INTERNAL: u8 = 4;
}

/// `pmix_persistence_t` values.
pub mod persistence {
    pub const INDEF: u8 = 0;
    pub const FIRST_READ: u8 = 1;
    pub const PROC: u8 = 2;
    pub const APP: u8 = 3;
    pub const SESSION: u8 = 4;
    pub const INVALID: u8 = 255;
}

/// `pmix_data_range_t` values.
pub mod data_range {
    pub const UNDEF: u8 = 0;
    pub const RM: u8 = 1;
    pub const LOCAL: u8 = 2;
    pub const NAMESPACE: u8 = 3;
    pub const SESSION: u8 = 4;
    pub const GLOBAL: u8 = 5;
    pub const CUSTOM: u8 = 6;
    pub const PROC_LOCAL: u8 = 7;
    pub const INVALID: u8 = 255;
}

/// `pmix_alloc_directive_t` values.
pub mod alloc_directive {
    pub const NEW: u8 = 1;
    pub const EXTEND: u8 = 2;
    pub const RELEASE: u8 = 3;
    pub const REAQUIRE: u8 = 4;
}

/// `pmix_job_state_t` values.
pub mod job_state {
    pub const UNDEF: u8 = 0;
    pub const AWAITING_ALLOC: u8 = 1;
    pub const LAUNCH_UNDERWAY: u8 = 2;
    pub const RUNNING: u8 = 3;
    pub const SUSPENDED: u8 = 4;
    pub const CONNECTED: u8 = 5;
    pub const UNTERMINATED: u8 = 15;
    pub const TERMINATED: u8 = 20;
    pub const TERMINATED_WITH_ERROR: u8 = 50;
}

/// `pmix_link_state_t` values.
pub mod link_state {
    pub const UNKNOWN: u8 = 0;
    pub const DOWN: u8 = 1;
    pub const UP: u8 = 2;
}

/// `pmix_iof_channel_t` bits.
pub mod iof_channel {
    pub const NO_CHANNELS: u16 = 0;
    pub const STDIN: u16 = 1;
    pub const STDOUT: u16 = 2;
    pub const STDERR: u16 = 4;
    pub const STDDIAG: u16 = 8;
    pub const ALL: u16 = 0xff;
}

/// `pmix_device_type_t` bits.
pub mod device_type {
    pub const UNKNOWN: u64 = 0;
    pub const BLOCK: u64 = 1;
    pub const GPU: u64 = 2;
    pub const NETWORK: u64 = 4;
    pub const OPENFABRICS: u64 = 8;
    pub const DMA: u64 = 16;
    pub const COPROCESSOR: u64 = 32;
}

/// `pmix_locality_t` bits.
pub mod locality {
    pub const UNKNOWN: u16 = 0x0000;
    pub const NONLOCAL: u16 = 0x8000;
    pub const SHARE_HWTHREAD: u16 = 0x0001;
    pub const SHARE_CORE: u16 = 0x0002;
    pub const SHARE_L1CACHE: u16 = 0x0004;
    pub const SHARE_L2CACHE: u16 = 0x0008;
    pub const SHARE_L3CACHE: u16 = 0x0010;
    pub const SHARE_PACKAGE: u16 = 0x0020;
    pub const SHARE_NUMA: u16 = 0x0040;
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
