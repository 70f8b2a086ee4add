//! PMIx_Query_info on one node: the standard's `PMIX_QUERY_*` keys a
//! single-node host can answer, with their qualifiers (`pmix.nspace`,
//! `pmix.rank`, `pmix.procid`, `pmix.pset.nm`, `pmix.grp.id`), and any
//! job-level key of a namespace (`pmix.job.size`, … with a `pmix.nspace`
//! qualifier) as the REQ reply holds it. The reply is libpmix 4.2.2's
//! flat form: STATUS, then one INFO per answer, keyed by what was asked.
//! Memory usage is answered when the host gave a probe
//! ([`Server::set_memory_probe`]). Keys no local host can answer (queues,
//! allocations, …) make
//! the status NOT_SUPPORTED when nothing else was answered and
//! PARTIAL_SUCCESS when something was.

#![forbid(unsafe_code)]

use super::{pstr, Reply, Server};
use pmix_types::status::codes;
use pmix_types::{DataArray, DataType, Info, PString, Proc, ProcInfo, Query, Value};
use std::collections::{BTreeMap, HashMap};

/// How the host measures memory (MB): of a rank's process by pid, or of
/// the server itself (None). The core does no I/O of its own.
pub type MemoryProbe = Box<dyn Fn(Option<u32>) -> Option<f32> + Send>;

/// What the host told the core about a rank's process.
#[derive(Clone, Debug, Default)]
pub struct ProcRecord {
    /// The process id the host started.
    pub pid: u32,
    /// The path of the executable it runs.
    pub executable: String,
    /// Its exit status (128 + signal for a signal), once it ended.
    pub exit: Option<i32>,
}

/// `pmix_proc_state_t` values (pmix_common.h 4.2.2).
mod state {
    pub const RUNNING: u8 = 7;
    pub const TERMINATED: u8 = 20;
    pub const ABORTED: u8 = 52;
}

/// The query keys answered here (PMIX_QUERY_SUPPORTED_KEYS).
pub const SUPPORTED: &[&str] = &[
    "pmix.qry.ns",
    "pmix.qry.nsinfo",
    "pmix.qry.jst",
    "pmix.qry.ptable",
    "pmix.qry.lptable",
    "pmix.qry.psetnum",
    "pmix.qry.psets",
    "pmix.qry.pmems",
    "pmix.qry.pgrpnum",
    "pmix.qry.pgrp",
    "pmix.qry.pgrpmems",
    "pmix.qry.spawn",
    "pmix.qry.debug",
    "pmix.qry.keys",
    "pmix.qry.quals",
    "pmix.qry.attrs",
    "pmix.host.fns",
    "pmix.qry.mem",
];

/// An attribute a function honours: name, key, type, description.
type Attr = (&'static str, &'static str, DataType, &'static str);

/// The PMIx functions this host serves, each with the attributes it
/// honours: (attribute name, key, type, description). Answers
/// PMIX_HOST_FUNCTIONS and PMIX_QUERY_ATTRIBUTE_SUPPORT.
const HOST_FUNCTIONS: &[(&str, &[Attr])] = &[
    ("PMIx_Abort", &[]),
    ("PMIx_Commit", &[]),
    (
        "PMIx_Fence",
        &[(
            "PMIX_COLLECT_DATA",
            "pmix.collect",
            DataType::Bool,
            "collect data",
        )],
    ),
    (
        "PMIx_Get",
        &[
            (
                "PMIX_TIMEOUT",
                "pmix.timeout",
                DataType::Int,
                "seconds to wait for the data",
            ),
            (
                "PMIX_IMMEDIATE",
                "pmix.immediate",
                DataType::Bool,
                "do not wait for the data",
            ),
        ],
    ),
    ("PMIx_Publish", &[]),
    (
        "PMIx_Lookup",
        &[
            (
                "PMIX_WAIT",
                "pmix.wait",
                DataType::Bool,
                "wait until published",
            ),
            (
                "PMIX_TIMEOUT",
                "pmix.timeout",
                DataType::Int,
                "seconds to wait",
            ),
        ],
    ),
    ("PMIx_Unpublish", &[]),
    ("PMIx_Spawn", &[]),
    ("PMIx_Connect", &[]),
    ("PMIx_Disconnect", &[]),
    ("PMIx_Notify_event", &[]),
    (
        "PMIx_Query_info",
        &[
            (
                "PMIX_NSPACE",
                "pmix.nspace",
                DataType::String,
                "qualifier: namespace",
            ),
            (
                "PMIX_PROCID",
                "pmix.procid",
                DataType::Proc,
                "qualifier: process",
            ),
            (
                "PMIX_PSET_NAME",
                "pmix.pset.nm",
                DataType::String,
                "qualifier: process set",
            ),
            (
                "PMIX_GROUP_ID",
                "pmix.grp.id",
                DataType::String,
                "qualifier: group",
            ),
        ],
    ),
    ("PMIx_Log", &[]),
    (
        "PMIx_Job_control",
        &[
            (
                "PMIX_JOB_CTRL_KILL",
                "pmix.jctrl.kill",
                DataType::Bool,
                "SIGKILL the targets",
            ),
            (
                "PMIX_JOB_CTRL_TERMINATE",
                "pmix.jctrl.term",
                DataType::Bool,
                "SIGTERM the targets",
            ),
            (
                "PMIX_JOB_CTRL_PAUSE",
                "pmix.jctrl.pause",
                DataType::Bool,
                "SIGSTOP the targets",
            ),
            (
                "PMIX_JOB_CTRL_RESUME",
                "pmix.jctrl.resume",
                DataType::Bool,
                "SIGCONT the targets",
            ),
            (
                "PMIX_JOB_CTRL_SIGNAL",
                "pmix.jctrl.sig",
                DataType::Int,
                "send this signal",
            ),
            (
                "PMIX_JOB_CTRL_CHECKPOINT",
                "pmix.jctrl.ckpt",
                DataType::String,
                "checkpoint event with this id",
            ),
            (
                "PMIX_JOB_CTRL_CHECKPOINT_EVENT",
                "pmix.jctrl.ckptev",
                DataType::Bool,
                "checkpoint by event",
            ),
            (
                "PMIX_JOB_CTRL_CHECKPOINT_SIGNAL",
                "pmix.jctrl.ckptsig",
                DataType::Int,
                "checkpoint by this signal",
            ),
        ],
    ),
    (
        "PMIx_Group_construct",
        &[
            (
                "PMIX_GROUP_ASSIGN_CONTEXT_ID",
                "pmix.grp.actxid",
                DataType::Bool,
                "assign a context id",
            ),
            (
                "PMIX_GROUP_INFO",
                "pmix.grp.info",
                DataType::DataArray,
                "data for the other members",
            ),
            (
                "PMIX_GROUP_LOCAL_CID",
                "pmix.grp.lclid",
                DataType::Size,
                "this member's local context id",
            ),
        ],
    ),
    ("PMIx_Group_destruct", &[]),
    ("PMIx_Group_leave", &[]),
    ("PMIx_Get_credential", &[]),
    ("PMIx_Validate_credential", &[]),
];

/// PMIX_QUERY_ATTRIBUTE_SUPPORT for the functions a qualifier lists
/// (`pmix.host.fns` or `pmix.srvr.fns`, comma-separated; none: all): an
/// INFO per function, keyed by its name, holding its REGATTRs.
fn attribute_support(q: &Query) -> Option<Value> {
    let asked = qual_str(q, "pmix.host.fns").or_else(|| qual_str(q, "pmix.srvr.fns"));
    let wanted: Option<Vec<&str>> = asked
        .as_deref()
        .map(|a| a.split(',').map(str::trim).collect());
    let mut v = Vec::new();
    for (func, attrs) in HOST_FUNCTIONS {
        if wanted.as_ref().is_some_and(|w| !w.contains(func)) {
            continue;
        }
        let regs = attrs
            .iter()
            .map(|(name, key, ty, desc)| {
                Value::RegAttr(Box::new(pmix_types::RegAttr {
                    name: Some(PString::from(*name)),
                    string: pmix_types::Key::from(*key),
                    ty: *ty as u16,
                    description: vec![PString::from(*desc)],
                }))
            })
            .collect();
        v.push(Value::Info(Box::new(Info::new(
            func,
            array(DataType::RegAttr, regs),
        ))));
    }
    (!v.is_empty()).then(|| array(DataType::Info, v))
}

fn qual<'a>(q: &'a Query, key: &str) -> Option<&'a Value> {
    q.qualifiers
        .iter()
        .find(|i| i.key.as_bytes() == key.as_bytes())
        .map(|i| &i.value)
}

fn qual_str(q: &Query, key: &str) -> Option<String> {
    match qual(q, key)? {
        Value::String(Some(s)) => Some(s.to_string()),
        Value::ProcNspace(n) => Some(n.to_string()),
        _ => None,
    }
}

fn array(t: DataType, v: Vec<Value>) -> Value {
    match DataArray::new(t, v) {
        Ok(a) => Value::DataArray(Box::new(a)),
        Err(_) => Value::Undef,
    }
}

/// The queries area's state: what the host told the core of its
/// processes, process sets and memory, which only queries read.
#[derive(Default)]
pub(super) struct Queries {
    /// What the host said of each rank's process.
    procs: HashMap<(String, u32), ProcRecord>,
    /// The executable of each namespace's ranks.
    executables: HashMap<String, String>,
    /// Process sets the host defined (name → members); not groups.
    psets: BTreeMap<String, Vec<Proc>>,
    /// The host's memory probe for PMIX_QUERY_MEMORY_USAGE.
    memory_probe: Option<MemoryProbe>,
    /// The last [`RETIRED_KEPT`] jobs deregistered, oldest first.
    retired: std::collections::VecDeque<Retired>,
    /// Who answers what the core cannot.
    mode: Querying,
}

/// How many deregistered jobs the namespace queries still list
/// (`pmix.qry.ns`, `pmix.qry.nsinfo`, `pmix.qry.jst`): a persistent server
/// (`pmixw dvm`) forgets an ended job's data but answers for its last
/// 1024 jobs, a few dozen bytes each; older ones are unknown.
pub const RETIRED_KEPT: usize = 1024;

/// What the namespace queries say of a deregistered job.
#[derive(Clone, Debug)]
struct Retired {
    nspace: String,
    nprocs: u32,
    /// PMIX_QUERY_JOB_STATUS's answer when it ended.
    status: i32,
}

/// Who answers a PMIx_Query_info the core cannot answer in full
/// ([`Server::set_querying`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Querying {
    /// The core answers every query itself: what it cannot answer is
    /// NOT_FOUND, NOT_SUPPORTED or PARTIAL_SUCCESS. The default.
    #[default]
    Local,
    /// A query the core answers in full it answers; one with a key it
    /// cannot answer, or with `pmix.qry.rfsh` (refresh the cache) true in
    /// a query's qualifiers, goes whole to the host
    /// ([`HostEvent::Query`](crate::server::HostEvent::Query): every query the client sent, as libpmix
    /// 4.2.2's server hands them all to its host's query when one misses
    /// its own store), which answers with [`Server::query_done`]: its
    /// status and infos are the client's answer.
    Host,
}

impl Queries {
    /// The host reported that rank `me`'s process ended.
    pub(super) fn has_exited(&self, me: &(String, u32)) -> bool {
        self.procs.get(me).is_some_and(|p| p.exit.is_some())
    }
}

/// The answer to one key of one query.
enum Answer {
    Value(Value),
    /// The key is known, the thing it names is not (an unknown namespace).
    NotFound,
    Unsupported,
}

impl Server {
    /// Record a rank's process (pid, executable) for the process tables;
    /// [`Server::set_rank_pid`] does this and more.
    #[deprecated(note = "use set_rank_pid: it records the pid for the process tables too")]
    pub fn set_proc_pid(&mut self, nspace: &str, rank: u32, pid: u32) {
        self.set_rank_pid(nspace, rank, pid);
    }

    /// The job `ns` of `nprocs` ranks is deregistered: its process records
    /// go, its name, size and status are kept among the last
    /// [`RETIRED_KEPT`].
    pub(super) fn retire_job(&mut self, ns: &str, nprocs: u32) {
        let status = match self.job_status(ns) {
            Some(Value::Status(s)) => s,
            _ => codes::PMIX_SUCCESS,
        };
        let q = &mut self.queries;
        q.procs.retain(|(n, _), _| n != ns);
        q.executables.remove(ns);
        q.retired.retain(|r| r.nspace != ns);
        if q.retired.len() >= RETIRED_KEPT {
            q.retired.pop_front();
        }
        q.retired.push_back(Retired {
            nspace: ns.to_string(),
            nprocs,
            status,
        });
    }

    /// The namespaces the queries list, registered or retired, sorted,
    /// with their sizes.
    fn listed_nspaces(&self) -> Vec<(&str, u32)> {
        let mut v: BTreeMap<&str, u32> = self
            .queries
            .retired
            .iter()
            .map(|r| (r.nspace.as_str(), r.nprocs))
            .collect();
        for (n, j) in &self.jobs {
            v.insert(n.as_str(), j.spec.nprocs);
        }
        v.into_iter().collect()
    }

    /// The process tables' entry of a rank: its pid (and the job's executable).
    pub(super) fn record_proc_pid(&mut self, nspace: &str, rank: u32, pid: u32) {
        let r = self
            .queries
            .procs
            .entry((nspace.to_string(), rank))
            .or_default();
        r.pid = pid;
        if r.executable.is_empty() {
            r.executable = self
                .queries
                .executables
                .get(nspace)
                .cloned()
                .unwrap_or_default();
        }
    }

    /// The executable every rank of `nspace` runs (for the process tables).
    pub fn set_executable(&mut self, nspace: &str, exe: &str) {
        self.queries
            .executables
            .insert(nspace.to_string(), exe.to_string());
        for ((ns, _), r) in self.queries.procs.iter_mut() {
            if ns == nspace {
                r.executable = exe.to_string();
            }
        }
    }

    /// Let PMIX_QUERY_MEMORY_USAGE be answered: `probe(Some(pid))` is a
    /// rank's resident memory in MB, `probe(None)` the server's.
    pub fn set_memory_probe(&mut self, probe: MemoryProbe) {
        self.queries.memory_probe = Some(probe);
    }

    /// PMIX_QUERY_MEMORY_USAGE for the ranks the qualifiers name (a
    /// namespace, `pmix.rank` in it, or `pmix.procid`; none: every rank
    /// here): PMIX_DAEMON_MEMORY and PMIX_CLIENT_AVG_MEMORY, in MB.
    fn memory_usage(&self, q: &Query) -> Answer {
        let Some(probe) = &self.queries.memory_probe else {
            return Answer::Unsupported;
        };
        let ns = Self::query_nspace(q);
        let rank = match qual(q, "pmix.rank").or_else(|| qual(q, "pmix.procid")) {
            Some(Value::ProcRank(r)) | Some(Value::Uint32(r)) => Some(*r),
            Some(Value::Proc(p)) => Some(p.rank),
            _ => None,
        }
        .filter(|r| *r != super::RANK_WILDCARD);
        if ns.as_ref().is_some_and(|n| !self.jobs.contains_key(n)) {
            return Answer::NotFound;
        }
        let sizes: Vec<f32> = self
            .queries
            .procs
            .iter()
            .filter(|((n, r), rec)| {
                ns.as_ref().is_none_or(|x| x == n)
                    && rank.is_none_or(|x| x == *r)
                    && rec.exit.is_none()
                    && rec.pid > 0
            })
            .filter_map(|(_, rec)| probe(Some(rec.pid)))
            .collect();
        let avg = if sizes.is_empty() {
            0.0
        } else {
            sizes.iter().sum::<f32>() / sizes.len() as f32
        };
        let me = probe(None).unwrap_or(0.0);
        Answer::Value(array(
            DataType::Info,
            vec![
                Value::Info(Box::new(Info::new(
                    "pmix.dmn.mem",
                    Value::Float(pmix_types::F32(me)),
                ))),
                Value::Info(Box::new(Info::new(
                    "pmix.cl.mem.avg",
                    Value::Float(pmix_types::F32(avg)),
                ))),
            ],
        ))
    }

    /// A rank's process ended with this status (128 + signal for a
    /// signal); a rank that had finalized and closed every connection is
    /// now gone ([`Server::set_rank_pid`]).
    pub fn set_proc_exit(&mut self, nspace: &str, rank: u32, status: i32) {
        self.queries
            .procs
            .entry((nspace.to_string(), rank))
            .or_default()
            .exit = Some(status);
        // a rank waiting on its launched process is now gone
        self.rank_exited(nspace, rank);
    }

    /// PMIx_server_define_process_set: the host names a process set
    /// (as prterun's `--pset` does); it answers PMIX_QUERY_NUM_PSETS,
    /// PMIX_QUERY_PSET_NAMES and PMIX_QUERY_PSET_MEMBERSHIP. A name
    /// defined again is replaced.
    pub fn define_pset(&mut self, name: &str, members: Vec<Proc>) {
        self.queries.psets.insert(name.to_string(), members);
    }

    /// PMIx_server_delete_process_set.
    pub fn delete_pset(&mut self, name: &str) {
        self.queries.psets.remove(name);
    }

    /// The process sets the host defined, sorted; groups are not among
    /// them.
    fn pset_names(&self) -> Vec<String> {
        self.queries.psets.keys().cloned().collect()
    }

    /// A process set's members.
    fn pset_members(&self, name: &str) -> Option<Vec<Proc>> {
        self.queries.psets.get(name).cloned()
    }

    /// The namespaces a query names: `pmix.nspace`, or that of `pmix.procid`.
    fn query_nspace(q: &Query) -> Option<String> {
        qual_str(q, "pmix.nspace").or_else(|| match qual(q, "pmix.procid") {
            Some(Value::Proc(p)) => Some(p.nspace.to_string()),
            _ => None,
        })
    }

    fn proc_table(&self, ns: &str) -> Option<Value> {
        let j = self.jobs.get(ns)?;
        let host = j.spec.hostname.clone();
        let v = (0..j.spec.nprocs)
            .map(|r| {
                let rec = self
                    .queries
                    .procs
                    .get(&(ns.to_string(), r))
                    .cloned()
                    .unwrap_or_default();
                let state = match rec.exit {
                    None => state::RUNNING,
                    Some(0) => state::TERMINATED,
                    Some(_) => state::ABORTED,
                };
                Value::ProcInfo(Box::new(ProcInfo {
                    proc: Proc::new(ns, r),
                    hostname: Some(PString::from(host.as_str())),
                    executable_name: Some(PString::from(rec.executable.as_str())),
                    pid: rec.pid,
                    exit_code: rec.exit.unwrap_or(0),
                    state,
                }))
            })
            .collect();
        Some(array(DataType::ProcInfo, v))
    }

    /// A job's status: SUCCESS while no rank has failed, else
    /// PMIX_ERR_PROC_ABORTED (PMIX_QUERY_JOB_STATUS is a pmix_status_t).
    fn job_status(&self, ns: &str) -> Option<Value> {
        if !self.jobs.contains_key(ns) {
            let r = self.queries.retired.iter().rev().find(|r| r.nspace == ns)?;
            return Some(Value::Status(r.status));
        }
        let failed = self
            .queries
            .procs
            .iter()
            .any(|((n, _), r)| n == ns && r.exit.is_some_and(|e| e != 0));
        Some(Value::Status(if failed {
            super::jobctl::PMIX_ERR_PROC_ABORTED
        } else {
            codes::PMIX_SUCCESS
        }))
    }

    fn answer_key(&self, q: &Query, key: &str) -> Answer {
        let ns = Self::query_nspace(q);
        let need_ns = |f: &dyn Fn(&str) -> Option<Value>| match &ns {
            Some(n) => f(n).map_or(Answer::NotFound, Answer::Value),
            None => Answer::NotFound,
        };
        match key {
            "pmix.qry.ns" => {
                let list: Vec<&str> = self.listed_nspaces().into_iter().map(|(n, _)| n).collect();
                Answer::Value(pstr(&list.join(",")))
            }
            "pmix.qry.nsinfo" => {
                let v = self
                    .listed_nspaces()
                    .into_iter()
                    .filter(|(n, _)| ns.as_ref().is_none_or(|x| x == n))
                    .map(|(n, size)| {
                        Value::Info(Box::new(Info::new(
                            "pmix.qry.nsinfo",
                            array(
                                DataType::Info,
                                vec![
                                    Value::Info(Box::new(Info::new("pmix.nspace", pstr(n)))),
                                    Value::Info(Box::new(Info::new(
                                        "pmix.job.size",
                                        Value::Uint32(size),
                                    ))),
                                ],
                            ),
                        )))
                    })
                    .collect();
                Answer::Value(array(DataType::Info, v))
            }
            "pmix.qry.jst" => need_ns(&|n| self.job_status(n)),
            // one node: the local table is the table
            "pmix.qry.ptable" | "pmix.qry.lptable" => need_ns(&|n| self.proc_table(n)),
            // process sets are the launcher's, not groups (prterun 5.0.11:
            // spec-notes/server.md, "Process sets"); `pmixw run` defines
            // none, and Open MPI adds mpi://WORLD and mpi://SELF itself
            "pmix.qry.psetnum" => Answer::Value(Value::Size(self.pset_names().len() as u64)),
            "pmix.qry.psets" => Answer::Value(match self.pset_names() {
                n if n.is_empty() => Value::String(None),
                n => pstr(&n.join(",")),
            }),
            "pmix.qry.pgrpnum" => Answer::Value(Value::Size(self.group_names().len() as u64)),
            "pmix.qry.pgrp" => Answer::Value(array(
                DataType::String,
                self.group_names().iter().map(|s| pstr(s)).collect(),
            )),
            "pmix.qry.pmems" => {
                match qual_str(q, "pmix.pset.nm").and_then(|p| self.pset_members(&p)) {
                    Some(m) => Answer::Value(array(
                        DataType::Proc,
                        m.into_iter().map(|p| Value::Proc(Box::new(p))).collect(),
                    )),
                    None => Answer::NotFound,
                }
            }
            "pmix.qry.pgrpmems" => {
                let g = qual_str(q, "pmix.grp.id").or_else(|| qual_str(q, "pmix.pset.nm"));
                match g.and_then(|g| self.group_members(&g)) {
                    Some(m) => Answer::Value(array(
                        DataType::Proc,
                        m.into_iter().map(|p| Value::Proc(Box::new(p))).collect(),
                    )),
                    None => Answer::NotFound,
                }
            }
            // PMIx_Spawn honours the apps (cmd, argv, env, cwd, maxprocs) and
            // no spawn attribute; no debugger attribute is supported
            "pmix.qry.spawn" | "pmix.qry.debug" => Answer::Value(pstr("")),
            "pmix.qry.keys" => Answer::Value(pstr(&SUPPORTED.join(","))),
            "pmix.qry.mem" => self.memory_usage(q),
            "pmix.host.fns" => {
                let f: Vec<&str> = HOST_FUNCTIONS.iter().map(|(f, _)| *f).collect();
                Answer::Value(pstr(&f.join(",")))
            }
            "pmix.qry.attrs" => attribute_support(q).map_or(Answer::NotFound, Answer::Value),
            // PMIX_QUERY_SUPPORTED_QUALIFIERS under its string through 6.1
            // and 7.0's (attrs::RENAMED_IN_7); the answer goes under the
            // string asked
            "pmix.qry.quals" | "pmix.qry.supqual" => Answer::Value(pstr(
                "pmix.nspace,pmix.rank,pmix.procid,pmix.pset.nm,pmix.grp.id",
            )),
            k if k.starts_with("pmix.qry.") => Answer::Unsupported,
            // a job-level key of the named namespace, as REQ gives it
            k => match &ns {
                Some(n) => {
                    let fmt = pmix_codec::Format::V41;
                    match self.job_info(&fmt, n) {
                        Some(Reply::JobInfo { kvals, .. }) => kvals
                            .into_iter()
                            .find(|kv| {
                                kv.key
                                    .as_ref()
                                    .is_some_and(|s| s.as_bytes() == k.as_bytes())
                            })
                            .map_or(Answer::Unsupported, |kv| Answer::Value(kv.value)),
                        _ => Answer::NotFound,
                    }
                }
                None => Answer::Unsupported,
            },
        }
    }

    /// Who answers the queries the core cannot (default
    /// [`Querying::Local`]).
    pub fn set_querying(&mut self, mode: Querying) {
        self.queries.mode = mode;
    }

    /// A QUERY of `proc`'s on connection `id` (tag `t`): answered here,
    /// or, under [`Querying::Host`], handed to the host when the core
    /// cannot answer every key or a query asks for a refresh.
    pub(super) fn query_request(
        &mut self,
        id: super::ConnId,
        t: u32,
        proc: Proc,
        queries: Vec<Query>,
    ) {
        let r = self.query(&queries);
        let full = matches!(
            r,
            Reply::Query {
                status: codes::PMIX_SUCCESS,
                ..
            }
        );
        let refresh = queries.iter().any(|q| {
            q.qualifiers.iter().any(|i| {
                i.key.as_bytes() == b"pmix.qry.rfsh" && !matches!(i.value, Value::Bool(false))
            })
        });
        if self.queries.mode == Querying::Host && (!full || refresh) {
            let request = self.requests.op(super::requests::HostOp::Query, (id, t));
            self.out
                .push_back(super::Output::Host(super::HostEvent::Query {
                    request,
                    requester: proc,
                    queries,
                }));
            return;
        }
        self.reply(id, t, &r);
    }

    /// The host's answer to [`HostEvent::Query`](crate::server::HostEvent::Query): its status and what it
    /// found (the standard's `pmix_info_cbfunc_t`), the client's answer.
    /// False (and nothing sent) for an id that is no query out with the
    /// host.
    pub fn query_done(&mut self, request: u64, status: i32, info: Vec<Info>) -> bool {
        let Some((id, t)) = self
            .requests
            .take_op(super::requests::HostOp::Query, request)
        else {
            return false;
        };
        let r = if info.is_empty() {
            Reply::Status(status)
        } else {
            Reply::Query { status, info }
        };
        self.reply(id, t, &r);
        true
    }

    /// The reply to a QUERY: every key of every query answered in turn.
    pub(super) fn query(&self, queries: &[Query]) -> Reply {
        let mut out = Vec::new();
        let (mut missing, mut unsupported, mut asked) = (0, 0, 0);
        for q in queries {
            for k in &q.keys {
                asked += 1;
                let key = k.to_string();
                match self.answer_key(q, &key) {
                    Answer::Value(v) => out.push(Info::new(key.as_str(), v)),
                    Answer::NotFound => missing += 1,
                    Answer::Unsupported => unsupported += 1,
                }
            }
        }
        let status = if out.len() == asked && asked > 0 {
            codes::PMIX_SUCCESS
        } else if !out.is_empty() {
            codes::PMIX_ERR_PARTIAL_SUCCESS
        } else if missing > 0 || unsupported == 0 {
            codes::PMIX_ERR_NOT_FOUND
        } else {
            codes::PMIX_ERR_NOT_SUPPORTED
        };
        if out.is_empty() {
            Reply::Status(status)
        } else {
            Reply::Query { status, info: out }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(s: &Server, key: &str, pset: Option<&str>) -> Reply {
        let qualifiers = pset
            .map(|p| vec![Info::new("pmix.pset.nm", pstr(p))])
            .unwrap_or_default();
        s.query(&[Query {
            keys: vec![PString::from(key)],
            qualifiers,
        }])
    }

    /// Process sets are the host's (PMIx_server_define_process_set), not
    /// groups: a constructed group shows in the group queries only.
    #[test]
    fn process_sets_are_the_hosts_and_groups_are_not_among_them() {
        let mut s = Server::new();
        let both = vec![Proc::new("j", 0), Proc::new("j", 1)];
        let set = |r: &[u32]| r.iter().map(|r| ("j".to_string(), *r)).collect();
        s.group_construct_called(&("j".into(), 0), "grp", set(&[0, 1]), &[], &[]);
        s.group_construct_called(&("j".into(), 1), "grp", set(&[0, 1]), &[], &[]);
        s.group_constructed(&set(&[0, 1]), None);
        let one = |key: &str, v: Value| Reply::Query {
            status: codes::PMIX_SUCCESS,
            info: vec![Info::new(key, v)],
        };
        assert_eq!(
            ask(&s, "pmix.qry.psetnum", None),
            one("pmix.qry.psetnum", Value::Size(0))
        );
        assert_eq!(
            ask(&s, "pmix.qry.psets", None),
            one("pmix.qry.psets", Value::String(None))
        );
        assert_eq!(
            ask(&s, "pmix.qry.pmems", Some("grp")),
            Reply::Status(codes::PMIX_ERR_NOT_FOUND)
        );
        assert_eq!(
            ask(&s, "pmix.qry.pgrpnum", None),
            one("pmix.qry.pgrpnum", Value::Size(1))
        );
        s.define_pset("mine", both.clone());
        s.define_pset("other", vec![Proc::new("j", 1)]);
        assert_eq!(
            ask(&s, "pmix.qry.psetnum", None),
            one("pmix.qry.psetnum", Value::Size(2))
        );
        assert_eq!(
            ask(&s, "pmix.qry.psets", None),
            one("pmix.qry.psets", pstr("mine,other"))
        );
        let procs = both.into_iter().map(|p| Value::Proc(Box::new(p))).collect();
        assert_eq!(
            ask(&s, "pmix.qry.pmems", Some("mine")),
            one("pmix.qry.pmems", array(DataType::Proc, procs))
        );
        s.delete_pset("other");
        assert_eq!(
            ask(&s, "pmix.qry.psets", None),
            one("pmix.qry.psets", pstr("mine"))
        );
    }

    /// A deregistered job (`pmixw dvm` forgets each that ended) is still
    /// listed by `pmix.qry.ns` and `pmix.qry.nsinfo` with its size, and
    /// `pmix.qry.jst` answers its status when it ended; its process
    /// records are gone; of more than RETIRED_KEPT, the oldest goes.
    #[test]
    fn a_deregistered_job_keeps_its_name_size_and_status_among_the_last_kept() {
        let mut s = Server::new();
        let job = |ns: &str, n: u32| super::super::JobSpec {
            nspace: ns.into(),
            nprocs: n,
            hostname: "h".into(),
            info: vec![],
        };
        s.register_nspace(job("a", 2));
        s.register_nspace(job("b", 1));
        s.set_rank_pid("a", 0, 10);
        s.set_proc_exit("a", 0, 0);
        s.set_proc_exit("a", 1, 3);
        s.deregister_nspace("a");
        assert!(s.queries.procs.keys().all(|(n, _)| n != "a"));
        let one = |key: &str, v: Value| Reply::Query {
            status: codes::PMIX_SUCCESS,
            info: vec![Info::new(key, v)],
        };
        assert_eq!(
            ask(&s, "pmix.qry.ns", None),
            one("pmix.qry.ns", pstr("a,b"))
        );
        let jst = |s: &Server, ns: &str| {
            s.query(&[Query {
                keys: vec![PString::from("pmix.qry.jst")],
                qualifiers: vec![Info::new("pmix.nspace", pstr(ns))],
            }])
        };
        assert_eq!(
            jst(&s, "a"),
            one(
                "pmix.qry.jst",
                Value::Status(super::super::jobctl::PMIX_ERR_PROC_ABORTED)
            )
        );
        assert_eq!(
            jst(&s, "b"),
            one("pmix.qry.jst", Value::Status(codes::PMIX_SUCCESS))
        );
        let Reply::Query { info, .. } = ask(&s, "pmix.qry.nsinfo", None) else {
            panic!("no answer")
        };
        let text = format!("{info:?}");
        assert!(
            text.contains("Uint32(2)") && text.contains("Uint32(1)"),
            "{text}"
        );
        for k in 0..RETIRED_KEPT {
            let ns = format!("j{k}");
            s.register_nspace(job(&ns, 1));
            s.deregister_nspace(&ns);
        }
        assert_eq!(s.queries.retired.len(), RETIRED_KEPT);
        assert_eq!(jst(&s, "a"), Reply::Status(codes::PMIX_ERR_NOT_FOUND));
        assert_eq!(
            jst(&s, "j0"),
            one("pmix.qry.jst", Value::Status(codes::PMIX_SUCCESS))
        );
    }
}
