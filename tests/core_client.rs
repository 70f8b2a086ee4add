//! The sans-IO client core against the bytes of a real libpmix 4.2.2
//! conversation (corpus/releases/captures/4.2.2-server_4.2.2-client.txt,
//! connection 1: client 'chjob' rank 0, gds hash).

use pmix_codec::msg::Request;
use pmix_codec::Format;
use pmix_types::enums::Scope;
use pmix_types::hex::decode as hex;
use pmix_types::{Proc, Value, RANK_WILDCARD};
use pmix_wire::client::{ClientEnv, ClientError, Core, EnvError, Event, GetPlan};
use std::time::Instant;

fn env() -> ClientEnv {
    env_of(None)
}

const JOB_INFO_REPLY: &str = "00000000000000650000022200000000\
020c63686a6f6200\
021c706d69782e6a6f622e73697a65000e02\
021c706d69782e6d61782e73697a65000e02\
021e706d69782e6e756d2e6e6f646573000e01\
0216706d69782e6a6f62696400030c63686a6f6200\
0218706d69782e6170706e756d000e00\
0216706d69782e6e6c697374000306766d00\
0220706d69782e6266726f70732e6d6f64000312342e322e3272633200\
021a706d69782e73736e2e6172720027180220706d69782e73657373696f6e2e696400000effffffff0f1e706d69782e\
756e69762e73697a6500020e02\
021c706d69782e6e6f64652e6172720027180716706d69782e686e616d6500000306766d001e706d69782e6e6f64652e\
73697a6500000e0216706d69782e686e616d6500000306766d0018706d69782e6e6f6465696400000e0018706d69782e\
6c706565727300000308302c310014706d69782e6c6c64720000280020706d69782e6c6f63616c2e73697a6500020e02\
0216706d69782e70626c6f62001b5202000216706d69782e6c72616e6b000d000216706d69782e6e72616e6b000d0002\
18706d69782e6170706e756d000e000216706d69782e686e616d65000306766d000218706d69782e6e6f64656964000e\
00\
0216706d69782e70626c6f62001b5202010216706d69782e6c72616e6b000d010216706d69782e6e72616e6b000d0102\
18706d69782e6170706e756d000e000216706d69782e686e616d65000306766d000218706d69782e6e6f64656964000e\
00";

/// What Open MPI 4.1.4's mpirun (its server Debian's libpmix 4.2.2) sent
/// a client of the parent job for a GET of a spawned job's WILDCARD rank
/// with no key (the second blob of its GET reply, printed by our client
/// under `mpirun -n 2` of OpenPMIx's dynamic.c, 2026-12-02): the job's
/// keys, its node array and a `pmix.pdata` array per rank.
const MPIRUN_JOB_DATA: &str = "021436363832303530353800feffffff0f0220706d69782e7372762e6e73706163650003145b31303139362c305d0002\
1c706d69782e7372762e72616e6b000e000216706d69782e6a6f6269640003145b31303139362c325d000218706d6978\
2e6f6666736574000e02021e706d69782e6e756d2e6e6f646573000e01021c706d69782e6a6f622e73697a65000e0202\
1e706d69782e6a6f622e6e61707073000e01021c706d69782e6d61782e73697a65000e02021a706d69782e746f706f73\
6967000344314e3a31533a314c333a324c323a324c313a32433a32483a7838365f36343a6c65000216706d69782e6d61\
70627900032a4259534c4f543a4f564552535542534352494245000218706d69782e72616e6b627900030a534c4f5400\
0218706d69782e62696e64746f0003464e4f4e453a49462d535550504f525445443a4f5645524c4f41442d414c4c4f57\
4544000216706d69782e6e6c697374000306766d00021e706d69782e756e69762e73697a65000e020206766d00271807\
16706d69782e686e616d6500000306766d0018706d69782e6e6f6465696400000e001e706d69782e6e6f64652e73697a\
6500000e0414706d69782e706d656d00000f8080c3945e18706d69782e6c706565727300000308302c310014706d6978\
2e6c6c64720000280020706d69782e6c6f63616c2e73697a6500020e020216706d69782e70646174610027180814706d\
69782e72616e6b0000280018706d69782e6c6f637374720000030016706d69782e6772616e6b0000280216706d69782e\
6c72616e6b00000d0016706d69782e6e72616e6b00000d0218706d69782e6e6f6465696400000e0016706d69782e686e\
616d6500000306766d0018706d69782e6170706e756d00020e000216706d69782e70646174610027180814706d69782e\
72616e6b0000280118706d69782e6c6f637374720000030016706d69782e6772616e6b0000280316706d69782e6c7261\
6e6b00000d0116706d69782e6e72616e6b00000d0318706d69782e6e6f6465696400000e0016706d69782e686e616d65\
00000306766d0018706d69782e6170706e756d00020e00";

/// Our environment under a server that gave PMIX_VERSION `version`.
fn env_of(version: Option<&'static str>) -> ClientEnv {
    ClientEnv::from_env(|k| match (k, version) {
        ("PMIX_VERSION", v) => v.map(String::from),
        _ => env_var(k),
    })
    .unwrap()
}

fn env_var(k: &str) -> Option<String> {
    match k {
        "PMIX_NAMESPACE" => Some("chjob"),
        "PMIX_RANK" => Some("0"),
        "PMIX_SERVER_URI41" | "PMIX_SERVER_URI3" => Some("srv.0;tcp4://127.0.0.1:53471"),
        "PMIX_SECURITY_MODE" => Some("native"),
        "PMIX_GDS_MODULE" => Some("ds21,ds12,hash"),
        "PMIX_BFROP_BUFFER_TYPE" => Some("PMIX_BFROP_BUFFER_NON_DESC"),
        _ => None,
    }
    .map(String::from)
}

/// A rank's reserved key of another namespace (a spawned child's
/// PMIX_LOCAL_RANK): of a 4.x server it is asked as that namespace's whole
/// job data (WILDCARD, no key), which libpmix 4.2.2's server answers at
/// once with each rank's part in `pmix.pdata` arrays (asked of the rank,
/// it waits until the rank commits); of a 5.x server, or one that gives
/// no version, the rank's key is asked as before.
#[test]
fn another_jobs_rank_key_is_asked_as_its_job_data_of_a_4x_server() {
    let core = |v| Core::new(env_of(v), 0, 0).unwrap();
    let child = Proc::new("668205058", 1);
    let get = |rank, key: Option<&str>| {
        GetPlan::Ask(Request::Get {
            nspace: Some("668205058".into()),
            rank,
            info: vec![],
            key: Some(key.map(Into::into)),
        })
    };
    assert_eq!(
        core(Some("4.2.2")).plan_get(&child, "pmix.lrank", &[]),
        get(RANK_WILDCARD, None)
    );
    for v in [Some("5.0.11"), None] {
        assert_eq!(
            core(v).plan_get(&child, "pmix.lrank", &[]),
            get(1, Some("pmix.lrank"))
        );
    }
    // the job's own keys, and keys a rank commits, as before
    let job = Proc::new("668205058", RANK_WILDCARD);
    let c = core(Some("4.2.2"));
    assert_eq!(
        c.plan_get(&job, "pmix.job.size", &[]),
        get(RANK_WILDCARD, Some("pmix.job.size"))
    );
    assert_eq!(c.plan_get(&child, "btl.tcp", &[]), get(1, Some("btl.tcp")));
    // libpmix 4.2.2's answer: every rank's part filed under the rank
    let mut c = core(Some("4.2.2"));
    let reply = pmix_codec::msg::Reply::Get {
        status: 0,
        blobs: vec![hex(MPIRUN_JOB_DATA).unwrap().into()],
    };
    assert_eq!(
        c.absorb_get(&child, "pmix.lrank", reply).unwrap(),
        Value::Uint16(1)
    );
    let rank0 = Proc::new("668205058", 0);
    assert_eq!(c.get_local(&rank0, "pmix.lrank"), Some(Value::Uint16(0)));
    assert_eq!(c.get_local(&job, "pmix.job.size"), Some(Value::Uint32(2)));
}

/// Connect, handshake (index 1) and job info, as in the capture.
fn connected() -> Core {
    let mut c = Core::new(env(), 0, 0).unwrap();
    // our connect request: the capture's bytes, except that we announce
    // version 4.2.2 (not 4.2.2rc2) and send no stray trailing byte
    let req = c.poll_transmit().unwrap_or_default();
    let want = hex(
        "ffffffffffffffff2e00000000000000 6e617469766500 00000008 0000000000000000 00 \
         63686a6f6200 00000000 342e322e3200 76343100 01 6861736800",
    )
    .unwrap();
    assert_eq!(req, want);
    c.handle_input(&hex("00000000 00000001").unwrap(), Instant::now())
        .unwrap();
    assert_eq!(c.poll_event(), Some(Event::Connected { index: 1 }));
    assert_eq!(c.send(&Request::Req).unwrap(), Some(101));
    assert_eq!(
        c.poll_transmit().unwrap_or_default(),
        hex("00000001000000650000000200000000 0200").unwrap()
    );
    // the reply split at an awkward place: the core must reassemble it
    let reply = hex(JOB_INFO_REPLY).unwrap();
    c.handle_input(&reply[..7], Instant::now()).unwrap();
    assert_eq!(c.poll_event(), None);
    c.handle_input(&reply[7..], Instant::now()).unwrap();
    assert!(matches!(
        c.poll_event(),
        Some(Event::Reply { tag: 101, .. })
    ));
    c
}

#[test]
fn environment_selects_the_newest_uri_and_native() {
    let e = env();
    assert_eq!(e.format, Format::V41);
    assert_eq!(e.proc, Proc::new("chjob", 0));
    assert_eq!(e.uri, "srv.0;tcp4://127.0.0.1:53471");
    let none = ClientEnv::from_env(|k| (k == "PMIX_NAMESPACE").then(|| "x".to_string()));
    let e = none.unwrap_err();
    assert!(
        matches!(e, ClientError::Env(EnvError::Unset("PMIX_RANK"))),
        "{e:?}"
    );
    assert_eq!(e.to_string(), "environment: PMIX_RANK is not set");
    let munge = ClientEnv::from_env(|k| {
        match k {
            "PMIX_NAMESPACE" => Some("x"),
            "PMIX_RANK" => Some("0"),
            "PMIX_SERVER_URI2" => Some("s.0;tcp4://127.0.0.1:1"),
            "PMIX_SECURITY_MODE" => Some("munge"),
            _ => None,
        }
        .map(String::from)
    });
    let e = munge.unwrap_err();
    assert!(
        matches!(&e, ClientError::Env(EnvError::NoNativeSecurity(m)) if m == "munge"),
        "{e:?}"
    );
    assert!(matches!(
        pmix_wire::client::core::parse_uri("tcp4://nowhere"),
        Err(ClientError::Env(EnvError::BadUri(_)))
    ));
    assert_eq!(
        pmix_wire::client::core::parse_uri("637075456.0;tcp4://127.0.0.1:48295").unwrap(),
        ("637075456.0".into(), "127.0.0.1".into(), 48295)
    );
}

#[test]
fn job_info_answers_reserved_keys_locally() {
    let c = connected();
    let job = Proc::new("chjob", RANK_WILDCARD);
    assert_eq!(c.get_local(&job, "pmix.job.size"), Some(Value::Uint32(2)));
    assert_eq!(c.get_local(&job, "pmix.num.nodes"), Some(Value::Uint32(1)));
    // flattened from pmix.ssn.arr and pmix.node.arr
    assert_eq!(c.get_local(&job, "pmix.univ.size"), Some(Value::Uint32(2)));
    assert_eq!(c.get_local(&job, "pmix.local.size"), Some(Value::Uint32(2)));
    // per-rank data from each pmix.pblob
    let r1 = Proc::new("chjob", 1);
    assert_eq!(c.get_local(&r1, "pmix.nrank"), Some(Value::Uint16(1)));
    assert_eq!(c.get_local(&r1, "pmix.lrank"), Some(Value::Uint16(1)));
    // rank-specific lookups fall back to job level for reserved keys only
    assert_eq!(c.get_local(&r1, "pmix.job.size"), Some(Value::Uint32(2)));
    assert_eq!(c.get_local(&r1, "ch.str"), None);
}

/// The PMIx_Get RFC: a reserved key of our own job (whose job data came
/// at init) is answered from that data alone (absent: NOT_FOUND at once, no
/// GETNB); other keys, and reserved keys of other namespaces, still go to
/// the server.
#[test]
fn reserved_keys_resolve_locally_only_for_our_own_job() {
    let c = connected();
    let r1 = Proc::new("chjob", 1);
    let job = Proc::new("chjob", RANK_WILDCARD);
    assert_eq!(c.get_local(&r1, "pmix.appnum.absent"), None);
    assert!(c.resolves_locally(&r1, "pmix.appnum.absent"));
    assert!(c.resolves_locally(&job, "pmix.no.such.key"));
    // libpmix compares the first four bytes: "pmix" without the dot too
    assert!(c.resolves_locally(&r1, "pmixfoo"));
    assert!(!c.resolves_locally(&r1, "ch.str"));
    assert!(!c.resolves_locally(&Proc::new("otherjob", 0), "pmix.job.size"));
}

/// PMIX_OPTIONAL answers from what the client holds; PMIX_IMMEDIATE asks
/// the server, carrying the flag (so that the server answers at once from
/// its own store), as libpmix 4.2.2's and 5.0.11's clients do: Open MPI 5
/// gets a local peer's shared-memory modex (`btl.sm.5.0`) so, and without
/// the GET a rank finds its peer unreachable.
#[test]
fn optional_stays_local_and_immediate_asks_the_server() {
    let c = connected();
    let r1 = Proc::new("chjob", 1);
    let flag = |k: &str| vec![pmix_types::Info::new(k, Value::Bool(true))];
    assert_eq!(
        c.plan_get(&r1, "btl.sm.5.0", &flag("pmix.optional")),
        GetPlan::NotFound
    );
    assert_eq!(
        c.plan_get(&r1, "btl.sm.5.0", &flag("pmix.immediate")),
        GetPlan::Ask(Request::Get {
            nspace: Some("chjob".into()),
            rank: 1,
            info: flag("pmix.immediate"),
            key: Some(Some("btl.sm.5.0".into())),
        })
    );
    // a false flag is no flag
    let off = vec![pmix_types::Info::new("pmix.optional", Value::Bool(false))];
    assert!(matches!(
        c.plan_get(&r1, "btl.sm.5.0", &off),
        GetPlan::Ask(_)
    ));
    // what the client holds is answered locally either way
    assert_eq!(
        c.plan_get(&r1, "pmix.lrank", &flag("pmix.immediate")),
        GetPlan::Local(Value::Uint16(1))
    );
}

#[test]
fn commit_matches_libpmix_bytes() {
    let mut c = connected();
    c.put(
        Scope::GLOBAL,
        "ch.str",
        Value::String(Some("hello-from-0".into())),
    );
    c.put(Scope::GLOBAL, "ch.u32", Value::Uint32(1000));
    c.put(Scope::LOCAL, "ch.local", Value::Int64(-1));
    c.put(
        Scope::REMOTE,
        "ch.bo",
        Value::ByteObject([0u8, 1, 2, 3, 4, 5, 6, 0][..].into()),
    );
    // our own puts are visible to our own gets at once
    assert_eq!(
        c.get_local(&Proc::new("chjob", 0), "ch.u32"),
        Some(Value::Uint32(1000))
    );
    let req = c.commit_request().unwrap();
    assert_eq!(c.send(&req).unwrap(), Some(102));
    let want = hex(
        "00000001000000660000007300000000 0202 0201 \
         020131020e63682e73747200031a68656c6c6f2d66726f6d2d3000020e63682e753332000ee807021263682e6c6f6361\
         6c000a01 0202 \
         020136020e63682e73747200031a68656c6c6f2d66726f6d2d3000020e63682e753332000ee807020c63682e626f001b\
         080001020304050600",
    )
    .unwrap();
    assert_eq!(c.poll_transmit().unwrap_or_default(), want);
}

#[test]
fn get_reply_fills_the_cache_and_not_found_is_a_status() {
    let mut c = connected();
    let r1 = Proc::new("chjob", 1);
    let req = Request::Get {
        nspace: Some("chjob".into()),
        rank: 1,
        info: vec![],
        key: Some(Some("ch.str".into())),
    };
    assert_eq!(c.send(&req).unwrap(), Some(102));
    // the request bytes libpmix sent (its tag was 104)
    let mut sent = c.poll_transmit().unwrap_or_default();
    sent[7] = 0x68;
    assert_eq!(
        sent,
        hex("00000001000000680000001700000000 0204 020c63686a6f6200 0201 0200 020e63682e73747200")
            .unwrap()
    );
    c.handle_input(
        &hex(
            "00000000000000660000003e00000000 0200 \
             023a020c63686a6f620001020e63682e73747200031a68656c6c6f2d66726f6d2d3100020e63682e753332000ee90702\
             1263682e6c6f63616c000a03",
        )
        .unwrap(), Instant::now())
    .unwrap();
    let Some(Event::Reply { tag: 102, reply }) = c.poll_event() else {
        panic!("no reply")
    };
    let v = c.absorb_get(&r1, "ch.str", reply).unwrap();
    assert_eq!(v, Value::String(Some("hello-from-1".into())));
    // the other keys of that blob are now local
    assert_eq!(c.get_local(&r1, "ch.u32"), Some(Value::Uint32(1001)));
    assert_eq!(c.get_local(&r1, "ch.local"), Some(Value::Int64(-2)));
    // the capture's answer to GET ch.bo: STATUS -46
    c.send(&req).unwrap();
    c.handle_input(
        &hex("00000000000000670000000200000000 025b").unwrap(),
        Instant::now(),
    )
    .unwrap();
    let Some(Event::Reply { tag: 103, reply }) = c.poll_event() else {
        panic!("no reply")
    };
    let err = c.absorb_get(&r1, "ch.bo", reply).unwrap_err();
    assert_eq!(err.status(), -46);
    assert!(err.to_string().contains("PMIX_ERR_NOT_FOUND"), "{err}");
}

#[test]
fn hostile_input_is_an_error_not_a_panic() {
    let mut c = connected();
    // a reply to a tag we never used
    let e = c
        .handle_input(
            &hex("00000000000000770000000200000000 0200").unwrap(),
            Instant::now(),
        )
        .unwrap_err();
    assert!(e.to_string().contains("tag 119"), "{e}");
    // a failed handshake
    let mut c = Core::new(env(), 0, 0).unwrap();
    let e = c
        .handle_input(&hex("ffffffd3 00000000").unwrap(), Instant::now())
        .unwrap_err();
    assert_eq!(e.status(), -45);
    // a truncated event notice on tag 0
    let mut c = connected();
    assert!(c
        .handle_input(
            &hex("00000000000000000000000300000000 020c02").unwrap(),
            Instant::now()
        )
        .is_err());
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
    /// Whatever a server sends, the core answers with events or a typed
    /// error, never a panic: raw bytes, and well-framed junk on tag 0 and
    /// on a pending tag.
    #[test]
    fn arbitrary_server_bytes_never_panic(
        junk in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300),
        framed in proptest::prelude::any::<bool>(),
        notice in proptest::prelude::any::<bool>(),
    ) {
        let mut c = connected();
        let tag = c.send(&Request::Finalize).unwrap().unwrap();
        let bytes = if framed {
            pmix_codec::frame::frame(
                0,
                if notice { 0 } else { tag },
                &junk,
                pmix_codec::frame::HeaderOrder::Network,
            )
            .unwrap()
        } else {
            junk
        };
        let _ = c.handle_input(&bytes, Instant::now());
        while c.poll_event().is_some() {}
        // and before the handshake
        let mut c = Core::new(env(), 0, 0).unwrap();
        let _ = c.handle_input(&bytes, Instant::now());
    }
}

/// LOG's TIME follows the server's version as libpmix 4.2.2's client
/// decides it (pmix_log.c): PMIX_VERSION where given, else the URI variable.
#[test]
fn log_time_follows_the_server_version_not_the_dialect() {
    let with = |vars: &[(&str, &str)]| {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ClientEnv::from_env(|k| {
            match k {
                "PMIX_NAMESPACE" => Some("chjob".to_string()),
                "PMIX_RANK" => Some("0".to_string()),
                _ => None,
            }
            .or_else(|| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()))
        })
        .unwrap()
    };
    let uri = "srv.0;tcp4://127.0.0.1:53471";
    // a 4.2.2 server offering only a v20 URI: TIME all the same
    let e = with(&[("PMIX_SERVER_URI2", uri), ("PMIX_VERSION", "4.2.2")]);
    assert_eq!(e.format.dialect, pmix_codec::Dialect::V20);
    assert!(e.log_sends_time());
    // a 2.x server: none
    let e = with(&[("PMIX_SERVER_URI2", uri), ("PMIX_VERSION", "2.2.5")]);
    assert!(!e.log_sends_time());
    // no version given: the URI variable says it
    assert!(!with(&[("PMIX_SERVER_URI21", uri)]).log_sends_time());
    assert!(with(&[("PMIX_SERVER_URI3", uri)]).log_sends_time());
    assert!(with(&[("PMIX_SERVER_URI41", uri)]).log_sends_time());
}

/// `handle_input` takes the driver's `now` (a virtual clock here): a
/// reply that comes before its request's deadline is the reply; one that
/// comes after it is late (the request timed out), even where the driver
/// never called `handle_timeout` in between.
#[test]
fn input_at_now_expires_the_deadlines_now_has_passed() {
    use std::time::Duration;
    let t0 = Instant::now();
    let mut c = connected();
    let tag = c
        .send_by(&Request::Finalize, t0 + Duration::from_secs(1))
        .unwrap()
        .unwrap();
    let reply = |tag: u32| {
        pmix_codec::frame::frame(
            0,
            tag,
            &hex("0200").unwrap(),
            pmix_codec::frame::HeaderOrder::Network,
        )
        .unwrap()
    };
    c.handle_input(&reply(tag), t0 + Duration::from_millis(500))
        .unwrap();
    assert!(matches!(c.poll_event(), Some(Event::Reply { tag: t, .. }) if t == tag));
    assert_eq!(c.poll_timeout(), None);
    let late = c
        .send_by(&Request::Finalize, t0 + Duration::from_secs(1))
        .unwrap()
        .unwrap();
    c.handle_input(&reply(late), t0 + Duration::from_secs(2))
        .unwrap();
    assert_eq!(c.poll_event(), Some(Event::TimedOut { tag: Some(late) }));
    assert_eq!(c.poll_event(), None, "the late reply is dropped");
}

/// The operations layer on the core alone (no driver): what the core
/// answers at once, the request an operation sends, and typed errors for
/// replies it does not take.
#[test]
fn operations_start_and_read_replies_on_the_core_alone() {
    use pmix_codec::msg::{Reply, ReplyKind};
    use pmix_wire::client::ops::{self, Operation, Start};
    use pmix_wire::client::{ClientError, LookupOpts, Malformed};
    let mut c = connected();
    // resolve peers: `pmix.lpeers` of our own job, answered from the job info
    let mut op = ops::resolve_peers("chjob");
    match op.start(&mut c).unwrap() {
        Start::Done(p) => assert_eq!(p, vec![Proc::new("chjob", 0), Proc::new("chjob", 1)]),
        Start::Ask(r) => panic!("asked {r:?}"),
    }
    // a lookup asks; a reply of another layout is named, not stringified
    let mut op = ops::lookup(&["k"], LookupOpts::new());
    let Start::Ask(Request::Lookup { uid, keys, .. }) = op.start(&mut c).unwrap() else {
        panic!("a lookup sends LOOKUP");
    };
    assert_eq!((uid, keys), (0, vec![Some("k".into())]));
    let again = op.start(&mut c).unwrap_err();
    assert!(
        matches!(again, ClientError::Reused { op: "lookup" }),
        "{again:?}"
    );
    let e = op
        .finish(
            &mut c,
            Reply::Get {
                status: 0,
                blobs: vec![],
            },
        )
        .unwrap_err();
    assert!(
        matches!(
            e,
            ClientError::UnexpectedReply {
                op: "lookup",
                got: ReplyKind::Get
            }
        ),
        "{e:?}"
    );
    assert_eq!(e.to_string(), "lookup: unexpected Get reply");
    // a status is the server's answer, named by the operation
    let mut op = ops::query(pmix_wire::client::Queries::new().ask(["pmix.qry.ns"]));
    assert!(matches!(
        op.start(&mut c).unwrap(),
        Start::Ask(Request::Query { .. })
    ));
    let e = op.finish(&mut c, Reply::Status(-46)).unwrap_err();
    assert!(
        matches!(
            e,
            ClientError::Status {
                op: "query",
                code: -46
            }
        ),
        "{e:?}"
    );
    // job data of the wrong type says which key and what it holds: a GET
    // of another job's `pmix.nlist` answered with a UINT32
    let mut op = ops::resolve_nodes("other");
    assert!(matches!(
        op.start(&mut c).unwrap(),
        Start::Ask(Request::Get { .. })
    ));
    let mut b = pmix_codec::DataBuffer::new(c.format());
    b.pack(
        pmix_types::DataType::Proc,
        &[Value::Proc(Box::new(Proc::new("other", RANK_WILDCARD)))],
    )
    .unwrap();
    b.pack(
        pmix_types::DataType::Kval,
        &[Value::Kval(Box::new(pmix_types::Kval {
            key: Some("pmix.nlist".into()),
            value: Value::Uint32(3),
        }))],
    )
    .unwrap();
    let blob = bytes::Bytes::copy_from_slice(b.as_bytes());
    let e = op
        .finish(
            &mut c,
            Reply::Get {
                status: 0,
                blobs: vec![blob],
            },
        )
        .unwrap_err();
    assert!(
        matches!(
            e,
            ClientError::Malformed {
                op: "resolve nodes",
                what: Malformed::NotAList {
                    key: "pmix.nlist",
                    ..
                }
            }
        ),
        "{e:?}"
    );
}

/// A GET with qualifiers (a group member's local context id) answered as
/// libpmix's server answers it and as ours does (server/modex.rs):
/// `pmix.qual.val`, an INFO array of the value under its key and then the
/// qualifiers. The value is the answer; it is not kept under the bare key
/// (a GET without those qualifiers must ask again), and a `pmix.qual.val`
/// for another key is no answer.
#[test]
fn a_qualified_answer_is_the_value_and_is_not_cached_under_its_key() {
    use pmix_codec::msg::Reply;
    use pmix_types::{DataArray, DataType, Info, Kval};
    let mut c = connected();
    let r1 = Proc::new("chjob", 1);
    let reply_for = |c: &Core, key: &str| {
        let mut b = pmix_codec::DataBuffer::new(c.format());
        b.pack(DataType::Proc, &[Value::Proc(Box::new(r1.clone()))])
            .unwrap();
        let items = vec![
            Value::Info(Box::new(Info::new(key, Value::Size(7)))),
            Value::Info(Box::new(Info::new("pmix.grp.id", Value::from("g1")))),
        ];
        let a = DataArray::new(DataType::Info, items).unwrap();
        b.pack(
            DataType::Kval,
            &[Value::Kval(Box::new(Kval {
                key: Some("pmix.qual.val".into()),
                value: Value::DataArray(Box::new(a)),
            }))],
        )
        .unwrap();
        Reply::Get {
            status: 0,
            blobs: vec![bytes::Bytes::copy_from_slice(b.as_bytes())],
        }
    };
    let r = reply_for(&c, "pmix.grp.lcid");
    assert_eq!(
        c.absorb_get(&r1, "pmix.grp.lcid", r).unwrap(),
        Value::Size(7)
    );
    assert_eq!(c.get_local(&r1, "pmix.grp.lcid"), None);
    assert_eq!(c.get_local(&r1, "pmix.qual.val"), None);
    let r = reply_for(&c, "other.key");
    assert_eq!(
        c.absorb_get(&r1, "pmix.grp.lcid", r).unwrap_err().status(),
        -46
    );
}

/// A 5.0 or later server keeps no group membership: libpmix 5.0.11's
/// client packs in GROUP_DESTRUCT the members its construct's reply gave
/// ("the server isn't storing it"), and prterun's server refuses a destruct
/// without them (Open MPI 5's MPI_Comm_create_from_group then fails). Ours
/// does the same; after a 4.x reply (a context id alone) the destruct stays
/// in the 4.x form, and a group destructed is forgotten.
#[test]
fn a_destruct_carries_the_members_a_5_0_servers_construct_gave() {
    use pmix_codec::msg::{GroupReply, Reply};
    use pmix_wire::client::ops::{self, Operation, Start};
    use pmix_wire::client::GroupOpts;
    let mut c = connected();
    let members = vec![Proc::new("chjob", 0), Proc::new("chjob", 1)];
    let destruct = |c: &mut Core, g: &str| match ops::group_destruct(g, &[]).start(c).unwrap() {
        Start::Ask(Request::GroupDestruct { procs, .. }) => procs,
        other => panic!("{other:?}"),
    };
    let mut op = ops::group_construct("g5", &members, GroupOpts::new());
    assert!(matches!(op.start(&mut c).unwrap(), Start::Ask(_)));
    let v5 = Reply::Group {
        status: 0,
        body: GroupReply::V5 {
            members: members.clone(),
            ctxid: 3,
            blobs: vec![],
        },
    };
    assert_eq!(op.finish(&mut c, v5).unwrap(), Some(3));
    assert_eq!(destruct(&mut c, "g5"), Some(members.clone()));
    assert_eq!(destruct(&mut c, "g5"), None);
    let mut op = ops::group_construct("g4", &members, GroupOpts::new());
    op.start(&mut c).unwrap();
    let v4 = Reply::Group {
        status: 0,
        body: GroupReply::V4 { ctxid: 4 },
    };
    assert_eq!(op.finish(&mut c, v4).unwrap(), Some(4));
    assert_eq!(destruct(&mut c, "g4"), None);
    assert_eq!(destruct(&mut c, "never"), None);
}

/// A spawn under a server that offers shmem2 (PRRTE 5.0.11 gives
/// `PMIX_GDS_MODULE=shmem2,hash`) tells each app's processes the hash
/// store (`PMIX_MCA_gds=hash`), as our client has no other and libpmix
/// 5.0.11's server dies when a hash job and a shmem2 job connect
/// (spec-notes/divergences.md, issue 34); an app that names the store
/// keeps its own; under a server offering no shmem2 (4.2.2's
/// `ds21,ds12,hash`) the apps go as given.
#[test]
fn a_spawn_tells_the_children_the_hash_store_where_the_server_offers_shmem2() {
    use pmix_wire::client::ops::{self, Operation, Start};
    use pmix_wire::client::{Spawn, SpawnApp};
    let envs = |c: &mut Core| {
        let sp = Spawn::new()
            .app(SpawnApp::new("a", 1).env("X", "1"))
            .app(SpawnApp::new("b", 2).env("PMIX_MCA_gds", "ds21"));
        let Start::Ask(Request::Spawn { apps, .. }) = ops::spawn(sp).start(c).unwrap() else {
            panic!("a spawn sends SPAWN");
        };
        apps.iter()
            .map(|a| a.env.iter().map(|e| e.to_string()).collect::<Vec<_>>())
            .collect::<Vec<_>>()
    };
    let mut e = env();
    assert_eq!(e.gds, "ds21,ds12,hash");
    assert_eq!(e.spawn_store_hint(), None);
    let mut c = Core::new(e.clone(), 0, 0).unwrap();
    assert_eq!(envs(&mut c), [vec!["X=1"], vec!["PMIX_MCA_gds=ds21"]]);
    e.gds = "shmem2,hash".into();
    assert_eq!(e.spawn_store_hint(), Some("PMIX_MCA_gds=hash"));
    let mut c = Core::new(e, 0, 0).unwrap();
    assert_eq!(
        envs(&mut c),
        [vec!["X=1", "PMIX_MCA_gds=hash"], vec!["PMIX_MCA_gds=ds21"]]
    );
}

/// A tool's first connect asks the server for an identity; one attaching
/// to a further server brings the identity its first server gave it
/// (PMIx_tool_attach_to_server): flag TOOL_GIVEN_ID and that proc, with
/// its uid and gid, in the request the core queues.
#[test]
fn a_tool_attaching_again_brings_its_identity() {
    use pmix_codec::handshake::{peer_type, ConnectRequest};
    let request = |mut c: Core| {
        let frame = c.poll_transmit().expect("the connect request is queued");
        // the 16-byte header (pindex, tag, size) before the request
        ConnectRequest::decode(&frame[16..]).unwrap()
    };
    let uri = "srv.0;tcp4://127.0.0.1:1".to_string();
    let first = request(Core::new_tool(uri.clone(), Format::V41, 7, 8, vec![]).unwrap());
    assert_eq!(first.flag, peer_type::TOOL_NEEDS_ID);
    assert_eq!(first.proc, None);
    assert_eq!(first.uid_gid, Some((7, 8)));
    let me = Proc::new("pmixw.tool.12", 0);
    let again =
        request(Core::new_tool_with_id(uri, Format::V41, 7, 8, vec![], me.clone()).unwrap());
    assert_eq!(again.flag, peer_type::TOOL_GIVEN_ID);
    assert_eq!(again.proc, Some(me));
    assert_eq!(again.uid_gid, Some((7, 8)));
}
