//! A private Slurm cluster on this machine, for tests, benches and
//! `pmixw`: its own `munged`, `slurmctld` and one `slurmd -N nK` per node,
//! on free loopback ports, with every file under one scratch directory.
//! Several slurmd on one host are a supported Slurm setup (`-N`, one
//! `Port=` and `%n` spool/tmp directories per node). [`Cluster::stop`] (or
//! drop) stops exactly the daemons it started, by pid, and removes the
//! directory.
//!
//! [`Cluster::start_serving`] makes slurmstepd serve its ranks with
//! another libpmix (pmix-wire's): Slurm's PMIx plugin opens libpmix by
//! the absolute path compiled into it (`<dir>/libpmix.so`, no `NEEDED`
//! entry, nothing in slurm.conf or mpi.conf names it), so each slurmd
//! runs in a private mount namespace (`unshare --mount`) where that
//! directory is an overlay of symbolic links to the real files but for
//! `libpmix.so`, which is the given library. The ranks still load the
//! real `libpmix.so.2`; nothing changes outside those daemons.
//!
//! ```no_run
//! let c = pmix_interop::slurm::Cluster::start(2)?;
//! let out = c.srun().args(["-N", "2", "hostname"]).output().map_err(|e| e.to_string())?;
//! assert!(out.status.success());
//! c.stop();
//! # Ok::<(), String>(())
//! ```

use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long the daemons of a cluster of up to two nodes get to come up
/// (each further node adds [`START_PER_NODE`]), and to stop before SIGKILL.
pub const START_LIMIT: Duration = Duration::from_secs(40);
/// What each node past the second adds to [`START_LIMIT`] (16 slurmd
/// starting together on two loaded cores register one after another).
pub const START_PER_NODE: Duration = Duration::from_secs(5);
const STOP_LIMIT: Duration = Duration::from_secs(10);

/// The most nodes a cluster may have: every slurmd is a daemon of its own
/// (~10 MB, a port, a spool directory) on this one machine, and 16 are
/// what the multi-node benches use (pmixw/benches/wireup_scale.rs).
pub const MAX_NODES: usize = 16;

/// The tasks a node may run (`CPUs=` and `MaxTasksPerNode=`): 4 096 ranks on
/// one node, the most the wireup benches start there (Slurm's default is
/// 512 tasks per node).
pub const TASKS_PER_NODE: usize = 4096;

/// The programs a cluster needs; [`missing`] names those not found.
pub const PROGRAMS: &[&str] = &["munged", "munge", "slurmctld", "slurmd", "srun", "sinfo"];

/// Find a program on PATH, then in the sbin directories daemons live in
/// (often not on a user's PATH).
pub fn which(prog: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/local/sbin"].map(PathBuf::from))
        .map(|d| d.join(prog))
        .find(|p| p.is_file())
}

/// The programs of [`PROGRAMS`] that are not installed.
pub fn missing() -> Vec<&'static str> {
    PROGRAMS
        .iter()
        .copied()
        .filter(|p| which(p).is_none())
        .collect()
}

/// For live tests: the cluster, or None (after saying what is skipped)
/// where Slurm is not installed. In CI (`CI=true`) a missing Slurm, like a
/// cluster that does not start, panics: the test fails.
pub fn for_test(nodes: usize) -> Option<Cluster> {
    let miss = missing();
    if !miss.is_empty() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI: Slurm is missing ({})",
            miss.join(" ")
        );
        eprintln!("skipped: Slurm not installed ({})", miss.join(" "));
        return None;
    }
    // a port chosen free can be taken by another process before the
    // daemon binds it: a second and third try get fresh ports
    let mut last = String::new();
    for _ in 0..3 {
        match Cluster::start(nodes) {
            Ok(c) => return Some(c),
            Err(e) => last = e,
        }
    }
    panic!("cannot start the Slurm cluster: {last}")
}

/// A first job id drawn for a new cluster (std's hasher keys come from
/// the operating system's random source), below Slurm's MaxJobId.
fn first_job_id() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let r = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    1_000 + (r % 60_000_000) as u32
}

fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

fn scratch() -> std::io::Result<PathBuf> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!(
        "pmixw-slurm-{}-{}-{nanos}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir(&dir)?;
    Ok(dir)
}

fn user() -> String {
    Command::new("id")
        .arg("-un")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "root".into())
}

/// The directory Slurm's PMIx plugin opens `libpmix.so` from: the
/// absolute path compiled into `mpi_pmix*.so` (found beside the
/// libslurmfull.so slurmd links) that holds a `libpmix.so`.
pub fn plugin_libpmix_dir() -> Result<PathBuf, String> {
    let slurmd = which("slurmd").ok_or("slurmd not installed")?;
    let ldd = Command::new("ldd")
        .arg(&slurmd)
        .output()
        .map_err(|e| format!("ldd: {e}"))?;
    let text = String::from_utf8_lossy(&ldd.stdout);
    let full = text
        .lines()
        .find_map(|l| {
            l.split("=>")
                .nth(1)?
                .split_whitespace()
                .next()
                .filter(|p| p.contains("libslurmfull"))
        })
        .map(PathBuf::from)
        .ok_or("slurmd links no libslurmfull.so")?;
    let plugins = full.parent().ok_or("libslurmfull.so has no directory")?;
    for name in [
        "mpi_pmix_v5.so",
        "mpi_pmix_v4.so",
        "mpi_pmix_v3.so",
        "mpi_pmix.so",
    ] {
        let Ok(bytes) = std::fs::read(plugins.join(name)) else {
            continue;
        };
        let found = bytes
            .split(|&b| b == 0)
            .filter(|s| s.first() == Some(&b'/') && s.len() < 4096)
            .filter_map(|s| std::str::from_utf8(s).ok())
            .map(PathBuf::from)
            .find(|d| d.join("libpmix.so").exists());
        if let Some(d) = found {
            return Ok(d);
        }
    }
    Err(format!(
        "no Slurm PMIx plugin in {} names a libpmix directory",
        plugins.display()
    ))
}

/// A running private cluster.
pub struct Cluster {
    dir: PathBuf,
    conf: PathBuf,
    nodes: Vec<String>,
    /// The libpmix slurmstepd serves with instead of the plugin's
    /// ([`Cluster::start_serving`]), and whether its trace is on.
    libpmix: Option<(PathBuf, bool)>,
    /// (what, process), in start order; stopped in reverse.
    daemons: Vec<(String, Child)>,
}

fn io(what: &'static str) -> impl Fn(std::io::Error) -> String {
    move |e| format!("{what}: {e}")
}

impl Cluster {
    /// Start munged, slurmctld and `nodes` slurmd (named n1, n2, …; at most
    /// [`MAX_NODES`]), and wait until every node is idle (up to
    /// [`START_LIMIT`], plus [`START_PER_NODE`] for each node past the
    /// second).
    pub fn start(nodes: usize) -> Result<Cluster, String> {
        Cluster::start_with(nodes, None)
    }

    /// As [`Cluster::start`], with every slurmstepd's PMIx plugin
    /// opening `libpmix` (a copy) in place of its own libpmix.so, and
    /// `PMIX_CAPI_TRACE=1` in the daemons' environment (pmix-wire's
    /// library then traces its calls; the ranks, forked by slurmstepd,
    /// print its PMIx_server_setup_fork on their stderr).
    pub fn start_serving(nodes: usize, libpmix: &Path) -> Result<Cluster, String> {
        Cluster::start_serving_traced(nodes, libpmix, true)
    }

    /// [`Cluster::start_serving`], with our library's trace on or off
    /// (off for benches: it writes a line for every call of an export,
    /// slurmstepd's PMIx_Value_load of each registered value among them).
    pub fn start_serving_traced(
        nodes: usize,
        libpmix: &Path,
        trace: bool,
    ) -> Result<Cluster, String> {
        for p in ["unshare", "mount"] {
            which(p).ok_or_else(|| format!("not installed: {p}"))?;
        }
        Cluster::start_with(nodes, Some((libpmix.to_path_buf(), trace)))
    }

    fn start_with(nodes: usize, libpmix: Option<(PathBuf, bool)>) -> Result<Cluster, String> {
        if nodes > MAX_NODES {
            return Err(format!(
                "{nodes} nodes asked for, at most {MAX_NODES} (slurm::MAX_NODES) on one machine"
            ));
        }
        let miss = missing();
        if !miss.is_empty() {
            return Err(format!("not installed: {}", miss.join(" ")));
        }
        // a port chosen free can be taken by another process before the
        // daemon binds it (a bench hit it on 2026-12-03): a daemon that
        // could not bind is started again, on fresh ports, twice at most
        let mut tries = 0;
        loop {
            let dir = scratch().map_err(|e| format!("scratch directory: {e}"))?;
            let mut c = Cluster {
                conf: dir.join("slurm.conf"),
                dir,
                nodes: (1..=nodes.max(1)).map(|i| format!("n{i}")).collect(),
                libpmix: libpmix.clone(),
                daemons: Vec::new(),
            };
            match c.boot() {
                Ok(()) => return Ok(c),
                Err(e) => {
                    let logs = c.logs();
                    tries += 1;
                    if tries < 3 && logs.contains("Address already in use") {
                        eprintln!("slurm: a port was taken before its daemon bound it; again");
                        continue; // `c` is dropped: its daemons stopped, its files gone
                    }
                    return Err(format!("{e}\n{logs}"));
                }
            }
        }
    }

    fn boot(&mut self) -> Result<(), String> {
        let d = self.dir.clone();
        for sub in ["state", "log"] {
            std::fs::create_dir_all(d.join(sub)).map_err(io(sub))?;
        }
        for n in &self.nodes {
            std::fs::create_dir_all(d.join("spool").join(n)).map_err(io("spool"))?;
            std::fs::create_dir_all(d.join("tmp").join(n)).map_err(io("tmp"))?;
        }
        // a fresh key, mode 0600, as munged requires
        {
            use std::os::unix::fs::OpenOptionsExt;
            let mut key = vec![0u8; 1024];
            std::fs::File::open("/dev/urandom")
                .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut key))
                .map_err(io("/dev/urandom"))?;
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(d.join("munge.key"))
                .and_then(|mut f| f.write_all(&key))
                .map_err(io("munge.key"))?;
        }
        let sock = d.join("munge.sock");
        self.spawn(
            "munged",
            Command::new(which("munged").unwrap_or_default())
                .arg("-F")
                .arg("-f")
                .arg(format!("--socket={}", sock.display()))
                .arg(format!("--key-file={}", d.join("munge.key").display()))
                .arg(format!("--pid-file={}", d.join("munged.pid").display()))
                .arg(format!("--log-file={}", d.join("log/munged.log").display()))
                .arg(format!("--seed-file={}", d.join("munged.seed").display())),
        )?;
        self.wait_for("munged", || {
            Command::new(which("munge").unwrap_or_default())
                .arg("-S")
                .arg(&sock)
                .arg("-n")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })?;
        let conf = self.config()?;
        std::fs::write(&self.conf, conf).map_err(io("slurm.conf"))?;
        let conf_path = self.conf.clone();
        self.spawn(
            "slurmctld",
            Command::new(which("slurmctld").unwrap_or_default())
                .args(["-D", "-i", "-f"])
                .arg(&conf_path),
        )?;
        let overlay = match self.libpmix.clone() {
            Some((lib, trace)) => Some((self.overlay(&lib)?, trace)),
            None => None,
        };
        for n in self.nodes.clone() {
            let slurmd = which("slurmd").unwrap_or_default();
            let mut cmd = match &overlay {
                None => Command::new(slurmd),
                Some(((dir, orig, ovl), trace)) => {
                    // the real directory stays reachable at `orig` (the
                    // overlay's links point there), then the overlay
                    // covers it: in this namespace only
                    let mut c = Command::new(which("unshare").unwrap_or_default());
                    c.args(["--mount", "--propagation", "private", "sh", "-c"])
                        .arg(r#"mount --bind "$1" "$2" && mount --bind "$3" "$1" && shift 3 && exec "$@""#)
                        .arg("sh")
                        .args([dir, orig, ovl])
                        .arg(slurmd);
                    if *trace {
                        c.env("PMIX_CAPI_TRACE", "1");
                    } else {
                        c.env_remove("PMIX_CAPI_TRACE");
                    }
                    c
                }
            };
            cmd.args(["-D", "-N", &n, "-f"]).arg(&conf_path);
            self.spawn(&format!("slurmd {n}"), &mut cmd)?;
        }
        let want = self.nodes.len();
        let sinfo = which("sinfo").unwrap_or_default();
        self.wait_for("idle nodes", || {
            Command::new(&sinfo)
                .env("SLURM_CONF", &conf_path)
                .args(["-h", "-N", "-o", "%N %t"])
                .output()
                .is_ok_and(|o| {
                    String::from_utf8_lossy(&o.stdout)
                        .lines()
                        .filter(|l| l.ends_with(" idle"))
                        .count()
                        == want
                })
        })
    }

    /// The plugin's libpmix directory, an empty mount point for it and
    /// the overlay: a link to each of its files, but `libpmix.so`, a copy
    /// of `lib`.
    fn overlay(&self, lib: &Path) -> Result<(PathBuf, PathBuf, PathBuf), String> {
        let dir = plugin_libpmix_dir()?;
        let (orig, ovl) = (
            self.dir.join("libpmix/orig"),
            self.dir.join("libpmix/overlay"),
        );
        for d in [&orig, &ovl] {
            std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
        }
        let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for e in entries.flatten() {
            let name = e.file_name();
            if name != "libpmix.so" {
                std::os::unix::fs::symlink(orig.join(&name), ovl.join(&name))
                    .map_err(|e| format!("overlay link: {e}"))?;
            }
        }
        std::fs::copy(lib, ovl.join("libpmix.so"))
            .map_err(|e| format!("{}: {e}", lib.display()))?;
        Ok((dir, orig, ovl))
    }

    fn config(&self) -> Result<String, String> {
        let d = self.dir.display();
        let host = pmix_wire::tool::hostname();
        let port = || free_port().map_err(|e| format!("no free port: {e}"));
        let (ctld, slurmd) = (port()?, port()?);
        let u = user();
        // a cluster's job ids are its own: each private cluster starting at
        // job 1 named every test's first job alike ("2.0", "pmixw-2.0"),
        // and MPICH names its shared memory after that, left behind when a
        // rank dies unfinalized (a later test's ranks found the old segment)
        let first = first_job_id();
        let mut s = format!(
            "ClusterName=pmixw
FirstJobId={first}
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld}
SlurmdPort={slurmd}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={d}/munge.sock
SlurmUser={u}
SlurmdUser={u}
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool/%n
TmpFS={d}/tmp/%n
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.%n.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd.%n.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
ReturnToService=2
MpiDefault=none
SlurmdParameters=config_overrides
JobAcctGatherType=jobacct_gather/none
SwitchType=switch/none
MailProg=/bin/true
KillWait=2
"
        );
        s.push_str(&format!("MaxTasksPerNode={TASKS_PER_NODE}\n"));
        for n in &self.nodes {
            let p = port()?;
            s.push_str(&format!(
                "NodeName={n} NodeHostname={host} NodeAddr=127.0.0.1 Port={p} CPUs={TASKS_PER_NODE} State=UNKNOWN\n"
            ));
        }
        s.push_str(&format!(
            "PartitionName=pmixw Nodes={} Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:256\n",
            self.nodes.join(",")
        ));
        Ok(s)
    }

    fn spawn(&mut self, what: &str, cmd: &mut Command) -> Result<(), String> {
        let out = std::fs::File::create(self.dir.join(format!("log/{what}.out")))
            .map_err(|e| format!("{what}: {e}"))?;
        let err = out.try_clone().map_err(|e| format!("{what}: {e}"))?;
        let child = cmd
            .env("SLURM_CONF", &self.conf)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("cannot start {what}: {e}"))?;
        self.daemons.push((what.to_string(), child));
        Ok(())
    }

    fn wait_for(&mut self, what: &str, mut ready: impl FnMut() -> bool) -> Result<(), String> {
        let start = Instant::now();
        loop {
            if ready() {
                return Ok(());
            }
            for (name, c) in &mut self.daemons {
                if let Ok(Some(st)) = c.try_wait() {
                    return Err(format!("{name} exited ({st}) waiting for {what}"));
                }
            }
            let limit = START_LIMIT + START_PER_NODE * self.nodes.len().saturating_sub(2) as u32;
            if start.elapsed() > limit {
                return Err(format!("no {what} after {limit:?}"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The node names (n1, n2, …).
    pub fn nodes(&self) -> &[String] {
        &self.nodes
    }

    /// The scratch directory holding the configuration, state and logs.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The slurm.conf every command must be given (`SLURM_CONF`).
    pub fn conf(&self) -> &Path {
        &self.conf
    }

    /// The environment a Slurm command of this cluster needs.
    pub fn env(&self) -> Vec<(String, String)> {
        vec![("SLURM_CONF".into(), self.conf.display().to_string())]
    }

    /// `srun` aimed at this cluster (stdin closed).
    pub fn srun(&self) -> Command {
        let mut c = Command::new(which("srun").unwrap_or_else(|| "srun".into()));
        c.env("SLURM_CONF", &self.conf).stdin(Stdio::null());
        c
    }

    /// The slurmstepd processes of this cluster still running (a step's
    /// daemon, forked by slurmd, is no child of ours).
    pub fn stepds(&self) -> Vec<u32> {
        stepds_of(&self.conf)
    }

    /// The daemons' log files, concatenated (for failure messages).
    pub fn logs(&self) -> String {
        let mut out = String::new();
        if let Ok(rd) = std::fs::read_dir(self.dir.join("log")) {
            let mut paths: Vec<_> = rd.flatten().map(|e| e.path()).collect();
            paths.sort();
            for p in paths {
                let text = std::fs::read_to_string(&p).unwrap_or_default();
                let tail: Vec<&str> = text.lines().rev().take(30).collect();
                out.push_str(&format!("--- {}\n", p.display()));
                for l in tail.into_iter().rev() {
                    out.push_str(l);
                    out.push('\n');
                }
            }
        }
        out
    }

    /// Stop the daemons (SIGTERM, then SIGKILL after a deadline) in
    /// reverse start order and remove the scratch directory.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        while let Some((_, mut c)) = self.daemons.pop() {
            let _ = Command::new("kill")
                .args(["-TERM", &c.id().to_string()])
                .stderr(Stdio::null())
                .status();
            let start = Instant::now();
            while matches!(c.try_wait(), Ok(None)) && start.elapsed() < STOP_LIMIT {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
        // a job step's slurmstepd is no child of ours (slurmd daemonizes
        // it) and can outlive its slurmd: end those of this cluster, known
        // by the SLURM_CONF they inherited from our slurmd
        for pid in stepds_of(&self.conf) {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .stderr(Stdio::null())
                .status();
        }
        if std::env::var_os("PMIXW_KEEP_SLURM").is_none() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// The slurmstepd processes whose environment names `conf` as SLURM_CONF.
fn stepds_of(conf: &Path) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| is_stepd_of(pid, conf))
        .collect()
}

/// Whether process `pid` is a slurmstepd of the cluster whose slurm.conf
/// is `conf` (it inherited `SLURM_CONF=conf` from that cluster's slurmd).
pub fn is_stepd_of(pid: u32, conf: &Path) -> bool {
    let want = format!("SLURM_CONF={}", conf.display());
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    comm.trim() == "slurmstepd"
        && std::fs::read(format!("/proc/{pid}/environ"))
            .map(|env| env.split(|&b| b == 0).any(|v| v == want.as_bytes()))
            .unwrap_or(false)
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.shutdown();
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn more_nodes_than_the_bound_are_refused_before_anything_starts() {
        let e = super::Cluster::start(super::MAX_NODES + 1)
            .err()
            .expect("17 nodes refused");
        assert!(e.contains("at most 16"), "{e}");
    }
}
