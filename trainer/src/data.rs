//! Training data: a window of the most recent positions from the coordinator's Parquet files.
//!
//! Files (`games-<first>-<last>.parquet`, written complete and renamed into place by the
//! coordinator) are read newest first until the window holds `window_positions` positions;
//! [`Window::refresh`] picks up files that arrived since and drops the oldest beyond the
//! window, which are never read again. The window can grow with the run ([`WindowSize`]).
//! Every file is checked (schema version, the game's state encoding version, column
//! types) and every row is validated (the state decodes, the visited actions parse and are
//! legal); a bad file is logged, counted and skipped, and the run goes on.
//!
//! Samples keep the state bytes, not features: features are encoded per batch with the engine
//! ([`engine::Features`]), which is fast and keeps the window small. Games whose encoding is
//! costly (TriGolden reads its link sets, which a decoded position must first work out) are
//! encoded once, here, instead ([`engine::Features::ENCODE_ON_LOAD`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::{
    Array, BinaryArray, BooleanArray, Float32Array, Int8Array, Int32Array, ListArray, RecordBatch,
    StringArray, UInt8Array, UInt32Array, UInt64Array,
};
use engine::Features;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use tracing::{info, warn};

/// The Parquet schema version this reader understands (`zeroplay.schema_version`).
pub const SCHEMA_VERSION: &str = "1";

/// One training position.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// State bytes ([`engine::Game::encode`]).
    pub state: Vec<u8>,
    /// Result class from the mover's view: 0 win, 1 draw, 2 loss.
    pub wdl: u8,
    /// Final score difference from the mover's view, in points.
    pub score: f32,
    /// The game was decided outright (a player without a legal move, or a resignation): its
    /// score says little, the result everything.
    pub decisive: bool,
    /// The search's root value from the mover's view, in `[-1, 1]`, where the move was
    /// searched (none for forced moves).
    pub q: Option<f32>,
    /// Policy target: (policy index, probability) pairs; empty when the move had no full
    /// search.
    pub policy: Vec<(u16, f32)>,
    /// A stable hash of the game id, to split games between training and validation.
    pub game_hash: u64,
    /// Clicks played before this position (the game's phase, for diagnostics).
    pub ply: u32,
    /// The model version that played the game (0: before any network).
    pub model_version: u64,
    /// Final ownership per square from the mover's view ([`Features::ownership`]), for games
    /// with an ownership target that were played to their end (not resigned); shared by the
    /// game's positions of one seat.
    pub ownership: Option<std::sync::Arc<[i8]>>,
    /// The position's features, encoded when it was loaded, for games whose encoding is
    /// costly ([`Features::ENCODE_ON_LOAD`]); `None`: encoded per batch from `state`.
    pub features: Option<Box<[f32]>>,
}

/// Why a file was refused.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// I/O.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Not Parquet, or damaged.
    #[error("{path}: not a readable Parquet file: {msg}")]
    Parquet {
        /// The file.
        path: PathBuf,
        /// The reader's message.
        msg: String,
    },
    /// Schema or encoding version mismatch, or a missing/mistyped column.
    #[error("{path}: {msg}")]
    Schema {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        msg: String,
    },
    /// A row that does not replay.
    #[error("{path}: row {row}: {msg}")]
    Row {
        /// The file.
        path: PathBuf,
        /// Row index in the file.
        row: usize,
        /// What is wrong.
        msg: String,
    },
}

fn column<'a, T: 'static>(b: &'a RecordBatch, name: &str, path: &Path) -> Result<&'a T, DataError> {
    b.column_by_name(name).and_then(|c| c.as_any().downcast_ref::<T>()).ok_or_else(|| DataError::Schema {
        path: path.into(),
        msg: format!("column {name:?} missing or mistyped"),
    })
}

fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// Reads and validates the positions of game `G` in one file.
///
/// # Errors
/// [`DataError`] if the file is unreadable, of another schema or encoding version, or holds a
/// row that does not decode or replay.
pub fn read_file<G: Features>(path: &Path) -> Result<Vec<Sample>, DataError> {
    // The parquet crate panics on some corrupt files (a negative column offset in the footer,
    // found by the fuzz target in tests/fuzz.rs): a corrupt file is an error, not a crash.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| read_file_checked::<G>(path))).unwrap_or_else(
        |p| {
            let msg = p
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| p.downcast_ref::<&str>().copied())
                .unwrap_or("the reader failed");
            Err(DataError::Parquet { path: path.into(), msg: format!("corrupt file: {msg}") })
        },
    )
}

fn read_file_checked<G: Features>(path: &Path) -> Result<Vec<Sample>, DataError> {
    let file = File::open(path).map_err(|source| DataError::Io { path: path.into(), source })?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(|e| DataError::Parquet { path: path.into(), msg: e.to_string() })?;
    let kv: HashMap<String, String> = builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .into_iter()
        .flatten()
        .map(|kv| (kv.key.clone(), kv.value.clone().unwrap_or_default()))
        .collect();
    match kv.get("zeroplay.schema_version") {
        Some(v) if v == SCHEMA_VERSION => {}
        other => {
            return Err(DataError::Schema {
                path: path.into(),
                msg: format!("schema version {other:?}, this trainer reads {SCHEMA_VERSION}"),
            });
        }
    }
    let enc_key = format!("zeroplay.encoding.{}", G::NAME);
    if let Some(v) = kv.get(&enc_key)
        && v != &G::STATE_VERSION.to_string()
    {
        return Err(DataError::Schema {
            path: path.into(),
            msg: format!("{} state encoding v{v}, this engine reads v{}", G::NAME, G::STATE_VERSION),
        });
    }
    let reader = builder.build().map_err(|e| DataError::Parquet { path: path.into(), msg: e.to_string() })?;
    let mut out = Vec::new();
    let mut row_base = 0;
    // For the ownership target: each game's samples and its last row (ply, state, action).
    let mut games: HashMap<String, GameEnd> = HashMap::new();
    for batch in reader {
        let b = batch.map_err(|e| DataError::Parquet { path: path.into(), msg: e.to_string() })?;
        let kind = column::<StringArray>(&b, "game_kind", path)?;
        let game_id = column::<StringArray>(&b, "game_id", path)?;
        let actor = column::<UInt8Array>(&b, "actor", path)?;
        let state = column::<BinaryArray>(&b, "state", path)?;
        let va = column::<ListArray>(&b, "visit_actions", path)?;
        let vc = column::<ListArray>(&b, "visit_counts", path)?;
        let full = column::<BooleanArray>(&b, "full_search", path)?;
        let result = column::<Int8Array>(&b, "result", path)?;
        let score = column::<Int32Array>(&b, "score", path)?;
        let root_value = column::<Float32Array>(&b, "root_value", path)?;
        let decisive = column::<BooleanArray>(&b, "decisive", path)?;
        let ply = column::<UInt32Array>(&b, "ply", path)?;
        let model_version = column::<UInt64Array>(&b, "model_version", path)?;
        let (action, resigned) = if G::OWNERSHIP_LEN > 0 {
            (
                Some(column::<StringArray>(&b, "action", path)?),
                Some(column::<BooleanArray>(&b, "resigned", path)?),
            )
        } else {
            (None, None)
        };
        for i in 0..b.num_rows() {
            let row = row_base + i;
            let bad = |msg: String| DataError::Row { path: path.into(), row, msg };
            if kind.value(i) != G::NAME {
                continue;
            }
            if let (Some(action), Some(resigned)) = (action, resigned) {
                let end = games.entry(game_id.value(i).to_string()).or_default();
                end.resigned |= resigned.value(i);
                if end.last.as_ref().is_none_or(|l| l.0 < ply.value(i)) {
                    end.last =
                        Some((ply.value(i), state.value(i).to_vec(), action.value(i).to_string(), row));
                }
            }
            if actor.value(i) > 1 {
                continue;
            }
            let bytes = state.value(i);
            let g = G::decode(bytes).map_err(|e| bad(format!("state: {e}")))?;
            if g.outcome().is_some() {
                return Err(bad("state is a finished game".into()));
            }
            let wdl = match result.value(i) {
                1 => 0,
                0 => 1,
                -1 => 2,
                r => return Err(bad(format!("result {r} is not -1, 0 or 1"))),
            };
            let searched = va.value_length(i) > 0;
            let q = root_value.value(i);
            if searched && !(q.is_finite() && (-1.0..=1.0).contains(&q)) {
                return Err(bad(format!("root_value {q} is outside [-1, 1]")));
            }
            let mut policy = Vec::new();
            if full.value(i) {
                let acts = va.value(i);
                let acts = acts
                    .as_any()
                    .downcast_ref::<StringArray>()
                    .ok_or_else(|| bad("visit_actions is not a list of strings".into()))?;
                let counts = vc.value(i);
                let counts = counts
                    .as_any()
                    .downcast_ref::<UInt32Array>()
                    .ok_or_else(|| bad("visit_counts is not a list of u32".into()))?;
                if acts.len() != counts.len() {
                    return Err(bad("visit_actions and visit_counts differ in length".into()));
                }
                let total: f64 = counts.values().iter().map(|&c| f64::from(c)).sum();
                for j in 0..acts.len() {
                    let a = g.parse_action(acts.value(j)).map_err(|e| bad(format!("visited action: {e}")))?;
                    if !g.is_legal(a) {
                        return Err(bad(format!("visited action {a} is illegal here")));
                    }
                    if let Some(idx) = G::action_index(&a)
                        && total > 0.0
                    {
                        policy.push((idx as u16, (f64::from(counts.value(j)) / total) as f32));
                    }
                }
            }
            let features = G::ENCODE_ON_LOAD.then(|| {
                let mut x = vec![0.0; G::FEATURE_LEN].into_boxed_slice();
                g.encode_features(&mut x);
                x
            });
            out.push(Sample {
                features,
                state: bytes.to_vec(),
                wdl,
                score: score.value(i) as f32,
                decisive: decisive.value(i),
                q: searched.then_some(q),
                policy,
                game_hash: fnv(game_id.value(i)),
                ply: ply.value(i),
                model_version: model_version.value(i),
                ownership: None,
            });
            if let Some(end) = games.get_mut(game_id.value(i)) {
                end.samples.push((out.len() - 1, g.perspective()));
            }
        }
        row_base += b.num_rows();
    }
    for end in games.into_values() {
        set_ownership::<G>(&mut out, end, path)?;
    }
    Ok(out)
}

/// What the loader keeps of a game to give its positions their ownership target.
#[derive(Default)]
struct GameEnd {
    /// The game's samples: index, and the seat whose view it takes.
    samples: Vec<(usize, engine::Seat)>,
    /// The last row: ply, state bytes, the action played there, row index.
    last: Option<(u32, Vec<u8>, String, usize)>,
    /// Any row says the game was resigned: its last position is not the end.
    resigned: bool,
}

/// Plays a game's last action to reach its final position and gives each of its samples that
/// position's ownership from its mover's view. A resigned game, or one whose last row does not
/// end it, keeps no target (its final board is not the end of play).
fn set_ownership<G: Features>(out: &mut [Sample], end: GameEnd, path: &Path) -> Result<(), DataError> {
    let Some((_, state, action, row)) = end.last else { return Ok(()) };
    if end.resigned {
        return Ok(());
    }
    let bad = |msg: String| DataError::Row { path: path.into(), row, msg };
    let mut g = G::decode(&state).map_err(|e| bad(format!("state: {e}")))?;
    let a = g.parse_action(&action).map_err(|e| bad(format!("action: {e}")))?;
    g.play(a).map_err(|e| bad(format!("action {action:?}: {e}")))?;
    if g.outcome().is_none() {
        return Ok(());
    }
    let mut first = vec![0i8; G::OWNERSHIP_LEN];
    g.ownership(engine::Seat::First, &mut first);
    let second: std::sync::Arc<[i8]> = first.iter().map(|&o| -o).collect();
    let first: std::sync::Arc<[i8]> = first.into();
    for (i, mover) in end.samples {
        out[i].ownership = Some(if mover == engine::Seat::First { first.clone() } else { second.clone() });
    }
    Ok(())
}

/// The Parquet files in `dir`, oldest first (the coordinator names them by game sequence).
///
/// # Errors
/// If the directory cannot be listed.
pub fn list_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    v.sort();
    Ok(v)
}

/// The suffix of the files that list games set aside by the coordinator (a quarantined
/// worker's, issue 42): JSON objects whose `games` array names game ids never to train on.
pub const SET_ASIDE_SUFFIX: &str = ".set-aside.json";

/// Every game id the `.set-aside.json` files in `dir` name, as the hashes samples carry.
/// A file that does not parse is named in the log and skipped (its games stay in).
pub fn set_aside(dir: &Path) -> std::io::Result<BTreeSet<u64>> {
    let mut out = BTreeSet::new();
    for e in std::fs::read_dir(dir)? {
        let path = e?.path();
        if !path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(SET_ASIDE_SUFFIX)) {
            continue;
        }
        let parsed = std::fs::read(&path)
            .map_err(|e| e.to_string())
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).map_err(|e| e.to_string()));
        let games = parsed.as_ref().ok().and_then(|v| v.get("games")).and_then(|g| g.as_array());
        match games {
            Some(games) => out.extend(games.iter().filter_map(|g| g.as_str()).map(fnv)),
            None => {
                warn!(file = %path.display(), error = ?parsed.as_ref().err(), "skipping a set-aside file that does not parse")
            }
        }
    }
    Ok(out)
}

/// How many positions the window holds as a run goes on.
///
/// A fixed window (`min_positions == 0`) holds `max_positions`. A growing one follows
/// KataGo's shape: all positions while the run has fewer than `c = min_positions`, then
/// `c · (1 + β · ((N / c)^α − 1) / α)` for `N` positions produced so far (α = 0.75,
/// β = 0.4, KataGo's defaults), never more than `max_positions`. Early positions come from
/// weak networks; a window that grows slower than the data drops them sooner, while a late
/// run still trains on a wide sample.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WindowSize {
    /// The most positions held.
    pub max_positions: usize,
    /// `c` of the growth curve; 0: a fixed window of `max_positions`.
    pub min_positions: usize,
}

impl WindowSize {
    /// KataGo's exponent of the growth curve.
    pub const ALPHA: f64 = 0.75;
    /// KataGo's slope of the growth curve.
    pub const BETA: f64 = 0.4;

    /// A fixed window of `n` positions.
    pub fn fixed(n: usize) -> WindowSize {
        WindowSize { max_positions: n, min_positions: 0 }
    }

    /// The window for a run that has produced `total` positions (at least 1).
    pub fn capacity(&self, total: u64) -> usize {
        let max = self.max_positions.max(1);
        if self.min_positions == 0 {
            return max;
        }
        let c = self.min_positions as f64;
        let n = total as f64;
        let want =
            if n <= c { c } else { c * (1.0 + Self::BETA * ((n / c).powf(Self::ALPHA) - 1.0) / Self::ALPHA) };
        (want as usize).clamp(1, max)
    }
}

/// At most `n` of `v`, evenly spaced (a sample of a window that is not all from its oldest
/// files).
pub fn spread<'a, T>(v: &[&'a T], n: usize) -> Vec<&'a T> {
    let step = v.len().div_ceil(n.max(1)).max(1);
    v.iter().step_by(step).copied().collect()
}

/// Rows in a Parquet file, from its footer alone (none if it cannot be read).
fn footer_rows(path: &Path) -> Option<u64> {
    let file = File::open(path).ok()?;
    let b = ParquetRecordBatchReaderBuilder::try_new(file).ok()?;
    u64::try_from(b.metadata().file_metadata().num_rows()).ok()
}

/// A sliding window over the most recent positions.
///
/// Each file is read at most once: a file that falls out of the window, or that is older
/// than a full window when first seen, is retired and never read again (so it cannot come
/// back as "new" positions and start a round on data already trained on).
#[derive(Debug, Default)]
pub struct Window {
    /// Files read, oldest first, with their samples.
    files: BTreeMap<PathBuf, Vec<Sample>>,
    /// Files refused (never retried).
    pub bad_files: BTreeMap<PathBuf, String>,
    /// Files dropped from the window or passed over as too old (never read again).
    retired: BTreeSet<PathBuf>,
    /// Rows per file seen (from the Parquet footer), for the run's total.
    rows: BTreeMap<PathBuf, u64>,
    size: WindowSize,
    /// Hashes of the game ids set aside (never trained on).
    set_aside: BTreeSet<u64>,
}

impl Window {
    /// An empty window of at most `capacity` positions (whole files are kept or dropped, so it
    /// may hold up to one file more).
    pub fn new(capacity: usize) -> Window {
        Window::sized(WindowSize::fixed(capacity))
    }

    /// An empty window sized by `size`.
    pub fn sized(size: WindowSize) -> Window {
        Window { size, ..Window::default() }
    }

    /// Positions in every data file seen so far (read, retired or refused), from the files'
    /// footers: the `N` of [`WindowSize::capacity`].
    pub fn total_positions(&self) -> u64 {
        self.rows.values().sum()
    }

    /// The window's capacity now.
    pub fn capacity(&self) -> usize {
        self.size.capacity(self.total_positions())
    }

    /// Reads files in `dir` not seen yet, newest first until the window is full, and drops the
    /// oldest beyond the window. Returns the number of new positions.
    ///
    /// # Errors
    /// If the directory cannot be listed; bad files are recorded in
    /// [`Window::bad_files`] instead.
    pub fn refresh<G: Features>(&mut self, dir: &Path) -> std::io::Result<usize> {
        let files = list_files(dir)?;
        // Games of quarantined workers: out of the files held, and of every file read.
        let aside = set_aside(dir)?;
        if aside.len() > self.set_aside.len() {
            let before = self.len();
            for samples in self.files.values_mut() {
                samples.retain(|s| !aside.contains(&s.game_hash));
            }
            if before > self.len() {
                info!(
                    positions = before - self.len(),
                    games = aside.len(),
                    "positions of set-aside games dropped"
                );
            }
            self.set_aside = aside;
        }
        for path in &files {
            if !self.rows.contains_key(path) {
                let n = footer_rows(path).unwrap_or(0);
                self.rows.insert(path.clone(), n);
            }
        }
        let capacity = self.capacity();
        let mut added = 0;
        // Positions in files at least as new as the one looked at.
        let mut kept = 0;
        for path in files.iter().rev() {
            if let Some(s) = self.files.get(path) {
                kept += s.len();
                continue;
            }
            if self.bad_files.contains_key(path) || self.retired.contains(path) {
                continue;
            }
            if kept >= capacity {
                self.retired.insert(path.clone());
                continue;
            }
            match read_file::<G>(path) {
                Ok(mut samples) => {
                    if !self.set_aside.is_empty() {
                        samples.retain(|s| !self.set_aside.contains(&s.game_hash));
                    }
                    kept += samples.len();
                    added += samples.len();
                    self.files.insert(path.clone(), samples);
                }
                Err(e) => {
                    warn!(error = %e, "skipping a bad training file");
                    self.bad_files.insert(path.clone(), e.to_string());
                }
            }
        }
        while self.len() > capacity && self.files.len() > 1 {
            let oldest = self.files.keys().next().cloned().expect("non-empty");
            let n = self.files[&oldest].len();
            if self.len() - n < capacity {
                break;
            }
            self.files.remove(&oldest);
            self.retired.insert(oldest);
        }
        Ok(added)
    }

    /// Positions held.
    pub fn len(&self) -> usize {
        self.files.values().map(Vec::len).sum()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Files held.
    pub fn file_count(&self) -> usize {
        self.files.len()
    }

    /// The file name of the newest file held (files sort oldest first by name, as the
    /// coordinator names them by their first game), or "" when empty.
    pub fn newest_file(&self) -> String {
        self.files.keys().next_back().map_or_else(String::new, |p| file_name(p))
    }

    /// Positions held in files whose name sorts after `name`: what is new to a round that had
    /// read up to and including `name`.
    pub fn positions_after(&self, name: &str) -> usize {
        self.files.iter().filter(|(p, _)| file_name(p).as_str() > name).map(|(_, s)| s.len()).sum()
    }

    /// All samples, split into (training, validation) by game: games whose hash falls in the
    /// lowest `validation_fraction` go to validation, so no game is on both sides.
    pub fn split(&self, validation_fraction: f64) -> (Vec<&Sample>, Vec<&Sample>) {
        let cut = (validation_fraction.clamp(0.0, 1.0) * u64::MAX as f64) as u64;
        self.files.values().flatten().partition(|s| s.game_hash >= cut)
    }
}

/// A path's last component, lossily as text ("" for none).
fn file_name(p: &Path) -> String {
    p.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_growing_window_follows_katagos_curve_up_to_its_cap() {
        let w = WindowSize { max_positions: 1_000_000, min_positions: 250_000 };
        assert_eq!(w.capacity(0), 250_000);
        assert_eq!(w.capacity(250_000), 250_000);
        // 1 M positions: 250k · (1 + 0.4 · (4^0.75 − 1) / 0.75) = 493,790.
        assert_eq!(w.capacity(1_000_000), 493_790);
        let mut last = 0;
        for n in (0..20).map(|i| 1u64 << i).map(|k| k * 10_000) {
            let c = w.capacity(n);
            assert!(c >= last && c <= 1_000_000, "{n}: {c}");
            last = c;
        }
        assert_eq!(w.capacity(100_000_000), 1_000_000, "capped");
        assert_eq!(WindowSize::fixed(7).capacity(123_456_789), 7);
    }
}
