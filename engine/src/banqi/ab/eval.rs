//! `banqi-ab`'s evaluation: each piece valued by what it can still capture among the enemy
//! pieces that remain, face up or face down (the king cannot take a pawn, a pawn takes only
//! pawns and the king, a cannon takes anything by a jump), a bonus when nothing the enemy has
//! left can take it, face-down pieces at their colour's expected value, and mobility.

use super::EVAL_MAX;
use crate::banqi::{Banqi, EMPTY, FACE_DOWN, Kind, NEIGHBOURS, PIECE_CODES, SQUARES};

/// The evaluation's weights, in points where an unthreatened pawn is worth about 40.
#[derive(Clone, Debug, PartialEq)]
pub struct Weights {
    /// Value per kind (king, advisor, elephant, chariot, horse, cannon, pawn) with all its
    /// prey on the board.
    pub base: [i32; 7],
    /// Per mille of a piece's value that scales with the share of its prey still alive.
    pub prey_share: i32,
    /// Per mille of a piece's value added when nothing the enemy has left can take it.
    pub safe_bonus: i32,
    /// Per mille: a face-down piece's worth relative to the same piece face up.
    pub face_down: i32,
    /// Per empty orthogonal neighbour of a face-up piece.
    pub mobility: i32,
}

impl Default for Weights {
    /// The SPSA-tuned weights (`zeroplay tune`, 1,124 pairs from the hand-set start
    /// 900/500/250/120/60/330/40/600/300/900/2): +106 Elo over the start at 2,000 nodes a move
    /// (200 matches) and +207 at 100 ms (30 matches); docs/benchmarks.md.
    fn default() -> Self {
        Weights {
            base: [874, 498, 242, 127, 60, 323, 41],
            prey_share: 488,
            safe_bonus: 307,
            face_down: 871,
            mobility: 5,
        }
    }
}

impl Weights {
    /// How many numbers [`Weights::to_list`] gives.
    pub const LEN: usize = 11;
    /// The accepted range of each, for messages.
    pub const RANGES: &str = "7 kind values 1..=5000 (king advisor elephant chariot horse cannon pawn), \
        prey_share 0..=1000, safe_bonus 0..=2000, face_down 0..=2000, mobility 0..=100";
    const BOUNDS: [(i32, i32); Weights::LEN] = [
        (1, 5000),
        (1, 5000),
        (1, 5000),
        (1, 5000),
        (1, 5000),
        (1, 5000),
        (1, 5000),
        (0, 1000),
        (0, 2000),
        (0, 2000),
        (0, 100),
    ];

    /// The weights as one list: `base` (7), `prey_share`, `safe_bonus`, `face_down`, `mobility`.
    pub fn to_list(&self) -> [i32; Weights::LEN] {
        let b = self.base;
        [
            b[0],
            b[1],
            b[2],
            b[3],
            b[4],
            b[5],
            b[6],
            self.prey_share,
            self.safe_bonus,
            self.face_down,
            self.mobility,
        ]
    }

    /// The weights [`Weights::to_list`] gave, or `None` if the list has the wrong length or a
    /// number outside its range ([`Weights::RANGES`]).
    pub fn from_list(l: &[i32]) -> Option<Weights> {
        if l.len() != Weights::LEN
            || l.iter().zip(Weights::BOUNDS).any(|(v, (lo, hi))| !(lo..=hi).contains(v))
        {
            return None;
        }
        Some(Weights {
            base: [l[0], l[1], l[2], l[3], l[4], l[5], l[6]],
            prey_share: l[7],
            safe_bonus: l[8],
            face_down: l[9],
            mobility: l[10],
        })
    }

    /// Each weight's range, lowest and highest (for tuning).
    pub fn bounds() -> [(i32, i32); Weights::LEN] {
        Weights::BOUNDS
    }
}

/// Whether a piece of kind `a` can take a `t` at all (adjacently, or by a cannon's jump).
pub(super) const fn preys_on(a: usize, t: usize) -> bool {
    if a == Kind::Cannon as usize {
        return true;
    }
    match (a, t) {
        (0, 6) => false,
        (6, t) => t == 6 || t == 0,
        (a, t) => a <= t,
    }
}

/// How many enemy pieces each kind can take in a full set.
pub(super) const PREY_START: [i32; 7] = {
    let mut out = [0i32; 7];
    let mut a = 0;
    while a < 7 {
        let mut t = 0;
        while t < 7 {
            if preys_on(a, t) {
                out[a] += Kind::COUNT[t] as i32;
            }
            t += 1;
        }
        a += 1;
    }
    out
};

/// The value of every piece code in `pos` (see [`Weights`]).
pub(super) fn piece_values(pos: &Banqi, w: &Weights) -> [i32; PIECE_CODES] {
    let mut alive = [0i32; PIECE_CODES];
    for &c in &pos.board {
        if c < FACE_DOWN {
            alive[c as usize] += 1;
        }
    }
    for (a, &n) in alive.iter_mut().zip(&pos.pool) {
        *a += i32::from(n);
    }
    let mut value = [0i32; PIECE_CODES];
    for colour in 0..2 {
        let enemy = (1 - colour) * 7;
        for k in 0..7 {
            if alive[colour * 7 + k] == 0 {
                continue;
            }
            let (mut prey, mut predators) = (0, 0);
            for t in 0..7 {
                if preys_on(k, t) {
                    prey += alive[enemy + t];
                }
                if preys_on(t, k) {
                    predators += alive[enemy + t];
                }
            }
            let base = w.base[k];
            let mut v =
                base * (1000 - w.prey_share) / 1000 + base * w.prey_share / 1000 * prey / PREY_START[k];
            if predators == 0 {
                v += base * w.safe_bonus / 1000;
            }
            value[colour * 7 + k] = v;
        }
    }
    value
}

/// The static evaluation of `pos` for the side to move (0 before colours are known).
pub fn evaluate(pos: &Banqi, w: &Weights) -> i32 {
    let Some(me) = pos.colour_to_move() else { return 0 };
    let value = piece_values(pos, w);
    let sign = |code: usize| if code / 7 == me.index() { 1 } else { -1 };
    let mut score = 0;
    for s in 0..SQUARES {
        let c = pos.board[s];
        if c >= FACE_DOWN {
            continue;
        }
        let empties =
            NEIGHBOURS[s].iter().filter(|&&t| t != u8::MAX && pos.board[t as usize] == EMPTY).count();
        score += sign(c as usize) * (value[c as usize] + w.mobility * empties as i32);
    }
    for (code, &n) in pos.pool.iter().enumerate() {
        score += sign(code) * i32::from(n) * value[code] * w.face_down / 1000;
    }
    score.clamp(-EVAL_MAX, EVAL_MAX)
}
