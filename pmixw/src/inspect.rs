//! The conversation inspector, sans-IO: the bytes each side of one
//! connection sent, in order, become a list of decoded entries (the
//! handshake and its reply, then each request followed by the replies
//! that carry its tag, then anything unmatched).
//!
//! Framing errors stop that side (a wrong length cannot be resynchronised);
//! a payload that does not decode is reported at its offset and the next
//! message is still shown, since the frame header says where it starts.

#![forbid(unsafe_code)]

use pmix_codec::frame::{tag, FrameDecoder, Header, HeaderOrder, HEADER_LEN};
use pmix_codec::handshake::{peer_type, ClientReply, ConnectRequest, ToolReply};
use pmix_codec::msg::{DataDelete, EventNotice, IofData, Reply, Request};
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
    /// The release the client's handshake names ("OpenPMIx 7.0 (7.0.0a1)"),
    /// when its version string has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub release: Option<String>,
    pub entries: Vec<Entry>,
}

/// A handshake's version string as the release family it names
/// (`pmix_codec::Release`): "OpenPMIx 7.0 (7.0.0a1)", "OpenPMIx 6.1
/// (6.1.0)", "OpenPMIx 6.0 or earlier (4.2.2rc2)".
pub fn release_name(version: &str) -> Option<String> {
    use pmix_codec::Release;
    let family = match Release::from_version(version)? {
        Release::V7 => "OpenPMIx 7.0",
        Release::V61 => "OpenPMIx 6.1",
        Release::UpTo6 => "OpenPMIx 6.0 or earlier",
    };
    Some(format!("{family} ({version})"))
}

/// The segments a 7.0 server's shmem3 gds names in its job-info reply: per
/// `PMIX_GDS_SHMEM3_SEG_BLOB` kval, the string KVALs its BYTE_OBJECT packs
/// (NSPACEID, SMSEGID, SEG_PATH, SEG_SIZE, SEG_HADR, SEG_ARBS, SEG_ARSZ:
/// capture `v7.0.0a1-server_v7.0.0a1-client_gds-default`), as
/// `{"PMIX_GDS_SHMEM3_SEG_PATH": "/tmp/…", …}`; `None` if there are none.
/// Their addresses and paths are the server's, valid in its run only.
pub fn shmem3_segments(format: &Format, r: &Reply) -> Option<Json> {
    let Reply::JobInfo { kvals, .. } = r else {
        return None;
    };
    let segs: Vec<Json> = kvals
        .iter()
        .filter(|k| k.key.as_ref().and_then(|s| s.as_str()) == Some("PMIX_GDS_SHMEM3_SEG_BLOB"))
        .map(|k| match &k.value {
            pmix_types::Value::ByteObject(b) => {
                match pmix_codec::decode(format, pmix_types::DataType::Kval, &b.0) {
                    Ok(vals) => {
                        let mut m = serde_json::Map::new();
                        for v in vals {
                            if let pmix_types::Value::Kval(kv) = v {
                                let key = kv.key.as_ref().map_or(String::new(), |s| s.to_string());
                                let val = match &kv.value {
                                    pmix_types::Value::String(Some(s)) => json!(s.to_string()),
                                    other => to_json(other),
                                };
                                m.insert(key, val);
                            }
                        }
                        Json::Object(m)
                    }
                    Err(e) => json!({ "error": e.to_string() }),
                }
            }
            other => json!({ "error": format!("not a BYTE_OBJECT: {}", other.data_type()) }),
        })
        .collect();
    (!segs.is_empty()).then_some(Json::Array(segs))
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

/// A server frame after the handshake, as an entry: tag 0 events, tag 2
/// IOF, otherwise the reply to `command` (the request that used its tag).
fn server_entry(
    format: &Format,
    at: usize,
    m: &pmix_codec::frame::Message,
    command: Option<u8>,
) -> Entry {
    let payload_at = at + HEADER_LEN;
    let (kind, r) = match (m.header.tag, command) {
        (tag::NOTIFY, _) => (
            "event",
            EventNotice::decode(format, &m.payload).map(|x| to_json(&x)),
        ),
        (tag::IOF, _) if m.payload.is_empty() => ("iof", Ok(json!({ "closing": true }))),
        (tag::IOF, _) => (
            "iof",
            IofData::decode(format, &m.payload).map(|x| to_json(&x)),
        ),
        (tag::DATA_DELETE, _) => (
            "data-delete",
            DataDelete::decode(format, &m.payload).map(|x| to_json(&x)),
        ),
        (_, Some(c)) => (
            "reply",
            Reply::decode(format, c, &m.payload).map(|x| {
                let mut j = to_json(&x);
                if let (Some(segs), Json::Object(o)) = (shmem3_segments(format, &x), &mut j) {
                    o.insert("shmem3_segments".into(), segs);
                }
                j
            }),
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
        Err(err) => e.error = Some(format!("payload at offset {payload_at}: {err}")),
    }
    e
}

/// A client frame after the handshake, as an entry, and its command.
fn client_entry(format: &Format, at: usize, m: &pmix_codec::frame::Message) -> (Entry, Option<u8>) {
    let mut e = entry(Side::Client, at, "request");
    e.header = Some(m.header);
    let mut command = None;
    if m.header.tag == tag::HEARTBEAT && m.payload.is_empty() {
        e.kind = "heartbeat";
    } else {
        match Request::decode(format, &m.payload) {
            Ok(r) => {
                command = Some(r.command());
                e.message = to_json(&r);
            }
            Err(err) => {
                e.error = Some(format!("payload at offset {}: {err}", at + HEADER_LEN));
            }
        }
    }
    (e, command)
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
    let mut release = None;
    if let Some((at, m)) = client_frames.next() {
        let mut e = entry(Side::Client, at, "handshake");
        e.header = Some(m.header);
        match ConnectRequest::decode(&m.payload) {
            Ok(r) => {
                if let Some(f) = r.format() {
                    format = f;
                }
                release = r.version.as_str().and_then(release_name);
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

    for (at, m) in client_frames {
        let (e, command) = client_entry(&format, at, &m);
        let t = m.header.tag;
        entries.push(e);
        // the replies carrying this request's tag, in order
        if t >= tag::DYNAMIC {
            for slot in pending.iter_mut() {
                if matches!(slot, Some((_, r)) if r.header.tag == t) {
                    let (sat, sm) = slot.take().expect("matched above");
                    entries.push(server_entry(&format, sat, &sm, command));
                }
            }
        }
    }
    for (sat, sm) in pending.into_iter().flatten() {
        entries.push(server_entry(&format, sat, &sm, None));
    }
    entries.extend(tail);
    Conversation {
        format: format!("{} {:?}", format.dialect, format.buffer_type),
        release,
        entries,
    }
}

/// The conversation as text, one entry per paragraph.
pub fn render_text(c: &Conversation) -> String {
    let mut s = format!("format: {}\n", c.format);
    if let Some(r) = &c.release {
        s.push_str(&format!("release: {r}\n"));
    }
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

/// The connect request frame as an entry, with the format and peer type
/// it announces.
fn handshake_entry(
    at: usize,
    m: &pmix_codec::frame::Message,
) -> (Entry, Option<Format>, Option<u8>) {
    let mut e = entry(Side::Client, at, "handshake");
    e.header = Some(m.header);
    match ConnectRequest::decode(&m.payload) {
        Ok(r) => {
            e.message = to_json(&r);
            (e, r.format(), Some(r.flag))
        }
        Err(err) => {
            e.error = Some(format!("offset {}: {err}", at + HEADER_LEN));
            (e, None, None)
        }
    }
}

/// The inspector fed live: bytes of either side as they arrive, in any
/// split; each call returns the entries that became complete. This is the
/// sans-IO core of `pmixw relay`.
pub struct Live {
    format: Format,
    flag: Option<u8>,
    client: FrameDecoder,
    server: FrameDecoder,
    client_at: usize,
    server_at: usize,
    handshake_seen: bool,
    /// Server bytes before its handshake reply is complete.
    server_hs: Vec<u8>,
    server_hs_done: bool,
    tags: std::collections::HashMap<u32, u8>,
    client_failed: bool,
    server_failed: bool,
}

impl Live {
    pub fn new(max_message: usize) -> Live {
        Live {
            format: Format::V41,
            flag: None,
            client: FrameDecoder::new(HeaderOrder::Little, max_message),
            server: FrameDecoder::new(HeaderOrder::Network, max_message),
            client_at: 0,
            server_at: 0,
            handshake_seen: false,
            server_hs: Vec::new(),
            server_hs_done: false,
            tags: Default::default(),
            client_failed: false,
            server_failed: false,
        }
    }

    /// The format the client announced (v41 until it has).
    pub fn format(&self) -> Format {
        self.format
    }

    /// Bytes the client sent.
    pub fn client_bytes(&mut self, data: &[u8]) -> Vec<Entry> {
        let mut out = Vec::new();
        if self.client_failed {
            return out;
        }
        self.client.push(data);
        loop {
            match self.client.next_message() {
                Ok(Some(m)) => {
                    let at = self.client_at;
                    self.client_at += HEADER_LEN + m.payload.len();
                    if !self.handshake_seen {
                        self.handshake_seen = true;
                        let (e, f, flag) = handshake_entry(at, &m);
                        if let Some(f) = f {
                            self.format = f;
                        }
                        self.flag = flag;
                        out.push(e);
                    } else {
                        let (e, command) = client_entry(&self.format, at, &m);
                        if let Some(c) = command {
                            self.tags.insert(m.header.tag, c);
                        }
                        out.push(e);
                    }
                }
                Ok(None) => return out,
                Err(err) => {
                    self.client_failed = true;
                    let mut e = entry(Side::Client, self.client_at, "error");
                    e.error = Some(format!(
                        "offset {}: {err}; the rest of this side is not shown",
                        self.client_at
                    ));
                    out.push(e);
                    return out;
                }
            }
        }
    }

    /// Bytes the server sent.
    pub fn server_bytes(&mut self, data: &[u8]) -> Vec<Entry> {
        let mut out = Vec::new();
        if self.server_failed {
            return out;
        }
        if !self.server_hs_done {
            self.server_hs.extend_from_slice(data);
            let Some(flag) = self.flag else {
                return out; // the reply cannot be read before the request
            };
            let need = pmix_codec::handshake::reply_len(flag);
            if self.server_hs.len() < need {
                return out;
            }
            self.server_hs_done = true;
            let hs: Vec<u8> = self.server_hs.drain(..need).collect();
            let mut e = entry(Side::Server, 0, "handshake reply");
            let r = if flag == peer_type::SIMPLE_CLIENT {
                ClientReply::decode(&hs).map(|r| to_json(&r))
            } else {
                ToolReply::decode(flag, &hs).map(|r| to_json(&r))
            };
            match r {
                Ok(j) => e.message = j,
                Err(err) => e.error = Some(err.to_string()),
            }
            out.push(e);
            self.server_at = need;
            let rest = std::mem::take(&mut self.server_hs);
            self.server.push(&rest);
        } else {
            self.server.push(data);
        }
        loop {
            match self.server.next_message() {
                Ok(Some(m)) => {
                    let at = self.server_at;
                    self.server_at += HEADER_LEN + m.payload.len();
                    let command = self.tags.get(&m.header.tag).copied();
                    out.push(server_entry(&self.format, at, &m, command));
                }
                Ok(None) => return out,
                Err(err) => {
                    self.server_failed = true;
                    let mut e = entry(Side::Server, self.server_at, "error");
                    e.error = Some(format!(
                        "offset {}: {err}; the rest of this side is not shown",
                        self.server_at
                    ));
                    out.push(e);
                    return out;
                }
            }
        }
    }
}

/// One entry as the text form's paragraph.
pub fn render_entry(e: &Entry) -> String {
    let c = Conversation {
        format: String::new(),
        release: None,
        entries: vec![e.clone()],
    };
    let t = render_text(&c);
    t.trim_start_matches("format: \n")
        .trim_start_matches('\n')
        .to_string()
}
