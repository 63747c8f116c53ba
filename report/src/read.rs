//! Reading the store: every Parquet file of a directory, checked, grouped back into games.
//!
//! A file is one or more games, one row per position (the schema in
//! `coordinator/src/rows.rs`). A file that is not readable Parquet, of another schema version,
//! or with a column of the wrong type is skipped and named in the report; a game whose rows do
//! not run from ply 0 without a gap is skipped and counted.

use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::{
    Array, BinaryArray, BooleanArray, Int8Array, Int32Array, ListArray, RecordBatch, StringArray, UInt8Array,
    UInt32Array, UInt64Array,
};
use engine::GameKind;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

/// The schema version this reader understands (`zeroplay.schema_version`).
pub const SCHEMA_VERSION: &str = "1";

/// One stored game, as the report needs it.
#[derive(Clone, Debug, PartialEq)]
pub struct GameRecord {
    /// Its id.
    pub id: String,
    /// The game.
    pub kind: GameKind,
    /// The seed it was played with.
    pub seed: u64,
    /// The model that played it (0: no network yet).
    pub model_version: u64,
    /// The position at ply 0 (`Game::encode`): the start, with the game's options.
    pub start: Vec<u8>,
    /// The actions, in order.
    pub actions: Vec<String>,
    /// The result from the first seat's view: 1 win, 0 draw, −1 loss.
    pub result_first: i8,
    /// The final score difference from the first seat's view.
    pub score_first: i32,
    /// Decided outright (no legal move, or a resignation).
    pub decisive: bool,
    /// Ended by resignation.
    pub resigned: bool,
    /// The search budget: the median of the visit counts' totals over the game's full
    /// searches (0: no full search recorded).
    pub budget: u32,
}

/// Why a file was skipped.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// I/O.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
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
    /// Another schema, or a column missing or of another type.
    #[error("{path}: {msg}")]
    Schema {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        msg: String,
    },
}

/// The Parquet files of `dir` (not its subdirectories), in name order.
///
/// # Errors
/// The directory cannot be read.
pub fn list_files(dir: &Path) -> Result<Vec<PathBuf>, ReadError> {
    let io = |source| ReadError::Io { path: dir.to_path_buf(), source };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "parquet") && p.is_file())
        .collect();
    files.sort();
    Ok(files)
}

/// One position row, the columns the report reads (held until its game is assembled).
pub struct Row {
    kind: GameKind,
    seed: u64,
    model_version: u64,
    ply: u32,
    actor: u8,
    state: Option<Vec<u8>>,
    action: String,
    visits: u32,
    full: bool,
    result: i8,
    score: i32,
    decisive: bool,
    resigned: bool,
}

/// One file's rows, each with its game's id.
///
/// # Errors
/// The file is unreadable, of another schema version, or has a bad column or game kind.
pub fn read_file(path: &Path) -> Result<Vec<(String, Row)>, ReadError> {
    let parquet = |msg: String| ReadError::Parquet { path: path.to_path_buf(), msg };
    let schema = |msg: String| ReadError::Schema { path: path.to_path_buf(), msg };
    let file = File::open(path).map_err(|source| ReadError::Io { path: path.to_path_buf(), source })?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| parquet(e.to_string()))?;
    let version =
        builder.metadata().file_metadata().key_value_metadata().and_then(|kv| {
            kv.iter().find(|k| k.key == "zeroplay.schema_version").and_then(|k| k.value.clone())
        });
    if version.as_deref() != Some(SCHEMA_VERSION) {
        return Err(schema(format!(
            "schema version {} (this reader reads version {SCHEMA_VERSION})",
            version.as_deref().unwrap_or("none")
        )));
    }
    let reader = builder.build().map_err(|e| parquet(e.to_string()))?;
    let mut rows = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|e| parquet(e.to_string()))?;
        let cols = Columns::of(&batch).map_err(schema)?;
        for i in 0..batch.num_rows() {
            rows.push(cols.row(i).map_err(schema)?);
        }
    }
    Ok(rows)
}

/// Assembles a game from its rows; `None` if they do not run from ply 0 without a gap or
/// disagree on the game.
pub fn assemble(id: String, mut rows: Vec<Row>) -> Option<GameRecord> {
    rows.sort_by_key(|r| r.ply);
    let first = rows.first()?;
    if rows.iter().enumerate().any(|(i, r)| r.ply as usize != i || r.kind != first.kind) {
        return None;
    }
    let start = first.state.clone()?;
    // The result from the first seat's view: a seat's rows carry its own view, chance rows the
    // first seat's.
    let last = rows.last()?;
    let flip = |v: i32, actor: u8| if actor == 1 { -v } else { v };
    let mut budgets: Vec<u32> = rows.iter().filter(|r| r.full && r.visits > 0).map(|r| r.visits).collect();
    budgets.sort_unstable();
    Some(GameRecord {
        id,
        kind: first.kind,
        seed: first.seed,
        model_version: rows.iter().map(|r| r.model_version).max().unwrap_or(0),
        start,
        actions: rows.iter().map(|r| r.action.clone()).collect(),
        result_first: flip(i32::from(last.result), last.actor).clamp(-1, 1) as i8,
        score_first: flip(last.score, last.actor),
        decisive: last.decisive,
        resigned: last.resigned,
        budget: budgets.get(budgets.len() / 2).copied().unwrap_or(0),
    })
}

/// The columns of one record batch, typed.
struct Columns<'a> {
    id: &'a StringArray,
    kind: &'a StringArray,
    seed: &'a UInt64Array,
    model: &'a UInt64Array,
    ply: &'a UInt32Array,
    actor: &'a UInt8Array,
    state: &'a BinaryArray,
    action: &'a StringArray,
    visits: &'a ListArray,
    full: &'a BooleanArray,
    result: &'a Int8Array,
    score: &'a Int32Array,
    decisive: &'a BooleanArray,
    resigned: &'a BooleanArray,
}

fn column<'a, T: 'static>(batch: &'a RecordBatch, name: &str) -> Result<&'a T, String> {
    let c = batch.column_by_name(name).ok_or_else(|| format!("no column {name}"))?;
    c.as_any().downcast_ref::<T>().ok_or_else(|| format!("column {name} has type {}", c.data_type()))
}

impl<'a> Columns<'a> {
    fn of(b: &'a RecordBatch) -> Result<Columns<'a>, String> {
        Ok(Columns {
            id: column(b, "game_id")?,
            kind: column(b, "game_kind")?,
            seed: column(b, "seed")?,
            model: column(b, "model_version")?,
            ply: column(b, "ply")?,
            actor: column(b, "actor")?,
            state: column(b, "state")?,
            action: column(b, "action")?,
            visits: column(b, "visit_counts")?,
            full: column(b, "full_search")?,
            result: column(b, "result")?,
            score: column(b, "score")?,
            decisive: column(b, "decisive")?,
            resigned: column(b, "resigned")?,
        })
    }

    fn row(&self, i: usize) -> Result<(String, Row), String> {
        let kind_name = self.kind.value(i);
        let kind: GameKind =
            kind_name.parse().map_err(|_| format!("row {i}: unknown game kind {kind_name:?}"))?;
        let ply = self.ply.value(i);
        let counts = self.visits.value(i);
        let counts = counts
            .as_any()
            .downcast_ref::<UInt32Array>()
            .ok_or("column visit_counts is not a list of uint32")?;
        let visits = counts.iter().flatten().fold(0u32, u32::saturating_add);
        Ok((
            self.id.value(i).to_string(),
            Row {
                kind,
                seed: self.seed.value(i),
                model_version: self.model.value(i),
                ply,
                actor: self.actor.value(i),
                // Only the start is kept: a game is replayed from it.
                state: (ply == 0).then(|| self.state.value(i).to_vec()),
                action: self.action.value(i).to_string(),
                visits,
                full: self.full.value(i),
                result: self.result.value(i),
                score: self.score.value(i),
                decisive: self.decisive.value(i),
                resigned: self.resigned.value(i),
            },
        ))
    }
}
