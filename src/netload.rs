//! Loading trained networks for agents named by spec strings (`eval=net,model=PATH`).

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};

use engine::Features;
use engine::LeafSettings;
use engine::agent::NetLoader;
use engine::eval::Evaluator;
use model::NetSource;

/// A loader for [`engine::spec::AgentSpec::build_with`]: reads and checks the model file
/// (`builtin`: the game's model built into the binary, [`model::builtin`]) and builds its
/// network leaf with [`model::net_leaf`] (inference on the searching thread, CPU backend).
pub fn loader<G: Features>() -> Box<NetLoader<'static, G>> {
    Box::new(|path: &str, leaf: &LeafSettings| -> Result<Arc<dyn Evaluator<G>>, String> {
        let bytes = model_bytes(engine::GameKind::of::<G>(), Path::new(path))?;
        let m = model::load::<G>(&bytes, &model::cpu()).map_err(|e| format!("model {path}: {e}"))?;
        Ok(model::net_leaf::<G>(NetSource::Fixed(m), leaf))
    })
}

/// The bytes of the model at `path`, or of `game`'s built-in model when `path` is `builtin`
/// ([`model::builtin::BUILTIN_MODEL`]; borrowed from the binary, not copied).
///
/// # Errors
/// A file that cannot be read, or `builtin` for a game without one.
pub fn model_bytes(game: engine::GameKind, path: &Path) -> Result<Cow<'static, [u8]>, String> {
    if path.as_os_str() == model::builtin::BUILTIN_MODEL {
        model::builtin::require(game).map(Cow::Borrowed)
    } else {
        std::fs::read(path).map(Cow::Owned).map_err(|e| format!("model {}: {e}", path.display()))
    }
}

/// The model a run-directory command works on: `model` if given, else the run's best
/// (`RUN/trainer/models/best.safetensors`), with its bytes and the game its metadata names.
///
/// # Errors
/// Neither given, an unreadable file, or a file that is not a model of a known game.
pub fn run_model(run: Option<&Path>, model: Option<&Path>) -> Result<(PathBuf, Vec<u8>, engine::GameKind)> {
    let path = model
        .map(Path::to_path_buf)
        .or_else(|| run.map(|r| trainer::pipeline::best_model_path(&r.join("trainer"))))
        .context("name a run directory (--run runs/NAME) or a model (--model FILE)")?;
    let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
    let meta = model::read_meta(&bytes).with_context(|| format!("{} is not a model file", path.display()))?;
    let game = meta.game.parse().map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Ok((path, bytes, game))
}

/// Model files by the game each one's metadata names, as `serve --model` takes them.
///
/// # Errors
/// A file that is not a model of a known game, or two files for one game (both named).
pub fn models_by_game(
    files: impl IntoIterator<Item = PathBuf>,
) -> Result<std::collections::BTreeMap<engine::GameKind, PathBuf>> {
    let mut given = std::collections::BTreeMap::new();
    for file in files {
        let (_, _, kind) = run_model(None, Some(&file))?;
        if let Some(other) = given.insert(kind, file.clone()) {
            anyhow::bail!("two models for {kind}: {} and {}", other.display(), file.display());
        }
    }
    Ok(given)
}

/// Whether the model at `path` (or `builtin`: `game`'s built-in model) is one-layer (`nano`:
/// no residual block), read from its metadata without building the network: such a model
/// plays inside Banqi's `banqi-ab`.
///
/// # Errors
/// A file that cannot be read, `builtin` for a game without one, or metadata that does not parse.
pub fn one_layer(game: engine::GameKind, path: &Path) -> Result<bool> {
    let bytes = model_bytes(game, path).map_err(anyhow::Error::msg)?;
    let meta = model::read_meta(&bytes).map_err(|e| anyhow::anyhow!("model {}: {e}", path.display()))?;
    Ok(meta.net.is_one_layer())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_bytes_borrows_the_builtin_model_and_names_what_it_cannot_read() {
        let banqi = engine::GameKind::of::<engine::banqi::Banqi>();
        let b = model_bytes(banqi, Path::new("builtin")).unwrap();
        assert!(matches!(b, Cow::Borrowed(_)), "the built-in model is not copied");
        assert_eq!(&*b, model::builtin::require(banqi).unwrap());
        let tg = engine::GameKind::of::<engine::trigolden::TriGolden>();
        assert_eq!(model_bytes(tg, Path::new("builtin")).unwrap_err(), "trigolden has no built-in model");
        let e = model_bytes(banqi, Path::new("no/such/model.safetensors")).unwrap_err();
        assert!(e.starts_with("model no/such/model.safetensors: "), "{e}");
    }
}
