//! libpmix's compression format, the content of PMIX_COMPRESSED_STRING and
//! PMIX_COMPRESSED_BYTE_OBJECT values (bfrops.md §11.4): the uncompressed
//! length as a 4-byte little-endian integer (libpmix copies a host-order
//! `uint32_t`; x86 is little-endian), then a zlib (RFC 1950) stream made
//! at level 9. For strings the length excludes the NUL.
//!
//! [`compress`] behaves as libpmix ≥ 5.0 does; libpmix 4.2.2's compression
//! never succeeds (spec-notes/compress.md). Our compressed bytes are a
//! valid zlib stream but not zlib's exact bytes (flate2's default backend
//! is miniz_oxide): the blob is opaque, any zlib stream decompresses.
//!
//! OpenPMIx 7.0 has three pcompress components, each with its own stream
//! after the same prefix (spec-notes/pmix7.md, vectors
//! `v7.0.0a1/compress-*`): zlib at level 1 (`78 01`), a zstd frame
//! (`28 b5 2f fd`, the default) and an LZ4 frame with its content size
//! (`04 22 4d 18`); none reads another's, and 4.2.2 reads only zlib.
//! [`Codec`], [`compress_with`] and [`decompress_with`] are those
//! components; [`compress`] and [`decompress`] stay the zlib of 5.0/6.1.
//!
//! [`decompress`] is bounded and strict: the declared size is checked
//! against [`MAX_DECOMPRESSED`] and [`MAX_RATIO`] before anything is
//! allocated, and the blob must be exactly the prefix plus one zlib stream
//! that produces exactly the declared size. libpmix is laxer on blobs no
//! compressor produces; spec-notes/compress.md lists what it does.

use flate2::write::ZlibEncoder;
use flate2::{Compression, Decompress, FlushDecompress, Status};
use pmix_types::{Hex, PString, Value};
use std::io::{Read, Write};

/// Inputs shorter than this are not compressed (libpmix's MCA parameter
/// `pcompress_base_limit`, default 4096).
pub const COMPRESS_LIMIT: usize = 4096;

/// The largest uncompressed size we accept from a peer: 1 GiB.
pub const MAX_DECOMPRESSED: usize = 1 << 30;

/// The largest expansion deflate can encode is 1032:1 (258 bytes from a
/// 2-bit code); a declared size above 1032 × the stream length is a lie.
pub const MAX_RATIO: usize = 1032;

/// Why a blob does not decompress.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CompressError {
    /// The blob (its length given) cannot hold the 4-byte size prefix.
    #[error("blob of {0} bytes is shorter than its 4-byte length prefix")]
    TooShort(usize),
    #[error("declared size {declared} is over the limit {limit}")]
    /// The prefix declares more bytes than the caller's limit or
    /// [`MAX_RATIO`] allows: refused before allocating.
    TooLarge {
        /// The size the prefix declares.
        declared: usize,
        /// The largest size accepted.
        limit: usize,
    },
    /// zlib rejects the stream (its message).
    #[error("zlib stream: {0}")]
    Zlib(String),
    /// The zstd decoder rejects the frame (its message).
    #[error("zstd frame: {0}")]
    Zstd(String),
    /// The LZ4 decoder rejects the frame (its message).
    #[error("lz4 frame: {0}")]
    Lz4(String),
    /// The stream is not in the format of the component asked to read it
    /// (no 7.0 component reads another's output).
    #[error("not a {expected} stream")]
    WrongFormat {
        /// The component's name.
        expected: &'static str,
    },
    /// The stream ends before its end-of-stream marker.
    #[error("compressed stream is truncated")]
    Truncated,
    #[error("stream gives more than the declared {declared} bytes")]
    /// The stream inflates to more than the declared size.
    Longer {
        /// The size the prefix declares.
        declared: usize,
    },
    #[error("stream gives {got} bytes, the prefix declared {declared}")]
    /// The stream inflates to fewer bytes than declared.
    Shorter {
        /// The size the prefix declares.
        declared: usize,
        /// The size the stream gives.
        got: usize,
    },
    /// Bytes (this many) follow the end of the stream.
    #[error("{0} bytes follow the end of the compressed stream")]
    TrailingBytes(usize),
}

/// A pcompress component of OpenPMIx 7.0: the stream after the prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Codec {
    /// zlib (RFC 1950); 7.0 writes level 1, 5.0/6.1 level 9.
    Zlib,
    /// A zstd frame (RFC 8878); 7.0's default component.
    Zstd,
    /// An LZ4 frame with its content size, 64 KiB independent blocks.
    Lz4,
}

impl Codec {
    /// Every component, in the order 7.0 prefers them (zstd first).
    pub const ALL: [Codec; 3] = [Codec::Zstd, Codec::Lz4, Codec::Zlib];

    /// The component's name (`PMIX_MCA_pcompress=<name>`).
    pub fn name(self) -> &'static str {
        match self {
            Codec::Zlib => "zlib",
            Codec::Zstd => "zstd",
            Codec::Lz4 => "lz4",
        }
    }

    /// The component of a name as [`name`](Self::name) gives it.
    pub fn parse(s: &str) -> Option<Codec> {
        Codec::ALL.into_iter().find(|c| c.name() == s.trim())
    }

    /// The format of a blob, from the magic after its 4-byte prefix (zlib:
    /// a valid RFC 1950 header of method 8).
    pub fn of_blob(blob: &[u8]) -> Option<Codec> {
        let s = blob.get(4..)?;
        match s {
            [0x28, 0xb5, 0x2f, 0xfd, ..] => Some(Codec::Zstd),
            [0x04, 0x22, 0x4d, 0x18, ..] => Some(Codec::Lz4),
            [cmf, flg, ..]
                if cmf & 0x0f == 8 && (u16::from(*cmf) << 8 | u16::from(*flg)) % 31 == 0 =>
            {
                Some(Codec::Zlib)
            }
            _ => None,
        }
    }
}

/// OpenPMIx 7.0's compression threshold (`pcompress_base_limit`): inputs
/// shorter than this are not compressed.
pub const COMPRESS_LIMIT_V7: usize = 256;

/// `PMIx_Data_compress` as OpenPMIx 7.0's `codec` component does it:
/// `None` below `limit` bytes (7.0: [`COMPRESS_LIMIT_V7`]), at
/// `u32::MAX` bytes and above, and when the blob would not be smaller
/// than the input. zlib is written at level 1 as 7.0 does, zstd at
/// ruzstd's fastest level, LZ4 as a frame with the content size and
/// 64 KiB independent blocks (7.0's header `04 22 4d 18 68 40`). The
/// streams are valid for 7.0's decoders but not libzstd's or liblz4's
/// exact bytes.
pub fn compress_with(codec: Codec, data: &[u8], limit: usize) -> Option<Vec<u8>> {
    if data.len() < limit || data.len() >= u32::MAX as usize {
        return None;
    }
    let mut out = Vec::with_capacity(4 + data.len() / 2);
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    let out = match codec {
        Codec::Zlib => {
            let mut z = ZlibEncoder::new(out, Compression::fast());
            z.write_all(data).ok()?;
            z.finish().ok()?
        }
        Codec::Zstd => {
            ruzstd::encoding::compress(data, &mut out, ruzstd::encoding::CompressionLevel::Fastest);
            out
        }
        Codec::Lz4 => {
            use lz4_flex::frame::{BlockMode, BlockSize, FrameEncoder, FrameInfo};
            let info = FrameInfo::new()
                .content_size(Some(data.len() as u64))
                .block_size(BlockSize::Max64KB)
                .block_mode(BlockMode::Independent);
            let mut z = FrameEncoder::with_frame_info(info, out);
            z.write_all(data).ok()?;
            z.finish().ok()?
        }
    };
    (out.len() < data.len()).then_some(out)
}

/// `PMIx_Data_decompress` of OpenPMIx 7.0's `codec` component: the blob
/// must be the prefix plus exactly one stream of that component that gives
/// exactly the declared size; bounded as [`decompress`] (zstd and LZ4 can
/// expand further than deflate: their output grows only as it is made, up
/// to the declared size and [`MAX_DECOMPRESSED`]).
pub fn decompress_with(codec: Codec, blob: &[u8]) -> Result<Vec<u8>, CompressError> {
    if codec == Codec::Zlib {
        return decompress(blob);
    }
    let Some((prefix, stream)) = blob.split_first_chunk::<4>() else {
        return Err(CompressError::TooShort(blob.len()));
    };
    let declared = u32::from_le_bytes(*prefix) as usize;
    if declared > MAX_DECOMPRESSED {
        return Err(CompressError::TooLarge {
            declared,
            limit: MAX_DECOMPRESSED,
        });
    }
    if Codec::of_blob(blob) != Some(codec) {
        return Err(CompressError::WrongFormat {
            expected: codec.name(),
        });
    }
    let bound = declared as u64 + 1;
    let start = declared.min(stream.len().saturating_mul(MAX_RATIO)) + 1;
    let mut out = Vec::with_capacity(start);
    let mut src = stream;
    match codec {
        Codec::Zstd => {
            let dec = ruzstd::decoding::StreamingDecoder::new(&mut src)
                .map_err(|e| CompressError::Zstd(e.to_string()))?;
            std::io::Read::take(dec, bound)
                .read_to_end(&mut out)
                .map_err(|e| CompressError::Zstd(e.to_string()))?;
        }
        _ => {
            let dec = lz4_flex::frame::FrameDecoder::new(&mut src);
            std::io::Read::take(dec, bound)
                .read_to_end(&mut out)
                .map_err(|e| CompressError::Lz4(e.to_string()))?;
        }
    }
    if out.len() > declared {
        return Err(CompressError::Longer { declared });
    }
    if !src.is_empty() {
        return Err(CompressError::TrailingBytes(src.len()));
    }
    if out.len() != declared {
        return Err(CompressError::Shorter {
            declared,
            got: out.len(),
        });
    }
    Ok(out)
}

/// `PMIx_Data_compress` as libpmix ≥ 5.0 does it: `None` below
/// [`COMPRESS_LIMIT`] or at `u32::MAX` bytes and above (the length must
/// fit the prefix).
pub fn compress(data: &[u8]) -> Option<Vec<u8>> {
    if data.len() < COMPRESS_LIMIT || data.len() >= u32::MAX as usize {
        return None;
    }
    let mut out = Vec::with_capacity(4 + data.len() / 2);
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    let mut z = ZlibEncoder::new(out, Compression::best());
    // writing to a Vec cannot fail
    z.write_all(data).ok()?;
    z.finish().ok()
}

/// `PMIx_Data_decompress`, bounded and strict (see the module notes).
pub fn decompress(blob: &[u8]) -> Result<Vec<u8>, CompressError> {
    let Some((prefix, stream)) = blob.split_first_chunk::<4>() else {
        return Err(CompressError::TooShort(blob.len()));
    };
    let declared = u32::from_le_bytes(*prefix) as usize;
    let limit = MAX_DECOMPRESSED.min(stream.len().saturating_mul(MAX_RATIO));
    if declared > limit {
        return Err(CompressError::TooLarge { declared, limit });
    }
    // one byte of room past the declared size reveals a longer stream;
    // decompress_vec never grows the vector
    let mut out = Vec::with_capacity(declared + 1);
    let mut z = Decompress::new(true);
    loop {
        let (used, made) = (z.total_in(), z.total_out());
        let rest = stream.get(used as usize..).unwrap_or_default();
        let status = z
            .decompress_vec(rest, &mut out, FlushDecompress::Finish)
            .map_err(|e| CompressError::Zlib(e.to_string()))?;
        if out.len() > declared {
            return Err(CompressError::Longer { declared });
        }
        if status == Status::StreamEnd {
            break;
        }
        if z.total_in() == used && z.total_out() == made {
            // no progress with room left: the input ran out
            return Err(CompressError::Truncated);
        }
    }
    let trailing = stream.len() - z.total_in() as usize;
    if trailing != 0 {
        return Err(CompressError::TrailingBytes(trailing));
    }
    if out.len() != declared {
        return Err(CompressError::Shorter {
            declared,
            got: out.len(),
        });
    }
    Ok(out)
}

/// libpmix's `compress_string`: the text up to its first NUL (C's
/// `strlen`), compressed as [`compress`] does; the prefix is the text
/// length without the NUL.
pub fn compress_string(s: &[u8]) -> Option<Vec<u8>> {
    let n = s.iter().position(|&c| c == 0).unwrap_or(s.len());
    compress(&s[..n])
}

/// libpmix's `decompress_string`: C appends a NUL to the bytes and its
/// callers see the text up to the first NUL; we return that text, without
/// a terminator.
pub fn decompress_string(blob: &[u8]) -> Result<PString, CompressError> {
    let mut b = decompress(blob)?;
    if let Some(n) = b.iter().position(|&c| c == 0) {
        b.truncate(n);
    }
    // no NUL is left, so this cannot fail
    PString::from_bytes(&b).map_err(|e| CompressError::Zlib(e.to_string()))
}

/// A string as a PMIX_COMPRESSED_STRING value, or `None` when it is too
/// short to be compressed.
pub fn compressed_string(s: &str) -> Option<Value> {
    compress_string(s.as_bytes()).map(|b| Value::CompressedString(Box::new(Hex(b.into()))))
}

/// The content of a PMIX_COMPRESSED_STRING value (as bytes: C would
/// append a NUL) or of a PMIX_COMPRESSED_BYTE_OBJECT; `None` for other
/// values.
pub fn decompress_value(v: &Value) -> Option<Result<Vec<u8>, CompressError>> {
    match v {
        Value::CompressedString(b) | Value::CompressedByteObject(b) => Some(decompress(b)),
        _ => None,
    }
}

/// What an OpenPMIx 7.0 receiver makes of a `pmix_value_t` tagged
/// COMPRESSED_STRING: its unpacker expands it into a STRING with the
/// local component `codec` (vectors `v7.0.0a1/compress-*/VALUE_cstr_*`:
/// round trip `differs`, repacked as `03 <string>`; a blob of another
/// component fails there with UNPACK_FAILURE). `None` for other values.
/// A bare COMPRESSED_STRING item stays a byte object in 7.0 too, and our
/// decoder never expands: the wire bytes are those of every release.
pub fn expand_value_v7(v: &Value, codec: Codec) -> Option<Result<Value, CompressError>> {
    match v {
        Value::CompressedString(b) => Some(decompress_with(codec, b).map(|mut t| {
            if let Some(n) = t.iter().position(|&c| c == 0) {
                t.truncate(n);
            }
            // no NUL is left, so this cannot fail
            Value::String(PString::from_bytes(&t).ok())
        })),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::write::ZlibEncoder;

    fn zlib(data: &[u8], level: u32) -> Vec<u8> {
        let mut z = ZlibEncoder::new(Vec::new(), Compression::new(level));
        z.write_all(data).unwrap();
        z.finish().unwrap()
    }

    fn blob(declared: u32, stream: &[u8]) -> Vec<u8> {
        [&declared.to_le_bytes()[..], stream].concat()
    }

    #[test]
    fn shared_vector_payload_decompresses() {
        // the 36-byte COMPRESSED_STRING payload of the v5.0.11 vectors:
        // u32le 8191 + zlib('a' * 8191)
        let hex = "ff1f000078daedc1010d000000c2a0acef5fc21c6e400100000000000000e7066e4a2054";
        let b = pmix_types::hex::decode(hex).unwrap();
        assert_eq!(decompress(&b).unwrap(), vec![b'a'; 8191]);
    }

    #[test]
    fn round_trip_and_limits() {
        let data = vec![b'a'; 8191];
        let b = compress(&data).unwrap();
        assert_eq!(&b[..4], &8191u32.to_le_bytes());
        assert_eq!(&b[4..6], &[0x78, 0xda], "zlib header, level 9");
        assert_eq!(decompress(&b).unwrap(), data);
        assert!(compress(&data[..4095]).is_none());
        assert!(compress(&data[..4096]).is_some());
        // 4 GiB from 10 bytes: refused on the prefix alone
        let evil = blob(u32::MAX, &[0x78, 0xda, 0, 0, 0, 0]);
        assert_eq!(
            decompress(&evil),
            Err(CompressError::TooLarge {
                declared: u32::MAX as usize,
                limit: 6 * MAX_RATIO
            })
        );
        // a real stream whose prefix claims 1 byte more than 1032x
        let s = zlib(&[0u8; 100_000], 9);
        let too_much = (s.len() * MAX_RATIO + 1) as u32;
        assert!(matches!(
            decompress(&blob(too_much, &s)),
            Err(CompressError::TooLarge { .. })
        ));
        // the ratio bound holds for the most compressible input there is
        let zeros = vec![0u8; 4 << 20];
        assert_eq!(decompress(&compress(&zeros).unwrap()).unwrap(), zeros);
        assert!(matches!(
            decompress(&[1, 0]),
            Err(CompressError::TooShort(2))
        ));
    }

    #[test]
    fn the_length_prefix_is_little_endian_and_a_swapped_one_is_refused() {
        // libpmix's zlib component memcpy's a host-order uint32: x86-64
        // (the only order we write and read, on any host of ours) is LE
        let data = vec![b'x'; 5000];
        let blob = compress(&data).unwrap();
        assert_eq!(blob[..4], [0x88, 0x13, 0, 0]);
        assert_eq!(decompress(&blob).unwrap(), data);
        // a big-endian sender's prefix (00 00 13 88) names 0x88130000
        // bytes: refused, never read as 5000 nor allocated
        let mut be = blob.clone();
        be[..4].copy_from_slice(&5000u32.to_be_bytes());
        assert!(matches!(
            decompress(&be),
            Err(CompressError::TooLarge {
                declared: 0x8813_0000,
                ..
            })
        ));
    }

    #[test]
    fn malformed_blobs_are_refused() {
        let data: Vec<u8> = (0..20_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let s = zlib(&data, 9);
        let n = data.len() as u32;
        assert_eq!(decompress(&blob(n, &s)).unwrap(), data);
        assert_eq!(
            decompress(&blob(n - 1, &s)),
            Err(CompressError::Longer {
                declared: data.len() - 1
            })
        );
        assert_eq!(
            decompress(&blob(n + 10, &s)),
            Err(CompressError::Shorter {
                declared: data.len() + 10,
                got: data.len()
            })
        );
        for cut in [1, 4, 5, s.len() / 2] {
            assert_eq!(
                decompress(&blob(n, &s[..s.len() - cut])),
                Err(CompressError::Truncated),
                "{cut}"
            );
        }
        let mut bad_sum = s.clone();
        *bad_sum.last_mut().unwrap() ^= 1;
        assert!(matches!(
            decompress(&blob(n, &bad_sum)),
            Err(CompressError::Zlib(_))
        ));
        let mut trailing = s.clone();
        trailing.extend(b"xyz");
        assert_eq!(
            decompress(&blob(n, &trailing)),
            Err(CompressError::TrailingBytes(3))
        );
        // raw deflate (no zlib header) is not accepted
        assert!(decompress(&blob(n, &s[2..s.len() - 4])).is_err());
        // the empty text: an 8-byte stream
        assert_eq!(decompress(&blob(0, &zlib(b"", 9))).unwrap(), b"");
        assert!(decompress(&blob(0, &[])).is_err());
    }

    #[test]
    fn strings_stop_at_the_first_nul() {
        let text = "pmix ".repeat(1000);
        let b = compress_string(text.as_bytes()).unwrap();
        assert_eq!(&b[..4], &5000u32.to_le_bytes());
        assert_eq!(decompress_string(&b).unwrap().as_bytes(), text.as_bytes());
        let with_nul = [text.as_bytes(), b"\0tail"].concat();
        assert_eq!(compress_string(&with_nul), Some(b.clone()));
        let inner = compress(&with_nul).unwrap();
        assert_eq!(
            decompress_string(&inner).unwrap().as_bytes(),
            text.as_bytes()
        );
        assert!(compress_string(&b"x".repeat(4095)).is_none());
        let v = compressed_string(&text).unwrap();
        assert_eq!(decompress_value(&v), Some(Ok(text.into_bytes())));
        assert_eq!(decompress_value(&Value::Uint8(1)), None);
    }

    proptest::proptest! {
        #[test]
        fn any_blob_decodes_or_errs(blob in proptest::collection::vec(proptest::num::u8::ANY, 0..64)) {
            if let Ok(v) = decompress(&blob) {
                proptest::prop_assert_eq!(v.len(), u32::from_le_bytes(blob[..4].try_into().unwrap()) as usize);
            }
        }

        #[test]
        fn a_flipped_bit_never_yields_other_data(at in 0usize..10_000, bit in 0u8..8) {
            let data: Vec<u8> = (0..6000u32).map(|i| (i % 97) as u8).collect();
            let mut b = compress(&data).unwrap();
            let at = at % b.len();
            b[at] ^= 1 << bit;
            // header check, adler-32 and the prefix catch changes; a flip
            // in the padding bits of the last byte of deflate data changes
            // nothing
            if let Ok(v) = decompress(&b) {
                proptest::prop_assert_eq!(v, data);
            }
        }
    }
}
