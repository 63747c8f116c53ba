//! TriGolden rule fixtures: positions given by their actions, with what the rules say about
//! them (edge states, scores, the outcome, legal and illegal clicks). The cases live in
//! `fixtures/trigolden.toml` (its header documents the format); [`rule_fixtures`] checks them
//! all and names every failing case.
//!
//! The positions were found by [`find_fixture_positions`] (ignored; run it with `--ignored
//! --nocapture` to list candidates) in seeded random games, then each was drawn with
//! `zeroplay render` and its expectation checked by eye on the picture before it was written
//! down.

use engine::game::{Game, Seat};
use engine::trigolden::shapes::ShapeTable;
use engine::trigolden::tracker::EdgeState;
use engine::trigolden::{Action, Options, ScoringMode, TriGolden};
use serde::Deserialize;

const FIXTURES: &str = include_str!("fixtures/trigolden.toml");

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Fixtures {
    case: Vec<Case>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    #[serde(default)]
    scoring: Option<String>,
    /// A shape table (TOML text) instead of the default set.
    #[serde(default)]
    pieces: Option<String>,
    actions: String,
    #[serde(default)]
    edges: Vec<(u8, u8, String)>,
    #[serde(default)]
    scores: Option<[i32; 2]>,
    #[serde(default)]
    outcome: Option<String>,
    #[serde(default)]
    legal: Vec<String>,
    #[serde(default)]
    illegal: Vec<String>,
    /// The user AI's candidate rules in the final position (`trigolden-user`), if given.
    #[serde(default)]
    user: Option<UserCase>,
}

/// What the user AI's plan lists must hold. A plan is written `kind click click`, the kind
/// one of `piece` (one-piece turn), `single`, `double` or `co-live`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UserCase {
    /// Which list the raw plans come from: `score`, `live` or `co-live`.
    kind: String,
    /// Plans that must be raw plans, and plans that must not.
    #[serde(default)]
    plans: Vec<String>,
    #[serde(default)]
    no_plans: Vec<String>,
    /// The first clicks of the raw single-link plans, exactly (sorted).
    #[serde(default)]
    first: Option<Vec<String>>,
    /// The number of raw plans.
    #[serde(default)]
    count: Option<usize>,
    /// Plans the tree and rollouts keep (`mcts_plans`), and raw plans they must drop.
    #[serde(default)]
    tree: Vec<String>,
    #[serde(default)]
    no_tree: Vec<String>,
    /// The number of plans the tree keeps.
    #[serde(default)]
    tree_count: Option<usize>,
    /// The minimax looks at one random raw plan (the second player's last piece) instead of
    /// all of them.
    #[serde(default)]
    minimax_random: bool,
}

fn show_plan(p: &engine::trigolden::user::Plan) -> String {
    use engine::trigolden::user::PlanKind;
    let kind = match p.kind {
        PlanKind::SinglePiece => "piece",
        PlanKind::Single => "single",
        PlanKind::Double => "double",
        PlanKind::CoLive => "co-live",
    };
    let clicks: Vec<String> = p.pieces.iter().map(|x| Action::Place(*x).to_string()).collect();
    format!("{kind} {}", clicks.join(" "))
}

/// Checks `u` against the user AI's plans in `g`. Two-piece plans placed together (double,
/// co-live) match in either order; a single-link plan's order is its meaning.
fn check_user(g: &TriGolden, u: &UserCase) -> Result<(), String> {
    use engine::trigolden::user::{RawKind, mcts_plans, minimax_plans, raw_turn_choices};
    let norm = |text: &str| -> Result<String, String> {
        let mut w: Vec<&str> = text.split_whitespace().collect();
        if w.len() < 2 {
            return Err(format!("bad plan {text:?}"));
        }
        for c in &w[1..] {
            g.parse_action(c).map_err(|e| format!("plan {text:?}: {e}"))?;
        }
        if matches!(w[0], "double" | "co-live") {
            w[1..].sort_unstable();
        }
        Ok(w.join(" "))
    };
    let set = |plans: &[engine::trigolden::user::Plan]| -> Result<Vec<String>, String> {
        plans.iter().map(|p| norm(&show_plan(p))).collect()
    };
    let raw = raw_turn_choices(g);
    let kind = match raw.kind {
        RawKind::Score => "score",
        RawKind::Live => "live",
        RawKind::CoLive => "co-live",
    };
    if kind != u.kind {
        return Err(format!("user AI plans from the {kind} list, want {}", u.kind));
    }
    let raw_set = set(&raw.plans)?;
    let tree_set = set(&mcts_plans(g))?;
    for (list, inside, want, what) in [
        (&u.plans, &raw_set, true, "a raw plan"),
        (&u.no_plans, &raw_set, false, "a raw plan"),
        (&u.tree, &tree_set, true, "a tree plan"),
        (&u.no_tree, &tree_set, false, "a tree plan"),
    ] {
        for p in list {
            if inside.contains(&norm(p)?) != want {
                return Err(format!("{p:?} should {}be {what}", if want { "" } else { "not " }));
            }
        }
    }
    for p in &u.no_tree {
        if !raw_set.contains(&norm(p)?) {
            return Err(format!("{p:?} is not even a raw plan (no_tree is for plans the filters drop)"));
        }
    }
    if let Some(first) = &u.first {
        let mut got: Vec<String> = raw
            .plans
            .iter()
            .filter(|p| p.kind == engine::trigolden::user::PlanKind::Single)
            .map(|p| Action::Place(p.pieces[0]).to_string())
            .collect();
        got.sort();
        got.dedup();
        if &got != first {
            let sample: Vec<&String> = raw_set.iter().step_by(raw_set.len().div_ceil(12).max(1)).collect();
            return Err(format!("first clicks {got:?}, want {first:?}; raw plans include {sample:?}"));
        }
    }
    if let Some(n) = u.count
        && raw_set.len() != n
    {
        return Err(format!("{} raw plans, want {n}", raw_set.len()));
    }
    if let Some(n) = u.tree_count
        && tree_set.len() != n
    {
        return Err(format!("{} tree plans, want {n}", tree_set.len()));
    }
    let mut picks = std::collections::BTreeSet::new();
    for seed in 0..16 {
        let m = minimax_plans(g, &mut engine::rng_from_seed(seed));
        if u.minimax_random {
            if m.len() != 1 || !raw.plans.contains(&m[0]) {
                return Err(format!("minimax plans {m:?}, want one raw plan"));
            }
            picks.insert(show_plan(&m[0]));
        } else if m != raw.plans {
            return Err("the minimax should look at every raw plan".into());
        }
    }
    if u.minimax_random && picks.len() < 2 {
        return Err(format!("16 seeds picked only {picks:?}"));
    }
    Ok(())
}

fn state(name: &str) -> EdgeState {
    match name {
        "live" => EdgeState::Live,
        "glued" => EdgeState::Glued,
        "poked" => EdgeState::Poked,
        "clamped" => EdgeState::Clamped,
        "suffocated" => EdgeState::Suffocated,
        other => panic!("unknown edge state {other:?}"),
    }
}

fn run(case: &Case) -> Result<(), String> {
    let scoring = match case.scoring.as_deref() {
        None | Some("bracer") => ScoringMode::Bracer,
        Some("trigolden") => ScoringMode::Trigolden,
        Some("same-owner") => ScoringMode::SameOwner,
        Some(other) => return Err(format!("unknown scoring {other:?}")),
    };
    let shapes = match &case.pieces {
        Some(t) => std::sync::Arc::new(ShapeTable::parse(t).map_err(|e| e.to_string())?),
        None => Options::default().shapes,
    };
    let mut g = TriGolden::new_game(&Options { scoring, shapes, ..Options::default() });
    for (i, w) in case.actions.split_whitespace().enumerate() {
        let a = g.parse_action(w).map_err(|e| format!("action {}: {e}", i + 1))?;
        g.play(a).map_err(|e| format!("action {} ({w}): {e}", i + 1))?;
    }
    let states = g.edge_states();
    for (p, e, want) in &case.edges {
        let got = states.get(usize::from(*p)).map(|s| s[usize::from(*e)]);
        if got != Some(state(want)) {
            return Err(format!("piece {p} edge {e}: {got:?}, want {want}"));
        }
    }
    if let Some(s) = case.scores
        && g.scores() != s
    {
        return Err(format!("scores {:?}, want {s:?}", g.scores()));
    }
    if let Some(o) = &case.outcome {
        let got = match g.outcome() {
            None => "none".to_string(),
            Some(o) => match o.decisive {
                Some(Seat::First) => "arbitration:first".into(),
                Some(Seat::Second) => "arbitration:second".into(),
                None => "points".into(),
            },
        };
        if &got != o {
            return Err(format!("outcome {got}, want {o}"));
        }
    }
    if let Some(u) = &case.user {
        check_user(&g, u)?;
    }
    for (list, want) in [(&case.legal, true), (&case.illegal, false)] {
        for w in list {
            let a: Action = g.parse_action(w).map_err(|e| e.to_string())?;
            if g.is_legal(a) != want {
                return Err(format!("{w} should {}be legal", if want { "" } else { "not " }));
            }
        }
    }
    Ok(())
}

#[test]
fn rule_fixtures() {
    let f: Fixtures = toml::from_str(FIXTURES).expect("fixtures parse");
    assert!(f.case.len() >= 8, "{} cases", f.case.len());
    let failures: Vec<String> =
        f.case.iter().filter_map(|c| run(c).err().map(|e| format!("{}: {e}", c.name))).collect();
    assert!(failures.is_empty(), "failing fixtures:\n{}", failures.join("\n"));
}

/// Lists, for each kind of fixture, the shortest position of seeded random games that shows
/// it (the action list, and what to look at).
#[test]
#[ignore]
fn find_fixture_positions() {
    let mut best: std::collections::BTreeMap<&str, (usize, String)> = Default::default();
    let mut note = |kind: &'static str, g: &TriGolden, actions: &[Action], what: String| {
        let n = actions.len();
        if best.get(kind).is_none_or(|(m, _)| n < *m) {
            let text: Vec<String> = actions.iter().map(ToString::to_string).collect();
            best.insert(
                kind,
                (
                    n,
                    format!(
                        "{} | {what} | scores {:?} | outcome {:?}",
                        text.join(" "),
                        g.scores(),
                        g.outcome()
                    ),
                ),
            );
        }
    };
    for seed in 0..150u64 {
        let mut rng = engine::rng_from_seed(seed);
        let mut g = TriGolden::new_game(&Options::default());
        let mut actions = Vec::new();
        let mut buf = Vec::new();
        while g.outcome().is_none() {
            g.legal_actions(&mut buf);
            let a = buf[rand::RngExt::random_range(&mut rng, 0..buf.len())];
            let before = g.scores();
            g.play(a).unwrap();
            actions.push(a);
            if !g.at_turn_start() {
                continue;
            }
            for (i, s) in g.edge_states().iter().enumerate() {
                for (e, st) in s.iter().enumerate() {
                    let (l, _) = g.pieces()[i].edges[e];
                    match st {
                        EdgeState::Poked => note("poked", &g, &actions, format!("piece {i} edge {e}")),
                        EdgeState::Clamped if l == engine::trigolden::shapes::Len::One => {
                            note("clamped length-1", &g, &actions, format!("piece {i} edge {e}"))
                        }
                        EdgeState::Clamped => {
                            note("clamped longer", &g, &actions, format!("piece {i} edge {e}"))
                        }
                        EdgeState::Suffocated => {
                            note("suffocated", &g, &actions, format!("piece {i} edge {e}"))
                        }
                        _ => {}
                    }
                }
            }
            if g.scores() != before && g.scores().iter().zip(before).any(|(a, b)| a - b >= 2) {
                note("scored 2+", &g, &actions, format!("{before:?} -> {:?}", g.scores()));
            }
            if let Some(o) = g.outcome()
                && o.decisive.is_some()
            {
                note("arbitration", &g, &actions, format!("{o:?} at turn {}", g.turns_played()));
            }
            if g.outcome().is_none() && g.turns_played() >= 2 {
                for t in g.legal_turns() {
                    if let (Action::Place(a), Some(Action::Place(b))) = (t[0], t.get(1).copied())
                        && a.target != b.target
                    {
                        note("rule 6 pair", &g, &actions, format!("legal turn {} {}", t[0], t[1]));
                        break;
                    }
                }
            }
        }
    }
    for (k, (_, v)) in best {
        println!("== {k}\n{v}\n");
    }
}

/// The small set used to reach the last turn quickly: one of each shape per player, so a game
/// is four turns (P1 1, P2 2, P1 2, P2 1).
const SMALL_SET: &str = "[[piece]]\nname = \"A\"\ncount = 1\nedges = [\"1@0\", \"1@3\", \"2@5\", \"phi@9\"]\n[[piece]]\nname = \"B\"\ncount = 1\nedges = [\"1@0\", \"2phi@3\", \"phi2@7\", \"1@9\"]\n[[piece]]\nname = \"C\"\ncount = 1\nedges = [\"1@0\", \"phi2@3\", \"phi@7\", \"1@8\"]\n";

/// Lists games of the small set that end by arbitration on the last, single-piece turn, and
/// turns where a point is touched by more than one piece.
#[test]
#[ignore]
fn find_last_turn_arbitration_and_shared_points() {
    let options =
        Options { shapes: std::sync::Arc::new(ShapeTable::parse(SMALL_SET).unwrap()), ..Options::default() };
    let mut found = 0;
    for seed in 0..3000u64 {
        let mut rng = engine::rng_from_seed(seed);
        let mut g = TriGolden::new_game(&options);
        let mut actions = Vec::new();
        let mut buf = Vec::new();
        while g.outcome().is_none() {
            g.legal_actions(&mut buf);
            let a = buf[rand::RngExt::random_range(&mut rng, 0..buf.len())];
            g.play(a).unwrap();
            actions.push(a.to_string());
        }
        if let Some(o) = g.outcome()
            && o.decisive.is_some()
            && g.turns_played() + 1 == g.total_turns()
        {
            println!("last-turn arbitration: {} | {o:?}", actions.join(" "));
            found += 1;
            if found > 2 {
                break;
            }
        }
    }
    for seed in 0..200u64 {
        let mut rng = engine::rng_from_seed(seed);
        let mut g = TriGolden::new_game(&Options::default());
        let mut actions = Vec::new();
        let mut buf = Vec::new();
        while g.outcome().is_none() {
            g.legal_actions(&mut buf);
            let a = buf[rand::RngExt::random_range(&mut rng, 0..buf.len())];
            let before = g.scored_points().len();
            g.play(a).unwrap();
            actions.push(a.to_string());
            for &(q, v) in g.scored_points() {
                let touching = g
                    .pieces()
                    .iter()
                    .enumerate()
                    .filter(|(i, p)| *i != usize::from(q) && p.v.contains(&v))
                    .count();
                if touching > 1 && g.scored_points().len() > before && actions.len() < 16 {
                    println!("shared point on piece {q}: {} | scores {:?}", actions.join(" "), g.scores());
                    return;
                }
            }
        }
    }
}

/// Lists, for each of the user AI's candidate rules, the shortest position of seeded random
/// games (the default set and the small set) where it decides something, with the plans.
#[test]
#[ignore]
fn find_user_ai_positions() {
    use engine::trigolden::user::{PlanKind, RawKind, apply, mcts_plans, raw_turn_choices};
    let mut best: std::collections::BTreeMap<String, (usize, String)> = Default::default();
    for (set, seeds) in [("small", 0..400u64), ("default", 0..40u64)] {
        let options = match set {
            "small" => Options {
                shapes: std::sync::Arc::new(ShapeTable::parse(SMALL_SET).unwrap()),
                ..Options::default()
            },
            _ => Options::default(),
        };
        for seed in seeds {
            let mut rng = engine::rng_from_seed(seed);
            let mut g = TriGolden::new_game(&options);
            let mut actions: Vec<String> = Vec::new();
            let mut buf = Vec::new();
            while g.outcome().is_none() {
                if g.at_turn_start() && g.turns_played() > 0 {
                    let raw = raw_turn_choices(&g);
                    let tree = mcts_plans(&g);
                    let me = g.mover();
                    let mut found = Vec::new();
                    let singles = raw.plans.iter().filter(|p| p.kind == PlanKind::Single).count();
                    let doubles = raw.plans.iter().filter(|p| p.kind == PlanKind::Double).count();
                    if raw.kind == RawKind::Score && singles > 0 {
                        found.push(("score single", format!("{singles} single plans")));
                    }
                    if raw.kind == RawKind::Score && doubles > 0 && singles == 0 {
                        found.push(("score double", format!("{doubles} double plans")));
                    }
                    let unsafe_plans: Vec<String> = raw
                        .plans
                        .iter()
                        .filter(|p| {
                            apply(&g, p)
                                .is_some_and(|c| c.outcome().is_some_and(|o| o.decisive == Some(me.other())))
                        })
                        .map(show_plan)
                        .collect();
                    if !unsafe_plans.is_empty() && !tree.is_empty() {
                        found.push((
                            "ban",
                            format!(
                                "{:?} raw {} tree {} unsafe {}",
                                raw.kind,
                                raw.plans.len(),
                                tree.len(),
                                unsafe_plans.join(", ")
                            ),
                        ));
                    }
                    if raw.kind == RawKind::CoLive
                        && unsafe_plans.is_empty()
                        && !tree.is_empty()
                        && tree.len() < raw.plans.len()
                    {
                        found.push((
                            "threat filter",
                            format!(
                                "raw {} tree {}: {}",
                                raw.plans.len(),
                                tree.len(),
                                tree.iter().map(show_plan).collect::<Vec<_>>().join(", ")
                            ),
                        ));
                    }
                    let opp_singles = |g: &TriGolden| -> Vec<String> {
                        g.links()
                            .single
                            .iter()
                            .filter(|(p, pts)| {
                                g.pieces()[usize::from(p.target)].owner.other() == me.other()
                                    && pts[me.other().index()] > 0
                            })
                            .map(|(p, _)| Action::Place(*p).to_string())
                            .collect()
                    };
                    // The opponent's scoring single links, and whether a plan removes one.
                    let opp_threats = opp_singles(&g);
                    let breaks = |p: &engine::trigolden::user::Plan| {
                        apply(&g, p).is_some_and(|c| {
                            let after = opp_singles(&c);
                            opp_threats.iter().any(|t| !after.contains(t))
                        })
                    };
                    if raw.kind == RawKind::CoLive
                        && unsafe_plans.is_empty()
                        && !opp_threats.is_empty()
                        && !tree.is_empty()
                        && tree.len() < raw.plans.len()
                        && tree.iter().all(breaks)
                    {
                        found.push((
                            "threat break",
                            format!(
                                "opponent threats {opp_threats:?}; raw {} tree {}: {}",
                                raw.plans.len(),
                                tree.len(),
                                tree.iter().take(20).map(show_plan).collect::<Vec<_>>().join(", ")
                            ),
                        ));
                    }
                    if raw.kind == RawKind::Live && me == Seat::Second {
                        found.push(("last piece", format!("{} live plans", raw.plans.len())));
                    }
                    for (k, what) in found {
                        let key = format!("{k} ({set})");
                        if best.get(&key).is_none_or(|(n, _)| actions.len() < *n) {
                            let plans: Vec<String> = raw.plans.iter().take(12).map(show_plan).collect();
                            best.insert(
                                key,
                                (
                                    actions.len(),
                                    format!(
                                        "{} | {what} | scores {:?} | raw: {}",
                                        actions.join(" "),
                                        g.scores(),
                                        plans.join(", ")
                                    ),
                                ),
                            );
                        }
                    }
                }
                g.legal_actions(&mut buf);
                let a = buf[rand::RngExt::random_range(&mut rng, 0..buf.len())];
                g.play(a).unwrap();
                actions.push(a.to_string());
            }
        }
    }
    for (k, (_, v)) in best {
        println!("== {k}\n{v}\n");
    }
}
