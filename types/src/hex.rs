//! Lower-case hex, the JSON form of raw bytes.

/// Lower-case hex of `b`, two digits per byte.
pub fn encode(b: &[u8]) -> String {
    const D: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(b.len() * 2);
    for &x in b {
        s.push(D[(x >> 4) as usize] as char);
        s.push(D[(x & 15) as usize] as char);
    }
    s
}

/// The bytes of a hex string (either case, whitespace ignored); an error says which digit is wrong.
pub fn decode(s: &str) -> Result<Vec<u8>, String> {
    let s: Vec<u8> = s.bytes().filter(|c| !c.is_ascii_whitespace()).collect();
    if !s.len().is_multiple_of(2) {
        return Err("hex string has an odd number of digits".into());
    }
    fn nib(c: u8) -> Result<u8, String> {
        match c {
            b'0'..=b'9' => Ok(c - b'0'),
            b'a'..=b'f' => Ok(c - b'a' + 10),
            b'A'..=b'F' => Ok(c - b'A' + 10),
            _ => Err(format!("not a hex digit: {:?}", c as char)),
        }
    }
    s.chunks(2)
        .map(|p| Ok(nib(p[0])? << 4 | nib(p[1])?))
        .collect()
}

#[cfg(feature = "serde")]
/// serde adapter: `bytes::Bytes` as a hex string.
pub mod serde_bytes_hex {
    use bytes::Bytes;
    use serde::{de, Deserialize, Deserializer, Serializer};

    /// Serialize as [`encode`](super::encode)'s string.
    pub fn serialize<S: Serializer>(b: &Bytes, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::encode(b))
    }
    /// Deserialize from a hex string, as [`decode`](super::decode).
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Bytes, D::Error> {
        let s = String::deserialize(d)?;
        super::decode(&s)
            .map(Bytes::from)
            .map_err(de::Error::custom)
    }
}
