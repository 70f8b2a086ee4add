//! Property tests: arbitrary values of every type round-trip through every
//! dialect that registers the type, in both buffer types, several values per
//! unit and several units per buffer, and through the DataBuffer API.

use bytes::Bytes;
use pmix_codec::{decode, encode, BufferType, DataBuffer, Dialect, Format};
use pmix_types::*;
use proptest::prelude::*;

fn pstr() -> impl Strategy<Value = PString> {
    proptest::collection::vec(1u8..=255, 0..12).prop_map(|b| PString::from_bytes(&b).unwrap())
}
fn ostr() -> impl Strategy<Value = Option<PString>> {
    proptest::option::of(pstr())
}
fn nspace() -> impl Strategy<Value = Nspace> {
    proptest::collection::vec(1u8..=255, 0..=255).prop_map(|b| Nspace::from_bytes(&b).unwrap())
}
fn key() -> impl Strategy<Value = Key> {
    prop_oneof![
        pstr().prop_map(|s| Key::new(s).unwrap()),
        Just(Key::from_bytes(&[b'k'; 511]).unwrap())
    ]
}
fn bytes() -> impl Strategy<Value = Bytes> {
    proptest::collection::vec(any::<u8>(), 0..40).prop_map(Bytes::from)
}
fn hex() -> impl Strategy<Value = Hex> {
    bytes().prop_map(Hex)
}
fn proc_() -> impl Strategy<Value = Proc> {
    (nspace(), any::<u32>()).prop_map(|(nspace, rank)| Proc { nspace, rank })
}
fn tv() -> impl Strategy<Value = Timeval> {
    (any::<i64>(), any::<i64>()).prop_map(|(sec, usec)| Timeval { sec, usec })
}
/// Floats that survive "%f" text: at most 6 decimals, moderate magnitude.
fn f32_() -> impl Strategy<Value = f32> {
    (-1_000_000i32..1_000_000).prop_map(|x| x as f32 / 64.0)
}
fn f64_() -> impl Strategy<Value = f64> {
    (-1_000_000_000_000i64..1_000_000_000_000).prop_map(|x| x as f64 / 64.0)
}
fn coord() -> impl Strategy<Value = Coord> {
    (any::<u8>(), proptest::collection::vec(any::<u32>(), 0..4))
        .prop_map(|(view, coord)| Coord { view, coord })
}
fn disk() -> impl Strategy<Value = DiskStats> {
    (ostr(), proptest::array::uniform11(any::<u64>()))
        .prop_map(|(disk, c)| DiskStats::from_counters(disk, c))
}
fn net() -> impl Strategy<Value = NetStats> {
    (ostr(), proptest::array::uniform6(any::<u64>()))
        .prop_map(|(n, c)| NetStats::from_counters(n, c))
}

/// Types a pmix_value_t can hold (bfrops.md §4.6).
fn in_value(t: DataType) -> bool {
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

fn info(d: Dialect, depth: u32) -> BoxedStrategy<Info> {
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
fn value_in(d: Dialect, depth: u32) -> BoxedStrategy<Value> {
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
fn value_of(t: DataType, d: Dialect, depth: u32) -> BoxedStrategy<Value> {
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
        T::Float => f32_().prop_map(|x| Value::Float(F32(x))).boxed(),
        T::Double => f64_().prop_map(|x| Value::Double(F64(x))).boxed(),
        T::Timeval => tv().prop_map(Value::Timeval).boxed(),
        T::Time => any::<u64>().prop_map(Value::Time).boxed(),
        T::Status => any::<i32>().prop_map(Value::Status).boxed(),
        T::Value => value_in(d, depth)
            .prop_map(|v| Value::Value(Box::new(v)))
            .boxed(),
        T::Proc => proc_().prop_map(Value::Proc).boxed(),
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
            .prop_map(|(buffer_type, bytes)| Value::Buffer(Buffer { buffer_type, bytes }))
            .boxed(),
        T::ByteObject => hex().prop_map(Value::ByteObject).boxed(),
        T::Kval => (ostr(), value_in(d, depth))
            .prop_map(|(key, value)| Value::Kval(Box::new(Kval { key, value })))
            .boxed(),
        T::Modex => hex().prop_map(Value::Modex).boxed(),
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
        T::CompressedString => hex().prop_map(Value::CompressedString).boxed(),
        T::AllocDirective => any::<u8>().prop_map(Value::AllocDirective).boxed(),
        T::InfoArray => proptest::collection::vec(info(d, next), 0..2)
            .prop_map(Value::InfoArray)
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
            (1u32..99999).prop_map(|n| {
                let mut b = b"blob:\0component=zlib:\0".to_vec();
                b.extend(format!("size={n}:\0").as_bytes());
                b.extend([1, 2, 3, 4, 5]);
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
        T::CompressedByteObject => hex().prop_map(Value::CompressedByteObject).boxed(),
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
            f32_(),
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
                    pss,
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
                        vsize: pss * 2.0,
                        rss: -pss,
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
        T::DataBuffer => hex().prop_map(Value::DataBuffer).boxed(),
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

/// The formats each type is tried in (dialects that register it).
fn formats() -> Vec<Format> {
    let mut v = Vec::new();
    for d in [
        Dialect::V12,
        Dialect::V20,
        Dialect::V21,
        Dialect::V3,
        Dialect::V4,
        Dialect::V41,
        Dialect::V51,
        Dialect::V61,
        Dialect::V7,
    ] {
        for b in [BufferType::NonDesc, BufferType::FullyDesc] {
            v.push(Format::new(d, b));
        }
    }
    let mut native = Format::V41;
    native.fixed_ints = true;
    v.push(native);
    v
}

fn case() -> impl Strategy<Value = (Format, DataType, Vec<Vec<Value>>)> {
    proptest::sample::select(formats()).prop_flat_map(|fmt| {
        // v12 sends no payload for INFO_DIRECTIVES/PROC_STATE and cannot
        // send DATA_ARRAY, PROC_INFO or QUERY units
        let v12_lossy = [
            DataType::InfoDirectives,
            DataType::ProcState,
            DataType::DataArray,
            DataType::ProcInfo,
            DataType::Query,
        ];
        let types: Vec<DataType> = DataType::ALL
            .iter()
            .copied()
            .filter(|t| {
                fmt.dialect.registers(*t) && !(fmt.dialect == Dialect::V12 && v12_lossy.contains(t))
            })
            .collect();
        proptest::sample::select(types).prop_flat_map(move |t| {
            proptest::collection::vec(
                proptest::collection::vec(value_of(t, fmt.dialect, 2), 0..4),
                1..3,
            )
            .prop_map(move |units| (fmt, t, units))
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn any_value_of_any_type_round_trips((fmt, ty, units) in case()) {
        let mut buf = DataBuffer::new(fmt);
        let mut all = Vec::new();
        for u in &units {
            buf.pack(ty, u).unwrap();
            all.extend(u.iter().cloned());
        }
        let bytes = buf.as_bytes().to_vec();
        // whole-buffer decode
        let back = decode(&fmt, ty, &bytes).unwrap();
        prop_assert_eq!(&back, &all);
        // unit by unit, the same bytes again
        let again: Vec<u8> = units.iter().flat_map(|u| encode(&fmt, ty, u).unwrap()).collect();
        prop_assert_eq!(&again, &bytes);
        // the DataBuffer API, one value at a time (partial unpacks)
        let mut got = Vec::new();
        while !buf.unread().is_empty() || got.len() < all.len() {
            let u = buf.unpack(ty, 1).unwrap();
            if u.values.is_empty() && buf.unread().is_empty() { break; }
            got.extend(u.values);
        }
        prop_assert_eq!(&got, &all);
        buf.rewind();
        let mut copy = DataBuffer::new(fmt);
        copy.copy_payload(&buf);
        prop_assert_eq!(copy.as_bytes(), &bytes[..]);
        // JSON form is lossless
        for v in &all {
            let j = v.to_bare_json();
            prop_assert_eq!(&Value::from_bare_json(ty, j).unwrap(), v);
        }
    }
}

#[test]
fn strategies_cover_every_type() {
    // each type has a strategy in some dialect that registers it
    for t in DataType::ALL {
        let d = Dialect::ALL
            .iter()
            .rev()
            .copied()
            .find(|d| d.registers(*t) || *t == DataType::Undef);
        assert!(d.is_some(), "{t} is registered nowhere");
        let _ = value_of(*t, d.unwrap(), 1);
    }
}
