//! Request layouts of protocol.md §5 beyond those the captures exercise:
//! the reference's worked bytes decode to the typed request and re-encode
//! byte for byte, and every typed request round-trips in each dialect
//! family (flex v41, fixed v3, legacy v20 described).

use pmix_codec::command::{cmd, Request};
use pmix_codec::{BufferType, Dialect, Format};
use pmix_types::hex;
use pmix_types::{Info, Proc, Value};

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

fn samples() -> Vec<Request> {
    let info = vec![
        Info::new("pmix.my.key", Value::Uint32(7)),
        Info::new("x", Value::String(Some("y".into()))),
    ];
    let procs = vec![Proc::new("job1", 0), Proc::new("job1", u32::MAX - 1)];
    vec![
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
    ]
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
            let bytes = r.encode(&f).unwrap();
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
