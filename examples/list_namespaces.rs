//! A PMIx tool: connect to the server with the given pid (or the system
//! server) and list its namespaces, as `pps` does.
//!
//!     list_namespaces PID

use pmix_types::{PString, Query};
use pmix_wire::tool::{connect, Target};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let target = match std::env::args().nth(1) {
        Some(pid) => Target::Pid(pid.parse()?),
        None => Target::System,
    };
    let mut tool = connect(&target)?;
    let answers = tool.query(vec![Query {
        keys: vec![PString::from("pmix.qry.ns")],
        qualifiers: Vec::new(),
    }])?;
    for i in answers {
        if let pmix_types::Value::String(Some(list)) = &i.value {
            for ns in list.to_string().split(',') {
                println!("{ns}");
            }
        }
    }
    tool.finalize()?;
    Ok(())
}
