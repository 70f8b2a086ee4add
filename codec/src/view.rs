//! Borrowed decoding: a [`Reader`] over received bytes hands out typed
//! vectors ([`Reader::prims`]), string views ([`Reader::strs`]) and
//! [`ValueRef`]s that point into the input instead of owning copies.
//!
//! Every item is fully checked when it is read (the same checks, limits,
//! depth cap and typed errors as the owned path, which [`decode`](crate::decode)
//! uses): a `ValueRef` that was handed out is valid. The value of an INFO
//! or a `pmix_value_t` is kept as read when it has a borrowed form (asking
//! for it decodes nothing again); the elements of a DATA_ARRAY are checked
//! at once and decoded again while iterating, so walking a unit allocates
//! nothing but the one vector of its items. Types without a borrowed form
//! are decoded owned ([`ValueRef::Other`]). A unit of INFO has its own
//! reader, [`Reader::infos`], which hands out [`InfoRef`]s directly.
//!
//! ```
//! use pmix_codec::{encode, Format, Reader, ValueRef};
//! use pmix_types::{DataType, Info, Value};
//!
//! let info = Value::Info(Box::new(Info::new("pmix.job.size", Value::Uint32(4))));
//! let bytes = encode(&Format::V41, DataType::Info, &[info.clone()])?;
//! let items = Reader::new(Format::V41, &bytes).values(DataType::Info)?;
//! let ValueRef::Info(i) = &items[0] else { panic!() };
//! assert_eq!(i.key, b"pmix.job.size");
//! assert_eq!(i.value()?, ValueRef::Uint32(4));
//! assert_eq!(items[0].to_value()?, info);
//! # Ok::<(), pmix_codec::Error>(())
//! ```

use crate::dialect::{Dialect, Format, Ints};
use crate::error::{Error, ErrorKind, Field, Result};
use crate::legacy::{self, InfoTypeField};
use crate::read_unit_header;
use crate::typed::Prim;
use crate::unpack::{self, DarrayHead};
use crate::wire::Dec;
use bytes::Bytes;
use pmix_types::{DataArray, DataType, Hex, Info, Key, Nspace, PString, Proc, StrError, Value};

/// `pmix_proc_t`, borrowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcRef<'a> {
    /// At most 255 bytes, no NUL.
    pub nspace: &'a [u8],
    /// The rank (or a special rank such as `PMIX_RANK_WILDCARD`).
    pub rank: u32,
}

/// `pmix_info_t`, borrowed; its value is decoded on demand.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InfoRef<'a> {
    /// At most 511 bytes, no NUL.
    pub key: &'a [u8],
    /// The info's `pmix_info_directives_t` bits.
    pub flags: u32,
    value: ValueAt<'a>,
}

impl<'a> InfoRef<'a> {
    /// The value (checked when the info was read).
    #[inline]
    pub fn value(&self) -> Result<ValueRef<'a>> {
        self.value.get()
    }
}

/// Where a checked nested part starts and the reader state to decode it
/// with again. The budget of zero-byte items is not kept: decoding a part
/// that passed once spends no more of a fresh budget than it did of what
/// was left of the first.
#[derive(Clone, Copy, Debug, PartialEq)]
struct At<'a> {
    buf: &'a [u8],
    pos: usize,
    depth: u32,
    dialect: Dialect,
    ints: Ints,
    driver_tags: bool,
    undef_size: bool,
    release: crate::Release,
}

impl<'a> At<'a> {
    fn of(d: &Dec<'a>) -> At<'a> {
        At {
            buf: d.input(),
            pos: d.pos(),
            depth: d.depth,
            dialect: d.dialect,
            ints: d.ints,
            driver_tags: d.driver_tags,
            undef_size: d.undef_size,
            release: d.release,
        }
    }
    fn dec(&self) -> Dec<'a> {
        let mut d = Dec::from_slice(self.buf, self.pos, self.dialect, self.ints);
        d.driver_tags = self.driver_tags;
        d.undef_size = self.undef_size;
        d.release = self.release;
        d.depth = self.depth;
        d
    }
}

/// [`ValueRef`], and the payload of a checked `pmix_value_t` as it was
/// read (`Payload`: the same variants for the types with a borrowed form
/// that has no parts to decode later; `Later`: where to decode it again,
/// for the others), from one list of variants.
macro_rules! borrowed_forms {
    ($($(#[$m:meta])* $variant:ident($t:ty)),*) => {
        /// One item, borrowed from the input where it has a borrowed form.
        #[derive(Clone, Debug, PartialEq)]
        pub enum ValueRef<'a> {
            /// PMIX_UNDEF: no value.
            Undef,
            $($(#[$m])* $variant($t),)*
            /// PMIX_INFO, borrowed; its value decoded on demand.
            Info(InfoRef<'a>),
            /// A `pmix_value_t` item (type VALUE).
            Value(ValueAt<'a>),
            /// A type without a borrowed form, decoded owned.
            Other(Box<Value>),
        }

        #[derive(Clone, Copy, Debug, PartialEq)]
        enum Payload<'a> {
            Undef,
            $($variant($t),)*
            Later(At<'a>),
        }

        impl<'a> Payload<'a> {
            /// Keep `v`, read from `at`.
            fn keep(v: ValueRef<'a>, at: At<'a>) -> Payload<'a> {
                match v {
                    ValueRef::Undef => Payload::Undef,
                    $(ValueRef::$variant(x) => Payload::$variant(x),)*
                    _ => Payload::Later(at),
                }
            }
            #[inline]
            fn get(self, ty: DataType) -> Result<ValueRef<'a>> {
                Ok(match self {
                    Payload::Undef => ValueRef::Undef,
                    $(Payload::$variant(x) => ValueRef::$variant(x),)*
                    Payload::Later(at) => item(&mut at.dec(), ty)?,
                })
            }
        }
    };
}

borrowed_forms!(
    /// PMIX_BOOL.
    Bool(bool),
    /// PMIX_BYTE.
    Byte(u8),
    /// PMIX_INT8.
    Int8(i8),
    /// PMIX_INT16.
    Int16(i16),
    /// PMIX_INT32.
    Int32(i32),
    /// PMIX_INT64.
    Int64(i64),
    /// PMIX_UINT8.
    Uint8(u8),
    /// PMIX_UINT16.
    Uint16(u16),
    /// PMIX_UINT32.
    Uint32(u32),
    /// PMIX_UINT64.
    Uint64(u64),
    /// The bytes of a C string (no NUL inside, not necessarily UTF-8);
    /// `None` for NULL.
    String(Option<&'a [u8]>),
    /// PMIX_BYTE_OBJECT: the bytes, borrowed.
    ByteObject(&'a [u8]),
    /// PMIX_PROC, borrowed.
    Proc(ProcRef<'a>),
    /// PMIX_DATA_ARRAY, its elements read on demand.
    DataArray(ArrayRef<'a>)
);

/// A `pmix_value_t` in the input, checked: its type and its payload.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ValueAt<'a> {
    ty: DataType,
    payload: Payload<'a>,
}

impl<'a> ValueAt<'a> {
    /// The type the value carries (UNDEF for an empty value).
    pub fn data_type(&self) -> DataType {
        self.ty
    }
    /// The value: no decoding for a type with a borrowed form.
    #[inline]
    pub fn get(&self) -> Result<ValueRef<'a>> {
        self.payload.get(self.ty)
    }
}

/// A DATA_ARRAY in the input, checked; its elements are decoded while
/// iterating.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ArrayRef<'a> {
    elem_type: DataType,
    size: u64,
    at: At<'a>,
}

impl<'a> ArrayRef<'a> {
    /// UNDEF for the typeless `{UNDEF, size, NULL}` array.
    pub fn elem_type(&self) -> DataType {
        self.elem_type
    }
    /// The number of elements the descriptor claims.
    pub fn size(&self) -> u64 {
        self.size
    }
    /// The elements (none for the typeless array).
    pub fn iter(&self) -> ArrayIter<'a> {
        let left = match self.elem_type {
            DataType::Undef => 0,
            _ => self.size as usize,
        };
        ArrayIter {
            d: self.at.dec(),
            ty: self.elem_type,
            left,
        }
    }
}

/// The elements of an [`ArrayRef`].
pub struct ArrayIter<'a> {
    d: Dec<'a>,
    ty: DataType,
    left: usize,
}

impl<'a> Iterator for ArrayIter<'a> {
    type Item = Result<ValueRef<'a>>;
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let r = item_fast(&mut self.d, self.ty);
        if r.is_err() {
            self.left = 0;
        }
        Some(r)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.left))
    }
}

impl ValueRef<'_> {
    /// The PMIx type of this item.
    pub fn data_type(&self) -> DataType {
        match self {
            ValueRef::Undef => DataType::Undef,
            ValueRef::Bool(_) => DataType::Bool,
            ValueRef::Byte(_) => DataType::Byte,
            ValueRef::Int8(_) => DataType::Int8,
            ValueRef::Int16(_) => DataType::Int16,
            ValueRef::Int32(_) => DataType::Int32,
            ValueRef::Int64(_) => DataType::Int64,
            ValueRef::Uint8(_) => DataType::Uint8,
            ValueRef::Uint16(_) => DataType::Uint16,
            ValueRef::Uint32(_) => DataType::Uint32,
            ValueRef::Uint64(_) => DataType::Uint64,
            ValueRef::String(_) => DataType::String,
            ValueRef::ByteObject(_) => DataType::ByteObject,
            ValueRef::Proc(_) => DataType::Proc,
            ValueRef::Info(_) => DataType::Info,
            ValueRef::Value(_) => DataType::Value,
            ValueRef::DataArray(_) => DataType::DataArray,
            ValueRef::Other(v) => v.data_type(),
        }
    }

    /// The owned form: equal to what [`decode`](crate::decode) gives for
    /// the same bytes.
    pub fn to_value(&self) -> Result<Value> {
        Ok(match self {
            ValueRef::Undef => Value::Undef,
            ValueRef::Bool(x) => Value::Bool(*x),
            ValueRef::Byte(x) => Value::Byte(*x),
            ValueRef::Int8(x) => Value::Int8(*x),
            ValueRef::Int16(x) => Value::Int16(*x),
            ValueRef::Int32(x) => Value::Int32(*x),
            ValueRef::Int64(x) => Value::Int64(*x),
            ValueRef::Uint8(x) => Value::Uint8(*x),
            ValueRef::Uint16(x) => Value::Uint16(*x),
            ValueRef::Uint32(x) => Value::Uint32(*x),
            ValueRef::Uint64(x) => Value::Uint64(*x),
            ValueRef::String(s) => Value::String(s.map(pstring).transpose()?),
            ValueRef::ByteObject(b) => Value::ByteObject(Box::new(Hex(Bytes::copy_from_slice(b)))),
            ValueRef::Proc(p) => Value::Proc(Box::new(p.to_proc()?)),
            ValueRef::Info(i) => Value::Info(Box::new(i.to_info()?)),
            ValueRef::Value(v) => Value::Value(Box::new(v.get()?.to_value()?)),
            ValueRef::DataArray(a) => Value::DataArray(Box::new(match a.elem_type {
                DataType::Undef => DataArray::Undef { size: a.size },
                elem_type => DataArray::Typed {
                    elem_type,
                    elements: a
                        .iter()
                        .map(|e| e.and_then(|e| e.to_value()))
                        .collect::<Result<_>>()?,
                },
            })),
            ValueRef::Other(v) => (**v).clone(),
        })
    }
}

impl InfoRef<'_> {
    /// The owned form.
    pub fn to_info(&self) -> Result<Info> {
        Ok(Info {
            key: Key::from_bytes(self.key).map_err(|e| match e {
                StrError::InteriorNul(_) => bad_nul(),
                StrError::TooLong { .. } => too_long("key"),
            })?,
            flags: self.flags,
            value: self.value()?.to_value()?,
        })
    }
}

impl ProcRef<'_> {
    /// The owned [`Proc`]; an error if the namespace is not a valid one.
    pub fn to_proc(&self) -> Result<Proc> {
        Ok(Proc {
            nspace: limited(Nspace::new(pstring(self.nspace)?), "namespace")?,
            rank: self.rank,
        })
    }
}

/// Bytes already checked free of NUL as a `PString`.
fn pstring(b: &[u8]) -> Result<PString> {
    PString::from_bytes(b).map_err(|_| bad_nul())
}

fn bad_nul() -> Error {
    Error::new(ErrorKind::BadString("NUL inside the string"), 0)
}

fn too_long(what: &'static str) -> Error {
    Error::new(
        ErrorKind::Invalid(format!("{what} longer than its limit")),
        0,
    )
}

fn limited<T, E>(r: std::result::Result<T, E>, what: &'static str) -> Result<T> {
    r.map_err(|_| too_long(what))
}

/// Whether items of `ty` have a borrowed form (single items, as inside a
/// value or an array element).
fn borrowed_item(ty: DataType) -> bool {
    use DataType as T;
    matches!(
        ty,
        T::Bool
            | T::Byte
            | T::Int8
            | T::Int16
            | T::Int32
            | T::Int64
            | T::Uint8
            | T::Uint16
            | T::Uint32
            | T::Uint64
            | T::String
            | T::ByteObject
            | T::Proc
            | T::Info
            | T::Value
            | T::DataArray
    )
}

/// Whether a run of `ty` items (a unit, an array's elements) is read item
/// by item in borrowed form.
fn borrowed_run(d: &Dec, ty: DataType) -> bool {
    borrowed_item(ty) && unpack::plain_run(d, ty)
}

/// `n` items of `ty`, each handed to `each`, with the owned path's checks
/// and error fields.
fn run<'a>(
    d: &mut Dec<'a>,
    ty: DataType,
    n: usize,
    mut each: impl FnMut(ValueRef<'a>),
) -> Result<()> {
    if !borrowed_run(d, ty) {
        for v in unpack::unpack_items(d, ty, n)? {
            each(ValueRef::Other(Box::new(v)));
        }
        return Ok(());
    }
    unpack::check_registered(d, ty)?;
    unpack::read_items(d, ty, n, |d| item_fast(d, ty), each)
}

/// One item of `ty`.
fn item<'a>(d: &mut Dec<'a>, ty: DataType) -> Result<ValueRef<'a>> {
    if let Some(r) = leaf(d, ty) {
        return r.map_err(|e| e.in_type(ty));
    }
    if !borrowed_item(ty) {
        return unpack::unpack_item(d, ty).map(|v| ValueRef::Other(Box::new(v)));
    }
    item_inner(d, ty).map_err(|e| e.in_type(ty))
}

/// [`item`], with the leaf types decoded in place (the hot loops: array
/// elements, the values of INFOs).
#[inline(always)]
fn item_fast<'a>(d: &mut Dec<'a>, ty: DataType) -> Result<ValueRef<'a>> {
    match leaf(d, ty) {
        Some(r) => r.map_err(|e| e.in_type(ty)),
        None => item(d, ty),
    }
}

/// One item of a type that has no parts, as a variant of `$e` (`None`
/// for the other types; errors not yet in the type): [`ValueRef`] and
/// [`Payload`] have the same variants for these.
macro_rules! leaf_as {
    ($e:ident, $d:expr, $ty:expr) => {{
        use DataType as T;
        let d = $d;
        Some(match $ty {
            T::Bool => d.u8().map(|x| $e::Bool(x != 0)),
            T::Byte => d.u8().map($e::Byte),
            T::Int8 => d.u8().map(|x| $e::Int8(x as i8)),
            T::Int16 => d.i16().map($e::Int16),
            T::Int32 => d.i32().map($e::Int32),
            T::Int64 => d.i64().map($e::Int64),
            T::Uint8 => d.u8().map($e::Uint8),
            T::Uint16 => d.u16().map($e::Uint16),
            T::Uint32 => d.u32().map($e::Uint32),
            T::Uint64 => d.u64().map($e::Uint64),
            T::String => d.str_ref().map($e::String),
            T::ByteObject => d.count_size(1).and_then(|n| d.take(n)).map($e::ByteObject),
            _ => None?,
        })
    }};
}

/// One item of a type that has no parts (`None` for the others; errors
/// not yet in the type).
#[inline(always)]
fn leaf<'a>(d: &mut Dec<'a>, ty: DataType) -> Option<Result<ValueRef<'a>>> {
    leaf_as!(ValueRef, d, ty)
}

/// [`leaf`], kept as the payload of a value (no `ValueRef` between).
#[inline(always)]
fn leaf_payload<'a>(d: &mut Dec<'a>, ty: DataType) -> Option<Result<Payload<'a>>> {
    leaf_as!(Payload, d, ty)
}

/// Moves past `n` items of a fixed-width integer type (or BOOL, BYTE)
/// without decoding them, with the checks their reading makes (the
/// elements of an array, read again while iterating); `false` for the
/// other types and when one does not read.
#[inline]
fn skip_leaves(d: &mut Dec, ty: DataType, n: usize) -> bool {
    use DataType as T;
    match ty {
        T::Bool | T::Byte | T::Int8 | T::Uint8 => d.take(n).is_ok(),
        T::Int16 | T::Uint16 => d.skip_ints(n, 2),
        T::Int32 | T::Uint32 => d.skip_ints(n, 4),
        T::Int64 | T::Uint64 => d.skip_ints(n, 8),
        _ => false,
    }
}

/// The items with parts.
fn item_inner<'a>(d: &mut Dec<'a>, ty: DataType) -> Result<ValueRef<'a>> {
    use DataType as T;
    Ok(match ty {
        T::Proc => ValueRef::Proc(proc_ref(d)?),
        T::Info => ValueRef::Info(info_ref(d)?),
        T::Value => ValueRef::Value(value_at(d, d.dialect.value_type_field())?),
        T::DataArray => darray(d)?,
        _ => unpack::unpack_item(d, ty).map(|v| ValueRef::Other(Box::new(v)))?,
    })
}

/// One INFO (errors not yet in its type). Inlined, as `value_at`: moving
/// the results between frames costs more than reading them.
#[inline(always)]
fn info_ref<'a>(d: &mut Dec<'a>) -> Result<InfoRef<'a>> {
    let key = limited_str(d, Key::MAX, "key longer than 511 bytes").field("key")?;
    let flags = if d.dialect.info_has_flags() {
        d.u32().field("flags")?
    } else {
        0
    };
    let value = value_at(d, d.dialect.info_type_field()).field("value")?;
    Ok(InfoRef { key, flags, value })
}

/// A non-NULL C string of at most `max` bytes.
#[inline(always)]
fn limited_str<'a>(d: &mut Dec<'a>, max: usize, what: &'static str) -> Result<&'a [u8]> {
    let at = d.pos();
    match d.str_ref()? {
        None => Err(Error::new(ErrorKind::NullNotAllowed, at)),
        Some(s) if s.len() > max => Err(Error::new(ErrorKind::BadString(what), at)),
        Some(s) => Ok(s),
    }
}

fn proc_ref<'a>(d: &mut Dec<'a>) -> Result<ProcRef<'a>> {
    let nspace = limited_str(d, Nspace::MAX, "namespace longer than 255 bytes").field("nspace")?;
    let rank = if d.dialect == Dialect::V12 {
        d.int().field("rank")? as u32 // a tagged INT in v12
    } else {
        d.u32().field("rank")?
    };
    Ok(ProcRef { nspace, rank })
}

/// A `pmix_value_t`, checked now; its payload kept as read (decoded again
/// on demand for a type without a borrowed form).
#[inline(always)]
fn value_at<'a>(d: &mut Dec<'a>, field: InfoTypeField) -> Result<ValueAt<'a>> {
    let ty = unpack::value_type(d, field)?;
    if ty == DataType::Undef {
        return Ok(ValueAt {
            ty,
            payload: Payload::Undef,
        });
    }
    d.enter()?;
    let r = match d.driver_tag(legacy::value_driver_type(ty)) {
        Ok(()) => match leaf_payload(d, ty) {
            Some(r) => r.map_err(|e| e.in_type(ty)),
            None => {
                let at = At::of(d);
                item(d, ty).map(|v| Payload::keep(v, at))
            }
        },
        Err(e) => Err(e),
    };
    d.leave();
    Ok(ValueAt { ty, payload: r? })
}

/// A DATA_ARRAY: its elements are checked now and decoded on demand;
/// arrays of types without a borrowed form are decoded owned.
fn darray<'a>(d: &mut Dec<'a>) -> Result<ValueRef<'a>> {
    let start = d.pos();
    d.enter()?;
    let r = (|| match unpack::darray_head(d)? {
        DarrayHead::Undef { size } => Ok(Some(ArrayRef {
            elem_type: DataType::Undef,
            size,
            at: At::of(d),
        })),
        DarrayHead::Typed { ty, n } if n == 0 || borrowed_run(d, ty) => {
            let at = At::of(d);
            if n > 0 && !skip_leaves(d, ty, n) {
                // one of them does not read, or they have parts: item by
                // item from the first, for the located error
                d.rewind_to(at.pos);
                run(d, ty, n, |_| ()).field("elements")?;
            }
            Ok(Some(ArrayRef {
                elem_type: ty,
                size: n as u64,
                at,
            }))
        }
        DarrayHead::Typed { .. } => Ok(None),
    })();
    d.leave();
    match r? {
        Some(a) => Ok(ValueRef::DataArray(a)),
        None => {
            // no borrowed form for these elements: the owned decoder, from the top
            d.rewind_to(start);
            unpack::unpack_item(d, DataType::DataArray).map(|v| ValueRef::Other(Box::new(v)))
        }
    }
}

/// A reader over received bytes, one pack unit at a time.
pub struct Reader<'a> {
    d: Dec<'a>,
    fmt: Format,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `buf`, which holds pack units in `fmt`.
    pub fn new(fmt: Format, buf: &'a [u8]) -> Reader<'a> {
        let mut d = Dec::from_slice(buf, 0, fmt.dialect, fmt.ints());
        d.apply(&fmt);
        Reader { d, fmt }
    }
    /// Bytes read so far.
    pub fn position(&self) -> usize {
        self.d.pos()
    }
    /// Whether every byte has been read.
    pub fn is_empty(&self) -> bool {
        self.d.is_empty()
    }

    /// Read one unit of `ty` with `f`; the position moves only on success.
    #[inline]
    fn unit<T>(
        &mut self,
        ty: DataType,
        f: impl FnOnce(&mut Dec<'a>, usize) -> Result<T>,
    ) -> Result<T> {
        if !self.fmt.dialect.registers(ty) {
            return Err(self.not_registered(ty));
        }
        let (start, budget) = (self.d.pos(), self.d.zero_budget);
        let r = read_unit_header(&mut self.d, &self.fmt, ty).and_then(|n| f(&mut self.d, n));
        if r.is_err() {
            self.d.rewind_to(start);
            self.d.zero_budget = budget;
            self.d.depth = 0;
        }
        r
    }

    #[cold]
    fn not_registered(&self, ty: DataType) -> Error {
        match self.fmt.dialect.require(ty, false) {
            Err(k) => Error::new(k, self.d.pos()).in_type(ty),
            Ok(()) => Error::new(ErrorKind::Invalid(format!("{ty}")), self.d.pos()),
        }
    }

    /// One unit of `ty`, its items borrowed.
    pub fn values(&mut self, ty: DataType) -> Result<Vec<ValueRef<'a>>> {
        self.unit(ty, |d, n| {
            let mut out = Vec::with_capacity(n.min(d.remaining()));
            run(d, ty, n, |v| out.push(v))?;
            Ok(out)
        })
    }

    /// One unit of INFO, borrowed: the items of [`Reader::values`] without
    /// the enum around them.
    pub fn infos(&mut self) -> Result<Vec<InfoRef<'a>>> {
        let ty = DataType::Info;
        self.unit(ty, |d, n| {
            unpack::check_registered(d, ty)?;
            let mut out = Vec::with_capacity(n.min(d.remaining()));
            let read = |d: &mut Dec<'a>| info_ref(d).map_err(|e| e.in_type(ty));
            unpack::read_items(d, ty, n, read, |i| out.push(i))?;
            Ok(out)
        })
    }

    /// One unit of `T::TYPE` as plain Rust values.
    pub fn prims<T: Prim>(&mut self) -> Result<Vec<T>> {
        let ty = T::TYPE;
        self.unit(ty, |d, n| {
            let mut out = Vec::with_capacity(n.min(d.remaining()));
            unpack::read_items(d, ty, n, T::get, |x| out.push(x))?;
            Ok(out)
        })
    }

    /// One unit of exactly one `T::TYPE`.
    pub fn prim<T: Prim>(&mut self) -> Result<T> {
        let ty = T::TYPE;
        self.unit(ty, |d, n| {
            if n != 1 {
                return Err(d
                    .err(ErrorKind::Invalid(format!(
                        "expected one value, the unit has {n}"
                    )))
                    .in_type(ty));
            }
            T::get(d).map_err(|e| e.in_type(ty))
        })
    }

    /// One unit of STRING as views of the input (`None` for NULL).
    pub fn strs(&mut self) -> Result<Vec<Option<&'a [u8]>>> {
        let ty = DataType::String;
        self.unit(ty, |d, n| {
            let mut out = Vec::with_capacity(n.min(d.remaining()));
            unpack::read_items(d, ty, n, |d| d.str_ref(), |s| out.push(s))?;
            Ok(out)
        })
    }
}

/// Every unit in `bytes` as items of `ty`, borrowed: the counterpart of
/// [`decode`](crate::decode).
pub fn decode_ref<'a>(fmt: &Format, ty: DataType, bytes: &'a [u8]) -> Result<Vec<ValueRef<'a>>> {
    fmt.dialect
        .require(ty, false)
        .map_err(|k| Error::new(k, 0).in_type(ty))?;
    let mut r = Reader::new(*fmt, bytes);
    let mut all = Vec::new();
    while !r.is_empty() {
        let mut v = r.values(ty)?;
        if all.is_empty() {
            all = v;
        } else {
            all.append(&mut v);
        }
    }
    Ok(all)
}
