//! `zeroplay coordinator`, `zeroplay worker` and `zeroplay local` (both in one process).

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use engine::GameKind;
use indicatif::{ProgressBar, ProgressStyle};
use tracing::info;
use zeroplay_coordinator::CoordinatorConfig;
use zeroplay_proto::v1 as pb;
use zeroplay_worker::WorkerConfig;

use crate::cli::{CoordinatorArgs, LocalArgs, WorkerArgs};
use crate::config::load;
use crate::shutdown::signal;

fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread().enable_all().build()?)
}

/// Runs the coordinator until a signal.
///
/// # Errors
/// Bad configuration, an address that cannot be bound, or a coordinator failure.
pub fn coordinator(args: CoordinatorArgs) -> Result<()> {
    let mut cfg: CoordinatorConfig = load(args.config.as_deref())?;
    if let Some(l) = args.listen {
        cfg.listen = l;
    }
    if let Some(d) = args.data_dir {
        cfg.data_dir = d;
    }
    if let Some(m) = args.metrics_listen {
        cfg.metrics_listen = Some(m);
    }
    args.storage.apply(&mut cfg.storage)?;
    for (token, to) in [
        (args.worker_token, &mut cfg.auth.worker_token),
        (args.trainer_token, &mut cfg.auth.trainer_token),
        (args.admin_token, &mut cfg.auth.admin_token),
    ] {
        if let Some(t) = token {
            *to = t;
        }
    }
    cfg.validate()?;
    if args.rebuild_index {
        return rebuild_index(&cfg.data_dir);
    }
    runtime()?.block_on(async {
        let listener = zeroplay_net::bind(&cfg.listen, &cfg.connections)
            .await
            .with_context(|| format!("binding {}", cfg.listen))?;
        zeroplay_coordinator::run(cfg, listener, signal()).await?;
        Ok(())
    })
}

/// `zeroplay coordinator --rebuild-index`: rebuilds, then prints what it found.
fn rebuild_index(data_dir: &std::path::Path) -> Result<()> {
    anyhow::ensure!(
        data_dir.join("games").is_dir() || data_dir.join("coordinator.redb").exists(),
        "{} is not a coordinator run directory (no games/ and no coordinator.redb)",
        data_dir.display()
    );
    let r = zeroplay_coordinator::rebuild_index(data_dir)
        .with_context(|| format!("rebuilding the index of {}", data_dir.display()))?;
    let store = zeroplay_coordinator::store::Store::open(data_dir)?;
    let c = store.counters()?;
    println!(
        "index of {}: {} games ({} positions) in {} Parquet files, {} staged; {} files adopted, {} quarantined, \
         {} listed files missing, {} move digests, {} models listed again",
        data_dir.display(),
        c.games_stored,
        c.positions_stored,
        store.files()?.len(),
        store.staged_count()?,
        r.adopted.len(),
        r.quarantined.len(),
        r.missing.len(),
        r.digests_rebuilt,
        r.models_recovered.len()
    );
    for (name, reason) in &r.quarantined {
        println!("  quarantine/{name}: {reason}");
    }
    Ok(())
}

/// Runs the play server until a signal.
///
/// # Errors
/// Bad configuration, a model file that does not load, or a port that cannot be bound.
pub fn serve(args: crate::cli::ServeArgs) -> Result<()> {
    let mut cfg: zeroplay_server::ServeConfig = load(args.config.as_deref())?;
    if let Some(l) = args.listen {
        cfg.listen = l;
    }
    for w in cfg.migrate().map_err(|e| anyhow::anyhow!("serve config: {e}"))? {
        tracing::warn!("serve config: {w}");
    }
    for (kind, file) in [
        (GameKind::BattleNumber, args.model),
        (GameKind::Banqi, args.banqi_model),
        (GameKind::TriGolden, args.trigolden_model),
    ] {
        if let Some(m) = file {
            cfg = cfg.with_model(kind, m);
            cfg.coordinator = None;
        }
    }
    if let Some(c) = args.coordinator {
        cfg.coordinator = Some(c);
        cfg.clear_model_files();
    }
    if let Some(t) = args.token {
        cfg.token = t;
    }
    cfg.validate().map_err(|e| anyhow::anyhow!("serve config: {e}"))?;
    runtime()?.block_on(async {
        let listener = zeroplay_net::bind(&cfg.listen, &cfg.connections)
            .await
            .with_context(|| format!("binding {}", cfg.listen))?;
        // Tests and scripts read the address from this line (port 0 picks a free port),
        // printed once the models are loaded: a refused model prints no ready line.
        zeroplay_server::run_with_ready(cfg, listener, signal(), |addr| {
            println!("zeroplay serve: http://{addr}/");
        })
        .await?;
        Ok(())
    })
}

/// Runs a worker until a signal (or `--max-games`).
///
/// # Errors
/// Bad configuration or a coordinator that refuses the worker.
pub fn worker(args: WorkerArgs) -> Result<()> {
    let mut cfg: WorkerConfig = load(args.config.as_deref())?;
    if let Some(c) = args.coordinator {
        cfg.coordinator = c;
    }
    if let Some(t) = args.token {
        cfg.token = t;
    }
    if let Some(s) = args.slots {
        cfg.slots = s;
    }
    if let Some(s) = args.spool {
        cfg.spool_dir = s;
    }
    if let Some(n) = args.name {
        cfg.name = n;
    }
    if args.max_games.is_some() {
        cfg.max_games = args.max_games;
    }
    if let Some(m) = args.metrics_listen {
        cfg.metrics_listen = Some(m);
    }
    let report = runtime()?.block_on(zeroplay_worker::run(cfg, signal()))?;
    println!("{}", serde_json::to_string(&report)?);
    Ok(())
}

fn token() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// The trainer of game `G` on its own thread, gating through the coordinator at `url`.
fn spawn_trainer<G: engine::Features + engine::agent::GameAgents>(
    thread: std::thread::Builder,
    handle: &tokio::runtime::Handle,
    url: Option<String>,
    token: String,
    tcfg: trainer::pipeline::PipelineConfig,
    device: burn::prelude::Device,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> Result<std::thread::JoinHandle<Result<Vec<trainer::pipeline::RatingEntry>, String>>> {
    let mut gatekeeper = crate::train_cmd::gatekeeper::<G>(handle.clone(), url, token, stop.clone())?;
    Ok(thread.spawn(move || trainer::pipeline::run::<G>(&tcfg, &device, &mut *gatekeeper, &stop))?)
}

/// Runs a coordinator and a worker in one process on loopback, with live progress.
///
/// # Errors
/// Bad configuration, I/O, or a component failure.
pub fn local(args: LocalArgs) -> Result<()> {
    let mut cfg: CoordinatorConfig = load(args.config.as_deref())?;
    let kind = args.game;
    let game = kind.name();
    cfg.games.retain(|k, _| *k == kind);
    if cfg.games.is_empty() {
        cfg.games.insert(kind, zeroplay_coordinator::config::GameConfig::default_for(kind));
    }
    for g in cfg.games.values_mut() {
        if !args.no_train {
            // Self-play follows the trained network once one is promoted.
            g.leaf.evaluator = engine::LeafEvaluator::Net;
        }
    }
    if let Some(s) = args.sims {
        for g in cfg.games.values_mut() {
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

    cfg.validate()?;
    let mut tcfg = match args.train_config.as_deref() {
        Some(path) => load::<trainer::pipeline::PipelineConfig>(Some(path))?,
        None => trainer::pipeline::PipelineConfig::default_for(kind),
    };
    tcfg.game = kind;
    tcfg.data_dir = cfg.data_dir.join("games");
    tcfg.run_dir = cfg.data_dir.join("trainer");
    if let Some(seed) = args.seed {
        tcfg.train.seed = engine::derive_seed(seed, 1);
        tcfg.gate.seed = engine::derive_seed(seed, 2);
        tcfg.rating.seed = engine::derive_seed(seed, 3);
    }
    let mut snapshots = Snapshots::new(&args.snapshot_at, &cfg.data_dir)?;
    tcfg.validate().map_err(anyhow::Error::msg)?;
    let device = trainer::device(&args.device).map_err(anyhow::Error::msg)?;
    let deadline = args.minutes.map(|m| Instant::now() + Duration::from_secs_f64(m * 60.0));
    let no_train = args.no_train;
    let (measure_matches, measure_ms) = (args.measure_matches, args.measure_ms);
    let (run_dir, measure_seed) = (cfg.data_dir.clone(), engine::derive_seed(cfg.seed, 4));
    let rt = runtime()?;
    let handle = rt.handle().clone();
    let (trained, interrupted) = rt.block_on(async move {
        let listener = zeroplay_net::bind(&cfg.listen, &cfg.connections).await?;
        let addr = listener.local_addr()?;
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let (stop_worker_tx, stop_worker_rx) = tokio::sync::watch::channel(false);
        let wait = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
            let _ = rx.wait_for(|v| *v).await;
        };
        let data_dir = cfg.data_dir.clone();
        let admin = cfg.auth.admin_token.clone();
        let trainer_token = cfg.auth.trainer_token.clone();
        let wcfg = WorkerConfig {
            coordinator: format!("http://{addr}"),
            token: cfg.auth.worker_token.clone(),
            name: "local".into(),
            slots: args.slots,
            spool_dir: data_dir.join("spool"),
            max_games: args.games,
            ..WorkerConfig::default()
        };
        println!("zeroplay local: {game}, data in {}, coordinator on {addr}", data_dir.display());
        let coord = tokio::spawn(zeroplay_coordinator::run(cfg, listener, wait(stop_rx.clone())));
        let mut status = zeroplay_client::connect(&zeroplay_client::ClientConfig {
            coordinator: format!("http://{addr}"),
            token: admin,
            ca_cert: None,
        })?;
        // Games already in this run directory from an earlier session.
        let base = loop {
            match status.status(pb::StatusRequest {}).await {
                Ok(s) => break s.into_inner().games_stored,
                Err(_) if !coord.is_finished() => tokio::time::sleep(Duration::from_millis(50)).await,
                Err(e) => {
                    let _ = stop_tx.send(true);
                    coord.await??;
                    anyhow::bail!("coordinator did not start: {e}");
                }
            }
        };
        let worker = tokio::spawn(zeroplay_worker::run(wcfg, wait(stop_worker_rx)));
        // The trainer: its own thread (burn is synchronous), publishing promoted models to
        // the coordinator, which announces them to the worker.
        let train_stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let trainer_thread = if no_train {
            None
        } else {
            // Candidates are gated by the coordinator on the worker's slots.
            let url = Some(format!("http://{addr}"));
            let (tcfg, stop) = (tcfg.clone(), train_stop.clone());
            let thread = std::thread::Builder::new().name("trainer".into());
            let token = trainer_token.clone();
            Some(engine::with_game!(tcfg.game, |G| spawn_trainer::<G>(
                thread, &handle, url, token, tcfg, device, stop
            )?))
        };

        let bar = match args.games {
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
            if let Ok(s) = status.status(pb::StatusRequest {}).await {
                last = s.into_inner();
                let new = last.games_stored.saturating_sub(base);
                let rate = new as f64 / started.elapsed().as_secs_f64().max(1e-3);
                bar.set_position(new);
                bar.set_message(format!(
                    "{rate:.2} games/s · {} positions ({} in {} Parquet files) · {} leases out",
                    last.positions_stored, last.positions_in_parquet, last.parquet_files, last.leases_active
                ));
            }
            if coord.is_finished() || worker.is_finished() {
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
            if trainer_thread.as_ref().is_some_and(|t| t.is_finished()) {
                say(&bar, "trainer finished; stopping…");
                break;
            }
        }
        // Snapshots not yet due when the run stopped are taken now, at the minute it stopped.
        for line in snapshots.finish(started.elapsed(), &last, base)? {
            say(&bar, line);
        }
        bar.finish_and_clear();
        train_stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let history = match trainer_thread {
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
        // The worker first, so it can submit what it has finished; then the coordinator.
        let _ = stop_worker_tx.send(true);
        let report = worker.await??;
        // Counted after the worker's last submissions, so the figure is what the Parquet
        // files hold once the coordinator has flushed them on stop.
        if let Ok(s) = status.status(pb::StatusRequest {}).await {
            last = s.into_inner();
        }
        let _ = stop_tx.send(true);
        coord.await??;
        info!(?report, "worker report");
        println!(
            "done: {} games stored in this run directory ({} this session, {} positions) after {:.0}s; Parquet files in {}",
            last.games_stored,
            last.games_stored.saturating_sub(base),
            last.positions_stored,
            started.elapsed().as_secs_f64(),
            data_dir.join("games").display()
        );
        let trained = history.is_some();
        if let Some(h) = history {
            print!("{}", crate::train_cmd::run_report(&h, &data_dir.join("trainer"), &tcfg));
        }
        anyhow::Ok((trained, interrupted))
    })?;
    drop(rt);
    if trained && measure_matches > 0 {
        if interrupted {
            // Stopped by hand: the user wants their machine back, not another minute of play.
            println!(
                "stopped by a signal: no play-time measurement; `zeroplay strength --run {}` measures the best model at equal time",
                run_dir.display()
            );
        } else {
            play_time(kind, &run_dir, measure_matches, measure_ms, measure_seed)?;
        }
    }
    Ok(())
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
