//! Publish / lookup / unpublish, with waiting lookups.

#![forbid(unsafe_code)]

use super::{info_true, info_u32, ConnId, Server};
use pmix_codec::msg::Reply;
use pmix_types::status::codes;
use pmix_types::{Info, PString, Pdata, Proc};
use std::time::{Duration, Instant};

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

    /// PUBLISH: `pmix.*` keys are not published; a key published again
    /// replaces the older value. Waiting lookups are retried.
    pub(super) fn publish(&mut self, id: ConnId, t: u32, proc: &Proc, info: Vec<Info>) {
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

    /// LOOKUP: answered now, or (with `pmix.wait`) when every key is
    /// published or its `pmix.timeout` expires.
    pub(super) fn lookup(
        &mut self,
        id: ConnId,
        t: u32,
        keys: Vec<Option<PString>>,
        info: &[Info],
        now: Instant,
    ) {
        let keys: Vec<String> = keys.into_iter().flatten().map(|k| k.to_string()).collect();
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

    /// UNPUBLISH: the caller's keys (all of them if none named).
    pub(super) fn unpublish(
        &mut self,
        id: ConnId,
        t: u32,
        proc: &Proc,
        keys: Vec<Option<PString>>,
    ) {
        let keys: Vec<String> = keys.into_iter().flatten().map(|k| k.to_string()).collect();
        self.pubsub
            .published
            .retain(|(k, d)| !(d.proc == *proc && (keys.is_empty() || keys.contains(k))));
        self.reply(id, t, &Reply::Status(codes::PMIX_SUCCESS));
    }
}
