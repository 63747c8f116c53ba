//! The gRPC service: leases, submissions, models and status. Callers are authenticated by
//! [`AuthInterceptor`] (`auth.rs`); domain errors map to gRPC status codes in one place
//! ([`CoordError`], `error.rs`).

use std::collections::HashSet;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use prost::Message;
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio_stream::{Stream, StreamExt};
use tonic::{Request, Response, Status, Streaming};
use tracing::{debug, info, warn};
use zeroplay_proto::convert;
use zeroplay_proto::v1 as pb;
use zeroplay_proto::v1::coordinator_server::Coordinator;
use zeroplay_telemetry::prometheus_client::metrics::histogram::Histogram;

use crate::auth::require;
use crate::checks::is_check_lease;
use crate::config::{CoordinatorConfig, RepeatedGames};
use crate::games::{GameKind, Limits, ValidationError, validate};
use crate::gating::{Gating, Reported, is_eval_lease};
use crate::ingest::{StageRequest, Stats};
use crate::leases::{Leases, Sources};
use crate::store::{ModelEntry, ModelState, StagedGame, Store, best_model, now_ms};
use crate::{trust, upload};

pub use crate::auth::AuthInterceptor;
pub use crate::error::{CoordError, Role};

/// Metrics the service observes itself.
#[derive(Clone, Debug)]
pub struct Observed {
    /// Seconds from a `SubmitGame` call's arrival to its answer (acknowledged, refused or a
    /// duplicate), as the coordinator sees it.
    pub ack_seconds: Histogram,
}

impl Default for Observed {
    fn default() -> Self {
        Observed { ack_seconds: Histogram::new(zeroplay_telemetry::latency_buckets()) }
    }
}

/// State shared by all calls.
pub struct Shared {
    pub(crate) cfg: CoordinatorConfig,
    pub(crate) store: Arc<Store>,
    pub(crate) stats: Arc<Stats>,
    pub(crate) leases: Mutex<Leases>,
    pub(crate) sources: Mutex<Sources>,
    pub(crate) ingest: mpsc::Sender<StageRequest>,
    /// Stored game ids and those being stored now.
    pub(crate) seen: Mutex<HashSet<String>>,
    pub(crate) workers: Mutex<crate::workers::Registrations>,
    pub(crate) started: Instant,
    /// Model announcements; taken (closing every watch stream) when shutdown begins.
    pub(crate) models: Mutex<Option<broadcast::Sender<ModelEntry>>>,
    pub(crate) model_lock: tokio::sync::Mutex<()>,
    /// Gating runs and their evaluation leases.
    pub(crate) gating: Mutex<Gating>,
    /// Spot checks of stored values and each worker's record (`checks.rs`).
    pub(crate) checks: Mutex<crate::checks::Checks>,
    /// Metrics observed by the service (the rest are read from the fields above).
    pub(crate) observed: Observed,
    /// The newest model version stored (a game naming a newer one is forged).
    pub(crate) model_ceiling: std::sync::atomic::AtomicU64,
    /// The move sequences of the games stored since start.
    pub(crate) digests: Mutex<trust::Digests>,
    /// Model uploads received at once (`limits.max_concurrent_uploads`).
    pub(crate) uploads: tokio::sync::Semaphore,
}

/// The tonic service.
#[derive(Clone)]
pub struct CoordinatorService {
    pub(crate) shared: Arc<Shared>,
}

type BoxStream<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send + 'static>>;

const CHUNK: usize = 256 * 1024;

impl CoordinatorService {
    fn limits(&self) -> Limits {
        Limits { max_moves: self.shared.cfg.limits.max_moves, ..Limits::default() }
    }

    pub(crate) fn touch(&self, worker: &str) -> Result<(), CoordError> {
        if self.shared.checks.lock().expect("not poisoned").is_quarantined(worker) {
            return Err(CoordError::Quarantined(
                "this worker is quarantined: its stored values disagreed with other workers' checks".into(),
            ));
        }
        if self.shared.workers.lock().expect("not poisoned").touch(worker, Instant::now()) {
            Ok(())
        } else {
            Err(CoordError::NotFound(format!("unknown worker id {worker:?}: register first")))
        }
    }

    /// Removes the database rows of leases whose position is finished (the in-memory table
    /// already forgot them). A failure costs only work: after a restart the stored digest
    /// refuses the replayed game.
    async fn drop_lease_rows(&self, ids: Vec<u64>) {
        if ids.is_empty() {
            return;
        }
        let store = self.shared.store.clone();
        match tokio::task::spawn_blocking(move || store.drop_leases(&ids)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => warn!(error = %e, "could not drop a finished position's lease rows"),
            Err(e) => warn!(error = %e, "could not drop a finished position's lease rows"),
        }
    }

    fn models_dir(&self) -> std::path::PathBuf {
        self.shared.cfg.data_dir.join("models")
    }

    async fn submit(&self, req: pb::SubmitGameRequest) -> Result<pb::SubmitGameResponse, CoordError> {
        let s = &self.shared;
        let game = req.game.ok_or_else(|| CoordError::InvalidArgument("game is missing".into()))?;
        let size = game.encoded_len();
        if size > s.cfg.limits.max_message_bytes {
            s.stats.rejected_oversized.fetch_add(1, Ordering::Relaxed);
            return Err(CoordError::Oversized(format!("game of {size} bytes")));
        }
        // Only a registered worker submits, and only under a lease it may finish (issue 24).
        self.touch(&req.worker_id)?;
        let (lease_id, lease, granted_to) = {
            let l = s.leases.lock().expect("not poisoned");
            let (id, state) = l.lookup(req.lease_id);
            (id, state, l.granted_to(req.lease_id).map(str::to_string))
        };
        let limits = {
            let sources = s.sources.lock().expect("not poisoned");
            trust::limits_for(self.limits(), &lease, |row| {
                sources.game_config(row.game_kind).map(|g| g.settings.clone())
            })
        };
        let invalid = |e: CoordError| {
            s.stats.rejected_invalid.fetch_add(1, Ordering::Relaxed);
            debug!(game = %game.game_id, error = %e, "game refused");
            e
        };
        let rows = match validate(&game, &limits) {
            Ok(r) => r,
            Err(e) => {
                if matches!(e, ValidationError::Oversized(_)) {
                    s.stats.rejected_oversized.fetch_add(1, Ordering::Relaxed);
                    return Err(CoordError::InvalidGame(e));
                }
                return Err(invalid(CoordError::InvalidGame(e)));
            }
        };
        if s.seen.lock().expect("not poisoned").contains(&game.game_id) {
            s.stats.rejected_duplicate.fetch_add(1, Ordering::Relaxed);
            return Err(CoordError::Duplicate(format!("game {}", game.game_id)));
        }
        match trust::check_lease(&game, &req.worker_id, req.lease_id, &lease, granted_to.as_deref()) {
            Ok(()) => {}
            Err(e @ CoordError::Duplicate(_)) => {
                s.stats.rejected_duplicate.fetch_add(1, Ordering::Relaxed);
                return Err(e);
            }
            // Not counted: the submitter's lease may have expired while it played (it retries).
            Err(e @ CoordError::NotYours(_)) => return Err(e),
            Err(e) => return Err(invalid(e)),
        }
        trust::check_versions(&game, s.model_ceiling.load(Ordering::Relaxed)).map_err(invalid)?;
        // The same moves under a new id are the same game, stored once.
        let digest = trust::rows_digest(&game.game_kind, &game.start_state, &rows);
        if !s.digests.lock().expect("not poisoned").insert(digest) {
            s.stats.repeated_moves.fetch_add(1, Ordering::Relaxed);
            if s.cfg.limits.repeated_games == RepeatedGames::Refuse {
                // The position's game is stored (deterministic self-play repeats a game when
                // a lease is handed out again): its lease is done, or it would be played
                // over and over.
                let finished = s.leases.lock().expect("not poisoned").finish_position(req.lease_id);
                self.drop_lease_rows(finished).await;
                s.stats.rejected_duplicate.fetch_add(1, Ordering::Relaxed);
                warn!(game = %game.game_id, lease = req.lease_id, "a game with the same moves from the same start is stored already");
                return Err(CoordError::Duplicate("a game with the same moves from the same start".into()));
            }
        }
        let forget = || s.digests.lock().expect("not poisoned").remove(&digest);
        if !s.seen.lock().expect("not poisoned").insert(game.game_id.clone()) {
            forget();
            s.stats.rejected_duplicate.fetch_add(1, Ordering::Relaxed);
            return Err(CoordError::Duplicate(format!("game {}", game.game_id)));
        }
        let (tx, rx) = oneshot::channel();
        let staged = StagedGame {
            game_id: game.game_id.clone(),
            record: game.encode_to_vec(),
            positions: rows.len() as u64,
            lease_id,
            digest,
        };
        let sent = s.ingest.send(StageRequest { game: staged, reply: tx }).await;
        let result = match sent {
            Ok(()) => rx.await.unwrap_or_else(|_| Err("writer stopped".into())),
            Err(_) => Err("writer stopped".into()),
        };
        match result {
            Ok(true) => {}
            Ok(false) => {
                s.stats.rejected_duplicate.fetch_add(1, Ordering::Relaxed);
                return Err(CoordError::Duplicate(format!("game {}", game.game_id)));
            }
            Err(e) => {
                forget();
                s.seen.lock().expect("not poisoned").remove(&game.game_id);
                return Err(CoordError::Unavailable(e));
            }
        }
        // From the id the game names: the position may have been handed out again meanwhile,
        // under an id whose row the staging transaction did not remove. That row goes too, or
        // a restart would hand the finished position out again (and, self-play being
        // deterministic, store the same game twice).
        let finished = s.leases.lock().expect("not poisoned").finish_position(req.lease_id);
        let stale: Vec<u64> = finished.into_iter().filter(|id| *id != lease_id).collect();
        self.drop_lease_rows(stale).await;
        if let Some(kind) = GameKind::from_name(&game.game_kind) {
            s.checks.lock().expect("not poisoned").stored(&req.worker_id, &game, kind, &rows);
            // Offer a couple of this game's positions for future forks.
            let mut src = s.sources.lock().expect("not poisoned");
            for row in rows.iter().step_by((rows.len() / 2).max(1)).take(2) {
                src.offer_fork(kind, row.state.clone());
            }
        }
        Ok(pb::SubmitGameResponse { positions: rows.len() as u32 })
    }

    /// Records a decided gating run in the store and, on promotion, announces the new best.
    fn decided(&self, candidate: u64, result: engine::gating::GateResult) -> Result<(), CoordError> {
        let s = &self.shared;
        let unavailable = |e: crate::store::StoreError| CoordError::Unavailable(e.to_string());
        let mut entry = s
            .store
            .models()
            .map_err(unavailable)?
            .into_iter()
            .find(|m| m.version == candidate)
            .ok_or_else(|| CoordError::NotFound(format!("no model version {candidate}")))?;
        entry.state = if result.promoted { ModelState::Promoted } else { ModelState::Rejected };
        info!(
            version = candidate,
            opponent = entry.opponent,
            promoted = result.promoted,
            elo = format!("{:+.0} [{:+.0}, {:+.0}]", result.elo, result.elo_lo, result.elo_hi),
            reason = %result.reason,
            "gating decided"
        );
        entry.gate = Some(result);
        s.store.put_model(&entry).map_err(unavailable)?;
        if entry.state == ModelState::Promoted
            && let Some(tx) = s.models.lock().expect("not poisoned").as_ref()
        {
            let _ = tx.send(entry);
        }
        Ok(())
    }
}

/// A worker id as logs show it: its public part, without the secret after the dot.
pub fn shown(worker_id: &str) -> &str {
    worker_id.split_once('.').map_or(worker_id, |(public, _)| public)
}

fn announcement(m: &ModelEntry) -> pb::ModelAnnouncement {
    pb::ModelAnnouncement {
        version: m.version,
        game_kind: m.game_kind.to_string(),
        sha256: m.sha256.clone(),
        size_bytes: m.size_bytes,
        encoding_version: m.encoding_version,
        published_unix_ms: m.published_unix_ms,
    }
}

#[tonic::async_trait]
impl Coordinator for CoordinatorService {
    async fn register(
        &self,
        req: Request<pb::RegisterRequest>,
    ) -> Result<Response<pb::RegisterResponse>, Status> {
        require(&req, &[Role::Worker])?;
        let req_addr = req.remote_addr().map(|a| a.ip());
        let r = req.into_inner();
        if r.protocol != zeroplay_proto::PROTOCOL {
            return Err(CoordError::FailedPrecondition(format!(
                "worker speaks protocol {}, this coordinator protocol {}: run a worker of the same zeroplay release",
                r.protocol,
                zeroplay_proto::PROTOCOL
            ))
            .into());
        }
        if r.engine_version != engine::ENGINE_VERSION {
            return Err(CoordError::InvalidArgument(format!(
                "worker engine {} does not match coordinator engine {}",
                r.engine_version,
                engine::ENGINE_VERSION
            ))
            .into());
        }
        if r.name.len() > 128 {
            return Err(CoordError::InvalidArgument("name longer than 128 characters".into()).into());
        }
        // The id is the worker's credential for its leases (issue 24): a public part for logs
        // and 128 secret bits after the dot, so no worker can act as another, even though
        // all share the worker token.
        let public = format!(
            "{}-{:016x}",
            r.name.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-').take(40).collect::<String>(),
            rand::random::<u64>()
        );
        let id = format!("{public}.{:032x}", rand::random::<u128>());
        let addr = req_addr;
        let registered =
            self.shared.workers.lock().expect("not poisoned").register(id.clone(), addr, Instant::now());
        if let Err(why) = registered {
            self.shared.stats.registrations_refused.fetch_add(1, Ordering::Relaxed);
            warn!(worker = %public, from = ?addr, "registration refused: {why}");
            return Err(CoordError::Busy(format!("registration refused: {why}; try again later")).into());
        }
        info!(worker = %public, slots = r.slots, "worker registered");
        let c = &self.shared.cfg.leases;
        Ok(Response::new(pb::RegisterResponse {
            worker_id: id,
            heartbeat_interval_ms: c.heartbeat_interval_ms,
            lease_ttl_ms: c.ttl_ms,
        }))
    }

    async fn heartbeat(
        &self,
        req: Request<pb::HeartbeatRequest>,
    ) -> Result<Response<pb::HeartbeatResponse>, Status> {
        require(&req, &[Role::Worker])?;
        let r = req.into_inner();
        self.touch(&r.worker_id)?;
        let (eval, rest): (Vec<u64>, Vec<u64>) = r.lease_ids.iter().partition(|&&id| is_eval_lease(id));
        let (check, play): (Vec<u64>, Vec<u64>) = rest.iter().partition(|&&id| is_check_lease(id));
        let (now, ttl) = (Instant::now(), std::time::Duration::from_millis(self.shared.cfg.leases.ttl_ms));
        let mut unknown = self.shared.leases.lock().expect("not poisoned").renew(&r.worker_id, &play, now);
        unknown.extend(self.shared.gating.lock().expect("not poisoned").renew(&r.worker_id, &eval, now));
        unknown.extend(self.shared.checks.lock().expect("not poisoned").renew(
            &r.worker_id,
            &check,
            now,
            ttl,
        ));
        Ok(Response::new(pb::HeartbeatResponse { unknown_lease_ids: unknown }))
    }

    async fn lease_positions(
        &self,
        req: Request<pb::LeaseRequest>,
    ) -> Result<Response<pb::LeaseResponse>, Status> {
        require(&req, &[Role::Worker])?;
        let r = req.into_inner();
        self.touch(&r.worker_id)?;
        let this = self.clone();
        let out = tokio::task::spawn_blocking(move || this.lease(&r.worker_id, r.max_positions))
            .await
            .map_err(|e| Status::internal(e.to_string()))??;
        Ok(Response::new(out))
    }

    async fn release_leases(
        &self,
        req: Request<pb::ReleaseRequest>,
    ) -> Result<Response<pb::ReleaseResponse>, Status> {
        require(&req, &[Role::Worker])?;
        let r = req.into_inner();
        let n = self.shared.leases.lock().expect("not poisoned").release(&r.worker_id, &r.lease_ids)
            + self.shared.gating.lock().expect("not poisoned").release(&r.worker_id, &r.lease_ids)
            + self.shared.checks.lock().expect("not poisoned").release(&r.worker_id, &r.lease_ids);
        info!(worker = %shown(&r.worker_id), released = n, "leases released");
        Ok(Response::new(pb::ReleaseResponse { released: n as u32 }))
    }

    async fn submit_game(
        &self,
        req: Request<pb::SubmitGameRequest>,
    ) -> Result<Response<pb::SubmitGameResponse>, Status> {
        require(&req, &[Role::Worker])?;
        let t = Instant::now();
        let out = self.submit(req.into_inner()).await;
        self.shared.observed.ack_seconds.observe(t.elapsed().as_secs_f64());
        Ok(Response::new(out?))
    }

    type WatchModelsStream = BoxStream<pb::ModelAnnouncement>;

    async fn watch_models(
        &self,
        req: Request<pb::WatchModelsRequest>,
    ) -> Result<Response<Self::WatchModelsStream>, Status> {
        require(&req, &[Role::Worker, Role::Trainer, Role::Admin])?;
        let rx = self
            .shared
            .models
            .lock()
            .expect("not poisoned")
            .as_ref()
            .map(|tx| tx.subscribe())
            .ok_or_else(|| Status::unavailable("shutting down"))?;
        let models = self.shared.store.models().map_err(|e| CoordError::Unavailable(e.to_string()))?;
        // The best model of every game kind, then each promotion as it happens.
        let current: Vec<_> = crate::games::GameKind::ALL
            .iter()
            .filter_map(|k| models.iter().rev().find(|m| m.is_best_kind() && m.game_kind == *k))
            .map(|m| Ok(announcement(m)))
            .collect();
        let first = tokio_stream::iter(current);
        let rest = tokio_stream::wrappers::BroadcastStream::new(rx)
            .filter_map(|m| m.ok().map(|m| Ok(announcement(&m))));
        Ok(Response::new(Box::pin(first.chain(rest))))
    }

    type DownloadModelStream = BoxStream<pb::ModelChunk>;

    async fn download_model(
        &self,
        req: Request<pb::DownloadModelRequest>,
    ) -> Result<Response<Self::DownloadModelStream>, Status> {
        require(&req, &[Role::Worker, Role::Trainer, Role::Admin])?;
        let v = req.into_inner().version;
        let models = self.shared.store.models().map_err(|e| CoordError::Unavailable(e.to_string()))?;
        let m = models
            .into_iter()
            .find(|m| m.version == v)
            .ok_or_else(|| CoordError::NotFound(format!("no model version {v}")))?;
        let bytes = tokio::fs::read(self.models_dir().join(format!("model-{v:06}.bin")))
            .await
            .map_err(|e| CoordError::Unavailable(e.to_string()))?;
        let total = bytes.len() as u64;
        let chunks: Vec<Result<pb::ModelChunk, Status>> = bytes
            .chunks(CHUNK)
            .enumerate()
            .map(|(i, c)| {
                Ok(pb::ModelChunk {
                    offset: (i * CHUNK) as u64,
                    data: c.to_vec(),
                    total_size: total,
                    sha256: m.sha256.clone(),
                })
            })
            .collect();
        Ok(Response::new(Box::pin(tokio_stream::iter(chunks))))
    }

    async fn publish_model(
        &self,
        req: Request<Streaming<pb::PublishModelChunk>>,
    ) -> Result<Response<pb::ModelAnnouncement>, Status> {
        require(&req, &[Role::Trainer, Role::Admin])?;
        // A bounded number of uploads at once (each is read whole for its check once
        // received); the others wait their turn, their bytes held back by HTTP/2 flow control.
        let _permit = tokio::time::timeout(std::time::Duration::from_secs(60), self.shared.uploads.acquire())
            .await
            .map_err(|_| CoordError::Busy("model uploads in progress for a minute; try again later".into()))?
            .map_err(|_| CoordError::Unavailable("the coordinator is stopping".into()))?;
        let up = upload::receive(req.into_inner(), &self.models_dir()).await?;
        let meta = up.meta.clone();
        let Some(kind) = GameKind::from_name(&meta.game_kind) else {
            return Err(CoordError::InvalidArgument(format!("unknown game kind {:?}", meta.game_kind)).into());
        };
        // A model of a game this coordinator does not play would become a best model nobody
        // plays (and the one its status reports).
        if !self.shared.cfg.games.contains_key(&kind) {
            let played: Vec<&str> = self.shared.cfg.games.keys().map(|k| k.name()).collect();
            return Err(CoordError::FailedPrecondition(format!(
                "this coordinator plays {}, not {}: a {} model has no games here",
                played.join(", "),
                kind.name(),
                kind.name()
            ))
            .into());
        }
        let gate = meta
            .gate
            .as_ref()
            .map(convert::gate_from_proto)
            .transpose()
            .map_err(|e| CoordError::InvalidArgument(format!("gate settings: {e}")))?;
        let digest = up.sha256.clone();
        if up.size != meta.total_size || digest != meta.sha256 {
            return Err(CoordError::InvalidArgument(format!(
                "upload does not match its metadata: {} bytes with SHA-256 {digest}, announced {} bytes with {}",
                up.size, meta.total_size, meta.sha256
            ))
            .into());
        }
        // The file itself: a zeroplay model for the announced game and encoding (read whole
        // under the upload permit, so at most `max_concurrent_uploads` are in memory).
        let data = tokio::fs::read(&up.path).await.map_err(|e| CoordError::Unavailable(e.to_string()))?;
        // In full, as a worker will load it: tensor table, finite weights, a forward pass.
        let file_meta = engine::with_game!(kind, |G| modelfile::check_for::<G>(&data))
            .map_err(|e| CoordError::InvalidArgument(format!("not a usable model file: {e}")))?;
        drop(data);
        if file_meta.game != kind.name() || file_meta.feature_version != meta.encoding_version {
            return Err(CoordError::InvalidArgument(format!(
                "model file is for {} features v{}, announced {} v{}",
                file_meta.game, file_meta.feature_version, meta.game_kind, meta.encoding_version
            ))
            .into());
        }
        // One publication at a time, so versions are dense and in order.
        let _guard = self.shared.model_lock.lock().await;
        let store = self.shared.store.clone();
        let dir = self.models_dir();
        let entry = tokio::task::spawn_blocking(move || -> Result<ModelEntry, CoordError> {
            let models = store.models().map_err(|e| CoordError::Unavailable(e.to_string()))?;
            let version = models.last().map_or(1, |m| m.version + 1);
            // A candidate plays the best model of its own game (or the rollout AI, 0).
            let opponent = models
                .iter()
                .rev()
                .find(|m| m.is_best_kind() && m.game_kind == kind)
                .map_or(0, |m| m.version);
            std::fs::create_dir_all(&dir).map_err(|e| CoordError::Unavailable(e.to_string()))?;
            let path = dir.join(format!("model-{version:06}.bin"));
            let size_bytes = up.size;
            up.persist(&path).map_err(|e| CoordError::Unavailable(e.to_string()))?;
            let entry = ModelEntry {
                version,
                game_kind: kind,
                sha256: digest,
                size_bytes,
                encoding_version: meta.encoding_version,
                published_unix_ms: now_ms(),
                state: if gate.is_some() { ModelState::Gating } else { ModelState::Ungated },
                opponent: if gate.is_some() { opponent } else { 0 },
                gate_settings: gate,
                gate: None,
            };
            store.put_model(&entry).map_err(|e| CoordError::Unavailable(e.to_string()))?;
            Ok(entry)
        })
        .await
        .map_err(|e| Status::internal(e.to_string()))??;
        self.shared.model_ceiling.fetch_max(entry.version, Ordering::Relaxed);
        if let Some(g) = &entry.gate_settings {
            info!(
                version = entry.version,
                opponent = entry.opponent,
                matches = g.matches,
                rule = g.rule.name(),
                "candidate published; gating matches scheduled on the workers"
            );
            self.shared.gating.lock().expect("not poisoned").start(
                entry.version,
                entry.opponent,
                kind,
                g.clone(),
            );
        } else {
            info!(version = entry.version, bytes = entry.size_bytes, "model published");
            if let Some(tx) = self.shared.models.lock().expect("not poisoned").as_ref() {
                let _ = tx.send(entry.clone());
            }
        }
        Ok(Response::new(announcement(&entry)))
    }

    async fn report_match(
        &self,
        req: Request<pb::ReportMatchRequest>,
    ) -> Result<Response<pb::ReportMatchResponse>, Status> {
        require(&req, &[Role::Worker])?;
        let r = req.into_inner();
        self.touch(&r.worker_id)?;
        let reported = self
            .shared
            .gating
            .lock()
            .expect("not poisoned")
            .report(&r.worker_id, r.lease_id, f64::from(r.candidate_points), &r.games)
            .map_err(|e| match e {
                crate::gating::ReportError::Invalid(m) => {
                    warn!(worker = %shown(&r.worker_id), lease = r.lease_id, error = %m, "match report refused");
                    CoordError::InvalidArgument(m)
                }
                crate::gating::ReportError::NotFound(m) => CoordError::NotFound(m),
            })?;
        debug!(worker = %shown(&r.worker_id), lease = r.lease_id, points = r.candidate_points, plies = r.plies, "match reported");
        let counted = !matches!(reported, Reported::Ignored);
        if let Reported::Decided(candidate, result) = reported {
            let this = self.clone();
            tokio::task::spawn_blocking(move || this.decided(candidate, result))
                .await
                .map_err(|e| Status::internal(e.to_string()))??;
        }
        Ok(Response::new(pb::ReportMatchResponse { counted }))
    }

    async fn report_check(
        &self,
        req: Request<pb::ReportCheckRequest>,
    ) -> Result<Response<pb::ReportCheckResponse>, Status> {
        require(&req, &[Role::Worker])?;
        let r = req.into_inner();
        self.touch(&r.worker_id)?;
        self.check_reported(&r)?;
        Ok(Response::new(pb::ReportCheckResponse {}))
    }

    async fn gate_status(
        &self,
        req: Request<pb::GateStatusRequest>,
    ) -> Result<Response<pb::GateStatusResponse>, Status> {
        require(&req, &[Role::Trainer, Role::Admin])?;
        let v = req.into_inner().version;
        if let Some(run) = self.shared.gating.lock().expect("not poisoned").run(v) {
            return Ok(Response::new(run.status()));
        }
        let models = self.shared.store.models().map_err(|e| CoordError::Unavailable(e.to_string()))?;
        let m = models
            .into_iter()
            .find(|m| m.version == v)
            .ok_or_else(|| CoordError::NotFound(format!("no model version {v}")))?;
        let state = match m.state {
            ModelState::Ungated => pb::GateState::Ungated,
            ModelState::Gating => pb::GateState::Running,
            ModelState::Promoted => pb::GateState::Promoted,
            ModelState::Rejected => pb::GateState::Rejected,
        };
        let g = m.gate.unwrap_or(engine::gating::GateResult::without_matches(false, String::new()));
        Ok(Response::new(pb::GateStatusResponse {
            state: state as i32,
            opponent_version: m.opponent,
            matches: g.matches,
            matches_max: m.gate_settings.map_or(0, |s| s.matches),
            points: g.points,
            elo: g.elo,
            elo_lo: g.elo_lo,
            elo_hi: g.elo_hi,
            reason: g.reason,
        }))
    }

    async fn status(&self, req: Request<pb::StatusRequest>) -> Result<Response<pb::StatusResponse>, Status> {
        require(&req, &[Role::Worker, Role::Trainer, Role::Admin])?;
        let s = &self.shared;
        let st = &s.stats;
        let (active, expired, queued, drawn) = {
            let l = s.leases.lock().expect("not poisoned");
            (l.active() as u64, l.expired, l.queued() as u64, l.drawn)
        };
        let ttl = std::time::Duration::from_millis(s.cfg.leases.ttl_ms);
        let alive = s.workers.lock().expect("not poisoned").alive(ttl) as u64;
        let model_version = s.store.models().map(|m| best_model(&m).map_or(0, |m| m.version)).unwrap_or(0);
        Ok(Response::new(pb::StatusResponse {
            games_stored: st.games_stored.load(Ordering::Relaxed),
            positions_stored: st.positions_stored.load(Ordering::Relaxed),
            positions_in_parquet: st.positions_in_parquet.load(Ordering::Relaxed),
            parquet_files: st.parquet_files.load(Ordering::Relaxed),
            leases_active: active,
            leases_expired: expired,
            rejected_invalid: st.rejected_invalid.load(Ordering::Relaxed),
            rejected_duplicate: st.rejected_duplicate.load(Ordering::Relaxed),
            rejected_oversized: st.rejected_oversized.load(Ordering::Relaxed),
            workers_alive: alive,
            uptime_s: s.started.elapsed().as_secs(),
            model_version,
            leases_queued: queued,
            leases_drawn: drawn,
        }))
    }
}
