//! The coordinator's Prometheus metrics (served at `/metrics` by [`zeroplay_telemetry`]).
//!
//! Counts it already keeps ([`crate::ingest::Stats`], the lease table, the worker table, the
//! model list) are read at scrape time, so the metrics cannot drift from what the `Status`
//! RPC reports. The acknowledgement latency is a histogram observed on every `SubmitGame`.
//!
//! The registry holds only a [`Weak`] reference to the service's shared state: it must not
//! keep the ingest channel (and so the writer thread) alive after shutdown.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use zeroplay_storage::SyncStats;
use zeroplay_telemetry::Live;
use zeroplay_telemetry::prometheus_client::registry::Registry;

use crate::games::GameKind;
use crate::ingest::Stats;
use crate::service::{Observed, Shared};
use crate::store::ModelEntry;

/// The coordinator's registry: metric names start with `zeroplay_coordinator_`.
pub fn registry(
    stats: Arc<Stats>,
    shared: Weak<Shared>,
    observed: &Observed,
    storage: Option<Arc<SyncStats>>,
    connections: &zeroplay_net::Guard,
) -> Registry {
    let mut r = Registry::with_prefix("zeroplay_coordinator");
    r.register(
        "submit_seconds",
        "Seconds from a SubmitGame call to its answer (validation, the group commit and the reply)",
        observed.ack_seconds.clone(),
    );
    let st = |f: fn(&Stats) -> u64| {
        let stats = stats.clone();
        move || f(&stats)
    };
    let sh = |f: fn(&Shared) -> f64| {
        let shared = shared.clone();
        move || shared.upgrade().map_or(0.0, |s| f(&s))
    };
    let sh_count = |f: fn(&Shared) -> u64| {
        let shared = shared.clone();
        move || shared.upgrade().map_or(0, |s| f(&s))
    };
    let mut live = Live::new()
        .counter(
            "games_stored",
            "Games acknowledged and stored",
            st(|s| s.games_stored.load(Ordering::Relaxed)),
        )
        .counter(
            "positions_stored",
            "Positions of the stored games",
            st(|s| s.positions_stored.load(Ordering::Relaxed)),
        )
        .counter(
            "positions_written",
            "Positions written to finished Parquet files",
            st(|s| s.positions_in_parquet.load(Ordering::Relaxed)),
        )
        .counter("parquet_files", "Parquet files written", st(|s| s.parquet_files.load(Ordering::Relaxed)))
        .counter(
            "games_rejected_invalid",
            "Submissions refused as malformed or illegal",
            st(|s| s.rejected_invalid.load(Ordering::Relaxed)),
        )
        .counter(
            "games_rejected_duplicate",
            "Submissions of a game already stored (acknowledged, not stored twice)",
            st(|s| s.rejected_duplicate.load(Ordering::Relaxed)),
        )
        .counter(
            "games_repeated_moves",
            "Games whose moves from their start repeat a stored game's (see limits.repeated_games)",
            st(|s| s.repeated_moves.load(Ordering::Relaxed)),
        )
        .gauge(
            "quarantined_files",
            "Parquet files moved to quarantine/ at this start (damaged, or a second copy of stored games); see the log",
            {
                let stats = stats.clone();
                move || stats.quarantined_files.load(Ordering::Relaxed) as f64
            },
        )
        .gauge(
            "adopted_files",
            "Parquet files the database did not list, adopted (indexed) at this start",
            {
                let stats = stats.clone();
                move || stats.adopted_files.load(Ordering::Relaxed) as f64
            },
        )
        .counter(
            "registrations_refused",
            "Register calls refused: too many registrations from one address or in all",
            st(|s| s.registrations_refused.load(Ordering::Relaxed)),
        )
        .counter(
            "checks_agreed",
            "Checks whose stored move (root value; visits, when searched with a network) agreed with another worker's search",
            st(|s| s.checks_agreed.load(Ordering::Relaxed)),
        )
        .counter(
            "checks_disagreed",
            "Checks whose stored root value (or visit distribution) was further than checks.tolerance (visit_tolerance) from another worker's search",
            st(|s| s.checks_disagreed.load(Ordering::Relaxed)),
        )
        .gauge(
            "checks_pending",
            "Value checks waiting for a checker (a worker other than the one that stored the game)",
            sh(|s| s.checks.lock().expect("not poisoned").counts().0 as f64),
        )
        .counter(
            "workers_quarantined",
            "Workers quarantined for stored values that disagreed with other workers' checks",
            st(|s| s.workers_quarantined.load(Ordering::Relaxed)),
        )
        .counter(
            "games_set_aside",
            "Games of quarantined workers set aside (listed in .set-aside.json files; the trainer skips them)",
            st(|s| s.games_set_aside.load(Ordering::Relaxed)),
        )
        .counter(
            "games_rejected_oversized",
            "Submissions refused as too large",
            st(|s| s.rejected_oversized.load(Ordering::Relaxed)),
        )
        .gauge(
            "positions_staged",
            "Positions acknowledged but not yet in a Parquet file (the write-ahead log's depth)",
            sh(|s| {
                let st = &s.stats;
                st.positions_stored
                    .load(Ordering::Relaxed)
                    .saturating_sub(st.positions_in_parquet.load(Ordering::Relaxed)) as f64
            }),
        )
        .gauge(
            "ingest_queue_depth",
            "Validated submissions waiting for the database writer",
            sh(|s| (s.ingest.max_capacity() - s.ingest.capacity()) as f64),
        )
        .gauge(
            "leases_active",
            "Leases held by workers now",
            sh(|s| s.leases.lock().expect("not poisoned").active() as f64),
        )
        .gauge(
            "leases_queued",
            "Positions of expired or released leases waiting to be handed out again",
            sh(|s| s.leases.lock().expect("not poisoned").queued() as f64),
        )
        .counter(
            "leases_drawn",
            "New start positions drawn over the run's life",
            sh_count(|s| s.leases.lock().expect("not poisoned").drawn),
        )
        .counter(
            "leases_expired",
            "Leases that expired without a heartbeat (since this process started)",
            sh_count(|s| s.leases.lock().expect("not poisoned").expired),
        )
        .gauge(
            "workers_registered",
            "Worker registrations held (bounded by workers.max_registrations; silent ones are forgotten)",
            sh(|s| s.workers.lock().expect("not poisoned").len() as f64),
        )
        .gauge(
            "workers_alive",
            "Workers heard from within the lease time-to-live",
            sh(|s| {
                let ttl = std::time::Duration::from_millis(s.cfg.leases.ttl_ms);
                s.workers.lock().expect("not poisoned").alive(ttl) as f64
            }),
        )
        .gauge(
            "gating_runs",
            "Candidates being gated now",
            sh(|s| s.gating.lock().expect("not poisoned").runs() as f64),
        )
        .gauge(
            "evaluation_leases_active",
            "Gating matches being played by workers now",
            sh(|s| s.gating.lock().expect("not poisoned").active() as f64),
        )
        .labeled_gauge(
            "best_model_version",
            "Version of the best model of each game",
            "game",
            versions(shared.clone(), ModelEntry::is_best_kind),
        )
        .labeled_gauge(
            "latest_model_version",
            "Version of the newest published model of each game",
            "game",
            versions(shared.clone(), |_| true),
        );
    if let Some(s) = storage {
        let sync = |f: fn(&SyncStats) -> &AtomicU64| {
            let s = s.clone();
            move || f(&s).load(Ordering::Relaxed)
        };
        live = live
            .counter(
                "storage_uploaded_files",
                "Files uploaded to object storage",
                sync(|s| &s.uploaded_files),
            )
            .counter(
                "storage_uploaded_bytes",
                "Bytes uploaded to object storage",
                sync(|s| &s.uploaded_bytes),
            )
            .counter(
                "storage_failures",
                "Failed object storage listings and uploads (each retried at the next pass)",
                sync(|s| &s.failures),
            );
    }
    r.register_collector(Box::new(live.connections(connections)));
    r
}

/// Per game, the version of the newest model that `pick` accepts.
fn versions(
    shared: Weak<Shared>,
    pick: fn(&ModelEntry) -> bool,
) -> impl Fn() -> Vec<(String, f64)> + Send + Sync + 'static {
    move || {
        let Some(s) = shared.upgrade() else { return Vec::new() };
        let models = s.store.models().unwrap_or_default();
        GameKind::ALL
            .iter()
            .filter_map(|k| {
                let m = models.iter().rev().find(|m| pick(m) && m.game_kind == *k)?;
                Some((k.name().to_string(), m.version as f64))
            })
            .collect()
    }
}
