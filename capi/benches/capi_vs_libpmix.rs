//! Benchmark: one C program (`interop/c/capi_bench.c`, built here with
//! `cc -O2` against libpmix 4.2.2's headers) on libpmix 4.2.2 and on
//! pmix-wire's libpmix.so.2 in the same run (`cargo bench -p pmix-capi`;
//! needs `target/<profile>/pmixw`: `cargo build --release -p pmixw`). Each
//! of `BENCH_ROUNDS` rounds (default 3) runs it as the one rank of
//! `pmixw run -n 1`, first on libpmix, then with LD_LIBRARY_PATH naming a
//! directory holding our library as libpmix.so.2 (that process only). The
//! program times its rank's PMIx_Init … PMIx_Finalize (with a job-size
//! get, a put, a commit and a fence between) and a round of
//! PMIx_Data_pack + PMIx_Data_unpack of four infos (the best of five
//! loops of `BENCH_CODEC_ROUNDS`, default 20000). The figures are the best
//! over the rounds; the bench prints them and the ratio ours/libpmix.
//!
//! This is not a test: no speed is asserted. A run that fails or prints
//! no figure exits with status 1.

use std::path::{Path, PathBuf};
use std::process::{exit, Command};

const C_SOURCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../interop/c/capi_bench.c");
const OUT_DIR: &str = env!("CARGO_TARGET_TMPDIR");

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// target/<profile>, where cargo put pmixw and this package's cdylib.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps")
        .to_path_buf()
}

fn fail(msg: String) -> ! {
    eprintln!("!! {msg}");
    exit(1)
}

fn build() -> PathBuf {
    let flags = Command::new("pkg-config")
        .args(["--cflags", "--libs", "pmix"])
        .output()
        .unwrap_or_else(|e| fail(format!("pkg-config: {e}")));
    let exe = Path::new(OUT_DIR).join("capi_bench");
    let o = Command::new("cc")
        .args(["-O2", "-o"])
        .arg(&exe)
        .arg(C_SOURCE)
        .args(String::from_utf8_lossy(&flags.stdout).split_whitespace())
        .output()
        .unwrap_or_else(|e| fail(format!("cc: {e}")));
    if !o.status.success() {
        fail(format!("cc: {}", String::from_utf8_lossy(&o.stderr)));
    }
    exe
}

/// Our library as libpmix.so.2 in a directory of its own.
fn our_lib() -> PathBuf {
    let built = profile_dir().join("libpmix.so");
    if !built.is_file() {
        fail(format!("{} not built", built.display()));
    }
    let dir = Path::new(OUT_DIR).join("capi-bench-lib");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| fail(format!("{e}")));
    std::fs::copy(&built, dir.join("libpmix.so.2")).unwrap_or_else(|e| fail(format!("{e}")));
    dir
}

/// One run: (init..finalize µs, pack+unpack ns).
fn run(pmixw: &Path, exe: &Path, lib: Option<&Path>, codec_rounds: u64) -> (f64, f64) {
    let mut c = Command::new(pmixw);
    c.args(["run", "-n", "1", "--timeout", "300"])
        .arg(exe)
        .arg(codec_rounds.to_string());
    for (v, _) in pmix_codec::select::SERVER_URI_VARS {
        c.env_remove(v);
    }
    if let Some(l) = lib {
        c.env("LD_LIBRARY_PATH", l);
    }
    let o = c
        .output()
        .unwrap_or_else(|e| fail(format!("pmixw run: {e}")));
    let out = String::from_utf8_lossy(&o.stdout);
    let field = |k: &str| -> f64 {
        out.lines()
            .find_map(|l| l.strip_prefix(k))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| {
                fail(format!(
                    "no {k} (exit {:?}): {out}{}",
                    o.status,
                    String::from_utf8_lossy(&o.stderr)
                ))
            })
    };
    if !o.status.success() {
        fail(format!("capi_bench failed ({:?}): {out}", o.status));
    }
    (field("init_finalize_us "), field("pack_unpack_ns "))
}

fn main() {
    let pmixw = profile_dir().join("pmixw");
    if !pmixw.is_file() {
        fail(format!(
            "{} not built (cargo build --release -p pmixw)",
            pmixw.display()
        ));
    }
    let exe = build();
    let lib = our_lib();
    let rounds = env_num("BENCH_ROUNDS", 3);
    let codec_rounds = env_num("BENCH_CODEC_ROUNDS", 20000);
    let best = |a: (f64, f64), b: (f64, f64)| (a.0.min(b.0), a.1.min(b.1));
    let (mut theirs, mut ours) = ((f64::MAX, f64::MAX), (f64::MAX, f64::MAX));
    for _ in 0..rounds {
        theirs = best(theirs, run(&pmixw, &exe, None, codec_rounds));
        ours = best(ours, run(&pmixw, &exe, Some(&lib), codec_rounds));
    }
    println!("capi_vs_libpmix: best of {rounds} rounds, one rank of pmixw run -n 1");
    println!(
        "{:<34} {:>12} {:>12} {:>8}",
        "", "libpmix", "ours", "ours/C"
    );
    println!(
        "{:<34} {:>12.1} {:>12.1} {:>8.2}",
        "PMIx_Init..Finalize (us)",
        theirs.0,
        ours.0,
        ours.0 / theirs.0
    );
    println!(
        "{:<34} {:>12.1} {:>12.1} {:>8.2}",
        "Data_pack+unpack, 4 infos (ns)",
        theirs.1,
        ours.1,
        ours.1 / theirs.1
    );
}
