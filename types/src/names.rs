//! String helpers of the standard.
