//! The client functions over pmix-wire's blocking [`Client`]: init,
//! finalize, put, commit, fence, get, abort (the tool's calls are
//! [`crate::tool`]'s, over the same state).
//!
//! One process-wide state behind one mutex: a call holds it for its whole
//! round trip, so calls from several threads are serialized (a blocking
//! fence in one thread blocks the others' calls until it completes).
//! Without a server in the environment `PMIx_Init` starts a singleton, as
//! libpmix does: the process is initialized (data functions work, its
//! name is `singleton.<host>.<pid>`, rank 0) and the call answers
//! PMIX_ERR_UNREACH.

use crate::abi::*;
use crate::conv::*;
use crate::guard::exports;
use pmix_types::enums::Scope;
use pmix_types::status::codes::*;
use pmix_types::{Info, Proc, Value};
use pmix_wire::client::{Client, FenceOpts, GetOpts};
use std::ffi::c_char;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

/// The process's PMIx state.
pub(crate) struct State {
    /// How many PMIx_Init calls are not yet finalized.
    pub(crate) inits: u32,
    /// Our identity.
    pub(crate) me: Proc,
    /// The connection to our server (a tool's primary server), None for a
    /// singleton or a tool without a primary.
    pub(crate) client: Option<Client>,
    /// When `client` was attached (a tool's order of attachment).
    pub(crate) client_seq: u64,
    /// A tool's other servers, with when each was attached, in that order
    /// ([`crate::tool`]).
    pub(crate) attached: Vec<(u64, Client)>,
    /// The next attachment's number.
    pub(crate) next_seq: u64,
    /// What `PMIx_Store_internal` stored: (process, key) to value, read
    /// by PMIx_Get before anything else and never sent.
    internal: HashMap<(Proc, String), Value>,
}

impl State {
    pub(crate) fn new(me: Proc, client: Option<Client>) -> State {
        State {
            inits: 1,
            me,
            client,
            client_seq: 0,
            attached: Vec::new(),
            next_seq: 1,
            internal: HashMap::new(),
        }
    }
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

pub(crate) fn state() -> MutexGuard<'static, Option<State>> {
    STATE.lock().unwrap_or_else(|p| p.into_inner())
}

/// A server process's own PMIx identity (`PMIx_server_init`): the process
/// is initialized as a singleton is (no server to talk to), so that
/// `PMIx_Store_internal` and `PMIx_Get` of what it stored work, as hosts
/// (Open MPI's ORTE) use them. Counted as one init.
pub(crate) fn init_as_server(me: Proc) {
    let mut g = state();
    match g.as_mut() {
        Some(st) => st.inits += 1,
        None => *g = Some(State::new(me, None)),
    }
}

/// The end of [`init_as_server`]'s init.
pub(crate) fn finalize_as_server() {
    let mut g = state();
    if let Some(st) = g.as_mut() {
        st.inits = st.inits.saturating_sub(1);
        if st.inits == 0 && st.client.is_none() && st.attached.is_empty() {
            *g = None;
        }
    }
}

/// Whether the environment names a server (any PMIX_SERVER_URI*).
fn server_in_env() -> bool {
    pmix_codec::select::SERVER_URI_VARS
        .iter()
        .any(|(v, _)| std::env::var_os(v).is_some())
}

/// This node's name (gethostname), "localhost" if it has none.
pub(crate) fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: buf has buf.len() bytes; gethostname NUL-terminates within them or fails
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr() as *mut c_char, buf.len() - 1) };
    let n = buf.iter().position(|&c| c == 0).unwrap_or(0);
    if rc == 0 && n > 0 {
        String::from_utf8_lossy(&buf[..n]).into_owned()
    } else {
        "localhost".into()
    }
}

fn singleton_name() -> Proc {
    Proc::new(
        &format!("singleton.{}.{}", hostname(), std::process::id()),
        0,
    )
}

/// Whether PMIx_Init (a singleton's included) is in force.
pub(crate) fn initialized() -> bool {
    state().as_ref().is_some_and(|s| s.inits > 0)
}

pub(crate) fn status(r: Result<(), Status>) -> pmix_status_t {
    r.err().unwrap_or(PMIX_SUCCESS)
}

/// Run `f` on the connected client; INIT if not initialized, UNREACH for
/// a singleton.
pub(crate) fn with_client<T>(
    f: impl FnOnce(&mut Client, &Proc) -> Result<T, Status>,
) -> Result<T, Status> {
    let mut g = state();
    let st = g.as_mut().filter(|s| s.inits > 0).ok_or(PMIX_ERR_INIT)?;
    let me = st.me.clone();
    let c = st.client.as_mut().ok_or(PMIX_ERR_UNREACH)?;
    f(c, &me)
}

/// Run `f` on the connected client; None if there is none (not
/// initialized, finalized, or a singleton).
pub(crate) fn try_client<T>(f: impl FnOnce(&mut Client) -> Result<T, Status>) -> Option<Result<T, Status>> {
    let mut g = state();
    let c = g.as_mut().filter(|s| s.inits > 0)?.client.as_mut()?;
    Some(f(c))
}

/// PMIx_Get's answer for `key` of `who` (ourselves if None): what
/// PMIx_Store_internal stored, else the client's (local data, then the
/// server); a singleton holds no data (libpmix answers NOT_FOUND too).
pub(crate) fn get_value(who: Option<Proc>, key: &str, is: Vec<Info>) -> Result<Value, Status> {
    let mut g = state();
    let st = g.as_mut().filter(|s| s.inits > 0).ok_or(PMIX_ERR_INIT)?;
    let who = who.unwrap_or_else(|| st.me.clone());
    if let Some(v) = st.internal.get(&(who.clone(), key.to_string())) {
        return Ok(v.clone());
    }
    let c = st.client.as_mut().ok_or(PMIX_ERR_NOT_FOUND)?;
    let opts = is.into_iter().fold(GetOpts::new(), GetOpts::info);
    c.get_with(&who, key, opts).map_err(cerr)
}

pub(crate) fn write_me(proc: *mut pmix_proc_t, me: &Proc) {
    if !proc.is_null() {
        // SAFETY: checked non-NULL, a caller's pmix_proc_t
        let p = unsafe { &mut *proc };
        write_fixed(&mut p.nspace, me.nspace.as_bytes());
        p.rank = me.rank;
    }
}

pub(crate) fn cerr(e: pmix_wire::client::ClientError) -> Status {
    e.status()
}

exports! {
    /// `PMIx_Init`: connect to the local server named by the environment (a singleton without one) and give our identity in `proc`.
    fn PMIx_Init(proc: *mut pmix_proc_t, _info: *mut pmix_info_t, _ninfo: usize) -> pmix_status_t {
        let mut g = state();
        if let Some(st) = g.as_mut().filter(|s| s.inits > 0) {
            st.inits += 1;
            write_me(proc, &st.me);
            return PMIX_SUCCESS;
        }
        if !server_in_env() {
            let me = singleton_name();
            write_me(proc, &me);
            *g = Some(State::new(me, None));
            return PMIX_ERR_UNREACH;
        }
        match Client::init() {
            Ok(c) => {
                let me = c.proc().clone();
                write_me(proc, &me);
                *g = Some(State::new(me, Some(c)));
                PMIX_SUCCESS
            }
            Err(e) => {
                eprintln!("pmix-capi: PMIx_Init: {e}");
                cerr(e)
            }
        }
    }

    /// `PMIx_Initialized`: 1 if PMIx_Init succeeded (or started a singleton) and PMIx_Finalize has not undone it.
    fn PMIx_Initialized() -> i32 {
        i32::from(state().as_ref().is_some_and(|s| s.inits > 0))
    }

    /// `PMIx_Finalize`: undo one PMIx_Init; the last one disconnects from the server.
    fn PMIx_Finalize(_info: *const pmix_info_t, _ninfo: usize) -> pmix_status_t {
        let mut g = state();
        let Some(st) = g.as_mut().filter(|s| s.inits > 0) else {
            return PMIX_ERR_INIT;
        };
        st.inits -= 1;
        if st.inits > 0 {
            return PMIX_SUCCESS;
        }
        let Some(st) = g.take() else { return PMIX_SUCCESS };
        // a tool's every server, the primary's answer first
        let rcs: Vec<pmix_status_t> = st
            .client
            .into_iter()
            .chain(st.attached.into_iter().map(|(_, c)| c))
            .map(|c| c.finalize().err().map_or(PMIX_SUCCESS, cerr))
            .collect();
        rcs.into_iter().find(|&rc| rc != PMIX_SUCCESS).unwrap_or(PMIX_SUCCESS)
    }

    /// `PMIx_Abort`: ask the host to abort `procs` (our namespace if none) with `status` and `msg`.
    fn PMIx_Abort(status: i32, msg: *const c_char, procs: *const pmix_proc_t, nprocs: usize) -> pmix_status_t {
        crate::client::status((|| {
            if procs.is_null() && nprocs > 0 {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            // SAFETY: NULL or a C string; nprocs procs
            let (m, ps) = unsafe { (read_str(msg), read_procs(procs, nprocs)) };
            let m = m.map(|m| m.to_string_lossy().into_owned()).unwrap_or_default();
            with_client(|c, _| c.abort(status, &m, &ps).map_err(cerr))
        })())
    }

    /// `PMIx_Put`: stage `val` under `key` in `scope`, sent with the next PMIx_Commit.
    fn PMIx_Put(scope: u8, key: *const c_char, val: *mut pmix_value_t) -> pmix_status_t {
        crate::client::status((|| {
            if key.is_null() || val.is_null() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            // SAFETY: a C string; a value
            let (k, v) = unsafe { (read_str(key), read_value(val)) };
            let k = k.ok_or(PMIX_ERR_BAD_PARAM)?;
            if k.len() > PMIX_MAX_KEYLEN {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            let v = v?;
            with_client(|c, _| {
                c.put(Scope::from_wire(scope), &k.to_string_lossy(), v);
                Ok(())
            })
        })())
    }

    /// `PMIx_Store_internal`: keep `val` under `key` for `proc` in this process only (PMIx_Get answers it; nothing is sent).
    fn PMIx_Store_internal(proc: *const pmix_proc_t, key: *const c_char, val: *mut pmix_value_t) -> pmix_status_t {
        crate::client::status((|| {
            if proc.is_null() || key.is_null() || val.is_null() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            // SAFETY: checked non-NULL: a proc, a C string, a value
            let (p, k, v) = unsafe { (read_proc(proc), read_str(key), read_value(val)) };
            let k = k.ok_or(PMIX_ERR_BAD_PARAM)?.to_string_lossy().into_owned();
            let v = v?;
            let mut g = state();
            let st = g.as_mut().filter(|s| s.inits > 0).ok_or(PMIX_ERR_INIT)?;
            st.internal.insert((p, k), v);
            Ok(())
        })())
    }

    /// `PMIx_Commit`: send the staged data to the server.
    fn PMIx_Commit() -> pmix_status_t {
        crate::client::status(with_client(|c, _| c.commit().map_err(cerr)))
    }

    /// `PMIx_Fence`: wait until every process of `procs` (our namespace if none) has entered the fence.
    fn PMIx_Fence(procs: *const pmix_proc_t, nprocs: usize, info: *const pmix_info_t, ninfo: usize) -> pmix_status_t {
        crate::client::status((|| {
            if (procs.is_null() && nprocs > 0) || (info.is_null() && ninfo > 0) {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            // SAFETY: nprocs procs and ninfo infos
            let (ps, is) = unsafe { (read_procs(procs, nprocs), read_infos(info, ninfo)) };
            let mut opts = FenceOpts::new().procs(ps);
            for i in is? {
                opts = opts.info(i);
            }
            with_client(|c, _| c.fence(opts).map_err(cerr))
        })())
    }

    /// `PMIx_Get`: the value of `key` for `proc` (ourselves if NULL), newly allocated in `*val`.
    fn PMIx_Get(
        proc: *const pmix_proc_t,
        key: *const c_char,
        info: *const pmix_info_t,
        ninfo: usize,
        val: *mut *mut pmix_value_t
    ) -> pmix_status_t {
        crate::client::status((|| {
            if key.is_null() || val.is_null() || (info.is_null() && ninfo > 0) {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            // SAFETY: a C string; ninfo infos; NULL or a proc
            let (k, is, who) = unsafe {
                (read_str(key), read_infos(info, ninfo), (!proc.is_null()).then(|| read_proc(proc)))
            };
            let k = k.ok_or(PMIX_ERR_BAD_PARAM)?;
            let v = get_value(who, &k.to_string_lossy(), is?)?;
            let out = c_calloc(1, std::mem::size_of::<pmix_value_t>())? as *mut pmix_value_t;
            // SAFETY: zeroed storage for one value
            if let Err(e) = write_value(unsafe { &mut *out }, &v) {
                // SAFETY: malloc'd above
                unsafe { libc::free(out as *mut std::ffi::c_void) };
                return Err(e);
            }
            // SAFETY: checked non-NULL
            unsafe { *val = out };
            Ok(())
        })())
    }
}

/// `n` procs at `p`.
///
/// # Safety
/// `p` is NULL or holds `n` procs.
pub(crate) unsafe fn read_procs(p: *const pmix_proc_t, n: usize) -> Vec<Proc> {
    if p.is_null() {
        return Vec::new();
    }
    // SAFETY: the caller's contract
    (0..n).map(|i| unsafe { read_proc(p.add(i)) }).collect()
}
