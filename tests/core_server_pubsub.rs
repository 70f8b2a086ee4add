//! Publish, lookup and unpublish handed to the host (issue #35,
//! `Publishing::Host`) or kept by the core (`Local`, the default;
//! `LocalJobsOnly`), against our client cores in memory
//! (test-kit/src/pair.rs). What a client gets back is decoded from the
//! server's bytes by the client core.

use pmix_test_kit::pair;

use pair::Pair;
use pmix_codec::msg::{Reply, Request};
use pmix_types::status::codes;
use pmix_types::{Hex, Info, Pdata, Proc, Value, F64};
use pmix_wire::server::{HostEvent, NodeMap, Publishing};
use std::sync::{Arc, Mutex};

fn publish(info: Vec<Info>) -> Request {
    Request::Publish {
        uid: pair::UID,
        info,
    }
}

fn lookup(keys: &[&str], info: Vec<Info>) -> Request {
    Request::Lookup {
        uid: pair::UID,
        keys: keys.iter().map(|k| Some((*k).into())).collect(),
        info,
    }
}

fn unpublish(keys: &[&str]) -> Request {
    Request::Unpublish {
        uid: pair::UID,
        keys: keys.iter().map(|k| Some((*k).into())).collect(),
        info: vec![],
    }
}

/// The values of several types a rank publishes.
fn typed() -> Vec<Info> {
    vec![
        Info::new("ps.u32", Value::Uint32(7)),
        Info::new("ps.str", Value::String(Some("tcp://10.0.0.1:5000".into()))),
        Info::new("ps.i64", Value::Int64(-1 << 40)),
        Info::new("ps.dbl", Value::Double(F64(2.5))),
        Info::new(
            "ps.bytes",
            Value::ByteObject(Box::new(Hex(bytes::Bytes::from_static(b"\0\x01\xfe")))),
        ),
        Info::new("ps.proc", Value::Proc(Box::new(Proc::new("other", 3)))),
    ]
}

/// The upcalls raised since the test last looked, taken.
fn upcalls(pair: &mut Pair) -> Vec<HostEvent> {
    std::mem::take(&mut pair.host)
}

fn host_pair(n: u32) -> (Pair, Vec<usize>) {
    let mut pair = Pair::new(&[("ps", n)]);
    pair.server.set_publishing(Publishing::Host);
    let ps = (0..n).map(|r| pair.init("ps", r)).collect();
    upcalls(&mut pair);
    (pair, ps)
}

#[test]
fn the_core_keeps_published_data_by_default() {
    let mut pair = Pair::new(&[("ps", 2)]);
    let (a, b) = (pair.init("ps", 0), pair.init("ps", 1));
    let t = pair.send(a, &publish(typed()));
    pair.drive();
    assert_eq!(pair.reply(a, t), Some(Reply::Status(0)));
    let t = pair.send(b, &lookup(&["ps.str", "ps.bytes"], vec![]));
    pair.drive();
    let Some(Reply::Lookup { status: 0, data }) = pair.reply(b, t) else {
        panic!("no data")
    };
    let values: Vec<&Value> = data.iter().map(|d| &d.value).collect();
    assert_eq!(values, vec![&typed()[1].value, &typed()[4].value]);
    assert!(pair.host.iter().all(|e| !matches!(
        e,
        HostEvent::Publish { .. } | HostEvent::Lookup { .. } | HostEvent::Unpublish { .. }
    )));
}

/// Rank 0 publishes values of six types; the host is handed them with
/// `pmix.euid` after them and answers; rank 1's lookup goes to the host,
/// whose data (publisher, key, value) reaches rank 1 with every type as
/// the host gave it.
#[test]
fn the_host_keeps_what_is_published_and_answers_lookups_with_it() {
    let (mut pair, ps) = host_pair(2);
    let (a, b) = (ps[0], ps[1]);
    let mut given = typed();
    given.push(Info::new("pmix.range", Value::DataRange(3)));
    let t = pair.send(a, &publish(given.clone()));
    pair.drive();
    let ev = upcalls(&mut pair);
    let [HostEvent::Publish {
        request,
        proc,
        info,
    }] = ev.as_slice()
    else {
        panic!("{ev:?}")
    };
    assert_eq!(proc, &Proc::new("ps", 0));
    let mut want = given;
    want.push(Info::new("pmix.euid", Value::Uint32(pair::UID)));
    let keys = |v: &[Info]| -> Vec<(String, Value)> {
        v.iter()
            .map(|i| (i.key.to_string(), i.value.clone()))
            .collect()
    };
    assert_eq!(keys(info), keys(&want));
    // the client waits for the host
    assert_eq!(pair.reply(a, t), None);
    assert!(pair.server.publish_done(*request, codes::PMIX_SUCCESS));
    pair.drive();
    assert_eq!(pair.reply(a, t), Some(Reply::Status(0)));

    let t = pair.send(b, &lookup(&["ps.u32", "ps.dbl", "ps.proc"], vec![]));
    pair.drive();
    let ev = upcalls(&mut pair);
    let [HostEvent::Lookup {
        request,
        proc,
        keys: asked,
        info,
    }] = ev.as_slice()
    else {
        panic!("{ev:?}")
    };
    assert_eq!(proc, &Proc::new("ps", 1));
    assert_eq!(asked, &["ps.u32", "ps.dbl", "ps.proc"]);
    assert_eq!(
        keys(info),
        vec![("pmix.euid".to_string(), Value::Uint32(pair::UID))]
    );
    let found: Vec<Pdata> = [0, 3, 5]
        .iter()
        .map(|&i| Pdata {
            proc: Proc::new("ps", 0),
            key: typed()[i].key.clone(),
            value: typed()[i].value.clone(),
        })
        .collect();
    assert!(pair
        .server
        .lookup_done(*request, codes::PMIX_SUCCESS, found.clone()));
    pair.drive();
    assert_eq!(
        pair.reply(b, t),
        Some(Reply::Lookup {
            status: 0,
            data: found
        })
    );

    // unpublish: the host is told which keys, and its status answers
    let t = pair.send(a, &unpublish(&["ps.u32"]));
    pair.drive();
    let ev = upcalls(&mut pair);
    let [HostEvent::Unpublish {
        request, keys: k, ..
    }] = ev.as_slice()
    else {
        panic!("{ev:?}")
    };
    assert_eq!(k, &["ps.u32"]);
    assert!(pair.server.unpublish_done(*request, codes::PMIX_SUCCESS));
    pair.drive();
    assert_eq!(pair.reply(a, t), Some(Reply::Status(0)));
}

/// What the host refuses, the client is told: a publish answered
/// PMIX_ERR_DUPLICATE_KEY, a lookup NOT_FOUND, an unpublish NOT_FOUND.
#[test]
fn the_hosts_refusals_reach_the_client() {
    let (mut pair, ps) = host_pair(1);
    let a = ps[0];
    let ta = pair.send(a, &publish(vec![Info::new("k", Value::Uint32(1))]));
    let tb = pair.send(a, &lookup(&["k"], vec![]));
    let tc = pair.send(a, &unpublish(&["k"]));
    pair.drive();
    let ids: Vec<u64> = upcalls(&mut pair)
        .iter()
        .filter_map(|e| match e {
            HostEvent::Publish { request, .. }
            | HostEvent::Lookup { request, .. }
            | HostEvent::Unpublish { request, .. } => Some(*request),
            _ => None,
        })
        .collect();
    let [p, l, u] = ids[..] else {
        panic!("{ids:?}")
    };
    // answered in another order than asked
    assert!(pair.server.unpublish_done(u, codes::PMIX_ERR_NOT_FOUND));
    assert!(pair
        .server
        .lookup_done(l, codes::PMIX_ERR_NOT_FOUND, Vec::new()));
    assert!(pair.server.publish_done(p, codes::PMIX_ERR_DUPLICATE_KEY));
    pair.drive();
    assert_eq!(
        pair.reply(a, ta),
        Some(Reply::Status(codes::PMIX_ERR_DUPLICATE_KEY))
    );
    assert_eq!(
        pair.reply(a, tb),
        Some(Reply::Status(codes::PMIX_ERR_NOT_FOUND))
    );
    assert_eq!(
        pair.reply(a, tc),
        Some(Reply::Status(codes::PMIX_ERR_NOT_FOUND))
    );
}

/// A lookup with `pmix.wait` before anything is published: the host gets
/// the wait and its timeout, the core keeps no timer of its own, and the
/// answer the host gives once rank 0 has published reaches rank 1.
#[test]
fn a_waiting_lookup_is_the_hosts_to_hold() {
    let (mut pair, ps) = host_pair(2);
    let (a, b) = (ps[0], ps[1]);
    let wait = vec![
        Info::new("pmix.wait", Value::Bool(true)),
        Info::new("pmix.timeout", Value::Int(30)),
    ];
    let tl = pair.send(b, &lookup(&["port"], wait.clone()));
    pair.drive();
    let ev = upcalls(&mut pair);
    let [HostEvent::Lookup {
        request: l, info, ..
    }] = ev.as_slice()
    else {
        panic!("{ev:?}")
    };
    assert_eq!(&info[..2], &wait[..]);
    assert_eq!(pair.server.poll_timeout(), None, "the wait is the host's");
    let port = Value::String(Some("port-0".into()));
    let tp = pair.send(a, &publish(vec![Info::new("port", port.clone())]));
    pair.drive();
    let ev = upcalls(&mut pair);
    let [HostEvent::Publish { request: p, .. }] = ev.as_slice() else {
        panic!("{ev:?}")
    };
    assert_eq!(pair.reply(b, tl), None, "still waiting");
    assert!(pair.server.publish_done(*p, codes::PMIX_SUCCESS));
    let found = vec![Pdata {
        proc: Proc::new("ps", 0),
        key: "port".into(),
        value: port,
    }];
    assert!(pair
        .server
        .lookup_done(*l, codes::PMIX_SUCCESS, found.clone()));
    pair.drive();
    assert_eq!(pair.reply(a, tp), Some(Reply::Status(0)));
    assert_eq!(
        pair.reply(b, tl),
        Some(Reply::Lookup {
            status: 0,
            data: found
        })
    );
}

/// The messages of the warnings logged while `f` runs.
fn warnings(f: impl FnOnce()) -> Vec<String> {
    struct Sub(Arc<Mutex<Vec<String>>>);
    struct Msg<'a>(&'a mut String);
    impl tracing::field::Visit for Msg<'_> {
        fn record_debug(&mut self, field: &tracing::field::Field, v: &dyn std::fmt::Debug) {
            if field.name() == "message" {
                *self.0 = format!("{v:?}");
            }
        }
    }
    impl tracing::Subscriber for Sub {
        fn enabled(&self, m: &tracing::Metadata<'_>) -> bool {
            *m.level() <= tracing::Level::WARN
        }
        fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
            tracing::span::Id::from_u64(1)
        }
        fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
        fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
        fn event(&self, e: &tracing::Event<'_>) {
            let mut s = String::new();
            e.record(&mut Msg(&mut s));
            self.0.lock().unwrap().push(s);
        }
        fn enter(&self, _: &tracing::span::Id) {}
        fn exit(&self, _: &tracing::span::Id) {}
    }
    let seen = Arc::new(Mutex::new(Vec::new()));
    tracing::subscriber::with_default(Sub(seen.clone()), f);
    let v = seen.lock().unwrap().clone();
    v
}

/// An answer the core did not ask for: an id never given, an id given
/// for another operation, an id answered already, an id whose caller has
/// gone. Each is refused (false), logged, and sends nothing; the request
/// that id does belong to is still answered.
#[test]
fn answers_for_requests_not_out_with_the_host_are_refused_and_logged() {
    let (mut pair, ps) = host_pair(2);
    let (a, b) = (ps[0], ps[1]);
    let ta = pair.send(a, &publish(vec![Info::new("k", Value::Uint32(1))]));
    pair.send(b, &lookup(&["k"], vec![]));
    pair.drive();
    let ev = upcalls(&mut pair);
    let [HostEvent::Publish { request: p, .. }, HostEvent::Lookup { request: l, .. }] =
        ev.as_slice()
    else {
        panic!("{ev:?}")
    };
    let (p, l) = (*p, *l);
    pair.server.closed(pair.peers[b].conn);
    // what the loss of rank 1 raised (its HostEvent::Lost)
    pair.drive();
    upcalls(&mut pair);
    let mut refused = Vec::new();
    let logged = warnings(|| {
        let s = &mut pair.server;
        refused.push(s.lookup_done(p + l + 100, codes::PMIX_SUCCESS, Vec::new()));
        // the publish's id, as a lookup's or an unpublish's answer
        refused.push(s.lookup_done(p, codes::PMIX_SUCCESS, Vec::new()));
        refused.push(s.unpublish_done(p, codes::PMIX_SUCCESS));
        // rank 1 has gone: its lookup's answer goes to nobody
        refused.push(s.lookup_done(l, codes::PMIX_SUCCESS, Vec::new()));
    });
    assert_eq!(refused, [false; 4]);
    assert_eq!(logged.len(), 4, "{logged:?}");
    assert!(logged.iter().all(|m| m.contains("ignored")), "{logged:?}");
    assert!(pair::drain(&mut pair.server).is_empty());
    // the publish is still out, answered once
    assert!(pair.server.publish_done(p, codes::PMIX_SUCCESS));
    assert!(!pair.server.publish_done(p, codes::PMIX_SUCCESS));
    pair.drive();
    assert_eq!(pair.reply(a, ta), Some(Reply::Status(0)));
}

/// Job "one" (2 ranks, both here) and job "two" (rank 0 here, rank 1 on
/// another node) under `mode`: the pair, and rank 0 and 1 of "one" and
/// rank 0 of "two", initialised.
fn two_jobs(mode: Publishing) -> (Pair, [usize; 3]) {
    let mut pair = Pair::new(&[("one", 2), ("two", 2)]);
    pair.server.set_publishing(mode);
    let map = NodeMap {
        nodes: vec![("n0".into(), vec![0]), ("n1".into(), vec![1])],
        me: 0,
    };
    pair.server.set_nodes("two", map);
    let ps = [("one", 0), ("one", 1), ("two", 0)].map(|(ns, r)| pair.init(ns, r));
    (pair, ps)
}

/// `LocalJobsOnly` (the C library's choice under a host with no publish
/// upcalls): a job on this node alone publishes and looks up in the core;
/// a job with ranks on another node is answered NOT_SUPPORTED, as libpmix
/// answers there; neither goes to the host.
#[test]
fn local_jobs_only_keeps_one_nodes_jobs_and_refuses_jobs_across_nodes() {
    let (mut pair, [a, b, c]) = two_jobs(Publishing::LocalJobsOnly);
    let t = pair.send(a, &publish(vec![Info::new("k", Value::Uint32(9))]));
    pair.drive();
    assert_eq!(pair.reply(a, t), Some(Reply::Status(0)));
    let t = pair.send(b, &lookup(&["k"], vec![]));
    pair.drive();
    assert!(
        matches!(pair.reply(b, t), Some(Reply::Lookup { status: 0, ref data }) if data[0].value == Value::Uint32(9))
    );
    for req in [
        publish(vec![Info::new("j", Value::Uint32(1))]),
        lookup(&["k"], vec![]),
        unpublish(&[]),
    ] {
        let t = pair.send(c, &req);
        pair.drive();
        assert_eq!(
            pair.reply(c, t),
            Some(Reply::Status(codes::PMIX_ERR_NOT_SUPPORTED)),
            "{req:?}"
        );
    }
    assert!(pair.host.iter().all(|e| !matches!(
        e,
        HostEvent::Publish { .. } | HostEvent::Lookup { .. } | HostEvent::Unpublish { .. }
    )));
}

/// `HostOrLocal` (the C library's choice under a host with publish
/// upcalls, as Slurm's, whose upcalls answer NOT_SUPPORTED): every
/// request goes to the host first; what it declines with NOT_SUPPORTED
/// for a job on this node alone the core answers as under `Local` (a
/// waiting lookup declined is held by the core, and found by a publish
/// declined later); a job across nodes gets the host's NOT_SUPPORTED;
/// another refusal of the host's reaches the client as it is.
#[test]
fn host_or_local_keeps_what_the_host_declines_for_one_nodes_jobs() {
    let (mut pair, [a, b, c]) = two_jobs(Publishing::HostOrLocal);
    upcalls(&mut pair);
    // the host declines every request
    let decline = |pair: &mut Pair| {
        for e in upcalls(pair) {
            let st = codes::PMIX_ERR_NOT_SUPPORTED;
            let answered = match e {
                HostEvent::Publish { request, .. } => pair.server.publish_done(request, st),
                HostEvent::Lookup { request, .. } => {
                    pair.server.lookup_done(request, st, Vec::new())
                }
                HostEvent::Unpublish { request, .. } => pair.server.unpublish_done(request, st),
                _ => continue,
            };
            assert!(answered);
        }
        pair.drive();
    };
    let wait = vec![Info::new("pmix.wait", Value::Bool(true))];
    let tl = pair.send(b, &lookup(&["k"], wait));
    pair.drive();
    decline(&mut pair);
    assert_eq!(pair.reply(b, tl), None, "held by the core");
    assert!(pair.server.poll_timeout().is_some(), "the core's wait");
    let tp = pair.send(a, &publish(vec![Info::new("k", Value::Uint32(5))]));
    pair.drive();
    decline(&mut pair);
    assert_eq!(pair.reply(a, tp), Some(Reply::Status(0)));
    let Some(Reply::Lookup { status: 0, data }) = pair.reply(b, tl) else {
        panic!("the waiting lookup was not answered")
    };
    assert_eq!(
        (data[0].proc.clone(), data[0].value.clone()),
        (Proc::new("one", 0), Value::Uint32(5))
    );
    let tu = pair.send(a, &unpublish(&["k"]));
    pair.drive();
    decline(&mut pair);
    assert_eq!(pair.reply(a, tu), Some(Reply::Status(0)));
    let tl = pair.send(b, &lookup(&["k"], vec![]));
    pair.drive();
    decline(&mut pair);
    assert_eq!(
        pair.reply(b, tl),
        Some(Reply::Status(codes::PMIX_ERR_NOT_FOUND))
    );
    // across nodes: the host's NOT_SUPPORTED is the answer
    let t = pair.send(c, &publish(vec![Info::new("j", Value::Uint32(1))]));
    pair.drive();
    decline(&mut pair);
    assert_eq!(
        pair.reply(c, t),
        Some(Reply::Status(codes::PMIX_ERR_NOT_SUPPORTED))
    );
    // another refusal is the host's
    let t = pair.send(a, &publish(vec![Info::new("k", Value::Uint32(6))]));
    pair.drive();
    let ev = upcalls(&mut pair);
    let [HostEvent::Publish { request, .. }] = ev.as_slice() else {
        panic!("{ev:?}")
    };
    assert!(pair
        .server
        .publish_done(*request, codes::PMIX_ERR_DUPLICATE_KEY));
    pair.drive();
    assert_eq!(
        pair.reply(a, t),
        Some(Reply::Status(codes::PMIX_ERR_DUPLICATE_KEY))
    );
}
