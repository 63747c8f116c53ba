//! The trainer on real Parquet files written by the coordinator's writer.

use std::path::Path;

use engine::Game;
use engine::battlenumber::BattleNumber;
use engine::eval::Uniform;
use engine::selfplay::{SelfPlaySettings, play_game};
use trainer::data::Window;
use trainer::train::{TrainSettings, Trainer};
use zeroplay_coordinator::games::{Limits, validate};
use zeroplay_coordinator::rows::write_file;

/// Writes `games` small self-play games into `dir` as `files` Parquet files.
fn write_games(dir: &Path, games: u64, files: u64) {
    write_files(dir, games / files.max(1), 0..files);
}

/// Writes files number `files` (named in order by their number) of `per_file` small self-play
/// games each into `dir`; returns the positions written.
fn write_files(dir: &Path, per_file: u64, files: std::ops::Range<u64>) -> usize {
    let settings = SelfPlaySettings { full_sims: 16, fast_sims: 8, ..SelfPlaySettings::default() };
    let start = BattleNumber::new_game(&Default::default());
    let mut written = 0;
    for f in files {
        let mut rows = Vec::new();
        for g in 0..per_file {
            let seed = f * 1000 + g;
            let game = play_game(&start, &settings, &Uniform, seed);
            let rec = zeroplay_worker::game_record(&game, format!("{seed:032x}"), seed, 0);
            rows.extend(validate(&rec, &Limits::default()).unwrap());
        }
        write_file(
            dir,
            &format!("games-{:012}-{:012}.parquet", f * 100, f * 100 + 99),
            &rows,
            engine::ENGINE_VERSION,
        )
        .unwrap();
        written += rows.len();
    }
    written
}

#[test]
fn the_network_learns_a_small_parquet_set() {
    let dir = tempfile::tempdir().unwrap();
    write_games(dir.path(), 24, 3);
    let mut w = Window::new(1_000_000);
    let added = w.refresh::<BattleNumber>(dir.path()).unwrap();
    assert!(added > 1000, "{added} positions");
    assert_eq!(w.file_count(), 3);
    assert!(w.bad_files.is_empty());
    let (train, _) = w.split(0.0);
    let fixed: Vec<_> = train.iter().take(512).copied().collect();
    let settings = fixed_set_settings(128);
    let mut t = Trainer::<BattleNumber>::new(settings, &model::cpu()).unwrap();
    let before = t.evaluate(&fixed);
    t.train(&fixed, 150, &mut |_, _| {});
    let after = t.evaluate(&fixed);
    assert!(after.total < 0.6 * before.total, "loss {before:?} -> {after:?}");
    assert!(
        after.value < before.value && after.margin < before.margin && after.policy < before.policy,
        "{before:?} -> {after:?}"
    );
    // The export loads and runs.
    let bytes = t.export(0, "test").unwrap();
    let m = model::load::<BattleNumber>(&bytes, &model::cpu()).unwrap();
    assert_eq!(m.meta.info.steps, 150);
}

#[test]
fn bad_files_are_skipped_and_the_window_keeps_up() {
    let dir = tempfile::tempdir().unwrap();
    write_games(dir.path(), 4, 1);
    std::fs::write(dir.path().join("games-000000000500-000000000599.parquet"), b"PAR1 garbage").unwrap();
    let mut w = Window::new(1_000_000);
    let first = w.refresh::<BattleNumber>(dir.path()).unwrap();
    assert!(first > 0);
    assert_eq!(w.bad_files.len(), 1, "{:?}", w.bad_files);
    assert_eq!(w.file_count(), 1);
    // A new file arrives: only it is read.
    let more = tempfile::tempdir().unwrap();
    write_games(more.path(), 4, 1);
    let src = std::fs::read_dir(more.path()).unwrap().next().unwrap().unwrap().path();
    std::fs::copy(&src, dir.path().join("games-000000000900-000000000999.parquet")).unwrap();
    let second = w.refresh::<BattleNumber>(dir.path()).unwrap();
    assert!(second > 0);
    assert_eq!(w.file_count(), 2);
    assert_eq!(w.refresh::<BattleNumber>(dir.path()).unwrap(), 0, "nothing new");
    // A small window drops the oldest file.
    let mut small = Window::new(first / 2);
    small.refresh::<BattleNumber>(dir.path()).unwrap();
    assert_eq!(small.file_count(), 1);
}

#[test]
fn a_file_that_left_the_window_is_never_read_again() {
    // Runs 4-6 (docs/benchmarks.md) had 253 rounds where 80 were due: once the data outgrew the
    // window, every poll re-read the files beyond it and counted them as new positions.
    let dir = tempfile::tempdir().unwrap();
    write_games(dir.path(), 8, 4);
    let one = trainer::data::read_file::<BattleNumber>(
        &std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().path()).min().unwrap(),
    )
    .unwrap()
    .len();
    // Room for about two of the four files.
    let mut w = Window::new(2 * one);
    let first = w.refresh::<BattleNumber>(dir.path()).unwrap();
    assert!(w.file_count() <= 3 && first < 4 * one, "{} files, {first} positions", w.file_count());
    let all: usize = trainer::data::list_files(dir.path())
        .unwrap()
        .iter()
        .map(|p| trainer::data::read_file::<BattleNumber>(p).unwrap().len())
        .sum();
    assert_eq!(w.total_positions() as usize, all, "footers count every file");
    for _ in 0..3 {
        assert_eq!(w.refresh::<BattleNumber>(dir.path()).unwrap(), 0, "old files came back as new");
    }
    // A new file: only its positions are new, and the oldest held file leaves for good.
    let more = tempfile::tempdir().unwrap();
    write_games(more.path(), 2, 1);
    let src = std::fs::read_dir(more.path()).unwrap().next().unwrap().unwrap().path();
    std::fs::copy(&src, dir.path().join("games-000000000900-000000000999.parquet")).unwrap();
    let fresh = trainer::data::read_file::<BattleNumber>(&src).unwrap().len();
    assert_eq!(w.refresh::<BattleNumber>(dir.path()).unwrap(), fresh);
    assert_eq!(w.refresh::<BattleNumber>(dir.path()).unwrap(), 0);
}

#[test]
fn the_pipeline_reports_its_rounds_as_prometheus_metrics() {
    use trainer::metrics::TrainerMetrics;
    use trainer::pipeline::{LocalGate, PipelineConfig, run_observed};
    let games = tempfile::tempdir().unwrap();
    write_games(games.path(), 6, 1);
    let run = tempfile::tempdir().unwrap();
    let cfg = PipelineConfig {
        data_dir: games.path().to_path_buf(),
        run_dir: run.path().to_path_buf(),
        min_new_positions: 1,
        steps_per_round: 4,
        max_rounds: Some(1),
        poll_ms: 10,
        gating: false,
        train: TrainSettings { net: "tiny".into(), batch_size: 32, ..Default::default() },
        gate: trainer::gate::GateSettings { sims: 4, opening_plies: 2, ..Default::default() },
        rating: trainer::pipeline::RatingSettings { matches: 2, anchors: vec!["random".into()], seed: 3 },
        ..PipelineConfig::default()
    };
    let metrics = TrainerMetrics::default();
    let mut publish = |_: &[u8]| -> Result<u64, String> { Ok(41) };
    let mut gate = LocalGate::<BattleNumber> { options: Default::default(), publish: &mut publish };
    let stop = std::sync::atomic::AtomicBool::new(false);
    let history = run_observed::<BattleNumber>(&cfg, &model::cpu(), &mut gate, &stop, &metrics).unwrap();
    assert_eq!(history.len(), 1);
    let text = zeroplay_telemetry::encode(&metrics.registry());
    let v = |k: &str| zeroplay_telemetry::sample(&text, k).unwrap_or_else(|| panic!("no {k} in\n{text}"));
    assert_eq!(v("zeroplay_trainer_rounds_total"), 1.0);
    assert_eq!(v("zeroplay_trainer_steps_total"), 4.0);
    assert_eq!(v("zeroplay_trainer_samples_total"), 4.0 * 32.0);
    assert_eq!(v("zeroplay_trainer_candidates_promoted_total"), 1.0, "gating off promotes");
    assert_eq!(v("zeroplay_trainer_best_model_version"), 41.0);
    assert_eq!(v("zeroplay_trainer_train_loss"), f64::from(history[0].train_loss));
    assert_eq!(v("zeroplay_trainer_window_positions"), history[0].window as f64);
    assert!(v("zeroplay_trainer_samples_per_second") > 0.0);
    // The promoted model played its rating games against the reference and the anchor, and
    // its Elo comes from the fit of those games (it had no gating games).
    let results = trainer::pipeline::load_results(run.path());
    let names: Vec<(&str, &str, u32)> =
        results.iter().map(|r| (r.a.as_str(), r.b.as_str(), r.matches)).collect();
    assert_eq!(names, [("round 1", "rollout", 2), ("round 1", "random", 2)], "{results:?}");
    let fitted = trainer::ratings::fit(&results, "rollout");
    assert_eq!(history[0].elo, fitted[1].elo);
    assert!(history[0].elo_lo < history[0].elo && history[0].elo < history[0].elo_hi, "{:?}", history[0]);
    let svg = std::fs::read_to_string(run.path().join("ratings.svg")).unwrap();
    assert!(svg.contains("random"), "the anchor is drawn: {svg}");
}

/// A resumed run counts as new only the positions in files after those its last round read:
/// it waits for new games rather than training again at once on what its model has learned.
#[test]
fn a_resumed_run_trains_only_on_files_its_last_round_did_not_read() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use trainer::pipeline::{LocalGate, PipelineConfig, RatingEntry, run};
    let games = tempfile::tempdir().unwrap();
    let old = write_files(games.path(), 3, 0..2);
    let run_dir = tempfile::tempdir().unwrap();
    let batch = 8;
    let cfg = |rounds| PipelineConfig {
        data_dir: games.path().to_path_buf(),
        run_dir: run_dir.path().to_path_buf(),
        min_new_positions: 1,
        // One sample per new position: a round's steps count its new positions.
        samples_per_position: 1.0,
        steps_per_round: 100_000,
        max_rounds: Some(rounds),
        poll_ms: 10,
        gating: false,
        train: TrainSettings { net: "tiny".into(), batch_size: batch, ..Default::default() },
        gate: trainer::gate::GateSettings { sims: 4, opening_plies: 2, ..Default::default() },
        rating: trainer::pipeline::RatingSettings { matches: 0, ..Default::default() },
        ..PipelineConfig::default()
    };
    let steps = |positions: usize| positions.div_ceil(batch) as u64;
    let go = |rounds, stop: &AtomicBool| -> Vec<RatingEntry> {
        let mut publish = |_: &[u8]| -> Result<u64, String> { Ok(1) };
        let mut gate = LocalGate::<BattleNumber> { options: Default::default(), publish: &mut publish };
        run::<BattleNumber>(&cfg(rounds), &model::cpu(), &mut gate, stop).unwrap()
    };
    let first = go(1, &AtomicBool::new(false));
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].newest_file, "games-000000000100-000000000199.parquet");
    assert_eq!(first[0].steps, steps(old));

    // Resumed with no new games: no round. Were the window counted as new, the first poll
    // (at once, long before the stop) would train one.
    let stop = AtomicBool::new(false);
    let waited = std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(std::time::Duration::from_millis(500));
            stop.store(true, Ordering::Relaxed);
        });
        go(2, &stop)
    });
    assert_eq!(waited.len(), 1, "a resumed run trained again on positions it had read: {waited:?}");

    // A new file: the next round's steps count its positions alone.
    let new = write_files(games.path(), 3, 2..3);
    assert!(new > 0 && steps(new) < steps(old + new));
    let second = go(2, &AtomicBool::new(false));
    assert_eq!(second.len(), 2);
    assert_eq!(second[1].newest_file, "games-000000000200-000000000299.parquet");
    assert_eq!(second[1].steps - second[0].steps, steps(new), "only the new file's positions");
}

/// Stands in for the coordinator's verdicts: each call takes the next scripted outcome and
/// says what it was asked.
struct Scripted {
    outcomes: Vec<trainer::pipeline::Gated>,
    /// ("gate", the candidate's best model's SHA-256 or "") or ("verdict", the version).
    asked: Vec<(&'static str, String)>,
}

impl trainer::pipeline::Gatekeeper for Scripted {
    fn gate(
        &mut self,
        c: &trainer::pipeline::Candidate<'_>,
        _: &mut dyn FnMut(u32, u32, f64),
    ) -> Result<trainer::pipeline::Gated, String> {
        self.asked.push(("gate", c.best.map_or_else(String::new, |m| m.sha256.clone())));
        Ok(self.outcomes.remove(0))
    }

    fn verdict(
        &mut self,
        version: u64,
        _: &mut dyn FnMut(u32, u32, f64),
    ) -> Option<Result<trainer::pipeline::Gated, String>> {
        self.asked.push(("verdict", version.to_string()));
        Some(Ok(self.outcomes.remove(0)))
    }
}

/// A run stopped while the coordinator gated its candidate asks for the verdict when it
/// resumes, before training on: promoted, the candidate becomes its best and the model the
/// next round trains from and is gated against, so trainer and coordinator agree.
#[test]
fn a_candidate_left_pending_gets_its_verdict_when_the_run_resumes() {
    use std::sync::atomic::AtomicBool;
    use trainer::gate::GateResult;
    use trainer::pipeline::{Gated, OpponentRef, PipelineConfig, run};
    let games = tempfile::tempdir().unwrap();
    write_files(games.path(), 3, 0..1);
    let run_dir = tempfile::tempdir().unwrap();
    let cfg = |rounds| PipelineConfig {
        data_dir: games.path().to_path_buf(),
        run_dir: run_dir.path().to_path_buf(),
        min_new_positions: 1,
        steps_per_round: 2,
        max_rounds: Some(rounds),
        poll_ms: 10,
        train: TrainSettings { net: "tiny".into(), batch_size: 8, ..Default::default() },
        rating: trainer::pipeline::RatingSettings { matches: 0, ..Default::default() },
        ..PipelineConfig::default()
    };
    let gated = |promoted: bool, pending: bool, matches: u32| Gated {
        result: GateResult {
            matches,
            points: f64::from(matches) * 0.75,
            elo: 190.0,
            elo_lo: 50.0,
            elo_hi: 400.0,
            promoted,
            reason: if pending { "stopped".into() } else { "SPRT accepted".into() },
        },
        opponent: OpponentRef::UserAi,
        version: 7,
        pending,
    };
    let session = |rounds, stop: bool, outcomes: Vec<Gated>| {
        let mut g = Scripted { outcomes, asked: Vec::new() };
        let h = run::<BattleNumber>(&cfg(rounds), &model::cpu(), &mut g, &AtomicBool::new(stop)).unwrap();
        (h, g.asked)
    };
    let best = run_dir.path().join("models/best.safetensors");

    // Stopped during the gate: recorded as pending, not promoted, its matches so far not rated.
    let (h, asked) = session(1, false, vec![gated(false, true, 3)]);
    assert_eq!(asked, [("gate", String::new())]);
    assert!(h[0].pending && !h[0].promoted && h[0].version == 7, "{:?}", h[0]);
    assert!(trainer::pipeline::load_results(run_dir.path()).is_empty());
    assert!(!best.exists());
    let summary = trainer::pipeline::summary(&h, run_dir.path());
    assert!(summary.contains("verdict pending"), "{summary}");

    // Resumed and stopped again while waiting: still pending.
    let (h, asked) = session(1, true, vec![gated(false, true, 5)]);
    assert_eq!(asked, [("verdict", "7".into())]);
    assert!(h[0].pending, "{:?}", h[0]);

    // Resumed: the verdict comes (promoted), and round 1 is the best model.
    let (h, asked) = session(1, true, vec![gated(true, false, 12)]);
    assert_eq!(asked, [("verdict", "7".into())]);
    let e = &h[0];
    assert!(!e.pending && e.promoted && (e.matches, e.points) == (12, 9.0), "{e:?}");
    let candidate = std::fs::read(run_dir.path().join(&e.file)).unwrap();
    assert_eq!(std::fs::read(&best).unwrap(), candidate);
    let results = trainer::pipeline::load_results(run_dir.path());
    assert_eq!(results.len(), 1, "the gate's matches counted once: {results:?}");
    assert_eq!((results[0].a.as_str(), results[0].matches), ("round 1", 12));

    // Nothing is pending now; new games: round 2 is gated against round 1.
    write_files(games.path(), 3, 1..2);
    let (h, asked) = session(2, false, vec![gated(false, false, 20)]);
    assert_eq!(asked, [("gate", e.sha256.clone())], "round 2 not gated against the promoted round 1");
    assert_eq!(h.len(), 2);
}

#[test]
fn the_ownership_target_is_the_final_board_and_its_head_learns_it() {
    use engine::{Features, Seat};
    let dir = tempfile::tempdir().unwrap();
    // One game per file, so every sample of a file is of that game.
    let settings = SelfPlaySettings { full_sims: 16, fast_sims: 8, ..SelfPlaySettings::default() };
    let start = BattleNumber::new_game(&Default::default());
    let mut finals = Vec::new();
    for seed in 0..3u64 {
        let game = play_game(&start, &settings, &Uniform, seed);
        let mut end = game.start.clone();
        for m in &game.moves {
            end.play(m.action).unwrap();
        }
        assert!(end.outcome().is_some() && game.resigned.is_none());
        let rec = zeroplay_worker::game_record(&game, format!("{seed:032x}"), seed, 0);
        let rows = validate(&rec, &Limits::default()).unwrap();
        let name = format!("games-{:012}-{:012}.parquet", seed, seed);
        write_file(dir.path(), &name, &rows, engine::ENGINE_VERSION).unwrap();
        finals.push((dir.path().join(name), end));
    }
    for (path, end) in &finals {
        let samples = trainer::data::read_file::<BattleNumber>(path).unwrap();
        assert!(samples.len() > 40);
        for s in &samples {
            let mover = BattleNumber::decode(&s.state).unwrap().perspective();
            let mut want = vec![0i8; BattleNumber::OWNERSHIP_LEN];
            end.ownership(mover, &mut want);
            assert_eq!(s.ownership.as_deref(), Some(&want[..]), "ply {}", s.ply);
        }
        let seats: std::collections::HashSet<Seat> =
            samples.iter().map(|s| BattleNumber::decode(&s.state).unwrap().perspective()).collect();
        assert_eq!(seats.len(), 2, "both seats' views are checked");
    }

    let mut w = Window::new(1_000_000);
    w.refresh::<BattleNumber>(dir.path()).unwrap();
    let (train, _) = w.split(0.0);
    let base = fixed_set_settings(64);
    let owned = TrainSettings { ownership_weight: 1.0, ..base.clone() };
    let mut t = Trainer::<BattleNumber>::new(owned.clone(), &model::cpu()).unwrap();
    let before = t.evaluate(&train);
    t.train(&train, 150, &mut |_, _| {});
    let after = t.evaluate(&train);
    assert!(before.ownership > 0.0 && after.ownership < 0.7 * before.ownership, "{before:?} -> {after:?}");
    let bytes = t.export(0, "test").unwrap();
    let m = model::load::<BattleNumber>(&bytes, &model::cpu()).unwrap();
    assert_eq!(m.meta.ownership_len, BattleNumber::OWNERSHIP_LEN);
    // Without the weight there is no head and no ownership loss.
    let plain = Trainer::<BattleNumber>::new(base.clone(), &model::cpu()).unwrap();
    assert_eq!(plain.evaluate(&train).ownership, 0.0);
    assert_eq!(
        model::load::<BattleNumber>(&plain.export(0, "t").unwrap(), &model::cpu())
            .unwrap()
            .meta
            .ownership_len,
        0
    );
    // A model trained with the head resumes without it, and one without resumes with it, keeping
    // the layers search reads.
    let dropped = Trainer::<BattleNumber>::resume(base, &model::cpu(), &bytes).unwrap();
    let x = dropped.export(1, "t").unwrap();
    assert_eq!(model::load::<BattleNumber>(&x, &model::cpu()).unwrap().meta.ownership_len, 0);
    let again = Trainer::<BattleNumber>::resume(owned, &model::cpu(), &x).unwrap();
    assert_eq!(again.evaluate(&train).value, dropped.evaluate(&train).value);
    assert!(again.evaluate(&train).ownership > 0.0);
}

/// Games a quarantined worker stored are listed in a `.set-aside.json` file beside the
/// Parquet files (issue 42): the window drops them from the files it holds and from every
/// file it reads later, and a file that does not parse is skipped.
#[test]
fn set_aside_games_are_never_trained_on() {
    let dir = tempfile::tempdir().unwrap();
    write_games(dir.path(), 6, 2);
    let mut w = Window::new(1_000_000);
    let all = w.refresh::<BattleNumber>(dir.path()).unwrap();
    let hash = |id: u64| {
        // The window's own hash of a game id (FNV-1a, as `Sample::game_hash`).
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in format!("{id:032x}").bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x100_0000_01b3);
        }
        h
    };
    let held = |w: &Window, id: u64| w.split(0.0).0.iter().filter(|s| s.game_hash == hash(id)).count();
    // write_games seeds its games 0, 1, 2 (first file) and 1000, 1001, 1002 (second).
    assert!(held(&w, 1) > 0 && held(&w, 1001) > 0);
    std::fs::write(
        dir.path().join("0000000000001-w.set-aside.json"),
        format!(r#"{{"worker":"w","reason":"test","games":["{:032x}","{:032x}"]}}"#, 1, 1001),
    )
    .unwrap();
    std::fs::write(dir.path().join("0000000000002-x.set-aside.json"), b"not json").unwrap();
    assert_eq!(w.refresh::<BattleNumber>(dir.path()).unwrap(), 0, "no new positions");
    assert_eq!((held(&w, 1), held(&w, 1001)), (0, 0), "set aside");
    assert!(held(&w, 0) > 0 && held(&w, 1002) > 0, "the other games stay");
    assert!(w.len() < all);
    // A window that reads the files after the list is written never holds them.
    let mut fresh = Window::new(1_000_000);
    fresh.refresh::<BattleNumber>(dir.path()).unwrap();
    assert_eq!(fresh.len(), w.len());
    assert_eq!(trainer::data::set_aside(dir.path()).unwrap().len(), 2);
}

/// A `tiny` network fitting a fixed set in batches of `batch_size`: the positions as stored,
/// no symmetric images (fitting that set is what these tests check).
fn fixed_set_settings(batch_size: usize) -> TrainSettings {
    TrainSettings {
        net: "tiny".into(),
        batch_size,
        learning_rate: 3e-3,
        augment: false,
        ..Default::default()
    }
}
