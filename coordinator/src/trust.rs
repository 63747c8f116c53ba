//! What a submitted game must agree with beyond the rules (issue 24). Replay validation
//! ([`crate::games::validate`]) proves a game legal; these checks tie it to the work the
//! coordinator handed out: its lease (held by the submitter, with the same kind, seed and
//! start position), the lease's settings (visit budget and resignation, through
//! [`Limits::for_settings`]), the versions this coordinator knows, and no move sequence
//! stored twice under two ids.

use std::collections::HashSet;

use sha2::{Digest, Sha256};
use zeroplay_proto::v1 as pb;

use crate::error::CoordError;
use crate::games::{Limits, ValidationError};
use crate::leases::LeaseState;
use crate::store::LeaseRow;

/// The limits a game under `lease` is held to: `base` with the lease's game settings, or
/// `base` alone when the lease names no position (the game is refused later anyway).
pub(crate) fn limits_for(
    base: Limits,
    lease: &LeaseState,
    settings: impl Fn(&LeaseRow) -> Option<engine::selfplay::SelfPlaySettings>,
) -> Limits {
    match lease {
        LeaseState::Active { row, .. } | LeaseState::Queued(row) => {
            settings(row).map_or(base, |s| base.for_settings(&s))
        }
        LeaseState::Finished | LeaseState::Never => base,
    }
}

/// Checks `game`, submitted by `worker` under lease `lease_id`, against where that lease
/// stands.
///
/// # Errors
/// - [`CoordError::InvalidGame`]: no lease, a lease never handed out, or a game whose kind,
///   seed or start position is not the lease's.
/// - [`CoordError::Duplicate`]: the lease's game is stored already (another worker finished
///   it after this one's lease expired, or the game is a replay).
/// - [`CoordError::NotYours`]: the lease is out to another worker, and `lease_id` was never
///   the submitter's (`granted_to`: whom `lease_id` itself was handed to).
pub(crate) fn check_lease(
    game: &pb::GameRecord,
    worker: &str,
    lease_id: u64,
    lease: &LeaseState,
    granted_to: Option<&str>,
) -> Result<(), CoordError> {
    let forged = |m: String| CoordError::InvalidGame(ValidationError::Malformed(m));
    let row = match lease {
        LeaseState::Never if lease_id == 0 => {
            return Err(forged("no lease: every game is played under a lease (lease_id 0)".into()));
        }
        LeaseState::Never => return Err(forged(format!("lease {lease_id} was never handed out"))),
        LeaseState::Finished => {
            return Err(CoordError::Duplicate(format!("lease {lease_id}'s game")));
        }
        // Out to another worker, and `lease_id` was never this worker's: a stolen lease. (A
        // worker whose lease expired while it played and went to another brings its game
        // under the id it was given: taken, and the position is done.)
        LeaseState::Active { worker: holder, .. } if holder != worker && granted_to != Some(worker) => {
            return Err(CoordError::NotYours(format!(
                "lease {lease_id} is out to another worker; a game is submitted by the worker holding its lease"
            )));
        }
        // Held by the submitter, or back in the queue (expired, released, or recovered at a
        // restart): whoever played its position may finish it.
        LeaseState::Active { row, .. } | LeaseState::Queued(row) => row,
    };
    if game.game_kind != row.game_kind.name() {
        return Err(forged(format!(
            "a {} game under lease {lease_id}, which is {}",
            game.game_kind, row.game_kind
        )));
    }
    if game.seed != row.seed {
        return Err(forged(format!("seed {} is not lease {lease_id}'s seed", game.seed)));
    }
    if game.start_state != row.start_state {
        return Err(forged(format!("the start position is not lease {lease_id}'s")));
    }
    Ok(())
}

/// Checks the engine and model versions a game names: this coordinator's engine, and no
/// model newer than the newest it has (`ceiling`; 0 is "no model").
///
/// # Errors
/// [`CoordError::InvalidGame`] naming the version.
pub(crate) fn check_versions(game: &pb::GameRecord, ceiling: u64) -> Result<(), CoordError> {
    let forged = |m: String| Err(CoordError::InvalidGame(ValidationError::Malformed(m)));
    if game.engine_version != engine::ENGINE_VERSION {
        return forged(format!(
            "engine version {:?}, but this coordinator (and every worker it registers) runs {}",
            game.engine_version,
            engine::ENGINE_VERSION
        ));
    }
    let newest = game.moves.iter().map(|m| m.model_version).chain([game.model_version]).max().unwrap_or(0);
    if newest > ceiling {
        return forged(format!("model version {newest}, but the newest model here is {ceiling}"));
    }
    Ok(())
}

/// A game's moves from its start position, hashed: the same moves under a new id are the
/// same game. `start`: the start position as the engine encodes it; `moves`: each action as
/// the engine prints it, and whether chance played it. Computed the same way from a validated
/// submission ([`rows_digest`]) and from a Parquet file's rows (at recovery), so a restart can
/// rebuild every digest from the files alone.
pub(crate) fn moves_digest<'a>(
    kind: &str,
    start: &[u8],
    moves: impl IntoIterator<Item = (&'a str, bool)>,
) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(kind.as_bytes());
    h.update([0]);
    h.update((start.len() as u64).to_le_bytes());
    h.update(start);
    for (action, chance) in moves {
        h.update((action.len() as u64).to_le_bytes());
        h.update(action.as_bytes());
        h.update([if chance { 1 } else { 2 }]);
    }
    h.finalize().into()
}

/// [`moves_digest`] of a validated game's rows (the engine's own encoding and spelling, so
/// two spellings of one move are one game); `start` for a game without moves.
pub(crate) fn rows_digest(kind: &str, start: &[u8], rows: &[crate::rows::PositionRow]) -> [u8; 32] {
    let start = rows.first().map_or(start, |r| r.state.as_slice());
    moves_digest(kind, start, rows.iter().map(|r| (r.action.as_str(), r.actor == 2)))
}

/// Every stored move sequence (loaded from the database at start, with those being stored
/// now).
#[derive(Debug, Default)]
pub(crate) struct Digests(HashSet<[u8; 32]>);

impl Digests {
    /// Records `d`; false if it was recorded already.
    pub(crate) fn insert(&mut self, d: [u8; 32]) -> bool {
        self.0.insert(d)
    }

    /// Every digest loaded at start.
    pub(crate) fn from_set(set: HashSet<[u8; 32]>) -> Digests {
        Digests(set)
    }

    /// How many are known.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// Forgets `d` (its game was not stored after all).
    pub(crate) fn remove(&mut self, d: &[u8; 32]) {
        self.0.remove(d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row() -> LeaseRow {
        LeaseRow { game_kind: engine::GameKind::BattleNumber, start_state: vec![1, 2, 3], seed: 7, source: 1 }
    }

    fn game() -> pb::GameRecord {
        pb::GameRecord {
            game_kind: "battlenumber".into(),
            seed: 7,
            start_state: vec![1, 2, 3],
            engine_version: engine::ENGINE_VERSION.into(),
            ..Default::default()
        }
    }

    #[test]
    fn a_game_must_match_a_lease_its_submitter_holds() {
        let mine = LeaseState::Active { row: row(), worker: "w1".into() };
        assert!(check_lease(&game(), "w1", 5, &mine, Some("w1")).is_ok());
        assert!(check_lease(&game(), "w1", 5, &LeaseState::Queued(row()), None).is_ok());
        assert!(matches!(check_lease(&game(), "w2", 5, &mine, Some("w1")), Err(CoordError::NotYours(_))));
        // w2's own lease 5 expired and was handed to w1: w2's game for it is taken.
        assert!(check_lease(&game(), "w2", 5, &mine, Some("w2")).is_ok());
        assert!(matches!(
            check_lease(&game(), "w1", 5, &LeaseState::Finished, None),
            Err(CoordError::Duplicate(_))
        ));
        for (id, state) in [(0, LeaseState::Never), (99, LeaseState::Never)] {
            assert!(matches!(check_lease(&game(), "w1", id, &state, None), Err(CoordError::InvalidGame(_))));
        }
        for forge in [
            (|g: &mut pb::GameRecord| g.seed = 8) as fn(&mut pb::GameRecord),
            |g| g.start_state = vec![1, 2, 4],
            |g| g.game_kind = "banqi".into(),
        ] {
            let mut g = game();
            forge(&mut g);
            let e = check_lease(&g, "w1", 5, &mine, Some("w1")).unwrap_err();
            assert!(matches!(e, CoordError::InvalidGame(_)), "{e}");
        }
    }

    #[test]
    fn versions_must_be_known() {
        let mut g = game();
        assert!(check_versions(&g, 0).is_ok());
        g.model_version = 3;
        assert!(check_versions(&g, 2).is_err() && check_versions(&g, 3).is_ok());
        g.moves.push(pb::MoveRecord { model_version: u64::MAX, ..Default::default() });
        assert!(check_versions(&g, 3).is_err());
        let mut g = game();
        g.engine_version = "0.0.0-forged".into();
        assert!(check_versions(&g, 0).unwrap_err().to_string().contains("0.0.0-forged"));
    }

    #[test]
    fn the_same_moves_hash_the_same_and_any_change_differs() {
        let d =
            |start: &[u8], moves: &[(&str, bool)]| moves_digest("battlenumber", start, moves.iter().copied());
        let a = d(&[1, 2], &[("d3", false), ("e4", false)]);
        assert_eq!(a, d(&[1, 2], &[("d3", false), ("e4", false)]));
        assert_ne!(a, d(&[1, 2], &[("d3", false), ("e5", false)]));
        assert_ne!(a, d(&[1, 3], &[("d3", false), ("e4", false)]));
        assert_ne!(a, d(&[1, 2], &[("d3", true), ("e4", false)]));
        // Lengths are framed: moving a character from one action to the next differs.
        assert_ne!(a, d(&[1, 2], &[("d3e", false), ("4", false)]));
        assert_ne!(a, moves_digest("banqi", &[1, 2], [("d3", false), ("e4", false)]));
        let mut set = Digests::default();
        assert!(set.insert(a) && !set.insert(a));
    }
}
