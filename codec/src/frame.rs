//! Message framing (the ptl header), sans-IO.
//!
//! Every message on a PMIx connection is a 16-byte header followed by
//! `nbytes` of payload (protocol.md §2.1): `pindex` (i32), `tag` (u32),
//! `nbytes` (u32), 4 bytes of padding, all big-endian — except the very
//! first message of a connection (the handshake), whose header libpmix
//! copies in host byte order (little-endian on x86-64).
//!
//! [`FrameDecoder`] accepts the byte stream in any split and yields whole
//! messages; it enforces a maximum payload size before buffering.

use bytes::{Buf, Bytes, BytesMut};

/// The header's size in bytes: three 4-byte fields and 4 bytes of padding.
pub const HEADER_LEN: usize = 16;

/// Reserved tags (protocol.md §2.2).
pub mod tag {
    /// Server → client event notifications.
    pub const NOTIFY: u32 = 0;
    /// Client → server heartbeat (zero-byte).
    pub const HEARTBEAT: u32 = 1;
    /// I/O forwarding, either direction.
    pub const IOF: u32 = 2;
    /// master: IOF control.
    pub const IOF_CONTROL: u32 = 3;
    /// OpenPMIx 7.0: a committed key deleted (`msg::DataDelete`).
    pub const DATA_DELETE: u32 = 4;
    /// Dynamic tags are allocated above this; the first request uses 101.
    pub const DYNAMIC: u32 = 100;
    /// Used by the handshake and by wildcard receives.
    pub const WILDCARD: u32 = u32::MAX;
}

/// OpenPMIx's default maximum message size for our decoder (32 MiB).
pub const DEFAULT_MAX_MESSAGE: usize = 32 << 20;

/// Byte order of a header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeaderOrder {
    /// Every normal message.
    Network,
    /// The handshake header of libpmix 4.2.2 (host order, x86-64).
    Little,
}

/// `pmix_ptl_hdr_t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Header {
    /// The sender's peer index (`pindex`): the server's slot for the client, -1 before it has one.
    pub pindex: i32,
    /// The tag: pairs a reply with its request ([`tag`] lists the reserved ones).
    pub tag: u32,
    /// The payload length in bytes.
    pub nbytes: u32,
}

impl Header {
    /// The 16 header bytes in `order`, padding zeroed.
    pub fn encode(&self, order: HeaderOrder) -> [u8; HEADER_LEN] {
        let mut h = [0u8; HEADER_LEN];
        let (p, t, n) = match order {
            HeaderOrder::Network => (
                self.pindex.to_be_bytes(),
                self.tag.to_be_bytes(),
                self.nbytes.to_be_bytes(),
            ),
            HeaderOrder::Little => (
                self.pindex.to_le_bytes(),
                self.tag.to_le_bytes(),
                self.nbytes.to_le_bytes(),
            ),
        };
        h[0..4].copy_from_slice(&p);
        h[4..8].copy_from_slice(&t);
        h[8..12].copy_from_slice(&n);
        h
    }

    /// A header from its 16 bytes in `order` (the padding is ignored).
    pub fn decode(b: &[u8; HEADER_LEN], order: HeaderOrder) -> Header {
        let w = |i: usize| [b[i], b[i + 1], b[i + 2], b[i + 3]];
        match order {
            HeaderOrder::Network => Header {
                pindex: i32::from_be_bytes(w(0)),
                tag: u32::from_be_bytes(w(4)),
                nbytes: u32::from_be_bytes(w(8)),
            },
            HeaderOrder::Little => Header {
                pindex: i32::from_le_bytes(w(0)),
                tag: u32::from_le_bytes(w(4)),
                nbytes: u32::from_le_bytes(w(8)),
            },
        }
    }
}

/// One framed message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// The header as decoded.
    pub header: Header,
    /// The `nbytes` bytes after the header.
    pub payload: Bytes,
}

/// Frame a message: header then payload.
pub fn frame(
    pindex: i32,
    tag: u32,
    payload: &[u8],
    order: HeaderOrder,
) -> Result<Vec<u8>, FrameError> {
    let nbytes = u32::try_from(payload.len()).map_err(|_| FrameError::TooLarge {
        nbytes: payload.len() as u64,
        max: u32::MAX as u64,
    })?;
    let mut v = Vec::with_capacity(HEADER_LEN + payload.len());
    v.extend_from_slice(
        &Header {
            pindex,
            tag,
            nbytes,
        }
        .encode(order),
    );
    v.extend_from_slice(payload);
    Ok(v)
}

/// Why a frame is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// The header's payload length is over the decoder's maximum: the
    /// connection cannot be resynchronised and must be dropped.
    #[error("message of {nbytes} bytes exceeds the maximum of {max}")]
    TooLarge {
        /// The length the header declares.
        nbytes: u64,
        /// The decoder's maximum.
        max: u64,
    },
}

/// Incremental decoder: feed bytes as they arrive, take messages out.
pub struct FrameDecoder {
    buf: BytesMut,
    max: usize,
    /// The order of the next header (the first one may be little-endian).
    next_order: HeaderOrder,
    failed: bool,
}

impl FrameDecoder {
    /// A decoder whose first header is read in `first` order and every later one in network order.
    pub fn new(first: HeaderOrder, max_message: usize) -> FrameDecoder {
        FrameDecoder {
            buf: BytesMut::new(),
            max: max_message,
            next_order: first,
            failed: false,
        }
    }

    /// Append received bytes.
    pub fn push(&mut self, data: &[u8]) {
        self.buf.extend_from_slice(data);
    }

    /// Bytes received but not yet part of a whole message.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// The next whole message, if one has arrived. After an error the
    /// stream cannot be resynchronised and every call repeats the error.
    pub fn next_message(&mut self) -> Result<Option<Message>, FrameError> {
        if self.buf.len() < HEADER_LEN {
            return Ok(None);
        }
        let mut hb = [0u8; HEADER_LEN];
        hb.copy_from_slice(&self.buf[..HEADER_LEN]);
        let header = Header::decode(&hb, self.next_order);
        let n = header.nbytes as usize;
        if n > self.max || self.failed {
            self.failed = true;
            return Err(FrameError::TooLarge {
                nbytes: n as u64,
                max: self.max as u64,
            });
        }
        if self.buf.len() < HEADER_LEN + n {
            // reserve only what the (checked) header announces
            self.buf.reserve(HEADER_LEN + n - self.buf.len());
            return Ok(None);
        }
        self.buf.advance(HEADER_LEN);
        let payload = self.buf.split_to(n).freeze();
        self.next_order = HeaderOrder::Network;
        Ok(Some(Message { header, payload }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handshake_header_is_host_order() {
        // protocol.md §2.1, observed: ff ff ff ff ff ff ff ff 33 00 00 00 00 00 00 00
        let h = Header {
            pindex: -1,
            tag: tag::WILDCARD,
            nbytes: 0x33,
        };
        assert_eq!(
            h.encode(HeaderOrder::Little),
            [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x33, 0, 0, 0, 0, 0, 0, 0]
        );
        assert_eq!(h.encode(HeaderOrder::Network)[8..12], [0, 0, 0, 0x33]);
    }

    #[test]
    fn any_split_of_the_stream_gives_the_same_messages() {
        let mut stream = frame(-1, tag::WILDCARD, b"hello", HeaderOrder::Little).unwrap();
        stream.extend(frame(0, 101, b"", HeaderOrder::Network).unwrap());
        stream.extend(frame(0, 102, &[7u8; 300], HeaderOrder::Network).unwrap());
        for split in 0..=stream.len() {
            let mut d = FrameDecoder::new(HeaderOrder::Little, DEFAULT_MAX_MESSAGE);
            let mut got = Vec::new();
            for chunk in [&stream[..split], &stream[split..]] {
                for b in chunk.chunks(7) {
                    d.push(b);
                    while let Some(m) = d.next_message().unwrap() {
                        got.push(m);
                    }
                }
            }
            assert_eq!(got.len(), 3, "split at {split}");
            assert_eq!(&got[0].payload[..], b"hello");
            assert_eq!(
                got[1].header,
                Header {
                    pindex: 0,
                    tag: 101,
                    nbytes: 0
                }
            );
            assert_eq!(got[2].payload.len(), 300);
            assert_eq!(d.buffered(), 0);
        }
    }

    #[test]
    fn oversize_is_refused_before_buffering() {
        let mut d = FrameDecoder::new(HeaderOrder::Network, 1024);
        d.push(
            &Header {
                pindex: 0,
                tag: 101,
                nbytes: 1 << 30,
            }
            .encode(HeaderOrder::Network),
        );
        assert_eq!(
            d.next_message(),
            Err(FrameError::TooLarge {
                nbytes: 1 << 30,
                max: 1024
            })
        );
        assert!(d.buf.capacity() < 4096);
        assert!(d.next_message().is_err());
    }
}
