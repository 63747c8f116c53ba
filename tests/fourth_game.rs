//! A fourth game, added the way a new game is added: the toy game (engine/src/toy: its folder,
//! one `GameKind` line in engine/src/kind.rs, its board module in the folder), registered by the
//! engine's `toy` feature, which the workspace's tests turn on. It runs through every host as a
//! user runs them, each its own process: `local` (a coordinator, a worker and a trainer over
//! real gRPC, games in Parquet, a candidate trained and gated), `export`, `arena` with the
//! trained network, `perft`, `render`, and `serve` with the model: a whole game over HTTP against
//! the model's AI, the page's board module, the picture.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use zeroplay_server::client;

fn zeroplay() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_zeroplay"));
    c.env("RUST_LOG", "warn").env("NO_COLOR", "1");
    c
}

fn run(c: &mut Command) -> String {
    let out = c.output().unwrap();
    let (o, e) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{o}\n{e}");
    o.into_owned()
}

/// Kills the child when the test ends, passed or not.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_toy_game_runs_through_every_host() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();

    // Self-play, training and gating: one tiny round.
    let tcfg = d.join("train.toml");
    std::fs::write(
        &tcfg,
        "min_new_positions = 300\nsteps_per_round = 20\nmax_rounds = 1\npoll_ms = 200\n\
         [train]\nnet = \"tiny\"\nbatch_size = 32\n[gate]\nrule = \"threshold\"\nmatches = 2\nsims = 8\nopening_plies = 2\n",
    )
    .unwrap();
    run(zeroplay()
        .args(["local", "--game", "toy", "--name", "r", "--sims", "8", "--slots", "2", "--minutes", "3"])
        .arg("--train-config")
        .arg(&tcfg)
        .current_dir(d));
    let runs = d.join("runs/r");
    let ratings: Value =
        serde_json::from_str(&std::fs::read_to_string(runs.join("trainer/ratings.json")).unwrap()).unwrap();
    assert_eq!(ratings.as_array().unwrap().len(), 1, "{ratings}");
    let saved = std::fs::read_to_string(runs.join("trainer/train.toml")).unwrap();
    assert!(saved.contains("game = \"toy\""), "{saved}");
    assert!(std::fs::read_dir(runs.join("games")).unwrap().count() > 0, "no Parquet files");

    // Export: the model's card names the game and its encoding.
    let model = runs.join("trainer/models/candidate-0001.safetensors");
    let exported = d.join("exported");
    run(zeroplay().arg("export").arg(&model).arg("--out").arg(&exported));
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(exported.join("model.json")).unwrap()).unwrap();
    assert_eq!(
        (doc["game"].as_str(), doc["feature_len"].as_u64(), doc["policy_len"].as_u64()),
        (Some("toy"), Some(18), Some(9))
    );
    assert!(std::fs::read_to_string(exported.join("MODEL.md")).unwrap().contains("Toy"));

    // The arena: the trained network leads MCTS against the rollout AI.
    let spec = format!("mcts:sims=16,eval=net,model={}", model.display());
    let o = run(zeroplay()
        .args([
            "arena",
            "--game",
            "toy",
            "-n",
            "1",
            "-j",
            "1",
            "-b",
            "mcts:sims=16,eval=rollout",
            "-a",
            &spec,
        ])
        .current_dir(d));
    assert!(o.contains("Elo"), "{o}");

    // Perft: 9 first claims, 72 replies.
    let o = run(zeroplay().args(["perft", "toy", "2"]));
    assert!(o.contains("72"), "{o}");
    // Render: a game file drawn with its result.
    let game = d.join("game.txt");
    std::fs::write(&game, "a1 a2 b1 b2 c1\n").unwrap();
    let svg = d.join("toy.svg");
    run(zeroplay().args(["render", "toy"]).arg(&game).arg("--out").arg(&svg));
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(picture.starts_with("<svg") && picture.contains("first seat wins"), "{picture}");

    // The play server with the model: its board module, then a whole game against its AI.
    let mut child = zeroplay()
        .args(["serve", "--listen", "127.0.0.1:0", "--model"])
        .arg(&model)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let _serve = Killed(child);
    let mut lines = BufReader::new(stdout).lines();
    let addr: SocketAddr = loop {
        let line = lines.next().expect("serve ended before its ready line").unwrap();
        if let Some(rest) = line.strip_prefix("zeroplay serve: http://") {
            break rest.trim_end_matches('/').parse().unwrap();
        }
    };
    let me = client::Player::new(addr);
    let info = me.json("GET", "/api/info", None).unwrap().json();
    assert_eq!(info["model_versions"]["toy"], 1, "{info}");
    assert_eq!(info["boards"]["toy"]["module"], "/boards/toy.js", "{info}");
    assert_eq!(info["boards"]["banqi"]["module"], Value::Null, "the page draws Banqi itself");
    let module = me.request("GET", "/boards/toy.js", None, "text/plain").unwrap();
    assert_eq!(module.status, 200);
    assert!(String::from_utf8_lossy(&module.body).contains("zeroplayBoards"));
    assert_eq!(me.request("GET", "/boards/banqi.js", None, "text/plain").unwrap().status, 404);

    let mut v = me
        .json("POST", "/api/games", Some(&json!({"game": "toy", "ai_seat": "second", "ai_ms": 50})))
        .unwrap()
        .json();
    assert_eq!(v["model_version"], 1, "{v}");
    let id = v["id"].as_str().unwrap().to_string();
    let deadline = Instant::now() + Duration::from_secs(60);
    while v["outcome"].is_null() {
        assert!(Instant::now() < deadline, "the game did not end: {v}");
        if v["to_move"] == "first" {
            let a = v["legal"][0]["action"].clone();
            v = me
                .json("POST", &format!("/api/games/{id}/click"), Some(&json!({ "action": a })))
                .unwrap()
                .json();
        } else {
            let r = me.request("POST", &format!("/api/games/{id}/ai"), None, "text/plain").unwrap();
            assert_eq!(r.events().pop().unwrap().1["applied"], true);
            v = me.json("GET", &format!("/api/games/{id}"), None).unwrap().json();
        }
    }
    let squares = v["board"]["squares"].as_array().unwrap();
    assert!(squares.iter().filter(|s| !s.is_null()).count() >= 5, "{v}");
    let picture = me.request("GET", &format!("/api/games/{id}/board.svg"), None, "text/plain").unwrap();
    assert_eq!(picture.status, 200);
    assert!(String::from_utf8_lossy(&picture.body).contains("<svg"));
}
