//! The server functions over pmix-wire's server core and its net driver:
//! `PMIx_server_init` starts the driver's loop (its own thread, which
//! owns the listener and every connection) and one upcall thread, which
//! takes the core's [`HostEvent`]s in order and calls the host's
//! `pmix_server_module_t` members with the completion callbacks the
//! standard defines. The completion callbacks (called by the host from
//! any thread, at once or later) hand their answers to the loop without
//! waiting for it. Completion callbacks of the host's own calls
//! (register_nspace, register_client, …) run on a thread of their own
//! after the call's work is done, never on the host's calling thread and
//! never while this module holds its lock.
#![allow(non_camel_case_types)]

use crate::abi::*;
use crate::conv::*;
use crate::guard::{exports, guarded};
use crate::services::{free_c_array, pmix_info_cbfunc_t, pmix_lookup_cbfunc_t, pmix_op_cbfunc_t, pmix_release_cbfunc_t};
use pmix_types::status::codes::*;
use pmix_types::{DataType, Info, PString, Pdata, Proc, Value};
use pmix_wire::server::{
    net, Connecting, Grouping, HostEvent, IofMode, JobSpec, Publishing, Querying, Registering, Server, ToolConnections,
};
use std::ffi::{c_char, c_int, c_void};
use std::sync::{Mutex, MutexGuard};

/// `pmix_server_client_connected_fn_t` (and `client_finalized_fn_t`).
pub type client_connected_fn =
    unsafe extern "C" fn(*const pmix_proc_t, *mut c_void, pmix_op_cbfunc_t, *mut c_void) -> pmix_status_t;
/// `pmix_server_abort_fn_t`.
pub type abort_fn = unsafe extern "C" fn(
    *const pmix_proc_t,
    *mut c_void,
    c_int,
    *const c_char,
    *mut pmix_proc_t,
    usize,
    pmix_op_cbfunc_t,
    *mut c_void,
) -> pmix_status_t;
/// `pmix_modex_cbfunc_t`.
pub type pmix_modex_cbfunc_t = Option<
    unsafe extern "C" fn(pmix_status_t, *const c_char, usize, *mut c_void, pmix_release_cbfunc_t, *mut c_void),
>;
/// `pmix_server_fencenb_fn_t`.
pub type fence_nb_fn = unsafe extern "C" fn(
    *const pmix_proc_t,
    usize,
    *const pmix_info_t,
    usize,
    *mut c_char,
    usize,
    pmix_modex_cbfunc_t,
    *mut c_void,
) -> pmix_status_t;
/// `pmix_server_dmodex_req_fn_t`.
pub type direct_modex_fn = unsafe extern "C" fn(
    *const pmix_proc_t,
    *const pmix_info_t,
    usize,
    pmix_modex_cbfunc_t,
    *mut c_void,
) -> pmix_status_t;
/// `pmix_server_notify_event_fn_t`.
pub type notify_event_fn = unsafe extern "C" fn(
    pmix_status_t,
    *const pmix_proc_t,
    u8,
    *mut pmix_info_t,
    usize,
    pmix_op_cbfunc_t,
    *mut c_void,
) -> pmix_status_t;
/// `pmix_server_log_fn_t`.
pub type log_fn = unsafe extern "C" fn(
    *const pmix_proc_t,
    *const pmix_info_t,
    usize,
    *const pmix_info_t,
    usize,
    pmix_op_cbfunc_t,
    *mut c_void,
);
/// `pmix_server_job_control_fn_t`.
pub type job_control_fn = unsafe extern "C" fn(
    *const pmix_proc_t,
    *const pmix_proc_t,
    usize,
    *const pmix_info_t,
    usize,
    pmix_info_cbfunc_t,
    *mut c_void,
) -> pmix_status_t;
/// `pmix_server_spawn_fn_t`.
pub type spawn_fn = unsafe extern "C" fn(
    *const pmix_proc_t,
    *const pmix_info_t,
    usize,
    *const pmix_app_t,
    usize,
    crate::services::pmix_spawn_cbfunc_t,
    *mut c_void,
) -> pmix_status_t;
/// `pmix_server_iof_fn_t`.
pub type iof_pull_fn = unsafe extern "C" fn(
    *const pmix_proc_t,
    usize,
    *const pmix_info_t,
    usize,
    u16,
    pmix_op_cbfunc_t,
    *mut c_void,
) -> pmix_status_t;
/// `pmix_server_stdin_fn_t`.
pub type push_stdin_fn = unsafe extern "C" fn(
    *const pmix_proc_t,
    *const pmix_proc_t,
    usize,
    *const pmix_info_t,
    usize,
    *const pmix_byte_object_t,
    pmix_op_cbfunc_t,
    *mut c_void,
) -> pmix_status_t;
/// `pmix_server_publish_fn_t`.
pub type publish_fn = unsafe extern "C" fn(
    *const pmix_proc_t,
    *const pmix_info_t,
    usize,
    pmix_op_cbfunc_t,
    *mut c_void,
) -> pmix_status_t;
/// `pmix_server_lookup_fn_t`.
pub type lookup_fn = unsafe extern "C" fn(
    *const pmix_proc_t,
    *mut *mut c_char,
    *const pmix_info_t,
    usize,
    pmix_lookup_cbfunc_t,
    *mut c_void,
) -> pmix_status_t;
/// `pmix_server_unpublish_fn_t`.
pub type unpublish_fn = unsafe extern "C" fn(
    *const pmix_proc_t,
    *mut *mut c_char,
    *const pmix_info_t,
    usize,
    pmix_op_cbfunc_t,
    *mut c_void,
) -> pmix_status_t;
/// `pmix_server_connect_fn_t` (and `pmix_server_disconnect_fn_t`).
pub type connect_fn = unsafe extern "C" fn(
    *const pmix_proc_t,
    usize,
    *const pmix_info_t,
    usize,
    pmix_op_cbfunc_t,
    *mut c_void,
) -> pmix_status_t;
/// `pmix_server_query_fn_t`.
pub type query_fn = unsafe extern "C" fn(
    *mut pmix_proc_t,
    *mut pmix_query_t,
    usize,
    pmix_info_cbfunc_t,
    *mut c_void,
) -> pmix_status_t;
/// `pmix_server_register_events_fn_t`.
pub type register_events_fn = unsafe extern "C" fn(
    *mut pmix_status_t,
    usize,
    *const pmix_info_t,
    usize,
    pmix_op_cbfunc_t,
    *mut c_void,
) -> pmix_status_t;
/// `pmix_server_alloc_fn_t`.
pub type allocate_fn = unsafe extern "C" fn(
    *const pmix_proc_t,
    u8,
    *const pmix_info_t,
    usize,
    pmix_info_cbfunc_t,
    *mut c_void,
) -> pmix_status_t;
/// `pmix_server_monitor_fn_t`.
pub type monitor_fn = unsafe extern "C" fn(
    *const pmix_proc_t,
    *const pmix_info_t,
    pmix_status_t,
    *const pmix_info_t,
    usize,
    pmix_info_cbfunc_t,
    *mut c_void,
) -> pmix_status_t;
/// `pmix_server_get_cred_fn_t`.
pub type get_cred_fn = unsafe extern "C" fn(
    *const pmix_proc_t,
    *const pmix_info_t,
    usize,
    crate::stubs::pmix_credential_cbfunc_t,
    *mut c_void,
) -> pmix_status_t;
/// `pmix_server_validate_cred_fn_t`.
pub type validate_cred_fn = unsafe extern "C" fn(
    *const pmix_proc_t,
    *const pmix_byte_object_t,
    *const pmix_info_t,
    usize,
    crate::stubs::pmix_validation_cbfunc_t,
    *mut c_void,
) -> pmix_status_t;
/// `pmix_group_operation_t` (an enum in C: int-sized).
pub type pmix_group_operation_t = c_int;
/// `PMIX_GROUP_CONSTRUCT`.
pub const PMIX_GROUP_CONSTRUCT: pmix_group_operation_t = 0;
/// `PMIX_GROUP_DESTRUCT`.
pub const PMIX_GROUP_DESTRUCT: pmix_group_operation_t = 1;
/// `pmix_server_grp_fn_t`.
pub type group_fn = unsafe extern "C" fn(
    pmix_group_operation_t,
    *mut c_char,
    *const pmix_proc_t,
    usize,
    *const pmix_info_t,
    usize,
    pmix_info_cbfunc_t,
    *mut c_void,
) -> pmix_status_t;
/// `pmix_tool_connection_cbfunc_t`.
pub type pmix_tool_connection_cbfunc_t = Option<unsafe extern "C" fn(pmix_status_t, *mut pmix_proc_t, *mut c_void)>;
/// `pmix_server_tool_connection_fn_t`.
pub type tool_connected_fn = unsafe extern "C" fn(*mut pmix_info_t, usize, pmix_tool_connection_cbfunc_t, *mut c_void);
/// `pmix_dmodex_response_fn_t`.
pub type pmix_dmodex_response_fn_t =
    Option<unsafe extern "C" fn(pmix_status_t, *mut c_char, usize, *mut c_void)>;
/// `pmix_setup_application_cbfunc_t`.
pub type pmix_setup_application_cbfunc_t = Option<
    unsafe extern "C" fn(pmix_status_t, *mut pmix_info_t, usize, *mut c_void, pmix_op_cbfunc_t, *mut c_void),
>;

/// The host's upcalls the library makes, copied from its module at init
/// (the members after these are never read: a host built on an older
/// header may pass a shorter struct).
#[derive(Clone, Copy, Default)]
struct Module {
    connected: Option<client_connected_fn>,
    finalized: Option<client_connected_fn>,
    abort: Option<abort_fn>,
    fence_nb: Option<fence_nb_fn>,
    direct_modex: Option<direct_modex_fn>,
    notify_event: Option<notify_event_fn>,
    log: Option<log_fn>,
    job_control: Option<job_control_fn>,
    spawn: Option<spawn_fn>,
    iof_pull: Option<iof_pull_fn>,
    push_stdin: Option<push_stdin_fn>,
    publish: Option<publish_fn>,
    lookup: Option<lookup_fn>,
    unpublish: Option<unpublish_fn>,
    connect: Option<connect_fn>,
    disconnect: Option<connect_fn>,
    query: Option<query_fn>,
    register_events: Option<register_events_fn>,
    allocate: Option<allocate_fn>,
    monitor: Option<monitor_fn>,
    tool_connected: Option<tool_connected_fn>,
    get_credential: Option<get_cred_fn>,
    validate_credential: Option<validate_cred_fn>,
    group: Option<group_fn>,
}

impl Module {
    /// Who answers publish, lookup and unpublish: the host when it set
    /// any of the three (a NULL one of them answers NOT_SUPPORTED, as in
    /// libpmix); where the host has none or answers NOT_SUPPORTED (Slurm
    /// 22.05's three do), the core for a job on this node alone, and
    /// NOT_SUPPORTED for a job spanning nodes, as libpmix answers (its
    /// data could not be found from the other nodes).
    fn publishing(&self) -> Publishing {
        if self.publish.is_some() || self.lookup.is_some() || self.unpublish.is_some() {
            Publishing::HostOrLocal
        } else {
            Publishing::LocalJobsOnly
        }
    }
}

/// A client registered by the host: its `server_object`, handed back in
/// its upcalls.
struct Registered {
    proc: Proc,
    object: usize,
}

/// The running server.
struct State {
    running: net::Running,
    upcalls: Option<std::thread::JoinHandle<()>>,
    clients: Vec<Registered>,
    /// Our own `PMIx_server_dmodex_request`s waiting for a local rank's
    /// commit: the rank, the callback and its data.
    dmodex: Vec<(Proc, unsafe extern "C" fn(pmix_status_t, *mut c_char, usize, *mut c_void), usize)>,
    /// The gds modules the server's PMIX_MCA_gds selected.
    gds: crate::server_store::Gds,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// Each registered namespace's client environment (the core's
/// client_env for its rank 0), kept apart from [`STATE`] and the loop:
/// hosts call `PMIx_server_setup_fork` in the forked child (Slurm's
/// slurmstepd does, between fork and exec), where no other thread of
/// ours runs, so setup_fork must not wait for the loop. This lock is held
/// only to copy a list in or out.
/// A registered namespace: its name, its size, its client environment.
type JobEnv = (String, u32, Vec<(String, String)>);

static ENVS: Mutex<Vec<JobEnv>> = Mutex::new(Vec::new());

/// Whether the server runs (read where STATE's lock must not be taken).
static RUNNING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether this process runs the server half (for the calls of stubs.rs).
pub(crate) fn running() -> bool {
    RUNNING.load(std::sync::atomic::Ordering::Acquire)
}

/// PMIx_server_define_process_set's part in the core (stubs.rs): the
/// set that queries of process sets then answer, as libpmix keeps it.
pub(crate) fn define_pset(name: String, members: Vec<Proc>) -> Result<(), Status> {
    call(move |s| s.define_pset(&name, members))
}

/// PMIx_server_delete_process_set's part in the core (stubs.rs).
pub(crate) fn delete_pset(name: String) -> Result<(), Status> {
    call(move |s| s.delete_pset(&name))
}

fn envs() -> MutexGuard<'static, Vec<JobEnv>> {
    ENVS.lock().unwrap_or_else(|p| p.into_inner())
}

fn state() -> MutexGuard<'static, Option<State>> {
    STATE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Run `f` with the running server, or PMIX_ERR_INIT.
fn with<R>(f: impl FnOnce(&mut State) -> Result<R, Status>) -> Result<R, Status> {
    match state().as_mut() {
        Some(s) => f(s),
        None => Err(PMIX_ERR_INIT),
    }
}

/// Hand `f` to the loop, without waiting (a completion callback's answer).
fn post(f: impl FnOnce(&mut Server) + Send + 'static) {
    if let Some(s) = state().as_ref() {
        s.running.post(f);
    }
}

/// Run `f` on the loop and wait for its result.
fn call<R: Send + 'static>(f: impl FnOnce(&mut Server) -> R + Send + 'static) -> Result<R, Status> {
    with(|s| s.running.call(f).ok_or(PMIX_ERR_LOST_CONNECTION))
}

/// A C pointer or value handed to another thread: only handed back to
/// the host, which made it.
#[derive(Clone, Copy)]
struct Opaque(usize);

/// Call the host's completion callback `cbfunc(status, cbdata)` on a
/// thread of its own (the host may hold its own locks while it calls us).
fn complete(name: &'static str, cbfunc: pmix_op_cbfunc_t, cbdata: *mut c_void, rc: pmix_status_t) {
    let Some(cb) = cbfunc else { return };
    // SAFETY: the host's callback with its own data
    if on_thread(name, cbdata, move |data| unsafe { cb(rc, data) }) != PMIX_SUCCESS {
        // SAFETY: as above, here instead (no thread to be had)
        unsafe { cb(rc, cbdata) }
    }
}

/// Run `f(cbdata)` (a call into the host) on a thread of its own,
/// guarded: PMIX_SUCCESS, or PMIX_ERR_OUT_OF_RESOURCE without a thread.
fn on_thread(name: &'static str, cbdata: *mut c_void, f: impl FnOnce(*mut c_void) + Send + 'static) -> pmix_status_t {
    let data = Opaque(cbdata as usize);
    let run = move || {
        let data = data;
        guarded(name, || f(data.0 as *mut c_void))
    };
    match std::thread::Builder::new().name(format!("pmix-capi {name}")).spawn(run) {
        Ok(_) => PMIX_SUCCESS,
        Err(_) => PMIX_ERR_OUT_OF_RESOURCE,
    }
}

/// A fence's participants as libpmix hands them to its host: a
/// namespace all of whose ranks take part as its WILDCARD (Slurm finds
/// the nodes of a collective from these).
fn wildcarded(procs: Vec<Proc>) -> Vec<Proc> {
    let sizes: Vec<(String, u32)> = envs().iter().map(|(n, k, _)| (n.clone(), *k)).collect();
    let mut out: Vec<Proc> = Vec::new();
    for p in procs {
        let ns = p.nspace.to_string();
        let whole = |q: &Proc| q.nspace.to_string() == ns && q.rank == u32::from(pmix_types::Rank::WILDCARD);
        if out.iter().any(whole) {
            continue;
        }
        let n = sizes.iter().find(|(m, _)| *m == ns).map(|(_, k)| *k);
        // the participants are a set, sorted: count this namespace's
        let mine = out.iter().filter(|q| q.nspace.to_string() == ns).count() as u32 + 1;
        out.push(p);
        if n == Some(mine) {
            out.retain(|q| q.nspace.to_string() != ns);
            out.push(Proc::at(&ns, pmix_types::Rank::WILDCARD));
        }
    }
    out
}

/// The pmix_proc_t of `p`.
fn c_proc(p: &Proc) -> pmix_proc_t {
    let mut c = pmix_proc_t { nspace: [0; PMIX_MAX_NSLEN + 1], rank: p.rank };
    write_fixed(&mut c.nspace, p.nspace.as_bytes());
    c
}

/// A C array of `vals` (of type `ty`), freed when dropped.
struct CArray {
    ty: DataType,
    p: *mut c_void,
    n: usize,
}

impl CArray {
    fn new(ty: DataType, vals: Vec<Value>) -> CArray {
        let n = vals.len();
        match (n, c_elems(ty, &vals)) {
            (1.., Ok(p)) => CArray { ty, p, n },
            _ => CArray { ty, p: std::ptr::null_mut(), n: 0 },
        }
    }
    fn infos(v: Vec<Info>) -> CArray {
        CArray::new(DataType::Info, v.into_iter().map(|i| Value::Info(Box::new(i))).collect())
    }
    fn procs(v: &[Proc]) -> CArray {
        CArray::new(DataType::Proc, v.iter().map(|p| Value::Proc(Box::new(p.clone()))).collect())
    }
}

impl Drop for CArray {
    fn drop(&mut self) {
        // SAFETY: made by c_elems (or NULL)
        unsafe { free_c_array(self.ty, self.p, self.n) }
    }
}

/// The upcall thread: every core event, in order, to the host's module.
fn upcalls(module: Module, events: std::sync::mpsc::Receiver<HostEvent>) {
    for e in events {
        guarded("server upcall", || upcall(&module, e));
    }
}

fn object_of(p: &Proc) -> *mut c_void {
    state()
        .as_ref()
        .and_then(|s| s.clients.iter().find(|c| &c.proc == p).map(|c| c.object))
        .unwrap_or(0) as *mut c_void
}

/// A `pmix_op_cbfunc_t` for upcalls whose answer the library does not
/// need (the core has answered the client already).
unsafe extern "C" fn ignore_op(_status: pmix_status_t, _cbdata: *mut c_void) {}

/// What a `pmix_modex_cbfunc_t` handed to the host answers.
#[derive(Clone, Copy)]
enum ModexRequest {
    /// A fence spanning nodes (the core's request id).
    Fence(u64),
    /// A direct-modex request for a remote rank.
    Dmodex(u64),
}

/// What a completion callback handed to the host answers, as its cbdata:
/// boxed, handed back by the host once (to the callback, or taken back
/// here when the host's call failed).
trait Cbdata: Sized {
    /// The cbdata the host gets.
    fn into_cbdata(self) -> *mut c_void {
        Box::into_raw(Box::new(self)) as *mut c_void
    }

    /// Take back a cbdata.
    ///
    /// # Safety
    /// `p` is from this type's [`Cbdata::into_cbdata`], not yet taken back.
    unsafe fn take(p: *mut c_void) -> Self {
        // SAFETY: the caller's contract
        *unsafe { Box::from_raw(p as *mut Self) }
    }
}

impl Cbdata for ModexRequest {}
impl Cbdata for PubRequest {}
impl Cbdata for ConnRequest {}

impl ModexRequest {
    /// Answer the core with the host's status and data.
    fn answer(self, status: pmix_status_t, bytes: Vec<u8>) {
        match self {
            ModexRequest::Fence(request) => post(move |s| s.fence_done(request, status, &bytes)),
            ModexRequest::Dmodex(request) => {
                let result = match status {
                    PMIX_SUCCESS => Ok(bytes::Bytes::from(bytes)),
                    e => Err(e),
                };
                post(move |s| s.dmodex_done(request, result))
            }
        }
    }
}

/// The host's answer to a fence or a direct-modex request (cbdata: a
/// [`ModexRequest`]): its bytes are copied, then its data released.
unsafe extern "C" fn modex_answer(
    status: pmix_status_t,
    data: *const c_char,
    ndata: usize,
    cbdata: *mut c_void,
    release: pmix_release_cbfunc_t,
    release_data: *mut c_void,
) {
    guarded("modex callback", || {
        // SAFETY: the host hands back the cbdata upcall gave it, once
        let request = unsafe { ModexRequest::take(cbdata) };
        request.answer(status, copy_bytes(data, ndata));
        // released later, on a thread of its own, as libpmix releases it
        // from its progress thread: the host may call this callback
        // holding the lock its release function takes (Slurm 22.05's
        // collectives do; releasing here deadlocked its slurmstepd)
        if let Some(r) = release {
            // SAFETY: the host's release function for its data
            // (without a thread to be had, the data leaks rather than
            // deadlock the host)
            let _ = on_thread("modex release", release_data, move |d| unsafe { r(d) });
        }
    })
}

/// After the host's fence_nb or direct_modex returned `rc`: anything but
/// SUCCESS means its callback will not come, so the request `cb` is
/// answered here (PMIX_OPERATION_SUCCEEDED as SUCCESS, with no data).
fn host_declined(rc: pmix_status_t, cb: *mut c_void) {
    if rc != PMIX_SUCCESS {
        // SAFETY: made by into_cbdata, not handed back by the host
        let req = unsafe { ModexRequest::take(cb) };
        req.answer(if rc == PMIX_OPERATION_SUCCEEDED { PMIX_SUCCESS } else { rc }, Vec::new());
    }
}

/// The host's `ndata` bytes at `data` (NULL: none).
fn copy_bytes(data: *const c_char, ndata: usize) -> Vec<u8> {
    if data.is_null() || ndata == 0 {
        return Vec::new();
    }
    // SAFETY: the host hands `ndata` bytes at `data`
    unsafe { std::slice::from_raw_parts(data as *const u8, ndata) }.to_vec()
}

fn upcall(m: &Module, e: HostEvent) {
    match e {
        HostEvent::Connected(p, _) => {
            if let Some(f) = m.connected {
                let c = c_proc(&p);
                // SAFETY: the host's function, our arguments valid for the call
                unsafe { f(&c, object_of(&p), Some(ignore_op), std::ptr::null_mut()) };
            }
        }
        // a client gone without PMIx_Finalize (HostEvent::Lost) is no
        // upcall, as in libpmix 4.2.2 (capi_lost.c's test): a
        // client_finalized for it would tell ORTE it finalized
        HostEvent::Finalized(p) => {
            if let Some(f) = m.finalized {
                let c = c_proc(&p);
                // SAFETY: as above
                unsafe { f(&c, object_of(&p), Some(ignore_op), std::ptr::null_mut()) };
            }
        }
        HostEvent::Aborted { proc, status, message } => {
            if let Some(f) = m.abort {
                let c = c_proc(&proc);
                let msg = std::ffi::CString::new(message.unwrap_or_default().replace('\0', "")).unwrap_or_default();
                // SAFETY: as above (no procs: the caller's whole namespace)
                unsafe {
                    f(&c, object_of(&proc), status, msg.as_ptr(), std::ptr::null_mut(), 0, Some(ignore_op), std::ptr::null_mut())
                };
            }
        }
        HostEvent::Fence { request, procs, collect, data } => {
            let req = ModexRequest::Fence(request);
            let Some(f) = m.fence_nb else { return req.answer(PMIX_ERR_NOT_SUPPORTED, Vec::new()) };
            let cp = CArray::procs(&wildcarded(procs));
            let ci = CArray::infos(vec![Info::new("pmix.collect", Value::Bool(collect))]);
            let mut bytes = data.to_vec();
            let cb = req.into_cbdata();
            // SAFETY: the host's function; the data are ours until it returns
            // (libpmix's are too: the host copies what it keeps)
            let rc = unsafe {
                f(
                    cp.p as *const pmix_proc_t,
                    cp.n,
                    ci.p as *const pmix_info_t,
                    ci.n,
                    bytes.as_mut_ptr() as *mut c_char,
                    bytes.len(),
                    Some(modex_answer),
                    cb,
                )
            };
            host_declined(rc, cb);
        }
        HostEvent::DirectModex { request, proc } => {
            let req = ModexRequest::Dmodex(request);
            let Some(f) = m.direct_modex else { return req.answer(PMIX_ERR_NOT_SUPPORTED, Vec::new()) };
            let c = c_proc(&proc);
            let cb = req.into_cbdata();
            // SAFETY: the host's function
            let rc = unsafe { f(&c, std::ptr::null(), 0, Some(modex_answer), cb) };
            host_declined(rc, cb);
        }
        HostEvent::Committed(p) => {
            let waiting: Vec<_> = with(|s| {
                let (mine, rest) = std::mem::take(&mut s.dmodex).into_iter().partition(|(q, _, _)| *q == p);
                s.dmodex = rest;
                Ok(mine)
            })
            .unwrap_or_default();
            for (q, cb, data) in waiting {
                dmodex_reply(&q, cb, data as *mut c_void);
            }
        }
        HostEvent::Notified { code, source, range, info } => {
            if let Some(f) = m.notify_event {
                let c = c_proc(&source);
                let ci = CArray::infos(info);
                // SAFETY: the host's function, our arguments valid for the call
                unsafe { f(code, &c, range, ci.p as *mut pmix_info_t, ci.n, Some(ignore_op), std::ptr::null_mut()) };
            }
        }
        HostEvent::Log { proc, data } => {
            if let Some(f) = m.log {
                let c = c_proc(&proc);
                let ci = CArray::infos(data);
                // SAFETY: as above
                unsafe { f(&c, ci.p as *const pmix_info_t, ci.n, std::ptr::null(), 0, Some(ignore_op), std::ptr::null_mut()) };
            }
        }
        HostEvent::Kill { requester, targets } => job_control(m, &requester, &targets, Info::new("pmix.jctrl.kill", Value::Bool(true))),
        HostEvent::Signal { requester, targets, signal } => {
            job_control(m, &requester, &targets, Info::new("pmix.jctrl.sig", Value::Int(signal)))
        }
        HostEvent::Spawn { request, requester, info, apps } => {
            let Some(f) = m.spawn else {
                return post(move |s| s.spawned(request, Err(PMIX_ERR_NOT_SUPPORTED)));
            };
            let c = c_proc(&requester);
            let ci = CArray::infos(info);
            let ca = CArray::new(DataType::App, apps.into_iter().map(|a| Value::App(Box::new(a))).collect());
            let cb = Box::into_raw(Box::new(request)) as *mut c_void;
            // SAFETY: the host's function, our arguments valid for the call
            let rc = unsafe {
                f(&c, ci.p as *const pmix_info_t, ci.n, ca.p as *const pmix_app_t, ca.n, Some(spawn_answer), cb)
            };
            if rc != PMIX_SUCCESS {
                // SAFETY: made above; the host declined, its callback will not come
                drop(unsafe { Box::from_raw(cb as *mut u64) });
                post(move |s| s.spawned(request, Err(rc)));
            }
        }
        HostEvent::IofPull { request, procs, channels, directives, .. } => {
            let Some(f) = m.iof_pull else { return post(move |s| s.iof_done(request, PMIX_ERR_NOT_SUPPORTED)) };
            let cp = CArray::procs(&procs);
            let ci = CArray::infos(directives);
            let cb = Box::into_raw(Box::new(request)) as *mut c_void;
            // SAFETY: the host's function, our arguments valid for the call
            let rc = unsafe { f(cp.p as *const pmix_proc_t, cp.n, ci.p as *const pmix_info_t, ci.n, channels, Some(iof_answer), cb) };
            iof_host_returned(rc, request, cb);
        }
        HostEvent::Stdin { request, source, targets, directives, data } => {
            let Some(f) = m.push_stdin else { return post(move |s| s.iof_done(request, PMIX_ERR_NOT_SUPPORTED)) };
            let c = c_proc(&source);
            let ct = CArray::procs(&targets);
            let ci = CArray::infos(directives);
            let mut bytes = data.as_ref().map(|d| d.to_vec());
            // at EOF no byte object, as libpmix's server passes it
            let bo = bytes
                .as_mut()
                .map(|b| pmix_byte_object_t { bytes: b.as_mut_ptr() as *mut c_char, size: b.len() });
            let bo_ptr = bo.as_ref().map_or(std::ptr::null(), |b| b as *const pmix_byte_object_t);
            let cb = Box::into_raw(Box::new(request)) as *mut c_void;
            // SAFETY: the host's function; the bytes are ours until it returns
            let rc = unsafe {
                f(&c, ct.p as *const pmix_proc_t, ct.n, ci.p as *const pmix_info_t, ci.n, bo_ptr, Some(iof_answer), cb)
            };
            iof_host_returned(rc, request, cb);
        }
        HostEvent::Publish { request, proc, info } => {
            let Some(f) = m.publish else { return PubRequest::Publish(request).answer(PMIX_ERR_NOT_SUPPORTED, Vec::new()) };
            let c = c_proc(&proc);
            let ci = CArray::infos(info);
            let cb = PubRequest::Publish(request).into_cbdata();
            // SAFETY: the host's function, our arguments valid for the call
            let rc = unsafe { f(&c, ci.p as *const pmix_info_t, ci.n, Some(pub_answer), cb) };
            pub_declined(rc, cb);
        }
        HostEvent::Lookup { request, proc, keys, info } => {
            let req = PubRequest::Lookup(request);
            let Some(f) = m.lookup else { return req.answer(PMIX_ERR_NOT_SUPPORTED, Vec::new()) };
            with_keys(&keys, req, |ck| {
                let c = c_proc(&proc);
                let ci = CArray::infos(info);
                let cb = req.into_cbdata();
                // SAFETY: the host's function, our arguments valid for the call
                let rc = unsafe { f(&c, ck, ci.p as *const pmix_info_t, ci.n, Some(lookup_answer), cb) };
                pub_declined(rc, cb);
            });
        }
        HostEvent::Unpublish { request, proc, keys, info } => {
            let req = PubRequest::Unpublish(request);
            let Some(f) = m.unpublish else { return req.answer(PMIX_ERR_NOT_SUPPORTED, Vec::new()) };
            with_keys(&keys, req, |ck| {
                let c = c_proc(&proc);
                let ci = CArray::infos(info);
                let cb = req.into_cbdata();
                // SAFETY: the host's function, our arguments valid for the call
                let rc = unsafe { f(&c, ck, ci.p as *const pmix_info_t, ci.n, Some(pub_answer), cb) };
                pub_declined(rc, cb);
            });
        }
        HostEvent::Connect { request, procs, info } => connect_upcall(m.connect, ConnRequest::Connect(request), &procs, info),
        HostEvent::Disconnect { request, procs, info } => {
            connect_upcall(m.disconnect, ConnRequest::Disconnect(request), &procs, info)
        }
        HostEvent::Query { request, requester, queries } => {
            let req = InfoRequest::Query(request);
            let Some(f) = m.query else { return req.answer(PMIX_ERR_NOT_SUPPORTED, Vec::new()) };
            let mut c = c_proc(&requester);
            let cq = CArray::new(DataType::Query, queries.into_iter().map(|q| Value::Query(Box::new(q))).collect());
            let cb = req.into_cbdata();
            // SAFETY: the host's function, our arguments valid for the call
            let rc = unsafe { f(&mut c, cq.p as *mut pmix_query_t, cq.n, Some(info_answer), cb) };
            info_returned(rc, cb);
        }
        HostEvent::Allocate { request, requester, directive, info } => {
            let req = InfoRequest::Allocate(request);
            let Some(f) = m.allocate else { return req.answer(PMIX_ERR_NOT_SUPPORTED, Vec::new()) };
            let c = c_proc(&requester);
            let ci = CArray::infos(info);
            let cb = req.into_cbdata();
            // SAFETY: the host's function, our arguments valid for the call
            let rc = unsafe { f(&c, directive, ci.p as *const pmix_info_t, ci.n, Some(info_answer), cb) };
            info_returned(rc, cb);
        }
        HostEvent::Monitor { request, requester, monitor, error, directives } => {
            let req = InfoRequest::Monitor(request);
            let Some(f) = m.monitor else { return req.answer(PMIX_ERR_NOT_SUPPORTED, Vec::new()) };
            let c = c_proc(&requester);
            let cm = CArray::infos(vec![monitor]);
            let cd = CArray::infos(directives);
            let cb = req.into_cbdata();
            // SAFETY: the host's function, our arguments valid for the call
            let rc = unsafe {
                f(&c, cm.p as *const pmix_info_t, error, cd.p as *const pmix_info_t, cd.n, Some(info_answer), cb)
            };
            info_returned(rc, cb);
        }
        HostEvent::RegisterEvents { request, mut codes, info } => {
            let answer = move |st: pmix_status_t| {
                post(move |s| {
                    let _ = s.register_events_done(request, st);
                })
            };
            let Some(f) = m.register_events else { return answer(PMIX_ERR_NOT_SUPPORTED) };
            let ci = CArray::infos(info);
            let cb = Box::into_raw(Box::new(request)) as *mut c_void;
            // SAFETY: the host's function, our arguments valid for the call
            let rc = unsafe { f(codes.as_mut_ptr(), codes.len(), ci.p as *const pmix_info_t, ci.n, Some(regev_answer), cb) };
            if rc != PMIX_SUCCESS {
                // SAFETY: made above; the host's callback will not come
                drop(unsafe { Box::from_raw(cb as *mut u64) });
                answer(if rc == PMIX_OPERATION_SUCCEEDED { PMIX_SUCCESS } else { rc });
            }
        }
        HostEvent::GetCredential { request, requester, directives } => {
            let answer = move |st: pmix_status_t| {
                post(move |s| {
                    let _ = s.credential_done(request, st, None, Vec::new());
                })
            };
            let Some(f) = m.get_credential else { return answer(PMIX_ERR_NOT_SUPPORTED) };
            let c = c_proc(&requester);
            let ci = CArray::infos(directives);
            let cb = Box::into_raw(Box::new(request)) as *mut c_void;
            // SAFETY: the host's function, our arguments valid for the call
            let rc = unsafe { f(&c, ci.p as *const pmix_info_t, ci.n, Some(cred_answer), cb) };
            if rc != PMIX_SUCCESS {
                // SAFETY: made above; the host's callback will not come
                drop(unsafe { Box::from_raw(cb as *mut u64) });
                // what the host returned is the client's answer, as from
                // libpmix 4.2.2 (there is no credential without the callback)
                answer(rc);
            }
        }
        HostEvent::ValidateCredential { request, requester, credential, directives } => {
            let answer = move |st: pmix_status_t| {
                post(move |s| {
                    let _ = s.validate_done(request, st, Vec::new());
                })
            };
            let Some(f) = m.validate_credential else { return answer(PMIX_ERR_NOT_SUPPORTED) };
            let c = c_proc(&requester);
            let mut bytes = credential.to_vec();
            let bo = pmix_byte_object_t { bytes: bytes.as_mut_ptr() as *mut c_char, size: bytes.len() };
            let ci = CArray::infos(directives);
            let cb = Box::into_raw(Box::new(request)) as *mut c_void;
            // SAFETY: the host's function, our arguments (the credential's
            // bytes among them) valid for the call
            let rc = unsafe { f(&c, &bo, ci.p as *const pmix_info_t, ci.n, Some(validate_answer), cb) };
            if rc != PMIX_SUCCESS {
                // SAFETY: made above; the host's callback will not come
                drop(unsafe { Box::from_raw(cb as *mut u64) });
                answer(rc);
            }
        }
        HostEvent::GroupConstruct { request, group, procs, info } => {
            group_upcall(m.group, PMIX_GROUP_CONSTRUCT, request, &group, &procs, info)
        }
        HostEvent::GroupDestruct { request, group, procs, info } => {
            group_upcall(m.group, PMIX_GROUP_DESTRUCT, request, &group, &procs, info)
        }
        HostEvent::ToolConnected { request, info } => {
            let Some(f) = m.tool_connected else {
                return post(move |s| {
                    let _ = s.tool_connected_done(request, Err(PMIX_ERR_NOT_SUPPORTED));
                });
            };
            let ci = CArray::infos(info);
            let cb = Box::into_raw(Box::new(request)) as *mut c_void;
            // SAFETY: the host's function, our arguments valid for the call
            // (it answers through the callback only: it returns nothing)
            unsafe { f(ci.p as *mut pmix_info_t, ci.n, Some(tool_answer), cb) };
        }
        _ => {}
    }
}

/// The host's answer to a tool_connected upcall (cbdata: a Box of the
/// core's request id): the tool's name, or the status refusing it (a
/// success without a name refuses it with BAD_PARAM).
unsafe extern "C" fn tool_answer(status: pmix_status_t, proc: *mut pmix_proc_t, cbdata: *mut c_void) {
    guarded("tool_connected callback", || {
        // SAFETY: made by the upcall from a Box<u64>, handed back once
        let request = *unsafe { Box::from_raw(cbdata as *mut u64) };
        let result = match (status, proc.is_null()) {
            // SAFETY: the host's pmix_proc_t
            (PMIX_SUCCESS, false) => match unsafe { read_elem(DataType::Proc, proc as *const u8) } {
                Ok(Value::Proc(p)) => Ok(*p),
                _ => Err(PMIX_ERR_BAD_PARAM),
            },
            (PMIX_SUCCESS, true) => Err(PMIX_ERR_BAD_PARAM),
            (e, _) => Err(e),
        };
        post(move |s| {
            let _ = s.tool_connected_done(request, result);
        });
    })
}

/// A host callback's status and its `ninfo` infos at `info` (NULL:
/// none), copied; infos that cannot be read: their error and none.
///
/// # Safety
/// `info` is NULL or points at `ninfo` infos.
unsafe fn host_infos(status: pmix_status_t, info: *const pmix_info_t, ninfo: usize) -> (pmix_status_t, Vec<Info>) {
    // SAFETY: the caller's promise
    match unsafe { infos(info, if info.is_null() { 0 } else { ninfo }) } {
        Ok(v) => (status, v),
        Err(e) => (e, Vec::new()),
    }
}

/// The host's answer to a get_credential upcall (cbdata: a Box of the
/// core's request id): its status, credential and infos, copied before
/// this returns (the host keeps them).
unsafe extern "C" fn cred_answer(
    status: pmix_status_t,
    credential: *mut pmix_byte_object_t,
    info: *mut pmix_info_t,
    ninfo: usize,
    cbdata: *mut c_void,
) {
    guarded("get_credential callback", || {
        // SAFETY: made by the upcall from a Box<u64>, handed back once
        let request = *unsafe { Box::from_raw(cbdata as *mut u64) };
        // SAFETY: the host's byte object (NULL: none) and its `size` bytes
        let cred = unsafe { credential.as_ref() }
            .filter(|b| !b.bytes.is_null())
            .map(|b| unsafe { std::slice::from_raw_parts(b.bytes as *const u8, b.size) }.to_vec());
        // SAFETY: the host hands `ninfo` infos at `info` (NULL: none)
        let (status, info) = unsafe { host_infos(status, info, ninfo) };
        post(move |s| {
            let _ = s.credential_done(request, status, cred.map(bytes::Bytes::from), info);
        });
    })
}

/// The host's answer to a validate_credential upcall (cbdata: a Box of
/// the core's request id): its status and infos, copied before this
/// returns.
unsafe extern "C" fn validate_answer(status: pmix_status_t, info: *mut pmix_info_t, ninfo: usize, cbdata: *mut c_void) {
    guarded("validate_credential callback", || {
        // SAFETY: made by the upcall from a Box<u64>, handed back once
        let request = *unsafe { Box::from_raw(cbdata as *mut u64) };
        // SAFETY: the host hands `ninfo` infos at `info` (NULL: none)
        let (status, info) = unsafe { host_infos(status, info, ninfo) };
        post(move |s| {
            let _ = s.validate_done(request, status, info);
        });
    })
}

/// The host's answer to a register_events upcall (cbdata: a Box of the
/// core's request id).
unsafe extern "C" fn regev_answer(status: pmix_status_t, cbdata: *mut c_void) {
    guarded("register_events callback", || {
        // SAFETY: made by the upcall from a Box<u64>, handed back once
        let request = *unsafe { Box::from_raw(cbdata as *mut u64) };
        post(move |s| {
            let _ = s.register_events_done(request, status);
        });
    })
}

/// What a `pmix_info_cbfunc_t` handed to the host answers (the core's
/// request id).
#[derive(Clone, Copy)]
enum InfoRequest {
    Query(u64),
    Allocate(u64),
    Monitor(u64),
    Group(u64),
}

impl Cbdata for InfoRequest {}

impl InfoRequest {
    /// Answer the core with the host's status and infos.
    fn answer(self, status: pmix_status_t, info: Vec<Info>) {
        // an id the core no longer waits for (its client gone): nothing sent
        post(move |s| {
            let _ = match self {
                InfoRequest::Query(r) => s.query_done(r, status, info),
                InfoRequest::Allocate(r) => s.allocate_done(r, status, info),
                InfoRequest::Monitor(r) => s.monitor_done(r, status, info),
                InfoRequest::Group(r) => s.group_done(r, status, &info),
            };
        })
    }
}

/// After the host's query, allocate, monitor or group returned `rc`: SUCCESS,
/// its callback will come; PMIX_OPERATION_SUCCEEDED, success with no
/// infos; an error, that.
fn info_returned(rc: pmix_status_t, cb: *mut c_void) {
    if rc != PMIX_SUCCESS {
        // SAFETY: made by into_cbdata; the host's callback will not come
        let req = unsafe { InfoRequest::take(cb) };
        req.answer(if rc == PMIX_OPERATION_SUCCEEDED { PMIX_SUCCESS } else { rc }, Vec::new());
    }
}

/// The host's answer to a query, allocate, monitor or group (cbdata: an
/// [`InfoRequest`]): its infos copied, then released on a thread of
/// their own (as a modex callback's data: the host may hold the lock its
/// release takes). Infos that do not read fail the request with the
/// reading's error.
unsafe extern "C" fn info_answer(
    status: pmix_status_t,
    info: *mut pmix_info_t,
    ninfo: usize,
    cbdata: *mut c_void,
    release: pmix_release_cbfunc_t,
    release_data: *mut c_void,
) {
    guarded("info callback", || {
        // SAFETY: the host hands back the cbdata the upcall gave it, once
        let req = unsafe { InfoRequest::take(cbdata) };
        // SAFETY: the host hands `ninfo` infos at `info` (NULL: none)
        let (status, info) = unsafe { host_infos(status, info, ninfo) };
        req.answer(status, info);
        if let Some(r) = release {
            // SAFETY: the host's release function for its infos
            let _ = on_thread("info release", release_data, move |d| unsafe { r(d) });
        }
    })
}

/// The host's group `f` for `op` (construct or destruct) of `group`,
/// request `request` of the core (NULL: the core never hands it one, as
/// it completes groups itself then): the members and the infos the core
/// gives; its return PMIX_SUCCESS, its `pmix_info_cbfunc_t` answers (the
/// infos, a context id among them, reach the core); PMIX_OPERATION_SUCCEEDED,
/// success with no infos at once; another status, that.
fn group_upcall(
    f: Option<group_fn>,
    op: pmix_group_operation_t,
    request: u64,
    group: &str,
    procs: &[Proc],
    info: Vec<Info>,
) {
    let req = InfoRequest::Group(request);
    let Some(f) = f else { return req.answer(PMIX_ERR_NOT_SUPPORTED, Vec::new()) };
    // a group id is a C string: one with a NUL in it cannot be handed over
    let Ok(mut id) = std::ffi::CString::new(group).map(|c| c.into_bytes_with_nul()) else {
        return req.answer(PMIX_ERR_BAD_PARAM, Vec::new());
    };
    let cp = CArray::procs(procs);
    let ci = CArray::infos(info);
    let cb = req.into_cbdata();
    // SAFETY: the host's function, our arguments valid for the call
    let rc = unsafe {
        f(
            op,
            id.as_mut_ptr() as *mut c_char,
            cp.p as *const pmix_proc_t,
            cp.n,
            ci.p as *const pmix_info_t,
            ci.n,
            Some(info_answer),
            cb,
        )
    };
    info_returned(rc, cb);
}

/// What a connect or disconnect callback handed to the host answers
/// (the core's request id).
#[derive(Clone, Copy)]
enum ConnRequest {
    Connect(u64),
    Disconnect(u64),
}

impl ConnRequest {
    /// Answer the core with the host's status.
    fn answer(self, status: pmix_status_t) {
        post(move |s| {
            // an id the core no longer waits for is logged by the core
            let _ = match self {
                ConnRequest::Connect(r) => s.connect_done(r, status),
                ConnRequest::Disconnect(r) => s.disconnect_done(r, status),
            };
        })
    }
}

/// The host's connect or disconnect `f` (NULL: NOT_SUPPORTED, as libpmix
/// 4.2.2 answers) for request `req`: the participants and the infos the
/// core gives; its return PMIX_SUCCESS, its callback answers;
/// PMIX_OPERATION_SUCCEEDED, success at once; another status, that.
fn connect_upcall(f: Option<connect_fn>, req: ConnRequest, procs: &[Proc], info: Vec<Info>) {
    let Some(f) = f else { return req.answer(PMIX_ERR_NOT_SUPPORTED) };
    let cp = CArray::procs(procs);
    let ci = CArray::infos(info);
    let cb = req.into_cbdata();
    // SAFETY: the host's function, our arguments valid for the call
    let rc = unsafe { f(cp.p as *const pmix_proc_t, cp.n, ci.p as *const pmix_info_t, ci.n, Some(connect_answer), cb) };
    if rc != PMIX_SUCCESS {
        // SAFETY: made by into_cbdata; the host's callback will not come
        let req = unsafe { ConnRequest::take(cb) };
        req.answer(if rc == PMIX_OPERATION_SUCCEEDED { PMIX_SUCCESS } else { rc });
    }
}

/// The host's answer to a connect or disconnect (cbdata: a
/// [`ConnRequest`]).
unsafe extern "C" fn connect_answer(status: pmix_status_t, cbdata: *mut c_void) {
    guarded("connect callback", || {
        // SAFETY: the host hands back the cbdata the upcall gave it, once
        unsafe { ConnRequest::take(cbdata) }.answer(status)
    })
}

/// The host's answer to an iof_pull or push_stdin upcall (cbdata: a Box
/// of the core's request id).
unsafe extern "C" fn iof_answer(status: pmix_status_t, cbdata: *mut c_void) {
    guarded("iof callback", || {
        // SAFETY: made by upcall from a Box<u64>, handed back once
        let request = *unsafe { Box::from_raw(cbdata as *mut u64) };
        post(move |s| s.iof_done(request, status));
    })
}

/// After the host's iof_pull or push_stdin returned `rc`: SUCCESS, its
/// callback will come; PMIX_OPERATION_SUCCEEDED, done at once (what
/// libpmix 4.2.2's server needs of its host: spec-notes/capi.md); else
/// the requester gets `rc`.
fn iof_host_returned(rc: pmix_status_t, request: u64, cb: *mut c_void) {
    if rc != PMIX_SUCCESS {
        // SAFETY: made by the upcall; the host's callback will not come
        drop(unsafe { Box::from_raw(cb as *mut u64) });
        let st = if rc == PMIX_OPERATION_SUCCEEDED { PMIX_SUCCESS } else { rc };
        post(move |s| s.iof_done(request, st));
    }
}

/// What a publish, lookup or unpublish callback handed to the host
/// answers (the core's request id).
#[derive(Clone, Copy)]
enum PubRequest {
    Publish(u64),
    Lookup(u64),
    Unpublish(u64),
}

impl PubRequest {
    /// Answer the core with the host's status (and a lookup's data).
    fn answer(self, status: pmix_status_t, data: Vec<Pdata>) {
        post(move |s| {
            // an id the core no longer waits for is logged by the core
            let _ = match self {
                PubRequest::Publish(r) => s.publish_done(r, status),
                PubRequest::Lookup(r) => s.lookup_done(r, status, data),
                PubRequest::Unpublish(r) => s.unpublish_done(r, status),
            };
        })
    }
}

/// After the host's publish, lookup or unpublish returned `rc`: anything
/// but SUCCESS means its callback will not come, so the request `cb` is
/// answered here: PMIX_OPERATION_SUCCEEDED as SUCCESS (a lookup then
/// found nothing it could hand back: NOT_FOUND), an error as itself.
fn pub_declined(rc: pmix_status_t, cb: *mut c_void) {
    if rc == PMIX_SUCCESS {
        return;
    }
    // SAFETY: made by into_cbdata, not handed back by the host
    let req = unsafe { PubRequest::take(cb) };
    let st = match (rc, req) {
        (PMIX_OPERATION_SUCCEEDED, PubRequest::Lookup(_)) => PMIX_ERR_NOT_FOUND,
        (PMIX_OPERATION_SUCCEEDED, _) => PMIX_SUCCESS,
        (e, _) => e,
    };
    req.answer(st, Vec::new());
}

/// Run `f` with `keys` as the NULL-terminated `char **` the standard
/// hands the host (NULL for no keys, as libpmix passes them), freed after;
/// without memory the lookup or unpublish `req` fails with NOMEM.
fn with_keys(keys: &[String], req: PubRequest, f: impl FnOnce(*mut *mut c_char)) {
    let ks: Vec<PString> = keys.iter().map(|k| PString::from(k.as_str())).collect();
    match c_argv(&ks) {
        Ok(a) => {
            f(a);
            // SAFETY: made by c_argv above; the host copies what it keeps
            unsafe { free_argv(a) }
        }
        Err(e) => req.answer(e, Vec::new()),
    }
}

/// The host's answer to a publish or an unpublish (cbdata: a
/// [`PubRequest`]).
unsafe extern "C" fn pub_answer(status: pmix_status_t, cbdata: *mut c_void) {
    guarded("publish callback", || {
        // SAFETY: the host hands back the cbdata upcall gave it, once
        unsafe { PubRequest::take(cbdata) }.answer(status, Vec::new())
    })
}

/// The host's answer to a lookup (cbdata: a [`PubRequest`]): its data
/// copied before the callback returns (the host frees it then). Data that
/// does not read (a value of no type the library knows) fails the lookup
/// with the reading's error.
unsafe extern "C" fn lookup_answer(status: pmix_status_t, data: *mut pmix_pdata_t, ndata: usize, cbdata: *mut c_void) {
    guarded("lookup callback", || {
        // SAFETY: the host hands back the cbdata upcall gave it, once
        let req = unsafe { PubRequest::take(cbdata) };
        let found = match (status, data.is_null()) {
            (PMIX_SUCCESS, false) => (0..ndata)
                .map(|i| {
                    // SAFETY: the host hands `ndata` pdata at `data`
                    match unsafe { read_elem(DataType::Pdata, data.add(i) as *const u8) } {
                        Ok(Value::Pdata(d)) => Ok(*d),
                        Ok(_) => Err(PMIX_ERR_BAD_PARAM),
                        Err(e) => Err(e),
                    }
                })
                .collect::<Result<Vec<Pdata>, Status>>(),
            _ => Ok(Vec::new()),
        };
        match found {
            Ok(d) => req.answer(status, d),
            Err(e) => req.answer(e, Vec::new()),
        }
    })
}

/// The host's answer to a spawn (cbdata: a Box of its request id): the
/// new job's namespace, which the host registered before.
unsafe extern "C" fn spawn_answer(status: pmix_status_t, nspace: *mut c_char, cbdata: *mut c_void) {
    guarded("spawn callback", || {
        // SAFETY: made by upcall from a Box<u64>, handed back once
        let request = *unsafe { Box::from_raw(cbdata as *mut u64) };
        // SAFETY: NULL or the host's NUL-terminated namespace
        let ns = unsafe { read_str(nspace) }.map(|n| n.to_string_lossy().into_owned());
        let result = match (status, ns) {
            (PMIX_SUCCESS, Some(ns)) => Ok(ns),
            (PMIX_SUCCESS, None) => Err(PMIX_ERR_BAD_PARAM),
            (e, _) => Err(e),
        };
        post(move |s| s.spawned(request, result));
    })
}

/// A `pmix_info_cbfunc_t` for job control: the core answered the client.
unsafe extern "C" fn ignore_infos(
    _status: pmix_status_t,
    _info: *mut pmix_info_t,
    _ninfo: usize,
    _cbdata: *mut c_void,
    release: pmix_release_cbfunc_t,
    release_data: *mut c_void,
) {
    if let Some(r) = release {
        // SAFETY: the host's release function for its infos
        guarded("job_control callback", || unsafe { r(release_data) })
    }
}

fn job_control(m: &Module, requester: &Proc, targets: &[Proc], what: Info) {
    let Some(f) = m.job_control else { return };
    let c = c_proc(requester);
    let ct = CArray::procs(targets);
    let ci = CArray::infos(vec![what]);
    // SAFETY: the host's function, our arguments valid for the call
    unsafe {
        f(&c, ct.p as *const pmix_proc_t, ct.n, ci.p as *const pmix_info_t, ci.n, Some(ignore_infos), std::ptr::null_mut())
    };
}

/// Answer our own dmodex request for the local rank `p` with its data.
fn dmodex_reply(p: &Proc, cb: unsafe extern "C" fn(pmix_status_t, *mut c_char, usize, *mut c_void), cbdata: *mut c_void) {
    let (ns, rank) = (p.nspace.to_string(), p.rank);
    match call(move |s| s.modex_data(&ns, rank)) {
        Ok(Some(mut b)) => {
            let mut v = std::mem::take(&mut b).to_vec();
            // SAFETY: the host's callback; the bytes are ours until it returns
            unsafe { cb(PMIX_SUCCESS, v.as_mut_ptr() as *mut c_char, v.len(), cbdata) }
        }
        Ok(None) => unsafe { cb(PMIX_ERR_NOT_FOUND, std::ptr::null_mut(), 0, cbdata) },
        Err(e) => unsafe { cb(e, std::ptr::null_mut(), 0, cbdata) },
    }
}

/// Keys the core itself writes into every job's data (jobinfo.rs) and
/// the nested arrays it derives for itself: a host's copies are dropped.
const CORE_KEYS: &[&str] = &[
    "pmix.job.size", "pmix.max.size", "pmix.num.nodes", "pmix.jobid", "pmix.appnum", "pmix.nlist",
    "pmix.bfrops.mod", "pmix.pdata", "pmix.app.info", "pmix.node.info", "pmix.ssn.info", "pmix.ssn.arr",
    "pmix.lpeers", "pmix.pmap", "pmix.nmap", "pmix.univ.size", "pmix.local.size", "pmix.node.size",
    "pmix.hname", "pmix.nodeid", "pmix.job.info",
];

/// The text of a string or regex info value, without a `raw:` prefix
/// (the form our PMIx_generate_regex/ppn write).
fn map_text(v: &Value) -> Option<String> {
    let t = match v {
        Value::String(Some(s)) => s.to_string_lossy().into_owned(),
        Value::Regex(r) => match &**r {
            pmix_types::Regex::Text(t) => t.to_string_lossy().into_owned(),
            pmix_types::Regex::Packed(Some(t)) => t.to_string_lossy().into_owned(),
            pmix_types::Regex::Blob(b) => String::from_utf8_lossy(b).trim_end_matches('\0').to_string(),
            pmix_types::Regex::Packed(None) => return None,
        },
        _ => return None,
    };
    Some(t.strip_prefix("raw:").unwrap_or(&t).to_string())
}

/// The job's layout from the host's PMIX_NODE_MAP (node names, comma
/// separated) and PMIX_PROC_MAP (each node's ranks, comma separated,
/// nodes separated by `;`), in the plain or `raw:` form; this node is
/// the one PMIX_NODEID names, else the one named `me`. None when the
/// maps are missing, disagree or do not name this node (every rank is
/// then local). libpmix's compressed `pmix[…]` form is not read.
fn node_map(given: &[Info], me: &str) -> Option<pmix_wire::server::NodeMap> {
    let find = |k: &str| given.iter().find(|i| i.key.to_string() == k).and_then(|i| map_text(&i.value));
    let (nodes, procs) = (find("pmix.nmap")?, find("pmix.pmap")?);
    if nodes.starts_with("pmix") {
        return None;
    }
    let names: Vec<&str> = nodes.split(',').collect();
    let ranks: Vec<Vec<u32>> = procs
        .split(';')
        .map(|n| n.split(',').filter(|r| !r.is_empty()).map(|r| r.trim().parse().ok()).collect::<Option<Vec<u32>>>())
        .collect::<Option<_>>()?;
    if names.len() != ranks.len() {
        return None;
    }
    let id = given.iter().find(|i| i.key.to_string() == "pmix.nodeid").and_then(|i| uint_of(&i.value));
    let me = match id {
        Some(id) => usize::try_from(id).ok().filter(|&i| i < names.len())?,
        None => names.iter().position(|n| *n == me)?,
    };
    let nodes = names
        .into_iter()
        .zip(ranks)
        .map(|(n, mut r)| {
            r.sort_unstable();
            (n.to_string(), r)
        })
        .collect();
    Some(pmix_wire::server::NodeMap { nodes, me })
}

/// The server's own name: PMIX_SERVER_NSPACE and PMIX_SERVER_RANK of its
/// init's infos, else the net driver's (`pmixw-server`, our pid).
fn identity(given: &[Info]) -> Proc {
    let find = |k: &str| given.iter().find(|i| i.key.to_string() == k).map(|i| &i.value);
    let ns = match find("pmix.srv.nspace") {
        Some(Value::String(Some(s))) => s.to_string_lossy().into_owned(),
        _ => net::SERVER_NSPACE.to_string(),
    };
    let rank = find("pmix.srv.rank").and_then(uint_of).unwrap_or(std::process::id());
    Proc::at(&ns, rank.into())
}

/// The infos at `info` (NULL with a count: BAD_PARAM).
unsafe fn infos(info: *const pmix_info_t, n: usize) -> Result<Vec<Info>, Status> {
    if info.is_null() {
        return if n > 0 { Err(PMIX_ERR_BAD_PARAM) } else { Ok(Vec::new()) };
    }
    // SAFETY: the caller's contract
    unsafe { read_infos(info, n) }
}

fn uint_of(v: &Value) -> Option<u32> {
    match *v {
        Value::Uint32(n) => Some(n),
        Value::Uint64(n) => u32::try_from(n).ok(),
        Value::Uint16(n) => Some(n.into()),
        Value::Int(n) | Value::Int32(n) => u32::try_from(n).ok(),
        _ => None,
    }
}

/// Set `name=value` in the NULL-terminated malloc'd array at `*env`
/// (replacing the variable's entry, else appending one), as the
/// standard's setup_fork describes.
unsafe fn setenv_in(env: *mut *mut *mut c_char, name: &str, value: &str) -> Result<(), Status> {
    let entry = c_strdup(format!("{name}={value}").as_bytes())?;
    let prefix = format!("{name}=");
    // SAFETY: *env is NULL or a NULL-terminated array the host malloc'd
    unsafe {
        let mut n = 0usize;
        let arr = *env;
        if !arr.is_null() {
            while !(*arr.add(n)).is_null() {
                let s = std::ffi::CStr::from_ptr(*arr.add(n));
                if s.to_bytes().starts_with(prefix.as_bytes()) {
                    libc::free(*arr.add(n) as *mut c_void);
                    *arr.add(n) = entry;
                    return Ok(());
                }
                n += 1;
            }
        }
        let grown = libc::realloc(arr as *mut c_void, (n + 2) * std::mem::size_of::<*mut c_char>()) as *mut *mut c_char;
        if grown.is_null() {
            libc::free(entry as *mut c_void);
            return Err(PMIX_ERR_NOMEM);
        }
        *grown.add(n) = entry;
        *grown.add(n + 1) = std::ptr::null_mut();
        *env = grown;
    }
    Ok(())
}

exports! {
    /// `PMIx_server_init`: start the server (its listener and the
    /// rendezvous files tools look for, in PMIX_SERVER_TMPDIR or the
    /// temporary directory) and take the host's module.
    fn PMIx_server_init(module: *mut pmix_server_module_t, info: *mut pmix_info_t, ninfo: usize) -> pmix_status_t {
        let mut st = state();
        if st.is_some() {
            return PMIX_SUCCESS;
        }
        let given = match unsafe { infos(info, ninfo) } {
            Ok(v) => v,
            Err(e) => return e,
        };
        let m = if module.is_null() {
            Module::default()
        } else {
            // SAFETY: the host's module; the v1/v2 members, the v3
            // credentials, iof_pull and push_stdin and the v4 group are
            // read (libpmix 4.2.2 copies the whole struct)
            let h = unsafe { &*module };
            Module {
                connected: h.client_connected,
                finalized: h.client_finalized,
                abort: h.abort,
                fence_nb: h.fence_nb,
                direct_modex: h.direct_modex,
                notify_event: h.notify_event,
                log: h.log,
                job_control: h.job_control,
                spawn: h.spawn,
                iof_pull: h.iof_pull,
                push_stdin: h.push_stdin,
                publish: h.publish,
                lookup: h.lookup,
                unpublish: h.unpublish,
                connect: h.connect,
                disconnect: h.disconnect,
                query: h.query,
                register_events: h.register_events,
                allocate: h.allocate,
                monitor: h.monitor,
                tool_connected: h.tool_connected,
                get_credential: h.get_credential,
                validate_credential: h.validate_credential,
                group: h.group,
            }
        };
        let dir = given
            .iter()
            .find(|i| i.key.to_string() == "pmix.srvr.tmpdir")
            .and_then(|i| match &i.value {
                Value::String(Some(s)) => Some(std::path::PathBuf::from(s.to_string_lossy().into_owned())),
                _ => None,
            })
            .unwrap_or_else(std::env::temp_dir);
        // the ds21 store libpmix's server offers its 4.2.x clients, unless
        // the host's PMIX_MCA_gds leaves ds21 out (server_store.rs)
        let gds = crate::server_store::Gds::from_env();
        let opts = net::Options { rendezvous: Some(dir), ..net::Options::default() };
        let mut running = match net::start_opts(Vec::new(), opts) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("pmix-capi: PMIx_server_init: cannot start the server: {e}");
                return PMIX_ERR_INIT;
            }
        };
        // IO forwarding as libpmix's server: pulls and stdin go to the
        // host's iof_pull and push_stdin, NOT_SUPPORTED without them
        let mode = |set: bool| if set { IofMode::AskHost } else { IofMode::NotSupported };
        let (pull, stdin) = (mode(m.iof_pull.is_some()), mode(m.push_stdin.is_some()));
        running.post(move |s| {
            s.set_iof_pull(pull);
            s.set_iof_stdin(stdin);
        });
        let publishing = m.publishing();
        running.post(move |s| s.set_publishing(publishing));
        if let Some(d) = crate::server_store::dstore_dir(&given, gds) {
            crate::server_store::install(&running, &d, crate::server_store::owner(&given));
        }
        // a connect or disconnect spanning nodes goes to the host's
        // member (NULL: NOT_SUPPORTED, as libpmix 4.2.2 answers); one of
        // this node's ranks alone the core completes, as libpmix does
        running.post(|s| s.set_connecting(Connecting::Host));
        // a query the core cannot answer in full goes to the host's query
        // (without one, the core's answer stands)
        // a registration for an environmental event goes to the host's
        // register_events (NULL: NOT_SUPPORTED, as libpmix 4.2.2 answers)
        running.post(|s| s.set_registering(Registering::Host));
        // allocations and the monitors the core does not run go to the
        // host's allocate and monitor (NULL: NOT_SUPPORTED, as libpmix)
        let (alloc, monitor) = (m.allocate.is_some(), m.monitor.is_some());
        running.post(move |s| {
            s.set_host_allocates(alloc);
            s.set_host_monitors(monitor);
        });
        // tools are accepted and named by the host's tool_connected
        // (without one, by the core)
        if m.tool_connected.is_some() {
            running.post(|s| s.set_tool_connections(ToolConnections::Host));
        }
        if m.query.is_some() {
            running.post(|s| s.set_querying(Querying::Host));
        }
        // group constructs asking for a context id or spanning nodes, and
        // every destruct, go to the host's group (without one, the core
        // completes them: libpmix 4.2.2 answers NOT_SUPPORTED)
        if m.group.is_some() {
            running.post(|s| s.set_grouping(Grouping::Host));
        }
        // PMIx_Get_credential and PMIx_Validate_credential go to the
        // host's members (without them, the core's native module answers:
        // libpmix 4.2.2 answers NOT_SUPPORTED)
        let (cred, valid) = (m.get_credential.is_some(), m.validate_credential.is_some());
        running.post(move |s| {
            s.set_host_credentials(cred);
            s.set_host_validates(valid);
        });
        let (_tx, dead) = std::sync::mpsc::channel();
        let events = std::mem::replace(&mut running.events, dead);
        let upcalls = std::thread::Builder::new()
            .name("pmix-capi upcalls".into())
            .spawn(move || upcalls(m, events))
            .ok();
        *st = Some(State { running, upcalls, clients: Vec::new(), dmodex: Vec::new(), gds });
        RUNNING.store(true, std::sync::atomic::Ordering::Release);
        crate::client::init_as_server(identity(&given));
        PMIX_SUCCESS
    }

    /// `PMIx_server_finalize`: stop serving (open connections close; the
    /// shared store's directory is removed with the loop) and wait for the
    /// upcall thread to end.
    fn PMIx_server_finalize() -> pmix_status_t {
        let Some(s) = state().take() else { return PMIX_ERR_INIT };
        RUNNING.store(false, std::sync::atomic::Ordering::Release);
        envs().clear();
        crate::client::finalize_as_server();
        s.running.stop();
        if let Some(t) = s.upcalls {
            if t.thread().id() != std::thread::current().id() {
                let _ = t.join();
            }
        }
        PMIX_SUCCESS
    }

    /// `PMIx_server_register_nspace`: the job's size is its PMIX_JOB_SIZE
    /// (else `nlocalprocs`), every rank on this node; the host's other
    /// job-level infos go to every rank, but for those the library writes
    /// itself.
    fn PMIx_server_register_nspace(nspace: *const c_char, nlocalprocs: c_int, info: *mut pmix_info_t, ninfo: usize, cbfunc: pmix_op_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t {
        let Some(ns) = (unsafe { read_str(nspace) }) else { return PMIX_ERR_BAD_PARAM };
        let given = match unsafe { infos(info, ninfo) } {
            Ok(v) => v,
            Err(e) => return e,
        };
        let size = given.iter().find(|i| i.key.to_string() == "pmix.job.size").and_then(|i| uint_of(&i.value));
        let Some(nprocs) = size.or_else(|| u32::try_from(nlocalprocs).ok()) else { return PMIX_ERR_BAD_PARAM };
        let named = given.iter().find(|i| i.key.to_string() == "pmix.hname").and_then(|i| match &i.value {
            Value::String(Some(s)) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        });
        let layout = node_map(&given, named.as_deref().unwrap_or(&net::hostname()));
        // this node's name: the host's PMIX_HOSTNAME, else its node map's
        // (Slurm gives only the latter, with PMIX_NODEID), else ours
        let hostname = named
            .or_else(|| layout.as_ref().map(|m| m.nodes[m.me].0.clone()))
            .unwrap_or_else(net::hostname);
        let layout = layout.filter(|m| m.nodes.len() > 1);
        let info = given.into_iter().filter(|i| !CORE_KEYS.contains(&i.key.to_string().as_str())).collect();
        let name = ns.to_string_lossy().into_owned();
        let spec = JobSpec { nspace: name.clone(), nprocs, hostname, info };
        let (uri, gds) = match with(|s| Ok((s.running.uri().to_string(), s.gds))) {
            Ok(u) => u,
            Err(e) => return e,
        };
        let registered = call(move |s| {
            let ns = spec.nspace.clone();
            s.register_nspace(spec);
            if let Some(map) = layout {
                s.set_nodes(&ns, map);
            }
            s.client_env(&ns, 0u32, &uri)
        });
        match registered {
            Ok(env) => {
                let env = crate::server_store::client_env(env, gds);
                let mut all = envs();
                all.retain(|(n, _, _)| *n != name);
                all.push((name, nprocs, env));
                drop(all);
                complete("register_nspace", cbfunc, cbdata, PMIX_SUCCESS);
                PMIX_SUCCESS
            }
            Err(e) => e,
        }
    }

    /// `PMIx_server_deregister_nspace`: its ranks' `server_object`s are
    /// forgotten, the core forgets the job and the shared store removes
    /// its files (all of the store with the last namespace), before the
    /// callback.
    fn PMIx_server_deregister_nspace(nspace: *const c_char, cbfunc: pmix_op_cbfunc_t, cbdata: *mut c_void) {
        let ns = unsafe { read_str(nspace) }.map(|s| s.to_string_lossy().into_owned());
        let _ = with(|s| {
            s.clients.retain(|c| Some(c.proc.nspace.to_string()) != ns);
            Ok(())
        });
        envs().retain(|(n, _, _)| Some(n) != ns.as_ref());
        // the core forgets the job too (a host's library outlives its jobs),
        // and the shared store its files, before the callback (the host may
        // look for them gone, as libpmix has removed them by then)
        if let Some(n) = ns {
            let _ = call(move |srv| {
                srv.shared_remove(&n);
                srv.deregister_nspace(&n)
            });
        }
        complete("deregister_nspace", cbfunc, cbdata, PMIX_SUCCESS);
    }

    /// `PMIx_server_register_client`: keep the rank's `server_object` for
    /// its upcalls (the uid and gid are not checked: the net driver checks
    /// the connecting process through /proc).
    fn PMIx_server_register_client(proc: *const pmix_proc_t, uid: libc::uid_t, gid: libc::gid_t, server_object: *mut c_void, cbfunc: pmix_op_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t {
        let _ = (uid, gid);
        if proc.is_null() {
            return PMIX_ERR_BAD_PARAM;
        }
        let p = unsafe { read_proc(proc) };
        match with(|s| {
            s.clients.retain(|c| c.proc != p);
            s.clients.push(Registered { proc: p, object: server_object as usize });
            Ok(())
        }) {
            Ok(()) => {
                complete("register_client", cbfunc, cbdata, PMIX_SUCCESS);
                PMIX_SUCCESS
            }
            Err(e) => e,
        }
    }

    /// `PMIx_server_deregister_client`.
    fn PMIx_server_deregister_client(proc: *const pmix_proc_t, cbfunc: pmix_op_cbfunc_t, cbdata: *mut c_void) {
        if !proc.is_null() {
            let p = unsafe { read_proc(proc) };
            let _ = with(|s| {
                s.clients.retain(|c| c.proc != p);
                Ok(())
            });
        }
        complete("deregister_client", cbfunc, cbdata, PMIX_SUCCESS);
    }

    /// `PMIx_server_setup_fork`: the rank's environment (its namespace
    /// and rank, the server's URI under every PMIX_SERVER_URI* name, the
    /// modules to use) set in `*env`.
    fn PMIx_server_setup_fork(proc: *const pmix_proc_t, env: *mut *mut *mut c_char) -> pmix_status_t {
        if proc.is_null() || env.is_null() {
            return PMIX_ERR_BAD_PARAM;
        }
        let p = unsafe { read_proc(proc) };
        let ns = p.nspace.to_string();
        // no call to the loop nor STATE's lock: this may run in a forked
        // child (see ENVS)
        if !RUNNING.load(std::sync::atomic::Ordering::Acquire) {
            return PMIX_ERR_INIT;
        }
        let Some(mut vars) = envs().iter().find(|(n, _, _)| *n == ns).map(|(_, _, e)| e.clone()) else {
            return PMIX_ERR_NOT_FOUND;
        };
        for (k, v) in vars.iter_mut() {
            if k == "PMIX_RANK" {
                *v = pmix_types::Rank::from(p.rank).wire().to_string();
            }
        }
        for (k, v) in vars {
            if let Err(e) = unsafe { setenv_in(env, &k, &v) } {
                return e;
            }
        }
        PMIX_SUCCESS
    }

    /// `PMIx_server_dmodex_request`: a local rank's committed data, at
    /// once or when it commits.
    fn PMIx_server_dmodex_request(proc: *const pmix_proc_t, cbfunc: pmix_dmodex_response_fn_t, cbdata: *mut c_void) -> pmix_status_t {
        let (Some(cb), false) = (cbfunc, proc.is_null()) else { return PMIX_ERR_BAD_PARAM };
        let p = unsafe { read_proc(proc) };
        let (ns, rank) = (p.nspace.to_string(), p.rank);
        match call(move |s| s.modex_data(&ns, rank)) {
            Ok(Some(_)) => on_thread("dmodex_request callback", cbdata, move |d| dmodex_reply(&p, cb, d)),
            Ok(None) => match with(|s| {
                s.dmodex.push((p, cb, cbdata as usize));
                Ok(())
            }) {
                Ok(()) => PMIX_SUCCESS,
                Err(e) => e,
            },
            Err(e) => e,
        }
    }

    /// `PMIx_server_setup_application`: no network or launcher data to
    /// add: the callback gets no infos.
    fn PMIx_server_setup_application(nspace: *const c_char, info: *mut pmix_info_t, ninfo: usize, cbfunc: pmix_setup_application_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t {
        let _ = (info, ninfo);
        if unsafe { read_str(nspace) }.is_none() {
            return PMIX_ERR_BAD_PARAM;
        }
        let Some(cb) = cbfunc else { return PMIX_ERR_BAD_PARAM };
        // SAFETY: the host's callback; nothing to release
        on_thread("setup_application callback", cbdata, move |d| unsafe {
            cb(PMIX_SUCCESS, std::ptr::null_mut(), 0, d, None, std::ptr::null_mut())
        })
    }

    /// `PMIx_server_setup_local_support`: nothing to prepare locally.
    fn PMIx_server_setup_local_support(nspace: *const c_char, info: *mut pmix_info_t, ninfo: usize, cbfunc: pmix_op_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t {
        let _ = (info, ninfo);
        if unsafe { read_str(nspace) }.is_none() {
            return PMIX_ERR_BAD_PARAM;
        }
        complete("setup_local_support", cbfunc, cbdata, PMIX_SUCCESS);
        PMIX_SUCCESS
    }

    /// `PMIx_server_IOF_deliver`: `source`'s output on `channel` to every
    /// tool or client whose pull it matches, else kept for a later pull
    /// (the core's iof_deliver). With a callback: PMIX_SUCCESS, then the
    /// callback with the delivery's status (PMIX_ERR_BAD_PARAM for stdin);
    /// without one, as libpmix 4.2.2: PMIX_OPERATION_SUCCEEDED once done,
    /// or the error. Nothing is written to this process's own stdout or
    /// stderr (libpmix's PMIX_IOF_LOCAL_OUTPUT: spec-notes/capi.md).
    fn PMIx_server_IOF_deliver(source: *const pmix_proc_t, channel: u16, bo: *const pmix_byte_object_t, info: *const pmix_info_t, ninfo: usize, cbfunc: pmix_op_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t {
        if source.is_null() || bo.is_null() {
            return PMIX_ERR_BAD_PARAM;
        }
        let src = unsafe { read_proc(source) };
        // SAFETY: the host's byte object
        let b = unsafe { &*bo };
        let data = bytes::Bytes::from(copy_bytes(b.bytes, b.size));
        let given = match unsafe { infos(info, ninfo) } {
            Ok(v) => v,
            Err(e) => return e,
        };
        let st = match call(move |s| s.iof_deliver(&src, channel, data, given)) {
            Ok(st) => st,
            Err(e) => return e,
        };
        if cbfunc.is_none() {
            return if st == PMIX_SUCCESS { PMIX_OPERATION_SUCCEEDED } else { st };
        }
        complete("IOF_deliver", cbfunc, cbdata, st);
        PMIX_SUCCESS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(k: &str, v: &str) -> Info {
        Info::new(k, Value::String(Some(v.into())))
    }

    #[test]
    fn the_node_map_is_read_from_slurms_infos() {
        // what Slurm 22.05's slurmstepd of the second node registers
        // (its maps made by our PMIx_generate_regex/ppn)
        let given = vec![
            Info::new("pmix.nodeid", Value::Uint32(1)),
            s("pmix.nmap", "raw:n1,n2"),
            s("pmix.pmap", "raw:0,1,2;3"),
        ];
        let m = node_map(&given, "elsewhere").expect("a layout");
        assert_eq!(m.nodes, vec![("n1".to_string(), vec![0, 1, 2]), ("n2".to_string(), vec![3])]);
        assert_eq!(m.me, 1);
        // without PMIX_NODEID, by this node's name; plain lists too
        let given = vec![s("pmix.nmap", "a,b"), s("pmix.pmap", "1,0;2")];
        let m = node_map(&given, "a").expect("a layout");
        assert_eq!((m.me, m.nodes[0].1.clone()), (0, vec![0, 1]));
        // maps that disagree, a node id out of range, a bad rank, libpmix's
        // compressed form, a name not in the map: no layout
        for bad in [
            vec![s("pmix.nmap", "a,b"), s("pmix.pmap", "0")],
            vec![Info::new("pmix.nodeid", Value::Uint32(2)), s("pmix.nmap", "a,b"), s("pmix.pmap", "0;1")],
            vec![s("pmix.nmap", "a,b"), s("pmix.pmap", "0;x")],
            vec![s("pmix.nmap", "pmix[a]"), s("pmix.pmap", "pmix[0]")],
            vec![s("pmix.nmap", "b,c"), s("pmix.pmap", "0;1")],
        ] {
            assert_eq!(node_map(&bad, "a"), None, "{bad:?}");
        }
    }

    #[test]
    fn a_whole_namespace_goes_to_the_host_as_its_wildcard() {
        envs().push(("wc.test".into(), 3, Vec::new()));
        let all: Vec<Proc> = (0..3).map(|r| Proc::at("wc.test", r.into())).collect();
        assert_eq!(wildcarded(all.clone()), vec![Proc::at("wc.test", pmix_types::Rank::WILDCARD)]);
        // a part of it, or an unknown namespace, as given
        assert_eq!(wildcarded(all[..2].to_vec()), all[..2].to_vec());
        let other = vec![Proc::at("wc.other", 0u32.into())];
        assert_eq!(wildcarded(other.clone()), other);
        envs().retain(|(n, _, _)| n != "wc.test");
    }
}
