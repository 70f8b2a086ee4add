//! The connections area: per-connection state (framing, handshake,
//! negotiated format, event registrations) and the table of them with the
//! caps, peer checks and refusals kept ([`Conns`]); opening, the server's
//! handshake checks, refusals, a client's part of closing, replies.

#![forbid(unsafe_code)]

use super::{
    hosted, name, pstr, ConnId, HostEvent, Limits, Output, PeerInfo, Refusal, Server, Verify,
    MAX_REFUSALS_KEPT,
};
use crate::link::{self, Acceptor, Link};
use crate::sansio::Deadlines;
use bytes::Bytes;
use pmix_codec::frame::DEFAULT_MAX_MESSAGE;
use pmix_codec::handshake::{peer_type, ClientReply, ConnectRequest};
use pmix_codec::msg::Reply;
use pmix_codec::Format;
use pmix_types::status::codes;
use pmix_types::Rank;
use pmix_types::{Info, Proc};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::Instant;

/// Who the peer is to the endpoint (its wire state is in [`Conn::link`]).
pub(super) enum ConnState {
    Handshake,
    Client {
        proc: Proc,
    },
    /// A tool (or launcher) with the identity it was given or announced.
    Tool {
        proc: Proc,
        version: String,
    },
}

pub(super) struct Conn {
    /// Which peers' data its GET replies have brought (modex.rs, `bulk`).
    pub(super) bulk: BulkSent,
    /// Framing, handshake, negotiated format, event registrations (the
    /// state the client core keeps too: crate::link).
    pub(super) link: Link<Acceptor>,
    /// The credential of its handshake (native: euid and egid, host order).
    pub(super) credential: Bytes,
    pub(super) state: ConnState,
    pub(super) finalized: bool,
    /// When it first registered for events (its place in the delivery order).
    pub(super) registered: Option<u64>,
    /// What the driver knows of the peer's socket.
    pub(super) peer: PeerInfo,
    /// While the handshake is pending: when it must be complete.
    pub(super) deadline: Option<Instant>,
    /// Its handshake announced the ds21 store (a libpmix 4.x client that
    /// found ours): its REQ reply then leaves out what it reads in the
    /// store (jobinfo.rs, [`Server::job_info_frame`]).
    pub(super) ds21: bool,
}

/// What a connection's GET replies have brought, and how far it reads
/// (modex.rs, `bulk`).
#[derive(Default)]
pub(super) struct BulkSent {
    /// Its GETs for peers of its own namespace whose data it had not been
    /// sent before: how many distinct peers it asked for.
    pub(super) asked: u32,
    /// How many peers' data its replies brought in all (targets and bulk).
    pub(super) held: u32,
    /// The last such GET's target, and how many such GETs in a row asked
    /// for the rank after the one before (in rank order, skipping itself).
    pub(super) last: Option<u32>,
    pub(super) run: u32,
    /// Whether its replies bring bulk (from the GET that showed it reads
    /// many peers on).
    pub(super) on: bool,
    /// The peers whose data it has been sent.
    pub(super) ranks: RankSet,
}

/// A set of ranks as a bitmap (N/8 bytes for a job of N ranks, where a
/// tree of the same ranks would take ~10 bytes each).
#[derive(Default)]
pub(super) struct RankSet(Vec<u64>);

impl RankSet {
    /// Add `r`; whether it was new.
    pub(super) fn insert(&mut self, r: u32) -> bool {
        let (w, b) = ((r / 64) as usize, r % 64);
        if w >= self.0.len() {
            self.0.resize(w + 1, 0);
        }
        let was = self.0[w] >> b & 1 == 1;
        self.0[w] |= 1 << b;
        !was
    }

    pub(super) fn contains(&self, r: u32) -> bool {
        self.0
            .get((r / 64) as usize)
            .is_some_and(|w| w >> (r % 64) & 1 == 1)
    }
}

impl Conn {
    /// The format its handshake negotiated (None while it is pending, or
    /// once it no longer speaks for anyone).
    pub(super) fn format(&self) -> Option<Format> {
        match &self.state {
            ConnState::Client { .. } | ConnState::Tool { .. } => self.link.format(),
            ConnState::Handshake => None,
        }
    }
}

/// The connections area's state: every open connection, the handshakes
/// pending by deadline, the connections per socket owner, the peer
/// checks and limits that apply to new ones, and the refusals kept.
pub(super) struct Conns {
    map: BTreeMap<ConnId, Conn>,
    next: ConnId,
    /// Handshakes not yet complete, by deadline.
    pending: Deadlines<ConnId>,
    /// Open connections per socket owner.
    uids: HashMap<u32, usize>,
    verifier: Option<Box<dyn Verify>>,
    /// The latest refusals, oldest first (at most [`MAX_REFUSALS_KEPT`]).
    refusals: VecDeque<(ConnId, Refusal)>,
    limits: Limits,
    max_message: usize,
    /// Whether GET_CREDENTIAL and VALIDATE_CRED go to the host.
    host_credentials: bool,
    host_validates: bool,
}

impl Default for Conns {
    fn default() -> Self {
        Conns {
            map: BTreeMap::new(),
            next: 1,
            pending: Deadlines::default(),
            uids: HashMap::new(),
            verifier: None,
            refusals: VecDeque::new(),
            limits: Limits::default(),
            max_message: DEFAULT_MAX_MESSAGE,
            host_credentials: false,
            host_validates: false,
        }
    }
}

impl Conns {
    /// Open connection `id`.
    pub(super) fn get(&self, id: &ConnId) -> Option<&Conn> {
        self.map.get(id)
    }

    /// Open connection `id`, to change.
    pub(super) fn get_mut(&mut self, id: &ConnId) -> Option<&mut Conn> {
        self.map.get_mut(id)
    }

    /// The limits on peers in force.
    pub(super) fn limits(&self) -> &Limits {
        &self.limits
    }

    pub(super) fn set_limits(&mut self, limits: Limits) {
        self.limits = limits;
    }

    pub(super) fn set_verifier(&mut self, v: Box<dyn Verify>) {
        self.verifier = Some(v);
    }

    /// The cap on messages of connections opened from now on.
    pub(super) fn set_max_message(&mut self, max: usize) {
        self.max_message = max;
    }

    /// When the first pending handshake times out.
    pub(super) fn next_deadline(&self) -> Option<Instant> {
        self.pending.first()
    }

    /// The connections whose handshake is overdue at `now`, no longer
    /// pending (to be refused).
    pub(super) fn take_overdue(&mut self, now: Instant) -> Vec<ConnId> {
        std::iter::from_fn(|| self.pending.pop_due(now)).collect()
    }

    /// Whether the process behind connection `id` is `pid` or under it
    /// (None: the verifier cannot tell, or there is none).
    fn descends(&mut self, id: ConnId, pid: u32) -> Option<bool> {
        let inode = self.map.get(&id).and_then(|c| c.peer.inode)?;
        self.verifier.as_mut()?.descends(inode, pid)
    }

    /// Connection `id` is closed: its entry, no longer pending nor counted
    /// for its socket's owner.
    pub(super) fn remove(&mut self, id: ConnId) -> Option<Conn> {
        let c = self.map.remove(&id)?;
        if let Some(d) = c.deadline {
            self.pending.remove(d, id);
        }
        if let Some(uid) = c.peer.uid {
            if let Some(n) = self.uids.get_mut(&uid) {
                *n -= 1;
                if *n == 0 {
                    self.uids.remove(&uid);
                }
            }
        }
        Some(c)
    }
}

impl Server {
    /// The host launched this process as this rank: a client claiming the
    /// rank must be it or its descendant (when the verifier can tell).
    /// Claims that came in before are checked now: verified ones keep the
    /// rank, proven strays are dropped. The pid is also the rank's entry in
    /// the process tables (queries of `pmix.qry.ptable`). A host that gives
    /// pids reports their exits ([`Server::set_proc_exit`]): a rank whose
    /// connections all ended after finalizing is only gone (what waits for
    /// it fails) once its process has, since another of its processes may
    /// still connect.
    pub fn set_rank_pid(&mut self, nspace: &str, rank: impl Into<Rank>, pid: u32) {
        let rank = rank.into().wire();
        self.record_proc_pid(nspace, rank, pid);
        let Some(r) = self.rank_mut(nspace, rank) else {
            return;
        };
        r.pid = Some(pid);
        let claims = r.conns.clone();
        let who = format!("{nspace}:{rank}");
        for id in claims {
            let verdict = self.conns.descends(id, pid);
            let Some(r) = self.rank_mut(nspace, rank) else {
                return;
            };
            match verdict {
                Some(true) if !r.verified.contains(&id) => r.verified.push(id),
                Some(false) if r.conns.len() > 1 => {
                    // a stray beside others: it goes, the rank stays
                    r.conns.retain(|&x| x != id);
                    if let Some(c) = self.conns.get_mut(&id) {
                        c.state = ConnState::Handshake;
                    }
                    let why = Refusal::NotTheRank {
                        rank: who.clone(),
                        launched: pid,
                    };
                    self.refuse(id, why);
                }
                _ => {}
            }
        }
    }

    /// The next refusal not yet taken (each is also logged with `tracing`).
    pub fn poll_refusal(&mut self) -> Option<(ConnId, Refusal)> {
        self.conns.refusals.pop_front()
    }

    /// Open connections whose handshake is not complete.
    pub fn pending_handshakes(&self) -> usize {
        self.conns.pending.len()
    }

    /// Open connections.
    pub fn connections(&self) -> usize {
        self.conns.map.len()
    }

    /// A new connection; the driver passes the id with its bytes. No
    /// handshake deadline and no caps apply (see [`Server::open_peer`]).
    pub fn open(&mut self) -> ConnId {
        self.insert_conn(PeerInfo::default(), None)
    }

    /// A new connection from a peer the driver knows this much of, at
    /// `now`: refused (and logged) if the caps on pending handshakes or on
    /// the peer's uid are reached; else it must complete its handshake by
    /// `now +` [`Limits::handshake_timeout`].
    pub fn open_peer(&mut self, peer: PeerInfo, now: Instant) -> Result<ConnId, Refusal> {
        let conns = &self.conns;
        let refusal = if conns.pending.len() >= conns.limits.max_pending_handshakes {
            Some(Refusal::TooManyPending(conns.pending.len()))
        } else {
            peer.uid.and_then(|uid| {
                let count = conns.uids.get(&uid).copied().unwrap_or(0);
                (count >= conns.limits.max_conns_per_uid)
                    .then_some(Refusal::TooManyForUid { uid, count })
            })
        };
        if let Some(r) = refusal {
            self.log_refusal(0, &peer, r.clone());
            return Err(r);
        }
        let deadline = now + self.conns.limits.handshake_timeout;
        Ok(self.insert_conn(peer, Some(deadline)))
    }

    pub(super) fn insert_conn(&mut self, peer: PeerInfo, deadline: Option<Instant>) -> ConnId {
        let conns = &mut self.conns;
        let id = conns.next;
        conns.next += 1;
        if let Some(d) = deadline {
            conns.pending.insert(d, id);
        }
        if let Some(uid) = peer.uid {
            *conns.uids.entry(uid).or_default() += 1;
        }
        conns.map.insert(
            id,
            Conn {
                bulk: BulkSent::default(),
                link: Link::accept(conns.max_message),
                credential: Bytes::new(),
                state: ConnState::Handshake,
                finalized: false,
                registered: None,
                peer,
                deadline,
                ds21: false,
            },
        );
        id
    }

    pub(super) fn log_refusal(&mut self, id: ConnId, peer: &PeerInfo, r: Refusal) {
        tracing::warn!(
            target: "pmix_wire::server",
            conn = id,
            uid = ?peer.uid,
            "peer refused: {r}"
        );
        let kept = &mut self.conns.refusals;
        if kept.len() >= MAX_REFUSALS_KEPT {
            kept.pop_front();
        }
        kept.push_back((id, r));
    }

    /// Drop a peer for this reason: logged, kept for
    /// [`Server::poll_refusal`], and the connection closed.
    pub fn refuse(&mut self, id: ConnId, r: Refusal) {
        let peer = self.conns.get(&id).map(|c| c.peer).unwrap_or_default();
        self.log_refusal(id, &peer, r);
        self.drop_peer(id);
    }

    /// The handshake completed: no deadline any more.
    pub(super) fn handshake_done(&mut self, id: ConnId) {
        if let Some(d) = self.conns.get_mut(&id).and_then(|c| c.deadline.take()) {
            self.conns.pending.remove(d, id);
        }
    }

    /// A client's connection closed (`finalized_here`: it had finalized): the
    /// rank is gone when it was the rank's last, unless its launched
    /// process runs on.
    pub(super) fn client_closed(&mut self, id: ConnId, proc: Proc, finalized_here: bool) {
        let me = name(&proc);
        let mut last = true;
        let mut finalized = finalized_here;
        if let Some(r) = self
            .jobs
            .get_mut(&me.0)
            .and_then(|j| j.ranks.get_mut(me.1 as usize))
        {
            r.conns.retain(|&x| x != id);
            r.verified.retain(|&x| x != id);
            r.finalized |= finalized_here;
            // another process of the rank is still connected: it carries on
            last = r.conns.is_empty();
            finalized = r.finalized;
            if last {
                r.lost |= !r.finalized;
            }
            // the last to go finalized, but the launched process has not
            // been reported ended: it (or another of its processes) may
            // connect yet, as when a helper it forked connected first
            let running = r.pid.is_some() && !self.queries.has_exited(&me);
            if last && finalized && running {
                r.dormant = true;
                last = false;
            }
        }
        if last {
            self.rank_gone(&proc, finalized);
        }
    }

    /// The host reports that a rank's launched process ended: a rank whose
    /// connections had all ended after finalizing is now gone, and so is
    /// one that never connected.
    pub(super) fn rank_exited(&mut self, nspace: &str, rank: u32) {
        let Some(r) = self.rank_mut(nspace, rank) else {
            return;
        };
        if r.dormant && r.conns.is_empty() {
            r.dormant = false;
            self.rank_gone(&Proc::new(nspace, rank), true);
        } else if r.conns.is_empty() && !r.finalized && !r.lost {
            // it ended before it ever connected (or before its handshake
            // completed): nothing else would tell the collectives and
            // gets that wait for it
            r.lost = true;
            self.rank_gone(&Proc::new(nspace, rank), false);
        }
    }

    /// The last process of a rank is gone (its connections have closed,
    /// or the host reported it): what waits for the rank fails.
    pub(super) fn rank_gone(&mut self, proc: &Proc, finalized: bool) {
        let me = name(proc);
        let proc = proc.clone();
        if !finalized {
            self.group_member_lost(&proc);
            self.out.push_back(Output::Host(HostEvent::Lost(proc)));
        }
        // collectives waiting for this rank can no longer complete
        let failed = self.collectives.rank_gone(&me, !finalized);
        for (conn, t) in failed {
            self.reply(conn, t, &Reply::Status(codes::PMIX_ERR_LOST_CONNECTION));
        }
        // gets waiting for its data never get it
        for (conn, t) in self.modex.take_for(&me) {
            self.reply(conn, t, &Reply::Status(codes::PMIX_ERR_LOST_CONNECTION));
        }
    }

    pub(super) fn drop_peer(&mut self, id: ConnId) {
        if self.conns.map.contains_key(&id) {
            self.out.push_back(Output::Close(id));
        }
        self.closed(id);
    }

    pub(super) fn send(&mut self, id: ConnId, t: u32, payload: &[u8]) {
        let Some(c) = self.conns.get(&id) else { return };
        if let Ok(b) = c.link.frame(t, payload) {
            self.out.push_back(Output::Send(id, Bytes::from(b)));
        }
    }

    pub(super) fn fmt_of(&self, id: ConnId) -> Option<Format> {
        self.conns.get(&id).and_then(Conn::format)
    }

    pub(super) fn reply(&mut self, id: ConnId, t: u32, r: &Reply) {
        if id == hosted::HOST_CONN {
            self.host_reply(t, r);
            return;
        }
        let Some(fmt) = self.fmt_of(id) else { return };
        match r.encode(&fmt) {
            Ok(b) => self.send(id, t, &b),
            Err(_) => {
                if let Ok(b) = Reply::Status(codes::PMIX_ERR_BAD_PARAM).encode(&fmt) {
                    self.send(id, t, &b);
                }
            }
        }
    }

    pub(super) fn handshake(&mut self, id: ConnId, req: &ConnectRequest) -> Result<(), Refusal> {
        let refuse = |s: &mut Server, st: i32, why: Refusal| {
            s.out.push_back(Output::Send(
                id,
                ClientReply {
                    status: st,
                    index: 0,
                }
                .encode()
                .to_vec()
                .into(),
            ));
            Err(why)
        };
        if let Some(floor) = self.limits().min_peer_version {
            let version = req.version.as_str().unwrap_or("").to_string();
            if !pmix_codec::select::version_at_least(&version, floor) {
                let why = Refusal::VersionBelowFloor { version, floor };
                if req.flag == peer_type::SIMPLE_CLIENT {
                    return refuse(self, codes::PMIX_ERR_NOT_SUPPORTED, why);
                }
                self.refuse_tool(id, codes::PMIX_ERR_NOT_SUPPORTED);
                self.handshake_done(id);
                return Err(why);
            }
        }
        if req.flag != peer_type::SIMPLE_CLIENT {
            let ok = self.tool_handshake(id, req);
            self.handshake_done(id);
            return if ok {
                Ok(())
            } else {
                Err(Refusal::ToolRefused(req.flag))
            };
        }
        let (Some(proc), Some(fmt)) = (req.proc.clone(), req.format()) else {
            return refuse(
                self,
                codes::PMIX_ERR_BAD_PARAM,
                Refusal::IncompleteHandshake,
            );
        };
        let me = name(&proc);
        let who = format!("{}:{}", me.0, me.1);
        let Some((launched, held)) = self
            .jobs
            .get(&me.0)
            .and_then(|j| j.ranks.get(me.1 as usize))
            .map(|r| (r.pid, !r.verified.is_empty()))
        else {
            return refuse(self, codes::PMIX_ERR_NOT_FOUND, Refusal::UnknownRank(who));
        };
        let peer = self.conns.get(&id).map(|c| c.peer).unwrap_or_default();
        // the socket's owner must be the uid the native credential claims
        if let (Some(socket), Some(claimed)) = (peer.uid, link::native_uid(req)) {
            if socket != claimed {
                let why = Refusal::UidMismatch { socket, claimed };
                return refuse(self, codes::PMIX_ERR_NO_PERMISSIONS, why);
            }
        }
        // the process must be the one launched as this rank, or under it
        let verified = launched.and_then(|pid| self.conns.descends(id, pid));
        if verified == Some(false) {
            let why = Refusal::NotTheRank {
                rank: who,
                launched: launched.unwrap_or(0),
            };
            return refuse(self, codes::PMIX_ERR_NO_PERMISSIONS, why);
        }
        // beside the rank's verified processes only another of them is
        // served (libpmix serves every connection of a rank: a helper the
        // rank forked may connect first, and never locks the rank out)
        if held && verified != Some(true) {
            return refuse(self, codes::PMIX_ERR_BAD_PARAM, Refusal::RankTaken(who));
        }
        let Some(rank) = self
            .jobs
            .get_mut(&me.0)
            .and_then(|j| j.ranks.get_mut(me.1 as usize))
        else {
            return refuse(self, codes::PMIX_ERR_NOT_FOUND, Refusal::UnknownRank(who));
        };
        // a verified process displaces claimants that could not be
        // verified and joins the rank's other verified processes; an
        // unverifiable claim is served beside the others (libpmix does the
        // same), so a stray claim never locks the real rank out
        let displaced = if verified == Some(true) {
            rank.verified.push(id);
            let (keep, gone) = rank
                .conns
                .drain(..)
                .partition(|c| rank.verified.contains(c));
            rank.conns = keep;
            gone
        } else {
            Vec::new()
        };
        rank.conns.push(id);
        // a process of the rank is back: it is no longer done with
        if rank.dormant {
            rank.dormant = false;
            rank.finalized = false;
        }
        for old in displaced {
            if let Some(c) = self.conns.get_mut(&old) {
                // it no longer speaks for the rank: closing it loses nothing
                c.state = ConnState::Handshake;
            }
            self.refuse(old, Refusal::Displaced(who.clone()));
        }
        self.handshake_done(id);
        if let Some(c) = self.conns.get_mut(&id) {
            c.credential = req.credential.clone();
            c.ds21 = req.gds.as_ref().and_then(|g| g.as_str()) == Some("ds21");
        }
        // the namespace's first client sets its entry (and the version the
        // job info reports as pmix.bfrops.mod)
        if self.registry.peer(&proc.nspace).is_none() {
            self.registry
                .register(proc.nspace.clone(), fmt, Some(req.version.to_string()));
        }
        if let Some(c) = self.conns.get_mut(&id) {
            c.state = ConnState::Client { proc: proc.clone() };
            c.link.establish(fmt);
        }
        self.out.push_back(Output::Send(
            id,
            ClientReply {
                status: codes::PMIX_SUCCESS,
                index: id as u32,
            }
            .encode()
            .to_vec()
            .into(),
        ));
        tracing::debug!(target: "pmix_wire::server", conn = id, ?verified, "{who} connected");
        self.out
            .push_back(Output::Host(HostEvent::Connected(proc, fmt)));
        Ok(())
    }

    /// Whether GET_CREDENTIAL goes to the host from now on
    /// ([`HostEvent::GetCredential`], answered by
    /// [`Server::credential_done`]), as libpmix 4.2.2's server hands its
    /// host's `get_credential` every one; else (the default) the native
    /// module answers.
    pub fn set_host_credentials(&mut self, yes: bool) {
        self.conns.host_credentials = yes;
    }

    /// Whether VALIDATE_CRED goes to the host from now on
    /// ([`HostEvent::ValidateCredential`], answered by
    /// [`Server::validate_done`]), as libpmix 4.2.2's server hands its
    /// host's `validate_credential` every one; else (the default) the
    /// native module answers.
    pub fn set_host_validates(&mut self, yes: bool) {
        self.conns.host_validates = yes;
    }

    /// GET_CREDENTIAL of `proc`'s: the host's when it takes them, else
    /// the native module's.
    pub(super) fn credential_asked(
        &mut self,
        id: ConnId,
        t: u32,
        proc: Proc,
        directives: Vec<Info>,
    ) {
        if !self.conns.host_credentials {
            return self.get_credential(id, t);
        }
        let request = self
            .requests
            .op(super::requests::HostOp::Credential, (id, t));
        self.out.push_back(Output::Host(HostEvent::GetCredential {
            request,
            requester: proc,
            directives,
        }));
    }

    /// VALIDATE_CRED of `proc`'s: the host's when it takes them, else the
    /// native module's.
    pub(super) fn validation_asked(
        &mut self,
        id: ConnId,
        t: u32,
        proc: Proc,
        credential: Bytes,
        directives: Vec<Info>,
    ) {
        if !self.conns.host_validates {
            return self.validate_credential(id, t, &credential);
        }
        let request = self.requests.op(super::requests::HostOp::Validate, (id, t));
        self.out
            .push_back(Output::Host(HostEvent::ValidateCredential {
                request,
                requester: proc,
                credential,
                directives,
            }));
    }

    /// The host's answer to [`HostEvent::GetCredential`] (the standard's
    /// `pmix_credential_cbfunc_t`): on success the credential (none: an
    /// empty one) and its infos, else the status alone, as libpmix 4.2.2's
    /// server sends them. False (and nothing sent) for an id that is no
    /// credential request out with the host, or whose client has gone.
    pub fn credential_done(
        &mut self,
        request: u64,
        status: i32,
        credential: Option<Bytes>,
        info: Vec<Info>,
    ) -> bool {
        let Some((id, t)) = self
            .requests
            .take_op(super::requests::HostOp::Credential, request)
        else {
            return false;
        };
        let r = if status == codes::PMIX_SUCCESS {
            Reply::Credential {
                status,
                credential: Some(credential.unwrap_or_default()),
                info: Some(info),
            }
        } else {
            Reply::Status(status)
        };
        self.reply(id, t, &r);
        true
    }

    /// The host's answer to [`HostEvent::ValidateCredential`] (the
    /// standard's `pmix_validation_cbfunc_t`): its status and infos, the
    /// infos' count sent whatever the status, as libpmix 4.2.2's server
    /// sends them. False (and nothing sent) for an id that is no
    /// validation out with the host, or whose client has gone.
    pub fn validate_done(&mut self, request: u64, status: i32, info: Vec<Info>) -> bool {
        let Some((id, t)) = self
            .requests
            .take_op(super::requests::HostOp::Validate, request)
        else {
            return false;
        };
        self.reply(
            id,
            t,
            &Reply::Infos {
                status,
                info: Some(info),
            },
        );
        true
    }

    /// GET_CREDENTIAL, the native security module: a credential is the
    /// euid and egid the peer's handshake carried.
    pub(super) fn get_credential(&mut self, id: ConnId, t: u32) {
        let cred = self
            .conns
            .get(&id)
            .map(|c| c.credential.clone())
            .unwrap_or_default();
        let r = if cred.len() == 8 {
            Reply::Credential {
                status: codes::PMIX_SUCCESS,
                credential: Some(cred),
                info: Some(vec![Info::new("pmix.sec.ctype", pstr("native"))]),
            }
        } else {
            Reply::Status(codes::PMIX_ERR_NOT_SUPPORTED)
        };
        self.reply(id, t, &r);
    }

    /// VALIDATE_CRED: valid when it matches the asking connection's own.
    pub(super) fn validate_credential(&mut self, id: ConnId, t: u32, credential: &Bytes) {
        let mine = self
            .conns
            .get(&id)
            .map(|c| c.credential.clone())
            .unwrap_or_default();
        let r = if credential.len() == 8 && *credential == mine {
            Reply::Infos {
                status: codes::PMIX_SUCCESS,
                info: Some(vec![]),
            }
        } else {
            Reply::Status(codes::PMIX_ERR_INVALID_CRED)
        };
        self.reply(id, t, &r);
    }
}
