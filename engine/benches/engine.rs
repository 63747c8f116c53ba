//! Engine benchmarks: random Battle Number games, and MCTS simulations with the uniform and
//! rollout evaluators. Run: `cargo bench -p zeroplay-engine --bench engine`.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use engine::battlenumber::{BattleNumber, Options};
use engine::eval::{Rollout, Uniform};
use engine::game::Game;
use engine::mcts::{Budget, Mcts, MctsConfig};

fn random_games(c: &mut Criterion) {
    let start = BattleNumber::new_game(&Options::default());
    let mut g = c.benchmark_group("battlenumber_random_game");
    g.throughput(Throughput::Elements(1));
    let mut rng = engine::rng_from_seed(1);
    g.bench_function("fast_playout", |b| {
        b.iter(|| {
            let mut s = start.clone();
            s.random_playout(&mut rng);
            black_box(s.outcome())
        })
    });
    // The generic click-by-click playout through legal_actions (what any game gets for free).
    let mut rng = engine::rng_from_seed(2);
    g.bench_function("generic_clicks", |b| {
        b.iter(|| {
            let mut s = start.clone();
            let mut buf = Vec::new();
            while s.outcome().is_none() {
                s.legal_actions(&mut buf);
                let i = rand::RngExt::random_range(&mut rng, 0..buf.len());
                s.play_unchecked(buf[i]);
            }
            black_box(s.outcome())
        })
    });
    g.finish();
}

fn mcts(c: &mut Criterion) {
    // A mid-game position: 20 random placements in.
    let mut rng = engine::rng_from_seed(3);
    let mut pos = BattleNumber::new_game(&Options::default());
    let mut buf = Vec::new();
    while pos.placed()[0] + pos.placed()[1] < 20 || !pos.at_turn_start() {
        pos.legal_actions(&mut buf);
        let i = rand::RngExt::random_range(&mut rng, 0..buf.len());
        pos.play_unchecked(buf[i]);
    }
    const SIMS: u64 = 1000;
    let mut g = c.benchmark_group("mcts_sims");
    g.throughput(Throughput::Elements(SIMS));
    g.sample_size(20);
    for (name, rollout) in [("uniform", false), ("rollout", true)] {
        g.bench_function(name, |b| {
            b.iter_batched(
                || Mcts::new(pos.clone(), MctsConfig::default()),
                |mut t| {
                    if rollout {
                        t.search(&Rollout::default(), Budget::sims(SIMS), &mut rng, &mut |_| {});
                    } else {
                        t.search(&Uniform, Budget::sims(SIMS), &mut rng, &mut |_| {});
                    }
                    black_box(t.best_action())
                },
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, random_games, mcts);
criterion_main!(benches);
