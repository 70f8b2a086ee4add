//! The server core in memory, without processes or sockets (core tier):
//! its replies to captured libpmix clients are libpmix's bytes; fences,
//! events, job data and GETs across nodes; every test drives
//! `pmix_wire::server::Server` directly. (Moved from the libpmix tier's
//! server-role tests, which start processes.)

use pmix_codec::frame::HeaderOrder;
use pmix_test_kit::captures::frames;
use pmix_test_kit::hostile::request_frame as request;
use pmix_test_kit::pair::{drain, scoped_commit, Drained};
use pmix_wire::server::{HostEvent, JobSpec, Server};
use std::time::Instant;
fn hello(ns: &str, rank: u32) -> Vec<u8> {
    pmix_test_kit::hostile::connect_frame(ns, rank, vec![0; 8])
}

/// A server core for one job "mem" of `n` ranks.
fn mem_server(n: u32) -> Server {
    mem_job("mem", n, "h", vec![])
}

/// A server core for one job `ns` of `n` ranks on node `host`.
fn mem_job(ns: &str, n: u32, host: &str, info: Vec<pmix_types::Info>) -> Server {
    let mut s = Server::new();
    s.register_nspace(JobSpec {
        nspace: ns.into(),
        nprocs: n,
        hostname: host.into(),
        info,
    });
    s
}

/// The GET replies (tag, byte objects) queued for `conn`, in order; any
/// other reply to it fails the test.
fn get_replies(s: &mut Server, conn: u64) -> Vec<(u32, Vec<bytes::Bytes>)> {
    let mut replies = Vec::new();
    for (c, b) in drain(s).sends() {
        if c == conn && b.len() > 16 {
            let t = u32::from_be_bytes(b[4..8].try_into().unwrap());
            let fmt = pmix_codec::Format::V41;
            match pmix_codec::msg::Reply::decode(&fmt, 4, &b[16..]).unwrap() {
                pmix_codec::msg::Reply::Get { status: 0, blobs } => replies.push((t, blobs)),
                other => panic!("{other:?}"),
            }
        }
    }
    replies
}

/// In memory: a rank that fences before its peer has even connected waits
/// for it (a fast first rank used to be told the peer was lost); a peer
/// that then dies fails the fence for the rank already in.
#[test]
fn a_fence_waits_for_ranks_not_yet_connected_and_fails_for_lost_ones() {
    use pmix_codec::msg::Request;
    let mut s = mem_server(3);
    let now = Instant::now();
    let fence = Request::Fence {
        procs: vec![],
        info: vec![],
    };
    let statuses = |out: &Drained| -> Vec<_> {
        out.sends()
            .filter(|(_, b)| b.len() > 16)
            .map(|(c, b)| {
                let r =
                    pmix_codec::msg::Reply::decode(&pmix_codec::Format::V41, 3, &b[16..]).unwrap();
                (c, r)
            })
            .collect()
    };
    let c0 = s.open();
    s.handle_input(c0, &hello("mem", 0), now);
    s.handle_input(c0, &request(101, &fence), now);
    let out = drain(&mut s);
    assert!(statuses(&out).is_empty(), "{out:?}");
    let c1 = s.open();
    s.handle_input(c1, &hello("mem", 1), now);
    s.handle_input(c1, &request(101, &fence), now);
    drain(&mut s);
    // rank 2 connects, then its connection ends before it fences
    let c2 = s.open();
    s.handle_input(c2, &hello("mem", 2), now);
    drain(&mut s);
    s.closed(c2);
    let replies = statuses(&drain(&mut s));
    let lost = pmix_codec::msg::Reply::Status(pmix_types::status::codes::PMIX_ERR_LOST_CONNECTION);
    assert_eq!(replies, vec![(c0, lost.clone()), (c1, lost.clone())]);
    // and a later fence fails at once
    s.handle_input(c0, &request(102, &fence), now);
    let replies = statuses(&drain(&mut s));
    assert_eq!(replies, vec![(c0, lost)]);
}

/// In memory: callers naming the same participants in different ways
/// (none, the namespace's wildcard, every rank by name) join one fence; a
/// rank lost after it arrived fails later callers of that fence at once;
/// REQ replies (encoded and framed once per job, src/server/jobinfo.rs)
/// carry each caller's own tag and the same job info.
#[test]
fn one_fence_however_its_participants_are_written() {
    use pmix_codec::msg::{Reply, Request};
    use pmix_types::status::codes;
    use pmix_types::Proc;
    let mut s = mem_server(3);
    let now = Instant::now();
    let fence = |procs: Vec<Proc>| Request::Fence {
        procs,
        info: vec![],
    };
    let wild = vec![Proc::new("mem", pmix_types::RANK_WILDCARD)];
    let all: Vec<Proc> = (0..3).rev().map(|r| Proc::new("mem", r)).collect();
    let replies = |s: &mut Server, cmd: u8| {
        let mut v = Vec::new();
        for (c, b) in drain(s).sends() {
            if b.len() > 16 {
                let tag = u32::from_be_bytes(b[4..8].try_into().unwrap());
                let r = Reply::decode(&pmix_codec::Format::V41, cmd, &b[16..]).unwrap();
                v.push((c, tag, r));
            }
        }
        v
    };
    let c: Vec<_> = (0..3).map(|_| s.open()).collect();
    for (r, id) in c.iter().enumerate() {
        s.handle_input(*id, &hello("mem", r as u32), now);
    }
    replies(&mut s, 3);
    // job info: the same bytes under each caller's tag
    s.handle_input(c[0], &request(7, &Request::Req), now);
    s.handle_input(c[1], &request(9, &Request::Req), now);
    s.handle_input(c[2], &request(7, &Request::Req), now);
    let info = replies(&mut s, 0);
    assert_eq!(info.len(), 3);
    assert_eq!(
        info.iter().map(|x| (x.0, x.1)).collect::<Vec<_>>(),
        vec![(c[0], 7), (c[1], 9), (c[2], 7)]
    );
    assert!(matches!(&info[0].2, Reply::JobInfo { kvals, .. } if kvals.len() > 3));
    assert!(info.iter().all(|x| x.2 == info[0].2));
    // one fence, three spellings
    s.handle_input(c[0], &request(20, &fence(vec![])), now);
    s.handle_input(c[1], &request(20, &fence(all.clone())), now);
    assert!(replies(&mut s, 3).is_empty());
    s.handle_input(c[2], &request(20, &fence(wild.clone())), now);
    let ok = Reply::Status(codes::PMIX_SUCCESS);
    let mut got = replies(&mut s, 3);
    got.sort_by_key(|x| x.0);
    assert_eq!(
        got,
        vec![
            (c[0], 20, ok.clone()),
            (c[1], 20, ok.clone()),
            (c[2], 20, ok)
        ]
    );
    // rank 0 arrives at the next fence, then is lost: those who come later
    // are told at once
    s.handle_input(c[0], &request(21, &fence(wild.clone())), now);
    s.closed(c[0]);
    replies(&mut s, 3);
    s.handle_input(c[1], &request(21, &fence(wild)), now);
    s.handle_input(c[2], &request(21, &fence(all)), now);
    let lost = Reply::Status(codes::PMIX_ERR_LOST_CONNECTION);
    assert_eq!(
        replies(&mut s, 3),
        vec![(c[1], 21, lost.clone()), (c[2], 21, lost)]
    );
}

/// The server of one node of job "mn" (4 ranks), holding ranks `local`.
fn mn_node(local: &[u32]) -> Server {
    let mut s = mem_job("mn", 4, "n", vec![]);
    s.set_local_ranks("mn", local);
    s
}

/// A COMMIT blob of one KVAL, `mn.<scope>.<r>` = `"<scope>-of-<r>"`.
fn mn_kvals(scope: &str, r: u32) -> pmix_types::Buffer {
    use pmix_types::{DataType, Kval, Value};
    let mut buf = pmix_codec::DataBuffer::new(pmix_codec::Format::V41);
    let k = Kval {
        key: Some(format!("mn.{scope}.{r}").as_str().into()),
        value: Value::String(Some(format!("{scope}-of-{r}").as_str().into())),
    };
    buf.pack(DataType::Kval, &[Value::Kval(Box::new(k))])
        .unwrap();
    pmix_types::Buffer {
        buffer_type: 1,
        bytes: bytes::Bytes::copy_from_slice(buf.as_bytes()),
    }
}

/// Two nodes, in memory: servers A (ranks 0 and 1 of "mn") and B (ranks
/// 2 and 3), joined only by a host that carries the fence's collected data
/// and the direct-modex answers between them (the standard's
/// fence_nb/direct_modex upcalls). A rank on A gets the data of a rank on
/// B after a collecting fence, and without one through a direct modex.
#[test]
fn two_nodes_exchange_data_through_their_host() {
    use pmix_codec::msg::{Reply, Request};
    use pmix_types::{Info, Value};
    let now = Instant::now();
    let node = mn_node;
    let (mut a, mut b) = (node(&[0, 1]), node(&[2, 3]));
    let kvals = mn_kvals;
    let commit = |r: u32| Request::Commit {
        blobs: vec![(1, kvals("local", r)), (2, kvals("remote", r))],
    };
    let fence = |collect: bool| Request::Fence {
        procs: vec![],
        info: if collect {
            vec![Info::new("pmix.collect", Value::Bool(true))]
        } else {
            vec![]
        },
    };
    let get = |r: u32| Request::Get {
        nspace: Some("mn".into()),
        rank: r,
        info: vec![],
        key: Some(Some(format!("mn.remote.{r}").as_str().into())),
    };
    // replies by connection, and host events, of one server
    let drain = |s: &mut Server| {
        let out = drain(s);
        let sent: Vec<_> = out
            .sends()
            .filter(|(_, b)| b.len() > 8)
            .map(|(c, b)| (c, b.clone()))
            .collect();
        (sent, out.events)
    };
    let conns_a: Vec<_> = (0..2).map(|_| a.open()).collect();
    let conns_b: Vec<_> = (0..2).map(|_| b.open()).collect();
    for (i, c) in conns_a.iter().enumerate() {
        a.handle_input(*c, &hello("mn", i as u32), now);
        a.handle_input(*c, &request(101, &commit(i as u32)), now);
        a.handle_input(*c, &request(102, &fence(true)), now);
    }
    for (i, c) in conns_b.iter().enumerate() {
        let r = 2 + i as u32;
        b.handle_input(*c, &hello("mn", r), now);
        b.handle_input(*c, &request(101, &commit(r)), now);
        b.handle_input(*c, &request(102, &fence(true)), now);
    }
    let fence_of = |events: Vec<HostEvent>| {
        events
            .into_iter()
            .find_map(|e| match e {
                HostEvent::Fence {
                    request,
                    procs,
                    collect,
                    data,
                } => Some((request, procs.len(), collect, data)),
                _ => None,
            })
            .expect("a fence upcall")
    };
    let (ra, na, ca, da) = fence_of(drain(&mut a).1);
    let (rb, nb, cb, db) = fence_of(drain(&mut b).1);
    assert_eq!((na, ca, nb, cb), (4, true, 4, true));
    let all = [da.as_ref(), db.as_ref()].concat();
    a.fence_done(ra, 0, &all);
    b.fence_done(rb, 0, &all);
    // rank 0 on A asks for rank 3's data: already there
    a.handle_input(conns_a[0], &request(103, &get(3)), now);
    let (sent, host) = drain(&mut a);
    assert!(host.is_empty(), "{host:?}");
    let fmt = pmix_codec::Format::V41;
    let answer = |sent: &[(u64, bytes::Bytes)], c: u64, t: u32| {
        sent.iter()
            .filter(|(cc, _)| *cc == c)
            .find(|(_, b)| u32::from_be_bytes(b[4..8].try_into().unwrap()) == t)
            .map(|(_, b)| Reply::decode(&fmt, 4, &b[16..]).unwrap())
            .expect("an answer")
    };
    let text = |r: &Reply| format!("{r:?}");
    let r = answer(&sent, conns_a[0], 103);
    assert!(text(&r).contains("remote-of-3"), "{r:?}");
    assert!(
        !text(&r).contains("local-of-3"),
        "local data stays on its node: {r:?}"
    );
    // rank 0 asks for rank 3's PMIX_LOCAL key: not here, so once more to
    // rank 3's node (a key committed after the fence would be there);
    // the answer is rank 3's data for other nodes, without that key (the
    // client: NOT_FOUND), at once, not after a wait (issue 26)
    let get_local = Request::Get {
        nspace: Some("mn".into()),
        rank: 3,
        info: vec![],
        key: Some(Some("mn.local.3".into())),
    };
    a.handle_input(conns_a[0], &request(104, &get_local), now);
    let (sent, host) = drain(&mut a);
    assert!(sent.is_empty(), "{sent:?}");
    let id = host
        .into_iter()
        .find_map(|e| match e {
            HostEvent::DirectModex { request, .. } => Some(request),
            _ => None,
        })
        .expect("a direct-modex upcall");
    a.dmodex_done(id, Ok(b.modex_data("mn", 3).expect("rank 3 committed")));
    let (sent, _) = drain(&mut a);
    let r = answer(&sent, conns_a[0], 104);
    assert!(
        matches!(&r, Reply::Get { status: 0, .. }) && text(&r).contains("remote-of-3"),
        "{r:?}"
    );
    assert!(!text(&r).contains("local-of-3"), "{r:?}");
    // fences without data: a get goes to the host as a direct modex
    let (mut a, mut b) = (node(&[0, 1]), node(&[2, 3]));
    let ca0 = a.open();
    a.handle_input(ca0, &hello("mn", 0), now);
    let cb2 = b.open();
    b.handle_input(cb2, &hello("mn", 2), now);
    b.handle_input(cb2, &request(101, &commit(2)), now);
    drain(&mut b);
    a.handle_input(ca0, &request(101, &get(2)), now);
    let (sent, host) = drain(&mut a);
    assert!(sent.is_empty());
    let (id, proc) = host
        .into_iter()
        .find_map(|e| match e {
            HostEvent::DirectModex { request, proc } => Some((request, proc)),
            _ => None,
        })
        .expect("a direct-modex upcall");
    assert_eq!((proc.nspace.to_string(), proc.rank), ("mn".to_string(), 2));
    let blob = b.modex_data("mn", 2).expect("rank 2 committed");
    a.dmodex_done(id, Ok(blob));
    let (sent, _) = drain(&mut a);
    let r = answer(&sent, ca0, 101);
    assert!(text(&r).contains("remote-of-2"), "{r:?}");
    // and a failed one reaches the client as that status
    a.handle_input(ca0, &request(102, &get(3)), now);
    let (_, host) = drain(&mut a);
    let id = host
        .into_iter()
        .find_map(|e| match e {
            HostEvent::DirectModex { request, .. } => Some(request),
            _ => None,
        })
        .unwrap();
    a.dmodex_done(id, Err(-46));
    let (sent, _) = drain(&mut a);
    // (a lone STATUS read as a GET reply: a status and no data)
    assert_eq!(
        answer(&sent, ca0, 102),
        Reply::Get {
            status: -46,
            blobs: vec![]
        }
    );
}

/// A host that keeps each node's fence data where it is
/// (`Server::data_at_host`, fence_done with nothing from the others) and
/// fetches a node's when a GET wants one of its ranks: the GETs, even
/// PMIX_IMMEDIATE ones, wait for that direct modex; one node's data
/// (`Server::dmodex_node`) answers every request it holds the data for;
/// a key it lacks hands the request back for the rank's own node; data
/// that does not parse fails the GETs.
#[test]
fn fence_data_left_at_its_node_is_fetched_when_a_get_wants_it() {
    use pmix_codec::msg::{Reply, Request};
    use pmix_types::{Info, Value};
    let now = Instant::now();
    let node = mn_node;
    let (mut a, mut b) = (node(&[0, 1]), node(&[2, 3]));
    let commit = |r: u32| Request::Commit {
        blobs: vec![(2, mn_kvals("remote", r))],
    };
    let fence = Request::Fence {
        procs: vec![],
        info: vec![Info::new("pmix.collect", Value::Bool(true))],
    };
    let get = |r: u32, key: &str, immediate: bool| Request::Get {
        nspace: Some("mn".into()),
        rank: r,
        info: if immediate {
            vec![Info::new("pmix.immediate", Value::Bool(true))]
        } else {
            vec![]
        },
        key: Some(Some(key.into())),
    };
    let fmt = pmix_codec::Format::V41;
    // (connection, tag, reply) sent, and the upcalls
    let drain = |s: &mut Server| {
        let out = drain(s);
        let sent: Vec<(u64, u32, Reply)> = out
            .sends()
            .filter(|(_, b)| b.len() > 16)
            .map(|(c, b)| {
                let t = u32::from_be_bytes(b[4..8].try_into().unwrap());
                (c, t, Reply::decode(&fmt, 4, &b[16..]).unwrap())
            })
            .collect();
        (sent, out.events)
    };
    let dmodex = |events: Vec<HostEvent>| -> Vec<(u64, u32)> {
        events
            .into_iter()
            .filter_map(|e| match e {
                HostEvent::DirectModex { request, proc } => Some((request, proc.rank)),
                _ => None,
            })
            .collect()
    };
    let ca: Vec<_> = (0..2).map(|_| a.open()).collect();
    let cb: Vec<_> = (0..2).map(|_| b.open()).collect();
    for (i, c) in ca.iter().enumerate() {
        a.handle_input(*c, &hello("mn", i as u32), now);
        a.handle_input(*c, &request(101, &commit(i as u32)), now);
        a.handle_input(*c, &request(102, &fence), now);
    }
    for (i, c) in cb.iter().enumerate() {
        let r = 2 + i as u32;
        b.handle_input(*c, &hello("mn", r), now);
        b.handle_input(*c, &request(101, &commit(r)), now);
        b.handle_input(*c, &request(102, &fence), now);
    }
    let fence_of = |events: Vec<HostEvent>| {
        events
            .into_iter()
            .find_map(|e| match e {
                HostEvent::Fence { request, data, .. } => Some((request, data)),
                _ => None,
            })
            .expect("a fence upcall")
    };
    let (ra, _) = fence_of(drain(&mut a).1);
    let (_, db) = fence_of(drain(&mut b).1);
    // A keeps B's data at B: nothing of it comes with the fence
    a.data_at_host("mn");
    a.fence_done(ra, 0, &[]);
    drain(&mut a);
    // rank 0 asks for rank 3 (PMIX_IMMEDIATE: still a wait, the data
    // exists), rank 1 for rank 2: two direct modexes, no answer yet
    a.handle_input(ca[0], &request(103, &get(3, "mn.remote.3", true)), now);
    a.handle_input(ca[1], &request(103, &get(2, "mn.remote.2", false)), now);
    let (sent, events) = drain(&mut a);
    assert!(sent.is_empty(), "{sent:?}");
    let asked = dmodex(events);
    assert_eq!(
        asked.iter().map(|(_, r)| *r).collect::<Vec<_>>(),
        [3, 2],
        "{asked:?}"
    );
    // B's fence data answers both: none handed back
    let ids: Vec<u64> = asked.iter().map(|(i, _)| *i).collect();
    assert_eq!(a.dmodex_node(&db, &ids), Vec::<u64>::new());
    let (sent, _) = drain(&mut a);
    let text = |c: u64| {
        sent.iter()
            .find(|(cc, t, _)| *cc == c && *t == 103)
            .map(|(_, _, r)| format!("{r:?}"))
            .expect("an answer")
    };
    assert!(text(ca[0]).contains("remote-of-3"), "{}", text(ca[0]));
    assert!(text(ca[1]).contains("remote-of-2"), "{}", text(ca[1]));
    // a key the fence data lacks: the request is handed back, and the
    // rank's node answers with what it holds now
    a.handle_input(ca[0], &request(104, &get(3, "mn.late.3", false)), now);
    let (sent, events) = drain(&mut a);
    assert!(sent.is_empty(), "{sent:?}");
    let asked = dmodex(events);
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(a.dmodex_node(&[], &[asked[0].0]), vec![asked[0].0]);
    a.dmodex_done(asked[0].0, Ok(b.modex_data("mn", 3).unwrap()));
    let (sent, _) = drain(&mut a);
    assert!(
        matches!(sent.as_slice(), [(c, 104, Reply::Get { status: 0, .. })] if *c == ca[0]),
        "{sent:?}"
    );
    // fence data that does not parse fails the GETs waiting for it
    let (mut a, _) = (node(&[0, 1]), ());
    let c0 = a.open();
    a.handle_input(c0, &hello("mn", 0), now);
    drain(&mut a);
    a.data_at_host("mn");
    a.handle_input(c0, &request(105, &get(2, "mn.remote.2", true)), now);
    let asked = dmodex(drain(&mut a).1);
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(
        a.dmodex_node(&[0xff, 1, 2], &[asked[0].0]),
        Vec::<u64>::new()
    );
    let (sent, _) = drain(&mut a);
    assert!(
        matches!(sent.as_slice(), [(_, 105, Reply::Get { status: s, .. })] if *s != 0),
        "{sent:?}"
    );
}

/// The REQ reply is the bytes libpmix 4.2.2's server sent for the same job
/// (corpus/releases/captures/4.2.2-server_4.2.2-client.txt: namespace "chjob",
/// two ranks on host "vm"), and so are the COMMIT, FENCE, GET and FINALIZE
/// answers of that conversation.
#[test]
fn job_info_and_modex_replies_are_libpmix_bytes() {
    let text = std::fs::read_to_string(
        pmix_test_kit::repo().join("corpus/releases/captures/4.2.2-server_4.2.2-client.txt"),
    )
    .unwrap();
    let conns = pmix_test_kit::captures::connections(&text);
    let mut s = Server::new();
    s.register_nspace(JobSpec {
        nspace: "chjob".into(),
        nprocs: 2,
        hostname: "vm".into(),
        info: vec![],
    });
    let now = Instant::now();
    let ids: Vec<u64> = conns.iter().map(|_| s.open()).collect();
    for ((c, _, _, _), id) in conns.iter().zip(&ids) {
        s.handle_input(*id, c, now);
    }
    let mut ours: Vec<Vec<u8>> = vec![Vec::new(); ids.len()];
    for (c, b) in drain(&mut s).sends() {
        ours[ids.iter().position(|x| *x == c).unwrap()].extend(b);
    }
    for (i, (c, theirs, _, _)) in conns.iter().enumerate() {
        let tags: Vec<(u32, Vec<u8>)> =
            frames(c, HeaderOrder::Little).into_iter().skip(1).collect();
        let by_tag =
            |stream: &[u8]| -> Vec<(u32, Vec<u8>)> { frames(&stream[8..], HeaderOrder::Network) };
        let (ours_f, theirs_f) = (by_tag(&ours[i]), by_tag(theirs));
        for (t, req) in tags {
            let a: Vec<_> = ours_f
                .iter()
                .filter(|(x, _)| *x == t)
                .map(|(_, p)| p)
                .collect();
            let b: Vec<_> = theirs_f
                .iter()
                .filter(|(x, _)| *x == t)
                .map(|(_, p)| p)
                .collect();
            assert_eq!(
                a,
                b,
                "connection {} request {} (tag {t})",
                i + 1,
                pmix_types::hex::encode(&req)
            );
        }
    }
}

/// Event ranges, in memory: NAMESPACE reaches the source's namespace only,
/// GLOBAL every registered connection, PROC_LOCAL nobody; ranges beyond
/// the node go to the host too; an event the host injects reaches every
/// registered connection.
#[test]
fn events_follow_their_range() {
    use pmix_codec::msg::{EventNotice, Request};
    use pmix_types::names::data_range as range;
    let mut s = Server::new();
    for ns in ["ea", "eb"] {
        s.register_nspace(JobSpec {
            nspace: ns.into(),
            nprocs: 2,
            hostname: "h".into(),
            info: vec![],
        });
    }
    let now = Instant::now();
    let peers = [("ea", 0), ("ea", 1), ("eb", 0)];
    let ids: Vec<u64> = peers
        .iter()
        .map(|(ns, r)| {
            let c = s.open();
            s.handle_input(c, &hello(ns, *r), now);
            let reg = Request::RegEvents {
                codes: vec![],
                info: vec![],
            };
            s.handle_input(c, &request(101, &reg), now);
            c
        })
        .collect();
    let drain = |s: &mut Server| {
        let (mut events, mut host) = (Vec::new(), Vec::new());
        let out = drain(s);
        for (c, b) in out.sends() {
            if b.len() > 16 && b[4..8] == [0, 0, 0, 0] {
                let e = EventNotice::decode(&pmix_codec::Format::V41, &b[16..]).unwrap();
                events.push((c, e.status, e.range));
            }
        }
        for e in out.events {
            if let HostEvent::Notified { code, range, .. } = e {
                host.push((code, range));
            }
        }
        events.sort();
        (events, host)
    };
    drain(&mut s);
    let notify = |code: i32, range: u8| Request::Notify {
        status: code,
        range,
        info: vec![],
    };
    s.handle_input(ids[0], &request(102, &notify(-3001, range::NAMESPACE)), now);
    assert_eq!(
        drain(&mut s),
        (
            vec![(ids[1], -3001, Some(range::NAMESPACE))],
            vec![(-3001, range::NAMESPACE)]
        )
    );
    s.handle_input(ids[0], &request(103, &notify(-3002, range::GLOBAL)), now);
    assert_eq!(
        drain(&mut s),
        (
            vec![
                (ids[1], -3002, Some(range::GLOBAL)),
                (ids[2], -3002, Some(range::GLOBAL))
            ],
            vec![(-3002, range::GLOBAL)]
        )
    );
    s.handle_input(ids[0], &request(104, &notify(-3003, range::LOCAL)), now);
    assert_eq!(drain(&mut s).1, vec![]);
    s.handle_input(
        ids[0],
        &request(105, &notify(-3004, range::PROC_LOCAL)),
        now,
    );
    assert_eq!(drain(&mut s), (vec![], vec![]));
    // from the host (another node): everybody registered here
    s.notify(
        -3005,
        &pmix_types::Proc::new("elsewhere", 0),
        pmix_types::enums::DataRange::GLOBAL,
        vec![],
    );
    let (events, _) = drain(&mut s);
    assert_eq!(events.len(), 3, "{events:?}");
}

/// In memory, a job of 4 ranks on two nodes (`set_nodes`): the REQ reply
/// carries both nodes' arrays and every rank's node; after a fence with
/// data, a rank's GETs for peers elsewhere bring what it may see of them
/// (their REMOTE keys), its target's alone (a rank's first GETs bring no
/// bulk: tests/core_server_bulk.rs).
#[test]
fn a_job_across_nodes_has_their_job_data_and_a_get_brings_what_it_may_see() {
    use pmix_codec::msg::{Reply, Request};
    use pmix_types::{Info, Value};
    use pmix_wire::server::NodeMap;
    let now = Instant::now();
    let mut s = mem_job("mn", 4, "a", vec![]);
    s.set_nodes(
        "mn",
        NodeMap {
            nodes: vec![("a".into(), vec![0, 2]), ("b".into(), vec![1, 3])],
            me: 0,
        },
    );
    let commit = scoped_commit;
    let fmt = pmix_codec::Format::V41;
    let replies = |s: &mut Server| {
        let mut out = Vec::new();
        let drained = drain(s);
        for (c, b) in drained.sends() {
            if b.len() > 16 {
                out.push((
                    c,
                    u32::from_be_bytes(b[4..8].try_into().unwrap()),
                    b[16..].to_vec(),
                ));
            }
        }
        (out, drained.events)
    };
    let c: Vec<_> = [0u32, 2].iter().map(|r| (s.open(), *r)).collect();
    for (id, r) in &c {
        s.handle_input(*id, &hello("mn", *r), now);
        s.handle_input(*id, &request(100, &Request::Req), now);
        s.handle_input(*id, &request(101, &commit(*r)), now);
        let fence = Request::Fence {
            procs: vec![],
            info: vec![Info::new("pmix.collect", Value::Bool(true))],
        };
        s.handle_input(*id, &request(102, &fence), now);
    }
    let (out, host) = replies(&mut s);
    // job data: two nodes, this one first, every rank's node
    let req = out
        .iter()
        .find(|(id, t, _)| *id == c[0].0 && *t == 100)
        .unwrap();
    let text = format!("{:?}", Reply::decode(&fmt, 0, &req.2).unwrap());
    assert!(
        text.contains("pmix.num.nodes") && text.contains("Uint32(2)"),
        "{text}"
    );
    assert!(text.contains("\"a,b\""), "{text}");
    assert_eq!(text.matches("pmix.node.arr").count(), 2, "{text}");
    assert!(
        text.contains("\"0,2\"") && text.contains("\"1,3\""),
        "{text}"
    );
    // node b's contribution, as its server would make it
    let mut b = Server::new();
    b.register_nspace(JobSpec {
        nspace: "mn".into(),
        nprocs: 4,
        hostname: "b".into(),
        info: vec![],
    });
    b.set_nodes(
        "mn",
        NodeMap {
            nodes: vec![("a".into(), vec![0, 2]), ("b".into(), vec![1, 3])],
            me: 1,
        },
    );
    let mut theirs = Vec::new();
    for r in [1u32, 3] {
        let id = b.open();
        b.handle_input(id, &hello("mn", r), now);
        b.handle_input(id, &request(101, &commit(r)), now);
    }
    for r in [1u32, 3] {
        theirs.extend_from_slice(&b.modex_data("mn", r).unwrap());
    }
    let request_id = host
        .iter()
        .find_map(|e| match e {
            HostEvent::Fence { request, .. } => Some(*request),
            _ => None,
        })
        .expect("a fence upcall");
    s.fence_done(request_id, 0, &theirs);
    replies(&mut s);
    let get = |r: u32, key: &str| Request::Get {
        nspace: Some("mn".into()),
        rank: r,
        info: vec![],
        key: Some(Some(key.into())),
    };
    // rank 0 asks for rank 3, then 1: each reply holds its target alone
    s.handle_input(c[0].0, &request(103, &get(3, "remote.3")), now);
    s.handle_input(c[0].0, &request(104, &get(1, "remote.1")), now);
    let (out, _) = replies(&mut s);
    let blobs = |t: u32| match out
        .iter()
        .find(|(id, tt, _)| *id == c[0].0 && *tt == t)
        .map(|x| Reply::decode(&fmt, 4, &x.2).unwrap())
    {
        Some(Reply::Get { status: 0, blobs }) => blobs,
        other => panic!("{other:?}"),
    };
    for (t, r) in [(103, 3), (104, 1)] {
        let text = format!("{:?}", blobs(t));
        assert_eq!(blobs(t).len(), 1, "{text}");
        assert!(text.contains(&format!("remote.{r}")), "{text}");
        // what a rank may not see stays out: a LOCAL key of a rank elsewhere
        assert!(!text.contains("local."), "{text}");
    }
}

/// A host that starts its ranks before it knows the other nodes
/// (`Server::await_nodes`, pmixw run under PMI-2): a rank's REQ is held,
/// not answered with a one-node job, and set_nodes answers it with the
/// job across the nodes.
#[test]
fn the_job_data_waits_for_the_node_map_when_asked_to() {
    use pmix_codec::msg::{Reply, Request};
    use pmix_wire::server::NodeMap;
    let now = Instant::now();
    let mut s = mem_job("mn", 4, "a", vec![]);
    s.await_nodes("mn");
    let id = s.open();
    s.handle_input(id, &hello("mn", 0), now);
    drain(&mut s);
    s.handle_input(id, &request(100, &Request::Req), now);
    let reqs = |s: &mut Server| -> Vec<Vec<u8>> {
        drain(s)
            .sends()
            .filter(|(c, b)| *c == id && b.len() > 16 && b[4..8] == 100u32.to_be_bytes())
            .map(|(_, b)| b[16..].to_vec())
            .collect()
    };
    assert!(reqs(&mut s).is_empty(), "answered before the node map");
    s.set_nodes(
        "mn",
        NodeMap {
            nodes: vec![("a".into(), vec![0, 1]), ("b".into(), vec![2, 3])],
            me: 0,
        },
    );
    let got = reqs(&mut s);
    assert_eq!(got.len(), 1);
    let fmt = pmix_codec::Format::V41;
    let text = format!("{:?}", Reply::decode(&fmt, 0, &got[0]).unwrap());
    assert!(text.contains("\"a,b\""), "{text}");
    // later ranks are answered at once
    let other = s.open();
    s.handle_input(other, &hello("mn", 1), now);
    s.handle_input(other, &request(100, &Request::Req), now);
    let d = drain(&mut s);
    assert!(d
        .sends()
        .any(|(c, b)| c == other && b.len() > 16 && b[4..8] == 100u32.to_be_bytes()));
}

/// In memory, a job on two nodes: a GET at rank WILDCARD answers session
/// and node keys from the session and node arrays as libpmix 4.2.2's server
/// does (spec-notes/server.md): this node's array without a qualifier, the
/// node `pmix.nodeid` or `pmix.hname` names with one; the session
/// `pmix.session.id` names (ours is UINT32_MAX); job-level keys whatever
/// the realm qualifier says when the realm lacks them; a key the job info
/// does not hold, a rank's own key or an array's name: no byte object.
#[test]
fn a_wildcard_get_reads_the_realm_its_key_or_qualifier_names() {
    use pmix_codec::msg::Request;
    use pmix_types::{DataType, Info, Value, RANK_WILDCARD};
    use pmix_wire::server::NodeMap;
    let now = Instant::now();
    let fmt = pmix_codec::Format::V41;
    let mut s = mem_job(
        "mn",
        5,
        "a",
        vec![Info::new("my.job.key", Value::Uint32(9))],
    );
    s.set_nodes(
        "mn",
        NodeMap {
            nodes: vec![("a".into(), vec![0, 2]), ("b".into(), vec![1, 3, 4])],
            me: 0,
        },
    );
    let id = s.open();
    s.handle_input(id, &hello("mn", 0), now);
    let s_ = |v: &str| Value::String(Some(v.into()));
    let cases: Vec<(&str, Vec<Info>, Option<Value>)> = vec![
        ("pmix.univ.size", vec![], Some(Value::Uint32(5))),
        ("pmix.job.size", vec![], Some(Value::Uint32(5))),
        ("pmix.num.nodes", vec![], Some(Value::Uint32(2))),
        ("my.job.key", vec![], Some(Value::Uint32(9))),
        ("pmix.local.size", vec![], Some(Value::Uint32(2))),
        ("pmix.lpeers", vec![], Some(s_("0,2"))),
        (
            "pmix.local.size",
            vec![Info::new("pmix.nodeid", Value::Uint32(1))],
            Some(Value::Uint32(3)),
        ),
        (
            "pmix.lpeers",
            vec![Info::new("pmix.hname", s_("b"))],
            Some(s_("1,3,4")),
        ),
        (
            "pmix.lldr",
            vec![Info::new("pmix.hname", s_("b"))],
            Some(Value::ProcRank(1)),
        ),
        (
            "pmix.univ.size",
            vec![
                Info::new("pmix.ssn.info", Value::Bool(true)),
                Info::new("pmix.session.id", Value::Uint32(u32::MAX)),
            ],
            Some(Value::Uint32(5)),
        ),
        (
            "pmix.univ.size",
            vec![Info::new("pmix.session.id", Value::Uint32(7))],
            None,
        ),
        (
            "pmix.job.size",
            vec![Info::new("pmix.node.info", Value::Bool(true))],
            Some(Value::Uint32(5)),
        ),
        (
            "pmix.local.size",
            vec![Info::new("pmix.nodeid", Value::Uint32(9))],
            None,
        ),
        ("pmix.session.id", vec![], None),
        ("pmix.lrank", vec![], None),
        ("pmix.node.arr", vec![], None),
        ("no.such.key", vec![], None),
    ];
    for (i, (key, info, want)) in cases.iter().enumerate() {
        let get = Request::Get {
            nspace: Some("mn".into()),
            rank: RANK_WILDCARD,
            info: info.clone(),
            key: Some(Some((*key).into())),
        };
        let t = 200 + i as u32;
        s.handle_input(id, &request(t, &get), now);
        let got = get_replies(&mut s, id);
        let [(tag, blobs)] = &got[..] else {
            panic!("{key} {info:?}: {got:?}");
        };
        assert_eq!(*tag, t);
        let kvals: Vec<pmix_types::Kval> = blobs
            .iter()
            .flat_map(|b| {
                let mut d = pmix_codec::DataBuffer::from_bytes(fmt, b.clone());
                let p = d.unpack_one(DataType::Proc).unwrap();
                assert_eq!(
                    p,
                    Value::Proc(Box::new(pmix_types::Proc::new("mn", RANK_WILDCARD)))
                );
                let mut v = Vec::new();
                while !d.unread().is_empty() {
                    match d.unpack_one(DataType::Kval).unwrap() {
                        Value::Kval(k) => v.push(*k),
                        other => panic!("{other:?}"),
                    }
                }
                v
            })
            .collect();
        match want {
            Some(v) => {
                assert_eq!(kvals.len(), 1, "{key} {info:?}: {kvals:?}");
                assert_eq!(kvals[0].key.as_ref().unwrap().to_string(), *key);
                assert_eq!(&kvals[0].value, v, "{key} {info:?}");
            }
            None => assert!(kvals.is_empty(), "{key} {info:?}: {kvals:?}"),
        }
    }
}

/// In memory: a job deregistered (what `pmixw dvm` does for each job that
/// ended, and PMIx_server_deregister_nspace) is forgotten: a rank of it
/// that connects afterwards is refused as a stranger, where before the
/// same hello was welcomed; another job goes on being served.
#[test]
fn a_deregistered_job_is_forgotten_and_its_ranks_refused() {
    let mut s = mem_server(2);
    s.register_nspace(JobSpec {
        nspace: "other".into(),
        nprocs: 1,
        hostname: "h".into(),
        info: vec![],
    });
    let now = Instant::now();
    let c0 = s.open();
    s.handle_input(c0, &hello("mem", 0), now);
    let out = drain(&mut s);
    assert!(out.closes().is_empty(), "{out:?}");
    assert_eq!(out.events.len(), 1, "{out:?}");
    s.closed(c0);
    drain(&mut s);
    s.deregister_nspace("mem");
    // a second call, and an unknown name, change nothing
    s.deregister_nspace("mem");
    s.deregister_nspace("never");
    let c1 = s.open();
    s.handle_input(c1, &hello("mem", 1), now);
    let out = drain(&mut s);
    assert_eq!(out.closes(), vec![c1], "{out:?}");
    assert!(out.events.is_empty(), "{out:?}");
    let c2 = s.open();
    s.handle_input(c2, &hello("other", 0), now);
    let out = drain(&mut s);
    assert!(out.closes().is_empty(), "{out:?}");
    assert!(
        matches!(out.events[..], [HostEvent::Connected(..)]),
        "{out:?}"
    );
}
