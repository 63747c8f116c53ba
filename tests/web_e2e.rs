//! The web client end to end: a real `zeroplay serve` process on port 0, driven in headless
//! Chromium by playwright-core (`tests/web/e2e.mjs`, installed by
//! `scripts/setup-test-tools.sh`). Screenshots are kept under
//! `target/web-e2e/` (or `$CARGO_TARGET_DIR/web-e2e/`) as test artefacts.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

#[test]
fn play_battle_number_and_a_trigolden_turn_by_clicking_in_chromium() {
    let (modules, chromium) = common::browser();
    let mut server = Command::new(env!("CARGO_BIN_EXE_zeroplay"))
        .args(["serve", "--listen", "127.0.0.1:0"])
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
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    let shots = target.join("web-e2e");
    let out = Command::new("node")
        .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/web/e2e.mjs"))
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
    assert!(out.status.success(), "browser test failed:\n{text}");
    assert!(text.contains("e2e ok"), "{text}");
    for shot in
        ["battlenumber-end.png", "replay.png", "trigolden-turn.png", "trigolden-zh-phone.png", "toy.png"]
    {
        let p = shots.join(shot);
        assert!(
            std::fs::metadata(&p).map(|m| m.len() > 1000).unwrap_or(false),
            "no screenshot {}",
            p.display()
        );
    }
}
