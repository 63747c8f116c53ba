//! The typed settings of the game-specific agents an [`super::AgentSpec`] names, with the
//! defaults a spec's omitted keys take.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::banqi::ab::Weights;
use crate::banqi::tablebase::TableStore;

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

/// The settings of `banqi-ab:…` ([`crate::banqi::ab`], Banqi's expectiminimax searcher).
#[derive(Clone, Debug, PartialEq)]
pub struct AbSettings {
    /// Time per move (neither `time` nor `nodes`: 300 ms).
    pub time: Option<Duration>,
    /// Nodes per move (with `time`, whichever ends first); a node budget makes the search
    /// deterministic.
    pub nodes: Option<u64>,
    /// Deepest iteration, in plies.
    pub depth: u8,
    /// Transposition table size in MiB (rounded down to a power of two entries).
    pub tt_mib: u32,
    /// Flips next to a face-up piece searched below the root.
    pub near_flips: u8,
    /// Remaining depth below which a node (not the root) searches no flip unless it has no
    /// other move (`flip_depth=`): a flip is a chance node of up to 14 reveals, so flips near
    /// the leaves cost most of the tree. 4 (the default) searched a ply or two deeper in the
    /// opening and middle game and scored 78% against 2, ebfbbd8's value, at 100 ms a move
    /// and 57.5% at 300 ms (`banqi-ab:flip_depth=2,rep=0` is that baseline; docs/benchmarks.md,
    /// issue 39).
    pub flip_depth: u8,
    /// Pieces on a board with nothing face down at or below which the endgame tables the
    /// game can reach are built (before the search, counted in its time) and probed; 0: none.
    pub tablebase: u8,
    /// Where the endgame tables are loaded from before they are built, and saved to after.
    /// The program sets it ([`super::AgentSpec::with_table_store`]); a spec string cannot.
    pub store: Option<SharedTables>,
    /// The evaluation's weights (`weights=` in a spec, as [`Weights::to_list`] joined by `/`).
    pub weights: Weights,
    /// A trained value network (`model=PATH`) that replaces the handcrafted evaluation at
    /// every leaf (each quiescence node's stand-pat), loaded when the agent is built.
    /// `model=served` ([`super::SERVED_MODEL`]) is the model the program is serving now (a
    /// worker's newest, hot-swapped between moves): it values the leaves while it is
    /// one-layer (`nano`), and the handcrafted evaluation does until then.
    pub model: Option<String>,
    /// The search's generation (`search=`): 1 (the default) is plain alpha-beta as in
    /// ebfbbd8; 2 adds principal-variation search, aspiration windows at the root, null-move
    /// pruning while face-down pieces remain and contempt. Measured in docs/benchmarks.md
    /// (issue 39): 2 was no stronger, so it is not the default.
    pub search: u8,
    /// Null-move pruning in `search=2` (`null=0` turns it off).
    pub null_move: bool,
    /// A draw's cost in `search=2` for a side the last search found well ahead, in the
    /// evaluation's units (a pawn is about 40; `contempt=0` turns it off).
    pub contempt: u16,
    /// Scores a position that has occurred before (in the game since the last flip or
    /// capture, or on the search's own path) as a draw at every node below the root
    /// (`rep=1`, the default), as chess engines do. The transposition table does not know the
    /// history: without this it hands back the first occurrence's value, and a side far ahead
    /// walks into a threefold repetition (`zeroplay draws`, issue 39). Measured against
    /// `rep=0` (ebfbbd8's behaviour): 77.5% at 100 ms and, with ebfbbd8's `flip_depth=2` as
    /// well, 68.3% at 300 ms (docs/benchmarks.md).
    pub repetition: bool,
}

impl Default for AbSettings {
    fn default() -> Self {
        AbSettings {
            time: None,
            nodes: None,
            depth: 64,
            tt_mib: 16,
            near_flips: 4,
            flip_depth: 4,
            tablebase: 5,
            store: None,
            weights: Weights::default(),
            model: None,
            search: 1,
            null_move: true,
            contempt: 40,
            repetition: true,
        }
    }
}

/// A [`TableStore`] that agents share; two are equal when they are the same store.
#[derive(Clone)]
pub struct SharedTables(pub Arc<dyn TableStore>);

impl fmt::Debug for SharedTables {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SharedTables(..)")
    }
}

impl PartialEq for SharedTables {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl AbSettings {
    /// Sets the weights from a spec's `weights=` value ([`Weights::to_list`] joined by `/`).
    ///
    /// # Errors
    /// A value that is not [`Weights::LEN`] integers in their ranges.
    pub fn set_weights(&mut self, v: &str) -> Result<(), String> {
        let list: Option<Vec<i32>> = v.split('/').map(|x| x.parse().ok()).collect();
        self.weights = list.and_then(|l| Weights::from_list(&l)).ok_or_else(|| {
            format!("weights `{v}`: {} integers joined by `/` ({})", Weights::LEN, Weights::RANGES)
        })?;
        Ok(())
    }

    /// The weights as a spec's `weights=` value, or `None` when they are the defaults.
    pub fn weights_text(&self) -> Option<String> {
        (self.weights != Weights::default())
            .then(|| self.weights.to_list().iter().map(i32::to_string).collect::<Vec<_>>().join("/"))
    }

    /// Sets one `key=value` of a `banqi-ab:…` spec; `time` parses a duration.
    ///
    /// # Errors
    /// An unknown key or a bad value, described.
    pub fn set_key(
        &mut self,
        k: &str,
        v: &str,
        time: impl Fn(&str) -> Result<Duration, String>,
    ) -> Result<(), String> {
        let count = |what: &str| {
            v.parse::<u64>().ok().filter(|n| *n > 0).ok_or_else(|| format!("{what} `{v}`: a positive count"))
        };
        match k {
            "time" => self.time = Some(time(v)?),
            "nodes" => self.nodes = Some(count("nodes")?),
            "depth" => self.depth = count("depth")?.min(100) as u8,
            "tt" => self.tt_mib = count("tt")?.min(4096) as u32,
            "flips" => self.near_flips = count("flips")?.min(32) as u8,
            "flip_depth" => self.flip_depth = count("flip_depth")?.min(64) as u8,
            "tb" => {
                self.tablebase = v
                    .parse::<u8>()
                    .ok()
                    .filter(|n| *n <= 8)
                    .ok_or_else(|| format!("tb `{v}`: 0 (no tables) to 8 pieces"))?
            }
            "weights" => self.set_weights(v)?,
            "model" if !v.is_empty() => self.model = Some(v.to_string()),
            "null" => {
                self.null_move = match v {
                    "0" => false,
                    "1" => true,
                    _ => return Err(format!("null `{v}`: 0 or 1")),
                }
            }
            "rep" => {
                self.repetition = match v {
                    "0" => false,
                    "1" => true,
                    _ => return Err(format!("rep `{v}`: 0 or 1")),
                }
            }
            "contempt" => {
                self.contempt = v
                    .parse::<u16>()
                    .ok()
                    .filter(|c| *c <= 1_000)
                    .ok_or_else(|| format!("contempt `{v}`: 0 to 1000"))?
            }
            "search" => {
                self.search = match v {
                    "1" => 1,
                    "2" => 2,
                    _ => {
                        return Err(format!(
                            "search `{v}`: 1 (plain alpha-beta) or 2 (PVS, aspiration, null move)"
                        ));
                    }
                }
            }
            _ => {
                return Err(format!(
                    "unknown key `{k}` (known: time, nodes, depth, tt, flips, flip_depth, tb, weights, model, search, null, contempt, rep)"
                ));
            }
        }
        Ok(())
    }

    /// The `key=value` parts of this agent's spec, the defaults left out.
    pub fn spec_parts(&self) -> Vec<String> {
        let d = AbSettings::default();
        let mut parts = Vec::new();
        if let Some(t) = self.time {
            parts.push(format!("time={}ms", t.as_millis()));
        }
        if let Some(n) = self.nodes {
            parts.push(format!("nodes={n}"));
        }
        for (key, value, default) in [
            ("depth", u32::from(self.depth), u32::from(d.depth)),
            ("tt", self.tt_mib, d.tt_mib),
            ("flips", u32::from(self.near_flips), u32::from(d.near_flips)),
            ("flip_depth", u32::from(self.flip_depth), u32::from(d.flip_depth)),
            ("tb", u32::from(self.tablebase), u32::from(d.tablebase)),
        ] {
            if value != default {
                parts.push(format!("{key}={value}"));
            }
        }
        if let Some(w) = self.weights_text() {
            parts.push(format!("weights={w}"));
        }
        if let Some(m) = &self.model {
            parts.push(format!("model={m}"));
        }
        if self.search != d.search {
            parts.push(format!("search={}", self.search));
        }
        if self.null_move != d.null_move {
            parts.push(format!("null={}", u8::from(self.null_move)));
        }
        if self.contempt != d.contempt {
            parts.push(format!("contempt={}", self.contempt));
        }
        if self.repetition != d.repetition {
            parts.push(format!("rep={}", u8::from(self.repetition)));
        }
        parts
    }

    /// The time per move: `time`, or 300 ms when neither `time` nor `nodes` is set.
    pub fn move_time(&self) -> Option<Duration> {
        match (self.time, self.nodes) {
            (None, None) => Some(Duration::from_millis(300)),
            (t, _) => t,
        }
    }
}
