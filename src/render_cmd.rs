//! `zeroplay render`: a game file replayed and drawn as SVG.

use anyhow::{Context, Result};
use engine::banqi::Banqi;
use engine::battlenumber::BattleNumber;
use engine::game::Game;
use engine::trigolden::{ScoringMode, TriGolden};

use crate::cli::{RenderArgs, ScoringArg};
use crate::config::TrigoldenOptions;
use engine::GameKind;

/// Replays the actions in `text` (separated by spaces or newlines, `#` starts a comment) from
/// the start of game `G`; errors name the action and why.
///
/// # Errors
/// An action that cannot be read or is not legal where it is played.
pub fn replay_game<G: Game>(text: &str, options: &G::Options) -> Result<G> {
    let mut g = G::new_game(options);
    for (i, w) in engine::arena::record_words(text).enumerate() {
        let a = g.parse_action(w).with_context(|| format!("action {} ({w:?})", i + 1))?;
        g.play(a).with_context(|| format!("action {} ({w}) is not legal here", i + 1))?;
    }
    Ok(g)
}

/// Runs the command.
///
/// # Errors
/// An unreadable or illegal game file, a bad shape table, an unwritable output.
pub fn run(args: RenderArgs) -> Result<()> {
    let text =
        std::fs::read_to_string(&args.file).with_context(|| format!("reading {}", args.file.display()))?;
    let file = args.file.display().to_string();
    let (svg, summary) = match args.game {
        GameKind::TriGolden => {
            let scoring = match args.scoring {
                ScoringArg::Bracer => ScoringMode::Bracer,
                ScoringArg::Trigolden => ScoringMode::Trigolden,
                ScoringArg::SameOwner => ScoringMode::SameOwner,
            };
            let options =
                TrigoldenOptions::new(scoring, args.pieces, false).engine().map_err(anyhow::Error::msg)?;
            let g = replay_game::<TriGolden>(&text, &options).context(file)?;
            let [a, b] = g.scores();
            let summary = format!(
                "{} pieces, {} turns played, scores {a}–{b}{}",
                g.pieces().len(),
                g.turns_played(),
                ending(g.outcome())
            );
            (engine::trigolden::render::svg(&g), summary)
        }
        GameKind::BattleNumber => {
            let g = replay_game::<BattleNumber>(&text, &Default::default()).context(file)?;
            (engine::battlenumber::render::svg(&g), generic_summary(&g))
        }
        GameKind::Banqi => {
            let g = replay_game::<Banqi>(&text, &Default::default()).context(file)?;
            (engine::banqi::render::svg(&g), generic_summary(&g))
        }
    };
    std::fs::write(&args.out, svg).with_context(|| format!("writing {}", args.out.display()))?;
    println!("{summary}: {}", args.out.display());
    Ok(())
}

fn ending(o: Option<engine::game::Outcome>) -> &'static str {
    match o {
        Some(o) if o.decisive.is_some() => " (decided: a player had no legal move)",
        Some(_) => " (game over)",
        None => "",
    }
}

fn generic_summary<G: Game>(g: &G) -> String {
    match g.outcome() {
        Some(o) => format!("game over, scores {}–{}{}", o.scores[0], o.scores[1], ending(Some(o))),
        None => "game not over".into(),
    }
}
