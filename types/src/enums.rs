//! The standard's small enumerations as Rust types: [`Scope`],
//! [`DataRange`], [`Persistence`], [`ProcState`], [`JobState`],
//! [`LinkState`] and [`AllocDirective`], and the bit sets [`IofChannel`]
//! and [`DeviceType`] ([`Rank`](crate::Rank), `pmix_rank_t`, is
//! [`crate::rank`]'s).
//!
//! Each is a newtype over the wire integer (`pmix_scope_t` is a `uint8_t`,
//! `pmix_rank_t` a `uint32_t`, …) with the standard's values as associated
//! constants. A newtype rather than a closed `enum` because every integer
//! of the width can arrive on the wire — libpmix packs whatever the caller
//! stored — and a value this crate does not know must survive a decode and
//! re-encode unchanged. The constants still work as `match` patterns:
//!
//! ```
//! use pmix_types::enums::Scope;
//!
//! let s = Scope::from(3u8); // as decoded from the wire
//! assert_eq!(s, Scope::GLOBAL);
//! assert_eq!(u8::from(s), 3);
//! assert_eq!(s.to_string(), "SHARE ACROSS ALL NODES"); // PMIx_Scope_string
//! assert_eq!(format!("{s:?}"), "Scope::GLOBAL");
//! assert_eq!(s.c_name(), Some("PMIX_GLOBAL"));
//! let shared_remotely = match s {
//!     Scope::REMOTE | Scope::GLOBAL => true,
//!     _ => false,
//! };
//! assert!(shared_remotely);
//! assert_eq!(Scope::from(200u8).c_name(), None); // unknown, but preserved
//! ```
//!
//! `Display` prints what libpmix 4.2.2's `PMIx_*_string` helper prints
//! (the strings live in [`crate::names`]); `Debug` prints the constant's
//! path, or the raw number when the value has no name.

#![deny(missing_docs)]

use crate::names;
use crate::value::Value;
use std::fmt;

/// Defines one wire newtype: the struct, its constants, the list of known
/// values with their C names, conversions and formatting.
macro_rules! wire_newtype {
    (
        $(#[$meta:meta])*
        $name:ident($repr:ty), value: $variant:ident, string: $string:path;
        $( $(#[$cmeta:meta])* $konst:ident = $val:expr => $cname:literal; )*
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(transparent)]
        pub struct $name($repr);

        impl $name {
            $( $(#[$cmeta])* pub const $konst: $name = $name($val); )*

            /// Every value the standard (as of libpmix 4.2.2) names, in
            /// ascending order.
            pub const KNOWN: &'static [$name] = &[$($name::$konst),*];

            /// The value with this wire integer (known or not).
            pub const fn from_wire(v: $repr) -> Self {
                $name(v)
            }

            /// The wire integer.
            pub const fn wire(self) -> $repr {
                self.0
            }

            /// Whether the standard names this value.
            pub fn is_known(self) -> bool {
                self.c_name().is_some()
            }

            /// The name of the C macro for this value in `pmix_common.h`
            /// (e.g. `"PMIX_GLOBAL"`), or `None` for an unnamed value.
            pub fn c_name(self) -> Option<&'static str> {
                match self {
                    $( $name::$konst => Some($cname), )*
                    _ => None,
                }
            }

            /// The name of the Rust constant for this value (e.g.
            /// `"GLOBAL"`), or `None` for an unnamed value.
            pub fn const_name(self) -> Option<&'static str> {
                match self {
                    $( $name::$konst => Some(stringify!($konst)), )*
                    _ => None,
                }
            }
        }

        impl From<$repr> for $name {
            fn from(v: $repr) -> Self {
                $name(v)
            }
        }

        impl From<$name> for $repr {
            fn from(v: $name) -> Self {
                v.0
            }
        }

        impl From<$name> for Value {
            fn from(v: $name) -> Self {
                Value::$variant(v.0)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&$string(self.0))
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self.const_name() {
                    Some(n) => write!(f, "{}::{}", stringify!($name), n),
                    None => write!(f, "{}({})", stringify!($name), self.0),
                }
            }
        }
    };
}

wire_newtype! {
    /// `pmix_scope_t`: who may see the data a process puts.
    Scope(u8), value: Scope, string: names::scope_string;
    /// `PMIX_SCOPE_UNDEF`: not set.
    UNDEF = names::scope::UNDEF => "PMIX_SCOPE_UNDEF";
    /// `PMIX_LOCAL`: processes on the same node only.
    LOCAL = names::scope::LOCAL => "PMIX_LOCAL";
    /// `PMIX_REMOTE`: processes on other nodes only.
    REMOTE = names::scope::REMOTE => "PMIX_REMOTE";
    /// `PMIX_GLOBAL`: every process.
    GLOBAL = names::scope::GLOBAL => "PMIX_GLOBAL";
    /// `PMIX_INTERNAL`: the putting process's own store only.
    INTERNAL = names::scope::INTERNAL => "PMIX_INTERNAL";
    /// `PMIX_DEL_LOCAL` (7.0): delete from the local scope. Its string is
    /// 4.2.2's `PMIx_Scope_string` ("UNKNOWN SCOPE"), as for 6-8.
    DEL_LOCAL = names::scope::DEL_LOCAL => "PMIX_DEL_LOCAL";
    /// `PMIX_DEL_REMOTE` (7.0): delete from the remote scope.
    DEL_REMOTE = names::scope::DEL_REMOTE => "PMIX_DEL_REMOTE";
    /// `PMIX_DEL_GLOBAL` (7.0): delete from both.
    DEL_GLOBAL = names::scope::DEL_GLOBAL => "PMIX_DEL_GLOBAL";
    /// `PMIX_DEL_INTERNAL` (7.0): delete from the internal store.
    DEL_INTERNAL = names::scope::DEL_INTERNAL => "PMIX_DEL_INTERNAL";
}

impl Scope {
    /// One of 7.0's delete scopes (5-8).
    pub const fn is_delete(self) -> bool {
        matches!(self.wire(), 5..=8)
    }
}

wire_newtype! {
    /// `pmix_data_range_t`: who may look up published data or receive an
    /// event.
    DataRange(u8), value: DataRange, string: names::data_range_string;
    /// `PMIX_RANGE_UNDEF`: not set.
    UNDEF = names::data_range::UNDEF => "PMIX_RANGE_UNDEF";
    /// `PMIX_RANGE_RM`: the host resource manager only.
    RM = names::data_range::RM => "PMIX_RANGE_RM";
    /// `PMIX_RANGE_LOCAL`: the local node only.
    LOCAL = names::data_range::LOCAL => "PMIX_RANGE_LOCAL";
    /// `PMIX_RANGE_NAMESPACE`: processes of the same namespace.
    NAMESPACE = names::data_range::NAMESPACE => "PMIX_RANGE_NAMESPACE";
    /// `PMIX_RANGE_SESSION`: processes of the same session (allocation).
    SESSION = names::data_range::SESSION => "PMIX_RANGE_SESSION";
    /// `PMIX_RANGE_GLOBAL`: anyone authorised.
    GLOBAL = names::data_range::GLOBAL => "PMIX_RANGE_GLOBAL";
    /// `PMIX_RANGE_CUSTOM`: as the accompanying attributes say.
    CUSTOM = names::data_range::CUSTOM => "PMIX_RANGE_CUSTOM";
    /// `PMIX_RANGE_PROC_LOCAL`: the calling process only.
    PROC_LOCAL = names::data_range::PROC_LOCAL => "PMIX_RANGE_PROC_LOCAL";
    /// `PMIX_RANGE_INVALID` (`UINT8_MAX`).
    INVALID = names::data_range::INVALID => "PMIX_RANGE_INVALID";
}

wire_newtype! {
    /// `pmix_persistence_t`: how long published data is kept.
    Persistence(u8), value: Persist, string: names::persistence_string;
    /// `PMIX_PERSIST_INDEF`: until deleted.
    INDEF = names::persistence::INDEF => "PMIX_PERSIST_INDEF";
    /// `PMIX_PERSIST_FIRST_READ`: deleted on first access.
    FIRST_READ = names::persistence::FIRST_READ => "PMIX_PERSIST_FIRST_READ";
    /// `PMIX_PERSIST_PROC`: until the publishing process terminates.
    PROC = names::persistence::PROC => "PMIX_PERSIST_PROC";
    /// `PMIX_PERSIST_APP`: until the publisher's application terminates.
    APP = names::persistence::APP => "PMIX_PERSIST_APP";
    /// `PMIX_PERSIST_SESSION`: until the publisher's session terminates.
    SESSION = names::persistence::SESSION => "PMIX_PERSIST_SESSION";
    /// `PMIX_PERSIST_INVALID` (`UINT8_MAX`).
    INVALID = names::persistence::INVALID => "PMIX_PERSIST_INVALID";
}

wire_newtype! {
    /// `pmix_proc_state_t`: a process's life-cycle state. Values below
    /// [`ProcState::UNTERMINATED`] mean "still running", from
    /// [`ProcState::ERROR`] on "terminated abnormally".
    ProcState(u8), value: ProcState, string: names::proc_state_string;
    /// `PMIX_PROC_STATE_UNDEF`.
    UNDEF = names::proc_state::UNDEF => "PMIX_PROC_STATE_UNDEF";
    /// `PMIX_PROC_STATE_PREPPED`: ready to be launched.
    PREPPED = names::proc_state::PREPPED => "PMIX_PROC_STATE_PREPPED";
    /// `PMIX_PROC_STATE_LAUNCH_UNDERWAY`.
    LAUNCH_UNDERWAY = names::proc_state::LAUNCH_UNDERWAY => "PMIX_PROC_STATE_LAUNCH_UNDERWAY";
    /// `PMIX_PROC_STATE_RESTART`: ready for restart.
    RESTART = names::proc_state::RESTART => "PMIX_PROC_STATE_RESTART";
    /// `PMIX_PROC_STATE_TERMINATE`: marked for termination.
    TERMINATE = names::proc_state::TERMINATE => "PMIX_PROC_STATE_TERMINATE";
    /// `PMIX_PROC_STATE_RUNNING`: forked by its daemon.
    RUNNING = names::proc_state::RUNNING => "PMIX_PROC_STATE_RUNNING";
    /// `PMIX_PROC_STATE_CONNECTED`: connected to its PMIx server.
    CONNECTED = names::proc_state::CONNECTED => "PMIX_PROC_STATE_CONNECTED";
    /// `PMIX_PROC_STATE_UNTERMINATED`: the "not terminated" boundary.
    UNTERMINATED = names::proc_state::UNTERMINATED => "PMIX_PROC_STATE_UNTERMINATED";
    /// `PMIX_PROC_STATE_TERMINATED`: terminated normally.
    TERMINATED = names::proc_state::TERMINATED => "PMIX_PROC_STATE_TERMINATED";
    /// `PMIX_PROC_STATE_ERROR`: the "terminated abnormally" boundary.
    ERROR = names::proc_state::ERROR => "PMIX_PROC_STATE_ERROR";
    /// `PMIX_PROC_STATE_KILLED_BY_CMD`.
    KILLED_BY_CMD = names::proc_state::KILLED_BY_CMD => "PMIX_PROC_STATE_KILLED_BY_CMD";
    /// `PMIX_PROC_STATE_ABORTED`.
    ABORTED = names::proc_state::ABORTED => "PMIX_PROC_STATE_ABORTED";
    /// `PMIX_PROC_STATE_FAILED_TO_START`.
    FAILED_TO_START = names::proc_state::FAILED_TO_START => "PMIX_PROC_STATE_FAILED_TO_START";
    /// `PMIX_PROC_STATE_ABORTED_BY_SIG`.
    ABORTED_BY_SIG = names::proc_state::ABORTED_BY_SIG => "PMIX_PROC_STATE_ABORTED_BY_SIG";
    /// `PMIX_PROC_STATE_TERM_WO_SYNC`: exited without `PMIx_Finalize`.
    TERM_WO_SYNC = names::proc_state::TERM_WO_SYNC => "PMIX_PROC_STATE_TERM_WO_SYNC";
    /// `PMIX_PROC_STATE_COMM_FAILED`.
    COMM_FAILED = names::proc_state::COMM_FAILED => "PMIX_PROC_STATE_COMM_FAILED";
    /// `PMIX_PROC_STATE_SENSOR_BOUND_EXCEEDED`.
    SENSOR_BOUND_EXCEEDED = names::proc_state::SENSOR_BOUND_EXCEEDED => "PMIX_PROC_STATE_SENSOR_BOUND_EXCEEDED";
    /// `PMIX_PROC_STATE_CALLED_ABORT`: called `PMIx_Abort`.
    CALLED_ABORT = names::proc_state::CALLED_ABORT => "PMIX_PROC_STATE_CALLED_ABORT";
    /// `PMIX_PROC_STATE_HEARTBEAT_FAILED`.
    HEARTBEAT_FAILED = names::proc_state::HEARTBEAT_FAILED => "PMIX_PROC_STATE_HEARTBEAT_FAILED";
    /// `PMIX_PROC_STATE_MIGRATING`: failed, waiting to restart elsewhere.
    MIGRATING = names::proc_state::MIGRATING => "PMIX_PROC_STATE_MIGRATING";
    /// `PMIX_PROC_STATE_CANNOT_RESTART`.
    CANNOT_RESTART = names::proc_state::CANNOT_RESTART => "PMIX_PROC_STATE_CANNOT_RESTART";
    /// `PMIX_PROC_STATE_TERM_NON_ZERO`: exited with a non-zero status.
    TERM_NON_ZERO = names::proc_state::TERM_NON_ZERO => "PMIX_PROC_STATE_TERM_NON_ZERO";
    /// `PMIX_PROC_STATE_FAILED_TO_LAUNCH`.
    FAILED_TO_LAUNCH = names::proc_state::FAILED_TO_LAUNCH => "PMIX_PROC_STATE_FAILED_TO_LAUNCH";
}

impl ProcState {
    /// Whether the state is below the `UNTERMINATED` boundary (the process
    /// has not terminated).
    pub fn is_running(self) -> bool {
        self < ProcState::UNTERMINATED
    }

    /// Whether the state is at or above the `ERROR` boundary (the process
    /// terminated abnormally).
    pub fn is_error(self) -> bool {
        self >= ProcState::ERROR
    }
}

wire_newtype! {
    /// `pmix_job_state_t`: a job's life-cycle state.
    JobState(u8), value: JobState, string: names::job_state_string;
    /// `PMIX_JOB_STATE_UNDEF`.
    UNDEF = names::job_state::UNDEF => "PMIX_JOB_STATE_UNDEF";
    /// `PMIX_JOB_STATE_AWAITING_ALLOC`: waiting for resources.
    AWAITING_ALLOC = names::job_state::AWAITING_ALLOC => "PMIX_JOB_STATE_AWAITING_ALLOC";
    /// `PMIX_JOB_STATE_LAUNCH_UNDERWAY`.
    LAUNCH_UNDERWAY = names::job_state::LAUNCH_UNDERWAY => "PMIX_JOB_STATE_LAUNCH_UNDERWAY";
    /// `PMIX_JOB_STATE_RUNNING`: all processes spawned.
    RUNNING = names::job_state::RUNNING => "PMIX_JOB_STATE_RUNNING";
    /// `PMIX_JOB_STATE_SUSPENDED`.
    SUSPENDED = names::job_state::SUSPENDED => "PMIX_JOB_STATE_SUSPENDED";
    /// `PMIX_JOB_STATE_CONNECTED`: all processes connected to their server.
    CONNECTED = names::job_state::CONNECTED => "PMIX_JOB_STATE_CONNECTED";
    /// `PMIX_JOB_STATE_UNTERMINATED`: the "not terminated" boundary.
    UNTERMINATED = names::job_state::UNTERMINATED => "PMIX_JOB_STATE_UNTERMINATED";
    /// `PMIX_JOB_STATE_TERMINATED`.
    TERMINATED = names::job_state::TERMINATED => "PMIX_JOB_STATE_TERMINATED";
    /// `PMIX_JOB_STATE_TERMINATED_WITH_ERROR`.
    TERMINATED_WITH_ERROR = names::job_state::TERMINATED_WITH_ERROR => "PMIX_JOB_STATE_TERMINATED_WITH_ERROR";
}

impl JobState {
    /// Whether the state is below the `UNTERMINATED` boundary (the job has
    /// not terminated).
    pub fn is_running(self) -> bool {
        self < JobState::UNTERMINATED
    }
}

wire_newtype! {
    /// `pmix_link_state_t`: the state of a network port. Note that
    /// libpmix 4.2.2's `PMIx_Link_state_string` (our `Display`) says
    /// "INACTIVE"/"ACTIVE" for `DOWN`/`UP` and "UNKNOWN" otherwise.
    LinkState(u8), value: LinkState, string: names::link_state_string;
    /// `PMIX_LINK_STATE_UNKNOWN`: unknown or not applicable.
    UNKNOWN = names::link_state::UNKNOWN => "PMIX_LINK_STATE_UNKNOWN";
    /// `PMIX_LINK_DOWN`: the port is inactive.
    DOWN = names::link_state::DOWN => "PMIX_LINK_DOWN";
    /// `PMIX_LINK_UP`: the port is active.
    UP = names::link_state::UP => "PMIX_LINK_UP";
}

wire_newtype! {
    /// `pmix_alloc_directive_t`: what an allocation request asks for.
    AllocDirective(u8), value: AllocDirective, string: names::alloc_directive_string;
    /// `PMIX_ALLOC_NEW`: a new allocation, disjoint from the requester's.
    NEW = names::alloc_directive::NEW => "PMIX_ALLOC_NEW";
    /// `PMIX_ALLOC_EXTEND`: extend the existing allocation.
    EXTEND = names::alloc_directive::EXTEND => "PMIX_ALLOC_EXTEND";
    /// `PMIX_ALLOC_RELEASE`: release part of the existing allocation.
    RELEASE = names::alloc_directive::RELEASE => "PMIX_ALLOC_RELEASE";
    /// `PMIX_ALLOC_REAQUIRE` (so spelt in C): take back lent resources.
    REACQUIRE = names::alloc_directive::REAQUIRE => "PMIX_ALLOC_REAQUIRE";
}

/// Set operations for the bit-set newtypes.
macro_rules! bit_set_ops {
    ($name:ident) => {
        impl $name {
            /// Whether every bit of `other` is set in `self`.
            pub const fn contains(self, other: $name) -> bool {
                self.0 & other.0 == other.0
            }

            /// Whether no bit is set.
            pub const fn is_empty(self) -> bool {
                self.0 == 0
            }
        }

        impl std::ops::BitOr for $name {
            type Output = $name;
            fn bitor(self, rhs: $name) -> $name {
                $name(self.0 | rhs.0)
            }
        }

        impl std::ops::BitOrAssign for $name {
            fn bitor_assign(&mut self, rhs: $name) {
                self.0 |= rhs.0;
            }
        }

        impl std::ops::BitAnd for $name {
            type Output = $name;
            fn bitand(self, rhs: $name) -> $name {
                $name(self.0 & rhs.0)
            }
        }
    };
}

wire_newtype! {
    /// `pmix_iof_channel_t`: a set of forwarded I/O channels. `Display` is
    /// `PMIx_IOF_channel_string`: the set channel names, each followed by a
    /// space, or "NONE".
    ///
    /// ```
    /// use pmix_types::enums::IofChannel;
    ///
    /// let ch = IofChannel::STDOUT | IofChannel::STDERR;
    /// assert!(ch.contains(IofChannel::STDERR) && !ch.contains(IofChannel::STDIN));
    /// assert_eq!(u16::from(ch), 6);
    /// assert_eq!(ch.to_string(), "STDOUT STDERR ");
    /// ```
    IofChannel(u16), value: IofChannel, string: names::iof_channel_string;
    /// `PMIX_FWD_NO_CHANNELS`.
    NO_CHANNELS = names::iof_channel::NO_CHANNELS => "PMIX_FWD_NO_CHANNELS";
    /// `PMIX_FWD_STDIN_CHANNEL`.
    STDIN = names::iof_channel::STDIN => "PMIX_FWD_STDIN_CHANNEL";
    /// `PMIX_FWD_STDOUT_CHANNEL`.
    STDOUT = names::iof_channel::STDOUT => "PMIX_FWD_STDOUT_CHANNEL";
    /// `PMIX_FWD_STDERR_CHANNEL`.
    STDERR = names::iof_channel::STDERR => "PMIX_FWD_STDERR_CHANNEL";
    /// `PMIX_FWD_STDDIAG_CHANNEL`.
    STDDIAG = names::iof_channel::STDDIAG => "PMIX_FWD_STDDIAG_CHANNEL";
    /// `PMIX_FWD_ALL_CHANNELS` (`0x00ff`).
    ALL = names::iof_channel::ALL => "PMIX_FWD_ALL_CHANNELS";
}

bit_set_ops!(IofChannel);

wire_newtype! {
    /// `pmix_device_type_t`: a set of device types. `Display` is
    /// `PMIx_Device_type_string`, which names exactly one type and says
    /// "UNKNOWN" for none or several.
    DeviceType(u64), value: DevType, string: names::device_type_string;
    /// `PMIX_DEVTYPE_UNKNOWN`.
    UNKNOWN = names::device_type::UNKNOWN => "PMIX_DEVTYPE_UNKNOWN";
    /// `PMIX_DEVTYPE_BLOCK`.
    BLOCK = names::device_type::BLOCK => "PMIX_DEVTYPE_BLOCK";
    /// `PMIX_DEVTYPE_GPU`.
    GPU = names::device_type::GPU => "PMIX_DEVTYPE_GPU";
    /// `PMIX_DEVTYPE_NETWORK`.
    NETWORK = names::device_type::NETWORK => "PMIX_DEVTYPE_NETWORK";
    /// `PMIX_DEVTYPE_OPENFABRICS`.
    OPENFABRICS = names::device_type::OPENFABRICS => "PMIX_DEVTYPE_OPENFABRICS";
    /// `PMIX_DEVTYPE_DMA`.
    DMA = names::device_type::DMA => "PMIX_DEVTYPE_DMA";
    /// `PMIX_DEVTYPE_COPROC`.
    COPROCESSOR = names::device_type::COPROCESSOR => "PMIX_DEVTYPE_COPROC";
}

bit_set_ops!(DeviceType);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Rank;

    /// Every 8-bit wire value survives `From` both ways, and the names
    /// are those of the string helper for known and unknown values alike.
    macro_rules! every_u8 {
        ($t:ident, $string:path) => {
            for v in 0..=u8::MAX {
                let x = $t::from(v);
                assert_eq!(u8::from(x), v);
                assert_eq!($t::from_wire(v).wire(), v);
                assert_eq!(x.to_string(), $string(v));
                assert_eq!(x.is_known(), $t::KNOWN.contains(&x));
                let dbg = format!("{x:?}");
                match x.const_name() {
                    Some(n) => assert_eq!(dbg, format!("{}::{n}", stringify!($t))),
                    None => assert_eq!(dbg, format!("{}({v})", stringify!($t))),
                }
            }
            // KNOWN ascends, so Ord follows the wire integer
            assert!($t::KNOWN.windows(2).all(|w| w[0] < w[1]));
        };
    }

    #[test]
    fn every_u8_round_trips() {
        every_u8!(Scope, names::scope_string);
        every_u8!(DataRange, names::data_range_string);
        every_u8!(Persistence, names::persistence_string);
        every_u8!(ProcState, names::proc_state_string);
        every_u8!(JobState, names::job_state_string);
        every_u8!(LinkState, names::link_state_string);
        every_u8!(AllocDirective, names::alloc_directive_string);
    }

    #[test]
    fn known_values_and_values() {
        assert_eq!(Scope::KNOWN.len(), 9);
        assert_eq!(DataRange::KNOWN.len(), 9);
        assert_eq!(Persistence::KNOWN.len(), 6);
        assert_eq!(ProcState::KNOWN.len(), 23);
        assert_eq!(JobState::KNOWN.len(), 9);
        assert_eq!(LinkState::KNOWN.len(), 3);
        assert_eq!(AllocDirective::KNOWN.len(), 4);
        assert_eq!(Value::from(Scope::LOCAL), Value::Scope(1));
        assert_eq!(Value::from(Persistence::SESSION), Value::Persist(4));
        assert_eq!(Value::from(DataRange::INVALID), Value::DataRange(255));
        assert_eq!(Value::from(Rank::WILDCARD), Value::ProcRank(u32::MAX - 1));
    }

    #[test]
    fn states_boundaries() {
        assert!(ProcState::CONNECTED.is_running());
        assert!(!ProcState::TERMINATED.is_running());
        assert!(!ProcState::TERMINATED.is_error());
        assert!(ProcState::TERM_NON_ZERO.is_error());
        assert!(JobState::SUSPENDED.is_running());
        assert!(!JobState::TERMINATED_WITH_ERROR.is_running());
    }

    #[test]
    fn bit_sets() {
        for v in 0..=u16::MAX {
            let x = IofChannel::from(v);
            assert_eq!(u16::from(x), v);
            assert_eq!(x.to_string(), names::iof_channel_string(v));
        }
        for shift in 0..64 {
            let v = 1u64 << shift;
            assert_eq!(u64::from(DeviceType::from(v)), v);
            assert_eq!(DeviceType::from(v).is_known(), shift < 6);
        }
        let mut d = DeviceType::GPU;
        d |= DeviceType::NETWORK;
        assert_eq!(u64::from(d), 6);
        assert!(d.contains(DeviceType::GPU) && !d.contains(DeviceType::DMA));
        assert_eq!(d & DeviceType::NETWORK, DeviceType::NETWORK);
        assert!((d & DeviceType::BLOCK).is_empty());
        assert_eq!(d.to_string(), "UNKNOWN");
        assert_eq!(format!("{d:?}"), "DeviceType(6)");
        assert!(IofChannel::ALL.contains(IofChannel::STDDIAG | IofChannel::STDIN));
        assert_eq!(Value::from(IofChannel::STDERR), Value::IofChannel(4));
        assert_eq!(Value::from(DeviceType::COPROCESSOR), Value::DevType(32));
        assert_eq!(IofChannel::KNOWN.len(), 6);
        assert_eq!(DeviceType::KNOWN.len(), 7);
        assert!(IofChannel::KNOWN.windows(2).all(|w| w[0] < w[1]));
        assert!(DeviceType::KNOWN.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn ranks() {
        for r in [
            0,
            1,
            7,
            u32::MAX - 51,
            u32::MAX - 50,
            u32::MAX - 5,
            u32::MAX,
        ] {
            assert_eq!(u32::from(Rank::from(r)), r);
            assert_eq!(Rank::new(r).wire(), r);
            assert_eq!(Rank::new(r).is_valid(), r < u32::MAX - 50);
        }
        assert_eq!(Rank::specials().count(), 5);
        for r in Rank::specials() {
            assert!(!r.is_valid());
            let c = r.c_name().unwrap();
            assert_eq!(r.to_string(), c);
            assert_eq!(
                format!("{r:?}"),
                format!("Rank::{}", &c["PMIX_RANK_".len()..])
            );
        }
        assert_eq!(
            Rank::new(u32::MAX - 5).to_string(),
            (u32::MAX - 5).to_string()
        );
        assert_eq!(format!("{:?}", Rank::new(4)), "Rank(4)");
        assert!(Rank::WILDCARD.is_wildcard() && !Rank::UNDEF.is_wildcard());
        assert_eq!(Rank::default(), Rank::new(0));
    }
}
