//! PMIx_Process_monitor (the standard's §7.3): heartbeat monitoring with
//! a timer of the core's own deadlines (sans-IO: the driver passes `now`
//! in and wakes the core at [`Server::poll_timeout`]).
//!
//! A rank asks `pmix.monitor.mbeat` with `pmix.monitor.btime` (the window,
//! seconds; none or 0: BAD_PARAM, as libpmix 4.2.2's heartbeat sensor),
//! `pmix.monitor.bdrop` (windows that may pass without a beat) and
//! optionally `pmix.range` and `pmix.monitor.id`. Each heartbeat
//! (`PMIx_Heartbeat`: an empty message on tag 1) counts in the window it
//! arrives in. When more than `drops` windows in a row pass without one,
//! the status the request named is notified once, its source the silent
//! rank, within the requested range (NAMESPACE by default, as the standard
//! says; PROC_LOCAL: the silent rank alone); a later beat re-arms it.
//! libpmix 4.2.2 alerts after the first silent window whatever `drops`
//! says and always with PMIX_MONITOR_HEARTBEAT_ALERT: we follow the
//! standard (spec-notes/server.md). `pmix.monitor.cancel` ends the
//! requester's monitors of that id (empty: all); a connection that closes
//! takes its monitors with it. File monitors are refused NOT_SUPPORTED.

#![forbid(unsafe_code)]

use super::{range, ConnId, Server};
use crate::sansio::Deadlines;
use pmix_codec::msg::Reply;
use pmix_types::status::codes;
use pmix_types::{Info, Proc, Value};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// One heartbeat monitor.
#[derive(Debug)]
struct Tracker {
    conn: ConnId,
    proc: Proc,
    id: Option<String>,
    window: Duration,
    drops: u32,
    error: i32,
    range: u8,
    /// Beats in the current window.
    beats: u32,
    /// Windows in a row without a beat.
    missed: u32,
    /// Alerted, and no beat since.
    alerted: bool,
    /// When the current window ends.
    due: Instant,
}

/// The monitors area's state.
#[derive(Default)]
pub(super) struct Monitors {
    trackers: BTreeMap<u64, Tracker>,
    deadlines: Deadlines<u64>,
    next: u64,
}

impl Monitors {
    pub(super) fn next_deadline(&self) -> Option<Instant> {
        self.deadlines.first()
    }

    /// Connection `id` closed: its monitors end.
    pub(super) fn drop_conn(&mut self, id: ConnId) {
        self.retain(|t| t.conn != id);
    }

    fn retain(&mut self, keep: impl Fn(&Tracker) -> bool) {
        let gone: Vec<u64> = self
            .trackers
            .iter()
            .filter(|(_, t)| !keep(t))
            .map(|(k, _)| *k)
            .collect();
        for k in gone {
            if let Some(t) = self.trackers.remove(&k) {
                self.deadlines.remove(t.due, k);
            }
        }
    }

    /// A heartbeat from connection `id`.
    pub(super) fn beat(&mut self, id: ConnId) {
        for t in self.trackers.values_mut().filter(|t| t.conn == id) {
            t.beats = t.beats.saturating_add(1);
            t.alerted = false;
        }
    }

    /// How many monitors are running.
    pub(super) fn len(&self) -> usize {
        self.trackers.len()
    }

    /// The windows that ended by `now`: the alerts to raise (status,
    /// source, range).
    fn take_due(&mut self, now: Instant) -> Vec<(i32, Proc, u8)> {
        let mut alerts = Vec::new();
        while let Some(k) = self.deadlines.pop_due(now) {
            let Some(t) = self.trackers.get_mut(&k) else {
                continue;
            };
            if t.beats > 0 {
                t.missed = 0;
            } else if !t.alerted {
                t.missed = t.missed.saturating_add(1);
                if t.missed > t.drops {
                    t.alerted = true;
                    t.missed = 0;
                    alerts.push((t.error, t.proc.clone(), t.range));
                }
            }
            t.beats = 0;
            // the next window starts where this one ended: a driver that
            // woke late sees each window that passed meanwhile (popped
            // again in this loop while it is due)
            t.due += t.window;
            self.deadlines.insert(t.due, k);
        }
        alerts
    }
}

fn u32_of(v: &Value) -> Option<u32> {
    match v {
        Value::Uint32(n) => Some(*n),
        Value::Int(n) | Value::Int32(n) => u32::try_from(*n).ok(),
        Value::Uint64(n) | Value::Size(n) => u32::try_from(*n).ok(),
        Value::Int64(n) => u32::try_from(*n).ok(),
        Value::Uint16(n) => Some((*n).into()),
        Value::Uint8(n) => Some((*n).into()),
        _ => None,
    }
}

fn string_of(v: &Value) -> Option<String> {
    match v {
        Value::String(Some(s)) => Some(s.to_string()),
        _ => None,
    }
}

/// A MONITOR request's fields: what to monitor, the status to raise, its
/// attributes.
pub(super) struct Ask<'a> {
    pub(super) what: &'a Info,
    pub(super) error: i32,
    pub(super) directives: &'a [Info],
}

impl Server {
    /// MONITOR from `proc` on connection `id`, at `now`.
    pub(super) fn monitor(&mut self, id: ConnId, t: u32, proc: Proc, ask: Ask, now: Instant) {
        let Ask {
            what,
            error,
            directives,
        } = ask;
        let given = |k: &str| {
            directives
                .iter()
                .find(|d| d.key.as_bytes() == k.as_bytes())
                .map(|d| &d.value)
        };
        let status = match what.key.to_string().as_str() {
            "pmix.monitor.mbeat" => {
                let window = given("pmix.monitor.btime").and_then(u32_of).unwrap_or(0);
                if window == 0 {
                    codes::PMIX_ERR_BAD_PARAM
                } else {
                    let range = match given("pmix.range") {
                        Some(Value::DataRange(r)) => *r,
                        _ => range::NAMESPACE,
                    };
                    let k = self.jobctl.monitors.next;
                    self.jobctl.monitors.next += 1;
                    let due = now + Duration::from_secs(window.into());
                    self.jobctl.monitors.trackers.insert(
                        k,
                        Tracker {
                            conn: id,
                            proc,
                            id: given("pmix.monitor.id").and_then(string_of),
                            window: Duration::from_secs(window.into()),
                            drops: given("pmix.monitor.bdrop").and_then(u32_of).unwrap_or(0),
                            error,
                            range,
                            beats: 0,
                            missed: 0,
                            alerted: false,
                            due,
                        },
                    );
                    self.jobctl.monitors.deadlines.insert(due, k);
                    codes::PMIX_SUCCESS
                }
            }
            // a heartbeat sent as a request rather than on tag 1
            "pmix.monitor.beat" => {
                self.jobctl.monitors.beat(id);
                codes::PMIX_SUCCESS
            }
            "pmix.monitor.cancel" => {
                let which = string_of(&what.value);
                self.jobctl
                    .monitors
                    .retain(|m| m.conn != id || (which.is_some() && m.id != which));
                codes::PMIX_SUCCESS
            }
            // another kind (a file's size or access …): the host's, when
            // it takes them (hostops.rs)
            _ if self.jobctl.host_monitors => {
                let (monitor, directives) = (what.clone(), directives.to_vec());
                return self.monitor_to_host((id, t), proc, monitor, error, directives);
            }
            _ => codes::PMIX_ERR_NOT_SUPPORTED,
        };
        if status == codes::PMIX_SUCCESS {
            self.reply(
                id,
                t,
                &Reply::Infos {
                    status,
                    info: Some(vec![]),
                },
            );
        } else {
            self.reply(id, t, &Reply::Status(status));
        }
    }

    /// Windows that ended by `now`: raise their alerts.
    pub(super) fn monitors_due(&mut self, now: Instant) {
        for (code, source, r) in self.jobctl.monitors.take_due(now) {
            let info = vec![Info::new(
                "pmix.evproc",
                Value::Proc(Box::new(source.clone())),
            )];
            if r == range::PROC_LOCAL {
                self.deliver_to(std::slice::from_ref(&source), code, &source, info);
            } else {
                self.deliver_event(None, code, &source, info, r);
            }
        }
    }

    /// How many heartbeat monitors are running (their requesters still
    /// connected).
    pub fn monitors(&self) -> usize {
        self.jobctl.monitors.len()
    }
}
