//! What the server needs of each game: the game's own [`GamePack`] (options as JSON, a board
//! description for the web client, a picture), which its folder supplies, and an AI factory.
//! [`crate::table`] and [`crate::replay`] both build on it.

use std::sync::Arc;
use std::time::Duration;

use engine::agent::Agent;
use engine::pack::GamePack;

/// Builds the AI for one turn of game `G`, given its time per move.
pub type AiFactory<G> = Arc<dyn Fn(Duration) -> Box<dyn Agent<G>> + Send + Sync>;

/// A game the server can host: any game with a pack ([`GamePack`]) that can move between
/// threads. Every game of [`engine::GameKind`] is one; nothing here is per game.
pub trait Served: GamePack + Send + 'static {}

impl<G: GamePack + Send + 'static> Served for G {}
