//! Client → server requests: the [`Request`] enum is generated from the
//! command table (`commands.rs`); this is its entry points. (LOG's timestamp,
//! the one field whose presence the payload alone does not say, is a field
//! kind in `field.rs`.)

use super::field::*;
use super::*;

pub use super::commands::Request;

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
                r.finish(super::commands::command_name(command).unwrap_or("request"))?;
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
