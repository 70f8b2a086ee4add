//! The client's operations, sans-IO and once for both drivers: for each
//! PMIx call, the request it sends (or the answer the core gives at once)
//! and how its reply is read. A driver only sends, waits and hands the
//! reply back ([`Operation`]); [`super::Client`] and
//! [`super::AsyncClient`] are both generated from one table
//! (the `operations!` table), so they offer the same calls by construction
//! (tests/core_client_parity.rs checks it).

#![forbid(unsafe_code)]

use super::core::{status_reply, ClientError, Core, Malformed, Result};
use super::options::{
    FenceOpts, GetOpts, GroupOpts, JobControl, LookupOpts, Publish, Queries, Spawn,
};
use pmix_codec::msg::{EventNotice, GroupReply, Reply, Request};
use pmix_types::enums::{AllocDirective, DataRange};
use pmix_types::keys::{typed, Level};
use pmix_types::status::{codes, StatusCode};
use pmix_types::Rank;
use pmix_types::{Info, PString, Pdata, Proc, Value};

/// What an operation does first.
#[derive(Debug)]
pub enum Start<T> {
    /// The core answers at once (a cached value, a local refusal).
    Done(T),
    /// Send this request; its reply goes to [`Operation::finish`].
    Ask(Request),
}

/// One client operation: how it starts, how its reply is read.
pub trait Operation {
    /// What the caller gets.
    type Output;
    /// Its name in errors (`"lookup"`, `"group construct"` …).
    fn name(&self) -> &'static str;
    /// The answer the core gives at once, or the request to send.
    fn start(&mut self, core: &mut Core) -> Result<Start<Self::Output>>;
    /// Read the reply to the request [`Operation::start`] gave.
    fn finish(self, core: &mut Core, reply: Reply) -> Result<Self::Output>;
}

/// An operation of one request built from the core and one reply reader:
/// most PMIx calls.
pub struct Ask<B, T> {
    name: &'static str,
    build: Option<B>,
    read: fn(&'static str, &mut Core, Reply) -> Result<T>,
}

impl<B, T> Operation for Ask<B, T>
where
    B: FnOnce(&mut Core) -> Result<Request>,
{
    type Output = T;
    fn name(&self) -> &'static str {
        self.name
    }
    fn start(&mut self, core: &mut Core) -> Result<Start<T>> {
        match self.build.take() {
            Some(b) => Ok(Start::Ask(b(core)?)),
            None => Err(ClientError::Reused { op: self.name }),
        }
    }
    fn finish(self, core: &mut Core, reply: Reply) -> Result<T> {
        (self.read)(self.name, core, reply)
    }
}

fn ask<B, T>(
    name: &'static str,
    build: B,
    read: fn(&'static str, &mut Core, Reply) -> Result<T>,
) -> Ask<B, T>
where
    B: FnOnce(&mut Core) -> Result<Request>,
{
    Ask {
        name,
        build: Some(build),
        read,
    }
}

/// The reply `op` does not take.
pub fn unexpected(op: &'static str, r: &Reply) -> ClientError {
    ClientError::UnexpectedReply { op, got: r.kind() }
}

fn status(op: &'static str, _: &mut Core, r: Reply) -> Result<()> {
    status_reply(op, &r)
}

fn keys(keys: &[&str]) -> Vec<Option<PString>> {
    keys.iter().map(|k| Some(PString::from(*k))).collect()
}

/// PMIx_Init's job-info request (the core takes in its reply).
pub fn job_info() -> impl Operation<Output = ()> {
    ask(
        "job info",
        |_| Ok(Request::Req),
        |op, _, r| match r {
            Reply::JobInfo { .. } => Ok(()),
            Reply::Status(code) => Err(ClientError::Status { op, code }),
            r => Err(unexpected(op, &r)),
        },
    )
}

/// PMIx_Commit.
pub fn commit() -> impl Operation<Output = ()> {
    ask("commit", |c| c.commit_request(), status)
}

/// PMIx_Fence (no procs given: our whole namespace).
pub fn fence(opts: FenceOpts) -> impl Operation<Output = ()> {
    ask(
        "fence",
        move |c| {
            let info = opts.to_info();
            Ok(c.fence_request(opts.procs, info))
        },
        |op, _, r| match r {
            Reply::Raw(_) | Reply::Get { status: 0, .. } => Ok(()),
            r => status_reply(op, &r),
        },
    )
}

/// Whose data a get asks for.
enum Target {
    /// This process.
    Of(Proc),
    /// A reserved key's own level: proc- and node-level keys of our own
    /// process (our node: the one it runs on), the others of our job.
    Level(Level),
}

/// PMIx_Get of one key, as a [`Value`] ([`super::core::read_as`] types
/// it): the core's local rules first ([`Core::plan_get`]), then a GET.
pub struct Get {
    target: Target,
    proc: Option<Proc>,
    key: String,
    info: Vec<Info>,
}

impl Get {
    fn proc(&mut self, core: &Core) -> Proc {
        let p = match &self.target {
            Target::Of(p) => p.clone(),
            Target::Level(Level::Proc | Level::Node) => core.env.proc.clone(),
            Target::Level(_) => core.env.proc.job(),
        };
        self.proc = Some(p.clone());
        p
    }

    /// The key asked for.
    pub fn key(&self) -> &str {
        &self.key
    }
}

impl Operation for Get {
    type Output = Value;
    fn name(&self) -> &'static str {
        "get"
    }
    fn start(&mut self, core: &mut Core) -> Result<Start<Value>> {
        let proc = self.proc(core);
        Ok(
            match core.plan_get(&proc, &self.key, &self.info).settled() {
                Ok(answer) => Start::Done(answer?),
                Err(req) => Start::Ask(req),
            },
        )
    }
    fn finish(mut self, core: &mut Core, reply: Reply) -> Result<Value> {
        let proc = match self.proc.take() {
            Some(p) => p,
            None => self.proc(core),
        };
        core.absorb_get(&proc, &self.key, reply)
    }
}

/// PMIx_Get of `key` from `proc`, with options.
pub fn get(proc: &Proc, key: &str, opts: &GetOpts) -> Get {
    Get {
        target: Target::Of(proc.clone()),
        proc: None,
        key: key.into(),
        info: opts.to_info(),
    }
}

/// A reserved key, asked of its own level (proc- and node-level keys of
/// our own process, session-, job- and app-level keys of our job).
pub fn get_key<T>(key: typed::Key<T>) -> Get {
    Get {
        target: Target::Level(key.level()),
        proc: None,
        key: key.string().into(),
        info: Vec::new(),
    }
}

/// An operation whose answer is a get's value, read further.
pub struct Then<T> {
    name: &'static str,
    nspace: String,
    get: Get,
    read: fn(&'static str, &str, Value) -> Result<T>,
}

impl<T> Operation for Then<T> {
    type Output = T;
    fn name(&self) -> &'static str {
        self.name
    }
    fn start(&mut self, core: &mut Core) -> Result<Start<T>> {
        Ok(match self.get.start(core)? {
            Start::Done(v) => Start::Done((self.read)(self.name, &self.nspace, v)?),
            Start::Ask(req) => Start::Ask(req),
        })
    }
    fn finish(self, core: &mut Core, reply: Reply) -> Result<T> {
        let v = self.get.finish(core, reply)?;
        (self.read)(self.name, &self.nspace, v)
    }
}

/// The comma list a string value of `key` holds.
fn list(op: &'static str, key: &'static str, v: &Value) -> Result<Vec<String>> {
    match v {
        Value::String(Some(s)) => Ok(s
            .to_string_lossy()
            .split(',')
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .map(String::from)
            .collect()),
        v => Err(ClientError::Malformed {
            op,
            what: Malformed::NotAList {
                key,
                got: v.data_type(),
            },
        }),
    }
}

/// A key of `nspace`'s job data (rank WILDCARD), read further by `read`.
fn job_data<T>(
    name: &'static str,
    nspace: &str,
    key: &'static str,
    read: fn(&'static str, &str, Value) -> Result<T>,
) -> Then<T> {
    Then {
        name,
        nspace: nspace.into(),
        get: get(&Proc::at(nspace, Rank::WILDCARD), key, &GetOpts::new()),
        read,
    }
}

/// PMIx_Resolve_peers for our own node: the procs of `nspace` on it (job
/// data `pmix.lpeers`, a comma list of ranks).
pub fn resolve_peers(nspace: &str) -> Then<Vec<Proc>> {
    job_data("resolve peers", nspace, "pmix.lpeers", |op, nspace, v| {
        list(op, "pmix.lpeers", &v)?
            .iter()
            .enumerate()
            .map(|(index, r)| {
                r.parse::<u32>()
                    .map(|rank| Proc::new(nspace, rank))
                    .map_err(|_| ClientError::Malformed {
                        op,
                        what: Malformed::NotARank {
                            key: "pmix.lpeers",
                            index,
                        },
                    })
            })
            .collect()
    })
}

/// PMIx_Resolve_nodes: the nodes of `nspace` (job data `pmix.nlist`).
pub fn resolve_nodes(nspace: &str) -> Then<Vec<String>> {
    job_data("resolve nodes", nspace, "pmix.nlist", |op, _, v| {
        list(op, "pmix.nlist", &v)
    })
}

/// PMIx_Publish.
pub fn publish(data: Publish) -> impl Operation<Output = ()> {
    ask(
        "publish",
        move |c| {
            Ok(Request::Publish {
                uid: c.uid(),
                info: data.to_info(),
            })
        },
        status,
    )
}

/// PMIx_Lookup.
pub fn lookup(names: &[&str], opts: LookupOpts) -> impl Operation<Output = Vec<Pdata>> {
    let names = keys(names);
    ask(
        "lookup",
        move |c| {
            Ok(Request::Lookup {
                uid: c.uid(),
                keys: names,
                info: opts.to_info(),
            })
        },
        |op, _, r| match r {
            Reply::Lookup { status: 0, data } => Ok(data),
            Reply::Lookup { status: code, .. } | Reply::Status(code) => {
                Err(ClientError::Status { op, code })
            }
            r => Err(unexpected(op, &r)),
        },
    )
}

/// PMIx_Unpublish (no keys: everything we published).
pub fn unpublish(names: &[&str], opts: LookupOpts) -> impl Operation<Output = ()> {
    let names = keys(names);
    ask(
        "unpublish",
        move |c| {
            Ok(Request::Unpublish {
                uid: c.uid(),
                keys: names,
                info: opts.to_info(),
            })
        },
        status,
    )
}

/// An operation followed by a change of the core's state once it succeeded.
pub struct After<O> {
    op: O,
    then: Box<dyn FnOnce(&mut Core) + Send>,
}

impl<O: Operation> Operation for After<O> {
    type Output = O::Output;
    fn name(&self) -> &'static str {
        self.op.name()
    }
    fn start(&mut self, core: &mut Core) -> Result<Start<O::Output>> {
        self.op.start(core)
    }
    fn finish(self, core: &mut Core, reply: Reply) -> Result<O::Output> {
        let out = self.op.finish(core, reply)?;
        (self.then)(core);
        Ok(out)
    }
}

/// PMIx_Register_event_handler (the server side: which codes to forward);
/// the core notes the codes once the server accepted them.
pub fn register_events(codes: &[i32], extra: &[Info]) -> After<impl Operation<Output = ()>> {
    let (codes, info) = (codes.to_vec(), extra.to_vec());
    let noted = codes.clone();
    After {
        op: ask(
            "register events",
            move |_| Ok(Request::RegEvents { codes, info }),
            status,
        ),
        then: Box::new(move |c| c.registered(&noted)),
    }
}

/// PMIx_Notify_event. As libpmix does, our own handlers see our own event
/// locally (the server does not echo it back to its source): the core
/// hands it out as an [`super::Event::Notice`].
pub fn notify(
    status: impl Into<StatusCode>,
    range: DataRange,
    extra: &[Info],
) -> After<impl Operation<Output = ()>> {
    let (status, range, info) = (status.into().code(), range.wire(), extra.to_vec());
    let local = info.clone();
    After {
        op: ask(
            "notify",
            move |_| {
                Ok(Request::Notify {
                    status,
                    range,
                    info,
                })
            },
            self::status,
        ),
        then: Box::new(move |c| {
            if c.registrations().hears(status) {
                let source = c.env.proc.clone();
                c.notice_locally(EventNotice {
                    status,
                    source,
                    info: local,
                    range: Some(range),
                });
            }
        }),
    }
}

/// Whether a notice is one of `codes` (any, if empty): what
/// `next_event(codes, …)` waits for.
pub fn wanted(codes: &[i32], n: &EventNotice) -> bool {
    codes.is_empty() || codes.contains(&n.status)
}

/// PMIx_Query_info.
pub fn query(queries: impl Into<Queries>) -> impl Operation<Output = Vec<Info>> {
    let queries = queries.into().0;
    ask(
        "query",
        move |core| {
            // the renamed attributes under the server's release's strings
            let v7 = core.env.format.release_family() >= pmix_codec::Release::V7;
            let rename = |k: &pmix_types::PString| {
                let s = k.as_str().unwrap_or_default();
                match pmix_types::attrs::key_for_release(s, v7) {
                    t if t == s => k.clone(),
                    t => t.into(),
                }
            };
            let queries = queries
                .into_iter()
                .map(|mut q| {
                    q.keys = q.keys.iter().map(rename).collect();
                    for i in &mut q.qualifiers {
                        let k = i.key.as_pstring();
                        let k = k.as_str().unwrap_or_default();
                        let t = pmix_types::attrs::key_for_release(k, v7);
                        if t != k {
                            i.key = t.into();
                        }
                    }
                    q
                })
                .collect();
            Ok(Request::Query { queries })
        },
        |op, _, r| match r {
            Reply::Query { status: 0, info } => Ok(info),
            Reply::Query { status: code, .. } | Reply::Status(code) => {
                Err(ClientError::Status { op, code })
            }
            r => Err(unexpected(op, &r)),
        },
    )
}

/// PMIx_Log: the timestamp goes to servers of 3.0 or later, as libpmix
/// decides it ([`super::ClientEnv::log_sends_time`]).
pub fn log(data: &[Info], directives: &[Info]) -> impl Operation<Output = ()> {
    let (data, directives) = (data.to_vec(), directives.to_vec());
    ask(
        "log",
        move |c| {
            Ok(Request::Log {
                timestamp: c.env.log_sends_time().then_some(0),
                data,
                directives,
            })
        },
        status,
    )
}

/// PMIx_Spawn: the new namespace. Each application whose environment
/// names no `PMIX_MCA_gds` is given the core's store hint
/// ([`super::ClientEnv::spawn_store_hint`]: hash, under a server that
/// offers shmem2).
pub fn spawn(spawn: Spawn) -> impl Operation<Output = String> {
    ask(
        "spawn",
        move |c| {
            let mut apps = spawn.apps;
            if let Some(hint) = c.env.spawn_store_hint() {
                for app in &mut apps {
                    let named = app
                        .env
                        .iter()
                        .any(|e| e.as_bytes().starts_with(b"PMIX_MCA_gds="));
                    if !named {
                        app.env.push(hint.into());
                    }
                }
            }
            Ok(Request::Spawn {
                info: spawn.job_info,
                apps,
            })
        },
        |op, _, r| match r {
            Reply::Spawn {
                status: 0,
                nspace: Some(Some(ns)),
                ..
            } => Ok(ns.to_string_lossy().into_owned()),
            // success without a namespace is a failure (PMIX_ERROR)
            Reply::Spawn { status, .. } | Reply::Status(status) => Err(ClientError::Status {
                op,
                code: if status == 0 {
                    codes::PMIX_ERROR
                } else {
                    status
                },
            }),
            r => Err(unexpected(op, &r)),
        },
    )
}

/// PMIx_Connect.
pub fn connect(procs: &[Proc], extra: &[Info]) -> impl Operation<Output = ()> {
    let (procs, info) = (procs.to_vec(), extra.to_vec());
    ask(
        "connect",
        move |_| Ok(Request::Connect { procs, info }),
        |op, _, r| match r {
            Reply::Connect { status: 0, .. } => Ok(()),
            Reply::Connect { status: code, .. } => Err(ClientError::Status { op, code }),
            r => status_reply(op, &r),
        },
    )
}

/// PMIx_Disconnect.
pub fn disconnect(procs: &[Proc], extra: &[Info]) -> impl Operation<Output = ()> {
    let (procs, info) = (procs.to_vec(), extra.to_vec());
    ask(
        "disconnect",
        move |_| Ok(Request::Disconnect { procs, info }),
        status,
    )
}

/// A status-and-infos reply (ALLOC, JOB_CONTROL, MONITOR, VALIDATE_CRED).
fn infos(op: &'static str, _: &mut Core, r: Reply) -> Result<Vec<Info>> {
    match r {
        Reply::Infos { status: 0, info } => Ok(info.unwrap_or_default()),
        Reply::Infos { status: code, .. } | Reply::Status(code) => {
            Err(ClientError::Status { op, code })
        }
        r => Err(unexpected(op, &r)),
    }
}

/// PMIx_Allocation_request.
pub fn allocation(directive: AllocDirective, extra: &[Info]) -> impl Operation<Output = Vec<Info>> {
    let info = extra.to_vec();
    ask(
        "allocation request",
        move |_| {
            Ok(Request::Alloc {
                directive: directive.wire(),
                info,
            })
        },
        infos,
    )
}

/// PMIx_Job_control.
pub fn job_control(targets: &[Proc], directives: JobControl) -> impl Operation<Output = Vec<Info>> {
    let targets = targets.to_vec();
    ask(
        "job control",
        move |_| {
            Ok(Request::JobControl {
                targets,
                directives: directives.to_info(),
            })
        },
        infos,
    )
}

/// PMIx_Process_monitor.
pub fn monitor(what: Info, error: i32, directives: &[Info]) -> impl Operation<Output = Vec<Info>> {
    let directives = directives.to_vec();
    ask(
        "monitor",
        move |_| {
            Ok(Request::Monitor {
                monitor: what,
                error,
                directives,
            })
        },
        infos,
    )
}

/// PMIx_Get_credential: the credential bytes.
pub fn get_credential(extra: &[Info]) -> impl Operation<Output = Vec<u8>> {
    let info = extra.to_vec();
    ask(
        "get credential",
        move |_| Ok(Request::GetCredential { info }),
        |op, _, r| match r {
            Reply::Credential {
                status: 0,
                credential,
                ..
            } => Ok(credential.map(|b| b.to_vec()).unwrap_or_default()),
            Reply::Credential { status: code, .. } | Reply::Status(code) => {
                Err(ClientError::Status { op, code })
            }
            r => Err(unexpected(op, &r)),
        },
    )
}

/// PMIx_IOF_pull: the output of `procs` on `channels`
/// (`pmix_iof_channel_t` bits) is wanted; the server's id for the
/// registration. Every delivery carries `local_id`, our own id for it
/// ([`super::Event::Output`]).
pub fn iof_pull(
    procs: &[Proc],
    directives: &[Info],
    channels: u16,
    local_id: u64,
) -> impl Operation<Output = u64> {
    let (procs, directives) = (procs.to_vec(), directives.to_vec());
    ask(
        "iof pull",
        move |_| {
            Ok(Request::IofPull {
                procs,
                directives,
                channels,
                local_id,
            })
        },
        |op, _, r| match r {
            Reply::Id {
                status: 0,
                id: Some(id),
            } => Ok(id),
            Reply::Id { status: code, .. } | Reply::Status(code) => {
                Err(ClientError::Status { op, code })
            }
            r => Err(unexpected(op, &r)),
        },
    )
}

/// PMIx_IOF_deregister of the registration the server numbered `remote_id`.
pub fn iof_deregister(remote_id: u64, directives: &[Info]) -> impl Operation<Output = ()> {
    let directives = directives.to_vec();
    ask(
        "iof deregister",
        move |_| {
            Ok(Request::IofDereg {
                directives,
                remote_id,
            })
        },
        status,
    )
}

/// PMIx_IOF_push: `data` for the stdin of `targets` (None: end of input).
pub fn iof_push(
    targets: &[Proc],
    directives: &[Info],
    data: Option<&[u8]>,
) -> impl Operation<Output = ()> {
    let (targets, directives) = (targets.to_vec(), directives.to_vec());
    let data = data.map(bytes::Bytes::copy_from_slice);
    ask(
        "iof push",
        move |_| {
            Ok(Request::IofPush {
                targets,
                directives,
                data,
            })
        },
        status,
    )
}

/// PMIx_Validate_credential.
pub fn validate_credential(cred: &[u8], extra: &[Info]) -> impl Operation<Output = Vec<Info>> {
    let (credential, directives) = (bytes::Bytes::copy_from_slice(cred), extra.to_vec());
    ask(
        "validate credential",
        move |_| {
            Ok(Request::ValidateCred {
                credential,
                directives,
            })
        },
        infos,
    )
}

/// PMIx_Group_construct: the context id, if the host assigned one.
pub fn group_construct(
    group: &str,
    procs: &[Proc],
    opts: GroupOpts,
) -> impl Operation<Output = Option<u64>> {
    let group = PString::from(group);
    GroupConstruct {
        req: Some(Request::GroupConstruct {
            group: Some(group.clone()),
            procs: procs.to_vec(),
            info: opts.to_info(),
        }),
        group,
    }
}

/// [`group_construct`]'s operation: its reply's membership is kept under
/// the group's name ([`Core::group_constructed`]), which its destruct
/// then carries to a 5.0 or later server.
struct GroupConstruct {
    group: PString,
    req: Option<Request>,
}

impl Operation for GroupConstruct {
    type Output = Option<u64>;
    fn name(&self) -> &'static str {
        "group construct"
    }
    fn start(&mut self, _: &mut Core) -> Result<Start<Option<u64>>> {
        let op = self.name();
        self.req
            .take()
            .map(Start::Ask)
            .ok_or(ClientError::Reused { op })
    }
    fn finish(self, core: &mut Core, r: Reply) -> Result<Option<u64>> {
        let op = self.name();
        let (members, ctxid) = match r {
            Reply::Group { status: 0, body } => match body {
                GroupReply::None => (None, None),
                GroupReply::V4 { ctxid } => (None, Some(ctxid)),
                GroupReply::V5 { ctxid, members, .. } => (Some(members), Some(ctxid)),
                GroupReply::V6 { ctxid, members, .. } => (Some(members), ctxid),
            },
            Reply::Group { status: code, .. } | Reply::Status(code) => {
                return Err(ClientError::Status { op, code })
            }
            r => return Err(unexpected(op, &r)),
        };
        core.group_constructed(&self.group.to_string_lossy(), members);
        Ok(ctxid)
    }
}

/// PMIx_Group_destruct.
pub fn group_destruct(group: &str, extra: &[Info]) -> impl Operation<Output = ()> {
    let (group, info) = (PString::from(group), extra.to_vec());
    ask(
        "group destruct",
        move |core| {
            Ok(Request::GroupDestruct {
                procs: core.group_destructed(&group.to_string_lossy()),
                group: Some(group),
                info,
            })
        },
        status,
    )
}

/// PMIx_Group_leave: this process leaves `group` (the other members hear
/// PMIX_GROUP_LEFT).
pub fn group_leave(group: &str, extra: &[Info]) -> impl Operation<Output = ()> {
    let (group, info) = (PString::from(group), extra.to_vec());
    ask(
        "group leave",
        move |_| {
            Ok(Request::GroupLeave {
                group: Some(group),
                info,
            })
        },
        status,
    )
}

/// PMIx_Abort (procs empty: our namespace).
pub fn abort(
    status: impl Into<StatusCode>,
    msg: &str,
    procs: &[Proc],
) -> impl Operation<Output = ()> {
    let (status, message, procs) = (status.into().code(), PString::from(msg), procs.to_vec());
    ask(
        "abort",
        move |_| {
            Ok(Request::Abort {
                status,
                message: Some(message),
                procs,
            })
        },
        self::status,
    )
}

/// PMIx_Finalize.
pub fn finalize() -> impl Operation<Output = ()> {
    ask("finalize", |_| Ok(Request::Finalize), status)
}

/// The table both client drivers are generated from: each row a public
/// method, its arguments, what it returns and the operation it runs.
/// `$driver!` turns the rows into methods (blocking: `self.run(op)`;
/// tokio: `self.run(op).await`). The few methods that are not one
/// operation (init, the typed getters, put, next_event, finalize) are
/// written in each driver file, the same in both.
macro_rules! operations {
    ($driver:ident) => {
        $driver! {
            /// PMIx_Commit.
            fn commit() -> () = ops::commit();
            /// PMIx_Fence: `c.fence(FenceOpts::new().collect_data(true))` (no
            /// procs given: our whole namespace).
            fn fence(opts: FenceOpts) -> () = ops::fence(opts);
            /// PMIx_Resolve_peers for our own node: the procs of `nspace` on it
            /// (job data `pmix.lpeers`, a comma list of ranks).
            fn resolve_peers(nspace: &str) -> Vec<Proc> = ops::resolve_peers(nspace);
            /// PMIx_Resolve_nodes: the nodes of `nspace` (job data `pmix.nlist`).
            fn resolve_nodes(nspace: &str) -> Vec<String> = ops::resolve_nodes(nspace);
            /// PMIx_Publish: `c.publish(Publish::new().put("k", 1u32).range(DataRange::SESSION))`.
            fn publish(data: Publish) -> () = ops::publish(data);
            /// PMIx_Lookup.
            fn lookup(keys: &[&str], opts: LookupOpts) -> Vec<Pdata> = ops::lookup(keys, opts);
            /// PMIx_Unpublish (no keys: everything we published).
            fn unpublish(keys: &[&str], opts: LookupOpts) -> () = ops::unpublish(keys, opts);
            /// PMIx_Register_event_handler (the server side: which codes to forward).
            fn register_events(codes: &[i32], extra: &[Info]) -> () = ops::register_events(codes, extra);
            /// PMIx_Notify_event (our own registered handlers see it too, as
            /// libpmix's do).
            fn notify(status: impl Into<StatusCode>, range: DataRange, extra: &[Info]) -> ()
                = ops::notify(status, range, extra);
            /// PMIx_Query_info: `c.query(Queries::new().ask(["pmix.qry.ns"]))`.
            fn query(queries: impl Into<Queries>) -> Vec<Info> = ops::query(queries);
            /// PMIx_Log: `data` to the server's log channels (`pmix.log.stdout`,
            /// `pmix.log.stderr`, …). The timestamp goes to servers of 3.0 or later,
            /// as libpmix decides it (`ClientEnv::log_sends_time`).
            fn log(data: &[Info], directives: &[Info]) -> () = ops::log(data, directives);
            /// PMIx_Spawn: the new namespace.
            /// `c.spawn(Spawn::new().app(SpawnApp::new("/bin/true", 2)))`.
            fn spawn(spawn: Spawn) -> String = ops::spawn(spawn);
            /// PMIx_Connect.
            fn connect(procs: &[Proc], extra: &[Info]) -> () = ops::connect(procs, extra);
            /// PMIx_Disconnect.
            fn disconnect(procs: &[Proc], extra: &[Info]) -> () = ops::disconnect(procs, extra);
            /// PMIx_Allocation_request.
            fn allocation(directive: AllocDirective, extra: &[Info]) -> Vec<Info>
                = ops::allocation(directive, extra);
            /// PMIx_Job_control: `c.job_control(&[peer], JobControl::new().signal(15))`.
            fn job_control(targets: &[Proc], directives: JobControl) -> Vec<Info>
                = ops::job_control(targets, directives);
            /// PMIx_Process_monitor.
            fn monitor(what: Info, error: i32, directives: &[Info]) -> Vec<Info>
                = ops::monitor(what, error, directives);
            /// PMIx_Get_credential: the credential bytes.
            fn get_credential(extra: &[Info]) -> Vec<u8> = ops::get_credential(extra);
            /// PMIx_Validate_credential.
            fn validate_credential(cred: &[u8], extra: &[Info]) -> Vec<Info>
                = ops::validate_credential(cred, extra);
            /// PMIx_IOF_pull: the server's id for the registration; the output
            /// comes as `Event::Output`s carrying `local_id`.
            fn iof_pull(procs: &[Proc], directives: &[Info], channels: u16, local_id: u64) -> u64
                = ops::iof_pull(procs, directives, channels, local_id);
            /// PMIx_IOF_deregister (`remote_id`: what `iof_pull` returned).
            fn iof_deregister(remote_id: u64, directives: &[Info]) -> ()
                = ops::iof_deregister(remote_id, directives);
            /// PMIx_IOF_push: stdin for `targets` (None: end of input).
            fn iof_push(targets: &[Proc], directives: &[Info], data: Option<&[u8]>) -> ()
                = ops::iof_push(targets, directives, data);
            /// PMIx_Group_construct: the context id, if the host assigned one.
            fn group_construct(group: &str, procs: &[Proc], opts: GroupOpts) -> Option<u64>
                = ops::group_construct(group, procs, opts);
            /// PMIx_Group_destruct.
            fn group_destruct(group: &str, extra: &[Info]) -> () = ops::group_destruct(group, extra);
            /// PMIx_Group_leave.
            fn group_leave(group: &str, extra: &[Info]) -> () = ops::group_leave(group, extra);
            /// PMIx_Abort (procs empty: our namespace).
            fn abort(status: impl Into<StatusCode>, msg: &str, procs: &[Proc]) -> ()
                = ops::abort(status, msg, procs);
        }
    };
}
pub(crate) use operations;
