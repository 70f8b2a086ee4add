//! Collectives in progress (fence, connect, disconnect, group construct
//! and destruct): how a caller finds the one it joins.
//!
//! A fence over `nspace:WILDCARD` names N participants. Expanding that
//! list into its set, comparing the set with every collective in progress
//! and counting its local members on every call made the N calls of one
//! fence cost O(N²) (at N = 1 000 it was most of the server's CPU time in
//! `benches/server_load.rs`). A collective now remembers the participant
//! list as the first caller wrote it ([`CollKey`]), its local member count
//! and who has arrived (a set): a caller naming the same list joins it
//! in O(log N) without expanding anything. A caller that names the same
//! participants another way (an explicit list of every rank, say) still
//! finds it by the expanded set, as before.

#![forbid(unsafe_code)]

use super::{CollKind, ConnId, Proc, Server};
use pmix_types::status::codes;
use std::collections::{BTreeMap, BTreeSet, HashSet};

/// A participant list as a request gives it, in a canonical order (an
/// empty list means every rank of the caller's namespace).
pub(super) type CollKey = Vec<(String, u32)>;

fn key_of(procs: &[Proc], me: &(String, u32)) -> CollKey {
    if procs.is_empty() {
        return vec![(me.0.clone(), super::RANK_WILDCARD)];
    }
    let mut k: CollKey = procs.iter().map(super::name).collect();
    k.sort_unstable();
    k.dedup();
    k
}

pub(super) struct Collective {
    pub(super) kind: CollKind,
    /// The participant list of the call that started it.
    key: CollKey,
    pub(super) expected: BTreeSet<(String, u32)>,
    pub(super) arrived: Vec<(ConnId, u32, (String, u32))>,
    /// The participants in `arrived`.
    arrived_set: HashSet<(String, u32)>,
    /// How many of `expected` run on this node (counted once, at start).
    pub(super) local: usize,
    /// A participant that had arrived lost its connection before
    /// finalizing: later callers are told LOST_CONNECTION, as a caller of
    /// a new collective that names a lost rank is.
    pub(super) broken: bool,
    /// Started by the host for a rank it serves ([`Server::host_fence`]):
    /// a client's fence of either kind (collecting data or not) joins it,
    /// and the first client's kind becomes its kind.
    pub(super) open_kind: bool,
    /// The first caller's attributes (a connect's or disconnect's, for
    /// the host: connect.rs).
    pub(super) info: Vec<pmix_types::Info>,
}

impl Collective {
    pub(super) fn has_arrived(&self, me: &(String, u32)) -> bool {
        self.arrived_set.contains(me)
    }

    /// Every local participant has called in.
    pub(super) fn complete(&self) -> bool {
        self.arrived.len() == self.local
    }

    /// Some participants run on other nodes.
    pub(super) fn spans(&self) -> bool {
        self.expected.len() > self.local
    }

    /// `me` calls in, through connection `conn` with request tag `tag`.
    pub(super) fn arrive(&mut self, conn: ConnId, tag: u32, me: &(String, u32)) {
        self.arrived.push((conn, tag, me.clone()));
        self.arrived_set.insert(me.clone());
    }

    /// The participants as the first caller named them, sorted as
    /// libpmix 4.2.2's server sorts them for its host (by namespace,
    /// then rank; a namespace's WILDCARD stays one).
    pub(super) fn given(&self) -> Vec<Proc> {
        self.key.iter().map(|(ns, r)| Proc::new(ns, *r)).collect()
    }

    /// Whether a caller of `kind` may join this collective.
    fn takes(&self, kind: CollKind) -> bool {
        self.kind == kind
            || (self.open_kind
                && matches!((self.kind, kind), (CollKind::Fence(_), CollKind::Fence(_))))
    }
}

/// The collectives area's state: the collectives in progress, and the
/// host's places in them (hosted.rs: the tag of each arrival on
/// [`super::hosted::HOST_CONN`] and the rank it stands for).
#[derive(Default)]
pub(super) struct Collectives {
    list: Vec<Collective>,
    /// Who completes a connect or disconnect spanning nodes (connect.rs).
    connecting: super::Connecting,
    /// The host's places in collectives: tag → its rank.
    host_waits: BTreeMap<u32, Proc>,
    next_host_tag: u32,
}

impl std::ops::Index<usize> for Collectives {
    type Output = Collective;
    fn index(&self, i: usize) -> &Collective {
        &self.list[i]
    }
}

impl std::ops::IndexMut<usize> for Collectives {
    fn index_mut(&mut self, i: usize) -> &mut Collective {
        &mut self.list[i]
    }
}

impl Collectives {
    /// Who completes a connect or disconnect spanning nodes.
    pub(super) fn connecting(&self) -> super::Connecting {
        self.connecting
    }

    /// From now on, `mode` completes them.
    pub(super) fn set_connecting(&mut self, mode: super::Connecting) {
        self.connecting = mode;
    }

    /// Collective `idx`, no longer in progress.
    pub(super) fn remove(&mut self, idx: usize) -> Collective {
        self.list.remove(idx)
    }

    /// A fence in progress over exactly `world` that `me` has not joined.
    pub(super) fn find_fence(
        &self,
        me: &(String, u32),
        world: &BTreeSet<(String, u32)>,
    ) -> Option<usize> {
        self.list.iter().position(|c| {
            matches!(c.kind, CollKind::Fence(_)) && !c.has_arrived(me) && c.expected == *world
        })
    }

    /// A place for the host in a collective, standing for `proc`: the tag
    /// its arrival and its reply carry.
    pub(super) fn host_wait(&mut self, proc: Proc) -> u32 {
        let tag = self.next_host_tag;
        self.next_host_tag = self.next_host_tag.wrapping_add(1);
        self.host_waits.insert(tag, proc);
        tag
    }

    /// The rank the host's place `tag` stood for, now answered.
    pub(super) fn take_host_wait(&mut self, tag: u32) -> Option<Proc> {
        self.host_waits.remove(&tag)
    }

    /// `me`'s last connection ended (`lost`: before it finalized):
    /// collectives waiting for it can never complete (their callers are
    /// returned, to be told), and, if it is lost, those it had joined
    /// refuse later callers.
    pub(super) fn rank_gone(&mut self, me: &(String, u32), lost: bool) -> Vec<(ConnId, u32)> {
        let mut failed = Vec::new();
        self.list.retain_mut(|col| {
            if !col.expected.contains(me) {
                return true;
            }
            if col.has_arrived(me) {
                col.broken |= lost;
                return true;
            }
            failed.extend(col.arrived.iter().map(|a| (a.0, a.1)));
            false
        });
        failed
    }
}

impl Server {
    /// Add the caller `me` (its connection and the request's tag: `from`)
    /// to the collective of this kind over `procs`, starting it if none is
    /// in progress; the collective's index, or the status to answer the
    /// caller with (BAD_PARAM: it is not a participant; LOST_CONNECTION: a
    /// participant is gone).
    pub(super) fn join_collective(
        &mut self,
        kind: CollKind,
        me: &(String, u32),
        procs: &[Proc],
        from: (ConnId, u32),
    ) -> Result<usize, i32> {
        let key = key_of(procs, me);
        let found = self
            .collectives
            .list
            .iter()
            .position(|c| c.takes(kind) && c.key == key && !c.has_arrived(me));
        let idx = match found {
            Some(i) if !self.collectives[i].expected.contains(me) => {
                return Err(codes::PMIX_ERR_BAD_PARAM)
            }
            Some(i) if self.collectives[i].broken => return Err(codes::PMIX_ERR_LOST_CONNECTION),
            Some(i) => i,
            None => self.start_collective(kind, me, procs, key)?,
        };
        let col = &mut self.collectives[idx];
        if col.open_kind && from.0 != super::hosted::HOST_CONN {
            // the first client's kind
            col.kind = kind;
            col.open_kind = false;
        }
        col.arrive(from.0, from.1, me);
        Ok(idx)
    }

    /// No collective in progress has this caller's participant list as its
    /// key: expand the list and look again by the set, or start one.
    fn start_collective(
        &mut self,
        kind: CollKind,
        me: &(String, u32),
        procs: &[Proc],
        key: CollKey,
    ) -> Result<usize, i32> {
        let expected = if procs.is_empty() {
            self.expand(&[Proc::new(&me.0, super::RANK_WILDCARD)])
        } else {
            self.expand(procs)
        };
        if !expected.contains(me) {
            return Err(codes::PMIX_ERR_BAD_PARAM);
        }
        // a participant that is gone can never call in (one that has not
        // connected yet still may)
        let state = |s: &Server, (ns, r): &(String, u32)| {
            s.jobs
                .get(ns)
                .and_then(|j| j.ranks.get(*r as usize))
                .map(|st| (st.lost, st.elsewhere))
        };
        let mut local = 0;
        for p in &expected {
            match state(self, p) {
                Some((false, elsewhere)) => local += usize::from(!elsewhere),
                _ => return Err(codes::PMIX_ERR_LOST_CONNECTION),
            }
        }
        if let Some(i) = self
            .collectives
            .list
            .iter()
            .position(|c| c.takes(kind) && c.expected == expected && !c.has_arrived(me))
        {
            return Ok(i);
        }
        self.collectives.list.push(Collective {
            kind,
            key,
            expected,
            arrived: Vec::new(),
            arrived_set: HashSet::new(),
            local,
            broken: false,
            open_kind: false,
            info: Vec::new(),
        });
        Ok(self.collectives.list.len() - 1)
    }
}
