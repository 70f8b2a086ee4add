//! Per-job state: the KVS (PMI-1 put/get, PMI-2 kvs-put/kvs-get), barriers and fences (local, and across nodes through the host), node and job attributes.

#![forbid(unsafe_code)]

use super::{
    check_len, decode_pairs, encode_pairs, field, Barrier, ConnId, Event, Job, Output, Query,
    Refusal, Server, Waiter, MAX_JOB_KVS, MAX_KEY, MAX_VALUE,
};
use std::collections::{BTreeMap, BTreeSet};

impl Server {
    /// Store `key` in job `k`'s KVS (`PMI_` keys are the server's).
    pub(super) fn store(
        &mut self,
        cmd: &'static str,
        (k, rank): (&str, u32),
        key: &str,
        value: &str,
    ) -> Result<(), Refusal> {
        check_len(cmd, "key", key, MAX_KEY)?;
        check_len(cmd, "value", value, MAX_VALUE)?;
        if key.starts_with("PMI_") {
            return Err(Refusal::BadField {
                cmd,
                detail: format!("keys beginning with PMI_ are reserved ({key})"),
            });
        }
        let job = self
            .jobs
            .get_mut(k)
            .ok_or_else(|| Refusal::NoSuchRank(format!("job {k}")))?;
        let old = job.kvs.get(key).map_or(0, |v| key.len() + v.len());
        let new = job.kvs_bytes - old + key.len() + value.len();
        if new > MAX_JOB_KVS {
            return Err(Refusal::Limit(format!(
                "job {k} would hold {new} KVS bytes, more than {MAX_JOB_KVS}"
            )));
        }
        job.kvs_bytes = new;
        job.kvs.insert(key.to_string(), value.to_string());
        if job.spans_nodes() {
            job.unsent.push((key.to_string(), value.to_string()));
        }
        if job.spec.joint {
            job.joint_puts
                .entry(rank)
                .or_default()
                .insert(key.to_string(), value.to_string());
        }
        Ok(())
    }

    pub(super) fn put(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let (mine, rank) = self.who(conn);
        let k = q.msg.get("kvsname").unwrap_or(&mine).to_string();
        if k != mine {
            return Err(Refusal::BadField {
                cmd: "put",
                detail: format!("kvsname {k} is not this rank's ({mine})"),
            });
        }
        self.store(
            "put",
            (&k, rank),
            field(q, "put", "key")?,
            field(q, "put", "value")?,
        )?;
        self.answer(conn, q, &[])
    }

    /// A job attribute: what info-getjobattr (and a PMI-1 get of a
    /// `PMI_` key) answers.
    pub(super) fn jobattr(job: &Job, key: &str) -> Option<String> {
        match key {
            "PMI_process_mapping" => Some(job.spec.mapping.clone()),
            "universeSize" => Some(job.spec.universe.to_string()),
            "PMI_dead_processes" => Some(
                job.lost
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            _ => job.kvs.get(key).cloned(),
        }
    }

    pub(super) fn get(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let (mine, _) = self.who(conn);
        let k = q.msg.get("kvsname").unwrap_or(&mine).to_string();
        let key = field(q, "get", "key")?;
        let job = self
            .jobs
            .get(&k)
            .ok_or_else(|| Refusal::NoSuchRank(format!("job {k}")))?;
        match Self::jobattr(job, key) {
            Some(v) => self.answer(conn, q, &[("found", "TRUE"), ("value", &v)]),
            // hydra's answer for a key nobody put
            None => Err(Refusal::NotFound("key_not_found")),
        }
    }

    /// The ranks of a barrier group: `WORLD:tag`, `NODE:tag` or
    /// `r1,r2,…:tag` (PMI 1.2), none for a plain barrier.
    pub(super) fn group(
        job: &Job,
        group: Option<&str>,
    ) -> Result<(String, BTreeSet<u32>, Option<String>), Refusal> {
        let world: BTreeSet<u32> = (0..job.spec.size).collect();
        let Some(g) = group else {
            return Ok(("WORLD".into(), world, None));
        };
        let bad = |d: String| Refusal::BadField {
            cmd: "barrier_in",
            detail: d,
        };
        let (set, tag) = g.rsplit_once(':').unwrap_or((g, "0"));
        tag.parse::<u64>()
            .map_err(|_| bad(format!("group {g:?}: tag {tag:?}")))?;
        let members: BTreeSet<u32> = match set {
            "WORLD" => world,
            "NODE" => job.local(),
            list => {
                let mut m = BTreeSet::new();
                for r in list.split(',') {
                    let r: u32 = r
                        .trim()
                        .parse()
                        .map_err(|_| bad(format!("group {g:?}: rank {r:?}")))?;
                    if r >= job.spec.size {
                        return Err(bad(format!("group {g:?}: no rank {r}")));
                    }
                    m.insert(r);
                }
                m
            }
        };
        Ok((g.to_string(), members, Some(tag.to_string())))
    }

    pub(super) fn barrier_in(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let (k, r) = self.who(conn);
        let job = self
            .jobs
            .get(&k)
            .ok_or_else(|| Refusal::NoSuchRank(k.clone()))?;
        let (name, members, tag) = Self::group(job, q.msg.get("group"))?;
        if !members.contains(&r) {
            return Err(Refusal::BadField {
                cmd: "barrier_in",
                detail: format!("rank {r} is not in group {name}"),
            });
        }
        // the host's fence spans every node: a group of some ranks on
        // several nodes has no collective to ride on
        let all = members.len() == job.spec.size as usize;
        if !all && job.spec.joint {
            // its PMIx clients take part in world barriers only
            return Err(Refusal::BadField {
                cmd: "barrier_in",
                detail: format!(
                    "group {name}: a job served PMI and PMIx barriers all its ranks (WORLD)"
                ),
            });
        }
        if !all && !members.is_subset(&job.local()) {
            return Err(Refusal::BadField {
                cmd: "barrier_in",
                detail: format!("group {name} spans nodes; only WORLD, NODE or local groups do"),
            });
        }
        let mut w = self.waiter(conn, q, "barrier_out");
        w.tag = tag;
        self.enter(&k, r, name, members, w);
        Ok(())
    }

    pub(super) fn kvs_fence(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let (k, r) = self.who(conn);
        let members = self
            .jobs
            .get(&k)
            .map(|j| (0..j.spec.size).collect())
            .unwrap_or_default();
        let w = self.waiter(conn, q, "kvs-fence-response");
        self.enter(&k, r, "WORLD".into(), members, w);
        Ok(())
    }

    /// Rank `r` enters barrier `name`; answered when every member has.
    pub(super) fn enter(
        &mut self,
        k: &str,
        r: u32,
        name: String,
        members: BTreeSet<u32>,
        w: Waiter,
    ) {
        let Some(job) = self.jobs.get_mut(k) else {
            return;
        };
        if let Some(gone) = members.iter().find(|m| job.lost.contains(m)) {
            let msg = format!("rank {gone} of {k} left before the barrier");
            self.send_to(&w, w.resp, &[("rc", "1"), (w.errkey(), &msg)]);
            return;
        }
        if job.spec.joint {
            // one collective with the PMIx clients: through the host
            let request = self.next_request;
            self.next_request += 1;
            let puts = job
                .joint_puts
                .remove(&r)
                .unwrap_or_default()
                .into_iter()
                .collect();
            self.joints.insert(request, (k.to_string(), r, w));
            self.out.push_back(Output::Host(Event::JointFence {
                request,
                kvsname: k.to_string(),
                rank: r,
                puts,
            }));
            return;
        }
        let local = job.local();
        let spans = job.spans_nodes();
        let b = job.barriers.entry(name.clone()).or_insert(Barrier {
            members,
            arrived: BTreeMap::new(),
            upstream: None,
        });
        b.arrived.insert(r, w);
        let here: Vec<u32> = b.members.intersection(&local).copied().collect();
        if !here.iter().all(|m| b.arrived.contains_key(m)) || b.upstream.is_some() {
            return;
        }
        if spans && b.members.len() > here.len() {
            // every local member is in: the other nodes' through the host
            let request = self.next_request;
            self.next_request += 1;
            b.upstream = Some(request);
            let data = encode_pairs(&std::mem::take(&mut job.unsent));
            self.fences.insert(request, (k.to_string(), name));
            self.out.push_back(Output::Host(Event::Fence {
                request,
                kvsname: k.to_string(),
                data,
            }));
            return;
        }
        self.release(k, &name, Ok(()));
    }

    /// Answer every member of barrier `name` of job `k`.
    pub(super) fn release(&mut self, k: &str, name: &str, result: Result<(), String>) {
        let Some(job) = self.jobs.get_mut(k) else {
            return;
        };
        let done = job
            .barriers
            .remove(name)
            .map(|b| b.arrived)
            .unwrap_or_default();
        for w in done.values() {
            match (&result, &w.tag) {
                (Ok(()), Some(t)) => self.send_to(w, w.resp, &[("rc", "0"), ("tag", t)]),
                (Ok(()), None) => self.send_to(w, w.resp, &[("rc", "0")]),
                (Err(e), _) => self.send_to(w, w.resp, &[("rc", "1"), (w.errkey(), e)]),
            }
        }
    }

    /// The host's answer to [`Event::Fence`]: every node's data
    /// ([`encode_pairs`] blobs, concatenated), stored in the job's KVS
    /// before the barrier's members are answered; or why it failed.
    pub fn fence_done(&mut self, request: u64, result: Result<Vec<u8>, String>) {
        let Some((k, name)) = self.fences.remove(&request) else {
            return;
        };
        let result = result.and_then(|blob| {
            decode_pairs(&blob).ok_or_else(|| "the nodes' fence data does not parse".to_string())
        });
        let result = match (result, self.jobs.get_mut(&k)) {
            (Ok(pairs), Some(job)) => {
                for (key, v) in pairs {
                    job.kvs_bytes += key.len() + v.len();
                    job.kvs.insert(key, v);
                }
                Ok(())
            }
            (Ok(_), None) => return,
            (Err(e), _) => {
                tracing::warn!(target: "pmix_wire::pmi", "fence of {k} failed: {e}");
                Err(e)
            }
        };
        self.release(&k, &name, result);
    }

    /// The host's answer to [`Event::JointFence`]: the PMIx fence
    /// completed and the store holds `pairs` (every rank's keys a PMI
    /// client can read, [`crate::pmi::joint::visible_to_pmi`]), stored in the
    /// job's KVS before the rank is answered; or why it failed. A pair
    /// the KVS cannot hold (a reserved `PMI_` key, too long, over the
    /// job's bytes) is left out and logged.
    pub fn joint_done(&mut self, request: u64, result: Result<Vec<(String, String)>, String>) {
        let Some((k, r, w)) = self.joints.remove(&request) else {
            return;
        };
        let pairs = match result {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!(target: "pmix_wire::pmi", "the PMIx fence of rank {r} of {k} failed: {e}");
                self.send_to(&w, w.resp, &[("rc", "1"), (w.errkey(), &e)]);
                return;
            }
        };
        if let Some(job) = self.jobs.get_mut(&k) {
            for (key, v) in pairs {
                let why = if key.starts_with("PMI_") {
                    Some("a reserved PMI_ key")
                } else if key.len() > MAX_KEY || v.len() > MAX_VALUE {
                    Some("longer than PMI's limits")
                } else {
                    None
                };
                let old = job.kvs.get(&key).map_or(0, |o| key.len() + o.len());
                let new = job.kvs_bytes - old + key.len() + v.len();
                let why = why.or((new > MAX_JOB_KVS).then_some("over the job's KVS bytes"));
                if let Some(why) = why {
                    tracing::warn!(target: "pmix_wire::pmi", "key {key:?} of the PMIx store not given to PMI clients of {k}: {why}");
                    continue;
                }
                job.kvs_bytes = new;
                job.kvs.insert(key, v);
            }
        }
        match &w.tag {
            Some(t) => self.send_to(&w, w.resp, &[("rc", "0"), ("tag", t)]),
            None => self.send_to(&w, w.resp, &[("rc", "0")]),
        }
    }

    /// Rank `r` of `k` is gone: every barrier it belongs to fails.
    pub(super) fn fail_barriers(&mut self, k: &str, r: u32) {
        let Some(job) = self.jobs.get_mut(k) else {
            return;
        };
        let names: Vec<String> = job
            .barriers
            .iter()
            .filter(|(_, b)| b.members.contains(&r))
            .map(|(n, _)| n.clone())
            .collect();
        let mut failed = Vec::new();
        for n in names {
            if let Some(b) = job.barriers.remove(&n) {
                failed.extend(b.arrived.into_values());
            }
        }
        let msg = format!("rank {r} of {k} left before the barrier completed");
        for w in failed {
            self.send_to(&w, w.resp, &[("rc", "1"), (w.errkey(), &msg)]);
        }
    }

    pub(super) fn putnodeattr(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let key = field(q, "info-putnodeattr", "key")?.to_string();
        let value = field(q, "info-putnodeattr", "value")?.to_string();
        check_len("info-putnodeattr", "key", &key, MAX_KEY)?;
        check_len("info-putnodeattr", "value", &value, MAX_VALUE)?;
        let (k, _) = self.who(conn);
        let job = self
            .jobs
            .get_mut(&k)
            .ok_or_else(|| Refusal::NoSuchRank(k.clone()))?;
        if job.node.len() >= 1 << 16 && !job.node.contains_key(&key) {
            return Err(Refusal::Limit("65536 node attributes".into()));
        }
        job.node.insert(key.clone(), value.clone());
        let (ready, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut job.node_waits)
            .into_iter()
            .partition(|(wk, _)| *wk == key);
        job.node_waits = keep;
        self.answer(conn, q, &[])?;
        for (_, w) in ready {
            self.send_to(
                &w,
                w.resp,
                &[("rc", "0"), ("found", "TRUE"), ("value", &value)],
            );
        }
        Ok(())
    }

    pub(super) fn getnodeattr(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let key = field(q, "info-getnodeattr", "key")?.to_string();
        let wait = q.msg.get("wait") == Some("TRUE");
        let (k, _) = self.who(conn);
        let w = self.waiter(conn, q, "info-getnodeattr-response");
        let job = self
            .jobs
            .get_mut(&k)
            .ok_or_else(|| Refusal::NoSuchRank(k.clone()))?;
        match job.node.get(&key).cloned() {
            Some(v) => self.answer(conn, q, &[("found", "TRUE"), ("value", &v)]),
            None if wait => {
                job.node_waits.push((key, w));
                Ok(())
            }
            None => self.answer(conn, q, &[("found", "FALSE")]),
        }
    }

    pub(super) fn getjobattr(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let key = field(q, "info-getjobattr", "key")?;
        let v = self.job(conn).and_then(|j| Self::jobattr(j, key));
        match v {
            Some(v) => self.answer(conn, q, &[("found", "TRUE"), ("value", &v)]),
            None => self.answer(conn, q, &[("found", "FALSE")]),
        }
    }

    pub(super) fn kvs_put(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let (k, rank) = self.who(conn);
        self.store(
            "kvs-put",
            (&k, rank),
            field(q, "kvs-put", "key")?,
            field(q, "kvs-put", "value")?,
        )?;
        self.answer(conn, q, &[])
    }

    pub(super) fn kvs_get(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let (mine, _) = self.who(conn);
        let k = q.msg.get("jobid").unwrap_or(&mine).to_string();
        let key = field(q, "kvs-get", "key")?;
        let v = self.jobs.get(&k).and_then(|j| Self::jobattr(j, key));
        match v {
            Some(v) => self.answer(conn, q, &[("found", "TRUE"), ("value", &v)]),
            None => self.answer(conn, q, &[("found", "FALSE")]),
        }
    }
}
