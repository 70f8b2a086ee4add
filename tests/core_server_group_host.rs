//! PMIx_Group_construct and destruct handed to the host (issue #35,
//! `Grouping::Host`, as libpmix 4.2.2's server calls its host's `group`)
//! or completed by the core (`Local`, the default), against our client
//! cores in memory (test-kit/src/pair.rs). What a member gets back is
//! decoded from the server's bytes by the client core.

use pmix_test_kit::pair;

use pair::Pair;
use pmix_codec::msg::{GroupReply, Reply, Request};
use pmix_types::enums::Scope;
use pmix_types::status::codes;
use pmix_types::{Info, Proc, Rank, Value};
use pmix_wire::server::group::NO_CONTEXT_ID;
use pmix_wire::server::{Grouping, HostEvent, NodeMap};

fn all(ns: &str) -> Proc {
    Proc::at(ns, Rank::WILDCARD)
}

fn construct(group: &str, procs: &[Proc], info: Vec<Info>) -> Request {
    Request::GroupConstruct {
        group: Some(group.into()),
        procs: procs.to_vec(),
        info,
    }
}

fn destruct(group: &str) -> Request {
    // as a 4.x client packs it: no members
    Request::GroupDestruct {
        group: Some(group.into()),
        procs: None,
        info: vec![],
    }
}

fn ctxid_asked() -> Vec<Info> {
    vec![Info::new("pmix.grp.actxid", Value::Bool(true))]
}

fn group_ok(ctxid: u64) -> Option<Reply> {
    Some(Reply::Group {
        status: 0,
        body: GroupReply::V4 { ctxid },
    })
}

/// Job "g" of two ranks, both here; job "sp" of four, 0 and 1 here (node
/// n0; `me` 0) or 2 and 3 here (`me` 1), the others on the other node.
/// Every local rank connected (libpmix 4.2.2's form of replies: v41).
fn server(mode: Grouping, me: usize) -> (Pair, [usize; 4]) {
    let mut pair = Pair::new(&[("g", 2), ("sp", 4)]);
    pair.server.set_grouping(mode);
    let map = NodeMap {
        nodes: vec![("n0".into(), vec![0, 1]), ("n1".into(), vec![2, 3])],
        me,
    };
    pair.server.set_nodes("sp", map);
    let base = 2 * me as u32;
    let ps = [("g", 0), ("g", 1), ("sp", base), ("sp", base + 1)].map(|(ns, r)| pair.init(ns, r));
    std::mem::take(&mut pair.host);
    (pair, ps)
}

/// The group upcalls raised since the test last looked, taken.
fn upcalls(pair: &mut Pair) -> Vec<HostEvent> {
    std::mem::take(&mut pair.host)
        .into_iter()
        .filter(|e| {
            matches!(
                e,
                HostEvent::GroupConstruct { .. } | HostEvent::GroupDestruct { .. }
            )
        })
        .collect()
}

fn keys(v: &[Info]) -> Vec<String> {
    v.iter().map(|i| i.key.to_string()).collect()
}

/// `ps` send `req`; the upcall it raises (exactly one) and each tag.
fn round(pair: &mut Pair, ps: &[usize], req: &Request) -> (HostEvent, Vec<u32>) {
    let mut tags = Vec::new();
    for (i, p) in ps.iter().enumerate() {
        tags.push(pair.send(*p, req));
        pair.drive();
        let ev = upcalls(pair);
        if i + 1 < ps.len() {
            assert!(
                ev.is_empty(),
                "the host before every member called in: {ev:?}"
            );
        } else {
            let [e] = <[HostEvent; 1]>::try_from(ev).unwrap_or_else(|v| panic!("{v:?}"));
            return (e, tags);
        }
    }
    unreachable!("no members")
}

/// A construct asking for a context id: once both members are in (not
/// before), the host is handed the group, its members as given and the
/// first caller's attributes with libpmix 4.2.2's additions; the members
/// wait for its answer, whose context id they get. A destruct is the
/// host's too; once it succeeded the group is gone (a second destruct is
/// NOT_FOUND, as from libpmix).
#[test]
fn a_construct_asking_for_a_context_id_is_the_hosts_once_every_member_called_in() {
    let (mut pair, [a, b, ..]) = server(Grouping::Host, 0);
    let (ev, ts) = round(
        &mut pair,
        &[a, b],
        &construct("gx", &[all("g")], ctxid_asked()),
    );
    let HostEvent::GroupConstruct {
        request,
        group,
        procs,
        info,
    } = ev
    else {
        panic!("{ev:?}")
    };
    assert_eq!(group, "gx");
    assert_eq!(procs, [all("g")]);
    assert_eq!(
        keys(&info),
        [
            "pmix.grp.actxid",
            "pmix.sorted.parr",
            "pmix.loc.col.st",
            "pmix.grp.endpt"
        ]
    );
    assert_eq!(info[2].value, Value::Status(codes::PMIX_SUCCESS));
    assert!(matches!(&info[3].value, Value::ByteObject(b) if !b.0.is_empty()));
    for (p, t) in [a, b].into_iter().zip(&ts) {
        assert_eq!(pair.reply(p, *t), None, "member {p} waits for the host");
    }
    let ctx = [Info::new("pmix.grp.ctxid", Value::Size(42))];
    assert!(pair.server.group_done(request, codes::PMIX_SUCCESS, &ctx));
    assert!(
        !pair.server.group_done(request, codes::PMIX_SUCCESS, &ctx),
        "answered twice"
    );
    pair.drive();
    for (p, t) in [a, b].into_iter().zip(&ts) {
        assert_eq!(pair.reply(p, *t), group_ok(42), "member {p}");
    }
    // the destruct: the members as the construct named them
    let (ev, ts) = round(&mut pair, &[a, b], &destruct("gx"));
    let HostEvent::GroupDestruct {
        request,
        group,
        procs,
        info,
    } = ev
    else {
        panic!("{ev:?}")
    };
    assert_eq!((group.as_str(), procs), ("gx", vec![all("g")]));
    assert_eq!(keys(&info), ["pmix.loc.col.st"]);
    assert_eq!(pair.reply(a, ts[0]), None, "waits for the host");
    assert!(pair.server.group_done(request, codes::PMIX_SUCCESS, &[]));
    pair.drive();
    for (p, t) in [a, b].into_iter().zip(&ts) {
        assert_eq!(pair.reply(p, *t), Some(Reply::Status(0)));
    }
    let t = pair.send(a, &destruct("gx"));
    pair.drive();
    assert_eq!(
        pair.reply(a, t),
        Some(Reply::Status(codes::PMIX_ERR_NOT_FOUND))
    );
    assert!(upcalls(&mut pair).is_empty());
}

/// The host's failure of a construct reaches every member (with no
/// context id after it, as libpmix 4.2.2's server sends it) and the group
/// is not made; its failure of a destruct reaches every member and the
/// group stays (the next destruct goes to the host again).
#[test]
fn the_hosts_failures_reach_every_member() {
    let (mut pair, [a, b, ..]) = server(Grouping::Host, 0);
    let (ev, ts) = round(
        &mut pair,
        &[a, b],
        &construct("gf", &[all("g")], ctxid_asked()),
    );
    let HostEvent::GroupConstruct { request, .. } = ev else {
        panic!("{ev:?}")
    };
    assert!(pair
        .server
        .group_done(request, codes::PMIX_ERR_NO_PERMISSIONS, &[]));
    pair.drive();
    for (p, t) in [a, b].into_iter().zip(&ts) {
        assert_eq!(
            pair.reply(p, *t),
            Some(Reply::Group {
                status: codes::PMIX_ERR_NO_PERMISSIONS,
                body: GroupReply::V4 {
                    ctxid: NO_CONTEXT_ID
                }
            })
        );
    }
    let t = pair.send(a, &destruct("gf"));
    pair.drive();
    assert_eq!(
        pair.reply(a, t),
        Some(Reply::Status(codes::PMIX_ERR_NOT_FOUND)),
        "no group was made"
    );
    // made, then a destruct the host fails
    let (ev, _) = round(
        &mut pair,
        &[a, b],
        &construct("gf", &[all("g")], ctxid_asked()),
    );
    let HostEvent::GroupConstruct { request, .. } = ev else {
        panic!("{ev:?}")
    };
    assert!(pair.server.group_done(request, codes::PMIX_SUCCESS, &[]));
    pair.drive();
    let (ev, ts) = round(&mut pair, &[a, b], &destruct("gf"));
    let HostEvent::GroupDestruct { request, .. } = ev else {
        panic!("{ev:?}")
    };
    assert!(pair
        .server
        .group_done(request, codes::PMIX_ERR_TIMEOUT, &[]));
    pair.drive();
    for (p, t) in [a, b].into_iter().zip(&ts) {
        assert_eq!(
            pair.reply(p, *t),
            Some(Reply::Status(codes::PMIX_ERR_TIMEOUT))
        );
    }
    let (ev, _) = round(&mut pair, &[a, b], &destruct("gf"));
    assert!(matches!(ev, HostEvent::GroupDestruct { ref group, .. } if group == "gf"));
}

/// Under `Host`, a construct of this node's ranks alone without a
/// context id is the core's (libpmix 4.2.2 does not call its host for it;
/// no context id: NO_CONTEXT_ID), as is one `pmix.grp.lcl` says is local;
/// its destruct is the host's, as every destruct is. A construct over a
/// job with ranks on the other node is the host's without a context id.
#[test]
fn a_local_construct_is_the_cores_one_spanning_nodes_the_hosts() {
    let (mut pair, [a, b, c, d]) = server(Grouping::Host, 0);
    let r = pair.round(&[a, b], |_| construct("gl", &[all("g")], vec![]));
    assert_eq!(
        r,
        [
            group_ok(NO_CONTEXT_ID).unwrap(),
            group_ok(NO_CONTEXT_ID).unwrap()
        ]
    );
    assert!(upcalls(&mut pair).is_empty(), "the core's");
    let (ev, _) = round(&mut pair, &[a, b], &destruct("gl"));
    assert!(matches!(ev, HostEvent::GroupDestruct { ref group, .. } if group == "gl"));
    let (ev, ts) = round(&mut pair, &[c, d], &construct("gs", &[all("sp")], vec![]));
    let HostEvent::GroupConstruct {
        request,
        group,
        procs,
        ..
    } = ev
    else {
        panic!("{ev:?}")
    };
    assert_eq!((group.as_str(), procs), ("gs", vec![all("sp")]));
    assert!(pair.server.group_done(request, codes::PMIX_SUCCESS, &[]));
    pair.drive();
    for (p, t) in [c, d].into_iter().zip(&ts) {
        assert_eq!(pair.reply(p, *t), group_ok(NO_CONTEXT_ID));
    }
    // said to be local: the core's, spanning or not
    let lcl = vec![Info::new("pmix.grp.lcl", Value::Bool(true))];
    let r = pair.round(&[c, d], |_| construct("gq", &[all("sp")], lcl.clone()));
    assert_eq!(
        r,
        [
            group_ok(NO_CONTEXT_ID).unwrap(),
            group_ok(NO_CONTEXT_ID).unwrap()
        ]
    );
    assert!(upcalls(&mut pair).is_empty(), "the core's");
}

/// Under `Local` (the default) the host sees no group operation: the
/// core assigns the context id, and a destruct of a group it does not
/// know completes over the caller's job, as before.
#[test]
fn under_local_the_core_completes_every_group_operation() {
    let (mut pair, [a, b, c, d]) = server(Grouping::Local, 0);
    let r = pair.round(&[a, b], |_| construct("gx", &[all("g")], ctxid_asked()));
    assert_eq!(r, [group_ok(1).unwrap(), group_ok(1).unwrap()]);
    let r = pair.round(&[c, d], |_| construct("gs", &[all("sp")], vec![]));
    assert_eq!(
        r,
        [
            group_ok(NO_CONTEXT_ID).unwrap(),
            group_ok(NO_CONTEXT_ID).unwrap()
        ]
    );
    let r = pair.round(&[a, b], |_| destruct("gx"));
    assert_eq!(r, [Reply::Status(0), Reply::Status(0)]);
    let r = pair.round(&[a, b], |_| destruct("never"));
    assert_eq!(r, [Reply::Status(0), Reply::Status(0)]);
    assert!(upcalls(&mut pair).is_empty());
}

/// The `pmix.grp.endpt` one server hands its host is what another server
/// reads back when its host returns it: after the construct over "sp"
/// spanning both nodes, node n0's rank 0 reads a key rank 2 committed on
/// node n1 without asking the host for it.
#[test]
fn the_endpoint_data_one_server_hands_its_host_another_reads_back() {
    let (mut far, [.., c2, d2]) = server(Grouping::Host, 1);
    far.core(c2).put(
        Scope::GLOBAL,
        "far.key",
        Value::String(Some("from n1".into())),
    );
    let commit = far.core(c2).commit_request().unwrap();
    far.send(c2, &commit);
    far.drive();
    let (ev, _) = round(&mut far, &[c2, d2], &construct("gs", &[all("sp")], vec![]));
    let HostEvent::GroupConstruct { info, .. } = ev else {
        panic!("{ev:?}")
    };
    let endpt = info
        .into_iter()
        .find(|i| i.key.to_string() == "pmix.grp.endpt")
        .expect("pmix.grp.endpt");

    let (mut pair, [.., c, d]) = server(Grouping::Host, 0);
    let (ev, ts) = round(&mut pair, &[c, d], &construct("gs", &[all("sp")], vec![]));
    let HostEvent::GroupConstruct { request, .. } = ev else {
        panic!("{ev:?}")
    };
    assert!(pair
        .server
        .group_done(request, codes::PMIX_SUCCESS, &[endpt]));
    pair.drive();
    assert_eq!(pair.reply(c, ts[0]), group_ok(NO_CONTEXT_ID));
    assert_eq!(
        pair.get(c, &Proc::new("sp", 2), "far.key"),
        Ok(Value::String(Some("from n1".into())))
    );
    let asked = std::mem::take(&mut pair.host);
    assert!(
        !asked
            .iter()
            .any(|e| matches!(e, HostEvent::DirectModex { .. })),
        "{asked:?}"
    );
}

/// An answer for no group operation out with the host changes nothing.
#[test]
fn an_answer_for_no_request_is_ignored() {
    let (mut pair, _) = server(Grouping::Host, 0);
    assert!(!pair.server.group_done(77, codes::PMIX_SUCCESS, &[]));
    pair.drive();
    assert!(pair.host.is_empty());
}
