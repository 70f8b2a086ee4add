//! Conversions between [`Value`] and Rust types: `TryFrom<Value>` (and
//! `TryFrom<&Value>`) to read a value as the type a caller expects, `From`
//! to build one.
//!
//! Integers convert when the number fits, whatever integer type carried it:
//! Slurm sends `pmix.appnum` as PMIX_INT where the standard says uint32_t
//! (spec-notes/keys.md), and a reader that refused it would fail under
//! Slurm. Every other mismatch is a [`TypeMismatch`] naming the type asked
//! for and the type that came.
//!
//! ```
//! use pmix_types::{Rank, Value};
//! assert_eq!(u32::try_from(Value::Uint32(4)), Ok(4));
//! assert_eq!(u32::try_from(&Value::Int(3)), Ok(3));
//! let e = u32::try_from(Value::Bool(true)).unwrap_err();
//! assert_eq!(e.to_string(), "expected PMIX_UINT32, got PMIX_BOOL");
//! assert_eq!(Rank::try_from(Value::ProcRank(u32::MAX - 1)), Ok(Rank::WILDCARD));
//! assert_eq!(Value::from("x"), Value::String(Some("x".into())));
//! ```

use crate::enums::{
    AllocDirective, DataRange, DeviceType, IofChannel, JobState, LinkState, Persistence, ProcState,
    Scope,
};
use crate::rank::Rank;
use crate::status::StatusCode;
use crate::{DataType, Info, Nspace, PString, Proc, Timeval, Value, F32, F64};
use bytes::Bytes;

/// A value is not of the type asked for (or, for integers, its number
/// does not fit that type).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("expected {expected}, got {actual}{}", if *.out_of_range { " out of range" } else { "" })]
pub struct TypeMismatch {
    /// The PMIx type the Rust type stands for ("PMIX_UINT32").
    pub expected: &'static str,
    /// The type of the value that came.
    pub actual: DataType,
    /// The value was an integer, but its number does not fit.
    pub out_of_range: bool,
}

impl TypeMismatch {
    fn new(expected: &'static str, v: &Value) -> Self {
        TypeMismatch {
            expected,
            actual: v.data_type(),
            out_of_range: false,
        }
    }
}

/// The identity conversion (`Value` to `Value`) cannot fail.
impl From<std::convert::Infallible> for TypeMismatch {
    fn from(e: std::convert::Infallible) -> Self {
        match e {}
    }
}

/// Any integer value as i128 (every PMIx integer fits).
fn integer(v: &Value) -> Option<i128> {
    Some(match v {
        Value::Byte(x) | Value::Uint8(x) => i128::from(*x),
        Value::Int8(x) => i128::from(*x),
        Value::Int16(x) => i128::from(*x),
        Value::Uint16(x) => i128::from(*x),
        Value::Int(x) | Value::Int32(x) => i128::from(*x),
        Value::Uint(x) | Value::Uint32(x) | Value::Pid(x) => i128::from(*x),
        Value::Int64(x) => i128::from(*x),
        Value::Uint64(x) | Value::Size(x) => i128::from(*x),
        _ => return None,
    })
}

macro_rules! integers {
    ($($t:ty => $what:literal, $variant:ident;)*) => {$(
        impl TryFrom<&Value> for $t {
            type Error = TypeMismatch;
            fn try_from(v: &Value) -> Result<$t, TypeMismatch> {
                let n = integer(v).ok_or_else(|| TypeMismatch::new($what, v))?;
                <$t>::try_from(n).map_err(|_| TypeMismatch {
                    out_of_range: true,
                    ..TypeMismatch::new($what, v)
                })
            }
        }
        impl TryFrom<Value> for $t {
            type Error = TypeMismatch;
            fn try_from(v: Value) -> Result<$t, TypeMismatch> {
                <$t>::try_from(&v)
            }
        }
        impl From<$t> for Value {
            fn from(x: $t) -> Value {
                Value::$variant(x)
            }
        }
    )*};
}

integers! {
    u8 => "PMIX_UINT8", Uint8;
    u16 => "PMIX_UINT16", Uint16;
    u32 => "PMIX_UINT32", Uint32;
    u64 => "PMIX_UINT64", Uint64;
    i8 => "PMIX_INT8", Int8;
    i16 => "PMIX_INT16", Int16;
    i32 => "PMIX_INT32", Int32;
    i64 => "PMIX_INT64", Int64;
}

/// Copy types read from one variant (or a few): by reference and by value.
macro_rules! copies {
    ($($t:ty => $what:literal, |$x:ident| { $($pat:pat => $e:expr),* $(,)? };)*) => {$(
        impl TryFrom<&Value> for $t {
            type Error = TypeMismatch;
            fn try_from($x: &Value) -> Result<$t, TypeMismatch> {
                #[allow(unreachable_patterns)]
                match $x {
                    $( $pat => Ok($e), )*
                    v => Err(TypeMismatch::new($what, v)),
                }
            }
        }
        impl TryFrom<Value> for $t {
            type Error = TypeMismatch;
            fn try_from(v: Value) -> Result<$t, TypeMismatch> {
                <$t>::try_from(&v)
            }
        }
    )*};
}

copies! {
    bool => "PMIX_BOOL", |v| { Value::Bool(b) => *b };
    f32 => "PMIX_FLOAT", |v| { Value::Float(x) => x.0 };
    // a float widens without loss
    f64 => "PMIX_DOUBLE", |v| { Value::Double(x) => x.0, Value::Float(x) => f64::from(x.0) };
    // the standard's type for ranks is pmix_rank_t; a host may send uint32
    Rank => "PMIX_PROC_RANK", |v| { Value::ProcRank(r) | Value::Uint32(r) => Rank::new(*r) };
    Timeval => "PMIX_TIMEVAL", |v| { Value::Timeval(t) => *t };
    StatusCode => "PMIX_STATUS", |v| { Value::Status(x) => StatusCode(*x) };
    Scope => "PMIX_SCOPE", |v| { Value::Scope(x) => Scope::from(*x) };
    DataRange => "PMIX_DATA_RANGE", |v| { Value::DataRange(x) => DataRange::from(*x) };
    Persistence => "PMIX_PERSIST", |v| { Value::Persist(x) => Persistence::from(*x) };
    ProcState => "PMIX_PROC_STATE", |v| { Value::ProcState(x) => ProcState::from(*x) };
    JobState => "PMIX_JOB_STATE", |v| { Value::JobState(x) => JobState::from(*x) };
    LinkState => "PMIX_LINK_STATE", |v| { Value::LinkState(x) => LinkState::from(*x) };
    AllocDirective => "PMIX_ALLOC_DIRECTIVE",
        |v| { Value::AllocDirective(x) => AllocDirective::from(*x) };
    IofChannel => "PMIX_IOF_CHANNEL", |v| { Value::IofChannel(x) => IofChannel::from(*x) };
    DeviceType => "PMIX_DEVTYPE", |v| { Value::DevType(x) => DeviceType::from(*x) };
    String => "PMIX_STRING",
        |v| { Value::String(Some(s)) => s.to_string_lossy().into_owned() };
    PString => "PMIX_STRING", |v| { Value::String(Some(s)) => s.clone() };
    Nspace => "PMIX_PROC_NSPACE",
        |v| { Value::ProcNspace(n) => n.clone(), Value::String(Some(s)) => Nspace::from(&*s.to_string_lossy()) };
    Proc => "PMIX_PROC", |v| { Value::Proc(p) => (**p).clone() };
    Info => "PMIX_INFO", |v| { Value::Info(i) => (**i).clone() };
    Vec<Info> => "PMIX_INFO_ARRAY", |v| { Value::InfoArray(a) => a.to_vec() };
    // byte objects and data buffers carry raw bytes (the compressed kinds do not)
    Bytes => "PMIX_BYTE_OBJECT",
        |v| { Value::ByteObject(b) | Value::DataBuffer(b) | Value::Modex(b) => b.0.clone() };
    Vec<u8> => "PMIX_BYTE_OBJECT",
        |v| { Value::ByteObject(b) | Value::DataBuffer(b) | Value::Modex(b) => b.0.to_vec() };
}

/// A string value borrowed, when it is UTF-8.
impl<'a> TryFrom<&'a Value> for &'a str {
    type Error = TypeMismatch;
    fn try_from(v: &'a Value) -> Result<&'a str, TypeMismatch> {
        match v {
            Value::String(Some(s)) => s.as_str().ok_or(TypeMismatch::new("PMIX_STRING", v)),
            _ => Err(TypeMismatch::new("PMIX_STRING", v)),
        }
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<f32> for Value {
    fn from(x: f32) -> Value {
        Value::Float(F32(x))
    }
}

impl From<f64> for Value {
    fn from(x: f64) -> Value {
        Value::Double(F64(x))
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(Some(s.into()))
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(Some(s.as_str().into()))
    }
}

impl From<Proc> for Value {
    fn from(p: Proc) -> Value {
        Value::Proc(Box::new(p))
    }
}

impl From<Bytes> for Value {
    fn from(b: Bytes) -> Value {
        Value::ByteObject(b.into())
    }
}

impl From<Vec<u8>> for Value {
    fn from(b: Vec<u8>) -> Value {
        Value::ByteObject(Bytes::from(b).into())
    }
}

impl From<Timeval> for Value {
    fn from(t: Timeval) -> Value {
        Value::Timeval(t)
    }
}

/// `PMIX_STATUS`.
impl From<StatusCode> for Value {
    fn from(s: StatusCode) -> Value {
        Value::Status(s.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_codes_round_trip_and_refuse_plain_ints() {
        let s = StatusCode::from(crate::status::codes::PMIX_ERR_TIMEOUT);
        assert_eq!(StatusCode::try_from(Value::from(s)), Ok(s));
        assert_eq!(s.to_string(), "PMIX_ERR_TIMEOUT (-24)");
        let e = StatusCode::try_from(Value::Int32(-24)).unwrap_err();
        assert_eq!(e.to_string(), "expected PMIX_STATUS, got PMIX_INT32");
    }

    #[test]
    fn integers_convert_when_they_fit() {
        assert_eq!(u32::try_from(Value::Uint32(7)), Ok(7));
        assert_eq!(u32::try_from(Value::Int(3)), Ok(3)); // Slurm's appnum
        let e = u32::try_from(Value::Int(-1)).unwrap_err();
        assert!(e.out_of_range && e.actual == DataType::Int, "{e}");
        assert_eq!(
            e.to_string(),
            "expected PMIX_UINT32, got PMIX_INT out of range"
        );
        assert!(u16::try_from(Value::Uint32(70000)).is_err());
        assert_eq!(i64::try_from(Value::Size(5)), Ok(5));
        let e = u32::try_from(Value::String(Some("7".into()))).unwrap_err();
        assert_eq!((e.expected, e.actual), ("PMIX_UINT32", DataType::String));
    }

    #[test]
    fn every_type_reads_back_what_it_builds() {
        fn round<T>(x: T)
        where
            T: Clone + PartialEq + std::fmt::Debug + Into<Value> + TryFrom<Value>,
            <T as TryFrom<Value>>::Error: std::fmt::Debug,
        {
            let v: Value = x.clone().into();
            assert_eq!(T::try_from(v).unwrap(), x);
        }
        round(true);
        round(1.5f32);
        round(-2.25f64);
        round(String::from("héllo"));
        round(Proc::new("ns", 3));
        round(Rank::WILDCARD);
        round(Scope::GLOBAL);
        round(DataRange::SESSION);
        round(Persistence::PROC);
        round(ProcState::RUNNING);
        round(JobState::TERMINATED);
        round(LinkState::UP);
        round(AllocDirective::EXTEND);
        round(IofChannel::STDOUT);
        round(DeviceType::GPU);
        round(vec![1u8, 2, 3]);
        round(Bytes::from_static(b"ab"));
        round(Timeval { sec: 1, usec: 2 });
        round(u8::MAX);
        round(i16::MIN);
        assert_eq!(f64::try_from(Value::Float(F32(0.5))), Ok(0.5));
        let s = Value::from("x");
        assert_eq!(<&str>::try_from(&s), Ok("x"));
    }

    #[test]
    fn mismatches_name_both_types() {
        let e = Rank::try_from(Value::Bool(false)).unwrap_err();
        assert_eq!(e.to_string(), "expected PMIX_PROC_RANK, got PMIX_BOOL");
        let e = Proc::try_from(&Value::Uint32(1)).unwrap_err();
        assert_eq!(e.to_string(), "expected PMIX_PROC, got PMIX_UINT32");
        let e = <Vec<u8>>::try_from(Value::Undef).unwrap_err();
        assert_eq!(e.to_string(), "expected PMIX_BYTE_OBJECT, got PMIX_UNDEF");
    }
}
