//! The shared object answers to libpmix's soname, so a program linked
//! against libpmix 4.2.2 (NEEDED libpmix.so.2) loads this one when it is
//! first on LD_LIBRARY_PATH.
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libpmix.so.2");
}
