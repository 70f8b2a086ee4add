//! What the capi tests share (each test file uses part of it).
#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// `pmixw run -n <n> --timeout 120 <cmd>` with `env`, no outer job's
/// server or job id in its environment, LD_LIBRARY_PATH=`lib` if given:
/// its output, within the test kit's hang limit.
pub fn pmixw_output(
    pmixw: &Path,
    cmd: &[&OsStr],
    lib: Option<&Path>,
    n: u32,
    env: &[(&str, &str)],
) -> Output {
    pmixw_output_in(pmixw, cmd, lib, n, env, None)
}

/// [`pmixw_output`] run in the directory `cwd` if given.
pub fn pmixw_output_in(
    pmixw: &Path,
    cmd: &[&OsStr],
    lib: Option<&Path>,
    n: u32,
    env: &[(&str, &str)],
    cwd: Option<&Path>,
) -> Output {
    let mut c = Command::new(pmixw);
    if let Some(d) = cwd {
        c.current_dir(d);
    }
    c.args(["run", "-n", &n.to_string(), "--timeout", "120"])
        .args(cmd)
        .envs(env.iter().copied())
        // an outer job's variables would make pmixw's ranks think they are its
        .env_remove("FLUX_JOB_ID");
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
    pmix_test_kit::process::output_within(
        child,
        pmix_test_kit::process::HANG,
        &format!("pmixw run {cmd:?}"),
    )
}

/// target/<profile>, where cargo put pmixw (and deps/, this package's cdylib).
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().and_then(Path::parent).unwrap().to_path_buf()
}

/// The pmixw binary of the same cargo build (`cargo live` and `cargo test
/// --workspace` build it).
pub fn pmixw() -> Result<PathBuf, String> {
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

/// Our libpmix.so.2 (and libpmix.so to link with) in a directory of its own.
pub fn our_lib(out: &Path) -> PathBuf {
    // the test executable is target/<profile>/deps/<name>; the cdylib
    // cargo built with this test's rlib is beside it (target/<profile>/
    // libpmix.so is only refreshed by a build of the package itself)
    let exe = std::env::current_exe().unwrap();
    let built = exe.parent().unwrap().join("libpmix.so");
    assert!(built.exists(), "{} not built", built.display());
    let dir = out.join("lib");
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["libpmix.so", "libpmix.so.2"] {
        // copied, not linked: another build may replace the original meanwhile
        let tmp = dir.join(format!(".{name}.{}", std::process::id()));
        std::fs::copy(&built, &tmp).unwrap();
        std::fs::rename(&tmp, dir.join(name)).unwrap();
    }
    dir.join("libpmix.so")
}

/// The lines of `theirs` (libpmix's) and `ours` that differ, but for the
/// listed ones: `listed` gives, for a line of libpmix's, the start it is
/// listed under and how many of our lines stand in its place (the start
/// is pushed to `seen`, so that a test can tell a listed difference that
/// no longer shows). Each difference is a line of text naming `what`.
pub fn compare_listed<S: AsRef<str>>(
    what: &str,
    theirs: &[S],
    ours: &[S],
    listed: impl Fn(&str) -> Option<(&'static str, usize)>,
    seen: &mut Vec<&'static str>,
) -> Vec<String> {
    let mut bad = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < theirs.len() || j < ours.len() {
        let (a, b) = (
            theirs.get(i).map(AsRef::as_ref),
            ours.get(j).map(AsRef::as_ref),
        );
        if a.is_some() && a == b {
            i += 1;
            j += 1;
            continue;
        }
        match a.and_then(&listed) {
            Some((l, n)) => {
                seen.push(l);
                i += 1;
                j += n;
            }
            None => {
                bad.push(format!("{what}: libpmix {a:?}, ours {b:?}"));
                i += 1;
                j += 1;
            }
        }
    }
    bad
}

/// valgrind, if on PATH (a skip, or a failure in CI, without it).
pub fn valgrind() -> Option<PathBuf> {
    pmix_test_kit::process::require(
        "valgrind (apt-get install valgrind)",
        pmix_test_kit::hosts::in_path("valgrind").ok_or_else(|| "no valgrind on PATH".to_string()),
    )
}

/// `exe args` on our library (`lib_dir` on LD_LIBRARY_PATH) under
/// valgrind `vg`, fed `stdin` if given: asserts that valgrind found no
/// invalid read, write or free and no use of uninitialised memory; the
/// program's stdout.
pub fn memcheck(
    vg: &Path,
    exe: &Path,
    args: &[&str],
    lib_dir: &Path,
    stdin: Option<&Path>,
) -> String {
    let mut c = Command::new(vg);
    c.args(["-q", "--error-exitcode=99"])
        .arg(exe)
        .args(args)
        .env("LD_LIBRARY_PATH", lib_dir);
    for (v, _) in pmix_codec::select::SERVER_URI_VARS {
        c.env_remove(v);
    }
    if let Some(f) = stdin {
        c.stdin(std::fs::File::open(f).unwrap());
    }
    let o = pmix_test_kit::process::run_within(&mut c, pmix_test_kit::process::HANG, "valgrind");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(
        o.status.code(),
        Some(99),
        "{} {args:?}: valgrind found errors:\n{err}",
        exe.display()
    );
    assert!(
        !err.contains("Invalid ") && !err.contains("uninitialised"),
        "{} {args:?}:\n{err}",
        exe.display()
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}
