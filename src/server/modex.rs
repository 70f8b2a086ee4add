//! The modex store: commits, GET (local, waiting, direct modex through
//! the host), the data nodes exchange.

#![forbid(unsafe_code)]

use super::{
    info_true, info_u32, jobs, kval, name, pstr, Committed, Conn, ConnId, ConnState, HostEvent,
    Output, Server, DEFAULT_GET_WAIT, RANK_WILDCARD, REMOTE_GET_WAIT,
};
use bytes::Bytes;
use pmix_codec::msg::Reply;
use pmix_codec::{DataBuffer, Format};
use pmix_types::status::codes;
use pmix_types::Rank;
use pmix_types::{DataType, Hex, Info, Kval, PString, Proc, Value};
use std::time::{Duration, Instant};

/// How many GETs for distinct peers of its namespace a connection makes
/// before its replies bring other peers' data than their target's
/// (`Server::bulk`): a rank reading a few peers (a stencil's
/// neighbours, the light rank's P = 8) is sent what it asks for and
/// nothing more; a rank reading many is sent them in bulk from its
/// `BULK_AFTER + 1`-th on.
pub const BULK_AFTER: u32 = 16;

/// How many GETs in a row for consecutive peers (each the rank after the
/// one before, skipping the asker) show a rank reading its peers in rank
/// order, as Open MPI 4 over libpmix's hash gds does (it asks once per
/// peer, from rank 0 on): from the one that makes this many, its replies
/// bring bulk (`Server::bulk`). A stencil's rows of three neighbours do
/// not.
pub const SWEEP_AFTER: u32 = 4;

/// On one node, how many peers' data a GET reply brings at most besides
/// its target's (`Server::bulk`).
pub const BULK_PEERS: usize = 64;

/// Across nodes, how many peers' data a GET reply brings at most besides
/// its target's: a rank reading every peer of a job of N ranks needs about
/// N / 1024 round trips once its replies are that large, and no reply
/// holds more than 1024 peers' data (~250 KB with a few keys each; a
/// reply bringing every peer of 64 000 ranks would be ~16 MB, past
/// [`super::Limits::max_queued_bytes`]).
pub const BULK_ACROSS_PEERS: usize = 1024;

/// What GETs for ranks' data asked and were sent, counted since the
/// server started ([`Server::get_counts`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GetCounts {
    /// GET requests for one rank's data (not the job's: `RANK_WILDCARD`).
    pub requests: u64,
    /// The ranks' byte objects their replies carried (the targets' and
    /// the bulk's).
    pub blobs: u64,
}

/// A GET waiting for data: its target's commit, a key, or the host's
/// direct modex.
struct PendingGet {
    conn: ConnId,
    tag: u32,
    target: (String, u32),
    /// The key asked for, if any: the answer waits until the target has it.
    key: Option<String>,
    deadline: Instant,
}

/// The modex area's state: the GETs waiting for data (the committed data
/// itself is the ranks', in [`super::jobs::RankState`]).
#[derive(Default)]
pub(super) struct Modex {
    gets: Vec<PendingGet>,
    counts: GetCounts,
}

impl Modex {
    /// When the first waiting GET times out.
    pub(super) fn next_deadline(&self) -> Option<Instant> {
        self.gets.iter().map(|g| g.deadline).min()
    }

    /// The GETs whose time has come, taken: (connection, tag) to answer.
    pub(super) fn take_due(&mut self, now: Instant) -> Vec<(ConnId, u32)> {
        let (due, keep): (Vec<_>, Vec<_>) = self.gets.drain(..).partition(|g| g.deadline <= now);
        self.gets = keep;
        due.into_iter().map(|g| (g.conn, g.tag)).collect()
    }

    /// The GETs waiting for `target`, taken: (connection, tag) to answer.
    pub(super) fn take_for(&mut self, target: &(String, u32)) -> Vec<(ConnId, u32)> {
        let (now, keep): (Vec<_>, Vec<_>) = self.gets.drain(..).partition(|g| g.target == *target);
        self.gets = keep;
        now.into_iter().map(|g| (g.conn, g.tag)).collect()
    }

    /// The ranks GETs wait for.
    pub(super) fn targets(&self) -> std::collections::BTreeSet<(String, u32)> {
        self.gets.iter().map(|g| g.target.clone()).collect()
    }

    /// Connection `id` closed: its GETs are no longer waited for.
    pub(super) fn drop_conn(&mut self, id: ConnId) {
        self.gets.retain(|g| g.conn != id);
    }
}

pub(super) enum KeyState {
    Here,
    OtherScope,
    /// The rank deleted it (7.0's delete scopes) and has not put it again:
    /// NOT_FOUND at once, as 7.0's server answers the other ranks.
    Deleted,
    Absent,
}

impl Server {
    /// What GETs for ranks' data asked and were sent so far.
    pub fn get_counts(&self) -> GetCounts {
        self.modex.counts
    }

    /// This node's data of a local rank for other nodes (its REMOTE and
    /// GLOBAL keys), once it has committed: the blob a host hands to
    /// [`Server::dmodex_done`] on the requesting node. Our format, one
    /// BYTE_OBJECT unit (v41) holding PROC then KVALs; servers exchange it
    /// only through their hosts.
    pub fn modex_data(&self, nspace: &str, rank: impl Into<Rank>) -> Option<Bytes> {
        let rank = rank.into().wire();
        let r = self.jobs.get(nspace)?.ranks.get(rank as usize)?;
        if r.elsewhere || !r.committed {
            return None;
        }
        Self::contribution(&[(Proc::new(nspace, rank), &r.remote)])
    }

    /// This node's data of the participants that `arrived` at a
    /// collective (its ranks' REMOTE and GLOBAL keys, a rank without
    /// data as none), one contribution for the host to carry: a fence's
    /// data, a group's `pmix.grp.endpt`.
    pub(super) fn arrived_contribution(
        &self,
        arrived: &[(super::ConnId, u32, (String, u32))],
    ) -> Option<Bytes> {
        let none = Committed::default();
        let parts: Vec<(Proc, &Committed)> = arrived
            .iter()
            .map(|(_, _, (ns, r))| {
                let kv = self
                    .jobs
                    .get(ns)
                    .and_then(|j| j.ranks.get(*r as usize))
                    .map_or(&none, |st| &st.remote);
                (Proc::new(ns, *r), kv)
            })
            .collect();
        Self::contribution(&parts)
    }

    pub(super) fn contribution(parts: &[(Proc, &Committed)]) -> Option<Bytes> {
        let mut b = DataBuffer::new(Format::V41);
        for (p, kv) in parts {
            let inner = Self::blob(&Format::V41, p, kv)?;
            b.pack(
                DataType::ByteObject,
                &[Value::ByteObject(Box::new(Hex(inner)))],
            )
            .ok()?;
        }
        Some(Bytes::copy_from_slice(b.as_bytes()))
    }

    /// Store the data of remote ranks carried by `blob` (contributions as
    /// [`Server::modex_data`] makes them, concatenated); false if it does
    /// not parse.
    pub(super) fn absorb(&mut self, blob: &[u8]) -> bool {
        let mut outer = DataBuffer::from_bytes(Format::V41, Bytes::copy_from_slice(blob));
        let mut done = Vec::new();
        while !outer.unread().is_empty() {
            let Ok(Value::ByteObject(inner)) = outer.unpack_one(DataType::ByteObject) else {
                return false;
            };
            let mut b = DataBuffer::from_bytes(Format::V41, inner.0);
            let Ok(Value::Proc(p)) = b.unpack_one(DataType::Proc) else {
                return false;
            };
            let mut kv = Vec::new();
            while !b.unread().is_empty() {
                match b.unpack_one(DataType::Kval) {
                    Ok(Value::Kval(k)) => kv.push(*k),
                    _ => return false,
                }
            }
            let me = name(&p);
            if let Some(r) = self
                .jobs
                .get_mut(&me.0)
                .and_then(|j| j.ranks.get_mut(me.1 as usize))
            {
                if r.elsewhere {
                    r.remote.set(kv);
                    r.committed = true;
                    done.push(me);
                }
            }
        }
        self.shared_remote(&done);
        // one pass over the waiting GETs for all of them (a node's data
        // can answer hundreds of GETs held while it was fetched)
        let done: std::collections::BTreeSet<(String, u32)> = done.into_iter().collect();
        self.resolve_gets_where(|t| done.contains(t));
        true
    }

    /// The host's answer to [`HostEvent::DirectModex`]: the target's data
    /// (as [`Server::modex_data`] made it on its node) or an error status.
    pub fn dmodex_done(&mut self, request: u64, result: Result<Bytes, i32>) {
        let Some(target) = self.requests.take_dmodex(request) else {
            return;
        };
        let err = match result {
            Ok(blob) if self.absorb(&blob) => {
                // the target's data as its node holds it now: every GET
                // still waiting for it is answered with that data, its key
                // there or not (libpmix 4.2.2's server answers the
                // requests of a direct-modex reply with the rank's data
                // without looking for the key, pmix_pending_resolve, and
                // its client then finds no key: PMIX_ERR_NOT_FOUND at
                // once, not a wait for a key the rank did not commit)
                self.settle_gets(&target);
                return;
            }
            Ok(_) => codes::PMIX_ERR_BAD_PARAM,
            Err(st) => st,
        };
        for (conn, t) in self.modex.take_for(&target) {
            self.reply(conn, t, &Reply::Status(err));
        }
    }

    /// A fence of `nspace` collected data, and the host keeps the other
    /// nodes' contributions where they are, fetching a node's only when one
    /// of its ranks is asked for ([`HostEvent::DirectModex`], answered with
    /// [`Server::dmodex_node`]): every rank elsewhere is now held at the
    /// host until its data comes. A GET for such a rank asks the host even
    /// with PMIX_IMMEDIATE: its data exists (the fence collected it), and a
    /// host that handed it over with [`Server::fence_done`] would have had it
    /// found at once.
    pub fn data_at_host(&mut self, nspace: &str) {
        if let Some(j) = self.jobs.get_mut(nspace) {
            for r in j.ranks.iter_mut().filter(|r| r.elsewhere) {
                r.at_host = true;
            }
        }
    }

    /// The host's answer to the direct modexes `requests` with the data of
    /// a whole node (its contributions to fences, as [`HostEvent::Fence`]
    /// gave them there, concatenated): stored, and every GET it satisfies
    /// answered; the requests whose GETs still wait (for a key the rank did
    /// not hold at those fences) are handed back, for the host to ask the
    /// rank's node for what it holds now ([`Server::dmodex_done`]); the
    /// others are answered. Data that does not parse fails every request
    /// (PMIX_ERR_BAD_PARAM).
    pub fn dmodex_node(&mut self, blob: &[u8], requests: &[u64]) -> Vec<u64> {
        if !self.absorb(blob) {
            for r in requests {
                self.dmodex_done(*r, Err(codes::PMIX_ERR_BAD_PARAM));
            }
            return Vec::new();
        }
        let waited: std::collections::BTreeSet<(String, u32)> = self.modex.targets();
        let mut open = Vec::new();
        for &r in requests {
            let Some(target) = self.requests.dmodex_target(r) else {
                continue;
            };
            if waited.contains(target) {
                open.push(r);
            } else {
                self.requests.take_dmodex(r);
            }
        }
        open
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn get(
        &mut self,
        id: ConnId,
        t: u32,
        fmt: &Format,
        ns: String,
        rank: u32,
        key: Option<String>,
        info: &[Info],
        now: Instant,
    ) {
        let Some(job) = self.jobs.get(&ns) else {
            self.reply(id, t, &Reply::Status(codes::PMIX_ERR_NOT_FOUND));
            return;
        };
        if rank == RANK_WILDCARD {
            let blobs = match key.as_deref() {
                // no key: the whole job data (jobinfo.rs)
                None => self.job_data_blobs(fmt, &ns),
                // job-, session-, node- or app-level data, where libpmix's
                // server looks for it (jobinfo.rs); not held: SUCCESS with
                // no blob, as libpmix's get_job_data answers
                Some(k) => self
                    .job_level(fmt, &ns, k, info)
                    .and_then(|kv| Self::blob_of(fmt, &Proc::new(&ns, RANK_WILDCARD), &[kv]))
                    .into_iter()
                    .collect(),
            };
            self.reply(
                id,
                t,
                &Reply::Get {
                    status: codes::PMIX_SUCCESS,
                    blobs,
                },
            );
            return;
        }
        self.modex.counts.requests += 1;
        if job.ranks.get(rank as usize).is_none() {
            self.reply(id, t, &Reply::Status(codes::PMIX_ERR_NOT_FOUND));
            return;
        }
        let state = self.has_key(&(ns.clone(), rank), key.as_deref());
        // what a member contributed to a group it belongs to (group.rs);
        // else a key the job info gives the rank itself (`pmix.appnum`,
        // …), which it never commits: answered from there, as prterun does
        let group = key
            .as_deref()
            .and_then(|k| Some((k, self.group_value(&(ns.clone(), rank), k, info)?)));
        let known = match group {
            Some((k, v)) => {
                // asked with qualifiers (the context id): the value in the
                // form libpmix's client stores qualified and then finds,
                // `pmix.qual.val` = [the value, the qualifiers], as libpmix's
                // server builds it from a group's data
                let quals: Vec<Info> = info.iter().filter(|i| i.is_qualifier()).cloned().collect();
                Some(if quals.is_empty() {
                    kval(k, v)
                } else {
                    let items = std::iter::once(Info::new(k, v))
                        .chain(quals)
                        .map(|i| Value::Info(Box::new(i)))
                        .collect();
                    let a = pmix_types::DataArray::new(pmix_types::DataType::Info, items)
                        .expect("INFO elements");
                    kval("pmix.qual.val", Value::DataArray(Box::new(a)))
                })
            }
            None => key.as_deref().and_then(|k| {
                (!matches!(state, KeyState::Here))
                    .then(|| self.rank_value(&ns, rank, k))
                    .flatten()
            }),
        };
        if let Some(kv) = known {
            let r = match Self::blob_of(fmt, &Proc::new(&ns, rank), &[kv]) {
                Some(b) => Reply::Get {
                    status: codes::PMIX_SUCCESS,
                    blobs: vec![b],
                },
                None => Reply::Status(codes::PMIX_ERR_BAD_PARAM),
            };
            self.reply(id, t, &r);
            return;
        }
        if let KeyState::Here = state {
            self.answer_get(id, t, &(ns, rank));
        } else if matches!(state, KeyState::OtherScope | KeyState::Deleted)
            || (info_true(info, "pmix.immediate")
                && !job
                    .ranks
                    .get(rank as usize)
                    .is_some_and(|r| r.at_host && !r.committed))
        {
            self.reply(id, t, &Reply::Status(codes::PMIX_ERR_NOT_FOUND));
        } else {
            let Some(target) = self.jobs.get(&ns).and_then(|j| j.ranks.get(rank as usize)) else {
                return;
            };
            let wait = info_u32(info, "pmix.timeout").filter(|s| *s > 0).map_or(
                if target.elsewhere {
                    REMOTE_GET_WAIT
                } else {
                    DEFAULT_GET_WAIT
                },
                |s| Duration::from_secs(s.into()),
            );
            let want = (ns.clone(), rank);
            if target.elsewhere && !self.requests.dmodex_asked(&want) {
                let request = self.requests.dmodex(want);
                self.out.push_back(Output::Host(HostEvent::DirectModex {
                    request,
                    proc: Proc::new(&ns, rank),
                }));
            }
            self.modex.gets.push(PendingGet {
                conn: id,
                tag: t,
                target: (ns, rank),
                key,
                deadline: now + wait,
            });
        }
    }

    /// A CONNECT reply's unit: STRING nspace, then the job's KVALs as the
    /// REQ reply carries them (protocol.md §5.1 row 10).
    pub(super) fn connect_blob(&self, fmt: &Format, ns: &str) -> Option<Bytes> {
        let Some(Reply::JobInfo { kvals, .. }) = self.job_info(fmt, ns) else {
            return None;
        };
        let mut b = DataBuffer::new(*fmt);
        b.pack(DataType::String, &[pstr(ns)]).ok()?;
        for k in kvals {
            b.pack(DataType::Kval, &[Value::Kval(Box::new(k))]).ok()?;
        }
        Some(Bytes::copy_from_slice(b.as_bytes()))
    }

    /// A byte object holding PROC then KVALs (the GET reply's unit).
    pub(super) fn blob_of(fmt: &Format, p: &Proc, kvals: &[Kval]) -> Option<Bytes> {
        Self::proc_then(fmt, p, &jobs::packed_kvals(fmt, kvals)?)
    }

    /// [`Server::blob_of`] a rank's committed KVALs, reusing their wire
    /// bytes where they are in `fmt`.
    pub(super) fn blob(fmt: &Format, p: &Proc, data: &Committed) -> Option<Bytes> {
        Self::proc_then(fmt, p, &data.packed(fmt)?)
    }

    /// PROC `p` packed in `fmt`, then the packed KVALs `kvals`.
    fn proc_then(fmt: &Format, p: &Proc, kvals: &[u8]) -> Option<Bytes> {
        let mut b = DataBuffer::new(*fmt);
        b.pack(DataType::Proc, &[Value::Proc(Box::new(p.clone()))])
            .ok()?;
        let mut out = Vec::with_capacity(b.as_bytes().len() + kvals.len());
        out.extend_from_slice(b.as_bytes());
        out.extend_from_slice(kvals);
        Some(Bytes::from(out))
    }

    /// Every KVAL the target committed for local peers, in one byte object
    /// (libpmix sends them all, not just the requested key: protocol.md §7.3).
    pub(super) fn answer_get(&mut self, id: ConnId, t: u32, target: &(String, u32)) {
        let Some(fmt) = self.fmt_of(id) else { return };
        let p = Proc::new(&target.0, target.1);
        let blob = match self
            .jobs
            .get(&target.0)
            .and_then(|j| j.ranks.get(target.1 as usize))
        {
            Some(r) if r.elsewhere => Self::blob(&fmt, &p, &r.remote),
            Some(r) => Self::blob(&fmt, &p, &r.local),
            None => Self::blob_of(&fmt, &p, &[]),
        };
        let r = match blob {
            Some(b) => {
                let blobs: Vec<Bytes> = std::iter::once(b).chain(self.bulk(id, target)).collect();
                self.modex.counts.blobs += blobs.len() as u64;
                Reply::Get {
                    status: codes::PMIX_SUCCESS,
                    blobs,
                }
            }
            None => Reply::Status(codes::PMIX_ERR_BAD_PARAM),
        };
        self.reply(id, t, &r);
    }

    /// Peers' data a GET reply brings besides its target's, so that a
    /// rank reading every peer needs a few round trips, not one per peer,
    /// while a rank reading a few is sent those alone (the bulk is O(N)
    /// work per rank in the server and the rank: N² in a job).
    /// libpmix's hash gds stores every byte object of a GET reply under
    /// its proc and answers later GETs for those ranks from that cache
    /// (protocol.md §7.3); libpmix's own server gets the same effect from
    /// its shared-memory store (with the hash gds its clients ask once per
    /// peer). What a rank may see: LOCAL and GLOBAL keys of ranks here,
    /// REMOTE and GLOBAL of ranks elsewhere; never its own.
    /// - A connection's first [`BULK_AFTER`] GETs for distinct peers of its
    ///   namespace (peers it was not sent before) bring their target alone,
    ///   unless [`SWEEP_AFTER`] of them in a row asked for consecutive
    ///   ranks (a rank reading its peers in rank order).
    /// - From then on each such GET brings as many committed peers more as
    ///   it holds already (its targets and what bulk replies brought; at
    ///   least [`BULK_AFTER`]), so what it holds doubles with each, up to
    ///   [`BULK_ACROSS_PEERS`] a reply across nodes (`set_nodes`) and
    ///   [`BULK_PEERS`] on one node (N ranks asking at once never queue
    ///   O(N²) bytes): the committed peers after the target in rank order
    ///   not sent before (a peer whose node's data is fetched later, as
    ///   `data_at_host` leaves it, comes with a reply after it is here,
    ///   where a cursor once passed it for good). A rank
    ///   reading all N peers in rank order needs about `SWEEP_AFTER` +
    ///   log2(cap / `BULK_AFTER`) + N / cap round trips, one reading them
    ///   in another order `BULK_AFTER` more.
    /// - A GET for a peer it was sent before (waiting for a key that peer
    ///   did not hold then) brings its target alone and counts for nothing.
    pub(super) fn bulk(&mut self, id: ConnId, target: &(String, u32)) -> Vec<Bytes> {
        let Some(fmt) = self.fmt_of(id) else {
            return Vec::new();
        };
        let Some(Conn {
            state: ConnState::Client { proc },
            bulk,
            ..
        }) = self.conns.get_mut(&id)
        else {
            return Vec::new();
        };
        let Some(j) = self.jobs.get(&target.0) else {
            return Vec::new();
        };
        if proc.nspace.to_string() != target.0 || proc.rank == target.1 {
            return Vec::new();
        }
        if !bulk.ranks.insert(target.1) {
            return Vec::new();
        }
        let me = proc.rank;
        let n = j.ranks.len() as u32;
        bulk.asked += 1;
        bulk.held += 1;
        let next = |r: u32| match (r + 1) % n.max(1) {
            x if x == me => (x + 1) % n.max(1),
            x => x,
        };
        bulk.run = match bulk.last {
            Some(l) if next(l) == target.1 => bulk.run + 1,
            _ => 1,
        };
        bulk.last = Some(target.1);
        bulk.on |= bulk.asked > BULK_AFTER || bulk.run >= SWEEP_AFTER;
        if !bulk.on {
            return Vec::new();
        }
        // a peer a reply may bring: not the asker, committed, and not sent
        // to it before (the target among those)
        let sent = &bulk.ranks;
        let eligible = |r: &u32| {
            *r != me
                && !sent.contains(*r)
                && j.ranks.get(*r as usize).is_some_and(|st| st.committed)
        };
        let cap = if j.nodes.is_some() {
            BULK_ACROSS_PEERS
        } else {
            BULK_PEERS
        };
        let room = (bulk.held.max(BULK_AFTER) as usize).min(cap);
        // the peers after the target in rank order (wrapping), each reply
        // the next `room` whose data is here and was not sent: a rank
        // whose node's data is fetched only later (`data_at_host`) is
        // brought by a reply after that, not passed for good
        let after = (target.1 + 1..n).chain(0..target.1.min(n));
        let peers: Vec<u32> = after.filter(eligible).take(room).collect();
        for r in &peers {
            bulk.ranks.insert(*r);
        }
        bulk.held += peers.len() as u32;
        peers
            .into_iter()
            .filter_map(|r| {
                let st = j.ranks.get(r as usize)?;
                let kv = if st.elsewhere { &st.remote } else { &st.local };
                Self::blob(&fmt, &Proc::new(&target.0, r), kv)
            })
            .collect()
    }

    pub(super) fn resolve_gets(&mut self, target: &(String, u32)) {
        self.resolve_gets_where(|t| t == target);
    }

    /// [`Server::resolve_gets`] for every target `wanted` holds, in one
    /// pass over the waiting GETs.
    fn resolve_gets_where(&mut self, wanted: impl Fn(&(String, u32)) -> bool) {
        let pending = std::mem::take(&mut self.modex.gets);
        for g in pending {
            if !wanted(&g.target) {
                self.modex.gets.push(g);
                continue;
            }
            match self.has_key(&g.target, g.key.as_deref()) {
                KeyState::Here => self.answer_get(g.conn, g.tag, &g.target),
                KeyState::OtherScope | KeyState::Deleted => {
                    self.reply(g.conn, g.tag, &Reply::Status(codes::PMIX_ERR_NOT_FOUND))
                }
                KeyState::Absent => self.modex.gets.push(g),
            }
        }
    }

    /// Answer every GET waiting for `target` with the data held for it,
    /// whether or not that holds the key asked for (a direct-modex reply
    /// has come: [`Server::dmodex_done`]).
    fn settle_gets(&mut self, target: &(String, u32)) {
        for (conn, t) in self.modex.take_for(target) {
            self.answer_get(conn, t, target);
        }
    }

    /// Whether a rank's data for this node holds `key` (any key if none):
    /// libpmix answers NOT_FOUND at once when the key exists only in the
    /// scope the requester cannot see, and waits while it does not exist
    /// (protocol.md §7.3; the 4.2.2 capture's GET for `ch.bo`).
    pub(super) fn has_key(&self, target: &(String, u32), key: Option<&str>) -> KeyState {
        let Some(r) = self
            .jobs
            .get(&target.0)
            .and_then(|j| j.ranks.get(target.1 as usize))
        else {
            return KeyState::Absent;
        };
        if !r.committed {
            return KeyState::Absent;
        }
        let Some(key) = key else {
            return KeyState::Here;
        };
        let has = |v: &Committed| {
            v.kvals().iter().any(|k| {
                k.key
                    .as_ref()
                    .is_some_and(|s| s.as_bytes() == key.as_bytes())
            })
        };
        let (visible, other) = if r.elsewhere {
            (&r.remote, &r.local)
        } else {
            (&r.local, &r.remote)
        };
        if has(visible) {
            KeyState::Here
        } else if has(other) {
            KeyState::OtherScope
        } else if visible.was_deleted(key) {
            KeyState::Deleted
        } else {
            KeyState::Absent
        }
    }

    /// COMMIT: the rank's LOCAL/GLOBAL and REMOTE/GLOBAL keys; waiting GETs
    /// for it are answered. An error: a blob does not decode (where, in
    /// that blob).
    pub(super) fn commit(
        &mut self,
        id: ConnId,
        t: u32,
        fmt: &Format,
        proc: Proc,
        blobs: Vec<(u8, pmix_types::Buffer)>,
    ) -> Result<(), pmix_codec::Error> {
        let fmt = *fmt;
        let me = name(&proc);
        // a 7.0 client's delete sections (scopes 5-8) come first; each
        // names its keys as KVALs of no value (spec-notes/pmix7.md)
        let (deletes, blobs): (Vec<_>, Vec<_>) = blobs
            .into_iter()
            .partition(|(scope, _)| (5..=8).contains(scope));
        let mut deleted = Vec::new();
        for (scope, buf) in &deletes {
            for k in pmix_codec::msg::commit_kvals(&fmt, buf)? {
                if let Some(key) = k.key {
                    deleted.push((*scope, key));
                }
            }
        }
        let mut local = Vec::new();
        let mut remote = Vec::new();
        // each section's KVALs as they came, for replies in the same format
        // ([`Committed`]): per blob the run of bytes its KVALs took (a
        // slice of the received bytes, no copy); none if they came in two
        // formats or with a gap
        let mut parts: [Vec<(Format, Bytes)>; 2] = [Vec::new(), Vec::new()];
        let mut broken = [false; 2];
        for (scope, buf) in blobs {
            // LOCAL (1) and GLOBAL (3) data is for local peers; the
            // client sends GLOBAL keys in both sections
            // the blob's own type byte; v20/v12 send none, and the
            // connection's type applies
            let bf = Format {
                buffer_type: match buf.buffer_type {
                    1 => pmix_codec::BufferType::NonDesc,
                    2 => pmix_codec::BufferType::FullyDesc,
                    _ => fmt.buffer_type,
                },
                ..fmt
            };
            let mut b = DataBuffer::from_bytes(bf, buf.bytes.clone());
            let mut run: [Option<(usize, usize)>; 2] = [None, None];
            while !b.unread().is_empty() {
                let start = b.position();
                let side = match b.unpack_one(DataType::Kval) {
                    Ok(Value::Kval(k)) if scope == 1 || scope == 3 => {
                        local.push(*k);
                        0
                    }
                    Ok(Value::Kval(k)) if scope == 2 => {
                        remote.push(*k);
                        1
                    }
                    Ok(_) => continue,
                    Err(e) => return Err(e),
                };
                let end = b.position();
                run[side] = match run[side] {
                    None => Some((start, end)),
                    Some((s, e)) if e == start => Some((s, end)),
                    Some(r) => {
                        broken[side] = true;
                        Some(r)
                    }
                };
            }
            for side in 0..2 {
                if let Some((s, e)) = run[side] {
                    if b.as_bytes().len() == buf.bytes.len() {
                        parts[side].push((bf, buf.bytes.slice(s..e)));
                    } else {
                        broken[side] = true;
                    }
                }
            }
        }
        let [lw, rw] = parts.map(|p| {
            let f = p.first()?.0;
            if !p.iter().all(|(g, _)| *g == f) {
                return None;
            }
            match p.len() {
                1 => p.into_iter().next().map(|(_, b)| (f, b)),
                _ => Some((
                    f,
                    p.iter()
                        .map(|(_, b)| &b[..])
                        .collect::<Vec<_>>()
                        .concat()
                        .into(),
                )),
            }
        });
        let (lw, rw) = (lw.filter(|_| !broken[0]), rw.filter(|_| !broken[1]));
        if self.shared_store.is_some() {
            self.shared_commit(&me.0, me.1, &local);
        }
        if let Some(r) = self
            .jobs
            .get_mut(&me.0)
            .and_then(|j| j.ranks.get_mut(me.1 as usize))
        {
            // GLOBAL keys arrive in both sections: the LOCAL one
            // holds them for local peers, the REMOTE one for others
            r.local.commit(local, lw);
            r.remote.commit(remote, rw);
            r.committed = true;
        }
        self.apply_deletes(id, &proc, &deleted);
        self.reply(id, t, &Reply::Status(codes::PMIX_SUCCESS));
        self.out.push_back(Output::Host(HostEvent::Committed(proc)));
        self.resolve_gets(&me);
        Ok(())
    }

    /// A commit's deletes: DEL_LOCAL (5) drops the key from what local
    /// peers get, DEL_REMOTE (6) from what remote peers get, DEL_GLOBAL (7)
    /// from both; DEL_INTERNAL (8) names the client's own internal keys,
    /// which the server never held. Each delete as it came goes to every
    /// other client of the job whose release is 7.0 or later as a
    /// DATA_DELETE on tag 4, as the 7.0 server sends it (capture
    /// `v7.0.0a1-server_v7.0.0a1-client_delete`); older clients have no
    /// such tag and are sent nothing.
    fn apply_deletes(&mut self, id: ConnId, proc: &Proc, deleted: &[(u8, PString)]) {
        if deleted.is_empty() {
            return;
        }
        let me = name(proc);
        if let Some(r) = self
            .jobs
            .get_mut(&me.0)
            .and_then(|j| j.ranks.get_mut(me.1 as usize))
        {
            for (scope, key) in deleted {
                let Some(key) = key.as_str() else { continue };
                if matches!(scope, 5 | 7) {
                    r.local.delete(key);
                }
                if matches!(scope, 6 | 7) {
                    r.remote.delete(key);
                }
            }
        }
        let peers: Vec<ConnId> = self
            .jobs
            .get(&me.0)
            .map(|j| {
                j.ranks
                    .iter()
                    .flat_map(|r| r.conns.iter().copied())
                    .collect()
            })
            .unwrap_or_default();
        for peer in peers.into_iter().filter(|c| *c != id) {
            let Some(f) = self.fmt_of(peer) else { continue };
            if f.release_family() < pmix_codec::Release::V7 {
                continue;
            }
            for (scope, key) in deleted {
                let msg = pmix_codec::msg::DataDelete {
                    source: proc.clone(),
                    scope: *scope,
                    key: Some(key.clone()),
                };
                if let Ok(b) = msg.encode(&f) {
                    self.send(peer, pmix_codec::frame::tag::DATA_DELETE, &b);
                }
            }
        }
    }
}
