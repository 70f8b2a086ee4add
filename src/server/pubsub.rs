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
}
