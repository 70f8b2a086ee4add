//! Pack an INFO for a PMIx 3.x peer (fully described) and for libpmix
//! 4.2.2's default format, unpack both, print the bytes as hex.

use pmix_codec::{decode, encode, BufferType, Dialect, Format};
use pmix_types::{DataType, Info, Value};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let info = Value::Info(Box::new(Info::new("pmix.job.size", Value::Uint32(4))));
    for fmt in [Format::V41, Format::new(Dialect::V3, BufferType::FullyDesc)] {
        let bytes = encode(&fmt, DataType::Info, std::slice::from_ref(&info))?;
        assert_eq!(decode(&fmt, DataType::Info, &bytes)?, vec![info.clone()]);
        println!("{}", pmix_types::hex::encode(&bytes));
    }
    Ok(())
}
