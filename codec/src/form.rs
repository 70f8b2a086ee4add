//! The wire forms that need nothing but the wire primitives: integers,
//! strings, blobs, the dialect-dependent fields, and the generic forms
//! (boxed, a structure in its layout, a counted list).
//!
//! A [`Form`] is one way of writing a Rust type on the wire, pack, unpack
//! and encoded length side by side. These sit below the framing code
//! (`pack.rs`, `unpack.rs`), which may read with them; the forms that
//! need the framing helpers (values, INFO lists, floats, topologies) are
//! in `layout.rs`, which re-exports these so the type table names every
//! form from one place.

use crate::error::{ErrorKind, Result};
use crate::item::Layout;
use crate::wire::{Dec, Enc, Sizer};
use bytes::Bytes;
use pmix_types::{Hex, PString};
use std::marker::PhantomData;

/// One wire form of a `T`: pack, unpack and encoded length side by side.
pub(crate) trait Form<T> {
    fn put(e: &mut Enc, v: &T) -> Result<()>;
    fn get(d: &mut Dec) -> Result<T>;
    /// The bytes `put` writes (for a value `put` accepts).
    fn len(s: &Sizer, v: &T) -> usize;
}

macro_rules! forms {
    ($($form:ident: $t:ty = |$e:ident, $v:ident| $put:expr, |$d:ident| $get:expr, |$s:ident, $w:ident| $len:expr;)*) => {$(
        pub(crate) struct $form;
        impl Form<$t> for $form {
            // always: each is one encoder call, and a layout's fields
            // (an INFO's key) are written without a frame each
            #[inline(always)]
            fn put($e: &mut Enc, $v: &$t) -> Result<()> {
                $put;
                Ok(())
            }
            #[inline]
            fn get($d: &mut Dec) -> Result<$t> {
                $get
            }
            #[inline]
            fn len($s: &Sizer, $w: &$t) -> usize {
                $len
            }
        }
    )*};
}
pub(crate) use forms;

forms! {
    // UNDEF: nothing at all
    Nothing: () = |_e, _v| {}, |_d| Ok(()), |_s, _w| 0;
    // POINTER: a sentinel byte (runs of pointers are handled by the unit code)
    Sentinel: () = |e, _v| e.u8(1), |d| d.u8().map(|_| ()), |s, _w| s.u8();
    BoolF: bool = |e, v| e.u8(*v as u8), |d| Ok(d.u8()? != 0), |s, _w| s.u8();
    // a C string that may be NULL
    Str: Option<PString> = |e, v| e.str(v.as_ref())?, |d| d.str(), |s, w| s.str(w.as_ref());
    U8: u8 = |e, v| e.u8(*v), |d| d.u8(), |s, _w| s.u8();
    I8: i8 = |e, v| e.u8(*v as u8), |d| Ok(d.u8()? as i8), |s, _w| s.u8();
    U16: u16 = |e, v| e.u16(*v), |d| d.u16(), |s, w| s.u16(*w);
    I16: i16 = |e, v| e.i16(*v), |d| d.i16(), |s, w| s.i16(*w);
    U32: u32 = |e, v| e.u32(*v), |d| d.u32(), |s, w| s.u32(*w);
    I32: i32 = |e, v| e.i32(*v), |d| d.i32(), |s, w| s.i32(*w);
    U64: u64 = |e, v| e.u64(*v), |d| d.u64(), |s, w| s.u64(*w);
    I64: i64 = |e, v| e.i64(*v), |d| d.i64(), |s, w| s.i64(*w);
    // an unsigned C field the wire carries as INT16
    I16Bits: u16 = |e, v| e.i16(*v as i16), |d| Ok(d.i16()? as u16), |s, w| s.i16(*w as i16);
    Size: u64 = |e, v| e.size(*v), |d| d.size(), |s, w| s.size(*w);
    Pid: u32 = |e, v| e.pid(*v), |d| d.pid(), |s, w| s.pid(*w);
    // PMIX_INT and PMIX_UINT: the system-typed INT
    IntF: i32 = |e, v| e.int(*v), |d| d.int(), |s, w| s.int(*w);
    UintF: u32 = |e, v| e.int(*v as i32), |d| Ok(d.int()? as u32), |s, w| s.int(*w as i32);
    // SIZE, then the bytes (shared with the input when read)
    Blob: Bytes = |e, v| { e.size(v.len() as u64); e.raw(v) },
        |d| { let n = d.count_size(1)?; d.take_bytes(n) },
        |s, w| s.size(w.len() as u64) + w.len();
    HexBlob: Hex = |e, v| Blob::put(e, &v.0)?, |d| Ok(Hex(Blob::get(d)?)),
        |s, w| s.size(w.len() as u64) + w.len();
    // PMIX_COMMAND: v20 widens it to UINT32, of which only the low byte is
    // the command (libpmix fills the high bytes from beyond a 1-byte variable)
    Cmd: u8 = |e, v| if e.dialect.command_is_u32() { e.u32(*v as u32) } else { e.u8(*v) },
        |d| if d.dialect.command_is_u32() { Ok(d.u32()? as u8) } else { d.u8() },
        |s, w| if s.dialect.command_is_u32() { s.u32(*w as u32) } else { s.u8() };
    // PMIX_DATA_TYPE: v12 packs a data type as a 4-byte int
    TypeCode: u16 = |e, v| if e.dialect.type_code_is_u32() { e.u32(*v as u32) } else { e.u16(*v) },
        |d| if d.dialect.type_code_is_u32() { Ok(d.u32()? as u16) } else { d.u16() },
        |s, w| if s.dialect.type_code_is_u32() { s.u32(*w as u32) } else { s.u16(*w) };
    // INFO's directives: v12 has none (libpmix drops them, and so must we)
    Flags: u32 = |e, v| if e.dialect.info_has_flags() { e.u32(*v) },
        |d| if d.dialect.info_has_flags() { d.u32() } else { Ok(0) },
        |s, w| if s.dialect.info_has_flags() { s.u32(*w) } else { 0 };
    // APP's cwd: v12 has none (dropped, as libpmix does)
    Cwd: Option<PString> = |e, v| if e.dialect.app_has_cwd() { e.str(v.as_ref())? },
        |d| if d.dialect.app_has_cwd() { d.str() } else { Ok(None) },
        |s, w| if s.dialect.app_has_cwd() { s.str(w.as_ref()) } else { 0 };
    // COORD's dimensions: a SIZE count, then UINT32s
    U32s: Vec<u32> = |e, v| { e.size(v.len() as u64); v.iter().for_each(|&x| e.u32(x)) },
        |d| {
            let n = d.count_size(1)?;
            let mut out = Vec::with_capacity(n);
            for _ in 0..n {
                out.push(d.u32()?);
            }
            Ok(out)
        },
        |s, w| s.size(w.len() as u64) + w.iter().map(|&x| s.u32(x)).sum::<usize>();
    // BUFFER's type byte: v20 and v12 send none (refused rather than dropped)
    BufType: u8 = |e, v| if !e.dialect.is_legacy() {
            e.u8(*v)
        } else if *v != 0 {
            return Err(e.err(ErrorKind::Invalid(format!(
                "dialect {} cannot carry a BUFFER's type byte ({v})",
                e.dialect
            ))));
        },
        |d| if d.dialect.is_legacy() { Ok(0) } else { d.u8() },
        |s, _w| if s.dialect.is_legacy() { 0 } else { s.u8() };
}

/// A boxed `T`, in `T`'s form `F`.
pub(crate) struct Boxed<F>(PhantomData<F>);
impl<T, F: Form<T>> Form<Box<T>> for Boxed<F> {
    #[inline]
    fn put(e: &mut Enc, v: &Box<T>) -> Result<()> {
        F::put(e, v)
    }
    #[inline]
    fn get(d: &mut Dec) -> Result<Box<T>> {
        F::get(d).map(Box::new)
    }
    #[inline]
    fn len(s: &Sizer, v: &Box<T>) -> usize {
        F::len(s, v)
    }
}

/// A structure in its [`Layout`].
pub(crate) struct Lay;
impl<T: Layout> Form<T> for Lay {
    #[inline]
    fn put(e: &mut Enc, v: &T) -> Result<()> {
        v.pack(e)
    }
    #[inline]
    fn get(d: &mut Dec) -> Result<T> {
        T::unpack(d)
    }
    #[inline]
    fn len(s: &Sizer, v: &T) -> usize {
        v.encoded_len(s)
    }
}

/// A SIZE count, then the items in form `F` (each at least `MIN` bytes:
/// the count is checked against the bytes remaining before allocating).
pub(crate) struct List<F, const MIN: usize = 1>(PhantomData<F>);
impl<T, F: Form<T>, const MIN: usize> Form<Vec<T>> for List<F, MIN> {
    fn put(e: &mut Enc, v: &Vec<T>) -> Result<()> {
        e.size(v.len() as u64);
        for (i, x) in v.iter().enumerate() {
            F::put(e, x).map_err(|err| err.in_field(format!("[{i}]")))?;
        }
        Ok(())
    }
    fn get(d: &mut Dec) -> Result<Vec<T>> {
        let n = d.count_size(MIN)?;
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            out.push(F::get(d).map_err(|err| err.in_field(format!("[{i}]")))?);
        }
        Ok(out)
    }
    fn len(s: &Sizer, v: &Vec<T>) -> usize {
        s.size(v.len() as u64) + v.iter().map(|x| F::len(s, x)).sum::<usize>()
    }
}
