//! The report on a small store of known games: self-play games written as the coordinator
//! writes them, so every figure can be checked against the games' own outcomes.

use std::path::Path;

use engine::battlenumber::BattleNumber;
use engine::eval::Rollout;
use engine::selfplay::{SelfPlaySettings, play_game};
use engine::trigolden::{Options, ScoringMode, TriGolden};
use engine::{Game, Seat};
use report::games::Ending;
use zeroplay_coordinator::games::{Limits, store_records};

fn settings() -> SelfPlaySettings {
    SelfPlaySettings { full_sims: 8, fast_sims: 0, resign_threshold: -1.0, ..SelfPlaySettings::default() }
}

/// Plays `seeds` from `start` and writes them as one file; returns each game's (result,
/// margin) from the first seat's view, as the engine ended it.
fn store<G: Game>(
    dir: &Path,
    name: &str,
    start: &G,
    model: u64,
    seeds: std::ops::Range<u64>,
) -> Vec<(i8, i32)> {
    let s = settings();
    let limits = Limits::default().for_settings(&s);
    let (mut records, mut known) = (Vec::new(), Vec::new());
    for seed in seeds {
        let mut g = play_game(start, &s, &Rollout::default(), seed);
        // The model that searched each move, as a worker records it.
        g.moves.iter_mut().for_each(|m| m.model_version = model);
        let result = match g.outcome.winner() {
            Some(Seat::First) => 1,
            Some(Seat::Second) => -1,
            None => 0,
        };
        known.push((result, g.outcome.difference(Seat::First)));
        records.push(zeroplay_proto::convert::game_record(
            &g,
            format!("{:032x}", seed + 1000 * model),
            seed,
            model,
        ));
    }
    store_records(dir, name, &records, &limits, "test").expect("self-play games are valid");
    known
}

#[test]
fn the_figures_are_the_games_own_counts() {
    let dir = tempfile::tempdir().unwrap();
    let bracer = TriGolden::new_game(&Options::default());
    let other = TriGolden::new_game(&Options { scoring: ScoringMode::Trigolden, ..Options::default() });
    let mut a = store(dir.path(), "games-1-4.parquet", &bracer, 0, 0..4);
    a.extend(store(dir.path(), "games-5-7.parquet", &bracer, 2, 4..7));
    let b = store(dir.path(), "games-8-10.parquet", &other, 0, 10..13);
    let bn =
        store(dir.path(), "games-11-13.parquet", &BattleNumber::new_game(&Default::default()), 0, 20..23);
    // A damaged file is named and left out; the rest is read.
    std::fs::write(dir.path().join("games-99-99.parquet"), b"not parquet").unwrap();

    let mut calls = 0;
    let r = report::build(&[dir.path().to_path_buf()], |_, _| calls += 1).unwrap();
    assert_eq!(calls, 5, "progress once per file");
    assert_eq!((r.files_read, r.games), (4, 13));
    assert_eq!(r.skipped.len(), 1, "{:?}", r.skipped);
    assert!(r.skipped[0].contains("games-99-99.parquet"), "{:?}", r.skipped);

    // One group per game and option set, each with the games' own results.
    assert_eq!(r.groups.len(), 3, "{:?}", r.groups.iter().map(|g| &g.options_text).collect::<Vec<_>>());
    let find = |game: &str, opt: &str| {
        r.groups
            .iter()
            .find(|g| g.game == game && g.options_text.contains(opt))
            .unwrap_or_else(|| panic!("{game} {opt}"))
    };
    for (g, known) in [
        (find("trigolden", "scoring=bracer"), &a),
        (find("trigolden", "scoring=trigolden"), &b),
        (find("battlenumber", ""), &bn),
    ] {
        let wins = known.iter().filter(|k| k.0 > 0).count();
        let draws = known.iter().filter(|k| k.0 == 0).count();
        assert_eq!((g.games, g.first.wins, g.first.draws), (known.len(), wins, draws), "{}", g.options_text);
        let margin = known.iter().map(|k| f64::from(k.1)).sum::<f64>() / known.len() as f64;
        assert!((g.first.margin - margin).abs() < 1e-9, "{} {margin}", g.first.margin);
        assert_eq!(g.endings.iter().map(|c| c.games).sum::<usize>(), known.len());
        assert_eq!(g.margin.bins.iter().map(|b| b.count).sum::<usize>(), known.len());
    }
    // By model version: 4 games of v0 and 3 of v2 under bracer scoring.
    let tg = find("trigolden", "scoring=bracer");
    let by: Vec<(String, usize)> = tg.by_model.iter().map(|b| (b.label.clone(), b.rate.games)).collect();
    assert_eq!(by, [("v0".to_string(), 4), ("v2".to_string(), 3)]);
    // Every full search had 8 simulations: one budget bucket.
    assert_eq!(tg.by_budget.len(), 1, "{:?}", tg.by_budget.iter().map(|b| &b.label).collect::<Vec<_>>());
    // TriGolden's tallies: pieces placed per game add up to its turns' pieces.
    let placed: f64 = tg.tallies[1].items.iter().map(|i| i.per_game).sum();
    assert!(placed > 2.0, "{placed}");
    assert!(tg.endings.iter().all(|c| matches!(c.key, Ending::Points | Ending::Arbitration)));
    // The two scoring rules side by side.
    assert_eq!(r.comparisons.len(), 1);
    assert_eq!(r.comparisons[0].rows.len(), 2);

    // The files: JSON that reads back, and a page in both languages with its plots.
    let out = dir.path().join("report");
    let page = report::write(&r, &out).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(json["games"], 13);
    let html = std::fs::read_to_string(page).unwrap();
    assert!(html.contains("平衡報告") && html.contains("balance report"));
    assert_eq!(html.matches("<section class=\"group\"").count(), 3);
    assert!(html.matches("<svg class=\"plot\"").count() >= 12);
    assert!(html.contains("games-99-99.parquet"), "the left-out file is named on the page");
}

#[test]
fn an_empty_store_gives_an_empty_report_and_a_missing_one_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let r = report::build(&[dir.path().to_path_buf()], |_, _| {}).unwrap();
    assert_eq!((r.games, r.groups.len()), (0, 0));
    assert!(report::html::page(&r).contains("No games in the store yet."));
    let missing = dir.path().join("nothing-here");
    let e = report::build(&[missing], |_, _| {}).unwrap_err();
    assert!(e.to_string().contains("nothing-here"), "{e}");
}

/// Resigned games stop before the rules end them: they are read, not left out, and counted
/// as resignations.
#[test]
fn resigned_games_are_counted_not_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let s = SelfPlaySettings {
        full_sims: 16,
        fast_sims: 4,
        resign_threshold: 0.2,
        resign_consecutive: 2,
        resign_playthrough_fraction: 0.0,
        ..SelfPlaySettings::default()
    };
    let limits = Limits::default().for_settings(&s);
    let start = BattleNumber::new_game(&Default::default());
    let (mut records, mut resigned) = (Vec::new(), 0);
    for seed in 0..40 {
        let g = play_game(&start, &s, &Rollout::default(), seed);
        resigned += usize::from(g.resigned.is_some());
        records.push(zeroplay_proto::convert::game_record(&g, format!("{seed:032x}"), seed, 0));
    }
    assert!(resigned > 0, "no game resigned: the test needs one");
    store_records(dir.path(), "games-1-40.parquet", &records, &limits, "test").unwrap();
    let r = report::build(&[dir.path().to_path_buf()], |_, _| {}).unwrap();
    assert!(r.skipped.is_empty(), "{:?}", r.skipped);
    assert_eq!(r.games, 40);
    let counted = r.groups[0].endings.iter().find(|c| c.key == Ending::Resignation).map_or(0, |c| c.games);
    assert_eq!(counted, resigned);
}
