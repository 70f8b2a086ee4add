//! `pmix_framework_names`: the one data symbol libpmix exports that
//! programs import. libpmix declares it `char *pmix_framework_names[]`, a
//! NULL-terminated array of the names of its MCA frameworks; Open MPI 5's
//! libopen-pal reads it to decide whether an MCA parameter it was given
//! (`OMPI_MCA_<name>_…`, a param file's `<name>_…`) belongs to PMIx and is to
//! be passed on as `PMIX_MCA_<name>_…`. We have no MCA frameworks, but we
//! export the names libpmix 5.0.11 does, so that Open MPI classifies every
//! parameter as it does on libpmix (spec-notes/capi.md).

use std::ffi::c_char;

/// A NULL-terminated array of C strings, laid out as C's `char *[N]`
/// (`repr(transparent)`), shareable because its strings are static and
/// never written.
#[repr(transparent)]
pub struct Names<const N: usize>(pub [*const c_char; N]);

// SAFETY: the pointers are to 'static immutable strings and the array is never written
unsafe impl<const N: usize> Sync for Names<N> {}

impl<const N: usize> Names<N> {
    /// The names before the terminating NULL.
    pub fn names(&self) -> impl Iterator<Item = &'static std::ffi::CStr> + '_ {
        self.0.iter().take_while(|p| !p.is_null()).map(|&p| {
            // SAFETY: every non-NULL entry is one of the static C strings below
            unsafe { std::ffi::CStr::from_ptr(p) }
        })
    }
}

/// `pmix_framework_names`: libpmix 5.0.11's MCA framework names, in its order, then NULL.
#[no_mangle]
pub static pmix_framework_names: Names<17> = Names([
    c"bfrops".as_ptr(),
    c"gds".as_ptr(),
    c"pcompress".as_ptr(),
    c"pdl".as_ptr(),
    c"pif".as_ptr(),
    c"pinstalldirs".as_ptr(),
    c"plog".as_ptr(),
    c"pmdl".as_ptr(),
    c"pnet".as_ptr(),
    c"preg".as_ptr(),
    c"psec".as_ptr(),
    c"psensor".as_ptr(),
    c"psquash".as_ptr(),
    c"pstat".as_ptr(),
    c"ptl".as_ptr(),
    c"mca".as_ptr(),
    std::ptr::null(),
]);

/// The data symbols this module exports.
pub const EXPORTS: &[&str] = &["pmix_framework_names"];
