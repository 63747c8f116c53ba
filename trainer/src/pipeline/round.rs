//! One training round's steps, in order: wait for new positions ([`Run::poll`]), train and
//! export a candidate ([`Run::train_round`]), gate it ([`Run::gate`]), rate a promoted one
//! against fixed anchors ([`Run::rate`]) and save it all ([`Run::record`]). [`Run`] holds what
//! one round hands the next.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use burn::prelude::Device;
use engine::Features;
use engine::agent::GameAgents;
use model::Model;
use tracing::{info, warn};

use super::{
    Candidate, Gated, Gatekeeper, OpponentRef, Pairing, PipelineConfig, RatingEntry, bar, load_history,
    load_results, rating_anchors, write_atomic,
};
use crate::data::{Window, WindowSize, spread};
use crate::gate::GateResult;
use crate::metrics::TrainerMetrics;
use crate::train::{Losses, Trainer};

/// The best model so far.
struct Best {
    model: Arc<Model>,
    /// The round that trained it.
    round: u64,
    /// The version it was published as (0: not published).
    version: u64,
}

/// One round's candidate, trained and exported.
pub(super) struct Trained {
    round: u64,
    /// Its file, relative to the run directory.
    file: String,
    bytes: Vec<u8>,
    model: Arc<Model>,
    /// Mean training loss over the round's steps.
    mean: Losses,
    /// After the round, on training positions spread over the window.
    train_eval: Losses,
    /// After the round, on the validation positions.
    validation: Losses,
    samples_per_second: f64,
    /// The newest game file in the window it trained on.
    newest_file: String,
}

/// A candidate's gating: the result, the opponent by name, the version it was given, and
/// whether the verdict was still to come when the run stopped.
pub(super) struct RoundGate {
    pub(super) result: GateResult,
    opponent: String,
    version: u64,
    pending: bool,
}

/// A training run between rounds: what one round hands the next.
pub(super) struct Run<'a, G: Features> {
    cfg: &'a PipelineConfig,
    device: &'a Device,
    metrics: &'a TrainerMetrics,
    trainer: Trainer<G>,
    pub(super) history: Vec<RatingEntry>,
    results: Vec<Pairing>,
    /// The rating reference (0 Elo): the user's AI the first candidate plays, by its own name
    /// where the game has one, else "rollout".
    reference: String,
    best: Option<Best>,
    best_path: PathBuf,
    window: Window,
    /// The last round trained.
    pub(super) round: u64,
    /// New positions since the last round.
    fresh: usize,
    /// On resume, the newest game file the last recorded round had read: until the window is
    /// first read, then only positions after it count as new. Without it a resumed run would
    /// count its whole window as new and train a long round at once on positions its best
    /// model already learned (a resumed Banqi run's first such round lost its gate at −183).
    read_up_to: Option<String>,
    /// The last error listing the data directory, said once rather than at every poll.
    list_error: Option<String>,
}

impl<'a, G: Features + GameAgents> Run<'a, G> {
    /// The run in `cfg.run_dir`: a fresh one, or the one there resumed from its best model,
    /// ratings and games.
    pub(super) fn open(
        cfg: &'a PipelineConfig,
        device: &'a Device,
        metrics: &'a TrainerMetrics,
        models: &Path,
    ) -> Result<Self, String> {
        let history = load_history(&cfg.run_dir);
        let reference = cfg
            .gate
            .own_user_ai_sims()
            .and_then(G::user_ai)
            .map_or_else(|| "rollout".to_string(), |a| a.to_string());
        let mut trainer = Trainer::<G>::new(cfg.train.clone(), device)?;
        let best_path = models.join("best.safetensors");
        let mut best = None;
        if let Ok(bytes) = std::fs::read(&best_path) {
            match model::load::<G>(&bytes, device) {
                Ok(m) => {
                    let last = history.iter().rev().find(|e| e.promoted);
                    let (elo, round, version) = last.map_or((0.0, 0, 0), |e| (e.elo, e.round, e.version));
                    match Trainer::<G>::resume(cfg.train.clone(), device, &bytes) {
                        Ok(t) => trainer = t,
                        Err(e) => {
                            warn!(error = %e, "best model does not fit the training settings; training a new network")
                        }
                    }
                    info!(round, elo, "resuming from the best model of this run");
                    metrics.best_version.set(version as i64);
                    best = Some(Best { model: Arc::new(m), round, version });
                }
                Err(e) => warn!(error = %e, "ignoring an unreadable best model"),
            }
        }
        let read_up_to =
            history.iter().max_by_key(|e| e.round).map(|e| e.newest_file.clone()).filter(|f| !f.is_empty());
        Ok(Run {
            cfg,
            device,
            metrics,
            trainer,
            round: history.iter().map(|e| e.round).max().unwrap_or(0),
            history,
            results: load_results(&cfg.run_dir),
            reference,
            best,
            best_path,
            window: Window::sized(WindowSize {
                max_positions: cfg.window_positions,
                min_positions: cfg.window_min_positions,
            }),
            fresh: 0,
            read_up_to,
            list_error: None,
        })
    }

    /// Reads new game files into the window. Once `min_new_positions` new positions have come,
    /// the optimiser steps for the next round; `None` while waiting for more.
    pub(super) fn poll(&mut self) -> Option<u64> {
        let dir = &self.cfg.data_dir;
        self.fresh += match self.window.refresh::<G>(dir) {
            Ok(n) => {
                if self.list_error.take().is_some() {
                    info!(dir = %dir.display(), "training files readable again");
                }
                match self.read_up_to.take() {
                    Some(last) => {
                        let new = self.window.positions_after(&last);
                        info!(read_up_to = %last, new, held = n, "resumed: positions after the last round's files count as new");
                        new
                    }
                    None => n,
                }
            }
            // Said once per distinct error, not every poll: a coordinator that has not yet
            // written its first file is a normal wait, not a stream of warnings.
            Err(e) => {
                let e = e.to_string();
                if self.list_error.as_deref() != Some(e.as_str()) {
                    warn!(dir = %dir.display(), error = %e, "cannot list training files; waiting for them (said once)");
                    self.list_error = Some(e);
                }
                0
            }
        };
        if self.fresh < self.cfg.min_new_positions || self.window.is_empty() {
            return None;
        }
        let steps = self.cfg.round_steps(self.fresh);
        self.fresh = 0;
        Some(steps)
    }

    /// Trains the next round for `steps` steps, measures the result on training and held-out
    /// positions, and exports, saves and checkpoints the candidate.
    pub(super) fn train_round(&mut self, steps: u64) -> Result<Trained, String> {
        let cfg = self.cfg;
        self.round += 1;
        let round = self.round;
        let (train, val) = self.window.split(cfg.train.validation_fraction);
        let window = self.window.len();
        let newest_file = self.window.newest_file();
        info!(round, window, files = self.window.file_count(), train = train.len(), steps, "training round");
        let pb = bar(steps, "train");
        let t0 = Instant::now();
        let mean: Losses = self.trainer.train(&train, steps, &mut |i, l| {
            pb.set_position(i);
            pb.set_prefix(format!("loss {l}"));
        });
        pb.finish_and_clear();
        let secs = t0.elapsed().as_secs_f64();
        let samples = steps * cfg.train.batch_size.min(train.len()) as u64;
        let sps = samples as f64 / secs.max(1e-9);
        // Both measured the same way after the round, on positions spread over the window (the
        // first ones would all come from its oldest files).
        let (held, val) = (spread(&train, 4096), spread(&val, 4096));
        let train_eval = self.trainer.evaluate(&held);
        let diag =
            crate::diagnose::diagnose::<G>(&self.trainer.net(), &self.trainer.device(), &val, &cfg.train);
        let validation = diag.losses;
        let title = format!("round {round}: the candidate on {} held-out positions", val.len());
        if let Err(e) =
            write_atomic(&cfg.run_dir.join("diagnostics.svg"), diag.svg(&title, Some(&train_eval)).as_bytes())
        {
            warn!(error = %e, "diagnostics plot not written");
        }
        let m = self.metrics;
        m.steps.inc_by(steps);
        m.samples.inc_by(samples);
        m.train_loss.set(f64::from(mean.total));
        m.validation_loss.set(f64::from(validation.total));
        m.samples_per_second.set(sps);
        m.window_positions.set(window as i64);
        info!(
            round,
            train_loss = mean.total,
            train_eval = train_eval.to_string(),
            validation = validation.to_string(),
            samples_per_second = sps as u64,
            "round trained"
        );
        let parent = self.best.as_ref().map_or(0, |b| b.version);
        let bytes = self.trainer.export(parent, &cfg.train.net).map_err(|e| e.to_string())?;
        let file = format!("models/candidate-{round:04}.safetensors");
        write_atomic(&cfg.run_dir.join(&file), &bytes)?;
        if let Err(e) = self.trainer.checkpoint(&cfg.run_dir.join("checkpoint"), parent) {
            warn!(error = %e, "checkpoint failed");
        }
        let model = Arc::new(model::load::<G>(&bytes, self.device).map_err(|e| e.to_string())?);
        Ok(Trained {
            round,
            file,
            bytes,
            model,
            mean,
            train_eval,
            validation,
            samples_per_second: sps,
            newest_file,
        })
    }

    /// Gates the candidate; a gate that fails is a round not promoted, not an error. Its
    /// matches join the games the ratings are fitted on.
    pub(super) fn gate(&mut self, gatekeeper: &mut dyn Gatekeeper, t: &Trained) -> RoundGate {
        let cfg = self.cfg;
        let pb = bar(u64::from(cfg.gate.matches), "gate");
        let cand = Candidate {
            bytes: &t.bytes,
            model: &t.model,
            best: self.best.as_ref().map(|b| &b.model),
            settings: &cfg.gate,
            gating: cfg.gating,
        };
        let gated = gatekeeper.gate(&cand, &mut |n, max, pts| {
            pb.set_length(u64::from(max));
            pb.set_position(u64::from(n));
            pb.set_prefix(format!("candidate {pts:.1}/{n} points"));
        });
        pb.finish_and_clear();
        let Gated { result, opponent, version, pending } = gated.unwrap_or_else(|e| {
            warn!(round = t.round, error = %e, "gating failed; the candidate is not promoted");
            let result = GateResult::without_matches(false, format!("gating failed: {e}"));
            Gated { result, opponent: OpponentRef::UserAi, version: 0, pending: false }
        });
        let opponent = self.opponent_name(&opponent);
        // A pending gate's matches so far are counted once, with its verdict.
        if !pending {
            self.push_gate_games(t.round, &opponent, &result);
        }
        RoundGate { result, opponent, version, pending }
    }

    /// An opponent as the ratings name it.
    fn opponent_name(&self, opponent: &OpponentRef) -> String {
        match *opponent {
            OpponentRef::UserAi => self.reference.clone(),
            OpponentRef::LocalBest => format!("round {}", self.best.as_ref().map_or(0, |b| b.round)),
            OpponentRef::Version(v) => self
                .history
                .iter()
                .rev()
                .find(|e| e.version == v && e.promoted)
                .map_or_else(|| format!("v{v}"), |e| format!("round {}", e.round)),
        }
    }

    /// A gate's matches join the games the ratings are fitted on.
    fn push_gate_games(&mut self, round: u64, opponent: &str, result: &GateResult) {
        if result.matches > 0 {
            self.results.push(Pairing {
                a: format!("round {round}"),
                b: opponent.to_string(),
                matches: result.matches,
                points: result.points,
                kind: "gate".into(),
            });
        }
    }

    /// A candidate the last session published and left being gated ([`Gated::pending`]): the
    /// coordinator gated it on, so this waits for its verdict before training on, and a
    /// promoted one becomes this run's best, trained on from. Without it the coordinator could
    /// promote and serve a model the trainer has left behind. Stopped again while waiting,
    /// the candidate stays pending.
    ///
    /// # Errors
    /// An unwritable run directory, or a promoted candidate whose file cannot be read.
    pub(super) fn settle(&mut self, gatekeeper: &mut dyn Gatekeeper) -> Result<(), String> {
        let Some(i) = self.history.iter().rposition(|e| e.pending) else { return Ok(()) };
        let (round, version) = (self.history[i].round, self.history[i].version);
        info!(
            round,
            version,
            "waiting for the coordinator's verdict on the candidate it was gating when the run stopped"
        );
        let pb = bar(u64::from(self.cfg.gate.matches), "gate");
        let outcome = gatekeeper.verdict(version, &mut |n, max, pts| {
            pb.set_length(u64::from(max));
            pb.set_position(u64::from(n));
            pb.set_prefix(format!("round {round} (v{version}) {pts:.1}/{n} points"));
        });
        pb.finish_and_clear();
        let verdict = match outcome {
            Some(Ok(g)) if g.pending => return Ok(()),
            Some(Ok(g)) => Ok(g),
            Some(Err(e)) => {
                warn!(round, version, error = %e, "no verdict on the candidate; it is not promoted");
                Err(format!("gating failed: {e}"))
            }
            None => Err("left pending; nobody to ask for its verdict".to_string()),
        };
        let gated = verdict.unwrap_or_else(|reason| Gated {
            result: GateResult::without_matches(false, reason),
            opponent: OpponentRef::UserAi,
            version,
            pending: false,
        });
        let opponent = self.opponent_name(&gated.opponent);
        self.push_gate_games(round, &opponent, &gated.result);
        let r = &gated.result;
        if r.promoted {
            let file = self.cfg.run_dir.join(&self.history[i].file);
            let bytes = std::fs::read(&file).map_err(|e| format!("{}: {e}", file.display()))?;
            let model = Arc::new(model::load::<G>(&bytes, self.device).map_err(|e| e.to_string())?);
            write_atomic(&self.best_path, &bytes)?;
            match Trainer::<G>::resume(self.cfg.train.clone(), self.device, &bytes) {
                Ok(t) => self.trainer = t,
                Err(e) => warn!(error = %e, "the promoted candidate does not fit the training settings"),
            }
            self.metrics.promoted.inc();
            self.metrics.best_version.set(version as i64);
            self.best = Some(Best { model, round, version });
        }
        let e = &mut self.history[i];
        (e.opponent, e.gate_elo, e.elo, e.elo_lo, e.elo_hi) = (opponent, r.elo, r.elo, r.elo_lo, r.elo_hi);
        (e.matches, e.points, e.promoted, e.reason, e.pending) =
            (r.matches, r.points, r.promoted, r.reason.clone(), false);
        info!(round, version, promoted = r.promoted, reason = %r.reason, "verdict on the candidate left pending");
        self.save()
    }

    /// Rating games: a promoted model against fixed anchors, so that ratings rest on games
    /// against players that do not change, not on a chain of gates.
    pub(super) fn rate(&mut self, t: &Trained, stop: &AtomicBool) {
        let cfg = self.cfg;
        let me = format!("round {}", t.round);
        let anchors = rating_anchors::<G>(cfg, &self.reference);
        let pb = bar(u64::from(cfg.rating.matches) * anchors.len() as u64, "rate");
        for (k, (name, anchor)) in anchors.iter().enumerate() {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let seed = engine::derive_seed(cfg.rating.seed, t.round * 16 + k as u64);
            let done = pb.position();
            let points = crate::gate::rate::<G>(
                &t.model,
                &cfg.gate,
                anchor.as_ref(),
                cfg.rating.matches,
                seed,
                &mut |n, pts| {
                    pb.set_position(done + u64::from(n));
                    pb.set_prefix(format!("{me} against {name}: {pts:.1}/{n}"));
                },
            );
            self.results.push(Pairing {
                a: me.clone(),
                b: name.clone(),
                matches: cfg.rating.matches,
                points,
                kind: "rating".into(),
            });
        }
        pb.finish_and_clear();
    }

    /// Saves the round: the games, the best model if promoted, the ratings of every model
    /// refitted on all games, and their plot.
    pub(super) fn record(&mut self, t: Trained, g: RoundGate) -> Result<(), String> {
        let RoundGate { result, opponent, version, pending } = g;
        if result.promoted {
            write_atomic(&self.best_path, &t.bytes)?;
        }
        self.history.push(RatingEntry {
            round: t.round,
            file: t.file,
            sha256: t.model.sha256.clone(),
            version,
            opponent,
            gate_elo: result.elo,
            // Filled in by the fit in `save`.
            elo: result.elo,
            elo_lo: result.elo_lo,
            elo_hi: result.elo_hi,
            matches: result.matches,
            points: result.points,
            promoted: result.promoted,
            reason: result.reason.clone(),
            pending,
            train_loss: t.mean.total,
            train_losses: t.train_eval,
            validation_losses: t.validation,
            validation_loss: t.validation.total,
            steps: self.trainer.steps,
            window: self.window.len(),
            newest_file: t.newest_file,
            samples_per_second: t.samples_per_second,
        });
        self.metrics.rounds.inc();
        if result.matches > 0 {
            self.metrics.last_gate_points.set(result.points / f64::from(result.matches));
        }
        if result.promoted {
            self.metrics.promoted.inc();
            self.metrics.best_version.set(version as i64);
            self.best = Some(Best { model: t.model, round: t.round, version });
        }
        self.save()?;
        let entry = self.history.last().expect("just pushed");
        info!(
            round = t.round,
            promoted = entry.promoted,
            gate = format!("{:.1}/{} against {}", entry.points, entry.matches, entry.opponent),
            elo = format!("{:+.0} [{:+.0}, {:+.0}]", entry.elo, entry.elo_lo, entry.elo_hi),
            reason = %entry.reason,
            version,
            pending,
            "gated"
        );
        Ok(())
    }

    /// Writes the games, and the ratings of every model refitted on them, with their plot.
    fn save(&mut self) -> Result<(), String> {
        let dir = &self.cfg.run_dir;
        write_atomic(
            &dir.join("results.json"),
            serde_json::to_string_pretty(&self.results).map_err(|e| e.to_string())?.as_bytes(),
        )?;
        // Elo 0 is the user's AI, or the model a run was started from (`zero_point`).
        let zero = crate::ratings::zero_point(&self.history).unwrap_or(&self.reference).to_string();
        let rated = crate::ratings::fit(&self.results, &zero);
        crate::ratings::apply(&mut self.history, &rated);
        write_atomic(
            &dir.join("ratings.json"),
            serde_json::to_string_pretty(&self.history).map_err(|e| e.to_string())?.as_bytes(),
        )?;
        write_atomic(&dir.join("ratings.svg"), crate::plot::ratings_svg(&self.history, &rated).as_bytes())?;
        Ok(())
    }
}
