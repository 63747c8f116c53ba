//! The toy game's network encoding: 18 floats, the mover's squares then the opponent's
//! (row by row, `a1` first); the policy is over the 9 squares.

use super::{Action, SQUARES, Toy};
use crate::features::Features;

impl Features for Toy {
    const FEATURE_VERSION: u32 = 1;
    const FEATURE_LEN: usize = 2 * SQUARES;
    const POLICY_LEN: usize = SQUARES;

    fn encode_features(&self, out: &mut [f32]) {
        assert_eq!(out.len(), Self::FEATURE_LEN, "feature buffer length");
        out.fill(0.0);
        let me = self.perspective();
        for sq in 0..SQUARES {
            if let Some(s) = self.square(sq) {
                out[if s == me { sq } else { SQUARES + sq }] = 1.0;
            }
        }
    }

    fn action_index(action: &Action) -> Option<usize> {
        Some(usize::from(action.0))
    }
}
