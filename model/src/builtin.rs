//! Models built into the binary: for a game whose strongest player is a trained network, the
//! network this project's own pipeline trained, so that `zeroplay uci`, `zeroplay match` and
//! the play server play their strongest by default, as Leela Zero and KataGo ship a network.
//! The files live in their games' folders ([`engine::pack::Pack::builtin_model`]), each with a
//! README of the run that trained it and its strength measured at play time; a test loads
//! every one.

use engine::{Features, GameKind};

/// The name `model=` (in an agent spec) and `--model` give a built-in model.
pub const BUILTIN_MODEL: &str = "builtin";

/// The built-in model file of `game`, if it has one.
pub fn bytes(game: GameKind) -> Option<&'static [u8]> {
    game.pack().builtin_model
}

/// The built-in model file of `game`, or an error that says it has none.
///
/// # Errors
/// `game` has no built-in model.
pub fn require(game: GameKind) -> Result<&'static [u8], String> {
    bytes(game).ok_or_else(|| format!("{game} has no built-in model"))
}

/// The built-in model of `G`, loaded and checked.
///
/// # Errors
/// `G` has none (the message says so), or its file fails [`crate::load`]'s checks (a test
/// keeps that from shipping).
pub fn load<G: Features>(device: &burn::prelude::Device) -> Result<crate::Model, String> {
    let game = GameKind::of::<G>();
    let bytes = require(game)?;
    crate::load::<G>(bytes, device).map_err(|e| format!("the built-in {game} model: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every built-in model loads under today's engine, for the game it is filed under, and
    /// is one-layer (each plays inside its game's own searcher); a game without one says so.
    #[test]
    fn every_builtin_model_loads_for_its_game() {
        let (mut with, mut without) = (0, 0);
        for kind in GameKind::ALL {
            let Some(b) = bytes(kind) else {
                without += 1;
                let e = engine::with_game!(kind, |G| load::<G>(&crate::cpu()).map(|_| ()).unwrap_err());
                assert!(e.contains("has no built-in model"), "{e}");
                continue;
            };
            with += 1;
            let meta = crate::read_meta(b).unwrap();
            assert_eq!(meta.game, kind.name());
            assert!(meta.net.is_one_layer(), "{kind}");
            engine::with_game!(kind, |G| load::<G>(&crate::cpu()).map(|_| ()).unwrap());
        }
        assert!(with >= 1 && without >= 1, "{with} games with a built-in model, {without} without");
    }

    /// The model the built-in one replaced still loads under today's engine, so that the
    /// figures measured with it (engine/src/banqi/builtin/README.md) can be replayed with
    /// `model=engine/src/banqi/builtin/previous/…`; it is another model than the built-in one.
    #[test]
    fn the_replaced_banqi_model_still_loads() {
        let old: &[u8] =
            include_bytes!("../../engine/src/banqi/builtin/previous/banqi-gen2-s46-round14.safetensors");
        let meta = crate::read_meta(old).unwrap();
        assert_eq!(meta.game, "banqi");
        assert!(meta.net.is_one_layer());
        crate::load::<engine::banqi::Banqi>(old, &crate::cpu()).unwrap();
        assert_ne!(Some(old), bytes(GameKind::Banqi), "the replaced model is still the built-in one");
        assert_eq!(
            crate::sha256_hex(old),
            "9677e055e5da646e1d324b67f9c31d5b3760addbf78f2d93c2c652b89557ea48"
        );
    }
}
