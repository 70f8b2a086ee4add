//! PMIx_Connect and PMIx_Disconnect across nodes: completed by the core
//! itself (one node), or handed to the host ([`Connecting`]), as libpmix
//! 4.2.2's server hands its host's `connect` and `disconnect` upcalls a
//! collective whose participants are not all on this node.

#![forbid(unsafe_code)]

use super::{CollKind, HostEvent, Output, Server};
use pmix_codec::msg::Reply;
use pmix_types::status::codes;
use pmix_types::{Info, Value};

/// Who completes a PMIx_Connect or PMIx_Disconnect some of whose
/// participants run on other nodes ([`Server::set_nodes`]), once every
/// local participant has called in ([`Server::set_connecting`]). A
/// collective all of whose participants are here the core always
/// completes itself, as libpmix 4.2.2's server does (its host is not
/// called then).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Connecting {
    /// The core answers success once the local participants are in
    /// (the other nodes' servers answer theirs). The default.
    #[default]
    Local,
    /// The host completes it across the nodes: [`HostEvent::Connect`] or
    /// [`HostEvent::Disconnect`], with the participants and the first
    /// caller's attributes, answered by [`Server::connect_done`] or
    /// [`Server::disconnect_done`].
    Host,
}

impl Server {
    /// Who completes connects and disconnects spanning nodes from now on
    /// (default [`Connecting::Local`]); set before clients connect.
    pub fn set_connecting(&mut self, mode: Connecting) {
        self.collectives.set_connecting(mode);
    }

    /// Collective `idx` is complete here: a connect or disconnect that
    /// spans nodes, under [`Connecting::Host`], goes to the host (true).
    /// The host is given the participants as the first caller named them
    /// (sorted), and its attributes, then `pmix.sorted.parr` (true) and
    /// `pmix.loc.col.st` (the local status, SUCCESS), as libpmix 4.2.2's
    /// server appends them.
    pub(super) fn connect_to_host(&mut self, idx: usize) -> bool {
        let col = &self.collectives[idx];
        let connect = match col.kind {
            CollKind::Connect => true,
            CollKind::Disconnect => false,
            _ => return false,
        };
        if !(col.complete() && col.spans()) || self.collectives.connecting() != Connecting::Host {
            return false;
        }
        let col = self.collectives.remove(idx);
        let procs = col.given();
        let mut info = col.info.clone();
        info.push(Info::new("pmix.sorted.parr", Value::Bool(true)));
        info.push(Info::new(
            "pmix.loc.col.st",
            Value::Status(codes::PMIX_SUCCESS),
        ));
        let request = self.requests.connect(col);
        let e = if connect {
            HostEvent::Connect {
                request,
                procs,
                info,
            }
        } else {
            HostEvent::Disconnect {
                request,
                procs,
                info,
            }
        };
        self.out.push_back(Output::Host(e));
        true
    }

    /// The host's answer to `kind` `request`: success completes it as
    /// the core would (a connect's callers get the other namespaces' job
    /// data), another status is every local caller's answer.
    fn connect_answered(&mut self, kind: CollKind, request: u64, status: i32) -> bool {
        let Some(col) = self.requests.take_connect(kind, request) else {
            tracing::warn!(target: "pmix_wire::server", request, ?kind, "an answer for no {kind:?} out with the host: ignored");
            return false;
        };
        if status == codes::PMIX_SUCCESS {
            self.answer_collective(col);
        } else {
            for (conn, t, _) in col.arrived {
                self.reply(conn, t, &Reply::Status(status));
            }
        }
        true
    }

    /// The host's answer to [`HostEvent::Connect`]: its status (the
    /// standard's `pmix_op_cbfunc_t`). False (and nothing sent) for an id
    /// that is no connect out with the host.
    pub fn connect_done(&mut self, request: u64, status: i32) -> bool {
        self.connect_answered(CollKind::Connect, request, status)
    }

    /// The host's answer to [`HostEvent::Disconnect`]: its status. False
    /// (and nothing sent) for an id that is no disconnect out with the
    /// host.
    pub fn disconnect_done(&mut self, request: u64, status: i32) -> bool {
        self.connect_answered(CollKind::Disconnect, request, status)
    }
}
