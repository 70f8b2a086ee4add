//! The topology and cpuset calls and the PMIX_PROC_CPUSET / PMIX_TOPO
//! values against libpmix 4.2.2, differentially: interop/c/capi_topo.c
//! (linked with libpmix and hwloc; it reads what the calls return with
//! hwloc's own functions) run once on libpmix and once with our
//! libpmix.so.2 first on LD_LIBRARY_PATH, as a singleton and as each rank
//! of `pmixw run -n 2`: each rank's lines the same, but for the ones
//! [`KNOWN`] lists with the reason (spec-notes/capi.md, "Topology"); a
//! listed line that agrees fails the test, so the list cannot go stale.
//! Then the cases libpmix crashes on, on ours only, against the answers
//! written here.

mod common;
use common::{our_lib, pmixw_output};
use pmix_test_kit::{cbuild, hosts, process};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// (the start of libpmix's line after its rank, how many lines we print
/// in its place, reason).
const KNOWN: &[(&str, usize, &str)] = &[
    ("distances cpus hwloc:5 rc=-1 ", 1, "PMIx_Compute_distances of a cpuset no object covers, in a given topology, under a server: libpmix 4.2.2 asks its server but cannot pack the cpuset (PMIX_ERROR, its cpuset packing as below); we send it, and pass on the server's answer"),
    ("locality other rc=-1366", 1, "PMIx_server_generate_locality_string of another library's cpuset: libpmix's internal PMIX_ERR_TAKE_NEXT_OPTION, ours PMIX_ERR_NOT_FOUND"),
    ("load other rc=-1366", 1, "a source other than hwloc: libpmix answers its internal PMIX_ERR_TAKE_NEXT_OPTION, we the PMIX_ERR_NOT_FOUND its header documents"),
    ("cpuset other rc=-1366", 1, "as above, PMIx_Get_cpuset"),
    ("parse other:1 rc=-1366", 1, "as above, PMIx_Parse_cpuset_string"),
    ("cpuset process pack rc=-1", 2, "libpmix 4.2.2 cannot pack a cpuset with a CPU in it (it takes hwloc_bitmap_list_asprintf's length for an error: PMIX_ERROR, one byte left in the buffer); we pack its list, which libpmix unpacks, and unpack it back"),
    ("parse hwloc:0-3,8 pack rc=-1", 2, "as above"),
    ("parse HWLOC:5 pack rc=-1", 2, "as above"),
    ("parse hwloc:1,3-4,9-11 pack rc=-1", 2, "as above"),
    ("cpuset null copy rc=-47", 1, "libpmix 4.2.2 packs a cpuset without a source (its constructor's) but will not copy it; we copy it as the hwloc cpuset it packs it as"),
    ("cpuset other pack rc=-47 bytes=1", 1, "both refuse another library's cpuset; libpmix leaves a byte of it in the buffer"),
    ("relative HWLOC:CR1 | hwloc:CR1 rc=-1366", 1, "PMIx_Get_relative_locality: libpmix 4.2.2 answers PMIX_ERR_TAKE_NEXT_OPTION with every locality it computes; we answer PMIX_SUCCESS (the same bits)"),
    ("relative CR0 | CR0 rc=-1366", 1, "strings not of hwloc's form: libpmix's internal PMIX_ERR_TAKE_NEXT_OPTION, ours PMIX_ERR_NOT_FOUND; the locality untouched on both"),
    ("relative hwloc:CR0 | other:CR0 rc=-1366", 1, "as above"),
    // after the specific ones: the first entry a line starts with is taken
    ("relative hwloc:", 1, "PMIx_Get_relative_locality: libpmix 4.2.2 answers PMIX_ERR_TAKE_NEXT_OPTION with every locality it computes; we answer PMIX_SUCCESS (the same bits)"),
];

/// Our answers where libpmix 4.2.2 crashes or hands out a destroyed
/// topology (`capi_topo edge`), after the rank: the lines that do not
/// depend on the machine.
const EDGE: &[&str] = &[
    "relative hwloc: | hwloc: rc=0 locality=0x4000",
    "relative hwloc:CR0 | hwloc: rc=0 locality=0x4000",
    "relative hwloc:C:CR | hwloc:C1:CR rc=0 locality=0x4000",
    "edge load NULL rc=-27",
    "edge get_cpuset NULL rc=-27",
    "edge parse NULL rc=-27",
    "edge parse into NULL rc=-27",
    "edge relative NULL rc=-27",
    "edge relative into NULL rc=-27",
    "edge destructed rc=0 source=(null) topology=NULL",
    "edge topo pack rc=0 nonempty=1",
    "edge before distances_nb rc=-31",
    "edge distances into NULL rc=-27",
    "edge distances count NULL rc=-27",
    "edge distances_nb no callback rc=0",
    "distances edge cpus nobitmap rc=-25 n=0",
    "edge locality NULL rc=-27",
    "edge locality into NULL rc=-27",
    "edge locality nosource rc=-27",
];

struct Built {
    exe: PathBuf,
    lib_dir: PathBuf,
    pmixw: Option<PathBuf>,
}

/// Built once per test process (the tests run in parallel threads).
fn build() -> Option<&'static Built> {
    static B: std::sync::OnceLock<Option<Built>> = std::sync::OnceLock::new();
    B.get_or_init(build_once).as_ref()
}

fn build_once() -> Option<Built> {
    process::require("cc and libpmix 4.2.2", hosts::libpmix4_dev())?;
    process::require(
        "hwloc's headers (libhwloc-dev)",
        if Path::new("/usr/include/hwloc.h").is_file() {
            Ok(())
        } else {
            Err("apt-get install -y libhwloc-dev".to_string())
        },
    )?;
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capi_topo");
    std::fs::create_dir_all(&out).unwrap();
    let lib = our_lib(&out);
    let mut extra: Vec<String> = vec!["-Wall".into()];
    extra.extend(cbuild::pmix_flags().unwrap_or_else(|e| panic!("{e}")));
    extra.push("-lhwloc".into());
    let exe = cbuild::compile_c(Path::new("cc"), "capi_topo", &out.join("capi_topo"), &extra)
        .unwrap_or_else(|e| panic!("{e}"));
    // target/<profile>/deps/<test> → target/<profile>/pmixw
    let pmixw = std::env::current_exe()
        .unwrap()
        .parent()
        .and_then(Path::parent)
        .map(|p| p.join("pmixw"))
        .filter(|p| p.is_file());
    Some(Built {
        exe,
        lib_dir: lib.parent().unwrap().to_path_buf(),
        pmixw,
    })
}

fn singleton(b: &Built, ours: bool, args: &[&str]) -> Output {
    let mut c = Command::new(&b.exe);
    c.args(args);
    for (v, _) in pmix_codec::select::SERVER_URI_VARS {
        c.env_remove(v);
    }
    if ours {
        c.env("LD_LIBRARY_PATH", &b.lib_dir);
    }
    process::run_within(&mut c, process::HANG, "capi_topo")
}

/// Each rank's stdout lines in order, the rank prefix taken off.
fn by_rank(o: &Output) -> BTreeMap<String, Vec<String>> {
    let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for l in String::from_utf8_lossy(&o.stdout).lines() {
        let (rank, rest) = l.split_once(' ').unwrap_or((l, ""));
        m.entry(rank.to_string())
            .or_default()
            .push(rest.to_string());
    }
    m
}

/// The differences not listed in [`KNOWN`]; marks the listed ones seen.
fn compare(
    what: &str,
    theirs: &[String],
    ours: &[String],
    seen: &mut Vec<&'static str>,
) -> Vec<String> {
    let listed = |a: &str| {
        KNOWN
            .iter()
            .find(|(l, _, _)| a.starts_with(l))
            .map(|(l, n, _)| (*l, *n))
    };
    common::compare_listed(what, theirs, ours, listed, seen)
}

fn compare_runs(
    what: &str,
    ranks: usize,
    theirs: &Output,
    ours: &Output,
    seen: &mut Vec<&'static str>,
) -> Vec<String> {
    let (t, o) = (by_rank(theirs), by_rank(ours));
    assert_eq!(
        t.keys().collect::<Vec<_>>(),
        o.keys().collect::<Vec<_>>(),
        "{what}: the ranks that printed"
    );
    assert_eq!(
        t.len(),
        ranks,
        "{what}: the ranks libpmix's run printed: {theirs:?}"
    );
    let mut bad = Vec::new();
    for (rank, lines) in &t {
        bad.extend(compare(
            &format!("{what} rank {rank}"),
            lines,
            &o[rank],
            seen,
        ));
    }
    bad
}

#[test]
fn the_topology_calls_answer_as_libpmix_does() {
    let Some(b) = build() else { return };
    let mut seen = Vec::new();
    let (theirs, ours) = (singleton(b, false, &[]), singleton(b, true, &[]));
    assert!(
        theirs.status.success() && ours.status.success(),
        "{theirs:?}\n{ours:?}"
    );
    let mut bad = compare_runs("singleton", 1, &theirs, &ours, &mut seen);
    // the topology, the binding and the parsed cpusets are hwloc's on both
    let o = String::from_utf8_lossy(&ours.stdout);
    for want in [
        "0 load rc=0 source=hwloc:",
        "0 cpuset process rc=0 source=hwloc bitmap=",
        "0 topo unpack rc=0 source=hwloc depth=",
        "0 locality process rc=0 string=",
        "0 distances cpus hwloc:0 cb rc=0",
    ] {
        assert!(o.contains(want), "ours printed no {want:?}:\n{o}");
    }
    match &b.pmixw {
        Some(pmixw) => {
            let run = |lib: Option<&Path>| pmixw_output(pmixw, &[b.exe.as_os_str()], lib, 2, &[]);
            let (theirs, ours) = (run(None), run(Some(&b.lib_dir)));
            assert!(
                theirs.status.success() && ours.status.success(),
                "{theirs:?}\n{ours:?}"
            );
            bad.extend(compare_runs("pmixw run -n 2", 2, &theirs, &ours, &mut seen));
        }
        None => eprintln!(
            "skipped the run under pmixw run: pmixw of this build not built (cargo build -p pmixw)"
        ),
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    let stale: Vec<_> = KNOWN
        .iter()
        .filter(|(l, n, _)| *n > 0 && !seen.contains(l))
        .map(|(l, _, _)| l)
        .collect();
    assert!(
        stale.is_empty(),
        "listed differences not seen (no longer differ?): {stale:?}"
    );
}

#[test]
fn what_libpmix_crashes_on_answers_on_ours() {
    let Some(b) = build() else { return };
    let o = singleton(b, true, &["edge"]);
    assert!(o.status.success(), "{o:?}");
    let lines = by_rank(&o).remove("0").unwrap_or_default();
    for want in EDGE {
        assert!(lines.iter().any(|l| l == want), "no {want:?} in {lines:#?}");
    }
    // the topology PMIx_Load_topology hands out outlives a destruct of it
    let loads: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("edge load"))
        .collect();
    assert_eq!(loads.len(), 3, "{lines:#?}");
    let after = loads[2].strip_prefix("edge load after destruct ").unwrap();
    let first = loads[1].strip_prefix("edge load ").unwrap();
    assert_eq!(after, first);
    assert!(first.starts_with("rc=0 source=hwloc:"), "{first}");
}

/// Under valgrind, on our library: the topology calls, the cpusets and
/// topologies packed, unpacked, copied and destructed, and the edge
/// cases, make no invalid read, write or free and use no uninitialised
/// memory (valgrind comes from .ci/setup).
#[test]
fn the_topology_calls_are_clean_under_valgrind() {
    let Some(vg) = common::valgrind() else { return };
    let Some(b) = build() else { return };
    for args in [&[][..], &["edge"][..]] {
        let out = common::memcheck(&vg, &b.exe, args, &b.lib_dir, None);
        assert!(out.contains("load rc=0 source=hwloc:"), "{args:?}: {out}");
    }
}

/// The layout of hwloc's objects the library reads (`pmix::hwloc::Obj`,
/// `InfoS`, written from hwloc 2's public `hwloc.h`) and the constants it
/// names, against the installed `hwloc.h` (libhwloc-dev, the hwloc 2 that
/// libpmix 4.2.2 links): a C program generated here from the Rust side
/// prints the header's sizeof, offsetof and values.
#[test]
fn hwlocs_object_layout_is_the_headers() {
    use pmix::hwloc::{self, InfoS, Obj};
    use std::fmt::Write;
    use std::mem::{offset_of, size_of};
    if build().is_none() {
        return;
    }
    macro_rules! rows {
        ($c:literal, $r:ty: $($f:ident $(as $cf:literal)?),*) => {{
            let mut v = vec![(format!("sizeof({})", $c), size_of::<$r>() as i64)];
            $(
                let cf = [$($cf,)? stringify!($f)][0];
                v.push((format!("offsetof({}, {cf})", $c), offset_of!($r, $f) as i64));
            )*
            v
        }};
    }
    let mut want = rows!("struct hwloc_obj", Obj: r#type as "type", subtype, os_index, name,
        total_memory, attr, depth, logical_index, next_cousin, prev_cousin, parent, sibling_rank,
        next_sibling, prev_sibling, arity, children, first_child, last_child, symmetric_subtree,
        memory_arity, memory_first_child, io_arity, io_first_child, misc_arity, misc_first_child,
        cpuset, complete_cpuset, nodeset, complete_nodeset, infos, infos_count, userdata, gp_index);
    want.extend(rows!("struct hwloc_info_s", InfoS: name, value));
    for (n, v) in [
        ("HWLOC_OBJ_PACKAGE", hwloc::OBJ_PACKAGE),
        ("HWLOC_OBJ_CORE", hwloc::OBJ_CORE),
        ("HWLOC_OBJ_PU", hwloc::OBJ_PU),
        ("HWLOC_OBJ_L1CACHE", hwloc::OBJ_L1CACHE),
        ("HWLOC_OBJ_L2CACHE", hwloc::OBJ_L2CACHE),
        ("HWLOC_OBJ_L3CACHE", hwloc::OBJ_L3CACHE),
        ("HWLOC_OBJ_NUMANODE", hwloc::OBJ_NUMANODE),
        ("HWLOC_TYPE_DEPTH_NUMANODE", hwloc::DEPTH_NUMANODE),
        ("HWLOC_TYPE_DEPTH_OS_DEVICE", hwloc::DEPTH_OS_DEVICE),
        ("HWLOC_OBJ_OSDEV_BLOCK", hwloc::OSDEV_BLOCK),
        ("HWLOC_OBJ_OSDEV_GPU", hwloc::OSDEV_GPU),
        ("HWLOC_OBJ_OSDEV_NETWORK", hwloc::OSDEV_NETWORK),
        ("HWLOC_OBJ_OSDEV_OPENFABRICS", hwloc::OSDEV_OPENFABRICS),
        ("HWLOC_OBJ_OSDEV_DMA", hwloc::OSDEV_DMA),
        ("HWLOC_OBJ_OSDEV_COPROC", hwloc::OSDEV_COPROC),
        ("HWLOC_CPUBIND_PROCESS", hwloc::CPUBIND_PROCESS),
        ("HWLOC_CPUBIND_THREAD", hwloc::CPUBIND_THREAD),
        (
            "HWLOC_TYPE_FILTER_KEEP_IMPORTANT",
            hwloc::FILTER_KEEP_IMPORTANT,
        ),
    ] {
        want.push((n.to_string(), i64::from(v)));
    }
    // the osdev type is the first member of the attributes' union
    want.push(("offsetof(union hwloc_obj_attr_u, osdev.type)".into(), 0));
    let mut c = String::from(
        "/* generated by capi/tests/libpmix_capi_topo.rs */\n#include <hwloc.h>\n#include <stddef.h>\n#include <stdio.h>\nint main(void) {\n",
    );
    for (expr, _) in &want {
        writeln!(
            c,
            "    printf(\"%s=%lld\\n\", \"{expr}\", (long long) ({expr}));"
        )
        .unwrap();
    }
    c.push_str("    return 0;\n}\n");
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capi_hwloc_abi");
    std::fs::create_dir_all(&out).unwrap();
    let src = out.join("capi_hwloc_abi.c");
    std::fs::write(&src, c).unwrap();
    let exe = cbuild::compile_file(Path::new("cc"), &src, &out.join("capi_hwloc_abi"), &[])
        .unwrap_or_else(|e| panic!("{e}"));
    let o = Command::new(&exe).output().unwrap();
    assert!(o.status.success(), "{o:?}");
    let text = String::from_utf8(o.stdout).unwrap();
    let got: BTreeMap<&str, i64> = text
        .lines()
        .filter_map(|l| l.rsplit_once('='))
        .map(|(k, v)| (k, v.parse().unwrap()))
        .collect();
    let bad: Vec<String> = want
        .iter()
        .filter(|(k, v)| got.get(k.as_str()) != Some(v))
        .map(|(k, v)| format!("{k}: ours {v}, hwloc.h {:?}", got.get(k.as_str())))
        .collect();
    assert_eq!(got.len(), want.len(), "{text}");
    assert!(bad.is_empty(), "layout differences:\n{}", bad.join("\n"));
}
