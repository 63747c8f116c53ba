//! One game being played: its options, seed and click history with an undo/redo cursor, kept
//! behind the object-safe [`Table`] so the server holds games of every kind in one map.
//!
//! The state is never edited in place by a client: a click is checked with
//! [`Game::parse_action`] and [`Game::is_legal`], and undo/redo rebuild the state by replaying
//! the history from the start, so whatever the server shows is a position the rules reach.

use std::sync::Arc;
use std::time::Duration;

use engine::GameKind;
use engine::game::{Actor, Game, Seat};
use serde_json::{Value, json};

use crate::ApiError;
use crate::replay::{self, Replay};
pub use crate::served::{AiFactory, Served};
use engine::pack::seat_name;

/// A game as the server holds it, whatever its kind.
pub trait Table: Send {
    /// The game kind.
    fn kind(&self) -> GameKind;
    /// The full view for clients (board, legal clicks, history, outcome, replay token).
    fn view(&self) -> Value;
    /// Applies a click given as text.
    ///
    /// # Errors
    /// [`ApiError::BadRequest`] for text that is no action; [`ApiError::Illegal`] for an
    /// action the rules refuse here. The game is unchanged on error.
    fn click(&mut self, text: &str) -> Result<(), ApiError>;
    /// Takes back to the previous turn start of a human seat.
    ///
    /// # Errors
    /// [`ApiError::Conflict`] when there is nothing to undo.
    fn undo(&mut self) -> Result<(), ApiError>;
    /// Replays forward to the next turn start that was undone.
    ///
    /// # Errors
    /// [`ApiError::Conflict`] when there is nothing to redo.
    fn redo(&mut self) -> Result<(), ApiError>;
    /// The board as SVG with a caption (in Chinese if `zh`; `when` is the reader's local time),
    /// and the download's file name stem.
    fn svg(&self, zh: bool, when: &str) -> (String, &'static str);
    /// Clicks applied so far (the cursor), which an AI job checks before applying its move.
    fn ply(&self) -> usize;
    /// Starts an AI turn: the closure runs on a blocking thread and returns the clicks of one
    /// whole turn.
    ///
    /// # Errors
    /// [`ApiError::Conflict`] for a finished game.
    /// `stop`, once set, ends the search early (its answer is then not applied).
    fn ai_job(&self, time: Duration, stop: engine::agent::StopFlag) -> Result<AiJob, ApiError>;
    /// Applies an AI turn computed from ply `at` (no-op with `false` if the game moved on).
    fn apply_ai(&mut self, at: usize, actions: &[String]) -> bool;
    /// The seats the AI plays (by [`Seat::index`]).
    fn ai_seats(&self) -> Seats;
    /// Changes the seats the AI plays (none: two people, or the AI stopped; both: AI vs AI).
    fn set_ai_seats(&mut self, seats: Seats);
    /// Whether `seat` is to move now.
    fn to_move(&self) -> Option<Seat>;
    /// A search of the position in front of the players, for a hint: the AI's value and its
    /// most visited clicks. Nothing is played.
    ///
    /// # Errors
    /// [`ApiError::Conflict`] for a finished game.
    fn hint_job(&self, time: Duration, stop: engine::agent::StopFlag) -> Result<HintJob, ApiError>;
    /// The arbitration of the position (games that have one, at a turn start).
    fn arbitration(&self) -> Option<Value>;
}

/// The seats an AI plays, indexed by [`Seat::index`].
pub type Seats = [bool; 2];

/// A hint search to run off the async runtime; it returns the hint as JSON.
pub type HintJob = Box<dyn FnOnce() -> Value + Send>;

/// A progress report from a thinking AI.
#[derive(Clone, Debug, serde::Serialize)]
pub struct AiProgress {
    /// Simulations so far.
    pub sims: u64,
    /// Tree nodes.
    pub nodes: usize,
    /// Deepest node, in clicks below the root.
    pub depth: u32,
    /// Milliseconds since the search started.
    pub elapsed_ms: u64,
    /// The most visited click so far.
    pub best: Option<String>,
    /// Root value from the mover's view, in [-1, 1].
    pub value: f32,
}

/// An AI turn to compute off the async runtime: give it a progress callback; it returns the
/// turn's clicks and the last progress.
pub type AiJob = Box<dyn FnOnce(&mut dyn FnMut(&AiProgress)) -> (Vec<String>, Option<AiProgress>) + Send>;

/// A game of kind `G` with its history.
pub struct Session<G: Served> {
    options: G::Options,
    seed: u64,
    /// Every click made, including undone ones past `cursor` (the redo list).
    history: Vec<G::Action>,
    cursor: usize,
    state: G,
    ai_seats: Seats,
    ai: AiFactory<G>,
    model_version: Arc<dyn Fn() -> u64 + Send + Sync>,
    /// The hidden deal (Banqi's face-down pieces): drawn by the server and never sent, so the
    /// seed a client sees tells it nothing about what lies face down. Replays carry the
    /// revealed pieces themselves.
    deal: u64,
}

impl<G: Served> Session<G> {
    /// A new game, or one replayed from `actions` (checked click by click).
    ///
    /// # Errors
    /// [`ApiError::BadRequest`] when a replayed action is not legal where it is played.
    pub fn new(
        options: G::Options,
        seed: u64,
        actions: &[G::Action],
        ai_seats: Seats,
        ai: AiFactory<G>,
        model_version: Arc<dyn Fn() -> u64 + Send + Sync>,
    ) -> Result<Self, ApiError> {
        let mut state = G::new_game(&options);
        for (i, a) in actions.iter().enumerate() {
            state.play(*a).map_err(|e| ApiError::BadRequest(format!("replay click {}: {e}", i + 1)))?;
        }
        let mut session = Session {
            options,
            seed,
            history: actions.to_vec(),
            cursor: actions.len(),
            state,
            ai_seats,
            ai,
            model_version,
            deal: rand::random(),
        };
        session.resolve_chance();
        Ok(session)
    }

    /// Nature's moves: at a chance node (a flip just made), the piece the hidden deal holds
    /// there is revealed and recorded like any click.
    fn resolve_chance(&mut self) {
        let start = G::new_game(&self.options);
        let mut buf = Vec::new();
        while self.state.outcome().is_none() && self.state.to_move() == Actor::Chance {
            let mut rng = engine::rng_from_seed(self.deal ^ self.cursor as u64);
            let a = engine::game::next_chance(&self.state, &start, self.deal, &mut buf, &mut rng);
            self.state.play_unchecked(a);
            self.history.truncate(self.cursor);
            self.history.push(a);
            self.cursor += 1;
        }
    }

    fn rebuild(&mut self, upto: usize) {
        let mut s = G::new_game(&self.options);
        for a in &self.history[..upto] {
            s.play_unchecked(*a);
        }
        self.state = s;
        self.cursor = upto;
    }

    /// Plies at which a turn starts for `seat` (or any seat), up to `len`.
    fn turn_starts(&self, len: usize) -> Vec<(usize, Option<Seat>)> {
        let mut s = G::new_game(&self.options);
        let mut out = vec![(0, mover(&s))];
        for (i, a) in self.history[..len].iter().enumerate() {
            s.play_unchecked(*a);
            if s.at_turn_start() {
                out.push((i + 1, mover(&s)));
            }
        }
        out
    }

    /// The replay token of the game up to the cursor.
    pub fn token(&self) -> String {
        replay::encode::<G>(&Replay {
            options: self.options.clone(),
            seed: self.seed,
            actions: self.history[..self.cursor].to_vec(),
        })
    }
}

fn mover<G: Game>(s: &G) -> Option<Seat> {
    match s.to_move() {
        Actor::Player(p) if s.outcome().is_none() => Some(p),
        _ => None,
    }
}

/// The view of `state` as clients see it.
pub fn state_view<G: Served>(state: &G) -> Value {
    let mut actions = Vec::new();
    if mover(state).is_some() {
        state.legal_actions(&mut actions);
    }
    let outcome = state.outcome().map(|o| {
        json!({
            "winner": o.winner().map(seat_name),
            "scores": o.scores,
            "decisive": o.decisive.map(seat_name),
        })
    });
    json!({
        "to_move": mover(state).map(seat_name),
        "turn_start": state.at_turn_start(),
        "outcome": outcome,
        "legal": state.legal_json(&actions),
        "board": state.board_json(),
    })
}

impl<G: Served> Table for Session<G> {
    fn kind(&self) -> GameKind {
        GameKind::of::<G>()
    }

    fn view(&self) -> Value {
        let mut v = state_view(&self.state);
        let obj = v.as_object_mut().expect("object");
        obj.insert("game".into(), json!(GameKind::of::<G>()));
        obj.insert("options".into(), G::options_json(&self.options));
        obj.insert("seed".into(), json!(self.seed.to_string()));
        obj.insert("ply".into(), json!(self.cursor));
        obj.insert(
            "history".into(),
            json!(self.history[..self.cursor].iter().map(|a| a.to_string()).collect::<Vec<_>>()),
        );
        // One replay of the history serves both the undo target and the last turn.
        let starts = self.turn_starts(self.cursor);
        obj.insert("can_undo".into(), json!(self.undo_target(&starts).is_some()));
        // The clicks of the last completed turn and of the one in progress.
        let before: Vec<usize> = starts.iter().map(|(p, _)| *p).filter(|p| *p < self.cursor).collect();
        let from = if self.state.at_turn_start() || self.state.outcome().is_some() {
            before.last().copied().unwrap_or(0)
        } else {
            before.iter().rev().nth(1).copied().unwrap_or(0)
        };
        obj.insert("last_turn".into(), json!([from, self.cursor]));
        obj.insert("can_redo".into(), json!(self.cursor < self.history.len()));
        obj.insert("ai_seat".into(), json!(seats_name(self.ai_seats)));
        obj.insert(
            "ai_seats".into(),
            json!(
                Seat::BOTH
                    .iter()
                    .filter(|s| self.ai_seats[s.index()])
                    .map(|&s| seat_name(s))
                    .collect::<Vec<_>>()
            ),
        );
        // The history by turns, each with its seat, for a readable move list (a chance click,
        // Banqi's reveal, stays in the turn of the flip that caused it).
        let mut turns: Vec<Value> = Vec::new();
        for (i, (p, seat)) in starts.iter().enumerate() {
            let end = starts.get(i + 1).map_or(self.cursor, |(q, _)| *q);
            if *p >= end {
                continue;
            }
            let clicks: Vec<String> = self.history[*p..end].iter().map(|a| a.to_string()).collect();
            turns.push(json!({ "seat": seat.map(seat_name), "clicks": clicks }));
        }
        obj.insert("turns".into(), json!(turns));
        obj.insert("replay".into(), json!(self.token()));
        obj.insert("model_version".into(), json!((self.model_version)()));
        v
    }

    fn click(&mut self, text: &str) -> Result<(), ApiError> {
        if self.state.outcome().is_some() {
            return Err(ApiError::Conflict("the game is over".into()));
        }
        let a = self.state.parse_action(text).map_err(|e| ApiError::BadRequest(format!("`{text}`: {e}")))?;
        self.state.play(a).map_err(|e| ApiError::Illegal(format!("`{text}`: {e}")))?;
        // A new click ends the redo list.
        self.history.truncate(self.cursor);
        self.history.push(a);
        self.cursor += 1;
        self.resolve_chance();
        Ok(())
    }

    fn undo(&mut self) -> Result<(), ApiError> {
        let to = self
            .undo_target(&self.turn_starts(self.cursor))
            .ok_or_else(|| ApiError::Conflict("nothing to undo".into()))?;
        self.rebuild(to);
        Ok(())
    }

    fn redo(&mut self) -> Result<(), ApiError> {
        if self.cursor >= self.history.len() {
            return Err(ApiError::Conflict("nothing to redo".into()));
        }
        // Forward to the next turn start of a human seat (or the end of the list).
        let starts = self.turn_starts(self.history.len());
        let to = starts
            .iter()
            .find(|(p, s)| *p > self.cursor && self.human_or_all(*s))
            .map_or(self.history.len(), |(p, _)| *p);
        self.rebuild(to);
        Ok(())
    }

    fn svg(&self, zh: bool, when: &str) -> (String, &'static str) {
        let pack = GameKind::of::<G>().pack();
        let title = if zh { pack.title_zh } else { pack.title };
        let seat = |s: Seat| match (s, zh) {
            (Seat::First, false) => "First",
            (Seat::Second, false) => "Second",
            (Seat::First, true) => "先手",
            (Seat::Second, true) => "後手",
        };
        let status = match (self.state.outcome(), mover(&self.state)) {
            (Some(o), _) => match (o.winner(), o.decisive.is_some(), zh) {
                (Some(w), false, false) => format!("{} wins", seat(w)),
                (Some(w), true, false) if pack.arbitration => {
                    format!("{} wins by arbitration", seat(w))
                }
                (Some(w), true, false) => format!("{} wins outright", seat(w)),
                (Some(w), false, true) => format!("{}勝", seat(w)),
                (Some(w), true, true) if pack.arbitration => format!("{}仲裁勝", seat(w)),
                (Some(w), true, true) => format!("{}直接勝", seat(w)),
                (None, _, false) => "Draw".into(),
                (None, _, true) => "和局".into(),
            },
            (None, Some(s)) => {
                if zh {
                    format!("輪到{}", seat(s))
                } else {
                    format!("{} to move", seat(s))
                }
            }
            (None, None) => String::new(),
        };
        let caption = [format!("{title} · {when}"), status, self.state.caption_line(zh)];
        (self.state.svg(&caption), G::PACK.svg_name)
    }

    fn ply(&self) -> usize {
        self.cursor
    }

    fn ai_job(&self, time: Duration, stop: engine::agent::StopFlag) -> Result<AiJob, ApiError> {
        if mover(&self.state).is_none() {
            return Err(ApiError::Conflict("the game is over".into()));
        }
        let mut agent = (self.ai)(time);
        agent.set_stop(stop.clone());
        let state = self.state.clone();
        // The AI's randomness depends only on the game's seed and the ply: a replayed game
        // asks the same questions and gets the same answers at equal budgets in simulations.
        let seed = self.seed ^ (self.cursor as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        Ok(Box::new(move |report: &mut dyn FnMut(&AiProgress)| {
            let mut rng = engine::rng_from_seed(seed);
            let mut s = state;
            let mut clicks = Vec::new();
            let mut last = None;
            let seat = mover(&s);
            while mover(&s).is_some() && mover(&s) == seat && !stop.load(std::sync::atomic::Ordering::Relaxed)
            {
                let a = agent.choose(&s, &mut rng, &mut |p| {
                    let pr = AiProgress {
                        sims: p.sims,
                        nodes: p.nodes,
                        depth: p.max_depth,
                        elapsed_ms: p.elapsed.as_millis() as u64,
                        best: p.best.map(|b| b.to_string()),
                        value: p.value,
                    };
                    report(&pr);
                    last = Some(pr);
                });
                let before = s.clone();
                s.play(a).expect("the agent plays a legal click");
                agent.observe(&before, a);
                clicks.push(a.to_string());
                if s.at_turn_start() {
                    break;
                }
            }
            (clicks, last)
        }))
    }

    fn apply_ai(&mut self, at: usize, actions: &[String]) -> bool {
        if at != self.cursor {
            return false;
        }
        for t in actions {
            if self.click(t).is_err() {
                self.rebuild(at);
                return false;
            }
        }
        true
    }

    fn ai_seats(&self) -> Seats {
        self.ai_seats
    }

    fn set_ai_seats(&mut self, seats: Seats) {
        self.ai_seats = seats;
    }

    fn to_move(&self) -> Option<Seat> {
        mover(&self.state)
    }

    fn hint_job(&self, time: Duration, stop: engine::agent::StopFlag) -> Result<HintJob, ApiError> {
        if mover(&self.state).is_none() {
            return Err(ApiError::Conflict("the game is over".into()));
        }
        let mut agent = (self.ai)(time);
        agent.set_stop(stop);
        let state = self.state.clone();
        let seed = self.seed ^ (self.cursor as u64).wrapping_mul(0x2545_f491_4f6c_dd1d);
        Ok(Box::new(move || {
            let mut rng = engine::rng_from_seed(seed);
            let started = std::time::Instant::now();
            let mut last = None;
            let best = agent.choose(&state, &mut rng, &mut |p| last = Some((p.sims, p.value)));
            let mut children = agent.root_children();
            let total: u64 = children.iter().map(|c| u64::from(c.visits)).sum();
            children.sort_by_key(|c| std::cmp::Reverse(c.visits));
            let mut top: Vec<Value> = children
                .iter()
                .filter(|c| c.visits > 0)
                .take(3)
                .map(|c| {
                    json!({
                        "action": c.action.to_string(),
                        "visits": c.visits,
                        "share": c.visits as f64 / total.max(1) as f64,
                        "value": c.q,
                    })
                })
                .collect();
            if top.is_empty() {
                // A forced click, or an agent without a tree (alpha-beta, the designer's AI):
                // its choice, with no visit share.
                top.push(json!({ "action": best.to_string(), "visits": null, "share": null, "value": null }));
            }
            json!({
                "agent": agent.name(),
                "best": best.to_string(),
                // From the mover's view, in [-1, 1]; null for an agent that reports none.
                "value": last.map(|(_, v)| v),
                "sims": last.map_or(0, |(n, _)| n),
                "elapsed_ms": started.elapsed().as_millis() as u64,
                "top": top,
            })
        }))
    }

    fn arbitration(&self) -> Option<Value> {
        self.state.arbitration_json()
    }
}

/// "first", "second", "both" or `null`.
pub fn seats_name(seats: Seats) -> Option<&'static str> {
    match seats {
        [true, true] => Some("both"),
        [true, false] => Some("first"),
        [false, true] => Some("second"),
        [false, false] => None,
    }
}

impl<G: Served> Session<G> {
    /// Undo goes back to the latest turn start before the cursor that belongs to a human
    /// seat (with an AI seat, its turns are taken back too).
    /// `starts` is [`Session::turn_starts`] up to the cursor.
    fn undo_target(&self, starts: &[(usize, Option<Seat>)]) -> Option<usize> {
        starts.iter().rev().find(|(p, s)| *p < self.cursor && self.human_or_all(*s)).map(|(p, _)| *p)
    }

    /// Whether undo and redo stop at a turn start of `seat`: a person's seat, or any seat
    /// when the AI plays both (undo then steps back one turn at a time).
    fn human_or_all(&self, seat: Option<Seat>) -> bool {
        self.ai_seats == [true, true] || seat.is_none_or(|s| !self.ai_seats[s.index()])
    }
}
