//! Wire forms and structure layouts: the codec column of the type table.
//!
//! A [`Form`] is one way of writing a Rust type on the wire, both
//! directions side by side (the trait and the forms over the wire
//! primitives alone are in `form.rs`, re-exported here; the forms over
//! the framing helpers of `pack.rs`/`unpack.rs` are here). The type table (`pmix_types::type_table!`)
//! names a form for every PMIx type; `dispatch.rs` generates the pack and
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
use crate::error::{Field, Result};
use crate::float;
use crate::form::forms;
pub(crate) use crate::form::{
    Blob, BoolF, Boxed, BufType, Cmd, Cwd, Flags, Form, HexBlob, I16Bits, IntF, Lay, List, Nothing,
    Pid, Sentinel, Size, Str, TypeCode, U32s, UintF, I16, I32, I64, I8, U16, U32, U64, U8,
};
pub(crate) use crate::item::Layout;
use crate::wire::{Dec, Enc, Sizer};
use crate::{pack, unpack};
use pmix_types::{
    App, Buffer, Coord, Cpuset, DataArray, Device, DeviceDist, DiskStats, Endpoint, Envar,
    Geometry, Info, Key, Kval, NetStats, NodePid, NodeStats, Nspace, PString, Pdata, Proc,
    ProcInfo, ProcStats, Query, RegAttr, Regex, Regex2, ResourceUnit, Timeval, Topology, Value,
    F32, F64,
};

forms! {
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
    KeyF: Key = |e, v| e.c_str(v.as_bytes())?, |d| unpack::key(d),
        |s, w| s.c_str(w.as_bytes());
    NspaceF: Nspace = |e, v| e.str(Some(v.as_pstring()))?, |d| unpack::nspace(d),
        |s, w| s.str(Some(w.as_pstring()));
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
}

fn argv_len(s: &Sizer, list: &[PString]) -> usize {
    list.iter().map(|x| s.str(Some(x))).sum()
}

fn infos_len(s: &Sizer, list: &[Info]) -> usize {
    s.size(list.len() as u64) + list.iter().map(|i| i.encoded_len(s)).sum::<usize>()
}

macro_rules! layout {
    ($($ty:ident { $($f:ident $(as $name:literal)?: $form:ty),* $(,)? } $(+ { $($rest:ident: $val:expr),* })?;)*) => {$(
        impl Layout for $ty {
            fn pack(&self, e: &mut Enc) -> Result<()> {
                $( <$form as Form<_>>::put(e, &self.$f).field(layout!(@name $f $($name)?))?; )*
                Ok(())
            }
            #[inline]
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
