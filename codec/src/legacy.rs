//! Per-dialect deviations from the modern layouts.

use crate::dialect::Dialect;

/// Whether a typeless DATA_ARRAY carries its size after the UNDEF tag.
/// libpmix ≤ 6.0 writes `tag(0) SIZE(size)`; master writes `tag(0)` only
/// (bfrops.md §9.3). (6.1.0 writes the size but does not read it.)
pub fn undef_array_has_size(d: Dialect) -> bool {
    !matches!(d, Dialect::V7)
}
