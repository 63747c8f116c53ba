//! Matches between agents, and Elo statistics.
//!
//! A match is two games with the first player swapped: agent A sits at [`Seat::First`] in
//! game 1 and at [`Seat::Second`] in game 2. The two games' scores are added; a decisive result
//! (a player without a legal move) decides the match at once when the game says so
//! ([`Game::DECISIVE_ENDS_MATCH`]). Everything here is deterministic given the match seed
//! (time-limited agents aside), so any match can be replayed.

use crate::Rng;
use crate::agent::Agent;
use crate::game::{Actor, Game, Outcome, Seat, next_chance, sample_chance};

/// The seed stream of a match's hidden deal (derived from the match seed).
pub const DEAL_STREAM: u64 = 0xDEA1;

/// One finished game.
#[derive(Clone, Debug)]
pub struct GameRecord<G: Game> {
    /// Every action, chance outcomes included, from the start position.
    pub actions: Vec<G::Action>,
    /// The result.
    pub outcome: Outcome,
}

/// One finished match, from agent A's view.
#[derive(Clone, Debug)]
pub struct MatchRecord<G: Game> {
    /// The games played (one if game 1 decided the match).
    pub games: Vec<GameRecord<G>>,
    /// A's total score over the games (A's score in each game, seats swapped).
    pub score_a: i32,
    /// 1 if A won the match, ½ for a draw, 0 if A lost.
    pub points_a: f64,
}

/// Plays one game from `start`; `agents[0]` sits at the first seat. Hidden chance (Banqi's
/// face-down pieces) follows the deal seeded by `deal` ([`Game::dealt_outcome`]).
pub fn play_game<G: Game>(
    start: &G,
    agents: &mut [&mut dyn Agent<G>; 2],
    deal: u64,
    rng: &mut Rng,
) -> GameRecord<G> {
    let mut state = start.clone();
    let mut actions = Vec::new();
    let mut chances = Vec::new();
    while state.outcome().is_none() {
        let a = match state.to_move() {
            Actor::Chance => next_chance(&state, start, deal, &mut chances, rng),
            Actor::Player(seat) => agents[seat.index()].choose(&state, rng, &mut |_| {}),
        };
        for agent in agents.iter_mut() {
            agent.observe(&state, a);
        }
        state.play(a).expect("agents choose legal actions");
        actions.push(a);
    }
    GameRecord { actions, outcome: state.outcome().expect("loop ends at the end") }
}

/// Plays a two-game match between `a` and `b` with options `opts`, seeded by `seed`.
pub fn play_match<G: Game>(
    opts: &G::Options,
    a: &mut dyn Agent<G>,
    b: &mut dyn Agent<G>,
    seed: u64,
) -> MatchRecord<G> {
    play_match_from(&G::new_game(opts), a, b, seed)
}

/// Plays a two-game match between `a` and `b` from `start` (both games from the same start,
/// seats swapped), seeded by `seed`.
pub fn play_match_from<G: Game>(
    start: &G,
    a: &mut dyn Agent<G>,
    b: &mut dyn Agent<G>,
    seed: u64,
) -> MatchRecord<G> {
    let mut rng = crate::rng_from_seed(seed);
    // Both games share the hidden deal, as duplicate bridge deals the same cards twice.
    let deal = crate::derive_seed(seed, DEAL_STREAM);
    let start = start.clone();
    let mut games = Vec::new();
    let mut score_a = 0;
    let mut decided = None;
    for game in 0..2 {
        let record = if game == 0 {
            play_game(&start, &mut [&mut *a, &mut *b], deal, &mut rng)
        } else {
            play_game(&start, &mut [&mut *b, &mut *a], deal, &mut rng)
        };
        decided = tally::<G>(game, &record.outcome, &mut score_a);
        games.push(record);
        if decided.is_some() {
            break;
        }
    }
    let points_a = decided.unwrap_or_else(|| points_from_score(score_a));
    MatchRecord { games, score_a, points_a }
}

/// Adds game `game`'s (0 or 1) result to A's `score_a`; A's match points if it decides the
/// match ([`Game::DECISIVE_ENDS_MATCH`]). The one rule for played and replayed matches.
fn tally<G: Game>(game: usize, outcome: &Outcome, score_a: &mut i32) -> Option<f64> {
    let a_seat = if game == 0 { Seat::First } else { Seat::Second };
    *score_a += outcome.difference(a_seat);
    match outcome.decisive {
        Some(w) if G::DECISIVE_ENDS_MATCH => Some(if w == a_seat { 1.0 } else { 0.0 }),
        _ => None,
    }
}

/// Why a reported match does not replay ([`replay_match`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    /// The number of games is not what the match's results call for.
    #[error("{got} games reported, but the match {expected}")]
    GameCount {
        /// Games reported.
        got: usize,
        /// What the match needed.
        expected: &'static str,
    },
    /// A game breaks the rules, or its hidden chance is not the match's deal.
    #[error("game {game}, action {ply}: {reason}")]
    Illegal {
        /// 1 or 2.
        game: usize,
        /// Index into that game's actions.
        ply: usize,
        /// What is wrong.
        reason: String,
    },
    /// A game stops before its end.
    #[error("game {game} stops after {plies} actions, before the game is over")]
    Unfinished {
        /// 1 or 2.
        game: usize,
        /// Its actions.
        plies: usize,
    },
}

/// Replays a match's games, given as the actions' text (as [`Game::parse_action`] reads
/// them), from `start` with the match seed `seed`: every action must be legal, every hidden
/// chance outcome the one the seed's deal fixes ([`Game::dealt_outcome`]), each game played
/// to its end and the match as long as its results call for (one game where the first
/// decides it). What [`play_match_from`] would have recorded, so its points are the match's
/// true result, whoever reports it. Chance drawn by probability (no deal) cannot be checked
/// and is accepted when legal.
///
/// # Errors
/// [`ReplayError`] naming the first game and action that does not replay.
pub fn replay_match<G: Game, T: AsRef<[String]>>(
    start: &G,
    games: &[T],
    seed: u64,
) -> Result<MatchRecord<G>, ReplayError> {
    let deal = crate::derive_seed(seed, DEAL_STREAM);
    let (mut records, mut score_a, mut decided) = (Vec::new(), 0, None);
    for (game, texts) in games.iter().enumerate() {
        if game >= 2 || decided.is_some() {
            let expected = if decided.is_some() { "was decided by game 1" } else { "has two games" };
            return Err(ReplayError::GameCount { got: games.len(), expected });
        }
        let texts = texts.as_ref();
        let mut state = start.clone();
        let mut actions = Vec::with_capacity(texts.len());
        for (ply, text) in texts.iter().enumerate() {
            let illegal = |reason: String| ReplayError::Illegal { game: game + 1, ply, reason };
            if state.outcome().is_some() {
                return Err(illegal("an action after the end of the game".into()));
            }
            let a = state.parse_action(text).map_err(|e| illegal(e.to_string()))?;
            if state.to_move() == Actor::Chance
                && let Some(dealt) = state.dealt_outcome(start, deal)
                && dealt != a
            {
                return Err(illegal(format!("chance outcome {a}, but the match's deal holds {dealt} here")));
            }
            state.play(a).map_err(|e| illegal(e.to_string()))?;
            actions.push(a);
        }
        let outcome =
            state.outcome().ok_or(ReplayError::Unfinished { game: game + 1, plies: texts.len() })?;
        decided = tally::<G>(game, &outcome, &mut score_a);
        records.push(GameRecord { actions, outcome });
    }
    if records.len() < 2 && decided.is_none() {
        return Err(ReplayError::GameCount { got: games.len(), expected: "needs two games" });
    }
    let points_a = decided.unwrap_or_else(|| points_from_score(score_a));
    Ok(MatchRecord { games: records, score_a, points_a })
}

/// The action words of a game record (`zeroplay arena --out` writes them): separated by
/// spaces or newlines, `#` starting a comment.
pub fn record_words(text: &str) -> impl Iterator<Item = &str> {
    text.lines().flat_map(|l| l.split('#').next().unwrap_or("").split_whitespace())
}

/// A's match points from A's summed score over a match's games: 1 ahead, ½ level, 0 behind.
pub fn points_from_score(score_a: i32) -> f64 {
    match score_a.cmp(&0) {
        std::cmp::Ordering::Greater => 1.0,
        std::cmp::Ordering::Less => 0.0,
        std::cmp::Ordering::Equal => 0.5,
    }
}

/// A random opening: up to `plies` random actions from `start`, cut back to the last turn
/// start reached before the game would end (so the result is never finished and a turn is
/// never half played).
pub fn random_opening<G: Game>(start: G, plies: u32, rng: &mut Rng) -> G {
    random_opening_with_actions(start, plies, rng).0
}

/// [`random_opening`], with the actions that lead from `start` to the opening (so a game
/// record can be replayed from the start position). Draws the same random numbers.
pub fn random_opening_with_actions<G: Game>(start: G, plies: u32, rng: &mut Rng) -> (G, Vec<G::Action>) {
    let mut state = start.clone();
    let mut last_good = start;
    let mut played = Vec::new();
    let mut kept = 0;
    let mut actions = Vec::new();
    let mut chances = Vec::new();
    for _ in 0..plies {
        let a = match state.to_move() {
            Actor::Chance => sample_chance(&state, &mut chances, rng),
            Actor::Player(_) => {
                state.legal_actions(&mut actions);
                if actions.is_empty() {
                    break;
                }
                actions[rand::RngExt::random_range(rng, 0..actions.len())]
            }
        };
        state.play_unchecked(a);
        played.push(a);
        if state.outcome().is_some() {
            break;
        }
        if state.at_turn_start() {
            last_good = state.clone();
            kept = played.len();
        }
    }
    played.truncate(kept);
    (last_good, played)
}

/// An Elo difference with its 95% confidence interval.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Elo {
    /// Estimated Elo of A minus B.
    pub diff: f64,
    /// Lower end of the 95% interval.
    pub lo: f64,
    /// Upper end of the 95% interval.
    pub hi: f64,
    /// A's mean points per match.
    pub score: f64,
}

fn elo_of(score: f64) -> f64 {
    // `+ 0.0` turns an even score's −0 into 0, so it prints as "0", not "-0".
    -400.0 * (1.0 / score - 1.0).log10() + 0.0
}

/// Estimates the Elo difference from per-match points (1, ½, 0) with a normal 95% interval on
/// the mean. A score of 0% or 100% is clamped half a match in, so the estimate stays finite
/// (read it as a bound), and the variance is floored at that of one draw in `n` matches, so a
/// clean sweep still gets an interval of honest width.
///
/// # Panics
/// If `points` is empty.
pub fn elo(points: &[f64]) -> Elo {
    let (n, mean, half) = mean_and_half_width(points);
    let clamp = |s: f64| s.clamp(0.5 / n, 1.0 - 0.5 / n);
    Elo {
        diff: elo_of(clamp(mean)),
        lo: elo_of(clamp(mean - half)),
        hi: elo_of(clamp(mean + half)),
        score: mean,
    }
}

/// `(n, mean, half-width of the normal 95% interval on the mean)` of per-match points, the
/// variance floored at that of one draw in `n` matches.
///
/// # Panics
/// If `points` is empty.
fn mean_and_half_width(points: &[f64]) -> (f64, f64, f64) {
    assert!(!points.is_empty(), "no matches");
    let n = points.len() as f64;
    let mean = points.iter().sum::<f64>() / n;
    let var = (points.iter().map(|p| (p - mean).powi(2)).sum::<f64>() / n).max(0.25 / n);
    (n, mean, 1.96 * (var / n).sqrt())
}

/// An Elo estimate for reporting, honest at the edges: `None` where a value is unbounded.
/// A score of 0% or 100% has no finite estimate (`diff` is `None`: −∞ or +∞ by `score`),
/// and an interval that reaches 0% or 100% is open on that side. (The clamped [`elo`] stays
/// for chaining ratings, which need finite numbers.)
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct EloBounds {
    /// Estimated Elo of A minus B; `None` when A scored 0% or 100%.
    pub diff: Option<f64>,
    /// Lower end of the 95% interval; `None`: unbounded below.
    pub lo: Option<f64>,
    /// Upper end of the 95% interval; `None`: unbounded above.
    pub hi: Option<f64>,
    /// A's mean points per match.
    pub score: f64,
}

/// [`EloBounds`] from per-match points (1, ½, 0): the normal 95% interval on the mean, its
/// variance floored at that of one draw in `n` matches.
///
/// # Panics
/// If `points` is empty.
pub fn elo_bounds(points: &[f64]) -> EloBounds {
    let (_, mean, half) = mean_and_half_width(points);
    let finite = |s: f64| (s > 0.0 && s < 1.0).then(|| elo_of(s));
    EloBounds { diff: finite(mean), lo: finite(mean - half), hi: finite(mean + half), score: mean }
}

impl std::fmt::Display for EloBounds {
    /// `+89, 95% interval [-150, +400]`; unbounded ends print as `-inf` / `+inf`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let v = |x: Option<f64>, inf: &str| x.map_or_else(|| inf.to_string(), |x| format!("{x:+.0}"));
        let diff = v(self.diff, if self.score <= 0.0 { "-inf" } else { "+inf" });
        write!(f, "{diff}, 95% interval [{}, {}]", v(self.lo, "-inf"), v(self.hi, "+inf"))?;
        if self.diff.is_none() {
            let side = if self.score <= 0.0 { "no points" } else { "every point" };
            write!(f, " (A took {side}: no finite estimate, only the bound)")?;
        }
        Ok(())
    }
}

/// Win/draw/loss counts and totals over many matches, from A's view.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally {
    /// Matches won by A.
    pub wins: u32,
    /// Drawn matches.
    pub draws: u32,
    /// Matches lost by A.
    pub losses: u32,
    /// Matches decided by a decisive game result (no legal move).
    pub decisive: u32,
    /// A's total score over all games.
    pub score_a: i64,
    /// Per-match points, in match order.
    pub points: Vec<f64>,
}

impl Tally {
    /// Adds one match.
    pub fn add<G: Game>(&mut self, m: &MatchRecord<G>) {
        match m.points_a {
            p if p > 0.75 => self.wins += 1,
            p if p < 0.25 => self.losses += 1,
            _ => self.draws += 1,
        }
        if m.games.iter().any(|g| g.outcome.decisive.is_some()) {
            self.decisive += 1;
        }
        self.score_a += m.score_a as i64;
        self.points.push(m.points_a);
    }

    /// Total match points of A.
    pub fn points_a(&self) -> f64 {
        self.points.iter().sum()
    }

    /// The Elo estimate (None before any match).
    pub fn elo(&self) -> Option<Elo> {
        (!self.points.is_empty()).then(|| elo(&self.points))
    }

    /// The Elo estimate for reporting, unbounded at 0% and 100% (None before any match).
    pub fn elo_bounds(&self) -> Option<EloBounds> {
        (!self.points.is_empty()).then(|| elo_bounds(&self.points))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::battlenumber::{BattleNumber, Options};
    use crate::spec::AgentSpec;

    #[test]
    fn elo_is_zero_for_even_and_signed_otherwise() {
        let e = elo(&[1.0, 0.0, 0.5, 0.5]);
        assert!(e.diff.abs() < 1e-9 && e.lo < 0.0 && e.hi > 0.0);
        assert_eq!(format!("{:+.0}", elo(&[1.0]).diff), "+0", "one match is clamped to even");
        let e = elo(&[1.0, 1.0, 1.0, 0.0]);
        assert!((e.diff - 190.8).abs() < 0.5, "{e:?}");
        let e = elo(&[1.0; 10]);
        assert!(e.diff.is_finite() && e.diff > 300.0);
        assert!(e.lo < e.diff - 50.0, "a sweep still has a real interval: {e:?}");
    }

    #[test]
    fn reported_elo_is_unbounded_at_the_edges_and_open_for_one_match() {
        // A sweep has no finite estimate; its interval is bounded on the losing side only.
        let e = elo_bounds(&[0.0; 4]);
        assert_eq!((e.diff, e.lo), (None, None));
        let hi = e.hi.expect("four losses bound the Elo from above");
        assert!(hi < -150.0, "{e:?}");
        assert!(e.to_string().starts_with("-inf, 95% interval [-inf, -"), "{e}");
        let e = elo_bounds(&[1.0; 4]);
        assert_eq!((e.diff, e.hi), (None, None));
        assert!(e.to_string().starts_with("+inf"), "{e}");
        // One drawn match: the estimate is even and the interval excludes nothing.
        let e = elo_bounds(&[0.5]);
        assert_eq!(e.to_string(), "+0, 95% interval [-inf, +inf]");
        // Away from the edges it agrees with the clamped estimate.
        let (b, c) = (elo_bounds(&[1.0, 1.0, 1.0, 0.0]), elo(&[1.0, 1.0, 1.0, 0.0]));
        assert!((b.diff.unwrap() - c.diff).abs() < 1e-9);
        assert!(b.lo.is_some() && (b.hi.is_none() || b.hi.unwrap() > c.diff));
    }

    #[test]
    fn opening_actions_replay_to_the_opening() {
        for seed in 0..20 {
            let start = BattleNumber::new_game(&Options::default());
            let rng = || crate::rng_from_seed(seed);
            let (pos, actions) = random_opening_with_actions(start.clone(), 7, &mut rng());
            let mut replayed = start.clone();
            for a in &actions {
                replayed.play(*a).unwrap();
            }
            assert_eq!(crate::game::to_bytes(&replayed), crate::game::to_bytes(&pos));
            let same = random_opening(start, 7, &mut rng());
            assert_eq!(crate::game::to_bytes(&same), crate::game::to_bytes(&pos), "the same draws");
        }
    }

    #[test]
    fn matches_are_reproducible_and_swap_seats() {
        let spec: AgentSpec = "random".parse().unwrap();
        let mut a = spec.build::<BattleNumber>();
        let mut b = spec.build::<BattleNumber>();
        let m1 = play_match::<BattleNumber>(&Options::default(), a.as_mut(), b.as_mut(), 42);
        let m2 = play_match::<BattleNumber>(&Options::default(), a.as_mut(), b.as_mut(), 42);
        assert_eq!(m1.score_a, m2.score_a);
        assert_eq!(m1.games.len(), m2.games.len());
        for (g1, g2) in m1.games.iter().zip(&m2.games) {
            assert_eq!(g1.actions, g2.actions);
        }
        // Replaying the recorded actions gives the recorded outcome.
        for g in &m1.games {
            let mut s = BattleNumber::new_game(&Options::default());
            for &a in &g.actions {
                s.play(a).unwrap();
            }
            assert_eq!(s.outcome(), Some(g.outcome));
        }
    }

    fn texts<G: Game>(m: &MatchRecord<G>) -> Vec<Vec<String>> {
        m.games.iter().map(|g| g.actions.iter().map(|a| a.to_string()).collect()).collect()
    }

    #[test]
    fn a_played_match_replays_to_its_points_and_a_forged_one_does_not() {
        use crate::banqi::Banqi;
        let spec: AgentSpec = "random".parse().unwrap();
        for seed in 0..12 {
            let (mut a, mut b) = (spec.build::<Banqi>(), spec.build::<Banqi>());
            let start = Banqi::new_game(&Default::default());
            let m = play_match_from(&start, a.as_mut(), b.as_mut(), seed);
            let r = replay_match(&start, &texts(&m), seed).unwrap();
            assert_eq!((r.points_a, r.score_a, r.games.len()), (m.points_a, m.score_a, m.games.len()));
            // Another seed deals other pieces: a flip soon shows what this deal does not hold.
            let other = replay_match(&start, &texts(&m), seed + 100);
            assert!(
                matches!(&other, Err(ReplayError::Illegal { game: 1, reason, .. }) if reason.contains("deal")),
                "{other:?}"
            );
        }
        let (mut a, mut b) = (spec.build::<BattleNumber>(), spec.build::<BattleNumber>());
        let start = BattleNumber::new_game(&Options::default());
        let m = play_match_from(&start, a.as_mut(), b.as_mut(), 3);
        let games = texts(&m);
        assert_eq!(replay_match(&start, &games, 3).unwrap().points_a, m.points_a);
        // A game cut short, an extra game, a missing one, an illegal action.
        let mut cut = games.clone();
        cut[0].pop();
        assert!(matches!(replay_match(&start, &cut, 3), Err(ReplayError::Unfinished { game: 1, .. })));
        let mut extra = games.clone();
        extra.push(games[0].clone());
        assert!(matches!(replay_match(&start, &extra, 3), Err(ReplayError::GameCount { .. })));
        if m.games.len() == 2 {
            let one = vec![games[0].clone()];
            assert!(matches!(replay_match(&start, &one, 3), Err(ReplayError::GameCount { got: 1, .. })));
        }
        let mut bad = games.clone();
        bad[0][0] = "nonsense".into();
        assert!(matches!(replay_match(&start, &bad, 3), Err(ReplayError::Illegal { game: 1, ply: 0, .. })));
        let mut twice = games;
        let first = twice[0][0].clone();
        twice[0].insert(1, first);
        assert!(replay_match(&start, &twice, 3).is_err(), "the same placement twice");
    }
}
