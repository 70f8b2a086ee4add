//! Events: local delivery in registration order, from clients or the host.

use super::*;
use pmix_types::enums::DataRange;

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
            .registered
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
                let seq = self.next_registration;
                self.next_registration += 1;
                c.registered = Some(seq);
                self.registered.insert(seq, id);
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
