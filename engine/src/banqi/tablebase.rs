//! An endgame tablebase for Banqi positions with at most [`MAX_PIECES`] pieces, all face up.
//!
//! One table per material (the piece codes on the board, both colours present), built by
//! retrograde analysis when first asked for and kept in memory:
//!
//! 1. Every position is indexed by its pieces' squares (`32^k`, pieces in code order; squares
//!    that collide are never reached) and the colour to move.
//! 2. Captures leave the table. Their results come from the smaller table, read with the quiet
//!    count at 0 (a capture resets it), so a win that would need more than 60 quiet plies there
//!    counts as the draw it is. A capture that wins at once, or into a lost position for the
//!    opponent, is a win in 1; a side with no legal move has lost (distance 0).
//! 3. The quiet moves are resolved backwards, level by level: a position whose opponent has
//!    lost at distance `d` is won at `d + 1` for every predecessor (the previous mover's
//!    pieces stepped back to an empty neighbour); a position all of whose moves lead to the
//!    opponent's wins is lost at one more than the longest of them. What is never resolved is
//!    a draw (the play can go on for ever, so repetition or the 60-ply rule ends it).
//!
//! Distances count plies to the next capture or the end of the game (DTZ), which is what the
//! 60-ply rule needs: a position `q` quiet plies after the last flip or capture is decided
//! only if `q + d ≤ 60` ([`Tablebase::probe`]); otherwise the losing side can run the clock
//! out.
//!
//! A table built once can be kept: [`Tablebase::encode`] writes it in a checked format (magic,
//! [`TABLE_VERSION`], material, values, CRC-32) and a [`TableStore`] the caller supplies (a
//! directory, say: the engine reads no files) hands it back to later processes, which load a
//! 4-piece table in milliseconds instead of building it in half a second.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Banqi, FACE_DOWN, Kind, NEIGHBOURS, NO_PROGRESS_LIMIT, SQUARES};

/// Most pieces a table holds in play (a search's tables, and the tables kept on disk).
pub const MAX_PIECES: usize = 4;

/// Most pieces an analysis's tables hold ([`Tablebase::for_analysis`]): a 5-piece table has
/// 67 M entries (134 MB) and takes tens of seconds to build, too slow for a timed move but
/// fine for judging finished games.
pub const ANALYSIS_PIECES: usize = 5;

/// A tablebase result for the side to move.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Wdl {
    /// Won: the winner can force a capture or the end of the game within this many plies
    /// (and what follows is still won).
    Win(u16),
    /// Lost: the loser can hold the capture or the end off for this many plies, no more.
    Loss(u16),
    /// Drawn.
    Draw,
}

const DRAW: u16 = 0;
const LOSS: u16 = 0x8000;

fn decode(v: u16) -> Wdl {
    match v {
        DRAW => Wdl::Draw,
        v if v & LOSS != 0 => Wdl::Loss(v & !LOSS),
        v => Wdl::Win(v),
    }
}

/// Applies the 60-ply rule to a result `quiet` plies after the last capture or flip.
fn with_clock(w: Wdl, quiet: u8) -> Wdl {
    let left = u16::from(NO_PROGRESS_LIMIT.saturating_sub(quiet));
    match w {
        Wdl::Win(d) | Wdl::Loss(d) if d > left => Wdl::Draw,
        w => w,
    }
}

struct Table {
    values: Vec<u16>,
}

/// The meaning of a table's values. Bump it whenever the analysis changes what a stored value
/// means, so that no process reads a table an older analysis wrote.
pub const TABLE_VERSION: u32 = 1;

/// The first bytes of an encoded table.
const MAGIC: &[u8; 8] = b"ZPBQTB\r\n";

/// Keeps encoded tables between processes ([`Tablebase::encode`]'s bytes, by material). The
/// engine reads and writes no files; a caller that may supplies a store.
pub trait TableStore: Send + Sync {
    /// The bytes saved for `material`, if any (they are checked before use).
    fn load(&self, material: &[u8]) -> Option<Vec<u8>>;
    /// Keeps `bytes` for `material`; a store that fails simply forgets.
    fn save(&self, material: &[u8], bytes: &[u8]);
}

/// Why encoded bytes are not a table.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TableFileError {
    /// The bytes do not start with the table magic.
    #[error("not a zeroplay Banqi table (bad magic)")]
    Magic,
    /// Written by another version of the analysis.
    #[error("table version {found}, this build reads {TABLE_VERSION}")]
    Version {
        /// The version in the file.
        found: u32,
    },
    /// The material is not 2 to [`MAX_PIECES`] ascending piece codes of both colours.
    #[error("bad material {0:?}")]
    Material(Vec<u8>),
    /// The length does not match the material.
    #[error("{found} bytes, a table of this material has {expected}")]
    Length {
        /// Bytes a table of this material has.
        expected: usize,
        /// Bytes given.
        found: usize,
    },
    /// The CRC-32 does not match the contents.
    #[error("checksum mismatch (the file is damaged)")]
    Checksum,
    /// A value no analysis writes (a position with two pieces on one square holding a result).
    #[error("impossible value at entry {0}")]
    Value(usize),
}

/// The tables built so far.
#[derive(Default)]
pub struct Tablebase {
    tables: HashMap<Vec<u8>, Table>,
    /// Measured build time per table entry, in ns (0: none measured yet), which decides
    /// whether a table fits before a deadline.
    ns_per_entry: f64,
    /// Where tables are loaded from before building and saved to after.
    store: Option<Arc<dyn TableStore>>,
    /// Tables loaded from the store.
    loaded: usize,
    /// Most pieces a table holds here (0: [`MAX_PIECES`]).
    max_pieces: usize,
}

/// Build time per entry assumed before one is measured (a 4-piece table of 2 M entries took
/// ~0.48 s on the 2-core CI machine).
const DEFAULT_NS_PER_ENTRY: f64 = 300.0;

fn colour(code: u8) -> usize {
    usize::from(code / 7)
}

fn kind(code: u8) -> Kind {
    Kind::ALL[usize::from(code % 7)]
}

/// `32^k`.
fn positions(k: usize) -> usize {
    1 << (5 * k)
}

fn index(squares: &[u8], side: usize) -> usize {
    squares.iter().fold(side, |i, &s| (i << 5) | usize::from(s))
}

/// The pieces and squares of `pos` in code order, if it is a table position.
fn material_of(pos: &Banqi, max_pieces: usize) -> Option<(Vec<u8>, Vec<u8>, usize)> {
    if pos.pending.is_some() || pos.pool.iter().any(|&n| n > 0) {
        return None;
    }
    let side = pos.colour_to_move()?.index();
    let mut pieces: Vec<(u8, u8)> = Vec::with_capacity(max_pieces);
    for (s, &c) in pos.board.iter().enumerate() {
        if c < FACE_DOWN {
            if pieces.len() == max_pieces {
                return None;
            }
            pieces.push((c, s as u8));
        }
    }
    pieces.sort_unstable();
    let codes: Vec<u8> = pieces.iter().map(|p| p.0).collect();
    let squares: Vec<u8> = pieces.iter().map(|p| p.1).collect();
    Some((codes, squares, side))
}

/// Whether a material has both colours (a table exists only then).
fn both_colours(material: &[u8]) -> bool {
    material.iter().any(|&c| colour(c) == 0) && material.iter().any(|&c| colour(c) == 1)
}

/// A move inside a position of a table: piece `piece` to square `to`, taking piece `taken`.
#[derive(Copy, Clone)]
struct TbMove {
    piece: usize,
    to: u8,
    taken: Option<usize>,
}

/// The legal actions of the side `side` with pieces `codes` on `squares`.
fn moves(codes: &[u8], squares: &[u8], side: usize, out: &mut Vec<TbMove>) {
    out.clear();
    let mut board = [u8::MAX; SQUARES];
    for (i, &s) in squares.iter().enumerate() {
        board[usize::from(s)] = i as u8;
    }
    for (i, (&c, &s)) in codes.iter().zip(squares).enumerate() {
        if colour(c) != side {
            continue;
        }
        let k = kind(c);
        for dir in 0..4 {
            let t = NEIGHBOURS[usize::from(s)][dir];
            if t == u8::MAX {
                continue;
            }
            match board[usize::from(t)] {
                u8::MAX => out.push(TbMove { piece: i, to: t, taken: None }),
                j => {
                    let j = usize::from(j);
                    if colour(codes[j]) != side && k.takes_adjacent(kind(codes[j])) {
                        out.push(TbMove { piece: i, to: t, taken: Some(j) });
                    }
                }
            }
            if k == Kind::Cannon {
                // Jump: past the first occupied square, the next occupied one.
                let mut x = t;
                let mut screened = false;
                while x != u8::MAX {
                    let j = board[usize::from(x)];
                    if j != u8::MAX {
                        if screened {
                            if colour(codes[usize::from(j)]) != side {
                                out.push(TbMove { piece: i, to: x, taken: Some(usize::from(j)) });
                            }
                            break;
                        }
                        screened = true;
                    }
                    x = NEIGHBOURS[usize::from(x)][dir];
                }
            }
        }
    }
}

impl Tablebase {
    /// An empty tablebase.
    pub fn new() -> Tablebase {
        Tablebase::default()
    }

    /// An empty tablebase that loads tables from `store` before building them and saves the
    /// ones it builds there.
    pub fn with_store(store: Arc<dyn TableStore>) -> Tablebase {
        Tablebase { store: Some(store), ..Tablebase::default() }
    }

    /// An empty tablebase whose tables hold up to [`ANALYSIS_PIECES`] pieces, with no store:
    /// for judging finished games (`zeroplay draws`), not for a timed search.
    pub fn for_analysis() -> Tablebase {
        Tablebase { max_pieces: ANALYSIS_PIECES, ..Tablebase::default() }
    }

    /// Most pieces a table holds in this tablebase.
    pub fn max_pieces(&self) -> usize {
        if self.max_pieces == 0 { MAX_PIECES } else { self.max_pieces }
    }

    /// Tables loaded from the store (the rest of [`Tablebase::tables`] were built here).
    pub fn loaded(&self) -> usize {
        self.loaded
    }

    /// The built table of `material` in the checked file format, or `None` if it is not built.
    pub fn encode(&self, material: &[u8]) -> Option<Vec<u8>> {
        let t = self.tables.get(material)?;
        let mut out = Vec::with_capacity(8 + 4 + 1 + material.len() + t.values.len() * 2 + 4);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&TABLE_VERSION.to_le_bytes());
        out.push(material.len() as u8);
        out.extend_from_slice(material);
        for v in &t.values {
            out.extend_from_slice(&v.to_le_bytes());
        }
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        Some(out)
    }

    /// Reads a table [`Tablebase::encode`] wrote and keeps it; returns its material.
    ///
    /// # Errors
    /// Bytes that are not a whole, undamaged table of this [`TABLE_VERSION`].
    pub fn insert_encoded(&mut self, bytes: &[u8]) -> Result<Vec<u8>, TableFileError> {
        let (material, table) = decode_table(bytes)?;
        self.tables.insert(material.clone(), table);
        Ok(material)
    }

    /// Loads `material` from the store; false if there is none or what it holds is not that
    /// table (it is then rebuilt and saved over).
    fn load(&mut self, material: &[u8]) -> bool {
        let Some(bytes) = self.store.as_ref().and_then(|s| s.load(material)) else {
            return false;
        };
        match decode_table(&bytes) {
            Ok((m, table)) if m == material => {
                self.tables.insert(m, table);
                self.loaded += 1;
                true
            }
            _ => false,
        }
    }

    /// Tables built.
    pub fn tables(&self) -> usize {
        self.tables.len()
    }

    /// Memory the tables use, in bytes.
    pub fn bytes(&self) -> usize {
        self.tables.values().map(|t| t.values.len() * 2).sum()
    }

    /// The result of `pos` for the side to move, under the 60-ply rule, if `pos` is a table
    /// position whose table is built.
    pub fn probe(&self, pos: &Banqi) -> Option<Wdl> {
        let (codes, squares, side) = material_of(pos, self.max_pieces())?;
        let t = self.tables.get(&codes)?;
        Some(with_clock(decode(t.values[index(&squares, side)]), pos.quiet))
    }

    /// Builds every table `pos` can reach by captures (nothing if it has face-down pieces or
    /// more than `max_now` pieces), smallest first. With a `deadline`, a table whose estimated
    /// build time (from the tables built so far) would end past it is left for a later call,
    /// so a timed move never waits on a 4-piece table (~0.5 s); without one, all are built
    /// (a node-budgeted search stays deterministic). Returns how many tables were built.
    pub fn prepare(&mut self, pos: &Banqi, max_now: usize, deadline: Option<Instant>) -> usize {
        if pos.pool.iter().any(|&n| n > 0) {
            return 0;
        }
        let mut codes: Vec<u8> = pos.board.iter().copied().filter(|&c| c < FACE_DOWN).collect();
        if codes.len() > max_now {
            return 0;
        }
        codes.sort_unstable();
        let before = self.tables.len();
        // Every sub-multiset of at most max_pieces pieces with both colours (a capture that
        // leaves one colour ends the game): drop pieces one at a time.
        let mut stack = vec![codes];
        let mut seen = std::collections::HashSet::new();
        let mut wanted = Vec::new();
        while let Some(m) = stack.pop() {
            if !both_colours(&m) || !seen.insert(m.clone()) {
                continue;
            }
            if m.len() <= self.max_pieces() {
                wanted.push(m.clone());
            }
            for i in 0..m.len() {
                let mut sub = m.clone();
                sub.remove(i);
                stack.push(sub);
            }
        }
        wanted.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
        for m in wanted {
            if self.tables.contains_key(&m) || self.load(&m) {
                continue;
            }
            if let Some(d) = deadline {
                let rate = if self.ns_per_entry > 0.0 { self.ns_per_entry } else { DEFAULT_NS_PER_ENTRY };
                let estimate = Duration::from_nanos((2.0 * positions(m.len()) as f64 * rate) as u64);
                if Instant::now() + estimate > d {
                    continue;
                }
            }
            self.build(&m);
        }
        self.tables.len() - before
    }

    /// Builds the table of `material` (piece codes, ascending, both colours, at most
    /// [`Tablebase::max_pieces`]) and the tables its captures lead to.
    ///
    /// # Panics
    /// If `material` is not such a list.
    pub fn build(&mut self, material: &[u8]) {
        let max = self.max_pieces();
        assert!(
            (2..=max).contains(&material.len())
                && material.is_sorted()
                && material.iter().all(|&c| c < 14)
                && both_colours(material),
            "a table's material is 2 to {max} piece codes, ascending, of both colours: {material:?}"
        );
        if self.tables.contains_key(material) || self.load(material) {
            return;
        }
        for i in 0..material.len() {
            let mut sub = material.to_vec();
            sub.remove(i);
            if both_colours(&sub) {
                self.build(&sub);
            }
        }
        let started = Instant::now();
        let table = self.retrograde(material);
        let entries = table.values.len();
        // Small tables time mostly overhead; the rate comes from the large ones.
        if entries >= 1 << 16 {
            let rate = started.elapsed().as_nanos() as f64 / entries as f64;
            self.ns_per_entry = if self.ns_per_entry > 0.0 { self.ns_per_entry.max(rate) } else { rate };
        }
        self.tables.insert(material.to_vec(), table);
        if let Some(store) = &self.store {
            store.save(material, &self.encode(material).expect("just built"));
        }
    }

    fn retrograde(&self, codes: &[u8]) -> Table {
        let k = codes.len();
        let n = 2 * positions(k);
        let mut values = vec![DRAW; n];
        // Moves left that do not lose; u8::MAX: undecided forever (a draw by capture exists).
        let mut left = vec![0u8; n];
        let mut decided = vec![false; n];
        let mut levels: Vec<Vec<u32>> = vec![Vec::new(), Vec::new()];
        let mut squares = vec![0u8; k];
        let mut buf = Vec::with_capacity(32);
        let mut sub_squares = Vec::with_capacity(k);
        let mut sub_codes = Vec::with_capacity(k);
        for idx in 0..n {
            let side = idx >> (5 * k);
            for (i, s) in squares.iter_mut().enumerate() {
                *s = ((idx >> (5 * (k - 1 - i))) & 31) as u8;
            }
            if (1..k).any(|i| squares[..i].contains(&squares[i])) {
                decided[idx] = true;
                continue;
            }
            moves(codes, &squares, side, &mut buf);
            let (mut quiet, mut win, mut escape) = (0u32, false, false);
            for m in &buf {
                let Some(j) = m.taken else {
                    quiet += 1;
                    continue;
                };
                sub_codes.clear();
                sub_squares.clear();
                for i in 0..k {
                    if i != j {
                        sub_codes.push(codes[i]);
                        sub_squares.push(if i == m.piece { m.to } else { squares[i] });
                    }
                }
                if !sub_codes.iter().any(|&c| colour(c) != side) {
                    win = true; // the last enemy piece taken
                    break;
                }
                let t = &self.tables[&sub_codes];
                match with_clock(decode(t.values[index(&sub_squares, 1 - side)]), 0) {
                    Wdl::Loss(_) => {
                        win = true;
                        break;
                    }
                    Wdl::Draw => escape = true,
                    Wdl::Win(_) => {}
                }
            }
            if win {
                values[idx] = 1;
                decided[idx] = true;
                levels[1].push(idx as u32);
            } else if buf.is_empty() {
                values[idx] = LOSS;
                decided[idx] = true;
                levels[0].push(idx as u32);
            } else if escape {
                left[idx] = u8::MAX;
            } else if quiet == 0 {
                // Only captures that lose: the loser takes and loses at once.
                values[idx] = LOSS | 1;
                decided[idx] = true;
                levels[1].push(idx as u32);
            } else {
                left[idx] = quiet as u8;
            }
        }
        let mut d = 0;
        while d < levels.len() {
            let level = std::mem::take(&mut levels[d]);
            for &idx in &level {
                let idx = idx as usize;
                let lost = values[idx] & LOSS != 0;
                let side = idx >> (5 * k);
                for (i, s) in squares.iter_mut().enumerate() {
                    *s = ((idx >> (5 * (k - 1 - i))) & 31) as u8;
                }
                // The previous mover is the other side: step one of its pieces back.
                let mover = 1 - side;
                for i in 0..k {
                    if colour(codes[i]) != mover {
                        continue;
                    }
                    let at = squares[i];
                    for &from in &NEIGHBOURS[usize::from(at)] {
                        if from == u8::MAX || squares.contains(&from) {
                            continue;
                        }
                        squares[i] = from;
                        let p = index(&squares, mover);
                        squares[i] = at;
                        if decided[p] {
                            continue;
                        }
                        if lost {
                            values[p] = (d + 1) as u16;
                            decided[p] = true;
                            push(&mut levels, d + 1, p);
                        } else if left[p] != u8::MAX {
                            left[p] -= 1;
                            if left[p] == 0 {
                                values[p] = LOSS | (d + 1) as u16;
                                decided[p] = true;
                                push(&mut levels, d + 1, p);
                            }
                        }
                    }
                }
            }
            d += 1;
        }
        Table { values }
    }
}

/// Checks and reads an encoded table.
fn decode_table(bytes: &[u8]) -> Result<(Vec<u8>, Table), TableFileError> {
    let head = MAGIC.len() + 4 + 1;
    if bytes.len() < head || &bytes[..MAGIC.len()] != MAGIC {
        return Err(TableFileError::Magic);
    }
    let found = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if found != TABLE_VERSION {
        return Err(TableFileError::Version { found });
    }
    let k = usize::from(bytes[12]);
    let material =
        bytes.get(head..head + k).ok_or(TableFileError::Length { expected: head + k, found: bytes.len() })?;
    if !(2..=MAX_PIECES).contains(&k)
        || !material.is_sorted()
        || material.iter().any(|&c| c >= 14)
        || !both_colours(material)
    {
        return Err(TableFileError::Material(material.to_vec()));
    }
    let n = 2 * positions(k);
    let expected = head + k + 2 * n + 4;
    if bytes.len() != expected {
        return Err(TableFileError::Length { expected, found: bytes.len() });
    }
    let (body, crc) = bytes.split_at(expected - 4);
    if crc32fast::hash(body) != u32::from_le_bytes(crc.try_into().expect("4 bytes")) {
        return Err(TableFileError::Checksum);
    }
    let values: Vec<u16> =
        body[head + k..].chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
    // A position with two pieces on one square is never reached and always a draw.
    let mut squares = vec![0u8; k];
    for (idx, &v) in values.iter().enumerate() {
        if v == DRAW {
            continue;
        }
        for (i, s) in squares.iter_mut().enumerate() {
            *s = ((idx >> (5 * (k - 1 - i))) & 31) as u8;
        }
        if (1..k).any(|i| squares[..i].contains(&squares[i])) {
            return Err(TableFileError::Value(idx));
        }
    }
    Ok((material.to_vec(), Table { values }))
}

fn push(levels: &mut Vec<Vec<u32>>, d: usize, idx: usize) {
    if levels.len() <= d {
        levels.resize_with(d + 1, Vec::new);
    }
    levels[d].push(idx as u32);
}

#[cfg(test)]
mod tests {
    use rand::RngExt;

    use super::*;
    use crate::banqi::{Colour, EMPTY, Piece};
    use crate::game::Game;

    fn pos(text: &str) -> Banqi {
        Banqi::from_position_string(text).unwrap()
    }

    fn code(c: char) -> u8 {
        Piece::from_letter(c).unwrap().code()
    }

    fn built(text: &str) -> (Tablebase, Banqi) {
        let p = pos(text);
        let mut tb = Tablebase::new();
        tb.prepare(&p, MAX_PIECES, None);
        (tb, p)
    }

    #[test]
    fn a_deadline_leaves_the_tables_that_do_not_fit_for_later() {
        // General, advisor and pawn against advisor: one 4-piece table and its smaller ones.
        let p = pos("8/8/Gs4aS/8 r - 0 1");
        let mut tb = Tablebase::new();
        // A deadline already past: nothing fits, nothing is built, and nothing is probed.
        assert_eq!(tb.prepare(&p, MAX_PIECES, Some(Instant::now())), 0);
        assert_eq!(tb.probe(&p), None);
        // Time enough for the 3-piece tables (~65 K entries) but not the 4-piece one (~2 M).
        let small = tb.prepare(&p, MAX_PIECES, Some(Instant::now() + Duration::from_millis(100)));
        assert!(small > 0, "the small tables fit in 100 ms");
        assert_eq!(tb.probe(&p), None, "the 4-piece table does not fit in 100 ms");
        // No deadline: the rest is built, and only the rest.
        assert_eq!(tb.prepare(&p, MAX_PIECES, None), 1);
        assert!(tb.probe(&p).is_some());
    }

    /// A store in memory that counts what passes through it.
    #[derive(Default)]
    struct MemStore {
        files: std::sync::Mutex<HashMap<Vec<u8>, Vec<u8>>>,
    }

    impl TableStore for MemStore {
        fn load(&self, material: &[u8]) -> Option<Vec<u8>> {
            self.files.lock().unwrap().get(material).cloned()
        }
        fn save(&self, material: &[u8], bytes: &[u8]) {
            self.files.lock().unwrap().insert(material.to_vec(), bytes.to_vec());
        }
    }

    #[test]
    fn stored_tables_are_loaded_not_rebuilt_and_give_the_same_results() {
        let p = pos("8/8/Gs4aS/8 r - 0 1");
        let store = Arc::new(MemStore::default());
        let mut first = Tablebase::with_store(store.clone());
        let built = first.prepare(&p, MAX_PIECES, None);
        assert!(built > 1);
        assert_eq!(first.loaded(), 0);
        assert_eq!(store.files.lock().unwrap().len(), built, "every built table is saved");
        let mut second = Tablebase::with_store(store.clone());
        assert_eq!(second.prepare(&p, MAX_PIECES, None), built);
        assert_eq!(second.loaded(), built, "all loaded, none built");
        for (m, t) in &first.tables {
            assert_eq!(second.tables[m].values, t.values, "{m:?}");
        }
        // A damaged file is refused and the table is built again and saved over it.
        let m = store.files.lock().unwrap().keys().max_by_key(|m| m.len()).unwrap().clone();
        let good = store.files.lock().unwrap()[&m].clone();
        let mut bad = good.clone();
        let mid = bad.len() / 2;
        bad[mid] ^= 1;
        store.files.lock().unwrap().insert(m.clone(), bad);
        let mut third = Tablebase::with_store(store.clone());
        third.build(&m);
        assert_eq!(third.loaded(), third.tables() - 1, "the damaged table is rebuilt");
        assert_eq!(store.files.lock().unwrap()[&m], good);
    }

    #[test]
    fn encoded_tables_are_checked_before_use() {
        let mut tb = Tablebase::new();
        let m = vec![code('R'), code('h')];
        tb.build(&m);
        let good = tb.encode(&m).unwrap();
        assert_eq!(Tablebase::new().insert_encoded(&good), Ok(m.clone()));
        assert_eq!(tb.encode(&[code('G'), code('s')]), None, "not built");
        let err = |f: &dyn Fn(&mut Vec<u8>)| {
            let mut b = good.clone();
            f(&mut b);
            Tablebase::new().insert_encoded(&b).unwrap_err()
        };
        assert_eq!(err(&|b| b[0] = b'X'), TableFileError::Magic);
        assert_eq!(err(&|b| b.truncate(5)), TableFileError::Magic);
        assert_eq!(err(&|b| b[8] = 9), TableFileError::Version { found: 9 });
        assert!(matches!(err(&|b| b[12] = 5), TableFileError::Material(_) | TableFileError::Length { .. }));
        assert_eq!(err(&|b| b[13] = b[14]), TableFileError::Material(vec![m[1], m[1]]));
        assert!(matches!(
            err(&|b| {
                b.pop();
            }),
            TableFileError::Length { .. }
        ));
        assert_eq!(err(&|b| b[100] ^= 0x40), TableFileError::Checksum);
        // A result stored for an unreachable position (both pieces on square 0), checksum fixed.
        let e = err(&|b| {
            b[15] = 1;
            b.truncate(b.len() - 4);
            let crc = crc32fast::hash(b);
            b.extend_from_slice(&crc.to_le_bytes());
        });
        assert_eq!(e, TableFileError::Value(0));
    }

    #[test]
    fn taking_the_last_piece_wins_in_one() {
        let (tb, p) = built("8/8/8/Rh6 r - 0 1");
        assert_eq!(tb.probe(&p), Some(Wdl::Win(1)));
        // The horse to move cannot take the chariot; it runs, on the parity that saves it.
        let (tb, p) = built("8/8/8/Rh6 b - 0 1");
        assert_eq!(tb.probe(&p), Some(Wdl::Draw));
    }

    #[test]
    fn a_lone_chaser_on_the_wrong_parity_never_catches_a_runner() {
        // Chariot against horse: every move changes the Manhattan distance by one, so with the
        // distance even when the chariot is to move it never stands next to the horse on its
        // own turn. Those positions are draws; with the distance odd, the table decides.
        let mut tb = Tablebase::new();
        let m = vec![code('R'), code('h')];
        tb.build(&m);
        let table = &tb.tables[&m];
        let (mut draws, mut odd_wins) = (0, 0);
        for r in 0..32u8 {
            for h in 0..32u8 {
                if r == h {
                    continue;
                }
                let dist = (r % 8).abs_diff(h % 8) + (r / 8).abs_diff(h / 8);
                let v = decode(table.values[index(&[r, h], 0)]);
                if dist % 2 == 0 {
                    assert_eq!(v, Wdl::Draw, "R {r} h {h}");
                    draws += 1;
                } else if matches!(v, Wdl::Win(_)) {
                    odd_wins += 1;
                }
                // The horse never wins: it cannot take the chariot.
                assert!(!matches!(v, Wdl::Loss(_)), "R {r} h {h}: {v:?}");
            }
        }
        assert!(draws > 400 && odd_wins > 0, "{draws} draws, {odd_wins} odd wins");
    }

    #[test]
    fn the_sixty_ply_rule_turns_slow_wins_into_draws() {
        let mut tb = Tablebase::new();
        let m = vec![code('R'), code('h')];
        tb.build(&m);
        let table = &tb.tables[&m];
        let (idx, d) = (0..table.values.len())
            .filter_map(|i| match decode(table.values[i]) {
                Wdl::Win(d) if (4..60).contains(&d) => Some((i, d)),
                _ => None,
            })
            .max_by_key(|x| x.1)
            .expect("a slow win");
        let (r, h) = (((idx >> 5) & 31) as u8, (idx & 31) as u8);
        let mut cells = ['.'; 32];
        cells[r as usize] = 'R';
        cells[h as usize] = 'h';
        let text = |quiet: u8| {
            let rows: Vec<String> = (0..4)
                .rev()
                .map(|row| {
                    let mut s = String::new();
                    let mut run = 0;
                    for col in 0..8 {
                        let c = cells[row * 8 + col];
                        if c == '.' {
                            run += 1;
                        } else {
                            if run > 0 {
                                s.push_str(&run.to_string());
                                run = 0;
                            }
                            s.push(c);
                        }
                    }
                    if run > 0 {
                        s.push_str(&run.to_string());
                    }
                    s
                })
                .collect();
            format!("{} r - {quiet} 1", rows.join("/"))
        };
        let exact = NO_PROGRESS_LIMIT - d as u8;
        assert_eq!(tb.probe(&pos(&text(exact))), Some(Wdl::Win(d)));
        assert_eq!(tb.probe(&pos(&text(exact + 1))), Some(Wdl::Draw));
    }

    /// The result within `depth` plies by plain minimax over the game's own rules: a capture
    /// that leaves the game going is scored by the smaller table (already checked itself).
    fn plain(p: &Banqi, depth: u16, tb: &Tablebase) -> Option<Wdl> {
        if depth == 0 {
            return None;
        }
        let mut actions = Vec::new();
        p.legal_actions(&mut actions);
        let me = p.side();
        let (mut best_win, mut worst_loss, mut unknown) = (None::<u16>, None::<u16>, false);
        for a in actions {
            let mut c = p.clone();
            c.play_unchecked(a);
            let pieces = |g: &Banqi| g.board.iter().filter(|&&x| x < FACE_DOWN).count();
            let v = if let Some(o) = c.outcome() {
                match o.winner() {
                    Some(w) if w == me => Some(Wdl::Win(1)),
                    Some(_) => Some(Wdl::Loss(1)),
                    None => None,
                }
            } else if pieces(&c) < pieces(p) {
                match tb.probe(&c).expect("the smaller table") {
                    Wdl::Loss(_) => Some(Wdl::Win(1)),
                    Wdl::Win(_) => Some(Wdl::Loss(1)),
                    Wdl::Draw => None,
                }
            } else {
                match plain(&c, depth - 1, tb) {
                    Some(Wdl::Loss(d)) => Some(Wdl::Win(d + 1)),
                    Some(Wdl::Win(d)) => Some(Wdl::Loss(d + 1)),
                    _ => None,
                }
            };
            match v {
                Some(Wdl::Win(d)) => best_win = Some(best_win.map_or(d, |b| b.min(d))),
                Some(Wdl::Loss(d)) => worst_loss = Some(worst_loss.map_or(d, |b| b.max(d))),
                _ => unknown = true,
            }
        }
        if let Some(d) = best_win {
            Some(Wdl::Win(d))
        } else if unknown {
            None
        } else {
            worst_loss.map(Wdl::Loss)
        }
    }

    #[test]
    fn random_endings_agree_with_a_plain_search() {
        let mut rng = crate::rng_from_seed(3);
        let letters = ['G', 'A', 'E', 'R', 'H', 'C', 'S'];
        let mut tb = Tablebase::new();
        let (mut checked, mut decided) = (0, 0);
        while checked < 300 {
            let k = rng.random_range(2..=3usize);
            let mut cells = [EMPTY; SQUARES];
            let mut used = Vec::new();
            for i in 0..k {
                let colour = if i == 0 {
                    Colour::Red
                } else if i == 1 {
                    Colour::Black
                } else {
                    Colour::from_index(rng.random_range(0..2))
                };
                let kind = letters[rng.random_range(0..7)];
                let piece =
                    Piece::from_letter(if colour == Colour::Red { kind } else { kind.to_ascii_lowercase() })
                        .unwrap();
                let mut s;
                loop {
                    s = rng.random_range(0..32usize);
                    if !used.contains(&s) {
                        break;
                    }
                }
                used.push(s);
                cells[s] = piece.code();
            }
            let mut p = pos("8/8/8/Rh6 r - 0 1");
            p.board = cells;
            p.first_colour = Some(Colour::Red);
            p.side = if rng.random_bool(0.5) { crate::game::Seat::First } else { crate::game::Seat::Second };
            p.key = p.compute_key();
            p.history[0] = p.key;
            p.settle();
            if p.outcome().is_some() {
                continue;
            }
            tb.prepare(&p, MAX_PIECES, None);
            let table = tb.probe(&p).unwrap();
            let horizon = 6;
            let searched = plain(&p, horizon, &tb);
            match table {
                Wdl::Win(d) | Wdl::Loss(d) if d <= horizon => {
                    assert_eq!(searched, Some(table), "{p}");
                    decided += 1;
                }
                _ => assert_eq!(searched, None, "{p}: table {table:?}"),
            }
            checked += 1;
        }
        assert!(decided > 25, "only {decided} of {checked} decided within the horizon");
    }

    #[test]
    fn four_piece_tables_agree_with_a_plain_search() {
        // King and pawn against advisor and pawn, at random placements.
        let material = [code('G'), code('S'), code('a'), code('s')];
        let mut sorted = material.to_vec();
        sorted.sort_unstable();
        let mut tb = Tablebase::new();
        tb.build(&sorted);
        assert_eq!(tb.tables(), 9, "the table, four of three pieces and four of two (both colours)");
        let mut rng = crate::rng_from_seed(9);
        let (mut checked, mut decided) = (0, 0);
        while checked < 40 {
            let mut p = pos("8/8/8/Rh6 r - 0 1");
            p.board = [EMPTY; SQUARES];
            let mut free: Vec<usize> = (0..SQUARES).collect();
            for &c in &material {
                let s = free.swap_remove(rng.random_range(0..free.len()));
                p.board[s] = c;
            }
            p.side = if rng.random_bool(0.5) { crate::game::Seat::First } else { crate::game::Seat::Second };
            p.key = p.compute_key();
            p.history[0] = p.key;
            p.settle();
            if p.outcome().is_some() {
                continue;
            }
            let table = tb.probe(&p).expect("a table position");
            let horizon = 4;
            match (table, plain(&p, horizon, &tb)) {
                (Wdl::Win(d) | Wdl::Loss(d), searched) if d <= horizon => {
                    assert_eq!(searched, Some(table), "{p}");
                    decided += 1;
                }
                (_, searched) => assert_eq!(searched, None, "{p}: table {table:?}"),
            }
            checked += 1;
        }
        assert!(decided > 5, "only {decided} of {checked} decided within the horizon");
    }
}
