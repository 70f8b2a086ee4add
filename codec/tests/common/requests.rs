//! Sample requests the message-table tests (`msg_table.rs`,
//! `command_layouts.rs`) share: the INFO and PROC lists most samples carry,
//! and the requests both use as they are.

use pmix_codec::msg::Request;
use pmix_types::{Info, Proc, Value};

/// Two INFOs of different types.
pub fn info() -> Vec<Info> {
    vec![
        Info::new("pmix.my.key", Value::Uint32(7)),
        Info::new("x", Value::String(Some("y".into()))),
    ]
}

/// Two PROCs, one with the largest ordinary rank.
pub fn procs() -> Vec<Proc> {
    vec![Proc::new("job1", 0), Proc::new("job1", u32::MAX - 1)]
}

/// The requests whose fields have one obvious sample (no list to vary).
pub fn plain_requests() -> Vec<Request> {
    vec![
        Request::Monitor {
            monitor: Info::new("pmix.monitor.hb", Value::Bool(true)),
            error: -1,
            directives: vec![],
        },
        Request::IofDereg {
            directives: vec![],
            remote_id: 3,
        },
        Request::FabricUpdate { index: 1 },
        Request::RefreshCache {
            nspace: Some("job1".into()),
            rank: 3,
        },
        Request::ResolvePeers {
            node: Some("node01".into()),
            nspace: None,
        },
        Request::ResolveNode {
            nspace: Some("job1".into()),
        },
        Request::GdsFallback {
            module: Some("hash".into()),
        },
    ]
}
