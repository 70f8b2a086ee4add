//! PMIx_Connect and PMIx_Disconnect across nodes handed to the host
//! (issue #35, `Connecting::Host`) or completed by the core (`Local`, the
//! default), against our client cores in memory (test-kit/src/pair.rs).
//! What a client gets back is decoded from the server's bytes by the
//! client core.

use pmix_test_kit::pair;

use pair::Pair;
use pmix_codec::msg::{Reply, Request};
use pmix_types::status::codes;
use pmix_types::{Info, Proc, Rank, Value};
use pmix_wire::server::{Connecting, HostEvent, NodeMap};

fn connect(procs: &[Proc], info: Vec<Info>) -> Request {
    Request::Connect {
        procs: procs.to_vec(),
        info,
    }
}

fn disconnect(procs: &[Proc], info: Vec<Info>) -> Request {
    Request::Disconnect {
        procs: procs.to_vec(),
        info,
    }
}

fn all(ns: &str) -> Proc {
    Proc::at(ns, Rank::WILDCARD)
}

/// Job "cn" of four ranks, 0 and 1 here (node n0), 2 and 3 on n1; job
/// "lo" of two, both here. Ranks 0 and 1 of "cn" and both of "lo"
/// connected.
fn spanning(mode: Connecting) -> (Pair, [usize; 4]) {
    let mut pair = Pair::new(&[("cn", 4), ("lo", 2)]);
    pair.server.set_connecting(mode);
    let map = NodeMap {
        nodes: vec![("n0".into(), vec![0, 1]), ("n1".into(), vec![2, 3])],
        me: 0,
    };
    pair.server.set_nodes("cn", map);
    let ps = [("cn", 0), ("cn", 1), ("lo", 0), ("lo", 1)].map(|(ns, r)| pair.init(ns, r));
    std::mem::take(&mut pair.host);
    (pair, ps)
}

/// The upcalls for connects and disconnects raised since the test last
/// looked, taken.
fn upcalls(pair: &mut Pair) -> Vec<HostEvent> {
    std::mem::take(&mut pair.host)
        .into_iter()
        .filter(|e| matches!(e, HostEvent::Connect { .. } | HostEvent::Disconnect { .. }))
        .collect()
}

fn keys(v: &[Info]) -> Vec<(String, Value)> {
    v.iter()
        .map(|i| (i.key.to_string(), i.value.clone()))
        .collect()
}

/// A connect over a job with ranks on another node: once both local
/// ranks are in (not before), the host is handed the participants as
/// given and the first caller's attributes with libpmix 4.2.2's two
/// additions; the ranks wait for its answer, which completes them as
/// the core would.
#[test]
fn a_connect_across_nodes_is_the_hosts_to_complete() {
    let (mut pair, [a, b, ..]) = spanning(Connecting::Host);
    let timeout = Info::new("pmix.timeout", Value::Int(5));
    let ta = pair.send(a, &connect(&[all("cn")], vec![timeout.clone()]));
    pair.drive();
    assert!(upcalls(&mut pair).is_empty(), "the host before rank 1");
    let tb = pair.send(b, &connect(&[all("cn")], vec![]));
    pair.drive();
    let ev = upcalls(&mut pair);
    let [HostEvent::Connect {
        request,
        procs,
        info,
    }] = ev.as_slice()
    else {
        panic!("{ev:?}")
    };
    assert_eq!(procs, &[all("cn")]);
    assert_eq!(
        keys(info),
        keys(&[
            timeout,
            Info::new("pmix.sorted.parr", Value::Bool(true)),
            Info::new("pmix.loc.col.st", Value::Status(0)),
        ])
    );
    assert_eq!(pair.reply(a, ta), None, "rank 0 waits for the host");
    assert_eq!(pair.reply(b, tb), None, "rank 1 waits for the host");
    // a disconnect's answer is not a connect's
    assert!(!pair.server.disconnect_done(*request, codes::PMIX_SUCCESS));
    assert!(pair.server.connect_done(*request, codes::PMIX_SUCCESS));
    assert!(
        !pair.server.connect_done(*request, codes::PMIX_SUCCESS),
        "answered twice"
    );
    pair.drive();
    for (p, t) in [(a, ta), (b, tb)] {
        assert_eq!(
            pair.reply(p, t),
            Some(Reply::Connect {
                status: 0,
                blobs: vec![]
            })
        );
    }
}

/// A disconnect the host fails: every local participant gets its status.
#[test]
fn the_hosts_failed_disconnect_reaches_every_local_caller() {
    let (mut pair, [a, b, ..]) = spanning(Connecting::Host);
    let procs = [Proc::new("cn", 3), Proc::new("cn", 0), Proc::new("cn", 1)];
    let ts = [a, b].map(|p| pair.send(p, &disconnect(&procs, vec![])));
    pair.drive();
    let ev = upcalls(&mut pair);
    let [HostEvent::Disconnect { request, procs, .. }] = ev.as_slice() else {
        panic!("{ev:?}")
    };
    // sorted, as libpmix hands them
    let want: Vec<Proc> = [0, 1, 3].iter().map(|&r| Proc::new("cn", r)).collect();
    assert_eq!(procs, &want);
    assert!(!pair.server.connect_done(*request, codes::PMIX_SUCCESS));
    assert!(pair
        .server
        .disconnect_done(*request, codes::PMIX_ERR_TIMEOUT));
    pair.drive();
    for (p, t) in [a, b].into_iter().zip(ts) {
        assert_eq!(
            pair.reply(p, t),
            Some(Reply::Status(codes::PMIX_ERR_TIMEOUT))
        );
    }
}

/// A connect of two jobs, one of them spanning nodes: on the host's
/// success each caller gets the other job's data, as from a local
/// connect.
#[test]
fn a_connect_the_host_completed_brings_the_other_jobs_data() {
    let (mut pair, [a, b, c, d]) = spanning(Connecting::Host);
    let procs = [all("cn"), all("lo")];
    let ts = [a, b, c, d].map(|p| pair.send(p, &connect(&procs, vec![])));
    pair.drive();
    let ev = upcalls(&mut pair);
    let [HostEvent::Connect {
        request,
        procs: given,
        ..
    }] = ev.as_slice()
    else {
        panic!("{ev:?}")
    };
    assert_eq!(given, &procs);
    assert!(pair.server.connect_done(*request, codes::PMIX_SUCCESS));
    pair.drive();
    for (p, t) in [a, b, c, d].into_iter().zip(ts) {
        let Some(Reply::Connect { status: 0, blobs }) = pair.reply(p, t) else {
            panic!("rank {p}: no connect reply")
        };
        assert_eq!(blobs.len(), 1, "the other job's data");
    }
}

/// Under `Host`, a connect and a disconnect of ranks all on this node are
/// the core's, as libpmix 4.2.2 never calls its host for them; under
/// `Local` (the default) one across nodes is too.
#[test]
fn the_host_is_not_asked_for_what_the_core_completes() {
    for (mode, job) in [(Connecting::Host, "lo"), (Connecting::Local, "cn")] {
        let (mut pair, ps) = spanning(mode);
        let ranks = if job == "lo" {
            [ps[2], ps[3]]
        } else {
            [ps[0], ps[1]]
        };
        let ts = ranks.map(|p| pair.send(p, &connect(&[all(job)], vec![])));
        pair.drive();
        for (p, t) in ranks.into_iter().zip(ts) {
            assert_eq!(
                pair.reply(p, t),
                Some(Reply::Connect {
                    status: 0,
                    blobs: vec![]
                }),
                "{mode:?}"
            );
        }
        let ts = ranks.map(|p| pair.send(p, &disconnect(&[all(job)], vec![])));
        pair.drive();
        for (p, t) in ranks.into_iter().zip(ts) {
            assert_eq!(pair.reply(p, t), Some(Reply::Status(0)), "{mode:?}");
        }
        assert!(upcalls(&mut pair).is_empty(), "{mode:?}");
    }
}
