//! Every row of the one type table (`pmix_types::type_table!`), through
//! every operation generated from it: lookup by code and by name, pack and
//! unpack (both buffer types, in a dialect that registers the type), the
//! pmix_value_t form where the dialect's value packer carries the type,
//! `PMIx_Data_print`, and the JSON mapping.

mod common;

use pmix_codec::{decode, encode, encoded_len, print, BufferType, Dialect, Format};
use pmix_test_kit::samples::sample;
use pmix_types::*;

/// The newest-first dialect that registers `ty`, v41 first (UNDEF, which
/// no dialect packs as a unit, travels only inside values: v41).
fn dialect_for(ty: DataType) -> Dialect {
    use Dialect::*;
    [V41, V61, V7, V51, V4, V3, V21, V20, V12]
        .into_iter()
        .find(|d| d.registers(ty))
        .unwrap_or_else(|| {
            assert_eq!(ty, DataType::Undef, "no dialect registers {ty}");
            Dialect::V41
        })
}

#[test]
fn every_row_round_trips_through_every_operation() {
    assert_eq!(DataType::ALL.len(), 76);
    for (i, &ty) in DataType::ALL.iter().enumerate() {
        // lookups
        assert_eq!(ty.code() as usize, i, "{ty}: codes are dense and ordered");
        assert_eq!(DataType::from_code(ty.code()), Some(ty));
        assert!(ty.name().starts_with("PMIX_"), "{ty}");
        assert_eq!(data_type_string(ty.code()), ty.name());
        assert_eq!(DataType::parse(ty.name()), Some(ty));
        assert_eq!(DataType::parse(&ty.short_name().to_lowercase()), Some(ty));
        assert_eq!(DataType::parse(&ty.code().to_string()), Some(ty));

        let v = sample(ty);
        assert_eq!(v.data_type(), ty);

        // pack → unpack, both buffer types
        let dialect = dialect_for(ty);
        for bt in [BufferType::NonDesc, BufferType::FullyDesc] {
            let fmt = Format::new(dialect, bt);
            if dialect.registers(ty) {
                let bytes = encode(&fmt, ty, std::slice::from_ref(&v))
                    .unwrap_or_else(|e| panic!("{ty} {dialect} {bt:?}: pack: {e}"));
                let back = decode(&fmt, ty, &bytes)
                    .unwrap_or_else(|e| panic!("{ty} {dialect} {bt:?}: unpack: {e}"));
                assert_eq!(back, vec![v.clone()], "{ty} {dialect} {bt:?}");
            }
            // and inside a pmix_value_t, where this dialect's value packer carries it
            let wrapped = Value::Value(Box::new(v.clone()));
            // types the C union cannot hold are refused (libpmix master refuses them)
            if !common::in_value(ty) {
                let e = encode(&fmt, DataType::Value, std::slice::from_ref(&wrapped)).unwrap_err();
                assert_eq!(e.status(), -27, "VALUE of {ty}");
            } else if dialect.value_supports(ty) {
                let bytes = encode(&fmt, DataType::Value, std::slice::from_ref(&wrapped))
                    .unwrap_or_else(|e| panic!("VALUE of {ty} {dialect}: pack: {e}"));
                let back = decode(&fmt, DataType::Value, &bytes)
                    .unwrap_or_else(|e| panic!("VALUE of {ty} {dialect}: unpack: {e}"));
                assert_eq!(back, vec![wrapped], "VALUE of {ty} {dialect} {bt:?}");
            }
        }

        // PMIx_Data_print: text, or exactly the refusals libpmix 4.2.2 gives
        match (ty, print(&v, None)) {
            (_, Ok(Some(text))) => assert!(
                text.len() > 1 && text.starts_with(' '),
                "{ty}: print gave {text:?}"
            ),
            (DataType::App | DataType::Buffer, Ok(None)) => {}
            (DataType::Undef, Err(e)) => assert_eq!(e.status, -16),
            (DataType::ProcCpuset | DataType::Topo, Err(e)) => assert_eq!(e.status, -47),
            (
                DataType::Device
                | DataType::ResBlockDirective
                | DataType::ResourceUnit
                | DataType::NodePid
                | DataType::Regex2
                | DataType::AllocInherit,
                Err(e),
            ) => assert_eq!(e.status, -16),
            (_, other) => panic!("{ty}: unexpected print result {other:?}"),
        }

        // JSON: every row has a mapping; tagged and bare forms round-trip
        let j = serde_json::to_value(&v).unwrap();
        assert_eq!(j["type"], ty.short_name(), "{ty}");
        assert_eq!(serde_json::from_value::<Value>(j).unwrap(), v, "{ty} JSON");
        assert_eq!(Value::from_bare_json(ty, v.to_bare_json()).unwrap(), v);
    }
    assert_eq!(DataType::from_code(76), None);
    assert_eq!(data_type_string(76), "UNKNOWN");
}

/// `encoded_len` (the wire forms' lengths, generated from the same rows as
/// the packers) equals the bytes `encode` writes, for every type's sample
/// alone, twice in a unit, in a DATA_ARRAY and in a pmix_value_t, in every
/// dialect and both buffer types, wherever the pack succeeds.
#[test]
fn encoded_len_is_the_packed_length_everywhere() {
    let mut checked = 0;
    for &ty in DataType::ALL {
        let v = sample(ty);
        let mut cases = vec![
            (ty, vec![v.clone()]),
            (ty, vec![v.clone(), v.clone()]),
            (DataType::Value, vec![Value::Value(Box::new(v.clone()))]),
        ];
        if let Ok(a) = DataArray::new(ty, vec![v.clone(), v.clone(), v.clone()]) {
            cases.push((DataType::DataArray, vec![Value::DataArray(Box::new(a))]));
        }
        for &dialect in Dialect::ALL {
            for bt in [BufferType::NonDesc, BufferType::FullyDesc] {
                let fmt = Format::new(dialect, bt);
                for (uty, values) in &cases {
                    if let Ok(bytes) = encode(&fmt, *uty, values) {
                        assert_eq!(
                            encoded_len(&fmt, *uty, values),
                            bytes.len(),
                            "{uty} of {ty} ×{} in {dialect} {bt:?}",
                            values.len()
                        );
                        checked += 1;
                    }
                }
            }
        }
    }
    // most combinations pack (the count guards against a vacuous pass)
    assert!(checked > 1000, "only {checked} cases packed");
}
