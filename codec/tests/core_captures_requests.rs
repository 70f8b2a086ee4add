//! Every client request in corpus/releases/captures decodes as a typed
//! `Request` (REQ, COMMIT, FENCENB, GETNB, FINALIZE, REGEVENTS, QUERY; others as raw
//! `Other`) in the connection's dialect and re-encodes byte for byte.

use pmix_codec::msg::{Reply, Request};
use pmix_codec::{BufferType, Dialect, Format};

#[test]
fn every_captured_request_round_trips() {
    let mut typed = 0;
    let mut other = 0;
    let mut total_replies = 0;
    for (name, text) in pmix_test_kit::captures::transcripts() {
        let mut fmt: Option<Format> = None;
        let mut current: Option<String> = None;
        let mut reply_to: Option<String> = None;
        let mut replies = 0usize;
        let mut hex = String::new();
        let mut in_payload = false;
        let mut finish = |cmdname: &Option<String>, hex: &mut String, fmt: &Option<Format>| {
            if let (Some(c), Some(f)) = (cmdname, fmt) {
                let payload = pmix_types::hex::decode(hex).unwrap();
                let r = Request::decode(f, &payload).unwrap_or_else(|e| panic!("{name}: {c}: {e}"));
                let want = match c.as_str() {
                    "REQ" => Some(0),
                    "COMMIT" => Some(2),
                    "FENCENB" => Some(3),
                    "GETNB" => Some(4),
                    "FINALIZE" => Some(5),
                    "REGEVENTS" => Some(13),
                    "QUERY" => Some(15),
                    _ => None,
                };
                match (want, &r) {
                    (Some(w), Request::Other { .. }) => panic!("{name}: {c} ({w}) not typed"),
                    (Some(w), r) => {
                        assert_eq!(r.command(), w, "{name}: {c}");
                        typed += 1;
                    }
                    (None, _) => other += 1,
                }
                assert_eq!(
                    r.encode(f).unwrap(),
                    payload,
                    "{name}: {c}: re-encoding differs"
                );
            }
            hex.clear();
        };
        for line in text.lines() {
            if let Some(d) = line
                .trim()
                .strip_prefix("(payloads below decoded in the dialect the client announced: ")
            {
                fmt = Some(Format::new(
                    Dialect::parse(d.trim_end_matches(')')).unwrap(),
                    BufferType::NonDesc,
                ));
            }
            if line.starts_with("  C->S #")
                || line.starts_with("  S->C #")
                || line.starts_with("====")
            {
                if let (Some(c), Some(f)) = (&reply_to, &fmt) {
                    let payload = pmix_types::hex::decode(&hex).unwrap();
                    let code = match c.as_str() {
                        "REQ" => 0,
                        "COMMIT" => 2,
                        "FENCENB" => 3,
                        "GETNB" => 4,
                        "FINALIZE" => 5,
                        "REGEVENTS" => 13,
                        "QUERY" => 15,
                        _ => 255,
                    };
                    let r = Reply::decode(f, code, &payload)
                        .unwrap_or_else(|e| panic!("{name}: reply to {c}: {e}"));
                    assert!(
                        !matches!(r, Reply::Raw(_)),
                        "{name}: reply to {c} not typed"
                    );
                    assert_eq!(
                        r.encode(f).unwrap(),
                        payload,
                        "{name}: reply to {c}: re-encoding differs"
                    );
                    if let Reply::JobInfo { nspace, kvals } = &r {
                        assert!(
                            nspace.is_some() && !kvals.is_empty(),
                            "{name}: empty job info"
                        );
                    }
                    replies += 1;
                    hex.clear();
                }
                reply_to = line
                    .split(": REPLY to ")
                    .nth(1)
                    .filter(|_| line.starts_with("  S->C #"))
                    .map(|s| s.split_whitespace().next().unwrap_or("").to_string());
                finish(&current, &mut hex, &fmt);
                current = line
                    .split(": REQUEST ")
                    .nth(1)
                    .filter(|_| line.starts_with("  C->S #"))
                    .map(|s| s.split_whitespace().next().unwrap_or("").to_string());
                in_payload = false;
                continue;
            }
            if line.trim_start().starts_with("payload (") {
                in_payload = true;
                continue;
            }
            let t = line.trim();
            if in_payload
                && line.starts_with("      ")
                && !line.starts_with("       ")
                && t.bytes().all(|c| c.is_ascii_hexdigit())
            {
                hex.push_str(t);
            }
        }
        finish(&current, &mut hex, &fmt);
        total_replies += replies;
    }
    eprintln!("{typed} typed requests, {other} other, {total_replies} replies");
    assert!(total_replies >= 130, "{total_replies} replies");
    assert!(typed >= 120, "{typed} typed, {other} other");
}
