//! `zeroplay local`: a coordinator, a worker and a trainer in one process on loopback, with
//! live progress, snapshots of the best model, and at the end the play-time figure of the best
//! model. Its steps: [`configs`] resolves both configurations, [`run`] starts the parts,
//! [`watch`] shows progress until the run ends, [`stop`] shuts the parts down in order.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use tokio::sync::watch;
use tracing::info;
use trainer::pipeline::{PipelineConfig, RatingEntry};
use zeroplay_coordinator::CoordinatorConfig;
use zeroplay_proto::v1 as pb;
use zeroplay_worker::WorkerConfig;

use crate::cli::LocalArgs;
use crate::config::load;
use crate::pipeline_cmd::{runtime, spawn_trainer, token};
use crate::shutdown::signal;

/// The trainer's thread: its rating history, or why it failed.
type TrainerThread = JoinHandle<Result<Vec<RatingEntry>, String>>;

/// Runs a coordinator and a worker (and, unless `--no-train`, a trainer) in one process on
/// loopback, with live progress.
///
/// # Errors
/// Bad configuration, I/O, or a component failure.
pub fn local(args: LocalArgs) -> Result<()> {
    let (cfg, tcfg) = configs(&args)?;
    let kind = args.game;
    let snapshots = Snapshots::new(&args.snapshot_at, &cfg.data_dir)?;
    let device = trainer::device(&args.device).map_err(anyhow::Error::msg)?;
    let (run_dir, measure_seed) = (cfg.data_dir.clone(), engine::derive_seed(cfg.seed, 4));
    let rt = runtime()?;
    let handle = rt.handle().clone();
    let (trained, interrupted) = rt.block_on(run(&args, cfg, tcfg, &handle, device, snapshots))?;
    drop(rt);
    // The designer's balance report of the run's games (a second or so), before the
    // play-time measurement, which a user may stop.
    if !args.no_report {
        balance_report(&run_dir);
    }
    if trained && args.measure_matches > 0 {
        if interrupted {
            // Stopped by hand: the user wants their machine back, not another minute of play.
            println!(
                "stopped by a signal: no play-time measurement; `zeroplay strength --run {}` measures the best model at equal time",
                run_dir.display()
            );
        } else {
            play_time(kind, &run_dir, args.measure_matches, args.measure_ms, measure_seed)?;
        }
    }
    Ok(())
}

/// `table` with `KEY=VALUE` pairs set: a value is read as TOML (`true`, `3`), else as text
/// (`scoring=trigolden`).
///
/// # Errors
/// A pair without `=`.
pub fn option_table(mut table: toml::Table, pairs: &[String]) -> Result<toml::Table> {
    for pair in pairs {
        let (k, v) = pair
            .split_once('=')
            .with_context(|| format!("--options {pair:?}: expected KEY=VALUE, e.g. scoring=trigolden"))?;
        let value = toml::from_str::<toml::Table>(&format!("v = {v}"))
            .ok()
            .and_then(|mut t| t.remove("v"))
            .unwrap_or_else(|| toml::Value::String(v.to_string()));
        table.insert(k.trim().to_string(), value);
    }
    Ok(table)
}

/// Writes the run's balance report to `run_dir/report` and prints its verdicts; a failure is
/// reported, not fatal (the run itself is done).
fn balance_report(run_dir: &std::path::Path) {
    let games = run_dir.join("games");
    let built = report::build(std::slice::from_ref(&games), |_, _| {})
        .map_err(|e| e.to_string())
        .and_then(|r| report::write(&r, &run_dir.join("report")).map(|p| (r, p)).map_err(|e| e.to_string()));
    match built {
        Ok((r, page)) => {
            print!("{}", crate::report_cmd::summary(&r));
            println!(
                "balance report: {} (zeroplay serve --report {} serves it at /report)",
                page.display(),
                run_dir.join("report").display()
            );
        }
        Err(e) => eprintln!("balance report not written: {e}"),
    }
}

/// The coordinator's and the trainer's configurations for a local run: the files given (or
/// the game's defaults), one game, loopback, fresh tokens, one worker (so no value checks),
/// and the seeds derived from `--seed`.
fn configs(args: &LocalArgs) -> Result<(CoordinatorConfig, PipelineConfig)> {
    let mut cfg: CoordinatorConfig = load(args.config.as_deref())?;
    let kind = args.game;
    cfg.games.retain(|k, _| *k == kind);
    if cfg.games.is_empty() {
        cfg.games.insert(kind, zeroplay_coordinator::config::GameConfig::default_for(kind));
    }
    for g in cfg.games.values_mut() {
        if !args.no_train {
            // Self-play follows the trained network once one is promoted.
            g.leaf.evaluator = engine::LeafEvaluator::Net;
        }
        if let Some(s) = args.sims {
            g.settings.full_sims = s;
            g.settings.fast_sims = g.settings.fast_sims.min(s);
        }
    }
    cfg.listen = "127.0.0.1:0".into();
    cfg.data_dir = std::path::Path::new("runs").join(&args.name);
    cfg.auth.worker_token = token();
    cfg.auth.trainer_token = token();
    cfg.auth.admin_token = token();
    cfg.parquet.rotate_seconds = cfg.parquet.rotate_seconds.min(15);
    // One worker, in this process: it plays every gating match (each is still replayed).
    cfg.leases.max_gate_share = 1.0;
    // ...and no other worker could check its values: no value checks.
    cfg.checks.rate = 0.0;
    cfg.checks.resign_rate = 0.0;
    if let Some(seed) = args.seed {
        cfg.seed = seed;
    }
    if !args.options.is_empty() {
        cfg.options = cfg.options.clone().with(kind, option_table(cfg.options.table(kind), &args.options)?);
    }
    cfg.validate()?;
    let mut tcfg = match args.train_config.as_deref() {
        Some(path) => load::<PipelineConfig>(Some(path))?,
        None => PipelineConfig::default_for(kind),
    };
    tcfg.game = kind;
    tcfg.data_dir = cfg.data_dir.join("games");
    tcfg.run_dir = cfg.data_dir.join("trainer");
    if let Some(seed) = args.seed {
        tcfg.train.seed = engine::derive_seed(seed, 1);
        tcfg.gate.seed = engine::derive_seed(seed, 2);
        tcfg.rating.seed = engine::derive_seed(seed, 3);
    }
    tcfg.validate().map_err(anyhow::Error::msg)?;
    Ok((cfg, tcfg))
}

/// The parts of a local run, started.
struct Parts {
    coord: tokio::task::JoinHandle<Result<(), zeroplay_coordinator::RunError>>,
    worker: tokio::task::JoinHandle<Result<zeroplay_worker::WorkerReport, zeroplay_worker::WorkerError>>,
    trainer: Option<TrainerThread>,
    train_stop: Arc<AtomicBool>,
    stop_coord: watch::Sender<bool>,
    stop_worker: watch::Sender<bool>,
    status: zeroplay_client::Client,
}

/// Starts the parts, watches the run until it ends, and stops them; `(trained, interrupted)`.
async fn run(
    args: &LocalArgs,
    cfg: CoordinatorConfig,
    tcfg: PipelineConfig,
    handle: &tokio::runtime::Handle,
    device: burn::prelude::Device,
    mut snapshots: Snapshots,
) -> Result<(bool, bool)> {
    let listener = zeroplay_net::bind(&cfg.listen, &cfg.connections).await?;
    let addr = listener.local_addr()?;
    let (stop_coord, stop_coord_rx) = watch::channel(false);
    let (stop_worker, stop_worker_rx) = watch::channel(false);
    let data_dir = cfg.data_dir.clone();
    let (admin, trainer_token) = (cfg.auth.admin_token.clone(), cfg.auth.trainer_token.clone());
    let wcfg = WorkerConfig {
        coordinator: format!("http://{addr}"),
        token: cfg.auth.worker_token.clone(),
        name: "local".into(),
        slots: args.slots,
        spool_dir: data_dir.join("spool"),
        max_games: args.games,
        ..WorkerConfig::default()
    };
    println!("zeroplay local: {}, data in {}, coordinator on {addr}", args.game, data_dir.display());
    let coord = tokio::spawn(zeroplay_coordinator::run(cfg, listener, until(stop_coord_rx)));
    let mut status = zeroplay_client::connect(&zeroplay_client::ClientConfig {
        coordinator: format!("http://{addr}"),
        token: admin,
        ca_cert: None,
    })?;
    // Games already in this run directory from an earlier session, and its best model's version.
    let (base, model_version) = loop {
        match status.status(pb::StatusRequest {}).await {
            Ok(s) => {
                let s = s.into_inner();
                break (s.games_stored, s.model_version);
            }
            Err(_) if !coord.is_finished() => tokio::time::sleep(Duration::from_millis(50)).await,
            Err(e) => {
                let _ = stop_coord.send(true);
                coord.await??;
                anyhow::bail!("coordinator did not start: {e}");
            }
        }
    };
    if let Some(path) = &args.init_model {
        // Before the worker starts, so that its first game already uses the model.
        let train = (!args.no_train).then_some(&tcfg.train);
        let seeded = async {
            let mut client = zeroplay_client::connect(&zeroplay_client::ClientConfig {
                coordinator: format!("http://{addr}"),
                token: trainer_token.clone(),
                ca_cert: None,
            })?;
            let dir = data_dir.join("trainer");
            crate::init_model::seed(args.game, path, train, &device, &dir, &mut client, model_version).await
        };
        if let Err(e) = seeded.await {
            let _ = stop_coord.send(true);
            coord.await??;
            return Err(e);
        }
    }
    let worker = tokio::spawn(zeroplay_worker::run(wcfg, until(stop_worker_rx)));
    // The trainer: its own thread (burn is synchronous), publishing promoted models to the
    // coordinator, which announces them to the worker; the coordinator gates its candidates
    // on the worker's slots.
    let train_stop = Arc::new(AtomicBool::new(false));
    let trainer = if args.no_train {
        None
    } else {
        let (url, stop) = (Some(format!("http://{addr}")), train_stop.clone());
        let thread = std::thread::Builder::new().name("trainer".into());
        let tcfg = tcfg.clone();
        Some(engine::with_game!(tcfg.game, |G| spawn_trainer::<G>(
            thread,
            handle,
            url,
            trainer_token,
            tcfg,
            device,
            stop
        )?))
    };
    let mut parts = Parts { coord, worker, trainer, train_stop, stop_coord, stop_worker, status };
    let deadline = args.minutes.map(|m| Instant::now() + Duration::from_secs_f64(m * 60.0));
    let started = Instant::now();
    let (last, interrupted) = watch(&mut parts, args.games, base, deadline, &mut snapshots).await?;
    let history = stop(parts, last, base, started, &data_dir).await?;
    let trained = history.is_some();
    if let Some(h) = history {
        print!("{}", crate::train_cmd::run_report(&h, &data_dir.join("trainer"), &tcfg));
    }
    Ok((trained, interrupted))
}

/// Resolves once `rx` turns true: a component's shutdown signal.
async fn until(mut rx: watch::Receiver<bool>) {
    let _ = rx.wait_for(|v| *v).await;
}

/// Shows progress twice a second, taking snapshots as they fall due, until a signal, the
/// deadline, the game count, or a part's end; the last status and whether a signal ended it.
async fn watch(
    parts: &mut Parts,
    games: Option<u64>,
    base: u64,
    deadline: Option<Instant>,
    snapshots: &mut Snapshots,
) -> Result<(pb::StatusResponse, bool)> {
    let bar = match games {
        Some(n) => ProgressBar::new(n),
        None => ProgressBar::new_spinner(),
    };
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:25} {pos} games  {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let started = Instant::now();
    let mut last = pb::StatusResponse::default();
    let ctrl_c = signal();
    tokio::pin!(ctrl_c);
    let mut interrupted = false;
    loop {
        tokio::select! {
            _ = &mut ctrl_c => { say(&bar, "stopping…"); interrupted = true; break; }
            _ = tokio::time::sleep(Duration::from_millis(500)) => {}
        }
        if let Ok(s) = parts.status.status(pb::StatusRequest {}).await {
            last = s.into_inner();
            let new = last.games_stored.saturating_sub(base);
            let rate = new as f64 / started.elapsed().as_secs_f64().max(1e-3);
            bar.set_position(new);
            bar.set_message(format!(
                "{rate:.2} games/s · {} positions ({} in {} Parquet files) · {} leases out",
                last.positions_stored, last.positions_in_parquet, last.parquet_files, last.leases_active
            ));
        }
        if parts.coord.is_finished() || parts.worker.is_finished() {
            break;
        }
        // Before the deadline's check: the last snapshot is taken at the deadline.
        if let Some(line) = snapshots.take(started.elapsed(), &last, base)? {
            say(&bar, line);
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            say(&bar, "time limit reached; stopping…");
            break;
        }
        if parts.trainer.as_ref().is_some_and(|t| t.is_finished()) {
            say(&bar, "trainer finished; stopping…");
            break;
        }
    }
    // Snapshots not yet due when the run stopped are taken now, at the minute it stopped.
    for line in snapshots.finish(started.elapsed(), &last, base)? {
        say(&bar, line);
    }
    bar.finish_and_clear();
    Ok((last, interrupted))
}

/// Stops the parts in order: the trainer (its history, unless it failed), then the worker so
/// it can submit what it has finished, then the coordinator; prints what the run stored.
async fn stop(
    mut parts: Parts,
    mut last: pb::StatusResponse,
    base: u64,
    started: Instant,
    data_dir: &std::path::Path,
) -> Result<Option<Vec<RatingEntry>>> {
    parts.train_stop.store(true, Ordering::Relaxed);
    let history = match parts.trainer {
        Some(t) => match tokio::task::spawn_blocking(move || t.join()).await? {
            Ok(Ok(h)) => Some(h),
            Ok(Err(e)) => {
                tracing::error!(error = %e, "trainer failed");
                None
            }
            Err(_) => anyhow::bail!("the trainer thread panicked"),
        },
        None => None,
    };
    let _ = parts.stop_worker.send(true);
    let report = parts.worker.await??;
    // Counted after the worker's last submissions, so the figure is what the Parquet files
    // hold once the coordinator has flushed them on stop.
    if let Ok(s) = parts.status.status(pb::StatusRequest {}).await {
        last = s.into_inner();
    }
    let _ = parts.stop_coord.send(true);
    parts.coord.await??;
    info!(?report, "worker report");
    println!(
        "done: {} games stored in this run directory ({} this session, {} positions) after {:.0}s; Parquet files in {}",
        last.games_stored,
        last.games_stored.saturating_sub(base),
        last.positions_stored,
        started.elapsed().as_secs_f64(),
        data_dir.join("games").display()
    );
    Ok(history)
}

/// `local`'s last lines: the best model, the network alone at the leaves, against the game's
/// reference opponent at equal time per move (`strength`'s protocol), so that the figure a
/// user reads at the end of a run is one that holds at play time; also written to
/// `trainer/play-time.json`. Nothing when no model was promoted.
fn play_time(
    game: engine::GameKind,
    run: &std::path::Path,
    matches: u32,
    ms: Option<u32>,
    seed: u64,
) -> Result<()> {
    let trainer_dir = run.join("trainer");
    let best = trainer::pipeline::best_model_path(&trainer_dir);
    if !best.exists() {
        return Ok(());
    }
    // What a player meets: a one-layer model inside the game's own searcher where the server
    // plays it so (Banqi's banqi-ab), otherwise the network alone.
    use crate::strength_cmd::Ours;
    let (ours, against) = match Ours::served(game, &best)? {
        Ours::Searcher => (Ours::Searcher, "that searcher alone, the AI served before any model"),
        _ => (Ours::Net, "the user's AI"),
    };
    println!(
        "\nmeasuring the best model at play time: {matches} side-swapped matches at equal time per move against {against} (--measure-matches 0 skips this)…"
    );
    let threads = crate::arena_cmd::thread_count(0).min(matches as usize);
    let model = best.clone();
    // The arena cannot be stopped from outside; a signal ends the wait for it instead (the run
    // itself is already stopped and on disk), and the process exits with it.
    let rt = runtime()?;
    let measured = rt.block_on(async move {
        let arena = tokio::task::spawn_blocking(move || {
            crate::strength_cmd::measure(game, &model, ours, (ms, ms), matches, seed, threads)
        });
        tokio::select! {
            m = arena => Some(m),
            () = signal() => None,
        }
    });
    rt.shutdown_background();
    let Some(m) = measured else {
        println!(
            "play-time measurement stopped by a signal; `zeroplay strength --run {}` measures it",
            run.display()
        );
        return Ok(());
    };
    let m = m??;
    let times = ms.map_or_else(String::new, |ms| format!(" --time-ms {ms} --opponent-time-ms {ms}"));
    let command = format!(
        "zeroplay strength --run {} --agents {} -n {matches} -j {threads} --seed {seed}{times}",
        run.display(),
        ours.name()
    );
    println!(
        "{}\nthe same measurement again, or with more matches: {command}",
        crate::strength_cmd::play_time_line(&m, seed)
    );
    let path = trainer_dir.join("play-time.json");
    let json = serde_json::json!({
        "model": best.display().to_string(),
        "agent": m.agent,
        "opponent": m.opponent,
        "opening_plies": m.opening_plies,
        "seed": seed,
        "command": command,
        "report": m.report,
    });
    std::fs::write(&path, serde_json::to_string_pretty(&json)? + "\n")
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// The best-model snapshots `local --snapshot-at` takes: at each of `at` minutes the best
/// model file is copied to `curve/best-at-<M>min.safetensors` and a line with the minutes and
/// the games stored by then appended to `curve/snapshots.jsonl` (no model yet: `null`). A run
/// that stops before a snapshot is due takes the rest once, at the minute it stopped.
struct Snapshots {
    at: Vec<f64>,
    run: std::path::PathBuf,
}

impl Snapshots {
    fn new(at: &[f64], run: &std::path::Path) -> Result<Snapshots> {
        let mut at = at.to_vec();
        if at.iter().any(|m| !(m.is_finite() && *m >= 0.0)) {
            anyhow::bail!("--snapshot-at: minutes must be finite and ≥ 0, got {at:?}");
        }
        at.sort_by(f64::total_cmp);
        at.dedup();
        at.reverse();
        if !at.is_empty() {
            std::fs::create_dir_all(run.join("curve"))
                .with_context(|| format!("creating {}/curve", run.display()))?;
        }
        Ok(Snapshots { at, run: run.to_path_buf() })
    }

    /// Takes every snapshot still due, at `elapsed` (recorded as its minutes).
    fn finish(&mut self, elapsed: Duration, status: &pb::StatusResponse, base: u64) -> Result<Vec<String>> {
        let mut lines = Vec::new();
        if !self.at.is_empty() {
            self.at = vec![elapsed.as_secs_f64() / 60.0];
            lines.extend(self.take(elapsed, status, base)?);
        }
        Ok(lines)
    }

    fn take(&mut self, elapsed: Duration, status: &pb::StatusResponse, base: u64) -> Result<Option<String>> {
        let Some(&m) = self.at.last() else { return Ok(None) };
        if elapsed.as_secs_f64() < m * 60.0 {
            return Ok(None);
        }
        self.at.pop();
        // Minutes as a short name: 10 for ten minutes, 0.42 for a run that stopped early.
        let m = (m * 100.0).round() / 100.0;
        let dir = self.run.join("curve");
        let best = trainer::pipeline::best_model_path(&self.run.join("trainer"));
        let model = if best.exists() {
            let to = dir.join(format!("best-at-{m}min.safetensors"));
            std::fs::copy(&best, &to)
                .with_context(|| format!("copying {} to {}", best.display(), to.display()))?;
            Some(to)
        } else {
            None
        };
        let line = serde_json::json!({
            "minutes": m,
            "elapsed_s": elapsed.as_secs_f64(),
            "games": status.games_stored.saturating_sub(base),
            "positions": status.positions_stored,
            "model": model.as_ref().map(|p| p.display().to_string()),
        });
        use std::io::Write as _;
        let mut f =
            std::fs::OpenOptions::new().create(true).append(true).open(dir.join("snapshots.jsonl"))?;
        writeln!(f, "{line}")?;
        f.sync_all()?;
        Ok(Some(match model {
            Some(p) => {
                format!("snapshot at {m} min: {} games, best model copied to {}", line["games"], p.display())
            }
            None => format!("snapshot at {m} min: {} games, no model promoted yet", line["games"]),
        }))
    }
}

/// A line above the progress bar; indicatif drops `println` on a hidden bar (output not a
/// terminal), so there it goes to stdout directly, where logs and tests read it.
fn say(bar: &indicatif::ProgressBar, line: impl AsRef<str>) {
    if bar.is_hidden() {
        println!("{}", line.as_ref());
    } else {
        bar.println(line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_read_as_toml_values_else_as_text() {
        let mut base = toml::Table::new();
        base.insert("hole-rule".into(), toml::Value::String("border-connected".into()));
        let t =
            option_table(base, &["scoring=trigolden".into(), "rule6-new-point=true".into(), " n = 3".into()])
                .unwrap();
        assert_eq!(t["scoring"], toml::Value::String("trigolden".into()));
        assert_eq!(t["rule6-new-point"], toml::Value::Boolean(true));
        assert_eq!(t["n"], toml::Value::Integer(3));
        assert_eq!(t["hole-rule"], toml::Value::String("border-connected".into()), "other keys are kept");
        let e = option_table(toml::Table::new(), &["scoring".into()]).unwrap_err();
        assert!(e.to_string().contains("KEY=VALUE"), "{e}");
    }

    /// A bad option is refused before anything starts, naming the key.
    #[test]
    fn a_bad_option_is_refused_by_the_game() {
        use clap::Parser;
        let cli = crate::cli::Cli::try_parse_from([
            "zeroplay",
            "local",
            "--game",
            "trigolden",
            "--options",
            "scoring=nobody",
        ])
        .unwrap();
        let crate::cli::Command::Local(args) = cli.command else { panic!("not local") };
        let e = configs(&args).unwrap_err();
        assert!(format!("{e:#}").contains("scoring"), "{e:#}");
    }
}
