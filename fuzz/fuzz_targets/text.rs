//! `cargo +nightly fuzz run text`: see `zeroplay::fuzz::text`.
#![no_main]

use std::sync::OnceLock;

static SEEDS: OnceLock<(zeroplay::fuzz::Seeds, tempfile::TempDir)> = OnceLock::new();

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let (s, dir) = SEEDS.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        (zeroplay::fuzz::Seeds::new(dir.path()), dir)
    });
    let _ = dir;
    zeroplay::fuzz::text(s, &dir.path().join("positions.jsonl"), data);
});
