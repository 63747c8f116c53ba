//! `zeroplay draws`: a Banqi arena's drawn games judged by the endgame tables. Why each was
//! drawn, and which passed through a position the tables hold as won, with the agent that let
//! the win go: how many draws were winnable (issue 39).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use engine::banqi::draws::{DrawCause, DrawReview, review_draw};
use engine::banqi::tablebase::{ANALYSIS_PIECES, MAX_PIECES, Tablebase};
use engine::banqi::{Action, Banqi};
use indicatif::{ProgressBar, ProgressStyle};

/// `zeroplay draws`.
#[derive(Debug, Args)]
pub struct DrawsArgs {
    /// The directory `zeroplay arena --game banqi --out DIR` wrote (its games/*.txt are read).
    pub dir: PathBuf,
    /// Most pieces the tables judge: 4 (the tables the search uses, instant) or 5 (each
    /// 5-piece material takes tens of seconds and 134 MB to build).
    #[arg(long, default_value_t = ANALYSIS_PIECES as u8, value_parser = clap::value_parser!(u8).range(4..=5))]
    pub max_pieces: u8,
    /// Where to write the reviews as JSON (default: DIR/draws.json).
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// One game file of the arena.
struct GameFile {
    name: String,
    /// The agents by seat (`A` or `B`), the first seat's first.
    seats: [String; 2],
    actions: Vec<Action>,
}

/// One drawn game, for the JSON file.
#[derive(serde::Serialize)]
struct Row {
    file: String,
    first: String,
    second: String,
    /// The agent that had the win and let it go, if the draw was winnable.
    let_go_by: Option<String>,
    #[serde(flatten)]
    review: DrawReview,
}

/// Runs the command.
///
/// # Errors
/// A directory without game records, a record that is not a whole Banqi game, an unwritable
/// JSON file.
pub fn run(args: DrawsArgs) -> Result<()> {
    let max_pieces = usize::from(args.max_pieces);
    let games_dir = args.dir.join("games");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&games_dir)
        .with_context(|| {
            format!("reading {} (the --out directory of `zeroplay arena`)", games_dir.display())
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        bail!("{} holds no game records (match-*-game-*.txt)", games_dir.display());
    }
    let mut tables = if max_pieces <= MAX_PIECES { Tablebase::new() } else { Tablebase::for_analysis() };
    let bar = ProgressBar::new(paths.len() as u64).with_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} games  {msg}")
            .expect("valid template"),
    );
    let mut rows = Vec::new();
    for path in &paths {
        let g = read_game(path)?;
        bar.set_message(g.name.clone());
        if let Some(review) = review_draw(&Banqi::start(), &g.actions, &mut tables)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?
        {
            let let_go_by = review.missed.as_ref().map(|m| g.seats[m.seat.index()].clone());
            let [first, second] = g.seats;
            rows.push(Row { file: g.name, first, second, let_go_by, review });
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    let games = paths.len();
    print!("{}", report(&args.dir, games, &rows, max_pieces));
    let json = args.json.clone().unwrap_or_else(|| args.dir.join("draws.json"));
    let body = serde_json::json!({ "games": games, "max_pieces": max_pieces, "draws": rows });
    std::fs::write(&json, serde_json::to_string_pretty(&body)? + "\n")
        .with_context(|| format!("writing {}", json.display()))?;
    println!("reviews: {}", json.display());
    Ok(())
}

/// Reads an arena game record: the header names the game and the seats' agents, the rest are
/// the actions from the start.
fn read_game(path: &Path) -> Result<GameFile> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if !text.lines().next().is_some_and(|l| l.contains("zeroplay render banqi")) {
        bail!("{}: not a Banqi game record of `zeroplay arena`", path.display());
    }
    // `# first seat: A = <spec>`: the agent's letter.
    let seat = |prefix: &str| -> Result<String> {
        let line = text
            .lines()
            .find_map(|l| l.strip_prefix(prefix))
            .with_context(|| format!("{}: no `{prefix}` line", path.display()))?;
        Ok(line.split_once(" = ").map_or(line, |(who, _)| who).trim().to_string())
    };
    let seats = [seat("# first seat: ")?, seat("# second seat: ")?];
    let actions = engine::arena::record_words(&text)
        .enumerate()
        .map(|(i, w)| {
            Action::parse(w).map_err(|e| anyhow::anyhow!("{}: action {}: {e}", path.display(), i + 1))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(GameFile { name, seats, actions })
}

/// The table of drawn games and the summary.
fn report(dir: &Path, games: usize, rows: &[Row], max_pieces: usize) -> String {
    use std::fmt::Write as _;
    let mut t = format!(
        "{} games in {}, {} drawn; positions with at most {max_pieces} pieces, none face down, judged by the tables\n\n",
        games,
        dir.display(),
        rows.len()
    );
    t.push_str(
        "| game | first–second | cause | actions | pieces at the end | face down | winnable | let go |\n",
    );
    t.push_str("|---|---|---|---|---|---|---|---|\n");
    for r in rows {
        let v = &r.review;
        let cause = match v.cause {
            DrawCause::Repetition => "repetition",
            DrawCause::NoProgress => "60 plies",
        };
        let (winnable, let_go) = match &v.missed {
            Some(m) => (
                format!(
                    "won for {} after action {} ({} pieces, DTZ {})",
                    r.let_go_by.as_deref().unwrap_or("?"),
                    m.ply,
                    m.pieces,
                    m.distance
                ),
                format!("action {} by {}", m.let_go_at + 1, r.let_go_by.as_deref().unwrap_or("?")),
            ),
            None if v.in_tables => ("no (the tables hold a draw)".into(), String::new()),
            None => (format!("not judged (eval {:+} for the first seat)", v.eval_first), String::new()),
        };
        let _ = writeln!(
            t,
            "| {} | {}–{} | {cause} | {} | {}–{} | {} | {winnable} | {let_go} |",
            r.file, r.first, r.second, v.plies, v.pieces[0], v.pieces[1], v.face_down
        );
    }
    let count = |f: &dyn Fn(&Row) -> bool| rows.iter().filter(|r| f(r)).count();
    let repetition = count(&|r| r.review.cause == DrawCause::Repetition);
    let in_tables = count(&|r| r.review.in_tables);
    let winnable = count(&|r| r.review.missed.is_some());
    let mut by: BTreeMap<&str, usize> = BTreeMap::new();
    for who in rows.iter().filter_map(|r| r.let_go_by.as_deref()) {
        *by.entry(who).or_default() += 1;
    }
    let by: Vec<String> = by.iter().map(|(w, n)| format!("{w} {n}")).collect();
    let _ = writeln!(
        t,
        "\n{} drawn: {repetition} by repetition, {} by the 60-ply rule; {in_tables} ended within the tables; \
         {winnable} passed through a position the tables hold as won{}",
        rows.len(),
        rows.len() - repetition,
        if by.is_empty() { String::new() } else { format!(" (let go by: {})", by.join(", ")) }
    );
    t
}
