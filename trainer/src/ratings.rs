//! The record of one gated candidate, as `ratings.json` holds it and `ratings.svg` draws it.

use serde::{Deserialize, Serialize};

/// One candidate's record in `ratings.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RatingEntry {
    /// Training round (1-based).
    pub round: u64,
    /// Candidate file, relative to the run directory.
    pub file: String,
    /// SHA-256 of the file.
    pub sha256: String,
    /// Version given by the coordinator when published (0: not published).
    pub version: u64,
    /// What it played: `rollout` or `best@round N`.
    pub opponent: String,
    /// Elo relative to the user's rollout AI (0), chained through the models it beat.
    pub elo: f64,
    /// Lower end of the 95% interval.
    pub elo_lo: f64,
    /// Upper end of the 95% interval.
    pub elo_hi: f64,
    /// Gating matches and the candidate's points.
    pub matches: u32,
    /// Candidate points.
    pub points: f64,
    /// Promoted to best?
    pub promoted: bool,
    /// Why.
    pub reason: String,
    /// Mean training loss of the round.
    pub train_loss: f32,
    /// Validation loss after the round.
    pub validation_loss: f32,
    /// Total optimiser steps.
    pub steps: u64,
    /// Positions in the window.
    pub window: usize,
    /// Training samples per second this round.
    pub samples_per_second: f64,
}
