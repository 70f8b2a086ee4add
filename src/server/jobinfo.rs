//! The job-info (REQ) reply, built once per (namespace, format, version).

use super::*;

impl Server {
    /// The job data changed: forget every job-info reply built from it,
    /// and its framed copies (shared.rs).
    pub(super) fn job_info_changed(&self) {
        self.job_info_cache.borrow_mut().clear();
        self.job_info_frames.borrow_mut().clear();
    }

    /// What the job info of `nspace` in `fmt` is cached under: it also
    /// holds the version the namespace's first client announced.
    pub(super) fn job_info_key(&self, fmt: &Format, nspace: &str) -> (String, Format, String) {
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
        if let Some(r) = self.job_info_cache.borrow().get(&key) {
            return Some(r.clone());
        }
        let r = self.build_job_info(fmt, nspace)?;
        self.job_info_cache.borrow_mut().insert(key, r.clone());
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
        kvals.push(kval(
            "pmix.ssn.arr",
            info_array(vec![
                Info::new("pmix.session.id", Value::Uint32(u32::MAX)),
                Info::new("pmix.univ.size", Value::Uint32(n)),
            ]),
        ));
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
            kvals.push(kval(
                "pmix.node.arr",
                info_array(vec![
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
                ]),
            ));
        }
        // every rank's node and its place there
        let mut place = vec![(0usize, 0u16); n as usize];
        for (id, (_, ranks)) in map.nodes.iter().enumerate() {
            for (k, r) in ranks.iter().enumerate() {
                if let Some(p) = place.get_mut(*r as usize) {
                    *p = (id, k as u16);
                }
            }
        }
        for (r, (id, lrank)) in place.into_iter().enumerate() {
            let host = map.nodes.get(id).map(|n| n.0.as_str()).unwrap_or("");
            let mut b = DataBuffer::new(*fmt);
            let items = [
                kval("pmix.lrank", Value::Uint16(lrank)),
                kval("pmix.nrank", Value::Uint16(lrank)),
                kval("pmix.appnum", Value::Uint32(0)),
                kval("pmix.hname", pstr(host)),
                kval("pmix.nodeid", Value::Uint32(id as u32)),
            ];
            b.pack(DataType::ProcRank, &[Value::ProcRank(r as u32)])
                .ok()?;
            for k in items {
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
