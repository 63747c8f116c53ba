//! Untrusted positions: [`Setup`] (a hand-built or loaded position) is checked into a
//! [`BattleNumber`] by [`BattleNumber::from_setup`], and state bytes are decoded through the same
//! checks.

use super::bitboard::{BORDER, FULL, Squares, flood};
use super::{
    BattleNumber, CENTRE, EXTRACTIONS, HoleRule, Kind, LeftoverRule, Options, PER_KIND, PLACEMENTS, Pending,
    Piece, SQUARES, TriangleRegion, cell_code, cell_piece,
};
use crate::game::{DecodeError, Game, Seat};

/// A position at a turn boundary, as a person or a file describes it. The side to move, the
/// hands and the phase are derived from it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setup {
    /// The board, square `row * 7 + col`.
    pub board: [Option<Piece>; SQUARES],
    /// Extractions made by each seat (both 0 during placement).
    pub extracted: [u8; 2],
    /// Each seat's extraction total so far.
    pub extraction_total: [i32; 2],
    /// The first seat's placement score. Required once pieces have been extracted (it can no
    /// longer be computed from the board); checked against the board when it is full.
    pub placement_score: Option<i32>,
}

impl Default for Setup {
    fn default() -> Self {
        Setup { board: [None; SQUARES], extracted: [0; 2], extraction_total: [0; 2], placement_score: None }
    }
}

/// Why a [`Setup`] is not a Battle Number position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    /// The board text could not be read.
    #[error("board text: {0}")]
    Text(String),
    /// A seat has more than five pieces of a kind.
    #[error("{seat} seat has {count} {kind:?} pieces (at most 5)")]
    TooManyPieces {
        /// The seat.
        seat: Seat,
        /// The kind.
        kind: Kind,
        /// How many.
        count: u8,
    },
    /// The placement counts are not ones the turn order can produce.
    #[error("placement counts {0:?} are impossible (the first seat places first; 25 and 24 in all)")]
    PlacementCounts([u8; 2]),
    /// The position breaks a placement rule.
    #[error("board breaks a placement rule: {0}")]
    Board(&'static str),
    /// The extraction counts or totals are inconsistent.
    #[error("extraction state is inconsistent: {0}")]
    Extraction(&'static str),
}

impl Setup {
    /// Reads a board from text: 49 whitespace-separated cells, row 0 first. A cell is `.` for
    /// empty, or seat (`1` first, `2` second), kind letter (`S`, `D`, `C`, `T`, `X`) and rotation
    /// digit: `1C0` is the first seat's Corner Two at rotation 0.
    ///
    /// # Errors
    /// [`SetupError::Text`] naming the bad cell.
    pub fn parse_board(text: &str) -> Result<[Option<Piece>; SQUARES], SetupError> {
        let cells: Vec<&str> = text.split_whitespace().collect();
        if cells.len() != SQUARES {
            return Err(SetupError::Text(format!("expected 49 cells, found {}", cells.len())));
        }
        let mut board = [None; SQUARES];
        for (i, c) in cells.iter().enumerate() {
            if *c == "." {
                continue;
            }
            let b = c.as_bytes();
            let bad = || {
                SetupError::Text(format!("cell {} ({}): cannot read {c:?}", i, super::square_name(i as u8)))
            };
            if b.len() != 3 {
                return Err(bad());
            }
            let owner = match b[0] {
                b'1' => Seat::First,
                b'2' => Seat::Second,
                _ => return Err(bad()),
            };
            let kind = match b[1].to_ascii_uppercase() {
                b'S' => Kind::SingleOne,
                b'D' => Kind::DoubleTwo,
                b'C' => Kind::CornerTwo,
                b'T' => Kind::SurroundThree,
                b'X' => Kind::CrossZero,
                _ => return Err(bad()),
            };
            let rot = b[2].wrapping_sub(b'0');
            if rot >= kind.rotations() {
                return Err(bad());
            }
            board[i] = Some(Piece { owner, kind, rot });
        }
        Ok(board)
    }

    /// The board as text in the format [`Setup::parse_board`] reads, one row per line.
    pub fn board_text(board: &[Option<Piece>; SQUARES]) -> String {
        let mut s = String::new();
        for r in 0..7 {
            let row: Vec<String> = (0..7)
                .map(|c| match board[r * 7 + c] {
                    None => "  .".to_string(),
                    Some(p) => format!("{}{}{}", p.owner.index() + 1, &p.kind.code()[..1], p.rot),
                })
                .collect();
            s.push_str(row.join(" ").trim_start());
            s.push('\n');
        }
        s
    }
}

impl BattleNumber {
    /// Checks a setup and builds the position (at a turn boundary).
    ///
    /// # Errors
    /// [`SetupError`] when the setup breaks a rule or is inconsistent; nothing is built.
    pub fn from_setup(setup: &Setup, opts: Options) -> Result<BattleNumber, SetupError> {
        let mut s = BattleNumber::empty_state(opts);
        let mut counts = [[0u8; 5]; 2];
        for (sq, p) in setup.board.iter().enumerate() {
            if let Some(p) = *p {
                s.put(sq as u8, p);
                counts[p.owner.index()][p.kind as usize] += 1;
            }
        }
        for seat in Seat::BOTH {
            for kind in Kind::ALL {
                let count = counts[seat.index()][kind as usize];
                if count > PER_KIND {
                    return Err(SetupError::TooManyPieces { seat, kind, count });
                }
            }
        }
        let occ = s.occupied();
        let extracting = setup.extracted != [0, 0] || occ == FULL;
        if !extracting || setup.extracted == [0, 0] {
            // A board from the placement phase (or the full board it ends with): it must be one
            // the placement rules can build.
            check_placement_board(&mut s, &counts, opts)?;
        }
        if !extracting {
            if setup.extraction_total != [0, 0] || setup.placement_score.is_some_and(|p| p != 0) {
                return Err(SetupError::Extraction("scores before the board is full"));
            }
        } else {
            s.placed = PLACEMENTS;
            s.hand = [[0; 5]; 2];
            let ex = setup.extracted;
            if ex[0] > EXTRACTIONS || ex[1] > EXTRACTIONS || !(ex[1] == ex[0] || ex[1] == ex[0] + 1) {
                return Err(SetupError::Extraction(
                    "extraction counts impossible (second seat extracts first, five each)",
                ));
            }
            s.extracted = ex;
            s.mover = if ex[0] == ex[1] { Seat::Second } else { Seat::First };
            for seat in 0..2 {
                if (s.cross & s.own[seat]).count_ones() as u8 + ex[seat] > PER_KIND {
                    return Err(SetupError::Extraction("more Cross Zeros than the extractions left allow"));
                }
            }
            if ex == [0, 0] {
                let computed = s.region_score();
                if setup.placement_score.is_some_and(|p| p != computed) || setup.extraction_total != [0, 0] {
                    return Err(SetupError::Extraction("scores do not match the full board"));
                }
                s.placement_score = computed;
            } else {
                s.placement_score = setup.placement_score.ok_or(SetupError::Extraction(
                    "the placement score is required once pieces are extracted",
                ))?;
                s.extraction_total = setup.extraction_total;
            }
            const LIMIT: std::ops::RangeInclusive<i32> = -10_000..=10_000;
            if !LIMIT.contains(&s.placement_score) || s.extraction_total.iter().any(|t| !LIMIT.contains(t)) {
                return Err(SetupError::Extraction("score out of range"));
            }
        }
        s.update_outcome();
        Ok(s)
    }

    /// The position as a [`Setup`] (only at a turn boundary: a partial turn is dropped).
    pub fn to_setup(&self) -> Setup {
        let mut board = [None; SQUARES];
        for (sq, b) in board.iter_mut().enumerate() {
            *b = self.piece(sq as u8);
        }
        Setup {
            board,
            extracted: self.extracted,
            extraction_total: self.extraction_total,
            placement_score: (!self.in_placement()).then_some(self.placement_score),
        }
    }
}

/// Checks a board built by placements: counts in turn order, the centre opening, one connected
/// group, no facing solid edges, no hole, the leftover rule. Sets placements, hands and mover.
fn check_placement_board(
    s: &mut BattleNumber,
    counts: &[[u8; 5]; 2],
    opts: Options,
) -> Result<(), SetupError> {
    let occ = s.occupied();
    let placed = [s.own[0].count_ones() as u8, s.own[1].count_ones() as u8];
    if !(placed[0] == placed[1] || placed[0] == placed[1] + 1)
        || placed[0] > PLACEMENTS[0]
        || placed[1] > PLACEMENTS[1]
    {
        return Err(SetupError::PlacementCounts(placed));
    }
    s.placed = placed;
    for seat in 0..2 {
        for k in 0..5 {
            s.hand[seat][k] = PER_KIND - counts[seat][k];
        }
    }
    s.mover = if placed[0] == placed[1] { Seat::First } else { Seat::Second };
    if occ != 0 {
        match s.piece(CENTRE) {
            Some(Piece { owner: Seat::First, kind: Kind::CornerTwo, .. }) => {}
            _ => return Err(SetupError::Board("the centre must hold the first seat's Corner Two")),
        }
        if flood(1u64 << CENTRE, occ) != occ {
            return Err(SetupError::Board("pieces must form one side-connected group"));
        }
    }
    check_facing_edges(s)?;
    if opts.hole_rule == HoleRule::BorderConnected {
        let empty = FULL & !occ;
        if flood(BORDER & empty, empty) != empty {
            return Err(SetupError::Board("an empty group does not reach the border (a hole)"));
        }
    }
    if opts.leftover_rule == LeftoverRule::CheckAtLastPlacement
        && placed[1] == PLACEMENTS[1]
        && s.hand[1][Kind::CrossZero as usize] > 0
    {
        return Err(SetupError::Board("the second seat kept a Cross Zero"));
    }
    Ok(())
}

fn check_facing_edges(s: &BattleNumber) -> Result<(), SetupError> {
    let occ = s.occupied();
    let ctx = [
        super::shift(s.solid[2], 2),
        super::shift(s.solid[3], 3),
        super::shift(s.solid[0], 0),
        super::shift(s.solid[1], 1),
    ];
    for d in 0..4 {
        if s.solid[d] & ctx[d] & occ != 0 {
            return Err(SetupError::Board("two solid edges face each other"));
        }
    }
    Ok(())
}

const MAGIC: [u8; 2] = *b"BN";

/// Layout (version 1): `"BN"`, version, options (hole, leftover, triangle region: 1 byte each),
/// 49 cells (`0` empty, else `0x80 | seat << 5 | kind << 2 | rotation`), extractions (2 bytes),
/// placement score (i32 LE), extraction totals (2 × i32 LE), pending tag (`0` none, `1` a
/// placement square + 1 byte, `2` a path: current square + 1 byte, visited mask u64 LE).
pub(super) fn encode(s: &BattleNumber, out: &mut Vec<u8>) {
    out.extend_from_slice(&MAGIC);
    out.push(BattleNumber::STATE_VERSION);
    out.push(s.opts.hole_rule as u8);
    out.push(s.opts.leftover_rule as u8);
    out.push(s.opts.triangle_region as u8);
    out.extend_from_slice(&s.cells);
    out.extend_from_slice(&s.extracted);
    out.extend_from_slice(&s.placement_score.to_le_bytes());
    for t in s.extraction_total {
        out.extend_from_slice(&t.to_le_bytes());
    }
    match s.pending {
        Pending::None => out.push(0),
        Pending::Square(sq) => out.extend_from_slice(&[1, sq]),
        Pending::Path { cur, visited } => {
            out.extend_from_slice(&[2, cur]);
            out.extend_from_slice(&visited.to_le_bytes());
        }
    }
}

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self.pos + n;
        if end > self.b.len() {
            return Err(DecodeError::Truncated { needed: end, got: self.b.len() });
        }
        let s = &self.b[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }
    fn i32(&mut self) -> Result<i32, DecodeError> {
        Ok(i32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
}

pub(super) fn decode(bytes: &[u8]) -> Result<BattleNumber, DecodeError> {
    let mut r = Reader { b: bytes, pos: 0 };
    let magic = r.take(2)?;
    if magic != MAGIC {
        return Err(DecodeError::WrongGame { expected: BattleNumber::NAME, found: [magic[0], magic[1]] });
    }
    let version = r.u8()?;
    if version != BattleNumber::STATE_VERSION {
        return Err(DecodeError::Version { found: version, supported: BattleNumber::STATE_VERSION });
    }
    let inv = |m: &str| DecodeError::Invalid(m.to_string());
    let opts = Options {
        hole_rule: match r.u8()? {
            0 => HoleRule::BorderConnected,
            1 => HoleRule::Off,
            _ => return Err(inv("unknown hole rule")),
        },
        leftover_rule: match r.u8()? {
            0 => LeftoverRule::CheckAtLastPlacement,
            1 => LeftoverRule::Off,
            _ => return Err(inv("unknown leftover rule")),
        },
        triangle_region: match r.u8()? {
            0 => TriangleRegion::OwnSquare,
            1 => TriangleRegion::Pointed,
            _ => return Err(inv("unknown triangle region")),
        },
    };
    let mut setup = Setup::default();
    for (sq, cell) in r.take(SQUARES)?.iter().enumerate() {
        if *cell == 0 {
            continue;
        }
        let p = cell_piece(*cell).filter(|p| cell_code(*p) == *cell && p.rot < p.kind.rotations());
        setup.board[sq] =
            Some(p.ok_or_else(|| DecodeError::Invalid(format!("cell {sq} holds {cell:#04x}")))?);
    }
    setup.extracted = [r.u8()?, r.u8()?];
    let placement = r.i32()?;
    setup.extraction_total = [r.i32()?, r.i32()?];
    let pending = match r.u8()? {
        0 => Pending::None,
        1 => Pending::Square(r.u8()?),
        2 => {
            let cur = r.u8()?;
            let visited = u64::from_le_bytes(r.take(8)?.try_into().expect("8 bytes"));
            Pending::Path { cur, visited }
        }
        _ => return Err(inv("unknown pending-turn tag")),
    };
    if r.pos != bytes.len() {
        return Err(DecodeError::Trailing(bytes.len() - r.pos));
    }

    // A partial extraction has not removed its path yet, so the board is still a turn-start
    // board; a partial placement has not placed yet. Check that board, then the partial turn.
    let full = setup.board.iter().all(Option::is_some);
    setup.placement_score = (setup.extracted != [0, 0] || full).then_some(placement);
    if setup.placement_score.is_none() && placement != 0 {
        return Err(inv("placement score set before the board is full"));
    }
    let mut s = BattleNumber::from_setup(&setup, opts).map_err(|e| DecodeError::Invalid(e.to_string()))?;
    match pending {
        Pending::None => {}
        Pending::Square(sq) => {
            if s.outcome.is_some()
                || !s.in_placement()
                || sq >= SQUARES as u8
                || s.legal_square_clicks() & (1u64 << sq) == 0
            {
                return Err(inv("pending placement square is not a legal square"));
            }
            s.pending = pending;
        }
        Pending::Path { cur, visited } => {
            let mine = s.own[s.mover.index()];
            if s.outcome.is_some()
                || s.in_placement()
                || cur >= SQUARES as u8
                || visited & (1u64 << cur) == 0
                || visited & !s.occupied() != 0
                || visited & s.cross & mine != 0
            {
                return Err(inv("pending extraction path is not on the board"));
            }
            // The path must be one the mover could have walked, in some order, from one of
            // their pieces to `cur`.
            let mut budget = 100_000u32;
            let walkable = Squares(visited & mine & !s.cross)
                .any(|start| walk_covers(&s, start, 1u64 << start, cur, visited, &mut budget));
            if !walkable {
                return Err(inv("pending extraction path is not a walk the mover could make"));
            }
            s.pending = pending;
            if s.legal_square_clicks() == 0 {
                return Err(inv("pending extraction path cannot reach a Cross Zero"));
            }
        }
    }
    Ok(s)
}

/// Whether a walk from `at` (having visited `seen`) can cover exactly `target` and stop at
/// `end`. Bounded by `budget` steps so hostile input cannot make it run long.
fn walk_covers(s: &BattleNumber, at: u8, seen: u64, end: u8, target: u64, budget: &mut u32) -> bool {
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    if seen == target {
        return at == end;
    }
    let next = s.step_targets(at, seen) & target & !s.cross;
    Squares(next).any(|n| walk_covers(s, n, seen | (1u64 << n), end, target, budget))
}
