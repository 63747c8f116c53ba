//! `zeroplay render`: a game file replayed and drawn as SVG.

use anyhow::{Context, Result, bail};
use engine::game::Game;
use engine::trigolden::{ScoringMode, TriGolden, render};

use crate::cli::{GameName, RenderArgs, ScoringArg};
use crate::config::TrigoldenOptions;

/// Replays the actions in `text` from the start; errors name the action and why.
///
/// # Errors
/// An action that cannot be read or is not legal where it is played.
pub fn replay(text: &str, options: &engine::trigolden::Options) -> Result<TriGolden> {
    let mut g = TriGolden::new_game(options);
    let words = text.lines().flat_map(|l| l.split('#').next().unwrap_or("").split_whitespace());
    for (i, w) in words.enumerate() {
        let a = g.parse_action(w).with_context(|| format!("action {} ({w:?})", i + 1))?;
        g.play(a).with_context(|| format!("action {} ({w}) at turn {}", i + 1, g.turns_played() + 1))?;
    }
    Ok(g)
}

/// Runs the command.
///
/// # Errors
/// An unreadable or illegal game file, a bad shape table, an unwritable output.
pub fn run(args: RenderArgs) -> Result<()> {
    if args.game != GameName::Trigolden {
        bail!("render draws TriGolden positions only (Battle Number boards print in `zeroplay play`)");
    }
    let scoring = match args.scoring {
        ScoringArg::Bracer => ScoringMode::Bracer,
        ScoringArg::Trigolden => ScoringMode::Trigolden,
        ScoringArg::SameOwner => ScoringMode::SameOwner,
    };
    let options = TrigoldenOptions::new(scoring, args.pieces, false).engine().map_err(anyhow::Error::msg)?;
    let text =
        std::fs::read_to_string(&args.file).with_context(|| format!("reading {}", args.file.display()))?;
    let g = replay(&text, &options).with_context(|| format!("{}", args.file.display()))?;
    std::fs::write(&args.out, render::svg(&g)).with_context(|| format!("writing {}", args.out.display()))?;
    let [a, b] = g.scores();
    println!(
        "{} pieces, {} turns played, scores {a}–{b}{}: {}",
        g.pieces().len(),
        g.turns_played(),
        match g.outcome() {
            Some(o) if o.decisive.is_some() => " (arbitration)",
            Some(_) => " (game over)",
            None => "",
        },
        args.out.display()
    );
    Ok(())
}
