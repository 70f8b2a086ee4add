//! Allocation requests and monitors the core does not run, handed to the
//! host (issue #35: `Server::set_host_allocates`,
//! `Server::set_host_monitors`) or answered NOT_SUPPORTED (the default),
//! against our client cores in memory (test-kit/src/pair.rs).

use pmix_test_kit::pair;

use pair::Pair;
use pmix_codec::msg::{Reply, Request};
use pmix_types::status::codes;
use pmix_types::{Info, Proc, Value};
use pmix_wire::server::HostEvent;

fn alloc(info: Vec<Info>) -> Request {
    Request::Alloc { directive: 1, info }
}

fn file_monitor() -> Request {
    Request::Monitor {
        monitor: Info::new("pmix.monitor.fsize", Value::String(Some("/tmp/x".into()))),
        error: -20,
        directives: vec![Info::new(
            "pmix.monitor.id",
            Value::String(Some("m1".into())),
        )],
    }
}

fn heartbeat() -> Request {
    Request::Monitor {
        monitor: Info::new("pmix.monitor.mbeat", Value::Bool(true)),
        error: -20,
        directives: vec![Info::new("pmix.monitor.btime", Value::Uint32(5))],
    }
}

fn ops(pair: &mut Pair) -> Vec<HostEvent> {
    std::mem::take(&mut pair.host)
        .into_iter()
        .filter(|e| matches!(e, HostEvent::Allocate { .. } | HostEvent::Monitor { .. }))
        .collect()
}

/// A reply's status (an error comes as a lone STATUS).
fn status(r: Option<Reply>) -> i32 {
    match r {
        Some(Reply::Infos { status, .. } | Reply::Status(status)) => status,
        r => panic!("no answer: {r:?}"),
    }
}

fn pair(host: bool) -> (Pair, usize) {
    let mut pair = Pair::new(&[("ho", 1)]);
    pair.server.set_host_allocates(host);
    pair.server.set_host_monitors(host);
    let a = pair.init("ho", 0);
    std::mem::take(&mut pair.host);
    (pair, a)
}

/// The host is handed an allocation request with its directive and
/// infos and a file monitor with what, its status and directives; its
/// answers reach the client. A heartbeat stays the core's.
#[test]
fn the_host_serves_allocations_and_the_monitors_the_core_does_not_run() {
    let (mut pair, a) = pair(true);
    let want = vec![Info::new("pmix.alloc.nnodes", Value::Uint64(2))];
    let ta = pair.send(a, &alloc(want.clone()));
    let tm = pair.send(a, &file_monitor());
    let th = pair.send(a, &heartbeat());
    pair.drive();
    let ev = ops(&mut pair);
    let [HostEvent::Allocate {
        request: ra,
        requester,
        directive: 1,
        info,
    }, HostEvent::Monitor {
        request: rm,
        monitor,
        error: -20,
        directives,
        ..
    }] = ev.as_slice()
    else {
        panic!("{ev:?}")
    };
    assert_eq!(requester, &Proc::new("ho", 0));
    assert_eq!(info, &want);
    assert_eq!(monitor.key.to_string(), "pmix.monitor.fsize");
    assert_eq!(directives.len(), 1);
    assert_eq!(
        pair.reply(a, th),
        Some(Reply::Infos {
            status: 0,
            info: Some(vec![])
        }),
        "the heartbeat is the core's"
    );
    assert_eq!(pair.reply(a, ta), None);
    assert_eq!(pair.reply(a, tm), None);
    let got = vec![Info::new("pmix.alloc.id", Value::String(Some("a7".into())))];
    assert!(
        !pair.server.monitor_done(*ra, 0, vec![]),
        "not a monitor's id"
    );
    assert!(pair.server.allocate_done(*ra, 0, got.clone()));
    assert!(pair
        .server
        .monitor_done(*rm, codes::PMIX_ERR_NOT_FOUND, vec![]));
    pair.drive();
    assert_eq!(
        pair.reply(a, ta),
        Some(Reply::Infos {
            status: 0,
            info: Some(got)
        })
    );
    assert_eq!(status(pair.reply(a, tm)), codes::PMIX_ERR_NOT_FOUND);
}

/// By default both are NOT_SUPPORTED, and the host hears of neither.
#[test]
fn without_the_host_both_are_not_supported() {
    let (mut pair, a) = pair(false);
    let ta = pair.send(a, &alloc(vec![]));
    let tm = pair.send(a, &file_monitor());
    pair.drive();
    assert!(ops(&mut pair).is_empty());
    for t in [ta, tm] {
        assert_eq!(status(pair.reply(a, t)), codes::PMIX_ERR_NOT_SUPPORTED);
    }
}
