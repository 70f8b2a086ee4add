//! The job-info (REQ) reply, built once per (namespace, format, version),
//! and the REQs held until the host gives a job's node map.
//!
//! The REQ reply (the job info) holds a blob for every rank of the job:
//! O(N) bytes, sent to each of the N ranks. Encoded for each REQ, and
//! copied into each connection's queue, it was most of the server's CPU
//! time and memory at N = 1 000 in `benches/server_load.rs` (N copies of
//! ~150 KB queued at once while every rank initializes). It is now encoded
//! once per (namespace, format, version) and framed once for the tag the
//! ranks use (libpmix clients and ours all send REQ as their first
//! request, with the same tag), and every send of it shares one buffer.
//! A ds21 client whose job data is in the store gets a short form of it,
//! cached apart ([`Form::Store`]).

#![forbid(unsafe_code)]

use super::{info_array, info_u32, kval, pstr, ConnId, NodeMap, Server};
use crate::link::server_frame;
use bytes::Bytes;
use pmix_codec::frame::HEADER_LEN;
use pmix_codec::msg::Reply;
use pmix_codec::{DataBuffer, Format};
use pmix_types::status::codes;
use pmix_types::{DataArray, DataType, Hex, Info, Kval, PString, Value, RANK_WILDCARD};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};

/// A framed reply: the tag it was framed with and the frame.
struct Framed {
    tag: u32,
    frame: Bytes,
}

/// What a job-info reply is cached under: namespace, format, and the
/// version the namespace's first client announced.
type Key = (String, Format, String);

/// Which REQ reply a client gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Form {
    /// The whole job info (a hash client's: every rank's blob).
    Whole,
    /// A ds21 client's whose job data is in the store: the namespace and
    /// the session, node and application arrays, all a libpmix 4.2.2
    /// ds21 client keeps from its REQ reply (it reads the rest in the
    /// store; spec-notes/dstore.md §1.3) and what libpmix's server sends
    /// it (`interop/c/bench_server.c` with `BENCH_SERVER_DSTORE=1`: 468 B
    /// at N = 100, 4 071 B at 1 000, the node array's peer list its only
    /// part that grows).
    Store,
}

/// The keys of [`Form::Store`]'s reply.
const KEPT_BY_DS21: &[&str] = &["pmix.ssn.arr", "pmix.node.arr", "pmix.app.arr"];

/// The job-info area's state: the REQ replies built (and framed) so far,
/// and the REQs waiting for a node map.
#[derive(Default)]
pub(super) struct JobInfoCache {
    /// Job-info replies: every rank of a job gets the same one, and
    /// building it is O(ranks).
    replies: RefCell<HashMap<Key, Reply>>,
    /// The same replies framed, as REQ sends them, in each form.
    frames: RefCell<HashMap<(Key, Form), Framed>>,
    /// Namespaces whose node map the host has still to give
    /// ([`Server::await_nodes`]), with the REQs (connection, tag) held
    /// until it does.
    awaiting_nodes: BTreeMap<String, Vec<(ConnId, u32)>>,
    /// What the host said of this node, session and ranks beyond
    /// libpmix's own job data ([`Server::set_host_facts`]); None:
    /// libpmix 4.2.2's layout.
    host_info: Option<HostFacts>,
}

/// What a launcher tells every job beyond libpmix's server's job data
/// ([`Server::set_host_facts`]; prterun gives all of these).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HostFacts {
    /// This node's facts, in its node array (`pmix.pmem`, …).
    pub node: Vec<Info>,
    /// The session's, in the session array (`pmix.tmpdir`, `pmix.fqdn`).
    pub session: Vec<Info>,
    /// Every rank's here, in its own data (`pmix.ppid`).
    pub rank: Vec<Info>,
}

impl JobInfoCache {
    /// REQs of `nspace` wait for its node map from now on.
    pub(super) fn await_nodes(&mut self, nspace: &str) {
        self.awaiting_nodes.entry(nspace.to_string()).or_default();
    }

    /// Hold this REQ if `nspace`'s node map is awaited (true), else false.
    pub(super) fn hold(&mut self, nspace: &str, id: ConnId, t: u32) -> bool {
        match self.awaiting_nodes.get_mut(nspace) {
            Some(held) => {
                held.push((id, t));
                true
            }
            None => false,
        }
    }

    /// The node map of `nspace` came: the REQs held for it, to answer.
    pub(super) fn release(&mut self, nspace: &str) -> Vec<(ConnId, u32)> {
        self.awaiting_nodes.remove(nspace).unwrap_or_default()
    }

    /// Connection `id` closed: its held REQs are not answered.
    pub(super) fn drop_conn(&mut self, id: ConnId) {
        for held in self.awaiting_nodes.values_mut() {
            held.retain(|(c, _)| *c != id);
        }
    }
}

impl Server {
    /// Give every job's data what a launcher gives beyond libpmix's
    /// server (prterun, issue #36 item 2): each node array also lists the
    /// job's ranks there as `pmix.lprocs` (a PROC array), a job on one
    /// node has that node's `pmix.hname` at job level too, and `facts`
    /// go in this node's array, the session array and every rank's data.
    /// Not called, the job info is libpmix 4.2.2's, byte for byte.
    pub fn set_host_facts(&mut self, facts: HostFacts) {
        self.jobinfo.host_info = Some(facts);
        self.job_info_changed();
    }

    /// The job data changed: forget every job-info reply built from it,
    /// and its framed copies.
    pub(super) fn job_info_changed(&self) {
        self.jobinfo.replies.borrow_mut().clear();
        self.jobinfo.frames.borrow_mut().clear();
    }

    /// What the job info of `nspace` in `fmt` is cached under: it also
    /// holds the version the namespace's first client announced.
    fn job_info_key(&self, fmt: &Format, nspace: &str) -> Key {
        let version = self
            .registry
            .peer(&pmix_types::Nspace::from(nspace))
            .and_then(|p| p.version.clone())
            .unwrap_or_default();
        (nspace.to_string(), *fmt, version)
    }

    /// The REQ reply: job-level KVALs, the session and node arrays and one
    /// per-rank blob, as libpmix 4.2.2's hash module lays them out
    /// (protocol.md §6.1; corpus/captures-4.2.2).
    pub(super) fn job_info(&self, fmt: &Format, nspace: &str) -> Option<Reply> {
        let key = self.job_info_key(fmt, nspace);
        if let Some(r) = self.jobinfo.replies.borrow().get(&key) {
            return Some(r.clone());
        }
        let mut r = self.build_job_info(fmt, nspace)?;
        if fmt.release_family() >= pmix_codec::Release::V7 {
            without_array_end(&mut r);
        }
        self.jobinfo.replies.borrow_mut().insert(key, r.clone());
        Some(r)
    }

    pub(super) fn build_job_info(&self, fmt: &Format, nspace: &str) -> Option<Reply> {
        let j = self.jobs.get(nspace)?;
        let n = j.spec.nprocs;
        // one node holding every rank, unless the host said otherwise
        let single;
        let map = match &j.nodes {
            Some(m) => m,
            None => {
                single = NodeMap {
                    nodes: vec![(j.spec.hostname.clone(), (0..n).collect())],
                    me: 0,
                };
                &single
            }
        };
        let nlist = map
            .nodes
            .iter()
            .map(|(h, _)| h.as_str())
            .collect::<Vec<_>>()
            .join(",");
        // the version the namespace's first client announced (libpmix
        // records its bfrops module the same way)
        let version = self
            .registry
            .peer(&pmix_types::Nspace::from(nspace))
            .and_then(|p| p.version.clone())
            .unwrap_or_else(|| "4.2.2".into());
        let mut kvals = vec![
            kval("pmix.job.size", Value::Uint32(n)),
            kval("pmix.max.size", Value::Uint32(n)),
            kval("pmix.num.nodes", Value::Uint32(map.nodes.len() as u32)),
            kval("pmix.jobid", pstr(nspace)),
            kval("pmix.appnum", Value::Uint32(0)),
            kval("pmix.nlist", pstr(&nlist)),
            kval("pmix.bfrops.mod", pstr(&version)),
        ];
        for i in &j.spec.info {
            kvals.push(Kval {
                key: Some(PString::from(i.key.to_string().as_str())),
                value: i.value.clone(),
            });
        }
        // a spawned job's parent and applications (spawn.rs)
        kvals.extend(self.origin_job_kvals(nspace));
        if let (Some(_), [(host, _)]) = (&self.jobinfo.host_info, map.nodes.as_slice()) {
            // prterun: a libpmix 4.2.2 client reads the node's name at
            // rank WILDCARD without a node qualifier from here
            kvals.push(kval("pmix.hname", pstr(host)));
        }
        let host = self.jobinfo.host_info.as_ref();
        let mut session = vec![
            Info::new("pmix.session.id", Value::Uint32(u32::MAX)),
            Info::new("pmix.univ.size", Value::Uint32(n)),
        ];
        session.extend(host.iter().flat_map(|h| h.session.iter().cloned()));
        kvals.push(kval("pmix.ssn.arr", info_array(session)));
        // this node's array first; as libpmix's hash module builds it,
        // pmix.hname included twice
        let order = std::iter::once(map.me).chain((0..map.nodes.len()).filter(|i| *i != map.me));
        for id in order {
            let Some((host, ranks)) = map.nodes.get(id) else {
                continue;
            };
            let peers = ranks
                .iter()
                .map(|r| r.to_string())
                .collect::<Vec<_>>()
                .join(",");
            let size = ranks.len() as u32;
            let mut items = vec![
                Info::new("pmix.hname", pstr(host)),
                Info::new("pmix.node.size", Value::Uint32(size)),
                Info::new("pmix.hname", pstr(host)),
                Info::new("pmix.nodeid", Value::Uint32(id as u32)),
                Info::new("pmix.lpeers", pstr(&peers)),
                Info::new(
                    "pmix.lldr",
                    Value::ProcRank(ranks.first().copied().unwrap_or(0)),
                ),
                Info::new("pmix.local.size", Value::Uint32(size)),
            ];
            if let Some(h) = self.jobinfo.host_info.as_ref() {
                // prterun's PMIX_LOCAL_PROCS: the job's procs on the node
                let procs = ranks
                    .iter()
                    .map(|r| Value::Proc(Box::new(pmix_types::Proc::new(nspace, *r))))
                    .collect();
                if let Ok(a) = DataArray::new(DataType::Proc, procs) {
                    items.push(Info::new("pmix.lprocs", Value::DataArray(Box::new(a))));
                }
                if id == map.me {
                    items.extend(h.node.iter().cloned());
                }
            }
            kvals.push(kval("pmix.node.arr", info_array(items)));
        }
        for r in 0..n {
            let mut b = DataBuffer::new(*fmt);
            b.pack(DataType::ProcRank, &[Value::ProcRank(r)]).ok()?;
            for k in self.rank_kvals(nspace, r, map) {
                b.pack(DataType::Kval, &[Value::Kval(Box::new(k))]).ok()?;
            }
            kvals.push(kval(
                "pmix.pblob",
                Value::ByteObject(Box::new(Hex(Bytes::copy_from_slice(b.as_bytes())))),
            ));
        }
        Some(Reply::JobInfo {
            nspace: Some(PString::from(nspace)),
            kvals,
        })
    }
}

impl Server {
    /// What rank `r` of `nspace` is told of itself in the job info (its
    /// `pmix.pblob`): its local and node rank, appnum, node name and id,
    /// then its origin's keys (spawn.rs) and the host's facts.
    fn rank_kvals(&self, nspace: &str, r: u32, map: &NodeMap) -> Vec<Kval> {
        let (id, lrank) = map
            .nodes
            .iter()
            .enumerate()
            .find_map(|(id, (_, ranks))| {
                let k = ranks.iter().position(|x| *x == r)?;
                Some((id, k as u16))
            })
            .unwrap_or((0, 0));
        // the node rank counts the ranks the host started on the node
        // before this job's (prterun: a child of a 1-rank job is node rank
        // 1), known when the job has one node and the host gave an offset
        let offset = self.jobs.get(nspace).and_then(|j| j.origin.offset);
        let before = match (map.nodes.len(), offset) {
            (1, Some(off)) => off,
            _ => 0,
        };
        let nrank = u16::try_from(before.saturating_add(u32::from(lrank))).unwrap_or(u16::MAX);
        let host = map.nodes.get(id).map(|n| n.0.as_str()).unwrap_or("");
        let (app, origin) = self.origin_rank_kvals(nspace, r);
        let facts = self
            .jobinfo
            .host_info
            .iter()
            .flat_map(|h| h.rank.iter())
            .map(|i| Kval {
                key: Some(PString::from(i.key.to_string().as_str())),
                value: i.value.clone(),
            });
        [
            kval("pmix.lrank", Value::Uint16(lrank)),
            kval("pmix.nrank", Value::Uint16(nrank)),
            kval("pmix.appnum", Value::Uint32(app)),
            kval("pmix.hname", pstr(host)),
            kval("pmix.nodeid", Value::Uint32(id as u32)),
        ]
        .into_iter()
        .chain(origin)
        .chain(facts)
        .collect()
    }

    /// Rank `rank` of `nspace`'s own value of `key` from the job info (a
    /// tool's GET of a rank's `pmix.appnum`, …: the rank may never have
    /// committed anything), if the job info holds one.
    pub(super) fn rank_value(&self, nspace: &str, rank: u32, key: &str) -> Option<Kval> {
        if rank >= self.jobs.get(nspace)?.spec.nprocs {
            return None;
        }
        self.with_node_map(nspace, |map| self.rank_kvals(nspace, rank, map))?
            .into_iter()
            .find(|k| k.key.as_ref().is_some_and(|k| k.to_string() == key))
    }

    /// `f` of `nspace`'s node map (one node holding every rank, unless the
    /// host said otherwise).
    fn with_node_map<T>(&self, nspace: &str, f: impl FnOnce(&NodeMap) -> T) -> Option<T> {
        let j = self.jobs.get(nspace)?;
        Some(match &j.nodes {
            Some(m) => f(m),
            None => f(&NodeMap {
                nodes: vec![(j.spec.hostname.clone(), (0..j.spec.nprocs).collect())],
                me: 0,
            }),
        })
    }

    /// A GET of `nspace`'s WILDCARD rank without a key: the namespace's
    /// whole job data, as libpmix's server sends it a client of another
    /// namespace (its job-level KVALs, then each rank's own, which libpmix
    /// 4.2.2's puts in `pmix.pdata` arrays): one blob of the job-level
    /// KVALs at WILDCARD, then a blob of each rank's job-info KVALs (its
    /// `pmix.pblob`) under its own name, which every client files by the
    /// proc it names.
    pub(super) fn job_data_blobs(&self, fmt: &Format, nspace: &str) -> Vec<Bytes> {
        let Some(Reply::JobInfo { kvals, .. }) = self.job_info(fmt, nspace) else {
            return Vec::new();
        };
        let job: Vec<Kval> = kvals
            .into_iter()
            .filter(|k| key_of(k) != "pmix.pblob")
            .collect();
        let n = self.jobs.get(nspace).map_or(0, |j| j.spec.nprocs);
        let ranks = self
            .with_node_map(nspace, |map| {
                (0..n)
                    .map(|r| (r, self.rank_kvals(nspace, r, map)))
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        std::iter::once(Self::blob_of(
            fmt,
            &pmix_types::Proc::new(nspace, RANK_WILDCARD),
            &job,
        ))
        .chain(
            ranks
                .iter()
                .map(|(r, kv)| Self::blob_of(fmt, &pmix_types::Proc::new(nspace, *r), kv)),
        )
        .flatten()
        .collect()
    }
}

/// The session-level keys of libpmix 4.2.2 (`pmix_check_session_info`,
/// src/include/pmix_globals.h): a GET of one at rank WILDCARD is answered
/// from the session array.
const SESSION_KEYS: &[&str] = &[
    "pmix.session.id",
    "pmix.clid",
    "pmix.univ.size",
    "pmix.tmpdir",
    "pmix.tdir.rmclean",
    "pmix.fqdn",
    "pmix.rm.name",
    "pmix.rm.version",
];

/// The node-level keys of libpmix 4.2.2 (`pmix_check_node_info`): answered
/// from the node array of the node the qualifiers name, else this node's.
const NODE_KEYS: &[&str] = &[
    "pmix.hname",
    "pmix.alias",
    "pmix.nodeid",
    "pmix.pmem",
    "pmix.lpeers",
    "pmix.lprocs",
    "pmix.lcpus",
    "pmix.local.size",
    "pmix.node.size",
    "pmix.lldr",
    "pmix.ndosub",
    "pmix.fab.devs",
    "pmix.fab.coord",
    "pmix.fabdev",
    "pmix.fabdev.idx",
    "pmix.fabdev.nm",
    "pmix.fabdev.vndr",
    "pmix.fabdev.btyp",
    "pmix.fabdev.vendid",
    "pmix.fabdev.driver",
    "pmix.fabdev.fmwr",
    "pmix.fabdev.addr",
    "pmix.fabdev.mtu",
    "pmix.fabdev.speed",
    "pmix.fabdev.state",
    "pmix.fabdev.type",
    "pmix.fabdev.pcidevid",
];

/// The app-level keys of libpmix 4.2.2 (`pmix_check_app_info`).
const APP_KEYS: &[&str] = &[
    "pmix.app.size",
    "pmix.aldr",
    "pmix.app.argv",
    "pmix.wdir",
    "pmix.pset.nm",
    "pmix.pset.mems",
    "pmix.apmap.type",
    "pmix.apmap.regex",
];

/// The job info's arrays: never answers to a GET of their own key.
const ARRAY_KEYS: &[&str] = &[
    "pmix.ssn.arr",
    "pmix.node.arr",
    "pmix.app.arr",
    "pmix.pblob",
];

/// The INFO elements of a KVAL holding an INFO array.
pub(super) fn elements(k: &Kval) -> Vec<&Info> {
    match &k.value {
        Value::DataArray(a) => match &**a {
            DataArray::Typed { elements, .. } => elements
                .iter()
                .filter_map(|e| match e {
                    Value::Info(i) => Some(&**i),
                    _ => None,
                })
                .collect(),
            DataArray::Undef { .. } => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// Whether an array holds `key` with a value `pick` accepts.
fn holds(a: &Kval, key: &str, pick: impl Fn(&Value) -> bool) -> bool {
    elements(a)
        .iter()
        .any(|i| i.key.as_bytes() == key.as_bytes() && pick(&i.value))
}

fn key_of(k: &Kval) -> String {
    k.key.as_ref().map(|s| s.to_string()).unwrap_or_default()
}

/// Which realm a rank-WILDCARD GET of `key` reads, as libpmix 4.2.2's hash
/// gds decides (`pmix_gds_hash_fetch`): a true `pmix.ssn.info`,
/// `pmix.node.info` or `pmix.app.info` qualifier names it, else the key's
/// own list; anything else is job-level.
#[derive(PartialEq)]
enum Realm {
    Session,
    Node,
    App,
    Job,
}

fn realm(key: &str, info: &[Info]) -> Realm {
    let given = |k: &str| info.iter().find(|i| i.key.as_bytes() == k.as_bytes());
    let flags = [
        ("pmix.ssn.info", Realm::Session),
        ("pmix.node.info", Realm::Node),
        ("pmix.app.info", Realm::App),
    ];
    let mut any = false;
    for (k, r) in flags {
        if let Some(i) = given(k) {
            any = true;
            if !matches!(i.value, Value::Bool(false)) {
                return r;
            }
        }
    }
    if any {
        Realm::Job
    } else if SESSION_KEYS.contains(&key) {
        Realm::Session
    } else if NODE_KEYS.contains(&key) {
        Realm::Node
    } else if APP_KEYS.contains(&key) {
        Realm::App
    } else {
        Realm::Job
    }
}

impl Server {
    /// A GET of `key` at rank WILDCARD of `nspace` (a tool's, mostly:
    /// clients read their own job's data locally): the KVAL the job info
    /// holds for it, looked for where libpmix 4.2.2's server looks
    /// (src/server/pmix_server_get.c `get_job_data` → the hash gds):
    /// session keys in the session array (its `pmix.session.id` names the
    /// session and is no value), node keys in the array of the node
    /// `pmix.nodeid`/`pmix.hname` qualifiers name (this node's without),
    /// app keys in the app array; then, as libpmix falls back to its
    /// job-level table, the job-level KVALs. None: not held.
    pub(super) fn job_level(
        &self,
        fmt: &Format,
        nspace: &str,
        key: &str,
        info: &[Info],
    ) -> Option<Kval> {
        let Some(Reply::JobInfo { kvals, .. }) = self.job_info(fmt, nspace) else {
            return None;
        };
        let found = |arrays: &[&Kval]| -> Option<Kval> {
            arrays.iter().find_map(|a| {
                elements(a)
                    .into_iter()
                    .find(|i| i.key.as_bytes() == key.as_bytes())
                    .map(|i| kval(key, i.value.clone()))
            })
        };
        let arrays = |name: &str| {
            kvals
                .iter()
                .filter(|k| key_of(k) == name)
                .collect::<Vec<_>>()
        };
        let hit = match realm(key, info) {
            Realm::Session if key != "pmix.session.id" => {
                let wanted = info_u32(info, "pmix.session.id");
                let ssn: Vec<&Kval> = arrays("pmix.ssn.arr")
                    .into_iter()
                    .filter(|a| {
                        wanted
                            .is_none_or(|w| holds(a, "pmix.session.id", |v| *v == Value::Uint32(w)))
                    })
                    .collect();
                found(&ssn)
            }
            Realm::Node => {
                let id = info_u32(info, "pmix.nodeid");
                let host = info.iter().find_map(|i| match &i.value {
                    Value::String(Some(s)) if i.key.as_bytes() == b"pmix.hname" => {
                        Some(s.to_string())
                    }
                    _ => None,
                });
                let nodes = arrays("pmix.node.arr");
                let pick = nodes.iter().find(|a| match (id, &host) {
                    (Some(id), _) => holds(a, "pmix.nodeid", |v| *v == Value::Uint32(id)),
                    (None, Some(h)) => holds(
                        a,
                        "pmix.hname",
                        |v| matches!(v, Value::String(Some(s)) if s.as_bytes() == h.as_bytes()),
                    ),
                    // this node's array comes first (build_job_info)
                    (None, None) => true,
                });
                pick.and_then(|a| found(&[*a]))
            }
            Realm::App => found(&arrays("pmix.app.arr")),
            Realm::Session | Realm::Job => None,
        };
        hit.or_else(|| {
            kvals
                .iter()
                .find(|k| key_of(k) == key && !ARRAY_KEYS.contains(&key))
                .cloned()
        })
    }
}

impl Server {
    /// The REQ reply for a rank of `nspace` speaking `fmt`, framed with tag
    /// `t`: shared with every earlier rank that used the same tag, framed
    /// anew (one copy) otherwise. `None` if the namespace is unknown; a
    /// reply that does not encode is answered BAD_PARAM, as
    /// [`Server::reply`] does.
    pub(super) fn job_info_frame(
        &self,
        fmt: &Format,
        nspace: &str,
        t: u32,
        form: Form,
    ) -> Option<Bytes> {
        let key = (self.job_info_key(fmt, nspace), form);
        if let Some(f) = self.jobinfo.frames.borrow().get(&key) {
            if f.tag == t {
                return Some(f.frame.clone());
            }
            let payload = &f.frame[HEADER_LEN..];
            return server_frame(t, payload).ok().map(Bytes::from);
        }
        let mut reply = self.job_info(fmt, nspace)?;
        if let (Form::Store, Reply::JobInfo { kvals, .. }) = (form, &mut reply) {
            kvals.retain(|k| {
                k.key
                    .as_ref()
                    .and_then(|k| k.as_str())
                    .is_some_and(|k| KEPT_BY_DS21.contains(&k))
            });
        }
        let payload = match reply.encode(fmt) {
            Ok(p) => p,
            Err(_) => Reply::Status(codes::PMIX_ERR_BAD_PARAM).encode(fmt).ok()?,
        };
        let framed = Bytes::from(server_frame(t, &payload).ok()?);
        self.jobinfo.frames.borrow_mut().insert(
            key,
            Framed {
                tag: t,
                frame: framed.clone(),
            },
        );
        Some(framed)
    }
}

/// 7.0's server flags no element of the session and node arrays
/// PMIX_INFO_ARRAY_END, where 4.2.2's flags the last (capture
/// `v7.0.0a1-server_v7.0.0a1-client_delete`, `pmix.ssn.arr` and
/// `pmix.node.arr`; 4.2.2 and 7.0 clients read either).
fn without_array_end(r: &mut Reply) {
    let Reply::JobInfo { kvals, .. } = r else {
        return;
    };
    for k in kvals {
        if let pmix_types::Value::DataArray(a) = &mut k.value {
            let pmix_types::DataArray::Typed { elements, .. } = &mut **a else {
                continue;
            };
            for e in elements {
                if let pmix_types::Value::Info(i) = e {
                    i.flags &= !super::INFO_ARRAY_END;
                }
            }
        }
    }
}
