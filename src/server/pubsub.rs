//! Publish / lookup / unpublish, with waiting lookups: kept by the core
//! itself (one node), or handed to the host ([`Publishing`]).

#![forbid(unsafe_code)]

use super::requests::{Asked, PubSubOp};
use super::{info_true, info_u32, ConnId, HostEvent, Output, Server};
use pmix_codec::msg::Reply;
use pmix_types::status::codes;
use pmix_types::{Info, PString, Pdata, Proc, Value};
use std::time::{Duration, Instant};

/// Who answers PMIx_Publish, PMIx_Lookup and PMIx_Unpublish
/// ([`Server::set_publishing`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Publishing {
    /// The core keeps what is published, and answers lookups (waiting
    /// ones too) from it: every job of this server sees it. What a
    /// server alone on one node (`pmixw run`) does. The default.
    #[default]
    Local,
    /// As `Local` for a job all of whose ranks are on this node; a job
    /// with ranks elsewhere ([`Server::set_nodes`]) is answered
    /// PMIX_ERR_NOT_SUPPORTED, as libpmix 4.2.2 answers under a host with
    /// no publish upcalls (its data could not be found from the other
    /// nodes).
    LocalJobsOnly,
    /// Every publish, lookup and unpublish goes to the host
    /// ([`HostEvent::Publish`], [`HostEvent::Lookup`],
    /// [`HostEvent::Unpublish`]) with the client's infos, then
    /// `pmix.euid` (what libpmix 4.2.2 hands its host); the host answers
    /// ([`Server::publish_done`], [`Server::lookup_done`],
    /// [`Server::unpublish_done`]) and keeps the data. A waiting lookup
    /// (`pmix.wait`, `pmix.timeout`) is the host's to hold.
    Host,
    /// As `Host`, but what the host answers PMIX_ERR_NOT_SUPPORTED for a
    /// job all of whose ranks are on this node the core then answers
    /// itself, as under `Local` (a host that declines publishing is as
    /// one without it: the C library's choice, for Slurm's slurmstepd,
    /// whose upcalls all answer NOT_SUPPORTED). A job with ranks
    /// elsewhere gets the host's NOT_SUPPORTED.
    HostOrLocal,
}

/// A LOOKUP waiting (`pmix.wait`) for keys to be published.
struct PendingLookup {
    conn: ConnId,
    tag: u32,
    keys: Vec<String>,
    deadline: Instant,
}

/// The publish/lookup area's state: what is published, and the lookups
/// waiting for it.
#[derive(Default)]
pub(super) struct PubSub {
    /// Key → what was published under it, in publishing order.
    published: Vec<(String, Pdata)>,
    lookups: Vec<PendingLookup>,
    /// Who answers.
    mode: Publishing,
}

/// Where the host's answer goes.
#[derive(PartialEq)]
enum Answered {
    /// To the caller (connection, tag).
    To(ConnId, u32),
    /// Nowhere: the core answered the caller itself (the host declined).
    Here,
    /// Nowhere: no such request out with the host.
    Unknown,
}

/// Where one request goes.
enum Route {
    Local,
    Refuse,
    Host,
}

impl PubSub {
    /// When the first waiting lookup times out.
    pub(super) fn next_deadline(&self) -> Option<Instant> {
        self.lookups.iter().map(|l| l.deadline).min()
    }

    /// The lookups whose time has come, taken: (connection, tag) to answer.
    pub(super) fn take_due(&mut self, now: Instant) -> Vec<(ConnId, u32)> {
        let (due, keep): (Vec<_>, Vec<_>) = self.lookups.drain(..).partition(|l| l.deadline <= now);
        self.lookups = keep;
        due.into_iter().map(|l| (l.conn, l.tag)).collect()
    }

    /// Connection `id` closed: its lookups are no longer waited for.
    pub(super) fn drop_conn(&mut self, id: ConnId) {
        self.lookups.retain(|l| l.conn != id);
    }
}

impl Server {
    pub(super) fn answer_lookup(&mut self, id: ConnId, t: u32, keys: &[String]) -> bool {
        let found: Vec<Pdata> = keys
            .iter()
            .filter_map(|k| self.pubsub.published.iter().find(|(pk, _)| pk == k))
            .map(|(_, d)| d.clone())
            .collect();
        if found.len() < keys.len() || keys.is_empty() {
            return false;
        }
        self.reply(
            id,
            t,
            &Reply::Lookup {
                status: codes::PMIX_SUCCESS,
                data: found,
            },
        );
        true
    }

    pub(super) fn resolve_lookups(&mut self) {
        let pending = std::mem::take(&mut self.pubsub.lookups);
        for l in pending {
            if !self.answer_lookup(l.conn, l.tag, &l.keys) {
                self.pubsub.lookups.push(l);
            }
        }
    }

    /// Who answers publish, lookup and unpublish from now on (default
    /// [`Publishing::Local`]); set before clients connect.
    pub fn set_publishing(&mut self, mode: Publishing) {
        self.pubsub.mode = mode;
    }

    /// Where a request of `proc`'s goes.
    fn route_pubsub(&self, proc: &Proc) -> Route {
        match self.pubsub.mode {
            Publishing::Local => Route::Local,
            Publishing::Host | Publishing::HostOrLocal => Route::Host,
            Publishing::LocalJobsOnly if self.spans_nodes(proc) => Route::Refuse,
            Publishing::LocalJobsOnly => Route::Local,
        }
    }

    /// Whether `proc`'s job has ranks on other nodes.
    fn spans_nodes(&self, proc: &Proc) -> bool {
        self.jobs
            .get(&proc.nspace.to_string())
            .is_some_and(|j| j.ranks.iter().any(|r| r.elsewhere))
    }

    /// A PUBLISH, LOOKUP or UNPUBLISH (`asked`, from a client of uid
    /// `uid`), where [`Publishing`] sends it. The host is given the
    /// client's infos, then `pmix.euid` (as libpmix 4.2.2's server
    /// appends it).
    pub(super) fn pubsub_request(&mut self, uid: u32, asked: Asked) {
        let (id, t) = (asked.conn, asked.tag);
        match self.route_pubsub(&asked.proc) {
            Route::Local => self.answer_here(asked),
            Route::Refuse => self.reply(id, t, &Reply::Status(codes::PMIX_ERR_NOT_SUPPORTED)),
            Route::Host => {
                let (op, proc, keys) = (asked.op, asked.proc.clone(), asked.keys.clone());
                let mut info = asked.info.clone();
                info.push(Info::new("pmix.euid", Value::Uint32(uid)));
                let request = self.requests.pubsub(asked);
                let e = match op {
                    PubSubOp::Publish => HostEvent::Publish {
                        request,
                        proc,
                        info,
                    },
                    PubSubOp::Lookup => HostEvent::Lookup {
                        request,
                        proc,
                        keys,
                        info,
                    },
                    PubSubOp::Unpublish => HostEvent::Unpublish {
                        request,
                        proc,
                        keys,
                        info,
                    },
                };
                self.out.push_back(Output::Host(e));
            }
        }
    }

    /// Answer `a` from the core's own store.
    fn answer_here(&mut self, a: Asked) {
        match a.op {
            PubSubOp::Publish => self.publish_here(a.conn, a.tag, &a.proc, a.info),
            PubSubOp::Lookup => self.lookup_here(a.conn, a.tag, a.keys, &a.info, a.at),
            PubSubOp::Unpublish => self.unpublish_here(a.conn, a.tag, &a.proc, &a.keys),
        }
    }

    /// Where the host's answer `status` to its `op` `request` goes.
    fn answered(&mut self, op: PubSubOp, request: u64, status: i32) -> Answered {
        let Some(a) = self.requests.take_pubsub(op, request) else {
            tracing::warn!(target: "pmix_wire::server", request, ?op, "an answer for no {op:?} request out with the host: ignored");
            return Answered::Unknown;
        };
        let declined = status == codes::PMIX_ERR_NOT_SUPPORTED
            && self.pubsub.mode == Publishing::HostOrLocal
            && !self.spans_nodes(&a.proc);
        if !declined {
            return Answered::To(a.conn, a.tag);
        }
        self.answer_here(a);
        Answered::Here
    }

    /// Answer the caller of the host's `op` `request` with `status`
    /// (a lookup's success with `data`): false when it is no such
    /// request out with the host (nothing sent).
    fn host_answer(&mut self, op: PubSubOp, request: u64, status: i32, data: Vec<Pdata>) -> bool {
        let (conn, t) = match self.answered(op, request, status) {
            Answered::To(conn, t) => (conn, t),
            other => return other == Answered::Here,
        };
        let r = if op == PubSubOp::Lookup && status == codes::PMIX_SUCCESS {
            Reply::Lookup { status, data }
        } else {
            Reply::Status(status)
        };
        self.reply(conn, t, &r);
        true
    }

    /// The host's answer to [`HostEvent::Publish`]: the client's status.
    /// False (and nothing sent) for an id that is no publish out with
    /// the host, or whose caller has gone.
    pub fn publish_done(&mut self, request: u64, status: i32) -> bool {
        self.host_answer(PubSubOp::Publish, request, status, Vec::new())
    }

    /// The host's answer to [`HostEvent::Lookup`]: its status and, on
    /// success, the data found (publisher, key, value each), which the
    /// client gets in this order. False (and nothing sent) for an id that
    /// is no lookup out with the host, or whose caller has gone.
    pub fn lookup_done(&mut self, request: u64, status: i32, data: Vec<Pdata>) -> bool {
        self.host_answer(PubSubOp::Lookup, request, status, data)
    }

    /// The host's answer to [`HostEvent::Unpublish`]: the client's
    /// status. False (and nothing sent) for an id that is no unpublish
    /// out with the host, or whose caller has gone.
    pub fn unpublish_done(&mut self, request: u64, status: i32) -> bool {
        self.host_answer(PubSubOp::Unpublish, request, status, Vec::new())
    }

    /// PUBLISH here: `pmix.*` keys are not published; a key published again
    /// replaces the older value. Waiting lookups are retried.
    fn publish_here(&mut self, id: ConnId, t: u32, proc: &Proc, info: Vec<Info>) {
        for i in info {
            let k = i.key.to_string();
            if k.starts_with("pmix.") {
                continue;
            }
            self.pubsub.published.retain(|(pk, _)| *pk != k);
            self.pubsub.published.push((
                k.clone(),
                Pdata {
                    proc: proc.clone(),
                    key: i.key.clone(),
                    value: i.value.clone(),
                },
            ));
        }
        self.reply(id, t, &Reply::Status(codes::PMIX_SUCCESS));
        self.resolve_lookups();
    }

    /// LOOKUP here: answered now, or (with `pmix.wait`) when every key is
    /// published or its `pmix.timeout` expires.
    fn lookup_here(&mut self, id: ConnId, t: u32, keys: Vec<String>, info: &[Info], now: Instant) {
        if !self.answer_lookup(id, t, &keys) {
            if info_true(info, "pmix.wait") {
                let wait = info_u32(info, "pmix.timeout")
                    .map_or(Duration::from_secs(3600), |s| Duration::from_secs(s.into()));
                self.pubsub.lookups.push(PendingLookup {
                    conn: id,
                    tag: t,
                    keys,
                    deadline: now + wait,
                });
            } else {
                self.reply(id, t, &Reply::Status(codes::PMIX_ERR_NOT_FOUND));
            }
        }
    }

    /// UNPUBLISH here: the caller's keys (all of them if none named).
    fn unpublish_here(&mut self, id: ConnId, t: u32, proc: &Proc, keys: &[String]) {
        self.pubsub
            .published
            .retain(|(k, d)| !(d.proc == *proc && (keys.is_empty() || keys.contains(k))));
        self.reply(id, t, &Reply::Status(codes::PMIX_SUCCESS));
    }
}

impl Asked {
    /// A client's request (connection, tag) of `proc`'s, at `now`: its
    /// keys (NULL ones left out) and infos.
    pub(super) fn new(
        op: PubSubOp,
        (conn, tag): (ConnId, u32),
        proc: &Proc,
        keys: Vec<Option<PString>>,
        info: Vec<Info>,
        now: Instant,
    ) -> Asked {
        Asked {
            op,
            conn,
            tag,
            proc: proc.clone(),
            keys: keys.into_iter().flatten().map(|k| k.to_string()).collect(),
            info,
            at: now,
        }
    }
}
