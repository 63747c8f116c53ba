//! Settings declared once (lc0 declares its options this way): a [`Setting`] names a value's
//! key in a config file's TOML table and in an agent spec, its form, default and help, and how
//! it is read and written. The spec parser and printer, the TOML tables (through [`Table`] and
//! [`table_serde!`](crate::table_serde)), an unknown key's error, `zeroplay agents`,
//! `zeroplay settings` and the docs they print all read the same declarations, so a key added
//! there is parsed, saved, listed and documented together.
//!
//! A value arrives as a [`Value`]: text from a spec (`cpuct=1.5`), typed from TOML or JSON
//! (`c_puct = 1.5`); the readers ([`Value::number`], [`Value::whole`], …) accept both.

use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq, Serializer};

/// A setting's value as a spec or a config file gives it.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `true` or `false`.
    Bool(bool),
    /// A whole number.
    Int(i64),
    /// A number with a fraction.
    Float(f64),
    /// Text; everything a spec gives is text.
    Text(String),
    /// An array.
    List(Vec<Value>),
    /// A table, its keys in the order the reader gives them (a TOML reader sorts them).
    Table(Vec<(String, Value)>),
}

impl Value {
    /// An `f32` as the number it prints as (`0.3`, not `0.30000001192092896`), so saved
    /// configs read as they were written.
    pub fn from_f32(x: f32) -> Value {
        Value::Float(x.to_string().parse().unwrap_or(f64::from(x)))
    }

    /// A count or other whole number.
    pub fn from_u64(n: u64) -> Value {
        i64::try_from(n).map_or_else(|_| Value::Text(n.to_string()), Value::Int)
    }

    /// The value as text: a spec's as given, a number as it prints.
    pub fn text(&self) -> Cow<'_, str> {
        match self {
            Value::Text(s) => Cow::Borrowed(s),
            other => Cow::Owned(other.to_string()),
        }
    }

    /// A finite number (text is parsed).
    ///
    /// # Errors
    /// Anything else, described.
    pub fn number(&self) -> Result<f64, String> {
        let x = match self {
            Value::Int(n) => *n as f64,
            Value::Float(x) => *x,
            Value::Text(s) => s.trim().parse().map_err(|_| format!("must be a number, got `{s}`"))?,
            other => return Err(format!("must be a number, got {other}")),
        };
        if x.is_finite() { Ok(x) } else { Err(format!("must be a finite number, got {x}")) }
    }

    /// A number in `[lo, hi]`.
    ///
    /// # Errors
    /// Not a number, or out of range.
    pub fn within(&self, lo: f64, hi: f64) -> Result<f64, String> {
        let x = self.number()?;
        if (lo..=hi).contains(&x) { Ok(x) } else { Err(format!("must be in [{lo}, {hi}], got {x}")) }
    }

    /// A whole number from 0 up (text is parsed).
    ///
    /// # Errors
    /// A negative or fractional number, or anything else.
    pub fn whole(&self) -> Result<u64, String> {
        match self {
            Value::Int(n) => u64::try_from(*n).map_err(|_| format!("must be a whole number ≥ 0, got {n}")),
            Value::Text(s) => s.trim().parse().map_err(|_| format!("must be a whole number ≥ 0, got `{s}`")),
            other => Err(format!("must be a whole number ≥ 0, got {other}")),
        }
    }

    /// A whole number in `lo..=hi`.
    ///
    /// # Errors
    /// Not a whole number, or out of range.
    pub fn whole_in(&self, lo: u64, hi: u64) -> Result<u64, String> {
        let n = self.whole()?;
        if (lo..=hi).contains(&n) { Ok(n) } else { Err(format!("must be in {lo}..={hi}, got {n}")) }
    }

    /// An array's items.
    ///
    /// # Errors
    /// Anything else.
    pub fn items(&self) -> Result<&[Value], String> {
        match self {
            Value::List(v) => Ok(v),
            other => Err(format!("must be an array, got {other}")),
        }
    }
}

/// Numbers print as a spec writes them (`1.5`, `3`); arrays and tables as TOML would.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(n) => write!(f, "{n}"),
            Value::Float(x) => write!(f, "{x}"),
            Value::Text(s) => f.write_str(s),
            Value::List(items) => {
                let parts: Vec<String> = items.iter().map(|v| v.to_string()).collect();
                write!(f, "[{}]", parts.join(", "))
            }
            Value::Table(kv) => {
                let parts: Vec<String> = kv.iter().map(|(k, v)| format!("{k} = {v}")).collect();
                write!(f, "{{ {} }}", parts.join(", "))
            }
        }
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Text(s)
    }
}

impl serde::Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Int(n) => s.serialize_i64(*n),
            Value::Float(x) => s.serialize_f64(*x),
            Value::Text(t) => s.serialize_str(t),
            Value::List(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for v in items {
                    seq.serialize_element(v)?;
                }
                seq.end()
            }
            Value::Table(kv) => {
                let mut map = s.serialize_map(Some(kv.len()))?;
                for (k, v) in kv {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> serde::Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number, text, true/false, an array or a table")
    }
    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }
    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Value, E> {
        Ok(Value::Int(n))
    }
    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Value, E> {
        Ok(Value::from_u64(n))
    }
    fn visit_f64<E: de::Error>(self, x: f64) -> Result<Value, E> {
        Ok(Value::Float(x))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Value, E> {
        Ok(Value::Text(s.to_string()))
    }
    fn visit_string<E: de::Error>(self, s: String) -> Result<Value, E> {
        Ok(Value::Text(s))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(v) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::List(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut kv = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Value>()? {
            kv.push((k, v));
        }
        Ok(Value::Table(kv))
    }
}

/// One setting of an `S`: its names in a TOML table and in a spec, and how it is read and
/// written.
pub struct Setting<S: 'static> {
    /// The key in a config file's table (`c_puct`); empty where no table has it.
    pub toml: &'static str,
    /// The key in an agent spec (`cpuct`); empty where no spec has it.
    pub spec: &'static str,
    /// The form of its value, for help (`DURATION`, `N`, `0..1`, …).
    pub value: &'static str,
    /// The value a table or spec without the key has, as text (`-` where there is none).
    pub default: &'static str,
    /// What it does, in a sentence or two.
    pub help: &'static str,
    /// Reads a value into the settings; the error says what is wrong with it, and the caller
    /// names the key.
    pub set: fn(&mut S, &Value) -> Result<(), String>,
    /// The value, or `None` where it is unset (a spec leaves such keys, and those at their
    /// default, out).
    pub get: fn(&S) -> Option<Value>,
}

impl<S> Setting<S> {
    /// The name by which `syntax` knows the key (empty: not there).
    pub fn name(&self, syntax: Syntax) -> &'static str {
        match syntax {
            Syntax::Toml => self.toml,
            Syntax::Spec => self.spec,
        }
    }
}

/// Where a key is written.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Syntax {
    /// A config file's table (`c_puct = 1.5`).
    Toml,
    /// An agent spec (`cpuct=1.5`).
    Spec,
}

/// Sets `k = v` by the table, `k` as `syntax` names it.
///
/// # Errors
/// An unknown key (the known ones listed), or the key named with what is wrong with `v`.
pub fn set<S>(
    keys: &[Setting<S>],
    syntax: Syntax,
    settings: &mut S,
    k: &str,
    v: &Value,
) -> Result<(), String> {
    match keys.iter().find(|key| !key.name(syntax).is_empty() && key.name(syntax) == k) {
        Some(key) => (key.set)(settings, v).map_err(|e| format!("{k} {e}")),
        None => Err(format!("unknown key `{k}` (known: {})", names(keys, syntax))),
    }
}

/// The keys' names in `syntax`, joined by `, `.
pub fn names<S>(keys: &[Setting<S>], syntax: Syntax) -> String {
    keys.iter().map(|k| k.name(syntax)).filter(|n| !n.is_empty()).collect::<Vec<_>>().join(", ")
}

/// The `key=value` parts of a spec of `settings`, in the table's order, those unset or at
/// their default left out.
pub fn spec_parts<S: Default>(keys: &[Setting<S>], settings: &S) -> Vec<String> {
    let default = S::default();
    keys.iter()
        .filter(|k| !k.spec.is_empty())
        .filter_map(|k| {
            let v = (k.get)(settings)?;
            ((k.get)(&default).as_ref() != Some(&v)).then(|| format!("{}={v}", k.spec))
        })
        .collect()
}

/// A settings struct whose TOML table is declared by [`Setting`]s.
pub trait Table: Default + 'static {
    /// The table's name in the docs (`[leaf]`).
    const TABLE: &'static str;
    /// What the table sets.
    const ABOUT: &'static str;
    /// Its keys, in the order a saved config writes them.
    fn keys() -> &'static [Setting<Self>];

    /// Reads a table: the defaults, then each key given.
    ///
    /// # Errors
    /// Not a table, an unknown key, or a bad value (the key named).
    fn from_value(v: &Value) -> Result<Self, String> {
        let Value::Table(kv) = v else { return Err(format!("{} must be a table, got {v}", Self::TABLE)) };
        let mut s = Self::default();
        for (k, v) in kv {
            set(Self::keys(), Syntax::Toml, &mut s, k, v)?;
        }
        Ok(s)
    }

    /// The table with every key that has a value, for a saved config.
    fn to_value(&self) -> Value {
        let keys = Self::keys().iter().filter(|k| !k.toml.is_empty());
        Value::Table(keys.filter_map(|k| Some((k.toml.to_string(), (k.get)(self)?))).collect())
    }
}

/// Implements `Serialize` and `Deserialize` for a [`Table`] through its declarations, so a
/// config file reads exactly the keys `zeroplay settings` lists.
#[macro_export]
macro_rules! table_serde {
    ($($t:ty),* $(,)?) => {$(
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                serde::Serialize::serialize(&$crate::settings::Table::to_value(self), s)
            }
        }
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let v = <$crate::settings::Value as serde::Deserialize>::deserialize(d)?;
                <$t as $crate::settings::Table>::from_value(&v).map_err(serde::de::Error::custom)
            }
        }
    )*};
}

/// A key's row for help: `(name, value, default, help)`.
pub type Row = (&'static str, &'static str, &'static str, &'static str);

/// The rows of the keys `syntax` has, for help and the docs.
pub fn rows<S>(keys: &[Setting<S>], syntax: Syntax) -> Vec<Row> {
    keys.iter()
        .filter(|k| !k.name(syntax).is_empty())
        .map(|k| (k.name(syntax), k.value, k.default, k.help))
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

/// A duration value.
///
/// # Errors
/// Not `200ms`-like, described.
pub fn duration(v: &Value) -> Result<Duration, String> {
    parse_duration(&v.text()).ok_or_else(|| format!("`{v}`: use e.g. 200ms or 1.5s"))
}

/// A duration as a spec writes it.
pub fn duration_value(t: Duration) -> Value {
    Value::Text(format!("{}ms", t.as_millis()))
}

/// A positive count.
///
/// # Errors
/// Zero or not a whole number.
pub fn count(v: &Value) -> Result<u64, String> {
    v.whole().ok().filter(|n| *n > 0).ok_or_else(|| format!("`{v}`: a positive count"))
}

/// A whole number from 0 to `max`.
///
/// # Errors
/// Anything else.
pub fn upto(v: &Value, max: u64) -> Result<u64, String> {
    v.whole().ok().filter(|n| *n <= max).ok_or_else(|| format!("`{v}`: 0 to {max}"))
}

/// One of the numbered choices, each with what it means (for the error).
///
/// # Errors
/// Any other value.
pub fn one_of(v: &Value, choices: &[(u8, &str)]) -> Result<u8, String> {
    let n = v.whole().ok().filter(|n| choices.iter().any(|c| u64::from(c.0) == *n));
    n.map(|n| n as u8).ok_or_else(|| {
        let list: Vec<String> = choices.iter().map(|(n, m)| format!("{n} ({m})")).collect();
        format!("`{v}`: {}", list.join(" or "))
    })
}

/// `0` or `1` (or `false`, `true`).
///
/// # Errors
/// Any other value.
pub fn flag(v: &Value) -> Result<bool, String> {
    match v {
        Value::Bool(b) => Ok(*b),
        _ => match &*v.text() {
            "0" => Ok(false),
            "1" => Ok(true),
            _ => Err(format!("`{v}`: 0 or 1")),
        },
    }
}

/// `Some(value)` where `value` is not `default` (for keys whose value only a spec shows).
pub fn unless<T: PartialEq + fmt::Display>(value: T, default: T) -> Option<Value> {
    (value != default).then(|| Value::Text(value.to_string()))
}

/// A value as a config file would give it (a bare word as text), for tests.
#[cfg(test)]
pub(crate) fn toml_value(text: &str) -> Value {
    match toml::from_str::<Value>(&format!("x = {text}")) {
        Ok(Value::Table(mut kv)) => kv.remove(0).1,
        _ => Value::Text(text.to_string()),
    }
}

/// Each declared default of `S`'s table, read back, is the struct's default: the help cannot
/// drift (`skip`: keys whose default is described in words).
#[cfg(test)]
pub(crate) fn defaults_hold<S: Table + PartialEq + fmt::Debug>(skip: &[&str]) {
    for k in S::keys().iter().filter(|k| !skip.contains(&k.toml)) {
        let mut s = S::default();
        set(S::keys(), Syntax::Toml, &mut s, k.toml, &toml_value(k.default))
            .unwrap_or_else(|e| panic!("{}: {e}", k.toml));
        assert_eq!(s, S::default(), "{} {}: its declared default is not the default", S::TABLE, k.toml);
    }
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
        assert_eq!(one_of(&Value::Text("2".into()), &choices), Ok(2));
        assert_eq!(one_of(&Value::Int(2), &choices), Ok(2));
        assert_eq!(one_of(&Value::Text("3".into()), &choices), Err("`3`: 1 (one) or 2 (two)".to_string()));
        assert!(one_of(&Value::Text("x".into()), &choices).is_err());
    }

    #[test]
    fn readers_take_a_specs_text_and_a_config_files_typed_value_alike() {
        for v in [Value::Text("1.5".into()), Value::Float(1.5)] {
            assert_eq!(v.number(), Ok(1.5));
        }
        for v in [Value::Text("40".into()), Value::Int(40)] {
            assert_eq!(v.whole(), Ok(40));
            assert_eq!(v.number(), Ok(40.0));
        }
        assert!(Value::Float(1.5).whole().is_err(), "a fraction is no count");
        assert!(Value::Int(-1).whole().is_err());
        assert!(Value::Text("nan".into()).number().is_err());
        assert!(Value::Bool(true).number().is_err());
        assert_eq!(flag(&Value::Bool(true)), Ok(true));
        assert_eq!(flag(&Value::Text("0".into())), Ok(false));
        assert!(Value::Float(2.0).within(0.0, 1.0).unwrap_err().contains("[0, 1]"));
        assert_eq!(Value::from_f32(0.3), Value::Float(0.3), "an f32 keeps the number it prints as");
    }

    #[test]
    fn values_read_from_toml_and_json_keep_their_types() {
        let v: Value = toml::from_str("a = 0.5\nb = 2\nf = true\ns = \"x\"\nt = [[20, 1.0]]").unwrap();
        let want = Value::Table(vec![
            ("a".into(), Value::Float(0.5)),
            ("b".into(), Value::Int(2)),
            ("f".into(), Value::Bool(true)),
            ("s".into(), Value::Text("x".into())),
            ("t".into(), Value::List(vec![Value::List(vec![Value::Int(20), Value::Float(1.0)])])),
        ]);
        assert_eq!(v, want);
        let json: Value = serde_json::from_str(&serde_json::to_string(&want).unwrap()).unwrap();
        assert_eq!(json, want);
    }
}
