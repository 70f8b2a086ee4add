//! Requests out with the host: what the core asked of the host with an
//! upcall carrying an id ([`HostEvent::Spawn`], [`HostEvent::Fence`],
//! [`HostEvent::DirectModex`], [`HostEvent::Publish`],
//! [`HostEvent::Lookup`], [`HostEvent::Unpublish`],
//! [`HostEvent::Connect`], [`HostEvent::Disconnect`],
//! [`HostEvent::GroupConstruct`], [`HostEvent::GroupDestruct`]) and waits for it to
//! answer ([`Server::spawned`], [`Server::fence_done`],
//! [`Server::dmodex_done`], [`Server::publish_done`],
//! [`Server::lookup_done`], [`Server::unpublish_done`],
//! [`Server::connect_done`], [`Server::disconnect_done`],
//! [`Server::group_done`]). One counter
//! numbers them all.

#![forbid(unsafe_code)]

use super::ConnId;
#[cfg(doc)]
use super::{HostEvent, Server};
use std::collections::{BTreeMap, BTreeSet};

/// The requests the host has still to answer, by id.
pub(super) struct HostRequests {
    next: u64,
    /// Spawn requests: id → (connection, tag) of the caller.
    spawns: BTreeMap<u64, (ConnId, u32)>,
    /// Fences spanning nodes: id → the local callers.
    fences: BTreeMap<u64, Vec<(ConnId, u32)>>,
    /// Direct-modex requests: id → the rank whose data is wanted.
    dmodex: BTreeMap<u64, (String, u32)>,
    /// The ranks those are for (one request at a time per rank), so that
    /// a GET finds whether its target's was asked for without a search of
    /// every request (after a fence whose data stays at the nodes, a node
    /// holds one for nearly every rank its ranks read).
    dmodex_targets: BTreeSet<(String, u32)>,
    /// Publish, lookup and unpublish requests handed to the host, by id.
    pubsub: BTreeMap<u64, Asked>,
    /// Connects and disconnects spanning nodes (connect.rs) and group
    /// operations (group.rs) handed to the host, by id: the collective,
    /// every local caller in.
    connects: BTreeMap<u64, super::collective::Collective>,
    /// Other requests whose answer goes to one caller (a query …), by
    /// id: what they are, the caller (connection, tag).
    ops: BTreeMap<u64, (HostOp, ConnId, u32)>,
}

/// What a request in [`HostRequests`]'s `ops` is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum HostOp {
    /// A PMIx_Query_info ([`super::Querying::Host`]).
    Query,
    /// A registration for environmental events
    /// ([`super::Registering::Host`]).
    RegEvents,
    /// A PMIx_Allocation_request ([`super::Server::set_host_allocates`]).
    Allocate,
    /// A PMIx_Process_monitor the core does not run
    /// ([`super::Server::set_host_monitors`]).
    Monitor,
    /// A PMIx_Get_credential ([`super::Server::set_host_credentials`]).
    Credential,
    /// A PMIx_Validate_credential ([`super::Server::set_host_validates`]).
    Validate,
}

/// Which of the publish operations a request out with the host is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum PubSubOp {
    Publish,
    Lookup,
    Unpublish,
}

/// A publish, lookup or unpublish out with the host: the caller, and
/// what it asked (for the core to answer itself if the host declines:
/// [`super::Publishing::HostOrLocal`]).
pub(super) struct Asked {
    pub(super) op: PubSubOp,
    pub(super) conn: ConnId,
    pub(super) tag: u32,
    pub(super) proc: pmix_types::Proc,
    pub(super) keys: Vec<String>,
    /// The client's infos (without the `pmix.euid` the host was given).
    pub(super) info: Vec<pmix_types::Info>,
    /// When the client asked (a waiting lookup's timeout runs from there).
    pub(super) at: std::time::Instant,
}

impl Default for HostRequests {
    fn default() -> Self {
        HostRequests {
            next: 1,
            spawns: BTreeMap::new(),
            fences: BTreeMap::new(),
            dmodex: BTreeMap::new(),
            dmodex_targets: BTreeSet::new(),
            pubsub: BTreeMap::new(),
            connects: BTreeMap::new(),
            ops: BTreeMap::new(),
        }
    }
}

impl HostRequests {
    fn id(&mut self) -> u64 {
        let id = self.next;
        self.next += 1;
        id
    }

    /// A spawn the caller (connection, tag) asked for: its id.
    pub(super) fn spawn(&mut self, caller: (ConnId, u32)) -> u64 {
        let id = self.id();
        self.spawns.insert(id, caller);
        id
    }

    /// The caller of spawn `request`, now answered.
    pub(super) fn take_spawn(&mut self, request: u64) -> Option<(ConnId, u32)> {
        self.spawns.remove(&request)
    }

    /// A fence spanning nodes, with its local callers: its id.
    pub(super) fn fence(&mut self, callers: Vec<(ConnId, u32)>) -> u64 {
        let id = self.id();
        self.fences.insert(id, callers);
        id
    }

    /// The local callers of fence `request`, now answered.
    pub(super) fn take_fence(&mut self, request: u64) -> Option<Vec<(ConnId, u32)>> {
        self.fences.remove(&request)
    }

    /// Whether the host was already asked for `target`'s data.
    pub(super) fn dmodex_asked(&self, target: &(String, u32)) -> bool {
        self.dmodex_targets.contains(target)
    }

    /// A direct modex for `target`'s data: its id.
    pub(super) fn dmodex(&mut self, target: (String, u32)) -> u64 {
        let id = self.id();
        self.dmodex_targets.insert(target.clone());
        self.dmodex.insert(id, target);
        id
    }

    /// The rank direct modex `request` is for, while it is unanswered.
    pub(super) fn dmodex_target(&self, request: u64) -> Option<&(String, u32)> {
        self.dmodex.get(&request)
    }

    /// The rank direct modex `request` was for, now answered.
    pub(super) fn take_dmodex(&mut self, request: u64) -> Option<(String, u32)> {
        // (a rank is asked for only while no request for it is open:
        // Server::get)
        let target = self.dmodex.remove(&request)?;
        self.dmodex_targets.remove(&target);
        Some(target)
    }

    /// A publish, lookup or unpublish handed to the host: its id.
    pub(super) fn pubsub(&mut self, asked: Asked) -> u64 {
        let id = self.id();
        self.pubsub.insert(id, asked);
        id
    }

    /// What `request` asked, now answered, if it is an `op` the host has
    /// still to answer (else it stays, and None).
    pub(super) fn take_pubsub(&mut self, op: PubSubOp, request: u64) -> Option<Asked> {
        match self.pubsub.get(&request) {
            Some(a) if a.op == op => self.pubsub.remove(&request),
            _ => None,
        }
    }

    /// A connect, disconnect or group operation handed to the host: its id.
    pub(super) fn connect(&mut self, col: super::collective::Collective) -> u64 {
        let id = self.id();
        self.connects.insert(id, col);
        id
    }

    /// The connect, disconnect or group operation `request` (of kind `kind`), now
    /// answered; None (and it stays) for another kind or id.
    pub(super) fn take_connect(
        &mut self,
        kind: super::CollKind,
        request: u64,
    ) -> Option<super::collective::Collective> {
        match self.connects.get(&request) {
            Some(c) if c.kind == kind => self.connects.remove(&request),
            _ => None,
        }
    }

    /// A tool handshake handed to the host (tool_peers.rs keeps it): its
    /// id.
    pub(super) fn tool(&mut self) -> u64 {
        self.id()
    }

    /// A `kind` request of the caller (connection, tag): its id.
    pub(super) fn op(&mut self, kind: HostOp, (conn, tag): (ConnId, u32)) -> u64 {
        let id = self.id();
        self.ops.insert(id, (kind, conn, tag));
        id
    }

    /// The caller of `kind` request `request`, now answered; None (and it
    /// stays) for another kind or id, or a caller gone.
    pub(super) fn take_op(&mut self, kind: HostOp, request: u64) -> Option<(ConnId, u32)> {
        match self.ops.get(&request) {
            Some((k, ..)) if *k == kind => self.ops.remove(&request).map(|(_, c, t)| (c, t)),
            _ => None,
        }
    }

    /// Connection `id` closed: the answers it waited for go to nobody.
    pub(super) fn drop_conn(&mut self, id: ConnId) {
        self.spawns.retain(|_, (c, _)| *c != id);
        self.ops.retain(|_, (_, c, _)| *c != id);
        for col in self.connects.values_mut() {
            col.arrived.retain(|a| a.0 != id);
        }
        self.pubsub.retain(|_, a| a.conn != id);
        for callers in self.fences.values_mut() {
            callers.retain(|(c, _)| *c != id);
        }
    }
}
