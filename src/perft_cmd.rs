//! `zeroplay perft`: counts per depth, split across threads at the first turn.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::Result;
use engine::banqi::Banqi;
use engine::battlenumber::BattleNumber;
use engine::game::Game;
use engine::perft::{first_turns, perft};
use engine::trigolden::{self, TriGolden};

use crate::cli::{GameName, PerftArgs};

/// Runs the command, printing one line per depth.
///
/// # Errors
/// None yet; the signature leaves room for games whose options come from files.
pub fn run(args: PerftArgs) -> Result<()> {
    let threads = crate::arena_cmd::thread_count(args.threads);
    match args.game {
        GameName::Battlenumber => {
            let start = BattleNumber::new_game(&Default::default());
            println!("perft {} (default options), {} threads", BattleNumber::NAME, threads);
            println!("{:>5} {:>18} {:>10} {:>14}", "depth", "sequences", "seconds", "leaves/s");
            for d in 1..=args.depth {
                let t = Instant::now();
                let n = parallel_perft(&start, d, threads);
                let secs = t.elapsed().as_secs_f64();
                println!("{d:>5} {n:>18} {secs:>10.3} {:>14.0}", n as f64 / secs.max(1e-9));
            }
        }
        GameName::Banqi => {
            let start = Banqi::start();
            println!(
                "perft {} (a flip and each piece it may reveal are distinct sequences), {} threads",
                Banqi::NAME,
                threads
            );
            println!("{:>5} {:>18} {:>10} {:>14}", "depth", "sequences", "seconds", "leaves/s");
            for d in 1..=args.depth {
                let t = Instant::now();
                let n = parallel_perft(&start, d, threads);
                let secs = t.elapsed().as_secs_f64();
                println!("{d:>5} {n:>18} {secs:>10.3} {:>14.0}", n as f64 / secs.max(1e-9));
            }
        }
        GameName::Trigolden => {
            let start = TriGolden::new_game(&Default::default());
            println!(
                "perft {} (default piece set and options; a turn is the set of pieces it places), {} threads",
                TriGolden::NAME,
                threads
            );
            println!("{:>5} {:>18} {:>10} {:>14}", "depth", "sequences", "seconds", "leaves/s");
            for d in 1..=args.depth {
                let t = Instant::now();
                let n = trigolden_perft(&start, d, threads);
                let secs = t.elapsed().as_secs_f64();
                println!("{d:>5} {n:>18} {secs:>10.3} {:>14.0}", n as f64 / secs.max(1e-9));
            }
        }
    }
    Ok(())
}

/// TriGolden's turn-set perft, the first turns shared out among `threads`.
pub fn trigolden_perft(state: &TriGolden, depth: u32, threads: usize) -> u64 {
    if depth <= 1 || threads <= 1 {
        return trigolden::perft(state, depth);
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
                        total += trigolden::perft(child, depth - 1);
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
