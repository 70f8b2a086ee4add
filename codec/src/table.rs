//! Pack and unpack dispatch for one item, generated from the rows of the
//! one type table (`pmix_types::type_table!`): each row's value is written
//! and read in the wire form its row names (`layout.rs`). Both matches are
//! exhaustive, so a type cannot be packable and not unpackable. The
//! encoded lengths follow the same rows (`*_len`), mirroring `pack.rs`.

use crate::dialect::Dialect;
use crate::error::Result;
use crate::layout::*;
use crate::legacy::InfoTypeField;
use crate::wire::{system_tag, Dec, Enc, Sizer};
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

/// The bytes `pack::pack_items` writes for `values` of type `ty` (values
/// it accepts).
pub(crate) fn items_len(s: &Sizer, ty: DataType, values: &[Value]) -> usize {
    if ty == DataType::Pointer {
        // one sentinel per run; v12 writes nothing
        return if s.dialect == Dialect::V12 { 0 } else { s.u8() };
    }
    if let Some(tag) = system_tag(ty, s.ints, s.dialect) {
        let each: usize = values
            .iter()
            .map(|v| match v {
                Value::Pid(x) => s.u32(*x),
                Value::Int(x) | Value::Status(x) => s.i32(*x),
                Value::Uint(x) | Value::ProcRank(x) => s.i32(*x as i32),
                Value::Scope(x) | Value::DataRange(x) | Value::Persist(x) => s.i32(*x as i32),
                Value::Size(x) => s.u64(*x),
                other => payload_len(s, other),
            })
            .sum();
        return s.sys_tag(tag) + each;
    }
    if s.dialect == Dialect::V12 && matches!(ty, DataType::InfoDirectives | DataType::ProcState) {
        return 0;
    }
    values.iter().map(|v| payload_len(s, v)).sum()
}

fn type_field_len(s: &Sizer, code: u16, field: InfoTypeField) -> usize {
    match field {
        InfoTypeField::Tag => s.tag(code),
        InfoTypeField::TaggedInt => s.int(code as i32),
        InfoTypeField::TaggedIntV1 => s.int(crate::legacy::v2_to_v1(code) as i32),
    }
}

/// The bytes `pack::pack_value_as` writes for `v`.
pub(crate) fn value_len(s: &Sizer, v: &Value, field: InfoTypeField) -> usize {
    if s.dialect == Dialect::V12 {
        match v {
            Value::DataArray(a) => {
                let infos: Vec<Info> = match &**a {
                    DataArray::Typed { elements, .. } => elements
                        .iter()
                        .filter_map(|x| match x {
                            Value::Info(i) => Some((**i).clone()),
                            _ => None,
                        })
                        .collect(),
                    DataArray::Undef { .. } => Vec::new(),
                };
                return value_len(s, &Value::InfoArray(infos.into()), field);
            }
            Value::ProcRank(r) => return value_len(s, &Value::Int(*r as i32), field),
            _ => {}
        }
    }
    let ty = v.data_type();
    if ty == DataType::Undef {
        return type_field_len(s, 0, field);
    }
    type_field_len(s, ty.code(), field)
        + s.driver_tag(crate::legacy::value_driver_type(ty))
        + payload_len(s, v)
}

/// The bytes `pack::pack_darray` writes for `a`.
pub(crate) fn darray_len(s: &Sizer, a: &DataArray) -> usize {
    match a {
        DataArray::Undef { size } => {
            s.tag(0)
                + if s.dialect.undef_array_has_size() {
                    s.size(*size)
                } else {
                    0
                }
        }
        DataArray::Typed {
            elem_type,
            elements,
        } => {
            let head = s.tag(elem_type.code()) + s.size(elements.len() as u64);
            if elements.is_empty() {
                head
            } else {
                head + s.driver_tag(*elem_type) + items_len(s, *elem_type, elements)
            }
        }
    }
}
