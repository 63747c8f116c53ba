//! Banqi benchmarks: random playouts from the start (flips, moves and reveals, to the end of
//! the game), MCTS simulations with the rollout evaluator, `banqi-ab`'s nodes per second
//! (from an opening and from a middle-game position; throughput = nodes of a fixed-node
//! search; not from the start, where every flip is alike and the searcher plays one unsearched), and building the endgame tables (every 3-piece table a position reaches, and one
//! 4-piece table with its smaller ones), and one leaf evaluation (handcrafted, and a `nano` network
//! run by the searcher). Run: `cargo bench -p zeroplay-engine --bench banqi`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use engine::banqi::Banqi;
use engine::banqi::ab::{AbSettings, Searcher};
use engine::banqi::tablebase::Tablebase;
use engine::eval::Rollout;
use engine::game::Game;
use engine::mcts::{Budget, Mcts, MctsConfig};

/// An opening: four pieces face up after four flips, red to move.
const OPENING: &str = "XXXgXXXX/XXXXsXXX/XXXXXXXX/XXCXXXXG r A2E2R2H2C1S5a2e2r2h2c2s4 0 5";
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
    for (name, pos) in [
        ("opening", Banqi::from_position_string(OPENING).unwrap()),
        ("middle", Banqi::from_position_string(MIDDLE).unwrap()),
    ] {
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

fn alpha_beta(c: &mut Criterion) {
    let mut g = c.benchmark_group("banqi_ab_nodes");
    const NODES: u64 = 200_000;
    g.throughput(Throughput::Elements(NODES));
    g.sample_size(10);
    for (name, pos) in [
        ("opening", Banqi::from_position_string(OPENING).unwrap()),
        ("middle", Banqi::from_position_string(MIDDLE).unwrap()),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| {
                let settings = AbSettings { nodes: Some(NODES), tablebase: 0, ..AbSettings::default() };
                let mut s = Searcher::new(settings);
                black_box(s.search(&pos, |_, _| {}))
            })
        });
    }
    g.finish();
}

/// One leaf evaluation: the handcrafted one against a `nano` network (563 inputs, 64 hidden,
/// random weights: the cost does not depend on their values) summed from the ~50 active
/// inputs, as `banqi-ab` runs it, and from the dense 563-float encoding.
fn leaf_evaluation(c: &mut Criterion) {
    use engine::Features;
    use engine::banqi::ab::{Weights, evaluate};
    use engine::shallow::ShallowNet;
    let mut g = c.benchmark_group("banqi_leaf");
    let pos = Banqi::from_position_string(MIDDLE).unwrap();
    let (f, h) = (Banqi::FEATURE_LEN, 64);
    let net = ShallowNet {
        features: f,
        hidden: h,
        input: (0..f * h).map(|i| ((i * 7919) % 1000) as f32 / 5000.0 - 0.1).collect(),
        input_bias: vec![0.01; h],
        head: (0..h * 4).map(|i| ((i * 104_729) % 1000) as f32 / 5000.0 - 0.1).collect(),
        head_bias: [0.0; 4],
        margin_scale: 10.0,
        margin_mix: 0.5,
        score_scale: 3.0,
    };
    net.validate().unwrap();
    let w = Weights::default();
    g.bench_function("handcrafted", |b| b.iter(|| black_box(evaluate(black_box(&pos), &w))));
    let mut acc = vec![0.0; h];
    g.bench_function("nano_active_inputs", |b| {
        b.iter(|| {
            acc.copy_from_slice(&net.input_bias);
            black_box(&pos).active_features(|i, x| net.add_row(i, x, &mut acc));
            black_box(net.value(&acc))
        })
    });
    // What a quiescence node pays with the searcher's incremental accumulators: both views
    // updated for a capture, then the dynamic inputs and the head.
    let mut next = pos.clone();
    let mut actions = Vec::new();
    engine::game::Game::legal_actions(&pos, &mut actions);
    let capture = actions
        .iter()
        .copied()
        .find(|a| matches!(a, engine::banqi::Action::Move { to, .. } if matches!(pos.cell(*to), engine::banqi::Cell::Up(_))))
        .expect("the middle game has a capture");
    next.play(capture).unwrap();
    let (mut parent, mut child) = (vec![0.0; 2 * h], vec![0.0; 2 * h]);
    for me in [engine::banqi::Colour::Red, engine::banqi::Colour::Black] {
        let acc = &mut parent[me.index() * h..(me.index() + 1) * h];
        acc.copy_from_slice(&net.input_bias);
        pos.view_features(me, |i, x| net.add_row(i, x, acc));
    }
    g.bench_function("nano_incremental_capture", |b| {
        b.iter(|| {
            child.copy_from_slice(&parent);
            let (red, black) = child.split_at_mut(h);
            let (p, n) = (black_box(&pos), black_box(&next));
            p.view_feature_changes(n, engine::banqi::Colour::Red, |i, x| net.add_row(i, x, red));
            p.view_feature_changes(n, engine::banqi::Colour::Black, |i, x| net.add_row(i, x, black));
            let at = n.view().index() * h;
            acc.copy_from_slice(&child[at..at + h]);
            n.dynamic_features(|i, x| net.add_row(i, x, &mut acc));
            black_box(net.value(&acc))
        })
    });
    let mut dense = vec![0.0; f];
    g.bench_function("nano_dense_encoding", |b| {
        b.iter(|| {
            black_box(&pos).encode_features(&mut dense);
            black_box(net.value_dense(&dense))
        })
    });
    g.finish();
}

fn tablebase(c: &mut Criterion) {
    let mut g = c.benchmark_group("banqi_tablebase_build");
    g.sample_size(10);
    // King, advisor and pawn against advisor and pawn: every table its captures reach (five
    // of 4 pieces and their smaller ones), what the agent builds on first meeting it.
    let five = Banqi::from_position_string("8/1A6/Gs4aS/8 r - 0 1").unwrap();
    g.bench_function("reachable_from_5_pieces", |b| {
        b.iter(|| {
            let mut tb = Tablebase::new();
            black_box(tb.prepare(&five, 5, None))
        })
    });
    let four = Banqi::from_position_string("8/8/Gs4aS/8 r - 0 1").unwrap();
    g.bench_function("one_4_piece_table", |b| {
        b.iter(|| {
            let mut tb = Tablebase::new();
            black_box(tb.prepare(&four, 4, None))
        })
    });
    // The same tables read back from their encoded bytes (what a process finds on disk):
    // the checks (CRC-32, every entry) and the copy, without the file system.
    let mut built = Tablebase::new();
    built.prepare(&four, 4, None);
    let mut codes: Vec<u8> =
        "GsaS".chars().map(|c| engine::banqi::Piece::from_letter(c).unwrap().code()).collect();
    codes.sort_unstable();
    // Every subset of the four pieces; the ones with a table are those with both colours.
    let materials: Vec<Vec<u8>> = (1u32..16)
        .map(|mask| codes.iter().enumerate().filter(|(i, _)| mask & (1 << i) != 0).map(|(_, &c)| c).collect())
        .collect();
    let encoded: Vec<Vec<u8>> = materials.iter().filter_map(|m| built.encode(m)).collect();
    assert_eq!(encoded.len(), built.tables(), "every table of the position is encoded");
    g.bench_function("one_4_piece_table_loaded", |b| {
        b.iter(|| {
            let mut tb = Tablebase::new();
            for e in &encoded {
                tb.insert_encoded(e).unwrap();
            }
            black_box(tb.tables())
        })
    });
    g.finish();
}

criterion_group!(benches, playouts, mcts, alpha_beta, leaf_evaluation, tablebase);
criterion_main!(benches);
