//! The ds21 shared-memory store (issue 26 item 5, spec-notes/dstore.md)
//! read by unmodified libpmix 4.2.2 clients under `pmixw run --dstore`:
//! test-kit/c/ds_client.c reads job-level and its own rank-level keys,
//! puts two keys, commits, fences with data, reads every peer's keys and,
//! PMIX_OPTIONAL, a key its peer did not put (NOT_FOUND). libpmix's own
//! verbose output says which store the client took and where each get was
//! answered: with the store every peer's key is answered on the fast path
//! (the shared store, no request to the server); without it (the control
//! run) they are not.

use pmix_test_kit::interop::{build_c, default_out_dir};
use pmix_test_kit::process;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const N: u32 = 3;

fn client() -> Option<PathBuf> {
    process::require(
        "libpmix 4.2.2 (pkg-config pmix) for test-kit/c/ds_client.c",
        build_c("ds_client", &default_out_dir()),
    )
}

/// `pmixw run -n N [--dstore] ds_client` with libpmix's get and gds
/// verbose output on, in its own TMPDIR.
fn run(exe: &Path, dstore: bool, tmp: &Path) -> Output {
    std::fs::create_dir_all(tmp).unwrap();
    let n = N.to_string();
    let mut args = vec!["run", "-n", &n, "--timeout", "100"];
    if dstore {
        args.push("--dstore");
    }
    let c = Command::new(env!("CARGO_BIN_EXE_pmixw"))
        .args(&args)
        .arg(exe)
        .env("TMPDIR", tmp)
        .env_remove("PMIXW_DSTORE")
        .env("PMIX_MCA_pmix_client_get_verbose", "2")
        .env("PMIX_MCA_gds_base_verbose", "2")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    process::output_within(c, process::HANG, &format!("pmixw run {args:?}"))
}

/// The ranks' checks all passed.
fn assert_checks(o: &Output) {
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(!out.lines().any(|l| l.starts_with("fail")), "{out}");
    for r in 0..N {
        assert!(out.contains(&format!("rank {r}: 0 failures")), "{out}");
        for k in 0..N {
            assert!(
                out.contains(&format!("ok peer_num {k} {}\n", k * 7)),
                "{out}"
            );
        }
        let peer = (r + 1) % N;
        let absent = format!("ds.str.{}", (peer + 1) % N);
        assert!(
            out.contains(&format!("ok not_found {peer} {absent} NOT-FOUND\n")),
            "{out}"
        );
    }
    assert_eq!(
        out.matches(&format!("ok all_peers {N}\n")).count(),
        N as usize
    );
    for k in ["job_size", "univ_size", "local_size", "local_rank"] {
        assert_eq!(
            out.lines()
                .filter(|l| l.starts_with(&format!("ok {k} ")))
                .count(),
            N as usize,
            "{k}\n{out}"
        );
    }
}

/// Gets of a key a rank put (`ds.num`, `ds.str.<rank>`) that took libpmix's
/// slow path (own hash, then a request to the server): (rank, key).
fn slow_gets_of_put_keys(err: &str) -> Vec<(u32, String)> {
    err.lines()
        .filter_map(|l| {
            let rest = l.split("trying slowpath for proc [").nth(1)?;
            let (proc, key) = rest.split_once("] key ")?;
            let rank: u32 = proc.rsplit(',').next()?.parse().ok()?;
            (key == "ds.num" || key == format!("ds.str.{rank}")).then(|| (rank, key.to_string()))
        })
        .collect()
}

fn stores_left(tmp: &Path) -> Vec<String> {
    std::fs::read_dir(tmp)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("pmix_dstor_ds21_"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn libpmix_clients_read_job_and_peer_data_from_the_ds21_store() {
    let Some(exe) = client() else { return };
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("live_dstore_on");
    let o = run(&exe, true, &tmp);
    assert_checks(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    // (a) every client selected ds21 for the server's data (libpmix's
    // pmix_client.c, storing the REQ reply with the server's gds module)
    assert_eq!(
        err.matches("GDS STORE JOB INFO WITH ds21").count(),
        N as usize,
        "{err}"
    );
    assert!(!err.contains("GDS STORE JOB INFO WITH hash"), "{err}");
    // (b) job-level keys and every peer's fenced keys came from the store:
    // the ds21 fetch ran, and no get of a key a rank put left the fast path
    for k in ["pmix.job.size", "pmix.local.size", "ds.num"] {
        assert!(
            err.contains(&format!("gds: dstore fetch `{k}`")),
            "{k}\n{err}"
        );
    }
    let fast = err
        .lines()
        .filter(|l| l.contains("trying fastpath for proc") && l.ends_with("key ds.num"))
        .count();
    assert_eq!(fast, (N * N) as usize, "{err}");
    assert_eq!(slow_gets_of_put_keys(&err), vec![], "{err}");
    // the store's files are gone with the server
    assert_eq!(stores_left(&tmp), Vec::<String>::new());
}

/// The control: the same job without the store takes hash, and its gets
/// of peers' keys leave the fast path (so the test above can fail).
#[test]
fn without_the_store_libpmix_clients_use_hash_and_ask_the_server() {
    let Some(exe) = client() else { return };
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("live_dstore_off");
    let o = run(&exe, false, &tmp);
    assert_checks(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        err.matches("GDS STORE JOB INFO WITH hash").count(),
        N as usize,
        "{err}"
    );
    assert!(!err.contains("gds: dstore fetch"), "{err}");
    assert!(!slow_gets_of_put_keys(&err).is_empty(), "{err}");
    assert_eq!(stores_left(&tmp), Vec::<String>::new());
}
