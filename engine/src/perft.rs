//! Perft: the number of distinct legal sequences of `depth` complete turns, as chess engines
//! report it, so independent implementations of a game's rules can be checked against ours.
//!
//! A turn is a complete click sequence, from one turn boundary ([`Game::at_turn_start`]) to the
//! next; distinct click sequences are distinct turns (each game's click alphabet already
//! identifies rotations that give the same piece). A game that ends early contributes nothing
//! below its end. Chance outcomes are counted as branches, not as turns.

use crate::game::Game;

/// Counts the sequences of `depth` complete turns from `state`.
///
/// `state` should be at a turn boundary; from the middle of a turn, the partial turn counts as
/// the first turn.
pub fn perft<G: Game>(state: &G, depth: u32) -> u64 {
    let mut buf = Vec::new();
    count(state, depth, &mut buf)
}

fn count<G: Game>(state: &G, depth: u32, buf: &mut Vec<Vec<G::Action>>) -> u64 {
    if depth == 0 && state.at_turn_start() {
        return 1;
    }
    let mut actions = buf.pop().unwrap_or_default();
    state.legal_actions(&mut actions);
    let mut n = 0;
    for &a in &actions {
        let mut child = state.clone();
        child.play_unchecked(a);
        let d = if child.at_turn_start() { depth - 1 } else { depth };
        n += count(&child, d, buf);
    }
    buf.push(actions);
    n
}

/// Lists each complete first turn (its clicks) with the position after it, so callers can
/// split a perft across threads ("divide").
pub fn first_turns<G: Game>(state: &G) -> Vec<(Vec<G::Action>, G)> {
    let mut out = Vec::new();
    let mut path = Vec::new();
    collect(state, &mut path, &mut out);
    out
}

fn collect<G: Game>(state: &G, path: &mut Vec<G::Action>, out: &mut Vec<(Vec<G::Action>, G)>) {
    let mut actions = Vec::new();
    state.legal_actions(&mut actions);
    for a in actions {
        let mut child = state.clone();
        child.play_unchecked(a);
        path.push(a);
        if child.at_turn_start() {
            out.push((path.clone(), child));
        } else {
            collect(&child, path, out);
        }
        path.pop();
    }
}
