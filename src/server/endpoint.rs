//! The endpoint: state shared by every connection (jobs and their ranks,
//! the host's settings, waits with deadlines) and the verbs a driver calls
//! on it (`poll_event`, `poll_transmit`, `poll_timeout`, `handle_timeout`).

use super::*;
use pmix_types::Rank;

#[derive(Default)]
pub(super) struct RankState {
    /// Connections serving this rank: every process verified to be the
    /// rank's own (the launched process, a helper it forked), or, while
    /// none is, every claim that could not be verified either way; as
    /// libpmix does, all are served and the rank is gone only when the
    /// last one goes.
    pub(super) conns: Vec<ConnId>,
    /// Those whose process was verified to be the rank's.
    pub(super) verified: Vec<ConnId>,
    /// Its connections have all ended after finalizing while its launched
    /// process runs on: another of its processes may still connect, so
    /// collectives wait for it until the host reports the exit.
    pub(super) dormant: bool,
    /// The process the host launched for this rank, if it said.
    pub(super) pid: Option<u32>,
    /// One of its connections finalized.
    pub(super) finalized: bool,
    /// Its connection ended before it finalized: it can never call in.
    pub(super) lost: bool,
    pub(super) committed: bool,
    /// What the rank committed for local peers (LOCAL and GLOBAL scope).
    pub(super) local: Committed,
    /// What it committed for remote peers (REMOTE and GLOBAL scope); for a
    /// rank on another node, the data its server sent through the host.
    pub(super) remote: Committed,
    /// The rank runs on another node (its data comes through the host).
    pub(super) elsewhere: bool,
}

/// A rank's KVALs for one audience (local or remote peers), and, while
/// they are exactly what one commit brought, the same KVALs as they came on
/// the wire: every GET reply and fence contribution that carries them in
/// that format reuses those bytes instead of packing the KVALs again (the
/// packing was a sixth of the server's own instructions per client in
/// benches/server_load).
#[derive(Default)]
pub(super) struct Committed {
    kvals: Vec<Kval>,
    wire: Option<(Format, Bytes)>,
}

impl Committed {
    /// The KVALs, in the order they came.
    pub(super) fn kvals(&self) -> &[Kval] {
        &self.kvals
    }

    /// Replace them all (data from another node).
    pub(super) fn set(&mut self, kvals: Vec<Kval>) {
        self.kvals = kvals;
        self.wire = None;
    }

    /// Add these, a KVAL replacing an earlier one of the same key; `wire`
    /// is `items` as packed in its format, kept only when the KVALs are
    /// then exactly `items`.
    pub(super) fn commit(&mut self, items: Vec<Kval>, wire: Option<(Format, Bytes)>) {
        let mut exact = self.kvals.is_empty();
        for k in items {
            if let Some(old) = self.kvals.iter_mut().find(|o| o.key == k.key) {
                *old = k;
                exact = false;
            } else {
                self.kvals.push(k);
            }
        }
        self.wire = if exact { wire } else { None };
    }

    /// The KVALs packed in `fmt`, one after the other.
    pub(super) fn packed(&self, fmt: &Format) -> Option<Bytes> {
        if let Some((f, b)) = &self.wire {
            if f == fmt {
                return Some(b.clone());
            }
        }
        packed_kvals(fmt, &self.kvals)
    }
}

/// `kvals` packed in `fmt`, one after the other.
pub(super) fn packed_kvals(fmt: &Format, kvals: &[Kval]) -> Option<Bytes> {
    let mut b = DataBuffer::new(*fmt);
    for k in kvals {
        b.pack(DataType::Kval, &[Value::Kval(Box::new(k.clone()))])
            .ok()?;
    }
    Some(Bytes::copy_from_slice(b.as_bytes()))
}

pub(super) struct Job {
    pub(super) spec: JobSpec,
    pub(super) ranks: Vec<RankState>,
    /// The job's nodes when it spans several ([`Server::set_nodes`]).
    pub(super) nodes: Option<NodeMap>,
    /// Its parent and applications, if the host said (spawn.rs).
    pub(super) origin: spawn::Origin,
    /// The shared store holds it (shared_store.rs); once its job data is
    /// written, in this format.
    pub(super) shared: Option<Option<Format>>,
}

/// Where a job's ranks run when it spans nodes: each node's name and its
/// ranks (ascending), and which node this server is.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeMap {
    /// Each node's name and its ranks, ascending.
    pub nodes: Vec<(String, Vec<u32>)>,
    /// The index in `nodes` of this server's node.
    pub me: usize,
}

/// What the core has for its driver: bytes and closes per connection,
/// upcalls for the host; [`Output`]s are sorted into them as they are made.
#[derive(Default)]
pub(super) struct Outbox {
    pub(super) transmits: VecDeque<Transmit>,
    pub(super) events: VecDeque<HostEvent>,
}

impl Outbox {
    pub(super) fn push_back(&mut self, o: Output) {
        match o {
            Output::Send(id, b) => self.transmits.push_back(Transmit::Send(id, b)),
            Output::Close(id) => self.transmits.push_back(Transmit::Close(id)),
            Output::Host(e) => self.events.push_back(e),
        }
    }
}

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
    /// Checkpoint methods, preemptible processes, cleanups (jobctl.rs).
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
        let local: Vec<u32> = local.iter().map(|r| (*r).into().wire()).collect();
        if let Some(j) = self.jobs.get_mut(nspace) {
            for (r, st) in j.ranks.iter_mut().enumerate() {
                st.elsewhere = !local.contains(&(r as u32));
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pmix_codec::{BufferType, Dialect};

    fn kv(k: &str, v: Value) -> Kval {
        Kval {
            key: Some(k.into()),
            value: v,
        }
    }

    fn pack(fmt: Format, kvals: &[Kval]) -> Bytes {
        let mut b = DataBuffer::new(fmt);
        for k in kvals {
            b.pack(DataType::Kval, &[Value::Kval(Box::new(k.clone()))])
                .unwrap();
        }
        Bytes::copy_from_slice(b.as_bytes())
    }

    #[test]
    fn committed_wire_bytes_are_reused_only_while_they_are_the_kvals() {
        let first = vec![kv("a", Value::Uint32(1)), kv("b", Value::Bool(true))];
        let fully = Format::new(Dialect::V41, BufferType::FullyDesc);
        for fmt in [Format::V41, fully] {
            let wire = pack(fmt, &first);
            let mut c = Committed::default();
            c.commit(first.clone(), Some((fmt, wire.clone())));
            // the same bytes, not a copy packed again
            let got = c.packed(&fmt).unwrap();
            assert_eq!(got, wire);
            assert_eq!(got.as_ptr(), wire.as_ptr());
            // another format: packed afresh
            let v20 = Format::new(Dialect::V20, BufferType::NonDesc);
            assert_eq!(c.packed(&v20).unwrap(), pack(v20, &first));
            // a second commit replacing a key: the wire bytes are stale
            let again = vec![kv("b", Value::Bool(false)), kv("c", Value::Uint8(3))];
            c.commit(again.clone(), Some((fmt, pack(fmt, &again))));
            let now = [first[0].clone(), again[0].clone(), again[1].clone()];
            assert_eq!(c.kvals(), &now);
            assert_eq!(c.packed(&fmt).unwrap(), pack(fmt, &now));
            // a commit into an empty store that repeats a key: not exact
            let mut d = Committed::default();
            let dup = vec![kv("x", Value::Uint32(1)), kv("x", Value::Uint32(2))];
            d.commit(dup.clone(), Some((fmt, pack(fmt, &dup))));
            assert_eq!(d.packed(&fmt).unwrap(), pack(fmt, &[dup[1].clone()]));
            // data from another node replaces everything
            d.set(first.clone());
            assert_eq!(d.packed(&fmt).unwrap(), pack(fmt, &first));
        }
    }
}
