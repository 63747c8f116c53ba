//! A game's own agent families (`trigolden-user`, `banqi-ab`): each is declared in its game's
//! folder as a [`GameFamily`] whose settings type implements [`FamilyKeys`] (its key table and
//! how a budget or a network is set), and an agent spec carries one as a [`GameSpec`]. The spec
//! parser (`crate::spec`) finds every game's families through the game registry, so neither it
//! nor this module names a game, and a game's agents need nothing from the parser.

use std::any::Any;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::keys;
use crate::banqi::tablebase::TableStore;
use crate::settings::{Row, Setting, Syntax, rows as key_rows, spec_parts};

/// The settings of one agent family of a game, read and written through its key table.
pub trait FamilyKeys: Clone + PartialEq + fmt::Debug + Default + Send + Sync + 'static {
    /// The family's name, as a spec starts (`banqi-ab`).
    const FAMILY: &'static str;
    /// Its keys, declared once (parsed, printed in this order, listed by `zeroplay agents`).
    fn keys() -> &'static [Setting<Self>];
    /// Holds the agent to `time` a turn, dropping any other budget (simulations, nodes).
    fn set_time(&mut self, time: Duration);
    /// The network the settings name (`model=`), if the family plays one.
    fn model(&self) -> Option<&str> {
        None
    }
    /// Names the network (a family without one ignores it).
    fn set_model(&mut self, model: &str) {
        let _ = model;
    }
    /// Where endgame tables are kept between processes (a family without tables ignores it).
    fn set_table_store(&mut self, store: Option<Arc<dyn TableStore>>) {
        let _ = store;
    }
}

/// [`FamilyKeys`] with its type erased, for [`GameSpec`].
trait Erased: Any + Send + Sync + fmt::Debug {
    fn family(&self) -> &'static str;
    fn parts(&self) -> Vec<String>;
    fn clone_box(&self) -> Box<dyn Erased>;
    fn same(&self, other: &dyn Erased) -> bool;
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
    fn set_time(&mut self, time: Duration);
    fn model(&self) -> Option<&str>;
    fn set_model(&mut self, model: &str);
    fn set_table_store(&mut self, store: Option<Arc<dyn TableStore>>);
}

impl<S: FamilyKeys> Erased for S {
    fn family(&self) -> &'static str {
        S::FAMILY
    }
    fn parts(&self) -> Vec<String> {
        spec_parts(S::keys(), self)
    }
    fn clone_box(&self) -> Box<dyn Erased> {
        Box::new(self.clone())
    }
    fn same(&self, other: &dyn Erased) -> bool {
        other.as_any().downcast_ref::<S>() == Some(self)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
    fn set_time(&mut self, time: Duration) {
        FamilyKeys::set_time(self, time);
    }
    fn model(&self) -> Option<&str> {
        FamilyKeys::model(self)
    }
    fn set_model(&mut self, model: &str) {
        FamilyKeys::set_model(self, model);
    }
    fn set_table_store(&mut self, store: Option<Arc<dyn TableStore>>) {
        FamilyKeys::set_table_store(self, store);
    }
}

/// A game's own agent with its settings: what `banqi-ab:time=300ms` names. The game's
/// [`super::GameAgents::game_agent`] reads its settings back by type.
pub struct GameSpec(Box<dyn Erased>);

impl GameSpec {
    /// The spec of a family with these settings.
    pub fn new<S: FamilyKeys>(settings: S) -> GameSpec {
        GameSpec(Box::new(settings))
    }

    /// The family's name (`banqi-ab`).
    pub fn family(&self) -> &'static str {
        self.0.family()
    }

    /// The settings, if they are an `S`.
    pub fn settings<S: FamilyKeys>(&self) -> Option<&S> {
        self.0.as_any().downcast_ref()
    }

    /// The settings to change, if they are an `S`.
    pub fn settings_mut<S: FamilyKeys>(&mut self) -> Option<&mut S> {
        self.0.as_any_mut().downcast_mut()
    }

    /// This spec held to `time` a turn ([`FamilyKeys::set_time`]).
    pub fn with_time(mut self, time: Duration) -> GameSpec {
        self.0.set_time(time);
        self
    }

    /// The network the spec names, if any.
    pub fn model(&self) -> Option<&str> {
        self.0.model()
    }

    /// Names the network ([`FamilyKeys::set_model`]).
    pub fn set_model(&mut self, model: &str) {
        self.0.set_model(model);
    }

    /// Sets where endgame tables are kept ([`FamilyKeys::set_table_store`]).
    pub fn set_table_store(&mut self, store: Option<Arc<dyn TableStore>>) {
        self.0.set_table_store(store);
    }
}

impl Clone for GameSpec {
    fn clone(&self) -> Self {
        GameSpec(self.0.clone_box())
    }
}

impl PartialEq for GameSpec {
    fn eq(&self, other: &Self) -> bool {
        self.0.same(other.0.as_ref())
    }
}

impl fmt::Debug for GameSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// `family[:key=value,…]`, the defaults left out.
impl fmt::Display for GameSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts = self.0.parts();
        if parts.is_empty() {
            f.write_str(self.family())
        } else {
            write!(f, "{}:{}", self.family(), parts.join(","))
        }
    }
}

/// One agent family of a game, as its folder declares it in
/// [`super::GameAgents::FAMILIES`].
pub struct GameFamily {
    /// The name a spec starts with.
    pub name: &'static str,
    /// Older names read as the same.
    pub aliases: &'static [&'static str],
    /// What the agent is and which game it plays.
    pub about: &'static str,
    rows: fn() -> Vec<Row>,
    parse: fn(&str) -> Result<GameSpec, String>,
}

impl GameFamily {
    /// The family whose settings are an `S`.
    pub const fn of<S: FamilyKeys>(aliases: &'static [&'static str], about: &'static str) -> GameFamily {
        GameFamily { name: S::FAMILY, aliases, about, rows: rows::<S>, parse: parse::<S> }
    }

    /// Whether a spec naming `name` means this family.
    pub fn answers_to(&self, name: &str) -> bool {
        self.name == name || self.aliases.contains(&name)
    }

    /// The family with its keys, for `zeroplay agents` and the docs.
    pub fn table(&self) -> keys::Family {
        keys::Family { name: self.name, about: self.about, keys: (self.rows)() }
    }

    /// Reads the `key=value,…` after the family's name (the defaults for those left out).
    ///
    /// # Errors
    /// An unknown key (the known ones listed) or a bad value, described.
    pub fn parse(&self, rest: &str) -> Result<GameSpec, String> {
        (self.parse)(rest)
    }
}

fn rows<S: FamilyKeys>() -> Vec<Row> {
    key_rows(S::keys(), Syntax::Spec)
}

fn parse<S: FamilyKeys>(rest: &str) -> Result<GameSpec, String> {
    let mut settings = S::default();
    keys::read(S::keys(), &mut settings, rest)?;
    Ok(GameSpec::new(settings))
}
