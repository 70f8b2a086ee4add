//! bfrops dialects: which integer family each uses and which types it
//! registers. The differences between dialects are data here, not copies
//! of the codec.

use pmix_types::DataType;

/// A bfrops component ("dialect").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dialect {
    /// PMIx 1.2 peers.
    V12,
    /// PMIx 2.0 peers.
    V20,
    /// PMIx 2.1 peers.
    V21,
    /// PMIx 3.x peers.
    V3,
    /// PMIx 4.0/4.1 peers.
    V4,
    /// PMIx 4.2.x and 5.0.x (the default of libpmix 4.2.2).
    V41,
    /// PMIx 6.x "v51" (as in 6.1+: without the stats types).
    V51,
    /// PMIx 6.1.x "v61".
    V61,
    /// OpenPMIx master (v7 alpha): announced as "v61" on the wire, with
    /// REGEX2, ALLOC_INHERIT and the changed typeless DATA_ARRAY.
    V7,
}

/// How integers are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ints {
    /// flex128 varints, signed types zig-zag (v4 and later).
    Flex,
    /// Fixed-width big-endian; INT/UINT/SIZE/PID carry a type tag (v3 and
    /// earlier, and v4/v41 with `PMIX_MCA_psquash=native`).
    Fixed,
}

/// The buffer type: whether the top level of each pack unit is tagged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BufferType {
    /// `PMIX_BFROP_BUFFER_NON_DESC` (1), the default.
    NonDesc,
    /// `PMIX_BFROP_BUFFER_FULLY_DESC` (2).
    FullyDesc,
}

impl BufferType {
    /// The byte value used in handshakes and in PMIX_BUFFER items.
    pub fn code(self) -> u8 {
        match self {
            BufferType::NonDesc => 1,
            BufferType::FullyDesc => 2,
        }
    }
    /// The buffer type of a handshake or PMIX_BUFFER byte (1 or 2), None for any other.
    pub fn from_code(c: u8) -> Option<BufferType> {
        match c {
            1 => Some(BufferType::NonDesc),
            2 => Some(BufferType::FullyDesc),
            _ => None,
        }
    }
    /// From the value of `PMIX_BFROP_BUFFER_TYPE`: exactly
    /// "PMIX_BFROP_BUFFER_FULLY_DESC" selects FULLY_DESC, anything else NON_DESC.
    pub fn from_env_value(v: &str) -> BufferType {
        if v == "PMIX_BFROP_BUFFER_FULLY_DESC" {
            BufferType::FullyDesc
        } else {
            BufferType::NonDesc
        }
    }
}

/// A set of type codes 0-75.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TypeSet(u128);

impl TypeSet {
    const fn range(lo: u16, hi: u16) -> TypeSet {
        let mut s = 0u128;
        let mut c = lo;
        while c <= hi {
            s |= 1 << c;
            c += 1;
        }
        TypeSet(s)
    }
    const fn with(self, o: TypeSet) -> TypeSet {
        TypeSet(self.0 | o.0)
    }
    const fn without(self, o: TypeSet) -> TypeSet {
        TypeSet(self.0 & !o.0)
    }
    const fn one(c: u16) -> TypeSet {
        TypeSet(1 << c)
    }
    #[inline]
    fn has(self, c: u16) -> bool {
        c < 128 && self.0 & (1 << c) != 0
    }
}

// bfrops.md §1.2: the PMIX_REGISTER_TYPE calls of each component.
const BASE_1_28: TypeSet = TypeSet::range(1, 28);
const SET_V12: TypeSet = BASE_1_28
    .with(TypeSet::range(29, 41))
    .with(TypeSet::one(44));
const SET_V20: TypeSet = SET_V12.with(TypeSet::range(42, 43));
const SET_V21: TypeSet = SET_V20;
const SET_V3: TypeSet = SET_V21.with(TypeSet::range(45, 46));
const SET_V4: TypeSet = SET_V3
    .without(TypeSet::one(29))
    .without(TypeSet::one(44))
    .with(TypeSet::range(47, 59));
const SET_V41: TypeSet = SET_V4.with(TypeSet::range(60, 69));
const STATS: TypeSet = TypeSet::range(61, 64);
const SET_V51: TypeSet = SET_V41.without(STATS).with(TypeSet::range(70, 72));
const SET_V61: TypeSet = SET_V51.with(TypeSet::one(73));
const SET_V7: TypeSet = SET_V61.with(TypeSet::range(74, 75));
/// The set of each dialect, in the order of [`Dialect::ALL`].
const TYPE_SETS: [TypeSet; 9] = [
    SET_V12, SET_V20, SET_V21, SET_V3, SET_V4, SET_V41, SET_V51, SET_V61, SET_V7,
];

impl Dialect {
    /// Every dialect, oldest first.
    pub const ALL: &'static [Dialect] = &[
        Dialect::V12,
        Dialect::V20,
        Dialect::V21,
        Dialect::V3,
        Dialect::V4,
        Dialect::V41,
        Dialect::V51,
        Dialect::V61,
        Dialect::V7,
    ];

    /// Our name for the dialect (the bfrops component name, and "v7" for master).
    pub fn name(self) -> &'static str {
        match self {
            Dialect::V12 => "v12",
            Dialect::V20 => "v20",
            Dialect::V21 => "v21",
            Dialect::V3 => "v3",
            Dialect::V4 => "v4",
            Dialect::V41 => "v41",
            Dialect::V51 => "v51",
            Dialect::V61 => "v61",
            Dialect::V7 => "v7",
        }
    }

    /// The component name a peer announces in the handshake.
    pub fn module_name(self) -> &'static str {
        match self {
            Dialect::V7 => "v61",
            d => d.name(),
        }
    }

    /// The dialect of a name as [`name`](Self::name) gives it (`"v41"`), case and spaces ignored.
    pub fn parse(s: &str) -> Option<Dialect> {
        let s = s.trim().to_ascii_lowercase();
        Dialect::ALL.iter().copied().find(|d| d.name() == s)
    }

    #[inline]
    fn types(self) -> TypeSet {
        // one load (the order of `Dialect::ALL`, checked by a test)
        TYPE_SETS[self as usize]
    }

    /// Whether the dialect registers (can pack and unpack) this type.
    #[inline]
    pub fn registers(self, ty: DataType) -> bool {
        self.types().has(ty.code())
    }

    /// The integer family; `fixed_ints` is psquash "native", honoured only
    /// by v4/v41 (libpmix ≤ 5.0.x); v3 and older are always fixed.
    #[inline]
    pub fn ints(self, fixed_ints: bool) -> Ints {
        match self {
            Dialect::V12 | Dialect::V20 | Dialect::V21 | Dialect::V3 => Ints::Fixed,
            Dialect::V4 | Dialect::V41 if fixed_ints => Ints::Fixed,
            _ => Ints::Flex,
        }
    }

    /// `Ok` if the dialect registers `ty`; else the error kind libpmix's
    /// answer corresponds to, for a unit/array item or for a value member.
    #[inline]
    pub(crate) fn require(self, ty: DataType, in_value: bool) -> Result<(), crate::ErrorKind> {
        if self.registers(ty) {
            Ok(())
        } else {
            Err(self.not_registered(ty, in_value))
        }
    }

    #[cold]
    fn not_registered(self, ty: DataType, in_value: bool) -> crate::ErrorKind {
        if in_value {
            crate::ErrorKind::ValueTypeNotRegistered {
                ty,
                dialect: self.name(),
            }
        } else {
            crate::ErrorKind::NotRegistered {
                ty,
                dialect: self.name(),
            }
        }
    }

    /// Whether a `pmix_value_t` of this type can be packed in this dialect
    /// (v20's value packer knows fewer types than it registers).
    pub fn value_supports(self, ty: DataType) -> bool {
        (ty == DataType::Undef || self.registers(ty)) && self.value_packer_knows(ty)
    }

    /// The value payload types the legacy private value packers support
    /// (bfrops.md §8.2, §8.3); others fail with PMIX_ERROR. Modern dialects
    /// take every registered type. (Codes 1-18 — BOOL, BYTE, STRING, SIZE,
    /// PID, INT and the fixed-width integers, FLOAT, DOUBLE, TIMEVAL — every
    /// legacy value packer knows.)
    pub(crate) fn value_packer_knows(self, ty: DataType) -> bool {
        use DataType as T;
        let plain_scalar = (1..=18).contains(&ty.code());
        match self {
            Dialect::V12 => plain_scalar || matches!(ty, T::ByteObject | T::InfoArray),
            Dialect::V20 => {
                plain_scalar
                    || matches!(
                        ty,
                        T::Undef
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
                    )
            }
            _ => true,
        }
    }

    /// The legacy private pack drivers of v20 and v12.
    #[inline]
    pub fn is_legacy(self) -> bool {
        matches!(self, Dialect::V12 | Dialect::V20)
    }
}

impl std::fmt::Display for Dialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The OpenPMIx release family of the peer, where releases pack the same
/// dialect differently (spec-notes/pmix7.md). The dialect alone does not
/// say it: a 7.0 peer talking to a 4.2.2 server speaks v41, but 7.0's v41.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Release {
    /// OpenPMIx 6.0 and earlier (4.2.2, 5.0.x): a typeless DATA_ARRAY is
    /// `tag(UNDEF) SIZE(size)`.
    #[default]
    UpTo6,
    /// OpenPMIx 6.1.x: the bytes of [`UpTo6`](Release::UpTo6); its header
    /// numbers LOST_PRECISION and CHANGE_SIGN -400 and -401
    /// ([`pmix_types::status::Numbering`]). Only 6.1 speaks [`Dialect::V61`].
    V61,
    /// OpenPMIx 7.0 (master from 7.0.0a1): in every dialect from v21 on, a
    /// typeless DATA_ARRAY is `tag(UNDEF)` alone; v12 and v20 are unchanged.
    V7,
}

impl Release {
    /// The family a dialect alone implies: [`Dialect::V7`] is 7.0's,
    /// [`Dialect::V61`] 6.1's (7.0's v61 is our `V7`).
    pub const fn of_dialect(d: Dialect) -> Release {
        match d {
            Dialect::V7 => Release::V7,
            Dialect::V61 => Release::V61,
            _ => Release::UpTo6,
        }
    }

    /// The release family of a PMIx version string as a handshake carries
    /// it ("7.0.0a1" → V7, "6.1.0" → V61, "6.0.0" or "4.2.2rc2" → UpTo6);
    /// `None` if the string has no leading major number.
    pub fn from_version(v: &str) -> Option<Release> {
        let mut parts = v.trim().trim_start_matches(['v', 'V']).split('.');
        let num = |s: Option<&str>| -> Option<u32> {
            let digits: String = s?.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        };
        let major = num(parts.next())?;
        let minor = num(parts.next()).unwrap_or(0);
        Some(match (major, minor) {
            (m, _) if m >= 7 => Release::V7,
            (6, n) if n >= 1 => Release::V61,
            _ => Release::UpTo6,
        })
    }

    /// How this release numbers the status codes (`pmix_types::status::Numbering`).
    pub const fn status_numbering(self) -> pmix_types::status::Numbering {
        use pmix_types::status::Numbering;
        match self {
            Release::UpTo6 => Numbering::Before61,
            Release::V61 => Numbering::V61,
            Release::V7 => Numbering::V7,
        }
    }
}

/// Everything that decides the bytes: dialect, buffer type, integer family
/// and the peer's release family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Format {
    /// The bfrops component (`v12` … `v7`).
    pub dialect: Dialect,
    /// Non-described (bare values) or fully described (each unit tagged with its type).
    pub buffer_type: BufferType,
    /// psquash "native" (fixed-width integers inside v4/v41).
    pub fixed_ints: bool,
    /// The release family whose packer wrote the bytes or will read them
    /// ([`Dialect::V7`] is always 7.0's, whatever this says).
    pub release: Release,
}

impl Format {
    /// `dialect` and `buffer_type` with the dialect's own integer encoding.
    pub const fn new(dialect: Dialect, buffer_type: BufferType) -> Format {
        Format {
            dialect,
            buffer_type,
            fixed_ints: false,
            release: Release::of_dialect(dialect),
        }
    }

    /// This format as the given release packs it (`Format::new(Dialect::V41,
    /// ..).of_release(Release::V7)` is 7.0's v41).
    pub const fn of_release(self, release: Release) -> Format {
        Format { release, ..self }
    }

    /// The release family the bytes follow: [`release`](Self::release),
    /// or 7.0's for [`Dialect::V7`] whatever that says.
    #[inline]
    pub fn release_family(&self) -> Release {
        self.release.max(Release::of_dialect(self.dialect))
    }

    /// Whether a typeless DATA_ARRAY is written with its SIZE after the
    /// UNDEF tag (bfrops.md §9.3, spec-notes/pmix7.md): yes up to 6.1 and
    /// in 7.0's legacy v12/v20, no in [`Dialect::V7`] and 7.0's v21 … v61.
    #[inline]
    pub fn undef_array_has_size(&self) -> bool {
        self.dialect.undef_array_has_size()
            && (self.release_family() != Release::V7 || self.dialect.is_legacy())
    }
    /// libpmix 4.2.2's own default: v41, non-described.
    pub const V41: Format = Format::new(Dialect::V41, BufferType::NonDesc);

    /// The integer family this format packs counts and sizes in.
    #[inline]
    pub fn ints(&self) -> Ints {
        self.dialect.ints(self.fixed_ints)
    }
}

impl Default for Format {
    fn default() -> Format {
        Format::V41
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(d: Dialect) -> usize {
        DataType::ALL.iter().filter(|t| d.registers(**t)).count()
    }

    #[test]
    fn type_sets_are_in_dialect_order() {
        let named = [
            (Dialect::V12, SET_V12),
            (Dialect::V20, SET_V20),
            (Dialect::V21, SET_V21),
            (Dialect::V3, SET_V3),
            (Dialect::V4, SET_V4),
            (Dialect::V41, SET_V41),
            (Dialect::V51, SET_V51),
            (Dialect::V61, SET_V61),
            (Dialect::V7, SET_V7),
        ];
        assert_eq!(named.len(), Dialect::ALL.len());
        for (i, (d, set)) in named.into_iter().enumerate() {
            assert_eq!(Dialect::ALL[i], d);
            assert_eq!(d.types(), set, "{d}");
        }
    }

    #[test]
    fn registered_type_counts_match_bfrops_table() {
        // bfrops.md §1.2 "Registered-type counts".
        assert_eq!(count(Dialect::V12), 42);
        assert_eq!(count(Dialect::V20), 44);
        assert_eq!(count(Dialect::V21), 44);
        assert_eq!(count(Dialect::V3), 46);
        assert_eq!(count(Dialect::V4), 57);
        assert_eq!(count(Dialect::V41), 67);
        assert_eq!(count(Dialect::V51), 66);
        assert_eq!(count(Dialect::V61), 67);
        assert_eq!(count(Dialect::V7), 69);
        assert!(!Dialect::V41.registers(DataType::Undef));
        assert!(Dialect::V41.registers(DataType::Buffer));
        assert!(!Dialect::V41.registers(DataType::Modex));
        assert!(Dialect::V3.registers(DataType::InfoArray));
    }
}
