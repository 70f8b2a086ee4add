//! Registrations for environmental events handed to the host first
//! (issue #35, `Registering::Host`), against our client cores in memory
//! (test-kit/src/pair.rs).

use pmix_test_kit::pair;

use pair::Pair;
use pmix_codec::msg::{Reply, Request};
use pmix_types::status::codes;
use pmix_types::{Info, Value};
use pmix_wire::server::{HostEvent, Registering};

/// PMIX_EVENT_NODE_DOWN, an environmental code (the standard's range
/// PMIX_EVENT_SYS_BASE -230 .. PMIX_EVENT_SYS_OTHER -330).
const NODE_DOWN: i32 = -231;

fn register(codes: &[i32], info: Vec<Info>) -> Request {
    Request::RegEvents {
        codes: codes.to_vec(),
        info,
    }
}

fn asked(pair: &mut Pair) -> Vec<HostEvent> {
    std::mem::take(&mut pair.host)
        .into_iter()
        .filter(|e| matches!(e, HostEvent::RegisterEvents { .. }))
        .collect()
}

fn pair(mode: Registering) -> (Pair, [usize; 2]) {
    let mut pair = Pair::new(&[("ev", 2)]);
    pair.server.set_registering(mode);
    let ps = [pair.init("ev", 0), pair.init("ev", 1)];
    std::mem::take(&mut pair.host);
    (pair, ps)
}

/// An environmental code goes to the host with every code and the
/// attributes; the client waits for its answer. Once the host accepted
/// it, another registration for it is the core's; the host's refusal of
/// a new one is the client's answer; a code of the PMIx library's own is
/// never the host's.
#[test]
fn environmental_registrations_wait_for_the_host() {
    let (mut pair, [a, b]) = pair(Registering::Host);
    let note = Info::new("ev.note", Value::Uint32(3));
    let t = pair.send(a, &register(&[NODE_DOWN, -1], vec![note.clone()]));
    pair.drive();
    let ev = asked(&mut pair);
    let [HostEvent::RegisterEvents {
        request,
        codes: c,
        info,
    }] = ev.as_slice()
    else {
        panic!("{ev:?}")
    };
    assert_eq!(c, &[NODE_DOWN, -1]);
    assert_eq!(info, &[note]);
    assert_eq!(pair.reply(a, t), None, "the client waits for the host");
    assert!(pair
        .server
        .register_events_done(*request, codes::PMIX_SUCCESS));
    assert!(!pair
        .server
        .register_events_done(*request, codes::PMIX_SUCCESS));
    pair.drive();
    assert_eq!(pair.reply(a, t), Some(Reply::Status(0)));

    // accepted once: rank 1's registration for it is the core's
    let t = pair.send(b, &register(&[NODE_DOWN], vec![]));
    pair.drive();
    assert!(asked(&mut pair).is_empty());
    assert_eq!(pair.reply(b, t), Some(Reply::Status(0)));

    // a new environmental code, refused
    let t = pair.send(b, &register(&[-232], vec![]));
    pair.drive();
    let ev = asked(&mut pair);
    let [HostEvent::RegisterEvents { request, .. }] = ev.as_slice() else {
        panic!("{ev:?}")
    };
    assert!(pair
        .server
        .register_events_done(*request, codes::PMIX_ERR_NOT_SUPPORTED));
    pair.drive();
    assert_eq!(
        pair.reply(b, t),
        Some(Reply::Status(codes::PMIX_ERR_NOT_SUPPORTED))
    );

    // the library's own codes (a lost connection, -61) are the core's
    let t = pair.send(b, &register(&[-61], vec![]));
    pair.drive();
    assert!(asked(&mut pair).is_empty());
    assert_eq!(pair.reply(b, t), Some(Reply::Status(0)));
}

/// Under `Local` (the default) the host hears of no registration.
#[test]
fn by_default_the_core_registers_everything() {
    let (mut pair, [a, _]) = pair(Registering::Local);
    let t = pair.send(a, &register(&[NODE_DOWN], vec![]));
    pair.drive();
    assert!(asked(&mut pair).is_empty());
    assert_eq!(pair.reply(a, t), Some(Reply::Status(0)));
}
