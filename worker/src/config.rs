//! The worker's configuration, errors and report.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Worker configuration (see `configs/worker.toml`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorkerConfig {
    /// Coordinator URL (`http://host:port`, or `https://` with TLS).
    pub coordinator: String,
    /// The worker role's bearer token.
    pub token: String,
    /// Name shown in the coordinator's logs.
    pub name: String,
    /// Games played at once; 0 = one per core.
    pub slots: usize,
    /// Directory for finished games not yet acknowledged.
    pub spool_dir: PathBuf,
    /// CA certificate (PEM) to trust for TLS; none: plain HTTP/2 or system roots.
    pub ca_cert: Option<PathBuf>,
    /// First retry delay after a failed call, in milliseconds (doubles up to the maximum).
    pub backoff_initial_ms: u64,
    /// Longest retry delay, in milliseconds.
    pub backoff_max_ms: u64,
    /// Stop after this many games have been played and acknowledged (none: run until told).
    pub max_games: Option<u64>,
    /// Network inference: positions per forward pass at most (leaves of all games merged).
    pub inference_batch: usize,
    /// Network inference: longest wait for a batch to fill, in microseconds.
    pub inference_wait_us: u64,
    /// Address (`host:port`) of the HTTP endpoints `/metrics` (Prometheus), `/healthz` and
    /// `/readyz` (ready once registered with the coordinator); none: not served.
    pub metrics_listen: Option<String>,
}

impl Default for WorkerConfig {
    fn default() -> Self {
        WorkerConfig {
            coordinator: "http://127.0.0.1:50051".into(),
            token: "change-me-worker-token".into(),
            name: "worker".into(),
            slots: 0,
            spool_dir: PathBuf::from("spool"),
            ca_cert: None,
            backoff_initial_ms: 200,
            backoff_max_ms: 10_000,
            max_games: None,
            inference_batch: 64,
            inference_wait_us: 200,
            metrics_listen: None,
        }
    }
}

/// Errors that stop a worker.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// Bad configuration.
    #[error("worker config: {0}")]
    Config(String),
    /// The spool directory failed.
    #[error("spool directory: {0}")]
    Spool(#[from] std::io::Error),
    /// The coordinator refused the worker outright.
    #[error("coordinator refused registration: {0}")]
    Refused(String),
}

/// What a worker did, returned when it stops.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct WorkerReport {
    /// Games played to the end.
    pub games_played: u64,
    /// Games acknowledged by the coordinator (including already-stored ones).
    pub games_submitted: u64,
    /// Games still in the spool directory.
    pub games_spooled: u64,
    /// CPU seconds the self-play threads spent playing games (search and rules), summed over
    /// slots (wall seconds where the platform has no per-thread CPU clock).
    pub play_seconds: f64,
    /// Process CPU seconds (Linux; 0 elsewhere).
    pub cpu_seconds: f64,
    /// Gating matches played and reported.
    pub evaluation_matches: u64,
    /// Value checks of other workers' stored moves searched and reported.
    pub value_checks: u64,
}

impl WorkerConfig {
    /// The coordinator connection part of this configuration.
    pub fn client(&self) -> zeroplay_client::ClientConfig {
        zeroplay_client::ClientConfig {
            coordinator: self.coordinator.clone(),
            token: self.token.clone(),
            ca_cert: self.ca_cert.clone(),
        }
    }

    /// The retry delays of this configuration.
    pub fn backoff(&self) -> zeroplay_client::Backoff {
        zeroplay_client::Backoff { initial_ms: self.backoff_initial_ms, max_ms: self.backoff_max_ms }
    }
}
