//! PMIx_Job_control on one node (the standard's process-management
//! chapter, `PMIX_JOB_CTRL_*`): what the host can do to its own processes
//! (kill, terminate, signal, pause, resume) goes to the host as
//! [`HostEvent::Kill`] or [`HostEvent::Signal`]; a checkpoint request is
//! delivered to each target by the method it registered
//! (`pmix.jctrl.ckmethod`: a signal, the PMIX_JCTRL_CHECKPOINT event, or
//! both), else by the signal the request names, else as the event. What a
//! process says of itself (preemptible, its checkpoint method) is
//! recorded and accepted, as Open MPI 4.1.4's mpirun accepts it; files and
//! directories registered for cleanup (`pmix.reg.cleanup`,
//! `pmix.reg.cleanupdir`, as libpmix's server keeps them) are handed to
//! the host when the job ends ([`Server::take_cleanups`]). A cancel finds
//! nothing pending (every request here completes at once). What no host
//! on one node can do (restart from a checkpoint, provision) is refused
//! with NOT_SUPPORTED, as PRRTE 5.0.11 refuses it (mpirun 4.1.4 answers
//! SUCCESS and does nothing: spec-notes/server.md).

#![forbid(unsafe_code)]

use super::{ConnId, ConnState, HostEvent, Output, Server, RANK_WILDCARD};
use pmix_codec::msg::Reply;
use pmix_types::status::codes;
use pmix_types::{Info, Proc, Value};

/// `PMIX_ERR_PROC_ABORTED` (pmix_common.h 4.2.2).
pub const PMIX_ERR_PROC_ABORTED: i32 = -7;
/// `PMIX_ERR_PROC_ABORTED_BY_SIG` (pmix_common.h 4.2.2).
pub const PMIX_ERR_PROC_ABORTED_BY_SIG: i32 = -402;

/// How a process asked to be checkpointed (`pmix.jctrl.ckmethod`).
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct CkptMethod {
    /// Send it this signal.
    signal: Option<i32>,
    /// Notify it PMIX_JCTRL_CHECKPOINT.
    event: bool,
}

/// Paths a job registered for removal when it ends.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cleanup {
    /// Files (`pmix.reg.cleanup`).
    pub files: Vec<String>,
    /// Directories (`pmix.reg.cleanupdir`): their contents are removed
    /// (recursively with `recursive`), then the directory itself unless
    /// `leave_top`; names in `ignore` are kept.
    pub dirs: Vec<String>,
    /// `pmix.clnup.recurse`.
    pub recursive: bool,
    /// `pmix.clnup.ignore`.
    pub ignore: Vec<String>,
    /// `pmix.clnup.lvtop`.
    pub leave_top: bool,
}

/// What the core keeps of job-control requests.
#[derive(Default)]
pub(super) struct State {
    /// Checkpoint methods by process.
    methods: std::collections::HashMap<(String, u32), CkptMethod>,
    /// Processes that said they may be preempted.
    preemptible: std::collections::BTreeSet<(String, u32)>,
    /// Cleanups by namespace.
    cleanups: std::collections::BTreeMap<String, Vec<Cleanup>>,
    /// Heartbeat monitors (monitor.rs, the same chapter of the standard).
    pub(super) monitors: super::monitor::Monitors,
    /// IO forwarding (iof.rs): pulls, kept output, what the host decides.
    pub(super) iof: super::iof::Iof,
    /// Whether allocation requests go to the host (hostops.rs).
    pub(super) host_allocates: bool,
    /// Whether monitors the core does not run go to the host (hostops.rs).
    pub(super) host_monitors: bool,
}

/// What a JOB_CONTROL request asks, once read.
#[derive(Debug, PartialEq)]
enum Action {
    Kill,
    Signal(i32),
    Checkpoint(Option<String>),
    /// The requester's checkpoint method.
    Method(CkptMethod),
    /// The requester may be preempted.
    Preemptible,
    Cleanup(Cleanup),
    /// Nothing to do (a cancel: nothing is pending here).
    Nothing,
    Unsupported,
}

fn int_of(v: &Value) -> Option<i32> {
    match v {
        Value::Int(n) | Value::Int32(n) => Some(*n),
        Value::Uint32(n) => i32::try_from(*n).ok(),
        Value::Int16(n) => Some((*n).into()),
        Value::Uint16(n) => Some((*n).into()),
        Value::Int8(n) => Some((*n).into()),
        Value::Uint8(n) => Some((*n).into()),
        Value::Int64(n) => i32::try_from(*n).ok(),
        Value::Uint64(n) | Value::Size(n) => i32::try_from(*n).ok(),
        _ => None,
    }
}

/// A comma-delimited list of paths or names (empty entries dropped).
fn list_of(v: &Value) -> Vec<String> {
    match v {
        Value::String(Some(s)) => s
            .to_string()
            .split(',')
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

/// The INFOs of a `pmix.jctrl.ckmethod` value (an INFO array). An
/// undefined value is what OpenPMIx 4.2.2's own jctrl example sends (it
/// fills the array in but never sets the value's type, so libpmix packs
/// PMIX_UNDEF and no array): the process has a method we cannot read, and
/// is checkpointed by the default, the PMIX_JCTRL_CHECKPOINT event
/// (mpirun 4.1.4 accepts it too: spec-notes/server.md).
fn method_of(v: &Value) -> Option<CkptMethod> {
    if matches!(v, Value::Undef) {
        return Some(CkptMethod {
            signal: None,
            event: true,
        });
    }
    let Value::DataArray(a) = v else {
        return None;
    };
    let pmix_types::DataArray::Typed { elements, .. } = &**a else {
        return None;
    };
    let mut m = CkptMethod::default();
    for e in elements {
        let Value::Info(i) = e else { return None };
        match i.key.to_string().as_str() {
            "pmix.jctrl.ckptsig" => m.signal = int_of(&i.value).filter(|s| (1..65).contains(s)),
            // a STATUS (the event's code) or a flag
            "pmix.jctrl.ckptev" => m.event = !matches!(i.value, Value::Bool(false)),
            _ => {}
        }
    }
    (m.signal.is_some() || m.event).then_some(m)
}

fn actions(directives: &[Info]) -> Vec<Action> {
    let set = |v: &Value| !matches!(v, Value::Bool(false));
    let given = |k: &str| directives.iter().find(|d| d.key.as_bytes() == k.as_bytes());
    // a checkpoint by signal, if one is named
    let ck_sig = given("pmix.jctrl.ckptsig").and_then(|d| int_of(&d.value));
    let mut out = Vec::new();
    let mut cleanup = Cleanup {
        recursive: given("pmix.clnup.recurse").is_some_and(|d| set(&d.value)),
        leave_top: given("pmix.clnup.lvtop").is_some_and(|d| set(&d.value)),
        ignore: given("pmix.clnup.ignore")
            .map(|d| list_of(&d.value))
            .unwrap_or_default(),
        ..Cleanup::default()
    };
    for d in directives {
        let a = match d.key.to_string().as_str() {
            "pmix.jctrl.kill" if set(&d.value) => Action::Kill,
            "pmix.jctrl.term" if set(&d.value) => Action::Signal(libc::SIGTERM),
            "pmix.jctrl.pause" if set(&d.value) => Action::Signal(libc::SIGSTOP),
            "pmix.jctrl.resume" if set(&d.value) => Action::Signal(libc::SIGCONT),
            "pmix.jctrl.sig" => match int_of(&d.value) {
                Some(s) if (1..65).contains(&s) => Action::Signal(s),
                _ => Action::Unsupported,
            },
            "pmix.jctrl.ckpt" => {
                let id = match &d.value {
                    Value::String(Some(s)) => Some(s.to_string()),
                    _ => None,
                };
                match ck_sig {
                    Some(s) if (1..65).contains(&s) => Action::Signal(s),
                    _ => Action::Checkpoint(id),
                }
            }
            "pmix.jctrl.ckptev" if set(&d.value) => Action::Checkpoint(None),
            "pmix.jctrl.ckmethod" => match method_of(&d.value) {
                Some(m) => Action::Method(m),
                None => Action::Unsupported,
            },
            "pmix.jctrl.preempt" if set(&d.value) => Action::Preemptible,
            "pmix.jctrl.cancel" => Action::Nothing,
            "pmix.reg.cleanup" => {
                cleanup.files.extend(list_of(&d.value));
                continue;
            }
            "pmix.reg.cleanupdir" => {
                cleanup.dirs.extend(list_of(&d.value));
                continue;
            }
            // qualifiers of the others, not actions of their own
            "pmix.jctrl.id" | "pmix.jctrl.ckptsig" => continue,
            "pmix.jctrl.kill" | "pmix.jctrl.term" | "pmix.jctrl.pause" | "pmix.jctrl.resume"
            | "pmix.jctrl.ckptev" | "pmix.jctrl.preempt" => continue,
            k if k.starts_with("pmix.jctrl.") => Action::Unsupported,
            // other keys (pmix.timeout, pmix.clnup.*, …) qualify the request
            _ => continue,
        };
        out.push(a);
    }
    if !cleanup.files.is_empty() || !cleanup.dirs.is_empty() {
        out.push(Action::Cleanup(cleanup));
    }
    // a checkpoint named twice (by id and by event) is one request
    out.dedup_by(|a, b| matches!((a, b), (Action::Checkpoint(_), Action::Checkpoint(_))));
    out
}

/// `pmix_data_range_t` PMIX_RANGE_CUSTOM.
const RANGE_CUSTOM: u8 = 6;

/// The procs an event of range CUSTOM is for (`pmix.evrange`: a PROC or an
/// array of PROCs), if it names any.
pub(super) fn custom_range(range: u8, info: &[Info]) -> Option<Vec<Proc>> {
    if range != RANGE_CUSTOM {
        return None;
    }
    let v = &info
        .iter()
        .find(|i| i.key.as_bytes() == b"pmix.evrange")?
        .value;
    match v {
        Value::Proc(p) => Some(vec![(**p).clone()]),
        Value::DataArray(a) => match &**a {
            pmix_types::DataArray::Typed { elements, .. } => Some(
                elements
                    .iter()
                    .filter_map(|e| match e {
                        Value::Proc(p) => Some((**p).clone()),
                        _ => None,
                    })
                    .collect(),
            ),
            pmix_types::DataArray::Undef { .. } => None,
        },
        _ => None,
    }
}

/// Whether `targets` names `p` (its rank, or its namespace at WILDCARD).
pub(super) fn names(targets: &[Proc], p: &Proc) -> bool {
    targets
        .iter()
        .any(|t| t.nspace == p.nspace && (t.rank == p.rank || t.rank == RANK_WILDCARD))
}

impl Server {
    /// JOB_CONTROL from `proc` on connection `id`: STATUS 0 (and no infos)
    /// with the host told, or a lone NOT_SUPPORTED when any directive is
    /// beyond this node (nothing is then done).
    pub(super) fn job_control(
        &mut self,
        id: ConnId,
        t: u32,
        proc: Proc,
        targets: Vec<Proc>,
        directives: &[Info],
    ) {
        let acts = actions(directives);
        if acts.is_empty() || acts.contains(&Action::Unsupported) {
            self.reply(id, t, &Reply::Status(codes::PMIX_ERR_NOT_SUPPORTED));
            return;
        }
        let targets = if targets.is_empty() {
            vec![Proc::new(&proc.nspace.to_string(), RANK_WILDCARD)]
        } else {
            targets
        };
        self.reply(
            id,
            t,
            &Reply::Infos {
                status: codes::PMIX_SUCCESS,
                info: Some(vec![]),
            },
        );
        let me = super::name(&proc);
        for a in acts {
            match a {
                Action::Kill => self.out.push_back(Output::Host(HostEvent::Kill {
                    requester: proc.clone(),
                    targets: targets.clone(),
                })),
                Action::Signal(signal) => self.out.push_back(Output::Host(HostEvent::Signal {
                    requester: proc.clone(),
                    targets: targets.clone(),
                    signal,
                })),
                Action::Checkpoint(ckid) => self.checkpoint(&proc, &targets, ckid),
                Action::Method(m) => {
                    self.jobctl.methods.insert(me.clone(), m);
                }
                Action::Preemptible => {
                    self.jobctl.preemptible.insert(me.clone());
                }
                Action::Cleanup(c) => self
                    .jobctl
                    .cleanups
                    .entry(me.0.clone())
                    .or_default()
                    .push(c),
                Action::Nothing | Action::Unsupported => {}
            }
        }
    }

    /// Checkpoint `targets` at `proc`'s request: each by the method it
    /// registered, the others by the PMIX_JCTRL_CHECKPOINT event.
    fn checkpoint(&mut self, proc: &Proc, targets: &[Proc], ckid: Option<String>) {
        let mut by_event = Vec::new();
        let mut by_signal: std::collections::BTreeMap<i32, Vec<Proc>> = Default::default();
        for (ns, r) in self.expand(targets) {
            let p = Proc::new(&ns, r);
            match self.jobctl.methods.get(&(ns, r)) {
                Some(m) => {
                    if let Some(sig) = m.signal {
                        by_signal.entry(sig).or_default().push(p.clone());
                    }
                    if m.event {
                        by_event.push(p);
                    }
                }
                None => by_event.push(p),
            }
        }
        for (signal, targets) in by_signal {
            self.out.push_back(Output::Host(HostEvent::Signal {
                requester: proc.clone(),
                targets,
                signal,
            }));
        }
        if by_event.is_empty() {
            return;
        }
        let mut info = vec![Info::new(
            "pmix.evproc",
            Value::Proc(Box::new(proc.clone())),
        )];
        if let Some(c) = ckid {
            info.push(Info::new(
                "pmix.jctrl.ckpt",
                Value::String(Some(c.as_str().into())),
            ));
        }
        self.deliver_to(&by_event, codes::PMIX_JCTRL_CHECKPOINT, proc, info);
    }

    /// The cleanups job `nspace` registered, now the host may carry them
    /// out (it removes only what its user owns).
    pub fn take_cleanups(&mut self, nspace: &str) -> Vec<Cleanup> {
        self.jobctl.cleanups.remove(nspace).unwrap_or_default()
    }

    /// Whether a process said it may be preempted.
    pub fn preemptible(&self, nspace: &str, rank: u32) -> bool {
        self.jobctl
            .preemptible
            .contains(&(nspace.to_string(), rank))
    }

    /// Deliver an event on tag 0 to the clients among `targets` (rank
    /// WILDCARD: the whole namespace) registered for `code` or for all
    /// events. The notice says range NAMESPACE (what a 4.2.2 client is
    /// known to accept from its server, spec-notes/server.md).
    pub(super) fn deliver_to(
        &mut self,
        targets: &[Proc],
        code: i32,
        source: &Proc,
        info: Vec<Info>,
    ) {
        self.emit(
            code,
            source,
            info,
            super::range::NAMESPACE,
            |_, state| matches!(state, ConnState::Client { proc, .. } if names(targets, proc)),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directives_map_to_what_one_node_can_do() {
        let d = |k: &str, v: Value| vec![Info::new(k, v)];
        assert_eq!(
            actions(&d("pmix.jctrl.kill", Value::Bool(true))),
            vec![Action::Kill]
        );
        assert_eq!(
            actions(&d("pmix.jctrl.pause", Value::Bool(true))),
            vec![Action::Signal(libc::SIGSTOP)]
        );
        assert_eq!(
            actions(&d("pmix.jctrl.sig", Value::Int(10))),
            vec![Action::Signal(10)]
        );
        assert_eq!(
            actions(&d("pmix.jctrl.ckpt", Value::String(Some("c1".into())))),
            vec![Action::Checkpoint(Some("c1".into()))]
        );
        assert_eq!(
            actions(&d("pmix.jctrl.restart", Value::String(Some("c1".into())))),
            vec![Action::Unsupported]
        );
        assert!(actions(&d("pmix.timeout", Value::Int(3))).is_empty());
        assert_eq!(
            actions(&d("pmix.jctrl.pvn", Value::String(Some("img".into())))),
            vec![Action::Unsupported]
        );
        assert_eq!(
            actions(&d("pmix.jctrl.preempt", Value::Bool(true))),
            vec![Action::Preemptible]
        );
        // OpenPMIx 4.2.2's jctrl example: the method's type never set
        assert_eq!(
            actions(&d("pmix.jctrl.ckmethod", Value::Undef)),
            vec![Action::Method(CkptMethod {
                signal: None,
                event: true
            })]
        );
    }

    #[test]
    fn a_checkpoint_method_and_cleanups_are_read() {
        let method = Value::DataArray(Box::new(
            pmix_types::DataArray::new(
                pmix_types::DataType::Info,
                vec![
                    Value::Info(Box::new(Info::new("pmix.jctrl.ckptsig", Value::Int(12)))),
                    Value::Info(Box::new(Info::new(
                        "pmix.jctrl.ckptev",
                        Value::Status(codes::PMIX_JCTRL_CHECKPOINT),
                    ))),
                ],
            )
            .unwrap(),
        ));
        let got = actions(&[
            Info::new("pmix.jctrl.preempt", Value::Bool(true)),
            Info::new("pmix.jctrl.ckmethod", method),
        ]);
        assert_eq!(
            got,
            vec![
                Action::Preemptible,
                Action::Method(CkptMethod {
                    signal: Some(12),
                    event: true
                })
            ]
        );
        let got = actions(&[
            Info::new("pmix.reg.cleanup", Value::String(Some("/t/a,/t/b".into()))),
            Info::new("pmix.reg.cleanupdir", Value::String(Some("/t/d".into()))),
            Info::new("pmix.clnup.recurse", Value::Bool(true)),
        ]);
        assert_eq!(
            got,
            vec![Action::Cleanup(Cleanup {
                files: vec!["/t/a".into(), "/t/b".into()],
                dirs: vec!["/t/d".into()],
                recursive: true,
                ..Cleanup::default()
            })]
        );
    }
}
