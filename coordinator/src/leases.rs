//! Start positions and their leases.
//!
//! [`Sources`] draws a start position per lease from the configured mix (initial position,
//! random opening, fork of an earlier game, the user's positions file). [`Leases`] tracks who
//! plays what: a lease not renewed by a heartbeat within the TTL, or released by its worker,
//! goes back in a queue and is handed out again before any new position.

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::time::{Duration, Instant};

use rand::RngExt;
use zeroplay_proto::v1::PositionSource;

use crate::config::{CoordinatorConfig, GameConfig};
use crate::games::{self, GameKind};
use crate::store::LeaseRow;

const FORK_RESERVOIR: usize = 4096;

/// Old lease ids remembered for positions handed out again (a game played under one still
/// counts): the newest this many, so a worker that leases without playing cannot grow the
/// table without end.
const RENAMED_KEPT: usize = 65_536;

/// A positions file that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("positions file {path}: {}{reason}", if *line == 0 { String::new() } else { format!("line {line}: ") })]
pub struct PositionsFileError {
    /// The file.
    pub path: String,
    /// 1-based line number (0: the file itself).
    pub line: usize,
    /// What is wrong.
    pub reason: String,
}

/// Reads a positions file: JSON lines `{"game": "...", "state_hex": "..."}`; blank lines and
/// lines starting with `#` are skipped. Every position is checked with the engine.
///
/// # Errors
/// [`PositionsFileError`] naming the first bad line.
pub fn read_positions_file(path: &Path, kind: GameKind) -> Result<Vec<Vec<u8>>, PositionsFileError> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Line {
        game: String,
        state_hex: String,
    }
    let err = |line, reason: String| PositionsFileError { path: path.display().to_string(), line, reason };
    let text = std::fs::read_to_string(path).map_err(|e| err(0, format!("cannot read it: {e}")))?;
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let l = l.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let parsed: Line = serde_json::from_str(l).map_err(|e| err(i + 1, e.to_string()))?;
        if parsed.game != kind.name() {
            continue;
        }
        let bytes = from_hex(&parsed.state_hex).ok_or_else(|| err(i + 1, "state_hex is not hex".into()))?;
        games::check_position(kind, &bytes).map_err(|e| err(i + 1, e))?;
        out.push(bytes);
    }
    if out.is_empty() {
        return Err(err(0, format!("no {} positions", kind.name())));
    }
    Ok(out)
}

/// Lowercase hex of bytes.
pub fn to_hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn from_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

struct GameSource {
    kind: GameKind,
    cfg: GameConfig,
    options: crate::games::GameOptions,
    user: Vec<Vec<u8>>,
    forks: Vec<Vec<u8>>,
}

/// Draws start positions.
pub struct Sources {
    games: Vec<GameSource>,
    seed: u64,
    rng: engine::Rng,
}

impl Sources {
    /// Builds the sources of a configuration (reading users' positions files).
    ///
    /// # Errors
    /// [`PositionsFileError`] for a bad positions file.
    pub fn new(cfg: &CoordinatorConfig) -> Result<Sources, PositionsFileError> {
        let mut games = Vec::new();
        for (&kind, g) in &cfg.games {
            let user = match &g.sources.user_file {
                Some(p) if g.sources.user_file_weight > 0.0 => read_positions_file(p, kind)?,
                _ => Vec::new(),
            };
            games.push(GameSource {
                kind,
                cfg: g.clone(),
                options: cfg.options.clone(),
                user,
                forks: Vec::new(),
            });
        }
        Ok(Sources { games, seed: cfg.seed, rng: engine::rng_from_seed(cfg.seed) })
    }

    /// The configuration of a game kind.
    pub fn game_config(&self, kind: GameKind) -> Option<&GameConfig> {
        self.games.iter().find(|g| g.kind == kind).map(|g| &g.cfg)
    }

    fn pick(rng: &mut engine::Rng, weights: &[f64]) -> usize {
        let total: f64 = weights.iter().sum();
        let mut x = rng.random::<f64>() * total;
        for (i, w) in weights.iter().enumerate() {
            if x < *w {
                return i;
            }
            x -= w;
        }
        weights.iter().rposition(|w| *w > 0.0).unwrap_or(0)
    }

    /// A new start position for lease `lease_id`.
    pub fn draw(&mut self, lease_id: u64) -> LeaseRow {
        let weights: Vec<f64> = self.games.iter().map(|g| g.cfg.weight).collect();
        let gi = Self::pick(&mut self.rng, &weights);
        let g = &self.games[gi];
        let s = &g.cfg.sources;
        let fork_w = if g.forks.is_empty() { 0.0 } else { s.fork };
        let user_w = if g.user.is_empty() { 0.0 } else { s.user_file_weight };
        let mut w = [s.initial, s.random_opening, fork_w, user_w];
        if w.iter().sum::<f64>() <= 0.0 {
            w[0] = 1.0;
        }
        let seed = engine::derive_seed(self.seed, lease_id);
        let (state, source) = match Self::pick(&mut self.rng, &w) {
            1 => {
                let plies = self.rng.random_range(s.random_opening_min_plies..=s.random_opening_max_plies);
                (
                    games::random_opening(g.kind, &g.options, plies, seed ^ 0x5eed),
                    PositionSource::RandomOpening,
                )
            }
            2 => (g.forks[self.rng.random_range(0..g.forks.len())].clone(), PositionSource::Fork),
            3 => (g.user[self.rng.random_range(0..g.user.len())].clone(), PositionSource::UserFile),
            _ => (games::initial_state(g.kind, &g.options), PositionSource::Initial),
        };
        LeaseRow { game_kind: g.kind, start_state: state, seed, source: source as i32 }
    }

    /// Offers a position of a stored game for later forks (kept in a bounded reservoir).
    pub fn offer_fork(&mut self, kind: GameKind, state: Vec<u8>) {
        if games::check_position(kind, &state).is_err() {
            return;
        }
        let Some(g) = self.games.iter_mut().find(|g| g.kind == kind) else { return };
        if g.forks.len() < FORK_RESERVOIR {
            g.forks.push(state);
        } else {
            let i = self.rng.random_range(0..FORK_RESERVOIR);
            g.forks[i] = state;
        }
    }
}

struct Active {
    row: LeaseRow,
    worker: String,
    expires: Instant,
}

/// Where a lease stands ([`Leases::lookup`]).
#[derive(Clone, Debug, PartialEq)]
pub enum LeaseState {
    /// Out, held by `worker`.
    Active {
        /// Its position.
        row: LeaseRow,
        /// The worker holding it.
        worker: String,
    },
    /// Expired, released, or recovered at a restart: waiting to be handed out again.
    Queued(LeaseRow),
    /// Its game is stored.
    Finished,
    /// Never handed out (or 0, "no lease").
    Never,
}

/// Leases handed out, and those waiting to be handed out again.
pub struct Leases {
    active: HashMap<u64, Active>,
    /// (old lease id, position) to hand out again.
    requeue: VecDeque<(u64, LeaseRow)>,
    /// Old lease id → the id its position was handed out again under (since start).
    renamed: HashMap<u64, u64>,
    /// Lease id → the worker it was handed to (since start, until finished).
    granted_to: HashMap<u64, String>,
    /// The old ids in `renamed`, oldest first (at most [`RENAMED_KEPT`]).
    renamed_order: VecDeque<u64>,
    /// Active leases per worker.
    held: HashMap<String, usize>,
    /// Most active leases one worker holds.
    max_per_worker: usize,
    next_id: u64,
    ttl: Duration,
    /// Leases that expired.
    pub expired: u64,
    /// New positions drawn so far.
    pub drawn: u64,
    /// Most new positions to draw.
    pub max_drawn: Option<u64>,
}

/// What a grant changes in the database.
pub struct Grant {
    /// New leases.
    pub granted: Vec<(u64, LeaseRow)>,
    /// Old lease ids they replace.
    pub replaced: Vec<u64>,
    /// Next lease id to store.
    pub next_id: u64,
    /// New positions drawn so far, to store.
    pub drawn: u64,
}

impl Leases {
    /// A table with leases recovered from the database, all queued to be handed out again.
    pub fn new(
        ttl: Duration,
        stored: Vec<(u64, LeaseRow)>,
        next_id: u64,
        drawn: u64,
        max_drawn: Option<u64>,
    ) -> Leases {
        let max_id = stored.iter().map(|(id, _)| *id).max().unwrap_or(0);
        Leases {
            active: HashMap::new(),
            requeue: stored.into_iter().collect(),
            renamed: HashMap::new(),
            granted_to: HashMap::new(),
            renamed_order: VecDeque::new(),
            held: HashMap::new(),
            max_per_worker: usize::MAX,
            next_id: next_id.max(max_id + 1).max(1),
            ttl,
            expired: 0,
            drawn,
            max_drawn,
        }
    }

    /// This table with at most `n` active leases per worker.
    pub fn with_max_per_worker(mut self, n: usize) -> Leases {
        self.max_per_worker = n.max(1);
        self
    }

    /// Active leases `worker` holds.
    pub fn held_by(&self, worker: &str) -> usize {
        self.held.get(worker).copied().unwrap_or(0)
    }

    /// Old lease ids remembered for positions handed out again.
    pub fn remembered(&self) -> usize {
        self.renamed.len() + self.granted_to.len()
    }

    fn take_active(&mut self, id: u64) -> Option<Active> {
        let a = self.active.remove(&id)?;
        if let Some(n) = self.held.get_mut(&a.worker) {
            *n -= 1;
            if *n == 0 {
                self.held.remove(&a.worker);
            }
        }
        Some(a)
    }

    /// Positions waiting to be handed out again.
    pub fn queued(&self) -> usize {
        self.requeue.len()
    }

    /// Leases out now.
    pub fn active(&self) -> usize {
        self.active.len()
    }

    /// Grants up to `n` leases to `worker` (fewer where it would hold more than its cap):
    /// requeued positions first, then new ones.
    pub fn grant(&mut self, worker: &str, n: usize, sources: &mut Sources, now: Instant) -> Grant {
        let mut granted = Vec::new();
        let mut replaced = Vec::new();
        let n = n.min(self.max_per_worker.saturating_sub(self.held_by(worker)));
        for _ in 0..n {
            let id = self.next_id;
            let row = match self.requeue.pop_front() {
                Some((old, row)) => {
                    replaced.push(old);
                    self.renamed.insert(old, id);
                    self.renamed_order.push_back(old);
                    if self.renamed_order.len() > RENAMED_KEPT
                        && let Some(gone) = self.renamed_order.pop_front()
                    {
                        self.renamed.remove(&gone);
                        self.granted_to.remove(&gone);
                    }
                    row
                }
                None if self.max_drawn.is_some_and(|m| self.drawn >= m) => break,
                None => {
                    self.drawn += 1;
                    sources.draw(id)
                }
            };
            self.next_id += 1;
            self.granted_to.insert(id, worker.to_string());
            *self.held.entry(worker.to_string()).or_default() += 1;
            self.active
                .insert(id, Active { row: row.clone(), worker: worker.to_string(), expires: now + self.ttl });
            granted.push((id, row));
        }
        Grant { granted, replaced, next_id: self.next_id, drawn: self.drawn }
    }

    /// Renews `worker`'s leases; returns the ids it does not hold.
    pub fn renew(&mut self, worker: &str, ids: &[u64], now: Instant) -> Vec<u64> {
        let mut unknown = Vec::new();
        for id in ids {
            match self.active.get_mut(id) {
                Some(a) if a.worker == worker => a.expires = now + self.ttl,
                _ => unknown.push(*id),
            }
        }
        unknown
    }

    /// Gives leases back to be handed out again; returns how many were `worker`'s.
    pub fn release(&mut self, worker: &str, ids: &[u64]) -> usize {
        let mut n = 0;
        for id in ids {
            if self.active.get(id).is_some_and(|a| a.worker == worker) {
                let a = self.take_active(*id).expect("checked");
                self.requeue.push_back((*id, a.row));
                n += 1;
            }
        }
        n
    }

    /// Where lease `id` stands, for a game submitted under it, and the id it stands under
    /// now: a position handed out again has a new lease id, and a game played under the old
    /// one counts for the new one.
    pub fn lookup(&self, id: u64) -> (u64, LeaseState) {
        let mut id = id;
        while let Some(&next) = self.renamed.get(&id) {
            id = next;
        }
        (id, self.state_of(id))
    }

    /// The worker lease `id` itself was handed to (since start, until its position is
    /// finished): a worker whose lease expired while it played may still bring that game.
    pub fn granted_to(&self, id: u64) -> Option<&str> {
        self.granted_to.get(&id).map(String::as_str)
    }

    fn state_of(&self, id: u64) -> LeaseState {
        if let Some(a) = self.active.get(&id) {
            return LeaseState::Active { row: a.row.clone(), worker: a.worker.clone() };
        }
        if let Some((_, row)) = self.requeue.iter().find(|(old, _)| *old == id) {
            return LeaseState::Queued(row.clone());
        }
        // Every id below `next_id` was handed out; one neither out nor queued has its game.
        if id != 0 && id < self.next_id { LeaseState::Finished } else { LeaseState::Never }
    }

    /// Marks the position of lease `id` finished: `id` and every id it was handed out again
    /// under since (a game stored under an old id finishes the position's current lease,
    /// even one handed out again while the game was being checked). Returns those ids,
    /// `id` first.
    pub fn finish_position(&mut self, id: u64) -> Vec<u64> {
        let mut id = id;
        let mut out = Vec::new();
        loop {
            let next = self.renamed.get(&id).copied();
            self.finish(id);
            out.push(id);
            match next {
                Some(n) if !out.contains(&n) => id = n,
                _ => return out,
            }
        }
    }

    /// Marks a lease finished (its game is stored).
    pub fn finish(&mut self, id: u64) {
        self.take_active(id);
        self.granted_to.remove(&id);
        self.requeue.retain(|(old, _)| *old != id);
        if !self.renamed.is_empty() {
            // Old ids of this position now resolve to "finished" on their own.
            self.renamed.retain(|_, new| *new != id);
        }
    }

    /// Requeues expired leases; returns how many.
    pub fn sweep(&mut self, now: Instant) -> usize {
        let expired: Vec<u64> =
            self.active.iter().filter(|(_, a)| a.expires <= now).map(|(id, _)| *id).collect();
        for id in &expired {
            let a = self.take_active(*id).expect("listed");
            self.requeue.push_back((*id, a.row));
        }
        self.expired += expired.len() as u64;
        expired.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_game_under_an_old_lease_id_counts_for_its_position_handed_out_again() {
        let cfg = CoordinatorConfig::default();
        let mut sources = Sources::new(&cfg).unwrap();
        let mut leases = Leases::new(Duration::from_millis(100), vec![], 1, 0, None);
        let t0 = Instant::now();
        let old = leases.grant("w1", 1, &mut sources, t0).granted[0].clone();
        assert!(
            matches!(leases.lookup(old.0), (id, LeaseState::Active { ref worker, .. }) if id == old.0 && worker == "w1")
        );
        assert_eq!(leases.sweep(t0 + Duration::from_millis(200)), 1);
        assert_eq!(leases.lookup(old.0), (old.0, LeaseState::Queued(old.1.clone())));
        // Handed out again to w2 under a new id: the old id resolves to it.
        let new = leases.grant("w2", 1, &mut sources, t0).granted[0].clone();
        assert_eq!(new.1, old.1);
        assert_eq!(
            leases.lookup(old.0),
            (new.0, LeaseState::Active { row: old.1.clone(), worker: "w2".into() })
        );
        leases.finish_position(old.0);
        assert_eq!(leases.lookup(old.0), (old.0, LeaseState::Finished));
        assert_eq!(leases.lookup(new.0), (new.0, LeaseState::Finished));
        assert_eq!(leases.lookup(0).1, LeaseState::Never);
        assert_eq!(leases.lookup(1_000).1, LeaseState::Never);
    }

    #[test]
    fn expired_and_released_leases_are_handed_out_again_first() {
        let cfg = CoordinatorConfig::default();
        let mut sources = Sources::new(&cfg).unwrap();
        let mut leases = Leases::new(Duration::from_millis(100), vec![], 1, 0, None);
        let t0 = Instant::now();
        let g = leases.grant("w1", 3, &mut sources, t0);
        assert_eq!(g.granted.len(), 3);
        assert!(g.replaced.is_empty());
        let ids: Vec<u64> = g.granted.iter().map(|x| x.0).collect();
        // w1 renews the first; the others expire.
        assert_eq!(leases.renew("w1", &ids[..1], t0 + Duration::from_millis(60)), Vec::<u64>::new());
        assert_eq!(leases.renew("w2", &ids[..1], t0), vec![ids[0]]);
        assert_eq!(leases.sweep(t0 + Duration::from_millis(120)), 2);
        assert_eq!(leases.active(), 1);
        assert_eq!(leases.release("w1", &ids[..1]), 1);
        let g2 = leases.grant("w2", 4, &mut sources, t0);
        assert_eq!(g2.replaced.len(), 3, "the three returned positions come back first");
        let again: Vec<&LeaseRow> = g2.granted.iter().take(3).map(|x| &x.1).collect();
        for (old, row) in g.granted.iter().skip(1).chain(g.granted.iter().take(1)) {
            assert!(again.contains(&row), "position of lease {old} handed out again");
        }
    }

    #[test]
    fn max_leases_stops_drawing_but_requeued_positions_still_go_out() {
        let mut sources = Sources::new(&CoordinatorConfig::default()).unwrap();
        let mut leases = Leases::new(Duration::from_millis(100), vec![], 1, 0, Some(3));
        let t0 = Instant::now();
        let g = leases.grant("w", 5, &mut sources, t0);
        assert_eq!(g.granted.len(), 3);
        assert!(leases.grant("w", 5, &mut sources, t0).granted.is_empty());
        leases.release("w", &[g.granted[0].0]);
        assert_eq!(leases.queued(), 1);
        assert_eq!(leases.grant("w", 5, &mut sources, t0).granted.len(), 1);
        assert_eq!(leases.queued(), 0);
    }

    #[test]
    fn a_worker_holds_at_most_its_cap_and_gets_more_as_it_finishes() {
        let mut sources = Sources::new(&CoordinatorConfig::default()).unwrap();
        let mut leases = Leases::new(Duration::from_millis(100), vec![], 1, 0, None).with_max_per_worker(3);
        let t0 = Instant::now();
        let g = leases.grant("w", 5, &mut sources, t0);
        assert_eq!(g.granted.len(), 3);
        assert!(leases.grant("w", 5, &mut sources, t0).granted.is_empty());
        assert_eq!(leases.grant("v", 5, &mut sources, t0).granted.len(), 3, "another worker has its own cap");
        leases.finish_position(g.granted[0].0);
        leases.release("w", &[g.granted[1].0]);
        assert_eq!(leases.held_by("w"), 1);
        assert_eq!(leases.grant("w", 5, &mut sources, t0).granted.len(), 2);
        assert_eq!(leases.sweep(t0 + Duration::from_millis(200)), 6);
        assert_eq!((leases.held_by("w"), leases.held_by("v"), leases.active()), (0, 0, 0));
        // Positions handed out again over and over remember a bounded number of old ids.
        for round in 0..(RENAMED_KEPT / 3 + 10) as u64 {
            let t = t0 + Duration::from_millis(300 * round);
            leases.grant("w", 3, &mut sources, t);
            leases.sweep(t + Duration::from_millis(200));
        }
        assert!(leases.remembered() <= 2 * RENAMED_KEPT + 16, "{}", leases.remembered());
        assert_eq!(leases.drawn, 7, "expired positions were handed out again, not new ones drawn");
    }

    #[test]
    fn sources_draw_valid_positions_of_every_kind() {
        let mut cfg = CoordinatorConfig::default();
        cfg.games.get_mut(&GameKind::BattleNumber).unwrap().sources.fork = 1.0;
        let mut sources = Sources::new(&cfg).unwrap();
        let mut seen = std::collections::HashSet::new();
        for id in 1..200 {
            let row = sources.draw(id);
            games::check_position(GameKind::BattleNumber, &row.start_state).unwrap();
            seen.insert(row.source);
            if id == 50 {
                sources.offer_fork(GameKind::BattleNumber, row.start_state.clone());
            }
        }
        assert!(seen.len() >= 3, "{seen:?}");
    }

    #[test]
    fn positions_file_is_checked_line_by_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pos.jsonl");
        let good = to_hex(&games::initial_state(GameKind::BattleNumber, &Default::default()));
        std::fs::write(&p, format!("# comment\n{{\"game\":\"battlenumber\",\"state_hex\":\"{good}\"}}\n"))
            .unwrap();
        assert_eq!(read_positions_file(&p, GameKind::BattleNumber).unwrap().len(), 1);
        std::fs::write(&p, format!("{{\"game\":\"battlenumber\",\"state_hex\":\"{good}\"}}\n{{\"game\":\"battlenumber\",\"state_hex\":\"00ff\"}}\n")).unwrap();
        let e = read_positions_file(&p, GameKind::BattleNumber).unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        assert!(e.to_string().contains("line 2: "), "{e}");
        // A missing file is the file's fault, not a line's.
        let e = read_positions_file(&dir.path().join("none.jsonl"), GameKind::BattleNumber).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("none.jsonl: cannot read it") && !text.contains("line 0"), "{text}");
    }
}
