//! The byte layout of libpmix 4.2.x's ds21 shared-memory store, as pure
//! functions over byte slices (spec-notes/dstore.md §2, §3.1): sizes,
//! records, extension slots, the rank index, the namespace table, the lock
//! segment's header, and one namespace's writer and reader over any
//! [`Segs`]. Nothing here maps files or takes locks (`files.rs` does).
//!
//! Everything read back (free offsets, rank slots, record lengths) is
//! checked against the bytes there are: the files are read-only for
//! clients, but the reader also serves `pmixw`-side tests and tools over
//! bytes from elsewhere.

#![forbid(unsafe_code)]

use std::fmt;

/// Default initial (namespace table) segment size (`INITIAL_SEG_SIZE`).
pub const INITIAL_SEG_SIZE: usize = 4096;
/// Default meta (rank index) segment size (`NS_META_SEG_SIZE`).
pub const META_SEG_SIZE: usize = 1 << 22;
/// Default data segment size (`NS_DATA_SEG_SIZE`).
pub const DATA_SEG_SIZE: usize = 1 << 22;
/// `size_t` on the platforms this store is offered on (64-bit).
const W: usize = 8;
/// Bytes of one namespace entry (`ns_seg_info_t`).
pub const NS_ENTRY: usize = 288;
/// Room for a namespace name, NUL included (PMIX_MAX_NSLEN + 1).
pub const NS_NAME: usize = 256;
/// Bytes of one rank slot (`rank_meta_info`).
pub const RANK_SLOT: usize = 24;
/// Bytes of an extension slot: header, hash, empty key, an offset.
pub const EXT_SLOT: usize = 2 * W + 1 + W;
/// Record header bit: an extension slot.
pub const FLAG_EXT: u64 = 1 << 63;
/// Record header bit: superseded by a later record of the same key.
pub const FLAG_INVALID: u64 = 1 << 62;
/// Record header bits holding the length.
pub const LEN_MASK: u64 = (1 << 62) - 1;
/// `PMIX_RANK_WILDCARD`: job-level data, slot 0.
pub const WILDCARD: u32 = 0xFFFF_FFFE;

/// The segment sizes server and clients must agree on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizes {
    /// Initial segment.
    pub initial: usize,
    /// Each meta segment.
    pub meta: usize,
    /// Each data segment.
    pub data: usize,
}

impl Default for Sizes {
    fn default() -> Sizes {
        Sizes {
            initial: INITIAL_SEG_SIZE,
            meta: META_SEG_SIZE,
            data: DATA_SEG_SIZE,
        }
    }
}

/// C `strtoul(s, NULL, 10)` as far as the sizes need it: leading blanks,
/// an optional sign, the longest run of digits; 0 when there is none;
/// saturating.
fn strtoul(s: &str) -> usize {
    let t = s.trim_start();
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let mut n: usize = 0;
    for c in t.bytes().take_while(u8::is_ascii_digit) {
        n = n.saturating_mul(10).saturating_add((c - b'0') as usize);
    }
    if neg {
        n.wrapping_neg()
    } else {
        n
    }
}

impl Sizes {
    /// The sizes libpmix computes from `INITIAL_SEG_SIZE`,
    /// `NS_META_SEG_SIZE`, `NS_DATA_SEG_SIZE` (`_set_constants_from_env`):
    /// a value below a page is raised to a page; unset or 0 is the default.
    pub fn from_env(get: impl Fn(&str) -> Option<String>, page: usize) -> Sizes {
        let one = |var: &str, default: usize| match get(var) {
            Some(s) => match strtoul(&s).max(page) {
                0 => default,
                n => n,
            },
            None => default,
        };
        Sizes {
            initial: one("INITIAL_SEG_SIZE", INITIAL_SEG_SIZE),
            meta: one("NS_META_SEG_SIZE", META_SEG_SIZE),
            data: one("NS_DATA_SEG_SIZE", DATA_SEG_SIZE),
        }
    }

    /// Namespace entries per initial segment.
    pub fn ns_per_initial(&self) -> usize {
        self.initial.saturating_sub(2 * W) / NS_ENTRY
    }

    /// Rank slots per meta segment.
    pub fn slots_per_meta(&self) -> usize {
        self.meta.saturating_sub(W) / RANK_SLOT
    }

    /// Where a rank's slot is: (meta segment id, byte offset in it).
    /// Slot 0 is the wildcard's, slot r+1 rank r's.
    pub fn rank_slot(&self, rank: u32) -> (usize, usize) {
        let n = if rank == WILDCARD {
            0
        } else {
            rank as usize + 1
        };
        let per = self.slots_per_meta().max(1);
        (n / per, W + (n % per) * RANK_SLOT)
    }
}

/// The ds21 key hash: the key's bytes as C `char` (signed on x86_64,
/// unsigned on s390x and aarch64) summed into a `size_t`.
pub fn key_hash(key: &[u8]) -> u64 {
    key.iter().fold(0u64, |h, &b| {
        h.wrapping_add(b as std::ffi::c_char as i64 as u64)
    })
}

/// One ds21 record: length (header included), key hash, key and NUL, the
/// packed `pmix_value_t`. None for a key holding a NUL or a record too
/// long for the header.
pub fn record(key: &[u8], value: &[u8]) -> Option<Vec<u8>> {
    if key.contains(&0) {
        return None;
    }
    let len = 2 * W + key.len() + 1 + value.len();
    if len as u64 > LEN_MASK {
        return None;
    }
    let mut r = Vec::with_capacity(len);
    r.extend_from_slice(&(len as u64).to_ne_bytes());
    r.extend_from_slice(&key_hash(key).to_ne_bytes());
    r.extend_from_slice(key);
    r.push(0);
    r.extend_from_slice(value);
    Some(r)
}

/// An extension slot holding `next` (a global data offset; 0: the rank's
/// data ends here).
pub fn ext_slot(next: u64) -> [u8; EXT_SLOT] {
    let mut s = [0u8; EXT_SLOT];
    s[..W].copy_from_slice(&(EXT_SLOT as u64 | FLAG_EXT).to_ne_bytes());
    // hash of the empty key: 0; then the empty key's NUL
    s[2 * W + 1..].copy_from_slice(&next.to_ne_bytes());
    s
}

/// One namespace entry of the initial segment: name, session index 0,
/// tracker 0, the counts of meta and data segments. None for a name that
/// does not fit or holds a NUL.
pub fn ns_entry(name: &str, meta_segs: u64, data_segs: u64) -> Option<[u8; NS_ENTRY]> {
    let n = name.as_bytes();
    if n.len() >= NS_NAME || n.contains(&0) {
        return None;
    }
    let mut e = [0u8; NS_ENTRY];
    e[..n.len()].copy_from_slice(n);
    e[272..280].copy_from_slice(&meta_segs.to_ne_bytes());
    e[280..288].copy_from_slice(&data_segs.to_ne_bytes());
    Some(e)
}

/// Read a `size_t` at `off`, if the bytes are there.
pub fn get_u64(b: &[u8], off: usize) -> Option<u64> {
    let s = b.get(off..off.checked_add(W)?)?;
    Some(u64::from_ne_bytes(s.try_into().ok()?))
}

/// Write a `size_t` at `off`; false if it does not fit.
pub fn put_u64(b: &mut [u8], off: usize, v: u64) -> bool {
    match off.checked_add(W).and_then(|e| b.get_mut(off..e)) {
        Some(s) => {
            s.copy_from_slice(&v.to_ne_bytes());
            true
        }
        None => false,
    }
}

/// Add a namespace entry to an initial segment: at `16 + used·288`, then
/// `used + 1`. Returns its index, or None when the segment is full (or
/// corrupt).
pub fn initial_add(seg: &mut [u8], entry: &[u8; NS_ENTRY], sizes: &Sizes) -> Option<usize> {
    let used = usize::try_from(get_u64(seg, 0)?).ok()?;
    if used >= sizes.ns_per_initial() {
        return None;
    }
    let off = 2 * W + used * NS_ENTRY;
    seg.get_mut(off..off + NS_ENTRY)?.copy_from_slice(entry);
    put_u64(seg, 0, used as u64 + 1);
    Some(used)
}

/// Set the meta and data segment counts of entry `idx`.
pub fn initial_set_counts(seg: &mut [u8], idx: usize, meta_segs: u64, data_segs: u64) -> bool {
    let off = 2 * W + idx * NS_ENTRY;
    put_u64(seg, off + 272, meta_segs) && put_u64(seg, off + 280, data_segs)
}

/// Clear entry `idx`'s name (its first byte: one store, which no reader
/// can see torn), so no client finds the namespace there any more; the
/// entry stays counted, unused (a namespace deregistered).
pub fn initial_clear(seg: &mut [u8], idx: usize) -> bool {
    match seg.get_mut(2 * W + idx * NS_ENTRY) {
        Some(b) => {
            *b = 0;
            true
        }
        None => false,
    }
}

/// Find a namespace in an initial segment, as a client does: the entry's
/// name equal over `strlen(name)+1` bytes. Returns (meta segs, data segs).
pub fn initial_find(seg: &[u8], name: &str, sizes: &Sizes) -> Option<(u64, u64)> {
    let used = usize::try_from(get_u64(seg, 0)?)
        .ok()?
        .min(sizes.ns_per_initial());
    let want = name.as_bytes();
    (0..used).find_map(|i| {
        let off = 2 * W + i * NS_ENTRY;
        let e = seg.get(off..off + NS_ENTRY)?;
        let n = e.get(..=want.len())?;
        (n[..want.len()] == *want && n[want.len()] == 0)
            .then(|| Some((get_u64(e, 272)?, get_u64(e, 280)?)))
            .flatten()
    })
}

/// Every namespace entry of an initial segment: (name, entry bytes), as
/// many as its count says and the segment holds.
pub fn initial_entries(seg: &[u8], sizes: &Sizes) -> Vec<(String, [u8; NS_ENTRY])> {
    let used = get_u64(seg, 0)
        .and_then(|u| usize::try_from(u).ok())
        .unwrap_or(0)
        .min(sizes.ns_per_initial());
    (0..used)
        .filter_map(|i| {
            let off = 2 * W + i * NS_ENTRY;
            let e: [u8; NS_ENTRY] = seg.get(off..off + NS_ENTRY)?.try_into().ok()?;
            // a cleared entry (initial_clear) is no namespace
            let len = e[..NS_NAME]
                .iter()
                .position(|&b| b == 0)
                .filter(|&l| l > 0)?;
            Some((String::from_utf8_lossy(&e[..len]).into_owned(), e))
        })
        .collect()
}

/// The ds21 lock segment's geometry (`segment_hdr_t` and what follows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LockGeometry {
    /// Reader slots (two mutexes each).
    pub slots: u32,
    /// Stride between mutexes.
    pub align: usize,
    /// Offset of mutex 0.
    pub mutex_offs: usize,
    /// File size.
    pub size: usize,
}

impl LockGeometry {
    /// As libpmix's server computes it for `slots` readers, with this
    /// platform's mutex size, cache line and page.
    pub fn new(slots: u32, mutex: usize, cacheline: usize, page: usize) -> LockGeometry {
        let n = slots as usize;
        let align = match mutex.checked_div(cacheline) {
            Some(q) => (q + 1) * cacheline,
            None => mutex,
        };
        let mutex_offs = ((32 + 4 * n) / align + 1) * align;
        let size = ((mutex_offs + 2 * n * align) / page + 1) * page;
        LockGeometry {
            slots,
            align,
            mutex_offs,
            size,
        }
    }

    /// The header: size, slot count, stride, offset of mutex 0 (the slot
    /// flags after it start all free, 0).
    pub fn header(&self) -> [u8; 32] {
        let mut h = [0u8; 32];
        h[..8].copy_from_slice(&(self.size as u64).to_ne_bytes());
        h[8..12].copy_from_slice(&self.slots.to_ne_bytes());
        h[16..24].copy_from_slice(&(self.align as u64).to_ne_bytes());
        h[24..32].copy_from_slice(&(self.mutex_offs as u64).to_ne_bytes());
        h
    }

    /// Offset of mutex `k` (slot i owns 2i, "signal", and 2i+1, "main").
    pub fn mutex(&self, k: usize) -> usize {
        self.mutex_offs + k * self.align
    }
}

/// Why a store failed; the store is then left as it was before the
/// record that failed (clients fall back to the socket for what is
/// missing).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreError {
    /// A record cannot fit even an empty data segment.
    TooBig {
        /// The key.
        key: String,
        /// The record's length.
        len: usize,
    },
    /// A key with a NUL in it.
    BadKey,
    /// A segment could not be added (the driver's error).
    Grow(String),
    /// The bytes already there are not a store this writer made.
    Corrupt(&'static str),
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::TooBig { key, len } => {
                write!(f, "record of {key} ({len} bytes) exceeds a data segment")
            }
            StoreError::BadKey => f.write_str("key holds a NUL"),
            StoreError::Grow(e) => write!(f, "cannot add a segment: {e}"),
            StoreError::Corrupt(w) => write!(f, "store corrupt: {w}"),
        }
    }
}

impl std::error::Error for StoreError {}

/// One namespace's meta and data segments, however they are held (maps of
/// files, or vectors in tests). Segment `i` of each kind exists for
/// `i < count`; `add_*` appends one of the configured size, zeroed.
pub trait Segs {
    /// How many meta segments there are.
    fn meta_count(&self) -> usize;
    /// Meta segment `id`.
    fn meta(&mut self, id: usize) -> &mut [u8];
    /// Add a meta segment.
    fn add_meta(&mut self) -> Result<(), StoreError>;
    /// How many data segments there are.
    fn data_count(&self) -> usize;
    /// Data segment `id`.
    fn data(&mut self, id: usize) -> &mut [u8];
    /// Add a data segment.
    fn add_data(&mut self) -> Result<(), StoreError>;
}

/// Segments in memory, as the tests and a reader of copied files hold
/// them.
#[derive(Clone, Debug, Default)]
pub struct VecSegs {
    /// The sizes new segments get.
    pub sizes: Sizes,
    /// Meta segments.
    pub meta: Vec<Vec<u8>>,
    /// Data segments.
    pub data: Vec<Vec<u8>>,
}

impl VecSegs {
    /// No segments yet, of these sizes.
    pub fn new(sizes: Sizes) -> VecSegs {
        VecSegs {
            sizes,
            meta: Vec::new(),
            data: Vec::new(),
        }
    }
}

impl Segs for VecSegs {
    fn meta_count(&self) -> usize {
        self.meta.len()
    }
    fn meta(&mut self, id: usize) -> &mut [u8] {
        &mut self.meta[id]
    }
    fn add_meta(&mut self) -> Result<(), StoreError> {
        self.meta.push(vec![0; self.sizes.meta]);
        Ok(())
    }
    fn data_count(&self) -> usize {
        self.data.len()
    }
    fn data(&mut self, id: usize) -> &mut [u8] {
        &mut self.data[id]
    }
    fn add_data(&mut self) -> Result<(), StoreError> {
        self.data.push(vec![0; self.sizes.data]);
        Ok(())
    }
}

/// A record as the reader walks it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// Its global offset.
    pub at: u64,
    /// The key.
    pub key: Vec<u8>,
    /// The packed `pmix_value_t`.
    pub value: Vec<u8>,
    /// Superseded.
    pub invalid: bool,
}

/// Why a read failed (bytes that are not a well-formed store).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadError {
    /// The global data offset where it went wrong.
    pub at: u64,
    /// What was wrong.
    pub what: &'static str,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ds21 data at {}: {}", self.at, self.what)
    }
}

impl std::error::Error for ReadError {}

/// The writer and reader of one namespace's rank index and data, over
/// its segments.
pub struct Namespace<S: Segs> {
    /// The segments.
    pub segs: S,
    sizes: Sizes,
}

impl<S: Segs> Namespace<S> {
    /// A namespace over `segs` (one meta and one data segment are made if
    /// there are none).
    pub fn new(mut segs: S, sizes: Sizes) -> Result<Namespace<S>, StoreError> {
        if segs.meta_count() == 0 {
            segs.add_meta()?;
        }
        if segs.data_count() == 0 {
            segs.add_data()?;
        }
        Ok(Namespace { segs, sizes })
    }

    /// The sizes in use.
    pub fn sizes(&self) -> Sizes {
        self.sizes
    }

    /// The global offset of the first free byte (after the last segment's
    /// free offset; 0 there means 8).
    fn tail(&mut self) -> Result<(usize, usize), StoreError> {
        let id = self.segs.data_count() - 1;
        let size = self.sizes.data;
        let free = get_u64(self.segs.data(id), 0).ok_or(StoreError::Corrupt("data header"))?;
        let free = match usize::try_from(free) {
            Ok(0) => W,
            Ok(f) if f <= size => f,
            _ => return Err(StoreError::Corrupt("free offset")),
        };
        Ok((id, free))
    }

    fn global(&self, id: usize, local: usize) -> u64 {
        (id * self.sizes.data + local) as u64
    }

    fn locate(&self, at: u64) -> Option<(usize, usize)> {
        let at = usize::try_from(at).ok()?;
        Some((at / self.sizes.data, at % self.sizes.data))
    }

    /// Write `bytes` at global offset `at` (within one segment).
    fn write_at(&mut self, at: u64, bytes: &[u8]) -> Result<(), StoreError> {
        let (id, local) = self.locate(at).ok_or(StoreError::Corrupt("offset"))?;
        if id >= self.segs.data_count() {
            return Err(StoreError::Corrupt("segment"));
        }
        let seg = self.segs.data(id);
        seg.get_mut(local..local + bytes.len())
            .ok_or(StoreError::Corrupt("record past segment"))?
            .copy_from_slice(bytes);
        Ok(())
    }

    /// The rank's slot: (offset of its first record, valid records).
    pub fn slot(&mut self, rank: u32) -> Option<(u64, u64)> {
        let (id, off) = self.sizes.rank_slot(rank);
        if id >= self.segs.meta_count() {
            return None;
        }
        let m = self.segs.meta(id);
        Some((get_u64(m, off + 8)?, get_u64(m, off + 16)?))
    }

    fn set_slot(&mut self, rank: u32, first: u64, count: u64) -> Result<(), StoreError> {
        let (id, off) = self.sizes.rank_slot(rank);
        while self.segs.meta_count() <= id {
            self.segs.add_meta()?;
        }
        let m = self.segs.meta(id);
        if !(put_u64(m, off, rank as u64)
            && put_u64(m, off + 8, first)
            && put_u64(m, off + 16, count))
        {
            return Err(StoreError::Corrupt("meta slot"));
        }
        Ok(())
    }

    /// Every record of a rank reachable from its slot, superseded ones
    /// included, in chain order; and the global offset of its terminal
    /// (empty) extension slot. Checked: every length against the bytes
    /// there are, the chain against loops.
    pub fn walk(&mut self, rank: u32) -> Result<(Vec<Record>, Option<u64>), ReadError> {
        let Some((mut at, _count)) = self.slot(rank) else {
            return Ok((Vec::new(), None));
        };
        let mut out = Vec::new();
        if at == 0 {
            return Ok((out, None));
        }
        // every step passes at least 18 bytes (a record of an empty key
        // and value) of the segments there are: more steps are a loop
        let steps = self.segs.data_count() * self.sizes.data / (2 * W + 2) + 2;
        for _ in 0..steps {
            let err = |what| ReadError { at, what };
            let (id, local) = self.locate(at).ok_or(err("offset"))?;
            if id >= self.segs.data_count() {
                return Err(err("segment missing"));
            }
            let seg = self.segs.data(id);
            let hdr = get_u64(seg, local).ok_or(err("header past segment"))?;
            let len = usize::try_from(hdr & LEN_MASK).map_err(|_| err("length"))?;
            let rec = local
                .checked_add(len)
                .and_then(|e| seg.get(local..e))
                .ok_or(err("record past segment"))?;
            let body = rec.get(2 * W..).ok_or(err("record shorter than header"))?;
            let nul = body
                .iter()
                .position(|&b| b == 0)
                .ok_or(err("key without NUL"))?;
            let key = body[..nul].to_vec();
            let value = body[nul + 1..].to_vec();
            if hdr & FLAG_EXT != 0 {
                let next = get_u64(&value, 0).ok_or(err("extension slot too short"))?;
                if next == 0 {
                    return Ok((out, Some(at)));
                }
                at = next;
                continue;
            }
            let invalid = hdr & FLAG_INVALID != 0;
            out.push(Record {
                at,
                key,
                value,
                invalid,
            });
            // (a client stops after `count` valid records; the writer
            // needs the terminal slot behind them)
            at += len as u64;
        }
        Err(ReadError {
            at,
            what: "chain does not end",
        })
    }

    /// The ranks with data, in slot order (the wildcard first).
    pub fn ranks(&mut self) -> Vec<u32> {
        let per = self.sizes.slots_per_meta();
        let mut out = Vec::new();
        for id in 0..self.segs.meta_count() {
            let m = self.segs.meta(id);
            for j in 0..per {
                if get_u64(m, W + j * RANK_SLOT + 8).is_some_and(|o| o != 0) {
                    let n = id * per + j;
                    out.push(if n == 0 { WILDCARD } else { (n - 1) as u32 });
                }
            }
        }
        out
    }

    /// A key of a rank as a client reads it: its latest valid record's
    /// value; None if the rank or the key is not there.
    pub fn fetch(&mut self, rank: u32, key: &str) -> Result<Option<Vec<u8>>, ReadError> {
        let (recs, _) = self.walk(rank)?;
        Ok(recs
            .into_iter()
            .find(|r| !r.invalid && r.key == key.as_bytes())
            .map(|r| r.value))
    }

    /// Store one batch of (key, packed value) for a rank: a key already
    /// there is invalidated, the batch appended after the rank's data (its
    /// terminal extension slot wound back over when it is the last thing
    /// written, else filled with the batch's offset), a new data segment
    /// started when a record and a slot no longer fit.
    pub fn store(&mut self, rank: u32, kvs: &[(&str, &[u8])]) -> Result<(), StoreError> {
        if kvs.is_empty() {
            return Ok(());
        }
        let recs = kvs
            .iter()
            .map(|(k, v)| record(k.as_bytes(), v).ok_or(StoreError::BadKey))
            .collect::<Result<Vec<_>, _>>()?;
        for (r, (k, _)) in recs.iter().zip(kvs) {
            if W + r.len() + EXT_SLOT > self.sizes.data {
                return Err(StoreError::TooBig {
                    key: k.to_string(),
                    len: r.len(),
                });
            }
        }
        let (old, terminal) = self
            .walk(rank)
            .map_err(|_| StoreError::Corrupt("rank chain"))?;
        let (first0, mut count) = self.slot(rank).unwrap_or((0, 0));
        // where the batch starts: after the last thing written, over the
        // rank's terminal slot if that is it (the data then runs on)
        let (mut id, tail_free) = self.tail()?;
        let wound = terminal.is_some_and(|t| t + EXT_SLOT as u64 == self.global(id, tail_free));
        let mut free = if wound {
            tail_free - EXT_SLOT
        } else {
            tail_free
        };
        // every segment the batch needs exists before anything is written:
        // a failure to grow leaves the store as it was
        let mut need = 0;
        let mut sim = free;
        for r in &recs {
            if sim + r.len() + EXT_SLOT > self.sizes.data {
                need += 1;
                sim = W;
            }
            sim += r.len();
        }
        let (meta_id, _) = self.sizes.rank_slot(rank);
        while self.segs.meta_count() <= meta_id {
            self.segs.add_meta()?;
        }
        for _ in 0..need {
            self.segs.add_data()?;
        }
        // supersede the keys this batch brings again
        for r in old.iter().filter(|r| !r.invalid) {
            if kvs.iter().any(|(k, _)| k.as_bytes() == r.key) {
                let (sid, local) = self.locate(r.at).ok_or(StoreError::Corrupt("offset"))?;
                let seg = self.segs.data(sid);
                let h = get_u64(seg, local).ok_or(StoreError::Corrupt("header"))?;
                put_u64(seg, local, h | FLAG_INVALID);
                count = count.saturating_sub(1);
            }
        }
        // the chain continues from the terminal slot (filled with the
        // batch's offset) unless the batch runs on over it
        let (mut link, mut open) = if wound {
            put_u64(self.segs.data(id), 0, free as u64);
            (None, true)
        } else {
            (terminal, false)
        };
        let mut first = (first0 != 0).then_some(first0);
        for r in &recs {
            if free + r.len() + EXT_SLOT > self.sizes.data {
                let next = self.global(id + 1, W);
                if open {
                    // the rank's records run on in the next segment
                    let at = self.global(id, free);
                    self.write_at(at, &ext_slot(next))?;
                    put_u64(self.segs.data(id), 0, (free + EXT_SLOT) as u64);
                }
                id += 1;
                free = W;
            }
            let at = self.global(id, free);
            self.write_at(at, r)?;
            free += r.len();
            put_u64(self.segs.data(id), 0, free as u64);
            if let Some(l) = link.take() {
                self.write_at(l, &ext_slot(at))?;
            }
            first.get_or_insert(at);
            open = true;
        }
        let at = self.global(id, free);
        self.write_at(at, &ext_slot(0))?;
        put_u64(self.segs.data(id), 0, (free + EXT_SLOT) as u64);
        count += recs.len() as u64;
        self.set_slot(rank, first.unwrap_or(0), count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Sizes {
        Sizes {
            initial: 4096,
            meta: 4096,
            data: 128,
        }
    }

    #[test]
    fn sizes_follow_libpmix_env_rules() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(Sizes::from_env(env(&[]), 4096), Sizes::default());
        let s = Sizes::from_env(
            env(&[
                ("INITIAL_SEG_SIZE", "100"),
                ("NS_META_SEG_SIZE", "8192xyz"),
                ("NS_DATA_SEG_SIZE", "abc"),
            ]),
            4096,
        );
        // below a page: a page; trailing junk ignored; no digits: 0 → page
        assert_eq!(s.initial, 4096);
        assert_eq!(s.meta, 8192);
        assert_eq!(s.data, 4096);
        let d = Sizes::default();
        assert_eq!(d.ns_per_initial(), 14);
        assert_eq!(d.slots_per_meta(), 174_762);
    }

    #[test]
    fn rank_slots_are_direct_indexed() {
        let d = Sizes::default();
        assert_eq!(d.rank_slot(WILDCARD), (0, 8));
        assert_eq!(d.rank_slot(0), (0, 32));
        assert_eq!(d.rank_slot(3), (0, 8 + 4 * 24));
        assert_eq!(d.rank_slot(174_760), (0, 8 + 174_761 * 24));
        assert_eq!(d.rank_slot(174_761), (1, 8));
    }

    #[test]
    fn key_hash_sums_c_chars() {
        assert_eq!(key_hash(b""), 0);
        assert_eq!(key_hash(b"ab"), 97 + 98);
        // 0xC3 0xA9 ("é"): as signed chars -61 + -87, as unsigned 195 + 169
        let want = if std::ffi::c_char::MIN == 0 {
            364
        } else {
            (-148i64) as u64
        };
        assert_eq!(key_hash("é".as_bytes()), want);
    }

    #[test]
    fn record_and_ext_slot_bytes() {
        let r = record(b"k1", &[0x0a, 0x00, 0x07]).unwrap();
        let mut want = Vec::new();
        want.extend_from_slice(&22u64.to_ne_bytes());
        want.extend_from_slice(&(b'k' as u64 + b'1' as u64).to_ne_bytes());
        want.extend_from_slice(b"k1\0");
        want.extend_from_slice(&[0x0a, 0x00, 0x07]);
        assert_eq!(r, want);
        assert_eq!(record(b"a\0b", b""), None);
        let s = ext_slot(0x1234);
        assert_eq!(s.len(), 25);
        assert_eq!(get_u64(&s, 0), Some(25 | FLAG_EXT));
        assert_eq!(get_u64(&s, 8), Some(0));
        assert_eq!(s[16], 0);
        assert_eq!(get_u64(&s, 17), Some(0x1234));
    }

    #[test]
    fn lock_geometry_matches_spec_examples() {
        let g = LockGeometry::new(4, 40, 64, 4096);
        assert_eq!((g.align, g.mutex_offs, g.size), (64, 64, 4096));
        let g = LockGeometry::new(512, 40, 64, 4096);
        assert_eq!((g.mutex_offs, g.size), (2112, 69_632));
        assert_eq!(g.mutex(3), 2112 + 3 * 64);
        let h = g.header();
        assert_eq!(get_u64(&h, 0), Some(69_632));
        assert_eq!(u32::from_ne_bytes(h[8..12].try_into().unwrap()), 512);
        assert_eq!(get_u64(&h, 16), Some(64));
        assert_eq!(get_u64(&h, 24), Some(2112));
    }

    #[test]
    fn initial_segment_entries() {
        let s = Sizes::default();
        let mut seg = vec![0u8; s.initial];
        let e = ns_entry("job-1", 1, 1).unwrap();
        assert_eq!(initial_add(&mut seg, &e, &s), Some(0));
        assert_eq!(
            initial_add(&mut seg, &ns_entry("job", 1, 1).unwrap(), &s),
            Some(1)
        );
        assert_eq!(get_u64(&seg, 0), Some(2));
        assert_eq!(&seg[16..22], b"job-1\0");
        assert_eq!(get_u64(&seg, 16 + 272), Some(1));
        assert!(initial_set_counts(&mut seg, 0, 2, 3));
        assert_eq!(initial_find(&seg, "job-1", &s), Some((2, 3)));
        // "job" matches its own entry, not the prefix of "job-1"
        assert_eq!(initial_find(&seg, "job", &s), Some((1, 1)));
        assert_eq!(initial_find(&seg, "jo", &s), None);
        for i in 2..14 {
            let e = ns_entry(&format!("n{i}"), 1, 1).unwrap();
            assert_eq!(initial_add(&mut seg, &e, &s), Some(i));
        }
        assert_eq!(initial_add(&mut seg, &e, &s), None);
        assert!(ns_entry(&"x".repeat(256), 1, 1).is_none());
        assert!(ns_entry(&"x".repeat(255), 1, 1).is_some());
        // a corrupt count neither panics nor reads past the segment
        put_u64(&mut seg, 0, u64::MAX);
        assert_eq!(initial_find(&seg, "nobody", &s), None);
    }

    #[test]
    fn first_batch_layout() {
        let mut ns = Namespace::new(VecSegs::new(Sizes::default()), Sizes::default()).unwrap();
        ns.store(0, &[("a", &[1, 2]), ("bb", &[3])]).unwrap();
        let d = &ns.segs.data[0];
        // records at 8 (16+2+2 = 20) and 28 (16+3+1 = 20), slot at 48
        assert_eq!(get_u64(d, 0), Some(48 + 25));
        assert_eq!(get_u64(d, 8), Some(20));
        assert_eq!(&d[24..28], b"a\0\x01\x02");
        assert_eq!(get_u64(d, 28), Some(20));
        assert_eq!(get_u64(d, 48), Some(25 | FLAG_EXT));
        let m = &ns.segs.meta[0];
        // rank 0 is slot 1
        assert_eq!(get_u64(m, 32), Some(0));
        assert_eq!(get_u64(m, 40), Some(8));
        assert_eq!(get_u64(m, 48), Some(2));
        assert_eq!(ns.fetch(0, "bb").unwrap(), Some(vec![3]));
        assert_eq!(ns.fetch(0, "c").unwrap(), None);
        assert_eq!(ns.fetch(1, "a").unwrap(), None);
        assert_eq!(ns.slot(WILDCARD), Some((0, 0)));
        ns.store(WILDCARD, &[("w", &[1])]).unwrap();
        ns.store(5, &[("w", &[1])]).unwrap();
        assert_eq!(ns.ranks(), vec![WILDCARD, 0, 5]);
    }

    #[test]
    fn second_batch_winds_back_or_links() {
        let mut ns = Namespace::new(VecSegs::new(Sizes::default()), Sizes::default()).unwrap();
        ns.store(0, &[("a", &[1])]).unwrap();
        // contiguous: the terminal slot is wound back over
        ns.store(0, &[("b", &[2])]).unwrap();
        let d = &ns.segs.data[0];
        assert_eq!(get_u64(d, 8), Some(19));
        assert_eq!(get_u64(d, 27), Some(19));
        assert_eq!(get_u64(d, 46), Some(25 | FLAG_EXT));
        assert_eq!(get_u64(d, 0), Some(46 + 25));
        // another rank in between: rank 0's slot is filled with a link
        ns.store(1, &[("a", &[9])]).unwrap();
        ns.store(0, &[("a", &[7, 7]), ("c", &[3])]).unwrap();
        let (recs, term) = ns.walk(0).unwrap();
        let keys: Vec<_> = recs.iter().map(|r| (r.key.clone(), r.invalid)).collect();
        assert_eq!(
            keys,
            vec![
                (b"a".to_vec(), true),
                (b"b".to_vec(), false),
                (b"a".to_vec(), false),
                (b"c".to_vec(), false)
            ]
        );
        assert!(term.is_some());
        assert_eq!(ns.slot(0).unwrap().1, 3);
        assert_eq!(ns.fetch(0, "a").unwrap(), Some(vec![7, 7]));
        assert_eq!(ns.fetch(1, "a").unwrap(), Some(vec![9]));
        let d = &ns.segs.data[0];
        // the old terminal slot of rank 0 (at 46) now points on
        assert_eq!(get_u64(d, 46 + 17), Some(recs[2].at));
    }

    #[test]
    fn records_spill_into_new_segments() {
        let s = small();
        let mut ns = Namespace::new(VecSegs::new(s), s).unwrap();
        let v = [0u8; 40];
        // 16 + 2 + 40 = 58 bytes a record: one per 128-byte segment with
        // room for a slot (8 + 58 + 25 = 91; a second would need 149)
        ns.store(0, &[("k0", &v), ("k1", &v), ("k2", &v)]).unwrap();
        assert_eq!(ns.segs.data.len(), 3);
        ns.store(WILDCARD, &[("w", &[5])]).unwrap();
        for k in ["k0", "k1", "k2"] {
            assert_eq!(ns.fetch(0, k).unwrap(), Some(v.to_vec()), "{k}");
        }
        assert_eq!(ns.fetch(WILDCARD, "w").unwrap(), Some(vec![5]));
        // the second record starts its segment: global 128 + 8
        let (recs, _) = ns.walk(0).unwrap();
        assert_eq!(recs[1].at, 136);
        let big = [0u8; 100];
        assert!(matches!(
            ns.store(0, &[("big", &big)]),
            Err(StoreError::TooBig { .. })
        ));
    }

    /// Segments that cannot be added (the driver's error): the batch
    /// fails before anything is written.
    struct Capped(VecSegs, usize);
    impl Segs for Capped {
        fn meta_count(&self) -> usize {
            self.0.meta_count()
        }
        fn meta(&mut self, id: usize) -> &mut [u8] {
            self.0.meta(id)
        }
        fn add_meta(&mut self) -> Result<(), StoreError> {
            self.0.add_meta()
        }
        fn data_count(&self) -> usize {
            self.0.data_count()
        }
        fn data(&mut self, id: usize) -> &mut [u8] {
            self.0.data(id)
        }
        fn add_data(&mut self) -> Result<(), StoreError> {
            if self.0.data_count() >= self.1 {
                return Err(StoreError::Grow("full".into()));
            }
            self.0.add_data()
        }
    }

    #[test]
    fn a_batch_that_cannot_grow_the_store_writes_nothing() {
        let s = small();
        let mut ns = Namespace::new(Capped(VecSegs::new(s), 2), s).unwrap();
        let v = [7u8; 40];
        ns.store(0, &[("k0", &v)]).unwrap();
        let before = ns.segs.0.data.clone();
        // k0 again (would supersede the first), and two records needing
        // two more segments where one may be added
        let r = ns.store(0, &[("k0", &[1]), ("k1", &v), ("k2", &v)]);
        assert!(matches!(r, Err(StoreError::Grow(_))), "{r:?}");
        assert_eq!(ns.segs.0.data.len(), 2);
        assert_eq!(ns.segs.0.data[0], before[0]);
        assert!(ns.segs.0.data[1].iter().all(|&b| b == 0));
        assert_eq!(ns.fetch(0, "k0").unwrap(), Some(v.to_vec()));
        assert_eq!(ns.slot(0).unwrap().1, 1);
        // what fits still goes in, into the segment added for it
        ns.store(0, &[("k1", &v)]).unwrap();
        assert_eq!(ns.fetch(0, "k1").unwrap(), Some(v.to_vec()));
        assert_eq!(ns.fetch(0, "k0").unwrap(), Some(v.to_vec()));
    }

    #[test]
    fn ranks_past_one_meta_segment() {
        let s = Sizes {
            meta: 8 + 24 * 4,
            ..small()
        };
        let mut ns = Namespace::new(VecSegs::new(s), s).unwrap();
        ns.store(9, &[("x", &[1])]).unwrap();
        // slot 10 of 4 per segment: segment 2
        assert_eq!(ns.segs.meta.len(), 3);
        assert_eq!(ns.fetch(9, "x").unwrap(), Some(vec![1]));
        assert_eq!(ns.fetch(8, "x").unwrap(), None);
    }

    #[test]
    fn corrupt_bytes_are_errors_not_panics() {
        let s = small();
        let mut ns = Namespace::new(VecSegs::new(s), s).unwrap();
        ns.store(0, &[("a", &[1])]).unwrap();
        // a record length past the segment
        put_u64(&mut ns.segs.data[0], 8, 1000);
        assert!(ns.fetch(0, "a").is_err());
        // a rank slot pointing past every segment
        put_u64(&mut ns.segs.meta[0], 40, 1 << 40);
        assert!(ns.fetch(0, "a").is_err());
        // an extension slot pointing at itself
        let mut ns = Namespace::new(VecSegs::new(s), s).unwrap();
        ns.store(0, &[("a", &[1])]).unwrap();
        let d = &mut ns.segs.data[0];
        d[27..52].copy_from_slice(&ext_slot(27));
        assert_eq!(ns.walk(0).unwrap_err().what, "chain does not end");
        // a free offset past the segment
        put_u64(&mut ns.segs.data[0], 0, 4096);
        assert!(ns.store(1, &[("b", &[1])]).is_err());
    }
}
