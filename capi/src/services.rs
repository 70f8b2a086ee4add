//! The client's other calls over pmix-wire's blocking client: the
//! non-blocking fence and get (run on a thread of their own that calls
//! the callback when the blocking call returns), publish, lookup,
//! unpublish, resolve, query, log, spawn, connect and disconnect. The
//! threading rules of [`crate::client`] apply.
#![allow(non_camel_case_types)]

use crate::abi::*;
use crate::client::{cerr, read_procs, status, with_client};
use crate::conv::*;
use crate::guard::{exports, guarded};
use pmix_types::status::codes::*;
use pmix_types::{DataType, Info, PString, Proc, Query, Value};
use pmix_wire::client::{Client, ClientError, FenceOpts, GetOpts, LookupOpts, Publish, Spawn, SpawnApp};
use std::ffi::{c_char, c_void};
use std::ptr;

/// `pmix_op_cbfunc_t`.
pub type pmix_op_cbfunc_t =
    Option<unsafe extern "C" fn(status: pmix_status_t, cbdata: *mut c_void)>;
/// `pmix_value_cbfunc_t`.
pub type pmix_value_cbfunc_t =
    Option<unsafe extern "C" fn(status: pmix_status_t, kv: *mut pmix_value_t, cbdata: *mut c_void)>;

/// A C pointer handed to another thread (the caller's cbdata: the
/// standard lets the callback run on any thread).
struct Opaque(*mut c_void);
// SAFETY: the pointer is only handed back to the caller's callback
unsafe impl Send for Opaque {}

/// Run `f` on a new thread (named for the call), guarded as the exports are.
fn in_background(name: &'static str, f: impl FnOnce() + Send + 'static) -> Result<(), Status> {
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
unsafe fn infos(info: *const pmix_info_t, n: usize) -> Result<Vec<Info>, Status> {
    if info.is_null() && n > 0 {
        return Err(PMIX_ERR_BAD_PARAM);
    }
    // SAFETY: the caller's contract
    unsafe { read_infos(info, n) }
}

/// The procs at `procs`, checked.
///
/// # Safety
/// `procs` is NULL or holds `n` procs.
unsafe fn procs_of(procs: *const pmix_proc_t, n: usize) -> Result<Vec<Proc>, Status> {
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

fn get_value(who: Option<Proc>, key: &str, is: Vec<Info>) -> Result<Value, Status> {
    let opts = is.into_iter().fold(GetOpts::new(), GetOpts::info);
    with_client(|c, me| {
        let who = who.unwrap_or_else(|| me.clone());
        c.get_with(&who, key, opts).map_err(cerr)
    })
    .map_err(|e| {
        if e == PMIX_ERR_UNREACH {
            PMIX_ERR_NOT_FOUND
        } else {
            e
        }
    })
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
    let (ps, is) = unsafe { (procs_of(procs, nprocs)?, infos(info, ninfo)?) };
    if ps.is_empty() {
        return Err(PMIX_ERR_BAD_PARAM);
    }
    with_client(|c, _| call(c, &ps, &is).map_err(cerr))
}

/// `vals` (all of `ty`) as a new C array in `*out`, their count in `*n`
/// (NULL for none).
///
/// # Safety
/// `out` and `n` are writable.
unsafe fn out_array<T>(ty: DataType, vals: &[Value], out: *mut *mut T, n: *mut usize) -> Result<(), Status> {
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

    /// `PMIx_Query_info`: answers to the queries, in a new info array.
    fn PMIx_Query_info(
        queries: *mut pmix_query_t,
        nqueries: usize,
        results: *mut *mut pmix_info_t,
        nresults: *mut usize
    ) -> pmix_status_t {
        status((|| {
            if queries.is_null() || nqueries == 0 || results.is_null() || nresults.is_null() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            let qs = (0..nqueries)
                .map(|i| {
                    // SAFETY: nqueries queries
                    match unsafe { read_elem(DataType::Query, queries.add(i) as *const u8) }? {
                        Value::Query(q) => Ok(*q),
                        _ => Err(PMIX_ERR_BAD_PARAM),
                    }
                })
                .collect::<Result<Vec<Query>, Status>>()?;
            let got = with_client(|c, _| c.query(qs).map_err(cerr))?;
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
}
