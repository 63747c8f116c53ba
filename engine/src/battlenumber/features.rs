//! Battle Number's network encoding ([`Features`]).
//!
//! # Features (version 1), from the mover's view
//!
//! 19 planes of 49 squares (index `plane · 49 + square`, square = row · 7 + column), then 19
//! scalars:
//!
//! | planes | meaning |
//! |---|---|
//! | 0–4 | the mover's pieces by kind (S1, D2, C2, T3, X0) |
//! | 5–9 | the opponent's pieces by kind |
//! | 10–13 | squares whose piece has a solid edge on side N, E, S, W |
//! | 14 | empty squares |
//! | 15 | the squares the mover may click now |
//! | 16 | the chosen placement square (mid-placement) |
//! | 17 | the squares of the extraction path so far |
//! | 18 | the square the extraction path is on |
//!
//! | scalar | meaning |
//! |---|---|
//! | 0–4 | the mover's hand by kind, ÷ 5 |
//! | 5–9 | the opponent's hand by kind, ÷ 5 |
//! | 10 | 1 in the placement phase |
//! | 11, 12 | extractions made by the mover, by the opponent, ÷ 5 |
//! | 13 | extraction totals, mover − opponent, ÷ 10 |
//! | 14 | the placement score from the mover's view, ÷ 10 (0 until the board fills) |
//! | 15 | the region score of the board as it stands, mover's view, ÷ 10 |
//! | 16 | 1 if the mover is the first seat |
//! | 17 | 1 at the start of a turn (nothing chosen yet) |
//! | 18 | placements made by the mover, ÷ 25 |
//!
//! # Action index (policy head, 69 entries)
//! `Square(s)` → `s` (0–48); `Piece(kind, rot)` → `49 + 4 · kind + rot` (49–68).

use super::{Action, BattleNumber, Kind, SQUARES, bitboard::Squares};
use crate::features::Features;
use crate::game::Game;

const PLANES: usize = 19;
const SCALARS: usize = 19;

fn plane(out: &mut [f32], p: usize, mask: u64) {
    for sq in Squares(mask) {
        out[p * SQUARES + sq as usize] = 1.0;
    }
}

impl Features for BattleNumber {
    const FEATURE_VERSION: u32 = 1;
    const FEATURE_LEN: usize = PLANES * SQUARES + SCALARS;
    const POLICY_LEN: usize = SQUARES + 20;

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
    use crate::game::Seat;

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
        let mut rng = crate::rng_from_seed(7);
        let mut g = BattleNumber::new_game(&Default::default());
        let mut buf = vec![0.0; BattleNumber::FEATURE_LEN];
        let mut actions = Vec::new();
        let mut plies = 0;
        while g.outcome().is_none() && plies < 40 {
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
            let a = actions[rand::RngExt::random_range(&mut rng, 0..actions.len())];
            g.play(a).unwrap();
            plies += 1;
        }
    }
}
