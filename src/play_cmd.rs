//! `zeroplay play battlenumber`: a person plays an agent in the terminal.
//!
//! The board is drawn after every click with the squares you may click marked `·` (empty) or
//! `[ ]` (a piece). Type a square (`d2`), a piece (`S1r0`, or its number in the list shown), or
//! a whole turn at once (`d2 S1r0`, or an extraction path `b2 c3 d4`). `help`, `board` and
//! `quit` do what they say. The agent's search shows depth, nodes and time live.

use std::io::{BufRead, Write};

use anyhow::Result;
use engine::agent::Agent;
use engine::battlenumber::{Action, BattleNumber, EXTRACTIONS, draw_board};
use engine::game::{Actor, Game, Outcome, Seat};
use engine::spec::AgentSpec;
use indicatif::{ProgressBar, ProgressStyle};

use crate::cli::{PlayArgs, SeatArg};
use crate::config::{PlayConfig, load};

const HELP: &str = "\
Clicks: a square is column a-g + row 0-6 (row 0 at the top; d3 is the centre).
Placement: click a marked square, then a piece: S1 D2 C2 T3 X0 with rotation r0-r3
  (quarter turns clockwise), e.g. `d2` then `C2r1`, or both at once: `d2 C2r1`.
  You may also type the number of a piece from the list.
Extraction: click one of your pieces, then each step; the path ends on your own X0.
  A whole path at once: `b2 c3 d4`.
Commands: help, board, quit.
Your pieces are UPPER case in game 1 if you move first; the second seat is lower case.";

/// Runs an interactive session on stdin/stdout.
///
/// # Errors
/// Bad configuration or agent spec; I/O errors on the terminal.
pub fn run(args: PlayArgs) -> Result<()> {
    if args.game != engine::GameKind::BattleNumber {
        anyhow::bail!(
            "terminal play is for Battle Number; {} is played in the browser (`zeroplay serve`), and \
             `zeroplay render {} FILE` draws a position",
            args.game.pack().title,
            args.game
        );
    }
    let mut cfg: PlayConfig = load(args.config.as_deref())?;
    if let Some(a) = args.agent {
        cfg.agent = a;
    }
    if let Some(s) = args.seat {
        cfg.seat = s;
    }
    if let Some(s) = args.seed {
        cfg.seed = s;
    }
    let spec: AgentSpec = cfg.agent.parse()?;
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut out = std::io::stdout();
    let color = !args.no_color && std::env::var_os("NO_COLOR").is_none();
    play_session(&spec, &cfg, !args.single, color, &mut input, &mut out)
}

/// The session itself, on any input and output (tests drive it with buffers).
///
/// # Errors
/// I/O errors on `out`; bad `[options.battlenumber]`.
pub fn play_session(
    spec: &AgentSpec,
    cfg: &PlayConfig,
    full_match: bool,
    color: bool,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> Result<()> {
    let mut agent = spec
        .build_with::<BattleNumber>(&crate::netload::loader::<BattleNumber>())
        .map_err(anyhow::Error::msg)?;
    let options = cfg.options.checked::<BattleNumber>().map_err(anyhow::Error::msg)?;
    let mut rng = engine::rng_from_seed(cfg.seed);
    let human_first = cfg.seat == SeatArg::First;
    writeln!(out, "Battle Number (拚數棋) against {}. Type `help` for how to enter clicks.", agent.name())?;
    let mut total_human = 0i32;
    let games = if full_match { 2 } else { 1 };
    for game in 0..games {
        let human = if (game == 0) == human_first { Seat::First } else { Seat::Second };
        writeln!(
            out,
            "\n=== Game {} of {games}: you are the {human} seat ({}) ===",
            game + 1,
            case_name(human)
        )?;
        let Some(outcome) = play_game(agent.as_mut(), &mut rng, &options, human, color, input, out)? else {
            writeln!(out, "Bye.")?;
            return Ok(());
        };
        let mine = outcome.difference(human);
        total_human += mine;
        match outcome.decisive {
            Some(w) => writeln!(
                out,
                "Game over: {} wins outright (the other side had no legal move).",
                if w == human { "you" } else { "the agent" }
            )?,
            None => writeln!(out, "Game over on points: your score {mine:+}.")?,
        }
        if outcome.decisive.is_some() {
            break;
        }
    }
    if full_match {
        let verdict = match total_human.cmp(&0) {
            std::cmp::Ordering::Greater => "you win the match",
            std::cmp::Ordering::Less => "the agent wins the match",
            std::cmp::Ordering::Equal => "the match is drawn",
        };
        writeln!(out, "Match total: {total_human:+} — {verdict}.")?;
    }
    Ok(())
}

fn case_name(seat: Seat) -> &'static str {
    match seat {
        Seat::First => "UPPER case, red",
        Seat::Second => "lower case, blue",
    }
}

fn status(s: &BattleNumber) -> String {
    let placed = s.placed();
    if s.in_placement() {
        format!("placement {}/49 · placement score appears when the board is full", placed[0] + placed[1] + 1)
    } else {
        let ex = s.extracted();
        let t = s.extraction_totals();
        format!(
            "extraction {}/{} · placement score (first seat) {:+} · extraction totals first {:+}, second {:+} · first seat's game score {:+}",
            ex[0] + ex[1] + 1,
            2 * EXTRACTIONS,
            s.placement_score(),
            t[0],
            t[1],
            s.score_first()
        )
    }
}

fn play_game(
    agent: &mut dyn Agent<BattleNumber>,
    rng: &mut engine::Rng,
    opts: &engine::battlenumber::Options,
    human: Seat,
    color: bool,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> Result<Option<Outcome>> {
    let mut state = BattleNumber::new_game(opts);
    let mut legal = Vec::new();
    let mut ai_turn: Vec<String> = Vec::new();
    let mut show_board = true;
    while state.outcome().is_none() {
        let Actor::Player(mover) = state.to_move() else { unreachable!("Battle Number has no chance nodes") };
        if mover == human {
            if !ai_turn.is_empty() {
                writeln!(out, "Agent played: {}", ai_turn.join(" "))?;
                ai_turn.clear();
            }
            state.legal_actions(&mut legal);
            if show_board {
                write!(out, "{}", draw_board(&state, state.legal_square_clicks(), color))?;
                writeln!(out, "{}", status(&state))?;
            }
            show_board = true;
            if let Some(sq) = state.pending_square() {
                let list: Vec<String> =
                    legal.iter().enumerate().map(|(i, a)| format!("{}:{a}", i + 1)).collect();
                writeln!(out, "Piece for {}: {}", engine::battlenumber::square_name(sq), list.join("  "))?;
            } else if let Some((_, cur)) = state.pending_path() {
                writeln!(
                    out,
                    "Path at {} — next step: {}",
                    engine::battlenumber::square_name(cur),
                    join(&legal)
                )?;
            } else if state.in_placement() {
                writeln!(out, "Your placement — choose a square: {}", join(&legal))?;
            } else {
                writeln!(out, "Your extraction — choose a start piece: {}", join(&legal))?;
            }
            write!(out, "> ")?;
            out.flush()?;
            let mut line = String::new();
            if input.read_line(&mut line)? == 0 {
                return Ok(None);
            }
            let line = line.trim();
            match line {
                "" => continue,
                "quit" | "exit" | "q" => return Ok(None),
                "help" | "?" => {
                    writeln!(out, "{HELP}")?;
                    show_board = false;
                    continue;
                }
                "board" => continue,
                _ => {}
            }
            for token in line.split_whitespace() {
                state.legal_actions(&mut legal);
                let action = match token.parse::<usize>() {
                    Ok(i) if i >= 1 && i <= legal.len() && state.pending_square().is_some() => {
                        Ok(legal[i - 1])
                    }
                    _ => state.parse_action(token).map_err(|e| e.to_string()),
                };
                let result = action.and_then(|a| {
                    let before = state.clone();
                    state.play(a).map_err(|e| e.to_string())?;
                    agent.observe(&before, a);
                    Ok(())
                });
                if let Err(e) = result {
                    writeln!(out, "Not accepted: {e}. (`help` explains the clicks.)")?;
                    show_board = false;
                    break;
                }
            }
        } else {
            let a = think(agent, &state, rng)?;
            let before = state.clone();
            state.play(a)?;
            agent.observe(&before, a);
            ai_turn.push(a.to_string());
        }
    }
    if !ai_turn.is_empty() {
        writeln!(out, "Agent played: {}", ai_turn.join(" "))?;
    }
    write!(out, "{}", draw_board(&state, 0, color))?;
    Ok(state.outcome())
}

fn join(actions: &[Action]) -> String {
    actions.iter().map(ToString::to_string).collect::<Vec<_>>().join(" ")
}

fn think(agent: &mut dyn Agent<BattleNumber>, state: &BattleNumber, rng: &mut engine::Rng) -> Result<Action> {
    let spinner = ProgressBar::new_spinner();
    spinner
        .set_style(ProgressStyle::with_template("{spinner} agent thinking: {msg}").expect("valid template"));
    let a = agent.choose(state, rng, &mut |p| {
        spinner.set_message(format!(
            "depth {}, nodes {}, {} sims, {:.1}s, value {:+.2}",
            p.max_depth,
            p.nodes,
            p.sims,
            p.elapsed.as_secs_f64(),
            p.value
        ));
        spinner.tick();
    });
    spinner.finish_and_clear();
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scripted_human_can_play_a_turn_and_quit() {
        let cfg = PlayConfig { agent: "random".into(), ..Default::default() };
        let spec: AgentSpec = cfg.agent.parse().unwrap();
        // First seat: the first move must be the centre Corner Two. Try a bad click first.
        let script = "a0\nhelp\nd3 C2r1\nquit\n";
        let mut out = Vec::new();
        play_session(&spec, &cfg, true, false, &mut script.as_bytes(), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("Not accepted"), "{text}");
        assert!(text.contains("Extraction: click one of your pieces"), "{text}");
        assert!(text.contains("Agent played:"), "{text}");
        assert!(text.contains("Bye."), "{text}");
    }
}
