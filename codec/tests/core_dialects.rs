//! Per-namespace packing: one process packs the same values for namespaces
//! that speak v3, v21, v41 and v61, and each gets its dialect's golden
//! bytes from the OpenPMIx vectors.

use pmix_codec::registry::Registry;
use pmix_codec::select::from_version;
use pmix_codec::{BufferType, Dialect, Format};
use pmix_types::{DataType, Info, Proc, Value};

fn golden(release: &str, folder: &str, ty: &str, case: &str) -> Vec<u8> {
    let path = format!(
        "{}/../corpus/releases/vectors/{release}/{folder}/manifest.tsv",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let line = text
        .lines()
        .find(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            f.len() > 9 && f[0] == ty && f[2] == case
        })
        .unwrap_or_else(|| panic!("{ty}_{case} not in {path}"));
    pmix_types::hex::decode(line.split('\t').nth(9).unwrap()).unwrap()
}

/// One value of `ty` packed for `target` by the registry.
fn pack_for(reg: &mut Registry, target: &Proc, ty: DataType, v: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    reg.pack(Some(target), &mut out, ty, std::slice::from_ref(v))
        .unwrap();
    out
}

#[test]
fn one_process_packs_each_namespace_in_its_dialect() {
    let mut reg = Registry::new(Format::V41, Some("me".into()));
    for (ns, version) in [
        ("job-v3", "3.2.5"),
        ("job-v21", "2.1.4"),
        ("job-v41", "4.2.2rc2"),
        ("job-v61", "6.1.0"),
        ("job-v7", "7.0.0a1"),
    ] {
        let d = from_version(version).unwrap();
        reg.register(
            ns.into(),
            Format::new(d, BufferType::NonDesc),
            Some(version.into()),
        );
    }
    // INFO {"pmix.test.key", STRING "hello"} — the INFO_string case of the vectors
    let info = Value::Info(Box::new(Info::new(
        "pmix.test.key",
        Value::String(Some("hello".into())),
    )));
    let cases = [
        ("job-v3", "v3.2.5", "v3"),
        ("job-v21", "v3.2.5", "v21"),
        ("job-v41", "v5.0.11", "v41"),
        ("job-v61", "v6.1.0", "v61"),
        ("job-v7", "v7.0.0a1", "v61"),
    ];
    for (ns, release, folder) in cases {
        let target = Proc::new(ns, 0);
        let out = pack_for(&mut reg, &target, DataType::Info, &info);
        assert_eq!(out, golden(release, folder, "INFO", "string"), "{ns}");
        assert_eq!(
            reg.unpack(Some(&target), &out, DataType::Info).unwrap(),
            vec![info.clone()]
        );
    }
    // the v3 and v41 bytes really differ (fixed width vs flex128)
    let mut a = Vec::new();
    let mut b = Vec::new();
    reg.pack(
        Some(&Proc::new("job-v3", 0)),
        &mut a,
        DataType::Info,
        std::slice::from_ref(&info),
    )
    .unwrap();
    reg.pack(
        Some(&Proc::new("job-v41", 0)),
        &mut b,
        DataType::Info,
        std::slice::from_ref(&info),
    )
    .unwrap();
    assert_ne!(a, b);
    // no target, or our own namespace: our own format
    let mut own = Vec::new();
    reg.pack(None, &mut own, DataType::Info, std::slice::from_ref(&info))
        .unwrap();
    assert_eq!(own, b);
    // an unknown namespace is an error, not a guess (libpmix 4.2.2 hangs here)
    let mut x = Vec::new();
    assert!(reg
        .pack(
            Some(&Proc::new("stranger", 0)),
            &mut x,
            DataType::Info,
            &[info]
        )
        .is_err());
    assert!(x.is_empty());
}

#[test]
fn a_v41_namespace_cannot_be_sent_a_type_it_does_not_know() {
    let mut reg = Registry::new(Format::new(Dialect::V61, BufferType::NonDesc), None);
    reg.register(
        "old".into(),
        Format::new(Dialect::V3, BufferType::NonDesc),
        None,
    );
    let mut out = Vec::new();
    let e = reg
        .pack(Some(&Proc::new("old", 0)), &mut out, DataType::Envar, &[])
        .map(|_| ());
    assert!(e.is_ok(), "v3 registers ENVAR");
    let e = reg
        .pack(Some(&Proc::new("old", 0)), &mut out, DataType::Coord, &[])
        .unwrap_err();
    assert_eq!(e.status(), -16);
}

#[test]
fn a_v12_namespace_gets_pmix_1_2_bytes() {
    // INFO in v12: no directives, the value type as a tagged INT in PMIx 1.x
    // numbering; v3.2.5's v12 vector INFO_string
    let mut reg = Registry::new(Format::V41, None);
    reg.register(
        "old".into(),
        Format::new(from_version("1.2.5").unwrap(), BufferType::NonDesc),
        None,
    );
    let info = Value::Info(Box::new(Info::new(
        "pmix.test.key",
        Value::String(Some("hello".into())),
    )));
    let target = Proc::new("old", 0);
    let mut out = Vec::new();
    reg.pack(
        Some(&target),
        &mut out,
        DataType::Info,
        std::slice::from_ref(&info),
    )
    .unwrap();
    assert_eq!(out, golden("v3.2.5", "v12", "INFO", "string"));
    assert_eq!(
        reg.unpack(Some(&target), &out, DataType::Info).unwrap(),
        vec![info]
    );
}

/// A 7.0 peer that negotiated an older dialect still packs as 7.0 does: the
/// registry takes the release from its version string, so a typeless
/// DATA_ARRAY goes to it as the tag alone and to a 6.1.0 peer of the same
/// dialect with its size (v7.0.0a1/v41 and v6.1.0/v41 DATA_ARRAY_undef_empty).
#[test]
fn a_7_0_namespace_speaking_v41_gets_7_0_bytes() {
    use pmix_types::DataArray;
    let mut reg = Registry::new(Format::V41, None);
    for (ns, version) in [("new", "7.0.0a1"), ("old", "6.1.0")] {
        reg.register(ns.into(), Format::V41, Some(version.into()));
    }
    let v = Value::DataArray(Box::new(DataArray::Undef { size: 0 }));
    for (ns, release) in [("new", "v7.0.0a1"), ("old", "v6.1.0")] {
        let target = Proc::new(ns, 0);
        let out = pack_for(&mut reg, &target, DataType::DataArray, &v);
        assert_eq!(
            out,
            golden(release, "v41", "DATA_ARRAY", "undef_empty"),
            "{ns}"
        );
        assert_eq!(
            reg.unpack(Some(&target), &out, DataType::DataArray)
                .unwrap(),
            vec![v.clone()]
        );
    }
}
