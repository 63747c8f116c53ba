//! `zeroplay uci --game banqi`: the line protocol external Banqi match tools speak, on stdin
//! and stdout (UCI's shape, with Banqi's position strings and moves).
//!
//! | in | out |
//! |---|---|
//! | `uci` | `id name …`, `id author …`, `uciok` |
//! | `isready` | `readyok` |
//! | `ucinewgame` | (the start position) |
//! | `position fen <position string> [moves m1 m2 …]`, `position startpos [moves …]` | — |
//! | `go movetime <ms>`, `go nodes <n>`, `go wtime <ms> btime <ms> [winc …] [binc …]` | `info …` lines, then `bestmove <move>` |
//! | `quit` | (exit) |
//!
//! The position string is the state after the last flip or capture and `moves` are the quiet
//! moves since, so repetitions are seen. Moves are four characters (`e1e2`; a flip is `f0f0`).
//! Anything malformed or impossible is answered with `info string error …` and changes
//! nothing; `go` on a finished game answers `bestmove 0000`. Logs go to stderr only.

use std::io::{BufRead, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use engine::banqi::ab::SharedTables;
use engine::banqi::ab::{AbSettings, SearchResult, Searcher, WIN};
use engine::banqi::tablebase::TableStore;
use engine::banqi::{Action, Banqi};
use engine::eval::Evaluator;
use engine::game::{Actor, Game};
use engine::mcts::{Budget, Mcts, MctsConfig, Progress};

use crate::cli::{UciArgs, UciSearch};

/// How a session searches.
enum Engine {
    /// MCTS with chance nodes and this leaf evaluator (a network, or random playouts).
    Mcts { evaluator: Arc<dyn Evaluator<Banqi>>, config: MctsConfig },
    /// `banqi-ab`, whose tables carry over from move to move.
    AlphaBeta(Box<Searcher>),
}

/// The engine's side of the protocol: one position, one searcher.
pub struct Session {
    state: Banqi,
    engine: Engine,
    default_movetime: Duration,
    seed: u64,
    searches: u64,
}

/// What the driver should do after a line.
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    /// Read the next line.
    Continue,
    /// `quit`: stop.
    Quit,
}

impl Session {
    /// A session at the start position that searches with MCTS and `evaluator`.
    pub fn new(evaluator: Arc<dyn Evaluator<Banqi>>, default_movetime: Duration, seed: u64) -> Session {
        let config = MctsConfig { batch_size: evaluator.preferred_batch(), ..MctsConfig::default() };
        let engine = Engine::Mcts { evaluator, config };
        Session { state: Banqi::start(), engine, default_movetime, seed, searches: 0 }
    }

    /// A session at the start position that searches with `banqi-ab` (default settings; the
    /// budget comes from each `go`), keeping its endgame tables in `tables`, its leaves valued
    /// by `leaf` if given (a network) else by the handcrafted evaluation.
    pub fn alpha_beta(
        default_movetime: Duration,
        seed: u64,
        tables: Option<Arc<dyn TableStore>>,
        leaf: Option<Arc<dyn Evaluator<Banqi>>>,
    ) -> Session {
        let settings = AbSettings { store: tables.map(SharedTables), ..AbSettings::default() };
        let searcher = Searcher::with_leaf(settings, leaf);
        let engine = Engine::AlphaBeta(Box::new(searcher));
        Session { state: Banqi::start(), engine, default_movetime, seed, searches: 0 }
    }

    /// The current position.
    pub fn position(&self) -> &Banqi {
        &self.state
    }

    /// Handles one input line, writing the replies to `out`.
    ///
    /// # Errors
    /// Only a failure to write `out`.
    pub fn handle(&mut self, line: &str, out: &mut dyn Write) -> std::io::Result<Next> {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some((&cmd, rest)) = words.split_first() else { return Ok(Next::Continue) };
        match cmd {
            "uci" => {
                writeln!(out, "id name zeroplay {}", engine::ENGINE_VERSION)?;
                writeln!(out, "id author the zeroplay authors")?;
                writeln!(out, "uciok")?;
            }
            "isready" => writeln!(out, "readyok")?,
            "ucinewgame" => self.state = Banqi::start(),
            "position" => {
                if let Err(e) = self.position_command(rest) {
                    writeln!(out, "info string error {e}")?;
                }
            }
            "go" => self.go(rest, out)?,
            // Searches run to their budget before `bestmove`, so there is nothing to stop.
            "stop" | "ponderhit" => {}
            "setoption" | "debug" | "register" => {
                writeln!(out, "info string {cmd} is not supported; ignored")?
            }
            "quit" => return Ok(Next::Quit),
            other => writeln!(out, "info string error unknown command {other:?}")?,
        }
        out.flush()?;
        Ok(Next::Continue)
    }

    fn position_command(&mut self, args: &[&str]) -> Result<(), String> {
        let moves_at = args.iter().position(|&w| w == "moves");
        let (head, moves) = match moves_at {
            Some(i) => (&args[..i], &args[i + 1..]),
            None => (args, &[][..]),
        };
        let mut state = match head.split_first() {
            Some((&"startpos", [])) => Banqi::start(),
            Some((&"fen", fen)) if !fen.is_empty() => {
                Banqi::from_position_string(&fen.join(" ")).map_err(|e| e.to_string())?
            }
            _ => {
                return Err(
                    "expected `position fen <position string> [moves …]` or `position startpos`".into()
                );
            }
        };
        for m in moves {
            let a = Action::parse(m).map_err(|e| e.to_string())?;
            if matches!(a, Action::Flip(_) | Action::Reveal(_)) {
                return Err(format!(
                    "move {m}: a flip's piece is not known here; send the position string after it"
                ));
            }
            state.play(a).map_err(|e| format!("move {m}: {e}"))?;
        }
        self.state = state;
        Ok(())
    }

    /// The time and node limits of a `go`.
    fn budget(&self, args: &[&str]) -> Result<(Option<Duration>, Option<u64>), String> {
        let mut it = args.iter();
        let mut movetime = None;
        let mut nodes = None;
        let mut clock = [None, None];
        let mut inc = [0u64, 0];
        while let Some(&k) = it.next() {
            let mut num = || -> Result<u64, String> {
                it.next().and_then(|v| v.parse().ok()).ok_or_else(|| format!("go {k} needs a number"))
            };
            match k {
                "movetime" => movetime = Some(num()?),
                "nodes" => nodes = Some(num()?),
                "wtime" => clock[0] = Some(num()?),
                "btime" => clock[1] = Some(num()?),
                "winc" => inc[0] = num()?,
                "binc" => inc[1] = num()?,
                "movestogo" | "depth" => {
                    num()?;
                }
                "infinite" | "ponder" => {
                    return Err(format!("go {k} is not supported (use movetime or nodes)"));
                }
                other => return Err(format!("unknown go parameter {other:?}")),
            }
        }
        // wtime is red's clock (the first colour of the notation).
        let side = self.state.colour_to_move().map_or(0, |c| c.index());
        let time = movetime.map(Duration::from_millis).or_else(|| {
            clock[side].map(|left| {
                Duration::from_millis(left / 20 + inc[side] * 3 / 4).min(Duration::from_millis(left / 2))
            })
        });
        Ok(match (time, nodes) {
            (None, None) => (Some(self.default_movetime), None),
            // A few milliseconds for replying.
            (t, n) => (t.map(|t| t.saturating_sub(Duration::from_millis(3))), n),
        })
    }

    fn go(&mut self, args: &[&str], out: &mut dyn Write) -> std::io::Result<()> {
        let budget = match self.budget(args) {
            Ok(b) => b,
            Err(e) => {
                writeln!(out, "info string error {e}")?;
                return writeln!(out, "bestmove 0000");
            }
        };
        if let Some(o) = self.state.outcome() {
            let what = match o.winner() {
                None => "drawn".to_string(),
                Some(s) => format!("won by {:?}", self.state.colour_of(s).expect("colours are assigned")),
            };
            writeln!(out, "info string error the game is over ({what})")?;
            return writeln!(out, "bestmove 0000");
        }
        let mut legal = Vec::new();
        self.state.legal_actions(&mut legal);
        let start = Instant::now();
        let best = if legal.len() == 1 {
            legal[0]
        } else if let Engine::AlphaBeta(searcher) = &mut self.engine {
            searcher.set_budget(budget.0, budget.1);
            let mut lines = Vec::new();
            let mut last = Instant::now();
            let result = searcher.search(&self.state, |r, elapsed| {
                if last.elapsed() >= Duration::from_millis(500) {
                    last = Instant::now();
                    lines.push(ab_info_line(r, elapsed));
                }
            });
            for l in lines {
                writeln!(out, "{l}")?;
            }
            writeln!(out, "{}", ab_info_line(&result, start.elapsed()))?;
            result.best
        } else {
            let Engine::Mcts { evaluator, config } = &self.engine else { unreachable!("matched above") };
            let budget = Budget { sims: budget.1, deadline: budget.0.map(|t| Instant::now() + t) };
            let mut tree = Mcts::new(self.state.clone(), config.clone());
            let mut rng = engine::rng_from_seed(engine::derive_seed(self.seed, self.searches));
            self.searches += 1;
            evaluator.begin_move();
            let mut last = Instant::now();
            let mut lines = Vec::new();
            tree.search(evaluator.as_ref(), budget, &mut rng, &mut |p: &Progress<Action>| {
                if last.elapsed() >= Duration::from_millis(500) {
                    last = Instant::now();
                    lines.push(info_line(p, &[]));
                }
            });
            for l in lines {
                writeln!(out, "{l}")?;
            }
            let pv: Vec<Action> = tree
                .principal_variation(12)
                .into_iter()
                .take_while(|a| !matches!(a, Action::Reveal(_)))
                .collect();
            let progress = Progress {
                sims: u64::from(tree.root_visits()),
                nodes: tree.node_count(),
                max_depth: pv.len() as u32,
                elapsed: start.elapsed(),
                best: tree.best_action(),
                value: tree.root_value(),
            };
            writeln!(out, "{}", info_line(&progress, &pv))?;
            tree.best_action().expect("a searched root has children")
        };
        debug_assert!(matches!(self.state.to_move(), Actor::Player(_)));
        writeln!(out, "bestmove {best}")
    }
}

/// An `info` line: depth (of the tree), nodes (simulations), time, nps, score (the root value
/// ×1000, from the side to move's view), pv.
fn info_line(p: &Progress<Action>, pv: &[Action]) -> String {
    let ms = p.elapsed.as_millis().max(1);
    let mut s = format!(
        "info depth {} nodes {} time {} nps {} score cp {}",
        p.max_depth,
        p.sims,
        ms,
        (p.sims as u128 * 1000 / ms),
        (p.value * 1000.0).round() as i32
    );
    if !pv.is_empty() {
        s.push_str(" pv");
        for a in pv {
            s.push_str(&format!(" {a}"));
        }
    }
    s
}

/// `banqi-ab`'s `info` line: depth (of the last finished iteration), nodes, time, nps,
/// score (centipawn-like points; `mate` for a forced result, in plies), pv (the move).
fn ab_info_line(r: &SearchResult, elapsed: Duration) -> String {
    let ms = elapsed.as_millis().max(1);
    let score = if r.score.abs() >= WIN - 1_000 {
        let plies = WIN - r.score.abs();
        format!("mate {}", if r.score > 0 { plies } else { -plies })
    } else {
        format!("cp {}", r.score)
    };
    format!(
        "info depth {} nodes {} time {} nps {} score {score} pv {}",
        r.depth,
        r.nodes,
        ms,
        u128::from(r.nodes) * 1000 / ms,
        r.best
    )
}

/// Runs the command: reads stdin until `quit` or end of input.
///
/// # Errors
/// A model file that cannot be loaded, or a broken stdout.
pub fn run(args: UciArgs) -> Result<()> {
    if args.game != engine::GameKind::Banqi {
        anyhow::bail!("the match protocol is for Banqi: `zeroplay uci --game banqi`");
    }
    let movetime = Duration::from_millis(args.movetime);
    // A one-layer (`nano`) model is banqi-ab's leaf evaluation; a larger one plays through
    // MCTS (docs/benchmarks.md, issue 39). The metadata decides, so the model loads once.
    let one_layer = match &args.model {
        Some(path) => crate::netload::one_layer(args.game, path)?,
        None => false,
    };
    let search = args.search.unwrap_or(if args.model.is_none() || one_layer {
        UciSearch::Ab
    } else {
        UciSearch::Mcts
    });
    let mut session = match (search, &args.model) {
        (UciSearch::Ab, model) => {
            // Without a file, the built-in model: the strongest agent is the default.
            let name = match model {
                Some(path) => Some(path.to_string_lossy().into_owned()),
                None if args.no_model => None,
                None => Some(model::builtin::BUILTIN_MODEL.to_string()),
            };
            let leaf = match &name {
                Some(m) => Some(
                    crate::netload::loader::<Banqi>()(m, &engine::LeafSettings::net_alone())
                        .map_err(anyhow::Error::msg)?,
                ),
                None => None,
            };
            tracing::info!(
                model = name.as_deref().unwrap_or("none"),
                "zeroplay uci: banqi-ab (expectiminimax with endgame tables{}); reading commands on stdin",
                if leaf.is_some() { ", the model at its leaves" } else { ", the handcrafted evaluation" }
            );
            Session::alpha_beta(movetime, args.seed, modelfile::tables::default_store(), leaf)
        }
        (UciSearch::Mcts, model) => {
            let evaluator: Arc<dyn Evaluator<Banqi>> = match model {
                Some(path) => {
                    let leaf = engine::LeafSettings { lambda: args.lambda, ..engine::LeafSettings::served() };
                    crate::netload::loader::<Banqi>()(&path.to_string_lossy(), &leaf)
                        .map_err(anyhow::Error::msg)?
                }
                None => engine::LeafSettings::default().without_net(),
            };
            tracing::info!(evaluator = %evaluator.name(), "zeroplay uci: MCTS; reading commands on stdin");
            Session::new(evaluator, movetime, args.seed)
        }
    };
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for line in stdin.lock().lines() {
        let line = line?;
        if session.handle(&line, &mut out)? == Next::Quit {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session() -> Session {
        Session::new(Arc::new(engine::eval::Rollout::default()), Duration::from_millis(50), 1)
    }

    fn say(s: &mut Session, line: &str) -> Vec<String> {
        let mut out = Vec::new();
        s.handle(line, &mut out).unwrap();
        String::from_utf8(out).unwrap().lines().map(str::to_string).collect()
    }

    #[test]
    fn handshake_and_errors() {
        let mut s = session();
        assert_eq!(say(&mut s, "uci").last().unwrap(), "uciok");
        assert_eq!(say(&mut s, "isready"), ["readyok"]);
        assert!(say(&mut s, "bogus")[0].starts_with("info string error unknown command"));
        assert!(say(&mut s, "position fen nonsense")[0].starts_with("info string error"));
        assert!(say(&mut s, "position")[0].starts_with("info string error"));
        assert!(say(&mut s, "go nodes x")[0].starts_with("info string error"));
        assert!(say(&mut s, "").is_empty());
        let mut out = Vec::new();
        assert_eq!(s.handle("quit", &mut out).unwrap(), Next::Quit);
    }

    #[test]
    fn moves_after_a_position_are_applied_and_checked() {
        let mut s = session();
        assert!(say(&mut s, "position fen 8/8/G6g/8 r - 0 1 moves a1a0 h1h0").is_empty());
        assert_eq!(s.position().position_string(), "8/8/8/G6g r - 2 1");
        // An illegal move leaves the position as it was.
        let e = say(&mut s, "position fen 8/8/G6g/8 r - 0 1 moves a1a0 a0a1");
        assert!(e[0].contains("move a0a1"), "{e:?}");
        assert_eq!(s.position().position_string(), "8/8/8/G6g r - 2 1");
        let e = say(&mut s, "position fen X7/8/G6g/8 r s1 0 1 moves a3a3");
        assert!(e[0].contains("flip"), "{e:?}");
    }

    #[test]
    fn go_finds_the_only_winning_capture() {
        // banqi-ab with a leaf evaluator of its own (random playouts here; a network in use).
        let playouts: Arc<dyn Evaluator<Banqi>> = Arc::new(engine::eval::Rollout::default());
        let with_leaf = Session::alpha_beta(Duration::from_millis(50), 1, None, Some(playouts));
        for mut s in [session(), Session::alpha_beta(Duration::from_millis(50), 1, None, None), with_leaf] {
            // Red's king takes black's last piece; anything else lets black's king live.
            say(&mut s, "position fen 8/8/Gg6/8 r - 0 1");
            let out = say(&mut s, "go nodes 200");
            assert_eq!(out.last().unwrap(), "bestmove a1b1", "{out:?}");
            assert!(out.iter().any(|l| l.starts_with("info depth")));
        }
        // banqi-ab reports the win as a mate in one ply.
        let mut s = Session::alpha_beta(Duration::from_millis(50), 1, None, None);
        say(&mut s, "position fen 8/8/Gg6/8 r - 0 1");
        let out = say(&mut s, "go movetime 30");
        assert!(out.iter().any(|l| l.contains("score mate 1")), "{out:?}");
    }

    #[test]
    fn go_on_a_finished_game_answers_0000() {
        let mut s = session();
        say(&mut s, "position fen 8/8/8/g7 r - 0 1");
        let out = say(&mut s, "go movetime 10");
        assert!(out[0].starts_with("info string error the game is over"), "{out:?}");
        assert_eq!(out.last().unwrap(), "bestmove 0000");
    }
}
