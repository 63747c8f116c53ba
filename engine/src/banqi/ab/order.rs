//! Move generation with ordering scores for the search: the hash move, captures by most
//! valuable victim then least valuable attacker, killers, history, and the selected flips.

use super::{Action, Banqi, EMPTY, FACE_DOWN, MAX_PLY, NEIGHBOURS, SQUARES, Searcher, pack};

impl Searcher {
    /// Fills `out` with the node's actions and their ordering scores; returns how many.
    pub(super) fn generate(
        &self,
        pos: &Banqi,
        depth: i32,
        ply: usize,
        tt_move: u16,
        out: &mut [(Action, i32)],
    ) -> usize {
        let mut n = 0;
        let mut isolated: Option<u8> = None;
        let mut near: [(u8, i32); SQUARES] = [(0, 0); SQUARES];
        let mut near_n = 0;
        pos.for_each_action(|a| {
            match a {
                Action::Flip(s) => {
                    let touching = touching(pos, s);
                    if pack(a) == tt_move {
                        out[n] = (a, self.order_score(pos, a, ply, tt_move));
                        n += 1;
                    } else if touching == 0 {
                        isolated.get_or_insert(s);
                    } else {
                        near[near_n] = (s, touching);
                        near_n += 1;
                    }
                }
                _ => {
                    out[n] = (a, self.order_score(pos, a, ply, tt_move));
                    n += 1;
                }
            }
            true
        });
        // Deep enough for a reveal to matter, or nothing else to do: the selected flips.
        if depth >= i32::from(self.settings.flip_depth) || n == 0 {
            let near = &mut near[..near_n];
            near.sort_by_key(|f| std::cmp::Reverse(f.1));
            for &(s, touching) in near.iter().take(self.settings.near_flips as usize) {
                out[n] = (Action::Flip(s), -1_000 + touching);
                n += 1;
            }
            if let Some(s) = isolated {
                out[n] = (Action::Flip(s), -2_000);
                n += 1;
            }
        }
        n
    }

    pub(super) fn order_score(&self, pos: &Banqi, a: Action, ply: usize, tt_move: u16) -> i32 {
        let p = pack(a);
        if p == tt_move {
            return 1_000_000;
        }
        match a {
            Action::Move { from, to } if pos.board[to as usize] != EMPTY => {
                100_000 + capture_order(pos, from, to)
            }
            Action::Move { from, to } => {
                if ply < MAX_PLY && self.killers[ply][0] == p {
                    90_000
                } else if ply < MAX_PLY && self.killers[ply][1] == p {
                    89_000
                } else {
                    self.history[from as usize][to as usize]
                }
            }
            Action::Flip(s) => -1_000 + touching(pos, s),
            Action::Reveal(_) => 0,
        }
    }
}

/// `lmr=2`'s extra plies for the `index`th move (from 0) at `depth`: `ln(d)·ln(i)/2`
/// rounded, at least 1, leaving at least one ply.
pub(super) fn lmr_plies(depth: i32, index: usize) -> i32 {
    let r = (f64::from(depth).ln() * (index as f64).ln() / 2.0).round() as i32;
    r.max(1).min(depth - 2)
}

/// Face-up pieces orthogonally next to `sq`.
pub(super) fn touching(pos: &Banqi, sq: u8) -> i32 {
    NEIGHBOURS[sq as usize].iter().filter(|&&t| t != u8::MAX && pos.board[t as usize] < FACE_DOWN).count()
        as i32
}

/// Most valuable victim first, then least valuable attacker.
pub(super) fn capture_order(pos: &Banqi, from: u8, to: u8) -> i32 {
    let rank = |c: u8| i32::from(c % 7);
    // Kinds run strongest first: a low victim rank is a valuable victim.
    (7 - rank(pos.board[to as usize])) * 16 + rank(pos.board[from as usize])
}
