//! Typed bulk packing and unpacking: plain Rust slices in, plain Rust
//! vectors out, with no [`Value`] in between.
//!
//! The bytes are exactly those of the owned path (`pack_unit` of the
//! corresponding `Value`s) in every dialect and both buffer types; the
//! unpacking side is [`Reader::prims`](crate::Reader::prims) and
//! [`Reader::strs`](crate::Reader::strs).
//!
//! ```
//! use pmix_codec::{encode, encode_prims, Format, Reader};
//! use pmix_types::{DataType, Value};
//!
//! let bytes = encode_prims(&Format::V41, &[1u64, 300, u64::MAX])?;
//! let owned = [Value::Uint64(1), Value::Uint64(300), Value::Uint64(u64::MAX)];
//! assert_eq!(bytes, encode(&Format::V41, DataType::Uint64, &owned)?);
//! assert_eq!(Reader::new(Format::V41, &bytes).prims::<u64>()?, [1, 300, u64::MAX]);
//! # Ok::<(), pmix_codec::Error>(())
//! ```

use crate::dialect::{Format, Ints};
use crate::error::{ErrorKind, Result};
use crate::wire::{flex_encode_all, zigzag, Dec, Enc};
use crate::{pack_unit_with, DataBuffer};
use pmix_types::{DataType, Value};

mod sealed {
    pub trait Sealed {}
}

/// A Rust type that is one PMIx integer type: `u8` UINT8, `i8` INT8,
/// `u16` UINT16, …, `u64` UINT64, `i64` INT64, `bool` BOOL.
pub trait Prim: Copy + sealed::Sealed {
    /// The PMIx type of this Rust type.
    const TYPE: DataType;
    /// Read one item.
    fn get(d: &mut Dec) -> Result<Self>;
    /// Write `items`, one after the other (no count).
    fn put_all(e: &mut Enc, items: &[Self]);
    /// The owned form.
    fn to_value(self) -> Value;
}

macro_rules! prims {
    ($($t:ty => $variant:ident, $get:ident, $put:ident, $flex:expr;)*) => {$(
        impl sealed::Sealed for $t {}
        impl Prim for $t {
            const TYPE: DataType = DataType::$variant;
            #[inline]
            fn get(d: &mut Dec) -> Result<Self> {
                d.$get()
            }
            #[inline]
            fn put_all(e: &mut Enc, items: &[Self]) {
                // a closure, not a `fn` pointer: a pointer is called per
                // item where the loop is not inlined into its caller
                let flex = $flex;
                match (e.ints, flex) {
                    (Ints::Flex, Some(f)) => flex_encode_all(e.out, items.len(), items.iter().map(|&x| f(x))),
                    _ => {
                        for &x in items {
                            e.$put(x);
                        }
                    }
                }
            }
            fn to_value(self) -> Value {
                Value::$variant(self)
            }
        }
    )*};
}

prims! {
    u64 => Uint64, u64, u64, Some(|x: u64| x);
    i64 => Int64, i64, i64, Some(|x: i64| zigzag(x));
    u32 => Uint32, u32, u32, Some(|x: u32| x as u64);
    i32 => Int32, i32, i32, Some(|x: i32| zigzag(x as i64));
    u16 => Uint16, u16, u16, Some(|x: u16| x as u64);
    i16 => Int16, i16, i16, Some(|x: i16| zigzag(x as i64));
    u8 => Uint8, u8, u8, None::<fn(u8) -> u64>;
}

impl sealed::Sealed for i8 {}
impl Prim for i8 {
    const TYPE: DataType = DataType::Int8;
    #[inline]
    fn get(d: &mut Dec) -> Result<Self> {
        Ok(d.u8()? as i8)
    }
    fn put_all(e: &mut Enc, items: &[Self]) {
        e.out.extend(items.iter().map(|&x| x as u8));
    }
    fn to_value(self) -> Value {
        Value::Int8(self)
    }
}

impl sealed::Sealed for bool {}
impl Prim for bool {
    const TYPE: DataType = DataType::Bool;
    #[inline]
    fn get(d: &mut Dec) -> Result<Self> {
        Ok(d.u8()? != 0)
    }
    fn put_all(e: &mut Enc, items: &[Self]) {
        e.out.extend(items.iter().map(|&x| x as u8));
    }
    fn to_value(self) -> Value {
        Value::Bool(self)
    }
}

/// Append one unit of `items` (type `T::TYPE`) to `out`; nothing on error.
pub fn pack_prims<T: Prim>(out: &mut Vec<u8>, fmt: &Format, items: &[T]) -> Result<()> {
    pack_unit_with(out, fmt, T::TYPE, items.len(), |e| {
        T::put_all(e, items);
        Ok(())
    })
}

/// Append one unit of STRING holding `items` (none NULL; each must be free
/// of NUL bytes) to `out`; nothing on error.
pub fn pack_strs<S: AsRef<[u8]>>(out: &mut Vec<u8>, fmt: &Format, items: &[S]) -> Result<()> {
    let ty = DataType::String;
    pack_unit_with(out, fmt, ty, items.len(), |e| {
        let body: usize = items.iter().map(|s| s.as_ref().len() + 5).sum();
        e.out.reserve(body);
        for (i, s) in items.iter().enumerate() {
            let s = s.as_ref();
            if pmix_types::find_nul(s).is_some() {
                let err = e
                    .err(ErrorKind::BadString("NUL inside the string"))
                    .in_type(ty);
                return Err(if items.len() > 1 {
                    err.in_field(format!("[{i}]"))
                } else {
                    err
                });
            }
            e.c_str(s)?;
        }
        Ok(())
    })
}

/// One unit of `items` as a new byte string.
pub fn encode_prims<T: Prim>(fmt: &Format, items: &[T]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    pack_prims(&mut out, fmt, items)?;
    Ok(out)
}

/// One unit of STRING as a new byte string.
pub fn encode_strs<S: AsRef<[u8]>>(fmt: &Format, items: &[S]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    pack_strs(&mut out, fmt, items)?;
    Ok(out)
}

impl DataBuffer {
    /// `PMIx_Data_pack` of a typed slice: the bytes of [`DataBuffer::pack`]
    /// with `T`'s values, without building them.
    pub fn pack_prims<T: Prim>(&mut self, items: &[T]) -> Result<()> {
        let fmt = *self.format();
        pack_prims(self.writable(), &fmt, items)
    }

    /// `PMIx_Data_pack` of non-NULL strings given as bytes.
    pub fn pack_strs<S: AsRef<[u8]>>(&mut self, items: &[S]) -> Result<()> {
        let fmt = *self.format();
        pack_strs(self.writable(), &fmt, items)
    }
}
