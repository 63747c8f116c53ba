//! # zeroplay model
//!
//! The learned part of zeroplay, shared by the trainer, the worker and the play server:
//!
//! - [`net`]: the value/policy network (burn): a residual MLP over a game's feature vector
//!   ([`engine::Features`]) with a win/draw/loss head, a score-margin head and, where the game
//!   has a fixed action space, a policy head for PUCT priors. Sizes are named configs.
//! - [`file`]: the model file (safetensors with zeroplay metadata), written and loaded with
//!   every check a file from elsewhere needs.
//! - [`eval`]: the network as the search's leaf evaluator: a hot-swappable [`eval::ModelSlot`],
//!   a per-game [`eval::NetEvaluator`] that pins one model per move, and a [`eval::Batcher`]
//!   that merges leaf batches across games.
//! - [`builtin`]: the models built into the binary (Banqi's `banqi-ab` leaf network), with
//!   their provenance in `engine/src/banqi/builtin/README.md`.
//! - [`cpu`]: the same forward pass without tensors for inference on the CPU, where the search
//!   asks a few positions at a time: sparse input layer, register-blocked hidden layers, only
//!   the legal actions' policy logits.
//!
//! Backends: burn's pure-Rust CPU backend (`Device::flex()`) is the default and trains; a GPU
//! device can be passed wherever a [`burn::prelude::Device`] is taken. Inference of up to
//! [`CPU_MAX_BATCH`] positions on the CPU device runs [`cpu::CpuNet`]; larger batches run
//! through burn ([`Model::infer_burn`]).

pub mod builtin;
pub mod cpu;
pub mod eval;
pub mod file;
pub mod net;

pub use eval::{
    Batcher, CPU_MAX_BATCH, ModelSlot, NetEvaluator, NetSource, gate_agent, gate_leaf, gate_user_ai,
    net_leaf, with_tables,
};
pub use file::{Model, ModelError, ModelInfo, ModelMeta, check, load, read_meta, sha256_hex, to_bytes};
pub use net::{NetConfig, ValueNet};

/// The default inference device: burn's pure-Rust CPU backend.
pub fn cpu() -> burn::prelude::Device {
    burn::prelude::Device::flex()
}
