//! The differential check against libpmix: the logic of the fuzz targets
//! `diff_unpack` and `diff_encode` (fuzz/fuzz_targets/, nightly), which
//! codec/tests/libpmix_diff_replay.rs runs over corpus/fuzz/diff_*/ and the named
//! regressions on stable Rust.
//!
//! Input layout: that of `unpack_any` (test-kit/src/targets.rs):
//! byte 0 the type code (mod 76), byte 1 the format, the rest the buffer.
//!
//! libpmix is the harness's C program `interop/c/unpack.c` (built
//! against `pkg-config pmix` by `crate::interop::build_c`): a tool
//! initialised with PMIX_TOOL_DO_NOT_CONNECT that unpacks unit after unit
//! with `PMIx_Data_unpack` and re-packs all values with `PMIx_Data_pack`.
//! libpmix takes its dialect and buffer type from its environment, so each
//! format gets its own long-lived child process; a child also contains
//! libpmix's crashes and its allocations from unchecked counts (which
//! would trip the fuzzer's allocation cap in-process). A child serves from
//! forked copies of its initialised self (unpack.c's fork server): a copy
//! that crashes is replaced by another fork; a child that dies, hangs or
//! runs away is started again for the next input.
//!
//! * `diff_unpack`: the same bytes, unpacked by both, must agree: both
//!   refuse, or both accept and libpmix's re-pack of its values equals our
//!   encoding of ours (one unit).
//! * `diff_encode`: whatever we decode, we encode; libpmix must unpack
//!   our bytes and re-pack them to the same bytes.
//!
//! Disagreements that are libpmix defects, or deliberate strictness of
//! ours, are listed in [`KNOWN_DIVERGENCES`] with the reason.
#![allow(dead_code)]

pub use crate::targets;

use pmix_codec::{decode, encode, Dialect, ErrorKind, Format};
use pmix_types::{DataArray, DataType, Value};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

/// What libpmix made of some bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CAnswer {
    /// Status of the unpack, and the re-pack of every value (None when
    /// the unpack failed or the re-pack did).
    Unpacked { rc: i32, repack: Option<Vec<u8>> },
    /// The child died on this input (signal or exit status).
    Crashed(String),
}

struct Peer {
    child: Child,
    stdin: ChildStdin,
    /// Answer lines, read by a thread: a line, or why there is none.
    lines: Receiver<Result<Vec<u8>, String>>,
}

/// The longest answer taken from libpmix: inputs are at most a few KiB,
/// but libpmix believes some sizes it should refuse and prints gigabytes.
pub const MAX_ANSWER: u64 = 4 << 20;
/// How long libpmix may take over one input before it counts as hung
/// (wall clock: a backstop behind the CPU budget).
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);
/// The CPU libpmix may spend on one input (unpack.c's
/// PMIXW_UNPACK_CPU_MS, which also caps its address space at 256 MiB): an
/// input needs well under a millisecond, the ones that walk 2^28 UNDEF
/// elements or zero gigabytes never finish. Before this budget each of
/// those held a fuzz target for the 30 s above. (PMIXW_UNPACK_NO_PRINT
/// leaves out PMIx_Data_print, whose text is not compared: its walk over
/// UNDEF elements was the slow part, and its crash on a TIME beyond
/// ctime() a divergence of the harness, not of the wire.)
pub const CPU_BUDGET_MS: u32 = 1000;

/// One libpmix child per format, started on first use.
pub struct LibPmix {
    exe: std::path::PathBuf,
    peers: HashMap<(Dialect, bool, bool), Peer>,
}

fn key(fmt: &Format) -> (Dialect, bool, bool) {
    (
        fmt.dialect,
        fmt.buffer_type == pmix_codec::BufferType::FullyDesc,
        fmt.fixed_ints,
    )
}

fn read_lines(stdout: ChildStdout, tx: Sender<Result<Vec<u8>, String>>) {
    let mut r = BufReader::new(stdout);
    loop {
        // printed C strings may be any bytes: read bytes, not UTF-8
        let mut line = Vec::new();
        let msg = match (&mut r).take(MAX_ANSWER).read_until(b'\n', &mut line) {
            Ok(0) => Err("it died".to_string()),
            Ok(_) if line.ends_with(b"\n") => Ok(line),
            Ok(_) => Err(format!("runaway: an answer over {MAX_ANSWER} bytes")),
            Err(e) => Err(e.to_string()),
        };
        let last = msg.is_err();
        if tx.send(msg).is_err() || last {
            return;
        }
    }
}

impl LibPmix {
    /// Build the C program (pkg-config pmix); Err says what is missing.
    pub fn new() -> Result<LibPmix, String> {
        let exe = crate::interop::build_c("unpack", &crate::interop::default_out_dir())?;
        Ok(LibPmix {
            exe,
            peers: HashMap::new(),
        })
    }

    fn peer(&mut self, fmt: &Format) -> &mut Peer {
        let exe = &self.exe;
        self.peers.entry(key(fmt)).or_insert_with(|| {
            let mut child = Command::new(exe)
                .envs(crate::interop::format_env(fmt))
                .env("TMPDIR", std::env::temp_dir())
                .env("PMIXW_UNPACK_CPU_MS", CPU_BUDGET_MS.to_string())
                // the print is not compared, and is quadratic in UNDEF elements
                .env("PMIXW_UNPACK_NO_PRINT", "1")
                // a crash costs a fork of the initialised process, not a new one
                .env("PMIXW_UNPACK_FORKSERVER", "1")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| panic!("{}: {e}", exe.display()));
            let stdin = child.stdin.take().expect("piped");
            let stdout = child.stdout.take().expect("piped");
            let (tx, lines) = channel();
            std::thread::spawn(move || read_lines(stdout, tx));
            Peer {
                child,
                stdin,
                lines,
            }
        })
    }

    /// libpmix's unpack of `bytes` as units of `ty` in `fmt`.
    pub fn unpack(&mut self, fmt: &Format, ty: DataType, bytes: &[u8]) -> CAnswer {
        let line = format!("{}\t{}\n", ty.short_name(), pmix_types::hex::encode(bytes));
        let peer = self.peer(fmt);
        let answer =
            if peer.stdin.write_all(line.as_bytes()).is_err() || peer.stdin.flush().is_err() {
                Err("it died".to_string())
            } else {
                match peer.lines.recv_timeout(ANSWER_TIMEOUT) {
                    Ok(a) => a,
                    Err(RecvTimeoutError::Timeout) => {
                        Err(format!("hung: no answer in {ANSWER_TIMEOUT:?}"))
                    }
                    Err(RecvTimeoutError::Disconnected) => Err("it died".to_string()),
                }
            };
        let answer = match answer {
            Ok(a) if crash_at(&a).is_some() => {
                // the copy that served died (after part of its answer, if
                // any): the child forked another one
                let at = crash_at(&a).expect("just found") + CRASH.len();
                let how = String::from_utf8_lossy(&a[at..]);
                return CAnswer::Crashed(format!("it died; {}", how.trim_end()));
            }
            Ok(a) => a,
            Err(why) => {
                // stopped for good: the next input gets a new child
                let mut dead = self.peers.remove(&key(fmt)).expect("the peer just used");
                let _ = dead.child.kill();
                let status = dead
                    .child
                    .wait()
                    .map(|s| s.to_string())
                    .unwrap_or_else(|e| e.to_string());
                return CAnswer::Crashed(format!("{why}; {status}"));
            }
        };
        let answer = String::from_utf8_lossy(&answer);
        let f: Vec<&str> = answer.trim_end_matches('\n').splitn(4, '\t').collect();
        let rc = f.first().and_then(|s| s.parse().ok()).unwrap_or(i32::MIN);
        let repack = f
            .get(2)
            .filter(|h| rc == 0 && !h.is_empty())
            .and_then(|h| pmix_types::hex::decode(h).ok());
        CAnswer::Unpacked { rc, repack }
    }
}

/// How unpack.c's fork server answers for a copy that died on the line
/// (byte 01 is in no answer: it follows whatever part the copy wrote).
const CRASH: &[u8] = b"\x01CRASH\t";

fn crash_at(line: &[u8]) -> Option<usize> {
    line.windows(CRASH.len()).position(|w| w == CRASH)
}

/// The children for a fuzz target. libFuzzer's own `main` leaves SIGPIPE
/// at its default, so writing to a child that has just died would kill
/// the fuzzer; Rust programs and tests ignore it already.
pub fn for_fuzzing() -> LibPmix {
    extern "C" {
        fn signal(signum: i32, handler: usize) -> usize;
    }
    const SIGPIPE: i32 = 13;
    const SIG_IGN: usize = 1;
    // SAFETY: sets the disposition of SIGPIPE to SIG_IGN, as Rust's runtime
    // does before main; no handler code is installed.
    unsafe {
        signal(SIGPIPE, SIG_IGN);
    }
    LibPmix::new().expect("libpmix (pkg-config pmix)")
}

/// Where a campaign keeps divergences instead of stopping at the first:
/// the directory named by this variable (see `fuzz_one`).
pub const FINDINGS_ENV: &str = "PMIXW_DIFF_FINDINGS";

/// One fuzz input through `check`: a divergence panics (libFuzzer keeps
/// the input and stops), listed ones are counted on stderr at powers of
/// two. With `PMIXW_DIFF_FINDINGS=DIR` (fuzz/campaign) a divergence is
/// written to `DIR/divergence-<hash>`, said on stderr, and the run goes
/// on: one process keeps its children and its corpus for the whole
/// campaign instead of libFuzzer's `-fork` mode restarting both after
/// every finding. Replaying a kept file without the variable panics.
pub fn fuzz_one(check: fn(&mut LibPmix, &[u8]) -> Verdict, data: &[u8]) {
    use std::sync::Mutex;
    static LIBPMIX: Mutex<Option<LibPmix>> = Mutex::new(None);
    static LISTED: Mutex<u64> = Mutex::new(0);
    let mut c = LIBPMIX.lock().unwrap_or_else(|p| p.into_inner());
    let c = c.get_or_insert_with(for_fuzzing);
    match check(c, data) {
        Verdict::Divergence(d) => match std::env::var_os(FINDINGS_ENV) {
            Some(dir) => keep_finding(std::path::Path::new(&dir), data, &d),
            None => panic!("divergence: {d}"),
        },
        Verdict::Listed(_) => {
            let mut n = LISTED.lock().unwrap_or_else(|p| p.into_inner());
            *n += 1;
            if n.is_power_of_two() {
                eprintln!("diff: {} listed libpmix divergences so far", *n);
            }
        }
        Verdict::Agree | Verdict::Skip => {}
    }
}

/// Keep a divergent input as `dir/divergence-<hash of the bytes>`.
fn keep_finding(dir: &std::path::Path, data: &[u8], what: &str) {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    data.hash(&mut h);
    let path = dir.join(format!("divergence-{:016x}", h.finish()));
    if let Err(e) = std::fs::write(&path, data) {
        panic!("divergence: {what} (not kept in {}: {e})", path.display());
    }
    eprintln!("diff: kept {}: divergence: {what}", path.display());
}

impl LibPmix {
    /// Stop every child: the next input gets fresh ones.
    pub fn restart(&mut self) {
        for (_, mut p) in self.peers.drain() {
            let _ = p.child.kill();
            let _ = p.child.wait();
        }
    }
}

impl Drop for LibPmix {
    fn drop(&mut self) {
        for (_, mut p) in self.peers.drain() {
            drop(p.stdin); // EOF: the child finalizes and exits
            let _ = p.child.wait();
        }
    }
}

/// The verdict on one input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing to compare (the input selects nothing, or, for
    /// `diff_encode`, we refuse it).
    Skip,
    Agree,
    /// A listed divergence: its name.
    Listed(&'static str),
    Divergence(String),
}

/// What we made of the bytes, for the classifiers.
pub struct Case<'a> {
    pub fmt: Format,
    pub ty: DataType,
    pub payload: &'a [u8],
    pub ours: &'a Result<Vec<Value>, pmix_codec::Error>,
    pub theirs: &'a CAnswer,
}

/// A listed divergence: name, reason, and whether it explains a case.
pub type Known = (&'static str, &'static str, fn(&Case) -> bool);

/// Whether a value holds, anywhere inside, a value of one of `tys`.
pub fn holds(v: &Value, tys: &[DataType]) -> bool {
    holds_where(v, &|x| tys.contains(&x.data_type()))
}

/// Whether a value is, or holds anywhere inside, a value `f` picks.
pub fn holds_where(v: &Value, f: &dyn Fn(&Value) -> bool) -> bool {
    if f(v) {
        return true;
    }
    let any_info = |l: &[pmix_types::Info]| l.iter().any(|i| holds_where(&i.value, f));
    match v {
        Value::Value(x) => holds_where(x, f),
        Value::Info(i) => holds_where(&i.value, f),
        Value::Pdata(p) => holds_where(&p.value, f),
        Value::Kval(k) => holds_where(&k.value, f),
        Value::App(a) => any_info(&a.info),
        Value::Query(q) => any_info(&q.qualifiers),
        Value::InfoArray(l) => any_info(l),
        Value::DataArray(a) => match &**a {
            DataArray::Typed { elements, .. } => elements.iter().any(|e| holds_where(e, f)),
            DataArray::Undef { .. } => false,
        },
        _ => false,
    }
}

/// A NODE_STATS with disk or net stats (libpmix's pointer bug).
fn node_stats_with_lists(v: &Value) -> bool {
    matches!(v, Value::NodeStats(n) if !n.diskstats.is_empty() || !n.netstats.is_empty())
}

/// Whether the unit type is one of `tys`, or our values hold one.
fn ours_hold(c: &Case, tys: &[DataType]) -> bool {
    tys.contains(&c.ty) || matches!(c.ours, Ok(v) if v.iter().any(|x| holds(x, tys)))
}

/// Whether libpmix accepted the bytes.
fn c_accepts(c: &Case) -> bool {
    c_rc(c) == Some(0)
}

/// Our error, when we refuse.
fn ours_refuse<'a>(c: &Case<'a>) -> Option<&'a ErrorKind> {
    c.ours.as_ref().err().map(|e| &e.kind)
}

fn flex(c: &Case) -> bool {
    c.fmt.ints() == pmix_codec::Ints::Flex
}

fn c_rc(c: &Case) -> Option<i32> {
    match c.theirs {
        CAnswer::Unpacked { rc, .. } => Some(*rc),
        CAnswer::Crashed(_) => None,
    }
}

fn c_refuses(c: &Case) -> bool {
    matches!(c_rc(c), Some(rc) if rc != 0)
}

fn dialect(c: &Case, d: Dialect) -> bool {
    c.fmt.dialect == d
}

/// Whether some unit of the bytes (read unit by unit) has a number of
/// items that `f` picks.
fn some_unit(c: &Case, f: fn(usize) -> bool) -> bool {
    let mut rest = c.payload;
    while !rest.is_empty() {
        match pmix_codec::decode_unit(&c.fmt, c.ty, rest) {
            Ok((v, used)) if used > 0 => {
                if f(v.len()) {
                    return true;
                }
                rest = &rest[used..];
            }
            _ => return false,
        }
    }
    false
}

/// The item of the unit where we refuse (an error path starting "[n]").
fn refused_at_item(c: &Case) -> Option<usize> {
    let e = c.ours.as_ref().err()?;
    let first = e.path.first()?;
    first.strip_prefix('[')?.strip_suffix(']')?.parse().ok()
}

/// Whether the bytes hold a unit of count 0.
fn has_empty_unit(c: &Case) -> bool {
    some_unit(c, |n| n == 0)
}

/// Whether the bytes hold a unit of more than 64 items.
fn big_unit(c: &Case) -> bool {
    some_unit(c, |n| n > 64)
}

/// How many items libpmix's re-pack holds, read by our decoder (one unit).
fn c_repack_items(c: &Case) -> Option<usize> {
    match c.theirs {
        CAnswer::Unpacked {
            rc: 0,
            repack: Some(r),
        } => match pmix_codec::decode_unit(&c.fmt, c.ty, r) {
            Ok((v, used)) if used == r.len() => Some(v.len()),
            _ => None,
        },
        _ => None,
    }
}

/// Apply `f` to a value and to every value it holds (depth first).
fn each_value(v: &mut Value, f: &dyn Fn(&mut Value)) {
    f(v);
    let infos = |l: &mut [pmix_types::Info]| l.iter_mut().for_each(|i| each_value(&mut i.value, f));
    match v {
        Value::Pdata(p) => each_value(&mut p.value, f),
        Value::Value(x) => each_value(x, f),
        Value::Info(i) => each_value(&mut i.value, f),
        Value::Kval(k) => each_value(&mut k.value, f),
        Value::App(a) => infos(&mut a.info),
        Value::Query(q) => infos(&mut q.qualifiers),
        Value::InfoArray(l) => infos(l),
        Value::DataArray(a) => {
            if let DataArray::Typed { elements, .. } = &mut **a {
                elements.iter_mut().for_each(|e| each_value(e, f));
            }
        }
        _ => {}
    }
}

/// Apply `f` to every PROC that a value is or holds (PDATA's and
/// PROC_INFO's included).
fn each_proc(v: &mut Value, f: &dyn Fn(&mut pmix_types::Proc)) {
    each_value(v, &|x| match x {
        Value::Proc(p) => f(p),
        Value::ProcInfo(p) => f(&mut p.proc),
        Value::Pdata(p) => f(&mut p.proc),
        _ => {}
    })
}

/// v1.2's special ranks (an int32: UNDEF INT32_MAX, WILDCARD INT32_MAX-1)
/// as libpmix's v12 unpacker turns them into v2's (UINT32_MAX, UINT32_MAX-1).
fn v12_rank_sentinels_widened(p: &mut pmix_types::Proc) {
    if p.rank == i32::MAX as u32 || p.rank == i32::MAX as u32 - 1 {
        p.rank += 1 << 31;
    }
}

/// Whether libpmix accepted and re-packed exactly our encoding of our
/// values after `f` was applied to every PROC in them (and `f` changed one).
fn c_repack_is_ours_with_procs(c: &Case, f: &dyn Fn(&mut pmix_types::Proc)) -> bool {
    c_repack_is_ours_mapped(c, &|v| each_proc(v, f))
}

/// Whether libpmix accepted and re-packed exactly our encoding of our
/// values after `f` was applied to each top-level value (and `f` changed one).
fn c_repack_is_ours_mapped(c: &Case, f: &dyn Fn(&mut Value)) -> bool {
    let (
        CAnswer::Unpacked {
            rc: 0,
            repack: Some(r),
        },
        Ok(ours),
    ) = (c.theirs, c.ours)
    else {
        return false;
    };
    let mut mapped = ours.clone();
    mapped.iter_mut().for_each(f);
    &mapped != ours && encode(&c.fmt, c.ty, &mapped).is_ok_and(|m| &m == r)
}

/// Whether the bytes hold a v20 integer type tag twice in a row (00 t 00 t)
/// other than UINT64 (15, libpmix's size_t): the shape of a size_t from a
/// sender whose size_t is narrower, which we read (our re-encoding then
/// writes UINT64) and libpmix's unpack_sizet reads without its second tag.
fn narrow_tag_pair(b: &[u8]) -> bool {
    b.windows(4)
        .any(|w| w[0] == 0 && w[2] == 0 && w[1] == w[3] && (7..=14).contains(&w[1]))
}

/// Whether the bytes at `at` are a v12 FULLY_DESC integer type tag twice
/// (00 00 00 t 00 00 00 t, t from INT8 7 to UINT64 15) other than INT32
/// (9) and UINT64 (15), libpmix's own int and size_t: an INT's or SIZE's
/// two system tags from a sender of another width, which libpmix's v12
/// reads once (`v12-described-int-size`). Its own INTs and SIZEs (09 09,
/// 0f 0f) are not this.
fn doubled_v12_int_tag_at(b: &[u8], at: usize) -> bool {
    b.get(at..at.saturating_add(8)).is_some_and(|w| {
        w[..3] == [0, 0, 0]
            && (7..=15).contains(&w[3])
            && !matches!(w[3], 9 | 15)
            && w[..4] == w[4..]
    })
}

/// MODEX values as libpmix re-packs them: with no bytes. (A MODEX unit,
/// which libpmix reads right, is not compared: see [`split`].)
fn modex_values_emptied(v: &mut Value) {
    each_value(v, &|x| {
        if let Value::Modex(h) = x {
            h.0 = Default::default();
        }
    })
}

/// v12 packs a DOUBLE as text (a 4-byte length, then the characters; a
/// NULL text is the length 0 alone), but its unpacker first checks that
/// `count * sizeof(double)` bytes remain. Whether some DOUBLE unit of the
/// bytes has fewer than that behind its count.
fn double_unit_under_8_bytes_each(c: &Case) -> bool {
    let Ok(head) = encode(&c.fmt, DataType::Double, &[]) else {
        return false;
    };
    let mut rest = c.payload;
    while !rest.is_empty() {
        match pmix_codec::decode_unit(&c.fmt, DataType::Double, rest) {
            Ok((v, used)) if used > 0 => {
                if rest.len() < head.len() + 8 * v.len() {
                    return true;
                }
                rest = &rest[used..];
            }
            _ => return false,
        }
    }
    false
}

/// Whether libpmix accepted, and its re-pack (other bytes than our
/// encoding) reads back, with our decoder, to the values we read.
fn c_repack_reads_as_ours(c: &Case) -> bool {
    match (c.theirs, c.ours) {
        (
            CAnswer::Unpacked {
                rc: 0,
                repack: Some(r),
            },
            Ok(ours),
        ) => decode(&c.fmt, c.ty, r).is_ok_and(|v| &v == ours),
        _ => false,
    }
}

/// Whether libpmix and we agree on a case (the comparison of `unpack_once`
/// and `compare_values`): both refuse, or both accept and libpmix's re-pack
/// is our encoding of our values.
fn agrees(c: &Case) -> bool {
    match (c.ours, c.theirs) {
        (_, CAnswer::Crashed(_)) => false,
        (Err(_), CAnswer::Unpacked { rc, .. }) => *rc != 0,
        (Ok(v), CAnswer::Unpacked { rc: 0, repack }) => {
            repack.is_some() && encode(&c.fmt, c.ty, v).ok() == *repack
        }
        (Ok(_), CAnswer::Unpacked { .. }) => false,
    }
}

/// The most PROC_STATS `proc_stats_as_libpmix_reads` follows in one input.
const MAX_PROC_STATS_SHIFTS: usize = 64;

/// The bytes as libpmix 4.2.2 reads them when they hold PROC_STATS: its
/// unpacker reads a FLOAT (peak_vsize, a STRING on the wire) between rss
/// and processor that no packer writes (divergences.md §3), so it takes
/// the bytes sent as processor and what follows for that string, and reads
/// every later field and unit late by that much. Removing those bytes
/// gives what libpmix decodes as our decoder reads it. Each PROC_STATS is
/// found where our decoder, given the bytes cut there, runs out exactly at
/// its `processor` field (or, in the flex dialects, fails exactly there on
/// a varint that never ends put after the cut, for units whose count the
/// bytes cut short would not hold); the string's extent is its INT32 length (read as
/// libpmix's unpack_string reads it) plus that many bytes. None when no
/// PROC_STATS is met, or the string is negative or runs past the bytes
/// (libpmix then refuses; described buffers, whose fields carry type tags,
/// are not followed).
pub fn proc_stats_as_libpmix_reads(fmt: &Format, ty: DataType, payload: &[u8]) -> Option<Vec<u8>> {
    // The field before processor is rss, a FLOAT text: a C string, whose
    // last byte is its NUL, or NULL, a length 0 whose last byte is 0 too
    // (4 bytes, or the varint 00). So the processor can only start after a
    // byte 0, and only those cuts are decoded: a decode per byte of the
    // input was 59 % of diff_unpack's CPU once the fuzzer had found the
    // late reading (robustness.md, the late closing campaign).
    late_view(fmt, ty, payload, |view, cut| view[cut - 1] == 0)
}

/// [`proc_stats_as_libpmix_reads`] decoding at every cut (what the byte-0
/// rule must not change: codec/tests/libpmix_diff_replay.rs compares them).
pub fn proc_stats_as_libpmix_reads_at_every_cut(
    fmt: &Format,
    ty: DataType,
    payload: &[u8],
) -> Option<Vec<u8>> {
    late_view(fmt, ty, payload, |_, _| true)
}

/// The late reading, trying only the cuts `candidate` allows.
fn late_view(
    fmt: &Format,
    ty: DataType,
    payload: &[u8],
    candidate: fn(&[u8], usize) -> bool,
) -> Option<Vec<u8>> {
    // PROC_STATS is the unit's type or appears as its code (61) somewhere
    let code = DataType::ProcStats as u8;
    if fmt.buffer_type == pmix_codec::BufferType::FullyDesc
        || (ty != DataType::ProcStats && !payload.contains(&code))
    {
        return None;
    }
    // a unit header for one INT32: read the string's length as a unit's item
    let one = encode(fmt, DataType::Int32, &[Value::Int32(0)]).ok()?;
    let header = &one[..encode(fmt, DataType::Int32, &[]).ok()?.len()];
    let flex_ints = fmt.ints() == pmix_codec::Ints::Flex;
    let pad = vec![0xff; payload.len()];
    let mut view = payload.to_vec();
    let mut from = 1;
    let mut shifted = false;
    for _ in 0..MAX_PROC_STATS_SHIFTS {
        let Some(p) = (from..=view.len()).find(|&cut| {
            if !candidate(&view, cut) {
                return false;
            }
            let at_processor = |e: &pmix_codec::Error| {
                e.offset == cut && e.path.last().is_some_and(|f| f == "processor")
            };
            matches!(decode(fmt, ty, &view[..cut]), Err(e)
                if at_processor(&e) && matches!(e.kind, ErrorKind::ReadPastEnd { .. }))
                // cut short, a unit's count exceeds the bytes before its items
                // are read: then the bytes cut there and followed by a varint
                // that never ends (ff ...) fail at the processor's first byte
                || (flex_ints
                    && matches!(decode(fmt, ty, &[&view[..cut], &pad[..]].concat()), Err(e)
                        if at_processor(&e)))
        }) else {
            break;
        };
        let mut unit = header.to_vec();
        unit.extend_from_slice(&view[p..]);
        let (v, used) = pmix_codec::decode_unit(fmt, DataType::Int32, &unit).ok()?;
        let (len, used) = match v.as_slice() {
            [Value::Int32(n)] if *n >= 0 => (*n as usize, used - header.len()),
            _ => return None,
        };
        let end = p.checked_add(used)?.checked_add(len)?;
        if end > view.len() {
            return None;
        }
        view.drain(p..end);
        shifted = true;
        from = p + 1;
    }
    shifted.then_some(view)
}

/// Whether a disagreement is libpmix reading PROC_STATS one FLOAT late:
/// on the bytes as libpmix reads them (`proc_stats_as_libpmix_reads`) our
/// decoder agrees with libpmix's answer, or differs from it by another
/// listed divergence. Recognised from the input and libpmix's verdict: the
/// late reading must give exactly libpmix's re-pack, or its refusal.
fn proc_stats_read_late(c: &Case) -> bool {
    let Some(view) = proc_stats_as_libpmix_reads(&c.fmt, c.ty, c.payload) else {
        return false;
    };
    let ours = decode(&c.fmt, c.ty, &view);
    let late = Case {
        fmt: c.fmt,
        ty: c.ty,
        payload: &view,
        ours: &ours,
        theirs: c.theirs,
    };
    agrees(&late)
        || KNOWN_DIVERGENCES
            .iter()
            .any(|(n, _, f)| *n != "proc-stats-unpack" && f(&late))
}

/// Divergences that are libpmix 4.2.2's defects, with the reason: the same
/// defects `crate::interop::KNOWN_C_DEFECTS` lists for the interop
/// matrix (named there in brackets), met here on fuzzed bytes. Each has a
/// named input in codec/tests/libpmix_diff_replay.rs, which also checks that it still
/// shows.
pub const KNOWN_DIVERGENCES: &[Known] = &[
    (
        "data-type-zigzag",
        "libpmix packs PMIX_DATA_TYPE as UINT16 but unpacks it as INT16 (zig-zag) in the flex dialects (bfrops.md §10.3), also inside REGATTR: its re-pack differs; we keep the unsigned value that was sent [DATA_TYPE/*, REGATTR/*]",
        |c| flex(c) && ours_hold(c, &[DataType::DataTypeCode, DataType::RegAttr]),
    ),
    (
        "proc-stats-unpack",
        "libpmix's PROC_STATS unpacker reads a peak_vsize FLOAT its packer never wrote (bfrops.md §4.15): it refuses well-formed PROC_STATS, its own included, or, when bytes follow, reads every later field one field late and re-packs other values [PROC_STATS/*]; so are the units after it, where we may refuse what libpmix, reading late, accepts: recognised when our decoder, reading the bytes without those libpmix takes for peak_vsize, agrees with libpmix's answer or differs by another listed divergence",
        // and proc_stats_read_late, which `explain` tries after every other
        // entry: it decodes the bytes once per cut (robustness.md, third
        // closing campaign)
        |c| (c_refuses(c) || c_accepts(c)) && ours_hold(c, &[DataType::ProcStats]),
    ),
    (
        "node-stats-pointer",
        "libpmix's pack_ndstats/unpack_ndstats pass the address of the pointer to the disk and net stats arrays (divergences.md §4): a NODE_STATS with disk or net stats re-packs garbage, is refused, or corrupts libpmix's memory and crashes it",
        |c| matches!(c.ours, Ok(v) if v.iter().any(|x| holds_where(x, &node_stats_with_lists))),
    ),
    (
        "darray-nomem",
        "libpmix's DATA_ARRAY unpacker allocates element storage only for a fixed list of types; for the others (DATA_ARRAY, COMMAND, REGEX, JOB_STATE, ...) it fails with PMIX_ERR_NOMEM (-32), also on v5.0.11's own vector DATA_ARRAY_darray_of_darray [DATA_ARRAY/depth5, DATA_ARRAY/of_*]",
        |c| c_rc(c) == Some(-32) && ours_hold(c, &[DataType::DataArray]),
    ),
    (
        "count-zero-unit",
        "a unit of count 0 is legal (encoding-v41.md; v5.0.11/v41/INT32_count0) but libpmix 4.2.2's unpack fails on it: -50, or -46 (NOT_FOUND) when more units follow (v5.0.11's manifest: -19) [INT32/count0]",
        |c| matches!(c_rc(c), Some(-50 | -46)) && has_empty_unit(c),
    ),
    (
        "v20-darray-element-types",
        "libpmix's v20 DATA_ARRAY unpacker supports a fixed list of element types; others fail with PMIX_ERR_NOT_SUPPORTED (-47, v20/unpack.c) [DATA_ARRAY/of_alloc_directive ...]",
        |c| dialect(c, Dialect::V20) && c_rc(c) == Some(-47) && ours_hold(c, &[DataType::DataArray]),
    ),
    (
        "v20-value-persist",
        "libpmix's v20 value unpacker cannot read a PERSIST value, its own included (-50; -1 or -29 depending on the bytes it reads instead) [VALUE/persist, INFO/v_persist]",
        |c| dialect(c, Dialect::V20) && c_refuses(c) && ours_hold(c, &[DataType::Persist]),
    ),
    (
        "v12-no-payload-types",
        "libpmix's v12 packs nothing for INFO_DIRECTIVES, PROC_STATE and POINTER and cannot unpack those units (-47; -22 described); we read them as zeros (dialects.md) [INFO_DIRECTIVES/*, PROC_STATE/*, POINTER/*]",
        |c| {
            dialect(c, Dialect::V12)
                && c_refuses(c)
                && ours_hold(
                    c,
                    &[DataType::InfoDirectives, DataType::ProcState, DataType::Pointer],
                )
        },
    ),
    (
        "legacy-widened-enums",
        "libpmix's v12 reads 1-byte SCOPE, DATA_RANGE, PERSIST, COMMAND and the 2-byte DATA_TYPE as 4-byte ints into the caller's smaller variables (v20: COMMAND), overrunning them and keeping garbage high bytes (bfrops.md §8.3); we read the low byte(s) [SCOPE/edges, COMMAND/edges ...]",
        |c| {
            let v12 = [
                DataType::Scope,
                DataType::DataRange,
                DataType::Persist,
                DataType::Command,
                DataType::DataTypeCode,
            ];
            (dialect(c, Dialect::V12) && (v12.contains(&c.ty) || ours_hold(c, &v12)))
                || (dialect(c, Dialect::V20)
                    && (c.ty == DataType::Command || ours_hold(c, &[DataType::Command])))
        },
    ),
    (
        "v12-described-proc",
        "libpmix's v12 renumbers type tags on send but not PROC (22), and renumbers 22 to INFO_ARRAY on receipt: it cannot unpack described PROC units, its own included (-22) [PROC/* in v12-fullydesc]",
        |c| {
            dialect(c, Dialect::V12)
                && c.fmt.buffer_type == pmix_codec::BufferType::FullyDesc
                && c_rc(c) == Some(-22)
                && ours_hold(c, &[DataType::Proc])
        },
    ),
    (
        "v12-info-array-value-overrun",
        "libpmix's v12 value unpacker turns an INFO_ARRAY value into a DATA_ARRAY: it callocs a 24-byte pmix_data_array_t and unpacks the pmix_info_array_t (size, pointer: 16 bytes) into its last field (&darray->array, 8 bytes from its end), writing 8 bytes past the allocation into the next chunk's header: malloc aborts (SIGABRT), also on an empty INFO_ARRAY and on our own bytes of one (v12/unpack.c, case PMIX_INFO_ARRAY of unpack_val). We read the array",
        |c| {
            dialect(c, Dialect::V12)
                && matches!(c.theirs, CAnswer::Crashed(_))
                && c.ours.is_ok()
                && ours_hold(c, &[DataType::InfoArray])
        },
    ),
    (
        "value-holds-value",
        "libpmix 4.2.2 unpacks a pmix_value_t whose type is one the union cannot hold (VALUE, INFO …) and corrupts memory (divergences.md §18); we refuse",
        |c| c_accepts(c) && matches!(ours_refuse(c), Some(ErrorKind::Invalid(m)) if m.contains("pmix_value_t cannot hold")),
    ),
    (
        "overlong-varint",
        "libpmix's flex128 decoder refuses a varint with more bytes than its type needs (a 16-bit value in 4 bytes, fe ff 83 00: psquash_flex128.c:287, -20); pmix-wire accepts such non-canonical varints: an open question for the codec, not a libpmix defect",
        |c| flex(c) && c_rc(c) == Some(-20) && c.ours.is_ok(),
    ),
    (
        "negative-count",
        "libpmix does not check the sign of counts and lengths: a negative one reads as nothing and the unpack goes on; we refuse negative counts and lengths (ValueOutOfRange, robustness.md). Also the count before a REGEX's string in the count + STRING form (libpmix's preg fallback): negative or 0, it reads no string and leaves the REGEX as it was (NULL, which its re-pack then crashes on, or a KVAL's unzeroed garbage); we refuse any count but 1 (Invalid)",
        |c| {
            c_accepts(c)
                && match ours_refuse(c) {
                    Some(ErrorKind::ValueOutOfRange { value, .. }) => *value < 0,
                    Some(ErrorKind::Invalid(m)) => {
                        m.contains("REGEX string has count -")
                            || m.contains("REGEX string has count 0,")
                    }
                    _ => false,
                }
        },
    ),
    (
        "c-string-unchecked",
        "libpmix copies a string by its length without checking that the bytes are a C string (a NUL inside, no terminating NUL); we refuse what is not a C string (robustness.md, strings)",
        |c| {
            c_accepts(c)
                && matches!(ours_refuse(c), Some(ErrorKind::BadString(s)) if *s != "not a floating-point number")
        },
    ),
    (
        "float-text-unchecked",
        "libpmix accepts FLOAT/DOUBLE text that is not a number; we refuse it (float.md)",
        |c| {
            c_accepts(c)
                && matches!(ours_refuse(c), Some(ErrorKind::BadString(s)) if *s == "not a floating-point number")
        },
    ),
    (
        "libpmix-crash",
        "libpmix 4.2.2 crashes (SIGSEGV, SIGABRT), hangs or runs away (believes a size it never checked and prints gigabytes) on malformed bytes that we refuse; its child process contains it, and the input is kept and skipped",
        |c| matches!(c.theirs, CAnswer::Crashed(_)) && c.ours.is_err(),
    ),
    (
        "flex-read-past-end",
        "libpmix's flex128 decoder does not check the bytes remaining inside a varint: one whose continuation bits run past the end of the buffer is read from beyond it; we refuse (ReadPastEnd)",
        |c| flex(c) && c_accepts(c) && matches!(ours_refuse(c), Some(ErrorKind::ReadPastEnd { .. })),
    ),
    (
        "harness-64-items",
        "unpack.c asks libpmix for at most 64 items per call; for a larger unit libpmix 4.2.2 unpacks 64 (INADEQUATE_SPACE) and leaves the rest without their count, so the next call reads item bytes as a new unit: units over 64 items are not comparable",
        |c| {
            big_unit(c)
                || matches!(ours_refuse(c), Some(ErrorKind::CountTooLarge { count, .. }) if *count > 64)
                || refused_at_item(c).is_some_and(|i| i >= 64)
                || (c.ours.is_err() && c_repack_items(c) == Some(64))
        },
    ),
    (
        "v12-wide-int",
        "libpmix's v12 reads a value's type code and INTs through wider ints and keeps only the low bits (as for its widened enums): a type code 65535 or an INT beyond 32 bits passes; we refuse what does not fit",
        |c| {
            dialect(c, Dialect::V12)
                && c_accepts(c)
                && matches!(
                    ours_refuse(c),
                    Some(ErrorKind::UnknownType(_)) | Some(ErrorKind::ValueOutOfRange { .. })
                )
        },
    ),
    (
        "int-sized-tag-truncated",
        "libpmix packs an INT (a C int) behind a tag of its size in the dialects with sized-int tags (v20, v3, the psquash native v4/v41) and unpacks whatever size the tag names into the int, keeping the low bits: an INT tagged UINT64 beyond 32 bits passes (v3: 0x00000001000f0100); we refuse what does not fit (ValueOutOfRange), as for v12-wide-int",
        |c| c_accepts(c) && matches!(ours_refuse(c), Some(ErrorKind::ValueOutOfRange { what, .. }) if *what == "INT"),
    ),
    (
        "unknown-type-unchecked",
        "libpmix does not check a type code it reads nothing for (an empty DATA_ARRAY's element type) or that its dialect only passes through; we refuse codes that are not PMIx types (UnknownType)",
        |c| c_accepts(c) && matches!(ours_refuse(c), Some(ErrorKind::UnknownType(_))),
    ),
    (
        "cpuset-text-parsed",
        "libpmix turns a PROC_CPUSET's text into an hwloc bitmap: text that is not a cpu list reads as an empty set, and a non-empty set cannot be packed again (divergences.md §2); we carry the text as sent",
        |c| c_accepts(c) && c.ours.is_ok() && ours_hold(c, &[DataType::ProcCpuset]),
    ),
    (
        "null-string-accepted",
        "libpmix accepts a NULL string where the type needs one (a QUERY key: the argv array ends there); we refuse (NullNotAllowed)",
        |c| c_accepts(c) && matches!(ours_refuse(c), Some(ErrorKind::NullNotAllowed)),
    ),
    (
        "value-data-buffer-repack",
        "libpmix reads a DATA_BUFFER value correctly but re-packs it broken: its packer takes the value union as a whole pmix_data_buffer_t (bfrops.md §4.6), and with some bytes crashes in that re-pack (SIGSEGV) [VALUE/data_buffer, INFO/v_data_buffer]",
        |c| {
            (c_accepts(c) || matches!(c.theirs, CAnswer::Crashed(_)))
                && c.ours.is_ok()
                && ours_hold(c, &[DataType::DataBuffer])
        },
    ),
    (
        "topo-null-crash",
        "libpmix unpacks a TOPO without XML to a NULL topology and then crashes packing it again (SIGSEGV in PMIx_Data_pack, after rc 0)",
        |c| c.ours.is_ok() && matches!(c.theirs, CAnswer::Crashed(_)) && ours_hold(c, &[DataType::Topo]),
    ),
    (
        "topo-xml-parsed",
        "libpmix hands a TOPO's XML to hwloc and refuses (-1) a topology whose XML hwloc cannot load; we carry the XML as sent (encoding-v41.md, 56 TOPO), as for PROC_CPUSET text (cpuset-text-parsed)",
        |c| c_rc(c) == Some(-1) && c.ours.is_ok() && ours_hold(c, &[DataType::Topo]),
    ),
    (
        "pid-range-unchecked",
        "libpmix's flex128 decoder reads a PID varint into 64 bits (also one longer than 64 bits) and keeps the low bits in a 32-bit pid_t; we refuse a PID beyond pid_t (ValueOutOfRange)",
        |c| c_accepts(c) && matches!(ours_refuse(c), Some(ErrorKind::ValueOutOfRange { what, value }) if *what == "PID" && *value >= 0),
    ),
    (
        "regex-pack-crash",
        "libpmix 4.2.2 packs a REGEX that starts with neither pmix, raw: nor blob through a char* taken for char** (divergences.md §8); it unpacks that form (count + STRING), so its re-pack of such a regex, ours or its own, segfaults or, when the string's first bytes read as a NULL pointer (an empty string), packs a NULL string",
        |c| c.ours.is_ok() && (matches!(c.theirs, CAnswer::Crashed(_)) || c_accepts(c)) && ours_hold(c, &[DataType::Regex]),
    ),
    (
        "v20-type-padding",
        "libpmix's v20 reads a value's 16-bit type through a 4-byte INT into its pmix_data_type_t, the two high bytes landing in the struct's padding, and packs it again the same way: high bytes that are not zero come back as sent; the type is the low 16 bits (dialects.md, v20), which we keep, re-packing the padding as zeros. Recognised by libpmix's re-pack reading back to our values",
        |c| dialect(c, Dialect::V20) && c_repack_reads_as_ours(c),
    ),
    (
        "kval-float-null-text",
        "libpmix leaves a FLOAT/DOUBLE untouched when its text is a NULL string (float.md); a KVAL's value is allocated without zeroing, so it re-packs whatever that memory held (-0.000000 seen); we read 0.0. Any disagreement on a KVAL holding a FLOAT or DOUBLE that libpmix accepts is taken for this",
        |c| c.ty == DataType::Kval && c_accepts(c) && c.ours.is_ok() && ours_hold(c, &[DataType::Float, DataType::Double]),
    ),
    (
        "zero-byte-budget",
        "POINTER items (and v12's INFO_DIRECTIVES and PROC_STATE) take no bytes of their own, so their counts cannot be checked against the input: we allow max(1024, input length) of them per decode call (robustness.md, zero-byte items) and refuse more (CountTooLarge); libpmix has no bound (35 v41 units of 30 pointers in 70 bytes)",
        |c| {
            c_accepts(c)
                && matches!(ours_refuse(c), Some(ErrorKind::CountTooLarge { .. }))
                && (c.ty == DataType::Pointer
                    || (dialect(c, Dialect::V12)
                        && matches!(c.ty, DataType::InfoDirectives | DataType::ProcState)))
        },
    ),
    (
        "v20-value-persist-crash",
        "libpmix's v20 value unpacker reads a PERSIST value as a whole PMIX_PROC (nspace and rank) into the value union's pointer field (v20/unpack.c unpack_val): besides the refusals of v20-value-persist, the PROC overwrites the heap beyond the value, and inside a DATA_ARRAY of INFO it dies (SIGABRT, a malloc assertion) [VALUE/persist, INFO/v_persist]",
        |c| {
            dialect(c, Dialect::V20)
                && c.ours.is_ok()
                && matches!(c.theirs, CAnswer::Crashed(_))
                && ours_hold(c, &[DataType::Persist])
        },
    ),
    (
        "v12-rank-sentinels",
        "libpmix's v12 unpacker turns a PROC's v1.2 special ranks (INT32_MAX, INT32_MAX-1) into v2's (UINT32_MAX UNDEF, UINT32_MAX-1 WILDCARD) but its packer does not turn them back: it re-packs ff ff ff ff / ff ff ff fe, which a v1.2 peer reads as -1 / -2. We carry the rank as sent. Recognised by libpmix's re-pack being our encoding with exactly those ranks widened",
        |c| dialect(c, Dialect::V12) && c_repack_is_ours_with_procs(c, &v12_rank_sentinels_widened),
    ),
    (
        "double-size-precheck",
        "libpmix's v12 and v20 DOUBLE unpackers check that count * sizeof(double) bytes remain before reading the texts (v12/unpack.c, v20/unpack.c), though a DOUBLE is a text: a 4-byte length and its characters, 4 bytes for a NULL text. A unit of texts shorter than 8 bytes each at the end of the buffer is refused (-50); we read it",
        |c| {
            matches!(c.fmt.dialect, Dialect::V12 | Dialect::V20)
                && c.ty == DataType::Double
                && c.ours.is_ok()
                && c_rc(c) == Some(-50)
                && double_unit_under_8_bytes_each(c)
        },
    ),
    (
        "v20-described-narrow-size",
        "libpmix's v20 FULLY_DESC packer writes a size_t (a DATA_ARRAY's size, a byte object's) as two type tags and the value (pack_sizet stores the tag, pack_buffer stores it again); its unpacker reads the second tag only when the first is its own size_t (UINT64): for another width (UINT16, UINT32: a 32-bit peer) it reads the value where the second tag is (unpack_sizet, PMIX_BFROP_UNPACK_SIZE_MISMATCH). The same for a PID unit's system tag (unpack_pid: a second tag only when the first is UINT32, pid_t's). We read both tags, as packed, and refuse tags that disagree; libpmix then reads other bytes than were sent: it accepts what we refuse or refuses what we read",
        |c| {
            dialect(c, Dialect::V20)
                && c.fmt.buffer_type == pmix_codec::BufferType::FullyDesc
                && match ours_refuse(c) {
                    Some(ErrorKind::Invalid(m)) => c_accepts(c) && m.starts_with("system tags "),
                    Some(ErrorKind::ReadPastEnd { .. }) => {
                        c_accepts(c)
                            && c.ours.as_ref().err().is_some_and(|e| {
                                e.path.last().is_some_and(|f| f.ends_with("size"))
                                    || (e.path.is_empty() && e.ty == Some(DataType::Pid))
                            })
                    }
                    Some(_) => false,
                    None => {
                        c_refuses(c)
                            && narrow_tag_pair(c.payload)
                            && matches!(c.ours, Ok(v) if encode(&c.fmt, c.ty, v).is_ok_and(|m| m != c.payload))
                    }
                }
        },
    ),
    (
        "v12-described-int-size",
        "libpmix's v12 FULLY_DESC packs an INT or SIZE (and STATUS, PERSIST, PROC_RANK, which v12 widens to INT) as two type tags and the value (pack_int stores its system tag, pack_buffer stores it again); unpack_int and unpack_sizet read the second tag only when the first is their own width (INT32, UINT64): for another (INT64 from a sender whose int is 64-bit) they read the value where the second tag is (PMIX_BFROP_UNPACK_SIZE_MISMATCH), as v20's unpack_sizet does (v20-described-narrow-size). We read both tags, as packed: we refuse tags that disagree (-27) where libpmix accepts (STATUS tags 0a 00, then 000000ff: 255), we run out of bytes for the 8-byte value where libpmix, reading 8 from the second tag on, accepts (tags 0a 0a, then 4 bytes), and we read the value that libpmix misreads (tags 0a 0a, then 8 bytes: libpmix 0 and a stray 4 bytes, -20)",
        |c| {
            dialect(c, Dialect::V12)
                && c.fmt.buffer_type == pmix_codec::BufferType::FullyDesc
                && match c.ours {
                    Err(e) => {
                        c_accepts(c)
                            && match &e.kind {
                                ErrorKind::Invalid(m) => m.starts_with("system tags "),
                                ErrorKind::ReadPastEnd { .. } => {
                                    doubled_v12_int_tag_at(c.payload, e.offset.wrapping_sub(8))
                                }
                                _ => false,
                            }
                    }
                    Ok(_) => (0..c.payload.len()).any(|at| doubled_v12_int_tag_at(c.payload, at)),
                }
        },
    ),
    (
        "value-modex-struct",
        "libpmix's value unpacker has no case for MODEX (deprecated; v21 registers it) and unpacks a pmix_modex_data_t (nspace[256], rank, blob, size: about 280 bytes) into the 16-byte value union (base unpack_val's default), writing past the value; the size and blob land beyond it, so the value copied out holds none and re-packs as size 0 (00 1d 00 0f 00..00 for 02 xx yy). We read the bytes. Recognised by libpmix's re-pack being our encoding with every MODEX value emptied",
        |c| c_repack_is_ours_mapped(c, &modex_values_emptied),
    ),
];

/// The first listed divergence that explains `c`; the late reading of
/// PROC_STATS (part of `proc-stats-unpack`) last of all, as it costs a
/// decode per cut after a byte 0 of the input where the others cost one
/// at most. Which
/// disagreements are listed does not depend on the order, only the name
/// given to one that two entries explain.
pub fn explain(c: &Case) -> Option<&'static str> {
    KNOWN_DIVERGENCES
        .iter()
        .find(|(_, _, f)| f(c))
        .map(|(n, _, _)| *n)
        .or_else(|| proc_stats_read_late(c).then_some("proc-stats-unpack"))
}

fn verdict(c: &Case, what: String) -> Verdict {
    match explain(c) {
        Some(name) => Verdict::Listed(name),
        None => Verdict::Divergence(format!(
            "{what}: {} in {} ({}), input {}",
            c.ty,
            crate::interop::format_label(&c.fmt),
            c.ty.short_name(),
            pmix_types::hex::encode(c.payload)
        )),
    }
}

/// Compare libpmix's re-pack with our encoding of our values.
fn compare_values(c: &Case, values: &[Value], rc: i32, repack: &Option<Vec<u8>>) -> Verdict {
    let mine = encode(&c.fmt, c.ty, values);
    match (mine, repack) {
        (Ok(m), Some(r)) if &m == r => Verdict::Agree,
        (Ok(m), Some(r)) => verdict(
            c,
            format!(
                "values differ: ours re-pack {} libpmix re-pack {}",
                pmix_types::hex::encode(&m),
                pmix_types::hex::encode(r)
            ),
        ),
        (Ok(_), None) => verdict(c, format!("libpmix unpacks ({rc}) but cannot re-pack")),
        (Err(e), _) => verdict(c, format!("we decode but cannot encode as one unit: {e}")),
    }
}

/// The type, format and buffer an input selects, if libpmix 4.2.2 has
/// that format (its newest component is v41).
/// The harness's C program cannot hold INFO_ARRAY, MODEX (deprecated
/// types) or UNDEF units, so those are not compared.
pub fn split(data: &[u8]) -> Option<(DataType, Format, &[u8])> {
    targets::split(data).filter(|(t, f, _)| {
        f.dialect <= Dialect::V41
            && !matches!(t, DataType::InfoArray | DataType::Modex | DataType::Undef)
    })
}

/// `diff_unpack`: the same bytes through both decoders.
pub fn diff_unpack(c_lib: &mut LibPmix, data: &[u8]) -> Verdict {
    confirmed(c_lib, data, unpack_once)
}

/// `diff_encode`: what we decode from the input, we encode; libpmix must
/// read our bytes back to the same values (its re-pack equals our bytes).
pub fn diff_encode(c_lib: &mut LibPmix, data: &[u8]) -> Verdict {
    confirmed(c_lib, data, encode_once)
}

/// A divergence is checked again against fresh children: an input that
/// corrupts libpmix's heap (see `libpmix-crash`) can change what the same
/// child answers later, and only a fresh child's answer counts.
fn confirmed(c_lib: &mut LibPmix, data: &[u8], f: fn(&mut LibPmix, &[u8]) -> Verdict) -> Verdict {
    match f(c_lib, data) {
        Verdict::Divergence(_) => {
            c_lib.restart();
            f(c_lib, data)
        }
        v => v,
    }
}

fn unpack_once(c_lib: &mut LibPmix, data: &[u8]) -> Verdict {
    let Some((ty, fmt, payload)) = split(data) else {
        return Verdict::Skip;
    };
    if payload.is_empty() {
        return Verdict::Skip; // libpmix is never asked (unpack.c's loop does not run)
    }
    let ours = decode(&fmt, ty, payload);
    let theirs = c_lib.unpack(&fmt, ty, payload);
    let c = Case {
        fmt,
        ty,
        payload,
        ours: &ours,
        theirs: &theirs,
    };
    match (&ours, &theirs) {
        (_, CAnswer::Crashed(s)) => verdict(&c, format!("libpmix crashed ({s})")),
        (Err(_), CAnswer::Unpacked { rc, .. }) if *rc != 0 => Verdict::Agree,
        (Err(e), CAnswer::Unpacked { .. }) => {
            verdict(&c, format!("libpmix accepts, we refuse: {e}"))
        }
        (Ok(_), CAnswer::Unpacked { rc, .. }) if *rc != 0 => {
            verdict(&c, format!("we accept, libpmix refuses with {rc}"))
        }
        (Ok(v), CAnswer::Unpacked { rc, repack }) => compare_values(&c, v, *rc, repack),
    }
}

fn encode_once(c_lib: &mut LibPmix, data: &[u8]) -> Verdict {
    let Some((ty, fmt, payload)) = split(data) else {
        return Verdict::Skip;
    };
    let Ok(values) = decode(&fmt, ty, payload) else {
        return Verdict::Skip;
    };
    let Ok(ours) = encode(&fmt, ty, &values) else {
        return Verdict::Skip; // more than one unit's worth of pointers
    };
    let theirs = c_lib.unpack(&fmt, ty, &ours);
    let decoded = Ok(values);
    let c = Case {
        fmt,
        ty,
        payload: &ours,
        ours: &decoded,
        theirs: &theirs,
    };
    match &theirs {
        CAnswer::Crashed(s) => verdict(&c, format!("libpmix crashed on our bytes ({s})")),
        CAnswer::Unpacked { rc, .. } if *rc != 0 => {
            verdict(&c, format!("libpmix refuses our bytes with {rc}"))
        }
        CAnswer::Unpacked { rc, repack } => {
            let Ok(v) = &decoded else { unreachable!() };
            compare_values(&c, v, *rc, repack)
        }
    }
}
