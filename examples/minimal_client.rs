//! A minimal PMIx client: every rank puts its rank, commits, fences with
//! data collection and reads every peer's value. Run it under any PMIx
//! launcher:
//!
//!     pmixw run -n 4 target/debug/examples/minimal_client
//!     mpirun -n 4 target/debug/examples/minimal_client

use pmix_types::{Proc, Value};
use pmix_wire::client::{scope, Client};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut c = Client::init()?;
    let me = c.proc().clone();
    c.put(scope::GLOBAL, "example.rank", Value::Uint32(me.rank));
    c.commit()?;
    c.fence(&[], true, None)?;
    let size = match c.get(
        &Proc::new(&me.nspace.to_string(), u32::MAX - 1),
        "pmix.job.size",
        &[],
    )? {
        Value::Uint32(n) => n,
        v => return Err(format!("job size {v:?}").into()),
    };
    let mut seen = Vec::new();
    for r in 0..size {
        let peer = Proc::new(&me.nspace.to_string(), r);
        seen.push(format!("{:?}", c.get(&peer, "example.rank", &[])?));
    }
    println!("rank {} of {}: {}", me.rank, size, seen.join(" "));
    c.finalize()?;
    Ok(())
}
