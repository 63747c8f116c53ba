//! Battle Number's network encoding ([`Features`]).
//!
//! The layout below is also `LAYOUT_DOC`, which docs/model-format.md is generated from.
//!
#![doc = include_str!("features.md")]

use super::{Action, BattleNumber, Kind, SQUARES, bitboard::Squares};
use crate::features::Features;
use crate::game::{Game, Seat};

const PLANES: usize = 20;
const SCALARS: usize = 23;
/// The feature layout as Markdown (this module's documentation; docs/model-format.md is
/// generated from it).
pub const LAYOUT_DOC: &str = include_str!("features.md");

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
