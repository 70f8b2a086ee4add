//! The bulk GET reply in memory (core tier): what a connection's GET
//! replies bring besides their target's data, GET by GET
//! (src/server/modex.rs, `Server::bulk`; spec-notes/server.md). A rank
//! reading a few peers is sent those alone; a rank reading every peer, as
//! libpmix's hash gds does (it stores every byte object of a reply under
//! its proc and asks only for peers it does not hold), is sent them in
//! replies that double what it holds, up to a cap, on one node and across
//! nodes. Every test drives `pmix_wire::server::Server` directly.

use pmix_codec::msg::Request;
use pmix_test_kit::hostile::request_frame as request;
use pmix_test_kit::pair::{drain, scoped_commit};
use pmix_types::{Info, Value};
use pmix_wire::server::{
    GetCounts, HostEvent, JobSpec, NodeMap, Server, BULK_ACROSS_PEERS, BULK_AFTER, BULK_PEERS,
    SWEEP_AFTER,
};
use std::collections::BTreeSet;
use std::time::Instant;

fn hello(ns: &str, rank: u32) -> Vec<u8> {
    pmix_test_kit::hostile::connect_frame(ns, rank, vec![0; 8])
}

fn mem_job(ns: &str, n: u32, host: &str) -> Server {
    let mut s = Server::new();
    s.register_nspace(JobSpec {
        nspace: ns.into(),
        nprocs: n,
        hostname: host.into(),
        info: vec![],
    });
    s
}

fn get(ns: &str, r: u32, key: &str) -> Request {
    Request::Get {
        nspace: Some(ns.into()),
        rank: r,
        info: vec![],
        key: Some(Some(key.into())),
    }
}

/// The ranks a GET reply's byte objects are of (each one's PROC), in
/// order, and each one's text.
fn ranks_of(blobs: &[bytes::Bytes]) -> Vec<(u32, String)> {
    blobs
        .iter()
        .map(|b| {
            let mut d = pmix_codec::DataBuffer::from_bytes(pmix_codec::Format::V41, b.clone());
            let rank = match d.unpack_one(pmix_types::DataType::Proc) {
                Ok(Value::Proc(p)) => p.rank,
                other => panic!("not a PROC: {other:?}"),
            };
            let mut text = String::new();
            while !d.unread().is_empty() {
                text.push_str(&format!("{:?}", d.unpack_one(pmix_types::DataType::Kval)));
            }
            (rank, text)
        })
        .collect()
}

/// One GET of `conn` for rank `r`: the ranks its reply brought, target
/// first, with their keys' text.
fn ask(s: &mut Server, conn: u64, ns: &str, r: u32, key: &str) -> Vec<(u32, String)> {
    s.handle_input(conn, &request(200, &get(ns, r, key)), Instant::now());
    let mut replies = Vec::new();
    for (c, b) in drain(s).sends() {
        if c == conn && b.len() > 16 {
            let fmt = pmix_codec::Format::V41;
            match pmix_codec::msg::Reply::decode(&fmt, 4, &b[16..]).unwrap() {
                pmix_codec::msg::Reply::Get { status: 0, blobs } => replies.push(blobs),
                other => panic!("{other:?}"),
            }
        }
    }
    assert_eq!(replies.len(), 1, "one reply to one GET");
    let got = ranks_of(&replies[0]);
    assert_eq!(got[0].0, r, "the target leads: {got:?}");
    got
}

/// A job `ns` of `n` ranks on this node alone, every one connected and
/// committed: the server and the connections by rank.
fn one_node(ns: &str, n: u32) -> (Server, Vec<u64>) {
    let now = Instant::now();
    let mut s = mem_job(ns, n, "a");
    let ids: Vec<_> = (0..n).map(|_| s.open()).collect();
    for (r, id) in ids.iter().enumerate() {
        s.handle_input(*id, &hello(ns, r as u32), now);
        s.handle_input(*id, &request(101, &scoped_commit(r as u32)), now);
    }
    drain(&mut s);
    (s, ids)
}

/// A job `ns` of `n` ranks across two nodes: rank 0 alone on this one,
/// ranks 1..n on the other, their data here after a fence that collected
/// it (as their server makes it): the server and rank 0's connection.
fn across(ns: &str, n: u32) -> (Server, u64) {
    let now = Instant::now();
    let nodes = NodeMap {
        nodes: vec![("a".into(), vec![0]), ("b".into(), (1..n).collect())],
        me: 0,
    };
    let mut s = mem_job(ns, n, "a");
    s.set_nodes(ns, nodes.clone());
    let me = s.open();
    s.handle_input(me, &hello(ns, 0), now);
    s.handle_input(me, &request(101, &scoped_commit(0)), now);
    let fence = Request::Fence {
        procs: vec![],
        info: vec![Info::new("pmix.collect", Value::Bool(true))],
    };
    s.handle_input(me, &request(102, &fence), now);
    let request_id = drain(&mut s)
        .events
        .iter()
        .find_map(|e| match e {
            HostEvent::Fence { request, .. } => Some(*request),
            _ => None,
        })
        .expect("a fence upcall");
    let mut b = mem_job(ns, n, "b");
    b.set_nodes(ns, NodeMap { me: 1, ..nodes });
    let mut theirs = Vec::new();
    for r in 1..n {
        let id = b.open();
        b.handle_input(id, &hello(ns, r), now);
        b.handle_input(id, &request(101, &scoped_commit(r)), now);
        theirs.extend_from_slice(&b.modex_data(ns, r).unwrap());
    }
    s.fence_done(request_id, 0, &theirs);
    drain(&mut s);
    (s, me)
}

/// What a client with libpmix's hash gds does reading every peer of rank
/// `me` in rank order: a GET for each peer it holds no data of. Returns
/// the sizes of the replies (byte objects), after checking that every
/// peer came exactly once, never `me`, each with `scope`'s key.
fn read_every_peer(
    s: &mut Server,
    conn: u64,
    ns: &str,
    n: u32,
    me: u32,
    scope: &str,
) -> Vec<usize> {
    let mut held = BTreeSet::new();
    let mut sizes = Vec::new();
    for r in (0..n).filter(|r| *r != me) {
        if held.contains(&r) {
            continue;
        }
        let got = ask(s, conn, ns, r, &format!("{scope}.{r}"));
        sizes.push(got.len());
        for (p, text) in got {
            assert_ne!(p, me, "never its own data");
            assert!(held.insert(p), "rank {p} sent twice");
            assert!(text.contains(&format!("{scope}.{p}")), "{p}: {text}");
        }
    }
    assert_eq!(held.len() as u32, n - 1, "every peer");
    sizes
}

/// The sizes of the replies a rank reading every one of `peers` peers
/// in rank order gets under the documented rule, and the cap a reply
/// has: its first GETs bring one rank, until SWEEP_AFTER of them asked for
/// consecutive ranks; that one and each later brings its target and as
/// many more as the rank holds (at least BULK_AFTER), at most `cap`.
fn rule(peers: usize, cap: usize) -> Vec<usize> {
    let (mut held, mut asked, mut sizes) = (0usize, 0u32, Vec::new());
    while held < peers {
        asked += 1;
        let more = if asked < SWEEP_AFTER {
            0
        } else {
            (held + 1)
                .max(BULK_AFTER as usize)
                .min(cap)
                .min(peers - held - 1)
        };
        sizes.push(1 + more);
        held += 1 + more;
    }
    sizes
}

/// A rank reading neighbours as a 2-D nine-point stencil does (rows of
/// three consecutive ranks, and the two beside it) is sent them alone; a
/// rank asking for SWEEP_AFTER consecutive ranks in a row (skipping its
/// own) is sent bulk with the last of them: BULK_AFTER peers after it.
#[test]
fn a_stencils_neighbours_bring_no_bulk_and_a_sweep_of_consecutive_ranks_does() {
    let (n, nx) = (300u32, 10u32);
    let (mut s, ids) = one_node("grid", n);
    let me = 155;
    let stencil = [
        me - nx - 1,
        me - nx,
        me - nx + 1,
        me - 1,
        me + 1,
        me + nx - 1,
        me + nx,
        me + nx + 1,
    ];
    for r in stencil {
        let got = ask(&mut s, ids[me as usize], "grid", r, &format!("local.{r}"));
        assert_eq!(got.len(), 1, "GET for {r}: {got:?}");
    }
    // another rank sweeping from its own rank on: 9, 10, 11, 12 … the
    // SWEEP_AFTER-th brings the next BULK_AFTER ranks
    let me = 8u32;
    for i in 1..SWEEP_AFTER {
        let r = me + i;
        let got = ask(&mut s, ids[me as usize], "grid", r, &format!("local.{r}"));
        assert_eq!(got.len(), 1, "GET for {r}: {got:?}");
    }
    let r = me + SWEEP_AFTER;
    let got = ask(&mut s, ids[me as usize], "grid", r, &format!("local.{r}"));
    let want: Vec<u32> = (r..=r + BULK_AFTER).collect();
    assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), want);
    // a sweep across its own rank: for rank 208, 205, 206, 207 then 209
    let me = 208u32;
    for i in (1..SWEEP_AFTER).rev() {
        let r = me - i;
        let got = ask(&mut s, ids[me as usize], "grid", r, &format!("local.{r}"));
        assert_eq!(got.len(), 1, "GET for {r}: {got:?}");
    }
    let got = ask(&mut s, ids[me as usize], "grid", 209, "local.209");
    assert_eq!(got.len(), 1 + BULK_AFTER as usize, "{got:?}");
}

/// On one node, a connection's first BULK_AFTER GETs for distinct peers
/// bring their target alone; the next brings its target and as many
/// peers as it holds (those after the target, not sent before, what it
/// may see: LOCAL keys, never its own), the one after that twice as many,
/// until BULK_PEERS a reply. A GET for a peer it was sent before brings
/// that peer alone and does not count.
#[test]
fn on_one_node_the_first_gets_bring_their_target_and_later_ones_double_what_it_holds() {
    let n = 400;
    let (mut s, ids) = one_node("one", n);
    let me = ids[0];
    // BULK_AFTER peers spread over the job, as a few-peers reader asks
    let spread: Vec<u32> = (1..=BULK_AFTER).map(|j| j * 3).collect();
    for &r in &spread {
        let got = ask(&mut s, me, "one", r, &format!("local.{r}"));
        assert_eq!(got.len(), 1, "GET for {r}: {got:?}");
    }
    // asking again for one it holds: still its target alone
    assert_eq!(ask(&mut s, me, "one", spread[0], "local.3").len(), 1);
    // the next distinct peer: it holds BULK_AFTER + 1 with this one
    let held = BULK_AFTER as usize + 1;
    let got = ask(&mut s, me, "one", 100, "local.100");
    let want: Vec<u32> = (100..=100 + held as u32).collect();
    assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), want);
    for (r, text) in &got {
        assert!(text.contains(&format!("local.{r}")), "{text}");
        assert!(
            !text.contains("remote."),
            "a LOCAL peer's REMOTE key: {text}"
        );
    }
    // it holds 2·17 now, 35 with the next target: as many more (still
    // under BULK_PEERS), skipping what it holds
    let held = 2 * held + 1;
    assert!(held < BULK_PEERS);
    let got = ask(&mut s, me, "one", 200, "local.200");
    let want: Vec<u32> = (200..=200 + held as u32).collect();
    assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), want);
    // then BULK_PEERS, wrapping past the job's end and skipping rank 0
    // and the peers sent before
    let got = ask(&mut s, me, "one", n - 3, "local.397");
    let sent: BTreeSet<u32> = spread
        .iter()
        .copied()
        .chain(100..=117)
        .chain(200..=235)
        .collect();
    let want: Vec<u32> = std::iter::once(n - 3)
        .chain(
            (n - 2..n)
                .chain(1..n - 3)
                .filter(|r| !sent.contains(r))
                .take(BULK_PEERS),
        )
        .collect();
    assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), want);
    let counts = s.get_counts();
    assert_eq!(counts.requests, BULK_AFTER as u64 + 4);
    assert_eq!(
        counts.blobs,
        BULK_AFTER as u64 + 1 + (18 + 36 + 1 + BULK_PEERS) as u64
    );
}

/// Across nodes, a rank reading a few peers of a large job (as the light
/// rank does: 8 spread over it) is sent those alone, one GET each, where
/// a first reply used to bring up to BULK_ACROSS_PEERS peers.
#[test]
fn across_nodes_a_rank_reading_a_few_peers_is_sent_those_alone() {
    let n = 2049;
    let (mut s, me) = across("few", n);
    for j in 0..8 {
        let r = 1 + j * (n / 8);
        let got = ask(&mut s, me, "few", r, &format!("remote.{r}"));
        assert_eq!(got.len(), 1, "GET for {r}: {got:?}");
        assert!(got[0].1.contains(&format!("remote.{r}")), "{got:?}");
        assert!(
            !got[0].1.contains("local."),
            "an elsewhere peer's LOCAL key"
        );
    }
    assert_eq!(
        s.get_counts(),
        GetCounts {
            requests: 8,
            blobs: 8
        }
    );
}

/// On one node, a rank reading every peer in rank order as Open MPI 4
/// over libpmix's hash gds does is sent each peer once, in replies of the
/// sizes the rule gives (one rank each until SWEEP_AFTER consecutive ones
/// were asked for, then doubling what it holds, up to BULK_PEERS), far
/// fewer GETs than peers.
#[test]
fn on_one_node_a_rank_reading_every_peer_is_sent_them_in_bulk() {
    let n = 1000;
    let (mut s, ids) = one_node("all", n);
    let sizes = read_every_peer(&mut s, ids[5], "all", n, 5, "local");
    assert_eq!(sizes, rule(n as usize - 1, BULK_PEERS));
    assert!(sizes.len() < n as usize / 20, "{} GETs", sizes.len());
    assert_eq!(*sizes.iter().max().unwrap(), 1 + BULK_PEERS);
    assert_eq!(
        s.get_counts(),
        GetCounts {
            requests: sizes.len() as u64,
            blobs: n as u64 - 1
        }
    );
    // another rank's connection starts from nothing
    let got = ask(&mut s, ids[7], "all", 8, "local.8");
    assert_eq!(got.len(), 1);
}

/// Across nodes, a rank reading every peer of a job larger than two
/// replies may carry is sent each peer once (what it may see of a rank
/// elsewhere: REMOTE keys), in replies of the rule's sizes, none larger
/// than BULK_ACROSS_PEERS + 1.
#[test]
fn across_nodes_a_rank_reading_every_peer_is_sent_them_in_bulk_at_most_bulk_across_peers_a_reply() {
    let n = 2 * BULK_ACROSS_PEERS as u32 + 600;
    let (mut s, me) = across("many", n);
    let sizes = read_every_peer(&mut s, me, "many", n, 0, "remote");
    assert_eq!(sizes, rule(n as usize - 1, BULK_ACROSS_PEERS));
    assert_eq!(*sizes.iter().max().unwrap(), 1 + BULK_ACROSS_PEERS);
    assert!(sizes.len() < SWEEP_AFTER as usize + 12, "{sizes:?}");
}

/// A job of `n` ranks on two nodes, ranks 0..`here` on this one (all
/// connected and committed), the rest on the other, after a fence that
/// left the other node's data there (`data_at_host`, as `pmixw run`
/// across Slurm nodes does): the server, its connections by rank, and
/// the other node's fence data, for the direct modexes a GET asks.
fn fetched_later(ns: &str, n: u32, here: u32) -> (Server, Vec<u64>, Vec<u8>) {
    let now = Instant::now();
    let nodes = NodeMap {
        nodes: vec![
            ("a".into(), (0..here).collect()),
            ("b".into(), (here..n).collect()),
        ],
        me: 0,
    };
    let fence = Request::Fence {
        procs: vec![],
        info: vec![Info::new("pmix.collect", Value::Bool(true))],
    };
    let fence_of = |s: &mut Server| {
        drain(s)
            .events
            .into_iter()
            .find_map(|e| match e {
                HostEvent::Fence { request, data, .. } => Some((request, data)),
                _ => None,
            })
            .expect("a fence upcall")
    };
    let mut sides = Vec::new();
    for (me, host, ranks) in [(0, "a", 0..here), (1, "b", here..n)] {
        let mut s = mem_job(ns, n, host);
        s.set_nodes(
            ns,
            NodeMap {
                me,
                ..nodes.clone()
            },
        );
        let mut ids = Vec::new();
        for r in ranks {
            let id = s.open();
            s.handle_input(id, &hello(ns, r), now);
            s.handle_input(id, &request(101, &scoped_commit(r)), now);
            s.handle_input(id, &request(102, &fence), now);
            ids.push(id);
        }
        let (request, data) = fence_of(&mut s);
        sides.push((s, ids, request, data));
    }
    let (_, _, _, theirs) = sides.pop().unwrap();
    let (mut s, ids, request, _) = sides.pop().unwrap();
    s.data_at_host(ns);
    s.fence_done(request, 0, &[]);
    drain(&mut s);
    (s, ids, theirs.to_vec())
}

/// Across nodes with the other node's data fetched only when a GET wants
/// one of its ranks: a rank reading every peer in rank order is sent this
/// node's peers in bulk, and once the other node's data is here (one
/// direct modex, answered with that node's data) that node's too, in the
/// reply to the GET that fetched it, not one GET per rank of it.
#[test]
fn across_nodes_peers_whose_data_comes_later_still_come_in_bulk() {
    let (n, here) = (600u32, 300u32);
    let (mut s, ids, theirs) = fetched_later("late", n, here);
    let me = ids[0];
    let mut held = BTreeSet::new();
    let (mut gets, mut fetches) = (0, 0);
    for r in 1..n {
        if held.contains(&r) {
            continue;
        }
        gets += 1;
        let t = 300 + gets;
        let key = format!("{}.{r}", if r < here { "local" } else { "remote" });
        s.handle_input(me, &request(t, &get("late", r, &key)), Instant::now());
        let mut out = drain(&mut s);
        let asked: Vec<u64> = out
            .events
            .iter()
            .filter_map(|e| match e {
                HostEvent::DirectModex { request, .. } => Some(*request),
                _ => None,
            })
            .collect();
        if !asked.is_empty() {
            fetches += 1;
            assert_eq!(s.dmodex_node(&theirs, &asked), Vec::<u64>::new());
            out = drain(&mut s);
        }
        let blobs: Vec<_> = out
            .sends()
            .filter(|(c, b)| *c == me && b.len() > 16)
            .map(|(_, b)| {
                match pmix_codec::msg::Reply::decode(&pmix_codec::Format::V41, 4, &b[16..]) {
                    Ok(pmix_codec::msg::Reply::Get { status: 0, blobs }) => blobs,
                    other => panic!("{other:?}"),
                }
            })
            .collect();
        assert_eq!(blobs.len(), 1, "one reply to GET {r}");
        let got = ranks_of(&blobs[0]);
        assert_eq!(got[0].0, r);
        for (p, text) in got {
            assert!(held.insert(p), "rank {p} sent twice");
            // a rank here: its LOCAL key; elsewhere: its REMOTE one
            let scope = if p < here { "local" } else { "remote" };
            assert!(text.contains(&format!("{scope}.{p}")), "{p}: {text}");
        }
    }
    assert_eq!(held.len() as u32, n - 1);
    assert_eq!(fetches, 1, "the other node's data fetched once");
    // the sweep's singles, the doublings through this node, one GET that
    // fetched the other node and brought it whole
    assert!(gets < SWEEP_AFTER + 12, "{gets} GETs");
}
