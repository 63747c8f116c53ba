//! The HTTP API (JSON) and the routes of the web client.
//!
//! | method and path | what it does |
//! |---|---|
//! | `GET /` , `/replay/{token}` | the web client |
//! | `GET /api/info` | games, limits, each game's model version (`model_versions`), source (`model_sources`), SHA-256 and AI, AI statistics |
//! | `POST /api/games` | a new game: `{game, options, ai_seat, ai_ms, seed}`, or one taken over from a replay: `{replay, at}` |
//! | `GET /api/games/{id}` | the game: board, legal clicks, history, outcome, replay token |
//! | `DELETE /api/games/{id}` | drop it |
//! | `POST /api/games/{id}/click` | `{action}`: one click |
//! | `POST /api/games/{id}/settings` | `{ai_seat, ai_ms}` (either): who the AI plays and its time, from now on; a search running for the game is stopped and its move dropped |
//! | `POST /api/games/{id}/undo`, `/redo` | back to the previous turn start of a human seat; forward again |
//! | `POST /api/games/{id}/ai?ms=N` | the AI plays the current turn; server-sent events: `progress` (sims, nodes, depth, elapsed, best, value), then `done` (its clicks and the new state) |
//! | `POST /api/games/{id}/hint?ms=N` | a search of the position in front of the players, nothing played: `{agent, best, value, sims, elapsed_ms, top: [{action, visits, share, value}]}` (the three most visited clicks) |
//! | `GET /api/games/{id}/arbitration` | TriGolden at a turn start: `{seat, obligation_met, legal_turns}` (rule 5) |
//! | `GET /api/games/{id}/board.svg` | the board as an SVG download |
//! | `GET /api/replay/{token}?at=K` | a replay token's game: options, seed, clicks, and the state after K clicks |
//! | `GET /metrics`, `/healthz`, `/readyz` | Prometheus metrics (`zeroplay_serve_*`), liveness, readiness |
//!
//! Errors are JSON `{error, status}`: 400 malformed, 404 no such game, 409 not now (AI
//! thinking, game over, nothing to undo), 413 body too large, 422 a click the rules refuse,
//! 429 a limit reached. A refused request leaves the game unchanged.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::rejection::JsonRejection;
use axum::extract::{ConnectInfo, DefaultBodyLimit, FromRequest, Path, Query, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_stream::StreamExt as _;

use crate::hosted::Hosted;
use crate::table::{Served, Session, Table, state_view};
use crate::{ApiError, AppState, Held, SECRET_HEADER, assets, game_id, held, new_secret, owned, replay};
use engine::GameKind;

/// The router over `state`, with the metrics and health endpoints of [`crate::metrics`].
pub fn router(state: Arc<AppState>) -> Router {
    let limit = state.cfg.max_body_bytes;
    let health = zeroplay_telemetry::Health::new();
    // The play server is ready as soon as it answers: it has no state to recover.
    health.set_ready(true);
    let telemetry = zeroplay_telemetry::router(Arc::new(crate::metrics::registry(state.clone())), health);
    let page = Asset::new(assets::INDEX_HTML, "text/html; charset=utf-8");
    let js = Asset::new(assets::APP_JS, "text/javascript; charset=utf-8");
    let css = Asset::new(assets::STYLE_CSS, "text/css; charset=utf-8");
    let rules = Asset::new(assets::RULES_HTML, "text/html; charset=utf-8");
    Router::new()
        .route(
            "/",
            get({
                let page = page.clone();
                move |h: HeaderMap| async move { page.serve(&h) }
            }),
        )
        .route("/replay/{token}", get(move |h: HeaderMap| async move { page.serve(&h) }))
        .route("/app.js", get(move |h: HeaderMap| async move { js.serve(&h) }))
        .route("/style.css", get(move |h: HeaderMap| async move { css.serve(&h) }))
        .route("/rules", get(move |h: HeaderMap| async move { rules.serve(&h) }))
        .route("/boards/{file}", get(board_module))
        .route("/report", get(crate::report::page))
        .route("/report.json", get(crate::report::json))
        .route("/api/info", get(info))
        .route("/api/games", post(create))
        .route("/api/games/{id}", get(show).delete(remove))
        .route("/api/games/{id}/click", post(click))
        .route("/api/games/{id}/settings", post(settings))
        .route("/api/games/{id}/undo", post(undo))
        .route("/api/games/{id}/redo", post(redo))
        .route("/api/games/{id}/ai", post(ai))
        .route("/api/games/{id}/board.svg", get(crate::download::svg))
        .route("/api/games/{id}/hint", post(hint))
        .route("/api/games/{id}/arbitration", get(arbitration))
        .route("/api/replay/{token}", get(replay_info))
        .merge(telemetry)
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(limit))
        // gzip where the client accepts it; tower-http's default predicate leaves server-sent
        // events (the AI's progress) and small bodies alone.
        .layer(tower_http::compression::CompressionLayer::new())
        .with_state(state)
}

/// One of the web client's files: served with a strong ETag and `Cache-Control: no-cache`,
/// so a browser revalidates (a 304 without the body) and never runs a stale client after
/// the binary is upgraded.
#[derive(Clone)]
struct Asset {
    body: &'static str,
    content_type: &'static str,
    etag: Arc<str>,
}

impl Asset {
    fn new(body: &'static str, content_type: &'static str) -> Asset {
        // FNV-1a over the bytes: a content hash, the same in every process of this build.
        let hash = body
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
        Asset { body, content_type, etag: format!("\"{hash:016x}\"").into() }
    }

    fn serve(&self, headers: &HeaderMap) -> Response {
        let fresh = headers
            .get(header::IF_NONE_MATCH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.split(',').any(|t| t.trim() == &*self.etag || t.trim() == "*"));
        let common = [(header::ETAG, self.etag.to_string()), (header::CACHE_CONTROL, "no-cache".to_string())];
        if fresh {
            return (StatusCode::NOT_MODIFIED, common).into_response();
        }
        (common, [(header::CONTENT_TYPE, self.content_type)], self.body).into_response()
    }
}

/// 404: JSON under `/api/`, a small page elsewhere (a person typed a wrong address).
async fn not_found(uri: axum::http::Uri) -> Response {
    if uri.path().starts_with("/api/") {
        return ApiError::NotFound(format!("no such endpoint: {}", uri.path())).into_response();
    }
    (StatusCode::NOT_FOUND, Html(assets::NOT_FOUND_HTML)).into_response()
}

/// A JSON body whose rejections are API errors (JSON, with the reason).
pub struct Body<T>(pub T);

impl<S: Send + Sync, T: serde::de::DeserializeOwned> FromRequest<S> for Body<T> {
    type Rejection = Response;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match Json::<T>::from_request(req, state).await {
            Ok(Json(v)) => Ok(Body(v)),
            Err(JsonRejection::BytesRejection(e)) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => Err((
                StatusCode::PAYLOAD_TOO_LARGE,
                Json(json!({ "error": "request body too large", "status": 413 })),
            )
                .into_response()),
            Err(e) => Err(ApiError::BadRequest(e.body_text()).into_response()),
        }
    }
}

fn view(id: u64, h: &Held) -> Value {
    let mut v = h.table.lock().expect("not poisoned").view();
    v["id"] = json!(format!("{id:x}"));
    v["thinking"] = json!(h.thinking.load(Ordering::SeqCst));
    v["ai_ms"] = json!(h.ai_ms.load(Ordering::Relaxed));
    v
}

/// `GET /boards/<name>.js`: a game's board module, from its pack (404 for a game the page
/// draws itself, or no game).
async fn board_module(Path(file): Path<String>, h: HeaderMap) -> Response {
    let pack = file.strip_suffix(".js").and_then(GameKind::from_name).map(GameKind::pack);
    match pack {
        Some(p) if !p.board_js.is_empty() => {
            Asset::new(p.board_js, "text/javascript; charset=utf-8").serve(&h)
        }
        _ => (StatusCode::NOT_FOUND, Html(assets::NOT_FOUND_HTML)).into_response(),
    }
}

async fn info(State(state): State<Arc<AppState>>) -> Json<Value> {
    let turns = state.ai_turns.load(Ordering::Relaxed);
    let sims = state.ai_sims.load(Ordering::Relaxed);
    let micros = state.ai_micros.load(Ordering::Relaxed);
    Json(json!({
        "games": GameKind::NAMES,
        // Each game's names, its board download's file name, and, where the page does not draw it
        // itself, its board module.
        "boards": GameKind::ALL.map(|k| {
            let p = k.pack();
            let module = (!p.board_js.is_empty()).then(|| format!("/boards/{k}.js"));
            (k.name().to_string(), json!({ "title": p.title, "title_zh": p.title_zh, "module": module, "svg_name": p.svg_name }))
        }).into_iter().collect::<serde_json::Map<_, _>>(),
        // Each game's model version (0: no network yet). `model_version` alone is Battle
        // Number's (the default game's), as before the server hosted other games; kept for
        // older clients.
        "model_versions": GameKind::ALL.map(|k| (k.name().to_string(), json!(state.model(k).version()))).into_iter().collect::<serde_json::Map<_, _>>(),
        "model_version": state.model(GameKind::DEFAULT).version(),
        // Where each game's model comes from: "file", "coordinator", "builtin" (the model
        // built into the binary) or null; and the SHA-256 of the one now served.
        "model_sources": GameKind::ALL.map(|k| (k.name().to_string(), json!(state.cfg.model_source(k).name()))).into_iter().collect::<serde_json::Map<_, _>>(),
        "model_sha256": GameKind::ALL.map(|k| (k.name().to_string(), json!(state.model(k).current().map(|v| v.model.sha256.clone())))).into_iter().collect::<serde_json::Map<_, _>>(),
        "games_held": state.games_held(),
        // The agent each game's AI is now (it changes when a model arrives), at 1 s a move.
        "agents": GameKind::ALL.map(|k| (k.name().to_string(), json!(state.hosts.ai_name(k)))).into_iter().collect::<serde_json::Map<_, _>>(),
        "limits": {
            "max_games": state.cfg.max_games,
            "max_games_per_client": state.cfg.max_games_per_client,
            "default_ai_ms": state.cfg.default_ai_ms,
            "max_ai_ms": state.cfg.max_ai_ms,
            "max_body_bytes": state.cfg.max_body_bytes,
        },
        "ai": {
            "turns": turns,
            "simulations": sims,
            "sims_per_s": if micros > 0 { sims as f64 / (micros as f64 / 1e6) } else { 0.0 },
        },
        "uptime_s": state.started.elapsed().as_secs(),
    }))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NewGame {
    game: Option<GameKind>,
    #[serde(default)]
    options: Value,
    /// "first", "second", "both" or "none" (default "second": you move first).
    ai_seat: Option<String>,
    ai_ms: Option<u64>,
    seed: Option<u64>,
    replay: Option<String>,
    at: Option<usize>,
}

fn new_table<G: Hosted>(
    state: &AppState,
    req: &NewGame,
    ai_seats: crate::table::Seats,
) -> Result<Box<dyn Table>, ApiError> {
    let (defaults, ai) = (&crate::hosted::defaults::<G>(&state.cfg), state.hosts.ai::<G>());
    let (options, seed, actions) = match &req.replay {
        Some(token) => {
            if !req.options.is_null() || req.seed.is_some() {
                return Err(ApiError::BadRequest("a replay brings its own options and seed".into()));
            }
            let r = replay::decode::<G>(token, defaults).map_err(ApiError::BadRequest)?;
            let at = req.at.unwrap_or(r.actions.len());
            if at > r.actions.len() {
                return Err(ApiError::BadRequest(format!(
                    "at={at}: the replay has {} clicks",
                    r.actions.len()
                )));
            }
            (r.options, r.seed, r.actions[..at].to_vec())
        }
        None => {
            let o = G::options_from_json(&req.options, defaults).map_err(ApiError::BadRequest)?;
            (o, req.seed.unwrap_or_else(rand::random), Vec::new())
        }
    };
    let slot = state.model(GameKind::of::<G>()).clone();
    let version: Arc<dyn Fn() -> u64 + Send + Sync> = Arc::new(move || slot.version());
    Ok(Box::new(Session::<G>::new(options, seed, &actions, ai_seats, ai, version)?))
}

async fn create(
    State(state): State<Arc<AppState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Body(req): Body<NewGame>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let kind = match (&req.replay, req.game) {
        (Some(t), g) => {
            let k = replay::kind_of(t).map_err(ApiError::BadRequest)?;
            if g.is_some_and(|g| g != k) {
                return Err(ApiError::BadRequest(format!("the replay is a {} game", k.name())));
            }
            k
        }
        (None, Some(g)) => g,
        (None, None) => {
            return Err(ApiError::BadRequest("name a game: battlenumber, trigolden or banqi".into()));
        }
    };
    if req.at.is_some() && req.replay.is_none() {
        return Err(ApiError::BadRequest("at= goes with replay=".into()));
    }
    let ai_seats = parse_seats(req.ai_seat.as_deref().unwrap_or("second"))?;
    let ai_ms = check_ms(&state, req.ai_ms.unwrap_or(state.cfg.default_ai_ms))?;
    // Building the table replays the clicks: off the runtime's threads.
    let table = {
        let state = state.clone();
        tokio::task::spawn_blocking(move || {
            engine::with_game!(kind, |G| new_table::<G>(&state, &req, ai_seats))
        })
        .await
        .map_err(|e| ApiError::BadRequest(format!("could not build the game: {e}")))??
    };
    let ip = peer.ip();
    let secret = new_secret();
    let held = Arc::new(Held {
        table: Mutex::new(table),
        owner: ip,
        secret: secret.clone(),
        last_used: Mutex::new(Instant::now()),
        thinking: Default::default(),
        ai_ms: AtomicU64::new(ai_ms),
        stop: Mutex::new(None),
    });
    let id = {
        let mut games = state.games.lock().expect("not poisoned");
        // The per-address check first: an address at its share replaces only its own
        // unplayed game, never another's.
        let (mine, share) = state.holding_and_share(&games, ip);
        if mine >= share && !state.evict_unplayed(&mut games, Some(ip)) {
            return Err(ApiError::TooMany(if share < state.cfg.max_games_per_client {
                format!("you hold {mine} games, your share while this many addresses play; delete one first")
            } else {
                format!("you hold {mine} games, the limit per client; delete one first")
            }));
        }
        if games.len() >= state.cfg.max_games && state.evict_unplayed(&mut games, None) {
            tracing::debug!("server full: dropped an unplayed game of the address holding the most");
        }
        if games.len() >= state.cfg.max_games {
            return Err(ApiError::TooMany(format!(
                "the server holds its limit of {} games; try later",
                state.cfg.max_games
            )));
        }
        // Unguessable: 64 random bits (a game is watched by its id; changed only with its secret).
        let id = std::iter::repeat_with(rand::random::<u64>)
            .find(|id| *id != 0 && !games.contains_key(id))
            .expect("a free id");
        state.games_created.fetch_add(1, Ordering::Relaxed);
        games.insert(id, held.clone());
        id
    };
    tracing::debug!(id = format!("{id:016x}"), game = kind.name(), "new game");
    let mut v = view(id, &held);
    v["secret"] = json!(secret);
    Ok((StatusCode::CREATED, Json(v)))
}

async fn show(State(state): State<Arc<AppState>>, Path(id): Path<String>) -> Result<Json<Value>, ApiError> {
    let h = held(&state, &id)?;
    Ok(Json(view(game_id(&id)?, &h)))
}

async fn remove(State(state): State<Arc<AppState>>, Owned(id, _): Owned) -> Result<StatusCode, ApiError> {
    let n = game_id(&id)?;
    let gone = state.games.lock().expect("not poisoned").remove(&n);
    match gone {
        Some(h) => {
            // A search for a deleted game answers nobody: stop it now.
            h.stop_search();
            Ok(StatusCode::NO_CONTENT)
        }
        None => Err(ApiError::NotFound(format!("no game {id}"))),
    }
}

/// The game named in the path, for a change: its secret ([`SECRET_HEADER`]) checked before
/// anything else of the request is read.
struct Owned(String, Arc<Held>);

impl axum::extract::FromRequestParts<Arc<AppState>> for Owned {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &Arc<AppState>,
    ) -> Result<Self, ApiError> {
        let Path(id) = Path::<String>::from_request_parts(parts, state)
            .await
            .map_err(|e| ApiError::NotFound(e.body_text()))?;
        let secret = match parts.headers.get(SECRET_HEADER) {
            None => None,
            Some(v) => Some(
                v.to_str().map_err(|_| ApiError::BadRequest(format!("{SECRET_HEADER} is not text")))?.trim(),
            ),
        };
        let h = owned(state, &id, secret)?;
        Ok(Owned(id, h))
    }
}

fn parse_seats(s: &str) -> Result<crate::table::Seats, ApiError> {
    match s {
        "second" => Ok([false, true]),
        "first" => Ok([true, false]),
        "both" => Ok([true, true]),
        "none" => Ok([false, false]),
        other => Err(ApiError::BadRequest(format!("ai_seat {other:?}: first, second, both or none"))),
    }
}

fn check_ms(state: &AppState, ms: u64) -> Result<u64, ApiError> {
    if ms == 0 || ms > state.cfg.max_ai_ms {
        return Err(ApiError::BadRequest(format!("ai_ms must be between 1 and {}", state.cfg.max_ai_ms)));
    }
    Ok(ms)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    ai_seat: Option<String>,
    ai_ms: Option<u64>,
}

/// Who the AI plays and its time. A search running for the game is stopped and its move
/// dropped, so "stop the AI" is `{ai_seat: "none"}` while it thinks.
async fn settings(
    State(state): State<Arc<AppState>>,
    Owned(id, h): Owned,
    Body(req): Body<Settings>,
) -> Result<Json<Value>, ApiError> {
    let seat = req.ai_seat.as_deref().map(parse_seats).transpose()?;
    let ms = req.ai_ms.map(|ms| check_ms(&state, ms)).transpose()?;
    if let Some(ms) = ms {
        h.ai_ms.store(ms, Ordering::Relaxed);
    }
    if let Some(seat) = seat {
        h.stop_search();
        h.table.lock().expect("not poisoned").set_ai_seats(seat);
    }
    Ok(Json(view(game_id(&id)?, &h)))
}

fn not_thinking(h: &Held) -> Result<(), ApiError> {
    if h.thinking.load(Ordering::SeqCst) {
        return Err(ApiError::Conflict("the AI is thinking; wait for its move".into()));
    }
    Ok(())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Click {
    action: String,
}

async fn click(Owned(id, h): Owned, Body(c): Body<Click>) -> Result<Json<Value>, ApiError> {
    not_thinking(&h)?;
    if c.action.len() > 64 {
        return Err(ApiError::BadRequest("action text longer than 64 characters".into()));
    }
    {
        let mut t = h.table.lock().expect("not poisoned");
        if t.to_move().is_some_and(|s| t.ai_seats()[s.index()]) {
            return Err(ApiError::Conflict("it is the AI's turn: ask it to move (POST .../ai)".into()));
        }
        t.click(&c.action)?;
    }
    Ok(Json(view(game_id(&id)?, &h)))
}

async fn undo(Owned(id, h): Owned) -> Result<Json<Value>, ApiError> {
    not_thinking(&h)?;
    h.table.lock().expect("not poisoned").undo()?;
    Ok(Json(view(game_id(&id)?, &h)))
}

async fn redo(Owned(id, h): Owned) -> Result<Json<Value>, ApiError> {
    not_thinking(&h)?;
    h.table.lock().expect("not poisoned").redo()?;
    Ok(Json(view(game_id(&id)?, &h)))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AiQuery {
    ms: Option<u64>,
}

/// Resets the thinking flag however the AI task ends.
struct Thinking(Arc<Held>);

/// Takes the game's one search slot (an AI turn or a hint), refused while another search
/// runs; the guard frees it however the search ends. Returns the search's stop flag.
fn claim_search(h: &Arc<Held>) -> Result<(Thinking, engine::agent::StopFlag), ApiError> {
    if h.thinking.swap(true, Ordering::SeqCst) {
        return Err(ApiError::Conflict("the AI is already thinking about this game".into()));
    }
    Ok((Thinking(h.clone()), engine::agent::StopFlag::default()))
}

impl Thinking {
    /// The search is over: nothing is left for DELETE or new settings to stop.
    fn release_stop(&self) {
        *self.0.stop.lock().expect("not poisoned") = None;
    }
}

impl Drop for Thinking {
    fn drop(&mut self) {
        self.0.thinking.store(false, Ordering::SeqCst);
    }
}

async fn ai(
    State(state): State<Arc<AppState>>,
    Owned(id, h): Owned,
    query: Result<Query<AiQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Sse<impl tokio_stream::Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let Query(q) = query.map_err(|e| ApiError::BadRequest(e.body_text()))?;
    let n = game_id(&id)?;
    let ms = q.ms.unwrap_or(h.ai_ms.load(Ordering::Relaxed));
    if ms == 0 || ms > state.cfg.max_ai_ms {
        return Err(ApiError::BadRequest(format!("ms must be between 1 and {}", state.cfg.max_ai_ms)));
    }
    let (guard, stop) = claim_search(&h)?;
    let (job, at) = {
        let t = h.table.lock().expect("not poisoned");
        (t.ai_job(Duration::from_millis(ms), stop.clone())?, t.ply())
    };
    *h.stop.lock().expect("not poisoned") = Some(stop.clone());
    let (tx, rx) = tokio::sync::mpsc::channel::<Event>(64);
    // A client that leaves (its event stream dropped) stops the search; the watcher lets go
    // of its sender once the job is done, so the stream then ends.
    let (finished, job_done) = tokio::sync::oneshot::channel::<()>();
    {
        let (tx, stop) = (tx.clone(), stop.clone());
        tokio::spawn(async move {
            tokio::select! {
                () = tx.closed() => stop.store(true, Ordering::Relaxed),
                _ = job_done => {}
            }
        });
    }
    let st = state.clone();
    tokio::task::spawn_blocking(move || {
        let guard = guard;
        let started = Instant::now();
        let mut last_sent = Instant::now() - Duration::from_secs(1);
        let (clicks, last) = job(&mut |p| {
            // At most ten progress events a second; a slow reader misses some, never blocks.
            if last_sent.elapsed() >= Duration::from_millis(100) {
                last_sent = Instant::now();
                if let Ok(e) = Event::default().event("progress").json_data(p) {
                    let _ = tx.try_send(e);
                }
            }
        });
        let took = started.elapsed();
        guard.release_stop();
        let stopped = stop.load(Ordering::Relaxed);
        // A stopped search's move is not played: its client or its game is gone.
        let applied = !stopped && guard.0.table.lock().expect("not poisoned").apply_ai(at, &clicks);
        if stopped {
            tracing::debug!(
                id = format!("{n:x}"),
                "AI search stopped: its client left or the game was deleted"
            );
        }
        st.ai_turns.fetch_add(1, Ordering::Relaxed);
        st.ai_sims.fetch_add(last.as_ref().map_or(0, |p| p.sims), Ordering::Relaxed);
        st.ai_micros.fetch_add(took.as_micros() as u64, Ordering::Relaxed);
        drop(guard);
        let done = json!({
            "clicks": clicks,
            "applied": applied,
            "search": last,
            "elapsed_ms": took.as_millis() as u64,
            "state": view(n, &h),
        });
        if let Ok(e) = Event::default().event("done").json_data(done) {
            let _ = tx.blocking_send(e);
        }
        drop(tx);
        let _ = finished.send(());
    });
    let stream = tokio_stream::wrappers::ReceiverStream::new(rx).map(Ok::<_, Infallible>);
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

/// A hint: the AI searches the position for `ms` and says what it thinks, without playing.
/// It holds the game's search slot like an AI turn (one search per game; DELETE stops it).
async fn hint(
    State(state): State<Arc<AppState>>,
    Owned(_, h): Owned,
    query: Result<Query<AiQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let Query(q) = query.map_err(|e| ApiError::BadRequest(e.body_text()))?;
    let ms = check_ms(&state, q.ms.unwrap_or(h.ai_ms.load(Ordering::Relaxed)))?;
    let (guard, stop) = claim_search(&h)?;
    let (job, at) = {
        let t = h.table.lock().expect("not poisoned");
        (t.hint_job(Duration::from_millis(ms), stop.clone())?, t.ply())
    };
    *h.stop.lock().expect("not poisoned") = Some(stop);
    let mut v = tokio::task::spawn_blocking(move || {
        let v = job();
        guard.release_stop();
        v
    })
    .await
    .map_err(|e| ApiError::BadRequest(format!("hint: {e}")))?;
    v["ply"] = json!(at);
    Ok(Json(v))
}

async fn arbitration(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let h = held(&state, &id)?;
    let t = h.table.lock().expect("not poisoned");
    match t.arbitration() {
        Some(v) => Ok(Json(v)),
        None if t.kind().pack().arbitration => Err(ApiError::Conflict(
            "arbitration is asked at the start of a turn, after the opening and before the game ends".into(),
        )),
        None => Err(ApiError::BadRequest(format!("{} has no arbitration", t.kind().name()))),
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReplayQuery {
    at: Option<usize>,
}

fn replay_of<G: Served>(token: &str, defaults: &G::Options, at: Option<usize>) -> Result<Value, ApiError> {
    let r = replay::decode::<G>(token, defaults).map_err(ApiError::BadRequest)?;
    let at = at.unwrap_or(r.actions.len());
    if at > r.actions.len() {
        return Err(ApiError::BadRequest(format!("at={at}: the replay has {} clicks", r.actions.len())));
    }
    // The plies a person can stop at: a player to move or the end, never between a flip and
    // the reveal it causes (a chance node).
    let mut s = <G as engine::game::Game>::new_game(&r.options);
    let mut stops = vec![0];
    let mut at_state = (at == 0).then(|| s.clone());
    for (i, a) in r.actions.iter().enumerate() {
        engine::game::Game::play_unchecked(&mut s, *a);
        if i + 1 == at {
            at_state = Some(s.clone());
        }
        if engine::game::Game::to_move(&s) != engine::game::Actor::Chance {
            stops.push(i + 1);
        }
    }
    let s = at_state.expect("at is checked against the clicks");
    Ok(json!({
        "stops": stops,
        "game": GameKind::of::<G>(),
        "options": G::options_json(&r.options),
        "seed": r.seed.to_string(),
        "actions": r.actions.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
        "at": at,
        "state": state_view(&s),
    }))
}

async fn replay_info(
    State(state): State<Arc<AppState>>,
    Path(token): Path<String>,
    query: Result<Query<ReplayQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let Query(q) = query.map_err(|e| ApiError::BadRequest(e.body_text()))?;
    let kind = replay::kind_of(&token).map_err(ApiError::BadRequest)?;
    let st = state.clone();
    let v = tokio::task::spawn_blocking(move || {
        engine::with_game!(kind, |G| replay_of::<G>(&token, &crate::hosted::defaults::<G>(&st.cfg), q.at))
    })
    .await
    .map_err(|e| ApiError::BadRequest(format!("replay: {e}")))??;
    Ok(Json(v))
}
