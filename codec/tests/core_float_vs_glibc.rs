//! FLOAT/DOUBLE text against glibc itself, called through FFI: our "%f"
//! against `snprintf("%f")`, our parsers against `strtod`/`strtof` (a text
//! must be accepted exactly when C converts all of it, to the same bits),
//! and the stability property the codec relies on: format(parse(format(x)))
//! is format(x), so a value decoded from libpmix re-encodes to the same
//! bytes.

use pmix_codec::float::{format_f32, format_f64, parse_f32, parse_f64};
use proptest::prelude::*;
use std::ffi::{c_char, c_int, CStr, CString};

extern "C" {
    fn snprintf(buf: *mut c_char, n: usize, fmt: *const c_char, ...) -> c_int;
    fn strtod(nptr: *const c_char, endptr: *mut *mut c_char) -> f64;
    fn strtof(nptr: *const c_char, endptr: *mut *mut c_char) -> f32;
}

/// glibc's `snprintf("%f", x)`.
fn glibc(x: f64) -> String {
    // "%f" of f64::MAX is 316 bytes
    let mut b = vec![0u8; 512];
    // SAFETY: snprintf writes at most b.len() bytes, NUL included, into b;
    // "%f" consumes exactly one double argument.
    let n = unsafe { snprintf(b.as_mut_ptr().cast(), b.len(), c"%f".as_ptr(), x) };
    assert!(n > 0 && (n as usize) < b.len(), "snprintf returned {n}");
    // SAFETY: snprintf NUL-terminated the buffer.
    unsafe { CStr::from_ptr(b.as_ptr().cast()) }
        .to_str()
        .unwrap()
        .to_owned()
}

/// What C's strtod/strtof make of `t`: the value if it converts all of
/// the text, `None` when it stops early (trailing garbage) or converts
/// nothing.
fn c_parse<T>(t: &str, f: unsafe extern "C" fn(*const c_char, *mut *mut c_char) -> T) -> Option<T> {
    let c = CString::new(t).expect("no NUL in test texts");
    let mut end: *mut c_char = std::ptr::null_mut();
    // SAFETY: c is a valid NUL-terminated string; end receives a pointer into it.
    let v = unsafe { f(c.as_ptr(), &mut end) };
    // SAFETY: end points into c (at most at its NUL).
    let used = unsafe { end.offset_from(c.as_ptr()) } as usize;
    (used == t.len() && used > 0).then_some(v)
}

fn same_f64(a: f64, b: f64) -> bool {
    // NaN payloads are not reproduced (documented); NaN-ness and sign are
    a.to_bits() == b.to_bits()
        || (a.is_nan() && b.is_nan() && a.is_sign_negative() == b.is_sign_negative())
}

fn same_f32(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits()
        || (a.is_nan() && b.is_nan() && a.is_sign_negative() == b.is_sign_negative())
}

/// Our parsers against glibc's on one text.
fn check_parse(t: &str) -> Result<(), TestCaseError> {
    let ours = parse_f64(t.as_bytes());
    match c_parse(t, strtod) {
        Some(c) => prop_assert!(
            ours.as_ref().is_ok_and(|&v| same_f64(v, c)),
            "strtod({t:?}) = {c:e} ({:#x}), ours {ours:?}",
            c.to_bits()
        ),
        None => prop_assert!(ours.is_err(), "strtod refuses {t:?}, ours {ours:?}"),
    }
    let ours = parse_f32(t.as_bytes());
    match c_parse(t, strtof) {
        Some(c) => prop_assert!(
            ours.as_ref().is_ok_and(|&v| same_f32(v, c)),
            "strtof({t:?}) = {c:e} ({:#x}), ours {ours:?}",
            c.to_bits()
        ),
        None => prop_assert!(ours.is_err(), "strtof refuses {t:?}, ours {ours:?}"),
    }
    Ok(())
}

#[test]
fn edge_values_match_glibc() {
    let mut cases: Vec<f64> = vec![
        0.0000005,
        0.0000015,
        0.0000025,
        0.0000035,
        0.0000045,
        0.0000055,
        0.0000065,
        2.5e-7,
        f64::from_bits(5e-7f64.to_bits() - 1),
        f64::from_bits(5e-7f64.to_bits() + 1),
        1e-7,
        0.1,
        0.5,
        1.5,
        2.5,
        0.125,
        1.0000005,
        999999.9999995,
        9.9999995,
        0.9999995,
        1e15 + 0.5,
        4503599627370495.5, // 2^52 - 0.5
        9007199254740993.0, // 2^53 + 1, rounds to 2^53
        1e21,
        1e22,
        1e23,
        1e100,
        1.7976931348623157e308,
        123456789.0f32 as f64,
        16777217.0f32 as f64,
        f32::MAX as f64,
        f32::MIN as f64,
        f32::MIN_POSITIVE as f64,
        f32::from_bits(1) as f64,
        f32::from_bits(0x007f_ffff) as f64,
        f32::EPSILON as f64,
        f64::MAX,
        f64::MIN,
        f64::MIN_POSITIVE,
        f64::EPSILON,
        f64::from_bits(1),
        f64::from_bits(0x000f_ffff_ffff_ffff),
        -0.0,
        0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        -f64::NAN,
        f64::from_bits(0x7ff0_0000_0000_0001), // signalling NaN
        f64::from_bits(0xfff8_dead_beef_0001), // negative NaN with payload
    ];
    // exact ties at the 6th decimal: odd multiples of 2^-7 = 0.0078125
    // have 7 decimals ending in 5 (round half to even on the exact value)
    for m in (1..=255).step_by(2) {
        let t = m as f64 / 128.0;
        cases.extend([t, -t, t + 1.0, t + 12345.0, t + 4_398_046_511_104.0]);
    }
    // odd multiples of 2^-k for k > 7 are near-ties with more digits
    for k in 8..=30 {
        for m in [1u64, 3, 5, 7, 1001, 99999] {
            cases.push(m as f64 / (1u64 << k) as f64);
        }
    }
    for e in -30..=308 {
        let p = 10f64.powi(e);
        cases.extend([p, 5.0 * p, p * 0.5, -p]);
    }
    for e in -1074..=1023 {
        cases.push(2f64.powi(e));
    }
    for &x in &cases {
        assert_eq!(format_f64(x), glibc(x), "{x:e} ({:#x})", x.to_bits());
        // a float is promoted to double before printf
        let f = x as f32;
        assert_eq!(format_f32(f), glibc(f as f64), "{f:e} ({:#x})", f.to_bits());
    }
}

#[test]
fn bfrops_4_3_table() {
    // the wire texts of bfrops.md §4.3, from glibc itself and from us
    let table: &[(f64, &str)] = &[
        (1.5, "1.500000"),
        (0.1, "0.100000"),
        (1e-7f32 as f64, "0.000000"),
        (123456789.0f32 as f64, "123456792.000000"),
        (-0.0, "-0.000000"),
        (f64::INFINITY, "inf"),
        (f64::NAN, "nan"),
        (-f64::NAN, "-nan"),
    ];
    for &(x, want) in table {
        assert_eq!(glibc(x), want);
        assert_eq!(format_f64(x), want);
    }
    assert_eq!(format_f32(1e-7), "0.000000");
    assert_eq!(format_f32(123456789.0), "123456792.000000");
    assert_eq!(format_f64(f64::MAX).len(), 309 + 7);
}

#[test]
fn precision_is_lost_below_the_thresholds() {
    // the neighbours of 1.0 and of 2^32 print as the same text
    let f = 1.0f32 + f32::EPSILON;
    assert_eq!(glibc(f as f64), "1.000000");
    assert_eq!(parse_f32(format_f32(f).as_bytes()), Ok(1.0));
    let d = 4_294_967_296.0f64;
    let d2 = f64::from_bits(d.to_bits() + 1);
    assert_eq!(glibc(d2), "4294967296.000001");
    let d3 = f64::from_bits(d.to_bits() + 3); // 2^32 + 3 * 2^-20
    assert_eq!(glibc(d3), "4294967296.000003");
    assert_eq!(parse_f64(b"4294967296.000003"), Ok(d3));
    // 2^32 + 10 * 2^-20 = ...0.00000954 and 2^32 + 11 * 2^-20 = ...0.00001049
    let d10 = f64::from_bits(d.to_bits() + 10);
    let d11 = f64::from_bits(d.to_bits() + 11);
    assert_eq!(glibc(d10), "4294967296.000010");
    assert_eq!(glibc(d11), "4294967296.000010");
    assert_eq!(parse_f64(format_f64(d11).as_bytes()), Ok(d10));
    // and a small value vanishes, keeping its sign
    assert_eq!(glibc(-4.9e-7), "-0.000000");
    assert_eq!(
        parse_f64(b"-0.000000").map(f64::to_bits),
        Ok((-0.0f64).to_bits())
    );
}

#[test]
fn texts_of_the_strtod_grammar_match_glibc() {
    let texts = [
        "0", "-0", "+0", "1", "1.", ".5", "-.5", "1e3", "1E+3", "1e-3", "1e", "1e+", "1e-", "1.5e",
        "1.5x", "", " ", "-", "+", ".", "e5", " 1", "\t\n\x0b\x0c\r-2", "1 ", "--1", "+-1", "1,5",
        "0x", "0X", "0x1", "0x1p", "0x1p+", "0x1P-2", "0x.8", "0x8.", "0x.", "0x.p1", "0xg",
        "0x1.8p1", "-0x1.fffffffffffffp1023", "0x1.fffffffffffff8p1023", "0x1p-1074",
        "0x1p-1075", "0x1.8p-1074", "0x1.0000000000001p-1074", "0x0.0000000000001p-1022",
        "0x1.000001p0", "0x1.0000010000000000000000001p0", "0x1.000003p0", "0x1p128",
        "0x1.ffffffp127", "0x1.fffffefp127", "0x1p-149", "0x1p-150", "0x1.8p-150", "0x1p-151",
        "0x0000000000000000000000000001p0", "0x100000000000000000001p-80",
        "0x1p99999999999999999999999", "0x1p-99999999999999999999999", "1e99999999999999999999",
        "1e-99999999999999999999", "inf", "INF", "-Inf", "infinity", "-INFINITY", "infin", "infx",
        "infinityx", "nan", "NaN", "-nan", "nan()", "nan(1)", "nan(abc_9)", "nan(", "nan(a-b)",
        "nan)", "nanx", "in", "n", "0.000000", "-0.000000", "123456792.000000", "3.4028235e38",
        "3.4028236e38", "3.40282357e38", "1.17549435e-38", "1.4e-45", "7e-46", "7.1e-46",
        "2.2250738585072011e-308", "2.4703282292062327e-324", "2.4703282292062328e-324",
        "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497791.000000",
        "0.0000000000000000000000000000000000000000000000000000000000000000000000000001e76",
    ];
    for t in texts {
        check_parse(t).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// Texts from strtod's grammar, with now and then a defect.
fn float_text() -> impl Strategy<Value = String> {
    let space = prop::sample::select(vec!["", "", "", " ", "\t", " \n"]);
    let sign = prop::sample::select(vec!["", "", "-", "+"]);
    let dec = "[0-9]{0,22}(\\.[0-9]{0,22})?([eE][+-]?[0-9]{1,4})?";
    let hex = "0[xX][0-9a-fA-F]{0,18}(\\.[0-9a-fA-F]{0,18})?([pP][+-]?[0-9]{1,5})?";
    let word = "([iI][nN][fF]([iI][nN][iI][tT][yY])?|[nN][aA][nN](\\([a-z0-9_]{0,4}\\))?)";
    let body = prop_oneof![4 => dec, 4 => hex, 1 => word];
    let tail = prop::sample::select(vec!["", "", "", "", "", "", "x", " ", "e", "p1", ".", "("]);
    (space, sign, body, tail).prop_map(|(a, b, c, d)| format!("{a}{b}{c}{d}"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(5_000))]

    #[test]
    fn any_double_matches_glibc(bits in any::<u64>()) {
        let x = f64::from_bits(bits);
        prop_assert_eq!(format_f64(x), glibc(x));
    }

    #[test]
    fn any_float_matches_glibc(bits in any::<u32>()) {
        let x = f32::from_bits(bits);
        prop_assert_eq!(format_f32(x), glibc(x as f64));
    }

    #[test]
    fn exact_and_near_ties_match_glibc(int in 0u64..(1 << 44), m in 0u64..64, k in 0u32..6) {
        // int + (2m+1)/128: an exact tie at the 6th decimal; dividing the
        // odd part by 2^k more gives near-ties with longer expansions
        let x = int as f64 + (2 * m + 1) as f64 / (128u64 << k) as f64;
        prop_assert_eq!(format_f64(x), glibc(x));
        prop_assert_eq!(format_f64(-x), glibc(-x));
        let f = x as f32;
        prop_assert_eq!(format_f32(f), glibc(f as f64));
    }

    #[test]
    fn decimal_boundaries_match_glibc(k in 0i64..2_000_000_000, e in -3i32..10) {
        // (k + 1/2) millionths scaled, computed in binary: just off a tie
        let x = (k as f64 + 0.5) * 1e-6 * 10f64.powi(e);
        prop_assert_eq!(format_f64(x), glibc(x));
        let f = x as f32;
        prop_assert_eq!(format_f32(f), glibc(f as f64));
    }

    #[test]
    fn text_is_stable_through_a_round_trip(bits in any::<u64>(), fbits in any::<u32>()) {
        let t = format_f64(f64::from_bits(bits));
        let back = parse_f64(t.as_bytes()).unwrap();
        prop_assert_eq!(format_f64(back), t.clone());
        // and the value we read is the one strtod reads
        prop_assert!(same_f64(back, c_parse(&t, strtod).unwrap()));
        let t = format_f32(f32::from_bits(fbits));
        let back = parse_f32(t.as_bytes()).unwrap();
        prop_assert_eq!(format_f32(back), t.clone());
        prop_assert!(same_f32(back, c_parse(&t, strtof).unwrap()));
    }

    #[test]
    fn no_loss_from_16_for_floats_and_2_pow_33_for_doubles(
        f in (16f32..f32::MAX).prop_union(-f32::MAX..-16f32),
        d in (8_589_934_592f64..f64::MAX).prop_union(-f64::MAX..-8_589_934_592f64),
    ) {
        // a step between neighbours above 1e-6: the 6 decimals single
        // out the value (spec-notes/float.md)
        prop_assert_eq!(parse_f32(format_f32(f).as_bytes()).unwrap(), f);
        prop_assert_eq!(parse_f64(format_f64(d).as_bytes()).unwrap(), d);
    }

    #[test]
    fn parsers_match_strtod_and_strtof(t in float_text()) {
        check_parse(&t)?;
    }

    #[test]
    fn random_ascii_matches_strtod(t in "[ -~]{0,12}") {
        check_parse(&t)?;
    }
}
