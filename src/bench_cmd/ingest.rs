//! `zeroplay bench ingest`: an in-process coordinator on loopback and N simulated workers,
//! each with its own connection, submitting valid pre-generated games.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use zeroplay_coordinator::games::{Limits, validate};
use zeroplay_coordinator::store::{StagedGame, Store};
use zeroplay_proto::v1 as pb;
use zeroplay_worker::Client;

use super::cpu::*;
use super::*;

/// `zeroplay bench ingest`.
#[derive(Debug, Args)]
pub struct IngestArgs {
    /// Simulated worker counts to measure, one run each (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "8,64,512")]
    pub workers: Vec<usize>,
    /// Measured seconds per run.
    #[arg(long, default_value_t = 10.0)]
    pub seconds: f64,
    /// Offered load in games per minute over all workers (open loop: each worker submits on
    /// a fixed schedule). Default: closed loop, each worker submits its next game as soon as
    /// the last is acknowledged (the most the coordinator can take).
    #[arg(long)]
    pub rate: Option<f64>,
    /// Offered load per simulated worker, in games per minute (open loop): the total grows
    /// with the worker count, as when workers join a cluster. Conflicts with --rate.
    #[arg(long, conflicts_with = "rate")]
    pub per_worker_rate: Option<f64>,
    /// Each simulated worker also sends a heartbeat for its lease every
    /// `heartbeat_interval_ms` (the coordinator's default, 5 s), and the lease latency is
    /// reported. (Every worker leases its next position before each game: the coordinator
    /// takes no game without a lease. Latency is still the submission's.)
    #[arg(long)]
    pub lifecycle: bool,
    /// Stop at the first worker count whose p99 acknowledgement latency passes this many
    /// milliseconds, and report the largest count that stayed below it.
    #[arg(long)]
    pub p99_limit_ms: Option<f64>,
    /// Parent directory for the runs' data (kept). Default: a temporary directory, removed.
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Distinct pre-generated games (submissions cycle through them, each with a new id).
    #[arg(long, default_value_t = 512)]
    pub pool: usize,
    /// Full-search simulations of the pre-generated games (fast searches use a quarter).
    #[arg(long, default_value_t = 8)]
    pub pool_sims: u32,
    /// The coordinator's `parquet.rotate_positions` (its default: 50000).
    #[arg(long, default_value_t = 50_000)]
    pub rotate_positions: u64,
    /// The coordinator's `parquet.rotate_seconds` (its default: 60).
    #[arg(long, default_value_t = 60)]
    pub rotate_seconds: u64,
    /// Seed of the pre-generated games.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Set TCP_NODELAY on the coordinator's listening socket (Linux copies it to accepted
    /// connections). The coordinator itself does not set it (it serves a `TcpListenerStream`,
    /// for which tonic ignores its own `tcp_nodelay`), so this shows what that costs.
    #[arg(long)]
    pub server_nodelay: bool,
    /// Write every call as a CSV line (`workers,worker,sent_unix_us,latency_us,ok`) to this
    /// file, to line latencies up with the coordinator's log.
    #[arg(long)]
    pub latency_csv: Option<PathBuf>,
}

// ---------------------------------------------------------------------------------------------
// bench ingest.

#[derive(Default)]
pub(super) struct ClientStats {
    index: usize,
    latency_us: Vec<u32>,
    /// `--lifecycle`: lease call latencies.
    lease_us: Vec<u32>,
    /// Per call: sent (µs since the Unix epoch), latency (µs), acknowledged.
    calls: Vec<(u64, u32, bool)>,
    ok: u64,
    positions: u64,
    errors: BTreeMap<String, u64>,
    first_error: Option<String>,
    late: u64,
}

pub(super) struct Plan {
    pool: Arc<Vec<pb::GameRecord>>,
    next_id: Arc<AtomicU64>,
    nonce: u64,
    start: Instant,
    end: Instant,
    /// Open loop: time between one worker's submissions.
    interval: Option<Duration>,
    /// Keep every call for `--latency-csv`.
    keep_calls: bool,
    /// Lease before each game and send heartbeats (`--lifecycle`), this often.
    heartbeat: Option<Duration>,
}

pub(super) fn unix_us() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64)
}

async fn simulated_worker(
    mut client: Client,
    worker_id: String,
    index: usize,
    plan: Arc<Plan>,
) -> ClientStats {
    let mut st = ClientStats { index, ..ClientStats::default() };
    let pool = &plan.pool;
    // --lifecycle: the lease being played, renewed by a heartbeat task.
    let current = Arc::new(AtomicU64::new(0));
    let heartbeat = plan.heartbeat.map(|every| {
        let (mut c, id, current, end) = (client.clone(), worker_id.clone(), current.clone(), plan.end);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.tick().await;
            while Instant::now() < end {
                tick.tick().await;
                let lease = current.load(Ordering::Relaxed);
                let req = pb::HeartbeatRequest {
                    worker_id: id.clone(),
                    lease_ids: if lease == 0 { vec![] } else { vec![lease] },
                    games_finished: 0,
                };
                let _ = c.heartbeat(req).await;
            }
        })
    });
    let mut k = index;
    let mut next = plan.start + plan.interval.map_or(Duration::ZERO, |d| d.mul_f64(rand::random::<f64>()));
    tokio::time::sleep_until(next.into()).await;
    loop {
        if let Some(d) = plan.interval {
            if next >= plan.end {
                break;
            }
            let now = Instant::now();
            if now < next {
                tokio::time::sleep_until(next.into()).await;
            } else if now > next + Duration::from_millis(5) {
                st.late += 1;
            }
            next += d;
        }
        if Instant::now() >= plan.end {
            break;
        }
        // Every game is played under a lease (the coordinator refuses any other, issue 24):
        // the pool's game (from the initial position) under the lease's seed.
        let (mut lease_id, mut seed) = (0, 0);
        let t = Instant::now();
        let r =
            client.lease_positions(pb::LeaseRequest { worker_id: worker_id.clone(), max_positions: 1 }).await;
        st.lease_us.push(t.elapsed().as_micros().min(u32::MAX as u128) as u32);
        match r.map(|r| r.into_inner().leases) {
            Ok(l) => (lease_id, seed) = l.first().map_or((0, 0), |l| (l.lease_id, l.seed)),
            Err(e) => {
                *st.errors.entry(format!("lease {:?}", e.code())).or_insert(0) += 1;
                st.first_error.get_or_insert_with(|| e.message().to_string());
            }
        }
        current.store(lease_id, Ordering::Relaxed);
        let mut game = pool[k % pool.len()].clone();
        game.seed = seed;
        k += 1;
        let id = plan.next_id.fetch_add(1, Ordering::Relaxed);
        game.game_id = format!("{:016x}{id:016x}", plan.nonce);
        let req = pb::SubmitGameRequest { worker_id: worker_id.clone(), lease_id, game: Some(game) };
        let sent = unix_us();
        let t = Instant::now();
        let r = client.submit_game(req).await;
        let us = t.elapsed().as_micros().min(u32::MAX as u128) as u32;
        st.latency_us.push(us);
        if plan.keep_calls {
            st.calls.push((sent, us, r.is_ok()));
        }
        match r {
            Ok(r) => {
                st.ok += 1;
                st.positions += r.into_inner().positions as u64;
            }
            Err(e) => {
                *st.errors.entry(format!("{:?}", e.code())).or_insert(0) += 1;
                st.first_error.get_or_insert_with(|| e.message().to_string());
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
    if let Some(h) = heartbeat {
        h.abort();
    }
    st
}

pub(super) struct IngestRow {
    workers: usize,
    seconds: f64,
    games: u64,
    positions: u64,
    latency_us: Vec<u32>,
    lease_us: Vec<u32>,
    errors: BTreeMap<String, u64>,
    first_error: Option<String>,
    late: u64,
    cpu: BTreeMap<Owner, (f64, f64)>,
    stored: u64,
    drain: Duration,
    parquet_files: usize,
    /// CPU seconds other processes used during the run.
    others: f64,
}

pub(super) fn ingest(args: IngestArgs) -> Result<()> {
    if args.workers.is_empty() || args.workers.contains(&0) {
        bail!("--workers needs positive counts");
    }
    if args.seconds.is_nan() || args.seconds <= 0.0 || args.pool == 0 {
        bail!("--seconds and --pool must be positive");
    }
    for r in [args.rate, args.per_worker_rate].into_iter().flatten() {
        if !r.is_finite() || r <= 0.0 {
            bail!("--rate and --per-worker-rate must be positive numbers of games per minute");
        }
    }
    let t = Instant::now();
    let pool = game_pool(args.pool, args.pool_sims, args.seed, false)?;
    let gen_s = t.elapsed().as_secs_f64();
    let positions: usize = pool.iter().map(|g| g.moves.len()).sum();
    let bytes: usize = pool.iter().map(prost::Message::encoded_len).sum();
    let searched: usize = pool.iter().flat_map(|g| &g.moves).filter(|m| !m.visits.is_empty()).count();
    let entries: usize = pool.iter().flat_map(|g| &g.moves).map(|m| m.visits.len()).sum();
    println!(
        "game pool: {} Battle Number self-play games ({} full sims) in {gen_s:.1}s; per game {:.1} positions, \
         {:.0} protobuf bytes, {:.1} searched moves with {:.1} visit entries each",
        pool.len(),
        args.pool_sims,
        positions as f64 / pool.len() as f64,
        bytes as f64 / pool.len() as f64,
        searched as f64 / pool.len() as f64,
        entries as f64 / searched.max(1) as f64,
    );
    components(&pool, bytes / pool.len(), args.data_dir.as_deref())?;

    let pool = Arc::new(pool);
    let mut rows = Vec::new();
    let mut passed = None;
    for &n in &args.workers {
        let row = ingest_run(&args, n, pool.clone())?;
        print_row_detail(&row);
        let mut l = row.latency_us.clone();
        l.sort_unstable();
        let p99 = pct_ms(&l, 99.0);
        rows.push(row);
        if let Some(limit) = args.p99_limit_ms
            && (p99.is_nan() || p99 > limit)
        {
            passed = Some((n, p99, limit));
            break;
        }
    }
    println!();
    match (args.rate, args.per_worker_rate) {
        (Some(r), _) => println!("open loop, offered {r:.0} games/min in all; {}s per run", args.seconds),
        (None, Some(r)) => {
            println!("open loop, offered {r:.1} games/min per worker; {}s per run", args.seconds)
        }
        (None, None) => {
            println!("closed loop (next game as soon as the last is acknowledged); {}s per run", args.seconds)
        }
    }
    if args.lifecycle {
        println!("each simulated worker leases a position before every game and heartbeats its lease");
    }
    println!(
        "| workers | games/s | games/min | positions/s | p50 ms | p90 ms | p99 ms | max ms | errors |{}",
        if args.lifecycle { " lease p99 ms |" } else { "" }
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|{}", if args.lifecycle { "---:|" } else { "" });
    for r in &rows {
        let mut l = r.latency_us.clone();
        l.sort_unstable();
        let mut lease = r.lease_us.clone();
        lease.sort_unstable();
        let errors: u64 = r.errors.values().sum();
        println!(
            "| {} | {:.0} | {:.0} | {:.0} | {:.1} | {:.1} | {:.1} | {:.1} | {} |{}",
            r.workers,
            r.games as f64 / r.seconds,
            r.games as f64 / r.seconds * 60.0,
            r.positions as f64 / r.seconds,
            pct_ms(&l, 50.0),
            pct_ms(&l, 90.0),
            pct_ms(&l, 99.0),
            pct_ms(&l, 100.0),
            errors,
            if args.lifecycle { format!(" {:.1} |", pct_ms(&lease, 99.0)) } else { String::new() }
        );
    }
    if let Some((n, p99, limit)) = passed {
        let below = rows
            .iter()
            .rev()
            .nth(1)
            .map_or("none of the counts".to_string(), |r| format!("{} workers", r.workers));
        println!(
            "p99 acknowledgement latency passed {limit} ms at {n} workers ({p99:.1} ms); the largest count below it: {below}"
        );
    } else if let Some(limit) = args.p99_limit_ms {
        println!("p99 acknowledgement latency stayed below {limit} ms at every count measured");
    }
    println!("targets: >= 5000 games/min with p99 < 100 ms");
    Ok(())
}

pub(super) fn print_row_detail(r: &IngestRow) {
    let total: f64 = r.cpu.values().map(|x| x.0).sum();
    let get = |o: Owner| r.cpu.get(&o).map_or(0.0, |x| x.0);
    let coord = get(Owner::CoordRuntime) + get(Owner::CoordWriter) + get(Owner::CoordCompactor);
    let per_game_us = if r.games > 0 { coord / r.games as f64 * 1e6 } else { f64::NAN };
    println!(
        "  {} workers: {} games acknowledged in {:.2}s ({} stored per Status){}",
        r.workers,
        r.games,
        r.seconds,
        r.stored,
        if r.late > 0 { format!(", {} sends late (open loop)", r.late) } else { String::new() }
    );
    println!(
        "    CPU {:.2}s of {:.2}s available ({} cores): coordinator runtime {:.2}s, writer {:.2}s, \
         compactor {:.2}s, clients {:.2}s, other {:.2}s; other processes {:.2}s",
        total,
        r.seconds * cores() as f64,
        cores(),
        get(Owner::CoordRuntime),
        get(Owner::CoordWriter),
        get(Owner::CoordCompactor),
        get(Owner::Clients),
        get(Owner::Bench),
        r.others,
    );
    println!(
        "    coordinator CPU per game {per_game_us:.0} µs (→ {:.0} games/min if it had the {} cores to itself); \
         shutdown (final Parquet compaction) {:.2}s, {} Parquet files",
        60e6 / per_game_us * cores() as f64,
        cores(),
        r.drain.as_secs_f64(),
        r.parquet_files
    );
    for (code, n) in &r.errors {
        println!("    error {code}: {n}");
    }
    if let Some(e) = &r.first_error {
        println!("    first error: {e}");
    }
}

pub(super) fn ingest_run(args: &IngestArgs, n: usize, pool: Arc<Vec<pb::GameRecord>>) -> Result<IngestRow> {
    let scratch = Scratch::new(args.data_dir.as_deref(), &format!("ingest-{n}"))?;
    let mut cfg = coordinator_config(&scratch.path);
    // Every simulated worker connects from loopback; each game is played from the initial
    // position (the pool's start), and the pool's games repeat by design: stored, counted.
    cfg.connections.per_address = cfg.connections.max;
    cfg.limits.repeated_games = zeroplay_coordinator::config::RepeatedGames::Store;
    if let Some(g) = cfg.games.get_mut(&engine::GameKind::BattleNumber) {
        g.sources = zeroplay_coordinator::config::SourcesConfig {
            initial: 1.0,
            random_opening: 0.0,
            fork: 0.0,
            ..Default::default()
        };
    }
    cfg.parquet.rotate_positions = args.rotate_positions;
    cfg.parquet.rotate_seconds = args.rotate_seconds;
    let coord = Coord::start(cfg, args.server_nodelay)?;
    let clients_rt = runtime("zp-bench")?;
    let worker_token = coord.cfg.auth.worker_token.clone();
    let admin_token = coord.cfg.auth.admin_token.clone();
    eprintln!("ingest: {n} simulated workers, coordinator on {} …", coord.addr);

    let row = clients_rt.block_on(async {
        let mut admin = coord.client(&admin_token)?;
        coord.ready(&mut admin).await?;
        // Connect and register every simulated worker before the clock starts.
        let mut set = tokio::task::JoinSet::new();
        for i in 0..n {
            let mut c = coord.client(&worker_token)?;
            set.spawn(async move {
                let req = pb::RegisterRequest {
                    name: format!("bench-{i}"),
                    slots: 1,
                    engine_version: engine::ENGINE_VERSION.into(),
                    protocol: zeroplay_proto::PROTOCOL,
                };
                let id = c.register(req).await.map(|r| r.into_inner().worker_id);
                (i, c, id)
            });
        }
        let mut registered = Vec::with_capacity(n);
        while let Some(r) = set.join_next().await {
            let (i, c, id) = r?;
            registered.push((i, c, id.context("register")?));
        }
        let start = Instant::now() + Duration::from_millis(200);
        let plan = Arc::new(Plan {
            pool,
            next_id: Arc::new(AtomicU64::new(0)),
            nonce: rand::random::<u64>(),
            start,
            end: start + Duration::from_secs_f64(args.seconds),
            interval: match (args.rate, args.per_worker_rate) {
                (Some(r), _) => Some(Duration::from_secs_f64(60.0 * n as f64 / r)),
                (None, Some(r)) => Some(Duration::from_secs_f64(60.0 / r)),
                (None, None) => None,
            },
            keep_calls: args.latency_csv.is_some(),
            heartbeat: args.lifecycle.then(|| Duration::from_millis(coord.cfg.leases.heartbeat_interval_ms)),
        });
        let mut set = tokio::task::JoinSet::new();
        for (i, c, id) in registered {
            set.spawn(simulated_worker(c, id, i, plan.clone()));
        }
        tokio::time::sleep_until(start.into()).await;
        let before = threads();
        let (machine0, process0) = (machine_cpu(), process_cpu());
        let mut all = ClientStats::default();
        let mut csv = String::new();
        while let Some(r) = set.join_next().await {
            let s = r?;
            for (sent, us, ok) in &s.calls {
                csv.push_str(&format!("{n},{},{sent},{us},{}\n", s.index, u8::from(*ok)));
            }
            all.latency_us.extend(s.latency_us);
            all.lease_us.extend(s.lease_us);
            all.ok += s.ok;
            all.positions += s.positions;
            all.late += s.late;
            for (k, v) in s.errors {
                *all.errors.entry(k).or_insert(0) += v;
            }
            if all.first_error.is_none() {
                all.first_error = s.first_error;
            }
        }
        let seconds = start.elapsed().as_secs_f64();
        if let Some(path) = &args.latency_csv {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
            f.write_all(csv.as_bytes())?;
        }
        let cpu = cpu_delta(&before, &threads());
        let others = ((machine_cpu() - machine0) - (process_cpu() - process0)).max(0.0);
        let stored = admin.status(pb::StatusRequest {}).await?.into_inner().games_stored;
        anyhow::Ok(IngestRow {
            workers: n,
            seconds,
            games: all.ok,
            positions: all.positions,
            latency_us: all.latency_us,
            lease_us: all.lease_us,
            errors: all.errors,
            first_error: all.first_error,
            late: all.late,
            cpu,
            stored,
            drain: Duration::ZERO,
            parquet_files: 0,
            others,
        })
    });
    // Close every client connection before stopping the coordinator.
    drop(clients_rt);
    let drain = coord.stop()?;
    let mut row = row?;
    row.drain = drain;
    row.parquet_files = parquet_bytes(&scratch.path)?.1;
    Ok(row)
}

/// Costs of the ingest path's parts, each measured alone on one thread: replay validation,
/// cloning a record (what each simulated worker does per call), and a durable redb commit of
/// one game and of a group of 64.
pub(super) fn components(pool: &[pb::GameRecord], record_bytes: usize, parent: Option<&Path>) -> Result<()> {
    let limits = Limits::default();
    let rounds = (2000 / pool.len()).max(1);
    let t = Instant::now();
    let mut rows = 0usize;
    for _ in 0..rounds {
        for g in pool {
            rows += validate(g, &limits).map(|r| r.len()).unwrap_or(0);
        }
    }
    let validate_us = t.elapsed().as_secs_f64() * 1e6 / (rounds * pool.len()) as f64;
    let per_row_ns = t.elapsed().as_secs_f64() * 1e9 / rows.max(1) as f64;
    let t = Instant::now();
    for _ in 0..rounds {
        for g in pool {
            std::hint::black_box(g.clone());
        }
    }
    let clone_us = t.elapsed().as_secs_f64() * 1e6 / (rounds * pool.len()) as f64;

    // On the runs' file system, but always removed.
    let mut scratch = Scratch::new(parent, "commit")?;
    scratch.remove = true;
    let store = Store::open(&scratch.path)?;
    let mut id = 0u64;
    let mut batch = |k: usize| -> Vec<StagedGame> {
        (0..k)
            .map(|_| {
                id += 1;
                StagedGame {
                    game_id: format!("{id:032x}"),
                    record: vec![7u8; record_bytes],
                    positions: 60,
                    lease_id: 0,
                    digest: {
                        let mut d = [0u8; 32];
                        d[..8].copy_from_slice(&id.to_le_bytes());
                        d
                    },
                }
            })
            .collect()
    };
    let mut commit = |k: usize, times: usize| -> Result<Vec<f64>> {
        let mut v = Vec::new();
        for _ in 0..times {
            let b = batch(k);
            let t = Instant::now();
            store.stage(&b)?;
            v.push(t.elapsed().as_secs_f64() * 1e3);
        }
        v.sort_by(f64::total_cmp);
        Ok(v)
    };
    let one = commit(1, 100)?;
    let group = commit(64, 30)?;
    let med = |v: &[f64]| v[v.len() / 2];
    let p99 = |v: &[f64]| v[((v.len() as f64 * 0.99).ceil() as usize).clamp(1, v.len()) - 1];
    println!(
        "components (one thread each): replay validation {validate_us:.0} µs/game ({per_row_ns:.0} ns/position); \
         record clone {clone_us:.1} µs; redb commit of 1 game median {:.2} ms (p99 {:.2}), of 64 games median {:.2} ms (p99 {:.2})",
        med(&one),
        p99(&one),
        med(&group),
        p99(&group)
    );
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// bench worker.

/// CPU and wall seconds of one spool write as the worker does it ([`durable::write_atomic`]:
/// temporary name, fsync, rename, fsync the directory), averaged over `n` files of `bytes` bytes, on this thread.
pub(super) fn spool_cost(dir: &Path, bytes: usize, n: usize) -> Result<(f64, f64)> {
    std::fs::create_dir_all(dir)?;
    let data = vec![0x5au8; bytes];
    let me = || std::fs::read_to_string("/proc/thread-self/schedstat").ok().and_then(|s| schedstat(&s));
    let (cpu0, t) = (me(), Instant::now());
    for i in 0..n {
        durable::write_atomic(&dir.join(format!("{i:032x}.pb")), &data)?;
    }
    let wall = t.elapsed().as_secs_f64() / n as f64;
    let cpu = match (cpu0, me()) {
        (Some(a), Some(b)) => (b.0 - a.0) / n as f64,
        _ => f64::NAN,
    };
    std::fs::remove_dir_all(dir)?;
    Ok((cpu, wall))
}
