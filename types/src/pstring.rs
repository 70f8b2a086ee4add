//! C strings as they travel: bytes without an interior NUL, not
//! necessarily UTF-8, with the standard's length limits for keys and
//! namespaces enforced at construction.

#[cfg(feature = "serde")]
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;
use std::fmt;
use std::hash::{Hash, Hasher};

/// Maximum namespace length in bytes (`PMIX_MAX_NSLEN`).
pub const MAX_NSLEN: usize = 255;
/// Maximum key length in bytes (`PMIX_MAX_KEYLEN`).
pub const MAX_KEYLEN: usize = 511;

/// Why a string was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StrError {
    /// The bytes hold a NUL at this offset: C would truncate the string there.
    #[error("string contains a NUL byte at {0}")]
    InteriorNul(usize),
    /// Longer than the standard's fixed array allows.
    #[error("{what} is {len} bytes, more than the limit of {max}")]
    TooLong {
        /// What the string is ("namespace", "key").
        what: &'static str,
        /// Its length in bytes.
        len: usize,
        /// The limit (`PMIX_MAX_NSLEN` or `PMIX_MAX_KEYLEN`).
        max: usize,
    },
}

/// The position of the first NUL in `b`. Short strings (keys, names) are
/// checked a word at a time without a loop: four 8-byte words cover up to
/// 32 bytes (at 0, 8, 16 and the word that ends the string, each moved
/// back to end there where it would pass it, so the last ones overlap;
/// exactly 0, 8, 16, 24 from 32 bytes on), eight cover up to 63, OR-ed
/// into one test; only a string that holds a
/// NUL is scanned again for its position. Longer ones with SIMD
/// (`memchr`), whose set-up costs more than a short string's whole check.
#[inline(always)]
pub fn find_nul(b: &[u8]) -> Option<usize> {
    let n = b.len();
    if n < 8 {
        return b.iter().position(|&c| c == 0);
    }
    let last = n - 8;
    let at = |k: usize| has_zero(word(b, k));
    let z = if n < 32 {
        at(0) | at(last.min(8)) | at(last.min(16)) | at(last)
    } else if n < 64 {
        let z = at(0) | at(8) | at(16) | at(24);
        if n > 32 {
            z | at(last.min(32)) | at(last.min(40)) | at(last.min(48)) | at(last)
        } else {
            z
        }
    } else {
        return memchr::memchr(0, b);
    };
    if z != 0 {
        return first_nul(b, 0);
    }
    None
}

/// The first NUL of `b` at or after `from` (the word there holds one).
#[cold]
fn first_nul(b: &[u8], from: usize) -> Option<usize> {
    b[from..].iter().position(|&c| c == 0).map(|i| from + i)
}

/// Non-zero exactly when some byte of `x` is zero.
#[inline(always)]
fn has_zero(x: u64) -> u64 {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    x.wrapping_sub(LO) & !x & HI
}

/// The eight bytes of `b` from `at` as a word (`at + 8 <= b.len()`).
#[inline(always)]
fn word(b: &[u8], at: usize) -> u64 {
    match b.get(at..).and_then(|r| r.first_chunk::<8>()) {
        Some(w) => u64::from_le_bytes(*w),
        // not reached (callers read within `b`); a zero word sends the
        // caller to the byte scan, which is right for any input
        None => 0,
    }
}

/// A non-NULL C string: any bytes but NUL. The NUL terminator of the wire
/// form is not stored.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct PString(Box<[u8]>);

impl PString {
    /// A string from bytes that must not contain NUL.
    #[inline(always)]
    pub fn from_bytes(b: &[u8]) -> Result<Self, StrError> {
        if let Some(i) = find_nul(b) {
            return Err(StrError::InteriorNul(i));
        }
        Ok(PString(b.into()))
    }
    /// The bytes, without the terminating NUL the wire adds.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
    /// The length in bytes, without the NUL.
    pub fn len(&self) -> usize {
        self.0.len()
    }
    /// Whether the string is empty (distinct from a NULL string, which is `None`).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// The text, if it is UTF-8.
    pub fn as_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.0).ok()
    }
    /// The text with invalid UTF-8 replaced, for display.
    pub fn to_string_lossy(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.0)
    }
}

impl From<&str> for PString {
    /// Panics if `s` contains NUL; use [`PString::from_bytes`] for untrusted input.
    fn from(s: &str) -> Self {
        PString::from_bytes(s.as_bytes()).expect("string literal with NUL")
    }
}

impl fmt::Debug for PString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_string_lossy(), f)
    }
}

impl fmt::Display for PString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_string_lossy())
    }
}

/// JSON: a string when the bytes are UTF-8, else `{"hex": "…"}`.
#[cfg(feature = "serde")]
fn serialize_bytes<S: Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
    match std::str::from_utf8(b) {
        Ok(t) => s.serialize_str(t),
        Err(_) => {
            use serde::ser::SerializeMap;
            let mut m = s.serialize_map(Some(1))?;
            m.serialize_entry("hex", &crate::hex::encode(b))?;
            m.end()
        }
    }
}

#[cfg(feature = "serde")]
impl Serialize for PString {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_bytes(&self.0, s)
    }
}

#[cfg(feature = "serde")]
impl<'de> Deserialize<'de> for PString {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Form {
            Text(String),
            Hex { hex: String },
        }
        let bytes = match Form::deserialize(d)? {
            Form::Text(t) => t.into_bytes(),
            Form::Hex { hex } => crate::hex::decode(&hex).map_err(de::Error::custom)?,
        };
        PString::from_bytes(&bytes).map_err(de::Error::custom)
    }
}

macro_rules! limited {
    ($(#[$m:meta])* $name:ident, $max:expr, $what:literal) => {
        $(#[$m])*
        #[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        #[cfg_attr(feature = "serde", derive(Serialize))]
        #[cfg_attr(feature = "serde", serde(transparent))]
        pub struct $name(PString);

        impl $name {
            /// The limit in bytes.
            pub const MAX: usize = $max;
            /// Checks the length limit.
            pub fn new(s: PString) -> Result<Self, StrError> {
                if s.len() > $max {
                    return Err(StrError::TooLong { what: $what, len: s.len(), max: $max });
                }
                Ok($name(s))
            }
            /// From bytes: no NUL, within the limit.
            pub fn from_bytes(b: &[u8]) -> Result<Self, StrError> {
                Self::new(PString::from_bytes(b)?)
            }
            /// The string without its limit.
            pub fn as_pstring(&self) -> &PString {
                &self.0
            }
            /// The bytes, without padding or NUL.
            pub fn as_bytes(&self) -> &[u8] {
                self.0.as_bytes()
            }
        }

        impl From<&str> for $name {
            /// Panics if `s` is too long or contains NUL; use `from_bytes` for untrusted input.
            fn from(s: &str) -> Self {
                $name::from_bytes(s.as_bytes()).expect(concat!("invalid ", $what))
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.0, f)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }

        #[cfg(feature = "serde")]
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $name::new(PString::deserialize(d)?).map_err(de::Error::custom)
            }
        }
    };
}

limited!(
    /// A namespace: at most 255 bytes (`pmix_nspace_t`).
    Nspace, MAX_NSLEN, "namespace"
);
/// Longest key held inline.
const KEY_INLINE: usize = 22;

/// A key: at most 511 bytes (`pmix_key_t`), no NUL. Keys of up to 22
/// bytes (most of the standard's) are held inline: an unpacked INFO
/// allocates nothing for its key.
#[derive(Clone)]
pub struct Key(KeyRepr);

#[derive(Clone)]
enum KeyRepr {
    Inline { len: u8, bytes: [u8; KEY_INLINE] },
    Heap(PString),
}

impl Key {
    /// The longest key in bytes (`PMIX_MAX_KEYLEN`).
    pub const MAX: usize = MAX_KEYLEN;

    fn too_long(len: usize) -> StrError {
        StrError::TooLong {
            what: "key",
            len,
            max: MAX_KEYLEN,
        }
    }

    /// Bytes already checked free of NUL and at most `KEY_INLINE` long.
    #[inline]
    fn inline(b: &[u8]) -> Key {
        let mut bytes = [0u8; KEY_INLINE];
        let len = b.len().min(KEY_INLINE);
        bytes[..len].copy_from_slice(&b[..len]);
        Key(KeyRepr::Inline {
            len: len as u8,
            bytes,
        })
    }

    /// A key from a string; refused if longer than [`Key::MAX`].
    pub fn new(s: PString) -> Result<Self, StrError> {
        match s.len() {
            n if n > MAX_KEYLEN => Err(Key::too_long(n)),
            n if n <= KEY_INLINE => Ok(Key::inline(s.as_bytes())),
            _ => Ok(Key(KeyRepr::Heap(s))),
        }
    }
    /// A key from bytes; refused if they hold a NUL or are longer than
    /// [`Key::MAX`].
    #[inline]
    pub fn from_bytes(b: &[u8]) -> Result<Self, StrError> {
        if let Some(i) = find_nul(b) {
            return Err(StrError::InteriorNul(i));
        }
        match b.len() {
            n if n > MAX_KEYLEN => Err(Key::too_long(n)),
            n if n <= KEY_INLINE => Ok(Key::inline(b)),
            _ => Ok(Key(KeyRepr::Heap(PString(b.into())))),
        }
    }
    /// The key as a `PString` (a copy for a key held inline).
    pub fn as_pstring(&self) -> Cow<'_, PString> {
        match &self.0 {
            KeyRepr::Heap(p) => Cow::Borrowed(p),
            KeyRepr::Inline { .. } => Cow::Owned(PString(self.as_bytes().into())),
        }
    }
    /// The key's bytes (no NUL).
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            KeyRepr::Inline { len, bytes } => &bytes[..usize::from(*len).min(KEY_INLINE)],
            KeyRepr::Heap(p) => p.as_bytes(),
        }
    }
    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.as_bytes().len()
    }
    /// The empty key.
    pub fn is_empty(&self) -> bool {
        self.as_bytes().is_empty()
    }
    /// The text with invalid UTF-8 replaced, for display.
    pub fn to_string_lossy(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(self.as_bytes())
    }
}

impl Default for Key {
    fn default() -> Key {
        Key::inline(&[])
    }
}

impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for Key {}

impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_bytes().hash(state)
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Key) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Key) -> std::cmp::Ordering {
        self.as_bytes().cmp(other.as_bytes())
    }
}

impl From<&str> for Key {
    /// Panics if `s` is too long or contains NUL; use `from_bytes` for untrusted input.
    fn from(s: &str) -> Self {
        Key::from_bytes(s.as_bytes()).expect("invalid key")
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_string_lossy(), f)
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_string_lossy())
    }
}

/// JSON: as a `PString`.
#[cfg(feature = "serde")]
impl Serialize for Key {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_bytes(self.as_bytes(), s)
    }
}

#[cfg(feature = "serde")]
impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Key::new(PString::deserialize(d)?).map_err(de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn find_nul_agrees_with_a_byte_scan() {
        for len in 0..140usize {
            let base: Vec<u8> = (0..len).map(|i| (i % 255 + 1) as u8).collect();
            assert_eq!(super::find_nul(&base), None, "{len}");
            for at in 0..len {
                let mut b = base.clone();
                b[at] = 0;
                if at + 1 < len {
                    b[len - 1] = 0;
                }
                assert_eq!(super::find_nul(&b), Some(at), "{len} {at}");
            }
        }
        // 0x80 and 0x01 bytes around a zero do not confuse the word test
        assert_eq!(
            super::find_nul(&[0x80, 0x01, 0x81, 0xff, 0x01, 0x00, 0x80, 0x80]),
            Some(5)
        );
        assert_eq!(super::find_nul(&[0x80; 8]), None);
    }

    use super::*;

    #[test]
    fn limits_are_enforced() {
        assert!(Nspace::from_bytes(&[b'n'; 255]).is_ok());
        assert_eq!(
            Nspace::from_bytes(&[b'n'; 256]),
            Err(StrError::TooLong {
                what: "namespace",
                len: 256,
                max: 255
            })
        );
        assert!(Key::from_bytes(&[b'k'; 511]).is_ok());
        assert!(Key::from_bytes(&[b'k'; 512]).is_err());
        assert_eq!(
            Key::new(PString::from_bytes(&[b'k'; 512]).unwrap()),
            Err(StrError::TooLong {
                what: "key",
                len: 512,
                max: 511
            })
        );
        assert_eq!(Key::from_bytes(b"k\0"), Err(StrError::InteriorNul(1)));
        assert_eq!(PString::from_bytes(b"a\0b"), Err(StrError::InteriorNul(1)));
    }

    #[cfg(feature = "serde")]
    #[test]
    fn keys_inline_and_on_the_heap_behave_alike() {
        use std::collections::hash_map::DefaultHasher;
        let hash = |x: &dyn Fn(&mut DefaultHasher)| {
            let mut h = DefaultHasher::new();
            x(&mut h);
            h.finish()
        };
        for len in [0, 1, 21, 22, 23, 100, 511] {
            let b: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            let p = PString::from_bytes(&b).unwrap();
            let k = Key::from_bytes(&b).unwrap();
            assert_eq!(k, Key::new(p.clone()).unwrap(), "{len}");
            assert_eq!(k.as_bytes(), &b[..], "{len}");
            assert_eq!(k.len(), len);
            assert_eq!(*k.as_pstring(), p, "{len}");
            assert_eq!(format!("{k:?}/{k}"), format!("{p:?}/{p}"));
            assert_eq!(
                serde_json::to_string(&k).unwrap(),
                serde_json::to_string(&p).unwrap()
            );
            // the same hash and order as the PString it was made from
            assert_eq!(hash(&|h| k.hash(h)), hash(&|h| p.hash(h)), "{len}");
            if len < Key::MAX {
                let longer = Key::from_bytes(&[&b[..], b"z"].concat()).unwrap();
                assert!(k < longer, "{len}");
            }
        }
        let raw = Key::from_bytes(&[0xff, 0x41]).unwrap();
        assert_eq!(serde_json::to_string(&raw).unwrap(), r#"{"hex":"ff41"}"#);
        assert_eq!(Key::default().as_bytes(), b"");
    }

    #[cfg(feature = "serde")]
    #[test]
    fn json_form() {
        let s = PString::from("h\u{e9}llo");
        assert_eq!(serde_json::to_string(&s).unwrap(), "\"h\u{e9}llo\"");
        let raw = PString::from_bytes(&[0xff, 0x41]).unwrap();
        let j = serde_json::to_string(&raw).unwrap();
        assert_eq!(j, r#"{"hex":"ff41"}"#);
        assert_eq!(serde_json::from_str::<PString>(&j).unwrap(), raw);
        assert!(serde_json::from_str::<Nspace>(&format!("\"{}\"", "x".repeat(256))).is_err());
    }
}
