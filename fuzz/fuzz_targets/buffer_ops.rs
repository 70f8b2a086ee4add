#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| pmix_codec::fuzz::buffer_ops(data));
