//! The client's other calls over pmix-wire's blocking client: the
//! non-blocking fence and get (run on a thread of their own that calls
//! the callback when the blocking call returns), publish, lookup,
//! unpublish, resolve, query, log, spawn, connect and disconnect. The
//! threading rules of [`crate::client`] apply.
#![allow(non_camel_case_types)]

use crate::abi::*;
use crate::client::{cerr, get_value, read_procs, status, with_client};
use crate::conv::*;
use crate::guard::{exports, guarded};
use pmix_types::status::codes::*;
use pmix_types::{DataType, Info, PString, Proc, Query, Value};
use pmix_wire::client::{Client, ClientError, FenceOpts, JobControl, LookupOpts, Publish, Spawn, SpawnApp};
use std::ffi::{c_char, c_void};
use std::ptr;

/// `pmix_op_cbfunc_t`.
pub type pmix_op_cbfunc_t =
    Option<unsafe extern "C" fn(status: pmix_status_t, cbdata: *mut c_void)>;
/// `pmix_value_cbfunc_t`.
pub type pmix_value_cbfunc_t =
    Option<unsafe extern "C" fn(status: pmix_status_t, kv: *mut pmix_value_t, cbdata: *mut c_void)>;

/// `pmix_lookup_cbfunc_t`.
pub type pmix_lookup_cbfunc_t =
    Option<unsafe extern "C" fn(status: pmix_status_t, data: *mut pmix_pdata_t, ndata: usize, cbdata: *mut c_void)>;
/// `pmix_release_cbfunc_t`.
pub type pmix_release_cbfunc_t = Option<unsafe extern "C" fn(cbdata: *mut c_void)>;
/// `pmix_info_cbfunc_t`.
pub type pmix_info_cbfunc_t = Option<
    unsafe extern "C" fn(
        status: pmix_status_t,
        info: *mut pmix_info_t,
        ninfo: usize,
        cbdata: *mut c_void,
        release_fn: pmix_release_cbfunc_t,
        release_cbdata: *mut c_void,
    ),
>;
/// `pmix_spawn_cbfunc_t`.
pub type pmix_spawn_cbfunc_t =
    Option<unsafe extern "C" fn(status: pmix_status_t, nspace: *mut c_char, cbdata: *mut c_void)>;

/// Run `call` (a blocking call's body, checked and read already) on a
/// thread of its own and hand its status to `cbfunc`; without a callback
/// run it here and return its status.
pub(crate) fn op_nb(
    name: &'static str,
    cbfunc: pmix_op_cbfunc_t,
    cbdata: *mut c_void,
    call: impl FnOnce() -> Result<(), Status> + Send + 'static,
) -> Result<(), Status> {
    let Some(cb) = cbfunc else { return call() };
    with_client(|_, _| Ok(()))?;
    let data = Opaque(cbdata);
    in_background(name, move || {
        let data = data;
        let rc = status(call());
        // SAFETY: the caller's callback with its own data
        unsafe { cb(rc, data.0) }
    })
}

/// `r`'s values (all of `ty`) as a new C array for a callback: its
/// status, the array (NULL for none) and its length.
pub(crate) fn c_array_of(ty: DataType, r: Result<Vec<Value>, Status>) -> (pmix_status_t, *mut c_void, usize) {
    match r.and_then(|v| if v.is_empty() { Ok((ptr::null_mut(), 0)) } else { c_elems(ty, &v).map(|p| (p, v.len())) }) {
        Ok((p, n)) => (PMIX_SUCCESS, p, n),
        Err(e) => (e, ptr::null_mut(), 0),
    }
}

/// Free what [`c_array_of`] made.
///
/// # Safety
/// `p` holds `n` elements of `ty` made by `c_elems`, or is NULL.
pub(crate) unsafe fn free_c_array(ty: DataType, p: *mut c_void, n: usize) {
    let Some(sz) = elem_size(ty) else { return };
    for k in 0..n {
        // SAFETY: the caller's contract
        unsafe { destruct_elem(ty, (p as *mut u8).add(k * sz)) };
    }
    // SAFETY: malloc'd by c_elems (or NULL)
    unsafe { libc::free(p) };
}

/// Infos handed to a `pmix_info_cbfunc_t`: a C array freed by the
/// release function the callback is given (or after it, if it has none
/// to call).
unsafe extern "C" fn release_infos(cbdata: *mut c_void) {
    guarded("release infos", || {
        // SAFETY: a Box<(ptr, n)> made by info_cb
        let b = unsafe { Box::from_raw(cbdata as *mut (usize, usize)) };
        let (p, n) = *b;
        // SAFETY: made by c_array_of
        unsafe { free_c_array(DataType::Info, p as *mut c_void, n) };
    })
}

/// Call a `pmix_info_cbfunc_t` with `r`'s infos (the callback releases them).
pub(crate) fn info_cb(
    cb: unsafe extern "C" fn(pmix_status_t, *mut pmix_info_t, usize, *mut c_void, pmix_release_cbfunc_t, *mut c_void),
    cbdata: *mut c_void,
    r: Result<Vec<Info>, Status>,
) {
    let vals = r.map(|v| v.into_iter().map(|i| Value::Info(Box::new(i))).collect());
    let (rc, p, n) = c_array_of(DataType::Info, vals);
    let rel = Box::into_raw(Box::new((p as usize, n))) as *mut c_void;
    // SAFETY: the caller's callback; the infos live until it releases them
    unsafe { cb(rc, p as *mut pmix_info_t, n, cbdata, Some(release_infos), rel) }
}

/// A C pointer handed to another thread (the caller's cbdata: the
/// standard lets the callback run on any thread).
pub(crate) struct Opaque(pub(crate) *mut c_void);
// SAFETY: the pointer is only handed back to the caller's callback
unsafe impl Send for Opaque {}

/// Run `f` on a new thread (named for the call), guarded as the exports are.
pub(crate) fn in_background(name: &'static str, f: impl FnOnce() + Send + 'static) -> Result<(), Status> {
    std::thread::Builder::new()
        .name(format!("pmix-capi {name}"))
        .spawn(move || guarded(name, f))
        .map(|_| ())
        .map_err(|_| PMIX_ERR_OUT_OF_RESOURCE)
}

/// The infos at `info`, checked (NULL with a count is BAD_PARAM).
///
/// # Safety
/// `info` is NULL or holds `n` infos.
pub(crate) unsafe fn infos(info: *const pmix_info_t, n: usize) -> Result<Vec<Info>, Status> {
    if info.is_null() && n > 0 {
        return Err(PMIX_ERR_BAD_PARAM);
    }
    // SAFETY: the caller's contract
    unsafe { read_infos(info, n) }
}

/// PMIx_Process_monitor(_nb)'s arguments, checked: the monitor and the
/// directives to ask the server with, or None when the monitor is
/// PMIX_SEND_HEARTBEAT (the PMIx_Heartbeat macro's), whose one heartbeat
/// is sent here, with no reply, as libpmix 4.2.2 sends it.
///
/// # Safety
/// `monitor` is NULL or one info; `directives` is NULL or holds `ndirs`.
unsafe fn monitor_request(
    monitor: *const pmix_info_t,
    directives: *const pmix_info_t,
    ndirs: usize,
) -> Result<Option<(Info, Vec<Info>)>, Status> {
    if monitor.is_null() {
        return Err(PMIX_ERR_BAD_PARAM);
    }
    // SAFETY: the caller's contract
    let (what, ds) = unsafe { (infos(monitor, 1)?, infos(directives, ndirs)?) };
    let what = what.into_iter().next().ok_or(PMIX_ERR_BAD_PARAM)?;
    if what.key.as_pstring().as_bytes() == b"pmix.monitor.beat" {
        with_client(|c, _| c.heartbeat().map_err(cerr))?;
        return Ok(None);
    }
    Ok(Some((what, ds)))
}

/// The procs at `procs`, checked.
///
/// # Safety
/// `procs` is NULL or holds `n` procs.
pub(crate) unsafe fn procs_of(procs: *const pmix_proc_t, n: usize) -> Result<Vec<Proc>, Status> {
    if procs.is_null() && n > 0 {
        return Err(PMIX_ERR_BAD_PARAM);
    }
    // SAFETY: the caller's contract
    Ok(unsafe { read_procs(procs, n) })
}

fn fence_opts(ps: Vec<Proc>, is: Vec<Info>) -> FenceOpts {
    is.into_iter()
        .fold(FenceOpts::new().procs(ps), FenceOpts::info)
}

fn lossy(s: &PString) -> String {
    s.to_string_lossy().into_owned()
}

/// A nspace argument as text (NULL: BAD_PARAM).
///
/// # Safety
/// `p` is NULL or a C string.
unsafe fn nspace_arg(p: *const c_char) -> Result<String, Status> {
    // SAFETY: the caller's contract
    unsafe { read_str(p) }
        .map(|s| lossy(&s))
        .ok_or(PMIX_ERR_BAD_PARAM)
}

/// `Client::connect` or `Client::disconnect`.
type GroupCall = fn(&mut Client, &[Proc], &[Info]) -> Result<(), ClientError>;

/// Connect or disconnect: `call` with the procs (at least one) and infos.
///
/// # Safety
/// `procs` holds `nprocs` procs, `info` `ninfo` infos (or NULL).
unsafe fn group(
    procs: *const pmix_proc_t,
    nprocs: usize,
    info: *const pmix_info_t,
    ninfo: usize,
    call: GroupCall,
) -> Result<(), Status> {
    // SAFETY: the caller's contract
    unsafe { group_nb("", procs, nprocs, info, ninfo, call, None, ptr::null_mut()) }
}

/// [`group`], on a thread of its own if `cbfunc` is given.
///
/// # Safety
/// As [`group`].
#[allow(clippy::too_many_arguments)]
unsafe fn group_nb(
    name: &'static str,
    procs: *const pmix_proc_t,
    nprocs: usize,
    info: *const pmix_info_t,
    ninfo: usize,
    call: GroupCall,
    cbfunc: pmix_op_cbfunc_t,
    cbdata: *mut c_void,
) -> Result<(), Status> {
    // SAFETY: the caller's contract
    let (ps, is) = unsafe { (procs_of(procs, nprocs)?, infos(info, ninfo)?) };
    if ps.is_empty() {
        return Err(PMIX_ERR_BAD_PARAM);
    }
    op_nb(name, cbfunc, cbdata, move || with_client(|c, _| call(c, &ps, &is).map_err(cerr)))
}

/// `vals` (all of `ty`) as a new C array in `*out`, their count in `*n`
/// (NULL for none).
///
/// # Safety
/// `out` and `n` are writable.
pub(crate) unsafe fn out_array<T>(ty: DataType, vals: &[Value], out: *mut *mut T, n: *mut usize) -> Result<(), Status> {
    let p = if vals.is_empty() { ptr::null_mut() } else { c_elems(ty, vals)? };
    // SAFETY: the caller's contract
    unsafe {
        *out = p as *mut T;
        *n = vals.len();
    }
    Ok(())
}

fn lookup_opts(is: Vec<Info>) -> LookupOpts {
    is.into_iter().fold(LookupOpts::new(), LookupOpts::info)
}

/// The queries at `queries`.
///
/// # Safety
/// `queries` holds `n` queries.
unsafe fn read_queries(queries: *const pmix_query_t, n: usize) -> Result<Vec<Query>, Status> {
    if queries.is_null() || n == 0 {
        return Err(PMIX_ERR_BAD_PARAM);
    }
    (0..n)
        .map(|i| {
            // SAFETY: n queries
            match unsafe { read_elem(DataType::Query, queries.add(i) as *const u8) }? {
                Value::Query(q) => Ok(*q),
                _ => Err(PMIX_ERR_BAD_PARAM),
            }
        })
        .collect()
}

/// The query keys libpmix 4.2.2 answers itself, before init too, and its
/// answers: the PMIx Standard ABI versions it supports (the stable and
/// the provisional, each a comma-separated list of MAJOR.MINOR), "0.0"
/// both in 4.2.2 (its VERSION file's std_abi_stable and
/// std_abi_provisional), which the wire never carries.
const LOCAL_QUERY_KEYS: &[(&str, &str)] = &[("pmix.qry.stabiver", "0.0"), ("pmix.qry.prabiver", "0.0")];

/// Queries answered as libpmix 4.2.2 answers them: the
/// [`LOCAL_QUERY_KEYS`] here, the others' queries (those keys taken out,
/// a query left with none dropped) asked of the server, its answers first
/// and then ours; all local: no server asked, before init too (else INIT
/// before init).
fn query(qs: Vec<Query>) -> Result<Vec<Info>, Status> {
    let mut local = Vec::new();
    let mut rest = Vec::new();
    for q in qs {
        let mut keys = Vec::new();
        let mut took = false;
        for k in q.keys {
            match LOCAL_QUERY_KEYS.iter().find(|(l, _)| k.as_bytes() == l.as_bytes()) {
                Some((l, v)) => {
                    took = true;
                    local.push(Info::new(l, Value::String(Some(PString::from(*v)))))
                }
                None => keys.push(k),
            }
        }
        // a query of no keys at all goes to the server as it went before
        if !keys.is_empty() || !took {
            rest.push(Query { keys, qualifiers: q.qualifiers });
        }
    }
    if rest.is_empty() && !local.is_empty() {
        return Ok(local);
    }
    let mut got = with_client(|c, _| c.query(rest).map_err(cerr))?;
    got.extend(local);
    Ok(got)
}

/// The apps at `apps` and the job infos as a spawn request.
///
/// # Safety
/// `job_info` holds `ninfo` infos (or is NULL), `apps` `napps` apps.
unsafe fn spawn_request(
    job_info: *const pmix_info_t,
    ninfo: usize,
    apps: *const pmix_app_t,
    napps: usize,
) -> Result<Spawn, Status> {
    if apps.is_null() || napps == 0 {
        return Err(PMIX_ERR_BAD_PARAM);
    }
    // SAFETY: ninfo infos
    let ji = unsafe { infos(job_info, ninfo) }?;
    let mut sp = ji.into_iter().fold(Spawn::new(), Spawn::job_info);
    for i in 0..napps {
        // SAFETY: napps apps
        match unsafe { read_elem(DataType::App, apps.add(i) as *const u8) }? {
            Value::App(a) => sp = sp.app(SpawnApp::from(*a)),
            _ => return Err(PMIX_ERR_BAD_PARAM),
        }
    }
    Ok(sp)
}

exports! {
    /// `PMIx_Fence_nb`: start a fence; `cbfunc` gets its status when every process has entered it.
    fn PMIx_Fence_nb(
        procs: *const pmix_proc_t,
        nprocs: usize,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void
    ) -> pmix_status_t {
        status((|| {
            // SAFETY: nprocs procs, ninfo infos
            let (ps, is) = unsafe { (procs_of(procs, nprocs)?, infos(info, ninfo)?) };
            let Some(cb) = cbfunc else {
                return with_client(|c, _| c.fence(fence_opts(ps, is)).map_err(cerr));
            };
            with_client(|_, _| Ok(()))?;
            let data = Opaque(cbdata);
            in_background("PMIx_Fence_nb", move || {
                let data = data;
                let rc = status(with_client(|c, _| c.fence(fence_opts(ps, is)).map_err(cerr)));
                // SAFETY: the caller's callback with its own cbdata
                unsafe { cb(rc, data.0) }
            })
        })())
    }

    /// `PMIx_Get_nb`: start a get; `cbfunc` gets the status and the value (freed after it returns).
    fn PMIx_Get_nb(
        proc: *const pmix_proc_t,
        key: *const c_char,
        info: *const pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_value_cbfunc_t,
        cbdata: *mut c_void
    ) -> pmix_status_t {
        status((|| {
            let cb = cbfunc.ok_or(PMIX_ERR_BAD_PARAM)?;
            // SAFETY: a C string; ninfo infos; NULL or a proc
            let (k, is, who) = unsafe {
                (read_str(key), infos(info, ninfo)?, (!proc.is_null()).then(|| read_proc(proc)))
            };
            let k = lossy(&k.ok_or(PMIX_ERR_BAD_PARAM)?);
            let data = Opaque(cbdata);
            in_background("PMIx_Get_nb", move || {
                let data = data;
                // SAFETY: a zeroed value is UNDEF
                let mut v: pmix_value_t = unsafe { std::mem::zeroed() };
                let rc = status(get_value(who, &k, is).and_then(|got| write_value(&mut v, &got)));
                let kv = if rc == PMIX_SUCCESS { &mut v as *mut pmix_value_t } else { ptr::null_mut() };
                // SAFETY: the caller's callback; the value lives until it returns
                unsafe {
                    cb(rc, kv, data.0);
                    destruct_value(&mut v);
                }
            })
        })())
    }

    /// `PMIx_Publish`: publish the infos' keys and values (with the directives among them).
    fn PMIx_Publish(info: *const pmix_info_t, ninfo: usize) -> pmix_status_t {
        status((|| {
            // SAFETY: ninfo infos
            let is = unsafe { infos(info, ninfo) }?;
            if is.is_empty() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            let p = is
                .into_iter()
                .fold(Publish::new(), |p, i| p.put(&i.key.to_string_lossy(), i.value));
            with_client(|c, _| c.publish(p).map_err(cerr))
        })())
    }

    /// `PMIx_Lookup`: fill each pdata's publisher and value for its key.
    fn PMIx_Lookup(data: *mut pmix_pdata_t, ndata: usize, info: *const pmix_info_t, ninfo: usize) -> pmix_status_t {
        status((|| {
            if data.is_null() || ndata == 0 {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            // SAFETY: ndata pdata from the caller
            let slots = unsafe { std::slice::from_raw_parts_mut(data, ndata) };
            let keys: Vec<String> = slots.iter().map(|d| read_key(&d.key).to_string_lossy().into_owned()).collect();
            // SAFETY: ninfo infos
            let opts = lookup_opts(unsafe { infos(info, ninfo) }?);
            let key_refs: Vec<&str> = keys.iter().map(String::as_str).collect();
            let found = with_client(|c, _| c.lookup(&key_refs, opts).map_err(cerr))?;
            for d in found {
                let k = d.key.to_string_lossy();
                for (slot, key) in slots.iter_mut().zip(&keys) {
                    if *key == k {
                        slot.proc.rank = d.proc.rank;
                        write_fixed(&mut slot.proc.nspace, d.proc.nspace.as_bytes());
                        write_value(&mut slot.value, &d.value)?;
                    }
                }
            }
            Ok(())
        })())
    }

    /// `PMIx_Unpublish`: remove the published `keys` (NULL-terminated; NULL: all of ours).
    fn PMIx_Unpublish(keys: *mut *mut c_char, info: *const pmix_info_t, ninfo: usize) -> pmix_status_t {
        status((|| {
            // SAFETY: NULL or a NULL-terminated array of C strings; ninfo infos
            let (ks, opts) = unsafe { (read_argv(keys), lookup_opts(infos(info, ninfo)?)) };
            let ks: Vec<String> = ks.iter().map(lossy).collect();
            let refs: Vec<&str> = ks.iter().map(String::as_str).collect();
            with_client(|c, _| c.unpublish(&refs, opts).map_err(cerr))
        })())
    }

    /// `PMIx_Resolve_peers`: the processes of `nspace` on `nodename` (NULL: this node), in a new array.
    fn PMIx_Resolve_peers(
        nodename: *const c_char,
        nspace: *const c_char,
        procs: *mut *mut pmix_proc_t,
        nprocs: *mut usize
    ) -> pmix_status_t {
        status((|| {
            if procs.is_null() || nprocs.is_null() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            // SAFETY: NULL or a C string
            if unsafe { read_str(nodename) }.is_some_and(|n| n.as_bytes() != crate::client::hostname().as_bytes()) {
                // the client knows its own node's peers only
                return Err(PMIX_ERR_NOT_SUPPORTED);
            }
            // SAFETY: NULL or a C string
            let ns = unsafe { read_str(nspace) }.map(|s| lossy(&s));
            let found = with_client(|c, me| {
                let ns = ns.unwrap_or_else(|| me.nspace.to_string());
                c.resolve_peers(&ns).map_err(cerr)
            })?;
            let vals: Vec<Value> = found.into_iter().map(|p| Value::Proc(Box::new(p))).collect();
            // SAFETY: checked non-NULL
            unsafe { out_array(DataType::Proc, &vals, procs, nprocs) }
        })())
    }

    /// `PMIx_Resolve_nodes`: the nodes hosting `nspace`, as a new comma-separated string.
    fn PMIx_Resolve_nodes(nspace: *const c_char, nodelist: *mut *mut c_char) -> pmix_status_t {
        status((|| {
            if nodelist.is_null() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            // SAFETY: NULL or a C string
            let ns = unsafe { nspace_arg(nspace) }?;
            let nodes = with_client(|c, _| c.resolve_nodes(&ns).map_err(cerr))?;
            let p = c_strdup(nodes.join(",").as_bytes())?;
            // SAFETY: checked non-NULL
            unsafe { *nodelist = p };
            Ok(())
        })())
    }

    /// `PMIx_Query_info`: answers to the queries, in a new info array; the ABI versions answered here (see `query`).
    fn PMIx_Query_info(
        queries: *mut pmix_query_t,
        nqueries: usize,
        results: *mut *mut pmix_info_t,
        nresults: *mut usize
    ) -> pmix_status_t {
        status((|| {
            if results.is_null() || nresults.is_null() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            // SAFETY: nqueries queries
            let qs = unsafe { read_queries(queries, nqueries) }?;
            let got = query(qs)?;
            let vals: Vec<Value> = got.into_iter().map(|i| Value::Info(Box::new(i))).collect();
            // SAFETY: checked non-NULL
            unsafe { out_array(DataType::Info, &vals, results, nresults) }
        })())
    }

    /// `PMIx_Log`: log `data` as `directives` say.
    fn PMIx_Log(data: *const pmix_info_t, ndata: usize, directives: *const pmix_info_t, ndirs: usize) -> pmix_status_t {
        status((|| {
            // SAFETY: ndata and ndirs infos
            let (d, x) = unsafe { (infos(data, ndata)?, infos(directives, ndirs)?) };
            if d.is_empty() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            with_client(|c, _| c.log(&d, &x).map_err(cerr))
        })())
    }

    /// `PMIx_Spawn`: start the applications as a new job; its namespace in `nspace` (if not NULL).
    fn PMIx_Spawn(
        job_info: *const pmix_info_t,
        ninfo: usize,
        apps: *const pmix_app_t,
        napps: usize,
        nspace: *mut c_char
    ) -> pmix_status_t {
        status((|| {
            // SAFETY: ninfo infos, napps apps
            let sp = unsafe { spawn_request(job_info, ninfo, apps, napps) }?;
            let ns = with_client(|c, _| c.spawn(sp).map_err(cerr))?;
            if !nspace.is_null() {
                // SAFETY: a pmix_nspace_t of the caller's
                write_fixed(unsafe { &mut *(nspace as *mut pmix_nspace_t) }, ns.as_bytes());
            }
            Ok(())
        })())
    }

    /// `PMIx_Connect`: connect with `procs` (their namespaces become one group).
    fn PMIx_Connect(procs: *const pmix_proc_t, nprocs: usize, info: *const pmix_info_t, ninfo: usize) -> pmix_status_t {
        // SAFETY: as group takes them
        status(unsafe { group(procs, nprocs, info, ninfo, Client::connect) })
    }

    /// `PMIx_Disconnect`: undo a connect with `procs`.
    fn PMIx_Disconnect(procs: *const pmix_proc_t, nprocs: usize, info: *const pmix_info_t, ninfo: usize) -> pmix_status_t {
        // SAFETY: as group takes them
        status(unsafe { group(procs, nprocs, info, ninfo, Client::disconnect) })
    }

    /// `PMIx_Publish_nb`: as PMIx_Publish; `cbfunc` gets the status.
    fn PMIx_Publish_nb(info: *const pmix_info_t, ninfo: usize, cbfunc: pmix_op_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t {
        status((|| {
            // SAFETY: ninfo infos
            let is = unsafe { infos(info, ninfo) }?;
            if is.is_empty() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            let p = is.into_iter().fold(Publish::new(), |p, i| p.put(&i.key.to_string_lossy(), i.value));
            op_nb("PMIx_Publish_nb", cbfunc, cbdata, move || with_client(|c, _| c.publish(p).map_err(cerr)))
        })())
    }

    /// `PMIx_Unpublish_nb`: as PMIx_Unpublish; `cbfunc` gets the status.
    fn PMIx_Unpublish_nb(keys: *mut *mut c_char, info: *const pmix_info_t, ninfo: usize, cbfunc: pmix_op_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t {
        status((|| {
            // SAFETY: NULL or a NULL-terminated array of C strings; ninfo infos
            let (ks, opts) = unsafe { (read_argv(keys), lookup_opts(infos(info, ninfo)?)) };
            let ks: Vec<String> = ks.iter().map(lossy).collect();
            op_nb("PMIx_Unpublish_nb", cbfunc, cbdata, move || {
                let refs: Vec<&str> = ks.iter().map(String::as_str).collect();
                with_client(|c, _| c.unpublish(&refs, opts).map_err(cerr))
            })
        })())
    }

    /// `PMIx_Lookup_nb`: look up `keys` (NULL-terminated); `cbfunc` gets what was found.
    fn PMIx_Lookup_nb(keys: *mut *mut c_char, info: *const pmix_info_t, ninfo: usize, cbfunc: pmix_lookup_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t {
        status((|| {
            let cb = cbfunc.ok_or(PMIX_ERR_BAD_PARAM)?;
            // SAFETY: a NULL-terminated array of C strings; ninfo infos
            let (ks, opts) = unsafe { (read_argv(keys), lookup_opts(infos(info, ninfo)?)) };
            if ks.is_empty() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            let ks: Vec<String> = ks.iter().map(lossy).collect();
            let data = Opaque(cbdata);
            in_background("PMIx_Lookup_nb", move || {
                let data = data;
                let refs: Vec<&str> = ks.iter().map(String::as_str).collect();
                let r = with_client(|c, _| c.lookup(&refs, opts).map_err(cerr));
                let vals = r.map(|v| v.into_iter().map(|d| Value::Pdata(Box::new(d))).collect());
                let (rc, p, n) = c_array_of(DataType::Pdata, vals);
                // SAFETY: the caller's callback; the data lives until it returns
                unsafe {
                    cb(rc, p as *mut pmix_pdata_t, n, data.0);
                    free_c_array(DataType::Pdata, p, n);
                }
            })
        })())
    }

    /// `PMIx_Query_info_nb`: start the queries; `cbfunc` gets the answers.
    fn PMIx_Query_info_nb(queries: *mut pmix_query_t, nqueries: usize, cbfunc: pmix_info_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t {
        status((|| {
            // before init libpmix answers no query, not even the ABI versions
            if !crate::client::initialized() {
                return Err(PMIX_ERR_INIT);
            }
            let cb = cbfunc.ok_or(PMIX_ERR_BAD_PARAM)?;
            // SAFETY: nqueries queries
            let qs = unsafe { read_queries(queries, nqueries) }?;
            let data = Opaque(cbdata);
            in_background("PMIx_Query_info_nb", move || {
                let data = data;
                info_cb(cb, data.0, query(qs));
            })
        })())
    }

    /// `PMIx_Log_nb`: as PMIx_Log; `cbfunc` gets the status.
    fn PMIx_Log_nb(data: *const pmix_info_t, ndata: usize, directives: *const pmix_info_t, ndirs: usize, cbfunc: pmix_op_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t {
        status((|| {
            // SAFETY: ndata and ndirs infos
            let (d, x) = unsafe { (infos(data, ndata)?, infos(directives, ndirs)?) };
            if d.is_empty() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            op_nb("PMIx_Log_nb", cbfunc, cbdata, move || with_client(|c, _| c.log(&d, &x).map_err(cerr)))
        })())
    }

    /// `PMIx_Allocation_request`: ask the host (through the server) for the allocation `directive` and `info` describe; its answers in a new info array. As libpmix 4.2.2 a client relays it whatever it asks: what the server answers (pmixw's: NOT_SUPPORTED); a singleton or a server process UNREACH; INIT before init.
    fn PMIx_Allocation_request(directive: u8, info: *const pmix_info_t, ninfo: usize, results: *mut *mut pmix_info_t, nresults: *mut usize) -> pmix_status_t {
        status((|| {
            if !crate::client::initialized() {
                return Err(PMIX_ERR_INIT);
            }
            if results.is_null() || nresults.is_null() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            // SAFETY: checked non-NULL
            unsafe {
                *results = ptr::null_mut();
                *nresults = 0;
            }
            // SAFETY: ninfo infos
            let is = unsafe { infos(info, ninfo) }?;
            let d = pmix_types::enums::AllocDirective::from_wire(directive);
            let got = with_client(|c, _| c.allocation(d, &is).map_err(cerr))?;
            let vals: Vec<Value> = got.into_iter().map(|i| Value::Info(Box::new(i))).collect();
            // SAFETY: checked non-NULL
            unsafe { out_array(DataType::Info, &vals, results, nresults) }
        })())
    }

    /// `PMIx_Allocation_request_nb`: as PMIx_Allocation_request; `cbfunc` gets the server's answer (NOT_SUPPORTED from pmixw, through the callback as on libpmix 4.2.2); what cannot be sent at all (a singleton or a server: UNREACH; INIT before init) is returned at once, no callback made.
    fn PMIx_Allocation_request_nb(directive: u8, info: *const pmix_info_t, ninfo: usize, cbfunc: pmix_info_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t {
        status((|| {
            with_client(|_, _| Ok(()))?;
            // SAFETY: ninfo infos
            let is = unsafe { infos(info, ninfo) }?;
            let d = pmix_types::enums::AllocDirective::from_wire(directive);
            let run = move || with_client(|c, _| c.allocation(d, &is).map_err(cerr));
            let Some(cb) = cbfunc else { return run().map(|_| ()) };
            let data = Opaque(cbdata);
            in_background("PMIx_Allocation_request_nb", move || {
                let data = data;
                info_cb(cb, data.0, run());
            })
        })())
    }

    /// `PMIx_Job_control_nb`: ask the host to apply `directives` to `targets`; `cbfunc` gets its answers.
    fn PMIx_Job_control_nb(targets: *const pmix_proc_t, ntargets: usize, directives: *const pmix_info_t, ndirs: usize, cbfunc: pmix_info_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t {
        status((|| {
            // SAFETY: ntargets procs, ndirs infos
            let (ps, ds) = unsafe { (procs_of(targets, ntargets)?, infos(directives, ndirs)?) };
            // no directives are relayed too, as libpmix 4.2.2 relays them
            let jc = ds.into_iter().fold(JobControl::new(), JobControl::info);
            let run = move || with_client(|c, _| c.job_control(&ps, jc).map_err(cerr));
            let Some(cb) = cbfunc else { return run().map(|_| ()) };
            let data = Opaque(cbdata);
            in_background("PMIx_Job_control_nb", move || {
                let data = data;
                info_cb(cb, data.0, run());
            })
        })())
    }

    /// `PMIx_Spawn_nb`: as PMIx_Spawn; `cbfunc` gets the status and the new namespace.
    fn PMIx_Spawn_nb(job_info: *const pmix_info_t, ninfo: usize, apps: *const pmix_app_t, napps: usize, cbfunc: pmix_spawn_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t {
        status((|| {
            let cb = cbfunc.ok_or(PMIX_ERR_BAD_PARAM)?;
            // SAFETY: ninfo infos, napps apps
            let sp = unsafe { spawn_request(job_info, ninfo, apps, napps) }?;
            let data = Opaque(cbdata);
            in_background("PMIx_Spawn_nb", move || {
                let data = data;
                let r = with_client(|c, _| c.spawn(sp).map_err(cerr));
                let mut ns: pmix_nspace_t = [0; PMIX_MAX_NSLEN + 1];
                let rc = match &r {
                    Ok(n) => {
                        write_fixed(&mut ns, n.as_bytes());
                        PMIX_SUCCESS
                    }
                    Err(e) => *e,
                };
                // SAFETY: the caller's callback; ns lives until it returns
                unsafe { cb(rc, ns.as_mut_ptr(), data.0) };
            })
        })())
    }

    /// `PMIx_Connect_nb`: as PMIx_Connect; `cbfunc` gets the status.
    fn PMIx_Connect_nb(procs: *const pmix_proc_t, nprocs: usize, info: *const pmix_info_t, ninfo: usize, cbfunc: pmix_op_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t {
        // SAFETY: as group_nb takes them
        status(unsafe { group_nb("PMIx_Connect_nb", procs, nprocs, info, ninfo, Client::connect, cbfunc, cbdata) })
    }

    /// `PMIx_Disconnect_nb`: as PMIx_Disconnect; `cbfunc` gets the status.
    fn PMIx_Disconnect_nb(procs: *const pmix_proc_t, nprocs: usize, info: *const pmix_info_t, ninfo: usize, cbfunc: pmix_op_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t {
        // SAFETY: as group_nb takes them
        status(unsafe { group_nb("PMIx_Disconnect_nb", procs, nprocs, info, ninfo, Client::disconnect, cbfunc, cbdata) })
    }

    /// `PMIx_Job_control`: ask the host to apply `directives` to `targets` (none too: the server answers); its answers in a new info array (NULL outputs: dropped, as libpmix 4.2.2 drops them).
    fn PMIx_Job_control(targets: *const pmix_proc_t, ntargets: usize, directives: *const pmix_info_t, ndirs: usize, results: *mut *mut pmix_info_t, nresults: *mut usize) -> pmix_status_t {
        status((|| {
            // SAFETY: ntargets procs, ndirs infos
            let (ps, ds) = unsafe { (procs_of(targets, ntargets)?, infos(directives, ndirs)?) };
            let jc = ds.into_iter().fold(JobControl::new(), JobControl::info);
            let got = with_client(|c, _| c.job_control(&ps, jc).map_err(cerr))?;
            // as libpmix 4.2.2: NULL outputs are no error, the answers are dropped
            if got.is_empty() || results.is_null() || nresults.is_null() {
                return Ok(());
            }
            let vals: Vec<Value> = got.into_iter().map(|i| Value::Info(Box::new(i))).collect();
            // SAFETY: checked non-NULL
            unsafe { out_array(DataType::Info, &vals, results, nresults) }
        })())
    }

    /// `PMIx_Process_monitor_nb`: ask the server to monitor this process
    /// (`monitor`: what, e.g. PMIX_MONITOR_HEARTBEAT; `error`: the status to
    /// raise); `cbfunc` gets its answers. PMIX_SEND_HEARTBEAT (what the
    /// PMIx_Heartbeat macro passes) sends one heartbeat instead, with no
    /// reply and no callback, as libpmix 4.2.2 does.
    fn PMIx_Process_monitor_nb(monitor: *const pmix_info_t, error: pmix_status_t, directives: *const pmix_info_t, ndirs: usize, cbfunc: pmix_info_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t {
        status((|| {
            // SAFETY: one info, ndirs infos
            let Some((what, ds)) = (unsafe { monitor_request(monitor, directives, ndirs) })? else {
                return Ok(());
            };
            let run = move || with_client(|c, _| c.monitor(what, error, &ds).map_err(cerr));
            let Some(cb) = cbfunc else { return run().map(|_| ()) };
            let data = Opaque(cbdata);
            in_background("PMIx_Process_monitor_nb", move || {
                let data = data;
                info_cb(cb, data.0, run());
            })
        })())
    }

    /// `PMIx_Process_monitor`: as PMIx_Process_monitor_nb, its answers in a new info array.
    fn PMIx_Process_monitor(monitor: *const pmix_info_t, error: pmix_status_t, directives: *const pmix_info_t, ndirs: usize, results: *mut *mut pmix_info_t, nresults: *mut usize) -> pmix_status_t {
        status((|| {
            // SAFETY: one info, ndirs infos
            let Some((what, ds)) = (unsafe { monitor_request(monitor, directives, ndirs) })? else {
                return Ok(());
            };
            let got = with_client(|c, _| c.monitor(what, error, &ds).map_err(cerr))?;
            if got.is_empty() {
                return Ok(());
            }
            if results.is_null() || nresults.is_null() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            let vals: Vec<Value> = got.into_iter().map(|i| Value::Info(Box::new(i))).collect();
            // SAFETY: checked non-NULL
            unsafe { out_array(DataType::Info, &vals, results, nresults) }
        })())
    }

    /// `PMIx_Progress`: nothing to do (no progress thread waits to be driven).
    fn PMIx_Progress() {}
}
