//! A host running tokio that embeds the pmix-wire server through its
//! async handle ([`net::spawn`]): it registers one job of N ranks, starts
//! PROG as each rank, and awaits the server's upcalls until every rank has
//! finalized. The blocking twin is `embed_server`.
//!
//!     embed_server_async N PROG [ARGS...]

use pmix_types::Rank;
use pmix_wire::server::{net, HostEvent, JobSpec};
use std::process::Command;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: embed_server_async N PROG [ARGS...]";
    let n: u32 = args.next().ok_or(usage)?.parse()?;
    let prog = args.next().ok_or(usage)?;
    let rest: Vec<String> = args.collect();
    let mut server = net::spawn(
        vec![JobSpec {
            nspace: "embedded-async".into(),
            nprocs: n,
            hostname: net::hostname(),
            info: vec![],
        }],
        net::Options::default(),
    )?;
    let mut ranks = Vec::new();
    for r in 0..n {
        let env = server.client_env("embedded-async", Rank::new(r));
        ranks.push(Command::new(&prog).args(&rest).envs(env).spawn()?);
    }
    let mut finalized = 0;
    let mut failed = false;
    while finalized < n {
        match server.events.recv().await {
            Some(HostEvent::Connected(p, f)) => {
                // the host may act on the server core between upcalls
                let conns = server.call(|s| s.connections()).await.unwrap_or(0);
                eprintln!(
                    "host: rank {} connected ({}), {conns} connections",
                    p.rank, f.dialect
                )
            }
            Some(HostEvent::Finalized(p)) => {
                eprintln!("host: rank {} finalized", p.rank);
                finalized += 1;
            }
            Some(HostEvent::Aborted { proc, status, .. }) => {
                eprintln!("host: rank {} aborted ({status})", proc.rank);
                failed = true;
                break;
            }
            Some(HostEvent::Lost(p)) => {
                eprintln!("host: rank {} lost", p.rank);
                failed = true;
                break;
            }
            Some(_) => {}
            None => break,
        }
    }
    // the ranks exit right after finalizing: wait for them off the runtime
    let waited = tokio::task::spawn_blocking(move || {
        ranks
            .into_iter()
            .map(|mut r| r.wait().map(|s| s.success()))
            .collect::<std::io::Result<Vec<bool>>>()
    })
    .await??;
    failed |= waited.contains(&false);
    server.stop().await;
    std::process::exit(i32::from(failed));
}
