//! `zeroplay bench`: measurements that need the whole system (not criterion micro-benchmarks).
//!
//! - `bench ingest`: an in-process coordinator on loopback and N simulated workers, each with
//!   its own connection, submitting valid pre-generated games; throughput and acknowledgement
//!   latency per worker count, plus where the CPU went (per thread, from `/proc`).
//! - `bench worker`: an in-process coordinator and a real worker playing `--games` games; the
//!   share of the worker's CPU spent outside game play, and Parquet bytes per stored position.
//!
//! CPU accounting is per thread, from `/proc/self/task/*/schedstat` (run time and run-queue
//! wait in ns; `stat` ticks where that file is missing), so Linux only. The coordinator, the
//! simulated clients and the worker each run on their own tokio runtime with a thread name of
//! their own (`zp-coord`, `zp-bench`, `zp-worker`; the coordinator's own threads and the
//! worker's `selfplay-N` slots are named already), so each thread's CPU can be attributed.

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use engine::battlenumber::BattleNumber;
use engine::eval::Rollout;
use engine::game::Game;
use engine::selfplay::{SelfPlaySettings, play_game};
use tokio::net::{TcpListener, TcpSocket};
use tokio::runtime::Runtime;
use zeroplay_coordinator::CoordinatorConfig;
use zeroplay_coordinator::games::{GameKind, GameOptions, Limits, initial_state, random_opening, validate};
use zeroplay_coordinator::store::{StagedGame, Store};
use zeroplay_proto::v1 as pb;
use zeroplay_worker::{Client, WorkerConfig};

/// `zeroplay bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Which benchmark.
    #[command(subcommand)]
    pub bench: BenchCommand,
}

/// The benchmarks.
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Coordinator ingest: N simulated workers (one connection each) submit valid games as
    /// fast as they are acknowledged (or at `--rate`); games/s and acknowledgement latency.
    ///
    /// Example: zeroplay bench ingest --workers 8,64,512 --seconds 10
    Ingest(IngestArgs),
    /// A real worker against an in-process coordinator: share of the worker's CPU spent
    /// outside game play, and Parquet bytes per stored position.
    ///
    /// Example: zeroplay bench worker --games 40 --sims 200
    Worker(WorkerBenchArgs),
    /// The network: training samples/s, batched inference positions/s per batch size, and
    /// MCTS simulations/s with the network leaf beside the rollout leaf (medians).
    ///
    /// Example: zeroplay bench net --net small --batches 1,16,64,256
    Net(crate::bench_net::NetBenchArgs),
    /// The play server through its HTTP API: AI move latency against the time asked for,
    /// simulations/s through the server, and memory per held game.
    ///
    /// Example: zeroplay bench serve --ms 100,1000 --moves 20 --games 1000
    Serve(crate::bench_serve::ServeBenchArgs),
}

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
    /// Each simulated worker behaves as a real one: it leases its next position before every
    /// game (a database commit on the coordinator) and sends a heartbeat for its lease every
    /// `heartbeat_interval_ms` (the coordinator's default, 5 s). Latency is still the
    /// submission's.
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

/// Runs the benchmark.
///
/// # Errors
/// Whatever the benchmark reports.
pub fn run(args: BenchArgs) -> Result<()> {
    match args.bench {
        BenchCommand::Ingest(a) => ingest(a),
        BenchCommand::Worker(a) => worker(a),
        BenchCommand::Net(a) => crate::bench_net::run(a),
        BenchCommand::Serve(a) => crate::bench_serve::run(a),
    }
}

// ---------------------------------------------------------------------------------------------
// Shared pieces: scratch directories, the in-process coordinator, per-thread CPU.

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn token() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// A directory for one run: under `parent` (kept) or under the system's temporary directory
/// (removed on drop).
struct Scratch {
    path: PathBuf,
    remove: bool,
}

impl Scratch {
    fn new(parent: Option<&Path>, name: &str) -> Result<Scratch> {
        let (base, remove) = match parent {
            Some(p) => (p.to_path_buf(), false),
            None => (std::env::temp_dir(), true),
        };
        let path = base.join(format!("zeroplay-bench-{name}-{:08x}", rand::random::<u32>()));
        std::fs::create_dir_all(&path).with_context(|| format!("creating {}", path.display()))?;
        Ok(Scratch { path, remove })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if self.remove {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

fn runtime(name: &str) -> Result<Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cores())
        .thread_name(name)
        // Blocking-pool threads stay alive, so their CPU is still readable at the end.
        .thread_keep_alive(Duration::from_secs(3600))
        .enable_all()
        .build()?)
}

fn coordinator_config(dir: &Path) -> CoordinatorConfig {
    let mut cfg =
        CoordinatorConfig { listen: "127.0.0.1:0".into(), data_dir: dir.to_path_buf(), ..Default::default() };
    cfg.auth.worker_token = token();
    cfg.auth.trainer_token = token();
    cfg.auth.admin_token = token();
    cfg
}

/// A coordinator running on its own runtime (threads named `zp-coord`).
struct Coord {
    rt: Runtime,
    addr: SocketAddr,
    cfg: CoordinatorConfig,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    handle: tokio::task::JoinHandle<Result<(), zeroplay_coordinator::RunError>>,
}

impl Coord {
    /// Starts a coordinator on a listener bound as `zeroplay coordinator` binds it, or with
    /// TCP_NODELAY set on the listening socket when `nodelay`.
    fn start(cfg: CoordinatorConfig, nodelay: bool) -> Result<Coord> {
        cfg.validate()?;
        let rt = runtime("zp-coord")?;
        let listener = rt.block_on(async {
            if nodelay {
                let addr: SocketAddr = cfg.listen.parse()?;
                let socket = if addr.is_ipv4() { TcpSocket::new_v4()? } else { TcpSocket::new_v6()? };
                socket.set_reuseaddr(true)?;
                socket.set_nodelay(true)?;
                socket.bind(addr)?;
                anyhow::Ok(socket.listen(1024)?)
            } else {
                Ok(TcpListener::bind(&cfg.listen).await?)
            }
        })?;
        let addr = listener.local_addr()?;
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let handle = rt.spawn(zeroplay_coordinator::run(cfg.clone(), listener, async move {
            let _ = rx.await;
        }));
        Ok(Coord { rt, addr, cfg, stop: Some(tx), handle })
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A client with its own connection. Call inside a runtime.
    fn client(&self, token: &str) -> Result<Client> {
        let cfg = WorkerConfig { coordinator: self.url(), token: token.into(), ..WorkerConfig::default() };
        Ok(zeroplay_worker::client(&cfg)?)
    }

    /// Waits until the coordinator answers `Status`.
    async fn ready(&self, admin: &mut Client) -> Result<()> {
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            match admin.status(pb::StatusRequest {}).await {
                Ok(_) => return Ok(()),
                Err(e) if Instant::now() > until => bail!("coordinator did not start: {e}"),
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        }
    }

    /// Stops the coordinator (it writes every staged game to Parquet) and returns how long that
    /// took.
    fn stop(mut self) -> Result<Duration> {
        let t = Instant::now();
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        self.rt.block_on(self.handle)??;
        Ok(t.elapsed())
    }
}

/// Who a thread belongs to, by its name.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Owner {
    /// Coordinator runtime: gRPC, protobuf decoding, replay validation, leases.
    CoordRuntime,
    /// Coordinator writer thread: redb group commits.
    CoordWriter,
    /// Coordinator compactor thread: Parquet files.
    CoordCompactor,
    /// Simulated workers of `bench ingest`.
    Clients,
    /// The worker's runtime: gRPC calls, spool reads, leasing, heartbeats.
    WorkerRuntime,
    /// The worker's self-play slots: search, plus writing each finished game to the spool.
    SelfPlay,
    /// This command's own threads (main, sampler).
    Bench,
}

fn owner(name: &str) -> Owner {
    // Thread names are cut to 15 bytes in /proc.
    if name.starts_with("zp-coord") {
        Owner::CoordRuntime
    } else if name.starts_with("coordinator-wri") {
        Owner::CoordWriter
    } else if name.starts_with("coordinator-com") {
        Owner::CoordCompactor
    } else if name.starts_with("zp-bench") {
        Owner::Clients
    } else if name.starts_with("zp-worker") {
        Owner::WorkerRuntime
    } else if name.starts_with("selfplay-") {
        Owner::SelfPlay
    } else {
        Owner::Bench
    }
}

/// Clock ticks per second of `/proc/*/stat` (USER_HZ; 100 on every Linux we run on).
const TICKS: f64 = 100.0;

/// User + system CPU seconds from a `/proc/.../stat` line.
fn stat_cpu(stat: &str) -> Option<(String, f64)> {
    let (head, rest) = stat.rsplit_once(')')?;
    let name = head.split_once('(')?.1.to_string();
    let f: Vec<&str> = rest.split_whitespace().collect();
    let t = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok());
    // utime and stime are fields 14 and 15: 12th and 13th after the name.
    Some((name, (t(11)? + t(12)?) / TICKS))
}

/// Busy CPU seconds of the whole machine, all cores and processes (from `/proc/stat`).
fn machine_cpu() -> f64 {
    let Ok(s) = std::fs::read_to_string("/proc/stat") else { return 0.0 };
    let Some(line) = s.lines().next() else { return 0.0 };
    // cpu user nice system idle iowait irq softirq steal ...: everything but idle and iowait.
    let f: Vec<f64> = line.split_whitespace().skip(1).filter_map(|x| x.parse().ok()).collect();
    f.iter().enumerate().filter(|(i, _)| *i != 3 && *i != 4).take(6).map(|(_, v)| v).sum::<f64>() / TICKS
}

fn process_cpu() -> f64 {
    std::fs::read_to_string("/proc/self/stat").ok().and_then(|s| stat_cpu(&s)).map_or(0.0, |x| x.1)
}

/// One thread's reading.
#[derive(Clone, Debug)]
struct ThreadCpu {
    name: String,
    /// CPU seconds (scheduler run time, ns resolution; 10 ms ticks where schedstat is missing).
    cpu: f64,
    /// Seconds spent runnable but waiting for a core (0 where schedstat is missing).
    wait: f64,
}

type Table = HashMap<u32, ThreadCpu>;

/// `run_ns wait_ns slices` from a `schedstat` file, in seconds.
fn schedstat(text: &str) -> Option<(f64, f64)> {
    let mut f = text.split_whitespace().map(|x| x.parse::<u64>().ok());
    Some((f.next()?? as f64 / 1e9, f.next()?? as f64 / 1e9))
}

/// Every live thread of this process.
fn threads() -> Table {
    let mut out = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else { return out };
    for e in dir.flatten() {
        let Some(tid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
        let Some((name, ticks)) =
            std::fs::read_to_string(e.path().join("stat")).ok().and_then(|s| stat_cpu(&s))
        else {
            continue;
        };
        let (cpu, wait) = std::fs::read_to_string(e.path().join("schedstat"))
            .ok()
            .and_then(|s| schedstat(&s))
            .unwrap_or((ticks, 0.0));
        out.insert(tid, ThreadCpu { name, cpu, wait });
    }
    out
}

/// CPU and run-queue wait seconds per owner between two thread tables (threads that are new
/// count from zero; threads that vanished count up to their last reading in `after`).
fn cpu_delta(before: &Table, after: &Table) -> BTreeMap<Owner, (f64, f64)> {
    let mut out = BTreeMap::new();
    for (tid, t) in after {
        let (cpu0, wait0) = before.get(tid).map_or((0.0, 0.0), |b| (b.cpu, b.wait));
        let e = out.entry(owner(&t.name)).or_insert((0.0, 0.0));
        e.0 += t.cpu - cpu0;
        e.1 += t.wait - wait0;
    }
    out
}

/// Reads the thread table every 50 ms and keeps each thread's last reading, so threads that
/// exit (the worker's self-play slots) keep most of their CPU in the tally.
struct Sampler {
    stop: Arc<AtomicBool>,
    seen: Arc<Mutex<Table>>,
    handle: std::thread::JoinHandle<()>,
}

impl Sampler {
    fn start() -> Result<Sampler> {
        let stop = Arc::new(AtomicBool::new(false));
        let seen = Arc::new(Mutex::new(threads()));
        let handle = {
            let (stop, seen) = (stop.clone(), seen.clone());
            std::thread::Builder::new().name("bench-sampler".into()).spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let now = threads();
                    seen.lock().expect("not poisoned").extend(now);
                    std::thread::sleep(Duration::from_millis(50));
                }
            })?
        };
        Ok(Sampler { stop, seen, handle })
    }

    fn finish(self) -> Table {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.handle.join();
        let mut seen = std::mem::take(&mut *self.seen.lock().expect("not poisoned"));
        seen.extend(threads());
        seen
    }
}

/// Nearest-rank percentile of sorted microseconds, in milliseconds.
fn pct_ms(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[i.clamp(1, sorted.len()) - 1] as f64 / 1000.0
}

/// Sizes and count of `dir/games/*.parquet`.
fn parquet_bytes(dir: &Path) -> Result<(u64, usize)> {
    let mut bytes = 0;
    let mut files = 0;
    for e in std::fs::read_dir(dir.join("games"))? {
        let e = e?;
        if e.path().extension().is_some_and(|x| x == "parquet") {
            bytes += e.metadata()?.len();
            files += 1;
        }
    }
    Ok((bytes, files))
}

// ---------------------------------------------------------------------------------------------
// Games.

/// Plays `n` self-play games with tiny searches, half from the initial position and half from
/// random openings (as the coordinator hands out), on every core; each passes validation.
fn game_pool(n: usize, sims: u32, seed: u64) -> Result<Vec<pb::GameRecord>> {
    let settings =
        SelfPlaySettings { full_sims: sims.max(1), fast_sims: (sims / 4).max(1), ..Default::default() };
    settings.validate()?;
    let opts = GameOptions::default();
    let threads = cores();
    let mut pool: Vec<pb::GameRecord> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (settings, opts) = (&settings, &opts);
                s.spawn(move || {
                    (t..n)
                        .step_by(threads)
                        .map(|i| {
                            let gseed = seed.wrapping_mul(1_000_003).wrapping_add(i as u64);
                            let kind = GameKind::BattleNumber;
                            let bytes = if i % 2 == 0 {
                                initial_state(kind, opts)
                            } else {
                                random_opening(kind, opts, 2 + (i % 15) as u32, gseed)
                            };
                            let start = BattleNumber::decode(&bytes).expect("the coordinator's own position");
                            let g = play_game(&start, settings, &Rollout::default(), gseed);
                            zeroplay_worker::game_record(&g, String::new(), gseed, 0)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("pool thread")).collect()
    });
    for (i, g) in pool.iter_mut().enumerate() {
        g.game_id = format!("{:032x}", i + 1);
        validate(g, &Limits::default())
            .map_err(|e| anyhow::anyhow!("pool game {i} does not validate: {e}"))?;
    }
    Ok(pool)
}

fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// Bytes of a length-delimited field (field numbers below 16 have one-byte tags).
fn len_field(n: usize) -> usize {
    1 + varint_len(n as u64) + n
}

fn opt_len(n: usize) -> usize {
    if n == 0 { 0 } else { len_field(n) }
}

fn opt_varint(v: u64) -> usize {
    if v == 0 { 0 } else { 1 + varint_len(v) }
}

/// The protobuf encoded size of a game record (proto3 rules: default values are not sent).
fn record_len(g: &pb::GameRecord) -> usize {
    let moves: usize = g
        .moves
        .iter()
        .map(|m| {
            let visits: usize = m
                .visits
                .iter()
                .map(|v| len_field(opt_len(v.action.len()) + opt_varint(v.visits as u64)))
                .sum();
            len_field(
                opt_len(m.action.len())
                    + opt_varint(m.chance as u64)
                    + visits
                    + if m.root_value != 0.0 { 5 } else { 0 }
                    + opt_varint(m.full_search as u64)
                    + opt_varint(m.model_version),
            )
        })
        .sum();
    opt_len(g.game_id.len())
        + opt_len(g.game_kind.len())
        + opt_varint(g.seed)
        + opt_len(g.engine_version.len())
        + opt_varint(g.encoding_version as u64)
        + opt_varint(g.model_version)
        + opt_len(g.start_state.len())
        + moves
        + opt_varint(g.resigned as u64)
        + opt_varint(g.resigned_seat as u64)
        + opt_varint(g.would_have_resigned as u64)
        + opt_varint(g.would_resign_seat as u64)
}

// ---------------------------------------------------------------------------------------------
// bench ingest.

#[derive(Default)]
struct ClientStats {
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

struct Plan {
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

fn unix_us() -> u64 {
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
        let mut lease_id = 0;
        if plan.heartbeat.is_some() {
            let t = Instant::now();
            let r = client
                .lease_positions(pb::LeaseRequest { worker_id: worker_id.clone(), max_positions: 1 })
                .await;
            st.lease_us.push(t.elapsed().as_micros().min(u32::MAX as u128) as u32);
            match r.map(|r| r.into_inner().leases) {
                Ok(l) => lease_id = l.first().map_or(0, |l| l.lease_id),
                Err(e) => {
                    *st.errors.entry(format!("lease {:?}", e.code())).or_insert(0) += 1;
                    st.first_error.get_or_insert_with(|| e.message().to_string());
                }
            }
            current.store(lease_id, Ordering::Relaxed);
        }
        let mut game = pool[k % pool.len()].clone();
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

struct IngestRow {
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

fn ingest(args: IngestArgs) -> Result<()> {
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
    let pool = game_pool(args.pool, args.pool_sims, args.seed)?;
    let gen_s = t.elapsed().as_secs_f64();
    let positions: usize = pool.iter().map(|g| g.moves.len()).sum();
    let bytes: usize = pool.iter().map(record_len).sum();
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

fn print_row_detail(r: &IngestRow) {
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

fn ingest_run(args: &IngestArgs, n: usize, pool: Arc<Vec<pb::GameRecord>>) -> Result<IngestRow> {
    let scratch = Scratch::new(args.data_dir.as_deref(), &format!("ingest-{n}"))?;
    let mut cfg = coordinator_config(&scratch.path);
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
fn components(pool: &[pb::GameRecord], record_bytes: usize, parent: Option<&Path>) -> Result<()> {
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
fn spool_cost(dir: &Path, bytes: usize, n: usize) -> Result<(f64, f64)> {
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

fn worker(args: WorkerBenchArgs) -> Result<()> {
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
        let pool = game_pool(2, 8, 7)?;
        pool.iter().map(record_len).sum::<usize>() as f64
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_parse() {
        let line = "123 (coordinator-wri) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0";
        assert_eq!(stat_cpu(line), Some(("coordinator-wri".into(), 3.0)));
        assert_eq!(owner("selfplay-1"), Owner::SelfPlay);
        assert_eq!(owner("zp-coord"), Owner::CoordRuntime);
        assert!(stat_cpu("garbage").is_none());
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let v: Vec<u32> = (1..=100).map(|x| x * 1000).collect();
        assert_eq!(pct_ms(&v, 50.0), 50.0);
        assert_eq!(pct_ms(&v, 99.0), 99.0);
        assert_eq!(pct_ms(&v, 100.0), 100.0);
        assert_eq!(pct_ms(&[5000], 99.0), 5.0);
    }

    #[test]
    fn pool_games_validate_and_sizes_add_up() {
        let pool = game_pool(4, 4, 3).unwrap();
        assert_eq!(pool.len(), 4);
        assert!(pool.iter().all(|g| record_len(g) > 100));
        assert_eq!(varint_len(0), 1);
        assert_eq!(varint_len(127), 1);
        assert_eq!(varint_len(128), 2);
    }
}
