//! Collectives: fence, connect, disconnect, group construct/destruct;
//! with the host when a job spans nodes.

use super::*;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum CollKind {
    /// With or without data collection.
    Fence(bool),
    Connect,
    Disconnect,
    GroupConstruct,
    GroupDestruct,
}

pub(super) struct Collective {
    pub(super) kind: CollKind,
    pub(super) expected: BTreeSet<(String, u32)>,
    pub(super) arrived: Vec<(ConnId, u32, (String, u32))>,
}

impl Server {
    pub(super) fn expand(&self, procs: &[Proc]) -> BTreeSet<(String, u32)> {
        let mut set = BTreeSet::new();
        for p in procs {
            if let Some(members) = self.group_expand(p) {
                set.extend(members);
                continue;
            }
            let (ns, r) = name(p);
            if r == RANK_WILDCARD {
                if let Some(j) = self.jobs.get(&ns) {
                    set.extend((0..j.spec.nprocs).map(|k| (ns.clone(), k)));
                }
            } else {
                set.insert((ns, r));
            }
        }
        set
    }

    pub(super) fn collective(
        &mut self,
        kind: CollKind,
        id: ConnId,
        t: u32,
        me: &(String, u32),
        procs: &[Proc],
    ) {
        let expected = if procs.is_empty() {
            self.expand(&[Proc::new(&me.0, RANK_WILDCARD)])
        } else {
            self.expand(procs)
        };
        if !expected.contains(me) {
            self.reply(id, t, &Reply::Status(codes::PMIX_ERR_BAD_PARAM));
            return;
        }
        // a participant that is gone can never call in (one that has not
        // connected yet still may)
        let gone = expected.iter().any(|(ns, r)| {
            self.jobs
                .get(ns)
                .and_then(|j| j.ranks.get(*r as usize))
                .is_none_or(|st| st.lost)
        });
        if gone {
            self.reply(id, t, &Reply::Status(codes::PMIX_ERR_LOST_CONNECTION));
            return;
        }
        let idx = match self.collectives.iter().position(|c| {
            c.kind == kind && c.expected == expected && !c.arrived.iter().any(|a| a.2 == *me)
        }) {
            Some(i) => i,
            None => {
                self.collectives.push(Collective {
                    kind,
                    expected,
                    arrived: Vec::new(),
                });
                self.collectives.len() - 1
            }
        };
        let col = &mut self.collectives[idx];
        col.arrived.push((id, t, me.clone()));
        let here = |s: &Server, (ns, r): &(String, u32)| {
            s.jobs
                .get(ns)
                .and_then(|j| j.ranks.get(*r as usize))
                .is_some_and(|st| !st.elsewhere)
        };
        let local = self.collectives[idx]
            .expected
            .iter()
            .filter(|p| here(self, p))
            .count();
        let col = &self.collectives[idx];
        let spans = col.expected.len() > local;
        if col.arrived.len() == local && spans {
            if let CollKind::Fence(collect) = col.kind {
                // other nodes take part: the host completes it
                let col = self.collectives.remove(idx);
                let request = self.next_request;
                self.next_request += 1;
                let data = if collect {
                    let parts: Vec<(Proc, Vec<Kval>)> = col
                        .arrived
                        .iter()
                        .map(|(_, _, (ns, r))| {
                            let kv = self
                                .jobs
                                .get(ns)
                                .and_then(|j| j.ranks.get(*r as usize))
                                .map(|st| st.remote.clone())
                                .unwrap_or_default();
                            (Proc::new(ns, *r), kv)
                        })
                        .collect();
                    let refs: Vec<(Proc, &Vec<Kval>)> =
                        parts.iter().map(|(p, k)| (p.clone(), k)).collect();
                    Self::contribution(&refs).unwrap_or_default()
                } else {
                    Bytes::new()
                };
                self.fences
                    .insert(request, col.arrived.iter().map(|a| (a.0, a.1)).collect());
                self.out.push_back(Output::Host(HostEvent::Fence {
                    request,
                    procs: col
                        .expected
                        .iter()
                        .map(|(ns, r)| Proc::new(ns, *r))
                        .collect(),
                    collect,
                    data,
                }));
                return;
            }
        }
        if col.arrived.len() == local {
            let col = self.collectives.remove(idx);
            let r = match col.kind {
                CollKind::Fence(_) | CollKind::Disconnect | CollKind::GroupDestruct => {
                    Reply::Status(codes::PMIX_SUCCESS)
                }
                CollKind::Connect => Reply::Connect {
                    status: codes::PMIX_SUCCESS,
                    blobs: Vec::new(),
                },
                CollKind::GroupConstruct => Reply::Id {
                    status: codes::PMIX_SUCCESS,
                    id: Some(self.group_constructed(&col.expected)),
                },
            };
            if col.kind == CollKind::GroupDestruct {
                self.group_destructed(&col.expected);
            }
            let spaces: BTreeSet<String> = col.expected.iter().map(|(ns, _)| ns.clone()).collect();
            for (conn, tg, (own, _)) in col.arrived {
                match (&r, self.fmt_of(conn)) {
                    // CONNECT: each other namespace's job data, one byte
                    // object each (STRING nspace, then its KVALs), so the
                    // caller can read the jobs it connected to
                    (Reply::Connect { .. }, Some(fmt)) => {
                        let blobs = spaces
                            .iter()
                            .filter(|ns| **ns != own)
                            .filter_map(|ns| self.connect_blob(&fmt, ns))
                            .collect();
                        let r = Reply::Connect {
                            status: codes::PMIX_SUCCESS,
                            blobs,
                        };
                        self.reply(conn, tg, &r);
                    }
                    _ => self.reply(conn, tg, &r),
                }
            }
        }
    }

    /// The host's answer to [`HostEvent::Fence`]: the status and, for a
    /// fence that collects data, every node's contribution concatenated.
    pub fn fence_done(&mut self, request: u64, status: i32, data: &[u8]) {
        let Some(callers) = self.fences.remove(&request) else {
            return;
        };
        let st = if status == codes::PMIX_SUCCESS && !self.absorb(data) {
            codes::PMIX_ERR_BAD_PARAM
        } else {
            status
        };
        for (conn, t) in callers {
            self.reply(conn, t, &Reply::Status(st));
        }
    }
}
