//! # zeroplay trainer
//!
//! Learns the value/policy network ([`model::ValueNet`]) from self-play games with burn, and
//! decides which models the workers should use.
//!
//! - [`data`]: a window of the most recent positions from the coordinator's Parquet files,
//!   validated row by row; bad files are skipped.
//! - [`diagnose`]: per-head losses, value calibration by game phase and policy agreement
//!   with the search, as a table and an SVG.
//! - [`train`]: the loss, the optimiser (AdamW), checkpoints and model export.
//! - [`gate`]: candidate-vs-best matches with a threshold or SPRT rule, and Elo.
//! - [`pipeline`]: rounds of train → export → gate → publish, with the rating history and
//!   its plot ([`plot`]) in the run directory.
//! - [`metrics`]: Prometheus metrics of the rounds.
//!
//! The backend is chosen only at the entry point: [`device`] maps a name to a burn device
//! (`cpu` always; `cuda` and `wgpu` with the cargo features of the same names).

pub mod data;
pub mod diagnose;
pub mod gate;
pub mod metrics;
pub mod pipeline;
pub mod plot;
pub mod ratings;
pub mod train;

pub use pipeline::write_atomic;

/// The burn device for a backend name: `cpu` (pure-Rust, always), `cuda` or `wgpu` (with the
/// cargo features of the same names).
///
/// # Errors
/// An unknown name, or a GPU backend this binary was built without.
pub fn device(name: &str) -> Result<burn::prelude::Device, String> {
    match name {
        "cpu" | "flex" => Ok(burn::prelude::Device::flex()),
        #[cfg(feature = "cuda")]
        "cuda" => Ok(burn::prelude::Device::cuda(0)),
        #[cfg(feature = "wgpu")]
        "wgpu" => Ok(burn::prelude::Device::wgpu(Default::default())),
        "cuda" | "wgpu" => {
            Err(format!("this binary was built without the {name:?} backend: rebuild with --features {name}"))
        }
        other => Err(format!("unknown device {other:?}: cpu, cuda or wgpu")),
    }
}
