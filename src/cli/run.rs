//! `pmixw run -n N [--dialect D] [--timeout S] PROG [ARGS]`: a single-node
//! launcher hosting our server (issue #5 item 6). It registers one
//! namespace, starts N ranks with the environment a PMIx client needs,
//! lets them inherit stdout/stderr, and returns the job's status: the abort
//! status if a rank aborted, else the first failing rank's status, else 0.
//! On abort or timeout every rank is killed; nothing is left behind.

use pmix_wire::server::{net, HostEvent, JobSpec};
use std::process::{Child, Command, ExitCode};
use std::time::{Duration, Instant};

const USAGE: &str =
    "usage: pmixw run -n N [--dialect v41|v4|v3|v21|v20] [--timeout SECONDS] [-v] PROG [ARGS...]";

struct Job(Vec<Child>);
impl Drop for Job {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

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

pub fn run(args: &[String]) -> Result<ExitCode, String> {
    let mut n: Option<u32> = None;
    let mut dialect: Option<&'static str> = None;
    let mut timeout: Option<Duration> = None;
    let mut stats = false;
    let mut it = args.iter();
    let mut prog = Vec::new();
    while let Some(a) = it.next() {
        let mut val = |name: &str| {
            it.next()
                .cloned()
                .ok_or(format!("{name} needs a value\n{USAGE}"))
        };
        match a.as_str() {
            "-n" | "--np" => {
                n = Some(
                    val("-n")?
                        .parse()
                        .map_err(|_| format!("-n: a count\n{USAGE}"))?,
                )
            }
            "--stats" => stats = true,
            "--dialect" => dialect = Some(uri_var(&val("--dialect")?)?),
            "--timeout" => {
                let s: f64 = val("--timeout")?
                    .parse()
                    .map_err(|_| format!("--timeout: seconds\n{USAGE}"))?;
                timeout = Some(Duration::from_secs_f64(s.max(0.0)));
            }
            // refused and dropped peers, with their reasons (RUST_LOG also works)
            "-v" | "--verbose" => crate::cli::log_to_stderr("pmix_wire=debug"),
            s if s.starts_with('-') && prog.is_empty() => {
                return Err(format!("unknown option {s}\n{USAGE}"))
            }
            _ => {
                prog.push(a.clone());
                prog.extend(it.by_ref().cloned());
            }
        }
    }
    let n = n.filter(|n| *n > 0).ok_or(USAGE)?;
    let (exe, argv) = prog.split_first().ok_or(USAGE)?;
    let hostname = net::hostname();
    let nspace = format!("pmixw-{}", std::process::id());
    // tools (pquery, pps) find the server through files in the tmpdir
    let server = net::start_with(
        vec![JobSpec {
            nspace: nspace.clone(),
            nprocs: n,
            hostname,
            info: Vec::new(),
        }],
        Some(std::env::temp_dir()),
    )
    .map_err(|e| format!("cannot start the server: {e}"))?;

    let launch = |exe: &str, argv: &[String], env: Vec<(String, String)>, ns: &str| {
        let mut c = Command::new(exe);
        c.args(argv);
        for (k, v) in env {
            let skip = k.starts_with("PMIX_SERVER_URI") && dialect.is_some_and(|d| d != k);
            if !skip {
                c.env(k, v);
            }
        }
        // Open MPI 4.1 takes the direct-launch path (ess pmi) only under a
        // launcher its schizo framework recognises; Flux is recognised by
        // FLUX_JOB_ID alone (spec-notes/server.md)
        if std::env::var_os("FLUX_JOB_ID").is_none() {
            c.env("FLUX_JOB_ID", ns);
        }
        c
    };
    let mut job = Job(Vec::new());
    // (namespace, rank) of each child, for job control
    let mut names: Vec<(String, u32)> = Vec::new();
    for r in 0..n {
        let mut c = launch(exe, argv, server.client_env(&nspace, r), &nspace);
        let child = c.spawn().map_err(|e| format!("cannot start {exe}: {e}"))?;
        // only this process or its descendants may connect as this rank
        let (ns, pid) = (nspace.clone(), child.id());
        server.call(move |s| s.set_rank_pid(&ns, r, pid));
        job.0.push(child);
        names.push((nspace.clone(), r));
    }

    let start = Instant::now();
    let mut status: Vec<Option<i32>> = vec![None; n as usize];
    let mut spawned_jobs = 0;
    let mut aborted: Option<i32> = None;
    loop {
        while let Ok(e) = server.events.try_recv() {
            match e {
                HostEvent::Aborted {
                    proc,
                    status: st,
                    message,
                } => {
                    eprintln!(
                        "pmixw run: rank {} aborted with status {st}: {}",
                        proc.rank,
                        message.unwrap_or_default()
                    );
                    aborted = Some(if st == 0 { 1 } else { st });
                }
                HostEvent::Log { data, .. } => {
                    for i in data {
                        if let pmix_types::Value::String(Some(s)) = &i.value {
                            match i.key.to_string().as_str() {
                                "pmix.log.stdout" => print!("{s}"),
                                _ => eprint!("{s}"),
                            }
                        }
                    }
                }
                HostEvent::Spawn { request, apps, .. } => {
                    // a new job of every app's ranks, in a namespace of its own
                    spawned_jobs += 1;
                    let ns = format!("{nspace}-spawn-{spawned_jobs}");
                    let total: u32 = apps.iter().map(|a| a.maxprocs.max(1) as u32).sum();
                    let spec = JobSpec {
                        nspace: ns.clone(),
                        nprocs: total,
                        hostname: net::hostname(),
                        info: Vec::new(),
                    };
                    let uri = server.uri().to_string();
                    let envs = server
                        .call({
                            let ns = ns.clone();
                            move |s| {
                                s.register_nspace(spec);
                                (0..total)
                                    .map(|r| s.client_env(&ns, r, &uri))
                                    .collect::<Vec<_>>()
                            }
                        })
                        .unwrap_or_default();
                    let mut rank = 0usize;
                    let mut result = Ok(ns.clone());
                    for app in &apps {
                        let cmd = app.cmd.as_ref().map(|c| c.to_string()).unwrap_or_default();
                        // argv[0] is the command itself
                        let args: Vec<String> =
                            app.argv.iter().skip(1).map(|a| a.to_string()).collect();
                        for _ in 0..app.maxprocs.max(1) {
                            let mut c = launch(
                                &cmd,
                                &args,
                                envs.get(rank).cloned().unwrap_or_default(),
                                &ns,
                            );
                            for kv in &app.env {
                                if let Some((k, v)) = kv.to_string().split_once('=') {
                                    c.env(k, v);
                                }
                            }
                            if let Some(d) = &app.cwd {
                                c.current_dir(d.to_string());
                            }
                            match c.spawn() {
                                Ok(child) => {
                                    job.0.push(child);
                                    status.push(None);
                                    names.push((ns.clone(), rank as u32));
                                }
                                Err(e) => {
                                    eprintln!("pmixw run: cannot start {cmd}: {e}");
                                    result = Err(pmix_types::status::codes::PMIX_ERR_NOT_FOUND);
                                }
                            }
                            rank += 1;
                        }
                    }
                    server.call(move |s| s.spawned(request, result));
                }
                HostEvent::Kill { targets, .. } => {
                    for (i, (ns, r)) in names.iter().enumerate() {
                        let hit = targets.iter().any(|p| {
                            p.nspace.to_string() == *ns
                                && (p.rank == *r || p.rank == pmix_wire::server::RANK_WILDCARD)
                        });
                        if hit {
                            let _ = job.0[i].kill();
                        }
                    }
                }
                _ => {}
            }
        }
        if aborted.is_some() {
            break;
        }
        for (i, c) in job.0.iter_mut().enumerate() {
            if status[i].is_none() {
                if let Ok(Some(st)) = c.try_wait() {
                    status[i] = Some(st.code().unwrap_or(128 + 9));
                }
            }
        }
        if status.iter().all(Option::is_some) {
            break;
        }
        if timeout.is_some_and(|t| start.elapsed() >= t) {
            eprintln!(
                "pmixw run: timeout after {:?}; killing the job",
                timeout.unwrap_or_default()
            );
            drop(job);
            server.stop();
            return Ok(ExitCode::from(124));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    drop(job);
    server.stop();
    if stats {
        // the launcher and server are one process: its peak RSS
        let hwm = std::fs::read_to_string("/proc/self/status")
            .unwrap_or_default()
            .lines()
            .find(|l| l.starts_with("VmHWM:"))
            .and_then(|l| l.split_whitespace().nth(1).map(str::to_string))
            .unwrap_or_default();
        eprintln!("server_rss {hwm}");
    }
    let code = aborted.unwrap_or_else(|| {
        status
            .iter()
            .flatten()
            .copied()
            .find(|s| *s != 0)
            .unwrap_or(0)
    });
    Ok(ExitCode::from(code.clamp(0, 255) as u8))
}
