//! FLOAT and DOUBLE travel as the text glibc's `printf("%f")` produces,
//! packed as a STRING (bfrops.md §4.3); receivers parse it with
//! `strtof`/`strtod`.
//!
//! Rust's `{:.6}` formats the exact binary value with round-half-to-even,
//! which is what glibc does in the default rounding mode; the test
//! `float_vs_glibc` compares the two through FFI on millions of values.
//! Only the spellings of NaN and infinity differ and are mapped here.

/// Why a received text is not a number.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a floating-point number: {0:?}")]
pub struct FloatError(pub String);

fn format(v: f64) -> String {
    pmix_types::cfmt::percent_f(v)
}

/// `printf("%f", v)` for a float (C promotes it to double first).
pub fn format_f32(v: f32) -> String {
    format(v as f64)
}

/// `printf("%f", v)`.
pub fn format_f64(v: f64) -> String {
    format(v)
}

fn parse(b: &[u8]) -> Result<f64, FloatError> {
    let bad = || FloatError(String::from_utf8_lossy(b).into_owned());
    let s = std::str::from_utf8(b).map_err(|_| bad())?;
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let lower = body.to_ascii_lowercase();
    let mag = if lower == "nan" || (lower.starts_with("nan(") && lower.ends_with(')')) {
        f64::NAN
    } else if lower == "inf" || lower == "infinity" {
        f64::INFINITY
    } else if body.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        body.parse::<f64>().map_err(|_| bad())?
    } else {
        return Err(bad());
    };
    Ok(if neg { -mag } else { mag })
}

/// `strtod` on text a PMIx peer sent. Unlike C, trailing garbage and an
/// empty text are refused instead of being ignored or read as 0.
pub fn parse_f64(b: &[u8]) -> Result<f64, FloatError> {
    parse(b)
}

/// `strtof`: parsed as a double, then rounded once to float (as the
/// decimal text has at most a few significant digits more than a float,
/// the double rounding cannot change the result for text `%f` produced).
pub fn parse_f32(b: &[u8]) -> Result<f32, FloatError> {
    let s =
        std::str::from_utf8(b).map_err(|_| FloatError(String::from_utf8_lossy(b).into_owned()))?;
    // parse directly as f32 where Rust can, which rounds exactly once
    match s.parse::<f32>() {
        Ok(v) if !v.is_nan() => Ok(v),
        _ => parse(b).map(|v| v as f32),
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
        assert_eq!(parse_f32(b"123456792.000000"), Ok(123456789.0));
        assert!(parse_f64(b"1.5x").is_err());
        assert!(parse_f64(b"").is_err());
        assert!(parse_f64(b"-").is_err());
    }
}
