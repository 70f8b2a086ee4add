//! What the `pmixw run` of each node sends the others directly, for what
//! PMI-2's one collective cannot carry: the data a fence collected (each
//! node's contribution, fetched from it by the nodes that need it),
//! direct-modex requests and answers, events beyond the node, and the end
//! of the job. Sans-IO: messages to
//! bytes and back. The peers' addresses and a shared token are exchanged
//! through the PMI-2 KVS first (spec-notes/pmi2.md).
//!
//! A frame is a 4-byte big-endian length then that many bytes: one v41
//! data buffer holding a UINT8 kind then the message's fields.

#![forbid(unsafe_code)]

use bytes::Bytes;
use pmix_codec::{DataBuffer, Format};
use pmix_types::{DataType, Info, PString, Proc, Value};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// The largest frame a peer may announce (a modex blob of a big rank fits
/// many times over); larger is refused before anything is buffered.
pub const MAX_FRAME: usize = 64 << 20;

/// What a connection may send before its Hello has been checked.
pub const MAX_HELLO: usize = 4096;

/// One message between the nodes' hosts.
#[derive(Clone, Debug, PartialEq)]
pub enum Msg {
    /// First on every connection: the job's token and the sender's node.
    Hello {
        /// The job's shared token (exchanged through the PMI-2 KVS).
        token: String,
        /// The sender's node index.
        node: u32,
    },
    /// Send me this rank's data once it has committed.
    Dmodex {
        /// The id the answer carries.
        request: u64,
        /// The rank's namespace.
        nspace: String,
        /// The rank.
        rank: u32,
    },
    /// The answer: status 0 and the blob of `Server::modex_data`, or an error.
    DmodexReply {
        /// The id of the request answered.
        request: u64,
        /// 0, or the PMIx error.
        status: i32,
        /// The rank's packed data.
        blob: Bytes,
    },
    /// An event a rank notified beyond its node.
    Notify {
        /// The event's status code.
        code: i32,
        /// The rank that notified it.
        source: Proc,
        /// Its `pmix_data_range_t`.
        range: u8,
        /// Its attributes.
        info: Vec<Info>,
    },
    /// The job ends with this status (an abort, a failed rank, a lost node).
    End {
        /// The job's exit status.
        status: i32,
        /// Why it ends.
        message: String,
    },
    /// The sender's ranks have all exited with status 0.
    Done,
    /// Send me your node's contributions to the fences `from..=to` that
    /// collected data (the PMI-2 fence of each has completed here, so the
    /// receiver has made them).
    NodeData {
        /// The id the answer carries.
        request: u64,
        /// The first fence (its sequence number, from 1).
        from: u64,
        /// The last.
        to: u64,
    },
    /// The answer: the contributions, concatenated in fence order (each
    /// one `Server` fence blob, possibly empty).
    NodeDataReply {
        /// The id of the request answered.
        request: u64,
        /// The blobs.
        blob: Bytes,
    },
}

/// A frame that does not parse, and why.
#[derive(Clone, Debug, thiserror::Error, PartialEq)]
#[error("bridge: {0}")]
pub struct Error(pub String);

fn s(v: &str) -> Value {
    Value::String(Some(PString::from(v)))
}

impl Msg {
    /// The frame of this message.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = DataBuffer::new(Format::V41);
        let mut put = |ty: DataType, v: Value| {
            b.pack(ty, &[v]).expect("our own values pack");
        };
        match self {
            Msg::Hello { token, node } => {
                put(DataType::Uint8, Value::Uint8(1));
                put(DataType::String, s(token));
                put(DataType::Uint32, Value::Uint32(*node));
            }
            Msg::Dmodex {
                request,
                nspace,
                rank,
            } => {
                put(DataType::Uint8, Value::Uint8(2));
                put(DataType::Uint64, Value::Uint64(*request));
                put(DataType::String, s(nspace));
                put(DataType::Uint32, Value::Uint32(*rank));
            }
            Msg::DmodexReply {
                request,
                status,
                blob,
            } => {
                put(DataType::Uint8, Value::Uint8(3));
                put(DataType::Uint64, Value::Uint64(*request));
                put(DataType::Int32, Value::Int32(*status));
                put(DataType::ByteObject, Value::ByteObject(blob.clone().into()));
            }
            Msg::Notify {
                code,
                source,
                range,
                info,
            } => {
                put(DataType::Uint8, Value::Uint8(4));
                put(DataType::Int32, Value::Int32(*code));
                put(DataType::Proc, Value::Proc(Box::new(source.clone())));
                put(DataType::Uint8, Value::Uint8(*range));
                put(DataType::Uint32, Value::Uint32(info.len() as u32));
                for i in info {
                    put(DataType::Info, Value::Info(Box::new(i.clone())));
                }
            }
            Msg::End { status, message } => {
                put(DataType::Uint8, Value::Uint8(5));
                put(DataType::Int32, Value::Int32(*status));
                put(DataType::String, s(message));
            }
            Msg::Done => put(DataType::Uint8, Value::Uint8(6)),
            Msg::NodeData { request, from, to } => {
                put(DataType::Uint8, Value::Uint8(7));
                put(DataType::Uint64, Value::Uint64(*request));
                put(DataType::Uint64, Value::Uint64(*from));
                put(DataType::Uint64, Value::Uint64(*to));
            }
            Msg::NodeDataReply { request, blob } => {
                put(DataType::Uint8, Value::Uint8(8));
                put(DataType::Uint64, Value::Uint64(*request));
                put(DataType::ByteObject, Value::ByteObject(blob.clone().into()));
            }
        }
        let body = b.as_bytes();
        let mut out = (body.len() as u32).to_be_bytes().to_vec();
        out.extend_from_slice(body);
        out
    }

    /// A frame's body (without its length) as a message.
    pub fn decode(body: &[u8]) -> Result<Msg, Error> {
        let mut b = DataBuffer::from_bytes(Format::V41, Bytes::copy_from_slice(body));
        let mut get = |ty: DataType| b.unpack_one(ty).map_err(|e| Error(format!("{ty:?}: {e}")));
        let text = |v: Value| match v {
            Value::String(Some(p)) => Ok(p.to_string()),
            other => Err(Error(format!("a string expected, not {other:?}"))),
        };
        let kind = match get(DataType::Uint8)? {
            Value::Uint8(k) => k,
            _ => unreachable!("unpack_one(UINT8) gives UINT8"),
        };
        macro_rules! field {
            ($ty:ident) => {
                match get(DataType::$ty)? {
                    Value::$ty(v) => v,
                    other => return Err(Error(format!("{other:?}"))),
                }
            };
        }
        let m = match kind {
            1 => Msg::Hello {
                token: text(get(DataType::String)?)?,
                node: field!(Uint32),
            },
            2 => Msg::Dmodex {
                request: field!(Uint64),
                nspace: text(get(DataType::String)?)?,
                rank: field!(Uint32),
            },
            3 => Msg::DmodexReply {
                request: field!(Uint64),
                status: field!(Int32),
                blob: match get(DataType::ByteObject)? {
                    Value::ByteObject(b) => b.0,
                    other => return Err(Error(format!("{other:?}"))),
                },
            },
            4 => {
                let code = field!(Int32);
                let source = field!(Proc);
                let range = field!(Uint8);
                let n = field!(Uint32);
                // no allocation from the count: each INFO is read (and
                // fails at the end of the bytes) before it is kept
                let mut info = Vec::new();
                for _ in 0..n {
                    info.push(*field!(Info));
                }
                Msg::Notify {
                    code,
                    source: *source,
                    range,
                    info,
                }
            }
            5 => Msg::End {
                status: field!(Int32),
                message: text(get(DataType::String)?)?,
            },
            6 => Msg::Done,
            7 => Msg::NodeData {
                request: field!(Uint64),
                from: field!(Uint64),
                to: field!(Uint64),
            },
            8 => Msg::NodeDataReply {
                request: field!(Uint64),
                blob: match get(DataType::ByteObject)? {
                    Value::ByteObject(b) => b.0,
                    other => return Err(Error(format!("{other:?}"))),
                },
            },
            k => return Err(Error(format!("unknown kind {k}"))),
        };
        if !b.unread().is_empty() {
            return Err(Error(format!(
                "{} bytes after the message",
                b.unread().len()
            )));
        }
        Ok(m)
    }
}

/// Frames out of a byte stream.
#[derive(Default)]
pub struct Framer {
    buf: Vec<u8>,
}

impl Framer {
    /// Append bytes read from the connection.
    pub fn push(&mut self, data: &[u8]) {
        self.buf.extend_from_slice(data);
    }

    /// Bytes held for messages not yet complete.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// The next whole message; an oversize or unparsable frame is an error
    /// (the connection is then useless).
    pub fn next_msg(&mut self) -> Option<Result<Msg, Error>> {
        if self.buf.len() < 4 {
            return None;
        }
        let len = u32::from_be_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]) as usize;
        if len > MAX_FRAME {
            return Some(Err(Error(format!(
                "frame of {len} bytes, more than {MAX_FRAME}"
            ))));
        }
        if self.buf.len() < 4 + len {
            return None;
        }
        let m = Msg::decode(&self.buf[4..4 + len]);
        self.buf.drain(..4 + len);
        Some(m)
    }
}

/// How long a connection may take to say its Hello.
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

/// What an incoming bridge connection yields ([`Inbound::poll_event`]).
#[derive(Clone, Debug, PartialEq)]
pub enum InboundEvent {
    /// A message of node `node` (its Hello first, with the token blanked).
    Peer(u32, Msg),
    /// The connection is not (or no longer) one of ours: close it. The
    /// node, if it had said its Hello, is lost.
    Refused {
        /// The node that had said Hello, if any.
        node: Option<u32>,
        /// Why.
        why: Refusal,
    },
}

/// Why an incoming connection ends.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Refusal {
    /// The peer closed it (or it failed).
    #[error("connection closed")]
    Closed,
    /// More than [`MAX_HELLO`] bytes before a Hello.
    #[error("more than {MAX_HELLO} bytes before a Hello")]
    HelloTooLong,
    /// A Hello with another job's token.
    #[error("a Hello with another job's token")]
    WrongToken,
    /// Another message first.
    #[error("a message before the Hello")]
    BeforeHello,
    /// No Hello within [`HELLO_TIMEOUT`].
    #[error("no Hello within {HELLO_TIMEOUT:?}")]
    NoHello,
    /// A frame that does not decode.
    #[error(transparent)]
    Malformed(#[from] Error),
}

/// One incoming connection from another node's host, sans-IO, with the
/// verbs of every core of pmix-wire (`handle_input(bytes, now)`,
/// `poll_event`, `poll_timeout`, `handle_timeout(now)`): the first message
/// must be a Hello with the job's token, within [`HELLO_TIMEOUT`] and
/// [`MAX_HELLO`] bytes; every later message is its node's.
pub struct Inbound {
    token: String,
    framer: Framer,
    node: Option<u32>,
    hello_by: Option<Instant>,
    events: VecDeque<InboundEvent>,
    done: bool,
}

impl Inbound {
    /// A connection accepted at `now`, for a job whose token is `token`.
    pub fn new(token: &str, now: Instant) -> Inbound {
        Inbound {
            token: token.to_string(),
            framer: Framer::default(),
            node: None,
            hello_by: Some(now + HELLO_TIMEOUT),
            events: VecDeque::new(),
            done: false,
        }
    }

    /// The node this connection speaks for, once its Hello was checked.
    pub fn node(&self) -> Option<u32> {
        self.node
    }

    fn refuse(&mut self, why: Refusal) {
        self.done = true;
        self.hello_by = None;
        self.events.push_back(InboundEvent::Refused {
            node: self.node,
            why,
        });
    }

    /// Bytes read from the connection at `now`: a Hello deadline `now` has
    /// passed expires first ([`Inbound::handle_timeout`]), as in every core.
    pub fn handle_input(&mut self, data: &[u8], now: Instant) {
        self.handle_timeout(now);
        if self.done {
            return;
        }
        self.framer.push(data);
        // a stranger cannot make us hold a big frame
        if self.node.is_none() && self.framer.buffered() > MAX_HELLO {
            return self.refuse(Refusal::HelloTooLong);
        }
        while let Some(m) = self.framer.next_msg() {
            match (m, self.node) {
                (Ok(Msg::Hello { token, node }), None) if token == self.token => {
                    self.node = Some(node);
                    self.hello_by = None;
                    let hello = Msg::Hello {
                        token: String::new(),
                        node,
                    };
                    self.events.push_back(InboundEvent::Peer(node, hello));
                }
                (Ok(m), Some(j)) => self.events.push_back(InboundEvent::Peer(j, m)),
                (Ok(Msg::Hello { .. }), None) => return self.refuse(Refusal::WrongToken),
                (Ok(_), None) => return self.refuse(Refusal::BeforeHello),
                (Err(e), _) => return self.refuse(e.into()),
            }
        }
    }

    /// The connection ended (EOF or an error).
    pub fn closed(&mut self) {
        if !self.done {
            self.refuse(Refusal::Closed);
        }
    }

    /// The next thing the connection yields.
    pub fn poll_event(&mut self) -> Option<InboundEvent> {
        self.events.pop_front()
    }

    /// When [`Inbound::handle_timeout`] should next be called: the Hello's
    /// deadline while it has not come.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.hello_by
    }

    /// No Hello by its deadline: refused.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.hello_by.is_some_and(|at| at <= now) {
            self.refuse(Refusal::NoHello);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Vec<Msg> {
        vec![
            Msg::Hello {
                token: "t0k".into(),
                node: 1,
            },
            Msg::Dmodex {
                request: 9,
                nspace: "ns".into(),
                rank: 3,
            },
            Msg::DmodexReply {
                request: 9,
                status: 0,
                blob: Bytes::from_static(b"\x01\x02"),
            },
            Msg::Notify {
                code: -7,
                source: Proc::new("ns", 2),
                range: 3,
                info: vec![Info::new("k", Value::Uint32(5))],
            },
            Msg::End {
                status: 7,
                message: "rank 0 aborted".into(),
            },
            Msg::Done,
            Msg::NodeData {
                request: 4,
                from: 1,
                to: 2,
            },
            Msg::NodeDataReply {
                request: 4,
                blob: Bytes::from_static(b"\x03"),
            },
        ]
    }

    #[test]
    fn messages_round_trip_through_a_byte_stream() {
        let mut f = Framer::default();
        let bytes: Vec<u8> = all().iter().flat_map(|m| m.encode()).collect();
        for b in bytes.chunks(3) {
            f.push(b);
        }
        let mut got = Vec::new();
        while let Some(m) = f.next_msg() {
            got.push(m.unwrap());
        }
        assert_eq!(got, all());
    }

    proptest::proptest! {
        /// Any byte stream: messages, errors or a wait for more, never a panic.
        #[test]
        fn any_stream_is_messages_or_errors(data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400)) {
            let mut f = Framer::default();
            f.push(&data);
            for _ in 0..64 {
                match f.next_msg() {
                    None | Some(Err(_)) => break,
                    Some(Ok(_)) => {}
                }
            }
            let _ = Msg::decode(&data);
        }
    }

    #[test]
    fn frames_carry_a_big_endian_length_on_every_host() {
        // the bridge's own framing, network order on any host
        for m in all() {
            let e = m.encode();
            assert_eq!(e[..4], ((e.len() - 4) as u32).to_be_bytes(), "{m:?}");
        }
        assert_eq!(Msg::Done.encode()[..4], [0, 0, 0, 2]);
    }

    #[test]
    fn hostile_frames_are_errors() {
        let mut f = Framer::default();
        f.push(&u32::MAX.to_be_bytes());
        assert!(f.next_msg().unwrap().is_err());
        // every truncation of every message: an error, never a panic
        for m in all() {
            let e = m.encode();
            for cut in 0..e.len() - 4 {
                let r = Msg::decode(&e[4..4 + cut]);
                assert!(r.is_err(), "{m:?} cut at {cut}: {r:?}");
            }
        }
        assert!(Msg::decode(&[0x09]).is_err());
        // a Notify announcing 2^32-1 infos with none present
        let mut e = Msg::Notify {
            code: 1,
            source: Proc::new("n", 0),
            range: 3,
            info: vec![],
        }
        .encode();
        let n = e.len();
        e[n - 1] = 0xff;
        assert!(Msg::decode(&e[4..]).is_err());
    }

    fn hello(token: &str, node: u32) -> Vec<u8> {
        Msg::Hello {
            token: token.into(),
            node,
        }
        .encode()
    }

    /// A connection that says its Hello with the job's token is its
    /// node's; what follows is that node's; the deadline is gone.
    #[test]
    fn an_inbound_connection_is_its_nodes_after_a_good_hello() {
        let t0 = Instant::now();
        let mut c = Inbound::new("t0k", t0);
        assert_eq!(c.poll_timeout(), Some(t0 + HELLO_TIMEOUT));
        let mut bytes = hello("t0k", 2);
        bytes.extend(Msg::Done.encode());
        // split anywhere: the framer waits for whole frames
        let (a, b) = bytes.split_at(3);
        c.handle_input(a, t0);
        assert_eq!(c.poll_event(), None);
        c.handle_input(b, t0);
        assert_eq!(
            c.poll_event(),
            Some(InboundEvent::Peer(
                2,
                Msg::Hello {
                    token: String::new(),
                    node: 2
                }
            ))
        );
        assert_eq!(c.poll_event(), Some(InboundEvent::Peer(2, Msg::Done)));
        assert_eq!((c.node(), c.poll_timeout()), (Some(2), None));
        c.closed();
        assert_eq!(
            c.poll_event(),
            Some(InboundEvent::Refused {
                node: Some(2),
                why: Refusal::Closed
            })
        );
    }

    /// Strangers are refused, each with its reason: silence past the
    /// deadline, another job's token, a message before the Hello, a huge
    /// first frame.
    #[test]
    fn strangers_are_refused_with_the_reason() {
        let t0 = Instant::now();
        let refused = |why| Some(InboundEvent::Refused { node: None, why });
        let mut c = Inbound::new("t0k", t0);
        c.handle_timeout(t0 + HELLO_TIMEOUT - Duration::from_millis(1));
        assert_eq!(c.poll_event(), None);
        c.handle_timeout(t0 + HELLO_TIMEOUT);
        assert_eq!(c.poll_event(), refused(Refusal::NoHello));
        assert_eq!(c.poll_timeout(), None);
        // a Hello that comes after the deadline is refused as none
        let mut c = Inbound::new("t0k", t0);
        c.handle_input(&hello("t0k", 1), t0 + HELLO_TIMEOUT);
        assert_eq!(c.poll_event(), refused(Refusal::NoHello));
        assert_eq!(c.poll_event(), None);
        let mut c = Inbound::new("t0k", t0);
        c.handle_input(&hello("other", 1), t0);
        assert_eq!(c.poll_event(), refused(Refusal::WrongToken));
        let mut c = Inbound::new("t0k", t0);
        c.handle_input(&Msg::Done.encode(), t0);
        assert_eq!(c.poll_event(), refused(Refusal::BeforeHello));
        let mut c = Inbound::new("t0k", t0);
        let mut big = ((MAX_HELLO as u32) * 2).to_be_bytes().to_vec();
        big.resize(MAX_HELLO + 5, 0);
        c.handle_input(&big, t0);
        assert_eq!(c.poll_event(), refused(Refusal::HelloTooLong));
        // refused is final: later bytes yield nothing
        c.handle_input(&hello("t0k", 1), t0);
        assert_eq!(c.poll_event(), None);
    }
}
