//! `cargo +nightly fuzz run parquet_file`: see `zeroplay::fuzz::parquet_file`.
#![no_main]

use std::sync::OnceLock;

static SEEDS: OnceLock<(zeroplay::fuzz::Seeds, tempfile::TempDir)> = OnceLock::new();

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let (s, dir) = SEEDS.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        (zeroplay::fuzz::Seeds::new(dir.path()), dir)
    });
    let _ = dir;
    zeroplay::fuzz::parquet_file(s, &dir.path().join("fuzzed.parquet"), data);
});
