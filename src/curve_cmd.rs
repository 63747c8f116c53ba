//! `zeroplay curve`: a learning curve. Runs `zeroplay local` for a stated time on a stated
//! seed, copying the best model at fixed minutes (`local --snapshot-at`), then measures each
//! copy as `zeroplay strength` does, with the network alone at the leaves (`lambda=0`, no
//! knowledge priors) against the game's reference opponent at equal time per move. The
//! measuring starts after the run, so it has the cores to itself. Prints a table; writes
//! `curve.json` and `curve.svg` (Elo with its 95% interval against minutes and against games)
//! to `runs/<name>/curve/`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::cli::{CurveArgs, LocalArgs};

/// One line of `snapshots.jsonl`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Snapshot {
    /// Minutes of the run at which the snapshot was due.
    pub minutes: f64,
    /// Seconds of the run when it was taken.
    pub elapsed_s: f64,
    /// Games stored by then (this session).
    pub games: u64,
    /// Positions stored by then.
    pub positions: u64,
    /// The copied best model (`None`: none promoted yet).
    pub model: Option<String>,
}

/// One measured point of the curve.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Point {
    /// The snapshot measured.
    pub snapshot: Snapshot,
    /// Side-swapped matches played.
    pub matches: u32,
    /// Wins, draws and losses of the network alone.
    pub wins: u32,
    /// Draws.
    pub draws: u32,
    /// Losses.
    pub losses: u32,
    /// Its share of the points.
    pub points: f64,
    /// Elo against the opponent (`None`: unbounded, 0% or 100%).
    pub elo: Option<f64>,
    /// 95% interval, low end (`None`: unbounded).
    pub elo_lo: Option<f64>,
    /// 95% interval, high end (`None`: unbounded).
    pub elo_hi: Option<f64>,
    /// Our agent's spec.
    pub agent: String,
    /// The opponent's spec.
    pub opponent: String,
}

/// Reads `snapshots.jsonl`.
///
/// # Errors
/// A missing file or a line that is not a snapshot (named by its number).
pub fn read_snapshots(path: &Path) -> Result<Vec<Snapshot>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l)
                .with_context(|| format!("{} line {}: not a snapshot", path.display(), i + 1))
        })
        .collect()
}

/// Runs `zeroplay curve`.
///
/// # Errors
/// Bad arguments, a run that fails, or an arena that cannot start.
pub fn run(args: CurveArgs) -> Result<()> {
    if args.at.is_empty() || args.at.iter().any(|m| !(m.is_finite() && *m > 0.0)) {
        anyhow::bail!("--at: one or more minutes > 0, got {:?}", args.at);
    }
    let run_dir = Path::new("runs").join(&args.name);
    let dir = run_dir.join("curve");
    let snaps_path = dir.join("snapshots.jsonl");
    if args.plot_only {
        let points = read_curve(&dir.join("curve.json"))?;
        return report(&args, &dir, points);
    }
    if !args.measure_only {
        if snaps_path.exists() {
            anyhow::bail!(
                "{} exists: measure it with --measure-only, or choose another --name",
                snaps_path.display()
            );
        }
        let last = args.at.iter().copied().fold(0.0, f64::max);
        println!(
            "zeroplay curve: running `zeroplay local --game {} --name {} --seed {} --minutes {last}`, keeping the best model at {:?} min",
            args.game, args.name, args.seed, args.at
        );
        crate::local_cmd::local(LocalArgs {
            config: args.config.clone(),
            game: args.game,
            name: args.name.clone(),
            games: None,
            slots: 0,
            sims: None,
            train_config: args.train_config.clone(),
            no_train: false,
            minutes: Some(last),
            device: "cpu".into(),
            seed: Some(args.seed),
            snapshot_at: args.at.clone(),
            // The curve measures its snapshots itself, with its own matches and seed.
            measure_matches: 0,
            measure_ms: None,
            options: Vec::new(),
            no_report: false,
            init_model: None,
        })?;
    }
    let snaps = read_snapshots(&snaps_path)?;
    let mut points = Vec::new();
    for s in &snaps {
        let Some(model) = &s.model else {
            println!("{} min: no model promoted yet, nothing to measure", s.minutes);
            continue;
        };
        println!("{} min ({} games): measuring {model} over {} matches…", s.minutes, s.games, args.matches);
        let m = crate::strength_cmd::measure(
            args.game,
            &PathBuf::from(model),
            crate::strength_cmd::Ours::Net,
            (args.time_ms, args.opponent_time_ms),
            args.matches,
            args.match_seed,
            args.threads,
        )?;
        let r = &m.report;
        points.push(Point {
            snapshot: s.clone(),
            matches: r.matches,
            wins: r.wins,
            draws: r.draws,
            losses: r.losses,
            points: r.points_a / f64::from(r.matches.max(1)),
            elo: r.elo,
            elo_lo: r.elo_lo,
            elo_hi: r.elo_hi,
            agent: m.agent.clone(),
            opponent: m.opponent.clone(),
        });
    }
    let json = serde_json::json!({
        "game": args.game.name(),
        "run": run_dir.display().to_string(),
        "seed": args.seed,
        "match_seed": args.match_seed,
        "points": points,
    });
    std::fs::write(dir.join("curve.json"), serde_json::to_string_pretty(&json)? + "\n")?;
    report(&args, &dir, points)
}

/// Prints the table (and each compared run's) and writes `curve.svg`.
fn report(args: &CurveArgs, dir: &Path, points: Vec<Point>) -> Result<()> {
    if points.is_empty() {
        // An empty table would read as a failure to measure; the run's own table says why.
        println!(
            "\nno point to measure: no model was promoted by the last snapshot (the models table above shows each candidate's gate)"
        );
    } else {
        print!("\n{}", table(&points));
    }
    let mut series = vec![(args.name.clone(), points)];
    for other in &args.compare {
        let path = Path::new("runs").join(other).join("curve").join("curve.json");
        let earlier = read_curve(&path)?;
        println!("\n{other} (from {}):\n{}", path.display(), table(&earlier));
        series.push((other.clone(), earlier));
    }
    std::fs::write(dir.join("curve.svg"), svg(&series, &format!("{} · {}", args.game, args.name)))?;
    println!("\ncurve: {} and {}", dir.join("curve.json").display(), dir.join("curve.svg").display());
    Ok(())
}

/// Reads the points of an earlier run's `curve.json`.
///
/// # Errors
/// A missing file, or one that is not a curve.
pub fn read_curve(path: &Path) -> Result<Vec<Point>> {
    #[derive(Deserialize)]
    struct Curve {
        points: Vec<Point>,
    }
    let text = std::fs::read_to_string(path).with_context(|| {
        format!("reading {} (--compare names a run measured by `zeroplay curve`)", path.display())
    })?;
    let c: Curve =
        serde_json::from_str(&text).with_context(|| format!("{}: not a curve.json", path.display()))?;
    Ok(c.points)
}

/// The Markdown table of the curve, one row per point.
pub fn table(points: &[Point]) -> String {
    let mut t = String::from(
        "| minutes | games | positions | network alone against | matches | points | Elo (95% interval) |\n|---|---|---|---|---|---|---|\n",
    );
    for p in points {
        let _ = writeln!(
            t,
            "| {} | {} | {} | {} | {} | **{:.1}%** ({} W, {} D, {} L) | {} |",
            p.snapshot.minutes,
            p.snapshot.games,
            p.snapshot.positions,
            p.opponent,
            p.matches,
            100.0 * p.points,
            p.wins,
            p.draws,
            p.losses,
            crate::strength_cmd::elo_interval_text(p.elo, p.elo_lo, p.elo_hi, p.points > 0.5),
        );
    }
    t
}

/// A panel's x coordinate of a point.
type XOf = fn(&Point) -> f64;

/// Series colours: this run first, then each `--compare` run.
const COLOURS: [&str; 5] = ["#36c", "#d62", "#393", "#939", "#996"];

/// Two panels: Elo (with its interval) against minutes and against games, one coloured line
/// per series (this run first, then the runs it is compared with), with a legend. Unbounded
/// ends are drawn at the plot's edge (±800).
pub fn svg(series: &[(String, Vec<Point>)], title: &str) -> String {
    const W: f64 = 360.0;
    const H: f64 = 240.0;
    const CAP: f64 = 800.0;
    let clamp = |x: Option<f64>, inf: f64| x.unwrap_or(inf).clamp(-CAP, CAP);
    let all = || series.iter().flat_map(|(_, pts)| pts.iter());
    let lo_all = all().map(|p| clamp(p.elo_lo, -CAP)).fold(-100.0, f64::min);
    let hi_all = all().map(|p| clamp(p.elo_hi, CAP)).fold(100.0, f64::max);
    let (lo_y, hi_y) = ((lo_all / 100.0).floor() * 100.0, (hi_all / 100.0).ceil() * 100.0);
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="sans-serif" font-size="11">"#,
        2.0 * W + 60.0,
        H + 70.0 + 16.0 * series.len() as f64
    );
    let _ = writeln!(
        out,
        r#"<text x="10" y="16" font-size="13">{}: the network alone against the reference opponent, Elo with 95% intervals</text>"#,
        escape(title)
    );
    let panels: [(&str, XOf); 2] =
        [("minutes of the run", |p| p.snapshot.minutes), ("games stored", |p| p.snapshot.games as f64)];
    for (k, (label, x_of)) in panels.iter().enumerate() {
        let ox = 50.0 + k as f64 * (W + 10.0);
        let oy = 30.0;
        let max_x = all().map(x_of).fold(1.0, f64::max) * 1.05;
        let px = |x: f64| ox + x / max_x * (W - 20.0);
        let py = |y: f64| oy + (hi_y - y) / (hi_y - lo_y).max(1.0) * H;
        let _ = writeln!(
            out,
            r##"<rect x="{ox}" y="{oy}" width="{}" height="{H}" fill="none" stroke="#999"/>"##,
            W - 20.0
        );
        let mut y = lo_y;
        while y <= hi_y {
            let (x2, yy, colour) = (ox + W - 20.0, py(y), if y == 0.0 { "#444" } else { "#eee" });
            let _ = writeln!(
                out,
                r##"<line x1="{ox}" x2="{x2}" y1="{yy:.1}" y2="{yy:.1}" stroke="{colour}"/><text x="{}" y="{:.1}" text-anchor="end">{y:+.0}</text>"##,
                ox - 4.0,
                yy + 4.0
            );
            y += 100.0;
        }
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" text-anchor="middle">{label}</text>"#,
            ox + (W - 20.0) / 2.0,
            oy + H + 30.0
        );
        for (i, (_, points)) in series.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            // Later series a little to the right, so that equal x values keep both bars.
            let shift = 3.0 * i as f64;
            let mut line = String::new();
            for p in points {
                let x = px(x_of(p)) + shift;
                let (e, lo, hi) = (
                    clamp(p.elo, if p.points > 0.5 { CAP } else { -CAP }),
                    clamp(p.elo_lo, -CAP),
                    clamp(p.elo_hi, CAP),
                );
                let _ = writeln!(
                    out,
                    r##"<line x1="{x:.1}" x2="{x:.1}" y1="{:.1}" y2="{:.1}" stroke="{colour}"/><circle cx="{x:.1}" cy="{:.1}" r="3.5" fill="{colour}"/>"##,
                    py(lo),
                    py(hi),
                    py(e),
                );
                if i == 0 {
                    let _ = writeln!(
                        out,
                        r##"<text x="{x:.1}" y="{}" text-anchor="middle" fill="#666">{:.0}</text>"##,
                        oy + H + 14.0,
                        x_of(p)
                    );
                }
                let _ = write!(line, "{x:.1},{:.1} ", py(e));
            }
            let _ = writeln!(out, r##"<polyline points="{}" fill="none" stroke="{colour}"/>"##, line.trim());
        }
    }
    for (i, (name, _)) in series.iter().enumerate() {
        let y = H + 80.0 + 16.0 * i as f64;
        let _ = writeln!(
            out,
            r##"<rect x="50" y="{}" width="12" height="4" fill="{}"/><text x="68" y="{y}">{}</text>"##,
            y - 5.0,
            COLOURS[i % COLOURS.len()],
            escape(name)
        );
    }
    out.push_str("</svg>\n");
    out
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(minutes: f64, games: u64, elo: Option<f64>, points: f64) -> Point {
        Point {
            snapshot: Snapshot {
                minutes,
                elapsed_s: minutes * 60.0,
                games,
                positions: games * 100,
                model: None,
            },
            matches: 100,
            wins: 50,
            draws: 0,
            losses: 50,
            points,
            elo,
            elo_lo: elo.map(|e| e - 60.0),
            elo_hi: elo.map(|e| e + 60.0),
            agent: "a".into(),
            opponent: "mcts:time=100ms,eval=rollout".into(),
        }
    }

    #[test]
    fn table_and_picture_show_every_point_and_unbounded_ends() {
        let pts = [point(10.0, 4000, Some(-250.0), 0.2), point(30.0, 14000, None, 0.0)];
        let t = table(&pts);
        assert!(t.contains("| 10 | 4000 |") && t.contains("−250"), "{t}");
        assert!(t.contains("| 30 | 14000 |") && t.contains("−∞ [−∞, +∞]"), "{t}");
        let s = svg(&[("this".into(), pts.to_vec())], "bn <x>");
        assert_eq!(s.matches("<circle").count(), 4, "two points in each of two panels");
        assert!(s.contains("bn &lt;x&gt;") && s.ends_with("</svg>\n"));
        // A compared run: its own colour, its points in both panels, both names in the legend.
        let s = svg(&[("new".into(), pts.to_vec()), ("base".into(), pts[..1].to_vec())], "t");
        assert_eq!(s.matches("<circle").count(), 6);
        assert_eq!(s.matches(r##"fill="#d62""##).count(), 3, "two points and a legend swatch");
        assert!(s.contains(">new</text>") && s.contains(">base</text>"));
    }

    #[test]
    fn snapshots_are_read_back_and_bad_lines_named() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("snapshots.jsonl");
        std::fs::write(
            &p,
            "{\"minutes\":10,\"elapsed_s\":600.2,\"games\":5,\"positions\":500,\"model\":null}\n\
             {\"minutes\":20,\"elapsed_s\":1200.1,\"games\":9,\"positions\":900,\"model\":\"m.safetensors\"}\n",
        )
        .unwrap();
        let s = read_snapshots(&p).unwrap();
        assert_eq!((s.len(), s[1].model.as_deref()), (2, Some("m.safetensors")));
        std::fs::write(&p, "{\"minutes\":10}\nnot json\n").unwrap();
        let e = format!("{:#}", read_snapshots(&p).unwrap_err());
        assert!(e.contains("line 1"), "{e}");
        // A curve.json written as `run` writes it reads back for --compare; others are named.
        let c = dir.path().join("curve.json");
        let pts = [point(10.0, 4000, Some(-250.0), 0.2)];
        std::fs::write(&c, serde_json::json!({ "game": "battlenumber", "points": pts }).to_string()).unwrap();
        let back = read_curve(&c).unwrap();
        assert_eq!((back.len(), back[0].elo, back[0].snapshot.games), (1, Some(-250.0), 4000));
        std::fs::write(&c, "{}").unwrap();
        assert!(format!("{:#}", read_curve(&c).unwrap_err()).contains("not a curve.json"));
        assert!(read_curve(&dir.path().join("none.json")).is_err());
    }
}
