//! The one registry of games: [`GameKind`] names every game zeroplay plays, and
//! [`with_game!`](crate::with_game) is the one way to turn a kind into the game's type.
//!
//! Every per-game switch in the workspace (the worker's self-play, the coordinator's replay
//! validation, the trainer, the play server, every command) goes through `with_game!`, so a
//! `match` over kinds with a wildcard arm cannot silently send a new game down another game's
//! path: adding a variant here makes the macro, and nothing else, need a new arm. The checklist
//! for a fourth game is in ARCHITECTURE.md.

use std::fmt;
use std::str::FromStr;

use crate::game::Game;
use crate::pack::{GamePack, Pack};

/// A game zeroplay plays. Spelled as [`Game::NAME`] in configs, the CLI, lease rows, Parquet
/// and on the wire (`"battlenumber"`, `"trigolden"`, `"banqi"`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GameKind {
    /// Battle Number (拚數棋).
    BattleNumber,
    /// TriGolden (頂鑫棋).
    TriGolden,
    /// Banqi (暗棋, TCGA rules).
    Banqi,
    /// The toy game (three in a row), registered only with the `toy` feature: the tests' fourth
    /// game ([`crate::toy`]).
    Toy,
}

/// Turns a [`GameKind`] into its game type: `with_game!(kind, |G| body)` runs `body` with the
/// type alias `G` bound to the kind's [`Game`](crate::game::Game) type. Each arm is concrete,
/// so `body` may use any trait the three games implement (an encoder, a served-game trait).
///
/// ```
/// use engine::{GameKind, with_game, game::Game};
/// let kind: GameKind = "banqi".parse().unwrap();
/// assert_eq!(with_game!(kind, |G| G::NAME), "banqi");
/// ```
#[macro_export]
macro_rules! with_game {
    ($kind:expr, |$g:ident| $body:expr) => {
        match $kind {
            $crate::GameKind::BattleNumber => {
                #[allow(non_camel_case_types, dead_code)]
                type $g = $crate::battlenumber::BattleNumber;
                $body
            }
            $crate::GameKind::TriGolden => {
                #[allow(non_camel_case_types, dead_code)]
                type $g = $crate::trigolden::TriGolden;
                $body
            }
            $crate::GameKind::Banqi => {
                #[allow(non_camel_case_types, dead_code)]
                type $g = $crate::banqi::Banqi;
                $body
            }
            $crate::GameKind::Toy => {
                #[allow(non_camel_case_types, dead_code)]
                type $g = $crate::toy::Toy;
                $body
            }
        }
    };
}

impl GameKind {
    /// The game a command plays when none is named: the first game, Battle Number.
    pub const DEFAULT: GameKind = GameKind::BattleNumber;

    /// Every kind, in the order the docs and menus list them.
    #[cfg(not(feature = "toy"))]
    pub const ALL: [GameKind; 3] = [GameKind::BattleNumber, GameKind::TriGolden, GameKind::Banqi];
    /// Every kind, in the order the docs and menus list them: with the `toy` feature (the
    /// tests'), the toy game last.
    #[cfg(feature = "toy")]
    pub const ALL: [GameKind; 4] =
        [GameKind::BattleNumber, GameKind::TriGolden, GameKind::Banqi, GameKind::Toy];

    /// The game's name ([`Game::NAME`]).
    pub const fn name(self) -> &'static str {
        with_game!(self, |G| G::NAME)
    }

    /// Every kind's name, in [`GameKind::ALL`] order.
    pub const NAMES: [&'static str; GameKind::ALL.len()] = {
        let mut names = [""; GameKind::ALL.len()];
        let mut i = 0;
        while i < names.len() {
            names[i] = GameKind::ALL[i].name();
            i += 1;
        }
        names
    };

    /// The kind of game `G`.
    ///
    /// # Panics
    /// If `G` is not one of the registered games (a game type outside this registry).
    pub fn of<G: Game>() -> GameKind {
        GameKind::from_name(G::NAME).unwrap_or_else(|| panic!("{} is not a registered game", G::NAME))
    }

    /// Looks a kind up by its name; `None` for an unknown name.
    pub fn from_name(name: &str) -> Option<GameKind> {
        GameKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The version of the game's state bytes ([`Game::STATE_VERSION`]).
    pub fn state_version(self) -> u8 {
        with_game!(self, |G| G::STATE_VERSION)
    }

    /// The display name with the game's own script, e.g. "Battle Number (拚數棋)", from its
    /// [`Pack`].
    pub fn title(self) -> String {
        let p = self.pack();
        format!("{} ({})", p.title, p.title_zh)
    }
}

impl GameKind {
    /// The kind's [`Pack`]: what its folder tells the hosts.
    pub fn pack(self) -> &'static Pack {
        with_game!(self, |G| pack_of::<G>())
    }

    /// The kind that a replay token's byte names ([`Pack::replay_code`]).
    pub fn from_replay_code(code: u8) -> Option<GameKind> {
        GameKind::ALL.into_iter().find(|k| k.pack().replay_code == code)
    }
}

fn pack_of<G: GamePack>() -> &'static Pack {
    // A constant with no interior mutability is promoted to a static.
    const { &G::PACK }
}

impl fmt::Display for GameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown game name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown game {name:?} (known: {})", GameKind::NAMES.join(", "))]
pub struct UnknownGame {
    /// The name given.
    pub name: String,
}

impl FromStr for GameKind {
    type Err = UnknownGame;

    fn from_str(s: &str) -> Result<GameKind, UnknownGame> {
        GameKind::from_name(s).ok_or_else(|| UnknownGame { name: s.to_string() })
    }
}

impl serde::Serialize for GameKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for GameKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<GameKind, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_match_the_games() {
        for k in GameKind::ALL {
            assert_eq!(k.name().parse::<GameKind>().unwrap(), k);
            assert_eq!(k.to_string(), k.name());
            assert_eq!(with_game!(k, |G| G::NAME), k.name());
            assert_eq!(with_game!(k, |G| GameKind::of::<G>()), k);
        }
        assert_eq!(GameKind::NAMES, GameKind::ALL.map(GameKind::name));
        let e = "chess".parse::<GameKind>().unwrap_err();
        assert!(e.to_string().contains("\"chess\"") && e.to_string().contains("banqi"), "{e}");
    }

    #[test]
    fn serde_uses_the_name() {
        #[derive(serde::Deserialize, serde::Serialize)]
        struct C {
            game: GameKind,
        }
        let c: C = toml::from_str("game = \"trigolden\"").unwrap();
        assert_eq!(c.game, GameKind::TriGolden);
        assert_eq!(toml::to_string(&c).unwrap().trim(), "game = \"trigolden\"");
        let e = toml::from_str::<C>("game = \"go\"").err().unwrap().to_string();
        assert!(e.contains("unknown game \"go\""), "{e}");
    }
}
