//! Battle Number property tests over random games.
//!
//! Random games are played click by click under every option combination. After every click the
//! state is checked (the click was offered and `play` accepts it, incremental bitboards, the byte
//! round trip, every offered click completes to a turn, zero-sum outcomes); at every turn start
//! the engine's complete turns are compared with an independent reference implementation of the
//! rules written from `shared/rules/battlenumber.md` (placements, extraction paths, extraction
//! scores, the placement score of the full board); at the end the phase counts are checked.
//! The fast `random_playout` override is compared with a generic click-by-click playout.

use std::collections::BTreeSet;

use engine::battlenumber::{
    Action, BattleNumber, HoleRule, Kind, LeftoverRule, Options, Piece, TriangleRegion, draw_board,
    square_name,
};
use engine::game::{Actor, Game, Seat, to_bytes};
use engine::perft::first_turns;
use engine::{Rng, rng_from_seed};
use proptest::prelude::*;
use rand::RngExt;

/// An independent implementation of the rules, as plain arrays and loops.
mod reference {
    use super::*;

    pub type Board = [Option<Piece>; 49];
    /// A placement: square, kind, rotation.
    pub type Placement = (u8, Kind, u8);

    /// N, E, S, W as (row, column) steps; side `d` of a square faces direction `d`.
    const DIRS: [(i32, i32); 4] = [(-1, 0), (0, 1), (1, 0), (0, -1)];
    const N: usize = 0;
    const E: usize = 1;
    const W: usize = 3;

    pub fn board_of(s: &BattleNumber) -> Board {
        let mut b = [None; 49];
        for (sq, cell) in b.iter_mut().enumerate() {
            *cell = s.piece(sq as u8);
        }
        b
    }

    fn base_sides(kind: Kind) -> &'static [usize] {
        match kind {
            Kind::SingleOne => &[N],
            Kind::DoubleTwo => &[W, E],
            Kind::CornerTwo => &[N, W],
            Kind::SurroundThree => &[N, W, E],
            Kind::CrossZero => &[],
        }
    }

    fn sides(kind: Kind, rot: u8) -> [bool; 4] {
        let mut out = [false; 4];
        for &d in base_sides(kind) {
            out[(d + rot as usize) % 4] = true;
        }
        out
    }

    pub fn triangles(kind: Kind) -> i32 {
        base_sides(kind).len() as i32
    }

    /// Rotations giving distinct pieces, smallest first.
    pub fn distinct_rotations(kind: Kind) -> Vec<u8> {
        let mut seen = Vec::new();
        let mut out = Vec::new();
        for rot in 0..4u8 {
            let s = sides(kind, rot);
            if !seen.contains(&s) {
                seen.push(s);
                out.push(rot);
            }
        }
        out
    }

    fn moves(kind: Kind, rot: u8) -> Vec<(i32, i32)> {
        let base: &[(i32, i32)] = match kind {
            Kind::SingleOne => &[(-1, 0)],
            Kind::DoubleTwo => &[(0, -1), (0, 1)],
            Kind::CornerTwo => &[(-1, -1), (-2, -2)],
            Kind::SurroundThree => &[(-1, 0), (0, -1), (0, 1)],
            Kind::CrossZero => &[],
        };
        base.iter()
            .map(|&(mut dr, mut dc)| {
                for _ in 0..rot {
                    (dr, dc) = (dc, -dr); // a clockwise quarter turn
                }
                (dr, dc)
            })
            .collect()
    }

    fn offset(sq: usize, (dr, dc): (i32, i32)) -> Option<usize> {
        let (r, c) = ((sq / 7) as i32 + dr, (sq % 7) as i32 + dc);
        ((0..7).contains(&r) && (0..7).contains(&c)).then(|| (r * 7 + c) as usize)
    }

    fn solid(b: &Board, sq: usize, d: usize) -> bool {
        b[sq].is_some_and(|p| sides(p.kind, p.rot)[d])
    }

    fn on_border(sq: usize) -> bool {
        let (r, c) = (sq / 7, sq % 7);
        r == 0 || r == 6 || c == 0 || c == 6
    }

    fn no_hole(b: &Board) -> bool {
        let mut reach = [false; 49];
        let mut stack: Vec<usize> = (0..49).filter(|&q| b[q].is_none() && on_border(q)).collect();
        for &q in &stack {
            reach[q] = true;
        }
        while let Some(q) = stack.pop() {
            for d in DIRS {
                if let Some(n) = offset(q, d)
                    && b[n].is_none()
                    && !reach[n]
                {
                    reach[n] = true;
                    stack.push(n);
                }
            }
        }
        (0..49).all(|q| b[q].is_some() || reach[q])
    }

    pub fn count(b: &Board, seat: Seat) -> [u8; 5] {
        let mut c = [0u8; 5];
        for p in b.iter().flatten() {
            if p.owner == seat {
                c[p.kind as usize] += 1;
            }
        }
        c
    }

    /// Every legal placement (square, kind, rotation) for `seat`.
    pub fn placement_turns(b: &Board, seat: Seat, opts: &Options) -> BTreeSet<Placement> {
        let mut out = BTreeSet::new();
        let placed: Vec<u8> = Seat::BOTH.iter().map(|&s| count(b, s).iter().sum()).collect();
        let hand: Vec<u8> = count(b, seat).iter().map(|&n| 5 - n).collect();
        if placed == [0, 0] {
            for rot in 0..4 {
                out.insert((24, Kind::CornerTwo, rot));
            }
            return out;
        }
        for sq in 0..49 {
            if b[sq].is_some() || !DIRS.iter().any(|&d| offset(sq, d).is_some_and(|n| b[n].is_some())) {
                continue;
            }
            for kind in Kind::ALL {
                if hand[kind as usize] == 0 {
                    continue;
                }
                if seat == Seat::Second
                    && placed[1] == 23
                    && opts.leftover_rule == LeftoverRule::CheckAtLastPlacement
                    && hand[Kind::CrossZero as usize] - u8::from(kind == Kind::CrossZero) > 0
                {
                    continue;
                }
                for rot in distinct_rotations(kind) {
                    let mut nb = *b;
                    nb[sq] = Some(Piece { owner: seat, kind, rot });
                    let facing = (0..4).any(|d| {
                        solid(&nb, sq, d) && offset(sq, DIRS[d]).is_some_and(|n| solid(&nb, n, (d + 2) % 4))
                    });
                    if facing || (opts.hole_rule == HoleRule::BorderConnected && !no_hole(&nb)) {
                        continue;
                    }
                    out.insert((sq as u8, kind, rot));
                }
            }
        }
        out
    }

    /// Every legal extraction path for `seat`, as squares in order.
    pub fn extraction_turns(b: &Board, seat: Seat) -> BTreeSet<Vec<u8>> {
        fn walk(b: &Board, seat: Seat, path: &mut Vec<u8>, out: &mut BTreeSet<Vec<u8>>) {
            let cur = *path.last().unwrap() as usize;
            let p = b[cur].unwrap();
            for m in moves(p.kind, p.rot) {
                let Some(n) = offset(cur, m) else { continue };
                let Some(q) = b[n] else { continue };
                if path.contains(&(n as u8)) || (q.kind == Kind::CrossZero && q.owner != seat) {
                    continue;
                }
                path.push(n as u8);
                if q.kind == Kind::CrossZero {
                    out.insert(path.clone());
                } else {
                    walk(b, seat, path, out);
                }
                path.pop();
            }
        }
        let mut out = BTreeSet::new();
        for sq in 0..49 {
            match b[sq] {
                Some(p) if p.owner == seat && p.kind == Kind::CrossZero => {
                    out.insert(vec![sq as u8]);
                }
                Some(p) if p.owner == seat => walk(b, seat, &mut vec![sq as u8], &mut out),
                _ => {}
            }
        }
        out
    }

    pub fn extraction_score(b: &Board, seat: Seat, path: &[u8]) -> i32 {
        let pieces: Vec<Piece> = path.iter().map(|&q| b[q as usize].unwrap()).collect();
        if pieces.iter().all(|p| p.owner == seat) {
            return 0;
        }
        pieces.iter().map(|p| if p.owner == seat { triangles(p.kind) } else { -triangles(p.kind) }).sum()
    }

    /// The first seat's placement score of `b`.
    pub fn region_score(b: &Board, opts: &Options) -> i32 {
        // Label the regions; every region with an open border side becomes OUTSIDE.
        const OUTSIDE: usize = usize::MAX;
        let mut label = [usize::MAX - 1; 49];
        let mut next = 0;
        let mut open_out = Vec::new();
        for start in 0..49 {
            if label[start] != usize::MAX - 1 {
                continue;
            }
            label[start] = next;
            let mut stack = vec![start];
            let mut opens = false;
            while let Some(q) = stack.pop() {
                for d in 0..4 {
                    match offset(q, DIRS[d]) {
                        None => opens |= !solid(b, q, d),
                        Some(n) => {
                            if !solid(b, q, d) && !solid(b, n, (d + 2) % 4) && label[n] == usize::MAX - 1 {
                                label[n] = next;
                                stack.push(n);
                            }
                        }
                    }
                }
            }
            open_out.push(opens);
            next += 1;
        }
        let region = |q: usize| if open_out[label[q]] { OUTSIDE } else { label[q] };
        let mut holders: Vec<(usize, [bool; 2])> = Vec::new();
        let mut tri: Vec<(usize, [i32; 2])> = Vec::new();
        fn slot<T: Default + Copy>(v: &mut Vec<(usize, T)>, r: usize) -> &mut T {
            let i = v.iter().position(|(k, _)| *k == r).unwrap_or_else(|| {
                v.push((r, T::default()));
                v.len() - 1
            });
            &mut v[i].1
        }
        for q in 0..49 {
            let Some(p) = b[q] else { continue };
            slot(&mut holders, region(q))[p.owner.index()] = true;
            for d in 0..4 {
                if !sides(p.kind, p.rot)[d] {
                    continue;
                }
                let r = match opts.triangle_region {
                    TriangleRegion::OwnSquare => region(q),
                    TriangleRegion::Pointed => offset(q, DIRS[d]).map_or(OUTSIDE, region),
                };
                slot(&mut tri, r)[p.owner.index()] += 1;
            }
        }
        tri.iter()
            .filter(|(r, _)| holders.iter().any(|(k, h)| k == r && h[0] && h[1]))
            .map(|(_, t)| t[0] - t[1])
            .sum()
    }
}

// ---------------------------------------------------------------------------------------------

const ALL_OPTIONS: [Options; 8] = {
    let mut out = [Options {
        hole_rule: HoleRule::BorderConnected,
        leftover_rule: LeftoverRule::CheckAtLastPlacement,
        triangle_region: TriangleRegion::OwnSquare,
    }; 8];
    let mut i = 0;
    while i < 8 {
        out[i] = Options {
            hole_rule: if i & 1 == 0 { HoleRule::BorderConnected } else { HoleRule::Off },
            leftover_rule: if i & 2 == 0 { LeftoverRule::CheckAtLastPlacement } else { LeftoverRule::Off },
            triangle_region: if i & 4 == 0 { TriangleRegion::OwnSquare } else { TriangleRegion::Pointed },
        };
        i += 1;
    }
    out
};

fn legal(s: &BattleNumber) -> Vec<Action> {
    let mut v = Vec::new();
    s.legal_actions(&mut v);
    v
}

fn mover(s: &BattleNumber) -> Seat {
    match s.to_move() {
        Actor::Player(seat) => seat,
        Actor::Chance => panic!("Battle Number has no chance nodes"),
    }
}

fn pieces_on_board(s: &BattleNumber) -> u32 {
    s.occupied().count_ones()
}

fn cross_zeros(s: &BattleNumber, seat: Seat) -> usize {
    (0..49u8).filter(|&q| s.piece(q).is_some_and(|p| p.owner == seat && p.kind == Kind::CrossZero)).count()
}

/// Plays uniformly random clicks from `s` until the turn ends; every click on the way must be
/// offered. Errors if the walk reaches a point with no legal click (a dead end).
fn complete_turn(mut s: BattleNumber, rng: &mut Rng) -> Result<BattleNumber, String> {
    let mut buf = Vec::new();
    while !s.at_turn_start() {
        s.legal_actions(&mut buf);
        if buf.is_empty() {
            return Err("an offered click led to a dead end".into());
        }
        let a = buf[rng.random_range(0..buf.len())];
        s.play(a).map_err(|e| e.to_string())?;
    }
    Ok(s)
}

/// What a game did, for the statistics and the end checks.
#[derive(Default, Debug, Clone, Copy)]
struct Stats {
    games: u32,
    on_points: u32,
    decisive_in_placement: u32,
    decisive_in_extraction: u32,
    reached_extraction: u32,
    extractions: u32,
    extractions_with_opponent: u32,
    /// Pieces removed by extractions.
    removed: u32,
    clicks: u64,
}

impl Stats {
    fn add(&mut self, o: &Stats) {
        self.games += o.games;
        self.on_points += o.on_points;
        self.decisive_in_placement += o.decisive_in_placement;
        self.decisive_in_extraction += o.decisive_in_extraction;
        self.reached_extraction += o.reached_extraction;
        self.extractions += o.extractions;
        self.extractions_with_opponent += o.extractions_with_opponent;
        self.removed += o.removed;
        self.clicks += o.clicks;
    }
}

macro_rules! ensure {
    ($cond:expr, $($arg:tt)*) => {
        if !$cond {
            return Err(format!($($arg)*));
        }
    };
}

/// How the random games choose their clicks.
#[derive(Copy, Clone, Debug)]
enum Policy {
    /// Uniform over the legal clicks.
    Uniform,
    /// Uniform, except that the second seat places its Cross Zeros early when it can: random
    /// games then reach the extraction phase far more often.
    CrossZerosEarly,
}

fn choose(s: &BattleNumber, legal: &[Action], policy: Policy, rng: &mut Rng) -> Action {
    if let Policy::CrossZerosEarly = policy
        && s.pending_square().is_some()
        && mover(s) == Seat::Second
        && rng.random_range(0..3) != 0
        && let Some(&a) = legal.iter().find(|a| matches!(a, Action::Piece(Kind::CrossZero, _)))
    {
        return a;
    }
    legal[rng.random_range(0..legal.len())]
}

/// Plays one random game click by click and checks it throughout. `deep` adds the reference
/// comparison of every turn and the completion of every offered click (instead of one).
fn check_game(seed: u64, opts: Options, policy: Policy, deep: bool) -> Result<Stats, String> {
    let mut rng = rng_from_seed(seed);
    let mut check_rng = rng_from_seed(seed ^ 0x5eed_cafe);
    let mut s = BattleNumber::new_game(&opts);
    let mut st = Stats { games: 1, ..Stats::default() };
    let mut history: Vec<Action> = Vec::new();
    let mut buf = Vec::new();
    let mut turn_start = s.clone();
    let mut turn_from = 0; // index in `history` of the current turn's first click
    let mut offered_placements: Option<BTreeSet<reference::Placement>> = None;
    let mut was_placing = true;
    let mut x0_extracted = [0u32; 2];
    let ctx = |history: &[Action], s: &BattleNumber| {
        let h: Vec<String> = history.iter().map(|a| a.to_string()).collect();
        format!("seed {seed}, {opts:?}, {policy:?}, clicks [{}]\n{}", h.join(" "), draw_board(s, 0, false))
    };

    loop {
        // ---- checks at a turn boundary
        if s.at_turn_start() {
            let b = reference::board_of(&s);
            let seat = mover(&s);
            if s.in_placement() {
                let counts: Vec<u32> = Seat::BOTH.iter().map(|&x| s.pieces_of(x).count_ones()).collect();
                ensure!(
                    s.placed() == [counts[0] as u8, counts[1] as u8],
                    "placed != pieces on board: {}",
                    ctx(&history, &s)
                );
                let want_mover = if counts[0] == counts[1] { Seat::First } else { Seat::Second };
                ensure!(
                    s.outcome().is_some() || seat == want_mover,
                    "wrong mover in placement: {}",
                    ctx(&history, &s)
                );
            } else {
                ensure!(s.placed() == [25, 24], "placement ended with {:?} placements", s.placed());
                if was_placing {
                    // The placement phase just ended: the board is full and scored.
                    was_placing = false;
                    st.reached_extraction += 1;
                    ensure!(
                        pieces_on_board(&s) == 49,
                        "board not full after placement: {}",
                        ctx(&history, &s)
                    );
                    let want = reference::region_score(&b, &opts);
                    ensure!(
                        s.placement_score() == want,
                        "placement score {} but the reference says {want}: {}",
                        s.placement_score(),
                        ctx(&history, &s)
                    );
                    ensure!(s.outcome().is_some() || seat == Seat::Second, "second seat must extract first");
                }
                let e = s.extracted();
                ensure!(
                    s.outcome().is_some() || seat == if e[0] == e[1] { Seat::Second } else { Seat::First },
                    "wrong mover in extraction {e:?}"
                );
                for x in Seat::BOTH {
                    let left = cross_zeros(&s, x) as u32 + x0_extracted[x.index()];
                    let kept_ok = opts.leftover_rule == LeftoverRule::Off && x == Seat::Second && left == 4;
                    ensure!(left == 5 || kept_ok, "{x} Cross Zeros: {left} on board + extracted");
                }
            }
            match s.outcome() {
                Some(o) => {
                    ensure!(o.scores[0] == -o.scores[1], "scores {:?} not zero-sum", o.scores);
                    ensure!(
                        o.scores[0] == s.score_first(),
                        "outcome scores {:?} vs score {}",
                        o.scores,
                        s.score_first()
                    );
                    ensure!(legal(&s).is_empty(), "a finished game offers clicks");
                    if let Some(w) = o.decisive {
                        ensure!(w == seat.other(), "decisive winner {w} but {seat} was to move");
                        // The loser had no legal turn at all.
                        let none = if s.in_placement() {
                            reference::placement_turns(&b, seat, &opts).is_empty()
                        } else {
                            reference::extraction_turns(&b, seat).is_empty()
                        };
                        ensure!(
                            none,
                            "{seat} lost decisively but the reference finds a legal turn: {}",
                            ctx(&history, &s)
                        );
                        if s.in_placement() {
                            st.decisive_in_placement += 1;
                        } else {
                            // Every extraction removes exactly one own Cross Zero, so only a
                            // second seat that kept one (leftover rule off) can run out.
                            ensure!(
                                opts.leftover_rule == LeftoverRule::Off && seat == Seat::Second,
                                "{seat} ran out of extractions under {opts:?}: {}",
                                ctx(&history, &s)
                            );
                            st.decisive_in_extraction += 1;
                        }
                    } else {
                        ensure!(
                            s.extracted() == [5, 5],
                            "finished on points after {:?} extractions",
                            s.extracted()
                        );
                        ensure!(x0_extracted == [5, 5], "Cross Zeros extracted: {x0_extracted:?}");
                        ensure!(!s.in_placement(), "finished on points during placement");
                        ensure!(
                            pieces_on_board(&s) + st.removed == 49,
                            "pieces on board and removed do not add to 49"
                        );
                        st.on_points += 1;
                    }
                    return Ok(st);
                }
                None => {
                    ensure!(s.extracted() != [5, 5], "ten extractions but no outcome");
                }
            }
            if deep {
                let engine_turns = first_turns(&s);
                let (mut placements, mut paths) = (BTreeSet::new(), BTreeSet::new());
                for (clicks, _) in &engine_turns {
                    match clicks.as_slice() {
                        [Action::Square(q), Action::Piece(k, r)] if s.in_placement() => {
                            placements.insert((*q, *k, *r));
                        }
                        steps if !s.in_placement() => {
                            let path: Option<Vec<u8>> = steps
                                .iter()
                                .map(|a| match a {
                                    Action::Square(q) => Some(*q),
                                    Action::Piece(..) => None,
                                })
                                .collect();
                            ensure!(path.is_some(), "extraction turn with a piece click {clicks:?}");
                            paths.insert(path.unwrap());
                        }
                        other => return Err(format!("unexpected turn {other:?}: {}", ctx(&history, &s))),
                    }
                }
                ensure!(
                    placements.len() + paths.len() == engine_turns.len(),
                    "the same turn is offered by two click sequences"
                );
                if s.in_placement() {
                    let want = reference::placement_turns(&b, seat, &opts);
                    if placements != want {
                        let extra: Vec<_> = placements.difference(&want).collect();
                        let missing: Vec<_> = want.difference(&placements).collect();
                        return Err(format!(
                            "placements differ from the reference: extra {extra:?}, missing {missing:?}: {}",
                            ctx(&history, &s)
                        ));
                    }
                } else {
                    let want = reference::extraction_turns(&b, seat);
                    if paths != want {
                        let name =
                            |v: &Vec<u8>| v.iter().map(|&q| square_name(q)).collect::<Vec<_>>().join(" ");
                        let extra: Vec<_> = paths.difference(&want).map(name).collect();
                        let missing: Vec<_> = want.difference(&paths).map(name).collect();
                        return Err(format!(
                            "extraction paths differ from the reference: extra {extra:?}, missing {missing:?}: {}",
                            ctx(&history, &s)
                        ));
                    }
                }
                offered_placements = Some(placements);
            }
            ensure!(
                BattleNumber::from_setup(&s.to_setup(), opts).as_ref() == Ok(&s),
                "from_setup(to_setup(state)) is a different state: {}",
                ctx(&history, &s)
            );
            turn_start = s.clone();
            turn_from = history.len();
        }

        // ---- one click
        s.legal_actions(&mut buf);
        ensure!(!buf.is_empty(), "no legal click in an unfinished game: {}", ctx(&history, &s));
        let sorted: BTreeSet<Action> = buf.iter().copied().collect();
        ensure!(sorted.len() == buf.len(), "duplicate legal clicks");
        if s.pending_square().is_none() {
            let squares: Vec<Action> = engine::battlenumber::bitboard::Squares(s.legal_square_clicks())
                .map(Action::Square)
                .collect();
            ensure!(squares == buf, "legal_square_clicks disagrees with legal_actions");
        } else {
            ensure!(buf.iter().all(|a| matches!(a, Action::Piece(..))), "square offered after a square");
        }
        // Offered clicks complete to a turn: all of them when deep, else one spot check.
        let to_check: Vec<Action> =
            if deep { buf.clone() } else { vec![buf[check_rng.random_range(0..buf.len())]] };
        for a in to_check {
            let mut t = s.clone();
            ensure!(t.play(a).is_ok(), "offered click {a} refused");
            if let Err(e) = complete_turn(t, &mut check_rng) {
                return Err(format!("click {a}: {e}: {}", ctx(&history, &s)));
            }
        }
        let a = choose(&s, &buf, policy, &mut rng);
        ensure!(s.is_legal(a), "is_legal({a}) is false for an offered click");
        let before = s.clone();
        if let Err(e) = s.play(a) {
            return Err(format!("play({a}) refused an offered click: {e}: {}", ctx(&history, &before)));
        }
        history.push(a);
        st.clicks += 1;

        // ---- checks after every click
        ensure!(
            s.bitboards() == s.recomputed_bitboards(),
            "incremental bitboards drifted: {}",
            ctx(&history, &s)
        );
        let bytes = to_bytes(&s);
        match BattleNumber::decode(&bytes) {
            Ok(d) => ensure!(d == s, "decode(encode) is a different state: {}", ctx(&history, &s)),
            Err(e) => return Err(format!("decode(encode) failed: {e}: {}", ctx(&history, &s))),
        }
        if let Some(o) = s.outcome() {
            ensure!(o.scores[0] == -o.scores[1], "scores {:?} not zero-sum", o.scores);
            ensure!(s.at_turn_start(), "the game ended mid-turn");
        }

        // ---- checks when a turn completes
        if s.at_turn_start() {
            let b0 = reference::board_of(&turn_start);
            let seat = mover(&turn_start);
            let turn = &history[turn_from..];
            ensure!(
                s.outcome().is_some() || mover(&s) == seat.other(),
                "the turn did not pass to the other seat: {}",
                ctx(&history, &s)
            );
            if turn_start.in_placement() {
                let &[Action::Square(q), Action::Piece(k, r)] = turn else {
                    return Err(format!("a placement turn is not square + piece: {}", ctx(&history, &s)));
                };
                ensure!(
                    s.piece(q) == Some(Piece { owner: seat, kind: k, rot: r }),
                    "the piece is not on {q}"
                );
                let mut hand = turn_start.hand(seat);
                hand[k as usize] -= 1;
                ensure!(!s.in_placement() || s.hand(seat) == hand, "hand not updated");
                if let Some(placements) = &offered_placements {
                    ensure!(placements.contains(&(q, k, r)), "played placement not in the reference set");
                }
            } else {
                // The extraction path: the squares emptied by this turn.
                let removed = turn_start.occupied() & !s.occupied();
                let path: Vec<u8> = turn
                    .iter()
                    .map(|a| match a {
                        Action::Square(q) => *q,
                        Action::Piece(..) => u8::MAX,
                    })
                    .collect();
                let mask: u64 = path.iter().fold(0, |m, &q| m | 1u64.checked_shl(q as u32).unwrap_or(0));
                ensure!(mask == removed, "removed squares are not the clicked path: {}", ctx(&history, &s));
                ensure!(
                    reference::extraction_turns(&b0, seat).contains(&path),
                    "the played path is not a legal path: {}",
                    ctx(&history, &s)
                );
                let delta =
                    s.extraction_totals()[seat.index()] - turn_start.extraction_totals()[seat.index()];
                let want = reference::extraction_score(&b0, seat, &path);
                ensure!(delta == want, "extraction scored {delta}, reference {want}: {}", ctx(&history, &s));
                ensure!(
                    s.extraction_totals()[seat.other().index()]
                        == turn_start.extraction_totals()[seat.other().index()],
                    "the opponent's total changed"
                );
                let mut want_ex = turn_start.extracted();
                want_ex[seat.index()] += 1;
                ensure!(s.extracted() == want_ex, "extracted {:?}, expected {want_ex:?}", s.extracted());
                let crosses = path
                    .iter()
                    .filter(|&&q| b0[q as usize].is_some_and(|p| p.kind == Kind::CrossZero))
                    .count();
                ensure!(crosses == 1, "an extraction removed {crosses} Cross Zeros");
                x0_extracted[seat.index()] += 1;
                st.extractions += 1;
                st.removed += path.len() as u32;
                if path.iter().any(|&q| b0[q as usize].is_some_and(|p| p.owner != seat)) {
                    st.extractions_with_opponent += 1;
                }
            }
            ensure!(s.placement_score() == 0 || !s.in_placement(), "placement score during placement");
            offered_placements = None;
        }
    }
}

fn run_games(seeds: std::ops::Range<u64>, deep: bool) -> Stats {
    let mut total = Stats::default();
    for seed in seeds {
        let opts = ALL_OPTIONS[(seed % 8) as usize];
        let policy = if seed % 3 == 0 { Policy::Uniform } else { Policy::CrossZerosEarly };
        match check_game(seed, opts, policy, deep) {
            Ok(st) => total.add(&st),
            Err(e) => panic!("random game failed: {e}"),
        }
    }
    total
}

#[test]
fn random_games_keep_every_invariant() {
    let st = run_games(0..6000, false);
    eprintln!("light: {st:?}");
    assert_eq!(st.games, 6000);
    assert!(st.on_points > 100, "too few games reached the end on points: {st:?}");
    assert!(st.decisive_in_placement > 100, "too few decisive placement endings: {st:?}");
    assert!(st.extractions_with_opponent > 100, "{st:?}");
}

#[test]
fn random_games_match_the_reference_rules() {
    let st = run_games(1_000_000..1_001_000, true);
    eprintln!("deep: {st:?}");
    assert!(st.on_points > 20 && st.reached_extraction > 30, "{st:?}");
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 64,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn proptest_random_games(seed in any::<u64>(), opts in 0..8usize, early in any::<bool>()) {
        let policy = if early { Policy::CrossZerosEarly } else { Policy::Uniform };
        let r = check_game(seed, ALL_OPTIONS[opts], policy, true);
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
    }
}

// ---------------------------------------------------------------------------------------------
// The fast `random_playout` against a generic click-by-click playout

/// The generic playout of the `Game` trait: a uniformly random legal click at a time (checked).
fn generic_playout(s: &mut BattleNumber, rng: &mut Rng) {
    let mut buf = Vec::new();
    while s.outcome().is_none() {
        s.legal_actions(&mut buf);
        let a = buf[rng.random_range(0..buf.len())];
        s.play(a).expect("an offered click is accepted");
    }
}

/// What must hold for any finished game.
fn check_terminal(s: &BattleNumber) -> Result<(), String> {
    let ctx = || draw_board(s, 0, false);
    let o = s.outcome().ok_or("the playout stopped before the end")?;
    ensure!(o.scores[0] == -o.scores[1] && o.scores[0] == s.score_first(), "scores {:?}", o.scores);
    ensure!(s.at_turn_start() && legal(s).is_empty(), "finished mid-turn or with clicks left");
    ensure!(s.bitboards() == s.recomputed_bitboards(), "bitboards drifted");
    ensure!(BattleNumber::decode(&to_bytes(s)).as_ref() == Ok(s), "byte round trip failed");
    let opts = s.opts();
    let b = reference::board_of(s);
    match o.decisive {
        Some(w) => {
            let loser = mover(s);
            ensure!(w == loser.other(), "decisive winner {w}, {loser} to move");
            if s.in_placement() {
                ensure!(s.extracted() == [0, 0] && s.placement_score() == 0, "scores during placement");
                ensure!(
                    reference::placement_turns(&b, loser, &opts).is_empty(),
                    "the loser could place:\n{}",
                    ctx()
                );
            } else {
                ensure!(s.placed() == [25, 24], "placed {:?}", s.placed());
                ensure!(
                    opts.leftover_rule == LeftoverRule::Off && loser == Seat::Second,
                    "{loser} ran out of extractions under {opts:?}"
                );
                ensure!(
                    reference::extraction_turns(&b, loser).is_empty(),
                    "the loser could extract:\n{}",
                    ctx()
                );
            }
        }
        None => {
            ensure!(s.placed() == [25, 24] && s.extracted() == [5, 5], "ended on points early");
            for seat in Seat::BOTH {
                ensure!(cross_zeros(s, seat) == 0, "{seat} has Cross Zeros left after five extractions");
            }
            ensure!(pieces_on_board(s) <= 39, "ten extractions removed fewer than ten pieces");
        }
    }
    Ok(())
}

#[derive(Default, Debug)]
struct PlayoutStats {
    n: u32,
    on_points: u32,
    first_wins: u32,
    placements: u64,
    score_sum: i64,
    score_sq: i64,
}

impl PlayoutStats {
    fn add(&mut self, s: &BattleNumber) {
        let o = s.outcome().unwrap();
        self.n += 1;
        self.on_points += u32::from(o.decisive.is_none());
        self.first_wins += u32::from(o.winner() == Some(Seat::First));
        self.placements += u64::from(s.placed()[0] + s.placed()[1]);
        let sc = i64::from(s.score_first());
        self.score_sum += sc;
        self.score_sq += sc * sc;
    }
    fn rate(&self, k: u32) -> f64 {
        f64::from(k) / f64::from(self.n)
    }
}

/// `a` and `b` estimate the same proportion: within 5 standard errors (plus a little slack).
fn same_rate(what: &str, a: (u32, u32), b: (u32, u32)) {
    let (pa, pb) = (f64::from(a.0) / f64::from(a.1), f64::from(b.0) / f64::from(b.1));
    let p = f64::from(a.0 + b.0) / f64::from(a.1 + b.1);
    let se = (p * (1.0 - p) * (1.0 / f64::from(a.1) + 1.0 / f64::from(b.1))).sqrt();
    assert!((pa - pb).abs() <= 5.0 * se + 0.01, "{what}: fast {pa:.3} vs generic {pb:.3} (se {se:.4})");
}

#[test]
fn fast_random_playout_agrees_with_the_generic_playout() {
    for (i, opts) in [ALL_OPTIONS[0], ALL_OPTIONS[3], ALL_OPTIONS[6]].into_iter().enumerate() {
        let (mut fast, mut generic) = (PlayoutStats::default(), PlayoutStats::default());
        for seed in 0..1500u64 {
            let mut rng = rng_from_seed(seed + 10_000 * i as u64);
            let mut a = BattleNumber::new_game(&opts);
            a.random_playout(&mut rng);
            check_terminal(&a).unwrap_or_else(|e| panic!("fast playout, seed {seed}, {opts:?}: {e}"));
            fast.add(&a);
            // Reproducible from its seed.
            let mut again = BattleNumber::new_game(&opts);
            again.random_playout(&mut rng_from_seed(seed + 10_000 * i as u64));
            assert_eq!(again, a, "the fast playout is not a function of its seed");

            let mut rng = rng_from_seed(seed + 10_000 * i as u64 + 5_000);
            let mut g = BattleNumber::new_game(&opts);
            generic_playout(&mut g, &mut rng);
            check_terminal(&g).unwrap_or_else(|e| panic!("generic playout, seed {seed}, {opts:?}: {e}"));
            generic.add(&g);
        }
        eprintln!("{opts:?}\n  fast    {fast:?}\n  generic {generic:?}");
        same_rate("games ending on points", (fast.on_points, fast.n), (generic.on_points, generic.n));
        same_rate("first-seat wins", (fast.first_wins, fast.n), (generic.first_wins, generic.n));
        let (mf, mg) =
            (fast.placements as f64 / f64::from(fast.n), generic.placements as f64 / f64::from(generic.n));
        assert!((mf - mg).abs() < 1.5, "mean placements: fast {mf:.2} vs generic {mg:.2}");
        assert!(fast.rate(fast.on_points) > 0.02, "the fast playout hardly ever fills the board");
    }
}

/// Turn-start, mid-placement and mid-extraction states from random games.
fn playout_start_states(n_games: u64) -> Vec<BattleNumber> {
    let mut out = Vec::new();
    for seed in 0..n_games {
        let mut rng = rng_from_seed(seed + 77);
        let mut s = BattleNumber::new_game(&ALL_OPTIONS[(seed % 8) as usize]);
        let mut buf = Vec::new();
        let mut k = 0u32;
        while s.outcome().is_none() {
            s.legal_actions(&mut buf);
            let a = choose(&s, &buf, Policy::CrossZerosEarly, &mut rng);
            s.play(a).unwrap();
            k += 1;
            if k.is_multiple_of(9) || s.pending_path().is_some() || !s.in_placement() {
                out.push(s.clone());
            }
        }
    }
    out
}

#[test]
fn fast_random_playout_from_mid_game_states() {
    let states = playout_start_states(60);
    assert!(states.iter().any(|s| s.pending_path().is_some()), "no mid-extraction state sampled");
    for (i, start) in states.iter().enumerate() {
        for k in 0..3u64 {
            let mut a = start.clone();
            a.random_playout(&mut rng_from_seed(i as u64 * 3 + k));
            check_terminal(&a).unwrap_or_else(|e| panic!("fast playout from state {i}: {e}"));
            let mut g = start.clone();
            generic_playout(&mut g, &mut rng_from_seed(i as u64 * 3 + k));
            check_terminal(&g).unwrap_or_else(|e| panic!("generic playout from state {i}: {e}"));
            // Both continue the same game: the pieces extracted so far stay extracted, and once
            // the placement score is fixed it stays.
            for t in [&a, &g] {
                assert!(t.extracted()[0] >= start.extracted()[0] && t.extracted()[1] >= start.extracted()[1]);
                if !start.in_placement() {
                    assert_eq!(t.placement_score(), start.placement_score());
                }
            }
        }
    }
}

#[test]
fn fast_random_playout_from_extraction_matches_generic_scores() {
    // From full boards, the extraction phase alone: the mean final score of the two playouts
    // must agree (same distribution over paths).
    let starts: Vec<BattleNumber> = playout_start_states(200)
        .into_iter()
        .filter(|s| {
            !s.in_placement() && s.extracted() == [0, 0] && s.at_turn_start() && s.outcome().is_none()
        })
        .take(6)
        .collect();
    assert!(starts.len() >= 3, "too few full boards sampled");
    for (i, start) in starts.iter().enumerate() {
        let (mut fast, mut generic) = (PlayoutStats::default(), PlayoutStats::default());
        for k in 0..400u64 {
            let mut a = start.clone();
            a.random_playout(&mut rng_from_seed(k * 2));
            fast.add(&a);
            let mut g = start.clone();
            generic_playout(&mut g, &mut rng_from_seed(k * 2 + 1));
            generic.add(&g);
        }
        let mean = |p: &PlayoutStats| p.score_sum as f64 / f64::from(p.n);
        let var = |p: &PlayoutStats| p.score_sq as f64 / f64::from(p.n) - mean(p).powi(2);
        let se = ((var(&fast) + var(&generic)) / 400.0).sqrt();
        assert!(
            (mean(&fast) - mean(&generic)).abs() <= 5.0 * se + 0.05,
            "full board {i}: mean score fast {:.2} vs generic {:.2} (se {se:.3})",
            mean(&fast),
            mean(&generic)
        );
        same_rate("ending on points", (fast.on_points, fast.n), (generic.on_points, generic.n));
    }
}

#[test]
fn fast_random_playout_from_a_chosen_placement_square() {
    // A leaf of the search tree may sit between the two clicks of a placement; rollouts start
    // there too.
    let mut s = BattleNumber::new_game(&Options::default());
    s.play(Action::Square(24)).unwrap();
    let mut a = s.clone();
    a.random_playout(&mut rng_from_seed(1));
    check_terminal(&a).unwrap();
    assert!(matches!(a.piece(24), Some(Piece { owner: Seat::First, kind: Kind::CornerTwo, .. })));
    for (i, start) in playout_start_states(30).iter().filter(|s| s.pending_square().is_some()).enumerate() {
        let q = start.pending_square().unwrap();
        let mut a = start.clone();
        a.random_playout(&mut rng_from_seed(i as u64));
        check_terminal(&a).unwrap_or_else(|e| panic!("fast playout from a chosen square: {e}"));
        if a.extracted() == [0, 0] {
            // (Extractions may have removed it since.)
            assert_eq!(a.piece(q).map(|p| p.owner), Some(mover(start)), "the chosen square was not used");
        }
    }
}
