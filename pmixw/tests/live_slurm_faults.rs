//! Faults across nodes (issue 38 item 2; spec-notes/robustness.md "Across
//! nodes"), on one private two-node Slurm cluster (interop/src/slurm):
//! `srun --mpi=pmi2 -N 2 --ntasks-per-node=1 pmixw run -n 4` runs ranks
//! 0 and 1 on n1, 2 and 3 on n2, and rank 2 dies there (SIGKILL, SIGSEGV,
//! an exit without finalize, PMIx_Abort; interop/c/fault.c) at init,
//! inside a fence with data and inside a get its peers on n1 wait in for
//! its data; or, while the ranks wait in a fence, all of n2's ranks are
//! killed, or n2's `pmixw run` is (with libpmix ranks, and with `sh`
//! ranks that would not notice), or the bridge between the nodes'
//! `pmixw run` is cut; or rank 2 exits while the others' children run.
//! Each case checks srun's exit status, slurmctld's view of the job, the
//! lines naming the rank and why, that n1's ranks (blocked on n2) got an
//! error, and that nothing is left: no process of the job on either node
//! (a rank's descendants included), no file in either node's TMPDIR, no
//! slurmstepd. It prints the time from the fault until srun exited and
//! until every process of the job was gone. The same faults run under
//! Slurm's own PMIx server (`srun --mpi=pmix`, libpmix 4.2.2 ranks) where
//! they make sense there; its outcome is printed beside ours (the table of
//! robustness.md) and checked only for what any launcher must do (srun
//! fails, the job ends). Bounded by hang guards only.

use pmix_test_kit::slurm::{self, Cluster};
use pmix_test_kit::{hosts, interop, process};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The rank that dies: on n2 (node 1), block placement of 4 over 2 nodes.
const VICTIM: u32 = 2;
/// A case's hang guard: far below the PMI-2 fence timeout (a day), so a
/// case that passes was ended by the fault, not by a timeout.
const GUARD: Duration = Duration::from_secs(120);
/// How long a step's slurmstepd may take to go once srun has exited
/// (it reports the step's end to slurmctld first): a hang guard.
const SETTLE: Duration = Duration::from_secs(20);
/// How long the job's processes may take to go once srun has exited (the
/// kernel reaping what was just killed): far below what a leftover of a
/// case (a `sleep 10`) runs.
const SETTLE_PROCS: Duration = Duration::from_secs(3);
/// The same for the reference (Slurm's PMIx plugin can leave a step's
/// slurmstepd for good, after PMIx_Abort): it is printed, not awaited.
const SETTLE_SLURM: Duration = Duration::from_secs(3);

/// What happens to the job.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Fault {
    /// Rank [`VICTIM`] dies at this stage of fault.c in this way.
    Rank(&'static str, &'static str),
    /// Every rank of n2 is killed (SIGKILL) while n1's wait in a fence.
    NodeRanks,
    /// n2's `pmixw run` is killed (SIGKILL) while the ranks wait in a fence.
    Launcher,
    /// n2's `pmixw run` is killed (SIGKILL) while its ranks (`sh`, no
    /// PMIx client to notice) wait in a child `sleep 10`.
    LauncherBusy,
    /// Every bridge connection between the two `pmixw run` is shut down
    /// while the ranks wait in a fence.
    Bridge,
    /// Rank 2 (`sh`) exits 3 while every other rank's `sh` waits in a
    /// child `sleep 10`: the descendants must end with the job.
    Descendants,
}

impl Fault {
    fn name(&self) -> String {
        match self {
            Fault::Rank(stage, kind) => format!("rank {VICTIM} {kind} at {stage}"),
            Fault::NodeRanks => "n2's ranks killed in a fence".into(),
            Fault::Launcher => "n2's pmixw killed in a fence".into(),
            Fault::LauncherBusy => "n2's pmixw killed, its ranks not PMIx".into(),
            Fault::Bridge => "the bridge cut in a fence".into(),
            Fault::Descendants => format!("rank {VICTIM} exits 3, the others' children wait"),
        }
    }

    /// Whether the fault is the test's doing (once the ranks wait).
    fn external(&self) -> bool {
        matches!(
            self,
            Fault::NodeRanks | Fault::Launcher | Fault::LauncherBusy | Fault::Bridge
        )
    }

    /// The ranks' command line.
    fn program(&self, exe: &Path) -> Vec<String> {
        let exe = exe.display().to_string();
        let v = VICTIM.to_string();
        match self {
            Fault::Rank(stage, kind) => {
                vec![exe, "pmix".into(), stage.to_string(), kind.to_string(), v]
            }
            Fault::LauncherBusy => vec![
                "sh".into(),
                "-c".into(),
                format!(
                    r#"if [ "$PMIX_RANK" = {VICTIM} ]; then echo $$ > "$FAULT_SYNC/victim.{VICTIM}"; fi; sleep 10"#
                ),
            ],
            Fault::Descendants => vec![
                "sh".into(),
                "-c".into(),
                format!(
                    r#"if [ "$PMIX_RANK" = {VICTIM} ]; then echo $$ > "$FAULT_SYNC/victim.{VICTIM}"; sleep 1; exit 3; fi; sleep 10"#
                ),
            ],
            // the victim holds: it enters the fence 3 s late
            _ => vec![exe, "pmix".into(), "hold".into(), "none".into(), v],
        }
    }
}

/// Which server the ranks have.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Under {
    /// `srun --mpi=pmi2 … pmixw run -n 4`.
    Pmixw,
    /// `srun --mpi=pmix -N 2 --ntasks-per-node=2`: Slurm's own PMIx server.
    Slurm,
}

/// A process of a job, found by the marker in its environment.
#[derive(Clone, Debug)]
struct JobProc {
    pid: u32,
    comm: String,
    state: char,
    node: String,
    rank: Option<u32>,
}

fn environ(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/environ"))
        .map(|e| {
            e.split(|&b| b == 0)
                .map(|v| String::from_utf8_lossy(v).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Every live (not zombie) process whose environment holds `marker`
/// (srun gives its environment to the tasks, they to theirs), but `not`.
fn job_procs(marker: &str, not: u32) -> Vec<JobProc> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if pid == not || pid == std::process::id() {
            continue;
        }
        let env = environ(pid);
        if !env.iter().any(|v| v == marker) {
            continue;
        }
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let Some(close) = stat.rfind(')') else {
            continue;
        };
        let state = stat[close + 2..].chars().next().unwrap_or('?');
        if state == 'Z' || state == 'X' {
            continue;
        }
        let var = |k: &str| {
            env.iter()
                .find_map(|v| v.strip_prefix(&format!("{k}=")).map(str::to_string))
        };
        out.push(JobProc {
            pid,
            comm: stat[stat.find('(').map_or(0, |i| i + 1)..close].to_string(),
            state,
            node: var("SLURMD_NODENAME").unwrap_or_default(),
            rank: var("PMIX_RANK").and_then(|r| r.parse().ok()),
        });
    }
    out
}

fn alive(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    match stat.rfind(')') {
        Some(close) => !matches!(stat[close + 2..].chars().next(), Some('Z' | 'X')),
        None => false,
    }
}

fn kill(pid: u32, sig: i32) {
    // SAFETY: kill(2) of one positive pid
    unsafe {
        libc::kill(pid as i32, sig);
    }
}

/// The established TCP connections of the system: inode -> (local, remote).
fn tcp_conns() -> BTreeMap<u64, (String, String)> {
    let mut out = BTreeMap::new();
    for f in ["/proc/net/tcp", "/proc/net/tcp6"] {
        for l in std::fs::read_to_string(f)
            .unwrap_or_default()
            .lines()
            .skip(1)
        {
            let w: Vec<&str> = l.split_whitespace().collect();
            // sl local remote st ... uid timeout inode
            if w.len() > 9 && w[3] == "01" {
                if let Ok(inode) = w[9].parse() {
                    out.insert(inode, (w[1].to_string(), w[2].to_string()));
                }
            }
        }
    }
    out
}

/// A process's sockets: (fd, inode).
fn sockets(pid: u32) -> Vec<(i32, u64)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let Ok(fd) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let link = std::fs::read_link(e.path()).unwrap_or_default();
        let link = link.to_string_lossy();
        if let Some(i) = link
            .strip_prefix("socket:[")
            .and_then(|s| s.strip_suffix(']'))
        {
            if let Ok(i) = i.parse() {
                out.push((fd, i));
            }
        }
    }
    out
}

/// Cut every TCP connection between processes `a` and `b` (the two
/// nodes' `pmixw run`: their bridge): each is shut down both ways from
/// `a`'s side, through a copy of its fd (pidfd_getfd), as a network that
/// drops the connection does. How many were cut.
fn cut_between(a: u32, b: u32) -> usize {
    let conns = tcp_conns();
    let of = |pid| -> Vec<(i32, (String, String))> {
        sockets(pid)
            .into_iter()
            .filter_map(|(fd, i)| conns.get(&i).map(|c| (fd, c.clone())))
            .collect()
    };
    let theirs = of(b);
    // one fd per connection (a connection's reader holds a copy)
    let mut ours: Vec<(i32, (String, String))> = of(a)
        .into_iter()
        .filter(|(_, (l, r))| theirs.iter().any(|(_, (tl, tr))| tl == r && tr == l))
        .collect();
    ours.sort_by(|x, y| x.1.cmp(&y.1));
    ours.dedup_by(|x, y| x.1 == y.1);
    // SAFETY: pidfd_open and pidfd_getfd take plain integers and return
    // new fds of ours (or -1); shutdown and close act on those only
    unsafe {
        let pidfd = libc::syscall(libc::SYS_pidfd_open, a as libc::c_long, 0) as i32;
        assert!(
            pidfd >= 0,
            "pidfd_open {a}: {}",
            std::io::Error::last_os_error()
        );
        for (fd, _) in &ours {
            let mine = libc::syscall(libc::SYS_pidfd_getfd, pidfd, *fd as libc::c_long, 0) as i32;
            assert!(
                mine >= 0,
                "pidfd_getfd {a} fd {fd} of {ours:?}: {}",
                std::io::Error::last_os_error()
            );
            libc::shutdown(mine, libc::SHUT_RDWR);
            libc::close(mine);
        }
        libc::close(pidfd);
    }
    ours.len()
}

/// slurmctld's view of the job named `name`: (JobState, ExitCode), once
/// it is neither running nor completing (hang guard [`SETTLE`]).
fn job_state(c: &Cluster, name: &str) -> (String, String) {
    let start = Instant::now();
    loop {
        let o = Command::new(slurm::which("scontrol").unwrap_or_else(|| "scontrol".into()))
            .envs(c.env())
            .args(["-o", "show", "job"])
            .output()
            .expect("scontrol");
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        let line = text
            .lines()
            .find(|l| l.split(' ').any(|w| w == format!("JobName={name}")))
            .unwrap_or("");
        let field = |k: &str| {
            line.split(' ')
                .find_map(|w| w.strip_prefix(&format!("{k}=")))
                .unwrap_or("?")
                .to_string()
        };
        let (state, code) = (field("JobState"), field("ExitCode"));
        if !matches!(
            state.as_str(),
            "RUNNING" | "COMPLETING" | "PENDING" | "CONFIGURING"
        ) || start.elapsed() > SETTLE
        {
            return (state, code);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// What became of one job.
struct Outcome {
    status: Option<i32>,
    signal: Option<i32>,
    stdout: String,
    stderr: String,
    /// From the fault until srun exited, and until every process of the
    /// job (on both nodes) and every slurmstepd was gone.
    to_srun: f64,
    to_gone: f64,
    left: Vec<String>,
    stepds: Vec<u32>,
    files: Vec<String>,
    state: (String, String),
    /// What the external fault did.
    did: String,
    /// After a killed `pmixw run`: n2's TMPDIR once the next server ran.
    swept: Option<Vec<String>>,
    hung: bool,
}

impl Outcome {
    /// What rank `r` printed: "done", "OP failed: WHY", or "" (ended
    /// without a word).
    fn peer(&self, r: u32) -> String {
        let me = format!("fault peer {r}: ");
        self.stdout
            .lines()
            .find_map(|l| l.strip_prefix(&me))
            .unwrap_or("")
            .to_string()
    }
}

/// Drain a pipe into a string on a thread of its own.
fn drain(r: impl std::io::Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = String::new();
        let mut r = r;
        let _ = std::io::Read::read_to_string(&mut r, &mut s);
        s
    })
}

fn files_in(d: &Path) -> Vec<String> {
    std::fs::read_dir(d)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Run `fault` under `under` as job `tag`, in `root`.
fn run_case(
    c: &Cluster,
    exe: &Path,
    under: Under,
    fault: Fault,
    tag: &str,
    root: &Path,
) -> Outcome {
    let case = root.join(tag);
    let (tmp, sync) = (case.join("tmp"), case.join("sync"));
    for n in c.nodes() {
        std::fs::create_dir_all(tmp.join(n)).unwrap();
    }
    std::fs::create_dir_all(&sync).unwrap();
    let marker = format!("PMIXW_FAULT_CASE={tag}");
    let mut cmd = c.srun();
    match under {
        Under::Pmixw => cmd.args(["--mpi=pmi2", "-N", "2", "--ntasks-per-node=1"]),
        Under::Slurm => cmd.args(["--mpi=pmix", "-N", "2", "--ntasks-per-node=2"]),
    };
    // each node's TMPDIR of its own
    cmd.args(["-J", tag, "sh", "-c"])
        .arg(r#"TMPDIR="$FAULT_TMP/$SLURMD_NODENAME"; export TMPDIR; exec "$@""#)
        .arg("sh");
    if under == Under::Pmixw {
        cmd.arg(env!("CARGO_BIN_EXE_pmixw"))
            .args(["run", "-n", "4"]);
    }
    cmd.args(fault.program(exe))
        .env("PMIXW_FAULT_CASE", tag)
        .env("FAULT_TMP", &tmp)
        .env("FAULT_SYNC", &sync)
        // Slurm's PMIx plugin waits 300 s for a fence by default
        .env("SLURM_PMIX_TIMEOUT", "5")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let before = c.stepds();
    let start = Instant::now();
    let mut child: Child = cmd.spawn().expect("srun");
    let srun = child.id();
    let (out, err) = (
        drain(child.stdout.take().unwrap()),
        drain(child.stderr.take().unwrap()),
    );
    // fault.c: victim R writes its pid to victim.R
    let victim_file = sync.join(format!("victim.{VICTIM}"));
    let mut victim: Option<u32> = None;
    let mut fault_at: Option<Instant> = None;
    let mut did = String::new();
    let mut hung = false;
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if start.elapsed() > GUARD {
            hung = true;
            // srun ends its step on a second SIGINT
            kill(srun, libc::SIGINT);
            std::thread::sleep(Duration::from_millis(300));
            kill(srun, libc::SIGINT);
            std::thread::sleep(Duration::from_secs(2));
            let _ = child.kill();
            break child.wait().unwrap();
        }
        if victim.is_none() {
            victim = std::fs::read_to_string(&victim_file)
                .ok()
                .and_then(|s| s.trim().parse().ok());
            if victim.is_some() && fault.external() {
                // the victim (fault.c `hold`) enters the fence 3 s after
                // its init, the others are in it by then (`sh` ranks: in
                // their `sleep`)
                std::thread::sleep(Duration::from_millis(1000));
                did = act(fault, &marker, srun);
                fault_at = Some(Instant::now());
            }
        }
        if let (Some(v), None) = (victim, fault_at) {
            if !alive(v) {
                fault_at = Some(Instant::now());
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let srun_at = Instant::now();
    let fault_at = fault_at.unwrap_or(srun_at);
    // what is left once srun has gone: the job's processes, the steps'
    // daemons (a hang guard)
    let settle = if under == Under::Slurm {
        SETTLE_SLURM
    } else {
        SETTLE
    };
    let (mut left, mut stepds): (Vec<JobProc>, Vec<u32>);
    loop {
        left = job_procs(&marker, srun);
        stepds = c
            .stepds()
            .into_iter()
            .filter(|p| !before.contains(p))
            .collect();
        let waited = srun_at.elapsed();
        if (left.is_empty() || waited > SETTLE_PROCS) && (stepds.is_empty() || waited > settle) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let gone_at = Instant::now();
    let left: Vec<String> = left
        .iter()
        .map(|p| {
            format!(
                "{} {} {} on {} (rank {:?})",
                p.pid, p.state, p.comm, p.node, p.rank
            )
        })
        .collect();
    // leftovers (the cluster's slurmstepd too) are ended here, so that
    // one case cannot spoil the next
    for p in job_procs(&marker, srun) {
        kill(p.pid, libc::SIGKILL);
    }
    for &p in &stepds {
        kill(p, libc::SIGKILL);
    }
    // a killed `pmixw run`'s guard removes its rendezvous files once it
    // has ended the ranks (pmixw/src/cli/guard.rs)
    if matches!(fault, Fault::Launcher | Fault::LauncherBusy) && under == Under::Pmixw {
        process::wait_until("the killed pmixw's guard removes its files", || {
            files_in(&tmp.join("n2")).is_empty()
        });
    }
    let files: Vec<String> = c
        .nodes()
        .iter()
        .flat_map(|n| {
            files_in(&tmp.join(n))
                .into_iter()
                .map(move |f| format!("{n}/{f}"))
        })
        .collect();
    // a next server in that TMPDIR runs and leaves nothing either
    let swept = if matches!(fault, Fault::Launcher | Fault::LauncherBusy) && under == Under::Pmixw {
        let next = Command::new(env!("CARGO_BIN_EXE_pmixw"))
            .args(["run", "-n", "1", "true"])
            .env("TMPDIR", tmp.join("n2"))
            .output()
            .expect("pmixw run");
        assert!(
            next.status.success(),
            "{}",
            String::from_utf8_lossy(&next.stderr)
        );
        Some(files_in(&tmp.join("n2")))
    } else {
        None
    };
    let state = job_state(c, tag);
    let o = Outcome {
        status: status.code(),
        signal: std::os::unix::process::ExitStatusExt::signal(&status),
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        to_srun: srun_at.saturating_duration_since(fault_at).as_secs_f64(),
        to_gone: gone_at.saturating_duration_since(fault_at).as_secs_f64(),
        left,
        stepds,
        files,
        state,
        did,
        swept,
        hung,
    };
    let _ = std::fs::remove_dir_all(&case);
    o
}

/// The external fault, done now; what was done.
fn act(fault: Fault, marker: &str, srun: u32) -> String {
    let procs = job_procs(marker, srun);
    fn on<'a>(procs: &'a [JobProc], node: &'a str) -> impl Iterator<Item = &'a JobProc> {
        procs.iter().filter(move |p| p.node == node)
    }
    match fault {
        Fault::NodeRanks => {
            let v: Vec<&JobProc> = on(&procs, "n2").filter(|p| p.rank.is_some()).collect();
            for p in &v {
                kill(p.pid, libc::SIGKILL);
            }
            format!(
                "killed ranks {:?}",
                v.iter().map(|p| p.rank).collect::<Vec<_>>()
            )
        }
        Fault::Launcher | Fault::LauncherBusy => {
            let v: Vec<&JobProc> = on(&procs, "n2").filter(|p| p.comm == "pmixw").collect();
            for p in &v {
                kill(p.pid, libc::SIGKILL);
            }
            format!("killed {} pmixw", v.len())
        }
        Fault::Bridge => {
            let a = on(&procs, "n1").find(|p| p.comm == "pmixw").map(|p| p.pid);
            let b = on(&procs, "n2").find(|p| p.comm == "pmixw").map(|p| p.pid);
            match (a, b) {
                (Some(a), Some(b)) => format!("cut {} connections", cut_between(a, b)),
                _ => "no two pmixw".into(),
            }
        }
        _ => String::new(),
    }
}

fn fault_program() -> Option<PathBuf> {
    process::require(
        "libpmix 4.2.2 (the fault matrix's program)",
        hosts::libpmix4_dev().and_then(|_| interop::build_c("fault", &interop::default_out_dir())),
    )
}

/// A line for the log: what the job came to.
fn summary(o: &Outcome) -> String {
    let peers: Vec<String> = (0..4)
        .map(|r| {
            let p = o.peer(r);
            format!("{r}:{}", if p.is_empty() { "-" } else { p.as_str() })
        })
        .collect();
    let said: Vec<&str> = o
        .stderr
        .lines()
        .filter(|l| l.starts_with("srun: error") || l.contains("pmixw run"))
        .collect();
    format!(
        "srun {:?}{} ({:.2} s after the fault; all gone {:.2} s) job {} {} {}; peers [{}]; left {:?} stepds {:?} files {:?}\n    said: {}",
        o.status,
        o.signal.map(|s| format!(" signal {s}")).unwrap_or_default(),
        o.to_srun,
        o.to_gone,
        o.state.0,
        o.state.1,
        if o.did.is_empty() { String::new() } else { format!("({})", o.did) },
        peers.join(", "),
        o.left,
        o.stepds,
        o.files,
        said.join("\n          ")
    )
}

/// What `pmixw run` must come to in a case: srun's status, slurmctld's
/// ExitCode of the job, the lines naming the rank and why, and whether
/// n1's ranks (blocked on n2) must report an error.
struct Want {
    status: i32,
    exit_code: String,
    lines: Vec<String>,
    /// The error n1's ranks print ("fence failed: …"), if they must.
    error: Option<&'static str>,
    /// Whether they may complete instead: the victim died inside a fence
    /// it had entered with its data.
    or_done: bool,
    /// Whether they may be ended without a word instead: a task killed by
    /// a signal (n2's `pmixw run`) makes srun end the whole step at once.
    or_ended: bool,
}

fn want(f: Fault) -> Want {
    let n1 = |st: i32, why: &str| {
        format!("pmixw run (node 0, n1): the job ends with status {st}: node 1 (n2): {why}")
    };
    match f {
        Fault::Rank(stage, kind) => {
            let (status, why, n2) = match kind {
                "kill" => (
                    137,
                    "rank 2 was killed by signal 9",
                    "was killed by signal 9 before finalizing",
                ),
                "segv" => (
                    139,
                    "rank 2 was killed by signal 11",
                    "was killed by signal 11 before finalizing",
                ),
                "exit" => (
                    3,
                    "rank 2 exited with status 3",
                    "exited with status 3 before finalizing",
                ),
                _ => (
                    7,
                    "rank 2 aborted with status 7: fault abort",
                    "aborted with status 7: fault abort",
                ),
            };
            let n2 = if kind == "abort" {
                format!("pmixw run: rank 2 {n2}")
            } else {
                format!("pmixw run: rank 2 of pmixw-* {n2}")
            };
            Want {
                status,
                exit_code: format!("{status}:0"),
                lines: vec![n2, n1(status, why)],
                error: Some(if stage == "get" {
                    "get failed: "
                } else {
                    "fence failed: "
                }),
                or_done: stage == "fence",
                or_ended: false,
            }
        }
        Fault::NodeRanks => Want {
            status: 137,
            exit_code: "137:0".into(),
            lines: vec![n1(137, "rank * was killed by signal 9")],
            error: Some("fence failed: "),
            or_done: false,
            or_ended: false,
        },
        // srun: the task killed by SIGKILL; n1 loses the node
        Fault::Launcher => Want {
            status: 137,
            exit_code: "0:9".into(),
            lines: vec![
                "srun: error: n2: task 1: Killed".into(),
                "pmixw run (node 0, n1): the job ends with status 1: lost node 1 (n2)".into(),
            ],
            error: Some("fence failed: "),
            or_done: false,
            or_ended: true,
        },
        Fault::LauncherBusy => Want {
            status: 137,
            exit_code: "0:9".into(),
            lines: vec![
                "srun: error: n2: task 1: Killed".into(),
                "pmixw run (node 0, n1): the job ends with status 1: lost node 1 (n2)".into(),
            ],
            error: None,
            or_done: false,
            or_ended: false,
        },
        // whichever node sees its connection go first ends the job
        Fault::Bridge => Want {
            status: 1,
            exit_code: "1:0".into(),
            lines: vec!["the job ends with status 1: *lost node *".into()],
            error: Some("fence failed: "),
            or_done: false,
            or_ended: false,
        },
        Fault::Descendants => Want {
            status: 3,
            exit_code: "3:0".into(),
            lines: vec![n1(3, "rank 2 exited with status 3")],
            error: None,
            or_done: false,
            or_ended: false,
        },
    }
}

/// Whether `line` holds the parts of `pattern` between its `*`, in order.
fn matches_line(line: &str, pattern: &str) -> bool {
    let mut rest = line;
    for part in pattern.split('*') {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// The problems of our outcome in a case (empty: it passed).
fn judge(f: Fault, o: &Outcome) -> Vec<String> {
    let w = want(f);
    let mut bad = Vec::new();
    if o.hung {
        bad.push("hung".to_string());
    }
    if o.status != Some(w.status) {
        bad.push(format!("srun's status {:?}, not {}", o.status, w.status));
    }
    if o.state.0 != "FAILED" || o.state.1 != w.exit_code {
        bad.push(format!(
            "slurmctld: {:?}, not FAILED {}",
            o.state, w.exit_code
        ));
    }
    for l in &w.lines {
        if !o.stderr.lines().any(|x| matches_line(x, l)) {
            bad.push(format!("no line {l:?}"));
        }
    }
    if let Some(e) = w.error {
        for r in [0, 1] {
            let p = o.peer(r);
            if !(p.starts_with(e) || (w.or_done && p == "done") || (w.or_ended && p.is_empty())) {
                bad.push(format!("rank {r} on n1: {p:?}, not {e:?}…"));
            }
        }
    }
    if !o.left.is_empty() {
        bad.push(format!("left running: {:?}", o.left));
    }
    if !o.stepds.is_empty() {
        bad.push(format!("slurmstepd left: {:?}", o.stepds));
    }
    // a killed pmixw's own rendezvous files too: its guard removes them
    if !o.files.is_empty() {
        bad.push(format!("left in TMPDIR: {:?}", o.files));
    }
    if let Some(s) = &o.swept {
        if !s.is_empty() {
            bad.push(format!("not swept by the next server: {s:?}"));
        }
    }
    bad
}

#[test]
fn faults_on_one_node_end_the_job_on_both_as_srun_sees_it() {
    let Some(exe) = fault_program() else { return };
    let Some(c) = slurm::for_test(2) else { return };
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("slurm-faults-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    // (FAULT_ONLY=WORDS: only the cases whose name holds them)
    let only = std::env::var("FAULT_ONLY").unwrap_or_default();
    let mut faults = Vec::new();
    for stage in ["init", "fence", "get"] {
        for kind in ["kill", "segv", "exit", "abort"] {
            faults.push(Fault::Rank(stage, kind));
        }
    }
    faults.extend([
        Fault::NodeRanks,
        Fault::Launcher,
        Fault::LauncherBusy,
        Fault::Bridge,
        Fault::Descendants,
    ]);
    let t0 = Instant::now();
    let (mut jobs, mut failed) = (0, Vec::new());
    for (i, f) in faults.iter().enumerate() {
        if !only.is_empty() && !f.name().contains(&only) {
            continue;
        }
        for under in [Under::Pmixw, Under::Slurm] {
            // no pmixw, no bridge under Slurm's own server
            if under == Under::Slurm
                && matches!(f, Fault::Launcher | Fault::LauncherBusy | Fault::Bridge)
            {
                continue;
            }
            let tag = format!("f{i}{}", if under == Under::Slurm { "s" } else { "p" });
            let t = Instant::now();
            let o = run_case(&c, &exe, under, *f, &tag, &root);
            jobs += 1;
            let bad = match under {
                Under::Pmixw => judge(*f, &o),
                // the reference: the fault is seen (srun fails), the job
                // ends (the fence's timeout is 5 s here); printed beside ours
                Under::Slurm => {
                    let mut b = Vec::new();
                    if o.hung || o.status == Some(0) {
                        b.push(format!(
                            "srun --mpi=pmix: {:?} (hung: {})",
                            o.status, o.hung
                        ));
                    }
                    b
                }
            };
            println!(
                "{:<6} {:<48} {} [job {:.1} s]{}",
                format!("{under:?}"),
                f.name(),
                summary(&o),
                t.elapsed().as_secs_f64(),
                if bad.is_empty() {
                    String::new()
                } else {
                    format!("\n    FAIL: {}", bad.join("; "))
                }
            );
            if !bad.is_empty() {
                failed.push(format!(
                    "{under:?} {}: {}\nstdout:\n{}stderr:\n{}",
                    f.name(),
                    bad.join("; "),
                    o.stdout,
                    o.stderr
                ));
            }
        }
    }
    println!("{jobs} jobs in {:.1} s", t0.elapsed().as_secs_f64());
    let _ = std::fs::remove_dir_all(&root);
    c.stop();
    assert!(
        failed.is_empty(),
        "{} of {jobs} failed:\n{}",
        failed.len(),
        failed.join("\n\n")
    );
}
