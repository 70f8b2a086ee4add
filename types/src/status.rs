//! Status codes (`pmix_status_t`) of libpmix 4.2.2 with their macro names
//! and the text `PMIx_Error_string` gives.
//!
//! Generated from `pmix_common.h` / `pmix_deprecated.h` of Debian's
//! libpmix 4.2.2 and checked against the running library by
//! `types/tests/strings_vs_libpmix.rs` (interop/c/strings.c).

/// A PMIx status code.
pub type Status = i32;

/// What `PMIx_Error_string` answers for a code it does not know.
pub const UNKNOWN_ERROR_STRING: &str = "ERROR STRING NOT FOUND";

/// Every status macro: (name, value). Several names can share a value
/// (deprecated aliases); the first is the current name.
pub const STATUS_NAMES: &[(&str, Status)] = &[
    ("PMIX_SUCCESS", 0),
    ("PMIX_ERROR", -1),
    ("PMIX_ERR_PROC_RESTART", -4),
    ("PMIX_ERR_PROC_CHECKPOINT", -5),
    ("PMIX_ERR_PROC_MIGRATE", -6),
    ("PMIX_ERR_EXISTS", -11),
    ("PMIX_ERR_INVALID_CRED", -12),
    ("PMIX_ERR_WOULD_BLOCK", -15),
    ("PMIX_ERR_UNKNOWN_DATA_TYPE", -16),
    ("PMIX_ERR_TYPE_MISMATCH", -18),
    ("PMIX_ERR_UNPACK_INADEQUATE_SPACE", -19),
    ("PMIX_ERR_UNPACK_FAILURE", -20),
    ("PMIX_ERR_PACK_FAILURE", -21),
    ("PMIX_ERR_NO_PERMISSIONS", -23),
    ("PMIX_ERR_TIMEOUT", -24),
    ("PMIX_ERR_UNREACH", -25),
    ("PMIX_ERR_BAD_PARAM", -27),
    ("PMIX_ERR_RESOURCE_BUSY", -28),
    ("PMIX_ERR_OUT_OF_RESOURCE", -29),
    ("PMIX_ERR_INIT", -31),
    ("PMIX_ERR_NOMEM", -32),
    ("PMIX_ERR_NOT_FOUND", -46),
    ("PMIX_ERR_NOT_SUPPORTED", -47),
    ("PMIX_ERR_PARAM_VALUE_NOT_SUPPORTED", -59),
    ("PMIX_ERR_COMM_FAILURE", -49),
    ("PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER", -50),
    ("PMIX_ERR_CONFLICTING_CLEANUP_DIRECTIVES", -51),
    ("PMIX_ERR_PARTIAL_SUCCESS", -52),
    ("PMIX_ERR_DUPLICATE_KEY", -53),
    ("PMIX_ERR_EMPTY", -60),
    ("PMIX_ERR_LOST_CONNECTION", -61),
    ("PMIX_ERR_EXISTS_OUTSIDE_SCOPE", -62),
    ("PMIX_PROCESS_SET_DEFINE", -55),
    ("PMIX_PROCESS_SET_DELETE", -56),
    ("PMIX_DEBUGGER_RELEASE", -3),
    ("PMIX_READY_FOR_DEBUG", -58),
    ("PMIX_QUERY_PARTIAL_SUCCESS", -104),
    ("PMIX_JCTRL_CHECKPOINT", -106),
    ("PMIX_JCTRL_CHECKPOINT_COMPLETE", -107),
    ("PMIX_JCTRL_PREEMPT_ALERT", -108),
    ("PMIX_MONITOR_HEARTBEAT_ALERT", -109),
    ("PMIX_MONITOR_FILE_ALERT", -110),
    ("PMIX_PROC_TERMINATED", -111),
    ("PMIX_ERR_EVENT_REGISTRATION", -144),
    ("PMIX_MODEL_DECLARED", -147),
    ("PMIX_MODEL_RESOURCES", -151),
    ("PMIX_OPENMP_PARALLEL_ENTERED", -152),
    ("PMIX_OPENMP_PARALLEL_EXITED", -153),
    ("PMIX_LAUNCHER_READY", -155),
    ("PMIX_OPERATION_IN_PROGRESS", -156),
    ("PMIX_OPERATION_SUCCEEDED", -157),
    ("PMIX_ERR_INVALID_OPERATION", -158),
    ("PMIX_GROUP_INVITED", -159),
    ("PMIX_GROUP_LEFT", -160),
    ("PMIX_GROUP_INVITE_ACCEPTED", -161),
    ("PMIX_GROUP_INVITE_DECLINED", -162),
    ("PMIX_GROUP_INVITE_FAILED", -163),
    ("PMIX_GROUP_MEMBERSHIP_UPDATE", -164),
    ("PMIX_GROUP_CONSTRUCT_ABORT", -165),
    ("PMIX_GROUP_CONSTRUCT_COMPLETE", -166),
    ("PMIX_GROUP_LEADER_SELECTED", -167),
    ("PMIX_GROUP_LEADER_FAILED", -168),
    ("PMIX_GROUP_CONTEXT_ID_ASSIGNED", -169),
    ("PMIX_GROUP_MEMBER_FAILED", -170),
    ("PMIX_ERR_REPEAT_ATTR_REGISTRATION", -171),
    ("PMIX_ERR_IOF_FAILURE", -172),
    ("PMIX_ERR_IOF_COMPLETE", -173),
    ("PMIX_LAUNCH_COMPLETE", -174),
    ("PMIX_FABRIC_UPDATED", -175),
    ("PMIX_FABRIC_UPDATE_PENDING", -176),
    ("PMIX_FABRIC_UPDATE_ENDPOINTS", -113),
    ("PMIX_ERR_JOB_APP_NOT_EXECUTABLE", -177),
    ("PMIX_ERR_JOB_NO_EXE_SPECIFIED", -178),
    ("PMIX_ERR_JOB_FAILED_TO_MAP", -179),
    ("PMIX_ERR_JOB_CANCELED", -180),
    ("PMIX_ERR_JOB_FAILED_TO_LAUNCH", -181),
    ("PMIX_ERR_JOB_ABORTED", -182),
    ("PMIX_ERR_JOB_KILLED_BY_CMD", -183),
    ("PMIX_ERR_JOB_ABORTED_BY_SIG", -184),
    ("PMIX_ERR_JOB_TERM_WO_SYNC", -185),
    ("PMIX_ERR_JOB_SENSOR_BOUND_EXCEEDED", -186),
    ("PMIX_ERR_JOB_NON_ZERO_TERM", -187),
    ("PMIX_ERR_JOB_ALLOC_FAILED", -188),
    ("PMIX_ERR_JOB_ABORTED_BY_SYS_EVENT", -189),
    ("PMIX_ERR_JOB_EXE_NOT_FOUND", -190),
    ("PMIX_ERR_JOB_WDIR_NOT_FOUND", -233),
    ("PMIX_ERR_JOB_INSUFFICIENT_RESOURCES", -234),
    ("PMIX_ERR_JOB_SYS_OP_FAILED", -235),
    ("PMIX_EVENT_JOB_START", -191),
    ("PMIX_EVENT_JOB_END", -145),
    ("PMIX_EVENT_SESSION_START", -192),
    ("PMIX_EVENT_SESSION_END", -193),
    ("PMIX_ERR_PROC_REQUESTED_ABORT", -8),
    ("PMIX_ERR_PROC_TERM_WO_SYNC", -200),
    ("PMIX_EVENT_PROC_TERMINATED", -201),
    ("PMIX_ERR_PROC_KILLED_BY_CMD", -400),
    ("PMIX_ERR_PROC_FAILED_TO_START", -401),
    ("PMIX_ERR_PROC_ABORTED_BY_SIG", -402),
    ("PMIX_ERR_PROC_SENSOR_BOUND_EXCEEDED", -403),
    ("PMIX_ERR_EXIT_NONZERO_TERM", -404),
    ("PMIX_EVENT_SYS_BASE", -230),
    ("PMIX_EVENT_NODE_DOWN", -231),
    ("PMIX_EVENT_NODE_OFFLINE", -232),
    ("PMIX_EVENT_SYS_OTHER", -330),
    ("PMIX_EVENT_NO_ACTION_TAKEN", -331),
    ("PMIX_EVENT_PARTIAL_ACTION_TAKEN", -332),
    ("PMIX_EVENT_ACTION_DEFERRED", -333),
    ("PMIX_EVENT_ACTION_COMPLETE", -334),
    ("PMIX_ERR_SILENT", -2),
    ("PMIX_ERR_DEBUGGER_RELEASE", -3),
    ("PMIX_ERR_PROC_ABORTED", -7),
    ("PMIX_ERR_PROC_ABORTING", -9),
    ("PMIX_ERR_SERVER_FAILED_REQUEST", -10),
    ("PMIX_EXISTS", -11),
    ("PMIX_ERR_HANDSHAKE_FAILED", -13),
    ("PMIX_ERR_READY_FOR_HANDSHAKE", -14),
    ("PMIX_ERR_PROC_ENTRY_NOT_FOUND", -17),
    ("PMIX_ERR_PACK_MISMATCH", -22),
    ("PMIX_ERR_IN_ERRNO", -26),
    ("PMIX_ERR_DATA_VALUE_NOT_FOUND", -30),
    ("PMIX_ERR_INVALID_ARG", -33),
    ("PMIX_ERR_INVALID_KEY", -34),
    ("PMIX_ERR_INVALID_KEY_LENGTH", -35),
    ("PMIX_ERR_INVALID_VAL", -36),
    ("PMIX_ERR_INVALID_VAL_LENGTH", -37),
    ("PMIX_ERR_INVALID_LENGTH", -38),
    ("PMIX_ERR_INVALID_NUM_ARGS", -39),
    ("PMIX_ERR_INVALID_ARGS", -40),
    ("PMIX_ERR_INVALID_NUM_PARSED", -41),
    ("PMIX_ERR_INVALID_KEYVALP", -42),
    ("PMIX_ERR_INVALID_SIZE", -43),
    ("PMIX_ERR_INVALID_NAMESPACE", -44),
    ("PMIX_ERR_SERVER_NOT_AVAIL", -45),
    ("PMIX_ERR_NOT_IMPLEMENTED", -48),
    ("PMIX_DEBUG_WAITING_FOR_NOTIFY", -58),
    ("PMIX_ERR_FATAL", -63),
    ("PMIX_ERR_NOT_AVAILABLE", -64),
    ("PMIX_ERR_VALUE_OUT_OF_BOUNDS", -65),
    ("PMIX_ERR_FILE_OPEN_FAILURE", -67),
    ("PMIX_ERR_FILE_READ_FAILURE", -68),
    ("PMIX_ERR_FILE_WRITE_FAILURE", -69),
    ("PMIX_ERR_SYS_LIMITS_PIPES", -70),
    ("PMIX_ERR_SYS_LIMITS_CHILDREN", -71),
    ("PMIX_ERR_PIPE_SETUP_FAILURE", -72),
    ("PMIX_ERR_EXE_NOT_ACCESSIBLE", -73),
    ("PMIX_ERR_JOB_WDIR_NOT_ACCESSIBLE", -74),
    ("PMIX_ERR_SYS_LIMITS_FILES", -75),
    ("PMIX_ERR_LOST_CONNECTION_TO_SERVER", -101),
    ("PMIX_ERR_LOST_PEER_CONNECTION", -102),
    ("PMIX_ERR_LOST_CONNECTION_TO_CLIENT", -103),
    ("PMIX_NOTIFY_ALLOC_COMPLETE", -105),
    ("PMIX_ERR_INVALID_TERMINATION", -112),
    ("PMIX_ERR_JOB_TERMINATED", -145),
    ("PMIX_ERR_UPDATE_ENDPOINTS", -146),
    ("PMIX_GDS_ACTION_COMPLETE", -148),
    ("PMIX_PROC_HAS_CONNECTED", -149),
    ("PMIX_CONNECT_REQUESTED", -150),
    ("PMIX_ERR_NODE_DOWN", -231),
    ("PMIX_ERR_NODE_OFFLINE", -232),
    ("PMIX_ERR_SYS_BASE", -230),
    ("PMIX_ERR_SYS_OTHER", -330),
];

/// The status macros later releases added, with the release that added
/// them (name, value, since), each from that release's `pmix_common.h.in`
/// (OpenPMIx tags v5.0.11, v6.1.0 and master `494e9d9d0`, 7.0.0a1): 4.2.2
/// and 5.0.11 have none of them, and none of their values has another
/// name in 4.2.2 or 5.0.11 (spec-notes/pmix7.md, "Status codes").
/// [`STATUS_NAMES`] stays libpmix 4.2.2's, which our C library exports.
/// The values are 7.0's: 6.1.0 numbered LOST_PRECISION and CHANGE_SIGN
/// -400 and -401 ([`Numbering`]).
pub const LATER_STATUS_NAMES: &[(&str, Status, &str)] = &[
    ("PMIX_ERR_NOT_A_MEMBER", -66, "7.0"),
    ("PMIX_ALLOC_TIMEOUT_WARNING", -194, "7.0"),
    ("PMIX_DVM_IS_READY", -195, "7.0"),
    ("PMIX_ERR_DVM_MOD", -196, "7.0"),
    ("PMIX_ERR_LOST_PRECISION", -202, "6.1"),
    ("PMIX_ERR_CHANGE_SIGN", -203, "6.1"),
    ("PMIX_ERR_IOF_XOFF", -405, "7.0"),
];

/// The codes whose number changed between releases: (name, 7.0's value,
/// 6.1's value). 6.1.0's header gives -400 and -401 two names each
/// (PROC_KILLED_BY_CMD and LOST_PRECISION, PROC_FAILED_TO_START and
/// CHANGE_SIGN); 4.2.2, 5.0.11 and 7.0 give them only the first.
pub const RENUMBERED: &[(&str, Status, Status)] = &[
    ("PMIX_ERR_LOST_PRECISION", -202, -400),
    ("PMIX_ERR_CHANGE_SIGN", -203, -401),
];

/// Which numbering of the status codes a peer's release uses. Ours (every
/// [`Status`] in this crate) is 7.0's, which agrees with 4.2.2's and
/// 5.0.11's on every code they have.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Numbering {
    /// 4.2.2, 5.0.x, 6.0.x: no LOST_PRECISION or CHANGE_SIGN; -400 and
    /// -401 are PROC_KILLED_BY_CMD and PROC_FAILED_TO_START.
    Before61,
    /// 6.1.x: LOST_PRECISION and CHANGE_SIGN are -400 and -401, beside
    /// PROC_KILLED_BY_CMD and PROC_FAILED_TO_START.
    V61,
    /// 7.0 and later: LOST_PRECISION and CHANGE_SIGN are -202 and -203.
    V7,
}

impl Numbering {
    /// The code as a peer of this numbering must receive it. A 6.1 peer
    /// gets LOST_PRECISION and CHANGE_SIGN as -400 and -401, its own
    /// numbers for them; other peers get ours (an older peer has no name
    /// for -202, which is better than the wrong name -400 would give it).
    pub fn to_peer(self, code: Status) -> Status {
        match self {
            Numbering::V61 => RENUMBERED
                .iter()
                .find(|(_, ours, _)| *ours == code)
                .map_or(code, |(_, _, theirs)| *theirs),
            Numbering::Before61 | Numbering::V7 => code,
        }
    }

    /// A code a peer of this numbering sent, in ours. Every release keeps
    /// -400 and -401 as PROC_KILLED_BY_CMD and PROC_FAILED_TO_START, so
    /// that is what they mean from any peer, 6.1 included: 6.1.0's library
    /// returns LOST_PRECISION and CHANGE_SIGN only from its local value
    /// conversion (`bfrop_base_get_number.c`), never in a message, while
    /// the process codes travel in events (spec-notes/pmix7.md).
    pub fn from_peer(self, code: Status) -> Status {
        code
    }
}

/// `PMIx_Error_string` for every code it knows: (code, text).
const ERROR_STRINGS: &[(Status, &str)] = &[
    (0, "SUCCESS"),
    (-1, "ERROR"),
    (-2, "SILENT_ERROR"),
    (-3, "DEBUGGER-RELEASE"),
    (-4, "PROC_RESTART"),
    (-5, "PROC-CHECKPOINT-ERROR"),
    (-6, "PROC-MIGRATE"),
    (-7, "PROC-ABORTED"),
    (-8, "PROC-ABORT-REQUESTED"),
    (-9, "PROC-ABORTING"),
    (-10, "SERVER FAILED REQUEST"),
    (-11, "EXISTS"),
    (-12, "INVALID-CREDENTIAL"),
    (-13, "HANDSHAKE-FAILED"),
    (-14, "READY-FOR-HANDSHAKE"),
    (-15, "WOULD-BLOCK"),
    (-16, "UNKNOWN-DATA-TYPE"),
    (-17, "PROC-ENTRY-NOT-FOUND"),
    (-18, "TYPE-MISMATCH"),
    (-19, "UNPACK-INADEQUATE-SPACE"),
    (-20, "UNPACK-FAILURE"),
    (-21, "PACK-FAILURE"),
    (-22, "PACK-MISMATCH"),
    (-23, "NO-PERMISSIONS"),
    (-24, "TIMEOUT"),
    (-25, "UNREACHABLE"),
    (-26, "ERR-IN-ERRNO"),
    (-27, "BAD-PARAM"),
    (-28, "RESOURCE-BUSY"),
    (-29, "OUT-OF-RESOURCE"),
    (-30, "DATA-VALUE-NOT-FOUND"),
    (-31, "INIT"),
    (-32, "NO-MEM"),
    (-33, "INVALID-ARG"),
    (-34, "INVALID-KEY"),
    (-35, "INVALID-KEY-LENGTH"),
    (-36, "INVALID-VAL"),
    (-37, "INVALID-VAL-LENGTH"),
    (-38, "INVALID-LENGTH"),
    (-39, "INVALID-NUM-ARGS"),
    (-40, "INVALID-ARGS"),
    (-41, "INVALID-NUM-PARSED"),
    (-42, "INVALID-KEYVAL"),
    (-43, "INVALID-SIZE"),
    (-44, "INVALID-NAMESPACE"),
    (-45, "SERVER-NOT-AVAIL"),
    (-46, "NOT-FOUND"),
    (-47, "NOT-SUPPORTED"),
    (-48, "NOT-IMPLEMENTED"),
    (-49, "COMM-FAILURE"),
    (-50, "UNPACK-PAST-END"),
    (-51, "PMIX CONFLICTING CLEANUP DIRECTIVES"),
    (-52, "PARTIAL SUCCESS"),
    (-53, "DUPLICATE KEY"),
    (-55, "PROCESS SET DEFINED"),
    (-58, "READY-FOR-DEBUG"),
    (-59, "PARAM-VALUE-NOT-SUPPORTED"),
    (-60, "EMPTY"),
    (-61, "LOST_CONNECTION"),
    (-62, "OUTSIDE-SCOPE"),
    (-63, "FATAL"),
    (-64, "NOT_AVAILABLE"),
    (-65, "VALUE_OUT_OF_BOUNDS"),
    (-67, "FILE_OPEN_FAILURE"),
    (-68, "FILE_READ_FAILURE"),
    (-69, "FILE_WRITE_FAILURE"),
    (-70, "SYS_LIMITS_PIPES"),
    (-71, "SYS_LIMITS_CHILDREN"),
    (-72, "PIPE_SETUP_FAILURE"),
    (-73, "EXE NOT ACCESSIBLE"),
    (-74, "WDIR NOT ACCESSIBLE"),
    (-104, "QUERY-PARTIAL-SUCCESS"),
    (-105, "PMIX ALLOC OPERATION COMPLETE"),
    (-106, "PMIX JOB CONTROL CHECKPOINT"),
    (-107, "PMIX JOB CONTROL CHECKPOINT COMPLETE"),
    (-108, "PMIX PRE-EMPTION ALERT"),
    (-109, "PMIX HEARTBEAT ALERT"),
    (-110, "PMIX FILE MONITOR ALERT"),
    (-111, "PROC-TERMINATED"),
    (-112, "INVALID-TERMINATION"),
    (-113, "FABRIC-UPDATE-ENDPOINTS"),
    (-144, "EVENT-REGISTRATION"),
    (-145, "JOB ENDED"),
    (-146, "UPDATE-ENDPOINTS"),
    (-147, "PMIX MODEL DECLARED"),
    (-148, "GDS-ACTION-COMPLETE"),
    (-149, "PROC-HAS-CONNECTED"),
    (-150, "CONNECT-REQUESTED"),
    (-152, "OPENMP-PARALLEL-ENTERED"),
    (-153, "OPENMP-PARALLEL-EXITED"),
    (-155, "LAUNCHER-READY"),
    (-156, "OPERATION-IN-PROGRESS"),
    (-157, "OPERATION-SUCCEEDED"),
    (-158, "INVALID-OPERATION"),
    (-159, "GROUP-INVITED"),
    (-160, "GROUP-LEFT"),
    (-161, "GROUP-INVITE-ACCEPTED"),
    (-162, "GROUP-INVITE-DECLINED"),
    (-163, "GROUP-INVITE-FAILED"),
    (-164, "GROUP-MEMBERSHIP-UPDATE"),
    (-165, "GROUP-CONSTRUCT-ABORT"),
    (-166, "GROUP-CONSTRUCT-COMPLETE"),
    (-167, "GROUP-LEADER-SELECTED"),
    (-168, "GROUP-LEADER-FAILED"),
    (-169, "GROUP-CONTEXT-ID-ASSIGNED"),
    (-170, "GROUP-MEMBER-FAILED"),
    (-171, "REPEAT-ATTRIBUTE-REGISTRATION"),
    (-172, "IOF FAILURE"),
    (-173, "IOF COMPLETE"),
    (-174, "PMIX LAUNCH COMPLETE"),
    (-175, "FABRIC-UPDATED"),
    (-176, "FABRIC-UPDATE-PENDING"),
    (-177, "APPLICATION NOT EXECUTABLE"),
    (-178, "NO EXECUTABLE SPECIFIED"),
    (-179, "JOB FAILED TO MAP"),
    (-180, "JOB CANCELED"),
    (-181, "JOB FAILED TO LAUNCH"),
    (-182, "JOB ABORTED"),
    (-183, "KILLED BY COMMAND"),
    (-184, "ABORTED BY SIGNAL"),
    (-185, "TERMINATED WITHOUT SYNC"),
    (-186, "SENSOR BOUND EXCEEDED"),
    (-187, "NON-ZERO TERMINATION"),
    (-188, "FAILED TO OBTAIN ALLOCATION"),
    (-189, "JOB ABORTED BY SYSTEM EVENT"),
    (-190, "EXECUTABLE NOT FOUND"),
    (-191, "JOB STARTED"),
    (-192, "SESSION STARTED"),
    (-193, "SESSION ENDED"),
    (-200, "PROC TERMINATED WITHOUT SYNC"),
    (-201, "PROC TERMINATED"),
    (-230, "SYSTEM BASE EVENT"),
    (-231, "NODE-DOWN"),
    (-232, "NODE-OFFLINE"),
    (-233, "WORKING DIRECTORY NOT FOUND"),
    (-234, "INSUFFICIENT RESOURCES"),
    (-235, "SYSTEM OPERATION FAILED"),
    (-330, "UNDEFINED-SYSTEM-EVENT"),
    (-331, "EVENT-NO-ACTION-TAKEN"),
    (-332, "EVENT-PARTIAL-ACTION-TAKEN"),
    (-333, "EVENT-ACTION-DEFERRED"),
    (-334, "EVENT-ACTION-COMPLETE"),
    (-400, "PROC-KILLED-BY-CMD"),
    (-401, "PROC-FAILED-TO-START"),
    (-402, "PROC-ABORTED-BY-SIG"),
    (-403, "PROC-SENSOR-BOUND-EXCEEDED"),
    (-404, "PROC-EXIT-NONZERO-TERM"),
];

/// `PMIx_Error_string`.
pub fn error_string(code: Status) -> &'static str {
    ERROR_STRINGS
        .iter()
        .find(|(c, _)| *c == code)
        .map_or(UNKNOWN_ERROR_STRING, |(_, s)| s)
}

/// The macro name of a status code ("PMIX_ERR_NOT_FOUND").
pub fn status_name(code: Status) -> Option<&'static str> {
    STATUS_NAMES
        .iter()
        .find(|(_, v)| *v == code)
        .map(|(n, _)| *n)
        .or_else(|| {
            LATER_STATUS_NAMES
                .iter()
                .find(|(_, v, _)| *v == code)
                .map(|(n, _, _)| *n)
        })
}

/// The code of a macro name, with or without the `PMIX_` prefix.
pub fn status_from_name(name: &str) -> Option<Status> {
    let up = name.trim().to_ascii_uppercase();
    let full = if up.starts_with("PMIX_") {
        up
    } else {
        format!("PMIX_{up}")
    };
    STATUS_NAMES
        .iter()
        .find(|(n, _)| *n == full)
        .map(|(_, v)| *v)
        .or_else(|| {
            LATER_STATUS_NAMES
                .iter()
                .find(|(n, _, _)| *n == full)
                .map(|(_, v, _)| *v)
        })
}

/// A `pmix_status_t` with its name: what an API returns where a caller
/// wants to print or compare a status rather than an `i32`.
///
/// ```
/// use pmix_types::status::{codes, StatusCode};
/// let s = StatusCode::from(codes::PMIX_ERR_NOT_FOUND);
/// assert_eq!(s.name(), Some("PMIX_ERR_NOT_FOUND"));
/// assert_eq!(s.to_string(), "PMIX_ERR_NOT_FOUND (-46)");
/// assert_eq!(s.error_string(), "NOT-FOUND");
/// assert_eq!(StatusCode::from_name("err_not_found"), Some(s));
/// assert!(s.is_error() && !StatusCode::SUCCESS.is_error());
/// assert_eq!(i32::from(s), -46);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StatusCode(pub Status);

impl StatusCode {
    /// `PMIX_SUCCESS`.
    pub const SUCCESS: StatusCode = StatusCode(codes::PMIX_SUCCESS);

    /// The code as it travels (`pmix_status_t`, an `int`).
    pub const fn code(self) -> Status {
        self.0
    }

    /// Its macro name (`PMIX_ERR_NOT_FOUND`), if libpmix 4.2.2 names it.
    pub fn name(self) -> Option<&'static str> {
        status_name(self.0)
    }

    /// What `PMIx_Error_string` says of it.
    pub fn error_string(self) -> &'static str {
        error_string(self.0)
    }

    /// The status a macro name stands for, with or without `PMIX_`.
    pub fn from_name(name: &str) -> Option<StatusCode> {
        status_from_name(name).map(StatusCode)
    }

    /// A negative code: an error (success and the positive, host-defined
    /// codes are not).
    pub const fn is_error(self) -> bool {
        self.0 < 0
    }
}

impl From<Status> for StatusCode {
    fn from(code: Status) -> StatusCode {
        StatusCode(code)
    }
}

impl From<StatusCode> for Status {
    fn from(s: StatusCode) -> Status {
        s.0
    }
}

/// `PMIX_ERR_NOT_FOUND (-46)`; a code without a name: `unknown PMIx status (n)`.
impl std::fmt::Display for StatusCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{n} ({})", self.0),
            None => write!(f, "unknown PMIx status ({})", self.0),
        }
    }
}

/// The status macros as constants, each documented with the text
/// `PMIx_Error_string` gives for it (libpmix 4.2.2).
pub mod codes {
    use super::Status;
    /// `PMIX_SUCCESS` (0): "SUCCESS".
    pub const PMIX_SUCCESS: Status = 0;
    /// `PMIX_ERROR` (-1): "ERROR".
    pub const PMIX_ERROR: Status = -1;
    /// `PMIX_ERR_PROC_RESTART` (-4): "PROC_RESTART".
    pub const PMIX_ERR_PROC_RESTART: Status = -4;
    /// `PMIX_ERR_PROC_CHECKPOINT` (-5): "PROC-CHECKPOINT-ERROR".
    pub const PMIX_ERR_PROC_CHECKPOINT: Status = -5;
    /// `PMIX_ERR_PROC_MIGRATE` (-6): "PROC-MIGRATE".
    pub const PMIX_ERR_PROC_MIGRATE: Status = -6;
    /// `PMIX_ERR_EXISTS` (-11): "EXISTS".
    pub const PMIX_ERR_EXISTS: Status = -11;
    /// `PMIX_ERR_INVALID_CRED` (-12): "INVALID-CREDENTIAL".
    pub const PMIX_ERR_INVALID_CRED: Status = -12;
    /// `PMIX_ERR_WOULD_BLOCK` (-15): "WOULD-BLOCK".
    pub const PMIX_ERR_WOULD_BLOCK: Status = -15;
    /// `PMIX_ERR_UNKNOWN_DATA_TYPE` (-16): "UNKNOWN-DATA-TYPE".
    pub const PMIX_ERR_UNKNOWN_DATA_TYPE: Status = -16;
    /// `PMIX_ERR_TYPE_MISMATCH` (-18): "TYPE-MISMATCH".
    pub const PMIX_ERR_TYPE_MISMATCH: Status = -18;
    /// `PMIX_ERR_UNPACK_INADEQUATE_SPACE` (-19): "UNPACK-INADEQUATE-SPACE".
    pub const PMIX_ERR_UNPACK_INADEQUATE_SPACE: Status = -19;
    /// `PMIX_ERR_UNPACK_FAILURE` (-20): "UNPACK-FAILURE".
    pub const PMIX_ERR_UNPACK_FAILURE: Status = -20;
    /// `PMIX_ERR_PACK_FAILURE` (-21): "PACK-FAILURE".
    pub const PMIX_ERR_PACK_FAILURE: Status = -21;
    /// `PMIX_ERR_NO_PERMISSIONS` (-23): "NO-PERMISSIONS".
    pub const PMIX_ERR_NO_PERMISSIONS: Status = -23;
    /// `PMIX_ERR_TIMEOUT` (-24): "TIMEOUT".
    pub const PMIX_ERR_TIMEOUT: Status = -24;
    /// `PMIX_ERR_UNREACH` (-25): "UNREACHABLE".
    pub const PMIX_ERR_UNREACH: Status = -25;
    /// `PMIX_ERR_BAD_PARAM` (-27): "BAD-PARAM".
    pub const PMIX_ERR_BAD_PARAM: Status = -27;
    /// `PMIX_ERR_RESOURCE_BUSY` (-28): "RESOURCE-BUSY".
    pub const PMIX_ERR_RESOURCE_BUSY: Status = -28;
    /// `PMIX_ERR_OUT_OF_RESOURCE` (-29): "OUT-OF-RESOURCE".
    pub const PMIX_ERR_OUT_OF_RESOURCE: Status = -29;
    /// `PMIX_ERR_INIT` (-31): "INIT".
    pub const PMIX_ERR_INIT: Status = -31;
    /// `PMIX_ERR_NOMEM` (-32): "NO-MEM".
    pub const PMIX_ERR_NOMEM: Status = -32;
    /// `PMIX_ERR_NOT_FOUND` (-46): "NOT-FOUND".
    pub const PMIX_ERR_NOT_FOUND: Status = -46;
    /// `PMIX_ERR_NOT_SUPPORTED` (-47): "NOT-SUPPORTED".
    pub const PMIX_ERR_NOT_SUPPORTED: Status = -47;
    /// `PMIX_ERR_PARAM_VALUE_NOT_SUPPORTED` (-59): "PARAM-VALUE-NOT-SUPPORTED".
    pub const PMIX_ERR_PARAM_VALUE_NOT_SUPPORTED: Status = -59;
    /// `PMIX_ERR_COMM_FAILURE` (-49): "COMM-FAILURE".
    pub const PMIX_ERR_COMM_FAILURE: Status = -49;
    /// `PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER` (-50): "UNPACK-PAST-END".
    pub const PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER: Status = -50;
    /// `PMIX_ERR_CONFLICTING_CLEANUP_DIRECTIVES` (-51): "PMIX CONFLICTING CLEANUP DIRECTIVES".
    pub const PMIX_ERR_CONFLICTING_CLEANUP_DIRECTIVES: Status = -51;
    /// `PMIX_ERR_PARTIAL_SUCCESS` (-52): "PARTIAL SUCCESS".
    pub const PMIX_ERR_PARTIAL_SUCCESS: Status = -52;
    /// `PMIX_ERR_DUPLICATE_KEY` (-53): "DUPLICATE KEY".
    pub const PMIX_ERR_DUPLICATE_KEY: Status = -53;
    /// `PMIX_ERR_EMPTY` (-60): "EMPTY".
    pub const PMIX_ERR_EMPTY: Status = -60;
    /// `PMIX_ERR_LOST_CONNECTION` (-61): "LOST_CONNECTION".
    pub const PMIX_ERR_LOST_CONNECTION: Status = -61;
    /// `PMIX_ERR_EXISTS_OUTSIDE_SCOPE` (-62): "OUTSIDE-SCOPE".
    pub const PMIX_ERR_EXISTS_OUTSIDE_SCOPE: Status = -62;
    /// `PMIX_PROCESS_SET_DEFINE` (-55): "PROCESS SET DEFINED".
    pub const PMIX_PROCESS_SET_DEFINE: Status = -55;
    /// `PMIX_PROCESS_SET_DELETE` (-56).
    pub const PMIX_PROCESS_SET_DELETE: Status = -56;
    /// `PMIX_DEBUGGER_RELEASE` (-3): "DEBUGGER-RELEASE".
    pub const PMIX_DEBUGGER_RELEASE: Status = -3;
    /// `PMIX_READY_FOR_DEBUG` (-58): "READY-FOR-DEBUG".
    pub const PMIX_READY_FOR_DEBUG: Status = -58;
    /// `PMIX_QUERY_PARTIAL_SUCCESS` (-104): "QUERY-PARTIAL-SUCCESS".
    pub const PMIX_QUERY_PARTIAL_SUCCESS: Status = -104;
    /// `PMIX_JCTRL_CHECKPOINT` (-106): "PMIX JOB CONTROL CHECKPOINT".
    pub const PMIX_JCTRL_CHECKPOINT: Status = -106;
    /// `PMIX_JCTRL_CHECKPOINT_COMPLETE` (-107): "PMIX JOB CONTROL CHECKPOINT COMPLETE".
    pub const PMIX_JCTRL_CHECKPOINT_COMPLETE: Status = -107;
    /// `PMIX_JCTRL_PREEMPT_ALERT` (-108): "PMIX PRE-EMPTION ALERT".
    pub const PMIX_JCTRL_PREEMPT_ALERT: Status = -108;
    /// `PMIX_MONITOR_HEARTBEAT_ALERT` (-109): "PMIX HEARTBEAT ALERT".
    pub const PMIX_MONITOR_HEARTBEAT_ALERT: Status = -109;
    /// `PMIX_MONITOR_FILE_ALERT` (-110): "PMIX FILE MONITOR ALERT".
    pub const PMIX_MONITOR_FILE_ALERT: Status = -110;
    /// `PMIX_PROC_TERMINATED` (-111): "PROC-TERMINATED".
    pub const PMIX_PROC_TERMINATED: Status = -111;
    /// `PMIX_ERR_EVENT_REGISTRATION` (-144): "EVENT-REGISTRATION".
    pub const PMIX_ERR_EVENT_REGISTRATION: Status = -144;
    /// `PMIX_MODEL_DECLARED` (-147): "PMIX MODEL DECLARED".
    pub const PMIX_MODEL_DECLARED: Status = -147;
    /// `PMIX_MODEL_RESOURCES` (-151).
    pub const PMIX_MODEL_RESOURCES: Status = -151;
    /// `PMIX_OPENMP_PARALLEL_ENTERED` (-152): "OPENMP-PARALLEL-ENTERED".
    pub const PMIX_OPENMP_PARALLEL_ENTERED: Status = -152;
    /// `PMIX_OPENMP_PARALLEL_EXITED` (-153): "OPENMP-PARALLEL-EXITED".
    pub const PMIX_OPENMP_PARALLEL_EXITED: Status = -153;
    /// `PMIX_LAUNCHER_READY` (-155): "LAUNCHER-READY".
    pub const PMIX_LAUNCHER_READY: Status = -155;
    /// `PMIX_OPERATION_IN_PROGRESS` (-156): "OPERATION-IN-PROGRESS".
    pub const PMIX_OPERATION_IN_PROGRESS: Status = -156;
    /// `PMIX_OPERATION_SUCCEEDED` (-157): "OPERATION-SUCCEEDED".
    pub const PMIX_OPERATION_SUCCEEDED: Status = -157;
    /// `PMIX_ERR_INVALID_OPERATION` (-158): "INVALID-OPERATION".
    pub const PMIX_ERR_INVALID_OPERATION: Status = -158;
    /// `PMIX_GROUP_INVITED` (-159): "GROUP-INVITED".
    pub const PMIX_GROUP_INVITED: Status = -159;
    /// `PMIX_GROUP_LEFT` (-160): "GROUP-LEFT".
    pub const PMIX_GROUP_LEFT: Status = -160;
    /// `PMIX_GROUP_INVITE_ACCEPTED` (-161): "GROUP-INVITE-ACCEPTED".
    pub const PMIX_GROUP_INVITE_ACCEPTED: Status = -161;
    /// `PMIX_GROUP_INVITE_DECLINED` (-162): "GROUP-INVITE-DECLINED".
    pub const PMIX_GROUP_INVITE_DECLINED: Status = -162;
    /// `PMIX_GROUP_INVITE_FAILED` (-163): "GROUP-INVITE-FAILED".
    pub const PMIX_GROUP_INVITE_FAILED: Status = -163;
    /// `PMIX_GROUP_MEMBERSHIP_UPDATE` (-164): "GROUP-MEMBERSHIP-UPDATE".
    pub const PMIX_GROUP_MEMBERSHIP_UPDATE: Status = -164;
    /// `PMIX_GROUP_CONSTRUCT_ABORT` (-165): "GROUP-CONSTRUCT-ABORT".
    pub const PMIX_GROUP_CONSTRUCT_ABORT: Status = -165;
    /// `PMIX_GROUP_CONSTRUCT_COMPLETE` (-166): "GROUP-CONSTRUCT-COMPLETE".
    pub const PMIX_GROUP_CONSTRUCT_COMPLETE: Status = -166;
    /// `PMIX_GROUP_LEADER_SELECTED` (-167): "GROUP-LEADER-SELECTED".
    pub const PMIX_GROUP_LEADER_SELECTED: Status = -167;
    /// `PMIX_GROUP_LEADER_FAILED` (-168): "GROUP-LEADER-FAILED".
    pub const PMIX_GROUP_LEADER_FAILED: Status = -168;
    /// `PMIX_GROUP_CONTEXT_ID_ASSIGNED` (-169): "GROUP-CONTEXT-ID-ASSIGNED".
    pub const PMIX_GROUP_CONTEXT_ID_ASSIGNED: Status = -169;
    /// `PMIX_GROUP_MEMBER_FAILED` (-170): "GROUP-MEMBER-FAILED".
    pub const PMIX_GROUP_MEMBER_FAILED: Status = -170;
    /// `PMIX_ERR_REPEAT_ATTR_REGISTRATION` (-171): "REPEAT-ATTRIBUTE-REGISTRATION".
    pub const PMIX_ERR_REPEAT_ATTR_REGISTRATION: Status = -171;
    /// `PMIX_ERR_IOF_FAILURE` (-172): "IOF FAILURE".
    pub const PMIX_ERR_IOF_FAILURE: Status = -172;
    /// `PMIX_ERR_IOF_COMPLETE` (-173): "IOF COMPLETE".
    pub const PMIX_ERR_IOF_COMPLETE: Status = -173;
    /// `PMIX_LAUNCH_COMPLETE` (-174): "PMIX LAUNCH COMPLETE".
    pub const PMIX_LAUNCH_COMPLETE: Status = -174;
    /// `PMIX_FABRIC_UPDATED` (-175): "FABRIC-UPDATED".
    pub const PMIX_FABRIC_UPDATED: Status = -175;
    /// `PMIX_FABRIC_UPDATE_PENDING` (-176): "FABRIC-UPDATE-PENDING".
    pub const PMIX_FABRIC_UPDATE_PENDING: Status = -176;
    /// `PMIX_FABRIC_UPDATE_ENDPOINTS` (-113): "FABRIC-UPDATE-ENDPOINTS".
    pub const PMIX_FABRIC_UPDATE_ENDPOINTS: Status = -113;
    /// `PMIX_ERR_JOB_APP_NOT_EXECUTABLE` (-177): "APPLICATION NOT EXECUTABLE".
    pub const PMIX_ERR_JOB_APP_NOT_EXECUTABLE: Status = -177;
    /// `PMIX_ERR_JOB_NO_EXE_SPECIFIED` (-178): "NO EXECUTABLE SPECIFIED".
    pub const PMIX_ERR_JOB_NO_EXE_SPECIFIED: Status = -178;
    /// `PMIX_ERR_JOB_FAILED_TO_MAP` (-179): "JOB FAILED TO MAP".
    pub const PMIX_ERR_JOB_FAILED_TO_MAP: Status = -179;
    /// `PMIX_ERR_JOB_CANCELED` (-180): "JOB CANCELED".
    pub const PMIX_ERR_JOB_CANCELED: Status = -180;
    /// `PMIX_ERR_JOB_FAILED_TO_LAUNCH` (-181): "JOB FAILED TO LAUNCH".
    pub const PMIX_ERR_JOB_FAILED_TO_LAUNCH: Status = -181;
    /// `PMIX_ERR_JOB_ABORTED` (-182): "JOB ABORTED".
    pub const PMIX_ERR_JOB_ABORTED: Status = -182;
    /// `PMIX_ERR_JOB_KILLED_BY_CMD` (-183): "KILLED BY COMMAND".
    pub const PMIX_ERR_JOB_KILLED_BY_CMD: Status = -183;
    /// `PMIX_ERR_JOB_ABORTED_BY_SIG` (-184): "ABORTED BY SIGNAL".
    pub const PMIX_ERR_JOB_ABORTED_BY_SIG: Status = -184;
    /// `PMIX_ERR_JOB_TERM_WO_SYNC` (-185): "TERMINATED WITHOUT SYNC".
    pub const PMIX_ERR_JOB_TERM_WO_SYNC: Status = -185;
    /// `PMIX_ERR_JOB_SENSOR_BOUND_EXCEEDED` (-186): "SENSOR BOUND EXCEEDED".
    pub const PMIX_ERR_JOB_SENSOR_BOUND_EXCEEDED: Status = -186;
    /// `PMIX_ERR_JOB_NON_ZERO_TERM` (-187): "NON-ZERO TERMINATION".
    pub const PMIX_ERR_JOB_NON_ZERO_TERM: Status = -187;
    /// `PMIX_ERR_JOB_ALLOC_FAILED` (-188): "FAILED TO OBTAIN ALLOCATION".
    pub const PMIX_ERR_JOB_ALLOC_FAILED: Status = -188;
    /// `PMIX_ERR_JOB_ABORTED_BY_SYS_EVENT` (-189): "JOB ABORTED BY SYSTEM EVENT".
    pub const PMIX_ERR_JOB_ABORTED_BY_SYS_EVENT: Status = -189;
    /// `PMIX_ERR_JOB_EXE_NOT_FOUND` (-190): "EXECUTABLE NOT FOUND".
    pub const PMIX_ERR_JOB_EXE_NOT_FOUND: Status = -190;
    /// `PMIX_ERR_JOB_WDIR_NOT_FOUND` (-233): "WORKING DIRECTORY NOT FOUND".
    pub const PMIX_ERR_JOB_WDIR_NOT_FOUND: Status = -233;
    /// `PMIX_ERR_JOB_INSUFFICIENT_RESOURCES` (-234): "INSUFFICIENT RESOURCES".
    pub const PMIX_ERR_JOB_INSUFFICIENT_RESOURCES: Status = -234;
    /// `PMIX_ERR_JOB_SYS_OP_FAILED` (-235): "SYSTEM OPERATION FAILED".
    pub const PMIX_ERR_JOB_SYS_OP_FAILED: Status = -235;
    /// `PMIX_EVENT_JOB_START` (-191): "JOB STARTED".
    pub const PMIX_EVENT_JOB_START: Status = -191;
    /// `PMIX_EVENT_JOB_END` (-145): "JOB ENDED".
    pub const PMIX_EVENT_JOB_END: Status = -145;
    /// `PMIX_EVENT_SESSION_START` (-192): "SESSION STARTED".
    pub const PMIX_EVENT_SESSION_START: Status = -192;
    /// `PMIX_EVENT_SESSION_END` (-193): "SESSION ENDED".
    pub const PMIX_EVENT_SESSION_END: Status = -193;
    /// `PMIX_ERR_PROC_REQUESTED_ABORT` (-8): "PROC-ABORT-REQUESTED".
    pub const PMIX_ERR_PROC_REQUESTED_ABORT: Status = -8;
    /// `PMIX_ERR_PROC_TERM_WO_SYNC` (-200): "PROC TERMINATED WITHOUT SYNC".
    pub const PMIX_ERR_PROC_TERM_WO_SYNC: Status = -200;
    /// `PMIX_EVENT_PROC_TERMINATED` (-201): "PROC TERMINATED".
    pub const PMIX_EVENT_PROC_TERMINATED: Status = -201;
    /// `PMIX_ERR_PROC_KILLED_BY_CMD` (-400): "PROC-KILLED-BY-CMD".
    pub const PMIX_ERR_PROC_KILLED_BY_CMD: Status = -400;
    /// `PMIX_ERR_PROC_FAILED_TO_START` (-401): "PROC-FAILED-TO-START".
    pub const PMIX_ERR_PROC_FAILED_TO_START: Status = -401;
    /// `PMIX_ERR_PROC_ABORTED_BY_SIG` (-402): "PROC-ABORTED-BY-SIG".
    pub const PMIX_ERR_PROC_ABORTED_BY_SIG: Status = -402;
    /// `PMIX_ERR_PROC_SENSOR_BOUND_EXCEEDED` (-403): "PROC-SENSOR-BOUND-EXCEEDED".
    pub const PMIX_ERR_PROC_SENSOR_BOUND_EXCEEDED: Status = -403;
    /// `PMIX_ERR_EXIT_NONZERO_TERM` (-404): "PROC-EXIT-NONZERO-TERM".
    pub const PMIX_ERR_EXIT_NONZERO_TERM: Status = -404;
    /// `PMIX_EVENT_SYS_BASE` (-230): "SYSTEM BASE EVENT".
    pub const PMIX_EVENT_SYS_BASE: Status = -230;
    /// `PMIX_EVENT_NODE_DOWN` (-231): "NODE-DOWN".
    pub const PMIX_EVENT_NODE_DOWN: Status = -231;
    /// `PMIX_EVENT_NODE_OFFLINE` (-232): "NODE-OFFLINE".
    pub const PMIX_EVENT_NODE_OFFLINE: Status = -232;
    /// `PMIX_EVENT_SYS_OTHER` (-330): "UNDEFINED-SYSTEM-EVENT".
    pub const PMIX_EVENT_SYS_OTHER: Status = -330;
    /// `PMIX_EVENT_NO_ACTION_TAKEN` (-331): "EVENT-NO-ACTION-TAKEN".
    pub const PMIX_EVENT_NO_ACTION_TAKEN: Status = -331;
    /// `PMIX_EVENT_PARTIAL_ACTION_TAKEN` (-332): "EVENT-PARTIAL-ACTION-TAKEN".
    pub const PMIX_EVENT_PARTIAL_ACTION_TAKEN: Status = -332;
    /// `PMIX_EVENT_ACTION_DEFERRED` (-333): "EVENT-ACTION-DEFERRED".
    pub const PMIX_EVENT_ACTION_DEFERRED: Status = -333;
    /// `PMIX_EVENT_ACTION_COMPLETE` (-334): "EVENT-ACTION-COMPLETE".
    pub const PMIX_EVENT_ACTION_COMPLETE: Status = -334;
    /// `PMIX_ERR_NOT_A_MEMBER` (-66), new in 7.0.
    pub const PMIX_ERR_NOT_A_MEMBER: Status = -66;
    /// `PMIX_ALLOC_TIMEOUT_WARNING` (-194), new in 7.0.
    pub const PMIX_ALLOC_TIMEOUT_WARNING: Status = -194;
    /// `PMIX_DVM_IS_READY` (-195), new in 7.0.
    pub const PMIX_DVM_IS_READY: Status = -195;
    /// `PMIX_ERR_DVM_MOD` (-196), new in 7.0.
    pub const PMIX_ERR_DVM_MOD: Status = -196;
    /// `PMIX_ERR_LOST_PRECISION` (-202 from 7.0; 6.1 numbered it -400).
    pub const PMIX_ERR_LOST_PRECISION: Status = -202;
    /// `PMIX_ERR_CHANGE_SIGN` (-203 from 7.0; 6.1 numbered it -401).
    pub const PMIX_ERR_CHANGE_SIGN: Status = -203;
    /// `PMIX_ERR_IOF_XOFF` (-405), new in 7.0.
    pub const PMIX_ERR_IOF_XOFF: Status = -405;
    /// `PMIX_ERR_SILENT` (-2): "SILENT_ERROR".
    pub const PMIX_ERR_SILENT: Status = -2;
    /// `PMIX_ERR_DEBUGGER_RELEASE` (-3): "DEBUGGER-RELEASE".
    pub const PMIX_ERR_DEBUGGER_RELEASE: Status = -3;
    /// `PMIX_ERR_PROC_ABORTED` (-7): "PROC-ABORTED".
    pub const PMIX_ERR_PROC_ABORTED: Status = -7;
    /// `PMIX_ERR_PROC_ABORTING` (-9): "PROC-ABORTING".
    pub const PMIX_ERR_PROC_ABORTING: Status = -9;
    /// `PMIX_ERR_SERVER_FAILED_REQUEST` (-10): "SERVER FAILED REQUEST".
    pub const PMIX_ERR_SERVER_FAILED_REQUEST: Status = -10;
    /// `PMIX_EXISTS` (-11): "EXISTS".
    pub const PMIX_EXISTS: Status = -11;
    /// `PMIX_ERR_HANDSHAKE_FAILED` (-13): "HANDSHAKE-FAILED".
    pub const PMIX_ERR_HANDSHAKE_FAILED: Status = -13;
    /// `PMIX_ERR_READY_FOR_HANDSHAKE` (-14): "READY-FOR-HANDSHAKE".
    pub const PMIX_ERR_READY_FOR_HANDSHAKE: Status = -14;
    /// `PMIX_ERR_PROC_ENTRY_NOT_FOUND` (-17): "PROC-ENTRY-NOT-FOUND".
    pub const PMIX_ERR_PROC_ENTRY_NOT_FOUND: Status = -17;
    /// `PMIX_ERR_PACK_MISMATCH` (-22): "PACK-MISMATCH".
    pub const PMIX_ERR_PACK_MISMATCH: Status = -22;
    /// `PMIX_ERR_IN_ERRNO` (-26): "ERR-IN-ERRNO".
    pub const PMIX_ERR_IN_ERRNO: Status = -26;
    /// `PMIX_ERR_DATA_VALUE_NOT_FOUND` (-30): "DATA-VALUE-NOT-FOUND".
    pub const PMIX_ERR_DATA_VALUE_NOT_FOUND: Status = -30;
    /// `PMIX_ERR_INVALID_ARG` (-33): "INVALID-ARG".
    pub const PMIX_ERR_INVALID_ARG: Status = -33;
    /// `PMIX_ERR_INVALID_KEY` (-34): "INVALID-KEY".
    pub const PMIX_ERR_INVALID_KEY: Status = -34;
    /// `PMIX_ERR_INVALID_KEY_LENGTH` (-35): "INVALID-KEY-LENGTH".
    pub const PMIX_ERR_INVALID_KEY_LENGTH: Status = -35;
    /// `PMIX_ERR_INVALID_VAL` (-36): "INVALID-VAL".
    pub const PMIX_ERR_INVALID_VAL: Status = -36;
    /// `PMIX_ERR_INVALID_VAL_LENGTH` (-37): "INVALID-VAL-LENGTH".
    pub const PMIX_ERR_INVALID_VAL_LENGTH: Status = -37;
    /// `PMIX_ERR_INVALID_LENGTH` (-38): "INVALID-LENGTH".
    pub const PMIX_ERR_INVALID_LENGTH: Status = -38;
    /// `PMIX_ERR_INVALID_NUM_ARGS` (-39): "INVALID-NUM-ARGS".
    pub const PMIX_ERR_INVALID_NUM_ARGS: Status = -39;
    /// `PMIX_ERR_INVALID_ARGS` (-40): "INVALID-ARGS".
    pub const PMIX_ERR_INVALID_ARGS: Status = -40;
    /// `PMIX_ERR_INVALID_NUM_PARSED` (-41): "INVALID-NUM-PARSED".
    pub const PMIX_ERR_INVALID_NUM_PARSED: Status = -41;
    /// `PMIX_ERR_INVALID_KEYVALP` (-42): "INVALID-KEYVAL".
    pub const PMIX_ERR_INVALID_KEYVALP: Status = -42;
    /// `PMIX_ERR_INVALID_SIZE` (-43): "INVALID-SIZE".
    pub const PMIX_ERR_INVALID_SIZE: Status = -43;
    /// `PMIX_ERR_INVALID_NAMESPACE` (-44): "INVALID-NAMESPACE".
    pub const PMIX_ERR_INVALID_NAMESPACE: Status = -44;
    /// `PMIX_ERR_SERVER_NOT_AVAIL` (-45): "SERVER-NOT-AVAIL".
    pub const PMIX_ERR_SERVER_NOT_AVAIL: Status = -45;
    /// `PMIX_ERR_NOT_IMPLEMENTED` (-48): "NOT-IMPLEMENTED".
    pub const PMIX_ERR_NOT_IMPLEMENTED: Status = -48;
    /// `PMIX_DEBUG_WAITING_FOR_NOTIFY` (-58): "READY-FOR-DEBUG".
    pub const PMIX_DEBUG_WAITING_FOR_NOTIFY: Status = -58;
    /// `PMIX_ERR_FATAL` (-63): "FATAL".
    pub const PMIX_ERR_FATAL: Status = -63;
    /// `PMIX_ERR_NOT_AVAILABLE` (-64): "NOT_AVAILABLE".
    pub const PMIX_ERR_NOT_AVAILABLE: Status = -64;
    /// `PMIX_ERR_VALUE_OUT_OF_BOUNDS` (-65): "VALUE_OUT_OF_BOUNDS".
    pub const PMIX_ERR_VALUE_OUT_OF_BOUNDS: Status = -65;
    /// `PMIX_ERR_FILE_OPEN_FAILURE` (-67): "FILE_OPEN_FAILURE".
    pub const PMIX_ERR_FILE_OPEN_FAILURE: Status = -67;
    /// `PMIX_ERR_FILE_READ_FAILURE` (-68): "FILE_READ_FAILURE".
    pub const PMIX_ERR_FILE_READ_FAILURE: Status = -68;
    /// `PMIX_ERR_FILE_WRITE_FAILURE` (-69): "FILE_WRITE_FAILURE".
    pub const PMIX_ERR_FILE_WRITE_FAILURE: Status = -69;
    /// `PMIX_ERR_SYS_LIMITS_PIPES` (-70): "SYS_LIMITS_PIPES".
    pub const PMIX_ERR_SYS_LIMITS_PIPES: Status = -70;
    /// `PMIX_ERR_SYS_LIMITS_CHILDREN` (-71): "SYS_LIMITS_CHILDREN".
    pub const PMIX_ERR_SYS_LIMITS_CHILDREN: Status = -71;
    /// `PMIX_ERR_PIPE_SETUP_FAILURE` (-72): "PIPE_SETUP_FAILURE".
    pub const PMIX_ERR_PIPE_SETUP_FAILURE: Status = -72;
    /// `PMIX_ERR_EXE_NOT_ACCESSIBLE` (-73): "EXE NOT ACCESSIBLE".
    pub const PMIX_ERR_EXE_NOT_ACCESSIBLE: Status = -73;
    /// `PMIX_ERR_JOB_WDIR_NOT_ACCESSIBLE` (-74): "WDIR NOT ACCESSIBLE".
    pub const PMIX_ERR_JOB_WDIR_NOT_ACCESSIBLE: Status = -74;
    /// `PMIX_ERR_SYS_LIMITS_FILES` (-75).
    pub const PMIX_ERR_SYS_LIMITS_FILES: Status = -75;
    /// `PMIX_ERR_LOST_CONNECTION_TO_SERVER` (-101).
    pub const PMIX_ERR_LOST_CONNECTION_TO_SERVER: Status = -101;
    /// `PMIX_ERR_LOST_PEER_CONNECTION` (-102).
    pub const PMIX_ERR_LOST_PEER_CONNECTION: Status = -102;
    /// `PMIX_ERR_LOST_CONNECTION_TO_CLIENT` (-103).
    pub const PMIX_ERR_LOST_CONNECTION_TO_CLIENT: Status = -103;
    /// `PMIX_NOTIFY_ALLOC_COMPLETE` (-105): "PMIX ALLOC OPERATION COMPLETE".
    pub const PMIX_NOTIFY_ALLOC_COMPLETE: Status = -105;
    /// `PMIX_ERR_INVALID_TERMINATION` (-112): "INVALID-TERMINATION".
    pub const PMIX_ERR_INVALID_TERMINATION: Status = -112;
    /// `PMIX_ERR_JOB_TERMINATED` (-145): "JOB ENDED".
    pub const PMIX_ERR_JOB_TERMINATED: Status = -145;
    /// `PMIX_ERR_UPDATE_ENDPOINTS` (-146): "UPDATE-ENDPOINTS".
    pub const PMIX_ERR_UPDATE_ENDPOINTS: Status = -146;
    /// `PMIX_GDS_ACTION_COMPLETE` (-148): "GDS-ACTION-COMPLETE".
    pub const PMIX_GDS_ACTION_COMPLETE: Status = -148;
    /// `PMIX_PROC_HAS_CONNECTED` (-149): "PROC-HAS-CONNECTED".
    pub const PMIX_PROC_HAS_CONNECTED: Status = -149;
    /// `PMIX_CONNECT_REQUESTED` (-150): "CONNECT-REQUESTED".
    pub const PMIX_CONNECT_REQUESTED: Status = -150;
    /// `PMIX_ERR_NODE_DOWN` (-231): "NODE-DOWN".
    pub const PMIX_ERR_NODE_DOWN: Status = -231;
    /// `PMIX_ERR_NODE_OFFLINE` (-232): "NODE-OFFLINE".
    pub const PMIX_ERR_NODE_OFFLINE: Status = -232;
    /// `PMIX_ERR_SYS_BASE` (-230): "SYSTEM BASE EVENT".
    pub const PMIX_ERR_SYS_BASE: Status = -230;
    /// `PMIX_ERR_SYS_OTHER` (-330): "UNDEFINED-SYSTEM-EVENT".
    pub const PMIX_ERR_SYS_OTHER: Status = -330;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_known_codes() {
        assert_eq!(error_string(0), "SUCCESS");
        assert_eq!(error_string(-46), "NOT-FOUND");
        assert_eq!(error_string(-20), "UNPACK-FAILURE");
        assert_eq!(error_string(12345), UNKNOWN_ERROR_STRING);
        assert_eq!(
            status_name(-50),
            Some("PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER")
        );
        // the later releases' names, at 7.0's numbers
        assert_eq!(status_name(-202), Some("PMIX_ERR_LOST_PRECISION"));
        assert_eq!(status_name(-400), Some("PMIX_ERR_PROC_KILLED_BY_CMD"));
        assert_eq!(status_from_name("err_iof_xoff"), Some(-405));
        assert_eq!(
            status_from_name("err_not_found"),
            Some(codes::PMIX_ERR_NOT_FOUND)
        );
    }

    #[test]
    fn renumbered_codes_by_release() {
        let lp = codes::PMIX_ERR_LOST_PRECISION;
        let cs = codes::PMIX_ERR_CHANGE_SIGN;
        assert_eq!(Numbering::V61.to_peer(lp), -400);
        assert_eq!(Numbering::V61.to_peer(cs), -401);
        assert_eq!(Numbering::V7.to_peer(lp), -202);
        assert_eq!(Numbering::Before61.to_peer(lp), -202);
        // -400 is PROC_KILLED_BY_CMD in every release and stays it
        for n in [Numbering::Before61, Numbering::V61, Numbering::V7] {
            assert_eq!(n.to_peer(codes::PMIX_ERR_PROC_KILLED_BY_CMD), -400);
            assert_eq!(n.from_peer(-400), codes::PMIX_ERR_PROC_KILLED_BY_CMD);
            assert_eq!(n.from_peer(-202), lp);
        }
        // no later name takes a value 4.2.2 names
        for (n, v, _) in LATER_STATUS_NAMES {
            assert!(STATUS_NAMES.iter().all(|(_, w)| w != v), "{n}");
        }
    }
}
