//! FLOAT and DOUBLE travel as the text glibc's `printf("%f")` produces,
//! packed as a STRING (bfrops.md §4.3); receivers parse it with
//! `strtof`/`strtod`.
//!
//! Formatting: Rust's `{:.6}` expands the exact binary value and rounds it
//! half-to-even, which is what glibc does in the default rounding mode
//! (`float_vs_glibc` compares the two through FFI: edge values, exact ties
//! and random bit patterns). Only the spellings of NaN and infinity differ;
//! `pmix_types::cfmt::percent_f` maps them and is shared with
//! `PMIx_Data_print`.
//!
//! Parsing accepts exactly the texts `strtod`/`strtof` convert *in full*
//! (C locale): optional leading white space, optional sign, then a decimal
//! number with optional exponent, a hexadecimal number (`0x1.8p3`),
//! `inf`/`infinity` or `nan`/`nan(chars)`, case-insensitively. Results are
//! correctly rounded (nearest, ties to even) like glibc's. Divergences,
//! all on texts `%f` never produces: C ignores trailing garbage and reads
//! an empty or unparsable text as 0; we refuse them. glibc puts the number
//! in `nan(123)` into the NaN's payload; we return the default quiet NaN
//! (with the sign).

/// Why a received text is not a number.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a floating-point number: {0:?}")]
pub struct FloatError(pub String);

/// `printf("%f", v)` for a float (C promotes it to double first; the
/// promotion is exact).
pub fn format_f32(v: f32) -> String {
    pmix_types::cfmt::percent_f(f64::from(v))
}

/// `printf("%f", v)`.
pub fn format_f64(v: f64) -> String {
    pmix_types::cfmt::percent_f(v)
}

/// `strtod` on a whole text a PMIx peer sent (see the module notes).
pub fn parse_f64(b: &[u8]) -> Result<f64, FloatError> {
    Ok(match scan(b).ok_or_else(|| bad(b))? {
        Num::Dec(neg, s) => apply_sign(neg, s.parse::<f64>().map_err(|_| bad(b))?),
        Num::Hex(neg, h) => f64::from_bits(h.round(&F64)).copysign(sign(neg)),
        Num::Inf(neg) => f64::INFINITY.copysign(sign(neg)),
        Num::Nan(neg) => f64::NAN.copysign(sign(neg)),
    })
}

/// `strtof` on a whole text: rounded once, directly to float (parsing as
/// double first and narrowing could round twice).
pub fn parse_f32(b: &[u8]) -> Result<f32, FloatError> {
    Ok(match scan(b).ok_or_else(|| bad(b))? {
        Num::Dec(neg, s) => apply_sign(neg, s.parse::<f32>().map_err(|_| bad(b))?),
        Num::Hex(neg, h) => f32::from_bits(h.round(&F32) as u32).copysign(sign(neg) as f32),
        Num::Inf(neg) => f32::INFINITY.copysign(sign(neg) as f32),
        Num::Nan(neg) => f32::NAN.copysign(sign(neg) as f32),
    })
}

fn bad(b: &[u8]) -> FloatError {
    FloatError(String::from_utf8_lossy(b).into_owned())
}

fn sign(neg: bool) -> f64 {
    if neg {
        -1.0
    } else {
        1.0
    }
}

fn apply_sign<T: std::ops::Neg<Output = T>>(neg: bool, v: T) -> T {
    if neg {
        -v
    } else {
        v
    }
}

/// A syntactically valid number: its sign and what follows the sign.
enum Num<'a> {
    /// Decimal digits, '.', exponent: a text Rust's parser takes as is.
    Dec(bool, &'a str),
    Hex(bool, HexNum),
    Inf(bool),
    Nan(bool),
}

/// Classify `b` by `strtod`'s grammar; `None` unless all of it is one number.
fn scan(b: &[u8]) -> Option<Num<'_>> {
    // C's isspace in the "C" locale
    let start = b
        .iter()
        .position(|c| !matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'))?;
    let mut s = &b[start..];
    let neg = s[0] == b'-';
    if matches!(s[0], b'-' | b'+') {
        s = &s[1..];
    }
    let lower = |t: &[u8]| t.to_ascii_lowercase();
    if lower(s) == b"inf" || lower(s) == b"infinity" {
        return Some(Num::Inf(neg));
    }
    if s.len() >= 3 && lower(&s[..3]) == b"nan" {
        let rest = &s[3..];
        let ok = rest.is_empty()
            || (rest.len() >= 2
                && rest[0] == b'('
                && rest[rest.len() - 1] == b')'
                && rest[1..rest.len() - 1]
                    .iter()
                    .all(|c| c.is_ascii_alphanumeric() || *c == b'_'));
        return ok.then_some(Num::Nan(neg));
    }
    if s.len() > 2 && s[0] == b'0' && (s[1] | 0x20) == b'x' {
        return HexNum::parse(&s[2..]).map(|h| Num::Hex(neg, h));
    }
    // decimal: digits [. digits] [e [sign] digits], at least one digit
    let digits = |t: &[u8]| t.iter().take_while(|c| c.is_ascii_digit()).count();
    let int = digits(s);
    let mut i = int;
    let mut frac = 0;
    if s.get(i) == Some(&b'.') {
        frac = digits(&s[i + 1..]);
        i += 1 + frac;
    }
    if int + frac == 0 {
        return None;
    }
    if matches!(s.get(i), Some(b'e' | b'E')) {
        let j = i + 1 + usize::from(matches!(s.get(i + 1), Some(b'+' | b'-')));
        let n = digits(&s[j.min(s.len())..]);
        if n == 0 {
            return None; // strtod would stop before the 'e': trailing garbage
        }
        i = j + n;
    }
    if i != s.len() {
        return None;
    }
    // all ASCII, so this cannot fail
    std::str::from_utf8(s).ok().map(|t| Num::Dec(neg, t))
}

/// A hexadecimal significand: the value is (`mant` + a fraction below one
/// unit when `sticky`) × 2^`exp2`.
struct HexNum {
    mant: u64,
    sticky: bool,
    exp2: i64,
}

/// An IEEE binary format: `prec` significand bits (with the hidden one),
/// the exponent of the smallest and of the largest normal number.
struct Format {
    prec: i64,
    emin: i64,
    emax: i64,
}

const F64: Format = Format {
    prec: 53,
    emin: -1022,
    emax: 1023,
};
const F32: Format = Format {
    prec: 24,
    emin: -126,
    emax: 127,
};

/// Exponents beyond this magnitude only saturate (the value is then 0 or
/// infinite whatever the digits): keeps the arithmetic far from overflow.
const EXP_CLAMP: i64 = 1 << 40;

impl HexNum {
    /// What follows "0x": hex digits with an optional point (at least one
    /// digit), then an optional binary exponent "p[sign]digits".
    fn parse(s: &[u8]) -> Option<HexNum> {
        let mut h = HexNum {
            mant: 0,
            sticky: false,
            exp2: 0,
        };
        let mut i = 0;
        let mut ndigits = 0;
        let mut seen_point = false;
        while i < s.len() {
            let c = s[i];
            if c == b'.' && !seen_point {
                seen_point = true;
            } else if let Some(d) = (c as char).to_digit(16) {
                ndigits += 1;
                if h.mant >> 60 == 0 {
                    h.mant = h.mant << 4 | u64::from(d);
                    if seen_point {
                        h.exp2 -= 4;
                    }
                } else {
                    // no room: the digit only marks the value inexact
                    h.sticky |= d != 0;
                    if !seen_point {
                        h.exp2 += 4;
                    }
                }
            } else {
                break;
            }
            i += 1;
        }
        if ndigits == 0 {
            return None; // strtod reads just the "0": "x..." is garbage
        }
        if i < s.len() {
            if s[i] | 0x20 != b'p' {
                return None;
            }
            i += 1;
            let neg = match s.get(i) {
                Some(b'-') => {
                    i += 1;
                    true
                }
                Some(b'+') => {
                    i += 1;
                    false
                }
                _ => false,
            };
            let digits = &s[i..];
            if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
                return None;
            }
            let e = digits
                .iter()
                .fold(0i64, |e, d| (e * 10 + i64::from(d - b'0')).min(EXP_CLAMP));
            h.exp2 = h.exp2.clamp(-EXP_CLAMP, EXP_CLAMP) + if neg { -e } else { e };
        }
        Some(h)
    }

    /// The bits of the nearest `f` (ties to even), without sign.
    fn round(&self, f: &Format) -> u64 {
        if self.mant == 0 {
            return 0;
        }
        let top = 63 - i64::from(self.mant.leading_zeros());
        let e = self.exp2 + top; // 2^e <= value < 2^(e+1)
        let inf = ((f.emax - f.emin + 2) as u64) << (f.prec - 1);
        if e > f.emax {
            return inf;
        }
        // exponent of the last kept bit; fixed below the normal range
        let ulp = e.max(f.emin) - (f.prec - 1);
        let shift = ulp - self.exp2;
        let q = if shift <= 0 {
            self.mant << -shift // exact: at most prec bits
        } else if shift > 64 {
            0 // below half the smallest step: rounds to zero
        } else {
            let q = if shift == 64 { 0 } else { self.mant >> shift };
            let rem = if shift == 64 {
                self.mant
            } else {
                self.mant & ((1u64 << shift) - 1)
            };
            let half = 1u64 << (shift - 1);
            let up = rem > half || (rem == half && (self.sticky || q & 1 == 1));
            q + u64::from(up)
        };
        // the carry of a round-up flows into the exponent field, up to
        // the pattern of infinity
        (((ulp - (f.emin - f.prec + 1)) as u64) << (f.prec - 1)) + q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bfrops_4_3_vectors() {
        assert_eq!(format_f32(1.5), "1.500000");
        assert_eq!(format_f64(0.1), "0.100000");
        assert_eq!(format_f32(1e-7), "0.000000");
        assert_eq!(format_f32(123456789.0), "123456792.000000");
        assert_eq!(format_f64(-0.0), "-0.000000");
        assert_eq!(format_f64(f64::INFINITY), "inf");
        assert_eq!(format_f64(f64::NAN), "nan");
        assert_eq!(format_f64(-f64::NAN), "-nan");
    }

    #[test]
    fn parse_accepts_what_printf_writes() {
        assert_eq!(parse_f64(b"1.500000"), Ok(1.5));
        assert_eq!(parse_f64(b"-inf"), Ok(f64::NEG_INFINITY));
        assert!(parse_f64(b"-nan").unwrap().is_sign_negative());
        assert!(parse_f32(b"-nan").unwrap().is_sign_negative());
        assert!(parse_f32(b"nan").unwrap().is_sign_positive());
        assert_eq!(parse_f32(b"123456792.000000"), Ok(123456789.0));
        assert!(parse_f64(b"-0.000000").unwrap().is_sign_negative());
    }

    #[test]
    fn parse_takes_the_rest_of_strtod_syntax() {
        assert_eq!(parse_f64(b"  \t+1e3"), Ok(1000.0));
        assert_eq!(parse_f64(b"1."), Ok(1.0));
        assert_eq!(parse_f64(b".5E-1"), Ok(0.05));
        assert_eq!(parse_f64(b"0x1.8p1"), Ok(3.0));
        assert_eq!(parse_f64(b"-0X.8"), Ok(-0.5));
        assert_eq!(parse_f64(b"0x1p-1074"), Ok(5e-324));
        assert_eq!(parse_f64(b"0x1p-1075"), Ok(0.0)); // a tie: to even (0)
        assert_eq!(parse_f64(b"0x1.8p-1074"), Ok(1e-323)); // a tie: to even (2)
        assert_eq!(parse_f64(b"0x1p1024"), Ok(f64::INFINITY));
        assert_eq!(parse_f64(b"0x1.fffffffffffff8p1023"), Ok(f64::INFINITY));
        assert_eq!(parse_f32(b"0x1.000001p0"), Ok(1.0)); // tie, even
        assert_eq!(parse_f32(b"0x1.0000011p0"), Ok(1.0 + f32::EPSILON));
        assert_eq!(
            parse_f32(b"0x1.00000100000000000000000001p0"),
            Ok(1.0 + f32::EPSILON)
        );
        assert_eq!(parse_f32(b"InFiNiTy"), Ok(f32::INFINITY));
        assert!(parse_f64(b"nan(0x1f_a)").unwrap().is_nan());
    }

    #[test]
    fn parse_refuses_what_strtod_would_not_read_in_full() {
        for t in [
            &b""[..],
            b" ",
            b"-",
            b".",
            b"1.5x",
            b"1e",
            b"1e+",
            b"0x",
            b"0x.p1",
            b"0x1p",
            b"infin",
            b"nan(",
            b"nan(a-b)",
            b"1.0 ",
            b"1,5",
            b"--1",
            b"+-1",
            b"1\0",
            b"\xff",
        ] {
            assert!(parse_f64(t).is_err(), "{t:?}");
            assert!(parse_f32(t).is_err(), "{t:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_bytes_parse_or_err(b in proptest::collection::vec(proptest::num::u8::ANY, 0..24)) {
            // the grammar does not depend on the target type
            proptest::prop_assert_eq!(parse_f64(&b).is_ok(), parse_f32(&b).is_ok());
        }
    }
}
