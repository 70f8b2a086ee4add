//! PMIx_Query_info handed to the host (issue #35, `Querying::Host`) when
//! the core cannot answer it in full, against our client cores in memory
//! (test-kit/src/pair.rs). What a client gets back is decoded from the
//! server's bytes by the client core.

use pmix_test_kit::pair;

use pair::Pair;
use pmix_codec::msg::{Reply, Request};
use pmix_types::status::codes;
use pmix_types::{Info, Proc, Query, Value};
use pmix_wire::server::{HostEvent, Querying};

fn query(keys: &[&str], qualifiers: Vec<Info>) -> Query {
    Query {
        keys: keys.iter().map(|k| (*k).into()).collect(),
        qualifiers,
    }
}

fn ask(queries: Vec<Query>) -> Request {
    Request::Query { queries }
}

fn pair(mode: Querying) -> (Pair, usize) {
    let mut pair = Pair::new(&[("qy", 2)]);
    pair.server.set_querying(mode);
    let a = pair.init("qy", 1);
    std::mem::take(&mut pair.host);
    (pair, a)
}

fn queries_asked(pair: &mut Pair) -> Vec<HostEvent> {
    std::mem::take(&mut pair.host)
        .into_iter()
        .filter(|e| matches!(e, HostEvent::Query { .. }))
        .collect()
}

/// A query with a key the core cannot answer (the scheduler's queues)
/// goes whole to the host, with who asked; the host's status and infos
/// are the client's answer.
#[test]
fn what_the_core_cannot_answer_goes_whole_to_the_host() {
    let (mut pair, a) = pair(Querying::Host);
    let qs = vec![
        query(&["pmix.qry.ns"], vec![]),
        query(
            &["pmix.qry.qlst"],
            vec![Info::new("pmix.nspace", Value::String(Some("qy".into())))],
        ),
    ];
    let t = pair.send(a, &ask(qs.clone()));
    pair.drive();
    let ev = queries_asked(&mut pair);
    let [HostEvent::Query {
        request,
        requester,
        queries,
    }] = ev.as_slice()
    else {
        panic!("{ev:?}")
    };
    assert_eq!(requester, &Proc::new("qy", 1));
    assert_eq!(queries, &qs);
    assert_eq!(pair.reply(a, t), None, "the client waits for the host");
    let answer = vec![
        Info::new("pmix.qry.ns", Value::String(Some("qy,other".into()))),
        Info::new("pmix.qry.qlst", Value::String(Some("batch".into()))),
    ];
    assert!(pair
        .server
        .query_done(*request, codes::PMIX_SUCCESS, answer.clone()));
    assert!(
        !pair
            .server
            .query_done(*request, codes::PMIX_SUCCESS, vec![]),
        "answered twice"
    );
    pair.drive();
    assert_eq!(
        pair.reply(a, t),
        Some(Reply::Query {
            status: 0,
            info: answer
        })
    );

    // a refusal, with no infos
    let t = pair.send(a, &ask(vec![query(&["pmix.qry.qst"], vec![])]));
    pair.drive();
    let ev = queries_asked(&mut pair);
    let [HostEvent::Query { request, .. }] = ev.as_slice() else {
        panic!("{ev:?}")
    };
    assert!(pair
        .server
        .query_done(*request, codes::PMIX_ERR_NOT_FOUND, vec![]));
    pair.drive();
    assert_eq!(
        pair.reply(a, t),
        Some(Reply::Query {
            status: codes::PMIX_ERR_NOT_FOUND,
            info: vec![]
        })
    );
}

/// What the core answers in full stays the core's under `Host`, unless a
/// query asks for a refresh (`pmix.qry.rfsh`); under `Local` (the
/// default) the host is never asked and a key no one here answers is
/// NOT_SUPPORTED.
#[test]
fn the_host_is_asked_only_for_what_the_core_cannot_answer() {
    let (mut pair, a) = pair(Querying::Host);
    let t = pair.send(a, &ask(vec![query(&["pmix.qry.ns"], vec![])]));
    pair.drive();
    assert!(queries_asked(&mut pair).is_empty());
    let Some(Reply::Query { status: 0, info }) = pair.reply(a, t) else {
        panic!("no local answer")
    };
    assert_eq!(info[0].value, Value::String(Some("qy".into())));

    let refresh = Info::new("pmix.qry.rfsh", Value::Bool(true));
    let t = pair.send(a, &ask(vec![query(&["pmix.qry.ns"], vec![refresh])]));
    pair.drive();
    assert_eq!(queries_asked(&mut pair).len(), 1, "a refresh is the host's");
    assert_eq!(pair.reply(a, t), None);

    let (mut pair, a) = self::pair(Querying::Local);
    let t = pair.send(a, &ask(vec![query(&["pmix.qry.qlst"], vec![])]));
    pair.drive();
    assert!(queries_asked(&mut pair).is_empty());
    assert_eq!(
        pair.reply(a, t),
        Some(Reply::Query {
            status: codes::PMIX_ERR_NOT_SUPPORTED,
            info: vec![]
        })
    );
}

/// A client gone before the host answers: the answer goes nowhere.
#[test]
fn an_answer_for_a_client_gone_is_dropped() {
    let (mut pair, a) = pair(Querying::Host);
    pair.send(a, &ask(vec![query(&["pmix.qry.qlst"], vec![])]));
    pair.drive();
    let ev = queries_asked(&mut pair);
    let [HostEvent::Query { request, .. }] = ev.as_slice() else {
        panic!("{ev:?}")
    };
    let conn = pair.peers[a].conn;
    pair.server.closed(conn);
    assert!(!pair
        .server
        .query_done(*request, codes::PMIX_SUCCESS, vec![]));
}
