//! Banqi's network encoding ([`Features`]).
//!
//! The layout below is also `LAYOUT_DOC`, which docs/model-format.md is generated from.
//!
#![doc = include_str!("features.md")]

use super::{
    Action, Banqi, COLS, Colour, EMPTY, FACE_DOWN, Kind, NO_PROGRESS_LIMIT, PIECE_CODES, ROWS, SQUARES,
};
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
        self.active_features(|i, x| out[i] = x);
    }

    // The rules speak only of orthogonal steps and lines: mirroring the files (a ↔ h), the
    // ranks (0 ↔ 3), or both, maps every position to one that plays alike.
    const SYMMETRIES: usize = 4;

    fn map_features(sym: usize, features: &[f32], out: &mut [f32]) {
        assert!(sym < Self::SYMMETRIES, "symmetry {sym} of {}", Self::SYMMETRIES);
        assert_eq!(features.len(), Self::FEATURE_LEN, "feature buffer length");
        assert_eq!(out.len(), Self::FEATURE_LEN, "feature buffer length");
        // Every plane is per square; the scalars are counts: unchanged.
        for p in 0..PLANES {
            for sq in 0..SQUARES {
                out[p * SQUARES + mirror(sym, sq)] = features[p * SQUARES + sq];
            }
        }
        out[PLANES * SQUARES..].copy_from_slice(&features[PLANES * SQUARES..]);
    }

    fn map_policy_index(sym: usize, index: usize) -> usize {
        assert!(sym < Self::SYMMETRIES && index < Self::POLICY_LEN, "symmetry {sym}, index {index}");
        // `from · 32 + to` (a flip is from = to).
        mirror(sym, index / SQUARES) * SQUARES + mirror(sym, index % SQUARES)
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

impl Banqi {
    /// Calls `f(index, value)` for every input of [`Features::encode_features`] that is not
    /// zero, each index once: what a [`crate::shallow::ShallowNet`] sums (about 50 of the 563
    /// inputs), and the one definition the dense encoding is written from. They are
    /// [`Banqi::view_features`] for the mover's colour and [`Banqi::dynamic_features`].
    pub fn active_features(&self, mut f: impl FnMut(usize, f32)) {
        self.view_features(self.view(), &mut f);
        self.dynamic_features(f);
    }

    /// The colour whose view the features take: the mover's (red until colours are known).
    pub fn view(&self) -> Colour {
        self.colour_of(self.side).unwrap_or(Colour::Red)
    }

    /// The inputs that depend only on the board, the pool and the flip in progress, as seen
    /// by `me`: what a searcher keeps up to date from move to move for each colour's view
    /// ([`Banqi::view_feature_changes`]).
    pub fn view_features(&self, me: Colour, mut f: impl FnMut(usize, f32)) {
        for s in 0..SQUARES {
            f(plane(me, self.board[s]) * SQUARES + s, 1.0);
        }
        if let Some(p) = self.pending {
            f(16 * SQUARES + p as usize, 1.0);
        }
        for (code, &n) in self.pool.iter().enumerate() {
            if n > 0 {
                f(pool_input(me, code), f32::from(n) / f32::from(Kind::COUNT[code % 7]));
            }
        }
        let total = self.pool_total();
        if total > 0 {
            f(PLANES * SQUARES + 14, total as f32 / SQUARES as f32);
        }
    }

    /// The inputs that change on (nearly) every ply or not at all, added at each evaluation:
    /// the quiet-ply count, the repetitions, whether colours are known, a flip in progress.
    pub fn dynamic_features(&self, mut f: impl FnMut(usize, f32)) {
        let sc = PLANES * SQUARES;
        let mut scalar = |i: usize, x: f32| {
            if x != 0.0 {
                f(sc + i, x);
            }
        };
        scalar(15, f32::from(self.quiet) / f32::from(NO_PROGRESS_LIMIT));
        scalar(16, (self.repetitions().saturating_sub(1)) as f32 / 2.0);
        scalar(17, if self.first_colour.is_some() { 1.0 } else { 0.0 });
        scalar(18, if self.pending.is_some() { 1.0 } else { 0.0 });
    }

    /// Calls `f(index, change)` for the [`Banqi::view_features`] (as seen by `me`) that differ
    /// between `self` and `next`, the position after one action: for a move two squares, for
    /// a flip one square and the flip-in-progress input, for a reveal the square, the pool and
    /// its total. `view_features(next) = view_features(self) + the changes`.
    pub fn view_feature_changes(&self, next: &Banqi, me: Colour, mut f: impl FnMut(usize, f32)) {
        for s in 0..SQUARES {
            let (was, is) = (self.board[s], next.board[s]);
            if was != is {
                f(plane(me, was) * SQUARES + s, -1.0);
                f(plane(me, is) * SQUARES + s, 1.0);
            }
        }
        if self.pending != next.pending {
            if let Some(p) = self.pending {
                f(16 * SQUARES + p as usize, -1.0);
            }
            if let Some(p) = next.pending {
                f(16 * SQUARES + p as usize, 1.0);
            }
        }
        if self.pool != next.pool {
            for code in 0..PIECE_CODES {
                let d = i32::from(next.pool[code]) - i32::from(self.pool[code]);
                if d != 0 {
                    f(pool_input(me, code), d as f32 / f32::from(Kind::COUNT[code % 7]));
                }
            }
            let d = next.pool_total() as f32 - self.pool_total() as f32;
            f(PLANES * SQUARES + 14, d / SQUARES as f32);
        }
    }
}

/// The plane of a square's content as seen by `me`: own pieces 0–6, the enemy's 7–13, face
/// down 14, empty 15.
fn plane(me: Colour, cell: u8) -> usize {
    match cell {
        FACE_DOWN => 14,
        EMPTY => 15,
        c => {
            let own = Colour::from_index(c as usize / 7) == me;
            (if own { 0 } else { 7 }) + c as usize % 7
        }
    }
}

/// The input of a face-down pool count as seen by `me`.
fn pool_input(me: Colour, code: usize) -> usize {
    let own = Colour::from_index(code / 7) == me;
    PLANES * SQUARES + (if own { 0 } else { 7 }) + code % 7
}

/// Square `sq` under symmetry `sym`: bit 0 mirrors the files (a ↔ h), bit 1 the ranks.
pub fn mirror(sym: usize, sq: usize) -> usize {
    let (mut r, mut c) = (sq / COLS, sq % COLS);
    if sym & 1 != 0 {
        c = COLS - 1 - c;
    }
    if sym & 2 != 0 {
        r = ROWS - 1 - r;
    }
    r * COLS + c
}

/// A click under symmetry `sym` (a revealed piece is the same piece).
pub fn mirror_action(sym: usize, a: Action) -> Action {
    let m = |s: u8| mirror(sym, s as usize) as u8;
    match a {
        Action::Flip(s) => Action::Flip(m(s)),
        Action::Move { from, to } => Action::Move { from: m(from), to: m(to) },
        Action::Reveal(p) => Action::Reveal(p),
    }
}

#[cfg(test)]
mod layout_tests {
    use super::*;
    use crate::game::{Actor, Game};
    use rand::RngExt;

    /// A uniformly random legal action, or a reveal drawn from the pool at a chance node.
    fn random_action(g: &Banqi, chances: &mut Vec<(Action, f32)>, rng: &mut crate::Rng) -> Action {
        if g.to_move() == Actor::Chance {
            return crate::game::sample_chance(g, chances, rng);
        }
        let mut actions = Vec::new();
        g.legal_actions(&mut actions);
        actions[rng.random_range(0..actions.len())]
    }

    #[test]
    fn active_features_name_each_nonzero_input_once() {
        let mut chances = Vec::new();
        let mut checked = 0;
        for seed in 0..8 {
            let mut rng = crate::rng_from_seed(seed);
            let mut g = Banqi::new_game(&Default::default());
            while g.outcome().is_none() {
                let mut seen = vec![false; Banqi::FEATURE_LEN];
                g.active_features(|i, x| {
                    assert!(!seen[i], "input {i} named twice at {g}");
                    assert!(x != 0.0, "input {i} named with 0 at {g}");
                    seen[i] = true;
                });
                // One plane per square, so at least 32; the pool, counts and flags at most 19 more.
                let n = seen.iter().filter(|&&s| s).count();
                assert!((32..=32 + 1 + 19).contains(&n), "{n} active inputs at {g}");
                checked += 1;
                let a = random_action(&g, &mut chances, &mut rng);
                g.play(a).unwrap();
            }
        }
        assert!(checked > 500, "{checked} positions");
    }

    #[test]
    fn view_inputs_kept_up_to_date_equal_a_full_recomputation() {
        // Per view, the dense inputs summed from each action's changes, against the inputs of
        // the position reached, after every action (flips, reveals, moves, captures).
        let dense = |g: &Banqi, me: Colour| {
            let mut x = vec![0.0f32; Banqi::FEATURE_LEN];
            g.view_features(me, |i, v| x[i] += v);
            x
        };
        let mut chances = Vec::new();
        let mut steps = 0;
        for seed in 0..6 {
            let mut rng = crate::rng_from_seed(100 + seed);
            let mut g = Banqi::new_game(&Default::default());
            let mut kept = [dense(&g, Colour::Red), dense(&g, Colour::Black)];
            while g.outcome().is_none() {
                let a = random_action(&g, &mut chances, &mut rng);
                let mut next = g.clone();
                next.play(a).unwrap();
                for me in [Colour::Red, Colour::Black] {
                    g.view_feature_changes(&next, me, |i, v| kept[me.index()][i] += v);
                    let want = dense(&next, me);
                    for (i, (k, w)) in kept[me.index()].iter().zip(&want).enumerate() {
                        assert!(
                            (k - w).abs() < 1e-5,
                            "input {i} ({me:?}'s view): kept {k}, full {w} after {a:?} at {g}"
                        );
                    }
                }
                // The mover's view plus the dynamic inputs is the whole encoding.
                let mut enc = vec![0.0f32; Banqi::FEATURE_LEN];
                next.encode_features(&mut enc);
                let mut sum = dense(&next, next.view());
                next.dynamic_features(|i, v| sum[i] += v);
                assert_eq!(sum, enc);
                g = next;
                steps += 1;
            }
        }
        assert!(steps > 300, "{steps} actions");
    }

    #[test]
    fn a_game_and_its_mirror_images_play_alike_with_mapped_features_and_policy() {
        let (f, mut actions, mut mapped) = (Banqi::FEATURE_LEN, Vec::new(), Vec::new());
        let (mut x, mut y, mut want) = (vec![0.0; f], vec![0.0; f], vec![0.0; f]);
        let mut chances = Vec::new();
        let mut plies = 0;
        for seed in 0..16 {
            let mut rng = crate::rng_from_seed(seed);
            let mut g = Banqi::new_game(&Default::default());
            let mut images: Vec<Banqi> = (0..Banqi::SYMMETRIES).map(|_| g.clone()).collect();
            while g.outcome().is_none() {
                let a = if g.to_move() == Actor::Chance {
                    crate::game::sample_chance(&g, &mut chances, &mut rng)
                } else {
                    g.encode_features(&mut x);
                    g.legal_actions(&mut actions);
                    for (sym, h) in images.iter().enumerate() {
                        h.encode_features(&mut y);
                        Banqi::map_features(sym, &x, &mut want);
                        assert_eq!(y, want, "symmetry {sym}: features of the image are the mapped features");
                        h.legal_actions(&mut mapped);
                        let mut expect: Vec<usize> = actions
                            .iter()
                            .map(|a| Banqi::map_policy_index(sym, Banqi::action_index(a).unwrap()))
                            .collect();
                        let mut got: Vec<usize> =
                            mapped.iter().map(|a| Banqi::action_index(a).unwrap()).collect();
                        expect.sort_unstable();
                        got.sort_unstable();
                        assert_eq!(got, expect, "symmetry {sym}: the legal actions map");
                    }
                    plies += 1;
                    actions[rng.random_range(0..actions.len())]
                };
                g.play(a).unwrap();
                for (sym, h) in images.iter_mut().enumerate() {
                    h.play(mirror_action(sym, a)).unwrap();
                }
            }
            for h in &images {
                assert_eq!(h.outcome(), g.outcome(), "the images end alike");
            }
        }
        assert!(plies > 1000, "{plies} positions checked");
        for sym in 0..Banqi::SYMMETRIES {
            let mut img: Vec<usize> =
                (0..Banqi::POLICY_LEN).map(|i| Banqi::map_policy_index(sym, i)).collect();
            img.sort_unstable();
            assert_eq!(img, (0..Banqi::POLICY_LEN).collect::<Vec<_>>(), "a permutation");
        }
    }

    #[test]
    fn layout_doc_states_the_encoders_counts() {
        let doc = LAYOUT_DOC.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(doc.contains(&format!("(version {})", Banqi::FEATURE_VERSION)), "{doc}");
        assert!(doc.contains(&format!("{PLANES} planes of {SQUARES} squares")), "{doc}");
        assert!(doc.contains(&format!("then {SCALARS} scalars")), "{doc}");
        assert!(doc.contains("(policy head, 1,024 entries)") && Banqi::POLICY_LEN == 1024, "{doc}");
    }
}
