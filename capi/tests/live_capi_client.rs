//! An unmodified libpmix 4.2.2 client on our libpmix.so.2: test-kit/c/pmix_kvs.c
//! (built against the system libpmix: init, job size, put, commit, fence
//! with data, every rank's key, finalize) under `pmixw run -n 2`, once
//! as built and once with LD_LIBRARY_PATH naming a directory with our
//! library as libpmix.so.2 (for that job only). Both runs must pass the
//! same, and the loader must resolve libpmix.so.2 to ours in the second.
//!
//! pmixw is the binary of the same cargo build (target/<profile>/pmixw,
//! which `cargo live` and `cargo test --workspace` build); without it the
//! test skips (fails under CI).

use pmix_test_kit::{hosts, interop, process};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const N: u32 = 2;

/// target/<profile>, where cargo put this package's cdylib and pmixw.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().and_then(Path::parent).unwrap().to_path_buf()
}

fn pmixw() -> Result<PathBuf, String> {
    let p = profile_dir().join("pmixw");
    if p.is_file() {
        Ok(p)
    } else {
        Err(format!(
            "{} not built (cargo build -p pmixw, or run cargo live)",
            p.display()
        ))
    }
}

/// A directory holding our library as libpmix.so.2 (a copy).
fn our_lib_dir(out: &Path) -> PathBuf {
    let built = profile_dir().join("libpmix.so");
    assert!(built.exists(), "{} not built", built.display());
    let dir = out.join("lib");
    std::fs::create_dir_all(&dir).unwrap();
    let tmp = dir.join(format!(".libpmix.so.2.{}", std::process::id()));
    std::fs::copy(&built, &tmp).unwrap();
    std::fs::rename(&tmp, dir.join("libpmix.so.2")).unwrap();
    dir
}

/// `pmixw run -n N exe`, with LD_LIBRARY_PATH=`lib` if given: success and the output lines, sorted.
fn run(pmixw: &Path, exe: &Path, lib: Option<&Path>) -> (bool, Vec<String>, String) {
    let mut c = Command::new(pmixw);
    c.args(["run", "-n", &N.to_string(), "--timeout", "60"])
        .arg(exe);
    for (v, _) in pmix_codec::select::SERVER_URI_VARS {
        c.env_remove(v);
    }
    if let Some(l) = lib {
        c.env("LD_LIBRARY_PATH", l);
    }
    let child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let o = process::output_within(child, process::HANG, "pmixw run pmix_kvs");
    let mut lines: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(String::from)
        .collect();
    lines.sort();
    (
        o.status.success(),
        lines,
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn an_unmodified_libpmix_client_runs_on_ours_under_pmixw_run() {
    if process::require("cc and libpmix 4.2.2", hosts::libpmix4_dev()).is_none() {
        return;
    }
    let Some(pmixw) = process::require("pmixw of this build", pmixw()) else {
        return;
    };
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capi_live");
    std::fs::create_dir_all(&out).unwrap();
    let exe = interop::build_c("pmix_kvs", &out).unwrap_or_else(|e| panic!("{e}"));
    let lib = our_lib_dir(&out);

    // the loader takes ours when LD_LIBRARY_PATH names its directory
    let trace = Command::new(&exe)
        .env("LD_LIBRARY_PATH", &lib)
        .env("LD_TRACE_LOADED_OBJECTS", "1")
        .output()
        .unwrap();
    let trace = String::from_utf8_lossy(&trace.stdout);
    let want = format!("libpmix.so.2 => {}", lib.join("libpmix.so.2").display());
    assert!(
        trace.contains(&want),
        "the loader did not take ours:\n{trace}"
    );

    let (ok_c, lines_c, err_c) = run(&pmixw, &exe, None);
    assert!(ok_c, "with libpmix: {lines_c:?}\n{err_c}");
    let (ok, lines, err) = run(&pmixw, &exe, Some(&lib));
    assert!(ok, "with ours: {lines:?}\n{err}");
    let want: Vec<String> = (0..N)
        .map(|r| format!("pmix rank {r} of {N}: kvs ok"))
        .collect();
    assert_eq!(lines_c, want, "libpmix's run");
    assert_eq!(lines, want, "our run prints what libpmix's does");
}
