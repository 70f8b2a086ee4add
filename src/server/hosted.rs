//! Ranks the host serves itself: a rank of a registered namespace that
//! speaks no PMIx (a PMI-1/PMI-2 client of a job served both wires, issue
//! #27) still has a place in the modex store and in the job's fences. The
//! host contributes the rank's data ([`Server::host_commit`]), enters it
//! into the fence PMIx clients of its job call ([`Server::host_fence`],
//! answered by [`HostEvent::HostFenceDone`]), reads what every rank
//! committed ([`Server::committed`]) and says when the rank is gone
//! before finalizing ([`Server::host_rank_lost`]). The host's place in a
//! collective is an arrival on [`HOST_CONN`], a connection id no peer
//! ever has; its replies become upcalls.

#![forbid(unsafe_code)]

use super::{CollKind, ConnId, HostEvent, Output, Server, RANK_WILDCARD};
use pmix_codec::msg::Reply;
use pmix_types::status::codes;
use pmix_types::Rank;
use pmix_types::{Kval, Proc};

/// The connection id of the host's own arrivals in collectives (never a
/// peer's: the core numbers connections from 1 up).
pub(super) const HOST_CONN: ConnId = ConnId::MAX;

impl Server {
    /// The host contributes data for rank `rank` of `nspace`, a rank it
    /// serves itself: `kvals` join what the rank committed before (a key
    /// again replaces its value), for local and remote peers alike (PMIx's
    /// GLOBAL scope), and written to the shared store when there is one;
    /// the rank counts as committed and GETs waiting for it are answered.
    /// Refused (PMIX_ERR_NOT_FOUND) for a rank the core does
    /// not hold.
    pub fn host_commit(
        &mut self,
        nspace: &str,
        rank: impl Into<Rank>,
        kvals: Vec<Kval>,
    ) -> Result<(), i32> {
        let rank = rank.into().wire();
        let r = self
            .rank_mut(nspace, rank)
            .ok_or(codes::PMIX_ERR_NOT_FOUND)?;
        r.local.commit(kvals.clone(), None);
        r.remote.commit(kvals.clone(), None);
        r.committed = true;
        // its PMIx peers on the shared store read it there, as a local
        // rank's commit (shared_store.rs)
        self.shared_commit(nspace, rank, &kvals);
        self.out
            .push_back(Output::Host(HostEvent::Committed(Proc::new(nspace, rank))));
        self.resolve_gets(&(nspace.to_string(), rank));
        Ok(())
    }

    /// The host enters rank `rank` of `nspace`, a rank it serves itself,
    /// into the fence over every rank of the namespace: the one its PMIx
    /// clients call with `PMIx_Fence` (over `nspace:WILDCARD` or every
    /// rank named), with or without data collection. The fence completes
    /// when every rank has called in, PMIx client or host-served alike;
    /// [`HostEvent::HostFenceDone`] then says so, or why not (a rank was
    /// lost: PMIX_ERR_LOST_CONNECTION; the rank is no member:
    /// PMIX_ERR_BAD_PARAM).
    pub fn host_fence(&mut self, nspace: &str, rank: impl Into<Rank>) {
        let rank = rank.into().wire();
        let me = (nspace.to_string(), rank);
        let tag = self.collectives.host_wait(Proc::new(nspace, rank));
        let procs = [Proc::new(nspace, RANK_WILDCARD)];
        // a fence of the job's ranks a client started, of either kind
        let world = self.expand(&procs);
        let found = self.collectives.find_fence(&me, &world);
        let idx = match found {
            Some(_) if !world.contains(&me) => Err(codes::PMIX_ERR_BAD_PARAM),
            Some(i) if self.collectives[i].broken => Err(codes::PMIX_ERR_LOST_CONNECTION),
            Some(i) => {
                self.collectives[i].arrive(HOST_CONN, tag, &me);
                Ok(i)
            }
            None => self
                .join_collective(CollKind::Fence(false), &me, &procs, (HOST_CONN, tag))
                .inspect(|&i| {
                    let c = &mut self.collectives[i];
                    c.open_kind = c.arrived.len() == 1;
                }),
        };
        match idx {
            Err(st) => self.reply(HOST_CONN, tag, &Reply::Status(st)),
            // the last to call in: the same path as a client's
            Ok(i) if self.collectives[i].complete() => self.finish_collective(i),
            Ok(_) => {}
        }
    }

    /// The host says rank `rank` of `nspace`, which it serves itself, is
    /// gone before it finalized: what waits for it fails, as when a PMIx
    /// client's connection ends (collectives answer
    /// PMIX_ERR_LOST_CONNECTION, GETs for its data fail, later
    /// collectives naming it are refused).
    pub fn host_rank_lost(&mut self, nspace: &str, rank: impl Into<Rank>) {
        let rank = rank.into().wire();
        let Some(r) = self.rank_mut(nspace, rank) else {
            return;
        };
        if r.lost || !r.conns.is_empty() {
            return;
        }
        r.lost = true;
        self.rank_gone(&Proc::new(nspace, rank), false);
    }

    /// What each rank of `nspace` committed, as a local peer sees it
    /// (LOCAL and GLOBAL keys of ranks here, REMOTE and GLOBAL keys of
    /// ranks elsewhere), for ranks that have committed: what the host
    /// shows its own clients of the PMIx clients' data.
    pub fn committed(&self, nspace: &str) -> Vec<(u32, Vec<Kval>)> {
        let Some(j) = self.jobs.get(nspace) else {
            return Vec::new();
        };
        j.ranks
            .iter()
            .enumerate()
            .filter(|(_, r)| r.committed)
            .map(|(i, r)| {
                let kv = if r.elsewhere { &r.remote } else { &r.local };
                (i as u32, kv.kvals().to_vec())
            })
            .collect()
    }

    /// A reply for the host's place in a collective: an upcall.
    pub(super) fn host_reply(&mut self, tag: u32, r: &Reply) {
        let Some(proc) = self.collectives.take_host_wait(tag) else {
            return;
        };
        let status = match r {
            Reply::Status(st) => *st,
            _ => codes::PMIX_SUCCESS,
        };
        self.out
            .push_back(Output::Host(HostEvent::HostFenceDone { proc, status }));
    }
}
