//! A minimal PMIx client in the typed API: every rank puts its rank,
//! commits, fences with data collection and reads every peer's value back
//! as a `u32`; the job size comes from the typed reserved key
//! `typed::JOB_SIZE`. Run it under any PMIx launcher:
//!
//!     pmixw run -n 4 target/debug/examples/minimal_client
//!     mpirun -n 4 target/debug/examples/minimal_client

use pmix_types::enums::Scope;
use pmix_types::keys::typed;
use pmix_types::Proc;
use pmix_wire::client::{Client, FenceOpts};
use std::time::Duration;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut c = Client::init()?;
    let me = c.rank();
    c.put(Scope::GLOBAL, "example.rank", me.wire());
    c.commit()?;
    c.fence(
        FenceOpts::new()
            .collect_data(true)
            .timeout(Duration::from_secs(60)),
    )?;
    let size: u32 = c.get_key(typed::JOB_SIZE)?;
    let mut seen = Vec::new();
    for r in 0..size {
        let peer = Proc {
            rank: r,
            ..c.proc().clone()
        };
        let v: u32 = c.get(&peer, "example.rank")?;
        seen.push(v.to_string());
    }
    println!("rank {me} of {size}: {}", seen.join(" "));
    c.finalize()?;
    Ok(())
}
