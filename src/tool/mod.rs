//! The tool role: find a server through the rendezvous files libpmix
//! servers write (protocol.md §1.4), connect as a tool that needs an
//! identity, and query.
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

use crate::client::{Client, ClientError};
use pmix_codec::{BufferType, Format};
use std::path::{Path, PathBuf};

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
            .ok_or_else(|| ClientError::Env("empty rendezvous file".into()))?
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
            .ok_or_else(|| ClientError::Env(format!("unknown server version {v:?}")))?;
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
    /// A URI, or `file:<path>` naming a rendezvous file.
    Uri(String),
}

/// This host's name as libpmix uses it in file names.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "localhost".into())
}

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

/// Depth-limited search for a file named `name` under `dir`.
fn search(dir: &Path, name: &str, depth: u32) -> Option<PathBuf> {
    let p = dir.join(name);
    if p.is_file() {
        return Some(p);
    }
    if depth == 0 {
        return None;
    }
    let rd = std::fs::read_dir(dir).ok()?;
    for e in rd.flatten() {
        let ft = e.file_type().ok()?;
        if ft.is_dir() && !ft.is_symlink() {
            if let Some(f) = search(&e.path(), name, depth - 1) {
                return Some(f);
            }
        }
    }
    None
}

/// Find the rendezvous file for `target` (not for `Target::Uri`).
pub fn find(target: &Target, dirs: &[PathBuf]) -> Result<PathBuf> {
    let host = hostname();
    let name = match target {
        Target::Pid(p) => format!("pmix.{host}.tool.{p}"),
        Target::Nspace(n) => format!("pmix.{host}.tool.{n}"),
        Target::System => format!("pmix.sys.{host}"),
        Target::Uri(u) => return Ok(PathBuf::from(u.strip_prefix("file:").unwrap_or(u))),
    };
    let depth = if matches!(target, Target::System) {
        0
    } else {
        4
    };
    dirs.iter()
        .find_map(|d| search(d, &name, depth))
        .ok_or(ClientError::Status {
            op: "find the server's rendezvous file",
            code: -25, // PMIX_ERR_UNREACH
        })
}

/// PMIx_tool_init: connect to `target` and fetch our job info.
pub fn connect(target: &Target) -> Result<Client> {
    connect_in(target, &tmpdirs())
}

/// As [`connect`], searching `dirs` for rendezvous files.
pub fn connect_in(target: &Target, dirs: &[PathBuf]) -> Result<Client> {
    let (uri, fmt) = match target {
        Target::Uri(u) if !u.starts_with("file:") => (u.clone(), Format::V41),
        _ => {
            let f = find(target, dirs)?;
            let r = Rendezvous::parse(&std::fs::read_to_string(&f)?)?;
            let fmt = r.format()?;
            (r.uri, fmt)
        }
    };
    Client::tool_connect(&uri, fmt)
}
