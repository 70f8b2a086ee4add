//! Events: local delivery in registration order, from clients or the host.

#![forbid(unsafe_code)]

use super::{jobctl, range, ConnId, ConnState, HostEvent, Output, Server};
use pmix_codec::frame::tag;
use pmix_codec::msg::{EventNotice, Reply};
use pmix_codec::Format;
use pmix_types::enums::DataRange;
use pmix_types::status::codes;
use pmix_types::{Info, Proc, Value};
use std::collections::BTreeMap;

/// The events area's state: which connections registered for events, in
/// registration order (each connection's codes are in its link,
/// [`crate::link::Link`]'s `events`).
#[derive(Default)]
pub(super) struct Registrations {
    /// Registration number → connection.
    order: BTreeMap<u64, ConnId>,
    next: u64,
}

impl Registrations {
    /// Connection `id` registers for the first time: its place in the
    /// delivery order.
    fn add(&mut self, id: ConnId) -> u64 {
        let seq = self.next;
        self.next += 1;
        self.order.insert(seq, id);
        seq
    }

    /// A connection closed that had registered with number `seq`, if any.
    pub(super) fn drop_conn(&mut self, seq: Option<u64>) {
        if let Some(seq) = seq {
            self.order.remove(&seq);
        }
    }
}

impl Server {
    /// An event from the host (another node, the resource manager) for
    /// this node's clients and tools, within `range` of `source`: delivered
    /// on tag 0 to every connection registered for `code`.
    pub fn notify(&mut self, code: i32, source: &Proc, range: DataRange, info: Vec<Info>) {
        self.deliver_event(None, code, source, info, range.wire());
    }

    /// Deliver an event to the local connections registered for its code
    /// and within its range: PROC_LOCAL and RM reach nobody here,
    /// NAMESPACE the source's namespace, anything else every connection.
    /// The sender (`from`) delivers to itself.
    pub(super) fn deliver_event(
        &mut self,
        from: Option<ConnId>,
        code: i32,
        source: &Proc,
        info: Vec<Info>,
        range: u8,
    ) {
        if matches!(range, range::PROC_LOCAL | range::RM) {
            return;
        }
        // CUSTOM with `pmix.evrange`: only the procs it lists (jobctl.rs)
        let custom = jobctl::custom_range(range, &info);
        self.emit(code, source, info, range, |cid, state| {
            Some(cid) != from
                && match state {
                    ConnState::Client { proc, .. } => match &custom {
                        Some(set) => jobctl::names(set, proc),
                        None => range != range::NAMESPACE || proc.nspace == source.nspace,
                    },
                    // a tool attached to this server sees its jobs' events
                    ConnState::Tool { .. } => true,
                    ConnState::Handshake => false,
                }
        });
    }

    /// Send an event on tag 0 to every connection that registered for
    /// `code` (or for all events) and that `want` picks, in the order the
    /// connections first registered.
    pub(super) fn emit(
        &mut self,
        code: i32,
        source: &Proc,
        info: Vec<Info>,
        range: u8,
        want: impl Fn(ConnId, &ConnState) -> bool,
    ) {
        // registration order, never the order of a hash map
        let targets: Vec<(ConnId, Format)> = self
            .events
            .order
            .values()
            .filter_map(|cid| Some((cid, self.conns.get(cid)?)))
            .filter(|(cid, c)| want(**cid, &c.state) && c.link.events.hears(code))
            .filter_map(|(cid, c)| Some((*cid, c.format()?)))
            .collect();
        for (cid, fmt) in targets {
            let ev = EventNotice {
                status: code,
                source: source.clone(),
                info: info.clone(),
                range: Some(range),
            };
            if let Ok(b) = ev.encode(&fmt) {
                self.send(cid, tag::NOTIFY, &b);
            }
        }
    }

    /// REGEVENTS: the connection hears these codes (none: every code).
    pub(super) fn register_events(&mut self, id: ConnId, t: u32, codes: Vec<i32>) {
        if let Some(c) = self.conns.get_mut(&id) {
            if c.registered.is_none() {
                // events reach connections in the order they registered
                c.registered = Some(self.events.add(id));
            }
            c.link.events.register(&codes);
        }
        self.reply(id, t, &Reply::Status(codes::PMIX_SUCCESS));
    }

    /// A client's NOTIFY: answered, handed to the host when its range
    /// reaches beyond this node, delivered here.
    pub(super) fn client_notify(
        &mut self,
        id: ConnId,
        t: u32,
        proc: &Proc,
        code: i32,
        range: u8,
        mut info: Vec<Info>,
    ) {
        self.reply(id, t, &Reply::Status(codes::PMIX_SUCCESS));
        // a leader's PMIx_Group_invite announcing its group (group.rs)
        if code == codes::PMIX_GROUP_CONSTRUCT_COMPLETE {
            self.group_announced(&info);
        }
        // beyond this node, the host spreads it (and answers nothing)
        if !matches!(range, range::LOCAL | range::PROC_LOCAL) {
            self.out.push_back(Output::Host(HostEvent::Notified {
                code,
                source: proc.clone(),
                range,
                info: info.clone(),
            }));
        }
        info.push(Info::new("pmix.srvr.internal.notify", Value::Bool(true)));
        self.deliver_event(Some(id), code, proc, info, range);
    }
}
