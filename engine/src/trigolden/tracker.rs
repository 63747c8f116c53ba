//! The incremental method tracker (rules §7, first part): every geometrically legal single
//! placement (活法, "method") on every free edge, for both players, with a stable id and its
//! bracing contacts, kept up to date from local changes only.
//!
//! When a piece N goes down:
//! - the methods on the edge N glues to are removed (the edge is no longer free);
//! - methods N makes illegal (overlap, touching edges, a floating vertex on a vertex) are
//!   removed; only methods whose bounding boxes meet N's are looked at;
//! - surviving methods near N gain their bracing contacts with N;
//! - N's own free edges get their methods (checked against the pieces near N).
//!
//! Stock is not part of a method: which shapes a player still has is applied when methods are
//! read. [`super::TriGolden::singles_brute`] is the full recompute the tracker is tested
//! against.

use super::pair;
use super::shapes::Len;
use super::zomega::on_open_segment;
use super::{Contact, Piece, Place, TriGolden, apart};
use crate::game::Seat;

/// An edge's standing (rules §7): live, or dead of one kind (the first that applies, in this
/// order).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum EdgeState {
    /// At least one opponent piece (from the opponent's remaining stock) can be placed on it.
    Live,
    /// Glued (貼死): another piece's edge coincides with it.
    Glued,
    /// Poked (頂死): another piece's vertex lies in it.
    Poked,
    /// Clamped (夾死): another piece's edge shares an endpoint with it across an empty gap of
    /// 36° (both edges dead), or of 72° when it has length 1.
    Clamped,
    /// Suffocated (悶死): none of these, yet nothing can be placed on it.
    Suffocated,
}

/// Reason bits: why an edge is dead, whatever its methods.
const POKED: u8 = 1;
const CLAMPED: u8 = 2;

/// The dead-edge reasons `q` gives `p`'s four edges (poked, clamped; gluing is `p.glued`).
pub fn reasons_between(p: &Piece, q: &Piece) -> [u8; 4] {
    let mut out = [0u8; 4];
    if apart(p, q) {
        return out;
    }
    for (i, r) in out.iter_mut().enumerate() {
        let (s, t) = p.edge(i);
        let (sp, tp) = (p.pt(i), p.pt((i + 1) % 4));
        if (0..4).any(|k| on_open_segment(q.pt(k), sp, tp)) {
            *r |= POKED;
        }
        let (len, dir) = p.edges[i];
        for j in 0..4 {
            let (qs, qt) = q.edge(j);
            let qdir = q.edges[j].1;
            // The shared endpoint, and each edge's ray away from it (units of 36°), with the
            // side its piece lies on: +1 counter-clockwise of the ray, −1 clockwise.
            let (ray_p, side_p, v) = if s == qs || s == qt {
                (dir, 1, s)
            } else if t == qs || t == qt {
                ((dir + 5) % 10, -1, t)
            } else {
                continue;
            };
            let (ray_q, side_q) = if v == qs { (qdir, 1) } else { ((qdir + 5) % 10, -1) };
            let d = (10 + ray_q - ray_p) % 10;
            let (angle, turn) = match d {
                1 => (1, 1),
                9 => (1, -1),
                2 => (2, 1),
                8 => (2, -1),
                _ => continue,
            };
            // The gap between the rays is empty when both pieces lie outside it.
            if side_p == -turn && side_q == turn && (angle == 1 || len == Len::One) {
                *r |= CLAMPED;
            }
        }
    }
    out
}

/// An edge's state from its reasons, whether it has a usable method, and its glue bit.
fn state_of(glued: bool, reasons: u8, live: bool) -> EdgeState {
    if live {
        EdgeState::Live
    } else if glued {
        EdgeState::Glued
    } else if reasons & POKED != 0 {
        EdgeState::Poked
    } else if reasons & CLAMPED != 0 {
        EdgeState::Clamped
    } else {
        EdgeState::Suffocated
    }
}

/// Every edge's state on `board` from `methods` and the reasons given, with `stock`.
fn states(
    board: &[Piece],
    methods: &[Method],
    reasons: &[[u8; 4]],
    stock: &[[u8; 8]; 2],
) -> Vec<[EdgeState; 4]> {
    let mut live = vec![[false; 4]; board.len()];
    for m in methods {
        let t = usize::from(m.place.target);
        // A method is usable by the target's opponent if they hold that shape.
        if stock[board[t].owner.other().index()][usize::from(m.place.shape)] > 0 {
            live[t][usize::from(m.place.edge)] = true;
        }
    }
    board
        .iter()
        .enumerate()
        .map(|(i, p)| std::array::from_fn(|e| state_of(p.glued & (1 << e) != 0, reasons[i][e], live[i][e])))
        .collect()
}

/// Every edge's state by brute force: reasons from every pair of pieces, methods recomputed.
pub fn edge_states_brute(game: &TriGolden) -> Vec<[EdgeState; 4]> {
    let board = game.pieces();
    let reasons: Vec<[u8; 4]> = board
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mut r = [0u8; 4];
            for (j, q) in board.iter().enumerate() {
                if i != j {
                    let x = reasons_between(p, q);
                    (0..4).for_each(|e| r[e] |= x[e]);
                }
            }
            r
        })
        .collect();
    states(board, &game.methods_brute(board), &reasons, &game.stock)
}

/// A method: a placement that is legal on the board as it stands (stock aside).
#[derive(Clone, Debug)]
pub struct Method {
    /// Stable id: unique within a game, never reused.
    pub id: u32,
    /// The placement.
    pub place: Place,
    /// The piece it would put down.
    pub piece: Piece,
    /// Its bracing contacts with the board (some may lie on edges glued since: read them
    /// with the board's glue).
    pub(super) contacts: Vec<Contact>,
}

/// Every method of the position, ordered by placement (so grouped by target piece).
#[derive(Clone, Debug, Default)]
pub struct Tracker {
    methods: Vec<Method>,
    next_id: u32,
    /// Per piece and edge: the dead-edge reasons other pieces give it (they only accumulate).
    reasons: Vec<[u8; 4]>,
    /// Per target piece: the geometric pairs of its methods, worked out the first time the
    /// links are asked for and kept (see [`TargetPairs`]).
    pairs: Vec<std::sync::OnceLock<TargetPairs>>,
}

/// The pairs a target piece's methods form: co-live pairs among them, and double links with
/// methods made before them. A pair's conditions are geometric, so it holds for as long as
/// both methods live; newer methods' pairs belong to their own target. Stock, and whether both
/// methods still live, are applied when the pairs are read.
#[derive(Clone, Debug, Default)]
struct TargetPairs {
    co_live: Vec<(u32, u32)>,
    double: Vec<(u32, u32)>,
}

/// How far a piece reaches from any of its vertices, at most: half the perimeter of a
/// quadrilateral whose edges are at most 2φ (3.24) long. A piece placed on N shares a vertex
/// with N, so it lies within N's bounding box grown by this much.
const REACH: f64 = 6.5;

/// The pieces of `board` (but `skip`) whose bounding boxes come within `REACH` of `p`'s.
fn neighbourhood(board: &[Piece], p: &Piece, skip: usize) -> Vec<usize> {
    let m = REACH + super::zomega::FILTER;
    board
        .iter()
        .enumerate()
        .filter(|&(i, x)| {
            i != skip
                && x.bbox[0] - p.bbox[1] <= m
                && p.bbox[0] - x.bbox[1] <= m
                && x.bbox[2] - p.bbox[3] <= m
                && p.bbox[2] - x.bbox[3] <= m
        })
        .map(|(i, _)| i)
        .collect()
}

impl Tracker {
    /// The methods, ordered by placement.
    pub fn methods(&self) -> &[Method] {
        &self.methods
    }

    /// Updates the methods after `board`'s last piece went down (`game` gives the shape
    /// table). Returns the methods it removed if `keep_removed`, else nothing. The game calls
    /// this itself; it is public for benchmarks.
    pub fn placed(&mut self, game: &TriGolden, board: &[Piece], keep_removed: bool) -> Vec<Method> {
        let ni = board.len() - 1;
        let n = board[ni];
        let glued = n.parent;
        self.pairs.push(std::sync::OnceLock::new());
        // Dead-edge reasons change only between N and the pieces near it.
        self.reasons.push([0; 4]);
        // Every candidate placement on N lies within `REACH` of N, so only N's wider
        // neighbourhood can conflict with one or touch it; the pieces that touch N itself
        // are among them too.
        let hood = neighbourhood(board, &n, ni);
        for &i in hood.iter().filter(|&&i| !apart(&board[i], &n)) {
            let p = &board[i];
            let (to_p, to_n) = (reasons_between(p, &n), reasons_between(&n, p));
            for e in 0..4 {
                self.reasons[i][e] |= to_p[e];
                self.reasons[ni][e] |= to_n[e];
            }
        }
        let mut removed = Vec::new();
        self.methods.retain_mut(|m| {
            let mut gone = glued == Some((m.place.target, m.place.edge));
            if !gone && let Some(s) = pair::meet(&m.piece, &n) {
                gone = !pair::clear(&m.piece, &n, &s);
                if !gone {
                    pair::contacts(ni, &n, &m.piece, &s.swapped(), &mut m.contacts);
                }
            }
            if gone && keep_removed {
                removed.push(m.clone());
            }
            !gone
        });
        // N's free edges, for N's opponent. Placements are ordered by target first, and N is
        // the newest piece, so they go at the end in order.
        for e in 0..4u8 {
            if n.glued & (1 << e) != 0 {
                continue;
            }
            for si in 0..game.options.shapes.shapes.len() {
                for mirror in [false, true] {
                    for own in 0..4u8 {
                        let place = Place { target: ni as u8, edge: e, shape: si as u8, mirror, own };
                        let Some(piece) = game.shape_at(board, place) else { continue };
                        let mut contacts = Vec::new();
                        // Two convex pieces glued along a whole edge lie on either side of its
                        // line: they cannot conflict, and touch only at its ends (no contact).
                        let glued_convex = piece.convex && n.convex;
                        let fits = (glued_convex || pair::clear_of(&piece, &n))
                            && hood.iter().all(|&i| {
                                let x = &board[i];
                                let Some(s) = pair::meet(&piece, x) else { return true };
                                let ok = pair::clear(&piece, x, &s);
                                if ok {
                                    pair::contacts(i, x, &piece, &s.swapped(), &mut contacts);
                                }
                                ok
                            });
                        if fits {
                            if !glued_convex && let Some(s) = pair::meet(&n, &piece) {
                                pair::contacts(ni, &n, &piece, &s, &mut contacts);
                            }
                            self.methods.push(Method { id: self.next_id, place, piece, contacts });
                            self.next_id += 1;
                        }
                    }
                }
            }
        }
        removed
    }

    /// The pairs of target `t`'s methods (computed once, on first use).
    fn target_pairs(&self, t: usize) -> &TargetPairs {
        self.pairs[t].get_or_init(|| {
            let lo = self.methods.partition_point(|m| usize::from(m.place.target) < t);
            let hi = self.methods.partition_point(|m| usize::from(m.place.target) <= t);
            let mine = &self.methods[lo..hi];
            let compatible = |a: &Method, b: &Method| {
                (a.place.target, a.place.edge) != (b.place.target, b.place.edge)
                    && pair::compatible(&a.piece, &b.piece)
            };
            let mut out = TargetPairs::default();
            for (i, a) in mine.iter().enumerate() {
                for b in &mine[i + 1..] {
                    if a.place.edge != b.place.edge && compatible(a, b) {
                        out.co_live.push((a.id, b.id));
                    }
                }
                for b in self.methods.iter().filter(|b| b.id < a.id) {
                    if a.piece.owner == b.piece.owner
                        && !apart(&a.piece, &b.piece)
                        && compatible(a, b)
                        && pair::mutual_contact(&a.piece, &b.piece)
                    {
                        out.double.push((b.id, a.id));
                    }
                }
            }
            out
        })
    }

    /// The link sets now: single links from the tracked contacts, co-live pairs and double
    /// links from the per-target pairs (worked out once per target), with stock and the
    /// points already scored applied.
    pub fn links(&self, game: &TriGolden) -> Links {
        let board = game.pieces();
        let by_id: std::collections::HashMap<u32, &Method> = self.methods.iter().map(|m| (m.id, m)).collect();
        let usable = |m: &Method| {
            let seat = board[usize::from(m.place.target)].owner.other();
            game.stock[seat.index()][usize::from(m.place.shape)] > 0
        };
        let pair_usable = |a: &Method, b: &Method| {
            usable(a)
                && usable(b)
                && (a.place.shape != b.place.shape
                    || game.stock[a.piece.owner.index()][usize::from(a.place.shape)] >= 2)
        };
        let mut links = Links {
            single: single_links(game, self.methods.iter().filter(|m| usable(m))),
            ..Links::default()
        };
        for t in 0..board.len() {
            let tp = self.target_pairs(t);
            for (a, b) in &tp.co_live {
                if let (Some(a), Some(b)) = (by_id.get(a), by_id.get(b))
                    && pair_usable(a, b)
                {
                    links.co_live.push((a.place.min(b.place), a.place.max(b.place)));
                }
            }
            for (a, b) in &tp.double {
                if let (Some(a), Some(b)) = (by_id.get(a), by_id.get(b))
                    && pair_usable(a, b)
                {
                    let (a, b) = if a.place < b.place { (a, b) } else { (b, a) };
                    links.double.push((a.place, b.place, game.points_if(&[a.piece, b.piece]).0));
                }
            }
        }
        links.single.sort();
        links.double.sort();
        links.co_live.sort();
        links
    }

    /// Every edge's state now (`stock`: both players' remaining pieces).
    pub fn edge_states(&self, board: &[Piece], stock: &[[u8; 8]; 2]) -> Vec<[EdgeState; 4]> {
        states(board, &self.methods, &self.reasons, stock)
    }

    /// The methods `seat` may use now: on the opponent's pieces, with a shape in stock.
    pub(super) fn for_seat<'a>(
        &'a self,
        board: &'a [Piece],
        stock: [u8; 8],
        seat: Seat,
    ) -> impl Iterator<Item = &'a Method> + 'a {
        self.methods.iter().filter(move |m| {
            board[usize::from(m.place.target)].owner != seat && stock[usize::from(m.place.shape)] > 0
        })
    }
}

/// The link sets of a position (rules §7), named by placement, each list sorted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Links {
    /// Single links (單接): a usable method that would form a bracing structure with the
    /// board, and the points each player would score by it.
    pub single: Vec<(Place, [i32; 2])>,
    /// Double links (雙接): two usable methods of one player forming a bracing structure with
    /// each other that can go down together (different edges, no conflict, stock), and the
    /// points of that turn.
    pub double: Vec<(Place, Place, [i32; 2])>,
    /// Co-live pairs (共活): two usable methods on two edges of one piece that can be placed
    /// together, checked exactly as arbitration checks it.
    pub co_live: Vec<(Place, Place)>,
}

/// Single links among `methods`: those whose contacts still count (on edges not glued since)
/// and form a bracing structure, with each player's points.
fn single_links<'a>(game: &TriGolden, methods: impl Iterator<Item = &'a Method>) -> Vec<(Place, [i32; 2])> {
    let board = game.pieces();
    methods
        .filter(|m| {
            m.contacts.iter().any(|c| match c.on_board {
                Some((q, e)) => board[usize::from(q)].glued & (1 << e) == 0,
                None => true,
            })
        })
        .filter_map(|m| {
            let (pts, any) = game.points_if(&[m.piece]);
            any.then_some((m.place, pts))
        })
        .collect()
}

impl Links {
    /// The link sets from `methods` (all of them, stock aside) on `game`'s board.
    pub fn of(game: &TriGolden, methods: &[Method]) -> Links {
        let board = game.pieces();
        let usable: Vec<&Method> = methods
            .iter()
            .filter(|m| {
                let seat = board[usize::from(m.place.target)].owner.other();
                game.stock[seat.index()][usize::from(m.place.shape)] > 0
            })
            .collect();
        let mut links = Links { single: single_links(game, usable.iter().copied()), ..Links::default() };
        for (i, a) in usable.iter().enumerate() {
            for b in &usable[i + 1..] {
                if a.piece.owner != b.piece.owner || apart(&a.piece, &b.piece) {
                    continue;
                }
                let stock = &game.stock[a.piece.owner.index()];
                let fits = (a.place.target, a.place.edge) != (b.place.target, b.place.edge)
                    && (a.place.shape != b.place.shape || stock[usize::from(a.place.shape)] >= 2)
                    && pair::compatible(&a.piece, &b.piece);
                if fits && pair::mutual_contact(&a.piece, &b.piece) {
                    let (pts, _) = game.points_if(&[a.piece, b.piece]);
                    links.double.push((a.place, b.place, pts));
                }
            }
        }
        for (i, a) in usable.iter().enumerate() {
            for b in &usable[i + 1..] {
                if b.place.target != a.place.target {
                    continue;
                }
                let stock = &game.stock[a.piece.owner.index()];
                if b.place.edge != a.place.edge && game.pair_ok(a, b, stock) {
                    links.co_live.push((a.place, b.place));
                }
            }
        }
        links.single.sort();
        links.double.sort();
        links.co_live.sort();
        links
    }
}
