//! `zeroplay bench depth`: how deep `banqi-ab` searches in each phase of the game, per agent.
//!
//! Positions come from whole games `banqi-ab` plays against itself at a small node budget
//! (seeded, so every agent meets the same positions), sorted by phase: the opening (20 or
//! more face-down squares), the middle game (1–19 face down) and the ending (none face down).
//! Each agent searches each position once with a fresh searcher (an empty table, as at a
//! game's first move: no agent is helped by what it searched before), and the bench prints
//! the median and mean depth of the last completed iteration, the nodes per second, and the
//! median nodes and milliseconds a search took: with a `depth=` budget (and a time long
//! enough to reach it) those two are the cost of a fixed depth, which is how a pruning that
//! changes no value (`probe=1`) is compared.

use std::time::Instant;

use anyhow::{Result, bail};
use clap::Args;
use engine::banqi::Banqi;
use engine::banqi::ab::AbSettings;
use engine::banqi::ab::Searcher;
use engine::game::{Actor, Game, sample_chance};
use engine::spec::AgentSpec;

/// `zeroplay bench depth`.
#[derive(Debug, Args)]
pub struct DepthBenchArgs {
    /// `banqi-ab` agents to compare, each searching every position (repeat the flag).
    #[arg(short, long, default_values_t = ["banqi-ab:time=300ms,flip_depth=2,rep=0,probe=0,cpc=0".to_string(), "banqi-ab:time=300ms".to_string()])]
    pub agent: Vec<String>,
    /// Positions per phase.
    #[arg(long, default_value_t = 12)]
    pub positions: usize,
    /// Seed of the games the positions come from.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

const PHASES: [&str; 3] =
    ["opening (≥ 20 face down)", "middle game (1–19 face down)", "ending (none face down)"];

fn phase(pos: &Banqi) -> usize {
    match pos.face_down_count() {
        20.. => 0,
        1.. => 1,
        _ => 2,
    }
}

/// Positions by phase, `per` of each, from seeded `banqi-ab:nodes=2000,tb=0,flip_depth=4`
/// games (every third decision, so one game does not give them all).
fn positions(per: usize, seed: u64) -> Vec<Vec<Banqi>> {
    let mut out = vec![Vec::new(); 3];
    // Pinned (not the defaults), so the positions stay the same when the defaults change.
    let player =
        AbSettings { nodes: Some(2_000), tablebase: 0, flip_depth: 4, search: 1, ..AbSettings::default() };
    let mut buf = Vec::new();
    for game in 0..200u64 {
        if out.iter().all(|v| v.len() >= per) {
            break;
        }
        let mut rng = engine::rng_from_seed(seed.wrapping_mul(1_000).wrapping_add(game));
        let mut searcher = Searcher::new(player.clone());
        let mut g = Banqi::start();
        let mut decisions = 0u64;
        while g.outcome().is_none() {
            match g.to_move() {
                Actor::Chance => {
                    let a = sample_chance(&g, &mut buf, &mut rng);
                    g.play_unchecked(a);
                }
                Actor::Player(_) => {
                    decisions += 1;
                    let p = phase(&g);
                    if decisions % 3 == game % 3 && decisions > 1 && out[p].len() < per {
                        out[p].push(g.clone());
                    }
                    let a = searcher.search(&g, |_, _| {}).best;
                    g.play_unchecked(a);
                }
            }
        }
    }
    out
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() { f64::NAN } else { v[v.len() / 2] }
}

/// Runs the bench.
///
/// # Errors
/// An agent that is not `banqi-ab:…`, or no positions found.
pub fn run(args: DepthBenchArgs) -> Result<()> {
    let mut agents = Vec::new();
    for a in &args.agent {
        let spec = a.parse::<AgentSpec>();
        match spec.as_ref().map(AgentSpec::game::<AbSettings>) {
            Ok(Some(s)) => {
                let s = s.clone();
                // `model=` values the leaves with that network, as the arena's agent does.
                let leaf = match &s.model {
                    Some(m) => Some(
                        crate::netload::loader::<Banqi>()(m, &engine::LeafSettings::net_alone())
                            .map_err(|e| anyhow::anyhow!("{a}: {e}"))?,
                    ),
                    None => None,
                };
                agents.push((a.clone(), s, leaf))
            }
            Ok(None) => bail!("{a}: the depth bench measures banqi-ab agents only"),
            Err(e) => bail!("{a}: {e}"),
        }
    }
    let t0 = Instant::now();
    let by_phase = positions(args.positions, args.seed);
    eprintln!(
        "positions: {} opening, {} middle game, {} ending (from seeded games, {:.1} s)",
        by_phase[0].len(),
        by_phase[1].len(),
        by_phase[2].len(),
        t0.elapsed().as_secs_f64()
    );
    if by_phase.iter().all(Vec::is_empty) {
        bail!("no positions");
    }
    println!(
        "| phase | agent | positions | median depth | mean depth | median nodes/s | median nodes | median ms |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (p, list) in by_phase.iter().enumerate() {
        for (name, settings, leaf) in &agents {
            let (mut depths, mut nps, mut nodes, mut ms) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for pos in list {
                let mut s = Searcher::with_leaf(settings.clone(), leaf.clone());
                let t = Instant::now();
                let r = s.search(pos, |_, _| {});
                depths.push(f64::from(r.depth));
                let secs = t.elapsed().as_secs_f64();
                nps.push(r.nodes as f64 / secs.max(1e-9));
                nodes.push(r.nodes as f64);
                ms.push(secs * 1e3);
            }
            let mean = depths.iter().sum::<f64>() / depths.len().max(1) as f64;
            println!(
                "| {} | `{name}` | {} | {} | {mean:.2} | {:.2} M | {:.0} k | {:.0} |",
                PHASES[p],
                list.len(),
                median(&mut depths),
                median(&mut nps) / 1e6,
                median(&mut nodes) / 1e3,
                median(&mut ms)
            );
        }
    }
    Ok(())
}
