//! MCTS finds forced wins in small Battle Number end positions: one built by hand, and many
//! cut from random games, each checked against an exact minimax solver.

use engine::agent::Agent;
use engine::battlenumber::{BattleNumber, Options, Setup};
use engine::game::{Actor, Game, Seat};
use engine::spec::AgentSpec;

/// Exact result for the first seat with best play: +1 win, 0 draw, −1 loss.
fn solve(s: &BattleNumber) -> i32 {
    if let Some(o) = s.outcome() {
        return match o.winner() {
            Some(Seat::First) => 1,
            Some(Seat::Second) => -1,
            None => 0,
        };
    }
    let Actor::Player(mover) = s.to_move() else { unreachable!() };
    let mut actions = Vec::new();
    s.legal_actions(&mut actions);
    let values = actions.iter().map(|&a| {
        let mut c = s.clone();
        c.play_unchecked(a);
        solve(&c)
    });
    if mover == Seat::First { values.max().unwrap() } else { values.min().unwrap() }
}

/// Plays the mover's whole turn with `agent`, returning the position after it.
fn agent_turn(agent: &mut dyn Agent<BattleNumber>, s: &BattleNumber, seed: u64) -> BattleNumber {
    let mut rng = engine::rng_from_seed(seed);
    let mut s = s.clone();
    loop {
        let a = agent.choose(&s, &mut rng, &mut |_| {});
        let before = s.clone();
        s.play(a).unwrap();
        agent.observe(&before, a);
        if s.at_turn_start() {
            return s;
        }
    }
}

fn board(rows: &str) -> Setup {
    Setup { board: Setup::parse_board(rows).unwrap(), ..Setup::default() }
}

#[test]
fn hand_built_last_extraction_needs_the_long_path() {
    // First seat to make the last extraction, one point behind. Extracting the Cross Zero
    // alone loses by 1. The path d5 (own T3, 3 triangles) -> d4 (opponent S1 facing east,
    // 1 triangle) -> e4 (own X0) scores 3 - 1 = +2 and wins.
    let mut setup = board(
        "
        .   .   .   .   .   .   .
        .   .   .   .   .   .   .
        .   .   .   .   .   .   .
        .   .   .   .   .   .   .
        .   2T1 .   2S1 1X0 .   .
        .   1S0 .   1T0 .   .   .
        .   .   .   .   .   .   .",
    );
    setup.extracted = [4, 5];
    setup.placement_score = Some(-1);
    let s = BattleNumber::from_setup(&setup, Options::default()).unwrap();
    assert_eq!(s.to_move(), engine::Actor::Player(Seat::First));
    assert_eq!(solve(&s), 1, "the position is a forced win");
    for spec in ["mcts:sims=400,eval=uniform", "mcts:sims=400,eval=rollout"] {
        let mut agent = spec.parse::<AgentSpec>().unwrap().build::<BattleNumber>();
        let after = agent_turn(agent.as_mut(), &s, 1);
        assert_eq!(after.extraction_totals()[0], 2, "{spec} took the +2 path");
    }
}

#[test]
fn random_endgames_mcts_finds_every_forced_win() {
    let opts = Options::default();
    let mut tested = 0;
    let mut seed = 0;
    while tested < 12 && seed < 2000 {
        seed += 1;
        // A random game, stopped three extraction turns before the end (first seat's 4th).
        let mut rng = engine::rng_from_seed(seed);
        let mut s = BattleNumber::new_game(&opts);
        let mut actions = Vec::new();
        while s.outcome().is_none() && !(s.extracted() == [3, 4] && s.at_turn_start()) {
            s.legal_actions(&mut actions);
            let i = rand::RngExt::random_range(&mut rng, 0..actions.len());
            s.play_unchecked(actions[i]);
        }
        if s.outcome().is_some() {
            continue;
        }
        let Actor::Player(mover) = s.to_move() else { unreachable!() };
        let value = solve(&s) * if mover == Seat::First { 1 } else { -1 };
        if value != 1 {
            continue;
        }
        // Also require that not every turn wins, so the test can fail.
        let mut turns = engine::perft::first_turns(&s);
        turns.retain(|(_, after)| solve(after) * if mover == Seat::First { 1 } else { -1 } < 1);
        if turns.is_empty() {
            continue;
        }
        tested += 1;
        let mut agent = "mcts:sims=3000,eval=uniform".parse::<AgentSpec>().unwrap().build::<BattleNumber>();
        let after = agent_turn(agent.as_mut(), &s, seed);
        let got = solve(&after) * if mover == Seat::First { 1 } else { -1 };
        assert_eq!(
            got,
            1,
            "seed {seed}: MCTS missed the forced win\n{}",
            engine::battlenumber::draw_board(&s, 0, false)
        );
    }
    eprintln!("{tested} endgames tested (seeds 1..={seed})");
    assert!(tested >= 5, "only {tested} endgames with a forced win found");
}
