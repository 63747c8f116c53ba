//! Banqi's network encoding ([`Features`]).
//!
//! # Features (version 1), from the view of the seat to move
//!
//! At a chance node (a flip being resolved) the view is the flipping seat's. Before the first
//! flip no colour is anyone's; the encoding then treats red as the mover's (the pool is
//! symmetric, so nothing depends on it).
//!
//! 17 planes of 32 squares (index `plane · 32 + square`, square = row · 8 + column), then 19
//! scalars:
//!
//! | planes | meaning |
//! |---|---|
//! | 0–6 | the mover's face-up pieces by kind (G, A, E, R, H, C, S) |
//! | 7–13 | the opponent's face-up pieces by kind |
//! | 14 | face-down squares |
//! | 15 | empty squares |
//! | 16 | the square being flipped (chance node) |
//!
//! | scalar | meaning |
//! |---|---|
//! | 0–6 | the mover's face-down pieces by kind, ÷ the set's count of that kind |
//! | 7–13 | the opponent's face-down pieces by kind, ÷ the set's count |
//! | 14 | face-down pieces in all, ÷ 32 |
//! | 15 | plies since the last flip or capture, ÷ 60 |
//! | 16 | earlier occurrences of this position, ÷ 2 (a third draws) |
//! | 17 | 1 once colours are assigned |
//! | 18 | 1 at a chance node |
//!
//! # Action index (policy head, 1,024 entries)
//! `Move { from, to }` → `32 · from + to`; `Flip(s)` → `33 · s` (from = to, as the external
//! notation writes it). Reveals are chance outcomes and have no index.

use super::{Action, Banqi, Colour, EMPTY, FACE_DOWN, Kind, NO_PROGRESS_LIMIT, SQUARES};
use crate::features::Features;
use crate::game::Seat;

const PLANES: usize = 17;
const SCALARS: usize = 19;

impl Features for Banqi {
    const FEATURE_VERSION: u32 = 1;
    const FEATURE_LEN: usize = PLANES * SQUARES + SCALARS;
    const POLICY_LEN: usize = SQUARES * SQUARES;

    fn encode_features(&self, out: &mut [f32]) {
        assert_eq!(out.len(), Self::FEATURE_LEN, "feature buffer length");
        out.fill(0.0);
        let me = self.colour_of(self.side).unwrap_or(Colour::Red);
        let view = |colour: Colour| if colour == me { 0 } else { 7 };
        for s in 0..SQUARES {
            let c = self.board[s];
            let plane = match c {
                FACE_DOWN => 14,
                EMPTY => 15,
                c => view(Colour::from_index(c as usize / 7)) + c as usize % 7,
            };
            out[plane * SQUARES + s] = 1.0;
        }
        if let Some(p) = self.pending {
            out[16 * SQUARES + p as usize] = 1.0;
        }
        let sc = &mut out[PLANES * SQUARES..];
        for (code, &n) in self.pool.iter().enumerate() {
            let (colour, kind) = (Colour::from_index(code / 7), code % 7);
            sc[view(colour) + kind] = f32::from(n) / f32::from(Kind::COUNT[kind]);
        }
        sc[14] = self.pool_total() as f32 / SQUARES as f32;
        sc[15] = f32::from(self.quiet) / f32::from(NO_PROGRESS_LIMIT);
        sc[16] = (self.repetitions().saturating_sub(1)) as f32 / 2.0;
        sc[17] = if self.first_colour.is_some() { 1.0 } else { 0.0 };
        sc[18] = if self.pending.is_some() { 1.0 } else { 0.0 };
    }

    fn action_index(action: &Action) -> Option<usize> {
        match *action {
            Action::Flip(s) => Some(33 * s as usize),
            Action::Move { from, to } => Some(SQUARES * from as usize + to as usize),
            Action::Reveal(_) => None,
        }
    }

    fn perspective(&self) -> Seat {
        self.side
    }
}
