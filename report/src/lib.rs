//! What self-play tells a game's designer: a balance report from zeroplay's Parquet store.
//!
//! [`build`] reads every game of one or more stores ([`read`]), replays each with the engine
//! ([`games`]) and sums them up per game and rule-option set: the first player's score rate
//! with its 95% interval (overall, by model version — a proxy for strength — and by search
//! budget), score margins, game lengths, how games end, and per game what decides them
//! (TriGolden's bracing points by shape and rule-6 turns, Battle Number's region against
//! extraction points and pieces never placed, Banqi's captures, colours and draw causes).
//! Option sets of one game are compared side by side. [`html::page`] draws it as one HTML
//! page with SVG plots, in English and Chinese; [`Report`] is also written as JSON.
//!
//! The report reads only: a store is never changed. Bad files and unreplayable games are
//! named in the report and left out of its figures.

pub mod games;
pub mod html;
pub mod read;
pub mod stats;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::games::{Details, Ending, Played};
use crate::stats::{Histogram, Rate};

/// The whole report (also its JSON file).
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The stores read.
    pub sources: Vec<String>,
    /// Parquet files read.
    pub files_read: usize,
    /// Positions (rows) read.
    pub positions: u64,
    /// Files and games left out, and why.
    pub skipped: Vec<String>,
    /// Games in the figures.
    pub games: usize,
    /// One section per game and option set.
    pub groups: Vec<Group>,
    /// Per game played under more than one option set: the sets side by side.
    pub comparisons: Vec<Comparison>,
}

/// The figures of one game under one option set.
#[derive(Clone, Debug, Serialize)]
pub struct Group {
    /// The game's name (`trigolden`, …).
    pub game: String,
    /// Its English title.
    pub title: String,
    /// Its Chinese title.
    pub title_zh: String,
    /// The options the games were played under, as the game names them.
    pub options: serde_json::Value,
    /// The options in one line (`scoring=bracer, …`).
    pub options_text: String,
    /// Games.
    pub games: usize,
    /// The first player over all these games.
    pub first: Rate,
    /// The first player by model version (0: no network yet, the designer's evaluation at the
    /// leaves): how balance moves as play gets stronger.
    pub by_model: Vec<Bucket>,
    /// The first player by search budget (visits of a full search).
    pub by_budget: Vec<Bucket>,
    /// The first player's final margin.
    pub margin: Histogram,
    /// Game length in player turns.
    pub turns: Histogram,
    /// How games ended.
    pub endings: Vec<Count>,
    /// Splits of the first player's rate particular to the game (Banqi: by the first
    /// player's colour).
    pub splits: Vec<Split>,
    /// What decides games, particular to the game.
    pub tallies: Vec<Tally>,
}

/// The first player's rate in one bucket of games.
#[derive(Clone, Debug, Serialize)]
pub struct Bucket {
    /// The bucket's label (`v3`, `800`, `red`).
    pub label: String,
    /// Its Chinese label (`紅`; most labels read the same).
    pub label_zh: String,
    /// The rate.
    pub rate: Rate,
}

/// A count of games.
#[derive(Clone, Debug, Serialize)]
pub struct Count {
    /// What was counted.
    pub key: Ending,
    /// Games.
    pub games: usize,
    /// Of those, won by the first player.
    pub first_wins: usize,
}

/// A split of the first player's rate.
#[derive(Clone, Debug, Serialize)]
pub struct Split {
    /// English heading.
    pub en: String,
    /// Chinese heading.
    pub zh: String,
    /// The buckets.
    pub buckets: Vec<Bucket>,
}

/// How often each item (a shape, a piece kind) contributes, per game.
#[derive(Clone, Debug, Serialize)]
pub struct Tally {
    /// English heading.
    pub en: String,
    /// Chinese heading.
    pub zh: String,
    /// Items and their value per game.
    pub items: Vec<Item>,
}

/// One tallied item.
#[derive(Clone, Debug, Serialize)]
pub struct Item {
    /// Its label.
    pub label: String,
    /// Its Chinese label.
    pub label_zh: String,
    /// Its value per game.
    pub per_game: f64,
}

/// One game's option sets side by side.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// The game's name.
    pub game: String,
    /// One row per option set.
    pub rows: Vec<ComparisonRow>,
}

/// One option set in a comparison.
#[derive(Clone, Debug, Serialize)]
pub struct ComparisonRow {
    /// The options in one line.
    pub options_text: String,
    /// The first player's rate.
    pub first: Rate,
    /// Mean turns.
    pub turns: f64,
    /// The most common ending and its share.
    pub top_ending: Option<(Ending, f64)>,
}

/// Reads every Parquet file of `dirs` and sums the games up.
///
/// # Errors
/// A directory cannot be listed. Bad files and games are skipped and named instead.
pub fn build(dirs: &[PathBuf], mut progress: impl FnMut(usize, usize)) -> Result<Report, read::ReadError> {
    let mut files = Vec::new();
    for d in dirs {
        files.extend(read::list_files(d)?);
    }
    let mut skipped = Vec::new();
    let mut rows: BTreeMap<String, Vec<read::Row>> = BTreeMap::new();
    let (mut positions, mut files_read) = (0, 0);
    for (i, f) in files.iter().enumerate() {
        match read::read_file(f) {
            Ok(file_rows) => {
                positions += file_rows.len() as u64;
                files_read += 1;
                for (id, row) in file_rows {
                    rows.entry(id).or_default().push(row);
                }
            }
            Err(e) => skipped.push(e.to_string()),
        }
        progress(i + 1, files.len());
    }
    let mut played = Vec::new();
    for (id, rs) in rows {
        let Some(record) = read::assemble(id.clone(), rs) else {
            skipped.push(format!("game {id}: its rows do not run from ply 0 without a gap"));
            continue;
        };
        match games::play(record) {
            Ok(p) => played.push(p),
            Err(e) => skipped.push(e.to_string()),
        }
    }
    Ok(summarise(dirs, files_read, positions, skipped, played))
}

/// `scoring=bracer, rule6-new-point=false`: an options object in one line.
pub fn options_text(o: &serde_json::Value) -> String {
    match o.as_object() {
        Some(m) if !m.is_empty() => m
            .iter()
            .map(|(k, v)| format!("{k}={}", v.as_str().map_or_else(|| v.to_string(), str::to_string)))
            .collect::<Vec<_>>()
            .join(", "),
        _ => "defaults".into(),
    }
}

fn summarise(
    dirs: &[PathBuf],
    files_read: usize,
    positions: u64,
    skipped: Vec<String>,
    played: Vec<Played>,
) -> Report {
    let games = played.len();
    let mut by_group: BTreeMap<(String, String), Vec<Played>> = BTreeMap::new();
    for p in played {
        by_group.entry((p.record.kind.name().to_string(), options_text(&p.options))).or_default().push(p);
    }
    let groups: Vec<Group> = by_group.into_values().map(|ps| group(&ps)).collect();
    let mut comparisons: BTreeMap<String, Vec<ComparisonRow>> = BTreeMap::new();
    for g in &groups {
        let top =
            g.endings.iter().max_by_key(|c| c.games).map(|c| (c.key, c.games as f64 / g.games.max(1) as f64));
        comparisons.entry(g.game.clone()).or_default().push(ComparisonRow {
            options_text: g.options_text.clone(),
            first: g.first.clone(),
            turns: g.turns.mean,
            top_ending: top,
        });
    }
    Report {
        sources: dirs.iter().map(|d| d.display().to_string()).collect(),
        files_read,
        positions,
        skipped,
        games,
        groups,
        comparisons: comparisons
            .into_iter()
            .filter(|(_, rows)| rows.len() > 1)
            .map(|(game, rows)| Comparison { game, rows })
            .collect(),
    }
}

fn rate<'a>(ps: impl IntoIterator<Item = &'a Played>) -> Rate {
    Rate::of(ps.into_iter().map(|p| (p.record.result_first, p.record.score_first)))
}

fn buckets<K: Ord>(ps: &[Played], key: impl Fn(&Played) -> K, label: impl Fn(&K) -> String) -> Vec<Bucket> {
    let mut m: BTreeMap<K, Vec<&Played>> = BTreeMap::new();
    for p in ps {
        m.entry(key(p)).or_default().push(p);
    }
    m.iter()
        .map(|(k, v)| {
            let l = label(k);
            let (en, zh) =
                l.split_once('|').map_or((l.clone(), l.clone()), |(a, b)| (a.to_string(), b.to_string()));
            Bucket { label: en, label_zh: zh, rate: rate(v.iter().copied()) }
        })
        .collect()
}

fn group(ps: &[Played]) -> Group {
    let kind = ps[0].record.kind;
    let pack = kind.pack();
    let endings = Ending::ALL
        .iter()
        .map(|&key| {
            let of: Vec<&Played> = ps.iter().filter(|p| p.ending == key).collect();
            Count {
                key,
                games: of.len(),
                first_wins: of.iter().filter(|p| p.record.result_first > 0).count(),
            }
        })
        .filter(|c| c.games > 0)
        .collect();
    let (splits, tallies) = particulars(ps);
    Group {
        game: kind.name().to_string(),
        title: pack.title.to_string(),
        title_zh: pack.title_zh.to_string(),
        options: ps[0].options.clone(),
        options_text: options_text(&ps[0].options),
        games: ps.len(),
        first: rate(ps),
        by_model: buckets(ps, |p| p.record.model_version, |v| format!("v{v}")),
        by_budget: buckets(ps, |p| p.record.budget, |b| format!("{b}")),
        margin: Histogram::of(&ps.iter().map(|p| i64::from(p.record.score_first)).collect::<Vec<_>>(), 21),
        turns: Histogram::of(&ps.iter().map(|p| p.turns as i64).collect::<Vec<_>>(), 20),
        endings,
        splits,
        tallies,
    }
}

/// Sums of per-game counts, divided by the games.
fn per_game(ps: &[Played], each: impl Fn(&Played, &mut BTreeMap<String, f64>)) -> Vec<Item> {
    let mut m = BTreeMap::new();
    for p in ps {
        each(p, &mut m);
    }
    let n = ps.len().max(1) as f64;
    // A key is `English|Chinese`, or a name both languages share (a shape's letter); a leading
    // digit and space only orders the items.
    let unordered = |s: &str| {
        let b = s.as_bytes();
        if b.len() > 2 && b[0].is_ascii_digit() && b[1] == b' ' { s[2..].to_string() } else { s.to_string() }
    };
    m.into_iter()
        .map(|(key, v)| {
            let (en, zh) = key.split_once('|').unwrap_or((&key, &key));
            Item { label: unordered(en), label_zh: unordered(zh), per_game: v / n }
        })
        .collect()
}

fn tally(en: &str, zh: &str, items: Vec<Item>) -> Tally {
    Tally { en: en.into(), zh: zh.into(), items }
}

/// The game's own splits and tallies.
fn particulars(ps: &[Played]) -> (Vec<Split>, Vec<Tally>) {
    let add = |m: &mut BTreeMap<String, f64>, k: &str, v: f64| *m.entry(k.to_string()).or_insert(0.0) += v;
    match ps[0].details {
        Details::TriGolden { .. } => {
            let each =
                |f: &dyn Fn(&Details, &mut BTreeMap<String, f64>)| per_game(ps, |p, m| f(&p.details, m));
            let points = each(&|d, m| {
                if let Details::TriGolden { points_by_shape, .. } = d {
                    points_by_shape.iter().for_each(|(k, &v)| add(m, k, v as f64));
                }
            });
            let placed = each(&|d, m| {
                if let Details::TriGolden { placed_by_shape, .. } = d {
                    placed_by_shape.iter().for_each(|(k, &v)| add(m, k, v as f64));
                }
            });
            let seats = each(&|d, m| {
                if let Details::TriGolden { points_by_owner, scores, rule6_turns, .. } = d {
                    add(
                        m,
                        "1 bracing points on the first player's pieces|1 先手棋子上的頂鑫點",
                        points_by_owner[0] as f64,
                    );
                    add(
                        m,
                        "2 bracing points on the second player's pieces|2 後手棋子上的頂鑫點",
                        points_by_owner[1] as f64,
                    );
                    add(m, "3 first player's points|3 先手得分", f64::from(scores[0]));
                    add(m, "4 second player's points|4 後手得分", f64::from(scores[1]));
                    add(
                        m,
                        "5 rule-6 turns (two pieces on two opponent pieces)|5 規則 6 回合（兩子貼不同棋子）",
                        *rule6_turns as f64,
                    );
                }
            });
            let tallies = vec![
                tally("Bracing points by the shape they lie on", "頂鑫點（按所在棋子的形狀）", points),
                tally("Pieces placed by shape", "各形狀放下的棋子", placed),
                tally("Points, bracing points and rule-6 turns", "分數、頂鑫點與規則 6 回合", seats),
            ];
            (vec![], tallies)
        }
        Details::BattleNumber { .. } => {
            let parts = per_game(ps, |p, m| {
                if let Details::BattleNumber { regions, extraction, .. } = &p.details {
                    add(
                        m,
                        "1 region points (size, either player)|1 區域分（絕對值）",
                        f64::from(regions.abs()),
                    );
                    add(m, "2 extraction points, first player|2 先手抽取分", f64::from(extraction[0]));
                    add(m, "3 extraction points, second player|3 後手抽取分", f64::from(extraction[1]));
                }
            });
            let never = per_game(ps, |p, m| {
                if let Details::BattleNumber { never_placed, .. } = &p.details {
                    never_placed.iter().for_each(|(k, &v)| add(m, k, v as f64));
                }
            });
            let tallies = vec![
                tally("Region against extraction points", "區域分與抽取分", parts),
                tally(
                    "Pieces never placed, by kind (both players)",
                    "從未放下的棋子（按種類，雙方合計）",
                    never,
                ),
            ];
            (vec![], tallies)
        }
        Details::Banqi { .. } => {
            let colour = |p: &Played| match &p.details {
                Details::Banqi { first_colour: Some("red"), .. } => "red|紅",
                Details::Banqi { first_colour: Some(_), .. } => "black|黑",
                _ => "none|未定",
            };
            let split = Split {
                en: "First player by the colour they drew".into(),
                zh: "先手按翻出的顏色".into(),
                buckets: buckets(ps, |p| colour(p).to_string(), String::clone),
            };
            let caps = per_game(ps, |p, m| {
                if let Details::Banqi { flips, captures_by, .. } = &p.details {
                    add(m, "flips|翻子", *flips as f64);
                    captures_by
                        .iter()
                        .for_each(|(k, &v)| add(m, &format!("captures by {k}|{k} 吃子"), v as f64));
                }
            });
            (
                vec![split],
                vec![tally(
                    "Flips and captures (by the capturing piece)",
                    "翻子與吃子（按吃子的棋子）",
                    caps,
                )],
            )
        }
        Details::Other => (vec![], vec![]),
    }
}

/// Writes `report.json` and `report.html` into `dir` (created if needed); returns the page's
/// path.
///
/// # Errors
/// The directory or a file cannot be written.
pub fn write(report: &Report, dir: &Path) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let json = serde_json::to_string_pretty(report).map_err(std::io::Error::other)?;
    std::fs::write(dir.join("report.json"), json + "\n")?;
    let page = dir.join("report.html");
    std::fs::write(&page, html::page(report))?;
    Ok(page)
}
