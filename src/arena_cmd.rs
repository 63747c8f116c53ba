//! `zeroplay arena`: N side-swapped matches between two agents, in parallel over the cores,
//! with a progress bar; prints wins/draws/losses, points and the Elo difference.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;
use engine::GameKind;
use engine::agent::NetLoader;
use engine::arena::{EloBounds, Tally, play_match_from};
use engine::game::Game;
use engine::spec::AgentSpec;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use tracing::info;

use crate::args::game_kind;
use crate::config::{ArenaConfig, load};

/// One thread per core when `requested` is 0.
pub fn thread_count(requested: usize) -> usize {
    if requested > 0 { requested } else { std::thread::available_parallelism().map_or(1, |n| n.get()) }
}

/// `zeroplay arena`.
#[derive(Debug, Args)]
pub struct ArenaArgs {
    /// Configuration file (TOML); see configs/arena.toml. Flags given here override it.
    #[arg(short, long)]
    pub config: Option<PathBuf>,
    /// The game.
    #[arg(short, long, value_parser = game_kind())]
    pub game: Option<GameKind>,
    /// Agent A (spec string).
    #[arg(short = 'a', long)]
    pub agent_a: Option<String>,
    /// Agent B (spec string).
    #[arg(short = 'b', long)]
    pub agent_b: Option<String>,
    /// Number of matches (each is two games with the first player swapped).
    #[arg(short = 'n', long)]
    pub matches: Option<u32>,
    /// Base seed; match i uses a seed derived from it, so results are reproducible.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Worker threads (0: one per core).
    #[arg(short = 'j', long)]
    pub threads: Option<usize>,
    /// Start each match from its own random opening of this many clicks (same for both games).
    #[arg(long)]
    pub opening_plies: Option<u32>,
    /// Directory to write the resolved config (config.toml) and results (results.json) to.
    #[arg(short, long)]
    pub out: Option<PathBuf>,
}

/// What an arena run produced (written to `results.json`).
#[derive(Debug, Serialize)]
pub struct ArenaReport {
    /// The game.
    pub game: String,
    /// Agent A's spec.
    pub agent_a: String,
    /// Agent B's spec.
    pub agent_b: String,
    /// Matches played.
    pub matches: u32,
    /// Games played.
    pub games: u32,
    /// A's wins, draws and losses.
    pub wins: u32,
    /// Draws.
    pub draws: u32,
    /// Losses.
    pub losses: u32,
    /// Matches decided by a player without a legal move.
    pub decisive: u32,
    /// A's match points.
    pub points_a: f64,
    /// A's total score over all games.
    pub score_a: i64,
    /// Elo of A minus B; `null` (unbounded) when A scored 0% or 100% of the points.
    pub elo: Option<f64>,
    /// 95% interval, low end; `null` when unbounded below.
    pub elo_lo: Option<f64>,
    /// 95% interval, high end; `null` when unbounded above.
    pub elo_hi: Option<f64>,
    /// Wall time in seconds.
    pub seconds: f64,
    /// Per-match points of A, in match order.
    pub per_match: Vec<f64>,
    /// Every game as a record `zeroplay render` reads: (file name, text), in match order.
    #[serde(skip)]
    pub records: Vec<(String, String)>,
}

/// Runs the command.
///
/// # Errors
/// Bad configuration or agent specs; failure to write the output directory.
pub fn run(args: ArenaArgs) -> Result<()> {
    let mut cfg: ArenaConfig = load(args.config.as_deref())?;
    if let Some(g) = args.game {
        cfg.game = g;
    }
    if let Some(a) = args.agent_a {
        cfg.agent_a = a;
    }
    if let Some(b) = args.agent_b {
        cfg.agent_b = b;
    }
    if let Some(n) = args.matches {
        cfg.matches = n;
    }
    if let Some(s) = args.seed {
        cfg.seed = s;
    }
    if let Some(t) = args.threads {
        cfg.threads = t;
    }
    if let Some(p) = args.opening_plies {
        cfg.opening_plies = p;
    }
    let (a, b) = cfg.validate()?;
    info!(game = ?cfg.game, a = %a, b = %b, matches = cfg.matches, seed = cfg.seed, "arena");
    let report = engine::with_game!(cfg.game, |G| {
        let opts = cfg.options.checked::<G>().map_err(anyhow::Error::msg)?;
        run_arena::<G>(&cfg, &opts, &a, &b, true, &crate::netload::loader::<G>)?
    });
    print_report(&report);
    if let Some(dir) = args.out {
        save(&dir, &cfg, &report)?;
        println!(
            "saved {}: config.toml, results.json and {} game records in games/ (zeroplay render reads them)",
            dir.display(),
            report.records.len()
        );
    }
    Ok(())
}

fn save(dir: &Path, cfg: &ArenaConfig, report: &ArenaReport) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let header = "# The resolved configuration of this arena run (defaults, file and flags combined).\n";
    std::fs::write(dir.join("config.toml"), format!("{header}{}", toml::to_string(cfg)?))?;
    std::fs::write(dir.join("results.json"), serde_json::to_string_pretty(report)?)?;
    let games = dir.join("games");
    std::fs::create_dir_all(&games).with_context(|| format!("creating {}", games.display()))?;
    for (name, text) in &report.records {
        std::fs::write(games.join(name), text)?;
    }
    Ok(())
}

/// Plays the matches of `cfg` for game `G` on `cfg.threads` threads; `loader` makes each
/// thread's network loader for `eval=net` agents.
///
/// # Errors
/// An agent that cannot be built (a bad model file), before any match is played.
pub fn run_arena<G: engine::agent::GameAgents>(
    cfg: &ArenaConfig,
    opts: &G::Options,
    a: &AgentSpec,
    b: &AgentSpec,
    show_progress: bool,
    loader: &(dyn Fn() -> Box<NetLoader<'static, G>> + Sync),
) -> Result<ArenaReport> {
    // Banqi's endgame tables come from (and go to) the disk cache; other specs ignore it.
    let tables = modelfile::tables::default_store();
    let (a, b) = (&a.clone().with_table_store(tables.clone()), &b.clone().with_table_store(tables));
    // Load any network now, so a bad model file is one clear error, not a thread panic.
    for spec in [a, b] {
        spec.build_with::<G>(&loader()).map_err(anyhow::Error::msg)?;
    }
    let threads = thread_count(cfg.threads).min(cfg.matches as usize);
    let bar = if show_progress { ProgressBar::new(cfg.matches as u64) } else { ProgressBar::hidden() };
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} matches  {msg}  eta {eta}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    let started = Instant::now();
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel();
    type Played<G> = (usize, Vec<<G as Game>::Action>, engine::arena::MatchRecord<G>);
    let mut results: Vec<Played<G>> = Vec::with_capacity(cfg.matches as usize);
    std::thread::scope(|s| {
        for _ in 0..threads {
            let tx = tx.clone();
            let next = &next;
            s.spawn(move || {
                let loader = loader();
                let mut agent_a = a.build_with::<G>(&loader).expect("agents were checked before the matches");
                let mut agent_b = b.build_with::<G>(&loader).expect("agents were checked before the matches");
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= cfg.matches as usize {
                        break;
                    }
                    let seed = engine::derive_seed(cfg.seed, i as u64);
                    let (start, opening) = engine::arena::random_opening_with_actions(
                        G::new_game(opts),
                        cfg.opening_plies,
                        &mut engine::rng_from_seed(seed ^ 0x0be1),
                    );
                    let m = play_match_from(&start, agent_a.as_mut(), agent_b.as_mut(), seed);
                    if tx.send((i, opening, m)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut tally = Tally::default();
        for (i, opening, m) in rx {
            tally.add(&m);
            results.push((i, opening, m));
            bar.inc(1);
            if let Some(e) = tally.elo_bounds() {
                bar.set_message(format!("A {}-{}-{}  Elo {}", tally.wins, tally.draws, tally.losses, e));
            }
        }
    });
    bar.finish_and_clear();
    results.sort_by_key(|(i, _, _)| *i);
    let mut tally = Tally::default();
    let mut games = 0;
    let mut records = Vec::new();
    let width = cfg.matches.to_string().len().max(3);
    for (i, opening, m) in &results {
        tally.add(m);
        games += m.games.len() as u32;
        let seed = engine::derive_seed(cfg.seed, *i as u64);
        for (k, g) in m.games.iter().enumerate() {
            let name = format!("match-{:0width$}-game-{}.txt", i + 1, k + 1);
            records.push((name, game_record::<G>(cfg, a, b, *i, seed, k, opening, g)));
        }
    }
    let e = tally.elo_bounds().unwrap_or(EloBounds { diff: Some(0.0), lo: None, hi: None, score: 0.5 });
    Ok(ArenaReport {
        game: G::NAME.into(),
        agent_a: a.to_string(),
        agent_b: b.to_string(),
        matches: results.len() as u32,
        games,
        wins: tally.wins,
        draws: tally.draws,
        losses: tally.losses,
        decisive: tally.decisive,
        points_a: tally.points_a(),
        score_a: tally.score_a,
        elo: e.diff,
        elo_lo: e.lo,
        elo_hi: e.hi,
        seconds: started.elapsed().as_secs_f64(),
        per_match: tally.points,
        records,
    })
}

/// One game as a text file `zeroplay render` (and any reader of the notation) replays: a
/// commented header, the opening's actions, then the game's, from the game's start position.
#[allow(clippy::too_many_arguments)]
fn game_record<G: Game>(
    cfg: &ArenaConfig,
    a: &AgentSpec,
    b: &AgentSpec,
    index: usize,
    seed: u64,
    game: usize,
    opening: &[G::Action],
    record: &engine::arena::GameRecord<G>,
) -> String {
    let (first, second) = if game == 0 { (("A", a), ("B", b)) } else { (("B", b), ("A", a)) };
    let o = record.outcome;
    let result = match o.decisive {
        Some(w) => format!(
            "{} seat wins outright (the other had no legal move); scores {}–{}",
            if w == engine::game::Seat::First { "first" } else { "second" },
            o.scores[0],
            o.scores[1]
        ),
        None => format!("scores {}–{} (first seat – second seat)", o.scores[0], o.scores[1]),
    };
    let mut t = format!(
        "# zeroplay arena game record; draw it with: zeroplay render {} <this file> -o board.svg\n\
         # game {} of match {} of {} (arena seed {}, match seed {seed})\n\
         # first seat: {} = {}\n# second seat: {} = {}\n# result: {result}\n",
        G::NAME,
        game + 1,
        index + 1,
        cfg.matches,
        cfg.seed,
        first.0,
        first.1,
        second.0,
        second.1,
    );
    if cfg.options != crate::config::GameOptions::default() {
        t.push_str("# the game options differ from the defaults (see the arena's config.toml): render\n# needs the same ones\n");
    }
    let line = |t: &mut String, actions: &[G::Action]| {
        for chunk in actions.chunks(8) {
            let words: Vec<String> = chunk.iter().map(ToString::to_string).collect();
            t.push_str(&words.join(" "));
            t.push('\n');
        }
    };
    if !opening.is_empty() {
        t.push_str(&format!(
            "# random opening ({} actions, the same in both games of the match)\n",
            opening.len()
        ));
        line(&mut t, opening);
        t.push_str("# the game\n");
    }
    line(&mut t, &record.actions);
    t
}

/// `1 match`, `2 matches`.
fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Prints the summary.
pub fn print_report(r: &ArenaReport) {
    println!(
        "arena: {} — {}, {}, in {:.1}s",
        r.game,
        count(u64::from(r.matches), "match", "matches"),
        count(u64::from(r.games), "game", "games"),
        r.seconds
    );
    if r.games < 2 * r.matches {
        println!(
            "  (a match is two games with the seats swapped; {} ended after game 1, which a player \
             without a legal move decided)",
            2 * r.matches - r.games
        );
    }
    println!("  A = {}", r.agent_a);
    println!("  B = {}", r.agent_b);
    println!(
        "  matches: A won {}, drew {}, lost {}  ({} decided by a player with no legal move)",
        r.wins, r.draws, r.losses, r.decisive
    );
    let pct = 100.0 * r.points_a / r.matches.max(1) as f64;
    println!(
        "  match points: A {:.1} – B {:.1}  ({pct:.1}%; 1 a match won, ½ drawn)",
        r.points_a,
        r.matches as f64 - r.points_a
    );
    println!(
        "  game score: A {:+} over {} ({:+.2} per game; each game's final points difference, A's view)",
        r.score_a,
        count(u64::from(r.games), "game", "games"),
        r.score_a as f64 / r.games.max(1) as f64
    );
    let e = EloBounds {
        diff: r.elo,
        lo: r.elo_lo,
        hi: r.elo_hi,
        score: r.points_a / f64::from(r.matches.max(1)),
    };
    println!("  Elo (A − B): {e}");
    if r.matches < 2 {
        println!("  (one match says little: play more with -n)");
    }
}
