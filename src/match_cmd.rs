//! `zeroplay match`: the client side of the Banqi match protocol. It starts an external
//! engine (any command that speaks `zeroplay uci`'s protocol), plays it against one of
//! zeroplay's agents in side-swapped games on shared seeded deals (both games of a match see
//! the same hidden pieces), and reports W/D/L, points and Elo with its interval.
//!
//! Per game: `ucinewgame`; per engine move: `position fen <the position after the last flip
//! or capture> moves <the quiet moves since>`, then `go movetime <ms>`, and the engine has the
//! move time plus a margin to answer `bestmove`. An engine that answers with an illegal move,
//! with something that is not a move, not at all, or that dies, forfeits the game (recorded
//! with the reason); a dead engine is started again for the next game. The handshake (`uci`
//! → `uciok`, `isready` → `readyok`) must succeed at the start, or the command stops with
//! an error naming what the engine did.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use engine::agent::Agent;
use engine::arena::{DEAL_STREAM, GameRecord, MatchRecord, Tally};
use engine::banqi::{Action, Banqi};
use engine::game::{Actor, Game, Outcome, Seat, next_chance};
use engine::spec::AgentSpec;

/// `zeroplay match`.
#[derive(Debug, clap::Args)]
pub struct MatchArgs {
    /// The external engine's command line (run by `sh -c`), e.g. "zeroplay uci --game banqi".
    #[arg(long)]
    pub engine: String,
    /// zeroplay's agent against it (default: banqi-ab at the move time with the built-in model
    /// at its leaves, `banqi-ab:time=MS,model=builtin`).
    #[arg(short = 'a', long)]
    pub agent: Option<String>,
    /// Matches (each two games, seats swapped, one deal).
    #[arg(short = 'n', long, default_value_t = 10)]
    pub matches: u32,
    /// Milliseconds per move for the engine (`go movetime`) and, by default, the agent.
    #[arg(long, default_value_t = 300)]
    pub movetime: u64,
    /// Milliseconds the engine may answer late before it forfeits the game.
    #[arg(long, default_value_t = 1000)]
    pub margin: u64,
    /// Base seed: match i's deal derives from it.
    #[arg(long, default_value_t = 2026)]
    pub seed: u64,
    /// Directory for the game records (games/) and results.json.
    #[arg(short, long)]
    pub out: Option<PathBuf>,
}

/// Why an engine lost a game without playing it out.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Fault {
    /// A move that is not legal here.
    #[error("illegal move {0:?}")]
    Illegal(String),
    /// A reply that is not `bestmove <move>`.
    #[error("no move in its reply {0:?}")]
    Garbage(String),
    /// No `bestmove` within the move time and the margin.
    #[error("no bestmove within {0} ms")]
    Silent(u64),
    /// The process ended.
    #[error("the engine exited")]
    Exited,
}

/// A running engine process.
pub struct Engine {
    command: String,
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    /// The engine's `id name`.
    pub name: String,
}

impl Engine {
    /// Starts `command` and shakes hands (`uci` → `uciok`, `isready` → `readyok`, within
    /// `timeout` each).
    ///
    /// # Errors
    /// The process cannot start, or the handshake fails.
    pub fn start(command: &str, timeout: Duration) -> Result<Engine> {
        let mut child = Command::new("sh")
            .args(["-c", command])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("starting the engine {command:?}"))?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut e = Engine { command: command.to_string(), child, stdin, lines, name: command.to_string() };
        // An engine that exits at once may close its input before "uci" reaches it; what it
        // printed (or that it exited) is the clearer error, so the reply decides.
        let sent = e.send("uci");
        let reply =
            e.until("uciok", timeout).map_err(|f| anyhow::anyhow!("no uciok from {command:?}: {f}"))?;
        sent.context("the engine closed its input")?;
        if let Some(n) = reply.iter().find_map(|l| l.strip_prefix("id name ")) {
            e.name = n.trim().to_string();
        }
        e.send("isready").context("the engine closed its input")?;
        e.until("readyok", timeout).map_err(|f| anyhow::anyhow!("no readyok from {command:?}: {f}"))?;
        Ok(e)
    }

    fn send(&mut self, line: &str) -> std::io::Result<()> {
        writeln!(self.stdin, "{line}")?;
        self.stdin.flush()
    }

    /// Lines up to and including the first that starts with `word`.
    fn until(&mut self, word: &str, timeout: Duration) -> Result<Vec<String>, Fault> {
        let deadline = Instant::now() + timeout;
        let mut out = Vec::new();
        loop {
            match self.lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(l) => {
                    let done = l.split_whitespace().next() == Some(word);
                    out.push(l);
                    if done {
                        return Ok(out);
                    }
                }
                Err(RecvTimeoutError::Timeout) => return Err(Fault::Silent(timeout.as_millis() as u64)),
                Err(RecvTimeoutError::Disconnected) => return Err(Fault::Exited),
            }
        }
    }

    /// The engine's move at `state`, given as `anchor` (the position after the last flip or
    /// capture) and the quiet moves since.
    fn best_move(
        &mut self,
        state: &Banqi,
        anchor: &Banqi,
        quiet: &[Action],
        movetime: Duration,
        margin: Duration,
    ) -> Result<Action, Fault> {
        let mut position = format!("position fen {}", anchor.position_string());
        if !quiet.is_empty() {
            position.push_str(" moves");
            for a in quiet {
                position.push_str(&format!(" {a}"));
            }
        }
        self.send(&position).map_err(|_| Fault::Exited)?;
        self.send(&format!("go movetime {}", movetime.as_millis())).map_err(|_| Fault::Exited)?;
        let lines = self.until("bestmove", movetime + margin)?;
        let last = lines.last().expect("until returns the bestmove line");
        let word = last.split_whitespace().nth(1).unwrap_or("");
        let action = Action::parse(word).map_err(|_| Fault::Garbage(last.clone()))?;
        if !state.is_legal(action) {
            return Err(Fault::Illegal(word.to_string()));
        }
        Ok(action)
    }

    /// Starts the same command again after the process died.
    fn restart(&mut self, timeout: Duration) -> Result<()> {
        let _ = self.child.kill();
        let _ = self.child.wait();
        *self = Engine::start(&self.command.clone(), timeout)?;
        Ok(())
    }

    fn quit(mut self) {
        let _ = self.send("quit");
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One game between the engine and the agent.
pub struct Played {
    /// The actions, reveals included.
    pub record: GameRecord<Banqi>,
    /// Why the engine forfeited, if it did.
    pub fault: Option<Fault>,
}

/// Plays one game: the engine at `engine_seat`, the agent at the other; hidden pieces from
/// the deal seeded by `deal`.
///
/// A fault of the engine ends the game as its loss ([`Played::fault`]); restarting a dead
/// engine is the caller's.
pub fn play_game(
    engine: &mut Engine,
    agent: &mut dyn Agent<Banqi>,
    engine_seat: Seat,
    deal: u64,
    movetime: Duration,
    margin: Duration,
    rng: &mut engine::Rng,
) -> Played {
    let start = Banqi::start();
    let mut state = start.clone();
    let mut anchor = start.clone();
    let mut quiet: Vec<Action> = Vec::new();
    let mut actions = Vec::new();
    let mut chances = Vec::new();
    if engine.send("ucinewgame").is_err() {
        return forfeit(actions, engine_seat, Fault::Exited);
    }
    while state.outcome().is_none() {
        let a = match state.to_move() {
            Actor::Chance => next_chance(&state, &start, deal, &mut chances, rng),
            Actor::Player(seat) if seat == engine_seat => {
                match engine.best_move(&state, &anchor, &quiet, movetime, margin) {
                    Ok(a) => a,
                    Err(f) => return forfeit(actions, engine_seat, f),
                }
            }
            Actor::Player(_) => agent.choose(&state, rng, &mut |_| {}),
        };
        agent.observe(&state, a);
        state.play(a).expect("both sides' actions are checked or legal");
        actions.push(a);
        // After a reveal or a capture the engine is sent the new position itself.
        if state.at_turn_start() && state.quiet_plies() == 0 {
            anchor = state.clone();
            quiet.clear();
        } else if matches!(a, Action::Move { .. }) {
            quiet.push(a);
        }
    }
    Played { record: GameRecord { actions, outcome: state.outcome().expect("ended") }, fault: None }
}

fn forfeit(actions: Vec<Action>, loser: Seat, fault: Fault) -> Played {
    let mut scores = [-1, -1];
    scores[loser.other().index()] = 1;
    let outcome = Outcome::decisive(loser.other(), scores);
    Played { record: GameRecord { actions, outcome }, fault: Some(fault) }
}

/// Runs the command.
///
/// # Errors
/// A bad agent spec, an engine that cannot start or shake hands, or an unwritable `--out`.
pub fn run(args: MatchArgs) -> Result<()> {
    let movetime = Duration::from_millis(args.movetime.max(1));
    let margin = Duration::from_millis(args.margin);
    let spec_text = args.agent.clone().unwrap_or_else(|| {
        format!("banqi-ab:time={}ms,model={}", args.movetime, model::builtin::BUILTIN_MODEL)
    });
    let spec = spec_text.parse::<AgentSpec>()?.with_table_store(modelfile::tables::default_store());
    let mut agent =
        spec.build_with::<Banqi>(&crate::netload::loader::<Banqi>()).map_err(anyhow::Error::msg)?;
    let handshake = Duration::from_secs(10);
    let mut engine = Engine::start(&args.engine, handshake)?;
    println!(
        "match: zeroplay's {spec} (A) against {} (B), {} matches at {} ms a move",
        engine.name, args.matches, args.movetime
    );
    let bar = indicatif::ProgressBar::new(u64::from(args.matches));
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} matches  {msg}")
            .expect("valid template"),
    );
    let mut tally = Tally::default();
    let mut records = Vec::new();
    let mut faults = Vec::new();
    for m in 0..args.matches {
        let seed = engine::derive_seed(args.seed, u64::from(m));
        let deal = engine::derive_seed(seed, DEAL_STREAM);
        let mut rng = engine::rng_from_seed(seed);
        let mut games = Vec::new();
        let mut score_a = 0;
        for (g, engine_seat) in [Seat::Second, Seat::First].into_iter().enumerate() {
            let played =
                play_game(&mut engine, agent.as_mut(), engine_seat, deal, movetime, margin, &mut rng);
            score_a += played.record.outcome.difference(engine_seat.other());
            if let Some(f) = &played.fault {
                tracing::warn!(r#match = m + 1, game = g + 1, fault = %f, "the engine forfeits the game");
                faults.push(format!("match {} game {}: {f}", m + 1, g + 1));
                if *f == Fault::Exited || matches!(f, Fault::Silent(_)) {
                    engine.restart(handshake)?;
                }
            }
            records.push((
                format!("match-{:03}-game-{}.txt", m + 1, g + 1),
                record_text(&spec_text, &engine.name, m, g, seed, &played),
            ));
            games.push(played.record);
        }
        let points_a = engine::arena::points_from_score(score_a);
        tally.add(&MatchRecord { games, score_a, points_a });
        bar.set_message(format!("A {}-{}-{} B", tally.wins, tally.draws, tally.losses));
        bar.inc(1);
    }
    bar.finish_and_clear();
    let engine_name = engine.name.clone();
    engine.quit();
    println!("  A = {spec}\n  B = {}", args.engine);
    println!("  matches: A won {}, drew {}, lost {}", tally.wins, tally.draws, tally.losses);
    println!(
        "  match points: A {:.1} – B {:.1} ({:.1}%)",
        tally.points_a(),
        f64::from(args.matches) - tally.points_a(),
        100.0 * tally.points_a() / f64::from(args.matches.max(1))
    );
    if let Some(e) = tally.elo_bounds() {
        println!("  Elo (A − B): {e}");
    }
    println!("  engine forfeits: {}", faults.len());
    for f in &faults {
        println!("    {f}");
    }
    if let Some(dir) = &args.out {
        let games = dir.join("games");
        std::fs::create_dir_all(&games).with_context(|| format!("creating {}", games.display()))?;
        for (name, text) in &records {
            std::fs::write(games.join(name), text)?;
        }
        let results = serde_json::json!({
            "agent": spec_text,
            "engine": args.engine,
            "engine_name": engine_name,
            "matches": args.matches,
            "movetime_ms": args.movetime,
            "margin_ms": args.margin,
            "seed": args.seed,
            "wins": tally.wins, "draws": tally.draws, "losses": tally.losses,
            "points": tally.points,
            "forfeits": faults,
        });
        std::fs::write(dir.join("results.json"), serde_json::to_string_pretty(&results)?)?;
        println!("saved {}: results.json and {} game records in games/", dir.display(), records.len());
    }
    Ok(())
}

/// A game as the text `zeroplay render banqi` replays.
fn record_text(agent: &str, engine: &str, m: u32, g: usize, seed: u64, played: &Played) -> String {
    let engine_first = g == 1;
    let (first, second) = if engine_first { (engine, agent) } else { (agent, engine) };
    let o = played.record.outcome;
    let result = match (&played.fault, o.winner()) {
        (Some(f), _) => format!("the engine forfeits: {f}"),
        (None, Some(w)) => format!("{} seat wins", if w == Seat::First { "first" } else { "second" }),
        (None, None) => "draw".to_string(),
    };
    let mut t = format!(
        "# zeroplay match game record; draw it with: zeroplay render banqi <this file> -o board.svg\n\
         # game {} of match {} (match seed {seed})\n# engine: {engine}\n\
         # first seat: {first}\n# second seat: {second}\n# result: {result}\n",
        g + 1,
        m + 1
    );
    for chunk in played.record.actions.chunks(8) {
        let words: Vec<String> = chunk.iter().map(ToString::to_string).collect();
        t.push_str(&words.join(" "));
        t.push('\n');
    }
    t
}
