//! The conversation inspector, sans-IO: the bytes each side of one
//! connection sent, in order, become a list of decoded entries (the
//! handshake and its reply, then each request followed by the replies
//! that carry its tag, then anything unmatched).
//!
//! Framing errors stop that side (a wrong length cannot be resynchronised);
//! a payload that does not decode is reported at its offset and the next
//! message is still shown, since the frame header says where it starts.

use pmix_codec::command::{EventNotice, Reply, Request};
use pmix_codec::frame::{tag, FrameDecoder, Header, HeaderOrder, HEADER_LEN};
use pmix_codec::handshake::{peer_type, ClientReply, ConnectRequest, ToolReply};
use pmix_codec::Format;
use serde::Serialize;
use serde_json::{json, Value as Json};

/// Which side sent a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Side {
    #[serde(rename = "C->S")]
    Client,
    #[serde(rename = "S->C")]
    Server,
}

/// One decoded (or undecodable) piece of the conversation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Entry {
    pub side: Side,
    /// Offset of the piece in its side's byte stream.
    pub offset: usize,
    /// What it is: "handshake", "handshake reply", "request", "reply",
    /// "event", "iof", "heartbeat", or "error".
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub header: Option<Header>,
    /// The decoded message (JSON form of the typed message).
    #[serde(skip_serializing_if = "Json::is_null")]
    pub message: Json,
    /// Why it did not decode, with the offset in the side's stream.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The decoded conversation and the format it was read in.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Conversation {
    /// The dialect and buffer type the client announced (v41 non-described
    /// if it announced none that we know).
    pub format: String,
    pub entries: Vec<Entry>,
}

impl Conversation {
    pub fn errors(&self) -> usize {
        self.entries.iter().filter(|e| e.error.is_some()).count()
    }
}

fn entry(side: Side, offset: usize, kind: &'static str) -> Entry {
    Entry {
        side,
        offset,
        kind,
        header: None,
        message: Json::Null,
        error: None,
    }
}

fn to_json<T: Serialize>(t: &T) -> Json {
    serde_json::to_value(t).unwrap_or_else(|e| json!({ "unserialisable": e.to_string() }))
}

/// Whole framed messages of one side, with their offsets; an error entry
/// where framing fails or bytes are left over.
fn frames(
    side: Side,
    bytes: &[u8],
    start: usize,
    first: HeaderOrder,
    max: usize,
    errors: &mut Vec<Entry>,
) -> Vec<(usize, pmix_codec::frame::Message)> {
    let mut d = FrameDecoder::new(first, max);
    d.push(bytes);
    let mut out = Vec::new();
    let mut at = start;
    loop {
        match d.next_message() {
            Ok(Some(m)) => {
                let n = HEADER_LEN + m.payload.len();
                out.push((at, m));
                at += n;
            }
            Ok(None) => {
                if d.buffered() > 0 {
                    let mut e = entry(side, at, "error");
                    e.error = Some(format!(
                        "{} bytes at offset {at} are not a whole message",
                        d.buffered()
                    ));
                    errors.push(e);
                }
                return out;
            }
            Err(err) => {
                let mut e = entry(side, at, "error");
                e.error = Some(format!(
                    "offset {at}: {err}; the rest of this side is not shown"
                ));
                errors.push(e);
                return out;
            }
        }
    }
}

/// Decode one connection: `client` is everything the client sent,
/// `server` everything the server sent, each in order.
pub fn inspect(client: &[u8], server: &[u8], max_message: usize) -> Conversation {
    let mut entries = Vec::new();
    let mut tail = Vec::new();
    let mut client_frames = frames(
        Side::Client,
        client,
        0,
        HeaderOrder::Little,
        max_message,
        &mut tail,
    )
    .into_iter();

    // the handshake: the client's first message
    let mut format = Format::V41;
    let mut flag = None;
    if let Some((at, m)) = client_frames.next() {
        let mut e = entry(Side::Client, at, "handshake");
        e.header = Some(m.header);
        match ConnectRequest::decode(&m.payload) {
            Ok(r) => {
                if let Some(f) = r.format() {
                    format = f;
                }
                flag = Some(r.flag);
                e.message = to_json(&r);
            }
            Err(err) => {
                e.error = Some(format!("offset {}: {err}", at + HEADER_LEN));
            }
        }
        entries.push(e);
    }

    // the server's unframed handshake reply (if it sent anything at all)
    let mut server_start = 0;
    if let (Some(flag), false) = (flag, server.is_empty()) {
        let mut e = entry(Side::Server, 0, "handshake reply");
        if flag == peer_type::SIMPLE_CLIENT {
            match ClientReply::decode(server) {
                Ok(r) => {
                    e.message = to_json(&r);
                    server_start = 8;
                }
                Err(err) => e.error = Some(err.to_string()),
            }
        } else {
            match ToolReply::decode(flag, server) {
                Ok(r) => {
                    server_start = r.encode().len();
                    e.message = to_json(&r);
                }
                Err(err) => e.error = Some(err.to_string()),
            }
        }
        entries.push(e);
    }
    let server_frames = frames(
        Side::Server,
        server.get(server_start..).unwrap_or_default(),
        server_start,
        HeaderOrder::Network,
        max_message,
        &mut tail,
    );
    let mut pending: Vec<Option<(usize, pmix_codec::frame::Message)>> =
        server_frames.into_iter().map(Some).collect();

    let decode_server = |at: usize, m: &pmix_codec::frame::Message, command: Option<u8>| {
        let payload_at = at + HEADER_LEN;
        let (kind, r) = match (m.header.tag, command) {
            (tag::NOTIFY, _) => (
                "event",
                EventNotice::decode(&format, &m.payload).map(|x| to_json(&x)),
            ),
            (tag::IOF, _) => (
                "iof",
                Ok(json!({ "raw": pmix_types::hex::encode(&m.payload) })),
            ),
            (_, Some(c)) => (
                "reply",
                Reply::decode(&format, c, &m.payload).map(|x| to_json(&x)),
            ),
            (_, None) => (
                "reply",
                Ok(json!({ "unmatched_tag": m.header.tag,
                           "raw": pmix_types::hex::encode(&m.payload) })),
            ),
        };
        let mut e = entry(Side::Server, at, kind);
        e.header = Some(m.header);
        match r {
            Ok(j) => e.message = j,
            Err(err) => {
                e.error = Some(format!("payload at offset {payload_at}: {err}"));
            }
        }
        e
    };

    for (at, m) in client_frames {
        let mut e = entry(Side::Client, at, "request");
        e.header = Some(m.header);
        let mut command = None;
        if m.header.tag == tag::HEARTBEAT && m.payload.is_empty() {
            e.kind = "heartbeat";
        } else {
            match Request::decode(&format, &m.payload) {
                Ok(r) => {
                    command = Some(r.command());
                    e.message = to_json(&r);
                }
                Err(err) => {
                    e.error = Some(format!("payload at offset {}: {err}", at + HEADER_LEN));
                }
            }
        }
        let t = m.header.tag;
        entries.push(e);
        // the replies carrying this request's tag, in order
        if t >= tag::DYNAMIC {
            for slot in pending.iter_mut() {
                if matches!(slot, Some((_, r)) if r.header.tag == t) {
                    let (sat, sm) = slot.take().expect("matched above");
                    entries.push(decode_server(sat, &sm, command));
                }
            }
        }
    }
    for (sat, sm) in pending.into_iter().flatten() {
        entries.push(decode_server(sat, &sm, None));
    }
    entries.extend(tail);
    Conversation {
        format: format!("{} {:?}", format.dialect, format.buffer_type),
        entries,
    }
}

/// The conversation as text, one entry per paragraph.
pub fn render_text(c: &Conversation) -> String {
    let mut s = format!("format: {}\n", c.format);
    for e in &c.entries {
        let side = match e.side {
            Side::Client => "C->S",
            Side::Server => "S->C",
        };
        s.push_str(&format!("\n{side} @{} {}", e.offset, e.kind));
        if let Some(h) = &e.header {
            s.push_str(&format!(
                " [pindex={} tag={} nbytes={}]",
                h.pindex, h.tag, h.nbytes
            ));
        }
        s.push('\n');
        if !e.message.is_null() {
            let body = serde_json::to_string_pretty(&e.message).expect("JSON");
            for line in body.lines() {
                s.push_str("  ");
                s.push_str(line);
                s.push('\n');
            }
        }
        if let Some(err) = &e.error {
            s.push_str(&format!("  ERROR: {err}\n"));
        }
    }
    s
}
