//! Client → server requests: the [`Request`] enum is generated from the
//! command table (`table.rs`); this is its entry points and LOG's
//! timestamp, the one field whose presence the payload alone does not say.

use super::field::*;
use super::*;

pub use super::table::Request;

impl Request {
    /// Decode a request payload in the connection's format.
    pub fn decode(fmt: &Format, payload: &[u8]) -> Result<Request> {
        Self::decode_bytes(fmt, Bytes::copy_from_slice(payload))
    }

    /// As [`Request::decode`], without copying the payload: byte objects
    /// and blobs in the request share it.
    pub fn decode_bytes(fmt: &Format, payload: Bytes) -> Result<Request> {
        let mut r = Rd::new(*fmt, &payload);
        let command = One::<CommandI>::get(&mut r, "command")?;
        match Request::decode_fields(command, &mut r)? {
            Some(req) => {
                r.finish(super::table::command_name(command).unwrap_or("request"))?;
                Ok(req)
            }
            None => Ok(Request::Other {
                command,
                rest: payload.slice(r.pos()..),
            }),
        }
    }

    /// The request payload in the connection's format.
    pub fn encode(&self, fmt: &Format) -> Result<Vec<u8>> {
        let mut w = Wr::new(*fmt);
        One::<CommandI>::put(&mut w, &self.command(), "command")?;
        self.encode_fields(&mut w)?;
        Ok(w.out)
    }
}

/// LOG's TIME: always there in the v3+ dialects; in v12, v20 and v21 a
/// 2.x peer leaves it out and a 3.0+ one sends it ([`log_sends_time`]).
/// There the rest of the request is tried without TIME first (its two
/// SIZE + INFOs to the end), then with; a TIME read as a count + SIZE
/// fails at the SIZE (its type tag or its 8 bytes), a missing one leaves
/// the read short. When neither fits, the attempt that got further is
/// reported.
pub(crate) struct LogTime;
impl Kind for LogTime {
    type T = Option<u64>;
    fn get(r: &mut Rd, field: &'static str) -> Result<Option<u64>> {
        if log_time_certain(&r.fmt) {
            return One::<Time>::get(r, field).map(Some);
        }
        let rest = |r: &mut Rd| -> Result<()> {
            Counted::<InfoI>::get(r, "data")?;
            Counted::<InfoI>::get(r, "directives")?;
            r.finish("LOG")
        };
        let e1 = match rest(&mut r.clone()) {
            Ok(()) => return Ok(None),
            Err(e) => e,
        };
        let mut with = r.clone();
        match One::<Time>::get(&mut with, field).and_then(|_| rest(&mut with)) {
            Ok(()) => One::<Time>::get(r, field).map(Some),
            Err(e2) => Err(if e2.offset > e1.offset { e2 } else { e1 }),
        }
    }
    fn put(w: &mut Wr, v: &Option<u64>, field: &'static str) -> Result<()> {
        match v {
            Some(t) => One::<Time>::put(w, t, field),
            None => Ok(()),
        }
    }
}
