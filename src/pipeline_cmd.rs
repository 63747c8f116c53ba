//! `zeroplay coordinator`, `zeroplay worker` and `zeroplay serve`, and the pieces
//! `zeroplay local` ([`crate::local_cmd`]) runs them from in one process.

use anyhow::{Context, Result};
use zeroplay_coordinator::CoordinatorConfig;
use zeroplay_worker::WorkerConfig;

use crate::cli::{CoordinatorArgs, WorkerArgs};
use crate::config::load;
use crate::shutdown::signal;

/// The multi-threaded runtime every server command runs on.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime> {
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
    // Each file goes to the game its metadata names.
    let files = args.model.into_iter().chain(args.banqi_model).chain(args.trigolden_model);
    for (kind, file) in crate::netload::models_by_game(files)? {
        cfg = cfg.with_model(kind, file);
        cfg.coordinator = None;
    }
    if let Some(c) = args.coordinator {
        cfg.coordinator = Some(c);
        cfg.clear_model_files();
    }
    if let Some(t) = args.token {
        cfg.token = t;
    }
    if let Some(r) = args.report {
        cfg.report = Some(r);
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

/// A fresh random token (128 bits in hex).
pub(crate) fn token() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// The trainer of game `G` on its own thread, gating through the coordinator at `url`.
pub(crate) fn spawn_trainer<G: engine::Features + engine::agent::GameAgents>(
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
