//! The tool role: find a server through the rendezvous files libpmix
//! servers write (protocol.md §1.4), connect as a tool that needs an
//! identity, and query. The search passes over stale files (their server
//! is gone, or they predate the process whose pid they name) and waits,
//! up to a limit, for a file about to appear ([`connect_wait`]).
//!
//! ```no_run
//! use pmix_wire::client::Queries;
//! use pmix_wire::tool::{connect, Target};
//! let mut t = connect(&Target::Pid(12345))?;
//! let answers = t.query(Queries::new().ask(["pmix.qry.ns"]))?;
//! for i in answers {
//!     let namespaces = String::try_from(i.value).map_err(|e| e.to_string());
//!     println!("{}: {namespaces:?}", i.key.as_pstring().to_string_lossy());
//! }
//! t.finalize()?;
//! # Ok::<(), pmix_wire::client::ClientError>(())
//! ```

#![forbid(unsafe_code)]

use crate::client::{Client, ClientError, EnvError, NoRendezvous, Stale};
use crate::procfs::{alive, written_before_start};
use pmix_codec::{BufferType, Format};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

type Result<T> = std::result::Result<T, ClientError>;

/// What a rendezvous file says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rendezvous {
    /// The server URI: `<nspace>.<rank>;tcp4://<addr>:<port>`.
    pub uri: String,
    /// The server's PMIx version (a missing line means 2.0).
    pub version: String,
    /// The server's pid (the third line), if present.
    pub pid: Option<u32>,
    /// The uid and gid the server runs as (the fourth line, `uid:gid`), if present.
    pub uid_gid: Option<(u32, u32)>,
}

impl Rendezvous {
    /// Parse the file's text: URI, version, pid, `uid:gid`, time.
    pub fn parse(text: &str) -> Result<Rendezvous> {
        let mut lines = text.lines();
        let uri = lines
            .next()
            .filter(|l| !l.is_empty())
            .ok_or(EnvError::EmptyRendezvous)?
            .to_string();
        let version = lines
            .next()
            .filter(|l| !l.is_empty())
            .unwrap_or("2.0.0")
            .to_string();
        let pid = lines.next().and_then(|l| l.trim().parse().ok());
        let uid_gid = lines.next().and_then(|l| {
            let (u, g) = l.trim().split_once(':')?;
            Some((u.parse().ok()?, g.parse().ok()?))
        });
        Ok(Rendezvous {
            uri,
            version,
            pid,
            uid_gid,
        })
    }

    /// The wire format to speak: the dialect the server's version implies.
    pub fn format(&self) -> Result<Format> {
        let v = self.version.trim_start_matches('v');
        let d = pmix_codec::select::from_version(v)
            .ok_or_else(|| EnvError::UnknownVersion(v.into()))?;
        Ok(Format::new(d, BufferType::NonDesc))
    }
}

/// Which server to connect to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// The server with this pid (`pmix.<host>.tool.<pid>`).
    Pid(u32),
    /// The server hosting this namespace (`pmix.<host>.tool.<nspace>`).
    Nspace(String),
    /// The system server (`<system tmpdir>/pmix.sys.<host>`).
    System,
    /// `file:<path>` naming a rendezvous file, or a URI, taken only when a
    /// rendezvous file in the directories searched names its listener
    /// ([`rendezvous_naming`]).
    Uri(String),
}

pub use crate::procfs::hostname;

/// The directories searched: PMIX_SYSTEM_TMPDIR, TMPDIR, /tmp.
pub fn tmpdirs() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = ["PMIX_SERVER_TMPDIR", "PMIX_SYSTEM_TMPDIR", "TMPDIR"]
        .iter()
        .filter_map(|k| std::env::var_os(k).map(PathBuf::from))
        .collect();
    v.push("/tmp".into());
    v.dedup();
    v
}

/// How long [`connect`] waits by default for the server's rendezvous file
/// to appear, and for the server it names to accept: a launcher that has
/// just started writes its file a moment later (PRRTE's `prterun` once its
/// daemon runs, which takes seconds on a loaded node). For a
/// [`Target::Pid`] the wait ends as soon as that process is gone.
pub const WAIT: Duration = Duration::from_secs(10);

/// How deep under each directory a tool's rendezvous file is looked for
/// (PRRTE writes it into its session directory, `<tmp>/prtrn.<pid>/` or
/// `<tmp>/ompi.<pid>/`; libpmix servers directly into their tmpdir).
pub const DEPTH: u32 = 4;

/// Every file named `name` under `dir`, at most `depth` levels down
/// (symlinked directories are not followed; entries that vanish while
/// being read are passed over).
fn search(dir: &Path, name: &str, depth: u32, found: &mut Vec<PathBuf>) {
    let p = dir.join(name);
    if p.is_file() {
        found.push(p);
    }
    if depth == 0 {
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            search(&e.path(), name, depth - 1, found);
        }
    }
}

/// Why the file at `path` cannot be `target`'s server's, if it cannot: it
/// names a server pid that no longer runs, or, for [`Target::Pid`], it was
/// written before that process started (a dead server's file whose pid
/// the kernel has given to a new process: PRRTE killed by SIGKILL leaves
/// its session directory behind; [`crate::procfs::written_before_start`]).
fn stale(target: &Target, path: &Path) -> Option<Stale> {
    if let Some(p) = std::fs::read_to_string(path)
        .ok()
        .and_then(|t| Rendezvous::parse(&t).ok())
        .and_then(|r| r.pid)
    {
        if !alive(p) {
            return Some(Stale::ServerGone(p));
        }
    }
    if let Target::Pid(p) = target {
        let written = std::fs::metadata(path).and_then(|m| m.modified()).ok()?;
        if written_before_start(*p, written) {
            return Some(Stale::BeforeStart(*p));
        }
    }
    None
}

/// The address part of a server URI (`ns.rank;tcp4://host:port` →
/// `host:port`), for telling whether two URIs name one listener.
pub fn address(uri: &str) -> &str {
    uri.split_once("://").map_or(uri, |(_, a)| a)
}

/// A rendezvous file in `dirs` (at most [`DEPTH`] levels down) naming the
/// listener of `uri`, not stale: a server that wrote one accepts tools
/// there. A libpmix server does not accept a tool on every listener it
/// has: a job's client URI (`PMIX_SERVER_URI*`) may belong to a host
/// without tool support, and a tool handshake there crashed Open MPI
/// 4.1.4's `mpirun` (spec-notes/doctor.md), so a bare URI is used as a
/// tool's only when such a file names it.
pub fn rendezvous_naming(uri: &str, dirs: &[PathBuf]) -> Option<(PathBuf, Rendezvous)> {
    fn walk(dir: &Path, depth: u32, found: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let Ok(t) = e.file_type() else { continue };
            if t.is_file() && e.file_name().to_string_lossy().starts_with("pmix.") {
                found.push(e.path());
            } else if t.is_dir() && depth > 0 {
                walk(&e.path(), depth - 1, found);
            }
        }
    }
    let mut files = Vec::new();
    for d in dirs {
        walk(d, DEPTH, &mut files);
    }
    files.into_iter().find_map(|f| {
        let r = Rendezvous::parse(&std::fs::read_to_string(&f).ok()?).ok()?;
        (address(&r.uri) == address(uri) && stale(&Target::Uri(uri.into()), &f).is_none())
            .then_some((f, r))
    })
}

/// The rendezvous file's name for `target` and how deep to look for it.
fn file_name(target: &Target) -> (String, u32) {
    let host = hostname();
    match target {
        Target::Pid(p) => (format!("pmix.{host}.tool.{p}"), DEPTH),
        Target::Nspace(n) => (format!("pmix.{host}.tool.{n}"), DEPTH),
        Target::System => (format!("pmix.sys.{host}"), 0),
        Target::Uri(u) => (u.strip_prefix("file:").unwrap_or(u).to_string(), 0),
    }
}

/// Find the rendezvous file for `target` in `dirs`, looking once: of the
/// files that are not stale (see above), the newest. A `Target::Uri`
/// gives its path. The error says what was looked for, where, and which
/// files were passed over and why.
pub fn find(target: &Target, dirs: &[PathBuf]) -> Result<PathBuf> {
    let (name, depth) = file_name(target);
    if let Target::Uri(_) = target {
        return Ok(PathBuf::from(name));
    }
    let mut all = Vec::new();
    for d in dirs {
        search(d, &name, depth, &mut all);
    }
    let mut passed = Vec::new();
    let mut fresh = Vec::new();
    for f in all {
        match stale(target, &f) {
            Some(why) => passed.push((f, why)),
            None => fresh.push(f),
        }
    }
    let mtime = |f: &PathBuf| std::fs::metadata(f).and_then(|m| m.modified()).ok();
    fresh.sort_by_key(|f| std::cmp::Reverse(mtime(f)));
    fresh.into_iter().next().ok_or_else(|| {
        ClientError::Unreachable(NoRendezvous {
            name,
            dirs: dirs.to_vec(),
            depth,
            passed,
        })
    })
}

/// PMIx_tool_init: connect to `target` and fetch our job info, waiting
/// up to [`WAIT`] for its rendezvous file (searched in [`tmpdirs`]).
pub fn connect(target: &Target) -> Result<Client> {
    connect_in(target, &tmpdirs())
}

/// As [`connect`], searching `dirs` for rendezvous files.
pub fn connect_in(target: &Target, dirs: &[PathBuf]) -> Result<Client> {
    connect_wait(target, dirs, WAIT)
}

/// As [`connect_in`], waiting up to `wait` (zero: one attempt) while the
/// rendezvous file is missing, stale, not yet written whole, or the
/// server it names refuses the connection; a [`Target::Pid`] whose
/// process is gone ends the wait at once. The error of the last attempt
/// says what was looked for and for how long.
pub fn connect_wait(target: &Target, dirs: &[PathBuf], wait: Duration) -> Result<Client> {
    connect_wait_with(target, dirs, wait, Client::tool_connect)
}

/// As [`connect_wait`], with `connect` making the connection to the URI
/// and format the search found (or declining it): a tool attaching to
/// a further server brings its identity ([`Client::tool_connect_as`]),
/// and passes over servers it is connected to already.
pub fn connect_wait_with<T>(
    target: &Target,
    dirs: &[PathBuf],
    wait: Duration,
    mut connect: impl FnMut(&str, Format) -> Result<T>,
) -> Result<T> {
    let begun = Instant::now();
    let mut pause = Duration::from_millis(20);
    loop {
        let e = match attempt(target, dirs, &mut connect) {
            Ok(c) => return Ok(c),
            Err(e) => e,
        };
        let gone = matches!(target, Target::Pid(p) if !alive(*p));
        let again = !gone && begun.elapsed() < wait && retry(&e);
        if !again {
            let gone = match target {
                Target::Pid(p) if gone => Some(*p),
                _ => None,
            };
            let waited = (gone.is_none() && !wait.is_zero() && retry(&e)).then_some(wait);
            return Err(match e {
                e @ (ClientError::Unreachable(_) | ClientError::Env(_))
                    if gone.is_some() || waited.is_some() =>
                {
                    ClientError::GaveUp {
                        last: Box::new(e),
                        waited,
                        gone,
                    }
                }
                e => e,
            });
        }
        std::thread::sleep(pause.min(wait.saturating_sub(begun.elapsed())));
        pause = (pause * 2).min(Duration::from_millis(500));
    }
}

/// Whether an attempt's failure may pass: no file yet, a file not yet
/// written whole, a server not yet accepting.
fn retry(e: &ClientError) -> bool {
    match e {
        ClientError::Unreachable(_) | ClientError::Env(_) => true,
        ClientError::Io(io) => io.kind() == std::io::ErrorKind::ConnectionRefused,
        _ => false,
    }
}

fn attempt<T>(
    target: &Target,
    dirs: &[PathBuf],
    connect: &mut impl FnMut(&str, Format) -> Result<T>,
) -> Result<T> {
    let (uri, fmt) = match target {
        Target::Uri(u) if !u.starts_with("file:") => {
            let (_, r) = rendezvous_naming(u, dirs).ok_or_else(|| EnvError::NoFileNames {
                uri: u.clone(),
                dirs: dirs.to_vec(),
            })?;
            let fmt = r.format()?;
            (u.clone(), fmt)
        }
        _ => {
            let f = find(target, dirs)?;
            let text = std::fs::read_to_string(&f)?;
            // the URI line is whole once a newline ends it
            if !text.contains('\n') {
                return Err(EnvError::NotWhole(f).into());
            }
            let r = Rendezvous::parse(&text).map_err(|e| match e {
                ClientError::Env(err) => ClientError::Env(EnvError::InFile {
                    file: f.clone(),
                    err: Box::new(err),
                }),
                e => e,
            })?;
            let fmt = r.format()?;
            (r.uri, fmt)
        }
    };
    connect(&uri, fmt)
}
