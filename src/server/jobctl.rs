//! PMIx_Job_control on one node (the standard's process-management
//! chapter, `PMIX_JOB_CTRL_*`): what the host can do to its own processes
//! (kill, terminate, signal, pause, resume) goes to the host as
//! [`HostEvent::Kill`] or [`HostEvent::Signal`]; a checkpoint request is
//! delivered to the targets as the PMIX_JCTRL_CHECKPOINT event (for
//! applications that checkpoint themselves) or as the signal they asked
//! for; everything a single node cannot do (restart, provision, preempt,
//! cancel) is refused with NOT_SUPPORTED.

use super::{ConnId, ConnState, HostEvent, Output, Server, RANK_WILDCARD};
use pmix_codec::msg::Reply;
use pmix_types::status::codes;
use pmix_types::{Info, Proc, Value};

/// `PMIX_ERR_PROC_ABORTED` (pmix_common.h 4.2.2).
pub const PMIX_ERR_PROC_ABORTED: i32 = -7;
/// `PMIX_ERR_PROC_ABORTED_BY_SIG` (pmix_common.h 4.2.2).
pub const PMIX_ERR_PROC_ABORTED_BY_SIG: i32 = -402;

/// What a JOB_CONTROL request asks, once read.
#[derive(Debug, PartialEq)]
enum Action {
    Kill,
    Signal(i32),
    Checkpoint(Option<String>),
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

fn actions(directives: &[Info]) -> Vec<Action> {
    let set = |v: &Value| !matches!(v, Value::Bool(false));
    // a checkpoint by signal, if one is named
    let ck_sig = directives
        .iter()
        .find(|d| d.key.to_string() == "pmix.jctrl.ckptsig")
        .and_then(|d| int_of(&d.value));
    let mut out = Vec::new();
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
            // qualifiers of the others, not actions of their own
            "pmix.jctrl.id" | "pmix.jctrl.ckptsig" | "pmix.jctrl.ckmethod" => continue,
            "pmix.jctrl.kill" | "pmix.jctrl.term" | "pmix.jctrl.pause" | "pmix.jctrl.resume"
            | "pmix.jctrl.ckptev" => continue,
            k if k.starts_with("pmix.jctrl.") => Action::Unsupported,
            // other keys (pmix.timeout, …) qualify the request
            _ => continue,
        };
        out.push(a);
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
        .find(|i| i.key.to_string() == "pmix.evrange")?
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
                Action::Checkpoint(ckid) => {
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
                    self.deliver_to(&targets, codes::PMIX_JCTRL_CHECKPOINT, &proc, info);
                }
                Action::Unsupported => {}
            }
        }
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
    }
}
