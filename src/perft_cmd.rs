//! `zeroplay perft`: counts per depth, split across threads at the first turn.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::Result;
use engine::GameKind;
use engine::game::Game;
use engine::pack::GamePack;

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

/// Perft from the default start of `kind` to `depth` turns (TriGolden counts a turn once per
/// set of pieces; see [`engine::trigolden::perft`] for `make_every_turn`).
fn count(kind: GameKind, depth: u32, threads: usize, make_every_turn: bool) -> u64 {
    engine::with_game!(kind, |G| parallel_perft(
        &G::new_game(&Default::default()),
        depth,
        threads,
        make_every_turn
    ))
}

/// Perft of `state` to `depth` turns, as its game counts them ([`GamePack::perft`]), with
/// the first turns shared out among `threads`.
pub fn parallel_perft<G: GamePack + Sync>(
    state: &G,
    depth: u32,
    threads: usize,
    make_every_turn: bool,
) -> u64 {
    if depth <= 1 || threads <= 1 {
        return state.perft(depth, make_every_turn);
    }
    let roots = state.perft_children();
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut total = 0;
                    while let Some(child) = roots.get(next.fetch_add(1, Ordering::Relaxed)) {
                        total += child.perft(depth - 1, make_every_turn);
                    }
                    total
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("perft worker panicked")).sum()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_share_the_count_out_without_changing_it() {
        for kind in GameKind::ALL {
            let by = |threads| count(kind, 2, threads, false);
            let one = by(1);
            assert!(one > 0, "{kind}");
            assert_eq!(by(3), one, "{kind}");
        }
        // TriGolden counts a turn once per set of pieces (its own perft), not per click order.
        let tg = GameKind::of::<engine::trigolden::TriGolden>();
        let start = engine::trigolden::TriGolden::new_game(&Default::default());
        assert_eq!(count(tg, 2, 2, false), engine::trigolden::perft(&start, 2, false));
    }
}
