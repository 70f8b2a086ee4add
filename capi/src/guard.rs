//! The boundary: every export runs inside [`guarded`], so no panic crosses
//! into C (a caught panic is `PMIX_ERROR`, a NULL pointer, false or
//! nothing, and one line on stderr), and the `exports!` table both
//! defines the `extern "C"` functions and lists their names.

use std::ffi::c_char;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// What an export returns when its body panicked.
pub trait OnPanic {
    /// The value handed to C instead.
    fn on_panic() -> Self;
}

impl OnPanic for i32 {
    /// `PMIX_ERROR`.
    fn on_panic() -> i32 {
        pmix_types::status::codes::PMIX_ERROR
    }
}
impl OnPanic for () {
    fn on_panic() {}
}
impl OnPanic for bool {
    fn on_panic() -> bool {
        false
    }
}
impl<T> OnPanic for *const T {
    fn on_panic() -> *const T {
        std::ptr::null()
    }
}
impl<T> OnPanic for *mut T {
    fn on_panic() -> *mut T {
        std::ptr::null_mut()
    }
}

/// Whether `PMIX_CAPI_TRACE` is set: then every call of an export is
/// one line on stderr (`pmix-capi: PMIx_Init`), to see what a program
/// calls (and that it is this library it calls).
fn tracing() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("PMIX_CAPI_TRACE").is_some_and(|v| !v.is_empty()))
}

/// A call of the export `name` from C: traced (one line on stderr when
/// `PMIX_CAPI_TRACE` is set), then
/// [`guarded`].
pub fn export<R: OnPanic>(name: &str, body: impl FnOnce() -> R) -> R {
    if tracing() {
        use std::io::Write;
        // one write, so that the lines of several processes on one pipe do not mix
        let _ = std::io::stderr().write_all(format!("pmix-capi: {name}\n").as_bytes());
    }
    guarded(name, body)
}

/// Run `body` (an export's, or a callback's on our own threads); a panic
/// becomes [`OnPanic`]'s value and a log line naming `name`.
pub fn guarded<R: OnPanic>(name: &str, body: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(r) => r,
        Err(p) => {
            let what = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            eprintln!("pmix-capi: {name} panicked ({what}); returning an error to the caller");
            R::on_panic()
        }
    }
}

/// The export table of one module: each row is an `extern "C"` function
/// (`#[no_mangle]`, its body [`guarded`]) and its name in `EXPORTS`.
macro_rules! exports {
    ($( $(#[$m:meta])* fn $name:ident ( $($arg:ident : $ty:ty),* $(,)? ) $(-> $ret:ty)? $body:block )*) => {
        $(
            $(#[$m])*
            ///
            /// # Safety
            /// Every pointer must be NULL or valid as the PMIx standard describes it.
            #[no_mangle]
            pub unsafe extern "C" fn $name($($arg: $ty),*) $(-> $ret)? {
                $crate::guard::export(stringify!($name), move || $body)
            }
        )*
        /// The C symbols this module exports.
        pub const EXPORTS: &[&str] = &[$(stringify!($name)),*];
    };
}
pub(crate) use exports;

/// A static string table for names that are only known at run time: the
/// strings are interned once (leaked, never freed), as libpmix's string
/// functions return pointers the caller must not free.
pub fn intern(s: &str) -> *const c_char {
    use std::collections::HashMap;
    use std::ffi::CString;
    use std::sync::Mutex;
    static TABLE: Mutex<Option<HashMap<String, &'static std::ffi::CStr>>> = Mutex::new(None);
    let mut t = TABLE.lock().unwrap_or_else(|p| p.into_inner());
    let map = t.get_or_insert_with(HashMap::new);
    if let Some(c) = map.get(s) {
        return c.as_ptr();
    }
    let c: &'static std::ffi::CStr = match CString::new(s.replace('\0', "")) {
        Ok(c) => Box::leak(c.into_boxed_c_str()),
        Err(_) => c"",
    };
    map.insert(s.to_string(), c);
    c.as_ptr()
}
