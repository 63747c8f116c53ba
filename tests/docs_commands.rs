//! Docs that cannot rot: every command in a fenced `sh` block of README.md and
//! docs/operations.md runs here, in order, as its own process, scaled down, and must exit 0
//! without naming a file (in what it prints) that does not exist.
//!
//! How a documented command becomes a test run:
//! - `cargo run --release --` is the `zeroplay` binary under test; `VAR=value` prefixes are
//!   its environment.
//! - Placeholders: `HOST:50051` is a coordinator this test starts from configs/coordinator.toml
//!   (data in `runs/docs-coordinator`, which `RUN/` stands for); a token written `...` is that
//!   coordinator's token for the role.
//! - Scaled down: `local` gets a tiny training round (`--train-config`, one round, any
//!   candidate promoted), few simulations, a time limit and a play-time measurement of one match at
//!   10 ms a move; `arena` one match at a tenth of
//!   the time per move; `match` one match at a tenth of the move time (its engine
//!   `target/release/zeroplay` is the binary under test); `tune` two pairs at 300 nodes a move;
//!   `perft` at most depth 3; `curve` one point at 0.3 minutes, measured in one match; `play` and `uci` read a short script on
//!   stdin; listen addresses become port 0 (a free port).
//! - Servers (`coordinator`, `worker`, `serve`, `train`) run until they are up (a few
//!   seconds, then a health or API check where they print an address), then get SIGTERM and
//!   must stop cleanly with status 0.
//! - Skipped, by name and with the reason printed: a command whose trailing comment starts
//!   with `needs:` (what no test machine has: a cluster, a Docker engine, a GPU, or the minutes
//!   a benchmark takes), and every command of a block preceded by
//!   `<!-- docs-test: needs: … -->`.
//! - Each command has a time limit (three minutes; `local` and `curve` ten; a server one
//!   minute to stop after SIGTERM): past it the command is killed and the test fails naming
//!   it, with the end of its output. Output goes to files, so a leftover process cannot hold
//!   the test up through a pipe.

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::named_paths_missing;

/// One command as the docs show it.
#[derive(Debug)]
struct DocCommand {
    /// `README.md:57`.
    place: String,
    /// The command line, continuations joined, the trailing comment removed.
    line: String,
    /// Why it is not run (`needs: …`), if it is not.
    skip: Option<String>,
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The commands of the `sh` blocks of `file`, in order.
fn doc_commands(file: &str) -> Vec<DocCommand> {
    let text = std::fs::read_to_string(root().join(file)).unwrap();
    let mut out = Vec::new();
    let (mut in_block, mut block_skip, mut prev) = (false, None::<String>, "");
    let mut pending: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        if !in_block {
            if raw.trim() == "```sh" {
                in_block = true;
                block_skip = prev
                    .trim()
                    .strip_prefix("<!-- docs-test:")
                    .and_then(|s| s.strip_suffix("-->"))
                    .map(|s| s.trim().to_string());
            }
            prev = raw;
            continue;
        }
        if raw.trim() == "```" {
            in_block = false;
            prev = raw;
            continue;
        }
        let (start, mut line) = pending.take().unwrap_or((i + 1, String::new()));
        if let Some(body) = raw.trim_end().strip_suffix('\\') {
            line.push_str(body.trim());
            line.push(' ');
            pending = Some((start, line));
            continue;
        }
        line.push_str(raw.trim());
        let (cmd, comment) = match line.find(" #") {
            Some(k) => (line[..k].trim().to_string(), line[k + 2..].trim().to_string()),
            None if line.starts_with('#') => (String::new(), line.clone()),
            None => (line.trim().to_string(), String::new()),
        };
        if cmd.is_empty() {
            continue;
        }
        let skip = comment.starts_with("needs:").then(|| comment.clone()).or_else(|| block_skip.clone());
        out.push(DocCommand { place: format!("{file}:{start}"), line: cmd, skip });
    }
    out
}

/// Shell words: spaces separate, '…' and "…" quote.
fn words(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut quote, mut any) = (Vec::new(), String::new(), None, false);
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            (None, c) => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The background coordinator that `HOST:50051` names.
struct Background {
    child: Child,
    port: u16,
}

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One round of a tiny network on `{min_new}` positions, gated in one quick match that any
/// candidate passes (the commands after `local` need its best model).
const TINY_TRAIN: &str = "min_new_positions = {min_new}\nsteps_per_round = 5\nmax_rounds = 1\npoll_ms = 200\n\
    [train]\nnet = \"tiny\"\nbatch_size = 32\n\
    [gate]\nrule = \"threshold\"\nmatches = 1\nsims = 4\nopening_plies = 2\nthreshold = 0.0\n[gate.leaf]\nlambda = 0.0\n\
    [rating]\nmatches = 1\nanchors = [\"random\"]\n";

/// What `uci` reads: the handshake, the start position, a short search.
const UCI_SCRIPT: &str = "uci\nisready\nucinewgame\n\
    position fen XXXXXXXX/XXXXXXXX/XXXXXXXX/XXXXXXXX - G1A2E2R2H2C2S5g1a2e2r2h2c2s5 0 1\ngo nodes 50\nquit\n";

/// Divides a `time=NNNms` or `time=Ns` in an agent spec by ten.
fn tenth_of_the_time(spec: &str) -> String {
    spec.split(',')
        .map(|kv| match kv.split_once("time=") {
            Some((pre, t)) => {
                let ms: f64 = if let Some(v) = t.strip_suffix("ms") {
                    v.parse().unwrap()
                } else {
                    t.strip_suffix('s').unwrap().parse::<f64>().unwrap() * 1000.0
                };
                format!("{pre}time={}ms", ((ms / 10.0).round() as u64).max(5))
            }
            None => kv.to_string(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// The documented arguments, scaled down for a test run; and the stdin script, if any.
fn scale(args: &[String], work: &Path, coord_port: u16) -> (Vec<String>, Option<&'static str>) {
    let host = format!("http://127.0.0.1:{coord_port}");
    let mut a: Vec<String> = args
        .iter()
        .map(|w| w.replace("http://HOST:50051", &host).replace("RUN/", "runs/docs-coordinator/"))
        .collect();
    for w in a.iter_mut() {
        for flag in ["--listen", "--metrics-listen"] {
            if w.starts_with(&format!("{flag}=")) {
                *w = format!("{flag}=127.0.0.1:0");
            }
        }
    }
    for i in 1..a.len() {
        if a[i - 1] == "--listen" || a[i - 1] == "--metrics-listen" {
            a[i] = "127.0.0.1:0".into();
        }
    }
    let has = |a: &[String], f: &str| a.iter().any(|w| w == f || w.starts_with(&format!("{f}=")));
    let mut stdin = None;
    match a[0].as_str() {
        "local" => {
            let tiny = work.join("docs-tiny-train.toml");
            // TriGolden's games are short in positions and slow to play: fewer of them.
            let min_new = if a.iter().any(|w| w == "trigolden") { "100" } else { "300" };
            let mut train = TINY_TRAIN.replace("{min_new}", min_new);
            if a.iter().any(|w| w == "banqi") {
                // Banqi's default network, which is gated, measured and served inside banqi-ab.
                train = train.replace("net = \"tiny\"", "net = \"nano\"");
            }
            std::fs::write(&tiny, train).unwrap();
            // The time limit only bounds a stuck run: the trainer's one round ends it.
            a.extend(["--sims", "8", "--slots", "2", "--minutes", "8", "--train-config"].map(String::from));
            a.push(tiny.to_str().unwrap().into());
            // The play-time measurement after the run: one match at 10 ms a move.
            a.extend(["--measure-matches", "1", "--measure-ms", "10"].map(String::from));
        }
        "curve" => {
            // A curve of one point a few seconds in, measured in one match at 10 ms a move.
            let tiny = work.join("docs-tiny-curve-train.toml");
            std::fs::write(&tiny, TINY_TRAIN.replace("{min_new}", "300")).unwrap();
            for i in 1..a.len() {
                if a[i - 1] == "--at" {
                    a[i] = "0.3".into();
                }
            }
            a.extend(["-n", "1", "-j", "1", "--time-ms", "10", "--opponent-time-ms", "10"].map(String::from));
            a.extend(["--train-config".into(), tiny.to_str().unwrap().into()]);
        }
        "arena" => {
            let mut i = 1;
            while i < a.len() {
                if a[i] == "-n" || a[i] == "--matches" {
                    a[i + 1] = "1".into();
                }
                if a[i] == "-a" || a[i] == "-b" {
                    a[i + 1] = tenth_of_the_time(&a[i + 1]);
                }
                i += 1;
            }
            if !has(&a, "-n") && !has(&a, "--matches") {
                a.extend(["-n".into(), "1".into()]);
            }
            if a.iter().any(|w| w == "configs/arena.toml") {
                // The config's agents search 800 and 100 simulations; a tenth is enough here.
                a.extend(
                    ["-a", "mcts:sims=80,eval=rollout", "-b", "mcts:sims=10,eval=rollout"].map(String::from),
                );
            }
        }
        "match" => {
            // One match at a tenth of the time; the documented engine path is the release
            // binary, which is the binary under test here.
            for i in 1..a.len() {
                match a[i - 1].as_str() {
                    "-n" | "--matches" => a[i] = "1".into(),
                    "--movetime" => a[i] = (a[i].parse::<u64>().unwrap() / 10).max(1).to_string(),
                    "--engine" => {
                        a[i] = a[i].replace("target/release/zeroplay", env!("CARGO_BIN_EXE_zeroplay"))
                    }
                    _ => {}
                }
            }
        }
        "tune" => {
            // Two pairs at a tiny node budget, into the test's directory.
            for i in 1..a.len() {
                match a[i - 1].as_str() {
                    "-n" | "--pairs" => a[i] = "2".into(),
                    "-o" | "--out" => a[i] = work.join("tune").to_str().unwrap().into(),
                    _ => {}
                }
            }
            a.extend(["--base", "banqi-ab:nodes=300,tt=1"].map(String::from));
        }
        "perft" => {
            let d: u32 = a[2].parse().unwrap();
            a[2] = d.min(3).to_string();
        }
        "play" => stdin = Some("quit\n"),
        "uci" => stdin = Some(UCI_SCRIPT),
        "serve" | "coordinator" if !has(&a, "--listen") => {
            a.extend(["--listen".into(), "127.0.0.1:0".into()])
        }
        _ => {}
    }
    (a, stdin)
}

/// The environment a `VAR=...` prefix stands for: the background coordinator's tokens.
fn env_value(var: &str, value: &str) -> String {
    if value != "..." {
        return value.to_string();
    }
    match var {
        "ZEROPLAY_WORKER_TOKEN" | "ZEROPLAY_TOKEN" => "change-me-worker-token",
        "ZEROPLAY_TRAINER_TOKEN" => "change-me-trainer-token",
        "ZEROPLAY_ADMIN_TOKEN" => "change-me-admin-token",
        other => panic!("no test value for the placeholder {other}=..."),
    }
    .to_string()
}

fn zeroplay(work: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_zeroplay"));
    c.current_dir(work)
        .env("NO_COLOR", "1")
        .env("RUST_LOG", "warn")
        .env("ZEROPLAY_TABLES", work.join("tables"));
    for v in ["ZEROPLAY_WORKER_TOKEN", "ZEROPLAY_TRAINER_TOKEN", "ZEROPLAY_ADMIN_TOKEN", "ZEROPLAY_TOKEN"] {
        c.env_remove(v);
    }
    c
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// How long a scaled-down command may take (they take seconds; `local` and `curve` a minute).
const LIMIT: Duration = Duration::from_secs(180);
const LONG_LIMIT: Duration = Duration::from_secs(600);
/// How long a server may take to stop after SIGTERM.
const STOP_LIMIT: Duration = Duration::from_secs(60);

/// The exit status of `child`; past `limit` it is killed and the test fails with what it
/// printed, so a command that hangs is named instead of holding CI up until its deadline.
fn wait_or_kill(
    child: &mut Child,
    limit: Duration,
    place: &str,
    line: &str,
    out: &Path,
    err: &Path,
) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            let tail = |p: &Path| {
                let t = std::fs::read_to_string(p).unwrap_or_default();
                let cut = t.len().saturating_sub(4000);
                t[t.ceil_char_boundary(cut)..].to_string()
            };
            panic!(
                "{place}: `{line}` still running after {} s; killed. Its output ended:\n{}\n{}",
                limit.as_secs(),
                tail(out),
                tail(err)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A long-running command: up for a few seconds (and answering, where it prints an address),
/// then SIGTERM; it must stop by itself with status 0.
fn run_server(mut cmd: Command, place: &str, line: &str) -> String {
    let out_path = std::env::temp_dir().join(format!("zeroplay-docs-{}.out", std::process::id()));
    let err_path = out_path.with_extension("err");
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let mut exited = None;
    while start.elapsed() < Duration::from_secs(4) {
        if let Some(s) = child.try_wait().unwrap() {
            exited = Some(s);
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let printed = std::fs::read_to_string(&out_path).unwrap_or_default();
    if exited.is_none() {
        // Where it prints its address, it must answer there.
        if let Some(addr) = printed.split("http://").nth(1).and_then(|s| s.split('/').next()) {
            let addr: std::net::SocketAddr = addr.parse().unwrap();
            let (status, body) = zeroplay_telemetry::http_get(addr, "/api/info").unwrap();
            assert_eq!(status, 200, "{place}: `{line}` answers /api/info with {status}: {body}");
        }
        let ok = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
        assert!(ok.success());
    }
    let status = wait_or_kill(&mut child, STOP_LIMIT, place, line, &out_path, &err_path);
    let printed = std::fs::read_to_string(&out_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    let _ = std::fs::remove_file(&out_path);
    let _ = std::fs::remove_file(&err_path);
    assert!(
        status.success(),
        "{place}: `{line}` exited with {status} (SIGTERM {}):\n{printed}\n{stderr}",
        if exited.is_none() { "sent" } else { "not needed" },
    );
    printed
}

#[test]
fn every_documented_command_runs_as_written() {
    let mut commands = doc_commands("README.md");
    commands.extend(doc_commands("docs/operations.md"));
    assert!(commands.len() > 20, "too few commands found: {commands:?}");
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path();
    copy_dir(&root().join("configs"), &work.join("configs"));
    copy_dir(&root().join("deploy"), &work.join("deploy"));

    // HOST:50051.
    let port = common::cluster::free_port();
    let background = Background {
        child: zeroplay(work)
            .args([
                "coordinator",
                "--config",
                "configs/coordinator.toml",
                "--data-dir",
                "runs/docs-coordinator",
            ])
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
        port,
    };
    std::thread::sleep(Duration::from_secs(1));

    let (mut ran, mut skipped) = (0, Vec::new());
    for c in &commands {
        if let Some(why) = &c.skip {
            skipped.push(format!("{}: `{}` ({why})", c.place, c.line));
            continue;
        }
        let w = words(&c.line);
        let is_env = |w: &String| {
            w.split_once('=').is_some_and(|(k, _)| k.chars().all(|ch| ch.is_ascii_uppercase() || ch == '_'))
        };
        let n_env = w.iter().take_while(|w| is_env(w)).count();
        let (env, rest) = w.split_at(n_env);
        let args = match rest.split_at_checked(4) {
            Some((head, args)) if head == ["cargo", "run", "--release", "--"] && !args.is_empty() => {
                args.to_vec()
            }
            _ => panic!("{}: `{}` is neither a zeroplay command nor marked `# needs: …`", c.place, c.line),
        };
        let (args, stdin) = scale(&args, work, background.port);
        let mut cmd = zeroplay(work);
        cmd.args(&args);
        for kv in env {
            let (k, v) = kv.split_once('=').unwrap();
            cmd.env(k, env_value(k, v));
        }
        eprintln!("{}: zeroplay {}", c.place, args.join(" "));
        let started = Instant::now();
        let printed = match args[0].as_str() {
            "coordinator" | "worker" | "serve" | "train" => run_server(cmd, &c.place, &c.line),
            _ => {
                // Output to files, not pipes: a process the command leaves behind cannot hold
                // the test up by keeping a pipe open.
                let (out_path, err_path) = (work.join("docs-command.out"), work.join("docs-command.err"));
                let mut child = cmd
                    .stdin(Stdio::piped())
                    .stdout(std::fs::File::create(&out_path).unwrap())
                    .stderr(std::fs::File::create(&err_path).unwrap())
                    .spawn()
                    .unwrap();
                let mut input = child.stdin.take().unwrap();
                input.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
                drop(input);
                let limit = if matches!(args[0].as_str(), "local" | "curve") { LONG_LIMIT } else { LIMIT };
                let status = wait_or_kill(&mut child, limit, &c.place, &c.line, &out_path, &err_path);
                let printed = std::fs::read_to_string(&out_path).unwrap_or_default();
                assert!(
                    status.success(),
                    "{}: `{}` (run as `zeroplay {}`) failed with {status}:\n{printed}\n{}",
                    c.place,
                    c.line,
                    args.join(" "),
                    std::fs::read_to_string(&err_path).unwrap_or_default()
                );
                printed
            }
        };
        if args[0] == "uci" {
            assert!(printed.contains("uciok") && printed.contains("bestmove"), "{}: {printed}", c.place);
        }
        if args[0] == "local" && args.iter().any(|w| w == "banqi") {
            // What a player meets with a nano model: banqi-ab with it at the leaves, against
            // banqi-ab alone, the AI served before any model.
            assert!(
                printed.contains("at play time: the game's searcher with the network at its leaves (banqi-ab:time=10ms,model=")
                    && printed.contains(") against banqi-ab:time=10ms:"),
                "{}: {printed}",
                c.place
            );
        }
        eprintln!("  ... {:.1}s", started.elapsed().as_secs_f64());
        let missing = named_paths_missing(&printed, work);
        assert!(
            missing.is_empty(),
            "{}: `{}` names files that do not exist: {missing:?}\n{printed}",
            c.place,
            c.line
        );
        ran += 1;
    }
    drop(background);
    eprintln!("ran {ran} documented commands; skipped {}:", skipped.len());
    for s in &skipped {
        eprintln!("  skipped {s}");
    }
    assert!(ran >= 20, "only {ran} commands ran");
    for s in &skipped {
        assert!(s.contains("needs:"), "skipped without a reason: {s}");
    }
}

#[test]
fn the_parser_joins_continuations_and_reads_skip_marks() {
    let cmds = doc_commands("README.md");
    let train = cmds.iter().find(|c| c.line.contains(" train ")).expect("the README's train command");
    assert!(train.line.contains("--run-dir RUN/trainer"), "{train:?}");
    assert_eq!(words("a 'b c' \"d\" e"), ["a", "b c", "d", "e"]);
    assert_eq!(tenth_of_the_time("mcts:time=500ms,eval=net"), "mcts:time=50ms,eval=net");
    assert_eq!(tenth_of_the_time("mcts:time=1s"), "mcts:time=100ms");
    let ops = doc_commands("docs/operations.md");
    assert!(ops.iter().all(|c| c.skip.is_some()), "{ops:?}");
}
