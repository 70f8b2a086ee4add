//! A blocking driver for the client core: one TCP socket, read timeouts,
//! no threads. Event notices that arrive while waiting for a reply are
//! queued and handed out by [`Client::next_event`].

use super::core::{
    info, parse_uri, read_as, status_reply, ClientEnv, ClientError, Core, Event, Result,
};
use super::options::{
    FenceOpts, GetOpts, GroupOpts, JobControl, LookupOpts, Publish, Queries, Spawn,
};
use pmix_codec::msg::{EventNotice, GroupReply, Reply, Request};
use pmix_types::enums::{AllocDirective, DataRange, Rank, Scope};
use pmix_types::keys::{typed, Level};
use pmix_types::status::StatusCode;
use pmix_types::{Info, PString, Pdata, Proc, TypeMismatch, Value};
use std::collections::VecDeque;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Our effective uid and gid, from the owner of /proc/self (the kernel
/// gives that directory the process's effective ids): what the client
/// drivers announce in the handshake (the core only carries them).
pub(crate) fn euid_egid() -> (u32, u32) {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").map_or((0, 0), |m| (m.uid(), m.gid()))
}

/// Default time to wait for any reply.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// A connected PMIx client (PMIx_Init … PMIx_Finalize).
pub struct Client {
    core: Core,
    sock: TcpStream,
    notices: VecDeque<EventNotice>,
    /// How long a call waits for the server's answer.
    pub timeout: Duration,
    finalized: bool,
}

impl Client {
    /// PMIx_Init from this process's environment.
    pub fn init() -> Result<Client> {
        Self::init_with(ClientEnv::from_env(|k| std::env::var(k).ok())?)
    }

    /// PMIx_Init with an explicit environment.
    pub fn init_with(env: ClientEnv) -> Result<Client> {
        let (u, g) = euid_egid();
        let uri = env.uri.clone();
        Self::start(Core::new(env, u, g)?, &uri)
    }

    /// PMIx_tool_init against the server at `uri` speaking `format`
    /// (the server assigns our identity).
    pub fn tool_connect(uri: &str, format: pmix_codec::Format) -> Result<Client> {
        let (u, g) = euid_egid();
        let info = vec![
            info("pmix.ppid", Value::Pid(std::process::id())),
            info("pmix.cmd.line", Value::String(Some("pmixw".into()))),
        ];
        Self::start(Core::new_tool(uri.into(), format, u, g, info)?, uri)
    }

    fn start(core: Core, uri: &str) -> Result<Client> {
        let (_, host, port) = parse_uri(uri)?;
        let sock = TcpStream::connect((host.as_str(), port))?;
        sock.set_nodelay(true).ok();
        let mut c = Client {
            core,
            sock,
            notices: VecDeque::new(),
            timeout: DEFAULT_TIMEOUT,
            finalized: false,
        };
        c.flush()?;
        c.wait(|e| matches!(e, Event::Connected { .. }), "handshake")?;
        let tag = c.send(&Request::Req)?;
        let r = c.wait_reply(tag, "job info")?;
        if let Reply::Status(s) = r {
            return Err(ClientError::Status {
                op: "job info",
                code: s,
            });
        }
        Ok(c)
    }

    /// Our identity.
    pub fn proc(&self) -> &Proc {
        &self.core.env.proc
    }

    /// Our rank.
    pub fn rank(&self) -> Rank {
        self.core.env.proc.rank()
    }

    /// Our namespace's job (rank WILDCARD): where job-level data lives.
    pub fn job(&self) -> Proc {
        self.core.env.proc.job()
    }

    /// The sans-IO core (its caches, its format).
    pub fn core(&self) -> &Core {
        &self.core
    }

    fn flush(&mut self) -> Result<()> {
        let out = self.core.poll_transmit().unwrap_or_default();
        if !out.is_empty() {
            self.sock.write_all(&out)?;
        }
        Ok(())
    }

    fn send(&mut self, req: &Request) -> Result<u32> {
        let tag = self.core.send(req)?;
        self.flush()?;
        tag.ok_or_else(|| ClientError::Protocol("request without reply".into()))
    }

    /// Read until `want` matches an event (notices are queued meanwhile).
    fn wait(&mut self, mut want: impl FnMut(&Event) -> bool, op: &'static str) -> Result<Event> {
        let deadline = Instant::now() + self.timeout;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            while let Some(e) = self.core.poll_event() {
                if want(&e) {
                    return Ok(e);
                }
                if let Event::Notice(n) = e {
                    self.notices.push_back(n);
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(ClientError::Timeout(op));
            }
            self.sock.set_read_timeout(Some(left))?;
            let n = match self.sock.read(&mut buf) {
                Ok(0) => {
                    return Err(ClientError::Protocol(format!(
                        "{op}: the server closed the connection"
                    )))
                }
                Ok(n) => n,
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    return Err(ClientError::Timeout(op))
                }
                Err(e) => return Err(e.into()),
            };
            self.core.handle_input(&buf[..n], Instant::now())?;
        }
    }

    fn wait_reply(&mut self, tag: u32, op: &'static str) -> Result<Reply> {
        match self.wait(
            |e| matches!(e, Event::Reply { tag: t, .. } if *t == tag),
            op,
        )? {
            Event::Reply { reply, .. } => Ok(reply),
            _ => unreachable!("wait returns the matching event"),
        }
    }

    /// Send any request and wait for its reply (for the commands without
    /// a typed method: spawn, connect, alloc, job control, groups, …).
    pub fn request(&mut self, req: &Request, op: &'static str) -> Result<Reply> {
        let tag = self.send(req)?;
        self.wait_reply(tag, op)
    }

    /// PMIx_Put: `c.put(Scope::GLOBAL, "my.key", 7u32)`.
    pub fn put(&mut self, scope: Scope, key: &str, value: impl Into<Value>) {
        self.core.put(scope, key, value.into())
    }

    /// PMIx_Commit.
    pub fn commit(&mut self) -> Result<()> {
        let req = self.core.commit_request()?;
        let r = self.request(&req, "commit")?;
        status_reply("commit", &r)
    }

    /// PMIx_Fence: `c.fence(FenceOpts::new().collect_data(true))` (no
    /// procs given: our whole namespace).
    pub fn fence(&mut self, opts: FenceOpts) -> Result<()> {
        let info = opts.to_info();
        let req = self.core.fence_request(opts.procs, info);
        let r = self.request(&req, "fence")?;
        match r {
            Reply::Raw(_) | Reply::Get { status: 0, .. } => Ok(()),
            r => status_reply("fence", &r),
        }
    }

    /// PMIx_Get: local cache first (job info, our own puts, earlier fetches),
    /// then a GETNB round trip unless `immediate` says not to. A reserved
    /// (`pmix`…) key of our own job is resolved from the job data received
    /// at init alone, PMIX_ERR_NOT_FOUND at once when absent (the PMIx_Get
    /// RFC; libpmix 4.2.2's client does the same); other keys, and reserved
    /// keys of other namespaces, go to the server as before.
    ///
    /// The value is read as `T` (any type with `TryFrom<Value>`, `Value`
    /// itself included): `let n: u32 = c.get(&peer, "my.key")?`.
    pub fn get<T>(&mut self, proc: &Proc, key: &str) -> Result<T>
    where
        T: TryFrom<Value>,
        TypeMismatch: From<T::Error>,
    {
        self.get_with(proc, key, GetOpts::new())
    }

    /// [`Client::get`] with options: `c.get_with::<u32>(&p, k,
    /// GetOpts::new().immediate(true))`.
    pub fn get_with<T>(&mut self, proc: &Proc, key: &str, opts: GetOpts) -> Result<T>
    where
        T: TryFrom<Value>,
        TypeMismatch: From<T::Error>,
    {
        let v = self.get_value(proc, key, &opts)?;
        read_as(key, v)
    }

    /// A reserved key, typed: `c.get_key(typed::JOB_SIZE)` is a `u32`.
    /// Proc- and node-level keys are asked of our own process (our node:
    /// the one it runs on), session-, job- and app-level keys of our job
    /// (rank WILDCARD).
    pub fn get_key<T>(&mut self, key: typed::Key<T>) -> Result<T>
    where
        T: TryFrom<Value>,
        TypeMismatch: From<T::Error>,
    {
        let who = if matches!(key.level(), Level::Proc | Level::Node) {
            self.proc().clone()
        } else {
            self.job()
        };
        self.get(&who, key.string())
    }

    /// A reserved key of another process (or job), typed.
    pub fn get_key_of<T>(&mut self, proc: &Proc, key: typed::Key<T>) -> Result<T>
    where
        T: TryFrom<Value>,
        TypeMismatch: From<T::Error>,
    {
        self.get(proc, key.string())
    }

    fn get_value(&mut self, proc: &Proc, key: &str, opts: &GetOpts) -> Result<Value> {
        match self.core.plan_get(proc, key, &opts.to_info()).settled() {
            Ok(answer) => answer,
            Err(req) => {
                let r = self.request(&req, "get")?;
                self.core.absorb_get(proc, key, r)
            }
        }
    }

    /// PMIx_Resolve_peers for our own node: the procs of `nspace` on it
    /// (job data `pmix.lpeers`, a comma list of ranks).
    pub fn resolve_peers(&mut self, nspace: &str) -> Result<Vec<Proc>> {
        let job = Proc::at(nspace, Rank::WILDCARD);
        match self.get(&job, "pmix.lpeers")? {
            Value::String(Some(s)) => s
                .to_string_lossy()
                .split(',')
                .filter(|r| !r.is_empty())
                .map(|r| {
                    r.trim()
                        .parse()
                        .map(|rank| Proc::new(nspace, rank))
                        .map_err(|_| {
                            ClientError::Protocol(format!("pmix.lpeers entry {r:?} is not a rank"))
                        })
                })
                .collect(),
            v => Err(ClientError::Protocol(format!("pmix.lpeers is {v:?}"))),
        }
    }

    /// PMIx_Resolve_nodes: the nodes of `nspace` (job data `pmix.nlist`).
    pub fn resolve_nodes(&mut self, nspace: &str) -> Result<Vec<String>> {
        let job = Proc::at(nspace, Rank::WILDCARD);
        match self.get(&job, "pmix.nlist")? {
            Value::String(Some(s)) => Ok(s
                .to_string_lossy()
                .split(',')
                .filter(|n| !n.is_empty())
                .map(String::from)
                .collect()),
            v => Err(ClientError::Protocol(format!("pmix.nlist is {v:?}"))),
        }
    }

    /// PMIx_Publish: `c.publish(Publish::new().put("k", 1u32).range(DataRange::SESSION))`.
    pub fn publish(&mut self, data: Publish) -> Result<()> {
        let r = self.request(
            &Request::Publish {
                uid: euid_egid().0,
                info: data.to_info(),
            },
            "publish",
        )?;
        status_reply("publish", &r)
    }

    /// PMIx_Lookup.
    pub fn lookup(&mut self, keys: &[&str], opts: LookupOpts) -> Result<Vec<Pdata>> {
        let req = Request::Lookup {
            uid: euid_egid().0,
            keys: keys.iter().map(|k| Some(PString::from(*k))).collect(),
            info: opts.to_info(),
        };
        match self.request(&req, "lookup")? {
            Reply::Lookup { status: 0, data } => Ok(data),
            Reply::Lookup { status, .. } | Reply::Status(status) => Err(ClientError::Status {
                op: "lookup",
                code: status,
            }),
            r => Err(ClientError::Protocol(format!("lookup: unexpected {r:?}"))),
        }
    }

    /// PMIx_Unpublish (no keys: everything we published).
    pub fn unpublish(&mut self, keys: &[&str], opts: LookupOpts) -> Result<()> {
        let req = Request::Unpublish {
            uid: euid_egid().0,
            keys: keys.iter().map(|k| Some(PString::from(*k))).collect(),
            info: opts.to_info(),
        };
        let r = self.request(&req, "unpublish")?;
        status_reply("unpublish", &r)
    }

    /// PMIx_Register_event_handler (the server side: which codes to forward).
    pub fn register_events(&mut self, codes: &[i32], extra: &[Info]) -> Result<()> {
        let req = Request::RegEvents {
            codes: codes.to_vec(),
            info: extra.to_vec(),
        };
        let r = self.request(&req, "register events")?;
        status_reply("register events", &r)?;
        self.core.registered(codes);
        Ok(())
    }

    /// PMIx_Notify_event.
    pub fn notify(
        &mut self,
        status: impl Into<StatusCode>,
        range: DataRange,
        extra: &[Info],
    ) -> Result<()> {
        let status = status.into().code();
        let range = range.wire();
        let req = Request::Notify {
            status,
            range,
            info: extra.to_vec(),
        };
        let r = self.request(&req, "notify")?;
        status_reply("notify", &r)?;
        // as libpmix does, our own handlers see our own event locally (the
        // server does not echo it back to its source)
        if self.core.registrations().hears(status) {
            self.notices.push_back(EventNotice {
                status,
                source: self.core.env.proc.clone(),
                info: extra.to_vec(),
                range: Some(range),
            });
        }
        Ok(())
    }

    /// The next event notice whose status is in `codes` (any if empty),
    /// waiting up to `timeout`; other notices stay queued.
    pub fn next_event(&mut self, codes: &[i32], timeout: Duration) -> Result<EventNotice> {
        let ok = |n: &EventNotice| codes.is_empty() || codes.contains(&n.status);
        if let Some(i) = self.notices.iter().position(ok) {
            return Ok(self.notices.remove(i).expect("index found"));
        }
        let saved = self.timeout;
        self.timeout = timeout;
        let r = self.wait(
            |e| matches!(e, Event::Notice(n) if codes.is_empty() || codes.contains(&n.status)),
            "event",
        );
        self.timeout = saved;
        match r? {
            Event::Notice(n) => Ok(n),
            _ => unreachable!("wait returns the matching event"),
        }
    }

    /// PMIx_Query_info.
    /// `c.query(Queries::new().ask(["pmix.qry.ns"]))`.
    pub fn query(&mut self, queries: impl Into<Queries>) -> Result<Vec<Info>> {
        let queries = queries.into().0;
        match self.request(&Request::Query { queries }, "query")? {
            Reply::Query { status: 0, info } => Ok(info),
            Reply::Query { status, .. } | Reply::Status(status) => Err(ClientError::Status {
                op: "query",
                code: status,
            }),
            r => Err(ClientError::Protocol(format!("query: unexpected {r:?}"))),
        }
    }

    /// PMIx_Log: `data` to the server's log channels (`pmix.log.stdout`,
    /// `pmix.log.stderr`, …). The timestamp goes to servers of 3.0 or later,
    /// as libpmix decides it (`ClientEnv::log_sends_time`).
    pub fn log(&mut self, data: &[Info], directives: &[Info]) -> Result<()> {
        let req = Request::Log {
            timestamp: self.core().env.log_sends_time().then_some(0),
            data: data.to_vec(),
            directives: directives.to_vec(),
        };
        let r = self.request(&req, "log")?;
        status_reply("log", &r)
    }

    /// PMIx_Spawn: the new namespace.
    /// `c.spawn(Spawn::new().app(SpawnApp::new("/bin/true", 2)))`.
    pub fn spawn(&mut self, spawn: Spawn) -> Result<String> {
        let req = Request::Spawn {
            info: spawn.job_info,
            apps: spawn.apps,
        };
        match self.request(&req, "spawn")? {
            Reply::Spawn {
                status: 0,
                nspace: Some(Some(ns)),
                ..
            } => Ok(ns.to_string_lossy().into_owned()),
            Reply::Spawn { status, .. } | Reply::Status(status) => Err(ClientError::Status {
                op: "spawn",
                code: if status == 0 { -1 } else { status },
            }),
            r => Err(ClientError::Protocol(format!("spawn: unexpected {r:?}"))),
        }
    }

    /// PMIx_Connect.
    pub fn connect(&mut self, procs: &[Proc], extra: &[Info]) -> Result<()> {
        let req = Request::Connect {
            procs: procs.to_vec(),
            info: extra.to_vec(),
        };
        match self.request(&req, "connect")? {
            Reply::Connect { status: 0, .. } => Ok(()),
            Reply::Connect { status, .. } => Err(ClientError::Status {
                op: "connect",
                code: status,
            }),
            r => status_reply("connect", &r),
        }
    }

    /// PMIx_Disconnect.
    pub fn disconnect(&mut self, procs: &[Proc], extra: &[Info]) -> Result<()> {
        let req = Request::Disconnect {
            procs: procs.to_vec(),
            info: extra.to_vec(),
        };
        let r = self.request(&req, "disconnect")?;
        status_reply("disconnect", &r)
    }

    fn infos(&mut self, req: &Request, op: &'static str) -> Result<Vec<Info>> {
        match self.request(req, op)? {
            Reply::Infos { status: 0, info } => Ok(info.unwrap_or_default()),
            Reply::Infos { status, .. } | Reply::Status(status) => {
                Err(ClientError::Status { op, code: status })
            }
            r => Err(ClientError::Protocol(format!("{op}: unexpected {r:?}"))),
        }
    }

    /// PMIx_Allocation_request.
    pub fn allocation(&mut self, directive: AllocDirective, extra: &[Info]) -> Result<Vec<Info>> {
        let req = Request::Alloc {
            directive: directive.wire(),
            info: extra.to_vec(),
        };
        self.infos(&req, "allocation request")
    }

    /// PMIx_Job_control: `c.job_control(&[peer], JobControl::new().signal(15))`.
    pub fn job_control(&mut self, targets: &[Proc], directives: JobControl) -> Result<Vec<Info>> {
        let req = Request::JobControl {
            targets: targets.to_vec(),
            directives: directives.to_info(),
        };
        self.infos(&req, "job control")
    }

    /// PMIx_Process_monitor.
    pub fn monitor(&mut self, what: Info, error: i32, directives: &[Info]) -> Result<Vec<Info>> {
        let req = Request::Monitor {
            monitor: what,
            error,
            directives: directives.to_vec(),
        };
        self.infos(&req, "monitor")
    }

    /// PMIx_Get_credential: the credential bytes.
    pub fn get_credential(&mut self, extra: &[Info]) -> Result<Vec<u8>> {
        let req = Request::GetCredential {
            info: extra.to_vec(),
        };
        match self.request(&req, "get credential")? {
            Reply::Credential {
                status: 0,
                credential,
                ..
            } => Ok(credential.map(|b| b.to_vec()).unwrap_or_default()),
            Reply::Credential { status, .. } | Reply::Status(status) => Err(ClientError::Status {
                op: "get credential",
                code: status,
            }),
            r => Err(ClientError::Protocol(format!(
                "get credential: unexpected {r:?}"
            ))),
        }
    }

    /// PMIx_Validate_credential.
    pub fn validate_credential(&mut self, cred: &[u8], extra: &[Info]) -> Result<Vec<Info>> {
        let req = Request::ValidateCred {
            credential: bytes::Bytes::copy_from_slice(cred),
            directives: extra.to_vec(),
        };
        self.infos(&req, "validate credential")
    }

    /// PMIx_Group_construct: the context id, if the host assigned one.
    pub fn group_construct(
        &mut self,
        group: &str,
        procs: &[Proc],
        opts: GroupOpts,
    ) -> Result<Option<u64>> {
        let req = Request::GroupConstruct {
            group: Some(group.into()),
            procs: procs.to_vec(),
            info: opts.to_info(),
        };
        match self.request(&req, "group construct")? {
            Reply::Group { status: 0, body } => Ok(match body {
                GroupReply::None => None,
                GroupReply::V4 { ctxid } | GroupReply::V5 { ctxid, .. } => Some(ctxid),
                GroupReply::V6 { ctxid, .. } => ctxid,
            }),
            Reply::Group { status, .. } | Reply::Status(status) => Err(ClientError::Status {
                op: "group construct",
                code: status,
            }),
            r => Err(ClientError::Protocol(format!(
                "group construct: unexpected {r:?}"
            ))),
        }
    }

    /// PMIx_Group_destruct.
    pub fn group_destruct(&mut self, group: &str, extra: &[Info]) -> Result<()> {
        let req = Request::GroupDestruct {
            group: Some(group.into()),
            procs: None,
            info: extra.to_vec(),
        };
        let r = self.request(&req, "group destruct")?;
        status_reply("group destruct", &r)
    }

    /// PMIx_Abort (procs empty: our namespace).
    pub fn abort(
        &mut self,
        status: impl Into<StatusCode>,
        msg: &str,
        procs: &[Proc],
    ) -> Result<()> {
        let req = Request::Abort {
            status: status.into().code(),
            message: Some(msg.into()),
            procs: procs.to_vec(),
        };
        let r = self.request(&req, "abort")?;
        status_reply("abort", &r)
    }

    /// PMIx_Finalize.
    pub fn finalize(mut self) -> Result<()> {
        self.finalized = true;
        let r = self.request(&Request::Finalize, "finalize")?;
        status_reply("finalize", &r)
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        if !self.finalized {
            let _ = self.sock.shutdown(std::net::Shutdown::Both);
        }
    }
}
