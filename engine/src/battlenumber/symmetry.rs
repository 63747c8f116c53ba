//! The eight symmetries of Battle Number's square board (the dihedral group D4).
//!
//! Every rule is stated in terms of sides and solid edges: where a piece may go, how it
//! moves (towards its solid edges, a Corner Two along the diagonal between its two), which
//! regions form and what scores. Turning or mirroring the whole board therefore maps a
//! position to one that plays exactly alike: the same legal clicks (mapped), the same
//! outcome, the same score. A piece stays of its kind; its rotation becomes the one whose
//! solid edges are the mapped edges (every kind's shape is closed under mirroring).
//!
//! The trainer uses this to show the network each stored position under a random symmetry
//! (AlphaGo Zero's augmentation): eight labelled views of a position for the price of one
//! game, which counters the network memorising each game's shared result
//! ([`crate::Features::symmetries`]). The property tests check that the mapped position's
//! features are the mapped features, and that a game and its mirror image play alike.

use super::{Action, BattleNumber, Kind, Pending, Piece, SQUARES, bitboard::Squares};

/// One of the eight symmetries: `0..8`, 0 the identity. Bit 2 mirrors the columns
/// (column `c` → `6 − c`) first; bits 0–1 then turn the board that many quarter turns
/// clockwise.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Symmetry(u8);

impl Symmetry {
    /// All eight, the identity first.
    pub const ALL: [Symmetry; 8] = [
        Symmetry(0),
        Symmetry(1),
        Symmetry(2),
        Symmetry(3),
        Symmetry(4),
        Symmetry(5),
        Symmetry(6),
        Symmetry(7),
    ];

    /// The symmetry with index `i`.
    ///
    /// # Panics
    /// If `i >= 8`.
    pub fn new(i: usize) -> Symmetry {
        assert!(i < 8, "symmetry index {i} is not in 0..8");
        Symmetry(i as u8)
    }

    fn mirrors(self) -> bool {
        self.0 & 4 != 0
    }

    fn turns(self) -> u8 {
        self.0 & 3
    }

    /// The image of square `sq`.
    pub fn square(self, sq: u8) -> u8 {
        let (mut r, mut c) = (sq / 7, sq % 7);
        if self.mirrors() {
            c = 6 - c;
        }
        for _ in 0..self.turns() {
            // A clockwise quarter turn: (r, c) -> (c, 6 - r).
            (r, c) = (c, 6 - r);
        }
        r * 7 + c
    }

    /// The image of a set of squares.
    pub fn squares(self, mask: u64) -> u64 {
        Squares(mask).fold(0, |m, sq| m | 1u64 << self.square(sq))
    }

    /// The image of side `d` (N = 0, E = 1, S = 2, W = 3).
    pub fn side(self, d: usize) -> usize {
        // The mirror swaps E and W; a clockwise turn takes N to E, E to S, ...
        let d = if self.mirrors() && d % 2 == 1 { 4 - d } else { d };
        (d + self.turns() as usize) % 4
    }

    /// The rotation of a `kind` piece whose solid edges are the images of `rot`'s.
    pub fn rotation(self, kind: Kind, rot: u8) -> u8 {
        let sides = kind.solid_sides(rot);
        let mapped = (0..4).filter(|d| sides & (1 << d) != 0).fold(0u8, |m, d| m | 1 << self.side(d));
        (0..kind.rotations())
            .find(|&r| kind.solid_sides(r) == mapped)
            .expect("every kind's shape is closed under the board's symmetries")
    }

    /// The image of a click.
    pub fn action(self, a: Action) -> Action {
        match a {
            Action::Square(s) => Action::Square(self.square(s)),
            Action::Piece(k, r) => Action::Piece(k, self.rotation(k, r)),
        }
    }

    /// The image of a whole position (pieces, pending clicks; counters and scores are
    /// unchanged, since the symmetry preserves every region).
    pub fn position(self, g: &BattleNumber) -> BattleNumber {
        let mut out = BattleNumber::empty_state(g.opts);
        for sq in 0..SQUARES as u8 {
            if let Some(p) = g.piece(sq) {
                out.put(self.square(sq), Piece { rot: self.rotation(p.kind, p.rot), ..p });
            }
        }
        out.hand = g.hand;
        out.placed = g.placed;
        out.extracted = g.extracted;
        out.mover = g.mover;
        out.pending = match g.pending {
            Pending::None => Pending::None,
            Pending::Square(s) => Pending::Square(self.square(s)),
            Pending::Path { cur, visited } => {
                Pending::Path { cur: self.square(cur), visited: self.squares(visited) }
            }
        };
        out.placement_score = g.placement_score;
        out.extraction_total = g.extraction_total;
        out.outcome = g.outcome;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Game;
    use rand::RngExt;

    #[test]
    fn the_eight_maps_are_distinct_bijections_and_the_identity_is_first() {
        let mut images = std::collections::HashSet::new();
        for s in Symmetry::ALL {
            let img: Vec<u8> = (0..SQUARES as u8).map(|sq| s.square(sq)).collect();
            let mut sorted = img.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..SQUARES as u8).collect::<Vec<_>>(), "{s:?} is a bijection");
            assert_eq!(s.square(24), 24, "the centre stays");
            assert!(images.insert(img), "{s:?} differs from the others");
        }
        assert!((0..SQUARES as u8).all(|sq| Symmetry::ALL[0].square(sq) == sq));
        // Side images agree with square images: the neighbour across side d maps to the
        // neighbour across side(d).
        for s in Symmetry::ALL {
            let (r, c) = (3i32, 3i32);
            for (d, (dr, dc)) in [(-1, 0), (0, 1), (1, 0), (0, -1)].into_iter().enumerate() {
                let nb = ((r + dr) * 7 + c + dc) as u8;
                let img = s.square(nb) as i32;
                let want = [(-1, 0), (0, 1), (1, 0), (0, -1)][s.side(d)];
                assert_eq!((img / 7 - 3, img % 7 - 3), want, "{s:?} side {d}");
            }
        }
    }

    #[test]
    fn a_game_and_its_images_play_alike() {
        let mut actions = Vec::new();
        let mut mapped = Vec::new();
        for seed in 0..12 {
            let mut rng = crate::rng_from_seed(seed);
            let mut g = BattleNumber::new_game(&Default::default());
            let mut images: Vec<BattleNumber> = Symmetry::ALL.iter().map(|s| s.position(&g)).collect();
            while g.outcome().is_none() {
                g.legal_actions(&mut actions);
                for (s, h) in Symmetry::ALL.iter().zip(&images) {
                    assert_eq!(*h, s.position(&g), "{s:?}: the mapped game is the mapped position");
                    h.legal_actions(&mut mapped);
                    let mut want: Vec<Action> = actions.iter().map(|&a| s.action(a)).collect();
                    want.sort_unstable();
                    mapped.sort_unstable();
                    assert_eq!(mapped, want, "{s:?}: the legal clicks map");
                }
                let a = actions[rng.random_range(0..actions.len())];
                g.play(a).unwrap();
                for (s, h) in Symmetry::ALL.iter().zip(images.iter_mut()) {
                    h.play(s.action(a)).unwrap();
                    assert_eq!(h.bitboards(), h.recomputed_bitboards());
                }
            }
            for h in &images {
                assert_eq!(h.outcome(), g.outcome());
                assert_eq!(h.score_first(), g.score_first());
            }
        }
    }
}
