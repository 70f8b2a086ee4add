//! A host embedding the pmix-wire server: it registers one job of N ranks,
//! starts PROG as each rank with the environment a PMIx client needs, and
//! reports what the ranks do (the server's upcalls) until all have
//! finalized.
//!
//!     embed_server N PROG [ARGS...]

use pmix_types::Rank;
use pmix_wire::server::{net, HostEvent, JobSpec};
use std::process::Command;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let n: u32 = args
        .next()
        .ok_or("usage: embed_server N PROG [ARGS...]")?
        .parse()?;
    let prog = args.next().ok_or("usage: embed_server N PROG [ARGS...]")?;
    let rest: Vec<String> = args.collect();
    let server = net::start(vec![JobSpec {
        nspace: "embedded".into(),
        nprocs: n,
        hostname: net::hostname(),
        info: vec![],
    }])?;
    let mut ranks = Vec::new();
    for r in 0..n {
        ranks.push(
            Command::new(&prog)
                .args(&rest)
                .envs(server.client_env("embedded", Rank::new(r)))
                .spawn()?,
        );
    }
    let mut finalized = 0;
    while finalized < n {
        match server.events.recv()? {
            HostEvent::Connected(p, f) => {
                eprintln!("host: rank {} connected ({})", p.rank, f.dialect)
            }
            HostEvent::Finalized(p) => {
                eprintln!("host: rank {} finalized", p.rank);
                finalized += 1;
            }
            HostEvent::Aborted { proc, status, .. } => {
                eprintln!("host: rank {} aborted ({status})", proc.rank);
                break;
            }
            HostEvent::Lost(p) => {
                eprintln!("host: rank {} lost", p.rank);
                break;
            }
            _ => {}
        }
    }
    let mut failed = false;
    for mut r in ranks {
        failed |= !r.wait()?.success();
    }
    server.stop();
    std::process::exit(i32::from(failed));
}
