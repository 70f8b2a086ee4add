//! `net::Options::on_event`: the server's thread calls the hook after it
//! has queued host events, so a host may sleep until the hook wakes it
//! (`pmixw run`'s loop does, pmixw/src/cli/wake.rs) and never miss one.
//! Live: four libpmix 4.2.2 clients (interop/c/bench_wireup.c) wire up and
//! finalize; this host looks at its events only when the hook has said
//! so, and sees every rank's connect and finalize.

use pmix_test_kit::interop::{build_c, default_out_dir};
use pmix_test_kit::{hostile, process};
use pmix_wire::server::{net, HostEvent, JobSpec};
use std::time::Duration;

#[test]
fn every_host_event_is_followed_by_the_hook() {
    let client = build_c("bench_wireup", &default_out_dir()).unwrap_or_else(|e| panic!("{e}"));
    let (n, ns) = (4u32, "event-hook");
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let tx = std::sync::Mutex::new(tx);
    let server = net::start_opts(
        vec![JobSpec {
            nspace: ns.into(),
            nprocs: n,
            hostname: net::hostname(),
            info: vec![],
        }],
        net::Options {
            on_event: Some(net::EventHook::new(move || {
                let _ = tx.lock().unwrap().send(());
            })),
            ..net::Options::default()
        },
    )
    .expect("our server");
    let kids = hostile::ranks(&server, &client, ns, n);
    let (mut connected, mut finalized, mut hooks) = (0, 0, 0);
    while finalized < n {
        // only when told: an event left without its hook would hang here
        rx.recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| {
                panic!("no hook for a minute: {connected} connected, {finalized} finalized")
            });
        hooks += 1;
        while let Ok(e) = server.events.try_recv() {
            match e {
                HostEvent::Connected(..) => connected += 1,
                HostEvent::Finalized(..) => finalized += 1,
                _ => {}
            }
        }
    }
    assert_eq!(connected, n);
    assert!(
        hooks >= 2,
        "one hook for connects and finalizes alike: {hooks}"
    );
    for k in kids {
        let (ok, out) = process::finish(k, Duration::from_secs(60), "a libpmix client");
        assert!(ok, "a client failed: {out}");
    }
    server.stop();
}
