//! Event handlers (`PMIx_Register_event_handler`, `PMIx_Deregister_event_handler`,
//! `PMIx_Notify_event`). The handlers live in a table; registering tells
//! the server which codes to forward, and the first registration starts
//! one delivery thread that waits for notices in short turns of the
//! client's lock (so other calls interleave) and calls each matching
//! handler in registration order, as the standard's chain does. The
//! same thread hands forwarded IO to the pulls' callbacks (iof.rs).
#![allow(non_camel_case_types)]

use crate::abi::*;
use crate::client::{cerr, status, try_client, with_client};
use crate::conv::*;
use crate::guard::{exports, guarded};
use crate::services::{c_array_of, free_c_array, pmix_op_cbfunc_t};
use pmix_types::enums::DataRange;
use pmix_types::status::codes::*;
use pmix_types::DataType;
use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};
use pmix_types::{Info, Proc};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// `pmix_event_notification_cbfunc_fn_t`: what a handler calls when done.
pub type pmix_event_notification_cbfunc_fn_t = Option<
    unsafe extern "C" fn(
        status: pmix_status_t,
        results: *mut pmix_info_t,
        nresults: usize,
        cbfunc: pmix_op_cbfunc_t,
        thiscbdata: *mut c_void,
        notification_cbdata: *mut c_void,
    ),
>;
/// `pmix_notification_fn_t`: an event handler.
pub type pmix_notification_fn_t = Option<
    unsafe extern "C" fn(
        evhdlr_registration_id: usize,
        status: pmix_status_t,
        source: *const pmix_proc_t,
        info: *mut pmix_info_t,
        ninfo: usize,
        results: *mut pmix_info_t,
        nresults: usize,
        cbfunc: pmix_event_notification_cbfunc_fn_t,
        cbdata: *mut c_void,
    ),
>;
/// `pmix_hdlr_reg_cbfunc_t`: the registration's answer.
pub type pmix_hdlr_reg_cbfunc_t =
    Option<unsafe extern "C" fn(status: pmix_status_t, refid: usize, cbdata: *mut c_void)>;

/// A C handler's function.
type CHandler = unsafe extern "C" fn(
    usize,
    pmix_status_t,
    *const pmix_proc_t,
    *mut pmix_info_t,
    usize,
    *mut pmix_info_t,
    usize,
    pmix_event_notification_cbfunc_fn_t,
    *mut c_void,
);

/// A handler of this library's own (a group invitation's leader counting
/// its answers): the notice's code, source and infos.
pub(crate) type Hook = Arc<dyn Fn(i32, &Proc, &[Info]) + Send + Sync>;

#[derive(Clone)]
enum Call {
    C(CHandler),
    Ours(Hook),
}

struct Handler {
    id: usize,
    /// The codes it hears; empty: every code.
    codes: Vec<i32>,
    f: Call,
    /// PMIX_EVENT_HDLR_NAME and PMIX_EVENT_RETURN_OBJECT as registered:
    /// given back after the notice's infos at each call, as libpmix does.
    name: Option<Info>,
    object: Option<usize>,
}
// SAFETY: a C function pointer, callable from any thread (the standard
// lets handlers run on the library's own thread), or a Send + Sync closure
unsafe impl Send for Handler {}

struct Table {
    next: usize,
    handlers: Vec<Handler>,
}

static TABLE: Mutex<Table> = Mutex::new(Table {
    next: 0,
    handlers: Vec::new(),
});
static DELIVERING: AtomicBool = AtomicBool::new(false);

fn table() -> std::sync::MutexGuard<'static, Table> {
    TABLE.lock().unwrap_or_else(|p| p.into_inner())
}

/// How long the delivery thread holds the client's lock waiting for a
/// notice before letting other calls in.
const TURN: Duration = Duration::from_millis(20);

/// What a handler calls when it is done: hand the op callback its status.
unsafe extern "C" fn handler_done(
    _status: pmix_status_t,
    _results: *mut pmix_info_t,
    _nresults: usize,
    cbfunc: pmix_op_cbfunc_t,
    thiscbdata: *mut c_void,
    _notification_cbdata: *mut c_void,
) {
    guarded("event handler completion", || {
        if let Some(cb) = cbfunc {
            // SAFETY: the handler's own callback and data
            unsafe { cb(PMIX_SUCCESS, thiscbdata) }
        }
    })
}

/// Start the delivery thread once (the first event handler or IOF pull).
pub(crate) fn start_delivery() {
    if DELIVERING.swap(true, Ordering::SeqCst) {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("pmix-capi events".into())
        .spawn(|| guarded("event delivery", deliver_forever));
    if spawned.is_err() {
        DELIVERING.store(false, Ordering::SeqCst);
    }
}

fn deliver_forever() {
    loop {
        // None: not connected (finalized, or a singleton): stop
        // a turn: a notice, and the IOF output that came meanwhile
        let Some(got) = try_client(|c| Ok((c.next_event(&[], TURN).ok(), c.take_outputs()))) else {
            DELIVERING.store(false, Ordering::SeqCst);
            return;
        };
        let got = got.map(|(n, outputs)| {
            crate::iof::dispatch(outputs);
            n
        });
        let Ok(Some(n)) = got else {
            // let a waiting call take the lock before the next turn
            std::thread::sleep(Duration::from_millis(1));
            continue;
        };
        // PMIX_EVENT_NON_DEFAULT: not for the default handlers (those of
        // no codes), as the standard and libpmix 4.2.2 have it (pmixw's
        // and prterun's PMIX_EVENT_JOB_END of a spawned job is one)
        let nondefault = n.info.iter().any(|i| {
            i.key.as_pstring().as_bytes() == b"pmix.evnondef"
                && !matches!(i.value, pmix_types::Value::Bool(false))
        });
        let chain: Vec<(usize, Call, Option<Info>, Option<usize>)> = table()
            .handlers
            .iter()
            .filter(|h| (h.codes.is_empty() && !nondefault) || h.codes.contains(&n.status))
            .map(|h| (h.id, h.f.clone(), h.name.clone(), h.object))
            .collect();
        let mut src: pmix_proc_t = pmix_proc_t {
            nspace: [0; PMIX_MAX_NSLEN + 1],
            rank: n.source.rank,
        };
        write_fixed(&mut src.nspace, n.source.nspace.as_bytes());
        for (id, f, name, object) in chain {
            let f = match f {
                Call::C(f) => f,
                Call::Ours(hook) => {
                    hook(n.status, &n.source, &n.info);
                    continue;
                }
            };
            let mut all: Vec<pmix_types::Value> =
                n.info.iter().cloned().map(|i| pmix_types::Value::Info(Box::new(i))).collect();
            all.extend(name.map(|i| pmix_types::Value::Info(Box::new(i))));
            if object.is_some() {
                let obj = Info::new("pmix.evobject", pmix_types::Value::Pointer);
                all.push(pmix_types::Value::Info(Box::new(obj)));
            }
            let (_, info, ninfo) = c_array_of(DataType::Info, Ok(all));
            if let (Some(obj), false) = (object, info.is_null()) {
                // the pointer does not travel in a Value: set it in place
                // SAFETY: `ninfo` infos made by c_array_of, the last the object's
                unsafe { (*(info as *mut pmix_info_t).add(ninfo - 1)).value.data.ptr = obj as *mut c_void };
            }
            // SAFETY: the registered handler, given the notice's data,
            // which lives until it returned
            unsafe {
                f(
                    id,
                    n.status,
                    &src,
                    info as *mut pmix_info_t,
                    ninfo,
                    ptr::null_mut(),
                    0,
                    Some(handler_done),
                    ptr::null_mut(),
                )
            };
            // SAFETY: made by c_array_of
            unsafe { free_c_array(DataType::Info, info, ninfo) };
        }
    }
}

/// The PMIX_EVENT_RETURN_OBJECT pointer among `n` infos at `info` (the
/// address itself, which a Value does not keep).
///
/// # Safety
/// `info` is NULL or holds `n` infos.
unsafe fn return_object(info: *const pmix_info_t, n: usize) -> Option<usize> {
    if info.is_null() {
        return None;
    }
    // SAFETY: the caller's contract
    let all = unsafe { std::slice::from_raw_parts(info, n) };
    all.iter()
        .find(|i| read_key(&i.key).as_bytes() == b"pmix.evobject" && i.value.r#type == DataType::Pointer as u16)
        // SAFETY: a POINTER value holds `ptr`
        .map(|i| unsafe { i.value.data.ptr } as usize)
}

/// Tell the server to forward `codes`, add `f` to the table and start
/// delivering: the handler's reference.
fn register(codes: Vec<i32>, info: &[Info], f: Call, object: Option<usize>) -> Result<usize, Status> {
    // the server forwards the codes; without one (a singleton) the
    // handler hears this process's own notifications only
    match with_client(|c, _| c.register_events(&codes, info).map_err(cerr)) {
        Ok(()) | Err(PMIX_ERR_UNREACH) => {}
        Err(e) => return Err(e),
    }
    let id = {
        let mut t = table();
        let id = t.next;
        t.next += 1;
        let name = info.iter().find(|i| i.key.as_bytes() == b"pmix.evname").cloned();
        t.handlers.push(Handler { id, codes, f, name, object });
        id
    };
    start_delivery();
    Ok(id)
}

/// Register one of this library's own handlers for `codes`: its reference.
pub(crate) fn register_hook(codes: &[i32], hook: Hook) -> Result<usize, Status> {
    register(codes.to_vec(), &[], Call::Ours(hook), None)
}

/// Forget the handler `id` (false if there was none).
pub(crate) fn deregister(id: usize) -> bool {
    let mut t = table();
    let before = t.handlers.len();
    t.handlers.retain(|h| h.id != id);
    t.handlers.len() < before
}

exports! {
    /// `PMIx_Register_event_handler`: call `evhdlr` for events of `codes` (all if none); the reference goes to `cbfunc`, or is returned if `cbfunc` is NULL.
    fn PMIx_Register_event_handler(
        codes: *mut pmix_status_t,
        ncodes: usize,
        info: *mut pmix_info_t,
        ninfo: usize,
        evhdlr: pmix_notification_fn_t,
        cbfunc: pmix_hdlr_reg_cbfunc_t,
        cbdata: *mut c_void
    ) -> pmix_status_t {
        let r = (|| {
            let f = evhdlr.ok_or(PMIX_ERR_BAD_PARAM)?;
            if (codes.is_null() && ncodes > 0) || (info.is_null() && ninfo > 0) {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            let cs: Vec<i32> = if codes.is_null() {
                Vec::new()
            } else {
                // SAFETY: ncodes codes
                unsafe { std::slice::from_raw_parts(codes, ncodes) }.to_vec()
            };
            // SAFETY: ninfo infos
            let is = unsafe { read_infos(info, ninfo) }?;
            // SAFETY: ninfo infos (checked above)
            let object = unsafe { return_object(info, ninfo) };
            register(cs, &is, Call::C(f), object)
        })();
        match (cbfunc, r) {
            (None, Ok(id)) => i32::try_from(id).unwrap_or(PMIX_ERROR),
            (None, Err(e)) => e,
            (Some(cb), r) => {
                let (rc, id) = match r {
                    Ok(id) => (PMIX_SUCCESS, id),
                    Err(e) => (e, 0),
                };
                // SAFETY: the caller's callback with its own data
                unsafe { cb(rc, id, cbdata) };
                PMIX_SUCCESS
            }
        }
    }

    /// `PMIx_Deregister_event_handler`: forget the handler `evhdlr_ref`.
    fn PMIx_Deregister_event_handler(evhdlr_ref: usize, cbfunc: pmix_op_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t {
        // an unknown reference is SUCCESS too, as libpmix 4.2.2 answers
        // (OpenPMIx's fault.c example deregisters one it never had)
        deregister(evhdlr_ref);
        let rc = PMIX_SUCCESS;
        match cbfunc {
            Some(cb) => {
                // SAFETY: the caller's callback with its own data
                unsafe { cb(rc, cbdata) };
                PMIX_SUCCESS
            }
            None => rc,
        }
    }

    /// `PMIx_Notify_event`: report event `status` to the processes in `range`; `cbfunc` gets the answer.
    fn PMIx_Notify_event(
        status_code: pmix_status_t,
        _source: *const pmix_proc_t,
        range: u8,
        info: *mut pmix_info_t,
        ninfo: usize,
        cbfunc: pmix_op_cbfunc_t,
        cbdata: *mut c_void
    ) -> pmix_status_t {
        let rc = status((|| {
            if info.is_null() && ninfo > 0 {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            // SAFETY: ninfo infos
            let is = unsafe { read_infos(info, ninfo) }?;
            with_client(|c, _| c.notify(status_code, DataRange::from_wire(range), &is).map_err(cerr))
        })());
        match cbfunc {
            Some(cb) => {
                // SAFETY: the caller's callback with its own data
                unsafe { cb(rc, cbdata) };
                PMIX_SUCCESS
            }
            None => rc,
        }
    }
}
