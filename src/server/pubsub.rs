//! Publish / lookup / unpublish, with waiting lookups.

use super::*;

pub(super) struct PendingLookup {
    pub(super) conn: ConnId,
    pub(super) tag: u32,
    pub(super) keys: Vec<String>,
    pub(super) deadline: Instant,
}

impl Server {
    pub(super) fn answer_lookup(&mut self, id: ConnId, t: u32, keys: &[String]) -> bool {
        let found: Vec<Pdata> = keys
            .iter()
            .filter_map(|k| self.published.iter().find(|(pk, _)| pk == k))
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
        let pending = std::mem::take(&mut self.lookups);
        for l in pending {
            if !self.answer_lookup(l.conn, l.tag, &l.keys) {
                self.lookups.push(l);
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
            self.published.retain(|(pk, _)| *pk != k);
            self.published.push((
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
                self.lookups.push(PendingLookup {
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
        self.published
            .retain(|(k, d)| !(d.proc == *proc && (keys.is_empty() || keys.contains(k))));
        self.reply(id, t, &Reply::Status(codes::PMIX_SUCCESS));
    }
}
