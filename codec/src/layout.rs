//! Structures whose fields are spelled once. Each `layout!` row lists a
//! type's wire fields in order, each with its wire form; the packer and the
//! unpacker are generated from that one list, so the field order (and the
//! field names in error paths) cannot drift between the two directions.
//! Fields the wire does not carry are named after `+` with the value an
//! unpacked structure gets.

use crate::error::{Field, Result};
use crate::wire::{Dec, Enc};
use crate::{pack, unpack};
use bytes::Bytes;
use pmix_types::{
    Device, DeviceDist, Endpoint, Envar, NodePid, PString, Proc, ProcInfo, ProcStats, Regex2,
    ResourceUnit, Timeval,
};

/// One field's wire form, both directions.
pub(crate) trait Form<T> {
    fn put(e: &mut Enc, v: &T) -> Result<()>;
    fn get(d: &mut Dec) -> Result<T>;
}

/// A structure packed and unpacked field by field from one list.
pub(crate) trait Layout: Sized {
    fn pack(&self, e: &mut Enc) -> Result<()>;
    fn unpack(d: &mut Dec) -> Result<Self>;
}

macro_rules! forms {
    ($($form:ident: $t:ty = |$e:ident, $v:ident| $put:expr, |$d:ident| $get:expr;)*) => {$(
        pub(crate) struct $form;
        impl Form<$t> for $form {
            #[inline]
            fn put($e: &mut Enc, $v: &$t) -> Result<()> {
                $put;
                Ok(())
            }
            #[inline]
            fn get($d: &mut Dec) -> Result<$t> {
                $get
            }
        }
    )*};
}

forms! {
    // a C string that may be NULL
    Str: Option<PString> = |e, v| e.str(v.as_ref())?, |d| d.str();
    U8: u8 = |e, v| e.u8(*v), |d| d.u8();
    U16: u16 = |e, v| e.u16(*v), |d| d.u16();
    U32: u32 = |e, v| e.u32(*v), |d| d.u32();
    U64: u64 = |e, v| e.u64(*v), |d| d.u64();
    I32: i32 = |e, v| e.i32(*v), |d| d.i32();
    // an unsigned C field the wire carries as INT16
    I16Bits: u16 = |e, v| e.i16(*v as i16), |d| Ok(d.i16()? as u16);
    Size: u64 = |e, v| e.size(*v), |d| d.size();
    Pid: u32 = |e, v| e.pid(*v), |d| d.pid();
    Tv: Timeval = |e, v| pack::timeval(e, v), |d| unpack::timeval(d);
    ProcF: Proc = |e, v| pack::proc_(e, v)?, |d| unpack::proc_(d);
    // FLOAT as its "%f" text
    F32: f32 = |e, v| pack::float32(e, *v)?, |d| unpack::float32(d);
    // SIZE, then the bytes
    Blob: Bytes = |e, v| pack::bytes_sized(e, v), |d| unpack::bytes_sized(d);
}

macro_rules! layout {
    ($($ty:ident { $($f:ident $(as $name:literal)?: $form:ident),* $(,)? } $(+ { $($rest:ident: $val:expr),* })?;)*) => {$(
        impl Layout for $ty {
            fn pack(&self, e: &mut Enc) -> Result<()> {
                $( <$form as Form<_>>::put(e, &self.$f).field(layout!(@name $f $($name)?))?; )*
                Ok(())
            }
            fn unpack(d: &mut Dec) -> Result<Self> {
                $( let $f = <$form as Form<_>>::get(d).field(layout!(@name $f $($name)?))?; )*
                Ok($ty { $($f,)* $($($rest: $val,)*)? })
            }
        }
    )*};
    (@name $f:ident) => { stringify!($f) };
    (@name $f:ident $name:literal) => { $name };
}

layout! {
    // pmix_proc_info_t: exit_code is not sent
    ProcInfo {
        proc: ProcF,
        hostname: Str,
        executable_name: Str,
        pid: Pid,
        state: U8,
    } + { exit_code: 0 };
    // pmix_proc_stats_t: percent_cpu and peak_vsize are not sent
    ProcStats {
        node: Str,
        proc: ProcF,
        pid: Pid,
        cmd: Str,
        state: U8,
        time: Tv,
        priority: I32,
        num_threads: I16Bits,
        pss: F32,
        vsize: F32,
        rss: F32,
        processor: I16Bits,
        sample_time: Tv,
    } + { percent_cpu: 0.0, peak_vsize: 0.0 };
    Envar { envar: Str, value: Str, separator: U8 };
    DeviceDist { uuid: Str, osname: Str, devtype as "type": U64, mindist: U16, maxdist: U16 };
    Endpoint { uuid: Str, osname: Str, endpt: Blob };
    Device { uuid: Str, osname: Str, devtype as "type": U64 };
    ResourceUnit { devtype: U64, count: Size };
    NodePid { hostname: Str, nodeid: U32, pid: Pid };
    Regex2 { kind as "type": Str, data: Blob };
}
