//! Recovery at start: the database and the files on disk made to agree without losing a game.
//!
//! The Parquet files are the data set; the database is their index (and the write-ahead log
//! of games not yet in a file). So the index gives way to the files, never the other way:
//! - a file under the temporary name (`*.parquet.tmp`, a write cut short) is removed: it is
//!   the only thing ever deleted, and its games are still staged;
//! - a complete, readable Parquet file the manifest does not list — left by a crash between
//!   its rename and the manifest's transaction, restored from a backup, or found after the
//!   database was lost — is **adopted**: listed, its games and move digests indexed, and any
//!   of its games still staged taken out of the staging table;
//! - a listed file whose size is not the recorded one, or any file that does not read as a
//!   zeroplay Parquet file, is moved to `quarantine/` and named in the log and on /metrics;
//! - a listed file that is missing is unlisted (restored later, it is adopted);
//! - a file with the same bytes as a listed one (a backup copy put back under another name)
//!   is quarantined too: adopting it would give the trainer those games twice;
//! - published models whose entries the database lost are listed again from `models/`
//!   (each model's JSON sidecar, else the file itself), so a new model never overwrites one.
//!
//! [`recover`] does this at every start; with `full` (`zeroplay coordinator --rebuild-index`)
//! it also reads every listed file whole and rebuilds every move digest from the files.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use prost::Message;
use sha2::{Digest, Sha256};
use tracing::{error, info, warn};
use zeroplay_proto::v1 as pb;

use crate::games::{Limits, validate};
use crate::rows;
use crate::store::{FileEntry, ModelEntry, ModelState, Store, StoreError, sidecar_path};

/// The meta key set once every stored game's move digest is in the database.
const DIGESTS_INDEXED: &str = "digests_indexed";

/// What a Parquet file holds, read back.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FileSummary {
    /// Rows (positions).
    pub rows: u64,
    /// Each game id with its rows, in first-seen order.
    pub games: Vec<(String, u64)>,
    /// Each game's move digest.
    pub digests: Vec<[u8; 32]>,
}

/// Reads a zeroplay Parquet file's game ids and move digests, checking that it is one: the
/// footer and metadata, the schema, every game's plies `0..n` once each.
///
/// # Errors
/// A sentence saying what is wrong with the file.
pub fn read_summary(path: &Path) -> Result<FileSummary, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot open it: {e}"))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| format!("not Parquet: {e}"))?;
    let kv: HashMap<String, String> = builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .into_iter()
        .flatten()
        .map(|kv| (kv.key.clone(), kv.value.clone().unwrap_or_default()))
        .collect();
    let version = kv.get("zeroplay.schema_version").map(String::as_str);
    if version != Some(&rows::SCHEMA_VERSION.to_string()) {
        return Err(format!(
            "not a zeroplay games file of schema version {} (zeroplay.schema_version: {version:?})",
            rows::SCHEMA_VERSION
        ));
    }
    let want = rows::schema();
    let have = builder.schema();
    let fields = |s: &arrow_schema::Schema| -> Vec<(String, arrow_schema::DataType)> {
        s.fields().iter().map(|f| (f.name().clone(), f.data_type().clone())).collect()
    };
    if fields(have) != fields(&want) {
        return Err("its columns are not the documented schema's".into());
    }
    let columns = ["game_id", "game_kind", "ply", "actor", "state", "action"];
    let index = |c: &str| want.index_of(c).expect("schema column");
    let mask = ProjectionMask::roots(builder.parquet_schema(), columns.iter().map(|c| index(c)));
    let reader = builder.with_projection(mask).build().map_err(|e| format!("unreadable: {e}"))?;
    struct Game {
        kind: String,
        start: Option<Vec<u8>>,
        moves: Vec<(u32, String, bool)>,
    }
    let mut games: HashMap<String, Game> = HashMap::new();
    let mut order = Vec::new();
    let mut rows_n = 0u64;
    for batch in reader {
        let batch = batch.map_err(|e| format!("unreadable: {e}"))?;
        let col = |name: &str| batch.column_by_name(name).ok_or_else(|| format!("no column {name}"));
        let bad = |name: &str| format!("column {name} has the wrong type");
        use arrow_array::{Array, BinaryArray, StringArray, UInt8Array, UInt32Array};
        let ids = col("game_id")?.as_any().downcast_ref::<StringArray>().ok_or_else(|| bad("game_id"))?;
        let kinds =
            col("game_kind")?.as_any().downcast_ref::<StringArray>().ok_or_else(|| bad("game_kind"))?;
        let plies = col("ply")?.as_any().downcast_ref::<UInt32Array>().ok_or_else(|| bad("ply"))?;
        let actors = col("actor")?.as_any().downcast_ref::<UInt8Array>().ok_or_else(|| bad("actor"))?;
        let states = col("state")?.as_any().downcast_ref::<BinaryArray>().ok_or_else(|| bad("state"))?;
        let actions = col("action")?.as_any().downcast_ref::<StringArray>().ok_or_else(|| bad("action"))?;
        for i in 0..batch.num_rows() {
            if ids.is_null(i) || kinds.is_null(i) || actions.is_null(i) || states.is_null(i) {
                return Err(format!("row {}: a null where the schema has none", rows_n + i as u64));
            }
            let id = ids.value(i);
            if !crate::games::valid_game_id(id) {
                return Err(format!("row {}: game id {id:?} is not 32 hex digits", rows_n + i as u64));
            }
            let g = games.entry(id.to_string()).or_insert_with(|| {
                order.push(id.to_string());
                Game { kind: kinds.value(i).to_string(), start: None, moves: Vec::new() }
            });
            let ply = plies.value(i);
            if ply == 0 {
                g.start = Some(states.value(i).to_vec());
            }
            g.moves.push((ply, actions.value(i).to_string(), actors.value(i) == 2));
        }
        rows_n += batch.num_rows() as u64;
    }
    let mut out = FileSummary { rows: rows_n, ..FileSummary::default() };
    for id in order {
        let mut g = games.remove(&id).expect("listed");
        g.moves.sort_by_key(|m| m.0);
        if g.moves.iter().enumerate().any(|(i, m)| m.0 as usize != i) {
            return Err(format!("game {id}: its plies are not 0..{} once each", g.moves.len()));
        }
        let start = g.start.expect("ply 0 is present");
        out.digests.push(crate::trust::moves_digest(
            &g.kind,
            &start,
            g.moves.iter().map(|(_, a, chance)| (a.as_str(), *chance)),
        ));
        out.games.push((id, g.moves.len() as u64));
    }
    Ok(out)
}

/// What recovery did.
#[derive(Clone, Debug, Default)]
pub struct Recovery {
    /// Temporary files removed (writes cut short).
    pub removed_tmp: Vec<String>,
    /// Files adopted: name, games, of which were staged, of which were new to the database.
    pub adopted: Vec<(String, u64, u64, u64)>,
    /// Files moved to `quarantine/`: name there, reason.
    pub quarantined: Vec<(String, String)>,
    /// Listed files that were missing (unlisted now).
    pub missing: Vec<String>,
    /// The database was empty while files were present: the index was rebuilt from them.
    pub rebuilt: bool,
    /// Move digests rebuilt from the files and staged games (0: none needed).
    pub digests_rebuilt: usize,
    /// Models listed again from `models/`.
    pub models_recovered: Vec<u64>,
}

/// Makes the database and the run directory agree (see the module documentation), logging
/// each step. `full`: read every listed file whole and rebuild every digest.
///
/// # Errors
/// [`StoreError`] on a database or file system failure (nothing is deleted then).
pub fn recover(store: &Store, full: bool) -> Result<Recovery, StoreError> {
    let dir = store.games_dir().to_path_buf();
    let mut out = Recovery::default();
    let mut names: Vec<String> = std::fs::read_dir(&dir)?
        .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect::<Result<_, _>>()?;
    names.sort();
    for name in names.iter().filter(|n| n.ends_with(".tmp")) {
        std::fs::remove_file(dir.join(name))?;
        out.removed_tmp.push(name.clone());
    }
    if !out.removed_tmp.is_empty() {
        warn!(files = ?out.removed_tmp, "removed temporary files of Parquet writes cut short; their games are still staged");
    }
    let parquet: Vec<&String> = names.iter().filter(|n| n.ends_with(".parquet")).collect();
    if store.is_empty()? && !parquet.is_empty() {
        out.rebuilt = true;
        warn!(
            db = %store.path().display(),
            files = parquet.len(),
            "the database is new or empty but games/ holds Parquet files: rebuilding the index (game ids, \
             move digests, manifest) from them"
        );
    }
    // Digests read on the way, for the rebuild below.
    let mut read: HashMap<String, Vec<[u8; 32]>> = HashMap::new();
    let listed: HashMap<String, FileEntry> =
        store.files()?.into_iter().map(|f| (f.name.clone(), f)).collect();
    for (name, entry) in &listed {
        let path = dir.join(name);
        let meta = match std::fs::metadata(&path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                store.unlist_file(name)?;
                error!(
                    file = %name,
                    games = entry.games,
                    "a listed Parquet file is missing; unlisted (put it back, from a backup, and the next start adopts it)"
                );
                out.missing.push(name.clone());
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let problem = if meta.len() != entry.bytes {
            Some(format!("{} bytes, but {} were written", meta.len(), entry.bytes))
        } else if full {
            match read_summary(&path) {
                Ok(s) => {
                    read.insert(name.clone(), s.digests);
                    None
                }
                Err(e) => Some(e),
            }
        } else {
            None
        };
        if let Some(reason) = problem {
            let moved = quarantine(store.run_dir(), &path, &reason)?;
            store.unlist_file(name)?;
            out.quarantined.push((moved, reason));
        }
    }
    // The compactor's own files first: of a file and a copy of it under another name, the
    // copy is the one set aside.
    let mut unlisted: Vec<&String> =
        parquet.iter().copied().filter(|n| !listed.contains_key(n.as_str())).collect();
    unlisted.sort_by_key(|n| (!n.starts_with("games-"), n.as_str()));
    for name in unlisted {
        let path = dir.join(name);
        let summary = match read_summary(&path) {
            Ok(s) => s,
            Err(reason) => {
                let moved = quarantine(store.run_dir(), &path, &reason)?;
                out.quarantined.push((moved, reason));
                continue;
            }
        };
        if let Some(twin) = same_bytes_as_listed(&dir, &path, store)? {
            let reason = format!("the same bytes as {twin}, which is listed (a second copy)");
            let moved = quarantine(store.run_dir(), &path, &reason)?;
            out.quarantined.push((moved, reason));
            continue;
        }
        let bytes = std::fs::metadata(&path)?.len();
        let (first, last) = seqs_of(name).unwrap_or((0, 0));
        let entry =
            Store::entry(name.to_string(), summary.rows, summary.games.len() as u64, bytes, first, last);
        let a = store.adopt_file(&entry, &summary.games, &summary.digests)?;
        info!(
            file = %name,
            games = summary.games.len(),
            were_staged = a.were_staged,
            new_to_the_database = a.new_games,
            "adopted a complete Parquet file the manifest did not list"
        );
        read.insert(name.to_string(), summary.digests);
        out.adopted.push((name.to_string(), summary.games.len() as u64, a.were_staged, a.new_games));
    }
    if full || store.meta(DIGESTS_INDEXED)? == 0 {
        out.digests_rebuilt = rebuild_digests(store, &mut read)?;
    }
    out.models_recovered = recover_models(store)?;
    Ok(out)
}

/// The listed file with exactly the bytes of `path`, if any (a backup copy put back under
/// another name: adopting it would give the trainer its games twice).
fn same_bytes_as_listed(dir: &Path, path: &Path, store: &Store) -> Result<Option<String>, StoreError> {
    let len = std::fs::metadata(path)?.len();
    let mut mine: Option<Vec<u8>> = None;
    for f in store.files()? {
        if f.bytes != len || !dir.join(&f.name).exists() {
            continue;
        }
        let mine = match &mine {
            Some(m) => m,
            None => mine.insert(std::fs::read(path)?),
        };
        if std::fs::read(dir.join(&f.name))? == *mine {
            return Ok(Some(f.name));
        }
    }
    Ok(None)
}

/// The staging sequence numbers a compacted file's name carries (`games-FIRST-LAST.parquet`).
fn seqs_of(name: &str) -> Option<(u64, u64)> {
    let core = name.strip_prefix("games-")?.strip_suffix(".parquet")?;
    let (a, b) = core.split_once('-')?;
    let b = b.split('-').next()?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// Moves `path` to the run's `quarantine/` (never over another file there); returns the name
/// it has there.
fn quarantine(run_dir: &Path, path: &Path, reason: &str) -> Result<String, StoreError> {
    let qdir = run_dir.join("quarantine");
    std::fs::create_dir_all(&qdir)?;
    let base = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut target: PathBuf = qdir.join(&base);
    let mut n = 1;
    while target.exists() {
        target = qdir.join(format!("{base}.{n}"));
        n += 1;
    }
    std::fs::rename(path, &target)?;
    durable::sync_dir(&qdir)?;
    if let Some(parent) = path.parent() {
        durable::sync_dir(parent)?;
    }
    let shown = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    error!(
        file = %base,
        moved_to = %target.display(),
        reason,
        "a damaged or unusable Parquet file was moved to quarantine (not deleted); its games are not served to training"
    );
    Ok(shown)
}

/// Every listed file's digests (read now unless in `read`) and every staged game's, into the
/// database. Returns how many.
fn rebuild_digests(store: &Store, read: &mut HashMap<String, Vec<[u8; 32]>>) -> Result<usize, StoreError> {
    let mut all: HashSet<[u8; 32]> = HashSet::new();
    for f in store.files()? {
        let digests = match read.remove(&f.name) {
            Some(d) => d,
            None => match read_summary(&store.games_dir().join(&f.name)) {
                Ok(s) => s.digests,
                Err(e) => {
                    // Its size matched: leave it listed, and say so (`--rebuild-index` moves
                    // it aside).
                    warn!(file = %f.name, error = %e, "cannot read a listed file's moves for their digests");
                    continue;
                }
            },
        };
        all.extend(digests);
    }
    let limits = Limits { max_moves: usize::MAX, max_visit_entries: usize::MAX, ..Limits::default() };
    for (_, bytes) in store.staged(usize::MAX)? {
        if let Ok(g) = pb::GameRecord::decode(bytes.as_slice())
            && let Ok(r) = validate(&g, &limits)
        {
            all.insert(crate::trust::rows_digest(&g.game_kind, &g.start_state, &r));
        }
    }
    let v: Vec<[u8; 32]> = all.into_iter().collect();
    store.put_digests(&v, DIGESTS_INDEXED)?;
    if !v.is_empty() {
        info!(
            digests = v.len(),
            "move digests of the stored games rebuilt from the Parquet files and staged games"
        );
    }
    Ok(v.len())
}

/// Lists the models in `models/` again when the database has none.
fn recover_models(store: &Store) -> Result<Vec<u64>, StoreError> {
    if !store.models()?.is_empty() {
        return Ok(Vec::new());
    }
    let dir = store.run_dir().join("models");
    let Ok(entries) = std::fs::read_dir(&dir) else { return Ok(Vec::new()) };
    let mut versions: Vec<u64> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.strip_prefix("model-")?.strip_suffix(".bin")?.parse().ok()
        })
        .collect();
    versions.sort_unstable();
    let mut out = Vec::new();
    for v in versions {
        let bytes = std::fs::read(dir.join(format!("model-{v:06}.bin")))?;
        let sha = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect::<String>();
        let from_sidecar = std::fs::read(sidecar_path(&dir, v))
            .ok()
            .and_then(|j| serde_json::from_slice::<ModelEntry>(&j).ok())
            .filter(|m| m.version == v && m.sha256 == sha);
        let entry = match from_sidecar {
            Some(m) => m,
            None => {
                let kind =
                    modelfile::read_meta(&bytes).ok().and_then(|m| engine::GameKind::from_name(&m.game));
                let checked = kind.map(|k| engine::with_game!(k, |G| modelfile::check_for::<G>(&bytes)));
                let (Some(kind), Some(Ok(meta))) = (kind, checked) else {
                    warn!(version = v, "models/ holds a file that is not a usable model; not listed");
                    continue;
                };
                ModelEntry {
                    version: v,
                    game_kind: kind,
                    sha256: sha,
                    size_bytes: bytes.len() as u64,
                    encoding_version: meta.feature_version,
                    published_unix_ms: crate::store::now_ms(),
                    // Its gating history is lost with the database: listed as published
                    // without gating, so the newest is the best.
                    state: ModelState::Ungated,
                    gate_settings: None,
                    opponent: 0,
                    gate: None,
                }
            }
        };
        store.put_model(&entry)?;
        out.push(v);
    }
    if !out.is_empty() {
        warn!(versions = ?out, "the database listed no models: listed again from models/ (their sidecars where present)");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rows::{PositionRow, write_file};
    use crate::store::StagedGame;

    fn rows_of(id: &str, plies: u32) -> Vec<PositionRow> {
        (0..plies)
            .map(|ply| PositionRow {
                game_id: id.into(),
                game_kind: "battlenumber",
                seed: 1,
                engine_version: "test".into(),
                encoding_version: 1,
                model_version: 0,
                ply,
                actor: (ply % 2) as u8,
                state: vec![ply as u8, 7],
                action: format!("a{ply}"),
                visit_actions: vec![],
                visit_counts: vec![],
                root_value: 0.0,
                full_search: true,
                result: 0,
                score: 0,
                decisive: false,
                resigned: false,
                would_resign_seat: -1,
            })
            .collect()
    }

    fn id(n: u64) -> String {
        format!("{n:032x}")
    }

    /// Writes games `ids` (3 plies each) as `name` in the store's games directory.
    fn file(store: &Store, name: &str, ids: &[u64]) {
        let rows: Vec<PositionRow> = ids.iter().flat_map(|n| rows_of(&id(*n), 3)).collect();
        write_file(store.games_dir(), name, &rows, "test").unwrap();
    }

    #[test]
    fn compacted_names_carry_their_sequence_numbers() {
        assert_eq!(seqs_of("games-000000000003-000000000017.parquet"), Some((3, 17)));
        assert_eq!(seqs_of("games-000000000003-000000000017-r1.parquet"), Some((3, 17)));
        assert_eq!(seqs_of("backup.parquet"), None);
    }

    #[test]
    fn a_summary_names_every_game_and_digests_its_moves() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        file(&store, "x.parquet", &[1, 2]);
        let s = read_summary(&store.games_dir().join("x.parquet")).unwrap();
        assert_eq!(s.rows, 6);
        assert_eq!(s.games, vec![(id(1), 3), (id(2), 3)]);
        let rows = rows_of(&id(1), 3);
        assert_eq!(s.digests[0], crate::trust::rows_digest("battlenumber", &[], &rows), "as at submission");
        // Games 1 and 2 have the same moves: the same digest.
        assert_eq!(s.digests[0], s.digests[1]);
        std::fs::write(store.games_dir().join("junk.parquet"), b"PAR1 not really").unwrap();
        assert!(read_summary(&store.games_dir().join("junk.parquet")).unwrap_err().contains("not Parquet"));
    }

    #[test]
    fn a_lost_database_is_rebuilt_from_the_files_and_nothing_is_deleted() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = Store::open(dir.path()).unwrap();
            file(&store, "games-000000000001-000000000002.parquet", &[1, 2]);
            file(&store, "games-000000000003-000000000005.parquet", &[3, 4, 5]);
        }
        for round in 0..2 {
            // The database deleted (round 0: never there; round 1: removed).
            let _ = std::fs::remove_file(dir.path().join("coordinator.redb"));
            let store = Store::open(dir.path()).unwrap();
            let r = recover(&store, false).unwrap();
            assert!(r.rebuilt, "round {round}");
            assert_eq!(r.adopted.len(), 2, "round {round}");
            assert!(r.quarantined.is_empty() && r.removed_tmp.is_empty());
            let c = store.counters().unwrap();
            assert_eq!((c.games_stored, c.positions_stored, c.positions_in_parquet), (5, 15, 15));
            assert_eq!(store.game_ids().unwrap().len(), 5);
            assert_eq!(store.files().unwrap().len(), 2);
            assert_eq!(store.meta("next_seq").unwrap(), 6, "new files are named past the adopted ones");
            // Every game's moves are the same here: one digest, rebuilt.
            assert_eq!(store.digests().unwrap().len(), 1);
            // Again: nothing more to do.
            let again = recover(&store, false).unwrap();
            assert!(!again.rebuilt && again.adopted.is_empty());
            assert_eq!(store.counters().unwrap().games_stored, 5);
        }
        assert_eq!(std::fs::read_dir(dir.path().join("games")).unwrap().count(), 2);
    }

    #[test]
    fn a_file_left_by_a_crash_before_its_manifest_entry_is_adopted_and_its_games_unstaged() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let staged: Vec<StagedGame> = [1u64, 2, 3]
            .iter()
            .map(|n| StagedGame {
                game_id: id(*n),
                record: vec![],
                positions: 3,
                lease_id: 0,
                digest: [*n as u8; 32],
            })
            .collect();
        store.stage(&staged).unwrap();
        // Compaction wrote the first two and was killed before its transaction; a write of the
        // third was cut short.
        file(&store, "games-000000000001-000000000002.parquet", &[1, 2]);
        std::fs::write(store.games_dir().join("games-000000000003-000000000003.parquet.tmp"), b"x").unwrap();
        let r = recover(&store, false).unwrap();
        assert!(!r.rebuilt);
        assert_eq!(r.removed_tmp, vec!["games-000000000003-000000000003.parquet.tmp"]);
        assert_eq!(r.adopted, vec![("games-000000000001-000000000002.parquet".to_string(), 2, 2, 0)]);
        assert_eq!(store.staged_count().unwrap(), 1, "game 3 is still staged");
        let c = store.counters().unwrap();
        assert_eq!((c.games_stored, c.positions_stored, c.positions_in_parquet), (3, 9, 6));
    }

    #[test]
    fn damaged_files_and_second_copies_go_to_quarantine_never_away() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        file(&store, "a.parquet", &[1, 2]);
        file(&store, "b.parquet", &[3]);
        recover(&store, false).unwrap();
        assert_eq!(store.files().unwrap().len(), 2);
        let games = store.games_dir().to_path_buf();
        // a.parquet truncated; a copy of b under another name; junk; c.parquet missing.
        let a = std::fs::read(games.join("a.parquet")).unwrap();
        std::fs::write(games.join("a.parquet"), &a[..a.len() / 2]).unwrap();
        std::fs::copy(games.join("b.parquet"), games.join("b-copy.parquet")).unwrap();
        std::fs::write(games.join("junk.parquet"), b"junk").unwrap();
        let r = recover(&store, false).unwrap();
        let mut q: Vec<&str> = r.quarantined.iter().map(|(n, _)| n.as_str()).collect();
        q.sort();
        assert_eq!(q, vec!["a.parquet", "b-copy.parquet", "junk.parquet"], "{:?}", r.quarantined);
        for name in &q {
            assert!(dir.path().join("quarantine").join(name).exists(), "{name} kept in quarantine/");
        }
        assert_eq!(
            store.files().unwrap().iter().map(|f| f.name.as_str()).collect::<Vec<_>>(),
            vec!["b.parquet"]
        );
        assert_eq!(store.counters().unwrap().positions_in_parquet, 3);
        // The truncated file, put back whole (from a backup), is adopted again.
        std::fs::write(games.join("a.parquet"), &a).unwrap();
        let r = recover(&store, false).unwrap();
        assert_eq!(r.adopted.len(), 1);
        assert_eq!(store.counters().unwrap().positions_in_parquet, 9);
        assert_eq!(store.counters().unwrap().games_stored, 3, "its games were known: not counted twice");
        // A listed file gone missing is unlisted, and adopted when it comes back.
        std::fs::rename(games.join("b.parquet"), dir.path().join("b.bak")).unwrap();
        assert_eq!(recover(&store, false).unwrap().missing, vec!["b.parquet"]);
        std::fs::rename(dir.path().join("b.bak"), games.join("b.parquet")).unwrap();
        assert_eq!(recover(&store, false).unwrap().adopted.len(), 1);
        assert_eq!(store.files().unwrap().len(), 2);
        // A full rebuild reads every listed file: all good now.
        let r = recover(&store, true).unwrap();
        assert!(r.quarantined.is_empty());
        assert_eq!(r.digests_rebuilt, 1);
    }

    #[test]
    fn lost_model_entries_are_listed_again_from_their_sidecars() {
        let dir = tempfile::tempdir().unwrap();
        let bytes = b"model bytes".to_vec();
        let sha: String = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
        let entry = ModelEntry {
            version: 1,
            game_kind: engine::GameKind::BattleNumber,
            sha256: sha,
            size_bytes: bytes.len() as u64,
            encoding_version: 1,
            published_unix_ms: 5,
            state: ModelState::Rejected,
            gate_settings: None,
            opponent: 0,
            gate: None,
        };
        {
            let store = Store::open(dir.path()).unwrap();
            std::fs::create_dir_all(dir.path().join("models")).unwrap();
            std::fs::write(dir.path().join("models/model-000001.bin"), &bytes).unwrap();
            store.put_model(&entry).unwrap();
        }
        std::fs::remove_file(dir.path().join("coordinator.redb")).unwrap();
        let store = Store::open(dir.path()).unwrap();
        let r = recover(&store, false).unwrap();
        assert_eq!(r.models_recovered, vec![1]);
        assert_eq!(store.models().unwrap(), vec![entry], "with its gating history");
    }
}
