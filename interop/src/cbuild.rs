//! Building the C programs of this package's `c/` folder: against the system libpmix
//! ([`build_c`], once per process), against another libpmix file
//! ([`build_with_lib`]), or with any compiler ([`compile_c`]). The bottom
//! of the kit's C side: the harness ([`crate::interop`]) and the live grid
//! ([`crate::hosts::grid`]) both build through it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `c/<name>` of this package (the repository's `interop/c/`; an
/// installed `pmixw` has them in its copy of the package).
pub fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("c").join(name)
}

/// The compiler and linker flags of the system libpmix (`pkg-config
/// --cflags --libs pmix`), or what to install.
pub fn pmix_flags() -> Result<Vec<String>, String> {
    let out = Command::new("pkg-config")
        .args(["--cflags", "--libs", "pmix"])
        .output()
        .map_err(|e| format!("cannot run pkg-config ({e}); install it: apt-get install -y pkg-config libpmix-dev libpmix-bin"))?;
    if !out.status.success() {
        return Err(format!(
            "pkg-config cannot find pmix: {}install the C reference library: apt-get install -y libpmix-dev libpmix-bin",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(String::from)
        .collect())
}

/// Compile one C program of `interop/c/` against the system libpmix
/// (once per process and directory; concurrent callers wait for it).
pub fn build_c(name: &str, out_dir: &Path) -> Result<PathBuf, String> {
    use std::collections::HashMap;
    use std::sync::Mutex;
    static BUILT: Mutex<Option<HashMap<PathBuf, Result<PathBuf, String>>>> = Mutex::new(None);
    let exe = out_dir.join(name);
    let mut built = BUILT.lock().unwrap_or_else(|p| p.into_inner());
    let map = built.get_or_insert_with(HashMap::new);
    if let Some(r) = map.get(&exe) {
        return r.clone();
    }
    let r = compile(name, out_dir, &exe);
    map.insert(exe, r.clone());
    r
}

fn compile(name: &str, out_dir: &Path, exe: &Path) -> Result<PathBuf, String> {
    let mut extra: Vec<String> = ["-Wall", "-Wno-unused-function", "-pthread"]
        .map(String::from)
        .to_vec();
    extra.extend(pmix_flags()?);
    extra.push("-lm".into());
    debug_assert_eq!(exe.parent(), Some(out_dir));
    compile_c(Path::new("cc"), name, exe, &extra)
}

/// The build directory for the harness's C programs.
pub fn default_out_dir() -> PathBuf {
    crate::build_root().join("interop-c")
}

/// Compile `interop/c/<name>.c` into `exe` with `compiler` and
/// `extra` arguments after the source; built under a private name, then
/// renamed, so that no other process runs a half-written file.
pub fn compile_c(
    compiler: &Path,
    name: &str,
    exe: &Path,
    extra: &[String],
) -> Result<PathBuf, String> {
    compile_file(compiler, &script(&format!("{name}.c")), exe, extra)
}

/// [`compile_c`] of any C file `src` (a program from outside this
/// package: Debian's OpenPMIx examples, built at test time).
pub fn compile_file(
    compiler: &Path,
    src: &Path,
    exe: &Path,
    extra: &[String],
) -> Result<PathBuf, String> {
    let name = src
        .file_stem()
        .ok_or("source path without a name")?
        .to_string_lossy();
    let dir = exe.parent().ok_or("executable path without a directory")?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    // private to this call: two threads of one test process may build the
    // same program at once (each then renames its own finished file)
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".{name}.{}.{call}.tmp", std::process::id()));
    let o = Command::new(compiler)
        .args(["-O1", "-o"])
        .arg(&tmp)
        .arg(src)
        .args(extra)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", compiler.display()))?;
    if !o.status.success() {
        return Err(format!(
            "{} {name}.c: {}",
            compiler.display(),
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    std::fs::rename(&tmp, exe).map_err(|e| format!("{}: {e}", exe.display()))?;
    Ok(exe.to_path_buf())
}

/// Compile `interop/c/<name>.c` with `cc` against libpmix 4.2.2's
/// public headers, linked to the library file `lib` (no pkg-config file
/// ships with 5.0.11's), with an rpath to its directory.
pub fn build_with_lib(name: &str, lib: &Path, out: &Path) -> Result<PathBuf, String> {
    let cflags = Command::new("pkg-config")
        .args(["--cflags", "pmix"])
        .output()
        .map_err(|e| format!("pkg-config: {e}"))?;
    let dir = lib.parent().ok_or("library path without a directory")?;
    // 4.2.2's public headers only: its private struct layouts are not
    // another version's (interop/c/common.h)
    let mut extra = vec!["-pthread".to_string(), "-DPMIXW_PUBLIC_ONLY".into()];
    extra.extend(
        String::from_utf8_lossy(&cflags.stdout)
            .split_whitespace()
            .map(String::from),
    );
    extra.push(lib.display().to_string());
    extra.push(format!("-Wl,-rpath,{}", dir.display()));
    extra.push("-lm".into());
    let exe = out.join(format!("{name}-{}", lib_tag(lib)));
    compile_c(Path::new("cc"), name, &exe, &extra)
}

fn lib_tag(lib: &Path) -> String {
    // a short stable tag of the library's path, for the executable's name
    let h = lib
        .to_string_lossy()
        .bytes()
        .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
    format!("{h:08x}")
}
