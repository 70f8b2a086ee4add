//! `pmixw interop --hosts`: the live matrix of our roles against every
//! PMIx host and client kind this machine has. One row per (role, peer);
//! adding a host is adding a row to [`ROWS`]. Each cell runs a real job
//! and is `pass`, `fail` or `absent` (the peer is not installed), with
//! its reason.
//!
//! The same runs back `pmixw/tests/live_hosts.rs`, which requires every cell to
//! pass (absent: a skip outside CI, a failure under CI).

use super::*;
use crate::cbuild::script;
pub use crate::cbuild::{build_with_lib, compile_c};
use pmix_wire::server;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// What a cell came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Pass(String),
    Fail(String),
    Absent(String),
}

impl Outcome {
    pub fn word(&self) -> &'static str {
        match self {
            Outcome::Pass(_) => "pass",
            Outcome::Fail(_) => "fail",
            Outcome::Absent(_) => "absent",
        }
    }
    pub fn reason(&self) -> &str {
        match self {
            Outcome::Pass(s) | Outcome::Fail(s) | Outcome::Absent(s) => s,
        }
    }
}

/// What the cells share: our binary (run as the probe), a scratch
/// directory for builds and output files, and the private Slurm cluster
/// (started by the first Slurm row that runs, stopped by [`run`] or when
/// the context is dropped).
pub struct Ctx {
    pub pmixw: PathBuf,
    pub scratch: PathBuf,
    pub slurm: SlurmSlot,
    /// A second cluster whose slurmstepd serves with pmix-wire's libpmix
    /// (started by the first row that asks for it).
    pub slurm_ours: SlurmSlot,
}

impl Ctx {
    pub fn new(pmixw: PathBuf, scratch: PathBuf) -> Ctx {
        Ctx {
            pmixw,
            scratch,
            slurm: SlurmSlot::default(),
            slurm_ours: SlurmSlot::default(),
        }
    }
}

/// The grid's Slurm cluster of two nodes: none until a Slurm row asks.
#[derive(Default)]
pub struct SlurmSlot(std::sync::Mutex<Option<Result<crate::slurm::Cluster, String>>>);

impl SlurmSlot {
    /// Run `f` with the cluster, started on first use. Absent when Slurm
    /// is not installed; a failure when it is but does not start.
    fn with(&self, f: impl FnOnce(&crate::slurm::Cluster) -> Outcome) -> Outcome {
        self.with_start(|| crate::slurm::Cluster::start(2), f)
    }

    /// [`SlurmSlot::with`], the cluster started by `start` on first use.
    fn with_start(
        &self,
        start: impl Fn() -> Result<crate::slurm::Cluster, String>,
        f: impl FnOnce(&crate::slurm::Cluster) -> Outcome,
    ) -> Outcome {
        let miss = crate::slurm::missing();
        if !miss.is_empty() {
            return Outcome::Absent(format!(
                "Slurm not installed ({}; `bash .ci/setup` installs slurmctld, slurmd, slurm-client, munge)",
                miss.join(" ")
            ));
        }
        let mut slot = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let c = slot.get_or_insert_with(|| {
            // a port chosen free can be taken before a daemon binds it:
            // a second and third try get fresh ports
            let mut last = String::new();
            for _ in 0..3 {
                match start() {
                    Ok(c) => return Ok(c),
                    Err(e) => last = e,
                }
            }
            Err(last)
        });
        match c {
            Ok(c) => f(c),
            Err(e) => Outcome::Fail(format!("cannot start the private Slurm cluster: {e}")),
        }
    }

    /// Stop the cluster if one was started (exactly its daemons).
    pub fn stop(&self) {
        let mut slot = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(Ok(c)) = slot.take() {
            c.stop();
        }
    }
}

/// One row of the matrix.
pub struct Row {
    /// Our role in it: "client" (our client, as `pmixw probe`, hosted by
    /// the peer), "tool" (`pmixw query` attached to the peer) or "server"
    /// (our server hosting the peer's clients).
    pub role: &'static str,
    /// The peer.
    pub peer: &'static str,
    pub run: fn(&Ctx) -> Outcome,
}

/// Every row, in the order printed.
pub const ROWS: &[Row] = &[
    Row {
        role: "client",
        peer: "pmixw run (our server)",
        run: probe_under_pmixw_run,
    },
    Row {
        role: "client",
        peer: "libpmix 4.2.2 server (cap_server)",
        run: probe_under_cap_server,
    },
    Row {
        role: "client",
        peer: "Open MPI 4.1.4 mpirun",
        run: probe_under_mpirun4,
    },
    Row {
        role: "client",
        peer: "PRRTE 5.0.11 prterun",
        run: probe_under_prterun5,
    },
    Row {
        role: "client",
        peer: "Open MPI 5.0.11 mpirun",
        run: probe_under_mpirun5,
    },
    Row {
        role: "tool",
        peer: "PRRTE 5.0.11 prterun (pmixw query --pid)",
        run: query_prterun5,
    },
    Row {
        role: "tool",
        peer: "Open MPI 5.0.11 mpirun (pmixw query --pid)",
        run: query_mpirun5,
    },
    Row {
        role: "client",
        peer: "python3-pmix server",
        run: probe_under_python_server,
    },
    Row {
        role: "client",
        peer: "Slurm srun --mpi=pmix, 1 node",
        run: probe_under_slurm_1,
    },
    Row {
        role: "client",
        peer: "Slurm srun --mpi=pmix, 2 nodes",
        run: probe_under_slurm_2,
    },
    Row {
        role: "client",
        peer: "Slurm srun --mpi=pmix, 1 node, slurmstepd on pmix-wire's libpmix",
        run: probe_under_slurm_on_ours_1,
    },
    Row {
        role: "client",
        peer: "Slurm srun --mpi=pmix, 2 nodes, slurmstepd on pmix-wire's libpmix",
        run: probe_under_slurm_on_ours_2,
    },
    Row {
        role: "client",
        peer: "Open MPI 4.1.4 mpirun with pmix-wire's libpmix",
        run: ours_under_mpirun4,
    },
    Row {
        role: "client",
        peer: "PRRTE 5.0.11 prterun with pmix-wire's libpmix",
        run: ours_under_prterun5,
    },
    Row {
        role: "client",
        peer: "Slurm srun --mpi=pmix, 1 node, with pmix-wire's libpmix",
        run: ours_under_slurm_1,
    },
    Row {
        role: "client",
        peer: "Slurm srun --mpi=pmix, 2 nodes, with pmix-wire's libpmix",
        run: ours_under_slurm_2,
    },
    Row {
        role: "server",
        peer: "Open MPI 4.1.4 mpirun on pmix-wire's libpmix",
        run: mpirun4_on_our_server,
    },
    Row {
        role: "server",
        peer: "srun --mpi=pmix (1 node) on pmix-wire's libpmix",
        run: srun1_on_our_server,
    },
    Row {
        role: "server",
        peer: "srun --mpi=pmix (2 nodes) on pmix-wire's libpmix",
        run: srun2_on_our_server,
    },
    Row {
        role: "server",
        peer: "libpmix 4.2.2 C client",
        run: c_client_422,
    },
    Row {
        role: "server",
        peer: "libpmix 5.0.11 C client",
        run: c_client_5011,
    },
    Row {
        role: "server",
        peer: "Open MPI 4.1.4 program",
        run: mpi_program_414,
    },
    Row {
        role: "server",
        peer: "Open MPI 5.0.11 program",
        run: mpi_program_5011,
    },
    Row {
        role: "server",
        peer: "python3-pmix client",
        run: python_client,
    },
    Row {
        role: "server",
        peer: "libpmix 4.2.2 C client, 2 Slurm nodes via PMI-2",
        run: pmi2_across_slurm_nodes,
    },
];

/// Ranks per job.
const N: u32 = 2;
/// A hang guard per job, not a measurement.
const LIMIT: Duration = Duration::from_secs(120);

/// How long a launcher stopped with SIGTERM has to clean up and exit
/// before it is killed ([`super::stop`]).
const STOP_GRACE: Duration = Duration::from_secs(10);

/// One cell's result.
#[derive(Clone, Debug)]
pub struct Cell {
    pub role: &'static str,
    pub peer: &'static str,
    pub outcome: Outcome,
}

/// Run the rows whose peer contains `only` (all when None), one after
/// the other; then stop the Slurm cluster if a row started it.
pub fn run(ctx: &Ctx, only: Option<&str>) -> Vec<Cell> {
    let cells = ROWS
        .iter()
        .filter(|r| only.is_none_or(|o| r.peer.contains(o)))
        .map(|r| Cell {
            role: r.role,
            peer: r.peer,
            outcome: (r.run)(ctx),
        })
        .collect();
    ctx.slurm.stop();
    ctx.slurm_ours.stop();
    cells
}

/// The matrix as text: one line per cell, then a count.
pub fn table(cells: &[Cell]) -> String {
    let w = cells.iter().map(|c| c.peer.len()).max().unwrap_or(4);
    let mut s = format!("{:<7}{:<w$}  {:<7}reason\n", "role", "peer", "result");
    for c in cells {
        s += &format!(
            "{:<7}{:<w$}  {:<7}{}\n",
            c.role,
            c.peer,
            c.outcome.word(),
            c.outcome.reason()
        );
    }
    let count = |w: &str| cells.iter().filter(|c| c.outcome.word() == w).count();
    s += &format!(
        "hosts: {} pass, {} fail, {} absent\n",
        count("pass"),
        count("fail"),
        count("absent")
    );
    s
}

/// The matrix as JSON: an array of {role, peer, result, reason}.
pub fn json(cells: &[Cell]) -> String {
    let v: Vec<serde_json::Value> = cells
        .iter()
        .map(|c| {
            serde_json::json!({
                "role": c.role,
                "peer": c.peer,
                "result": c.outcome.word(),
                "reason": c.outcome.reason(),
            })
        })
        .collect();
    serde_json::to_string_pretty(&v).unwrap_or_default()
}

/// Run `cmd` with its output in a file, killed past LIMIT; (success,
/// output).
pub fn run_logged(mut cmd: Command, ctx: &Ctx, tag: &str) -> Result<(bool, String), String> {
    std::fs::create_dir_all(&ctx.scratch).map_err(|e| e.to_string())?;
    let log = ctx
        .scratch
        .join(format!("{tag}.{}.out", std::process::id()));
    let f = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(f.try_clone().map_err(|e| e.to_string())?)
        .stderr(f)
        .spawn()
        .map_err(|e| format!("cannot start {:?}: {e}", cmd.get_program()))?;
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break Some(s);
        }
        if start.elapsed() > LIMIT {
            // SIGTERM first: a launcher then removes its session directory
            super::stop(&mut child, STOP_GRACE);
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = String::from_utf8_lossy(&std::fs::read(&log).unwrap_or_default()).into_owned();
    let _ = std::fs::remove_file(&log);
    match status {
        Some(s) => Ok((s.success(), out)),
        None => Err(format!("no end in {LIMIT:?}; output:\n{out}")),
    }
}

/// The verdict on `n` ranks of `pmixw probe`: every rank's summary says 0
/// failures and the launcher succeeded; the pass reason names the
/// dialect, the skips and the warnings.
pub fn probe_verdict(r: Result<(bool, String), String>, n: u32) -> Outcome {
    let (ok, out) = match r {
        Ok(x) => x,
        Err(e) => return Outcome::Fail(e),
    };
    let fails: Vec<&str> = out.lines().filter(|l| l.contains(" FAIL ")).collect();
    let summaries = (0..n)
        .filter(|r| {
            out.lines()
                .any(|l| l.starts_with(&format!("[{r}] probe: ")) && l.contains(", 0 failures"))
        })
        .count();
    if !ok || !fails.is_empty() || summaries != n as usize {
        return Outcome::Fail(if fails.is_empty() {
            format!("launcher failed or a rank gave no clean summary:\n{out}")
        } else {
            fails.join("; ")
        });
    }
    let dialect = out
        .lines()
        .find_map(|l| l.split(" dialect ").nth(1))
        .unwrap_or("?");
    let mut skips: Vec<&str> = out
        .lines()
        .filter_map(|l| {
            l.split_once("] skip ")
                .map(|(_, s)| s.split(':').next().unwrap_or(s))
        })
        .collect();
    skips.sort();
    skips.dedup();
    let warns = out.lines().filter(|l| l.contains("] warn ")).count();
    let mut why = format!("{n} ranks, dialect {dialect}");
    if !skips.is_empty() {
        why += &format!("; skipped: {}", skips.join(", "));
    }
    if warns > 0 {
        why += &format!("; {warns} warnings");
    }
    Outcome::Pass(why)
}

fn absent_or<T>(r: Result<T, String>, f: impl FnOnce(T) -> Outcome) -> Outcome {
    match r {
        Ok(t) => f(t),
        Err(e) => Outcome::Absent(e),
    }
}

fn probe_cmd(launcher: &Path, pre: &[&str], ctx: &Ctx) -> Command {
    let mut c = Command::new(launcher);
    c.args(pre)
        .arg(&ctx.pmixw)
        .args(["probe", "--events"])
        .current_dir(&ctx.scratch);
    c
}

fn probe_under_pmixw_run(ctx: &Ctx) -> Outcome {
    let c = probe_cmd(&ctx.pmixw, &["run", "-n", "2", "--timeout", "100"], ctx);
    probe_verdict(run_logged(c, ctx, "pmixw-run"), N)
}

/// N ranks of the probe under a launcher found by `found`, with `args`.
fn probe_under(found: Result<PathBuf, String>, args: &[&str], tag: &str, ctx: &Ctx) -> Outcome {
    absent_or(found, |m| {
        probe_verdict(run_logged(probe_cmd(&m, args, ctx), ctx, tag), N)
    })
}

/// Open MPI's mpirun (4.1.4 or 5.0.11) flags for two ranks on one core.
const MPIRUN_ARGS: &[&str] = &["--allow-run-as-root", "--oversubscribe", "-n", "2"];

fn probe_under_mpirun4(ctx: &Ctx) -> Outcome {
    probe_under(mpirun4(), MPIRUN_ARGS, "mpirun4", ctx)
}

fn probe_under_prterun5(ctx: &Ctx) -> Outcome {
    let args = [
        "--allow-run-as-root",
        "--map-by",
        ":OVERSUBSCRIBE",
        "-n",
        "2",
    ];
    probe_under(prterun5(), &args, "prterun5", ctx)
}

fn probe_under_mpirun5(ctx: &Ctx) -> Outcome {
    probe_under(mpirun5(), MPIRUN_ARGS, "mpirun5", ctx)
}

/// `n` ranks of the probe under Slurm's own PMIx plugin (libpmix 4.2.2
/// in slurmstepd) on `nodes` nodes of the private cluster.
fn probe_under_slurm(nodes: u32, n: u32, ctx: &Ctx) -> Outcome {
    ctx.slurm
        .with(|c| probe_verdict(probe_run(c, nodes, n, ctx, &format!("slurm{nodes}")), n))
}

/// `srun --mpi=pmix -N nodes -n n pmixw probe --events` on cluster `c`.
fn probe_run(
    c: &crate::slurm::Cluster,
    nodes: u32,
    n: u32,
    ctx: &Ctx,
    tag: &str,
) -> Result<(bool, String), String> {
    let mut cmd = c.srun();
    cmd.args(["--mpi=pmix", "-N", &nodes.to_string(), "-n", &n.to_string()])
        .arg(&ctx.pmixw)
        .args(["probe", "--events"])
        .current_dir(&ctx.scratch);
    run_logged(cmd, ctx, tag)
}

/// The probe's publish/lookup checks.
const PUBSUB_CHECKS: [&str; 4] = ["lookup", "lookup after unpublish", "publish", "unpublish"];

/// Our client (`pmixw probe --events`) under `srun --mpi=pmix` of the
/// cluster whose slurmstepd serves with our library
/// ([`srun_on_our_server`]'s): our server half hosting our client through
/// Slurm; every rank's setup_fork must be in our trace. Slurm's module
/// has no publish upcalls: on one node our library keeps the job's
/// published data itself (the checks pass), across two it answers them
/// NOT_SUPPORTED as libpmix's slurmstepd does, and the probe must skip
/// exactly those four as it does there (spec-notes/capi.md, "The server").
fn probe_under_slurm_on_ours(nodes: u32, n: u32, ctx: &Ctx) -> Outcome {
    absent_or(our_libpmix(ctx), |lib| {
        let lib = lib.join("libpmix.so.2");
        let start = || crate::slurm::Cluster::start_serving(2, &lib);
        ctx.slurm_ours.with_start(start, |c| {
            let run = probe_run(c, nodes, n, ctx, &format!("slurm{nodes}-probe-on-ours"));
            let forks = run
                .as_ref()
                .map_or(0, |(_, out)| traced(out, "PMIx_server_setup_fork"));
            let pubsub_skips = run.as_ref().map_or(0, |(_, out)| {
                out.lines()
                    .filter(|l| {
                        PUBSUB_CHECKS.iter().any(|c| {
                            l.contains(&format!("] skip {c}: "))
                                && l.contains("PMIX_ERR_NOT_SUPPORTED")
                        })
                    })
                    .count()
            });
            // across nodes every rank's lookup and rank 0's publish,
            // unpublish and lookup after it are skipped (NOT_SUPPORTED);
            // on one node none
            let want = if nodes > 1 { 3 + n as usize } else { 0 };
            match probe_verdict(run, n) {
                Outcome::Pass(_) if forks < n as usize => Outcome::Fail(format!(
                    "{forks} setup_fork traced for {n} ranks: slurmstepd not on ours"
                )),
                Outcome::Pass(why) if pubsub_skips != want => Outcome::Fail(format!(
                    "{pubsub_skips} publish/lookup checks skipped as NOT_SUPPORTED, not {want}: {why}"
                )),
                v => v,
            }
        })
    })
}

fn probe_under_slurm_on_ours_1(ctx: &Ctx) -> Outcome {
    probe_under_slurm_on_ours(1, N, ctx)
}

fn probe_under_slurm_on_ours_2(ctx: &Ctx) -> Outcome {
    probe_under_slurm_on_ours(2, 2 * N, ctx)
}

fn probe_under_slurm_1(ctx: &Ctx) -> Outcome {
    probe_under_slurm(1, N, ctx)
}

fn probe_under_slurm_2(ctx: &Ctx) -> Outcome {
    probe_under_slurm(2, 2 * N, ctx)
}

/// Our server across two Slurm nodes, bridged through Slurm's PMI-2
/// (`srun --mpi=pmi2 -N 2 --ntasks-per-node=1 pmixw run -n 4`), hosting
/// one job of 4 libpmix 4.2.2 clients (`interop/c/mn_client.c all`):
/// every rank sees a job of 4 on 2 nodes and ends with 0 failures.
fn pmi2_across_slurm_nodes(ctx: &Ctx) -> Outcome {
    absent_or(libpmix4_dev(), |_| {
        let exe = match crate::cbuild::build_c("mn_client", &crate::cbuild::default_out_dir()) {
            Ok(e) => e,
            Err(e) => return Outcome::Fail(e),
        };
        ctx.slurm.with(|c| {
            let mut cmd = c.srun();
            cmd.args(["--mpi=pmi2", "-N", "2", "--ntasks-per-node=1"])
                .arg(&ctx.pmixw)
                .args(["run", "-n", "4", "--timeout", "90"])
                .arg(&exe)
                .arg("all")
                .env("PMIXW_PMI2_TIMEOUT", "60")
                .current_dir(&ctx.scratch);
            let (ok, out) = match run_logged(cmd, ctx, "slurm-pmi2") {
                Ok(x) => x,
                Err(e) => return Outcome::Fail(e),
            };
            let count = |p: &str| out.lines().filter(|l| l.starts_with(p)).count();
            let clean = (0..4).all(|r| out.contains(&format!("rank {r}: 0 failures")));
            if ok
                && clean
                && count("fail") == 0
                && count("ok job_size 4") == 4
                && count("ok num_nodes 2") == 4
            {
                Outcome::Pass("4 ranks on 2 nodes, one job".into())
            } else {
                Outcome::Fail(format!("srun ok: {ok}; output:\n{out}"))
            }
        })
    })
}

/// `interop/c/py_server.py FLAGS N` (a python3-pmix server hosting N
/// ranks of the command the caller appends), with the environment its
/// clients need and its files in the scratch directory.
pub fn python_server(py: &Path, flags: &[&str], n: u32, ctx: &Ctx) -> Command {
    let mut c = Command::new(py);
    c.arg(script("py_server.py"))
        .args(flags)
        .arg(n.to_string())
        // the python server's clients must not pick a shared-memory store
        .env("PMIX_MCA_gds", "hash")
        .env("TMPDIR", &ctx.scratch)
        .env("PYTHONWARNINGS", "ignore");
    c
}

fn probe_under_python_server(ctx: &Ctx) -> Outcome {
    absent_or(python_pmix(), |py| {
        let mut c = python_server(&py, &[], N, ctx);
        c.arg(&ctx.pmixw).args(["probe", "--events"]);
        probe_verdict(run_logged(c, ctx, "pyserver"), N)
    })
}

fn probe_under_cap_server(ctx: &Ctx) -> Outcome {
    absent_or(libpmix4_dev(), |_| {
        let exe = match crate::cbuild::build_c("cap_server", &crate::cbuild::default_out_dir()) {
            Ok(e) => e,
            Err(e) => return Outcome::Fail(e),
        };
        probe_verdict(cap_server_job(&exe, ctx), N)
    })
}

/// `interop/c/cap_server.c` (libpmix 4.2.2's server with upcalls for
/// publish, spawn, connect …) hosting N ranks of the probe: it prints
/// `env <ns> <rank> K=V` lines, then `ready`, and ends when its stdin closes.
fn cap_server_job(exe: &Path, ctx: &Ctx) -> Result<(bool, String), String> {
    use std::io::BufRead;
    let tmp = ctx.scratch.join(format!("cap-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).map_err(|e| e.to_string())?;
    let mut server = Command::new(exe)
        .arg(N.to_string())
        .arg(&tmp)
        .env("PMIX_MCA_gds", "hash")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start cap_server: {e}"))?;
    let mut envs: Vec<Vec<(String, String)>> = vec![Vec::new(); N as usize];
    let lines = std::io::BufReader::new(server.stdout.take().ok_or("no stdout")?).lines();
    let mut ready = false;
    for line in lines.map_while(Result::ok) {
        if line == "ready" {
            ready = true;
            break;
        }
        let f: Vec<&str> = line.splitn(4, ' ').collect();
        if let [_, "capns", r, kv] = f[..] {
            if let (Ok(r), Some((k, v))) = (r.parse::<usize>(), kv.split_once('=')) {
                if let Some(e) = envs.get_mut(r) {
                    e.push((k.into(), v.into()));
                }
            }
        }
    }
    let r = if ready {
        // both ranks at once, each with its output in a file
        let handles: Vec<_> = envs
            .into_iter()
            .enumerate()
            .map(|(r, env)| {
                let mut c = Command::new(&ctx.pmixw);
                c.args(["probe", "--events"]).envs(env);
                let ctx = Ctx::new(ctx.pmixw.clone(), ctx.scratch.clone());
                std::thread::spawn(move || run_logged(c, &ctx, &format!("cap-rank{r}")))
            })
            .collect();
        let mut all = (true, String::new());
        for h in handles {
            match h
                .join()
                .map_err(|_| "a rank's thread panicked".to_string())?
            {
                Ok((ok, out)) => {
                    all.0 &= ok;
                    all.1 += &out;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(all)
    } else {
        Err("cap_server ended before it was ready".into())
    };
    // its end of stdin closed, cap_server finalizes and exits
    drop(server.stdin.take());
    super::reap(&mut server, STOP_GRACE);
    let _ = std::fs::remove_dir_all(&tmp);
    r
}

/// N ranks of `argv` under our server (started in this process, so the
/// handshakes show which dialect each rank chose): (every rank
/// succeeded, their output, the dialects in connection order).
pub fn under_our_server(
    argv: &[&std::ffi::OsStr],
    ctx: &Ctx,
    tag: &str,
) -> Result<(bool, String, Vec<String>), String> {
    use server::{net, HostEvent, JobSpec};
    let ns = format!("hosts-{tag}-{}", std::process::id());
    let srv = net::start(vec![JobSpec {
        nspace: ns.clone(),
        nprocs: N,
        hostname: net::hostname(),
        info: vec![],
    }])
    .map_err(|e| format!("cannot start our server: {e}"))?;
    let handles: Vec<_> = (0..N)
        .map(|r| {
            let mut c = Command::new(argv[0]);
            c.args(&argv[1..])
                .envs(srv.client_env(&ns, r))
                // Open MPI 4.1 direct-launches only under a launcher it
                // recognises (as `pmixw run` does; spec-notes/server.md)
                .env("FLUX_JOB_ID", &ns)
                .env("PYTHONWARNINGS", "ignore")
                .current_dir(&ctx.scratch);
            let ctx = Ctx::new(ctx.pmixw.clone(), ctx.scratch.clone());
            let tag = format!("{tag}-rank{r}");
            std::thread::spawn(move || run_logged(c, &ctx, &tag))
        })
        .collect();
    let mut ok = true;
    let mut out = String::new();
    let mut err = None;
    for h in handles {
        match h.join() {
            Ok(Ok((good, text))) => {
                ok &= good;
                out += &text;
            }
            Ok(Err(e)) => err = Some(e),
            Err(_) => err = Some("a rank's thread panicked".into()),
        }
    }
    let mut dialects = Vec::new();
    while let Ok(e) = srv.events.try_recv() {
        if let HostEvent::Connected(_, f) = e {
            dialects.push(f.dialect.name().to_string());
        }
    }
    srv.stop();
    match err {
        Some(e) => Err(e),
        None => Ok((ok, out, dialects)),
    }
}

/// The verdict on a job of client kind under our server: every rank
/// succeeded and connected; the pass reason names the dialect.
fn server_verdict(r: Result<(bool, String, Vec<String>), String>) -> Outcome {
    match r {
        Err(e) => Outcome::Fail(e),
        Ok((false, out, _)) => Outcome::Fail(format!("a rank failed:\n{out}")),
        Ok((true, out, d)) if d.len() != N as usize => Outcome::Fail(format!(
            "{} of {N} ranks connected ({d:?}):\n{out}",
            d.len()
        )),
        Ok((true, _, mut d)) => {
            d.dedup();
            Outcome::Pass(format!("{N} ranks, dialect {}", d.join("+")))
        }
    }
}

fn build_dir(ctx: &Ctx) -> PathBuf {
    ctx.scratch.join("build")
}

/// Compile `interop/c/<name>.c` with an MPI compiler wrapper.
fn build_mpi(mpicc: &Path, name: &str, out: &Path, tag: &str) -> Result<PathBuf, String> {
    compile_c(mpicc, name, &out.join(format!("{name}-{tag}")), &[])
}

fn os(s: &Path) -> &std::ffi::OsStr {
    s.as_os_str()
}

fn c_client_422(ctx: &Ctx) -> Outcome {
    absent_or(libpmix4_dev(), |_| {
        match crate::cbuild::build_c("srv_client", &crate::cbuild::default_out_dir()) {
            Ok(exe) => server_verdict(under_our_server(&[os(&exe), "all".as_ref()], ctx, "c422")),
            Err(e) => Outcome::Fail(e),
        }
    })
}

fn c_client_5011(ctx: &Ctx) -> Outcome {
    absent_or(libpmix4_dev().and(libpmix5()), |lib| {
        match build_with_lib("srv_client", &lib, &build_dir(ctx)) {
            Ok(exe) => server_verdict(under_our_server(&[os(&exe), "all".as_ref()], ctx, "c5011")),
            Err(e) => Outcome::Fail(e),
        }
    })
}

fn mpi_program_414(ctx: &Ctx) -> Outcome {
    absent_or(mpicc4(), |cc| {
        match build_mpi(&cc, "mpi_ring", &build_dir(ctx), "ompi414") {
            Ok(exe) => server_verdict(under_our_server(&[os(&exe)], ctx, "ompi414")),
            Err(e) => Outcome::Fail(e),
        }
    })
}

fn mpi_program_5011(ctx: &Ctx) -> Outcome {
    absent_or(mpicc5(), |cc| {
        match build_mpi(&cc, "mpi_ring", &build_dir(ctx), "ompi5011") {
            Ok(exe) => server_verdict(under_our_server(&[os(&exe)], ctx, "ompi5011")),
            Err(e) => Outcome::Fail(e),
        }
    })
}

fn python_client(ctx: &Ctx) -> Outcome {
    absent_or(python_pmix(), |py| {
        let s = script("py_client.py");
        server_verdict(under_our_server(&[os(&py), os(&s)], ctx, "pyclient"))
    })
}

fn query_prterun5(ctx: &Ctx) -> Outcome {
    query_under(prterun5(), ctx)
}

fn query_mpirun5(ctx: &Ctx) -> Outcome {
    query_under(mpirun5(), ctx)
}

/// `pmixw query --pid` attached as a tool to a running PRRTE launcher
/// (found by its rendezvous files) asks for the namespaces; the
/// launcher's job must be among them. The query itself waits for the
/// launcher's rendezvous file (`--wait`, as long as the hang guard
/// leaves), so a launcher slow to start on a loaded node is waited for,
/// not failed; the loop only repeats the query until the job's namespace
/// (`<launcher>@1`) is there. The launcher is stopped with SIGTERM, so
/// that it removes its session directory and rendezvous files: SIGKILL
/// leaves them in the tmpdir, where a later launcher given the same pid
/// would have found a dead server's file (now passed over as stale).
fn query_under(found: Result<PathBuf, String>, ctx: &Ctx) -> Outcome {
    absent_or(found, |m| {
        let mut job = match Command::new(&m)
            // longer than the hang guard: the job never ends on its own
            .args(["--allow-run-as-root", "-n", "1", "sleep", "600"])
            .current_dir(&ctx.scratch)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
        {
            Ok(c) => c,
            Err(e) => return Outcome::Fail(format!("cannot start {}: {e}", m.display())),
        };
        let pid = job.id();
        let want = format!("{pid}@1");
        let start = Instant::now();
        let outcome = loop {
            let left = LIMIT.saturating_sub(start.elapsed());
            let q = Command::new(&ctx.pmixw)
                .args(["query", "--pid", &pid.to_string()])
                .args(["--wait", &left.as_secs().to_string(), "pmix.qry.ns"])
                .output();
            let text = q
                .as_ref()
                .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                .unwrap_or_default();
            if let Some(l) = text.lines().find(|l| l.starts_with("pmix.qry.ns: ")) {
                if l.contains(&want) {
                    break Outcome::Pass(format!("namespaces {}", &l["pmix.qry.ns: ".len()..]));
                }
            }
            if start.elapsed() > LIMIT || !matches!(job.try_wait(), Ok(None)) {
                let err = q
                    .map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
                    .unwrap_or_else(|e| e.to_string());
                let ended = match job.try_wait() {
                    Ok(Some(s)) => format!("launcher ended ({s}); "),
                    _ => String::new(),
                };
                break Outcome::Fail(format!(
                    "{ended}no namespace {want} of launcher {pid}: {text}{err}"
                ));
            }
            std::thread::sleep(Duration::from_millis(200));
        };
        super::stop(&mut job, LIMIT / 4);
        outcome
    })
}

/// Our libpmix.so.2 (pmix-capi's cdylib, `libpmix.so` beside the pmixw
/// binary of the same cargo build, or in its deps/), copied as
/// libpmix.so.2 into a directory of its own under the scratch
/// directory: the directory to put first on a rank's LD_LIBRARY_PATH.
pub fn our_libpmix(ctx: &Ctx) -> Result<PathBuf, String> {
    let dir = ctx.pmixw.parent().ok_or("pmixw has no directory")?;
    let built = [dir.join("libpmix.so"), dir.join("deps/libpmix.so")]
        .into_iter()
        .find(|p| p.is_file())
        .ok_or_else(|| {
            format!(
                "pmix-wire's libpmix not built beside {} (cargo build -p pmix-capi)",
                ctx.pmixw.display()
            )
        })?;
    let lib = ctx.scratch.join("capi-lib");
    std::fs::create_dir_all(&lib).map_err(|e| format!("{}: {e}", lib.display()))?;
    let tmp = lib.join(format!(".libpmix.so.2.{}", std::process::id()));
    std::fs::copy(&built, &tmp).map_err(|e| format!("{}: {e}", built.display()))?;
    std::fs::rename(&tmp, lib.join("libpmix.so.2")).map_err(|e| e.to_string())?;
    Ok(lib)
}

/// The result lines of a run's output: what the programs printed
/// (`pmix rank …`, `mpi rank …`), sorted; launcher noise and our trace
/// left out.
fn result_lines(out: &str) -> Vec<String> {
    let mut v: Vec<String> = out
        .lines()
        .filter(|l| l.starts_with("pmix rank ") || l.starts_with("mpi rank "))
        .map(String::from)
        .collect();
    v.sort();
    v
}

/// What interop/c/pmix_kvs.c and interop/c/mpi_ring.c print, `n` ranks.
fn want_lines(prog: &str, n: u32) -> Vec<String> {
    let sum = n * n.saturating_sub(1) / 2;
    let mut v: Vec<String> = (0..n)
        .map(|r| match prog {
            "pmix_kvs" => format!("pmix rank {r} of {n}: kvs ok"),
            _ => format!(
                "mpi rank {r} of {n}: ring from {}, sum {sum}, bcast broadcast: ok",
                (r + n - 1) % n
            ),
        })
        .collect();
    v.sort();
    v
}

/// The two unmodified programs of the "pmix-wire's libpmix" rows: a
/// libpmix client (interop/c/pmix_kvs.c) and an Open MPI 4.1.4 program
/// (interop/c/mpi_ring.c), built.
fn kvs_and_ring(ctx: &Ctx, mpicc: &Path) -> Result<[(&'static str, PathBuf); 2], String> {
    Ok([
        (
            "pmix_kvs",
            crate::cbuild::build_c("pmix_kvs", &crate::cbuild::default_out_dir())?,
        ),
        (
            "mpi_ring",
            build_mpi(mpicc, "mpi_ring", &build_dir(ctx), "ompi414")?,
        ),
    ])
}

/// How many times our library's trace (`PMIX_CAPI_TRACE=1`) says `call`
/// in a run's output.
fn traced(out: &str, call: &str) -> usize {
    let line = format!("pmix-capi: {call}");
    out.lines().filter(|l| *l == line).count()
}

/// Open MPI 4.1.4's `mpirun -n N` as the grid runs it (as root, more
/// ranks than cores), in the scratch directory; the rank's command line
/// follows.
fn mpirun4_cmd(mpirun: &Path, n: u32, ctx: &Ctx) -> Command {
    let mut c = super::mpirun4_n(mpirun, n);
    c.current_dir(&ctx.scratch);
    c
}

/// Unmodified programs, each run twice by the launcher `launch` makes
/// (given `n` and the command line of one rank): on libpmix, and with
/// each rank started as `env LD_LIBRARY_PATH=<ours> PMIX_CAPI_TRACE=1
/// prog` (the launcher keeps its own libpmix). A libpmix client
/// (interop/c/pmix_kvs.c) and an Open MPI 4.1.4 program
/// (interop/c/mpi_ring.c); both runs must succeed and print what the
/// program prints when right, and our run's trace must show every rank's
/// PMIx_Init and PMIx_Finalize (libpmix's none). `rank_env` goes before
/// the program in both runs (Open MPI 4.1.4 direct-launches only under a
/// launcher it recognises).
fn ours_under(
    ctx: &Ctx,
    tag: &str,
    n: u32,
    rank_env: &[&str],
    launch: &dyn Fn(u32, &[&std::ffi::OsStr]) -> Command,
) -> Outcome {
    let found = libpmix4_dev()
        .and_then(|_| mpicc4())
        .and_then(|cc| our_libpmix(ctx).map(|l| (cc, l)));
    absent_or(found, |(cc, lib)| {
        let progs = match kvs_and_ring(ctx, &cc) {
            Ok(p) => p,
            Err(e) => return Outcome::Fail(e),
        };
        let mut done = Vec::new();
        for (name, exe) in progs {
            let ld = format!("LD_LIBRARY_PATH={}", lib.display());
            let mut runs = Vec::new();
            for ours in [false, true] {
                let mut argv: Vec<&std::ffi::OsStr> = vec!["env".as_ref()];
                argv.extend(rank_env.iter().map(std::ffi::OsStr::new));
                if ours {
                    argv.extend([std::ffi::OsStr::new(&ld), "PMIX_CAPI_TRACE=1".as_ref()]);
                }
                argv.push(exe.as_os_str());
                let which = if ours { "ours" } else { "libpmix" };
                let (ok, out) =
                    match run_logged(launch(n, &argv), ctx, &format!("{tag}-{name}-{which}")) {
                        Ok(x) => x,
                        Err(e) => return Outcome::Fail(format!("{name} on {which}: {e}")),
                    };
                let got = result_lines(&out);
                if !ok || got != want_lines(name, n) {
                    return Outcome::Fail(format!(
                        "{name} on {which}: launcher ok {ok}, output:\n{out}"
                    ));
                }
                let (inits, fins) = (traced(&out, "PMIx_Init"), traced(&out, "PMIx_Finalize"));
                if ours && (inits < n as usize || fins < n as usize) {
                    return Outcome::Fail(format!(
                        "{name} on ours: {inits} PMIx_Init and {fins} PMIx_Finalize traced for {n} ranks:\n{out}"
                    ));
                }
                if !ours && inits > 0 {
                    return Outcome::Fail(format!("{name} on libpmix called ours:\n{out}"));
                }
                runs.push(got);
            }
            if runs[0] != runs[1] {
                return Outcome::Fail(format!(
                    "{name}: libpmix printed {:?}, ours {:?}",
                    runs[0], runs[1]
                ));
            }
            done.push(name);
        }
        Outcome::Pass(format!(
            "{n} ranks of {} on ours print what they print on libpmix",
            done.join(" and ")
        ))
    })
}

/// Open MPI 4.1.4's `mpirun` (ORTE, which serves its ranks through
/// libpmix's server API in mca_pmix_ext3x.so) with our library as its
/// libpmix (first on mpirun's own LD_LIBRARY_PATH; each rank started with
/// `env -u` of it, so the ranks stay on libpmix 4.2.2): a libpmix client
/// and an Open MPI program, each judged against the same job on mpirun's
/// own libpmix; our trace must show mpirun's PMIx_server_init and no
/// rank's PMIx_Init (issue 35).
fn mpirun4_on_our_server(ctx: &Ctx) -> Outcome {
    let found = mpirun4().and_then(|m| {
        libpmix4_dev()
            .and_then(|_| mpicc4())
            .and_then(|cc| our_libpmix(ctx).map(|l| (m, cc, l)))
    });
    absent_or(found, |(m, cc, lib)| {
        let progs = match kvs_and_ring(ctx, &cc) {
            Ok(p) => p,
            Err(e) => return Outcome::Fail(e),
        };
        for (name, exe) in progs {
            for ours in [false, true] {
                let mut c = mpirun4_cmd(&m, N, ctx);
                if ours {
                    c.env("LD_LIBRARY_PATH", &lib).env("PMIX_CAPI_TRACE", "1");
                    c.args(["env", "-u", "LD_LIBRARY_PATH", "-u", "PMIX_CAPI_TRACE"]);
                }
                c.arg(&exe);
                let which = if ours { "ours" } else { "libpmix" };
                let (ok, out) = match run_logged(c, ctx, &format!("mpirun4-srv-{name}-{which}")) {
                    Ok(x) => x,
                    Err(e) => return Outcome::Fail(format!("{name} on {which}: {e}")),
                };
                if !ok || result_lines(&out) != want_lines(name, N) {
                    return Outcome::Fail(format!(
                        "{name}, mpirun on {which}: launcher ok {ok}, output:\n{out}"
                    ));
                }
                if ours && (traced(&out, "PMIx_server_init") == 0 || traced(&out, "PMIx_Init") > 0)
                {
                    return Outcome::Fail(format!(
                        "{name}: mpirun did not serve on ours (or a rank left libpmix):\n{out}"
                    ));
                }
            }
        }
        Outcome::Pass(format!(
            "{N} ranks of pmix_kvs and mpi_ring on libpmix 4.2.2, served by our library, as by libpmix"
        ))
    })
}

/// Slurm's slurmstepd with our library as the libpmix its PMIx plugin
/// opens (a second private cluster, each slurmd in a private mount
/// namespace: [`crate::slurm::Cluster::start_serving`]): `srun --mpi=pmix`
/// of a libpmix client and an Open MPI program on `nodes` nodes, `n`
/// ranks, each judged against the same job on the cluster whose
/// slurmstepd keeps libpmix. The programs: interop/c/pmix_kvs.c on
/// libpmix 4.2.2 and Open MPI 4.1.4's mpi_ring; the ring a second time
/// with Open MPI's async modex, whose ranks fetch their peers' data
/// through the host's direct_modex; and libpmix 5.0.11 clients, pmix_kvs
/// linked to the wheel's libpmix and the wheel's Open MPI 5.0.11
/// mpi_ring (Slurm 22.05's plugin is built for PMIx v4: on its own
/// slurmstepd they meet a 4.2.2 server). Every run must pass on ours;
/// one that fails on libpmix's slurmstepd is named in the reason (on two
/// nodes Slurm puts 3 ranks on n1 and 1 on n2, and Open MPI 5.0.11's ring
/// aborts in MPI_Init there, as it does whenever a node runs 3 of its
/// ranks (2 a node pass), while every 5.0.11 rank's get of
/// PMIX_LOCAL_PEERS is NOT_FOUND from the 4.2.2 server; on ours it
/// passes). On ours every rank's stderr
/// shows the PMIx_server_setup_fork slurmstepd made for it (our trace, in
/// the forked child) and no rank's PMIx_Init; on libpmix no trace. Across
/// nodes the fence goes through the host's fence_nb (Slurm's collective
/// between the slurmstepds) and back (issue 35).
fn srun_on_our_server(nodes: u32, n: u32, ctx: &Ctx) -> Outcome {
    let found = libpmix4_dev()
        .and_then(|_| mpicc4())
        .and_then(|cc| libpmix5().map(|l5| (cc, l5)))
        .and_then(|(cc, l5)| mpicc5().map(|cc5| (cc, l5, cc5)))
        .and_then(|(cc, l5, cc5)| our_libpmix(ctx).map(|l| (cc, l5, cc5, l.join("libpmix.so.2"))));
    absent_or(found, |(cc, lib5, cc5, lib)| {
        let built = kvs_and_ring(ctx, &cc).and_then(|p| {
            let kvs5 = build_with_lib("pmix_kvs", &lib5, &build_dir(ctx))?;
            let ring5 = build_mpi(&cc5, "mpi_ring", &build_dir(ctx), "ompi5011")?;
            Ok((p, kvs5, ring5))
        });
        let ([(_, kvs), (_, ring)], kvs5, ring5) = match built {
            Ok(p) => p,
            Err(e) => return Outcome::Fail(e),
        };
        // Open MPI 4's ring without a collecting fence in MPI_Init (its
        // async modex): each rank then fetches its peers' data on demand,
        // across nodes through the host's direct_modex
        let async_modex = [
            "OMPI_MCA_pmix_base_async_modex=1",
            "OMPI_MCA_pmix_base_collect_data=0",
        ];
        // (tag, program, executable, environment)
        let runs: [(&str, &str, PathBuf, &[&str]); 5] = [
            ("kvs", "pmix_kvs", kvs, &[]),
            ("ring", "mpi_ring", ring.clone(), &[]),
            ("ring-async", "mpi_ring", ring, &async_modex),
            ("kvs5", "pmix_kvs", kvs5, &[]),
            ("ring5", "mpi_ring", ring5, &[]),
        ];
        // the runs that failed on libpmix's slurmstepd (ours passes them)
        let mut theirs_failed = Vec::new();
        for (tag, name, exe, env) in runs {
            for ours in [false, true] {
                let which = if ours { "ours" } else { "libpmix" };
                let run = |cl: &crate::slurm::Cluster| {
                    let mut c = cl.srun();
                    c.args(["--mpi=pmix", "-N", &nodes.to_string(), "-n", &n.to_string()])
                        .arg("env")
                        .args(env)
                        .arg(&exe)
                        .current_dir(&ctx.scratch);
                    let (ok, out) =
                        match run_logged(c, ctx, &format!("srun{nodes}-srv-{tag}-{which}")) {
                            Ok(x) => x,
                            Err(e) => return Outcome::Fail(format!("{tag} on {which}: {e}")),
                        };
                    if !ok || result_lines(&out) != want_lines(name, n) {
                        return Outcome::Fail(format!(
                            "{tag}, slurmstepd on {which}: srun ok {ok}, output:\n{out}\n{}",
                            cl.logs()
                        ));
                    }
                    let forks = traced(&out, "PMIx_server_setup_fork");
                    let served = if ours {
                        forks >= n as usize
                    } else {
                        forks == 0
                    };
                    if !served || traced(&out, "PMIx_Init") > 0 {
                        return Outcome::Fail(format!(
                            "{tag}: {forks} setup_fork traced for {n} ranks on {which} (or a rank left libpmix):\n{out}"
                        ));
                    }
                    Outcome::Pass(String::new())
                };
                let got = if ours {
                    let start = || crate::slurm::Cluster::start_serving(2, &lib);
                    ctx.slurm_ours.with_start(start, run)
                } else {
                    ctx.slurm.with(run)
                };
                match got {
                    Outcome::Pass(_) => {}
                    // the reference may fail where ours must not
                    Outcome::Fail(_) if !ours => theirs_failed.push(tag),
                    other => return other,
                }
            }
        }
        let theirs = if theirs_failed.is_empty() {
            "as by libpmix".to_string()
        } else {
            format!(
                "as by libpmix but where libpmix's slurmstepd failed: {}",
                theirs_failed.join(" ")
            )
        };
        Outcome::Pass(format!(
            "{n} ranks of pmix_kvs and mpi_ring (also with async modex) on libpmix 4.2.2, and of pmix_kvs and Open MPI 5.0.11's mpi_ring on libpmix 5.0.11, {nodes} node(s), served by our library in slurmstepd, {theirs}"
        ))
    })
}

fn srun1_on_our_server(ctx: &Ctx) -> Outcome {
    srun_on_our_server(1, N, ctx)
}

fn srun2_on_our_server(ctx: &Ctx) -> Outcome {
    srun_on_our_server(2, 2 * N, ctx)
}

fn ours_under_mpirun4(ctx: &Ctx) -> Outcome {
    absent_or(mpirun4(), |m| {
        ours_under(ctx, "mpirun4-ours", N, &[], &|n, argv| {
            let mut c = mpirun4_cmd(&m, n, ctx);
            c.args(argv);
            c
        })
    })
}

fn ours_under_prterun5(ctx: &Ctx) -> Outcome {
    absent_or(prterun5(), |m| {
        let hint = "FLUX_JOB_ID=prterun";
        ours_under(ctx, "prterun5-ours", N, &[hint], &|n, argv| {
            let mut c = Command::new(&m);
            c.args([
                "--allow-run-as-root",
                "--map-by",
                ":OVERSUBSCRIBE",
                "-n",
                &n.to_string(),
            ])
            .args(argv)
            .current_dir(&ctx.scratch);
            c
        })
    })
}

/// [`ours_under`] Slurm's own PMIx plugin (libpmix 4.2.2 in slurmstepd)
/// on `nodes` nodes of the private cluster, `n` ranks.
fn ours_under_slurm(nodes: u32, n: u32, ctx: &Ctx) -> Outcome {
    ctx.slurm.with(|cl| {
        ours_under(ctx, &format!("slurm{nodes}-ours"), n, &[], &|n, argv| {
            let mut c = cl.srun();
            c.args(["--mpi=pmix", "-N", &nodes.to_string(), "-n", &n.to_string()])
                .args(argv)
                .current_dir(&ctx.scratch);
            c
        })
    })
}

fn ours_under_slurm_1(ctx: &Ctx) -> Outcome {
    ours_under_slurm(1, N, ctx)
}

fn ours_under_slurm_2(ctx: &Ctx) -> Outcome {
    ours_under_slurm(2, 2 * N, ctx)
}
