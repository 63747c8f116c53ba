//! Chance nodes: a flip's value as the pool-weighted mean of its reveals, with Ballard's
//! Star1 windows and Star2's probe (`probe=`).

use super::{INF, NO_MOVE, Searcher, WIN, WIN_BOUND};
use crate::banqi::{Action, Banqi, PIECE_CODES, Piece};
use crate::game::Game;

impl Searcher {
    /// A flip's value for the flipper: the pool-weighted mean of its reveals, after
    /// ChanceProbCut (`cpc=`) and Star2's probe where the settings ask for them.
    pub(super) fn chance(&mut self, pos: &Banqi, depth: i32, alpha: i32, beta: i32, ply: usize) -> i32 {
        if self.tick() {
            return 0;
        }
        // `reveal=`: below the root a flip's reveals are searched shallower (never below 1
        // ply, so a reveal still meets the replies it allows).
        let cut = if ply > 1 { i32::from(self.settings.reveal).min(depth - 1).max(0) } else { 0 };
        let depth = depth - cut;
        if let Some(v) = self.chance_probcut(pos, depth, alpha, beta, ply) {
            return v;
        }
        if self.stopped {
            return 0;
        }
        self.expect(pos, depth, alpha, beta, ply)
    }

    /// ChanceProbCut (`cpc=M`, `cpc_depth=R`): the flip's reveals searched `R` plies
    /// shallower, in the window `(alpha - M, beta + M)`. A shallow mean at or beyond either
    /// end predicts the full one beyond the window, and the flip is cut with that bound
    /// (`Some`); `None` when the search must go on. Only where the shallow search keeps a
    /// ply and a side of the window is not a won or lost score.
    fn chance_probcut(&mut self, pos: &Banqi, depth: i32, alpha: i32, beta: i32, ply: usize) -> Option<i32> {
        let (m, r) = (i32::from(self.settings.cpc), i32::from(self.settings.cpc_depth));
        if m == 0 || depth - r < 1 {
            return None;
        }
        let lo = if alpha.abs() < WIN_BOUND { alpha - m } else { -INF };
        let hi = if beta.abs() < WIN_BOUND { beta + m } else { INF };
        if lo == -INF && hi == INF {
            return None;
        }
        let v = self.expect(pos, depth - r, lo, hi, ply);
        if self.stopped {
            return None;
        }
        if hi < INF && v >= hi {
            Some(beta)
        } else if lo > -INF && v <= lo {
            Some(alpha)
        } else {
            None
        }
    }

    /// The pool-weighted mean of the flip's reveals, each searched to `depth` in Star1's
    /// narrowed window, after Star2's probe where `probe=` asks for it.
    fn expect(&mut self, pos: &Banqi, depth: i32, alpha: i32, beta: i32, ply: usize) -> i32 {
        // (piece code, count, an upper bound on the reveal's value for the flipper: `WIN`
        // until a probe finds a tighter one).
        let mut outcomes: Vec<(u8, u8, i32)> = (0..PIECE_CODES as u8)
            .filter(|&c| pos.pool[c as usize] > 0)
            .map(|c| (c, pos.pool[c as usize], WIN))
            .collect();
        outcomes.sort_by_key(|o| std::cmp::Reverse(o.1));
        let total: f64 = outcomes.iter().map(|o| f64::from(o.1)).sum();
        let (lo, hi) = (f64::from(-WIN), f64::from(WIN));
        let (alpha_f, beta_f) = (f64::from(alpha), f64::from(beta));
        let mut sum = 0.0;
        let mut rest = 1.0;
        let probed = self.settings.probe > 0;
        if probed {
            if self.probe_reveals(pos, &mut outcomes, depth, alpha, ply) {
                return alpha;
            }
            if self.stopped {
                return 0;
            }
            // The reveals no reply held go first, so that those a probe bounded narrow the
            // windows of everything searched before them.
            outcomes.sort_by_key(|o| (o.2 < WIN, std::cmp::Reverse(o.1)));
        }
        for i in 0..outcomes.len() {
            let (code, n, _) = outcomes[i];
            let p = f64::from(n) / total;
            rest = (rest - p).max(0.0);
            // What the reveals after this one can still add at most.
            let above = if probed {
                outcomes[i + 1..].iter().map(|o| f64::from(o.1) / total * f64::from(o.2)).sum()
            } else {
                hi * rest
            };
            let a = ((alpha_f - sum - above) / p).floor().max(lo - 1.0);
            let b = ((beta_f - sum - lo * rest) / p).ceil().min(hi + 1.0);
            let mut child = pos.clone();
            child.play_unchecked(Action::Reveal(Piece::from_code(code)));
            self.derived(pos, &child, ply + 1);
            // The reveal passes the turn: the child's mover is the flipper's opponent.
            let v = f64::from(-self.negamax(&child, depth, -(b as i32), -(a as i32), ply + 1, true));
            if self.stopped {
                return 0;
            }
            if v >= b {
                return beta;
            }
            if v <= a {
                return alpha;
            }
            sum += p * v;
        }
        sum.round() as i32
    }

    /// Star2's probe (`probe=1|2`): tries each reveal of the flip at `pos` against its
    /// opponent's first reply only, searched to `depth - 1` in a null window at `alpha`. A
    /// reply is a lower bound on the opponent's best, so a reveal whose reply holds the
    /// flipper to `alpha` or less gets that value as its upper bound (`outcomes[i].2`); when
    /// every reveal is held, so is their mean, and the flip fails low (returns true) at the
    /// cost of one reply per reveal. `probe=1` stops at the first reveal that escapes its
    /// reply, `probe=2` probes them all, so the full pass knows more bounds. The replies
    /// searched stay in the table for that pass. Only where a reply has a ply to go.
    fn probe_reveals(
        &mut self,
        pos: &Banqi,
        outcomes: &mut [(u8, u8, i32)],
        depth: i32,
        alpha: i32,
        ply: usize,
    ) -> bool {
        if depth < 2 || alpha.abs() >= WIN_BOUND {
            return false;
        }
        let mut all = true;
        for o in outcomes.iter_mut() {
            let mut child = pos.clone();
            child.play_unchecked(Action::Reveal(Piece::from_code(o.0)));
            let settled = child.outcome.is_some() || self.repeats(&child);
            let mut held = false;
            if !settled {
                self.derived(pos, &child, ply + 1);
                let tt_move = self.probe(child.key).map_or(NO_MOVE, |e| e.best);
                let mut moves = [(Action::Flip(0), 0i32); 96];
                let n = self.generate(&child, depth, ply + 1, tt_move, &mut moves);
                if let Some(&(reply, _)) = moves[..n].iter().max_by_key(|m| m.1) {
                    // The opponent's value of its reply: at least -alpha holds the flipper.
                    let v = self.child_value(&child, reply, depth - 1, -alpha - 1, -alpha, ply + 1);
                    if self.stopped {
                        return false;
                    }
                    if v >= -alpha {
                        o.2 = -v;
                        held = true;
                    }
                }
            }
            if !held {
                all = false;
                if self.settings.probe < 2 {
                    break;
                }
            }
        }
        all
    }
}
