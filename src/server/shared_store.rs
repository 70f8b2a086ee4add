//! What the core writes into the shared store ([`dstore::SharedStore`])
//! and when, as libpmix 4.2.2's server does (spec-notes/dstore.md §4): a
//! namespace's job data before its first REQ reply, a local rank's LOCAL
//! and GLOBAL data at its COMMIT (before the reply), other nodes' ranks'
//! data when it arrives (before the fence or GET replies).

#![forbid(unsafe_code)]

use super::{dstore, Server};
use dstore::layout::WILDCARD;
use pmix_codec::msg::Reply;
use pmix_codec::{DataBuffer, Format};
use pmix_types::{DataType, Kval, Value};
use std::collections::BTreeMap;

/// Job-data keys a ds21 client never reads from the store (libpmix's
/// server leaves them out, `dstore_base.c` `register_job_info`).
const NOT_STORED: &[&str] = &["pmix.app.arr", "pmix.job.arr", "pmix.pblob"];

/// Node-array members that name the node rather than describe it.
const NODE_NAMES: &[&str] = &["pmix.hname", "pmix.nodeid", "pmix.alias"];

use dstore::Batch;

fn packed(fmt: &Format, key: &str, v: &Value) -> Option<(String, Vec<u8>)> {
    match pmix_codec::encode(fmt, DataType::Value, &[Value::Value(Box::new(v.clone()))]) {
        Ok(b) => Some((key.to_string(), b)),
        Err(e) => {
            tracing::warn!("dstore: {key} not stored: {e}");
            None
        }
    }
}

fn kval_packed(fmt: &Format, k: &Kval) -> Option<(String, Vec<u8>)> {
    let key = k.key.as_ref()?.to_string();
    packed(fmt, &key, &k.value)
}

impl Server {
    /// Install the shared store clients of namespaces registered from now
    /// on read (their environment names it, [`Server::client_env`]).
    pub fn set_shared_store(&mut self, store: Box<dyn dstore::SharedStore>) {
        self.shared_store = Some(store);
    }

    /// A namespace is about to be deregistered: the store forgets it and
    /// removes its files (the last namespace's going takes the store's
    /// directory, as libpmix's server does); its clients still running
    /// keep what they mapped, and ask the server for the rest. Called by
    /// the C library's `PMIx_server_deregister_nspace`, before
    /// [`Server::deregister_nspace`].
    pub fn shared_remove(&mut self, nspace: &str) {
        if let Some(j) = self.jobs.get_mut(nspace) {
            j.shared = None;
        }
        if let Some(store) = self.shared_store.as_mut() {
            store.remove_nspace(nspace);
        }
    }

    /// A namespace was registered: give it its lock segment and files.
    pub(super) fn shared_add(&mut self, nspace: &str) {
        let Some(store) = self.shared_store.as_mut() else {
            return;
        };
        let Some(j) = self.jobs.get_mut(nspace) else {
            return;
        };
        if store.add_nspace(nspace, j.spec.nprocs) {
            j.shared = Some(None);
        }
    }

    /// Before the first REQ reply of a namespace: its job data, in the
    /// format of the client asking (clients unpack with their own bfrops;
    /// under this server they all speak the buffer type it gave them).
    /// Wildcard: the job-level keys, `pmix.univ.size` and this node's
    /// array's members; rank r: its own keys.
    pub(super) fn shared_job(&mut self, fmt: &Format, nspace: &str) {
        if self.shared_store.is_none() || self.jobs.get(nspace).and_then(|j| j.shared) != Some(None)
        {
            return;
        }
        // the REQ reply's own (built once, cached: the reply that follows
        // this write reuses it)
        let Some(Reply::JobInfo { kvals, .. }) = self.job_info(fmt, nspace) else {
            return;
        };
        let mut wild: Vec<(String, Vec<u8>)> = Vec::new();
        let mut ranks: Vec<Batch> = Vec::new();
        let mut node_done = false;
        let put = |wild: &mut Vec<(String, Vec<u8>)>, e: Option<(String, Vec<u8>)>| {
            if let Some(e) = e {
                wild.retain(|(k, _)| *k != e.0);
                wild.push(e);
            }
        };
        for k in &kvals {
            let key = k.key.as_ref().map(|s| s.to_string()).unwrap_or_default();
            match key.as_str() {
                // its pmix.session.id names the session and is no value
                // (jobinfo.rs); libpmix's server stores none of the
                // array, but pmix.univ.size is what a client reading rank
                // UNDEF looks for here (dstore_base.c _get_univ_size)
                "pmix.ssn.arr" => {
                    for i in super::jobinfo::elements(k) {
                        if i.key.to_string() == "pmix.univ.size" {
                            put(&mut wild, packed(fmt, "pmix.univ.size", &i.value));
                        }
                    }
                }
                // the first node array is this node's (jobinfo.rs)
                "pmix.node.arr" => {
                    if !node_done {
                        node_done = true;
                        for i in super::jobinfo::elements(k) {
                            let ik = i.key.to_string();
                            if !NODE_NAMES.contains(&ik.as_str()) {
                                put(&mut wild, packed(fmt, &ik, &i.value));
                            }
                        }
                    }
                }
                "pmix.pblob" => {
                    if let Value::ByteObject(b) = &k.value {
                        let mut buf = DataBuffer::from_bytes(*fmt, b.0.clone());
                        let Ok(Value::ProcRank(r)) = buf.unpack_one(DataType::ProcRank) else {
                            continue;
                        };
                        let mut kv = Vec::new();
                        while let Ok(Value::Kval(x)) = buf.unpack_one(DataType::Kval) {
                            kv.extend(kval_packed(fmt, &x));
                        }
                        ranks.push((r, kv));
                    }
                }
                k2 if NOT_STORED.contains(&k2) => {}
                _ => put(&mut wild, kval_packed(fmt, k)),
            }
        }
        let mut batches = vec![(WILDCARD, wild)];
        batches.extend(ranks);
        // data committed before this (a rank committing before any REQ
        // of its namespace was answered)
        if let Some(j) = self.jobs.get(nspace) {
            for (r, st) in j.ranks.iter().enumerate() {
                if st.committed && !st.elsewhere {
                    batches.push((r as u32, Self::shared_kvs(fmt, st.local.kvals())));
                }
            }
        }
        if let Some(j) = self.jobs.get_mut(nspace) {
            j.shared = Some(Some(*fmt));
        }
        if let Some(store) = self.shared_store.as_mut() {
            store.store(nspace, &batches);
        }
    }

    fn shared_kvs(fmt: &Format, kvals: &[Kval]) -> Vec<(String, Vec<u8>)> {
        kvals.iter().filter_map(|k| kval_packed(fmt, k)).collect()
    }

    /// A local rank committed `kvals` (its LOCAL and GLOBAL keys).
    pub(super) fn shared_commit(&mut self, nspace: &str, rank: u32, kvals: &[Kval]) {
        if self.shared_store.is_none() || kvals.is_empty() {
            return;
        }
        // before the job data is written: stored with it
        let Some(Some(fmt)) = self.jobs.get(nspace).and_then(|j| j.shared) else {
            return;
        };
        let batch = vec![(rank, Self::shared_kvs(&fmt, kvals))];
        if let Some(store) = self.shared_store.as_mut() {
            store.store(nspace, &batch);
        }
    }

    /// Ranks on other nodes whose data arrived (REMOTE and GLOBAL keys).
    pub(super) fn shared_remote(&mut self, done: &[(String, u32)]) {
        if self.shared_store.is_none() {
            return;
        }
        let mut per: BTreeMap<&str, Vec<Batch>> = BTreeMap::new();
        for (ns, r) in done {
            let Some(j) = self.jobs.get(ns.as_str()) else {
                continue;
            };
            let Some(Some(fmt)) = j.shared else {
                continue;
            };
            if let Some(st) = j.ranks.get(*r as usize) {
                per.entry(ns.as_str())
                    .or_default()
                    .push((*r, Self::shared_kvs(&fmt, st.remote.kvals())));
            }
        }
        if let Some(store) = self.shared_store.as_mut() {
            for (ns, batches) in per {
                store.store(ns, &batches);
            }
        }
    }
}
