//! `pmixw dvm` and `pmixw run --dvm` (issue #36 item 7): two Open MPI
//! jobs of one DVM meet through a published name and a port name
//! (interop/c/mpi_meet.c: MPI_Publish_name/MPI_Lookup_name,
//! MPI_Comm_accept/connect), for Open MPI 5.0.11 and 4.1.4; a job's status
//! is its own; the DVM stopped by SIGTERM leaves none of its files.
//! PRRTE's DVM as reference: spec-notes/server.md (the wheel's `prterun
//! --dvm` died of SIGSEGV there, so it is not run here).

use pmix_test_kit::hosts;
use pmix_test_kit::process;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(300);

fn scratch(what: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("dvm-{}-{what}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A running `pmixw dvm` whose tmpdir (and system tmpdir) is `dir`;
/// stopped by SIGTERM when dropped.
struct Dvm {
    child: Child,
    dir: PathBuf,
}

impl Dvm {
    fn start(dir: &Path) -> Dvm {
        let out = std::fs::File::create(dir.join("dvm.out")).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_pmixw"))
            .arg("dvm")
            .env("TMPDIR", dir)
            .env("PMIX_SYSTEM_TMPDIR", dir)
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .expect("pmixw dvm");
        let sys = dir.join(format!("pmix.sys.{}", pmix_wire::tool::hostname()));
        process::wait_for_file(&sys, &mut child);
        Dvm {
            child,
            dir: dir.to_path_buf(),
        }
    }

    /// `pmixw run --dvm -n N ARGS…` against this DVM, started.
    fn submit(&self, n: u32, args: &[&str]) -> Child {
        Command::new(env!("CARGO_BIN_EXE_pmixw"))
            .args(["run", "--dvm", "-n", &n.to_string()])
            .args(args)
            .current_dir(&self.dir)
            .env("TMPDIR", &self.dir)
            .env("PMIX_SYSTEM_TMPDIR", &self.dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("pmixw run --dvm")
    }

    /// What the jobs' ranks printed (the DVM's output).
    fn output(&self) -> String {
        std::fs::read_to_string(self.dir.join("dvm.out")).unwrap_or_default()
    }

    /// SIGTERM; its status and what of its own it left in its tmpdir.
    fn stop(mut self) -> (bool, Vec<String>) {
        // SAFETY: kill(2) on our own child's pid
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let st = process::wait_exit(&mut self.child, "pmixw dvm after SIGTERM");
        let left = std::fs::read_dir(&self.dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().to_string())
            .filter(|n| n.starts_with("pmix"))
            .collect();
        (st.success(), left)
    }
}

impl Drop for Dvm {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            // SAFETY: kill(2) on our own child's pid
            unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
            let _ = self.child.wait();
        }
    }
}

fn meet(cc: Result<PathBuf, String>, what: &str) {
    let Some(cc) = process::require(what, cc) else {
        return;
    };
    let dir = scratch(what.split_whitespace().nth(2).unwrap_or("mpi"));
    let exe = hosts::grid::compile_c(&cc, "mpi_meet", &dir.join("mpi_meet"), &[])
        .unwrap_or_else(|e| panic!("{e}"));
    let exe = exe.display().to_string();
    let dvm = Dvm::start(&dir);
    let server = dvm.submit(1, &[&exe, "server"]);
    let client = dvm.submit(1, &[&exe, "client"]);
    let s = process::output_within(server, LIMIT, "the server job");
    let c = process::output_within(client, LIMIT, "the client job");
    let out = dvm.output();
    let show = |o: &std::process::Output| String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(s.status.success(), "server job: {}\n{out}", show(&s));
    assert!(c.status.success(), "client job: {}\n{out}", show(&c));
    for line in ["published 0", "lookup 0", "server got 41", "client got 42"] {
        assert!(out.lines().any(|l| l == line), "{line:?} in\n{out}");
    }
    let (ok, left) = dvm.stop();
    assert!(ok, "{out}");
    assert!(left.is_empty(), "left behind: {left:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn open_mpi_5_jobs_meet_through_one_dvm() {
    meet(hosts::mpicc5(), "Open MPI 5.0.11 mpicc");
}

#[test]
fn open_mpi_414_jobs_meet_through_one_dvm() {
    meet(hosts::mpicc4(), "Open MPI 4.1.4 mpicc");
}

/// A submitted job's status is its own: a rank that exits 3 before it
/// finalizes (a program that is no PMIx client at all) ends it with 3, and
/// the DVM serves the next job. A tool attached as to the system server
/// sees both jobs' namespaces.
#[test]
fn a_submitted_jobs_status_is_its_own() {
    let dir = scratch("status");
    let dvm = Dvm::start(&dir);
    let o = process::output_within(
        dvm.submit(2, &["sh", "-c", "exit 3"]),
        LIMIT,
        "a failing job",
    );
    assert_eq!(o.status.code(), Some(3), "{}", dvm.output());
    let o = process::output_within(dvm.submit(1, &["true"]), LIMIT, "a job that passes");
    assert_eq!(o.status.code(), Some(0), "{}", dvm.output());
    let q = process::run_within(
        Command::new(env!("CARGO_BIN_EXE_pmixw"))
            .args(["query", "--system", "pmix.qry.ns"])
            .env("TMPDIR", &dir)
            .env("PMIX_SYSTEM_TMPDIR", &dir),
        LIMIT,
        "pmixw query --system",
    );
    let answer = String::from_utf8_lossy(&q.stdout);
    assert!(q.status.success(), "{answer}");
    for job in ["spawn-1", "spawn-2"] {
        assert!(answer.contains(job), "{job} in {answer}");
    }
    let (ok, left) = dvm.stop();
    assert!(ok);
    assert!(left.is_empty(), "left behind: {left:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
