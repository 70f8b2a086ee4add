//! One error type for every codec failure. It says what went wrong, at
//! which byte offset of the input, in which type, and along which field
//! path ("INFO.value.DATA_ARRAY\[2\].key").

use pmix_types::status::codes;
use pmix_types::DataType;
use std::fmt;

/// What went wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input ends before the item does.
    ReadPastEnd {
        /// Bytes the item needs.
        needed: u64,
        /// Bytes left in the input.
        remaining: u64,
    },
    /// An integer does not fit the type it is read as (flex value wider
    /// than the type, a count or length out of range).
    ValueOutOfRange {
        /// What the integer is (`"count"`, `"string length"` …).
        what: &'static str,
        /// The value read.
        value: i128,
    },
    /// A count claims more elements than the remaining bytes can hold.
    CountTooLarge {
        /// The count read.
        count: u64,
        /// Bytes left in the input.
        remaining: u64,
    },
    /// A string is not a valid C string (no terminating NUL, interior NUL,
    /// over its length limit).
    BadString(&'static str),
    /// A NULL string where the type requires one.
    NullNotAllowed,
    /// A type code that is not a PMIx data type.
    UnknownType(u16),
    /// The dialect does not register this type.
    NotRegistered {
        /// The type.
        ty: DataType,
        /// The dialect's name (`"v12"` …).
        dialect: &'static str,
    },
    /// A pmix_value_t holds a type the dialect does not register (libpmix
    /// answers PMIX_ERROR here, not UNKNOWN_DATA_TYPE).
    ValueTypeNotRegistered {
        /// The type the value holds.
        ty: DataType,
        /// The dialect's name.
        dialect: &'static str,
    },
    /// A described buffer's type tag differs from the requested type.
    TypeMismatch {
        /// The type asked for.
        expected: DataType,
        /// The type code in the buffer.
        found: u16,
    },
    /// A described buffer's count is not tagged INT32.
    BadCountTag(u16),
    /// Nested arrays/values deeper than the cap.
    TooDeep {
        /// The nesting cap.
        max: u32,
    },
    /// A value that cannot be represented (a VALUE holding an INFO, an
    /// array element of the wrong type, a negative count, ...).
    Invalid(String),
    /// More values in the unit than the caller asked for (the standard's
    /// partial unpack; the rest stay readable).
    InadequateSpace {
        /// How many values the caller asked for.
        requested: u64,
        /// How many the unit holds.
        present: u64,
    },
    /// The operation exists in libpmix but is not supported by this dialect.
    NotSupported(&'static str),
    /// Bytes left over after a message or a length-prefixed blob was read
    /// to its last field.
    TrailingBytes {
        /// How many bytes were left unread.
        left: u64,
    },
}

/// A codec error with its location. Boxed, so that `Result<Value, Error>`
/// stays as small as a `Value` on the hot path; its fields are reached
/// through `Deref` (`err.kind`, `err.offset`, ...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error(Box<ErrorData>);

/// What an [`Error`] holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorData {
    /// What went wrong.
    pub kind: ErrorKind,
    /// Byte offset in the input (unpack) or output (pack) where it happened.
    pub offset: usize,
    /// The innermost type being processed, if known.
    pub ty: Option<DataType>,
    /// The field path from the outermost item, e.g. `INFO.value.PROC.nspace`.
    pub path: Vec<String>,
}

impl std::ops::Deref for Error {
    type Target = ErrorData;
    fn deref(&self) -> &ErrorData {
        &self.0
    }
}

impl std::ops::DerefMut for Error {
    fn deref_mut(&mut self) -> &mut ErrorData {
        &mut self.0
    }
}

impl Error {
    /// An error of `kind` at byte `offset`, with no type or path yet (the callers up the stack add them).
    #[cold]
    pub fn new(kind: ErrorKind, offset: usize) -> Error {
        Error(Box::new(ErrorData {
            kind,
            offset,
            ty: None,
            path: Vec::new(),
        }))
    }

    /// The PMIx status code libpmix uses for this failure.
    pub fn status(&self) -> i32 {
        use ErrorKind::*;
        match &self.kind {
            ReadPastEnd { .. } | CountTooLarge { .. } => {
                codes::PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER
            }
            ValueOutOfRange { .. } | BadCountTag(_) | TooDeep { .. } => {
                codes::PMIX_ERR_UNPACK_FAILURE
            }
            BadString(_) | NullNotAllowed => codes::PMIX_ERROR,
            // libpmix's value packer hands "pointer" members to the type's
            // packer (UNKNOWN_DATA_TYPE) and fails in-place members itself
            // v20/v12's private value packers fail every unsupported type alike
            ValueTypeNotRegistered {
                dialect: "v20" | "v12",
                ..
            } => codes::PMIX_ERROR,
            ValueTypeNotRegistered { ty, .. } if value_member_is_pointer(*ty) => {
                codes::PMIX_ERR_UNKNOWN_DATA_TYPE
            }
            ValueTypeNotRegistered { .. } => codes::PMIX_ERROR,
            // the legacy v20/v12 drivers answer PACK_FAILURE for an unknown type
            NotRegistered {
                dialect: "v20" | "v12",
                ..
            } => codes::PMIX_ERR_PACK_FAILURE,
            UnknownType(_) | NotRegistered { .. } => codes::PMIX_ERR_UNKNOWN_DATA_TYPE,
            TypeMismatch { .. } => codes::PMIX_ERR_PACK_MISMATCH,
            Invalid(_) => codes::PMIX_ERR_BAD_PARAM,
            InadequateSpace { .. } => codes::PMIX_ERR_UNPACK_INADEQUATE_SPACE,
            NotSupported(_) => codes::PMIX_ERR_NOT_SUPPORTED,
            TrailingBytes { .. } => codes::PMIX_ERR_BAD_PARAM,
        }
    }

    /// Record the type being processed (innermost wins).
    pub(crate) fn in_type(mut self, ty: DataType) -> Error {
        if self.ty.is_none() {
            self.ty = Some(ty);
        }
        self
    }

    /// Prepend a field name to the path (called while unwinding outwards).
    pub(crate) fn in_field(mut self, field: impl Into<String>) -> Error {
        self.path.insert(0, field.into());
        self
    }
}

/// Whether `pmix_value_t` holds a type through a pointer (bfrops.md §4.6, §9.1).
pub fn value_member_is_pointer(ty: DataType) -> bool {
    use DataType::*;
    matches!(
        ty,
        Proc | ProcNspace
            | ProcInfo
            | DataArray
            | Coord
            | Topo
            | ProcCpuset
            | Geometry
            | DeviceDist
            | Endpoint
            | RegAttr
            | ProcStats
            | DiskStats
            | NetStats
            | NodeStats
            | Device
            | ResourceUnit
            | NodePid
            | Regex2
    )
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ErrorKind::*;
        match self {
            ReadPastEnd { needed, remaining } => {
                write!(
                    f,
                    "read past end of buffer: need {needed} bytes, {remaining} remain"
                )
            }
            ValueOutOfRange { what, value } => write!(f, "{what} out of range: {value}"),
            CountTooLarge { count, remaining } => {
                write!(f, "count {count} exceeds the {remaining} bytes remaining")
            }
            BadString(why) => write!(f, "bad string: {why}"),
            NullNotAllowed => write!(f, "NULL string where one is required"),
            UnknownType(c) => write!(f, "unknown data type code {c}"),
            ValueTypeNotRegistered { ty, dialect } => {
                write!(
                    f,
                    "a value of type {ty}, which dialect {dialect} does not register"
                )
            }
            NotRegistered { ty, dialect } => {
                write!(f, "{ty} is not registered in dialect {dialect}")
            }
            TypeMismatch { expected, found } => write!(
                f,
                "type mismatch: expected {expected}, buffer says {}",
                pmix_types::data_type_string(*found)
            ),
            BadCountTag(c) => write!(f, "described buffer: count tagged {c}, not PMIX_INT32"),
            TooDeep { max } => write!(f, "nesting deeper than {max}"),
            Invalid(s) => write!(f, "invalid value: {s}"),
            InadequateSpace { requested, present } => {
                write!(f, "unit holds {present} values, only {requested} requested")
            }
            NotSupported(s) => write!(f, "not supported: {s}"),
            TrailingBytes { left } => write!(f, "{left} bytes left over after the last field"),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (status {}) at offset {}",
            self.kind,
            self.status(),
            self.offset
        )?;
        if let Some(t) = self.ty {
            write!(f, " in {t}")?;
        }
        if !self.path.is_empty() {
            write!(f, ", field {}", self.path.join("."))?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

/// The codec's result: [`Error`] unless said otherwise.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Attach a field name to the error of a fallible step.
pub(crate) trait Field<T> {
    fn field(self, name: &str) -> Result<T>;
}

impl<T> Field<T> for Result<T> {
    #[inline]
    fn field(self, name: &str) -> Result<T> {
        self.map_err(|e| e.in_field(name))
    }
}
