//! Memory of our server under idle load (issue #11): the server runs in
//! this process; `IDLE` (default 300) TCP connections are opened to it and
//! never send a byte, then 8 libpmix 4.2.2 clients
//! (interop/c/bench_wireup.c) wire up beside them. Prints this
//! process's resident memory before, and its peak (VmHWM) after. Not a
//! test: nothing asserts a figure; it fails only if a client fails.
//!
//!     cargo bench --bench server_idle

use pmix_test_kit::bench::status_kib;
use pmix_test_kit::interop::build_c;
use pmix_wire::server::{net, JobSpec};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{exit, Command, Stdio};

fn main() {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let client = build_c("bench_wireup", &out).unwrap_or_else(|e| panic!("{e}"));
    let idle: usize = std::env::var("IDLE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let n = 8u32;
    let before = status_kib("VmRSS:");
    let server = net::start(vec![JobSpec {
        nspace: "idle-bench".into(),
        nprocs: n,
        hostname: net::hostname(),
        info: vec![],
    }])
    .expect("server");
    let addr = server.uri().rsplit_once("//").unwrap().1.to_string();
    let conns: Vec<TcpStream> = (0..idle)
        .map(|_| TcpStream::connect(&addr).expect("connect"))
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let with_idle = status_kib("VmRSS:");
    let kids: Vec<_> = (0..n)
        .map(|r| {
            Command::new(&client)
                .arg(n.to_string())
                .envs(server.client_env("idle-bench", r))
                .stdout(Stdio::null())
                .spawn()
                .expect("client")
        })
        .collect();
    for mut k in kids {
        if !k.wait().map(|s| s.success()).unwrap_or(false) {
            eprintln!("!! a client failed");
            exit(1);
        }
    }
    let peak = status_kib("VmHWM:");
    println!(
        "idle={idle} clients={n}: RSS before server {before} KiB, with idle peers {with_idle} KiB, \
         peak {peak} KiB; per idle connection {:.1} KiB",
        (with_idle.saturating_sub(before)) as f64 / idle.max(1) as f64
    );
    drop(conns);
    server.stop();
}
