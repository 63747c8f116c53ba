//! The store's side of recovery ([`crate::recover`]): move digests, adopting and unlisting
//! Parquet files, dropping lease rows of finished positions.

use std::collections::HashSet;

use redb::{ReadableDatabase, ReadableTable, ReadableTableMetadata};

use super::{Adopted, DIGESTS, FILES, FileEntry, GAMES, LEASES, META, MODELS, STAGED, Store, StoreError};

// As in the parent module: each body is a closure called at once, its errors through `note`.
#[allow(clippy::redundant_closure_call)]
impl Store {
    /// Every stored move digest (see [`StagedGame::digest`]).
    ///
    /// # Errors
    /// [`StoreError`] on a database failure.
    pub fn digests(&self) -> Result<HashSet<[u8; 32]>, StoreError> {
        self.note((|| {
            let txn = self.db()?.begin_read()?;
            let t = txn.open_table(DIGESTS)?;
            let mut out = HashSet::new();
            for entry in t.iter()? {
                let (k, _) = entry?;
                if let Ok(d) = <[u8; 32]>::try_from(k.value()) {
                    out.insert(d);
                }
            }
            Ok(out)
        })())
    }

    /// Adds move digests of stored games (rebuilt from their files or records), and sets
    /// `meta[flag] = 1` in the same transaction.
    ///
    /// # Errors
    /// [`StoreError`] on a database failure.
    pub fn put_digests(&self, digests: &[[u8; 32]], flag: &str) -> Result<(), StoreError> {
        self.note((|| {
            let txn = self.db()?.begin_write()?;
            {
                let mut t = txn.open_table(DIGESTS)?;
                for d in digests {
                    if t.get(d.as_slice())?.is_none() {
                        t.insert(d.as_slice(), 0)?;
                    }
                }
                txn.open_table(META)?.insert(flag, 1)?;
            }
            txn.commit()?;
            Ok(())
        })())
    }

    /// Adopts a complete Parquet file the manifest does not list, in one transaction: lists
    /// it, removes its games from the staging table (a crash after its rename left them
    /// there), records the ids and digests of games the database did not know (counting
    /// them as stored), and keeps the next staging sequence number past the file's.
    /// `games`: each game id with its rows.
    ///
    /// # Errors
    /// [`StoreError`] if the transaction fails; then nothing of it is stored.
    pub fn adopt_file(
        &self,
        file: &FileEntry,
        games: &[(String, u64)],
        digests: &[[u8; 32]],
    ) -> Result<Adopted, StoreError> {
        self.note((|| {
            let txn = self.db()?.begin_write()?;
            let mut out = Adopted::default();
            {
                let mut staged = txn.open_table(STAGED)?;
                let mut ids = txn.open_table(GAMES)?;
                let mut digest_t = txn.open_table(DIGESTS)?;
                let mut meta = txn.open_table(META)?;
                let mut new_positions = 0;
                for (id, rows) in games {
                    let known = ids.get(id.as_str())?.map(|v| v.value());
                    match known {
                        Some(seq) if seq != 0 => {
                            if staged.remove(seq)?.is_some() {
                                out.were_staged += 1;
                            }
                        }
                        Some(_) => {}
                        None => {
                            ids.insert(id.as_str(), 0)?;
                            out.new_games += 1;
                            new_positions += rows;
                        }
                    }
                }
                for d in digests {
                    if digest_t.get(d.as_slice())?.is_none() {
                        digest_t.insert(d.as_slice(), 0)?;
                    }
                }
                let json = serde_json::to_vec(file).map_err(|e| StoreError::Corrupt(e.to_string()))?;
                txn.open_table(FILES)?.insert(file.name.as_str(), json.as_slice())?;
                let mut add = |k: &str, n: u64| -> Result<(), StoreError> {
                    let v = meta.get(k)?.map_or(0, |v| v.value());
                    meta.insert(k, v + n)?;
                    Ok(())
                };
                add("games_stored", out.new_games)?;
                add("positions_stored", new_positions)?;
                add("positions_in_parquet", file.rows)?;
                let next = meta.get("next_seq")?.map_or(1, |v| v.value());
                meta.insert("next_seq", next.max(file.last_seq + 1))?;
            }
            txn.commit()?;
            Ok(out)
        })())
    }

    /// Removes `name` from the manifest (its file is missing or was moved to quarantine);
    /// returns its entry. The games stay known, so a retried submission is still a duplicate.
    ///
    /// # Errors
    /// [`StoreError`] on a database failure.
    pub fn unlist_file(&self, name: &str) -> Result<Option<FileEntry>, StoreError> {
        self.note((|| {
            let txn = self.db()?.begin_write()?;
            let entry: Option<FileEntry> = {
                let mut files = txn.open_table(FILES)?;
                let old = files.remove(name)?.map(|v| v.value().to_vec());
                old.map(|v| serde_json::from_slice(&v).map_err(|e| StoreError::Corrupt(e.to_string())))
                    .transpose()?
            };
            if let Some(e) = &entry {
                let mut meta = txn.open_table(META)?;
                let p = meta.get("positions_in_parquet")?.map_or(0, |v| v.value());
                meta.insert("positions_in_parquet", p.saturating_sub(e.rows))?;
            }
            txn.commit()?;
            Ok(entry)
        })())
    }

    /// Removes lease rows (positions whose game is stored under another lease id).
    ///
    /// # Errors
    /// [`StoreError`] on a database failure.
    pub fn drop_leases(&self, ids: &[u64]) -> Result<(), StoreError> {
        self.note((|| {
            let txn = self.db()?.begin_write()?;
            {
                let mut t = txn.open_table(LEASES)?;
                for id in ids {
                    t.remove(*id)?;
                }
            }
            txn.commit()?;
            Ok(())
        })())
    }

    /// Whether the database holds nothing yet: no game, file, model or lease.
    ///
    /// # Errors
    /// [`StoreError`] on a database failure.
    pub fn is_empty(&self) -> Result<bool, StoreError> {
        self.note((|| {
            let txn = self.db()?.begin_read()?;
            Ok(txn.open_table(GAMES)?.is_empty()?
                && txn.open_table(FILES)?.is_empty()?
                && txn.open_table(MODELS)?.is_empty()?
                && txn.open_table(LEASES)?.is_empty()?)
        })())
    }
}
