//! # zeroplay coordinator
//!
//! Hands start positions to self-play workers (leases), validates every submitted game by
//! replaying it with the engine, acknowledges a game only once it is durable in the embedded
//! database (redb, group commit), and compacts stored games into Parquet files (one row per
//! position; schema in [`rows`]). See `ARCHITECTURE.md` for the invariants.
//!
//! Entry point: [`run`] with a configuration, a bound listener and a shutdown future.

pub mod auth;
pub mod checks;
pub mod config;
pub mod error;
pub mod games;
pub mod gating;
pub mod ingest;
pub mod leases;
mod leasing;
pub mod metrics;
pub mod recover;
pub mod rows;
pub mod service;
pub mod store;
mod trust;
pub mod upload;
mod workers;

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::net::TcpListener;
use tokio::sync::{broadcast, mpsc};
use tonic::transport::{Identity, Server, ServerTlsConfig};
use tracing::{info, warn};
use zeroplay_proto::v1::coordinator_server::CoordinatorServer;

pub use config::CoordinatorConfig;

use crate::ingest::{CompactPolicy, Stats, spawn_compactor, spawn_writer};
use crate::leases::{Leases, Sources};
use crate::service::{AuthInterceptor, CoordinatorService, Shared};
use crate::store::Store;

/// Most concurrent calls on one connection.
const MAX_STREAMS_PER_CONNECTION: u32 = 256;

/// How long shutdown waits for connected clients to finish their calls.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Errors that stop the coordinator.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The configuration cannot run.
    #[error(transparent)]
    Config(#[from] config::ConfigError),
    /// A positions file is bad.
    #[error(transparent)]
    Positions(#[from] leases::PositionsFileError),
    /// The database or data directory failed.
    #[error(transparent)]
    Store(#[from] store::StoreError),
    /// TLS files could not be read.
    #[error("TLS: {0}")]
    Tls(String),
    /// The gRPC server failed.
    #[error("gRPC server: {0}")]
    Transport(#[from] tonic::transport::Error),
    /// The metrics listener could not be bound.
    #[error("{0}")]
    Metrics(String),
}

/// Rebuilds the index of the run directory `data_dir` from its files
/// (`zeroplay coordinator --rebuild-index`), with no coordinator running on it: every listed
/// Parquet file is read whole (a damaged one goes to `quarantine/`), every unlisted complete one
/// adopted, every move digest rebuilt, lost model entries listed again. A database that does
/// not open as one (not merely locked by a running coordinator) is moved to `quarantine/`
/// first and a new one built; its staged games, if any, are in the moved file.
///
/// # Errors
/// [`RunError::Store`] if the database is in use or the directory fails.
pub fn rebuild_index(data_dir: &std::path::Path) -> Result<recover::Recovery, RunError> {
    let store = match Store::open(data_dir) {
        Ok(s) => s,
        Err(store::StoreError::Db(e)) => {
            let db = data_dir.join("coordinator.redb");
            let qdir = data_dir.join("quarantine");
            std::fs::create_dir_all(&qdir).map_err(store::StoreError::Io)?;
            let moved = qdir.join(format!("coordinator.redb.{}", store::now_ms()));
            std::fs::rename(&db, &moved).map_err(store::StoreError::Io)?;
            warn!(error = %e, moved_to = %moved.display(), "the database does not open; moved aside, building a new one");
            Store::open(data_dir)?
        }
        Err(e) => return Err(e.into()),
    };
    Ok(recover::recover(&store, true)?)
}

/// Runs the coordinator on `listener` until `shutdown` completes, then stops accepting calls,
/// writes every staged game to Parquet and returns. With `metrics_listen` configured, also
/// serves `/metrics`, `/healthz` and `/readyz` there (see [`run_with_metrics`]).
///
/// # Errors
/// [`RunError`] if the configuration, data directory, database or server fails.
pub async fn run(
    cfg: CoordinatorConfig,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), RunError> {
    let metrics = match &cfg.metrics_listen {
        Some(addr) => Some(zeroplay_telemetry::bind(addr).await.map_err(RunError::Metrics)?),
        None => None,
    };
    run_with_metrics(cfg, listener, metrics, shutdown).await
}

/// [`run`] with the metrics listener given (tests bind port 0); `None`: no metrics endpoint.
/// `/readyz` answers 200 from when the recovered state is loaded and the gRPC server is
/// about to accept calls until shutdown begins.
///
/// # Errors
/// As [`run`].
pub async fn run_with_metrics(
    cfg: CoordinatorConfig,
    listener: TcpListener,
    metrics_listener: Option<TcpListener>,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), RunError> {
    cfg.validate()?;
    refuse_default_tokens_beyond_loopback(&cfg, &listener)?;
    let store = open_store(&cfg)?;
    let state = recover_state(&cfg, &store)?;

    let (tx, rx) = mpsc::channel(8192);
    let writer = spawn_writer(store.clone(), state.stats.clone(), rx);
    let stop = Arc::new(AtomicBool::new(false));
    let policy = CompactPolicy {
        rotate_positions: cfg.parquet.rotate_positions,
        rotate_after: Duration::from_secs(cfg.parquet.rotate_seconds),
    };
    let compactor = spawn_compactor(store.clone(), state.stats.clone(), policy, stop.clone());
    let syncer = start_mirror(&cfg, &store)?;
    let storage_stats = syncer.as_ref().map(zeroplay_storage::Syncer::stats);

    let shared = Arc::new(Shared {
        sources: Mutex::new(Sources::new(&cfg)?),
        leases: Mutex::new(state.leases),
        store: store.clone(),
        stats: state.stats,
        ingest: tx,
        seen: Mutex::new(state.seen),
        workers: Mutex::new(workers::Registrations::new(
            cfg.workers.clone(),
            Duration::from_millis(cfg.leases.heartbeat_interval_ms),
        )),
        started: Instant::now(),
        models: Mutex::new(Some(broadcast::channel(16).0)),
        gating: Mutex::new(state.gating),
        checks: Mutex::new(checks::Checks::new(cfg.checks.clone(), cfg.seed)),
        model_lock: tokio::sync::Mutex::new(()),
        observed: service::Observed::default(),
        model_ceiling: std::sync::atomic::AtomicU64::new(
            store.models().map_err(RunError::from)?.last().map_or(0, |m| m.version),
        ),
        digests: Mutex::new(state.digests),
        uploads: tokio::sync::Semaphore::new(cfg.limits.max_concurrent_uploads),
        cfg: cfg.clone(),
    });
    // Metrics and health: ready from here until shutdown begins. The server stops at the end
    // (or when its handle is dropped, on an early return).
    let health = zeroplay_telemetry::Health::new();
    let guarded = zeroplay_net::GuardedListener::new(listener, cfg.connections.clone(), "coordinator");
    // Every real client sends a token (the interceptor trusts its connection): an established
    // connection that never did makes way for newcomers once the caps are full (issue 42).
    guarded.guard().displace_untrusted();
    let metrics_server = metrics_listener.map(|l| {
        let registry = Arc::new(metrics::registry(
            shared.stats.clone(),
            Arc::downgrade(&shared),
            &shared.observed,
            storage_stats,
            guarded.guard(),
        ));
        zeroplay_telemetry::spawn(l, registry, health.clone())
    });
    let sweeper = spawn_sweeper(shared.clone());

    let served = serve(&cfg, &shared, guarded, &health, shutdown).await;

    info!("coordinator stopping: writing staged games to Parquet");
    sweeper.abort();
    drop(shared);
    stop.store(true, Ordering::Relaxed);
    tokio::task::spawn_blocking(move || {
        let _ = writer.join();
        let _ = compactor.join();
        // After the last Parquet file: its upload is the mirror's final pass.
        if let Some(s) = syncer {
            s.stop();
        }
    })
    .await
    .ok();
    if let Some(m) = metrics_server {
        m.stop().await;
    }
    served?;
    info!("coordinator stopped");
    Ok(())
}

/// Built-in tokens are in this source for anyone to read: a coordinator others can reach must
/// have its own. On loopback they are allowed, with a warning.
fn refuse_default_tokens_beyond_loopback(
    cfg: &CoordinatorConfig,
    listener: &TcpListener,
) -> Result<(), RunError> {
    let defaults = cfg.auth.defaults_in_use();
    if defaults.is_empty() {
        return Ok(());
    }
    let addr = listener.local_addr().map_err(|e| config::ConfigError(format!("listener: {e}")))?;
    if !addr.ip().is_loopback() {
        return Err(config::ConfigError(format!(
            "auth.{} still the built-in default while the coordinator listens on {addr}, beyond this \
             machine: set every token ([auth] in the config, or ZEROPLAY_WORKER_TOKEN, \
             ZEROPLAY_TRAINER_TOKEN, ZEROPLAY_ADMIN_TOKEN)",
            defaults.join(", auth.") + if defaults.len() > 1 { " are" } else { " is" }
        ))
        .into());
    }
    warn!(
        tokens = defaults.join(", "),
        "built-in default tokens in use: anyone who reads the source can act in those roles; \
         allowed only because the coordinator listens on loopback"
    );
    Ok(())
}

/// Opens the data directory's database and saves the resolved configuration (tokens redacted)
/// beside it.
fn open_store(cfg: &CoordinatorConfig) -> Result<Arc<Store>, RunError> {
    std::fs::create_dir_all(&cfg.data_dir).map_err(|e| {
        config::ConfigError(format!("data_dir {}: cannot create it: {e}", cfg.data_dir.display()))
    })?;
    // The database's lock first: a second coordinator on this directory is refused before it
    // writes anything (the running one's resolved config included).
    let store = Arc::new(Store::open(&cfg.data_dir)?);
    // The tokens are secrets (in Kubernetes they come from a Secret): not written to disk.
    let mut shown = cfg.clone();
    for t in [&mut shown.auth.worker_token, &mut shown.auth.trainer_token, &mut shown.auth.admin_token] {
        *t = "(redacted)".into();
    }
    let resolved = toml::to_string(&shown).map_err(|e| config::ConfigError(e.to_string()))?;
    std::fs::write(
        cfg.data_dir.join("coordinator.resolved.toml"),
        format!("# The coordinator's resolved configuration (tokens redacted).\n{resolved}"),
    )
    .map_err(store::StoreError::Io)?;
    Ok(store)
}

/// What the coordinator resumes with after a start or a restart.
struct Recovered {
    stats: Arc<Stats>,
    leases: Leases,
    /// Every stored game's id (a game submitted twice is stored once).
    seen: std::collections::HashSet<String>,
    digests: trust::Digests,
    gating: gating::Gating,
}

/// Recovers the state from the store: the files are the data set and the database their index,
/// so recovery adopts files the index does not list and quarantines damaged ones (it never
/// deletes a game); leases, counters, digests and interrupted gating runs come back.
fn recover_state(cfg: &CoordinatorConfig, store: &Store) -> Result<Recovered, RunError> {
    let recovered = recover::recover(store, false)?;
    let counters = store.counters()?;
    let stats = Arc::new(Stats::default());
    stats.games_stored.store(counters.games_stored, Ordering::Relaxed);
    stats.positions_stored.store(counters.positions_stored, Ordering::Relaxed);
    stats.positions_in_parquet.store(counters.positions_in_parquet, Ordering::Relaxed);
    stats.parquet_files.store(store.files()?.len() as u64, Ordering::Relaxed);
    stats.quarantined_files.store(recovered.quarantined.len() as u64, Ordering::Relaxed);
    stats.adopted_files.store(recovered.adopted.len() as u64, Ordering::Relaxed);
    let staged = store.staged_count()?;
    let leases = Leases::new(
        Duration::from_millis(cfg.leases.ttl_ms),
        store.leases()?,
        store.meta("next_lease_id")?,
        store.meta("leases_drawn")?,
        cfg.leases.max_leases,
    )
    .with_max_per_worker(cfg.leases.max_per_worker as usize);
    let seen = store.game_ids()?;
    let digests = trust::Digests::from_set(store.digests()?);
    info!(
        dir = %cfg.data_dir.display(),
        games = counters.games_stored,
        staged,
        files = stats.parquet_files.load(Ordering::Relaxed),
        adopted = recovered.adopted.len(),
        quarantined = recovered.quarantined.len(),
        rebuilt = recovered.rebuilt,
        move_digests = digests.len(),
        "coordinator state recovered"
    );
    // Gating runs cut short by a restart start again from their first match.
    let mut gating = gating::Gating::new(
        Duration::from_millis(cfg.leases.ttl_ms),
        cfg.options.clone(),
        cfg.leases.max_gate_share,
        cfg.limits.max_moves,
    );
    for m in store.models()? {
        if let (store::ModelState::Gating, Some(s)) = (m.state, m.gate_settings.clone()) {
            info!(version = m.version, "gating of this candidate restarts");
            gating.start(m.version, m.opponent, m.game_kind, s);
        }
    }
    Ok(Recovered { stats, leases, seen, digests, gating })
}

/// Object storage: a thread mirrors finished Parquet files and published models to the
/// bucket; local disk stays the working copy, so the bucket being away costs nothing but a
/// later upload.
fn start_mirror(
    cfg: &CoordinatorConfig,
    store: &Store,
) -> Result<Option<zeroplay_storage::Syncer>, RunError> {
    let Some(s) = &cfg.storage else { return Ok(None) };
    let remote = zeroplay_storage::Remote::open(s, zeroplay_storage::Credentials::from_env().as_ref())
        .map_err(|e| config::ConfigError(e.to_string()))?;
    info!(url = %s.url, endpoint = %s.endpoint, "mirroring games and models to object storage");
    let jobs = vec![
        zeroplay_storage::Job::push(store.games_dir(), "games", &[".parquet", checks::SET_ASIDE_SUFFIX]),
        zeroplay_storage::Job::push(cfg.data_dir.join("models"), "models", &[]),
    ];
    Ok(Some(zeroplay_storage::Syncer::spawn(remote, jobs, Duration::from_millis(s.sync_ms))))
}

/// Four times a second: expired leases, gating leases and checks go back to be handed out
/// again, and silent workers' registrations are forgotten.
fn spawn_sweeper(shared: Arc<Shared>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_millis(250));
        loop {
            tick.tick().await;
            let n = shared.leases.lock().expect("not poisoned").sweep(Instant::now())
                + shared.gating.lock().expect("not poisoned").sweep(Instant::now())
                + shared.checks.lock().expect("not poisoned").sweep(Instant::now());
            let forgotten = shared.workers.lock().expect("not poisoned").forget_silent(Instant::now());
            if forgotten > 0 {
                info!(forgotten, "silent worker registrations forgotten");
            }
            if n > 0 {
                info!(expired = n, "leases expired; their positions will be handed out again");
            }
        }
    })
}

/// Serves gRPC on `guarded` until `shutdown` completes and the clients finish their calls (at
/// most [`SHUTDOWN_GRACE`] more).
async fn serve(
    cfg: &CoordinatorConfig,
    shared: &Arc<Shared>,
    guarded: zeroplay_net::GuardedListener,
    health: &zeroplay_telemetry::Health,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), RunError> {
    let server = CoordinatorServer::new(CoordinatorService { shared: shared.clone() })
        .max_decoding_message_size(cfg.limits.max_message_bytes)
        .max_encoding_message_size(cfg.limits.max_message_bytes.max(1 << 20));
    let svc = tonic::service::interceptor::InterceptedService::new(
        server,
        AuthInterceptor::new(cfg, Some(guarded.guard().clone())),
    );
    let mut builder = Server::builder();
    if let Some(tls) = &cfg.tls {
        let cert =
            std::fs::read(&tls.cert).map_err(|e| RunError::Tls(format!("{}: {e}", tls.cert.display())))?;
        let key =
            std::fs::read(&tls.key).map_err(|e| RunError::Tls(format!("{}: {e}", tls.key.display())))?;
        builder = builder.tls_config(ServerTlsConfig::new().identity(Identity::from_pem(cert, key)))?;
    }
    let addr = guarded.local_addr().map_err(store::StoreError::Io)?;
    info!(%addr, tls = cfg.tls.is_some(), "coordinator listening");
    // Caps and timeouts (issue 24): a connection must finish its TLS or HTTP/2 handshake in
    // time, and a flood of idle ones gives way to real workers. Nagle is off (the guarded
    // listener sets it): an acknowledgement is a small write that must not wait.
    // A call's messages must keep up with the minimum transfer rate (issue 44).
    let slow_bodies = zeroplay_net::grpc_body_deadline(guarded.guard());
    let incoming = guarded.into_incoming();
    // At shutdown: end the model watch streams (so their connections can close), then give
    // clients a grace period to finish their calls; a client that does not answer cannot
    // hold the coordinator (and its final Parquet write) hostage.
    let (closing_tx, mut closing_rx) = tokio::sync::watch::channel(false);
    health.set_ready(true);
    let on_shutdown = {
        let shared = shared.clone();
        let health = health.clone();
        async move {
            shutdown.await;
            health.set_ready(false);
            shared.models.lock().expect("not poisoned").take();
            let _ = closing_tx.send(true);
        }
    };
    let serve = builder
        .http2_keepalive_interval(Some(Duration::from_secs(config::HTTP2_KEEPALIVE_S)))
        .http2_keepalive_timeout(Some(Duration::from_secs(5)))
        // A worker holds a handful of streams (its calls and one model watch); headers are
        // a token and a few names.
        .max_concurrent_streams(Some(MAX_STREAMS_PER_CONNECTION))
        .http2_max_header_list_size(Some(16 * 1024))
        .layer(slow_bodies)
        .add_service(svc)
        .serve_with_incoming_shutdown(incoming, on_shutdown);
    tokio::pin!(serve);
    tokio::select! {
        r = &mut serve => Ok(r?),
        _ = async {
            let _ = closing_rx.wait_for(|c| *c).await;
            tokio::time::sleep(SHUTDOWN_GRACE).await;
        } => {
            warn!(grace = ?SHUTDOWN_GRACE, "clients still connected after the grace period; closing anyway");
            Ok(())
        }
    }
}
