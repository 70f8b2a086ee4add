//! The store's files: one session directory holding the initial segment,
//! and per namespace a lock segment of process-shared mutexes and its meta
//! and data segments (spec-notes/dstore.md §2, §3). Maps are made with
//! `libc::mmap` (the crate is already a dependency of the server, and the
//! lock segment must be reached through raw pointers in any case: its
//! mutexes and slot flags are written by clients).
//!
//! Offered only where the mutex bytes are glibc's on a 64-bit target (the
//! ABI of the libpmix clients that read them).

use crate::server::dstore::layout::{self, LockGeometry, Namespace, Segs, Sizes, StoreError};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A shared map of a whole file, unmapped on drop.
struct Map {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the map is owned by one store, which is used from one thread at
// a time; the pointer is valid until drop.
unsafe impl Send for Map {}

impl Map {
    /// Create `path` (0600, must not exist), size it to `len` zero bytes
    /// with its blocks allocated, map it shared read-write.
    fn create(path: &Path, len: usize) -> io::Result<Map> {
        use std::os::fd::AsRawFd;
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)?;
        // allocated, as libpmix does (posix_fallocate): a sparse file on a
        // full filesystem would fault (SIGBUS) on the first write through
        // the map instead of failing here; where the filesystem cannot
        // allocate ahead, a plain size, as libpmix falls back to
        // SAFETY: a valid descriptor; offsets in range.
        match unsafe { libc::posix_fallocate(f.as_raw_fd(), 0, len as libc::off_t) } {
            0 => {}
            libc::EINVAL | libc::EOPNOTSUPP => f.set_len(len as u64)?,
            e => {
                let _ = std::fs::remove_file(path);
                return Err(io::Error::from_raw_os_error(e));
            }
        }
        Map::of(&f, len)
    }

    fn of(f: &File, len: usize) -> io::Result<Map> {
        use std::os::fd::AsRawFd;
        // SAFETY: a fresh shared mapping of a file of `len` bytes; checked
        // for MAP_FAILED.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Map { ptr: p.cast(), len })
    }

    /// The bytes of a segment clients map read-only (initial, meta,
    /// data): only this process writes them.
    fn bytes(&mut self) -> &mut [u8] {
        // SAFETY: `ptr` maps `len` bytes for the life of `self`; clients
        // map these files PROT_READ, so no other writer exists.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        // SAFETY: unmapping what `of` mapped, once.
        unsafe {
            libc::munmap(self.ptr.cast(), self.len);
        }
    }
}

/// Give `path` to `owner` (the job's uid, PMIX_USERID) where that is not
/// this process's, as libpmix's server chowns its session directory and
/// segments when its host names the job's user (`dstore_base.c`,
/// `dstore_segment.c`): a root slurmstepd's clients run as the job's user
/// and must open the files.
fn own(path: &Path, owner: Option<u32>) -> io::Result<()> {
    match owner {
        // SAFETY: no arguments.
        Some(uid) if uid != unsafe { libc::geteuid() } => {
            std::os::unix::fs::chown(path, Some(uid), None)
        }
        _ => Ok(()),
    }
}

/// Remove a namespace's files from `dir`: `smlockseg-<ns>`,
/// `smseg-<ns>-<k>`, `smdataseg-<ns>-<k>` (k digits only: not another
/// namespace's whose name starts with this one's and a `-`).
fn remove_ns_files(dir: &Path, nspace: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let lock = format!("smlockseg-{nspace}");
    let (meta, data) = (format!("smseg-{nspace}-"), format!("smdataseg-{nspace}-"));
    let numbered = |name: &str, prefix: &str| {
        name.strip_prefix(prefix)
            .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name == lock || numbered(&name, &meta) || numbered(&name, &data) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// A namespace's meta and data segment files.
struct FileSegs {
    dir: PathBuf,
    nspace: String,
    sizes: Sizes,
    owner: Option<u32>,
    meta: Vec<Map>,
    data: Vec<Map>,
}

impl Segs for FileSegs {
    fn meta_count(&self) -> usize {
        self.meta.len()
    }
    fn meta(&mut self, id: usize) -> &mut [u8] {
        self.meta[id].bytes()
    }
    fn add_meta(&mut self) -> Result<(), StoreError> {
        let p = self
            .dir
            .join(format!("smseg-{}-{}", self.nspace, self.meta.len()));
        let m = Map::create(&p, self.sizes.meta).map_err(|e| StoreError::Grow(e.to_string()))?;
        own(&p, self.owner).map_err(|e| StoreError::Grow(e.to_string()))?;
        self.meta.push(m);
        Ok(())
    }
    fn data_count(&self) -> usize {
        self.data.len()
    }
    fn data(&mut self, id: usize) -> &mut [u8] {
        self.data[id].bytes()
    }
    fn add_data(&mut self) -> Result<(), StoreError> {
        let p = self
            .dir
            .join(format!("smdataseg-{}-{}", self.nspace, self.data.len()));
        let m = Map::create(&p, self.sizes.data).map_err(|e| StoreError::Grow(e.to_string()))?;
        own(&p, self.owner).map_err(|e| StoreError::Grow(e.to_string()))?;
        self.data.push(m);
        Ok(())
    }
}

/// A ds21 lock segment: header, slot flags, 2·slots mutexes. Reached only
/// through raw pointers (clients write the flags and the mutexes).
struct LockSeg {
    map: Map,
    geo: LockGeometry,
    /// Its mutexes are robust (not where the C library cannot make them
    /// so, as under qemu-user, which has no robust futex list).
    robust: bool,
}

impl LockSeg {
    fn create(path: &Path, slots: u32) -> io::Result<LockSeg> {
        let geo = LockGeometry::new(
            slots,
            std::mem::size_of::<libc::pthread_mutex_t>(),
            cacheline(),
            page(),
        );
        let map = Map::create(path, geo.size)?;
        let hdr = geo.header();
        // SAFETY: the header fits the page-sized (or larger) map; no
        // client has the file open yet.
        unsafe { std::ptr::copy_nonoverlapping(hdr.as_ptr(), map.ptr, hdr.len()) };
        let mut seg = LockSeg {
            map,
            geo,
            robust: true,
        };
        // a client dying with its lock held must not block the server's
        // next write for ever (spec-notes/dstore.md §3.4): robust where
        // the C library can (ENOTSUP without a kernel robust list), else
        // as libpmix makes them
        if let Err(e) = seg.init_mutexes(true) {
            tracing::warn!("dstore: robust mutexes unavailable ({e}); plain ones");
            seg.robust = false;
            seg.init_mutexes(false)?;
        }
        Ok(seg)
    }

    /// Initialise every mutex process-shared (and robust if asked).
    fn init_mutexes(&self, robust: bool) -> io::Result<()> {
        // SAFETY: attr is initialised before use and destroyed after;
        // every mutex lies inside the map (geometry), aligned to the
        // stride in a page-aligned map; no client has the file yet.
        unsafe {
            let mut attr: libc::pthread_mutexattr_t = std::mem::zeroed();
            if libc::pthread_mutexattr_init(&mut attr) != 0 {
                return Err(io::Error::other("pthread_mutexattr_init"));
            }
            let mut rc =
                libc::pthread_mutexattr_setpshared(&mut attr, libc::PTHREAD_PROCESS_SHARED);
            if rc == 0 && robust {
                rc = libc::pthread_mutexattr_setrobust(&mut attr, libc::PTHREAD_MUTEX_ROBUST);
            }
            for k in 0..2 * self.geo.slots as usize {
                if rc != 0 {
                    break;
                }
                rc = libc::pthread_mutex_init(self.mutex(k), &attr);
            }
            libc::pthread_mutexattr_destroy(&mut attr);
            match rc {
                0 => Ok(()),
                e => Err(io::Error::from_raw_os_error(e)),
            }
        }
    }

    fn mutex(&self, k: usize) -> *mut libc::pthread_mutex_t {
        // SAFETY: k < 2·slots, inside the map by the geometry.
        unsafe { self.map.ptr.add(self.geo.mutex(k)).cast() }
    }

    /// Reader slots clients have claimed.
    fn claimed(&self) -> u32 {
        (0..self.geo.slots as usize)
            .filter(|i| {
                // SAFETY: the flags follow the 32-byte header, inside the
                // map; read volatile, clients set them atomically
                unsafe { std::ptr::read_volatile(self.map.ptr.add(32 + 4 * i).cast::<i32>()) != 0 }
            })
            .count() as u32
    }
}

fn cacheline() -> usize {
    // SAFETY: sysconf has no preconditions.
    match unsafe { libc::sysconf(libc::_SC_LEVEL1_DCACHE_LINESIZE) } {
        n if n > 0 => n as usize,
        _ => 64,
    }
}

/// The page size.
pub fn page() -> usize {
    // SAFETY: sysconf has no preconditions.
    match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        n if n > 0 => n as usize,
        _ => 4096,
    }
}

/// Mutexes held by the writer, released on drop.
struct Held(Vec<*mut libc::pthread_mutex_t>);

impl Drop for Held {
    fn drop(&mut self) {
        for m in self.0.drain(..).rev() {
            // SAFETY: each was locked by this thread.
            unsafe {
                libc::pthread_mutex_unlock(m);
            }
        }
    }
}

/// Lock `m` by `deadline`; a dead owner's lock is made consistent and taken.
fn timed_lock(m: *mut libc::pthread_mutex_t, deadline: &libc::timespec) -> bool {
    // SAFETY: `m` is an initialised process-shared mutex in a live map.
    match unsafe { libc::pthread_mutex_timedlock(m, deadline) } {
        0 => true,
        libc::EOWNERDEAD => {
            tracing::warn!("dstore: a reader died holding its lock; recovered");
            // SAFETY: we own it now (EOWNERDEAD).
            unsafe { libc::pthread_mutex_consistent(m) == 0 }
        }
        _ => false,
    }
}

/// The first (only) initial segment's file name.
const INITIAL: &str = "initial-pmix_shared-segment-0";

struct NsFiles {
    ns: Namespace<FileSegs>,
    entry: usize,
    lock: LockSeg,
}

/// A ds21 session: the directory clients are given as
/// `PMIX_DSTORE_21_BASE_PATH`, and every namespace stored in it. Removed
/// with its files on drop.
pub struct Session {
    dir: PathBuf,
    sizes: Sizes,
    /// None once the last namespace was removed (with the directory, as
    /// libpmix's server removes its session then): made again, under
    /// the same name, for the next namespace.
    initial: Option<Map>,
    /// The uid the files are given to (None: this process's).
    owner: Option<u32>,
    spaces: BTreeMap<String, NsFiles>,
    lock_wait: Duration,
    /// The mutex (namespace, index) a reader held past the wait at the
    /// last update: until it is free again, updates are skipped at once
    /// rather than each waiting `lock_wait` (one stopped reader, e.g. a
    /// rank paused in a debugger mid-read, would otherwise slow every
    /// later commit and fence of every job on this server).
    stuck: Option<(String, usize)>,
}

impl Session {
    /// Create `<base>/pmix_dstor_ds21_<pid>[-<k>]` (0700) and its initial
    /// segment, with the sizes libpmix reads from this process's
    /// environment (which the clients inherit).
    pub fn create(base: &Path) -> io::Result<Session> {
        Session::create_owned(base, None)
    }

    /// [`Session::create`], the directory and every file given to the
    /// uid `owner` (the job's user, where the server runs as another:
    /// libpmix's server does so when its host passes PMIX_USERID).
    pub fn create_owned(base: &Path, owner: Option<u32>) -> io::Result<Session> {
        if std::env::var_os("SM_USE_LINEAR_SEARCH").is_some() {
            // libpmix's linear mode cannot find what it stores
            return Err(io::Error::other("SM_USE_LINEAR_SEARCH is set"));
        }
        let sizes = Sizes::from_env(|k| std::env::var(k).ok(), page());
        // `<pid>`, as libpmix names its own; a second store of this process
        // (or a directory a dead process of the same pid left) takes the
        // next free `<pid>-<k>`
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let pid = std::process::id();
        let mut tries = 0;
        let dir = loop {
            let k = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let name = match k {
                0 => format!("pmix_dstor_ds21_{pid}"),
                k => format!("pmix_dstor_ds21_{pid}-{k}"),
            };
            let dir = base.join(name);
            match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
                Ok(()) => break dir,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && tries < 64 => tries += 1,
                Err(e) => return Err(e),
            }
        };
        let made = own(&dir, owner)
            .and_then(|()| Map::create(&dir.join(INITIAL), sizes.initial))
            .and_then(|m| own(&dir.join(INITIAL), owner).map(|()| m));
        let initial = match made {
            Ok(m) => m,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
        };
        Ok(Session {
            dir,
            sizes,
            initial: Some(initial),
            owner,
            spaces: BTreeMap::new(),
            lock_wait: Duration::from_secs(2),
            stuck: None,
        })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The variables a client needs to read this store.
    pub fn env(&self) -> Vec<(String, String)> {
        vec![
            ("PMIX_GDS_MODULE".into(), "ds21,hash".into()),
            (
                "PMIX_DSTORE_21_BASE_PATH".into(),
                self.dir.to_string_lossy().into_owned(),
            ),
        ]
    }

    /// Whether `nspace` is stored here.
    pub fn has(&self, nspace: &str) -> bool {
        self.spaces.contains_key(nspace)
    }

    /// Reader slots of `nspace` clients have claimed.
    pub fn claimed(&self, nspace: &str) -> Option<u32> {
        self.spaces.get(nspace).map(|n| n.lock.claimed())
    }

    /// Add a namespace with `slots` reader slots (one per local client;
    /// a client finding none free uses the socket): its lock segment, its
    /// first meta and data segments, its entry in the initial segment.
    pub fn add_nspace(&mut self, nspace: &str, slots: u32) -> io::Result<()> {
        if nspace.is_empty() || nspace.contains('/') || self.spaces.contains_key(nspace) {
            return Err(io::Error::other("namespace unusable as a file name"));
        }
        let entry = layout::ns_entry(nspace, 1, 1)
            .ok_or_else(|| io::Error::other("namespace name too long"))?;
        if self.initial.is_none() {
            // the directory went with the last namespace: made again
            std::fs::DirBuilder::new().mode(0o700).create(&self.dir)?;
            let made = own(&self.dir, self.owner)
                .and_then(|()| Map::create(&self.dir.join(INITIAL), self.sizes.initial))
                .and_then(|m| own(&self.dir.join(INITIAL), self.owner).map(|()| m));
            match made {
                Ok(m) => self.initial = Some(m),
                Err(e) => {
                    let _ = std::fs::remove_dir_all(&self.dir);
                    return Err(e);
                }
            }
        }
        let initial = self.initial.as_mut().expect("made above");
        let lock_path = self.dir.join(format!("smlockseg-{nspace}"));
        let lock = LockSeg::create(&lock_path, slots)?;
        if let Err(e) = own(&lock_path, self.owner) {
            drop(lock);
            let _ = std::fs::remove_file(&lock_path);
            return Err(e);
        }
        let segs = FileSegs {
            dir: self.dir.clone(),
            nspace: nspace.to_string(),
            sizes: self.sizes,
            owner: self.owner,
            meta: Vec::new(),
            data: Vec::new(),
        };
        // on a failure from here, nothing of the namespace is left
        let made = Namespace::new(segs, self.sizes)
            .map_err(io::Error::other)
            .and_then(|ns| {
                let idx = layout::initial_add(initial.bytes(), &entry, &self.sizes)
                    .ok_or_else(|| io::Error::other("initial segment full"))?;
                Ok((ns, idx))
            });
        let (ns, idx) = match made {
            Ok(x) => x,
            Err(e) => {
                drop(lock);
                remove_ns_files(&self.dir, nspace);
                return Err(e);
            }
        };
        self.spaces.insert(
            nspace.to_string(),
            NsFiles {
                ns,
                entry: idx,
                lock,
            },
        );
        Ok(())
    }

    /// Take the writer's lock: every namespace's signal mutexes, then
    /// every main mutex; the one (namespace, index) a reader holds past
    /// the wait if it cannot (the update is then skipped, and clients ask
    /// over the socket).
    fn write_lock(&self) -> Result<Held, (String, usize)> {
        let mut now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a valid out-pointer.
        unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut now) };
        let nsec = now.tv_nsec as u64 + u64::from(self.lock_wait.subsec_nanos());
        let deadline = libc::timespec {
            tv_sec: now.tv_sec + (self.lock_wait.as_secs() + nsec / 1_000_000_000) as libc::time_t,
            tv_nsec: (nsec % 1_000_000_000) as libc::c_long,
        };
        let mut held = Held(Vec::new());
        for main in [0, 1] {
            for (name, n) in &self.spaces {
                for i in 0..n.lock.geo.slots as usize {
                    let m = n.lock.mutex(2 * i + main);
                    if !timed_lock(m, &deadline) {
                        return Err((name.clone(), 2 * i + main));
                    }
                    held.0.push(m);
                }
            }
        }
        Ok(held)
    }

    /// Whether the mutex a reader held past the wait last time is still
    /// held: tried, not waited for (a deadline already past; POSIX's
    /// timedlock never times out on a mutex it can take at once).
    fn still_stuck(&self, ns: &str, index: usize) -> bool {
        let Some(n) = self.spaces.get(ns) else {
            return false;
        };
        let m = n.lock.mutex(index);
        let past = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        if !timed_lock(m, &past) {
            return true;
        }
        drop(Held(vec![m]));
        false
    }

    /// Store batches of (rank, [(key, packed pmix_value_t)]) for a
    /// namespace in one write transaction.
    pub fn store(
        &mut self,
        nspace: &str,
        batches: &[crate::server::dstore::Batch],
    ) -> Result<(), String> {
        if !self.spaces.contains_key(nspace) {
            return Err(format!("namespace {nspace} not in the store"));
        }
        if let Some((ns, index)) = &self.stuck {
            let slot = index / 2;
            if self.still_stuck(ns, *index) {
                return Err(format!(
                    "the reader of slot {slot} of {ns} still holds its lock; update skipped"
                ));
            }
            tracing::info!("dstore: the reader of slot {slot} of {ns} let go; updates resume");
            self.stuck = None;
        }
        let held = match self.write_lock() {
            Ok(h) => h,
            Err((ns, index)) => {
                let e = format!(
                    "the reader of slot {} of {ns} held its lock over {:?}; update skipped (and the next ones until it lets go)",
                    index / 2,
                    self.lock_wait
                );
                self.stuck = Some((ns, index));
                return Err(e);
            }
        };
        let n = self.spaces.get_mut(nspace).expect("checked");
        let mut err = None;
        for (rank, kvs) in batches {
            let kv: Vec<(&str, &[u8])> = kvs.iter().map(|(k, v)| (k.as_str(), &v[..])).collect();
            if let Err(e) = n.ns.store(*rank, &kv) {
                err = Some(format!("rank {rank}: {e}"));
            }
        }
        let (m, d) = (n.ns.segs.meta.len() as u64, n.ns.segs.data.len() as u64);
        let entry = n.entry;
        if let Some(initial) = self.initial.as_mut() {
            layout::initial_set_counts(initial.bytes(), entry, m, d);
        }
        drop(held);
        err.map_or(Ok(()), Err)
    }

    /// Forget a namespace (deregistered): its entry in the initial
    /// segment cleared, its lock, meta and data files removed (clients
    /// still running keep their mappings); with the last namespace the
    /// whole directory goes, as libpmix's server removes its session
    /// when its last namespace is deleted (`pmix_common_dstor_del_nspace`).
    pub fn remove_nspace(&mut self, nspace: &str) {
        let Some(n) = self.spaces.remove(nspace) else {
            return;
        };
        if self.stuck.as_ref().is_some_and(|(ns, _)| ns == nspace) {
            self.stuck = None;
        }
        if let Some(initial) = self.initial.as_mut() {
            layout::initial_clear(initial.bytes(), n.entry);
        }
        drop(n);
        if self.spaces.is_empty() {
            self.initial = None;
            let _ = std::fs::remove_dir_all(&self.dir);
            return;
        }
        remove_ns_files(&self.dir, nspace);
    }

    /// A key of a rank as stored (for tests and inspection).
    pub fn fetch(&mut self, nspace: &str, rank: u32, key: &str) -> Option<Vec<u8>> {
        self.spaces
            .get_mut(nspace)?
            .ns
            .fetch(rank, key)
            .ok()
            .flatten()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.spaces.clear();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl crate::server::dstore::SharedStore for Session {
    fn add_nspace(&mut self, nspace: &str, local: u32) -> bool {
        match Session::add_nspace(self, nspace, local) {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!("dstore: namespace {nspace} not stored: {e}");
                false
            }
        }
    }
    fn env(&self) -> Vec<(String, String)> {
        Session::env(self)
    }
    fn store(&mut self, nspace: &str, batches: &[crate::server::dstore::Batch]) {
        if let Err(e) = Session::store(self, nspace, batches) {
            tracing::warn!("dstore: {nspace}: {e}");
        }
    }
    fn remove_nspace(&mut self, nspace: &str) {
        Session::remove_nspace(self, nspace)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_files_and_store() {
        let base = std::env::temp_dir().join(format!("pmixw-dstore-unit-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        let mut s = Session::create(&base).unwrap();
        let dir = s.dir().to_path_buf();
        s.add_nspace("job-a", 3).unwrap();
        assert!(s.add_nspace("bad/name", 1).is_err());
        for f in [
            "initial-pmix_shared-segment-0",
            "smlockseg-job-a",
            "smseg-job-a-0",
            "smdataseg-job-a-0",
        ] {
            assert!(dir.join(f).exists(), "{f}");
        }
        let lock = std::fs::read(dir.join("smlockseg-job-a")).unwrap();
        let geo = LockGeometry::new(
            3,
            std::mem::size_of::<libc::pthread_mutex_t>(),
            cacheline(),
            page(),
        );
        assert_eq!(lock.len(), geo.size);
        assert_eq!(&lock[..32], &geo.header());
        s.store("job-a", &[(1, vec![("k".into(), vec![1, 2, 3])])])
            .unwrap();
        assert_eq!(s.fetch("job-a", 1, "k"), Some(vec![1, 2, 3]));
        // what a client reads: the namespace entry in the initial segment
        let init = std::fs::read(dir.join("initial-pmix_shared-segment-0")).unwrap();
        assert_eq!(
            layout::initial_find(&init, "job-a", &Sizes::default()),
            Some((1, 1))
        );
        assert_eq!(s.claimed("job-a"), Some(0));
        // read back from the files alone
        let mut snap = crate::server::net::dstore::snapshot::Snapshot::load(&dir).unwrap();
        assert_eq!(snap.sizes, Sizes::default());
        assert_eq!(snap.spaces.len(), 1);
        let sn = &mut snap.spaces[0];
        assert_eq!(sn.name, "job-a");
        assert_eq!(
            sn.lock.as_deref().map(|l| &l[..32]),
            Some(&geo.header()[..])
        );
        assert_eq!(sn.ns.fetch(1, "k").unwrap(), Some(vec![1, 2, 3]));
        drop(s);
        assert!(!dir.exists());
        let _ = std::fs::remove_dir(&base);
    }

    #[test]
    fn a_removed_namespace_leaves_nothing_and_the_last_takes_the_directory() {
        let base = std::env::temp_dir().join(format!("pmixw-dstore-rm-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        let mut s = Session::create(&base).unwrap();
        let dir = s.dir().to_path_buf();
        let names = |d: &Path| {
            let mut v: Vec<String> = std::fs::read_dir(d)
                .map(|r| {
                    r.filter_map(|e| e.ok())
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
            v.sort();
            v
        };
        s.add_nspace("job-a", 2).unwrap();
        s.add_nspace("job-b", 2).unwrap();
        // job-a grows a second data segment (a batch larger than what is left)
        let big = vec![7u8; s.sizes.data - 4096];
        s.store("job-a", &[(0, vec![("big".into(), big.clone())])])
            .unwrap();
        s.store("job-a", &[(1, vec![("big".into(), big)])]).unwrap();
        assert!(dir.join("smdataseg-job-a-1").exists());
        s.remove_nspace("job-a");
        assert_eq!(
            names(&dir),
            [
                "initial-pmix_shared-segment-0",
                "smdataseg-job-b-0",
                "smlockseg-job-b",
                "smseg-job-b-0"
            ]
        );
        // no client finds job-a any more; job-b as before
        let init = std::fs::read(dir.join(INITIAL)).unwrap();
        assert_eq!(
            layout::initial_find(&init, "job-a", &Sizes::default()),
            None
        );
        assert_eq!(
            layout::initial_find(&init, "job-b", &Sizes::default()),
            Some((1, 1))
        );
        let snap = crate::server::net::dstore::snapshot::Snapshot::load(&dir).unwrap();
        assert_eq!(
            snap.spaces
                .iter()
                .map(|n| n.name.as_str())
                .collect::<Vec<_>>(),
            ["job-b"]
        );
        s.store("job-b", &[(0, vec![("k".into(), vec![1])])])
            .unwrap();
        assert!(s
            .store("job-a", &[(0, vec![("k".into(), vec![1])])])
            .is_err());
        // the last one: the directory goes; the next namespace makes it again
        s.remove_nspace("job-b");
        assert!(!dir.exists());
        s.add_nspace("job-c", 1).unwrap();
        assert_eq!(
            names(&dir),
            [
                "initial-pmix_shared-segment-0",
                "smdataseg-job-c-0",
                "smlockseg-job-c",
                "smseg-job-c-0"
            ]
        );
        let init = std::fs::read(dir.join(INITIAL)).unwrap();
        assert_eq!(
            layout::initial_find(&init, "job-c", &Sizes::default()),
            Some((1, 1))
        );
        drop(s);
        assert!(!dir.exists());
        let _ = std::fs::remove_dir(&base);
    }

    #[test]
    fn the_files_go_to_the_jobs_user() {
        // SAFETY: no arguments.
        let me = unsafe { libc::geteuid() };
        // as root (a slurmstepd), to another user; else to ourselves (no chown)
        let owner = if me == 0 { 65534 } else { me };
        let base = std::env::temp_dir().join(format!("pmixw-dstore-own-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        let mut s = Session::create_owned(&base, Some(owner)).unwrap();
        let dir = s.dir().to_path_buf();
        s.add_nspace("job-o", 1).unwrap();
        use std::os::unix::fs::MetadataExt;
        for f in [
            "",
            INITIAL,
            "smlockseg-job-o",
            "smseg-job-o-0",
            "smdataseg-job-o-0",
        ] {
            let m = std::fs::metadata(dir.join(f)).unwrap();
            assert_eq!(m.uid(), owner, "{f:?}");
        }
        drop(s);
        assert!(!dir.exists());
        let _ = std::fs::remove_dir(&base);
    }

    #[test]
    fn two_sessions_of_one_process_get_their_own_directories() {
        let base = std::env::temp_dir().join(format!("pmixw-dstore-two-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        let a = Session::create(&base).unwrap();
        let b = Session::create(&base).unwrap();
        assert_ne!(a.dir(), b.dir());
        assert!(a.dir().exists() && b.dir().exists());
        drop((a, b));
        std::fs::remove_dir(&base).unwrap();
    }

    fn session(tag: &str) -> (Session, PathBuf) {
        let base = std::env::temp_dir().join(format!("pmixw-dstore-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        let mut s = Session::create(&base).unwrap();
        s.add_nspace("j", 2).unwrap();
        (s, base)
    }

    /// Whether a robust mutex whose owner thread ended reports it
    /// (EOWNERDEAD) here.
    fn owner_death_is_reported() -> bool {
        // SAFETY: a heap mutex initialised before use, locked by a thread
        // that ends, probed, destroyed and freed after.
        unsafe {
            let m: *mut libc::pthread_mutex_t = Box::into_raw(Box::new(std::mem::zeroed()));
            let mut attr: libc::pthread_mutexattr_t = std::mem::zeroed();
            libc::pthread_mutexattr_init(&mut attr);
            let ok = libc::pthread_mutexattr_setrobust(&mut attr, libc::PTHREAD_MUTEX_ROBUST) == 0
                && libc::pthread_mutex_init(m, &attr) == 0;
            libc::pthread_mutexattr_destroy(&mut attr);
            if !ok {
                drop(Box::from_raw(m));
                return false;
            }
            let addr = m as usize;
            std::thread::spawn(move || {
                libc::pthread_mutex_lock(addr as *mut libc::pthread_mutex_t);
            })
            .join()
            .unwrap();
            let reported = libc::pthread_mutex_trylock(m) == libc::EOWNERDEAD;
            if reported {
                libc::pthread_mutex_consistent(m);
                libc::pthread_mutex_unlock(m);
                libc::pthread_mutex_destroy(m);
            }
            // a mutex still held is leaked, not destroyed
            if reported {
                drop(Box::from_raw(m));
            }
            reported
        }
    }

    /// A reader that ends while holding its main mutex (a thread here; a
    /// process is the same to a robust mutex) does not stop the writer.
    #[test]
    fn a_reader_dying_with_its_lock_is_recovered() {
        if !owner_death_is_reported() {
            // qemu-user: the mutexes are robust, but no thread's death is
            // ever reported (it keeps no robust futex list); the writer
            // then skips, as a_stuck_reader… checks
            eprintln!("SKIPPED: this platform does not report a dead mutex owner");
            return;
        }
        let (mut s, base) = session("dead");
        assert!(s.spaces["j"].lock.robust);
        let m = s.spaces["j"].lock.mutex(1) as usize;
        std::thread::spawn(move || {
            // SAFETY: a live process-shared mutex of the session's map.
            assert_eq!(unsafe { libc::pthread_mutex_lock(m as *mut _) }, 0);
        })
        .join()
        .unwrap();
        s.store("j", &[(0, vec![("k".into(), vec![1])])]).unwrap();
        assert_eq!(s.fetch("j", 0, "k"), Some(vec![1]));
        // and the lock works on afterwards
        s.store("j", &[(0, vec![("k".into(), vec![2])])]).unwrap();
        assert_eq!(s.fetch("j", 0, "k"), Some(vec![2]));
        drop(s);
        let _ = std::fs::remove_dir(&base);
    }

    /// A reader that holds its lock past the wait: the update is skipped
    /// (clients then ask the server), the next ones too without waiting
    /// until it lets go, and nothing is left locked.
    #[test]
    fn a_stuck_reader_makes_the_writer_skip_not_hang() {
        let (mut s, base) = session("stuck");
        s.lock_wait = Duration::from_millis(50);
        let m = s.spaces["j"].lock.mutex(3) as usize;
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let (held_tx, held_rx) = std::sync::mpsc::channel::<()>();
        let reader = std::thread::spawn(move || {
            // SAFETY: as above; unlocked by this thread before it ends.
            unsafe { libc::pthread_mutex_lock(m as *mut _) };
            held_tx.send(()).unwrap();
            let _ = rx.recv();
            unsafe { libc::pthread_mutex_unlock(m as *mut _) };
        });
        held_rx.recv().unwrap();
        let r = s.store("j", &[(1, vec![("k".into(), vec![1])])]);
        let e = r.unwrap_err();
        assert!(e.contains("held its lock over 50ms; update skipped"), "{e}");
        assert!(e.contains("slot 1 of j"), "{e}");
        assert_eq!(s.fetch("j", 1, "k"), None);
        // the next update does not wait for it again: skipped at once
        let e = s
            .store("j", &[(1, vec![("k".into(), vec![2])])])
            .unwrap_err();
        assert!(e.contains("slot 1 of j still holds its lock"), "{e}");
        assert_eq!(s.fetch("j", 1, "k"), None);
        tx.send(()).unwrap();
        reader.join().unwrap();
        // every mutex the writer took was given back
        s.store("j", &[(1, vec![("k".into(), vec![3])])]).unwrap();
        assert_eq!(s.fetch("j", 1, "k"), Some(vec![3]));
        drop(s);
        let _ = std::fs::remove_dir(&base);
    }
}
