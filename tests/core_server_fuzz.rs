//! Replays corpus/fuzz/server/ through the `server` fuzz target's logic
//! (`pmix_test_kit::server_target::fuzz_peers`) on stable Rust. The seeds are the
//! libpmix 4.2.2 client streams of corpus/captures-4.2.2 (as one peer,
//! and the two ranks interleaved as two peers); `PMIX_WRITE_CORPUS=1`
//! writes missing ones. And what the server says of hostile input: the
//! refusal of a request that does not decode carries the codec's error.

use pmix_codec::frame::{self, HeaderOrder};
use pmix_codec::msg::{Reply, Request};
use pmix_codec::Format;
use pmix_test_kit::pair::Pair;
use pmix_wire::server::Refusal;
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus/fuzz/server")
}

/// A fuzz input in which each stream is sent by its own peer, in chunks
/// of `chunk` bytes taken in turn.
fn input(streams: &[Vec<u8>], chunk: usize) -> Vec<u8> {
    let mut out = vec![(streams.len() - 1) as u8];
    let mut at = vec![0usize; streams.len()];
    loop {
        let mut any = false;
        for (p, s) in streams.iter().enumerate() {
            if at[p] < s.len() {
                let n = chunk.min(s.len() - at[p]);
                out.push(p as u8);
                out.push(n as u8);
                out.extend_from_slice(&s[at[p]..at[p] + n]);
                at[p] += n;
                any = true;
            }
        }
        if !any {
            return out;
        }
    }
}

fn seeds() -> Vec<(String, Vec<u8>)> {
    let caps = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus/captures-4.2.2");
    let read = |n: &str| std::fs::read(caps.join(n)).unwrap();
    let c0 = read("client-capns-0.client");
    let c1 = read("client-capns-1.client");
    vec![
        ("rank0-raw".into(), input(std::slice::from_ref(&c0), 200)),
        ("ranks01-raw".into(), input(&[c0.clone(), c1], 37)),
        ("tool".into(), input(&[read("tool-flag3.client")], 255)),
        (
            "abort".into(),
            input(&[read("client-capabort-0.client")], 255),
        ),
    ]
}

#[test]
fn server_corpus_replays_without_panic() {
    let d = dir();
    if std::env::var_os("PMIX_WRITE_CORPUS").is_some() {
        std::fs::create_dir_all(&d).unwrap();
        for (name, data) in seeds() {
            let p = d.join(format!("seed-{name}"));
            if !p.exists() {
                std::fs::write(p, data).unwrap();
            }
        }
    }
    let mut n = 0;
    for e in std::fs::read_dir(&d).expect("corpus/fuzz/server") {
        let p = e.unwrap().path();
        if p.is_file() && p.extension().is_none_or(|x| x != "md") {
            pmix_test_kit::server_target::fuzz_peers(&std::fs::read(&p).unwrap());
            n += 1;
        }
    }
    assert!(n >= 4, "{n} inputs");
    // random mutations of the seeds (xorshift, fixed seed): a few bytes
    // overwritten, a slice dropped or repeated
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let all = seeds();
    for _ in 0..2000 {
        let (_, base) = &all[(next() % all.len() as u64) as usize];
        let mut m = base.clone();
        match next() % 3 {
            0 => {
                for _ in 0..1 + next() % 4 {
                    let at = (next() % m.len() as u64) as usize;
                    m[at] = next() as u8;
                }
            }
            1 => {
                let a = (next() % m.len() as u64) as usize;
                let b = (a + (next() % 64) as usize).min(m.len());
                m.drain(a..b);
            }
            _ => {
                let a = (next() % m.len() as u64) as usize;
                let b = (a + (next() % 64) as usize).min(m.len());
                let piece = m[a..b].to_vec();
                m.splice(a..a, piece);
            }
        }
        pmix_test_kit::server_target::fuzz_peers(&m);
    }
    // and every seed, cut at every 97th byte and bit-flipped along the way
    for (_, data) in seeds() {
        for cut in (0..data.len()).step_by(97) {
            pmix_test_kit::server_target::fuzz_peers(&data[..cut]);
            let mut f = data.clone();
            f[cut] ^= 0x10;
            pmix_test_kit::server_target::fuzz_peers(&f);
        }
    }
}

#[test]
fn a_malformed_request_is_refused_with_the_codec_error_that_says_where() {
    let mut pair = Pair::new(&[("bad", 2)]);
    let hostile = pair.init("bad", 0);
    let other = pair.init("bad", 1);
    let get = Request::Get {
        nspace: Some("bad".into()),
        rank: 1,
        info: vec![],
        key: Some(Some("some.key".into())),
    };
    let whole = get.encode(&Format::V41).unwrap();
    // cut inside the key: the codec knows the byte and the field
    let cut = &whole[..whole.len() - 3];
    let codec = Request::decode(&Format::V41, cut).unwrap_err();
    let tag = 77;
    pair.write_raw(
        hostile,
        &frame::frame(0, tag, cut, HeaderOrder::Network).unwrap(),
    );
    pair.drive();
    let (conn, why) = pair.server.poll_refusal().expect("the refusal is kept");
    assert_eq!(conn, pair.peers[hostile].conn);
    let Refusal::Malformed { tag: t, error } = &why else {
        panic!("not the codec's error: {why:?}");
    };
    assert_eq!(*t, tag);
    // the codec's own error, offset and field path and all
    assert_eq!(*error, codec);
    assert!(error.offset > 0, "{error:?}");
    assert!(
        error.path.iter().any(|f| f.contains("key")),
        "{:?}",
        error.path
    );
    // and so the line logged (the refusal's Display) says where
    let logged = why.to_string();
    assert!(
        logged.contains(&format!("offset {}", error.offset)),
        "{logged}"
    );
    assert!(logged.contains("key"), "{logged}");
    assert!(pair.peers[hostile].closed);
    // the other rank is served as before
    let t = pair.send(other, &Request::Req);
    pair.drive();
    assert!(
        matches!(pair.reply(other, t), Some(Reply::JobInfo { .. })),
        "the other rank's REQ is answered"
    );
}
