//! The simple-PMI grammar, one for both directions (the PMI-2 client of
//! [`client`](crate::pmi::client) and the server of [`super::server`]): a message is
//! `cmd=NAME` then `key=value` fields, in one of three framings (MPICH's
//! src/pmi/src/pmi_wire.c, spec-notes/pmi.md §1):
//!
//! - **v1**: one line, fields separated by spaces, ended by `\n`; a value
//!   may hold an escaped space or backslash (`\ `, `\\`).
//! - **v1-mcmd** (PMI-1 spawn only): `mcmd=spawn` then one field a line,
//!   each command's fields ended by a line `endcmd`; the message ends at
//!   the `endcmd` of the command whose `spawnssofar` equals `totspawns`.
//! - **v2**: a six-character decimal length (Slurm pads it on the right,
//!   MPICH on the left), then that many bytes of `key=value;` fields.

#![forbid(unsafe_code)]

/// A parsed message: its command and its fields in the order sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// The `cmd=` (or `mcmd=`) value.
    pub cmd: String,
    /// Every other field in order; a field without `=` (`endcmd`) has an
    /// empty value. Repeated keys are kept (PMI-2 spawn repeats `subcmd`).
    pub pairs: Vec<(String, String)>,
}

/// What is wrong with a message.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
#[error("malformed {what}: {detail}")]
pub struct Malformed {
    /// What was being read.
    pub what: &'static str,
    /// What is wrong with it.
    pub detail: String,
}

fn bad(what: &'static str, detail: String) -> Malformed {
    Malformed { what, detail }
}

impl Message {
    /// A message to send: `cmd` and its fields.
    pub fn new(cmd: &str, pairs: &[(&str, &str)]) -> Message {
        Message {
            cmd: cmd.to_string(),
            pairs: pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    /// The value of the first field named `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Parse a body whose fields are ended by any of `seps` (';' for v2,
    /// ' ' or '\n' for v1 without escapes): `cmd=NAME` first, then
    /// `key=value` fields.
    pub fn parse(body: &str, seps: &[char]) -> Result<Message, Malformed> {
        let mut fields = body.split(|c| seps.contains(&c)).filter(|f| !f.is_empty());
        let first = fields
            .next()
            .ok_or_else(|| bad("message", "empty".into()))?;
        let cmd = first
            .strip_prefix("cmd=")
            .ok_or_else(|| bad("message", format!("{body:?} does not begin with cmd=")))?;
        let mut pairs = Vec::new();
        for f in fields {
            let (k, v) = f
                .split_once('=')
                .ok_or_else(|| bad("message", format!("field {f:?} has no '=' in {body:?}")))?;
            pairs.push((k.to_string(), v.to_string()));
        }
        Ok(Message {
            cmd: cmd.to_string(),
            pairs,
        })
    }

    /// Parse a v1 line (without its `\n`): space-separated fields, a
    /// backslash escaping the next character of a value.
    pub fn parse_v1(line: &str) -> Result<Message, Malformed> {
        let mut fields: Vec<(String, Option<String>)> = Vec::new();
        let mut chars = line.chars().peekable();
        loop {
            while chars.peek() == Some(&' ') {
                chars.next();
            }
            if chars.peek().is_none() {
                break;
            }
            let mut key = String::new();
            while let Some(&c) = chars.peek() {
                if c == ' ' || c == '=' {
                    break;
                }
                key.push(c);
                chars.next();
            }
            if key.is_empty() {
                return Err(bad("v1 line", format!("a field without a key in {line:?}")));
            }
            if chars.peek() == Some(&'=') {
                chars.next();
                let mut val = String::new();
                while let Some(c) = chars.next() {
                    match c {
                        ' ' => break,
                        '\\' => match chars.next() {
                            Some(n) => val.push(n),
                            None => val.push('\\'),
                        },
                        c => val.push(c),
                    }
                }
                // `key=` with nothing after it: an empty value (MPICH
                // 4.0's MPI_Publish_name sends `port=`; its hydra takes it)
                fields.push((key, Some(val)));
            } else {
                fields.push((key, None));
            }
        }
        Self::from_fields("v1 line", "cmd", fields)
    }

    /// Parse a v1-mcmd message (without its last `\n`): one field a line,
    /// values taken whole; every `mcmd=spawn` line after the first, and
    /// every `endcmd` line, is kept as a field (the command boundaries).
    pub fn parse_mcmd(text: &str) -> Result<Message, Malformed> {
        let fields = text
            .split('\n')
            .filter(|l| !l.is_empty())
            .map(|l| match l.split_once('=') {
                Some((k, v)) => (k.to_string(), Some(v.to_string())),
                None => (l.to_string(), None),
            })
            .collect();
        Self::from_fields("v1-mcmd message", "mcmd", fields)
    }

    fn from_fields(
        what: &'static str,
        head: &str,
        fields: Vec<(String, Option<String>)>,
    ) -> Result<Message, Malformed> {
        let mut it = fields.into_iter();
        let cmd = match it.next() {
            Some((k, Some(v))) if k == head => v,
            other => {
                return Err(bad(what, format!("begins with {other:?}, not {head}=")));
            }
        };
        Ok(Message {
            cmd,
            pairs: it.map(|(k, v)| (k, v.unwrap_or_default())).collect(),
        })
    }

    /// The v1 bytes: `cmd=NAME key=value …\n`, spaces and backslashes in
    /// values escaped (MPICH unescapes them; values from its own clients
    /// never hold any, so other clients see what they always saw).
    pub fn encode_v1(&self) -> Vec<u8> {
        let mut s = format!("cmd={}", self.cmd);
        for (k, v) in &self.pairs {
            s.push(' ');
            s.push_str(k);
            s.push('=');
            for c in v.chars() {
                if c == ' ' || c == '\\' {
                    s.push('\\');
                }
                // a newline cannot cross a v1 line
                s.push(if c == '\n' { ' ' } else { c });
            }
        }
        s.push('\n');
        s.into_bytes()
    }

    /// The v2 bytes: the length, `%-6d` as Slurm writes it, then
    /// `cmd=NAME;key=value;…;`. None if the body exceeds [`MAX_V2`].
    pub fn encode_v2(&self) -> Option<Vec<u8>> {
        let mut body = format!("cmd={};", self.cmd);
        for (k, v) in &self.pairs {
            body.push_str(k);
            body.push('=');
            // a ';' cannot cross a v2 field
            body.extend(v.chars().map(|c| if c == ';' { ',' } else { c }));
            body.push(';');
        }
        if body.len() > MAX_V2 {
            return None;
        }
        let mut out = format!("{:<6}", body.len()).into_bytes();
        out.extend_from_slice(body.as_bytes());
        Some(out)
    }
}

/// The largest v2 body the six-character length can announce.
pub const MAX_V2: usize = 999_999;

/// One framed message, its framing kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    /// A v1 line, without its `\n`.
    V1(String),
    /// A v1-mcmd message, up to and without its last `\n`.
    Mcmd(String),
    /// A v2 body (after the length).
    V2(String),
}

/// Why framing failed: the bytes can never become a message.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum FrameError {
    /// More bytes than the framing allows without an end.
    #[error("{framing} message longer than {max} bytes ({len} without an end)")]
    TooLong {
        /// `"v1"`, `"v1-mcmd"` or `"v2"`.
        framing: &'static str,
        /// The bytes held.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// Bytes that begin no framing.
    #[error("{0}")]
    Malformed(Malformed),
}

/// The limits framing enforces before holding any more bytes.
#[derive(Clone, Copy, Debug)]
pub struct FrameLimits {
    /// The longest v1 line (MPICH's client writes at most 1024 + keys).
    pub v1: usize,
    /// The longest v1-mcmd message and v2 body.
    pub multi: usize,
}

impl Default for FrameLimits {
    fn default() -> FrameLimits {
        FrameLimits {
            v1: 4096,
            multi: 256 << 10,
        }
    }
}

/// The next complete message at the front of `buf` and how many bytes it
/// took; Ok(None) while more bytes are needed.
pub fn next_frame(buf: &[u8], lim: FrameLimits) -> Result<Option<(Frame, usize)>, FrameError> {
    let text = |b: &[u8], what: &'static str| {
        String::from_utf8(b.to_vec())
            .map_err(|_| FrameError::Malformed(bad(what, "not UTF-8".into())))
    };
    let prefix_of = |p: &[u8]| buf.len() < p.len() && p.starts_with(buf);
    if buf.is_empty() || prefix_of(b"cmd=") || prefix_of(b"mcmd=") {
        return Ok(None);
    }
    if buf.starts_with(b"cmd=") {
        return match buf.iter().position(|b| *b == b'\n') {
            Some(nl) if nl <= lim.v1 => Ok(Some((Frame::V1(text(&buf[..nl], "v1 line")?), nl + 1))),
            Some(nl) => Err(FrameError::TooLong {
                framing: "v1",
                len: nl,
                max: lim.v1,
            }),
            None if buf.len() > lim.v1 => Err(FrameError::TooLong {
                framing: "v1",
                len: buf.len(),
                max: lim.v1,
            }),
            None => Ok(None),
        };
    }
    if buf.starts_with(b"mcmd=") {
        // the end: an `endcmd` line after the command with spawnssofar == totspawns
        let (mut tot, mut sofar) = (None::<String>, None::<String>);
        let mut start = 0;
        while let Some(i) = buf[start..].iter().position(|b| *b == b'\n') {
            let line = &buf[start..start + i];
            let end = start + i + 1;
            if end > lim.multi {
                break;
            }
            if let Some(v) = line.strip_prefix(b"totspawns=") {
                tot = Some(String::from_utf8_lossy(v).into_owned());
            } else if let Some(v) = line.strip_prefix(b"spawnssofar=") {
                sofar = Some(String::from_utf8_lossy(v).into_owned());
            } else if line == b"endcmd" && tot.is_some() && tot == sofar {
                return Ok(Some((Frame::Mcmd(text(&buf[..end - 1], "v1-mcmd")?), end)));
            }
            start = end;
        }
        if buf.len() > lim.multi {
            return Err(FrameError::TooLong {
                framing: "v1-mcmd",
                len: buf.len(),
                max: lim.multi,
            });
        }
        return Ok(None);
    }
    if buf.len() < 6 {
        return if buf.iter().all(|b| *b == b' ' || b.is_ascii_digit()) {
            Ok(None)
        } else {
            Err(FrameError::Malformed(bad(
                "message",
                format!(
                    "{:?} is neither cmd= nor a length",
                    String::from_utf8_lossy(buf)
                ),
            )))
        };
    }
    let head = String::from_utf8_lossy(&buf[..6]).into_owned();
    let len: usize = head.trim_matches(' ').parse().map_err(|_| {
        FrameError::Malformed(bad(
            "v2 length",
            format!("{head:?} is neither cmd= nor a length"),
        ))
    })?;
    if len > lim.multi {
        return Err(FrameError::TooLong {
            framing: "v2",
            len,
            max: lim.multi,
        });
    }
    if buf.len() < 6 + len {
        return Ok(None);
    }
    Ok(Some((
        Frame::V2(text(&buf[6..6 + len], "v2 body")?),
        6 + len,
    )))
}

impl Frame {
    /// The message the frame holds.
    pub fn message(&self) -> Result<Message, Malformed> {
        match self {
            Frame::V1(l) => Message::parse_v1(l),
            Frame::Mcmd(t) => Message::parse_mcmd(t),
            Frame::V2(b) => Message::parse(b, &[';']),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_framings() {
        let lim = FrameLimits::default();
        let (f, n) = next_frame(b"cmd=init pmi_version=1 pmi_subversion=1\nrest", lim)
            .unwrap()
            .unwrap();
        assert_eq!(n, 40);
        let m = f.message().unwrap();
        assert_eq!(m.cmd, "init");
        assert_eq!(m.get("pmi_subversion"), Some("1"));
        // MPICH right-aligns the v2 length, Slurm left-aligns it
        for b in [&b"    14cmd=kvs-fence;"[..], &b"14    cmd=kvs-fence;"[..]] {
            let (f, n) = next_frame(b, lim).unwrap().unwrap();
            assert_eq!((f.message().unwrap().cmd.as_str(), n), ("kvs-fence", 20));
        }
        let mcmd = b"mcmd=spawn\nnprocs=1\nexecname=./a b\ntotspawns=2\nspawnssofar=1\nargcnt=0\nendcmd\nmcmd=spawn\nnprocs=1\nexecname=c\ntotspawns=2\nspawnssofar=2\nargcnt=0\nendcmd\n";
        for cut in 1..mcmd.len() {
            assert_eq!(next_frame(&mcmd[..cut], lim), Ok(None), "{cut}");
        }
        let (f, n) = next_frame(mcmd, lim).unwrap().unwrap();
        assert_eq!(n, mcmd.len());
        let m = f.message().unwrap();
        assert_eq!(m.cmd, "spawn");
        assert_eq!(m.get("execname"), Some("./a b"));
        assert_eq!(m.pairs.iter().filter(|(k, _)| k == "endcmd").count(), 2);
    }

    #[test]
    fn escapes_and_round_trips() {
        let m = Message::parse_v1(r"cmd=put key=k value=a\ b\\c").unwrap();
        assert_eq!(m.get("value"), Some(r"a b\c"));
        let again = m.encode_v1();
        let back = Message::parse_v1(std::str::from_utf8(&again[..again.len() - 1]).unwrap());
        assert_eq!(back.unwrap(), m);
        let v2 = Message::new("kvs-get-response", &[("rc", "0"), ("value", "x=y")]);
        let b = v2.encode_v2().unwrap();
        let (f, _) = next_frame(&b, FrameLimits::default()).unwrap().unwrap();
        assert_eq!(f.message().unwrap(), v2);
    }

    #[test]
    fn bad_bytes_are_typed() {
        let lim = FrameLimits { v1: 16, multi: 64 };
        assert!(matches!(
            next_frame(&[b'c', b'm', b'd', b'=', b'x'].repeat(4), lim),
            Err(FrameError::TooLong { framing: "v1", .. })
        ));
        assert!(matches!(
            next_frame(b"999   cmd=x;", lim),
            Err(FrameError::TooLong { framing: "v2", .. })
        ));
        assert!(matches!(
            next_frame(b"hello world\n", lim),
            Err(FrameError::Malformed(_))
        ));
        assert!(matches!(
            next_frame(b"GET /", lim),
            Err(FrameError::Malformed(_))
        ));
        assert!(Message::parse_v1("key=v").is_err());
        // an empty value is a value (MPICH 4.0 sends `port=`)
        assert_eq!(
            Message::parse_v1("cmd=put key=").unwrap().get("key"),
            Some("")
        );
    }

    proptest::proptest! {
        /// Any bytes: a frame, a wait or a typed error, never a panic.
        #[test]
        fn any_bytes_frame_or_fail(data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400)) {
            if let Ok(Some((f, n))) = next_frame(&data, FrameLimits { v1: 64, multi: 128 }) {
                proptest::prop_assert!(n <= data.len());
                let _ = f.message();
            }
        }
    }
}
