//! The web client end to end: a real `zeroplay serve` process on port 0, driven in headless
//! Chromium by playwright-core (`tests/web/*.mjs`, installed by `scripts/setup-test-tools.sh`).
//! Screenshots are kept under `target/web-e2e/` (or `$CARGO_TARGET_DIR/web-e2e/`) as test
//! artefacts.

mod common;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Mutex;

/// One browser at a time: two Chromiums and their servers on two cores would slow each other
/// past the scripts' waits.
static ONE_BROWSER: Mutex<()> = Mutex::new(());

/// Runs `tests/web/<script>` against a fresh `zeroplay serve`, stops the server as a user's
/// Ctrl-C would, and returns the script's output and the screenshot folder.
fn run_script(script: &str, done: &str, serve_args: &[&str]) -> (String, PathBuf) {
    let _one = ONE_BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let (modules, chromium) = common::browser();
    let mut server = Command::new(env!("CARGO_BIN_EXE_zeroplay"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(serve_args)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .spawn()
        .expect("start zeroplay serve");
    let mut first = String::new();
    BufReader::new(server.stdout.take().unwrap()).read_line(&mut first).unwrap();
    let url = first
        .trim()
        .strip_prefix("zeroplay serve: ")
        .unwrap_or_else(|| panic!("no address line: {first:?}"))
        .to_string();
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    let shots = target.join("web-e2e");
    let out = Command::new("node")
        .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/web").join(script))
        .arg(&url)
        .arg(&shots)
        .env("ZEROPLAY_NODE_MODULES", &modules)
        .env("ZEROPLAY_CHROMIUM", &chromium)
        .output()
        .expect("run node (Node.js is needed for the browser tests)");
    // A clean stop (SIGTERM: graceful shutdown), as a user's Ctrl-C.
    let _ = Command::new("kill").args(["-TERM", &server.id().to_string()]).status();
    let status = server.wait().unwrap();
    assert!(status.success(), "zeroplay serve did not stop cleanly: {status}");
    let text = format!("{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "browser test {script} failed:\n{text}");
    assert!(text.contains(done), "{text}");
    (text, shots)
}

fn assert_shots(shots: &std::path::Path, names: &[&str]) {
    for shot in names {
        let p = shots.join(shot);
        assert!(
            std::fs::metadata(&p).map(|m| m.len() > 1000).unwrap_or(false),
            "no screenshot {}",
            p.display()
        );
    }
}

#[test]
fn play_battle_number_and_a_trigolden_turn_by_clicking_in_chromium() {
    let (_, shots) = run_script("e2e.mjs", "e2e ok", &[]);
    assert_shots(
        &shots,
        &["battlenumber-end.png", "replay.png", "trigolden-turn.png", "trigolden-zh-phone.png", "toy.png"],
    );
}

/// The designer's 21 TriGolden requests, each checked at a desktop size and on a phone, in
/// English and in Chinese.
#[test]
fn every_trigolden_request_of_the_designer_holds_at_both_sizes_in_both_languages() {
    let (text, shots) = run_script("requests.mjs", "requests ok", &[]);
    for (size, lang) in [("desktop", "en"), ("phone", "zh"), ("desktop", "zh"), ("phone", "en")] {
        for n in 1..=21 {
            let line = format!("{size} {lang} {n:>2} ok");
            assert!(text.contains(&line), "request {n} was not checked at {size} in {lang}:\n{text}");
        }
    }
    assert_shots(
        &shots,
        &["req-desktop-en-opening.png", "req-phone-zh-turned.png", "req-phone-en-scored.png"],
    );
}

/// The balance report, written by `zeroplay report` (its own process) from a small store of
/// self-play games under two TriGolden scoring rules and of Battle Number, served at /report
/// and opened in Chromium in both languages.
#[test]
fn the_balance_report_opens_in_chromium_in_both_languages() {
    use engine::Game;
    use engine::eval::Rollout;
    use engine::selfplay::{SelfPlaySettings, play_game};
    use engine::trigolden::{Options, ScoringMode, TriGolden};
    fn store<G: engine::Game>(dir: &std::path::Path, name: &str, start: &G, seeds: std::ops::Range<u64>) {
        let s = SelfPlaySettings {
            full_sims: 8,
            fast_sims: 0,
            resign_threshold: -1.0,
            ..SelfPlaySettings::default()
        };
        let limits = zeroplay_coordinator::games::Limits::default().for_settings(&s);
        let records: Vec<_> = seeds
            .map(|seed| {
                let g = play_game(start, &s, &Rollout::default(), seed);
                zeroplay_proto::convert::game_record(&g, format!("{seed:032x}"), seed, 0)
            })
            .collect();
        zeroplay_coordinator::games::store_records(dir, name, &records, &limits, "test").unwrap();
    }
    let tmp = tempfile::tempdir().unwrap();
    let games = tmp.path().join("games");
    std::fs::create_dir_all(&games).unwrap();
    store(&games, "games-1-3.parquet", &TriGolden::new_game(&Options::default()), 0..3);
    let other = Options { scoring: ScoringMode::Trigolden, ..Options::default() };
    store(&games, "games-4-6.parquet", &TriGolden::new_game(&other), 3..6);
    store(
        &games,
        "games-7-9.parquet",
        &engine::battlenumber::BattleNumber::new_game(&Default::default()),
        6..9,
    );
    let out = tmp.path().join("report");
    let made = Command::new(env!("CARGO_BIN_EXE_zeroplay"))
        .args(["report", "--data-dir"])
        .arg(&games)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&made.stdout);
    assert!(made.status.success(), "{printed}{}", String::from_utf8_lossy(&made.stderr));
    assert!(printed.contains("9 games from 3 files (0 left out)"), "{printed}");
    assert!(
        printed.contains("scoring=trigolden") && printed.contains("too few games for a verdict"),
        "{printed}"
    );
    let (text, shots) =
        run_script("report.mjs", "report ok: 9 games, 3 sections", &["--report", out.to_str().unwrap()]);
    assert!(text.contains("report ok"), "{text}");
    assert_shots(&shots, &["report-en.png", "report-zh.png"]);
}
