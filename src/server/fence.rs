//! Collectives: fence, connect, disconnect, group construct/destruct;
//! with the host when a job spans nodes.

#![forbid(unsafe_code)]

use super::{name, ConnId, HostEvent, Output, Server, RANK_WILDCARD};
use bytes::Bytes;
use pmix_codec::msg::{GroupReply, Reply};
use pmix_types::status::codes;
use pmix_types::Proc;
use std::collections::BTreeSet;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum CollKind {
    /// With or without data collection.
    Fence(bool),
    Connect,
    Disconnect,
    GroupConstruct,
    GroupDestruct,
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
        info: Vec<pmix_types::Info>,
    ) {
        let idx = match self.join_collective(kind, me, procs, (id, t)) {
            Ok(i) => i,
            Err(st) => {
                self.reply(id, t, &Reply::Status(st));
                return;
            }
        };
        let col = &mut self.collectives[idx];
        if col.arrived.len() == 1 {
            // the first caller's, as libpmix 4.2.2 keeps them
            col.info = info;
        }
        if self.collectives[idx].complete() {
            self.finish_collective(idx);
        }
    }

    /// Every local participant of collective `idx` has called in: answer
    /// them, or, when other nodes take part in a fence (or, under
    /// [`super::Connecting::Host`], a connect or disconnect; under
    /// [`super::Grouping::Host`], a group operation), hand it to the host.
    pub(super) fn finish_collective(&mut self, idx: usize) {
        if self.connect_to_host(idx) || self.group_to_host(idx) {
            return;
        }
        let col = &self.collectives[idx];
        if col.complete() && col.spans() {
            if let CollKind::Fence(collect) = col.kind {
                // other nodes take part: the host completes it
                let col = self.collectives.remove(idx);
                let data = if collect {
                    self.arrived_contribution(&col.arrived).unwrap_or_default()
                } else {
                    Bytes::new()
                };
                let request = self
                    .requests
                    .fence(col.arrived.iter().map(|a| (a.0, a.1)).collect());
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
        if col.complete() {
            let col = self.collectives.remove(idx);
            self.answer_collective(col);
        }
    }

    /// Answer the callers of the completed collective `col` with success
    /// (and, to a connect, the other namespaces' job data).
    pub(super) fn answer_collective(&mut self, col: super::collective::Collective) {
        {
            let r = match col.kind {
                CollKind::Fence(_) | CollKind::Disconnect | CollKind::GroupDestruct => {
                    Reply::Status(codes::PMIX_SUCCESS)
                }
                CollKind::Connect => Reply::Connect {
                    status: codes::PMIX_SUCCESS,
                    blobs: Vec::new(),
                },
                // the form depends on each caller's release (below)
                CollKind::GroupConstruct => Reply::Group {
                    status: codes::PMIX_SUCCESS,
                    body: GroupReply::V4 {
                        ctxid: self.group_constructed(&col.expected, None),
                    },
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
                    (
                        Reply::Group {
                            body: GroupReply::V4 { ctxid },
                            ..
                        },
                        Some(fmt),
                    ) => {
                        let r = self.group_reply(conn, &fmt, &own, &col.expected, *ctxid);
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
        let Some(callers) = self.requests.take_fence(request) else {
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
