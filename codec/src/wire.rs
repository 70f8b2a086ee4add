//! Wire primitives: the integer families (flex128 and fixed big-endian),
//! type tags, the INT/SIZE/PID "system type" tags, and C strings.
//!
//! `Enc` appends to a `Vec<u8>`; `Dec` reads a bounded window of a
//! `Bytes` without copying (byte objects are handed out as slices of it).
//! Every read checks the bytes remaining first; nothing allocates from a
//! count before that check.

use crate::dialect::{Dialect, Format, Ints, Release};
use crate::error::{Error, ErrorKind, Result};
use bytes::Bytes;
use pmix_types::{DataType, PString};

/// Nesting cap for DATA_ARRAY / VALUE recursion (master's default).
pub const MAX_DEPTH: u32 = 100;

/// Most pointers accepted in one unit: POINTER items occupy no bytes of
/// their own (one sentinel byte per unit), so their count cannot be
/// checked against the input.
pub const MAX_POINTERS: usize = 1024;

/// Longest flex128 encoding: 8 groups of 7 bits and a raw 9th byte.
pub const FLEX_MAX: usize = 9;

/// Bytes of hwloc 2.x support structures that follow a topology's XML
/// (discovery 6 + cpubind 11 + membind 15 on Debian's hwloc 2.9).
pub const HWLOC_SUPPORT_BYTES: usize = 32;

/// The low 56 bits of `u` as eight 7-bit groups, group g in bits 8g..8g+7
/// (the byte layout of a flex integer before continuation bits), in three
/// halving steps instead of a loop over the groups.
#[inline]
fn spread7(u: u64) -> u64 {
    let x = u & 0x00ff_ffff_ffff_ffff;
    // two 28-bit halves into the two 32-bit lanes
    let x = (x & 0x0fff_ffff) | ((x & 0x00ff_ffff_f000_0000) << 4);
    // each 28-bit half as two 14-bit quarters in 16-bit lanes
    let x = (x & 0x0000_3fff_0000_3fff) | ((x & 0x0fff_c000_0fff_c000) << 2);
    // each 14-bit quarter as two 7-bit groups in bytes
    (x & 0x007f_007f_007f_007f) | ((x & 0x3f80_3f80_3f80_3f80) << 1)
}

/// The inverse of [`spread7`]: eight 7-bit groups in bytes (bit 7 of
/// each byte ignored) back to 56 bits.
#[inline]
fn gather7(w: u64) -> u64 {
    let x = w & 0x7f7f_7f7f_7f7f_7f7f;
    let x = (x & 0x007f_007f_007f_007f) | ((x & 0x7f00_7f00_7f00_7f00) >> 1);
    let x = (x & 0x0000_3fff_0000_3fff) | ((x & 0x3fff_0000_3fff_0000) >> 2);
    (x & 0x0fff_ffff) | ((x & 0x0fff_ffff_0000_0000) >> 4)
}

/// Decodes one flex128 integer from a window of at least 9 bytes without
/// a branch per byte: the value and the bytes it took.
#[inline]
pub fn flex_word(c: &[u8; FLEX_MAX]) -> (u64, usize) {
    let mut w8 = [0u8; 8];
    w8.copy_from_slice(&c[..8]);
    let w = u64::from_le_bytes(w8);
    // the first byte without a continuation bit ends the integer
    let stops = !w & 0x8080_8080_8080_8080;
    if stops == 0 {
        // 8 groups and a raw 9th byte
        return (gather7(w) | (c[8] as u64) << 56, FLEX_MAX);
    }
    let n = stops.trailing_zeros() as usize / 8 + 1;
    let keep = if n == 8 {
        u64::MAX
    } else {
        (1u64 << (8 * n)) - 1
    };
    (gather7(w & keep), n)
}

/// The bytes the flex128 integer at the start of a window of at least 9
/// bytes takes (what [`flex_word`] returns second, without the value).
#[inline]
fn flex_word_len(c: &[u8; FLEX_MAX]) -> usize {
    let mut w8 = [0u8; 8];
    w8.copy_from_slice(&c[..8]);
    let stops = !u64::from_le_bytes(w8) & 0x8080_8080_8080_8080;
    if stops == 0 {
        FLEX_MAX
    } else {
        stops.trailing_zeros() as usize / 8 + 1
    }
}

/// Writes one flex128 encoding of `u` (bfrops.md §3.2) at the start of
/// `dst`; returns its length. The 7-bit groups are spread into one 64-bit
/// word and written with one fixed-size copy (the bytes of `dst` past the
/// length are scratch).
#[inline]
pub fn flex_put(dst: &mut [u8; FLEX_MAX], u: u64) -> usize {
    if u < 0x80 {
        dst[0] = u as u8;
        return 1;
    }
    let bits = 64 - u.leading_zeros() as usize;
    let n = if bits > 56 {
        FLEX_MAX
    } else {
        bits.div_ceil(7)
    };
    // continuation bit on every byte but the last of the first eight
    let cont = if n == FLEX_MAX {
        0x8080_8080_8080_8080
    } else {
        0x8080_8080_8080_8080 & ((1u64 << (8 * (n - 1))) - 1)
    };
    let w = spread7(u) | cont;
    let (word, last) = dst.split_at_mut(8);
    word.copy_from_slice(&w.to_le_bytes());
    last[0] = (u >> 56) as u8;
    n
}

/// Appends one flex128 encoding of `u`.
#[inline]
pub fn flex_encode(out: &mut Vec<u8>, u: u64) {
    if u < 0x80 {
        out.push(u as u8);
        return;
    }
    let mut tmp = [0u8; FLEX_MAX];
    let n = flex_put(&mut tmp, u);
    // all nine bytes (a copy of fixed size, without a call to memcpy),
    // then cut to the encoding's length
    let at = out.len();
    out.extend_from_slice(&tmp);
    out.truncate(at + n);
}

/// Appends the flex128 encodings of the `n` integers `items` yields (no
/// more are taken), into room sized once for the longest encodings and cut
/// to length after.
#[inline]
pub fn flex_encode_all(out: &mut Vec<u8>, n: usize, items: impl Iterator<Item = u64>) {
    if n <= 4 {
        // a few (a unit of one value): each on its own, no zeroed room
        for u in items.take(n) {
            flex_encode(out, u);
        }
        return;
    }
    flex_encode_run(out, n, items)
}

/// [`flex_encode_all`] of more than a few: its own loop (inlined into
/// the branch for a few, it took 4 more instructions per item).
#[inline(never)]
fn flex_encode_run(out: &mut Vec<u8>, n: usize, items: impl Iterator<Item = u64>) {
    let start = out.len();
    out.resize(start + n * FLEX_MAX, 0);
    let mut pos = start;
    for u in items.take(n) {
        match out
            .get_mut(pos..)
            .and_then(|r| r.first_chunk_mut::<FLEX_MAX>())
        {
            Some(dst) => pos += flex_put(dst, u),
            None => break, // cannot happen: FLEX_MAX bytes per item were added
        }
    }
    out.truncate(pos);
}

/// ZigZag-map a signed integer to unsigned (0, -1, 1, -2 … → 0, 1, 2, 3 …), as psquash's flex encoding does before packing signed values.
#[inline]
pub fn zigzag(s: i64) -> u64 {
    ((s << 1) ^ (s >> 63)) as u64
}

/// The inverse of [`zigzag`].
#[inline]
pub fn unzigzag(u: u64) -> i64 {
    ((u >> 1) as i64) ^ -((u & 1) as i64)
}

/// The writer side.
pub struct Enc<'a> {
    /// The bytes written so far; writes append.
    pub out: &'a mut Vec<u8>,
    /// The dialect being written.
    pub dialect: Dialect,
    /// The integer encoding (flex or fixed width).
    pub ints: Ints,
    /// The current nesting depth of values and arrays (capped, see [`enter`](Self::enter)).
    pub depth: u32,
    /// v20 FULLY_DESC: its private driver tags inner items (see `legacy`).
    pub driver_tags: bool,
    /// A typeless DATA_ARRAY carries its SIZE ([`Format::undef_array_has_size`]).
    pub undef_size: bool,
    /// The release family being written for ([`Format::release`]).
    pub release: Release,
}

impl<'a> Enc<'a> {
    /// A writer appending to `out` in `dialect` with integers as `ints`.
    #[inline]
    pub fn new(out: &'a mut Vec<u8>, dialect: Dialect, ints: Ints) -> Enc<'a> {
        Enc {
            out,
            dialect,
            ints,
            depth: 0,
            driver_tags: false,
            undef_size: dialect.undef_array_has_size(),
            release: Release::of_dialect(dialect),
        }
    }

    /// A writer appending to `out` in everything `fmt` decides.
    #[inline]
    pub fn for_format(out: &'a mut Vec<u8>, fmt: &Format) -> Enc<'a> {
        let mut e = Enc::new(out, fmt.dialect, fmt.ints());
        e.driver_tags = crate::legacy::driver_tags(fmt);
        e.undef_size = fmt.undef_array_has_size();
        e.release = fmt.release_family();
        e
    }

    /// An error of `kind` at the current output offset.
    pub fn err(&self, kind: ErrorKind) -> Error {
        Error::new(kind, self.out.len())
    }

    /// One byte as is.
    #[inline]
    pub fn u8(&mut self, v: u8) {
        self.out.push(v);
    }
    /// Bytes as is (no count, no terminator).
    #[inline]
    pub fn raw(&mut self, b: &[u8]) {
        self.out.extend_from_slice(b);
    }

    #[inline]
    fn unsigned(&mut self, v: u64, width: usize) {
        match self.ints {
            Ints::Flex => flex_encode(self.out, v),
            Ints::Fixed => self.out.extend_from_slice(&v.to_be_bytes()[8 - width..]),
        }
    }
    #[inline]
    fn signed(&mut self, v: i64, width: usize) {
        match self.ints {
            Ints::Flex => flex_encode(self.out, zigzag(v)),
            Ints::Fixed => self.out.extend_from_slice(&v.to_be_bytes()[8 - width..]),
        }
    }
    /// An INT16 in the integer encoding.
    #[inline]
    pub fn i16(&mut self, v: i16) {
        self.signed(v as i64, 2)
    }
    /// A UINT16 in the integer encoding.
    #[inline]
    pub fn u16(&mut self, v: u16) {
        self.unsigned(v as u64, 2)
    }
    /// An INT32 in the integer encoding.
    #[inline]
    pub fn i32(&mut self, v: i32) {
        self.signed(v as i64, 4)
    }
    /// A UINT32 in the integer encoding.
    #[inline]
    pub fn u32(&mut self, v: u32) {
        self.unsigned(v as u64, 4)
    }
    /// An INT64 in the integer encoding.
    #[inline]
    pub fn i64(&mut self, v: i64) {
        self.signed(v, 8)
    }
    /// A UINT64 in the integer encoding.
    #[inline]
    pub fn u64(&mut self, v: u64) {
        self.unsigned(v, 8)
    }

    /// A type tag: the code packed as UINT16 (v12 differs, see `legacy`).
    /// Every code below 128 in flex is one byte, written inline (a tag
    /// precedes every value of an INFO); the rest out of line.
    #[inline(always)]
    pub fn tag(&mut self, code: u16) {
        if code < 0x80 && self.ints == Ints::Flex && self.dialect != Dialect::V12 {
            self.out.push(code as u8);
        } else {
            self.tag_long(code)
        }
    }
    #[inline(never)]
    fn tag_long(&mut self, code: u16) {
        if self.dialect == Dialect::V12 {
            // v12 stores type codes as 4-byte ints, in PMIx 1.x numbering
            self.u32(crate::legacy::v2_to_v1(code) as u32)
        } else {
            self.u16(code)
        }
    }

    /// A "system type" tag (v20 FULLY_DESC writes it twice: once itself,
    /// once through its tagging driver).
    pub fn sys_tag(&mut self, t: DataType) {
        self.tag(t.code());
        if self.driver_tags {
            self.tag(t.code());
        }
    }
    /// The tag v20's driver writes before an inner item in FULLY_DESC mode
    /// (COMMAND is declared as UINT32 there); nothing otherwise.
    pub fn driver_tag(&mut self, ty: DataType) {
        if self.driver_tags {
            self.tag(self.dialect.driver_code(ty));
        }
    }

    /// PMIX_SIZE (and every SIZE count): flexU, or `tag(UINT64)` + be64.
    #[inline]
    pub fn size(&mut self, v: u64) {
        if self.ints == Ints::Fixed {
            self.sys_tag(DataType::Uint64);
        }
        self.u64(v)
    }
    /// PMIX_INT / PMIX_UINT (as INT32): flexS, or `tag(INT32)` + be32.
    pub fn int(&mut self, v: i32) {
        if self.ints == Ints::Fixed {
            self.sys_tag(DataType::Int32);
        }
        self.i32(v)
    }
    /// PMIX_PID: always `tag(UINT32)` + UINT32.
    pub fn pid(&mut self, v: u32) {
        self.sys_tag(DataType::Uint32);
        self.u32(v)
    }

    /// A count packed as INT32 (unit counts, string lengths, argv counts).
    #[inline]
    pub fn count32(&mut self, n: usize) -> Result<()> {
        match i32::try_from(n) {
            Ok(n) => {
                self.i32(n);
                Ok(())
            }
            Err(_) => Err(self.count_too_large(n)),
        }
    }

    #[cold]
    fn count_too_large(&self, n: usize) -> Error {
        self.err(ErrorKind::ValueOutOfRange {
            what: "INT32 count",
            value: n as i128,
        })
    }

    /// A C string: INT32 length including the NUL, the bytes, the NUL; NULL is length 0.
    #[inline(always)]
    pub fn str(&mut self, s: Option<&PString>) -> Result<()> {
        match s {
            None => self.i32(0),
            Some(s) => self.c_str(s.as_bytes())?,
        }
        Ok(())
    }

    /// The wire form of a non-NULL C string whose bytes hold no NUL
    /// (inlined: a key and often a value per INFO).
    #[inline(always)]
    pub(crate) fn c_str(&mut self, s: &[u8]) -> Result<()> {
        match self.ints {
            // the common short string: its zig-zag flex length is one byte
            Ints::Flex if s.len() < 63 => self.out.push(((s.len() + 1) * 2) as u8),
            _ => self.count32(s.len() + 1)?,
        }
        self.out.extend_from_slice(s);
        self.out.push(0);
        Ok(())
    }

    /// Enter one nesting level.
    pub fn enter(&mut self) -> Result<()> {
        if self.depth >= MAX_DEPTH {
            return Err(self.err(ErrorKind::TooDeep { max: MAX_DEPTH }));
        }
        self.depth += 1;
        Ok(())
    }
    /// Leave the nesting level [`enter`](Self::enter) entered.
    pub fn leave(&mut self) {
        self.depth -= 1;
    }
}

/// Bytes of the flex128 encoding of `u`.
#[inline]
pub fn flex_len(u: u64) -> usize {
    if u >> 56 != 0 {
        FLEX_MAX
    } else {
        ((64 - u.leading_zeros() as usize).max(1)).div_ceil(7)
    }
}

/// The lengths [`Enc`] would write, without writing: one method per `Enc`
/// primitive, with the same dialect, integer family and driver tags.
#[derive(Clone, Copy, Debug)]
pub struct Sizer {
    /// The dialect being measured, as [`Enc::dialect`].
    pub dialect: Dialect,
    /// The integer encoding (flex or fixed width), as [`Enc::ints`].
    pub ints: Ints,
    /// v20 FULLY_DESC's private driver tags on inner items, as [`Enc::driver_tags`].
    pub driver_tags: bool,
    /// A typeless DATA_ARRAY carries its SIZE, as [`Enc::undef_size`].
    pub undef_size: bool,
}

impl Sizer {
    /// A sizer measuring what [`Enc::for_format`] writes.
    pub fn for_format(fmt: &Format) -> Sizer {
        Sizer {
            dialect: fmt.dialect,
            ints: fmt.ints(),
            driver_tags: crate::legacy::driver_tags(fmt),
            undef_size: fmt.undef_array_has_size(),
        }
    }
}

impl Sizer {
    #[inline]
    fn unsigned(&self, v: u64, width: usize) -> usize {
        match self.ints {
            Ints::Flex => flex_len(v),
            Ints::Fixed => width,
        }
    }
    #[inline]
    fn signed(&self, v: i64, width: usize) -> usize {
        match self.ints {
            Ints::Flex => flex_len(zigzag(v)),
            Ints::Fixed => width,
        }
    }
    /// The length [`Enc::u8`] writes: one byte, always.
    pub fn u8(&self) -> usize {
        1
    }
    /// The length [`Enc::i16`] writes for `v` (an INT16 in the integer encoding).
    pub fn i16(&self, v: i16) -> usize {
        self.signed(v as i64, 2)
    }
    /// The length [`Enc::u16`] writes for `v` (a UINT16 in the integer encoding).
    pub fn u16(&self, v: u16) -> usize {
        self.unsigned(v as u64, 2)
    }
    /// The length [`Enc::i32`] writes for `v` (an INT32 in the integer encoding).
    pub fn i32(&self, v: i32) -> usize {
        self.signed(v as i64, 4)
    }
    /// The length [`Enc::u32`] writes for `v` (a UINT32 in the integer encoding).
    pub fn u32(&self, v: u32) -> usize {
        self.unsigned(v as u64, 4)
    }
    /// The length [`Enc::i64`] writes for `v` (an INT64 in the integer encoding).
    pub fn i64(&self, v: i64) -> usize {
        self.signed(v, 8)
    }
    /// The length [`Enc::u64`] writes for `v` (a UINT64 in the integer encoding).
    pub fn u64(&self, v: u64) -> usize {
        self.unsigned(v, 8)
    }
    /// The length [`Enc::tag`] writes.
    pub fn tag(&self, code: u16) -> usize {
        if self.dialect == Dialect::V12 {
            self.u32(crate::legacy::v2_to_v1(code) as u32)
        } else {
            self.u16(code)
        }
    }
    /// The length [`Enc::sys_tag`] writes.
    pub fn sys_tag(&self, t: DataType) -> usize {
        self.tag(t.code()) * if self.driver_tags { 2 } else { 1 }
    }
    /// The length [`Enc::driver_tag`] writes.
    pub fn driver_tag(&self, ty: DataType) -> usize {
        if self.driver_tags {
            self.tag(self.dialect.driver_code(ty))
        } else {
            0
        }
    }
    /// The length [`Enc::size`] writes.
    pub fn size(&self, v: u64) -> usize {
        let tag = match self.ints {
            Ints::Fixed => self.sys_tag(DataType::Uint64),
            Ints::Flex => 0,
        };
        tag + self.u64(v)
    }
    /// The length [`Enc::int`] writes.
    pub fn int(&self, v: i32) -> usize {
        let tag = match self.ints {
            Ints::Fixed => self.sys_tag(DataType::Int32),
            Ints::Flex => 0,
        };
        tag + self.i32(v)
    }
    /// The length [`Enc::pid`] writes.
    pub fn pid(&self, v: u32) -> usize {
        self.sys_tag(DataType::Uint32) + self.u32(v)
    }
    /// The length [`Enc::count32`] writes (of a count that fits).
    pub fn count32(&self, n: usize) -> usize {
        self.i32(n as i32)
    }
    /// The length [`Enc::str`] writes.
    pub fn str(&self, s: Option<&PString>) -> usize {
        match s {
            None => self.i32(0),
            Some(s) => self.c_str(s.as_bytes()),
        }
    }
    /// The length of the wire form of a non-NULL C string whose bytes hold
    /// no NUL: its count (the NUL included), its bytes and the NUL.
    pub fn c_str(&self, s: &[u8]) -> usize {
        self.count32(s.len() + 1) + s.len() + 1
    }
}

/// The "system type" tag that INT, UINT, SIZE and PID items carry: one
/// per pack call (so one for a whole unit or array), in front of the values.
pub fn system_tag(ty: DataType, ints: Ints, dialect: Dialect) -> Option<DataType> {
    if dialect == Dialect::V12 {
        // v12 widens these to tagged ints (bfrops.md §8.3)
        if let DataType::Status
        | DataType::Scope
        | DataType::DataRange
        | DataType::ProcRank
        | DataType::Persist = ty
        {
            return Some(DataType::Int32);
        }
    }
    match (ty, ints) {
        (DataType::Pid, _) => Some(DataType::Uint32),
        (DataType::Int | DataType::Uint, Ints::Fixed) => Some(DataType::Int32),
        (DataType::Size, Ints::Fixed) => Some(DataType::Uint64),
        _ => None,
    }
}

/// A SIZE from a wider or narrower announced integer.
pub fn to_size(v: i128, at: usize) -> Result<u64> {
    u64::try_from(v).map_err(|_| {
        Error::new(
            ErrorKind::ValueOutOfRange {
                what: "SIZE",
                value: v,
            },
            at,
        )
    })
}

/// An INT/UINT (32 bits; either signedness fits).
pub fn to_int(v: i128, at: usize) -> Result<i32> {
    i32::try_from(v)
        .or_else(|_| u32::try_from(v).map(|u| u as i32))
        .map_err(|_| {
            Error::new(
                ErrorKind::ValueOutOfRange {
                    what: "INT",
                    value: v,
                },
                at,
            )
        })
}

/// A PID (32 bits; either signedness fits).
pub fn to_pid(v: i128, at: usize) -> Result<u32> {
    u32::try_from(v)
        .or_else(|_| i32::try_from(v).map(|i| i as u32))
        .map_err(|_| {
            Error::new(
                ErrorKind::ValueOutOfRange {
                    what: "PID",
                    value: v,
                },
                at,
            )
        })
}

/// How many zero-byte items one decode of `len` input bytes may produce:
/// at least one full POINTER unit, otherwise one per input byte.
pub fn zero_item_budget(len: usize) -> usize {
    MAX_POINTERS.max(len)
}

/// The reader side: a window `[pos, end)` of a shared buffer.
#[derive(Clone)]
pub struct Dec<'a> {
    buf: &'a [u8],
    /// The shared buffer `buf` is, when there is one: byte objects are
    /// then handed out as slices of it instead of copies.
    src: Option<&'a Bytes>,
    pos: usize,
    end: usize,
    /// The dialect being read.
    pub dialect: Dialect,
    /// The integer encoding (flex or fixed width).
    pub ints: Ints,
    /// The current nesting depth of values and arrays (capped, see [`enter`](Self::enter)).
    pub depth: u32,
    /// v20 FULLY_DESC: inner items carry the driver's tags.
    pub driver_tags: bool,
    /// A typeless DATA_ARRAY carries its SIZE ([`Format::undef_array_has_size`]).
    pub undef_size: bool,
    /// The release family that wrote the bytes ([`Format::release`]).
    pub release: Release,
    /// Items that occupy no input bytes (POINTER; v12 PROC_STATE and
    /// INFO_DIRECTIVES) still left to this decode: their counts cannot be
    /// checked against the input, so one budget covers the whole call.
    pub zero_budget: usize,
}

impl<'a> Dec<'a> {
    /// A reader over `buf` from offset `pos`; byte objects it unpacks share `buf`'s allocation.
    pub fn new(buf: &'a Bytes, pos: usize, dialect: Dialect, ints: Ints) -> Dec<'a> {
        let mut d = Dec::from_slice(buf, pos, dialect, ints);
        d.src = Some(buf);
        d
    }

    /// A reader over borrowed bytes: byte objects taken as `Bytes` are
    /// copied (use [`Dec::take`] for a borrowed view).
    pub fn from_slice(buf: &'a [u8], pos: usize, dialect: Dialect, ints: Ints) -> Dec<'a> {
        Dec {
            buf,
            src: None,
            pos: pos.min(buf.len()),
            end: buf.len(),
            dialect,
            ints,
            depth: 0,
            driver_tags: false,
            undef_size: dialect.undef_array_has_size(),
            release: Release::of_dialect(dialect),
            zero_budget: zero_item_budget(buf.len()),
        }
    }

    /// Set what `fmt` decides beyond the dialect and integer family
    /// (legacy driver tags, the typeless DATA_ARRAY's size).
    pub fn apply(&mut self, fmt: &Format) {
        self.driver_tags = crate::legacy::driver_tags(fmt);
        self.undef_size = fmt.undef_array_has_size();
        self.release = fmt.release_family();
    }

    /// Take `n` zero-byte items from the budget, or refuse the count.
    pub fn spend_zero(&mut self, n: usize) -> Result<()> {
        if n > self.zero_budget {
            return Err(self.err(ErrorKind::CountTooLarge {
                count: n as u64,
                remaining: self.zero_budget as u64,
            }));
        }
        self.zero_budget -= n;
        Ok(())
    }

    /// A "system type" tag (read twice in v20 FULLY_DESC; both must agree).
    pub fn sys_tag(&mut self) -> Result<u16> {
        let at = self.pos;
        let t = self.tag()?;
        if self.driver_tags {
            let again = self.tag()?;
            if again != t {
                return Err(Error::new(
                    ErrorKind::Invalid(format!("system tags {t} and {again} disagree")),
                    at,
                ));
            }
        }
        Ok(t)
    }

    /// The v20 driver's tag before an inner item (FULLY_DESC only; the
    /// test inline, before every value of an INFO).
    #[inline(always)]
    pub fn driver_tag(&mut self, ty: DataType) -> Result<()> {
        if self.driver_tags {
            self.driver_tag_read(ty)
        } else {
            Ok(())
        }
    }
    #[inline(never)]
    fn driver_tag_read(&mut self, ty: DataType) -> Result<()> {
        let at = self.pos;
        let found = self.tag()?;
        let want = self.dialect.driver_code(ty);
        if found != self.dialect.wire_tag(want) {
            return Err(Error::new(
                ErrorKind::TypeMismatch {
                    expected: ty,
                    found,
                },
                at,
            ));
        }
        Ok(())
    }

    /// The offset of the next byte to read.
    pub fn pos(&self) -> usize {
        self.pos
    }
    /// The whole input this reader reads from.
    pub fn input(&self) -> &'a [u8] {
        self.buf
    }
    /// Go back to `pos`, a position this reader has been at.
    pub(crate) fn rewind_to(&mut self, pos: usize) {
        self.pos = pos.min(self.end);
    }
    /// Bytes left to read.
    pub fn remaining(&self) -> usize {
        self.end - self.pos
    }
    /// Whether every byte has been read.
    pub fn is_empty(&self) -> bool {
        self.pos == self.end
    }
    /// An error of `kind` at the current input offset.
    pub fn err(&self, kind: ErrorKind) -> Error {
        Error::new(kind, self.pos)
    }
    fn past_end(&self, needed: usize) -> Error {
        self.err(ErrorKind::ReadPastEnd {
            needed: needed as u64,
            remaining: self.remaining() as u64,
        })
    }

    /// Borrow the next `n` bytes.
    #[inline]
    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(self.past_end(n));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// The next `n` bytes as a zero-copy `Bytes`.
    pub fn take_bytes(&mut self, n: usize) -> Result<Bytes> {
        if n > self.remaining() {
            return Err(self.past_end(n));
        }
        let range = self.pos..self.pos + n;
        let b = match self.src {
            Some(src) => src.slice(range),
            None => Bytes::copy_from_slice(&self.buf[range]),
        };
        self.pos += n;
        Ok(b)
    }

    /// A reader bounded to the next `n` bytes (a length-prefixed blob),
    /// as rustls' `Reader::sub`: `n` is checked against the bytes remaining
    /// before anything else (a truncated blob is refused without
    /// allocating), this reader moves past the blob, and the sub-reader
    /// cannot read beyond it. Offsets stay those of the whole input; end
    /// with [`Dec::expect_end`] where the blob must be used up.
    pub fn sub(&mut self, n: usize) -> Result<Dec<'a>> {
        if n > self.remaining() {
            return Err(self.past_end(n));
        }
        let mut s = self.clone();
        s.end = self.pos + n;
        self.pos += n;
        Ok(s)
    }

    /// The unread rest of this window as a zero-copy `Bytes` (copied only
    /// for a reader over borrowed bytes); the window is then used up.
    pub fn rest_bytes(&mut self) -> Bytes {
        let n = self.remaining();
        // cannot fail: n is what remains
        self.take_bytes(n).unwrap_or_default()
    }

    /// The explicit "nothing left over" check that ends a bounded read:
    /// an error naming how many bytes remain, at the first of them.
    pub fn expect_end(&self) -> Result<()> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(self.err(ErrorKind::TrailingBytes {
                left: self.remaining() as u64,
            }))
        }
    }

    /// Look at the next `n` bytes (fewer at the end) without consuming.
    pub fn peek(&self, n: usize) -> &'a [u8] {
        &self.buf[self.pos..self.end.min(self.pos + n)]
    }

    /// One byte.
    #[inline]
    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    /// One flex128 integer, strictly: bounded by the input, at most 9
    /// bytes, and no wider than `width` bytes.
    #[inline(always)]
    fn flex(&mut self, width: usize, what: &'static str) -> Result<u64> {
        // one byte (lengths, tags, small values): no word assembly
        match self.buf.get(self.pos) {
            Some(&b) if b < 0x80 && self.pos < self.end => {
                self.pos += 1;
                Ok(b as u64)
            }
            _ => self.flex_long(width, what),
        }
    }

    #[inline]
    fn flex_long(&mut self, width: usize, what: &'static str) -> Result<u64> {
        let s = &self.buf[self.pos..self.end];
        let (u, n) = match s.first_chunk::<FLEX_MAX>() {
            // whole-word path, no branch per byte
            Some(c) => flex_word(c),
            None => self.flex_short(s)?,
        };
        if width < 8 && u >> (width * 8) != 0 {
            return Err(self.out_of_range(what, u));
        }
        self.pos += n;
        Ok(u)
    }

    /// The error of a flex integer wider than its type: out of line, so
    /// the hot path of [`Dec::flex_long`] saves no registers for it.
    #[cold]
    #[inline(never)]
    fn out_of_range(&self, what: &'static str, u: u64) -> Error {
        self.err(ErrorKind::ValueOutOfRange {
            what,
            value: u as i128,
        })
    }

    /// Moves past `n` integers of `width` bytes (2, 4 or 8) in the integer
    /// encoding, decoding none of them: the check of a run whose values
    /// are read later. `false` when one of them does not read (past the
    /// end, or a flex integer wider than `width`); the position is then
    /// unspecified, and the caller reads the run item by item from its
    /// start for the located error.
    pub fn skip_ints(&mut self, n: usize, width: usize) -> bool {
        match self.ints {
            Ints::Fixed => match n.checked_mul(width) {
                Some(len) if len <= self.remaining() => {
                    self.pos += len;
                    true
                }
                _ => false,
            },
            Ints::Flex => {
                for _ in 0..n {
                    let s = &self.buf[self.pos..self.end];
                    let (u, len) = match s.first_chunk::<FLEX_MAX>() {
                        // any flex integer fits 8 bytes: its length alone
                        Some(c) if width >= 8 => (0, flex_word_len(c)),
                        Some(c) => flex_word(c),
                        None => match self.flex_short(s) {
                            Ok(r) => r,
                            Err(_) => return false,
                        },
                    };
                    if width < 8 && u >> (width * 8) != 0 {
                        return false;
                    }
                    self.pos += len;
                }
                true
            }
        }
    }

    /// A flex integer within the last 8 bytes of the input, byte by byte.
    #[cold]
    #[inline(never)]
    fn flex_short(&self, s: &[u8]) -> Result<(u64, usize)> {
        let mut u: u64 = 0;
        for (i, &b) in s.iter().enumerate() {
            u |= ((b & 0x7f) as u64) << (7 * i);
            if b & 0x80 == 0 {
                return Ok((u, i + 1));
            }
        }
        // s holds at most 8 bytes, all with continuation bits
        Err(self.past_end(s.len() + 1))
    }
    fn fixed(&mut self, width: usize) -> Result<u64> {
        let b = self.take(width)?;
        Ok(b.iter().fold(0u64, |a, &x| a << 8 | x as u64))
    }

    /// A UINT16 in the integer encoding.
    #[inline(always)]
    pub fn u16(&mut self) -> Result<u16> {
        Ok(match self.ints {
            Ints::Flex => self.flex(2, "UINT16")?,
            Ints::Fixed => self.fixed(2)?,
        } as u16)
    }
    /// An INT16 in the integer encoding.
    #[inline]
    pub fn i16(&mut self) -> Result<i16> {
        Ok(match self.ints {
            Ints::Flex => unzigzag(self.flex(2, "INT16")?),
            Ints::Fixed => self.fixed(2)? as i64,
        } as i16)
    }
    /// A UINT32 in the integer encoding.
    #[inline(always)]
    pub fn u32(&mut self) -> Result<u32> {
        Ok(match self.ints {
            Ints::Flex => self.flex(4, "UINT32")?,
            Ints::Fixed => self.fixed(4)?,
        } as u32)
    }
    /// An INT32 in the integer encoding.
    #[inline(always)]
    pub fn i32(&mut self) -> Result<i32> {
        Ok(match self.ints {
            Ints::Flex => unzigzag(self.flex(4, "INT32")?),
            Ints::Fixed => self.fixed(4)? as i64,
        } as i32)
    }
    /// A UINT64 in the integer encoding.
    #[inline(always)]
    pub fn u64(&mut self) -> Result<u64> {
        match self.ints {
            Ints::Flex => self.flex(8, "UINT64"),
            Ints::Fixed => self.fixed(8),
        }
    }
    /// An INT64 in the integer encoding.
    #[inline]
    pub fn i64(&mut self) -> Result<i64> {
        Ok(match self.ints {
            Ints::Flex => unzigzag(self.flex(8, "INT64")?),
            Ints::Fixed => self.fixed(8)? as i64,
        })
    }

    /// A type tag (a UINT16 code; v12: a 4-byte int in PMIx 1.x numbering, mapped to today's codes).
    #[inline(always)]
    pub fn tag(&mut self) -> Result<u16> {
        if self.dialect == Dialect::V12 {
            let at = self.pos;
            let v = self.u32()?;
            return u16::try_from(v).map_err(|_| Error::new(ErrorKind::UnknownType(u16::MAX), at));
        }
        self.u16()
    }

    /// Read a "system type" tag and the value it announces, converting
    /// to 64 bits. A sender with other widths (a 32-bit size_t) is legal.
    fn tagged_integer(&mut self, what: &'static str) -> Result<i128> {
        let at = self.pos;
        let code = self.sys_tag()?;
        self.integer_as(code, what, at)
    }

    /// One integer of the type `code` announced by a system tag read at `at`.
    pub fn integer_as(&mut self, code: u16, what: &'static str, at: usize) -> Result<i128> {
        Ok(match DataType::from_code(code) {
            Some(DataType::Int8) => self.u8()? as i8 as i128,
            Some(DataType::Uint8) => self.u8()? as i128,
            Some(DataType::Int16) => self.i16()? as i128,
            Some(DataType::Uint16) => self.u16()? as i128,
            Some(DataType::Int32) => self.i32()? as i128,
            Some(DataType::Uint32) => self.u32()? as i128,
            Some(DataType::Int64) => self.i64()? as i128,
            Some(DataType::Uint64) => self.u64()? as i128,
            _ => {
                return Err(Error::new(
                    ErrorKind::Invalid(format!("{what} announced as type code {code}")),
                    at,
                ))
            }
        })
    }

    /// PMIX_SIZE (and SIZE counts).
    #[inline]
    pub fn size(&mut self) -> Result<u64> {
        match self.ints {
            Ints::Flex => self.u64(),
            Ints::Fixed => {
                let at = self.pos;
                let v = self.tagged_integer("SIZE")?;
                to_size(v, at)
            }
        }
    }

    /// PMIX_INT / PMIX_UINT (carried as INT32).
    pub fn int(&mut self) -> Result<i32> {
        match self.ints {
            Ints::Flex => self.i32(),
            Ints::Fixed => {
                let at = self.pos;
                let v = self.tagged_integer("INT")?;
                to_int(v, at)
            }
        }
    }

    /// PMIX_PID: a UINT32 behind its tag (any integer tag is converted).
    pub fn pid(&mut self) -> Result<u32> {
        let at = self.pos;
        let v = self.tagged_integer("PID")?;
        to_pid(v, at)
    }

    /// An INT32 count of items that take at least `min_item` bytes each:
    /// checked non-negative and against the bytes remaining.
    pub fn count32(&mut self, min_item: usize) -> Result<usize> {
        let at = self.pos;
        let n = self.i32()?;
        if n < 0 {
            return Err(Error::new(
                ErrorKind::ValueOutOfRange {
                    what: "count",
                    value: n as i128,
                },
                at,
            ));
        }
        self.check_count(n as u64, min_item, at)
    }

    /// A SIZE count, checked the same way.
    #[inline]
    pub fn count_size(&mut self, min_item: usize) -> Result<usize> {
        let at = self.pos;
        let n = self.size()?;
        self.check_count(n, min_item, at)
    }

    /// Check a count `n` read at `at` against the bytes left, each item taking at least `min_item` bytes
    /// (items taking none draw on a per-call budget): a count the input cannot hold is an error before anything is allocated.
    #[inline]
    pub fn check_count(&self, n: u64, min_item: usize, at: usize) -> Result<usize> {
        let rem = self.remaining() as u64;
        if min_item > 0 && n.saturating_mul(min_item as u64) > rem {
            return Err(Error::new(
                ErrorKind::CountTooLarge {
                    count: n,
                    remaining: rem,
                },
                at,
            ));
        }
        usize::try_from(n).map_err(|_| {
            Error::new(
                ErrorKind::CountTooLarge {
                    count: n,
                    remaining: rem,
                },
                at,
            )
        })
    }

    /// The text of a C string (its length read and its terminating NUL
    /// checked, interior NULs not yet) and the offset of its length.
    #[inline(always)]
    fn c_text(&mut self) -> Result<(Option<&'a [u8]>, usize)> {
        let at = self.pos;
        match self.short_text() {
            Some(text) => Ok((Some(text), at)),
            None => self.c_text_long(at),
        }
    }

    /// The common short string, read in place: a one-byte flex length
    /// (even: not negative; not 0: not NULL) and its body, NUL-terminated,
    /// in the input. `None` (nothing read) for anything else, and for
    /// every error, which [`c_text_long`](Self::c_text_long) then reports.
    #[inline(always)]
    fn short_text(&mut self) -> Option<&'a [u8]> {
        if self.ints != Ints::Flex {
            return None;
        }
        let (&b, tail) = self.buf.get(self.pos..self.end)?.split_first()?;
        if b & 0x81 != 0 || b == 0 {
            return None;
        }
        let n = (b >> 1) as usize;
        match tail.get(..n)?.split_last()? {
            (0, text) => {
                self.pos += 1 + n;
                Some(text)
            }
            _ => None,
        }
    }

    /// [`c_text`](Self::c_text) of any other string (at `at`, the
    /// position): a length of more than one byte, fixed-width integers,
    /// NULL, and the errors.
    #[inline(never)]
    fn c_text_long(&mut self, at: usize) -> Result<(Option<&'a [u8]>, usize)> {
        let len = self.i32()?;
        if len == 0 {
            return Ok((None, at));
        }
        if len < 0 {
            return Err(Error::new(
                ErrorKind::ValueOutOfRange {
                    what: "string length",
                    value: len as i128,
                },
                at,
            ));
        }
        let body = self.take(len as usize).map_err(|mut e| {
            e.offset = at;
            e
        })?;
        match body.split_last() {
            Some((0, text)) => Ok((Some(text), at)),
            _ => Err(Error::new(ErrorKind::BadString("no terminating NUL"), at)),
        }
    }

    /// A C string as a view of the input (without its NUL); `None` for
    /// NULL. One scan (`find_nul`) checks for interior NULs.
    #[inline(always)]
    pub fn str_ref(&mut self) -> Result<Option<&'a [u8]>> {
        match self.c_text()? {
            (Some(text), at) if pmix_types::find_nul(text).is_some() => Err(Error::new(
                ErrorKind::BadString("NUL inside the string"),
                at,
            )),
            (text, _) => Ok(text),
        }
    }

    /// A C string; `None` for NULL.
    #[inline(always)]
    pub fn str(&mut self) -> Result<Option<PString>> {
        match self.c_text()? {
            (None, _) => Ok(None),
            (Some(text), at) => PString::from_bytes(text)
                .map(Some)
                .map_err(|_| Error::new(ErrorKind::BadString("NUL inside the string"), at)),
        }
    }

    /// A C string that must not be NULL.
    pub fn str_required(&mut self) -> Result<PString> {
        let at = self.pos;
        self.str()?
            .ok_or_else(|| Error::new(ErrorKind::NullNotAllowed, at))
    }

    /// Enter one nesting level; an error past the depth cap (hostile nesting).
    pub fn enter(&mut self) -> Result<()> {
        if self.depth >= MAX_DEPTH {
            return Err(self.err(ErrorKind::TooDeep { max: MAX_DEPTH }));
        }
        self.depth += 1;
        Ok(())
    }
    /// Leave the nesting level [`enter`](Self::enter) entered.
    pub fn leave(&mut self) {
        self.depth -= 1;
    }
}

#[cfg(test)]
mod tests {
    /// `skip_ints` accepts a run exactly when reading it item by item
    /// does, and then ends where that read ends: on every prefix of runs
    /// of flex integers of every length, 9-byte ones included, and of
    /// values too wide for 2 and 4 bytes.
    #[test]
    fn skip_ints_accepts_what_reading_accepts() {
        use super::{flex_encode, Dec, Ints};
        use crate::dialect::Dialect;
        let mut bytes = Vec::new();
        for i in 0..64 {
            flex_encode(&mut bytes, 1u64 << i);
            flex_encode(&mut bytes, (1u64 << i) - 1);
        }
        flex_encode(&mut bytes, u64::MAX);
        for ints in [Ints::Flex, Ints::Fixed] {
            for cut in 0..=bytes.len() {
                for start in [0, 1, 5] {
                    for width in [2, 4, 8] {
                        for n in [1, 3, 200] {
                            let new = || Dec::from_slice(&bytes[..cut], start, Dialect::V41, ints);
                            let mut read = new();
                            let ok = (0..n).all(|_| match width {
                                2 => read.u16().is_ok(),
                                4 => read.u32().is_ok(),
                                _ => read.u64().is_ok(),
                            });
                            let mut skip = new();
                            assert_eq!(
                                skip.skip_ints(n, width),
                                ok,
                                "{ints:?} {cut} {start} {width} {n}"
                            );
                            if ok {
                                assert_eq!(skip.pos(), read.pos());
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn spread7_matches_the_group_loop() {
        let naive = |u: u64| (0..8).fold(0u64, |w, g| w | (((u >> (7 * g)) & 0x7f) << (8 * g)));
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for i in 0..64 {
            for u in [1u64 << i, (1u64 << i) - 1, u64::MAX >> i, x] {
                assert_eq!(super::spread7(u), naive(u), "{u:#x}");
            }
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
    }

    use super::*;

    fn flex(u: u64) -> Vec<u8> {
        let mut v = Vec::new();
        flex_encode(&mut v, u);
        v
    }

    #[test]
    fn flex_vectors_from_bfrops_3_2() {
        assert_eq!(flex(0), [0x00]);
        assert_eq!(flex(zigzag(-1)), [0x01]);
        assert_eq!(flex(zigzag(63)), [0x7e]);
        assert_eq!(flex(zigzag(-65)), [0x81, 0x01]);
        assert_eq!(flex(128), [0x80, 0x01]);
        assert_eq!(flex(16384), [0x80, 0x80, 0x01]);
        assert_eq!(flex(zigzag(300)), [0xd8, 0x04]);
        assert_eq!(flex(zigzag(-300)), [0xd7, 0x04]);
        assert_eq!(flex(65535), [0xff, 0xff, 0x03]);
        assert_eq!(
            flex((1 << 56) - 1),
            [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]
        );
        assert_eq!(
            flex(1 << 56),
            [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]
        );
        assert_eq!(flex(u64::MAX), [0xff; 9]);
        assert_eq!(flex(zigzag(i64::MIN)), [0xff; 9]);
    }

    /// A run of `n` integers (item by item for a few, into zeroed room
    /// for more) is the concatenation of their encodings, after bytes
    /// already in the vector.
    #[test]
    fn flex_encode_all_is_each_encoding_in_turn() {
        let values: Vec<u64> = (0..64)
            .flat_map(|i| [1u64 << i, (1u64 << i) - 1, 0x7f, 0x80])
            .collect();
        for n in 0..12 {
            for start in 0..values.len() - n {
                let items = &values[start..start + n];
                let mut want = vec![0xaa];
                for &u in items {
                    flex_encode(&mut want, u);
                }
                let mut got = vec![0xaa];
                // one more item offered than taken: exactly n are written
                flex_encode_all(&mut got, n, values[start..].iter().copied());
                assert_eq!(got, want, "{items:?}");
            }
        }
    }

    /// The word-at-a-time decoder against every width, with the value at
    /// the end of the input (short path) and followed by other bytes.
    #[test]
    fn flex_decode_reads_every_width_back() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for i in 0..64 {
            for u in [1u64 << i, (1u64 << i) - 1, u64::MAX >> i, x >> i] {
                let enc = flex(u);
                for tail in [&[][..], &[0x80; 12][..], &[0x01][..]] {
                    let mut b = enc.clone();
                    b.extend_from_slice(tail);
                    let buf = Bytes::from(b);
                    let mut d = Dec::new(&buf, 0, Dialect::V41, Ints::Flex);
                    assert_eq!(d.u64().unwrap(), u, "{u:#x} + {tail:?}");
                    assert_eq!(d.pos(), enc.len());
                }
            }
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
    }

    #[test]
    fn flex_decode_is_strict() {
        let dec = |b: &[u8], f: fn(&mut Dec) -> Result<u64>| {
            let buf = Bytes::copy_from_slice(b);
            let mut d = Dec::new(&buf, 0, Dialect::V41, Ints::Flex);
            f(&mut d)
        };
        assert_eq!(dec(&[0xff; 9], |d| d.u64()).unwrap(), u64::MAX);
        // truncated: 4.2.2 takes the last byte raw, we refuse
        assert!(matches!(
            dec(&[0xff], |d| d.u64()).unwrap_err().kind,
            ErrorKind::ReadPastEnd { .. }
        ));
        // UINT16 carrying 2^17 is refused, as in libpmix
        assert!(matches!(
            dec(&[0x80, 0x80, 0x08], |d| d.u16().map(u64::from))
                .unwrap_err()
                .kind,
            ErrorKind::ValueOutOfRange { .. }
        ));
        assert_eq!(
            dec(&[0xff, 0xff, 0x03], |d| d.u16().map(u64::from)).unwrap(),
            65535
        );
        assert_eq!(
            dec(&[0x80, 0x00], |d| d.u64()).unwrap(),
            0,
            "non-minimal accepted"
        );
    }
}
