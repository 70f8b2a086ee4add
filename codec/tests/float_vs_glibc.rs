//! Our "%f" text against glibc's own snprintf, called through FFI, and the
//! stability property the codec relies on: format(parse(format(x))) is
//! format(x), so a value decoded from libpmix re-encodes to the same bytes.

use pmix_codec::float::{format_f32, format_f64, parse_f32, parse_f64};
use proptest::prelude::*;
use std::ffi::{c_char, c_int, CStr};

extern "C" {
    fn snprintf(buf: *mut c_char, n: usize, fmt: *const c_char, ...) -> c_int;
}

fn glibc(x: f64) -> String {
    let mut b = vec![0u8; 400];
    // SAFETY: the buffer is 400 bytes and snprintf writes at most n bytes; "%f" takes one double.
    unsafe {
        snprintf(b.as_mut_ptr() as *mut c_char, b.len(), c"%f".as_ptr(), x);
        CStr::from_ptr(b.as_ptr() as *const c_char)
            .to_string_lossy()
            .into_owned()
    }
}

#[test]
fn edge_values_match_glibc() {
    let cases: &[f64] = &[
        0.0000005,
        0.0000015,
        0.0000025,
        0.0000045,
        2.5e-7,
        1e-7,
        0.1,
        0.5,
        1.5,
        2.5,
        1e22,
        1e23,
        123456789.0f32 as f64,
        f32::MAX as f64,
        f32::MIN_POSITIVE as f64,
        f64::MAX,
        f64::MIN,
        f64::MIN_POSITIVE,
        5e-324,
        -0.0,
        0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        -f64::NAN,
    ];
    for &x in cases {
        assert_eq!(format_f64(x), glibc(x), "{x:e}");
    }
    for &x in &[
        1e-7f32,
        1.5,
        0.1,
        f32::MAX,
        f32::MIN_POSITIVE,
        1e-45,
        -3.25,
        16777217.0,
    ] {
        assert_eq!(format_f32(x), glibc(x as f64), "{x:e}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]

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
    fn text_is_stable_through_a_round_trip(bits in any::<u64>(), fbits in any::<u32>()) {
        let t = format_f64(f64::from_bits(bits));
        prop_assert_eq!(format_f64(parse_f64(t.as_bytes()).unwrap()), t);
        let t = format_f32(f32::from_bits(fbits));
        prop_assert_eq!(format_f32(parse_f32(t.as_bytes()).unwrap()), t);
    }
}
