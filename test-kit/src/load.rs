//! The server load benchmark's simulator (benches/server_load.rs is its
//! `main`; issue #11): N simulated PMIx clients on our
//! client core (`pmix_wire::client::core`, sans-IO, driven here by one
//! epoll loop per generator process, `generate`): connect, PMIx_Init (handshake and
//! job info), put 4 keys, commit, fence collecting data, get a neighbour's
//! key, finalize. The same clients run against our server (this binary
//! re-run as `server_load serve N`: `net::start`) and against libpmix
//! 4.2.2's server (interop/c/bench_server.c `N -`, which registers N
//! ranks and starts none), each in a process of its own, so that its peak
//! RSS and CPU time are its alone. The clients run in `BENCH_GEN` generator
//! processes (default 1; this binary re-run as `server_load gen ...`, each
//! a share of the ranks, started together once all are ready), fresh for
//! every run, so that neither server meets a generator warmed by the other.
//! Each N is run `BENCH_REPS` times (default 5 up to N = 2 000, else 1),
//! both servers each time, alternating which goes first; a line per
//! repetition gives both servers' CPU, and one line per N the medians of
//! the repetitions' ratios (their ranges on the next line):
//!
//! ```text
//! N=<n> throughput ours/C=<r>x rss C/ours=<r>x server-cpu C/ours=<r>x
//! ```
//!
//! and, for the repetition whose CPU ratio is the median, each server's
//! wall time, peak RSS, CPU time, the generators' CPU time (who set the
//! pace: the generators or the server), fence
//! latency (median and worst), when the last client finished each phase,
//! the run-queue waits of server and generators (what other load on the
//! machine cost the run), the size of the job-info and fence replies, and
//! the load average. `BENCH_NULL=1` adds a null responder (`null_responder`),
//! the floor under any server for this workload. The
//! job-info reply (and libpmix's fence reply, which can carry every rank's
//! data) is read as a stream: its first item checked, the rest dropped
//! unread by the kernel (`request_head`). Raises its RLIMIT_NOFILE to the
//! hard limit, and past it to N + 4 096 where it may (CAP_SYS_RESOURCE;
//! N = 100 000 needs 100 000 descriptors in the server's process and in
//! the generators'); an N the server's limit cannot hold is skipped, and
//! the line says so (on the 2026-12 development VM root lacks
//! CAP_SYS_RESOURCE and the hard limit is 20 000: N ≤ ~19 900); past `BENCH_PER_SOURCE` clients (default 20 000, within
//! the ~28 000 ephemeral ports of one source address) they connect from
//! further loopback addresses, 127.0.0.2, 127.0.0.3, …. Not a
//! test: nothing asserts a figure; it fails only if a client fails.
//!
//! `BENCH_GDS=ds21`: the clients announce the ds21 store in their
//! handshake, as a libpmix 4.2.x client that found its server's store
//! does (what real jobs of that size do: the job info is read in shared
//! memory, not sent to each rank), and both servers keep one: ours the
//! store `pmixw run --dstore` offers (`net::Options::dstore`, in
//! `$TMPDIR`), libpmix's its default ds21 (`BENCH_SERVER_DSTORE=1`). Each
//! server then writes the job info into its store once and sends each
//! client a short REQ reply (the namespace and the session, node and app
//! arrays; the node array's peer list, ~6 B a rank at 100 000, the part
//! that grows). A ds21 client reads its peer's key in the store, so these
//! send no GET (libpmix's server answers a ds21 peer's GET of a committed
//! local key with NOT_FOUND): the "get" phase ends with the fence, and
//! once every client has finalized the bench reads each server's store
//! back (`check_store`: the job info and every rank's committed key) and
//! fails if anything is missing. Not with `BENCH_NULL=1` (its replies are
//! a hash client's).
//!
//! ```text
//! nice -n 19 cargo bench --bench server_load          # N = 1000
//! BENCH_N=1000,10000 nice -n 19 cargo bench --bench server_load
//! BENCH_GEN=2 ...              # two generator processes
//! BENCH_REPS=9 ...             # nine repetitions of each N
//! BENCH_OURS_ONLY=1 ...        # our server only (to profile it)
//! BENCH_N=100000 BENCH_REPS=1 ...   # where memory and descriptors allow
//! BENCH_GDS=ds21 ...           # clients on the servers' ds21 stores
//! ```

use crate::bench::status_kib;
use crate::interop::build_c;
use bytes::Bytes;
use pmix_codec::frame::{Header, HeaderOrder, HEADER_LEN};
use pmix_codec::msg::{Reply, Request};
use pmix_codec::{DataBuffer, Format};
use pmix_types::enums::Scope;
use pmix_types::{DataType, Info, Proc, Value, RANK_WILDCARD};
use pmix_wire::client::core::{status_reply, ClientEnv, Core, Event};
use pmix_wire::server::{net, ConnId, HostEvent, JobSpec, Limits, PeerInfo, Server, Transmit};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, ErrorKind, Write};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::{exit, Command, Stdio};
use std::time::{Duration, Instant};

/// Raise RLIMIT_NOFILE to the hard limit, and past it to `need` where
/// the process may (root, CAP_SYS_RESOURCE; at most /proc/sys/fs/nr_open):
/// N = 100 000 needs 100 000 descriptors in the server's process and in the
/// generators', beyond the usual hard limit of a login.
fn raise_nofile(need: u64) {
    let nr_open: u64 = std::fs::read_to_string("/proc/sys/fs/nr_open")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    // SAFETY: getrlimit/setrlimit on a local struct
    unsafe {
        let mut r = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) == 0 {
            let want = need.min(nr_open) as libc::rlim_t;
            if r.rlim_max < want {
                let more = libc::rlimit {
                    rlim_cur: want,
                    rlim_max: want,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &more) == 0 {
                    return;
                }
            }
            r.rlim_cur = r.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &r);
        }
    }
}

/// This process's RLIMIT_NOFILE (soft), after [`raise_nofile`].
fn nofile_limit() -> u64 {
    // SAFETY: getrlimit into a local struct
    unsafe {
        let mut r = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) != 0 {
            return u64::MAX;
        }
        r.rlim_cur
    }
}

/// The clients one source address carries (`BENCH_PER_SOURCE`, default
/// 20 000): every connection to the server's one port needs a source
/// port of its own, and Linux has ~28 000 ephemeral ports
/// (ip_local_port_range) per source address. Past the first such share,
/// client i binds 127.0.0.(2 + i / PER_SOURCE) — every 127/8 address is
/// this machine's loopback — so N = 100 000 fits.
fn per_source() -> u32 {
    std::env::var("BENCH_PER_SOURCE")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(20_000)
}

/// The source address for client `i` of a job of `n`, or None (the
/// kernel's choice, 127.0.0.1) while the job fits one source address.
fn source_for(i: u32, n: u32, per: u32) -> Option<std::net::Ipv4Addr> {
    if n <= per {
        return None;
    }
    let host = 2 + i / per;
    Some(std::net::Ipv4Addr::new(
        127,
        0,
        (host >> 8) as u8,
        host as u8,
    ))
}

/// The gds the simulated clients announce in their handshake
/// (`BENCH_GDS`, default hash).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Gds {
    /// Every client reads the job info from its REQ reply (~105 B a rank
    /// from either server, N² bytes in all).
    Hash,
    /// As a libpmix 4.2.x client that found its server's ds21 store: the
    /// job info is in shared memory, written once by the server.
    Ds21,
}

impl Gds {
    /// The module name a client announces ("hash", "ds21").
    fn name(self) -> &'static str {
        match self {
            Gds::Hash => "hash",
            Gds::Ds21 => "ds21",
        }
    }
}

/// `BENCH_GDS` read once: unset or "hash", or "ds21"; anything else ends
/// the process (a typo would measure the other mode).
fn gds() -> Gds {
    static GDS: std::sync::OnceLock<Gds> = std::sync::OnceLock::new();
    *GDS.get_or_init(|| match std::env::var("BENCH_GDS").as_deref() {
        Err(_) | Ok("hash") => Gds::Hash,
        Ok("ds21") => Gds::Ds21,
        Ok(v) => {
            eprintln!("!! BENCH_GDS={v}: hash or ds21");
            exit(2);
        }
    })
}

/// The client core's handshake frame `hello` (which always announces
/// hash), re-framed announcing `gds`: a libpmix 4.2.2 client that took
/// ds21 sends the same connect request with "ds21" in its gds field
/// (strace of `interop/c/ds_client.c` under `bench_server.c`,
/// `BENCH_SERVER_DSTORE=1`: `... v41\0 \x01 ds21\0 \0`).
fn announce(hello: &[u8], gds: Gds) -> Result<Vec<u8>, String> {
    if hello.len() < HEADER_LEN {
        return Err("short handshake".into());
    }
    let mut req = pmix_codec::handshake::ConnectRequest::decode(&hello[HEADER_LEN..])
        .map_err(|e| format!("handshake: {e}"))?;
    req.gds = Some(gds.name().into());
    let body = req.encode().map_err(|e| format!("handshake: {e}"))?;
    let h = Header::decode(hello[..HEADER_LEN].try_into().unwrap(), HeaderOrder::Little);
    pmix_codec::frame::frame(h.pindex, h.tag, &body, HeaderOrder::Little)
        .map_err(|e| format!("handshake: {e}"))
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

/// How long the threads of process `pid` were runnable but waiting for a
/// CPU (the run-queue delay, second field of /proc/PID/task/*/schedstat),
/// in ms: what the machine's other load cost a run.
fn run_wait_ms(pid: u32) -> u64 {
    let Ok(d) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    d.flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .sum::<u64>()
        / 1_000_000
}

/// Our server, alone in this process: the same protocol as the C harness.
fn serve(n: u32) {
    // the default 10 s handshake deadline counts from the accept; 10 000
    // connections arriving at once on 2 shared cores were not all through
    // their handshake within it (one run: "server closed"). The bench
    // measures load, not slowloris defence: a deadline of 120 s.
    // BENCH_GDS=ds21: the store `pmixw run --dstore` offers, in $TMPDIR
    let ds21 = gds() == Gds::Ds21;
    let opts = net::Options {
        limits: Limits {
            handshake_timeout: Duration::from_secs(120),
            ..Limits::default()
        },
        dstore: ds21.then(std::env::temp_dir),
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
    if ds21 {
        // the rank's environment names the store only if it was made
        let env = server.client_env("benchns", 0);
        match env.iter().find(|(k, _)| k == "PMIX_DSTORE_21_BASE_PATH") {
            Some((_, dir)) => eprintln!("ours: ds21 store in {dir}"),
            None => {
                eprintln!("!! BENCH_GDS=ds21: our server made no ds21 store");
                exit(1);
            }
        }
    }
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

/// How much of a streamed reply is kept: enough for its first item.
const HEAD: usize = 64;
/// The read buffer of a generator process, shared by all its clients.
const READ_BUF: usize = 64 << 10;

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
#[derive(Default)]
struct Measured {
    fence: Duration,
    done: [Duration; 6],
    /// The sizes of its job-info, fence and GET replies.
    bytes: [usize; 3],
}

/// Where a simulated client is; each phase waits for the replies named.
#[derive(Clone, Copy, PartialEq)]
enum Phase {
    /// The handshake reply (bytes go to the core until it says Connected).
    Handshake,
    /// The job-info reply (streamed).
    Info {
        tag: u32,
    },
    /// The commit reply (through the core) and the fence reply (streamed),
    /// both requests written at once.
    CommitFence {
        commit: Option<u32>,
        fence: Option<u32>,
    },
    /// The GET reply.
    Get {
        tag: u32,
    },
    /// The FINALIZE reply.
    Finalize {
        tag: u32,
    },
    Done,
}

/// One simulated client: its core, its socket, and the framing of the
/// replies it reads as a stream. Sans tokio: a generator process drives
/// all its clients from one edge-triggered epoll set (see [`generate`]).
struct Sim {
    core: Core,
    fd: std::os::fd::OwnedFd,
    ns: String,
    rank: u32,
    n: u32,
    phase: Phase,
    /// The header and head of the streamed reply being read, or a whole
    /// frame for the core, while incomplete.
    partial: Vec<u8>,
    /// Bytes of a streamed reply still to be dropped.
    drop_left: usize,
    /// The streamed reply being dropped: its tag and head.
    dropping: Option<(u32, Vec<u8>)>,
    /// Bytes a short write left.
    unsent: Vec<u8>,
    /// When commit and fence were sent.
    fence_t0: Instant,
    m: Measured,
}

/// An int socket option (best effort: the bench runs without it).
fn set_int(fd: i32, level: i32, opt: i32, v: i32) {
    // SAFETY: setsockopt reading one c_int from the stack
    unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            (&v as *const i32).cast(),
            std::mem::size_of::<i32>() as libc::socklen_t,
        )
    };
}

fn os_err(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

impl Sim {
    /// A client connecting (non-blocking) to `addr`, its handshake queued.
    fn connect(
        addr: &libc::sockaddr_in,
        env: ClientEnv,
        (uid, gid): (u32, u32),
        n: u32,
        rcvbuf: usize,
        source: Option<std::net::Ipv4Addr>,
    ) -> Result<Sim, String> {
        use std::os::fd::FromRawFd;
        let ns = env.proc.nspace.to_string();
        let rank = env.proc.rank;
        let mut core = Core::new(env, uid, gid).map_err(|e| e.to_string())?;
        // the handshake, announcing the gds of this run (the core's own
        // announces hash)
        let hello = core.poll_transmit().ok_or("no handshake queued")?;
        let unsent = announce(&hello, gds())?;
        // SAFETY: plain socket calls on a descriptor this function owns
        let fd = unsafe {
            let fd = libc::socket(
                libc::AF_INET,
                libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                0,
            );
            if fd < 0 {
                return Err(os_err("socket"));
            }
            let fd = std::os::fd::OwnedFd::from_raw_fd(fd);
            if rcvbuf > 0 {
                set_int(
                    fd.as_raw_fd(),
                    libc::SOL_SOCKET,
                    libc::SO_RCVBUF,
                    rcvbuf as i32,
                );
            }
            if let Some(ip) = source {
                // the port is chosen at connect, by the whole 4-tuple
                set_int(
                    fd.as_raw_fd(),
                    libc::IPPROTO_IP,
                    libc::IP_BIND_ADDRESS_NO_PORT,
                    1,
                );
                let src = libc::sockaddr_in {
                    sin_family: libc::AF_INET as libc::sa_family_t,
                    sin_port: 0,
                    sin_addr: libc::in_addr {
                        s_addr: u32::from(ip).to_be(),
                    },
                    sin_zero: [0; 8],
                };
                if libc::bind(
                    fd.as_raw_fd(),
                    (&src as *const libc::sockaddr_in).cast(),
                    std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
                ) < 0
                {
                    return Err(os_err(&format!("bind {ip}")));
                }
            }
            let r = libc::connect(
                fd.as_raw_fd(),
                (addr as *const libc::sockaddr_in).cast(),
                std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            );
            if r < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINPROGRESS) {
                return Err(os_err("connect"));
            }
            fd
        };
        Ok(Sim {
            core,
            fd,
            ns,
            rank,
            n,
            phase: Phase::Handshake,
            partial: Vec::new(),
            drop_left: 0,
            dropping: None,
            unsent,
            fence_t0: Instant::now(),
            m: Measured::default(),
        })
    }

    /// Write what the core queued (and what a short write left). Returns
    /// whether bytes are still unsent (then the caller waits for EPOLLOUT).
    fn transmit(&mut self) -> Result<bool, String> {
        if let Some(b) = self.core.poll_transmit() {
            if self.unsent.is_empty() {
                self.unsent = b;
            } else {
                self.unsent.extend_from_slice(&b);
            }
        }
        while !self.unsent.is_empty() {
            // SAFETY: send from a live buffer on our descriptor
            let r = unsafe {
                libc::send(
                    self.fd.as_raw_fd(),
                    self.unsent.as_ptr().cast(),
                    self.unsent.len(),
                    libc::MSG_NOSIGNAL,
                )
            };
            if r < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == ErrorKind::WouldBlock {
                    return Ok(true);
                }
                return Err(format!("send: {e}"));
            }
            self.unsent.drain(..r as usize);
        }
        Ok(false)
    }

    /// Whether a reply is awaited.
    fn waiting(&self) -> bool {
        self.phase != Phase::Done
    }

    /// How much the next read may take: while a streamed reply's header
    /// and head are incomplete, no more than they need, so that its body
    /// is dropped in the kernel, never copied here.
    fn read_len(&self) -> usize {
        match self.phase {
            Phase::Info { .. } => (HEADER_LEN + HEAD)
                .saturating_sub(self.partial.len())
                .max(1),
            _ => READ_BUF,
        }
    }

    fn streamed(&self, tag: u32) -> bool {
        match self.phase {
            Phase::Info { tag: t } => t == tag,
            Phase::CommitFence { fence, .. } => fence == Some(tag),
            _ => false,
        }
    }

    /// Read while a reply is awaited and bytes may be there: a short read
    /// means the socket is drained (edge-triggered: the next bytes wake us
    /// again), and after a reply that made us send the next request no
    /// read is tried until its answer can have come. Returns whether the
    /// client is done.
    fn readable(&mut self, buf: &mut [u8], start: Instant) -> Result<bool, String> {
        while self.waiting() {
            let fd = self.fd.as_raw_fd();
            let (asked, r) = if self.drop_left > 0 {
                // SAFETY: MSG_TRUNC on a TCP socket copies nothing to the
                // (null) buffer; the kernel drops at most `drop_left` bytes
                let r = unsafe {
                    libc::recv(fd, std::ptr::null_mut(), self.drop_left, libc::MSG_TRUNC)
                };
                (self.drop_left, r)
            } else {
                let want = self.read_len().min(buf.len());
                // SAFETY: recv into a live buffer of at least `want` bytes
                let r = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), want, 0) };
                (want, r)
            };
            if r < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == ErrorKind::WouldBlock {
                    return Ok(false);
                }
                return Err(format!("recv: {e}"));
            }
            if r == 0 {
                return Err("server closed".into());
            }
            let got = r as usize;
            let sent = if self.drop_left > 0 {
                self.dropped(got, start)?
            } else {
                self.ingest(&buf[..got], start)?
            };
            if got < asked || sent {
                break;
            }
        }
        Ok(!self.waiting())
    }

    /// `k` bytes of the streamed reply dropped. Returns whether a request
    /// was sent.
    fn dropped(&mut self, k: usize, start: Instant) -> Result<bool, String> {
        self.drop_left -= k;
        if self.drop_left > 0 {
            return Ok(false);
        }
        let (tag, head) = self.dropping.take().expect("a streamed reply");
        self.streamed_done(tag, &head, start)
    }

    /// Bytes read from the socket. Returns whether a request was sent.
    fn ingest(&mut self, mut data: &[u8], start: Instant) -> Result<bool, String> {
        let mut sent = false;
        if self.phase == Phase::Handshake {
            self.core
                .handle_input(data, Instant::now())
                .map_err(|e| e.to_string())?;
            return self.step(start);
        }
        while !data.is_empty() {
            if self.drop_left > 0 {
                let k = self.drop_left.min(data.len());
                data = &data[k..];
                sent |= self.dropped(k, start)?;
                continue;
            }
            if self.partial.len() < HEADER_LEN {
                let k = (HEADER_LEN - self.partial.len()).min(data.len());
                self.partial.extend_from_slice(&data[..k]);
                data = &data[k..];
                continue;
            }
            let h = Header::decode(
                self.partial[..HEADER_LEN].try_into().unwrap(),
                HeaderOrder::Network,
            );
            let total = h.nbytes as usize;
            let keep = if self.streamed(h.tag) {
                total.min(HEAD)
            } else {
                total
            };
            let have = self.partial.len() - HEADER_LEN;
            let k = (keep - have).min(data.len());
            self.partial.extend_from_slice(&data[..k]);
            data = &data[k..];
            if self.partial.len() - HEADER_LEN < keep {
                continue;
            }
            let frame = std::mem::take(&mut self.partial);
            if self.streamed(h.tag) {
                let head = frame[HEADER_LEN..].to_vec();
                match self.phase {
                    Phase::Info { .. } => self.m.bytes[0] = total,
                    _ => self.m.bytes[1] = total,
                }
                self.drop_left = total - keep;
                if self.drop_left > 0 {
                    self.dropping = Some((h.tag, head));
                } else {
                    sent |= self.streamed_done(h.tag, &head, start)?;
                }
            } else {
                if matches!(self.phase, Phase::Get { tag } if tag == h.tag) {
                    self.m.bytes[2] = total;
                }
                self.core
                    .handle_input(&frame, Instant::now())
                    .map_err(|e| e.to_string())?;
                sent |= self.step(start)?;
            }
        }
        Ok(sent)
    }

    /// A streamed reply read to its end: check its first item.
    fn streamed_done(&mut self, tag: u32, head: &[u8], start: Instant) -> Result<bool, String> {
        match self.phase {
            Phase::Info { tag: t } if t == tag => {
                match first(head, DataType::String)? {
                    Value::String(Some(n)) if n.to_string() == self.ns => {}
                    v => return Err(format!("job info for {v:?}")),
                }
                self.m.done[1] = start.elapsed();
                self.commit_fence()?;
                Ok(true)
            }
            Phase::CommitFence { commit, fence } if fence == Some(tag) => {
                self.m.fence = self.fence_t0.elapsed();
                if first(head, DataType::Status)? != Value::Status(0) {
                    return Err("fence failed".into());
                }
                self.m.done[3] = start.elapsed();
                self.phase = Phase::CommitFence {
                    commit,
                    fence: None,
                };
                self.after_commit_fence(start)
            }
            _ => Err(format!("unexpected streamed reply {tag}")),
        }
    }

    /// Put 4 keys, then write COMMIT and FENCE at once: PMIx_Commit is
    /// asynchronous ("the library will immediately return to the caller
    /// while the data is transmitted", PMIx_Commit(3)), so a client's queue
    /// may hold both.
    fn commit_fence(&mut self) -> Result<(), String> {
        let rank = self.rank;
        for k in 0..4 {
            self.core.put(
                Scope::GLOBAL,
                &format!("bench.{k}.{rank}"),
                Value::String(Some(
                    format!("value-{k}-of-rank-{rank}-padded").as_str().into(),
                )),
            );
        }
        let commit = self.core.commit_request().map_err(|e| e.to_string())?;
        let c = self.core.send(&commit).map_err(|e| e.to_string())?;
        let fence = Request::Fence {
            procs: vec![Proc::new(&self.ns, RANK_WILDCARD)],
            info: vec![Info::new("pmix.collect", Value::Bool(true))],
        };
        let f = self.core.send(&fence).map_err(|e| e.to_string())?;
        self.phase = Phase::CommitFence {
            commit: c,
            fence: f,
        };
        self.fence_t0 = Instant::now();
        self.transmit()?;
        Ok(())
    }

    /// Once both the commit and the fence replies came: the GET (a ds21
    /// client reads the peer's key in the store and asks nothing:
    /// straight to FINALIZE).
    fn after_commit_fence(&mut self, start: Instant) -> Result<bool, String> {
        if self.phase
            != (Phase::CommitFence {
                commit: None,
                fence: None,
            })
        {
            return Ok(false);
        }
        if gds() == Gds::Ds21 {
            self.m.done[4] = start.elapsed();
            let tag = self.ask(&Request::Finalize)?;
            self.phase = Phase::Finalize { tag };
            return Ok(true);
        }
        let peer = (self.rank + 1) % self.n;
        let key = format!("bench.0.{peer}");
        let get = Request::Get {
            nspace: Some(self.ns.as_str().into()),
            rank: peer,
            info: vec![],
            key: Some(Some(key.as_str().into())),
        };
        let tag = self.ask(&get)?;
        self.phase = Phase::Get { tag };
        Ok(true)
    }

    /// Send `req` now; its reply's tag.
    fn ask(&mut self, req: &Request) -> Result<u32, String> {
        let tag = self.core.send(req).map_err(|e| e.to_string())?;
        self.transmit()?;
        Ok(tag.unwrap_or(0))
    }

    /// Act on what the core says. Returns whether a request was sent.
    fn step(&mut self, start: Instant) -> Result<bool, String> {
        let mut sent = false;
        while let Some(e) = self.core.poll_event() {
            match (self.phase, e) {
                (Phase::Handshake, Event::Connected { .. }) => {
                    self.m.done[0] = start.elapsed();
                    let tag = self.ask(&Request::Req)?;
                    self.phase = Phase::Info { tag };
                    sent = true;
                }
                (Phase::CommitFence { commit, fence }, Event::Reply { tag, reply })
                    if commit == Some(tag) =>
                {
                    status_reply("commit", &reply).map_err(|e| e.to_string())?;
                    self.m.done[2] = start.elapsed();
                    self.phase = Phase::CommitFence {
                        commit: None,
                        fence,
                    };
                    sent |= self.after_commit_fence(start)?;
                }
                (Phase::Get { tag: t }, Event::Reply { tag, reply }) if t == tag => {
                    let peer = (self.rank + 1) % self.n;
                    let key = format!("bench.0.{peer}");
                    self.core
                        .absorb_get(&Proc::new(&self.ns, peer), &key, reply)
                        .map_err(|e| format!("get: {e}"))?;
                    self.m.done[4] = start.elapsed();
                    let tag = self.ask(&Request::Finalize)?;
                    self.phase = Phase::Finalize { tag };
                    sent = true;
                }
                (Phase::Finalize { tag: t }, Event::Reply { tag, reply }) if t == tag => {
                    match reply {
                        Reply::Status(0) => {}
                        r => return Err(format!("finalize: {r:?}")),
                    }
                    self.m.done[5] = start.elapsed();
                    self.phase = Phase::Done;
                }
                // an event notification is no reply: not waited for
                (_, Event::Notice(_)) => {}
                (_, e) => return Err(format!("unexpected {e:?}")),
            }
        }
        Ok(sent)
    }
}

/// A generator process (`server_load gen ADDR URI NSPACE FIRST COUNT N`):
/// ranks FIRST..FIRST+COUNT of a job of N, on one thread. Says "ready",
/// starts on a line from stdin, then prints what it measured (fence
/// latencies, when its last client finished each phase, reply sizes, its
/// own CPU time) for the parent to aggregate.
///
/// The driver is one edge-triggered epoll set, not tokio (which cost a
/// getsockopt, a setsockopt, an epoll_ctl DEL and ~2 EAGAIN reads per
/// client, and its task wake-ups): each client is registered once (for
/// EPOLLIN; EPOLLOUT only after a short write), writes its handshake right
/// after connect() (on loopback the connection is up when connect returns;
/// if not, the write waits for EPOLLOUT), reads until a short read, and is
/// closed without a DEL. Connects go out in batches of [`CONNECT_BATCH`]
/// between polls, so replies are handled while later clients connect.
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
    let sa: std::net::SocketAddrV4 = addr.parse().expect("ADDR (ipv4:port)");
    let sin = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: sa.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*sa.ip()).to_be(),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: plain getters
    let ids = unsafe { (libc::geteuid(), libc::getegid()) };
    let rcvbuf: usize = std::env::var("BENCH_RCVBUF")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(RCVBUF);
    let per = per_source();
    let fail = |e: String| -> ! {
        eprintln!("!! a simulated client failed: {e}");
        exit(1)
    };
    // SAFETY: a new epoll descriptor, closed at exit
    let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    assert!(ep >= 0, "{}", os_err("epoll_create1"));
    let ctl = |op: i32, fd: i32, events: u32, idx: usize| {
        let mut ev = libc::epoll_event {
            events,
            u64: idx as u64,
        };
        // SAFETY: epoll_ctl on our epoll set and a live descriptor
        if unsafe { libc::epoll_ctl(ep, op, fd, &mut ev) } < 0 {
            fail(os_err("epoll_ctl"));
        }
    };
    const IN: u32 = (libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLET) as u32;
    const INOUT: u32 = IN | libc::EPOLLOUT as u32;
    println!("ready");
    std::io::stdout().flush().unwrap();
    let mut go = String::new();
    std::io::stdin().read_line(&mut go).ok();
    let cpu0 = cpu_ms();
    let wait0 = run_wait_ms(std::process::id());
    let start = Instant::now();
    let mut sims: Vec<Option<Sim>> = Vec::with_capacity(count as usize);
    let mut m: Vec<Measured> = Vec::with_capacity(count as usize);
    let mut buf = vec![0u8; READ_BUF];
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 256];
    let mut next = first;
    while m.len() < count as usize {
        let batch_end = (next + CONNECT_BATCH).min(first + count);
        for r in next..batch_end {
            let env = ClientEnv {
                proc: Proc::new(ns, r),
                uri: uri.clone(),
                format: Format::V41,
                security: "native".into(),
                gds: "hash".into(),
                server_version: None,
            };
            let mut s = Sim::connect(&sin, env, ids, n, rcvbuf, source_for(r, n, per))
                .unwrap_or_else(|e| fail(e));
            let idx = sims.len();
            let pending = s.transmit().unwrap_or_else(|e| fail(e));
            ctl(
                libc::EPOLL_CTL_ADD,
                s.fd.as_raw_fd(),
                if pending { INOUT } else { IN },
                idx,
            );
            sims.push(Some(s));
        }
        next = batch_end;
        let timeout = if next < first + count { 0 } else { -1 };
        // SAFETY: epoll_wait into a live array of events
        let k = unsafe { libc::epoll_wait(ep, events.as_mut_ptr(), events.len() as i32, timeout) };
        if k < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == ErrorKind::Interrupted {
                continue;
            }
            fail(format!("epoll_wait: {e}"));
        }
        for ev in &events[..k as usize] {
            let idx = ev.u64 as usize;
            let Some(s) = sims[idx].as_mut() else {
                continue;
            };
            if ev.events & libc::EPOLLOUT as u32 != 0 && !s.unsent.is_empty() {
                let pending = s.transmit().unwrap_or_else(|e| fail(e));
                if !pending {
                    ctl(libc::EPOLL_CTL_MOD, s.fd.as_raw_fd(), IN, idx);
                }
            }
            if ev.events
                & (libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLERR | libc::EPOLLHUP) as u32
                != 0
            {
                let done = s.readable(&mut buf, start).unwrap_or_else(|e| fail(e));
                if !s.unsent.is_empty() {
                    ctl(libc::EPOLL_CTL_MOD, s.fd.as_raw_fd(), INOUT, idx);
                }
                if done {
                    // closing the socket removes it from the epoll set
                    let s = sims[idx].take().unwrap();
                    m.push(s.m);
                }
            }
        }
    }
    let cpu = cpu_ms() - cpu0;
    let wait = run_wait_ms(std::process::id()) - wait0;
    let us = |d: Duration| d.as_micros().to_string();
    let lat: Vec<String> = m.iter().map(|x| us(x.fence)).collect();
    let last: Vec<String> = (0..6)
        .map(|i| us(m.iter().map(|x| x.done[i]).max().unwrap_or_default()))
        .collect();
    let bytes: Vec<String> = (0..3)
        .map(|i| m.iter().map(|x| x.bytes[i]).max().unwrap_or(0).to_string())
        .collect();
    println!("lat {}", lat.join(","));
    println!("last {}", last.join(","));
    println!("bytes {}", bytes.join(","));
    println!("cpu {cpu}");
    println!("wait {wait}");
    std::io::stdout().flush().unwrap();
}

/// The receive buffer a simulated client asks for before it connects
/// (`BENCH_RCVBUF`, 0: the system's default). With the default 128 KiB
/// (tcp_rmem) the first window is 64 KiB, less than one job-info reply at
/// N = 1 000 (ours 104 KB, libpmix's 88 KB): the server's reply stalls
/// until the client has read and sent a window update, a round trip more
/// for every client. 256 KiB opens the first window to two 64 KiB
/// loopback segments. The same for both servers.
const RCVBUF: usize = 256 << 10;

/// Clients a generator connects between two polls of its epoll set.
const CONNECT_BATCH: u32 = 64;

/// Our server's replies to one simulated client, recorded in memory (the
/// server core, sans IO) for the null responder: the handshake reply, and
/// the framed replies to REQ, COMMIT, FENCE, FINALIZE and, by target rank,
/// GET.
struct Canned {
    hs: Vec<u8>,
    info: Vec<u8>,
    commit: Vec<u8>,
    fence: Vec<u8>,
    fin: Vec<u8>,
    get: Vec<Vec<u8>>,
}

/// `bytes` from connection `id` into `s` at `now`: what the core sends
/// back to `id` (its events dropped, its other sends too).
fn pump(s: &mut Server, id: ConnId, bytes: &[u8], now: Instant) -> Vec<u8> {
    s.handle_input(id, bytes, now);
    while s.poll_event().is_some() {}
    let mut out = Vec::new();
    while let Some(t) = s.poll_transmit() {
        if let Transmit::Send(to, b) = t {
            if to == id {
                out.extend_from_slice(&b);
            }
        }
    }
    out
}

/// Run N clients through our server core in memory and keep its replies.
fn canned(n: u32, uri: &str) -> Canned {
    let mut s = Server::new();
    s.register_nspace(JobSpec {
        nspace: "benchns".into(),
        nprocs: n,
        hostname: net::hostname(),
        info: vec![],
    });
    let now = Instant::now();
    // SAFETY: plain getters
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let pump = |s: &mut Server, id, bytes: Vec<u8>| pump(s, id, &bytes, now);
    let mut clients = Vec::new();
    let mut hs = Vec::new();
    let mut info = Vec::new();
    let mut commit = Vec::new();
    for r in 0..n {
        let env = ClientEnv {
            proc: Proc::new("benchns", r),
            uri: uri.to_string(),
            format: Format::V41,
            security: "native".into(),
            gds: "hash".into(),
            server_version: None,
        };
        let mut c = Core::new(env, uid, gid).expect("core");
        let id = s.open_peer(PeerInfo::default(), now).expect("peer");
        let reply = pump(&mut s, id, c.poll_transmit().unwrap());
        c.handle_input(&reply, now).expect("handshake reply");
        if r == 0 {
            hs = reply;
            c.send(&Request::Req).unwrap();
            info = pump(&mut s, id, c.poll_transmit().unwrap());
        }
        for k in 0..4 {
            c.put(
                Scope::GLOBAL,
                &format!("bench.{k}.{r}"),
                Value::String(Some(
                    format!("value-{k}-of-rank-{r}-padded").as_str().into(),
                )),
            );
        }
        let req = c.commit_request().unwrap();
        c.send(&req).unwrap();
        let reply = pump(&mut s, id, c.poll_transmit().unwrap());
        if r == 0 {
            commit = reply;
        }
        clients.push((c, id));
    }
    let mut fence = Vec::new();
    for (i, (c, id)) in clients.iter_mut().enumerate() {
        let f = Request::Fence {
            procs: vec![Proc::new("benchns", RANK_WILDCARD)],
            info: vec![Info::new("pmix.collect", Value::Bool(true))],
        };
        c.send(&f).unwrap();
        let reply = pump(&mut s, *id, c.poll_transmit().unwrap());
        if i + 1 == n as usize {
            fence = reply;
        }
    }
    let mut get = vec![Vec::new(); n as usize];
    for (r, (c, id)) in clients.iter_mut().enumerate() {
        let peer = (r as u32 + 1) % n;
        c.send(&Request::Get {
            nspace: Some("benchns".into()),
            rank: peer,
            info: vec![],
            key: Some(Some(format!("bench.0.{peer}").as_str().into())),
        })
        .unwrap();
        get[peer as usize] = pump(&mut s, *id, c.poll_transmit().unwrap());
    }
    let (c, id) = &mut clients[0];
    c.send(&Request::Finalize).unwrap();
    let fin = pump(&mut s, *id, c.poll_transmit().unwrap());
    Canned {
        hs,
        info,
        commit,
        fence,
        fin,
        get,
    }
}

/// One connection of the null responder.
#[derive(Default)]
struct NullConn {
    /// Bytes of a request not complete yet.
    inbuf: Vec<u8>,
    /// Requests answered so far (the handshake is the first).
    seen: u32,
    unsent: Vec<u8>,
}

/// Send `parts` on `fd` with one sendmsg; what the socket does not take
/// now is kept in `unsent` (the caller then waits for EPOLLOUT).
fn send_parts(fd: i32, parts: &[&[u8]], unsent: &mut Vec<u8>) -> Result<(), String> {
    if !unsent.is_empty() {
        for p in parts {
            unsent.extend_from_slice(p);
        }
        return Ok(());
    }
    let mut iov: Vec<libc::iovec> = parts
        .iter()
        .map(|p| libc::iovec {
            iov_base: p.as_ptr() as *mut libc::c_void,
            iov_len: p.len(),
        })
        .collect();
    // SAFETY: a msghdr over live buffers
    let r = unsafe {
        let mut m: libc::msghdr = std::mem::zeroed();
        m.msg_iov = iov.as_mut_ptr();
        m.msg_iovlen = iov.len() as _;
        libc::sendmsg(fd, &m, libc::MSG_NOSIGNAL)
    };
    let mut skip = if r < 0 {
        let e = std::io::Error::last_os_error();
        if e.kind() != ErrorKind::WouldBlock {
            return Err(format!("send: {e}"));
        }
        0
    } else {
        r as usize
    };
    for p in parts {
        let k = skip.min(p.len());
        skip -= k;
        unsent.extend_from_slice(&p[k..]);
    }
    Ok(())
}

/// The null responder (`server_load null N`): not a server, the floor
/// under any server for this workload. It answers every request at once
/// (the fence too: no collective) with the bytes our server sends for it
/// ([`canned`]), from one edge-triggered epoll loop; no peer check, no
/// host. The generator meets the same packets as with our server; what the
/// responder itself costs is the kernel's share of them.
fn null_responder(n: u32) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
    l.set_nonblocking(true).unwrap();
    // std listens with a backlog of 128: 1 000 connects at once overflow
    // it (a dropped SYN is sent again after 1 s); ours listens with 4 096,
    // and TCP_NODELAY, which accepted sockets inherit (as our server's)
    // SAFETY: listen() again on our listener only changes its backlog
    unsafe { libc::listen(l.as_raw_fd(), 4096) };
    set_int(l.as_raw_fd(), libc::IPPROTO_TCP, libc::TCP_NODELAY, 1);
    let port = l.local_addr().unwrap().port();
    let uri = format!(
        "pmixw-server.{};tcp4://127.0.0.1:{port}",
        std::process::id()
    );
    let c = canned(n, &uri);
    println!(
        "uri {uri}\nnspace benchns\nserver_cpu_ready_ms {}",
        cpu_ms()
    );
    std::io::stdout().flush().unwrap();
    // the bench closes stdin when it is done with us
    std::thread::spawn(|| {
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(&mut std::io::stdin(), &mut rest);
        exit(0);
    });
    // SAFETY: a new epoll set
    let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    let ctl = |op: i32, fd: i32, events: u32| {
        let mut ev = libc::epoll_event {
            events,
            u64: fd as u64,
        };
        // SAFETY: epoll_ctl on our set and a live descriptor
        unsafe { libc::epoll_ctl(ep, op, fd, &mut ev) };
    };
    const IN: u32 = (libc::EPOLLIN | libc::EPOLLET) as u32;
    let lfd = l.as_raw_fd();
    ctl(libc::EPOLL_CTL_ADD, lfd, IN);
    let mut conns: HashMap<i32, NullConn> = HashMap::new();
    let mut buf = vec![0u8; READ_BUF];
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 256];
    let mut finalized = 0;
    let mut reported = false;
    loop {
        // SAFETY: epoll_wait into a live array
        let k = unsafe { libc::epoll_wait(ep, events.as_mut_ptr(), events.len() as i32, -1) };
        for ev in &events[..k.max(0) as usize] {
            let fd = ev.u64 as i32;
            if fd == lfd {
                loop {
                    // SAFETY: accept4 on our listener
                    let a = unsafe {
                        libc::accept4(
                            lfd,
                            std::ptr::null_mut(),
                            std::ptr::null_mut(),
                            libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                        )
                    };
                    if a < 0 {
                        break;
                    }
                    ctl(libc::EPOLL_CTL_ADD, a, IN);
                    conns.insert(a, NullConn::default());
                }
                continue;
            }
            let Some(st) = conns.get_mut(&fd) else {
                continue;
            };
            if ev.events & libc::EPOLLOUT as u32 != 0 && !st.unsent.is_empty() {
                let rest = std::mem::take(&mut st.unsent);
                send_parts(fd, &[&rest], &mut st.unsent).unwrap();
                if st.unsent.is_empty() {
                    ctl(libc::EPOLL_CTL_MOD, fd, IN);
                }
            }
            let mut eof = false;
            loop {
                // SAFETY: recv into a live buffer
                let r = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
                if r <= 0 {
                    eof = r == 0 || std::io::Error::last_os_error().kind() != ErrorKind::WouldBlock;
                    break;
                }
                st.inbuf.extend_from_slice(&buf[..r as usize]);
                if (r as usize) < buf.len() {
                    break;
                }
            }
            // answer every complete request
            loop {
                if st.inbuf.len() < HEADER_LEN {
                    break;
                }
                let order = if st.seen == 0 {
                    HeaderOrder::Little
                } else {
                    HeaderOrder::Network
                };
                let h = Header::decode(st.inbuf[..HEADER_LEN].try_into().unwrap(), order);
                let len = HEADER_LEN + h.nbytes as usize;
                if st.inbuf.len() < len {
                    break;
                }
                let tag = h.tag.to_be_bytes();
                let reply: &[u8] = match st.seen {
                    0 => &c.hs,
                    1 => &c.info,
                    2 => &c.commit,
                    3 => &c.fence,
                    4 => match Request::decode(&Format::V41, &st.inbuf[HEADER_LEN..len]) {
                        Ok(Request::Get { rank, .. }) => &c.get[rank as usize % c.get.len()],
                        r => panic!("null responder: not a GET: {r:?}"),
                    },
                    _ => {
                        finalized += 1;
                        &c.fin
                    }
                };
                if st.seen == 0 {
                    send_parts(fd, &[reply], &mut st.unsent).unwrap();
                } else {
                    // the reply's header with the request's tag
                    send_parts(fd, &[&reply[..4], &tag, &reply[8..]], &mut st.unsent).unwrap();
                }
                if !st.unsent.is_empty() {
                    ctl(libc::EPOLL_CTL_MOD, fd, IN | libc::EPOLLOUT as u32);
                }
                st.seen += 1;
                st.inbuf.drain(..len);
            }
            if eof {
                conns.remove(&fd);
                // SAFETY: closing a descriptor we accepted
                unsafe { libc::close(fd) };
            }
        }
        if finalized >= n && !reported {
            reported = true;
            println!(
                "server_rss {}\nserver_cpu_ms {}",
                status_kib("VmHWM:"),
                cpu_ms()
            );
            std::io::stdout().flush().unwrap();
        }
    }
}

struct Run {
    wall: Duration,
    rss_kib: u64,
    /// The server's CPU time during the run (its registration before the
    /// run left out).
    cpu_ms: u64,
    /// The generator processes' CPU time, all together.
    gen_cpu_ms: u64,
    /// Run-queue waits during the run ([`run_wait_ms`]): the server's, the
    /// generators' together.
    wait_ms: [u64; 2],
    fence_med: Duration,
    fence_max: Duration,
    /// When the last client finished each phase.
    last: [Duration; 6],
    /// The largest job-info, fence and GET replies.
    bytes: [usize; 3],
    /// Whether the server's ds21 store was read back ([`check_store`]).
    stored: bool,
}

/// The processes of the run under way (server, generators): ended by
/// [`abandon`] when the run fails, so that a server waiting for clients
/// that died does not outlive the bench.
static CHILDREN: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());

/// The run failed: say why, end its processes, exit.
fn abandon(why: &str) -> ! {
    eprintln!("!! {why}");
    for pid in CHILDREN.lock().map(|c| c.clone()).unwrap_or_default() {
        // SAFETY: a signal to a child this process started and has not
        // reaped (a zombie at worst)
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        // a killed server leaves its store directory (both servers name
        // it so, libpmix's a ds12 one beside it)
        for ds in ["ds21", "ds12"] {
            let dir = std::env::temp_dir().join(format!("pmix_dstor_{ds}_{pid}"));
            let _ = std::fs::remove_dir_all(dir);
        }
    }
    exit(1);
}

/// The value of the next line of `lines` that starts with `name`.
fn field(lines: &mut impl Iterator<Item = std::io::Result<String>>, name: &str) -> String {
    for l in lines.by_ref() {
        let l = l.expect("child output");
        if let Some(v) = l.strip_prefix(name) {
            return v.trim().to_string();
        }
    }
    abandon(&format!("a child ended before printing {name}"));
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
    CHILDREN.lock().unwrap().push(child.id());
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let uri = field(&mut lines, "uri ");
    let ns = field(&mut lines, "nspace ");
    let cpu_ready: u64 = field(&mut lines, "server_cpu_ready_ms ")
        .parse()
        .unwrap_or(0);
    let wait_ready = run_wait_ms(child.id());
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
        CHILDREN.lock().unwrap().push(c.id());
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
    let mut bytes = [0usize; 3];
    let mut gen_cpu_ms = 0;
    let mut gen_wait_ms = 0;
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
        gen_wait_ms += field(out, "wait ").parse::<u64>().unwrap_or(0);
        let st = c.wait().expect("generator");
        if !st.success() {
            abandon(&format!("a generator failed ({st})"));
        }
    }
    let rss_kib = field(&mut lines, "server_rss ").parse().unwrap_or(0);
    // every client finalized, so every commit is in; the server still
    // runs, its store still there
    let stored = gds() == Gds::Ds21;
    if stored {
        let dir = std::env::temp_dir().join(format!("pmix_dstor_ds21_{}", child.id()));
        check_store(&dir, &ns, n).unwrap_or_else(|e| abandon(&format!("{}: {e}", dir.display())));
    }
    // the run's CPU, not the registration's before it
    let cpu_ms = field(&mut lines, "server_cpu_ms ")
        .parse::<u64>()
        .unwrap_or(0)
        .saturating_sub(cpu_ready);
    // the server waits for stdin now: its threads are still there
    let wait_ms = [
        run_wait_ms(child.id()).saturating_sub(wait_ready),
        gen_wait_ms,
    ];
    drop(child.stdin.take());
    let _ = child.wait();
    CHILDREN.lock().unwrap().clear();
    lat.sort();
    Run {
        wall,
        rss_kib,
        cpu_ms,
        gen_cpu_ms,
        wait_ms,
        fence_med: lat[lat.len() / 2],
        fence_max: lat[lat.len() - 1],
        last,
        bytes,
        stored,
    }
}

/// What a ds21 client reads where the simulated ones send no GET: in the
/// store directory `dir` (libpmix's and ours alike:
/// `$TMPDIR/pmix_dstor_ds21_<server pid>`), namespace `ns` holds the job
/// info (`pmix.job.size` = N at the wildcard rank) and every rank r's
/// committed `bench.0.<r>`, packed as a 4.2.2 client unpacks it.
pub fn check_store(dir: &Path, ns: &str, n: u32) -> Result<(), String> {
    use pmix_wire::server::dstore::layout::WILDCARD;
    let snap = pmix_wire::server::net::dstore::snapshot::Snapshot::load(dir)
        .map_err(|e| format!("no ds21 store: {e}"))?;
    let mut sp = snap
        .spaces
        .into_iter()
        .find(|s| s.name == ns)
        .ok_or_else(|| format!("no namespace {ns} in the store"))?;
    let packed = |v: Value| {
        pmix_codec::encode(&Format::V41, DataType::Value, &[Value::Value(Box::new(v))])
            .map_err(|e| e.to_string())
    };
    let size = sp
        .ns
        .fetch(WILDCARD, "pmix.job.size")
        .map_err(|e| e.to_string())?;
    if size != Some(packed(Value::Uint32(n))?) {
        return Err(format!("pmix.job.size: {size:?}"));
    }
    for r in 0..n {
        let key = format!("bench.0.{r}");
        let want = packed(Value::String(Some(
            format!("value-0-of-rank-{r}-padded").as_str().into(),
        )))?;
        match sp.ns.fetch(r, &key).map_err(|e| format!("rank {r}: {e}"))? {
            Some(v) if v == want => {}
            v => return Err(format!("rank {r} {key}: {v:?}")),
        }
    }
    Ok(())
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
        "        run-queue wait (runnable, no CPU): server {} ms, generator {} ms",
        r.wait_ms[0], r.wait_ms[1]
    );
    println!(
        "        replies per client: job info {} B, fence {} B, GET {} B",
        r.bytes[0], r.bytes[1], r.bytes[2]
    );
    if r.stored {
        println!("        ds21 store: the job info and every rank's bench.0 key read back");
    }
}

/// The bench's `main` (benches/server_load.rs): run as `server_load serve
/// N`, `gen …` or `null N` it is that process of a run; otherwise the whole
/// bench, building libpmix's server into `out`.
pub fn main(out: &Path) {
    let args: Vec<String> = std::env::args().collect();
    // the largest N of the run (or of this process), a descriptor each and
    // room for the rest
    let most: u64 = match args.get(1).map(String::as_str) {
        Some("serve" | "null") => args.get(2).and_then(|n| n.parse().ok()).unwrap_or(0),
        Some("gen") => args.get(7).and_then(|n| n.parse().ok()).unwrap_or(0),
        _ => std::env::var("BENCH_N")
            .unwrap_or_default()
            .split(',')
            .filter_map(|v| v.trim().parse().ok())
            .max()
            .unwrap_or(0),
    };
    raise_nofile(most + 4096);
    let nofile = nofile_limit();
    match args.get(1).map(String::as_str) {
        Some("serve") => return serve(args[2].parse().expect("N")),
        Some("gen") => return generate(&args[2..]),
        Some("null") => return null_responder(args[2].parse().expect("N")),
        _ => {}
    }
    let cserver = build_c("bench_server", out).unwrap_or_else(|e| panic!("{e}"));
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
    let null = std::env::var("BENCH_NULL").is_ok_and(|v| v == "1");
    if null && gds() == Gds::Ds21 {
        // its replies are our server's to hash clients (`canned`)
        eprintln!("!! BENCH_NULL=1 is for hash clients only, not BENCH_GDS=ds21");
        exit(2);
    }
    println!("clients announce gds {}", gds().name());
    for n in sizes {
        // the server holds all N connections at once (the fence waits
        // for every rank): past the limit it would fail mid-run
        if u64::from(n) + 64 > nofile {
            println!(
                "N={n} skipped: the server needs {n} descriptors at once, \
                 RLIMIT_NOFILE is {nofile} and could not be raised (a hard limit \
                 past it needs CAP_SYS_RESOURCE)"
            );
            continue;
        }
        let ns = n.to_string();
        let ours_cmd = || {
            let mut o = Command::new(&me);
            o.args(["serve", ns.as_str()]);
            o
        };
        if std::env::var("BENCH_OURS_ONLY").is_ok_and(|v| v == "1") {
            // profiling our server alone
            show("ours", n, &run(ours_cmd(), n, k));
            continue;
        }
        let c_cmd = || {
            let mut c = Command::new(&cserver);
            c.args([ns.as_str(), "-"]);
            if gds() == Gds::Ds21 {
                // libpmix's own default: its ds21 store
                c.env("BENCH_SERVER_DSTORE", "1");
            }
            c
        };
        // one run of each server is one sample of a noisy machine (the
        // null responder's fixed work moved by a third between runs a
        // second apart): several, alternating which server goes first,
        // and the medians of the pairs' ratios
        let reps: usize = std::env::var("BENCH_REPS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(if n <= 2000 { 5 } else { 1 })
            .max(1);
        let mut pairs = Vec::new();
        for i in 0..reps {
            let (ours, c) = if i % 2 == 0 {
                let o = run(ours_cmd(), n, k);
                (o, run(c_cmd(), n, k))
            } else {
                let c = run(c_cmd(), n, k);
                (run(ours_cmd(), n, k), c)
            };
            let z = null.then(|| {
                let mut z = Command::new(&me);
                z.args(["null", ns.as_str()]);
                run(z, n, k)
            });
            println!(
                "  N={n} run {}/{reps}: server CPU C {} ms, ours {} ms{} -> C/ours {:.2}x",
                i + 1,
                c.cpu_ms,
                ours.cpu_ms,
                z.as_ref()
                    .map(|z| format!(", null responder {} ms", z.cpu_ms))
                    .unwrap_or_default(),
                c.cpu_ms as f64 / ours.cpu_ms.max(1) as f64
            );
            pairs.push((ours, c, z));
        }
        let ratio = |f: &dyn Fn(&Run, &Run) -> f64| {
            let mut v: Vec<f64> = pairs.iter().map(|(o, c, _)| f(o, c)).collect();
            v.sort_by(f64::total_cmp);
            (v[v.len() / 2], v[0], v[v.len() - 1])
        };
        let cpu = ratio(&|o, c| c.cpu_ms as f64 / o.cpu_ms.max(1) as f64);
        let tput = ratio(&|o, c| c.wall.as_secs_f64() / o.wall.as_secs_f64());
        let rss = ratio(&|o, c| c.rss_kib as f64 / o.rss_kib.max(1) as f64);
        println!(
            "N={n} throughput ours/C={:.2}x rss C/ours={:.2}x server-cpu C/ours={:.2}x",
            tput.0, rss.0, cpu.0
        );
        if reps > 1 {
            println!(
                "        medians of {reps} alternating runs; ranges: throughput {:.2}-{:.2}x, \
                 rss {:.2}-{:.2}x, server-cpu {:.2}-{:.2}x",
                tput.1, tput.2, rss.1, rss.2, cpu.1, cpu.2
            );
        }
        // the details of the run whose CPU ratio is the median
        let (ours, c, z) = pairs
            .iter()
            .find(|(o, c, _)| c.cpu_ms as f64 / o.cpu_ms.max(1) as f64 == cpu.0)
            .expect("the median is one of the runs");
        show("C   ", n, c);
        show("ours", n, ours);
        if let Some(z) = z {
            show("null", n, z);
            println!(
                "        floor: C wall / null-responder wall = {:.2}x (ours {:.2}x)",
                c.wall.as_secs_f64() / z.wall.as_secs_f64(),
                c.wall.as_secs_f64() / ours.wall.as_secs_f64(),
            );
        }
        println!(
            "        load average {}",
            std::fs::read_to_string("/proc/loadavg")
                .unwrap_or_default()
                .trim()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pmix_codec::handshake::ConnectRequest;

    fn hello() -> Vec<u8> {
        let env = ClientEnv {
            proc: Proc::new("benchns", 7),
            uri: "pmixw-server.1;tcp4://127.0.0.1:1".into(),
            format: Format::V41,
            security: "native".into(),
            gds: "hash".into(),
            server_version: None,
        };
        Core::new(env, 1000, 1000).unwrap().poll_transmit().unwrap()
    }

    fn decoded(frame: &[u8]) -> (Header, ConnectRequest) {
        let h = Header::decode(frame[..HEADER_LEN].try_into().unwrap(), HeaderOrder::Little);
        assert_eq!(h.nbytes as usize, frame.len() - HEADER_LEN);
        (h, ConnectRequest::decode(&frame[HEADER_LEN..]).unwrap())
    }

    #[test]
    fn a_ds21_client_announces_ds21_and_nothing_else_changes() {
        let core = hello();
        let (h0, r0) = decoded(&core);
        assert_eq!(
            r0.gds.as_ref().map(|g| g.to_string()).as_deref(),
            Some("hash")
        );
        let (h, r) = decoded(&announce(&core, Gds::Ds21).unwrap());
        assert_eq!(
            r.gds.as_ref().map(|g| g.to_string()).as_deref(),
            Some("ds21")
        );
        assert_eq!((h.pindex, h.tag), (h0.pindex, h0.tag));
        assert_eq!(
            ConnectRequest {
                gds: r0.gds.clone(),
                ..r
            },
            r0
        );
        // hash: the core's own bytes
        assert_eq!(announce(&core, Gds::Hash).unwrap(), core);
        // a frame too short to hold a header is an error, no panic
        assert!(announce(&core[..3], Gds::Ds21).is_err());
    }

    /// Ranks `0..n` of a job of `n` through our server core with a ds21
    /// store in `base`, as the bench's ds21 clients: handshake announcing
    /// ds21, REQ, put and commit, but rank `skip` commits nothing. The
    /// store's directory (the session stays alive with the server) and
    /// the largest REQ reply.
    fn run_ds21(base: &Path, n: u32, skip: u32) -> (Server, std::path::PathBuf, usize) {
        let mut s = Server::new();
        let session = net::dstore::Session::create(base).unwrap();
        let dir = session.dir().to_path_buf();
        s.set_shared_store(Box::new(session));
        s.register_nspace(JobSpec {
            nspace: "benchns".into(),
            nprocs: n,
            hostname: "h".into(),
            info: vec![],
        });
        let now = Instant::now();
        let pump = |s: &mut Server, id, bytes: Vec<u8>| super::pump(s, id, &bytes, now);
        let mut most = 0;
        for r in 0..n {
            let env = ClientEnv {
                proc: Proc::new("benchns", r),
                uri: "pmixw-server.1;tcp4://127.0.0.1:1".into(),
                format: Format::V41,
                security: "native".into(),
                gds: "ds21".into(),
                server_version: None,
            };
            let mut c = Core::new(env, 1000, 1000).unwrap();
            let id = s.open_peer(PeerInfo::default(), now).unwrap();
            let hs = announce(&c.poll_transmit().unwrap(), Gds::Ds21).unwrap();
            let reply = pump(&mut s, id, hs);
            c.handle_input(&reply, now).unwrap();
            c.send(&Request::Req).unwrap();
            most = most.max(pump(&mut s, id, c.poll_transmit().unwrap()).len());
            if r != skip {
                c.put(
                    Scope::GLOBAL,
                    &format!("bench.0.{r}"),
                    Value::String(Some(format!("value-0-of-rank-{r}-padded").as_str().into())),
                );
                let req = c.commit_request().unwrap();
                c.send(&req).unwrap();
                pump(&mut s, id, c.poll_transmit().unwrap());
            }
        }
        (s, dir, most)
    }

    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    #[test]
    fn the_store_check_finds_every_commit_and_misses_one_left_out() {
        let base = std::env::temp_dir().join(format!("load-ds21-test-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        // all committed: the check passes, and each REQ reply is short
        // (the hash reply at 40 ranks is ~4 KB)
        let (s, dir, most) = run_ds21(&base, 40, u32::MAX);
        check_store(&dir, "benchns", 40).unwrap();
        assert!(most < 1000, "REQ reply of {most} B");
        // a rank missing, or a namespace the store does not hold: it fails
        assert!(check_store(&dir, "otherns", 40).is_err());
        drop(s);
        let (s, dir, _) = run_ds21(&base, 40, 17);
        let e = check_store(&dir, "benchns", 40).unwrap_err();
        assert!(e.contains("rank 17"), "{e}");
        drop(s);
        // the store goes with its server
        assert!(!dir.exists());
        let _ = std::fs::remove_dir_all(&base);
    }
}
