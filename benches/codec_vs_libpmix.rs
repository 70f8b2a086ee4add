//! Benchmark: our codec and libpmix 4.2.2 on the same workloads in the
//! same run (`cargo bench --bench codec_vs_libpmix`). Prints MB/s of packed
//! bytes for each side and the ratio ours/C. Not a test: nothing asserts
//! a speed; the run only checks both sides produce the same bytes.

use bytes::Bytes;
use pmix_codec::{decode_bytes, encode, Format};
use pmix_types::*;
use std::process::Command;
use std::time::Instant;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn word(&mut self) -> String {
        (0..32)
            .map(|_| (b'a' + (self.next() % 26) as u8) as char)
            .collect()
    }
}

fn fnv(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf29ce484222325u64, |h, &x| {
        (h ^ x as u64).wrapping_mul(0x100000001b3)
    })
}

struct Measured {
    bytes: usize,
    hash: u64,
    pack_ns: u64,
    unpack_ns: u64,
}

fn measure(ty: DataType, values: &[Value], reps: usize) -> Measured {
    let fmt = Format::V41;
    let (mut bp, mut bu) = (u64::MAX, u64::MAX);
    let mut out = Vec::new();
    for _ in 0..reps {
        let t0 = Instant::now();
        out = encode(&fmt, ty, values).expect("encode");
        bp = bp.min(t0.elapsed().as_nanos() as u64);
        let buf = Bytes::from(out.clone());
        let t1 = Instant::now();
        let back = decode_bytes(&fmt, ty, &buf).expect("decode");
        bu = bu.min(t1.elapsed().as_nanos() as u64);
        assert_eq!(back.len(), values.len());
    }
    Measured {
        bytes: out.len(),
        hash: fnv(&out),
        pack_ns: bp,
        unpack_ns: bu,
    }
}

fn main() {
    // `cargo bench` passes --bench; nothing else to parse
    let reps: usize = std::env::var("BENCH_REPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let exe = pmix_wire::interop::build_c("bench", &pmix_wire::interop::default_out_dir())
        .unwrap_or_else(|e| panic!("building the C benchmark: {e}"));
    let c = Command::new(exe)
        .env("BENCH_REPS", reps.to_string())
        .output()
        .expect("run C benchmark");
    assert!(
        c.status.success(),
        "C benchmark failed: {}",
        String::from_utf8_lossy(&c.stderr)
    );
    let c_rows: Vec<Vec<String>> = String::from_utf8_lossy(&c.stdout)
        .lines()
        .map(|l| l.split('\t').map(String::from).collect())
        .collect();

    let mut rng = Rng(42);
    let u64s: Vec<Value> = (0..1_000_000).map(|_| Value::Uint64(rng.next())).collect();
    let strs: Vec<Value> = (0..100_000)
        .map(|_| Value::String(Some(PString::from(rng.word().as_str()))))
        .collect();
    let infos: Vec<Value> = (0..10_000usize)
        .map(|i| {
            let v = match i % 5 {
                0 => Value::String(Some(PString::from(rng.word().as_str()))),
                1 => Value::Uint32(rng.next() as u32),
                2 => Value::Bool(rng.next() & 1 == 1),
                3 => Value::ByteObject(Hex(Bytes::from(
                    (0..64).map(|_| rng.next() as u8).collect::<Vec<u8>>(),
                ))),
                _ => Value::DataArray(Box::new(
                    DataArray::new(
                        DataType::Uint64,
                        (0..4).map(|_| Value::Uint64(rng.next())).collect(),
                    )
                    .unwrap(),
                )),
            };
            Value::Info(Box::new(Info::new(&format!("pmix.bench.{i}"), v)))
        })
        .collect();
    let mut big = Vec::with_capacity(64 << 20);
    for _ in 0..(8 << 20) {
        big.extend_from_slice(&rng.next().to_ne_bytes());
    }
    let bo = vec![Value::ByteObject(Hex(Bytes::from(big)))];

    let ours = [
        ("u64x1e6", measure(DataType::Uint64, &u64s, reps)),
        ("str32x1e5", measure(DataType::String, &strs, reps)),
        ("info_mixed_x1e4", measure(DataType::Info, &infos, reps)),
        ("bo64MiB", measure(DataType::ByteObject, &bo, reps.min(3))),
    ];
    println!(
        "libpmix {} vs pmix-codec, v41 NON_DESC, best of {reps}",
        pmix_wire::interop::libpmix_version()
    );
    println!(
        "{:<16} {:>10} {:>12} {:>12} {:>7} {:>12} {:>12} {:>7}",
        "workload",
        "bytes",
        "C pack MB/s",
        "pack MB/s",
        "ratio",
        "C unpk MB/s",
        "unpk MB/s",
        "ratio"
    );
    let mbs = |bytes: usize, ns: u64| bytes as f64 / 1e6 / (ns.max(1) as f64 / 1e9);
    for (name, m) in &ours {
        let row = c_rows.iter().find(|r| r[0] == *name).expect("C row");
        let (cbytes, chash): (usize, u64) = (
            row[1].parse().unwrap(),
            u64::from_str_radix(&row[2], 16).unwrap(),
        );
        let (cp, cu): (u64, u64) = (row[3].parse().unwrap(), row[4].parse().unwrap());
        if cbytes != m.bytes || chash != m.hash {
            println!(
                "!! {name}: bytes differ from libpmix ({cbytes}/{chash:016x} vs {}/{:016x})",
                m.bytes, m.hash
            );
        }
        let (cpm, opm) = (mbs(cbytes, cp), mbs(m.bytes, m.pack_ns));
        let (cum, oum) = (mbs(cbytes, cu), mbs(m.bytes, m.unpack_ns));
        println!(
            "{name:<16} {:>10} {cpm:>12.1} {opm:>12.1} {:>6.1}x {cum:>12.1} {oum:>12.1} {:>6.1}x",
            m.bytes,
            opm / cpm,
            oum / cum
        );
    }
}
