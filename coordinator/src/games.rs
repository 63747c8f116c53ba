//! Everything the coordinator does per game kind, behind one small enum: start positions and
//! replay validation of submitted games into Parquet rows. The rules are the engine's; nothing
//! here decides legality itself.

use std::any::Any;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use engine::game::{Actor, Game, Outcome, Seat};
use engine::pack::GamePack;
use zeroplay_proto::v1 as pb;

use crate::rows::PositionRow;

pub use engine::GameKind;

/// Why a submitted game was refused. Every variant names the problem for the worker's log.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ValidationError {
    /// A field is missing or malformed.
    #[error("malformed game: {0}")]
    Malformed(String),
    /// The game breaks the rules at a move.
    #[error("illegal game at ply {ply}: {reason}")]
    Illegal {
        /// The ply (index into `moves`).
        ply: usize,
        /// What is wrong.
        reason: String,
    },
    /// The game is larger than the configured limits.
    #[error("oversized game: {0}")]
    Oversized(String),
}

/// Limits on a submitted game.
#[derive(Copy, Clone, Debug)]
pub struct Limits {
    /// Most moves (actions) in one game.
    pub max_moves: usize,
    /// Most visit entries on one move.
    pub max_visit_entries: usize,
    /// Most root visits (summed over the visit entries) on one move: the lease's search
    /// budget ([`Limits::for_settings`]).
    pub max_visits: u64,
    /// When a game may end by resignation.
    pub resign: Resign,
}

/// The resignation rule a game is held to.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Resign {
    /// Not checked (a game checked only against the rules).
    Unchecked,
    /// Never: the lease's settings turn resignation off (or a teacher plays, which never
    /// resigns).
    Off,
    /// As self-play resigns: the seat's root value below `threshold` at `consecutive` of its
    /// searched turn starts in a row, the last being `resign_root_value`.
    Below {
        /// The resignation threshold.
        threshold: f32,
        /// Turn starts in a row.
        consecutive: u32,
    },
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_moves: 4096, max_visit_entries: 4096, max_visits: u64::MAX, resign: Resign::Unchecked }
    }
}

impl Limits {
    /// `self` held to a lease's settings: a move's visits within its search budget (the
    /// larger of the full and fast budgets, doubled and plus 64 for a batched search's
    /// overshoot; 1 for a teacher's one-hot visits) and its resignation rule.
    pub fn for_settings(self, s: &engine::selfplay::SelfPlaySettings) -> Limits {
        let teacher = !s.teacher.trim().is_empty();
        let max_visits = if teacher { 1 } else { 2 * u64::from(s.full_sims.max(s.fast_sims).max(1)) + 64 };
        let resign = if teacher || s.resign_threshold <= -1.0 {
            Resign::Off
        } else {
            Resign::Below { threshold: s.resign_threshold, consecutive: s.resign_consecutive.max(1) }
        };
        Limits { max_visits, resign, ..self }
    }
}

fn malformed(m: impl Into<String>) -> ValidationError {
    ValidationError::Malformed(m.into())
}

/// Checks a game id: 32 lowercase hex digits.
pub fn valid_game_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Replays `game` with the engine and returns its Parquet rows (one per position).
///
/// # Errors
/// [`ValidationError`] for a malformed, illegal or oversized game.
pub fn validate(game: &pb::GameRecord, limits: &Limits) -> Result<Vec<PositionRow>, ValidationError> {
    if !valid_game_id(&game.game_id) {
        return Err(malformed("game_id must be 32 lowercase hex digits"));
    }
    let kind = GameKind::from_name(&game.game_kind)
        .ok_or_else(|| malformed(format!("unknown game kind {:?}", game.game_kind)))?;
    if game.engine_version.is_empty() || game.engine_version.len() > 64 {
        return Err(malformed("engine_version must be 1 to 64 characters"));
    }
    if game.moves.len() > limits.max_moves {
        return Err(ValidationError::Oversized(format!(
            "{} moves (limit {})",
            game.moves.len(),
            limits.max_moves
        )));
    }
    if game.encoding_version != u32::from(kind.state_version()) {
        return Err(malformed(format!(
            "encoding version {} does not match this coordinator's {} version {}",
            game.encoding_version,
            kind.name(),
            kind.state_version()
        )));
    }
    engine::with_game!(kind, |G| replay::<G>(game, limits))
}

fn replay<G: Game>(game: &pb::GameRecord, limits: &Limits) -> Result<Vec<PositionRow>, ValidationError> {
    let start = G::decode(&game.start_state).map_err(|e| malformed(format!("start_state: {e}")))?;
    if start.outcome().is_some() {
        return Err(malformed("start_state is a finished game"));
    }
    // Hidden chance (Banqi's face-down pieces) must follow the deal the game's seed fixes.
    let deal = engine::derive_seed(game.seed, engine::arena::DEAL_STREAM);
    let mut state = start.clone();
    let mut rows = Vec::with_capacity(game.moves.len());
    let mut bytes = Vec::new();
    // Each seat's root values at its searched turn starts: the evidence for a resignation.
    let mut turn_values: [Vec<f32>; 2] = [Vec::new(), Vec::new()];
    for (ply, m) in game.moves.iter().enumerate() {
        let illegal = |reason: String| ValidationError::Illegal { ply, reason };
        if state.outcome().is_some() {
            return Err(illegal("a move after the end of the game".into()));
        }
        let actor = state.to_move();
        if m.chance != (actor == Actor::Chance) {
            return Err(illegal(format!("chance flag {} but the actor is {actor:?}", m.chance)));
        }
        if m.action.len() > 64 {
            return Err(malformed(format!("ply {ply}: action text too long")));
        }
        let action = state.parse_action(&m.action).map_err(|e| illegal(e.to_string()))?;
        if actor == Actor::Chance
            && let Some(dealt) = state.dealt_outcome(&start, deal)
            && dealt != action
        {
            return Err(illegal(format!("chance outcome {action}, but the game's deal holds {dealt} here")));
        }
        if m.visits.len() > limits.max_visit_entries {
            return Err(ValidationError::Oversized(format!("ply {ply}: {} visit entries", m.visits.len())));
        }
        if !m.root_value.is_finite() || m.root_value.abs() > 1.0 {
            return Err(illegal(format!("root value {} outside [-1, 1]", m.root_value)));
        }
        let total: u64 = m.visits.iter().map(|v| u64::from(v.visits)).sum();
        if total > limits.max_visits {
            return Err(illegal(format!(
                "{total} root visits, over the lease's budget of {}",
                limits.max_visits
            )));
        }
        if let Actor::Player(seat) = actor
            && !m.visits.is_empty()
            && state.at_turn_start()
        {
            turn_values[seat.index()].push(m.root_value);
        }
        let mut visit_actions = Vec::with_capacity(m.visits.len());
        let mut visit_counts = Vec::with_capacity(m.visits.len());
        let mut seen = std::collections::HashSet::new();
        for v in &m.visits {
            let a = state.parse_action(&v.action).map_err(|e| illegal(format!("visits: {e}")))?;
            if !state.is_legal(a) {
                return Err(illegal(format!("visits name {} which is not legal here", v.action)));
            }
            if !seen.insert(a) {
                return Err(illegal(format!("visits list {} twice", v.action)));
            }
            visit_actions.push(a.to_string());
            visit_counts.push(v.visits);
        }
        bytes.clear();
        state.encode(&mut bytes);
        state.play(action).map_err(|e| illegal(e.to_string()))?;
        rows.push(PositionRow {
            game_id: game.game_id.clone(),
            game_kind: G::NAME,
            seed: game.seed,
            engine_version: game.engine_version.clone(),
            encoding_version: G::STATE_VERSION as u32,
            model_version: m.model_version,
            ply: ply as u32,
            actor: match actor {
                Actor::Player(s) => s.index() as u8,
                Actor::Chance => 2,
            },
            state: bytes.clone(),
            action: action.to_string(),
            visit_actions,
            visit_counts,
            root_value: m.root_value,
            full_search: m.full_search,
            // Filled in below, once the result is known.
            result: 0,
            score: 0,
            decisive: false,
            resigned: game.resigned,
            would_resign_seat: -1,
        });
    }
    let outcome: Outcome = if game.resigned {
        let seat = Seat::from_index(game.resigned_seat as usize)
            .ok_or_else(|| malformed("resigned_seat must be 0 or 1"))?;
        if state.outcome().is_some() {
            return Err(malformed("resigned after the game had ended"));
        }
        check_resignation(&state, seat, &turn_values[seat.index()], game.resign_root_value, limits.resign)
            .map_err(|reason| ValidationError::Illegal { ply: game.moves.len(), reason })?;
        Outcome::decisive(seat.other(), [0, 0])
    } else {
        state.outcome().ok_or_else(|| malformed("the game is not finished and nobody resigned"))?
    };
    let would_resign_seat = match (game.would_have_resigned, game.would_resign_seat) {
        (false, _) => -1,
        (true, s @ 0..=1) => s as i8,
        (true, _) => return Err(malformed("would_resign_seat must be 0 or 1")),
    };
    if game.resigned && game.would_have_resigned {
        return Err(malformed("a game cannot both resign and be played out past resignation"));
    }
    for row in &mut rows {
        row.would_resign_seat = would_resign_seat;
        let seat = Seat::from_index(row.actor as usize).unwrap_or(Seat::First);
        row.result = match outcome.winner() {
            Some(w) if w == seat => 1,
            Some(_) => -1,
            None => 0,
        };
        row.score = outcome.difference(seat);
        row.decisive = outcome.decisive.is_some();
    }
    Ok(rows)
}

/// Whether `seat` may resign in `state` (the position after the last recorded move) under
/// `rule`, given its recorded turn-start values and the value of the search that resigned.
fn check_resignation<G: Game>(
    state: &G,
    seat: Seat,
    recorded: &[f32],
    last: f32,
    rule: Resign,
) -> Result<(), String> {
    let refused = Err;
    match rule {
        Resign::Unchecked => Ok(()),
        Resign::Off => refused("resignation, but this lease's settings turn it off".into()),
        Resign::Below { threshold, consecutive } => {
            if state.to_move() != Actor::Player(seat) || !state.at_turn_start() {
                return refused(format!("{seat:?} resigned, but it is not at the start of its own turn"));
            }
            let earlier = consecutive as usize - 1;
            let tail = &recorded[recorded.len().saturating_sub(earlier)..];
            if !last.is_finite()
                || tail.len() < earlier
                || tail.iter().chain([&last]).any(|v| *v >= threshold)
            {
                return refused(format!(
                    "{seat:?} resigned without {consecutive} turn starts in a row below {threshold} \
                     (its last values: {tail:?}, then {last})"
                ));
            }
            Ok(())
        }
    }
}

/// The game's initial position, encoded.
pub fn initial_state(kind: GameKind, opts: &GameOptions) -> Vec<u8> {
    engine::with_game!(kind, |G| engine::game::to_bytes(&G::new_game(&opts.of::<G>())))
}

/// The initial position after `plies` uniformly random actions (fewer if the game would end),
/// encoded; always a position at a turn start that is not finished.
pub fn random_opening(kind: GameKind, opts: &GameOptions, plies: u32, seed: u64) -> Vec<u8> {
    engine::with_game!(kind, |G| random_opening_of(G::new_game(&opts.of::<G>()), plies, seed))
}

fn random_opening_of<G: Game>(start: G, plies: u32, seed: u64) -> Vec<u8> {
    engine::game::to_bytes(&engine::arena::random_opening(start, plies, &mut engine::rng_from_seed(seed)))
}

/// The candidate's points in an evaluation match, from its reported games replayed from
/// `start` (the lease's start position) with the match seed ([`engine::arena::replay_match`]):
/// what the games show, whoever reported them.
///
/// # Errors
/// [`ValidationError`]: an oversized game, or games that do not replay.
pub fn replay_match(
    kind: GameKind,
    start: &[u8],
    seed: u64,
    games: &[pb::MatchGame],
    max_moves: usize,
) -> Result<f64, ValidationError> {
    if let Some(g) = games.iter().find(|g| g.actions.len() > max_moves) {
        return Err(ValidationError::Oversized(format!(
            "a match game of {} moves (limit {max_moves})",
            g.actions.len()
        )));
    }
    if games.iter().flat_map(|g| &g.actions).any(|a| a.len() > 64) {
        return Err(malformed("an action text over 64 characters"));
    }
    fn replay<G: Game>(start: &[u8], seed: u64, games: &[pb::MatchGame]) -> Result<f64, ValidationError> {
        let start = G::decode(start).map_err(|e| malformed(format!("start: {e}")))?;
        let texts: Vec<&[String]> = games.iter().map(|g| g.actions.as_slice()).collect();
        engine::arena::replay_match(&start, &texts, seed)
            .map(|m| m.points_a)
            .map_err(|e| malformed(format!("the match does not replay: {e}")))
    }
    engine::with_game!(kind, |G| replay::<G>(start, seed, games))
}

/// Checks that `bytes` is a playable position of `kind` (used for the user's positions file).
///
/// # Errors
/// A description of why not.
pub fn check_position(kind: GameKind, bytes: &[u8]) -> Result<(), String> {
    fn check<G: Game>(bytes: &[u8]) -> Result<(), String> {
        let s = G::decode(bytes).map_err(|e| e.to_string())?;
        if s.outcome().is_some() {
            return Err("the position is a finished game".into());
        }
        if !s.at_turn_start() {
            return Err("the position is in the middle of a turn".into());
        }
        Ok(())
    }
    engine::with_game!(kind, |G| check::<G>(bytes))
}

/// Game options per kind (every [decision] of the rules): one `[options.<name>]` table per
/// game, read by the game's own [`GamePack::options_from_toml`] (TriGolden's names a shape
/// table file, read here). A game left out plays its defaults.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct GameOptions {
    tables: BTreeMap<GameKind, toml::Table>,
    /// Each game's options once read (a shape table file is read once), shared by clones.
    #[serde(skip)]
    resolved: Arc<Mutex<BTreeMap<GameKind, Arc<dyn Any + Send + Sync>>>>,
}

/// The same options for every game: tables that read the same (a table spelling out the
/// defaults equals none).
impl PartialEq for GameOptions {
    fn eq(&self, o: &Self) -> bool {
        GameKind::ALL.into_iter().all(|kind| {
            self.tables.get(&kind) == o.tables.get(&kind)
                || engine::with_game!(kind, |G| match (self.checked::<G>(), o.checked::<G>()) {
                    (Ok(a), Ok(b)) => a == b,
                    _ => false,
                })
        })
    }
}

impl GameOptions {
    /// These options with `kind`'s table replaced by `table`.
    pub fn with(mut self, kind: GameKind, table: toml::Table) -> GameOptions {
        self.tables.insert(kind, table);
        self.resolved = Arc::default();
        self
    }

    /// `kind`'s table as configured (empty: the defaults).
    pub fn table(&self, kind: GameKind) -> toml::Table {
        self.tables.get(&kind).cloned().unwrap_or_default()
    }

    /// The configured options of game `G`, reading any file its table names (once: later
    /// calls return the same options).
    ///
    /// # Errors
    /// A bad key or value, or an unreadable or invalid file, named.
    pub fn checked<G: GamePack>(&self) -> Result<G::Options, String> {
        let kind = GameKind::of::<G>();
        let mut resolved = self.resolved.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(o) = resolved.get(&kind).and_then(|o| o.downcast_ref::<G::Options>()) {
            return Ok(o.clone());
        }
        let read = |path: &str| std::fs::read_to_string(path).map_err(|e| e.to_string());
        let o = G::options_from_toml(&self.table(kind), &read)?;
        resolved.insert(kind, Arc::new(o.clone()));
        Ok(o)
    }

    /// Checks every game's table that is given.
    ///
    /// # Errors
    /// The first bad table, as `options.<name>: …`.
    pub fn validate(&self) -> Result<(), String> {
        for &kind in self.tables.keys() {
            engine::with_game!(kind, |G| self.checked::<G>().map(drop))
                .map_err(|e| format!("options.{kind}: {e}"))?;
        }
        Ok(())
    }

    /// The options of game `G` in a configuration already validated.
    ///
    /// # Panics
    /// If the options were not checked ([`GameOptions::checked`]) and are invalid.
    pub fn of<G: GamePack>(&self) -> G::Options {
        self.checked::<G>().unwrap_or_else(|e| panic!("{} options not checked before use: {e}", G::NAME))
    }
}

/// Why [`store_records`] wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A record failed the upload's validation.
    #[error("game {index}: {source}")]
    Invalid {
        /// The record's index in the slice.
        index: usize,
        /// Why it was refused.
        #[source]
        source: ValidationError,
    },
    /// The file could not be written.
    #[error(transparent)]
    Write(#[from] crate::rows::WriteError),
}

/// Validates `records` as an upload is validated and writes their rows to `dir/name` as one
/// Parquet file, durably: a store made without a running coordinator (the report's and the
/// play server's tests, tools). Returns the rows written.
///
/// # Errors
/// [`StoreError`]: the first invalid record (nothing is written), or the write's failure.
pub fn store_records(
    dir: &std::path::Path,
    name: &str,
    records: &[pb::GameRecord],
    limits: &Limits,
    engine_version: &str,
) -> Result<usize, StoreError> {
    let mut rows = Vec::new();
    for (index, r) in records.iter().enumerate() {
        rows.extend(validate(r, limits).map_err(|source| StoreError::Invalid { index, source })?);
    }
    crate::rows::write_file(dir, name, &rows, engine_version)?;
    Ok(rows.len())
}

#[cfg(test)]
mod tests {
    use engine::battlenumber::BattleNumber;
    use engine::eval::Rollout;
    use engine::selfplay::{SelfPlaySettings, play_game};

    use super::*;

    /// Self-play's own resignations pass the lease's rule; forged ones do not.
    #[test]
    fn real_resignations_pass_and_forged_ones_are_refused() {
        let settings = SelfPlaySettings {
            full_sims: 16,
            fast_sims: 4,
            resign_threshold: 0.2,
            resign_consecutive: 2,
            resign_playthrough_fraction: 0.0,
            ..SelfPlaySettings::default()
        };
        let limits = Limits::default().for_settings(&settings);
        let start = BattleNumber::new_game(&Default::default());
        let mut resigned = 0;
        for seed in 0..40 {
            let g = play_game(&start, &settings, &Rollout::default(), seed);
            let record = zeroplay_proto::convert::game_record(&g, format!("{seed:032x}"), seed, 0);
            validate(&record, &limits).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            if !record.resigned {
                continue;
            }
            resigned += 1;
            let mut forged = record.clone();
            forged.resign_root_value = 0.5;
            assert!(validate(&forged, &limits).unwrap_err().to_string().contains("without 2 turn starts"));
            let off = Limits { resign: Resign::Off, ..limits };
            assert!(validate(&record, &off).unwrap_err().to_string().contains("turn it off"));
            let mut early = record.clone();
            early.moves.truncate(3);
            assert!(validate(&early, &limits).is_err(), "a resignation after 3 plies passed");
        }
        assert!(resigned >= 3, "only {resigned} of 40 games resigned");
    }

    #[test]
    fn visits_over_the_budget_are_refused() {
        let settings = SelfPlaySettings { full_sims: 16, fast_sims: 4, ..SelfPlaySettings::default() };
        let start = BattleNumber::new_game(&Default::default());
        let g = play_game(&start, &settings, &Rollout::default(), 3);
        let mut record = zeroplay_proto::convert::game_record(&g, format!("{:032x}", 3), 3, 0);
        let limits = Limits::default().for_settings(&settings);
        assert_eq!(limits.max_visits, 2 * 16 + 64);
        validate(&record, &limits).unwrap();
        let m = record.moves.iter_mut().find(|m| !m.visits.is_empty()).unwrap();
        m.visits[0].visits += 97;
        assert!(validate(&record, &limits).unwrap_err().to_string().contains("over the lease's budget"));
    }

    /// One bad record refuses the whole batch: its index is named and no file is written.
    #[test]
    fn store_records_names_the_bad_record_and_writes_nothing() {
        let settings = SelfPlaySettings { full_sims: 8, fast_sims: 0, ..SelfPlaySettings::default() };
        let limits = Limits::default().for_settings(&settings);
        let start = BattleNumber::new_game(&Default::default());
        let mut records: Vec<_> = (0..3)
            .map(|seed| {
                let g = play_game(&start, &settings, &Rollout::default(), seed);
                zeroplay_proto::convert::game_record(&g, format!("{seed:032x}"), seed, 0)
            })
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let m = records[1].moves.iter_mut().find(|m| !m.visits.is_empty()).unwrap();
        m.visits[0].visits += 1_000;
        let e = store_records(dir.path(), "bad.parquet", &records, &limits, "test").unwrap_err();
        assert!(matches!(e, StoreError::Invalid { index: 1, .. }), "{e:?}");
        assert!(e.to_string().starts_with("game 1: "), "{e}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "a refused batch left a file");

        records.remove(1);
        let rows = store_records(dir.path(), "good.parquet", &records, &limits, "test").unwrap();
        let valid: usize = records.iter().map(|r| validate(r, &limits).unwrap().len()).sum();
        assert!(valid > 0);
        assert_eq!(rows, valid, "every valid record's rows");
        assert!(dir.path().join("good.parquet").is_file());
    }

    /// A Gumbel game's stored improved policies fit the lease's budget, resignations and all.
    #[test]
    fn gumbel_games_pass_their_leases_checks() {
        let settings = SelfPlaySettings {
            full_sims: 16,
            fast_sims: 4,
            root: engine::selfplay::RootSearch::Gumbel,
            ..SelfPlaySettings::default()
        };
        let limits = Limits::default().for_settings(&settings);
        assert!(u64::from(settings.gumbel_units()) <= limits.max_visits);
        let start = BattleNumber::new_game(&Default::default());
        for seed in 0..6 {
            let g = play_game(&start, &settings, &Rollout::default(), seed);
            let record = zeroplay_proto::convert::game_record(&g, format!("{seed:032x}"), seed, 0);
            validate(&record, &limits).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        }
    }

    /// Each game's table is read by the game itself; a file it names is read once.
    #[test]
    fn game_options_are_read_by_each_game_and_files_once() {
        use engine::trigolden::TriGolden;
        let parse = |text: &str| toml::from_str::<GameOptions>(text).unwrap();
        // Spelling out the defaults is the same as saying nothing.
        let spelled =
            parse("[battlenumber]\nhole-rule = \"border-connected\"\n[trigolden]\nscoring = \"bracer\"\n");
        assert_eq!(spelled, GameOptions::default());
        spelled.validate().unwrap();
        let off = parse("[battlenumber]\nhole-rule = \"off\"\n");
        assert_ne!(off, GameOptions::default());
        assert_eq!(off.of::<BattleNumber>().hole_rule, engine::battlenumber::HoleRule::Off);
        // A bad key or value is the game's own error, under the table's name.
        for (text, says) in [
            ("[banqi]\nrule = 1\n", "options.banqi: Banqi has no options"),
            ("[trigolden]\nscoring = \"nobody\"\n", "options.trigolden: options.scoring"),
            ("[trigolden]\npieces = 3\n", "pieces must be a file name"),
        ] {
            let e = parse(text).validate().unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
        assert!(toml::from_str::<GameOptions>("[chess]\nx = 1\n").is_err(), "an unknown game");

        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pieces.toml");
        std::fs::write(&file, include_str!("../../engine/src/trigolden/default_pieces.toml")).unwrap();
        let table = toml::Table::from_iter([("pieces".to_string(), file.display().to_string().into())]);
        let named = GameOptions::default().with(GameKind::TriGolden, table);
        let first = named.checked::<TriGolden>().unwrap();
        std::fs::remove_file(&file).unwrap();
        // Read once: a clone shares what was read, so the file is not needed again.
        assert_eq!(named.clone().checked::<TriGolden>().unwrap(), first);
        let fresh = GameOptions::default().with(GameKind::TriGolden, named.table(GameKind::TriGolden));
        let e = fresh.validate().unwrap_err();
        assert!(e.contains("shape table") && e.contains("pieces.toml"), "{e}");
    }
}
