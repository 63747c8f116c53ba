//! TriGolden rules tests: hand-built positions, random-game invariants, serialisation.

use super::*;
use crate::game::to_bytes;

fn new() -> TriGolden {
    TriGolden::new_game(&Options::default())
}

fn play(g: &mut TriGolden, text: &str) {
    let a = g.parse_action(text).unwrap_or_else(|e| panic!("{e}"));
    g.play(a).unwrap_or_else(|e| panic!("{text}: {e}"));
}

#[test]
fn the_opening_offers_every_shape_and_mirror_at_the_centre() {
    let g = new();
    let mut v = Vec::new();
    g.legal_actions(&mut v);
    assert_eq!(v.len(), 6);
    assert_eq!(g.total_turns(), 28);
    let mut g2 = g.clone();
    play(&mut g2, "open:A");
    assert_eq!(g2.pieces().len(), 1);
    assert_eq!(g2.mover(), Seat::Second);
    assert!(g2.outcome().is_none(), "P2 has a co-live pair on the centre piece");
    assert_eq!(perft(&g, 1), 6);
}

/// Plays a random game (uniform over legal actions) and checks invariants after every
/// action; returns the final state.
fn random_game(seed: u64, check: &mut dyn FnMut(&TriGolden)) -> TriGolden {
    let mut rng = crate::rng_from_seed(seed);
    let mut g = new();
    let mut v = Vec::new();
    while g.outcome().is_none() {
        g.legal_actions(&mut v);
        assert!(!v.is_empty(), "a live game has legal actions");
        let a = v[rand::RngExt::random_range(&mut rng, 0..v.len())];
        g.play(a).unwrap();
        check(&g);
    }
    g
}

fn invariants(g: &TriGolden) {
    let p = g.pieces();
    for (i, x) in p.iter().enumerate() {
        assert_eq!(shapes::area_sign(&x.v), std::cmp::Ordering::Greater, "piece {i} counter-clockwise");
        if let Some((t, e)) = x.parent {
            let (a, b) = p[usize::from(t)].edge(usize::from(e));
            let (c, d) = x.edge(usize::from(x.own));
            assert_eq!((a, b), (d, c), "piece {i} glued edge to edge, reversed");
            assert_ne!(p[usize::from(t)].owner, x.owner, "rule 1: attached to the opponent");
            assert!(p[usize::from(t)].glued & (1 << e) != 0 && x.glued & (1 << x.own) != 0);
        }
        for (j, y) in p.iter().enumerate().take(i) {
            assert!(!zomega::interiors_overlap(&x.v, &y.v), "pieces {j} and {i} overlap");
        }
    }
    // Stock plus pieces placed is the full set.
    for seat in Seat::BOTH {
        for (si, s) in g.options().shapes.shapes.iter().enumerate() {
            let placed = p.iter().filter(|x| x.owner == seat && usize::from(x.shape) == si).count();
            assert_eq!(usize::from(g.stock(seat, si)) + placed, usize::from(s.count));
        }
    }
    assert!(g.scores().iter().all(|&s| s >= 0));
    // The bytes replay to the same state.
    let back = TriGolden::decode(&to_bytes(g)).unwrap();
    assert_eq!(&back, g);
}

#[test]
fn random_games_keep_every_invariant_and_end_by_the_rules() {
    for seed in 0..3 {
        let mut actions = 0;
        let end = random_game(seed, &mut |g| {
            actions += 1;
            invariants(g);
        });
        let o = end.outcome().unwrap();
        match o.decisive {
            // Arbitration: the winner was to start a turn without a co-live pair.
            Some(w) => assert_eq!(w, end.mover()),
            None => assert_eq!(end.pieces().len(), 54),
        }
        eprintln!(
            "seed {seed}: {actions} actions, {} pieces, scores {:?}, {:?}",
            end.pieces().len(),
            end.scores(),
            o
        );
    }
}

#[test]
fn renders_a_finished_random_game() {
    let g = random_game(2, &mut |_| {});
    let svg = render::svg(&g);
    assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
    assert_eq!(svg.matches("<polygon").count(), g.pieces().len());
    assert_eq!(svg.matches("<circle").count(), g.scored_points().len());
    if let Ok(dir) = std::env::var("TRIGOLDEN_RENDER_DIR") {
        std::fs::write(format!("{dir}/random-2.svg"), &svg).unwrap();
    }
}
