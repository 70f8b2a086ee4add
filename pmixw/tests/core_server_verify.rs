//! Our server core's answers to captured libpmix clients, checked by
//! `pmixw verify` (core tier: no processes or sockets; the rest of the
//! in-memory server tests, which need no pmixw, are
//! tests/core_server_memory.rs).

use pmix_codec::frame::HeaderOrder;
use pmix_test_kit::captures::frames;
use pmix_wire::server::{JobSpec, Server};
use std::time::Instant;

/// The core in memory (no sockets, threads or clocks): the bytes two
/// libpmix 4.2.2 clients sent to libpmix's server (corpus/captures-4.2.2)
/// go into our core; every answer must be a typed message the client's
/// dialect decodes, and the modex answers must be the bytes libpmix's
/// server sent.
#[test]
fn the_core_answers_captured_clients_as_libpmix_did() {
    let dir = pmix_test_kit::repo().join("corpus/captures-4.2.2");
    let read = |n: &str| std::fs::read(dir.join(n)).unwrap();
    let mut s = Server::new();
    s.register_nspace(JobSpec {
        nspace: "capns".into(),
        nprocs: 2,
        hostname: "vm".into(),
        info: vec![],
    });
    let now = Instant::now();
    let c0 = s.open();
    let c1 = s.open();
    let in0 = read("client-capns-0.client");
    let in1 = read("client-capns-1.client");
    // every byte split differently: the stream decoder takes any split
    for ch in in0.chunks(7) {
        s.handle_input(c0, ch, now);
    }
    for ch in in1.chunks(13) {
        s.handle_input(c1, ch, now);
    }
    let mut ours = [Vec::new(), Vec::new()];
    let mut closed = Vec::new();
    let out = pmix_test_kit::pair::drain(&mut s);
    for (c, b) in out.sends() {
        ours[(c - c0) as usize].extend(b);
    }
    closed.extend(out.closes());
    assert!(closed.is_empty(), "{closed:?}");
    for (i, (input, theirs)) in [
        (&in0, read("client-capns-0.server")),
        (&in1, read("client-capns-1.server")),
    ]
    .into_iter()
    .enumerate()
    {
        pmixw::verify::verify(input, &ours[i]).unwrap_or_else(|e| panic!("rank {i}: {e}"));
        // the GET replies (the modex) are libpmix's bytes
        let gets: Vec<u32> = frames(input, HeaderOrder::Little)
            .into_iter()
            .skip(1)
            .filter(|(_, p)| p.starts_with(&[0x02, 0x04]))
            .map(|(t, _)| t)
            .collect();
        assert!(!gets.is_empty());
        let pick = |stream: &[u8]| -> Vec<Vec<u8>> {
            frames(&stream[8..], HeaderOrder::Network)
                .into_iter()
                .filter(|(t, _)| gets.contains(t))
                .map(|(_, p)| p)
                .collect()
        };
        assert_eq!(pick(&ours[i]), pick(&theirs), "rank {i} GET replies");
    }
}
