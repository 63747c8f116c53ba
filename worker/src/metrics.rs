//! The worker's Prometheus metrics (served at `/metrics` when `metrics_listen` is set).
//!
//! Counts the worker keeps anyway are read at scrape time; the inference batch sizes are a
//! histogram observed by the inference thread. The registry holds only a [`Weak`] reference
//! to the worker's state, so it never keeps the inference thread or the spool alive.

use std::sync::Weak;
use std::sync::atomic::Ordering;

use zeroplay_telemetry::Live;
use zeroplay_telemetry::prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use zeroplay_telemetry::prometheus_client::registry::Registry;

use crate::State;

/// A histogram of positions per forward pass: 1, 2, 4, …, 1024.
pub fn batch_histogram() -> Histogram {
    Histogram::new(exponential_buckets(1.0, 2.0, 11))
}

/// The worker's registry: metric names start with `zeroplay_worker_`.
pub(crate) fn registry(state: Weak<State>, batch_sizes: Histogram) -> Registry {
    let mut r = Registry::with_prefix("zeroplay_worker");
    r.register(
        "inference_batch_positions",
        "Positions per network forward pass (leaves of all slots merged)",
        batch_sizes,
    );
    let count = |f: fn(&State) -> u64| {
        let state = state.clone();
        move || state.upgrade().map_or(0, |s| f(&s))
    };
    let gauge = |f: fn(&State) -> f64| {
        let state = state.clone();
        move || state.upgrade().map_or(0.0, |s| f(&s))
    };
    let live = Live::new()
        .counter(
            "games_played",
            "Self-play games played to the end",
            count(|s| s.played.load(Ordering::Relaxed)),
        )
        .counter(
            "positions_played",
            "Actions played in finished self-play games (chance outcomes included)",
            count(|s| s.moves.load(Ordering::Relaxed)),
        )
        .counter(
            "games_acknowledged",
            "Games the coordinator acknowledged (stored, or already stored)",
            count(|s| s.submitted.load(Ordering::Relaxed)),
        )
        .counter(
            "evaluation_matches",
            "Gating matches played and reported",
            count(|s| s.evaluation_matches.load(Ordering::Relaxed)),
        )
        .counter(
            "play_cpu_seconds",
            "CPU seconds the self-play threads spent playing (whole seconds)",
            count(|s| s.play_nanos.load(Ordering::Relaxed) / 1_000_000_000),
        )
        .gauge(
            "games_spooled",
            "Finished games on disk waiting for the coordinator's acknowledgement",
            gauge(|s| crate::spooled(&s.cfg.spool_dir).map_or(0, |v| v.len()) as f64),
        )
        .gauge(
            "leases_active",
            "Leases this worker holds now",
            gauge(|s| s.active.lock().expect("not poisoned").len() as f64),
        )
        .labeled_gauge(
            "model_version",
            "Version of the network each game's leaves use (0: none yet)",
            "game",
            {
                let state = state.clone();
                move || {
                    let Some(s) = state.upgrade() else { return Vec::new() };
                    s.models.kinds().map(|(kind, slot)| (kind.to_string(), slot.version() as f64)).collect()
                }
            },
        );
    r.register_collector(Box::new(live));
    r
}
