//! Per-dialect deviations from the modern layouts.

use crate::dialect::Dialect;

/// Whether a typeless DATA_ARRAY carries its size after the UNDEF tag.
/// libpmix ≤ 6.0 writes `tag(0) SIZE(size)`; master writes `tag(0)` only
/// (bfrops.md §9.3). (6.1.0 writes the size but does not read it.)
pub fn undef_array_has_size(d: Dialect) -> bool {
    !matches!(d, Dialect::V7)
}

/// How a dialect writes the type of a value inside INFO and PDATA.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InfoTypeField {
    /// A type tag, as everywhere else.
    Tag,
    /// v20: an INT (`tag(INT32)` + be32); libpmix reads 4 bytes from the
    /// 16-bit field, so only the low 16 bits mean anything.
    TaggedInt,
}

pub fn info_type_field(d: Dialect) -> InfoTypeField {
    match d {
        Dialect::V20 => InfoTypeField::TaggedInt,
        _ => InfoTypeField::Tag,
    }
}

/// v20 sends PMIX_COMMAND as a UINT32 (bfrops.md §8.2).
pub fn command_is_u32(d: Dialect) -> bool {
    d == Dialect::V20
}

/// The value payload types v20's private value packer supports; others
/// fail with PMIX_ERROR (bfrops.md §8.2).
pub fn value_supported(d: Dialect, ty: pmix_types::DataType) -> bool {
    use pmix_types::DataType as T;
    match d {
        Dialect::V20 => matches!(
            ty,
            T::Undef
                | T::Bool
                | T::Byte
                | T::String
                | T::Size
                | T::Pid
                | T::Int
                | T::Int8
                | T::Int16
                | T::Int32
                | T::Int64
                | T::Uint
                | T::Uint8
                | T::Uint16
                | T::Uint32
                | T::Uint64
                | T::Float
                | T::Double
                | T::Timeval
                | T::Time
                | T::Status
                | T::Proc
                | T::ProcRank
                | T::ByteObject
                | T::CompressedString
                | T::Persist
                | T::Pointer
                | T::Scope
                | T::DataRange
                | T::ProcState
                | T::ProcInfo
                | T::DataArray
                | T::Query
        ),
        _ => true,
    }
}

/// The code v20's driver declares for a type (COMMAND travels as UINT32).
pub fn driver_code(ty: pmix_types::DataType) -> u16 {
    match ty {
        pmix_types::DataType::Command => pmix_types::DataType::Uint32.code(),
        t => t.code(),
    }
}

/// Whether v20's tagging driver adds inner tags for this format.
pub fn driver_tags(f: &crate::Format) -> bool {
    f.dialect == Dialect::V20 && f.buffer_type == crate::BufferType::FullyDesc
}

/// The type v20's value packer hands its driver for a value member
/// (a COMPRESSED_STRING goes as a BYTE_OBJECT).
pub fn value_driver_type(ty: pmix_types::DataType) -> pmix_types::DataType {
    match ty {
        pmix_types::DataType::CompressedString => pmix_types::DataType::ByteObject,
        t => t,
    }
}
