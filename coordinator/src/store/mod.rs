//! The coordinator's durable state, in one redb database (`coordinator.redb` in the run
//! directory): staged games (the write-ahead log of acknowledged games not yet in Parquet),
//! every stored game id, the Parquet file manifest, outstanding leases and counters.
//!
//! Durability contract: [`Store::stage`] returns only after its transaction is committed to
//! disk; a game is acknowledged to its worker only after that. Compaction writes a Parquet
//! file under a temporary name, renames it, and then — in one transaction — lists it in the
//! manifest and removes its games from the staging table. A crash between the rename and
//! that transaction leaves a complete file the manifest does not list: recovery
//! ([`crate::recover`]) adopts it (its games leave the staging table then). No Parquet file is
//! ever deleted: only files under the temporary name are removed, and a damaged file is moved
//! to the run's `quarantine/` directory.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

use redb::{Database, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition};

mod index;
use serde::{Deserialize, Serialize};

const STAGED: TableDefinition<u64, &[u8]> = TableDefinition::new("staged");
const GAMES: TableDefinition<&str, u64> = TableDefinition::new("games");
const FILES: TableDefinition<&str, &[u8]> = TableDefinition::new("files");
const LEASES: TableDefinition<u64, &[u8]> = TableDefinition::new("leases");
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
const MODELS: TableDefinition<u64, &[u8]> = TableDefinition::new("models");
/// SHA-256 of each stored game's moves from its start (`trust::moves_digest`) → its
/// staging sequence number (0: adopted from a file).
const DIGESTS: TableDefinition<&[u8], u64> = TableDefinition::new("digests");

/// Errors of the embedded database.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// redb failed.
    #[error("database: {0}")]
    Db(String),
    /// The database file failed (a full disk, an I/O error). redb then refuses every later
    /// operation until the database is opened again, which the store does at its next use.
    #[error("database file: {0}")]
    Failed(String),
    /// A stored record could not be read.
    #[error("database record: {0}")]
    Corrupt(String),
    /// Another process (a running coordinator) holds the database.
    #[error("database: {0}")]
    InUse(String),
    /// File system.
    #[error("data directory: {0}")]
    Io(#[from] std::io::Error),
}

/// Whether a storage error latched redb's failure state (only reopening clears it).
fn file_failed(e: &redb::StorageError) -> bool {
    matches!(
        e,
        redb::StorageError::Io(_) | redb::StorageError::PreviousIo | redb::StorageError::DatabaseClosed
    )
}

fn itself(e: &redb::StorageError) -> Option<&redb::StorageError> {
    Some(e)
}

macro_rules! db_err {
    ($($t:ty => $storage:expr),* $(,)?) => {$(
        impl From<$t> for StoreError {
            fn from(e: $t) -> Self {
                let storage: fn(&$t) -> Option<&redb::StorageError> = $storage;
                if storage(&e).is_some_and(file_failed) {
                    StoreError::Failed(e.to_string())
                } else {
                    StoreError::Db(e.to_string())
                }
            }
        }
    )*};
}
impl From<redb::DatabaseError> for StoreError {
    fn from(e: redb::DatabaseError) -> Self {
        match e {
            redb::DatabaseError::DatabaseAlreadyOpen => StoreError::InUse(e.to_string()),
            redb::DatabaseError::Storage(s) => s.into(),
            e => StoreError::Db(e.to_string()),
        }
    }
}

db_err!(
    redb::TransactionError => |e| match e { redb::TransactionError::Storage(s) => Some(s), _ => None },
    redb::TableError => |e| match e { redb::TableError::Storage(s) => Some(s), _ => None },
    redb::StorageError => itself,
    redb::CommitError => |e| match e { redb::CommitError::Storage(s) => Some(s), _ => None },
);

impl From<redb::Error> for StoreError {
    fn from(e: redb::Error) -> Self {
        if matches!(e, redb::Error::Io(_) | redb::Error::PreviousIo | redb::Error::DatabaseClosed) {
            StoreError::Failed(e.to_string())
        } else {
            StoreError::Db(e.to_string())
        }
    }
}

/// One Parquet file in the manifest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FileEntry {
    /// File name inside the run's `games/` directory.
    pub name: String,
    /// Rows (positions).
    pub rows: u64,
    /// Games.
    pub games: u64,
    /// Size in bytes.
    pub bytes: u64,
    /// Staging sequence numbers covered (inclusive).
    pub first_seq: u64,
    /// Last staging sequence number covered.
    pub last_seq: u64,
    /// Creation time, milliseconds since the Unix epoch.
    pub created_unix_ms: u64,
}

/// A published model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelEntry {
    /// Version (1, 2, ...).
    pub version: u64,
    /// Game kind.
    pub game_kind: engine::GameKind,
    /// SHA-256, lowercase hex.
    pub sha256: String,
    /// Size in bytes.
    pub size_bytes: u64,
    /// Feature encoding version.
    pub encoding_version: u32,
    /// Publication time, ms since the Unix epoch.
    pub published_unix_ms: u64,
    /// Where it stands (entries from before gating existed read as `Ungated`).
    #[serde(default)]
    pub state: ModelState,
    /// Gating: the settings it was published with (kept so a restart can run them again).
    #[serde(default)]
    pub gate_settings: Option<engine::gating::GateSettings>,
    /// Gating: the opponent's version (0: the rollout AI).
    #[serde(default)]
    pub opponent: u64,
    /// Gating: the decided result.
    #[serde(default)]
    pub gate: Option<engine::gating::GateResult>,
}

/// A model's standing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ModelState {
    /// Published without gating: it became the best at once.
    #[default]
    Ungated,
    /// A candidate whose matches are being played.
    Gating,
    /// A candidate that passed: it became the best.
    Promoted,
    /// A candidate that failed.
    Rejected,
}

impl ModelEntry {
    /// Is (or was) it the best model at some point?
    pub fn is_best_kind(&self) -> bool {
        matches!(self.state, ModelState::Ungated | ModelState::Promoted)
    }
}

/// The best model among `models` (oldest first): the newest that was published ungated or
/// promoted.
pub fn best_model(models: &[ModelEntry]) -> Option<&ModelEntry> {
    models.iter().rev().find(|m| m.is_best_kind())
}

/// A lease as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LeaseRow {
    /// Game kind.
    pub game_kind: engine::GameKind,
    /// Start position bytes.
    pub start_state: Vec<u8>,
    /// Seed.
    pub seed: u64,
    /// `PositionSource` as its proto number.
    pub source: i32,
}

/// One acknowledged game to stage.
#[derive(Clone, Debug)]
pub struct StagedGame {
    /// Its id.
    pub game_id: String,
    /// The submitted `GameRecord`, protobuf-encoded.
    pub record: Vec<u8>,
    /// Positions it adds.
    pub positions: u64,
    /// The lease it finishes (0: none).
    pub lease_id: u64,
    /// Its moves' digest (`trust::moves_digest`), kept so a restart still knows
    /// every stored move sequence.
    pub digest: [u8; 32],
}

/// What adopting a file changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Adopted {
    /// Its games that were staged (and leave the staging table now).
    pub were_staged: u64,
    /// Its games the database did not know (counted as stored now).
    pub new_games: u64,
}

/// Counters kept in the database.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Games acknowledged.
    pub games_stored: u64,
    /// Positions of those games.
    pub positions_stored: u64,
    /// Positions in finished Parquet files.
    pub positions_in_parquet: u64,
}

/// The database.
///
/// After a file failure (a full disk) redb refuses every operation until the database is
/// opened again: the store notes the failure and reopens the database at its next use (once
/// no other thread holds the old handle), so the coordinator recovers when space returns.
pub struct Store {
    db: RwLock<Option<Arc<Database>>>,
    failed: AtomicBool,
    path: PathBuf,
    dir: PathBuf,
    run_dir: PathBuf,
}

/// The JSON sidecar kept beside each model file (its database entry, for a rebuild).
pub fn sidecar_path(models_dir: &Path, version: u64) -> PathBuf {
    models_dir.join(format!("model-{version:06}.json"))
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

// Each method's body is a closure called at once (a `try` block): its errors pass through
// `note`, which watches for file failures.
#[allow(clippy::redundant_closure_call)]
impl Store {
    /// Opens (or creates) the database in `run_dir`, and the `games/` directory beside it.
    ///
    /// # Errors
    /// [`StoreError`] if the directory or database cannot be opened.
    pub fn open(run_dir: &Path) -> Result<Store, StoreError> {
        std::fs::create_dir_all(run_dir.join("games"))?;
        let db = Database::create(run_dir.join("coordinator.redb"))?;
        let txn = db.begin_write()?;
        {
            txn.open_table(STAGED)?;
            txn.open_table(GAMES)?;
            txn.open_table(FILES)?;
            txn.open_table(LEASES)?;
            txn.open_table(META)?;
            txn.open_table(MODELS)?;
            txn.open_table(DIGESTS)?;
        }
        txn.commit()?;
        Ok(Store {
            db: RwLock::new(Some(Arc::new(db))),
            failed: AtomicBool::new(false),
            path: run_dir.join("coordinator.redb"),
            dir: run_dir.join("games"),
            run_dir: run_dir.to_path_buf(),
        })
    }

    /// The database, reopened first if a file failure was noted.
    fn db(&self) -> Result<Arc<Database>, StoreError> {
        if self.failed.load(Ordering::Acquire) {
            self.reopen()?;
        }
        self.db
            .read()
            .expect("not poisoned")
            .clone()
            .ok_or_else(|| StoreError::Failed("the database is being reopened".into()))
    }

    fn reopen(&self) -> Result<(), StoreError> {
        let mut slot = self.db.write().expect("not poisoned");
        if !self.failed.load(Ordering::Acquire) {
            return Ok(());
        }
        // Our handle goes; the file is free once every other (short-lived) user drops theirs.
        slot.take();
        let db = Database::create(&self.path)?;
        *slot = Some(Arc::new(db));
        self.failed.store(false, Ordering::Release);
        tracing::warn!(path = %self.path.display(), "database reopened after a file failure");
        Ok(())
    }

    /// Notes a file failure in `r` (the database is reopened at the next use).
    fn note<T>(&self, r: Result<T, StoreError>) -> Result<T, StoreError> {
        if let Err(StoreError::Failed(e)) = &r
            && !self.failed.swap(true, Ordering::AcqRel)
        {
            tracing::error!(error = %e, "database file failed; it will be reopened at the next use");
        }
        r
    }

    /// The directory holding the Parquet files.
    pub fn games_dir(&self) -> &Path {
        &self.dir
    }

    /// The run directory (the database, `games/`, `models/`, `quarantine/`).
    pub fn run_dir(&self) -> &Path {
        &self.run_dir
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every stored game id.
    ///
    /// # Errors
    /// [`StoreError`] on a database failure.
    pub fn game_ids(&self) -> Result<HashSet<String>, StoreError> {
        self.note((|| {
            let txn = self.db()?.begin_read()?;
            let t = txn.open_table(GAMES)?;
            let mut out = HashSet::new();
            for entry in t.iter()? {
                let (k, _) = entry?;
                out.insert(k.value().to_string());
            }
            Ok(out)
        })())
    }

    /// The counters.
    ///
    /// # Errors
    /// [`StoreError`] on a database failure.
    pub fn counters(&self) -> Result<Counters, StoreError> {
        self.note((|| {
            let txn = self.db()?.begin_read()?;
            let t = txn.open_table(META)?;
            let get = |k: &str| -> Result<u64, StoreError> { Ok(t.get(k)?.map_or(0, |v| v.value())) };
            Ok(Counters {
                games_stored: get("games_stored")?,
                positions_stored: get("positions_stored")?,
                positions_in_parquet: get("positions_in_parquet")?,
            })
        })())
    }

    /// Reads a `u64` from the meta table.
    ///
    /// # Errors
    /// [`StoreError`] on a database failure.
    pub fn meta(&self, key: &str) -> Result<u64, StoreError> {
        self.note((|| {
            let txn = self.db()?.begin_read()?;
            let t = txn.open_table(META)?;
            Ok(t.get(key)?.map_or(0, |v| v.value()))
        })())
    }

    /// Stages games durably, in one transaction (group commit), and drops the leases they
    /// finish. Games whose id is already stored are skipped; their indices are returned.
    ///
    /// # Errors
    /// [`StoreError`] if the transaction fails; then nothing of it is stored.
    pub fn stage(&self, games: &[StagedGame]) -> Result<Vec<usize>, StoreError> {
        self.note((|| {
            let txn = self.db()?.begin_write()?;
            let mut dups = Vec::new();
            {
                let mut staged = txn.open_table(STAGED)?;
                let mut ids = txn.open_table(GAMES)?;
                let mut leases = txn.open_table(LEASES)?;
                let mut digests = txn.open_table(DIGESTS)?;
                let mut meta = txn.open_table(META)?;
                let mut seq = meta.get("next_seq")?.map_or(1, |v| v.value());
                let (mut games_n, mut positions_n) = (0u64, 0u64);
                for (i, g) in games.iter().enumerate() {
                    if ids.get(g.game_id.as_str())?.is_some() {
                        dups.push(i);
                        continue;
                    }
                    staged.insert(seq, g.record.as_slice())?;
                    ids.insert(g.game_id.as_str(), seq)?;
                    digests.insert(g.digest.as_slice(), seq)?;
                    if g.lease_id != 0 {
                        leases.remove(g.lease_id)?;
                    }
                    seq += 1;
                    games_n += 1;
                    positions_n += g.positions;
                }
                meta.insert("next_seq", seq)?;
                let gs = meta.get("games_stored")?.map_or(0, |v| v.value());
                meta.insert("games_stored", gs + games_n)?;
                let ps = meta.get("positions_stored")?.map_or(0, |v| v.value());
                meta.insert("positions_stored", ps + positions_n)?;
            }
            txn.commit()?;
            Ok(dups)
        })())
    }

    /// Staged games with sequence numbers, oldest first, at most `limit`.
    ///
    /// # Errors
    /// [`StoreError`] on a database failure.
    pub fn staged(&self, limit: usize) -> Result<Vec<(u64, Vec<u8>)>, StoreError> {
        self.note((|| {
            let txn = self.db()?.begin_read()?;
            let t = txn.open_table(STAGED)?;
            let mut out = Vec::new();
            for entry in t.iter()?.take(limit) {
                let (k, v) = entry?;
                out.push((k.value(), v.value().to_vec()));
            }
            Ok(out)
        })())
    }

    /// Number of staged games.
    ///
    /// # Errors
    /// [`StoreError`] on a database failure.
    pub fn staged_count(&self) -> Result<u64, StoreError> {
        self.note((|| {
            let txn = self.db()?.begin_read()?;
            Ok(txn.open_table(STAGED)?.len()?)
        })())
    }

    /// Lists `file` in the manifest and removes the staged games it covers, atomically.
    ///
    /// # Errors
    /// [`StoreError`] if the transaction fails (the file is then an orphan, removed at the
    /// next recovery).
    pub fn finish_compaction(&self, seqs: &[u64], file: &FileEntry) -> Result<(), StoreError> {
        self.note((|| {
            let txn = self.db()?.begin_write()?;
            {
                let mut staged = txn.open_table(STAGED)?;
                for s in seqs {
                    staged.remove(*s)?;
                }
                let mut files = txn.open_table(FILES)?;
                let json = serde_json::to_vec(file).map_err(|e| StoreError::Corrupt(e.to_string()))?;
                files.insert(file.name.as_str(), json.as_slice())?;
                let mut meta = txn.open_table(META)?;
                let p = meta.get("positions_in_parquet")?.map_or(0, |v| v.value());
                meta.insert("positions_in_parquet", p + file.rows)?;
            }
            txn.commit()?;
            Ok(())
        })())
    }

    /// The manifest: every finished Parquet file.
    ///
    /// # Errors
    /// [`StoreError`] on a database failure or an unreadable entry.
    pub fn files(&self) -> Result<Vec<FileEntry>, StoreError> {
        self.note((|| {
            let txn = self.db()?.begin_read()?;
            let t = txn.open_table(FILES)?;
            let mut out = Vec::new();
            for entry in t.iter()? {
                let (_, v) = entry?;
                out.push(serde_json::from_slice(v.value()).map_err(|e| StoreError::Corrupt(e.to_string()))?);
            }
            Ok(out)
        })())
    }

    /// Stores leases (and the next lease id), in one transaction; removes `drop_ids`.
    ///
    /// # Errors
    /// [`StoreError`] on a database failure.
    pub fn put_leases(
        &self,
        leases: &[(u64, LeaseRow)],
        drop_ids: &[u64],
        next_id: u64,
        drawn: u64,
    ) -> Result<(), StoreError> {
        self.note((|| {
            let txn = self.db()?.begin_write()?;
            {
                let mut t = txn.open_table(LEASES)?;
                for id in drop_ids {
                    t.remove(*id)?;
                }
                for (id, row) in leases {
                    let json = serde_json::to_vec(row).map_err(|e| StoreError::Corrupt(e.to_string()))?;
                    t.insert(*id, json.as_slice())?;
                }
                let mut meta = txn.open_table(META)?;
                meta.insert("next_lease_id", next_id)?;
                meta.insert("leases_drawn", drawn)?;
            }
            txn.commit()?;
            Ok(())
        })())
    }

    /// Every stored lease.
    ///
    /// # Errors
    /// [`StoreError`] on a database failure or an unreadable entry.
    pub fn leases(&self) -> Result<Vec<(u64, LeaseRow)>, StoreError> {
        self.note((|| {
            let txn = self.db()?.begin_read()?;
            let t = txn.open_table(LEASES)?;
            let mut out = Vec::new();
            for entry in t.iter()? {
                let (k, v) = entry?;
                out.push((
                    k.value(),
                    serde_json::from_slice(v.value()).map_err(|e| StoreError::Corrupt(e.to_string()))?,
                ));
            }
            Ok(out)
        })())
    }

    /// Records a published model (its file already in place), in the database and in a JSON
    /// sidecar beside the model file.
    ///
    /// # Errors
    /// [`StoreError`] on a database failure.
    pub fn put_model(&self, m: &ModelEntry) -> Result<(), StoreError> {
        self.note((|| {
            let json = serde_json::to_vec(m).map_err(|e| StoreError::Corrupt(e.to_string()))?;
            // The entry beside the model file too, so a lost database can be rebuilt with its
            // gating history (`recover`).
            let models = self.run_dir.join("models");
            std::fs::create_dir_all(&models)?;
            durable::write_atomic(&sidecar_path(&models, m.version), &json)?;
            let txn = self.db()?.begin_write()?;
            txn.open_table(MODELS)?.insert(m.version, json.as_slice())?;
            txn.commit()?;
            Ok(())
        })())
    }

    /// Every published model, oldest first.
    ///
    /// # Errors
    /// [`StoreError`] on a database failure or an unreadable entry.
    pub fn models(&self) -> Result<Vec<ModelEntry>, StoreError> {
        self.note((|| {
            let txn = self.db()?.begin_read()?;
            let t = txn.open_table(MODELS)?;
            let mut out = Vec::new();
            for entry in t.iter()? {
                let (_, v) = entry?;
                out.push(serde_json::from_slice(v.value()).map_err(|e| StoreError::Corrupt(e.to_string()))?);
            }
            Ok(out)
        })())
    }

    /// A new manifest entry for a file written now.
    pub fn entry(
        name: String,
        rows: u64,
        games: u64,
        bytes: u64,
        first_seq: u64,
        last_seq: u64,
    ) -> FileEntry {
        FileEntry { name, rows, games, bytes, first_seq, last_seq, created_unix_ms: now_ms() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(id: &str, lease: u64) -> StagedGame {
        let mut digest = [0u8; 32];
        digest[..id.len()].copy_from_slice(id.as_bytes());
        StagedGame {
            game_id: id.into(),
            record: id.as_bytes().to_vec(),
            positions: 10,
            lease_id: lease,
            digest,
        }
    }

    #[test]
    fn staging_is_durable_deduplicated_and_survives_reopen() {
        let dir = tempfile::tempdir().unwrap();
        {
            let s = Store::open(dir.path()).unwrap();
            s.put_leases(
                &[(
                    7,
                    LeaseRow {
                        game_kind: engine::GameKind::BattleNumber,
                        start_state: vec![1],
                        seed: 3,
                        source: 1,
                    },
                )],
                &[],
                8,
                1,
            )
            .unwrap();
            assert_eq!(s.stage(&[game("a", 7), game("b", 0)]).unwrap(), Vec::<usize>::new());
            assert_eq!(s.stage(&[game("a", 0), game("c", 0)]).unwrap(), vec![0]);
            assert!(s.leases().unwrap().is_empty(), "lease 7 finished with game a");
        }
        let s = Store::open(dir.path()).unwrap();
        assert_eq!(s.game_ids().unwrap().len(), 3);
        assert_eq!(s.counters().unwrap().games_stored, 3);
        assert_eq!(s.counters().unwrap().positions_stored, 30);
        let staged = s.staged(10).unwrap();
        assert_eq!(staged.iter().map(|x| x.0).collect::<Vec<_>>(), vec![1, 2, 3]);
        assert_eq!(s.meta("next_lease_id").unwrap(), 8);
        assert_eq!(s.digests().unwrap().len(), 3, "one digest per stored game");
        // Compaction of the first two.
        s.finish_compaction(&[1, 2], &Store::entry("f.parquet".into(), 20, 2, 1, 1, 2)).unwrap();
        assert_eq!(s.staged_count().unwrap(), 1);
        assert_eq!(s.counters().unwrap().positions_in_parquet, 20);
        // Unlisting gives the positions back; the games stay known.
        assert_eq!(s.unlist_file("f.parquet").unwrap().map(|f| f.rows), Some(20));
        assert_eq!(s.counters().unwrap().positions_in_parquet, 0);
        assert_eq!(s.game_ids().unwrap().len(), 3);
        assert!(!s.is_empty().unwrap());
    }
}
