//! `pmixw doctor`: which PMIx server this environment reaches, what it is,
//! and what in the environment conflicts (issue 16 item 3).
//!
//! The analysis of the variables is pure (`analyze`); `diagnose` then
//! connects only in a way the server accepts (spec-notes/doctor.md): in a
//! job's environment (a PMIX_SERVER_URI* with PMIX_NAMESPACE and
//! PMIX_RANK) as that job's client, which is what the URI is for; without
//! one, as a *tool* through a rendezvous file, where a server says it takes
//! tools. A tool handshake on a job's client URI made Open MPI 4.1.4's
//! mpirun answer NOT_SUPPORTED and then crash (libpmix 4.2.2), so a URI
//! variable without the job's identity is handshaken only when a
//! rendezvous file names its listener. Doctor reads a few reserved job keys
//! and disconnects (PMIx_Finalize).

#![forbid(unsafe_code)]

use pmix_codec::select::SERVER_URI_VARS;
use pmix_codec::{BufferType, Format};
use pmix_types::{Proc, Value, RANK_WILDCARD};
use pmix_wire::client::{Client, ClientEnv};
use pmix_wire::tool::address;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Duration;

/// What doctor found.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Report {
    /// A server answered the handshake.
    pub reachable: bool,
    /// Where the server was found: a variable name or a rendezvous file.
    pub source: Option<String>,
    pub server_uri: Option<String>,
    /// The server's PMIx version (PMIX_VERSION, or the rendezvous file).
    pub server_version: Option<String>,
    /// The dialect a libpmix 4.2.2 client would speak with it.
    pub dialect: Option<String>,
    /// Storage (gds) and security (psec) modules: what the server offers
    /// its clients and what our handshake used.
    pub gds: Option<String>,
    pub psec: Option<String>,
    /// The handshake, as it went.
    pub handshake: Option<String>,
    /// Why there was none though something listens (no way the server
    /// is known to accept).
    pub not_handshaken: Option<String>,
    /// The job this environment belongs to (PMIX_NAMESPACE, PMIX_RANK).
    pub job: Option<String>,
    /// Variables that contradict each other.
    pub conflicts: Vec<String>,
    /// Reserved keys the server gives with a type other than the standard's.
    pub wrong_types: Vec<String>,
    /// Other observations.
    pub notes: Vec<String>,
    /// One line.
    pub verdict: String,
}

/// A server to try: where it came from, its URI, its version if known,
/// and the format to speak.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub source: String,
    pub uri: String,
    pub version: Option<String>,
    pub format: Format,
}

/// Read the variables: the servers they name, in the order a libpmix
/// 4.2.2 client tries them, and the conflicts among them.
pub fn analyze(env: &[(String, String)]) -> (Vec<Candidate>, Report) {
    let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let mut r = Report::default();
    let bt = get("PMIX_BFROP_BUFFER_TYPE")
        .map_or(BufferType::NonDesc, |v| BufferType::from_env_value(&v));
    let mut cands = Vec::new();
    for (var, d) in SERVER_URI_VARS {
        if let Some(uri) = get(var) {
            cands.push(Candidate {
                source: var.to_string(),
                uri,
                version: get("PMIX_VERSION"),
                format: Format::new(*d, bt),
            });
        }
    }
    // URI variables naming different servers
    if let Some(first) = cands.first() {
        for c in &cands[1..] {
            if address(&c.uri) != address(&first.uri) {
                r.conflicts.push(format!(
                    "{} names {} but {} names {}: the client uses {}",
                    first.source,
                    address(&first.uri),
                    c.source,
                    address(&c.uri),
                    first.source
                ));
            }
        }
    }
    // PMI-1/PMI-2 variables beside PMIx ones (mpich#7957)
    let pmix: Vec<&str> = env
        .iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| k.starts_with("PMIX_"))
        .collect();
    let mut pmi: Vec<&str> = env
        .iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| k.starts_with("PMI_"))
        .collect();
    pmi.sort();
    if !pmix.is_empty() && !pmi.is_empty() {
        r.conflicts.push(format!(
            "PMI variables ({}) beside PMIx ones ({}): a library that checks PMI first (MPICH) will not use PMIx, or abort",
            pmi.join(" "),
            if pmix.contains(&"PMIX_NAMESPACE") { "PMIX_NAMESPACE" } else { pmix[0] }
        ));
    }
    match (get("PMIX_NAMESPACE"), get("PMIX_RANK")) {
        (Some(n), Some(k)) => r.job = Some(format!("{n} rank {k}")),
        (Some(n), None) => r
            .conflicts
            .push(format!("PMIX_NAMESPACE={n} without PMIX_RANK")),
        (None, Some(k)) => r
            .conflicts
            .push(format!("PMIX_RANK={k} without PMIX_NAMESPACE")),
        (None, None) => {}
    }
    if r.job.is_some() && cands.is_empty() {
        r.conflicts
            .push("PMIX_NAMESPACE is set but no PMIX_SERVER_URI* variable".into());
    }
    r.gds = get("PMIX_GDS_MODULE");
    r.psec = get("PMIX_SECURITY_MODE");
    (cands, r)
}

/// Rendezvous files of servers on this node: the system server, then
/// each `pmix.<host>.tool.*` file, in `dirs`.
pub fn rendezvous_candidates(dirs: &[PathBuf]) -> Vec<Candidate> {
    let host = pmix_wire::tool::hostname();
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for d in dirs {
        let Ok(rd) = std::fs::read_dir(d) else {
            continue;
        };
        let mut names: Vec<PathBuf> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                    n == format!("pmix.sys.{host}") || n.starts_with(&format!("pmix.{host}.tool."))
                })
            })
            .collect();
        names.sort();
        for p in names {
            let Ok(text) = std::fs::read_to_string(&p) else {
                continue;
            };
            let Ok(rv) = pmix_wire::tool::Rendezvous::parse(&text) else {
                continue;
            };
            let Ok(format) = rv.format() else { continue };
            if seen.insert(rv.uri.clone()) {
                out.push(Candidate {
                    source: format!("rendezvous file {}", p.display()),
                    uri: rv.uri,
                    version: Some(rv.version),
                    format,
                });
            }
        }
    }
    out
}

/// How doctor may talk to a candidate server.
enum Role {
    /// As the job's client: the environment's identity and URI.
    Client(Box<ClientEnv>),
    /// As a tool, at this URI (named by a rendezvous file).
    Tool(String, Format),
    /// Not at all (why): only whether something listens there.
    Not(String),
}

/// Connect to `c` in the `role` it accepts, read reserved keys of `job`,
/// disconnect.
fn handshake(
    c: &Candidate,
    role: Role,
    job: Option<(&str, u32)>,
    r: &mut Report,
) -> Result<(), String> {
    let (_, host, port) = pmix_wire::client::core::parse_uri(&c.uri).map_err(|e| e.to_string())?;
    // reachability first, with a short timeout
    let addr = std::net::ToSocketAddrs::to_socket_addrs(&(host.as_str(), port))
        .map_err(|e| format!("{host}:{port}: {e}"))?
        .next()
        .ok_or_else(|| format!("{host}:{port} resolves to nothing"))?;
    std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(3))
        .map_err(|e| format!("{addr}: {e}"))?;
    let (mut t, as_what) = match role {
        Role::Not(why) => {
            r.not_handshaken = Some(why);
            return Ok(());
        }
        Role::Client(env) => (
            Client::init_with(*env).map_err(|e| format!("handshake as the job's client: {e}"))?,
            "client",
        ),
        Role::Tool(uri, fmt) => (
            Client::tool_connect(&uri, fmt).map_err(|e| format!("handshake as a tool: {e}"))?,
            "tool",
        ),
    };
    t.timeout = Duration::from_secs(5);
    r.reachable = true;
    let me = t.proc().clone();
    let server = t
        .core()
        .server
        .as_ref()
        .map(|p| format!("{}:{}", p.nspace, p.rank))
        // a client learns no identity in its handshake: the URI's
        .or_else(|| c.uri.split_once(';').map(|(id, _)| id.to_string()))
        .unwrap_or_else(|| "?".into());
    r.handshake = Some(format!(
        "accepted as {as_what} {}:{} by server {server}, psec native, gds hash",
        me.nspace, me.rank
    ));
    if let Some((ns, _)) = job {
        // job-level keys only: as a tool, a libpmix server holds a get
        // for a rank's own keys until that rank connects
        let keys = [
            pmix_types::keys::JOB_SIZE,
            pmix_types::keys::UNIV_SIZE,
            pmix_types::keys::LOCAL_SIZE,
            pmix_types::keys::NUM_NODES,
        ];
        for key in keys {
            match t.get::<Value>(&Proc::new(ns, RANK_WILDCARD), key) {
                Ok(v) => {
                    if let Some(w) = pmix_types::keys::check(key, v.data_type()) {
                        r.wrong_types.push(w);
                    }
                }
                Err(e) => {
                    // one note: a server that refuses one refuses all
                    r.notes.push(format!(
                        "cannot read {ns}'s job data as a {as_what} ({key}: {e}); key types not checked"
                    ));
                    break;
                }
            }
        }
    }
    let _ = t.finalize();
    Ok(())
}

/// The whole diagnosis: `env` the variables, `dirs` where to look for
/// rendezvous files.
pub fn diagnose(env: &[(String, String)], dirs: &[PathBuf]) -> Report {
    let (mut cands, mut r) = analyze(env);
    let from_env = !cands.is_empty();
    if !from_env {
        cands = rendezvous_candidates(dirs);
    }
    let job = r.job.as_ref().and_then(|_| {
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        Some((
            get("PMIX_NAMESPACE")?,
            get("PMIX_RANK")?.parse::<u32>().ok()?,
        ))
    });
    let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    for c in &cands {
        r.source = Some(c.source.clone());
        r.server_uri = Some(c.uri.clone());
        r.server_version = c.version.clone();
        r.dialect = Some(format!("{} {:?}", c.format.dialect, c.format.buffer_type));
        let role = if !from_env {
            // a rendezvous file: the server takes tools there
            Role::Tool(c.uri.clone(), c.format)
        } else if let Ok(e) = ClientEnv::from_env(|k| {
            // this candidate's URI, whichever variable a client would take
            if SERVER_URI_VARS.iter().any(|(v, _)| *v == k) {
                (k == c.source).then(|| c.uri.clone())
            } else {
                get(k)
            }
        }) {
            Role::Client(Box::new(e))
        } else if let Some((f, rv)) = pmix_wire::tool::rendezvous_naming(&c.uri, dirs) {
            r.notes.push(format!(
                "no job identity (PMIX_NAMESPACE, PMIX_RANK): asked as a tool, as {} invites",
                f.display()
            ));
            match rv.format() {
                Ok(fmt) => Role::Tool(c.uri.clone(), fmt),
                Err(e) => {
                    r.notes.push(format!("{}: {e}", f.display()));
                    break;
                }
            }
        } else {
            // a job's client listener, and no identity to be its client:
            // a tool handshake there can crash a libpmix server
            Role::Not(format!(
                "{} names a job's server, but without the job's identity (PMIX_NAMESPACE, PMIX_RANK) doctor cannot be its client, and no rendezvous file names that listener for tools (a tool handshake on a job's client URI can crash a libpmix server)",
                c.source
            ))
        };
        match handshake(c, role, job.as_ref().map(|(n, k)| (n.as_str(), *k)), &mut r) {
            Ok(()) => break,
            Err(e) => {
                r.notes
                    .push(format!("{} ({}): {e}", c.source, address(&c.uri)));
                // only the variable a client would use matters when set
                if from_env {
                    break;
                }
            }
        }
    }
    r.verdict = verdict(&r, cands.is_empty());
    r
}

fn verdict(r: &Report, nothing: bool) -> String {
    let problems = r.conflicts.len() + r.wrong_types.len();
    if nothing {
        return "no PMIx server: no PMIX_SERVER_URI* variable and no rendezvous file".into();
    }
    let what = format!(
        "{} at {} ({}, PMIx {})",
        r.source.as_deref().unwrap_or("?"),
        r.server_uri.as_deref().map_or("?", address),
        r.dialect.as_deref().unwrap_or("?"),
        r.server_version.as_deref().unwrap_or("version unknown")
    );
    if let Some(why) = &r.not_handshaken {
        return format!("NOT CHECKED: something listens at {what}, but {why}");
    }
    match (r.reachable, problems) {
        (true, 0) => format!("OK: PMIx server reachable: {what}"),
        (true, n) => {
            format!("WARNING: PMIx server reachable ({what}), {n} problem(s) listed above")
        }
        (false, _) => format!("FAIL: PMIx server not reachable: {what}"),
    }
}

/// The report as text.
pub fn render_text(r: &Report) -> String {
    let mut s = String::new();
    let mut line = |k: &str, v: &Option<String>| {
        if let Some(v) = v {
            s.push_str(&format!("{k:<15} {v}\n"));
        }
    };
    line("server", &r.server_uri);
    line("found via", &r.source);
    line("version", &r.server_version);
    line("dialect", &r.dialect);
    line("gds offered", &r.gds);
    line("psec offered", &r.psec);
    line("handshake", &r.handshake);
    line("no handshake", &r.not_handshaken);
    line("job", &r.job);
    for c in &r.conflicts {
        s.push_str(&format!("CONFLICT        {c}\n"));
    }
    for w in &r.wrong_types {
        s.push_str(&format!("WRONG TYPE      {w}\n"));
    }
    for n in &r.notes {
        s.push_str(&format!("note            {n}\n"));
    }
    s.push_str(&r.verdict);
    s.push('\n');
    s
}
