//! pmix-wire's test kit (`publish = false`): the fixtures the repository's
//! tests, benches, fuzz targets and the `pmixw interop` command share.
//!
//! - [`interop`]: the C harness against the system libpmix (built from
//!   `test-kit/c/` at run time) and the codec matrix;
//! - [`hosts`]: the live PMIx hosts (launchers, libpmix and python3-pmix
//!   servers) and the cross-version grid; [`slurm`]: private Slurm clusters;
//! - [`pair`]: a client and a server core joined in memory on a virtual
//!   clock; [`hostile`]: misbehaving peers;
//! - [`targets`], [`decode_paths`], [`differential`], [`server_target`]:
//!   the bodies of the fuzz targets, replayed on stable by the tests;
//! - [`process`]: child processes with hang guards, and what a test does
//!   when its peer is missing; [`captures`]: the annotated capture files;
//! - [`bench`](mod@bench): what the server benches share; [`samples`]: a
//!   value of every type.
//!
//! No stability promise: this crate changes with the tests.

pub mod bench;
pub mod captures;
pub mod decode_paths;
pub mod differential;
pub mod ds_client;
pub mod hostile;
pub mod hosts;
pub mod interop;
pub mod pair;
pub mod process;
pub mod samples;
pub mod server_target;
pub mod slurm;
pub mod targets;

/// The repository's root (the folder of the workspace's Cargo.toml), where
/// `corpus/`, `test-kit/c/` and `target/` are found.
pub fn repo() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("test-kit/ has a parent")
        .to_path_buf()
}
