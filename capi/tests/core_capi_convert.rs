//! The C conversions without any C library: every type the library
//! converts (test-kit's sample of each, and edge cases) goes Value → C storage → Value unchanged (as an element, and
//! inside a pmix_value_t where the union holds it), and is freed; every
//! other type is refused with PMIX_ERR_NOT_SUPPORTED; a panic in an
//! export's body comes back as PMIX_ERROR.

use pmix::abi::{pmix_cpuset_t, pmix_topology_t, pmix_value_t};
use pmix::conv::*;
use pmix_types::value::*;
use pmix_types::{DataType, Info, Key, Nspace, PString, Value, RANK_WILDCARD};

fn s(x: &str) -> Option<pmix_types::PString> {
    Some(x.into())
}

fn samples() -> Vec<Value> {
    let info = Info {
        key: Key::from("k.one"),
        flags: directives::REQD,
        value: Value::Uint32(7),
    };
    let proc = Proc::new("ns.a", 3);
    vec![
        Value::Bool(true),
        Value::Byte(9),
        Value::String(s("text")),
        Value::String(None),
        Value::Size(u64::MAX),
        Value::Pid(4242),
        Value::Int(-5),
        Value::Int8(-8),
        Value::Int16(-16),
        Value::Int32(i32::MIN),
        Value::Int64(i64::MIN),
        Value::Uint(5),
        Value::Uint8(8),
        Value::Uint16(16),
        Value::Uint32(u32::MAX),
        Value::Uint64(u64::MAX),
        Value::Float(F32(1.5)),
        Value::Double(F64(-2.25)),
        Value::Timeval(Timeval { sec: 17, usec: 99 }),
        Value::Time(1_700_000_000),
        Value::Status(-46),
        Value::Proc(Box::new(proc.clone())),
        Value::ByteObject(Box::new(Hex(b"a\0b".as_slice().into()))),
        Value::CompressedString(Box::new(Hex(b"zz".as_slice().into()))),
        Value::Persist(2),
        Value::Scope(3),
        Value::DataRange(4),
        Value::InfoDirectives(1),
        Value::DataTypeCode(24),
        Value::ProcState(5),
        Value::ProcRank(RANK_WILDCARD),
        Value::AllocDirective(1),
        Value::IofChannel(3),
        Value::JobState(3),
        Value::LinkState(1),
        Value::DevType(8),
        Value::LocType(0x1f),
        Value::StorMedium(1),
        Value::StorAccess(2),
        Value::StorPersist(4),
        Value::StorAccessType(1),
        Value::ProcNspace(Nspace::from("ns.b")),
        Value::Value(Box::new(Value::String(s("inner")))),
        Value::Info(Box::new(info.clone())),
        Value::Pdata(Box::new(Pdata {
            proc: proc.clone(),
            key: Key::from("pub"),
            value: Value::Int64(-1),
        })),
        Value::App(Box::new(App {
            cmd: s("a.out"),
            argv: vec!["a.out".into(), "-v".into()],
            env: vec!["A=1".into()],
            cwd: s("/tmp"),
            maxprocs: 2,
            info: vec![info.clone()],
        })),
        Value::Query(Box::new(Query {
            keys: vec!["pmix.qry.ns".into()],
            qualifiers: vec![info.clone()],
        })),
        Value::ProcInfo(Box::new(ProcInfo {
            proc: proc.clone(),
            hostname: s("node"),
            executable_name: None,
            pid: 77,
            exit_code: 3,
            state: 5,
        })),
        Value::Envar(Box::new(Envar {
            envar: s("PATH"),
            value: s("/bin"),
            separator: b':',
        })),
        Value::Coord(Box::new(Coord {
            view: 1,
            coord: vec![1, 2, 3],
        })),
        Value::DataArray(Box::new(
            DataArray::new(DataType::Info, vec![Value::Info(Box::new(info))]).unwrap(),
        )),
        Value::DataArray(Box::new(DataArray::undef(3))),
        Value::Command(7),
        Value::Pointer,
        Value::Regex(Box::new(Regex::Text("raw:n1,n2".into()))),
        Value::RegAttr(Box::new(RegAttr {
            name: s("PMIX_X"),
            string: Key::from("pmix.x"),
            ty: 14,
            description: vec!["one".into(), "two".into()],
        })),
        Value::Geometry(Box::new(Geometry {
            fabric: 3,
            uuid: s("u"),
            osname: None,
            coordinates: vec![Coord {
                view: 2,
                coord: vec![4, 5],
            }],
        })),
        Value::DeviceDist(Box::new(DeviceDist {
            uuid: s("g"),
            osname: s("card0"),
            devtype: 2,
            mindist: 1,
            maxdist: 9,
        })),
        Value::Endpoint(Box::new(Endpoint {
            uuid: None,
            osname: s("eth0"),
            endpt: b"\x01\x02".as_slice().into(),
        })),
        Value::DataBuffer(Box::new(Hex(b"\x02\x05".as_slice().into()))),
    ]
}

/// This machine's topology as the wire carries it (hwloc's XML and
/// support flags), once through C storage so that its XML is hwloc's
/// export of an XML-loaded topology; None without hwloc.
fn machine_topology() -> Option<Value> {
    let h = pmix::hwloc::get()?;
    let t = h.load(None)?;
    // SAFETY: t was just loaded; destroyed once read
    let v = unsafe {
        let xml = h.xml(t)?;
        let support = h.support(t, None);
        (h.topology_destroy)(t);
        Value::Topo(Box::new(Topology {
            xml: Some(PString::from_bytes(&xml).unwrap()),
            support: support.into(),
        }))
    };
    let p = c_elems(DataType::Topo, std::slice::from_ref(&v)).unwrap() as *mut u8;
    // SAFETY: one element just written, destructed and freed after the read
    unsafe {
        let back = read_elem(DataType::Topo, p).unwrap();
        destruct_elem(DataType::Topo, p);
        libc::free(p.cast());
        Some(back)
    }
}

/// The edge cases above and test-kit's sample of every type this library
/// converts (a topology: this machine's, which hwloc can load; none
/// without hwloc, nor a cpuset, whose bitmap is hwloc's).
fn all() -> Vec<Value> {
    let mut v = samples();
    let hwloc = pmix::hwloc::get().is_some();
    if !hwloc {
        eprintln!("skipped PMIX_TOPO and PMIX_PROC_CPUSET: no libhwloc.so.15");
    }
    v.extend(
        DataType::ALL
            .iter()
            .filter(|t| **t != DataType::Undef && elem_size(**t).is_some())
            .filter(|t| hwloc || !matches!(t, DataType::Topo | DataType::ProcCpuset))
            .filter_map(|t| match t {
                DataType::Topo => machine_topology(),
                t => Some(pmix_test_kit::samples::sample(*t)),
            }),
    );
    if hwloc {
        v.push(Value::ProcCpuset(Cpuset { cpus: None }));
        v.push(Value::Topo(Box::default()));
    }
    v
}

#[test]
fn every_converted_type_round_trips_through_c_storage() {
    for v in all() {
        let ty = v.data_type();
        let sz = elem_size(ty).unwrap_or_else(|| panic!("{ty} not converted"));
        let p = c_elems(ty, std::slice::from_ref(&v)).unwrap() as *mut u8;
        // SAFETY: one element of ty, just written
        let back = unsafe { read_elem(ty, p) }.unwrap();
        assert_eq!(back, v, "{ty} as an element ({sz} bytes)");
        // SAFETY: the element and its block were malloc'd by c_elems
        unsafe {
            destruct_elem(ty, p);
            libc::free(p.cast());
        }
        if ty == DataType::Value || ty == DataType::Info {
            continue; // no member of the union holds these
        }
        // SAFETY: a zeroed value is UNDEF
        let mut cv: pmix_value_t = unsafe { std::mem::zeroed() };
        match write_value(&mut cv, &v) {
            Ok(()) => {
                // SAFETY: just written
                assert_eq!(
                    unsafe { read_value(&cv) }.unwrap(),
                    v,
                    "{ty} in a pmix_value_t"
                );
                // SAFETY: what write_value allocated
                unsafe { destruct_value(&mut cv) };
                assert_eq!(cv.r#type, 0);
            }
            Err(e) => assert!(
                matches!(ty, DataType::App | DataType::Pdata | DataType::Query) && e == -47,
                "{ty} in a value: {e}"
            ),
        }
    }
}

#[test]
fn other_types_are_not_supported() {
    for ty in [DataType::Buffer, DataType::Kval] {
        assert_eq!(elem_size(ty), None, "{ty}");
    }
    // SAFETY: no storage is read for a type without a conversion
    let r = unsafe { read_elem(DataType::Buffer, [0u8; 64].as_ptr()) };
    assert_eq!(r, Err(-47));
}

#[test]
fn another_librarys_cpuset_or_topology_is_not_supported() {
    let source = c"other".as_ptr() as *mut std::ffi::c_char;
    let c = pmix_cpuset_t {
        source,
        bitmap: std::ptr::null_mut(),
    };
    // SAFETY: a cpuset of another source: only its source is read
    let r = unsafe { read_elem(DataType::ProcCpuset, (&c as *const pmix_cpuset_t).cast()) };
    assert_eq!(r, Err(-47));
    let t = pmix_topology_t {
        source,
        topology: std::ptr::null_mut(),
    };
    // SAFETY: as above
    let r = unsafe { read_elem(DataType::Topo, (&t as *const pmix_topology_t).cast()) };
    assert_eq!(r, Err(-47));
}

#[test]
fn a_panic_in_an_export_body_is_pmix_error() {
    let r: i32 = pmix::guard::guarded("test", || panic!("boom"));
    assert_eq!(r, -1);
    let p: *mut u8 = pmix::guard::guarded("test", || panic!("boom"));
    assert!(p.is_null());
}
