//! TriGolden (頂鑫棋, "Brace the TriGolden"), the rules of `../shared/rules/trigolden.md`.
//!
//! Exact geometry in Z[ω] ([`zomega`]); the piece set as data ([`shapes`]). A turn is one or
//! two atomic actions, each placing one piece: [`Action::Open`] for the first player's opening
//! piece (at its canonical place: the shape's first vertex at the origin, unrotated), and
//! [`Action::Place`] for a piece glued to an opponent piece's edge (target piece and edge, shape,
//! mirror, own edge). Legal first actions of a two-piece turn are exactly those that some
//! second action completes to a legal turn (rules 5 and 6, in either order).
//!
//! This module decides everything by brute force over the pieces on the board, which is what
//! the incremental tracker of rules §7 will be checked against.
//!
//! Scores are each player's own points (`Outcome::scores`, not zero-sum); arbitration (a
//! player who starts a turn without a co-live pair, or on the last turn without any legal
//! placement) is a decisive win for that player.

pub mod features;
pub mod lite;
mod pack;
mod pair;
pub mod render;
pub mod settings;
pub mod shapes;
pub mod tracker;
pub mod user;
pub mod zomega;

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::game::{ActionParseError, Actor, DecodeError, Game, Outcome, Seat};
use shapes::{Len, ShapeTable};
use tracker::{Method, Tracker};
use zomega::{Pt, Z};

/// Who scores a bracing structure **[decision]**.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScoringMode {
    /// The owner of the bracing piece (頂棋).
    #[default]
    Bracer,
    /// The owner of the TriGolden piece (鑫棋).
    Trigolden,
    /// Only when both pieces have the same owner, to that owner.
    SameOwner,
}

impl ScoringMode {
    fn code(self) -> u8 {
        match self {
            ScoringMode::Bracer => 0,
            ScoringMode::Trigolden => 1,
            ScoringMode::SameOwner => 2,
        }
    }

    fn from_code(c: u8) -> Option<ScoringMode> {
        [ScoringMode::Bracer, ScoringMode::Trigolden, ScoringMode::SameOwner]
            .into_iter()
            .find(|m| m.code() == c)
    }

    /// Who scores a bracing structure whose bracing piece `bracer` owns, on a TriGolden piece
    /// `trigolden` owns (nobody, under `SameOwner`, when they differ).
    fn scorer(self, bracer: Seat, trigolden: Seat) -> Option<Seat> {
        match self {
            ScoringMode::Bracer => Some(bracer),
            ScoringMode::Trigolden => Some(trigolden),
            ScoringMode::SameOwner => (bracer == trigolden).then_some(bracer),
        }
    }
}

/// Game options: every **[decision]** of the rules.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Options {
    /// Who scores a bracing structure.
    pub scoring: ScoringMode,
    /// The piece set.
    pub shapes: Arc<ShapeTable>,
    /// Rule 6 variant: the bracing contact that lets a turn's two pieces attach to different
    /// opponent pieces must be at a point not braced before (default: any contact counts).
    pub rule6_new_point: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            scoring: ScoringMode::Bracer,
            shapes: Arc::new(ShapeTable::default_table()),
            rule6_new_point: false,
        }
    }
}

/// One placement: a piece of `shape` (mirrored or not) glued by its edge `own` to edge `edge`
/// of the opponent's piece number `target` (pieces are numbered in the order placed).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Place {
    /// The opponent's piece it attaches to.
    pub target: u8,
    /// That piece's edge (0–3, counter-clockwise from its first vertex).
    pub edge: u8,
    /// Shape index in the table (shown as A, B, C…).
    pub shape: u8,
    /// Mirrored?
    pub mirror: bool,
    /// Its own edge glued to the target edge.
    pub own: u8,
}

/// An atomic action.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    /// The opening piece, at its canonical place.
    Open {
        /// Shape index.
        shape: u8,
        /// Mirrored?
        mirror: bool,
    },
    /// A piece glued to an opponent piece.
    Place(Place),
}

fn shape_letter(s: u8) -> char {
    // An illegal action's name is printed too (in its error): no overflow past Z (found by
    // the fuzz target, from a decoded state naming shape 200).
    if s < 26 { char::from(b'A' + s) } else { '?' }
}

impl fmt::Display for Action {
    /// `open:B'` (opening piece, shape B mirrored) or `3.1:A'2` (on piece 3's edge 1, shape A
    /// mirrored, by its own edge 2). Shapes are named by table position: A is the first.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = |b: bool| if b { "'" } else { "" };
        match *self {
            Action::Open { shape, mirror } => write!(f, "open:{}{}", shape_letter(shape), m(mirror)),
            Action::Place(p) => {
                write!(f, "{}.{}:{}{}{}", p.target, p.edge, shape_letter(p.shape), m(p.mirror), p.own)
            }
        }
    }
}

/// What an arbitration finds at a turn start ([`TriGolden::arbitration`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Arbitration {
    /// The player whose turn starts (the one who may ask for arbitration).
    pub seat: Seat,
    /// Whether the opponent's last turn met its obligation (rule 5); if not, `seat` wins.
    pub obligation_met: bool,
    /// Complete legal turns `seat` has (rule 6 pairs included).
    pub legal_turns: u64,
}

/// A piece on the board.
///
/// Equality and hashing cover the exact fields; the floating-point images (`xy`, `bbox`) are
/// functions of the vertices.
#[derive(Copy, Clone, Debug)]
pub struct Piece {
    /// Its owner.
    pub owner: Seat,
    /// Shape index.
    pub shape: u8,
    /// Mirrored?
    pub mirror: bool,
    /// Vertices, counter-clockwise.
    pub v: [Z; 4],
    /// Edge `i` (vertex `i` to `i + 1`): length and direction (units of 36°).
    pub edges: [(Len, u8); 4],
    /// The piece and edge it is glued to (none for the opening piece).
    pub parent: Option<(u8, u8)>,
    /// Its edge glued to the parent.
    pub own: u8,
    /// Depth in the attachment tree (the opening piece is 0).
    pub depth: u8,
    /// Bit `i` set: edge `i` is glued (another piece's edge coincides with it).
    pub glued: u8,
    /// Bounding box, rounded: least x, greatest x, least y, greatest y. Only ever used with a
    /// margin of [`zomega::FILTER`], as a cheap rejection before the exact tests.
    pub bbox: [f64; 4],
    /// Convex (every corner turns left): overlap is then decided by separating edges.
    pub convex: bool,
    /// The vertices' rounded coordinates (see [`Piece::pt`]).
    xy: [[f64; 2]; 4],
}

impl Piece {
    /// The exact fields, which equality and hashing cover.
    #[allow(clippy::type_complexity)]
    fn key(&self) -> (Seat, u8, bool, [Z; 4], [(Len, u8); 4], Option<(u8, u8)>, u8, u8, u8) {
        (
            self.owner,
            self.shape,
            self.mirror,
            self.v,
            self.edges,
            self.parent,
            self.own,
            self.depth,
            self.glued,
        )
    }
}

impl PartialEq for Piece {
    fn eq(&self, o: &Piece) -> bool {
        self.key() == o.key()
    }
}

impl Eq for Piece {}

impl std::hash::Hash for Piece {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.key().hash(h);
    }
}

/// Are the bounding boxes of `a` and `b` apart by more than the rounding margin (so the pieces
/// share no point)? `false` says only "maybe not": the exact tests decide.
#[inline]
fn apart(a: &Piece, b: &Piece) -> bool {
    const M: f64 = zomega::FILTER;
    b.bbox[0] - a.bbox[1] > M
        || a.bbox[0] - b.bbox[1] > M
        || b.bbox[2] - a.bbox[3] > M
        || a.bbox[2] - b.bbox[3] > M
}

impl Piece {
    fn new(owner: Seat, shape: u8, mirror: bool, v: [Z; 4], edges: [(Len, u8); 4]) -> Piece {
        let xy = v.map(|z| {
            let (x, y) = z.to_f64();
            [x, y]
        });
        let (mut bbox, mut convex) =
            ([f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY], true);
        for [x, y] in xy {
            bbox = [bbox[0].min(x), bbox[1].max(x), bbox[2].min(y), bbox[3].max(y)];
        }
        let mut piece = Piece {
            owner,
            shape,
            mirror,
            v,
            edges,
            parent: None,
            own: 0,
            depth: 0,
            glued: 0,
            bbox,
            convex: true,
            xy,
        };
        for i in 0..4 {
            convex &= zomega::orient(piece.pt(i), piece.pt((i + 1) % 4), piece.pt((i + 2) % 4))
                == std::cmp::Ordering::Greater;
        }
        piece.convex = convex;
        piece
    }

    /// Vertex `i`'s rounded coordinates.
    #[inline]
    fn xy(&self, i: usize) -> [f64; 2] {
        self.xy[i]
    }

    /// Vertex `i` with its rounded coordinates, for the filtered predicates.
    #[inline]
    pub fn pt(&self, i: usize) -> Pt {
        Pt { z: self.v[i], x: self.xy[i][0], y: self.xy[i][1] }
    }

    /// The four vertices as [`Pt`]s.
    #[inline]
    pub fn pts(&self) -> [Pt; 4] {
        std::array::from_fn(|i| self.pt(i))
    }

    /// Edge `i` as (start, end).
    pub fn edge(&self, i: usize) -> (Z, Z) {
        (self.v[i], self.v[(i + 1) % 4])
    }
}

const MAGIC: [u8; 2] = *b"TG";

/// Turns in a game: P1 opens with one piece, then two pieces a turn, and P2 ends with one.
fn total_turns(t: &ShapeTable) -> u8 {
    let per_player: u32 = t.shapes.iter().map(|s| u32::from(s.count)).sum();
    // P1: 1 + 2k pieces, P2: 2k + 1 → turns = 1 + 2k + 1 with 2k = per_player − 1.
    u8::try_from(per_player + 1).expect("at most 8 shapes of at most 60")
}

/// A TriGolden game state.
///
/// Equality and hashing cover the position (options, pieces, stock, turn, scores, scored
/// points, outcome), not the tracker derived from it.
#[derive(Clone, Debug)]
pub struct TriGolden {
    options: Options,
    pieces: Vec<Piece>,
    stock: [[u8; 8]; 2],
    /// Complete turns played.
    turn: u8,
    /// In the middle of a two-piece turn (the last piece is the turn's first).
    mid: bool,
    scores: [i32; 2],
    /// (TriGolden piece, point) pairs already scored, sorted.
    scored: Vec<(u8, Z)>,
    outcome: Option<Outcome>,
    total_turns: u8,
    /// Every method of the position, kept incrementally.
    tracker: Tracker,
    /// During a two-piece turn: the methods the first piece removed (the second piece may be
    /// one of them, placed first in the other order).
    removed_by_first: Vec<Method>,
}

impl PartialEq for TriGolden {
    fn eq(&self, o: &Self) -> bool {
        self.options == o.options
            && self.pieces == o.pieces
            && self.stock == o.stock
            && self.turn == o.turn
            && self.mid == o.mid
            && self.scores == o.scores
            && self.scored == o.scored
            && self.outcome == o.outcome
    }
}

impl Eq for TriGolden {}

impl std::hash::Hash for TriGolden {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.options.hash(h);
        self.pieces.hash(h);
        self.stock.hash(h);
        (self.turn, self.mid, self.scores).hash(h);
        self.scored.hash(h);
        self.outcome.hash(h);
    }
}

/// A bracing contact a candidate piece makes with the board.
#[derive(Copy, Clone, Debug)]
struct Contact {
    /// On a board piece's edge (piece, edge): the candidate's vertex lies in it. None: a board
    /// vertex lies in the candidate's own edge.
    on_board: Option<(u8, u8)>,
    point: Z,
}

/// Bracing contacts between a new piece `n` and the board (board glue as given).
fn contacts_with(board: &[Piece], n: &Piece) -> Vec<Contact> {
    let mut out = Vec::new();
    for (qi, q) in board.iter().enumerate() {
        if let Some(s) = pair::meet(q, n) {
            pair::contacts(qi, q, n, &s, &mut out);
        }
    }
    out
}

impl TriGolden {
    /// The pieces on the board, in the order placed.
    pub fn pieces(&self) -> &[Piece] {
        &self.pieces
    }

    /// Each player's points so far.
    pub fn scores(&self) -> [i32; 2] {
        self.scores
    }

    /// Pieces of `shape` that `seat` has still to place.
    pub fn stock(&self, seat: Seat, shape: usize) -> u8 {
        self.stock[seat.index()][shape]
    }

    /// Complete turns played.
    pub fn turns_played(&self) -> u8 {
        self.turn
    }

    /// Turns in a game (28 with the default set).
    pub fn total_turns(&self) -> u8 {
        self.total_turns
    }

    /// The (TriGolden piece, point) pairs scored so far.
    pub fn scored_points(&self) -> &[(u8, Z)] {
        &self.scored
    }

    /// The player whose turn number `t` it is: P1 on even turns.
    fn mover_of(t: u8) -> Seat {
        if t.is_multiple_of(2) { Seat::First } else { Seat::Second }
    }

    /// The player to move (meaningful while the game is not over).
    pub fn mover(&self) -> Seat {
        Self::mover_of(self.turn)
    }

    fn is_single_turn(&self) -> bool {
        self.turn == 0 || self.turn + 1 == self.total_turns
    }

    /// The piece `action` would put on the board (its owner, shape and vertices), without
    /// checking that it is legal: what a client draws as a placement's ghost. `None` when the
    /// shape or target does not exist or the edge lengths do not match.
    pub fn ghost(&self, action: Action) -> Option<Piece> {
        match action {
            Action::Open { shape, mirror } => {
                let s = self.options.shapes.shapes.get(usize::from(shape))?;
                let (v, edges) = s.oriented(mirror);
                Some(Piece::new(Seat::First, shape, mirror, v, edges))
            }
            Action::Place(p) => self.shape_at(&self.pieces, p),
        }
    }

    /// The piece `p` would place on `board`, if its geometry fits (lengths match).
    fn shape_at(&self, board: &[Piece], p: Place) -> Option<Piece> {
        let t = board.get(usize::from(p.target))?;
        let shape = self.options.shapes.shapes.get(usize::from(p.shape))?;
        let (e, k) = (usize::from(p.edge), usize::from(p.own));
        if e > 3 || k > 3 {
            return None;
        }
        let (_, se) = shape.oriented(p.mirror);
        let (tl, td) = t.edges[e];
        if se[k].0 != tl {
            return None;
        }
        let rot = (i32::from(td) + 5 - i32::from(se[k].1)).rem_euclid(10);
        let turned = shape.turned(p.mirror, rot as usize);
        let (_, q) = t.edge(e);
        let shift = q - turned[k];
        let v = turned.map(|z| z + shift);
        let edges = se.map(|(l, d)| (l, ((i32::from(d) + rot) % 10) as u8));
        let mut n = Piece::new(t.owner.other(), p.shape, p.mirror, v, edges);
        n.parent = Some((p.target, p.edge));
        n.own = p.own;
        n.depth = t.depth + 1;
        n.glued = 1 << k;
        Some(n)
    }

    /// The incremental tracker's methods.
    pub fn tracker(&self) -> &Tracker {
        &self.tracker
    }

    /// The link sets (single, double, co-live), kept by the tracker.
    pub fn links(&self) -> tracker::Links {
        self.tracker.links(self)
    }

    /// The link sets from methods recomputed by brute force (for tests).
    pub fn links_brute(&self) -> tracker::Links {
        tracker::Links::of(self, &self.methods_brute(&self.pieces))
    }

    /// Every edge's state (live, or dead and how), from the tracker.
    pub fn edge_states(&self) -> Vec<[tracker::EdgeState; 4]> {
        self.tracker.edge_states(&self.pieces, &self.stock)
    }

    /// Every legal single placement (rules 1–4) for `seat` now, from the tracker, ordered by
    /// placement.
    fn singles(&self, seat: Seat) -> Vec<&Method> {
        self.tracker.for_seat(&self.pieces, self.stock[seat.index()], seat).collect()
    }

    /// Every method on `board` for both players, stock aside (what the tracker holds), by
    /// brute force: the full recompute.
    pub fn methods_brute(&self, board: &[Piece]) -> Vec<Method> {
        let all = [[u8::MAX; 8]; 2];
        let mut out = self.singles_brute_with(board, Seat::First, &all[0]);
        out.extend(self.singles_brute_with(board, Seat::Second, &all[1]));
        out.sort_by_key(|m| m.place);
        out
    }

    /// Every legal single placement (rules 1–4) for `seat` on `board`, with stock, by brute
    /// force over the board: the full recompute the tracker is checked against.
    pub fn singles_brute(&self, board: &[Piece], seat: Seat) -> Vec<Method> {
        self.singles_brute_with(board, seat, &self.stock[seat.index()])
    }

    fn singles_brute_with(&self, board: &[Piece], seat: Seat, stock: &[u8; 8]) -> Vec<Method> {
        let mut out = Vec::new();
        for (ti, t) in board.iter().enumerate() {
            if t.owner == seat {
                continue;
            }
            for e in 0..4u8 {
                if t.glued & (1 << e) != 0 {
                    continue;
                }
                for (si, shape) in self.options.shapes.shapes.iter().enumerate() {
                    if stock[si] == 0 {
                        continue;
                    }
                    for mirror in [false, true] {
                        let (_, se) = shape.oriented(mirror);
                        for own in 0..4u8 {
                            if se[usize::from(own)].0 != t.edges[usize::from(e)].0 {
                                continue;
                            }
                            let p = Place { target: ti as u8, edge: e, shape: si as u8, mirror, own };
                            let Some(n) = self.shape_at(board, p) else { continue };
                            if board.iter().all(|x| pair::clear_of(&n, x)) {
                                out.push(Method {
                                    id: 0,
                                    place: p,
                                    piece: n,
                                    contacts: contacts_with(board, &n),
                                });
                            }
                        }
                    }
                }
            }
        }
        out
    }

    /// Is there a bracing contact involving `a` or `b` once both are down (rule 6)? A contact
    /// on an edge glued since it was recorded, or on the edge the other piece glues, does not
    /// count.
    fn braces(&self, a: &Method, b: &Method) -> bool {
        let counts = |c: &Contact, other: &Place| match c.on_board {
            Some((q, e)) => {
                (q, e) != (other.target, other.edge)
                    && self.pieces[usize::from(q)].glued & (1 << e) == 0
                    && !(self.options.rule6_new_point && self.scored.binary_search(&(q, c.point)).is_ok())
            }
            None => true,
        };
        a.contacts.iter().any(|c| counts(c, &b.place))
            || b.contacts.iter().any(|c| counts(c, &a.place))
            || pair::mutual_contact(&a.piece, &b.piece)
    }

    /// Can `a` and `b` be one turn's two pieces (rules 1–6, in either order), with `stock` the
    /// mover's stock at the turn's start? Both must be legal singles at the turn's start.
    fn pair_ok(&self, a: &Method, b: &Method, stock: &[u8; 8]) -> bool {
        let (pa, pb) = (&a.place, &b.place);
        if (pa.target, pa.edge) == (pb.target, pb.edge) {
            return false;
        }
        if pa.shape == pb.shape && stock[usize::from(pa.shape)] < 2 {
            return false;
        }
        if !pair::compatible(&a.piece, &b.piece) {
            return false;
        }
        pa.target == pb.target || self.braces(a, b)
    }

    /// Does `seat` have a co-live pair now: two pieces on two edges of one opponent piece
    /// that can be placed together?
    fn has_co_live(&self, seat: Seat) -> bool {
        let singles = self.singles(seat);
        let stock = &self.stock[seat.index()];
        for (i, a) in singles.iter().enumerate() {
            for b in &singles[i + 1..] {
                if b.place.target != a.place.target {
                    break; // grouped by target
                }
                if b.place.edge != a.place.edge && self.pair_ok(a, b, stock) {
                    return true;
                }
            }
        }
        false
    }

    /// The obligation for the player starting turn `self.turn`: a co-live pair, or on the last
    /// turn any legal placement.
    fn obligation_met(&self) -> bool {
        let seat = self.mover();
        if self.turn + 1 == self.total_turns {
            !self.singles(seat).is_empty()
        } else {
            self.has_co_live(seat)
        }
    }

    /// Every complete legal turn from a turn start, each as its actions (pairs listed once,
    /// in the order they are first legal as clicks).
    pub fn legal_turns(&self) -> Vec<Vec<Action>> {
        if self.outcome.is_some() || self.mid {
            return Vec::new();
        }
        if self.turn == 0 {
            let mut v = Vec::new();
            self.legal_actions(&mut v);
            return v.into_iter().map(|a| vec![a]).collect();
        }
        let seat = self.mover();
        let singles = self.singles(seat);
        if self.is_single_turn() {
            return singles.into_iter().map(|c| vec![Action::Place(c.place)]).collect();
        }
        let stock = &self.stock[seat.index()];
        let mut out = Vec::new();
        for (i, a) in singles.iter().enumerate() {
            for b in &singles[i + 1..] {
                if self.pair_ok(a, b, stock) {
                    out.push(vec![Action::Place(a.place), Action::Place(b.place)]);
                }
            }
        }
        out
    }

    /// How many complete legal turns there are from a turn start: `legal_turns().len()`,
    /// without listing them.
    pub fn count_turns(&self) -> u64 {
        if self.outcome.is_some() || self.mid {
            return 0;
        }
        self.count_turns_here()
    }

    /// Arbitration as rule 5 asks it, at a turn start after the opening: the player whose turn
    /// starts now, whether the opponent's last turn left them the co-live pair (or, before
    /// the final single-piece turn, the placement) the rules oblige, and how many complete
    /// legal turns they have. Also answered when the engine has just ended the game by
    /// arbitration. `None` mid-turn, at the opening and after the last turn.
    pub fn arbitration(&self) -> Option<Arbitration> {
        if self.mid || self.turn == 0 || self.turn >= self.total_turns {
            return None;
        }
        Some(Arbitration {
            seat: self.mover(),
            obligation_met: self.obligation_met(),
            legal_turns: self.count_turns_here(),
        })
    }

    fn count_turns_here(&self) -> u64 {
        if self.turn == 0 {
            return 2 * self.options.shapes.shapes.len() as u64;
        }
        let seat = self.mover();
        let singles = self.singles(seat);
        if self.is_single_turn() {
            return singles.len() as u64;
        }
        let stock = &self.stock[seat.index()];
        let mut n = 0;
        for (i, a) in singles.iter().enumerate() {
            n += singles[i + 1..].iter().filter(|b| self.pair_ok(a, b, stock)).count() as u64;
        }
        n
    }

    fn finish_turn(&mut self, new: usize) {
        self.score_turn(new);
        self.turn += 1;
        self.mid = false;
        if self.turn == self.total_turns {
            self.outcome = Some(Outcome::on_points(self.scores));
        } else if !self.obligation_met() {
            self.outcome = Some(Outcome::decisive(self.mover(), self.scores));
        }
    }

    /// Scores the bracing structures that appear with the last `new` pieces.
    fn score_turn(&mut self, new: usize) {
        let first_new = self.pieces.len() - new;
        for (qi, v, to, points) in bracing_points(&self.pieces, first_new, &self.scored, self.options.scoring)
        {
            if let Some(s) = to {
                self.scores[s.index()] += points;
            }
            let at = self.scored.binary_search(&(qi, v)).unwrap_err();
            self.scored.insert(at, (qi, v));
        }
    }

    /// The points each player would score if `new` pieces went down now (one turn's scoring,
    /// the pieces' targets glued), and whether any bracing structure would appear at all.
    pub fn points_if(&self, new: &[Piece]) -> ([i32; 2], bool) {
        let mut board = self.pieces.clone();
        for p in new {
            let (t, e) = p.parent.expect("a placed piece has a target");
            board[usize::from(t)].glued |= 1 << e;
            board.push(*p);
        }
        let found = bracing_points(&board, self.pieces.len(), &self.scored, self.options.scoring);
        let mut pts = [0; 2];
        for (_, _, to, points) in &found {
            if let Some(s) = to {
                pts[s.index()] += points;
            }
        }
        (pts, !found.is_empty())
    }

    /// The points each player would score from the bracing contacts between `a` and `b` alone
    /// if both went down now: the user's AI's score of a double link, which leaves out what
    /// either piece braces with the board (pieces from [`TriGolden::ghost`]).
    pub fn mutual_points(&self, a: &Piece, b: &Piece) -> [i32; 2] {
        let mut board = self.pieces.clone();
        for p in [a, b] {
            let (t, e) = p.parent.expect("a placed piece has a target");
            board[usize::from(t)].glued |= 1 << e;
            board.push(*p);
        }
        let n = self.pieces.len();
        let (pa, pb) = (&board[n], &board[n + 1]);
        let mut contacts = Vec::new();
        if let Some(s) = pair::meet(pa, pb) {
            pair::contacts(n, pa, pb, &s, &mut contacts);
            pair::contacts(n + 1, pb, pa, &s.swapped(), &mut contacts);
        }
        let mut pts = [0; 2];
        let mut seen: Vec<(u8, Z)> = Vec::new();
        for c in contacts {
            // Each piece's vertices in the other's free edges, named by the edge's piece.
            let Some((q, _)) = c.on_board else { continue };
            if seen.contains(&(q, c.point)) {
                continue;
            }
            seen.push((q, c.point));
            let (qi, xi) = if usize::from(q) == n { (n, n + 1) } else { (n + 1, n) };
            let points = tree_distance(&board, qi, xi).saturating_sub(1) as i32;
            if let Some(s) = self.options.scoring.scorer(board[xi].owner, board[qi].owner) {
                pts[s.index()] += points;
            }
        }
        pts
    }

    /// Mid-turn: the turn's first piece as a method, the mover's stock at the turn's start, and
    /// the candidates for the second piece (legal singles at the turn's start: methods now, or
    /// ones the first piece removed). Which of them pair with the first is `pair_ok`'s call.
    fn second_candidates(&self) -> (Method, [u8; 8], Vec<&Method>) {
        let seat = self.mover();
        let n = self.pieces.len();
        let first = self.pieces[n - 1];
        let (target, edge) = first.parent.expect("placed");
        let place = Place { target, edge, shape: first.shape, mirror: first.mirror, own: first.own };
        let a = Method { id: 0, place, piece: first, contacts: contacts_with(&self.pieces[..n - 1], &first) };
        let mut stock = self.stock[seat.index()];
        stock[usize::from(first.shape)] += 1;
        let seconds = self
            .tracker
            .for_seat(&self.pieces, stock, seat)
            .chain(self.removed_by_first.iter().filter(|m| stock[usize::from(m.place.shape)] > 0))
            .filter(|m| m.place != place && self.pieces[usize::from(m.place.target)].owner != seat)
            .collect();
        (a, stock, seconds)
    }

    fn put(&mut self, p: Place) {
        let piece = self.shape_at(&self.pieces, p).expect("contract: a legal action");
        self.pieces[usize::from(p.target)].glued |= 1 << p.edge;
        self.stock[piece.owner.index()][usize::from(p.shape)] -= 1;
        self.pieces.push(piece);
        self.track();
    }

    /// Brings the tracker up to date with the last piece; remembers what the first piece of a
    /// two-piece turn removed.
    fn track(&mut self) {
        let first_of_two = !(self.mid || self.is_single_turn());
        let mut tracker = std::mem::take(&mut self.tracker);
        self.removed_by_first = tracker.placed(self, &self.pieces, first_of_two);
        self.tracker = tracker;
    }
}

impl Game for TriGolden {
    type Action = Action;
    type Options = Options;

    const NAME: &'static str = "trigolden";
    const STATE_VERSION: u8 = 1;

    /// At a turn start, the first clicks of the user's AI's candidate turns
    /// ([`lite::candidates`]: scoring links, else the best co-live pairs, never a turn that
    /// loses by arbitration when another exists) weigh 1 and every other click 0. `None` in
    /// the middle of a turn, and where the candidates hold every legal click (nothing to
    /// prefer).
    fn knowledge_priors(&self, actions: &[Action]) -> Option<Vec<f32>> {
        if !self.at_turn_start() || self.outcome().is_some() {
            return None;
        }
        let firsts: Vec<Action> =
            lite::candidates(self).into_iter().filter_map(|t| t.first().copied()).collect();
        let w: Vec<f32> = actions.iter().map(|a| if firsts.contains(a) { 1.0 } else { 0.0 }).collect();
        let hits = w.iter().filter(|&&x| x > 0.0).count();
        (hits > 0 && hits < actions.len()).then_some(w)
    }

    fn new_game(options: &Options) -> Self {
        let mut stock = [[0u8; 8]; 2];
        for (i, s) in options.shapes.shapes.iter().enumerate() {
            stock[0][i] = s.count;
            stock[1][i] = s.count;
        }
        TriGolden {
            total_turns: total_turns(&options.shapes),
            options: options.clone(),
            pieces: Vec::new(),
            stock,
            turn: 0,
            mid: false,
            scores: [0, 0],
            scored: Vec::new(),
            outcome: None,
            tracker: Tracker::default(),
            removed_by_first: Vec::new(),
        }
    }

    fn options(&self) -> &Options {
        &self.options
    }

    fn to_move(&self) -> Actor {
        Actor::Player(self.mover())
    }

    fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    fn at_turn_start(&self) -> bool {
        !self.mid
    }

    fn legal_actions(&self, out: &mut Vec<Action>) {
        out.clear();
        if self.outcome.is_some() {
            return;
        }
        if self.turn == 0 {
            for (si, _) in self.options.shapes.shapes.iter().enumerate() {
                for mirror in [false, true] {
                    out.push(Action::Open { shape: si as u8, mirror });
                }
            }
            return;
        }
        let seat = self.mover();
        if self.mid {
            // The second piece: legal at the turn's start (a method now, or one the first
            // piece removed) and forming a legal pair with the first, in either order.
            let (a, stock, mut seconds) = self.second_candidates();
            seconds.sort_by_key(|m| m.place);
            for b in seconds {
                if self.pair_ok(&a, b, &stock) {
                    out.push(Action::Place(b.place));
                }
            }
            return;
        }
        let singles = self.singles(seat);
        if self.is_single_turn() {
            out.extend(singles.into_iter().map(|c| Action::Place(c.place)));
            return;
        }
        let stock = &self.stock[seat.index()];
        for (i, a) in singles.iter().enumerate() {
            // Partners on the same target piece first: they need no bracing, so most clicks
            // find one there. Singles are grouped by target.
            let t = a.place.target;
            let lo = singles.partition_point(|m| m.place.target < t);
            let hi = singles.partition_point(|m| m.place.target <= t);
            let partner = |(j, b): (usize, &&Method)| j != i && self.pair_ok(a, b, stock);
            let found = singles[lo..hi].iter().enumerate().map(|(j, b)| (j + lo, b)).any(partner)
                || singles[..lo].iter().enumerate().any(partner)
                || singles[hi..].iter().enumerate().map(|(j, b)| (j + hi, b)).any(partner);
            if found {
                out.push(Action::Place(a.place));
            }
        }
    }

    fn play_unchecked(&mut self, action: Action) {
        match action {
            Action::Open { shape, mirror } => {
                let s = &self.options.shapes.shapes[usize::from(shape)];
                let (v, edges) = s.oriented(mirror);
                self.pieces.push(Piece::new(Seat::First, shape, mirror, v, edges));
                self.track();
                self.stock[0][usize::from(shape)] -= 1;
                self.finish_turn(1);
            }
            Action::Place(p) => {
                self.put(p);
                if self.is_single_turn() {
                    self.finish_turn(1);
                } else if self.mid {
                    self.finish_turn(2);
                } else {
                    self.mid = true;
                }
            }
        }
    }

    /// Same distribution as the generic playout (each click uniform over the legal clicks),
    /// by rejection: a random method is drawn until one is a legal click, which avoids listing
    /// every legal click of a two-piece turn.
    fn random_playout(&mut self, rng: &mut crate::Rng) {
        use rand::RngExt;
        let mut buf = Vec::new();
        while self.outcome.is_none() {
            let seat = self.mover();
            let pick = if self.turn == 0 || self.is_single_turn() {
                None
            } else if !self.mid {
                let singles = self.singles(seat);
                let stock = &self.stock[seat.index()];
                (0..2 * singles.len().max(1))
                    .map(|_| singles.get(rng.random_range(0..singles.len().max(1))))
                    .find_map(|a| {
                        let a = a?;
                        singles
                            .iter()
                            .any(|b| !std::ptr::eq(*b, *a) && self.pair_ok(a, b, stock))
                            .then_some(a.place)
                    })
            } else {
                let (a, stock, seconds) = self.second_candidates();
                (0..2 * seconds.len().max(1))
                    .map(|_| seconds.get(rng.random_range(0..seconds.len().max(1))))
                    .find_map(|b| b.filter(|b| self.pair_ok(&a, b, &stock)).map(|b| b.place))
            };
            let action = match pick {
                Some(p) => Action::Place(p),
                None => {
                    // Rare: few candidates are legal clicks; list them.
                    self.legal_actions(&mut buf);
                    buf[rng.random_range(0..buf.len())]
                }
            };
            self.play_unchecked(action);
        }
    }

    fn parse_action(&self, text: &str) -> Result<Action, ActionParseError> {
        let err = |reason: &str| ActionParseError { text: text.to_string(), reason: reason.to_string() };
        let t = text.trim();
        let shape = |s: &str| -> Result<(u8, bool, usize), ActionParseError> {
            let mut chars = s.chars();
            let c = chars.next().ok_or_else(|| err("a shape letter"))?;
            let idx = (c as u32)
                .checked_sub('A' as u32)
                .filter(|&i| (i as usize) < self.options.shapes.shapes.len());
            let idx = idx.ok_or_else(|| err("a shape letter of this table (A, B, …)"))? as u8;
            let mirror = chars.as_str().starts_with('\'');
            Ok((idx, mirror, 1 + usize::from(mirror)))
        };
        if let Some(rest) = t.strip_prefix("open:") {
            let (shape, mirror, used) = shape(rest)?;
            if used != rest.len() {
                return Err(err("open:<shape>['], e.g. open:B'"));
            }
            return Ok(Action::Open { shape, mirror });
        }
        let (target, rest) =
            t.split_once('.').ok_or_else(|| err("<piece>.<edge>:<shape>['']<own edge>, e.g. 3.1:A'2"))?;
        let (edge, rest) = rest.split_once(':').ok_or_else(|| err("<piece>.<edge>:<shape>['']<own edge>"))?;
        let target: u8 = target.parse().map_err(|_| err("a piece number"))?;
        let edge: u8 = edge.parse().ok().filter(|e| *e < 4).ok_or_else(|| err("an edge 0-3"))?;
        let (shape, mirror, used) = shape(rest)?;
        let own: u8 = rest[used..].parse().ok().filter(|e| *e < 4).ok_or_else(|| err("an own edge 0-3"))?;
        Ok(Action::Place(Place { target, edge, shape, mirror, own }))
    }

    /// Magic `TG`, version byte, the options (scoring mode, rule 6 variant, the shape table as text), then
    /// the actions that built the position; [`Game::decode`] replays and checks them.
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&MAGIC);
        out.push(Self::STATE_VERSION);
        out.push(self.options.scoring.code());
        out.push(u8::from(self.options.rule6_new_point));
        let table = self.options.shapes.to_string();
        out.extend_from_slice(&(table.len() as u32).to_le_bytes());
        out.extend_from_slice(table.as_bytes());
        out.push(self.pieces.len() as u8);
        for p in &self.pieces {
            let (target, edge) = p.parent.unwrap_or((0, 0));
            out.extend_from_slice(&[target, edge, p.shape, u8::from(p.mirror), p.own]);
        }
    }

    fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        let bad = |r: &str| DecodeError::Invalid(r.to_string());
        let trunc = |needed: usize| DecodeError::Truncated { needed, got: bytes.len() };
        if bytes.len() < 2 {
            return Err(trunc(2));
        }
        if bytes[..2] != MAGIC {
            return Err(DecodeError::WrongGame { expected: Self::NAME, found: [bytes[0], bytes[1]] });
        }
        let (&version, rest) = bytes[2..].split_first().ok_or(trunc(3))?;
        if version != Self::STATE_VERSION {
            return Err(DecodeError::Version { found: version, supported: Self::STATE_VERSION });
        }
        if rest.len() < 6 {
            return Err(trunc(9));
        }
        let scoring = ScoringMode::from_code(rest[0]).ok_or_else(|| bad("scoring mode"))?;
        let rule6_new_point = match rest[1] {
            0 => false,
            1 => true,
            _ => return Err(bad("rule 6 flag")),
        };
        let len = u32::from_le_bytes(rest[2..6].try_into().expect("4 bytes")) as usize;
        let rest = &rest[6..];
        if rest.len() < len + 1 {
            return Err(trunc(bytes.len() - rest.len() + len + 1));
        }
        let table = std::str::from_utf8(&rest[..len]).map_err(|_| bad("shape table is not UTF-8"))?;
        let shapes = ShapeTable::parse(table).map_err(|e| bad(&e.to_string()))?;
        let options = Options { scoring, shapes: Arc::new(shapes), rule6_new_point };
        let n = usize::from(rest[len]);
        let body = &rest[len + 1..];
        if body.len() < n * 5 {
            return Err(trunc(bytes.len() - body.len() + n * 5));
        }
        if body.len() > n * 5 {
            return Err(DecodeError::Trailing(body.len() - n * 5));
        }
        let mut g = TriGolden::new_game(&options);
        for (i, c) in body.chunks(5).enumerate() {
            if c[3] > 1 {
                return Err(bad("mirror flag"));
            }
            let a = if i == 0 {
                Action::Open { shape: c[2], mirror: c[3] == 1 }
            } else {
                Action::Place(Place { target: c[0], edge: c[1], shape: c[2], mirror: c[3] == 1, own: c[4] })
            };
            g.play(a).map_err(|e| bad(&format!("piece {i}: {e}")))?;
        }
        Ok(g)
    }
}

/// Tree distance between pieces `a` and `b` (edges of the attachment tree between them).
fn tree_distance(pieces: &[Piece], a: usize, b: usize) -> u32 {
    let (mut a, mut b, mut d) = (a, b, 0);
    while a != b {
        if pieces[a].depth >= pieces[b].depth {
            a = usize::from(pieces[a].parent.expect("not the root").0);
        } else {
            b = usize::from(pieces[b].parent.expect("not the root").0);
        }
        d += 1;
    }
    d
}

/// The bracing structures that appear on `pieces` with the pieces from `first_new` on and
/// were not `scored` before: (TriGolden piece, point, who scores, points), each once. The
/// bracing piece is the nearest to Q in the tree among those with a vertex at the point.
fn bracing_points(
    pieces: &[Piece],
    first_new: usize,
    scored: &[(u8, Z)],
    mode: ScoringMode,
) -> Vec<(u8, Z, Option<Seat>, i32)> {
    let mut found: Vec<(u8, Z)> = Vec::new();
    let mut contacts = Vec::new();
    // Only pairs with a new piece in them, each once: a later new piece's pairs come with it.
    for ni in first_new..pieces.len() {
        for oi in (0..pieces.len()).filter(|&oi| oi != ni && (oi < first_new || oi < ni)) {
            let (n, o) = (&pieces[ni], &pieces[oi]);
            let Some(s) = pair::meet(n, o) else { continue };
            // Each piece's vertices in the other's free edges, named by the edge's piece.
            contacts.clear();
            pair::contacts(ni, n, o, &s, &mut contacts);
            pair::contacts(oi, o, n, &s.swapped(), &mut contacts);
            for c in &contacts {
                if let Some((q, _)) = c.on_board
                    && !found.contains(&(q, c.point))
                {
                    found.push((q, c.point));
                }
            }
        }
    }
    found
        .into_iter()
        .filter(|k| scored.binary_search(k).is_err())
        .map(|(qi, v)| {
            let q = usize::from(qi);
            let bracer = (0..pieces.len())
                .filter(|&x| x != q && pieces[x].v.contains(&v))
                .min_by_key(|&x| (tree_distance(pieces, q, x), x))
                .expect("a piece has this vertex");
            let points = tree_distance(pieces, q, bracer).saturating_sub(1) as i32;
            let (po, qo) = (pieces[bracer].owner, pieces[q].owner);
            (qi, v, mode.scorer(po, qo), points)
        })
        .collect()
}

/// Perft by turns: the number of distinct sequences of `depth` complete turns from `state`
/// (at a turn start), where a turn is the set of pieces it places.
///
/// The last turn is counted without being played ("bulk counting", as chess perft programs
/// do): its legal turns are enumerated and counted, never made. With `make_every_turn` every
/// turn of every sequence is played, the last ones too, so the count also runs
/// `play_unchecked` (scoring, tracker updates, the end-of-turn obligation) on every leaf.
pub fn perft(state: &TriGolden, depth: u32, make_every_turn: bool) -> u64 {
    if depth == 0 {
        return 1;
    }
    if depth == 1 && !make_every_turn {
        return state.count_turns();
    }
    let mut n = 0;
    for turn in state.legal_turns() {
        let mut child = state.clone();
        for a in turn {
            child.play_unchecked(a);
        }
        n += perft(&child, depth - 1, make_every_turn);
    }
    n
}

#[cfg(test)]
mod tests;
