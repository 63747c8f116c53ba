//! `cargo +nightly fuzz run text`: see `zeroplay::fuzz::text`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let (s, dir) = zeroplay::fuzz::shared();
    zeroplay::fuzz::text(s, &dir.join("positions.jsonl"), data);
});
