//! Banqi rule tests.
//!
//! The data-driven cases live in `fixtures/banqi.toml` (its header documents the format);
//! [`rule_fixtures`] loads them all and reports every failing case by name. Random-game
//! properties follow (every action legal, the incremental key equal to a recomputation, pool
//! counts consistent, state bytes round-tripping), then the hidden deal, action text and
//! malformed state bytes.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};

use engine::Features;
use engine::banqi::{Action, Banqi, Cell, Colour, Kind, PIECE_CODES, Piece, SQUARES, Setup, SetupError};
use engine::game::{Actor, DecodeError, Game, Seat, next_chance, to_bytes};
use proptest::prelude::*;
use rand::RngExt;
use serde::Deserialize;

const FIXTURES: &str = include_str!("fixtures/banqi.toml");

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Fixtures {
    case: Vec<Case>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    rule: String,
    position: Option<String>,
    #[serde(default)]
    moves: String,
    expect: Expect,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Expect {
    setup_error: Option<String>,
    #[serde(default)]
    legal: Vec<String>,
    #[serde(default)]
    illegal: Vec<String>,
    legal_actions: Option<Vec<String>>,
    legal_count: Option<usize>,
    actor: Option<String>,
    to_move: Option<String>,
    first_colour: Option<String>,
    outcome: Option<String>,
    quiet: Option<u8>,
    repetitions: Option<usize>,
    chance: Option<BTreeMap<String, f32>>,
    position: Option<String>,
}

fn colour_name(c: Option<Colour>) -> &'static str {
    match c {
        Some(Colour::Red) => "r",
        Some(Colour::Black) => "b",
        None => "-",
    }
}

fn setup_error_name(e: &SetupError) -> &'static str {
    match e {
        SetupError::Text(_) => "Text",
        SetupError::TooMany { .. } => "TooMany",
        SetupError::PoolMismatch { .. } => "PoolMismatch",
        SetupError::NoColours => "NoColours",
        SetupError::Quiet(_) => "Quiet",
    }
}

fn check(case: &Case) -> Result<(), String> {
    let e = &case.expect;
    let built = match &case.position {
        Some(p) => Banqi::from_position_string(p),
        None => Ok(Banqi::start()),
    };
    let mut g = match (built, &e.setup_error) {
        (Err(err), Some(want)) if setup_error_name(&err) == want => return Ok(()),
        (Err(err), _) => return Err(format!("setup refused: {err}")),
        (Ok(_), Some(want)) => return Err(format!("setup accepted; expected {want}")),
        (Ok(g), None) => g,
    };
    for m in case.moves.split_whitespace() {
        let a = g.parse_action(m).map_err(|err| err.to_string())?;
        g.play(a).map_err(|err| format!("move {m}: {err}"))?;
    }
    let mut legal = Vec::new();
    g.legal_actions(&mut legal);
    let legal_text: BTreeSet<String> = legal.iter().map(|a| a.to_string()).collect();
    if let Some(want) = &e.legal_actions {
        let want: BTreeSet<String> = want.iter().cloned().collect();
        if want != legal_text {
            return Err(format!("legal actions {legal_text:?}, expected {want:?}"));
        }
    }
    if let Some(n) = e.legal_count
        && legal.len() != n
    {
        return Err(format!("{} legal actions, expected {n}", legal.len()));
    }
    for m in &e.legal {
        let a = g.parse_action(m).map_err(|err| err.to_string())?;
        let mut h = g.clone();
        h.play(a).map_err(|err| format!("{m} should be legal: {err}"))?;
        if !legal.contains(&a) {
            return Err(format!("{m} is playable but not listed by legal_actions"));
        }
    }
    for m in &e.illegal {
        let a = g.parse_action(m).map_err(|err| err.to_string())?;
        let mut h = g.clone();
        if h.play(a).is_ok() {
            return Err(format!("{m} should be illegal"));
        }
        if h != g {
            return Err(format!("refusing {m} changed the state"));
        }
    }
    if let Some(want) = &e.actor {
        let got = match g.to_move() {
            Actor::Chance => "chance",
            Actor::Player(_) => "player",
        };
        if got != want {
            return Err(format!("actor {got}, expected {want}"));
        }
    }
    if let Some(want) = &e.to_move
        && colour_name(g.colour_to_move()) != want
    {
        return Err(format!("{} to move, expected {want}", colour_name(g.colour_to_move())));
    }
    if let Some(want) = &e.first_colour
        && colour_name(g.first_colour()) != want
    {
        return Err(format!("first seat plays {}, expected {want}", colour_name(g.first_colour())));
    }
    if let Some(want) = &e.outcome {
        let got = match g.outcome() {
            None => "none".to_string(),
            Some(o) => match o.winner() {
                None => "draw".into(),
                Some(seat) => colour_name(g.colour_of(seat)).to_string(),
            },
        };
        if &got != want {
            return Err(format!("outcome {got}, expected {want}"));
        }
    }
    if let Some(q) = e.quiet
        && g.quiet_plies() != q
    {
        return Err(format!("{} quiet plies, expected {q}", g.quiet_plies()));
    }
    if let Some(r) = e.repetitions
        && g.repetitions() != r
    {
        return Err(format!("{} occurrences, expected {r}", g.repetitions()));
    }
    if let Some(want) = &e.chance {
        let mut out = Vec::new();
        g.chance_outcomes(&mut out);
        let got: BTreeMap<String, f32> = out.iter().map(|(a, p)| (a.to_string(), *p)).collect();
        if got.len() != want.len()
            || want.iter().any(|(k, p)| got.get(k).is_none_or(|q| (q - p).abs() > 1e-6))
        {
            return Err(format!("chance outcomes {got:?}, expected {want:?}"));
        }
    }
    if let Some(want) = &e.position
        && &g.position_string() != want
    {
        return Err(format!("position {}, expected {want}", g.position_string()));
    }
    Ok(())
}

#[test]
fn rule_fixtures() {
    let fixtures: Fixtures = toml::from_str(FIXTURES).expect("fixtures parse");
    let mut names = BTreeSet::new();
    let mut failures = String::new();
    for case in &fixtures.case {
        assert!(names.insert(case.name.clone()), "duplicate case name {}", case.name);
        match catch_unwind(AssertUnwindSafe(|| check(case))) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => writeln!(failures, "{} ({}): {e}", case.name, case.rule).unwrap(),
            Err(_) => writeln!(failures, "{} ({}): panicked", case.name, case.rule).unwrap(),
        }
    }
    assert!(fixtures.case.len() >= 50, "only {} cases", fixtures.case.len());
    assert!(failures.is_empty(), "failing cases:\n{failures}");
}

/// Every invariant that must hold in any reachable state.
fn check_invariants(g: &Banqi) {
    assert_eq!(g.key(), g.compute_key(), "incremental key differs from a recomputation");
    let mut counts = [0u32; PIECE_CODES];
    let mut face_down = 0;
    for s in 0..SQUARES as u8 {
        match g.cell(s) {
            Cell::FaceDown => face_down += 1,
            Cell::Up(p) => counts[p.code() as usize] += 1,
            Cell::Empty => {}
        }
    }
    assert_eq!(face_down, g.pool_total(), "face-down squares and pool disagree");
    for code in 0..PIECE_CODES as u8 {
        let p = Piece::from_code(code);
        let total = counts[code as usize] + u32::from(g.pool_count(p));
        assert!(total <= u32::from(Kind::COUNT[p.kind as usize]), "too many {p:?}");
    }
    assert!(g.quiet_plies() <= 60);
    assert!(g.repetitions() >= 1 || g.pending_flip().is_some());
    // Bytes round-trip exactly.
    let bytes = to_bytes(g);
    assert_eq!(&Banqi::decode(&bytes).expect("own bytes decode"), g);
    // Features are finite and of the declared length.
    let mut f = vec![0.0; Banqi::FEATURE_LEN];
    g.encode_features(&mut f);
    assert!(f.iter().all(|x| x.is_finite()));
    let mut legal = Vec::new();
    g.legal_actions(&mut legal);
    assert_eq!(legal.is_empty(), g.outcome().is_some(), "legal actions exactly until the end");
    let listed: BTreeSet<_> = legal.iter().copied().collect();
    assert_eq!(listed.len(), legal.len(), "duplicate legal actions");
    for a in &legal {
        assert!(g.is_legal(*a), "{a} listed but is_legal says no");
        if let Some(i) = Banqi::action_index(a) {
            assert!(i < Banqi::POLICY_LEN);
        }
    }
    if g.outcome().is_none() && g.to_move() == Actor::Chance {
        let mut ch = Vec::new();
        g.chance_outcomes(&mut ch);
        let sum: f32 = ch.iter().map(|(_, p)| p).sum();
        assert!((sum - 1.0).abs() < 1e-5, "chance probabilities sum to {sum}");
    }
}

fn random_game(seed: u64, mut each: impl FnMut(&Banqi, Option<Action>)) -> Banqi {
    let mut rng = engine::rng_from_seed(seed);
    let mut g = Banqi::start();
    let mut legal = Vec::new();
    let mut ch = Vec::new();
    each(&g, None);
    while g.outcome().is_none() {
        let a = match g.to_move() {
            Actor::Chance => engine::game::sample_chance(&g, &mut ch, &mut rng),
            Actor::Player(_) => {
                g.legal_actions(&mut legal);
                legal[rng.random_range(0..legal.len())]
            }
        };
        g.play(a).expect("a listed action is legal");
        each(&g, Some(a));
    }
    g
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn random_games_keep_every_invariant(seed in any::<u64>()) {
        let mut plies = 0;
        let end = random_game(seed, |g, _| {
            check_invariants(g);
            plies += 1;
        });
        prop_assert!(end.outcome().is_some());
        prop_assert!(plies > 32, "a game flips all 32 pieces or ends by capture: {plies} plies");
    }
}

#[test]
fn repetition_counts_match_a_replay_of_the_history() {
    // Recount every position's occurrences from the game record and compare.
    for seed in 0..6 {
        let mut seen: Vec<(u64, u8)> = Vec::new();
        random_game(seed, |g, a| {
            if g.pending_flip().is_some() {
                return;
            }
            let irreversible = match a {
                None | Some(Action::Reveal(_)) => true,
                Some(Action::Move { .. }) => g.quiet_plies() == 0,
                Some(Action::Flip(_)) => unreachable!("a flip leaves a chance node"),
            };
            if irreversible {
                seen.clear();
            }
            seen.push((g.key(), g.quiet_plies()));
            let count = seen.iter().filter(|(k, _)| *k == g.key()).count();
            assert_eq!(g.repetitions(), count, "seed {seed}");
            if count >= 3 {
                assert!(g.outcome().is_some(), "a third occurrence draws");
            }
        });
    }
}

#[test]
fn same_board_with_the_other_side_to_move_is_another_position() {
    let r = Banqi::from_position_string("8/8/G6g/8 r - 0 1").unwrap();
    let b = Banqi::from_position_string("8/8/G6g/8 b - 0 1").unwrap();
    assert_ne!(r.key(), b.key());
    assert_ne!(r, b);
}

#[test]
fn the_deal_is_fixed_by_its_seed_and_hidden_from_the_state() {
    let start = Banqi::start();
    let play = |deal: u64, order: &[u8]| {
        let mut g = start.clone();
        let mut rng = engine::rng_from_seed(99);
        let mut ch = Vec::new();
        let mut shown = BTreeMap::new();
        for &s in order {
            g.play(Action::Flip(s)).unwrap();
            let a = next_chance(&g, &start, deal, &mut ch, &mut rng);
            g.play(a).unwrap();
            if let Cell::Up(p) = g.cell(s) {
                shown.insert(s, p);
            }
            if g.outcome().is_some() {
                break;
            }
        }
        shown
    };
    let order: Vec<u8> = (0..32).collect();
    let reversed: Vec<u8> = (0..32).rev().collect();
    let a = play(7, &order);
    let b = play(7, &reversed);
    // The same deal shows the same piece under a square whatever the order of flips.
    for (s, p) in &a {
        if let Some(q) = b.get(s) {
            assert_eq!(p, q, "square {s}");
        }
    }
    assert_ne!(play(7, &order), play(8, &order), "another seed, another deal");
    // The deal is a permutation of the set.
    let deal = start.deal(7);
    let mut counts = [0u8; PIECE_CODES];
    for c in deal {
        counts[c as usize] += 1;
    }
    for code in 0..PIECE_CODES {
        assert_eq!(counts[code], Kind::COUNT[code % 7]);
    }
    // A state that could not have come from this start under the deal gets no dealt piece.
    let lone = Banqi::from_position_string("8/8/X7/Gg6 r s1 0 1").unwrap();
    let mut flipped = lone.clone();
    flipped.play(Action::Flip(8)).unwrap();
    let dealt = flipped.dealt_outcome(&lone, 3);
    assert_eq!(dealt, Some(Action::Reveal(Piece::new(Colour::Black, Kind::Pawn))));
    assert_eq!(flipped.dealt_outcome(&start, 3).filter(|a| !flipped.is_legal(*a)), None);
}

#[test]
fn perft_counts_flips_with_each_possible_piece() {
    use engine::perft::perft;
    let start = Banqi::start();
    // 32 squares × 14 kinds of piece.
    assert_eq!(perft(&start, 1), 32 * 14);
    // The second player can only flip (it has no face-up piece): 31 squares × the kinds left,
    // 13 after a king (one of each colour), 14 after anything else.
    assert_eq!(perft(&start, 2), 32 * 31 * (12 * 14 + 2 * 13));
}

#[test]
fn first_flip_colour_seats() {
    let mut g = Banqi::start();
    g.play(Action::Flip(0)).unwrap();
    g.play(Action::Reveal(Piece::new(Colour::Red, Kind::Cannon))).unwrap();
    assert_eq!(g.colour_of(Seat::First), Some(Colour::Red));
    assert_eq!(g.to_move(), Actor::Player(Seat::Second));
    assert_eq!(g.colour_to_move(), Some(Colour::Black));
}

#[test]
fn action_text_round_trips_and_refuses_garbage() {
    for a in [
        Action::Flip(0),
        Action::Flip(31),
        Action::Move { from: 12, to: 13 },
        Action::Move { from: 0, to: 24 },
        Action::Reveal(Piece::new(Colour::Black, Kind::Horse)),
        Action::Reveal(Piece::new(Colour::Red, Kind::King)),
    ] {
        assert_eq!(Action::parse(&a.to_string()).unwrap(), a);
    }
    assert_eq!(Action::Flip(5).to_string(), "f0f0");
    assert_eq!(Action::Move { from: 12, to: 20 }.to_string(), "e1e2");
    for bad in ["", "e1", "e1e", "e1e2e3", "i1e2", "e4e2", "=", "=Q", "=GG", "f0=G", "E1E2"] {
        assert!(Action::parse(bad).is_err(), "{bad:?} accepted");
    }
}

#[test]
fn malformed_state_bytes_are_refused_without_panicking() {
    let mut g = Banqi::start();
    g.play(Action::Flip(3)).unwrap();
    g.play(Action::Reveal(Piece::new(Colour::Red, Kind::Pawn))).unwrap();
    let good = to_bytes(&g);
    assert!(matches!(Banqi::decode(&good[..10]), Err(DecodeError::Truncated { .. })));
    let mut long = good.clone();
    long.push(0);
    assert!(matches!(Banqi::decode(&long), Err(DecodeError::Trailing(1))));
    let mut wrong = good.clone();
    wrong[0] = b'X';
    assert!(matches!(Banqi::decode(&wrong), Err(DecodeError::WrongGame { .. })));
    let mut version = good.clone();
    version[2] = 9;
    assert!(matches!(Banqi::decode(&version), Err(DecodeError::Version { .. })));
    let mut extra_piece = good.clone();
    // A face-down square turned into a face-up piece: the pool no longer matches the board.
    extra_piece[3 + 5] = Piece::new(Colour::Red, Kind::King).code();
    assert!(Banqi::decode(&extra_piece).is_err());
    let mut bad_cell = good.clone();
    bad_cell[3] = 200;
    assert!(Banqi::decode(&bad_cell).is_err());
    // Every single-byte change either decodes to a consistent state or is refused.
    for i in 0..good.len() {
        for v in [0u8, 1, 13, 14, 15, 60, 61, 255] {
            let mut b = good.clone();
            b[i] = v;
            if let Ok(s) = Banqi::decode(&b) {
                check_invariants(&s);
            }
        }
    }
}

#[test]
fn setup_round_trips_through_the_position_string() {
    let mut seen = 0;
    random_game(5, |g, _| {
        if g.pending_flip().is_some() {
            return;
        }
        let text = g.position_string();
        let back = Banqi::from_position_string(&text).unwrap();
        assert_eq!(back.position_string(), text);
        assert_eq!(back.to_setup(), g.to_setup());
        seen += 1;
    });
    assert!(seen > 32, "{seen} positions checked");
    assert_eq!(Setup::start().pool.iter().map(|&n| u32::from(n)).sum::<u32>(), 32);
}

#[test]
fn mcts_through_chance_nodes_takes_the_winning_capture() {
    use engine::eval::Rollout;
    use engine::mcts::{Budget, Mcts, MctsConfig};
    let g = Banqi::from_position_string("8/8/Gg6/8 r - 0 1").unwrap();
    let mut tree = Mcts::new(g, MctsConfig::default());
    let mut rng = engine::rng_from_seed(1);
    tree.search(&Rollout::default(), Budget::sims(300), &mut rng, &mut |_| {});
    assert_eq!(tree.best_action(), Some(Action::Move { from: 8, to: 9 }));
    // From the start the root's children are flips, each leading to a chance node whose
    // outcomes are visited in proportion to the pool.
    let mut tree = Mcts::new(Banqi::start(), MctsConfig::default());
    tree.search(&Rollout::default(), Budget::sims(2000), &mut rng, &mut |_| {});
    assert_eq!(tree.root_children().len(), 32);
    assert!(tree.principal_variation(2).len() == 2);
}

#[test]
fn rollout_mcts_beats_random_play() {
    use engine::arena::play_match;
    use engine::spec::AgentSpec;
    let mut points = 0.0;
    for m in 0..4 {
        let mut a = "mcts:sims=300,eval=rollout".parse::<AgentSpec>().unwrap().build::<Banqi>();
        let mut b = "random".parse::<AgentSpec>().unwrap().build::<Banqi>();
        points += play_match(&Default::default(), a.as_mut(), b.as_mut(), 100 + m).points_a;
    }
    assert!(points >= 3.5, "MCTS scored {points} of 4 matches against random play");
}
