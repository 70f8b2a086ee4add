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

#![forbid(unsafe_code)]

use super::{name, ConnId, ConnState, Format, GroupReply, Reply, Server, RANK_WILDCARD};
use pmix_types::status::codes;
use pmix_types::{Info, Proc, Value};
use std::collections::{BTreeSet, HashMap};

/// No context id (what libpmix's server answers when its host gave none).
pub const NO_CONTEXT_ID: u64 = u64::MAX;

#[derive(Debug, Clone)]
struct Group {
    id: String,
    members: BTreeSet<(String, u32)>,
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
                self.groups.list.push(Group {
                    id: group.to_string(),
                    members,
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
        let q = |k: &str| {
            quals
                .iter()
                .find(|i| i.key.as_bytes() == k.as_bytes())
                .map(|i| &i.value)
        };
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

    /// The construct over `members` completed: the group exists; its
    /// context id (NO_CONTEXT_ID unless asked for).
    pub(super) fn group_constructed(&mut self, members: &BTreeSet<(String, u32)>) -> u64 {
        // the pending construct every member called (one that failed,
        // with the same members, lacks the caller that never came)
        let Some(i) = self.groups.list.iter().position(|g| {
            !g.done && g.members == *members && g.members.iter().all(|m| g.data.contains_key(m))
        }) else {
            return NO_CONTEXT_ID;
        };
        let mut g = self.groups.list.remove(i);
        // a group id names one group: a new construct replaces the old
        self.groups.list.retain(|old| !(old.done && old.id == g.id));
        g.done = true;
        if g.want_ctxid {
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
        s.group_construct_called(&("j".into(), 0), "a", set(&[0, 1]), &ask);
        s.group_construct_called(&("j".into(), 0), "b", set(&[0, 1]), &ask);
        s.group_construct_called(&("j".into(), 1), "b", set(&[0, 1]), &ask);
        // a caller that is not a member is not tracked
        s.group_construct_called(&("j".into(), 5), "c", set(&[0, 1]), &ask);
        assert_eq!(s.group_constructed(&set(&[0, 1])), 1);
        assert_eq!(s.group_names(), vec!["b".to_string()]);
        // no pending construct of those members is complete any more
        assert_eq!(s.group_constructed(&set(&[0, 1])), NO_CONTEXT_ID);
        // the member that dies takes the half-called "a" with it
        s.group_member_lost(&Proc::new("j", 1));
        assert_eq!(s.group_members("b"), Some(vec![Proc::new("j", 0)]));
        assert!(s.groups.list.iter().all(|g| g.done));
    }
}
