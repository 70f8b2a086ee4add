//! The annotated capture files of corpus/releases/captures (their format:
//! corpus/releases/captures/README.md), as raw byte streams.

/// The (tag, payload) of every framed message of a byte stream whose
/// first header is in `first` order (a client's stream after its
/// handshake: little-endian on x86; a server's: network order).
pub fn frames(bytes: &[u8], first: pmix_codec::frame::HeaderOrder) -> Vec<(u32, Vec<u8>)> {
    let mut d = pmix_codec::frame::FrameDecoder::new(first, usize::MAX);
    d.push(bytes);
    let mut out = Vec::new();
    while let Some(m) = d.next_message().expect("a well-framed stream") {
        out.push((m.header.tag, m.payload.to_vec()));
    }
    out
}

/// Who sent a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The client (or tool).
    Client,
    /// The server.
    Server,
}

/// The bytes of one captured message: its hex, checked against the length
/// its header declares. The first message of each side is special:
/// the client's handshake header is host order, the server's handshake
/// reply is unframed.
pub fn message_bytes(hex: &str, first: bool, side: Side) -> Vec<u8> {
    let b = pmix_types::hex::decode(hex).unwrap();
    let len = match (first, side) {
        (true, Side::Server) => return b,
        (true, Side::Client) => u32::from_le_bytes(b[8..12].try_into().unwrap()),
        (false, _) => u32::from_be_bytes(b[8..12].try_into().unwrap()),
    };
    assert_eq!(b.len(), 16 + len as usize, "{hex}");
    b
}

/// Per connection: (client bytes, server bytes, C->S messages, S->C messages).
pub fn connections(text: &str) -> Vec<(Vec<u8>, Vec<u8>, usize, usize)> {
    // per connection, per message: (side, hex)
    let mut conns: Vec<Vec<(Side, String)>> = Vec::new();
    let mut in_msg = false;
    for line in text.lines() {
        let t = line.trim();
        if line.starts_with("CONNECTION") {
            conns.push(Vec::new());
            in_msg = false;
        } else if line.starts_with("  C->S #") || line.starts_with("  S->C #") {
            let side = if line.starts_with("  C->S") {
                Side::Client
            } else {
                Side::Server
            };
            if let Some(c) = conns.last_mut() {
                c.push((side, String::new()));
                in_msg = true;
            }
        } else if line.starts_with("====") {
            in_msg = false;
        } else if in_msg
            // raw bytes sit at indent 4 (header) or 6 (payload); deeper
            // lines re-show nested bytes ("decoded below")
            && line.len() - line.trim_start().len() <= 6
            && !t.is_empty()
            && t.len() % 2 == 0
            && t.bytes().all(|c| c.is_ascii_hexdigit())
        {
            if let Some(m) = conns.last_mut().and_then(|c| c.last_mut()) {
                m.1.push_str(t);
            }
        }
    }
    conns
        .into_iter()
        .map(|msgs| {
            let (mut c, mut s, mut nc, mut ns) = (Vec::new(), Vec::new(), 0, 0);
            for (side, hex) in msgs {
                match side {
                    Side::Client => {
                        c.extend(message_bytes(&hex, nc == 0, side));
                        nc += 1;
                    }
                    Side::Server => {
                        s.extend(message_bytes(&hex, ns == 0, side));
                        ns += 1;
                    }
                }
            }
            (c, s, nc, ns)
        })
        .collect()
}

/// One connection of a capture file.
pub struct Captured {
    /// "`<file>` connection `<n>`", for messages.
    pub ctx: String,
    pub client: Vec<u8>,
    pub server: Vec<u8>,
    /// Messages each side sent.
    pub nc: usize,
    pub ns: usize,
}

/// Every annotated transcript of corpus/releases/captures: (file name,
/// text), in file-name order (the `.log` and `.child_env.txt` files are
/// not transcripts).
pub fn transcripts() -> Vec<(String, String)> {
    let dir = crate::repo().join("corpus/releases/captures");
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter_map(|path| {
            let name = path.file_name()?.to_string_lossy().into_owned();
            if !name.ends_with(".txt") || name.contains("child_env") {
                return None;
            }
            Some((name, std::fs::read_to_string(&path).unwrap()))
        })
        .collect();
    out.sort();
    out
}

/// Every connection of corpus/releases/captures in which the client sent
/// something.
pub fn release_connections() -> Vec<Captured> {
    let mut out = Vec::new();
    for (name, text) in transcripts() {
        for (i, (client, server, nc, ns)) in connections(&text).into_iter().enumerate() {
            if nc > 0 {
                out.push(Captured {
                    ctx: format!("{name} connection {}", i + 1),
                    client,
                    server,
                    nc,
                    ns,
                });
            }
        }
    }
    out
}
