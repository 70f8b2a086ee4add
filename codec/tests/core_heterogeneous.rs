//! Where byte order and word size show in the codec (issue 28,
//! spec-notes/heterogeneous.md): what the wire fixes is the same bytes on
//! any host (these tests run natively and, in .ci/bigendian, on s390x),
//! and the integers whose width is the sender's C ABI (size_t, pid_t,
//! int in the fixed dialects, announced by a type tag) convert when the
//! value fits and are refused with a typed error when it does not.

use pmix_codec::{decode, encode, BufferType, Dialect, ErrorKind, Format};
use pmix_types::{DataType, Timeval, Value, F32, F64};

fn v3() -> Format {
    Format::new(Dialect::V3, BufferType::NonDesc)
}

fn v41() -> Format {
    Format::new(Dialect::V41, BufferType::NonDesc)
}

/// The unit of one `v` of `ty`, its item replaced: the last `item.len()`
/// bytes of the encoding must be `item`, and become `with`.
fn swap_item(fmt: &Format, ty: DataType, v: Value, item: &[u8], with: &[u8]) -> Vec<u8> {
    let mut b = encode(fmt, ty, &[v]).unwrap();
    assert!(
        b.ends_with(item),
        "{ty:?}: {b:02x?} does not end in {item:02x?}"
    );
    b.truncate(b.len() - item.len());
    b.extend_from_slice(with);
    b
}

#[test]
fn fixed_width_integers_are_big_endian_on_every_host() {
    let b = encode(&v3(), DataType::Uint32, &[Value::Uint32(0x0102_0304)]).unwrap();
    assert!(b.ends_with(&[1, 2, 3, 4]), "{b:02x?}");
    let b = encode(&v3(), DataType::Int64, &[Value::Int64(-2)]).unwrap();
    assert!(
        b.ends_with(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe]),
        "{b:02x?}"
    );
    // SIZE (size_t) as an LP64 sender tags it: UINT64 (15), 8 bytes
    let b = encode(&v3(), DataType::Size, &[Value::Size(5)]).unwrap();
    assert!(b.ends_with(&[0, 0x0f, 0, 0, 0, 0, 0, 0, 0, 5]), "{b:02x?}");
}

#[test]
fn flex_integers_are_base128_little_endian_groups_on_every_host() {
    // bfrops.md §3.2: 300 = 0b10_0101100 → ac 02
    let b = encode(&v41(), DataType::Uint32, &[Value::Uint32(300)]).unwrap();
    assert!(b.ends_with(&[0xac, 0x02]), "{b:02x?}");
    // PID keeps its UINT32 tag even with flex128: pid 1234 → 0e d2 09
    let b = encode(&v41(), DataType::Pid, &[Value::Pid(1234)]).unwrap();
    assert!(b.ends_with(&[0x0e, 0xd2, 0x09]), "{b:02x?}");
}

#[test]
fn time_and_timeval_are_64_bit_whatever_time_t_is() {
    // TIME: time_t cast to uint64; TIMEVAL: both halves as int64
    let b = encode(&v3(), DataType::Time, &[Value::Time(7)]).unwrap();
    assert!(b.ends_with(&[0, 0, 0, 0, 0, 0, 0, 7]), "{b:02x?}");
    let tv = Timeval { sec: 5, usec: 7 };
    let b = encode(&v3(), DataType::Timeval, &[Value::Timeval(tv)]).unwrap();
    assert!(
        b.ends_with(&[0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 7]),
        "{b:02x?}"
    );
    let b = encode(&v41(), DataType::Timeval, &[Value::Timeval(tv)]).unwrap();
    assert!(b.ends_with(&[0x0a, 0x0e]), "{b:02x?}");
}

#[test]
fn floats_travel_as_text_not_as_host_bytes() {
    // printf("%f"): the IEEE bytes (whose order differs by host) never travel
    let d = encode(&v41(), DataType::Double, &[Value::Double(F64(1.5))]).unwrap();
    assert!(d.ends_with(b"\x121.500000\0"), "{d:02x?}");
    assert_eq!(
        decode(&v41(), DataType::Double, &d).unwrap(),
        vec![Value::Double(F64(1.5))]
    );
    let f = encode(&v41(), DataType::Float, &[Value::Float(F32(-0.25))]).unwrap();
    assert!(f.ends_with(b"-0.250000\0"), "{f:02x?}");
}

#[test]
fn a_32_bit_senders_size_t_converts() {
    // a sender whose size_t is 32 bits tags SIZE as UINT32 (14), 4 bytes
    let b = swap_item(
        &v3(),
        DataType::Size,
        Value::Size(5),
        &[0, 0x0f, 0, 0, 0, 0, 0, 0, 0, 5],
        &[0, 0x0e, 0, 0, 0, 5],
    );
    assert_eq!(
        decode(&v3(), DataType::Size, &b).unwrap(),
        vec![Value::Size(5)]
    );
}

#[test]
fn an_ilp64_senders_int_converts_when_it_fits_and_is_refused_when_not() {
    // a sender whose int is 64 bits tags INT as INT64 (10), 8 bytes
    let item = [0, 0x09, 0, 0, 0, 5];
    let b = swap_item(
        &v3(),
        DataType::Int,
        Value::Int(5),
        &item,
        &[0, 0x0a, 0, 0, 0, 0, 0, 0, 0, 5],
    );
    assert_eq!(
        decode(&v3(), DataType::Int, &b).unwrap(),
        vec![Value::Int(5)]
    );
    let b = swap_item(
        &v3(),
        DataType::Int,
        Value::Int(5),
        &item,
        &[0, 0x0a, 0, 0, 0, 1, 0, 0, 0, 0],
    );
    let e = decode(&v3(), DataType::Int, &b).expect_err("2^32 is no C int here");
    assert!(matches!(e.kind, ErrorKind::ValueOutOfRange { .. }), "{e}");
}

#[test]
fn a_pid_tagged_signed_converts() {
    // pid_t is signed in C; a sender that tags it INT32 (9) is read alike
    let b = swap_item(
        &v3(),
        DataType::Pid,
        Value::Pid(1234),
        &[0, 0x0e, 0, 0, 0x04, 0xd2],
        &[0, 0x09, 0, 0, 0x04, 0xd2],
    );
    assert_eq!(
        decode(&v3(), DataType::Pid, &b).unwrap(),
        vec![Value::Pid(1234)]
    );
}
