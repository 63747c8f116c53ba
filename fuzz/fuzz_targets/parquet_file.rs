//! `cargo +nightly fuzz run parquet_file`: see `zeroplay::fuzz::parquet_file`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let (s, dir) = zeroplay::fuzz::shared();
    zeroplay::fuzz::parquet_file(s, &dir.join("fuzzed.parquet"), data);
});
