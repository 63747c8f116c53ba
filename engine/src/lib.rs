//! # zeroplay engine
//!
//! The pure core of zeroplay: game rules, search and (later) feature encodings. Every other
//! crate plays the games through this one, so the worker, the coordinator's replay validation,
//! the play server and the web client all agree on what is legal.
//!
//! Purity rules (see `ARCHITECTURE.md`): no async, no network, no files, no clock inside the
//! rules, and no randomness except an RNG passed in by the caller. Search receives its budget
//! (simulations or a deadline) from outside.
//!
//! Map:
//! - [`kind`]: [`GameKind`], the registry of games, and [`with_game!`], the one per-game
//!   dispatch.
//! - [`game`]: the [`Game`] trait every game implements — atomic actions (clicks), chance
//!   events, outcomes, versioned state bytes.
//! - [`battlenumber`]: Battle Number (拚數棋) on 7×7 bitboards.
//! - [`banqi`]: Banqi (暗棋, TCGA rules) with flips as chance nodes and a Zobrist-keyed
//!   repetition rule.
//! - [`mcts`]: generic PUCT search with chance nodes, batched [`Evaluator`]s and subtree reuse.
//! - [`eval`]: the uniform and rollout evaluators, and the playout mix around a network.
//! - [`leaf`]: [`LeafSettings`], the one leaf recipe (evaluator, margin mix, λ, score scale).
//! - [`features`]: network encodings (feature vectors, policy indices) with their versions.
//! - [`agent`]: agents (random, MCTS) and the spec strings that name them.
//! - [`arena`]: side-swapped two-game matches between agents, and Elo statistics.
//! - [`pack`]: game packs, what each game's folder tells the hosts (names, defaults as TOML,
//!   strength protocol, model docs) so they need no per-game match.
//! - [`perft`]: counting complete-turn sequences, to cross-check move generators.
//! - [`selfplay`]: one self-play game with noise, temperature, playout caps and resignation.
//! - [`spsa`]: SPSA, the seeded tuner of evaluation weights from game results.

pub mod agent;
pub mod arena;
pub mod banqi;
pub mod battlenumber;
pub mod caption;
pub mod eval;
pub mod features;
pub mod game;
pub mod gating;
pub mod kind;
pub mod leaf;
pub mod mcts;
pub mod pack;
pub mod perft;
pub mod search_settings;
pub mod search_tables;
pub mod selfplay;
pub mod settings;
pub mod shallow;
pub mod spec;
pub mod spsa;
pub mod toy;
pub mod trigolden;

pub use eval::{Evaluator, Leaf};
pub use features::Features;
pub use game::{Actor, DecodeError, Game, IllegalAction, Outcome, Seat};
pub use kind::{GameKind, UnknownGame};
pub use leaf::{LeafEvaluator, LeafSettings, SCORE_SCALE};

/// The random number generator used everywhere in zeroplay.
///
/// Xoshiro256++ is fast and, unlike `rand::rngs::SmallRng`, its output is fixed across
/// platforms and crate versions, so a game's seed reproduces it exactly.
pub type Rng = rand_xoshiro::Xoshiro256PlusPlus;

/// Builds the project RNG from a 64-bit seed.
pub fn rng_from_seed(seed: u64) -> Rng {
    use rand::SeedableRng;
    Rng::seed_from_u64(seed)
}

/// Derives the seed of item `i` (a match, a lease) from a base seed with a SplitMix64 step,
/// so neighbouring items get unrelated streams and any one can be replayed alone.
pub fn derive_seed(base: u64, i: u64) -> u64 {
    let mut z = base.wrapping_add(i.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The version of the engine, stamped into every stored game so it can be replayed exactly.
pub const ENGINE_VERSION: &str = env!("CARGO_PKG_VERSION");
