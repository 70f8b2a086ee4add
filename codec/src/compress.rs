//! libpmix's compression format for PMIX_COMPRESSED_STRING and
//! PMIX_COMPRESSED_BYTE_OBJECT contents (bfrops.md §11.4): the
//! uncompressed length as a 4-byte little-endian (x86 host order) integer,
//! then a zlib (RFC 1950) stream at level 9.

use flate2::read::ZlibDecoder;
use flate2::write::ZlibEncoder;
use flate2::Compression;
use pmix_types::{Hex, Value};
use std::io::{Read, Write};

/// Inputs shorter than this are not compressed (MCA pcompress_base_limit).
pub const COMPRESS_LIMIT: usize = 4096;

/// The largest uncompressed size we accept from a peer (1 GiB).
pub const MAX_DECOMPRESSED: usize = 1 << 30;
/// zlib's own ceiling on the expansion ratio of deflate is 1032:1.
pub const MAX_RATIO: usize = 1032;

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CompressError {
    #[error("blob of {0} bytes is shorter than its 4-byte length prefix")]
    TooShort(usize),
    #[error("declared size {declared} is over the limit {limit}")]
    TooLarge { declared: usize, limit: usize },
    #[error("zlib stream: {0}")]
    Zlib(String),
    #[error("zlib stream gave {got} bytes, the prefix declared {declared}")]
    LengthMismatch { declared: usize, got: usize },
}

/// `PMIx_Data_compress` as libpmix ≥ 5.0 does it: `None` below the 4096-byte
/// limit or at 4 GiB and above. (libpmix 4.2.2's compress never succeeds:
/// spec-notes/compress.md.)
pub fn compress(data: &[u8]) -> Option<Vec<u8>> {
    if data.len() < COMPRESS_LIMIT || data.len() >= u32::MAX as usize {
        return None;
    }
    let mut out = (data.len() as u32).to_le_bytes().to_vec();
    let mut z = ZlibEncoder::new(&mut out, Compression::best());
    z.write_all(data).ok()?;
    z.finish().ok()?;
    Some(out)
}

/// `PMIx_Data_decompress`, bounded: the declared size is checked against
/// [`MAX_DECOMPRESSED`] and [`MAX_RATIO`] × the compressed size before any
/// allocation, and the stream must produce exactly that many bytes.
pub fn decompress(blob: &[u8]) -> Result<Vec<u8>, CompressError> {
    if blob.len() < 4 {
        return Err(CompressError::TooShort(blob.len()));
    }
    let declared = u32::from_le_bytes([blob[0], blob[1], blob[2], blob[3]]) as usize;
    let limit = MAX_DECOMPRESSED.min((blob.len() - 4).saturating_mul(MAX_RATIO));
    if declared > limit {
        return Err(CompressError::TooLarge { declared, limit });
    }
    let mut out = Vec::with_capacity(declared);
    // read one byte past the declared size to detect a longer stream
    let mut z = ZlibDecoder::new(&blob[4..]).take(declared as u64 + 1);
    z.read_to_end(&mut out)
        .map_err(|e| CompressError::Zlib(e.to_string()))?;
    if out.len() != declared {
        return Err(CompressError::LengthMismatch {
            declared,
            got: out.len(),
        });
    }
    Ok(out)
}

/// A string as a PMIX_COMPRESSED_STRING value (the length excludes the
/// NUL), or `None` when it is too short to be compressed.
pub fn compressed_string(s: &str) -> Option<Value> {
    compress(s.as_bytes()).map(|b| Value::CompressedString(Hex(b.into())))
}

/// The text of a PMIX_COMPRESSED_STRING value, or the bytes of a
/// PMIX_COMPRESSED_BYTE_OBJECT (C appends a NUL to strings; we do not).
pub fn decompress_value(v: &Value) -> Option<Result<Vec<u8>, CompressError>> {
    match v {
        Value::CompressedString(b) | Value::CompressedByteObject(b) => Some(decompress(b)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_limits() {
        let data = vec![b'a'; 8191];
        let blob = compress(&data).unwrap();
        assert_eq!(&blob[..4], &8191u32.to_le_bytes());
        assert_eq!(blob[4], 0x78, "zlib header");
        assert_eq!(decompress(&blob).unwrap(), data);
        assert!(compress(&data[..4095]).is_none());
        // a blob claiming 4 GiB from 10 bytes is refused before allocating
        let mut evil = u32::MAX.to_le_bytes().to_vec();
        evil.extend([0x78, 0xda, 0, 0, 0, 0]);
        assert!(matches!(
            decompress(&evil),
            Err(CompressError::TooLarge { .. })
        ));
        assert!(matches!(
            decompress(&[1, 0]),
            Err(CompressError::TooShort(2))
        ));
        let mut short = blob.clone();
        short[0] = 0x00; // declares 8192-255 bytes: the stream is longer
        assert!(matches!(
            decompress(&short),
            Err(CompressError::LengthMismatch { .. })
        ));
    }

    #[test]
    fn shared_vector_payload_decompresses() {
        // the 36-byte COMPRESSED_STRING payload of the v5.0.11 vectors:
        // u32le 8191 + zlib('a' * 8191)
        let hex = "ff1f000078daedc1010d000000c2a0acef5fc21c6e400100000000000000e7066e4a2054";
        let blob = pmix_types::hex::decode(hex).unwrap();
        assert_eq!(decompress(&blob).unwrap(), vec![b'a'; 8191]);
    }
}
