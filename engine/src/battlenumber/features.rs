//! Battle Number's network encoding ([`Features`]).
//!
//! The layout below is also `LAYOUT_DOC`, which docs/model-format.md is generated from.
//!
#![doc = include_str!("features.md")]

use std::sync::LazyLock;

use super::symmetry::Symmetry;
use super::{Action, BattleNumber, Kind, SQUARES, bitboard::Squares};
use crate::features::Features;
use crate::game::{Game, Seat};

const PLANES: usize = 20;
const SCALARS: usize = 23;
/// The feature layout as Markdown (this module's documentation; docs/model-format.md is
/// generated from it).
pub const LAYOUT_DOC: &str = include_str!("features.md");

/// Index maps of the eight symmetries: where each feature, policy entry and square goes.
struct Maps {
    features: Vec<Vec<u16>>,
    policy: Vec<Vec<u8>>,
    squares: Vec<[u8; SQUARES]>,
}

static MAPS: LazyLock<Maps> = LazyLock::new(|| {
    let mut maps = Maps { features: Vec::new(), policy: Vec::new(), squares: Vec::new() };
    for s in Symmetry::ALL {
        // Planes are per square; the four solid-edge planes (10–13: N, E, S, W) also trade
        // places as the sides map. The scalars are counts and scores: unchanged.
        let features = (0..BattleNumber::FEATURE_LEN)
            .map(|i| {
                if i >= PLANES * SQUARES {
                    return i as u16;
                }
                let (p, sq) = (i / SQUARES, (i % SQUARES) as u8);
                let p = if (10..14).contains(&p) { 10 + s.side(p - 10) } else { p };
                (p * SQUARES + s.square(sq) as usize) as u16
            })
            .collect();
        let policy = (0..BattleNumber::POLICY_LEN)
            .map(|i| match action_at(i) {
                Some(a) => BattleNumber::action_index(&s.action(a)).expect("every click has an index") as u8,
                // Unused entries (a Double Two's rotations 2 and 3) stay put.
                None => i as u8,
            })
            .collect();
        maps.features.push(features);
        maps.policy.push(policy);
        maps.squares.push(std::array::from_fn(|sq| s.square(sq as u8)));
    }
    maps
});

fn plane(out: &mut [f32], p: usize, mask: u64) {
    for sq in Squares(mask) {
        out[p * SQUARES + sq as usize] = 1.0;
    }
}

impl Features for BattleNumber {
    const FEATURE_VERSION: u32 = 2;
    const FEATURE_LEN: usize = PLANES * SQUARES + SCALARS;
    const POLICY_LEN: usize = SQUARES + 20;
    const OWNERSHIP_LEN: usize = SQUARES;
    const SYMMETRIES: usize = 8;

    fn map_features(sym: usize, features: &[f32], out: &mut [f32]) {
        assert!(sym < Self::SYMMETRIES, "symmetry {sym} of {}", Self::SYMMETRIES);
        assert_eq!(features.len(), Self::FEATURE_LEN, "feature buffer length");
        assert_eq!(out.len(), Self::FEATURE_LEN, "feature buffer length");
        for (&x, &to) in features.iter().zip(&MAPS.features[sym]) {
            out[to as usize] = x;
        }
    }

    fn map_policy_index(sym: usize, index: usize) -> usize {
        MAPS.policy[sym][index] as usize
    }

    fn map_ownership(sym: usize, ownership: &[i8], out: &mut [i8]) {
        assert!(sym < Self::SYMMETRIES, "symmetry {sym} of {}", Self::SYMMETRIES);
        assert_eq!(ownership.len(), Self::OWNERSHIP_LEN, "ownership buffer length");
        assert_eq!(out.len(), Self::OWNERSHIP_LEN, "ownership buffer length");
        for (&x, &to) in ownership.iter().zip(&MAPS.squares[sym]) {
            out[to as usize] = x;
        }
    }

    fn ownership(&self, seat: Seat, out: &mut [i8]) {
        assert_eq!(out.len(), Self::OWNERSHIP_LEN, "ownership buffer length");
        let (me, opp) = (self.own[seat.index()], self.own[seat.other().index()]);
        for (sq, o) in out.iter_mut().enumerate() {
            *o = i8::from(me >> sq & 1 == 1) - i8::from(opp >> sq & 1 == 1);
        }
    }

    fn encode_features(&self, out: &mut [f32]) {
        assert_eq!(out.len(), Self::FEATURE_LEN, "feature buffer length");
        out.fill(0.0);
        let me = self.perspective();
        let opp = me.other();
        let (mi, oi) = (me.index(), opp.index());
        for sq in 0..SQUARES as u8 {
            if let Some(p) = self.piece(sq) {
                let base = if p.owner == me { 0 } else { 5 };
                out[(base + p.kind as usize) * SQUARES + sq as usize] = 1.0;
            }
        }
        for d in 0..4 {
            plane(out, 10 + d, self.solid[d]);
        }
        plane(out, 14, super::bitboard::FULL & !self.occupied());
        plane(out, 15, self.legal_square_clicks());
        if let Some(s) = self.pending_square() {
            plane(out, 16, 1u64 << s);
        }
        if let Some((visited, cur)) = self.pending_path() {
            plane(out, 17, visited);
            plane(out, 18, 1u64 << cur);
        }
        let (my_squares, my_count) = self.placement_mobility(me);
        let (opp_squares, opp_count) = self.placement_mobility(opp);
        plane(out, 19, opp_squares);
        let s = &mut out[PLANES * SQUARES..];
        for k in 0..5 {
            s[k] = f32::from(self.hand[mi][k]) / 5.0;
            s[5 + k] = f32::from(self.hand[oi][k]) / 5.0;
        }
        let sign = if mi == 0 { 1 } else { -1 };
        s[10] = f32::from(u8::from(self.in_placement()));
        s[11] = f32::from(self.extracted[mi]) / 5.0;
        s[12] = f32::from(self.extracted[oi]) / 5.0;
        s[13] = (self.extraction_total[mi] - self.extraction_total[oi]) as f32 / 10.0;
        s[14] = (sign * self.placement_score) as f32 / 10.0;
        s[15] = (sign * self.region_score()) as f32 / 10.0;
        s[16] = f32::from(u8::from(mi == 0));
        s[17] = f32::from(u8::from(self.at_turn_start()));
        s[18] = f32::from(self.placed[mi]) / 25.0;
        s[19] = my_count as f32 / 50.0;
        s[20] = opp_count as f32 / 50.0;
        s[21] = my_squares.count_ones() as f32 / 49.0;
        s[22] = opp_squares.count_ones() as f32 / 49.0;
    }

    fn action_index(action: &Action) -> Option<usize> {
        Some(match *action {
            Action::Square(s) => s as usize,
            Action::Piece(k, r) => SQUARES + 4 * (k as usize) + r as usize,
        })
    }
}

/// The action with policy index `i` (the inverse of [`Features::action_index`]).
pub fn action_at(i: usize) -> Option<Action> {
    if i < SQUARES {
        Some(Action::Square(i as u8))
    } else if i < SQUARES + 20 {
        let j = i - SQUARES;
        let kind = Kind::ALL[j / 4];
        let rot = (j % 4) as u8;
        (rot < kind.rotations()).then_some(Action::Piece(kind, rot))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_doc_states_the_encoders_counts() {
        let doc = LAYOUT_DOC.split_whitespace().collect::<Vec<_>>().join(" ");
        let v = BattleNumber::FEATURE_VERSION;
        assert!(doc.contains(&format!("(version {v})")), "{doc}");
        assert!(doc.contains(&format!("{PLANES} planes of {SQUARES} squares")), "{doc}");
        assert!(doc.contains(&format!("then {SCALARS} scalars")), "{doc}");
        assert!(doc.contains(&format!("policy head, {} entries)", BattleNumber::POLICY_LEN)), "{doc}");
    }

    #[test]
    fn action_index_round_trips_and_is_dense() {
        let mut seen = std::collections::HashSet::new();
        for i in 0..BattleNumber::POLICY_LEN {
            if let Some(a) = action_at(i) {
                assert_eq!(BattleNumber::action_index(&a), Some(i));
                assert!(seen.insert(i));
            }
        }
        // 49 squares + 4 + 2 + 4 + 4 + 1 distinct pieces.
        assert_eq!(seen.len(), 49 + 15);
        assert_eq!(action_at(BattleNumber::POLICY_LEN), None);
    }

    #[test]
    fn features_follow_the_mover() {
        // Whole random games, so both phases and the last placements are covered.
        let (mut at_end, mut opp_empty) = (0, 0);
        for seed in 0..30 {
            let mut rng = crate::rng_from_seed(seed);
            let mut g = BattleNumber::new_game(&Default::default());
            let mut buf = vec![0.0; BattleNumber::FEATURE_LEN];
            let mut actions = Vec::new();
            let mut plies = 0;
            while g.outcome().is_none() && plies < 400 {
                g.encode_features(&mut buf);
                assert!(buf.iter().all(|x| x.is_finite()));
                let me = g.perspective();
                // The mover's own piece planes hold exactly its pieces.
                let own: usize = buf[..5 * SQUARES].iter().filter(|&&x| x == 1.0).count();
                assert_eq!(own as u32, g.pieces_of(me).count_ones());
                let opp: usize = buf[5 * SQUARES..10 * SQUARES].iter().filter(|&&x| x == 1.0).count();
                assert_eq!(opp as u32, g.pieces_of(me.other()).count_ones());
                assert_eq!(buf[PLANES * SQUARES + 16], if me == Seat::First { 1.0 } else { 0.0 });
                // Every legal square click is marked in plane 15.
                g.legal_actions(&mut actions);
                for a in &actions {
                    if let Action::Square(s) = a {
                        assert_eq!(buf[15 * SQUARES + *s as usize], 1.0);
                    }
                }
                // At a turn start in the placement phase, the mover's count of placements is the
                // number of (square click, piece click) sequences the rules allow.
                if g.in_placement() && g.at_turn_start() {
                    let mut sequences = 0;
                    let mut second = Vec::new();
                    for a in &actions {
                        let mut h = g.clone();
                        h.play(*a).unwrap();
                        h.legal_actions(&mut second);
                        sequences += second.len();
                    }
                    assert_eq!((buf[PLANES * SQUARES + 19] * 50.0).round(), sequences as f32);
                    // Plane 19 is where the opponent could click, were it its turn now.
                    let mut h = g.clone();
                    h.mover = me.other();
                    let theirs = if h.placed[h.mover.index()] < super::super::PLACEMENTS[h.mover.index()] {
                        h.legal_square_clicks()
                    } else {
                        0
                    };
                    for sq in 0..SQUARES {
                        assert_eq!(
                            buf[19 * SQUARES + sq],
                            if theirs >> sq & 1 == 1 { 1.0 } else { 0.0 },
                            "square {sq}"
                        );
                    }
                    assert_eq!((buf[PLANES * SQUARES + 22] * 49.0).round(), theirs.count_ones() as f32);
                }
                if g.in_placement() && g.at_turn_start() && buf[PLANES * SQUARES + 20] == 0.0 {
                    opp_empty += 1;
                }
                let a = actions[rand::RngExt::random_range(&mut rng, 0..actions.len())];
                g.play(a).unwrap();
                plies += 1;
            }
            at_end += usize::from(g.outcome().is_some());
        }
        assert_eq!(at_end, 30, "every game played to its end");
        // Some positions leave the opponent without a placement: the case the features are for.
        assert!(opp_empty > 0);
    }

    #[test]
    fn a_symmetric_images_features_policy_and_ownership_are_the_mapped_ones() {
        use crate::battlenumber::symmetry::Symmetry;
        let (f, o) = (BattleNumber::FEATURE_LEN, BattleNumber::OWNERSHIP_LEN);
        let (mut x, mut y, mut mapped) = (vec![0.0; f], vec![0.0; f], vec![0.0; f]);
        let (mut own, mut own_img, mut own_mapped) = (vec![0i8; o], vec![0i8; o], vec![0i8; o]);
        let mut actions = Vec::new();
        let mut policy_seen = std::collections::HashSet::new();
        for seed in 0..10 {
            let mut rng = crate::rng_from_seed(100 + seed);
            let mut g = BattleNumber::new_game(&Default::default());
            while g.outcome().is_none() {
                g.encode_features(&mut x);
                g.legal_actions(&mut actions);
                for (i, s) in Symmetry::ALL.iter().enumerate() {
                    let h = s.position(&g);
                    h.encode_features(&mut y);
                    BattleNumber::map_features(i, &x, &mut mapped);
                    assert_eq!(mapped, y, "{s:?}: features of the image = mapped features");
                    for a in &actions {
                        let j = BattleNumber::action_index(a).unwrap();
                        let want = BattleNumber::action_index(&s.action(*a)).unwrap();
                        assert_eq!(BattleNumber::map_policy_index(i, j), want, "{s:?} {a}");
                        policy_seen.insert(j);
                    }
                    g.ownership(g.perspective(), &mut own);
                    h.ownership(h.perspective(), &mut own_img);
                    BattleNumber::map_ownership(i, &own, &mut own_mapped);
                    assert_eq!(own_mapped, own_img, "{s:?}: ownership");
                }
                let a = actions[rand::RngExt::random_range(&mut rng, 0..actions.len())];
                g.play(a).unwrap();
            }
        }
        // Every click kind was checked (all squares, all 15 pieces).
        assert_eq!(policy_seen.len(), 49 + 15);
        // The maps are permutations of the policy entries.
        for i in 0..BattleNumber::SYMMETRIES {
            let mut img: Vec<usize> =
                (0..BattleNumber::POLICY_LEN).map(|j| BattleNumber::map_policy_index(i, j)).collect();
            img.sort_unstable();
            assert_eq!(img, (0..BattleNumber::POLICY_LEN).collect::<Vec<_>>());
        }
    }

    #[test]
    fn ownership_is_each_seats_pieces_and_negates_between_seats() {
        let mut rng = crate::rng_from_seed(7);
        let mut g = BattleNumber::new_game(&Default::default());
        let mut actions = Vec::new();
        while g.outcome().is_none() {
            g.legal_actions(&mut actions);
            g.play(actions[rand::RngExt::random_range(&mut rng, 0..actions.len())]).unwrap();
        }
        let (mut first, mut second) = ([0i8; SQUARES], [0i8; SQUARES]);
        g.ownership(Seat::First, &mut first);
        g.ownership(Seat::Second, &mut second);
        for sq in 0..SQUARES {
            let want = match g.piece(sq as u8) {
                Some(p) if p.owner == Seat::First => 1,
                Some(_) => -1,
                None => 0,
            };
            assert_eq!(first[sq], want, "square {sq}");
            assert_eq!(second[sq], -want, "square {sq}");
        }
        assert!(first.iter().any(|&o| o != 0));
    }
}
