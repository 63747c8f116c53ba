//! The keys of an agent spec, each declared once with its value's form, default and help, and
//! how it is read and written (lc0 declares its options this way). The spec parser, the spec
//! printer, an unknown key's error and `zeroplay agents` all read the one table, so a key
//! added there is parsed, printed, listed and documented together.

use std::time::Duration;

/// One `key=value` of an agent spec whose settings are an `S`.
pub struct Key<S: 'static> {
    /// The key as a spec writes it.
    pub name: &'static str,
    /// The form of its value, for help (`DURATION`, `N`, `0|1`, …).
    pub value: &'static str,
    /// The value a spec without the key has, as text (`-` where there is none).
    pub default: &'static str,
    /// What it does, in a sentence or two.
    pub help: &'static str,
    /// Reads `value` into the settings.
    pub set: fn(&mut S, &str) -> Result<(), String>,
    /// The value as a spec writes it, or `None` when it is the default (left out).
    pub get: fn(&S) -> Option<String>,
}

/// An agent family: the name a spec starts with, what it is, and its keys.
pub struct Family {
    /// The spec's name (`banqi-ab`).
    pub name: &'static str,
    /// What the agent is and which games it plays.
    pub about: &'static str,
    /// Its keys as `(name, value, default, help)`, in the order a spec prints them.
    pub keys: Vec<(&'static str, &'static str, &'static str, &'static str)>,
}

impl Family {
    /// The family's keys as the rows of a table.
    pub fn of<S>(name: &'static str, about: &'static str, keys: &[Key<S>]) -> Family {
        Family { name, about, keys: keys.iter().map(|k| (k.name, k.value, k.default, k.help)).collect() }
    }
}

/// Sets `k=v` by the table.
///
/// # Errors
/// An unknown key (the known ones listed) or a bad value, described.
pub fn set<S>(keys: &[Key<S>], settings: &mut S, k: &str, v: &str) -> Result<(), String> {
    match keys.iter().find(|key| key.name == k) {
        Some(key) => (key.set)(settings, v),
        None => Err(format!("unknown key `{k}` (known: {})", names(keys))),
    }
}

/// The `key=value` parts of `settings`, in the table's order, defaults left out.
pub fn parts<S>(keys: &[Key<S>], settings: &S) -> Vec<String> {
    keys.iter().filter_map(|k| (k.get)(settings).map(|v| format!("{}={v}", k.name))).collect()
}

/// The keys' names joined by `, `.
pub fn names<S>(keys: &[Key<S>]) -> String {
    keys.iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
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

/// Reads `200ms`, `1.5s`, `2s`.
pub fn parse_duration(v: &str) -> Option<Duration> {
    let (num, scale) = if let Some(n) = v.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = v.strip_suffix('s') {
        (n, 1.0)
    } else {
        return None;
    };
    let x: f64 = num.parse().ok()?;
    (x.is_finite() && x > 0.0 && x < 1e6).then(|| Duration::from_secs_f64(x * scale))
}

/// A `time=` value.
pub(crate) fn duration(v: &str) -> Result<Duration, String> {
    parse_duration(v).ok_or_else(|| format!("time `{v}`: use e.g. 200ms or 1.5s"))
}

/// A positive count.
pub(crate) fn count(what: &str, v: &str) -> Result<u64, String> {
    v.parse::<u64>().ok().filter(|n| *n > 0).ok_or_else(|| format!("{what} `{v}`: a positive count"))
}

/// A whole number from 0 to `max`.
pub(crate) fn upto(what: &str, v: &str, max: u64) -> Result<u64, String> {
    v.parse::<u64>().ok().filter(|n| *n <= max).ok_or_else(|| format!("{what} `{v}`: 0 to {max}"))
}

/// One of the numbered choices, each with what it means (for the error).
pub(crate) fn one_of(what: &str, v: &str, choices: &[(u8, &str)]) -> Result<u8, String> {
    let n = v.parse::<u8>().ok().filter(|n| choices.iter().any(|c| c.0 == *n));
    n.ok_or_else(|| {
        let list: Vec<String> = choices.iter().map(|(n, m)| format!("{n} ({m})")).collect();
        format!("{what} `{v}`: {}", list.join(" or "))
    })
}

/// `0` or `1`.
pub(crate) fn flag(what: &str, v: &str) -> Result<bool, String> {
    match v {
        "0" => Ok(false),
        "1" => Ok(true),
        _ => Err(format!("{what} `{v}`: 0 or 1")),
    }
}

/// `Some(text)` where `value` is not `default`.
pub(crate) fn unless<T: PartialEq + std::fmt::Display>(value: T, default: T) -> Option<String> {
    (value != default).then(|| value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_milliseconds_and_seconds_only() {
        assert_eq!(parse_duration("200ms"), Some(Duration::from_millis(200)));
        assert_eq!(parse_duration("1.5s"), Some(Duration::from_millis(1500)));
        for bad in ["200", "0ms", "-1s", "nans", "1e7s"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }

    #[test]
    fn one_of_reads_only_the_listed_numbers_and_names_them_otherwise() {
        let choices = [(1, "one"), (2, "two")];
        assert_eq!(one_of("k", "2", &choices), Ok(2));
        assert_eq!(one_of("k", "3", &choices), Err("k `3`: 1 (one) or 2 (two)".to_string()));
        assert!(one_of("k", "x", &choices).is_err());
    }
}
