//! The `server` fuzz target's body: peers that send what the fuzzer
//! chooses to a server core.

use pmix_wire::server::{ConnId, JobSpec, Server, Transmit};
use std::time::{Duration, Instant};

/// The `server` fuzz target's entry point (and its stable replay in
/// tests/server_fuzz.rs): a fresh server with namespaces "capns" (2 ranks)
/// and "capabort" (1 rank), those of corpus/captures-4.2.2, is driven by
/// up to four peers. Byte 0 says how many
/// (1–4); then each step is a control byte (low bits: the peer; bit 7:
/// that peer's connection ends) and, unless it ends, a length byte and
/// that many bytes from the peer. Then pending waits expire. Nothing may
/// panic, and every output must name a connection that exists.
pub fn fuzz_peers(data: &[u8]) {
    let mut s = Server::new();
    s.set_max_message(1 << 16);
    for (ns, n) in [("capns", 2), ("capabort", 1)] {
        s.register_nspace(JobSpec {
            nspace: ns.into(),
            nprocs: n,
            hostname: "fuzz".into(),
            info: vec![],
        });
    }
    let now = Instant::now();
    let Some((&first, mut rest)) = data.split_first() else {
        return;
    };
    let peers: Vec<ConnId> = (0..=(first & 3)).map(|_| s.open()).collect();
    let mut open: Vec<bool> = vec![true; peers.len()];
    let check = |s: &mut Server, open: &[bool]| {
        while s.poll_event().is_some() {}
        while let Some(Transmit::Send(c, _) | Transmit::Close(c)) = s.poll_transmit() {
            assert!(peers.contains(&c), "output for unknown connection {c}");
            let _ = open;
        }
    };
    while let Some((&ctl, tail)) = rest.split_first() {
        let p = (ctl as usize) % peers.len();
        if ctl & 0x80 != 0 {
            s.closed(peers[p]);
            open[p] = false;
            rest = tail;
        } else {
            let Some((&len, tail)) = tail.split_first() else {
                break;
            };
            let n = (len as usize).min(tail.len());
            if open[p] {
                s.handle_input(peers[p], &tail[..n], now);
            }
            rest = &tail[n..];
        }
        check(&mut s, &open);
    }
    s.handle_timeout(now + Duration::from_secs(3700));
    check(&mut s, &open);
    for (i, p) in peers.iter().enumerate() {
        if open[i] {
            s.closed(*p);
        }
    }
    check(&mut s, &open);
}
