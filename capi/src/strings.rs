//! The string functions: names of status codes, types, states and
//! attributes, and the library's version. The returned strings are
//! static (interned once): the caller must not free them.

use crate::abi::*;
use crate::conv::read_str;
use crate::guard::{exports, intern};
use pmix_types::names;
use std::ffi::c_char;

/// The text `PMIx_Get_version` returns.
pub const VERSION: &str = concat!(
    "pmix-wire ",
    env!("CARGO_PKG_VERSION"),
    " (PMIx Standard: 4.2, Stable ABI: 0.0, Provisional ABI: 0.0)"
);

/// `raw:<input>`, newly allocated in `*out`: the form libpmix's "raw"
/// preg component writes (its default writes `pmix[…]` for node lists;
/// every libpmix reads both).
fn raw_regex(input: *const c_char, out: *mut *mut c_char) -> pmix_status_t {
    use pmix_types::status::codes::*;
    if out.is_null() {
        return PMIX_ERR_BAD_PARAM;
    }
    // SAFETY: NULL or a C string
    let Some(s) = (unsafe { read_str(input) }) else {
        return PMIX_ERR_BAD_PARAM;
    };
    let text = [b"raw:".as_slice(), s.as_bytes()].concat();
    match crate::conv::c_strdup(&text) {
        Ok(p) => {
            // SAFETY: checked non-NULL
            unsafe { *out = p };
            PMIX_SUCCESS
        }
        Err(e) => e,
    }
}

exports! {
    /// `PMIx_Error_string`: the text of a status code.
    fn PMIx_Error_string(status: pmix_status_t) -> *const c_char {
        intern(pmix_types::status::error_string(status))
    }
    /// `PMIx_Data_type_string`: the name of a data type.
    fn PMIx_Data_type_string(r#type: pmix_data_type_t) -> *const c_char {
        intern(pmix_types::data_type_string(r#type))
    }
    /// `PMIx_Proc_state_string`: the text of a process state.
    fn PMIx_Proc_state_string(state: u8) -> *const c_char {
        intern(names::proc_state_string(state))
    }
    /// `PMIx_Scope_string`: the text of a scope.
    fn PMIx_Scope_string(scope: u8) -> *const c_char {
        intern(names::scope_string(scope))
    }
    /// `PMIx_Persistence_string`: the text of a persistence.
    fn PMIx_Persistence_string(persist: u8) -> *const c_char {
        intern(names::persistence_string(persist))
    }
    /// `PMIx_Data_range_string`: the text of a data range.
    fn PMIx_Data_range_string(range: u8) -> *const c_char {
        intern(names::data_range_string(range))
    }
    /// `PMIx_Info_directives_string`: the text of directive bits, newly allocated (the caller frees it, as with libpmix).
    fn PMIx_Info_directives_string(directives: pmix_info_directives_t) -> *mut c_char {
        crate::conv::c_strdup(names::info_directives_string(directives).as_bytes()).unwrap_or(std::ptr::null_mut())
    }
    /// `PMIx_Alloc_directive_string`: the text of an allocation directive.
    fn PMIx_Alloc_directive_string(directive: u8) -> *const c_char {
        intern(names::alloc_directive_string(directive))
    }
    /// `PMIx_Job_state_string`: the text of a job state.
    fn PMIx_Job_state_string(state: u8) -> *const c_char {
        intern(names::job_state_string(state))
    }
    /// `PMIx_Link_state_string`: the text of a link state.
    fn PMIx_Link_state_string(state: u8) -> *const c_char {
        intern(names::link_state_string(state))
    }
    /// `PMIx_Device_type_string`: the text of a device type.
    fn PMIx_Device_type_string(r#type: u64) -> *const c_char {
        intern(names::device_type_string(r#type))
    }
    /// `PMIx_IOF_channel_string`: the text of I/O forwarding channel bits.
    fn PMIx_IOF_channel_string(channel: u16) -> *const c_char {
        intern(&names::iof_channel_string(channel))
    }
    /// `PMIx_Get_attribute_string`: the attribute string of a macro name (the name itself if unknown).
    fn PMIx_Get_attribute_string(attribute: *const c_char) -> *const c_char {
        // SAFETY: NULL or a C string
        let a = unsafe { read_str(attribute) }.map(|a| a.to_string_lossy().into_owned());
        // an unknown name: the caller's own string back, not a copy kept forever
        match a.as_deref().and_then(pmix_types::attrs::attribute_string) {
            Some(known) => intern(known),
            None => attribute,
        }
    }
    /// `PMIx_Get_attribute_name`: the macro name of an attribute string (the string itself if unknown).
    fn PMIx_Get_attribute_name(attrstring: *const c_char) -> *const c_char {
        // SAFETY: NULL or a C string
        let a = unsafe { read_str(attrstring) }.map(|a| a.to_string_lossy().into_owned());
        match a {
            Some(a) if pmix_types::attrs::attribute_name(&a) != a => intern(pmix_types::attrs::attribute_name(&a)),
            _ => attrstring,
        }
    }
    /// `PMIx_generate_regex`: a newly allocated regular expression for the comma-separated `input` (the `raw:` form).
    fn PMIx_generate_regex(input: *const c_char, regex: *mut *mut c_char) -> pmix_status_t {
        raw_regex(input, regex)
    }
    /// `PMIx_generate_ppn`: a newly allocated regular expression for the procs-per-node `input` (the `raw:` form).
    fn PMIx_generate_ppn(input: *const c_char, ppn: *mut *mut c_char) -> pmix_status_t {
        raw_regex(input, ppn)
    }
    /// `PMIx_Get_version`: this library's version text.
    fn PMIx_Get_version() -> *const c_char {
        intern(VERSION)
    }
}
