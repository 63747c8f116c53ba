//! `zeroplay match` as its own process: against `zeroplay uci` (a real engine process on the
//! other end of the protocol), and against scripted engines that misbehave in each way the
//! protocol allows (an illegal move, garbage, silence, a crash, no handshake).

use std::path::Path;
use std::process::{Command, Output};

fn zeroplay() -> Command {
    Command::new(env!("CARGO_BIN_EXE_zeroplay"))
}

fn run_match(engine: &str, extra: &[&str]) -> Output {
    zeroplay()
        .args(["match", "--engine", engine, "-a", "banqi-ab:nodes=3000", "-n", "1", "--movetime", "20"])
        .args(["--margin", "300"])
        .args(extra)
        .output()
        .expect("zeroplay runs")
}

/// A shell-script engine: the handshake, then `go` answered by `on_go` (shell code).
fn script(dir: &Path, name: &str, on_go: &str) -> String {
    let path = dir.join(name);
    let text = format!(
        "#!/bin/sh\nwhile read -r line; do\n  case \"$line\" in\n    uci) echo 'id name {name}'; echo uciok ;;\n    \
         isready) echo readyok ;;\n    go*) {on_go} ;;\n    quit) exit 0 ;;\n  esac\ndone\n"
    );
    std::fs::write(&path, text).unwrap();
    format!("sh {}", path.display())
}

#[test]
fn plays_zeroplay_uci_and_writes_records() {
    let dir = tempfile::tempdir().unwrap();
    let engine = format!("{} uci --game banqi --search mcts --seed 4", env!("CARGO_BIN_EXE_zeroplay"));
    let out_dir = dir.path().join("m");
    let out = run_match(&engine, &["--seed", "5", "-o", out_dir.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("matches: A won"), "{text}");
    assert!(text.contains("engine forfeits: 0"), "{text}");
    assert!(text.contains("Elo (A − B)"), "{text}");
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("results.json")).unwrap()).unwrap();
    assert_eq!(results["engine_name"].as_str().unwrap().split(' ').next(), Some("zeroplay"));
    assert_eq!(results["points"].as_array().unwrap().len(), 1);
    // Both games were played to their end from the same deal, and render reads the records.
    for g in 1..=2 {
        let record = out_dir.join(format!("games/match-001-game-{g}.txt"));
        let body = std::fs::read_to_string(&record).unwrap();
        assert!(!body.contains("forfeits"), "{body}");
        let svg = dir.path().join(format!("g{g}.svg"));
        let r = zeroplay()
            .args(["render", "banqi", record.to_str().unwrap(), "-o", svg.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    }
}

#[test]
fn a_misbehaving_engine_forfeits_each_game_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    for (name, on_go, reason) in [
        // Only flips are legal at the start, so a move is illegal.
        ("illegal", "echo 'bestmove a0a1'", "illegal move \"a0a1\""),
        ("garbage", "echo 'bestmove banana'", "no move in its reply"),
        ("silent", ":", "no bestmove within 320 ms"),
        ("crash", "exit 3", "the engine exited"),
    ] {
        let engine = script(dir.path(), name, on_go);
        let out = run_match(&engine, &[]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{name}: {text}\n{}", String::from_utf8_lossy(&out.stderr));
        assert!(text.contains("matches: A won 1, drew 0, lost 0"), "{name}: {text}");
        assert!(text.contains("engine forfeits: 2"), "{name}: {text}");
        assert!(text.contains(reason), "{name}: {text}");
    }
}

#[test]
fn an_engine_without_a_handshake_is_refused_with_a_reason() {
    let out = run_match("echo hello", &[]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no uciok") && err.contains("exited"), "{err}");
}
