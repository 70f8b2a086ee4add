//! IO forwarding (issue #35): the pull registrations of tools and
//! clients (`PMIx_IOF_pull`, IOF_PULL), their deregistration (IOF_DEREG),
//! stdin pushed by a tool (IOF_PUSH), and the host's output delivered to
//! every matching registrant ([`Server::iof_deliver`], the core of
//! `PMIx_server_IOF_deliver`) on tag 2 as an [`IofData`].
//!
//! Matching and caching as libpmix 4.2.2's server (`pmix_iof.c`
//! `pmix_iof_process_iof`, `pmix_server.c` `_iofdeliver`, `_iofreg`): a
//! registration gets a delivery when its channels share a bit with the
//! delivery's, one of its processes matches the source (namespace equal,
//! or either empty; rank equal, or either WILDCARD), its requester has not
//! finalized and is neither the source nor the server itself; the message
//! carries the requester's own reference id (the `local_id` its IOF_PULL
//! sent). Output nobody matched is kept (oldest dropped first, bounded)
//! and handed to the first registration it matches, after that
//! registration's reply. The pull's directives (`pmix.iof.tag` …) are the
//! host's: libpmix's server hands them to its host's `iof_pull` and keeps
//! none of them, and so does the core (spec-notes/server.md, "IO
//! forwarding").

#![forbid(unsafe_code)]

use super::{ConnId, HostEvent, Output, Server};
use bytes::Bytes;
use pmix_codec::frame::tag;
use pmix_codec::msg::{IofData, Reply};
use pmix_types::names::iof_channel;
use pmix_types::status::codes;
use pmix_types::{Info, Proc, Value, RANK_WILDCARD};
use std::collections::{BTreeMap, VecDeque};

/// Registrations one connection may hold at once; a pull beyond them is
/// answered PMIX_ERR_OUT_OF_RESOURCE (libpmix 4.2.2 sets no bound).
pub const MAX_PULLS_PER_CONN: usize = 64;
/// Processes one pull may name (a pull names a few, or a namespace's
/// WILDCARD); more: PMIX_ERR_OUT_OF_RESOURCE. With the cap above, what
/// one connection's pulls hold stays bounded.
pub const MAX_PULL_PROCS: usize = 1024;
/// Undelivered output kept for a later pull: at most this many messages
/// (libpmix 4.2.2: 1 Mi messages, its `max_iof_cache`)…
pub const IOF_CACHE_MESSAGES: usize = 1024;
/// …and this many bytes of data; the oldest is dropped first.
pub const IOF_CACHE_BYTES: usize = 1 << 20;

/// Who answers IO-forwarding requests ([`Server::set_iof_pull`],
/// [`Server::set_iof_stdin`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IofMode {
    /// The core answers at once: a pull is registered and answered
    /// SUCCESS, a deregistration too (no upcall). For stdin this is
    /// [`IofMode::NotSupported`]: only a host can write a process's stdin.
    #[default]
    Serve,
    /// The host is asked ([`HostEvent::IofPull`], [`HostEvent::Stdin`]) and
    /// the requester answered when it calls [`Server::iof_done`].
    AskHost,
    /// Answered PMIX_ERR_NOT_SUPPORTED, as libpmix 4.2.2's server answers
    /// when its host left `iof_pull` (or `push_stdin`) NULL.
    NotSupported,
}

/// One pull registration.
struct Reg {
    conn: ConnId,
    requester: Proc,
    procs: Vec<Proc>,
    channels: u16,
    /// The requester's own id for it (what every delivery carries).
    remote_id: u64,
    /// Answered SUCCESS: deliveries go to it.
    active: bool,
}

/// Output nobody had pulled yet.
struct Cached {
    source: Proc,
    channel: u16,
    data: Bytes,
    info: Vec<Info>,
}

/// What a request out with the host is.
enum Asked {
    /// A pull: its registration's id.
    Pull(u64),
    /// A deregistration or a stdin push: answered with the host's status.
    Status,
}

/// The IO-forwarding area's state.
pub(super) struct Iof {
    pull: IofMode,
    stdin: IofMode,
    /// The next registration id: from 1, as a fresh libpmix 4.2.2 server
    /// numbers them (corpus/captures-4.2.2/tool-iof.server); never reused
    /// (libpmix reuses the first free slot of its array).
    next_reg: u64,
    regs: BTreeMap<u64, Reg>,
    cache: VecDeque<Cached>,
    cache_bytes: usize,
    next_ask: u64,
    /// Requests out with the host: id → (connection, tag, what).
    asked: BTreeMap<u64, (ConnId, u32, Asked)>,
}

impl Default for Iof {
    fn default() -> Self {
        Iof {
            pull: IofMode::Serve,
            stdin: IofMode::NotSupported,
            next_reg: 1,
            regs: BTreeMap::new(),
            cache: VecDeque::new(),
            cache_bytes: 0,
            next_ask: 1,
            asked: BTreeMap::new(),
        }
    }
}

impl Iof {
    fn ask(&mut self, conn: ConnId, t: u32, what: Asked) -> u64 {
        let id = self.next_ask;
        self.next_ask += 1;
        self.asked.insert(id, (conn, t, what));
        id
    }

    /// Connection `id` closed: its registrations and what it waited for go.
    pub(super) fn drop_conn(&mut self, id: ConnId) {
        self.regs.retain(|_, r| r.conn != id);
        self.asked.retain(|_, (c, _, _)| *c != id);
    }

    /// How many registrations are held (active or waiting for the host).
    pub(super) fn registrations(&self) -> usize {
        self.regs.len()
    }

    fn keep(&mut self, c: Cached) {
        self.cache_bytes += c.data.len();
        self.cache.push_back(c);
        while self.cache.len() > IOF_CACHE_MESSAGES || self.cache_bytes > IOF_CACHE_BYTES {
            match self.cache.pop_front() {
                Some(old) => self.cache_bytes -= old.data.len(),
                None => break,
            }
        }
    }
}

/// `PMIX_CHECK_PROCID`: the namespaces are equal or either is empty, the
/// ranks are equal or either is WILDCARD.
fn proc_matches(a: &Proc, b: &Proc) -> bool {
    let ns =
        a.nspace.as_bytes().is_empty() || b.nspace.as_bytes().is_empty() || a.nspace == b.nspace;
    ns && (a.rank == b.rank || a.rank == RANK_WILDCARD || b.rank == RANK_WILDCARD)
}

impl Server {
    /// Who answers PMIx_IOF_pull and PMIx_IOF_deregister: the core itself
    /// (the default), the host ([`HostEvent::IofPull`]), or nobody
    /// (PMIX_ERR_NOT_SUPPORTED).
    pub fn set_iof_pull(&mut self, mode: IofMode) {
        self.jobctl.iof.pull = mode;
    }

    /// Who answers a tool's stdin (PMIx_IOF_push): the host
    /// ([`IofMode::AskHost`]: [`HostEvent::Stdin`]), else nobody
    /// (PMIX_ERR_NOT_SUPPORTED, the default).
    pub fn set_iof_stdin(&mut self, mode: IofMode) {
        self.jobctl.iof.stdin = mode;
    }

    /// How many pull registrations the core holds.
    pub fn iof_registrations(&self) -> usize {
        self.jobctl.iof.registrations()
    }

    /// Output of `source` on `channel` (`pmix_iof_channel_t` bits), with
    /// its attributes: sent to every registration it matches, else kept
    /// for a later pull (PMIx_server_IOF_deliver). PMIX_SUCCESS, or
    /// PMIX_ERR_BAD_PARAM for stdin, which is never delivered this way
    /// (libpmix 4.2.2's answer too).
    pub fn iof_deliver(
        &mut self,
        source: &Proc,
        channel: u16,
        data: Bytes,
        info: Vec<Info>,
    ) -> i32 {
        if channel & iof_channel::STDIN != 0 {
            return codes::PMIX_ERR_BAD_PARAM;
        }
        let c = Cached {
            source: source.clone(),
            channel,
            data,
            info,
        };
        let ids: Vec<u64> = self.jobctl.iof.regs.keys().copied().collect();
        let mut sent = false;
        for id in ids {
            sent |= self.iof_send(id, &c);
        }
        if !sent {
            self.jobctl.iof.keep(c);
        }
        codes::PMIX_SUCCESS
    }

    /// Output `c` to registration `id`, if it matches: whether it was sent.
    fn iof_send(&mut self, id: u64, c: &Cached) -> bool {
        let Some(r) = self.jobctl.iof.regs.get(&id) else {
            return false;
        };
        if !r.active
            || c.channel & r.channels == 0
            || !r.procs.iter().any(|p| proc_matches(&c.source, p))
            || proc_matches(&c.source, &r.requester)
            || proc_matches(&r.requester, self.tools.identity())
        {
            return false;
        }
        let (conn, remote_id) = (r.conn, r.remote_id);
        let Some(conn_state) = self.conns.get(&conn) else {
            return false;
        };
        if conn_state.finalized {
            return false;
        }
        let Some(fmt) = conn_state.format() else {
            return false;
        };
        let m = IofData {
            source: c.source.clone(),
            channel: c.channel,
            refid: remote_id,
            info: c.info.clone(),
            data: c.data.clone(),
        };
        match m.encode(&fmt) {
            Ok(b) => {
                self.send(conn, tag::IOF, &b);
                true
            }
            Err(_) => false,
        }
    }

    /// Registration `id` answered SUCCESS: its reply (the id), then the
    /// kept output it matches, in the order it came (libpmix's `_iofreg`).
    fn iof_activate(&mut self, id: u64, t: u32) {
        let Some(r) = self.jobctl.iof.regs.get_mut(&id) else {
            return;
        };
        r.active = true;
        let conn = r.conn;
        self.reply(
            conn,
            t,
            &Reply::Id {
                status: codes::PMIX_SUCCESS,
                id: Some(id),
            },
        );
        let cached = std::mem::take(&mut self.jobctl.iof.cache);
        self.jobctl.iof.cache_bytes = 0;
        for c in cached {
            if !self.iof_send(id, &c) {
                self.jobctl.iof.keep(c);
            }
        }
    }

    /// IOF_PULL from `requester` on connection `conn`, tag `t`.
    pub(super) fn iof_pull(
        &mut self,
        (conn, t): (ConnId, u32),
        requester: Proc,
        procs: Vec<Proc>,
        directives: Vec<Info>,
        channels: u16,
        local_id: u64,
    ) {
        if self.jobctl.iof.pull == IofMode::NotSupported {
            self.reply(conn, t, &Reply::Status(codes::PMIX_ERR_NOT_SUPPORTED));
            return;
        }
        if self
            .jobctl
            .iof
            .regs
            .values()
            .filter(|r| r.conn == conn)
            .count()
            >= MAX_PULLS_PER_CONN
            || procs.len() > MAX_PULL_PROCS
        {
            self.reply(conn, t, &Reply::Status(codes::PMIX_ERR_OUT_OF_RESOURCE));
            return;
        }
        let id = self.jobctl.iof.next_reg;
        self.jobctl.iof.next_reg += 1;
        self.jobctl.iof.regs.insert(
            id,
            Reg {
                conn,
                requester: requester.clone(),
                procs: procs.clone(),
                channels,
                remote_id: local_id,
                active: false,
            },
        );
        if self.jobctl.iof.pull == IofMode::Serve {
            self.iof_activate(id, t);
            return;
        }
        let request = self.jobctl.iof.ask(conn, t, Asked::Pull(id));
        self.out.push_back(Output::Host(HostEvent::IofPull {
            request,
            requester,
            procs,
            channels,
            directives,
            stop: false,
        }));
    }

    /// IOF_DEREG of registration `remote_id` (the id our pull reply gave)
    /// from connection `conn`: a registration of another connection is
    /// not found (libpmix 4.2.2 lets any peer remove any id).
    pub(super) fn iof_dereg(
        &mut self,
        conn: ConnId,
        t: u32,
        requester: Proc,
        mut directives: Vec<Info>,
        remote_id: u64,
    ) {
        if self.jobctl.iof.pull == IofMode::NotSupported {
            self.reply(conn, t, &Reply::Status(codes::PMIX_ERR_NOT_SUPPORTED));
            return;
        }
        let mine = self
            .jobctl
            .iof
            .regs
            .get(&remote_id)
            .is_some_and(|r| r.conn == conn);
        if !mine {
            self.reply(conn, t, &Reply::Status(codes::PMIX_ERR_NOT_FOUND));
            return;
        }
        self.jobctl.iof.regs.remove(&remote_id);
        if self.jobctl.iof.pull == IofMode::Serve {
            self.reply(conn, t, &Reply::Status(codes::PMIX_SUCCESS));
            return;
        }
        // libpmix tells its host with the directives and PMIX_IOF_STOP
        // added, no processes and no channels
        directives.push(Info::new("pmix.iof.stop", Value::Bool(true)));
        let request = self.jobctl.iof.ask(conn, t, Asked::Status);
        self.out.push_back(Output::Host(HostEvent::IofPull {
            request,
            requester,
            procs: vec![],
            channels: 0,
            directives,
            stop: true,
        }));
    }

    /// IOF_PUSH: stdin for `targets` from `source`; `data` None at EOF.
    pub(super) fn iof_push(
        &mut self,
        conn: ConnId,
        t: u32,
        source: Proc,
        targets: Vec<Proc>,
        directives: Vec<Info>,
        data: Option<Bytes>,
    ) {
        if self.jobctl.iof.stdin != IofMode::AskHost {
            self.reply(conn, t, &Reply::Status(codes::PMIX_ERR_NOT_SUPPORTED));
            return;
        }
        let request = self.jobctl.iof.ask(conn, t, Asked::Status);
        self.out.push_back(Output::Host(HostEvent::Stdin {
            request,
            source,
            targets,
            directives,
            data,
        }));
    }

    /// The host's answer to [`HostEvent::IofPull`] or [`HostEvent::Stdin`]
    /// `request`: PMIX_SUCCESS (a pull is then registered and answered
    /// with its id, and gets the kept output it matches), or the status
    /// the requester is answered with (a pull is then forgotten).
    pub fn iof_done(&mut self, request: u64, status: i32) {
        let Some((conn, t, what)) = self.jobctl.iof.asked.remove(&request) else {
            return;
        };
        match what {
            Asked::Pull(id) if status == codes::PMIX_SUCCESS => self.iof_activate(id, t),
            Asked::Pull(id) => {
                self.jobctl.iof.regs.remove(&id);
                self.reply(conn, t, &Reply::Status(status));
            }
            Asked::Status => self.reply(conn, t, &Reply::Status(status)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn procs_match_as_libpmix_checks_them() {
        let p = |ns: &str, r: u32| Proc::new(ns, r);
        assert!(proc_matches(&p("a", 1), &p("a", 1)));
        assert!(proc_matches(&p("a", 1), &p("a", RANK_WILDCARD)));
        assert!(proc_matches(&p("a", RANK_WILDCARD), &p("a", 3)));
        assert!(proc_matches(&p("", 1), &p("b", 1)));
        assert!(!proc_matches(&p("a", 1), &p("a", 2)));
        assert!(!proc_matches(&p("a", 1), &p("b", 1)));
    }

    #[test]
    fn the_cache_drops_its_oldest_output_first() {
        let mut iof = Iof::default();
        for n in 0..IOF_CACHE_MESSAGES + 5 {
            iof.keep(Cached {
                source: Proc::new("a", 0),
                channel: iof_channel::STDOUT,
                data: Bytes::from(n.to_string()),
                info: vec![],
            });
        }
        assert_eq!(iof.cache.len(), IOF_CACHE_MESSAGES);
        assert_eq!(iof.cache.front().unwrap().data, Bytes::from("5"));
        iof.keep(Cached {
            source: Proc::new("a", 0),
            channel: iof_channel::STDOUT,
            data: Bytes::from(vec![0u8; IOF_CACHE_BYTES]),
            info: vec![],
        });
        assert_eq!(
            iof.cache.len(),
            1,
            "a message of the whole budget stays alone"
        );
        assert_eq!(iof.cache_bytes, IOF_CACHE_BYTES);
    }
}
