//! Version negotiation by namespace: each peer namespace has the wire
//! format its handshake announced; packing for a target (or unpacking from
//! a source) uses that namespace's format, and no target means our own —
//! the semantics of the standard's `PMIx_Data_pack(target, …)`.
//!
//! libpmix 4.2.2 resolves a foreign namespace by a `PMIx_Get` of the
//! module name, which its server stores as the peer's *version* string, so
//! the lookup fails or hangs (bfrops.md §5.3). Here the registry holds the
//! format itself, and an unknown namespace is an error, never a guess.

use crate::dialect::{Format, Release};
use crate::error::{Error, ErrorKind, Result};
use crate::{decode, pack_unit};
use pmix_types::{DataType, Nspace, Proc, Value};
use std::collections::HashMap;

/// What we know of one peer namespace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Peer {
    /// The wire format the namespace's processes speak.
    pub format: Format,
    /// The PMIx version the peer announced, if any ("4.2.2rc2").
    pub version: Option<String>,
}

/// Namespace → wire format, plus our own format.
#[derive(Clone, Debug)]
pub struct Registry {
    own: Format,
    own_nspace: Option<Nspace>,
    peers: HashMap<Nspace, Peer>,
}

impl Registry {
    /// A registry that packs in `own` for its own namespace (if known) and for namespaces not registered.
    pub fn new(own: Format, own_nspace: Option<Nspace>) -> Registry {
        Registry {
            own,
            own_nspace,
            peers: HashMap::new(),
        }
    }

    /// Record (or replace: the last connecting rank wins, as in libpmix)
    /// the format of a namespace. A version string that names a release
    /// family ([`Release::from_version`]: "7.0.0a1") sets the format's
    /// release: a 7.0 peer speaking v41 gets 7.0's v41.
    pub fn register(&mut self, nspace: Nspace, format: Format, version: Option<String>) {
        let format = match version.as_deref().and_then(Release::from_version) {
            Some(r) => format.of_release(r),
            None => format,
        };
        self.peers.insert(nspace, Peer { format, version });
    }

    /// Forget a namespace (its job ended); returns what was known of it.
    pub fn forget(&mut self, nspace: &Nspace) -> Option<Peer> {
        self.peers.remove(nspace)
    }

    /// What is known of a namespace, if it was registered.
    pub fn peer(&self, nspace: &Nspace) -> Option<&Peer> {
        self.peers.get(nspace)
    }

    /// The format for a target process: ours for `None` or our own
    /// namespace, the registered one otherwise; an unknown namespace is
    /// PMIX_ERR_NOT_FOUND territory (`None`).
    pub fn format_for(&self, target: Option<&Proc>) -> Option<Format> {
        match target {
            None => Some(self.own),
            Some(p) if Some(&p.nspace) == self.own_nspace.as_ref() => Some(self.own),
            Some(p) => self.peers.get(&p.nspace).map(|peer| peer.format),
        }
    }

    fn require(&self, who: Option<&Proc>) -> Result<Format> {
        self.format_for(who).ok_or_else(|| {
            Error::new(
                ErrorKind::Invalid(format!(
                    "no wire format registered for namespace {}",
                    who.map(|p| p.nspace.to_string()).unwrap_or_default()
                )),
                0,
            )
        })
    }

    /// `PMIx_Data_pack(target, …)`: one unit in the target's format.
    pub fn pack(
        &self,
        target: Option<&Proc>,
        out: &mut Vec<u8>,
        ty: DataType,
        values: &[Value],
    ) -> Result<()> {
        let fmt = self.require(target)?;
        pack_unit(out, &fmt, ty, values)
    }

    /// `PMIx_Data_unpack(source, …)`: all units in the source's format.
    pub fn unpack(&self, source: Option<&Proc>, bytes: &[u8], ty: DataType) -> Result<Vec<Value>> {
        let fmt = self.require(source)?;
        decode(&fmt, ty, bytes)
    }
}
