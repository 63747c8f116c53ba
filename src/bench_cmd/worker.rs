//! `zeroplay bench worker`: a real worker against an in-process coordinator.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Result, bail};
use clap::Args;
use zeroplay_coordinator::store::Store;
use zeroplay_proto::v1 as pb;
use zeroplay_worker::WorkerConfig;

use super::cpu::*;
use super::ingest::spool_cost;
use super::*;

/// `zeroplay bench worker`.
#[derive(Debug, Args)]
pub struct WorkerBenchArgs {
    /// Games to play (the worker stops once this many are acknowledged).
    #[arg(long, default_value_t = 40)]
    pub games: u64,
    /// Simulations of a full search (fast searches keep the default 100, or fewer).
    #[arg(long, default_value_t = 200)]
    pub sims: u32,
    /// Games played at once (0: one per core).
    #[arg(long, default_value_t = 0)]
    pub slots: usize,
    /// Parent directory for the run's data (kept). Default: a temporary directory, removed.
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
}

pub(super) fn worker(args: WorkerBenchArgs) -> Result<()> {
    if args.games == 0 || args.sims == 0 {
        bail!("--games and --sims must be positive");
    }
    let scratch = Scratch::new(args.data_dir.as_deref(), "worker")?;
    let mut cfg = coordinator_config(&scratch.path);
    for g in cfg.games.values_mut() {
        g.settings.full_sims = args.sims;
        g.settings.fast_sims = g.settings.fast_sims.min(args.sims);
    }
    let settings = cfg.games.values().next().map(|g| g.settings.clone()).unwrap_or_default();
    let slots = if args.slots == 0 { cores() } else { args.slots };
    let coord = Coord::start(cfg, false)?;
    let worker_rt = runtime("zp-worker")?;
    let admin_token = coord.cfg.auth.admin_token.clone();
    let mut admin = worker_rt.block_on(async {
        let mut admin = coord.client(&admin_token)?;
        coord.ready(&mut admin).await?;
        anyhow::Ok(admin)
    })?;
    let wcfg = WorkerConfig {
        coordinator: coord.url(),
        token: coord.cfg.auth.worker_token.clone(),
        name: "bench".into(),
        slots,
        spool_dir: scratch.path.join("spool"),
        max_games: Some(args.games),
        ..WorkerConfig::default()
    };
    eprintln!(
        "worker: {} games, {} full sims (fast {}, p_full {}), {slots} slots …",
        args.games, settings.full_sims, settings.fast_sims, settings.full_search_probability
    );
    let sampler = Sampler::start()?;
    let before = threads();
    let (machine0, cpu0) = (machine_cpu(), process_cpu());
    let t = Instant::now();
    let report = worker_rt.block_on(zeroplay_worker::run(wcfg, std::future::pending::<()>()))?;
    let wall = t.elapsed().as_secs_f64();
    let cpu1 = process_cpu();
    let others = ((machine_cpu() - machine0) - (cpu1 - cpu0)).max(0.0);
    let after = sampler.finish();
    let status = worker_rt.block_on(admin.status(pb::StatusRequest {}))?.into_inner();
    drop(admin);
    drop(worker_rt);
    let drain = coord.stop()?;
    let (pq_bytes, pq_files) = parquet_bytes(&scratch.path)?;
    let counters = Store::open(&scratch.path)?.counters()?;

    let cpu = cpu_delta(&before, &after);
    let get = |o: Owner| cpu.get(&o).map_or(0.0, |x| x.0);
    let wait = |o: Owner| cpu.get(&o).map_or(0.0, |x| x.1);
    let coord_cpu = get(Owner::CoordRuntime) + get(Owner::CoordWriter) + get(Owner::CoordCompactor);
    let process = cpu1 - cpu0;
    // Everything the process spent, less the coordinator's and this command's own threads:
    // exact for threads that exited (their CPU stays in the process total).
    let worker_cpu = process - coord_cpu - get(Owner::Bench);
    let sampled_worker = get(Owner::SelfPlay) + get(Owner::WorkerRuntime);
    // CPU of exited threads after their last sample: in practice the self-play slots.
    let remainder = (worker_cpu - sampled_worker).max(0.0);
    let selfplay = get(Owner::SelfPlay) + remainder;
    let overhead = 1.0 - report.play_seconds / worker_cpu;
    let thread_overhead = 1.0 - selfplay / worker_cpu;
    // The slots also write each finished game to the spool (write, fsync, rename) after its
    // play time stops: measured alone here, with a file of the same size, and moved from
    // "self-play" to "outside play".
    let per_position = {
        let pool = game_pool(2, 8, 7, true)?;
        pool.iter().map(prost::Message::encoded_len).sum::<usize>() as f64
            / pool.iter().map(|g| g.moves.len()).sum::<usize>() as f64
    };
    let record_bytes =
        (per_position * status.positions_stored as f64 / status.games_stored.max(1) as f64) as usize;
    let (spool_cpu, spool_wall) = spool_cost(&scratch.path.join("spool-probe"), record_bytes, 50)?;
    let spool_total = spool_cpu * report.games_played as f64;
    let adjusted = (worker_cpu - selfplay + spool_total) / worker_cpu;

    println!(
        "bench worker: {} games at {} full sims (fast {}, p_full {}), {slots} slots, {:.1}s wall",
        args.games, settings.full_sims, settings.fast_sims, settings.full_search_probability, wall
    );
    println!(
        "  games played {}, acknowledged {}, stored {} ({} positions); {:.2} games/s; slot utilisation {:.1}% \
         (play time / slots × wall)",
        report.games_played,
        report.games_submitted,
        status.games_stored,
        status.positions_stored,
        status.games_stored as f64 / wall,
        100.0 * report.play_seconds / (slots as f64 * wall)
    );
    println!(
        "  process CPU {process:.2}s = worker {worker_cpu:.2}s + coordinator {coord_cpu:.3}s (runtime {:.3}, writer {:.3}, \
         compactor {:.3}) + bench {:.3}s",
        get(Owner::CoordRuntime),
        get(Owner::CoordWriter),
        get(Owner::CoordCompactor),
        get(Owner::Bench)
    );
    println!(
        "  worker CPU by thread: self-play slots {selfplay:.3}s (incl. {remainder:.3}s after the last sample), \
         worker runtime (gRPC, spool reads, leases, heartbeats) {:.3}s",
        get(Owner::WorkerRuntime)
    );
    println!(
        "  spool write (write + fsync + rename of {record_bytes} bytes), measured alone: {:.0} µs CPU, {:.2} ms wall per game \
         → {spool_total:.3}s CPU in the slots",
        spool_cpu * 1e6,
        spool_wall * 1e3
    );
    println!(
        "  play time (wall, summed over slots) {:.2}s; self-play thread CPU {selfplay:.2}s; slots waited {:.2}s for a core{}",
        report.play_seconds,
        wait(Owner::SelfPlay),
        if report.play_seconds > selfplay * 1.01 {
            " (play time > CPU: the slots were preempted)"
        } else {
            ""
        }
    );
    println!(
        "  outside play (target < 2%): 1 − play/worker CPU = {:.2}%  |  by thread CPU: {:.2}% (non-self-play threads \
         {:.2}% + spool writes {:.2}%)",
        100.0 * overhead,
        100.0 * adjusted,
        100.0 * thread_overhead,
        100.0 * spool_total / worker_cpu
    );
    let positions = status.positions_stored.max(1);
    println!(
        "  Parquet: {pq_files} files, {pq_bytes} bytes for {} positions ({} in Parquet after shutdown) = {:.1} bytes/position; \
         shutdown {:.2}s",
        status.positions_stored,
        counters.positions_in_parquet,
        pq_bytes as f64 / positions as f64,
        drain.as_secs_f64()
    );
    println!(
        "  other processes used {others:.2}s CPU meanwhile ({:.0}% of {} cores)",
        100.0 * others / (wall * cores() as f64),
        cores()
    );
    if report.games_spooled > 0 {
        println!("  note: {} games left in the spool", report.games_spooled);
    }
    Ok(())
}
