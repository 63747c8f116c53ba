//! `zeroplay bench serve`: the play server measured through its HTTP API — page load (the
//! client's files and the first game), AI move latency against the time asked for,
//! simulations/s through the server, and memory per held game.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use engine::battlenumber::BattleNumber;
use engine::trigolden::TriGolden;
use engine::{Game, GameKind};
use serde_json::{Value, json};
use zeroplay_server::{ServeConfig, client};

/// `zeroplay bench serve`.
#[derive(Debug, Args)]
pub struct ServeBenchArgs {
    /// AI times per move to measure, in milliseconds (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "100,1000")]
    pub ms: Vec<u64>,
    /// AI moves per time setting (each from a different position).
    #[arg(long, default_value_t = 20)]
    pub moves: usize,
    /// Games created to measure memory per held game (per game kind).
    #[arg(long, default_value_t = 1000)]
    pub games: usize,
    /// Serve this model file to the game its metadata names, as `serve --model` does (once
    /// per game). A game without one: Battle Number the rollout AI, TriGolden
    /// `--trigolden-agent`, Banqi the alpha-beta AI.
    #[arg(long)]
    pub model: Vec<std::path::PathBuf>,
    /// The same as `--model` (its older spelling for a TriGolden model).
    #[arg(long, hide = true)]
    pub trigolden_model: Option<std::path::PathBuf>,
    /// TriGolden AI, as `serve`'s `[games.trigolden] agent` (e.g. `trigolden-user` for the user's file
    /// clock, to compare with the default's `clock=turn`).
    #[arg(long, default_value = "auto")]
    pub trigolden_agent: String,
    /// The same as `--model` (its older spelling for a Banqi model).
    #[arg(long, hide = true)]
    pub banqi_model: Option<std::path::PathBuf>,
    /// Games whose AI latency is measured (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "battlenumber,trigolden,banqi")]
    pub ai_games: Vec<String>,
    /// Seed of the positions.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Resident memory of this process, in bytes (Linux; 0 elsewhere).
fn rss() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1).and_then(|p| p.parse::<u64>().ok()))
        .map_or(0, |pages| pages * 4096)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() { f64::NAN } else { v[v.len() / 2] }
}

/// Random clicks from the start of game `G`, `n` of them (fewer if the game ends).
fn random_clicks<G: Game>(n: usize, seed: u64) -> Vec<String> {
    let mut s = G::new_game(&Default::default());
    let mut rng = engine::rng_from_seed(seed);
    let mut out = Vec::new();
    let mut legal = Vec::new();
    while out.len() < n && s.outcome().is_none() {
        s.legal_actions(&mut legal);
        let a = legal[rand::RngExt::random_range(&mut rng, 0..legal.len())];
        s.play(a).expect("legal");
        out.push(a.to_string());
    }
    // End on a turn start, where the AI is asked to move.
    while !s.at_turn_start() && s.outcome().is_none() {
        s.legal_actions(&mut legal);
        let a = legal[0];
        s.play(a).expect("legal");
        out.push(a.to_string());
    }
    out
}

fn ok(r: std::io::Result<client::Response>, what: &str) -> Result<Value> {
    let r = r.with_context(|| what.to_string())?;
    if !(200..300).contains(&r.status) {
        bail!("{what}: HTTP {} {}", r.status, String::from_utf8_lossy(&r.body));
    }
    Ok(r.json())
}

/// GETs `path` on a new connection asking for gzip, as a browser does; returns the status
/// and the bytes that came over the wire (head and body).
fn fetch_gzip(addr: SocketAddr, path: &str) -> Result<(u16, usize)> {
    use std::io::{Read, Write};
    let mut c = std::net::TcpStream::connect(addr)?;
    c.set_read_timeout(Some(std::time::Duration::from_secs(30)))?;
    write!(c, "GET {path} HTTP/1.1\r\nHost: bench\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n")?;
    let mut buf = Vec::new();
    c.read_to_end(&mut buf)?;
    let head = String::from_utf8_lossy(&buf[..buf.len().min(64)]).to_string();
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    if status != 200 {
        bail!("GET {path}: {head}");
    }
    Ok((status, buf.len()))
}

/// A new game of `kind` after `plies` clicks chosen at random among the server's legal
/// clicks (fewer if the game ends), stopped at a turn start.
fn game_random(me: &client::Player, kind: &str, plies: usize, seed: u64) -> Result<String> {
    let mut rng = engine::rng_from_seed(seed);
    let mut v = ok(
        me.json("POST", "/api/games", Some(&json!({"game": kind, "ai_seat": "none", "seed": seed}))),
        "new game",
    )?;
    let id = v["id"].as_str().context("game id")?.to_string();
    let mut n = 0;
    while v["outcome"].is_null() && (n < plies || v["turn_start"] != true) {
        let legal = v["legal"].as_array().context("legal")?;
        let last_plies = n + 1 >= plies;
        // Near the end, the first legal click: quickest to a turn start.
        let pick = if last_plies { 0 } else { rand::RngExt::random_range(&mut rng, 0..legal.len()) };
        let a = legal[pick]["action"].as_str().context("action")?.to_string();
        v = ok(me.json("POST", &format!("/api/games/{id}/click"), Some(&json!({"action": a}))), "click")?;
        n += 1;
    }
    Ok(id)
}

/// A game of `kind` at the position after `clicks` (played through the API).
fn game_at(me: &client::Player, kind: &str, clicks: &[String]) -> Result<String> {
    let v = ok(me.json("POST", "/api/games", Some(&json!({"game": kind, "ai_seat": "none"}))), "new game")?;
    let id = v["id"].as_str().context("game id")?.to_string();
    for c in clicks {
        ok(me.json("POST", &format!("/api/games/{id}/click"), Some(&json!({"action": c}))), "click")?;
    }
    Ok(id)
}

/// Runs the benchmark.
///
/// # Errors
/// A server that fails to start or answers an error.
pub fn run(args: ServeBenchArgs) -> Result<()> {
    let mut cfg = ServeConfig {
        max_games: args.games * 2 + args.moves * args.ms.len() * 6 + 16,
        max_games_per_client: usize::MAX / 2,
        max_ai_ms: args.ms.iter().copied().max().unwrap_or(1000).max(1000),
        ..ServeConfig::default()
    }
    .with_agent(GameKind::of::<TriGolden>(), &args.trigolden_agent);
    let files = args.model.iter().chain(&args.trigolden_model).chain(&args.banqi_model).cloned();
    for (kind, file) in crate::netload::models_by_game(files)? {
        cfg = cfg.with_model(kind, file);
    }
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let listener = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
    let addr = listener.local_addr()?;
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = rt.spawn(zeroplay_server::run(cfg, listener, async move {
        let _ = stop_rx.await;
    }));
    std::thread::sleep(Duration::from_millis(200));
    // One player: it keeps the secret of each game it creates.
    let me = client::Player::new(addr);
    let info = ok(me.json("GET", "/api/info", None), "info")?;
    println!(
        "zeroplay bench serve: server on {addr}, model versions {} (0: no network, the game's own AI)",
        info["model_versions"]
    );

    // Page load: what a browser fetches to show a game (the page, its script and style, each
    // on a new connection, gzip asked for as browsers do), then the first game's view.
    println!(
        "\nPage load through HTTP ({} loads per game; medians; new connection per request):",
        args.moves
    );
    println!("| file | bytes | gzip bytes on the wire |");
    println!("|---|---|---|");
    for path in ["/", "/app.js", "/style.css"] {
        let plain = me.request("GET", path, None, "text/plain")?.body.len();
        let (_, wire) = fetch_gzip(addr, path)?;
        println!("| {path} | {plain} | {wire} |");
    }
    println!("\n| game | page + script + style | first game (POST /api/games) | whole load |");
    println!("|---|---|---|---|");
    for kind in GameKind::NAMES {
        let (mut files, mut first, mut whole) = (vec![], vec![], vec![]);
        for _ in 0..args.moves.max(1) {
            let t = Instant::now();
            for path in ["/", "/app.js", "/style.css"] {
                fetch_gzip(addr, path)?;
            }
            let f = t.elapsed().as_secs_f64() * 1e3;
            let t2 = Instant::now();
            let v = ok(
                me.json("POST", "/api/games", Some(&json!({"game": kind, "ai_seat": "second"}))),
                "new game",
            )?;
            let g = t2.elapsed().as_secs_f64() * 1e3;
            files.push(f);
            first.push(g);
            whole.push(f + g);
            let id = v["id"].as_str().context("game id")?;
            me.request("DELETE", &format!("/api/games/{id}"), None, "text/plain")?;
        }
        println!(
            "| {kind} | {:.2} ms | {:.2} ms | {:.2} ms |",
            median(&mut files),
            median(&mut first),
            median(&mut whole)
        );
    }

    // AI latency and simulations/s per game, from positions a random number of clicks in
    // (chosen among the server's legal clicks, so that Banqi's flips are resolved by its deal).
    for kind in &args.ai_games {
        println!(
            "\nAI moves through the server ({kind}, {} moves per setting; medians; agent {}):",
            args.moves,
            info["agents"][kind.as_str()].as_str().unwrap_or("the server's")
        );
        println!(
            "| asked | latency | over the asked time | slowest | simulations/s | simulations per move |"
        );
        println!("|---|---|---|---|---|---|");
        for &ms in &args.ms {
            let (mut lat, mut over, mut rate, mut sims) = (vec![], vec![], vec![], vec![]);
            for i in 0..args.moves {
                // From the first reply turn (one click in: the first two-piece turn) on.
                let plies = 1 + (i * 7) % 30;
                let id = game_random(&me, kind, plies, args.seed * 1000 + i as u64)?;
                let t = Instant::now();
                let r = me.request("POST", &format!("/api/games/{id}/ai?ms={ms}"), None, "text/plain")?;
                let took = t.elapsed().as_secs_f64() * 1e3;
                let done =
                    r.events().into_iter().rev().find(|(e, _)| e == "done").context("no done event")?.1;
                let n = done["search"]["sims"].as_f64().unwrap_or(0.0);
                let el = done["search"]["elapsed_ms"].as_f64().unwrap_or(ms as f64).max(1.0);
                lat.push(took);
                over.push(took - ms as f64);
                rate.push(n / (el / 1e3));
                sims.push(n);
                me.request("DELETE", &format!("/api/games/{id}"), None, "text/plain")?;
            }
            let slowest = lat.iter().copied().fold(0.0, f64::max);
            println!(
                "| {ms} ms | {:.1} ms | {:+.1} ms | {slowest:.1} ms | {:.0} | {:.0} |",
                median(&mut lat),
                median(&mut over),
                median(&mut rate),
                median(&mut sims)
            );
        }
    }

    // Memory per held game: many games at a mid-game position.
    if args.games == 0 {
        let _ = stop_tx.send(());
        rt.block_on(server)??;
        return Ok(());
    }
    println!("\nGames held ({} per kind, each at a mid-game position):", args.games);
    println!("| game | clicks in | RSS before | RSS after | per game |");
    println!("|---|---|---|---|---|");
    for (kind, clicks) in [
        (BattleNumber::NAME, random_clicks::<BattleNumber>(60, args.seed)),
        (TriGolden::NAME, random_clicks::<TriGolden>(20, args.seed)),
    ] {
        let token = {
            let id = game_at(&me, kind, &clicks)?;
            let v = ok(me.json("GET", &format!("/api/games/{id}"), None), "game")?;
            me.request("DELETE", &format!("/api/games/{id}"), None, "text/plain")?;
            v["replay"].as_str().context("replay")?.to_string()
        };
        let before = rss();
        let mut ids = Vec::with_capacity(args.games);
        for _ in 0..args.games {
            let v = ok(
                me.json("POST", "/api/games", Some(&json!({"replay": token, "ai_seat": "none"}))),
                "new game",
            )?;
            ids.push(v["id"].as_str().context("id")?.to_string());
        }
        let after = rss();
        let held = ok(me.json("GET", "/api/info", None), "info")?["games_held"].as_u64().unwrap_or(0);
        println!(
            "| {kind} | {} | {:.1} MiB | {:.1} MiB | {:.1} KiB ({held} held) |",
            clicks.len(),
            before as f64 / 1048576.0,
            after as f64 / 1048576.0,
            after.saturating_sub(before) as f64 / args.games as f64 / 1024.0
        );
        for id in ids {
            me.request("DELETE", &format!("/api/games/{id}"), None, "text/plain")?;
        }
    }
    let _ = stop_tx.send(());
    rt.block_on(server)??;
    Ok(())
}
