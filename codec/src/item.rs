//! The seam of the value codec's recursion: the two traits through which
//! the lower layers (`pack.rs`, `unpack.rs`, the message fields) reach the
//! upper ones without importing them.
//!
//! An INFO holds a value, a value may be an INFO array, and so on: the
//! recursion runs from the framing code (`pack.rs`/`unpack.rs`) to the
//! type table's dispatch (`dispatch.rs`) and to the structure layouts
//! (`layout.rs`), which call the framing code again. The framing code calls
//! only these traits; `dispatch.rs` implements [`Payload`] for `Value` and
//! `layout.rs` implements [`Layout`] for each structure, so every call goes
//! down the module graph (the layering is in `lib.rs`'s comment).

use crate::error::Result;
use crate::wire::{Dec, Enc, Sizer};
use pmix_types::DataType;

/// A structure packed, unpacked and measured field by field from one list
/// (implemented by the `layout!` rows of `layout.rs`).
pub(crate) trait Layout: Sized {
    fn pack(&self, e: &mut Enc) -> Result<()>;
    fn unpack(d: &mut Dec) -> Result<Self>;
    fn encoded_len(&self, s: &Sizer) -> usize;
}

/// One item's payload by its type, in the wire form its type-table row
/// names (implemented for `Value` by the dispatch of `dispatch.rs`).
pub(crate) trait Payload: Sized {
    fn pack_payload(&self, e: &mut Enc) -> Result<()>;
    /// The bytes `pack_payload` writes.
    fn payload_len(&self, s: &Sizer) -> usize;
    fn unpack_payload(d: &mut Dec, ty: DataType) -> Result<Self>;
}
