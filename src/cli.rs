//! Command-line arguments.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use engine::GameKind;

pub use crate::arena_cmd::ArenaArgs;
use crate::args::game_kind;
pub use crate::args::{SeatArg, StorageArgs};

/// zeroplay — self-play, search and training for TriGolden (頂鑫棋), Battle Number (拚數棋)
/// and Banqi (暗棋).
///
/// Agents (arena, play) are named by spec strings:
///   random                          a uniformly random legal click
///   mcts:sims=800,eval=rollout      MCTS, 800 simulations per turn, random-playout leaves
///                                   (the user's own AI)
///   mcts:time=200ms,eval=uniform    MCTS with a time budget per turn, uniform leaves
///   mcts:time=200ms,eval=net,model=runs/local/trainer/models/best.safetensors,batch=8
///                                   MCTS with a trained network at the leaves
///   trigolden-user:time=500ms       the user's own TriGolden AI, as the user wrote it
///   trigolden-lite:time=500ms       a cheap simplification of it (formerly trigolden-seed)
///
/// MCTS keys: sims, time (200ms, 1.5s), eval (rollout|uniform|net), playouts, model (a
/// model file, for eval=net), mix (margin share of the network's value, default 0.5),
/// cpuct, fpu, batch (leaves per evaluation), scale (score scale of the leaf value, default
/// 3), lambda (share of a random playout in the network's leaf value), knowledge (share of
/// the root's prior mass put on the game's own AI's candidate moves; TriGolden has them).
#[derive(Debug, Parser)]
#[command(name = "zeroplay", version, about, long_about, verbatim_doc_comment, max_term_width = 100)]
pub struct Cli {
    /// Log more (debug level). `RUST_LOG` overrides.
    #[arg(short, long, global = true)]
    pub verbose: bool,

    /// Log format on stderr: text (lines) or json (one object per event, for log collectors).
    #[arg(long, global = true, env = "ZEROPLAY_LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: crate::logging::LogFormat,

    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The command line as clap should read it: `zeroplay help --help` (or `-h`) asks what `help`
/// does, which clap's built-in `help` subcommand refuses (it takes only subcommand names), so
/// it is read as `zeroplay --help`, whose list explains `help`.
pub fn normalize_args<I: IntoIterator<Item = std::ffi::OsString>>(args: I) -> Vec<std::ffi::OsString> {
    let mut v: Vec<std::ffi::OsString> = args.into_iter().collect();
    let asks_help = |a: &std::ffi::OsString| a == "--help" || a == "-h";
    if v.len() >= 3 && v[1] == "help" && v[2..].iter().any(asks_help) {
        v.truncate(1);
        v.push("--help".into());
    }
    v
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Play side-swapped matches between two agents, in parallel over the cores, and report
    /// wins/draws/losses, points and the Elo difference with its 95% interval.
    ///
    /// Example: zeroplay arena -a mcts:sims=800,eval=rollout -b random -n 20
    Arena(ArenaArgs),
    /// Count the distinct legal sequences of complete turns from the start, per depth, so other
    /// implementations of the rules can be checked against ours.
    ///
    /// Example: zeroplay perft battlenumber 4
    Perft(PerftArgs),
    /// Draw a position as SVG: replay a game file and draw the board it reaches (TriGolden:
    /// pieces coloured by owner and numbered, the last turn outlined, braced points marked,
    /// the scores; Battle Number and Banqi: the board as the play server draws it).
    ///
    /// The game file lists the actions from the start, separated by spaces or newlines (`#`
    /// starts a comment), in the notation `zeroplay arena --out DIR` saves its games in
    /// (DIR/games/*.txt). TriGolden: `open:A` for the opening piece, `0.1:B'2` for a piece
    /// on piece 0's edge 1, shape B mirrored, by its own edge 2 (pieces are numbered from 0).
    /// Battle Number: one click each (`d3`, `S1r0`). Banqi: `e1e2`, a flip `f0f0` followed by
    /// the piece it reveals, `=G`.
    ///
    /// Example: zeroplay render trigolden runs/arena-1/games/match-001-game-1.txt -o board.svg
    Render(RenderArgs),
    /// List every agent spec (`random`, `mcts`, `trigolden-user`, `trigolden-lite`,
    /// `banqi-ab`) with its keys, their values, defaults and what they do: the same tables
    /// the spec parser reads (docs/agents.md is `--markdown`).
    ///
    /// Example: zeroplay agents banqi-ab
    Agents(AgentsArgs),
    /// List the search settings a config file's tables take (`[selfplay]`, `[leaf]`,
    /// `[gate]`) with their forms, defaults and what they do: the same declarations the config
    /// reader and the `mcts:` spec read (docs/settings.md is `--markdown`).
    ///
    /// Example: zeroplay settings leaf
    Settings(SettingsArgs),
    /// Play an agent in the terminal.
    ///
    /// Example: zeroplay play battlenumber --agent mcts:time=1s,eval=rollout
    Play(PlayArgs),
    /// Run the whole self-play loop on this machine: a coordinator and a worker in one
    /// process, data under runs/<name>/, with live progress.
    ///
    /// Example: zeroplay local --game battlenumber --games 200
    Local(LocalArgs),
    /// Run the coordinator (gRPC): leases positions, validates and stores games as Parquet.
    ///
    /// Example: zeroplay coordinator --config configs/coordinator.toml
    Coordinator(CoordinatorArgs),
    /// Serve the web client and its JSON API: people play Battle Number, TriGolden and Banqi
    /// against the best model in a browser. The model comes from a coordinator (followed as workers
    /// follow it) or a model file (reloaded when it changes); without one, the AI is the
    /// user's rollout MCTS.
    ///
    /// Example: zeroplay serve --model runs/local/trainer/models/best.safetensors
    Serve(ServeArgs),
    /// Measure: `ingest` (coordinator games/s with simulated workers), `worker` (a real
    /// worker's overhead outside game play), `net` (training and inference speed of the
    /// network, MCTS simulations/s), `serve` (the play server under load), `depth`
    /// (`banqi-ab`'s depth by phase) and `checks` (how far honest and forged stored moves lie
    /// from a check). Figures are in docs/benchmarks.md.
    ///
    /// Example: zeroplay bench ingest --workers 8,64,512
    Bench(crate::bench_cmd::BenchArgs),
    /// Train the value/policy network on the coordinator's Parquet files, in rounds: train,
    /// export a candidate, gate it against the best model, publish it when promoted. Models,
    /// checkpoints, ratings.json and ratings.svg go to the run directory.
    ///
    /// Example: zeroplay train --config configs/train.toml --coordinator http://127.0.0.1:50051
    Train(TrainArgs),
    /// Export a model file for other tools: the weights as safetensors (with the metadata),
    /// a JSON description of every tensor, and a Markdown note on the input encoding.
    ///
    /// Example: zeroplay export runs/local/trainer/models/best.safetensors --out exported/
    Export(ExportArgs),
    /// Speak the line protocol of external Banqi match tools on stdin/stdout (UCI's shape):
    /// `uci`, `isready`, `ucinewgame`, `position fen <position string> [moves …]`,
    /// `go movetime <ms>` / `go nodes <n>` → `bestmove e1e2` (a flip is `f0f0`), `quit`.
    ///
    /// Example: zeroplay uci --game banqi --model runs/banqi/trainer/models/best.safetensors
    Uci(UciArgs),
    /// Play an external Banqi engine (any command speaking `zeroplay uci`'s protocol) against
    /// one of zeroplay's agents: side-swapped games on shared seeded deals, the move time
    /// enforced with a margin (an illegal move, garbage, silence or a crash forfeits the
    /// game), game records, and W/D/L, points and Elo with its 95% interval.
    ///
    /// Example: zeroplay match --engine "zeroplay uci --game banqi --search mcts" -n 10 --movetime 300
    Match(crate::match_cmd::MatchArgs),
    /// Run a self-play worker against a coordinator.
    ///
    /// Example: zeroplay worker --coordinator http://10.0.0.5:50051 --token $ZEROPLAY_WORKER_TOKEN
    Worker(WorkerArgs),
    /// Diagnose a model on a run's games: each head's loss on the games it trained on and on
    /// held-out games (the trainer's own split), on the oldest and the newest positions, the
    /// value's calibration by game phase (expected score predicted against the result) and how
    /// often the policy's favourite is the search's most-visited move. Prints a table and
    /// draws the reliability diagrams as SVG.
    ///
    /// Example: zeroplay diagnose --run runs/local
    Diagnose(DiagnoseArgs),
    /// Judge a Banqi arena's drawn games with the endgame tables (up to 5 pieces, none face
    /// down): why each was drawn (repetition or the 60-ply rule) and which passed through a
    /// position the tables hold as won, with the agent that let the win go. Prints a table and
    /// writes draws.json next to the games.
    ///
    /// Example: zeroplay arena --game banqi -a banqi-ab:time=100ms -b banqi-ab:time=100ms,flip_depth=2,rep=0,probe=0,cpc=0 -n 20 --out runs/arena-bq && zeroplay draws runs/arena-bq
    Draws(crate::draws_cmd::DrawsArgs),
    /// What self-play tells the game's designer: from a run's Parquet store, the first
    /// player's score and win rate with 95% intervals (overall, by model version and by search
    /// budget), margins, game lengths, how games end, what decides them per game, and rule
    /// option sets side by side. Writes report.html (SVG plots, English and Chinese) and
    /// report.json, and prints the verdicts.
    ///
    /// Example: zeroplay report --run runs/local
    Report(crate::report_cmd::ReportArgs),
    /// Measure a run's strength as docs/benchmarks.md does: its best model against the game's
    /// reference opponent (Battle Number, Banqi: the user's rollout MCTS at 100 ms a move;
    /// TriGolden: trigolden-user at 500 ms), side-swapped matches from the documented seeds and
    /// openings, with the network alone at the leaves and with the served mixed leaf. Prints
    /// the rows of the docs' tables and the arena commands that reproduce them.
    ///
    /// Example: zeroplay strength --run runs/local
    Strength(StrengthArgs),
    /// Draw a learning curve: run `zeroplay local` for a stated time on a stated seed, keep
    /// the best model at fixed minutes, then (with the cores to itself) measure each against
    /// the game's reference opponent at equal time per move with the network alone at the
    /// leaves (lambda=0, no knowledge priors), as `strength` does. Prints a table and writes
    /// curve.json and curve.svg (Elo with its 95% interval against minutes and against games)
    /// to runs/<name>/curve/.
    ///
    /// Example: zeroplay curve --game battlenumber --name bn-curve --at 10,20,30 --seed 7
    Curve(CurveArgs),
    /// Tune banqi-ab's evaluation weights by SPSA: every step plays a side-swapped pair of
    /// games between the weights perturbed up and down (at the base spec's node budget) and
    /// moves the weights by the result. Writes every step (spsa.csv), a plot (spsa.svg) and
    /// the tuned spec (tuned.txt), and prints the arena command that measures the gain.
    ///
    /// Example: zeroplay tune --pairs 4000 --minutes 30 -o runs/tune-banqi
    Tune(crate::tune_cmd::TuneArgs),
    /// Ask a zeroplay process's health endpoint whether it is ready (or alive): exit status 0
    /// on HTTP 200, 1 otherwise, with the answer on stdout. For container health checks in
    /// images without curl.
    ///
    /// Example: zeroplay probe 127.0.0.1:9090 --path /readyz
    Probe(ProbeArgs),
}

/// `zeroplay probe`.
#[derive(Debug, Args)]
pub struct ProbeArgs {
    /// Address of the endpoint, host:port (a name is resolved).
    pub addr: String,
    /// Path to ask: /readyz (ready for traffic), /healthz (alive) or /metrics.
    #[arg(long, default_value = "/readyz")]
    pub path: String,
}

/// `zeroplay local`.
#[derive(Debug, Args)]
pub struct LocalArgs {
    /// Coordinator configuration (TOML) to start from; see configs/coordinator.toml. Its
    /// listen address, data directory and tokens are replaced by local ones.
    #[arg(short, long)]
    pub config: Option<PathBuf>,
    /// The game to play.
    #[arg(short, long, value_parser = game_kind(), default_value_t = GameKind::DEFAULT)]
    pub game: GameKind,
    /// Run name: data goes to runs/<name>/.
    #[arg(long, default_value = "local")]
    pub name: String,
    /// Stop after this many games are stored (default: run until Ctrl-C).
    #[arg(long)]
    pub games: Option<u64>,
    /// Games played at once (0: one per core).
    #[arg(long, default_value_t = 0)]
    pub slots: usize,
    /// Simulations per full search (overrides the config).
    #[arg(long)]
    pub sims: Option<u32>,
    /// Trainer configuration (TOML); see configs/train.toml. Its data and run directories are
    /// replaced by this run's.
    #[arg(long)]
    pub train_config: Option<PathBuf>,
    /// Self-play only: no trainer, no network.
    #[arg(long)]
    pub no_train: bool,
    /// Stop after this many minutes (default: run until Ctrl-C or --games).
    #[arg(long)]
    pub minutes: Option<f64>,
    /// Trainer backend: cpu, or cuda / wgpu in a binary built with those features.
    #[arg(long, default_value = "cpu")]
    pub device: String,
    /// The run's seed (overrides the coordinator's `seed` and the trainer's `[train]`,
    /// `[gate]` and `[rating]` seeds, which are derived from it): two runs with the same seed
    /// lease the same positions with the same game seeds.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Copy the best model at these minutes of the run (comma-separated) to
    /// runs/<name>/curve/best-at-<M>min.safetensors, with the games stored by then in
    /// runs/<name>/curve/snapshots.jsonl (what `zeroplay curve` measures); a run that stops
    /// earlier takes the rest once, at the minute it stopped.
    #[arg(long, value_delimiter = ',')]
    pub snapshot_at: Vec<f64>,
    /// After the run, the best model plays the game's reference opponent (the user's AI;
    /// TriGolden: `trigolden-user`) at equal time per move with the network alone at the
    /// leaves (`lambda=0`, no knowledge priors), in this many side-swapped matches: the
    /// strength that holds at play time, which the models table (measured at the gate's
    /// budget) does not show. Written to runs/<name>/trainer/play-time.json. 0 skips it;
    /// `zeroplay strength --run runs/<name>` measures more matches.
    #[arg(long, default_value_t = 20)]
    pub measure_matches: u32,
    /// Milliseconds per move for both sides in that measurement (default: the game's
    /// protocol, as `strength`: 100; TriGolden 500).
    #[arg(long)]
    pub measure_ms: Option<u32>,
    /// The game's rule options (each [decision] of its rules file), KEY=VALUE, comma-separated,
    /// e.g. `--options scoring=trigolden` for TriGolden: they replace those keys of the
    /// config's [options.<game>] table. Two runs under two option sets are compared side by
    /// side by `zeroplay report --data-dir runs/A/games --data-dir runs/B/games`.
    #[arg(long, value_delimiter = ',')]
    pub options: Vec<String>,
    /// Do not write the balance report at the end of the run (runs/<name>/report).
    #[arg(long)]
    pub no_report: bool,
    /// Start a new run from this model (a file, or `builtin` for the game's built-in one)
    /// instead of from nothing: it is published as the run's first best model (version 1),
    /// so self-play and a `model=served` teacher use it from the first game, candidates are
    /// gated against it, and training goes on from its weights. The models table then rates
    /// rounds over it. A run that already has a best model goes on from that one instead.
    #[arg(long, value_name = "FILE|builtin")]
    pub init_model: Option<PathBuf>,
}

/// `zeroplay curve`.
#[derive(Debug, Args)]
pub struct CurveArgs {
    /// The game.
    #[arg(short, long, value_parser = game_kind(), default_value_t = GameKind::DEFAULT)]
    pub game: GameKind,
    /// Run name: the run goes to runs/<name>/, the curve to runs/<name>/curve/.
    #[arg(long, default_value = "curve")]
    pub name: String,
    /// Minutes of the run at which the best model is measured (comma-separated); the run
    /// stops at the last.
    #[arg(long, value_delimiter = ',', default_value = "10,20,30")]
    pub at: Vec<f64>,
    /// The run's seed (`zeroplay local --seed`).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Coordinator configuration for the run (default: `local`'s embedded one).
    #[arg(short, long)]
    pub config: Option<PathBuf>,
    /// Trainer configuration for the run (default: `local`'s embedded one).
    #[arg(long)]
    pub train_config: Option<PathBuf>,
    /// Side-swapped matches per point.
    #[arg(short = 'n', long, default_value_t = 100)]
    pub matches: u32,
    /// Seed of the measuring arenas' openings and agents.
    #[arg(long, default_value_t = 2026)]
    pub match_seed: u64,
    /// Matches played at once while measuring.
    #[arg(short = 'j', long, default_value_t = 2)]
    pub threads: usize,
    /// Our agent's milliseconds per move (default: the game's protocol, as `strength`).
    #[arg(long)]
    pub time_ms: Option<u32>,
    /// The opponent's milliseconds per move (default: the game's protocol).
    #[arg(long)]
    pub opponent_time_ms: Option<u32>,
    /// Measure the snapshots an earlier run left in runs/<name>/curve/ without running again.
    #[arg(long)]
    pub measure_only: bool,
    /// Redraw curve.svg (with --compare) from runs/<name>/curve/curve.json and print the
    /// table, measuring nothing.
    #[arg(long, conflicts_with = "measure_only")]
    pub plot_only: bool,
    /// Earlier curves to draw beside this one in curve.svg (run names, comma-separated; each
    /// read from runs/<name>/curve/curve.json), e.g. the current defaults' curve.
    #[arg(long, value_delimiter = ',')]
    pub compare: Vec<String>,
}

/// `zeroplay train`.
#[derive(Debug, Args)]
pub struct TrainArgs {
    /// Configuration file (TOML); see configs/train.toml.
    #[arg(short, long)]
    pub config: Option<PathBuf>,
    /// Coordinator to publish promoted models to (none: keep them in the run directory).
    #[arg(long)]
    pub coordinator: Option<String>,
    /// The trainer role's bearer token (or set ZEROPLAY_TRAINER_TOKEN; its value is never
    /// printed).
    #[arg(
        long,
        env = "ZEROPLAY_TRAINER_TOKEN",
        hide_env_values = true,
        default_value = "change-me-trainer-token"
    )]
    pub token: String,
    /// Directory of Parquet files (overrides the config).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Run directory (overrides the config).
    #[arg(long)]
    pub run_dir: Option<PathBuf>,
    /// Stop after this many rounds (overrides the config).
    #[arg(long)]
    pub rounds: Option<u64>,
    /// Backend: cpu, or cuda / wgpu in a binary built with those features.
    #[arg(long, default_value = "cpu")]
    pub device: String,
    /// Serve /metrics (Prometheus: rounds, losses, samples/s, gating, best model version),
    /// /healthz and /readyz over HTTP on this address, e.g. 0.0.0.0:9092.
    #[arg(long)]
    pub metrics_listen: Option<String>,
    /// Object storage (`--storage-url` and friends).
    #[command(flatten)]
    pub storage: StorageArgs,
}

/// `zeroplay diagnose`.
#[derive(Debug, Args)]
pub struct DiagnoseArgs {
    /// A `zeroplay local` run directory (runs/NAME): its best model, its games and its
    /// trainer's settings.
    #[arg(long)]
    pub run: Option<PathBuf>,
    /// The model file (default: the run's trainer/models/best.safetensors).
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// The directory of Parquet games (default: the run's games/).
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Read up to this many of the newest positions.
    #[arg(long, default_value_t = 200_000)]
    pub positions: usize,
    /// Positions diagnosed per group (evenly spaced).
    #[arg(long, default_value_t = 8_192)]
    pub sample: usize,
    /// Where the SVG goes (default: the run's trainer/diagnose.svg, else ./diagnose.svg).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// `zeroplay strength`.
#[derive(Debug, Args)]
pub struct StrengthArgs {
    /// A `zeroplay local` run directory (runs/NAME): its best model.
    #[arg(long)]
    pub run: Option<PathBuf>,
    /// The model file (default: the run's trainer/models/best.safetensors).
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Which agents, comma-separated: net (the network alone: lambda=0, no knowledge priors)
    /// and mixed (the leaf `zeroplay serve` plays) against the game's reference opponent;
    /// searcher (Banqi only: banqi-ab with the model valuing its leaves, as `serve` plays a
    /// nano model) against banqi-ab alone. Default: net and the agent `serve` plays with
    /// the model (searcher for a nano Banqi model, otherwise mixed).
    #[arg(long, value_delimiter = ',')]
    pub agents: Vec<String>,
    /// Side-swapped matches per agent.
    #[arg(short = 'n', long, default_value_t = 200)]
    pub matches: u32,
    /// Seed of the openings and the agents (the docs measure with 2026).
    #[arg(long, default_value_t = 2026)]
    pub seed: u64,
    /// Matches played at once.
    #[arg(short = 'j', long, default_value_t = 2)]
    pub threads: usize,
    /// Our agent's milliseconds per move (default: the game's protocol, 100 or 500).
    #[arg(long)]
    pub time_ms: Option<u32>,
    /// The opponent's milliseconds per move (default: the game's protocol).
    #[arg(long)]
    pub opponent_time_ms: Option<u32>,
}

/// `zeroplay export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The model file.
    pub model: PathBuf,
    /// Output directory.
    #[arg(long, default_value = "exported")]
    pub out: PathBuf,
}

/// `zeroplay coordinator`.
#[derive(Debug, Args)]
pub struct CoordinatorArgs {
    /// Configuration file (TOML); see configs/coordinator.toml.
    #[arg(short, long)]
    pub config: Option<PathBuf>,
    /// Address to listen on (overrides the config), e.g. 0.0.0.0:50051.
    #[arg(long)]
    pub listen: Option<String>,
    /// Run directory (overrides the config).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Serve /metrics (Prometheus), /healthz and /readyz over HTTP on this address (overrides
    /// the config's metrics_listen), e.g. 0.0.0.0:9090.
    #[arg(long)]
    pub metrics_listen: Option<String>,
    /// The workers' token (overrides [auth] worker_token; in Kubernetes, from a Secret).
    #[arg(long, env = "ZEROPLAY_WORKER_TOKEN", hide_env_values = true)]
    pub worker_token: Option<String>,
    /// The trainers' token (overrides [auth] trainer_token).
    #[arg(long, env = "ZEROPLAY_TRAINER_TOKEN", hide_env_values = true)]
    pub trainer_token: Option<String>,
    /// The administrators' token (overrides [auth] admin_token).
    #[arg(long, env = "ZEROPLAY_ADMIN_TOKEN", hide_env_values = true)]
    pub admin_token: Option<String>,
    /// Object storage (`--storage-url` and friends).
    #[command(flatten)]
    pub storage: StorageArgs,
    /// Rebuild the run directory's index from its files, then exit (the coordinator must not
    /// be running on it): every listed Parquet file is read whole and a damaged one moved to
    /// quarantine/, every complete unlisted one adopted, every move digest rebuilt, lost model
    /// entries listed again from models/. A database that does not open is moved to
    /// quarantine/ and a new one built. No game file is ever deleted.
    #[arg(long)]
    pub rebuild_index: bool,
}

/// `zeroplay serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Configuration file (TOML); see configs/serve.toml. Flags given here override it.
    #[arg(short, long)]
    pub config: Option<PathBuf>,
    /// Address to listen on, e.g. 0.0.0.0:8080 (port 0: any free port, printed at start).
    #[arg(long)]
    pub listen: Option<String>,
    /// Serve this model file to the game its metadata names (reloaded when it changes); give
    /// it once per game, e.g. `--model bn.safetensors --model banqi.safetensors`.
    #[arg(long, conflicts_with = "coordinator")]
    pub model: Vec<PathBuf>,
    /// The same as `--model` (its older spelling for a Banqi model).
    #[arg(long, hide = true)]
    pub banqi_model: Option<PathBuf>,
    /// The same as `--model` (its older spelling for a TriGolden model).
    #[arg(long, hide = true)]
    pub trigolden_model: Option<PathBuf>,
    /// Follow the best model of this coordinator, e.g. http://127.0.0.1:50051.
    #[arg(long)]
    pub coordinator: Option<String>,
    /// The balance report to serve at /report: the directory `zeroplay report` wrote (default:
    /// the report of the run a --model file comes from, runs/NAME/report).
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Token for the coordinator (or set ZEROPLAY_TOKEN).
    #[arg(long, env = "ZEROPLAY_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
}

/// `zeroplay worker`.
#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// Configuration file (TOML); see configs/worker.toml.
    #[arg(short, long)]
    pub config: Option<PathBuf>,
    /// Coordinator URL (overrides the config), e.g. http://127.0.0.1:50051.
    #[arg(long)]
    pub coordinator: Option<String>,
    /// Worker token (overrides the config; or set ZEROPLAY_WORKER_TOKEN).
    #[arg(long, env = "ZEROPLAY_WORKER_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Games played at once (0: one per core).
    #[arg(long)]
    pub slots: Option<usize>,
    /// Spool directory for games not yet acknowledged.
    #[arg(long)]
    pub spool: Option<PathBuf>,
    /// Name shown in the coordinator's logs.
    #[arg(long)]
    pub name: Option<String>,
    /// Stop after this many games are acknowledged.
    #[arg(long)]
    pub max_games: Option<u64>,
    /// Serve /metrics (Prometheus), /healthz and /readyz over HTTP on this address (overrides
    /// the config's metrics_listen), e.g. 0.0.0.0:9090.
    #[arg(long)]
    pub metrics_listen: Option<String>,
}

/// `zeroplay uci`.
#[derive(Debug, Args)]
pub struct UciArgs {
    /// The game (the protocol is Banqi's).
    #[arg(short, long, value_parser = game_kind(), default_value = "banqi")]
    pub game: GameKind,
    /// How to search: `ab` (banqi-ab: expectiminimax with endgame tables; the default without
    /// --model and with a one-layer `nano` model) or `mcts` (MCTS with chance nodes; the
    /// default with a larger model).
    #[arg(long, value_enum)]
    pub search: Option<UciSearch>,
    /// A trained model file (or `builtin`: the model built into the binary). With `ab`: its
    /// value at banqi-ab's leaves in place of the handcrafted evaluation. With `mcts`: its
    /// priors and its value mixed with a random playout (--lambda). Without one: with `ab`,
    /// the built-in model (engine/src/banqi/builtin/README.md: +95 Elo over the model before
    /// it, which was +164 over the handcrafted evaluation, at 300 ms); with `mcts`,
    /// random-playout leaves.
    #[arg(long, conflicts_with = "no_model")]
    pub model: Option<PathBuf>,
    /// With `ab`: the handcrafted evaluation, not the built-in model.
    #[arg(long)]
    pub no_model: bool,
    /// With --model: share of the random playout in each leaf value (0: the network alone).
    #[arg(long, default_value_t = 0.5, value_parser = unit_interval)]
    pub lambda: f32,
    /// Milliseconds per move when `go` gives no time or node limit.
    #[arg(long, default_value_t = 1000)]
    pub movetime: u64,
    /// Seed of the search's randomness (each `go` derives its own from it).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// `zeroplay uci --search`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum UciSearch {
    /// banqi-ab: expectiminimax with alpha-beta, chance nodes and endgame tables.
    Ab,
    /// MCTS with chance nodes (random-playout leaves, or the network with --model).
    Mcts,
}

fn unit_interval(s: &str) -> Result<f32, String> {
    let v: f32 = s.parse().map_err(|_| format!("{s:?} is not a number"))?;
    if (0.0..=1.0).contains(&v) { Ok(v) } else { Err(format!("{v} is not in [0, 1]")) }
}

/// `zeroplay agents`.
#[derive(Debug, Args)]
pub struct AgentsArgs {
    /// One family only (`banqi-ab`, `mcts`, …).
    pub name: Option<String>,
    /// Markdown tables instead of text; without a name, the whole of docs/agents.md.
    #[arg(long)]
    pub markdown: bool,
}

/// `zeroplay settings`.
#[derive(Debug, Args)]
pub struct SettingsArgs {
    /// One table only (`selfplay`, `leaf`, `gate`).
    pub table: Option<String>,
    /// Markdown tables instead of text; without a table, the whole of docs/settings.md.
    #[arg(long)]
    pub markdown: bool,
}

/// `zeroplay perft`.
#[derive(Debug, Args)]
pub struct PerftArgs {
    /// The game.
    #[arg(value_parser = game_kind())]
    pub game: GameKind,
    /// Depth in complete turns; counts are printed for every depth from 1 up to it.
    pub depth: u32,
    /// Worker threads (0: one per core).
    #[arg(short = 'j', long, default_value_t = 0)]
    pub threads: usize,
    /// TriGolden: play every turn of every sequence, the last ones too, instead of counting
    /// the last turn's legal turns without playing them (slower; it also runs scoring and the
    /// end-of-turn checks on every leaf). Battle Number and Banqi always play every turn.
    #[arg(long)]
    pub make_every_turn: bool,
}

/// `zeroplay render`.
#[derive(Debug, Args)]
pub struct RenderArgs {
    /// The game.
    #[arg(value_parser = game_kind())]
    pub game: GameKind,
    /// The game file: actions from the start (as `arena --out` saves them).
    pub file: PathBuf,
    /// Output SVG file.
    #[arg(short, long, default_value = "board.svg")]
    pub out: PathBuf,
    /// TriGolden scoring mode (TriGolden only).
    #[arg(long, value_enum, default_value = "bracer")]
    pub scoring: ScoringArg,
    /// TriGolden shape table file (default: the A/B/C set; TriGolden only).
    #[arg(long)]
    pub pieces: Option<PathBuf>,
}

/// TriGolden scoring mode, on the command line.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ScoringArg {
    /// The bracing piece's owner scores.
    Bracer,
    /// The TriGolden piece's owner scores.
    Trigolden,
    /// Only when both pieces have the same owner.
    SameOwner,
}

/// `zeroplay play`.
#[derive(Debug, Args)]
pub struct PlayArgs {
    /// The game.
    #[arg(value_parser = game_kind())]
    pub game: GameKind,
    /// Configuration file (TOML); see configs/play.toml. Flags given here override it.
    #[arg(short, long)]
    pub config: Option<PathBuf>,
    /// The agent you play (spec string).
    #[arg(long)]
    pub agent: Option<String>,
    /// Your seat in game 1 (you swap seats in game 2).
    #[arg(long, value_enum)]
    pub seat: Option<SeatArg>,
    /// Play one game instead of a two-game match.
    #[arg(long)]
    pub single: bool,
    /// Seed for the agent.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Draw without ANSI colours.
    #[arg(long)]
    pub no_color: bool,
}
