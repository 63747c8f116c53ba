//! The help rows of an agent family and the `key=value` parts of a spec. Each key is a
//! [`Setting`] declared once (lc0 declares its options this way): the spec parser, the spec
//! printer, an unknown key's error and `zeroplay agents` all read the one table, so a key
//! added there is parsed, printed, listed and documented together.

use crate::settings::{Row, Setting, Syntax, rows};

/// An agent family: the name a spec starts with, what it is, and its keys.
pub struct Family {
    /// The spec's name (`banqi-ab`).
    pub name: &'static str,
    /// What the agent is and which games it plays.
    pub about: &'static str,
    /// Its keys as `(name, value, default, help)`, in the order a spec prints them.
    pub keys: Vec<Row>,
}

impl Family {
    /// The family's keys as the rows of a table.
    pub fn of<S>(name: &'static str, about: &'static str, keys: &[Setting<S>]) -> Family {
        Family { name, about, keys: rows(keys, Syntax::Spec) }
    }
}

/// The `key=value` pairs after a spec's name (`name:k=v,k=v`, or nothing).
///
/// # Errors
/// A part that is not `key=value`.
pub fn key_values(rest: &str) -> Result<Vec<(&str, &str)>, String> {
    let rest = rest.strip_prefix(':').unwrap_or(rest);
    rest.split(',')
        .filter(|p| !p.is_empty())
        .map(|kv| kv.split_once('=').ok_or_else(|| format!("`{kv}` is not key=value")))
        .collect()
}

/// Reads a spec's `key=value` parts into `settings` by the table.
///
/// # Errors
/// A part that is not `key=value`, an unknown key (the known ones listed), or a bad value.
pub fn read<S>(keys: &[Setting<S>], settings: &mut S, rest: &str) -> Result<(), String> {
    for (k, v) in key_values(rest)? {
        crate::settings::set(keys, Syntax::Spec, settings, k, &crate::settings::Value::Text(v.into()))?;
    }
    Ok(())
}
