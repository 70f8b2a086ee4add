//! PMIx conversations out of packet captures (`pmixw inspect --pcap`),
//! sans-IO: the bytes of a libpcap or pcapng file become the TCP
//! connections it holds, each direction reassembled (out-of-order and
//! retransmitted segments, IPv4 and IPv6, Ethernet, Linux cooked v1/v2,
//! BSD loopback and raw IP link types), and the connections whose first
//! bytes are a PMIx connect request become inspected conversations.
//!
//! Nothing in a capture can make this panic: a record cut short (a capture
//! stopped mid-write), a packet captured shorter than it was sent (snaplen),
//! a segment that never arrived are reported as notes that say where, and
//! the stream stops at the first hole (PMIx framing cannot resynchronise).

#![forbid(unsafe_code)]

use crate::inspect::{inspect, Conversation};
use etherparse::{EtherType, NetSlice, SlicedPacket, TransportSlice};
use pcap_file::pcap::PcapParser;
use pcap_file::pcapng::{Block, PcapNgParser};
use pcap_file::{DataLink, PcapError};
use pmix_codec::frame::{FrameDecoder, HeaderOrder};
use pmix_codec::handshake::ConnectRequest;
use serde::Serialize;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};

/// One captured packet: its link type, the bytes captured and the length
/// it had on the wire.
struct Packet<'a> {
    link: DataLink,
    data: &'a [u8],
    orig_len: u32,
}

/// The packets of a libpcap or pcapng file, and notes on what could not be
/// read (a truncated file ends the list with a note, never an error).
fn packets<'a>(file: &'a [u8], notes: &mut Vec<String>) -> Result<Vec<Packet<'a>>, String> {
    let magic = file
        .get(..4)
        .ok_or_else(|| format!("{} bytes are not a capture file", file.len()))?;
    let mut out = Vec::new();
    // why reading stopped at `rest`: a cut (the capture was stopped
    // mid-write) or a malformed record
    let stopped = |rest: &[u8], what: &str, e: PcapError| match e {
        PcapError::IncompleteBuffer => format!(
            "capture truncated: {} bytes at file offset {} are not a whole {what}",
            rest.len(),
            file.len() - rest.len()
        ),
        e => format!(
            "{what} at file offset {}: {e}; the rest of the file is not read",
            file.len() - rest.len()
        ),
    };
    if magic == [0x0a, 0x0d, 0x0d, 0x0a] {
        let (mut rest, mut parser) =
            PcapNgParser::new(file).map_err(|e| format!("not a pcapng file: {e}"))?;
        while !rest.is_empty() {
            match parser.next_block(rest) {
                Ok((r, block)) => {
                    let (iface, data, orig_len) = match block {
                        Block::EnhancedPacket(b) => (b.interface_id, b.data, b.original_len),
                        Block::SimplePacket(b) => (0, b.data, b.original_len),
                        Block::Packet(b) => (u32::from(b.interface_id), b.data, b.original_len),
                        _ => {
                            rest = r;
                            continue;
                        }
                    };
                    let Some(link) = parser.interfaces().get(iface as usize).map(|i| i.linktype)
                    else {
                        notes.push(format!(
                            "packet {}: interface {iface} was never described; skipped",
                            out.len() + 1
                        ));
                        rest = r;
                        continue;
                    };
                    // blocks borrow the file unless the parser had to copy
                    let data = match data {
                        std::borrow::Cow::Borrowed(d) => d,
                        std::borrow::Cow::Owned(_) => {
                            notes.push(format!("packet {}: unreadable block", out.len() + 1));
                            rest = r;
                            continue;
                        }
                    };
                    out.push(Packet {
                        link,
                        data,
                        orig_len,
                    });
                    rest = r;
                }
                Err(e) => {
                    notes.push(stopped(rest, "pcapng block", e));
                    break;
                }
            }
        }
    } else {
        let (mut rest, parser) = match PcapParser::new(file) {
            Ok(x) => x,
            Err(PcapError::IncompleteBuffer) => {
                return Err("capture truncated inside the file header".into())
            }
            Err(e) => return Err(format!("not a libpcap or pcapng file: {e}")),
        };
        let link = parser.header().datalink;
        while !rest.is_empty() {
            match parser.next_packet(rest) {
                Ok((r, p)) => {
                    let data = match p.data {
                        std::borrow::Cow::Borrowed(d) => d,
                        std::borrow::Cow::Owned(_) => break,
                    };
                    out.push(Packet {
                        link,
                        data,
                        orig_len: p.orig_len,
                    });
                    rest = r;
                }
                Err(e) => {
                    notes.push(stopped(rest, "packet record", e));
                    break;
                }
            }
        }
    }
    Ok(out)
}

/// A TCP segment out of one packet.
struct Segment<'a> {
    src: SocketAddr,
    dst: SocketAddr,
    seq: u32,
    syn: bool,
    ack: bool,
    payload: &'a [u8],
}

/// The TCP segment a packet carries, `Ok(None)` for other traffic, `Err`
/// for a packet that cannot be read.
fn segment<'a>(p: &Packet<'a>) -> Result<Option<Segment<'a>>, String> {
    let d = p.data;
    let sliced = match p.link {
        DataLink::ETHERNET => SlicedPacket::from_ethernet(d),
        // Linux cooked headers, read here: etherparse refuses the
        // loopback device's ARPHRD (772) that `tcpdump -i any` records
        DataLink::LINUX_SLL => cooked(d.get(14..16), d.get(16..))?,
        DataLink::LINUX_SLL2 => cooked(d.get(..2), d.get(20..))?,
        // a 4-byte address family, then the IP packet
        DataLink::NULL | DataLink::LOOP => {
            SlicedPacket::from_ip(d.get(4..).ok_or("loopback header cut short")?)
        }
        DataLink::RAW | DataLink::IPV4 | DataLink::IPV6 => SlicedPacket::from_ip(d),
        other => return Err(format!("link type {other:?} is not supported")),
    }
    .map_err(|e| {
        if (d.len() as u64) < u64::from(p.orig_len) {
            format!(
                "captured {} of its {} bytes (snapshot length): {e}",
                d.len(),
                p.orig_len
            )
        } else {
            e.to_string()
        }
    })?;
    let (src, dst, fragmented): (IpAddr, IpAddr, bool) = match &sliced.net {
        Some(NetSlice::Ipv4(s)) => (
            s.header().source_addr().into(),
            s.header().destination_addr().into(),
            s.is_payload_fragmented(),
        ),
        Some(NetSlice::Ipv6(s)) => (
            s.header().source_addr().into(),
            s.header().destination_addr().into(),
            s.is_payload_fragmented(),
        ),
        _ => return Ok(None),
    };
    if fragmented {
        return Err("a fragmented IP packet (not reassembled)".into());
    }
    let Some(TransportSlice::Tcp(t)) = &sliced.transport else {
        return Ok(None);
    };
    Ok(Some(Segment {
        src: SocketAddr::new(src, t.source_port()),
        dst: SocketAddr::new(dst, t.destination_port()),
        seq: t.sequence_number(),
        syn: t.syn(),
        ack: t.ack(),
        payload: t.payload(),
    }))
}

/// A Linux cooked packet: its EtherType field and what follows the header.
fn cooked<'a>(
    proto: Option<&[u8]>,
    rest: Option<&'a [u8]>,
) -> Result<Result<SlicedPacket<'a>, etherparse::err::packet::SliceError>, String> {
    match (proto, rest) {
        (Some(p), Some(rest)) => Ok(SlicedPacket::from_ether_type(
            EtherType(u16::from_be_bytes([p[0], p[1]])),
            rest,
        )),
        _ => Err("Linux cooked header cut short".into()),
    }
}

/// One direction of a TCP connection, as captured.
#[derive(Default)]
struct Direction {
    /// Sequence number of the first data byte, when the SYN was seen.
    isn: Option<u32>,
    segments: Vec<(u32, Vec<u8>)>,
}

impl Direction {
    /// The bytes in order from the start, up to the first hole; notes on
    /// the hole and on bytes that contradict earlier copies.
    fn assemble(&self, what: &str, notes: &mut Vec<String>) -> Vec<u8> {
        let Some(first) = self.segments.first().map(|s| s.0) else {
            return Vec::new();
        };
        // without a SYN the stream starts at its lowest sequence number
        let base = self.isn.unwrap_or_else(|| {
            self.segments
                .iter()
                .map(|s| s.0.wrapping_sub(first) as i32)
                .min()
                .map_or(first, |d| first.wrapping_add(d as u32))
        });
        let mut segs: Vec<(u64, &[u8])> = self
            .segments
            .iter()
            .map(|(seq, d)| (u64::from(seq.wrapping_sub(base)), &d[..]))
            .collect();
        segs.sort_by_key(|s| (s.0, std::cmp::Reverse(s.1.len())));
        let mut out: Vec<u8> = Vec::new();
        let mut conflicts = 0usize;
        for (i, (off, d)) in segs.iter().enumerate() {
            let end = out.len() as u64;
            let seg_end = off + d.len() as u64;
            if *off > end {
                let after: u64 = segs[i..].iter().map(|s| s.1.len() as u64).sum();
                notes.push(format!(
                    "{what}: {} bytes missing at stream offset {end} (not captured); {after} bytes after the hole are not shown",
                    off - end
                ));
                break;
            }
            // the part already held must agree (a retransmission)
            let held = (end - off).min(d.len() as u64) as usize;
            if out[*off as usize..*off as usize + held] != d[..held] {
                conflicts += 1;
            }
            if seg_end > end {
                out.extend_from_slice(&d[held..]);
            }
        }
        if conflicts > 0 {
            notes.push(format!(
                "{what}: {conflicts} retransmitted segments differ from the first copy; the first copy is shown"
            ));
        }
        out
    }
}

/// One TCP connection: `a` is the side seen first (or that sent the SYN).
struct Tcp {
    a: SocketAddr,
    b: SocketAddr,
    a_to_b: Direction,
    b_to_a: Direction,
    has_data: bool,
}

/// One PMIx connection found in a capture.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PcapConnection {
    /// address:port of the side that sent the connect request.
    pub client: String,
    pub server: String,
    /// The dialect and buffer type the client announced.
    pub format: String,
    /// The decoded messages in order (as `inspect` shows them).
    pub messages: Vec<crate::inspect::Entry>,
    /// Holes and other capture problems in this connection.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The reassembled bytes each side sent.
    #[serde(skip)]
    pub client_bytes: Vec<u8>,
    #[serde(skip)]
    pub server_bytes: Vec<u8>,
}

impl PcapConnection {
    /// The conversation as `inspect` returns it.
    pub fn conversation(&self) -> Conversation {
        Conversation {
            format: self.format.clone(),
            release: None,
            entries: self.messages.clone(),
        }
    }
}

/// What a capture held.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PcapReport {
    pub packets: usize,
    /// TCP connections that are not PMIx (no connect request at their start).
    pub other_tcp: usize,
    pub connections: Vec<PcapConnection>,
    /// Problems with the file or with packets outside any connection.
    pub notes: Vec<String>,
}

/// The connect request at the start of `bytes`, if they begin with one.
fn handshake(bytes: &[u8]) -> Option<ConnectRequest> {
    let mut d = FrameDecoder::new(HeaderOrder::Little, pmix_codec::frame::DEFAULT_MAX_MESSAGE);
    d.push(bytes.get(..bytes.len().min(1 << 16))?);
    let m = d.next_message().ok()??;
    ConnectRequest::decode(&m.payload).ok()
}

/// Read a capture file's bytes: every PMIx connection in it, decoded.
pub fn read(file: &[u8], max_message: usize) -> Result<PcapReport, String> {
    let mut report = PcapReport::default();
    let pkts = packets(file, &mut report.notes)?;
    report.packets = pkts.len();
    let mut conns: Vec<Tcp> = Vec::new();
    // (src, dst) → connection index
    let mut index: HashMap<(SocketAddr, SocketAddr), usize> = HashMap::new();
    for (n, p) in pkts.iter().enumerate() {
        let s = match segment(p) {
            Ok(Some(s)) => s,
            Ok(None) => continue,
            Err(e) => {
                report.notes.push(format!("packet {}: {e}", n + 1));
                continue;
            }
        };
        let key = (s.src, s.dst);
        // a new SYN on a used 4-tuple starts a new connection
        let fresh = s.syn && !s.ack && index.get(&key).is_some_and(|&i| conns[i].has_data);
        let i = match index.get(&key) {
            Some(&i) if !fresh => i,
            _ => {
                conns.push(Tcp {
                    a: s.src,
                    b: s.dst,
                    a_to_b: Direction::default(),
                    b_to_a: Direction::default(),
                    has_data: false,
                });
                let i = conns.len() - 1;
                index.insert((s.src, s.dst), i);
                index.insert((s.dst, s.src), i);
                i
            }
        };
        let c = &mut conns[i];
        let dir = if c.a == s.src {
            &mut c.a_to_b
        } else {
            &mut c.b_to_a
        };
        if s.syn {
            dir.isn = Some(s.seq.wrapping_add(1));
        } else if !s.payload.is_empty() {
            dir.segments.push((s.seq, s.payload.to_vec()));
            c.has_data = true;
        }
    }
    for c in conns {
        let ab = format!("{} -> {}", c.a, c.b);
        let ba = format!("{} -> {}", c.b, c.a);
        let mut notes = Vec::new();
        let x = c.a_to_b.assemble(&ab, &mut notes);
        let y = c.b_to_a.assemble(&ba, &mut notes);
        let (client, server, cb, sb) = if handshake(&x).is_some() {
            (c.a, c.b, x, y)
        } else if handshake(&y).is_some() {
            (c.b, c.a, y, x)
        } else {
            if c.has_data {
                report.other_tcp += 1;
            }
            continue;
        };
        let conv = inspect(&cb, &sb, max_message);
        report.connections.push(PcapConnection {
            client: client.to_string(),
            server: server.to_string(),
            format: conv.format,
            messages: conv.entries,
            notes,
            client_bytes: cb,
            server_bytes: sb,
        });
    }
    Ok(report)
}

/// The report as text: each connection as `inspect` shows it.
pub fn render_text(r: &PcapReport) -> String {
    let mut s = format!(
        "{} packets, {} PMIx connections, {} other TCP connections\n",
        r.packets,
        r.connections.len(),
        r.other_tcp
    );
    for n in &r.notes {
        s.push_str(&format!("NOTE: {n}\n"));
    }
    for (i, c) in r.connections.iter().enumerate() {
        s.push_str(&format!(
            "\n=== connection {}: client {} server {}\n",
            i + 1,
            c.client,
            c.server
        ));
        for n in &c.notes {
            s.push_str(&format!("NOTE: {n}\n"));
        }
        s.push_str(&crate::inspect::render_text(&c.conversation()));
    }
    s
}
