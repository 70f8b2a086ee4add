//! Routing a connected peer's request to the part of the core that
//! answers it.

use super::*;

impl Server {
    pub(super) fn message(&mut self, id: ConnId, t: u32, payload: &[u8], now: Instant) -> bool {
        let (proc, fmt, tool) = match self.conns.get(&id).map(|c| &c.state) {
            Some(ConnState::Client { proc, fmt }) => (proc.clone(), *fmt, None),
            Some(ConnState::Tool { proc, fmt, version }) => {
                (proc.clone(), *fmt, Some(version.clone()))
            }
            _ => return false,
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
            // tools are not ranks of a job: init, queries, lookups, events, finalize
            match req {
                Request::Req => {
                    let r = Self::tool_job_info(&proc, &version);
                    self.reply(id, t, &r);
                    return true;
                }
                Request::Query { .. }
                | Request::JobControl { .. }
                | Request::Get { .. }
                | Request::Lookup { .. }
                | Request::RegEvents { .. }
                | Request::DeregEvents { .. }
                | Request::Log { .. } => {}
                Request::Finalize => {
                    self.reply(id, t, &Reply::Status(codes::PMIX_SUCCESS));
                    return true;
                }
                _ => {
                    self.reply(id, t, &Reply::Status(codes::PMIX_ERR_NOT_SUPPORTED));
                    return true;
                }
            }
        }
        let me = name(&proc);
        match req {
            Request::Req => match self.job_info(&fmt, &me.0) {
                Some(r) => self.reply(id, t, &r),
                None => self.reply(id, t, &Reply::Status(codes::PMIX_ERR_NOT_FOUND)),
            },
            Request::Commit { blobs } => {
                let mut local = Vec::new();
                let mut remote = Vec::new();
                for (scope, buf) in blobs {
                    // LOCAL (1) and GLOBAL (3) data is for local peers; the
                    // client sends GLOBAL keys in both sections
                    // the blob's own type byte; v20/v12 send none, and the
                    // connection's type applies
                    let bf = Format {
                        buffer_type: match buf.buffer_type {
                            1 => pmix_codec::BufferType::NonDesc,
                            2 => pmix_codec::BufferType::FullyDesc,
                            _ => fmt.buffer_type,
                        },
                        ..fmt
                    };
                    let mut b = DataBuffer::from_bytes(bf, buf.bytes.clone());
                    while !b.unread().is_empty() {
                        match b.unpack_one(DataType::Kval) {
                            Ok(Value::Kval(k)) if scope == 1 || scope == 3 => local.push(*k),
                            Ok(Value::Kval(k)) if scope == 2 => remote.push(*k),
                            Ok(_) => {}
                            Err(_) => return false,
                        }
                    }
                }
                if let Some(r) = self
                    .jobs
                    .get_mut(&me.0)
                    .and_then(|j| j.ranks.get_mut(me.1 as usize))
                {
                    // GLOBAL keys arrive in both sections: the LOCAL one
                    // holds them for local peers, the REMOTE one for others
                    let upsert = |to: &mut Vec<Kval>, k: Kval| {
                        if let Some(old) = to.iter_mut().find(|o| o.key == k.key) {
                            *old = k;
                        } else {
                            to.push(k);
                        }
                    };
                    for k in local {
                        upsert(&mut r.local, k);
                    }
                    for k in remote {
                        upsert(&mut r.remote, k);
                    }
                    r.committed = true;
                }
                self.reply(id, t, &Reply::Status(codes::PMIX_SUCCESS));
                self.out.push_back(Output::Host(HostEvent::Committed(proc)));
                self.resolve_gets(&me);
            }
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
            Request::GroupDestruct { group, .. } => {
                // over the group's members (group.rs); a group we do not
                // know: every rank of the caller's job
                let g = group.map(|g| g.to_string()).unwrap_or_default();
                let all = self
                    .group_destruct_members(&g)
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
            Request::Publish { info, .. } => {
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
            Request::Lookup { keys, info, .. } => {
                let keys: Vec<String> = keys.into_iter().flatten().map(|k| k.to_string()).collect();
                if !self.answer_lookup(id, t, &keys) {
                    if info_true(&info, "pmix.wait") {
                        let wait = info_u32(&info, "pmix.timeout")
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
            Request::Unpublish { keys, .. } => {
                let keys: Vec<String> = keys.into_iter().flatten().map(|k| k.to_string()).collect();
                self.published
                    .retain(|(k, d)| !(d.proc == proc && (keys.is_empty() || keys.contains(k))));
                self.reply(id, t, &Reply::Status(codes::PMIX_SUCCESS));
            }
            Request::RegEvents { codes, .. } => {
                if let Some(c) = self.conns.get_mut(&id) {
                    let e = c.events.get_or_insert_with(Vec::new);
                    e.extend(codes);
                }
                self.reply(id, t, &Reply::Status(codes::PMIX_SUCCESS));
            }
            Request::DeregEvents { .. } => {}
            Request::Notify {
                status: code,
                range,
                mut info,
            } => {
                self.reply(id, t, &Reply::Status(codes::PMIX_SUCCESS));
                // beyond this node, the host spreads it (and answers nothing)
                if !matches!(range, range::LOCAL | range::PROC_LOCAL) {
                    self.out.push_back(Output::Host(HostEvent::Notified {
                        code,
                        source: proc.clone(),
                        range,
                        info: info.clone(),
                    }));
                }
                info.push(Info::new("pmix.srvr.internal.notify", Value::Bool(true)));
                self.deliver_event(Some(id), code, &proc, info, range);
            }
            Request::Query { queries } => {
                let r = self.query(&queries);
                self.reply(id, t, &r);
            }
            Request::Log { data, .. } => {
                self.reply(id, t, &Reply::Status(codes::PMIX_SUCCESS));
                self.out
                    .push_back(Output::Host(HostEvent::Log { proc, data }));
            }
            // everything else needs a host we do not have
            // the native security module: a credential is the euid and egid
            // the peer's handshake carried; it validates when it matches
            // that of the connection asking
            Request::GetCredential { .. } => {
                let cred = self
                    .conns
                    .get(&id)
                    .map(|c| c.credential.clone())
                    .unwrap_or_default();
                let r = if cred.len() == 8 {
                    Reply::Credential {
                        status: codes::PMIX_SUCCESS,
                        credential: Some(cred),
                        info: Some(vec![Info::new("pmix.sec.ctype", pstr("native"))]),
                    }
                } else {
                    Reply::Status(codes::PMIX_ERR_NOT_SUPPORTED)
                };
                self.reply(id, t, &r);
            }
            Request::ValidateCred { credential, .. } => {
                let mine = self
                    .conns
                    .get(&id)
                    .map(|c| c.credential.clone())
                    .unwrap_or_default();
                let r = if credential.len() == 8 && credential == mine {
                    Reply::Infos {
                        status: codes::PMIX_SUCCESS,
                        info: Some(vec![]),
                    }
                } else {
                    Reply::Status(codes::PMIX_ERR_INVALID_CRED)
                };
                self.reply(id, t, &r);
            }
            Request::JobControl {
                targets,
                directives,
            } => self.job_control(id, t, proc, targets, &directives),
            Request::Spawn { info, apps } => {
                let request = self.next_request;
                self.next_request += 1;
                self.spawns.insert(request, (id, t));
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
