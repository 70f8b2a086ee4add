//! The server exports called as a host calls them, with nothing
//! installed: the arguments checked (PMIX_ERR_INIT before init,
//! PMIX_ERR_BAD_PARAM for NULLs), the completion callbacks fired,
//! setup_fork's environment (an existing entry replaced, the rest
//! appended), and a pmix-wire client started from that environment
//! reaching the host's client_connected (with the `server_object`
//! register_client was given), log and client_finalized upcalls, its
//! committed data answered by PMIx_server_dmodex_request. One test: the
//! library's server is one per process.

use pmix::abi::{pmix_proc_t, pmix_server_module_t, pmix_status_t};
use pmix::server::*;
use pmix_types::status::codes::*;
use pmix_types::{Info, Scope, Value};
use std::collections::HashMap;
use std::ffi::{c_char, c_void, CStr};
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::Mutex;

static CONNECTED: AtomicUsize = AtomicUsize::new(0);
static FINALIZED: AtomicUsize = AtomicUsize::new(0);
static LOGGED: AtomicUsize = AtomicUsize::new(0);
static OBJECT: AtomicUsize = AtomicUsize::new(0);
static DONE: AtomicUsize = AtomicUsize::new(0);
static DONE_RC: AtomicI32 = AtomicI32::new(1);
static DMODEX: Mutex<Option<(pmix_status_t, Vec<u8>)>> = Mutex::new(None);

unsafe extern "C" fn connected(
    p: *const pmix_proc_t,
    obj: *mut c_void,
    _cb: pmix::services::pmix_op_cbfunc_t,
    _d: *mut c_void,
) -> pmix_status_t {
    assert_eq!(unsafe { (*p).rank }, 0);
    OBJECT.store(obj as usize, Ordering::SeqCst);
    CONNECTED.fetch_add(1, Ordering::SeqCst);
    PMIX_OPERATION_SUCCEEDED
}

unsafe extern "C" fn finalized(
    _p: *const pmix_proc_t,
    _obj: *mut c_void,
    _cb: pmix::services::pmix_op_cbfunc_t,
    _d: *mut c_void,
) -> pmix_status_t {
    FINALIZED.fetch_add(1, Ordering::SeqCst);
    PMIX_OPERATION_SUCCEEDED
}

unsafe extern "C" fn log(
    _p: *const pmix_proc_t,
    _data: *const pmix::abi::pmix_info_t,
    ndata: usize,
    _dirs: *const pmix::abi::pmix_info_t,
    _ndirs: usize,
    _cb: pmix::services::pmix_op_cbfunc_t,
    _d: *mut c_void,
) {
    LOGGED.fetch_add(ndata, Ordering::SeqCst);
}

unsafe extern "C" fn done(rc: pmix_status_t, _d: *mut c_void) {
    DONE_RC.store(rc, Ordering::SeqCst);
    DONE.fetch_add(1, Ordering::SeqCst);
}

unsafe extern "C" fn dmodex(rc: pmix_status_t, data: *mut c_char, sz: usize, _d: *mut c_void) {
    let bytes = if data.is_null() {
        Vec::new()
    } else {
        unsafe { std::slice::from_raw_parts(data as *const u8, sz) }.to_vec()
    };
    *DMODEX.lock().unwrap() = Some((rc, bytes));
}

/// Wait (at most a minute) for `cond`: upcalls and callbacks come on the
/// library's threads.
fn wait_for(what: &str, cond: impl Fn() -> bool) {
    for _ in 0..6000 {
        if cond() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("{what} never came");
}

fn proc(ns: &str, rank: u32) -> pmix_proc_t {
    let mut p = pmix_proc_t {
        nspace: [0; 256],
        rank,
    };
    for (d, s) in p.nspace.iter_mut().zip(ns.bytes()) {
        *d = s as c_char;
    }
    p
}

#[test]
fn a_host_registers_a_job_and_its_client_connects() {
    let p0 = proc("core-capi-srv", 0);
    let mut env: *mut *mut c_char = std::ptr::null_mut();
    unsafe {
        assert_eq!(PMIx_server_setup_fork(&p0, &mut env), PMIX_ERR_INIT);
        assert_eq!(PMIx_server_finalize(), PMIX_ERR_INIT);
    }

    let mut module: pmix_server_module_t = unsafe { std::mem::zeroed() };
    module.client_connected = Some(connected);
    module.client_finalized = Some(finalized);
    module.log = Some(log);
    assert_eq!(
        unsafe { PMIx_server_init(&mut module, std::ptr::null_mut(), 0) },
        PMIX_SUCCESS
    );

    // a NULL namespace; a count without infos
    let ns = c"core-capi-srv";
    // (namespace, infos claimed, callback): no infos are given
    let register = |ns: *const c_char, ninfo: usize, cb: pmix::services::pmix_op_cbfunc_t| unsafe {
        PMIx_server_register_nspace(ns, 1, std::ptr::null_mut(), ninfo, cb, std::ptr::null_mut())
    };
    assert_eq!(register(std::ptr::null(), 0, None), PMIX_ERR_BAD_PARAM);
    assert_eq!(register(ns.as_ptr(), 2, None), PMIX_ERR_BAD_PARAM);
    assert_eq!(register(ns.as_ptr(), 0, Some(done)), PMIX_SUCCESS);
    wait_for("register_nspace's callback", || {
        DONE.load(Ordering::SeqCst) == 1
    });
    assert_eq!(DONE_RC.load(Ordering::SeqCst), PMIX_SUCCESS);
    let object = 0x5eed as *mut c_void;
    unsafe {
        assert_eq!(
            PMIx_server_register_client(std::ptr::null(), 0, 0, object, None, std::ptr::null_mut()),
            PMIX_ERR_BAD_PARAM
        );
        assert_eq!(
            PMIx_server_register_client(
                &p0,
                libc::getuid(),
                libc::getgid(),
                object,
                Some(done),
                std::ptr::null_mut()
            ),
            PMIX_SUCCESS
        );
    }
    wait_for("register_client's callback", || {
        DONE.load(Ordering::SeqCst) == 2
    });

    // an environment with PMIX_RANK already in it, and one other variable
    unsafe {
        env = libc::calloc(3, std::mem::size_of::<*mut c_char>()) as *mut *mut c_char;
        *env = libc::strdup(c"PMIX_RANK=7".as_ptr());
        *env.add(1) = libc::strdup(c"KEEP=1".as_ptr());
        assert_eq!(
            PMIx_server_setup_fork(&p0, std::ptr::null_mut()),
            PMIX_ERR_BAD_PARAM
        );
        assert_eq!(PMIx_server_setup_fork(&p0, &mut env), PMIX_SUCCESS);
    }
    let mut vars: Vec<(String, String)> = Vec::new();
    unsafe {
        let mut i = 0;
        while !(*env.add(i)).is_null() {
            let s = CStr::from_ptr(*env.add(i)).to_string_lossy().into_owned();
            let (k, v) = s.split_once('=').unwrap();
            vars.push((k.to_string(), v.to_string()));
            libc::free(*env.add(i) as *mut c_void);
            i += 1;
        }
        libc::free(env as *mut c_void);
    }
    assert_eq!(
        vars[0],
        ("PMIX_RANK".into(), "0".into()),
        "replaced in place"
    );
    assert_eq!(vars[1], ("KEEP".into(), "1".into()));
    assert_eq!(vars.iter().filter(|(k, _)| k == "PMIX_RANK").count(), 1);
    let map: HashMap<String, String> = vars.into_iter().collect();
    assert_eq!(map["PMIX_NAMESPACE"], "core-capi-srv");
    assert!(map.contains_key("PMIX_SERVER_URI41"), "{map:?}");

    // before the rank commits, our dmodex request waits for it
    unsafe {
        assert_eq!(
            PMIx_server_dmodex_request(&p0, None, std::ptr::null_mut()),
            PMIX_ERR_BAD_PARAM
        );
        assert_eq!(
            PMIx_server_dmodex_request(&p0, Some(dmodex), std::ptr::null_mut()),
            PMIX_SUCCESS
        );
    }

    // a client started with that environment
    let cenv = pmix_wire::client::ClientEnv::from_env(|k| map.get(k).cloned()).unwrap();
    let mut c = pmix_wire::client::Client::init_with(cenv).unwrap();
    wait_for("client_connected", || CONNECTED.load(Ordering::SeqCst) == 1);
    assert_eq!(
        OBJECT.load(Ordering::SeqCst),
        0x5eed,
        "the server_object register_client was given"
    );
    c.put(Scope::GLOBAL, "k", Value::Uint32(42));
    c.commit().unwrap();
    wait_for("the dmodex answer", || DMODEX.lock().unwrap().is_some());
    let (rc, bytes) = DMODEX.lock().unwrap().take().unwrap();
    assert_eq!(rc, PMIX_SUCCESS);
    assert!(!bytes.is_empty(), "rank 0's committed data");
    c.log(
        &[Info::new(
            "pmix.log.stdout",
            Value::String(Some("hello".into())),
        )],
        &[],
    )
    .unwrap();
    wait_for("the log upcall", || LOGGED.load(Ordering::SeqCst) >= 1);
    c.finalize().unwrap();
    wait_for("client_finalized", || FINALIZED.load(Ordering::SeqCst) == 1);

    unsafe {
        PMIx_server_deregister_client(&p0, Some(done), std::ptr::null_mut());
        PMIx_server_deregister_nspace(ns.as_ptr(), Some(done), std::ptr::null_mut());
    }
    wait_for("the deregister callbacks", || {
        DONE.load(Ordering::SeqCst) == 4
    });
    assert_eq!(unsafe { PMIx_server_finalize() }, PMIX_SUCCESS);
    assert_eq!(unsafe { PMIx_server_finalize() }, PMIX_ERR_INIT);
}
