//! Tools, launchers and spawn: the tool handshake, a tool's REQ, the
//! host's answer to a spawn.

#![forbid(unsafe_code)]

use super::{kval, pstr, ConnId, ConnState, Output, Server};
use pmix_codec::handshake::{peer_type, ConnectRequest, ToolReply};
use pmix_codec::msg::{Reply, Request};
use pmix_types::status::codes;
use pmix_types::{Info, PString, Proc, Value};
use std::collections::BTreeMap;

/// The tool area's state: the identity tools are told is the server's,
/// and how many tools were given an identity.
pub(super) struct Tools {
    /// This server's own identity.
    identity: Proc,
    /// Identities assigned so far.
    assigned: u32,
    /// Who names a connecting tool.
    mode: ToolConnections,
    /// Tool handshakes out with the host: request id → the connection
    /// and its request.
    pending: BTreeMap<u64, (ConnId, ConnectRequest)>,
}

impl Default for Tools {
    fn default() -> Self {
        Tools {
            identity: Proc::new("pmixw-server", 0),
            assigned: 0,
            mode: ToolConnections::Local,
            pending: BTreeMap::new(),
        }
    }
}

/// Who accepts a tool's (or launcher's) connection and names it
/// ([`Server::set_tool_connections`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolConnections {
    /// The core: a tool that needs an identity is given one
    /// (`pmixw-tool-<n>`, rank 0), one that names itself keeps its name.
    /// The default.
    #[default]
    Local,
    /// The host: every tool handshake becomes
    /// [`HostEvent::ToolConnected`](super::HostEvent::ToolConnected) (the
    /// tool's infos, then `pmix.version`, `pmix.euid`, `pmix.egid` and,
    /// when it named itself, `pmix.nspace` and `pmix.rank`, as libpmix
    /// 4.2.2 hands its host's `tool_connected`), and the tool is answered
    /// when the host names it ([`Server::tool_connected_done`]): the name
    /// the host gives is the tool's (sent back to a tool that asked for
    /// one), an error refuses it.
    Host,
}

impl Tools {
    /// The server's own nspace and rank.
    pub(super) fn set_identity(&mut self, identity: Proc) {
        self.identity = identity;
    }

    /// The server's own nspace and rank.
    pub(super) fn identity(&self) -> &Proc {
        &self.identity
    }

    /// A new identity for a tool that needs one.
    fn assign(&mut self) -> Proc {
        self.assigned += 1;
        Proc::new(&format!("pmixw-tool-{}", self.assigned), 0)
    }
}

impl Server {
    /// Tools, launchers and singletons: an identity (assigned for flags 3
    /// and 6, else the one announced), then the tool reply (protocol.md
    /// §4.3.2). Singletons (flag 9) are not served.
    /// A tool's handshake refused with `status` (no identity assigned).
    pub(super) fn refuse_tool(&mut self, id: ConnId, status: i32) {
        let r = ToolReply {
            status,
            assigned: None,
            server: self.tools.identity.clone(),
            security_status: 0,
        }
        .encode();
        self.out.push_back(Output::Send(id, r.into()));
    }

    pub(super) fn tool_handshake(&mut self, id: ConnId, req: &ConnectRequest) -> bool {
        let fmt = req.format();
        let assigned = matches!(
            req.flag,
            peer_type::TOOL_NEEDS_ID | peer_type::LAUNCHER_NEEDS_ID
        );
        let proc = if assigned {
            Some(self.tools.assign())
        } else {
            req.proc.clone()
        };
        let known = matches!(
            req.flag,
            peer_type::LEGACY_TOOL
                | peer_type::LEGACY_LAUNCHER
                | peer_type::TOOL_NEEDS_ID
                | peer_type::TOOL_GIVEN_ID
                | peer_type::TOOL_CLIENT
                | peer_type::LAUNCHER_NEEDS_ID
                | peer_type::LAUNCHER_GIVEN_ID
                | peer_type::LAUNCHER_CLIENT
        );
        let reply = |st: i32| ToolReply {
            status: st,
            assigned: if assigned { proc.clone() } else { None },
            server: self.tools.identity.clone(),
            security_status: 0,
        };
        let (Some(fmt), true) = (fmt, known) else {
            let r = reply(codes::PMIX_ERR_NOT_SUPPORTED).encode();
            self.out.push_back(Output::Send(id, r.into()));
            return false;
        };
        if self.tools.mode == ToolConnections::Host {
            self.tool_to_host(id, req);
            return true;
        }
        let r = reply(codes::PMIX_SUCCESS).encode();
        self.out.push_back(Output::Send(id, r.into()));
        let proc = proc.unwrap_or_else(|| Proc::new("pmixw-tool", 0));
        if let Some(c) = self.conns.get_mut(&id) {
            c.state = ConnState::Tool {
                proc,
                version: req.version.to_string(),
            };
            c.link.establish(fmt);
        }
        true
    }

    /// Who accepts and names connecting tools from now on (default
    /// [`ToolConnections::Local`]).
    pub fn set_tool_connections(&mut self, mode: ToolConnections) {
        self.tools.mode = mode;
    }

    /// Tool handshake `req` on connection `id`, to the host.
    fn tool_to_host(&mut self, id: ConnId, req: &ConnectRequest) {
        let mut info = req.info.clone().unwrap_or_default();
        info.push(Info::new("pmix.version", pstr(&req.version.to_string())));
        if let Some((uid, gid)) = req.uid_gid {
            info.push(Info::new("pmix.euid", Value::Uint32(uid)));
            info.push(Info::new("pmix.egid", Value::Uint32(gid)));
        }
        let named = !matches!(
            req.flag,
            peer_type::TOOL_NEEDS_ID | peer_type::LAUNCHER_NEEDS_ID
        );
        if let (true, Some(p)) = (named, &req.proc) {
            info.push(Info::new("pmix.nspace", pstr(&p.nspace.to_string())));
            info.push(Info::new("pmix.rank", Value::ProcRank(p.rank)));
        }
        let request = self.requests.tool();
        self.tools.pending.insert(request, (id, req.clone()));
        self.out
            .push_back(Output::Host(super::HostEvent::ToolConnected {
                request,
                info,
            }));
    }

    /// The host's answer to
    /// [`HostEvent::ToolConnected`](super::HostEvent::ToolConnected): the
    /// tool's name (the standard's `pmix_tool_connection_cbfunc_t`), or
    /// the status refusing it (the connection is then closed). False (and
    /// nothing sent) for an id that is no tool handshake out with the
    /// host, or whose connection has gone.
    pub fn tool_connected_done(&mut self, request: u64, result: Result<Proc, i32>) -> bool {
        let Some((id, req)) = self.tools.pending.remove(&request) else {
            return false;
        };
        if self.conns.get(&id).is_none() {
            return false;
        }
        let proc = match result {
            Ok(p) => p,
            Err(st) => {
                // the status alone, then the close, as libpmix 4.2.2's
                // server refuses a tool its host refused (`process_cbfunc`)
                let r = st.to_be_bytes().to_vec();
                self.out.push_back(Output::Send(id, r.into()));
                self.refuse(id, super::Refusal::ToolRefused(req.flag));
                return true;
            }
        };
        let asked = matches!(
            req.flag,
            peer_type::TOOL_NEEDS_ID | peer_type::LAUNCHER_NEEDS_ID
        );
        let r = ToolReply {
            status: codes::PMIX_SUCCESS,
            assigned: asked.then(|| proc.clone()),
            server: self.tools.identity.clone(),
            security_status: 0,
        }
        .encode();
        self.out.push_back(Output::Send(id, r.into()));
        if let (Some(c), Some(fmt)) = (self.conns.get_mut(&id), req.format()) {
            c.state = ConnState::Tool {
                proc,
                version: req.version.to_string(),
            };
            c.link.establish(fmt);
        }
        true
    }

    /// Connection `id` closed: its handshake out with the host is
    /// forgotten.
    pub(super) fn drop_tool_conn(&mut self, id: ConnId) {
        self.tools.pending.retain(|_, (c, _)| *c != id);
    }

    /// A tool's REQ: its namespace, its version as `pmix.bfrops.mod` and a
    /// universe of one, as libpmix 4.2.2 answers (corpus/captures-4.2.2/tool-flag3).
    pub(super) fn tool_job_info(proc: &Proc, version: &str) -> Reply {
        Reply::JobInfo {
            nspace: Some(PString::from(proc.nspace.to_string().as_str())),
            kvals: vec![
                kval("pmix.bfrops.mod", pstr(version)),
                kval("pmix.univ.size", Value::Uint32(1)),
            ],
        }
    }

    /// The host's answer to [`HostEvent::Spawn`](super::HostEvent::Spawn): the new job's namespace
    /// (registered before), or the status of the failure. The requester
    /// gets STATUS, the namespace and the job's KVALs (as REQ gives them).
    pub fn spawned(&mut self, request: u64, result: Result<String, i32>) {
        let Some((conn, t)) = self.requests.take_spawn(request) else {
            return;
        };
        let Some(fmt) = self.fmt_of(conn) else { return };
        let r = match result {
            Ok(ns) => match self.job_info(&fmt, &ns) {
                Some(Reply::JobInfo { nspace, kvals }) => Reply::Spawn {
                    status: codes::PMIX_SUCCESS,
                    nspace: Some(nspace),
                    kvals,
                },
                _ => Reply::Status(codes::PMIX_ERR_NOT_FOUND),
            },
            Err(st) => Reply::Status(st),
        };
        self.reply(conn, t, &r);
    }

    /// A tool's request: true when answered here (REQ, FINALIZE, and what
    /// tools may not ask); false for what the core answers as for a client
    /// (queries, job control, GET, lookups, events, log).
    pub(super) fn tool_request(
        &mut self,
        id: ConnId,
        t: u32,
        proc: &Proc,
        version: &str,
        req: &Request,
    ) -> bool {
        // tools are not ranks of a job: init, queries, lookups, events,
        // job control, spawns (what `prun` and `pmixw run --dvm` ask), IO
        // forwarding, allocation requests, finalize
        match req {
            Request::Req => {
                let r = Self::tool_job_info(proc, version);
                self.reply(id, t, &r);
            }
            Request::Query { .. }
            | Request::JobControl { .. }
            | Request::Get { .. }
            | Request::Lookup { .. }
            | Request::RegEvents { .. }
            | Request::DeregEvents { .. }
            | Request::Log { .. }
            | Request::Spawn { .. }
            | Request::Alloc { .. }
            | Request::ResolvePeers { .. }
            | Request::ResolveNode { .. }
            | Request::IofPull { .. }
            | Request::IofDereg { .. }
            | Request::IofPush { .. } => return false,
            Request::Finalize => {
                self.jobctl.iof.drop_conn(id);
                self.reply(id, t, &Reply::Status(codes::PMIX_SUCCESS))
            }
            _ => self.reply(id, t, &Reply::Status(codes::PMIX_ERR_NOT_SUPPORTED)),
        }
        true
    }
}
