//! Pack and unpack dispatch for one item, generated from the rows of the
//! one type table (`pmix_types::type_table!`): each row's value is written
//! and read in the wire form its row names (`layout.rs`). Both matches are
//! exhaustive, so a type cannot be packable and not unpackable. The
//! dispatch is the top of the value codec: `pack.rs` and `unpack.rs` call
//! it through the [`Payload`] trait (`item.rs`); the encoded lengths of
//! units and values are beside the code that writes them, in `pack.rs`.

use crate::error::Result;
use crate::item::Payload;
use crate::layout::*;
use crate::wire::{Dec, Enc, Sizer};
use pmix_types::*;

macro_rules! dispatch {
    ($( $code:literal $variant:ident $name:literal ( $($inner:ty)? ) $form:ty, $print:ident ; )*) => {
        /// One item's payload, in its row's wire form.
        #[inline]
        pub(crate) fn pack_payload(e: &mut Enc, v: &Value) -> Result<()> {
            match v {
                $( dispatch!(@bind x $variant $($inner)?) =>
                    <$form as Form<dispatch!(@ty $($inner)?)>>::put(e, dispatch!(@ref x $($inner)?)), )*
            }
        }

        /// The bytes [`pack_payload`] writes for `v`.
        pub(crate) fn payload_len(s: &Sizer, v: &Value) -> usize {
            match v {
                $( dispatch!(@bind x $variant $($inner)?) =>
                    <$form as Form<dispatch!(@ty $($inner)?)>>::len(s, dispatch!(@ref x $($inner)?)), )*
            }
        }

        /// One item of type `ty`, in its row's wire form.
        #[inline]
        pub(crate) fn unpack_payload(d: &mut Dec, ty: DataType) -> Result<Value> {
            Ok(match ty {
                $( DataType::$variant => dispatch!(@get d $variant $form, $($inner)?), )*
            })
        }
    };
    (@bind $x:ident $variant:ident) => { Value::$variant };
    (@bind $x:ident $variant:ident $inner:ty) => { Value::$variant($x) };
    (@ty) => { () };
    (@ty $inner:ty) => { $inner };
    (@ref $x:ident) => { &() };
    (@ref $x:ident $inner:ty) => { $x };
    (@get $d:ident $variant:ident $form:ty,) => {{
        <$form as Form<()>>::get($d)?;
        Value::$variant
    }};
    (@get $d:ident $variant:ident $form:ty, $inner:ty) => {
        Value::$variant(<$form as Form<$inner>>::get($d)?)
    };
}

pmix_types::type_table!(dispatch);

/// The recursion point of the value codec: `pack.rs` and `unpack.rs` reach
/// this dispatch through [`Payload`], without importing this module.
impl Payload for Value {
    #[inline]
    fn pack_payload(&self, e: &mut Enc) -> Result<()> {
        pack_payload(e, self)
    }
    #[inline]
    fn payload_len(&self, s: &Sizer) -> usize {
        payload_len(s, self)
    }
    #[inline]
    fn unpack_payload(d: &mut Dec, ty: DataType) -> Result<Value> {
        unpack_payload(d, ty)
    }
}
