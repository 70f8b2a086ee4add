//! Memory of our server beside hostile peers (issue #11 target: "every good
//! client completes; server RSS within 2 MiB of the same job without
//! attackers; the forged handshake refused"). The server runs in this
//! process (as in server_idle); the same job of 8 libpmix 4.2.2 clients
//! (interop/c/bench_wireup.c) runs twice: alone, then beside the
//! hostile peers of tests/libpmix_server_hostile.rs (test-kit/src/hostile.rs:
//! 320 idle connections, garbage, truncated and oversized frames,
//! slowloris, connect/close churn, forged handshakes for ranks not yet
//! connected and already connected). Each run's figure is this process's
//! peak RSS (VmHWM, reset through /proc/self/clear_refs before the run)
//! from the server's start until the last attacker is refused. Not a test:
//! nothing asserts a figure; it fails only if it cannot run.
//!
//!     nice -n 19 cargo bench --bench server_hostile

use pmix_test_kit::hostile;

use hostile::{Attack, IDLE};
use pmix_test_kit::bench::status_kib;
use pmix_test_kit::interop::build_c;
use pmix_wire::server::Refusal;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

struct Run {
    ok: u32,
    start_kib: u64,
    peak_kib: u64,
    refused: BTreeMap<String, usize>,
    slowloris_cut: bool,
}

/// The variant's name of a refusal ("HandshakeTimeout", "UidMismatch").
fn reason(r: &Refusal) -> String {
    format!("{r:?}")
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or_default()
        .to_string()
}

fn job(client: &Path, n: u32, attacked: bool) -> Run {
    // a fresh peak for this run (Linux >= 4.0: "5" resets VmHWM to VmRSS)
    if std::fs::write("/proc/self/clear_refs", "5").is_err() {
        eprintln!("!! cannot reset VmHWM: the second figure includes the first run's peak");
    }
    let start_kib = status_kib("VmRSS:");
    let ns = if attacked {
        "hostile-bench"
    } else {
        "alone-bench"
    };
    let server = hostile::server(ns, n);
    let addr = server.uri().rsplit_once("//").unwrap().1.to_string();
    let mut attack = attacked.then(|| Attack::before(&addr, ns, n));
    let kids: Vec<_> = (0..n)
        .map(|r| {
            let k = Command::new(client)
                .envs(server.client_env(ns, r))
                .stdout(Stdio::null())
                .spawn()
                .expect("client");
            let pid = k.id();
            server.call(move |s| s.set_rank_pid(ns, r, pid));
            k
        })
        .collect();
    if let Some(a) = attack.as_mut() {
        a.during();
    }
    let ok = kids
        .into_iter()
        .map(|mut k| k.wait().map(|s| s.success()).unwrap_or(false))
        .filter(|ok| *ok)
        .count() as u32;
    let slowloris_cut = attack.as_mut().map(|a| a.slowloris_cut_off()) == Some(true);
    // until every idle attacker has met the handshake deadline (bounded)
    let mut refused: BTreeMap<String, usize> = BTreeMap::new();
    let started = Instant::now();
    loop {
        let batch: Vec<Refusal> = server
            .call(|s| std::iter::from_fn(|| s.poll_refusal().map(|r| r.1)).collect())
            .unwrap_or_default();
        for r in &batch {
            *refused.entry(reason(r)).or_default() += 1;
        }
        let timeouts = refused.get("HandshakeTimeout").copied().unwrap_or(0);
        if !attacked || timeouts >= IDLE || started.elapsed() > Duration::from_secs(60) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let peak_kib = status_kib("VmHWM:");
    drop(attack);
    server.stop();
    Run {
        ok,
        start_kib,
        peak_kib,
        refused,
        slowloris_cut,
    }
}

fn main() {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let client = build_c("bench_wireup", &out).unwrap_or_else(|e| panic!("{e}"));
    let n = 8u32;
    let alone = job(&client, n, false);
    let hostile = job(&client, n, true);
    let list: Vec<String> = hostile
        .refused
        .iter()
        .map(|(k, v)| format!("{k}:{v}"))
        .collect();
    println!(
        "hostile: clients ok {}/{} rss alone={} KiB with-attackers={} KiB delta={} KiB refused={}",
        hostile.ok,
        n,
        alone.peak_kib,
        hostile.peak_kib,
        hostile.peak_kib as i64 - alone.peak_kib as i64,
        list.join(",")
    );
    println!(
        "  alone: clients ok {}/{n}, RSS at start {} KiB, refusals {:?}; \
         with attackers: RSS at start {} KiB, slowloris cut off: {}",
        alone.ok, alone.start_kib, alone.refused, hostile.start_kib, hostile.slowloris_cut
    );
    println!("target: every good client completes, delta <= 2048 KiB, forged claims refused");
}
