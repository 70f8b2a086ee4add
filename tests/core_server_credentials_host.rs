//! PMIx_Get_credential and PMIx_Validate_credential handed to the host
//! (issue #35, `Server::set_host_credentials` / `set_host_validates`, as
//! libpmix 4.2.2's server calls its host's `get_credential` and
//! `validate_credential`) or answered by the native security module (the
//! default), against our client cores in memory (test-kit/src/pair.rs).
//! What a client gets back is decoded from the server's bytes by the
//! client core.

use pmix_test_kit::pair;

use bytes::Bytes;
use pair::Pair;
use pmix_codec::msg::{Reply, Request};
use pmix_types::status::codes;
use pmix_types::{Info, Proc, Value};
use pmix_wire::server::HostEvent;

fn ctype(v: &str) -> Info {
    Info::new("pmix.sec.ctype", Value::String(Some(v.into())))
}

fn get(info: Vec<Info>) -> Request {
    Request::GetCredential { info }
}

fn validate(credential: &[u8]) -> Request {
    Request::ValidateCred {
        credential: Bytes::copy_from_slice(credential),
        directives: vec![],
    }
}

/// Job "cr" of two ranks, rank 0 connected; the host taking both kinds
/// when `host`.
fn server(host: bool) -> (Pair, usize) {
    let mut pair = Pair::new(&[("cr", 2)]);
    pair.server.set_host_credentials(host);
    pair.server.set_host_validates(host);
    let a = pair.init("cr", 0);
    std::mem::take(&mut pair.host);
    (pair, a)
}

/// The credential upcalls raised since the test last looked, taken.
fn upcalls(pair: &mut Pair) -> Vec<HostEvent> {
    std::mem::take(&mut pair.host)
        .into_iter()
        .filter(|e| {
            matches!(
                e,
                HostEvent::GetCredential { .. } | HostEvent::ValidateCredential { .. }
            )
        })
        .collect()
}

/// Without the host, the native module answers: the credential the
/// handshake carried (8 bytes, `pmix.sec.ctype` native), valid for its
/// own connection, another one INVALID_CRED; the host sees nothing.
#[test]
fn without_the_host_the_native_module_answers() {
    let (mut pair, a) = server(false);
    let t = pair.send(a, &get(vec![ctype("capi")]));
    pair.drive();
    let Some(Reply::Credential {
        status: 0,
        credential: Some(cred),
        info: Some(info),
    }) = pair.reply(a, t)
    else {
        panic!("no native credential")
    };
    assert_eq!(cred.len(), 8);
    assert_eq!(info, [ctype("native")]);
    let t = pair.send(a, &validate(&cred));
    pair.drive();
    assert_eq!(
        pair.reply(a, t),
        Some(Reply::Infos {
            status: 0,
            info: Some(vec![])
        })
    );
    let t = pair.send(a, &validate(b"forged"));
    pair.drive();
    assert_eq!(
        pair.reply(a, t),
        Some(Reply::Status(codes::PMIX_ERR_INVALID_CRED))
    );
    assert!(upcalls(&mut pair).is_empty());
}

/// With the host: the requester and its directives reach it, the client
/// waits, and the host's credential and infos are its answer; a
/// validation hands over the credential, and the host's status and infos
/// (the count sent whatever the status, as libpmix 4.2.2's server sends
/// it) are the answer. Each answer once, and only for its own kind.
#[test]
fn the_host_issues_and_validates_credentials() {
    let (mut pair, a) = server(true);
    let t = pair.send(a, &get(vec![ctype("capi")]));
    pair.drive();
    let ev = upcalls(&mut pair);
    let [HostEvent::GetCredential {
        request,
        requester,
        directives,
    }] = ev.as_slice()
    else {
        panic!("{ev:?}")
    };
    assert_eq!(requester, &Proc::new("cr", 0));
    assert_eq!(directives, &[ctype("capi")]);
    assert_eq!(pair.reply(a, t), None, "waits for the host");
    assert!(
        !pair
            .server
            .validate_done(*request, codes::PMIX_SUCCESS, vec![]),
        "a validation's answer is not a credential's"
    );
    let token = Bytes::from_static(b"capi-cred:cr:0");
    assert!(pair.server.credential_done(
        *request,
        codes::PMIX_SUCCESS,
        Some(token.clone()),
        vec![ctype("capi")]
    ));
    assert!(
        !pair
            .server
            .credential_done(*request, codes::PMIX_SUCCESS, None, vec![]),
        "answered twice"
    );
    pair.drive();
    assert_eq!(
        pair.reply(a, t),
        Some(Reply::Credential {
            status: 0,
            credential: Some(token.clone()),
            info: Some(vec![ctype("capi")])
        })
    );

    let t = pair.send(a, &validate(b"forged"));
    pair.drive();
    let ev = upcalls(&mut pair);
    let [HostEvent::ValidateCredential {
        request,
        requester,
        credential,
        ..
    }] = ev.as_slice()
    else {
        panic!("{ev:?}")
    };
    assert_eq!(requester, &Proc::new("cr", 0));
    assert_eq!(&credential[..], b"forged");
    assert!(pair
        .server
        .validate_done(*request, codes::PMIX_ERR_INVALID_CRED, vec![]));
    pair.drive();
    assert_eq!(
        pair.reply(a, t),
        Some(Reply::Infos {
            status: codes::PMIX_ERR_INVALID_CRED,
            info: Some(vec![])
        })
    );
}

/// The host's refusal of a credential is the status alone; an answer for
/// a client gone goes nowhere.
#[test]
fn a_refusal_is_the_status_and_a_client_gone_gets_nothing() {
    let (mut pair, a) = server(true);
    let t = pair.send(a, &get(vec![]));
    pair.drive();
    let ev = upcalls(&mut pair);
    let [HostEvent::GetCredential { request, .. }] = ev.as_slice() else {
        panic!("{ev:?}")
    };
    assert!(pair
        .server
        .credential_done(*request, codes::PMIX_ERR_NO_PERMISSIONS, None, vec![]));
    pair.drive();
    assert_eq!(
        pair.reply(a, t),
        Some(Reply::Status(codes::PMIX_ERR_NO_PERMISSIONS))
    );
    pair.send(a, &validate(b"x"));
    pair.drive();
    let ev = upcalls(&mut pair);
    let [HostEvent::ValidateCredential { request, .. }] = ev.as_slice() else {
        panic!("{ev:?}")
    };
    let conn = pair.peers[a].conn;
    pair.server.closed(conn);
    assert!(!pair
        .server
        .validate_done(*request, codes::PMIX_SUCCESS, vec![]));
}
