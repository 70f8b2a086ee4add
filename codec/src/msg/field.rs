//! Typed reads and writes of message fields: the vocabulary the command
//! table (`commands.rs`) is written in.
//!
//! An [`Item`] is one PMIx type read into, and written from, its plain
//! Rust type (`i32` for STATUS, [`Proc`] for PROC, shared [`Bytes`] for a
//! BYTE_OBJECT, [`App`] for APP), with no generic `Value` in between:
//! the structured types are read and written in the wire form their
//! type-table row names (`layout.rs`). A [`Kind`] is how a field sits in the message: one unit of one
//! item, a SIZE count then a unit, units until the end, a trailing field
//! older peers leave out, … Both directions of a field are spelled once,
//! side by side, so the bytes a command decodes are the bytes it encodes.

use super::log_time_certain;
use crate::dialect::{Dialect, Format};
use crate::error::{Error, ErrorKind, Field, Result};
use crate::item::Layout;
use crate::layout::{Blob, Form, Lay, TopoF};
use crate::wire::{system_tag, to_int, to_size, Dec, Enc};
use crate::{pack, pack_unit_with, read_unit_header, unpack};
use bytes::Bytes;
use pmix_types::{
    App, Buffer, Cpuset, DataType, DeviceDist, Info, Kval, PString, Pdata, Proc, Query,
    ResourceUnit, Topology,
};
use std::marker::PhantomData;

/// The reading side of one message (or of one blob in it): the bytes, the
/// format, and what earlier fields said that later ones depend on.
#[derive(Clone)]
pub(crate) struct Rd<'a> {
    pub d: Dec<'a>,
    pub fmt: Format,
    /// The message's STATUS, once read (a failed LOOKUP carries no data).
    pub status: i32,
    /// A trailing field was absent: every later one is too.
    pub ended: bool,
}

impl<'a> Rd<'a> {
    pub fn new(fmt: Format, buf: &'a Bytes) -> Rd<'a> {
        let mut d = Dec::new(buf, 0, fmt.dialect, fmt.ints());
        d.apply(&fmt);
        Rd {
            d,
            fmt,
            status: 0,
            ended: false,
        }
    }

    /// Whether bytes are left.
    pub fn more(&self) -> bool {
        !self.d.is_empty()
    }

    pub fn pos(&self) -> usize {
        self.d.pos()
    }

    /// The header of one unit of `ty`: its count, not yet checked.
    fn header(&mut self, ty: DataType) -> Result<usize> {
        self.fmt
            .dialect
            .require(ty, false)
            .map_err(|k| self.d.err(k).in_type(ty))?;
        read_unit_header(&mut self.d, &self.fmt, ty)
    }

    /// One unit of exactly one `I` (how libpmix packs every single field).
    pub fn one<I: Item>(&mut self) -> Result<I::T> {
        let at = self.d.pos();
        match self.header(I::TYPE)? {
            1 => I::read_one(&mut self.d).map_err(|e| e.in_type(I::TYPE)),
            n => Err(Error::new(
                ErrorKind::Invalid(format!("a unit of {n} where the message has one item")),
                at,
            )
            .in_type(I::TYPE)),
        }
    }

    /// One unit of exactly `n` items of `I` (n > 0, announced before by a SIZE).
    pub fn run<I: Item>(&mut self, n: u64) -> Result<Vec<I::T>> {
        let at = self.d.pos();
        let m = self.header(I::TYPE)?;
        if m as u64 != n {
            return Err(Error::new(
                ErrorKind::Invalid(format!("{n} announced, the unit holds {m}")),
                at,
            )
            .in_type(I::TYPE));
        }
        I::read_run(&mut self.d, m)
    }

    /// The explicit "nothing left over" check after the last field.
    pub fn finish(&self, what: &str) -> Result<()> {
        self.d.expect_end().map_err(|e| e.in_field(what))
    }
}

/// The writing side of one message.
pub(crate) struct Wr {
    pub out: Vec<u8>,
    pub fmt: Format,
    pub status: i32,
    pub ended: bool,
}

impl Wr {
    pub fn new(fmt: Format) -> Wr {
        Wr {
            out: Vec::with_capacity(64),
            fmt,
            status: 0,
            ended: false,
        }
    }

    /// One unit of one `I`.
    pub fn one<I: Item>(&mut self, v: &I::T) -> Result<()> {
        let fmt = self.fmt;
        pack_unit_with(&mut self.out, &fmt, I::TYPE, 1, |e| {
            I::write_run(e, std::slice::from_ref(v))
        })
    }

    /// One unit of all of `items`.
    pub fn run<I: Item>(&mut self, items: &[I::T]) -> Result<()> {
        let fmt = self.fmt;
        pack_unit_with(&mut self.out, &fmt, I::TYPE, items.len(), |e| {
            I::write_run(e, items)
        })
    }
}

/// One PMIx type as its plain Rust type.
pub(crate) trait Item {
    type T;
    const TYPE: DataType;
    /// One item of a unit of one.
    fn read_one(d: &mut Dec) -> Result<Self::T>;
    /// The `n` items of one unit (header read), the count checked against
    /// the bytes remaining before anything is allocated.
    fn read_run(d: &mut Dec, n: usize) -> Result<Vec<Self::T>>;
    /// The items of one unit (the header is written by the caller).
    fn write_run(e: &mut Enc, items: &[Self::T]) -> Result<()>;
}

/// Write the items of a unit of `ty` one by one; an error names the type
/// and, in a run, the index.
fn write_each<T>(
    e: &mut Enc,
    ty: DataType,
    items: &[T],
    mut put: impl FnMut(&mut Enc, &T) -> Result<()>,
) -> Result<()> {
    for (i, v) in items.iter().enumerate() {
        put(e, v).map_err(|err| {
            let err = err.in_type(ty);
            if items.len() > 1 {
                err.in_field(format!("[{i}]"))
            } else {
                err
            }
        })?;
    }
    Ok(())
}

/// Items read and written one by one, with no run-level prefix.
macro_rules! plain_items {
    ($($name:ident : $t:ty = $ty:ident, |$d:ident| $read:expr, |$e:ident, $v:ident| $write:expr;)*) => {$(
        pub(crate) struct $name;
        impl Item for $name {
            type T = $t;
            const TYPE: DataType = DataType::$ty;
            #[inline]
            fn read_one($d: &mut Dec) -> Result<$t> {
                $read
            }
            fn read_run(d: &mut Dec, n: usize) -> Result<Vec<$t>> {
                let mut out = Vec::new();
                unpack::read_items(d, Self::TYPE, n, |d| Self::read_one(d), |v| out.push(v))?;
                Ok(out)
            }
            fn write_run(e: &mut Enc, items: &[$t]) -> Result<()> {
                write_each(e, Self::TYPE, items, |$e, $v| $write)
            }
        }
    )*};
}

plain_items! {
    CommandI: u8 = Command,
        |d| if d.dialect.command_is_u32() { Ok(d.u32()? as u8) } else { d.u8() },
        |e, v| { if e.dialect.command_is_u32() { e.u32(*v as u32) } else { e.u8(*v) } Ok(()) };
    U32: u32 = Uint32, |d| d.u32(), |e, v| { e.u32(*v); Ok(()) };
    Channel: u16 = IofChannel, |d| d.u16(), |e, v| { e.u16(*v); Ok(()) };
    Time: u64 = Time, |d| d.u64(), |e, v| { e.u64(*v); Ok(()) };
    AllocDir: u8 = AllocDirective, |d| d.u8(), |e, v| { e.u8(*v); Ok(()) };
    ResBlockDir: u8 = ResBlockDirective, |d| d.u8(), |e, v| { e.u8(*v); Ok(()) };
    Str: Option<PString> = String, |d| d.str(), |e, v| e.str(v.as_ref());
    BoolI: bool = Bool, |d| Ok(d.u8()? != 0), |e, v| { e.u8(u8::from(*v)); Ok(()) };
    ProcI: Proc = Proc, |d| unpack::proc_(d), |e, v| pack::proc_(e, v);
    InfoI: Info = Info, |d| <Info as Layout>::unpack(d), |e, v| Layout::pack(v, e);
    KvalI: Kval = Kval,
        |d| Ok(Kval { key: d.str().field("key")?, value: unpack::unpack_value(d).field("value")? }),
        |e, v| { e.str(v.key.as_ref()).field("key")?; pack::pack_value(e, &v.value).field("value") };
    Cpus: Cpuset = ProcCpuset, |d| Ok(Cpuset { cpus: d.str()? }), |e, v| e.str(v.cpus.as_ref());
    ByteObj: Bytes = ByteObject, |d| blob(d), |e, v| Blob::put(e, v);
}

/// A SIZE-prefixed blob, read through a bounded sub-reader and shared
/// with the input (no copy).
pub(crate) fn blob(d: &mut Dec) -> Result<Bytes> {
    let n = d.count_size(1)?;
    let mut sub = d.sub(n)?;
    Ok(sub.rest_bytes())
}

/// The integer types that some formats carry behind one "system type" tag
/// per unit (SIZE with fixed integers; v12's widened STATUS, SCOPE,
/// DATA_RANGE and PROC_RANK).
macro_rules! tagged_items {
    ($($name:ident : $t:ty = $ty:ident, |$d:ident| $plain:expr, |$e:ident, $v:ident| $put:expr, $from:expr;)*) => {$(
        pub(crate) struct $name;
        impl $name {
            /// One item after the unit's system tag `head` (code and offset), if any.
            #[inline]
            fn item($d: &mut Dec, head: Option<(u16, usize)>) -> Result<$t> {
                match head {
                    None => $plain,
                    Some((code, at)) => {
                        let vat = $d.pos();
                        let v = $d.integer_as(code, DataType::$ty.name(), at)?;
                        let from: fn(i128, usize) -> Result<$t> = $from;
                        from(v, vat)
                    }
                }
            }
            fn head(d: &mut Dec) -> Result<Option<(u16, usize)>> {
                if system_tag(DataType::$ty, d.ints, d.dialect).is_some() {
                    let at = d.pos();
                    Ok(Some((d.sys_tag()?, at)))
                } else {
                    Ok(None)
                }
            }
        }
        impl Item for $name {
            type T = $t;
            const TYPE: DataType = DataType::$ty;
            #[inline]
            fn read_one(d: &mut Dec) -> Result<$t> {
                let head = Self::head(d)?;
                Self::item(d, head)
            }
            fn read_run(d: &mut Dec, n: usize) -> Result<Vec<$t>> {
                let head = Self::head(d)?;
                let mut out = Vec::new();
                unpack::read_items(d, Self::TYPE, n, |d| Self::item(d, head), |v| out.push(v))?;
                Ok(out)
            }
            fn write_run($e: &mut Enc, items: &[$t]) -> Result<()> {
                match system_tag(DataType::$ty, $e.ints, $e.dialect) {
                    Some(tag) => {
                        $e.sys_tag(tag);
                        for &x in items {
                            match tag {
                                DataType::Uint64 => $e.u64(x as u64),
                                DataType::Uint32 => $e.u32(x as u32),
                                _ => $e.i32(x as i32),
                            }
                        }
                    }
                    None => {
                        for $v in items {
                            $put;
                        }
                    }
                }
                Ok(())
            }
        }
    )*};
}

tagged_items! {
    StatusI: i32 = Status, |d| d.i32(), |e, v| e.i32(*v), to_int;
    Rank: u32 = ProcRank, |d| d.u32(), |e, v| e.u32(*v), |v, at| Ok(to_int(v, at)? as u32);
    Scope: u8 = Scope, |d| d.u8(), |e, v| e.u8(*v), |v, _| Ok(v as u8);
    Range: u8 = DataRange, |d| d.u8(), |e, v| e.u8(*v), |v, _| Ok(v as u8);
    SizeI: u64 = Size, |d| d.size(), |e, v| e.size(*v), to_size;
}

/// BUFFER: the type byte (not in v20/v12), then a SIZE-prefixed blob read
/// through a bounded sub-reader; the bytes are shared with the input.
pub(crate) struct Buf;
impl Item for Buf {
    type T = Buffer;
    const TYPE: DataType = DataType::Buffer;
    fn read_one(d: &mut Dec) -> Result<Buffer> {
        let buffer_type = if d.dialect.is_legacy() { 0 } else { d.u8()? };
        Ok(Buffer {
            buffer_type,
            bytes: blob(d).field("bytes")?,
        })
    }
    fn read_run(d: &mut Dec, n: usize) -> Result<Vec<Buffer>> {
        let mut out = Vec::new();
        unpack::read_items(d, Self::TYPE, n, Self::read_one, |v| out.push(v))?;
        Ok(out)
    }
    fn write_run(e: &mut Enc, items: &[Buffer]) -> Result<()> {
        // the type table's layout: the type byte (refused if set where the
        // dialect has none), then SIZE and the bytes
        write_each(e, Self::TYPE, items, |e, b| b.pack(e))
    }
}

/// The structured types messages carry rarely (spawn's apps, queries,
/// lookup's data, a topology, resource units, device distances): each
/// read and written in the wire form its type-table row names
/// (`layout.rs`), so its field order is spelled in one place, with no
/// `Value` in between.
macro_rules! form_items {
    ($($name:ident : $t:ty = $ty:ident, $form:ty;)*) => {$(
        pub(crate) struct $name;
        impl Item for $name {
            type T = $t;
            const TYPE: DataType = DataType::$ty;
            fn read_one(d: &mut Dec) -> Result<$t> {
                v12_lacks(d.dialect, Self::TYPE, "v12 cannot unpack DATA_ARRAY, PROC_INFO or QUERY")
                    .map_err(|k| d.err(k).in_type(Self::TYPE))?;
                <$form as Form<$t>>::get(d)
            }
            fn read_run(d: &mut Dec, n: usize) -> Result<Vec<$t>> {
                v12_lacks(d.dialect, Self::TYPE, "v12 cannot unpack DATA_ARRAY, PROC_INFO or QUERY")
                    .map_err(|k| d.err(k).in_type(Self::TYPE))?;
                let mut out = Vec::new();
                unpack::read_items(d, Self::TYPE, n, <$form as Form<$t>>::get, |v| out.push(v))?;
                Ok(out)
            }
            fn write_run(e: &mut Enc, items: &[$t]) -> Result<()> {
                v12_lacks(e.dialect, Self::TYPE, "v12 cannot pack DATA_ARRAY, PROC_INFO or QUERY")
                    .map_err(|k| e.err(k).in_type(Self::TYPE))?;
                write_each(e, Self::TYPE, items, <$form as Form<$t>>::put)
            }
        }
    )*};
}

form_items! {
    AppI: App = App, Lay;
    QueryI: Query = Query, Lay;
    PdataI: Pdata = Pdata, Lay;
    Topo: Topology = Topo, TopoF;
    ResUnit: ResourceUnit = ResourceUnit, Lay;
    DevDist: DeviceDist = DeviceDist, Lay;
}

/// v12 registers QUERY but has no layout for it: refused in both
/// directions with the words `pack_items` and `unpack_items` use.
fn v12_lacks(
    dialect: Dialect,
    ty: DataType,
    why: &'static str,
) -> std::result::Result<(), ErrorKind> {
    if dialect == Dialect::V12 && ty == DataType::Query {
        return Err(ErrorKind::NotSupported(why));
    }
    Ok(())
}

/// How a field sits in a message, in both directions.
pub(crate) trait Kind {
    type T;
    fn get(r: &mut Rd, field: &'static str) -> Result<Self::T>;
    fn put(w: &mut Wr, v: &Self::T, field: &'static str) -> Result<()>;
}

/// One unit of one item.
pub(crate) struct One<I>(PhantomData<I>);
impl<I: Item> Kind for One<I> {
    type T = I::T;
    #[inline]
    fn get(r: &mut Rd, field: &'static str) -> Result<I::T> {
        r.one::<I>().field(field)
    }
    #[inline]
    fn put(w: &mut Wr, v: &I::T, field: &'static str) -> Result<()> {
        w.one::<I>(v).field(field)
    }
}

/// The message's STATUS: one unit, remembered for the fields after it.
pub(crate) struct St;
impl Kind for St {
    type T = i32;
    fn get(r: &mut Rd, field: &'static str) -> Result<i32> {
        // in our numbering (7.0's) from the peer's (spec-notes/pmix7.md)
        let s = r.one::<StatusI>().field(field)?;
        let s = r.fmt.release_family().status_numbering().from_peer(s);
        r.status = s;
        Ok(s)
    }
    fn put(w: &mut Wr, v: &i32, field: &'static str) -> Result<()> {
        w.status = *v;
        let theirs = w.fmt.release_family().status_numbering().to_peer(*v);
        w.one::<StatusI>(&theirs).field(field)
    }
}

/// `SIZE n`, then (only if n > 0) one unit of the n items.
pub(crate) struct Counted<I>(PhantomData<I>);
impl<I: Item> Kind for Counted<I> {
    type T = Vec<I::T>;
    fn get(r: &mut Rd, field: &'static str) -> Result<Vec<I::T>> {
        (|| {
            let n = r.one::<SizeI>()?;
            if n == 0 {
                return Ok(Vec::new());
            }
            r.run::<I>(n)
        })()
        .field(field)
    }
    fn put(w: &mut Wr, v: &Vec<I::T>, field: &'static str) -> Result<()> {
        (|| {
            w.one::<SizeI>(&(v.len() as u64))?;
            if !v.is_empty() {
                w.run::<I>(v)?;
            }
            Ok(())
        })()
        .field(field)
    }
}

/// `SIZE n`, then n units of one item each (LOOKUP's keys): a hostile
/// count runs out of bytes before it runs out of memory.
pub(crate) struct EachCounted<I>(PhantomData<I>);
impl<I: Item> Kind for EachCounted<I> {
    type T = Vec<I::T>;
    fn get(r: &mut Rd, field: &'static str) -> Result<Vec<I::T>> {
        (|| {
            let n = r.one::<SizeI>()?;
            let mut out = Vec::new();
            for _ in 0..n {
                out.push(r.one::<I>()?);
            }
            Ok(out)
        })()
        .field(field)
    }
    fn put(w: &mut Wr, v: &Vec<I::T>, field: &'static str) -> Result<()> {
        (|| {
            w.one::<SizeI>(&(v.len() as u64))?;
            v.iter().try_for_each(|x| w.one::<I>(x))
        })()
        .field(field)
    }
}

/// `K` again and again until the message ends (COMMIT's scoped blobs,
/// the KVALs of a job-info reply). Nothing may follow it.
pub(crate) struct UntilEnd<K>(PhantomData<K>);
impl<K: Kind> Kind for UntilEnd<K> {
    type T = Vec<K::T>;
    fn get(r: &mut Rd, field: &'static str) -> Result<Vec<K::T>> {
        let mut out = Vec::new();
        while r.more() {
            out.push(K::get(r, field)?);
        }
        Ok(out)
    }
    fn put(w: &mut Wr, v: &Vec<K::T>, field: &'static str) -> Result<()> {
        if w.ended && !v.is_empty() {
            return Err(after_absent(w, field));
        }
        v.iter().try_for_each(|x| K::put(w, x, field))
    }
}

/// Two kinds in a row, as one element (COMMIT's SCOPE + BUFFER).
pub(crate) struct Pair<A, B>(PhantomData<(A, B)>);
impl<A: Kind, B: Kind> Kind for Pair<A, B> {
    type T = (A::T, B::T);
    fn get(r: &mut Rd, field: &'static str) -> Result<(A::T, B::T)> {
        Ok((A::get(r, field)?, B::get(r, field)?))
    }
    fn put(w: &mut Wr, v: &(A::T, B::T), field: &'static str) -> Result<()> {
        A::put(w, &v.0, field)?;
        B::put(w, &v.1, field)
    }
}

/// A trailing field that older peers (or a failed reply) leave out: read
/// if anything is left. Once one is absent, every later one is too; a
/// present field after an absent one cannot be encoded.
pub(crate) struct Tail<K>(PhantomData<K>);
impl<K: Kind> Kind for Tail<K> {
    type T = Option<K::T>;
    fn get(r: &mut Rd, field: &'static str) -> Result<Option<K::T>> {
        if r.more() {
            K::get(r, field).map(Some)
        } else {
            r.ended = true;
            Ok(None)
        }
    }
    fn put(w: &mut Wr, v: &Option<K::T>, field: &'static str) -> Result<()> {
        match v {
            Some(_) if w.ended => Err(after_absent(w, field)),
            Some(x) => K::put(w, x, field),
            None => {
                w.ended = true;
                Ok(())
            }
        }
    }
}

#[cold]
fn after_absent(w: &Wr, field: &str) -> Error {
    Error::new(
        ErrorKind::Invalid(format!("{field} after a field left out")),
        w.out.len(),
    )
}

/// QUERY's reply INFOs: sent on success (even none), absent after most
/// failures; decoded as none when absent.
pub(crate) struct InfosUnlessFailed;
impl Kind for InfosUnlessFailed {
    type T = Vec<Info>;
    fn get(r: &mut Rd, field: &'static str) -> Result<Vec<Info>> {
        Ok(Tail::<Counted<InfoI>>::get(r, field)?.unwrap_or_default())
    }
    fn put(w: &mut Wr, v: &Vec<Info>, field: &'static str) -> Result<()> {
        if w.status == 0 || !v.is_empty() {
            Counted::<InfoI>::put(w, v, field)?;
        }
        Ok(())
    }
}

/// LOOKUP's reply data: present exactly when the status is success.
pub(crate) struct IfOk<K>(PhantomData<K>);
impl<T, K: Kind<T = Vec<T>>> Kind for IfOk<K> {
    type T = Vec<T>;
    fn get(r: &mut Rd, field: &'static str) -> Result<Vec<T>> {
        if r.status == 0 {
            K::get(r, field)
        } else {
            Ok(Vec::new())
        }
    }
    fn put(w: &mut Wr, v: &Vec<T>, field: &'static str) -> Result<()> {
        if w.status == 0 {
            K::put(w, v, field)
        } else if v.is_empty() {
            Ok(())
        } else {
            Err(Error::new(
                ErrorKind::Invalid(format!("a failed reply carries no {field}")),
                w.out.len(),
            ))
        }
    }
}

/// LOG's TIME: always there in the v3+ dialects; in v12, v20 and v21 a
/// 2.x peer leaves it out and a 3.0+ one sends it
/// ([`log_sends_time`](super::log_sends_time)).
/// There the rest of the request is tried without TIME first (its two
/// SIZE + INFOs to the end), then with; a TIME read as a count + SIZE
/// fails at the SIZE (its type tag or its 8 bytes), a missing one leaves
/// the read short. When neither fits, the attempt that got further is
/// reported.
pub(crate) struct LogTime;
impl Kind for LogTime {
    type T = Option<u64>;
    fn get(r: &mut Rd, field: &'static str) -> Result<Option<u64>> {
        if log_time_certain(&r.fmt) {
            return One::<Time>::get(r, field).map(Some);
        }
        let rest = |r: &mut Rd| -> Result<()> {
            Counted::<InfoI>::get(r, "data")?;
            Counted::<InfoI>::get(r, "directives")?;
            r.finish("LOG")
        };
        let e1 = match rest(&mut r.clone()) {
            Ok(()) => return Ok(None),
            Err(e) => e,
        };
        let mut with = r.clone();
        match One::<Time>::get(&mut with, field).and_then(|_| rest(&mut with)) {
            Ok(()) => One::<Time>::get(r, field).map(Some),
            Err(e2) => Err(if e2.offset > e1.offset { e2 } else { e1 }),
        }
    }
    fn put(w: &mut Wr, v: &Option<u64>, field: &'static str) -> Result<()> {
        match v {
            Some(t) => One::<Time>::put(w, t, field),
            None => Ok(()),
        }
    }
}

/// GROUP_CONSTRUCT's reply after the status, in the form of the release
/// that reads it (spec-notes/commands.md, "GROUP_CONSTRUCT's reply"). The
/// bytes do not name their release: a lone SIZE is 4.x's; else 5.0's form
/// is tried before 6.x's in v41 and older (5.0 peers speak v41), 6.x's
/// first in v51 and later (only 6.x peers speak those).
pub(crate) struct GroupBody;
type GroupForm = fn(&mut Rd, &'static str) -> Result<super::GroupReply>;
impl Kind for GroupBody {
    type T = super::GroupReply;
    fn get(r: &mut Rd, field: &'static str) -> Result<super::GroupReply> {
        use super::GroupReply as G;
        if !r.more() {
            return Ok(G::None);
        }
        fn v4(r: &mut Rd, field: &'static str) -> Result<G> {
            let ctxid = One::<SizeI>::get(r, "ctxid")?;
            r.finish(field)?;
            Ok(G::V4 { ctxid })
        }
        fn v5(r: &mut Rd, field: &'static str) -> Result<G> {
            let members = Counted::<ProcI>::get(r, "members")?;
            let ctxid = One::<SizeI>::get(r, "ctxid")?;
            let blobs = UntilEnd::<One<ByteObj>>::get(r, "blobs")?;
            r.finish(field)?;
            Ok(G::V5 {
                members,
                ctxid,
                blobs,
            })
        }
        fn v6(r: &mut Rd, field: &'static str) -> Result<G> {
            let members = Counted::<ProcI>::get(r, "members")?;
            let got = One::<BoolI>::get(r, "gotctxid")?;
            let ctxid = if got {
                Some(One::<SizeI>::get(r, "ctxid")?)
            } else {
                None
            };
            let info = Tail::<Counted<InfoI>>::get(r, "info")?;
            r.finish(field)?;
            Ok(G::V6 {
                members,
                ctxid,
                info,
            })
        }
        let mut best: Option<crate::error::Error> = None;
        let forms: [GroupForm; 3] = if r.fmt.dialect >= Dialect::V51 {
            [v4, v6, v5]
        } else {
            [v4, v5, v6]
        };
        for form in forms {
            let mut t = r.clone();
            match form(&mut t, field) {
                Ok(g) => {
                    *r = t;
                    return Ok(g);
                }
                Err(e) => {
                    if best.as_ref().is_none_or(|b| e.offset > b.offset) {
                        best = Some(e)
                    }
                }
            }
        }
        Err(best.expect("three forms were tried"))
    }
    fn put(w: &mut Wr, v: &super::GroupReply, _field: &'static str) -> Result<()> {
        use super::GroupReply as G;
        match v {
            G::None => Ok(()),
            G::V4 { ctxid } => One::<SizeI>::put(w, ctxid, "ctxid"),
            G::V5 {
                members,
                ctxid,
                blobs,
            } => {
                Counted::<ProcI>::put(w, members, "members")?;
                One::<SizeI>::put(w, ctxid, "ctxid")?;
                UntilEnd::<One<ByteObj>>::put(w, blobs, "blobs")
            }
            G::V6 {
                members,
                ctxid,
                info,
            } => {
                Counted::<ProcI>::put(w, members, "members")?;
                One::<BoolI>::put(w, &ctxid.is_some(), "gotctxid")?;
                if let Some(c) = ctxid {
                    One::<SizeI>::put(w, c, "ctxid")?;
                }
                Tail::<Counted<InfoI>>::put(w, info, "info")
            }
        }
    }
}

/// GROUP_DESTRUCT's members: 5.0 and later clients pack SIZE + PROCs
/// between the group's name and its infos, 4.x clients nothing. Read as
/// 5.0's form when the rest of the request parses that way to its end.
pub(crate) struct DestructMembers;
impl Kind for DestructMembers {
    type T = Option<Vec<Proc>>;
    fn get(r: &mut Rd, field: &'static str) -> Result<Option<Vec<Proc>>> {
        let mut t = r.clone();
        let whole = Counted::<ProcI>::get(&mut t, field)
            .and_then(|p| Counted::<InfoI>::get(&mut t, "info").map(|_| p))
            .and_then(|p| t.finish("GROUP_DESTRUCT").map(|_| p));
        match whole {
            Ok(_) => Counted::<ProcI>::get(r, field).map(Some),
            Err(_) => Ok(None),
        }
    }
    fn put(w: &mut Wr, v: &Option<Vec<Proc>>, field: &'static str) -> Result<()> {
        match v {
            Some(p) => Counted::<ProcI>::put(w, p, field),
            None => Ok(()),
        }
    }
}
