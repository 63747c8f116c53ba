//! `cargo +nightly fuzz run state_bytes`: see `zeroplay::fuzz::state_bytes`.
#![no_main]

use std::sync::OnceLock;

static SEEDS: OnceLock<(zeroplay::fuzz::Seeds, tempfile::TempDir)> = OnceLock::new();

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let (s, dir) = SEEDS.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        (zeroplay::fuzz::Seeds::new(dir.path()), dir)
    });
    let _ = dir;
    let k = zeroplay::fuzz::KINDS[usize::from(data.first().copied().unwrap_or(0)) % 3];
    zeroplay::fuzz::state_bytes(k, s, data.get(1..).unwrap_or_default());
});
