//! Process groups on one node (the standard's chapter on groups; 4.2.2's
//! wire: GROUP_CONSTRUCT = STRING id, procs, infos → STATUS, SIZE context
//! id; GROUP_DESTRUCT = STRING id, infos → STATUS). A construct is a
//! collective over the listed procs; when it completes the group exists
//! with those members, and with a context id when a member asked for one
//! (`pmix.grp.actxid`: a counter unique for this server's life; else
//! UINT64_MAX, "none", as libpmix's server sends). A group is also a
//! process set: `(group id, WILDCARD)` in a fence or connect names its
//! members, and queries list it. Destruct is a collective over the
//! members only. A member that leaves (GROUP_LEAVE, which libpmix's 4.2.2
//! server does not serve) is removed and reported to the others as
//! PMIX_GROUP_LEFT; one whose connection ends before it finalizes, as
//! PMIX_GROUP_MEMBER_FAILED.
//!
//! Under [`Grouping::Host`] (a host with a `group` upcall, as libpmix
//! 4.2.2's server has it) a construct asking for a context id or spanning
//! nodes, and every destruct, go to the host once the local members are
//! in ([`HostEvent::GroupConstruct`], [`HostEvent::GroupDestruct`],
//! answered by [`Server::group_done`]).

#![forbid(unsafe_code)]

use super::{
    info_true, info_value, name, CollKind, ConnId, ConnState, Format, GroupReply, HostEvent,
    Output, Reply, Server, RANK_WILDCARD,
};
use pmix_types::status::codes;
use pmix_types::{Hex, Info, Proc, Value};
use std::collections::{BTreeSet, HashMap};

/// No context id (what libpmix's server answers when its host gave none).
pub const NO_CONTEXT_ID: u64 = u64::MAX;

/// Who completes group constructs and destructs ([`Server::set_grouping`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Grouping {
    /// The core, on this node: a construct completes once every member
    /// called in, with a context id of the core's when one was asked for.
    /// The default.
    #[default]
    Local,
    /// The host, as libpmix 4.2.2's server hands its host's `group`
    /// upcall a construct that asks for a context id
    /// (`pmix.grp.actxid`) or names members on other nodes (unless
    /// `pmix.grp.lcl` says it is local), and every destruct, once every
    /// local member called in: [`HostEvent::GroupConstruct`],
    /// [`HostEvent::GroupDestruct`], answered by [`Server::group_done`].
    /// Other constructs the core completes (libpmix 4.2.2 does not call
    /// its host for them); a destruct of a group the server does not know
    /// is NOT_FOUND, as from libpmix.
    Host,
}

#[derive(Debug, Clone)]
struct Group {
    id: String,
    members: BTreeSet<(String, u32)>,
    /// The members as the first caller named them, sorted (a namespace's
    /// WILDCARD stays one): what the host is handed.
    given: Vec<Proc>,
    /// Constructed (a construct in progress has none of the below yet).
    done: bool,
    want_ctxid: bool,
    ctxid: u64,
    /// What each member contributed for the others (`pmix.grp.info`'s
    /// array, and a `pmix.grp.lclid` given directly).
    data: HashMap<(String, u32), Vec<Info>>,
}

/// How many destructed groups keep their members' contributions for
/// GETs (the oldest go first).
pub const RETIRED_GROUPS_KEPT: usize = 256;

/// The groups of a server.
#[derive(Default)]
pub struct Groups {
    list: Vec<Group>,
    /// Destructed groups, newest last: what their members contributed
    /// stays readable (OpenPMIx's group_lcl_cid example reads every
    /// member's PMIX_GROUP_LOCAL_CID, qualified by the context id, after
    /// PMIx_Group_destruct).
    retired: std::collections::VecDeque<Group>,
    next_ctxid: u64,
    /// Who completes constructs and destructs.
    mode: Grouping,
}

impl Server {
    /// The names of the constructed groups (also the process sets), sorted.
    pub(super) fn group_names(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .groups
            .list
            .iter()
            .filter(|g| g.done)
            .map(|g| g.id.clone())
            .collect();
        v.sort();
        v.dedup();
        v
    }

    /// A constructed group's members.
    pub(super) fn group_members(&self, id: &str) -> Option<Vec<Proc>> {
        let g = self.groups.list.iter().find(|g| g.done && g.id == id)?;
        Some(g.members.iter().map(|(n, r)| Proc::new(n, *r)).collect())
    }

    /// The members `(group, WILDCARD)` or `(group, rank)` names, if
    /// `group` is a constructed group's id (and not a namespace).
    pub(super) fn group_expand(&self, p: &Proc) -> Option<Vec<(String, u32)>> {
        let ns = p.nspace.to_string();
        if self.jobs.contains_key(&ns) {
            return None;
        }
        let g = self.groups.list.iter().find(|g| g.done && g.id == ns)?;
        if p.rank == RANK_WILDCARD {
            Some(g.members.iter().cloned().collect())
        } else {
            // a group rank: the members in order
            g.members
                .iter()
                .nth(p.rank as usize)
                .map(|m| vec![m.clone()])
        }
    }

    /// Note a member's construct request: the group (pending until the
    /// collective completes) with the members it lists.
    pub(super) fn group_construct_called(
        &mut self,
        me: &(String, u32),
        group: &str,
        members: BTreeSet<(String, u32)>,
        given: &[Proc],
        info: &[Info],
    ) {
        if !members.contains(me) {
            // refused by the collective (BAD_PARAM): nothing to track
            return;
        }
        let want = info.iter().any(|i| {
            i.key.as_bytes() == b"pmix.grp.actxid" && !matches!(i.value, Value::Bool(false))
        });
        let mut shared = Vec::new();
        for i in info {
            match (i.key.to_string().as_str(), &i.value) {
                ("pmix.grp.info", Value::DataArray(a)) => {
                    if let pmix_types::DataArray::Typed { elements, .. } = &**a {
                        shared.extend(elements.iter().filter_map(|e| match e {
                            Value::Info(x) => Some((**x).clone()),
                            _ => None,
                        }))
                    }
                }
                ("pmix.grp.lclid", _) => shared.push(i.clone()),
                _ => {}
            }
        }
        let i = match self
            .groups
            .list
            .iter()
            .position(|g| !g.done && g.id == group && g.members == members)
        {
            Some(i) => i,
            None => {
                let mut given = given.to_vec();
                given.sort_by_key(name);
                given.dedup();
                self.groups.list.push(Group {
                    id: group.to_string(),
                    members,
                    given,
                    done: false,
                    want_ctxid: false,
                    ctxid: NO_CONTEXT_ID,
                    data: HashMap::new(),
                });
                self.groups.list.len() - 1
            }
        };
        let g = &mut self.groups.list[i];
        g.want_ctxid |= want;
        g.data.insert(me.clone(), shared);
    }

    /// A value a member contributed to a group (`pmix.grp.lclid`, or any
    /// key of its `pmix.grp.info`), for a GET naming that member. The
    /// group is the one the qualifiers name (`pmix.grp.id` or
    /// `pmix.grp.ctxid`), else the newest holding the key; a live group
    /// before one destructed.
    pub(super) fn group_value(
        &self,
        target: &(String, u32),
        key: &str,
        quals: &[Info],
    ) -> Option<Value> {
        let q = |k: &str| info_value(quals, k);
        let by_id = match q("pmix.grp.id") {
            Some(Value::String(Some(s))) => Some(s.to_string()),
            _ => None,
        };
        let by_ctx = match q("pmix.grp.ctxid") {
            Some(Value::Size(n)) | Some(Value::Uint64(n)) => Some(*n),
            Some(Value::Uint32(n)) => Some(u64::from(*n)),
            _ => None,
        };
        self.groups
            .list
            .iter()
            .rev()
            .filter(|g| g.done)
            .chain(self.groups.retired.iter().rev())
            .filter(|g| by_id.as_ref().is_none_or(|id| *id == g.id))
            .filter(|g| by_ctx.is_none_or(|c| c == g.ctxid))
            .find_map(|g| {
                g.data
                    .get(target)?
                    .iter()
                    .find(|i| i.key.as_bytes() == key.as_bytes())
                    .map(|i| i.value.clone())
            })
    }

    /// The pending construct over `members` every member of this node
    /// called (one that failed, with the same members, lacks the caller
    /// that never came; members on other nodes call their own server).
    fn pending_group(&self, members: &BTreeSet<(String, u32)>) -> Option<usize> {
        let elsewhere = |(ns, r): &(String, u32)| {
            self.jobs
                .get(ns)
                .and_then(|j| j.ranks.get(*r as usize))
                .is_some_and(|st| st.elsewhere)
        };
        self.groups.list.iter().position(|g| {
            !g.done
                && g.members == *members
                && g.members
                    .iter()
                    .all(|m| elsewhere(m) || g.data.contains_key(m))
        })
    }

    /// The construct over `members` completed: the group exists; its
    /// context id: the host's (`by_host`, [`Grouping::Host`]), else the
    /// core's when asked for, else NO_CONTEXT_ID.
    pub(super) fn group_constructed(
        &mut self,
        members: &BTreeSet<(String, u32)>,
        by_host: Option<u64>,
    ) -> u64 {
        let Some(i) = self.pending_group(members) else {
            return NO_CONTEXT_ID;
        };
        let mut g = self.groups.list.remove(i);
        // a group id names one group: a new construct replaces the old
        self.groups.list.retain(|old| !(old.done && old.id == g.id));
        g.done = true;
        if let Some(c) = by_host {
            g.ctxid = c;
        } else if g.want_ctxid {
            self.groups.next_ctxid += 1;
            g.ctxid = self.groups.next_ctxid;
        }
        let ctxid = g.ctxid;
        self.groups.list.push(g);
        ctxid
    }

    /// A leader's PMIx_Group_invite completed: libpmix's client (4.2.2
    /// and 5.0.11 alike) builds such a group with events alone (INVITED,
    /// INVITE_ACCEPTED) and then notifies PMIX_GROUP_CONSTRUCT_COMPLETE
    /// to the members (range CUSTOM, `pmix.evrange`) with `pmix.grp.id`,
    /// "servers will intercept and update their membership lists": the
    /// group exists from here, with those members and no context id, so
    /// that a fence over `(group, WILDCARD)` spans them.
    pub(super) fn group_announced(&mut self, info: &[Info]) {
        let Some(members) = super::jobctl::custom_range(super::range::CUSTOM, info) else {
            return;
        };
        let id = match info
            .iter()
            .find(|i| i.key.as_bytes() == b"pmix.grp.id")
            .map(|i| &i.value)
        {
            Some(Value::String(Some(s))) => s.to_string(),
            _ => return,
        };
        if members.is_empty() || self.jobs.contains_key(&id) {
            return;
        }
        let members = self.expand(&members);
        self.groups.list.retain(|old| !(old.done && old.id == id));
        self.groups.list.push(Group {
            id,
            given: members.iter().map(|(n, r)| Proc::new(n, *r)).collect(),
            data: members.iter().map(|m| (m.clone(), Vec::new())).collect(),
            members,
            done: true,
            want_ctxid: false,
            ctxid: NO_CONTEXT_ID,
        });
    }

    /// The major release a client's handshake announced ("5.0.11" → 5),
    /// else what its dialect implies (v41: 4, v51 and later: 6).
    fn client_major(&self, conn: ConnId) -> u32 {
        let c = self.conns.get(&conn);
        let version = match c.map(|c| &c.state) {
            Some(ConnState::Client { proc }) => self
                .registry
                .peer(&proc.nspace)
                .and_then(|p| p.version.as_deref()),
            Some(ConnState::Tool { version, .. }) => Some(version.as_str()),
            _ => None,
        };
        let announced = version.and_then(|v| {
            let d: String = v
                .trim_start_matches(|ch: char| !ch.is_ascii_digit())
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            d.parse().ok()
        });
        announced.unwrap_or_else(|| match c.and_then(|c| c.format()).map(|f| f.dialect) {
            Some(d) if d >= pmix_codec::Dialect::V51 => 6,
            _ => 4,
        })
    }

    /// GROUP_CONSTRUCT's successful reply to one member, in the form its
    /// release reads (spec-notes/commands.md): 4.x the context id; 5.0 the
    /// members, the context id (SIZE_MAX: none) and the other namespaces'
    /// job data, as libpmix 5.0.11's server sends; 6.x the members and
    /// the context id behind a BOOL.
    pub(super) fn group_reply(
        &self,
        conn: ConnId,
        fmt: &Format,
        own_ns: &str,
        members: &BTreeSet<(String, u32)>,
        ctxid: u64,
    ) -> Reply {
        let procs = || members.iter().map(|(n, r)| Proc::new(n, *r)).collect();
        let body = match self.client_major(conn) {
            0..=4 => GroupReply::V4 { ctxid },
            5 => {
                let spaces: BTreeSet<&String> = members.iter().map(|(ns, _)| ns).collect();
                GroupReply::V5 {
                    members: procs(),
                    ctxid,
                    blobs: spaces
                        .into_iter()
                        .filter(|ns| ns.as_str() != own_ns)
                        .filter_map(|ns| self.connect_blob(fmt, ns))
                        .collect(),
                }
            }
            _ => GroupReply::V6 {
                members: procs(),
                ctxid: (ctxid != NO_CONTEXT_ID).then_some(ctxid),
                info: None,
            },
        };
        Reply::Group {
            status: codes::PMIX_SUCCESS,
            body,
        }
    }

    /// The members a destruct of `group` spans: the group's, when it
    /// exists; else none (the caller's job, as before groups were kept).
    pub(super) fn group_destruct_members(&self, group: &str) -> Option<Vec<Proc>> {
        self.group_members(group)
    }

    /// The destruct of `group` completed.
    pub(super) fn group_destructed(&mut self, members: &BTreeSet<(String, u32)>) {
        let (gone, keep) = std::mem::take(&mut self.groups.list)
            .into_iter()
            .partition(|g| g.done && g.members == *members);
        self.groups.list = keep;
        for g in gone {
            if self.groups.retired.len() == RETIRED_GROUPS_KEPT {
                self.groups.retired.pop_front();
            }
            self.groups.retired.push_back(g);
        }
    }

    /// Who completes constructs and destructs from now on (default
    /// [`Grouping::Local`]); set before clients connect.
    pub fn set_grouping(&mut self, mode: Grouping) {
        self.groups.mode = mode;
    }

    /// Who completes constructs and destructs.
    pub(super) fn grouping(&self) -> Grouping {
        self.groups.mode
    }

    /// Collective `idx` is complete here: under [`Grouping::Host`], a
    /// construct asking for a context id or spanning nodes, or a destruct
    /// of a group the core knows, goes to the host (true). The host is
    /// given the group's id, its members as the first caller named them
    /// (sorted), and the first caller's attributes, then, as libpmix 4.2.2
    /// appends them, for a construct `pmix.sorted.parr` (true),
    /// `pmix.loc.col.st` (SUCCESS) and `pmix.grp.endpt` (the local
    /// members' committed data, in the form fence contributions take: a
    /// server of ours reads it back when the host returns it), for a
    /// destruct `pmix.loc.col.st`.
    pub(super) fn group_to_host(&mut self, idx: usize) -> bool {
        if self.groups.mode != Grouping::Host {
            return false;
        }
        let col = &self.collectives[idx];
        if !col.complete() {
            return false;
        }
        let status = Info::new("pmix.loc.col.st", Value::Status(codes::PMIX_SUCCESS));
        let construct = match col.kind {
            CollKind::GroupConstruct => true,
            CollKind::GroupDestruct => false,
            _ => return false,
        };
        let (group, given) = if construct {
            let Some(g) = self
                .pending_group(&col.expected)
                .map(|i| &self.groups.list[i])
            else {
                return false;
            };
            let local_only = info_true(&col.info, "pmix.grp.lcl");
            if local_only || !(g.want_ctxid || col.spans()) {
                return false;
            }
            (g.id.clone(), col.given())
        } else {
            let Some(g) = self
                .groups
                .list
                .iter()
                .find(|g| g.done && g.members == col.expected)
            else {
                return false;
            };
            (g.id.clone(), g.given.clone())
        };
        let col = self.collectives.remove(idx);
        let mut info = col.info.clone();
        if construct {
            info.push(Info::new("pmix.sorted.parr", Value::Bool(true)));
            info.push(status);
            if let Some(b) = self
                .arrived_contribution(&col.arrived)
                .filter(|b| !b.is_empty())
            {
                info.push(Info::new(
                    "pmix.grp.endpt",
                    Value::ByteObject(Box::new(Hex(b))),
                ));
            }
        } else {
            info.push(status);
        }
        let request = self.requests.connect(col);
        let e = if construct {
            HostEvent::GroupConstruct {
                request,
                group,
                procs: given,
                info,
            }
        } else {
            HostEvent::GroupDestruct {
                request,
                group,
                procs: given,
                info,
            }
        };
        self.out.push_back(Output::Host(e));
        true
    }

    /// The host's answer to [`HostEvent::GroupConstruct`] or
    /// [`HostEvent::GroupDestruct`]: its status and infos (the standard's
    /// `pmix_info_cbfunc_t`). A construct's success makes the group, with
    /// the context id the host gave (`pmix.grp.ctxid`, any unsigned
    /// number; none: NO_CONTEXT_ID), the members' data it returned
    /// (`pmix.grp.endpt`) stored, and answers every local member as the
    /// core would; another status is every local member's answer (to a
    /// 4.x client with NO_CONTEXT_ID after it, as libpmix 4.2.2's server
    /// sends a failure) and the construct is forgotten. A destruct's
    /// success ends the group; a failure leaves it. False (and nothing
    /// sent) for an id that is no group operation out with the host.
    pub fn group_done(&mut self, request: u64, status: i32, info: &[Info]) -> bool {
        let col = self
            .requests
            .take_connect(CollKind::GroupConstruct, request)
            .or_else(|| self.requests.take_connect(CollKind::GroupDestruct, request));
        let Some(col) = col else {
            tracing::warn!(target: "pmix_wire::server", request, "an answer for no group operation out with the host: ignored");
            return false;
        };
        if col.kind == CollKind::GroupDestruct {
            if status == codes::PMIX_SUCCESS {
                self.group_destructed(&col.expected);
            }
            for (conn, t, _) in col.arrived {
                self.reply(conn, t, &Reply::Status(status));
            }
            return true;
        }
        if status != codes::PMIX_SUCCESS {
            if let Some(i) = self.pending_group(&col.expected) {
                self.groups.list.remove(i);
            }
            for (conn, t, _) in col.arrived {
                let r = if self.client_major(conn) <= 4 {
                    Reply::Group {
                        status,
                        body: GroupReply::V4 {
                            ctxid: NO_CONTEXT_ID,
                        },
                    }
                } else {
                    Reply::Status(status)
                };
                self.reply(conn, t, &r);
            }
            return true;
        }
        let find = |k: &str| info_value(info, k);
        let ctxid = match find("pmix.grp.ctxid") {
            Some(Value::Size(n) | Value::Uint64(n)) => *n,
            Some(Value::Uint32(n)) => u64::from(*n),
            Some(Value::Uint16(n)) => u64::from(*n),
            Some(Value::Uint8(n)) => u64::from(*n),
            _ => NO_CONTEXT_ID,
        };
        if let Some(Value::ByteObject(b)) = find("pmix.grp.endpt") {
            if !self.absorb(&b.0) {
                tracing::warn!(target: "pmix_wire::server", request, "the host's pmix.grp.endpt does not read: its data is not stored");
            }
        }
        let ctxid = self.group_constructed(&col.expected, Some(ctxid));
        for (conn, t, (own, _)) in col.arrived {
            match self.fmt_of(conn) {
                Some(fmt) => {
                    let r = self.group_reply(conn, &fmt, &own, &col.expected, ctxid);
                    self.reply(conn, t, &r);
                }
                None => self.reply(conn, t, &Reply::Status(codes::PMIX_SUCCESS)),
            }
        }
        true
    }

    /// PMIx_Group_leave: `proc` is no longer a member of `group`; the
    /// others registered for it get PMIX_GROUP_LEFT (`pmix.evproc`,
    /// `pmix.grp.id`). NOT_FOUND when it is not a member of such a group.
    pub(super) fn group_leave(&mut self, proc: &Proc, group: &str) -> i32 {
        let me = name(proc);
        let Some(g) = self
            .groups
            .list
            .iter_mut()
            .find(|g| g.done && g.id == group && g.members.contains(&me))
        else {
            return codes::PMIX_ERR_NOT_FOUND;
        };
        g.members.remove(&me);
        g.data.remove(&me);
        let others: Vec<Proc> = g.members.iter().map(|(n, r)| Proc::new(n, *r)).collect();
        let info = vec![
            Info::new("pmix.evproc", Value::Proc(Box::new(proc.clone()))),
            Info::new("pmix.grp.id", Value::String(Some(group.into()))),
        ];
        self.deliver_to(&others, codes::PMIX_GROUP_LEFT, proc, info);
        codes::PMIX_SUCCESS
    }

    /// `proc` left without finalizing: every group it belongs to tells its
    /// other members (PMIX_GROUP_MEMBER_FAILED, the proc and the group id)
    /// and goes on without it.
    pub(super) fn group_member_lost(&mut self, proc: &Proc) {
        let me = name(proc);
        let hits: Vec<(String, Vec<Proc>)> = self
            .groups
            .list
            .iter()
            .filter(|g| g.done && g.members.contains(&me))
            .map(|g| {
                (
                    g.id.clone(),
                    g.members
                        .iter()
                        .filter(|m| **m != me)
                        .map(|(n, r)| Proc::new(n, *r))
                        .collect(),
                )
            })
            .collect();
        for (id, others) in hits {
            let info = vec![
                Info::new("pmix.evproc", Value::Proc(Box::new(proc.clone()))),
                Info::new("pmix.grp.id", Value::String(Some(id.as_str().into()))),
            ];
            self.deliver_to(&others, codes::PMIX_GROUP_MEMBER_FAILED, proc, info);
        }
        // it can take part in nothing more: the survivors' fences and
        // destruct span only them, and constructs waiting for it fail
        for g in self.groups.list.iter_mut().filter(|g| g.done) {
            g.members.remove(&me);
        }
        self.groups
            .list
            .retain(|g| g.done || !g.members.contains(&me));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(ranks: &[u32]) -> BTreeSet<(String, u32)> {
        ranks.iter().map(|r| ("j".to_string(), *r)).collect()
    }

    #[test]
    fn a_construct_completes_the_group_every_member_called() {
        let mut s = Server::new();
        let ask = [Info::new("pmix.grp.actxid", Value::Bool(true))];
        // "a" was left half-called (its construct failed); "b" has the
        // same members and every one of them called
        s.group_construct_called(&("j".into(), 0), "a", set(&[0, 1]), &[], &ask);
        s.group_construct_called(&("j".into(), 0), "b", set(&[0, 1]), &[], &ask);
        s.group_construct_called(&("j".into(), 1), "b", set(&[0, 1]), &[], &ask);
        // a caller that is not a member is not tracked
        s.group_construct_called(&("j".into(), 5), "c", set(&[0, 1]), &[], &ask);
        assert_eq!(s.group_constructed(&set(&[0, 1]), None), 1);
        assert_eq!(s.group_names(), vec!["b".to_string()]);
        // no pending construct of those members is complete any more
        assert_eq!(s.group_constructed(&set(&[0, 1]), None), NO_CONTEXT_ID);
        // the member that dies takes the half-called "a" with it
        s.group_member_lost(&Proc::new("j", 1));
        assert_eq!(s.group_members("b"), Some(vec![Proc::new("j", 0)]));
        assert!(s.groups.list.iter().all(|g| g.done));
    }
}
