//! The fuzz targets of `zeroplay::fuzz` (issue 24), each run here for a bounded time by a
//! seeded random driver: every decoder of untrusted bytes (state bytes, action and position
//! text, replay tokens, model files, Parquet files) must answer any input with a value or an
//! error. A panic fails the test with the input in hex and the driver seed, to replay with
//! `ZEROPLAY_FUZZ_SEED=<seed>`. Coverage-guided runs: `cargo +nightly fuzz run <target>` in
//! `fuzz/` (a nightly toolchain is needed for libFuzzer's instrumentation).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use engine::GameKind;
use rand::{Rng, RngExt};
use zeroplay::fuzz::{self, Seeds};

/// Time each target runs (and at most this many inputs).
const BUDGET: Duration = Duration::from_secs(3);
const MAX_INPUTS: u64 = 200_000;

fn seeds() -> &'static (Seeds, tempfile::TempDir) {
    static SEEDS: OnceLock<(Seeds, tempfile::TempDir)> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        (Seeds::new(dir.path()), dir)
    })
}

/// Runs `target` on random inputs (1–`max_len` bytes, edits of the seeds by construction of
/// each target) until the budget is spent; panics with the failing input.
fn drive(name: &str, max_len: usize, target: impl Fn(&[u8])) {
    let seed = std::env::var("ZEROPLAY_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random::<u64>);
    let mut rng = engine::rng_from_seed(seed);
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed() < BUDGET && n < MAX_INPUTS {
        let len = rng.random_range(1..=max_len);
        let mut data = vec![0u8; len];
        rng.fill_bytes(&mut data);
        if catch_unwind(AssertUnwindSafe(|| target(&data))).is_err() {
            let hex: String = data.iter().map(|b| format!("{b:02x}")).collect();
            panic!("fuzz target {name} panicked on input {hex} (ZEROPLAY_FUZZ_SEED={seed}, input {n})");
        }
        n += 1;
    }
    eprintln!("fuzz {name}: {n} inputs in {:.1} s, seed {seed}", start.elapsed().as_secs_f64());
    assert!(n >= 20, "fuzz target {name} ran only {n} inputs");
}

#[test]
fn fuzz_state_bytes() {
    let (s, _) = seeds();
    for k in [GameKind::BattleNumber, GameKind::Banqi, GameKind::TriGolden] {
        drive(&format!("state_bytes({})", k.name()), 256, |d| fuzz::state_bytes(k, s, d));
    }
}

#[test]
fn fuzz_action_and_position_text() {
    let (s, dir) = seeds();
    let file = dir.path().join("positions.jsonl");
    drive("text", 128, |d| fuzz::text(s, &file, d));
}

#[test]
fn fuzz_replay_tokens() {
    let (s, _) = seeds();
    drive("replay_token", 128, |d| fuzz::replay_token(s, d));
}

#[test]
fn fuzz_model_files() {
    let (s, _) = seeds();
    drive("model_file", 64, |d| fuzz::model_file(s, d));
}

#[test]
fn fuzz_parquet_files_on_load() {
    let (s, dir) = seeds();
    let file = dir.path().join("fuzzed.parquet");
    // The seed itself loads: the target starts from a file the trainer reads.
    assert!(
        trainer::data::read_file::<engine::battlenumber::BattleNumber>(&dir.path().join("seed.parquet"))
            .is_ok()
    );
    drive("parquet_file", 64, |d| fuzz::parquet_file(s, &file, d));
}

/// The inputs on which the targets found panics, kept as regressions: a Battle Number square
/// name whose row overflowed (`parse_square`), a TriGolden state naming shape 200 (its error
/// printed the action, overflowing the shape letter), and a Parquet footer with a negative
/// column offset (a panic inside the parquet crate, now an error from `read_file`).
#[test]
fn the_fuzzers_findings_stay_fixed() {
    let (s, dir) = seeds();
    let hex = |h: &str| {
        (0..h.len()).step_by(2).map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap()).collect::<Vec<u8>>()
    };
    fuzz::text(s, &dir.path().join("positions-regression.jsonl"), &hex("294b7f"));
    fuzz::state_bytes(GameKind::TriGolden, s, &hex("297c7fdccb53a49867"));
    fuzz::parquet_file(s, &dir.path().join("regression.parquet"), &hex("42bb284e0b8307604d319a10309a7510"));
    assert_eq!(engine::battlenumber::parse_square("a\u{7f}"), None);
}
