//! PMIx_Query_info of the ABI version keys libpmix 4.2.2 answers itself,
//! against libpmix 4.2.2, differentially: interop/c/capi_abi_query.c run
//! once on libpmix and once with our libpmix.so.2 first on
//! LD_LIBRARY_PATH, as a singleton and as the one rank of `pmixw run -n
//! 1`: the same lines but for the ones [`KNOWN`] lists with the reason
//! (libpmix's faults: spec-notes/divergences.md); a listed line that
//! agrees fails the test, so the list cannot go stale. And
//! PMIx_Allocation_request (and `_nb`) the same way with
//! interop/c/capi_alloc.c: relayed to the server, whose answer the `_nb`
//! form's callback gets; every line the same.

mod common;
use common::{our_lib, pmixw_output};
use pmix_test_kit::{cbuild, hosts, process};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// (the start of libpmix's line, how many lines we print in its place,
/// reason).
const KNOWN: &[(&str, usize, &str)] = &[
    ("before two-in-one rc=-31", 1, "before init libpmix 4.2.2 answers only when the ABI keys it counts equal the number of queries: two in one query are 2 of 1 (INIT); we answer any queries whose keys are all ABI keys"),
    ("after finalize two-in-one rc=-31", 1, "as above"),
    ("before mixed rc=0 n=1", 1, "the same count (1 of 1) lets libpmix answer an ABI key beside PMIX_QUERY_NAMESPACES before init, the namespaces dropped; ours INIT (a key only a server answers)"),
    ("after finalize mixed rc=0 n=1", 1, "as above"),
    ("after init stable rc=-25", 1, "a singleton: libpmix asks its server even when every key is an ABI key (UNREACH); we answer them"),
    ("after init provisional rc=-25", 1, "as above"),
    ("after init two-in-one rc=-25", 1, "as above"),
    ("after init mixed rc=0 n=1", 1, "under a server libpmix's count (1 ABI key, 1 query) leaves no query to send: the namespaces key is dropped; we send it and append the ABI answer"),
];

fn build(name: &str) -> Option<(PathBuf, PathBuf, Option<PathBuf>)> {
    process::require("cc and libpmix 4.2.2", hosts::libpmix4_dev())?;
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&out).unwrap();
    let lib = our_lib(&out);
    let mut extra: Vec<String> = vec!["-Wall".into()];
    extra.extend(cbuild::pmix_flags().unwrap_or_else(|e| panic!("{e}")));
    let exe = cbuild::compile_c(Path::new("cc"), name, &out.join(name), &extra)
        .unwrap_or_else(|e| panic!("{e}"));
    // target/<profile>/deps/<test> → target/<profile>/pmixw
    let pmixw = std::env::current_exe()
        .unwrap()
        .parent()
        .and_then(Path::parent)
        .map(|p| p.join("pmixw"))
        .filter(|p| p.is_file());
    Some((exe, lib.parent().unwrap().to_path_buf(), pmixw))
}

fn singleton(exe: &Path, lib: Option<&Path>) -> Output {
    let mut c = Command::new(exe);
    for (v, _) in pmix_codec::select::SERVER_URI_VARS {
        c.env_remove(v);
    }
    if let Some(l) = lib {
        c.env("LD_LIBRARY_PATH", l);
    }
    process::run_within(&mut c, process::HANG, "capi_abi_query or capi_alloc")
}

fn lines(o: &Output) -> Vec<String> {
    assert!(o.status.success(), "{o:?}");
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(String::from)
        .collect()
}

#[test]
fn the_abi_versions_are_answered_as_libpmix_answers_them() {
    let Some((exe, lib, pmixw)) = build("capi_abi_query") else {
        return;
    };
    let listed = |a: &str| {
        KNOWN
            .iter()
            .find(|(l, _, _)| a.starts_with(l))
            .map(|(l, n, _)| (*l, *n))
    };
    let mut seen = Vec::new();
    let theirs = lines(&singleton(&exe, None));
    let ours = lines(&singleton(&exe, Some(&lib)));
    // the answers themselves: libpmix 4.2.2's "0.0", before init on both
    assert!(
        ours.iter()
            .any(|l| l == "before stable rc=0 n=1 pmix.qry.stabiver=0.0"),
        "{ours:#?}"
    );
    let mut bad = common::compare_listed("singleton", &theirs, &ours, listed, &mut seen);
    match pmixw {
        Some(p) => {
            let run = |l: Option<&Path>| lines(&pmixw_output(&p, &[exe.as_os_str()], l, 1, &[]));
            let (theirs, ours) = (run(None), run(Some(&lib)));
            assert!(
                ours.iter()
                    .any(|l| l == "after init namespaces rc=0 n=1 pmix.qry.ns=(set)"),
                "{ours:#?}"
            );
            bad.extend(common::compare_listed(
                "pmixw run -n 1",
                &theirs,
                &ours,
                listed,
                &mut seen,
            ));
        }
        None => eprintln!(
            "skipped the run under pmixw run: pmixw of this build not built (cargo build -p pmixw)"
        ),
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    let stale: Vec<_> = KNOWN
        .iter()
        .filter(|(l, _, _)| !seen.contains(l))
        .map(|(l, _, _)| l)
        .collect();
    assert!(
        stale.is_empty(),
        "listed differences not seen (no longer differ?): {stale:?}"
    );
}

#[test]
fn allocation_requests_are_relayed_as_libpmix_relays_them() {
    let Some((exe, lib, pmixw)) = build("capi_alloc") else {
        return;
    };
    let (theirs, ours) = (
        lines(&singleton(&exe, None)),
        lines(&singleton(&exe, Some(&lib))),
    );
    assert_eq!(ours, theirs, "as a singleton");
    assert!(
        ours.iter().any(|l| l == "after init nb rc=-25"),
        "{ours:#?}"
    );
    let Some(p) = pmixw else {
        eprintln!(
            "skipped the run under pmixw run: pmixw of this build not built (cargo build -p pmixw)"
        );
        return;
    };
    let run = |l: Option<&Path>| lines(&pmixw_output(&p, &[exe.as_os_str()], l, 1, &[]));
    let (theirs, ours) = (run(None), run(Some(&lib)));
    assert_eq!(ours, theirs, "under pmixw run");
    // the server's answer reached the callback
    assert!(ours.iter().any(|l| l == "callback rc=-47 n=0"), "{ours:#?}");
}
