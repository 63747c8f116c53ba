//! The Parquet schema (one row per position) and the file writer.
//!
//! # Schema (version 1)
//!
//! | column | type | meaning |
//! |---|---|---|
//! | `game_id` | utf8 | 32 hex digits, unique per game |
//! | `game_kind` | utf8 | `battlenumber`, … |
//! | `seed` | uint64 | the seed the game was played with |
//! | `engine_version` | utf8 | engine version that played it |
//! | `encoding_version` | uint32 | state encoding version of `state` |
//! | `model_version` | uint64 | model that searched this move (0: none, rollout/uniform) |
//! | `ply` | uint32 | index of this action in the game (atomic actions, chance included) |
//! | `actor` | uint8 | who acts: 0 first seat, 1 second seat, 2 chance |
//! | `state` | binary | the position before the action (`Game::encode`) |
//! | `action` | utf8 | the action taken, as the engine prints it |
//! | `visit_actions` | list<utf8> | root children searched (empty: forced or chance move) |
//! | `visit_counts` | list<uint32> | their visit counts, same order |
//! | `root_value` | float32 | root value from the actor's view, in [−1, 1] |
//! | `full_search` | bool | a full search (a policy target under playout-cap randomisation) |
//! | `result` | int8 | final result from the actor's view: 1 win, 0 draw, −1 loss (chance rows: first seat's view) |
//! | `score` | int32 | final score difference from the actor's view |
//! | `decisive` | bool | the game was decided outright (no legal move, or resignation) |
//! | `resigned` | bool | the game ended by resignation |
//! | `would_resign_seat` | int8 | in a game played out despite a resignation signal, the seat that would have resigned (0/1); −1 otherwise. A false resignation is a row group where that seat did not lose |
//!
//! File metadata (key/value): `zeroplay.schema_version`, `zeroplay.engine_version`, and
//! `zeroplay.encoding.<game kind>` for each kind in the file.

use std::collections::BTreeSet;
use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{ListBuilder, StringBuilder, UInt32Builder};
use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, Float32Array, Int8Array, Int32Array, RecordBatch, StringArray,
    UInt8Array, UInt32Array, UInt64Array,
};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

/// Version of the Parquet schema above.
pub const SCHEMA_VERSION: u32 = 1;

/// One stored position.
#[derive(Clone, Debug, PartialEq)]
pub struct PositionRow {
    /// See the schema table.
    pub game_id: String,
    /// See the schema table.
    pub game_kind: &'static str,
    /// See the schema table.
    pub seed: u64,
    /// See the schema table.
    pub engine_version: String,
    /// See the schema table.
    pub encoding_version: u32,
    /// See the schema table.
    pub model_version: u64,
    /// See the schema table.
    pub ply: u32,
    /// See the schema table.
    pub actor: u8,
    /// See the schema table.
    pub state: Vec<u8>,
    /// See the schema table.
    pub action: String,
    /// See the schema table.
    pub visit_actions: Vec<String>,
    /// See the schema table.
    pub visit_counts: Vec<u32>,
    /// See the schema table.
    pub root_value: f32,
    /// See the schema table.
    pub full_search: bool,
    /// See the schema table.
    pub result: i8,
    /// See the schema table.
    pub score: i32,
    /// See the schema table.
    pub decisive: bool,
    /// See the schema table.
    pub resigned: bool,
    /// See the schema table.
    pub would_resign_seat: i8,
}

/// The Arrow schema of the files.
pub fn schema() -> SchemaRef {
    let list = |inner: DataType| DataType::List(Arc::new(Field::new("item", inner, true)));
    Arc::new(Schema::new(vec![
        Field::new("game_id", DataType::Utf8, false),
        Field::new("game_kind", DataType::Utf8, false),
        Field::new("seed", DataType::UInt64, false),
        Field::new("engine_version", DataType::Utf8, false),
        Field::new("encoding_version", DataType::UInt32, false),
        Field::new("model_version", DataType::UInt64, false),
        Field::new("ply", DataType::UInt32, false),
        Field::new("actor", DataType::UInt8, false),
        Field::new("state", DataType::Binary, false),
        Field::new("action", DataType::Utf8, false),
        Field::new("visit_actions", list(DataType::Utf8), false),
        Field::new("visit_counts", list(DataType::UInt32), false),
        Field::new("root_value", DataType::Float32, false),
        Field::new("full_search", DataType::Boolean, false),
        Field::new("result", DataType::Int8, false),
        Field::new("score", DataType::Int32, false),
        Field::new("decisive", DataType::Boolean, false),
        Field::new("resigned", DataType::Boolean, false),
        Field::new("would_resign_seat", DataType::Int8, false),
    ]))
}

fn batch(rows: &[PositionRow]) -> RecordBatch {
    let mut visit_actions = ListBuilder::new(StringBuilder::new());
    let mut visit_counts = ListBuilder::new(UInt32Builder::new());
    for r in rows {
        for a in &r.visit_actions {
            visit_actions.values().append_value(a);
        }
        visit_actions.append(true);
        visit_counts.values().append_slice(&r.visit_counts);
        visit_counts.append(true);
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.game_id.as_str()))),
        Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.game_kind))),
        Arc::new(UInt64Array::from_iter_values(rows.iter().map(|r| r.seed))),
        Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.engine_version.as_str()))),
        Arc::new(UInt32Array::from_iter_values(rows.iter().map(|r| r.encoding_version))),
        Arc::new(UInt64Array::from_iter_values(rows.iter().map(|r| r.model_version))),
        Arc::new(UInt32Array::from_iter_values(rows.iter().map(|r| r.ply))),
        Arc::new(UInt8Array::from_iter_values(rows.iter().map(|r| r.actor))),
        Arc::new(BinaryArray::from_iter_values(rows.iter().map(|r| r.state.as_slice()))),
        Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.action.as_str()))),
        Arc::new(visit_actions.finish()),
        Arc::new(visit_counts.finish()),
        Arc::new(Float32Array::from_iter_values(rows.iter().map(|r| r.root_value))),
        Arc::new(BooleanArray::from(rows.iter().map(|r| Some(r.full_search)).collect::<Vec<_>>())),
        Arc::new(Int8Array::from_iter_values(rows.iter().map(|r| r.result))),
        Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.score))),
        Arc::new(BooleanArray::from(rows.iter().map(|r| Some(r.decisive)).collect::<Vec<_>>())),
        Arc::new(BooleanArray::from(rows.iter().map(|r| Some(r.resigned)).collect::<Vec<_>>())),
        Arc::new(Int8Array::from_iter_values(rows.iter().map(|r| r.would_resign_seat))),
    ];
    RecordBatch::try_new(schema(), columns).expect("columns are built to match schema()")
}

/// Errors writing a Parquet file.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// File system error.
    #[error("writing parquet: {0}")]
    Io(#[from] io::Error),
    /// Parquet encoder error.
    #[error("writing parquet: {0}")]
    Parquet(#[from] parquet::errors::ParquetError),
}

/// Writes `rows` to `dir/name` durably: to `name.tmp` first, fsynced, then renamed, then the
/// directory fsynced. Returns the file size in bytes.
///
/// # Errors
/// [`WriteError`] on any I/O or encoding failure; the final name is then never created.
pub fn write_file(
    dir: &Path,
    name: &str,
    rows: &[PositionRow],
    engine_version: &str,
) -> Result<u64, WriteError> {
    let path = dir.join(name);
    let tmp = durable::tmp_path(&path);
    // A failed write (a full disk) leaves nothing behind: neither the partial temporary file
    // nor, if only the directory sync failed, a finished file the manifest will not list.
    if let Err(e) = write_tmp(&tmp, rows, engine_version) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    durable::persist(&tmp, &path)?;
    Ok(std::fs::metadata(&path)?.len())
}

/// Writes the Parquet file `tmp` and syncs it to disk.
fn write_tmp(tmp: &Path, rows: &[PositionRow], engine_version: &str) -> Result<(), WriteError> {
    let file = File::create(tmp)?;
    let kinds: BTreeSet<(&str, u32)> = rows.iter().map(|r| (r.game_kind, r.encoding_version)).collect();
    let mut kv = vec![
        KeyValue::new("zeroplay.schema_version".into(), SCHEMA_VERSION.to_string()),
        KeyValue::new("zeroplay.engine_version".into(), engine_version.to_string()),
    ];
    for (kind, v) in kinds {
        kv.push(KeyValue::new(format!("zeroplay.encoding.{kind}"), v.to_string()));
    }
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_key_value_metadata(Some(kv))
        .set_max_row_group_row_count(Some(64 * 1024))
        .build();
    // The same metadata on the Arrow schema, where Arrow readers (pyarrow's `schema.metadata`)
    // look for it.
    let meta: std::collections::HashMap<String, String> = props
        .key_value_metadata()
        .into_iter()
        .flatten()
        .map(|kv| (kv.key.clone(), kv.value.clone().unwrap_or_default()))
        .collect();
    let file_schema = Arc::new(schema().as_ref().clone().with_metadata(meta));
    let mut writer = ArrowWriter::try_new(file, file_schema.clone(), Some(props))?;
    for chunk in rows.chunks(16 * 1024) {
        let b = batch(chunk).with_schema(file_schema.clone()).expect("same fields, more metadata");
        writer.write(&b)?;
    }
    let file = writer.into_inner()?;
    file.sync_all()?;
    Ok(())
}
