//! libpmix 5's helper functions (capi/src/construct.rs and the buffer ones
//! in capi/src/data.rs), called as C calls them: what each leaves behind;
//! and the `pmix_framework_names` table Open MPI 5 reads.

use pmix::abi::*;
use pmix::construct::*;
use pmix::data::*;
use pmix::value::PMIx_Info_load;
use std::ffi::{c_char, c_void, CStr};
use std::ptr;

fn cstr(p: *const c_char) -> String {
    // SAFETY: a NUL-terminated string the library wrote
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

#[test]
fn argv_append_grows_a_null_terminated_array() {
    let mut argv: *mut *mut c_char = ptr::null_mut();
    unsafe {
        assert_eq!(PMIx_Argv_append_nosize(&mut argv, c"a".as_ptr()), 0);
        assert_eq!(PMIx_Argv_append_nosize(&mut argv, c"bc".as_ptr()), 0);
        assert_eq!(cstr(*argv), "a");
        assert_eq!(cstr(*argv.add(1)), "bc");
        assert!((*argv.add(2)).is_null());
        assert_ne!(PMIx_Argv_append_nosize(&mut argv, ptr::null()), 0);
        assert_ne!(PMIx_Argv_append_nosize(ptr::null_mut(), c"x".as_ptr()), 0);
        for i in 0..2 {
            libc::free(*argv.add(i) as *mut c_void);
        }
        libc::free(argv as *mut c_void);
    }
}

#[test]
fn load_and_check_keys_namespaces_and_procs() {
    let mut key: pmix_key_t = [1; PMIX_MAX_KEYLEN + 1];
    let long = std::ffi::CString::new("k".repeat(PMIX_MAX_KEYLEN + 20)).unwrap();
    let mut p: pmix_proc_t = unsafe { std::mem::zeroed() };
    unsafe {
        PMIx_Load_key(key.as_mut_ptr(), c"pmix.rank".as_ptr());
        assert_eq!(cstr(key.as_ptr()), "pmix.rank");
        assert!(PMIx_Check_key(key.as_ptr(), c"pmix.rank".as_ptr()));
        assert!(!PMIx_Check_key(key.as_ptr(), c"pmix.ran".as_ptr()));
        // at most PMIX_MAX_KEYLEN chars, NUL-terminated
        PMIx_Load_key(key.as_mut_ptr(), long.as_ptr());
        assert_eq!(cstr(key.as_ptr()).len(), PMIX_MAX_KEYLEN);
        assert!(PMIx_Check_key(key.as_ptr(), long.as_ptr()));
        PMIx_Load_procid(&mut p, c"job-1".as_ptr(), 7);
        assert_eq!((cstr(p.nspace.as_ptr()), p.rank), ("job-1".into(), 7));
        assert!(PMIx_Check_nspace(p.nspace.as_ptr(), c"job-1".as_ptr()));
        assert!(!PMIx_Check_nspace(p.nspace.as_ptr(), c"job-2".as_ptr()));
        // an empty namespace matches any
        assert!(PMIx_Check_nspace(c"".as_ptr(), c"job-2".as_ptr()));
        PMIx_Load_nspace(p.nspace.as_mut_ptr(), ptr::null());
        assert_eq!(cstr(p.nspace.as_ptr()), "");
        PMIx_Proc_construct(&mut p);
        // no rank yet, as libpmix 5.0.11 constructs it
        assert_eq!((p.nspace[0], p.rank), (0, pmix_types::RANK_UNDEF));
    }
}

#[test]
fn infos_are_created_loaded_marked_and_freed() {
    unsafe {
        assert!(PMIx_Info_create(0).is_null());
        let infos = PMIx_Info_create(2);
        assert!(!infos.is_null());
        assert_eq!(((*infos).flags, (*infos.add(1)).value.r#type), (0, 0));
        let s = c"a value";
        // PMIX_STRING is 3
        assert_eq!(
            PMIx_Info_load(infos.add(1), c"k".as_ptr(), s.as_ptr() as *const c_void, 3),
            0
        );
        PMIx_Info_qualifier(infos.add(1));
        assert_eq!(
            (*infos.add(1)).flags,
            pmix_types::value::directives::QUALIFIER
        );
        PMIx_Info_destruct(infos.add(1));
        assert_eq!((*infos.add(1)).value.r#type, 0);
        PMIx_Info_free(infos, 2);
        let procs = PMIx_Proc_create(3);
        assert!(!procs.is_null());
        PMIx_Proc_free(procs, 3);
        let apps = PMIx_App_create(1);
        assert!((*apps).cmd.is_null() && (*apps).info.is_null());
        PMIx_App_free(apps, 1);
    }
}

#[test]
fn a_buffer_takes_a_blob_and_gives_back_its_unread_bytes() {
    unsafe {
        let b = PMIx_Data_buffer_create();
        assert!(!b.is_null());
        assert!((*b).base_ptr.is_null() && (*b).bytes_used == 0);
        let blob = libc::malloc(5) as *mut c_char;
        ptr::copy_nonoverlapping(b"hello".as_ptr() as *const c_char, blob, 5);
        PMIx_Data_buffer_load(b, blob, 5);
        assert_eq!((*b).bytes_used, 5);
        let (mut data, mut size): (*mut c_void, usize) = (ptr::null_mut(), 0);
        PMIx_Data_buffer_unload(b, &mut data, &mut size);
        assert_eq!(
            std::slice::from_raw_parts(data as *const u8, size),
            b"hello"
        );
        assert!((*b).base_ptr.is_null() && (*b).bytes_used == 0);
        libc::free(data);
        // an empty buffer unloads to NULL and 0
        PMIx_Data_buffer_unload(b, &mut data, &mut size);
        assert!(data.is_null() && size == 0);
        PMIx_Data_buffer_release(b);
        let mut on_stack: pmix_data_buffer_t = std::mem::zeroed();
        PMIx_Data_buffer_construct(&mut on_stack);
        PMIx_Data_buffer_destruct(&mut on_stack);
        assert!(on_stack.base_ptr.is_null());
    }
}

#[test]
fn the_framework_names_are_libpmix_5s_then_null() {
    let t = &pmix::frameworks::pmix_framework_names;
    let names: Vec<String> = t
        .names()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len() + 1, t.0.len(), "one NULL, at the end");
    assert!(t.0[names.len()].is_null());
    for n in ["bfrops", "gds", "pmdl", "ptl", "psec"] {
        assert!(names.iter().any(|x| x == n), "{n} in {names:?}");
    }
}
