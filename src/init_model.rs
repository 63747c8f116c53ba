//! `zeroplay local --init-model`: a new run that starts from a given model instead of from
//! nothing. The model becomes the coordinator's first best (published ungated, so workers and
//! a `model=served` teacher use it from the first game, and candidates are gated against it)
//! and the trainer's best (`trainer/models/best.safetensors`, which the trainer adopts and
//! trains on from). `trainer/init-model.json` records where it came from.

use std::path::Path;

use anyhow::{Context, Result, bail};
use engine::Features;
use serde::Serialize;
use tracing::info;

/// Where a run's first model came from (`trainer/init-model.json`).
#[derive(Debug, Serialize)]
struct InitRecord<'a> {
    /// What `--init-model` named: a file, or `builtin`.
    source: String,
    /// The game.
    game: &'a str,
    /// SHA-256 of the model file.
    sha256: String,
    /// The version the coordinator gave it.
    version: u64,
}

/// Checks that `bytes` is a model of `G` the trainer can train on from (its network fits
/// `train`'s), or, with no trainer, a model of `G` at all. Returns `G`'s name and feature
/// encoding, which the model is published under.
fn fits<G: Features>(
    bytes: &[u8],
    train: Option<&trainer::train::TrainSettings>,
    device: &burn::prelude::Device,
) -> Result<(&'static str, u32), String> {
    match train {
        Some(t) => trainer::train::Trainer::<G>::resume(t.clone(), device, bytes).map(drop)?,
        None => model::load::<G>(bytes, device).map(drop).map_err(|e| e.to_string())?,
    }
    Ok((G::NAME, G::FEATURE_VERSION))
}

/// Seeds a new run with the model at `path` (or the built-in one): writes it as the trainer's
/// best in `trainer_dir` and publishes it, ungated, with `client` (a trainer's). Does nothing
/// when the coordinator already has a best model (`current_version` > 0): a resumed run goes
/// on from its own. Returns the version published, if any.
///
/// # Errors
/// An unreadable model, one of another game or whose network does not fit the trainer's
/// settings, a trainer directory whose best model is another one, or the coordinator's refusal.
pub(crate) async fn seed(
    game: engine::GameKind,
    path: &Path,
    train: Option<&trainer::train::TrainSettings>,
    device: &burn::prelude::Device,
    trainer_dir: &Path,
    client: &mut zeroplay_client::Client,
    current_version: u64,
) -> Result<Option<u64>> {
    let bytes = crate::netload::model_bytes(game, path).map_err(anyhow::Error::msg)?;
    let (name, encoding) = engine::with_game!(game, |G| fits::<G>(&bytes, train, device))
        .map_err(|e| anyhow::anyhow!("--init-model {}: {e}", path.display()))?;
    if current_version > 0 {
        info!(
            version = current_version,
            "the run already has a best model; it goes on from that one (--init-model only starts a new run)"
        );
        return Ok(None);
    }
    let best = trainer::pipeline::best_model_path(trainer_dir);
    if let Ok(old) = std::fs::read(&best)
        && old != *bytes
    {
        bail!(
            "--init-model {}: {} already holds another model; start a new run (--name) to start from this one",
            path.display(),
            best.display()
        );
    }
    let models = best.parent().context("best model path has a parent")?;
    std::fs::create_dir_all(models).with_context(|| models.display().to_string())?;
    trainer::write_atomic(&best, &bytes).map_err(anyhow::Error::msg)?;
    let version =
        zeroplay_client::publish_model(client, name, encoding, &bytes, None).await.map_err(|s| {
            anyhow::anyhow!("the coordinator refused --init-model {}: {}", path.display(), s.message())
        })?;
    let record = InitRecord {
        source: path.display().to_string(),
        game: name,
        sha256: model::sha256_hex(&bytes),
        version,
    };
    trainer::write_atomic(
        &trainer_dir.join("init-model.json"),
        serde_json::to_string_pretty(&record)?.as_bytes(),
    )
    .map_err(anyhow::Error::msg)?;
    info!(source = %path.display(), version, sha256 = %record.sha256, "the run starts from this model");
    Ok(Some(version))
}
