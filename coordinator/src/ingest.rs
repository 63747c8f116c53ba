//! The write path: a writer thread that stages acknowledged games in the database with group
//! commit (every submission waiting while a commit runs goes into the next one), and a
//! compactor thread that turns staged games into Parquet files when enough have gathered or
//! the oldest has waited long enough.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use prost::Message;
use tokio::sync::{mpsc, oneshot};
use tracing::{error, info, warn};
use zeroplay_proto::v1 as pb;

use crate::games::{Limits, validate};
use crate::rows::write_file;
use crate::store::{StagedGame, Store, StoreError};

/// Live counters, shared with the status endpoint.
#[derive(Debug, Default)]
pub struct Stats {
    /// Games acknowledged.
    pub games_stored: AtomicU64,
    /// Positions of those games.
    pub positions_stored: AtomicU64,
    /// Positions in finished Parquet files.
    pub positions_in_parquet: AtomicU64,
    /// Parquet files written.
    pub parquet_files: AtomicU64,
    /// Submissions refused as malformed or illegal.
    pub rejected_invalid: AtomicU64,
    /// Submissions refused as duplicates.
    pub rejected_duplicate: AtomicU64,
    /// Games whose moves repeat a stored game's (refused or stored, per
    /// `limits.repeated_games`).
    pub repeated_moves: AtomicU64,
    /// Submissions refused as too large.
    pub rejected_oversized: AtomicU64,
    /// Parquet files moved to `quarantine/` at start (damaged, or a second copy).
    pub quarantined_files: AtomicU64,
    /// Parquet files the manifest did not list, adopted at start.
    pub adopted_files: AtomicU64,
    /// Registrations refused (too many from one address, or in all).
    pub registrations_refused: AtomicU64,
    /// Value checks whose stored value agreed with the checker's search (`checks.rs`).
    pub checks_agreed: AtomicU64,
    /// Value checks whose stored value did not.
    pub checks_disagreed: AtomicU64,
    /// Workers quarantined for disagreeing values.
    pub workers_quarantined: AtomicU64,
    /// Games set aside (listed in `.set-aside.json` files) by quarantines.
    pub games_set_aside: AtomicU64,
}

/// One game to stage, with the channel to acknowledge it on.
pub struct StageRequest {
    /// The game.
    pub game: StagedGame,
    /// `Ok(true)`: stored now; `Ok(false)`: already stored; `Err`: the database failed.
    pub reply: oneshot::Sender<Result<bool, String>>,
}

/// Runs the writer until every sender is dropped.
pub fn spawn_writer(
    store: Arc<Store>,
    stats: Arc<Stats>,
    mut rx: mpsc::Receiver<StageRequest>,
) -> JoinHandle<()> {
    std::thread::Builder::new()
        .name("coordinator-writer".into())
        .spawn(move || {
            while let Some(first) = rx.blocking_recv() {
                let mut batch = vec![first];
                while batch.len() < 4096 {
                    match rx.try_recv() {
                        Ok(r) => batch.push(r),
                        Err(_) => break,
                    }
                }
                let (games, replies): (Vec<StagedGame>, Vec<_>) = batch.into_iter().map(|r| (r.game, r.reply)).unzip();
                match store.stage(&games) {
                    Ok(dups) => {
                        for (i, (g, reply)) in games.iter().zip(replies).enumerate() {
                            let fresh = !dups.contains(&i);
                            if fresh {
                                stats.games_stored.fetch_add(1, Ordering::Relaxed);
                                stats.positions_stored.fetch_add(g.positions, Ordering::Relaxed);
                            }
                            let _ = reply.send(Ok(fresh));
                        }
                    }
                    Err(e) => {
                        error!(error = %e, games = games.len(), "staging failed; the games were not acknowledged");
                        for reply in replies {
                            let _ = reply.send(Err(e.to_string()));
                        }
                    }
                }
            }
        })
        .expect("spawn writer thread")
}

/// Compaction settings.
#[derive(Clone, Copy, Debug)]
pub struct CompactPolicy {
    /// Write a file once this many positions are staged.
    pub rotate_positions: u64,
    /// Or once staged games have waited this long.
    pub rotate_after: Duration,
}

/// Writes one Parquet file from the oldest staged games (up to about `max_positions` rows).
/// Returns the number of games written (0 if none were staged).
///
/// # Errors
/// [`StoreError`] on a database or file failure; staged games then stay staged.
pub fn compact_once(store: &Store, stats: &Stats, max_positions: u64) -> Result<usize, StoreError> {
    let staged = store.staged(100_000)?;
    if staged.is_empty() {
        return Ok(0);
    }
    let mut rows = Vec::new();
    let mut seqs = Vec::new();
    let limits = Limits { max_moves: usize::MAX, max_visit_entries: usize::MAX, ..Limits::default() };
    for (seq, bytes) in &staged {
        seqs.push(*seq);
        // Staged games were validated before they were acknowledged, so this replays them
        // into rows; a record that no longer decodes is kept staged and reported.
        let game = match pb::GameRecord::decode(bytes.as_slice()) {
            Ok(g) => g,
            Err(e) => {
                seqs.pop();
                error!(seq, error = %e, "staged record does not decode; left staged");
                continue;
            }
        };
        match validate(&game, &limits) {
            Ok(r) => rows.extend(r),
            Err(e) => {
                seqs.pop();
                error!(seq, error = %e, "staged game no longer validates; left staged");
            }
        }
        if rows.len() as u64 >= max_positions {
            break;
        }
    }
    if seqs.is_empty() {
        return Ok(0);
    }
    let (first, last) = (seqs[0], *seqs.last().expect("non-empty"));
    let mut name = format!("games-{first:012}-{last:012}.parquet");
    // Never over a file already there (recovery keeps sequence numbers past adopted files',
    // so this is a second guard, not a path taken).
    let mut n = 1;
    while store.games_dir().join(&name).exists() {
        name = format!("games-{first:012}-{last:012}-r{n}.parquet");
        n += 1;
    }
    let bytes = write_file(store.games_dir(), &name, &rows, engine::ENGINE_VERSION)
        .map_err(|e| StoreError::Io(std::io::Error::other(e.to_string())))?;
    let entry = Store::entry(name.clone(), rows.len() as u64, seqs.len() as u64, bytes, first, last);
    store.finish_compaction(&seqs, &entry)?;
    stats.positions_in_parquet.fetch_add(rows.len() as u64, Ordering::Relaxed);
    stats.parquet_files.fetch_add(1, Ordering::Relaxed);
    info!(file = %name, games = seqs.len(), positions = rows.len(), bytes, "parquet file written");
    Ok(seqs.len())
}

/// Runs the compactor until `stop` is set, then compacts everything left.
pub fn spawn_compactor(
    store: Arc<Store>,
    stats: Arc<Stats>,
    policy: CompactPolicy,
    stop: Arc<AtomicBool>,
) -> JoinHandle<()> {
    std::thread::Builder::new()
        .name("coordinator-compactor".into())
        .spawn(move || {
            let mut first_seen: Option<Instant> = None;
            loop {
                if stop.load(Ordering::Relaxed) {
                    loop {
                        match compact_once(&store, &stats, policy.rotate_positions) {
                            Ok(0) => return,
                            Ok(_) => continue,
                            Err(e) => {
                                warn!(error = %e, "final compaction failed; games stay staged and are written at the next start");
                                return;
                            }
                        }
                    }
                }
                let pending = stats
                    .positions_stored
                    .load(Ordering::Relaxed)
                    .saturating_sub(stats.positions_in_parquet.load(Ordering::Relaxed));
                if pending > 0 && first_seen.is_none() {
                    first_seen = Some(Instant::now());
                }
                let due = pending >= policy.rotate_positions || first_seen.is_some_and(|t| t.elapsed() >= policy.rotate_after);
                if due {
                    match compact_once(&store, &stats, policy.rotate_positions) {
                        Ok(n) => {
                            first_seen = None;
                            if n == 0 {
                                std::thread::sleep(Duration::from_millis(100));
                            }
                        }
                        Err(e) => {
                            warn!(error = %e, "compaction failed; will retry");
                            std::thread::sleep(Duration::from_millis(500));
                        }
                    }
                } else {
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        })
        .expect("spawn compactor thread")
}
