//! `cargo +nightly fuzz run model_file`: see `zeroplay::fuzz::model_file`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let (s, _) = zeroplay::fuzz::shared();
    zeroplay::fuzz::model_file(s, data);
});
