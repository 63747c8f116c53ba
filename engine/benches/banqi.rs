//! Banqi benchmarks: random playouts from the start (flips, moves and reveals, to the end of
//! the game) and MCTS simulations with the rollout evaluator, from the start and from a
//! middle-game position. Run: `cargo bench -p zeroplay-engine --bench banqi`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use engine::banqi::Banqi;
use engine::eval::Rollout;
use engine::game::Game;
use engine::mcts::{Budget, Mcts, MctsConfig};

/// A middle game: pieces face up on both sides, some still face down, red to move.
const MIDDLE: &str = "1X2g3/r1XC4/2hS1a2/S6X r S1a1c1 12 1";

fn playouts(c: &mut Criterion) {
    let start = Banqi::start();
    let mut g = c.benchmark_group("banqi_random_game");
    g.throughput(Throughput::Elements(1));
    let mut rng = engine::rng_from_seed(1);
    g.bench_function("playout_from_start", |b| {
        b.iter(|| {
            let mut s = start.clone();
            s.random_playout(&mut rng);
            black_box(s.outcome())
        })
    });
    g.finish();
}

fn mcts(c: &mut Criterion) {
    let mut g = c.benchmark_group("banqi_mcts_rollout");
    const SIMS: u64 = 1000;
    g.throughput(Throughput::Elements(SIMS));
    g.sample_size(10);
    for (name, pos) in [("start", Banqi::start()), ("middle", Banqi::from_position_string(MIDDLE).unwrap())] {
        let mut rng = engine::rng_from_seed(2);
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut tree = Mcts::new(pos.clone(), MctsConfig::default());
                tree.search(&Rollout::default(), Budget::sims(SIMS), &mut rng, &mut |_| {});
                black_box(tree.best_action())
            })
        });
    }
    g.finish();
}

criterion_group!(benches, playouts, mcts);
criterion_main!(benches);
