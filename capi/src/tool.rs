//! The tool calls over pmix-wire's tool role ([`pmix_wire::tool`]):
//! PMIx_tool_init and finalize, PMIx_tool_attach_to_server (and its older
//! name PMIx_tool_connect_to_server), PMIx_tool_get_servers,
//! PMIx_tool_set_server and PMIx_tool_disconnect, written from the
//! standard's text of them (v4.0, the tools chapter).
//!
//! A tool may hold connections to several servers; one of them, the
//! *primary*, serves every other call ([`crate::client`]'s state keeps
//! it as the client; the others wait in attachment order). Every
//! connection is found by one rendezvous search, the standard's
//! precedence chain over the call's directives (`plan`), run by
//! [`pmix_wire::tool::connect_wait_with`]. A server the tool is connected
//! to already is not connected twice: asked for it, the call answers
//! PMIX_SUCCESS and names it (libpmix 4.2.2 opens a second connection:
//! spec-notes/divergences.md).

use crate::abi::*;
use crate::client::{cerr, hostname, state, status, write_me, State};
use crate::conv::*;
use crate::guard::exports;
use pmix_codec::Format;
use pmix_types::status::codes::*;
use pmix_types::{DataType, Info, Proc, Value, RANK_WILDCARD};
use pmix_wire::client::{Client, ClientError};
use pmix_wire::tool::{self, Target};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// One way to a server the directives name.
enum Way {
    /// PMIX_SERVER_URI or PMIX_TCP_URI given outright (the format
    /// libpmix 4.2.2 speaks).
    Uri(String),
    /// A rendezvous search for this target; `optional`: the chain goes on
    /// when it fails, with no wait (PMIX_CONNECT_SYSTEM_FIRST).
    Search { target: Target, optional: bool },
    /// The server that started us (its URI in our environment).
    Env(String, Format),
}

/// Where a tool's directives send it.
struct Plan {
    /// The ways to try in turn (all but the last optional).
    ways: Vec<Way>,
    /// The directories searched: PMIX_SERVER_TMPDIR and
    /// PMIX_SYSTEM_TMPDIR given as directives, then [`tool::tmpdirs`].
    dirs: Vec<PathBuf>,
    /// Where the system server's file is looked for: PMIX_SYSTEM_TMPDIR
    /// (the directive, else the environment's) alone, as the standard
    /// says and libpmix does; without one, `dirs`.
    sys_dirs: Vec<PathBuf>,
    /// How long a search waits for its rendezvous file and server.
    wait: Duration,
    /// PMIX_PRIMARY_SERVER: the server attached becomes the primary.
    primary: bool,
}

fn find<'a>(is: &'a [Info], key: &str) -> Option<&'a Value> {
    is.iter().find(|i| i.key.as_bytes() == key.as_bytes()).map(|i| &i.value)
}

/// A boolean directive given and not false (PMIX_INFO_LOAD of a bool
/// with no value is true).
fn flag(is: &[Info], key: &str) -> bool {
    find(is, key).is_some_and(|v| !matches!(v, Value::Bool(false)))
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::String(Some(s)) => Some(s.to_string_lossy().into_owned()),
        _ => None,
    }
}

fn text_of(is: &[Info], key: &str) -> Result<Option<String>, Status> {
    find(is, key).map(|v| text(v).ok_or(PMIX_ERR_BAD_PARAM)).transpose()
}

fn uint_of(is: &[Info], key: &str) -> Result<Option<u64>, Status> {
    find(is, key)
        .map(|v| match v {
            Value::Uint32(n) | Value::Uint(n) | Value::Pid(n) => Ok(u64::from(*n)),
            Value::Int(n) | Value::Int32(n) if *n >= 0 => Ok(*n as u64),
            Value::Uint64(n) | Value::Size(n) => Ok(*n),
            Value::Uint16(n) => Ok(u64::from(*n)),
            Value::Uint8(n) => Ok(u64::from(*n)),
            _ => Err(PMIX_ERR_BAD_PARAM),
        })
        .transpose()
}

/// The standard's precedence chain over `is`: PMIX_TOOL_ATTACHMENT_FILE,
/// PMIX_SERVER_URI or PMIX_TCP_URI (not both), PMIX_SERVER_PIDINFO,
/// PMIX_SERVER_NSPACE, PMIX_CONNECT_TO_SYSTEM, PMIX_CONNECT_SYSTEM_FIRST
/// (the system server if there is one, else what follows), else the
/// server that started us (its URI in the environment), else the system
/// server. The first given is the only way but for the last (the system
/// server's file is looked for in [`Plan::sys_dirs`]). None for
/// PMIX_TOOL_DO_NOT_CONNECT. PMIX_CONNECT_MAX_RETRIES times
/// PMIX_CONNECT_RETRY_DELAY (seconds, 1 if not given) bounds a search's
/// wait, else [`tool::WAIT`].
fn plan(is: &[Info]) -> Result<Option<Plan>, Status> {
    if flag(is, "pmix.tool.nocon") {
        return Ok(None);
    }
    let search = |target| Way::Search { target, optional: false };
    let uri = text_of(is, "pmix.srvr.uri")?;
    let tcp = text_of(is, "pmix.tcp.uri")?;
    let mut ways = Vec::new();
    if let Some(f) = text_of(is, "pmix.tool.attach")? {
        ways.push(search(Target::Uri(format!("file:{f}"))));
    } else if uri.is_some() && tcp.is_some() {
        // "it is an error for both of these attributes to be specified"
        return Err(PMIX_ERR_BAD_PARAM);
    } else if let Some(u) = uri.or(tcp) {
        ways.push(if u.starts_with("file:") {
            search(Target::Uri(u))
        } else {
            Way::Uri(u)
        });
    } else if let Some(p) = find(is, "pmix.srvr.pidinfo") {
        let pid = match p {
            Value::Pid(p) | Value::Uint32(p) | Value::Uint(p) => *p,
            Value::Int(p) | Value::Int32(p) if *p > 0 => *p as u32,
            // PMIX_SERVER_PIDINFO that is no pid
            _ => return Err(PMIX_ERR_BAD_PARAM),
        };
        ways.push(search(Target::Pid(pid)));
    } else if let Some(ns) = text_of(is, "pmix.srv.nspace")? {
        ways.push(search(Target::Nspace(ns)));
    } else if flag(is, "pmix.cnct.sys") {
        ways.push(search(Target::System));
    } else {
        if flag(is, "pmix.cnct.sys.first") {
            ways.push(Way::Search { target: Target::System, optional: true });
        }
        ways.push(match pmix_codec::select::from_env(|k| std::env::var(k).ok()) {
            Some((f, uri)) => Way::Env(uri, f),
            None => search(Target::System),
        });
    }
    let mut dirs = Vec::new();
    for k in ["pmix.srvr.tmpdir", "pmix.sys.tmpdir"] {
        dirs.extend(text_of(is, k)?.map(PathBuf::from));
    }
    dirs.extend(tool::tmpdirs());
    dirs.dedup();
    let sys_dirs = match text_of(is, "pmix.sys.tmpdir")?.or_else(|| std::env::var("PMIX_SYSTEM_TMPDIR").ok()) {
        Some(d) if !d.is_empty() => vec![PathBuf::from(d)],
        _ => dirs.clone(),
    };
    let wait = match uint_of(is, "pmix.tool.mretries")? {
        Some(n) => {
            let delay = uint_of(is, "pmix.tool.retry")?.unwrap_or(1);
            Duration::from_secs(n.saturating_mul(delay))
        }
        None => tool::WAIT,
    };
    Ok(Some(Plan { ways, dirs, sys_dirs, wait, primary: flag(is, "pmix.pri.srvr") }))
}

/// Follow `plan`, `connect` making each connection the search finds.
fn reach<T>(
    plan: &Plan,
    mut connect: impl FnMut(&str, Format) -> Result<T, ClientError>,
) -> Result<T, ClientError> {
    let mut last = None;
    for way in &plan.ways {
        let r = match way {
            Way::Uri(u) => connect(u, Format::V41),
            Way::Env(u, f) => connect(u, *f),
            Way::Search { target, optional } => {
                let wait = if *optional { Duration::ZERO } else { plan.wait };
                let dirs = if *target == Target::System { &plan.sys_dirs } else { &plan.dirs };
                tool::connect_wait_with(target, dirs, wait, &mut connect)
            }
        };
        match r {
            Ok(t) => return Ok(t),
            Err(e) => last = Some(e),
        }
    }
    Err(last.expect("a plan has a way"))
}

/// A connection failure's status: a server's refusal as it gave it, any
/// other failure (no rendezvous file, nobody listening) PMIX_ERR_UNREACH.
fn unreach(call: &str, e: ClientError) -> Status {
    eprintln!("pmix-capi: {call}: {e}");
    match e {
        ClientError::Status { code, .. } => code,
        _ => PMIX_ERR_UNREACH,
    }
}

/// Whether `a` names the server `b` (a wildcard rank names any).
fn names(a: &Proc, b: &Proc) -> bool {
    a.nspace == b.nspace && (a.rank == b.rank || a.rank == RANK_WILDCARD || b.rank == RANK_WILDCARD)
}

fn server_of(c: &Client) -> Proc {
    c.server().cloned().unwrap_or_default()
}

impl State {
    /// The servers connected: the primary first, then the others in the
    /// order they were attached.
    fn servers(&self) -> Vec<Proc> {
        self.client
            .iter()
            .chain(self.attached.iter().map(|(_, c)| c))
            .map(server_of)
            .collect()
    }

    /// Keep the new connection `c`; the primary if `primary`, or if it is
    /// the tool's only one ("the first server the tool connects to is
    /// automatically designated as the primary server").
    fn attach(&mut self, c: Client, primary: bool) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.attached.push((seq, c));
        if primary || (self.client.is_none() && self.attached.len() == 1) {
            self.make_primary(self.attached.len() - 1);
        }
    }

    /// Make the `i`th attached connection the primary; the primary
    /// there was goes back among the others at its place in time.
    fn make_primary(&mut self, i: usize) {
        let (seq, c) = self.attached.remove(i);
        if let Some(old) = self.client.replace(c) {
            let at = self.attached.partition_point(|(s, _)| *s < self.client_seq);
            self.attached.insert(at, (self.client_seq, old));
        }
        self.client_seq = seq;
    }

    /// Make `server` the primary: false if not connected to it.
    fn set_primary(&mut self, server: &Proc) -> bool {
        if self.client.as_ref().is_some_and(|c| names(server, &server_of(c))) {
            return true;
        }
        match self.attached.iter().position(|(_, c)| names(server, &server_of(c))) {
            Some(i) => {
                self.make_primary(i);
                true
            }
            None => false,
        }
    }

    /// Take the connection to `server` out (the primary's too).
    fn detach(&mut self, server: &Proc) -> Option<Client> {
        if self.client.as_ref().is_some_and(|c| names(server, &server_of(c))) {
            return self.client.take();
        }
        let i = self.attached.iter().position(|(_, c)| names(server, &server_of(c)))?;
        Some(self.attached.remove(i).1)
    }
}

fn initialized(g: &mut Option<State>) -> Result<&mut State, Status> {
    g.as_mut().filter(|s| s.inits > 0).ok_or(PMIX_ERR_INIT)
}

/// What the search found for PMIx_tool_attach_to_server.
enum Found {
    /// A new connection.
    New(Box<Client>),
    /// A server we are connected to already.
    Have(Proc),
}

/// PMIx_tool_attach_to_server's work: the server attached to.
///
/// # Safety
/// `info` holds `ninfo` infos; `myproc` is NULL or writable.
unsafe fn attach(call: &str, myproc: *mut pmix_proc_t, info: *const pmix_info_t, ninfo: usize) -> Result<Proc, Status> {
    if info.is_null() || ninfo == 0 {
        // no directive: libpmix 4.2.2 answers so (and prints a help text)
        return Err(PMIX_ERR_BAD_PARAM);
    }
    // SAFETY: ninfo infos
    let is = unsafe { read_infos(info, ninfo) }?;
    let mut g = state();
    let st = initialized(&mut g)?;
    write_me(myproc, &st.me);
    let Some(plan) = plan(&is)? else {
        return Err(PMIX_ERR_UNREACH);
    };
    let known: Vec<(String, Proc)> = st
        .client
        .iter()
        .chain(st.attached.iter().map(|(_, c)| c))
        .map(|c| (tool::address(c.uri()).to_string(), server_of(c)))
        .collect();
    let me = st.me.clone();
    let found = reach(&plan, |uri, f| {
        match known.iter().find(|(a, _)| a == tool::address(uri)) {
            Some((_, p)) => Ok(Found::Have(p.clone())),
            None => Client::tool_connect_as(uri, f, &me).map(|c| Found::New(Box::new(c))),
        }
    })
    .map_err(|e| unreach(call, e))?;
    Ok(match found {
        Found::Have(p) => {
            if plan.primary {
                st.set_primary(&p);
            }
            p
        }
        Found::New(c) => {
            let p = server_of(&c);
            st.attach(*c, plan.primary);
            p
        }
    })
}

exports! {
    /// `PMIx_tool_init`: start as a tool: connect to the server the directives name (the standard's precedence chain: PMIX_TOOL_ATTACHMENT_FILE, PMIX_SERVER_URI/PMIX_TCP_URI, PMIX_SERVER_PIDINFO, PMIX_SERVER_NSPACE, PMIX_CONNECT_TO_SYSTEM, PMIX_CONNECT_SYSTEM_FIRST; else the one in the environment, else the system server), our primary, or to none with PMIX_TOOL_DO_NOT_CONNECT (then named `<host>:<pid>`, rank 0).
    fn PMIx_tool_init(proc: *mut pmix_proc_t, info: *mut pmix_info_t, ninfo: usize) -> pmix_status_t {
        status((|| {
            if info.is_null() && ninfo > 0 {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            // SAFETY: ninfo infos
            let is = unsafe { read_infos(info, ninfo) }?;
            let mut g = state();
            if let Some(st) = g.as_mut().filter(|s| s.inits > 0) {
                st.inits += 1;
                write_me(proc, &st.me);
                return Ok(());
            }
            let client = match plan(&is)? {
                None => None,
                Some(p) => Some(reach(&p, Client::tool_connect).map_err(|e| {
                    eprintln!("pmix-capi: PMIx_tool_init: {e}");
                    cerr(e)
                })?),
            };
            let me = match &client {
                Some(c) => c.proc().clone(),
                None => Proc::new(&format!("{}:{}", hostname(), std::process::id()), 0),
            };
            write_me(proc, &me);
            *g = Some(State::new(me, client));
            Ok(())
        })())
    }

    /// `PMIx_tool_finalize`: undo PMIx_tool_init (as PMIx_Finalize), closing the connection to every server.
    fn PMIx_tool_finalize() -> pmix_status_t {
        // SAFETY: no pointers
        unsafe { crate::client::PMIx_Finalize(std::ptr::null(), 0) }
    }

    /// `PMIx_tool_attach_to_server`: connect to one more server, found by the directives as PMIx_tool_init finds its first (also PMIX_SERVER_TMPDIR, PMIX_SYSTEM_TMPDIR, PMIX_CONNECT_MAX_RETRIES, PMIX_CONNECT_RETRY_DELAY), bringing our identity; the primary with PMIX_PRIMARY_SERVER (or if it is the only one). Our identity in `myproc`, the server's in `server`; a server we are connected to already is named, not connected twice; PMIX_ERR_UNREACH if none is reached.
    fn PMIx_tool_attach_to_server(
        myproc: *mut pmix_proc_t,
        server: *mut pmix_proc_t,
        info: *mut pmix_info_t,
        ninfo: usize
    ) -> pmix_status_t {
        status((|| {
            // SAFETY: the caller's ninfo infos; NULL or a proc
            let p = unsafe { attach("PMIx_tool_attach_to_server", myproc, info, ninfo) }?;
            write_me(server, &p);
            Ok(())
        })())
    }

    /// `PMIx_tool_connect_to_server` (the v3 name, deprecated): PMIx_tool_attach_to_server without the server's identity.
    fn PMIx_tool_connect_to_server(proc: *mut pmix_proc_t, info: *mut pmix_info_t, ninfo: usize) -> pmix_status_t {
        // SAFETY: the caller's ninfo infos; NULL or a proc
        status(unsafe { attach("PMIx_tool_connect_to_server", proc, info, ninfo) }.map(drop))
    }

    /// `PMIx_tool_get_servers`: the servers we are connected to, the primary first, then the others in order of attachment, in a new array (PMIx_Proc_free); PMIX_ERR_UNREACH if none.
    fn PMIx_tool_get_servers(servers: *mut *mut pmix_proc_t, nservers: *mut usize) -> pmix_status_t {
        status((|| {
            if servers.is_null() || nservers.is_null() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            // SAFETY: checked non-NULL
            unsafe {
                *servers = std::ptr::null_mut();
                *nservers = 0;
            }
            let mut g = state();
            let list = initialized(&mut g)?.servers();
            if list.is_empty() {
                return Err(PMIX_ERR_UNREACH);
            }
            let vals: Vec<Value> = list.into_iter().map(|p| Value::Proc(Box::new(p))).collect();
            // SAFETY: checked non-NULL
            unsafe { crate::services::out_array(DataType::Proc, &vals, servers, nservers) }
        })())
    }

    /// `PMIx_tool_set_server`: make `server`, one we are connected to, the primary; PMIX_ERR_UNREACH if we are not, or with PMIX_WAIT_FOR_CONNECTION, PMIX_ERR_NOT_FOUND once PMIX_TIMEOUT seconds (none: at once) have passed without it.
    fn PMIx_tool_set_server(server: *const pmix_proc_t, info: *mut pmix_info_t, ninfo: usize) -> pmix_status_t {
        status((|| {
            if server.is_null() || (info.is_null() && ninfo > 0) {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            // SAFETY: checked non-NULL; ninfo infos
            let (who, is) = unsafe { (read_proc(server), read_infos(info, ninfo)) };
            let is = is?;
            let wait = flag(&is, "pmix.wait.conn");
            let timeout = match find(&is, "pmix.timeout") {
                None => 0,
                Some(Value::Int(n) | Value::Int32(n)) => (*n).max(0) as u64,
                Some(Value::Uint32(n) | Value::Uint(n)) => u64::from(*n),
                Some(_) => return Err(PMIX_ERR_BAD_PARAM),
            };
            let until = Instant::now() + Duration::from_secs(timeout);
            loop {
                // the lock is let go between looks: another thread may attach it
                if initialized(&mut state())?.set_primary(&who) {
                    return Ok(());
                }
                if !wait {
                    return Err(PMIX_ERR_UNREACH);
                }
                let left = until.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(PMIX_ERR_NOT_FOUND);
                }
                std::thread::sleep(left.min(Duration::from_millis(250)));
            }
        })())
    }

    /// `PMIx_tool_disconnect`: close the connection to `server` (finalized as PMIx_tool_finalize does), the library staying initialized; PMIX_ERR_NOT_FOUND if not connected to it. Without the primary, calls that need a server answer PMIX_ERR_UNREACH until PMIx_tool_set_server names another.
    fn PMIx_tool_disconnect(server: *const pmix_proc_t) -> pmix_status_t {
        status((|| {
            if server.is_null() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            // SAFETY: checked non-NULL
            let who = unsafe { read_proc(server) };
            let c = initialized(&mut state())?.detach(&who).ok_or(PMIX_ERR_NOT_FOUND)?;
            c.finalize().map_err(cerr)
        })())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> Value {
        Value::String(Some(v.into()))
    }

    fn plan_of(is: &[Info]) -> Plan {
        plan(is).unwrap().expect("a plan")
    }

    /// The first directive of the chain given is the only way; the
    /// others are not tried.
    #[test]
    fn the_first_directive_of_the_chain_wins() {
        let p = plan_of(&[
            Info::new("pmix.cnct.sys", Value::Bool(true)),
            Info::new("pmix.srvr.pidinfo", Value::Pid(42)),
            Info::new("pmix.tool.attach", s("/x/file")),
        ]);
        assert_eq!(p.ways.len(), 1);
        assert!(matches!(&p.ways[0], Way::Search { target: Target::Uri(u), optional: false } if u == "file:/x/file"));
        let p = plan_of(&[
            Info::new("pmix.cnct.sys", Value::Bool(true)),
            Info::new("pmix.srvr.pidinfo", Value::Pid(42)),
        ]);
        assert!(matches!(&p.ways[..], [Way::Search { target: Target::Pid(42), .. }]));
        let p = plan_of(&[Info::new("pmix.srvr.uri", s("ns.0;tcp4://127.0.0.1:1"))]);
        assert!(matches!(&p.ways[..], [Way::Uri(u)] if u == "ns.0;tcp4://127.0.0.1:1"));
    }

    /// PMIX_CONNECT_SYSTEM_FIRST: the system server without a wait, then
    /// the default; a false flag is no directive.
    #[test]
    fn system_first_goes_on_to_the_default() {
        let p = plan_of(&[Info::new("pmix.cnct.sys.first", Value::Bool(true))]);
        assert_eq!(p.ways.len(), 2);
        assert!(matches!(&p.ways[0], Way::Search { target: Target::System, optional: true }));
        let p = plan_of(&[Info::new("pmix.cnct.sys.first", Value::Bool(false))]);
        assert_eq!(p.ways.len(), 1);
        assert!(plan(&[Info::new("pmix.tool.nocon", Value::Bool(true))]).unwrap().is_none());
    }

    /// Both URIs, a pid that is none, a string that is no string: BAD_PARAM.
    #[test]
    fn contradictions_and_wrong_types_are_bad_params() {
        for is in [
            vec![Info::new("pmix.srvr.uri", s("a.0;tcp4://h:1")), Info::new("pmix.tcp.uri", s("b.0;tcp4://h:2"))],
            vec![Info::new("pmix.srvr.pidinfo", s("12"))],
            vec![Info::new("pmix.srvr.pidinfo", Value::Int(-1))],
            vec![Info::new("pmix.srv.nspace", Value::Uint32(3))],
            vec![Info::new("pmix.cnct.sys", Value::Bool(true)), Info::new("pmix.tool.mretries", s("x"))],
        ] {
            assert_eq!(plan(&is).err(), Some(PMIX_ERR_BAD_PARAM), "{is:?}");
        }
    }

    /// The retries bound the wait (delay 1 s unless given); the tmpdir
    /// directives are searched first; PMIX_PRIMARY_SERVER is kept.
    #[test]
    fn retries_tmpdirs_and_primary() {
        let p = plan_of(&[
            Info::new("pmix.cnct.sys", Value::Bool(true)),
            Info::new("pmix.tool.mretries", Value::Uint32(3)),
            Info::new("pmix.tool.retry", Value::Uint32(2)),
            Info::new("pmix.sys.tmpdir", s("/sys-dir")),
            Info::new("pmix.srvr.tmpdir", s("/srv-dir")),
            Info::new("pmix.pri.srvr", Value::Bool(true)),
        ]);
        assert_eq!(p.wait, Duration::from_secs(6));
        assert_eq!(p.dirs[..2], [PathBuf::from("/srv-dir"), PathBuf::from("/sys-dir")]);
        assert_eq!(p.sys_dirs, [PathBuf::from("/sys-dir")]);
        assert!(p.primary);
        let p = plan_of(&[Info::new("pmix.cnct.sys", Value::Bool(true)), Info::new("pmix.tool.mretries", Value::Uint32(0))]);
        assert_eq!(p.wait, Duration::ZERO);
        assert!(!p.primary);
        let p = plan_of(&[Info::new("pmix.cnct.sys", Value::Bool(true))]);
        assert_eq!(p.wait, tool::WAIT);
    }

    /// A wildcard rank names any server of the namespace.
    #[test]
    fn a_wildcard_rank_names_any_rank() {
        let a = Proc::new("srv", 7);
        assert!(names(&Proc::new("srv", RANK_WILDCARD), &a));
        assert!(names(&Proc::new("srv", 7), &a));
        assert!(!names(&Proc::new("srv", 8), &a));
        assert!(!names(&Proc::new("other", 7), &a));
    }
}
