//! TriGolden benchmarks: one placement's incremental tracker update against the full
//! recompute on boards of 10, 20, 40 and 54 pieces; legal-turn enumeration in the middle game;
//! random games; MCTS simulations; the exact sign tests (expanded against the full Z[ω]
//! product they replace); and, printed once before the timings, heap allocations (and reallocations)
//! per placement (`stats_alloc` wraps the system allocator). Run: `cargo bench -p
//! zeroplay-engine --bench trigolden`.

use std::alloc::System;
use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use engine::eval::Rollout;
use engine::game::Game;
use engine::mcts::{Budget, Mcts, MctsConfig};
use engine::trigolden::{Options, TriGolden};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Prints the heap allocations of whole random games (fast playout), per placement, and of
/// one state copy in the middle game.
fn allocations() {
    let start = TriGolden::new_game(&Options::default());
    let mut rng = engine::rng_from_seed(9);
    let (mut allocs, mut pieces) = (0u64, 0usize);
    for _ in 0..50 {
        let mut s = start.clone();
        let region = Region::new(GLOBAL);
        s.random_playout(&mut rng);
        let c = region.change();
        allocs += (c.allocations + c.reallocations) as u64;
        pieces += s.pieces().len();
    }
    let mid = full_game().into_iter().find(|s| s.pieces().len() >= 21 && s.at_turn_start()).expect("reached");
    let region = Region::new(GLOBAL);
    black_box(mid.clone());
    let c = region.change();
    let clone = c.allocations + c.reallocations;
    println!(
        "allocations: {:.1} per placement in random games (50 games, {pieces} placements); \
         {clone} per state copy in the middle game ({} pieces, {} methods)",
        allocs as f64 / pieces as f64,
        mid.pieces().len(),
        mid.tracker().methods().len()
    );
}

/// The states of a random game that places every piece (seeds are tried in order until one
/// does), one per action.
fn full_game() -> Vec<TriGolden> {
    for seed in 0.. {
        let mut rng = engine::rng_from_seed(seed);
        let mut g = TriGolden::new_game(&Options::default());
        let mut states = vec![g.clone()];
        let mut buf = Vec::new();
        while g.outcome().is_none() {
            g.legal_actions(&mut buf);
            g.play_unchecked(buf[rand::RngExt::random_range(&mut rng, 0..buf.len())]);
            states.push(g.clone());
        }
        if g.pieces().len() == 54 {
            return states;
        }
    }
    unreachable!()
}

fn placement(c: &mut Criterion) {
    allocations();
    let states = full_game();
    let mut g = c.benchmark_group("trigolden_placement");
    for n in [10usize, 20, 40, 53] {
        // The placement of piece n + 1 onto a board of n pieces.
        let before = states.iter().find(|s| s.pieces().len() == n).expect("reached");
        let after = states.iter().find(|s| s.pieces().len() == n + 1).expect("reached");
        g.bench_function(format!("incremental/{n}"), |b| {
            b.iter_batched(
                || before.tracker().clone(),
                |mut t| black_box(t.placed(after, after.pieces(), true).len()),
                BatchSize::SmallInput,
            )
        });
        g.bench_function(format!("full_recompute/{n}"), |b| {
            b.iter(|| black_box(after.methods_brute(after.pieces()).len()))
        });
    }
    g.finish();
}

fn turns_and_games(c: &mut Criterion) {
    let states = full_game();
    let mid = states.iter().find(|s| s.pieces().len() >= 21 && s.at_turn_start()).expect("reached").clone();
    let mut g = c.benchmark_group("trigolden_midgame");
    g.bench_function("legal_turns", |b| b.iter(|| black_box(mid.legal_turns().len())));
    // The link sets: worked out from scratch, and after one more turn on a position whose
    // earlier targets' pairs are already known (the incremental case).
    g.bench_function("links_from_scratch", |b| {
        b.iter_batched(|| mid.clone(), |s| black_box(s.links().co_live.len()), BatchSize::SmallInput)
    });
    let warm = mid.clone();
    let _ = warm.links();
    let turn = warm.legal_turns().into_iter().next().expect("a legal turn");
    g.bench_function("links_after_one_turn", |b| {
        b.iter_batched(
            || {
                let mut s = warm.clone();
                turn.iter().for_each(|&a| s.play_unchecked(a));
                s
            },
            |s| black_box(s.links().co_live.len()),
            BatchSize::SmallInput,
        )
    });
    g.bench_function("legal_first_actions", |b| {
        let mut buf = Vec::new();
        b.iter(|| {
            mid.legal_actions(&mut buf);
            black_box(buf.len())
        })
    });
    g.finish();

    let mut g = c.benchmark_group("trigolden_random_game");
    g.throughput(Throughput::Elements(1));
    g.sample_size(10);
    let start = TriGolden::new_game(&Options::default());
    let mut rng = engine::rng_from_seed(9);
    g.bench_function("fast_playout", |b| {
        b.iter(|| {
            let mut s = start.clone();
            s.random_playout(&mut rng);
            black_box(s.outcome())
        })
    });
    // The same distribution click by click through legal_actions (the baseline).
    g.bench_function("generic_clicks", |b| {
        b.iter(|| {
            let mut s = start.clone();
            let mut buf = Vec::new();
            while s.outcome().is_none() {
                s.legal_actions(&mut buf);
                s.play_unchecked(buf[rand::RngExt::random_range(&mut rng, 0..buf.len())]);
            }
            black_box(s.outcome())
        })
    });
    g.finish();

    const SIMS: u64 = 20;
    let mut g = c.benchmark_group("trigolden_mcts_sims");
    g.throughput(Throughput::Elements(SIMS));
    g.sample_size(10);
    let mut rng = engine::rng_from_seed(4);
    g.bench_function("rollout", |b| {
        b.iter_batched(
            || Mcts::new(mid.clone(), MctsConfig::default()),
            |mut t| {
                t.search(&Rollout::default(), Budget::sims(SIMS), &mut rng, &mut |_| {});
                black_box(t.best_action())
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

/// The cross- and dot-product signs every geometric test ends in, on the vectors between the
/// vertices of a full board: the expanded Z[φ] form the engine uses against the full Z[ω]
/// product `ū·v` it replaced, side by side.
fn sign_tests(c: &mut Criterion) {
    use engine::trigolden::zomega::{Z, cross_sign, dot_sign};
    let board = full_game().pop().expect("a finished game");
    let points: Vec<Z> = board.pieces().iter().flat_map(|p| p.v).collect();
    let anchor = points[0];
    let vectors: Vec<Z> = points.iter().map(|&p| p - anchor).collect();
    let pairs: Vec<(Z, Z)> = vectors.iter().flat_map(|&u| vectors.iter().map(move |&v| (u, v))).collect();
    let mut g = c.benchmark_group("trigolden_sign_tests");
    g.throughput(Throughput::Elements(pairs.len() as u64));
    g.bench_function("cross_expanded", |b| {
        b.iter(|| pairs.iter().filter(|&&(u, v)| cross_sign(black_box(u), v).is_gt()).count())
    });
    g.bench_function("cross_full_product", |b| {
        b.iter(|| pairs.iter().filter(|&&(u, v)| (black_box(u).conj() * v).im_sign().is_gt()).count())
    });
    g.bench_function("dot_expanded", |b| {
        b.iter(|| pairs.iter().filter(|&&(u, v)| dot_sign(black_box(u), v).is_gt()).count())
    });
    g.bench_function("dot_full_product", |b| {
        b.iter(|| pairs.iter().filter(|&&(u, v)| (black_box(u).conj() * v).re_sign().is_gt()).count())
    });
    g.finish();
}

criterion_group!(benches, placement, turns_and_games, sign_tests);
criterion_main!(benches);
