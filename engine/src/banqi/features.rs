//! Banqi's network encoding ([`Features`]).
//!
//! The layout below is also `LAYOUT_DOC`, which docs/model-format.md is generated from.
//!
#![doc = include_str!("features.md")]

use super::{Action, Banqi, Colour, EMPTY, FACE_DOWN, Kind, NO_PROGRESS_LIMIT, SQUARES};
use crate::features::Features;
use crate::game::Seat;

const PLANES: usize = 17;
const SCALARS: usize = 19;
/// The feature layout as Markdown (this module's documentation; docs/model-format.md is
/// generated from it).
pub const LAYOUT_DOC: &str = include_str!("features.md");

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

#[cfg(test)]
mod layout_tests {
    use super::*;

    #[test]
    fn layout_doc_states_the_encoders_counts() {
        let doc = LAYOUT_DOC.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(doc.contains(&format!("(version {})", Banqi::FEATURE_VERSION)), "{doc}");
        assert!(doc.contains(&format!("{PLANES} planes of {SQUARES} squares")), "{doc}");
        assert!(doc.contains(&format!("then {SCALARS} scalars")), "{doc}");
        assert!(doc.contains("(policy head, 1,024 entries)") && Banqi::POLICY_LEN == 1024, "{doc}");
    }
}
