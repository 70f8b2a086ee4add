//! Protocol logic of the server core against our client cores, in memory
//! on a virtual clock (test-kit/src/pair.rs): wireup, deadlines, event
//! order, forged handshakes. Deterministic, no sockets, no sleeps.

use pmix_test_kit::pair;

use pair::{Pair, Procs};
use pmix_codec::msg::{Reply, Request};
use pmix_types::enums::{DataRange, Scope};
use pmix_types::{Info, Proc, Value, RANK_WILDCARD};
use pmix_wire::client::Event;
use pmix_wire::server::{HostEvent, PeerInfo, Refusal, Transmit};
use std::time::Duration;

fn fence(ns: &str) -> Request {
    Request::Fence {
        procs: vec![Proc::new(ns, RANK_WILDCARD)],
        info: vec![Info::new("pmix.collect", Value::Bool(true))],
    }
}

fn ok(r: &Reply) -> bool {
    matches!(r, Reply::Status(0))
}

/// Eight ranks: init, put, commit, fence, GET of the next rank's key,
/// finalize. Returns everything the server wrote, in order.
fn wireup8() -> (Pair, Vec<Transmit>) {
    let mut pair = Pair::new(&[("w8", 8)]);
    let ps: Vec<usize> = (0..8).map(|r| pair.init("w8", r)).collect();
    for (r, &p) in ps.iter().enumerate() {
        pair.core(p)
            .put(Scope::GLOBAL, "w8.key", Value::Uint32(1000 + r as u32));
    }
    // each core builds its own COMMIT from its puts
    let tags: Vec<u32> = ps
        .iter()
        .map(|&p| {
            let req = pair.core(p).commit_request().expect("commit request");
            pair.send(p, &req)
        })
        .collect();
    pair.drive();
    for (&p, t) in ps.iter().zip(tags) {
        assert!(ok(&pair.reply(p, t).expect("commit reply")));
    }
    // the fence completes only when the last rank calls in
    let tags: Vec<u32> = ps.iter().map(|&p| pair.send(p, &fence("w8"))).collect();
    pair.drive();
    for (&p, t) in ps.iter().zip(tags) {
        let r = pair.reply(p, t).expect("fence reply");
        assert!(ok(&r) || matches!(r, Reply::Get { status: 0, .. }), "{r:?}");
    }
    for (r, &p) in ps.iter().enumerate() {
        let next = Proc::new("w8", ((r + 1) % 8) as u32);
        let v = pair.get(p, &next, "w8.key");
        assert_eq!(v, Ok(Value::Uint32(1000 + next.rank)), "rank {r}");
    }
    let fin = pair.round(&ps, |_| Request::Finalize);
    assert!(fin.iter().all(ok));
    for p in &ps {
        assert_eq!(pair.peers[*p].error, None);
    }
    let wire = pair.wire.clone();
    (pair, wire)
}

#[test]
fn eight_clients_wire_up_with_fence_and_get() {
    let (mut pair, _) = wireup8();
    let connected = pair
        .host
        .iter()
        .filter(|e| matches!(e, HostEvent::Connected(..)))
        .count();
    let finalized: Vec<u32> = pair
        .host
        .iter()
        .filter_map(|e| match e {
            HostEvent::Finalized(p) => Some(p.rank),
            _ => None,
        })
        .collect();
    assert_eq!(connected, 8);
    assert_eq!(finalized, (0..8).collect::<Vec<_>>());
    assert!(pair.server.poll_refusal().is_none());
}

#[test]
fn the_same_wireup_writes_the_same_bytes_every_time() {
    let (_, a) = wireup8();
    let (_, b) = wireup8();
    assert!(!a.is_empty());
    assert_eq!(a, b);
}

#[test]
fn a_silent_peer_is_dropped_when_its_handshake_deadline_passes_on_the_virtual_clock() {
    let mut pair = Pair::new(&[("hd", 1)]);
    let timeout = pair.server.limits().handshake_timeout;
    let silent = pair.raw(PeerInfo::default());
    // half a handshake header: still not a handshake
    pair.write_raw(silent, &[0u8; 8]);
    assert_eq!(pair.server.poll_timeout(), Some(pair.now + timeout));
    pair.advance(timeout - Duration::from_millis(1));
    assert!(!pair.peers[silent].closed);
    assert_eq!(pair.server.pending_handshakes(), 1);
    pair.advance(Duration::from_millis(1));
    assert!(pair.peers[silent].closed);
    assert_eq!(pair.server.pending_handshakes(), 0);
    assert_eq!(pair.server.connections(), 0);
    let (conn, why) = pair.server.poll_refusal().expect("the refusal is kept");
    assert_eq!(conn, pair.peers[silent].conn);
    assert_eq!(why, Refusal::HandshakeTimeout(timeout));
    // a real client, meanwhile, connects well before its deadline
    let c = pair.client("hd", 0);
    pair.drive();
    assert!(pair.connected(c));
    assert_eq!(pair.server.pending_handshakes(), 0);
    pair.advance(timeout * 2);
    assert!(!pair.peers[c].closed);
}

#[test]
fn the_client_core_times_out_a_request_and_drops_its_late_reply() {
    let mut pair = Pair::new(&[("ct", 2)]);
    let a = pair.init("ct", 0);
    pair.init("ct", 1);
    pair.peers[a].events.clear();
    // rank 1 never commits: the server holds the GET for its default wait
    let req = Request::Get {
        nspace: Some("ct".into()),
        rank: 1,
        info: vec![],
        key: Some(Some("never".into())),
    };
    let by = pair.now + Duration::from_millis(500);
    let tag = pair.core(a).send_by(&req, by).unwrap().unwrap();
    pair.drive();
    assert_eq!(pair.core(a).poll_timeout(), Some(by));
    pair.advance(Duration::from_millis(499));
    assert!(pair.peers[a].events.is_empty());
    pair.advance(Duration::from_millis(1));
    let evs: Vec<&Event> = pair.peers[a].events.iter().map(|e| &e.1).collect();
    assert_eq!(evs, [&Event::TimedOut { tag: Some(tag) }]);
    // the server's own wait ends later; its reply reaches a core that no
    // longer waits, and is dropped without error
    pair.advance(pmix_wire::server::DEFAULT_GET_WAIT);
    assert_eq!(pair.peers[a].events.len(), 1);
    assert_eq!(pair.peers[a].error, None);
    assert!(pair.core(a).poll_timeout().is_none());
}

#[test]
fn a_client_core_whose_handshake_is_never_answered_times_out() {
    let mut pair = Pair::new(&[("nh", 1)]);
    let c = pair.client("nh", 0);
    // its connect request is never delivered: nobody answers
    pair.core(c).poll_transmit();
    pair.advance(Duration::from_secs(10));
    let evs: Vec<&Event> = pair.peers[c].events.iter().map(|e| &e.1).collect();
    assert!(evs.contains(&&Event::TimedOut { tag: None }), "{evs:?}");
}

#[test]
fn events_reach_clients_in_the_order_they_registered() {
    let mut pair = Pair::new(&[("ev", 5)]);
    let ps: Vec<usize> = (0..5).map(|r| pair.init("ev", r)).collect();
    // registration order 3, 0, 2, 1 (connection order is 0..5)
    for r in [3usize, 0, 2, 1] {
        let t = pair.send(
            ps[r],
            &Request::RegEvents {
                codes: vec![],
                info: vec![],
            },
        );
        pair.drive();
        assert!(ok(&pair.reply(ps[r], t).unwrap()));
    }
    let code = -1234;
    let t = pair.send(
        ps[4],
        &Request::Notify {
            status: code,
            range: pmix_types::names::data_range::NAMESPACE,
            info: vec![],
        },
    );
    pair.drive();
    assert!(ok(&pair.reply(ps[4], t).unwrap()));
    let mut arrivals: Vec<(u64, usize)> = Vec::new();
    for (r, &p) in ps.iter().enumerate() {
        for (seq, e) in &pair.peers[p].events {
            if let Event::Notice(n) = e {
                assert_eq!(n.status, code);
                assert_eq!(n.source, Proc::new("ev", 4));
                arrivals.push((*seq, r));
            }
        }
    }
    arrivals.sort();
    let order: Vec<usize> = arrivals.into_iter().map(|a| a.1).collect();
    assert_eq!(order, [3, 0, 2, 1]);
    // one that leaves keeps the others' order; one that registers later comes last
    pair.peers[ps[0]].events.clear();
    let gone = pair.peers[ps[2]].conn;
    pair.server.closed(gone);
    pair.peers[ps[2]].closed = true;
    let t = pair.send(
        ps[4],
        &Request::RegEvents {
            codes: vec![code],
            info: vec![],
        },
    );
    pair.drive();
    assert!(ok(&pair.reply(ps[4], t).unwrap()));
    for p in &ps {
        pair.peers[*p].events.clear();
    }
    pair.server
        .notify(code, &Proc::new("ev", 0), DataRange::GLOBAL, vec![]);
    pair.drive();
    let mut arrivals: Vec<(u64, usize)> = Vec::new();
    for (r, &p) in ps.iter().enumerate() {
        for (seq, e) in &pair.peers[p].events {
            if matches!(e, Event::Notice(_)) {
                arrivals.push((*seq, r));
            }
        }
    }
    arrivals.sort();
    let order: Vec<usize> = arrivals.into_iter().map(|a| a.1).collect();
    assert_eq!(order, [3, 0, 1, 4]);
}

/// A job of two ranks whose processes the host launched (pids 100, 101),
/// with a verifier that knows which process holds which socket.
fn verified_pair() -> (Pair, Procs) {
    let mut pair = Pair::new(&[("fj", 2)]);
    let procs = Procs::default();
    procs.add(1, 100, 1); // rank 0's socket, its launched process
    procs.add(2, 555, 101); // rank 1's socket, a child of its process
    procs.add(66, 666, 1); // the forger's socket
    pair.server.set_verifier(Box::new(procs.clone()));
    pair.server.set_rank_pid("fj", 0, 100);
    pair.server.set_rank_pid("fj", 1, 101);
    (pair, procs)
}

fn sock(inode: u64) -> PeerInfo {
    PeerInfo {
        uid: Some(pair::UID),
        inode: Some(inode),
    }
}

/// Both real ranks fence and read each other's data.
fn job_completes(pair: &mut Pair, r0: usize, r1: usize) {
    for (p, v) in [(r0, 7u32), (r1, 8)] {
        pair.core(p).put(Scope::GLOBAL, "fj.k", Value::Uint32(v));
        let req = pair.core(p).commit_request().unwrap();
        let t = pair.send(p, &req);
        pair.drive();
        assert!(ok(&pair.reply(p, t).unwrap()));
    }
    let rs = pair.round(&[r0, r1], |_| fence("fj"));
    assert!(rs
        .iter()
        .all(|r| ok(r) || matches!(r, Reply::Get { status: 0, .. })));
    assert_eq!(
        pair.get(r0, &Proc::new("fj", 1), "fj.k"),
        Ok(Value::Uint32(8))
    );
    assert_eq!(
        pair.get(r1, &Proc::new("fj", 0), "fj.k"),
        Ok(Value::Uint32(7))
    );
}

#[test]
fn a_forged_handshake_for_a_connected_rank_is_refused_and_the_rank_carries_on() {
    let (mut pair, _) = verified_pair();
    let r0 = pair.client_as("fj", 0, sock(1));
    pair.drive();
    assert!(pair.connected(r0));
    let forger = pair.client_as("fj", 0, sock(66));
    pair.drive();
    assert!(pair.peers[forger].closed);
    assert!(!pair.connected(forger));
    assert!(matches!(
        pair.server.poll_refusal(),
        Some((c, Refusal::NotTheRank { launched: 100, .. })) if c == pair.peers[forger].conn
    ));
    let t = pair.send(r0, &Request::Req);
    pair.drive();
    assert!(pair.reply(r0, t).is_some());
    let r1 = pair.init("fj", 1);
    // (rank 1 without a known socket: unverifiable, served as libpmix does)
    job_completes(&mut pair, r0, r1);
    assert!(!pair.peers[r0].closed);
}

#[test]
fn a_forged_handshake_for_a_rank_not_yet_connected_is_refused_and_never_locks_it_out() {
    let (mut pair, _) = verified_pair();
    let forger = pair.client_as("fj", 1, sock(66));
    pair.drive();
    assert!(pair.peers[forger].closed);
    assert!(matches!(
        pair.server.poll_refusal(),
        Some((_, Refusal::NotTheRank { launched: 101, .. }))
    ));
    let r0 = pair.client_as("fj", 0, sock(1));
    let r1 = pair.client_as("fj", 1, sock(2));
    pair.drive();
    assert!(pair.connected(r0) && pair.connected(r1));
    for p in [r0, r1] {
        let t = pair.send(p, &Request::Req);
        pair.drive();
        assert!(pair.reply(p, t).is_some());
    }
    job_completes(&mut pair, r0, r1);
    assert!(pair.server.poll_refusal().is_none());
}

#[test]
fn an_unverifiable_early_claim_is_displaced_by_the_verified_rank() {
    let (mut pair, _) = verified_pair();
    // a socket the verifier cannot place: served, as libpmix would
    let stray = pair.client_as("fj", 1, PeerInfo::default());
    pair.drive();
    assert!(pair.connected(stray));
    let r1 = pair.client_as("fj", 1, sock(2));
    pair.drive();
    assert!(pair.connected(r1));
    assert!(pair.peers[stray].closed);
    assert!(matches!(
        pair.server.poll_refusal(),
        Some((c, Refusal::Displaced(_))) if c == pair.peers[stray].conn
    ));
    let r0 = pair.client_as("fj", 0, sock(1));
    pair.drive();
    for p in [r0, r1] {
        let t = pair.send(p, &Request::Req);
        pair.drive();
        assert!(pair.reply(p, t).is_some());
    }
    job_completes(&mut pair, r0, r1);
}

/// Issue #24 item 5: a helper the rank forked connects first as the same
/// rank; the rank itself is served beside it (libpmix serves both), the
/// job completes, and a claim that cannot be verified is still refused.
#[test]
fn a_rank_and_a_helper_it_forked_are_both_served() {
    let (mut pair, procs) = verified_pair();
    procs.add(3, 200, 100); // a helper forked by rank 0's process
    let helper = pair.client_as("fj", 0, sock(3));
    pair.drive();
    assert!(pair.connected(helper));
    let r0 = pair.client_as("fj", 0, sock(1));
    let r1 = pair.client_as("fj", 1, sock(2));
    pair.drive();
    assert!(pair.connected(r0) && pair.connected(r1));
    assert!(!pair.peers[helper].closed);
    assert!(pair.server.poll_refusal().is_none());
    job_completes(&mut pair, r0, r1);
    // beside the rank's verified processes, an unverifiable claim is not
    let stray = pair.client_as("fj", 0, PeerInfo::default());
    pair.drive();
    assert!(pair.peers[stray].closed);
    assert!(matches!(
        pair.server.poll_refusal(),
        Some((_, Refusal::RankTaken(_)))
    ));
    assert!(!pair.peers[helper].closed && !pair.peers[r0].closed);
}

/// A helper that finalized and went before its rank connected leaves the
/// rank dormant, not gone: a fence waits for the rank instead of failing,
/// and completes once it connects; after the rank too has finalized and
/// gone, the host's report of its process's exit fails what still waits.
#[test]
fn a_helper_gone_after_finalizing_leaves_the_rank_dormant_until_it_exits() {
    let (mut pair, procs) = verified_pair();
    procs.add(3, 200, 100);
    // rank 1 is already in the fence when rank 0's helper comes and goes
    let r1 = pair.client_as("fj", 1, sock(2));
    pair.drive();
    let t1 = pair.send(r1, &fence("fj"));
    pair.drive();
    let helper = pair.client_as("fj", 0, sock(3));
    pair.drive();
    let t = pair.send(helper, &Request::Finalize);
    pair.drive();
    assert!(ok(&pair.reply(helper, t).unwrap()));
    let conn = pair.peers[helper].conn;
    pair.server.closed(conn);
    pair.drive();
    assert_eq!(pair.reply(r1, t1), None, "the fence failed without rank 0");
    let r0 = pair.client_as("fj", 0, sock(1));
    pair.drive();
    assert!(pair.connected(r0));
    let t0 = pair.send(r0, &fence("fj"));
    pair.drive();
    assert!(ok(&pair.reply(r0, t0).unwrap()));
    assert!(ok(&pair.reply(r1, t1).unwrap()));
    // rank 0 finalizes and goes; rank 1 fences again: held until the host
    // says rank 0's process ended
    let t = pair.send(r0, &Request::Finalize);
    pair.drive();
    assert!(ok(&pair.reply(r0, t).unwrap()));
    let conn = pair.peers[r0].conn;
    pair.server.closed(conn);
    let t1 = pair.send(r1, &fence("fj"));
    pair.drive();
    assert_eq!(pair.reply(r1, t1), None);
    pair.server.set_proc_exit("fj", 0, 0);
    pair.drive();
    assert!(matches!(pair.reply(r1, t1), Some(Reply::Status(s)) if s != 0));
}

/// A rank whose process ended before it ever connected (killed before
/// PMIx_Init, or half-way into its handshake): the host's report of the
/// exit fails the fence its peers wait in, and a later one, as a lost
/// connection would (before, they waited until the launcher ended them).
#[test]
fn a_rank_that_exits_before_connecting_fails_the_fence_its_peers_wait_in() {
    let mut pair = Pair::new(&[("nc", 3)]);
    let r0 = pair.init("nc", 0);
    let r2 = pair.init("nc", 2);
    let t0 = pair.send(r0, &fence("nc"));
    pair.drive();
    assert_eq!(pair.reply(r0, t0), None, "waiting for ranks 1 and 2");
    pair.server.set_proc_exit("nc", 1, 137);
    pair.drive();
    assert!(matches!(pair.reply(r0, t0), Some(Reply::Status(s)) if s != 0));
    let t2 = pair.send(r2, &fence("nc"));
    pair.drive();
    assert!(matches!(pair.reply(r2, t2), Some(Reply::Status(s)) if s != 0));
}

/// Issue #24 item 4: what a process says of itself is accepted and acted
/// on: preemptible, its checkpoint method (a checkpoint then comes as its
/// signal through the host, and as the event), a cleanup for the host to
/// carry out at the job's end; what no host here does stays refused.
#[test]
fn job_control_records_what_a_process_says_of_itself() {
    use pmix_types::{DataArray, DataType};
    let mut pair = Pair::new(&[("jc", 1)]);
    let r0 = pair.init("jc", 0);
    let ask = |directives: Vec<Info>| Request::JobControl {
        targets: vec![],
        directives,
    };
    let method = Value::DataArray(Box::new(
        DataArray::new(
            DataType::Info,
            vec![
                Value::Info(Box::new(Info::new("pmix.jctrl.ckptsig", Value::Int(12)))),
                Value::Info(Box::new(Info::new(
                    "pmix.jctrl.ckptev",
                    Value::Status(pmix_types::status::codes::PMIX_JCTRL_CHECKPOINT),
                ))),
            ],
        )
        .unwrap(),
    ));
    let status = |r: Option<Reply>| match r {
        Some(Reply::Infos { status, .. }) | Some(Reply::Status(status)) => status,
        other => panic!("{other:?}"),
    };
    assert!(!pair.server.preemptible("jc", 0));
    let t = pair.send(
        r0,
        &ask(vec![
            Info::new("pmix.jctrl.preempt", Value::Bool(true)),
            Info::new("pmix.jctrl.ckmethod", method),
        ]),
    );
    pair.drive();
    assert_eq!(status(pair.reply(r0, t)), 0);
    assert!(pair.server.preemptible("jc", 0));
    let t = pair.send(
        r0,
        &ask(vec![Info::new(
            "pmix.jctrl.ckpt",
            Value::String(Some("ck1".into())),
        )]),
    );
    pair.drive();
    assert_eq!(status(pair.reply(r0, t)), 0);
    assert!(
        pair.host.iter().any(|e| matches!(
            e,
            HostEvent::Signal { targets, signal: 12, .. } if targets == &[Proc::new("jc", 0)]
        )),
        "{:?}",
        pair.host
    );
    let t = pair.send(
        r0,
        &ask(vec![Info::new(
            "pmix.reg.cleanup",
            Value::String(Some("/nowhere/a,/nowhere/b".into())),
        )]),
    );
    pair.drive();
    assert_eq!(status(pair.reply(r0, t)), 0);
    let c = pair.server.take_cleanups("jc");
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].files, vec!["/nowhere/a", "/nowhere/b"]);
    assert!(pair.server.take_cleanups("jc").is_empty());
    for (k, v) in [("pmix.jctrl.restart", "ck1"), ("pmix.jctrl.pvn", "image")] {
        let t = pair.send(r0, &ask(vec![Info::new(k, Value::String(Some(v.into())))]));
        pair.drive();
        assert_eq!(status(pair.reply(r0, t)), -47, "{k}");
    }
}

/// Issue #24: GROUP_CONSTRUCT's reply follows the release each member's
/// handshake announced. A group of a 4.2.2 client (v41) and a 6.0 client
/// (v51, announcing "6.0.0"), with a context id asked for: the first gets
/// the context id alone, the second the members and the id behind a BOOL
/// (spec-notes/commands.md); a destruct naming the members (as 5.0 and
/// later clients pack it) completes over them.
#[test]
fn group_construct_replies_in_each_members_release_form() {
    use pmix_codec::msg::GroupReply;
    use pmix_codec::{BufferType, Dialect, Format};
    let mut pair = Pair::new(&[("old", 1), ("new", 1)]);
    let old = pair.client_in("old", 0, PeerInfo::default(), Format::V41);
    let new = pair.client_in(
        "new",
        0,
        PeerInfo::default(),
        Format::new(Dialect::V51, BufferType::NonDesc),
    );
    pair.drive();
    let members = vec![Proc::new("new", 0), Proc::new("old", 0)];
    let construct = |_| Request::GroupConstruct {
        group: Some("mixed".into()),
        procs: members.clone(),
        info: vec![Info::new("pmix.grp.actxid", Value::Bool(true))],
    };
    let r = pair.round(&[old, new], construct);
    assert_eq!(
        r[0],
        Reply::Group {
            status: 0,
            body: GroupReply::V4 { ctxid: 1 }
        }
    );
    assert_eq!(
        r[1],
        Reply::Group {
            status: 0,
            body: GroupReply::V6 {
                members: members.clone(),
                ctxid: Some(1),
                info: None
            }
        }
    );
    let r = pair.round(&[old, new], |_| Request::GroupDestruct {
        group: Some("mixed".into()),
        procs: Some(members.clone()),
        info: vec![],
    });
    assert!(r.iter().all(ok), "{r:?}");
}

#[test]
fn a_closed_connection_leaves_nothing_waiting_in_any_area() {
    let mut pair = Pair::new(&[("td", 2)]);
    let a = pair.init("td", 0);
    // a GET for data rank 1 has not committed (the modex area waits), a
    // lookup for a key nobody published (pubsub waits), a spawn the host
    // is to answer (requests out with the host)
    let get = Request::Get {
        nspace: Some("td".into()),
        rank: 1,
        info: vec![],
        key: Some(Some("k".into())),
    };
    let lookup = Request::Lookup {
        uid: 0,
        keys: vec![Some("nobody.published".into())],
        info: vec![Info::new("pmix.wait", Value::Bool(true))],
    };
    let spawn = Request::Spawn {
        info: vec![],
        apps: vec![],
    };
    for r in [&get, &lookup, &spawn] {
        pair.send(a, r);
    }
    pair.drive();
    let request = pair
        .host
        .iter()
        .find_map(|e| match e {
            HostEvent::Spawn { request, .. } => Some(*request),
            _ => None,
        })
        .expect("the spawn upcall");
    let waits = pair
        .server
        .poll_timeout()
        .expect("the GET and the lookup wait");
    assert!(waits > pair.now);
    pair.server.closed(pair.peers[a].conn);
    // each area dropped what it held for the connection
    assert_eq!(pair.server.poll_timeout(), None);
    pair.server.spawned(request, Err(-1));
    pair.server
        .handle_timeout(waits + Duration::from_secs(3600));
    let after = pair::drain(&mut pair.server);
    assert_eq!(after.sends().count(), 0, "{:?}", after.transmits);
}

/// Issue #36 item 4: heartbeat monitoring on the core's own deadlines.
/// Rank 0 beats all along, rank 1 stops after its third beat, rank 2
/// (range PROC_LOCAL, no drops) never beats. The silent ranks are alerted
/// for, once each, after their windows and drops have passed on the
/// virtual clock; rank 2's alert reaches rank 2 alone, rank 1's the whole
/// namespace; no alert ever names rank 0. A monitor without a window is
/// BAD_PARAM; a cancel or a closed connection ends its monitors.
#[test]
fn heartbeat_monitors_alert_for_silent_ranks_alone() {
    use pmix_types::status::codes::PMIX_MONITOR_HEARTBEAT_ALERT as ALERT;
    let mut pair = Pair::new(&[("hb", 3)]);
    let ps: Vec<usize> = (0..3).map(|r| pair.init("hb", r)).collect();
    let status = |r: Option<Reply>| match r {
        Some(Reply::Infos { status, .. }) | Some(Reply::Status(status)) => status,
        other => panic!("{other:?}"),
    };
    let monitor = |btime: Option<u32>, drops: u32, range: Option<DataRange>| {
        let mut directives = vec![
            Info::new("pmix.monitor.id", Value::String(Some("m1".into()))),
            Info::new("pmix.monitor.bdrop", Value::Uint32(drops)),
        ];
        if let Some(b) = btime {
            directives.push(Info::new("pmix.monitor.btime", Value::Uint32(b)));
        }
        if let Some(r) = range {
            directives.push(Info::new("pmix.range", Value::DataRange(r.wire())));
        }
        Request::Monitor {
            monitor: Info::new("pmix.monitor.mbeat", Value::Undef),
            error: ALERT,
            directives,
        }
    };
    for &p in &ps {
        let t = pair.send(
            p,
            &Request::RegEvents {
                codes: vec![ALERT],
                info: vec![],
            },
        );
        pair.drive();
        assert!(ok(&pair.reply(p, t).unwrap()));
    }
    let t = pair.send(ps[0], &monitor(None, 0, None));
    pair.drive();
    assert_eq!(
        status(pair.reply(ps[0], t)),
        pmix_types::status::codes::PMIX_ERR_BAD_PARAM
    );
    assert_eq!(pair.server.monitors(), 0);
    assert_eq!(pair.server.poll_timeout(), None);
    for (p, m) in [
        (ps[0], monitor(Some(2), 1, None)),
        (ps[1], monitor(Some(2), 1, Some(DataRange::NAMESPACE))),
        (ps[2], monitor(Some(1), 0, Some(DataRange::PROC_LOCAL))),
    ] {
        let t = pair.send(p, &m);
        pair.drive();
        assert_eq!(status(pair.reply(p, t)), 0);
    }
    assert_eq!(pair.server.monitors(), 3);
    assert_eq!(
        pair.server.poll_timeout(),
        Some(pair.now + Duration::from_secs(1))
    );
    // (receiving rank, alert source) in arrival order, taken from each peer
    let alerts = |pair: &mut Pair| -> Vec<(usize, u32)> {
        let mut got = Vec::new();
        for (r, &p) in ps.iter().enumerate() {
            for (_, e) in pair.peers[p].events.drain(..) {
                if let Event::Notice(n) = e {
                    assert_eq!(n.status, ALERT);
                    got.push((r, n.source.rank));
                }
            }
        }
        got
    };
    let mut seen = Vec::new();
    for s in 0..10u32 {
        pair.core(ps[0]).heartbeat().unwrap();
        if s < 3 {
            pair.core(ps[1]).heartbeat().unwrap();
        }
        pair.drive();
        pair.advance(Duration::from_secs(1));
        seen.push((s + 1, alerts(&mut pair)));
    }
    for (at, got) in &seen {
        let want: Vec<(usize, u32)> = match at {
            // rank 2's first window ended silent: to rank 2 only
            1 => vec![(2, 2)],
            // rank 1's last beat counted in the window ending at 4; the
            // windows ending at 6 and 8 were silent, one more than its drop
            8 => vec![(0, 1), (1, 1), (2, 1)],
            _ => vec![],
        };
        assert_eq!(got, &want, "at {at} s: {seen:?}");
    }
    // rank 1 cancels by id, rank 2 goes away: rank 0's monitor alone runs
    let t = pair.send(
        ps[1],
        &Request::Monitor {
            monitor: Info::new("pmix.monitor.cancel", Value::String(Some("m1".into()))),
            error: 0,
            directives: vec![],
        },
    );
    pair.drive();
    assert_eq!(status(pair.reply(ps[1], t)), 0);
    let gone = pair.peers[ps[2]].conn;
    pair.server.closed(gone);
    pair.peers[ps[2]].closed = true;
    assert_eq!(pair.server.monitors(), 1);
    // rank 0 now falls silent too: alerted after two more silent windows
    pair.advance(Duration::from_secs(4));
    assert_eq!(alerts(&mut pair), vec![(0, 0), (1, 0)]);
    // a file monitor is not offered
    let t = pair.send(
        ps[0],
        &Request::Monitor {
            monitor: Info::new("pmix.monitor.fmon", Value::String(Some("/f".into()))),
            error: ALERT,
            directives: vec![],
        },
    );
    pair.drive();
    assert_eq!(status(pair.reply(ps[0], t)), -47);
}

/// Issue #36 item 6: a group built by invitation exists once its leader
/// notifies PMIX_GROUP_CONSTRUCT_COMPLETE to the members (as libpmix's
/// PMIx_Group_invite does): a fence over `(group, WILDCARD)` spans those
/// members and completes without the rank left out.
#[test]
fn a_group_announced_by_its_leader_can_fence() {
    use pmix_types::{DataArray, DataType};
    let mut pair = Pair::new(&[("ag", 4)]);
    let ps: Vec<usize> = (0..4).map(|r| pair.init("ag", r)).collect();
    let members: Vec<Value> = [0u32, 2, 3]
        .iter()
        .map(|r| Value::Proc(Box::new(Proc::new("ag", *r))))
        .collect();
    let t = pair.send(
        ps[0],
        &Request::Notify {
            status: pmix_types::status::codes::PMIX_GROUP_CONSTRUCT_COMPLETE,
            range: pmix_types::names::data_range::CUSTOM,
            info: vec![
                Info::new(
                    "pmix.evrange",
                    Value::DataArray(Box::new(DataArray::new(DataType::Proc, members).unwrap())),
                ),
                Info::new("pmix.evnondef", Value::Bool(true)),
                Info::new("pmix.grp.id", Value::String(Some("ourgroup".into()))),
            ],
        },
    );
    pair.drive();
    assert!(ok(&pair.reply(ps[0], t).unwrap()));
    let fence = Request::Fence {
        procs: vec![Proc::new("ourgroup", RANK_WILDCARD)],
        info: vec![],
    };
    let tags: Vec<(usize, u32)> = [0usize, 2, 3]
        .iter()
        .map(|&r| (r, pair.send(ps[r], &fence)))
        .collect();
    pair.drive();
    for (r, t) in tags {
        let reply = pair.reply(ps[r], t);
        assert!(reply.as_ref().is_some_and(ok), "rank {r}: {reply:?}");
    }
}

/// A GET of another namespace's WILDCARD rank without a key is answered
/// with that job's whole data, each rank's job-info keys under its own
/// name (what libpmix 4.2.2's server sends, as `pmix.pdata` arrays): a
/// client of the parent job reads a spawned rank's local rank and node
/// name from it though that rank never connected nor committed (our
/// client asks so of a server whose PMIX_VERSION is 4.x, as ours gives:
/// tests/core_client.rs).
#[test]
fn a_keyless_wildcard_get_answers_the_whole_job_data() {
    let mut pair = Pair::new(&[("pa", 1), ("ch", 2)]);
    let p = pair.init("pa", 0);
    let child = Proc::new("ch", 1);
    let want = Request::Get {
        nspace: Some("ch".into()),
        rank: RANK_WILDCARD,
        info: vec![],
        key: Some(None),
    };
    let t = pair.send(p, &want);
    pair.drive();
    let r = pair.reply(p, t).expect("GET reply");
    assert_eq!(
        pair.core(p).absorb_get(&child, "pmix.lrank", r).ok(),
        Some(Value::Uint16(1))
    );
    let core = pair.core(p);
    assert!(matches!(
        core.get_local(&Proc::new("ch", 0), "pmix.hname"),
        Some(Value::String(Some(_)))
    ));
    assert_eq!(
        core.get_local(&Proc::new("ch", RANK_WILDCARD), "pmix.job.size"),
        Some(Value::Uint32(2))
    );
}
