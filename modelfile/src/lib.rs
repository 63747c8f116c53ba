//! # zeroplay model file (burn-free)
//!
//! What a process needs to accept, store and describe a zeroplay model file without running
//! it: the metadata ([`ModelMeta`], [`NetConfig`], [`ModelInfo`]), the format tag, the size
//! limit, the SHA-256, and [`check`] (metadata plus the safetensors structure). The
//! coordinator stores the models it is sent with this alone, so it does not link burn; the
//! `model` crate adds the network, [`to_bytes`](../model/fn.to_bytes.html) and loading.
//!
//! [`tables`] keeps the other file search reads: Banqi's endgame tables, in a directory.
//!
//! Metadata keys:
//!
//! | key | value |
//! |---|---|
//! | `zeroplay.format` | [`FORMAT`] |
//! | `zeroplay.game` | game name (`battlenumber`, `banqi`, `trigolden`) |
//! | `zeroplay.feature_version` | the engine's [`engine::Features::FEATURE_VERSION`] for that game |
//! | `zeroplay.feature_len`, `zeroplay.policy_len` | input width and policy size |
//! | `zeroplay.ownership_len` | auxiliary ownership head size (optional; missing: 0, none) |
//! | `zeroplay.net` | the [`NetConfig`] as JSON |
//! | `zeroplay.margin_scale` | the margin output times this is points |
//! | `zeroplay.info` | [`ModelInfo`] as JSON (provenance: steps, samples, parent) |

use std::collections::HashMap;

pub mod tables;
mod verify;

pub use verify::{check_for, expected_tensors};

use engine::Features;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Format tag of the files zeroplay writes and reads.
pub const FORMAT: &str = "zeroplay-model/1";

/// Largest model file accepted (256 MiB).
pub const MAX_MODEL_BYTES: usize = 256 << 20;

/// Network sizes. Named sizes: [`NetConfig::named`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetConfig {
    /// Width of the hidden layers.
    pub hidden: usize,
    /// Residual blocks (two layers each) after the input layer.
    pub blocks: usize,
}

impl NetConfig {
    /// The named sizes, smallest first.
    pub const NAMES: [&'static str; 5] = ["nano", "tiny", "small", "medium", "large"];

    /// A named size: `nano` (64 wide, no residual block: the input layer and the heads, the
    /// size an alpha-beta searcher can afford at every leaf), `tiny` (64 wide, 1 block),
    /// `small` (128, 2), `medium` (256, 3) or `large` (512, 4); or any `WIDTHxBLOCKS`
    /// (`128x0`) that [`NetConfig::validate`] accepts.
    pub fn named(name: &str) -> Option<NetConfig> {
        // `WIDTHxBLOCKS` (`128x0`): any size, for experiments between the named ones.
        if let Some((w, b)) = name.split_once('x')
            && let (Ok(hidden), Ok(blocks)) = (w.parse(), b.parse())
        {
            let cfg = NetConfig { hidden, blocks };
            return cfg.validate().is_ok().then_some(cfg);
        }
        let (hidden, blocks) = match name {
            "nano" => (64, 0),
            "tiny" => (64, 1),
            "small" => (128, 2),
            "medium" => (256, 3),
            "large" => (512, 4),
            _ => return None,
        };
        Some(NetConfig { hidden, blocks })
    }

    /// Whether this is a one-layer net (`nano`: the input layer and the heads, no residual
    /// block): the only size a game's own alpha-beta searcher runs at its leaves
    /// (`GameAgents::shallow_net_searcher`), so gating, `uci`, `local` and `strength` all ask here.
    pub fn is_one_layer(&self) -> bool {
        self.blocks == 0
    }

    /// Checks the sizes are sane.
    ///
    /// # Errors
    /// A description of the bad size.
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=4096).contains(&self.hidden) {
            return Err(format!("hidden width {} is outside 1..=4096", self.hidden));
        }
        if self.blocks > 32 {
            return Err(format!("{} residual blocks is more than 32", self.blocks));
        }
        Ok(())
    }
}

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
    /// Size of the auxiliary ownership head (0: none; else the game's
    /// [`engine::Features::OWNERSHIP_LEN`]). Training uses it; search does not read it.
    pub ownership_len: usize,
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
            ownership_len: 0,
            net,
            margin_scale,
            info,
        }
    }

    /// The metadata as safetensors `__metadata__` entries.
    pub fn to_map(&self) -> Vec<(String, String)> {
        vec![
            ("zeroplay.format".into(), FORMAT.into()),
            ("zeroplay.game".into(), self.game.clone()),
            ("zeroplay.feature_version".into(), self.feature_version.to_string()),
            ("zeroplay.feature_len".into(), self.feature_len.to_string()),
            ("zeroplay.policy_len".into(), self.policy_len.to_string()),
            ("zeroplay.ownership_len".into(), self.ownership_len.to_string()),
            ("zeroplay.net".into(), serde_json::to_string(&self.net).expect("plain struct")),
            ("zeroplay.margin_scale".into(), self.margin_scale.to_string()),
            ("zeroplay.info".into(), serde_json::to_string(&self.info).expect("plain struct")),
        ]
    }

    /// Reads and checks the metadata entries.
    ///
    /// # Errors
    /// [`ModelError`] naming the missing or bad key.
    pub fn from_map(m: &HashMap<String, String>) -> Result<ModelMeta, ModelError> {
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
        // Files from before the ownership head have no key: no head.
        let ownership_len = match m.get("zeroplay.ownership_len") {
            None => 0,
            Some(v) => match v.parse::<usize>() {
                Ok(n) if n <= 4096 => n,
                _ => return Err(ModelError::BadValue { key: "zeroplay.ownership_len", value: v.clone() }),
            },
        };
        Ok(ModelMeta {
            ownership_len,
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
    /// A weight that is NaN or infinite: such a network answers NaN for every position.
    #[error("model tensor {tensor:?} holds a non-finite weight ({value}) at element {index}: refused")]
    NonFinite {
        /// The tensor's name.
        tensor: String,
        /// The element's index in the tensor.
        index: usize,
        /// The value read.
        value: f32,
    },
    /// A tensor of a type the networks never use.
    #[error("model tensor {tensor:?} has type {dtype}, not F32")]
    Dtype {
        /// The tensor's name.
        tensor: String,
        /// Its type.
        dtype: String,
    },
}

/// SHA-256 of `bytes`, as 64 lowercase hex digits.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
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

/// Checks model file bytes without knowing the game: the metadata, the safetensors structure
/// (header, offsets, lengths), float32 and finite weights. [`check_for`] checks a model of a
/// known game in full (tensor table, a forward pass); a server that stores models checks with
/// that.
///
/// # Errors
/// [`ModelError`] for anything that is not a well-formed zeroplay model file.
pub fn check(bytes: &[u8]) -> Result<ModelMeta, ModelError> {
    let meta = read_meta(bytes)?;
    let st = safetensors::SafeTensors::deserialize(bytes)
        .map_err(|e| ModelError::NotSafetensors(e.to_string()))?;
    check_finite(&st)?;
    Ok(meta)
}

/// Checks that every tensor is F32 and every weight finite. A single NaN makes the network
/// answer NaN everywhere, which search would play as if it meant something.
///
/// # Errors
/// [`ModelError::NonFinite`] naming the first bad weight; [`ModelError::Dtype`] for a tensor
/// that is not F32.
pub fn check_finite(st: &safetensors::SafeTensors<'_>) -> Result<(), ModelError> {
    let mut names = st.names();
    names.sort();
    for name in names {
        let t = st.tensor(name).map_err(|e| ModelError::NotSafetensors(e.to_string()))?;
        if t.dtype() != safetensors::Dtype::F32 {
            return Err(ModelError::Dtype { tensor: name.to_string(), dtype: format!("{:?}", t.dtype()) });
        }
        for (index, c) in t.data().chunks_exact(4).enumerate() {
            let value = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            if !value.is_finite() {
                return Err(ModelError::NonFinite { tensor: name.to_string(), index, value });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(meta: &ModelMeta) -> Vec<u8> {
        let data = [0u8; 4];
        let view = safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![1], &data).unwrap();
        safetensors::serialize([("x", view)], Some(meta.to_map().into_iter().collect())).unwrap()
    }

    #[test]
    fn sizes_are_named_or_width_by_blocks() {
        assert_eq!(NetConfig::named("nano"), Some(NetConfig { hidden: 64, blocks: 0 }));
        assert_eq!(NetConfig::named("128x0"), Some(NetConfig { hidden: 128, blocks: 0 }));
        assert_eq!(NetConfig::named("96x3"), Some(NetConfig { hidden: 96, blocks: 3 }));
        let one_layer: Vec<&str> =
            NetConfig::NAMES.into_iter().filter(|n| NetConfig::named(n).unwrap().is_one_layer()).collect();
        assert_eq!(one_layer, ["nano"]);
        assert!(NetConfig::named("128x0").unwrap().is_one_layer());
        for bad in ["0x1", "64x33", "x", "64x", "huge", "9999x0"] {
            assert_eq!(NetConfig::named(bad), None, "{bad}");
        }
    }

    #[test]
    fn metadata_round_trips_and_bad_values_are_named() {
        let meta = ModelMeta::for_game::<engine::battlenumber::BattleNumber>(
            NetConfig::named("tiny").unwrap(),
            10.0,
            ModelInfo { steps: 7, ..Default::default() },
        );
        assert_eq!(check(&file(&meta)).unwrap(), meta);
        let mut bad = meta.clone();
        bad.margin_scale = -1.0;
        let e = check(&file(&bad)).unwrap_err();
        assert!(matches!(e, ModelError::BadValue { key: "zeroplay.margin_scale", .. }), "{e}");
        let mut map: HashMap<String, String> = meta.to_map().into_iter().collect();
        map.remove("zeroplay.game");
        assert!(matches!(ModelMeta::from_map(&map), Err(ModelError::MissingKey("zeroplay.game"))));
        // The ownership head's size: optional (older files), bounded, round-tripped.
        let mut owned = meta.clone();
        owned.ownership_len = 49;
        assert_eq!(check(&file(&owned)).unwrap().ownership_len, 49);
        let mut map: HashMap<String, String> = meta.to_map().into_iter().collect();
        map.remove("zeroplay.ownership_len");
        assert_eq!(ModelMeta::from_map(&map).unwrap().ownership_len, 0);
        map.insert("zeroplay.ownership_len".into(), "-3".into());
        assert!(matches!(
            ModelMeta::from_map(&map),
            Err(ModelError::BadValue { key: "zeroplay.ownership_len", .. })
        ));
        assert!(matches!(check(b"not a model"), Err(ModelError::NotSafetensors(_))));
        // A NaN or an infinity anywhere in the weights is refused, naming the tensor.
        for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            let data: Vec<u8> = [1.0f32, bad, 2.0].iter().flat_map(|x| x.to_le_bytes()).collect();
            let view = safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![3], &data).unwrap();
            let f = safetensors::serialize([("w", view)], Some(meta.to_map().into_iter().collect())).unwrap();
            let e = check(&f).unwrap_err();
            assert!(matches!(&e, ModelError::NonFinite { tensor, index: 1, .. } if tensor == "w"), "{e}");
        }
        assert_eq!(sha256_hex(b"").len(), 64);
    }
}
