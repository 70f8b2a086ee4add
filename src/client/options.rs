//! Option builders for the client calls that take attributes: each names
//! the standard's attributes it sets (no positional booleans), builds by
//! value, and turns into the `pmix_info_t` list the request carries.
//!
//! ```
//! use pmix_wire::client::{FenceOpts, GetOpts};
//! use std::time::Duration;
//! let f = FenceOpts::new().collect_data(true).timeout(Duration::from_secs(5));
//! assert_eq!(f.to_info().len(), 2); // pmix.collect, pmix.timeout
//! let g = GetOpts::new().optional(true);
//! assert!(g.is_local_only());
//! ```

use pmix_types::enums::{DataRange, Persistence, Scope};
use pmix_types::{App, Info, Proc, Query, Value};
use std::time::Duration;

/// `PMIX_TIMEOUT` (`pmix.timeout`, int seconds): a sub-second duration
/// rounds up to one second, a larger one saturates at `i32::MAX`.
fn timeout_info(t: Duration) -> Info {
    let secs = t.as_secs() + u64::from(t.subsec_nanos() > 0);
    Info::new(
        "pmix.timeout",
        Value::Int(i32::try_from(secs).unwrap_or(i32::MAX)),
    )
}

fn flag(on: bool, key: &str, out: &mut Vec<Info>) {
    if on {
        out.push(Info::new(key, Value::Bool(true)));
    }
}

/// `timeout` (PMIX_TIMEOUT) and `info` (any other attribute) for the
/// builders that hold `timeout` and `extra` fields.
macro_rules! timeout_and_info {
    ($($t:ty),*) => {$(
        impl $t {
            /// `PMIX_TIMEOUT`: how long the host may take.
            pub fn timeout(mut self, t: Duration) -> Self {
                self.timeout = Some(t);
                self
            }
            /// Any other attribute.
            pub fn info(mut self, i: Info) -> Self {
                self.extra.push(i);
                self
            }
        }
    )*};
}

timeout_and_info!(FenceOpts, GetOpts, LookupOpts, GroupOpts);

/// Options of PMIx_Fence.
#[derive(Clone, Debug, Default, PartialEq)]
#[must_use]
pub struct FenceOpts {
    pub(crate) procs: Vec<Proc>,
    collect: bool,
    timeout: Option<Duration>,
    extra: Vec<Info>,
}

impl FenceOpts {
    /// Our whole namespace, no data collected, no timeout.
    pub fn new() -> Self {
        Self::default()
    }
    /// The processes taking part (default: our namespace, rank WILDCARD).
    pub fn procs(mut self, procs: impl IntoIterator<Item = Proc>) -> Self {
        self.procs = procs.into_iter().collect();
        self
    }
    /// `PMIX_COLLECT_DATA`: exchange the data the processes committed.
    pub fn collect_data(mut self, yes: bool) -> Self {
        self.collect = yes;
        self
    }
    /// The attributes the request carries.
    pub fn to_info(&self) -> Vec<Info> {
        let mut v = Vec::new();
        flag(self.collect, "pmix.collect", &mut v);
        v.extend(self.timeout.map(timeout_info));
        v.extend(self.extra.iter().cloned());
        v
    }
}

/// Options of PMIx_Get.
#[derive(Clone, Debug, Default, PartialEq)]
#[must_use]
pub struct GetOpts {
    timeout: Option<Duration>,
    scope: Option<Scope>,
    optional: bool,
    immediate: bool,
    extra: Vec<Info>,
}

impl GetOpts {
    /// Ask the server when the value is not held locally, no timeout.
    pub fn new() -> Self {
        Self::default()
    }
    /// `PMIX_DATA_SCOPE`: only data put in this scope.
    pub fn scope(mut self, s: Scope) -> Self {
        self.scope = Some(s);
        self
    }
    /// `PMIX_OPTIONAL`: answer from local data only, NOT_FOUND otherwise.
    pub fn optional(mut self, yes: bool) -> Self {
        self.optional = yes;
        self
    }
    /// `PMIX_IMMEDIATE`: what is not held locally is asked of the server,
    /// which answers from what it holds at once (NOT_FOUND if nothing),
    /// never waiting for the key or asking its host.
    pub fn immediate(mut self, yes: bool) -> Self {
        self.immediate = yes;
        self
    }
    /// Whether the answer comes from local data alone (`optional`).
    pub fn is_local_only(&self) -> bool {
        self.optional
    }
    /// The attributes the request carries.
    pub fn to_info(&self) -> Vec<Info> {
        let mut v = Vec::new();
        v.extend(self.timeout.map(timeout_info));
        v.extend(self.scope.map(|s| Info::new("pmix.scope", s.into())));
        flag(self.optional, "pmix.optional", &mut v);
        flag(self.immediate, "pmix.immediate", &mut v);
        v.extend(self.extra.iter().cloned());
        v
    }
}

/// One application of a PMIx_Spawn.
#[derive(Clone, Debug, PartialEq)]
#[must_use]
pub struct SpawnApp(App);

impl SpawnApp {
    /// `maxprocs` copies of `cmd` (argv\[0\] is `cmd`).
    pub fn new(cmd: &str, maxprocs: u32) -> Self {
        SpawnApp(App {
            cmd: Some(cmd.into()),
            argv: vec![cmd.into()],
            env: Vec::new(),
            cwd: None,
            maxprocs: i32::try_from(maxprocs).unwrap_or(i32::MAX),
            info: Vec::new(),
        })
    }
    /// Arguments after argv\[0\].
    pub fn args<S: AsRef<str>>(mut self, args: impl IntoIterator<Item = S>) -> Self {
        self.0
            .argv
            .extend(args.into_iter().map(|a| a.as_ref().into()));
        self
    }
    /// One `NAME=value` for the processes' environment.
    pub fn env(mut self, name: &str, value: &str) -> Self {
        self.0.env.push(format!("{name}={value}").as_str().into());
        self
    }
    /// The working directory.
    pub fn cwd(mut self, dir: &str) -> Self {
        self.0.cwd = Some(dir.into());
        self
    }
    /// An application-level attribute.
    pub fn info(mut self, i: Info) -> Self {
        self.0.info.push(i);
        self
    }
    /// The wire `pmix_app_t`.
    pub fn into_app(self) -> App {
        self.0
    }
}

impl From<App> for SpawnApp {
    fn from(a: App) -> Self {
        SpawnApp(a)
    }
}

/// A PMIx_Spawn request: applications and job-level attributes.
#[derive(Clone, Debug, Default, PartialEq)]
#[must_use]
pub struct Spawn {
    pub(crate) apps: Vec<App>,
    pub(crate) job_info: Vec<Info>,
}

impl Spawn {
    /// No application yet.
    pub fn new() -> Self {
        Self::default()
    }
    /// Add an application.
    pub fn app(mut self, a: impl Into<SpawnApp>) -> Self {
        self.apps.push(a.into().0);
        self
    }
    /// A job-level attribute (`PMIX_MAPBY`, `PMIX_NOTIFY_COMPLETION` …).
    pub fn job_info(mut self, i: Info) -> Self {
        self.job_info.push(i);
        self
    }
}

/// PMIx_Publish: the data and where it is visible.
#[derive(Clone, Debug, Default, PartialEq)]
#[must_use]
pub struct Publish {
    pub(crate) data: Vec<Info>,
    range: Option<DataRange>,
    persistence: Option<Persistence>,
    timeout: Option<Duration>,
}

impl Publish {
    /// Nothing published yet.
    pub fn new() -> Self {
        Self::default()
    }
    /// One key and its value.
    pub fn put(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.data.push(Info::new(key, value.into()));
        self
    }
    /// `PMIX_RANGE`: who may look it up (the host's default otherwise).
    pub fn range(mut self, r: DataRange) -> Self {
        self.range = Some(r);
        self
    }
    /// `PMIX_PERSISTENCE`: how long the data stays.
    pub fn persistence(mut self, p: Persistence) -> Self {
        self.persistence = Some(p);
        self
    }
    /// `PMIX_TIMEOUT`.
    pub fn timeout(mut self, t: Duration) -> Self {
        self.timeout = Some(t);
        self
    }
    /// The data followed by the directives, as the request carries them.
    pub fn to_info(&self) -> Vec<Info> {
        let mut v = self.data.clone();
        v.extend(self.range.map(|r| Info::new("pmix.range", r.into())));
        v.extend(
            self.persistence
                .map(|p| Info::new("pmix.persist", p.into())),
        );
        v.extend(self.timeout.map(timeout_info));
        v
    }
}

/// Options of PMIx_Lookup and PMIx_Unpublish.
#[derive(Clone, Debug, Default, PartialEq)]
#[must_use]
pub struct LookupOpts {
    range: Option<DataRange>,
    wait: Option<u32>,
    timeout: Option<Duration>,
    extra: Vec<Info>,
}

impl LookupOpts {
    /// The host's default range, no waiting.
    pub fn new() -> Self {
        Self::default()
    }
    /// `PMIX_RANGE`: where to look.
    pub fn range(mut self, r: DataRange) -> Self {
        self.range = Some(r);
        self
    }
    /// `PMIX_WAIT` (int): wait until at least `n` of the keys were
    /// published, 0 for all of them (lookup only).
    pub fn wait_for(mut self, n: u32) -> Self {
        self.wait = Some(n);
        self
    }
    /// The attributes the request carries.
    pub fn to_info(&self) -> Vec<Info> {
        let mut v = Vec::new();
        v.extend(self.range.map(|r| Info::new("pmix.range", r.into())));
        v.extend(self.wait.map(|n| {
            Info::new(
                "pmix.wait",
                Value::Int(i32::try_from(n).unwrap_or(i32::MAX)),
            )
        }));
        v.extend(self.timeout.map(timeout_info));
        v.extend(self.extra.iter().cloned());
        v
    }
}

/// PMIx_Query_info's queries: each a list of keys and its qualifiers.
#[derive(Clone, Debug, Default, PartialEq)]
#[must_use]
pub struct Queries(pub(crate) Vec<Query>);

impl Queries {
    /// No query yet.
    pub fn new() -> Self {
        Self::default()
    }
    /// A query for `keys` (`pmix.qry.ns` …).
    pub fn ask<S: AsRef<str>>(mut self, keys: impl IntoIterator<Item = S>) -> Self {
        self.0.push(Query {
            keys: keys.into_iter().map(|k| k.as_ref().into()).collect(),
            qualifiers: Vec::new(),
        });
        self
    }
    /// A qualifier of the last query (`PMIX_NSPACE`, `PMIX_RANK` …).
    pub fn qualifier(mut self, key: &str, value: impl Into<Value>) -> Self {
        if let Some(q) = self.0.last_mut() {
            q.qualifiers.push(Info::new(key, value.into()));
        }
        self
    }
}

impl From<Vec<Query>> for Queries {
    fn from(q: Vec<Query>) -> Self {
        Queries(q)
    }
}

impl From<Query> for Queries {
    fn from(q: Query) -> Self {
        Queries(vec![q])
    }
}

/// Options of PMIx_Group_construct.
#[derive(Clone, Debug, Default, PartialEq)]
#[must_use]
pub struct GroupOpts {
    leader: bool,
    notify_termination: bool,
    assign_context_id: bool,
    timeout: Option<Duration>,
    extra: Vec<Info>,
}

impl GroupOpts {
    /// No attribute.
    pub fn new() -> Self {
        Self::default()
    }
    /// `PMIX_GROUP_LEADER`: this process leads the group.
    pub fn leader(mut self, yes: bool) -> Self {
        self.leader = yes;
        self
    }
    /// `PMIX_GROUP_NOTIFY_TERMINATION`: tell members when one ends.
    pub fn notify_termination(mut self, yes: bool) -> Self {
        self.notify_termination = yes;
        self
    }
    /// `PMIX_GROUP_ASSIGN_CONTEXT_ID`: ask the host for a context id.
    pub fn assign_context_id(mut self, yes: bool) -> Self {
        self.assign_context_id = yes;
        self
    }
    /// The attributes the request carries.
    pub fn to_info(&self) -> Vec<Info> {
        let mut v = Vec::new();
        flag(self.leader, "pmix.grp.ldr", &mut v);
        flag(self.notify_termination, "pmix.grp.notterm", &mut v);
        flag(self.assign_context_id, "pmix.grp.actxid", &mut v);
        v.extend(self.timeout.map(timeout_info));
        v.extend(self.extra.iter().cloned());
        v
    }
}

/// PMIx_Job_control's directives.
#[derive(Clone, Debug, Default, PartialEq)]
#[must_use]
pub struct JobControl(Vec<Info>);

impl JobControl {
    /// No directive yet.
    pub fn new() -> Self {
        Self::default()
    }
    fn with(mut self, key: &str, v: Value) -> Self {
        self.0.push(Info::new(key, v));
        self
    }
    /// `PMIX_JOB_CTRL_KILL`: SIGKILL the targets.
    pub fn kill(self) -> Self {
        self.with("pmix.jctrl.kill", Value::Bool(true))
    }
    /// `PMIX_JOB_CTRL_TERMINATE`: terminate the targets.
    pub fn terminate(self) -> Self {
        self.with("pmix.jctrl.term", Value::Bool(true))
    }
    /// `PMIX_JOB_CTRL_SIGNAL`: send this signal.
    pub fn signal(self, sig: i32) -> Self {
        self.with("pmix.jctrl.sig", Value::Int(sig))
    }
    /// `PMIX_JOB_CTRL_PAUSE`.
    pub fn pause(self) -> Self {
        self.with("pmix.jctrl.pause", Value::Bool(true))
    }
    /// `PMIX_JOB_CTRL_RESUME`.
    pub fn resume(self) -> Self {
        self.with("pmix.jctrl.resume", Value::Bool(true))
    }
    /// `PMIX_JOB_CTRL_CANCEL`: cancel the request with this id.
    pub fn cancel(self, id: &str) -> Self {
        self.with("pmix.jctrl.cancel", Value::from(id))
    }
    /// `PMIX_JOB_CTRL_ID`: an id for this request.
    pub fn id(self, id: &str) -> Self {
        self.with("pmix.jctrl.id", Value::from(id))
    }
    /// Any other directive.
    pub fn info(mut self, i: Info) -> Self {
        self.0.push(i);
        self
    }
    /// The directives the request carries.
    pub fn to_info(&self) -> Vec<Info> {
        self.0.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(v: &[Info]) -> Vec<String> {
        v.iter()
            .map(|i| i.key.as_pstring().to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn builders_set_the_standards_attributes() {
        let f = FenceOpts::new()
            .collect_data(true)
            .timeout(Duration::from_millis(1500));
        assert_eq!(
            f.to_info(),
            vec![
                Info::new("pmix.collect", Value::Bool(true)),
                Info::new("pmix.timeout", Value::Int(2))
            ]
        );
        assert!(FenceOpts::new().to_info().is_empty());
        let g = GetOpts::new().scope(Scope::LOCAL).immediate(true);
        assert_eq!(keys(&g.to_info()), ["pmix.scope", "pmix.immediate"]);
        assert_eq!(g.to_info()[0].value, Value::Scope(1));
        let p = Publish::new()
            .put("k", 5u32)
            .range(DataRange::SESSION)
            .persistence(Persistence::PROC);
        assert_eq!(keys(&p.to_info()), ["k", "pmix.range", "pmix.persist"]);
        assert_eq!(p.to_info()[1].value, Value::DataRange(4));
        let l = LookupOpts::new().wait_for(0);
        assert_eq!(l.to_info(), [Info::new("pmix.wait", Value::Int(0))]);
        let j = JobControl::new().signal(15).kill();
        assert_eq!(keys(&j.to_info()), ["pmix.jctrl.sig", "pmix.jctrl.kill"]);
        let gr = GroupOpts::new().assign_context_id(true).leader(true);
        assert_eq!(keys(&gr.to_info()), ["pmix.grp.ldr", "pmix.grp.actxid"]);
        let q = Queries::new()
            .ask(["pmix.qry.ns"])
            .qualifier("pmix.nspace", "ns");
        assert_eq!(q.0[0].qualifiers.len(), 1);
        let s = Spawn::new().app(SpawnApp::new("/bin/true", 2).args(["-x"]));
        assert_eq!(s.apps[0].argv.len(), 2);
        assert_eq!(s.apps[0].maxprocs, 2);
    }
}
