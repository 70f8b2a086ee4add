//! Process-management requests the core cannot serve itself, handed to
//! the host when it takes them: PMIx_Allocation_request
//! ([`Server::set_host_allocates`]) and the PMIx_Process_monitor kinds
//! the core does not run ([`Server::set_host_monitors`]). Without the
//! host, both are answered NOT_SUPPORTED, as libpmix 4.2.2's server
//! answers when its host has no `allocate` or `monitor`.

#![forbid(unsafe_code)]

use super::requests::HostOp;
use super::{ConnId, HostEvent, Output, Server};
use pmix_codec::msg::Reply;
#[cfg(doc)]
use pmix_codec::msg::Request;
use pmix_types::status::codes;
use pmix_types::{Info, Proc};

impl Server {
    /// Whether PMIx_Allocation_request goes to the host
    /// ([`HostEvent::Allocate`], answered by [`Server::allocate_done`])
    /// from now on; else (the default) it is answered NOT_SUPPORTED.
    pub fn set_host_allocates(&mut self, yes: bool) {
        self.jobctl.host_allocates = yes;
    }

    /// Whether a PMIx_Process_monitor the core does not run itself (it
    /// runs heartbeats) goes to the host ([`HostEvent::Monitor`],
    /// answered by [`Server::monitor_done`]) from now on; else (the
    /// default) it is answered NOT_SUPPORTED.
    pub fn set_host_monitors(&mut self, yes: bool) {
        self.jobctl.host_monitors = yes;
    }

    /// An ALLOC request of `proc`'s ([`Request::Alloc`]).
    pub(super) fn allocate(
        &mut self,
        caller: (ConnId, u32),
        proc: Proc,
        directive: u8,
        info: Vec<Info>,
    ) {
        if !self.jobctl.host_allocates {
            return self.reply(
                caller.0,
                caller.1,
                &Reply::Status(codes::PMIX_ERR_NOT_SUPPORTED),
            );
        }
        let request = self.requests.op(HostOp::Allocate, caller);
        self.out.push_back(Output::Host(HostEvent::Allocate {
            request,
            requester: proc,
            directive,
            info,
        }));
    }

    /// A MONITOR request of `proc`'s the core does not run, to the host.
    pub(super) fn monitor_to_host(
        &mut self,
        caller: (ConnId, u32),
        proc: Proc,
        monitor: Info,
        error: i32,
        directives: Vec<Info>,
    ) {
        let request = self.requests.op(HostOp::Monitor, caller);
        self.out.push_back(Output::Host(HostEvent::Monitor {
            request,
            requester: proc,
            monitor,
            error,
            directives,
        }));
    }

    /// Answer the caller of `kind` `request` with `status` and `info`.
    fn host_op_done(&mut self, kind: HostOp, request: u64, status: i32, info: Vec<Info>) -> bool {
        let Some((id, t)) = self.requests.take_op(kind, request) else {
            return false;
        };
        let info = (status == codes::PMIX_SUCCESS || !info.is_empty()).then_some(info);
        self.reply(id, t, &Reply::Infos { status, info });
        true
    }

    /// The host's answer to [`HostEvent::Allocate`]: its status and
    /// results (the standard's `pmix_info_cbfunc_t`), the client's
    /// answer. False (and nothing sent) for an id that is no allocation
    /// out with the host, or whose client has gone.
    pub fn allocate_done(&mut self, request: u64, status: i32, info: Vec<Info>) -> bool {
        self.host_op_done(HostOp::Allocate, request, status, info)
    }

    /// The host's answer to [`HostEvent::Monitor`], as
    /// [`Server::allocate_done`].
    pub fn monitor_done(&mut self, request: u64, status: i32, info: Vec<Info>) -> bool {
        self.host_op_done(HostOp::Monitor, request, status, info)
    }
}
