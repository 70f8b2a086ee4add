//! `pmix_rank_t`: the wire integers of the special ranks (`RANK_*`,
//! for a [`Proc`](crate::Proc)'s `rank` field) and [`Rank`], the typed
//! rank with the standard's names.

use std::fmt;

/// `PMIX_RANK_UNDEF` (`UINT32_MAX`): no rank; a process not yet ranked.
pub const RANK_UNDEF: u32 = u32::MAX;
/// `PMIX_RANK_WILDCARD` (`UINT32_MAX - 1`): every process of the namespace
/// (job-level data is stored and fetched under it).
pub const RANK_WILDCARD: u32 = u32::MAX - 1;
/// `PMIX_RANK_LOCAL_NODE` (`UINT32_MAX - 2`): every process of the namespace on this node.
pub const RANK_LOCAL_NODE: u32 = u32::MAX - 2;
/// `PMIX_RANK_LOCAL_PEERS` (`UINT32_MAX - 4`): this process's peers on this node.
pub const RANK_LOCAL_PEERS: u32 = u32::MAX - 4;
/// `PMIX_RANK_INVALID` (`UINT32_MAX - 3`): an invalid rank.
pub const RANK_INVALID: u32 = u32::MAX - 3;
/// `PMIX_RANK_VALID` (`UINT32_MAX - 50`): ranks up to this one are real process ranks.
pub const RANK_VALID: u32 = u32::MAX - 50;

/// `pmix_rank_t`: a process's rank in its namespace, or one of the
/// standard's special values.
///
/// ```
/// use pmix_types::Rank;
///
/// assert_eq!(u32::from(Rank::WILDCARD), u32::MAX - 1);
/// assert!(Rank::new(3).is_valid() && !Rank::WILDCARD.is_valid());
/// assert_eq!(Rank::WILDCARD.to_string(), "PMIX_RANK_WILDCARD");
/// assert_eq!(Rank::new(3).to_string(), "3");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[repr(transparent)]
pub struct Rank(u32);

/// The special ranks: constant name, value, C macro.
const SPECIAL_RANKS: &[(&str, Rank, &str)] = &[
    ("UNDEF", Rank::UNDEF, "PMIX_RANK_UNDEF"),
    ("WILDCARD", Rank::WILDCARD, "PMIX_RANK_WILDCARD"),
    ("LOCAL_NODE", Rank::LOCAL_NODE, "PMIX_RANK_LOCAL_NODE"),
    ("INVALID", Rank::INVALID, "PMIX_RANK_INVALID"),
    ("LOCAL_PEERS", Rank::LOCAL_PEERS, "PMIX_RANK_LOCAL_PEERS"),
];

impl Rank {
    /// `PMIX_RANK_UNDEF` (`UINT32_MAX`): job-level data that is not
    /// associated with a rank (requests to the host, PMIx_Get without a
    /// specific rank).
    pub const UNDEF: Rank = Rank(RANK_UNDEF);
    /// `PMIX_RANK_WILDCARD` (`UINT32_MAX - 1`): every process of the
    /// namespace; job-level data is stored under it.
    pub const WILDCARD: Rank = Rank(RANK_WILDCARD);
    /// `PMIX_RANK_LOCAL_NODE` (`UINT32_MAX - 2`): every process of the
    /// namespace on the local node.
    pub const LOCAL_NODE: Rank = Rank(RANK_LOCAL_NODE);
    /// `PMIX_RANK_INVALID` (`UINT32_MAX - 3`).
    pub const INVALID: Rank = Rank(RANK_INVALID);
    /// `PMIX_RANK_LOCAL_PEERS` (`UINT32_MAX - 4`): every peer (process of
    /// the same namespace) on the local node.
    pub const LOCAL_PEERS: Rank = Rank(RANK_LOCAL_PEERS);
    /// `PMIX_RANK_VALID` (`UINT32_MAX - 50`): the boundary; ranks below it
    /// are ordinary ranks, the range from it up is reserved.
    pub const VALID_BOUNDARY: Rank = Rank(RANK_VALID);

    /// An ordinary rank (or any wire value).
    pub const fn new(r: u32) -> Self {
        Rank(r)
    }

    /// The wire integer.
    pub const fn wire(self) -> u32 {
        self.0
    }

    /// `PMIX_RANK_IS_VALID`: an ordinary rank, below the reserved range.
    pub const fn is_valid(self) -> bool {
        self.0 < RANK_VALID
    }

    /// Whether this is [`Rank::WILDCARD`].
    pub const fn is_wildcard(self) -> bool {
        self.0 == RANK_WILDCARD
    }

    /// The C macro of a special rank (e.g. `"PMIX_RANK_WILDCARD"`), or
    /// `None` for an ordinary or unnamed reserved rank.
    pub fn c_name(self) -> Option<&'static str> {
        SPECIAL_RANKS
            .iter()
            .find(|(_, r, _)| *r == self)
            .map(|(_, _, c)| *c)
    }

    /// The special ranks, in the order of [`Rank::c_name`]'s table.
    pub fn specials() -> impl Iterator<Item = Rank> {
        SPECIAL_RANKS.iter().map(|(_, r, _)| *r)
    }
}

impl From<u32> for Rank {
    fn from(r: u32) -> Self {
        Rank(r)
    }
}

impl From<Rank> for u32 {
    fn from(r: Rank) -> Self {
        r.0
    }
}

/// The standard's macro name for a special rank, the number otherwise.
impl fmt::Display for Rank {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.c_name() {
            Some(c) => f.write_str(c),
            None => write!(f, "{}", self.0),
        }
    }
}

impl fmt::Debug for Rank {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match SPECIAL_RANKS.iter().find(|(_, r, _)| r == self) {
            Some((n, _, _)) => write!(f, "Rank::{n}"),
            None => write!(f, "Rank({})", self.0),
        }
    }
}
