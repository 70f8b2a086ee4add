//! A PMIx tool: attach to the server with the given pid (or the system
//! server), ask for its namespaces (`PMIX_QUERY_NAMESPACES`) and list
//! them, as `pps` does. The answer is read as a `String` with `TryFrom`.
//!
//!     list_namespaces PID

use pmix_wire::client::Queries;
use pmix_wire::tool::{connect, Target};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let target = match std::env::args().nth(1) {
        Some(pid) => Target::Pid(pid.parse()?),
        None => Target::System,
    };
    let mut tool = connect(&target)?;
    let answers = tool.query(Queries::new().ask(["pmix.qry.ns"]))?;
    for i in answers {
        let list = String::try_from(i.value)?;
        for ns in list.split(',').filter(|n| !n.is_empty()) {
            println!("{ns}");
        }
    }
    tool.finalize()?;
    Ok(())
}
