//! Server load benchmark (issue #11): one process simulates N PMIx
//! clients on our client core (`pmix_wire::client::core`, sans-IO, driven
//! here by tokio): connect, PMIx_Init (handshake and job info), put 4
//! keys, commit, fence collecting data, get a neighbour's key, finalize.
//! The same clients run against our server (this binary re-run as
//! `server_load serve N`: `net::start`) and against libpmix 4.2.2's server
//! (tests/interop/bench_server.c `N -`, which registers N ranks and starts
//! none), each in a process of its own, so that its peak RSS and CPU time
//! are its alone. Prints one line per N:
//!
//!     N=<n> throughput ours/C=<r>x rss C/ours=<r>x server-cpu C/ours=<r>x
//!
//! and the fence latency (median and worst) on each. Not a test: nothing
//! asserts a figure; it fails only if a client fails.
//!
//!     nice -n 19 cargo bench --bench server_load          # N = 1000
//!     BENCH_N=1000,10000 nice -n 19 cargo bench --bench server_load

mod common;

use common::status_kib;
use pmix_codec::command::{Reply, Request};
use pmix_codec::Format;
use pmix_types::enums::Scope;
use pmix_types::{Info, Proc, Value, RANK_WILDCARD};
use pmix_wire::client::core::{ClientEnv, Core, Event};
use pmix_wire::interop::build_c;
use pmix_wire::server::{net, HostEvent, JobSpec};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{exit, Command, Stdio};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn raise_nofile() {
    // SAFETY: getrlimit/setrlimit on a local struct
    unsafe {
        let mut r = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) == 0 {
            r.rlim_cur = r.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &r);
        }
    }
}

fn cpu_ms() -> u64 {
    // SAFETY: getrusage on a zeroed local struct
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        let ms = |t: libc::timeval| t.tv_sec as u64 * 1000 + t.tv_usec as u64 / 1000;
        ms(ru.ru_utime) + ms(ru.ru_stime)
    }
}

/// Our server, alone in this process: the same protocol as the C harness.
fn serve(n: u32) {
    let server = net::start(vec![JobSpec {
        nspace: "benchns".into(),
        nprocs: n,
        hostname: net::hostname(),
        info: vec![],
    }])
    .expect("server");
    println!("uri {}\nnspace benchns", server.uri());
    std::io::stdout().flush().unwrap();
    let mut done = 0;
    while done < n {
        match server.events.recv() {
            Ok(HostEvent::Finalized(_)) => done += 1,
            Ok(_) => {}
            Err(_) => break,
        }
    }
    println!(
        "server_rss {}\nserver_cpu_ms {}",
        status_kib("VmHWM:"),
        cpu_ms()
    );
    std::io::stdout().flush().unwrap();
    // the last replies may still be on their way: stop when told
    let mut rest = String::new();
    let _ = std::io::Read::read_to_string(&mut std::io::stdin(), &mut rest);
    server.stop();
}

async fn until(
    core: &mut Core,
    s: &mut TcpStream,
    buf: &mut [u8],
    mut want: impl FnMut(&Event) -> bool,
) -> Result<Event, String> {
    loop {
        while let Some(e) = core.poll_event() {
            if want(&e) {
                return Ok(e);
            }
        }
        let n = s.read(buf).await.map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("server closed".into());
        }
        core.handle_input(&buf[..n]).map_err(|e| e.to_string())?;
    }
}

async fn request(
    core: &mut Core,
    s: &mut TcpStream,
    buf: &mut [u8],
    req: &Request,
) -> Result<Reply, String> {
    let tag = core.send(req).map_err(|e| e.to_string())?.unwrap_or(0);
    s.write_all(&core.poll_transmit().unwrap_or_default())
        .await
        .map_err(|e| e.to_string())?;
    match until(
        core,
        s,
        buf,
        |e| matches!(e, Event::Reply { tag: t, .. } if *t == tag),
    )
    .await?
    {
        Event::Reply { reply, .. } => Ok(reply),
        _ => unreachable!(),
    }
}

/// One simulated client; its fence latency.
async fn client(
    addr: String,
    uri: String,
    ns: String,
    rank: u32,
    n: u32,
) -> Result<Duration, String> {
    let env = ClientEnv {
        proc: Proc::new(&ns, rank),
        uri,
        format: Format::V41,
        security: "native".into(),
        gds: "hash".into(),
        server_version: None,
    };
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let mut core = Core::new(env, uid, gid).map_err(|e| e.to_string())?;
    let mut s = TcpStream::connect(&addr).await.map_err(|e| e.to_string())?;
    s.set_nodelay(true).ok();
    let mut buf = vec![0u8; 64 << 10];
    s.write_all(&core.poll_transmit().unwrap_or_default())
        .await
        .map_err(|e| e.to_string())?;
    until(&mut core, &mut s, &mut buf, |e| {
        matches!(e, Event::Connected { .. })
    })
    .await?;
    request(&mut core, &mut s, &mut buf, &Request::Req).await?;
    for k in 0..4 {
        core.put(
            Scope::GLOBAL,
            &format!("bench.{k}.{rank}"),
            Value::String(Some(
                format!("value-{k}-of-rank-{rank}-padded").as_str().into(),
            )),
        );
    }
    let commit = core.commit_request().map_err(|e| e.to_string())?;
    request(&mut core, &mut s, &mut buf, &commit).await?;
    let fence = Request::Fence {
        procs: vec![Proc::new(&ns, RANK_WILDCARD)],
        info: vec![Info::new("pmix.collect", Value::Bool(true))],
    };
    let t0 = Instant::now();
    request(&mut core, &mut s, &mut buf, &fence).await?;
    let latency = t0.elapsed();
    let peer = (rank + 1) % n;
    let key = format!("bench.0.{peer}");
    let get = Request::Get {
        nspace: Some(ns.as_str().into()),
        rank: peer,
        info: vec![],
        key: Some(Some(key.as_str().into())),
    };
    let r = request(&mut core, &mut s, &mut buf, &get).await?;
    core.absorb_get(&Proc::new(&ns, peer), &key, r)
        .map_err(|e| format!("get: {e}"))?;
    match request(&mut core, &mut s, &mut buf, &Request::Finalize).await? {
        Reply::Status(0) => Ok(latency),
        r => Err(format!("finalize: {r:?}")),
    }
}

struct Run {
    wall: Duration,
    rss_kib: u64,
    cpu_ms: u64,
    fence_med: Duration,
    fence_max: Duration,
}

fn run(mut cmd: Command, n: u32) -> Run {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("server process");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut field = |name: &str| -> String {
        for l in lines.by_ref() {
            let l = l.expect("server output");
            if let Some(v) = l.strip_prefix(name) {
                return v.trim().to_string();
            }
        }
        eprintln!("!! the server ended before printing {name}");
        exit(1);
    };
    let uri = field("uri ");
    let ns = field("nspace ");
    let addr = uri.rsplit_once("//").expect("tcp uri").1.to_string();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let start = Instant::now();
    let mut lat = rt.block_on(async {
        let mut tasks = tokio::task::JoinSet::new();
        for r in 0..n {
            tasks.spawn(client(addr.clone(), uri.clone(), ns.clone(), r, n));
        }
        let mut lat = Vec::new();
        // in completion order: a failure is reported at once
        while let Some(t) = tasks.join_next().await {
            match t.expect("client task") {
                Ok(l) => lat.push(l),
                Err(e) => {
                    eprintln!("!! a simulated client failed: {e}");
                    exit(1);
                }
            }
        }
        lat
    });
    let wall = start.elapsed();
    let rss_kib = field("server_rss ").parse().unwrap_or(0);
    let cpu_ms = field("server_cpu_ms ").parse().unwrap_or(0);
    drop(child.stdin.take());
    let _ = child.wait();
    lat.sort();
    Run {
        wall,
        rss_kib,
        cpu_ms,
        fence_med: lat[lat.len() / 2],
        fence_max: lat[lat.len() - 1],
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    raise_nofile();
    if args.get(1).map(String::as_str) == Some("serve") {
        serve(args[2].parse().expect("N"));
        return;
    }
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let cserver = build_c("bench_server", &out).unwrap_or_else(|e| panic!("{e}"));
    let me = std::env::current_exe().unwrap();
    let sizes: Vec<u32> = std::env::var("BENCH_N")
        .unwrap_or_else(|_| "1000".into())
        .split(',')
        .filter_map(|v| v.trim().parse().ok())
        .collect();
    for n in sizes {
        let ns = n.to_string();
        let mut o = Command::new(&me);
        o.args(["serve", ns.as_str()]);
        let ours = run(o, n);
        eprintln!("N={n}: ours done, now libpmix's server");
        let mut c = Command::new(&cserver);
        c.args([ns.as_str(), "-"]);
        let c = run(c, n);
        println!(
            "N={n} throughput ours/C={:.2}x rss C/ours={:.2}x server-cpu C/ours={:.2}x",
            c.wall.as_secs_f64() / ours.wall.as_secs_f64(),
            c.rss_kib as f64 / ours.rss_kib.max(1) as f64,
            c.cpu_ms as f64 / ours.cpu_ms.max(1) as f64,
        );
        for (who, r) in [("C   ", &c), ("ours", &ours)] {
            println!(
                "  {who}: wall {:.0} ms ({:.0} clients/s), server RSS {} KiB, server CPU {} ms, \
                 fence latency median {:.1} ms, worst {:.1} ms",
                r.wall.as_secs_f64() * 1e3,
                n as f64 / r.wall.as_secs_f64(),
                r.rss_kib,
                r.cpu_ms,
                r.fence_med.as_secs_f64() * 1e3,
                r.fence_max.as_secs_f64() * 1e3
            );
        }
    }
}
