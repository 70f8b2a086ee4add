//! A sample value of every PMIx type, for tests that walk the type table
//! (codec/tests/core_type_table.rs, capi/tests/core_capi_convert.rs).

use bytes::Bytes;
use pmix_types::*;

fn s(x: &str) -> Option<PString> {
    Some(PString::from(x))
}

fn tv(sec: i64, usec: i64) -> Timeval {
    Timeval { sec, usec }
}

fn info(key: &str, v: Value) -> Info {
    Info {
        key: Key::from(key),
        flags: 1,
        value: v,
    }
}

/// A non-trivial value of every type. The match is over `DataType`, so a
/// row added to the table without a sample here does not compile.
pub fn sample(ty: DataType) -> Value {
    use DataType as T;
    let disk = DiskStats::from_counters(s("sda"), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1 << 40]);
    let net = NetStats::from_counters(s("eth0"), [1, 2, 3, 4, 5, u64::MAX]);
    match ty {
        T::Undef => Value::Undef,
        T::Bool => Value::Bool(true),
        T::Byte => Value::Byte(0xab),
        T::String => Value::String(s("hello")),
        T::Size => Value::Size(1 << 40),
        T::Pid => Value::Pid(4242),
        T::Int => Value::Int(-7),
        T::Int8 => Value::Int8(-8),
        T::Int16 => Value::Int16(-300),
        T::Int32 => Value::Int32(-70000),
        T::Int64 => Value::Int64(-(1 << 40)),
        T::Uint => Value::Uint(7),
        T::Uint8 => Value::Uint8(200),
        T::Uint16 => Value::Uint16(60000),
        T::Uint32 => Value::Uint32(4_000_000_000),
        T::Uint64 => Value::Uint64(u64::MAX),
        T::Float => Value::Float(F32(1.5)),
        T::Double => Value::Double(F64(-2.25)),
        T::Timeval => Value::Timeval(tv(5, 7)),
        T::Time => Value::Time(1_700_000_000),
        T::Status => Value::Status(-46),
        T::Value => Value::Value(Box::new(Value::Uint32(9))),
        T::Proc => Value::Proc(Box::new(Proc::new("job", 3))),
        T::App => Value::App(Box::new(App {
            cmd: s("a.out"),
            argv: vec!["a.out".into(), "-v".into()],
            env: vec!["X=1".into()],
            cwd: s("/tmp"),
            maxprocs: 4,
            info: vec![info("pmix.k", Value::Bool(false))],
        })),
        T::Info => Value::Info(Box::new(info("pmix.job.size", Value::Uint32(4)))),
        T::Pdata => Value::Pdata(Box::new(Pdata {
            proc: Proc::new("job", 1),
            key: Key::from("k"),
            value: Value::String(s("v")),
        })),
        T::Buffer => Value::Buffer(Box::new(Buffer {
            buffer_type: 1,
            bytes: Bytes::from_static(b"\x01\x02"),
        })),
        T::ByteObject => Value::ByteObject(Bytes::from_static(b"bo\0x").into()),
        T::Kval => Value::Kval(Box::new(Kval {
            key: s("kv"),
            value: Value::Int16(-2),
        })),
        T::Modex => Value::Modex(Bytes::from_static(b"modex").into()),
        T::Persist => Value::Persist(2),
        T::Pointer => Value::Pointer,
        T::Scope => Value::Scope(3),
        T::DataRange => Value::DataRange(4),
        T::Command => Value::Command(12),
        T::InfoDirectives => Value::InfoDirectives(1),
        T::DataTypeCode => Value::DataTypeCode(24),
        T::ProcState => Value::ProcState(5),
        T::ProcInfo => Value::ProcInfo(Box::new(ProcInfo {
            proc: Proc::new("job", 0),
            hostname: s("node1"),
            executable_name: None,
            pid: 99,
            exit_code: 0,
            state: 3,
        })),
        T::DataArray => Value::DataArray(Box::new(
            DataArray::new(T::Int32, vec![Value::Int32(1), Value::Int32(-1)]).unwrap(),
        )),
        T::ProcRank => Value::ProcRank(RANK_WILDCARD),
        T::Query => Value::Query(Box::new(Query {
            keys: vec!["pmix.qkey".into()],
            qualifiers: vec![info("pmix.q", Value::Uint8(1))],
        })),
        T::CompressedString => Value::CompressedString(Bytes::from_static(b"\x78\x9c").into()),
        T::AllocDirective => Value::AllocDirective(1),
        T::InfoArray => {
            Value::InfoArray(vec![info("a", Value::Int(1)), info("b", Value::Undef)].into())
        }
        T::IofChannel => Value::IofChannel(3),
        T::Envar => Value::Envar(Box::new(Envar {
            envar: s("PATH"),
            value: s("/bin"),
            separator: b':',
        })),
        T::Coord => Value::Coord(Box::new(Coord {
            view: 1,
            coord: vec![1, 2, 3],
        })),
        T::RegAttr => Value::RegAttr(Box::new(RegAttr {
            name: s("attr"),
            string: Key::from("pmix.attr"),
            ty: 3,
            description: vec!["one".into(), "two".into()],
        })),
        T::Regex => Value::Regex(Box::new(Regex::Text("pmix[node[1-4]]".into()))),
        T::JobState => Value::JobState(2),
        T::LinkState => Value::LinkState(1),
        T::ProcCpuset => Value::ProcCpuset(Cpuset { cpus: s("0-3,8") }),
        T::Geometry => Value::Geometry(Box::new(Geometry {
            fabric: 7,
            uuid: s("uuid"),
            osname: None,
            coordinates: vec![
                Coord {
                    view: 2,
                    coord: vec![4],
                },
                Coord {
                    view: 1,
                    coord: vec![],
                },
            ],
        })),
        T::DeviceDist => Value::DeviceDist(Box::new(DeviceDist {
            uuid: s("dev"),
            osname: s("mlx5_0"),
            devtype: 0x20,
            mindist: 1,
            maxdist: 9,
        })),
        T::Endpoint => Value::Endpoint(Box::new(Endpoint {
            uuid: s("ep"),
            osname: None,
            endpt: Bytes::from_static(b"\0\x01"),
        })),
        T::Topo => Value::Topo(Box::new(Topology {
            xml: s("<topology/>"),
            support: Bytes::from(vec![1u8; pmix_codec::HWLOC_SUPPORT_BYTES]),
        })),
        T::DevType => Value::DevType(0x40),
        T::LocType => Value::LocType(0x1f),
        T::CompressedByteObject => {
            Value::CompressedByteObject(Bytes::from_static(b"\x78\x9c\x01").into())
        }
        T::ProcNspace => Value::ProcNspace(Nspace::from("job")),
        T::ProcStats => Value::ProcStats(Box::new(ProcStats {
            node: s("node1"),
            proc: Proc::new("job", 2),
            pid: 77,
            cmd: s("a.out"),
            state: b'R',
            time: tv(1, 2),
            percent_cpu: 0.0,
            priority: -5,
            num_threads: 4,
            pss: 1.5,
            vsize: 2.5,
            rss: 0.25,
            peak_vsize: 0.0,
            processor: 1,
            sample_time: tv(3, 4),
        })),
        T::DiskStats => Value::DiskStats(Box::new(disk)),
        T::NetStats => Value::NetStats(Box::new(net)),
        T::NodeStats => Value::NodeStats(Box::new(NodeStats {
            node: s("node1"),
            la: 0.5,
            la5: 0.25,
            la15: 1.0,
            total_mem: 1024.0,
            free_mem: 512.0,
            buffers: 1.0,
            cached: 2.0,
            swap_cached: 3.0,
            swap_total: 4.0,
            swap_free: 5.0,
            mapped: 6.0,
            sample_time: tv(10, 20),
            diskstats: vec![disk],
            netstats: vec![net.clone(), net],
        })),
        T::DataBuffer => Value::DataBuffer(Bytes::from_static(b"\0\0\0\x01").into()),
        T::StorMedium => Value::StorMedium(1),
        T::StorAccess => Value::StorAccess(2),
        T::StorPersist => Value::StorPersist(4),
        T::StorAccessType => Value::StorAccessType(1),
        T::Device => Value::Device(Box::new(Device {
            uuid: s("d"),
            osname: s("gpu0"),
            devtype: 0x8,
        })),
        T::ResBlockDirective => Value::ResBlockDirective(1),
        T::ResourceUnit => Value::ResourceUnit(ResourceUnit {
            devtype: 0x8,
            count: 2,
        }),
        T::NodePid => Value::NodePid(Box::new(NodePid {
            hostname: s("node2"),
            nodeid: 1,
            pid: 3,
        })),
        T::Regex2 => Value::Regex2(Box::new(Regex2 {
            kind: s("native"),
            data: Bytes::from_static(b"x\0y"),
        })),
        T::AllocInherit => Value::AllocInherit(1),
    }
}
