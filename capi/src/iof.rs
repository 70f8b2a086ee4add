//! IO forwarding for clients and tools (`PMIx_IOF_pull`,
//! `PMIx_IOF_deregister`, `PMIx_IOF_push`). A pull's output comes on tag 2
//! while the client waits for anything; the event delivery thread
//! (events.rs, started by the first pull as by the first event handler)
//! takes it each turn and calls the pull's `pmix_iof_cbfunc_t`, on the
//! library's thread as libpmix calls it on its progress thread. A pull
//! without a callback writes the output to this process's stdout (the
//! stdout channel) or stderr (the others), as libpmix does with its
//! default (untagged) format.
#![allow(non_camel_case_types)]

use crate::abi::*;
use crate::client::{cerr, read_procs, with_client};
use crate::conv::*;
use crate::events::pmix_hdlr_reg_cbfunc_t;
use crate::guard::exports;
use crate::services::{c_array_of, free_c_array, pmix_op_cbfunc_t};
use pmix_codec::msg::IofData;
use pmix_types::names::iof_channel;
use pmix_types::status::codes::*;
use pmix_types::{DataType, Value};
use std::ffi::c_void;
use std::sync::Mutex;

/// `pmix_iof_cbfunc_t`: one delivery of forwarded output.
pub type pmix_iof_cbfunc_t = Option<
    unsafe extern "C" fn(
        iofhdlr: usize,
        channel: u16,
        source: *mut pmix_proc_t,
        payload: *mut pmix_byte_object_t,
        info: *mut pmix_info_t,
        ninfo: usize,
    ),
>;

/// One pull of ours: our id (what every delivery carries, and what
/// PMIx_IOF_deregister is given), the server's, the callback.
struct Pull {
    local: usize,
    remote: u64,
    cbfunc: pmix_iof_cbfunc_t,
}

struct Pulls {
    /// Our next id: from 1, as libpmix 4.2.2's first pull
    /// (corpus/captures-4.2.2/tool-iof.client).
    next: usize,
    list: Vec<Pull>,
}

static PULLS: Mutex<Pulls> = Mutex::new(Pulls { next: 1, list: Vec::new() });

fn pulls() -> std::sync::MutexGuard<'static, Pulls> {
    PULLS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Hand each delivery to its pull's callback (called by the delivery
/// thread, holding no lock of ours).
pub(crate) fn dispatch(outputs: Vec<IofData>) {
    for d in outputs {
        let Ok(local) = usize::try_from(d.refid) else { continue };
        let found = pulls().list.iter().find(|p| p.local == local).map(|p| p.cbfunc);
        match found {
            Some(Some(f)) => call(f, local, &d),
            // no callback: this process's own stdout or stderr
            Some(None) => write_out(&d),
            // deregistered meanwhile, or not ours: dropped
            None => {}
        }
    }
}

fn write_out(d: &IofData) {
    use std::io::Write;
    if d.data.is_empty() {
        return;
    }
    let _ = if d.channel & iof_channel::STDOUT != 0 {
        std::io::stdout().write_all(&d.data).and_then(|_| std::io::stdout().flush())
    } else {
        std::io::stderr().write_all(&d.data)
    };
}

fn call(f: unsafe extern "C" fn(usize, u16, *mut pmix_proc_t, *mut pmix_byte_object_t, *mut pmix_info_t, usize), local: usize, d: &IofData) {
    let mut src = pmix_proc_t { nspace: [0; PMIX_MAX_NSLEN + 1], rank: d.source.rank };
    write_fixed(&mut src.nspace, d.source.nspace.as_bytes());
    let mut bytes = d.data.to_vec();
    let mut bo = pmix_byte_object_t { bytes: bytes.as_mut_ptr() as *mut std::ffi::c_char, size: bytes.len() };
    let values = d.info.iter().cloned().map(|i| Value::Info(Box::new(i))).collect();
    let (_, info, ninfo) = c_array_of(DataType::Info, Ok(values));
    // SAFETY: the caller's callback; everything it is given lives until it returns
    unsafe { f(local, d.channel, &mut src, &mut bo, info as *mut pmix_info_t, ninfo) };
    // SAFETY: made by c_array_of
    unsafe { free_c_array(DataType::Info, info, ninfo) };
}

exports! {
    /// `PMIx_IOF_pull`: the output of `procs` on `channel` goes to
    /// `cbfunc` (NULL: this process's stdout and stderr). The handler's id
    /// goes to `regcbfunc`, or, without one, is returned (as libpmix 4.2.2
    /// returns it); stdin cannot be pulled (PMIX_ERR_NOT_SUPPORTED).
    fn PMIx_IOF_pull(procs: *const pmix_proc_t, nprocs: usize, directives: *const pmix_info_t, ndirs: usize, channel: u16, cbfunc: pmix_iof_cbfunc_t, regcbfunc: pmix_hdlr_reg_cbfunc_t, regcbdata: *mut c_void) -> pmix_status_t {
        if channel & iof_channel::STDIN != 0 {
            return PMIX_ERR_NOT_SUPPORTED;
        }
        if (procs.is_null() && nprocs > 0) || (directives.is_null() && ndirs > 0) {
            return PMIX_ERR_BAD_PARAM;
        }
        // SAFETY: nprocs procs, ndirs infos
        let ps = unsafe { read_procs(procs, nprocs) };
        let ds = match unsafe { read_infos(directives, ndirs) } {
            Ok(v) => v,
            Err(e) => return e,
        };
        // our id first: a delivery may come before the reply is read
        let local = {
            let mut p = pulls();
            let id = p.next;
            p.next += 1;
            p.list.push(Pull { local: id, remote: u64::MAX, cbfunc });
            id
        };
        let r = with_client(|c, _| c.iof_pull(&ps, &ds, channel, local as u64).map_err(cerr));
        match &r {
            Ok(remote) => {
                if let Some(p) = pulls().list.iter_mut().find(|p| p.local == local) {
                    p.remote = *remote;
                }
                crate::events::start_delivery();
            }
            Err(_) => pulls().list.retain(|p| p.local != local),
        }
        match (regcbfunc, r) {
            (Some(cb), r) => {
                let rc = r.err().unwrap_or(PMIX_SUCCESS);
                // SAFETY: the caller's callback with its own data
                unsafe { cb(rc, local, regcbdata) };
                PMIX_SUCCESS
            }
            (None, Ok(_)) => i32::try_from(local).unwrap_or(PMIX_ERROR),
            (None, Err(e)) => e,
        }
    }

    /// `PMIx_IOF_deregister`: the pull `iofhdlr` ends (PMIX_ERR_BAD_PARAM
    /// for an id we never gave, as libpmix 4.2.2).
    fn PMIx_IOF_deregister(iofhdlr: usize, directives: *const pmix_info_t, ndirs: usize, cbfunc: pmix_op_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t {
        if directives.is_null() && ndirs > 0 {
            return PMIX_ERR_BAD_PARAM;
        }
        // SAFETY: ndirs infos
        let ds = match unsafe { read_infos(directives, ndirs) } {
            Ok(v) => v,
            Err(e) => return e,
        };
        let remote = {
            let mut p = pulls();
            let Some(i) = p.list.iter().position(|x| x.local == iofhdlr) else { return PMIX_ERR_BAD_PARAM };
            p.list.remove(i).remote
        };
        let rc = crate::client::status(with_client(|c, _| c.iof_deregister(remote, &ds).map_err(cerr)));
        match cbfunc {
            Some(cb) => {
                // SAFETY: the caller's callback with its own data
                unsafe { cb(rc, cbdata) };
                PMIX_SUCCESS
            }
            None => rc,
        }
    }

    /// `PMIx_IOF_push`: the bytes of `bo` for the stdin of `targets`.
    /// Without a byte object nothing is sent, as from libpmix 4.2.2
    /// (which only reads its PMIX_IOF_PUSH_STDIN directive then, and
    /// answers PMIX_OPERATION_SUCCEEDED): ours answers
    /// PMIX_ERR_NOT_SUPPORTED (it forwards no stdin of its own).
    fn PMIx_IOF_push(targets: *const pmix_proc_t, ntargets: usize, bo: *mut pmix_byte_object_t, directives: *const pmix_info_t, ndirs: usize, cbfunc: pmix_op_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t {
        if (targets.is_null() && ntargets > 0) || (directives.is_null() && ndirs > 0) {
            return PMIX_ERR_BAD_PARAM;
        }
        if bo.is_null() {
            return PMIX_ERR_NOT_SUPPORTED;
        }
        // SAFETY: ntargets procs, ndirs infos, the caller's byte object
        let ts = unsafe { read_procs(targets, ntargets) };
        let ds = match unsafe { read_infos(directives, ndirs) } {
            Ok(v) => v,
            Err(e) => return e,
        };
        let b = unsafe { &*bo };
        let data = if b.bytes.is_null() || b.size == 0 {
            Vec::new()
        } else {
            // SAFETY: `size` bytes at `bytes`
            unsafe { std::slice::from_raw_parts(b.bytes as *const u8, b.size) }.to_vec()
        };
        let rc = crate::client::status(with_client(|c, _| c.iof_push(&ts, &ds, Some(&data)).map_err(cerr)));
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
