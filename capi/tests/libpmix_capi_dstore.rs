//! pmix-capi's server offers libpmix 4.2.x clients the ds21 shared-memory
//! store, as libpmix 4.2.2's server does (issue 35; spec-notes/capi.md
//! "The server", spec-notes/dstore.md): interop/c/capi_server.c built
//! once against the system libpmix and once against ours, with
//! `CAPI_SERVER_ENV=1` (it prints what setup_fork set, and what of the
//! stores is in its tmpdir after register_nspace, deregister_nspace and
//! finalize), hosts two libpmix 4.2.2 ranks of interop/c/ds_client.c
//! (job-level and own keys, two keys put, fence with data, every peer's
//! keys, a key not put). Both runs: the same gds environment (masked:
//! the tmpdir, the server's pid), the same store files, nothing left
//! after deregister_nspace, the same client lines (values included), and
//! libpmix's own verbose output showing each client took ds21 and read
//! every peer's keys without asking the server; with the host's
//! `PMIX_MCA_gds=hash`, no store on either.

use pmix_test_kit::{cbuild, ds_client, hosts, interop, process};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

mod common;
use common::our_lib;

/// The build directory, the host built on libpmix and on ours, the client.
fn built() -> Option<(PathBuf, PathBuf, PathBuf, PathBuf)> {
    process::require("cc and libpmix 4.2.2", hosts::libpmix4_dev())?;
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capi_dstore");
    std::fs::create_dir_all(&out).unwrap();
    static BUILT: std::sync::Mutex<Option<(PathBuf, PathBuf, PathBuf)>> =
        std::sync::Mutex::new(None);
    let mut b = BUILT.lock().unwrap_or_else(|p| p.into_inner());
    let (theirs, ours, client) = b
        .get_or_insert_with(|| {
            let lib = our_lib(&out);
            let theirs = interop::build_c("capi_server", &out).unwrap_or_else(|e| panic!("{e}"));
            let ours = cbuild::build_with_lib("capi_server", &lib, &out.join("ours"))
                .unwrap_or_else(|e| panic!("{e}"));
            let client = interop::build_c("ds_client", &out).unwrap_or_else(|e| panic!("{e}"));
            (theirs, ours, client)
        })
        .clone();
    Some((out, theirs, ours, client))
}

/// What one run showed.
struct Run {
    /// setup_fork's gds variables and the store listings, masked.
    gds: Vec<String>,
    /// The clients' lines, sorted.
    clients: Vec<String>,
    stdout: String,
    stderr: String,
}

/// `host <tmp> 2 ds_client` with libpmix's client verbose output on and
/// `env`; the tmpdir made fresh.
fn run(host: &Path, tmp: &Path, client: &Path, env: &[(&str, &str)]) -> Run {
    let _ = std::fs::remove_dir_all(tmp);
    std::fs::create_dir_all(tmp).unwrap();
    let mut c = Command::new(host);
    c.arg(tmp)
        .arg("2")
        .arg(client)
        .env("CAPI_SERVER_ENV", "1")
        .env("PMIX_MCA_gds_base_verbose", "2")
        .env("PMIX_MCA_pmix_client_get_verbose", "2")
        .env_remove("PMIX_MCA_gds")
        .env_remove("CLIENT_LD_LIBRARY_PATH")
        .envs(env.iter().copied());
    for (v, _) in pmix_codec::select::SERVER_URI_VARS {
        c.env_remove(v);
    }
    let child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let o: Output = process::output_within(child, process::HANG, "capi_server ds_client");
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        o.status.success(),
        "{} failed: {}\n{stdout}{stderr}",
        host.display(),
        o.status
    );
    let tmp_s = tmp.to_str().unwrap();
    let gds = stdout
        .lines()
        .filter(|l| {
            l.starts_with("left after ")
                || ["PMIX_GDS_MODULE=", "PMIX_DSTORE_", "PMIX_MCA_gds"]
                    .iter()
                    .any(|v| {
                        l.starts_with("env ")
                            && l.split(' ').nth(2).is_some_and(|e| e.starts_with(v))
                    })
        })
        .map(|l| mask(l, tmp_s))
        .collect();
    let mut clients: Vec<String> = stdout
        .lines()
        .filter(|l| l.starts_with("ok ") || l.starts_with("fail") || l.starts_with("rank "))
        .map(String::from)
        .collect();
    clients.sort();
    Run {
        gds,
        clients,
        stdout,
        stderr,
    }
}

/// `line` with the tmpdir as `<tmp>` and the number after each
/// `pmix_dstor_<name>_` (the server's pid) as `<pid>`; a store's meta and
/// data segment files left out of the listings: libpmix's server makes
/// them at the first write, ours at register_nspace.
fn mask(line: &str, tmp: &str) -> String {
    let l = line.replace(tmp, "<tmp>");
    let listing = l.starts_with("left after ");
    l.split(' ')
        .filter(|w| !(listing && (w.contains("/smseg-") || w.contains("/smdataseg-"))))
        .map(mask_pid)
        .collect::<Vec<_>>()
        .join(" ")
}

/// `w` with the digits after each `pmix_dstor_<name>_` as `<pid>`.
fn mask_pid(w: &str) -> String {
    const P: &str = "pmix_dstor_";
    let mut out = String::new();
    let mut rest = w;
    while let Some(at) = rest.find(P) {
        let Some(us) = rest[at + P.len()..].find('_') else {
            break;
        };
        let head = at + P.len() + us + 1;
        out.push_str(&rest[..head]);
        out.push_str("<pid>");
        let digits = rest[head..]
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len() - head);
        rest = &rest[head + digits..];
    }
    out.push_str(rest);
    out
}

/// Both hosts with the host's `PMIX_MCA_gds` as given (None: unset).
fn on_both(tag: &str, gds: Option<&str>) -> Option<(Run, Run)> {
    let (out, theirs, ours, client) = built()?;
    let env: Vec<(&str, &str)> = gds.map(|g| ("PMIX_MCA_gds", g)).into_iter().collect();
    let t = run(
        &theirs,
        &out.join(format!("tmp-{tag}-theirs")),
        &client,
        &env,
    );
    let o = run(&ours, &out.join(format!("tmp-{tag}-ours")), &client, &env);
    for r in [&t, &o] {
        ds_client::assert_checks(&r.stdout, 2);
    }
    assert_eq!(
        t.clients, o.clients,
        "the clients' lines differ (libpmix 4.2.2 left, ours right)"
    );
    Some((t, o))
}

/// With ds12 left out (we build no ds12), libpmix 4.2.2's server and ours
/// give each rank the same gds environment, make the store in the same
/// place, leave nothing of it after deregister_nspace; the clients take
/// ds21 and read job data and every peer's keys from it: no get of a
/// key a rank put takes libpmix's slow path (a request to the server)
/// on either. The control: the same job under ours with the host asking
/// for hash asks the server for peers' keys.
#[test]
fn a_host_offers_libpmix_clients_the_ds21_store_on_ours_as_on_libpmix() {
    let Some((t, o)) = on_both("ds21", Some("^ds12")) else {
        return;
    };
    assert_eq!(
        t.gds, o.gds,
        "the gds environment and store files differ (libpmix 4.2.2 left, ours right)"
    );
    for want in [
        "env 0 PMIX_GDS_MODULE=ds21,hash",
        "env 1 PMIX_DSTORE_21_BASE_PATH=<tmp>/pmix_dstor_ds21_<pid>",
        "left after register_nspace: pmix_dstor_ds21_<pid> pmix_dstor_ds21_<pid>/initial-pmix_shared-segment-0 pmix_dstor_ds21_<pid>/smlockseg-capi-srv",
        "left after deregister_nspace:",
        "left after finalize:",
    ] {
        assert!(o.gds.iter().any(|l| l == want), "no {want:?} in {:#?}", o.gds);
    }
    for (side, r) in [("libpmix", &t), ("ours", &o)] {
        assert_eq!(
            ds_client::job_info_stored_with(&r.stderr, "ds21"),
            2,
            "{side}: {}",
            r.stderr
        );
        assert_eq!(
            ds_client::job_info_stored_with(&r.stderr, "hash"),
            0,
            "{side}"
        );
        assert!(
            r.stderr.contains("gds: dstore fetch"),
            "{side}: {}",
            r.stderr
        );
        assert_eq!(
            ds_client::slow_gets_of_put_keys(&r.stderr),
            vec![],
            "{side}: {}",
            r.stderr
        );
        // each rank read both ranks' numbers
        assert_eq!(
            ds_client::fast_gets(&r.stderr, "ds.num"),
            4,
            "{side}: {}",
            r.stderr
        );
    }
    // the control: under ours without the store, the peers' keys are asked for
    let (out, _, ours, client) = built().unwrap();
    let h = run(
        &ours,
        &out.join("tmp-ds21-control"),
        &client,
        &[("PMIX_MCA_gds", "hash")],
    );
    ds_client::assert_checks(&h.stdout, 2);
    assert_eq!(
        ds_client::job_info_stored_with(&h.stderr, "hash"),
        2,
        "{}",
        h.stderr
    );
    assert!(
        !ds_client::slow_gets_of_put_keys(&h.stderr).is_empty(),
        "{}",
        h.stderr
    );
}

/// A host whose environment asks for hash (`PMIX_MCA_gds=hash`) gets no
/// store, on libpmix 4.2.2 and on ours: the same gds environment
/// (`PMIX_GDS_MODULE=hash`), no store directory at any step, every
/// client on hash.
#[test]
fn a_host_asking_for_hash_gets_no_store_on_ours_as_on_libpmix() {
    let Some((t, o)) = on_both("hash", Some("hash")) else {
        return;
    };
    assert_eq!(t.gds, o.gds, "libpmix 4.2.2 left, ours right");
    assert_eq!(
        o.gds,
        [
            "left after register_nspace:",
            "env 0 PMIX_GDS_MODULE=hash",
            "env 1 PMIX_GDS_MODULE=hash",
            "left after deregister_nspace:",
            "left after finalize:",
        ]
    );
    for r in [&t, &o] {
        assert_eq!(
            ds_client::job_info_stored_with(&r.stderr, "hash"),
            2,
            "{}",
            r.stderr
        );
    }
}

/// Without the host's choice libpmix 4.2.2 offers ds21 and ds12
/// (`PMIX_GDS_MODULE=ds21,ds12,hash`, `PMIX_DSTORE_ESH_BASE_PATH` naming
/// its ds12 store); ours offers what it does with ds12 left out: its
/// lines with every ds12 mention taken away are ours. (A
/// `PMIX_DSTORE_ESH_BASE_PATH` naming no ds12 store makes each 4.2.2
/// client log a PMIX ERROR, so ours gives none.) The clients take ds21
/// on both.
#[test]
fn without_the_hosts_choice_ours_offers_what_libpmix_does_but_ds12() {
    let Some((t, o)) = on_both("default", None) else {
        return;
    };
    let no_ds12: Vec<String> = t
        .gds
        .iter()
        .filter(|l| !l.contains("PMIX_DSTORE_ESH_BASE_PATH="))
        .map(|l| {
            l.replace(",ds12,", ",")
                .split(' ')
                .filter(|w| !w.starts_with("pmix_dstor_ds12_"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    assert_ne!(no_ds12, t.gds, "libpmix offered no ds12: {:#?}", t.gds);
    assert_eq!(
        no_ds12, o.gds,
        "libpmix 4.2.2 without ds12 left, ours right"
    );
    for r in [&t, &o] {
        assert_eq!(
            ds_client::job_info_stored_with(&r.stderr, "ds21"),
            2,
            "{}",
            r.stderr
        );
    }
}
