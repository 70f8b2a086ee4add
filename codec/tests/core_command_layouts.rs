//! Request layouts of protocol.md §5 beyond those the captures exercise:
//! the reference's worked bytes decode to the typed request and re-encode
//! byte for byte, and every typed request round-trips in each dialect
//! family (flex v41, fixed v3, legacy v20 described).
//! Requests with no worked bytes (SPAWN, ALLOC, JOB_CONTROL, MONITOR, the
//! credential, IOF pull/dereg, GROUP construct/destruct, FABRIC ones) follow
//! protocol.md §5.1's table and are checked by round trip only.

use pmix_codec::error::ErrorKind;
use pmix_codec::msg::{cmd, Reply, Request};
use pmix_codec::{BufferType, Dialect, Format};
use pmix_types::hex;
use pmix_types::{App, Info, Proc, Value};

mod common;
use common::requests::{info, plain_requests, procs};

fn fmt(dialect: Dialect, buffer_type: BufferType) -> Format {
    Format::new(dialect, buffer_type)
}

#[test]
fn regevents_matches_the_reference_bytes() {
    // protocol.md §5.4 "REGEVENTS": COMMAND 13, SIZE 1, STATUS -3001, SIZE 0
    let bytes = hex::decode("020d 0201 02f12e 0200".replace(' ', "").as_str()).unwrap();
    let f = fmt(Dialect::V41, BufferType::NonDesc);
    let r = Request::decode(&f, &bytes).unwrap();
    assert_eq!(
        r,
        Request::RegEvents {
            codes: vec![-3001],
            info: vec![]
        }
    );
    assert_eq!(r.command(), cmd::REGEVENTS);
    assert_eq!(r.encode(&f).unwrap(), bytes);
}

/// Request samples in other shapes than msg_table.rs's, and the plain
/// requests both use.
fn samples() -> Vec<Request> {
    let info = info();
    let procs = procs();
    let mut all = vec![
        Request::Publish {
            uid: 1000,
            info: info.clone(),
        },
        Request::Lookup {
            uid: 0,
            keys: vec![Some("a".into()), None, Some("b".into())],
            info: vec![],
        },
        Request::Unpublish {
            uid: 42,
            keys: vec![],
            info: info.clone(),
        },
        Request::Connect {
            procs: procs.clone(),
            info: info.clone(),
        },
        Request::Disconnect {
            procs,
            info: vec![],
        },
        Request::Notify {
            status: -3001,
            range: 3,
            info,
        },
        Request::RegEvents {
            codes: vec![],
            info: vec![],
        },
        Request::DeregEvents {
            codes: vec![-3001, 0, 5],
        },
        Request::DeregEvents { codes: vec![] },
        Request::Spawn {
            info: vec![Info::new("pmix.mapby", Value::String(Some("slot".into())))],
            apps: vec![App {
                cmd: Some("hostname".into()),
                argv: vec!["hostname".into(), "-s".into()],
                env: vec!["A=1".into()],
                cwd: Some("/tmp".into()),
                maxprocs: 2,
                info: vec![],
            }],
        },
        Request::Alloc {
            directive: 1,
            info: vec![Info::new("pmix.alloc.nnodes", Value::Uint64(2))],
        },
        Request::JobControl {
            targets: vec![Proc::new("job1", u32::MAX)],
            directives: vec![Info::new("pmix.jctrl.kill", Value::Bool(true))],
        },
        Request::GetCredential { info: vec![] },
        Request::ValidateCred {
            credential: bytes::Bytes::from_static(b"\x00\x01cred"),
            directives: vec![],
        },
        Request::IofPull {
            procs: vec![Proc::new("job1", 0)],
            directives: vec![],
            channels: 0x3,
            local_id: 7,
        },
        Request::GroupConstruct {
            group: Some("grp".into()),
            procs: vec![Proc::new("job1", 0), Proc::new("job1", 1)],
            info: vec![],
        },
        Request::GroupDestruct {
            group: Some("grp".into()),
            procs: None,
            info: vec![Info::new("pmix.timeout", Value::Int32(5))],
        },
        // 5.0 and later clients name the members they know
        Request::GroupDestruct {
            group: Some("grp".into()),
            procs: Some(vec![Proc::new("job1", 0), Proc::new("job1", 1)]),
            info: vec![],
        },
        Request::FabricRegister { directives: vec![] },
        Request::IofPush {
            targets: vec![Proc::new("job1", 0)],
            directives: vec![Info::new("pmix.iof.stdin", Value::Bool(true))],
            data: Some(bytes::Bytes::from_static(b"line\n")),
        },
        // at EOF the data is left out
        Request::IofPush {
            targets: vec![Proc::new("job1", 0)],
            directives: vec![],
            data: None,
        },
        Request::GroupLeave {
            group: Some("grp".into()),
            info: vec![],
        },
        Request::SessionCtrl {
            session: 9,
            directives: vec![Info::new("pmix.sctrl.pause", Value::Bool(true))],
        },
    ];
    all.extend(plain_requests());
    all
}

/// LOG's TIME follows the peer's PMIx version, not the dialect
/// (spec-notes/commands.md row 16): v3+ dialects (3.0+ peers only) always
/// carry it and refuse a LOG without it; in v12/v20/v21 a 2.x peer leaves
/// it out and a 3.0+ one (libpmix 4.2.2 on a v20 connection) sends it, so
/// both forms round-trip there.
#[test]
fn log_timestamp_follows_the_peer_version() {
    use pmix_codec::msg::log_sends_time;
    let data = vec![Info::new(
        "pmix.log.stderr",
        Value::String(Some("hi".into())),
    )];
    let log = |timestamp| Request::Log {
        timestamp,
        data: data.clone(),
        directives: vec![],
    };
    for (f, timestamp) in [
        (fmt(Dialect::V41, BufferType::NonDesc), Some(1_700_000_000)),
        (fmt(Dialect::V41, BufferType::FullyDesc), Some(0)),
        (fmt(Dialect::V3, BufferType::NonDesc), Some(5)),
        (fmt(Dialect::V61, BufferType::NonDesc), Some(7)),
    ] {
        let r = log(timestamp);
        let bytes = r.encode(&f).unwrap();
        assert_eq!(Request::decode(&f, &bytes).unwrap(), r, "{f:?}");
        let bytes = log(None).encode(&f).unwrap();
        assert_ne!(Request::decode(&f, &bytes).ok(), Some(log(None)), "{f:?}");
    }
    for dialect in [Dialect::V12, Dialect::V20, Dialect::V21] {
        for bt in [BufferType::NonDesc, BufferType::FullyDesc] {
            let f = fmt(dialect, bt);
            for timestamp in [None, Some(0), Some(1_700_000_000)] {
                let r = log(timestamp);
                let bytes = r.encode(&f).unwrap();
                assert_eq!(Request::decode(&f, &bytes).unwrap(), r, "{f:?}");
            }
            // a LOG cut short decodes in neither form
            let mut bytes = log(Some(0)).encode(&f).unwrap();
            bytes.truncate(bytes.len() - 1);
            assert!(Request::decode(&f, &bytes).is_err(), "{f:?}");
        }
    }
    // libpmix reads the major as strtoul after an optional 'v'
    for (v, sends) in [
        ("4.2.2", true),
        ("3.0.0", true),
        ("v3.1.5", true),
        ("5.0.11rc1", true),
        ("2.1.4", false),
        ("2.0.0", false),
        ("1.2.5", false),
        ("", false),
        ("x", false),
    ] {
        assert_eq!(log_sends_time(v), sends, "{v}");
    }
    // v41: COMMAND 16, TIME, SIZE 1 + INFO, SIZE 0
    let f = fmt(Dialect::V41, BufferType::NonDesc);
    let r = Request::Log {
        timestamp: Some(0x10),
        data: vec![Info::new("k", Value::Bool(true))],
        directives: vec![],
    };
    let bytes = r.encode(&f).unwrap();
    assert_eq!(&bytes[..2], &[0x02, 0x10]);
    assert_eq!(bytes[bytes.len() - 2..], [0x02, 0x00]);
}

/// Commands whose fields need the v4+ (TOPO, PROC_CPUSET) or v6 (RESOURCE_UNIT,
/// RESBLOCK_DIRECTIVE) types: round trips in the dialects that have them,
/// refused in those that do not.
#[test]
fn device_distances_and_resource_blocks_need_their_dialects() {
    let dd = Request::DeviceDistances {
        topology: pmix_types::Topology::default(),
        cpuset: pmix_types::Cpuset {
            cpus: Some("0-3".into()),
        },
        info: vec![Info::new("pmix.dev.type", Value::Uint64(2))],
    };
    let rb = Request::ResBlock {
        directive: 1,
        block: Some("blk".into()),
        units: vec![pmix_types::ResourceUnit {
            devtype: 4,
            count: 16,
        }],
        info: vec![],
    };
    for (r, good, bad) in [
        (&dd, Dialect::V41, Dialect::V20),
        (&rb, Dialect::V61, Dialect::V41),
    ] {
        let f = fmt(good, BufferType::NonDesc);
        let bytes = r.encode(&f).unwrap();
        assert_eq!(&Request::decode(&f, &bytes).unwrap(), r);
        assert!(
            r.encode(&fmt(bad, BufferType::NonDesc)).is_err(),
            "{r:?} in {bad:?}"
        );
    }
}

#[test]
fn typed_requests_round_trip_in_every_dialect_family() {
    for f in [
        fmt(Dialect::V41, BufferType::NonDesc),
        fmt(Dialect::V41, BufferType::FullyDesc),
        fmt(Dialect::V3, BufferType::NonDesc),
        fmt(Dialect::V20, BufferType::FullyDesc),
    ] {
        for r in samples() {
            let bytes = match r.encode(&f) {
                Ok(b) => b,
                // a dialect that cannot carry a field's type refuses the
                // request (v20 has no IOF_CHANNEL)
                Err(e) if f.dialect == Dialect::V20 => {
                    assert!(
                        matches!(e.kind, ErrorKind::NotRegistered { .. }),
                        "{r:?}: {e}"
                    );
                    assert!(matches!(r, Request::IofPull { .. }), "{r:?}: {e}");
                    continue;
                }
                Err(e) => panic!("{f:?} {r:?}: {e}"),
            };
            let back = Request::decode(&f, &bytes).unwrap_or_else(|e| panic!("{f:?} {r:?}: {e}"));
            assert_eq!(back, r, "{f:?}");
            assert!(!matches!(back, Request::Other { .. }));
            // every proper prefix is refused (or, for unit-per-item fields,
            // is a different request), never a panic
            for cut in 1..bytes.len() {
                if let Ok(x) = Request::decode(&f, &bytes[..cut]) {
                    assert_ne!(x, r);
                }
            }
        }
    }
}

#[test]
fn a_hostile_key_count_runs_out_of_bytes() {
    // LOOKUP with nkeys = 2^60 and no keys: refused, nothing allocated from the count
    let f = fmt(Dialect::V41, BufferType::NonDesc);
    let mut bytes = hex::decode("0207 0200".replace(' ', "").as_str()).unwrap();
    bytes.extend_from_slice(&[0x02, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10]);
    let e = Request::decode(&f, &bytes).unwrap_err();
    assert!(e.to_string().contains("keys"), "{e}");
}

fn h(s: &str) -> Vec<u8> {
    hex::decode(&s.replace(' ', "")).unwrap()
}

/// protocol.md §5.4 "PUBLISHNB / LOOKUPNB / UNPUBLISHNB": the worked bytes
/// (4.2.2 client, v41) as typed requests and replies, both ways.
#[test]
fn publish_lookup_unpublish_match_the_reference_bytes() {
    let f = fmt(Dialect::V41, BufferType::NonDesc);
    let svc_hello = Info::new("svc", Value::String(Some("hello".into())));
    let cases = [
        (
            "0206 0200 0201 02 08 73766300 00 03 0c 68656c6c6f00",
            Request::Publish {
                uid: 0,
                info: vec![svc_hello],
            },
        ),
        (
            "0207 0200 0201 0208 73766300 0200",
            Request::Lookup {
                uid: 0,
                keys: vec![Some("svc".into())],
                info: vec![],
            },
        ),
        (
            "0208 0200 0201 0208 73766300 0200",
            Request::Unpublish {
                uid: 0,
                keys: vec![Some("svc".into())],
                info: vec![],
            },
        ),
    ];
    for (bytes, want) in cases {
        let bytes = h(bytes);
        assert_eq!(Request::decode(&f, &bytes).unwrap(), want);
        assert_eq!(want.encode(&f).unwrap(), bytes, "{want:?}");
    }

    let reply = h("0200 0201 02 0e 746573746e7300 00 08 73766300 03 0c 68656c6c6f00");
    let r = Reply::decode(&f, cmd::LOOKUPNB, &reply).unwrap();
    let Reply::Lookup { status: 0, data } = &r else {
        panic!("{r:?}")
    };
    assert_eq!(data.len(), 1);
    assert_eq!(data[0].proc, Proc::new("testns", 0));
    assert_eq!(data[0].key, Info::new("svc", Value::Undef).key);
    assert_eq!(data[0].value, Value::String(Some("hello".into())));
    assert_eq!(r.encode(&f).unwrap(), reply);

    // a failed lookup is just a non-zero STATUS (-46 = PMIX_ERR_NOT_FOUND),
    // which decodes as the lone STATUS of the error convention
    let failed = Reply::Lookup {
        status: -46,
        data: vec![],
    };
    let bytes = failed.encode(&f).unwrap();
    assert_eq!(bytes, h("02 5b"));
    assert_eq!(
        Reply::decode(&f, cmd::LOOKUPNB, &bytes).unwrap(),
        Reply::Status(-46)
    );
}

/// protocol.md §5.4 "NOTIFY, server → client": the layout observed with a
/// source `{testns,0}`, two infos and range 3, with and without the
/// trailing DATA_RANGE (the cached-event replay omits it).
#[test]
fn event_notices_follow_the_reference_layout() {
    use pmix_codec::msg::EventNotice;
    let f = fmt(Dialect::V41, BufferType::NonDesc);
    let mut ev = EventNotice {
        status: -3001,
        source: Proc::new("testns", 0),
        info: vec![
            Info::new("myevinfo", Value::String(Some("x".into()))),
            Info::new("pmix.srvr.internal.notify", Value::Bool(true)),
        ],
        range: Some(3),
    };
    let bytes = ev.encode(&f).unwrap();
    // COMMAND 12, STATUS -3001, PROC {testns, 0}, SIZE 2, INFO unit of 2
    assert!(bytes.starts_with(&h("020c 02f12e 02 0e 746573746e7300 00 0202 04")));
    assert!(bytes.ends_with(&h("02 03")), "trailing DATA_RANGE 3");
    assert_eq!(EventNotice::decode(&f, &bytes).unwrap(), ev);
    ev.range = None;
    let short = ev.encode(&f).unwrap();
    assert_eq!(short.len() + 2, bytes.len());
    assert_eq!(EventNotice::decode(&f, &short).unwrap(), ev);
    // not a NOTIFY, or trailing garbage: refused
    assert!(EventNotice::decode(&f, &h("0205")).is_err());
    let mut junk = bytes.clone();
    junk.push(0);
    assert!(EventNotice::decode(&f, &junk).is_err());
    for cut in 1..short.len() {
        assert!(EventNotice::decode(&f, &short[..cut]).is_err());
    }
}

/// Hostile payloads: every single-bit flip of every sample request, and
/// every reply layout over the same bytes, decodes or fails with an error;
/// nothing panics.
#[test]
fn bit_flipped_messages_never_panic() {
    let f = fmt(Dialect::V41, BufferType::NonDesc);
    let mut checked = 0;
    for r in samples() {
        let bytes = r.encode(&f).unwrap();
        for i in 0..bytes.len() * 8 {
            let mut b = bytes.clone();
            b[i / 8] ^= 1 << (i % 8);
            let _ = Request::decode(&f, &b);
            for c in 0..40u8 {
                let _ = Reply::decode(&f, c, &b[2.min(b.len())..]);
            }
            let _ = pmix_codec::msg::EventNotice::decode(&f, &b);
            checked += 1;
        }
    }
    assert!(checked > 1000);
}

/// Replies of the protocol.md §5.1 table: each typed layout re-encodes
/// byte for byte and decodes back to itself, in v41 and v3.
#[test]
fn typed_replies_round_trip() {
    let info = vec![Info::new("pmix.alloc.id", Value::String(Some("a1".into())))];
    let kval = pmix_types::Kval {
        key: Some("pmix.job.size".into()),
        value: Value::Uint32(4),
    };
    let cases = vec![
        (
            cmd::ALLOC,
            Reply::Infos {
                status: 0,
                info: Some(info.clone()),
            },
        ),
        (
            cmd::JOB_CONTROL,
            Reply::Infos {
                status: 0,
                info: Some(vec![]),
            },
        ),
        (
            cmd::GET_CREDENTIAL,
            Reply::Credential {
                status: 0,
                credential: Some(bytes::Bytes::from_static(b"cred")),
                info: Some(info.clone()),
            },
        ),
        (
            cmd::IOF_PULL,
            Reply::Id {
                status: 0,
                id: Some(12),
            },
        ),
        (
            cmd::SPAWNNB,
            Reply::Spawn {
                status: 0,
                nspace: Some(Some("job2".into())),
                kvals: vec![kval],
            },
        ),
        (
            cmd::RESOLVE_PEERS,
            Reply::Peers {
                status: 0,
                procs: Some(vec![Proc::new("job1", 0), Proc::new("job1", 1)]),
            },
        ),
        (
            cmd::RESOLVE_NODE,
            Reply::Nodes {
                status: 0,
                nodelist: Some(Some("node01,node02".into())),
            },
        ),
        (
            cmd::SESSION_CTRL,
            Reply::Infos {
                status: 0,
                info: Some(info.clone()),
            },
        ),
        (
            cmd::GDS_FALLBACK,
            Reply::JobInfo {
                nspace: Some("job1".into()),
                kvals: vec![],
            },
        ),
        (
            cmd::CONNECTNB,
            Reply::Connect {
                status: 0,
                blobs: vec![bytes::Bytes::from_static(b"\x02\x00")],
            },
        ),
    ];
    for f in [
        fmt(Dialect::V41, BufferType::NonDesc),
        fmt(Dialect::V3, BufferType::NonDesc),
    ] {
        for (c, r) in &cases {
            let bytes = r.encode(&f).unwrap();
            assert_eq!(&Reply::decode(&f, *c, &bytes).unwrap(), r, "{f:?} {c}");
        }
        // a lone STATUS answers any of them (the error convention); for
        // CONNECT, whose byte objects may be none, it is that layout
        let lone = Reply::Status(-25).encode(&f).unwrap();
        for (c, _) in &cases {
            if *c == cmd::GDS_FALLBACK {
                // answered like REQ: a lone STATUS is the error convention's
                // wrong-typed reply, which does not decode as job info
                continue;
            }
            let want = if *c == cmd::CONNECTNB {
                Reply::Connect {
                    status: -25,
                    blobs: vec![],
                }
            } else {
                Reply::Status(-25)
            };
            assert_eq!(Reply::decode(&f, *c, &lone).unwrap(), want);
        }
    }
}

/// Tag-2 forwarded output (protocol.md §5.2 "IOF"): PROC source,
/// IOF_CHANNEL, SIZE refid, SIZE + INFOs, BYTE_OBJECT — each a unit.
#[test]
fn iof_data_follows_the_reference_layout() {
    use pmix_codec::msg::IofData;
    let f = fmt(Dialect::V41, BufferType::NonDesc);
    let m = IofData {
        source: Proc::new("ns", 1),
        channel: 2,
        refid: 5,
        info: vec![],
        data: bytes::Bytes::from_static(b"hi\n"),
    };
    let bytes = m.encode(&f).unwrap();
    // 02 PROC{STR "ns", rank 1} | 02 IOF_CHANNEL 2 (flex u16) | 02 SIZE 5 | 02 SIZE 0 | 02 BO{3, "hi\n"}
    assert_eq!(
        bytes,
        h("02 06 6e7300 01 | 02 02 | 02 05 | 02 00 | 02 03 68690a"
            .replace('|', "")
            .as_str())
    );
    assert_eq!(IofData::decode(&f, &bytes).unwrap(), m);
    for cut in 0..bytes.len() {
        assert!(IofData::decode(&f, &bytes[..cut]).is_err());
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(IofData::decode(&f, &longer).is_err());
}

/// `decode_bytes` does not copy the payload: a commit blob and the rest of
/// an unknown command are slices of it.
#[test]
fn decode_bytes_shares_the_payload() {
    let f = fmt(Dialect::V41, BufferType::NonDesc);
    let blob = pmix_types::Buffer {
        buffer_type: 1,
        bytes: bytes::Bytes::from(vec![7u8; 100]),
    };
    let commit = Request::Commit {
        blobs: vec![(2, blob.clone())],
    };
    let payload = bytes::Bytes::from(commit.encode(&f).unwrap());
    let range = payload.as_ptr_range();
    match Request::decode_bytes(&f, payload.clone()).unwrap() {
        Request::Commit { blobs } => {
            assert_eq!(blobs, [(2, blob)]);
            assert!(range.contains(&blobs[0].1.bytes.as_ptr()), "blob copied");
        }
        other => panic!("{other:?}"),
    }
    // an unknown command keeps the rest of the payload as a slice of it
    let mut other =
        pmix_codec::encode(&f, pmix_types::DataType::Command, &[Value::Command(200)]).unwrap();
    other.extend_from_slice(&[1, 2, 3]);
    let payload = bytes::Bytes::from(other);
    match Request::decode_bytes(&f, payload.clone()).unwrap() {
        Request::Other { command: 200, rest } => {
            assert_eq!(&rest[..], [1, 2, 3]);
            assert!(
                payload.as_ptr_range().contains(&rest.as_ptr()),
                "rest copied"
            );
        }
        other => panic!("{other:?}"),
    }
}
