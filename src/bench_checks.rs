//! `zeroplay bench checks`: how far an honest worker's stored move lies from another worker's
//! check of it, and how far a forged one does: the figures `[checks] tolerance` and
//! `visit_tolerance` are set from (issue 42).
//!
//! Self-play games are played as the coordinator's defaults for the game configure them
//! (noise, playout caps, forced playouts, the leaf: the rollout evaluator, or `--model`'s
//! network alone). Every `--every`-th full-search move is then searched again, fresh, as a
//! checker searches it ([`engine::selfplay::search_check`], its own seed), and compared with
//! what the game stored: the gap between the root values, the total variation distance
//! between the visit distributions, and the distance the same check finds to the stored
//! counts reversed (the forgery the probe stored: the most visited move given the
//! fewest visits) and to every visit piled on the least visited move. Prints quantiles of each and the share of checks each tolerance calls a
//! disagreement.

use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;
use engine::selfplay::{play_game, search_check, visit_distance};
use engine::{Evaluator, Features, GameKind};
use zeroplay_coordinator::checks::ChecksConfig;
use zeroplay_coordinator::config::GameConfig;

/// `zeroplay bench checks`.
#[derive(Debug, Args)]
pub struct ChecksBenchArgs {
    /// The game.
    #[arg(long, value_parser = crate::args::game_kind(), default_value_t = GameKind::DEFAULT)]
    pub game: GameKind,
    /// Self-play games to draw moves from.
    #[arg(long, default_value_t = 20)]
    pub games: u64,
    /// Check every this many full-search moves of a game.
    #[arg(long, default_value_t = 3)]
    pub every: usize,
    /// A model file: self-play and checks use its network alone (the leaf `net`, λ = 0), as
    /// workers do once a model is published. Without one: the rollout evaluator, as before.
    #[arg(long, conflicts_with = "fresh_net")]
    pub model: Option<std::path::PathBuf>,
    /// Instead of a model file, a fresh (untrained) network of this size (`tiny`, `small`,
    /// ...): what checks see before training has shaped the priors. Its weights are drawn
    /// from `--seed`, so a run repeats.
    #[arg(long)]
    pub fresh_net: Option<String>,
    /// Simulations of a full search (default: the coordinator's default for the game).
    #[arg(long)]
    pub sims: Option<u32>,
    /// Seed of the games (and, derived, of the checks' searches).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Runs the benchmark.
///
/// # Errors
/// An unknown game, or a model file that does not load.
pub fn run(args: ChecksBenchArgs) -> Result<()> {
    let kind = args.game;
    engine::with_game!(kind, |G| run_as::<G>(&args, kind))
}

fn run_as<G: Features>(args: &ChecksBenchArgs, kind: GameKind) -> Result<()> {
    let mut gcfg = GameConfig::default_for(kind);
    if let Some(s) = args.sims {
        gcfg.settings.full_sims = s;
    }
    let s = gcfg.settings.clone();
    let bytes = match (&args.model, &args.fresh_net) {
        (Some(p), _) => Some(std::fs::read(p).with_context(|| p.display().to_string())?),
        (None, Some(size)) => {
            let cfg = model::NetConfig::named(size).with_context(|| format!("no network size {size}"))?;
            let device = model::cpu();
            // Seeded as the trainer seeds its first network, so the figures repeat.
            burn::tensor::Device::seed(&device, args.seed);
            let net = model::ValueNet::new(&cfg, G::FEATURE_LEN, G::POLICY_LEN, &device);
            let meta = model::ModelMeta::for_game::<G>(cfg, 10.0, model::ModelInfo::default());
            Some(model::to_bytes(&net, &meta)?)
        }
        (None, None) => None,
    };
    let evaluator: std::sync::Arc<dyn Evaluator<G>> = match &bytes {
        Some(bytes) => {
            let m = model::load::<G>(bytes, &model::cpu()).context("the model")?;
            let leaf =
                engine::LeafSettings { evaluator: engine::LeafEvaluator::Net, lambda: 0.0, ..gcfg.leaf };
            model::net_leaf::<G>(model::NetSource::Fixed(m), &leaf)
        }
        None => gcfg.leaf.without_net(),
    };
    let leaf = match (&args.model, &args.fresh_net) {
        (Some(p), _) => format!("the network alone (lambda 0) of {}", p.display()),
        (None, Some(size)) => format!("a fresh, untrained {size} network alone (lambda 0)"),
        (None, None) => "the rollout evaluator".to_string(),
    };
    println!(
        "bench checks: {kind}, {} games (seed {}), full searches of {} sims ({} root, forced playouts {}), {leaf}; \
         one full-search move in {} checked",
        args.games,
        args.seed,
        s.full_sims,
        s.root.name(),
        s.forced_playouts,
        args.every.max(1)
    );
    let (mut gaps, mut honest, mut forged, mut piled) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let t0 = Instant::now();
    let bar = indicatif::ProgressBar::new(args.games);
    for i in 0..args.games {
        let seed = engine::derive_seed(args.seed, i);
        let start = G::new_game(&Default::default());
        let g = play_game(&start, &s, evaluator.as_ref(), seed);
        let mut state = start.clone();
        let mut full = 0usize;
        for (ply, m) in g.moves.iter().enumerate() {
            if m.full_search && m.visits.len() > 1 {
                full += 1;
                if full.is_multiple_of(args.every.max(1)) {
                    let c = search_check(
                        &state,
                        &s,
                        evaluator.as_ref(),
                        s.full_sims,
                        engine::derive_seed(seed, 1 + ply as u64),
                    );
                    gaps.push((m.root_value - c.root_value).abs());
                    if let (Some(h), Some(f), Some(p)) = (
                        visit_distance(&m.visits, &c.visits),
                        visit_distance(&reversed(&m.visits), &c.visits),
                        visit_distance(&piled_on_least(&m.visits), &c.visits),
                    ) {
                        honest.push(h);
                        forged.push(f);
                        piled.push(p);
                    }
                }
            }
            state.play_unchecked(m.action);
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    println!("{} checks in {:.0} s", gaps.len(), t0.elapsed().as_secs_f64());
    let cfg = ChecksConfig::default();
    println!("{:<46} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7}", "", "min", "p5", "median", "p95", "p99", "max");
    for (name, v) in [
        ("root value gap, honest", &mut gaps),
        ("visit distance (TV), honest", &mut honest),
        ("visit distance (TV), counts reversed", &mut forged),
        ("visit distance (TV), all on the least visited", &mut piled),
    ] {
        v.sort_by(f32::total_cmp);
        let q = |p: f64| v.get(((v.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or(f32::NAN);
        println!(
            "{name:<46} {:>7.3} {:>7.3} {:>7.3} {:>7.3} {:>7.3} {:>7.3}",
            q(0.0),
            q(0.05),
            q(0.5),
            q(0.95),
            q(0.99),
            q(1.0)
        );
    }
    let share =
        |v: &[f32], t: f32| 100.0 * v.iter().filter(|x| **x > t).count() as f64 / v.len().max(1) as f64;
    println!(
        "default tolerances: honest moves disagreeing {:.1}% (value > {}) and {:.1}% (visits > {}); \
         forgeries caught: counts reversed {:.1}%, all on the least visited {:.1}%",
        share(&gaps, cfg.tolerance),
        cfg.tolerance,
        share(&honest, cfg.visit_tolerance),
        cfg.visit_tolerance,
        share(&forged, cfg.visit_tolerance),
        share(&piled, cfg.visit_tolerance)
    );
    if args.model.is_none() && args.fresh_net.is_none() {
        println!("(moves searched without a network have their values checked only: see `[checks]`)");
    }
    Ok(())
}

/// `v` with every visit on its least visited action (the forgery of tests/forged_peers.rs).
fn piled_on_least<A: Copy>(v: &[(A, u32)]) -> Vec<(A, u32)> {
    let total = v.iter().map(|x| x.1).sum();
    let least = (0..v.len()).min_by_key(|&i| v[i].1).unwrap_or(0);
    v.iter().enumerate().map(|(i, &(a, _))| (a, if i == least { total } else { 0 })).collect()
}

/// `v` with its counts reversed by rank: the most visited action gets the fewest visits.
fn reversed<A: Copy>(v: &[(A, u32)]) -> Vec<(A, u32)> {
    let mut order: Vec<usize> = (0..v.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(v[i].1));
    let mut out = v.to_vec();
    for (r, &i) in order.iter().enumerate() {
        out[i].1 = v[order[order.len() - 1 - r]].1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reversing_swaps_counts_by_rank() {
        assert_eq!(reversed(&[('a', 5), ('b', 1), ('c', 3)]), [('a', 1), ('b', 5), ('c', 3)]);
        assert_eq!(piled_on_least(&[('a', 5), ('b', 1), ('c', 3)]), [('a', 0), ('b', 9), ('c', 0)]);
    }
}
