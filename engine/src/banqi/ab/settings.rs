//! The settings of `banqi-ab:…`, Banqi's expectiminimax searcher, with the defaults a spec's
//! omitted keys take and its keys, declared once ([`AB_KEYS`]).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::Weights;
use crate::agent::{FamilyKeys, GameFamily};
use crate::banqi::tablebase::TableStore;
use crate::settings::{
    self, Setting, Syntax, Value, count, duration, duration_value, flag, one_of, spec_parts, unless, upto,
};

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
    /// A draw's cost for a side the last search found well ahead (three pawns or more), in
    /// the evaluation's units (a pawn is about 40; `contempt=0` turns it off). `None` (no
    /// `contempt=` key): 40 with `search=2`, which has always carried it, and 0 with
    /// `search=1`; `contempt=N` sets it in either generation, so it can be measured alone.
    pub contempt: Option<u16>,
    /// Reverse futility pruning (`rfp=`, the margin per remaining ply; 0, the default, is
    /// off): a node within 3 plies of the horizon whose static value beats beta by more than
    /// the margin times the plies left returns that value without a search.
    pub rfp: u16,
    /// Late-move reductions (`lmr=`): 1 (the default) reduces the fourth and later quiet
    /// moves by one extra ply from depth 3; 2 reduces by `ln(depth)·ln(index)/2`, as chess
    /// engines do, from depth 3 and at least one ply.
    pub lmr: u8,
    /// Extra plies a flip's reveals lose below the root (`reveal=`; 0, the default, none):
    /// a flip is a chance node of up to 14 reveals, so each costs as much as 14 moves.
    pub reveal: u8,
    /// Scores a position that has occurred before (in the game since the last flip or
    /// capture, or on the search's own path) as a draw at every node below the root
    /// (`rep=1`, the default), as chess engines do. The transposition table does not know the
    /// history: without this it hands back the first occurrence's value, and a side far ahead
    /// walks into a threefold repetition (`zeroplay draws`, issue 39). Measured against
    /// `rep=0` (ebfbbd8's behaviour): 77.5% at 100 ms and, with ebfbbd8's `flip_depth=2` as
    /// well, 68.3% at 300 ms (docs/benchmarks.md).
    pub repetition: bool,
    /// Star2's probe at a flip (`probe=`; 2, the default since stop 70; 0 is the search of
    /// every figure measured before it): before the reveals are
    /// searched in full, each is tried against its opponent's first reply only, in a null
    /// window at the flip's alpha. When every reveal's reply holds the flipper to alpha or
    /// less, so does the flip, and it is cut at the cost of one reply per reveal. 1 stops
    /// probing at the first reveal that escapes; 2 probes every reveal, and the full pass
    /// narrows its windows by the bounds found. Exact wherever the moves searched do not
    /// depend on the table: the value at a given depth does not change, only the nodes it
    /// takes. (Below `flip_depth` a side with only flips searches the table's flip alone when
    /// the table has one, and a probe fills the table, so there the two can differ.)
    pub probe: u8,
    /// ChanceProbCut's margin (`cpc=`, in the evaluation's units, a pawn about 40; 40, the
    /// default since stop 71; 0 is off, the search of every figure measured before it): before a flip is searched in full, its reveals are searched
    /// [`AbSettings::cpc_depth`] plies shallower in the flip's window widened by the margin on
    /// each side, and a shallow mean that falls outside that wider window is taken as the
    /// flip's bound without the full search (Chen et al.'s ChanceProbCut, as strong Banqi
    /// programs use it). Forward pruning: unlike the probe, it can change values. Measured at
    /// 300 ms with the built-in model: middle-game median depth 7 to 8, and 61.7% over 60
    /// matches against `cpc=0` (+83 [+18, +153], docs/benchmarks.md).
    pub cpc: u16,
    /// Plies ChanceProbCut's shallow search is short of the full one (`cpc_depth=`).
    pub cpc_depth: u8,
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
            contempt: None,
            rfp: 0,
            lmr: 1,
            reveal: 0,
            repetition: true,
            probe: 2,
            cpc: 40,
            cpc_depth: 2,
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
        self.weights = list
            .and_then(|l| Weights::from_list(&l))
            .ok_or_else(|| format!("`{v}`: {} integers joined by `/` ({})", Weights::LEN, Weights::RANGES))?;
        Ok(())
    }

    /// The weights as a spec's `weights=` value, or `None` when they are the defaults.
    pub fn weights_text(&self) -> Option<String> {
        (self.weights != Weights::default())
            .then(|| self.weights.to_list().iter().map(i32::to_string).collect::<Vec<_>>().join("/"))
    }

    /// Sets one `key=value` of a `banqi-ab:…` spec ([`AB_KEYS`]).
    ///
    /// # Errors
    /// An unknown key or a bad value, described.
    pub fn set_key(&mut self, k: &str, v: &str) -> Result<(), String> {
        settings::set(AB_KEYS, Syntax::Spec, self, k, &Value::Text(v.into()))
    }

    /// The `key=value` parts of this agent's spec, the defaults left out ([`AB_KEYS`]'s order).
    pub fn spec_parts(&self) -> Vec<String> {
        spec_parts(AB_KEYS, self)
    }

    /// The contempt in force: `contempt=`, else 40 with `search=2` and 0 with `search=1`.
    pub fn contempt(&self) -> u16 {
        self.contempt.unwrap_or(if self.search >= 2 { 40 } else { 0 })
    }

    /// The time per move: `time`, or 300 ms when neither `time` nor `nodes` is set.
    pub fn move_time(&self) -> Option<Duration> {
        match (self.time, self.nodes) {
            (None, None) => Some(Duration::from_millis(300)),
            (t, _) => t,
        }
    }
}

/// The keys of `banqi-ab:…`, declared once: parsed, printed (in this order), listed by
/// `zeroplay agents` and named by an unknown key's error from here.
pub static AB_KEYS: &[Setting<AbSettings>] = &[
    Setting {
        toml: "",
        spec: "time",
        value: "DURATION",
        default: "-",
        help: "Time per move (`300ms`, `1.5s`); with neither time nor nodes, 300 ms.",
        set: |s, v| {
            s.time = Some(duration(v)?);
            Ok(())
        },
        get: |s| s.time.map(duration_value),
    },
    Setting {
        toml: "",
        spec: "nodes",
        value: "N",
        default: "-",
        help: "Nodes per move (with time, whichever ends first); a node budget makes the search deterministic.",
        set: |s, v| {
            s.nodes = Some(count(v)?);
            Ok(())
        },
        get: |s| s.nodes.map(Value::from_u64),
    },
    Setting {
        toml: "",
        spec: "depth",
        value: "N",
        default: "64",
        help: "Deepest iteration, in plies (at most 100).",
        set: |s, v| {
            s.depth = count(v)?.min(100) as u8;
            Ok(())
        },
        get: |s| unless(s.depth, AbSettings::default().depth),
    },
    Setting {
        toml: "",
        spec: "tt",
        value: "MIB",
        default: "16",
        help: "Transposition table size in MiB (rounded down to a power of two entries).",
        set: |s, v| {
            s.tt_mib = count(v)?.min(4096) as u32;
            Ok(())
        },
        get: |s| unless(s.tt_mib, AbSettings::default().tt_mib),
    },
    Setting {
        toml: "",
        spec: "flips",
        value: "N",
        default: "4",
        help: "Flips next to a face-up piece searched below the root (most neighbours first).",
        set: |s, v| {
            s.near_flips = count(v)?.min(32) as u8;
            Ok(())
        },
        get: |s| unless(s.near_flips, AbSettings::default().near_flips),
    },
    Setting {
        toml: "",
        spec: "flip_depth",
        value: "N",
        default: "4",
        help: "Remaining depth from which a node below the root searches flips (ebfbbd8: 2).",
        set: |s, v| {
            s.flip_depth = count(v)?.min(64) as u8;
            Ok(())
        },
        get: |s| unless(s.flip_depth, AbSettings::default().flip_depth),
    },
    Setting {
        toml: "",
        spec: "tb",
        value: "0..8",
        default: "5",
        help: "Endgame tables for boards with nothing face down and at most this many pieces (0: none).",
        set: |s, v| {
            s.tablebase = upto(v, 8)? as u8;
            Ok(())
        },
        get: |s| unless(s.tablebase, AbSettings::default().tablebase),
    },
    Setting {
        toml: "",
        spec: "rfp",
        value: "0..1000",
        default: "0",
        help: "Reverse futility pruning's margin per ply within 3 plies of the horizon (0: off).",
        set: |s, v| {
            s.rfp = upto(v, 1_000)? as u16;
            Ok(())
        },
        get: |s| unless(s.rfp, AbSettings::default().rfp),
    },
    Setting {
        toml: "",
        spec: "lmr",
        value: "1|2",
        default: "1",
        help: "Late-move reductions: 1, one extra ply for late quiet moves; 2, ln(depth)·ln(index)/2 plies.",
        set: |s, v| {
            s.lmr = one_of(v, &[(1, "one extra ply"), (2, "logarithmic")])?;
            Ok(())
        },
        get: |s| unless(s.lmr, AbSettings::default().lmr),
    },
    Setting {
        toml: "",
        spec: "reveal",
        value: "0..4",
        default: "0",
        help: "Extra plies a flip's reveals lose below the root.",
        set: |s, v| {
            s.reveal = upto(v, 4)? as u8;
            Ok(())
        },
        get: |s| unless(s.reveal, AbSettings::default().reveal),
    },
    Setting {
        toml: "",
        spec: "weights",
        value: "W/W/…",
        default: "-",
        help: "The handcrafted evaluation's weights, `/`-separated, as `zeroplay tune` prints them.",
        set: |s, v| s.set_weights(&v.text()),
        get: |s| s.weights_text().map(Value::Text),
    },
    Setting {
        toml: "",
        spec: "model",
        value: "PATH|builtin|served",
        default: "-",
        help: "A one-layer value network valuing the leaves instead of the evaluation; `builtin`: the one built into the binary; `served`: the program's newest.",
        set: |s, v| match &*v.text() {
            "" => Err("``: a model file's path, or `served`".into()),
            path => {
                s.model = Some(path.to_string());
                Ok(())
            }
        },
        get: |s| s.model.clone().map(Value::Text),
    },
    Setting {
        toml: "",
        spec: "search",
        value: "1|2",
        default: "1",
        help: "1: plain alpha-beta; 2: adds PVS, aspiration windows, null move and contempt 40.",
        set: |s, v| {
            s.search = one_of(v, &[(1, "plain alpha-beta"), (2, "PVS, aspiration, null move")])?;
            Ok(())
        },
        get: |s| unless(s.search, AbSettings::default().search),
    },
    Setting {
        toml: "",
        spec: "null",
        value: "0|1",
        default: "1",
        help: "Null-move pruning in search=2 while face-down pieces remain.",
        set: |s, v| {
            s.null_move = flag(v)?;
            Ok(())
        },
        get: |s| unless(u8::from(s.null_move), u8::from(AbSettings::default().null_move)),
    },
    Setting {
        toml: "",
        spec: "contempt",
        value: "0..1000",
        default: "-",
        help: "A draw's cost for a side well ahead (a pawn is about 40); unset: 40 with search=2, else 0.",
        set: |s, v| {
            s.contempt = Some(upto(v, 1_000)? as u16);
            Ok(())
        },
        get: |s| s.contempt.map(|c| Value::from_u64(c.into())),
    },
    Setting {
        toml: "",
        spec: "rep",
        value: "0|1",
        default: "1",
        help: "A position seen before scores as a draw below the root.",
        set: |s, v| {
            s.repetition = flag(v)?;
            Ok(())
        },
        get: |s| unless(u8::from(s.repetition), u8::from(AbSettings::default().repetition)),
    },
    Setting {
        toml: "",
        spec: "probe",
        value: "0|1|2",
        default: "2",
        help: "Star2: a flip is first probed with each reveal's first reply, and cut when all hold it to alpha (1: until one escapes, 2: all).",
        set: |s, v| {
            s.probe = one_of(v, &[(0, "off"), (1, "until a reveal escapes"), (2, "every reveal")])?;
            Ok(())
        },
        get: |s| unless(s.probe, AbSettings::default().probe),
    },
    Setting {
        toml: "",
        spec: "cpc",
        value: "0..1000",
        default: "40",
        help: "ChanceProbCut's margin: a flip whose reveals, searched cpc_depth plies shallower, average this far outside the window is cut (0: off).",
        set: |s, v| {
            s.cpc = upto(v, 1_000)? as u16;
            Ok(())
        },
        get: |s| unless(s.cpc, AbSettings::default().cpc),
    },
    Setting {
        toml: "",
        spec: "cpc_depth",
        value: "1..8",
        default: "2",
        help: "Plies ChanceProbCut's shallow search of a flip's reveals is short of the full search.",
        set: |s, v| {
            s.cpc_depth = match upto(v, 8) {
                Ok(n) if n > 0 => n as u8,
                _ => return Err(format!("`{v}`: 1 to 8")),
            };
            Ok(())
        },
        get: |s| unless(s.cpc_depth, AbSettings::default().cpc_depth),
    },
];

/// `banqi-ab:…` as a game's agent family.
impl FamilyKeys for AbSettings {
    const FAMILY: &'static str = "banqi-ab";

    fn keys() -> &'static [Setting<AbSettings>] {
        AB_KEYS
    }

    fn set_time(&mut self, time: Duration) {
        (self.nodes, self.time) = (None, Some(time));
    }

    fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    fn set_model(&mut self, model: &str) {
        self.model = Some(model.into());
    }

    fn set_table_store(&mut self, store: Option<Arc<dyn TableStore>>) {
        self.store = store.map(SharedTables);
    }
}

/// Banqi's agent families.
pub const FAMILIES: &[GameFamily] = &[GameFamily::of::<AbSettings>(
    &[],
    "Banqi's expectiminimax alpha-beta searcher with endgame tables (Banqi).",
)];
