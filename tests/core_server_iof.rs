//! IO forwarding in the server core (src/server/iof.rs), against our
//! client cores in memory (test-kit/src/pair.rs): pulls, matching as
//! libpmix 4.2.2 matches (channels, sources, never back to the source),
//! output kept until a pull and sent after its reply, deregistration by
//! id, a host that decides pulls and takes stdin, lost and finalized
//! registrants. The bytes against libpmix 4.2.2's server:
//! pmixw/tests/core_server_iof_capture.rs.

use pmix_test_kit::pair::Pair;

use bytes::Bytes;
use pmix_codec::msg::{IofData, Reply, Request};
use pmix_types::names::iof_channel::{STDDIAG, STDERR, STDIN, STDOUT};
use pmix_types::status::codes;
use pmix_types::{Info, Proc, Value, RANK_WILDCARD};
use pmix_wire::client::Event;
use pmix_wire::server::iof::{MAX_PULLS_PER_CONN, MAX_PULL_PROCS};
use pmix_wire::server::{HostEvent, IofMode};

fn pull(ns: &str, channels: u16, local_id: u64) -> Request {
    Request::IofPull {
        procs: vec![Proc::new(ns, RANK_WILDCARD)],
        directives: vec![],
        channels,
        local_id,
    }
}

/// The output peer `p` got, in order: (refid, source, channel, text).
fn outputs(pair: &mut Pair, p: usize) -> Vec<(u64, Proc, u16, String)> {
    let ev = std::mem::take(&mut pair.peers[p].events);
    let (out, rest): (Vec<_>, Vec<_>) = ev
        .into_iter()
        .partition(|(_, e)| matches!(e, Event::Output(_)));
    pair.peers[p].events = rest;
    out.into_iter()
        .map(|(_, e)| match e {
            Event::Output(IofData {
                source,
                channel,
                refid,
                data,
                ..
            }) => (
                refid,
                source,
                channel,
                String::from_utf8_lossy(&data).into(),
            ),
            _ => unreachable!(),
        })
        .collect()
}

fn deliver(pair: &mut Pair, src: Proc, ch: u16, text: &str) -> i32 {
    let st = pair
        .server
        .iof_deliver(&src, ch, Bytes::from(text.to_string()), vec![]);
    pair.drive();
    st
}

#[test]
fn pulls_get_the_output_they_match_and_kept_output_after_their_reply() {
    let mut pair = Pair::new(&[("job", 2), ("watch", 1)]);
    let w = pair.init("watch", 0);
    let r0 = pair.init("job", 0);
    let (j0, j1) = (Proc::new("job", 0), Proc::new("job", 1));

    // before anyone pulls: kept
    assert_eq!(deliver(&mut pair, j0.clone(), STDOUT, "early"), 0);
    let t = pair.send(w, &pull("job", STDOUT | STDERR, 7));
    pair.drive();
    let reply_seq = pair.peers[w]
        .events
        .iter()
        .find(|(_, e)| matches!(e, Event::Reply { tag, .. } if *tag == t))
        .map(|(s, _)| *s)
        .expect("the pull's reply");
    let out_seq = pair.peers[w]
        .events
        .iter()
        .find(|(_, e)| matches!(e, Event::Output(_)))
        .map(|(s, _)| *s)
        .expect("the kept output");
    assert!(reply_seq < out_seq, "the kept output follows the reply");
    assert_eq!(
        pair.reply(w, t),
        Some(Reply::Id {
            status: 0,
            id: Some(1)
        }),
        "the first id is 1, as libpmix 4.2.2's"
    );
    assert_eq!(
        outputs(&mut pair, w),
        [(7, j0.clone(), STDOUT, "early".into())]
    );

    // what matches goes, what does not is kept; stdin is refused
    assert_eq!(deliver(&mut pair, j1.clone(), STDERR, "e1"), 0);
    assert_eq!(deliver(&mut pair, j0.clone(), STDDIAG, "diag"), 0);
    assert_eq!(deliver(&mut pair, Proc::new("other", 0), STDOUT, "o"), 0);
    assert_eq!(
        deliver(&mut pair, j0.clone(), STDIN, "in"),
        codes::PMIX_ERR_BAD_PARAM
    );
    assert_eq!(
        outputs(&mut pair, w),
        [(7, j1.clone(), STDERR, "e1".into())]
    );

    // a rank of the job pulls it too: never its own output, each with its id
    let t = pair.send(r0, &pull("job", STDOUT, 3));
    pair.drive();
    assert_eq!(
        pair.reply(r0, t),
        Some(Reply::Id {
            status: 0,
            id: Some(2)
        })
    );
    assert!(
        outputs(&mut pair, r0).is_empty(),
        "the kept output matches no channel of it"
    );
    deliver(&mut pair, j0.clone(), STDOUT, "x");
    deliver(&mut pair, j1.clone(), STDOUT, "y");
    assert_eq!(
        outputs(&mut pair, w),
        [
            (7, j0.clone(), STDOUT, "x".into()),
            (7, j1.clone(), STDOUT, "y".into())
        ]
    );
    assert_eq!(
        outputs(&mut pair, r0),
        [(3, j1.clone(), STDOUT, "y".into())]
    );

    // deregistration: only of one's own ids
    let dereg = |id| Request::IofDereg {
        directives: vec![],
        remote_id: id,
    };
    let t = pair.send(r0, &dereg(1));
    pair.drive();
    assert_eq!(
        pair.reply(r0, t),
        Some(Reply::Status(codes::PMIX_ERR_NOT_FOUND))
    );
    let t = pair.send(w, &dereg(1));
    pair.drive();
    assert_eq!(pair.reply(w, t), Some(Reply::Status(0)));
    assert_eq!(pair.server.iof_registrations(), 1);
    deliver(&mut pair, j1.clone(), STDOUT, "z");
    assert!(outputs(&mut pair, w).is_empty(), "deregistered");
    assert_eq!(
        outputs(&mut pair, r0),
        [(3, j1.clone(), STDOUT, "z".into())]
    );

    // a finalized registrant is dropped
    let fin = pair.round(&[r0], |_| Request::Finalize);
    assert_eq!(fin, [Reply::Status(0)]);
    assert_eq!(pair.server.iof_registrations(), 0);
    for p in [w, r0] {
        assert_eq!(pair.peers[p].error, None);
    }
}

#[test]
fn a_host_decides_pulls_and_takes_stdin() {
    let mut pair = Pair::new(&[("job", 1), ("watch", 1)]);
    pair.server.set_iof_pull(IofMode::AskHost);
    pair.server.set_iof_stdin(IofMode::AskHost);
    let w = pair.init("watch", 0);
    let j0 = Proc::new("job", 0);
    let t = pair.send(
        w,
        &Request::IofPull {
            procs: vec![j0.clone()],
            directives: vec![Info::new("pmix.iof.tag", Value::Bool(true))],
            channels: STDOUT,
            local_id: 1,
        },
    );
    pair.drive();
    let request = match pair.host.pop() {
        Some(HostEvent::IofPull {
            request,
            requester,
            procs,
            channels: STDOUT,
            directives,
            stop: false,
        }) => {
            assert_eq!(requester, Proc::new("watch", 0));
            assert_eq!(procs, std::slice::from_ref(&j0));
            assert_eq!(directives[0].key.as_bytes(), b"pmix.iof.tag");
            request
        }
        other => panic!("{other:?}"),
    };
    // nothing is sent to a pull the host has not accepted: kept
    deliver(&mut pair, j0.clone(), STDOUT, "while asked");
    assert!(pair.reply(w, t).is_none());
    assert!(outputs(&mut pair, w).is_empty());
    pair.server.iof_done(request, 0);
    pair.drive();
    assert!(matches!(
        pair.reply(w, t),
        Some(Reply::Id {
            status: 0,
            id: Some(_)
        })
    ));
    assert_eq!(
        outputs(&mut pair, w),
        [(1, j0.clone(), STDOUT, "while asked".into())]
    );

    // refused by the host: its status, and no registration
    let t = pair.send(w, &pull("job", STDERR, 2));
    pair.drive();
    let Some(HostEvent::IofPull { request, .. }) = pair.host.pop() else {
        panic!("{:?}", pair.host)
    };
    pair.server.iof_done(request, codes::PMIX_ERR_NOT_FOUND);
    pair.drive();
    assert_eq!(
        pair.reply(w, t),
        Some(Reply::Status(codes::PMIX_ERR_NOT_FOUND))
    );
    assert_eq!(pair.server.iof_registrations(), 1);

    // stdin
    let t = pair.send(
        w,
        &Request::IofPush {
            targets: vec![j0.clone()],
            directives: vec![],
            data: Some(Bytes::from_static(b"input\n")),
        },
    );
    pair.drive();
    let Some(HostEvent::Stdin {
        request,
        source,
        targets,
        data,
        ..
    }) = pair.host.pop()
    else {
        panic!("{:?}", pair.host)
    };
    assert_eq!((source, targets), (Proc::new("watch", 0), vec![j0.clone()]));
    assert_eq!(data.as_deref(), Some(&b"input\n"[..]));
    assert!(pair.reply(w, t).is_none(), "answered when the host is done");
    pair.server.iof_done(request, 0);
    pair.drive();
    assert_eq!(pair.reply(w, t), Some(Reply::Status(0)));

    // deregistration: the host is told to stop, as libpmix tells it
    let t = pair.send(
        w,
        &Request::IofDereg {
            directives: vec![],
            remote_id: 1,
        },
    );
    pair.drive();
    let Some(HostEvent::IofPull {
        request,
        procs,
        channels: 0,
        directives,
        stop: true,
        ..
    }) = pair.host.pop()
    else {
        panic!("{:?}", pair.host)
    };
    assert!(procs.is_empty());
    assert_eq!(directives.last().unwrap().key.as_bytes(), b"pmix.iof.stop");
    assert_eq!(pair.server.iof_registrations(), 0);
    pair.server.iof_done(request, 0);
    pair.drive();
    assert_eq!(pair.reply(w, t), Some(Reply::Status(0)));
    assert_eq!(pair.peers[w].error, None);
}

#[test]
fn without_a_host_for_them_pulls_and_stdin_are_not_supported() {
    let mut pair = Pair::new(&[("job", 1)]);
    let r = pair.init("job", 0);
    // the default: the core serves pulls, nobody takes stdin
    let push = Request::IofPush {
        targets: vec![Proc::new("job", 0)],
        directives: vec![],
        data: None,
    };
    let st = pair.round(&[r], |_| push.clone());
    assert_eq!(st, [Reply::Status(codes::PMIX_ERR_NOT_SUPPORTED)]);
    pair.server.set_iof_pull(IofMode::NotSupported);
    let st = pair.round(&[r], |_| pull("job", STDOUT, 1));
    assert_eq!(st, [Reply::Status(codes::PMIX_ERR_NOT_SUPPORTED)]);
    assert_eq!(pair.server.iof_registrations(), 0);
}

#[test]
fn a_lost_registrant_is_dropped_and_a_connection_holds_a_bounded_number_of_pulls() {
    let mut pair = Pair::new(&[("job", 1), ("watch", 1)]);
    let w = pair.init("watch", 0);
    for i in 0..MAX_PULLS_PER_CONN as u64 {
        pair.send(w, &pull("job", STDOUT, i));
    }
    pair.drive();
    assert_eq!(pair.server.iof_registrations(), MAX_PULLS_PER_CONN);
    let st = pair.round(&[w], |_| pull("job", STDOUT, 999));
    assert_eq!(st, [Reply::Status(codes::PMIX_ERR_OUT_OF_RESOURCE)]);
    let conn = pair.peers[w].conn;
    pair.server.closed(conn);
    pair.peers[w].closed = true;
    assert_eq!(pair.server.iof_registrations(), 0);
    // a pull naming too many processes is refused too
    let w = pair.init("watch", 0);
    let many = Request::IofPull {
        procs: (0..=MAX_PULL_PROCS as u32)
            .map(|r| Proc::new("job", r))
            .collect(),
        directives: vec![],
        channels: STDOUT,
        local_id: 1,
    };
    let st = pair.round(&[w], |_| many.clone());
    assert_eq!(st, [Reply::Status(codes::PMIX_ERR_OUT_OF_RESOURCE)]);
    assert_eq!(pair.server.iof_registrations(), 0);
    let st = pair.round(&[w], |_| pull("job", STDOUT, 2));
    assert!(matches!(st[0], Reply::Id { status: 0, .. }), "{st:?}");
    let conn = pair.peers[w].conn;
    pair.server.closed(conn);
    pair.peers[w].closed = true;
    assert_eq!(pair.server.iof_registrations(), 0);
    // nobody to send it to: kept, nothing written
    let before = pair.wire.len();
    deliver(&mut pair, Proc::new("job", 0), STDOUT, "to nobody");
    assert_eq!(pair.wire.len(), before);
}
