//! The play server's Prometheus metrics (`zeroplay_serve_*`, at `/metrics`): games held, AI
//! turns and their simulations and thinking time, and the model version each game's AI uses.
//! All are read at scrape time from counters the server keeps for `/api/info`.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use zeroplay_telemetry::Live;
use zeroplay_telemetry::prometheus_client::registry::Registry;

use crate::AppState;

/// The play server's registry.
pub fn registry(state: Arc<AppState>) -> Registry {
    let mut r = Registry::with_prefix("zeroplay_serve");
    let s = state.clone();
    let held = move || s.games_held() as f64;
    let s = state.clone();
    let created = move || s.games_created.load(Ordering::Relaxed);
    let s = state.clone();
    let turns = move || s.ai_turns.load(Ordering::Relaxed);
    let s = state.clone();
    let sims = move || s.ai_sims.load(Ordering::Relaxed);
    let s = state.clone();
    let think_ms = move || s.ai_micros.load(Ordering::Relaxed) / 1000;
    let connections = state.connections.clone();
    let s = state;
    // Every game the server hosts, one label each.
    let versions = move || {
        s.hosts.models().map(|(kind, slot)| (kind.name().to_string(), slot.version() as f64)).collect()
    };
    r.register_collector(Box::new(
        Live::new()
            .gauge("games_held", "Games held in memory now", held)
            .counter("games_created", "Games created since the server started", created)
            .counter("ai_turns", "AI turns computed", turns)
            .counter("ai_simulations", "MCTS simulations of the AI turns", sims)
            .counter("ai_think_milliseconds", "Milliseconds the AI spent thinking", think_ms)
            .labeled_gauge(
                "model_version",
                "Version of the network the game's AI uses (0: rollout MCTS)",
                "game",
                versions,
            )
            .connections(&connections),
    ));
    r
}
