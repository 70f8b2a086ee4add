//! Typed getters over the reserved keys (issue 16 item 5):
//! `client.get_typed::<u32>(&job, keys::JOB_SIZE)`.
//!
//! Integers convert when the value fits, whatever integer type carried it:
//! Slurm sends `pmix.appnum` as PMIX_INT where the standard says uint32_t
//! (keys.md), and a getter that refused it would fail under Slurm. Any
//! other mismatch is an error that names the key and both types.

use crate::client::{Client, ClientError};
use pmix_types::{Proc, Value};

/// A Rust type a PMIx value can be read as.
pub trait FromValue: Sized {
    /// What the caller asked for, for errors ("an unsigned 32-bit integer").
    const WHAT: &'static str;
    /// The value as `Self`, or None if it is another type or does not fit.
    fn from_value(v: &Value) -> Option<Self>;
}

/// Any integer value as i128 (every PMIx integer fits).
fn integer(v: &Value) -> Option<i128> {
    Some(match v {
        Value::Byte(x) | Value::Uint8(x) => i128::from(*x),
        Value::Int8(x) => i128::from(*x),
        Value::Int16(x) => i128::from(*x),
        Value::Uint16(x) => i128::from(*x),
        Value::Int(x) | Value::Int32(x) => i128::from(*x),
        Value::Uint(x) | Value::Uint32(x) | Value::Pid(x) | Value::ProcRank(x) => i128::from(*x),
        Value::Int64(x) => i128::from(*x),
        Value::Uint64(x) | Value::Size(x) => i128::from(*x),
        _ => return None,
    })
}

macro_rules! from_integer {
    ($($t:ty => $what:literal),*) => {$(
        impl FromValue for $t {
            const WHAT: &'static str = $what;
            fn from_value(v: &Value) -> Option<$t> {
                integer(v).and_then(|x| <$t>::try_from(x).ok())
            }
        }
    )*};
}

from_integer!(u16 => "PMIX_UINT16", u32 => "PMIX_UINT32", u64 => "PMIX_UINT64",
              i32 => "PMIX_INT32", i64 => "PMIX_INT64");

impl FromValue for bool {
    const WHAT: &'static str = "PMIX_BOOL";
    fn from_value(v: &Value) -> Option<bool> {
        match v {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }
}

impl FromValue for String {
    const WHAT: &'static str = "PMIX_STRING";
    fn from_value(v: &Value) -> Option<String> {
        match v {
            Value::String(Some(s)) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        }
    }
}

impl FromValue for Proc {
    const WHAT: &'static str = "PMIX_PROC";
    fn from_value(v: &Value) -> Option<Proc> {
        match v {
            Value::Proc(p) => Some((**p).clone()),
            _ => None,
        }
    }
}

/// `get_typed` for the client (and tool) role.
pub trait TypedGet {
    /// PMIx_Get of `key` for `proc`, read as `T`.
    fn get_typed<T: FromValue>(&mut self, proc: &Proc, key: &str) -> Result<T, ClientError>;
    /// A job-level key of our own job (rank WILDCARD):
    /// `client.get_job::<u32>(keys::JOB_SIZE)`.
    fn get_job<T: FromValue>(&mut self, key: &str) -> Result<T, ClientError>;
}

impl TypedGet for Client {
    fn get_job<T: FromValue>(&mut self, key: &str) -> Result<T, ClientError> {
        let job = Proc {
            rank: pmix_types::RANK_WILDCARD,
            ..self.proc().clone()
        };
        self.get_typed(&job, key)
    }

    fn get_typed<T: FromValue>(&mut self, proc: &Proc, key: &str) -> Result<T, ClientError> {
        let v = self.get(proc, key, &[])?;
        T::from_value(&v).ok_or_else(|| {
            ClientError::Protocol(format!(
                "get {key}: the server sent {}, which is not a {}",
                v.data_type(),
                T::WHAT
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_convert_when_they_fit() {
        assert_eq!(u32::from_value(&Value::Uint32(7)), Some(7));
        assert_eq!(u32::from_value(&Value::Int(3)), Some(3)); // Slurm's appnum
        assert_eq!(u32::from_value(&Value::Int(-1)), None);
        assert_eq!(u16::from_value(&Value::Uint32(70000)), None);
        assert_eq!(u32::from_value(&Value::String(Some("7".into()))), None);
        assert_eq!(bool::from_value(&Value::Bool(true)), Some(true));
    }
}
