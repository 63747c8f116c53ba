//! A deliberately naive second implementation of Battle Number's move generation and scoring
//! (arrays and breadth-first search, no bitboards), checked against the engine on positions
//! from many random games: the two must list exactly the same complete turns and score full
//! boards identically.

use std::collections::{BTreeSet, VecDeque};

use engine::battlenumber::{
    Action, BattleNumber, HoleRule, Kind, LeftoverRule, Options, Piece, TriangleRegion,
};
use engine::game::{Game, Seat};
use engine::perft::first_turns;

type Board = [Option<Piece>; 49];

const DIRS: [(i32, i32); 4] = [(-1, 0), (0, 1), (1, 0), (0, -1)]; // N E S W

fn at(r: i32, c: i32) -> Option<usize> {
    (0..7).contains(&r).then_some(())?;
    (0..7).contains(&c).then_some((r * 7 + c) as usize)
}

fn solid(p: Piece, side: usize) -> bool {
    p.kind.solid_sides(p.rot) & (1 << side) != 0
}

fn board_of(s: &BattleNumber) -> Board {
    let mut b = [None; 49];
    for (i, x) in b.iter_mut().enumerate() {
        *x = s.piece(i as u8);
    }
    b
}

fn has_hole(b: &Board) -> bool {
    let mut seen = [false; 49];
    let mut q = VecDeque::new();
    for i in 0..49 {
        let (r, c) = (i as i32 / 7, i as i32 % 7);
        if b[i].is_none() && (r == 0 || r == 6 || c == 0 || c == 6) {
            seen[i] = true;
            q.push_back(i);
        }
    }
    while let Some(i) = q.pop_front() {
        for (dr, dc) in DIRS {
            if let Some(j) = at(i as i32 / 7 + dr, i as i32 % 7 + dc)
                && b[j].is_none()
                && !seen[j]
            {
                seen[j] = true;
                q.push_back(j);
            }
        }
    }
    (0..49).any(|i| b[i].is_none() && !seen[i])
}

fn placements(s: &BattleNumber, opts: Options) -> BTreeSet<Vec<Action>> {
    let b = board_of(s);
    let engine::Actor::Player(me) = s.to_move() else { unreachable!() };
    let hand = s.hand(me);
    let placed = s.placed();
    let mut out = BTreeSet::new();
    for sq in 0..49usize {
        if b[sq].is_some() {
            continue;
        }
        for kind in Kind::ALL {
            if hand[kind as usize] == 0 {
                continue;
            }
            if me == Seat::Second
                && placed[1] == 23
                && opts.leftover_rule == LeftoverRule::CheckAtLastPlacement
            {
                let mut left = hand;
                left[kind as usize] -= 1;
                if left[Kind::CrossZero as usize] > 0 {
                    continue;
                }
            }
            for rot in 0..kind.rotations() {
                let p = Piece { owner: me, kind, rot };
                let ok = if placed == [0, 0] {
                    sq == 24 && kind == Kind::CornerTwo
                } else {
                    let mut touching = false;
                    let mut clash = false;
                    for (d, (dr, dc)) in DIRS.iter().enumerate() {
                        if let Some(n) = at(sq as i32 / 7 + dr, sq as i32 % 7 + dc)
                            && let Some(q) = b[n]
                        {
                            touching = true;
                            clash |= solid(p, d) && solid(q, (d + 2) % 4);
                        }
                    }
                    let mut after = b;
                    after[sq] = Some(p);
                    touching && !clash && (opts.hole_rule == HoleRule::Off || !has_hole(&after))
                };
                if ok {
                    out.insert(vec![Action::Square(sq as u8), Action::Piece(kind, rot)]);
                }
            }
        }
    }
    out
}

fn moves(p: Piece) -> Vec<(i32, i32)> {
    let base: &[(i32, i32)] = match p.kind {
        Kind::SingleOne => &[(-1, 0)],
        Kind::DoubleTwo => &[(0, -1), (0, 1)],
        Kind::CornerTwo => &[(-1, -1), (-2, -2)],
        Kind::SurroundThree => &[(-1, 0), (0, -1), (0, 1)],
        Kind::CrossZero => &[],
    };
    base.iter()
        .map(|&(mut dr, mut dc)| {
            for _ in 0..p.rot {
                (dr, dc) = (dc, -dr);
            }
            (dr, dc)
        })
        .collect()
}

fn extractions(s: &BattleNumber) -> BTreeSet<Vec<Action>> {
    let b = board_of(s);
    let engine::Actor::Player(me) = s.to_move() else { unreachable!() };
    let mut out = BTreeSet::new();
    fn walk(b: &Board, me: Seat, path: &mut Vec<usize>, out: &mut BTreeSet<Vec<Action>>) {
        let cur = *path.last().unwrap();
        let p = b[cur].unwrap();
        for (dr, dc) in moves(p) {
            let Some(t) = at(cur as i32 / 7 + dr, cur as i32 % 7 + dc) else { continue };
            let Some(q) = b[t] else { continue };
            if path.contains(&t) || (q.kind == Kind::CrossZero && q.owner != me) {
                continue;
            }
            path.push(t);
            if q.kind == Kind::CrossZero {
                out.insert(path.iter().map(|&x| Action::Square(x as u8)).collect());
            } else {
                walk(b, me, path, out);
            }
            path.pop();
        }
    }
    for sq in 0..49 {
        match b[sq] {
            Some(p) if p.owner == me && p.kind == Kind::CrossZero => {
                out.insert(vec![Action::Square(sq as u8)]);
            }
            Some(p) if p.owner == me => walk(&b, me, &mut vec![sq], &mut out),
            _ => {}
        }
    }
    out
}

/// Placement score for the first seat on a full board, by breadth-first search over regions.
fn region_score(b: &Board, mode: TriangleRegion) -> i32 {
    const OUTSIDE: usize = 49;
    let mut region = [usize::MAX; 50];
    let open = |i: usize, d: usize| -> Option<usize> {
        // The square (or OUTSIDE) across side d of square i, if no solid edge is between.
        let p = b[i].unwrap();
        if solid(p, d) {
            return None;
        }
        match at(i as i32 / 7 + DIRS[d].0, i as i32 % 7 + DIRS[d].1) {
            None => Some(OUTSIDE),
            Some(j) => (!solid(b[j].unwrap(), (d + 2) % 4)).then_some(j),
        }
    };
    let mut next_id = 0;
    for start in (0..49).chain([OUTSIDE]) {
        if region[start] != usize::MAX {
            continue;
        }
        let mut q = VecDeque::from([start]);
        region[start] = next_id;
        while let Some(i) = q.pop_front() {
            let nbrs: Vec<usize> = if i == OUTSIDE {
                (0..49).filter(|&j| (0..4).any(|d| open(j, d) == Some(OUTSIDE))).collect()
            } else {
                (0..4).filter_map(|d| open(i, d)).collect()
            };
            for j in nbrs {
                if region[j] == usize::MAX {
                    region[j] = next_id;
                    q.push_back(j);
                }
            }
        }
        next_id += 1;
    }
    let mut tri = vec![[0i32; 2]; next_id];
    let mut present = vec![[false; 2]; next_id];
    for i in 0..49 {
        let p = b[i].unwrap();
        present[region[i]][p.owner.index()] = true;
        for d in 0..4 {
            if solid(p, d) {
                let into = match mode {
                    TriangleRegion::OwnSquare => region[i],
                    TriangleRegion::Pointed => {
                        let j = at(i as i32 / 7 + DIRS[d].0, i as i32 % 7 + DIRS[d].1).unwrap_or(OUTSIDE);
                        region[j]
                    }
                };
                tri[into][p.owner.index()] += 1;
            }
        }
    }
    (0..next_id).filter(|&r| present[r][0] && present[r][1]).map(|r| tri[r][0] - tri[r][1]).sum()
}

fn check_games(opts: Options, games: u64) {
    let mut positions = 0;
    let mut full_boards = 0;
    for seed in 0..games {
        let mut rng = engine::rng_from_seed(1000 + seed);
        let mut s = BattleNumber::new_game(&opts);
        let mut actions = Vec::new();
        while s.outcome().is_none() {
            if s.at_turn_start() {
                let engine_turns: BTreeSet<Vec<Action>> =
                    first_turns(&s).into_iter().map(|(t, _)| t).collect();
                let naive = if s.in_placement() { placements(&s, opts) } else { extractions(&s) };
                assert_eq!(
                    engine_turns,
                    naive,
                    "seed {seed}: turn lists differ\n{}",
                    engine::battlenumber::draw_board(&s, 0, false)
                );
                positions += 1;
            }
            let was_placing = s.in_placement();
            s.legal_actions(&mut actions);
            let i = rand::RngExt::random_range(&mut rng, 0..actions.len());
            s.play_unchecked(actions[i]);
            if was_placing && !s.in_placement() {
                assert_eq!(
                    s.placement_score(),
                    region_score(&board_of(&s), opts.triangle_region),
                    "seed {seed}"
                );
                full_boards += 1;
            }
        }
        // A game that ends decisively ends because the mover has no turn at all.
        if let Some(o) = s.outcome()
            && o.decisive.is_some()
        {
            let naive = if s.in_placement() { placements(&s, opts) } else { extractions(&s) };
            assert!(naive.is_empty(), "seed {seed}: decisive end but the reference finds turns");
        }
    }
    eprintln!("{opts:?}: {positions} positions, {full_boards} full boards over {games} games");
    assert!(positions > 1000 && full_boards > 0, "{positions} positions, {full_boards} full boards");
}

#[test]
fn default_options_agree_with_the_reference() {
    check_games(Options::default(), 150);
}

#[test]
fn every_decision_variant_agrees_with_the_reference() {
    check_games(Options { hole_rule: HoleRule::Off, ..Options::default() }, 60);
    check_games(Options { leftover_rule: LeftoverRule::Off, ..Options::default() }, 60);
    check_games(Options { triangle_region: TriangleRegion::Pointed, ..Options::default() }, 60);
}
