//! What interop/c/ds_client.c (a libpmix 4.2.2 rank reading job data,
//! putting two keys, fencing, reading every peer's keys and one key a
//! peer did not put) prints, and what libpmix's verbose output
//! (`PMIX_MCA_pmix_client_get_verbose=2`, `PMIX_MCA_gds_base_verbose=2`)
//! says of where its gets were answered: the checks the ds21 store's live
//! tests share, on one node and across nodes.

use std::path::Path;

/// Every rank of an `n`-rank job of ds_client passed every check: its
/// own lines (`rank r: 0 failures`, no `fail`), every peer's number read by
/// every rank, each rank's absent key NOT_FOUND, and the job-level lines
/// once a rank.
pub fn assert_checks(out: &str, n: u32) {
    assert!(!out.lines().any(|l| l.starts_with("fail")), "{out}");
    let lines = |prefix: &str| out.lines().filter(|l| l.starts_with(prefix)).count();
    for r in 0..n {
        assert!(out.contains(&format!("rank {r}: 0 failures")), "{out}");
        // every rank read rank r's number
        assert_eq!(
            out.matches(&format!("ok peer_num {r} {}\n", r * 7)).count(),
            n as usize,
            "{out}"
        );
        let peer = (r + 1) % n;
        let absent = format!("ds.str.{}", (peer + 1) % n);
        assert!(
            out.contains(&format!("ok not_found {peer} {absent} ")),
            "{out}"
        );
    }
    assert_eq!(lines("ok not_found "), n as usize, "{out}");
    assert_eq!(lines(&format!("ok all_peers {n}")), n as usize, "{out}");
    for k in ["job_size", "univ_size", "local_size", "local_rank"] {
        assert_eq!(lines(&format!("ok {k} ")), n as usize, "{k}\n{out}");
    }
}

/// Gets of `key` that libpmix answered on its fast path (from the
/// client's own store or the shared one, no request to a server).
pub fn fast_gets(err: &str, key: &str) -> usize {
    let end = format!("key {key}");
    err.lines()
        .filter(|l| l.contains("trying fastpath for proc") && l.ends_with(&end))
        .count()
}

/// Gets of a key a rank put (`ds.num`, `ds.str.<rank>`) that took
/// libpmix's slow path (own hash, then a request to the server): (rank,
/// key).
pub fn slow_gets_of_put_keys(err: &str) -> Vec<(u32, String)> {
    err.lines()
        .filter_map(|l| {
            let rest = l.split("trying slowpath for proc [").nth(1)?;
            let (proc, key) = rest.split_once("] key ")?;
            let rank: u32 = proc.rsplit(',').next()?.parse().ok()?;
            (key == "ds.num" || key == format!("ds.str.{rank}")).then(|| (rank, key.to_string()))
        })
        .collect()
}

/// The ds21 store directories (`pmix_dstor_ds21_*`) left in `dir`.
pub fn stores_left(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("pmix_dstor_ds21_"))
                .collect()
        })
        .unwrap_or_default()
}

/// How many clients stored the server's job info with the gds module
/// `gds` (`ds21`, `hash`): libpmix's `GDS STORE JOB INFO WITH <gds>` line,
/// one per client (src/client/pmix_client.c).
pub fn job_info_stored_with(err: &str, gds: &str) -> usize {
    err.matches(&format!("GDS STORE JOB INFO WITH {gds}"))
        .count()
}
