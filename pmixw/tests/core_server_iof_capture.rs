//! Our server core's IO forwarding, byte for byte against libpmix 4.2.2's
//! server: corpus/captures-4.2.2/tool-iof is a libpmix 4.2.2 tool
//! (interop/c/iof_tool.c) pulling stdout and stderr from libpmix 4.2.2's
//! server under interop/c/capi_iof.c, recorded through `pmixw relay
//! --dump` (spec-notes/commands.md, tag 2). The tool's own bytes are
//! replayed into our core, whose host makes the same calls capi_iof.c
//! made (one line of output before the pull, the pull accepted, five
//! deliveries of which three match, stdin taken, the deregistration
//! accepted): every frame our core writes after the tool's job data
//! (the pull's reply with its id, the four IOF messages, the replies to
//! push, deregister and finalize) equals libpmix's. No libpmix needed.

use bytes::Bytes;
use pmix_codec::frame::{tag, DEFAULT_MAX_MESSAGE, HEADER_LEN};
use pmix_types::names::iof_channel::{STDDIAG, STDERR, STDIN, STDOUT};
use pmix_types::{Info, Proc, Value};
use pmix_wire::server::{HostEvent, IofMode, JobSpec, Server, Transmit};
use pmixw::inspect::{inspect, Side};
use std::time::Instant;

fn capture(side: &str) -> Vec<u8> {
    let p = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../corpus/captures-4.2.2/tool-iof."
    );
    std::fs::read(format!("{p}{side}")).unwrap()
}

/// The framed messages of one side: (tag, whole frame).
fn frames(client: &[u8], server: &[u8], side: Side) -> Vec<(u32, Vec<u8>)> {
    let conv = inspect(client, server, DEFAULT_MAX_MESSAGE);
    assert_eq!(conv.errors(), 0, "{conv:?}");
    let bytes = if side == Side::Client { client } else { server };
    // in stream order (the inspector lists unsolicited messages last)
    let mut at: Vec<_> = conv
        .entries
        .iter()
        .filter(|e| e.side == side)
        .filter_map(|e| {
            let h = e.header.as_ref()?;
            let end = e.offset + HEADER_LEN + h.nbytes as usize;
            Some((e.offset, h.tag, bytes[e.offset..end].to_vec()))
        })
        .collect();
    at.sort();
    at.into_iter().map(|(_, t, f)| (t, f)).collect()
}

fn drain(s: &mut Server, out: &mut Vec<u8>, events: &mut Vec<HostEvent>) {
    while let Some(e) = s.poll_event() {
        events.push(e);
    }
    while let Some(t) = s.poll_transmit() {
        match t {
            Transmit::Send(_, b) => out.extend_from_slice(&b),
            Transmit::Close(_) => panic!("closed"),
        }
    }
}

fn answer(s: &mut Server, events: &mut Vec<HostEvent>) {
    for e in events.drain(..) {
        match e {
            HostEvent::IofPull { request, .. } | HostEvent::Stdin { request, .. } => {
                s.iof_done(request, 0)
            }
            _ => {}
        }
    }
}

#[test]
fn our_core_forwards_output_in_libpmix_4_2_2s_bytes() {
    let (client, theirs) = (capture("client"), capture("server"));
    let requests = frames(&client, &theirs, Side::Client);
    // handshake, REQ, IOF_PULL, IOF_PUSH, IOF_DEREG, FINALIZE
    assert_eq!(requests.len(), 6, "{requests:?}");

    let mut s = Server::new();
    s.set_iof_pull(IofMode::AskHost);
    s.set_iof_stdin(IofMode::AskHost);
    s.register_nspace(JobSpec {
        nspace: "capi-iof".into(),
        nprocs: 1,
        hostname: "h".into(),
        info: vec![],
    });
    let now = Instant::now();
    let (mut ours, mut events) = (Vec::new(), Vec::new());
    let src = Proc::new("capi-iof", 0);
    let line = |t: &str| Bytes::from(t.to_string());
    // before the tool: kept
    assert_eq!(s.iof_deliver(&src, STDOUT, line("early line\n"), vec![]), 0);
    let conn = s.open();
    for (_, f) in &requests[..3] {
        s.handle_input(conn, f, now);
    }
    drain(&mut s, &mut ours, &mut events);
    assert!(
        events.iter().any(|e| matches!(e, HostEvent::IofPull { stop: false, channels, .. } if *channels == STDOUT | STDERR)),
        "{events:?}"
    );
    answer(&mut s, &mut events);
    drain(&mut s, &mut ours, &mut events);
    s.iof_deliver(&src, STDOUT, line("line one\n"), vec![]);
    s.iof_deliver(&src, STDERR, line("error one\n"), vec![]);
    s.iof_deliver(
        &Proc::new("capi-iof-other", 0),
        STDERR,
        line("not pulled\n"),
        vec![],
    );
    s.iof_deliver(&src, STDDIAG, line("diag line\n"), vec![]);
    assert_eq!(
        s.iof_deliver(&src, STDIN, line("into stdin\n"), vec![]),
        pmix_types::status::codes::PMIX_ERR_BAD_PARAM
    );
    let note = Info::new("capi.iof.note", Value::String(Some("last".into())));
    s.iof_deliver(&src, STDOUT, line("line two\n"), vec![note]);
    for (_, f) in &requests[3..] {
        s.handle_input(conn, f, now);
        drain(&mut s, &mut ours, &mut events);
        answer(&mut s, &mut events);
        drain(&mut s, &mut ours, &mut events);
    }

    let want = frames(&client, &theirs, Side::Server);
    let got = frames(&client, &ours, Side::Server);
    let tags = |v: &[(u32, Vec<u8>)]| v.iter().map(|(t, _)| *t).collect::<Vec<_>>();
    assert_eq!(tags(&got), tags(&want), "the frames' tags");
    assert_eq!(
        tags(&want),
        [
            101,
            102,
            tag::IOF,
            tag::IOF,
            tag::IOF,
            tag::IOF,
            103,
            104,
            105
        ]
    );
    // the REQ reply names each server's own tool namespace; after it, the same bytes
    for (i, ((t, g), (_, w))) in got.iter().zip(&want).enumerate().skip(1) {
        assert_eq!(g, w, "frame {i} (tag {t}) differs");
    }
}
