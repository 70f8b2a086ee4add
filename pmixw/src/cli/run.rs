//! `pmixw run -n N [OPTIONS] PROG [ARGS]`: the launcher's arguments, and
//! which wire serves the job: PMIx on one node (run_pmix.rs), PMI-1 or
//! PMI-2 (run_pmi.rs), one PMI-2 task of a job across nodes (run_pmi2.rs),
//! or a job of several applications, each with its own wire
//! (run_joint.rs). Every wire stands on the host layer (host.rs).

use super::host::{App, Job, Mpi};
use std::process::ExitCode;
use std::time::Duration;

const USAGE: &str = "usage: pmixw run -n N [--nspace NAME] [--dialect v41|v4|v3|v21|v20] \
[--mpi pmix|pmi1|pmi2|auto] [--pmi-port] [--timeout SECONDS] [--grace SECONDS] [--keep-going] [--system] [--stats] [--dstore] [--dvm] [-v] PROG [ARGS...] \
[: [-n M] [--mpi WIRE] PROG2 [ARGS...]]...";

/// The URI variable a client of dialect `d` finds (libpmix 4.2.2 picks the
/// dialect from the variable's name: protocol.md §8.1).
fn uri_var(d: &str) -> Result<&'static str, String> {
    Ok(match d {
        "v41" => "PMIX_SERVER_URI41",
        "v4" => "PMIX_SERVER_URI4",
        "v3" => "PMIX_SERVER_URI3",
        "v21" => "PMIX_SERVER_URI21",
        "v20" => "PMIX_SERVER_URI2",
        _ => return Err(format!("--dialect {d}: one of v41 v4 v3 v21 v20\n{USAGE}")),
    })
}

/// A job namespace the user asked for: refused when libpmix would reserve
/// it (it begins with `pmix`), when it is empty or longer than
/// PMIX_MAX_NSLEN (255), or holds a character a file name cannot.
pub fn check_nspace(ns: &str) -> Result<(), String> {
    if ns.to_ascii_lowercase().starts_with("pmix") {
        return Err(format!(
            "--nspace {ns}: names beginning with \"pmix\" are reserved by PMIx"
        ));
    }
    if ns.is_empty() || ns.len() > 255 || ns.contains(['/', '\0', '\n']) {
        return Err(format!("--nspace {ns:?}: 1 to 255 bytes, no '/'"));
    }
    Ok(())
}

/// The default namespace: the program's name, this launcher's pid and
/// `nonce`'s low 24 bits (`hello-4242-a1b2c3`), with `run-` in front when
/// the name begins with `pmix`. A pid alone names one live process, not
/// one job over time: MPICH names its shared-memory segment after the
/// namespace and leaves it behind when a rank dies before finalizing, so a
/// later launcher given the same pid (another pid namespace: a container,
/// a CI run) made every rank of its job fail MPI_Init ("Out of memory",
/// a segment of the old job's smaller size). Hydra's kvsnames carry a
/// random number for the same reason.
pub fn default_nspace(prog: &str, pid: u32, nonce: u32) -> String {
    let base = std::path::Path::new(prog)
        .file_name()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    let mut base: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if base.is_empty() {
        base = "job".into();
    }
    if base.to_ascii_lowercase().starts_with("pmix") {
        base.insert_str(0, "run-");
    }
    format!("{base}-{pid}-{:06x}", nonce & 0xff_ffff)
}

/// A number drawn for this run: std's hasher keys are seeded from the
/// operating system's random source, a fresh pair per `RandomState`.
fn run_nonce() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish() as u32
}

/// TMPDIR must take a file (the rendezvous files, the ranks' own):
/// refused at start, in one line, rather than failing later in a rank.
fn check_tmpdir() -> Result<(), String> {
    let dir = std::env::temp_dir();
    let probe = dir.join(format!(".pmixw-probe.{}", std::process::id()));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(format!(
            "TMPDIR {}: cannot create a file there ({e})",
            dir.display()
        )),
    }
}

pub fn run(args: super::RunArgs) -> Result<ExitCode, String> {
    if let Err(e) = check_tmpdir() {
        // a start-up fault, not a usage error: status 1, as mpirun's
        eprintln!("pmixw run: {e}");
        return Ok(ExitCode::from(1));
    }
    let secs = |s: String, name: &str| -> Result<Duration, String> {
        let v: f64 = s.parse().map_err(|_| format!("{name}: seconds\n{USAGE}"))?;
        Ok(Duration::from_secs_f64(v.clamp(0.0, 1e9)))
    };
    let to_dvm = args.dvm;
    // (the flags that need no reading are taken as they are, below)
    let super::RunArgs {
        n,
        nspace: user_ns,
        dialect,
        timeout,
        grace,
        dstore,
        verbose,
        mpi,
        pmi_port,
        prog,
        ..
    } = args;
    if verbose {
        // refused and dropped peers, with their reasons (RUST_LOG also works)
        crate::cli::log_to_stderr("pmix_wire=debug");
    }
    let dialect = dialect.as_deref().map(uri_var).transpose()?;
    if let Some(ns) = &user_ns {
        check_nspace(ns)?;
    }
    let timeout = timeout.map(|t| secs(t, "--timeout")).transpose()?;
    let grace = match grace {
        Some(g) => secs(g, "--grace")?,
        None => Duration::from_secs(1),
    };
    let n = Some(n).filter(|n| *n > 0).ok_or(USAGE)?;
    if to_dvm {
        return super::dvm::submit(n, &prog, timeout);
    }
    let (exe, argv) = prog.split_first().ok_or(USAGE)?;
    // --dstore: libpmix 4.2.x clients read job and peer data from a ds21
    // shared-memory store in the tmpdir (spec-notes/dstore.md); offered
    // to PMIx programs, on one node (beside PMI ones in a job of several
    // applications) or across nodes (each node's own)
    let dstore = dstore || std::env::var("PMIXW_DSTORE").is_ok_and(|v| v == "1");
    // (a PMI-2 launch across nodes names the job after its own job id)
    let nspace = user_ns.unwrap_or_else(|| default_nspace(exe, std::process::id(), run_nonce()));
    let mpmd = super::run_joint::is_mpmd(&prog);
    let apps = if mpmd {
        if pmi_port {
            return Err("--pmi-port: not offered for a job of several applications".into());
        }
        super::run_joint::split_apps(n, mpi.as_deref(), &prog)?
    } else {
        vec![App {
            n,
            mpi: super::run_pmi::choose(mpi.as_deref(), exe)?,
            exe: exe.clone(),
            argv: argv.to_vec(),
        }]
    };
    let job = Job {
        apps,
        nspace,
        dialect,
        timeout,
        grace,
        dstore,
        pmi_port,
        keep_going: args.keep_going,
        system: args.system,
        stats: args.stats,
        // across nodes (PMI-2): rank r on node r % nodes
        cyclic: args.cyclic,
    };
    // a rank's orphaned descendants come to this launcher, which ends
    // them with the rank's process group (procgroup.rs)
    super::procgroup::become_subreaper();
    // and if this launcher is killed, its guard ends the ranks and removes
    // its files (guard.rs)
    super::guard::start(job.grace);
    let r = launch(&job, mpmd, dstore);
    super::guard::done();
    r
}

/// The job served by its wire.
fn launch(job: &Job, mpmd: bool, dstore: bool) -> Result<ExitCode, String> {
    if mpmd {
        // several applications: one job, each served its own wire
        return super::run_joint::run(job);
    }
    if job.app().mpi != Mpi::Pmix {
        if dstore {
            eprintln!(
                "pmixw run: warning: --dstore is not offered to PMI-1/PMI-2 programs; ignored"
            );
        }
        return super::run_pmi::run(job);
    }
    // started by a PMI-2 launcher (srun --mpi=pmi2): one job across the nodes
    if std::env::var_os("PMI_FD").is_some() {
        return super::run_pmi2::run(job);
    }
    super::run_pmix::run(job)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_namespace_is_the_program_the_pid_and_a_drawn_number() {
        assert_eq!(
            default_nspace("/bin/hello", 42, 0x12a1b2c3),
            "hello-42-a1b2c3"
        );
        assert_eq!(default_nspace("./pmix_kvs", 7, 1), "run-pmix_kvs-7-000001");
        assert_eq!(default_nspace("a b.c", 7, 0), "a_b_c-7-000000");
        assert!(check_nspace(&default_nspace("pmixtool", 1, 2)).is_ok());
        // two runs given the same pid (another pid namespace) differ
        let drawn: std::collections::BTreeSet<u32> = (0..8).map(|_| run_nonce()).collect();
        assert!(drawn.len() > 1, "{drawn:?}");
    }
}
