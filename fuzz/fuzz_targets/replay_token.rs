//! `cargo +nightly fuzz run replay_token`: see `zeroplay::fuzz::replay_token`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let (s, _) = zeroplay::fuzz::shared();
    zeroplay::fuzz::replay_token(s, data);
});
