//! Shared test support: proptest strategies for arbitrary valid values of
//! every PMIx data type in every dialect, the formats to try, and the logic
//! of the fuzz targets (`targets`, also compiled into fuzz/).
#![allow(dead_code)]

pub mod golden;
pub mod requests;

use bytes::Bytes;
use pmix_codec::{BufferType, Dialect, Format};
use pmix_types::*;
use proptest::prelude::*;

/// A C string: no NUL, any other byte (not necessarily UTF-8); mostly
/// short, sometimes long.
pub fn pstr() -> impl Strategy<Value = PString> {
    prop_oneof![
        8 => proptest::collection::vec(1u8..=255, 0..12),
        1 => proptest::collection::vec(1u8..=255, 12..300),
    ]
    .prop_map(|b| PString::from_bytes(&b).unwrap())
}
/// A string or NULL.
pub fn ostr() -> impl Strategy<Value = Option<PString>> {
    proptest::option::of(pstr())
}
/// A namespace: at most 255 bytes (pmix_nspace_t holds 256 with the NUL).
pub fn nspace() -> impl Strategy<Value = Nspace> {
    prop_oneof![
        4 => proptest::collection::vec(1u8..=255, 0..16),
        1 => proptest::collection::vec(1u8..=255, 0..=255),
        1 => Just(vec![b'n'; 255]),
    ]
    .prop_map(|b| Nspace::from_bytes(&b).unwrap())
}
/// A key: at most 511 bytes (pmix_key_t holds 512 with the NUL).
pub fn key() -> impl Strategy<Value = Key> {
    prop_oneof![
        6 => pstr().prop_map(|s| Key::new(s).unwrap()),
        1 => proptest::collection::vec(1u8..=255, 0..=511).prop_map(|b| Key::from_bytes(&b).unwrap()),
        1 => Just(Key::from_bytes(&[b'k'; 511]).unwrap()),
    ]
}
pub fn bytes() -> impl Strategy<Value = Bytes> {
    proptest::collection::vec(any::<u8>(), 0..40).prop_map(Bytes::from)
}
pub fn hex() -> impl Strategy<Value = Hex> {
    bytes().prop_map(Hex)
}
pub fn proc_() -> impl Strategy<Value = Proc> {
    (nspace(), any::<u32>()).prop_map(|(nspace, rank)| Proc { nspace, rank })
}
pub fn tv() -> impl Strategy<Value = Timeval> {
    (any::<i64>(), any::<i64>()).prop_map(|(sec, usec)| Timeval { sec, usec })
}

/// Whether `printf("%f")` text of `x` reads back as `x` (Rust's `{:.6}`
/// rounds the exact binary value half-to-even, as glibc does).
pub fn f32_survives_text(x: f32) -> bool {
    let t = format!("{:.6}", x as f64);
    t.parse::<f32>().map(|y| y.to_bits() == x.to_bits()) == Ok(true)
}
pub fn f64_survives_text(x: f64) -> bool {
    let t = format!("{:.6}", x);
    t.parse::<f64>().map(|y| y.to_bits() == x.to_bits()) == Ok(true)
}

/// Floats that survive "%f" text: at most 6 decimals, moderate magnitude
/// (filtered by the text test above), plus zero, -0 and the infinities.
/// No NaN: the statistics structs compare their f32 fields with `==`.
pub fn f32_() -> impl Strategy<Value = f32> {
    prop_oneof![
        10 => (-10_000_000i64..10_000_000, 0i32..=6)
            .prop_map(|(m, d)| (m as f64 / 10f64.powi(d)) as f32)
            .prop_filter("survives %f", |x| f32_survives_text(*x)),
        1 => prop_oneof![
            Just(0.0f32),
            Just(-0.0f32),
            Just(f32::INFINITY),
            Just(f32::NEG_INFINITY),
            Just(16_777_216.0f32),
        ],
    ]
}
/// FLOAT/DOUBLE values compare bitwise (`F32`/`F64`): NaN of either sign too.
pub fn f32_any() -> impl Strategy<Value = f32> {
    prop_oneof![20 => f32_(), 1 => Just(f32::NAN), 1 => Just(-f32::NAN)]
}
pub fn f64_any() -> impl Strategy<Value = f64> {
    prop_oneof![20 => f64_(), 1 => Just(f64::NAN), 1 => Just(-f64::NAN)]
}
pub fn f64_() -> impl Strategy<Value = f64> {
    prop_oneof![
        10 => (-1_000_000_000_000_000i64..1_000_000_000_000_000, 0i32..=6)
            .prop_map(|(m, d)| m as f64 / 10f64.powi(d))
            .prop_filter("survives %f", |x| f64_survives_text(*x)),
        1 => prop_oneof![
            Just(0.0f64),
            Just(-0.0f64),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            Just(1e15),
        ],
    ]
}
pub fn coord() -> impl Strategy<Value = Coord> {
    (any::<u8>(), proptest::collection::vec(any::<u32>(), 0..4))
        .prop_map(|(view, coord)| Coord { view, coord })
}
pub fn disk() -> impl Strategy<Value = DiskStats> {
    (ostr(), proptest::array::uniform11(any::<u64>()))
        .prop_map(|(disk, c)| DiskStats::from_counters(disk, c))
}
pub fn net() -> impl Strategy<Value = NetStats> {
    (ostr(), proptest::array::uniform6(any::<u64>()))
        .prop_map(|(n, c)| NetStats::from_counters(n, c))
}

/// Types a pmix_value_t can hold (bfrops.md §4.6).
pub fn in_value(t: DataType) -> bool {
    !matches!(
        t,
        DataType::Value
            | DataType::Info
            | DataType::Pdata
            | DataType::App
            | DataType::Kval
            | DataType::Buffer
    )
}

pub fn info(d: Dialect, depth: u32) -> BoxedStrategy<Info> {
    // v12 carries no directives
    let flags = if d == Dialect::V12 {
        Just(0u32).boxed()
    } else {
        any::<u32>().boxed()
    };
    (key(), flags, value_in(d, depth))
        .prop_map(|(key, flags, value)| Info { key, flags, value })
        .boxed()
}

/// A pmix_value_t member registered in dialect `d`.
pub fn value_in(d: Dialect, depth: u32) -> BoxedStrategy<Value> {
    let types: Vec<DataType> = DataType::ALL
        .iter()
        .copied()
        .filter(|t| in_value(*t) && d.value_supports(*t))
        .filter(|t| {
            depth > 0
                || !matches!(
                    t,
                    DataType::DataArray | DataType::Query | DataType::InfoArray
                )
        })
        .collect();
    proptest::sample::select(types)
        .prop_flat_map(move |t| value_of(t, d, depth))
        .boxed()
}

/// An arbitrary value of type `t` for dialect `d`.
pub fn value_of(t: DataType, d: Dialect, depth: u32) -> BoxedStrategy<Value> {
    use DataType as T;
    let next = depth.saturating_sub(1);
    match t {
        T::Undef => Just(Value::Undef).boxed(),
        T::Bool => any::<bool>().prop_map(Value::Bool).boxed(),
        T::Byte => any::<u8>().prop_map(Value::Byte).boxed(),
        T::String => ostr().prop_map(Value::String).boxed(),
        T::Size => any::<u64>().prop_map(Value::Size).boxed(),
        T::Pid => any::<u32>().prop_map(Value::Pid).boxed(),
        T::Int => any::<i32>().prop_map(Value::Int).boxed(),
        T::Int8 => any::<i8>().prop_map(Value::Int8).boxed(),
        T::Int16 => any::<i16>().prop_map(Value::Int16).boxed(),
        T::Int32 => any::<i32>().prop_map(Value::Int32).boxed(),
        T::Int64 => any::<i64>().prop_map(Value::Int64).boxed(),
        T::Uint => any::<u32>().prop_map(Value::Uint).boxed(),
        T::Uint8 => any::<u8>().prop_map(Value::Uint8).boxed(),
        T::Uint16 => any::<u16>().prop_map(Value::Uint16).boxed(),
        T::Uint32 => any::<u32>().prop_map(Value::Uint32).boxed(),
        T::Uint64 => any::<u64>().prop_map(Value::Uint64).boxed(),
        T::Float => f32_any().prop_map(|x| Value::Float(F32(x))).boxed(),
        T::Double => f64_any().prop_map(|x| Value::Double(F64(x))).boxed(),
        T::Timeval => tv().prop_map(Value::Timeval).boxed(),
        T::Time => any::<u64>().prop_map(Value::Time).boxed(),
        T::Status => any::<i32>().prop_map(Value::Status).boxed(),
        T::Value => value_in(d, depth)
            .prop_map(|v| Value::Value(Box::new(v)))
            .boxed(),
        T::Proc => proc_().prop_map(|p| Value::Proc(Box::new(p))).boxed(),
        T::App => (
            ostr(),
            proptest::collection::vec(pstr(), 0..3),
            proptest::collection::vec(pstr(), 0..3),
            if d == Dialect::V12 {
                Just(None).boxed()
            } else {
                ostr().boxed()
            },
            any::<i32>(),
            proptest::collection::vec(info(d, next), 0..2),
        )
            .prop_map(|(cmd, argv, env, cwd, maxprocs, info)| {
                Value::App(Box::new(App {
                    cmd,
                    argv,
                    env,
                    cwd,
                    maxprocs,
                    info,
                }))
            })
            .boxed(),
        T::Info => info(d, depth)
            .prop_map(|i| Value::Info(Box::new(i)))
            .boxed(),
        T::Pdata => (proc_(), key(), value_in(d, depth))
            .prop_map(|(proc, key, value)| Value::Pdata(Box::new(Pdata { proc, key, value })))
            .boxed(),
        T::Buffer => (if d.is_legacy() { 0u8..1 } else { 0u8..3 }, bytes())
            .prop_map(|(buffer_type, bytes)| Value::Buffer(Box::new(Buffer { buffer_type, bytes })))
            .boxed(),
        T::ByteObject => hex().prop_map(|h| Value::ByteObject(Box::new(h))).boxed(),
        T::Kval => (ostr(), value_in(d, depth))
            .prop_map(|(key, value)| Value::Kval(Box::new(Kval { key, value })))
            .boxed(),
        T::Modex => hex().prop_map(|h| Value::Modex(Box::new(h))).boxed(),
        T::Persist => any::<u8>().prop_map(Value::Persist).boxed(),
        T::Pointer => Just(Value::Pointer).boxed(),
        T::Scope => any::<u8>().prop_map(Value::Scope).boxed(),
        T::DataRange => any::<u8>().prop_map(Value::DataRange).boxed(),
        T::Command => any::<u8>().prop_map(Value::Command).boxed(),
        T::InfoDirectives => any::<u32>().prop_map(Value::InfoDirectives).boxed(),
        T::DataTypeCode => any::<u16>().prop_map(Value::DataTypeCode).boxed(),
        T::ProcState => any::<u8>().prop_map(Value::ProcState).boxed(),
        T::ProcInfo => (proc_(), ostr(), ostr(), any::<u32>(), any::<u8>())
            .prop_map(|(proc, hostname, executable_name, pid, state)| {
                Value::ProcInfo(Box::new(ProcInfo {
                    proc,
                    hostname,
                    executable_name,
                    pid,
                    exit_code: 0,
                    state,
                }))
            })
            .boxed(),
        T::DataArray => {
            let elem: Vec<DataType> = DataType::ALL
                .iter()
                .copied()
                .filter(|t| {
                    d.registers(*t)
                        && (next > 0
                            || !matches!(
                                t,
                                T::DataArray
                                    | T::Value
                                    | T::Info
                                    | T::App
                                    | T::Pdata
                                    | T::Query
                                    | T::Kval
                                    | T::InfoArray
                            ))
                })
                .collect();
            // master (v7) sends no size for a typeless array
            let max_undef = if d == Dialect::V7 { 1 } else { 5 };
            prop_oneof![
                (0u64..max_undef)
                    .prop_map(|size| Value::DataArray(Box::new(DataArray::undef(size)))),
                proptest::sample::select(elem).prop_flat_map(move |et| {
                    proptest::collection::vec(value_of(et, d, next), 0..3).prop_map(move |els| {
                        Value::DataArray(Box::new(DataArray::new(et, els).unwrap()))
                    })
                })
            ]
            .boxed()
        }
        T::ProcRank => any::<u32>().prop_map(Value::ProcRank).boxed(),
        T::Query => (
            proptest::collection::vec(pstr(), 0..3),
            proptest::collection::vec(info(d, next), 0..2),
        )
            .prop_map(|(keys, qualifiers)| Value::Query(Box::new(Query { keys, qualifiers })))
            .boxed(),
        T::CompressedString => hex()
            .prop_map(|h| Value::CompressedString(Box::new(h)))
            .boxed(),
        T::AllocDirective => any::<u8>().prop_map(Value::AllocDirective).boxed(),
        T::InfoArray => proptest::collection::vec(info(d, next), 0..2)
            .prop_map(|v| Value::InfoArray(v.into()))
            .boxed(),
        T::IofChannel => any::<u16>().prop_map(Value::IofChannel).boxed(),
        T::Envar => (ostr(), ostr(), any::<u8>())
            .prop_map(|(envar, value, separator)| {
                Value::Envar(Box::new(Envar {
                    envar,
                    value,
                    separator,
                }))
            })
            .boxed(),
        T::Coord => coord().prop_map(|c| Value::Coord(Box::new(c))).boxed(),
        T::RegAttr => (
            ostr(),
            key(),
            any::<u16>(),
            proptest::collection::vec(pstr(), 0..3),
        )
            .prop_map(|(name, string, ty, description)| {
                Value::RegAttr(Box::new(RegAttr {
                    name,
                    string,
                    ty,
                    description,
                }))
            })
            .boxed(),
        T::Regex => prop_oneof![
            pstr().prop_map(|s| {
                let mut t = b"raw:".to_vec();
                t.extend(s.as_bytes());
                Regex::Text(PString::from_bytes(&t).unwrap())
            }),
            pstr().prop_map(|s| {
                let mut t = b"pmix[".to_vec();
                t.extend(s.as_bytes());
                Regex::Text(PString::from_bytes(&t).unwrap())
            }),
            ostr().prop_map(Regex::Packed),
            (1u32..99999).prop_map(move |n| {
                let mut b = b"blob:\0component=zlib:\0".to_vec();
                if d == Dialect::V7 {
                    // 7.0 copies the N bytes the size field names
                    let m = n % 64;
                    b.extend(format!("size={m}:\0").as_bytes());
                    b.extend((0..m).map(|i| i as u8));
                } else {
                    b.extend(format!("size={n}:\0").as_bytes());
                    // 4.2.2 copies the header and 5 bytes, whatever N says
                    b.extend([1, 2, 3, 4, 5]);
                }
                Regex::Blob(Bytes::from(b))
            })
        ]
        .prop_map(|r| Value::Regex(Box::new(r)))
        .boxed(),
        T::JobState => any::<u8>().prop_map(Value::JobState).boxed(),
        T::LinkState => any::<u8>().prop_map(Value::LinkState).boxed(),
        T::ProcCpuset => ostr()
            .prop_map(|cpus| Value::ProcCpuset(Cpuset { cpus }))
            .boxed(),
        T::Geometry => (
            any::<u64>(),
            ostr(),
            ostr(),
            proptest::collection::vec(coord(), 0..3),
        )
            .prop_map(|(fabric, uuid, osname, coordinates)| {
                Value::Geometry(Box::new(Geometry {
                    fabric,
                    uuid,
                    osname,
                    coordinates,
                }))
            })
            .boxed(),
        T::DeviceDist => (ostr(), ostr(), any::<u64>(), any::<u16>(), any::<u16>())
            .prop_map(|(uuid, osname, devtype, mindist, maxdist)| {
                Value::DeviceDist(Box::new(DeviceDist {
                    uuid,
                    osname,
                    devtype,
                    mindist,
                    maxdist,
                }))
            })
            .boxed(),
        T::Endpoint => (ostr(), ostr(), bytes())
            .prop_map(|(uuid, osname, endpt)| {
                Value::Endpoint(Box::new(Endpoint {
                    uuid,
                    osname,
                    endpt,
                }))
            })
            .boxed(),
        T::Topo => prop_oneof![
            Just(Topology {
                xml: None,
                support: Bytes::new()
            }),
            (pstr(), proptest::collection::vec(any::<u8>(), 32..=32)).prop_map(|(x, s)| Topology {
                xml: Some(x),
                support: Bytes::from(s)
            })
        ]
        .prop_map(|t| Value::Topo(Box::new(t)))
        .boxed(),
        T::DevType => any::<u64>().prop_map(Value::DevType).boxed(),
        T::LocType => any::<u16>().prop_map(Value::LocType).boxed(),
        T::CompressedByteObject => hex()
            .prop_map(|h| Value::CompressedByteObject(Box::new(h)))
            .boxed(),
        T::ProcNspace => nspace().prop_map(Value::ProcNspace).boxed(),
        T::ProcStats => (
            ostr(),
            proc_(),
            any::<u32>(),
            ostr(),
            any::<u8>(),
            tv(),
            any::<i32>(),
            any::<u16>(),
            proptest::array::uniform3(f32_()),
            any::<u16>(),
            tv(),
        )
            .prop_map(
                |(
                    node,
                    proc,
                    pid,
                    cmd,
                    state,
                    time,
                    priority,
                    num_threads,
                    [pss, vsize, rss],
                    processor,
                    sample_time,
                )| {
                    Value::ProcStats(Box::new(ProcStats {
                        node,
                        proc,
                        pid,
                        cmd,
                        state,
                        time,
                        percent_cpu: 0.0,
                        priority,
                        num_threads,
                        pss,
                        vsize,
                        rss,
                        peak_vsize: 0.0,
                        processor,
                        sample_time,
                    }))
                },
            )
            .boxed(),
        T::DiskStats => disk().prop_map(|x| Value::DiskStats(Box::new(x))).boxed(),
        T::NetStats => net().prop_map(|x| Value::NetStats(Box::new(x))).boxed(),
        T::NodeStats => (
            ostr(),
            proptest::array::uniform11(f32_()),
            tv(),
            proptest::collection::vec(disk(), 0..2),
            proptest::collection::vec(net(), 0..2),
        )
            .prop_map(|(node, f, sample_time, diskstats, netstats)| {
                Value::NodeStats(Box::new(NodeStats {
                    node,
                    la: f[0],
                    la5: f[1],
                    la15: f[2],
                    total_mem: f[3],
                    free_mem: f[4],
                    buffers: f[5],
                    cached: f[6],
                    swap_cached: f[7],
                    swap_total: f[8],
                    swap_free: f[9],
                    mapped: f[10],
                    sample_time,
                    diskstats,
                    netstats,
                }))
            })
            .boxed(),
        T::DataBuffer => hex().prop_map(|h| Value::DataBuffer(Box::new(h))).boxed(),
        T::StorMedium => any::<u64>().prop_map(Value::StorMedium).boxed(),
        T::StorAccess => any::<u64>().prop_map(Value::StorAccess).boxed(),
        T::StorPersist => any::<u64>().prop_map(Value::StorPersist).boxed(),
        T::StorAccessType => any::<u16>().prop_map(Value::StorAccessType).boxed(),
        T::Device => (ostr(), ostr(), any::<u64>())
            .prop_map(|(uuid, osname, devtype)| {
                Value::Device(Box::new(Device {
                    uuid,
                    osname,
                    devtype,
                }))
            })
            .boxed(),
        T::ResBlockDirective => any::<u8>().prop_map(Value::ResBlockDirective).boxed(),
        T::ResourceUnit => (any::<u64>(), any::<u64>())
            .prop_map(|(devtype, count)| Value::ResourceUnit(ResourceUnit { devtype, count }))
            .boxed(),
        T::NodePid => (ostr(), any::<u32>(), any::<u32>())
            .prop_map(|(hostname, nodeid, pid)| {
                Value::NodePid(Box::new(NodePid {
                    hostname,
                    nodeid,
                    pid,
                }))
            })
            .boxed(),
        T::Regex2 => (ostr(), bytes())
            .prop_map(|(kind, data)| Value::Regex2(Box::new(Regex2 { kind, data })))
            .boxed(),
        T::AllocInherit => any::<u8>().prop_map(Value::AllocInherit).boxed(),
    }
}

/// Every format worth trying: each dialect in both buffer types, and
/// fixed-width integers (psquash native) in v4 and v41.
pub fn formats() -> Vec<Format> {
    let mut v = Vec::new();
    for d in Dialect::ALL {
        for b in [BufferType::NonDesc, BufferType::FullyDesc] {
            v.push(Format::new(*d, b));
            if matches!(d, Dialect::V4 | Dialect::V41) {
                let mut native = Format::new(*d, b);
                native.fixed_ints = true;
                v.push(native);
            }
        }
    }
    v
}

/// v12 sends no payload for INFO_DIRECTIVES/PROC_STATE (they decode as
/// 0) and refuses DATA_ARRAY, PROC_INFO and QUERY units (spec-notes/dialects.md).
pub fn lossy_in(d: Dialect, t: DataType) -> bool {
    d == Dialect::V12
        && matches!(
            t,
            DataType::InfoDirectives
                | DataType::ProcState
                | DataType::DataArray
                | DataType::ProcInfo
                | DataType::Query
        )
}

/// The types that round-trip as units in format `fmt`.
pub fn unit_types(fmt: &Format) -> Vec<DataType> {
    DataType::ALL
        .iter()
        .copied()
        .filter(|t| fmt.dialect.registers(*t) && !lossy_in(fmt.dialect, *t))
        .collect()
}

/// 1-2 units of 0-3 values each, nesting at most 2 levels.
pub fn units(t: DataType, d: Dialect) -> BoxedStrategy<Vec<Vec<Value>>> {
    proptest::collection::vec(proptest::collection::vec(value_of(t, d, 2), 0..4), 1..3).boxed()
}

/// A proptest runner with a fixed seed for one (format, type) pair, so
/// that failures reproduce and pairs draw different values.
pub fn seeded_runner(
    ty: DataType,
    fmt: &Format,
    salt: u8,
    cases: u32,
) -> proptest::test_runner::TestRunner {
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    let mut seed = [salt; 32];
    seed[0] = ty.code() as u8;
    seed[1] = label(fmt).bytes().map(u32::from).sum::<u32>() as u8;
    TestRunner::new_with_rng(
        Config {
            cases,
            failure_persistence: None,
            ..Config::default()
        },
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed),
    )
}

/// A short label for messages and file names: "v41-fd-native".
pub fn label(f: &Format) -> String {
    let mut s = f.dialect.name().to_string();
    if f.buffer_type == BufferType::FullyDesc {
        s.push_str("-fd");
    }
    if f.fixed_ints {
        s.push_str("-native");
    }
    s
}
