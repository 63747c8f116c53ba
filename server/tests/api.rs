//! The play server's API over real HTTP: a server on port 0, every endpoint and every error.

use std::net::SocketAddr;
use std::time::Duration;

use engine::GameKind;
use serde_json::{Value, json};
use zeroplay_server::{ServeConfig, client};

struct Server {
    addr: SocketAddr,
    /// The player every request goes through (it keeps its games' secrets).
    me: client::Player,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    fn start(cfg: ServeConfig) -> Server {
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let (atx, arx) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            let rt =
                tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                atx.send(listener.local_addr().unwrap()).unwrap();
                zeroplay_server::run(cfg, listener, async move {
                    let _ = rx.await;
                })
                .await
                .unwrap();
            });
        });
        let addr = arx.recv_timeout(Duration::from_secs(30)).unwrap();
        Server { addr, me: client::Player::new(addr), stop: Some(tx), thread: Some(thread) }
    }

    /// One request; returns (status, headers, body).
    fn raw(&self, method: &str, path: &str, body: Option<&[u8]>, ctype: &str) -> (u16, String, Vec<u8>) {
        let r = self.me.request(method, path, body, ctype).unwrap();
        (r.status, r.head, r.body)
    }

    fn call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let b = body.map(|v| v.to_string().into_bytes());
        let (st, _, out) = self.raw(method, path, b.as_deref(), "application/json");
        let v = if out.is_empty() { Value::Null } else { serde_json::from_slice(&out).expect("a JSON body") };
        (st, v)
    }

    fn ok(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let (st, v) = self.call(method, path, body);
        assert!((200..300).contains(&st), "{method} {path}: {st} {v}");
        v
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.stop.take().unwrap().send(());
        self.thread.take().unwrap().join().unwrap();
    }
}

/// Server-sent events of a body: (event, data).
fn events(body: &[u8]) -> Vec<(String, Value)> {
    client::Response { status: 200, head: String::new(), body: body.to_vec() }.events()
}

fn quick() -> ServeConfig {
    ServeConfig {
        default_ai_ms: 100,
        max_ai_ms: 2000,
        max_games_per_client: 4,
        max_games: 6,
        ..Default::default()
    }
}

fn legal(v: &Value) -> Vec<String> {
    v["legal"].as_array().unwrap().iter().map(|l| l["action"].as_str().unwrap().to_string()).collect()
}

#[test]
fn a_battle_number_game_against_the_ai_with_undo_redo_and_replay() {
    let s = Server::start(quick());
    let page = s.raw("GET", "/", None, "text/plain");
    assert_eq!(page.0, 200);
    assert!(String::from_utf8_lossy(&page.2).contains("/app.js"));
    assert_eq!(s.raw("GET", "/app.js", None, "text/plain").0, 200);
    assert_eq!(s.raw("GET", "/style.css", None, "text/plain").0, 200);
    let rules = s.raw("GET", "/rules?game=trigolden", None, "text/plain");
    assert_eq!(rules.0, 200);
    let rules = String::from_utf8_lossy(&rules.2);
    assert!(
        rules.contains("id=\"trigolden\"")
            && rules.contains("頂鑫結構")
            && rules.contains("bracing structure")
    );
    let info = s.ok("GET", "/api/info", None);
    assert_eq!(info["model_version"], 0);

    let v =
        s.ok("POST", "/api/games", Some(json!({"game": "battlenumber", "ai_seat": "second", "seed": 11})));
    let id = v["id"].as_str().unwrap().to_string();
    assert_eq!(v["to_move"], "first");
    assert_eq!(legal(&v), vec!["d3"], "the first move is the centre");
    assert_eq!(s.ok("GET", &format!("/api/games/{id}"), None)["ply"], 0);

    // Our turn: square, then a piece.
    let v = s.ok("POST", &format!("/api/games/{id}/click"), Some(json!({"action": "d3"})));
    assert_eq!(v["board"]["pending_square"], 24);
    let piece = legal(&v)[0].clone();
    let v = s.ok("POST", &format!("/api/games/{id}/click"), Some(json!({"action": piece})));
    assert_eq!(v["to_move"], "second");
    // The AI's turn: clicks are refused until it has moved.
    let (st, e) = s.call("POST", &format!("/api/games/{id}/click"), Some(json!({"action": legal(&v)[0]})));
    assert_eq!(st, 409, "{e}");
    let (st, _, body) = s.raw("POST", &format!("/api/games/{id}/ai?ms=300"), None, "text/plain");
    assert_eq!(st, 200);
    let evs = events(&body);
    assert!(evs.iter().any(|(e, _)| e == "progress"), "progress events are streamed");
    let (last, done) = evs.last().unwrap();
    assert_eq!(last, "done");
    assert_eq!(done["applied"], true);
    assert_eq!(done["clicks"].as_array().unwrap().len(), 2, "a whole placement turn");
    assert!(done["search"]["sims"].as_u64().unwrap() > 0);
    let v = done["state"].clone();
    assert_eq!(v["to_move"], "first");
    assert_eq!(v["ply"], 4);
    assert_eq!(v["last_turn"], json!([2, 4]));

    // Undo takes back the AI's turn and ours; redo brings both back.
    let u = s.ok("POST", &format!("/api/games/{id}/undo"), None);
    assert_eq!(u["ply"], 0);
    assert_eq!(u["can_redo"], true);
    let (st, _) = s.call("POST", &format!("/api/games/{id}/undo"), None);
    assert_eq!(st, 409, "nothing left to undo");
    let r = s.ok("POST", &format!("/api/games/{id}/redo"), None);
    assert_eq!(r["ply"], 4);
    assert_eq!(r["board"], v["board"]);
    let (st, _) = s.call("POST", &format!("/api/games/{id}/redo"), None);
    assert_eq!(st, 409);

    // The replay link reproduces the game, click for click, and can be taken over.
    let token = r["replay"].as_str().unwrap().to_string();
    let rep = s.ok("GET", &format!("/api/replay/{token}"), None);
    assert_eq!(rep["actions"], r["history"]);
    assert_eq!(rep["state"]["board"], r["board"]);
    assert_eq!(rep["seed"], "11");
    let mid = s.ok("GET", &format!("/api/replay/{token}?at=2"), None);
    assert_eq!(mid["state"]["to_move"], "second");
    let (st, _) = s.call("GET", &format!("/api/replay/{token}?at=99"), None);
    assert_eq!(st, 400);
    let taken = s.ok("POST", "/api/games", Some(json!({"replay": token, "at": 2, "ai_seat": "none"})));
    assert_eq!(taken["ply"], 2);
    assert_eq!(taken["to_move"], "second");

    // The SVG download.
    let (st, head, svg) = s.raw("GET", &format!("/api/games/{id}/board.svg"), None, "text/plain");
    assert_eq!(st, 200);
    assert!(head.contains("image/svg+xml"));
    assert!(head.contains("filename=\"BattleNumber_"), "{head}");
    assert!(svg.starts_with(b"<svg"));

    let info = s.ok("GET", "/api/info", None);
    assert_eq!(info["ai"]["turns"], 1);
    assert_eq!(info["games_held"], 2);
    // The same counts for Prometheus, and the health endpoints.
    let (st, head, m) = s.raw("GET", "/metrics", None, "text/plain");
    assert_eq!(st, 200);
    assert!(head.contains("application/openmetrics-text"), "{head}");
    let m = String::from_utf8(m).unwrap();
    let sample = |k: &str| zeroplay_telemetry::sample(&m, k).unwrap_or_else(|| panic!("no {k} in\n{m}"));
    assert_eq!(sample("zeroplay_serve_ai_turns_total"), 1.0);
    assert_eq!(sample("zeroplay_serve_games_held"), 2.0);
    assert_eq!(sample("zeroplay_serve_games_created_total"), 2.0);
    assert_eq!(sample("zeroplay_serve_ai_simulations_total"), info["ai"]["simulations"].as_f64().unwrap());
    // Every hosted game has its model version, TriGolden's too (it was missing once); Banqi
    // plays with its built-in model (version 1) without a model file.
    for (game, version) in [("battlenumber", 0), ("trigolden", 0), ("banqi", 1)] {
        assert_eq!(
            sample(&format!("zeroplay_serve_model_version{{game=\"{game}\"}}")),
            version as f64,
            "{game}"
        );
        assert_eq!(info["model_versions"][game], version, "{info}");
        assert!(info["agents"][game].is_string(), "{info}");
    }
    // The page names its own board downloads as the server names its renders.
    assert_eq!(info["boards"]["trigolden"]["svg_name"], "BraceTheTriGolden", "{info}");
    assert_eq!(s.raw("GET", "/healthz", None, "text/plain").0, 200);
    assert_eq!(s.raw("GET", "/readyz", None, "text/plain").0, 200);
    assert_eq!(s.call("DELETE", &format!("/api/games/{id}"), None).0, 204);
    assert_eq!(s.call("GET", &format!("/api/games/{id}"), None).0, 404);
}

#[test]
fn a_trigolden_game_offers_ghosts_and_checks_every_click() {
    let s = Server::start(quick());
    let v = s.ok(
        "POST",
        "/api/games",
        Some(json!({"game": "trigolden", "ai_seat": "none", "options": {"scoring": "same-owner"}})),
    );
    let id = v["id"].as_str().unwrap().to_string();
    assert_eq!(v["options"]["scoring"], "same-owner");
    // Opening: one ghost per shape and mirror, with its polygon.
    let opens = v["legal"].as_array().unwrap();
    assert_eq!(opens.len(), 6);
    assert_eq!(opens[0]["points"].as_array().unwrap().len(), 4);
    let v = s.ok("POST", &format!("/api/games/{id}/click"), Some(json!({"action": opens[0]["action"]})));
    assert_eq!(v["board"]["pieces"].as_array().unwrap().len(), 1);
    // Second seat: two pieces on the opening piece; every ghost names its target.
    let first = v["legal"].as_array().unwrap()[0].clone();
    assert_eq!(first["target"], 0);
    let v = s.ok("POST", &format!("/api/games/{id}/click"), Some(json!({"action": first["action"]})));
    assert_eq!(v["turn_start"], false);
    let v = s.ok("POST", &format!("/api/games/{id}/click"), Some(json!({"action": legal(&v)[0]})));
    assert_eq!(v["turn_start"], true);
    assert_eq!(v["last_turn"], json!([1, 3]));
    // The AI (the user's own, trigolden-user) plays a whole turn on request.
    let (st, _, body) = s.raw("POST", &format!("/api/games/{id}/ai?ms=200"), None, "text/plain");
    assert_eq!(st, 200);
    let (_, done) = events(&body).pop().unwrap();
    assert_eq!(done["applied"], true);
    assert_eq!(done["state"]["board"]["pieces"].as_array().unwrap().len(), 5);
    let (st, head, _) = s.raw("GET", &format!("/api/games/{id}/board.svg"), None, "text/plain");
    assert_eq!(st, 200);
    assert!(head.contains("filename=\"BraceTheTriGolden_"), "{head}");
    // Replay of a TriGolden game.
    let token = done["state"]["replay"].as_str().unwrap().to_string();
    let rep = s.ok("GET", &format!("/api/replay/{token}"), None);
    assert_eq!(rep["game"], "trigolden");
    assert_eq!(rep["options"]["scoring"], "same-owner");
    assert_eq!(rep["state"]["board"], done["state"]["board"]);
}

#[test]
fn bad_requests_get_clear_errors_and_change_nothing() {
    let s = Server::start(ServeConfig { max_body_bytes: 1024, ..quick() });
    let v = s.ok("POST", "/api/games", Some(json!({"game": "battlenumber", "ai_seat": "none"})));
    let id = v["id"].as_str().unwrap().to_string();
    let before = s.ok("GET", &format!("/api/games/{id}"), None);
    let click =
        |body: &[u8]| s.raw("POST", &format!("/api/games/{id}/click"), Some(body), "application/json");
    let err = |r: (u16, String, Vec<u8>)| -> (u16, String) {
        let v: Value = serde_json::from_slice(&r.2).unwrap_or(Value::Null);
        (r.0, v["error"].as_str().unwrap_or("").to_string())
    };
    // Malformed JSON, wrong fields, unknown action text, an illegal click, a long body.
    for (body, status, says) in [
        (&b"{not json"[..], 400, "JSON"),
        (&br#"{"act": "d3"}"#[..], 400, "action"),
        (&br#"{"action": "zz9"}"#[..], 400, "zz9"),
        (&br#"{"action": "a0"}"#[..], 422, "a0"),
    ] {
        let (st, msg) = err(click(body));
        assert_eq!(st, status, "{}: {msg}", String::from_utf8_lossy(body));
        assert!(msg.contains(says), "{msg:?} should mention {says}");
    }
    let big = format!(r#"{{"action": "{}"}}"#, "x".repeat(4000));
    assert_eq!(click(big.as_bytes()).0, 413);
    assert_eq!(s.ok("GET", &format!("/api/games/{id}"), None), before, "the game is unchanged");

    // New games: bad kind, options, seat, AI time; a bad replay token.
    for (body, says) in [
        (json!({}), "name a game"),
        // (The tests' toy game, when registered, is listed after these.)
        (json!({"game": "chess"}), "unknown game \"chess\" (known: battlenumber, trigolden, banqi"),
        (json!({"game": "battlenumber", "options": {"hole-rule": "nope"}}), "options"),
        (json!({"game": "trigolden", "options": {"scoring": "most"}}), "scoring"),
        (json!({"game": "trigolden", "options": {"komi": 1}}), "komi"),
        (json!({"game": "battlenumber", "ai_seat": "left"}), "ai_seat"),
        (json!({"game": "battlenumber", "ai_ms": 999999}), "ai_ms"),
        (json!({"replay": "AAAA"}), "token"),
        (json!({"game": "battlenumber", "at": 3}), "replay"),
    ] {
        let (st, v) = s.call("POST", "/api/games", Some(body.clone()));
        assert_eq!(st, 400, "{body}: {v}");
        assert!(v["error"].as_str().unwrap().contains(says), "{body}: {v}");
    }
    // Unknown games and pages.
    assert_eq!(s.call("GET", "/api/games/zzz", None).0, 404);
    assert_eq!(s.call("GET", "/api/games/123abc", None).0, 404);
    assert_eq!(s.call("POST", "/api/games/123abc/undo", None).0, 404);
    assert_eq!(s.call("GET", "/api/nothing", None).0, 404);
    assert_eq!(s.call("GET", "/api/replay/@@@", None).0, 400);
    // AI time out of bounds.
    let (st, _, _) = s.raw("POST", &format!("/api/games/{id}/ai?ms=0"), None, "text/plain");
    assert_eq!(st, 400);
    let (st, _, _) = s.raw("POST", &format!("/api/games/{id}/ai?ms=5000"), None, "text/plain");
    assert_eq!(st, 400);

    // Limits: games per client (4 here; one held already), then the game over error.
    for _ in 0..3 {
        s.ok("POST", "/api/games", Some(json!({"game": "battlenumber"})));
    }
    let (st, v) = s.call("POST", "/api/games", Some(json!({"game": "battlenumber"})));
    assert_eq!(st, 429, "{v}");
    assert!(v["error"].as_str().unwrap().contains("limit"));
}

#[test]
fn a_finished_game_refuses_more_moves() {
    let s = Server::start(quick());
    let v = s.ok("POST", "/api/games", Some(json!({"game": "battlenumber", "ai_seat": "none", "seed": 3})));
    let id = v["id"].as_str().unwrap().to_string();
    // Click the first legal action until the game ends.
    let mut v = v;
    let mut clicks = 0;
    while v["outcome"].is_null() {
        let a = legal(&v)[0].clone();
        v = s.ok("POST", &format!("/api/games/{id}/click"), Some(json!({"action": a})));
        clicks += 1;
        assert!(clicks < 400);
    }
    assert!(v["legal"].as_array().unwrap().is_empty());
    let (st, e) = s.call("POST", &format!("/api/games/{id}/click"), Some(json!({"action": "d3"})));
    assert_eq!(st, 409, "{e}");
    let (st, _, _) = s.raw("POST", &format!("/api/games/{id}/ai"), None, "text/plain");
    assert_eq!(st, 409);
    // Its replay reproduces the end exactly.
    let rep = s.ok("GET", &format!("/api/replay/{}", v["replay"].as_str().unwrap()), None);
    assert_eq!(rep["state"]["outcome"], v["outcome"]);
    assert_eq!(rep["state"]["board"], v["board"]);
}

#[test]
fn a_model_file_is_served_and_a_bad_one_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("junk.safetensors");
    std::fs::write(&bad, b"not a model").unwrap();
    let err = refused_at_start(quick().with_model(GameKind::BattleNumber, bad.clone()));
    assert!(err.contains("junk.safetensors"), "{err}");
    // A well-formed model whose weights hold a NaN is refused too, naming why.
    let nan = dir.path().join("nan.safetensors");
    std::fs::write(&nan, poisoned(&model_bytes())).unwrap();
    let err = refused_at_start(quick().with_model(GameKind::BattleNumber, nan.clone()));
    assert!(err.contains("non-finite"), "{err}");
    let bad_cfg = ServeConfig {
        leaf: engine::LeafSettings { lambda: 2.0, ..engine::LeafSettings::served() },
        ..quick()
    };
    assert!(bad_cfg.validate().unwrap_err().contains("leaf.lambda"));
    let bad_cfg = ServeConfig { leaf: engine::LeafSettings::rollout(), ..quick() };
    assert!(bad_cfg.validate().unwrap_err().contains("leaf.evaluator"));
}

/// The error of a server that refuses to start with `cfg`.
fn refused_at_start(cfg: ServeConfig) -> String {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        zeroplay_server::run(cfg, l, async {}).await
    })
    .unwrap_err()
    .to_string()
}

/// `bytes` (a model file) with its first weight replaced by NaN.
fn poisoned(bytes: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let head = u64::from_le_bytes(out[..8].try_into().unwrap()) as usize;
    out[8 + head..8 + head + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    out
}

fn model_bytes() -> Vec<u8> {
    tiny_model::<engine::battlenumber::BattleNumber>(10.0)
}

/// A fresh `tiny` model file of game `G` with this score scale.
fn tiny_model<G: engine::Features>(score_scale: f32) -> Vec<u8> {
    let cfg = model::NetConfig::named("tiny").unwrap();
    let net = model::ValueNet::new(&cfg, G::FEATURE_LEN, G::POLICY_LEN, &model::cpu());
    let meta = model::ModelMeta::for_game::<G>(cfg, score_scale, model::ModelInfo::default());
    model::to_bytes(&net, &meta).unwrap()
}

/// Writes `bytes` to `path` the way a trainer publishes: to a side file, then renamed in.
fn publish(path: &std::path::Path, bytes: &[u8]) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

#[test]
fn a_model_file_is_hot_reloaded_and_a_corrupt_replacement_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("best.safetensors");
    publish(&path, &model_bytes());
    let s = Server::start(
        ServeConfig { model_poll_ms: 50, ..quick() }.with_model(GameKind::BattleNumber, path.clone()),
    );
    assert_eq!(s.ok("GET", "/api/info", None)["model_version"], 1);
    // The AI searches with the network: the game records the model version.
    let v = s.ok("POST", "/api/games", Some(json!({"game": "battlenumber", "ai_seat": "first"})));
    let id = v["id"].as_str().unwrap().to_string();
    let (st, _, body) = s.raw("POST", &format!("/api/games/{id}/ai?ms=200"), None, "text/plain");
    assert_eq!(st, 200);
    let (_, done) = events(&body).pop().unwrap();
    assert_eq!(done["state"]["model_version"], 1);
    assert!(done["search"]["sims"].as_u64().unwrap() > 0);
    let wait_for = |want: u64| {
        for _ in 0..100 {
            if s.ok("GET", "/api/info", None)["model_version"] == want {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    };
    // A corrupt file is refused and the model kept, and so is one with a NaN weight ...
    publish(&path, b"not a model at all");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(s.ok("GET", "/api/info", None)["model_version"], 1);
    publish(&path, &poisoned(&model_bytes()));
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(s.ok("GET", "/api/info", None)["model_version"], 1);
    // ... and the next good one is loaded.
    std::thread::sleep(Duration::from_millis(20));
    publish(&path, &model_bytes());
    assert!(wait_for(2), "the new model file was not picked up");
}

#[test]
fn a_model_file_from_a_trainer_run_is_served_under_its_trainer_version() {
    // <run>/models/best.safetensors with <run>/ratings.json, as the trainer lays them out.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("models")).unwrap();
    let path = dir.path().join("models/best.safetensors");
    let bytes = |steps: u64| {
        use engine::Features;
        use engine::battlenumber::BattleNumber;
        let cfg = model::NetConfig::named("tiny").unwrap();
        let net =
            model::ValueNet::new(&cfg, BattleNumber::FEATURE_LEN, BattleNumber::POLICY_LEN, &model::cpu());
        let info = model::ModelInfo { steps, ..Default::default() };
        model::to_bytes(&net, &model::ModelMeta::for_game::<BattleNumber>(cfg, 10.0, info)).unwrap()
    };
    let (v74, v75) = (bytes(74), bytes(75));
    let entry = |v: u64, b: &[u8]| json!({"version": v, "sha256": model::sha256_hex(b), "promoted": true});
    let ratings = json!([entry(73, b"other"), entry(74, &v74), entry(75, &v75)]);
    std::fs::write(dir.path().join("ratings.json"), ratings.to_string()).unwrap();
    publish(&path, &v74);
    let s = Server::start(
        ServeConfig { model_poll_ms: 50, ..quick() }.with_model(GameKind::BattleNumber, path.clone()),
    );
    assert_eq!(s.ok("GET", "/api/info", None)["model_version"], 74, "not a reload counter");
    std::thread::sleep(Duration::from_millis(20));
    publish(&path, &v75);
    let mut seen = 0;
    for _ in 0..100 {
        seen = s.ok("GET", "/api/info", None)["model_version"].as_u64().unwrap();
        if seen == 75 {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(seen, 75, "the promoted successor is served under its own version");
}

#[test]
fn a_banqi_game_with_flips_resolved_by_the_hidden_deal_undo_and_replay() {
    let s = Server::start(quick());
    let v = s.ok("POST", "/api/games", Some(json!({"game": "banqi", "ai_seat": "second", "seed": 5})));
    let id = v["id"].as_str().unwrap().to_string();
    assert_eq!(legal(&v).len(), 32, "only flips at the start");
    assert!(v["board"]["squares"].as_array().unwrap().iter().all(|c| c == "X"));
    assert_eq!(v["board"]["colours"], json!([null, null]));
    // Our flip is resolved at once: a piece appears, colours are set, the AI is to move.
    let v = s.ok("POST", &format!("/api/games/{id}/click"), Some(json!({"action": "d1d1"})));
    let revealed = v["board"]["squares"][11].as_str().unwrap().to_string();
    assert_ne!(revealed, "X");
    assert_eq!(v["history"].as_array().unwrap().len(), 2, "the flip and its reveal");
    assert_eq!(v["history"][1], format!("={revealed}"));
    assert_eq!(v["to_move"], "second");
    assert!(v["board"]["colours"][0].is_string());
    // Nothing under a face-down square is ever sent.
    let text = v.to_string();
    assert_eq!(text.matches("\"X\"").count(), 31);
    // The AI answers with one move (a flip is resolved too).
    let (st, _, body) = s.raw("POST", &format!("/api/games/{id}/ai?ms=200"), None, "text/plain");
    assert_eq!(st, 200);
    let evs = events(&body);
    let (last, done) = evs.last().unwrap();
    assert_eq!(last, "done", "{evs:?}");
    assert_eq!(done["clicks"].as_array().unwrap().len(), 1);
    let v = done["state"].clone();
    assert_eq!(v["to_move"], "first");
    let after_ai = v["ply"].as_u64().unwrap();
    assert!(after_ai >= 3);
    // An illegal move and a reveal typed by a client are refused.
    let (st, _) = s.call("POST", &format!("/api/games/{id}/click"), Some(json!({"action": "a0a3"})));
    assert_eq!(st, 422);
    let (st, _) = s.call("POST", &format!("/api/games/{id}/click"), Some(json!({"action": "=G"})));
    assert_eq!(st, 422);
    // Undo takes back the AI's move and ours; redo brings back the same pieces.
    let v = s.ok("POST", &format!("/api/games/{id}/undo"), None);
    assert_eq!(v["ply"], 0);
    let v = s.ok("POST", &format!("/api/games/{id}/redo"), None);
    assert_eq!(v["board"]["squares"][11], revealed.as_str());
    // The replay link reproduces the board, reveals included.
    let token = v["replay"].as_str().unwrap().to_string();
    let r = s.ok("GET", &format!("/api/replay/{token}"), None);
    assert_eq!(r["state"]["board"]["squares"][11], revealed.as_str());
    // The SVG download is named for the game, captioned in the page's language with the
    // reader's local time, and wide enough for its caption.
    let (st, head, svg) = s.raw("GET", &format!("/api/games/{id}/board.svg"), None, "text/plain");
    assert_eq!(st, 200);
    assert!(head.contains("Banqi_"), "{head}");
    let svg = String::from_utf8_lossy(&svg).to_string();
    assert!(svg.starts_with("<svg") && svg.contains("Banqi · ") && svg.contains("(UTC+0:00)"), "{svg}");
    assert!(svg.contains("First to move") && !svg.contains("player 1"), "{svg}");
    let width: f64 = svg.split("width=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
    for line in svg.split("<text").skip(1).filter(|t| t.contains("font-size=\"16\"")) {
        let text = line.split('>').nth(1).unwrap().split('<').next().unwrap();
        assert!(engine::caption::width(text) <= width, "{text:?} is wider than the picture ({width})");
    }
    let (st, head, zh) =
        s.raw("GET", &format!("/api/games/{id}/board.svg?lang=zh&tz=-300"), None, "text/plain");
    let zh = String::from_utf8_lossy(&zh).to_string();
    assert_eq!(st, 200);
    assert!(zh.contains("暗棋 · ") && zh.contains("輪到先手") && zh.contains("(UTC-5:00)"), "{zh}");
    assert!(head.contains("Banqi_"), "{head}");
    for bad in ["lang=fr", "tz=900", "tz=x", "colour=1"] {
        let (st, _) = s.call("GET", &format!("/api/games/{id}/board.svg?{bad}"), None);
        assert_eq!(st, 400, "{bad}");
    }
    // Banqi has no options.
    let (st, e) = s.call("POST", "/api/games", Some(json!({"game": "banqi", "options": {"x": 1}})));
    assert_eq!(st, 400, "{e}");
}

/// Without a model file, Banqi's AI is `banqi-ab` with the built-in model at its leaves;
/// `builtin = false` leaves the handcrafted evaluation.
#[test]
fn banqi_plays_its_built_in_model_unless_told_not_to() {
    for (builtin, version, agent) in [(true, 1, "model=served"), (false, 0, "banqi-ab:time=")] {
        let mut cfg = quick();
        cfg.games.entry(GameKind::Banqi).or_default().builtin = builtin;
        let s = Server::start(cfg);
        let info = s.ok("GET", "/api/info", None);
        assert_eq!(info["model_versions"]["banqi"], version, "builtin = {builtin}: {info}");
        let (source, sha) = (&info["model_sources"]["banqi"], &info["model_sha256"]["banqi"]);
        assert_eq!(source.as_str(), builtin.then_some("builtin"), "{info}");
        let built_in = model::builtin::bytes(GameKind::Banqi).unwrap();
        assert_eq!(sha.as_str().map(String::from), builtin.then(|| model::sha256_hex(built_in)), "{info}");
        let name = info["agents"]["banqi"].as_str().unwrap();
        assert!(name.starts_with("banqi-ab:") && name.contains(agent), "builtin = {builtin}: {name}");
        assert_eq!(name.contains("model="), builtin, "{name}");
        let v = s.ok("POST", "/api/games", Some(json!({"game": "banqi", "ai_seat": "first", "seed": 4})));
        assert_eq!(v["model_version"], version);
        let id = v["id"].as_str().unwrap().to_string();
        let (st, _, body) = s.raw("POST", &format!("/api/games/{id}/ai?ms=100"), None, "text/plain");
        assert_eq!(st, 200);
        assert_eq!(events(&body).pop().unwrap().1["applied"], true);
    }
}

#[test]
fn a_banqi_model_file_plays_banqi() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("banqi.safetensors");
    std::fs::write(&path, tiny_model::<engine::banqi::Banqi>(10.0)).unwrap();
    // A Battle Number model is no Banqi model: refused at start, naming the file.
    let bn = dir.path().join("bn.safetensors");
    std::fs::write(&bn, model_bytes()).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let err = rt
        .block_on(async {
            let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            zeroplay_server::run(quick().with_model(GameKind::Banqi, bn.clone()), l, async {}).await
        })
        .unwrap_err();
    assert!(err.to_string().contains("bn.safetensors"), "{err}");

    let s = Server::start(quick().with_model(GameKind::Banqi, path));
    assert_eq!(s.ok("GET", "/api/info", None)["model_versions"]["banqi"], 1);
    let v = s.ok("POST", "/api/games", Some(json!({"game": "banqi", "ai_seat": "first", "seed": 9})));
    assert_eq!(v["model_version"], 1);
    let id = v["id"].as_str().unwrap().to_string();
    let (st, _, body) = s.raw("POST", &format!("/api/games/{id}/ai?ms=200"), None, "text/plain");
    assert_eq!(st, 200);
    let evs = events(&body);
    let (last, done) = evs.last().unwrap();
    assert_eq!(last, "done", "{evs:?}");
    assert_eq!(done["applied"], true);
    assert!(done["search"]["sims"].as_u64().unwrap() > 0);
    // The Battle Number AI has no model: the two games' models are kept apart.
    let v = s.ok("POST", "/api/games", Some(json!({"game": "battlenumber"})));
    assert_eq!(v["model_version"], 0);
}

/// A request over a raw connection, for what `client::request` cannot say (extra headers, a
/// client that leaves): returns the response head, lower-cased, and its body bytes.
fn raw_http(addr: SocketAddr, request: &str) -> (String, Vec<u8>) {
    use std::io::{Read, Write};
    let mut conn = std::net::TcpStream::connect(addr).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    conn.write_all(request.as_bytes()).unwrap();
    let mut all = Vec::new();
    conn.read_to_end(&mut all).unwrap();
    let split = all.windows(4).position(|w| w == b"\r\n\r\n").expect("a response head") + 4;
    (String::from_utf8_lossy(&all[..split]).to_lowercase(), all[split..].to_vec())
}

/// A Banqi game whose AI (MCTS with random playouts: it always uses its whole time) moves
/// first: an AI request for it thinks for as long as it is given.
fn banqi_ai_first(s: &Server) -> String {
    let v = s.ok("POST", "/api/games", Some(json!({"game": "banqi", "ai_seat": "first", "seed": 5})));
    v["id"].as_str().unwrap().to_string()
}

fn long_thinking() -> ServeConfig {
    let mut cfg = ServeConfig { max_ai_ms: 10_000, ..quick() }.with_agent(GameKind::Banqi, "net");
    // Random playouts, not the built-in model, as the AI's description says.
    cfg.games.entry(GameKind::Banqi).or_default().builtin = false;
    cfg
}

#[test]
fn a_search_stops_when_its_game_is_deleted_or_its_client_leaves() {
    let s = Server::start(long_thinking());
    // Deleted while thinking: the 10 s search answers within a second or two, unapplied.
    let id = banqi_ai_first(&s);
    let me = s.me.clone();
    let path = format!("/api/games/{id}/ai?ms=10000");
    let t0 = std::time::Instant::now();
    let search = std::thread::spawn(move || me.request("POST", &path, None, "text/plain").unwrap());
    std::thread::sleep(Duration::from_millis(500));
    let (st, _) = s.call("DELETE", &format!("/api/games/{id}"), None);
    assert_eq!(st, 204);
    let r = search.join().unwrap();
    assert!(t0.elapsed() < Duration::from_secs(5), "the search ran on for {:?}", t0.elapsed());
    let evs = r.events();
    let (last, done) = evs.last().unwrap();
    assert_eq!(last, "done", "{evs:?}");
    assert_eq!(done["applied"], false);

    // The client leaves (closes its connection) while the AI thinks: the search stops.
    let id = banqi_ai_first(&s);
    {
        use std::io::{Read, Write};
        let mut conn = std::net::TcpStream::connect(s.addr).unwrap();
        let secret = s.me.secret(&id).unwrap();
        let req = format!(
            "POST /api/games/{id}/ai?ms=10000 HTTP/1.1\r\nHost: x\r\nX-Game-Secret: {secret}\r\nContent-Length: 0\r\n\r\n"
        );
        conn.write_all(req.as_bytes()).unwrap();
        let mut head = [0u8; 64];
        let n = conn.read(&mut head).unwrap();
        assert!(String::from_utf8_lossy(&head[..n]).starts_with("HTTP/1.1 200"));
    }
    let t0 = std::time::Instant::now();
    loop {
        let v = s.ok("GET", &format!("/api/games/{id}"), None);
        if v["thinking"] == false {
            assert_eq!(v["ply"], 0, "a stopped search's move is not played");
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(5), "the search went on after its client left");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn settings_change_the_ai_seat_and_time_and_stop_a_thinking_ai() {
    let s = Server::start(long_thinking());
    let v =
        s.ok("POST", "/api/games", Some(json!({"game": "battlenumber", "ai_seat": "none", "ai_ms": 300})));
    let id = v["id"].as_str().unwrap().to_string();
    assert_eq!(v["ai_ms"], 300);
    assert_eq!(v["ai_seat"], Value::Null);
    let v = s.ok("POST", &format!("/api/games/{id}/settings"), Some(json!({"ai_ms": 50})));
    assert_eq!(v["ai_ms"], 50);
    let v = s.ok("POST", &format!("/api/games/{id}/settings"), Some(json!({"ai_seat": "first"})));
    assert_eq!(v["ai_seat"], "first");
    // The AI now plays the first seat, with the game's new time.
    let (st, _, body) = s.raw("POST", &format!("/api/games/{id}/ai"), None, "text/plain");
    assert_eq!(st, 200);
    let done = events(&body).pop().unwrap().1;
    assert_eq!(done["applied"], true);
    assert!(done["elapsed_ms"].as_u64().unwrap() < 2000, "{done}");
    for bad in [json!({"ai_ms": 0}), json!({"ai_ms": 20_000}), json!({"ai_seat": "third"}), json!({"who": 1})]
    {
        let (st, e) = s.call("POST", &format!("/api/games/{id}/settings"), Some(bad.clone()));
        assert_eq!(st, 400, "{bad}: {e}");
    }
    let (st, _) = s.call("POST", "/api/games/ffffffff/settings", Some(json!({"ai_ms": 5})));
    assert_eq!(st, 404);

    // Stopping a thinking AI: its seat becomes a person's and its move is dropped.
    let id = banqi_ai_first(&s);
    let me = s.me.clone();
    let path = format!("/api/games/{id}/ai?ms=10000");
    let t0 = std::time::Instant::now();
    let search = std::thread::spawn(move || me.request("POST", &path, None, "text/plain").unwrap());
    std::thread::sleep(Duration::from_millis(500));
    let v = s.ok("POST", &format!("/api/games/{id}/settings"), Some(json!({"ai_seat": "none"})));
    assert_eq!(v["ai_seat"], Value::Null);
    let done = search.join().unwrap().events().pop().unwrap().1;
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    assert_eq!(done["applied"], false);
    let v = s.ok("GET", &format!("/api/games/{id}"), None);
    assert_eq!((v["ply"].as_u64(), v["thinking"].as_bool()), (Some(0), Some(false)));
    // The person now moves for the first seat.
    let flip = legal(&v)[0].clone();
    s.ok("POST", &format!("/api/games/{id}/click"), Some(json!({"action": flip})));
}

#[test]
fn the_client_files_carry_etags_and_gzip_and_unknown_pages_get_a_page() {
    let s = Server::start(quick());
    let (st, head, js) = s.raw("GET", "/app.js", None, "text/plain");
    assert_eq!(st, 200);
    let head = head.to_lowercase();
    assert!(head.contains("cache-control: no-cache"), "{head}");
    let etag = head
        .lines()
        .find_map(|l| l.strip_prefix("etag: "))
        .unwrap_or_else(|| panic!("no ETag: {head}"))
        .trim()
        .to_string();
    // Revalidation: the same tag gives 304 and no body; another gives the file.
    let req = |tag: &str| {
        format!("GET /app.js HTTP/1.1\r\nHost: x\r\nIf-None-Match: {tag}\r\nConnection: close\r\n\r\n")
    };
    let (head304, body) = raw_http(s.addr, &req(&etag));
    assert!(head304.starts_with("http/1.1 304"), "{head304}");
    assert!(body.is_empty());
    let (head200, _) = raw_http(s.addr, &req("\"0000\""));
    assert!(head200.starts_with("http/1.1 200"), "{head200}");
    // gzip for clients that accept it, and the bytes inflate to the file.
    let (gz_head, gz) = raw_http(
        s.addr,
        "GET /app.js HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n",
    );
    assert!(gz_head.contains("content-encoding: gzip"), "{gz_head}");
    let body = if gz_head.contains("transfer-encoding: chunked") { dechunk(&gz) } else { gz };
    assert!(body.len() * 2 < js.len(), "gzip: {} of {} bytes", body.len(), js.len());
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&body[..]), &mut text).unwrap();
    assert_eq!(text.as_bytes(), &js[..]);
    // A wrong address: a page for people, JSON under /api/.
    let (st, head, page) = s.raw("GET", "/no/such/page", None, "text/plain");
    assert_eq!(st, 404);
    assert!(head.to_lowercase().contains("text/html"), "{head}");
    assert!(String::from_utf8_lossy(&page).contains("href=\"/\""));
    let (st, v) = s.call("GET", "/api/nothing", None);
    assert_eq!(st, 404);
    assert!(v["error"].as_str().unwrap().contains("/api/nothing"), "{v}");
}

/// The body of a chunked HTTP/1.1 response.
fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line = b.windows(2).position(|w| w == b"\r\n").unwrap();
        let n = usize::from_str_radix(std::str::from_utf8(&b[..line]).unwrap().trim(), 16).unwrap();
        b = &b[line + 2..];
        if n == 0 {
            return out;
        }
        out.extend_from_slice(&b[..n]);
        b = &b[n + 2..];
    }
}

#[test]
fn a_trigolden_model_file_plays_trigolden_and_info_names_every_game() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tg.safetensors");
    std::fs::write(&path, tiny_model::<engine::trigolden::TriGolden>(3.0)).unwrap();
    let s = Server::start(quick().with_model(GameKind::TriGolden, path));
    let info = s.ok("GET", "/api/info", None);
    assert_eq!(info["games"], json!(GameKind::NAMES));
    assert_eq!(GameKind::NAMES[..3], ["battlenumber", "trigolden", "banqi"]);
    assert_eq!(info["model_versions"]["trigolden"], 1);
    assert_eq!(info["model_version"], 0);
    let v = s.ok("POST", "/api/games", Some(json!({"game": "trigolden", "ai_seat": "first", "seed": 3})));
    assert_eq!(v["model_version"], 1);
    let id = v["id"].as_str().unwrap().to_string();
    let (st, _, body) = s.raw("POST", &format!("/api/games/{id}/ai?ms=150"), None, "text/plain");
    assert_eq!(st, 200);
    let done = events(&body).pop().unwrap().1;
    assert_eq!(done["applied"], true, "{done}");
    // The agent settings: the network needs "auto" or "net"; a network spec is refused.
    for (agent, ok) in
        [("auto", true), ("net", true), ("trigolden-lite", true), ("mcts:eval=net,model=x", false)]
    {
        let cfg = ServeConfig::default().with_agent(GameKind::TriGolden, agent);
        assert_eq!(cfg.validate().is_ok(), ok, "{agent}: {:?}", cfg.validate());
    }
}

#[test]
fn the_ai_plays_both_seats_and_undo_steps_back_one_turn() {
    let s = Server::start(quick());
    let v = s.ok("POST", "/api/games", Some(json!({"game": "battlenumber", "ai_seat": "both", "ai_ms": 30})));
    let id = v["id"].as_str().unwrap().to_string();
    assert_eq!((v["ai_seat"].as_str(), v["ai_seats"].clone()), (Some("both"), json!(["first", "second"])));
    // A person may not click for either seat.
    let (st, _) = s.call("POST", &format!("/api/games/{id}/click"), Some(json!({"action": legal(&v)[0]})));
    assert_eq!(st, 409);
    for _ in 0..3 {
        let (st, _, body) = s.raw("POST", &format!("/api/games/{id}/ai"), None, "text/plain");
        assert_eq!(st, 200);
        assert_eq!(events(&body).pop().unwrap().1["applied"], true);
    }
    let v = s.ok("GET", &format!("/api/games/{id}"), None);
    // Three turns, each with its seat and clicks, in the order played.
    let turns = v["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 3, "{}", v["turns"]);
    assert_eq!(
        turns.iter().map(|t| t["seat"].clone()).collect::<Vec<_>>(),
        [json!("first"), json!("second"), json!("first")]
    );
    let flat: Vec<Value> = turns.iter().flat_map(|t| t["clicks"].as_array().unwrap().clone()).collect();
    assert_eq!(Value::from(flat), v["history"]);
    // With no person seated, undo takes back one turn, whoever played it.
    let before = turns[2]["clicks"].as_array().unwrap().len() as u64;
    let ply = v["ply"].as_u64().unwrap();
    let u = s.ok("POST", &format!("/api/games/{id}/undo"), None);
    assert_eq!(u["ply"].as_u64().unwrap(), ply - before);
}

#[test]
fn a_hint_names_the_top_clicks_with_visit_shares_and_plays_nothing() {
    let s = Server::start(quick());
    let v = s.ok("POST", "/api/games", Some(json!({"game": "battlenumber", "ai_seat": "second", "seed": 3})));
    let id = v["id"].as_str().unwrap().to_string();
    // The opening square is forced: the hint names it, with no visit share.
    let h = s.ok("POST", &format!("/api/games/{id}/hint?ms=200"), None);
    assert_eq!(
        (h["top"][0]["action"].clone(), h["top"][0]["share"].clone()),
        (h["best"].clone(), Value::Null)
    );
    let v = s.ok("POST", &format!("/api/games/{id}/click"), Some(json!({"action": h["best"]})));
    let h = s.ok("POST", &format!("/api/games/{id}/hint?ms=200"), None);
    let top = h["top"].as_array().unwrap();
    assert!(!top.is_empty() && top.len() <= 3, "{h}");
    let shares: Vec<f64> = top.iter().map(|t| t["share"].as_f64().unwrap()).collect();
    assert!(shares.windows(2).all(|w| w[0] >= w[1]), "most visited first: {h}");
    assert!(shares.iter().sum::<f64>() <= 1.0 + 1e-9 && shares[0] > 0.0, "{h}");
    // Every named click is legal here, and the first is the best.
    let legal = legal(&v);
    assert!(top.iter().all(|t| legal.contains(&t["action"].as_str().unwrap().to_string())), "{h}");
    assert_eq!(top[0]["action"], h["best"]);
    let value = h["value"].as_f64().unwrap();
    assert!((-1.0..=1.0).contains(&value) && h["sims"].as_u64().unwrap() > 0, "{h}");
    // Nothing was played.
    let after = s.ok("GET", &format!("/api/games/{id}"), None);
    assert_eq!((after["ply"].clone(), after["thinking"].clone()), (json!(1), json!(false)));
    // Bad times and unknown games are refused.
    let (st, _) = s.call("POST", &format!("/api/games/{id}/hint?ms=0"), None);
    assert_eq!(st, 400);
    let (st, _) = s.call("POST", "/api/games/ffffff/hint", None);
    assert_eq!(st, 404);
}

#[test]
fn trigolden_arbitration_counts_the_legal_turns_and_replays_stop_only_where_a_player_moves() {
    let s = Server::start(quick());
    let v = s.ok("POST", "/api/games", Some(json!({"game": "trigolden", "ai_seat": "none", "seed": 1})));
    let id = v["id"].as_str().unwrap().to_string();
    // Not at the opening.
    let (st, e) = s.call("GET", &format!("/api/games/{id}/arbitration"), None);
    assert_eq!(st, 409, "{e}");
    let first = legal(&v)[0].clone();
    let v = s.ok("POST", &format!("/api/games/{id}/click"), Some(json!({"action": first})));
    let a = s.ok("GET", &format!("/api/games/{id}/arbitration"), None);
    assert_eq!((a["seat"].as_str(), a["obligation_met"].as_bool()), (Some("second"), Some(true)), "{a}");
    let n = a["legal_turns"].as_u64().unwrap();
    assert!(n > 0, "{a}");
    // The count is of complete turns: each first click has its pairs (a first click alone
    // is no turn).
    assert!(legal(&v).len() as u64 <= n, "{} clicks, {n} turns", legal(&v).len());
    let (st, _) = s.call("GET", &format!("/api/games/{id}/arbitration"), None);
    assert_eq!(st, 200);
    // Battle Number has none.
    let b = s.ok("POST", "/api/games", Some(json!({"game": "battlenumber", "ai_seat": "none"})));
    let (st, e) = s.call("GET", &format!("/api/games/{}/arbitration", b["id"].as_str().unwrap()), None);
    assert_eq!(st, 400, "{e}");

    // A Banqi replay stops at every ply but between a flip and its reveal.
    let q = s.ok("POST", "/api/games", Some(json!({"game": "banqi", "ai_seat": "none", "seed": 2})));
    let qid = q["id"].as_str().unwrap().to_string();
    let v = s.ok("POST", &format!("/api/games/{qid}/click"), Some(json!({"action": "d1d1"})));
    let v = s.ok("POST", &format!("/api/games/{qid}/click"), Some(json!({"action": legal(&v)[0]})));
    let r = s.ok("GET", &format!("/api/replay/{}?at=1", v["replay"].as_str().unwrap()), None);
    let n = r["actions"].as_array().unwrap().len() as u64;
    assert!(n >= 3, "{r}");
    let stops: Vec<u64> = r["stops"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect();
    assert_eq!(stops[..2], [0, 2], "{r}");
    assert!(!stops.contains(&1) && *stops.last().unwrap() == n, "{r}");
    // The state at a chance node is still served (a link may point there).
    assert_eq!(r["at"], 1);
}

#[test]
fn a_full_server_makes_room_by_dropping_a_game_nobody_played() {
    // Issue 24, finding 5: games created and never played no longer lock others out until
    // the idle timeout.
    let s =
        Server::start(ServeConfig { max_games: 2, max_games_per_client: 2, unplayed_idle_s: 1, ..quick() });
    let new = || s.call("POST", "/api/games", Some(json!({"game": "battlenumber", "ai_seat": "none"})));
    let (_, played) = new();
    let (_, idle) = new();
    let played = played["id"].as_str().unwrap().to_string();
    let idle = idle["id"].as_str().unwrap().to_string();
    s.ok("POST", &format!("/api/games/{played}/click"), Some(json!({"action": "d3"})));
    // Full, and the unplayed game has not been idle long enough: refused.
    let (st, e) = new();
    assert_eq!(st, 429, "{e}");
    std::thread::sleep(Duration::from_millis(1200));
    // Now the unplayed game makes room; the played one stays, however long it idles.
    let (st, fresh) = new();
    assert_eq!(st, 201, "{fresh}");
    assert_eq!(s.call("GET", &format!("/api/games/{idle}"), None).0, 404);
    assert_eq!(s.ok("GET", &format!("/api/games/{played}"), None)["ply"], 1);
    // The fresh game is not yet idle enough: full again.
    assert_eq!(new().0, 429);
}

#[test]
fn only_the_creator_changes_a_game_and_ids_cannot_be_guessed() {
    let s = Server::start(quick());
    let v = s.ok("POST", "/api/games", Some(json!({"game": "battlenumber", "ai_seat": "second"})));
    let id = v["id"].as_str().unwrap().to_string();
    let secret = v["secret"].as_str().unwrap().to_string();
    assert_eq!(secret.len(), 32, "128 bits in hex: {secret}");
    // Views of the game never show the secret.
    assert_eq!(s.ok("GET", &format!("/api/games/{id}"), None)["secret"], Value::Null);
    let other = s.ok("POST", "/api/games", Some(json!({"game": "battlenumber"})));
    let other_id = u64::from_str_radix(other["id"].as_str().unwrap(), 16).unwrap();
    let this_id = u64::from_str_radix(&id, 16).unwrap();
    assert!(this_id.abs_diff(other_id) > 1 << 20, "ids {this_id:x} and {other_id:x} are near each other");
    assert_ne!(other["secret"], v["secret"]);

    // A stranger (the same address, without the secret) may watch but change nothing.
    let stranger = client::Player::new(s.addr);
    assert_eq!(stranger.json("GET", &format!("/api/games/{id}"), None).unwrap().status, 200);
    assert_eq!(
        stranger.request("GET", &format!("/api/games/{id}/board.svg"), None, "text/plain").unwrap().status,
        200
    );
    let changes = [
        ("POST", format!("/api/games/{id}/click"), Some(json!({"action": "d3"}))),
        ("POST", format!("/api/games/{id}/undo"), None),
        ("POST", format!("/api/games/{id}/redo"), None),
        ("POST", format!("/api/games/{id}/ai?ms=50"), None),
        ("POST", format!("/api/games/{id}/hint?ms=50"), None),
        ("POST", format!("/api/games/{id}/settings"), Some(json!({"ai_seat": "none"}))),
        ("DELETE", format!("/api/games/{id}"), None),
    ];
    for (method, path, body) in &changes {
        let r = stranger.json(method, path, body.as_ref()).unwrap();
        assert_eq!(r.status, 403, "{method} {path} without the secret: {}", r.json());
        assert!(r.json()["error"].as_str().unwrap().contains("x-game-secret"), "{}", r.json());
        // A wrong secret is refused the same way.
        let (head, _) = raw_http(
            s.addr,
            &format!(
                "{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Game-Secret: {}\r\nContent-Length: 0\r\n\r\n",
                "0".repeat(32)
            ),
        );
        assert!(head.starts_with("http/1.1 403"), "{method} {path} with a wrong secret: {head}");
    }
    // Nothing changed; the creator still plays, and deletes.
    let v = s.ok("GET", &format!("/api/games/{id}"), None);
    assert_eq!((v["ply"].as_u64(), v["ai_seat"].as_str()), (Some(0), Some("second")));
    s.ok("POST", &format!("/api/games/{id}/click"), Some(json!({"action": "d3"})));
    assert_eq!(s.call("DELETE", &format!("/api/games/{id}"), None).0, 204);
}

/// `/report` serves the balance report `zeroplay report` wrote, read again on each request;
/// without one it says how to make one.
#[test]
fn the_balance_report_is_served_when_there_is_one() {
    let none = Server::start(quick());
    let (status, _, body) = none.raw("GET", "/report", None, "text/html");
    assert_eq!(status, 404);
    assert!(String::from_utf8_lossy(&body).contains("zeroplay report --run"));
    assert_eq!(none.call("GET", "/report.json", None).0, 404);

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("report.html"), "<html>balance one</html>").unwrap();
    std::fs::write(dir.path().join("report.json"), "{\"games\": 7}").unwrap();
    let s = Server::start(ServeConfig { report: Some(dir.path().to_path_buf()), ..quick() });
    let (status, head, body) = s.raw("GET", "/report", None, "text/html");
    assert_eq!(status, 200);
    assert!(head.to_ascii_lowercase().contains("text/html"), "{head}");
    assert_eq!(body, b"<html>balance one</html>");
    assert_eq!(s.ok("GET", "/report.json", None)["games"], 7);
    // Written again: the next request shows the new report.
    std::fs::write(dir.path().join("report.html"), "<html>balance two</html>").unwrap();
    assert_eq!(s.raw("GET", "/report", None, "text/html").2, b"<html>balance two</html>");
}
