//! `pmix_data_buffer_t` semantics: pack units in, unpack units out.

use crate::error::{Error, ErrorKind, Result};
use crate::wire::Dec;
use crate::{pack_unit, read_unit_header, unit_header, unpack, Format};
use bytes::Bytes;
use pmix_types::status::codes;
use pmix_types::{DataType, Info, Value};

/// The error for an unpack of `ty` while items of a partially unpacked
/// unit of `pending` are still queued.
fn pending_first(pending: DataType, ty: DataType, at: usize) -> Error {
    Error::new(
        ErrorKind::Invalid(format!(
            "{pending} items of a partially unpacked unit come first"
        )),
        at,
    )
    .in_type(ty)
}

enum Storage {
    Writable(Vec<u8>),
    Frozen(Bytes),
}

/// A PMIx data buffer in one wire format. Unpacking is non-destructive:
/// the bytes stay, a read position advances, `rewind` goes back.
pub struct DataBuffer {
    store: Storage,
    read: usize,
    format: Format,
    /// Items of a unit left over by a partial unpack.
    pending: Option<(DataType, std::collections::VecDeque<Value>)>,
}

/// What one unpack call produced.
#[derive(Clone, Debug, PartialEq)]
pub struct Unpacked {
    /// The values read, in order (as many as asked for, or as the unit holds).
    pub values: Vec<Value>,
    /// Items of the same unit still to be read (the standard's partial
    /// unpack, PMIX_ERR_UNPACK_INADEQUATE_SPACE). The next unpack of the
    /// same type continues with them.
    pub left_in_unit: usize,
}

impl Unpacked {
    /// 0, or -19 (PMIX_ERR_UNPACK_INADEQUATE_SPACE) for a partial unpack.
    pub fn status(&self) -> i32 {
        if self.left_in_unit > 0 {
            codes::PMIX_ERR_UNPACK_INADEQUATE_SPACE
        } else {
            codes::PMIX_SUCCESS
        }
    }
}

impl DataBuffer {
    /// An empty buffer that packs in `format`.
    pub fn new(format: Format) -> DataBuffer {
        DataBuffer {
            store: Storage::Writable(Vec::new()),
            read: 0,
            format,
            pending: None,
        }
    }

    /// A buffer over received bytes (no copy; byte objects unpacked from
    /// it share the allocation).
    pub fn from_bytes(format: Format, bytes: Bytes) -> DataBuffer {
        DataBuffer {
            store: Storage::Frozen(bytes),
            read: 0,
            format,
            pending: None,
        }
    }

    /// The dialect and buffer type this buffer packs and unpacks in.
    pub fn format(&self) -> &Format {
        &self.format
    }

    /// All bytes packed so far (read or not).
    pub fn as_bytes(&self) -> &[u8] {
        match &self.store {
            Storage::Writable(v) => v,
            Storage::Frozen(b) => b,
        }
    }

    /// The bytes not yet unpacked.
    pub fn unread(&self) -> &[u8] {
        &self.as_bytes()[self.read..]
    }

    /// How many bytes have been unpacked (the read offset into [`as_bytes`](Self::as_bytes)).
    pub fn position(&self) -> usize {
        self.read
    }

    /// Start reading from the beginning again.
    pub fn rewind(&mut self) {
        self.read = 0;
        self.pending = None;
    }

    #[inline]
    pub(crate) fn writable(&mut self) -> &mut Vec<u8> {
        if matches!(self.store, Storage::Frozen(_)) {
            self.thaw();
        }
        match &mut self.store {
            Storage::Writable(v) => v,
            Storage::Frozen(_) => unreachable!("converted above"),
        }
    }

    /// Frozen bytes made writable again (a copy: they may be shared).
    #[cold]
    fn thaw(&mut self) {
        if let Storage::Frozen(b) = &self.store {
            self.store = Storage::Writable(b.to_vec());
        }
    }

    fn frozen(&mut self) -> Bytes {
        let b = self.take_frozen();
        self.store = Storage::Frozen(b.clone());
        b
    }

    /// `PMIx_Data_pack`: append one unit. Nothing is written on error.
    pub fn pack(&mut self, ty: DataType, values: &[Value]) -> Result<()> {
        let fmt = self.format;
        pack_unit(self.writable(), &fmt, ty, values)
    }

    /// `PMIx_Data_unpack` with room for `max` values. Fewer requested than
    /// the unit holds gives those values and a non-zero `left_in_unit`; the
    /// next unpack of the same type continues with the rest of that unit
    /// (libpmix instead leaves them as raw bytes that no unpack can read
    /// correctly). On error the read position is unchanged.
    pub fn unpack(&mut self, ty: DataType, max: usize) -> Result<Unpacked> {
        let mut values = Vec::new();
        let left_in_unit = self.unpack_into(ty, max, &mut values)?;
        Ok(Unpacked {
            values,
            left_in_unit,
        })
    }

    /// [`unpack`](Self::unpack) into the caller's vector, as
    /// `PMIx_Data_unpack` fills the caller's array: the values are appended
    /// to `out` (which grows once per unit, so a vector kept between calls
    /// is reused) and the number of items left in the unit is returned. On
    /// error `out` and the read position are unchanged.
    pub fn unpack_into(&mut self, ty: DataType, max: usize, out: &mut Vec<Value>) -> Result<usize> {
        if max == 0 {
            return Err(Error::new(
                ErrorKind::InadequateSpace {
                    requested: 0,
                    present: 0,
                },
                self.read,
            ));
        }
        if let Some((pty, queue)) = &mut self.pending {
            if *pty != ty {
                return Err(pending_first(*pty, ty, self.read));
            }
            let take = queue.len().min(max);
            out.extend(queue.drain(..take));
            let left = queue.len();
            if left == 0 {
                self.pending = None;
            }
            return Ok(left);
        }
        let start = out.len();
        self.read_unit(ty, out, |d, n, out| {
            unpack::unpack_items_into(d, ty, n, out)
        })?;
        let mut left = 0;
        if out.len() - start > max {
            let rest: std::collections::VecDeque<Value> = out.drain(start + max..).collect();
            left = rest.len();
            self.pending = Some((ty, rest));
        }
        Ok(left)
    }

    /// One unit of INFO (or the rest of a partially unpacked one) as owned
    /// `Info`s appended to `out`: the values [`unpack_into`](Self::unpack_into)
    /// gives, without the `Box` that holds an INFO inside a `Value`.
    /// Returns how many were appended. On error `out` and the read position
    /// are unchanged.
    pub fn unpack_infos_into(&mut self, out: &mut Vec<Info>) -> Result<usize> {
        let ty = DataType::Info;
        let start = out.len();
        if let Some((pty, queue)) = self.pending.take() {
            if pty != ty {
                self.pending = Some((pty, queue));
                return Err(pending_first(pty, ty, self.read));
            }
            out.extend(queue.into_iter().filter_map(|v| match v {
                Value::Info(i) => Some(*i),
                _ => None, // a queue of INFO holds nothing else
            }));
            return Ok(out.len() - start);
        }
        self.read_unit(ty, out, |d, n, out| {
            unpack::check_registered(d, ty)?;
            unpack::read_items(d, ty, n, unpack::info, |i| out.push(i))
        })?;
        Ok(out.len() - start)
    }

    /// Read the unit of `ty` at the read position with `items` (given the
    /// reader after the header and the count), appending to `out`; on
    /// error `out` is truncated back and the read position stays.
    fn read_unit<T>(
        &mut self,
        ty: DataType,
        out: &mut Vec<T>,
        items: impl FnOnce(&mut Dec, usize, &mut Vec<T>) -> Result<()>,
    ) -> Result<()> {
        // the bytes are moved out for the call and back after (no refcount traffic)
        let buf = self.take_frozen();
        let start = out.len();
        let fmt = &self.format;
        let r = unit_header(&buf, self.read, fmt, ty).and_then(|(n, pos)| {
            let mut d = Dec::new(&buf, pos, fmt.dialect, fmt.ints());
            d.apply(fmt);
            items(&mut d, n, out)?;
            Ok(d.pos())
        });
        self.store = Storage::Frozen(buf);
        match r {
            Ok(end) => {
                self.read = end;
                Ok(())
            }
            Err(e) => {
                out.truncate(start);
                Err(e)
            }
        }
    }

    /// The contents as frozen bytes, moved out of the buffer (which is
    /// left empty until they are put back).
    fn take_frozen(&mut self) -> Bytes {
        match std::mem::replace(&mut self.store, Storage::Writable(Vec::new())) {
            Storage::Frozen(b) => b,
            Storage::Writable(v) => Bytes::from(v),
        }
    }

    /// Unpack exactly one value.
    pub fn unpack_one(&mut self, ty: DataType) -> Result<Value> {
        if self.pending.is_none() {
            // a unit of one plain item: read it in place, no vector
            let buf = self.take_frozen();
            let r = self.one_in_place(&buf, ty);
            self.store = Storage::Frozen(buf);
            if let Some((v, end)) = r? {
                self.read = end;
                return Ok(v);
            }
        }
        let mut u = self.unpack(ty, 1)?;
        match u.values.pop() {
            Some(v) if u.left_in_unit == 0 => Ok(v),
            _ => Err(Error::new(
                ErrorKind::Invalid("expected exactly one value".into()),
                self.read,
            )
            .in_type(ty)),
        }
    }

    /// The item and end of a unit of exactly one item of a type whose
    /// runs are item after item; `None` for anything else (the general
    /// path then reads it).
    fn one_in_place(&self, buf: &Bytes, ty: DataType) -> Result<Option<(Value, usize)>> {
        let fmt = &self.format;
        let mut d = Dec::new(buf, self.read, fmt.dialect, fmt.ints());
        d.apply(fmt);
        if !unpack::plain_run(&d, ty) {
            return Ok(None);
        }
        if read_unit_header(&mut d, fmt, ty)? != 1 {
            return Ok(None);
        }
        let mut one = None;
        unpack::check_registered(&d, ty)?;
        unpack::read_items(
            &mut d,
            ty,
            1,
            |d| unpack::unpack_item(d, ty),
            |v| one = Some(v),
        )?;
        Ok(one.map(|v| (v, d.pos())))
    }

    /// `PMIx_Data_copy_payload`: append the unread part of `src`; `src` is not advanced.
    pub fn copy_payload(&mut self, src: &DataBuffer) {
        let bytes = src.unread().to_vec();
        self.writable().extend_from_slice(&bytes);
    }

    /// `PMIx_Data_load`: replace the contents with `bytes`, read from the start.
    pub fn load(&mut self, bytes: Bytes) {
        self.store = Storage::Frozen(bytes);
        self.read = 0;
        self.pending = None;
    }

    /// `PMIx_Data_embed`: as load, from a borrowed copy.
    pub fn embed(&mut self, bytes: &[u8]) {
        self.load(Bytes::copy_from_slice(bytes));
    }

    /// `PMIx_Data_unload`: take the unread bytes and reset the buffer.
    pub fn unload(&mut self) -> Bytes {
        let buf = self.frozen();
        let rest = buf.slice(self.read..);
        self.store = Storage::Writable(Vec::new());
        self.read = 0;
        self.pending = None;
        rest
    }
}
