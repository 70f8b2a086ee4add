//! The server core, [`Server`]: its fields (the jobs, the outbox, and one
//! struct per area, each owned by its module), the verbs a driver calls
//! (`handle_input`, `closed`, `poll_event`, `poll_transmit`,
//! `poll_timeout`, `handle_timeout`), the host's registration of jobs, and
//! the router that hands each request to the area that answers it.

#![forbid(unsafe_code)]

use super::jobs::{Job, RankState};
use super::requests::{Asked, PubSubOp};
use super::{
    collective, connection, dstore, events, group, info_true, jobctl, jobinfo, modex, monitor,
    name, pubsub, query, requests, tool_peers, CollKind, ConnId, ConnState, HostEvent, JobSpec,
    Limits, NodeMap, Output, Refusal, Transmit, Verify, RANK_WILDCARD,
};
use crate::link::Incoming;
use pmix_codec::frame::tag;
use pmix_codec::msg::{Reply, Request};
use pmix_codec::registry::Registry;
use pmix_codec::Format;
use pmix_types::status::codes;
use pmix_types::Rank;
use pmix_types::{PString, Proc};
use std::collections::BTreeMap;
use std::time::Instant;

/// What the core has for its driver: bytes and closes per connection,
/// upcalls for the host; [`Output`]s are sorted into them as they are made
/// (the queue every server core of the crate shares: [`crate::sansio`]).
pub(super) type Outbox = crate::sansio::Outbox<HostEvent, bytes::Bytes>;

/// The server core: the routing (here) and the state each area owns in
/// its own module (quinn-proto's `Connection` is split the same way).
/// When a connection closes, each area drops what it held for it
/// ([`Server::closed`]).
pub struct Server {
    /// Registered jobs and their ranks (every area reads them).
    pub(super) jobs: BTreeMap<String, Job>,
    /// Open connections, pending handshakes, peer checks, limits,
    /// refusals (connection.rs).
    pub(super) conns: connection::Conns,
    /// What the driver and the host have still to take.
    pub(super) out: Outbox,
    /// Each namespace's wire format and version, as its first client
    /// announced them.
    pub(super) registry: Registry,
    /// The shared-memory store clients read, if the driver installed one
    /// (shared_store.rs).
    pub(super) shared_store: Option<Box<dyn dstore::SharedStore>>,
    /// GETs waiting for data (modex.rs).
    pub(super) modex: modex::Modex,
    /// Published data and waiting lookups (pubsub.rs).
    pub(super) pubsub: pubsub::PubSub,
    /// Collectives in progress, the host's places in them (collective.rs).
    pub(super) collectives: collective::Collectives,
    /// What the host said of processes, process sets, memory (query.rs).
    pub(super) queries: query::Queries,
    /// Connections registered for events, in registration order (events.rs).
    pub(super) events: events::Registrations,
    /// Job-info replies built, REQs held for a node map (jobinfo.rs).
    pub(super) jobinfo: jobinfo::JobInfoCache,
    /// Spawns, fences and direct modex out with the host (requests.rs).
    pub(super) requests: requests::HostRequests,
    /// The server's identity, the tools given one (tool_peers.rs).
    pub(super) tools: tool_peers::Tools,
    /// Process groups (group.rs).
    pub(super) groups: group::Groups,
    /// Checkpoint methods, preemptible processes, cleanups (jobctl.rs);
    /// heartbeat monitors (monitor.rs), IO forwarding (iof.rs): the
    /// standard's process management.
    pub(super) jobctl: jobctl::State,
}

impl Server {
    /// A server with no namespace registered and default limits.
    pub fn new() -> Server {
        Server {
            jobs: BTreeMap::new(),
            conns: connection::Conns::default(),
            out: Outbox::default(),
            registry: Registry::new(Format::V41, None),
            shared_store: None,
            modex: modex::Modex::default(),
            pubsub: pubsub::PubSub::default(),
            collectives: collective::Collectives::default(),
            queries: query::Queries::default(),
            events: events::Registrations::default(),
            jobinfo: jobinfo::JobInfoCache::default(),
            requests: requests::HostRequests::default(),
            tools: tool_peers::Tools::default(),
            groups: group::Groups::default(),
            jobctl: jobctl::State::default(),
        }
    }

    /// Limits on peers (handshake deadline, caps); see [`Limits`].
    pub fn set_limits(&mut self, limits: Limits) {
        self.conns.set_limits(limits);
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        self.conns.limits()
    }

    /// How to check that a connecting process is a rank's launched process
    /// (the net driver installs `net::peercred::ProcVerify`).
    pub fn set_verifier(&mut self, v: Box<dyn Verify>) {
        self.conns.set_verifier(v);
    }

    pub(super) fn rank_mut(&mut self, nspace: &str, rank: u32) -> Option<&mut RankState> {
        self.jobs
            .get_mut(nspace)
            .and_then(|j| j.ranks.get_mut(rank as usize))
    }

    /// The server's own nspace and rank, as its URI names them.
    pub fn set_identity(&mut self, nspace: &str, rank: impl Into<Rank>) {
        self.tools.set_identity(Proc::at(nspace, rank.into()));
    }

    /// Refuse messages larger than this before buffering them.
    pub fn set_max_message(&mut self, max: usize) {
        self.conns.set_max_message(max);
    }

    /// Register a namespace; its ranks may then connect.
    pub fn register_nspace(&mut self, spec: JobSpec) {
        self.job_info_changed();
        let nspace = spec.nspace.clone();
        let ranks = (0..spec.nprocs).map(|_| RankState::default()).collect();
        self.jobs.insert(
            spec.nspace.clone(),
            Job {
                spec,
                ranks,
                nodes: None,
                origin: Default::default(),
                shared: None,
            },
        );
        self.shared_add(&nspace);
    }

    /// Forget the ended job `nspace` (PMIx_server_deregister_nspace): its
    /// registration, its ranks and what they committed, the format its
    /// clients announced, the job-info replies built for it and its
    /// process records; the namespace queries still list it, with its
    /// size and status, among the last [`query::RETIRED_KEPT`]. A server
    /// that outlives its jobs (a host's long-lived library, `pmixw dvm`)
    /// calls it for each job that ended, else every job stays (the soak
    /// through one DVM grew about 10 KiB a job without it,
    /// spec-notes/bench.md "Soak"). Connections of its ranks
    /// still open are not closed: their requests for the namespace find
    /// it unknown from now on. What the job published stays as its
    /// persistence says (pubsub.rs); cleanups it registered are the
    /// host's to take first ([`Server::take_cleanups`]).
    pub fn deregister_nspace(&mut self, nspace: &str) {
        let Some(nprocs) = self.jobs.get(nspace).map(|j| j.spec.nprocs) else {
            return;
        };
        // the namespace queries still answer for it (query.rs RETIRED_KEPT)
        self.retire_job(nspace, nprocs);
        self.jobs.remove(nspace);
        self.job_info_changed();
        self.jobinfo.release(nspace);
        self.registry.forget(&pmix_types::Nspace::from(nspace));
    }

    /// The environment a rank needs (PMIx_server_setup_fork): the
    /// rendezvous URI under every variable a libpmix client of any version
    /// looks for (`select::SERVER_URI_VARS`), and
    /// the modules it must use so that job data crosses the socket.
    pub fn client_env(
        &self,
        nspace: &str,
        rank: impl Into<Rank>,
        uri: &str,
    ) -> Vec<(String, String)> {
        let rank = rank.into().wire();
        let mut env = vec![
            ("PMIX_NAMESPACE".into(), nspace.to_string()),
            ("PMIX_RANK".into(), rank.to_string()),
        ];
        // every dialect we speak, as a 6.1 server names them (URI61 …
        // URI12), plus 4.2.2's URI2; each client takes the newest it knows
        for (v, _) in pmix_codec::select::SERVER_URI_VARS {
            env.push((v.to_string(), uri.to_string()));
        }
        env.push(("PMIX_SECURITY_MODE".into(), "native".into()));
        env.push((
            "PMIX_BFROP_BUFFER_TYPE".into(),
            "PMIX_BFROP_BUFFER_NON_DESC".into(),
        ));
        match (
            &self.shared_store,
            self.jobs.get(nspace).and_then(|j| j.shared),
        ) {
            // ds21 for a namespace the store holds (spec-notes/dstore.md
            // §1.2); no PMIX_MCA_gds, which would keep ds21 from opening
            (Some(store), Some(_)) => env.extend(store.env()),
            _ => {
                env.push(("PMIX_GDS_MODULE".into(), "hash".into()));
                env.push(("PMIX_MCA_gds".into(), "hash".into()));
            }
        }
        if let Some(j) = self.jobs.get(nspace) {
            env.push(("PMIX_HOSTNAME".into(), j.spec.hostname.clone()));
        }
        env.push(("PMIX_VERSION".into(), "4.2.2".into()));
        env
    }

    /// Say which ranks of a namespace run on this node; the others are on
    /// other nodes, reached through the host (fence and direct modex
    /// upcalls). By default every rank is local.
    pub fn set_local_ranks<R: Into<Rank> + Copy>(&mut self, nspace: &str, local: &[R]) {
        if let Some(j) = self.jobs.get_mut(nspace) {
            // one pass over each (not a search of the local ranks per rank:
            // O(N·N/k) on a node of N/k ranks of N)
            let mut here = vec![false; j.ranks.len()];
            for r in local {
                if let Some(h) = here.get_mut((*r).into().wire() as usize) {
                    *h = true;
                }
            }
            for (st, h) in j.ranks.iter_mut().zip(here) {
                st.elsewhere = !h;
            }
        }
    }

    /// Say on which nodes a namespace's ranks run (this node's ranks are
    /// local, the others reached through the host) and give every rank the
    /// job data of that layout: node list, node ids, each node's peers,
    /// local and node ranks.
    /// REQs held by [`Server::await_nodes`] are answered now.
    pub fn set_nodes(&mut self, nspace: &str, map: NodeMap) {
        if let Some(mine) = map.nodes.get(map.me).map(|n| n.1.clone()) {
            self.set_local_ranks(nspace, &mine);
        }
        if let Some(j) = self.jobs.get_mut(nspace) {
            j.nodes = Some(map);
        }
        // the job data now describes the nodes
        self.job_info_changed();
        // and the shared store's copy of it, if written already, too
        if let Some(Some(fmt)) = self.jobs.get(nspace).and_then(|j| j.shared) {
            if let Some(j) = self.jobs.get_mut(nspace) {
                j.shared = Some(None);
            }
            self.shared_job(&fmt, nspace);
        }
        for (id, t) in self.jobinfo.release(nspace) {
            self.answer_req(id, t, nspace);
        }
    }

    /// The host will give this namespace's node map ([`Server::set_nodes`])
    /// once it has learnt it (from the other nodes): its ranks' REQs (the
    /// job data every rank reads in PMIx_Init) wait until then, so that a
    /// host can start its ranks before it has heard from the other nodes.
    pub fn await_nodes(&mut self, nspace: &str) {
        if self.jobs.contains_key(nspace) {
            self.jobinfo.await_nodes(nspace);
        }
    }

    /// The next upcall for the host, if any. A driver drains these before
    /// [`Server::poll_transmit`]: then the host always hears of an event
    /// (an abort, a finalize) before the reply that follows it is written.
    pub fn poll_event(&mut self) -> Option<HostEvent> {
        self.out.events.pop_front()
    }

    /// The next bytes to write or connection to close, in order per
    /// connection.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.out.transmits.pop_front()
    }

    /// When [`Server::handle_timeout`] should next be called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.modex
            .next_deadline()
            .into_iter()
            .chain(self.pubsub.next_deadline())
            .chain(self.conns.next_deadline())
            .chain(self.jobctl.monitors.next_deadline())
            .min()
    }

    /// Expire waits whose time has come.
    pub fn handle_timeout(&mut self, now: Instant) {
        for id in self.conns.take_overdue(now) {
            let r = Refusal::HandshakeTimeout(self.conns.limits().handshake_timeout);
            self.refuse(id, r);
        }
        for (conn, t) in self.modex.take_due(now) {
            self.reply(conn, t, &Reply::Status(codes::PMIX_ERR_TIMEOUT));
        }
        for (conn, t) in self.pubsub.take_due(now) {
            self.reply(conn, t, &Reply::Status(codes::PMIX_ERR_NOT_FOUND));
        }
        self.monitors_due(now);
    }

    /// Bytes received on a connection, at `now`.
    pub fn handle_input(&mut self, id: ConnId, data: &[u8], now: Instant) {
        let Some(c) = self.conns.get_mut(&id) else {
            return;
        };
        c.link.push(data);
        loop {
            let Some(c) = self.conns.get_mut(&id) else {
                return;
            };
            let result = match c.link.poll_incoming() {
                Ok(None) => return,
                // oversize or an unreadable handshake: this peer only
                Err(e) => Err(Refusal::from(e)),
                Ok(Some(Incoming::Hello(req))) => self.handshake(id, &req),
                Ok(Some(Incoming::Message(m))) => self.route(id, m.header.tag, &m.payload, now),
            };
            if let Err(r) = result {
                self.refuse(id, r);
                return;
            }
        }
    }

    /// The connection ended (the peer closed it or the driver gave up):
    /// every area drops what it held for it.
    pub fn closed(&mut self, id: ConnId) {
        let Some(c) = self.conns.remove(id) else {
            return;
        };
        self.events.drop_conn(c.registered);
        self.modex.drop_conn(id);
        self.pubsub.drop_conn(id);
        self.requests.drop_conn(id);
        self.drop_tool_conn(id);
        self.jobinfo.drop_conn(id);
        self.jobctl.monitors.drop_conn(id);
        self.jobctl.iof.drop_conn(id);
        if let ConnState::Client { proc } = c.state {
            self.client_closed(id, proc, c.finalized);
        }
    }

    /// A rank's REQ: the job data of its namespace, shared by every rank;
    /// to a ds21 client whose namespace's job data is in the store, only
    /// what it keeps from the reply (jobinfo.rs, `Form::Store`).
    pub(super) fn answer_req(&mut self, id: ConnId, t: u32, nspace: &str) {
        let Some(fmt) = self.fmt_of(id) else { return };
        self.shared_job(&fmt, nspace);
        // the job data is in the store once `shared` names its format
        let in_store = matches!(self.jobs.get(nspace).map(|j| j.shared), Some(Some(Some(_))));
        let form = if in_store && self.conns.get(&id).is_some_and(|c| c.ds21) {
            super::jobinfo::Form::Store
        } else {
            super::jobinfo::Form::Whole
        };
        match self.job_info_frame(&fmt, nspace, t, form) {
            Some(b) => self.out.push_back(Output::Send(id, b)),
            None => self.reply(id, t, &Reply::Status(codes::PMIX_ERR_NOT_FOUND)),
        }
    }

    /// A connected peer's request: handed to the area that answers it. A
    /// refusal: the peer may not ask, or the request does not decode.
    fn route(&mut self, id: ConnId, t: u32, payload: &[u8], now: Instant) -> Result<(), Refusal> {
        let Some(c) = self.conns.get(&id) else {
            return Err(Refusal::BadRequest(t));
        };
        let (proc, tool) = match &c.state {
            ConnState::Client { proc } => (proc.clone(), None),
            ConnState::Tool { proc, version } => (proc.clone(), Some(version.clone())),
            ConnState::Handshake => return Err(Refusal::BadRequest(t)),
        };
        let Some(fmt) = c.format() else {
            return Err(Refusal::BadRequest(t));
        };
        if t == tag::HEARTBEAT && payload.is_empty() {
            self.jobctl.monitors.beat(id);
            return Ok(());
        }
        // garbage after the handshake drops this peer only, and the
        // refusal says where the codec found it wrong
        let malformed = |error| Refusal::Malformed { tag: t, error };
        let req = Request::decode(&fmt, payload).map_err(malformed)?;
        if let Some(version) = tool {
            // tools are not ranks of a job (tool_peers.rs)
            if self.tool_request(id, t, &proc, &version, &req) {
                return Ok(());
            }
        }
        let me = name(&proc);
        match req {
            Request::Req => {
                // the job data waits for the node map (Server::await_nodes)
                if !self.jobinfo.hold(&me.0, id, t) {
                    self.answer_req(id, t, &me.0);
                }
            }
            // a 7.0 client that switched gds module asks again; we serve
            // the hash form only, which it can always fall back to
            Request::GdsFallback { module } => {
                let hash = module.as_ref().and_then(|m| m.as_str()) == Some("hash");
                if !hash {
                    self.reply(id, t, &Reply::Status(codes::PMIX_ERR_NOT_SUPPORTED));
                } else if !self.jobinfo.hold(&me.0, id, t) {
                    self.answer_req(id, t, &me.0);
                }
            }
            Request::Commit { blobs } => {
                return self.commit(id, t, &fmt, proc, blobs).map_err(malformed)
            }
            Request::Fence { procs, info } => {
                let collect = info_true(&info, "pmix.collect");
                self.collective(CollKind::Fence(collect), id, t, &me, &procs, info)
            }
            Request::Connect { procs, info } => {
                self.collective(CollKind::Connect, id, t, &me, &procs, info)
            }
            Request::Disconnect { procs, info } => {
                self.collective(CollKind::Disconnect, id, t, &me, &procs, info)
            }
            Request::GroupConstruct { group, procs, info } => {
                let g = group.map(|g| g.to_string()).unwrap_or_default();
                let members = if procs.is_empty() {
                    self.expand(&[Proc::new(&me.0, RANK_WILDCARD)])
                } else {
                    self.expand(&procs)
                };
                self.group_construct_called(&me, &g, members, &procs, &info);
                self.collective(CollKind::GroupConstruct, id, t, &me, &procs, info)
            }
            Request::GroupLeave { group, .. } => {
                let g = group.map(|g| g.to_string()).unwrap_or_default();
                let st = self.group_leave(&proc, &g);
                self.reply(id, t, &Reply::Status(st));
            }
            Request::GroupDestruct { group, procs, info } => {
                // over the group's members (group.rs); a group we do not
                // know: NOT_FOUND when the host takes group operations
                // (as from libpmix 4.2.2), else the members a 5.0+ caller
                // names, else every rank of the caller's job
                let g = group.map(|g| g.to_string()).unwrap_or_default();
                let known = self.group_destruct_members(&g);
                if known.is_none() && self.grouping() == super::Grouping::Host {
                    self.reply(id, t, &Reply::Status(codes::PMIX_ERR_NOT_FOUND));
                    return Ok(());
                }
                let all = known
                    .or(procs.filter(|p| !p.is_empty()))
                    .unwrap_or_else(|| vec![Proc::new(&me.0, RANK_WILDCARD)]);
                self.collective(CollKind::GroupDestruct, id, t, &me, &all, info)
            }
            Request::Get {
                nspace,
                rank,
                info,
                key,
            } => {
                let ns = nspace.map(|s| s.to_string()).unwrap_or_default();
                let key = key.flatten().map(|k| k.to_string());
                self.get(id, t, &fmt, ns, rank, key, &info, now);
            }
            Request::Finalize => {
                if let Some(c) = self.conns.get_mut(&id) {
                    c.finalized = true;
                }
                // its pulls end with it (libpmix 4.2.2's finalize too)
                self.jobctl.iof.drop_conn(id);
                // before the reply, as for an abort
                self.out.push_back(Output::Host(HostEvent::Finalized(proc)));
                self.reply(id, t, &Reply::Status(codes::PMIX_SUCCESS));
            }
            Request::Abort {
                status: st,
                message,
                ..
            } => {
                // the host hears of the abort before the client can read
                // the reply and exit: a host that reaps the exit and then
                // drains its events always finds the abort first
                self.out.push_back(Output::Host(HostEvent::Aborted {
                    proc,
                    status: st,
                    message: message.map(|m| m.to_string()),
                }));
                self.reply(id, t, &Reply::Status(codes::PMIX_SUCCESS));
            }
            Request::Publish { uid, info } => {
                let a = Asked::new(PubSubOp::Publish, (id, t), &proc, vec![], info, now);
                self.pubsub_request(uid, a)
            }
            Request::Lookup { uid, keys, info } => {
                let a = Asked::new(PubSubOp::Lookup, (id, t), &proc, keys, info, now);
                self.pubsub_request(uid, a)
            }
            Request::Unpublish { uid, keys, info } => {
                let a = Asked::new(PubSubOp::Unpublish, (id, t), &proc, keys, info, now);
                self.pubsub_request(uid, a)
            }
            Request::RegEvents { codes, info } => self.register_request(id, t, codes, info),
            Request::DeregEvents { .. } => {}
            Request::Notify {
                status,
                range,
                info,
            } => self.client_notify(id, t, &proc, status, range, info),
            Request::Query { queries } => self.query_request(id, t, proc, queries),
            Request::Log { data, .. } => {
                self.reply(id, t, &Reply::Status(codes::PMIX_SUCCESS));
                self.out
                    .push_back(Output::Host(HostEvent::Log { proc, data }));
            }
            // the host's, or the native security module's (connection.rs)
            Request::GetCredential { info } => self.credential_asked(id, t, proc, info),
            Request::ValidateCred {
                credential,
                directives,
            } => self.validation_asked(id, t, proc, credential, directives),
            Request::JobControl {
                targets,
                directives,
            } => self.job_control(id, t, proc, targets, &directives),
            Request::Monitor {
                monitor,
                error,
                directives,
            } => {
                let ask = monitor::Ask {
                    what: &monitor,
                    error,
                    directives: &directives,
                };
                self.monitor(id, t, proc, ask, now)
            }
            Request::Alloc { directive, info } => self.allocate((id, t), proc, directive, info),
            Request::Spawn { info, apps } => {
                let request = self.requests.spawn((id, t));
                self.out.push_back(Output::Host(HostEvent::Spawn {
                    request,
                    requester: proc,
                    info,
                    apps,
                }));
            }
            // resolve.rs: what a 5.0+ client asks whenever it is connected
            Request::ResolvePeers { node, nspace } => {
                let (node, ns) = (pstring(node), pstring(nspace));
                let r = self.resolve_peers(&node, &ns);
                self.reply(id, t, &r);
            }
            Request::ResolveNode { nspace } => {
                let r = self.resolve_node(&pstring(nspace));
                self.reply(id, t, &r);
            }
            // iof.rs: tools and clients alike
            Request::IofPull {
                procs,
                directives,
                channels,
                local_id,
            } => self.iof_pull((id, t), proc, procs, directives, channels, local_id),
            Request::IofDereg {
                directives,
                remote_id,
            } => self.iof_dereg(id, t, proc, directives, remote_id),
            Request::IofPush {
                targets,
                directives,
                data,
            } => self.iof_push(id, t, proc, targets, directives, data),
            _ => self.reply(id, t, &Reply::Status(codes::PMIX_ERR_NOT_SUPPORTED)),
        }
        Ok(())
    }
}

/// A request's optional STRING as text ("" for none or NULL).
fn pstring(s: Option<PString>) -> String {
    s.map(|s| s.to_string()).unwrap_or_default()
}
