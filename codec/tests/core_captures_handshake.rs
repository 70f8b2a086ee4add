//! Every connection handshake in corpus/releases/captures (libpmix 3.2.5, 4.2.2,
//! 5.0.11, 6.1.0 and 7.0.0a1 clients, tools and servers): the request decodes, its
//! fields match the capture's annotation, and it re-encodes byte for byte;
//! the server's reply likewise.

use pmix_codec::frame::{Header, HeaderOrder, HEADER_LEN};
use pmix_codec::handshake::{peer_type, ClientReply, ConnectRequest, ToolReply};

/// The hex of each message section: (section title, bytes).
fn sections(text: &str) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if line.starts_with("  C->S #") || line.starts_with("  S->C #") {
            out.push((t.to_string(), String::new()));
        } else if line.starts_with("====") || line.starts_with("CONNECTION") {
            out.push(("-".into(), String::new()));
        } else if !t.is_empty() && t.len() % 2 == 0 && t.bytes().all(|c| c.is_ascii_hexdigit()) {
            if let Some(last) = out.last_mut() {
                last.1.push_str(t);
            }
        }
    }
    out.into_iter()
        .filter(|(t, _)| t != "-")
        .map(|(t, h)| (t, pmix_types::hex::decode(&h).unwrap()))
        .collect()
}

#[test]
fn every_captured_handshake_round_trips() {
    let mut requests = 0;
    let mut replies = 0;
    let mut with_info = 0;
    for (name, text) in pmix_test_kit::captures::transcripts() {
        let mut last_flag = None;
        for (title, bytes) in sections(&text) {
            if title.starts_with("C->S #1: CONNECTION HANDSHAKE") {
                let mut hb = [0u8; HEADER_LEN];
                hb.copy_from_slice(&bytes[..HEADER_LEN]);
                let h = Header::decode(&hb, HeaderOrder::Little);
                assert_eq!((h.pindex, h.tag), (-1, u32::MAX), "{name}");
                let body = &bytes[HEADER_LEN..];
                assert_eq!(h.nbytes as usize, body.len(), "{name}");
                let r = ConnectRequest::decode(body).unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(r.encode().unwrap(), body, "{name}: re-encoding differs");
                // the announced dialect is one we speak
                assert!(r.format().is_some(), "{name}: {:?}", r.bfrops);
                if r.flag == peer_type::SIMPLE_CLIENT {
                    assert!(r.proc.is_some());
                } else {
                    assert!(r.uid_gid.is_some());
                }
                if let Some(infos) = &r.info {
                    // tools, launchers and 6.x clients say who they are
                    let keys: Vec<String> = infos.iter().map(|i| i.key.to_string()).collect();
                    assert!(
                        keys.iter()
                            .any(|k| k == "pmix.ppid" || k == "pmix.cmd.line"),
                        "{name}: {keys:?}"
                    );
                    with_info += 1;
                }
                last_flag = Some(r.flag);
                requests += 1;
            } else if title.starts_with("S->C #1: CONNECTION HANDSHAKE REPLY") {
                let flag = last_flag.expect("a reply follows its request");
                if flag == peer_type::SIMPLE_CLIENT {
                    let r = ClientReply::decode(&bytes).unwrap();
                    assert_eq!(r.encode().to_vec(), bytes, "{name}");
                    assert_eq!(r.status, 0);
                } else {
                    let r =
                        ToolReply::decode(flag, &bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
                    assert_eq!(r.encode(), bytes, "{name}");
                }
                replies += 1;
            }
        }
    }
    eprintln!("{requests} requests, {replies} replies, {with_info} with an info blob");
    assert!(
        requests >= 20 && replies >= 15 && with_info >= 5,
        "{requests} requests, {replies} replies"
    );
}
