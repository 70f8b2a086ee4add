//! Tool connections accepted and named by the host (issue #35,
//! `ToolConnections::Host`) or by the core (`Local`, the default),
//! against our tool core in memory (test-kit/src/pair.rs).

use pmix_test_kit::pair;

use pair::Pair;
use pmix_codec::msg::Request;
use pmix_types::status::codes;
use pmix_types::{Info, Proc, Query, Value};
use pmix_wire::client::Event;
use pmix_wire::server::{HostEvent, ToolConnections};

fn asked(pair: &mut Pair) -> Vec<HostEvent> {
    std::mem::take(&mut pair.host)
        .into_iter()
        .filter(|e| matches!(e, HostEvent::ToolConnected { .. }))
        .collect()
}

fn connected(pair: &Pair, p: usize) -> bool {
    pair.peers[p]
        .events
        .iter()
        .any(|(_, e)| matches!(e, Event::Connected { .. }))
}

fn keys(v: &[Info]) -> Vec<(String, Value)> {
    v.iter()
        .map(|i| (i.key.to_string(), i.value.clone()))
        .collect()
}

/// The host is handed the tool's infos and what libpmix 4.2.2 adds; the
/// tool waits for it; the name the host gives is the tool's, and it is
/// then served.
#[test]
fn the_host_names_a_tool_that_asks_for_an_identity() {
    let mut pair = Pair::new(&[("tj", 1)]);
    pair.server.set_tool_connections(ToolConnections::Host);
    let note = Info::new("tool.note", Value::Uint32(9));
    let t = pair.tool(vec![note.clone()]);
    pair.drive();
    let ev = asked(&mut pair);
    let [HostEvent::ToolConnected { request, info }] = ev.as_slice() else {
        panic!("{ev:?}")
    };
    let mut got = keys(info);
    let version = got.remove(1);
    assert_eq!(version.0, "pmix.version");
    assert_eq!(
        got,
        keys(&[
            note,
            Info::new("pmix.euid", Value::Uint32(pair::UID)),
            Info::new("pmix.egid", Value::Uint32(pair::GID)),
        ])
    );
    assert!(!connected(&pair, t), "the tool waits for the host");
    let name = Proc::new("host-tool", 5);
    assert!(pair.server.tool_connected_done(*request, Ok(name.clone())));
    assert!(!pair.server.tool_connected_done(*request, Ok(name.clone())));
    pair.drive();
    assert!(connected(&pair, t));
    assert_eq!(pair.core(t).env.proc, name);
    let q = Request::Query {
        queries: vec![Query {
            keys: vec!["pmix.qry.ns".into()],
            qualifiers: vec![],
        }],
    };
    let tag = pair.send(t, &q);
    pair.drive();
    assert!(pair.reply(t, tag).is_some(), "the named tool is served");
}

/// The host's refusal closes the tool's connection; under `Local` (the
/// default) the core names the tool and the host hears nothing.
#[test]
fn a_refused_tool_is_closed_and_by_default_the_core_names_tools() {
    let mut pair = Pair::new(&[("tj", 1)]);
    pair.server.set_tool_connections(ToolConnections::Host);
    let t = pair.tool(vec![]);
    pair.drive();
    let ev = asked(&mut pair);
    let [HostEvent::ToolConnected { request, .. }] = ev.as_slice() else {
        panic!("{ev:?}")
    };
    assert!(pair
        .server
        .tool_connected_done(*request, Err(codes::PMIX_ERR_NO_PERMISSIONS)));
    pair.drive();
    assert!(!connected(&pair, t));
    assert!(pair.peers[t].closed, "the refused tool's connection closes");

    let mut pair = Pair::new(&[("tj", 1)]);
    let t = pair.tool(vec![]);
    pair.drive();
    assert!(asked(&mut pair).is_empty());
    assert!(connected(&pair, t));
    assert_eq!(pair.core(t).env.proc, Proc::new("pmixw-tool-1", 0));
}
