//! The Banqi match protocol, driven by a scripted client through a real `zeroplay uci` child
//! process: the handshake, positions with moves, `go` by nodes and by time, malformed and
//! impossible input (answered with `info string error`, never a crash), and `quit`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use engine::banqi::{Action, Banqi};
use engine::game::Game;

struct Engine {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Engine {
    fn start() -> Engine {
        let mut child = Command::new(env!("CARGO_BIN_EXE_zeroplay"))
            .args(["uci", "--game", "banqi", "--movetime", "50", "--seed", "3"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("zeroplay starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Engine { child, stdin, lines }
    }

    fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Lines up to and including the first that starts with `last`.
    fn until(&mut self, last: &str) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut out = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) => {
                    let done = l.starts_with(last);
                    out.push(l);
                    if done {
                        return out;
                    }
                }
                Err(RecvTimeoutError::Timeout) => panic!("no {last:?} within 30 s; got {out:?}"),
                Err(RecvTimeoutError::Disconnected) => panic!("the engine exited; got {out:?}"),
            }
        }
    }

    fn bestmove(&mut self) -> (Vec<String>, String) {
        let lines = self.until("bestmove");
        let mv = lines.last().unwrap().strip_prefix("bestmove ").unwrap().to_string();
        (lines, mv)
    }
}

#[test]
fn a_scripted_match_tool_plays_through_the_protocol() {
    let mut e = Engine::start();
    e.send("uci");
    let hello = e.until("uciok");
    assert!(hello.iter().any(|l| l.starts_with("id name zeroplay")), "{hello:?}");
    assert!(hello.iter().any(|l| l.starts_with("id author")), "{hello:?}");
    e.send("isready");
    assert_eq!(e.until("readyok"), ["readyok"]);
    e.send("ucinewgame");

    // The start: only flips are legal, written as one square twice.
    e.send("position fen XXXXXXXX/XXXXXXXX/XXXXXXXX/XXXXXXXX - G1A2E2R2H2C2S5g1a2e2r2h2c2s5 0 1");
    e.send("go nodes 300");
    let (_, mv) = e.bestmove();
    let a = Action::parse(&mv).unwrap();
    assert!(matches!(a, Action::Flip(_)), "{mv}");
    assert_eq!(&mv[..2], &mv[2..], "{mv}");

    // A position with quiet moves after it: the engine must answer a legal move of the
    // position the moves lead to, within the time asked for.
    let fen = "1X2g3/r1XC4/8/S6X r S1a1c1 12 1";
    e.send(&format!("position fen {fen} moves d2e2 e3f3"));
    let t = Instant::now();
    e.send("go movetime 200");
    let (lines, mv) = e.bestmove();
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert!(lines.iter().any(|l| l.starts_with("info depth") && l.contains(" nodes ")), "{lines:?}");
    let mut state = Banqi::from_position_string(fen).unwrap();
    for m in ["d2e2", "e3f3"] {
        state.play(Action::parse(m).unwrap()).unwrap();
    }
    assert!(state.is_legal(Action::parse(&mv).unwrap()), "{mv} is not legal after the moves");

    // The cannon's capture of the king over a screen wins at once.
    e.send("position fen 8/8/C1S1g3/8 r - 0 1");
    e.send("go nodes 200");
    assert_eq!(e.bestmove().1, "a1e1");

    // Malformed and impossible input: an error line each, and the engine stays up.
    for bad in [
        "position fen 9/8/8/G7 r - 0 1",
        "position fen GG6/8/8/8 r - 0 1",
        "position fen 8/8/Gg6/8 r - 0 1 moves a1a3",
        "position fen 8/8/Gg6/8 r - 0 1 moves zz",
        "position fen X7/8/Gg6/8 r s1 0 1 moves a3a3",
        "position sideways",
        "frobnicate",
    ] {
        e.send(bad);
        e.send("isready");
        let lines = e.until("readyok");
        assert!(lines.len() == 2 && lines[0].starts_with("info string error"), "{bad:?} answered {lines:?}");
    }
    e.send("go nodes lots");
    let (lines, mv) = e.bestmove();
    assert!(lines[0].starts_with("info string error"), "{lines:?}");
    assert_eq!(mv, "0000");
    // The last good position is kept after a bad one.
    e.send("go nodes 100");
    assert_eq!(e.bestmove().1, "a1e1");
    // A finished game.
    e.send("position fen 8/8/8/g7 r - 0 1");
    e.send("go movetime 20");
    let (lines, mv) = e.bestmove();
    assert!(lines[0].contains("game is over"), "{lines:?}");
    assert_eq!(mv, "0000");

    e.send("quit");
    let t = Instant::now();
    loop {
        if let Some(status) = e.child.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(10), "quit did not end the process");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn end_of_input_ends_the_process() {
    let mut e = Engine::start();
    e.send("isready");
    e.until("readyok");
    drop(e.stdin);
    let status = e.child.wait().unwrap();
    assert!(status.success());
}

/// Without --model (or with `--model builtin`), `banqi-ab` plays with the model built into the
/// binary at its leaves (the strongest agent measured); --no-model leaves the handcrafted
/// evaluation.
#[test]
fn the_built_in_model_is_the_default_evaluation() {
    let cases: [(&[&str], &str); 3] = [
        (&[], "builtin"),
        (&["--model", "builtin"], "builtin"),
        (&["--no-model"], "the handcrafted evaluation"),
    ];
    for (flags, says) in cases {
        let mut child = Command::new(env!("CARGO_BIN_EXE_zeroplay"))
            .args(["uci", "--game", "banqi"])
            .args(flags)
            .env("RUST_LOG", "info")
            .env("NO_COLOR", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("zeroplay starts");
        child.stdin.take().unwrap().write_all(b"isready\ngo nodes 2000\nquit\n").unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(stdout.contains("bestmove "), "{stdout}");
        assert!(stderr.contains("zeroplay uci: banqi-ab") && stderr.contains(says), "{flags:?}: {stderr}");
        assert_eq!(stderr.contains("the model at its leaves"), says == "builtin", "{flags:?}: {stderr}");
    }
}
