//! PMIx data types, status codes, commands and the value model.
//!
//! This crate has no wire knowledge: `pmix-codec` turns these values into
//! bytes for each bfrops dialect.

#![deny(missing_docs)]

pub mod attrs;
pub mod cfmt;
pub mod datatype;
pub mod enums;
pub mod hex;
pub mod keys;
pub mod names;
pub mod print;
pub mod pstring;
pub mod status;
pub mod value;

pub use datatype::{data_type_string, DataType, DATA_TYPE_MAX};
pub use enums::{
    AllocDirective, DataRange, DeviceType, IofChannel, JobState, LinkState, Persistence, ProcState,
    Scope,
};
pub use pstring::{find_nul, Key, Nspace, PString, StrError, MAX_KEYLEN, MAX_NSLEN};
pub use status::Status;
pub use value::*;
