//! The `zeroplay` binary as a user runs it: real child processes, real files.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn zeroplay() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_zeroplay"));
    c.env("RUST_LOG", "warn").env("NO_COLOR", "1");
    c
}

#[test]
fn perft_prints_counts_per_depth() {
    let out = zeroplay().args(["perft", "battlenumber", "3", "-j", "2"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let counts: Vec<u64> =
        text.lines().skip(2).map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap()).collect();
    assert_eq!(counts, vec![4, 184, 12584], "{text}");
}

#[test]
fn bench_depth_prints_each_agents_depth_by_phase_and_refuses_other_agents() {
    // Node budgets, so the run is short and its depths do not depend on the machine.
    let out = zeroplay()
        .args(["bench", "depth", "--positions", "2", "-a", "banqi-ab:nodes=20000,flip_depth=2"])
        .args(["-a", "banqi-ab:nodes=20000"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("| ") && l.contains("banqi-ab")).collect();
    assert_eq!(rows.len(), 6, "three phases × two agents:\n{text}");
    for phase in ["opening", "middle game", "ending"] {
        assert!(rows.iter().filter(|r| r.contains(phase)).count() == 2, "{phase}:\n{text}");
    }
    let out = zeroplay().args(["bench", "depth", "-a", "mcts:sims=10"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("banqi-ab agents only"));
}

#[test]
fn arena_runs_matches_and_saves_config_and_results() {
    let dir = tempfile::tempdir().unwrap();
    let out = zeroplay()
        .args(["arena", "--config", "configs/arena.toml", "-a", "mcts:sims=30,eval=rollout", "-b", "random"])
        .args(["-n", "3", "-j", "2", "--seed", "9", "--out"])
        .arg(dir.path())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Elo (A − B)"), "{text}");
    let cfg = std::fs::read_to_string(dir.path().join("config.toml")).unwrap();
    assert!(cfg.contains("agent_a = \"mcts:sims=30,eval=rollout\"") && cfg.contains("seed = 9"), "{cfg}");
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("results.json")).unwrap()).unwrap();
    assert_eq!(results["matches"], 3);
    let w = results["wins"].as_u64().unwrap()
        + results["draws"].as_u64().unwrap()
        + results["losses"].as_u64().unwrap();
    assert_eq!(w, 3);
}

#[test]
fn bad_input_gets_a_clear_error_and_nonzero_exit() {
    let out = zeroplay().args(["arena", "-a", "mcts:sims=abc", "-n", "1"]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("sims must be a non-negative number"), "{err}");

    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "matches = 3\nthreads = \"many\"\n").unwrap();
    let out = zeroplay().args(["arena", "--config"]).arg(&bad).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("threads") && err.contains("bad.toml"), "{err}");

    let out = zeroplay().args(["perft", "chess", "2"]).output().unwrap();
    assert!(!out.status.success());
}

#[test]
fn play_in_a_terminal_with_scripted_input() {
    let mut child = zeroplay()
        .args(["play", "battlenumber", "--agent", "random", "--single", "--seat", "second", "--no-color"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The agent opens at d3; as the second seat we answer next to it, then a nonsense click.
    child.stdin.take().unwrap().write_all(b"xyz\nquit\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Agent played: d3 C2r"), "{text}");
    assert!(text.contains("Not accepted"), "{text}");
    assert!(text.contains("Bye."), "{text}");
}

#[test]
fn help_explains_agents() {
    let out = zeroplay().arg("--help").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("mcts:sims=800,eval=rollout") && text.contains("arena") && text.contains("perft"));
}

#[test]
fn local_runs_the_whole_loop_and_export_writes_a_model_other_tools_can_read() {
    let dir = tempfile::tempdir().unwrap();
    let tcfg = dir.path().join("train.toml");
    // Tiny rounds: two rounds of a tiny network, gated in two quick matches that any candidate
    // passes (the play-time measurement needs a best model).
    std::fs::write(
        &tcfg,
        "min_new_positions = 1500\nsteps_per_round = 20\nmax_rounds = 2\npoll_ms = 200\n\
         [train]\nnet = \"tiny\"\nbatch_size = 64\n[gate]\nrule = \"threshold\"\nmatches = 2\nsims = 8\nopening_plies = 4\nthreshold = 0.0\n\
         [rating]\nmatches = 1\nanchors = [\"random\"]\n",
    )
    .unwrap();
    let out = zeroplay()
        .args(["local", "--name", "t", "--sims", "16", "--slots", "2", "--minutes", "4", "--seed", "5"])
        .args(["--snapshot-at", "0", "--measure-matches", "1", "--measure-ms", "10", "--train-config"])
        .arg(&tcfg)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("trainer finished") || stdout.contains("models (Elo"), "{stdout}");
    // The ratings say on the same screen that they are not at equal time.
    assert!(stdout.contains("at the gate's budget (8 simulations a move"), "{stdout}");
    assert!(stdout.contains("snapshot at 0 min:") && stdout.contains("no model promoted yet"), "{stdout}");
    let run = dir.path().join("runs/t/trainer");
    // ...and the figure that holds at play time follows it: the best model, network alone,
    // against the user's AI at equal time per move.
    assert!(
        stdout.contains("at play time: the network alone (mcts:time=10ms,eval=net,")
            && stdout.contains("lambda=0) against mcts:time=10ms,eval=rollout:")
            && stdout.contains("in 1 side-swapped matches"),
        "{stdout}"
    );
    let play: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("play-time.json")).unwrap()).unwrap();
    assert_eq!(play["report"]["matches"], 1, "{play}");
    assert_eq!(play["opponent"], "mcts:time=10ms,eval=rollout", "{play}");
    assert!(play["model"].as_str().unwrap().ends_with("best.safetensors"), "{play}");
    let ratings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("ratings.json")).unwrap()).unwrap();
    assert_eq!(ratings.as_array().unwrap().len(), 2, "{ratings}");
    for e in ratings.as_array().unwrap() {
        // Gated by the coordinator on the worker: each candidate got a version and its matches.
        assert_eq!(e["matches"], 2, "{e}");
        assert!(e["version"].as_u64().unwrap() > 0, "{e}");
    }
    assert_eq!(ratings[0]["opponent"], "rollout", "{ratings}");
    let svg = std::fs::read_to_string(run.join("ratings.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("<circle"), "{svg}");
    assert!(std::fs::read_to_string(run.join("train.toml")).unwrap().contains("max_rounds = 2"));
    assert!(
        run.join("checkpoint/model.safetensors").exists() && run.join("checkpoint/optimizer.bin").exists()
    );

    // Each round drew its candidate's calibration; `diagnose` draws it for any model.
    let diag = std::fs::read_to_string(run.join("diagnostics.svg")).unwrap();
    assert!(diag.contains("round 2") && diag.contains("<circle"), "{diag}");
    assert!(ratings[1]["validation_losses"]["value"].as_f64().unwrap() > 0.0, "{ratings}");
    let model = run.join("models/candidate-0002.safetensors");
    // A run-directory command on candidate 2, from the directory `local` ran in: its stdout.
    let on_model = |args: &[&str]| {
        let out = zeroplay().args(args).arg("--model").arg(&model).current_dir(dir.path()).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "{args:?}: {text}\n{}", String::from_utf8_lossy(&out.stderr));
        text
    };
    let text = on_model(&["diagnose", "--run", "runs/t"]);
    for row in ["training-split games", "held-out games", "newest third", "opening", "end"] {
        assert!(text.contains(row), "{row}:\n{text}");
    }
    let svg = std::fs::read_to_string(run.join("diagnose.svg")).unwrap();
    assert_eq!(svg.matches("<rect x=").count(), 4, "four reliability diagrams: {svg}");
    // `strength`: the documented arena, shortened, printed as the docs' rows.
    let text = on_model(&[
        "strength",
        "--run",
        "runs/t",
        "-n",
        "1",
        "-j",
        "1",
        "--time-ms",
        "5",
        "--opponent-time-ms",
        "5",
    ]);
    for row in [
        "| network alone (lambda=0) | mcts:time=5ms,eval=rollout | 5 ms / 5 ms | 2026 | 1 |",
        "| mixed leaf (lambda=0.5)",
        "--opening-plies 6 --seed 2026",
    ] {
        assert!(text.contains(row), "{row}:\n{text}");
    }

    // `curve`: the snapshot `local --snapshot-at 0` took (no model yet) and one more naming
    // candidate 2, measured as `strength` measures the network alone, table and picture.
    let snaps = dir.path().join("runs/t/curve/snapshots.jsonl");
    let mut lines = std::fs::read_to_string(&snaps).unwrap();
    assert!(lines.contains("\"minutes\":0.0") && lines.contains("\"model\":null"), "{lines}");
    lines.push_str(&format!(
        "{{\"minutes\":1,\"elapsed_s\":60,\"games\":40,\"positions\":4000,\"model\":{:?}}}\n",
        model.display().to_string()
    ));
    std::fs::write(&snaps, lines).unwrap();
    let out = zeroplay()
        .args(["curve", "--name", "t", "--measure-only", "-n", "1", "-j", "1", "--time-ms", "5"])
        .args(["--opponent-time-ms", "5"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("0 min: no model promoted yet"), "{text}");
    assert!(text.contains("| 1 | 40 | 4000 | mcts:time=5ms,eval=rollout | 1 |"), "{text}");
    let curve: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("runs/t/curve/curve.json")).unwrap())
            .unwrap();
    assert_eq!(curve["points"].as_array().unwrap().len(), 1, "{curve}");
    assert!(
        curve["points"][0]["agent"].as_str().unwrap().contains("eval=net")
            && curve["points"][0]["agent"].as_str().unwrap().contains("lambda=0")
    );
    let svg = std::fs::read_to_string(dir.path().join("runs/t/curve/curve.svg")).unwrap();
    assert_eq!(svg.matches("<circle").count(), 2, "{svg}");
    // A curve that would overwrite an earlier run's snapshots refuses.
    let out =
        zeroplay().args(["curve", "--name", "t", "--at", "1"]).current_dir(dir.path()).output().unwrap();
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("--measure-only"));
    // Redrawn beside another run's curve (here a copy of this one), measuring nothing; a
    // compared run that has no curve is named.
    std::fs::create_dir_all(dir.path().join("runs/base/curve")).unwrap();
    std::fs::copy(dir.path().join("runs/t/curve/curve.json"), dir.path().join("runs/base/curve/curve.json"))
        .unwrap();
    let out = zeroplay()
        .args(["curve", "--name", "t", "--plot-only", "--compare", "base"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(text.matches("| 1 | 40 | 4000 |").count(), 2, "both tables: {text}");
    let svg = std::fs::read_to_string(dir.path().join("runs/t/curve/curve.svg")).unwrap();
    assert_eq!(svg.matches("<circle").count(), 4, "{svg}");
    assert!(svg.contains(">base</text>"), "{svg}");
    let out = zeroplay()
        .args(["curve", "--name", "t", "--plot-only", "--compare", "nowhere"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("nowhere"));

    // Export a candidate and read it back without zeroplay.
    let exported = dir.path().join("exported");
    let out = zeroplay().arg("export").arg(&model).arg("--out").arg(&exported).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(exported.join("model.json")).unwrap()).unwrap();
    assert_eq!(doc["game"], "battlenumber");
    assert_eq!(doc["feature_len"], 20 * 49 + 23);
    let names: Vec<&str> =
        doc["tensors"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"input.weight") && names.contains(&"policy.bias"), "{names:?}");
    assert!(std::fs::read_to_string(exported.join("MODEL.md")).unwrap().contains("input.weight"));
    // A file that is not a model is refused with a clear error.
    std::fs::write(dir.path().join("junk.safetensors"), b"junk").unwrap();
    let out = zeroplay().arg("export").arg(dir.path().join("junk.safetensors")).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a zeroplay model"));
    // So is a model whose weights hold a NaN.
    let mut nan = std::fs::read(&model).unwrap();
    let head = u64::from_le_bytes(nan[..8].try_into().unwrap()) as usize;
    nan[8 + head..8 + head + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    std::fs::write(dir.path().join("nan.safetensors"), &nan).unwrap();
    let out = zeroplay().arg("export").arg(dir.path().join("nan.safetensors")).output().unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("non-finite"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `zeroplay local --game GAME` for one tiny round under `train_toml` (a round gated in two
/// matches), checked: one rated candidate, the game in the saved train config, Parquet games.
/// Then `zeroplay export` of that candidate, checked: MODEL.md names `title`. Returns the
/// candidate's path and the exported `model.json`.
fn local_round_and_export(
    dir: &Path,
    game: &str,
    title: &str,
    sims: &str,
    minutes: &str,
    train_toml: &str,
) -> (PathBuf, serde_json::Value) {
    let tcfg = dir.join("train.toml");
    std::fs::write(&tcfg, train_toml).unwrap();
    let out = zeroplay()
        .args(["local", "--game", game, "--name", "r", "--sims", sims, "--slots", "2", "--minutes", minutes])
        .arg("--train-config")
        .arg(&tcfg)
        .current_dir(dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let run = dir.join("runs/r");
    let ratings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("trainer/ratings.json")).unwrap()).unwrap();
    assert_eq!(ratings.as_array().unwrap().len(), 1, "{ratings}");
    assert_eq!(ratings[0]["matches"], 2, "{ratings}");
    let saved = std::fs::read_to_string(run.join("trainer/train.toml")).unwrap();
    assert!(saved.contains(&format!("game = \"{game}\"")), "{saved}");
    assert!(std::fs::read_dir(run.join("games")).unwrap().count() > 0, "no Parquet files");

    let model = run.join("trainer/models/candidate-0001.safetensors");
    let exported = dir.join("exported");
    let out = zeroplay().arg("export").arg(&model).arg("--out").arg(&exported).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(exported.join("model.json")).unwrap()).unwrap();
    assert_eq!(doc["game"], game);
    assert!(std::fs::read_to_string(exported.join("MODEL.md")).unwrap().contains(title));
    (model, doc)
}

/// One arena match of `game`, `a` against `b`, which must finish and report an Elo.
fn one_arena_match(game: &str, a: &str, b: &str) {
    let out =
        zeroplay().args(["arena", "--game", game, "-n", "1", "-j", "1", "-b", b, "-a", a]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Elo"), "{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn banqi_self_play_training_export_and_the_match_protocol_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    // One tiny round, gated in two quick matches against the rollout AI.
    let (model, doc) = local_round_and_export(
        dir.path(),
        "banqi",
        "Banqi",
        "8",
        "4",
        "min_new_positions = 800\nsteps_per_round = 20\nmax_rounds = 1\npoll_ms = 200\n\
         [train]\nnet = \"tiny\"\nbatch_size = 64\n[gate]\nrule = \"threshold\"\nmatches = 2\nsims = 8\nopening_plies = 4\n",
    );
    assert_eq!(doc["feature_len"], 17 * 32 + 19);

    // The candidate through the match protocol and in the arena.
    let mut uci = zeroplay()
        .args(["uci", "--game", "banqi", "--model"])
        .arg(&model)
        .env("RUST_LOG", "info")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        let stdin = uci.stdin.as_mut().unwrap();
        writeln!(stdin, "position fen 8/8/C1S1g3/8 r - 0 1\ngo nodes 200\nquit").unwrap();
    }
    let out = uci.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.lines().any(|l| l == "bestmove a1e1"), "{text}");
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(log.contains("evaluator=net(v1)+rollout"), "the network was not used: {log}");

    let spec = format!("mcts:sims=32,eval=net,model={},lambda=0.5", model.display());
    one_arena_match("banqi", &spec, "mcts:sims=32,eval=rollout");

    // A new run started from that candidate (`--init-model`): the coordinator's version 1
    // before the first game, so the new run's first candidate is gated against it and the
    // models table rates rounds over it.
    let local = |name: &str, init: &Path| {
        zeroplay()
            .args([
                "local",
                "--game",
                "banqi",
                "--name",
                name,
                "--sims",
                "8",
                "--slots",
                "2",
                "--minutes",
                "4",
            ])
            .args(["--measure-matches", "0", "--no-report", "--train-config", "train.toml", "--init-model"])
            .arg(init)
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    let out = local("r2", &model);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let read = |p: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.path().join(p)).unwrap()).unwrap()
    };
    let (first, second) = (read("runs/r/trainer/ratings.json"), read("runs/r2/trainer/ratings.json"));
    let init = read("runs/r2/trainer/init-model.json");
    assert_eq!((init["version"].as_u64(), &init["sha256"]), (Some(1), &first[0]["sha256"]), "{init}");
    assert_eq!(second[0]["opponent"], "v1", "gated against the model the run started from: {second}");
    assert_eq!(second[0]["version"], 2, "{second}");
    assert!(stdout.contains("Elo, v1 = 0"), "{stdout}");
    // Not a model: a clear error before any game is played.
    let out = local("r3", Path::new("train.toml"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("--init-model train.toml"), "{err}");
    assert!(
        !dir.path().join("runs/r3/games").exists()
            || std::fs::read_dir(dir.path().join("runs/r3/games")).unwrap().count() == 0
    );
    // Perft: 32 flips, each with 14 pieces it may reveal.
    let out = zeroplay().args(["perft", "banqi", "1"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("448"));
}

#[test]
fn trigolden_self_play_training_export_and_a_network_agent_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    // One tiny round from a few short games, gated in two quick matches against the rollout AI.
    let (model, doc) = local_round_and_export(
        dir.path(),
        "trigolden",
        "TriGolden",
        "4",
        "6",
        "min_new_positions = 200\nsteps_per_round = 20\nmax_rounds = 1\npoll_ms = 200\n\
         [train]\nnet = \"tiny\"\nbatch_size = 32\n[gate]\nrule = \"threshold\"\nmatches = 2\nsims = 4\nopening_plies = 4\n",
    );
    assert_eq!(doc["feature_len"], 56);
    assert_eq!(doc["policy_len"], 0);

    // The trained network leads an MCTS agent in the arena.
    let spec = format!("mcts:sims=16,eval=net,model={}", model.display());
    one_arena_match("trigolden", &spec, "mcts:sims=4,eval=rollout");
}

#[test]
fn trigolden_perft_arena_and_render() {
    let out = zeroplay().args(["perft", "trigolden", "2", "-j", "2"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let counts: Vec<u64> =
        text.lines().skip(2).map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap()).collect();
    // Depth 2 agrees with the engine's own click enumeration (engine tests); here the CLI
    // must print the same numbers as the library.
    assert_eq!(counts.len(), 2, "{text}");
    assert_eq!(counts[0], 6, "{text}");
    assert_eq!(counts[1], engine::trigolden::perft(&engine::Game::new_game(&Default::default()), 2, false));
    // Playing every leaf gives the same counts.
    let out = zeroplay().args(["perft", "trigolden", "2", "-j", "1", "--make-every-turn"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let every: Vec<u64> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .skip(2)
        .map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap())
        .collect();
    assert_eq!(every, counts);

    let dir = tempfile::tempdir().unwrap();
    let out = zeroplay()
        .args(["arena", "--game", "trigolden", "-a", "random", "-b", "random", "-n", "2", "-j", "2", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("results.json")).unwrap()).unwrap();
    assert_eq!(results["game"], "trigolden");
    assert_eq!(results["matches"], 2);

    // A game file: the opening, then player 2's first turn, drawn.
    let game = dir.path().join("game.txt");
    let g = {
        use engine::Game;
        let mut g = engine::trigolden::TriGolden::new_game(&Default::default());
        g.play(g.parse_action("open:A").unwrap()).unwrap();
        let turn = g.legal_turns().into_iter().next().unwrap();
        let mut text = String::from("# opening\nopen:A\n");
        for a in turn {
            text.push_str(&format!("{a} "));
            g.play(a).unwrap();
        }
        std::fs::write(&game, text).unwrap();
        g
    };
    let svg = dir.path().join("board.svg");
    let out = zeroplay().args(["render", "trigolden"]).arg(&game).arg("-o").arg(&svg).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let drawn = std::fs::read_to_string(&svg).unwrap();
    assert_eq!(drawn, engine::trigolden::render::svg(&g));
    assert_eq!(drawn.matches("<polygon").count(), 3);
    // An illegal action is named, with its position in the file.
    std::fs::write(&game, "open:A open:B").unwrap();
    let out = zeroplay().args(["render", "trigolden"]).arg(&game).arg("-o").arg(&svg).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("action 2"), "{err}");
    // A bad shape table is refused with the problem named.
    let pieces = dir.path().join("pieces.toml");
    std::fs::write(&pieces, "[[piece]]\nname = \"X\"\ncount = 9\nedges = [\"1@0\", \"1@3\", \"2@5\"]\n")
        .unwrap();
    let out =
        zeroplay().args(["render", "trigolden"]).arg(&game).arg("--pieces").arg(&pieces).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("3 edges"), "{err}");
}
