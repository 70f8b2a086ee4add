//! OpenPMIx 7.0's roles in memory (core tier, issue 39): the delete
//! conversation and the version floors.
//!
//! The delete conversation:
//! our server answers the two 7.0 clients of
//! `corpus/releases/captures/v7.0.0a1-server_v7.0.0a1-client_delete.txt`
//! as the 7.0 server did (handshake, job data, COMMIT with delete scopes,
//! DATA_DELETE on tag 4 to the other client), and our client core reads the
//! 7.0 server's side of that capture and makes rank 0's COMMIT bytes.

use pmix_codec::frame::{tag, HeaderOrder};
use pmix_codec::msg::{DataDelete, Reply, Request};
use pmix_test_kit::captures::{connections, frames};
use pmix_test_kit::pair::drain;
use pmix_types::enums::Scope;
use pmix_types::{Proc, Value};
use pmix_wire::client::{ClientEnv, Core, Event};
use pmix_wire::server::{JobSpec, Server};
use std::time::Instant;

const CAPTURE: &str = "corpus/releases/captures/v7.0.0a1-server_v7.0.0a1-client_delete.txt";

/// Our server core for the captures' job: namespace "chjob" of `n` ranks
/// on host "vm".
fn chjob(n: u32) -> Server {
    let mut s = Server::new();
    s.register_nspace(JobSpec {
        nspace: "chjob".into(),
        nprocs: n,
        hostname: "vm".into(),
        info: vec![],
    });
    s
}

fn capture() -> Vec<(Vec<u8>, Vec<u8>, usize, usize)> {
    let text = std::fs::read_to_string(pmix_test_kit::repo().join(CAPTURE)).unwrap();
    connections(&text)
}

/// A client's byte stream as its messages: the handshake (its length in
/// host order, little-endian here), then framed requests (network order).
fn messages(stream: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < stream.len() {
        let len = &stream[at + 8..at + 12];
        let len = if at == 0 {
            u32::from_le_bytes(len.try_into().unwrap())
        } else {
            u32::from_be_bytes(len.try_into().unwrap())
        };
        let end = at + 16 + len as usize;
        out.push(stream[at..end].to_vec());
        at = end;
    }
    out
}

/// A server's stream: the 8-byte handshake reply, then (tag, payload).
fn replies(stream: &[u8]) -> (Vec<u8>, Vec<(u32, Vec<u8>)>) {
    (
        stream[..8].to_vec(),
        frames(&stream[8..], HeaderOrder::Network),
    )
}

/// The messages of the two connections fed in turns (the first of each,
/// then the second of each …): the order the live run's fences imposed
/// (rank 1 fences and reads after rank 0's delete, rank 0 reads after
/// its second fence); every reply and DATA_DELETE is then compared with
/// the 7.0 server's.
#[test]
fn our_server_answers_the_7_0_delete_conversation_as_7_0_did() {
    let conns = capture();
    assert_eq!(conns.len(), 2);
    let mut s = chjob(2);
    let now = Instant::now();
    let ids: Vec<u64> = conns.iter().map(|_| s.open()).collect();
    let msgs: Vec<Vec<Vec<u8>>> = conns.iter().map(|c| messages(&c.0)).collect();
    let mut ours: Vec<Vec<u8>> = vec![Vec::new(); ids.len()];
    let most = msgs.iter().map(Vec::len).max().unwrap();
    for i in 0..most {
        for (c, m) in msgs.iter().enumerate() {
            if let Some(m) = m.get(i) {
                s.handle_input(ids[c], m, now);
            }
            for (to, b) in drain(&mut s).sends() {
                ours[ids.iter().position(|x| *x == to).unwrap()].extend(b);
            }
        }
    }
    for (i, c) in conns.iter().enumerate() {
        let (our_hello, our_msgs) = replies(&ours[i]);
        let (their_hello, their_msgs) = replies(&c.1);
        // the status; the index is each server's own numbering
        assert_eq!(
            our_hello[..4],
            their_hello[..4],
            "connection {} handshake",
            i + 1
        );
        let tags: Vec<u32> = frames(&messages(&c.0)[1..].concat(), HeaderOrder::Network)
            .into_iter()
            .map(|(t, _)| t)
            .collect();
        for t in tags.into_iter().chain([tag::DATA_DELETE]) {
            let pick = |m: &[(u32, Vec<u8>)]| -> Vec<Vec<u8>> {
                m.iter()
                    .filter(|(x, _)| *x == t)
                    .map(|(_, p)| p.clone())
                    .collect()
            };
            let (a, b) = (pick(&our_msgs), pick(&their_msgs));
            if i == 0 && t == 108 {
                // rank 0 reads its own deleted key: 7.0 answers
                // PMIX_ERR_TIMEOUT (-24), in all four live runs; the key is
                // gone, so ours answers NOT_FOUND (divergences.md)
                assert_eq!(b, vec![vec![0x02, 0x2f]]);
                assert_eq!(a, vec![vec![0x02, 0x5b]]);
                continue;
            }
            assert_eq!(a, b, "connection {} tag {t}", i + 1);
        }
    }
    // the other client got the two deletes, as 7.0's server sent them;
    // the deleting client got none
    let (_, second) = replies(&ours[1]);
    let deletes: Vec<DataDelete> = second
        .iter()
        .filter(|(t, _)| *t == tag::DATA_DELETE)
        .map(|(_, p)| DataDelete::decode(&pmix_codec::Format::V41, p).unwrap())
        .collect();
    assert_eq!(
        deletes.iter().map(|d| d.scope).collect::<Vec<_>>(),
        vec![5, 6]
    );
    assert!(deletes.iter().all(|d| d.source == Proc::new("chjob", 0)));
}

/// A 4.2.2 client (no tag 4 in its release) is sent no DATA_DELETE when a
/// 7.0 client of its job deletes a key; the key is gone for it all the same.
#[test]
fn no_data_delete_goes_to_a_client_older_than_7_0() {
    let conns = capture();
    let msgs: Vec<Vec<Vec<u8>>> = conns.iter().map(|c| messages(&c.0)).collect();
    let mut s = chjob(2);
    let now = Instant::now();
    let (a, b) = (s.open(), s.open());
    // rank 1 as a 4.2.2 client announcing v41
    let old = pmix_test_kit::hostile::connect_frame("chjob", 1, vec![0; 8]);
    s.handle_input(b, &old, now);
    // rank 0: the 7.0 client's handshake, REQ, COMMIT, FENCE skipped, and
    // its delete COMMIT (message 7)
    for m in [0, 1, 2, 6] {
        s.handle_input(a, &msgs[0][m], now);
    }
    let out = drain(&mut s);
    let to_b: Vec<&bytes::Bytes> = out.sends().filter(|(c, _)| *c == b).map(|x| x.1).collect();
    assert!(
        to_b.iter()
            .all(|m| m.len() < 8 || m[4..8] != tag::DATA_DELETE.to_be_bytes()),
        "{to_b:?}"
    );
    // rank 1 asks for rank 0's ch.str: it is gone (NOT_FOUND), while
    // ch.u32, re-sent after the delete, is there
    let fmt = pmix_codec::Format::V41;
    let get = |key: &str| Request::Get {
        nspace: Some("chjob".into()),
        rank: 0,
        info: vec![],
        key: Some(Some(
            pmix_types::PString::from_bytes(key.as_bytes()).unwrap(),
        )),
    };
    for (t, key, want) in [(201u32, "ch.str", -46), (202, "ch.u32", 0)] {
        s.handle_input(b, &pmix_test_kit::hostile::request_frame(t, &get(key)), now);
        let out = drain(&mut s);
        let r: Vec<Reply> = out
            .sends()
            .filter(|(c, m)| *c == b && m[4..8] == t.to_be_bytes())
            .map(|(_, m)| Reply::decode(&fmt, 4, &m[16..]).unwrap())
            .collect();
        let status = match &r[..] {
            [Reply::Get { status, .. }] | [Reply::Status(status)] => *status,
            other => panic!("{key}: {other:?}"),
        };
        assert_eq!(status, want, "{key}");
    }
}

fn env_of(rank: u32) -> ClientEnv {
    let vars = [
        ("PMIX_NAMESPACE", "chjob".to_string()),
        ("PMIX_RANK", rank.to_string()),
        (
            "PMIX_SERVER_URI61",
            "chsrv.0;tcp4://127.0.0.1:1".to_string(),
        ),
        ("PMIX_VERSION", "7.0.0a1".to_string()),
    ];
    ClientEnv::from_env(|k| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone())).unwrap()
}

/// Our client core as rank 1 of the capture: it sends the requests rank 1
/// sent, reads the 7.0 server's replies to them, and the two DATA_DELETE
/// messages drop rank 0's `ch.str`, which a GET had brought.
#[test]
fn our_client_reads_the_7_0_servers_side_with_its_deletes() {
    let conns = capture();
    let (client, server) = (&conns[1].0, &conns[1].1);
    let mut core = Core::new(env_of(1), 0, 0).unwrap();
    let fmt = core.env.format;
    assert_eq!(fmt.release_family(), pmix_codec::Release::V7);
    let now = Instant::now();
    // the handshake reply, then each request as the capture's rank 1 sent it
    core.handle_input(&server[..8], now).unwrap();
    let reqs = frames(&messages(client)[1..].concat(), HeaderOrder::Network);
    for (t, p) in &reqs {
        let req = Request::decode(&fmt, p).unwrap();
        assert_eq!(core.send(&req).unwrap(), Some(*t));
    }
    let theirs = frames(&server[8..], HeaderOrder::Network);
    let rank0 = Proc::new("chjob", 0);
    let mut deleted = Vec::new();
    for (t, p) in &theirs {
        let framed = pmix_codec::frame::frame(0, *t, p, HeaderOrder::Network).unwrap();
        core.handle_input(&framed, now).unwrap();
        while let Some(e) = core.poll_event() {
            match e {
                // rank 1's first GET: rank 0's ch.str
                Event::Reply { tag: 104, reply } => {
                    let v = core.absorb_get(&rank0, "ch.str", reply).unwrap();
                    assert_eq!(v, Value::String(Some("hello-from-0".into())));
                    assert!(core.get_local(&rank0, "ch.str").is_some());
                }
                Event::Reply { .. } | Event::Connected { .. } => {}
                Event::Deleted(d) => deleted.push(d),
                other => panic!("{other:?}"),
            }
        }
    }
    assert_eq!(
        deleted
            .iter()
            .map(|d| (d.scope, d.key.clone()))
            .collect::<Vec<_>>(),
        vec![(5, Some("ch.str".into())), (6, Some("ch.str".into()))]
    );
    assert_eq!(core.get_local(&rank0, "ch.str"), None);
}

/// Our client core as rank 0 makes the 7.0 client's COMMIT bytes: the
/// puts, then after `PMIx_Put(PMIX_DEL_GLOBAL, "ch.str")` the DEL_LOCAL and
/// DEL_REMOTE sections and everything still committed. Against a 4.2.2
/// server the delete is refused (NOT_SUPPORTED), as 7.0's client refuses it.
#[test]
fn our_client_commits_a_delete_as_the_7_0_client_does() {
    let conns = capture();
    let fmt = env_of(0).format;
    let theirs: Vec<Vec<u8>> = frames(&messages(&conns[0].0)[1..].concat(), HeaderOrder::Network)
        .into_iter()
        .filter(|(_, p)| p.starts_with(&[0x02, 0x02]))
        .map(|(_, p)| p)
        .collect();
    assert_eq!(theirs.len(), 2, "two COMMITs");
    let mut core = Core::new(env_of(0), 0, 0).unwrap();
    core.put(
        Scope::GLOBAL,
        "ch.str",
        Value::String(Some("hello-from-0".into())),
    );
    core.put(Scope::GLOBAL, "ch.u32", Value::Uint32(1000));
    core.put(Scope::LOCAL, "ch.local", Value::Int64(-1));
    core.put(
        Scope::REMOTE,
        "ch.bo",
        Value::ByteObject([0u8, 1, 2, 3, 4, 5, 6, 0][..].into()),
    );
    let first = core.commit_request().unwrap().encode(&fmt).unwrap();
    assert_eq!(first, theirs[0]);
    core.delete(Scope::DEL_GLOBAL, "ch.str").unwrap();
    let second = core.commit_request().unwrap().encode(&fmt).unwrap();
    assert_eq!(second, theirs[1]);
    // a commit with nothing new after that sends nothing again
    let third = core.commit_request().unwrap().encode(&fmt).unwrap();
    assert_eq!(third, vec![0x02, 0x02]);

    let mut vars = env_of(0);
    vars.server_version = Some("4.2.2".into());
    vars.format = vars.format.of_release(pmix_codec::Release::UpTo6);
    let mut old = Core::new(vars, 0, 0).unwrap();
    let refused = old.delete(Scope::DEL_GLOBAL, "ch.str").unwrap_err();
    assert!(refused.to_string().contains("-47"), "{refused}");
}

/// A connect request of release `version` speaking `bfrops`, as rank `rank`.
fn hello_of(rank: u32, version: &str, bfrops: &str) -> Vec<u8> {
    use pmix_codec::handshake::ConnectRequest;
    let req = ConnectRequest {
        psec: "native".into(),
        credential: bytes::Bytes::from(vec![0; 8]),
        flag: 0,
        uid_gid: None,
        proc: Some(Proc::new("chjob", rank)),
        version: version.into(),
        bfrops: Some(bfrops.into()),
        buffer_type: Some(1),
        gds: Some("hash".into()),
        info: None,
        trailing: bytes::Bytes::new(),
    };
    pmix_codec::frame::frame(-1, u32::MAX, &req.encode().unwrap(), HeaderOrder::Little).unwrap()
}

/// With 7.0's floor set, our server refuses a 2.0 client (NOT_SUPPORTED in
/// its handshake reply, the reason logged as a refusal) and serves a 2.1
/// one; without a floor (the default) it serves the 2.0 client too.
#[test]
fn the_server_floor_is_opt_in_and_refuses_with_its_reason() {
    use pmix_wire::server::{Limits, Transmit};
    for floor in [Some(pmix_codec::select::OPENPMIX7_MIN_CLIENT), None] {
        let mut s = chjob(2);
        s.set_limits(Limits {
            min_peer_version: floor,
            ..Limits::default()
        });
        let now = Instant::now();
        let (old, new) = (s.open(), s.open());
        s.handle_input(old, &hello_of(0, "2.0.3", "v20"), now);
        s.handle_input(new, &hello_of(1, "2.2.5", "v21"), now);
        let out = drain(&mut s);
        let status = |c: u64| -> i32 {
            let b = out.sends().find(|(x, _)| *x == c).unwrap().1;
            i32::from_be_bytes(b[..4].try_into().unwrap())
        };
        assert_eq!(status(new), 0);
        let closed = out
            .transmits
            .iter()
            .any(|t| matches!(t, Transmit::Close(c) if *c == old));
        if floor.is_some() {
            assert_eq!(
                status(old),
                pmix_types::status::codes::PMIX_ERR_NOT_SUPPORTED
            );
            assert!(closed);
            let (c, why) = s.poll_refusal().unwrap();
            assert_eq!(c, old);
            let why = why.to_string();
            assert!(why.contains("2.0.3") && why.contains("2.1"), "{why}");
        } else {
            assert_eq!(status(old), 0);
            assert!(!closed);
        }
    }
}

/// Our client refuses, when asked to, a server older than 7.0's floor for
/// servers (3.2), naming both; a 3.2 server or one that gives no version
/// passes.
#[test]
fn the_client_floor_refuses_an_older_server_with_its_reason() {
    let floor = pmix_codec::select::OPENPMIX7_MIN_SERVER;
    let mut env = env_of(0);
    for (v, ok) in [(Some("3.1.6"), false), (Some("3.2.5"), true), (None, true)] {
        env.server_version = v.map(str::to_string);
        match env.require_server_at_least(floor) {
            Ok(()) => assert!(ok, "{v:?}"),
            Err(e) => {
                assert!(!ok, "{v:?}");
                let why = e.to_string();
                assert!(why.contains("3.1.6") && why.contains("3.2"), "{why}");
            }
        }
    }
}

/// A query for PMIX_QUERY_SUPPORTED_QUALIFIERS goes under 7.0's string to
/// a 7.0 server and under the string of 6.1 and earlier to a 4.2.2 server;
/// our server answers it under either, under the string asked.
#[test]
fn renamed_attributes_go_by_the_servers_release_and_are_read_under_both() {
    use pmix_wire::client::ops::{self, Operation, Start};
    for (version, want) in [("7.0.0a1", "pmix.qry.supqual"), ("4.2.2", "pmix.qry.quals")] {
        let mut env = env_of(0);
        env.server_version = Some(version.into());
        if version == "4.2.2" {
            env.format = pmix_codec::Format::V41;
        }
        let mut core = Core::new(env, 0, 0).unwrap();
        let q = pmix_types::Query {
            keys: vec!["pmix.qry.supqual".into()],
            qualifiers: vec![],
        };
        let Start::Ask(Request::Query { queries }) = ops::query(q).start(&mut core).unwrap() else {
            panic!("a query request")
        };
        assert_eq!(queries[0].keys, vec![pmix_types::PString::from(want)]);
    }
    // our server: both strings are the supported-qualifiers query
    let mut s = chjob(1);
    let now = Instant::now();
    let c = s.open();
    s.handle_input(
        c,
        &pmix_test_kit::hostile::connect_frame("chjob", 0, vec![0; 8]),
        now,
    );
    for (t, key) in [(301u32, "pmix.qry.quals"), (302, "pmix.qry.supqual")] {
        let q = Request::Query {
            queries: vec![pmix_types::Query {
                keys: vec![key.into()],
                qualifiers: vec![],
            }],
        };
        drain(&mut s);
        s.handle_input(c, &pmix_test_kit::hostile::request_frame(t, &q), now);
        let out = drain(&mut s);
        let (_, b) = out.sends().find(|(x, _)| *x == c).unwrap();
        match Reply::decode(&pmix_codec::Format::V41, 15, &b[16..]).unwrap() {
            Reply::Query { status: 0, info } => {
                assert_eq!(info.len(), 1);
                assert_eq!(info[0].key.as_pstring().as_str(), Some(key));
                assert!(
                    matches!(&info[0].value, Value::String(Some(v)) if v.as_str().unwrap().contains("pmix.nspace"))
                );
            }
            other => panic!("{key}: {other:?}"),
        }
    }
}
