//! Gating runs scheduled on the workers.
//!
//! A candidate published with gate settings gets a [`GateRun`]: its matches (each one opening,
//! two games with the seats swapped) are handed out as evaluation leases before any self-play
//! position, the workers report each match's points, and the run decides by the shared rule
//! ([`engine::gating::GateSettings::decide`]). Match `i` starts from the same seeded random
//! opening as the trainer's own gating would use, so both give the same matches.
//!
//! No single worker decides a gate: a report counts only the points its games replay to
//! ([`crate::games::replay_match`], from the lease's start and seed), and one worker
//! registration plays at most a share of any run's matches (`leases.max_gate_share`).
//!
//! Evaluation leases live only in memory, with ids from [`EVAL_LEASE_BASE`] up so they never
//! meet self-play lease ids. A run interrupted by a coordinator restart starts again from its
//! first match (its candidate is stored with the state `Gating`).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::{Duration, Instant};

use engine::gating::{GateResult, GateSettings};
use zeroplay_proto::v1 as pb;

use crate::games::{self, GameKind, GameOptions};

/// First evaluation lease id (self-play lease ids count up from 1 and never get here).
pub const EVAL_LEASE_BASE: u64 = 1 << 62;

/// Is `id` an evaluation lease id?
pub fn is_eval_lease(id: u64) -> bool {
    id >= EVAL_LEASE_BASE
}

struct Out {
    run: u64,
    index: u32,
    worker: String,
    expires: Instant,
    /// The match's start position and seed, for the replay of its report.
    start: Vec<u8>,
    seed: u64,
}

/// Why a match report is refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ReportError {
    /// The lease is unknown, or another worker's.
    #[error("{0}")]
    NotFound(String),
    /// The points are malformed, or the games do not replay to them (the match goes out again).
    #[error("{0}")]
    Invalid(String),
}

/// One candidate's gating.
pub struct GateRun {
    /// The candidate's version.
    pub candidate: u64,
    /// Its opponent's version (0: the rollout AI).
    pub opponent: u64,
    /// The game.
    pub kind: GameKind,
    /// The rule and match settings.
    pub settings: GateSettings,
    next: u32,
    requeue: VecDeque<u32>,
    points: BTreeMap<u32, f64>,
    /// Matches counted per worker registration.
    by_worker: HashMap<String, u32>,
    /// Whether the log has said the run waits for another worker.
    waiting_said: bool,
    /// The result, once decided.
    pub result: Option<GateResult>,
}

impl GateRun {
    /// Matches reported so far.
    pub fn reported(&self) -> u32 {
        self.points.len() as u32
    }

    /// The candidate's points so far.
    pub fn points(&self) -> f64 {
        self.points.values().sum()
    }

    /// The status message for `GateStatus`.
    pub fn status(&self) -> pb::GateStatusResponse {
        let pts: Vec<f64> = self.points.values().copied().collect();
        let (state, r) = match &self.result {
            Some(r) if r.promoted => (pb::GateState::Promoted, r.clone()),
            Some(r) => (pb::GateState::Rejected, r.clone()),
            None if pts.is_empty() => {
                (pb::GateState::Running, GateResult::without_matches(false, String::new()))
            }
            None => (
                pb::GateState::Running,
                GateResult { reason: String::new(), ..GateResult::new(&pts, false, String::new()) },
            ),
        };
        pb::GateStatusResponse {
            state: state as i32,
            opponent_version: self.opponent,
            matches: r.matches,
            matches_max: self.settings.matches,
            points: r.points,
            elo: r.elo,
            elo_lo: r.elo_lo,
            elo_hi: r.elo_hi,
            reason: r.reason,
        }
    }
}

/// What a reported match did.
#[derive(Debug, PartialEq)]
pub enum Reported {
    /// Counted; the run goes on.
    Counted,
    /// Counted, and it decided the run.
    Decided(u64, GateResult),
    /// The run had decided already, or the match was reported before.
    Ignored,
}

/// Every gating run of this coordinator process.
pub struct Gating {
    runs: BTreeMap<u64, GateRun>,
    out: HashMap<u64, Out>,
    next_id: u64,
    ttl: Duration,
    options: GameOptions,
    max_share: f64,
    max_moves: usize,
}

impl Gating {
    /// No runs; leases expire after `ttl` without a heartbeat; one worker plays at most
    /// `max_share` of a run's matches (at least one); a reported game has at most `max_moves`
    /// actions.
    pub fn new(ttl: Duration, options: GameOptions, max_share: f64, max_moves: usize) -> Gating {
        Gating {
            runs: BTreeMap::new(),
            out: HashMap::new(),
            next_id: EVAL_LEASE_BASE,
            ttl,
            options,
            max_share,
            max_moves,
        }
    }

    /// Starts gating `candidate` against `opponent` (0: the rollout AI).
    pub fn start(&mut self, candidate: u64, opponent: u64, kind: GameKind, settings: GateSettings) {
        self.runs.insert(
            candidate,
            GateRun {
                candidate,
                opponent,
                kind,
                settings,
                next: 0,
                requeue: VecDeque::new(),
                points: BTreeMap::new(),
                by_worker: HashMap::new(),
                waiting_said: false,
                result: None,
            },
        );
    }

    /// The run of `candidate`, if it was gated by this process.
    pub fn run(&self, candidate: u64) -> Option<&GateRun> {
        self.runs.get(&candidate)
    }

    /// Candidates being gated now.
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    /// Evaluation leases out now.
    pub fn active(&self) -> usize {
        self.out.len()
    }

    /// Up to `n` evaluation leases for `worker`, oldest run first: matches handed back or
    /// expired first, then new ones, never more than a run can still need.
    pub fn grant(&mut self, worker: &str, n: usize, now: Instant, ttl_ms: u64) -> Vec<pb::Lease> {
        let mut leases = Vec::new();
        for run in self.runs.values_mut().filter(|r| r.result.is_none()) {
            let cap = ((f64::from(run.settings.matches) * self.max_share).ceil() as u32).max(1);
            let mut held = run.by_worker.get(worker).copied().unwrap_or(0)
                + self.out.values().filter(|o| o.run == run.candidate && o.worker == worker).count() as u32;
            while leases.len() < n {
                if held >= cap {
                    if !run.waiting_said && (run.next < run.settings.matches || !run.requeue.is_empty()) {
                        run.waiting_said = true;
                        tracing::info!(
                            candidate = run.candidate,
                            worker = worker.split_once('.').map_or(worker, |(public, _)| public),
                            cap,
                            "this worker has played its share of the candidate's gating; the rest waits for other workers (leases.max_gate_share)"
                        );
                    }
                    break;
                }
                let index = match run.requeue.pop_front() {
                    Some(i) => i,
                    None if run.next < run.settings.matches => {
                        run.next += 1;
                        run.next - 1
                    }
                    None => break,
                };
                let id = self.next_id;
                self.next_id += 1;
                let seed = engine::derive_seed(run.settings.seed, u64::from(index));
                let start = games::random_opening(run.kind, &self.options, run.settings.opening_plies, seed);
                self.out.insert(
                    id,
                    Out {
                        run: run.candidate,
                        index,
                        worker: worker.to_string(),
                        expires: now + self.ttl,
                        start: start.clone(),
                        seed,
                    },
                );
                held += 1;
                leases.push(pb::Lease {
                    lease_id: id,
                    game_kind: run.kind.name().into(),
                    start_state: start,
                    seed,
                    settings: None,
                    model_version: run.candidate,
                    ttl_ms,
                    source: pb::PositionSource::RandomOpening as i32,
                    evaluation: Some(zeroplay_proto::convert::evaluation_match(
                        run.candidate,
                        run.opponent,
                        index,
                        &run.settings,
                    )),
                    check: None,
                });
            }
        }
        leases
    }

    /// Renews `worker`'s evaluation leases among `ids`; returns those it does not hold.
    pub fn renew(&mut self, worker: &str, ids: &[u64], now: Instant) -> Vec<u64> {
        let mut unknown = Vec::new();
        for id in ids {
            match self.out.get_mut(id) {
                Some(o) if o.worker == worker => o.expires = now + self.ttl,
                _ => unknown.push(*id),
            }
        }
        unknown
    }

    fn requeue(&mut self, id: u64) {
        if let Some(o) = self.out.remove(&id)
            && let Some(run) = self.runs.get_mut(&o.run)
            && !run.points.contains_key(&o.index)
        {
            run.requeue.push_back(o.index);
        }
    }

    /// Hands `worker`'s leases among `ids` back; returns how many were its.
    pub fn release(&mut self, worker: &str, ids: &[u64]) -> usize {
        let mine: Vec<u64> =
            ids.iter().copied().filter(|id| self.out.get(id).is_some_and(|o| o.worker == worker)).collect();
        mine.iter().for_each(|&id| self.requeue(id));
        mine.len()
    }

    /// Requeues expired leases; returns how many.
    pub fn sweep(&mut self, now: Instant) -> usize {
        let expired: Vec<u64> =
            self.out.iter().filter(|(_, o)| o.expires <= now).map(|(id, _)| *id).collect();
        expired.iter().for_each(|&id| self.requeue(id));
        expired.len()
    }

    /// Records a match `worker` played under lease `id`: its `games` are replayed, and only
    /// if they give the reported `points` is the match counted.
    ///
    /// # Errors
    /// [`ReportError::NotFound`] if the lease is unknown or not `worker`'s;
    /// [`ReportError::Invalid`] if the points are not 0, ½ or 1, or the games do not replay to
    /// them (the match is then handed out again, to be played by another worker).
    pub fn report(
        &mut self,
        worker: &str,
        id: u64,
        points: f64,
        games: &[pb::MatchGame],
    ) -> Result<Reported, ReportError> {
        if ![0.0, 0.5, 1.0].contains(&points) {
            return Err(ReportError::Invalid(format!("candidate_points {points}: must be 0, 0.5 or 1")));
        }
        let o = match self.out.get(&id) {
            Some(o) if o.worker == worker => o,
            Some(_) => {
                return Err(ReportError::NotFound(format!("evaluation lease {id} is another worker's")));
            }
            None => {
                return Err(ReportError::NotFound(format!(
                    "unknown evaluation lease {id} (expired, or from before a restart)"
                )));
            }
        };
        let Some(run) = self.runs.get(&o.run) else {
            self.out.remove(&id);
            return Ok(Reported::Ignored);
        };
        let replayed = games::replay_match(run.kind, &o.start, o.seed, games, self.max_moves)
            .map_err(|e| e.to_string())
            .and_then(|p| {
                if p == points {
                    Ok(p)
                } else {
                    Err(format!("candidate_points {points}, but the games replay to {p}"))
                }
            });
        if let Err(e) = replayed {
            let what = format!("match {} of candidate {}: {e}", o.index, o.run);
            // Not counted: the match goes out again; this worker's share is unchanged.
            self.requeue(id);
            return Err(ReportError::Invalid(what));
        }
        let o = self.out.remove(&id).expect("present");
        let run = self.runs.get_mut(&o.run).expect("present");
        if run.result.is_some() || run.points.contains_key(&o.index) {
            return Ok(Reported::Ignored);
        }
        run.points.insert(o.index, points);
        *run.by_worker.entry(o.worker).or_default() += 1;
        let pts: Vec<f64> = run.points.values().copied().collect();
        match run.settings.decide(&pts) {
            Some((promoted, reason)) => {
                let r = GateResult::new(&pts, promoted, reason);
                run.result = Some(r.clone());
                run.requeue.clear();
                // Matches still out are no longer needed: forget them (their reports are ignored
                // and the workers' heartbeats learn they are gone).
                let candidate = run.candidate;
                self.out.retain(|_, o| o.run != candidate);
                Ok(Reported::Decided(candidate, r))
            }
            None => Ok(Reported::Counted),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::Game;
    use engine::battlenumber::BattleNumber;

    fn gating(matches: u32, share: f64) -> Gating {
        let mut g = Gating::new(Duration::from_millis(100), GameOptions::default(), share, 4096);
        let s =
            GateSettings { rule: engine::gating::GateRule::Threshold, matches, ..GateSettings::default() };
        g.start(5, 3, GameKind::BattleNumber, s);
        g
    }

    /// The match a lease asks for, played by two random agents: the candidate's points and
    /// the games as a report carries them.
    fn play(lease: &pb::Lease) -> (f64, Vec<pb::MatchGame>) {
        let spec: engine::spec::AgentSpec = "random".parse().unwrap();
        let (mut a, mut b) = (spec.build::<BattleNumber>(), spec.build::<BattleNumber>());
        let start = BattleNumber::decode(&lease.start_state).unwrap();
        let m = engine::arena::play_match_from(&start, a.as_mut(), b.as_mut(), lease.seed);
        let games = m
            .games
            .iter()
            .map(|g| pb::MatchGame { actions: g.actions.iter().map(|a| a.to_string()).collect() });
        (m.points_a, games.collect())
    }

    fn honest(g: &mut Gating, worker: &str, lease: &pb::Lease) -> Result<Reported, ReportError> {
        let (points, games) = play(lease);
        g.report(worker, lease.lease_id, points, &games)
    }

    #[test]
    fn hands_out_each_match_once_and_decides_by_the_replayed_results() {
        let mut g = gating(4, 1.0);
        let now = Instant::now();
        let a = g.grant("w1", 3, now, 100);
        let b = g.grant("w2", 3, now, 100);
        assert_eq!((a.len(), b.len()), (3, 1), "never more than the run needs");
        assert!(g.grant("w3", 3, now, 100).is_empty());
        let idx: Vec<u32> = a.iter().chain(&b).map(|l| l.evaluation.as_ref().unwrap().match_index).collect();
        assert_eq!(idx, [0, 1, 2, 3]);
        assert!(a.iter().chain(&b).all(|l| is_eval_lease(l.lease_id)));
        // Same opening for the same match index as the trainer's own gating would use.
        let s = GateSettings::default();
        let want = games::random_opening(
            GameKind::BattleNumber,
            &GameOptions::default(),
            s.opening_plies,
            engine::derive_seed(s.seed, 1),
        );
        assert_eq!(a[1].start_state, want);

        let (p0, games0) = play(&a[0]);
        assert!(matches!(g.report("w2", a[0].lease_id, p0, &games0), Err(ReportError::NotFound(_))));
        assert!(matches!(g.report("w1", a[0].lease_id, 0.3, &games0), Err(ReportError::Invalid(_))));
        assert_eq!(g.report("w1", a[0].lease_id, p0, &games0), Ok(Reported::Counted));
        assert!(matches!(g.report("w1", a[0].lease_id, p0, &games0), Err(ReportError::NotFound(_))));
        let mut points = vec![p0];
        for (w, l) in [("w1", &a[1]), ("w1", &a[2]), ("w2", &b[0])] {
            let (p, games) = play(l);
            points.push(p);
            let r = g.report(w, l.lease_id, p, &games).unwrap();
            if points.len() < 4 {
                assert_eq!(r, Reported::Counted);
            } else {
                let Reported::Decided(5, r) = r else { panic!("{r:?}") };
                let (promoted, _) = g.run(5).unwrap().settings.decide(&points).unwrap();
                assert_eq!((r.promoted, r.matches, r.points), (promoted, 4, points.iter().sum()));
            }
        }
        assert_eq!(g.run(5).unwrap().status().opponent_version, 3);
    }

    #[test]
    fn a_report_its_games_do_not_bear_out_is_refused_and_the_match_goes_out_again() {
        let mut g = gating(4, 1.0);
        let now = Instant::now();
        let leases = g.grant("liar", 4, now, 100);
        for l in &leases {
            let (p, games) = play(l);
            // Claims the win whatever happened; where it did win, the games are cut short.
            let forged: Vec<pb::MatchGame> = if p == 1.0 {
                let mut g = games.clone();
                g[0].actions.pop();
                g
            } else {
                games
            };
            let e = g.report("liar", l.lease_id, 1.0, &forged).unwrap_err();
            assert!(matches!(e, ReportError::Invalid(_)), "{e:?}");
            assert!(matches!(g.report("liar", l.lease_id, 1.0, &[]), Err(ReportError::NotFound(_))));
        }
        assert_eq!(g.run(5).unwrap().reported(), 0, "nothing counted");
        // Every match goes out again, and honest reports decide the run.
        let again = g.grant("honest", 4, now, 100);
        assert_eq!(again.len(), 4);
        let last = again.iter().map(|l| honest(&mut g, "honest", l).unwrap()).last().unwrap();
        assert!(matches!(last, Reported::Decided(5, _)), "{last:?}");
    }

    #[test]
    fn one_worker_plays_at_most_its_share_of_a_gate() {
        let mut g = gating(4, 0.5);
        let now = Instant::now();
        let a = g.grant("w1", 4, now, 100);
        assert_eq!(a.len(), 2, "half of 4");
        for l in &a {
            assert_eq!(honest(&mut g, "w1", l), Ok(Reported::Counted));
        }
        assert!(g.grant("w1", 4, now, 100).is_empty(), "its share is played");
        let b = g.grant("w2", 4, now, 100);
        assert_eq!(b.len(), 2);
        // Handed back, a match goes to whoever has share left: not w1.
        assert_eq!(g.release("w2", &[b[1].lease_id]), 1);
        assert!(g.grant("w1", 4, now, 100).is_empty());
        assert_eq!(g.grant("w3", 4, now, 100).len(), 1);
        // At least one match each, however small the share.
        let mut tiny = gating(4, 0.01);
        assert_eq!(tiny.grant("w1", 4, now, 100).len(), 1);
    }

    #[test]
    fn released_and_expired_matches_go_out_again_and_late_reports_are_refused() {
        let mut g = gating(2, 1.0);
        let t0 = Instant::now();
        let a = g.grant("w1", 2, t0, 100);
        assert_eq!(g.release("w1", &[a[0].lease_id, 12345]), 1);
        let b = g.grant("w2", 5, t0, 100);
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].evaluation.as_ref().unwrap().match_index, 0, "the released match");
        assert!(g.renew("w1", &[a[1].lease_id, a[0].lease_id], t0).contains(&a[0].lease_id));
        assert_eq!(g.sweep(t0 + Duration::from_millis(150)), 2);
        assert!(matches!(honest(&mut g, "w1", &a[1]), Err(ReportError::NotFound(_))), "expired");
        let c = g.grant("w3", 5, t0, 100);
        let mut idx: Vec<u32> = c.iter().map(|l| l.evaluation.as_ref().unwrap().match_index).collect();
        idx.sort_unstable();
        assert_eq!(idx, [0, 1]);
    }

    #[test]
    fn a_decided_run_forgets_its_outstanding_matches() {
        let mut g = Gating::new(Duration::from_secs(10), GameOptions::default(), 1.0, 4096);
        let s = GateSettings {
            rule: engine::gating::GateRule::Sprt,
            matches: 50,
            elo1: 400.0,
            ..GateSettings::default()
        };
        g.start(2, 0, GameKind::BattleNumber, s);
        let now = Instant::now();
        let leases = g.grant("w", 50, now, 100);
        let mut decided = None;
        for l in &leases {
            match honest(&mut g, "w", l) {
                Ok(Reported::Decided(_, r)) => {
                    decided = Some(r);
                    break;
                }
                Ok(Reported::Counted) => {}
                other => panic!("{other:?}"),
            }
        }
        let r = decided.expect("SPRT decides two random players' run early (elo1 = 400)");
        assert!(r.matches < 50, "{r:?}");
        assert_eq!(g.active(), 0);
        assert!(g.grant("w", 5, now, 100).is_empty());
    }
}
