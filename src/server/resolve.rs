//! RESOLVE_PEERS and RESOLVE_NODE (issue #36 item 3): the processes of a
//! namespace on a node, and the nodes of a namespace, answered from the
//! jobs the host registered, in the layout libpmix 5.0.11's server sends
//! (STATUS, then SIZE + PROCs; STATUS, then STRING: spec-notes/commands.md).
//!
//! A libpmix 4.2.2 client never sends these (it reads `pmix.lpeers` and
//! `pmix.nlist` from its job data). A 5.0.11 client sends them whenever it
//! is connected, and on any other answer resolves from its own store:
//! for a namespace it does not know (a job spawned by a peer it never
//! connected to) that is SUCCESS with no node list, and OpenPMIx's
//! resolve example then dies splitting the NULL list (spec-notes/server.md).

#![forbid(unsafe_code)]

use super::Server;
use pmix_codec::msg::Reply;
use pmix_types::status::codes;
use pmix_types::{PString, Proc};

impl Server {
    /// Each node of job `nspace` with its ranks (one node holding every
    /// rank unless the host gave a node map).
    fn nodes_of(&self, nspace: &str) -> Option<Vec<(String, Vec<u32>)>> {
        let j = self.jobs.get(nspace)?;
        Some(match &j.nodes {
            Some(m) => m.nodes.clone(),
            None => vec![(j.spec.hostname.clone(), (0..j.spec.nprocs).collect())],
        })
    }

    /// The namespaces a request names: the one given, or every job's when
    /// it is empty (as the 5.0.11 client aggregates its own namespaces).
    fn named(&self, nspace: &str) -> Vec<String> {
        if nspace.is_empty() {
            self.jobs.keys().cloned().collect()
        } else {
            vec![nspace.to_string()]
        }
    }

    /// RESOLVE_PEERS: the ranks of `nspace` (every job's when empty) on
    /// `node`, in rank order; none when the job has no rank there;
    /// NOT_FOUND for a namespace this server does not know.
    pub(super) fn resolve_peers(&self, node: &str, nspace: &str) -> Reply {
        let mut procs = Vec::new();
        for ns in self.named(nspace) {
            let Some(nodes) = self.nodes_of(&ns) else {
                return Reply::Status(codes::PMIX_ERR_NOT_FOUND);
            };
            for (_, ranks) in nodes.iter().filter(|(h, _)| h == node) {
                procs.extend(ranks.iter().map(|r| Proc::new(&ns, *r)));
            }
        }
        Reply::Peers {
            status: codes::PMIX_SUCCESS,
            procs: Some(procs),
        }
    }

    /// RESOLVE_NODE: the nodes of `nspace` (of every job when empty),
    /// comma-separated, each once, in the job's node order; NOT_FOUND for
    /// a namespace this server does not know.
    pub(super) fn resolve_node(&self, nspace: &str) -> Reply {
        let mut list: Vec<String> = Vec::new();
        for ns in self.named(nspace) {
            let Some(nodes) = self.nodes_of(&ns) else {
                return Reply::Status(codes::PMIX_ERR_NOT_FOUND);
            };
            for (host, _) in nodes {
                if !list.contains(&host) {
                    list.push(host);
                }
            }
        }
        Reply::Nodes {
            status: codes::PMIX_SUCCESS,
            nodelist: Some(Some(PString::from(list.join(",").as_str()))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::{JobSpec, NodeMap};

    fn two_jobs() -> Server {
        let mut s = Server::new();
        for (ns, n) in [("a", 3), ("b", 1)] {
            s.register_nspace(JobSpec {
                nspace: ns.into(),
                nprocs: n,
                hostname: "h1".into(),
                info: vec![],
            });
        }
        s.set_nodes(
            "a",
            NodeMap {
                nodes: vec![("h1".into(), vec![0, 2]), ("h2".into(), vec![1])],
                me: 0,
            },
        );
        s
    }

    #[test]
    fn peers_and_nodes_of_one_job_of_every_job_and_of_none() {
        let s = two_jobs();
        let peers = |node: &str, ns: &str| match s.resolve_peers(node, ns) {
            Reply::Peers {
                status: 0,
                procs: Some(p),
            } => p
                .iter()
                .map(|p| format!("{}:{}", p.nspace, p.rank))
                .collect::<Vec<_>>()
                .join(","),
            r => format!("{r:?}"),
        };
        assert_eq!(peers("h1", "a"), "a:0,a:2");
        assert_eq!(peers("h2", "a"), "a:1");
        assert_eq!(peers("h3", "a"), "");
        assert_eq!(peers("h1", ""), "a:0,a:2,b:0");
        assert_eq!(
            s.resolve_peers("h1", "zz"),
            Reply::Status(codes::PMIX_ERR_NOT_FOUND)
        );
        let nodes = |ns: &str| match s.resolve_node(ns) {
            Reply::Nodes {
                status: 0,
                nodelist: Some(Some(l)),
            } => l.to_string(),
            r => format!("{r:?}"),
        };
        assert_eq!(nodes("a"), "h1,h2");
        assert_eq!(nodes("b"), "h1");
        assert_eq!(nodes(""), "h1,h2");
        assert_eq!(
            s.resolve_node("zz"),
            Reply::Status(codes::PMIX_ERR_NOT_FOUND)
        );
    }
}
