//! pmix-wire against the real PMIx libraries: what `pmixw interop` runs,
//! in a package of its own so that `pmixw` can be installed.
//!
//! - [`interop`]: the codec matrix against the system libpmix, with the C
//!   programs of this package's `c/` folder built at run time by
//!   [`cbuild`];
//! - [`hosts`]: the live PMIx hosts (launchers, libpmix and python3-pmix
//!   servers) and the cross-version grid; [`slurm`]: private Slurm clusters;
//! - [`process`]: child processes with hang guards, and what a test does
//!   when its peer is missing.
//!
//! The repository's tests reach these through `pmix-test-kit`, which
//! re-exports them.

pub mod cbuild;
pub mod hosts;
pub mod interop;
pub mod process;
pub mod slurm;

use std::path::{Path, PathBuf};

/// The pmix-wire repository's root when this crate is built inside it (the
/// folder of the workspace's Cargo.toml, where `.ci/setup` puts the venvs
/// under `target/`), else `None`: an installed `pmixw` finds its peers on
/// PATH and through the `PMIXW_*` variables only.
pub fn repo() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?;
    (root.join("interop/Cargo.toml").is_file() && root.join("Cargo.toml").is_file())
        .then(|| root.to_path_buf())
}

/// Where built programs and scratch files go: the repository's `target/`,
/// else a directory of this user's under the system temporary directory.
pub fn build_root() -> PathBuf {
    match repo() {
        Some(r) => r.join("target"),
        None => std::env::temp_dir().join(format!("pmixw-{}", users_id())),
    }
}

fn users_id() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail
    unsafe { libc::geteuid() }
}
