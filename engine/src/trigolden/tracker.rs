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

use super::{Contact, Piece, Place, TriGolden, apart, contacts_between};
use crate::game::Seat;

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
}

impl Tracker {
    /// The methods, ordered by placement.
    pub fn methods(&self) -> &[Method] {
        &self.methods
    }

    /// Updates the methods after `board`'s last piece went down (`game` gives the shape
    /// table). Returns the methods it removed. The game calls this itself; it is public for
    /// benchmarks.
    pub fn placed(&mut self, game: &TriGolden, board: &[Piece]) -> Vec<Method> {
        let ni = board.len() - 1;
        let n = board[ni];
        let glued = n.parent;
        let mut removed = Vec::new();
        self.methods.retain_mut(|m| {
            let gone = glued == Some((m.place.target, m.place.edge)) || !TriGolden::clear_of(&m.piece, &n);
            if gone {
                removed.push(m.clone());
            } else if !apart(&m.piece, &n) {
                m.contacts.extend(contacts_between(ni, &n, &m.piece));
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
                        // `clear_of` and `contacts_between` skip far pieces by bounding box.
                        if board.iter().all(|x| TriGolden::clear_of(&piece, x)) {
                            let contacts = board
                                .iter()
                                .enumerate()
                                .flat_map(|(i, q)| contacts_between(i, q, &piece))
                                .collect();
                            self.methods.push(Method { id: self.next_id, place, piece, contacts });
                            self.next_id += 1;
                        }
                    }
                }
            }
        }
        removed
    }

    /// The methods `seat` may use now: on the opponent's pieces, with a shape in stock.
    pub(super) fn for_seat<'a>(
        &'a self,
        board: &'a [Piece],
        stock: &'a [u8; 8],
        seat: Seat,
    ) -> impl Iterator<Item = &'a Method> + 'a {
        self.methods.iter().filter(move |m| {
            board[usize::from(m.place.target)].owner != seat && stock[usize::from(m.place.shape)] > 0
        })
    }
}
