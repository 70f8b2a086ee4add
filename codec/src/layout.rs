//! Wire forms and structure layouts: the codec column of the type table.
//!
//! A [`Form`] is one way of writing a Rust type on the wire, both
//! directions side by side. The type table (`pmix_types::type_table!`)
//! names a form for every PMIx type; `table.rs` generates the pack and
//! unpack dispatch from those names.
//!
//! Each structure implements [`Layout`] through one `layout!` row listing
//! its wire fields in order, each with its form; the packer and the
//! unpacker are generated from that one list, so the field order (and the
//! field names in error paths) cannot drift between the two directions.
//! Fields the wire does not carry are named after `+` with the value an
//! unpacked structure gets. Dialect differences (a field v12 lacks, a
//! wider integer in v20) live in the forms, as methods of the dialect.

use crate::dialect::Dialect;
use crate::error::{ErrorKind, Field, Result};
use crate::float;
use crate::item::Layout;
use crate::wire::{Dec, Enc, Sizer};
use crate::{pack, unpack};
use bytes::Bytes;
use pmix_types::{
    App, Buffer, Coord, Cpuset, DataArray, Device, DeviceDist, DiskStats, Endpoint, Envar,
    Geometry, Hex, Info, Key, Kval, NetStats, NodePid, NodeStats, Nspace, PString, Pdata, Proc,
    ProcInfo, ProcStats, Query, RegAttr, Regex, Regex2, ResourceUnit, Timeval, Topology, Value,
    F32, F64,
};
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
            #[inline]
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
    Tv: Timeval = |e, v| pack::timeval(e, v), |d| unpack::timeval(d),
        |s, w| s.i64(w.sec) + s.i64(w.usec);
    ProcF: Proc = |e, v| pack::proc_(e, v)?, |d| unpack::proc_(d),
        |s, w| s.str(Some(w.nspace.as_pstring())) + if s.dialect == Dialect::V12 {
            s.int(w.rank as i32)
        } else {
            s.u32(w.rank)
        };
    // FLOAT as its "%f" text
    FloatText: f32 = |e, v| pack::float32(e, *v)?, |d| unpack::float32(d),
        |s, w| s.c_str(float::format_f32(*w).as_bytes());
    FloatF: F32 = |e, v| pack::float32(e, v.0)?, |d| Ok(F32(unpack::float32(d)?)),
        |s, w| s.c_str(float::format_f32(w.0).as_bytes());
    DoubleF: F64 = |e, v| pack::float64(e, v.0)?, |d| Ok(F64(unpack::float64(d)?)),
        |s, w| s.c_str(float::format_f64(w.0).as_bytes());
    // SIZE, then the bytes
    Blob: Bytes = |e, v| pack::bytes_sized(e, v), |d| unpack::bytes_sized(d),
        |s, w| s.size(w.len() as u64) + w.len();
    HexBlob: Hex = |e, v| pack::bytes_sized(e, v), |d| Ok(Hex(unpack::bytes_sized(d)?)),
        |s, w| s.size(w.len() as u64) + w.len();
    KeyF: Key = |e, v| e.c_str(v.as_bytes())?, |d| unpack::key(d),
        |s, w| s.c_str(w.as_bytes());
    NspaceF: Nspace = |e, v| e.str(Some(v.as_pstring()))?, |d| unpack::nspace(d),
        |s, w| s.str(Some(w.as_pstring()));
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
    // a pmix_value_t with its type as a top-level VALUE writes it
    ValueF: Value = |e, v| pack::pack_value(e, v)?, |d| unpack::unpack_value(d),
        |s, w| pack::value_len(s, w, s.dialect.value_type_field());
    // the value of an INFO or PDATA: its type as the dialect writes it there
    InfoValue: Value = |e, v| pack::pack_value_as(e, v, e.dialect.info_type_field())?,
        |d| unpack::unpack_value_as(d, d.dialect.info_type_field()),
        |s, w| pack::value_len(s, w, s.dialect.info_type_field());
    Darray: DataArray = |e, v| pack::pack_darray(e, v)?, |d| unpack::unpack_darray(d),
        |s, w| pack::darray_len(s, w);
    RegexF: Regex = |e, v| pack::regex(e, v)?, |d| crate::regex::unpack(d),
        |s, w| match w {
            Regex::Text(t) => t.len() + 1,
            Regex::Blob(b) => b.len(),
            Regex::Packed(t) => s.i32(1) + s.str(t.as_ref()),
        };
    TopoF: Topology = |e, v| pack::topology(e, v)?, |d| unpack::topology(d),
        |s, w| s.str(w.xml.as_ref()) + w.support.len();
    // an argv counted by an INT32
    Argv32: Vec<PString> = |e, v| { e.count32(v.len())?; pack::argv(e, v)? },
        |d| { let n = d.count32(1)?; unpack::argv(d, n) },
        |s, w| s.count32(w.len()) + argv_len(s, w);
    // APP's argv, counted by a system-typed INT (argc)
    Argc: Vec<PString> = |e, v| { e.int(i32::try_from(v.len()).unwrap_or(i32::MAX)); pack::argv(e, v)? },
        |d| { let n = unpack::argc(d)?; unpack::argv(d, n) },
        |s, w| s.int(i32::try_from(w.len()).unwrap_or(i32::MAX)) + argv_len(s, w);
    // INFO lists counted by a SIZE
    Infos: Vec<Info> = |e, v| { e.size(v.len() as u64); pack::infos(e, v)? },
        |d| { let n = d.count_size(1)?; unpack::infos(d, n) },
        |s, w| infos_len(s, w);
    InfoSlice: Box<[Info]> = |e, v| { e.size(v.len() as u64); pack::infos(e, v)? },
        |d| Ok(<Infos as Form<Vec<Info>>>::get(d)?.into()),
        |s, w| infos_len(s, w);
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

fn argv_len(s: &Sizer, list: &[PString]) -> usize {
    list.iter().map(|x| s.str(Some(x))).sum()
}

fn infos_len(s: &Sizer, list: &[Info]) -> usize {
    s.size(list.len() as u64) + list.iter().map(|i| i.encoded_len(s)).sum::<usize>()
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

macro_rules! layout {
    ($($ty:ident { $($f:ident $(as $name:literal)?: $form:ty),* $(,)? } $(+ { $($rest:ident: $val:expr),* })?;)*) => {$(
        impl Layout for $ty {
            fn pack(&self, e: &mut Enc) -> Result<()> {
                $( <$form as Form<_>>::put(e, &self.$f).field(layout!(@name $f $($name)?))?; )*
                Ok(())
            }
            fn unpack(d: &mut Dec) -> Result<Self> {
                $( let $f = <$form as Form<_>>::get(d).field(layout!(@name $f $($name)?))?; )*
                Ok($ty { $($f,)* $($($rest: $val,)*)? })
            }
            fn encoded_len(&self, s: &Sizer) -> usize {
                0 $( + <$form as Form<_>>::len(s, &self.$f) )*
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
        pss: FloatText,
        vsize: FloatText,
        rss: FloatText,
        processor: I16Bits,
        sample_time: Tv,
    } + { percent_cpu: 0.0, peak_vsize: 0.0 };
    DiskStats {
        disk: Str,
        reads_completed: U64,
        reads_merged: U64,
        sectors_read: U64,
        milliseconds_reading: U64,
        writes_completed: U64,
        writes_merged: U64,
        sectors_written: U64,
        milliseconds_writing: U64,
        num_ios_in_progress: U64,
        milliseconds_io: U64,
        weighted_milliseconds_io: U64,
    };
    NetStats {
        net_interface: Str,
        num_bytes_recvd: U64,
        num_packets_recvd: U64,
        num_recv_errs: U64,
        num_bytes_sent: U64,
        num_packets_sent: U64,
        num_send_errs: U64,
    };
    NodeStats {
        node: Str,
        la: FloatText,
        la5: FloatText,
        la15: FloatText,
        total_mem: FloatText,
        free_mem: FloatText,
        buffers: FloatText,
        cached: FloatText,
        swap_cached: FloatText,
        swap_total: FloatText,
        swap_free: FloatText,
        mapped: FloatText,
        sample_time: Tv,
        diskstats: List<Lay>,
        netstats: List<Lay>,
    };
    // pmix_app_t: argc is argv's length
    App { cmd: Str, argv: Argc, env: Argv32, cwd: Cwd, maxprocs: IntF, info: Infos };
    Info { key: KeyF, flags: Flags, value: InfoValue };
    Pdata { proc: ProcF, key: KeyF, value: InfoValue };
    Kval { key: Str, value: ValueF };
    Buffer { buffer_type: BufType, bytes: Blob };
    Query { keys: Argv32, qualifiers: Infos };
    Envar { envar: Str, value: Str, separator: U8 };
    Coord { view: U8, coord: U32s };
    RegAttr { name: Str, string: KeyF, ty as "type": U16, description: Argv32 };
    Cpuset { cpus: Str };
    // a coordinate takes at least two bytes (its view and its count)
    Geometry { fabric: Size, uuid: Str, osname: Str, coordinates: List<Lay, 2> };
    DeviceDist { uuid: Str, osname: Str, devtype as "type": U64, mindist: U16, maxdist: U16 };
    Endpoint { uuid: Str, osname: Str, endpt: Blob };
    Device { uuid: Str, osname: Str, devtype as "type": U64 };
    ResourceUnit { devtype: U64, count: Size };
    NodePid { hostname: Str, nodeid: U32, pid: Pid };
    Regex2 { kind as "type": Str, data: Blob };
}
