//! The calls that answered PMIX_ERR_NOT_SUPPORTED at once, now answered
//! as libpmix 4.2.2 answers them (interop/c/capi_stubs.c and
//! capi_server_stubs.c show it, capi/tests/libpmix_capi_stubs.rs and
//! live_capi_client.rs check it): the credential calls (relayed to the
//! server by a client; a singleton or a server without a host that makes
//! credentials: NOT_SUPPORTED, a credential to validate INVALID_CRED),
//! the fabric calls (relayed; a singleton UNREACH, a server
//! NOT_SUPPORTED; deregister frees the fabric's infos), the attribute
//! registration (kept per process: a function's second registration is
//! PMIX_ERR_REPEAT_ATTR_REGISTRATION) and the server's inventory,
//! process-set and resource calls (accepted; a blocking form answers
//! PMIX_OPERATION_SUCCEEDED). Signatures from the standard's text (v3 and
//! v4, pmix/pmix-standard); PMIx_Register_attributes reads only its
//! first argument, the function's name, which libpmix 4.2.2's header
//! (`char *function, char *attrs[]`) and the standard v4's (`const char
//! *function, pmix_regattr_t attrs[], size_t nattrs`) both place first.
#![allow(non_camel_case_types)]

use crate::abi::*;
use crate::client::{cerr, initialized, status, with_client};
use crate::conv::*;
use crate::guard::exports;
use crate::services::{in_background, info_cb, infos, op_nb, pmix_info_cbfunc_t, pmix_op_cbfunc_t, procs_of, Opaque};
use pmix_codec::msg::{Reply, Request};
use pmix_types::status::codes::*;
use pmix_types::{DataType, Info, Value};
use std::ffi::{c_char, c_void};
use std::ptr;

/// `pmix_credential_cbfunc_t` (standard v3).
pub type pmix_credential_cbfunc_t = Option<
    unsafe extern "C" fn(
        status: pmix_status_t,
        credential: *mut pmix_byte_object_t,
        info: *mut pmix_info_t,
        ninfo: usize,
        cbdata: *mut c_void,
    ),
>;
/// `pmix_validation_cbfunc_t` (standard v3).
pub type pmix_validation_cbfunc_t =
    Option<unsafe extern "C" fn(status: pmix_status_t, info: *mut pmix_info_t, ninfo: usize, cbdata: *mut c_void)>;

/// `pmix_fabric_t` (standard v4, "Fabric Support Definitions").
#[repr(C)]
pub struct pmix_fabric_t {
    /// The caller's name for the fabric (optional).
    pub name: *mut c_char,
    /// The library's index of this registration.
    pub index: usize,
    /// What the library knows of the fabric (malloc'd by us).
    pub info: *mut pmix_info_t,
    /// How many.
    pub ninfo: usize,
    /// For the library's use.
    pub module: *mut c_void,
}

/// Whether this process runs the server half (PMIx_server_init).
fn server() -> bool {
    crate::server::running()
}

/// INIT unless initialized as a client, tool or server.
fn require_init() -> Result<(), Status> {
    if initialized() || server() {
        Ok(())
    } else {
        Err(PMIX_ERR_INIT)
    }
}

/// A server's answer for what only its connection could do, or what a
/// client's relay answers: `Some` for a process with no server to relay
/// to (a server itself: `in_server`; a singleton: `alone`).
fn unconnected(in_server: Status, alone: Status) -> Result<bool, Status> {
    require_init()?;
    if server() {
        return Err(in_server);
    }
    match with_client(|_, _| Ok(())) {
        Ok(()) => Ok(true),
        Err(PMIX_ERR_UNREACH) => Err(alone),
        Err(e) => Err(e),
    }
}

/// What a process with no server answers a validation (libpmix's native
/// security module, whose own peer speaks no protocol): NOT_SUPPORTED when
/// a PMIX_CRED_TYPE directive leaves "native" out, else INVALID_CRED.
fn local_validation(ds: &[Info]) -> Status {
    let other = ds.iter().any(|i| {
        i.key.as_pstring().as_bytes() == b"pmix.sec.ctype"
            && match &i.value {
                Value::String(Some(s)) => !s.to_string_lossy().split(',').any(|t| t == "native"),
                _ => false,
            }
    });
    if other {
        PMIX_ERR_NOT_SUPPORTED
    } else {
        PMIX_ERR_INVALID_CRED
    }
}

/// GET_CREDENTIAL relayed: the credential's bytes and infos.
fn get_credential(is: Vec<Info>) -> Result<(Vec<u8>, Vec<Info>), Status> {
    let r = with_client(|c, _| c.request(&Request::GetCredential { info: is }, "get credential").map_err(cerr))?;
    match r {
        Reply::Credential {
            status: 0,
            credential,
            info,
        } => Ok((credential.map(|b| b.to_vec()).unwrap_or_default(), info.unwrap_or_default())),
        Reply::Credential { status, .. } | Reply::Status(status) => Err(status),
        _ => Err(PMIX_ERR_UNPACK_FAILURE),
    }
}

/// An infos reply (VALIDATE_CRED, FABRIC_REGISTER, FABRIC_UPDATE).
fn infos_reply(req: Request, op: &'static str) -> Result<Vec<Info>, Status> {
    match with_client(|c, _| c.request(&req, op).map_err(cerr))? {
        Reply::Infos { status: 0, info } => Ok(info.unwrap_or_default()),
        Reply::Infos { status, .. } | Reply::Status(status) => Err(status),
        _ => Err(PMIX_ERR_UNPACK_FAILURE),
    }
}

/// `cred`'s bytes (NULL: BAD_PARAM).
///
/// # Safety
/// `cred` is NULL or a byte object.
unsafe fn cred_bytes(cred: *const pmix_byte_object_t) -> Result<Vec<u8>, Status> {
    // SAFETY: the caller's contract
    let c = unsafe { cred.as_ref() }.ok_or(PMIX_ERR_BAD_PARAM)?;
    if c.bytes.is_null() || c.size == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: size bytes at bytes
    Ok(unsafe { std::slice::from_raw_parts(c.bytes as *const u8, c.size) }.to_vec())
}

/// `bytes` as a new byte object at `out`.
fn write_cred(out: &mut pmix_byte_object_t, bytes: &[u8]) -> Result<(), Status> {
    out.bytes = ptr::null_mut();
    out.size = 0;
    if bytes.is_empty() {
        return Ok(());
    }
    let p = c_calloc(bytes.len(), 1)?;
    // SAFETY: p holds bytes.len() bytes
    unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len()) };
    out.bytes = p as *mut c_char;
    out.size = bytes.len();
    Ok(())
}

/// Replace the fabric's infos with `got`.
///
/// # Safety
/// `fab` is a fabric whose infos are NULL or made by this library (or malloc'd).
unsafe fn set_fabric_infos(fab: *mut pmix_fabric_t, got: Vec<Info>) -> Result<(), Status> {
    // SAFETY: the caller's contract
    let f = unsafe { fab.as_mut() }.ok_or(PMIX_ERR_BAD_PARAM)?;
    // SAFETY: as above
    unsafe { clear_fabric(f) };
    let vals: Vec<Value> = got.into_iter().map(|i| Value::Info(Box::new(i))).collect();
    if !vals.is_empty() {
        f.info = c_elems(DataType::Info, &vals)? as *mut pmix_info_t;
        f.ninfo = vals.len();
    }
    Ok(())
}

/// Free the fabric's infos.
///
/// # Safety
/// As [`set_fabric_infos`].
unsafe fn clear_fabric(f: &mut pmix_fabric_t) {
    if !f.info.is_null() {
        // SAFETY: the caller's contract
        unsafe { crate::services::free_c_array(DataType::Info, f.info as *mut c_void, f.ninfo) };
    }
    f.info = ptr::null_mut();
    f.ninfo = 0;
}

/// A fabric pointer handed to the thread of a non-blocking call (the
/// caller keeps it until the callback).
struct FabricPtr(*mut pmix_fabric_t);
// SAFETY: only the call's own thread writes through it, before the callback
unsafe impl Send for FabricPtr {}

/// A fabric call: relay `req` and put the answer into the fabric.
///
/// # Safety
/// As [`set_fabric_infos`].
unsafe fn fabric_call(fab: FabricPtr, req: Request, op: &'static str) -> Result<(), Status> {
    let got = infos_reply(req, op)?;
    // SAFETY: the caller's contract
    unsafe { set_fabric_infos(fab.0, got) }
}

/// The checks of the fabric calls before the relay: the fabric's index.
fn fabric_checks(fab: *mut pmix_fabric_t) -> Result<usize, Status> {
    unconnected(PMIX_ERR_NOT_SUPPORTED, PMIX_ERR_UNREACH)?;
    // SAFETY: the caller's fabric, checked non-NULL
    unsafe { fab.as_ref() }.map(|f| f.index).ok_or(PMIX_ERR_BAD_PARAM)
}

/// The functions PMIx_Register_attributes registered (per process).
static ATTRS: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// What the server calls with an op callback answer: the callback gets
/// SUCCESS on a thread of its own; without one, OPERATION_SUCCEEDED.
fn accepted(name: &'static str, cbfunc: pmix_op_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t {
    let Some(cb) = cbfunc else { return PMIX_OPERATION_SUCCEEDED };
    let data = Opaque(cbdata);
    status(in_background(name, move || {
        let data = data;
        // SAFETY: the host's callback with its own data
        unsafe { cb(PMIX_SUCCESS, data.0) }
    }))
}

/// The server calls' first check: INIT unless the server runs.
fn server_running() -> Result<(), Status> {
    if server() {
        Ok(())
    } else {
        Err(PMIX_ERR_INIT)
    }
}

exports! {
    /// `PMIx_Get_credential`: a client asks its server (pmixw's answers the native module's 8 bytes, euid and egid); a singleton or a server process NOT_SUPPORTED; INIT before init.
    fn PMIx_Get_credential(info: *const pmix_info_t, ninfo: usize, credential: *mut pmix_byte_object_t) -> pmix_status_t {
        status((|| {
            unconnected(PMIX_ERR_NOT_SUPPORTED, PMIX_ERR_NOT_SUPPORTED)?;
            // SAFETY: the caller's byte object, checked non-NULL
            let out = unsafe { credential.as_mut() }.ok_or(PMIX_ERR_BAD_PARAM)?;
            // SAFETY: ninfo infos
            let is = unsafe { infos(info, ninfo) }?;
            let (bytes, _) = get_credential(is)?;
            write_cred(out, &bytes)
        })())
    }

    /// `PMIx_Get_credential_nb`: as PMIx_Get_credential; `cbfunc` gets the server's answer (a NULL `cbfunc`: the answer is dropped); what needs no server is returned at once, no callback made.
    fn PMIx_Get_credential_nb(info: *const pmix_info_t, ninfo: usize, cbfunc: pmix_credential_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t {
        status((|| {
            unconnected(PMIX_ERR_NOT_SUPPORTED, PMIX_ERR_NOT_SUPPORTED)?;
            // SAFETY: ninfo infos
            let is = unsafe { infos(info, ninfo) }?;
            let data = Opaque(cbdata);
            in_background("PMIx_Get_credential_nb", move || {
                let data = data;
                let r = get_credential(is);
                let Some(cb) = cbfunc else { return };
                let (rc, bytes, is) = match r {
                    Ok((b, i)) => (PMIX_SUCCESS, b, i),
                    Err(e) => (e, Vec::new(), Vec::new()),
                };
                let mut bo = pmix_byte_object_t { bytes: ptr::null_mut(), size: 0 };
                let rc = match write_cred(&mut bo, &bytes) {
                    Ok(()) => rc,
                    Err(e) => e,
                };
                let vals = Ok(is.into_iter().map(|i| Value::Info(Box::new(i))).collect());
                let (_, p, n) = crate::services::c_array_of(DataType::Info, vals);
                // SAFETY: the caller's callback; the credential and infos live until it returns
                unsafe { cb(rc, &mut bo, p as *mut pmix_info_t, n, data.0) };
                // SAFETY: made above
                unsafe {
                    crate::services::free_c_array(DataType::Info, p, n);
                    libc::free(bo.bytes as *mut c_void);
                }
            })
        })())
    }

    /// `PMIx_Validate_credential`: a client asks its server (pmixw's: valid when it is the asking connection's own); a singleton or a server process INVALID_CRED (NOT_SUPPORTED when a PMIX_CRED_TYPE directive leaves "native" out); the server's infos in a new array.
    fn PMIx_Validate_credential(cred: *const pmix_byte_object_t, info: *const pmix_info_t, ninfo: usize, results: *mut *mut pmix_info_t, nresults: *mut usize) -> pmix_status_t {
        status((|| {
            require_init()?;
            // SAFETY: ninfo infos
            let is = unsafe { infos(info, ninfo) }?;
            let local = local_validation(&is);
            unconnected(local, local)?;
            // SAFETY: the caller's byte object
            let bytes = unsafe { cred_bytes(cred) }?;
            let got = infos_reply(Request::ValidateCred { credential: bytes.into(), directives: is }, "validate credential")?;
            if got.is_empty() {
                return Ok(());
            }
            let vals: Vec<Value> = got.into_iter().map(|i| Value::Info(Box::new(i))).collect();
            if results.is_null() || nresults.is_null() {
                return Err(PMIX_ERR_BAD_PARAM);
            }
            // SAFETY: checked non-NULL
            unsafe { crate::services::out_array(DataType::Info, &vals, results, nresults) }
        })())
    }

    /// `PMIx_Validate_credential_nb`: as PMIx_Validate_credential; `cbfunc` gets the server's answer (a NULL `cbfunc`: dropped); what needs no server is returned at once.
    fn PMIx_Validate_credential_nb(cred: *const pmix_byte_object_t, info: *const pmix_info_t, ninfo: usize, cbfunc: pmix_validation_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t {
        status((|| {
            require_init()?;
            // SAFETY: ninfo infos
            let is = unsafe { infos(info, ninfo) }?;
            let local = local_validation(&is);
            unconnected(local, local)?;
            // SAFETY: the caller's byte object
            let bytes = unsafe { cred_bytes(cred) }?;
            let data = Opaque(cbdata);
            in_background("PMIx_Validate_credential_nb", move || {
                let data = data;
                let r = infos_reply(Request::ValidateCred { credential: bytes.into(), directives: is }, "validate credential");
                let Some(cb) = cbfunc else { return };
                let (rc, got) = match r {
                    Ok(g) => (PMIX_SUCCESS, g),
                    Err(e) => (e, Vec::new()),
                };
                let vals = Ok(got.into_iter().map(|i| Value::Info(Box::new(i))).collect());
                let (_, p, n) = crate::services::c_array_of(DataType::Info, vals);
                // SAFETY: the caller's callback; the infos live until it returns
                unsafe { cb(rc, p as *mut pmix_info_t, n, data.0) };
                // SAFETY: made above
                unsafe { crate::services::free_c_array(DataType::Info, p, n) };
            })
        })())
    }

    /// `PMIx_Fabric_register`: a client asks its server (pmixw's: NOT_SUPPORTED, which we return; libpmix 4.2.2 returns SUCCESS, divergences.md "libpmix 4.2.2's fabric calls and process sets"); the server's infos in `fabric`; a singleton UNREACH, a server process NOT_SUPPORTED, INIT before init.
    fn PMIx_Fabric_register(fabric: *mut pmix_fabric_t, directives: *const pmix_info_t, ndirs: usize) -> pmix_status_t {
        status((|| {
            fabric_checks(fabric)?;
            // SAFETY: ndirs infos
            let ds = unsafe { infos(directives, ndirs) }?;
            // SAFETY: the caller's fabric, checked
            unsafe { fabric_call(FabricPtr(fabric), Request::FabricRegister { directives: ds }, "fabric register") }
        })())
    }

    /// `PMIx_Fabric_register_nb`: as PMIx_Fabric_register; `cbfunc` gets the server's status (without one: blocking).
    fn PMIx_Fabric_register_nb(fabric: *mut pmix_fabric_t, directives: *const pmix_info_t, ndirs: usize, cbfunc: pmix_op_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t {
        status((|| {
            fabric_checks(fabric)?;
            // SAFETY: ndirs infos
            let ds = unsafe { infos(directives, ndirs) }?;
            let fab = FabricPtr(fabric);
            // SAFETY: the caller keeps the fabric until the callback
            op_nb("PMIx_Fabric_register_nb", cbfunc, cbdata, move || unsafe {
                fabric_call(fab, Request::FabricRegister { directives: ds }, "fabric register")
            })
        })())
    }

    /// `PMIx_Fabric_update`: a client asks its server for the fabric of `fabric`'s index again (pmixw's: NOT_SUPPORTED); the new infos replace its own.
    fn PMIx_Fabric_update(fabric: *mut pmix_fabric_t) -> pmix_status_t {
        status((|| {
            let index = fabric_checks(fabric)? as u64;
            // SAFETY: the caller's fabric, checked
            unsafe { fabric_call(FabricPtr(fabric), Request::FabricUpdate { index }, "fabric update") }
        })())
    }

    /// `PMIx_Fabric_update_nb`: as PMIx_Fabric_update; `cbfunc` gets the server's status (libpmix 4.2.2's gets SUCCESS whatever the server answered: divergences.md).
    fn PMIx_Fabric_update_nb(fabric: *mut pmix_fabric_t, cbfunc: pmix_op_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t {
        status((|| {
            let index = fabric_checks(fabric)? as u64;
            let fab = FabricPtr(fabric);
            // SAFETY: the caller keeps the fabric until the callback
            op_nb("PMIx_Fabric_update_nb", cbfunc, cbdata, move || unsafe {
                fabric_call(fab, Request::FabricUpdate { index }, "fabric update")
            })
        })())
    }

    /// `PMIx_Fabric_deregister`: frees the fabric's infos (nothing is sent), as libpmix 4.2.2 does.
    fn PMIx_Fabric_deregister(fabric: *mut pmix_fabric_t) -> pmix_status_t {
        // SAFETY: the caller's fabric
        match unsafe { fabric.as_mut() } {
            Some(f) => {
                // SAFETY: its infos are ours (or malloc'd)
                unsafe { clear_fabric(f) };
                PMIX_SUCCESS
            }
            None => PMIX_ERR_BAD_PARAM,
        }
    }

    /// `PMIx_Fabric_deregister_nb`: as PMIx_Fabric_deregister, done at once: PMIX_OPERATION_SUCCEEDED and no callback, as libpmix 4.2.2 answers.
    fn PMIx_Fabric_deregister_nb(fabric: *mut pmix_fabric_t, _cbfunc: pmix_op_cbfunc_t, _cbdata: *mut c_void) -> pmix_status_t {
        // SAFETY: the caller's fabric
        match unsafe { fabric.as_mut() } {
            Some(f) => {
                // SAFETY: its infos are ours (or malloc'd)
                unsafe { clear_fabric(f) };
                PMIX_OPERATION_SUCCEEDED
            }
            None => PMIX_ERR_BAD_PARAM,
        }
    }

    /// `PMIx_Register_attributes`: the host's attributes of `function` are noted (only the name is read: see the module's text); a function's second registration PMIX_ERR_REPEAT_ATTR_REGISTRATION; INIT before init.
    fn PMIx_Register_attributes(function: *const c_char) -> pmix_status_t {
        status((|| {
            require_init()?;
            // SAFETY: a C string or NULL
            let name = unsafe { read_str(function) }.ok_or(PMIX_ERR_BAD_PARAM)?;
            let name = String::from_utf8_lossy(name.as_bytes()).into_owned();
            let mut g = ATTRS.lock().unwrap_or_else(|p| p.into_inner());
            if g.contains(&name) {
                return Err(PMIX_ERR_REPEAT_ATTR_REGISTRATION);
            }
            g.push(name);
            Ok(())
        })())
    }

    /// `PMIx_server_collect_inventory`: no inventory to collect (no fabric or GPU component), so `cbfunc` gets SUCCESS and no infos, as libpmix 4.2.2 answers without them; INIT when the server does not run.
    fn PMIx_server_collect_inventory(directives: *const pmix_info_t, ndirs: usize, cbfunc: pmix_info_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t {
        status((|| {
            server_running()?;
            // SAFETY: ndirs infos
            unsafe { infos(directives, ndirs) }?;
            let Some(cb) = cbfunc else { return Ok(()) };
            let data = Opaque(cbdata);
            in_background("PMIx_server_collect_inventory", move || {
                let data = data;
                info_cb(cb, data.0, Ok(Vec::new()));
            })
        })())
    }

    /// `PMIx_server_deliver_inventory`: accepted (no component takes it): `cbfunc` gets SUCCESS; without one PMIX_OPERATION_SUCCEEDED.
    fn PMIx_server_deliver_inventory(info: *const pmix_info_t, ninfo: usize, directives: *const pmix_info_t, ndirs: usize, cbfunc: pmix_op_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t {
        if let Err(e) = server_running() {
            return e;
        }
        // SAFETY: ninfo and ndirs infos
        if let Err(e) = unsafe { infos(info, ninfo).and(infos(directives, ndirs)) } {
            return e;
        }
        accepted("PMIx_server_deliver_inventory", cbfunc, cbdata)
    }

    /// `PMIx_server_define_process_set`: the set is kept by the server core, whose answers to clients' process-set queries name it; PMIX_OPERATION_SUCCEEDED, as libpmix 4.2.2 answers (its PMIX_PROCESS_SET_DEFINE event to local clients is not raised: capi.md).
    fn PMIx_server_define_process_set(members: *const pmix_proc_t, nmembers: usize, pset_name: *const c_char) -> pmix_status_t {
        status((|| {
            server_running()?;
            // SAFETY: nmembers procs
            let ps = unsafe { procs_of(members, nmembers) }?;
            // SAFETY: a C string or NULL
            let name = unsafe { read_str(pset_name) }.ok_or(PMIX_ERR_BAD_PARAM)?;
            crate::server::define_pset(name.to_string_lossy().into_owned(), ps)?;
            Err(PMIX_OPERATION_SUCCEEDED)
        })())
    }

    /// `PMIx_server_delete_process_set`: the set is forgotten; PMIX_OPERATION_SUCCEEDED, known or not, as libpmix 4.2.2 answers.
    fn PMIx_server_delete_process_set(pset_name: *const c_char) -> pmix_status_t {
        status((|| {
            server_running()?;
            // SAFETY: a C string or NULL
            let name = unsafe { read_str(pset_name) }.ok_or(PMIX_ERR_BAD_PARAM)?;
            crate::server::delete_pset(name.to_string_lossy().into_owned())?;
            Err(PMIX_OPERATION_SUCCEEDED)
        })())
    }

    /// `PMIx_server_register_resources`: accepted: `cbfunc` gets SUCCESS; without one PMIX_OPERATION_SUCCEEDED (libpmix 4.2.2 adds the infos to every namespace's job data; ours does not: capi.md).
    fn PMIx_server_register_resources(info: *const pmix_info_t, ninfo: usize, cbfunc: pmix_op_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t {
        if let Err(e) = server_running() {
            return e;
        }
        // SAFETY: ninfo infos
        if let Err(e) = unsafe { infos(info, ninfo) } {
            return e;
        }
        accepted("PMIx_server_register_resources", cbfunc, cbdata)
    }

    /// `PMIx_server_deregister_resources`: as PMIx_server_register_resources.
    fn PMIx_server_deregister_resources(info: *const pmix_info_t, ninfo: usize, cbfunc: pmix_op_cbfunc_t, cbdata: *mut c_void) -> pmix_status_t {
        if let Err(e) = server_running() {
            return e;
        }
        // SAFETY: ninfo infos
        if let Err(e) = unsafe { infos(info, ninfo) } {
            return e;
        }
        accepted("PMIx_server_deregister_resources", cbfunc, cbdata)
    }
}
