//! `zeroplay render`: a game file replayed and drawn as SVG.

use anyhow::{Context, Result};
use engine::game::Game;
use engine::pack::GamePack;

use clap::ValueEnum;

use crate::cli::{RenderArgs, ScoringArg};
use crate::config::GameOptions;

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
    // The rule options: TriGolden's [decision]s from the flags (the game's own folder reads
    // them and refuses them for a game without them), every other game's defaults.
    let mut table = toml::Table::new();
    if args.scoring != ScoringArg::Bracer {
        let name = args.scoring.to_possible_value().expect("no skipped variants");
        table.insert("scoring".into(), name.get_name().into());
    }
    if let Some(p) = &args.pieces {
        table.insert("pieces".into(), p.display().to_string().into());
    }
    let options = GameOptions::default().with(args.game, table);
    let (svg, summary) = engine::with_game!(args.game, |G| {
        let opts = options.checked::<G>().map_err(anyhow::Error::msg)?;
        let g = replay_game::<G>(&text, &opts).context(file)?;
        (g.svg(&[g.caption()]), g.summary())
    });
    std::fs::write(&args.out, svg).with_context(|| format!("writing {}", args.out.display()))?;
    println!("{summary}: {}", args.out.display());
    Ok(())
}
