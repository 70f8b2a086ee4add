//! `pmixw run` started once per node by a PMI-2 launcher
//! (`srun --mpi=pmi2 -N 2 --ntasks-per-node=1 pmixw run -n 4 ./prog`):
//! every node's `pmixw run` is one PMI-2 task; together they run ONE job
//! of N ranks (block distribution over the nodes, or cyclic), each node
//! starting its share under its own server core. Through PMI-2: the job's
//! identity, the nodes' names and bridge addresses, and every fence (the
//! collective alone: no data). Through the bridge (direct TCP between the
//! nodes' hosts, addresses and token from the PMI-2 KVS): the data a fence
//! collected, each node's contribution fetched from it once by each node
//! that needs one of its ranks' data (lazily, when a GET asks: a node whose
//! ranks nobody reads is never asked), direct modex, events beyond the
//! node, and the end of the job (abort, a failed rank, a lost node), so
//! that every node stops with the job's status. A node whose ranks are
//! done stays until every other node is, answering their requests. The
//! node's job runs in the host loop of every wire (host.rs), its end decided by the same rules (the first rank to end is the
//! failure; no `--keep-going`): the other nodes are told at once, every
//! fence and direct-modex request of the node's ranks still waiting fails
//! (so that a rank blocked in one gets an error, not a kill), and the
//! ranks get the job's grace to end before SIGTERM. Facts and evidence:
//! spec-notes/pmi2.md; the faults: spec-notes/robustness.md "Across
//! nodes".

use super::host::{self, Ending, Job, Outcome, Ranks};
use super::run_pmix::{print_server_rss, start_server, PmixStart};
use super::wake::{Wake, Waker};
use pmix_types::status::codes;
use pmix_wire::pmi::client::fd::{Conn, Traffic};
use pmix_wire::pmi::client::{self as pmi2, Request, Response};
use pmix_wire::server::{net, GetCounts, HostEvent, NodeMap, Server};
use pmixw::bridge::{Inbound, InboundEvent, Msg, Refusal};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::process::ExitCode;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::{Duration, Instant};

/// How long a PMI-2 answer may take: `PMIXW_PMI2_TIMEOUT` seconds, else
/// this. A job's fence waits for its slowest rank, which may compute for
/// hours first: it waits for the job's `--timeout`, else
/// `PMIXW_PMI2_FENCE_TIMEOUT` seconds, else [`DEFAULT_FENCE_TIMEOUT`] (a
/// node that fails meanwhile ends the job through the bridge at once).
pub const DEFAULT_PMI2_TIMEOUT: Duration = Duration::from_secs(60);
pub const DEFAULT_FENCE_TIMEOUT: Duration = Duration::from_secs(24 * 3600);

/// How long a node this one cannot reach has for its own connection to
/// say its Hello before it is lost.
const UNREACHABLE_WAIT: Duration = Duration::from_secs(1);

pub(super) fn secs_var(name: &str) -> Option<Duration> {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .map(|s| Duration::from_secs_f64(s.max(0.001)))
}

/// The ranks of each of `nodes` nodes: block (consecutive, the first
/// `n % nodes` nodes one more) or cyclic (rank r on node r % nodes).
pub fn placement(n: u32, nodes: u32, cyclic: bool) -> Vec<Vec<u32>> {
    let nodes = nodes.max(1);
    let mut out = vec![Vec::new(); nodes as usize];
    if cyclic {
        for r in 0..n {
            out[(r % nodes) as usize].push(r);
        }
    } else {
        let (base, extra) = (n / nodes, n % nodes);
        let mut r = 0;
        for (i, v) in out.iter_mut().enumerate() {
            let k = base + u32::from((i as u32) < extra);
            v.extend(r..r + k);
            r += k;
        }
    }
    out
}

/// Something for the main loop.
enum Ev {
    Peer(usize, Msg),
    /// A node's connection to us ended (after all it sent).
    PeerGone(usize),
    /// Our connection to a node ended: it is gone, unless its own
    /// connection to us (which reports in order) is open.
    Unreachable(usize),
    /// A PMI-2 fence completed: (the PMIx fence's request, its sequence
    /// number, whether it collects data), or failed.
    FenceDone(u64, u64, bool, Result<(), String>),
    /// PMI-2 `finalize` answered; what the connection carried.
    Finalized(Traffic),
}

/// The main loop's inbox for its threads: each message wakes the loop.
#[derive(Clone)]
struct EvTx {
    tx: Sender<Ev>,
    wake: Waker,
}

impl EvTx {
    fn send(&self, e: Ev) -> Result<(), std::sync::mpsc::SendError<Ev>> {
        let r = self.tx.send(e);
        self.wake.wake();
        r
    }
}

/// Work for the PMI-2 thread (PMI-2 answers one request at a time).
enum Work {
    Fence {
        request: u64,
        seq: u64,
        collect: bool,
    },
    Finalize,
}

pub(super) fn pmi_err(e: pmi2::Error) -> String {
    format!("pmixw run: {e}")
}

fn random_token() -> String {
    let mut b = [0u8; 16];
    let _ = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut b));
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// One fence through PMI-2: this node's contribution in fresh keys, the
/// collective, then every node's contribution in node order.
pub(super) fn fence(
    pmi: &mut Conn,
    limit: Duration,
    seq: u64,
    me: usize,
    nodes: usize,
    collect: bool,
    data: &[u8],
) -> Result<Vec<u8>, pmi2::Error> {
    if collect {
        let enc = pmi2::encode_blob(data);
        let parts = pmi2::split_value(&enc);
        for (k, p) in parts.iter().enumerate() {
            pmi.put(&format!("pmixw.f{seq}.{me}.{k}"), p)?;
        }
        pmi.put(&format!("pmixw.f{seq}.{me}"), &parts.len().to_string())?;
    }
    pmi.fence_within(limit)?;
    let mut all = Vec::new();
    if collect {
        for j in 0..nodes {
            let count: usize = match pmi.get(&format!("pmixw.f{seq}.{j}"))? {
                Some(c) => c.parse().map_err(|_| pmi2::Error::Malformed {
                    what: "chunk count",
                    detail: c.clone(),
                })?,
                None => 0,
            };
            let mut enc = String::new();
            for k in 0..count {
                let key = format!("pmixw.f{seq}.{j}.{k}");
                let part = pmi.get(&key)?.ok_or_else(|| pmi2::Error::Malformed {
                    what: "fence data",
                    detail: format!("{key} missing"),
                })?;
                enc.push_str(&part);
            }
            all.extend(pmi2::decode_blob(&enc)?);
        }
    }
    Ok(all)
}

/// The PMI-2 connection's thread: each PMIx fence is one PMI-2 fence, the
/// collective alone (the data it collects stays with each node, fetched
/// over the bridge by the nodes that need it: [`Bridge::route`]).
fn pmi_thread(mut pmi: Conn, limit: Duration, work: Receiver<Work>, ev: EvTx) {
    for w in work {
        match w {
            Work::Fence {
                request,
                seq,
                collect,
            } => {
                let r = pmi.fence_within(limit).map_err(|e| e.to_string());
                let failed = r.is_err();
                let _ = ev.send(Ev::FenceDone(request, seq, collect, r));
                if failed {
                    return;
                }
            }
            Work::Finalize => {
                let traffic = pmi.traffic.clone();
                let _ = pmi.call(&Request::Finalize);
                let _ = ev.send(Ev::Finalized(traffic));
                return;
            }
        }
    }
}

fn read_peer(mut s: TcpStream, token: String, ev: EvTx) {
    let mut conn = Inbound::new(&token, Instant::now());
    let mut buf = vec![0u8; 64 << 10];
    loop {
        while let Some(e) = conn.poll_event() {
            match e {
                InboundEvent::Peer(j, m) => {
                    if ev.send(Ev::Peer(j as usize, m)).is_err() {
                        return;
                    }
                }
                // not one of ours (a wrong token, no Hello in time,
                // garbage), or gone
                InboundEvent::Refused { node, why } => {
                    if why != Refusal::Closed {
                        eprintln!("pmixw run: bridge connection refused: {why}");
                    }
                    if let Some(j) = node {
                        let _ = ev.send(Ev::PeerGone(j as usize));
                    }
                    return;
                }
            }
        }
        let wait = conn.poll_timeout().map(|at| {
            at.saturating_duration_since(Instant::now())
                .max(Duration::from_millis(1))
        });
        let _ = s.set_read_timeout(wait);
        match s.read(&mut buf) {
            Ok(0) => conn.closed(),
            Ok(n) => conn.handle_input(&buf[..n], Instant::now()),
            Err(e) if pmix_wire::pmi::client::fd::no_bytes_yet(&e) => {}
            Err(_) => conn.closed(),
        }
        conn.handle_timeout(Instant::now());
    }
}

/// The bridge: one outgoing connection per other node, and the frames
/// and bytes written to them.
#[derive(Default)]
struct Peers {
    to: Vec<Option<TcpStream>>,
    frames: u64,
    bytes: u64,
    /// Of the frames: fetches of a node's fence data, direct modexes of one
    /// rank's.
    fetches: u64,
    dmodex: u64,
}

impl Peers {
    /// Send `m` to node `j`; false when its connection is gone.
    fn send(&mut self, j: usize, m: &Msg) -> bool {
        let Some(Some(s)) = self.to.get_mut(j) else {
            return false;
        };
        let frame = m.encode();
        if s.write_all(&frame).is_err() {
            self.to[j] = None;
            return false;
        }
        self.frames += 1;
        self.bytes += frame.len() as u64;
        match m {
            Msg::NodeData { .. } => self.fetches += 1,
            Msg::Dmodex { .. } => self.dmodex += 1,
            _ => {}
        }
        true
    }
    fn broadcast(&mut self, m: &Msg) {
        for j in 0..self.to.len() {
            self.send(j, m);
        }
    }
}

/// With `PMIXW_TRAFFIC` set, what this node exchanged beyond itself, on
/// one line of stderr at the end of a job that succeeded (the
/// wireup_slurm bench sums the nodes' lines; spec-notes/bench.md):
/// `data`: the bytes of this node's fence contributions (our blobs);
/// `put`, `fence`, `get`: PMI-2 requests to the node's slurmstepd (a put's
/// value and the fence go to the other nodes through Slurm; a get is
/// answered from the node's copy of the KVS, so `get_bytes`, the bytes of
/// the answers, is what came from the other nodes) and `put_bytes` (the
/// requests' bytes); `*_us`: the time spent waiting for their answers (the
/// fence's includes waiting for the slowest node); `bridge_*`: frames and
/// bytes written to the other nodes over the bridge (the fence data other
/// nodes fetched from this one among them), and of those frames `fetch`,
/// the fetches of another node's fence data, and `dmodex`, the direct
/// modexes of one rank's; `cpu_us`: this
/// `pmixw run`'s own CPU (user + system, all its threads; not its ranks');
/// `server_gets`, `server_blobs`: the GETs for ranks' data this node's
/// server answered, and the ranks' byte objects their replies carried
/// (`Server::get_counts`: the targets' and the bulk's).
fn report_traffic(me: usize, pmi: &Traffic, data: u64, peers: &Peers, gets: GetCounts) {
    if std::env::var_os("PMIXW_TRAFFIC").is_none() {
        return;
    }
    let (put, fence, get) = (pmi.of("kvs-put"), pmi.of("kvs-fence"), pmi.of("kvs-get"));
    eprintln!(
        "pmixw-traffic node={me} data={data} put={} put_bytes={} fence={} get={} \
         get_bytes={} bridge_frames={} bridge_bytes={} fetch={} dmodex={} put_us={} \
         fence_us={} get_us={} cpu_us={} server_gets={} server_blobs={}",
        put.requests,
        put.sent,
        fence.requests,
        get.requests,
        get.received,
        peers.frames,
        peers.bytes,
        peers.fetches,
        peers.dmodex,
        put.waited.as_micros(),
        fence.waited.as_micros(),
        get.waited.as_micros(),
        self_cpu_us(),
        gets.requests,
        gets.blobs
    );
}

/// This process's CPU so far (user + system, every thread), in µs.
fn self_cpu_us() -> u64 {
    // SAFETY: getrusage on a zeroed local struct
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
        us(ru.ru_utime) + us(ru.ru_stime)
    }
}

/// This node's PMI-2 task, ready for a job of `n` ranks: the connection,
/// this node's index and the node count, the fence time limit (the job's
/// `timeout`, else `PMIXW_PMI2_FENCE_TIMEOUT`, else a day) and the PMI-2
/// job id. Refused: fewer ranks than nodes (a node without ranks could not
/// take part in the fences), or several tasks on one node (each would
/// claim the whole node).
pub(super) fn connect(
    n: u32,
    timeout: Option<Duration>,
) -> Result<(Conn, usize, usize, Duration, String), String> {
    let limit = secs_var("PMIXW_PMI2_TIMEOUT").unwrap_or(DEFAULT_PMI2_TIMEOUT);
    let fence_limit = timeout
        .or_else(|| secs_var("PMIXW_PMI2_FENCE_TIMEOUT"))
        .unwrap_or(DEFAULT_FENCE_TIMEOUT);
    let mut pmi = Conn::from_env(limit).map_err(pmi_err)?;
    let (me, nodes) = (pmi.rank as usize, pmi.size as usize);
    if (n as usize) < nodes {
        return Err(format!(
            "pmixw run: -n {n} is fewer ranks than the {nodes} nodes of this PMI-2 job"
        ));
    }
    if let Some(m) = pmi.job_attr("PMI_process_mapping").map_err(pmi_err)? {
        match pmi2::parse_mapping(&m, nodes) {
            Some(v) if v.len() == nodes => {
                let mut sorted = v.clone();
                sorted.dedup();
                if sorted.len() != v.len() {
                    return Err(format!(
                        "pmixw run: PMI_process_mapping {m}: several pmixw run on one node; \
                         start one per node (srun --ntasks-per-node=1)"
                    ));
                }
            }
            _ => {
                return Err(format!(
                    "pmixw run: PMI_process_mapping {m:?} does not parse"
                ))
            }
        }
    }
    let jobid = match pmi.call(&Request::JobGetId).map_err(pmi_err)? {
        Response::JobId(j) => j,
        other => return Err(format!("pmixw run: job-getid answered {other:?}")),
    };
    Ok((pmi, me, nodes, fence_limit, jobid))
}

/// The boot exchange through PMI-2 (every node's name and bridge address,
/// node 0's token), then the bridge: a listener thread for the other
/// nodes' connections and one connection to each of them. The node names
/// in node order and the bridge's connections.
fn boot(
    pmi: &mut Conn,
    me: usize,
    nodes: usize,
    name: &str,
    listener: TcpListener,
    ev_tx: &EvTx,
    limit: Duration,
) -> Result<(Vec<String>, Peers), String> {
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let host = std::env::var("PMIXW_BRIDGE_HOST").unwrap_or_else(|_| net::hostname());
    pmi.put(
        &format!("pmixw.boot.{me}"),
        &format!("{name},{host}:{port}"),
    )
    .map_err(pmi_err)?;
    if me == 0 {
        pmi.put("pmixw.token", &random_token()).map_err(pmi_err)?;
    }
    pmi.fence().map_err(pmi_err)?;
    let token = pmi
        .get("pmixw.token")
        .map_err(pmi_err)?
        .ok_or("pmixw run: node 0 published no token")?;
    let mut names = Vec::new();
    let mut addrs = Vec::new();
    for j in 0..nodes {
        let v = pmi
            .get(&format!("pmixw.boot.{j}"))
            .map_err(pmi_err)?
            .ok_or_else(|| format!("pmixw run: node {j} published no address"))?;
        let (n, a) = v
            .split_once(',')
            .ok_or_else(|| format!("pmixw run: node {j}: {v:?}"))?;
        names.push(n.to_string());
        addrs.push(a.to_string());
    }
    {
        let (tx, token) = (ev_tx.clone(), token.clone());
        // (for the process's lifetime: a stray connection must not take
        // the place of a node's)
        std::thread::spawn(move || {
            for s in listener.incoming().flatten() {
                let (tx, token) = (tx.clone(), token.clone());
                std::thread::spawn(move || read_peer(s, token, tx));
            }
        });
    }
    let mut peers = Peers::default();
    for (j, a) in addrs.iter().enumerate() {
        if j == me {
            peers.to.push(None);
            continue;
        }
        let Some(s) = a
            .to_socket_addrs()
            .ok()
            .into_iter()
            .flatten()
            .find_map(|sa| {
                TcpStream::connect_timeout(&sa, limit.min(Duration::from_secs(30))).ok()
            })
        else {
            // a node that already ended the job (a rank dead at once) is
            // gone before this one reached it: its own connection says
            // why; the main loop judges (Bridge::unreachable)
            eprintln!("pmixw run: cannot reach node {j} ({}) at {a}", names[j]);
            peers.to.push(None);
            let _ = ev_tx.send(Ev::Unreachable(j));
            continue;
        };
        let _ = s.set_nodelay(true);
        // a node that stops reading cannot stall this one for longer
        let _ = s.set_write_timeout(Some(limit));
        // it never writes here: the connection ending is the node's end
        if let Ok(mut r) = s.try_clone() {
            let tx = ev_tx.clone();
            std::thread::spawn(move || {
                let mut b = [0u8; 64];
                while matches!(r.read(&mut b), Ok(n) if n > 0) {}
                let _ = tx.send(Ev::Unreachable(j));
            });
        }
        peers.to.push(Some(s));
        peers.send(
            j,
            &Msg::Hello {
                token: token.clone(),
                node: me as u32,
            },
        );
    }
    Ok((names, peers))
}

pub fn run(job: &Job) -> Result<ExitCode, String> {
    let app = job.app();
    let n = app.n;
    let caught = host::catch_signals();
    let forward = super::procgroup::forward_signals();
    let limit = secs_var("PMIXW_PMI2_TIMEOUT").unwrap_or(DEFAULT_PMI2_TIMEOUT);
    let (mut pmi, me, nodes, fence_limit, jobid) = connect(n, job.timeout)?;
    let nspace = format!("pmixw-{jobid}");
    let name = std::env::var("SLURMD_NODENAME").unwrap_or_else(|_| net::hostname());
    // the bridge listens on every address; peers reach it by host name
    let listener = TcpListener::bind("0.0.0.0:0").map_err(|e| format!("pmixw run: bridge: {e}"))?;
    let place = placement(n, nodes as u32, job.cyclic);
    let mut node_of = vec![0usize; n as usize];
    for (j, ranks) in place.iter().enumerate() {
        for r in ranks {
            node_of[*r as usize] = j;
        }
    }
    // each node's own store: its ranks' data, and the other nodes' ranks'
    // data as the fences bring it
    let mut wake =
        Wake::new().map_err(|e| format!("pmixw run: cannot make the loop's wake: {e}"))?;
    let server = start_server(&nspace, n, name.clone(), job.dstore, &wake.waker())
        .map_err(|e| format!("pmixw run: cannot start the server: {e}"))?;
    // the ranks start now and initialize while this node hears from the
    // others (the boot exchange, on a thread of its own: a PMI-2 fence,
    // ~10 ms of which is Slurm's, spec-notes/pmi2.md); their job data
    // waits for the nodes' names (Server::await_nodes)
    {
        let ns = nspace.clone();
        server.call(move |s| s.await_nodes(&ns));
    }
    let (tx, ev_rx) = channel();
    let ev_tx = EvTx {
        tx,
        wake: wake.waker(),
    };
    let booting = {
        let (tx, name) = (ev_tx.clone(), name.clone());
        std::thread::spawn(move || {
            let r = boot(&mut pmi, me, nodes, &name, listener, &tx, limit);
            (pmi, r)
        })
    };
    let mut ranks = Ranks(Vec::new());
    // why the job ends, if it does before the loop: a rank that cannot start
    let mut reason = None;
    {
        let mut start = PmixStart::new(&server, job.dialect);
        // the ranks are PMIx clients of our server, not PMI-2 tasks
        start.pmi2_task = true;
        for &r in &place[me] {
            if let Err(e) = host::start_rank(&mut start, &mut ranks, &nspace, n, r, &app.launch()) {
                reason = Some((127, e, true));
                break;
            }
        }
    }
    let booted = booting
        .join()
        .map_err(|_| "pmixw run: the boot exchange failed".to_string());
    let (pmi, (names, peers)) = match booted.and_then(|(pmi, r)| Ok((pmi, r?))) {
        Ok(b) => b,
        Err(e) => {
            drop(ranks);
            server.stop();
            return Err(e);
        }
    };
    let map = NodeMap {
        nodes: names.iter().cloned().zip(place.iter().cloned()).collect(),
        me,
    };
    {
        let ns = nspace.clone();
        server.call(move |s| s.set_nodes(&ns, map));
    }
    let (work_tx, work_rx) = channel();
    {
        let tx = ev_tx.clone();
        std::thread::spawn(move || pmi_thread(pmi, fence_limit, work_rx, tx));
    }
    drop(ev_tx);

    // a job across nodes ends on every node at once (no --keep-going);
    // its ranks get the job's grace, as on one node
    let mut ending = Ending::new(job.grace, false, job.timeout);
    let mut wire = Bridge {
        server,
        nspace,
        me,
        name,
        names,
        node_of,
        peers,
        events: ev_rx,
        work: work_tx,
        heard: vec![false; nodes],
        done: (0..nodes).map(|j| j == me).collect(),
        held: Vec::new(),
        fence_seq: 0,
        mine: Vec::new(),
        contributed: 0,
        collected: 0,
        fetch: (0..nodes).map(|_| Fetch::default()).collect(),
        next_fetch: 1,
        dstore: job.dstore,
        eager: None,
        limit,
        timeout: job.timeout,
        stats: job.stats,
        caught: caught.clone(),
        reason: None,
        fences: Vec::new(),
        asked: Vec::new(),
        failing: None,
        told: false,
        said: false,
        unreachable: Vec::new(),
        idle: false,
    };
    if let Some((code, why, tell)) = reason {
        wire.end(
            &mut ending,
            code,
            why,
            tell,
            codes::PMIX_ERR_LOST_CONNECTION,
        );
    }
    let code = host::drive(&mut wire, &mut wake, ranks, ending, &caught, &forward);
    wire.server.stop();
    Ok(code)
}

/// A fence that completes once every node's contribution is here
/// (`--dstore`): its request, and per node the fetch of its contribution
/// (id) and the contribution once come.
struct Eager {
    request: u64,
    parts: Vec<(u64, Option<bytes::Bytes>)>,
}

/// What of a node's fence data is here.
#[derive(Default)]
struct Fetch {
    /// Its contributions up to this fence are here (absorbed).
    have: u64,
    /// A fetch under way: its id and the last fence it asked for.
    asked: Option<(u64, u64)>,
    /// The direct modexes (request, rank) waiting for it.
    waiting: Vec<(u64, u32)>,
}

/// This node's share of a job across nodes, as the host loop sees it.
struct Bridge {
    server: net::Running,
    nspace: String,
    /// This node's index and name, and every node's.
    me: usize,
    name: String,
    names: Vec<String>,
    /// The node of each rank.
    node_of: Vec<usize>,
    peers: Peers,
    events: Receiver<Ev>,
    /// To the PMI-2 thread.
    work: Sender<Work>,
    /// Nodes whose own connection to us is open (they report their end on it).
    heard: Vec<bool>,
    /// Nodes whose ranks have all ended well.
    done: Vec<bool>,
    /// Direct-modex requests of other nodes for ranks not yet committed.
    held: Vec<(usize, u64, u32)>,
    /// PMIx fences upcalled so far (every node numbers them alike: each
    /// is one step-wide PMI-2 fence).
    fence_seq: u64,
    /// This node's contributions to the fences that collected data, by
    /// sequence number, for the nodes that fetch them.
    mine: Vec<(u64, bytes::Bytes)>,
    /// Their bytes in all (the traffic report's `data`).
    contributed: u64,
    /// The last fence that collected data and completed here (0: none).
    collected: u64,
    /// Per node, what of its fence data is here or asked for.
    fetch: Vec<Fetch>,
    /// The id of the next fetch.
    next_fetch: u64,
    /// `--dstore`: the ranks read their peers' data from the node's store,
    /// without asking the server, so a fence that collects data completes
    /// only once every node's contribution is here (fetched from them all
    /// at once).
    dstore: bool,
    /// Such a fence, while its contributions come.
    eager: Option<Eager>,
    /// How long a PMI-2 answer may take.
    limit: Duration,
    timeout: Option<Duration>,
    /// `--stats`: this node's `server_rss` at the end of a job that succeeded.
    stats: bool,
    /// The signals the launcher catches (a node done waiting for the
    /// others stops at one).
    caught: Vec<(i32, std::sync::Arc<std::sync::atomic::AtomicBool>)>,
    /// Why the job ends (its status, the message, whether the other
    /// nodes are to be told), once it does.
    reason: Option<(i32, String, bool)>,
    /// This node's fences waiting for PMI-2, and its direct-modex requests
    /// waiting for another node (the node, the request).
    fences: Vec<u64>,
    asked: Vec<(usize, u64)>,
    /// Once the job ends: the error every waiting and later fence and
    /// direct-modex request of this node's ranks fails with.
    failing: Option<i32>,
    /// Whether the other nodes were told of the end, and the line saying
    /// why it ends was printed.
    told: bool,
    said: bool,
    /// Nodes this one cannot reach, not heard from yet, and until when
    /// their own connection may still say its Hello.
    unreachable: Vec<(usize, Instant)>,
    /// Whether the last round had nothing to do.
    idle: bool,
}

impl Bridge {
    /// The job ends with `code` for `why`, unless it already was ending;
    /// the ranks' waiting requests fail with `err`.
    fn end(&mut self, ending: &mut Ending, code: i32, why: String, tell: bool, err: i32) {
        if ending.ended(code).is_some() {
            self.ends(code, why, tell, err);
        }
    }

    /// The job ends now with `code` for `why`: the other nodes are told
    /// (when `tell`) at once, not once this node's ranks are gone; every
    /// fence and direct-modex request of this node's ranks still waiting
    /// fails with `err`, and so does every later one, so that a rank
    /// blocked in one gets an error and can end within the grace.
    fn ends(&mut self, code: i32, why: String, tell: bool, err: i32) {
        // said now: a task killed by a signal makes srun end the whole
        // step, the other nodes' `pmixw run` with it, soon after
        self.say(code, &why);
        if tell && !self.told {
            self.told = true;
            self.peers.broadcast(&Msg::End {
                status: code,
                message: why.clone(),
            });
        }
        self.reason = Some((code, why, tell));
        self.failing = Some(err);
        for request in std::mem::take(&mut self.fences) {
            self.server.call(move |s| s.fence_done(request, err, &[]));
        }
        for (_, request) in std::mem::take(&mut self.asked) {
            self.server.call(move |s| s.dmodex_done(request, Err(err)));
        }
        // those waiting for a node's fence data, and a fence waiting for
        // every node's (in `fences`, failed above)
        self.eager = None;
        for f in &mut self.fetch {
            f.asked = None;
            for (request, _) in std::mem::take(&mut f.waiting) {
                self.server.call(move |s| s.dmodex_done(request, Err(err)));
            }
        }
    }

    /// The line that says why the job ends.
    fn say(&mut self, status: i32, why: &str) {
        self.said = true;
        let (me, name) = (self.me, &self.name);
        eprintln!("pmixw run (node {me}, {name}): the job ends with status {status}: {why}");
    }

    /// Rank `rank` aborted asking `status`: the job ends with it (0 is 1).
    fn aborted(&mut self, ending: &mut Ending, rank: u32, status: i32, message: String) {
        if let Some(st) = ending.aborted(rank, status, &message) {
            let m = format!("rank {rank} aborted with status {status}: {message}");
            self.ends(st, m, true, codes::PMIX_ERR_PROC_ABORTED);
        }
    }

    /// A direct modex for `rank` of node `j`: if a fence collected data
    /// that is not here yet, that node's contributions, fetched once for
    /// every request waiting for them; else (no fence collected data, or
    /// it did not hold what is asked) the rank's data as its node holds it
    /// now. False when node `j` cannot be reached (the caller answers the
    /// request); a request sent is kept in `asked`, one waiting for a
    /// fetch in the node's `waiting`, so that the end of the job fails it.
    fn route(&mut self, j: usize, request: u64, rank: u32) -> bool {
        let Some(f) = self.fetch.get_mut(j) else {
            return false;
        };
        if f.asked.is_some() || f.have < self.collected {
            f.waiting.push((request, rank));
            if f.asked.is_none() {
                let id = self.next_fetch;
                self.next_fetch += 1;
                f.asked = Some((id, self.collected));
                let m = Msg::NodeData {
                    request: id,
                    from: f.have + 1,
                    to: self.collected,
                };
                if !self.peers.send(j, &m) {
                    let f = &mut self.fetch[j];
                    f.asked = None;
                    f.waiting.pop();
                    return false;
                }
            }
            return true;
        }
        if f.have > 0 {
            // raised before that node's data came, seen after: the data
            // may have answered its GETs already
            let open = self
                .server
                .call(move |s: &mut Server| s.dmodex_node(&[], &[request]))
                .unwrap_or_default();
            if open.is_empty() {
                return true;
            }
        }
        let sent = self.peers.send(
            j,
            &Msg::Dmodex {
                request,
                nspace: self.nspace.clone(),
                rank,
            },
        );
        if sent {
            self.asked.push((j, request));
        }
        sent
    }

    /// A fence that collected data completed here (PMI-2): with a store
    /// its ranks read directly, it waits for every node's contribution to
    /// it, fetched from each at once; else it completes now, the other
    /// nodes' contributions left with them until a GET wants one
    /// ([`Bridge::route`]).
    fn fence_collected(&mut self, request: u64, seq: u64) {
        if self.failing.is_some() {
            // failed already (`ends`)
            return;
        }
        self.collected = seq;
        if self.dstore && self.fetch.len() > 1 {
            let mut parts = Vec::new();
            for j in 0..self.fetch.len() {
                if j == self.me {
                    parts.push((0, Some(bytes::Bytes::new())));
                    continue;
                }
                let id = self.next_fetch;
                self.next_fetch += 1;
                let m = Msg::NodeData {
                    request: id,
                    from: seq,
                    to: seq,
                };
                let _ = self.peers.send(j, &m);
                parts.push((id, None));
            }
            self.eager = Some(Eager { request, parts });
            return;
        }
        self.fences.retain(|q| *q != request);
        let ns = self.nspace.clone();
        self.server.call(move |s| {
            s.data_at_host(&ns);
            s.fence_done(request, codes::PMIX_SUCCESS, &[])
        });
    }

    /// Node `j`'s fence data come, for fetch `id`: for a fence waiting for
    /// every node's, kept until all are here, then the fence completes
    /// with them; else absorbed, the direct modexes it satisfies answered,
    /// the others routed again.
    fn fetched(&mut self, j: usize, id: u64, blob: bytes::Bytes) {
        if let Some(Eager { request, parts }) = &mut self.eager {
            if let Some(p) = parts.get_mut(j).filter(|p| p.0 == id && p.1.is_none()) {
                p.1 = Some(blob);
                if parts.iter().all(|p| p.1.is_some()) {
                    let all: Vec<u8> = parts
                        .iter()
                        .flat_map(|p| p.1.iter().flat_map(|b| b.iter().copied()))
                        .collect();
                    let request = *request;
                    self.eager = None;
                    self.fences.retain(|q| *q != request);
                    for f in &mut self.fetch {
                        f.have = f.have.max(self.collected);
                    }
                    self.server
                        .call(move |s| s.fence_done(request, codes::PMIX_SUCCESS, &all));
                }
                return;
            }
        }
        let Some(f) = self.fetch.get_mut(j) else {
            return;
        };
        let Some((_, to)) = f.asked.filter(|(a, _)| *a == id) else {
            return;
        };
        f.have = f.have.max(to);
        f.asked = None;
        let waiting = std::mem::take(&mut f.waiting);
        let ids: Vec<u64> = waiting.iter().map(|(r, _)| *r).collect();
        let open = self
            .server
            .call(move |s: &mut Server| s.dmodex_node(&blob, &ids))
            .unwrap_or_default();
        for (request, rank) in waiting {
            if open.contains(&request) && !self.route(j, request, rank) {
                self.server
                    .call(move |s| s.dmodex_done(request, Err(codes::PMIX_ERR_UNREACH)));
            }
        }
    }

    /// This node's contributions to fences `from..=to`, concatenated.
    fn contributions(&self, from: u64, to: u64) -> bytes::Bytes {
        let parts: Vec<&bytes::Bytes> = self
            .mine
            .iter()
            .filter(|(s, _)| (from..=to).contains(s))
            .map(|(_, b)| b)
            .collect();
        match parts.as_slice() {
            [] => bytes::Bytes::new(),
            [one] => (*one).clone(),
            more => more
                .iter()
                .flat_map(|b| b.iter().copied())
                .collect::<Vec<u8>>()
                .into(),
        }
    }

    /// A request of node `j` answered from here: its fence data, or a
    /// rank's data (held until the rank commits, if it has not).
    fn answer_peer(&mut self, j: usize, m: Msg) {
        match m {
            Msg::NodeData { request, from, to } => {
                let blob = self.contributions(from, to);
                let _ = self.peers.send(j, &Msg::NodeDataReply { request, blob });
            }
            Msg::Dmodex { request, rank, .. } => match self.answer(rank) {
                Some(blob) => {
                    let _ = self.peers.send(
                        j,
                        &Msg::DmodexReply {
                            request,
                            status: 0,
                            blob,
                        },
                    );
                }
                None => self.held.push((j, request, rank)),
            },
            _ => {}
        }
    }

    /// This node's ranks are all done: it stays, answering the other
    /// nodes' requests (their ranks may still read this node's fence data
    /// or ranks), until every node connected to it (the only ones that can
    /// ask) is done too, or gone, or the job ends elsewhere, or a signal
    /// comes.
    fn await_others(&mut self) {
        use std::sync::atomic::Ordering;
        let deadline = Instant::now() + self.timeout.unwrap_or(DEFAULT_FENCE_TIMEOUT);
        let mut gone = self.done.clone();
        let asking = |heard: &[bool], gone: &[bool]| heard.iter().zip(gone).any(|(h, g)| *h && !*g);
        loop {
            if self.caught.iter().any(|(_, f)| f.load(Ordering::Relaxed)) {
                return;
            }
            use std::sync::mpsc::{RecvTimeoutError, TryRecvError};
            // what has come first (a Hello, a Done), then the check
            let e = match self.events.try_recv() {
                Ok(e) => e,
                Err(TryRecvError::Disconnected) => return,
                Err(TryRecvError::Empty) => {
                    if !asking(&self.heard, &gone) || Instant::now() >= deadline {
                        return;
                    }
                    match self.events.recv_timeout(Duration::from_millis(50)) {
                        Ok(e) => e,
                        Err(RecvTimeoutError::Timeout) => continue,
                        Err(RecvTimeoutError::Disconnected) => return,
                    }
                }
            };
            match e {
                Ev::Peer(j, m @ (Msg::NodeData { .. } | Msg::Dmodex { .. })) => {
                    self.answer_peer(j, m)
                }
                Ev::Peer(j, Msg::Done) | Ev::PeerGone(j) => {
                    if let Some(g) = gone.get_mut(j) {
                        *g = true;
                    }
                }
                Ev::Peer(_, Msg::End { .. }) => return,
                Ev::Unreachable(j) if !self.heard.get(j).copied().unwrap_or(true) => {
                    if let Some(g) = gone.get_mut(j) {
                        *g = true;
                    }
                }
                Ev::Peer(j, Msg::Hello { .. }) => {
                    if let Some(h) = self.heard.get_mut(j) {
                        *h = true;
                    }
                }
                _ => {}
            }
        }
    }

    /// Rank `r`'s committed data, if it has any yet.
    fn answer(&self, r: u32) -> Option<bytes::Bytes> {
        let ns = self.nspace.clone();
        self.server
            .call(move |s: &mut Server| s.modex_data(&ns, r))
            .flatten()
    }

    fn serve_host(&mut self, e: HostEvent, ranks: &mut Ranks, ending: &mut Ending) {
        match e {
            HostEvent::Fence {
                request,
                collect,
                data,
                ..
            } => match self.failing {
                Some(err) => {
                    self.server.call(move |s| s.fence_done(request, err, &[]));
                }
                None => {
                    self.fence_seq += 1;
                    let seq = self.fence_seq;
                    if collect {
                        self.contributed += data.len() as u64;
                        if !data.is_empty() {
                            self.mine.push((seq, data));
                        }
                    }
                    self.fences.push(request);
                    let _ = self.work.send(Work::Fence {
                        request,
                        seq,
                        collect,
                    });
                }
            },
            HostEvent::DirectModex { request, proc } => {
                let owner = (proc.nspace.to_string() == self.nspace)
                    .then(|| self.node_of.get(proc.rank as usize).copied())
                    .flatten()
                    .filter(|j| *j != self.me);
                let result = match (owner, self.failing) {
                    (None, _) => Err(codes::PMIX_ERR_NOT_FOUND),
                    // the job is ending
                    (Some(_), Some(err)) => Err(err),
                    (Some(j), None) if self.route(j, request, proc.rank) => return,
                    (Some(_), None) => Err(codes::PMIX_ERR_UNREACH),
                };
                self.server.call(move |s| s.dmodex_done(request, result));
            }
            HostEvent::Committed(p) => {
                let (now, later): (Vec<_>, Vec<_>) =
                    self.held.drain(..).partition(|(_, _, r)| *r == p.rank);
                self.held = later;
                for (j, request, r) in now {
                    if let Some(blob) = self.answer(r) {
                        let _ = self.peers.send(
                            j,
                            &Msg::DmodexReply {
                                request,
                                status: 0,
                                blob,
                            },
                        );
                    }
                }
            }
            HostEvent::Notified {
                code,
                source,
                range,
                info,
            } => self.peers.broadcast(&Msg::Notify {
                code,
                source,
                range,
                info,
            }),
            HostEvent::Aborted {
                proc,
                status,
                message,
            } => self.aborted(ending, proc.rank, status, message.unwrap_or_default()),
            HostEvent::Log { data, .. } => host::print_log(&data),
            HostEvent::Spawn { request, .. } => {
                self.server
                    .call(move |s| s.spawned(request, Err(codes::PMIX_ERR_NOT_SUPPORTED)));
            }
            HostEvent::Lost(p) => ending.lost(&p.nspace.to_string(), p.rank),
            e @ (HostEvent::Kill { .. } | HostEvent::Signal { .. }) => ranks.control(&e),
            _ => {}
        }
    }

    fn serve_bridge(&mut self, e: Ev, ending: &mut Ending) {
        match e {
            Ev::Peer(j, m @ (Msg::Dmodex { .. } | Msg::NodeData { .. })) => self.answer_peer(j, m),
            Ev::Peer(j, Msg::NodeDataReply { request, blob }) => self.fetched(j, request, blob),
            Ev::Peer(
                _,
                Msg::DmodexReply {
                    request,
                    status,
                    blob,
                },
            ) => {
                self.asked.retain(|(_, q)| *q != request);
                let r = if status == 0 { Ok(blob) } else { Err(status) };
                self.server.call(move |s| s.dmodex_done(request, r));
            }
            Ev::Peer(
                _,
                Msg::Notify {
                    code,
                    source,
                    range,
                    info,
                },
            ) => {
                self.server
                    .call(move |s| s.notify(code, &source, range.into(), info));
            }
            Ev::Peer(j, Msg::End { status, message }) => {
                let why = format!("node {j} ({}): {message}", self.names[j]);
                self.end(ending, status, why, false, codes::PMIX_ERR_LOST_CONNECTION);
            }
            Ev::Peer(j, Msg::Done) => self.done[j] = true,
            Ev::Peer(j, Msg::Hello { .. }) => self.heard[j] = true,
            // judged a moment later: the node's own connection, which
            // reports its end, may not have said its Hello yet
            Ev::Unreachable(j) if !self.heard[j] && !self.done[j] => {
                self.unreachable
                    .push((j, Instant::now() + UNREACHABLE_WAIT));
            }
            Ev::PeerGone(j) if !self.done[j] => {
                let why = format!("lost node {j} ({})", self.names[j]);
                self.end(ending, 1, why, true, codes::PMIX_ERR_UNREACH);
            }
            Ev::FenceDone(request, seq, true, Ok(())) => self.fence_collected(request, seq),
            Ev::FenceDone(request, _, false, Ok(())) => {
                self.fences.retain(|q| *q != request);
                self.server
                    .call(move |s| s.fence_done(request, codes::PMIX_SUCCESS, &[]));
            }
            Ev::FenceDone(request, _, _, Err(m)) => {
                self.fences.retain(|q| *q != request);
                self.server
                    .call(move |s| s.fence_done(request, codes::PMIX_ERROR, &[]));
                self.end(ending, 1, m, true, codes::PMIX_ERROR);
            }
            Ev::Unreachable(_) | Ev::PeerGone(_) | Ev::Finalized(..) => {}
        }
    }
}

impl host::Wire for Bridge {
    fn poll(&mut self, wake: &Wake, max: Duration) {
        // a round that served something looks again at once (serving may
        // have queued more); else until woken, a node's wait for its
        // Hello (`unreachable`) or the loop's deadline
        if self.idle {
            let now = Instant::now();
            let max = self
                .unreachable
                .iter()
                .map(|(_, at)| at.saturating_duration_since(now))
                .fold(max, Duration::min);
            wake.wait(max);
        }
    }

    fn serve(&mut self, ranks: &mut Ranks, ending: &mut Ending) {
        self.idle = true;
        while let Ok(e) = self.server.events.try_recv() {
            self.idle = false;
            self.serve_host(e, ranks, ending);
        }
        while let Ok(e) = self.events.try_recv() {
            self.idle = false;
            self.serve_bridge(e, ending);
        }
        let now = Instant::now();
        let (due, later) = std::mem::take(&mut self.unreachable)
            .into_iter()
            .partition(|(_, at)| *at <= now);
        self.unreachable = later;
        for (j, _) in due {
            if !self.heard[j] && !self.done[j] {
                let why = format!("lost node {j} ({})", self.names[j]);
                self.end(ending, 1, why, true, codes::PMIX_ERR_UNREACH);
            }
        }
    }

    fn failed(&mut self, _ns: &str, rank: u32, st: std::process::ExitStatus, code: i32) {
        use std::os::unix::process::ExitStatusExt;
        let why = match st.signal() {
            Some(sig) => format!("rank {rank} was killed by signal {sig}"),
            None => format!("rank {rank} exited with status {code}"),
        };
        self.ends(code, why, true, codes::PMIX_ERR_LOST_CONNECTION);
    }

    fn finish(&mut self, o: Outcome) -> ExitCode {
        let (status, message, tell) = match (self.reason.take(), o) {
            (Some(r), _) => r,
            (None, Outcome::Done(0)) => {
                // every local rank exited 0
                self.peers.broadcast(&Msg::Done);
                self.await_others();
                let _ = self.work.send(Work::Finalize);
                let deadline = Instant::now() + self.limit.min(Duration::from_secs(10));
                while Instant::now() < deadline {
                    match self.events.recv_timeout(Duration::from_millis(50)) {
                        Ok(Ev::Finalized(traffic)) => {
                            let gets = if std::env::var_os("PMIXW_TRAFFIC").is_some() {
                                self.server.call(|s| s.get_counts()).unwrap_or_default()
                            } else {
                                Default::default()
                            };
                            report_traffic(self.me, &traffic, self.contributed, &self.peers, gets);
                            break;
                        }
                        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
                        _ => {}
                    }
                }
                if self.stats {
                    print_server_rss(&self.server);
                }
                return ExitCode::SUCCESS;
            }
            (None, Outcome::Timeout) => (
                124,
                format!("timeout after {:?}", self.timeout.unwrap_or_default()),
                true,
            ),
            (None, Outcome::Signal(sig)) => (128 + sig, format!("signal {sig}"), true),
            (None, Outcome::Done(code)) => (code, String::new(), true),
        };
        if !self.said {
            self.say(status, &message);
        }
        if tell && !self.told {
            self.peers.broadcast(&Msg::End {
                status,
                message: message.clone(),
            });
        }
        ExitCode::from(status.clamp(1, 255) as u8)
    }
}

#[cfg(test)]
mod tests {
    use super::placement;

    #[test]
    fn block_and_cyclic() {
        assert_eq!(placement(4, 2, false), [vec![0, 1], vec![2, 3]]);
        assert_eq!(placement(5, 2, false), [vec![0, 1, 2], vec![3, 4]]);
        assert_eq!(placement(4, 2, true), [vec![0, 2], vec![1, 3]]);
        assert_eq!(placement(1, 2, false), [vec![0], vec![]]);
        assert_eq!(placement(3, 1, true), [vec![0, 1, 2]]);
    }
}
