//! One end of a PMIx connection, sans-IO: the state a client or tool
//! ([`Initiator`]) and a server ([`Acceptor`]) each keep per connection,
//! in one type both cores use.
//!
//! A [`Link`] holds
//! - the frame reassembly, with the byte cap checked before buffering (the
//!   first header of a connection is host order, every later one network
//!   order; frame.rs),
//! - the handshake as a small state machine: the initiator offers a wire
//!   format in its connect request and then reads the server's raw reply
//!   (no header; its length depends on the peer type, protocol.md §4.3);
//!   the acceptor reads the connect request as the first frame and, once
//!   the server accepted it, [`Link::establish`]es the format it offered,
//! - the negotiated format (dialect and buffer type) and the `pindex` put
//!   in the headers of what this end sends,
//! - the connection's event registrations ([`Registrations`]).
//!
//! What each role does with a handshake (a server's checks and refusals,
//! a client's identity) stays in its core; the messages are pmix-codec's
//! [`ConnectRequest`], [`ClientReply`] and [`ToolReply`].

#![forbid(unsafe_code)]

use bytes::Bytes;
use pmix_codec::frame::{self, FrameDecoder, FrameError, HeaderOrder, Message};
use pmix_codec::handshake::{self, peer_type, ClientReply, ConnectRequest, ToolReply};
use pmix_codec::Format;
use pmix_types::status::StatusCode;
use pmix_types::{Info, Proc};

/// Why a connection cannot go on.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LinkError {
    /// A header over the byte cap: the stream cannot be resynchronised.
    #[error("framing: {0}")]
    Frame(#[from] FrameError),
    /// The connect request does not encode (initiator) or decode
    /// (acceptor), or the handshake reply does not decode (initiator).
    #[error("handshake does not parse: {0}")]
    Handshake(pmix_codec::Error),
    /// The server refused the handshake with this status (a lone status,
    /// then it closes the socket).
    #[error("handshake refused: {}", StatusCode(*.0))]
    Refused(i32),
    /// The server's security check of a tool failed with this status.
    #[error("tool handshake (security): {}", StatusCode(*.0))]
    Security(i32),
}

/// What the server's handshake reply said to an initiator.
#[derive(Clone, Debug, PartialEq)]
pub struct Accepted {
    /// Our index at the server (the `pindex` of later headers; tools: 0).
    pub index: u32,
    /// Tools and launchers: the whole tool reply (assigned identity, the
    /// server's identity).
    pub tool: Option<ToolReply>,
}

/// What [`Link::poll_incoming`] yields: the handshake's message once, then frames.
#[derive(Clone, Debug, PartialEq)]
pub enum Incoming<H> {
    /// The other end's handshake message: the connect request (acceptor)
    /// or the server's reply (initiator).
    Hello(H),
    /// A framed message after the handshake.
    Message(Message),
}

/// The end of a connection: which handshake message it reads and how the
/// bytes before the first frame are taken.
pub trait Side {
    /// The handshake message this end receives.
    type Hello;
    /// Take from `data` what belongs to the handshake (not framed); the
    /// rest is framed.
    fn divert<'a>(&mut self, data: &'a [u8]) -> &'a [u8];
}

/// The end that connects (a client, tool or launcher).
#[derive(Clone, Debug)]
pub struct Initiator {
    flag: u8,
    /// The raw reply so far (a lone status when refused).
    reply: Vec<u8>,
    done: bool,
}

/// The end that accepts (a server).
#[derive(Clone, Debug, Default)]
pub struct Acceptor {
    /// The connect request has been taken out.
    heard: bool,
}

impl Side for Initiator {
    type Hello = Accepted;
    fn divert<'a>(&mut self, data: &'a [u8]) -> &'a [u8] {
        if self.done {
            return data;
        }
        let want = handshake::reply_len(self.flag);
        let n = want.saturating_sub(self.reply.len()).min(data.len());
        self.reply.extend_from_slice(&data[..n]);
        &data[n..]
    }
}

impl Side for Acceptor {
    type Hello = ConnectRequest;
    fn divert<'a>(&mut self, data: &'a [u8]) -> &'a [u8] {
        data
    }
}

/// The state of one connection, for either end.
pub struct Link<S: Side> {
    dec: FrameDecoder,
    side: S,
    format: Option<Format>,
    pindex: i32,
    /// The event codes registered on this connection.
    pub events: Registrations,
}

impl<S: Side> Link<S> {
    /// Bytes received (in any split).
    pub fn push(&mut self, data: &[u8]) {
        let rest = self.side.divert(data);
        self.dec.push(rest);
    }

    /// The negotiated format: the initiator's from the start, the
    /// acceptor's once [`Link::establish`]ed.
    pub fn format(&self) -> Option<Format> {
        self.format
    }

    /// One message as this end sends it after the handshake: a network
    /// order header with our `pindex`, then the payload.
    pub fn frame(&self, tag: u32, payload: &[u8]) -> Result<Vec<u8>, FrameError> {
        frame::frame(self.pindex, tag, payload, HeaderOrder::Network)
    }

    fn next_frame(&mut self) -> Result<Option<Message>, LinkError> {
        Ok(self.dec.next_message()?)
    }
}

impl Link<Initiator> {
    /// The initiator's link and the framed connect request to send first
    /// (host order header, pindex -1, the wildcard tag). The format it
    /// offers is the connection's from now on.
    pub fn initiate(
        req: &ConnectRequest,
        max_message: usize,
    ) -> Result<(Self, Vec<u8>), LinkError> {
        let body = req.encode().map_err(LinkError::Handshake)?;
        let out = frame::frame(-1, frame::tag::WILDCARD, &body, HeaderOrder::Little)?;
        let link = Link {
            // the server's replies all have network order headers
            dec: FrameDecoder::new(HeaderOrder::Network, max_message),
            side: Initiator {
                flag: req.flag,
                reply: Vec::new(),
                done: false,
            },
            format: req.format(),
            pindex: -1,
            events: Registrations::default(),
        };
        Ok((link, out))
    }

    /// The handshake reply has come.
    pub fn connected(&self) -> bool {
        self.side.done
    }

    /// The next thing received: the server's handshake reply once, then
    /// its messages. A refusal is seen as soon as its status has come.
    pub fn poll_incoming(&mut self) -> Result<Option<Incoming<Accepted>>, LinkError> {
        if self.side.done {
            return Ok(self.next_frame()?.map(Incoming::Message));
        }
        let r = &self.side.reply;
        // a failed handshake is a lone status, then the socket closes
        if let Some(st) = r.get(..4) {
            let st = i32::from_be_bytes([st[0], st[1], st[2], st[3]]);
            if st != 0 {
                return Err(LinkError::Refused(st));
            }
        }
        if r.len() < handshake::reply_len(self.side.flag) {
            return Ok(None);
        }
        let accepted = if self.side.flag == peer_type::SIMPLE_CLIENT {
            let c = ClientReply::decode(r).map_err(LinkError::Handshake)?;
            Accepted {
                index: c.index,
                tool: None,
            }
        } else {
            let t = ToolReply::decode(self.side.flag, r).map_err(LinkError::Handshake)?;
            if t.security_status != 0 {
                return Err(LinkError::Security(t.security_status));
            }
            // tools keep pindex 0
            Accepted {
                index: 0,
                tool: Some(t),
            }
        };
        self.side.done = true;
        self.side.reply = Vec::new();
        self.pindex = accepted.index as i32;
        Ok(Some(Incoming::Hello(accepted)))
    }
}

impl Link<Acceptor> {
    /// The acceptor's link: it reads the connect request (host order
    /// header) first; no message over `max_message` bytes is buffered.
    pub fn accept(max_message: usize) -> Self {
        Link {
            dec: FrameDecoder::new(HeaderOrder::Little, max_message),
            side: Acceptor::default(),
            format: None,
            pindex: SERVER_PINDEX,
            events: Registrations::default(),
        }
    }

    /// The next thing received: the peer's connect request once, then its
    /// messages (only after [`Link::establish`]; until then nothing more).
    pub fn poll_incoming(&mut self) -> Result<Option<Incoming<ConnectRequest>>, LinkError> {
        if !self.side.heard {
            let Some(m) = self.next_frame()? else {
                return Ok(None);
            };
            let req = ConnectRequest::decode(&m.payload).map_err(LinkError::Handshake)?;
            self.side.heard = true;
            return Ok(Some(Incoming::Hello(req)));
        }
        if self.format.is_none() {
            return Ok(None);
        }
        Ok(self.next_frame()?.map(Incoming::Message))
    }

    /// The server accepted the handshake: everything after it is in
    /// `format` (the one the connect request offered).
    pub fn establish(&mut self, format: Format) {
        self.format = Some(format);
    }

    /// The handshake is complete.
    pub fn established(&self) -> bool {
        self.format.is_some()
    }
}

/// The event codes one connection registered for (PMIx_Register_event_handler):
/// the server forwards, and the client delivers locally, an event whose
/// code is among them; a registration of no code means every code, and
/// stays so whatever is registered after it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Registrations {
    any: bool,
    all: bool,
    codes: Vec<i32>,
}

impl Registrations {
    /// Register for `codes` (empty: every code), beside what was registered.
    pub fn register(&mut self, codes: &[i32]) {
        self.any = true;
        if codes.is_empty() {
            self.all = true;
        } else {
            self.codes.extend_from_slice(codes);
        }
    }

    /// Something was registered.
    pub fn any(&self) -> bool {
        self.any
    }

    /// An event of `code` is wanted here.
    pub fn hears(&self, code: i32) -> bool {
        self.all || self.codes.contains(&code)
    }
}

/// A message as a server sends it after the handshake (what an
/// acceptor's [`Link::frame`] gives): a network order header with pindex
/// 0. For a reply framed once and shared by many connections.
pub fn server_frame(tag: u32, payload: &[u8]) -> Result<Vec<u8>, FrameError> {
    frame::frame(SERVER_PINDEX, tag, payload, HeaderOrder::Network)
}

/// The `pindex` of a server's headers.
const SERVER_PINDEX: i32 = 0;

/// The version string a client announces for each dialect (a server
/// parses its major.minor.release to decide what the peer understands).
pub fn version_for(f: &Format) -> &'static str {
    use pmix_codec::Dialect::*;
    match f.dialect {
        V12 => "1.2.5",
        V20 => "2.0.3",
        V21 => "2.2.5",
        V3 => "3.2.5",
        V4 => "4.0.0",
        V41 => "4.2.2",
        V51 => "6.0.0",
        V61 => "6.1.0",
        V7 => "7.0.0a1",
    }
}

/// The `native` security module's credential: euid then egid. libpmix
/// copies each `uid_t`/`gid_t` in its host order; we always write the
/// little-endian (x86-64) form, on any host, as we do the handshake
/// header (a peer that reads either does so in x86 order:
/// spec-notes/heterogeneous.md).
pub fn native_credential(euid: u32, egid: u32) -> Bytes {
    let mut cred = euid.to_le_bytes().to_vec();
    cred.extend_from_slice(&egid.to_le_bytes());
    Bytes::from(cred)
}

/// The uid a connect request's `native` credential claims (its first u32,
/// little-endian as an x86-64 libpmix writes it, on any host of ours);
/// `None` for another security module.
pub fn native_uid(req: &ConnectRequest) -> Option<u32> {
    if req.psec.as_bytes() != b"native" {
        return None;
    }
    let b: [u8; 4] = req.credential.get(..4)?.try_into().ok()?;
    Some(u32::from_le_bytes(b))
}

/// The connect request a client or tool sends: peer type `flag`, the
/// `native` credential of `euid`/`egid`, and the offered `format` (its
/// bfrops module, buffer type and the version we announce for it). Tools
/// and launchers (flags other than SIMPLE_CLIENT) carry uid and gid and an
/// info blob.
pub fn offer(
    flag: u8,
    format: &Format,
    (euid, egid): (u32, u32),
    proc: Option<Proc>,
    info: Option<Vec<Info>>,
) -> ConnectRequest {
    let tool = flag != peer_type::SIMPLE_CLIENT;
    ConnectRequest {
        psec: "native".into(),
        credential: native_credential(euid, egid),
        flag,
        uid_gid: tool.then_some((euid, egid)),
        proc,
        version: version_for(format).into(),
        bfrops: Some(format.dialect.module_name().into()),
        buffer_type: Some(format.buffer_type.code()),
        gds: Some("hash".into()),
        info,
        trailing: Bytes::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pmix_codec::frame::DEFAULT_MAX_MESSAGE;

    fn client_offer() -> ConnectRequest {
        offer(
            peer_type::SIMPLE_CLIENT,
            &Format::V41,
            (1000, 100),
            Some(Proc::new("job", 3)),
            None,
        )
    }

    /// Both ends of one connection, fed in every split of the streams.
    #[test]
    fn both_ends_agree_in_any_split() {
        let (_, hello) = Link::initiate(&client_offer(), DEFAULT_MAX_MESSAGE).unwrap();
        let mut reply = ClientReply {
            status: 0,
            index: 7,
        }
        .encode()
        .to_vec();
        let server = Link::accept(DEFAULT_MAX_MESSAGE);
        reply.extend(server.frame(101, b"job info").unwrap());
        for cut in 0..=reply.len() {
            let (mut c, _) = Link::initiate(&client_offer(), DEFAULT_MAX_MESSAGE).unwrap();
            let mut got = Vec::new();
            for part in [&reply[..cut], &reply[cut..]] {
                c.push(part);
                while let Some(i) = c.poll_incoming().unwrap() {
                    got.push(i);
                }
            }
            assert_eq!(got.len(), 2, "cut at {cut}");
            assert!(matches!(
                &got[0],
                Incoming::Hello(Accepted {
                    index: 7,
                    tool: None
                })
            ));
            assert!(
                matches!(&got[1], Incoming::Message(m) if m.header.tag == 101 && &m.payload[..] == b"job info")
            );
            // after the handshake, our headers carry the index we were given
            assert_eq!(
                c.frame(102, b"").unwrap().get(..4),
                Some(&7i32.to_be_bytes()[..])
            );
        }
        for cut in 0..=hello.len() {
            let mut s = Link::accept(DEFAULT_MAX_MESSAGE);
            s.push(&hello[..cut]);
            let first = s.poll_incoming().unwrap();
            s.push(&hello[cut..]);
            let req = match first.or_else(|| s.poll_incoming().unwrap()) {
                Some(Incoming::Hello(r)) => r,
                other => panic!("cut at {cut}: {other:?}"),
            };
            assert_eq!(req, client_offer());
            assert_eq!(req.format(), Some(Format::V41));
            assert_eq!(native_uid(&req), Some(1000));
        }
    }

    #[test]
    fn the_acceptor_reads_nothing_more_until_it_establishes() {
        let (_, mut bytes) = Link::initiate(&client_offer(), DEFAULT_MAX_MESSAGE).unwrap();
        let (mut c, _) = Link::initiate(&client_offer(), DEFAULT_MAX_MESSAGE).unwrap();
        c.push(
            &ClientReply {
                status: 0,
                index: 1,
            }
            .encode(),
        );
        assert!(matches!(c.poll_incoming(), Ok(Some(Incoming::Hello(_)))));
        bytes.extend(c.frame(101, b"req").unwrap());
        let mut s = Link::accept(DEFAULT_MAX_MESSAGE);
        s.push(&bytes);
        assert!(matches!(s.poll_incoming(), Ok(Some(Incoming::Hello(_)))));
        assert!(!s.established());
        assert_eq!(s.poll_incoming(), Ok(None));
        s.establish(Format::V41);
        assert!(matches!(
            s.poll_incoming(),
            Ok(Some(Incoming::Message(m))) if m.header.pindex == 1 && &m.payload[..] == b"req"
        ));
    }

    #[test]
    fn a_lone_refusal_status_is_seen_at_once() {
        let (mut c, _) = Link::initiate(&client_offer(), DEFAULT_MAX_MESSAGE).unwrap();
        c.push(&(-46i32).to_be_bytes()[..3]);
        assert_eq!(c.poll_incoming(), Ok(None));
        c.push(&(-46i32).to_be_bytes()[3..]);
        assert_eq!(c.poll_incoming(), Err(LinkError::Refused(-46)));
        assert!(!c.connected());
    }

    #[test]
    fn a_tool_reads_the_whole_tool_reply_and_keeps_pindex_0() {
        let req = offer(
            peer_type::TOOL_NEEDS_ID,
            &Format::V41,
            (5, 6),
            None,
            Some(vec![]),
        );
        assert_eq!(req.uid_gid, Some((5, 6)));
        let (mut c, _) = Link::initiate(&req, DEFAULT_MAX_MESSAGE).unwrap();
        let reply = ToolReply {
            status: 0,
            assigned: Some(Proc::new("tool-1", 0)),
            server: Proc::new("srv", 0),
            security_status: 0,
        }
        .encode();
        assert_eq!(reply.len(), handshake::reply_len(peer_type::TOOL_NEEDS_ID));
        c.push(&reply);
        match c.poll_incoming() {
            Ok(Some(Incoming::Hello(Accepted {
                index: 0,
                tool: Some(t),
            }))) => {
                assert_eq!(t.assigned, Some(Proc::new("tool-1", 0)));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(c.frame(101, b"").unwrap()[..4], [0, 0, 0, 0]);
    }

    #[test]
    fn the_native_credential_is_little_endian_on_every_host() {
        // uid 1000, gid 100 as an x86-64 libpmix 4.2.2 client sends them
        // (protocol.md §4.4: raw uid_t then gid_t, host order)
        assert_eq!(
            native_credential(1000, 100)[..],
            [0xe8, 3, 0, 0, 100, 0, 0, 0]
        );
        let mut req = client_offer();
        assert_eq!(req.credential, native_credential(1000, 100));
        // the x86 bytes mean uid 1000 to a server of ours on any host; a
        // big-endian libpmix's own uid 1000 (00 00 03 e8) would not
        req.credential = Bytes::from_static(&[0, 0, 3, 0xe8, 0, 0, 0, 100]);
        assert_eq!(native_uid(&req), Some(0xe803_0000));
    }

    #[test]
    fn a_big_endian_libpmix_handshake_header_is_refused_not_misread() {
        // libpmix copies the first header in its host order: a big-endian
        // libpmix 4.2.2 client announces its 51-byte connect request as
        // 00 00 00 33, which in the x86 order every x86 libpmix server
        // (and ours, on any host) reads is 855 MB: refused before any
        // buffering, as libpmix's own server refuses it (> 131072)
        let mut hdr = [0xffu8; 16];
        hdr[8..12].copy_from_slice(&51u32.to_be_bytes());
        hdr[12..].fill(0);
        let mut s = Link::accept(DEFAULT_MAX_MESSAGE);
        s.push(&hdr);
        match s.poll_incoming() {
            Err(LinkError::Frame(FrameError::TooLarge { nbytes, .. })) => {
                assert_eq!(nbytes, 0x3300_0000)
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_frame_over_the_cap_is_refused_before_it_is_buffered() {
        let mut s = Link::accept(64);
        s.push(
            &frame::frame(-1, frame::tag::WILDCARD, &[0u8; 65], HeaderOrder::Little).unwrap()[..16],
        );
        assert!(matches!(s.poll_incoming(), Err(LinkError::Frame(_))));
    }

    #[test]
    fn a_registration_of_every_code_stays_so() {
        let mut r = Registrations::default();
        assert!(!r.any() && !r.hears(5));
        r.register(&[5]);
        assert!(r.hears(5) && !r.hears(6));
        r.register(&[]);
        r.register(&[7]);
        assert!(r.any() && r.hears(6) && r.hears(-1));
    }
}
