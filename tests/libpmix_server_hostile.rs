//! Hostile peers are harmless (issue #11). Live: eight libpmix 4.2.2
//! clients (interop/c/bench_wireup.c: init, put, commit, fence with
//! data, get every peer's keys, finalize) wire up under our server while
//! other connections send garbage, truncated and oversized frames, sit idle
//! (300+), drip a handshake byte by byte (slowloris), connect and close in
//! a loop, and forge handshakes for ranks not yet connected and for ranks
//! already connected: every good client completes, and each attacker is
//! refused for its own reason. In memory: the same rules on the core alone,
//! with a virtual clock and a stand-in for /proc.

use pmix_test_kit::process;

use pmix_test_kit::hostile::{self, claim, request_frame as request, Attack, IDLE};
use pmix_test_kit::interop::{build_c, default_out_dir};
use pmix_test_kit::pair::{drain, job_spec, Drained};
use pmix_wire::server::net;
use pmix_wire::server::{HostEvent, Limits, PeerInfo, Refusal, Server, Transmit, Verify};
use std::io::Read;
use std::time::{Duration, Instant};

fn refusals(server: &net::Running) -> Vec<Refusal> {
    server
        .call(|s| std::iter::from_fn(|| s.poll_refusal().map(|r| r.1)).collect())
        .unwrap_or_default()
}

/// Wait (bounded) until `pred` holds for the refusals seen so far.
fn await_refusals(
    server: &net::Running,
    seen: &mut Vec<Refusal>,
    pred: impl Fn(&[Refusal]) -> bool,
    what: &str,
) {
    let start = Instant::now();
    while !pred(seen) {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{what}: refusals so far {seen:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
        seen.extend(refusals(server));
    }
}

#[test]
fn good_clients_complete_beside_hostile_peers() {
    let client = build_c("bench_wireup", &default_out_dir()).unwrap_or_else(|e| panic!("{e}"));
    let n = 8u32;
    let ns = "hostile-live";
    let server = hostile::server(ns, n);
    let addr = server.uri().rsplit_once("//").unwrap().1.to_string();
    // idle connections, forged claims of every rank before any is
    // launched, a liar about its uid, garbage, oversized, truncated frames
    let mut attack = Attack::before(&addr, ns, n);

    // the real ranks, each registered as the host would (pmixw run does)
    let kids = hostile::ranks(&server, &client, ns, n);

    // meanwhile: slowloris, connect/close churn, forged claims of ranks
    // that are (by now, mostly) connected
    attack.during();

    for k in kids {
        let (ok, out) = process::finish(k, Duration::from_secs(60), "a libpmix client");
        assert!(
            ok,
            "a good client failed beside hostile peers: {out}; refusals: {:?}",
            refusals(&server)
                .into_iter()
                .filter(|r| !matches!(r, Refusal::HandshakeTimeout(_)))
                .collect::<Vec<_>>()
        );
    }
    assert!(attack.slowloris_cut_off(), "slowloris was not cut off");

    let mut seen = Vec::new();
    await_refusals(
        &server,
        &mut seen,
        |s| {
            s.iter()
                .filter(|r| matches!(r, Refusal::HandshakeTimeout(_)))
                .count()
                >= IDLE
        },
        "the idle connections hit the handshake deadline",
    );
    let count = |f: &dyn Fn(&Refusal) -> bool| seen.iter().filter(|r| f(r)).count();
    assert!(
        count(&|r| matches!(r, Refusal::UidMismatch { .. })) == 1,
        "{seen:?}"
    );
    assert!(count(&|r| matches!(r, Refusal::Frame(_))) >= 1, "{seen:?}");
    assert!(
        count(&|r| matches!(r, Refusal::BadHandshake(_))) >= 1,
        "{seen:?}"
    );
    // every forged claim is refused: displaced by the real rank, found not
    // to be it, or refused because the verified rank holds it
    let forged = count(&|r| {
        matches!(
            r,
            Refusal::Displaced(_) | Refusal::NotTheRank { .. } | Refusal::RankTaken(_)
        )
    });
    assert_eq!(forged, 2 * n as usize, "{seen:?}");
    // the idle ones were closed by the server
    for s in attack.idle.iter_mut().take(5) {
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut buf = [0u8; 8];
        assert!(matches!(s.read(&mut buf), Ok(0) | Err(_)));
    }
    drop(attack);
    server.stop();
}

/// A stand-in for /proc: socket inode → whether it belongs to the rank.
struct Table(Vec<(u64, u32)>);

impl Verify for Table {
    fn descends(&mut self, inode: u64, launched: u32) -> Option<bool> {
        self.0
            .iter()
            .find(|(i, _)| *i == inode)
            .map(|(_, pid)| *pid == launched)
    }
}

fn peer(uid: u32, inode: u64) -> PeerInfo {
    PeerInfo {
        uid: Some(uid),
        inode: Some(inode),
    }
}

/// The handshake status a connection got (the first 8 bytes: status, index; big-endian).
fn statuses(out: &Drained, id: u64) -> Vec<i32> {
    out.sends()
        .filter(|(c, b)| *c == id && b.len() == 8)
        .map(|(_, b)| i32::from_be_bytes(b[..4].try_into().unwrap()))
        .collect()
}

#[test]
fn a_forged_claim_never_displaces_or_locks_out_the_verified_rank() {
    let mut s = Server::new();
    s.register_nspace(job_spec("mem", 2));
    s.set_verifier(Box::new(Table(vec![(10, 100), (11, 101), (66, 666)])));
    s.set_rank_pid("mem", 0, 100);
    s.set_rank_pid("mem", 1, 101);
    let now = Instant::now();
    // a stray of the same uid claims rank 0 before rank 0 connects
    let stray = s.open_peer(peer(7, 66), now).unwrap();
    s.handle_input(stray, &claim("mem", 0, 7), now);
    assert_eq!(statuses(&drain(&mut s), stray), vec![-23]);
    // the real rank 0 is served
    let real = s.open_peer(peer(7, 10), now).unwrap();
    s.handle_input(real, &claim("mem", 0, 7), now);
    let out = drain(&mut s);
    assert_eq!(statuses(&out, real), vec![0]);
    // a second connection of an unknown process claims it again
    let unknown = s.open_peer(peer(7, 99), now).unwrap();
    s.handle_input(unknown, &claim("mem", 0, 7), now);
    assert_eq!(statuses(&drain(&mut s), unknown), vec![-27]);
    let why: Vec<Refusal> = std::iter::from_fn(|| s.poll_refusal().map(|r| r.1)).collect();
    assert!(
        matches!(why[0], Refusal::NotTheRank { launched: 100, .. }),
        "{why:?}"
    );
    assert_eq!(why[1], Refusal::RankTaken("mem:0".into()));
    // the uid of the socket must be the credential's
    let liar = s.open_peer(peer(8, 11), now).unwrap();
    s.handle_input(liar, &claim("mem", 1, 7), now);
    drain(&mut s);
    assert_eq!(
        s.poll_refusal().map(|r| r.1),
        Some(Refusal::UidMismatch {
            socket: 8,
            claimed: 7
        })
    );
}

#[test]
fn where_nothing_can_be_verified_the_real_rank_still_completes() {
    use pmix_codec::msg::Request;
    let mut s = Server::new();
    s.register_nspace(job_spec("free", 2));
    let now = Instant::now();
    // no verifier, no pids: a stray claims rank 0 first
    let stray = s.open();
    s.handle_input(stray, &claim("free", 0, 0), now);
    let r0 = s.open();
    s.handle_input(r0, &claim("free", 0, 0), now);
    let r1 = s.open();
    s.handle_input(r1, &claim("free", 1, 0), now);
    let out = drain(&mut s);
    assert_eq!(statuses(&out, stray), vec![0]);
    assert_eq!(statuses(&out, r0), vec![0]);
    // the stray goes away: the rank is not lost, its fence completes
    s.closed(stray);
    let out = drain(&mut s);
    assert!(
        !out.events.iter().any(|e| matches!(e, HostEvent::Lost(_))),
        "{out:?}"
    );
    let fence = Request::Fence {
        procs: vec![],
        info: vec![],
    };
    s.handle_input(r0, &request(7, &fence), now);
    s.handle_input(r1, &request(7, &fence), now);
    let out = drain(&mut s);
    let ok = pmix_codec::msg::Reply::Status(0);
    for id in [r0, r1] {
        let replies: Vec<_> = out
            .sends()
            .filter(|(c, _)| *c == id)
            .filter_map(|(_, b)| {
                pmix_codec::msg::Reply::decode(&pmix_codec::Format::V41, 3, &b[16..]).ok()
            })
            .collect();
        assert_eq!(replies, vec![ok.clone()], "{id}");
    }
}

#[test]
fn handshake_deadline_and_caps_in_virtual_time() {
    let mut s = Server::new();
    s.register_nspace(job_spec("cap", 1));
    s.set_limits(Limits {
        handshake_timeout: Duration::from_secs(5),
        max_pending_handshakes: 2,
        max_conns_per_uid: 3,
        ..Limits::default()
    });
    let t0 = Instant::now();
    let a = s.open_peer(peer(1, 1), t0).unwrap();
    let b = s
        .open_peer(peer(1, 2), t0 + Duration::from_secs(1))
        .unwrap();
    assert_eq!(s.open_peer(peer(2, 3), t0), Err(Refusal::TooManyPending(2)));
    assert_eq!(s.poll_refusal(), Some((0, Refusal::TooManyPending(2))));
    assert_eq!(s.poll_timeout(), Some(t0 + Duration::from_secs(5)));
    // a completes its handshake; b drips and misses its deadline
    s.handle_input(a, &claim("cap", 0, 1), t0);
    s.handle_input(b, &claim("cap", 0, 1)[..10], t0);
    drain(&mut s);
    assert_eq!(s.poll_timeout(), Some(t0 + Duration::from_secs(6)));
    s.handle_timeout(t0 + Duration::from_secs(5));
    assert!(drain(&mut s).is_empty());
    s.handle_timeout(t0 + Duration::from_secs(6));
    assert_eq!(
        drain(&mut s),
        Drained {
            events: vec![],
            transmits: vec![Transmit::Close(b)]
        }
    );
    assert_eq!(
        s.poll_refusal(),
        Some((b, Refusal::HandshakeTimeout(Duration::from_secs(5))))
    );
    assert_eq!(s.poll_timeout(), None);
    // per uid: a is open; two more of uid 1 fit, the fourth does not
    let c = s.open_peer(peer(1, 4), t0).unwrap();
    s.handle_input(c, &claim("cap", 0, 1), t0);
    let _d = s.open_peer(peer(1, 5), t0).unwrap();
    assert_eq!(
        s.open_peer(peer(1, 6), t0),
        Err(Refusal::TooManyForUid { uid: 1, count: 3 })
    );
    assert_eq!(s.connections(), 3);
    assert_eq!(s.pending_handshakes(), 1);
}
