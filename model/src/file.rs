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
    // The burn-free check the coordinator runs too: metadata against the engine, the tensor
    // table of the declared network, finite weights, a forward pass. Then burn reads them.
    let meta = modelfile::check_for::<G>(bytes)?;
    let mut net =
        ValueNet::with_ownership(&meta.net, meta.feature_len, meta.policy_len, meta.ownership_len, device);
    let mut store = SafetensorsStore::from_bytes(Some(bytes.to_vec())).validate(true).allow_partial(false);
    let applied = net.load_from(&mut store).map_err(|e| ModelError::Weights(e.to_string()))?;
    if !applied.errors.is_empty() || !applied.missing.is_empty() || !applied.unused.is_empty() {
        return Err(ModelError::Weights(applied.to_string()));
    }
    let net = net.valid();
    let cpu = (*device == Device::flex()).then(|| std::sync::Arc::new(crate::cpu::CpuNet::new(&net)));
    Ok(Model { net, meta, device: device.clone(), sha256: sha256_hex(bytes), cpu })
}
