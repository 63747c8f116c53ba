//! What two pieces' boundaries do to each other, worked out once per pair: the side of each
//! edge's line that every vertex of the other piece lies on (32 filtered orientation tests).
//! The placement rules' overlap and touching tests (rules 2–4) and the bracing contacts
//! (rule 6) are then read off that table instead of each recomputing its own orientations,
//! so an exact fallback (a vertex on a line) is paid once per pair.

use std::cmp::Ordering::{self, Equal, Greater};

use super::zomega::{self, interiors_overlap};
use super::{Contact, Piece, apart};

/// The orientation table of a pair of pieces (a, b).
#[derive(Copy, Clone, Debug)]
pub(super) struct Sides {
    /// `of_b[i][j]`: the side of a's edge `i` (its line, oriented) that b's vertex `j` is on.
    of_b: [[Ordering; 4]; 4],
    /// `of_a[j][i]`: the side of b's edge `j` that a's vertex `i` is on.
    of_a: [[Ordering; 4]; 4],
}

/// The rounded cross products: `[i][j]` for `a`'s edge `i` and `b`'s vertex `j` (positive:
/// the vertex is to the left of the edge, inside a counter-clockwise piece's half-plane).
fn rounded(a: &Piece, b: &Piece) -> [[f64; 4]; 4] {
    std::array::from_fn(|i| {
        let ([sx, sy], [ex, ey]) = (a.xy(i), a.xy((i + 1) % 4));
        let (dx, dy) = (ex - sx, ey - sy);
        std::array::from_fn(|j| {
            let [px, py] = b.xy(j);
            dx * (py - sy) - dy * (px - sx)
        })
    })
}

/// Does a row (one edge of a convex piece) have the whole other piece beyond it, by more than
/// the rounding margin?
fn separates(t: &[[f64; 4]; 4]) -> bool {
    t.iter().any(|row| row.iter().all(|&v| v < -zomega::FILTER))
}

/// The exact orientations from the rounded ones: only values within the margin of zero are
/// worked out exactly.
fn exact(a: &Piece, b: &Piece, t: &[[f64; 4]; 4]) -> [[Ordering; 4]; 4] {
    std::array::from_fn(|i| {
        std::array::from_fn(|j| {
            let v = t[i][j];
            if v > zomega::FILTER {
                Greater
            } else if v < -zomega::FILTER {
                Ordering::Less
            } else {
                let (s, e, p) = (a.v[i], a.v[(i + 1) % 4], b.v[j]);
                // A shared vertex (glued neighbours have two) is on the line: no arithmetic.
                if p == s || p == e { Equal } else { zomega::orient_exact(s, e, p) }
            }
        })
    })
}

impl Sides {
    /// The same table read from `b`'s side.
    pub(super) fn swapped(&self) -> Sides {
        Sides { of_b: self.of_a, of_a: self.of_b }
    }
}

/// Rules 2–4 for a new piece `n` against a piece `x` already down (`s`: `Sides::new(n, x)`):
/// no overlap, no edge of `n` but its glued one touching an edge of `x`, no floating vertex of
/// `n` on a vertex of `x`.
pub(super) fn clear(n: &Piece, x: &Piece, s: &Sides) -> bool {
    let k = usize::from(n.own);
    // Cheapest first. Floating vertices (not on the glued edge) on a vertex: rule 4.
    for i in [(k + 2) % 4, (k + 3) % 4] {
        if x.v.contains(&n.v[i]) {
            return false;
        }
    }
    let overlap = if n.convex && x.convex {
        // Convex interiors are disjoint exactly when some edge's line has the whole other
        // piece on its outer side (the line included).
        let separates = |t: &[[Ordering; 4]; 4]| t.iter().any(|row| row.iter().all(|&o| o != Greater));
        !(separates(&s.of_b) || separates(&s.of_a))
    } else {
        interiors_overlap(&n.pts(), &x.pts())
    };
    if overlap {
        return false;
    }
    for i in (0..4).filter(|&i| i != k) {
        let i1 = (i + 1) % 4;
        for j in 0..4 {
            let j1 = (j + 1) % 4;
            let (o1, o2) = (s.of_b[i][j], s.of_b[i][j1]);
            let touch = if o1 == Equal && o2 == Equal {
                zomega::overlap_along(n.pt(i), n.pt(i1), x.pt(j), x.pt(j1))
            } else {
                let (o3, o4) = (s.of_a[j][i], s.of_a[j][i1]);
                // A proper crossing: each segment's ends strictly on both sides of the other.
                o1 != Equal && o2 != Equal && o1 != o2 && o3 != Equal && o4 != Equal && o3 != o4
            };
            if touch {
                return false;
            }
        }
    }
    true
}

/// The table of `a` against `b`, unless they lie strictly apart (`None`: bounding boxes
/// apart, or one convex piece's edge line with the whole other piece beyond it by more than
/// the rounding margin). Strictly apart pieces share no point: no conflict, no contact.
///
/// The rounded products are worked out once, for the separation test and the table both;
/// only values within the margin of zero go to the exact test.
pub(super) fn meet(a: &Piece, b: &Piece) -> Option<Sides> {
    if apart(a, b) {
        return None;
    }
    let tb = rounded(a, b);
    if a.convex && separates(&tb) {
        return None;
    }
    let ta = rounded(b, a);
    if b.convex && separates(&ta) {
        return None;
    }
    Some(Sides { of_b: exact(a, b, &tb), of_a: exact(b, a, &ta) })
}

/// [`clear`] from scratch.
pub(super) fn clear_of(n: &Piece, x: &Piece) -> bool {
    meet(n, x).is_none_or(|s| clear(n, x, &s))
}

/// Can `a` and `b` both be down, placed in one order or the other (rules 2–4)?
pub(super) fn compatible(a: &Piece, b: &Piece) -> bool {
    meet(a, b).is_none_or(|s| clear(a, b, &s) || clear(b, a, &s.swapped()))
}

/// Pushes the bracing contacts between a piece `q` (index `qi`) and a piece `n` (`s`:
/// `Sides::new(q, n)`): `n`'s vertices in `q`'s free edges, then `q`'s vertices in `n`'s
/// free edges, edge by edge.
pub(super) fn contacts(qi: usize, q: &Piece, n: &Piece, s: &Sides, out: &mut Vec<Contact>) {
    for j in 0..4 {
        let j1 = (j + 1) % 4;
        if q.glued & (1 << j) == 0 {
            for t in 0..4 {
                if s.of_b[j][t] == Equal && zomega::strictly_between(n.pt(t), q.pt(j), q.pt(j1)) {
                    out.push(Contact { on_board: Some((qi as u8, j as u8)), point: n.v[t] });
                }
            }
        }
        if n.glued & (1 << j) == 0 {
            for t in 0..4 {
                if s.of_a[j][t] == Equal && zomega::strictly_between(q.pt(t), n.pt(j), n.pt(j1)) {
                    out.push(Contact { on_board: None, point: q.v[t] });
                }
            }
        }
    }
}

/// Is there a bracing contact between `a` and `b` (a vertex of one in a free edge of the
/// other)?
pub(super) fn mutual_contact(a: &Piece, b: &Piece) -> bool {
    let Some(s) = meet(a, b) else { return false };
    let one_way = |t: &[[Ordering; 4]; 4], x: &Piece, y: &Piece| {
        (0..4).filter(|j| x.glued & (1 << j) == 0).any(|j| {
            let (e0, e1) = (x.pt(j), x.pt((j + 1) % 4));
            (0..4).any(|v| t[j][v] == Equal && zomega::strictly_between(y.pt(v), e0, e1))
        })
    };
    one_way(&s.of_b, a, b) || one_way(&s.of_a, b, a)
}
