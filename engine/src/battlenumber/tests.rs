use super::*;
use crate::perft::perft;

#[test]
fn smoke_perft_and_playout() {
    let s = BattleNumber::new_game(&Options::default());
    for d in 1..=3 {
        eprintln!("perft {d} = {}", perft(&s, d));
    }
    let mut rng = crate::rng_from_seed(1);
    let mut g = s.clone();
    g.random_playout(&mut rng);
    eprintln!("{}", draw_board(&g, 0, false));
    eprintln!("{:?} placed={:?} ex={:?}", g.outcome(), g.placed(), g.extracted());
}
