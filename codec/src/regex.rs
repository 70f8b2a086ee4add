//! PMIX_REGEX (49): the preg framework writes a `pmix[…]` or `raw:…`
//! string raw with its NUL and no length, a `blob:` block from the
//! compress component, and anything else as a count + STRING unit
//! (bfrops.md §4.14).

use crate::dialect::Release;
use crate::error::{Error, ErrorKind, Result};
use crate::wire::Dec;
use pmix_types::{PString, Regex};

const BLOB_PREFIX: &[u8] = b"blob";
/// Bytes libpmix 4.2.2 copies for a blob beyond the "size=…:" field: it
/// computes 27 + strlen("size=N:") + 1, i.e. the header plus 5 bytes.
const BLOB_FIXED: usize = 27;
const SIZE_FIELD_AT: usize = 22; // after "blob:\0" and "component=zlib:\0"

fn is_text_form(b: &[u8]) -> bool {
    b.starts_with(b"pmix") || b.starts_with(b"raw:")
}

fn nul_at(b: &[u8]) -> Option<usize> {
    b.iter().position(|&c| c == 0)
}

/// The length a release gives a blob that starts at `b`, if its header is
/// whole: libpmix 4.2.2 copies the header plus 5 bytes whatever the size
/// field says; 7.0 copies the header plus the `N` of "size=N:"
/// (`v7.0.0a1/compress-*/REGEX_gen_nodes100`: 32 + 116 bytes for zstd).
fn blob_len(b: &[u8], release: Release) -> Option<usize> {
    let size_field = b.get(SIZE_FIELD_AT..)?;
    let l = nul_at(size_field)?;
    match release {
        Release::UpTo6 | Release::V61 => Some(BLOB_FIXED + l + 1),
        Release::V7 => {
            let n = size_field[..l].strip_prefix(b"size=")?.strip_suffix(b":")?;
            if n.is_empty() || n.len() > 10 || !n.iter().all(u8::is_ascii_digit) {
                return None;
            }
            let n: usize = std::str::from_utf8(n).ok()?.parse().ok()?;
            (SIZE_FIELD_AT + l + 1).checked_add(n)
        }
    }
}

pub(crate) fn check_text_form(b: &[u8]) -> Result<(), ErrorKind> {
    if is_text_form(b) {
        Ok(())
    } else {
        Err(ErrorKind::Invalid(
            "a REGEX text must start with \"pmix\" or \"raw:\"".into(),
        ))
    }
}

pub(crate) fn check_blob_form(b: &[u8], release: Release) -> Result<(), ErrorKind> {
    if b.starts_with(BLOB_PREFIX) && blob_len(b, release) == Some(b.len()) {
        Ok(())
    } else {
        Err(ErrorKind::Invalid(
            "a REGEX blob must be a whole \"blob:\" block".into(),
        ))
    }
}

pub(crate) fn unpack(d: &mut Dec) -> Result<Regex> {
    let at = d.pos();
    let head = d.peek(4);
    if is_text_form(head) {
        let rest = d.peek(d.remaining());
        let n = nul_at(rest)
            .ok_or_else(|| Error::new(ErrorKind::BadString("REGEX text without NUL"), at))?;
        let text = d.take(n)?;
        d.u8()?;
        let s = PString::from_bytes(text)
            .map_err(|_| Error::new(ErrorKind::BadString("REGEX text"), at))?;
        return Ok(Regex::Text(s));
    }
    if head == BLOB_PREFIX {
        let rest = d.peek(d.remaining());
        let n = blob_len(rest, d.release).ok_or_else(|| {
            Error::new(
                ErrorKind::ReadPastEnd {
                    needed: (SIZE_FIELD_AT + 1) as u64,
                    remaining: rest.len() as u64,
                },
                at,
            )
        })?;
        return Ok(Regex::Blob(d.take_bytes(n)?));
    }
    let count = d.i32()?;
    if count != 1 {
        return Err(Error::new(
            ErrorKind::Invalid(format!("a packed REGEX string has count {count}, not 1")),
            at,
        ));
    }
    Ok(Regex::Packed(d.str()?))
}
