//! `cargo +nightly fuzz run state_bytes`: see `zeroplay::fuzz::state_bytes`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let (s, _) = zeroplay::fuzz::shared();
    let k = zeroplay::fuzz::KINDS[usize::from(data.first().copied().unwrap_or(0)) % zeroplay::fuzz::KINDS.len()];
    zeroplay::fuzz::state_bytes(k, s, data.get(1..).unwrap_or_default());
});
