//! What the capi tests share.

use std::path::{Path, PathBuf};

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
