//! Per-dialect deviations from the modern layouts, as methods of
//! [`Dialect`] (this module depends on `dialect`, never the reverse).

use crate::dialect::Dialect;
use pmix_types::DataType;

/// How a dialect writes the type of a value inside INFO and PDATA.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InfoTypeField {
    /// A type tag, as everywhere else.
    Tag,
    /// v20: an INT (`tag(INT32)` + be32); libpmix reads 4 bytes from the
    /// 16-bit field, so only the low 16 bits mean anything.
    TaggedInt,
    /// v12: an INT holding the PMIx 1.x code of the type.
    TaggedIntV1,
}

impl Dialect {
    /// Whether a typeless DATA_ARRAY carries its size after the UNDEF tag.
    /// libpmix ≤ 6.0 writes `tag(0) SIZE(size)`; master writes `tag(0)` only
    /// (bfrops.md §9.3). (6.1.0 writes the size but does not read it.)
    #[inline]
    pub fn undef_array_has_size(self) -> bool {
        !matches!(self, Dialect::V7)
    }

    /// How the type of the value inside INFO and PDATA is written.
    pub fn info_type_field(self) -> InfoTypeField {
        match self {
            Dialect::V20 => InfoTypeField::TaggedInt,
            Dialect::V12 => InfoTypeField::TaggedIntV1,
            _ => InfoTypeField::Tag,
        }
    }

    /// How a top-level VALUE writes its type (v12 as for INFO, others a tag).
    pub fn value_type_field(self) -> InfoTypeField {
        match self {
            Dialect::V12 => InfoTypeField::TaggedIntV1,
            _ => InfoTypeField::Tag,
        }
    }

    /// Whether INFO carries its directives (v12 has none).
    pub fn info_has_flags(self) -> bool {
        self != Dialect::V12
    }

    /// Whether APP carries cwd (v12 has none).
    pub fn app_has_cwd(self) -> bool {
        self != Dialect::V12
    }

    /// v20 sends PMIX_COMMAND as a UINT32 (bfrops.md §8.2).
    pub fn command_is_u32(self) -> bool {
        self.is_legacy()
    }

    /// v12 packs PMIX_DATA_TYPE as a 4-byte int.
    pub fn type_code_is_u32(self) -> bool {
        self == Dialect::V12
    }

    /// The code v20's driver declares for a type (COMMAND travels as UINT32).
    pub fn driver_code(self, ty: DataType) -> u16 {
        use DataType as T;
        match (self, ty) {
            (_, T::Command) => T::Uint32.code(),
            (Dialect::V12, T::Scope | T::DataRange) => T::Uint.code(),
            (Dialect::V12, T::ProcRank | T::Persist) => T::Int.code(),
            (_, t) => t.code(),
        }
    }

    /// The code a type tag carries on the wire: v12 stores PMIx 1.x codes
    /// (renumbered on send only, as libpmix does; tags are compared in this form).
    pub fn wire_tag(self, code: u16) -> u16 {
        if self == Dialect::V12 {
            v2_to_v1(code)
        } else {
            code
        }
    }
}

/// PMIx 2+ type code → PMIx 1.x code (bfrops.md §8.3).
pub fn v2_to_v1(code: u16) -> u16 {
    match code {
        20 | 40 => 6,  // STATUS, PROC_RANK travel as INT
        39 | 44 => 22, // DATA_ARRAY (of INFO) and INFO_ARRAY as INFO_ARRAY
        23..=30 => code + 1,
        c => c,
    }
}

/// PMIx 1.x code → PMIx 2+ code.
pub fn v1_to_v2(code: u16) -> u16 {
    match code {
        20 => 0, // v1 HWLOC_TOPO
        22 => 44,
        23..=31 => code - 1,
        c => c,
    }
}

/// Whether the legacy tagging driver adds inner tags for this format.
#[inline]
pub fn driver_tags(f: &crate::Format) -> bool {
    f.dialect.is_legacy() && f.buffer_type == crate::BufferType::FullyDesc
}

/// The type v20's value packer hands its driver for a value member
/// (a COMPRESSED_STRING goes as a BYTE_OBJECT).
pub fn value_driver_type(ty: DataType) -> DataType {
    match ty {
        DataType::CompressedString => DataType::ByteObject,
        t => t,
    }
}
