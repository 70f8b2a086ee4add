//! Events: local delivery in registration order, from clients or the host.

#![forbid(unsafe_code)]

use super::{jobctl, range, ConnId, ConnState, HostEvent, Output, Server};
use pmix_codec::frame::tag;
use pmix_codec::msg::{EventNotice, Reply};
use pmix_codec::Format;
use pmix_types::enums::DataRange;
use pmix_types::status::codes;
use pmix_types::{Info, Proc, Value};
use std::collections::{BTreeMap, BTreeSet};

/// The events area's state: which connections registered for events, in
/// registration order (each connection's codes are in its link,
/// [`crate::link::Link`]'s `events`).
#[derive(Default)]
pub(super) struct Registrations {
    /// Registration number → connection.
    order: BTreeMap<u64, ConnId>,
    next: u64,
    /// Who is asked about environmental codes.
    mode: Registering,
    /// The codes the host accepted registrations for.
    with_host: BTreeSet<i32>,
    /// Registrations out with the host: request id → their codes.
    pending: BTreeMap<u64, Vec<i32>>,
}

/// Who hears of a registration for an environmental event (a code from
/// PMIX_EVENT_SYS_BASE, -230, to PMIX_EVENT_SYS_OTHER, -330: node down,
/// …, which only the resource manager can raise)
/// ([`Server::set_registering`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Registering {
    /// The core registers every code itself. The default.
    #[default]
    Local,
    /// A registration naming an environmental code the host has not yet
    /// accepted one for goes to the host first
    /// ([`HostEvent::RegisterEvents`], with every code of the registration
    /// and its attributes, as libpmix 4.2.2's server hands them), and
    /// takes effect when the host accepts ([`Server::register_events_done`]);
    /// the host's error is the client's answer. Deregistrations are not
    /// passed on (libpmix 4.2.2 passes none).
    Host,
}

/// An environmental code, which only the host can raise (the standard's
/// PMIX_EVENT_SYS_BASE down to PMIX_EVENT_SYS_OTHER).
fn environmental(code: i32) -> bool {
    (-330..=-230).contains(&code)
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

    /// Who hears of registrations for environmental events from now on
    /// (default [`Registering::Local`]).
    pub fn set_registering(&mut self, mode: Registering) {
        self.events.mode = mode;
    }

    /// REGEVENTS of connection `id` (tag `t`): registered here, or first
    /// handed to the host ([`Registering::Host`]).
    pub(super) fn register_request(
        &mut self,
        id: ConnId,
        t: u32,
        codes: Vec<i32>,
        info: Vec<Info>,
    ) {
        let new = codes
            .iter()
            .any(|c| environmental(*c) && !self.events.with_host.contains(c));
        if self.events.mode != Registering::Host || !new {
            return self.register_events(id, t, codes);
        }
        let request = self
            .requests
            .op(super::requests::HostOp::RegEvents, (id, t));
        self.events.pending.insert(request, codes.clone());
        self.out.push_back(Output::Host(HostEvent::RegisterEvents {
            request,
            codes,
            info,
        }));
    }

    /// The host's answer to [`HostEvent::RegisterEvents`]: on success the
    /// registration takes effect, else the client gets the status. False
    /// (and nothing sent) for an id that is no registration out with the
    /// host, or whose client has gone.
    pub fn register_events_done(&mut self, request: u64, status: i32) -> bool {
        let codes = self.events.pending.remove(&request);
        let caller = self
            .requests
            .take_op(super::requests::HostOp::RegEvents, request);
        let (Some(codes), Some((id, t))) = (codes, caller) else {
            return false;
        };
        if status != codes::PMIX_SUCCESS {
            self.reply(id, t, &Reply::Status(status));
            return true;
        }
        self.events
            .with_host
            .extend(codes.iter().copied().filter(|c| environmental(*c)));
        self.register_events(id, t, codes);
        true
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
