//! The name service: publish, unpublish and lookup, answered here or by the host.

#![forbid(unsafe_code)]

use super::commands::command;
use super::{
    check_len, field, ConnId, Event, Job, NameOp, Output, Query, Refusal, Server, WireKind,
    MAX_VALUE,
};

impl Server {
    pub(super) fn service(q: &Query) -> Result<String, Refusal> {
        q.msg
            .get("service")
            .or(q.msg.get("name"))
            .map(str::to_string)
            .ok_or_else(|| Refusal::BadField {
                cmd: "publish",
                detail: "no service name".into(),
            })
    }

    /// A job across nodes names through the host (one name service for
    /// every node); true if `op` went there.
    pub(super) fn name_upstream(&mut self, conn: ConnId, q: &Query, op: NameOp) -> bool {
        if !self.job(conn).is_some_and(Job::spans_nodes) {
            return false;
        }
        let resp = command(&q.msg.cmd, q.wire).map_or("", |c| c.response);
        let w = self.waiter(conn, q, resp);
        let request = self.next_request;
        self.next_request += 1;
        self.names.insert(request, w);
        self.out
            .push_back(Output::Host(Event::Name { request, op }));
        true
    }

    /// The host's answer to [`Event::Name`]: done (with the port, for a
    /// lookup), or why not (a lookup of an unknown name included).
    pub fn name_done(&mut self, request: u64, result: Result<Option<String>, String>) {
        let Some(w) = self.names.remove(&request) else {
            return;
        };
        match result {
            Ok(Some(port)) if w.wire == WireKind::V1 => {
                self.send_to(&w, w.resp, &[("rc", "0"), ("port", &port)])
            }
            Ok(Some(port)) => self.send_to(
                &w,
                w.resp,
                &[
                    ("rc", "0"),
                    ("found", "TRUE"),
                    ("port", &port),
                    ("value", &port),
                ],
            ),
            Ok(None) => self.send_to(&w, w.resp, &[("rc", "0")]),
            Err(e) => self.send_to(&w, w.resp, &[("rc", "1"), (w.errkey(), &e)]),
        }
    }

    pub(super) fn publish(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let name = Self::service(q)?;
        let port = field(q, "publish", "port")?.to_string();
        check_len("publish", "service name", &name, MAX_VALUE)?;
        check_len("publish", "port", &port, MAX_VALUE)?;
        if self.name_upstream(
            conn,
            q,
            NameOp::Publish {
                name: name.clone(),
                port: port.clone(),
            },
        ) {
            return Ok(());
        }
        if self.published.contains_key(&name) {
            // hydra: a second publish of a name fails
            return Err(Refusal::BadField {
                cmd: "publish",
                detail: "key_already_present".into(),
            });
        }
        if self.published.len() >= 1 << 16 {
            return Err(Refusal::Limit("65536 names published".into()));
        }
        self.published.insert(name, port);
        self.answer(conn, q, &[])
    }

    pub(super) fn unpublish(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let name = Self::service(q)?;
        if self.name_upstream(conn, q, NameOp::Unpublish { name: name.clone() }) {
            return Ok(());
        }
        if self.published.remove(&name).is_none() {
            return Err(Refusal::NotFound("service_not_found"));
        }
        self.answer(conn, q, &[])
    }

    pub(super) fn lookup(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let name = Self::service(q)?;
        if self.name_upstream(conn, q, NameOp::Lookup { name: name.clone() }) {
            return Ok(());
        }
        match self.published.get(&name).cloned() {
            Some(port) => match q.wire {
                WireKind::V1 => self.answer(conn, q, &[("port", &port)]),
                // MPICH reads `port`, Slurm's libpmi2 `value`
                WireKind::V2 => self.answer(
                    conn,
                    q,
                    &[("found", "TRUE"), ("port", &port), ("value", &port)],
                ),
            },
            None => Err(Refusal::NotFound("service_not_found")),
        }
    }
}
