//! PMIx data types, status codes, commands and the value model.
//!
//! This crate has no wire knowledge: `pmix-codec` turns these values into
//! bytes for each bfrops dialect.
//!
//! ```
//! use pmix_types::{status, DataType, Info, Key, Proc, Value, RANK_WILDCARD};
//!
//! // an attribute as PMIx_Get returns it: key, directive bits, typed value
//! let size = Info::new("pmix.job.size", Value::Uint32(4));
//! assert_eq!(size.value.data_type(), DataType::Uint32);
//! assert_eq!(DataType::Uint32.code(), 14);
//! assert_eq!(DataType::parse("PMIX_UINT32"), Some(DataType::Uint32));
//!
//! // job-level data lives under the wildcard rank of the namespace
//! let job = Proc::new("myjob", RANK_WILDCARD);
//! assert_eq!(job.rank, u32::MAX - 1);
//!
//! // keys are C strings of at most PMIX_MAX_KEYLEN (511) bytes
//! assert!(Key::from_bytes(&[b'k'; 512]).is_err());
//!
//! // status codes carry libpmix's names
//! assert_eq!(status::status_name(-46), Some("PMIX_ERR_NOT_FOUND"));
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod attrs;
pub mod cfmt;
pub mod convert;
pub mod datatype;
pub mod enums;
pub mod hex;
pub mod keys;
pub mod names;
pub mod print;
pub mod pstring;
pub mod status;
pub mod type_table;
pub mod value;

pub use convert::TypeMismatch;
pub use datatype::{data_type_string, DataType, DATA_TYPE_MAX};
pub use enums::{
    AllocDirective, DataRange, DeviceType, IofChannel, JobState, LinkState, Persistence, ProcState,
    Scope,
};
pub use pstring::{find_nul, Key, Nspace, PString, StrError, MAX_KEYLEN, MAX_NSLEN};
pub use status::Status;
pub use value::*;
