//! The zeroplay play server: people play TriGolden and Battle Number against the best model
//! in a browser.
//!
//! - [`run`] serves a JSON API ([`api`]) and the web client (`web/`, embedded in the binary:
//!   no CDN, no build step) on one listener, until `shutdown` resolves.
//! - Each game's AI searches with that game's network as its leaf evaluator. A network is the
//!   best model of its game, followed from a coordinator (`WatchModels`, as workers follow it)
//!   or from a model file per game (reloaded when it changes), and hot-swapped between moves.
//!   With no model, Battle Number plays the user's rollout AI, TriGolden the user's own AI
//!   (`trigolden-user`) and Banqi `banqi-ab`.
//! - A search whose client leaves (the event stream closed) or whose game is deleted is
//!   stopped at once ([`engine::agent::StopFlag`]), not run to its time.
//! - The web client holds no rules: it shows what the server says may be clicked, and sends
//!   clicks back. Every click is checked by the engine ([`table::Table::click`]).
//! - Limits: request body size, games held in all and per client address, AI think time;
//!   idle games are dropped.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use engine::GameKind;
use model::ModelSlot;
use tracing::{info, warn};

pub mod api;
mod assets;
mod capacity;
pub mod client;
mod config;
mod download;
mod hosted;
pub mod metrics;
pub mod replay;
mod report;
pub mod served;
pub mod table;

use table::Table;

pub use config::{GameDefaults, GameServeConfig, ModelSource, ServeConfig};

/// Errors of the API, each mapped to one HTTP status in [`IntoResponse`].
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// No such game (or it was dropped for idleness).
    #[error("{0}")]
    NotFound(String),
    /// A malformed request.
    #[error("{0}")]
    BadRequest(String),
    /// A well-formed click the rules refuse here.
    #[error("{0}")]
    Illegal(String),
    /// The request does not fit the game's state (AI thinking, game over, nothing to undo).
    #[error("{0}")]
    Conflict(String),
    /// A limit was reached.
    #[error("{0}")]
    TooMany(String),
    /// A change to a game without its secret (or with another one).
    #[error("{0}")]
    Forbidden(String),
}

impl ApiError {
    /// The HTTP status of this error.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Illegal(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::TooMany(_) => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        (status, axum::Json(serde_json::json!({ "error": self.to_string(), "status": status.as_u16() })))
            .into_response()
    }
}

/// A held game.
pub(crate) struct Held {
    pub table: Mutex<Box<dyn Table>>,
    pub owner: IpAddr,
    /// What every change to the game must carry ([`SECRET_HEADER`]): 128 random bits, given
    /// only to the game's creator.
    pub secret: String,
    pub last_used: Mutex<Instant>,
    /// An AI turn is being computed: clicks, undo and a second AI request wait.
    pub thinking: std::sync::atomic::AtomicBool,
    /// The AI's time per move in this game (milliseconds); changed by `…/settings`.
    pub ai_ms: AtomicU64,
    /// The running AI search's stop flag: set when the game is deleted or its client leaves.
    pub stop: Mutex<Option<engine::agent::StopFlag>>,
}

impl Held {
    /// Stops the AI search running for this game, if any (its move will not be applied).
    pub(crate) fn stop_search(&self) {
        if let Some(stop) = self.stop.lock().expect("not poisoned").as_ref() {
            stop.store(true, Ordering::Relaxed);
        }
    }
}

/// The server's shared state.
pub struct AppState {
    pub(crate) cfg: ServeConfig,
    pub(crate) games: Mutex<HashMap<u64, Arc<Held>>>,
    /// Games created since start (ids are random: they cannot be counted from them).
    pub(crate) games_created: AtomicU64,
    /// Every game's model slot and AI ([`hosted`]).
    pub(crate) hosts: hosted::Hosts,
    pub(crate) started: Instant,
    /// AI turns computed, and their simulations (for /api/info).
    pub(crate) ai_turns: AtomicU64,
    pub(crate) ai_sims: AtomicU64,
    pub(crate) ai_micros: AtomicU64,
    /// The listener's connection table (for /metrics).
    pub(crate) connections: zeroplay_net::Guard,
}

/// The game number of an id in a path (hex).
///
/// # Errors
/// [`ApiError::NotFound`] for text that is no id.
pub(crate) fn game_id(s: &str) -> Result<u64, ApiError> {
    u64::from_str_radix(s, 16).map_err(|_| ApiError::NotFound(format!("no game {s:?}")))
}

/// The held game `id`, marked as used now.
///
/// # Errors
/// [`ApiError::NotFound`] for no such game (or one dropped after its idle time).
pub(crate) fn held(state: &AppState, id: &str) -> Result<Arc<Held>, ApiError> {
    let h = lookup(state, id)?;
    *h.last_used.lock().expect("not poisoned") = Instant::now();
    Ok(h)
}

fn lookup(state: &AppState, id: &str) -> Result<Arc<Held>, ApiError> {
    let n = game_id(id)?;
    let h = state.games.lock().expect("not poisoned").get(&n).cloned();
    h.ok_or_else(|| {
        ApiError::NotFound(format!("no game {id} (finished games are dropped after an idle hour)"))
    })
}

/// The header that carries a game's secret on every request that changes the game.
pub const SECRET_HEADER: &str = "x-game-secret";

/// The held game `id` for a change: `secret` must be its secret (checked before the game is
/// marked as used, so a stranger's request does not keep it alive).
///
/// # Errors
/// [`ApiError::NotFound`], or [`ApiError::Forbidden`] without the right secret.
pub(crate) fn owned(state: &AppState, id: &str, secret: Option<&str>) -> Result<Arc<Held>, ApiError> {
    let h = lookup(state, id)?;
    let Some(secret) = secret else {
        return Err(ApiError::Forbidden(format!(
            "changing game {id} needs its secret in the {SECRET_HEADER} header (POST /api/games gave it to \
             the game's creator; to watch, use its replay token)"
        )));
    };
    // Compared in constant time: the answer's timing says nothing about the secret.
    let (a, b) = (secret.as_bytes(), h.secret.as_bytes());
    let differ = a.len() != b.len() || a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) != 0;
    if differ {
        return Err(ApiError::Forbidden(format!("wrong secret for game {id}")));
    }
    *h.last_used.lock().expect("not poisoned") = Instant::now();
    Ok(h)
}

/// A fresh game secret: 128 random bits in hex.
pub(crate) fn new_secret() -> String {
    format!("{:032x}", rand::random::<u128>())
}

impl AppState {
    /// State for `cfg`, with an empty model slot per game (filled by whoever follows the
    /// models: [`run`] from a coordinator or the configured files).
    ///
    /// # Errors
    /// A bad setting.
    pub fn new(cfg: ServeConfig) -> Result<Arc<AppState>, String> {
        cfg.validate()?;
        let hosts = hosted::Hosts::new(&cfg);
        let connections = zeroplay_net::Guard::new(cfg.connections.clone(), "play server");
        Ok(Arc::new(AppState {
            connections,
            cfg,
            games: Mutex::new(HashMap::new()),
            games_created: AtomicU64::new(0),
            hosts,
            started: Instant::now(),
            ai_turns: AtomicU64::new(0),
            ai_sims: AtomicU64::new(0),
            ai_micros: AtomicU64::new(0),
        }))
    }

    /// Games held now.
    pub fn games_held(&self) -> usize {
        self.games.lock().expect("not poisoned").len()
    }

    /// Drops games idle longer than the timeout; returns how many.
    pub fn sweep(&self) -> usize {
        let limit = Duration::from_secs(self.cfg.idle_timeout_s);
        let mut games = self.games.lock().expect("not poisoned");
        let before = games.len();
        games.retain(|_, h| {
            h.thinking.load(Ordering::SeqCst) || h.last_used.lock().expect("not poisoned").elapsed() < limit
        });
        before - games.len()
    }
}

/// Errors that stop the server.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Bad configuration.
    #[error("serve config: {0}")]
    Config(String),
    /// The listener failed.
    #[error("serving: {0}")]
    Io(#[from] std::io::Error),
}

/// Serves the API and the web client on `listener` until `shutdown` resolves, following the
/// model named by `cfg` (coordinator or file).
///
/// # Errors
/// A bad configuration or model file, or a listener failure.
pub async fn run(
    cfg: ServeConfig,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    run_with_ready(cfg, listener, shutdown, |_| {}).await
}

/// [`run`], calling `ready` with the address once the server is ready: every model file
/// loaded and checked, just before it answers. A command prints its ready line there, so a
/// line is never printed for a server that then refuses its model.
///
/// # Errors
/// As [`run`].
pub async fn run_with_ready(
    cfg: ServeConfig,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ready: impl FnOnce(SocketAddr) + Send,
) -> Result<(), ServeError> {
    let state = AppState::new(cfg.clone()).map_err(ServeError::Config)?;
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // Each game's model file: a bad file is refused at start; later bad versions are refused
    // and the old model kept.
    for kind in GameKind::ALL {
        engine::with_game!(kind, |G| match cfg.model_source(kind) {
            ModelSource::File(path) => serve_file::<G>(&path, state.model(kind), cfg.model_poll_ms, &stop)?,
            ModelSource::Builtin => serve_builtin::<G>(state.model(kind)).map_err(ServeError::Config)?,
            ModelSource::Coordinator | ModelSource::None => {}
        });
    }
    if let Some(url) = &cfg.coordinator {
        let ccfg = zeroplay_client::ClientConfig {
            coordinator: url.clone(),
            token: cfg.token.clone(),
            ca_cert: None,
        };
        let client = zeroplay_client::connect(&ccfg).map_err(|e| ServeError::Config(e.to_string()))?;
        let slots = zeroplay_client::ModelSlots::from_slots(
            state.hosts.models().map(|(kind, slot)| (kind, slot.clone())).collect(),
        );
        let stop = stop.clone();
        tokio::spawn(async move {
            let s = move || stop.load(Ordering::Relaxed);
            let backoff = zeroplay_client::Backoff { initial_ms: 200, max_ms: 10_000 };
            zeroplay_client::follow_models(client, slots, backoff, &s).await
        });
    }
    {
        let state = state.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                tokio::time::sleep(Duration::from_secs(30)).await;
                let n = state.sweep();
                if n > 0 {
                    info!(dropped = n, held = state.games_held(), "idle games dropped");
                }
            }
        });
    }
    let addr = listener.local_addr()?;
    let models: Vec<String> = GameKind::ALL
        .iter()
        .filter_map(|&k| cfg.model_file(k).map(|p| format!("{k}: {}", p.display())))
        .collect();
    info!(%addr, ?models, coordinator = ?cfg.coordinator, "play server listening; open http://{addr}/");
    let listener = zeroplay_net::GuardedListener::with_guard(listener, state.connections.clone());
    let app = api::router(state);
    ready(addr);
    zeroplay_net::serve_http(listener, app, shutdown).await;
    stop.store(true, Ordering::Relaxed);
    info!("play server stopped");
    Ok(())
}

type Stamp = Option<std::time::SystemTime>;

/// Loads `G`'s built-in model ([`model::builtin`]) into `slot` as version 1.
fn serve_builtin<G: engine::Features>(slot: &Arc<ModelSlot>) -> Result<(), String> {
    let kind = GameKind::of::<G>();
    let m = model::builtin::load::<G>(&model::cpu())?;
    info!(game = kind.name(), sha256 = %m.sha256, "serving the built-in model ([games.{}] builtin = false: without it)", kind.name());
    slot.publish(1, m);
    Ok(())
}

/// Loads `path` into `slot` (refusing a bad file) and watches it for new versions.
fn serve_file<G: engine::Features>(
    path: &std::path::Path,
    slot: &Arc<ModelSlot>,
    poll_ms: u64,
    stop: &Arc<std::sync::atomic::AtomicBool>,
) -> Result<(), ServeError> {
    let (model, stamp) = load_file::<G>(path).map_err(ServeError::Config)?;
    let v = file_version(path, &model.sha256, 0);
    info!(version = v, path = %path.display(), game = engine::GameKind::of::<G>().name(), "serving model file");
    slot.publish(v, model);
    let (path, slot, stop) = (path.to_path_buf(), slot.clone(), stop.clone());
    tokio::spawn(async move { watch_file::<G>(path, stamp, poll_ms, slot, stop).await });
    Ok(())
}

fn load_file<G: engine::Features>(path: &std::path::Path) -> Result<(model::Model, Stamp), String> {
    let stamp = std::fs::metadata(path).and_then(|m| m.modified()).ok();
    let bytes = std::fs::read(path).map_err(|e| format!("model {}: {e}", path.display()))?;
    let m = model::load::<G>(&bytes, &model::cpu()).map_err(|e| format!("model {}: {e}", path.display()))?;
    Ok((m, stamp))
}

/// The version a model file has in its trainer's `ratings.json` (beside the file or one
/// directory up, as `<run>/models/best.safetensors` sits under `<run>/ratings.json`), found by
/// the file's SHA-256. A file no trainer rated gets a local number after `previous` (files
/// carry no version of their own: the coordinator numbers a model when it is published).
fn file_version(path: &std::path::Path, sha256: &str, previous: u64) -> u64 {
    let dirs = path.parent().into_iter().flat_map(|d| [Some(d), d.parent()]).flatten();
    for dir in dirs {
        let Ok(text) = std::fs::read_to_string(dir.join("ratings.json")) else { continue };
        let Ok(serde_json::Value::Array(entries)) = serde_json::from_str(&text) else { continue };
        let found = entries.iter().rev().find(|e| e["sha256"].as_str() == Some(sha256));
        if let Some(v) = found.and_then(|e| e["version"].as_u64()).filter(|&v| v > 0) {
            return v;
        }
    }
    warn!(
        path = %path.display(),
        "no ratings.json beside the model file names it: numbering it locally ({})",
        previous + 1
    );
    previous + 1
}

async fn watch_file<G: engine::Features>(
    path: PathBuf,
    mut stamp: Stamp,
    poll_ms: u64,
    models: Arc<ModelSlot>,
    stop: Arc<std::sync::atomic::AtomicBool>,
) {
    while !stop.load(Ordering::Relaxed) {
        tokio::time::sleep(Duration::from_millis(poll_ms.max(50))).await;
        let now = std::fs::metadata(&path).and_then(|m| m.modified()).ok();
        if now == stamp {
            continue;
        }
        stamp = now;
        let p = path.clone();
        match tokio::task::spawn_blocking(move || load_file::<G>(&p)).await {
            Ok(Ok((m, _))) => {
                let v = file_version(&path, &m.sha256, models.version());
                models.publish(v, m);
                info!(version = v, path = %path.display(), "model file changed: new model loaded");
            }
            Ok(Err(e)) => warn!(error = %e, "model file changed but was refused; keeping the current model"),
            Err(e) => warn!(error = %e, "model loading crashed; keeping the current model"),
        }
    }
}

#[cfg(test)]
mod tests {
    use engine::Features;
    use engine::banqi::Banqi;

    use super::*;

    #[test]
    fn banqi_plays_banqi_ab_until_a_model_arrives_and_with_a_nano_model_at_its_leaves() {
        let named = |agent: &str, net: Option<&str>| {
            let cfg = ServeConfig::default().with_agent(GameKind::Banqi, agent);
            let state = AppState::new(cfg).unwrap();
            if let Some(net) = net {
                let net_cfg = model::NetConfig::named(net).unwrap();
                let net =
                    model::ValueNet::new(&net_cfg, Banqi::FEATURE_LEN, Banqi::POLICY_LEN, &model::cpu());
                let meta = model::ModelMeta::for_game::<Banqi>(net_cfg, 10.0, model::ModelInfo::default());
                let bytes = model::to_bytes(&net, &meta).unwrap();
                state.model(GameKind::Banqi).publish(1, model::load::<Banqi>(&bytes, &model::cpu()).unwrap());
            }
            (state.hosts.ai::<Banqi>())(Duration::from_millis(250)).name()
        };
        let name = |agent: &str, with_model: bool| named(agent, with_model.then_some("tiny"));
        assert_eq!(name("auto", false), "banqi-ab:time=250ms");
        assert!(name("auto", true).starts_with("mcts:"), "{}", name("auto", true));
        // A one-layer model is banqi-ab's leaf evaluation.
        assert_eq!(named("auto", Some("nano")), "banqi-ab:time=250ms,model=served");
        assert!(named("net", Some("nano")).starts_with("mcts:"));
        assert_eq!(name("banqi-ab:flips=6", true), "banqi-ab:time=250ms,flips=6");
        assert!(name("net", false).starts_with("mcts:"));
        for bad in ["random", "banqi-ab:foo=1", "trigolden-user"] {
            let cfg = ServeConfig::default().with_agent(GameKind::Banqi, bad);
            assert!(cfg.validate().unwrap_err().contains("[games.banqi] agent"), "{bad}");
        }
    }
}
