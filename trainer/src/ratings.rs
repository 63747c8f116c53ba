//! Ratings: the record of each gated candidate (`ratings.json`, drawn in `ratings.svg`), the
//! games behind them (`results.json`), and one maximum-likelihood fit of all those games
//! ([`fit`]) that gives every model its Elo, the user's AI = 0.

use serde::{Deserialize, Serialize};

use crate::train::Losses;

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
    /// What it was gated against: the user's AI (`rollout`, or the game's own by name) or
    /// the best model (`round N`).
    pub opponent: String,
    /// The gate's own estimate of the candidate over its opponent, from those games alone.
    #[serde(default)]
    pub gate_elo: f64,
    /// Elo from one fit of all the run's games ([`fit`]), the user's AI = 0 (refitted every
    /// round, so earlier entries move as games come in).
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
    /// Published and still being gated by the coordinator when the run stopped: on resume
    /// the trainer asks for the verdict before training on ([`crate::pipeline::Gatekeeper::verdict`]).
    #[serde(default)]
    pub pending: bool,
    /// Mean training loss of the round (over its steps, as the network moved).
    pub train_loss: f32,
    /// Each head's loss after the round on up to 4,096 training positions (spread over the
    /// window), measured as the validation losses are.
    #[serde(default)]
    pub train_losses: Losses,
    /// Each head's loss after the round on up to 4,096 held-out positions.
    #[serde(default)]
    pub validation_losses: Losses,
    /// Validation loss after the round.
    pub validation_loss: f32,
    /// Total optimiser steps.
    pub steps: u64,
    /// Positions in the window.
    pub window: usize,
    /// The name of the newest game file in the window when the round trained: a resumed run
    /// counts as new only the positions in files after it ("": written before this was kept;
    /// such a run counts its whole window as new).
    #[serde(default)]
    pub newest_file: String,
    /// Training samples per second this round.
    pub samples_per_second: f64,
}

/// Rating games (the `[rating]` table of `configs/train.toml`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RatingSettings {
    /// Matches a promoted model plays against each anchor: the user's AI at the gate's
    /// simulations (the reference, 0 Elo) and each of `anchors`. 0: none (ratings then rest on
    /// gating games alone, a chain).
    pub matches: u32,
    /// More anchors, as agent specs (`zeroplay --help`).
    pub anchors: Vec<String>,
    /// Seed of the rating games' openings.
    pub seed: u64,
}

impl Default for RatingSettings {
    fn default() -> Self {
        RatingSettings {
            matches: 10,
            // The user's AI at four times the gate's budget, and MCTS with no knowledge.
            anchors: vec!["mcts:sims=256,eval=rollout".into(), "mcts:sims=64,eval=uniform".into()],
            seed: 11,
        }
    }
}

impl RatingSettings {
    /// Checks every anchor spec.
    ///
    /// # Errors
    /// The first spec that does not parse, or one that needs a model file.
    pub fn validate(&self) -> Result<(), String> {
        for a in &self.anchors {
            let spec: engine::spec::AgentSpec = a.parse().map_err(|e| format!("rating anchor {a:?}: {e}"))?;
            if a.contains("eval=net") {
                return Err(format!("rating anchor {spec}: anchors are fixed agents, not networks"));
            }
        }
        if self.matches > 1000 {
            return Err(format!("rating matches {} is more than 1000", self.matches));
        }
        Ok(())
    }
}

/// Writes the fit into the history: each candidate's `elo`, `elo_lo` and `elo_hi` by its
/// player name (`round N`); candidates the fit does not reach keep their gate's estimate.
pub fn apply(history: &mut [RatingEntry], rated: &[Rated]) {
    for e in history.iter_mut() {
        let name = format!("round {}", e.round);
        if let Some(r) = rated.iter().find(|r| r.name == name) {
            e.elo = r.elo;
            e.elo_lo = r.lo;
            e.elo_hi = r.hi;
        }
    }
}

/// The player at Elo 0 in a run's fit and tables: the user's AI (`None`), unless the run's
/// first gated candidate met a model from outside the run (`vN`, a coordinator version this
/// run did not train): a run started from a given model (`zeroplay local --init-model`) rates
/// its rounds over that model, since no game connects them to the user's AI.
pub fn zero_point(history: &[RatingEntry]) -> Option<&str> {
    let first = history.iter().find(|e| e.matches > 0)?;
    let v = first.opponent.strip_prefix('v')?;
    (!v.is_empty() && v.bytes().all(|b| b.is_ascii_digit())).then_some(first.opponent.as_str())
}

/// How a table or plot names its Elo zero: "the user's AI" or "vN (the model the run started from)".
pub fn zero_name(history: &[RatingEntry]) -> String {
    zero_point(history)
        .map_or_else(|| "the user's AI".to_string(), |v| format!("{v}, the model the run started from"))
}

/// The games between two players, as `results.json` keeps them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pairing {
    /// One player (a model, `round N`, or an anchor by name).
    pub a: String,
    /// The other.
    pub b: String,
    /// Matches (games) played.
    pub matches: u32,
    /// `a`'s points (a win 1, a draw ½).
    pub points: f64,
    /// What the games were for: `gate` or `rating`.
    pub kind: String,
}

/// One player's fitted rating.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rated {
    /// The player.
    pub name: String,
    /// Elo, the reference player = 0.
    pub elo: f64,
    /// Lower end of the 95% interval.
    pub lo: f64,
    /// Upper end of the 95% interval.
    pub hi: f64,
    /// Games played.
    pub games: u32,
}

/// Elo points per natural-log unit of the odds.
const ELO: f64 = 400.0 / std::f64::consts::LN_10;

/// The maximum-likelihood Bradley–Terry fit of every pairing at once (as BayesElo and Ordo
/// fit a whole tournament, instead of adding each match's estimate to the last), with
/// `reference` fixed at 0 Elo. A draw counts half a win. Each pairing also gets one virtual
/// draw (BayesElo's prior), so that a player who won every game still gets a finite rating.
/// The 95% intervals come from the inverse of the likelihood's curvature (the observed
/// Fisher information). Players not connected to `reference` by games are left out.
pub fn fit(results: &[Pairing], reference: &str) -> Vec<Rated> {
    // Players connected to the reference, in first-seen order (the reference first).
    let mut names: Vec<&str> = vec![reference];
    loop {
        let before = names.len();
        for r in results.iter().filter(|r| r.matches > 0) {
            let (ia, ib) = (names.contains(&r.a.as_str()), names.contains(&r.b.as_str()));
            if ia && !ib {
                names.push(&r.b);
            } else if ib && !ia {
                names.push(&r.a);
            }
        }
        if names.len() == before {
            break;
        }
    }
    let n = names.len();
    let idx = |s: &str| names.iter().position(|x| *x == s);
    // (i, j, games, points of i), with the virtual draw.
    let mut pairs: Vec<(usize, usize, f64, f64)> = Vec::new();
    let mut games = vec![0u32; n];
    for r in results.iter().filter(|r| r.matches > 0) {
        if let (Some(i), Some(j)) = (idx(&r.a), idx(&r.b))
            && i != j
        {
            pairs.push((i, j, f64::from(r.matches) + 1.0, r.points + 0.5));
            games[i] += r.matches;
            games[j] += r.matches;
        }
    }
    let mut theta = vec![0.0f64; n];
    let sigmoid = |d: f64| 1.0 / (1.0 + (-d).exp());
    // Newton's method on the free players 1..n (player 0, the reference, stays at 0).
    let mut info = vec![vec![0.0f64; n]; n];
    for _ in 0..100 {
        let mut grad = vec![0.0f64; n];
        for row in info.iter_mut() {
            row.iter_mut().for_each(|x| *x = 0.0);
        }
        for &(i, j, m, s) in &pairs {
            let p = sigmoid(theta[i] - theta[j]);
            grad[i] += s - m * p;
            grad[j] -= s - m * p;
            let w = m * p * (1.0 - p);
            info[i][i] += w;
            info[j][j] += w;
            info[i][j] -= w;
            info[j][i] -= w;
        }
        if n <= 1 {
            break;
        }
        let sub: Vec<Vec<f64>> = info[1..].iter().map(|r| r[1..].to_vec()).collect();
        let Some(step) = solve(sub, grad[1..].to_vec()) else { break };
        let mut biggest = 0.0f64;
        for (k, d) in step.iter().enumerate() {
            // Damped: no player moves more than 2 natural units (~350 Elo) per step.
            let d = d.clamp(-2.0, 2.0);
            theta[k + 1] += d;
            biggest = biggest.max(d.abs());
        }
        if biggest < 1e-9 {
            break;
        }
    }
    // Variances: the diagonal of the inverse information over the free players.
    // One elimination with every unit vector as a right-hand side: O(n³), not n solves.
    let mut var = vec![0.0f64; n];
    if n > 1 {
        let sub: Vec<Vec<f64>> = info[1..].iter().map(|r| r[1..].to_vec()).collect();
        let unit: Vec<Vec<f64>> =
            (0..n - 1).map(|k| (0..n - 1).map(|j| if j == k { 1.0 } else { 0.0 }).collect()).collect();
        if let Some(inv) = solve_many(sub, unit) {
            for k in 0..n - 1 {
                var[k + 1] = inv[k][k].max(0.0);
            }
        }
    }
    names
        .iter()
        .enumerate()
        .map(|(k, name)| {
            let half = 1.96 * var[k].sqrt() * ELO;
            let elo = theta[k] * ELO;
            Rated { name: (*name).to_string(), elo, lo: elo - half, hi: elo + half, games: games[k] }
        })
        .collect()
}

/// Solves `a · x = b` by Gaussian elimination with partial pivoting (`None`: singular).
fn solve(a: Vec<Vec<f64>>, b: Vec<f64>) -> Option<Vec<f64>> {
    let rows = b.into_iter().map(|v| vec![v]).collect();
    solve_many(a, rows).map(|x| x.into_iter().map(|r| r[0]).collect())
}

/// Solves `a · X = B` for every column of `B` (row `i` of `b` is row `i` of `B`) by one
/// Gaussian elimination with partial pivoting (`None`: singular).
fn solve_many(mut a: Vec<Vec<f64>>, mut b: Vec<Vec<f64>>) -> Option<Vec<Vec<f64>>> {
    let n = b.len();
    for c in 0..n {
        let p = (c..n).max_by(|&x, &y| a[x][c].abs().total_cmp(&a[y][c].abs()))?;
        if a[p][c].abs() < 1e-12 {
            return None;
        }
        a.swap(c, p);
        b.swap(c, p);
        for r in c + 1..n {
            let f = a[r][c] / a[c][c];
            if f != 0.0 {
                for k in c..n {
                    a[r][k] -= f * a[c][k];
                }
                let (top, bottom) = b.split_at_mut(r);
                for (x, y) in bottom[0].iter_mut().zip(&top[c]) {
                    *x -= f * y;
                }
            }
        }
    }
    let m = b.first().map_or(0, Vec::len);
    let mut x = vec![vec![0.0; m]; n];
    for r in (0..n).rev() {
        for j in 0..m {
            let s: f64 = (r + 1..n).map(|k| a[r][k] * x[k][j]).sum();
            x[r][j] = (b[r][j] - s) / a[r][r];
        }
    }
    Some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(a: &str, b: &str, matches: u32, points: f64) -> Pairing {
        Pairing { a: a.into(), b: b.into(), matches, points, kind: "gate".into() }
    }

    #[test]
    fn the_fit_recovers_known_differences_and_does_not_chain_noise() {
        // 400 games at 76% is +200 Elo (with the virtual draw, a hair less).
        let r = fit(&[p("x", "ref", 400, 0.76 * 400.0)], "ref");
        assert_eq!(r[0].name, "ref");
        assert_eq!(r[0].elo, 0.0);
        assert!((r[1].elo - 200.0).abs() < 3.0, "{r:?}");
        assert!(r[1].lo < 200.0 && r[1].hi > 200.0 && r[1].hi - r[1].lo < 80.0, "{r:?}");

        // A chain of lucky 60% gates (+70 each) says +280 for the fourth model; direct games
        // against the reference at 50% pull all of them back: one fit of every game.
        let mut games = vec![
            p("m1", "ref", 40, 24.0),
            p("m2", "m1", 40, 24.0),
            p("m3", "m2", 40, 24.0),
            p("m4", "m3", 40, 24.0),
        ];
        let chained = fit(&games, "ref");
        assert!(chained[4].elo > 250.0, "{chained:?}");
        for m in ["m1", "m2", "m3", "m4"] {
            games.push(p(m, "ref", 100, 50.0));
        }
        let anchored = fit(&games, "ref");
        for r in &anchored[1..] {
            assert!(r.elo.abs() < 80.0 && r.lo < 0.0 && r.hi > 0.0, "{anchored:?}");
        }
    }

    #[test]
    fn elo_zero_is_the_users_ai_unless_the_first_gate_met_a_model_from_outside_the_run() {
        let entry = |opponent: &str, matches: u32| -> RatingEntry {
            serde_json::from_value(serde_json::json!({
                "round": 1, "file": "f", "sha256": "", "version": 2, "opponent": opponent,
                "elo": 0.0, "elo_lo": 0.0, "elo_hi": 0.0, "matches": matches, "points": 0.0,
                "promoted": false, "reason": "", "train_loss": 0.0, "validation_loss": 0.0,
                "steps": 0, "window": 0, "samples_per_second": 0.0
            }))
            .unwrap()
        };
        assert_eq!(zero_point(&[entry("banqi-ab", 10), entry("round 1", 10)]), None);
        assert_eq!(zero_point(&[entry("v1", 30), entry("round 1", 10)]), Some("v1"));
        // An ungated first round does not decide it; names that only look like versions do not.
        assert_eq!(zero_point(&[entry("v1", 0), entry("v7", 4)]), Some("v7"));
        assert_eq!(zero_point(&[entry("vanilla", 4)]), None);
        assert_eq!(zero_point(&[entry("v", 4)]), None);
        assert_eq!(zero_name(&[entry("v1", 30)]), "v1, the model the run started from");
        assert_eq!(zero_name(&[]), "the user's AI");
    }

    #[test]
    fn a_player_who_won_everything_is_finite_and_strangers_are_left_out() {
        let r = fit(&[p("a", "ref", 20, 20.0), p("x", "y", 10, 5.0)], "ref");
        assert_eq!(r.len(), 2, "x and y never met ref's side: {r:?}");
        assert!(r[1].elo.is_finite() && r[1].elo > 300.0 && r[1].lo > 0.0, "{r:?}");
        // Either side of a pairing counts.
        let r = fit(&[p("ref", "a", 20, 10.0)], "ref");
        assert!(r[1].elo.abs() < 1e-6, "{r:?}");
        assert_eq!(fit(&[], "ref").len(), 1);
    }
}
