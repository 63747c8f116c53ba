//! `zeroplay bench`: measurements that need the whole system (not criterion micro-benchmarks).
//!
//! - `bench ingest`: an in-process coordinator on loopback and N simulated workers, each with
//!   its own connection, submitting valid pre-generated games; throughput and acknowledgement
//!   latency per worker count, plus where the CPU went (per thread, from `/proc`).
//! - `bench worker`: an in-process coordinator and a real worker playing `--games` games; the
//!   share of the worker's CPU spent outside game play, and Parquet bytes per stored position.
//! - `bench net`, `bench serve`, `bench depth`, `bench checks`: the network, the play server,
//!   `banqi-ab`'s depth by phase ([`crate::bench_depth`]), how honest and forged stored moves
//!   compare with checks of them ([`crate::bench_checks`]).
//!
//! CPU accounting is per thread, from `/proc/self/task/*/schedstat` (run time and run-queue
//! wait in ns; `stat` ticks where that file is missing), so Linux only. The coordinator, the
//! simulated clients and the worker each run on their own tokio runtime with a thread name of
//! their own (`zp-coord`, `zp-bench`, `zp-worker`; the coordinator's own threads and the
//! worker's `selfplay-N` slots are named already), so each thread's CPU can be attributed.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
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
use zeroplay_proto::v1 as pb;
use zeroplay_worker::Client;

mod cpu;
mod ingest;
mod worker;

pub use ingest::IngestArgs;
pub use worker::WorkerBenchArgs;

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
    /// `banqi-ab`'s search depth by phase of the game (opening, middle game, ending) at its
    /// time per move, agents side by side on the same positions.
    ///
    /// Example: zeroplay bench depth -a banqi-ab:time=300ms,flip_depth=2,rep=0,probe=0,cpc=0 -a banqi-ab:time=300ms
    Depth(crate::bench_depth::DepthBenchArgs),
    /// Value and visit checks (issue 42): how far honest stored moves lie from another
    /// worker's fresh search of them, and how far reversed visit counts do; quantiles, and
    /// what the default tolerances call a disagreement.
    ///
    /// Example: zeroplay bench checks --game battlenumber --games 20
    Checks(crate::bench_checks::ChecksBenchArgs),
}

/// Runs the benchmark.
///
/// # Errors
/// Whatever the benchmark reports.
pub fn run(args: BenchArgs) -> Result<()> {
    match args.bench {
        BenchCommand::Ingest(a) => ingest::ingest(a),
        BenchCommand::Worker(a) => worker::worker(a),
        BenchCommand::Net(a) => crate::bench_net::run(a),
        BenchCommand::Serve(a) => crate::bench_serve::run(a),
        BenchCommand::Depth(a) => crate::bench_depth::run(a),
        BenchCommand::Checks(a) => crate::bench_checks::run(a),
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
        let cfg =
            zeroplay_client::ClientConfig { coordinator: self.url(), token: token.into(), ca_cert: None };
        Ok(zeroplay_client::connect(&cfg)?)
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

/// Plays `n` self-play games with tiny searches, on every core; each passes validation. With
/// `openings`, half start from random openings (as the coordinator hands out); otherwise all
/// start from the initial position, so each can be submitted under any lease of it.
fn game_pool(n: usize, sims: u32, seed: u64, openings: bool) -> Result<Vec<pb::GameRecord>> {
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
                            let bytes = if i % 2 == 0 || !openings {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let v: Vec<u32> = (1..=100).map(|x| x * 1000).collect();
        assert_eq!(pct_ms(&v, 50.0), 50.0);
        assert_eq!(pct_ms(&v, 99.0), 99.0);
        assert_eq!(pct_ms(&v, 100.0), 100.0);
        assert_eq!(pct_ms(&[5000], 99.0), 5.0);
    }

    #[test]
    fn pool_games_validate() {
        use prost::Message;
        let pool = game_pool(4, 4, 3, true).unwrap();
        assert_eq!(pool.len(), 4);
        assert!(pool.iter().all(|g| g.encoded_len() > 100));
    }
}
