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
//! and, for each server, its wall time, peak RSS, CPU time, fence latency
//! (median and worst), when the last client finished each phase, and the
//! size of the job-info and fence replies. The job-info reply (and
//! libpmix's fence reply, which carries every rank's data) is read as a
//! stream and only its first item checked ([`request_head`]). Raises its
//! RLIMIT_NOFILE to the hard limit (N = 10 000 needs 10 000 descriptors in
//! each process). Not a test: nothing asserts a figure; it fails only if
//! a client fails.
//!
//!     nice -n 19 cargo bench --bench server_load          # N = 1000
//!     BENCH_N=1000,10000 nice -n 19 cargo bench --bench server_load
//!     BENCH_OURS_ONLY=1 ...        # our server only (to profile it)

mod common;

use bytes::Bytes;
use common::status_kib;
use pmix_codec::command::{Reply, Request};
use pmix_codec::frame::{Header, HeaderOrder, HEADER_LEN};
use pmix_codec::{DataBuffer, Format};
use pmix_types::enums::Scope;
use pmix_types::{DataType, Info, Proc, Value, RANK_WILDCARD};
use pmix_wire::client::core::{ClientEnv, Core, Event};
use pmix_wire::interop::build_c;
use pmix_wire::server::{net, HostEvent, JobSpec, Limits};
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
    // the default 10 s handshake deadline counts from the accept; 10 000
    // connections arriving at once on 2 shared cores were not all through
    // their handshake within it (one run: "server closed"). The bench
    // measures load, not slowloris defence: a deadline of 120 s.
    let opts = net::Options {
        limits: Limits {
            handshake_timeout: Duration::from_secs(120),
            ..Limits::default()
        },
        ..net::Options::default()
    };
    let server = net::start_opts(
        vec![JobSpec {
            nspace: "benchns".into(),
            nprocs: n,
            hostname: net::hostname(),
            info: vec![],
        }],
        opts,
    )
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

/// How much of a streamed reply is kept: enough for its first item.
const HEAD: usize = 64;

/// Send `req` through the core and read its reply here, keeping only its
/// first [`HEAD`] bytes: the job-info reply (every server) and libpmix's
/// fence reply carry data of every rank, O(N) bytes per client; kept and
/// decoded by all N clients of this process they made the load generator,
/// not the server, the bottleneck (O(N²) memory and CPU here), so every
/// simulated client reads them as a stream and checks their first item.
/// Exactly the reply's bytes are read; the core's tag stays pending.
async fn request_head(
    core: &mut Core,
    s: &mut TcpStream,
    buf: &mut [u8],
    req: &Request,
) -> Result<(Vec<u8>, usize), String> {
    let tag = core.send(req).map_err(|e| e.to_string())?.unwrap_or(0);
    s.write_all(&core.poll_transmit().unwrap_or_default())
        .await
        .map_err(|e| e.to_string())?;
    let mut header = [0u8; HEADER_LEN];
    s.read_exact(&mut header).await.map_err(|e| e.to_string())?;
    let h = Header::decode(&header, HeaderOrder::Network);
    if h.tag != tag {
        return Err(format!("reply tag {} for request tag {tag}", h.tag));
    }
    let mut head = Vec::with_capacity(HEAD);
    let mut left = h.nbytes as usize;
    while left > 0 {
        let want = left.min(buf.len());
        let n = s.read(&mut buf[..want]).await.map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("server closed".into());
        }
        let k = n.min(HEAD - head.len());
        head.extend_from_slice(&buf[..k]);
        left -= n;
    }
    Ok((head, h.nbytes as usize))
}

/// The first item of a reply's head.
fn first(head: &[u8], t: DataType) -> Result<Value, String> {
    DataBuffer::from_bytes(Format::V41, Bytes::copy_from_slice(head))
        .unpack_one(t)
        .map_err(|e| format!("reply: {e}"))
}

/// The phases of a simulated client, in order.
const PHASES: [&str; 6] = ["connect", "init", "commit", "fence", "get", "finalize"];

/// What one simulated client measured: its fence latency, and when (since
/// the run's start) it finished each of [`PHASES`].
struct Measured {
    fence: Duration,
    done: [Duration; 6],
    /// The sizes of its job-info and fence replies.
    bytes: [usize; 2],
}

/// One simulated client.
async fn client(
    addr: String,
    uri: String,
    ns: String,
    rank: u32,
    n: u32,
    start: Instant,
) -> Result<Measured, String> {
    let mut done = [Duration::ZERO; 6];
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
    let mut buf = vec![0u8; 32 << 10];
    s.write_all(&core.poll_transmit().unwrap_or_default())
        .await
        .map_err(|e| e.to_string())?;
    until(&mut core, &mut s, &mut buf, |e| {
        matches!(e, Event::Connected { .. })
    })
    .await?;
    done[0] = start.elapsed();
    let (head, info_bytes) = request_head(&mut core, &mut s, &mut buf, &Request::Req).await?;
    match first(&head, DataType::String)? {
        Value::String(Some(n)) if n.to_string() == ns => {}
        v => return Err(format!("job info for {v:?}")),
    }
    done[1] = start.elapsed();
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
    done[2] = start.elapsed();
    let fence = Request::Fence {
        procs: vec![Proc::new(&ns, RANK_WILDCARD)],
        info: vec![Info::new("pmix.collect", Value::Bool(true))],
    };
    let t0 = Instant::now();
    let (head, fence_bytes) = request_head(&mut core, &mut s, &mut buf, &fence).await?;
    let fence = t0.elapsed();
    if first(&head, DataType::Status)? != Value::Status(0) {
        return Err("fence failed".into());
    }
    done[3] = start.elapsed();
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
    done[4] = start.elapsed();
    match request(&mut core, &mut s, &mut buf, &Request::Finalize).await? {
        Reply::Status(0) => {
            done[5] = start.elapsed();
            Ok(Measured {
                fence,
                done,
                bytes: [info_bytes, fence_bytes],
            })
        }
        r => Err(format!("finalize: {r:?}")),
    }
}

struct Run {
    wall: Duration,
    rss_kib: u64,
    cpu_ms: u64,
    fence_med: Duration,
    fence_max: Duration,
    /// When the last client finished each phase.
    last: [Duration; 6],
    /// The largest job-info and fence replies.
    bytes: [usize; 2],
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
    let (mut lat, last, bytes) = rt.block_on(async {
        let mut tasks = tokio::task::JoinSet::new();
        for r in 0..n {
            tasks.spawn(client(addr.clone(), uri.clone(), ns.clone(), r, n, start));
        }
        let mut lat = Vec::new();
        let mut last = [Duration::ZERO; 6];
        let mut bytes = [0usize; 2];
        // in completion order: a failure is reported at once
        while let Some(t) = tasks.join_next().await {
            match t.expect("client task") {
                Ok(m) => {
                    lat.push(m.fence);
                    for (l, d) in last.iter_mut().zip(m.done) {
                        *l = (*l).max(d);
                    }
                    for (b, x) in bytes.iter_mut().zip(m.bytes) {
                        *b = (*b).max(x);
                    }
                }
                Err(e) => {
                    eprintln!("!! a simulated client failed: {e}");
                    exit(1);
                }
            }
        }
        (lat, last, bytes)
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
        last,
        bytes,
    }
}

fn show(who: &str, n: u32, r: &Run) {
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
    let phases: Vec<String> = PHASES
        .iter()
        .zip(r.last)
        .map(|(p, d)| format!("{p} {:.0}", d.as_secs_f64() * 1e3))
        .collect();
    println!("        last client done (ms): {}", phases.join(", "));
    println!(
        "        replies per client: job info {} B, fence {} B",
        r.bytes[0], r.bytes[1]
    );
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
        show("ours", n, &ours);
        if std::env::var("BENCH_OURS_ONLY").is_ok_and(|v| v == "1") {
            // profiling our server alone
            continue;
        }
        let mut c = Command::new(&cserver);
        c.args([ns.as_str(), "-"]);
        let c = run(c, n);
        println!(
            "N={n} throughput ours/C={:.2}x rss C/ours={:.2}x server-cpu C/ours={:.2}x",
            c.wall.as_secs_f64() / ours.wall.as_secs_f64(),
            c.rss_kib as f64 / ours.rss_kib.max(1) as f64,
            c.cpu_ms as f64 / ours.cpu_ms.max(1) as f64,
        );
        show("C   ", n, &c);
        show("ours", n, &ours);
    }
}
