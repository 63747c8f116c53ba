//! TriGolden's network encoding ([`Features`]).
//!
//! TriGolden has no board grid: pieces go anywhere an opponent edge leads, at exact
//! coordinates. The encoding is therefore not a picture but the vocabulary the user's own AI
//! searches with (rules §7), counted from the incremental tracker: stock, scores, methods,
//! edge states, and the single, double and co-live links of both players. These are what
//! decide the game: points come from single and double links, and a player left without a
//! co-live pair loses by arbitration.
//!
//! The layout below is also `LAYOUT_DOC`, which docs/model-format.md is generated from.
//!
#![doc = include_str!("features.md")]
//!
//! Reading the links costs about 0.1 ms on a new position (the tracker works out each target
//! piece's pairs once), so the trainer encodes TriGolden positions once, when it loads them
//! ([`Features::ENCODE_ON_LOAD`]).

use super::tracker::EdgeState;
use super::{Action, TriGolden};
use crate::features::Features;
use crate::game::Seat;

const LEN: usize = 56;
/// The feature layout as Markdown (this module's documentation; docs/model-format.md is
/// generated from it).
pub const LAYOUT_DOC: &str = include_str!("features.md");

/// Counts of one player's single or double links: how many, the best net points, how many
/// score, the sum of positive net points.
#[derive(Default)]
struct LinkStats {
    count: f32,
    best: f32,
    scoring: f32,
    positive: f32,
}

impl LinkStats {
    fn add(&mut self, net: i32) {
        let first = self.count == 0.0;
        self.count += 1.0;
        let n = net as f32;
        self.best = if first { n } else { self.best.max(n) };
        if net > 0 {
            self.scoring += 1.0;
            self.positive += n;
        }
    }
}

fn edge_slot(s: EdgeState) -> usize {
    match s {
        EdgeState::Live => 0,
        EdgeState::Glued => 1,
        EdgeState::Poked => 2,
        EdgeState::Clamped => 3,
        EdgeState::Suffocated => 4,
    }
}

impl Features for TriGolden {
    const FEATURE_VERSION: u32 = 1;
    const FEATURE_LEN: usize = LEN;
    const POLICY_LEN: usize = 0;
    const ENCODE_ON_LOAD: bool = true;

    fn encode_features(&self, out: &mut [f32]) {
        assert_eq!(out.len(), Self::FEATURE_LEN, "feature buffer length");
        out.fill(0.0);
        let me = self.mover();
        let op = me.other();
        let (m, o) = (me.index(), op.index());
        // Index 0 for the mover, 1 for the opponent.
        let side = |s: Seat| usize::from(s != me);

        out[0] = if me == Seat::First { 1.0 } else { 0.0 };
        out[1] = f32::from(self.turn) / f32::from(self.total_turns.max(1));
        out[2] = if self.mid { 1.0 } else { 0.0 };
        out[3] = if self.is_single_turn() { 1.0 } else { 0.0 };
        let diff = (self.scores[m] - self.scores[o]) as f32;
        out[4] = diff / 10.0;
        out[5] = (diff / 6.0).tanh();
        out[6] = self.scores[m] as f32 / 20.0;
        out[7] = self.scores[o] as f32 / 20.0;

        let shapes = &self.options.shapes.shapes;
        let per_player: f32 = shapes.iter().map(|s| f32::from(s.count)).sum::<f32>().max(1.0);
        for (i, s) in shapes.iter().enumerate().take(8) {
            let count = f32::from(s.count.max(1));
            out[8 + i] = f32::from(self.stock[m][i]) / count;
            out[16 + i] = f32::from(self.stock[o][i]) / count;
        }
        out[24] = self.stock[m].iter().map(|&n| f32::from(n)).sum::<f32>() / per_player;
        out[25] = self.stock[o].iter().map(|&n| f32::from(n)).sum::<f32>() / per_player;

        // Methods each player can use now, and the pieces they can attach to.
        let mut methods = [0f32; 2];
        // Bitsets over piece indices (a target is a `u8`, so 256 bits cover any shape table),
        // so that encoding allocates nothing here.
        let mut targets = [[0u64; 4]; 2];
        for meth in self.tracker.methods() {
            let t = usize::from(meth.place.target);
            let user = self.pieces[t].owner.other();
            if self.stock[user.index()][usize::from(meth.place.shape)] > 0 {
                methods[side(user)] += 1.0;
                targets[side(user)][t / 64] |= 1 << (t % 64);
            }
        }
        out[26] = methods[0] / 64.0;
        out[27] = methods[1] / 64.0;
        let count = |bits: &[u64; 4]| bits.iter().map(|w| w.count_ones()).sum::<u32>() as f32;
        out[28] = count(&targets[0]) / 16.0;
        out[29] = count(&targets[1]) / 16.0;

        for (piece, states) in self.pieces.iter().zip(self.edge_states()) {
            let base = 30 + 5 * side(piece.owner);
            for s in states {
                out[base + edge_slot(s)] += 1.0 / 32.0;
            }
        }

        let links = self.links();
        let owner_of = |target: u8| self.pieces[usize::from(target)].owner.other();
        let net = |pts: [i32; 2], s: Seat| pts[s.index()] - pts[s.other().index()];
        let mut singles = [LinkStats::default(), LinkStats::default()];
        for (place, pts) in &links.single {
            let s = owner_of(place.target);
            singles[side(s)].add(net(*pts, s));
        }
        let mut doubles = [LinkStats::default(), LinkStats::default()];
        for (place, _, pts) in &links.double {
            let s = owner_of(place.target);
            doubles[side(s)].add(net(*pts, s));
        }
        let mut co_live = [0f32; 2];
        for (place, _) in &links.co_live {
            co_live[side(owner_of(place.target))] += 1.0;
        }
        for (k, st) in singles.iter().enumerate() {
            let b = 40 + 4 * k;
            out[b] = st.count / 16.0;
            out[b + 1] = st.best / 5.0;
            out[b + 2] = st.scoring / 8.0;
            out[b + 3] = st.positive / 10.0;
        }
        for (k, st) in doubles.iter().enumerate() {
            let b = 48 + 3 * k;
            out[b] = st.count / 16.0;
            out[b + 1] = st.best / 5.0;
            out[b + 2] = st.scoring / 8.0;
        }
        out[54] = co_live[0] / 32.0;
        out[55] = co_live[1] / 32.0;
    }

    fn action_index(_: &Action) -> Option<usize> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Game;
    use rand::RngExt;

    #[test]
    fn layout_doc_states_the_encoders_counts() {
        let doc = LAYOUT_DOC.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(doc.contains(&format!("(version {})", TriGolden::FEATURE_VERSION)), "{doc}");
        assert!(doc.contains(&format!("{} scalars", TriGolden::FEATURE_LEN)), "{doc}");
        // The table's last row is the last index.
        assert!(doc.contains(&format!("| {} |", TriGolden::FEATURE_LEN - 1)), "{doc}");
    }

    fn encode(g: &TriGolden) -> Vec<f32> {
        let mut x = vec![f32::NAN; TriGolden::FEATURE_LEN];
        g.encode_features(&mut x);
        x
    }

    #[test]
    fn the_opening_position_is_encoded_from_the_first_players_view() {
        let g = TriGolden::new_game(&Default::default());
        let x = encode(&g);
        assert_eq!(x[0], 1.0, "the first player moves first");
        assert_eq!(x[3], 1.0, "the opening is a single-piece turn");
        assert_eq!(
            (x[8], x[9], x[10], x[11]),
            (1.0, 1.0, 1.0, 0.0),
            "full stock of the three default shapes"
        );
        assert_eq!((x[24], x[25]), (1.0, 1.0));
        assert!(x[26..].iter().all(|&v| v == 0.0), "no pieces, no methods or links: {:?}", &x[26..]);
    }

    #[test]
    fn random_games_give_finite_features_that_follow_the_position() {
        let mut rng = crate::rng_from_seed(11);
        let mut actions = Vec::new();
        for _ in 0..3 {
            let mut g = TriGolden::new_game(&Default::default());
            while g.outcome().is_none() {
                let x = encode(&g);
                assert!(x.iter().all(|v| v.is_finite()), "{x:?}");
                let me = g.mover();
                assert_eq!(x[0], if me == Seat::First { 1.0 } else { 0.0 });
                assert_eq!(x[2], if g.at_turn_start() { 0.0 } else { 1.0 });
                let s = g.scores();
                assert_eq!(x[4], (s[me.index()] - s[me.other().index()]) as f32 / 10.0);
                // Edge counts: every piece's four edges, each counted once.
                let edges: f32 = x[30..40].iter().sum::<f32>() * 32.0;
                assert!((edges - 4.0 * g.pieces().len() as f32).abs() < 1e-3, "{edges}");
                // A player to move at a turn start has a co-live pair, or the game was over.
                if g.at_turn_start() && !g.is_single_turn() {
                    assert!(x[54] > 0.0, "the mover has a co-live pair at a two-piece turn start");
                }
                g.legal_actions(&mut actions);
                let a = actions[rng.random_range(0..actions.len())];
                g.play_unchecked(a);
            }
        }
    }

    #[test]
    fn encoding_is_a_function_of_the_position() {
        // The same position reached through a decode (a fresh tracker) encodes the same.
        let mut rng = crate::rng_from_seed(5);
        let mut g = TriGolden::new_game(&Default::default());
        let mut actions = Vec::new();
        for _ in 0..12 {
            g.legal_actions(&mut actions);
            g.play_unchecked(actions[rng.random_range(0..actions.len())]);
        }
        let again = TriGolden::decode(&crate::game::to_bytes(&g)).unwrap();
        assert_eq!(encode(&g), encode(&again));
    }
}
