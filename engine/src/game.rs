//! The [`Game`] interface shared by every game, search, self-play, replay validation and the
//! play server.
//!
//! A *turn* is a sequence of atomic actions — the clicks a player makes (choose a square, then
//! a piece; choose a start piece, then each step). Search, self-play, validation and the web
//! client all walk the same action sequence, so there is exactly one notion of legality.
//! Chance events (Banqi flips) are explicit actions taken by [`Actor::Chance`], with
//! probabilities from [`Game::chance_outcomes`].
//!
//! Information: a game state holds only what both players may know. Where a game has hidden
//! information that is pure chance (Banqi's face-down pieces), the state holds the public pool
//! and the hidden draw happens when the chance action is taken, from the caller's RNG.

use std::fmt::{Debug, Display};
use std::hash::Hash;

use rand::RngExt;

use crate::Rng;

/// A seat at the table. [`Seat::First`] makes the first move of the game.
///
/// A two-game match swaps the seats: the match's player one sits at `First` in game 1 and at
/// `Second` in game 2. Games only know seats; matches map seats to players.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Seat {
    /// Moves first.
    First = 0,
    /// Moves second.
    Second = 1,
}

impl Seat {
    /// Both seats, in order.
    pub const BOTH: [Seat; 2] = [Seat::First, Seat::Second];

    /// The other seat.
    #[inline]
    pub fn other(self) -> Seat {
        match self {
            Seat::First => Seat::Second,
            Seat::Second => Seat::First,
        }
    }

    /// 0 for `First`, 1 for `Second`.
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    /// +1 for `First`, −1 for `Second`: converts a value from `First`'s view to this seat's.
    #[inline]
    pub fn sign(self) -> f32 {
        match self {
            Seat::First => 1.0,
            Seat::Second => -1.0,
        }
    }

    /// The seat with index `i` (0 or 1).
    pub fn from_index(i: usize) -> Option<Seat> {
        match i {
            0 => Some(Seat::First),
            1 => Some(Seat::Second),
            _ => None,
        }
    }
}

impl Display for Seat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Seat::First => "first",
            Seat::Second => "second",
        })
    }
}

/// Who acts next in a non-terminal state.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Actor {
    /// A player chooses the next action.
    Player(Seat),
    /// Nature draws the next action from [`Game::chance_outcomes`].
    Chance,
}

/// The result of a finished game.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Outcome {
    /// Each seat's score, indexed by [`Seat::index`]. For zero-sum scoring games
    /// `scores[0] == -scores[1]`.
    pub scores: [i32; 2],
    /// `Some(seat)` when the game was decided outright rather than on points — for example the
    /// opponent had no legal move. A decisive result overrides the scores (and, in a two-game
    /// match, decides the match).
    pub decisive: Option<Seat>,
}

impl Outcome {
    /// A result on points.
    pub fn on_points(scores: [i32; 2]) -> Outcome {
        Outcome { scores, decisive: None }
    }

    /// A decisive win for `winner`, with the scores as they stood.
    pub fn decisive(winner: Seat, scores: [i32; 2]) -> Outcome {
        Outcome { scores, decisive: Some(winner) }
    }

    /// The winner: the decisive winner if any, else the seat with the higher score; `None` is
    /// a draw.
    pub fn winner(&self) -> Option<Seat> {
        if let Some(w) = self.decisive {
            return Some(w);
        }
        match self.scores[0].cmp(&self.scores[1]) {
            std::cmp::Ordering::Greater => Some(Seat::First),
            std::cmp::Ordering::Less => Some(Seat::Second),
            std::cmp::Ordering::Equal => None,
        }
    }

    /// `seat`'s score minus the opponent's.
    pub fn margin(&self, seat: Seat) -> i32 {
        self.scores[seat.index()] - self.scores[seat.other().index()]
    }

    /// The score difference that search utilities use, from `seat`'s view. For games scored as
    /// one zero-sum number (Battle Number: player two gets the negative of player one's score)
    /// that number is already the difference, so it is `seat`'s own score; for games where
    /// each player accumulates points (TriGolden) it is own minus opponent.
    pub fn difference(&self, seat: Seat) -> i32 {
        let own = self.scores[seat.index()];
        let opp = self.scores[seat.other().index()];
        if own == -opp { own } else { own - opp }
    }

    /// 1 for a win, ½ for a draw, 0 for a loss, from `seat`'s view.
    pub fn points(&self, seat: Seat) -> f64 {
        match self.winner() {
            Some(w) if w == seat => 1.0,
            Some(_) => 0.0,
            None => 0.5,
        }
    }
}

/// An action that is not legal in the state it was played in. The state is unchanged.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("illegal action {action} in this position: {reason}")]
pub struct IllegalAction {
    /// The action as text.
    pub action: String,
    /// Why it was refused.
    pub reason: &'static str,
}

/// Malformed state bytes. The decoder returns this for any input it cannot accept — it never
/// panics.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The bytes end early.
    #[error("state bytes truncated: needed {needed} bytes, got {got}")]
    Truncated {
        /// Bytes needed.
        needed: usize,
        /// Bytes present.
        got: usize,
    },
    /// Extra bytes after a complete state.
    #[error("{0} trailing bytes after the state")]
    Trailing(usize),
    /// The bytes are for another game.
    #[error("not a {expected} state (magic bytes {found:02x?})")]
    WrongGame {
        /// The game expected.
        expected: &'static str,
        /// The magic found.
        found: [u8; 2],
    },
    /// An encoding version this build does not read.
    #[error("state encoding version {found} is not supported (this build reads version {supported})")]
    Version {
        /// Version found.
        found: u8,
        /// Version supported.
        supported: u8,
    },
    /// A field holds a value out of range or inconsistent with the rest of the state.
    #[error("invalid state: {0}")]
    Invalid(String),
}

/// Text that does not name an action.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cannot read {text:?} as an action: {reason}")]
pub struct ActionParseError {
    /// The text given.
    pub text: String,
    /// What was expected.
    pub reason: String,
}

/// A two-player game as a sequence of atomic actions.
///
/// # Semantics
/// - **Actors.** [`Game::to_move`] is meaningful only while [`Game::outcome`] is `None`.
///   At a chance node, [`Game::legal_actions`] lists the possible outcomes and
///   [`Game::chance_outcomes`] their probabilities.
/// - **Turns.** A player's turn may take several actions; [`Game::at_turn_start`] is true
///   exactly at the boundaries between turns. A chance event that ends a player's turn
///   (Banqi's reveal after a flip) belongs to that turn. Every legal action can be
///   completed to a legal turn: a game never offers a click that leads to a dead end.
/// - **Terminal states** have no legal actions. A player who has no legal turn at the start of
///   their turn loses decisively; the game detects this itself.
/// - **Equality and hashing** compare the complete game state, options included: two states
///   are equal exactly when every future of one is a future of the other with the same scores.
///   Hashes are consistent with equality within one build; they are not a stable format.
/// - **Bytes.** [`Game::encode`] writes a versioned, self-describing byte string;
///   [`Game::decode`] accepts exactly the states `encode` can produce and refuses anything
///   else with a [`DecodeError`].
pub trait Game: Clone + Eq + Hash + Debug + Send + Sync + 'static {
    /// One atomic action (a click, or a chance outcome).
    type Action: Copy + Eq + Hash + Ord + Debug + Display + Send + Sync + 'static;
    /// Game options: every rule the rules files mark **[decision]**.
    type Options: Clone + Debug + Default + PartialEq + Send + Sync + 'static;

    /// Short lower-case name used in CLIs, files and spec strings (`battlenumber`).
    const NAME: &'static str;
    /// Version of the byte encoding written by [`Game::encode`].
    const STATE_VERSION: u8;
    /// Whether a decisive result in game 1 of a two-game match ends the match at once
    /// (Battle Number and TriGolden: "loses the match at once").
    const DECISIVE_ENDS_MATCH: bool = true;

    /// The start position with these options.
    fn new_game(options: &Self::Options) -> Self;

    /// The options this game is played under.
    fn options(&self) -> &Self::Options;

    /// Who acts next. Unspecified for terminal states.
    fn to_move(&self) -> Actor;

    /// `Some` once the game is over.
    fn outcome(&self) -> Option<Outcome>;

    /// True between turns: no partial turn is in progress.
    fn at_turn_start(&self) -> bool;

    /// Clears `out` and fills it with every legal action, in a deterministic order. Empty
    /// exactly when the game is over.
    fn legal_actions(&self, out: &mut Vec<Self::Action>);

    /// At a chance node, clears `out` and fills it with each outcome and its probability
    /// (summing to 1). Elsewhere it leaves `out` empty.
    fn chance_outcomes(&self, out: &mut Vec<(Self::Action, f32)>) {
        out.clear();
    }

    /// Whether `action` is legal here.
    fn is_legal(&self, action: Self::Action) -> bool {
        let mut buf = Vec::new();
        self.legal_actions(&mut buf);
        buf.contains(&action)
    }

    /// Applies `action` after checking it.
    ///
    /// # Errors
    /// [`IllegalAction`] if the action is not legal here; the state is then unchanged.
    fn play(&mut self, action: Self::Action) -> Result<(), IllegalAction> {
        if self.outcome().is_some() {
            return Err(IllegalAction { action: action.to_string(), reason: "the game is over" });
        }
        if !self.is_legal(action) {
            return Err(IllegalAction { action: action.to_string(), reason: "not a legal action" });
        }
        self.play_unchecked(action);
        Ok(())
    }

    /// Applies `action` without checking it.
    ///
    /// Contract: `action` must be one of [`Game::legal_actions`] for this state. Anything else
    /// leaves the state unspecified (it may panic in debug builds) but is memory safe.
    fn play_unchecked(&mut self, action: Self::Action);

    /// Reads an action from its text form (as printed by `Display`).
    ///
    /// # Errors
    /// [`ActionParseError`] if the text names no action of this game.
    fn parse_action(&self, text: &str) -> Result<Self::Action, ActionParseError>;

    /// Appends the versioned byte encoding of this state to `out`.
    fn encode(&self, out: &mut Vec<u8>);

    /// Reads a state written by [`Game::encode`].
    ///
    /// # Errors
    /// [`DecodeError`] for truncated, trailing, foreign, unsupported or inconsistent bytes.
    fn decode(bytes: &[u8]) -> Result<Self, DecodeError>;

    /// Hidden information fixed when a game starts (Banqi's shuffled face-down pieces): at a
    /// chance node of a game that started at `start`, the outcome that the deal seeded by
    /// `deal` holds, or `None` to draw by probability (the default, and the answer for a
    /// state that could not have come from `start` under this deal). Self-play and matches
    /// resolve chance this way ([`next_chance`]), so a game's hidden deal comes from its seed
    /// and both games of a match see the same one; search only ever sees
    /// [`Game::chance_outcomes`].
    fn dealt_outcome(&self, start: &Self, deal: u64) -> Option<Self::Action> {
        let _ = (start, deal);
        None
    }

    /// Hand-written knowledge for the search: a prior weight for each of `actions` (this
    /// position's legal actions, in any order), from the game's own AI's candidate moves, or
    /// `None` where the game has none to offer here (the default). Weights are non-negative,
    /// one per action; the search normalises them. Called once per move at the root (MCTS
    /// agents with `knowledge=F`), so it may cost what one of the game's AI's moves costs.
    fn knowledge_priors(&self, actions: &[Self::Action]) -> Option<Vec<f32>> {
        let _ = actions;
        None
    }

    /// Plays uniformly random actions (chance actions by their probabilities) to the end of the
    /// game. Games may override this with a faster equivalent.
    fn random_playout(&mut self, rng: &mut Rng) {
        let mut actions = Vec::new();
        let mut chances = Vec::new();
        while self.outcome().is_none() {
            let a = match self.to_move() {
                Actor::Chance => sample_chance(self, &mut chances, rng),
                Actor::Player(_) => {
                    self.legal_actions(&mut actions);
                    actions[rng.random_range(0..actions.len())]
                }
            };
            self.play_unchecked(a);
        }
    }
}

/// Draws a chance outcome at a chance node, by its probability.
///
/// # Panics
/// If the state is not a chance node (it has no chance outcomes).
pub fn sample_chance<G: Game>(state: &G, buf: &mut Vec<(G::Action, f32)>, rng: &mut Rng) -> G::Action {
    state.chance_outcomes(buf);
    assert!(!buf.is_empty(), "sample_chance called at a state that is not a chance node");
    let total: f32 = buf.iter().map(|(_, p)| p).sum();
    let mut x = rng.random::<f32>() * total;
    for &(a, p) in buf.iter() {
        if x < p {
            return a;
        }
        x -= p;
    }
    buf[buf.len() - 1].0
}

/// The outcome of the chance node `state` in a game that started at `start`: from the deal
/// seeded by `deal` where the game has one ([`Game::dealt_outcome`]), else drawn by
/// probability from `rng`.
///
/// # Panics
/// If the state is not a chance node.
pub fn next_chance<G: Game>(
    state: &G,
    start: &G,
    deal: u64,
    buf: &mut Vec<(G::Action, f32)>,
    rng: &mut Rng,
) -> G::Action {
    match state.dealt_outcome(start, deal) {
        Some(a) => a,
        None => sample_chance(state, buf, rng),
    }
}

/// Encodes a state into a fresh byte vector.
pub fn to_bytes<G: Game>(state: &G) -> Vec<u8> {
    let mut v = Vec::new();
    state.encode(&mut v);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_winner_prefers_decisive_over_points() {
        let o = Outcome::decisive(Seat::Second, [10, -10]);
        assert_eq!(o.winner(), Some(Seat::Second));
        assert_eq!(o.points(Seat::First), 0.0);
        let p = Outcome::on_points([3, -3]);
        assert_eq!(p.winner(), Some(Seat::First));
        assert_eq!(p.margin(Seat::Second), -6);
        assert_eq!(Outcome::on_points([0, 0]).points(Seat::First), 0.5);
    }

    #[test]
    fn seats() {
        assert_eq!(Seat::First.other(), Seat::Second);
        assert_eq!(Seat::from_index(1), Some(Seat::Second));
        assert_eq!(Seat::from_index(2), None);
        assert_eq!(Seat::Second.sign(), -1.0);
    }
}
