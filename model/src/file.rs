//! The model file: one safetensors file holding the weights, with everything needed to use
//! them in its metadata.
//!
//! Because the file is plain safetensors, other tools (Python's `safetensors`, PyTorch,
//! numpy) open it directly; `docs/model-format.md` documents tensor names and the input
//! encoding. Metadata keys:
//!
//! | key | value |
//! |---|---|
//! | `zeroplay.format` | [`FORMAT`] |
//! | `zeroplay.game` | game name (`battlenumber`) |
//! | `zeroplay.feature_version` | the engine's [`engine::Features::FEATURE_VERSION`] for that game |
//! | `zeroplay.feature_len`, `zeroplay.policy_len` | input width and policy size |
//! | `zeroplay.net` | the [`NetConfig`] as JSON |
//! | `zeroplay.margin_scale` | the margin output times this is points |
//! | `zeroplay.info` | [`ModelInfo`] as JSON (provenance: steps, samples, parent) |
//!
//! Loading checks every key, the game and the feature version against the engine, then the
//! presence and shape of every tensor. Anything wrong is a [`ModelError`]; nothing is half
//! loaded.

use std::collections::HashMap;

use burn::prelude::*;
use burn::store::{ModuleSnapshot, SafetensorsStore};
use engine::Features;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::net::{NetConfig, ValueNet};

/// Format tag of the files this crate writes and reads.
pub const FORMAT: &str = "zeroplay-model/1";

/// Largest model file accepted (256 MiB).
pub const MAX_MODEL_BYTES: usize = 256 << 20;

/// Where a model came from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ModelInfo {
    /// Training steps taken (all generations).
    pub steps: u64,
    /// Training samples seen (all generations).
    pub samples: u64,
    /// The model this one was trained from (0: none).
    pub parent: u64,
    /// Seconds since the Unix epoch when it was written.
    pub created_unix: u64,
    /// Free-form note (the trainer writes the config name).
    pub note: String,
}

/// A model file's metadata.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelMeta {
    /// Game name.
    pub game: String,
    /// Feature encoding version.
    pub feature_version: u32,
    /// Input width.
    pub feature_len: usize,
    /// Policy size (0: no policy head).
    pub policy_len: usize,
    /// Network sizes.
    pub net: NetConfig,
    /// The margin output times this is points.
    pub margin_scale: f32,
    /// Provenance.
    pub info: ModelInfo,
}

impl ModelMeta {
    /// Metadata for a new model of game `G`.
    pub fn for_game<G: Features>(net: NetConfig, margin_scale: f32, info: ModelInfo) -> ModelMeta {
        ModelMeta {
            game: G::NAME.into(),
            feature_version: G::FEATURE_VERSION,
            feature_len: G::FEATURE_LEN,
            policy_len: G::POLICY_LEN,
            net,
            margin_scale,
            info,
        }
    }

    fn to_map(&self) -> Vec<(String, String)> {
        vec![
            ("zeroplay.format".into(), FORMAT.into()),
            ("zeroplay.game".into(), self.game.clone()),
            ("zeroplay.feature_version".into(), self.feature_version.to_string()),
            ("zeroplay.feature_len".into(), self.feature_len.to_string()),
            ("zeroplay.policy_len".into(), self.policy_len.to_string()),
            ("zeroplay.net".into(), serde_json::to_string(&self.net).expect("plain struct")),
            ("zeroplay.margin_scale".into(), self.margin_scale.to_string()),
            ("zeroplay.info".into(), serde_json::to_string(&self.info).expect("plain struct")),
        ]
    }

    fn from_map(m: &HashMap<String, String>) -> Result<ModelMeta, ModelError> {
        let get = |k: &'static str| m.get(k).ok_or(ModelError::MissingKey(k));
        let num = |k: &'static str| -> Result<usize, ModelError> {
            get(k)?.parse().map_err(|_| ModelError::BadValue { key: k, value: m[k].clone() })
        };
        let format = get("zeroplay.format")?;
        if format != FORMAT {
            return Err(ModelError::Format(format.clone()));
        }
        let net: NetConfig = serde_json::from_str(get("zeroplay.net")?)
            .map_err(|_| ModelError::BadValue { key: "zeroplay.net", value: m["zeroplay.net"].clone() })?;
        net.validate().map_err(|e| ModelError::BadValue { key: "zeroplay.net", value: e })?;
        let margin_scale: f32 = get("zeroplay.margin_scale")?.parse().map_err(|_| ModelError::BadValue {
            key: "zeroplay.margin_scale",
            value: m["zeroplay.margin_scale"].clone(),
        })?;
        if !(margin_scale.is_finite() && margin_scale > 0.0) {
            return Err(ModelError::BadValue {
                key: "zeroplay.margin_scale",
                value: margin_scale.to_string(),
            });
        }
        let info = match m.get("zeroplay.info") {
            Some(s) => serde_json::from_str(s)
                .map_err(|_| ModelError::BadValue { key: "zeroplay.info", value: s.clone() })?,
            None => ModelInfo::default(),
        };
        Ok(ModelMeta {
            game: get("zeroplay.game")?.clone(),
            feature_version: num("zeroplay.feature_version")? as u32,
            feature_len: num("zeroplay.feature_len")?,
            policy_len: num("zeroplay.policy_len")?,
            net,
            margin_scale,
            info,
        })
    }
}

/// Why a model file was refused.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// Not a safetensors file, or a damaged one.
    #[error("not a readable safetensors model file: {0}")]
    NotSafetensors(String),
    /// Larger than [`MAX_MODEL_BYTES`].
    #[error("model file of {0} bytes is larger than the {MAX_MODEL_BYTES}-byte limit")]
    TooLarge(usize),
    /// A metadata key is missing.
    #[error("model file lacks metadata key {0:?} (not a zeroplay model?)")]
    MissingKey(&'static str),
    /// A metadata value does not parse.
    #[error("model file metadata {key:?} has a bad value: {value}")]
    BadValue {
        /// The key.
        key: &'static str,
        /// What was found, or why it is wrong.
        value: String,
    },
    /// Another format version.
    #[error("model file format {0:?} is not {FORMAT:?}")]
    Format(String),
    /// A model for another game.
    #[error("model is for game {found:?}, not {expected:?}")]
    WrongGame {
        /// The game asked for.
        expected: String,
        /// The game in the file.
        found: String,
    },
    /// Feature encoding mismatch.
    #[error(
        "model was trained on {game} feature encoding v{found} ({found_len} inputs), this engine encodes v{expected} ({expected_len} inputs): retrain or use a matching engine"
    )]
    FeatureVersion {
        /// Game.
        game: String,
        /// The engine's version.
        expected: u32,
        /// The engine's feature length.
        expected_len: usize,
        /// The file's version.
        found: u32,
        /// The file's feature length.
        found_len: usize,
    },
    /// Tensors missing, unexpected or of the wrong shape.
    #[error("model weights do not fit the network: {0}")]
    Weights(String),
}

/// SHA-256 of `bytes`, as 64 lowercase hex digits.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Serialises `net` with `meta` into model file bytes.
///
/// # Errors
/// [`ModelError::Weights`] if burn cannot serialise the weights.
pub fn to_bytes(net: &ValueNet, meta: &ModelMeta) -> Result<Vec<u8>, ModelError> {
    let mut store = SafetensorsStore::from_bytes(None).clear_metadata();
    for (k, v) in meta.to_map() {
        store = store.metadata(k, v);
    }
    net.save_into(&mut store).map_err(|e| ModelError::Weights(e.to_string()))?;
    store.get_bytes().map_err(|e| ModelError::Weights(e.to_string()))
}

/// Reads only the metadata of model file bytes.
///
/// # Errors
/// [`ModelError`] if the bytes are not a zeroplay model file.
pub fn read_meta(bytes: &[u8]) -> Result<ModelMeta, ModelError> {
    if bytes.len() > MAX_MODEL_BYTES {
        return Err(ModelError::TooLarge(bytes.len()));
    }
    let (_, md) = safetensors::SafeTensors::read_metadata(bytes)
        .map_err(|e| ModelError::NotSafetensors(e.to_string()))?;
    let map = md.metadata().clone().unwrap_or_default();
    ModelMeta::from_map(&map)
}

/// Checks model file bytes without loading them into a network: the metadata, and the
/// safetensors structure (header, offsets, lengths). For servers that store models they do
/// not run (the coordinator).
///
/// # Errors
/// [`ModelError`] for anything that is not a well-formed zeroplay model file.
pub fn check(bytes: &[u8]) -> Result<ModelMeta, ModelError> {
    let meta = read_meta(bytes)?;
    safetensors::SafeTensors::deserialize(bytes).map_err(|e| ModelError::NotSafetensors(e.to_string()))?;
    Ok(meta)
}

/// Compares the tensor table of `bytes` with that of `expected` (a freshly built network of
/// the declared shape, so the list cannot drift from the code): every tensor present, float32
/// and of the right shape, nothing extra. Done before burn reads the weights, so a float16
/// file or a missing tensor is a clear [`ModelError::Weights`], not a panic in a matmul or a
/// library's hint.
fn check_tensors(bytes: &[u8], expected: &[u8]) -> Result<(), ModelError> {
    let have = safetensors::SafeTensors::deserialize(bytes)
        .map_err(|e| ModelError::NotSafetensors(e.to_string()))?;
    let want =
        safetensors::SafeTensors::deserialize(expected).map_err(|e| ModelError::Weights(e.to_string()))?;
    let mut problems = Vec::new();
    let mut names: Vec<(String, safetensors::tensor::TensorView<'_>)> = want.tensors();
    names.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, w) in &names {
        match have.tensor(name) {
            Err(_) => problems.push(format!("tensor `{name}` is missing")),
            Ok(t) if t.dtype() != safetensors::Dtype::F32 => problems.push(format!(
                "tensor `{name}` is {:?}; zeroplay model files hold float32 (F32) tensors (convert it)",
                t.dtype()
            )),
            Ok(t) if t.shape() != w.shape() => problems.push(format!(
                "tensor `{name}` has shape {:?}, the network needs {:?}",
                t.shape(),
                w.shape()
            )),
            Ok(_) => {}
        }
    }
    let mut extra: Vec<String> =
        have.names().into_iter().filter(|n| want.tensor(n).is_err()).map(str::to_string).collect();
    extra.sort();
    problems.extend(extra.into_iter().map(|n| format!("tensor `{n}` is not part of the declared network")));
    if problems.is_empty() { Ok(()) } else { Err(ModelError::Weights(problems.join("; "))) }
}

/// A loaded, checked network ready for inference. Cloning shares the weights.
#[derive(Clone, Debug)]
pub struct Model {
    /// The network (validation mode, no autodiff).
    pub net: ValueNet,
    /// Its metadata.
    pub meta: ModelMeta,
    /// The device it runs on.
    pub device: Device,
    /// SHA-256 of the file it came from.
    pub sha256: String,
}

/// Loads model file bytes for game `G` onto `device`.
///
/// # Errors
/// [`ModelError`] for anything that is not a model of `G` with this engine's feature
/// encoding, or whose weights do not fit its declared network.
pub fn load<G: Features>(bytes: &[u8], device: &Device) -> Result<Model, ModelError> {
    let meta = read_meta(bytes)?;
    if meta.game != G::NAME {
        return Err(ModelError::WrongGame { expected: G::NAME.into(), found: meta.game });
    }
    if meta.feature_version != G::FEATURE_VERSION
        || meta.feature_len != G::FEATURE_LEN
        || meta.policy_len != G::POLICY_LEN
    {
        return Err(ModelError::FeatureVersion {
            game: meta.game,
            expected: G::FEATURE_VERSION,
            expected_len: G::FEATURE_LEN,
            found: meta.feature_version,
            found_len: meta.feature_len,
        });
    }
    // Tensors are checked by safetensors itself first (offsets, lengths), so a damaged body
    // is refused before burn sees it.
    safetensors::SafeTensors::deserialize(bytes).map_err(|e| ModelError::NotSafetensors(e.to_string()))?;
    let mut net = ValueNet::new(&meta.net, meta.feature_len, meta.policy_len, device);
    check_tensors(bytes, &to_bytes(&net, &meta)?)?;
    let mut store = SafetensorsStore::from_bytes(Some(bytes.to_vec())).validate(true).allow_partial(false);
    let applied = net.load_from(&mut store).map_err(|e| ModelError::Weights(e.to_string()))?;
    if !applied.errors.is_empty() || !applied.missing.is_empty() || !applied.unused.is_empty() {
        return Err(ModelError::Weights(applied.to_string()));
    }
    Ok(Model { net: net.valid(), meta, device: device.clone(), sha256: sha256_hex(bytes) })
}
