//! The connection handshake (protocol.md §4), sans-IO: the connect request
//! a client, tool or launcher sends first, and the server's replies.
//!
//! The request body (after the host-order header of frame.rs) is a run of
//! NUL-terminated strings and big-endian integers, not a bfrops buffer —
//! except the optional info blob at its end, which is packed in the dialect
//! the peer announces.

use crate::dialect::{BufferType, Format, Release};
use crate::error::{Error, ErrorKind, Result};
use crate::select::from_module_list;
use bytes::Bytes;
#[cfg(feature = "serde")]
use pmix_types::hex::serde_bytes_hex;
use pmix_types::{DataType, Info, Nspace, PString, Proc, Value};
#[cfg(feature = "serde")]
use serde::Serialize;

/// `pmix_rnd_flag_t`: what kind of peer connects.
pub mod peer_type {
    /// `PMIX_SIMPLE_CLIENT`: a client started by its server, with nspace and rank.
    pub const SIMPLE_CLIENT: u8 = 0;
    /// `PMIX_LEGACY_TOOL`: a tool of PMIx before 4.0.
    pub const LEGACY_TOOL: u8 = 1;
    /// `PMIX_LEGACY_LAUNCHER`: a launcher of PMIx before 4.0.
    pub const LEGACY_LAUNCHER: u8 = 2;
    /// `PMIX_TOOL_NEEDS_ID`: a tool asking the server for an identity.
    pub const TOOL_NEEDS_ID: u8 = 3;
    /// `PMIX_TOOL_GIVEN_ID`: a tool that brings its own identity.
    pub const TOOL_GIVEN_ID: u8 = 4;
    /// `PMIX_TOOL_CLIENT`: a tool that is also a client of this server.
    pub const TOOL_CLIENT: u8 = 5;
    /// `PMIX_LAUNCHER_NEEDS_ID`: a launcher asking for an identity.
    pub const LAUNCHER_NEEDS_ID: u8 = 6;
    /// `PMIX_LAUNCHER_GIVEN_ID`: a launcher that brings its own identity.
    pub const LAUNCHER_GIVEN_ID: u8 = 7;
    /// `PMIX_LAUNCHER_CLIENT`: a launcher that is also a client of this server.
    pub const LAUNCHER_CLIENT: u8 = 8;
    /// `PMIX_SINGLETON_CLIENT`: a process started without a launcher.
    pub const SINGLETON_CLIENT: u8 = 9;
    /// v5.0+.
    pub const SCHEDULER_WITH_ID: u8 = 10;
}

/// The identity fields that follow the flag.
fn identity_layout(flag: u8) -> (bool, bool) {
    // (uid + gid, nspace + rank)
    match flag {
        0 => (false, true),
        1..=3 | 6 => (true, false),
        _ => (true, true),
    }
}

/// A connect request (protocol.md §4.1).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(Serialize))]
pub struct ConnectRequest {
    /// psec module name ("native", "none", "munge").
    pub psec: PString,
    /// The credential (native: euid and egid as host-order u32s).
    #[cfg_attr(feature = "serde", serde(with = "serde_bytes_hex"))]
    pub credential: Bytes,
    /// The peer type (`peer_type`).
    pub flag: u8,
    /// Tools and launchers: euid and egid (big-endian on the wire).
    pub uid_gid: Option<(u32, u32)>,
    /// Clients and tools with an identity.
    pub proc: Option<Proc>,
    /// The peer's PMIx version string ("4.2.2rc2").
    pub version: PString,
    /// bfrops module, buffer type byte and gds module; absent from PMIx 2.0 peers.
    pub bfrops: Option<PString>,
    /// The buffer type byte (1 non-described, 2 fully described).
    pub buffer_type: Option<u8>,
    /// The gds (data store) module name ("hash", "ds21").
    pub gds: Option<PString>,
    /// The info blob of tools, launchers, singletons (and 6.x clients).
    pub info: Option<Vec<Info>>,
    /// Bytes after everything (libpmix 4.2.2 clients send one 0x00).
    #[cfg_attr(feature = "serde", serde(with = "serde_bytes_hex"))]
    pub trailing: Bytes,
}

struct Cursor<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn err(&self, what: &'static str) -> Error {
        Error::new(ErrorKind::BadString(what), self.pos)
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.b.len() - self.pos < n {
            return Err(Error::new(
                ErrorKind::ReadPastEnd {
                    needed: n as u64,
                    remaining: (self.b.len() - self.pos) as u64,
                },
                self.pos,
            ));
        }
        let s = &self.b[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn cstr(&mut self, what: &'static str) -> Result<PString> {
        let rest = &self.b[self.pos..];
        let n = rest
            .iter()
            .position(|&c| c == 0)
            .ok_or_else(|| self.err(what))?;
        let s = PString::from_bytes(&rest[..n]).map_err(|_| self.err(what))?;
        self.pos += n + 1;
        Ok(s)
    }
    fn be32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn rest(&self) -> &'a [u8] {
        &self.b[self.pos..]
    }
}

impl ConnectRequest {
    /// The wire format the peer will use for everything after the handshake,
    /// of the release its version string names (a 7.0 client speaking v41
    /// packs 7.0's v41: spec-notes/pmix7.md).
    pub fn format(&self) -> Option<Format> {
        let d = from_module_list(self.bfrops.as_ref()?.as_str()?)?;
        let bt = BufferType::from_code(self.buffer_type?)?;
        let f = Format::new(d, bt);
        Some(
            match self.version.as_str().and_then(Release::from_version) {
                Some(r) => f.of_release(r),
                None => f,
            },
        )
    }

    /// Parse a request body (the bytes after the 16-byte header).
    pub fn decode(body: &[u8]) -> Result<ConnectRequest> {
        let mut c = Cursor { b: body, pos: 0 };
        let psec = c.cstr("psec module name")?;
        let n = c.be32()? as usize;
        let credential = Bytes::copy_from_slice(c.take(n)?);
        let flag = c.u8()?;
        let (has_ids, has_proc) = identity_layout(flag);
        let uid_gid = if has_ids {
            Some((c.be32()?, c.be32()?))
        } else {
            None
        };
        let proc = if has_proc {
            let at = c.pos;
            let ns = c.cstr("namespace")?;
            let nspace = Nspace::new(ns)
                .map_err(|_| Error::new(ErrorKind::BadString("namespace too long"), at))?;
            Some(Proc {
                nspace,
                rank: c.be32()?,
            })
        } else {
            None
        };
        let version = c.cstr("version")?;
        let mut req = ConnectRequest {
            psec,
            credential,
            flag,
            uid_gid,
            proc,
            version,
            bfrops: None,
            buffer_type: None,
            gds: None,
            info: None,
            trailing: Bytes::new(),
        };
        if c.rest().is_empty() {
            return Ok(req); // a PMIx 2.0 peer stops after its version
        }
        req.bfrops = Some(c.cstr("bfrops module")?);
        req.buffer_type = Some(c.u8()?);
        req.gds = Some(c.cstr("gds module")?);
        let rest = c.rest();
        // libpmix 4.2.2 simple clients end with one stray zero byte
        if flag == peer_type::SIMPLE_CLIENT && rest == [0] {
            req.trailing = Bytes::copy_from_slice(rest);
            return Ok(req);
        }
        if !rest.is_empty() {
            if let Some(fmt) = req.format() {
                if let Some((infos, used)) = info_blob(&fmt, rest) {
                    req.info = Some(infos);
                    req.trailing = Bytes::copy_from_slice(&rest[used..]);
                    return Ok(req);
                }
            }
            req.trailing = Bytes::copy_from_slice(rest);
        }
        Ok(req)
    }

    /// The request body, byte for byte as libpmix lays it out.
    pub fn encode(&self) -> Result<Vec<u8>> {
        let mut v = Vec::new();
        let cstr = |v: &mut Vec<u8>, s: &PString| {
            v.extend_from_slice(s.as_bytes());
            v.push(0);
        };
        cstr(&mut v, &self.psec);
        v.extend_from_slice(&(self.credential.len() as u32).to_be_bytes());
        v.extend_from_slice(&self.credential);
        v.push(self.flag);
        let (has_ids, has_proc) = identity_layout(self.flag);
        let bad = |what: &str| {
            Error::new(
                ErrorKind::Invalid(format!("peer type {} needs {what}", self.flag)),
                0,
            )
        };
        if has_ids {
            let (u, g) = self.uid_gid.ok_or_else(|| bad("uid and gid"))?;
            v.extend_from_slice(&u.to_be_bytes());
            v.extend_from_slice(&g.to_be_bytes());
        }
        if has_proc {
            let p = self
                .proc
                .as_ref()
                .ok_or_else(|| bad("a namespace and rank"))?;
            cstr(&mut v, p.nspace.as_pstring());
            v.extend_from_slice(&p.rank.to_be_bytes());
        }
        cstr(&mut v, &self.version);
        if let (Some(b), Some(t), Some(g)) = (&self.bfrops, self.buffer_type, &self.gds) {
            cstr(&mut v, b);
            v.push(t);
            cstr(&mut v, g);
        }
        if let Some(infos) = &self.info {
            let fmt = self
                .format()
                .ok_or_else(|| bad("a known bfrops module for its info"))?;
            crate::pack_unit(
                &mut v,
                &fmt,
                DataType::Size,
                &[Value::Size(infos.len() as u64)],
            )?;
            let values: Vec<Value> = infos
                .iter()
                .map(|i| Value::Info(Box::new(i.clone())))
                .collect();
            crate::pack_unit(&mut v, &fmt, DataType::Info, &values)?;
        }
        v.extend_from_slice(&self.trailing);
        Ok(v)
    }
}

/// The info blob: a pack unit of one SIZE (n), then a pack unit of n
/// INFOs, in the peer's format; with the bytes used.
fn info_blob(fmt: &Format, b: &[u8]) -> Option<(Vec<Info>, usize)> {
    let (n, used) = crate::decode_unit(fmt, DataType::Size, b).ok()?;
    let [Value::Size(n)] = n.as_slice() else {
        return None;
    };
    let (values, used2) = crate::decode_unit(fmt, DataType::Info, &b[used..]).ok()?;
    if values.len() as u64 != *n {
        return None;
    }
    let infos = values
        .into_iter()
        .map(|v| match v {
            Value::Info(i) => Some(*i),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Some((infos, used + used2))
}

/// The server's reply to a simple client (protocol.md §4.3.1): status,
/// then (on success) the client's index, both big-endian.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize))]
pub struct ClientReply {
    /// The connection's `pmix_status_t` (0 accepted).
    pub status: i32,
    /// The client's index at the server (its `pindex` in later headers).
    pub index: u32,
}

impl ClientReply {
    /// The 8 reply bytes.
    pub fn encode(&self) -> [u8; 8] {
        let mut b = [0u8; 8];
        b[..4].copy_from_slice(&self.status.to_be_bytes());
        b[4..].copy_from_slice(&self.index.to_be_bytes());
        b
    }
    /// A reply from its bytes; an error if fewer than 8.
    pub fn decode(b: &[u8]) -> Result<ClientReply> {
        let mut c = Cursor { b, pos: 0 };
        Ok(ClientReply {
            status: c.be32()? as i32,
            index: c.be32()?,
        })
    }
}

/// Length of the NUL-padded namespace fields of the tool reply.
pub const NSPACE_FIELD: usize = 256;

/// Length of the server's handshake reply to a peer of type `flag`: the
/// 8 bytes of [`ClientReply`] for a simple client; for tools and launchers
/// [`ToolReply`]'s status, identity (assigned identity first for flags 3
/// and 6) and security status. A refusal is shorter: a lone status.
pub fn reply_len(flag: u8) -> usize {
    match flag {
        peer_type::SIMPLE_CLIENT => 8,
        peer_type::TOOL_NEEDS_ID | peer_type::LAUNCHER_NEEDS_ID => 4 + 2 * (NSPACE_FIELD + 4) + 4,
        _ => 4 + NSPACE_FIELD + 4 + 4,
    }
}

/// The server's reply to a tool, launcher or singleton (protocol.md §4.3.2).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize))]
pub struct ToolReply {
    /// The connection's `pmix_status_t` (0 accepted).
    pub status: i32,
    /// The identity assigned to a tool that asked for one (flags 3 and 6).
    pub assigned: Option<Proc>,
    /// The server's own identity.
    pub server: Proc,
    /// The result of the security handshake (0 success).
    pub security_status: i32,
}

fn padded_nspace(c: &mut Cursor) -> Result<Nspace> {
    let at = c.pos;
    let f = c.take(NSPACE_FIELD)?;
    let n = f.iter().position(|&x| x == 0).unwrap_or(f.len());
    Nspace::from_bytes(&f[..n]).map_err(|_| Error::new(ErrorKind::BadString("namespace field"), at))
}

fn put_padded(v: &mut Vec<u8>, ns: &Nspace) {
    let mut f = [0u8; NSPACE_FIELD];
    f[..ns.as_bytes().len()].copy_from_slice(ns.as_bytes());
    v.extend_from_slice(&f);
}

impl ToolReply {
    /// Decode the reply to a request with peer type `flag`.
    pub fn decode(flag: u8, b: &[u8]) -> Result<ToolReply> {
        let mut c = Cursor { b, pos: 0 };
        let status = c.be32()? as i32;
        let assigned = if matches!(
            flag,
            peer_type::TOOL_NEEDS_ID | peer_type::LAUNCHER_NEEDS_ID
        ) {
            let nspace = padded_nspace(&mut c)?;
            Some(Proc {
                nspace,
                rank: c.be32()?,
            })
        } else {
            None
        };
        let nspace = padded_nspace(&mut c)?;
        let server = Proc {
            nspace,
            rank: c.be32()?,
        };
        let security_status = c.be32()? as i32;
        Ok(ToolReply {
            status,
            assigned,
            server,
            security_status,
        })
    }

    /// The reply bytes (protocol.md §4.3.2).
    pub fn encode(&self) -> Vec<u8> {
        let mut v = self.status.to_be_bytes().to_vec();
        if let Some(a) = &self.assigned {
            put_padded(&mut v, &a.nspace);
            v.extend_from_slice(&a.rank.to_be_bytes());
        }
        put_padded(&mut v, &self.server.nspace);
        v.extend_from_slice(&self.server.rank.to_be_bytes());
        v.extend_from_slice(&self.security_status.to_be_bytes());
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_md_simple_client_example() {
        // protocol.md §4.1: 67 bytes, rank 0 of 'testns', root, libpmix 4.2.2
        let body = pmix_types::hex::decode(
            "6e617469766500 00000008 0000000000000000 00 74657374 6e7300 00000000 \
             342e322e3272633200 76343100 01 6861736800 00",
        )
        .unwrap();
        let r = ConnectRequest::decode(&body).unwrap();
        assert_eq!(r.proc, Some(Proc::new("testns", 0)));
        assert_eq!(r.version.as_str(), Some("4.2.2rc2"));
        assert_eq!(r.format(), Some(Format::V41));
        assert_eq!(&r.trailing[..], &[0]);
        assert_eq!(r.encode().unwrap(), body);
    }
}
