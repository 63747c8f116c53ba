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
