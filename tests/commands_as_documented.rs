//! Issue 18's findings, each as the user met it: the command run as its own process, its
//! output read as a person reads it. (The trainer against a coordinator is in
//! `tests/cluster_path.rs`; every command of the docs in `tests/docs_commands.rs`.)

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use common::named_paths_missing;

fn zeroplay() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_zeroplay"));
    c.env("RUST_LOG", "warn").env("NO_COLOR", "1").env_remove("ZEROPLAY_TRAINER_TOKEN");
    c
}

fn text(out: &Output) -> (String, String) {
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn ok(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    let (o, e) = text(&out);
    assert!(out.status.success(), "{cmd:?} failed:\n{o}\n{e}");
    o
}

#[test]
fn trainer_without_data_warns_once_and_names_only_files_it_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/train.toml");
    let cfg_text = std::fs::read_to_string(&cfg).unwrap().replace("poll_ms = 2000", "poll_ms = 100");
    std::fs::write(dir.path().join("train.toml"), cfg_text).unwrap();
    let child = zeroplay()
        .args(["train", "--config", "train.toml", "--rounds", "1"])
        .env("RUST_LOG", "info")
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Twenty polls of a data directory that does not exist yet.
    std::thread::sleep(Duration::from_secs(2));
    assert!(Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap().success());
    let out = child.wait_with_output().unwrap();
    let (o, e) = text(&out);
    assert!(out.status.success(), "{o}\n{e}");
    assert_eq!(e.matches("cannot list training files").count(), 1, "said once, not every poll:\n{e}");
    assert!(e.contains("runs/default/games"), "the shipped config reads the coordinator's directory:\n{e}");
    assert!(o.contains("no model trained yet"), "{o}");
    assert_eq!(named_paths_missing(&o, dir.path()), Vec::<String>::new(), "{o}");
}

#[test]
fn local_stopped_before_its_first_model_counts_every_stored_game_and_names_real_files() {
    let dir = tempfile::tempdir().unwrap();
    let o = ok(zeroplay()
        .args([
            "local",
            "--game",
            "battlenumber",
            "--name",
            "t",
            "--games",
            "4",
            "--sims",
            "8",
            "--slots",
            "2",
        ])
        .current_dir(dir.path()));
    assert!(o.contains("no model trained yet"), "{o}");
    assert_eq!(named_paths_missing(&o, dir.path()), Vec::<String>::new(), "{o}");
    let counted = common::cluster::count_parquet(&dir.path().join("runs/t/games"));
    let said: usize = o
        .split("done: ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no game count in {o}"));
    assert_eq!(said, counted.games, "the summary's count is the Parquet files' count:\n{o}");
}

#[test]
fn arena_saves_every_game_as_a_record_render_draws() {
    for (game, n) in [("trigolden", "2"), ("battlenumber", "2"), ("banqi", "1")] {
        let dir = tempfile::tempdir().unwrap();
        let o = ok(zeroplay()
            .args([
                "arena", "--game", game, "-a", "random", "-b", "random", "-n", n, "-j", "1", "--seed", "5",
            ])
            .args(["--opening-plies", "2", "--out", "out"])
            .current_dir(dir.path()));
        let results: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/results.json")).unwrap())
                .unwrap();
        let mut files: Vec<_> =
            std::fs::read_dir(dir.path().join("out/games")).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        assert_eq!(files.len() as u64, results["games"].as_u64().unwrap(), "{game}: {o}");
        for f in &files {
            let record = std::fs::read_to_string(f).unwrap();
            assert!(record.contains("# first seat: "), "{record}");
            let svg = dir.path().join("board.svg");
            let r = ok(zeroplay().args(["render", game]).arg(f).arg("-o").arg(&svg).current_dir(dir.path()));
            assert!(r.contains("game over"), "{game}: a saved game replays to its end: {r}\n{record}");
            assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"), "{game}");
        }
    }
}

#[test]
fn draws_judges_every_drawn_game_of_a_banqi_arena_and_refuses_other_records() {
    // Node budgets without tables in play: deterministic, short, and the searchers draw often.
    let dir = tempfile::tempdir().unwrap();
    ok(zeroplay()
        .args([
            "arena",
            "--game",
            "banqi",
            "-a",
            "banqi-ab:nodes=3000,tb=0",
            "-b",
            "banqi-ab:nodes=3000,tb=0,flip_depth=2",
        ])
        .args(["-n", "3", "-j", "2", "--seed", "39", "--opening-plies", "6", "--out", "out"])
        .current_dir(dir.path()));
    let o = ok(zeroplay().args(["draws", "out", "--max-pieces", "4"]).current_dir(dir.path()));
    // The arena's own result lines say which games were drawn; the replay must agree.
    let mut drawn = Vec::new();
    let mut files: Vec<_> =
        std::fs::read_dir(dir.path().join("out/games")).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    for f in &files {
        if std::fs::read_to_string(f).unwrap().contains("# result: scores 0–0") {
            drawn.push(f.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    assert!(o.contains(&format!("{} games in out, {} drawn", files.len(), drawn.len())), "{o}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/draws.json")).unwrap()).unwrap();
    let listed: Vec<&str> =
        json["draws"].as_array().unwrap().iter().map(|d| d["file"].as_str().unwrap()).collect();
    assert_eq!(listed, drawn, "{o}");
    for d in json["draws"].as_array().unwrap() {
        assert!(["repetition", "no_progress"].contains(&d["cause"].as_str().unwrap()), "{d}");
        // A game the tables call winnable names who let the win go, one of the two agents.
        if !d["missed"].is_null() {
            assert!(["A", "B"].contains(&d["let_go_by"].as_str().unwrap()), "{d}");
        }
        assert_eq!(o.matches(d["file"].as_str().unwrap()).count(), 1, "one row per drawn game:\n{o}");
    }
    // Another game's records, and a directory without any, are refused with the reason.
    ok(zeroplay()
        .args(["arena", "--game", "battlenumber", "-a", "random", "-b", "random", "-n", "1", "--out", "bn"])
        .current_dir(dir.path()));
    let out = zeroplay().args(["draws", "bn"]).current_dir(dir.path()).output().unwrap();
    assert!(!out.status.success() && text(&out).1.contains("not a Banqi game record"), "{:?}", text(&out));
    let out = zeroplay().args(["draws", "nowhere"]).current_dir(dir.path()).output().unwrap();
    assert!(!out.status.success() && text(&out).1.contains("the --out directory of `zeroplay arena`"));
}

#[test]
fn arena_report_explains_its_counts_and_an_elo_from_one_match() {
    // Battle Number's random players lose by having no legal move: some matches end after
    // game 1, and the report says why there are fewer games than twice the matches.
    let o =
        ok(zeroplay().args(["arena", "-a", "random", "-b", "random", "-n", "6", "-j", "2", "--seed", "3"]));
    let games: u32 = o.split(" games").next().and_then(|s| s.rsplit(' ').next()).unwrap().parse().unwrap();
    if games < 12 {
        assert!(o.contains("ended after game 1"), "{o}");
    }
    assert!(o.contains("matches: A won") && o.contains("game score: A"), "{o}");
    let o = ok(zeroplay().args(["arena", "-a", "random", "-b", "random", "-n", "1", "--seed", "3"]));
    assert!(!o.contains("+0 [+0, +0]") && !o.contains("[+0, +0]"), "{o}");
    assert!(o.contains("inf]") || o.contains("[-inf"), "one match leaves the interval open: {o}");
    assert!(o.contains("one match says little"), "{o}");
    // A sweep has no finite estimate.
    let o = ok(zeroplay().args([
        "arena",
        "-a",
        "mcts:sims=200,eval=rollout",
        "-b",
        "random",
        "-n",
        "2",
        "--seed",
        "1",
    ]));
    if o.contains("match points: A 2.0") {
        assert!(o.contains("Elo (A − B): +inf"), "{o}");
    }
}

#[test]
fn help_texts_keep_their_tables_hide_tokens_and_say_what_they_mean() {
    let top = ok(zeroplay().arg("--help"));
    assert!(top.contains("\n  random  "), "the agent table keeps its lines:\n{top}");
    assert!(top.contains("\n  trigolden-user:time=500ms "), "{top}");
    assert!(top.contains("\n  trigolden-lite:time=500ms "), "{top}");
    ok(zeroplay().args(["help", "--help"]));
    let bench = ok(zeroplay().args(["bench", "--help"]));
    assert!(!bench.contains("see `bench --help`") && bench.contains("ingest"), "{bench}");
    let render = ok(zeroplay().args(["render", "--help"]));
    assert!(!render.contains("only so far"), "{render}");
    for cmd in ["train", "coordinator", "serve", "worker"] {
        let h = ok(zeroplay()
            .args([cmd, "--help"])
            .env("ZEROPLAY_TRAINER_TOKEN", "s3cret-trainer-value")
            .env("ZEROPLAY_WORKER_TOKEN", "s3cret-worker-value")
            .env("ZEROPLAY_TOKEN", "s3cret-serve-value"));
        assert!(!h.contains("s3cret"), "`{cmd} --help` prints a token:\n{h}");
    }
}

#[test]
fn bench_serve_measures_page_load_and_every_games_ai_through_http() {
    let o = ok(zeroplay().args(["bench", "serve", "--ms", "50", "--moves", "2", "--games", "3"]));
    for want in
        ["| /app.js |", "| battlenumber |", "| trigolden |", "| banqi |", "(banqi, 2 moves", "| 50 ms |"]
    {
        assert!(o.contains(want), "no {want:?} in\n{o}");
    }
    // Three AI tables (one per game), each with its row at 50 ms.
    assert_eq!(o.matches("| 50 ms |").count(), 3, "{o}");
    assert!(!o.contains("NaN"), "{o}");
}

#[test]
fn serve_prints_no_ready_line_for_a_model_it_then_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.safetensors");
    std::fs::write(&junk, b"not a model").unwrap();
    let out = zeroplay().args(["serve", "--listen", "127.0.0.1:0", "--model"]).arg(&junk).output().unwrap();
    let (o, e) = text(&out);
    assert!(!out.status.success(), "{o}\n{e}");
    assert!(!o.contains("zeroplay serve: http://"), "a ready line before the refusal:\n{o}");
    assert!(e.contains("junk.safetensors"), "{e}");
}

#[test]
fn serve_sends_each_model_to_the_game_its_metadata_names_and_refuses_two_for_one() {
    use engine::Features;
    let dir = tempfile::tempdir().unwrap();
    let cfg = model::NetConfig::named("nano").unwrap();
    let (f, p) = (engine::banqi::Banqi::FEATURE_LEN, engine::banqi::Banqi::POLICY_LEN);
    let net = model::ValueNet::new(&cfg, f, p, &model::cpu());
    let meta = model::ModelMeta::for_game::<engine::banqi::Banqi>(cfg, 10.0, model::ModelInfo::default());
    let bytes = model::to_bytes(&net, &meta).unwrap();
    let (a, b) = (dir.path().join("a.safetensors"), dir.path().join("b.safetensors"));
    std::fs::write(&a, &bytes).unwrap();
    std::fs::write(&b, &bytes).unwrap();
    // The older spelling names the same thing: both are Banqi models, whichever flag says so.
    let out = zeroplay()
        .args(["serve", "--listen", "127.0.0.1:0", "--model"])
        .arg(&a)
        .arg("--trigolden-model")
        .arg(&b)
        .output()
        .unwrap();
    let (o, e) = text(&out);
    assert!(!out.status.success(), "{o}\n{e}");
    assert!(
        e.contains("two models for banqi") && e.contains("a.safetensors") && e.contains("b.safetensors"),
        "{e}"
    );
}
