//! pmix-codec: the PMIx "bfrops" wire format.

pub mod compress;
pub mod float;
