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

mod config;
mod metrics;
mod play;
mod spool;

pub use config::{WorkerConfig, WorkerError, WorkerReport};
use play::{play_evaluation, play_lease};
use spool::{remove_partial_spool_files, spool, spooled, submit_file};

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use engine::GameKind;
use model::Batcher;
use tokio::sync::mpsc;
use tonic::Code;
use tracing::{debug, error, info, warn};
use zeroplay_proto::v1 as pb;

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
    /// Value checks searched and reported.
    value_checks: AtomicU64,
}

impl State {
    /// A worker's state before registering: no leases, no models, the batcher started.
    fn new(cfg: &WorkerConfig, observe: impl Fn(usize) + Send + 'static) -> Arc<State> {
        Arc::new(State {
            cfg: cfg.clone(),
            worker_id: RwLock::new(String::new()),
            active: Mutex::new(HashSet::new()),
            abandoned: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
            played: AtomicU64::new(0),
            moves: AtomicU64::new(0),
            submitted: AtomicU64::new(0),
            play_nanos: AtomicU64::new(0),
            models: ModelSlots::new(&GameKind::ALL),
            batcher: Batcher::start_observed(
                cfg.inference_batch.max(1),
                Duration::from_micros(cfg.inference_wait_us),
                observe,
            ),
            evaluation_models: Mutex::new(HashMap::new()),
            evaluation_matches: AtomicU64::new(0),
            value_checks: AtomicU64::new(0),
        })
    }
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
    Bearer, Client, ModelSlots, download_version, follow_models, load_model, publish_model,
};
pub use zeroplay_proto::convert::game_record;

/// Builds a coordinator client for `cfg` ([`zeroplay_client::connect`] with the worker's
/// URL, token and certificate).
///
/// # Errors
/// [`WorkerError::Config`] for a bad URL, token or certificate, or outside a Tokio runtime.
pub fn client(cfg: &WorkerConfig) -> Result<Client, WorkerError> {
    zeroplay_client::connect(&cfg.client()).map_err(|e| WorkerError::Config(e.to_string()))
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
            protocol: zeroplay_proto::PROTOCOL,
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

/// Reports a played match, retrying a few times; a report that cannot get through is
/// dropped (the lease expires and the match is played again elsewhere).
async fn report_match(client: &mut Client, state: &State, lease_id: u64, played: play::PlayedMatch) {
    let plies = played.games.iter().map(|g| g.actions.len() as u32).sum();
    for attempt in 0..5 {
        let req = pb::ReportMatchRequest {
            worker_id: state.id(),
            lease_id,
            candidate_points: played.points as f32,
            plies,
            games: played.games.clone(),
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

async fn report_check(
    client: &mut Client,
    state: &State,
    lease_id: u64,
    found: engine::selfplay::CheckSearch<String>,
) {
    let (visit_actions, visit_counts) = found.visits.into_iter().unzip();
    let req = pb::ReportCheckRequest {
        worker_id: state.id(),
        lease_id,
        root_value: found.root_value,
        visit_actions,
        visit_counts,
    };
    for attempt in 0..5 {
        let req = req.clone();
        match client.report_check(req).await {
            Ok(_) => {
                state.value_checks.fetch_add(1, Ordering::Relaxed);
                return;
            }
            Err(s) if matches!(s.code(), Code::NotFound | Code::InvalidArgument | Code::PermissionDenied) => {
                debug!(lease = lease_id, error = %s.message(), "check report refused");
                return;
            }
            Err(s) => {
                debug!(lease = lease_id, error = %s.message(), "check report failed; retrying");
                tokio::time::sleep(backoff(&state.cfg, attempt)).await;
            }
        }
    }
    warn!(lease = lease_id, "could not report a value check; it will be searched again");
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
                    info!(worker = %shown(&r.worker_id), "registered again (the coordinator restarted)");
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
    let state = State::new(&cfg, move |n| observe.observe(n as f64));
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
    info!(worker = %shown(&reg.worker_id), slots, coordinator = %cfg.coordinator, "worker registered");
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
    let threads = spawn_slots(slots, &state, lease_rx, &done_tx, &client);
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
    release_leases(&state, &mut client).await;
    let _ = submitter.await;
    let report = WorkerReport::of(&state)?;
    if let Some(m) = metrics_server {
        m.stop().await;
    }
    info!(?report, "worker stopped");
    Ok(report)
}
/// Hands back every lease this worker holds and will not finish (at shutdown), so the
/// coordinator can lease their positions again at once instead of after they expire.
async fn release_leases(state: &State, client: &mut Client) {
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
}

/// One OS thread per slot, each taking leases from the leaser's queue ([`SlotIo::run`]).
fn spawn_slots(
    slots: usize,
    state: &Arc<State>,
    lease_rx: mpsc::Receiver<pb::Lease>,
    done: &mpsc::UnboundedSender<PathBuf>,
    client: &Client,
) -> Vec<std::thread::JoinHandle<()>> {
    let leases = Arc::new(Mutex::new(lease_rx));
    let rt = tokio::runtime::Handle::current();
    (0..slots)
        .map(|slot| {
            let slot_io = SlotIo {
                state: state.clone(),
                leases: leases.clone(),
                done: done.clone(),
                rt: rt.clone(),
                client: client.clone(),
            };
            std::thread::Builder::new()
                .name(format!("selfplay-{slot}"))
                .spawn(move || slot_io.run())
                .expect("spawn self-play thread")
        })
        .collect()
}

impl WorkerReport {
    /// The counts of a stopped worker, and the games its spool still holds.
    fn of(state: &State) -> Result<WorkerReport, WorkerError> {
        Ok(WorkerReport {
            games_played: state.played.load(Ordering::Relaxed),
            games_submitted: state.submitted.load(Ordering::Relaxed),
            games_spooled: spooled(&state.cfg.spool_dir)?.len() as u64,
            play_seconds: state.play_nanos.load(Ordering::Relaxed) as f64 / 1e9,
            cpu_seconds: process_cpu_seconds(),
            evaluation_matches: state.evaluation_matches.load(Ordering::Relaxed),
            value_checks: state.value_checks.load(Ordering::Relaxed),
        })
    }
}

/// What one self-play slot (an OS thread) works with.
struct SlotIo {
    state: Arc<State>,
    /// The leaser's queue, shared by every slot.
    leases: Arc<Mutex<mpsc::Receiver<pb::Lease>>>,
    /// Spooled games, for the submitter.
    done: mpsc::UnboundedSender<PathBuf>,
    rt: tokio::runtime::Handle,
    client: Client,
}

impl SlotIo {
    /// Takes leases until the leaser closes the queue: a value check, a gating match or a
    /// self-play game each. After `stop`, leases still queued are abandoned (handed back).
    fn run(self) {
        loop {
            let lease = self.leases.lock().expect("not poisoned").blocking_recv();
            let Some(lease) = lease else { return };
            let state = &self.state;
            if state.stop.load(Ordering::Relaxed) {
                state.abandoned.lock().expect("not poisoned").push(lease.lease_id);
                continue;
            }
            let kept = if let Some(check) = &lease.check {
                self.check(&lease, check)
            } else if let Some(ev) = &lease.evaluation {
                self.evaluation(&lease, ev)
            } else {
                self.selfplay(&lease)
            };
            state.active.lock().expect("not poisoned").remove(&lease.lease_id);
            if !kept {
                state.abandoned.lock().expect("not poisoned").push(lease.lease_id);
            }
        }
    }

    /// A value check of another worker's stored move: one search, reported. False: hand the
    /// lease back.
    fn check(&self, lease: &pb::Lease, check: &pb::ValueCheck) -> bool {
        match play::check_value(&self.state, &self.rt, &self.client, lease, check) {
            Ok(v) => {
                self.rt.block_on(report_check(&mut self.client.clone(), &self.state, lease.lease_id, v));
                true
            }
            Err(e) => {
                error!(lease = lease.lease_id, error = %e, "cannot search a value check; handing it back");
                false
            }
        }
    }

    /// A gating match: played whole (there is no game to spool), then reported. False: hand
    /// the lease back.
    fn evaluation(&self, lease: &pb::Lease, ev: &pb::EvaluationMatch) -> bool {
        match play_evaluation(&self.state, &self.rt, &self.client, lease, ev) {
            Ok(played) => {
                self.rt.block_on(report_match(&mut self.client.clone(), &self.state, lease.lease_id, played));
                true
            }
            Err(e) => {
                error!(lease = lease.lease_id, error = %e, "cannot play evaluation match; handing it back");
                false
            }
        }
    }

    /// A self-play game: played, timed on this thread's CPU clock, and spooled for the
    /// submitter. False (hand the lease back): stopped before the end, or it failed.
    fn selfplay(&self, lease: &pb::Lease) -> bool {
        let state = &self.state;
        let (t, cpu) = (Instant::now(), thread_cpu_ns());
        let stop = || state.stop.load(Ordering::Relaxed);
        let result = play_lease(state, lease, &stop);
        let spent = match (cpu, thread_cpu_ns()) {
            (Some(a), Some(b)) => b.saturating_sub(a),
            _ => t.elapsed().as_nanos() as u64,
        };
        state.play_nanos.fetch_add(spent, Ordering::Relaxed);
        match result {
            Ok(Some(game)) => {
                state.played.fetch_add(1, Ordering::Relaxed);
                state.moves.fetch_add(game.moves.len() as u64, Ordering::Relaxed);
                let req = pb::SubmitGameRequest {
                    worker_id: String::new(),
                    lease_id: lease.lease_id,
                    game: Some(game),
                };
                self.spool_until_written(&req);
                true
            }
            Ok(None) => false,
            Err(e) => {
                error!(lease = lease.lease_id, error = %e, "cannot play lease; handing it back");
                false
            }
        }
    }

    /// A full disk holds this slot (back-pressure) until the game is on disk; only a shutdown
    /// gives it up.
    fn spool_until_written(&self, req: &pb::SubmitGameRequest) {
        let state = &self.state;
        let mut warned = false;
        loop {
            match spool(&state.cfg.spool_dir, req) {
                Ok(path) => {
                    if warned {
                        info!(file = %path.display(), "the finished game is spooled after all");
                    }
                    let _ = self.done.send(path);
                    return;
                }
                Err(e) if state.stop.load(Ordering::Relaxed) => {
                    error!(error = %e, "cannot spool a finished game at shutdown; it is lost");
                    return;
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
    }
}

/// A worker id as logs show it: the public part, not the secret after the dot (the id is
/// the worker's credential for its leases).
fn shown(worker_id: &str) -> &str {
    worker_id.split_once('.').map_or(worker_id, |(public, _)| public)
}
