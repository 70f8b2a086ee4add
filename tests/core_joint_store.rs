//! One store and one collective for a job served both PMIx and PMI (issue
//! #27), in memory: the PMIx server core with our client cores
//! (test-kit/src/pair.rs) and the PMI server core with raw PMI-1/PMI-2
//! lines, joined by the glue `pmixw run` uses (`pmi::joint::enter`,
//! `keys_for_pmi`, `Server::joint_done`, `host_rank_lost`). Keys cross
//! both ways across a fence; neither side's fence completes before every
//! rank is in; a rank that vanishes mid-collective fails it for both.

use pmix_codec::msg::{Reply, Request};
use pmix_test_kit::pair::Pair;
use pmix_types::enums::Scope;
use pmix_types::status::codes;
use pmix_types::{Info, PString, Proc, Value, RANK_WILDCARD};
use pmix_wire::pmi::joint;
use pmix_wire::pmi::server::{Event, JobSpec, Server as Pmi, Transmit};
use pmix_wire::server::HostEvent;
use std::collections::BTreeMap;
use std::time::Instant;

const NS: &str = "mix";

/// A job of `n` ranks: ranks `0..pmix` are PMIx clients, the others PMI
/// clients (PMI connection id = rank).
struct Mixed {
    pair: Pair,
    pmi: Pmi,
    /// PMIx clients: rank → pair peer.
    px: Vec<usize>,
    /// Joint barriers out with the PMIx core: rank → request.
    waiting: BTreeMap<u32, u64>,
    /// What the PMI core wrote, per connection, as text.
    out: BTreeMap<u64, String>,
    pmi_events: Vec<Event>,
}

impl Mixed {
    fn new(n: u32, pmix: u32) -> Mixed {
        let mut pair = Pair::new(&[(NS, n)]);
        let px = (0..pmix).map(|r| pair.init(NS, r)).collect();
        let mut pmi = Pmi::new();
        let mut spec = JobSpec::single_node(NS, n);
        spec.joint = true;
        pmi.register(spec);
        for r in pmix..n {
            pmi.open(r.into(), Some((NS, r)), Instant::now());
        }
        let mut m = Mixed {
            pair,
            pmi,
            px,
            waiting: BTreeMap::new(),
            out: BTreeMap::new(),
            pmi_events: Vec::new(),
        };
        for r in pmix..n {
            m.line(r, "cmd=init pmi_version=1 pmi_subversion=1\n");
        }
        m.take(pmix);
        m
    }

    /// Move everything until neither core has more to say: the host's part.
    fn pump(&mut self) {
        loop {
            self.pair.drive();
            let mut progress = false;
            while let Some(e) = self.pmi.poll_event() {
                progress = true;
                match &e {
                    Event::JointFence {
                        request,
                        kvsname,
                        rank,
                        puts,
                    } => {
                        self.waiting.insert(*rank, *request);
                        joint::enter(&mut self.pair.server, kvsname, *rank, puts);
                    }
                    Event::Lost { kvsname, rank } => {
                        self.pair.server.host_rank_lost(kvsname, *rank)
                    }
                    _ => {}
                }
                self.pmi_events.push(e);
            }
            self.pair.drive();
            let done: Vec<(u32, i32)> = self
                .pair
                .host
                .iter()
                .filter_map(|e| match e {
                    HostEvent::HostFenceDone { proc, status } => Some((proc.rank, *status)),
                    _ => None,
                })
                .collect();
            self.pair
                .host
                .retain(|e| !matches!(e, HostEvent::HostFenceDone { .. }));
            for (rank, status) in done {
                progress = true;
                let request = self.waiting.remove(&rank).expect("a joint barrier out");
                let r = if status == codes::PMIX_SUCCESS {
                    Ok(joint::keys_for_pmi(&self.pair.server, NS))
                } else {
                    Err(format!("PMIx fence failed: {status}"))
                };
                self.pmi.joint_done(request, r);
            }
            while let Some(t) = self.pmi.poll_transmit() {
                progress = true;
                if let Transmit::Send(c, b) = t {
                    self.out
                        .entry(c)
                        .or_default()
                        .push_str(&String::from_utf8(b).unwrap());
                }
            }
            if !progress {
                return;
            }
        }
    }

    fn line(&mut self, rank: u32, line: &str) {
        self.pmi
            .handle_input(rank.into(), line.as_bytes(), Instant::now());
        self.pump();
    }

    /// What the PMI core wrote to `rank` since the last call.
    fn take(&mut self, rank: u32) -> String {
        self.out.remove(&u64::from(rank)).unwrap_or_default()
    }

    fn put_commit(&mut self, rank: u32, kv: &[(&str, Value)]) {
        let p = self.px[rank as usize];
        for (k, v) in kv {
            self.pair.core(p).put(Scope::GLOBAL, k, v.clone());
        }
        let req = self.pair.core(p).commit_request().expect("commit request");
        let t = self.pair.send(p, &req);
        self.pump();
        assert_eq!(self.pair.reply(p, t), Some(Reply::Status(0)));
    }

    fn fence(&mut self, rank: u32, collect: bool) -> u32 {
        let p = self.px[rank as usize];
        let info = if collect {
            vec![Info::new("pmix.collect", Value::Bool(true))]
        } else {
            vec![]
        };
        let req = Request::Fence {
            procs: vec![Proc::new(NS, RANK_WILDCARD)],
            info,
        };
        let t = self.pair.send(p, &req);
        self.pump();
        t
    }

    fn fence_reply(&mut self, rank: u32, tag: u32) -> Option<Reply> {
        let p = self.px[rank as usize];
        self.pair.reply(p, tag)
    }
}

fn v2(body: &str) -> String {
    format!("{:<6}{body}", body.len())
}

#[test]
fn keys_cross_both_ways_and_the_barrier_waits_for_the_pmix_fence() {
    // ranks 0 and 1 PMIx, rank 2 PMI-1
    let mut m = Mixed::new(3, 2);
    m.put_commit(
        0,
        &[("px.card0", Value::String(Some(PString::from("tcp://a b"))))],
    );
    m.put_commit(1, &[("px.n1", Value::Uint32(1001))]);
    m.line(2, "cmd=put kvsname=mix key=P2-businesscard value=port#42\n");
    assert_eq!(m.take(2), "cmd=put_result rc=0\n");
    // the PMI rank is in first: its barrier waits for both PMIx ranks
    m.line(2, "cmd=barrier_in\n");
    assert_eq!(m.take(2), "");
    let t0 = m.fence(0, true);
    assert_eq!(m.take(2), "");
    assert_eq!(m.fence_reply(0, t0), None, "the fence waits for rank 1");
    // the last one in releases both sides
    let t1 = m.fence(1, true);
    assert_eq!(m.take(2), "cmd=barrier_out rc=0\n");
    assert_eq!(m.fence_reply(0, t0), Some(Reply::Status(0)));
    assert_eq!(m.fence_reply(1, t1), Some(Reply::Status(0)));
    // PMIx → PMI: a string as it is, an integer in decimal
    m.line(2, "cmd=get kvsname=mix key=px.card0\n");
    assert_eq!(
        m.take(2),
        "cmd=get_result rc=0 found=TRUE value=tcp://a\\ b\n"
    );
    m.line(2, "cmd=get kvsname=mix key=px.n1\n");
    assert_eq!(m.take(2), "cmd=get_result rc=0 found=TRUE value=1001\n");
    // PMI → PMIx: a PMIX_STRING in the putting rank's data
    let p0 = m.px[0];
    let v = m.pair.get(p0, &Proc::new(NS, 2), "P2-businesscard");
    assert_eq!(v, Ok(Value::String(Some(PString::from("port#42")))));
    // a PMIx rank reads the other PMIx rank's key as before
    let v = m.pair.get(p0, &Proc::new(NS, 1), "px.n1");
    assert_eq!(v, Ok(Value::Uint32(1001)));
}

#[test]
fn the_pmix_fence_waits_for_the_pmi2_fence_and_a_second_round_works() {
    let mut m = Mixed::new(3, 1);
    // ranks 1 and 2 speak PMI-2 (init answered 2.0, then fullinit)
    for r in 1..3 {
        m.line(r, "cmd=init pmi_version=2 pmi_subversion=0\n");
        m.line(r, &v2(&format!("cmd=fullinit;pmirank={r};")));
        m.take(r);
    }
    m.put_commit(0, &[("round", Value::Int32(1))]);
    let t = m.fence(0, true);
    m.line(1, &v2("cmd=kvs-put;key=k1;value=one;"));
    m.line(1, &v2("cmd=kvs-fence;thrid=7;"));
    assert!(m.take(1).contains("cmd=kvs-put-response;rc=0;"));
    assert_eq!(m.fence_reply(0, t), None, "rank 2 is not in yet");
    m.line(2, &v2("cmd=kvs-fence;"));
    assert_eq!(m.fence_reply(0, t), Some(Reply::Status(0)));
    assert_eq!(m.take(1), v2("cmd=kvs-fence-response;thrid=7;rc=0;"));
    assert_eq!(m.take(2), v2("cmd=kvs-fence-response;rc=0;"));
    m.line(2, &v2("cmd=kvs-get;key=k1;"));
    assert_eq!(
        m.take(2),
        v2("cmd=kvs-get-response;rc=0;found=TRUE;value=one;")
    );
    m.line(2, &v2("cmd=kvs-get;key=round;"));
    assert_eq!(
        m.take(2),
        v2("cmd=kvs-get-response;rc=0;found=TRUE;value=1;")
    );
    // a second round: new values replace old ones on both sides
    m.put_commit(0, &[("round", Value::Int32(2))]);
    m.line(2, &v2("cmd=kvs-put;key=k1;value=uno;"));
    m.take(2);
    for r in 1..3 {
        m.line(r, &v2("cmd=kvs-fence;"));
    }
    let t = m.fence(0, false);
    assert_eq!(m.fence_reply(0, t), Some(Reply::Status(0)));
    for r in 1..3 {
        assert_eq!(m.take(r), v2("cmd=kvs-fence-response;rc=0;"));
    }
    m.line(1, &v2("cmd=kvs-get;key=round;"));
    assert_eq!(
        m.take(1),
        v2("cmd=kvs-get-response;rc=0;found=TRUE;value=2;")
    );
    let p0 = m.px[0];
    assert_eq!(
        m.pair.get(p0, &Proc::new(NS, 2), "k1"),
        Ok(Value::String(Some(PString::from("uno"))))
    );
}

#[test]
fn a_pmi_rank_that_vanishes_mid_collective_fails_it_for_the_pmix_ranks() {
    let mut m = Mixed::new(3, 1);
    m.line(1, "cmd=barrier_in\n");
    let t = m.fence(0, true);
    assert_eq!(m.fence_reply(0, t), None);
    // rank 2's connection ends before it entered (or finalized)
    m.pmi.closed(2);
    m.pump();
    assert_eq!(
        m.fence_reply(0, t),
        Some(Reply::Status(codes::PMIX_ERR_LOST_CONNECTION))
    );
    let out = m.take(1);
    assert!(out.starts_with("cmd=barrier_out rc=1 msg="), "{out}");
    // a later fence naming the lost rank fails at once, on both sides
    let t = m.fence(0, true);
    assert_eq!(
        m.fence_reply(0, t),
        Some(Reply::Status(codes::PMIX_ERR_LOST_CONNECTION))
    );
    m.line(1, "cmd=barrier_in\n");
    assert!(m.take(1).starts_with("cmd=barrier_out rc=1 "));
}

#[test]
fn a_pmix_rank_that_vanishes_mid_collective_fails_it_for_the_pmi_ranks() {
    let mut m = Mixed::new(3, 2);
    m.line(2, "cmd=barrier_in\n");
    let t = m.fence(0, true);
    let conn = m.pair.peers[m.px[1]].conn;
    m.pair.server.closed(conn);
    m.pump();
    assert_eq!(
        m.fence_reply(0, t),
        Some(Reply::Status(codes::PMIX_ERR_LOST_CONNECTION))
    );
    let out = m.take(2);
    assert!(out.starts_with("cmd=barrier_out rc=1 msg="), "{out}");
}

#[test]
fn a_joint_job_refuses_barriers_of_fewer_ranks() {
    let mut m = Mixed::new(3, 1);
    m.line(1, "cmd=barrier_in group=1,2:0\n");
    let out = m.take(1);
    assert!(out.starts_with("cmd=barrier_out rc=1 msg="), "{out}");
    assert!(out.contains("WORLD"), "{out}");
    // nothing reached the PMIx core
    assert!(m.waiting.is_empty());
}
