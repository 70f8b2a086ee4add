//! Routing a connected peer's request to the part of the core that
//! answers it.

use super::*;

impl Server {
    /// A rank's REQ: the job data of its namespace, shared by every rank.
    pub(super) fn answer_req(&mut self, id: ConnId, t: u32, nspace: &str) {
        let Some(fmt) = self.fmt_of(id) else { return };
        self.shared_job(&fmt, nspace);
        match self.job_info_frame(&fmt, nspace, t) {
            Some(b) => self.out.push_back(Output::Send(id, b)),
            None => self.reply(id, t, &Reply::Status(codes::PMIX_ERR_NOT_FOUND)),
        }
    }

    pub(super) fn message(&mut self, id: ConnId, t: u32, payload: &[u8], now: Instant) -> bool {
        let Some(c) = self.conns.get(&id) else {
            return false;
        };
        let (proc, tool) = match &c.state {
            ConnState::Client { proc } => (proc.clone(), None),
            ConnState::Tool { proc, version } => (proc.clone(), Some(version.clone())),
            ConnState::Handshake => return false,
        };
        let Some(fmt) = c.format() else {
            return false;
        };
        if t == tag::HEARTBEAT && payload.is_empty() {
            return true;
        }
        let req = match Request::decode(&fmt, payload) {
            Ok(r) => r,
            // garbage after the handshake drops this peer only
            Err(_) => return false,
        };
        if let Some(version) = tool {
            // tools are not ranks of a job (tool_peers.rs)
            if self.tool_request(id, t, &proc, &version, &req) {
                return true;
            }
        }
        let me = name(&proc);
        match req {
            Request::Req => {
                // the job data waits for the node map (Server::await_nodes)
                if !self.jobinfo.hold(&me.0, id, t) {
                    self.answer_req(id, t, &me.0);
                }
            }
            Request::Commit { blobs } => return self.commit(id, t, &fmt, proc, blobs),
            Request::Fence { procs, info } => {
                let collect = info_true(&info, "pmix.collect");
                self.collective(CollKind::Fence(collect), id, t, &me, &procs)
            }
            Request::Connect { procs, .. } => {
                self.collective(CollKind::Connect, id, t, &me, &procs)
            }
            Request::Disconnect { procs, .. } => {
                self.collective(CollKind::Disconnect, id, t, &me, &procs)
            }
            Request::GroupConstruct { group, procs, info } => {
                let g = group.map(|g| g.to_string()).unwrap_or_default();
                let members = if procs.is_empty() {
                    self.expand(&[Proc::new(&me.0, RANK_WILDCARD)])
                } else {
                    self.expand(&procs)
                };
                self.group_construct_called(&me, &g, members, &info);
                self.collective(CollKind::GroupConstruct, id, t, &me, &procs)
            }
            Request::GroupLeave { group, .. } => {
                let g = group.map(|g| g.to_string()).unwrap_or_default();
                let st = self.group_leave(&proc, &g);
                self.reply(id, t, &Reply::Status(st));
            }
            Request::GroupDestruct { group, procs, .. } => {
                // over the group's members (group.rs); a group we do not
                // know: the members a 5.0+ caller names, else every rank
                // of the caller's job
                let g = group.map(|g| g.to_string()).unwrap_or_default();
                let all = self
                    .group_destruct_members(&g)
                    .or(procs.filter(|p| !p.is_empty()))
                    .unwrap_or_else(|| vec![Proc::new(&me.0, RANK_WILDCARD)]);
                self.collective(CollKind::GroupDestruct, id, t, &me, &all)
            }
            Request::Get {
                nspace,
                rank,
                info,
                key,
            } => {
                let ns = nspace.map(|s| s.to_string()).unwrap_or_default();
                let key = key.flatten().map(|k| k.to_string());
                self.get(id, t, &fmt, ns, rank, key, &info, now);
            }
            Request::Finalize => {
                if let Some(c) = self.conns.get_mut(&id) {
                    c.finalized = true;
                }
                // before the reply, as for an abort
                self.out.push_back(Output::Host(HostEvent::Finalized(proc)));
                self.reply(id, t, &Reply::Status(codes::PMIX_SUCCESS));
            }
            Request::Abort {
                status: st,
                message,
                ..
            } => {
                // the host hears of the abort before the client can read
                // the reply and exit: a host that reaps the exit and then
                // drains its events always finds the abort first
                self.out.push_back(Output::Host(HostEvent::Aborted {
                    proc,
                    status: st,
                    message: message.map(|m| m.to_string()),
                }));
                self.reply(id, t, &Reply::Status(codes::PMIX_SUCCESS));
            }
            Request::Publish { info, .. } => self.publish(id, t, &proc, info),
            Request::Lookup { keys, info, .. } => self.lookup(id, t, keys, &info, now),
            Request::Unpublish { keys, .. } => self.unpublish(id, t, &proc, keys),
            Request::RegEvents { codes, .. } => self.register_events(id, t, codes),
            Request::DeregEvents { .. } => {}
            Request::Notify {
                status,
                range,
                info,
            } => self.client_notify(id, t, &proc, status, range, info),
            Request::Query { queries } => {
                let r = self.query(&queries);
                self.reply(id, t, &r);
            }
            Request::Log { data, .. } => {
                self.reply(id, t, &Reply::Status(codes::PMIX_SUCCESS));
                self.out
                    .push_back(Output::Host(HostEvent::Log { proc, data }));
            }
            // the native security module (connection.rs)
            Request::GetCredential { .. } => self.get_credential(id, t),
            Request::ValidateCred { credential, .. } => {
                self.validate_credential(id, t, &credential)
            }
            Request::JobControl {
                targets,
                directives,
            } => self.job_control(id, t, proc, targets, &directives),
            Request::Spawn { info, apps } => {
                let request = self.requests.spawn((id, t));
                self.out.push_back(Output::Host(HostEvent::Spawn {
                    request,
                    requester: proc,
                    info,
                    apps,
                }));
            }
            _ => self.reply(id, t, &Reply::Status(codes::PMIX_ERR_NOT_SUPPORTED)),
        }
        true
    }
}
