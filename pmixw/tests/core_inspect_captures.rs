//! `pmixw inspect` over every connection of corpus/releases/captures (3.2.5,
//! 4.2.2, 5.0.11, 6.1.0 and 7.0.0a1 clients, tools and servers): the raw byte stream of
//! each side, rebuilt from the capture's hex, decodes with no error, every
//! captured message appears exactly once, and every reply is paired with
//! the request whose tag it carries.

use pmix_test_kit::captures::{connections, release_connections};
use pmixw::inspect::{inspect, Side};
use std::path::PathBuf;

#[test]
fn every_captured_conversation_inspects_cleanly() {
    let mut conns = 0;
    let mut messages = 0;
    for cap in release_connections() {
        let (c, s, nc, ns, ctx) = (&cap.client, &cap.server, cap.nc, cap.ns, &cap.ctx);
        let conv = inspect(c, s, pmix_codec::frame::DEFAULT_MAX_MESSAGE);
        assert_eq!(
            conv.errors(),
            0,
            "{ctx}:\n{}",
            pmixw::inspect::render_text(&conv)
        );
        let sent = |side| conv.entries.iter().filter(|e| e.side == side).count();
        assert_eq!(sent(Side::Client), nc, "{ctx}");
        assert_eq!(sent(Side::Server), ns, "{ctx}");
        for (k, e) in conv.entries.iter().enumerate() {
            if e.kind == "reply" {
                assert!(e.message.get("unmatched_tag").is_none(), "{ctx}: {e:?}");
                // placed right after its request or a sibling reply
                let tag = e.header.unwrap().tag;
                assert_eq!(conv.entries[k - 1].header.unwrap().tag, tag, "{ctx}");
            }
        }
        // the handshake shows the announced dialect
        assert_eq!(conv.entries[0].kind, "handshake");
        assert!(conv.entries[0].message.get("bfrops").is_some(), "{ctx}");
        conns += 1;
        messages += nc + ns;
    }
    assert!(conns >= 27, "{conns} connections");
    eprintln!("{conns} connections, {messages} messages");
}

#[test]
fn damaged_payloads_are_reported_and_the_rest_still_shown() {
    let text = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../corpus/releases/captures/4.2.2-server_4.2.2-client.txt"),
    )
    .unwrap();
    let (mut c, s, nc, _) = connections(&text).remove(0);
    // the REQ request's payload (COMMAND 0 = 02 00) starts 16 bytes after
    // the handshake frame; make its command an unknown type tag
    let hs = 16 + u32::from_le_bytes(c[8..12].try_into().unwrap()) as usize;
    assert_eq!(&c[hs + 16..hs + 18], &[0x02, 0x00]);
    c[hs + 16] = 0x81; // a flex count cut short by the next byte
    c[hs + 17] = 0x81;
    let conv = inspect(&c, &s, pmix_codec::frame::DEFAULT_MAX_MESSAGE);
    assert_eq!(conv.errors(), 1, "{}", pmixw::inspect::render_text(&conv));
    let bad = conv.entries.iter().find(|e| e.error.is_some()).unwrap();
    assert_eq!(bad.offset, hs);
    assert!(bad
        .error
        .as_ref()
        .unwrap()
        .contains(&format!("offset {}", hs + 16)));
    let requests = conv
        .entries
        .iter()
        .filter(|e| e.side == Side::Client)
        .count();
    assert_eq!(requests, nc, "every later message is still shown");

    // a truncated client stream: the cut message is reported, not dropped silently
    let cut = &c[..c.len() - 1];
    let conv = inspect(cut, &s, pmix_codec::frame::DEFAULT_MAX_MESSAGE);
    assert!(conv.entries.iter().any(|e| e
        .error
        .as_deref()
        .is_some_and(|m| m.contains("not a whole message"))));
}

#[test]
fn pmixw_inspect_prints_a_captured_conversation() {
    let text = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../corpus/releases/captures/4.2.2-server_tool.txt"),
    )
    .unwrap();
    let (c, s, nc, ns) = connections(&text).remove(1); // the tool
    let dir = std::env::temp_dir().join(format!("pmixw-inspect-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (cf, sf) = (dir.join("client.bin"), dir.join("server.hex"));
    std::fs::write(&cf, &c).unwrap();
    let run = |client: &std::path::Path, extra: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_pmixw"))
            .arg("inspect")
            .arg("--client")
            .arg(client)
            .arg("--server")
            .arg(&sf)
            .args(extra)
            .output()
            .unwrap()
    };
    // the server side as hex text (--hex applies to both files)
    std::fs::write(&sf, pmix_types::hex::encode(&s)).unwrap();
    std::fs::write(dir.join("client.hex"), pmix_types::hex::encode(&c)).unwrap();
    let out = run(&dir.join("client.hex"), &["--hex", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let entries = j["entries"].as_array().unwrap();
    assert_eq!(entries.len(), nc + ns);
    assert_eq!(entries[0]["message"]["flag"], 3, "a tool that needs an id");
    let commands: Vec<&str> = entries
        .iter()
        .filter_map(|e| e["message"]["command"].as_str())
        .collect();
    assert!(
        commands.contains(&"REG_EVENTS") && commands.contains(&"QUERY"),
        "{commands:?}"
    );
    // text form; raw bytes read as hex fail cleanly (exit 1, error shown)
    let out = run(&cf, &["--hex"]);
    assert!(!out.status.success());
    std::fs::remove_dir_all(&dir).ok();
}

/// The live inspector (the relay's core) fed each captured connection in
/// odd-sized chunks gives the same entries as the batch inspector.
#[test]
fn live_inspection_matches_batch_for_any_split() {
    use pmixw::inspect::Live;
    let mut conns = 0;
    for (name, text) in pmix_test_kit::captures::transcripts() {
        for (c, s, nc, _) in connections(&text) {
            if nc == 0 {
                continue;
            }
            for chunk in [1usize, 7, 64, 4096] {
                let mut live = Live::new(pmix_codec::frame::DEFAULT_MAX_MESSAGE);
                let mut got = Vec::new();
                for part in c.chunks(chunk) {
                    got.extend(live.client_bytes(part));
                }
                for part in s.chunks(chunk) {
                    got.extend(live.server_bytes(part));
                }
                let batch = inspect(&c, &s, pmix_codec::frame::DEFAULT_MAX_MESSAGE);
                let key = |e: &pmixw::inspect::Entry| {
                    (
                        e.side == Side::Server,
                        e.offset,
                        serde_json::to_string(e).unwrap(),
                    )
                };
                let mut a: Vec<_> = got.iter().map(key).collect();
                let mut b: Vec<_> = batch.entries.iter().map(key).collect();
                a.sort();
                b.sort();
                assert_eq!(a, b, "{name}, chunks of {chunk}");
            }
            conns += 1;
        }
    }
    assert!(conns >= 27);
}

/// `relay::serve` between a scripted client and server replaying a
/// captured tool conversation over loopback TCP: bytes pass unchanged both
/// ways and every message is logged, decoded, exactly once.
#[test]
fn relay_forwards_unchanged_and_logs_every_message() {
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::sync::{Arc, Mutex};
    let text = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../corpus/releases/captures/4.2.2-server_tool.txt"),
    )
    .unwrap();
    let (c, s, nc, ns) = connections(&text).remove(1);

    let real = TcpListener::bind("127.0.0.1:0").unwrap();
    let real_addr = real.local_addr().unwrap().to_string();
    let (want_c, reply) = (c.clone(), s.clone());
    let server = std::thread::spawn(move || {
        let (mut sock, _) = real.accept().unwrap();
        let mut got = vec![0u8; want_c.len()];
        sock.read_exact(&mut got).unwrap();
        sock.write_all(&reply).unwrap();
        got
    });

    let front = TcpListener::bind("127.0.0.1:0").unwrap();
    pmixw::relay::check_listen(&front.local_addr().unwrap(), false).unwrap();
    let front_addr = front.local_addr().unwrap();
    let log: Arc<Mutex<Vec<(usize, pmixw::inspect::Entry)>>> = Default::default();
    let sink_log = log.clone();
    let sink: pmixw::relay::Sink =
        Arc::new(move |n, e| sink_log.lock().unwrap().push((n, e.clone())));
    let relay = std::thread::spawn(move || {
        pmixw::relay::serve(front, &real_addr, sink, 1 << 20, Some(1)).unwrap()
    });

    let mut client = TcpStream::connect(front_addr).unwrap();
    client.write_all(&c).unwrap();
    let mut got_s = vec![0u8; s.len()];
    client.read_exact(&mut got_s).unwrap();
    drop(client);
    assert_eq!(
        server.join().unwrap(),
        c,
        "client bytes reach the server unchanged"
    );
    assert_eq!(got_s, s, "server bytes reach the client unchanged");
    relay.join().unwrap();

    let log = log.lock().unwrap();
    assert_eq!(log.len(), nc + ns);
    assert!(
        log.iter().all(|(n, e)| *n == 1 && e.error.is_none()),
        "{log:?}"
    );
    assert!(log
        .iter()
        .any(|(_, e)| e.message["command"] == "REG_EVENTS"));
    // a public address is refused unless allowed
    let public: std::net::SocketAddr = "192.0.2.1:1".parse().unwrap();
    assert!(pmixw::relay::check_listen(&public, false).is_err());
    assert!(pmixw::relay::check_listen(&public, true).is_ok());
}

/// Hostile streams: every single-bit flip of a captured conversation's
/// first 600 bytes on either side is inspected (batch and live) without a
/// panic; framing damage is reported as an error entry.
#[test]
fn bit_flipped_conversations_never_panic() {
    use pmixw::inspect::Live;
    let text = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../corpus/releases/captures/4.2.2-server_tool.txt"),
    )
    .unwrap();
    let (c, s, _, _) = connections(&text).remove(1);
    let max = 1 << 16;
    for side in 0..2 {
        let base = if side == 0 { &c } else { &s };
        for i in 0..base.len().min(600) * 8 {
            let mut b = base.clone();
            b[i / 8] ^= 1 << (i % 8);
            let (cc, ss) = if side == 0 { (&b, &s) } else { (&c, &b) };
            let _ = inspect(cc, ss, max);
            let mut live = Live::new(max);
            for part in cc.chunks(13) {
                live.client_bytes(part);
            }
            for part in ss.chunks(13) {
                live.server_bytes(part);
            }
        }
    }
}

/// The strict check of issue #4 over every shared capture: each message of
/// each connection decodes as a typed message (no raw fallback, no
/// unmatched reply) with nothing left over and re-encodes byte for byte.
#[test]
fn every_captured_message_is_typed_and_reencodes() {
    let (mut conns, mut messages) = (0, 0);
    let mut bad = Vec::new();
    for cap in release_connections() {
        match pmixw::verify::verify(&cap.client, &cap.server) {
            Ok(v) => {
                assert_eq!(v.messages, cap.nc + cap.ns, "{}", cap.ctx);
                conns += 1;
                messages += v.messages;
            }
            Err(e) => bad.push(format!("{}: {e}", cap.ctx)),
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert!(conns >= 27, "{conns} connections");
    eprintln!("{conns} connections, {messages} messages verified");
}

/// 7.0 by name: a 7.0 client's conversation says its release, and the
/// shmem3 job-info reply of the `_gds-default` capture shows its two
/// segments (job and session), each with its path and addresses; a 4.2.2
/// client's says its own release and has no segments.
#[test]
fn inspect_names_7_0_and_reads_the_shmem3_job_info() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus/releases/captures");
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let conns = connections(&read("v7.0.0a1-server_v7.0.0a1-client_gds-default.txt"));
    let conv = inspect(
        &conns[0].0,
        &conns[0].1,
        pmix_codec::frame::DEFAULT_MAX_MESSAGE,
    );
    assert_eq!(conv.release.as_deref(), Some("OpenPMIx 7.0 (7.0.0a1)"));
    assert!(pmixw::inspect::render_text(&conv).contains("release: OpenPMIx 7.0 (7.0.0a1)"));
    let segs: Vec<&serde_json::Value> = conv
        .entries
        .iter()
        .filter_map(|e| e.message.get("shmem3_segments"))
        .collect();
    assert_eq!(segs.len(), 1, "one job-info reply");
    let segs = segs[0].as_array().unwrap();
    assert_eq!(segs.len(), 2);
    for (seg, id, kind) in [(&segs[0], "0", "jobdata"), (&segs[1], "1", "session")] {
        assert_eq!(seg["PMIX_GDS_SHMEM3_NSPACEID"], "chjob");
        assert_eq!(seg["PMIX_GDS_SHMEM3_SMSEGID"], id);
        let path = seg["PMIX_GDS_SHMEM3_SEG_PATH"].as_str().unwrap();
        assert!(
            path.starts_with("/tmp/pmix-gds-shmem3.") && path.contains(kind),
            "{path}"
        );
        for k in ["SEG_SIZE", "SEG_HADR", "SEG_ARBS", "SEG_ARSZ"] {
            let v = seg[format!("PMIX_GDS_SHMEM3_{k}")]
                .as_str()
                .unwrap_or_else(|| panic!("{seg}"));
            assert!(u64::from_str_radix(v, 16).is_ok(), "{k} {v}");
        }
    }
    let old = connections(&read("v7.0.0a1-server_4.2.2-client.txt"));
    let conv = inspect(&old[0].0, &old[0].1, pmix_codec::frame::DEFAULT_MAX_MESSAGE);
    assert_eq!(
        conv.release.as_deref(),
        Some("OpenPMIx 6.0 or earlier (4.2.2rc2)")
    );
    assert!(conv
        .entries
        .iter()
        .all(|e| e.message.get("shmem3_segments").is_none()));
}
