//! Interop harness against the system libpmix (to be written).
