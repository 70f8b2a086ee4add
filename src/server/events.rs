//! Events: local delivery in registration order, from clients or the host.

use super::*;

impl Server {
    /// An event from the host (another node, the resource manager) for
    /// this node's clients and tools, within `range` of `source`: delivered
    /// on tag 0 to every connection registered for `code`.
    pub fn notify(&mut self, code: i32, source: &Proc, range: u8, info: Vec<Info>) {
        self.deliver_event(None, code, source, info, range);
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
    /// `code` (or for all events) and that `want` picks.
    pub(super) fn emit(
        &mut self,
        code: i32,
        source: &Proc,
        info: Vec<Info>,
        range: u8,
        want: impl Fn(ConnId, &ConnState) -> bool,
    ) {
        let targets: Vec<(ConnId, Format)> = self
            .conns
            .iter()
            .filter(|(cid, c)| {
                want(**cid, &c.state)
                    && c.events
                        .as_ref()
                        .is_some_and(|e| e.is_empty() || e.contains(&code))
            })
            .filter_map(|(cid, c)| match &c.state {
                ConnState::Client { fmt, .. } | ConnState::Tool { fmt, .. } => Some((*cid, *fmt)),
                ConnState::Handshake => None,
            })
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
}
