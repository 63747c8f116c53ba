//! Models built into the binary: for a game whose strongest player is a trained network, the
//! network this project's own pipeline trained, so that `zeroplay uci`, `zeroplay match` and
//! the play server play their strongest by default, as Leela Zero and KataGo ship a network.
//! Each file's provenance (the run that trained it, its seed and commands, and its strength
//! measured at play time) is in `model/builtin/README.md`; a test loads every one.

use engine::{Features, GameKind};

/// The name `model=` (in an agent spec) and `--model` give a built-in model.
pub const BUILTIN_MODEL: &str = "builtin";

/// Banqi: a one-layer (`nano`) value network for `banqi-ab`'s leaves.
const BANQI: &[u8] = include_bytes!("../builtin/banqi.safetensors");

/// The built-in model file of `game`, if it has one.
pub fn bytes(game: GameKind) -> Option<&'static [u8]> {
    match game {
        GameKind::Banqi => Some(BANQI),
        _ => None,
    }
}

/// The built-in model of `G`, loaded and checked.
///
/// # Errors
/// `G` has none (the message says so), or its file fails [`crate::load`]'s checks (a test
/// keeps that from shipping).
pub fn load<G: Features>(device: &burn::prelude::Device) -> Result<crate::Model, String> {
    let game = GameKind::of::<G>();
    let bytes = bytes(game).ok_or_else(|| format!("{game} has no built-in model"))?;
    crate::load::<G>(bytes, device).map_err(|e| format!("the built-in {game} model: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every built-in model loads under today's engine, for the game it is filed under, and
    /// Banqi's is one-layer (it plays inside `banqi-ab`).
    #[test]
    fn every_builtin_model_loads_for_its_game() {
        let mut found = 0;
        for kind in GameKind::ALL {
            let Some(b) = bytes(kind) else { continue };
            found += 1;
            let meta = crate::read_meta(b).unwrap();
            assert_eq!(meta.game, kind.name());
            engine::with_game!(kind, |G| load::<G>(&crate::cpu()).map(|_| ()).unwrap());
        }
        assert_eq!(found, 1);
        assert!(crate::read_meta(BANQI).unwrap().net.is_one_layer());
        let e = load::<engine::battlenumber::BattleNumber>(&crate::cpu()).unwrap_err();
        assert!(e.contains("has no built-in model"), "{e}");
    }
}
