//! The trainer's Prometheus metrics: what each round did (losses, speed, gating), as
//! `zeroplay_trainer_*`. [`pipeline::run_observed`](crate::pipeline::run_observed) updates
//! them; the binary serves them at `/metrics` when asked (`zeroplay train --metrics-listen`).

use std::sync::atomic::AtomicU64;

use zeroplay_telemetry::prometheus_client::metrics::counter::Counter;
use zeroplay_telemetry::prometheus_client::metrics::gauge::Gauge;
use zeroplay_telemetry::prometheus_client::registry::Registry;

/// A gauge holding an `f64`.
pub type FloatGauge = Gauge<f64, AtomicU64>;

/// The trainer's metrics. Clones share their values.
#[derive(Clone, Debug, Default)]
pub struct TrainerMetrics {
    /// Rounds finished (trained, exported, gated).
    pub rounds: Counter,
    /// Optimiser steps.
    pub steps: Counter,
    /// Training samples (positions) seen by the optimiser.
    pub samples: Counter,
    /// Mean training loss of the last round.
    pub train_loss: FloatGauge,
    /// Validation loss after the last round.
    pub validation_loss: FloatGauge,
    /// Training samples per second in the last round.
    pub samples_per_second: FloatGauge,
    /// Positions in the training window.
    pub window_positions: Gauge,
    /// Candidates promoted.
    pub promoted: Counter,
    /// The best model's coordinator version (0: none, or not published to a coordinator).
    pub best_version: Gauge,
    /// Share of the points the last candidate scored in gating.
    pub last_gate_points: FloatGauge,
}

impl TrainerMetrics {
    /// Registers every metric in a new registry (`zeroplay_trainer_` prefix).
    pub fn registry(&self) -> Registry {
        let mut r = Registry::with_prefix("zeroplay_trainer");
        r.register("rounds", "Training rounds finished (trained, exported, gated)", self.rounds.clone());
        r.register("steps", "Optimiser steps", self.steps.clone());
        r.register("samples", "Positions seen by the optimiser", self.samples.clone());
        r.register("train_loss", "Mean training loss of the last round", self.train_loss.clone());
        r.register("validation_loss", "Validation loss after the last round", self.validation_loss.clone());
        r.register(
            "samples_per_second",
            "Training samples per second in the last round",
            self.samples_per_second.clone(),
        );
        r.register("window_positions", "Positions in the training window", self.window_positions.clone());
        r.register("candidates_promoted", "Candidates promoted to best", self.promoted.clone());
        r.register(
            "best_model_version",
            "The best model's coordinator version (0: none)",
            self.best_version.clone(),
        );
        r.register(
            "last_gate_points",
            "Share of the points the last candidate scored in its gating matches",
            self.last_gate_points.clone(),
        );
        r
    }
}
