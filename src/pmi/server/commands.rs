//! The command table: every PMI-1 and PMI-2 command the server answers,
//! its answer's name, its wire, whether it needs a known rank, and its
//! handler (in the file of its concern). One table drives dispatch
//! ([`super::Server`]'s `dispatch`) and the tests that list the commands.

#![forbid(unsafe_code)]

use super::{ConnId, Query, Refusal, Server, WireKind};

type Handler = fn(&mut Server, ConnId, &Query) -> Result<(), Refusal>;

/// One row of the command table.
pub struct Command {
    /// The request's `cmd`.
    pub name: &'static str,
    /// The answer's `cmd` (empty: no answer).
    pub response: &'static str,
    /// The PMI major version whose wire carries it (0: both).
    pub wire: u32,
    /// Whether it needs init and a known rank first.
    pub needs_rank: bool,
    pub(super) handler: Handler,
}

macro_rules! row {
    ($name:literal, $resp:literal, $wire:literal, $rank:literal, $h:ident) => {
        Command {
            name: $name,
            response: $resp,
            wire: $wire,
            needs_rank: $rank,
            handler: Server::$h,
        }
    };
}

/// Every command the server answers, PMI-1 then PMI-2 (MPICH's
/// src/pmi/maint/pmi-1.1.txt, pmi-1.2.txt, pmi-2.0.txt).
pub const COMMANDS: &[Command] = &[
    row!("init", "response_to_init", 0, false, init),
    row!("initack", "initack", 1, false, initack),
    row!("get_maxes", "maxes", 1, false, get_maxes),
    row!("get_appnum", "appnum", 1, true, get_appnum),
    row!("get_my_kvsname", "my_kvsname", 1, true, get_my_kvsname),
    row!(
        "get_universe_size",
        "universe_size",
        1,
        true,
        get_universe_size
    ),
    row!("put", "put_result", 1, true, put),
    row!("get", "get_result", 1, true, get),
    row!("barrier_in", "barrier_out", 1, true, barrier_in),
    row!("publish_name", "publish_result", 1, true, publish),
    row!("unpublish_name", "unpublish_result", 1, true, unpublish),
    row!("lookup_name", "lookup_result", 1, true, lookup),
    row!("spawn", "spawn_result", 1, true, spawn_v1),
    row!("abort", "", 0, true, abort),
    row!("finalize", "finalize_ack", 1, true, finalize),
    row!("fullinit", "fullinit-response", 2, false, fullinit),
    row!("job-getid", "job-getid-response", 2, true, job_getid),
    row!(
        "info-putnodeattr",
        "info-putnodeattr-response",
        2,
        true,
        putnodeattr
    ),
    row!(
        "info-getnodeattr",
        "info-getnodeattr-response",
        2,
        true,
        getnodeattr
    ),
    row!(
        "info-getjobattr",
        "info-getjobattr-response",
        2,
        true,
        getjobattr
    ),
    row!("kvs-put", "kvs-put-response", 2, true, kvs_put),
    row!("kvs-get", "kvs-get-response", 2, true, kvs_get),
    row!("kvs-fence", "kvs-fence-response", 2, true, kvs_fence),
    row!("name-publish", "name-publish-response", 2, true, publish),
    row!(
        "name-unpublish",
        "name-unpublish-response",
        2,
        true,
        unpublish
    ),
    row!("name-lookup", "name-lookup-response", 2, true, lookup),
    row!("spawn", "spawn-response", 2, true, spawn_v2),
    row!("finalize", "finalize-response", 2, true, finalize),
];

pub(super) fn command(name: &str, wire: WireKind) -> Option<&'static Command> {
    let major = match wire {
        WireKind::V1 => 1,
        WireKind::V2 => 2,
    };
    COMMANDS
        .iter()
        .find(|c| c.name == name && (c.wire == 0 || c.wire == major))
}
