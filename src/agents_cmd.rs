//! `zeroplay agents`: every agent spec and its keys, printed from the tables the spec parser
//! itself reads ([`engine::spec::AgentSpec::families`]), so what it says and what a spec
//! accepts cannot drift apart. `docs/agents.md` is its Markdown output (a test keeps it so).

use anyhow::{Result, bail};
use engine::agent::keys::Family;
use engine::spec::AgentSpec;

use crate::cli::AgentsArgs;

/// Prints the families (or the one named) as text, or as Markdown with `--markdown` (all of
/// them: `docs/agents.md` as it should read).
///
/// # Errors
/// A name that is no agent family.
pub fn run(args: AgentsArgs) -> Result<()> {
    let all = AgentSpec::families();
    let known = all.iter().map(|f| f.name).collect::<Vec<_>>().join(", ");
    let families: Vec<Family> =
        all.into_iter().filter(|f| args.name.as_deref().is_none_or(|n| n == f.name)).collect();
    if families.is_empty() {
        bail!("no agent `{}` (known: {known})", args.name.unwrap_or_default());
    }
    let out = match (args.markdown, &args.name) {
        (true, None) => document(),
        (true, Some(_)) => markdown(&families),
        (false, _) => text(&families),
    };
    print!("{out}");
    Ok(())
}

/// The families as terminal text: a heading line each, then one line a key.
pub fn text(families: &[Family]) -> String {
    let mut out = rows_text(families, "=");
    out.push_str(
        "A spec is the name, then `:` and key=value pairs joined by commas, e.g. banqi-ab:time=300ms,tb=4.\n",
    );
    out
}

/// Tables of keys as terminal text, each key written `name{sep}value`.
pub fn rows_text(families: &[Family], sep: &str) -> String {
    let mut out = String::new();
    for f in families {
        out.push_str(&format!("{} — {}\n", f.name, f.about));
        let width =
            f.keys.iter().map(|k| k.0.chars().count() + k.1.chars().count() + sep.len()).max().unwrap_or(0);
        let dwidth = f.keys.iter().map(|k| k.2.chars().count()).max().unwrap_or(0) + "[default ]".len();
        for (name, value, default, help) in &f.keys {
            let (kv, d) = (format!("{name}{sep}{value}"), format!("[default {default}]"));
            out.push_str(&format!("  {kv:<width$}  {d:<dwidth$}  {help}\n"));
        }
        out.push('\n');
    }
    out
}

/// The families as Markdown: a section and a table each.
pub fn markdown(families: &[Family]) -> String {
    let mut out = String::new();
    for f in families {
        out.push_str(&format!("## `{}`\n\n{}\n\n", f.name, f.about));
        if f.keys.is_empty() {
            out.push_str("No keys.\n\n");
            continue;
        }
        out.push_str("| key | value | default | what it does |\n|---|---|---|---|\n");
        for (name, value, default, help) in &f.keys {
            out.push_str(&format!("| `{name}` | `{value}` | `{default}` | {} |\n", help.replace('|', "\\|")));
        }
        out.push('\n');
    }
    out
}

/// `docs/agents.md` as it should read: a preface and every family's table.
pub fn document() -> String {
    format!(
        "# Agent specs\n\n\
         Every command that takes an agent (`arena -a/-b`, `play --agent`, `uci`, `match`, the \
         play server's `agent`, a teacher) names it by a spec: the family's name, then `:` and \
         `key=value` pairs joined by commas, e.g. `banqi-ab:time=300ms,tb=4`. A key left out \
         takes its default (`-`: none; what that means is in its line).\n\n\
         This page is generated from the tables the spec parser reads: `zeroplay agents \
         --markdown > docs/agents.md` (a test checks it is current).\n\n{}",
        markdown(&AgentSpec::families())
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docs_agents_md_is_the_tables_output() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/agents.md");
        let on_disk = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            on_disk == document(),
            "docs/agents.md is stale: run `zeroplay agents --markdown > docs/agents.md`"
        );
    }

    #[test]
    fn every_key_of_every_family_is_listed_once() {
        let families = AgentSpec::families();
        let all = text(&families);
        for f in &families {
            for (name, ..) in &f.keys {
                assert!(all.contains(&format!("  {name}=")), "{}'s {name}", f.name);
            }
        }
        let md = markdown(&families);
        assert_eq!(md.matches("## `").count(), 5);
        assert!(md.contains("| `reveal` | `0..4` | `0` |"), "{md}");
    }
}
