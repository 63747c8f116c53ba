//! `zeroplay perft`: counts per depth, split across threads at the first turn.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::Result;
use engine::GameKind;
use engine::game::Game;
use engine::perft::{first_turns, perft};
use engine::trigolden::{self, TriGolden};

use crate::cli::PerftArgs;

/// Runs the command, printing one line per depth.
///
/// # Errors
/// None yet; the signature leaves room for games whose options come from files.
pub fn run(args: PerftArgs) -> Result<()> {
    let threads = crate::arena_cmd::thread_count(args.threads);
    let note = args.game.pack().perft_note;
    println!("perft {} ({note}), {threads} threads", args.game);
    println!("{:>5} {:>18} {:>10} {:>14}", "depth", "sequences", "seconds", "leaves/s");
    for d in 1..=args.depth {
        let t = Instant::now();
        let n = count(args.game, d, threads, args.make_every_turn);
        let secs = t.elapsed().as_secs_f64();
        println!("{d:>5} {n:>18} {secs:>10.3} {:>14.0}", n as f64 / secs.max(1e-9));
    }
    Ok(())
}

/// Perft from the default start of `kind` to `depth` turns.
fn count(kind: GameKind, depth: u32, threads: usize, make_every_turn: bool) -> u64 {
    match kind {
        // TriGolden counts a turn once per set of pieces, whatever the order of its clicks.
        GameKind::TriGolden => {
            trigolden_perft(&TriGolden::new_game(&Default::default()), depth, threads, make_every_turn)
        }
        GameKind::BattleNumber | GameKind::Banqi => {
            engine::with_game!(kind, |G| parallel_perft(&G::new_game(&Default::default()), depth, threads))
        }
    }
}

/// TriGolden's turn-set perft, the first turns shared out among `threads` (see
/// [`trigolden::perft`] for `make_every_turn`).
pub fn trigolden_perft(state: &TriGolden, depth: u32, threads: usize, make_every_turn: bool) -> u64 {
    if depth <= 1 || threads <= 1 {
        return trigolden::perft(state, depth, make_every_turn);
    }
    let roots: Vec<TriGolden> = state
        .legal_turns()
        .into_iter()
        .map(|turn| {
            let mut child = state.clone();
            turn.into_iter().for_each(|a| child.play_unchecked(a));
            child
        })
        .collect();
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut total = 0;
                    while let Some(child) = roots.get(next.fetch_add(1, Ordering::Relaxed)) {
                        total += trigolden::perft(child, depth - 1, make_every_turn);
                    }
                    total
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("perft worker panicked")).sum()
    })
}

/// Perft of `state` to `depth` turns, with the first turns shared out among `threads`.
pub fn parallel_perft<G: Game>(state: &G, depth: u32, threads: usize) -> u64 {
    if depth <= 1 || threads <= 1 {
        return perft(state, depth);
    }
    let roots = first_turns(state);
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut total = 0;
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some((_, child)) = roots.get(i) else { return total };
                        total += perft(child, depth - 1);
                    }
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("perft worker panicked")).sum()
    })
}
