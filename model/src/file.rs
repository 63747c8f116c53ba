//! The model file: one safetensors file holding the weights, with everything needed to use
//! them in its metadata.
//!
//! Because the file is plain safetensors, other tools (Python's `safetensors`, PyTorch,
//! numpy) open it directly; `docs/model-format.md` documents tensor names and the input
//! encoding. The metadata, its keys and the checks that need no network live in the
//! burn-free `modelfile` crate (re-exported here), which the coordinator uses alone.
//!
//! Loading checks every key, the game and the feature version against the engine, then the
//! presence, dtype and shape of every tensor. Anything wrong is a [`ModelError`]; nothing is
//! half loaded.

use burn::prelude::*;
use burn::store::{ModuleSnapshot, SafetensorsStore};
use engine::Features;

pub use modelfile::{
    FORMAT, MAX_MODEL_BYTES, ModelError, ModelInfo, ModelMeta, check, read_meta, sha256_hex,
};

use crate::net::ValueNet;

/// Serialises `net` with `meta` into model file bytes (`meta.ownership_len` is taken from
/// `net`).
///
/// # Errors
/// [`ModelError::Weights`] if burn cannot serialise the weights.
pub fn to_bytes(net: &ValueNet, meta: &ModelMeta) -> Result<Vec<u8>, ModelError> {
    let mut store = SafetensorsStore::from_bytes(None).clear_metadata();
    // The head's size is the network's: metadata cannot claim another.
    let meta = ModelMeta { ownership_len: net.ownership_len(), ..meta.clone() };
    for (k, v) in meta.to_map() {
        store = store.metadata(k, v);
    }
    net.save_into(&mut store).map_err(|e| ModelError::Weights(e.to_string()))?;
    store.get_bytes().map_err(|e| ModelError::Weights(e.to_string()))
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
    /// The weights copied out for [`crate::cpu::CpuNet`], which runs inference when the
    /// device is burn's CPU backend (`None` on a GPU device: burn's path).
    pub cpu: Option<std::sync::Arc<crate::cpu::CpuNet>>,
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
    let st = safetensors::SafeTensors::deserialize(bytes)
        .map_err(|e| ModelError::NotSafetensors(e.to_string()))?;
    if meta.ownership_len != 0 && meta.ownership_len != G::OWNERSHIP_LEN {
        return Err(ModelError::BadValue {
            key: "zeroplay.ownership_len",
            value: format!("{} (this game's ownership target has {})", meta.ownership_len, G::OWNERSHIP_LEN),
        });
    }
    let mut net =
        ValueNet::with_ownership(&meta.net, meta.feature_len, meta.policy_len, meta.ownership_len, device);
    check_tensors(bytes, &to_bytes(&net, &meta)?)?;
    // Names, types and shapes fit: now every weight must be a number.
    modelfile::check_finite(&st)?;
    let mut store = SafetensorsStore::from_bytes(Some(bytes.to_vec())).validate(true).allow_partial(false);
    let applied = net.load_from(&mut store).map_err(|e| ModelError::Weights(e.to_string()))?;
    if !applied.errors.is_empty() || !applied.missing.is_empty() || !applied.unused.is_empty() {
        return Err(ModelError::Weights(applied.to_string()));
    }
    let net = net.valid();
    let cpu = (*device == Device::flex()).then(|| std::sync::Arc::new(crate::cpu::CpuNet::new(&net)));
    Ok(Model { net, meta, device: device.clone(), sha256: sha256_hex(bytes), cpu })
}
