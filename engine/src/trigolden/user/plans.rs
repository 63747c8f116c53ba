//! The user's AI's plans: what it may play in a position ([`raw_turn_choices`]), what its
//! tree and rollouts play ([`mcts_plans`]), what its minimax looks at ([`minimax_plans`]), and
//! playing one ([`apply`]). See the parent module for the rules in words.

use std::collections::BTreeSet;

use rand::RngExt;

use super::super::tracker::Links;
use super::super::{Action, Place, TriGolden};
use crate::Rng;
use crate::game::{Game, Seat};

/// What kind of turn a plan is.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PlanKind {
    /// One piece (the last turn): a scoring single link, or any legal placement.
    SinglePiece,
    /// A scoring single link, then a second piece chosen on the position after it.
    Single,
    /// Two pieces whose contacts with each other score, placed together.
    Double,
    /// Two pieces on two edges of one opponent piece.
    CoLive,
}

/// One turn of the user's AI: its kind and its pieces, in the order they are played.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Plan {
    /// The kind.
    pub kind: PlanKind,
    /// The placements (one or two).
    pub pieces: Vec<Place>,
}

impl Plan {
    fn one(kind: PlanKind, p: Place) -> Plan {
        Plan { kind, pieces: vec![p] }
    }

    /// `kind` and pieces, the pieces sorted unless their order matters (a single-link plan).
    fn signature(&self) -> (PlanKind, Vec<Place>) {
        let mut p = self.pieces.clone();
        if self.kind != PlanKind::Single {
            p.sort();
        }
        (self.kind, p)
    }
}

/// Which list [`raw_turn_choices`] returned.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RawKind {
    /// Scoring plans.
    Score,
    /// The last turn, nothing scores: every legal placement.
    Live,
    /// Nothing scores: co-live pairs.
    CoLive,
}

/// The mover's raw plans [`rawTurnChoices`].
#[derive(Clone, Debug)]
pub struct RawChoices {
    /// Which list.
    pub kind: RawKind,
    /// Has the mover a scoring single link (a method, whether or not a plan kept it)?
    pub has_scoring_single: bool,
    /// The plans.
    pub plans: Vec<Plan>,
    /// The position's link sets they were made from (kept for the filters).
    pub(super) links: Links,
}

/// The state after `plan`, or `None` if it cannot be played [`applyPlan`]. Two pieces placed
/// together go down in the plan's order, or the other way round if only that is legal.
pub fn apply(state: &TriGolden, plan: &Plan) -> Option<TriGolden> {
    let play = |order: &[Place]| {
        let mut s = state.clone();
        for &p in order {
            let a = Action::Place(p);
            if !s.is_legal(a) {
                return None;
            }
            s.play_unchecked(a);
        }
        Some(s)
    };
    match (plan.kind, plan.pieces.as_slice()) {
        (PlanKind::Double | PlanKind::CoLive, &[a, b]) => play(&[a, b]).or_else(|| play(&[b, a])),
        _ => play(&plan.pieces),
    }
}

/// The points `seat` gained from `before` to `after`.
pub(super) fn gain(before: &TriGolden, after: &TriGolden, seat: Seat) -> i32 {
    after.scores()[seat.index()] - before.scores()[seat.index()]
}

/// The owner of a method (the target piece's opponent).
pub(super) fn owner(state: &TriGolden, p: &Place) -> Seat {
    state.pieces()[usize::from(p.target)].owner.other()
}

/// `seat`'s scoring single links [`getScoringSingles`], in placement order.
fn scoring_singles(state: &TriGolden, links: &Links, seat: Seat) -> Vec<Place> {
    links
        .single
        .iter()
        .filter(|(p, pts)| owner(state, p) == seat && pts[seat.index()] > 0)
        .map(|(p, _)| *p)
        .collect()
}

/// `seat`'s scoring double links [`getScoringDoubles`]: pairs whose mutual contacts score.
fn scoring_doubles(state: &TriGolden, links: &Links, seat: Seat) -> Vec<(Place, Place)> {
    links
        .double
        .iter()
        .filter(|(a, _, _)| owner(state, a) == seat)
        .filter(|(a, b, _)| {
            let (Some(pa), Some(pb)) = (state.ghost(Action::Place(*a)), state.ghost(Action::Place(*b)))
            else {
                return false;
            };
            state.mutual_points(&pa, &pb)[seat.index()] > 0
        })
        .map(|(a, b, _)| (*a, *b))
        .collect()
}

/// The mover's live methods now (shape in stock), in placement order [`getLiveMethods`].
fn live_methods(state: &TriGolden, seat: Seat) -> Vec<Place> {
    let mut v: Vec<Place> = state
        .tracker()
        .methods()
        .iter()
        .map(|m| m.place)
        .filter(|p| owner(state, p) == seat && state.stock(seat, usize::from(p.shape)) > 0)
        .collect();
    v.sort();
    v.dedup();
    v
}

fn unique(plans: Vec<Plan>) -> Vec<Plan> {
    let mut seen = BTreeSet::new();
    plans.into_iter().filter(|p| seen.insert(p.signature())).collect()
}

/// The mover's scoring plans [`makeScoringTurnPlans`].
fn scoring_plans(state: &TriGolden, links: &Links) -> Vec<Plan> {
    let me = state.mover();
    let singles = scoring_singles(state, links, me);
    if state.is_single_turn() {
        return singles.into_iter().map(|p| Plan::one(PlanKind::SinglePiece, p)).collect();
    }
    let mut out = Vec::new();
    for first in &singles {
        let a = Action::Place(*first);
        if !state.is_legal(a) {
            continue;
        }
        let mut after_first = state.clone();
        after_first.play_unchecked(a);
        for second in live_methods(&after_first, me) {
            let b = Action::Place(second);
            if !after_first.is_legal(b) {
                continue;
            }
            let mut done = after_first.clone();
            done.play_unchecked(b);
            if gain(state, &done, me) > 0 {
                out.push(Plan { kind: PlanKind::Single, pieces: vec![*first, second] });
            }
        }
    }
    for (a, b) in scoring_doubles(state, links, me) {
        let plan = Plan { kind: PlanKind::Double, pieces: vec![a, b] };
        if apply(state, &plan).is_some_and(|s| gain(state, &s, me) > 0) {
            out.push(plan);
        }
    }
    unique(out)
}

/// The mover's raw plans [`rawTurnChoices`]; none at the opening or when the game is over.
pub fn raw_turn_choices(state: &TriGolden) -> RawChoices {
    let empty =
        |kind| RawChoices { kind, has_scoring_single: false, plans: Vec::new(), links: Links::default() };
    if state.outcome().is_some() || state.turns_played() == 0 || !state.at_turn_start() {
        return empty(RawKind::Score);
    }
    let me = state.mover();
    let links = state.links();
    let scoring = scoring_plans(state, &links);
    if !scoring.is_empty() {
        let has = !scoring_singles(state, &links, me).is_empty();
        return RawChoices { kind: RawKind::Score, has_scoring_single: has, plans: scoring, links };
    }
    if state.is_single_turn() {
        let plans = live_methods(state, me)
            .into_iter()
            .filter(|p| state.is_legal(Action::Place(*p)))
            .map(|p| Plan::one(PlanKind::SinglePiece, p))
            .collect();
        return RawChoices { kind: RawKind::Live, has_scoring_single: false, plans, links };
    }
    let plans = co_live_plans(state, &links);
    RawChoices { kind: RawKind::CoLive, has_scoring_single: false, plans, links }
}

/// The mover's co-live pairs as plans [`makeCoLivePlans`].
pub(super) fn co_live_plans(state: &TriGolden, links: &Links) -> Vec<Plan> {
    let me = state.mover();
    let plans = links
        .co_live
        .iter()
        .filter(|(a, _)| owner(state, a) == me)
        .map(|(a, b)| Plan { kind: PlanKind::CoLive, pieces: vec![*a, *b] })
        .collect();
    unique(plans)
}

/// Can the opponent go on after `child` [`opponentCanContinue`]: the game did not end with
/// `me` losing by arbitration.
pub(super) fn safe(child: &TriGolden, me: Seat) -> bool {
    child.outcome().is_none_or(|o| o.decisive != Some(me.other()))
}

/// What can score for `seat`: its scoring single and double links [`scoringThreatSet`].
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Threat {
    Single(Place),
    Double(Place, Place),
}

fn threats(state: &TriGolden, links: &Links, seat: Seat) -> BTreeSet<Threat> {
    let mut t: BTreeSet<Threat> =
        scoring_singles(state, links, seat).into_iter().map(Threat::Single).collect();
    t.extend(scoring_doubles(state, links, seat).into_iter().map(|(a, b)| Threat::Double(a, b)));
    t
}

/// The plans the tree expands and the rollouts play [`mctsPlans`] (possibly none).
pub fn mcts_plans(state: &TriGolden) -> Vec<Plan> {
    filter_raw(state, &raw_turn_choices(state))
}

/// [`mcts_plans`]'s filters over `raw`, the raw plans of `state`.
pub(super) fn filter_raw(state: &TriGolden, raw: &RawChoices) -> Vec<Plan> {
    if raw.plans.is_empty() {
        return Vec::new();
    }
    let me = state.mover();
    let safe_plans: Vec<(Plan, TriGolden)> = raw
        .plans
        .iter()
        .filter_map(|p| {
            let child = apply(state, p)?;
            safe(&child, me).then_some((p.clone(), child))
        })
        .collect();
    if raw.kind == RawKind::Score || safe_plans.is_empty() {
        return safe_plans.into_iter().map(|(p, _)| p).collect();
    }
    let before = threats(state, &raw.links, me.other());
    let (mut disrupting, mut no_new) = (Vec::new(), Vec::new());
    for (p, child) in safe_plans {
        let after = threats(&child, &child.links(), me.other());
        if after.iter().any(|t| !before.contains(t)) {
            continue;
        }
        if before.iter().any(|t| !after.contains(t)) {
            disrupting.push(p.clone());
        }
        no_new.push(p);
    }
    if disrupting.is_empty() { no_new } else { disrupting }
}

/// The plans the minimax looks at [`minimaxPlans`].
pub fn minimax_plans(state: &TriGolden, rng: &mut Rng) -> Vec<Plan> {
    let raw = raw_turn_choices(state);
    if state.mover() == Seat::Second
        && state.is_single_turn()
        && !raw.has_scoring_single
        && raw.kind == RawKind::Live
        && !raw.plans.is_empty()
    {
        let i = rng.random_range(0..raw.plans.len());
        return vec![raw.plans[i].clone()];
    }
    raw.plans
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_apply_and_signatures_ignore_order_except_for_single_links() {
        let a = Place { target: 1, edge: 0, shape: 0, mirror: false, own: 0 };
        let b = Place { target: 1, edge: 2, shape: 1, mirror: true, own: 1 };
        let co = |x, y| Plan { kind: PlanKind::CoLive, pieces: vec![x, y] };
        assert_eq!(co(a, b).signature(), co(b, a).signature());
        let single = |x, y| Plan { kind: PlanKind::Single, pieces: vec![x, y] };
        assert_ne!(single(a, b).signature(), single(b, a).signature());
        assert_eq!(unique(vec![co(a, b), co(b, a), single(a, b)]).len(), 2);
    }
}
