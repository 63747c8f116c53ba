//! Feature encodings: what a neural network sees of a position, and the fixed action index
//! its policy head predicts over.
//!
//! This is the one source of truth for every game's network input. The trainer encodes stored
//! positions with it, and the worker and play server encode search leaves with it, so the two
//! cannot drift apart. Each encoder carries a [`Features::FEATURE_VERSION`], stamped into
//! Parquet metadata and into every model file; a model whose version differs from the
//! engine's is refused when it is loaded.
//!
//! Positions are encoded from the view of the seat to move (the "mover"): its pieces come
//! first, scores are its own minus the opponent's, and the network's value is from its view.
//! One network then serves both seats.

use crate::game::{Actor, Game, Seat};

/// A game with a network encoding.
pub trait Features: Game {
    /// Version of this encoding: bump it whenever [`Features::encode_features`],
    /// [`Features::FEATURE_LEN`], [`Features::POLICY_LEN`] or [`Features::action_index`]
    /// change meaning.
    const FEATURE_VERSION: u32;
    /// Length of the feature vector.
    const FEATURE_LEN: usize;
    /// Size of the fixed action space the policy head predicts over; 0 if the game has none.
    const POLICY_LEN: usize;
    /// Encoding a position is costly next to a training step (it reads derived state that a
    /// decoded position must first rebuild): the trainer then encodes each stored position
    /// once, when it loads it, instead of once per batch.
    const ENCODE_ON_LOAD: bool = false;
    /// Length of the final-position ownership target an auxiliary head may learn (KataGo's
    /// ownership head): one entry per square, 0 if the game defines none. An auxiliary
    /// target gives every position of a game many labels instead of one result.
    const OWNERSHIP_LEN: usize = 0;

    /// How many board symmetries the rules are invariant under, the identity included (1:
    /// none declared). Symmetry `i` in `0..SYMMETRIES` maps every position to one that plays
    /// exactly alike (the same outcome, its legal actions mapped one to one), so a stored
    /// position with its targets mapped by [`Features::map_features`],
    /// [`Features::map_policy_index`] and [`Features::map_ownership`] is another correct
    /// training sample. Symmetry 0 is the identity.
    const SYMMETRIES: usize = 1;

    /// Writes into `out` the features of symmetry `sym`'s image of a position whose features
    /// are `features`. The default (no symmetries) copies them.
    ///
    /// # Panics
    /// If `sym >= SYMMETRIES` or either slice's length is not [`Features::FEATURE_LEN`].
    fn map_features(sym: usize, features: &[f32], out: &mut [f32]) {
        assert!(sym < Self::SYMMETRIES, "symmetry {sym} of {}", Self::SYMMETRIES);
        out.copy_from_slice(features);
    }

    /// The policy index, in symmetry `sym`'s image of a position, of the action with policy
    /// index `index` in the position. The default (no symmetries) returns `index`.
    ///
    /// # Panics
    /// If `sym >= SYMMETRIES` or `index >= POLICY_LEN`.
    fn map_policy_index(sym: usize, index: usize) -> usize {
        assert!(sym < Self::SYMMETRIES && index < Self::POLICY_LEN.max(1), "symmetry {sym}, index {index}");
        index
    }

    /// Writes into `out` the ownership target of symmetry `sym`'s image of a position whose
    /// target is `ownership`. The default (no symmetries) copies it.
    ///
    /// # Panics
    /// If `sym >= SYMMETRIES` or either slice's length is not [`Features::OWNERSHIP_LEN`].
    fn map_ownership(sym: usize, ownership: &[i8], out: &mut [i8]) {
        assert!(sym < Self::SYMMETRIES, "symmetry {sym} of {}", Self::SYMMETRIES);
        out.copy_from_slice(ownership);
    }

    /// Writes the features of this position into `out`, from the view of
    /// [`Features::perspective`].
    ///
    /// # Panics
    /// If `out.len() != Self::FEATURE_LEN`.
    fn encode_features(&self, out: &mut [f32]);

    /// The index of `action` in the policy head's output, `< POLICY_LEN`, or `None` where
    /// the game has no fixed action space.
    fn action_index(action: &Self::Action) -> Option<usize>;

    /// Writes the ownership of this position, a finished game, from `seat`'s view into `out`:
    /// per square `1` where `seat` holds it, `-1` where the opponent does, `0` where nobody
    /// does. The default (no ownership target) writes nothing.
    ///
    /// # Panics
    /// If `out.len() != Self::OWNERSHIP_LEN`.
    fn ownership(&self, seat: Seat, out: &mut [i8]) {
        assert_eq!(out.len(), Self::OWNERSHIP_LEN, "ownership buffer length");
        let _ = seat;
    }

    /// The seat whose view the features and the network's value take: the seat to move, or
    /// the first seat at a chance node or a finished position.
    fn perspective(&self) -> Seat {
        match self.to_move() {
            Actor::Player(s) => s,
            Actor::Chance => Seat::First,
        }
    }
}

/// A network's value head turned into the search's utility in `[-1, 1]`, from the view the
/// features were encoded from: `(1 − mix) · (P(win) − P(loss)) + mix · tanh(margin / (2 ·
/// score_scale))`. The margin term matches the terminal value the search gives finished
/// games (`2σ(d / score_scale) − 1 = tanh(d / (2 · score_scale))`), so leaf and terminal values
/// share a scale. `margin` is the predicted final score difference in points.
pub fn utility(wdl: [f32; 3], margin: f32, mix: f32, score_scale: f32) -> f32 {
    let m = mix.clamp(0.0, 1.0);
    let v = (1.0 - m) * (wdl[0] - wdl[2]) + m * (margin / (2.0 * score_scale.max(1e-3))).tanh();
    v.clamp(-1.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utility_mixes_and_clamps() {
        assert_eq!(utility([1.0, 0.0, 0.0], 0.0, 0.0, 3.0), 1.0);
        assert_eq!(utility([0.0, 0.0, 1.0], 0.0, 0.0, 3.0), -1.0);
        assert_eq!(utility([0.2, 0.6, 0.2], 0.0, 0.0, 3.0), 0.0);
        let v = utility([0.0, 1.0, 0.0], 6.0, 1.0, 3.0);
        assert!((v - 1f32.tanh()).abs() < 1e-6);
        let half = utility([1.0, 0.0, 0.0], -1e9, 0.5, 3.0);
        assert!(half.abs() < 1e-6, "{half}");
    }
}
