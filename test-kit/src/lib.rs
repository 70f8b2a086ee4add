//! pmix-wire's test kit (`publish = false`): the fixtures the repository's
//! tests, benches and fuzz targets share.
//!
//! - re-exported from `pmix-interop` (what `pmixw interop` runs, published
//!   so that `pmixw` can be installed): [`interop`], the C harness against
//!   the system libpmix (built from `interop/c/` at run time by
//!   [`cbuild`]) and the codec matrix; [`hosts`], the live PMIx hosts
//!   (launchers, libpmix and python3-pmix servers) and the cross-version
//!   grid; [`slurm`], private Slurm clusters; [`process`], child processes
//!   with hang guards, and what a test does when its peer is missing;
//! - [`pair`]: a client and a server core joined in memory on a virtual
//!   clock; [`hostile`]: misbehaving peers;
//! - [`targets`], [`decode_paths`], [`differential`], [`server_target`]:
//!   the bodies of the fuzz targets, replayed on stable by the tests;
//! - [`captures`]: the annotated capture files;
//! - [`bench`](mod@bench): what the server benches share; [`load`]: the
//!   server-load simulator behind `cargo bench --bench server_load`;
//!   [`wireup`]: one timed job on the private Slurm cluster with its
//!   launchers' CPU, for the multi-node wireup benches;
//!   [`samples`]: a value of every type.
//!
//! No stability promise: this crate changes with the tests.

pub use pmix_interop::{cbuild, hosts, interop, process, slurm};

pub mod bench;
pub mod captures;
pub mod decode_paths;
pub mod differential;
pub mod ds_client;
pub mod hostile;
pub mod load;
pub mod pair;
pub mod samples;
pub mod server_target;
pub mod targets;
pub mod wireup;

/// The repository's root (the folder of the workspace's Cargo.toml), where
/// `corpus/`, `interop/c/` and `target/` are found.
pub fn repo() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("test-kit/ has a parent")
        .to_path_buf()
}
