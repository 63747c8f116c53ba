//! `zeroplay tune`: SPSA over `banqi-ab`'s evaluation weights ([`engine::spsa`]).
//!
//! Each step draws a perturbation, plays one side-swapped pair of games (one deal, a short
//! random opening) between the `+` and the `−` weights at the base spec's budget, and moves
//! the weights by the result. Threads each play their own pairs and update the shared state as
//! they finish (fishtest's asynchronous SPSA), so with more than one thread the trajectory
//! depends on timing; `-j 1` repeats exactly for a seed. Writes `spsa.csv` (every step),
//! `spsa.svg` (each weight against its start), `args.json` and `tuned.txt` (the tuned spec).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use engine::agent::GameSpec;
use engine::banqi::Banqi;
use engine::banqi::ab::AbSettings;
use engine::banqi::ab::Weights;
use engine::spec::AgentSpec;
use engine::spsa::{Spsa, SpsaSettings};
use serde::Serialize;

/// `zeroplay tune`.
#[derive(Debug, Clone, clap::Args, Serialize)]
pub struct TuneArgs {
    /// The agent whose weights are tuned, at the budget the games are played at (a node
    /// budget keeps every game deterministic). Its `weights=` are the start.
    #[arg(long, default_value = "banqi-ab:nodes=2000,tt=2")]
    pub base: String,
    /// Game pairs to play (SPSA steps).
    #[arg(short = 'n', long, default_value_t = 2_000)]
    pub pairs: u64,
    /// Stop after this many minutes even if pairs are left.
    #[arg(long)]
    pub minutes: Option<f64>,
    /// Worker threads (0: one per core); -j 1 makes the run repeat exactly.
    #[arg(short = 'j', long, default_value_t = 0)]
    pub threads: usize,
    /// Base seed: pair i's perturbation, opening and deal derive from it.
    #[arg(long, default_value_t = 2026)]
    pub seed: u64,
    /// Perturbation per weight as a share of its starting value (at least 2 units).
    #[arg(long, default_value_t = 0.1)]
    pub c_share: f64,
    /// Learning rate at the first step: a pair won outright moves every weight by this share
    /// of its perturbation. Small, because one pair says little: over a few thousand pairs
    /// the noise walks a weight about r·√pairs/2 perturbations, the signal r·pairs·edge.
    #[arg(long, default_value_t = 0.05)]
    pub r: f64,
    /// Random opening flips before each pair (both games of a pair share it).
    #[arg(long, default_value_t = 2)]
    pub opening_plies: u32,
    /// Output directory.
    #[arg(short, long, default_value = "runs/tune-banqi")]
    pub out: PathBuf,
}

/// One step as written to `spsa.csv`.
struct Step {
    pair: u64,
    result: f64,
    weights: Vec<f64>,
}

/// Runs the command.
///
/// # Errors
/// A base spec that is not `banqi-ab`, bad numbers, or an unwritable output directory.
pub fn run(args: TuneArgs) -> Result<()> {
    let base = args.base.parse::<AgentSpec>()?;
    let Some(base) = base.game::<AbSettings>().cloned() else {
        bail!("--base must be a banqi-ab spec (its weights are tuned), not {base}");
    };
    if !(args.c_share > 0.0 && args.c_share <= 1.0) {
        bail!("--c-share must be in (0, 1], not {}", args.c_share);
    }
    if !(args.r > 0.0 && args.r <= 10.0) {
        bail!("--r must be in (0, 10], not {}", args.r);
    }
    if args.pairs == 0 {
        bail!("--pairs must be at least 1");
    }
    std::fs::create_dir_all(&args.out).with_context(|| format!("creating {}", args.out.display()))?;
    std::fs::write(args.out.join("args.json"), serde_json::to_string_pretty(&args)?)?;
    let start = base.weights.to_list();
    let c: Vec<f64> = start.iter().map(|&w| (f64::from(w) * args.c_share).max(2.0)).collect();
    let settings = SpsaSettings { iterations: args.pairs, r: args.r, ..SpsaSettings::default() };
    let spsa = Mutex::new(Spsa::new(&start, &c, &Weights::bounds(), settings));
    let steps = Mutex::new(Vec::<Step>::new());
    let next = AtomicU64::new(0);
    let (plus_won, minus_won) = (AtomicU64::new(0), AtomicU64::new(0));
    let stop = AtomicBool::new(false);
    let deadline = args.minutes.map(|m| Instant::now() + Duration::from_secs_f64(m.max(0.0) * 60.0));
    let threads = crate::arena_cmd::thread_count(args.threads).min(args.pairs as usize);
    let tables = modelfile::tables::default_store();
    let bar = indicatif::ProgressBar::new(args.pairs);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} pairs  {msg}  eta {eta}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    println!(
        "tune: SPSA over {} weights of {} on {threads} threads, {} pairs{}; writing {}",
        start.len(),
        GameSpec::new(base.clone()),
        args.pairs,
        args.minutes.map_or(String::new(), |m| format!(" or {m} minutes")),
        args.out.display()
    );
    let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
    std::thread::scope(|s| {
        // Ctrl-C or SIGTERM ends the run after the pairs in play; the steps so far are written.
        let stop = &stop;
        s.spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
            rt.block_on(async {
                tokio::select! {
                    () = crate::shutdown::signal() => {
                        stop.store(true, Ordering::Relaxed);
                        eprintln!("tune: stopping after the pairs in play");
                    }
                    _ = done_rx => {}
                }
            });
        });
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    loop {
                        if stop.load(Ordering::Relaxed) || deadline.is_some_and(|d| Instant::now() >= d) {
                            break;
                        }
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= args.pairs {
                            break;
                        }
                        let seed = engine::derive_seed(args.seed, i);
                        let mut rng = engine::rng_from_seed(seed);
                        let p = spsa.lock().expect("no panics while held").perturb(&mut rng);
                        let agent = |w: &[i32]| {
                            let weights =
                                Weights::from_list(w).expect("perturbations stay within the bounds");
                            let settings = AbSettings { weights, store: None, ..base.clone() };
                            AgentSpec::Game(GameSpec::new(settings))
                                .with_table_store(tables.clone())
                                .build::<Banqi>()
                        };
                        let (mut plus, mut minus) = (agent(&p.plus), agent(&p.minus));
                        let opening =
                            engine::arena::random_opening(Banqi::start(), args.opening_plies, &mut rng);
                        let m = engine::arena::play_match_from(&opening, &mut *plus, &mut *minus, seed);
                        let result = 2.0 * m.points_a - 1.0;
                        let mut tuner = spsa.lock().expect("no panics while held");
                        tuner.update(&p, result);
                        let step = Step { pair: tuner.iteration(), result, weights: tuner.theta().to_vec() };
                        drop(tuner);
                        let mut all = steps.lock().expect("no panics while held");
                        all.push(step);
                        // Counted as they come, not by rereading every step each time.
                        let won = if result > 0.0 { &plus_won } else { &minus_won };
                        if result != 0.0 {
                            won.fetch_add(1, Ordering::Relaxed);
                        }
                        let (wins, losses) =
                            (plus_won.load(Ordering::Relaxed), minus_won.load(Ordering::Relaxed));
                        bar.set_message(format!("+ won {wins}, − won {losses}"));
                        bar.inc(1);
                        // Without a terminal there is no bar: a line every 100 pairs instead.
                        if bar.is_hidden() && all.len().is_multiple_of(100) {
                            eprintln!("tune: {} pairs, + won {wins}, − won {losses}", all.len());
                        }
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().expect("a tuning thread panicked");
        }
        let _ = done_tx.send(());
    });
    bar.finish();
    let tuner = spsa.into_inner().expect("threads joined");
    let steps = steps.into_inner().expect("threads joined");
    let tuned = Weights::from_list(&tuner.weights()).expect("SPSA keeps the weights within the bounds");
    let spec = AgentSpec::Game(GameSpec::new(AbSettings { weights: tuned, ..base.clone() }));
    write_outputs(&args.out, &start, &steps, &spec)?;
    println!("tuned after {} pairs: {spec}", steps.len());
    println!("start:  {}", list(&start.iter().map(|&w| f64::from(w)).collect::<Vec<_>>()));
    println!("tuned:  {}", list(tuner.theta()));
    println!(
        "measure it: zeroplay arena --game banqi -n 100 --seed 2026 -a \"{}\" -b \"{}\"",
        with_time(&spec),
        with_time(&AgentSpec::Game(GameSpec::new(AbSettings { weights: Weights::default(), ..base })))
    );
    Ok(())
}

/// `spec` at 300 ms a move instead of its node budget (how the docs measure).
fn with_time(spec: &AgentSpec) -> AgentSpec {
    spec.clone().with_time(Duration::from_millis(300))
}

fn list(v: &[f64]) -> String {
    v.iter().map(|x| format!("{x:.0}")).collect::<Vec<_>>().join("/")
}

fn write_outputs(dir: &Path, start: &[i32], steps: &[Step], spec: &AgentSpec) -> Result<()> {
    let mut csv = String::from("pair,result");
    for i in 0..start.len() {
        csv.push_str(&format!(",w{i}"));
    }
    csv.push('\n');
    for s in steps {
        csv.push_str(&format!("{},{}", s.pair, s.result));
        for w in &s.weights {
            csv.push_str(&format!(",{w:.2}"));
        }
        csv.push('\n');
    }
    std::fs::write(dir.join("spsa.csv"), csv)?;
    std::fs::write(dir.join("tuned.txt"), format!("{spec}\n"))?;
    std::fs::write(dir.join("spsa.svg"), svg(start, steps))?;
    Ok(())
}

/// Each weight over the steps as a share of its start (1.0 = unchanged).
fn svg(start: &[i32], steps: &[Step]) -> String {
    const NAMES: [&str; 11] = [
        "king",
        "advisor",
        "elephant",
        "chariot",
        "horse",
        "cannon",
        "pawn",
        "prey_share",
        "safe_bonus",
        "face_down",
        "mobility",
    ];
    const COLOURS: [&str; 11] = [
        "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
        "#17becf", "#000000",
    ];
    let (w, h, left, top, plot_w, plot_h) = (820.0, 420.0, 60.0, 30.0, 600.0, 340.0);
    let ratio = |s: &Step, i: usize| s.weights[i] / f64::from(start[i].max(1));
    let (mut lo, mut hi) = (0.8f64, 1.2f64);
    for s in steps {
        for i in 0..start.len() {
            lo = lo.min(ratio(s, i));
            hi = hi.max(ratio(s, i));
        }
    }
    let n = steps.len().max(1) as f64;
    let x = |k: usize| left + plot_w * k as f64 / n;
    let y = |r: f64| top + plot_h * (hi - r) / (hi - lo);
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{left}\" y=\"18\">SPSA: each banqi-ab weight as a share of its start, over {} pairs</text>\n",
        steps.len()
    );
    out.push_str(&format!(
        "<rect x=\"{left}\" y=\"{top}\" width=\"{plot_w}\" height=\"{plot_h}\" fill=\"none\" stroke=\"#999\"/>\n"
    ));
    for r in [lo, 1.0, hi] {
        out.push_str(&format!(
            "<line x1=\"{left}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/><text x=\"8\" y=\"{:.1}\">{r:.2}</text>\n",
            left + plot_w,
            y(r) + 4.0,
            y = y(r)
        ));
    }
    for i in 0..start.len() {
        let points: Vec<String> =
            steps.iter().enumerate().map(|(k, s)| format!("{:.1},{:.1}", x(k + 1), y(ratio(s, i)))).collect();
        let colour = COLOURS[i % COLOURS.len()];
        if !points.is_empty() {
            out.push_str(&format!(
                "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.2\" points=\"{}\"/>\n",
                points.join(" ")
            ));
        }
        let ly = top + 14.0 + 16.0 * i as f64;
        out.push_str(&format!(
            "<rect x=\"{}\" y=\"{:.0}\" width=\"10\" height=\"10\" fill=\"{colour}\"/><text x=\"{}\" y=\"{:.0}\">{} {}</text>\n",
            left + plot_w + 15.0,
            ly - 9.0,
            left + plot_w + 30.0,
            ly,
            NAMES.get(i).unwrap_or(&"?"),
            start[i]
        ));
    }
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_run_writes_its_steps_and_a_tuned_spec_that_parses() {
        let tmp = tempfile::tempdir().unwrap();
        let args = TuneArgs {
            base: "banqi-ab:nodes=200,tt=1,tb=0".into(),
            pairs: 3,
            minutes: None,
            threads: 1,
            seed: 7,
            c_share: 0.1,
            r: 0.3,
            opening_plies: 2,
            out: tmp.path().to_path_buf(),
        };
        run(args).unwrap();
        let csv = std::fs::read_to_string(tmp.path().join("spsa.csv")).unwrap();
        assert_eq!(csv.lines().count(), 4, "{csv}");
        assert!(csv.starts_with("pair,result,w0,"));
        let tuned = std::fs::read_to_string(tmp.path().join("tuned.txt")).unwrap();
        let spec: AgentSpec = tuned.trim().parse().unwrap();
        assert_eq!(spec.game::<AbSettings>().and_then(|s| s.nodes), Some(200), "{tuned}");
        assert!(std::fs::read_to_string(tmp.path().join("spsa.svg")).unwrap().contains("<polyline"));
    }

    #[test]
    fn a_base_that_is_not_banqi_ab_is_refused() {
        let args = TuneArgs {
            base: "mcts:sims=10,eval=rollout".into(),
            pairs: 1,
            minutes: None,
            threads: 1,
            seed: 1,
            c_share: 0.1,
            r: 0.3,
            opening_plies: 0,
            out: PathBuf::from("/nonexistent"),
        };
        assert!(run(args).unwrap_err().to_string().contains("banqi-ab"));
    }
}
