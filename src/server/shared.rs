//! Replies every rank of a job gets alike, encoded and framed once.
//!
//! The REQ reply (the job info) holds a blob for every rank of the job:
//! O(N) bytes, sent to each of the N ranks. Encoded for each REQ, and
//! copied into each connection's queue, it was most of the server's CPU
//! time and memory at N = 1 000 in `benches/server_load.rs` (N copies of
//! ~150 KB queued at once while every rank initializes). It is now encoded
//! once per (namespace, format, version) and framed once for the tag the
//! ranks use (libpmix clients and ours all send REQ as their first
//! request, with the same tag), and every send of it shares one buffer.

use super::{Format, Reply, Server};
use crate::link::server_frame;
use bytes::Bytes;
use pmix_codec::frame::HEADER_LEN;
use pmix_types::status::codes;

/// A framed reply: the tag it was framed with and the frame.
pub(super) struct Framed {
    tag: u32,
    frame: Bytes,
}

impl Server {
    /// The REQ reply for a rank of `nspace` speaking `fmt`, framed with tag
    /// `t`: shared with every earlier rank that used the same tag, framed
    /// anew (one copy) otherwise. `None` if the namespace is unknown; a
    /// reply that does not encode is answered BAD_PARAM, as
    /// [`Server::reply`] does.
    pub(super) fn job_info_frame(&self, fmt: &Format, nspace: &str, t: u32) -> Option<Bytes> {
        let key = self.job_info_key(fmt, nspace);
        if let Some(f) = self.job_info_frames.borrow().get(&key) {
            if f.tag == t {
                return Some(f.frame.clone());
            }
            let payload = &f.frame[HEADER_LEN..];
            return server_frame(t, payload).ok().map(Bytes::from);
        }
        let payload = match self.job_info(fmt, nspace)?.encode(fmt) {
            Ok(p) => p,
            Err(_) => Reply::Status(codes::PMIX_ERR_BAD_PARAM).encode(fmt).ok()?,
        };
        let framed = Bytes::from(server_frame(t, &payload).ok()?);
        self.job_info_frames.borrow_mut().insert(
            key,
            Framed {
                tag: t,
                frame: framed.clone(),
            },
        );
        Some(framed)
    }
}
