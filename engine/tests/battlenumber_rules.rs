//! Battle Number rule tests.
//!
//! The data-driven cases live in `fixtures/battlenumber.toml` (its header documents the format);
//! [`rule_fixtures`] loads them all and reports every failing case by name. Tests that do not fit
//! the data format follow: piece geometry and movement, action text, raw actions the click
//! alphabet cannot express, perft of the opening, and malformed state bytes.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};

use engine::battlenumber::{
    Action, BattleNumber, Kind, Options, Piece, Setup, SetupError, draw_board, parse_action, parse_square,
    square_name,
};
use engine::game::{Actor, DecodeError, Game, Seat, to_bytes};
use engine::perft::perft;
use proptest::prelude::*;
use serde::Deserialize;

const FIXTURES: &str = include_str!("fixtures/battlenumber.toml");

// ---------------------------------------------------------------------------------------------
// Fixture format

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
    #[serde(default)]
    options: Options,
    board: Option<String>,
    extracted: Option<[u8; 2]>,
    extraction_total: Option<[i32; 2]>,
    placement_score: Option<i32>,
    #[serde(default)]
    clicks: String,
    bug: Option<String>,
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
    turns: Option<u64>,
    to_move: Option<String>,
    at_turn_start: Option<bool>,
    outcome: Option<String>,
    decisive: Option<bool>,
    scores: Option<[i32; 2]>,
    placement_score: Option<i32>,
    region_score: Option<i32>,
    extraction_totals: Option<[i32; 2]>,
    extracted: Option<[u8; 2]>,
    placed: Option<[u8; 2]>,
    #[serde(default)]
    empty: Vec<String>,
    #[serde(default)]
    occupied: Vec<String>,
}

fn load_fixtures() -> Vec<Case> {
    let fixtures: Fixtures = match toml::from_str(FIXTURES) {
        Ok(f) => f,
        Err(e) => panic!("fixtures/battlenumber.toml does not parse: {e}"),
    };
    // Every case must state at least one expectation (an empty [case.expect] checks nothing).
    let raw: toml::Table = toml::from_str(FIXTURES).expect("fixtures parse as a table");
    let raw_cases = raw["case"].as_array().expect("case is an array");
    let mut names = BTreeSet::new();
    for (case, raw_case) in fixtures.case.iter().zip(raw_cases) {
        assert!(names.insert(case.name.clone()), "duplicate fixture name {}", case.name);
        assert!(!case.rule.trim().is_empty(), "fixture {} names no rule", case.name);
        let expect = raw_case.get("expect").and_then(|e| e.as_table());
        assert!(expect.is_some_and(|e| !e.is_empty()), "fixture {} expects nothing", case.name);
    }
    fixtures.case
}

// ---------------------------------------------------------------------------------------------
// Helpers

fn action(text: &str) -> Result<Action, String> {
    parse_action(text).map_err(|e| e.to_string())
}

fn actions(seq: &str) -> Result<Vec<Action>, String> {
    seq.split_whitespace().map(action).collect()
}

fn square(text: &str) -> Result<u8, String> {
    parse_square(text).ok_or_else(|| format!("{text:?} is not a square"))
}

fn legal(s: &BattleNumber) -> Vec<Action> {
    let mut v = Vec::new();
    s.legal_actions(&mut v);
    v
}

fn seat_name(seat: Seat) -> &'static str {
    match seat {
        Seat::First => "first",
        Seat::Second => "second",
    }
}

fn variant(e: &SetupError) -> String {
    let dbg = format!("{e:?}");
    dbg.split(|c: char| !c.is_alphanumeric()).next().unwrap_or_default().to_string()
}

/// State invariants that hold everywhere: incremental bitboards, the byte round trip, the
/// setup round trip at turn boundaries, and "terminal exactly when no legal click".
fn check_invariants(s: &BattleNumber, at: &str, fails: &mut Vec<String>) {
    if s.bitboards() != s.recomputed_bitboards() {
        fails.push(format!("{at}: incremental bitboards differ from recomputed ones"));
    }
    let bytes = to_bytes(s);
    match BattleNumber::decode(&bytes) {
        Ok(d) if d == *s => {}
        Ok(_) => fails.push(format!("{at}: decode(encode(state)) is a different state")),
        Err(e) => fails.push(format!("{at}: decode(encode(state)) failed: {e}")),
    }
    if s.at_turn_start() {
        match BattleNumber::from_setup(&s.to_setup(), s.opts()) {
            Ok(d) if d == *s => {}
            Ok(_) => fails.push(format!("{at}: from_setup(to_setup(state)) is a different state")),
            Err(e) => fails.push(format!("{at}: from_setup(to_setup(state)) failed: {e}")),
        }
    }
    let n = legal(s).len();
    if s.outcome().is_some() != (n == 0) {
        fails.push(format!("{at}: outcome {:?} but {n} legal actions", s.outcome()));
    }
}

fn build(case: &Case) -> Result<BattleNumber, SetupError> {
    match &case.board {
        None => {
            assert!(
                case.extracted.is_none() && case.extraction_total.is_none() && case.placement_score.is_none(),
                "fixture {}: setup fields need a board",
                case.name
            );
            Ok(BattleNumber::new_game(&case.options))
        }
        Some(text) => {
            let setup = Setup {
                board: Setup::parse_board(text)?,
                extracted: case.extracted.unwrap_or([0, 0]),
                extraction_total: case.extraction_total.unwrap_or([0, 0]),
                placement_score: case.placement_score,
            };
            BattleNumber::from_setup(&setup, case.options)
        }
    }
}

/// Plays `seq` from `s` (checked) and requires it to be exactly one complete turn.
fn check_legal_turn(s: &BattleNumber, seq: &str) -> Result<(), String> {
    let clicks = actions(seq)?;
    if clicks.is_empty() {
        return Err("empty click sequence".into());
    }
    let mover = s.to_move();
    let mut t = s.clone();
    for (i, &a) in clicks.iter().enumerate() {
        t.play(a).map_err(|e| format!("click {} ({a}) refused: {e}", i + 1))?;
        let last = i + 1 == clicks.len();
        if t.at_turn_start() != last {
            return Err(if last {
                "the sequence does not complete the turn".into()
            } else {
                format!("the turn already ended after click {} ({a})", i + 1)
            });
        }
    }
    if t.outcome().is_none() && t.to_move() == mover {
        return Err("the same seat is still to move after the turn".into());
    }
    Ok(())
}

/// Plays all but the last click of `seq` (checked); the last must be refused.
fn check_illegal(s: &BattleNumber, seq: &str) -> Result<(), String> {
    let clicks = actions(seq)?;
    let (&last, prefix) = clicks.split_last().ok_or("empty click sequence")?;
    let mut t = s.clone();
    for (i, &a) in prefix.iter().enumerate() {
        t.play(a).map_err(|e| format!("prefix click {} ({a}) refused: {e}", i + 1))?;
    }
    if legal(&t).contains(&last) {
        return Err(format!("{last} is among the legal actions"));
    }
    if t.is_legal(last) {
        return Err(format!("is_legal({last}) is true"));
    }
    let before = t.clone();
    if t.play(last).is_ok() {
        return Err(format!("play({last}) was accepted"));
    }
    if t != before {
        return Err(format!("the refused play({last}) changed the state"));
    }
    Ok(())
}

fn run_case(case: &Case) -> Vec<String> {
    let mut fails = Vec::new();
    let e = &case.expect;
    let built = build(case);
    if let Some(want) = &e.setup_error {
        match built {
            Err(err) if variant(&err) == *want => {}
            Err(err) => fails.push(format!("setup refused as {err:?}, expected {want}")),
            Ok(_) => fails.push(format!("setup accepted, expected SetupError::{want}")),
        }
        return fails;
    }
    let mut s = match built {
        Ok(s) => s,
        Err(err) => return vec![format!("setup refused: {err}")],
    };
    check_invariants(&s, "setup", &mut fails);
    let clicks = match actions(&case.clicks) {
        Ok(c) => c,
        Err(err) => return vec![format!("clicks: {err}")],
    };
    for (i, &a) in clicks.iter().enumerate() {
        if let Err(err) = s.play(a) {
            fails.push(format!("click {} ({a}) refused: {err}", i + 1));
            return fails;
        }
        check_invariants(&s, &format!("after click {} ({a})", i + 1), &mut fails);
    }

    for seq in &e.legal {
        if let Err(err) = check_legal_turn(&s, seq) {
            fails.push(format!("legal {seq:?}: {err}"));
        }
    }
    for seq in &e.illegal {
        if let Err(err) = check_illegal(&s, seq) {
            fails.push(format!("illegal {seq:?}: {err}"));
        }
    }
    let now = legal(&s);
    if let Some(want) = &e.legal_actions {
        match want.iter().map(|t| action(t)).collect::<Result<BTreeSet<_>, _>>() {
            Err(err) => fails.push(format!("legal_actions: {err}")),
            Ok(want) => {
                let got: BTreeSet<Action> = now.iter().copied().collect();
                if got != want || got.len() != now.len() {
                    let show =
                        |v: &BTreeSet<Action>| v.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(" ");
                    fails.push(format!("legal actions [{}], expected [{}]", show(&got), show(&want)));
                }
            }
        }
    }
    if let Some(n) = e.legal_count
        && now.len() != n
    {
        fails.push(format!("{} legal actions, expected {n}", now.len()));
    }
    if let Some(n) = e.turns {
        let got = perft(&s, 1);
        if got != n {
            fails.push(format!("{got} complete turns, expected {n}"));
        }
    }
    if let Some(want) = &e.to_move {
        let got = match s.to_move() {
            Actor::Player(seat) => seat_name(seat),
            Actor::Chance => "chance",
        };
        if got != want {
            fails.push(format!("{got} to move, expected {want}"));
        }
    }
    if let Some(want) = e.at_turn_start
        && s.at_turn_start() != want
    {
        fails.push(format!("at_turn_start is {}, expected {want}", s.at_turn_start()));
    }
    if let Some(want) = &e.outcome {
        let got = match s.outcome() {
            None => "none",
            Some(o) => o.winner().map_or("draw", seat_name),
        };
        if got != want {
            fails.push(format!("outcome {got} ({:?}), expected {want}", s.outcome()));
        }
    }
    if e.decisive.is_some() || e.scores.is_some() {
        match s.outcome() {
            None => fails.push("expected a finished game".into()),
            Some(o) => {
                if let Some(d) = e.decisive
                    && o.decisive.is_some() != d
                {
                    fails.push(format!("outcome {o:?}: decisive is not {d}"));
                }
                if let Some(sc) = e.scores
                    && o.scores != sc
                {
                    fails.push(format!("scores {:?}, expected {sc:?}", o.scores));
                }
                if o.scores[0] != -o.scores[1] {
                    fails.push(format!("scores {:?} are not zero-sum", o.scores));
                }
            }
        }
    }
    if let Some(want) = e.placement_score
        && s.placement_score() != want
    {
        fails.push(format!("placement score {}, expected {want}", s.placement_score()));
    }
    if let Some(want) = e.region_score
        && s.region_score() != want
    {
        fails.push(format!("region score {}, expected {want}", s.region_score()));
    }
    if let Some(want) = e.extraction_totals
        && s.extraction_totals() != want
    {
        fails.push(format!("extraction totals {:?}, expected {want:?}", s.extraction_totals()));
    }
    if let Some(want) = e.extracted
        && s.extracted() != want
    {
        fails.push(format!("extracted {:?}, expected {want:?}", s.extracted()));
    }
    if let Some(want) = e.placed
        && s.placed() != want
    {
        fails.push(format!("placed {:?}, expected {want:?}", s.placed()));
    }
    for (list, want_empty) in [(&e.empty, true), (&e.occupied, false)] {
        for name in list {
            match square(name) {
                Err(err) => fails.push(err),
                Ok(sq) if s.piece(sq).is_none() != want_empty => fails.push(format!(
                    "{name} is {}, expected {}",
                    if want_empty { "occupied" } else { "empty" },
                    if want_empty { "empty" } else { "occupied" }
                )),
                Ok(_) => {}
            }
        }
    }
    if !fails.is_empty() {
        fails.push(format!("board after the clicks:\n{}", draw_board(&s, 0, false)));
    }
    fails
}

/// Runs the cases and returns a report of the failing ones (empty when all pass).
fn run_cases<'a>(cases: impl Iterator<Item = &'a Case>) -> (usize, String) {
    let mut report = String::new();
    let mut n = 0;
    for case in cases {
        n += 1;
        let fails = match catch_unwind(AssertUnwindSafe(|| run_case(case))) {
            Ok(f) => f,
            Err(p) => {
                let msg = p
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| p.downcast_ref::<&str>().copied())
                    .unwrap_or("?");
                vec![format!("panicked: {msg}")]
            }
        };
        if !fails.is_empty() {
            let _ = writeln!(report, "\n=== {} ({})", case.name, case.rule);
            for f in fails {
                let _ = writeln!(report, "  - {f}");
            }
        }
    }
    (n, report)
}

#[test]
fn rule_fixtures() {
    let cases = load_fixtures();
    let (n, report) = run_cases(cases.iter().filter(|c| c.bug.is_none()));
    let skipped: Vec<&str> = cases.iter().filter(|c| c.bug.is_some()).map(|c| c.name.as_str()).collect();
    eprintln!("{n} Battle Number fixtures checked; known-bug cases skipped: {skipped:?}");
    assert!(n >= 60, "only {n} fixtures");
    assert!(report.is_empty(), "failing Battle Number fixtures:{report}");
}

// ---------------------------------------------------------------------------------------------
// Pieces: solid sides, rotations, movement

const NORTH: u8 = 1;
const EAST: u8 = 2;
const SOUTH: u8 = 4;
const WEST: u8 = 8;

#[test]
fn solid_sides_rotate_clockwise() {
    use Kind::*;
    let table: [(Kind, [u8; 4]); 5] = [
        (SingleOne, [NORTH, EAST, SOUTH, WEST]),
        (DoubleTwo, [WEST | EAST, NORTH | SOUTH, WEST | EAST, NORTH | SOUTH]),
        (CornerTwo, [NORTH | WEST, NORTH | EAST, EAST | SOUTH, SOUTH | WEST]),
        (
            SurroundThree,
            [NORTH | WEST | EAST, NORTH | EAST | SOUTH, EAST | SOUTH | WEST, SOUTH | WEST | NORTH],
        ),
        (CrossZero, [0, 0, 0, 0]),
    ];
    for (kind, sides) in table {
        for (rot, &want) in sides.iter().enumerate() {
            assert_eq!(kind.solid_sides(rot as u8), want, "{kind:?} rotation {rot}");
            assert_eq!(want.count_ones() as i32, kind.triangles(), "{kind:?}: a triangle per solid edge");
        }
    }
    // Rotations that give the same piece are one move: S1, C2, T3 have 4, D2 2, X0 1.
    let want_rotations = [(SingleOne, 4), (DoubleTwo, 2), (CornerTwo, 4), (SurroundThree, 4), (CrossZero, 1)];
    for (kind, n) in want_rotations {
        assert_eq!(kind.rotations(), n, "{kind:?}");
        let distinct: BTreeSet<u8> = (0..4).map(|r| kind.solid_sides(r)).collect();
        assert_eq!(distinct.len(), n as usize, "{kind:?}: distinct rotations");
        let listed: BTreeSet<u8> = (0..n).map(|r| kind.solid_sides(r)).collect();
        assert_eq!(listed, distinct, "{kind:?}: rotations 0..{n} cover every distinct piece");
    }
}

/// Movement at each rotation, derived from the rules' table by hand: (row, column) offsets.
fn expected_moves(kind: Kind, rot: u8) -> BTreeSet<(i32, i32)> {
    let (n, e, s, w) = ((-1, 0), (0, 1), (1, 0), (0, -1));
    let v: Vec<(i32, i32)> = match (kind, rot) {
        (Kind::SingleOne, 0) => vec![n],
        (Kind::SingleOne, 1) => vec![e],
        (Kind::SingleOne, 2) => vec![s],
        (Kind::SingleOne, 3) => vec![w],
        (Kind::DoubleTwo, 0) => vec![w, e],
        (Kind::DoubleTwo, 1) => vec![n, s],
        (Kind::CornerTwo, 0) => vec![(-1, -1), (-2, -2)],
        (Kind::CornerTwo, 1) => vec![(-1, 1), (-2, 2)],
        (Kind::CornerTwo, 2) => vec![(1, 1), (2, 2)],
        (Kind::CornerTwo, 3) => vec![(1, -1), (2, -2)],
        (Kind::SurroundThree, 0) => vec![n, w, e],
        (Kind::SurroundThree, 1) => vec![e, n, s],
        (Kind::SurroundThree, 2) => vec![s, e, w],
        (Kind::SurroundThree, 3) => vec![w, s, n],
        _ => vec![],
    };
    v.into_iter().collect()
}

fn sq_at(r: i32, c: i32) -> Option<u8> {
    ((0..7).contains(&r) && (0..7).contains(&c)).then(|| (r * 7 + c) as u8)
}

#[test]
fn movement_rotates_with_the_piece() {
    // For each piece and rotation on d3 (and in a corner, to see the board edge), and each
    // square within two steps: a position holding only that piece (second seat's) and one of
    // its own Cross Zeros on the target. The piece is a legal start exactly when the target is
    // one of its moves.
    let pieces = [Kind::SingleOne, Kind::DoubleTwo, Kind::CornerTwo, Kind::SurroundThree, Kind::CrossZero];
    for (r0, c0) in [(3, 3), (0, 0), (6, 6), (1, 5)] {
        let from = sq_at(r0, c0).unwrap();
        for kind in pieces {
            for rot in 0..kind.rotations() {
                let moves = expected_moves(kind, rot);
                for dr in -2..=2 {
                    for dc in -2..=2 {
                        let Some(to) = sq_at(r0 + dr, c0 + dc) else { continue };
                        if to == from {
                            continue;
                        }
                        let mut setup =
                            Setup { extracted: [1, 1], placement_score: Some(0), ..Setup::default() };
                        setup.board[from as usize] = Some(Piece { owner: Seat::Second, kind, rot });
                        setup.board[to as usize] =
                            Some(Piece { owner: Seat::Second, kind: Kind::CrossZero, rot: 0 });
                        // The first seat needs a piece somewhere out of reach.
                        let far = if r0 < 4 { 48 } else { 0 };
                        setup.board[far] = Some(Piece { owner: Seat::First, kind: Kind::CrossZero, rot: 0 });
                        let s = BattleNumber::from_setup(&setup, Options::default()).unwrap();
                        let starts = legal(&s);
                        assert!(starts.contains(&Action::Square(to)), "own Cross Zero alone");
                        if kind == Kind::CrossZero {
                            // Own Cross Zero: a one-click extraction, no movement.
                            let mut t = s.clone();
                            t.play(Action::Square(from)).unwrap();
                            assert!(t.at_turn_start() && t.piece(to).is_some());
                            continue;
                        }
                        let want = moves.contains(&(dr, dc));
                        assert_eq!(
                            starts.contains(&Action::Square(from)),
                            want,
                            "{kind:?} r{rot} on {} -> {}",
                            square_name(from),
                            square_name(to)
                        );
                        if want {
                            let mut t = s.clone();
                            t.play(Action::Square(from)).unwrap();
                            assert_eq!(legal(&t), vec![Action::Square(to)]);
                            t.play(Action::Square(to)).unwrap();
                            assert!(t.at_turn_start());
                            assert!(t.piece(from).is_none() && t.piece(to).is_none());
                            assert_eq!(t.extraction_totals(), [0, 0], "own pieces only: no score");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn corner_two_jump_ignores_the_middle_square() {
    // Second's C2r2 on b1 moves SE to c2 (one step) or d3 (two). c2 holds each kind of piece in
    // turn, including the first seat's Cross Zero: the jump to d3 is always available.
    for kind in Kind::ALL {
        let mut setup = Setup { extracted: [1, 1], placement_score: Some(0), ..Setup::default() };
        let b1 = square("b1").unwrap() as usize;
        let c2 = square("c2").unwrap() as usize;
        let d3 = square("d3").unwrap() as usize;
        setup.board[b1] = Some(Piece { owner: Seat::Second, kind: Kind::CornerTwo, rot: 2 });
        setup.board[c2] = Some(Piece { owner: Seat::First, kind, rot: 0 });
        setup.board[d3] = Some(Piece { owner: Seat::Second, kind: Kind::CrossZero, rot: 0 });
        let mut s = BattleNumber::from_setup(&setup, Options::default()).unwrap();
        s.play(Action::Square(b1 as u8)).unwrap();
        assert!(legal(&s).contains(&Action::Square(d3 as u8)), "jump over {kind:?}");
        s.play(Action::Square(d3 as u8)).unwrap();
        assert!(s.piece(c2 as u8).is_some(), "the jumped-over square stays");
        assert_eq!(s.extraction_totals(), [0, 0], "a jumped-over piece is not on the path");
    }
}

// ---------------------------------------------------------------------------------------------
// Actions and the start position

#[test]
fn action_text() {
    for sq in 0..49u8 {
        let a = Action::Square(sq);
        assert_eq!(parse_action(&a.to_string()).unwrap(), a);
    }
    for kind in Kind::ALL {
        for rot in 0..kind.rotations() {
            let a = Action::Piece(kind, rot);
            assert_eq!(parse_action(&a.to_string()).unwrap(), a);
        }
        // Rotations beyond the distinct ones do not name a piece.
        for rot in kind.rotations()..6 {
            let text = format!("{}r{rot}", kind.code());
            assert!(parse_action(&text).is_err(), "{text}");
        }
    }
    assert_eq!(parse_action("d3").unwrap(), Action::Square(24));
    assert_eq!(parse_action("a0").unwrap(), Action::Square(0));
    assert_eq!(parse_action("g6").unwrap(), Action::Square(48));
    // A bare code is rotation 0; `C2`/`D2` (upper case) are pieces, `c2`/`d2` squares.
    assert_eq!(parse_action("S1").unwrap(), Action::Piece(Kind::SingleOne, 0));
    assert_eq!(parse_action("T3").unwrap(), Action::Piece(Kind::SurroundThree, 0));
    assert_eq!(parse_action("X0").unwrap(), Action::Piece(Kind::CrossZero, 0));
    assert_eq!(parse_action("c2r0").unwrap(), Action::Piece(Kind::CornerTwo, 0));
    for bad in ["", "h1", "d7", "a", "Q2r0", "C2r", "C2rx", "X0r1", "D2r2", "d33"] {
        assert!(parse_action(bad).is_err(), "{bad:?}");
    }
    let s = BattleNumber::new_game(&Options::default());
    assert_eq!(s.parse_action("C2r3").unwrap(), Action::Piece(Kind::CornerTwo, 3));
}

#[test]
fn bare_corner_two_and_double_two_codes_are_pieces_in_upper_case() {
    assert_eq!(parse_action("C2").unwrap(), Action::Piece(Kind::CornerTwo, 0));
    assert_eq!(parse_action("D2").unwrap(), Action::Piece(Kind::DoubleTwo, 0));
    assert_eq!(parse_action("c2").unwrap(), Action::Square(2 * 7 + 2));
    assert_eq!(parse_action("d2").unwrap(), Action::Square(2 * 7 + 3));
    assert_eq!(parse_action("D3").unwrap(), Action::Square(24));
}

#[test]
fn actions_outside_the_click_alphabet_are_refused() {
    let mut s = BattleNumber::new_game(&Options::default());
    for a in [Action::Square(49), Action::Square(255), Action::Piece(Kind::CornerTwo, 0)] {
        assert!(s.play(a).is_err(), "{a:?} at the start");
    }
    s.play(Action::Square(24)).unwrap();
    let before = s.clone();
    for a in [
        Action::Piece(Kind::CornerTwo, 4),
        Action::Piece(Kind::CornerTwo, 255),
        Action::Square(24),
        Action::Square(200),
    ] {
        assert!(!s.is_legal(a), "{a:?}");
        assert!(s.play(a).is_err(), "{a:?} after choosing d3");
    }
    assert_eq!(s, before);
    // A Double Two at rotation 2 and a Cross Zero at rotation 1 duplicate other rotations and are
    // not actions, even where the piece itself fits.
    let board = Setup::parse_board(
        ". . . . . . .  . . . . . . .  . . . . . . .  . . . 1C0 . . .  . . . . . . .  . . . . . . .  . . . . . . .",
    )
    .unwrap();
    let mut s = BattleNumber::from_setup(&Setup { board, ..Setup::default() }, Options::default()).unwrap();
    s.play(parse_action("e3").unwrap()).unwrap();
    assert!(s.is_legal(Action::Piece(Kind::DoubleTwo, 0)));
    assert!(s.is_legal(Action::Piece(Kind::CrossZero, 0)));
    for a in [
        Action::Piece(Kind::DoubleTwo, 2),
        Action::Piece(Kind::DoubleTwo, 3),
        Action::Piece(Kind::CrossZero, 1),
    ] {
        assert!(!legal(&s).contains(&a));
        assert!(s.play(a).is_err(), "{a:?}");
    }
}

#[test]
fn new_game_is_the_empty_setup_for_every_option() {
    use engine::battlenumber::{HoleRule, LeftoverRule, TriangleRegion};
    for hole_rule in [HoleRule::BorderConnected, HoleRule::Off] {
        for leftover_rule in [LeftoverRule::CheckAtLastPlacement, LeftoverRule::Off] {
            for triangle_region in [TriangleRegion::OwnSquare, TriangleRegion::Pointed] {
                let opts = Options { hole_rule, leftover_rule, triangle_region };
                let s = BattleNumber::new_game(&opts);
                assert_eq!(*s.options(), opts);
                assert_eq!(BattleNumber::from_setup(&Setup::default(), opts).unwrap(), s);
                assert_eq!(s.to_move(), Actor::Player(Seat::First));
                assert!(s.at_turn_start() && s.outcome().is_none() && s.in_placement());
                assert_eq!(s.hand(Seat::First), [5; 5]);
                assert_eq!(s.hand(Seat::Second), [5; 5]);
                assert_eq!(perft(&s, 1), 4);
                // Two states with different options are different states.
                if opts != Options::default() {
                    assert_ne!(s, BattleNumber::new_game(&Options::default()));
                }
            }
        }
    }
}

#[test]
fn opening_perft() {
    // Each of the four Corner Two rotations leaves two open and two solid sides at the centre:
    // 15 + 15 + 8 + 8 = 46 second moves (see the fixtures), 4 * 46 in all.
    let s = BattleNumber::new_game(&Options::default());
    assert_eq!(perft(&s, 1), 4);
    assert_eq!(perft(&s, 2), 184);
}

// ---------------------------------------------------------------------------------------------
// State bytes

/// A spread of states: the start, partial placements and extractions, full boards, terminal
/// states (decisive and on points), under several options.
fn sample_states() -> Vec<BattleNumber> {
    use engine::battlenumber::{HoleRule, LeftoverRule, TriangleRegion};
    let mut out = Vec::new();
    let opts_list = [
        Options::default(),
        Options {
            hole_rule: HoleRule::Off,
            leftover_rule: LeftoverRule::Off,
            triangle_region: TriangleRegion::Pointed,
        },
    ];
    for (i, opts) in opts_list.iter().enumerate() {
        let mut with_extraction = 0;
        for seed in 0..400u64 {
            let mut rng = engine::rng_from_seed(seed * 7 + i as u64);
            let mut s = BattleNumber::new_game(opts);
            let mut trace = vec![s.clone()];
            let mut buf = Vec::new();
            while s.outcome().is_none() {
                s.legal_actions(&mut buf);
                let a = buf[rand::RngExt::random_range(&mut rng, 0..buf.len())];
                s.play(a).unwrap();
                trace.push(s.clone());
            }
            let reached_extraction = trace.iter().any(|t| t.pending_path().is_some());
            if reached_extraction {
                with_extraction += 1;
            }
            if seed < 3 || (reached_extraction && with_extraction <= 3) {
                // Keep a handful of states from this game: every 7th plus the last few.
                let n = trace.len();
                out.extend(
                    trace
                        .iter()
                        .enumerate()
                        .filter(|(j, _)| j % 7 == 0 || *j + 4 >= n)
                        .map(|(_, t)| t.clone()),
                );
                out.extend(trace.iter().filter(|t| t.pending_path().is_some()).take(3).cloned());
            }
        }
        assert!(with_extraction > 0, "no random game reached the extraction phase");
    }
    out
}

#[test]
fn decode_refuses_truncated_trailing_foreign_and_versioned_bytes() {
    let states = sample_states();
    assert!(states.len() > 50);
    for s in &states {
        let bytes = to_bytes(s);
        assert_eq!(BattleNumber::decode(&bytes).as_ref(), Ok(s));
        for n in 0..bytes.len() {
            match BattleNumber::decode(&bytes[..n]) {
                Err(DecodeError::Truncated { .. }) => {}
                other => panic!("truncated to {n} of {} bytes: {other:?}", bytes.len()),
            }
        }
        for extra in [&[0u8][..], &[1, 2, 3], &bytes[..]] {
            let mut long = bytes.clone();
            long.extend_from_slice(extra);
            assert!(
                matches!(BattleNumber::decode(&long), Err(DecodeError::Trailing(n)) if n == extra.len()),
                "{} trailing bytes",
                extra.len()
            );
        }
        for magic in [*b"TG", *b"bn", *b"NB", [0, 0]] {
            let mut wrong = bytes.clone();
            wrong[..2].copy_from_slice(&magic);
            assert!(matches!(BattleNumber::decode(&wrong), Err(DecodeError::WrongGame { .. })));
        }
        for version in [0u8, 2, 3, 0x81, 255] {
            let mut wrong = bytes.clone();
            wrong[2] = version;
            assert!(matches!(
                BattleNumber::decode(&wrong),
                Err(DecodeError::Version { found, .. }) if found == version
            ));
        }
    }
}

/// Byte offsets of the score fields in a version-1 encoding: placement score, then the two
/// extraction totals (i32 LE each).
const SCORE_FIELDS: [usize; 3] = [57, 61, 65];

/// Whether `bytes` holds `i32::MIN` in a score field: decoding such bytes hits the known bug of
/// [`extreme_scores_are_refused_without_panicking`], so the soundness checks skip them.
fn hits_known_score_overflow(bytes: &[u8]) -> bool {
    SCORE_FIELDS.iter().any(|&at| {
        bytes.get(at..at + 4).is_some_and(|b| i32::from_le_bytes(b.try_into().unwrap()) == i32::MIN)
    })
}

/// Decoding `bytes` must not panic; if it succeeds the state must re-encode to the same bytes
/// and satisfy the state invariants.
fn decode_is_sound(bytes: &[u8]) -> Result<(), String> {
    if hits_known_score_overflow(bytes) {
        return Ok(());
    }
    let r = catch_unwind(|| BattleNumber::decode(bytes))
        .map_err(|_| format!("decode panicked on {bytes:02x?}"))?;
    if let Ok(s) = r {
        if to_bytes(&s) != bytes {
            return Err(format!("decoded {bytes:02x?} re-encodes differently"));
        }
        let mut fails = Vec::new();
        check_invariants(&s, "decoded", &mut fails);
        // Every offered click must be playable (a decoded state is a real position).
        for a in legal(&s) {
            let mut t = s.clone();
            if catch_unwind(AssertUnwindSafe(|| t.play(a))).map_or(true, |r| r.is_err()) {
                fails.push(format!("decoded state refuses its own legal action {a}"));
            }
        }
        if !fails.is_empty() {
            return Err(format!("{bytes:02x?}: {fails:?}"));
        }
    }
    Ok(())
}

#[test]
fn decode_survives_every_flipped_byte_and_bit() {
    let states = sample_states();
    let (mut tried, mut accepted) = (0, 0);
    for s in states.iter().step_by(3) {
        let bytes = to_bytes(s);
        for i in 0..bytes.len() {
            for flip in [0xffu8, 0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80] {
                let mut b = bytes.clone();
                b[i] ^= flip;
                decode_is_sound(&b).unwrap();
                tried += 1;
                accepted += usize::from(!hits_known_score_overflow(&b) && BattleNumber::decode(&b).is_ok());
            }
        }
    }
    eprintln!("{accepted} of {tried} mutated encodings decode (each re-encodes to its bytes)");
    assert!(accepted > 0 && accepted < tried);
}

#[test]
fn decode_refuses_impossible_partial_turns() {
    // Start position with a pending placement square that is not legal (a0), or off the board.
    let mut bytes = to_bytes(&BattleNumber::new_game(&Options::default()));
    let tag = bytes.len() - 1;
    assert_eq!(bytes[tag], 0);
    for sq in [0u8, 23, 49, 200] {
        let mut b = bytes.clone();
        b[tag] = 1;
        b.push(sq);
        assert!(matches!(BattleNumber::decode(&b), Err(DecodeError::Invalid(_))), "pending square {sq}");
    }
    // The legal one decodes to the state after clicking d3.
    bytes[tag] = 1;
    bytes.push(24);
    let mut s = BattleNumber::new_game(&Options::default());
    s.play(Action::Square(24)).unwrap();
    assert_eq!(BattleNumber::decode(&bytes), Ok(s));
    // A pending extraction path during placement, and an unknown tag.
    let mut b = to_bytes(&BattleNumber::new_game(&Options::default()));
    b[tag] = 2;
    b.push(24);
    b.extend_from_slice(&(1u64 << 24).to_le_bytes());
    assert!(matches!(BattleNumber::decode(&b), Err(DecodeError::Invalid(_))));
    let mut b = to_bytes(&BattleNumber::new_game(&Options::default()));
    b[tag] = 3;
    assert!(BattleNumber::decode(&b).is_err());
}

#[test]
fn decode_refuses_paths_the_mover_could_not_walk() {
    // Extraction position from the fixtures: second's d4 (S1, N) -> d3 (1T0) -> c3 (2X0).
    let board = Setup::parse_board(
        ". . . . . . .  . . . . . . .  . . . . . . .  . . 2X0 1T0 1S0 . .  . . . 2S0 . . .  . . . . . . .  . . . . . . 1X0",
    )
    .unwrap();
    let setup = Setup { board, extracted: [1, 1], placement_score: Some(0), ..Setup::default() };
    let s = BattleNumber::from_setup(&setup, Options::default()).unwrap();
    let mut mid = s.clone();
    mid.play(parse_action("d4").unwrap()).unwrap();
    mid.play(parse_action("d3").unwrap()).unwrap();
    let good = to_bytes(&mid);
    assert_eq!(BattleNumber::decode(&good), Ok(mid.clone()));
    let d3 = square("d3").unwrap();
    let d4 = square("d4").unwrap();
    let e3 = square("e3").unwrap();
    let c3 = square("c3").unwrap();
    let path = |cur: u8, visited: u64| {
        let mut b = to_bytes(&s);
        let tag = b.len() - 1;
        b[tag] = 2;
        b.push(cur);
        b.extend_from_slice(&visited.to_le_bytes());
        b
    };
    assert_eq!(good, path(d3, 1 << d3 | 1 << d4));
    for (cur, visited, why) in [
        (d3, 1u64 << d3, "starts on the opponent's piece"),
        (e3, 1 << d4 | 1 << d3 | 1 << e3, "e3 is a dead end"),
        (d4, 1 << d4 | 1 << d3, "the current square is not the path's end"),
        (d3, 1 << d3 | 1 << d4 | 1 << 0, "visits an empty square"),
        (c3, 1 << c3 | 1 << d3 | 1 << d4, "stands on the mover's Cross Zero"),
        (d3, 1 << d3 | 1 << d4 | 1 << 63, "visits a square off the board"),
        (60, 1 << d4, "current square off the board"),
    ] {
        assert!(BattleNumber::decode(&path(cur, visited)).is_err(), "{why}");
    }
}

/// A small extraction-phase position (second to move, one extraction each) with the given
/// placement score and extraction totals.
fn extraction_setup(placement_score: i32, extraction_total: [i32; 2]) -> Setup {
    let board = Setup::parse_board(
        ". . . . . . .  . . . . . . .  . . . . . . .  . . 2X0 1T0 1S0 . .  . . . 2S0 . . .  . . . . . . .  . . . . . . 1X0",
    )
    .unwrap();
    Setup { board, extracted: [1, 1], extraction_total, placement_score: Some(placement_score) }
}

#[test]
fn out_of_range_scores_are_refused() {
    for (ps, totals) in
        [(10_001, [0, 0]), (-10_001, [0, 0]), (0, [20_000, 0]), (0, [0, -20_000]), (i32::MAX, [0, 0])]
    {
        let r = BattleNumber::from_setup(&extraction_setup(ps, totals), Options::default());
        assert!(matches!(r, Err(SetupError::Extraction(_))), "{ps} {totals:?}: {r:?}");
    }
    let ok =
        BattleNumber::from_setup(&extraction_setup(-10_000, [10_000, -10_000]), Options::default()).unwrap();
    assert_eq!(ok.score_first(), -10_000 + 20_000);
    let bytes = to_bytes(&ok);
    for at in SCORE_FIELDS {
        let mut b = bytes.clone();
        b[at..at + 4].copy_from_slice(&(-10_001i32).to_le_bytes());
        assert!(matches!(BattleNumber::decode(&b), Err(DecodeError::Invalid(_))));
    }
}

#[test]
fn extreme_scores_are_refused_without_panicking() {
    for (ps, totals) in [(i32::MIN, [0, 0]), (0, [i32::MIN, 0]), (0, [0, i32::MIN])] {
        let setup = extraction_setup(ps, totals);
        let r = catch_unwind(|| BattleNumber::from_setup(&setup, Options::default()));
        assert!(matches!(r, Ok(Err(SetupError::Extraction(_)))), "from_setup {ps} {totals:?}");
    }
    let bytes =
        to_bytes(&BattleNumber::from_setup(&extraction_setup(0, [0, 0]), Options::default()).unwrap());
    for at in SCORE_FIELDS {
        let mut b = bytes.clone();
        b[at..at + 4].copy_from_slice(&i32::MIN.to_le_bytes());
        let r = catch_unwind(|| BattleNumber::decode(&b));
        assert!(matches!(r, Ok(Err(DecodeError::Invalid(_)))), "decode with i32::MIN at byte {at}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 400,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Random mutations of valid encodings: overwrite, insert and delete bytes. Decoding never
    /// panics, and what it accepts re-encodes to the same bytes.
    #[test]
    fn decode_survives_random_mutations(
        seed in any::<u64>(),
        edits in prop::collection::vec((any::<u8>(), any::<usize>(), any::<u8>()), 1..6),
    ) {
        let mut rng = engine::rng_from_seed(seed);
        let mut s = BattleNumber::new_game(&Options::default());
        let stop = rand::RngExt::random_range(&mut rng, 0..130usize);
        let mut buf = Vec::new();
        for _ in 0..stop {
            if s.outcome().is_some() {
                break;
            }
            s.legal_actions(&mut buf);
            let a = buf[rand::RngExt::random_range(&mut rng, 0..buf.len())];
            s.play(a).unwrap();
        }
        let mut bytes = to_bytes(&s);
        for (op, pos, val) in edits {
            let i = pos % (bytes.len() + 1);
            match op % 4 {
                0 | 1 if i < bytes.len() => bytes[i] = val,
                2 => bytes.insert(i, val),
                3 if i < bytes.len() => { bytes.remove(i); }
                _ => bytes.push(val),
            }
        }
        prop_assert!(decode_is_sound(&bytes).is_ok(), "{:?}", decode_is_sound(&bytes));
    }

    /// Arbitrary bytes behind a valid header: never a panic.
    #[test]
    fn decode_survives_random_bodies(body in prop::collection::vec(any::<u8>(), 0..80)) {
        let mut bytes = b"BN\x01".to_vec();
        bytes.extend_from_slice(&body);
        prop_assert!(decode_is_sound(&bytes).is_ok());
    }
}
