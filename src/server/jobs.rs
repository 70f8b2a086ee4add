//! The jobs the host registered and the state of each rank: its
//! connections, whether it committed, finalized or was lost, and the data
//! it committed for local and remote peers.

#![forbid(unsafe_code)]

use super::spawn::Origin;
use super::{ConnId, JobSpec};
use bytes::Bytes;
use pmix_codec::{DataBuffer, Format};
use pmix_types::{DataType, Kval, Value};

#[derive(Default)]
pub(super) struct RankState {
    /// Connections serving this rank: every process verified to be the
    /// rank's own (the launched process, a helper it forked), or, while
    /// none is, every claim that could not be verified either way; as
    /// libpmix does, all are served and the rank is gone only when the
    /// last one goes.
    pub(super) conns: Vec<ConnId>,
    /// Those whose process was verified to be the rank's.
    pub(super) verified: Vec<ConnId>,
    /// Its connections have all ended after finalizing while its launched
    /// process runs on: another of its processes may still connect, so
    /// collectives wait for it until the host reports the exit.
    pub(super) dormant: bool,
    /// The process the host launched for this rank, if it said.
    pub(super) pid: Option<u32>,
    /// One of its connections finalized.
    pub(super) finalized: bool,
    /// Its connection ended before it finalized: it can never call in.
    pub(super) lost: bool,
    pub(super) committed: bool,
    /// What the rank committed for local peers (LOCAL and GLOBAL scope).
    pub(super) local: Committed,
    /// What it committed for remote peers (REMOTE and GLOBAL scope); for a
    /// rank on another node, the data its server sent through the host.
    pub(super) remote: Committed,
    /// The rank runs on another node (its data comes through the host).
    pub(super) elsewhere: bool,
    /// A rank elsewhere whose data a fence collected and the host holds,
    /// to fetch when it is asked for ([`super::Server::data_at_host`]).
    pub(super) at_host: bool,
}

/// A rank's KVALs for one audience (local or remote peers), and, while
/// they are exactly what one commit brought, the same KVALs as they came on
/// the wire: every GET reply and fence contribution that carries them in
/// that format reuses those bytes instead of packing the KVALs again (the
/// packing was a sixth of the server's own instructions per client in
/// benches/server_load).
#[derive(Default)]
pub(super) struct Committed {
    kvals: Vec<Kval>,
    wire: Option<(Format, Bytes)>,
    /// Keys the rank deleted (7.0's delete scopes) and has not put again.
    deleted: Vec<String>,
}

impl Committed {
    /// The KVALs, in the order they came.
    pub(super) fn kvals(&self) -> &[Kval] {
        &self.kvals
    }

    /// Replace them all (data from another node).
    pub(super) fn set(&mut self, kvals: Vec<Kval>) {
        self.kvals = kvals;
        self.wire = None;
    }

    /// Add these, a KVAL replacing an earlier one of the same key; `wire`
    /// is `items` as packed in its format, kept only when the KVALs are
    /// then exactly `items`.
    pub(super) fn commit(&mut self, items: Vec<Kval>, wire: Option<(Format, Bytes)>) {
        let mut exact = self.kvals.is_empty();
        if !self.deleted.is_empty() {
            self.deleted.retain(|d| {
                !items
                    .iter()
                    .any(|k| k.key.as_ref().and_then(|p| p.as_str()) == Some(d))
            });
        }
        for k in items {
            if let Some(old) = self.kvals.iter_mut().find(|o| o.key == k.key) {
                *old = k;
                exact = false;
            } else {
                self.kvals.push(k);
            }
        }
        self.wire = if exact { wire } else { None };
    }

    /// Whether the rank deleted `key` and has not put it again.
    pub(super) fn was_deleted(&self, key: &str) -> bool {
        self.deleted.iter().any(|k| k == key)
    }

    /// Drop the KVAL of `key` (a 7.0 client's delete scope); whether
    /// there was one.
    pub(super) fn delete(&mut self, key: &str) -> bool {
        if !self.was_deleted(key) {
            self.deleted.push(key.to_string());
        }
        let before = self.kvals.len();
        self.kvals
            .retain(|k| k.key.as_ref().map(|p| p.as_bytes()) != Some(key.as_bytes()));
        let gone = self.kvals.len() != before;
        if gone {
            self.wire = None;
        }
        gone
    }

    /// The KVALs packed in `fmt`, one after the other.
    pub(super) fn packed(&self, fmt: &Format) -> Option<Bytes> {
        if let Some((f, b)) = &self.wire {
            if f == fmt {
                return Some(b.clone());
            }
        }
        packed_kvals(fmt, &self.kvals)
    }
}

/// `kvals` packed in `fmt`, one after the other.
pub(super) fn packed_kvals(fmt: &Format, kvals: &[Kval]) -> Option<Bytes> {
    let mut b = DataBuffer::new(*fmt);
    for k in kvals {
        b.pack(DataType::Kval, &[Value::Kval(Box::new(k.clone()))])
            .ok()?;
    }
    Some(Bytes::copy_from_slice(b.as_bytes()))
}

pub(super) struct Job {
    pub(super) spec: JobSpec,
    pub(super) ranks: Vec<RankState>,
    /// The job's nodes when it spans several ([`Server::set_nodes`]).
    pub(super) nodes: Option<NodeMap>,
    /// Its parent and applications, if the host said (spawn.rs).
    pub(super) origin: Origin,
    /// The shared store holds it (shared_store.rs); once its job data is
    /// written, in this format.
    pub(super) shared: Option<Option<Format>>,
}

/// Where a job's ranks run when it spans nodes: each node's name and its
/// ranks (ascending), and which node this server is.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeMap {
    /// Each node's name and its ranks, ascending.
    pub nodes: Vec<(String, Vec<u32>)>,
    /// The index in `nodes` of this server's node.
    pub me: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use pmix_codec::{BufferType, Dialect};

    fn kv(k: &str, v: Value) -> Kval {
        Kval {
            key: Some(k.into()),
            value: v,
        }
    }

    fn pack(fmt: Format, kvals: &[Kval]) -> Bytes {
        let mut b = DataBuffer::new(fmt);
        for k in kvals {
            b.pack(DataType::Kval, &[Value::Kval(Box::new(k.clone()))])
                .unwrap();
        }
        Bytes::copy_from_slice(b.as_bytes())
    }

    #[test]
    fn committed_wire_bytes_are_reused_only_while_they_are_the_kvals() {
        let first = vec![kv("a", Value::Uint32(1)), kv("b", Value::Bool(true))];
        let fully = Format::new(Dialect::V41, BufferType::FullyDesc);
        for fmt in [Format::V41, fully] {
            let wire = pack(fmt, &first);
            let mut c = Committed::default();
            c.commit(first.clone(), Some((fmt, wire.clone())));
            // the same bytes, not a copy packed again
            let got = c.packed(&fmt).unwrap();
            assert_eq!(got, wire);
            assert_eq!(got.as_ptr(), wire.as_ptr());
            // another format: packed afresh
            let v20 = Format::new(Dialect::V20, BufferType::NonDesc);
            assert_eq!(c.packed(&v20).unwrap(), pack(v20, &first));
            // a second commit replacing a key: the wire bytes are stale
            let again = vec![kv("b", Value::Bool(false)), kv("c", Value::Uint8(3))];
            c.commit(again.clone(), Some((fmt, pack(fmt, &again))));
            let now = [first[0].clone(), again[0].clone(), again[1].clone()];
            assert_eq!(c.kvals(), &now);
            assert_eq!(c.packed(&fmt).unwrap(), pack(fmt, &now));
            // a commit into an empty store that repeats a key: not exact
            let mut d = Committed::default();
            let dup = vec![kv("x", Value::Uint32(1)), kv("x", Value::Uint32(2))];
            d.commit(dup.clone(), Some((fmt, pack(fmt, &dup))));
            assert_eq!(d.packed(&fmt).unwrap(), pack(fmt, &[dup[1].clone()]));
            // data from another node replaces everything
            d.set(first.clone());
            assert_eq!(d.packed(&fmt).unwrap(), pack(fmt, &first));
        }
    }
}
