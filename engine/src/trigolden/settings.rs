//! The settings of TriGolden's own agents, `trigolden-user:…` (the user's AI as the user wrote
//! it) and `trigolden-lite:…` (its cheap simplification), with the defaults a spec's omitted keys
//! take and their keys, declared once ([`USER_KEYS`], [`LITE_KEYS`]).

use std::time::Duration;

use crate::agent::{FamilyKeys, GameFamily};
use crate::settings::{Setting, Value, count, duration, duration_value, unless, upto};

/// The settings of `trigolden-lite:…` ([`crate::trigolden::lite`]), the cheap simplification of
/// the user's TriGolden AI (`trigolden-seed:…` is read as the same, its old name).
#[derive(Clone, Debug, PartialEq)]
pub struct LiteSettings {
    /// Simulations per turn (with `time`, whichever ends first; neither: 200).
    pub sims: Option<u64>,
    /// Time per turn.
    pub time: Option<Duration>,
    /// Turns left at or below which the breadth-first minimax replaces UCT.
    pub minimax_turns: u8,
    /// Most positions the minimax may visit before it gives up and UCT decides.
    pub minimax_nodes: u64,
}

impl Default for LiteSettings {
    fn default() -> Self {
        LiteSettings { sims: None, time: None, minimax_turns: 3, minimax_nodes: 20_000 }
    }
}

/// The settings of `trigolden-user:…` ([`crate::trigolden::user`]), the user's TriGolden AI as
/// the user wrote it.
#[derive(Clone, Debug, PartialEq)]
pub struct UserSettings {
    /// Simulations per turn (with `time`, whichever ends first).
    pub sims: Option<u64>,
    /// Time per turn (neither `time` nor `sims`: 3 s, the user's default).
    pub time: Option<Duration>,
    /// Turns left (this one included) at or below which the breadth-first minimax replaces
    /// the UCT search (the user's `n`, default 3; 0: never).
    pub minimax_turns: u8,
    /// Most positions the minimax may create before it gives up and the UCT search decides
    /// (the user's code has no limit).
    pub minimax_nodes: u64,
    /// UCT exploration constant (`MCTS_C`; the file does not define it: √2).
    pub c: f64,
    /// When the turn's clock starts (`clock=file|turn`).
    pub clock: UserClock,
}

/// When `trigolden-user`'s clock starts.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum UserClock {
    /// After the board's statistics, as the user's file starts it (`clock=file`, the default):
    /// a turn then takes its time plus the statistics (up to about twice the time asked at
    /// 1 s on the first two-piece turns).
    #[default]
    File,
    /// When the turn is asked for (`clock=turn`): the whole turn fits the time asked, as a
    /// person waiting at the play server expects; the search gets what the statistics leave
    /// (at least one simulation).
    Turn,
}

impl Default for UserSettings {
    fn default() -> Self {
        UserSettings {
            sims: None,
            time: None,
            minimax_turns: 3,
            minimax_nodes: 20_000,
            c: std::f64::consts::SQRT_2,
            clock: UserClock::File,
        }
    }
}

/// The turn budget that `trigolden-user` and `trigolden-lite` share (`sims`, `time`,
/// `minimax`), so those keys are declared once, by [`sims_key`], [`time_key`] and
/// [`minimax_key`].
pub trait TurnBudget: Default + 'static {
    /// Simulations per turn, time per turn, and the turns left at or below which the
    /// breadth-first minimax replaces UCT.
    fn budget(&self) -> (Option<u64>, Option<Duration>, u8);
    /// The same three, to be written.
    fn budget_mut(&mut self) -> (&mut Option<u64>, &mut Option<Duration>, &mut u8);
}

macro_rules! turn_budget {
    ($($t:ty),*) => {$(
        impl TurnBudget for $t {
            fn budget(&self) -> (Option<u64>, Option<Duration>, u8) {
                (self.sims, self.time, self.minimax_turns)
            }
            fn budget_mut(&mut self) -> (&mut Option<u64>, &mut Option<Duration>, &mut u8) {
                (&mut self.sims, &mut self.time, &mut self.minimax_turns)
            }
        }
    )*};
}
turn_budget!(UserSettings, LiteSettings);

/// `sims=N` of a [`TurnBudget`].
const fn sims_key<S: TurnBudget>(help: &'static str) -> Setting<S> {
    Setting {
        toml: "",
        spec: "sims",
        value: "N",
        default: "-",
        help,
        set: |s, v| {
            *s.budget_mut().0 = Some(count(v)?);
            Ok(())
        },
        get: |s| s.budget().0.map(Value::from_u64),
    }
}

/// `time=DURATION` of a [`TurnBudget`].
const fn time_key<S: TurnBudget>(help: &'static str) -> Setting<S> {
    Setting {
        toml: "",
        spec: "time",
        value: "DURATION",
        default: "-",
        help,
        set: |s, v| {
            *s.budget_mut().1 = Some(duration(v)?);
            Ok(())
        },
        get: |s| s.budget().1.map(duration_value),
    }
}

/// `minimax=0..28` of a [`TurnBudget`].
const fn minimax_key<S: TurnBudget>(help: &'static str) -> Setting<S> {
    Setting {
        toml: "",
        spec: "minimax",
        value: "0..28",
        default: "3",
        help,
        set: |s, v| {
            *s.budget_mut().2 = upto(v, 28)? as u8;
            Ok(())
        },
        get: |s| unless(s.budget().2, S::default().budget().2),
    }
}

/// The keys of `trigolden-user:…`, declared once.
pub static USER_KEYS: &[Setting<UserSettings>] = &[
    sims_key("Simulations per turn (with time, whichever ends first)."),
    time_key("Time per turn; with neither time nor sims, 3 s (the user's default)."),
    minimax_key(
        "Turns left at or below which the breadth-first minimax replaces UCT (the user's n; 0: never).",
    ),
    Setting {
        toml: "",
        spec: "nodes",
        value: "N",
        default: "20000",
        help: "Most positions the minimax may create before UCT decides (the user's code has no limit).",
        set: |s, v| {
            s.minimax_nodes = count(v)?;
            Ok(())
        },
        get: |s| unless(s.minimax_nodes, UserSettings::default().minimax_nodes),
    },
    Setting {
        toml: "",
        spec: "c",
        value: "X",
        default: "1.4142135623730951",
        help: "UCT's exploration constant (the user's MCTS_C, not defined in the file: √2).",
        set: |s, v| {
            s.c = v
                .text()
                .parse()
                .ok()
                .filter(|c: &f64| c.is_finite() && *c >= 0.0)
                .ok_or_else(|| format!("`{v}`: a non-negative number"))?;
            Ok(())
        },
        get: |s| unless(s.c, UserSettings::default().c),
    },
    Setting {
        toml: "",
        spec: "clock",
        value: "file|turn",
        default: "file",
        help: "When a turn's clock starts: after the board's statistics as the user's file does, or at once.",
        set: |s, v| {
            s.clock = match &*v.text() {
                "file" => UserClock::File,
                "turn" => UserClock::Turn,
                _ => return Err(format!("`{v}`: file or turn")),
            };
            Ok(())
        },
        get: |s| (s.clock == UserClock::Turn).then(|| Value::Text("turn".into())),
    },
];

/// The keys of `trigolden-lite:…`, declared once.
pub static LITE_KEYS: &[Setting<LiteSettings>] = &[
    sims_key("Simulations per turn (with time, whichever ends first; neither: 200)."),
    time_key("Time per turn."),
    minimax_key("Turns left at or below which the breadth-first minimax replaces UCT (0: never)."),
];

/// `trigolden-user:…` as a game's agent family.
impl FamilyKeys for UserSettings {
    const FAMILY: &'static str = "trigolden-user";

    fn keys() -> &'static [Setting<UserSettings>] {
        USER_KEYS
    }

    fn set_time(&mut self, time: Duration) {
        (self.sims, self.time) = (None, Some(time));
    }
}

/// `trigolden-lite:…` as a game's agent family.
impl FamilyKeys for LiteSettings {
    const FAMILY: &'static str = "trigolden-lite";

    fn keys() -> &'static [Setting<LiteSettings>] {
        LITE_KEYS
    }

    fn set_time(&mut self, time: Duration) {
        (self.sims, self.time) = (None, Some(time));
    }
}

/// TriGolden's agent families, in the order `zeroplay agents` lists them.
pub const FAMILIES: &[GameFamily] = &[
    GameFamily::of::<UserSettings>(&[], "The user's own TriGolden AI, as the user wrote it (TriGolden)."),
    GameFamily::of::<LiteSettings>(
        &["trigolden-seed"],
        "A cheap simplification of the user's AI (TriGolden; `trigolden-seed` is its old name).",
    ),
];
