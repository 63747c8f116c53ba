//! Spot checks of self-reported values (issue 42). A stored game's root values, and the
//! values that justify a resignation, are its worker's word: the coordinator cannot search
//! (it links no network), so a sample of each worker's searched positions is searched again,
//! fresh, by **another** worker with the same model and budget, and the two values compared.
//!
//! - **Sampling.** Each stored game is sampled with probability [`ChecksConfig::rate`], every
//!   resigned one with [`ChecksConfig::resign_rate`]: one of its full-search positions (for a
//!   resignation, the resigning seat's last searched one), its stored root value the claim.
//! - **Checking.** The position goes out as a check lease ([`Checks::grant`]) to a worker
//!   other than the one that stored it, which searches it as self-play does (no root noise)
//!   and reports its root value and its policy target (root visits) ([`Checks::report`]).
//! - **Verdict.** A claim more than [`ChecksConfig::tolerance`] from the checker's value
//!   disagrees; so does a stored visit distribution further than
//!   [`ChecksConfig::visit_tolerance`] (total variation distance) from the checker's, which
//!   catches forged policy targets stored beside honest values. Visits are compared only for
//!   moves searched with a network: without one, root noise decides where the visits of a
//!   position with near-equal values go, and honest pairs lie as far apart as forged ones
//!   (`zeroplay bench checks`). A worker with [`ChecksConfig::quarantine_after`]
//!   disagreements among its last [`ChecksConfig::window`] checks is quarantined (a count
//!   over a window, so rare honest outliers never add up over a long run): the games it stored since its last agreeing check are set aside (the
//!   caller lists them in a `.set-aside.json` file beside the Parquet files, which the
//!   trainer skips), and its later calls are refused. An agreeing check clears the worker's
//!   list of games awaiting one.
//!
//! What this bounds and what it does not is in docs/operations.md ("Faults"): a worker that
//! forges values in more than a few games is caught, and its games since its last good
//! check go unused; values forged within the tolerance, or only in games the sample misses,
//! pass. State is in memory: a restart forgets pending checks and quarantines.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use rand::RngExt;
use serde::{Deserialize, Serialize};

use crate::games::GameKind;
use crate::rows::PositionRow;
use zeroplay_proto::v1 as pb;

/// Check lease ids start here (below the evaluation leases' [`crate::gating::EVAL_LEASE_BASE`],
/// far above any position lease id).
pub const CHECK_LEASE_BASE: u64 = 1 << 61;

/// Is `id` a check lease id?
pub fn is_check_lease(id: u64) -> bool {
    (CHECK_LEASE_BASE..crate::gating::EVAL_LEASE_BASE).contains(&id)
}

/// `[checks]`: how stored values are spot-checked.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ChecksConfig {
    /// Share of stored games with one position checked, in [0, 1] (0: no checks).
    pub rate: f64,
    /// Share of resigned games whose resignation is checked, in [0, 1].
    pub resign_rate: f64,
    /// A stored root value further than this from the checker's disagrees (values are in
    /// [-1, 1]; two honest full searches of one position rarely differ by more than 0.3).
    pub tolerance: f32,
    /// A stored move's visit distribution (its policy target) further than this from the
    /// checker's, in total variation distance (0: the same shape, 1: no action in common),
    /// disagrees. Measured on honest pairs with `zeroplay bench checks` (docs/benchmarks.md):
    /// honest pairs stay well below, reversed visit counts well above. 1 turns it off.
    pub visit_tolerance: f32,
    /// Disagreements among a worker's last `window` checks that quarantine it (at least 1).
    pub quarantine_after: u32,
    /// The checks `quarantine_after` counts over (at least `quarantine_after`).
    pub window: u32,
    /// Checks waiting for a checker at most; beyond, the oldest is dropped.
    pub max_pending: usize,
}

impl Default for ChecksConfig {
    fn default() -> Self {
        ChecksConfig {
            rate: 0.02,
            resign_rate: 1.0,
            tolerance: 0.5,
            visit_tolerance: DEFAULT_VISIT_TOLERANCE,
            quarantine_after: 3,
            window: 10,
            max_pending: 1024,
        }
    }
}

/// [`ChecksConfig::visit_tolerance`]'s default (see docs/benchmarks.md, "Visit checks").
pub const DEFAULT_VISIT_TOLERANCE: f32 = 0.6;

impl ChecksConfig {
    /// Checks the values make sense.
    ///
    /// # Errors
    /// The offending field, named.
    pub fn validate(&self) -> Result<(), String> {
        for (name, v) in [("rate", self.rate), ("resign_rate", self.resign_rate)] {
            if !(0.0..=1.0).contains(&v) {
                return Err(format!("checks.{name} must be in [0, 1], not {v}"));
            }
        }
        if !(self.tolerance > 0.0 && self.tolerance <= 2.0) {
            return Err(format!("checks.tolerance must be in (0, 2], not {}", self.tolerance));
        }
        if !(self.visit_tolerance > 0.0 && self.visit_tolerance <= 1.0) {
            return Err(format!("checks.visit_tolerance must be in (0, 1], not {}", self.visit_tolerance));
        }
        if self.quarantine_after == 0 || self.max_pending == 0 {
            return Err("checks.quarantine_after and checks.max_pending must be at least 1".into());
        }
        if !(self.quarantine_after..=10_000).contains(&self.window) {
            return Err(format!(
                "checks.window must be between quarantine_after ({}) and 10000, not {}",
                self.quarantine_after, self.window
            ));
        }
        Ok(())
    }
}

/// One position to check.
#[derive(Clone, Debug)]
pub(crate) struct Pending {
    pub(crate) kind: GameKind,
    /// The position, encoded.
    pub(crate) state: Vec<u8>,
    /// The model that searched it (0: none).
    pub(crate) model_version: u64,
    /// The stored root value, from the mover's view.
    pub(crate) claim: f32,
    /// The stored policy target (root children and their visits).
    pub(crate) visits: Vec<(String, u32)>,
    /// Who stored it, and in which game.
    pub(crate) worker: String,
    pub(crate) game_id: String,
    /// Seed of the checker's search.
    pub(crate) seed: u64,
}

struct Out {
    check: Pending,
    checker: String,
    expires: Instant,
}

#[derive(Debug, Default)]
struct Trust {
    agreed: u64,
    /// The worker's last `window` checks: true where it disagreed.
    recent: VecDeque<bool>,
    /// Games stored since the last agreeing check.
    awaiting: VecDeque<String>,
    quarantined: bool,
}

/// How a checker's search compares with the stored claim.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Comparison {
    /// |stored root value − checker's|.
    pub(crate) value_gap: f32,
    /// Total variation distance between the stored and the checker's visit distributions
    /// (`None` when not compared: the stored move was searched without a network, or either
    /// side holds no visits, as from a checker that predates visit checks).
    pub(crate) visit_distance: Option<f32>,
}

impl std::fmt::Display for Comparison {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "root values {:.3} apart", self.value_gap)?;
        match self.visit_distance {
            Some(d) => write!(f, ", visit distributions {d:.3} apart (total variation)"),
            None => write!(f, ", visits not compared"),
        }
    }
}

/// Why reported visits cannot be compared: unequal lengths, too many, empty, overlong or
/// repeated actions.
fn malformed_visits(visits: &[(String, u32)]) -> Option<String> {
    if visits.len() > MAX_VISIT_ACTIONS {
        return Some(format!("{} visited actions (at most {MAX_VISIT_ACTIONS})", visits.len()));
    }
    let mut seen = std::collections::HashSet::with_capacity(visits.len());
    for (a, _) in visits {
        if a.is_empty() || a.len() > 64 {
            return Some(format!("visited action {a:?} is empty or longer than 64 bytes"));
        }
        if !seen.insert(a.as_str()) {
            return Some(format!("visited action {a:?} listed twice"));
        }
    }
    None
}

/// Root children a check report may list at most.
pub(crate) const MAX_VISIT_ACTIONS: usize = 4096;

/// What a check report decided.
#[derive(Debug, PartialEq)]
pub(crate) enum Verdict {
    /// The stored value is within the tolerance.
    Agreed,
    /// It is not; the worker is not (yet) quarantined.
    Disagreed,
    /// It is not, and the worker that stored it is now quarantined: set its games aside.
    Quarantined {
        /// The quarantined worker.
        worker: String,
        /// Its games stored since its last agreeing check.
        games: Vec<String>,
    },
}

/// Why a check report is refused.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CheckError {
    /// No such check out to this worker.
    #[error("{0}")]
    NotFound(String),
    /// A value out of range.
    #[error("{0}")]
    Invalid(String),
}

/// Pending and leased checks, and each worker's record.
pub(crate) struct Checks {
    cfg: ChecksConfig,
    rng: engine::Rng,
    queue: VecDeque<Pending>,
    out: HashMap<u64, Out>,
    workers: HashMap<String, Trust>,
    next_id: u64,
    /// Checks dropped unchecked (the queue was full).
    pub(crate) dropped: u64,
}

/// The games a worker may have stored since its last check, at most (beyond, the oldest are
/// forgotten: they stay trained on even if the worker is quarantined later).
const MAX_AWAITING: usize = 1 << 20;

impl Checks {
    pub(crate) fn new(cfg: ChecksConfig, seed: u64) -> Checks {
        Checks {
            cfg,
            rng: engine::rng_from_seed(engine::derive_seed(seed, 0x636865636b)),
            queue: VecDeque::new(),
            out: HashMap::new(),
            workers: HashMap::new(),
            next_id: CHECK_LEASE_BASE,
            dropped: 0,
        }
    }

    /// Whether `worker` is quarantined.
    pub(crate) fn is_quarantined(&self, worker: &str) -> bool {
        self.workers.get(worker).is_some_and(|t| t.quarantined)
    }

    /// Records a game `worker` stored, and samples one of its positions for a check.
    pub(crate) fn stored(
        &mut self,
        worker: &str,
        game: &pb::GameRecord,
        kind: GameKind,
        rows: &[PositionRow],
    ) {
        if self.cfg.rate <= 0.0 && self.cfg.resign_rate <= 0.0 {
            // Checks are off (`zeroplay local`): no game would ever be vouched for.
            return;
        }
        let t = self.workers.entry(worker.to_string()).or_default();
        if t.awaiting.len() >= MAX_AWAITING {
            t.awaiting.pop_front();
        }
        t.awaiting.push_back(game.game_id.clone());
        let searched = |r: &&PositionRow| r.full_search && !r.visit_actions.is_empty();
        let row = if game.resigned {
            if self.rng.random::<f64>() >= self.cfg.resign_rate {
                return;
            }
            rows.iter().rev().filter(searched).find(|r| u32::from(r.actor) == game.resigned_seat)
        } else {
            if self.cfg.rate <= 0.0 || self.rng.random::<f64>() >= self.cfg.rate {
                return;
            }
            let candidates: Vec<&PositionRow> = rows.iter().filter(searched).collect();
            if candidates.is_empty() {
                return;
            }
            Some(candidates[self.rng.random_range(0..candidates.len())])
        };
        let Some(row) = row else { return };
        if self.queue.len() >= self.cfg.max_pending {
            self.queue.pop_front();
            self.dropped += 1;
        }
        let seed = self.rng.random::<u64>();
        self.queue.push_back(Pending {
            kind,
            state: row.state.clone(),
            model_version: row.model_version,
            claim: row.root_value,
            visits: row.visit_actions.iter().cloned().zip(row.visit_counts.iter().copied()).collect(),
            worker: worker.to_string(),
            game_id: game.game_id.clone(),
            seed,
        });
    }

    /// Up to `n` checks for `worker` (never of its own games), leased until `ttl` from `now`.
    /// `lease` turns a check and its id into the lease sent.
    pub(crate) fn grant(
        &mut self,
        worker: &str,
        n: usize,
        now: Instant,
        ttl: Duration,
        mut lease: impl FnMut(u64, &Pending) -> Option<pb::Lease>,
    ) -> Vec<pb::Lease> {
        let mut out = Vec::new();
        let mut i = 0;
        while out.len() < n && i < self.queue.len() {
            if self.is_quarantined(&self.queue[i].worker) {
                // Its games are set aside already: nothing left to check.
                self.queue.remove(i);
                continue;
            }
            if self.queue[i].worker == worker {
                i += 1;
                continue;
            }
            let check = self.queue.remove(i).expect("in range");
            let id = self.next_id;
            self.next_id += 1;
            match lease(id, &check) {
                Some(l) => {
                    out.push(l);
                    self.out.insert(id, Out { check, checker: worker.to_string(), expires: now + ttl });
                }
                // The game is no longer configured: nothing to check it with.
                None => self.dropped += 1,
            }
        }
        out
    }

    /// Renews `worker`'s check leases among `ids`; returns the ids it does not hold.
    pub(crate) fn renew(&mut self, worker: &str, ids: &[u64], now: Instant, ttl: Duration) -> Vec<u64> {
        let mut unknown = Vec::new();
        for id in ids {
            match self.out.get_mut(id) {
                Some(o) if o.checker == worker => o.expires = now + ttl,
                _ => unknown.push(*id),
            }
        }
        unknown
    }

    /// Puts `worker`'s check leases among `ids` back in the queue; returns how many.
    pub(crate) fn release(&mut self, worker: &str, ids: &[u64]) -> usize {
        let mut n = 0;
        for id in ids {
            if self.out.get(id).is_some_and(|o| o.checker == worker) {
                let o = self.out.remove(id).expect("present");
                self.queue.push_front(o.check);
                n += 1;
            }
        }
        n
    }

    /// Puts expired check leases back in the queue; returns how many.
    pub(crate) fn sweep(&mut self, now: Instant) -> usize {
        let expired: Vec<u64> =
            self.out.iter().filter(|(_, o)| o.expires <= now).map(|(id, _)| *id).collect();
        for id in &expired {
            let o = self.out.remove(id).expect("present");
            self.queue.push_front(o.check);
        }
        expired.len()
    }

    /// `worker` reports `value` and `visits` (its policy target; empty from a worker that
    /// predates visit checks: only the value is compared) for check lease `id`: compared with
    /// the stored claim.
    ///
    /// # Errors
    /// [`CheckError::NotFound`] for a lease not out to `worker`; [`CheckError::Invalid`] for a
    /// value outside [-1, 1] or malformed visits (the check goes out again).
    pub(crate) fn report(
        &mut self,
        worker: &str,
        id: u64,
        value: f32,
        visits: &[(String, u32)],
    ) -> Result<(Verdict, Pending, Comparison), CheckError> {
        if self.out.get(&id).is_none_or(|o| o.checker != worker) {
            return Err(CheckError::NotFound(format!("no check lease {id} out to this worker")));
        }
        let o = self.out.remove(&id).expect("present");
        let bad = if !(value.is_finite() && (-1.0..=1.0).contains(&value)) {
            Some(format!("root value {value} is not in [-1, 1]"))
        } else {
            malformed_visits(visits)
        };
        if let Some(why) = bad {
            self.queue.push_front(o.check);
            return Err(CheckError::Invalid(why));
        }
        let check = o.check;
        let cmp = Comparison {
            value_gap: (check.claim - value).abs(),
            visit_distance: if check.model_version > 0 {
                engine::selfplay::visit_distance(&check.visits, visits)
            } else {
                None
            },
        };
        let t = self.workers.entry(check.worker.clone()).or_default();
        if t.quarantined {
            return Ok((Verdict::Disagreed, check, cmp));
        }
        let agrees = cmp.value_gap <= self.cfg.tolerance
            && cmp.visit_distance.is_none_or(|d| d <= self.cfg.visit_tolerance);
        if t.recent.len() >= self.cfg.window as usize {
            t.recent.pop_front();
        }
        t.recent.push_back(!agrees);
        let verdict = if agrees {
            t.agreed += 1;
            // Its games up to this one's are vouched for by a good check (those stored after
            // it stay on the list).
            if let Some(k) = t.awaiting.iter().position(|g| *g == check.game_id) {
                t.awaiting.drain(..=k);
            }
            Verdict::Agreed
        } else {
            if t.recent.iter().filter(|d| **d).count() >= self.cfg.quarantine_after as usize {
                t.quarantined = true;
                Verdict::Quarantined {
                    worker: check.worker.clone(),
                    games: std::mem::take(&mut t.awaiting).into(),
                }
            } else {
                Verdict::Disagreed
            }
        };
        Ok((verdict, check, cmp))
    }

    /// Checks waiting for a checker, and out.
    pub(crate) fn counts(&self) -> (usize, usize) {
        (self.queue.len(), self.out.len())
    }
}

/// The `.set-aside.json` file that lists a quarantined worker's games (the trainer skips
/// them), written atomically in `games_dir`; returns its name.
///
/// # Errors
/// The file system's.
pub(crate) fn write_set_aside(
    games_dir: &std::path::Path,
    worker: &str,
    games: &[String],
    reason: &str,
) -> std::io::Result<String> {
    let ms =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_millis();
    let short: String = worker.chars().filter(char::is_ascii_alphanumeric).take(16).collect();
    let name = format!("{ms:013}-{short}{SET_ASIDE_SUFFIX}");
    let body = serde_json::json!({ "worker": worker, "reason": reason, "games": games });
    durable::write_atomic(&games_dir.join(&name), body.to_string().as_bytes())?;
    Ok(name)
}

/// The suffix of set-aside files (the trainer and the storage sync look for it).
pub const SET_ASIDE_SUFFIX: &str = ".set-aside.json";

#[cfg(test)]
mod tests {
    use super::*;

    fn row(ply: u32, actor: u8, value: f32) -> PositionRow {
        PositionRow {
            game_id: "g".into(),
            game_kind: "battlenumber",
            seed: 1,
            engine_version: String::new(),
            encoding_version: 1,
            model_version: 3,
            ply,
            actor,
            state: vec![ply as u8],
            action: "a".into(),
            visit_actions: vec!["a".into()],
            visit_counts: vec![10],
            root_value: value,
            full_search: true,
            result: 0,
            score: 0,
            decisive: false,
            resigned: false,
            would_resign_seat: -1,
        }
    }

    fn game(id: &str, resigned: bool) -> pb::GameRecord {
        pb::GameRecord { game_id: id.into(), resigned, resigned_seat: 1, ..Default::default() }
    }

    fn lease(id: u64, _: &Pending) -> Option<pb::Lease> {
        Some(pb::Lease { lease_id: id, ..Default::default() })
    }

    fn all(rate: f64) -> Checks {
        Checks::new(ChecksConfig { rate, quarantine_after: 2, ..ChecksConfig::default() }, 1)
    }

    const TTL: Duration = Duration::from_secs(10);

    #[test]
    fn a_worker_never_checks_its_own_games_and_a_good_check_vouches_for_them() {
        let mut c = all(1.0);
        let now = Instant::now();
        c.stored("a", &game("g1", false), GameKind::BattleNumber, &[row(0, 0, 0.2), row(1, 1, -0.1)]);
        c.stored("a", &game("g2", false), GameKind::BattleNumber, &[row(0, 0, 0.3)]);
        assert!(c.grant("a", 4, now, TTL, lease).is_empty(), "not its own");
        let got = c.grant("b", 1, now, TTL, lease);
        assert_eq!(got.len(), 1);
        assert!(is_check_lease(got[0].lease_id));
        let (v, p, _) = c.report("b", got[0].lease_id, p_claim_plus(&c, 0.1), &[]).unwrap();
        assert_eq!((v, p.game_id.as_str()), (Verdict::Agreed, "g1"));
        assert_eq!(c.workers["a"].awaiting, ["g2"], "g1 vouched for");
        // A lease is reported once, by its holder.
        assert!(matches!(c.report("b", got[0].lease_id, 0.0, &[]), Err(CheckError::NotFound(_))));
        let got = c.grant("b", 1, now, TTL, lease);
        assert!(matches!(c.report("c", got[0].lease_id, 0.0, &[]), Err(CheckError::NotFound(_))));
        assert!(matches!(c.report("b", got[0].lease_id, 1.5, &[]), Err(CheckError::Invalid(_))));
        assert_eq!(c.counts(), (1, 0), "a refused value sends the check out again");
    }

    /// The claim of the check about to be reported is not visible to the checker; tests
    /// look it up to report a value near it.
    fn p_claim_plus(c: &Checks, d: f32) -> f32 {
        c.out.values().next().expect("one out").check.claim + d
    }

    #[test]
    fn forged_values_quarantine_their_worker_and_set_its_unchecked_games_aside() {
        let mut c = all(1.0);
        let now = Instant::now();
        // Honest values, then forged ones (-0.99 where the truth is about 0).
        c.stored("f", &game("ok", false), GameKind::BattleNumber, &[row(0, 0, 0.1)]);
        let l = c.grant("b", 1, now, TTL, lease);
        assert_eq!(c.report("b", l[0].lease_id, 0.05, &[]).unwrap().0, Verdict::Agreed);
        for g in ["x1", "x2", "x3"] {
            c.stored("f", &game(g, true), GameKind::BattleNumber, &[row(0, 0, 0.1), row(1, 1, -0.99)]);
        }
        let l = c.grant("b", 1, now, TTL, lease);
        let (v, p, _) = c.report("b", l[0].lease_id, 0.1, &[]).unwrap();
        assert_eq!((v, p.claim), (Verdict::Disagreed, -0.99), "the resigning seat's value is checked");
        assert!(!c.is_quarantined("f"));
        let l = c.grant("b", 1, now, TTL, lease);
        let (v, _, _) = c.report("b", l[0].lease_id, 0.0, &[]).unwrap();
        assert_eq!(
            v,
            Verdict::Quarantined { worker: "f".into(), games: vec!["x1".into(), "x2".into(), "x3".into()] }
        );
        assert!(c.is_quarantined("f"));
        // Its last pending check is dropped, not handed out.
        assert!(c.grant("b", 4, now, TTL, lease).is_empty());
        assert_eq!(c.counts(), (0, 0));
    }

    fn visits(v: &[(&str, u32)]) -> Vec<(String, u32)> {
        v.iter().map(|(a, n)| (a.to_string(), *n)).collect()
    }

    #[test]
    fn forged_visits_with_honest_values_disagree_and_malformed_visits_are_refused() {
        let mut c = all(1.0);
        let now = Instant::now();
        let searched = |v: &[(&str, u32)]| {
            let mut r = row(0, 0, 0.2);
            (r.visit_actions, r.visit_counts) = visits(v).into_iter().unzip();
            r
        };
        // An honest target and a reversed one, both with the honest value.
        c.stored(
            "f",
            &game("honest", false),
            GameKind::BattleNumber,
            &[searched(&[("a", 70), ("b", 20), ("c", 9)])],
        );
        c.stored(
            "f",
            &game("forged", false),
            GameKind::BattleNumber,
            &[searched(&[("a", 9), ("b", 20), ("c", 70)])],
        );
        let checker = visits(&[("a", 80), ("b", 15), ("c", 4)]);
        let l = c.grant("b", 1, now, TTL, lease);
        let (v, _, cmp) = c.report("b", l[0].lease_id, 0.2, &checker).unwrap();
        assert_eq!(v, Verdict::Agreed, "{cmp}");
        assert!(cmp.visit_distance.unwrap() < 0.15, "{cmp}");
        let l = c.grant("b", 1, now, TTL, lease);
        let (v, p, cmp) = c.report("b", l[0].lease_id, 0.2, &checker).unwrap();
        assert_eq!((v, p.game_id.as_str()), (Verdict::Disagreed, "forged"), "{cmp}");
        assert!(cmp.value_gap < 1e-6 && cmp.visit_distance.unwrap() > 0.7, "{cmp}");
        // A move searched without a network: root noise decides its visits, so only its
        // value is compared.
        let mut r = searched(&[("a", 9), ("c", 70)]);
        r.model_version = 0;
        c.stored("f", &game("rollout", false), GameKind::BattleNumber, &[r]);
        let l = c.grant("b", 1, now, TTL, lease);
        let (v, _, cmp) = c.report("b", l[0].lease_id, 0.2, &checker).unwrap();
        assert_eq!((v, cmp.visit_distance), (Verdict::Agreed, None));
        // Without the checker's visits (an older worker) only values are compared.
        c.stored("f", &game("old", false), GameKind::BattleNumber, &[searched(&[("a", 9), ("c", 70)])]);
        let l = c.grant("b", 1, now, TTL, lease);
        let (v, _, cmp) = c.report("b", l[0].lease_id, 0.2, &[]).unwrap();
        assert_eq!((v, cmp.visit_distance), (Verdict::Agreed, None));
        // Malformed visits are refused, and the check goes out again.
        c.stored("f", &game("again", false), GameKind::BattleNumber, &[searched(&[("a", 1)])]);
        for bad in [visits(&[("a", 1), ("a", 2)]), visits(&[("", 1)]), vec![("x".repeat(65), 1)]] {
            let l = c.grant("b", 1, now, TTL, lease);
            assert!(
                matches!(c.report("b", l[0].lease_id, 0.0, &bad), Err(CheckError::Invalid(_))),
                "{bad:?}"
            );
        }
        let many: Vec<(String, u32)> = (0..=MAX_VISIT_ACTIONS).map(|i| (i.to_string(), 1)).collect();
        let l = c.grant("b", 1, now, TTL, lease);
        assert!(matches!(c.report("b", l[0].lease_id, 0.0, &many), Err(CheckError::Invalid(_))));
        assert_eq!(c.counts(), (1, 0));
        assert!(ChecksConfig { visit_tolerance: 0.0, ..ChecksConfig::default() }.validate().is_err());
        assert!(ChecksConfig { visit_tolerance: 1.5, ..ChecksConfig::default() }.validate().is_err());
    }

    #[test]
    fn disagreements_count_over_the_last_window_of_checks() {
        let cfg = ChecksConfig { rate: 1.0, quarantine_after: 2, window: 3, ..ChecksConfig::default() };
        let mut c = Checks::new(cfg, 1);
        let now = Instant::now();
        // Disagree, agree ×3, disagree: the first has left the window, so no quarantine; one
        // more disagreement within it quarantines.
        for (i, value) in [0.9, 0.0, 0.0, 0.0, 0.9, 0.9].into_iter().enumerate() {
            c.stored("h", &game(&format!("g{i}"), false), GameKind::BattleNumber, &[row(0, 0, 0.0)]);
            let l = c.grant("b", 1, now, TTL, lease);
            let (v, _, _) = c.report("b", l[0].lease_id, value, &[]).unwrap();
            assert_eq!(c.is_quarantined("h"), i == 5, "after check {i}: {v:?}");
        }
        assert!(
            ChecksConfig { quarantine_after: 4, window: 3, ..ChecksConfig::default() }.validate().is_err()
        );
    }

    #[test]
    fn expired_and_released_checks_go_out_again_and_sampling_follows_the_rate() {
        let mut c = all(1.0);
        let now = Instant::now();
        c.stored("a", &game("g", false), GameKind::BattleNumber, &[row(0, 0, 0.0)]);
        let l = c.grant("b", 1, now, TTL, lease);
        assert_eq!(c.renew("b", &[l[0].lease_id, 7], now, TTL), [7]);
        assert_eq!(c.sweep(now + TTL * 2), 1);
        let l = c.grant("b", 1, now, TTL, lease);
        assert_eq!(c.release("b", &[l[0].lease_id]), 1);
        assert_eq!(c.counts(), (1, 0));
        // No checks at rate 0; about 1 in 10 at 0.1; a game without searched rows has none.
        let mut none = all(0.0);
        none.stored("a", &game("g", false), GameKind::BattleNumber, &[row(0, 0, 0.0)]);
        assert_eq!(none.counts(), (0, 0));
        let mut some = all(0.1);
        for i in 0..2000 {
            some.stored("a", &game(&format!("g{i}"), false), GameKind::BattleNumber, &[row(0, 0, 0.0)]);
        }
        let (queued, _) = some.counts();
        assert!((120..=280).contains(&queued), "{queued} of 2000 sampled at 0.1");
        let mut unsearched = all(1.0);
        let mut r = row(0, 0, 0.0);
        r.visit_actions.clear();
        unsearched.stored("a", &game("g", false), GameKind::BattleNumber, &[r]);
        assert_eq!(unsearched.counts(), (0, 0));
        assert!(ChecksConfig { rate: 1.5, ..ChecksConfig::default() }.validate().is_err());
        assert!(ChecksConfig { tolerance: 0.0, ..ChecksConfig::default() }.validate().is_err());
        ChecksConfig::default().validate().unwrap();
    }
}
