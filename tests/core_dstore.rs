//! What the server core writes into a shared store (spec-notes/dstore.md
//! §4, §7) and when, in memory: a store of in-memory segments stands in
//! for the files (`server::dstore::layout`), the clients are frames.
//! Job data at the first REQ, a commit's LOCAL and GLOBAL keys, a key
//! committed again, another node's ranks' REMOTE and GLOBAL keys at fence
//! completion, the node map given late, the environment that names
//! the store only for the namespaces it holds, and the short REQ reply
//! a ds21 client gets where the store holds its job data.

use pmix_codec::msg::{Reply, Request};
use pmix_codec::{DataBuffer, Format};
use pmix_test_kit::hostile::{connect_frame, connect_frame_gds, request_frame as request};
use pmix_test_kit::pair::{drain, job_spec};
use pmix_types::{Buffer, DataType, Info, Kval, Value};
use pmix_wire::server::dstore::layout::{Namespace, Sizes, VecSegs, WILDCARD};
use pmix_wire::server::dstore::{Batch, SharedStore};
use pmix_wire::server::{HostEvent, NodeMap, Server};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

type Spaces = Arc<Mutex<BTreeMap<String, Namespace<VecSegs>>>>;
/// (nspace, ranks) of every write transaction, in order.
type Log = Arc<Mutex<Vec<(String, Vec<u32>)>>>;

/// A store in memory; refuses the namespace named `refuse`.
struct MemStore {
    spaces: Spaces,
    refuse: &'static str,
    /// (nspace, ranks) of every write transaction, in order.
    log: Log,
}

const SIZES: Sizes = Sizes {
    initial: 4096,
    meta: 4096,
    data: 1 << 16,
};

impl SharedStore for MemStore {
    fn add_nspace(&mut self, nspace: &str, _local: u32) -> bool {
        if nspace == self.refuse {
            return false;
        }
        let ns = Namespace::new(VecSegs::new(SIZES), SIZES).unwrap();
        self.spaces.lock().unwrap().insert(nspace.into(), ns);
        true
    }
    fn env(&self) -> Vec<(String, String)> {
        vec![
            ("PMIX_GDS_MODULE".into(), "ds21,hash".into()),
            ("PMIX_DSTORE_21_BASE_PATH".into(), "/in-memory".into()),
        ]
    }
    fn store(&mut self, nspace: &str, batches: &[Batch]) {
        let mut spaces = self.spaces.lock().unwrap();
        let ns = spaces.get_mut(nspace).expect("a namespace the store holds");
        for (rank, kvs) in batches {
            let kv: Vec<(&str, &[u8])> = kvs.iter().map(|(k, v)| (k.as_str(), &v[..])).collect();
            ns.store(*rank, &kv).unwrap();
        }
        self.log
            .lock()
            .unwrap()
            .push((nspace.into(), batches.iter().map(|b| b.0).collect()));
    }
}

struct Fixture {
    spaces: Spaces,
    log: Log,
}

impl Fixture {
    fn install(s: &mut Server, refuse: &'static str) -> Fixture {
        let f = Fixture {
            spaces: Default::default(),
            log: Default::default(),
        };
        s.set_shared_store(Box::new(MemStore {
            spaces: f.spaces.clone(),
            refuse,
            log: f.log.clone(),
        }));
        f
    }

    /// A key as a client reads it from the store, unpacked.
    fn get(&self, ns: &str, rank: u32, key: &str) -> Option<Value> {
        let bytes = self
            .spaces
            .lock()
            .unwrap()
            .get_mut(ns)?
            .fetch(rank, key)
            .unwrap()?;
        let mut v = pmix_codec::decode(&Format::V41, DataType::Value, &bytes)
            .unwrap_or_else(|e| panic!("{key}: {e}"));
        assert_eq!(v.len(), 1);
        match v.pop() {
            Some(Value::Value(inner)) => Some(*inner),
            other => panic!("{key}: {other:?}"),
        }
    }

    /// Superseded records of a rank.
    fn invalid(&self, ns: &str, rank: u32) -> usize {
        let mut spaces = self.spaces.lock().unwrap();
        let (recs, _) = spaces.get_mut(ns).unwrap().walk(rank).unwrap();
        recs.iter().filter(|r| r.invalid).count()
    }
}

fn kv_buffer(pairs: &[(&str, Value)]) -> Buffer {
    let mut buf = DataBuffer::new(Format::V41);
    for (k, v) in pairs {
        let k = Kval {
            key: Some((*k).into()),
            value: v.clone(),
        };
        buf.pack(DataType::Kval, &[Value::Kval(Box::new(k))])
            .unwrap();
    }
    Buffer {
        buffer_type: 1,
        bytes: bytes::Bytes::copy_from_slice(buf.as_bytes()),
    }
}

fn s(x: &str) -> Value {
    Value::String(Some(x.into()))
}

fn env_of(s: &Server, ns: &str) -> BTreeMap<String, String> {
    s.client_env(ns, 0u32, "u").into_iter().collect()
}

#[test]
fn job_data_commits_and_recommits_reach_the_store_before_their_replies() {
    let now = Instant::now();
    let mut srv = Server::new();
    let f = Fixture::install(&mut srv, "plain");
    srv.register_nspace(job_spec("ds", 2));
    srv.register_nspace(job_spec("plain", 1));
    // the environment names the store only where it holds the namespace
    let e = env_of(&srv, "ds");
    assert_eq!(
        e.get("PMIX_GDS_MODULE").map(String::as_str),
        Some("ds21,hash")
    );
    assert!(e.contains_key("PMIX_DSTORE_21_BASE_PATH"));
    assert!(!e.contains_key("PMIX_MCA_gds"));
    let e = env_of(&srv, "plain");
    assert_eq!(e.get("PMIX_GDS_MODULE").map(String::as_str), Some("hash"));
    assert_eq!(e.get("PMIX_MCA_gds").map(String::as_str), Some("hash"));
    assert!(!e.contains_key("PMIX_DSTORE_21_BASE_PATH"));

    let c: Vec<u64> = (0..2).map(|_| srv.open()).collect();
    for (r, conn) in c.iter().enumerate() {
        srv.handle_input(*conn, &connect_frame("ds", r as u32, vec![0; 8]), now);
    }
    drain(&mut srv);
    // rank 1 commits before any REQ: kept for the job data
    let commit = |pairs: &[(&str, Value)], remote: &[(&str, Value)]| Request::Commit {
        blobs: vec![(1, kv_buffer(pairs)), (2, kv_buffer(remote))],
    };
    srv.handle_input(
        c[1],
        &request(5, &commit(&[("k.early", s("e1"))], &[])),
        now,
    );
    assert!(f.log.lock().unwrap().is_empty());
    assert_eq!(f.get("ds", 1, "k.early"), None);
    drain(&mut srv);
    // the first REQ: job data, every rank's own keys, the early commit,
    // all in one transaction before the reply is queued
    srv.handle_input(c[0], &request(6, &Request::Req), now);
    assert_eq!(
        *f.log.lock().unwrap(),
        vec![("ds".to_string(), vec![WILDCARD, 0, 1, 1])]
    );
    assert_eq!(
        f.get("ds", WILDCARD, "pmix.job.size"),
        Some(Value::Uint32(2))
    );
    assert_eq!(
        f.get("ds", WILDCARD, "pmix.univ.size"),
        Some(Value::Uint32(2))
    );
    assert_eq!(
        f.get("ds", WILDCARD, "pmix.local.size"),
        Some(Value::Uint32(2))
    );
    assert_eq!(f.get("ds", WILDCARD, "pmix.lpeers"), Some(s("0,1")));
    // no arrays and no per-rank blobs at the wildcard
    for k in [
        "pmix.node.arr",
        "pmix.ssn.arr",
        "pmix.pblob",
        "pmix.session.id",
    ] {
        assert_eq!(f.get("ds", WILDCARD, k), None, "{k}");
    }
    assert_eq!(f.get("ds", 1, "pmix.lrank"), Some(Value::Uint16(1)));
    assert_eq!(f.get("ds", 0, "pmix.hname"), Some(s("h")));
    assert_eq!(f.get("ds", 1, "k.early"), Some(s("e1")));
    assert!(drain(&mut srv).sends().any(|(conn, _)| conn == c[0]));
    // a second REQ writes nothing
    srv.handle_input(c[1], &request(6, &Request::Req), now);
    assert_eq!(f.log.lock().unwrap().len(), 1);
    drain(&mut srv);

    // a commit: its LOCAL and GLOBAL keys, not its REMOTE ones
    srv.handle_input(
        c[0],
        &request(
            7,
            &commit(
                &[("k.a", Value::Uint32(1)), ("k.b", s("b"))],
                &[("k.remote", s("r"))],
            ),
        ),
        now,
    );
    assert_eq!(f.get("ds", 0, "k.a"), Some(Value::Uint32(1)));
    assert_eq!(f.get("ds", 0, "k.b"), Some(s("b")));
    assert_eq!(f.get("ds", 0, "k.remote"), None);
    assert_eq!(f.get("ds", 0, "pmix.lrank"), Some(Value::Uint16(0)));
    // committed again: the new value, the old record superseded
    srv.handle_input(
        c[0],
        &request(8, &commit(&[("k.a", Value::Uint32(2))], &[])),
        now,
    );
    assert_eq!(f.get("ds", 0, "k.a"), Some(Value::Uint32(2)));
    assert_eq!(f.get("ds", 0, "k.b"), Some(s("b")));
    assert_eq!(f.invalid("ds", 0), 1);
    // and both commits were answered
    let replies = drain(&mut srv)
        .sends()
        .filter(|(conn, _)| *conn == c[0])
        .count();
    assert_eq!(replies, 2);
}

/// Two nodes joined by a host; only A has a store. After the collecting
/// fence A's store holds B's ranks' REMOTE and GLOBAL keys; a node map
/// given after the job data was written rewrites it.
#[test]
fn other_nodes_data_and_a_late_node_map_reach_the_store() {
    let now = Instant::now();
    let node = |local: &[u32], with_store: bool| {
        let mut s = Server::new();
        let f = with_store.then(|| Fixture::install(&mut s, ""));
        s.register_nspace(job_spec("mn", 4));
        s.set_local_ranks("mn", local);
        (s, f)
    };
    let (mut a, fa) = node(&[0, 1], true);
    let fa = fa.unwrap();
    let (mut b, _) = node(&[2, 3], false);
    // as a libpmix client sends it: a GLOBAL key in both sections
    let commit = |r: u32| {
        let g = format!("mn.global.{r}");
        Request::Commit {
            blobs: vec![
                (
                    1,
                    kv_buffer(&[(&format!("mn.local.{r}"), s("l")), (&g, s("g"))]),
                ),
                (
                    2,
                    kv_buffer(&[(&format!("mn.remote.{r}"), s("r")), (&g, s("g"))]),
                ),
            ],
        }
    };
    let fence = Request::Fence {
        procs: vec![],
        info: vec![Info::new("pmix.collect", Value::Bool(true))],
    };
    let mut fence_data = Vec::new();
    for (srv, ranks) in [(&mut a, [0u32, 1]), (&mut b, [2, 3])] {
        for r in ranks {
            let conn = srv.open();
            srv.handle_input(conn, &connect_frame("mn", r, vec![0; 8]), now);
            srv.handle_input(conn, &request(10, &Request::Req), now);
            srv.handle_input(conn, &request(11, &commit(r)), now);
            srv.handle_input(conn, &request(12, &fence), now);
        }
        let ev = drain(srv).events;
        fence_data.push(
            ev.into_iter()
                .find_map(|e| match e {
                    HostEvent::Fence { request, data, .. } => Some((request, data)),
                    _ => None,
                })
                .expect("a fence upcall"),
        );
    }
    // local ranks: LOCAL and GLOBAL at commit
    assert_eq!(fa.get("mn", 1, "mn.local.1"), Some(s("l")));
    assert_eq!(fa.get("mn", 1, "mn.global.1"), Some(s("g")));
    assert_eq!(fa.get("mn", 1, "mn.remote.1"), None);
    assert_eq!(fa.get("mn", 2, "mn.remote.2"), None);
    let all = [fence_data[0].1.as_ref(), fence_data[1].1.as_ref()].concat();
    a.fence_done(fence_data[0].0, 0, &all);
    // ranks elsewhere: REMOTE and GLOBAL, before the fence replies
    for r in [2, 3] {
        assert_eq!(fa.get("mn", r, &format!("mn.remote.{r}")), Some(s("r")));
        assert_eq!(fa.get("mn", r, &format!("mn.global.{r}")), Some(s("g")));
        assert_eq!(fa.get("mn", r, &format!("mn.local.{r}")), None);
    }
    let sent = drain(&mut a);
    assert_eq!(sent.sends().count(), 2);
    assert!(sent.sends().all(|(_, b)| !b.is_empty()));
    // the node map arrives late: the job data is written again
    assert_eq!(
        fa.get("mn", WILDCARD, "pmix.num.nodes"),
        Some(Value::Uint32(1))
    );
    a.set_nodes(
        "mn",
        NodeMap {
            nodes: vec![("na".into(), vec![0, 1]), ("nb".into(), vec![2, 3])],
            me: 0,
        },
    );
    assert_eq!(
        fa.get("mn", WILDCARD, "pmix.num.nodes"),
        Some(Value::Uint32(2))
    );
    assert_eq!(fa.get("mn", WILDCARD, "pmix.lpeers"), Some(s("0,1")));
    assert_eq!(fa.get("mn", 3, "pmix.hname"), Some(s("nb")));
    // what ranks committed is still there
    assert_eq!(fa.get("mn", 0, "mn.local.0"), Some(s("l")));
    assert_eq!(fa.get("mn", 2, "mn.remote.2"), Some(s("r")));
}

/// The keys and namespace of the REQ reply written to `conn` in `d`.
fn req_reply(d: &pmix_test_kit::pair::Drained, conn: u64) -> (String, Vec<String>) {
    let b = d
        .sends()
        .filter(|(c, _)| *c == conn)
        .map(|(_, b)| b)
        .find(|b| b.len() > 16)
        .expect("a REQ reply");
    match Reply::decode(&Format::V41, 0, &b[16..]).unwrap() {
        Reply::JobInfo { nspace, kvals } => (
            nspace.map(|n| n.to_string()).unwrap_or_default(),
            kvals
                .iter()
                .map(|k| k.key.as_ref().map(|k| k.to_string()).unwrap_or_default())
                .collect(),
        ),
        r => panic!("not job info: {r:?}"),
    }
}

#[test]
fn a_ds21_client_is_sent_only_what_it_keeps_of_the_job_info() {
    // a libpmix 4.2.2 ds21 client keeps the session, node and app arrays
    // of its REQ reply and reads the rest in the store (spec-notes/
    // dstore.md §1.3): libpmix's server sends it no per-rank blobs, and
    // at N ranks a client the whole job info would be N² bytes
    let now = Instant::now();
    let mut srv = Server::new();
    let f = Fixture::install(&mut srv, "plain");
    srv.register_nspace(job_spec("ds", 3));
    srv.register_nspace(job_spec("plain", 2));
    let hello = |srv: &mut Server, ns: &str, r: u32, gds: &str| {
        let c = srv.open();
        srv.handle_input(c, &connect_frame_gds(ns, r, vec![0; 8], gds), now);
        c
    };
    let ask = |srv: &mut Server, c: u64| {
        srv.handle_input(c, &request(7, &Request::Req), now);
        req_reply(&drain(srv), c)
    };
    let whole = |keys: &[String]| {
        keys.iter().filter(|k| *k == "pmix.pblob").count() > 0
            && keys.iter().any(|k| k == "pmix.job.size")
    };
    // the first REQ of the namespace is a ds21 client's: the job data is
    // written, and it gets the namespace and the arrays alone
    let a = hello(&mut srv, "ds", 0, "ds21");
    let (ns, keys) = ask(&mut srv, a);
    assert_eq!(ns, "ds");
    assert_eq!(keys, ["pmix.ssn.arr", "pmix.node.arr"], "{keys:?}");
    assert_eq!(
        f.get("ds", WILDCARD, "pmix.job.size"),
        Some(Value::Uint32(3))
    );
    // a hash client of the same namespace, after it: the whole job info
    // (the two forms are cached apart)
    let b = hello(&mut srv, "ds", 1, "hash");
    let (_, keys) = ask(&mut srv, b);
    assert!(whole(&keys), "{keys:?}");
    assert_eq!(keys.iter().filter(|k| *k == "pmix.pblob").count(), 3);
    // and a ds21 client after that one: the short form again
    let c = hello(&mut srv, "ds", 2, "ds21");
    assert_eq!(ask(&mut srv, c).1, ["pmix.ssn.arr", "pmix.node.arr"]);
    // a namespace the store does not hold: a ds21 claim gets it all
    let d = hello(&mut srv, "plain", 0, "ds21");
    assert!(whole(&ask(&mut srv, d).1));
}
