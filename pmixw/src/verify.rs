//! Strict check of one recorded connection: every message must decode as a
//! typed message (no raw fallback, no unmatched reply, nothing left over)
//! and re-encode to exactly the bytes that crossed the socket. This is the
//! conformance check of issue #4 for captures made through the relay
//! (`pmixw/tests/live_capture.rs`, `corpus/captures-4.2.2/`) and for the shared
//! captures.

#![forbid(unsafe_code)]

use pmix_codec::frame::{tag, FrameDecoder, HeaderOrder, Message, HEADER_LEN};
use pmix_codec::handshake::{peer_type, ClientReply, ConnectRequest, ToolReply};
use pmix_codec::msg::{DataDelete, EventNotice, IofData, Reply, Request};
use pmix_codec::Format;
use std::collections::{BTreeMap, HashMap};

/// What a verified connection held.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verified {
    /// The handshake's peer-type flag.
    pub flag: u8,
    /// The format the client announced.
    pub format: Option<Format>,
    /// Requests by command code.
    pub requests: BTreeMap<u8, usize>,
    /// Replies by the command they answer.
    pub replies: BTreeMap<u8, usize>,
    /// Tag-0 event notices.
    pub events: usize,
    /// Tag-2 forwarded output (including the empty closing message).
    pub iof: usize,
    /// Messages in both directions, the handshake and its reply included.
    pub messages: usize,
    /// Stack garbage libpmix sent where it packs a 1-byte enum through a
    /// 4-byte int (v20 and v12 COMMAND, divergences.md "Legacy
    /// dialects"): which stream ("client" or "server"), the offset of the
    /// garbage in it and its bytes.
    pub garbage: Vec<(&'static str, usize, Vec<u8>)>,
}

fn frames(bytes: &[u8], first: HeaderOrder, what: &str) -> Result<Vec<(usize, Message)>, String> {
    let mut d = FrameDecoder::new(first, usize::MAX);
    d.push(bytes);
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(m) = d.next_message().map_err(|e| format!("{what}: {e}"))? {
        let n = HEADER_LEN + m.payload.len();
        out.push((at, m));
        at += n;
    }
    if d.buffered() != 0 {
        return Err(format!(
            "{what}: {} bytes at offset {at} are not a whole message",
            d.buffered()
        ));
    }
    Ok(out)
}

fn same(
    what: &str,
    at: usize,
    want: &[u8],
    got: pmix_codec::Result<Vec<u8>>,
) -> Result<(), String> {
    match got {
        Ok(b) if b == want => Ok(()),
        Ok(b) => Err(format!(
            "{what} at offset {at} re-encodes differently:\n  sent {}\n  ours {}",
            pmix_types::hex::encode(want),
            pmix_types::hex::encode(&b)
        )),
        Err(e) => Err(format!("{what} at offset {at} does not re-encode: {e}")),
    }
}

/// Where a request's or event's re-encoding differs from what a v20 or v12 peer sent
/// only in the high bytes of the COMMAND (packed as a big-endian 4-byte
/// int after the 4-byte count, the value in its low byte), those bytes.
fn command_garbage(fmt: &Format, sent: &[u8], ours: &[u8]) -> Option<Vec<u8>> {
    use pmix_codec::Dialect;
    let legacy = matches!(fmt.dialect, Dialect::V20 | Dialect::V12);
    (legacy
        && sent.len() == ours.len()
        && sent.len() >= 8
        && ours[4..7] == [0, 0, 0]
        && sent[..4] == ours[..4]
        && sent[7..] == ours[7..])
        .then(|| sent[4..7].to_vec())
}

/// Check one connection given everything the client sent and everything
/// the server sent, each in order.
pub fn verify(client: &[u8], server: &[u8]) -> Result<Verified, String> {
    let mut v = Verified::default();
    let cframes = frames(client, HeaderOrder::Little, "client stream")?;
    let mut cframes = cframes.into_iter();
    let (_, hs) = cframes.next().ok_or("the client sent nothing")?;
    let req = ConnectRequest::decode(&hs.payload).map_err(|e| format!("handshake: {e}"))?;
    same("handshake", HEADER_LEN, &hs.payload, req.encode())?;
    v.flag = req.flag;
    v.format = req.format();
    let fmt = req
        .format()
        .ok_or("the handshake names no dialect we know")?;
    v.messages += 1;

    // the server's unframed handshake reply (a server that refused the
    // peer may have closed without one)
    let start = if server.is_empty() {
        0
    } else if req.flag == peer_type::SIMPLE_CLIENT {
        let r = ClientReply::decode(server).map_err(|e| format!("handshake reply: {e}"))?;
        if server.get(..8) != Some(&r.encode()[..]) {
            return Err("handshake reply re-encodes differently".into());
        }
        8
    } else {
        let r = ToolReply::decode(req.flag, server).map_err(|e| format!("tool reply: {e}"))?;
        let b = r.encode();
        if server.get(..b.len()) != Some(&b[..]) {
            return Err("tool handshake reply re-encodes differently".into());
        }
        b.len()
    };
    if !server.is_empty() {
        v.messages += 1;
    }

    // requests by tag, so each reply is read as the answer to its command
    let mut by_tag: HashMap<u32, u8> = HashMap::new();
    let mut at = HEADER_LEN + hs.payload.len();
    for (_, m) in cframes {
        let here = at;
        at += HEADER_LEN + m.payload.len();
        v.messages += 1;
        if m.header.tag == tag::HEARTBEAT && m.payload.is_empty() {
            continue;
        }
        let r = Request::decode(&fmt, &m.payload)
            .map_err(|e| format!("request at client offset {here}: {e}"))?;
        if let Request::Other { command, .. } = r {
            return Err(format!(
                "request at client offset {here}: command {command} is not typed"
            ));
        }
        let ours = r.encode(&fmt);
        match ours
            .as_deref()
            .ok()
            .and_then(|b| command_garbage(&fmt, &m.payload, b))
        {
            Some(g) if g != [0, 0, 0] => v.garbage.push(("client", here + HEADER_LEN + 4, g)),
            _ => same("request", here, &m.payload, ours)?,
        }
        *v.requests.entry(r.command()).or_default() += 1;
        by_tag.insert(m.header.tag, r.command());
    }

    let sframes = frames(&server[start..], HeaderOrder::Network, "server stream")?;
    for (off, m) in sframes {
        let here = start + off;
        v.messages += 1;
        match m.header.tag {
            tag::NOTIFY => {
                let e = EventNotice::decode(&fmt, &m.payload)
                    .map_err(|e| format!("event at server offset {here}: {e}"))?;
                let ours = e.encode(&fmt);
                match ours
                    .as_deref()
                    .ok()
                    .and_then(|b| command_garbage(&fmt, &m.payload, b))
                {
                    Some(g) if g != [0, 0, 0] => {
                        v.garbage.push(("server", here + HEADER_LEN + 4, g))
                    }
                    _ => same("event", here, &m.payload, ours)?,
                }
                v.events += 1;
            }
            tag::IOF => {
                if !m.payload.is_empty() {
                    let d = IofData::decode(&fmt, &m.payload)
                        .map_err(|e| format!("IOF at server offset {here}: {e}"))?;
                    same("IOF data", here, &m.payload, d.encode(&fmt))?;
                }
                v.iof += 1;
            }
            tag::DATA_DELETE => {
                let d = DataDelete::decode(&fmt, &m.payload)
                    .map_err(|e| format!("data delete at server offset {here}: {e}"))?;
                same("data delete", here, &m.payload, d.encode(&fmt))?;
            }
            t => {
                let c = *by_tag.get(&t).ok_or_else(|| {
                    format!("reply at server offset {here}: no request used tag {t}")
                })?;
                let r = Reply::decode(&fmt, c, &m.payload)
                    .map_err(|e| format!("reply to command {c} at server offset {here}: {e}"))?;
                if let Reply::Raw(_) = r {
                    return Err(format!(
                        "reply to command {c} at server offset {here} is not typed"
                    ));
                }
                same("reply", here, &m.payload, r.encode(&fmt))?;
                *v.replies.entry(c).or_default() += 1;
            }
        }
    }
    Ok(v)
}
