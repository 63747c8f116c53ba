//! What a worker's lease request gets, in order: evaluation matches (a candidate waits for
//! nothing else), then at most one value check of another worker's game, then self-play
//! positions; and what a check report does (a quarantine sets the worker's games aside).

use std::time::{Duration, Instant};

use tracing::{info, warn};
use zeroplay_proto::convert;
use zeroplay_proto::v1 as pb;

use crate::checks::{CheckError, Verdict};
use crate::config::GameConfig;
use crate::games::GameKind;
use crate::service::{CoordError, CoordinatorService, shown};

impl CoordinatorService {
    /// Up to `n` leases for `worker`.
    ///
    /// # Errors
    /// [`CoordError::Unavailable`] when the leases cannot be written to the database.
    pub(crate) fn lease(&self, worker: &str, n: u32) -> Result<pb::LeaseResponse, CoordError> {
        let s = &self.shared;
        let n = n.clamp(1, s.cfg.leases.max_per_request) as usize;
        let now = Instant::now();
        let mut out = s.gating.lock().expect("not poisoned").grant(worker, n, now, s.cfg.leases.ttl_ms);
        if out.len() < n {
            // One check at a time: it is one search, and self-play must not wait on checks.
            let ttl = Duration::from_millis(s.cfg.leases.ttl_ms);
            let sources = s.sources.lock().expect("not poisoned");
            let checks = s.checks.lock().expect("not poisoned").grant(worker, 1, now, ttl, |id, p| {
                let gcfg = sources.game_config(p.kind)?;
                let check = pb::ValueCheck { sims: u64::from(gcfg.settings.full_sims) };
                Some(pb::Lease {
                    model_version: p.model_version,
                    source: pb::PositionSource::Unspecified as i32,
                    check: Some(check),
                    ..game_lease(id, p.kind, p.state.clone(), p.seed, gcfg, s.cfg.leases.ttl_ms)
                })
            });
            out.extend(checks);
        }
        if out.len() == n {
            return Ok(pb::LeaseResponse { leases: out });
        }
        let mut leases = s.leases.lock().expect("not poisoned");
        let mut sources = s.sources.lock().expect("not poisoned");
        let grant = leases.grant(worker, n - out.len(), &mut sources, now);
        s.store
            .put_leases(&grant.granted, &grant.replaced, grant.next_id, grant.drawn)
            .map_err(|e| CoordError::Unavailable(e.to_string()))?;
        out.extend(grant.granted.into_iter().map(|(id, row)| {
            let gcfg = sources.game_config(row.game_kind).cloned().unwrap_or_default();
            pb::Lease {
                source: row.source,
                ..game_lease(id, row.game_kind, row.start_state, row.seed, &gcfg, s.cfg.leases.ttl_ms)
            }
        }));
        Ok(pb::LeaseResponse { leases: out })
    }

    /// A worker's value for a check lease: compared with the stored one; a quarantine lists
    /// the stored worker's unchecked games in a `.set-aside.json` file for the trainer.
    ///
    /// # Errors
    /// [`CoordError::NotFound`] for a lease not out to this worker, [`CoordError::InvalidArgument`]
    /// for a value outside [-1, 1], [`CoordError::Unavailable`] when the set-aside file cannot
    /// be written (the quarantine stands; the games are named in the log).
    pub(crate) fn check_reported(&self, r: &pb::ReportCheckRequest) -> Result<(), CoordError> {
        let s = &self.shared;
        if r.visit_actions.len() != r.visit_counts.len() {
            return Err(CoordError::InvalidArgument(format!(
                "{} visit actions but {} visit counts",
                r.visit_actions.len(),
                r.visit_counts.len()
            )));
        }
        let visits: Vec<(String, u32)> =
            r.visit_actions.iter().cloned().zip(r.visit_counts.iter().copied()).collect();
        let (verdict, check, cmp) = s
            .checks
            .lock()
            .expect("not poisoned")
            .report(&r.worker_id, r.lease_id, r.root_value, &visits)
            .map_err(|e| match e {
                CheckError::NotFound(m) => CoordError::NotFound(m),
                CheckError::Invalid(m) => CoordError::InvalidArgument(m),
            })?;
        let (checker, stored) = (shown(&r.worker_id), shown(&check.worker));
        match verdict {
            Verdict::Agreed => {
                s.stats.checks_agreed.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            Verdict::Disagreed => {
                s.stats.checks_disagreed.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                warn!(
                    worker = %stored, checker = %checker, game = %check.game_id,
                    stored_value = check.claim, checked_value = r.root_value, visit_distance = ?cmp.visit_distance,
                    "a stored move disagrees with another worker's search of the position: {cmp}"
                );
            }
            Verdict::Quarantined { worker, games } => {
                s.stats.checks_disagreed.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                s.stats.workers_quarantined.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let reason = format!(
                    "stored root value {} where another worker's search found {}; {} (game {})",
                    check.claim, r.root_value, cmp, check.game_id
                );
                warn!(
                    worker = %shown(&worker), set_aside = games.len(), %reason,
                    "worker quarantined: its stored moves disagreed with other workers' checks too often; \
                     its games since its last good check are set aside"
                );
                let file = crate::checks::write_set_aside(s.store.games_dir(), &worker, &games, &reason)
                    .map_err(|e| {
                        warn!(worker = %shown(&worker), games = ?games, error = %e, "cannot write the set-aside file");
                        CoordError::Unavailable(format!("set-aside file: {e}"))
                    })?;
                s.stats.games_set_aside.fetch_add(games.len() as u64, std::sync::atomic::Ordering::Relaxed);
                info!(%file, games = games.len(), "games set aside; the trainer skips them");
            }
        }
        Ok(())
    }
}

/// A lease of `start_state` in game `kind` with its configured self-play settings (no model,
/// no evaluation match, no check).
fn game_lease(
    id: u64,
    kind: GameKind,
    start_state: Vec<u8>,
    seed: u64,
    gcfg: &GameConfig,
    ttl_ms: u64,
) -> pb::Lease {
    pb::Lease {
        lease_id: id,
        game_kind: kind.to_string(),
        start_state,
        seed,
        settings: Some(convert::selfplay_to_proto(&gcfg.settings, &gcfg.leaf)),
        model_version: 0,
        ttl_ms,
        source: pb::PositionSource::Unspecified as i32,
        evaluation: None,
        check: None,
    }
}
