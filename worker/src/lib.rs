//! # zeroplay worker
//!
//! Leases start positions from the coordinator and plays MCTS self-play games from them, one
//! game per core (one search per game, never one game spread over threads). Every finished
//! game is written to a local spool directory before it is submitted, and deleted only once
//! the coordinator has acknowledged it (or already has it), so a worker that cannot reach the
//! coordinator loses nothing: spooled games are sent when it comes back, also after a restart.
//!
//! Entry point: [`run`] with a configuration and a shutdown future. On shutdown the worker
//! abandons the games in progress, hands their leases back, and tries once more to submit
//! what is spooled.

mod metrics;

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use engine::Features;
use engine::agent::{Agent, EvalSpec, MctsAgent, MctsSpec};
use engine::arena::play_match_from;
use engine::banqi::Banqi;
use engine::battlenumber::BattleNumber;
use engine::eval::{Evaluator, Mixed, Rollout, Uniform};
use engine::game::Game;
use engine::mcts::MctsConfig;
use engine::selfplay::play_game_until;
use engine::trigolden::TriGolden;
use model::{Batcher, NetEvaluator, UtilitySettings};
use prost::Message;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use tonic::Code;
use tracing::{debug, error, info, warn};
use zeroplay_proto::v1 as pb;

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
    /// Weight of the score-margin term in the network's utility (0: win/loss only).
    pub margin_mix: f32,
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
            margin_mix: 0.5,
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
}

struct State {
    cfg: WorkerConfig,
    worker_id: RwLock<String>,
    active: Mutex<HashSet<u64>>,
    abandoned: Mutex<Vec<u64>>,
    stop: AtomicBool,
    played: AtomicU64,
    /// Actions of the games played.
    moves: AtomicU64,
    submitted: AtomicU64,
    play_nanos: AtomicU64,
    /// The best network of each game kind (hot-swapped by the model watcher).
    models: ModelSlots,
    batcher: Batcher,
    /// Models fetched by version for evaluation matches (the few most recent).
    evaluation_models: Mutex<HashMap<u64, model::Model>>,
    evaluation_matches: AtomicU64,
}

impl State {
    fn id(&self) -> String {
        self.worker_id.read().expect("not poisoned").clone()
    }
    fn done(&self) -> bool {
        self.cfg.max_games.is_some_and(|m| self.submitted.load(Ordering::Relaxed) >= m)
    }
}

fn backoff(cfg: &WorkerConfig, attempt: u32) -> Duration {
    cfg.backoff().delay(attempt)
}

pub use zeroplay_client::{
    Bearer, Client, ModelSlots, download_version, follow_models, game_record, gate_settings_to_proto,
    load_model, publish_model, settings_from_proto,
};

/// Builds a coordinator client for `cfg` ([`zeroplay_client::connect`] with the worker's
/// URL, token and certificate).
///
/// # Errors
/// [`WorkerError::Config`] for a bad URL, token or certificate, or outside a Tokio runtime.
pub fn client(cfg: &WorkerConfig) -> Result<Client, WorkerError> {
    zeroplay_client::connect(&cfg.client()).map_err(|e| WorkerError::Config(e.to_string()))
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

async fn register(
    client: &mut Client,
    cfg: &WorkerConfig,
    slots: usize,
    stop: &AtomicBool,
) -> Result<pb::RegisterResponse, WorkerError> {
    let mut attempt = 0;
    loop {
        let req = pb::RegisterRequest {
            name: cfg.name.clone(),
            slots: slots as u32,
            engine_version: engine::ENGINE_VERSION.into(),
        };
        match client.register(req).await {
            Ok(r) => return Ok(r.into_inner()),
            Err(s)
                if matches!(
                    s.code(),
                    Code::Unauthenticated | Code::PermissionDenied | Code::InvalidArgument
                ) =>
            {
                return Err(WorkerError::Refused(s.message().to_string()));
            }
            Err(s) => {
                if stop.load(Ordering::Relaxed) {
                    return Err(WorkerError::Refused("stopped before the coordinator answered".into()));
                }
                let wait = backoff(cfg, attempt);
                warn!(error = %s.message(), retry_in = ?wait, "cannot register with the coordinator");
                tokio::time::sleep(wait).await;
                attempt += 1;
            }
        }
    }
}

/// Plays one leased game; `Ok(None)` if stopped.
fn play_lease(
    state: &State,
    lease: &pb::Lease,
    stop: &dyn Fn() -> bool,
) -> Result<Option<pb::GameRecord>, String> {
    match lease.game_kind.as_str() {
        k if k == BattleNumber::NAME => play_as::<BattleNumber>(state, lease, stop),
        k if k == Banqi::NAME => play_as::<Banqi>(state, lease, stop),
        k if k == TriGolden::NAME => play_as::<TriGolden>(state, lease, stop),
        other => Err(format!("this worker does not play {other:?}")),
    }
}

fn play_as<G: Features>(
    state: &State,
    lease: &pb::Lease,
    stop: &dyn Fn() -> bool,
) -> Result<Option<pb::GameRecord>, String> {
    let start = G::decode(&lease.start_state).map_err(|e| format!("lease {}: {e}", lease.lease_id))?;
    if start.outcome().is_some() {
        return Err(format!("lease {}: the start position is finished", lease.lease_id));
    }
    let wire = lease.settings.as_ref().ok_or("lease without settings")?;
    let settings = settings_from_proto(wire)?;
    if !(0.0..=1.0).contains(&wire.leaf_lambda) {
        return Err(format!("lease {}: leaf_lambda {} is not in [0, 1]", lease.lease_id, wire.leaf_lambda));
    }
    let evaluator: Arc<dyn Evaluator<G>> = match wire.evaluator.as_str() {
        "uniform" => Arc::new(Uniform),
        // The network once one is published (hot-swapped between moves), the user's rollout
        // evaluator until then; optionally mixed with a playout per leaf.
        "net" => Mixed::wrap(
            Arc::new(NetEvaluator::<G>::new(
                state.models.slot(G::NAME).expect("a slot for every game this worker plays"),
                Some(state.batcher.clone()),
                UtilitySettings { margin_mix: state.cfg.margin_mix, score_scale: 3.0 },
            )),
            wire.leaf_lambda,
            3.0,
        ),
        _ => Arc::new(Rollout::default()),
    };
    let Some(game) = play_game_until(&start, &settings, evaluator.as_ref(), lease.seed, stop) else {
        return Ok(None);
    };
    let id = format!("{:032x}", rand::random::<u128>());
    let model_version =
        game.moves.iter().map(|m| m.model_version).max().unwrap_or(0).max(lease.model_version);
    Ok(Some(game_record(&game, id, lease.seed, model_version)))
}

/// Model `version` for an evaluation match: from the cache, or downloaded, checked and loaded
/// (this blocks the calling slot thread, never a runtime thread).
fn evaluation_model(
    state: &State,
    rt: &tokio::runtime::Handle,
    client: &Client,
    kind: &str,
    version: u64,
) -> Result<model::Model, String> {
    if let Some(m) = state.evaluation_models.lock().expect("not poisoned").get(&version) {
        return Ok(m.clone());
    }
    let bytes = rt.block_on(download_version(&mut client.clone(), version, None))?;
    let m = load_model(kind, &bytes).map_err(|e| format!("model {version}: {e}"))?;
    let mut cache = state.evaluation_models.lock().expect("not poisoned");
    if cache.len() >= 4 {
        // Gating plays the newest models; the oldest cached one is least likely needed.
        let oldest = *cache.keys().min().expect("not empty");
        cache.remove(&oldest);
    }
    cache.insert(version, m.clone());
    Ok(m)
}

/// Plays a gating match (a lease with `evaluation` set); returns the candidate's points and
/// the atomic actions played.
fn play_evaluation(
    state: &State,
    rt: &tokio::runtime::Handle,
    client: &Client,
    lease: &pb::Lease,
    ev: &pb::EvaluationMatch,
) -> Result<(f64, u32), String> {
    match lease.game_kind.as_str() {
        k if k == BattleNumber::NAME => evaluation_as::<BattleNumber>(state, rt, client, lease, ev),
        k if k == Banqi::NAME => evaluation_as::<Banqi>(state, rt, client, lease, ev),
        k if k == TriGolden::NAME => evaluation_as::<TriGolden>(state, rt, client, lease, ev),
        other => Err(format!("this worker does not play {other:?}")),
    }
}

fn evaluation_as<G: Features>(
    state: &State,
    rt: &tokio::runtime::Handle,
    client: &Client,
    lease: &pb::Lease,
    ev: &pb::EvaluationMatch,
) -> Result<(f64, u32), String> {
    let start = G::decode(&lease.start_state).map_err(|e| format!("lease {}: {e}", lease.lease_id))?;
    if start.outcome().is_some() {
        return Err(format!("lease {}: the start position is finished", lease.lease_id));
    }
    if ev.sims == 0
        || ev.sims > engine::gating::MAX_SIMS
        || !(0.0..=1.0).contains(&ev.margin_mix)
        || !(0.0..=1.0).contains(&ev.leaf_lambda)
    {
        return Err(format!("lease {}: bad evaluation settings {ev:?}", lease.lease_id));
    }
    let utility = UtilitySettings { margin_mix: ev.margin_mix, score_scale: 3.0 };
    let evaluator = |version: u64| -> Result<Arc<dyn Evaluator<G>>, String> {
        Ok(if version == 0 {
            Arc::new(Rollout::default())
        } else {
            let m = evaluation_model(state, rt, client, G::NAME, version)?;
            Mixed::wrap(Arc::new(NetEvaluator::<G>::fixed(m, utility)), ev.leaf_lambda, 3.0)
        })
    };
    let agent = |eval: Arc<dyn Evaluator<G>>, name: &str| {
        // The trainer's own gating uses the same agent (trainer::gate).
        let spec = MctsSpec {
            sims: Some(ev.sims),
            time: None,
            eval: EvalSpec::Uniform,
            config: MctsConfig { batch_size: 8, ..MctsConfig::default() },
        };
        MctsAgent::new(spec, eval, name.into())
    };
    let mut a = agent(evaluator(ev.candidate_version)?, "candidate");
    let mut b = agent(evaluator(ev.opponent_version)?, "opponent");
    let m = play_match_from(&start, &mut a as &mut dyn Agent<G>, &mut b, lease.seed);
    Ok((m.points_a, m.games.iter().map(|g| g.actions.len() as u32).sum()))
}

/// Reports a played match, retrying a few times; a report that cannot get through is
/// dropped (the lease expires and the match is played again elsewhere).
async fn report_match(client: &mut Client, state: &State, lease_id: u64, points: f64, plies: u32) {
    for attempt in 0..5 {
        let req = pb::ReportMatchRequest {
            worker_id: state.id(),
            lease_id,
            candidate_points: points as f32,
            plies,
        };
        match client.report_match(req).await {
            Ok(r) => {
                if r.into_inner().counted {
                    state.evaluation_matches.fetch_add(1, Ordering::Relaxed);
                }
                return;
            }
            Err(s) if matches!(s.code(), Code::NotFound | Code::InvalidArgument | Code::PermissionDenied) => {
                debug!(lease = lease_id, error = %s.message(), "match report refused");
                return;
            }
            Err(s) => {
                debug!(lease = lease_id, error = %s.message(), "match report failed; retrying");
                tokio::time::sleep(backoff(&state.cfg, attempt)).await;
            }
        }
    }
    warn!(lease = lease_id, "could not report a gating match; it will be played again");
}

/// Follows `WatchModels`: every newer model is downloaded, checked and swapped in; a corrupt
/// or mismatched one is refused with a warning and the current one kept. Reconnects with
/// backoff.
async fn watch_models(client: Client, state: Arc<State>) {
    let stop = {
        let state = state.clone();
        move || state.stop.load(Ordering::Relaxed)
    };
    let cfg = state.cfg.clone();
    follow_models(client, state.models.clone(), cfg.backoff(), &stop).await;
}

/// Writes a submission to the spool durably (`<id>.pb.tmp`, fsync, rename, fsync the directory).
fn spool(dir: &Path, req: &pb::SubmitGameRequest) -> std::io::Result<PathBuf> {
    let id = req.game.as_ref().map_or("unknown", |g| g.game_id.as_str());
    let path = dir.join(format!("{id}.pb"));
    // A partial file (a full disk) is removed: it would only take the room the next try needs.
    durable::write_atomic(&path, &req.encode_to_vec())?;
    Ok(path)
}

/// Removes `*.pb.tmp` files: spool writes cut short by a crash (a kill mid-write). Such a
/// game was never submitted, so its lease expires and its position is played again; the
/// partial file is of no use and would hold disk space for ever.
fn remove_partial_spool_files(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for p in entries.filter_map(|e| e.ok().map(|e| e.path())) {
        if p.to_str().is_some_and(|s| s.ends_with(".pb.tmp")) {
            match std::fs::remove_file(&p) {
                Ok(()) => warn!(file = %p.display(), "removed a spool file an earlier run left half-written"),
                Err(e) => warn!(file = %p.display(), error = %e, "cannot remove a half-written spool file"),
            }
        }
    }
}

fn spooled(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "pb"))
        .collect();
    v.sort();
    Ok(v)
}

/// Submits one spooled game until it is acknowledged, refused, or the deadline passes.
/// Returns true when the file is settled (deleted or moved aside).
async fn submit_file(client: &mut Client, state: &State, path: &Path, deadline: Option<Instant>) -> bool {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            error!(file = %path.display(), error = %e, "cannot read spooled game");
            return false;
        }
    };
    let mut req = match pb::SubmitGameRequest::decode(bytes.as_slice()) {
        Ok(r) => r,
        Err(e) => {
            error!(file = %path.display(), error = %e, "spooled file is not a game; moved to rejected/");
            let _ = std::fs::rename(
                path,
                state.cfg.spool_dir.join("rejected").join(path.file_name().unwrap_or_default()),
            );
            return true;
        }
    };
    let mut attempt = 0;
    loop {
        req.worker_id = state.id();
        match client.submit_game(req.clone()).await {
            Ok(_) => {
                debug!(file = %path.display(), "game acknowledged");
                break;
            }
            Err(s) if s.code() == Code::AlreadyExists => break,
            Err(s)
                if matches!(s.code(), Code::InvalidArgument | Code::ResourceExhausted | Code::OutOfRange) =>
            {
                error!(file = %path.display(), error = %s.message(), "coordinator refused the game; moved to rejected/");
                let _ = std::fs::rename(
                    path,
                    state.cfg.spool_dir.join("rejected").join(path.file_name().unwrap_or_default()),
                );
                return true;
            }
            Err(s) => {
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    return false;
                }
                let wait = backoff(&state.cfg, attempt);
                warn!(error = %s.message(), retry_in = ?wait, "submission failed; the game stays spooled");
                tokio::time::sleep(wait).await;
                attempt += 1;
            }
        }
    }
    if let Err(e) = std::fs::remove_file(path) {
        warn!(file = %path.display(), error = %e, "cannot remove acknowledged game from the spool");
    }
    state.submitted.fetch_add(1, Ordering::Relaxed);
    true
}

/// CPU time of the calling thread in nanoseconds (Linux: `/proc/thread-self/schedstat`), so
/// play time is not inflated when a slot waits for a core.
fn thread_cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

fn process_cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else { return 0.0 };
    // Fields after the command name (which is in parentheses and may hold spaces).
    let Some(rest) = stat.rsplit_once(')').map(|x| x.1) else { return 0.0 };
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
    // utime and stime are fields 14 and 15 of /proc/self/stat: 12 and 13 after the name.
    (ticks(11) + ticks(12)) / 100.0
}

/// The submitter task: sends each spooled game (`done_rx`) until acknowledged; at shutdown one
/// more bounded try each, the rest stay spooled for the next run.
async fn submitter(state: Arc<State>, mut client: Client, mut done_rx: mpsc::UnboundedReceiver<PathBuf>) {
    while let Some(path) = done_rx.recv().await {
        if state.stop.load(Ordering::Relaxed) {
            submit_file(&mut client, &state, &path, Some(Instant::now() + Duration::from_secs(3))).await;
        } else {
            submit_file(&mut client, &state, &path, None).await;
        }
    }
}

/// The leaser task: keeps every slot fed with leases (`lease_tx`), backing off on failures;
/// returns when `stop_leasing` is notified or the slots are gone. Leases it cannot hand to a
/// slot are recorded as abandoned, so they are handed back.
async fn leaser(
    state: Arc<State>,
    mut client: Client,
    lease_tx: mpsc::Sender<pb::Lease>,
    stop_leasing: Arc<tokio::sync::Notify>,
) {
    let mut attempt = 0;
    let abandon = |state: &State, l: pb::Lease| {
        state.active.lock().expect("not poisoned").remove(&l.lease_id);
        state.abandoned.lock().expect("not poisoned").push(l.lease_id);
    };
    loop {
        let permit = tokio::select! {
            _ = stop_leasing.notified() => return,
            p = lease_tx.reserve() => match p {
                Ok(p) => p,
                Err(_) => return,
            },
        };
        let want = lease_tx.capacity() as u32 + 1;
        let req = pb::LeaseRequest { worker_id: state.id(), max_positions: want };
        match client.lease_positions(req).await {
            Ok(r) => {
                attempt = 0;
                let leases = r.into_inner().leases;
                if leases.is_empty() {
                    drop(permit);
                    tokio::select! {
                        _ = stop_leasing.notified() => return,
                        _ = tokio::time::sleep(Duration::from_millis(200)) => continue,
                    }
                }
                state.active.lock().expect("not poisoned").extend(leases.iter().map(|l| l.lease_id));
                if state.stop.load(Ordering::Relaxed) {
                    leases.into_iter().for_each(|l| abandon(&state, l));
                    return;
                }
                let mut leases = leases.into_iter();
                permit.send(leases.next().expect("not empty"));
                for l in leases {
                    if let Err(e) = lease_tx.try_send(l) {
                        let (mpsc::error::TrySendError::Full(l) | mpsc::error::TrySendError::Closed(l)) = e;
                        abandon(&state, l);
                    }
                }
            }
            Err(s) => {
                drop(permit);
                let wait = if s.code() == Code::NotFound {
                    // The coordinator restarted and forgot us: the heartbeat re-registers.
                    Duration::from_millis(200)
                } else {
                    warn!(error = %s.message(), "cannot lease positions");
                    attempt += 1;
                    backoff(&state.cfg, attempt - 1)
                };
                tokio::select! {
                    _ = stop_leasing.notified() => return,
                    _ = tokio::time::sleep(wait) => {}
                }
            }
        }
    }
}

/// The heartbeat task: renews the active leases every `every`; re-registers (as `slots`
/// slots) after a coordinator restart forgot this worker. Runs until aborted.
async fn heartbeat(state: Arc<State>, mut client: Client, cfg: WorkerConfig, slots: usize, every: Duration) {
    let mut tick = tokio::time::interval(every);
    loop {
        tick.tick().await;
        let ids: Vec<u64> = state.active.lock().expect("not poisoned").iter().copied().collect();
        let req = pb::HeartbeatRequest { worker_id: state.id(), lease_ids: ids, games_finished: 0 };
        match client.heartbeat(req).await {
            Ok(_) => {}
            Err(s) if s.code() == Code::NotFound => {
                if let Ok(r) = register(&mut client, &cfg, slots, &state.stop).await {
                    info!(worker = %r.worker_id, "registered again (the coordinator restarted)");
                    *state.worker_id.write().expect("not poisoned") = r.worker_id;
                }
            }
            Err(s) => debug!(error = %s.message(), "heartbeat failed"),
        }
    }
}

/// Runs the worker until `shutdown` completes (or `max_games` are acknowledged).
///
/// # Errors
/// [`WorkerError`] for a bad configuration, an unusable spool directory, or a coordinator
/// that refuses the worker's token or engine version.
pub async fn run(
    cfg: WorkerConfig,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<WorkerReport, WorkerError> {
    let metrics = match &cfg.metrics_listen {
        Some(addr) => Some(zeroplay_telemetry::bind(addr).await.map_err(WorkerError::Config)?),
        None => None,
    };
    run_with_metrics(cfg, metrics, shutdown).await
}

/// [`run`] with the metrics listener given (tests bind port 0, so no other process can take
/// the port between choosing and binding it); `None`: no metrics endpoint, whatever
/// `cfg.metrics_listen` says.
///
/// # Errors
/// As [`run`].
pub async fn run_with_metrics(
    cfg: WorkerConfig,
    metrics_listener: Option<tokio::net::TcpListener>,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<WorkerReport, WorkerError> {
    if cfg.backoff_initial_ms == 0 || cfg.backoff_max_ms < cfg.backoff_initial_ms {
        return Err(WorkerError::Config("need 0 < backoff_initial_ms <= backoff_max_ms".into()));
    }
    std::fs::create_dir_all(cfg.spool_dir.join("rejected"))?;
    remove_partial_spool_files(&cfg.spool_dir);
    let slots =
        if cfg.slots == 0 { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { cfg.slots };
    let mut client = client(&cfg)?;
    let batch_sizes = metrics::batch_histogram();
    let observe = batch_sizes.clone();
    let state = Arc::new(State {
        cfg: cfg.clone(),
        worker_id: RwLock::new(String::new()),
        active: Mutex::new(HashSet::new()),
        abandoned: Mutex::new(Vec::new()),
        stop: AtomicBool::new(false),
        played: AtomicU64::new(0),
        moves: AtomicU64::new(0),
        submitted: AtomicU64::new(0),
        play_nanos: AtomicU64::new(0),
        models: ModelSlots::new(&[BattleNumber::NAME, Banqi::NAME, TriGolden::NAME]),
        batcher: Batcher::start_observed(
            cfg.inference_batch.max(1),
            Duration::from_micros(cfg.inference_wait_us),
            move |n| observe.observe(n as f64),
        ),
        evaluation_models: Mutex::new(HashMap::new()),
        evaluation_matches: AtomicU64::new(0),
    });
    let rt = tokio::runtime::Handle::current();
    // Metrics and health: alive from here, ready once registered. The server stops at the end
    // (or when its handle is dropped, on any return).
    let health = zeroplay_telemetry::Health::new();
    let metrics_server = metrics_listener.map(|l| {
        let registry = Arc::new(metrics::registry(Arc::downgrade(&state), batch_sizes));
        zeroplay_telemetry::spawn(l, registry, health.clone())
    });
    tokio::pin!(shutdown);
    let reg = tokio::select! {
        r = register(&mut client, &cfg, slots, &state.stop) => r?,
        _ = &mut shutdown => return Ok(WorkerReport { games_spooled: spooled(&cfg.spool_dir)?.len() as u64, ..Default::default() }),
    };
    *state.worker_id.write().expect("not poisoned") = reg.worker_id.clone();
    info!(worker = %reg.worker_id, slots, coordinator = %cfg.coordinator, "worker registered");
    health.set_ready(true);

    // Submitter: first whatever an earlier run left in the spool, then each new game.
    let (done_tx, done_rx) = mpsc::unbounded_channel::<PathBuf>();
    for p in spooled(&cfg.spool_dir)? {
        info!(file = %p.display(), "resubmitting a game left in the spool");
        let _ = done_tx.send(p);
    }
    let submitter = tokio::spawn(submitter(state.clone(), client.clone(), done_rx));

    // Slots: one OS thread per concurrent game.
    let (lease_tx, lease_rx) = mpsc::channel::<pb::Lease>(slots);
    let lease_rx = Arc::new(Mutex::new(lease_rx));
    let mut threads = Vec::new();
    for slot in 0..slots {
        let (state, lease_rx, done_tx) = (state.clone(), lease_rx.clone(), done_tx.clone());
        let (rt, eval_client) = (rt.clone(), client.clone());
        threads.push(
            std::thread::Builder::new()
                .name(format!("selfplay-{slot}"))
                .spawn(move || loop {
                    let lease = lease_rx.lock().expect("not poisoned").blocking_recv();
                    let Some(lease) = lease else { return };
                    if state.stop.load(Ordering::Relaxed) {
                        state.abandoned.lock().expect("not poisoned").push(lease.lease_id);
                        continue;
                    }
                    if let Some(ev) = &lease.evaluation {
                        // A gating match: played whole (there is no game to spool), then reported.
                        match play_evaluation(&state, &rt, &eval_client, &lease, ev) {
                            Ok((points, plies)) => {
                                rt.block_on(report_match(&mut eval_client.clone(), &state, lease.lease_id, points, plies));
                                state.active.lock().expect("not poisoned").remove(&lease.lease_id);
                            }
                            Err(e) => {
                                error!(lease = lease.lease_id, error = %e, "cannot play evaluation match; handing it back");
                                state.active.lock().expect("not poisoned").remove(&lease.lease_id);
                                state.abandoned.lock().expect("not poisoned").push(lease.lease_id);
                            }
                        }
                        continue;
                    }
                    let (t, cpu) = (Instant::now(), thread_cpu_ns());
                    let stop = || state.stop.load(Ordering::Relaxed);
                    let result = play_lease(&state, &lease, &stop);
                    let spent = match (cpu, thread_cpu_ns()) {
                        (Some(a), Some(b)) => b.saturating_sub(a),
                        _ => t.elapsed().as_nanos() as u64,
                    };
                    state.play_nanos.fetch_add(spent, Ordering::Relaxed);
                    match result {
                        Ok(Some(game)) => {
                            state.played.fetch_add(1, Ordering::Relaxed);
                            state.moves.fetch_add(game.moves.len() as u64, Ordering::Relaxed);
                            let req = pb::SubmitGameRequest { worker_id: String::new(), lease_id: lease.lease_id, game: Some(game) };
                            // A full disk holds this slot (back-pressure) until the game is
                            // on disk; only a shutdown gives it up.
                            let mut warned = false;
                            loop {
                                match spool(&state.cfg.spool_dir, &req) {
                                    Ok(path) => {
                                        if warned {
                                            info!(file = %path.display(), "the finished game is spooled after all");
                                        }
                                        let _ = done_tx.send(path);
                                        break;
                                    }
                                    Err(e) if state.stop.load(Ordering::Relaxed) => {
                                        error!(error = %e, "cannot spool a finished game at shutdown; it is lost");
                                        break;
                                    }
                                    Err(e) => {
                                        if !warned {
                                            warn!(error = %e, "cannot spool a finished game; retrying every second");
                                            warned = true;
                                        }
                                        std::thread::sleep(Duration::from_secs(1));
                                    }
                                }
                            }
                            state.active.lock().expect("not poisoned").remove(&lease.lease_id);
                        }
                        Ok(None) => {
                            state.active.lock().expect("not poisoned").remove(&lease.lease_id);
                            state.abandoned.lock().expect("not poisoned").push(lease.lease_id);
                        }
                        Err(e) => {
                            error!(lease = lease.lease_id, error = %e, "cannot play lease; handing it back");
                            state.active.lock().expect("not poisoned").remove(&lease.lease_id);
                            state.abandoned.lock().expect("not poisoned").push(lease.lease_id);
                        }
                    }
                })
                .expect("spawn self-play thread"),
        );
    }
    drop(done_tx);

    // Leaser: keeps every slot fed. It is stopped through `stop_leasing`, never aborted, so a
    // lease request in flight is always answered and its leases recorded (and handed back).
    let stop_leasing = Arc::new(tokio::sync::Notify::new());
    let leaser = tokio::spawn(leaser(state.clone(), client.clone(), lease_tx, stop_leasing.clone()));

    // Heartbeat: renews leases; re-registers after a coordinator restart.
    let every = Duration::from_millis(reg.heartbeat_interval_ms.max(10));
    let heartbeat = tokio::spawn(heartbeat(state.clone(), client.clone(), cfg.clone(), slots, every));

    // Model watcher: follows published models and hot-swaps them into the slot.
    let model_watcher = {
        let (state, client) = (state.clone(), client.clone());
        tokio::spawn(async move { watch_models(client, state).await })
    };

    // Wait for the end: a signal, or enough games acknowledged.
    let watch = {
        let state = state.clone();
        async move {
            while !state.done() {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    tokio::select! {
        _ = &mut shutdown => info!("worker stopping: abandoning games in progress and handing back their leases"),
        _ = watch => info!("worker reached max_games"),
    }
    state.stop.store(true, Ordering::Relaxed);
    health.set_ready(false);
    stop_leasing.notify_one();
    let _ = leaser.await;
    // The leaser owned the sender: the slots drain the queue (abandoning) and exit.
    let joined =
        tokio::task::spawn_blocking(move || threads.into_iter().for_each(|t| t.join().unwrap_or_default()));
    let _ = joined.await;
    heartbeat.abort();
    model_watcher.abort();
    let mut to_release: Vec<u64> = std::mem::take(&mut *state.abandoned.lock().expect("not poisoned"));
    to_release.extend(state.active.lock().expect("not poisoned").drain());
    if !to_release.is_empty() {
        let req = pb::ReleaseRequest { worker_id: state.id(), lease_ids: to_release.clone() };
        match tokio::time::timeout(Duration::from_secs(3), client.release_leases(req)).await {
            Ok(Ok(r)) => info!(released = r.into_inner().released, "leases handed back"),
            _ => {
                warn!(leases = to_release.len(), "could not hand leases back; they expire on the coordinator")
            }
        }
    }
    let _ = submitter.await;
    let report = WorkerReport {
        games_played: state.played.load(Ordering::Relaxed),
        games_submitted: state.submitted.load(Ordering::Relaxed),
        games_spooled: spooled(&cfg.spool_dir)?.len() as u64,
        play_seconds: state.play_nanos.load(Ordering::Relaxed) as f64 / 1e9,
        cpu_seconds: process_cpu_seconds(),
        evaluation_matches: state.evaluation_matches.load(Ordering::Relaxed),
    };
    if let Some(m) = metrics_server {
        m.stop().await;
    }
    info!(?report, "worker stopped");
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_written_spool_files_are_removed_and_finished_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("rejected")).unwrap();
        for name in ["a.pb", "b.pb.tmp", "rejected/c.pb"] {
            std::fs::write(dir.path().join(name), b"x").unwrap();
        }
        remove_partial_spool_files(dir.path());
        assert!(!dir.path().join("b.pb.tmp").exists());
        assert!(dir.path().join("a.pb").exists() && dir.path().join("rejected/c.pb").exists());
        assert_eq!(spooled(dir.path()).unwrap(), vec![dir.path().join("a.pb")]);
    }
}
