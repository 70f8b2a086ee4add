//! Server load benchmark (issue #11): N simulated PMIx clients on our
//! client core (`pmix_wire::client::core`, sans-IO, driven here by tokio
//! on one thread per generator process): connect, PMIx_Init (handshake and
//! job info), put 4 keys, commit, fence collecting data, get a neighbour's
//! key, finalize. The same clients run against our server (this binary
//! re-run as `server_load serve N`: `net::start`) and against libpmix
//! 4.2.2's server (tests/interop/bench_server.c `N -`, which registers N
//! ranks and starts none), each in a process of its own, so that its peak
//! RSS and CPU time are its alone. The clients run in `BENCH_GEN` generator
//! processes (default 1; this binary re-run as `server_load gen ...`, each
//! a share of the ranks, started together once all are ready), fresh for
//! every run, so that neither server meets a generator warmed by the other.
//! Prints one line per N:
//!
//!     N=<n> throughput ours/C=<r>x rss C/ours=<r>x server-cpu C/ours=<r>x
//!
//! and, for each server, its wall time, peak RSS, CPU time, the generators'
//! CPU time (who set the pace: the generators or the server), fence
//! latency (median and worst), when the last client finished each phase,
//! the size of the job-info and fence replies, and the load average. The
//! job-info reply (and libpmix's fence reply, which can carry every rank's
//! data) is read as a stream: its first item checked, the rest dropped
//! unread by the kernel ([`request_head`]). Raises its RLIMIT_NOFILE to the
//! hard limit (N = 10 000 needs 10 000 descriptors in each process). Not a
//! test: nothing asserts a figure; it fails only if a client fails.
//!
//!     nice -n 19 cargo bench --bench server_load          # N = 1000
//!     BENCH_N=1000,10000 nice -n 19 cargo bench --bench server_load
//!     BENCH_GEN=2 ...              # two generator processes
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
use std::cell::RefCell;
use std::io::{BufRead, BufReader, ErrorKind, Write};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::pin::Pin;
use std::process::{exit, Command, Stdio};
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt, Interest, ReadBuf};
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
    println!(
        "uri {}\nnspace benchns\nserver_cpu_ready_ms {}",
        server.uri(),
        cpu_ms()
    );
    std::io::stdout().flush().unwrap();
    // the host looks every millisecond, as the C harness's main thread
    // does (usleep(1000) on its counter): blocked in recv(), it was woken
    // (a futex call on each side) for each of the 2 N upcalls
    let mut done = 0;
    'host: while done < n {
        std::thread::sleep(Duration::from_millis(1));
        loop {
            match server.events.try_recv() {
                Ok(HostEvent::Finalized(_)) => done += 1,
                Ok(_) => {}
                Err(std::sync::mpsc::TryRecvError::Empty) => break,
                Err(std::sync::mpsc::TryRecvError::Disconnected) => break 'host,
            }
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

thread_local! {
    /// The read buffer every simulated client of a generator process
    /// shares: a client fills it and hands it to its core within one poll
    /// (no await in between), so one buffer serves them all (a buffer per
    /// client was 32 KiB × N of page faults).
    static BUF: RefCell<Vec<u8>> = RefCell::new(vec![0u8; 64 << 10]);
}

/// Wait until the socket has bytes, then hand them to the core. Through
/// poll_read, not readable() + try_read: a short read clears tokio's
/// readiness, so the next read waits for epoll instead of trying the socket
/// once more for EAGAIN.
async fn feed(core: &mut Core, s: &mut TcpStream) -> Result<(), String> {
    let n = std::future::poll_fn(|cx| {
        BUF.with(|b| {
            let mut b = b.borrow_mut();
            let mut rb = ReadBuf::new(&mut b);
            match Pin::new(&mut *s).poll_read(cx, &mut rb) {
                Poll::Ready(Ok(())) => {
                    let n = rb.filled().len();
                    if n == 0 {
                        return Poll::Ready(Err("server closed".to_string()));
                    }
                    Poll::Ready(
                        core.handle_input(rb.filled())
                            .map(|_| n)
                            .map_err(|e| e.to_string()),
                    )
                }
                Poll::Ready(Err(e)) => Poll::Ready(Err(e.to_string())),
                Poll::Pending => Poll::Pending,
            }
        })
    })
    .await?;
    debug_assert!(n > 0);
    Ok(())
}

async fn until(
    core: &mut Core,
    s: &mut TcpStream,
    mut want: impl FnMut(&Event) -> bool,
) -> Result<Event, String> {
    loop {
        while let Some(e) = core.poll_event() {
            if want(&e) {
                return Ok(e);
            }
        }
        feed(core, s).await?;
    }
}

/// Write what the core queued.
async fn transmit(core: &mut Core, s: &mut TcpStream) -> Result<(), String> {
    match core.poll_transmit() {
        Some(b) => s.write_all(&b).await.map_err(|e| e.to_string()),
        None => Ok(()),
    }
}

async fn request(core: &mut Core, s: &mut TcpStream, req: &Request) -> Result<Reply, String> {
    let tag = core.send(req).map_err(|e| e.to_string())?.unwrap_or(0);
    transmit(core, s).await?;
    match until(
        core,
        s,
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

/// Drop the next `left` bytes of the stream in the kernel: recv with
/// MSG_TRUNC, which on a TCP socket discards what it would have copied.
async fn discard(s: &TcpStream, mut left: usize) -> Result<(), String> {
    while left > 0 {
        s.readable().await.map_err(|e| e.to_string())?;
        let fd = s.as_raw_fd();
        let r = s.try_io(Interest::READABLE, || {
            // SAFETY: MSG_TRUNC on a TCP socket copies nothing to the
            // (null) buffer; the kernel only drops `left` bytes at most
            let n = unsafe { libc::recv(fd, std::ptr::null_mut(), left, libc::MSG_TRUNC) };
            if n < 0 {
                Err(std::io::Error::last_os_error())
            } else {
                Ok(n as usize)
            }
        });
        match r {
            Ok(0) => return Err("server closed".into()),
            Ok(n) => left -= n.min(left),
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(())
}

/// Send `req` through the core and read its reply here, keeping only its
/// first [`HEAD`] bytes: the job-info reply (every server) and libpmix's
/// fence reply carry data of every rank, O(N) bytes per client; kept and
/// decoded by all N clients of this process they made the load generator,
/// not the server, the bottleneck (O(N²) memory and CPU here), so every
/// simulated client reads them as a stream, checks their first item and
/// lets the kernel drop the rest unread ([`discard`]). Exactly the reply's
/// bytes are consumed; the core's tag stays pending.
async fn request_head(
    core: &mut Core,
    s: &mut TcpStream,
    req: &Request,
) -> Result<(Vec<u8>, usize), String> {
    let tag = core.send(req).map_err(|e| e.to_string())?.unwrap_or(0);
    transmit(core, s).await?;
    let mut header = [0u8; HEADER_LEN];
    s.read_exact(&mut header).await.map_err(|e| e.to_string())?;
    let h = Header::decode(&header, HeaderOrder::Network);
    if h.tag != tag {
        return Err(format!("reply tag {} for request tag {tag}", h.tag));
    }
    let total = h.nbytes as usize;
    let mut head = vec![0u8; total.min(HEAD)];
    s.read_exact(&mut head).await.map_err(|e| e.to_string())?;
    discard(s, total - head.len()).await?;
    Ok((head, total))
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
    addr: Arc<str>,
    env: ClientEnv,
    (uid, gid): (u32, u32),
    n: u32,
    start: Instant,
) -> Result<Measured, String> {
    let mut done = [Duration::ZERO; 6];
    let ns = env.proc.nspace.to_string();
    let rank = env.proc.rank;
    let mut core = Core::new(env, uid, gid).map_err(|e| e.to_string())?;
    let mut s = TcpStream::connect(&*addr)
        .await
        .map_err(|e| e.to_string())?;
    s.set_nodelay(true).ok();
    transmit(&mut core, &mut s).await?;
    until(&mut core, &mut s, |e| matches!(e, Event::Connected { .. })).await?;
    done[0] = start.elapsed();
    let (head, info_bytes) = request_head(&mut core, &mut s, &Request::Req).await?;
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
    request(&mut core, &mut s, &commit).await?;
    done[2] = start.elapsed();
    let fence = Request::Fence {
        procs: vec![Proc::new(&ns, RANK_WILDCARD)],
        info: vec![Info::new("pmix.collect", Value::Bool(true))],
    };
    let t0 = Instant::now();
    let (head, fence_bytes) = request_head(&mut core, &mut s, &fence).await?;
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
    let r = request(&mut core, &mut s, &get).await?;
    core.absorb_get(&Proc::new(&ns, peer), &key, r)
        .map_err(|e| format!("get: {e}"))?;
    done[4] = start.elapsed();
    match request(&mut core, &mut s, &Request::Finalize).await? {
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

/// A generator process (`server_load gen ADDR URI NSPACE FIRST COUNT N`):
/// ranks FIRST..FIRST+COUNT of a job of N, on one thread. Says "ready",
/// starts on a line from stdin, then prints what it measured (fence
/// latencies, when its last client finished each phase, reply sizes, its
/// own CPU time) for the parent to aggregate.
fn generate(a: &[String]) {
    let [addr, uri, ns, first, count, n] = a else {
        eprintln!("usage: server_load gen ADDR URI NSPACE FIRST COUNT N");
        exit(2);
    };
    let (first, count, n): (u32, u32, u32) = (
        first.parse().expect("FIRST"),
        count.parse().expect("COUNT"),
        n.parse().expect("N"),
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    println!("ready");
    std::io::stdout().flush().unwrap();
    let mut go = String::new();
    std::io::stdin().read_line(&mut go).ok();
    let cpu0 = cpu_ms();
    let start = Instant::now();
    let addr: Arc<str> = addr.as_str().into();
    // SAFETY: plain getters
    let ids = unsafe { (libc::geteuid(), libc::getegid()) };
    let m: Vec<Measured> = rt.block_on(async {
        let mut tasks = tokio::task::JoinSet::new();
        for r in first..first + count {
            let env = ClientEnv {
                proc: Proc::new(ns, r),
                uri: uri.clone(),
                format: Format::V41,
                security: "native".into(),
                gds: "hash".into(),
                server_version: None,
            };
            tasks.spawn(client(addr.clone(), env, ids, n, start));
        }
        let mut all = Vec::with_capacity(count as usize);
        // in completion order: a failure is reported at once
        while let Some(t) = tasks.join_next().await {
            match t.expect("client task") {
                Ok(m) => all.push(m),
                Err(e) => {
                    eprintln!("!! a simulated client failed: {e}");
                    exit(1);
                }
            }
        }
        all
    });
    let cpu = cpu_ms() - cpu0;
    let us = |d: Duration| d.as_micros().to_string();
    let lat: Vec<String> = m.iter().map(|x| us(x.fence)).collect();
    let last: Vec<String> = (0..6)
        .map(|i| us(m.iter().map(|x| x.done[i]).max().unwrap_or_default()))
        .collect();
    let bytes: Vec<String> = (0..2)
        .map(|i| m.iter().map(|x| x.bytes[i]).max().unwrap_or(0).to_string())
        .collect();
    println!("lat {}", lat.join(","));
    println!("last {}", last.join(","));
    println!("bytes {}", bytes.join(","));
    println!("cpu {cpu}");
    std::io::stdout().flush().unwrap();
}

struct Run {
    wall: Duration,
    rss_kib: u64,
    /// The server's CPU time during the run (its registration before the
    /// run left out).
    cpu_ms: u64,
    /// The generator processes' CPU time, all together.
    gen_cpu_ms: u64,
    fence_med: Duration,
    fence_max: Duration,
    /// When the last client finished each phase.
    last: [Duration; 6],
    /// The largest job-info and fence replies.
    bytes: [usize; 2],
}

/// The value of the next line of `lines` that starts with `name`.
fn field(lines: &mut impl Iterator<Item = std::io::Result<String>>, name: &str) -> String {
    for l in lines.by_ref() {
        let l = l.expect("child output");
        if let Some(v) = l.strip_prefix(name) {
            return v.trim().to_string();
        }
    }
    eprintln!("!! a child ended before printing {name}");
    exit(1);
}

fn numbers(v: &str) -> impl Iterator<Item = u64> + '_ {
    v.split(',').filter_map(|x| x.parse().ok())
}

/// One server run: the server `cmd` in a process of its own, N clients
/// spread over `k` generator processes (`gen`).
fn run(mut cmd: Command, n: u32, k: u32) -> Run {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("server process");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let uri = field(&mut lines, "uri ");
    let ns = field(&mut lines, "nspace ");
    let cpu_ready: u64 = field(&mut lines, "server_cpu_ready_ms ")
        .parse()
        .unwrap_or(0);
    let addr = uri.rsplit_once("//").expect("tcp uri").1.to_string();
    let me = std::env::current_exe().unwrap();
    let mut gens = Vec::new();
    for g in 0..k {
        // a share of the ranks each, the first ones one more
        let (first, count) = (n / k * g + g.min(n % k), n / k + u32::from(g < n % k));
        let mut c = Command::new(&me)
            .arg("gen")
            .args([&addr, &uri, &ns])
            .args([first, count, n].map(|v| v.to_string()))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("generator process");
        let mut out = BufReader::new(c.stdout.take().unwrap()).lines();
        field(&mut out, "ready");
        gens.push((c, out));
    }
    let start = Instant::now();
    for (c, _) in gens.iter_mut() {
        let _ = c.stdin.as_mut().unwrap().write_all(b"go\n");
        let _ = c.stdin.as_mut().unwrap().flush();
    }
    let mut lat = Vec::new();
    let mut last = [Duration::ZERO; 6];
    let mut bytes = [0usize; 2];
    let mut gen_cpu_ms = 0;
    let mut wall = Duration::ZERO;
    for (c, out) in gens.iter_mut() {
        lat.extend(numbers(&field(out, "lat ")).map(Duration::from_micros));
        wall = wall.max(start.elapsed());
        for (l, d) in last.iter_mut().zip(numbers(&field(out, "last "))) {
            *l = (*l).max(Duration::from_micros(d));
        }
        for (b, x) in bytes.iter_mut().zip(numbers(&field(out, "bytes "))) {
            *b = (*b).max(x as usize);
        }
        gen_cpu_ms += field(out, "cpu ").parse::<u64>().unwrap_or(0);
        let st = c.wait().expect("generator");
        if !st.success() {
            eprintln!("!! a generator failed ({st})");
            exit(1);
        }
    }
    let rss_kib = field(&mut lines, "server_rss ").parse().unwrap_or(0);
    // the run's CPU, not the registration's before it
    let cpu_ms = field(&mut lines, "server_cpu_ms ")
        .parse::<u64>()
        .unwrap_or(0)
        .saturating_sub(cpu_ready);
    drop(child.stdin.take());
    let _ = child.wait();
    lat.sort();
    Run {
        wall,
        rss_kib,
        cpu_ms,
        gen_cpu_ms,
        fence_med: lat[lat.len() / 2],
        fence_max: lat[lat.len() - 1],
        last,
        bytes,
    }
}

fn show(who: &str, n: u32, r: &Run) {
    println!(
        "  {who}: wall {:.0} ms ({:.0} clients/s), server RSS {} KiB, server CPU {} ms, \
         generator CPU {} ms, fence latency median {:.1} ms, worst {:.1} ms",
        r.wall.as_secs_f64() * 1e3,
        n as f64 / r.wall.as_secs_f64(),
        r.rss_kib,
        r.cpu_ms,
        r.gen_cpu_ms,
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
    match args.get(1).map(String::as_str) {
        Some("serve") => return serve(args[2].parse().expect("N")),
        Some("gen") => return generate(&args[2..]),
        _ => {}
    }
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let cserver = build_c("bench_server", &out).unwrap_or_else(|e| panic!("{e}"));
    let me = std::env::current_exe().unwrap();
    let sizes: Vec<u32> = std::env::var("BENCH_N")
        .unwrap_or_else(|_| "1000".into())
        .split(',')
        .filter_map(|v| v.trim().parse().ok())
        .collect();
    let k: u32 = std::env::var("BENCH_GEN")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
        .max(1);
    for n in sizes {
        let ns = n.to_string();
        let mut o = Command::new(&me);
        o.args(["serve", ns.as_str()]);
        let ours = run(o, n, k);
        eprintln!("N={n}: ours done, now libpmix's server");
        show("ours", n, &ours);
        if std::env::var("BENCH_OURS_ONLY").is_ok_and(|v| v == "1") {
            // profiling our server alone
            continue;
        }
        let mut c = Command::new(&cserver);
        c.args([ns.as_str(), "-"]);
        let c = run(c, n, k);
        println!(
            "N={n} throughput ours/C={:.2}x rss C/ours={:.2}x server-cpu C/ours={:.2}x",
            c.wall.as_secs_f64() / ours.wall.as_secs_f64(),
            c.rss_kib as f64 / ours.rss_kib.max(1) as f64,
            c.cpu_ms as f64 / ours.cpu_ms.max(1) as f64,
        );
        show("C   ", n, &c);
        show("ours", n, &ours);
        println!(
            "        load average {}",
            std::fs::read_to_string("/proc/loadavg")
                .unwrap_or_default()
                .trim()
        );
    }
}
