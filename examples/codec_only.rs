//! The codec alone, without a client or server: pack values for a given
//! peer's dialect, then decode them back.
//!
//!     cargo run --example codec_only -- v3 --described
//!     cargo run --example codec_only -- v41
//!
//! Prints one line per pack unit, `TYPE hex`, exactly the bytes a peer of
//! that dialect reads (the same as `pmixw encode --type TYPE --dialect D
//! [--described] --hex`), and exits non-zero if a value does not come back.

use pmix_codec::{encode, BufferType, DataBuffer, Dialect, Format};
use pmix_types::enums::Scope;
use pmix_types::Rank;
use pmix_types::{DataType, Info, Value};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_else(|| "v41".into());
    let dialect = Dialect::parse(&name).ok_or(format!("unknown dialect {name:?}"))?;
    let buffer_type = match args.next().as_deref() {
        None => BufferType::NonDesc,
        Some("--described") => BufferType::FullyDesc,
        Some(other) => return Err(format!("unknown option {other:?}").into()),
    };
    let format = Format::new(dialect, buffer_type);

    // three pack units: an INFO, a scope and a special rank
    let units = [
        (
            DataType::Info,
            Value::Info(Box::new(Info::new("pmix.job.size", Value::Uint32(4)))),
        ),
        (DataType::Scope, Value::from(Scope::GLOBAL)),
        (DataType::ProcRank, Value::from(Rank::WILDCARD)),
    ];

    // one unit at a time: the bytes of each
    let mut concatenated = Vec::new();
    for (ty, value) in &units {
        let bytes = encode(&format, *ty, std::slice::from_ref(value))?;
        println!("{} {}", ty.short_name(), hex(&bytes));
        concatenated.extend_from_slice(&bytes);
    }

    // the same units in one data buffer (PMIx_Data_pack), then unpacked
    let mut buf = DataBuffer::new(format);
    for (ty, value) in &units {
        buf.pack(*ty, std::slice::from_ref(value))?;
    }
    if buf.as_bytes() != concatenated.as_slice() {
        return Err("a buffer is not the concatenation of its pack units".into());
    }
    let mut back = DataBuffer::from_bytes(format, buf.as_bytes().to_vec().into());
    let mut decoded = Vec::new();
    for (ty, value) in &units {
        let got = back.unpack_one(*ty)?;
        if &got != value {
            return Err(format!("{}: packed {value:?}, unpacked {got:?}", ty.name()).into());
        }
        decoded.push(got);
    }
    if !back.unread().is_empty() {
        return Err("bytes left over".into());
    }
    // back to the typed form: the wire integer becomes a Scope again
    if let Value::Scope(s) = decoded[1] {
        let scope = Scope::from(s);
        eprintln!(
            "{format:?}: {} units round trip; {scope:?} = {scope}",
            units.len()
        );
    }
    Ok(())
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
