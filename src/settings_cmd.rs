//! `zeroplay settings`: the search settings a config file's tables take, printed from the
//! declarations the config reader itself reads ([`engine::search_tables`]), so what it says
//! and what a config accepts cannot drift apart. `docs/settings.md` is its Markdown output (a
//! test keeps it so).

use anyhow::{Result, bail};
use engine::agent::keys::Family;

use crate::agents_cmd::{markdown, rows_text};
use crate::cli::SettingsArgs;

/// Every table as a [`Family`] of rows (its name in brackets).
fn tables() -> Vec<Family> {
    engine::search_tables::tables()
        .into_iter()
        .map(|(name, about, keys)| Family { name, about, keys })
        .collect()
}

/// Prints the tables (or the one named) as text, or as Markdown with `--markdown` (all of
/// them: `docs/settings.md` as it should read).
///
/// # Errors
/// A name that is no table.
pub fn run(args: SettingsArgs) -> Result<()> {
    // `leaf` and `[leaf]` name the same table.
    let bare = |name: &'static str| name.trim_matches(['[', ']']);
    let all = tables();
    let known = all.iter().map(|t| bare(t.name)).collect::<Vec<_>>().join(", ");
    let wanted = args.table.as_deref().map(|t| t.trim_matches(['[', ']']));
    let chosen: Vec<Family> = all.into_iter().filter(|t| wanted.is_none_or(|w| w == bare(t.name))).collect();
    if chosen.is_empty() {
        bail!("no table `{}` (known: {known})", args.table.unwrap_or_default());
    }
    let out = match (args.markdown, &args.table) {
        (true, None) => document(),
        (true, Some(_)) => markdown(&chosen),
        (false, _) => rows_text(&chosen, " = "),
    };
    print!("{out}");
    Ok(())
}

/// `docs/settings.md` as it should read: a preface and every table.
pub fn document() -> String {
    format!(
        "# Search settings in config files\n\n\
         The coordinator's `[selfplay]` and `[leaf]`, the play server's `[leaf]` and the \
         trainer's `[gate]` (with `[gate.leaf]`) take these keys. A key left out takes its \
         default; an unknown key is an error that lists the known ones. A config saved next to \
         a run or a checkpoint writes every key. The keys an agent spec shares (`mcts:cpuct=` \
         is `c_puct`, `scale=` is `score_scale`, `mix=` is `margin_mix`, `eval=` is \
         `evaluator`) are the same declarations, read by the same code: see docs/agents.md.\n\n\
         This page is generated from those declarations (`engine/src/search_settings.rs`, `engine/src/search_tables.rs`): \
         `zeroplay settings --markdown > docs/settings.md` (a test checks it is current).\n\n{}",
        markdown(&tables())
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docs_settings_md_is_the_declarations_output() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/settings.md");
        let on_disk = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            on_disk == document(),
            "docs/settings.md is stale: run `zeroplay settings --markdown > docs/settings.md`"
        );
    }

    #[test]
    fn every_key_a_config_file_reads_is_listed() {
        let all = rows_text(&tables(), " = ");
        for key in
            ["full_sims", "c_puct", "forced_playouts", "evaluator", "score_scale", "baseline_sims", "leaf"]
        {
            assert!(all.contains(&format!("  {key} = ")), "{key}:\n{all}");
        }
        // What is listed is what is read: a listed key is accepted, an unlisted one refused.
        let sp: Result<engine::selfplay::SelfPlaySettings, _> = toml::from_str("gumbel_c_scale = 0.2");
        assert!(sp.is_ok() && all.contains("  gumbel_c_scale = "));
        assert!(toml::from_str::<engine::LeafSettings>("lambd = 0.2").is_err());
    }
}
