//! The training pipeline: rounds of (read new games → train → export a candidate → gate →
//! promote and publish), with the history of models and ratings kept in the run directory.
//!
//! Run directory layout:
//! - `train.toml`: the resolved configuration of this run.
//! - `models/candidate-NNNN.safetensors`: every candidate (round `NNNN`).
//! - `models/best.safetensors`: the current best.
//! - `checkpoint/`: the latest trainer state (model, optimiser, settings).
//! - `ratings.json`: one [`RatingEntry`] per candidate; `ratings.svg`: their plot.
//! - `diagnostics.svg`: the last candidate's value calibration by game phase, policy
//!   agreement with the search and per-head losses ([`crate::diagnose`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use burn::prelude::Device;
use engine::Features;
use engine::agent::GameAgents;
use indicatif::{ProgressBar, ProgressStyle};
use model::Model;
use serde::{Deserialize, Serialize};
use tracing::{info, warn};

use crate::gate::{GateResult, GateSettings, Opponent, gate};
use crate::metrics::TrainerMetrics;
use crate::train::TrainSettings;

mod round;

/// The trainer's configuration (`configs/train.toml`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PipelineConfig {
    /// Game to train (`battlenumber`, `trigolden` or `banqi`).
    pub game: engine::GameKind,
    /// Directory of the coordinator's Parquet files (`<coordinator data_dir>/games`).
    pub data_dir: PathBuf,
    /// Directory for models, checkpoints and ratings.
    pub run_dir: PathBuf,
    /// The most positions in the training window (the most recent ones).
    pub window_positions: usize,
    /// The window grows with the run ([`crate::data::WindowSize`]): all positions up to this
    /// many, then as KataGo's power law of the positions produced, up to `window_positions`.
    /// 0: a fixed window of `window_positions`.
    pub window_min_positions: usize,
    /// New positions needed before the next round (the first round waits for this many too).
    pub min_new_positions: usize,
    /// Training samples per new position: a round trains `new positions ×
    /// samples_per_position / batch_size` steps (at most `steps_per_round`), so each position
    /// is sampled about this many times while it is in the window, however fast games come.
    /// 0: always `steps_per_round` steps.
    pub samples_per_position: f64,
    /// The most optimiser steps in a round (all of them when `samples_per_position` is 0).
    pub steps_per_round: u64,
    /// Stop after this many rounds (none: until stopped).
    pub max_rounds: Option<u64>,
    /// How often to look for new files, in milliseconds.
    pub poll_ms: u64,
    /// Gate candidates (false: every candidate is promoted).
    pub gating: bool,
    /// Training settings.
    pub train: TrainSettings,
    /// Gating settings.
    pub gate: GateSettings,
    /// Rating games of promoted models against fixed anchors.
    pub rating: RatingSettings,
    /// Optional S3-compatible object storage: the coordinator's `games/` objects are pulled
    /// into `data_dir`, and the models, ratings and plot are pushed to `trainer/`. Keys come
    /// from `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY`, never from this file.
    pub storage: Option<zeroplay_storage::StorageConfig>,
}

impl Default for PipelineConfig {
    fn default() -> Self {
        PipelineConfig {
            game: engine::GameKind::DEFAULT,
            // The coordinator's default data_dir is runs/default: its games are read from there.
            data_dir: PathBuf::from("runs/default/games"),
            run_dir: PathBuf::from("runs/default/trainer"),
            window_positions: 1_000_000,
            window_min_positions: 250_000,
            min_new_positions: 50_000,
            // 6 with symmetry augmentation (issue 38, docs/benchmarks.md): without it, more
            // samples a position made the network weaker (it memorised results); with it,
            // stronger.
            samples_per_position: 6.0,
            steps_per_round: 3000,
            max_rounds: None,
            poll_ms: 2_000,
            gating: true,
            train: TrainSettings::default(),
            // Candidates are gated as the agent players meet (`zeroplay serve`'s default).
            gate: GateSettings::default(),
            rating: RatingSettings::default(),
            storage: None,
        }
    }
}

impl PipelineConfig {
    /// The defaults for `game`: [`PipelineConfig::default`] with the game pack's
    /// [`engine::pack::Pack::pipeline`] laid over it (Banqi: the teacher's recipe, a `nano`
    /// network gated inside `banqi-ab`; TriGolden: scaled for games about fifty times slower).
    ///
    /// # Panics
    /// If the game's pack does not fit this configuration (a test reads every game's).
    pub fn default_for(game: engine::GameKind) -> PipelineConfig {
        let base = PipelineConfig { game, ..PipelineConfig::default() };
        engine::pack::overlay(&base, game.pack().pipeline)
            .unwrap_or_else(|e| panic!("{game}'s pack: pipeline: {e}"))
    }
}

impl PipelineConfig {
    /// Optimiser steps for a round that follows `fresh` new positions.
    pub fn round_steps(&self, fresh: usize) -> u64 {
        if self.samples_per_position == 0.0 {
            return self.steps_per_round;
        }
        let want = (fresh as f64 * self.samples_per_position / self.train.batch_size.max(1) as f64).ceil();
        (want as u64).clamp(1, self.steps_per_round)
    }

    /// Checks every field.
    ///
    /// # Errors
    /// A description of the first bad field.
    pub fn validate(&self) -> Result<(), String> {
        if self.window_positions == 0 || self.steps_per_round == 0 {
            return Err("window_positions and steps_per_round must be at least 1".into());
        }
        if !(self.samples_per_position.is_finite() && (0.0..=1000.0).contains(&self.samples_per_position)) {
            return Err(format!("samples_per_position {} is outside [0, 1000]", self.samples_per_position));
        }
        if let Some(s) = &self.storage {
            s.validate().map_err(|e| e.to_string())?;
        }
        self.train.validate()?;
        self.rating.validate()?;
        self.gate.validate()
    }
}

pub use crate::ratings::{Pairing, RatingEntry, RatingSettings};

/// Publishes a promoted model's bytes; returns the version the coordinator gave it.
pub type Publish<'a> = dyn FnMut(&[u8]) -> Result<u64, String> + 'a;

/// What a candidate was gated against.
#[derive(Clone, Debug, PartialEq)]
pub enum OpponentRef {
    /// The user's AI ([`model::gate_user_ai`]), the opponent while no model is promoted.
    UserAi,
    /// This trainer's best model.
    LocalBest,
    /// The coordinator's best model, by version.
    Version(u64),
}

/// A candidate's gating outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct Gated {
    /// The result (promoted or not, with Elo over the opponent).
    pub result: GateResult,
    /// Its opponent.
    pub opponent: OpponentRef,
    /// The version the coordinator gave the candidate (0: not published).
    pub version: u64,
    /// The trainer stopped before the verdict, which the coordinator goes on to reach
    /// ([`Gatekeeper::verdict`] asks for it when the run resumes). `result` is then not
    /// promoted, with the matches so far.
    pub pending: bool,
}

/// A candidate to gate.
pub struct Candidate<'a> {
    /// The model file.
    pub bytes: &'a [u8],
    /// The loaded model.
    pub model: &'a Arc<Model>,
    /// This trainer's best model, if any.
    pub best: Option<&'a Arc<Model>>,
    /// The settings (`[gate]`).
    pub settings: &'a GateSettings,
    /// False: promote without matches (`gating = false`).
    pub gating: bool,
}

/// Decides promotion and publishes: in the trainer's own process ([`LocalGate`]), or by
/// the coordinator on its workers (`zeroplay local`, `zeroplay train --coordinator`).
pub trait Gatekeeper {
    /// Gates `c`; `progress` gets (matches played, most matches, candidate points).
    ///
    /// # Errors
    /// A description when the candidate could not be gated at all (the round is then
    /// recorded as not promoted).
    fn gate(&mut self, c: &Candidate<'_>, progress: &mut dyn FnMut(u32, u32, f64)) -> Result<Gated, String>;

    /// The verdict on `version`, a candidate this run published and left [`Gated::pending`]
    /// when it stopped; waits for it as [`Gatekeeper::gate`] does. `None`: this gatekeeper
    /// has nobody to ask (gating in the trainer's own process leaves nothing pending).
    ///
    /// # Errors
    /// As [`Gatekeeper::gate`]: the candidate's gate is unknown or failed.
    fn verdict(
        &mut self,
        version: u64,
        progress: &mut dyn FnMut(u32, u32, f64),
    ) -> Option<Result<Gated, String>> {
        let _ = (version, progress);
        None
    }
}

/// Gating in the trainer's process: matches played here, then a promoted model published.
pub struct LocalGate<'a, G: Features + GameAgents> {
    /// Game options for the openings.
    pub options: G::Options,
    /// Publishes a promoted model (returns its version, 0 if not published anywhere).
    pub publish: &'a mut Publish<'a>,
}

impl<G: Features + GameAgents> Gatekeeper for LocalGate<'_, G> {
    fn gate(&mut self, c: &Candidate<'_>, progress: &mut dyn FnMut(u32, u32, f64)) -> Result<Gated, String> {
        let (opponent, oref) = match c.best {
            Some(m) => (Opponent::Model(m.clone()), OpponentRef::LocalBest),
            None => (Opponent::UserAi, OpponentRef::UserAi),
        };
        let result = if c.gating {
            let max = c.settings.matches;
            gate::<G>(c.model, &opponent, &self.options, c.settings, &mut |n, p| progress(n, max, p))
        } else {
            GateResult::without_matches(true, "gating off".into())
        };
        let mut version = 0;
        if result.promoted {
            match (self.publish)(c.bytes) {
                Ok(v) => version = v,
                Err(e) => warn!(error = %e, "publishing the promoted model failed; it stays best locally"),
            }
        }
        Ok(Gated { result, opponent: oref, version, pending: false })
    }
}

/// Writes `bytes` to `path` durably ([`durable::write_atomic`]).
///
/// # Errors
/// The I/O failure, with the path.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    durable::write_atomic(path, bytes).map_err(|e| format!("{}: {e}", path.display()))
}

pub(super) fn bar(len: u64, msg: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template("{msg:>10} [{bar:30}] {pos}/{len} {per_sec} eta {eta} {prefix}")
            .expect("static template")
            .progress_chars("=> "),
    );
    pb.set_message(msg.to_string());
    pb
}

/// Loads the history of a run directory (empty if none yet).
pub fn load_history(run_dir: &Path) -> Vec<RatingEntry> {
    std::fs::read(run_dir.join("ratings.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Loads the games of a run directory's ratings (`results.json`; empty if none yet).
pub fn load_results(run_dir: &Path) -> Vec<Pairing> {
    std::fs::read(run_dir.join("results.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// The rating anchors: the reference (the user's AI at the gate's budget) and the configured
/// agents, each with a fresh-agent factory.
type Anchor<G> = (String, Box<dyn Fn() -> Box<dyn engine::agent::Agent<G>>>);

pub(super) fn rating_anchors<G: Features + GameAgents>(
    cfg: &PipelineConfig,
    reference: &str,
) -> Vec<Anchor<G>> {
    let gate = cfg.gate.clone();
    let mut v: Vec<Anchor<G>> =
        vec![(reference.to_string(), Box::new(move || model::gate_user_ai::<G>(&gate, "anchor")))];
    for spec in &cfg.rating.anchors {
        // Checked by `validate`.
        if let Ok(a) = spec.parse::<engine::spec::AgentSpec>() {
            v.push((spec.clone(), Box::new(move || a.build::<G>())));
        }
    }
    v
}

/// Runs training rounds for game `G` until `stop` is set or `max_rounds` is reached. Returns
/// the rating history.
///
/// # Errors
/// Bad configuration, or an unwritable run directory. Bad data files are skipped, not errors.
pub fn run<G: Features + GameAgents>(
    cfg: &PipelineConfig,
    device: &Device,
    gatekeeper: &mut dyn Gatekeeper,
    stop: &AtomicBool,
) -> Result<Vec<RatingEntry>, String> {
    run_observed::<G>(cfg, device, gatekeeper, stop, &TrainerMetrics::default())
}

/// [`run`], updating `metrics` after every round.
///
/// # Errors
/// As [`run`].
pub fn run_observed<G: Features + GameAgents>(
    cfg: &PipelineConfig,
    device: &Device,
    gatekeeper: &mut dyn Gatekeeper,
    stop: &AtomicBool,
    metrics: &TrainerMetrics,
) -> Result<Vec<RatingEntry>, String> {
    cfg.validate()?;
    let models = prepare_run_dir(cfg)?;
    // Dropping the mirror when this returns (errors included) makes a last push and waits for it.
    let _syncer = start_mirror(cfg, &models)?;
    let mut run = round::Run::<G>::open(cfg, device, metrics, &models)?;
    run.settle(gatekeeper)?;
    while !stop.load(Ordering::Relaxed) && cfg.max_rounds.is_none_or(|m| run.round < m) {
        let Some(steps) = run.poll() else {
            std::thread::sleep(Duration::from_millis(cfg.poll_ms.max(10)));
            continue;
        };
        let trained = run.train_round(steps)?;
        let gated = run.gate(gatekeeper, &trained);
        if gated.result.promoted && cfg.rating.matches > 0 {
            run.rate(&trained, stop);
        }
        run.record(trained, gated)?;
    }
    Ok(run.history)
}

/// Creates the run directory's `models/` and saves the resolved configuration beside them;
/// returns the models directory.
fn prepare_run_dir(cfg: &PipelineConfig) -> Result<PathBuf, String> {
    let models = cfg.run_dir.join("models");
    std::fs::create_dir_all(&models).map_err(|e| format!("{}: {e}", models.display()))?;
    write_atomic(
        &cfg.run_dir.join("train.toml"),
        toml::to_string_pretty(cfg).map_err(|e| e.to_string())?.as_bytes(),
    )?;
    Ok(models)
}

/// With object storage configured, a mirror running beside training: it pulls the games the
/// coordinator mirrored and pushes the models, ratings and plots this run makes.
fn start_mirror(cfg: &PipelineConfig, models: &Path) -> Result<Option<zeroplay_storage::Syncer>, String> {
    let Some(s) = &cfg.storage else { return Ok(None) };
    let remote = zeroplay_storage::Remote::open(s, zeroplay_storage::Credentials::from_env().as_ref())
        .map_err(|e| e.to_string())?;
    info!(url = %s.url, endpoint = %s.endpoint, "mirroring games and models with object storage");
    let jobs = vec![
        zeroplay_storage::Job::pull("games", &cfg.data_dir, &[".parquet", crate::data::SET_ASIDE_SUFFIX]),
        zeroplay_storage::Job::push(models, "trainer/models", &[]),
        zeroplay_storage::Job::push(&cfg.run_dir, "trainer", &[".json", ".svg", ".toml"]),
    ];
    Ok(Some(zeroplay_storage::Syncer::spawn(remote, jobs, Duration::from_millis(s.sync_ms))))
}

/// A one-screen summary of a run's history (for the end of `zeroplay local` / `train`), each
/// model file shown as a path under `run_dir` (the run directory as the caller names it).
pub fn summary(history: &[RatingEntry], run_dir: &Path) -> String {
    let zero = crate::ratings::zero_point(history).unwrap_or("user's AI");
    let head = format!("Elo, {zero} = 0 (95%)");
    let mut s = format!("round  promoted  version  {head:<31}matches  points  val loss  file\n");
    for e in history {
        // A candidate the run stopped before its gate played a match has no rating at all.
        let elo = if e.pending {
            "-  (verdict pending)".to_string()
        } else if e.matches == 0 {
            "-  (not gated)".to_string()
        } else {
            format!("{:>+6.0} [{:>+6.0}, {:>+6.0}]", e.elo, e.elo_lo, e.elo_hi)
        };
        s.push_str(&format!(
            "{:>5}  {:>8}  {:>7}  {elo:<33}{:>7}  {:>6.1}  {:>8.3}  {}\n",
            e.round,
            if e.promoted { "yes" } else { "no" },
            e.version,
            e.matches,
            e.points,
            e.validation_loss,
            run_dir.join(&e.file).display()
        ));
    }
    s
}

/// The path of the best model in a run directory.
pub fn best_model_path(run_dir: &Path) -> PathBuf {
    run_dir.join("models").join("best.safetensors")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_games_pack_lays_its_pipeline_defaults_over_the_trainers() {
        for k in engine::GameKind::ALL {
            let c = PipelineConfig::default_for(k);
            assert_eq!(c.game, k);
            c.validate().unwrap_or_else(|e| panic!("{k}: {e}"));
        }
        let tg = PipelineConfig::default_for(engine::GameKind::of::<engine::trigolden::TriGolden>());
        assert_eq!((tg.window_positions, tg.steps_per_round, tg.gate.matches), (200_000, 300, 40));
        assert_eq!(tg.gate.rule, engine::gating::GateRule::Threshold);
        assert_eq!((tg.gate.leaf.lambda, tg.rating.matches), (0.0, 4));
        assert!(tg.rating.anchors.is_empty());
        let bq = PipelineConfig::default_for(engine::GameKind::of::<engine::banqi::Banqi>());
        assert_eq!((bq.train.net.as_str(), bq.gate.sims, bq.rating.matches), ("nano", 200, 0));
        assert_eq!(
            bq.gate.rule,
            PipelineConfig::default().gate.rule,
            "what the pack does not say keeps its default"
        );
    }
}
