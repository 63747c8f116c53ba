//! The distributed pipeline as real processes on loopback: a coordinator and two workers, one
//! worker killed with SIGKILL mid-game, the coordinator killed with SIGKILL and restarted on the
//! same port and data directory, the surviving worker reconnecting by itself. Then every game
//! is counted in the Parquet files: none lost, none duplicated.
//!
//! Every wait is bounded; every child is killed when the test fails (see [`Cluster`]'s `Drop`),
//! and the tails of their logs are printed.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::RowAccessor;
use tonic::service::Interceptor;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};
use zeroplay_proto::v1 as pb;
use zeroplay_proto::v1::coordinator_client::CoordinatorClient;

/// Positions the coordinator draws (`leases.max_leases`): the run's known end.
const LEASES: u64 = 48;
const WORKER_TOKEN: &str = "worker-token-distributed-test";
const TRAINER_TOKEN: &str = "trainer-token-distributed-test";
const ADMIN_TOKEN: &str = "admin-token-distributed-test";

/// Adds the admin token to every call.
#[derive(Clone)]
struct Admin(tonic::metadata::MetadataValue<tonic::metadata::Ascii>);

impl Interceptor for Admin {
    fn call(&mut self, mut req: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        req.metadata_mut().insert("authorization", self.0.clone());
        Ok(req)
    }
}

/// The child processes, their logs, and a status client. Dropping it kills every child still
/// running (and, while panicking, prints the tails of their logs).
struct Cluster {
    dir: PathBuf,
    children: Vec<(String, Child)>,
    rt: tokio::runtime::Runtime,
    client: CoordinatorClient<InterceptedService<Channel, Admin>>,
}

impl Cluster {
    fn new(dir: &Path, port: u16) -> Cluster {
        // A runtime thread of its own keeps the client's HTTP/2 connection answered between
        // calls: the coordinator's graceful shutdown waits for every connected client to
        // acknowledge it, and would wait forever for a connection nobody polls.
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let channel = {
            let _in_runtime = rt.enter();
            Endpoint::from_shared(format!("http://127.0.0.1:{port}"))
                .unwrap()
                .connect_timeout(Duration::from_millis(500))
                .timeout(Duration::from_secs(2))
                .connect_lazy()
        };
        let token = format!("Bearer {ADMIN_TOKEN}").parse().unwrap();
        std::fs::create_dir_all(dir.join("logs")).unwrap();
        Cluster {
            dir: dir.to_path_buf(),
            children: Vec::new(),
            rt,
            client: CoordinatorClient::with_interceptor(channel, Admin(token)),
        }
    }

    fn log(&self, name: &str, ext: &str) -> PathBuf {
        self.dir.join("logs").join(format!("{name}.{ext}"))
    }

    /// Starts `zeroplay <args>` as `name`, stdout and stderr to `logs/<name>.{out,err}`.
    fn spawn(&mut self, name: &str, args: &[&str]) {
        let child = Command::new(env!("CARGO_BIN_EXE_zeroplay"))
            .args(args)
            .env("RUST_LOG", "info")
            .env("NO_COLOR", "1")
            .env_remove("ZEROPLAY_WORKER_TOKEN")
            .stdin(Stdio::null())
            .stdout(File::create(self.log(name, "out")).unwrap())
            .stderr(File::create(self.log(name, "err")).unwrap())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        self.children.push((name.to_string(), child));
    }

    fn child(&mut self, name: &str) -> &mut Child {
        &mut self.children.iter_mut().find(|(n, _)| n == name).unwrap_or_else(|| panic!("no child {name}")).1
    }

    /// SIGKILL, then reap.
    fn kill9(&mut self, name: &str) {
        let c = self.child(name);
        c.kill().unwrap();
        c.wait().unwrap();
    }

    /// SIGTERM, then wait (bounded) for the exit.
    fn terminate(&mut self, name: &str, limit: Duration) -> ExitStatus {
        let pid = self.child(name).id();
        let ok = Command::new("kill").args(["-TERM", &pid.to_string()]).status().unwrap();
        assert!(ok.success(), "kill -TERM {pid} ({name}) failed");
        let start = Instant::now();
        loop {
            if let Some(s) = self.child(name).try_wait().unwrap() {
                return s;
            }
            assert!(start.elapsed() < limit, "{name} did not exit within {limit:?} of SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Panics if any of `names` has exited.
    fn assert_running(&mut self, names: &[&str]) {
        for name in names {
            if let Some(s) = self.child(name).try_wait().unwrap() {
                panic!("{name} exited unexpectedly: {s}");
            }
        }
    }

    fn status(&mut self) -> Option<pb::StatusResponse> {
        let Cluster { rt, client, .. } = self;
        rt.block_on(async {
            let r = tokio::time::timeout(Duration::from_secs(3), client.status(pb::StatusRequest {})).await;
            r.ok()?.ok().map(|r| r.into_inner())
        })
    }

    /// Polls the coordinator's status until `done` holds; panics after `limit` or if one of
    /// `running` exits.
    fn wait_for(
        &mut self,
        what: &str,
        limit: Duration,
        running: &[&str],
        done: impl Fn(&pb::StatusResponse) -> bool,
    ) -> pb::StatusResponse {
        let start = Instant::now();
        let mut last = None;
        loop {
            self.assert_running(running);
            if let Some(s) = self.status() {
                if done(&s) {
                    return s;
                }
                last = Some(s);
            }
            assert!(
                start.elapsed() < limit,
                "timed out after {limit:?} waiting for {what}; last status: {last:?}"
            );
            std::thread::sleep(Duration::from_millis(40));
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for (_, c) in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        if std::thread::panicking() {
            for (name, _) in &self.children {
                for ext in ["err", "out"] {
                    let text = std::fs::read_to_string(self.log(name, ext)).unwrap_or_default();
                    let lines: Vec<&str> = text.lines().collect();
                    let tail = lines[lines.len().saturating_sub(25)..].join("\n");
                    eprintln!("---- {name}.{ext} (last {} lines)\n{tail}", lines.len().min(25));
                }
            }
        }
    }
}

/// A port that was free a moment ago.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn coordinator_config(port: u16, data_dir: &Path) -> String {
    let data_dir = serde_json::to_string(data_dir.to_str().unwrap()).unwrap();
    format!(
        r#"listen = "127.0.0.1:{port}"
data_dir = {data_dir}
seed = 11

[auth]
worker_token = "{WORKER_TOKEN}"
trainer_token = "{TRAINER_TOKEN}"
admin_token = "{ADMIN_TOKEN}"

[leases]
ttl_ms = 2000
heartbeat_interval_ms = 300
max_per_request = 4
max_leases = {LEASES}

[parquet]
rotate_seconds = 1

[games.battlenumber.settings]
# About 0.1 s a game on one core: slow enough that the kills land mid-run.
full_sims = 300
fast_sims = 75
"#
    )
}

/// What the Parquet files hold.
struct Counted {
    files: usize,
    games: usize,
    rows: u64,
}

/// Reads every Parquet file in `games_dir`: no temporary files, each game in exactly one file,
/// its plies 0..len without gaps or repeats, the schema version stamped.
fn count_parquet(games_dir: &Path) -> Counted {
    let mut names: Vec<String> = std::fs::read_dir(games_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let leftovers: Vec<&String> = names.iter().filter(|n| !n.ends_with(".parquet")).collect();
    assert!(
        leftovers.is_empty(),
        "files other than *.parquet left in {}: {leftovers:?}",
        games_dir.display()
    );
    let mut plies: HashMap<String, Vec<u32>> = HashMap::new();
    let mut home: HashMap<String, String> = HashMap::new();
    let mut rows = 0u64;
    for name in &names {
        let reader = SerializedFileReader::new(File::open(games_dir.join(name)).unwrap())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let meta = reader.metadata().file_metadata();
        let kv: BTreeMap<&str, &str> = meta
            .key_value_metadata()
            .into_iter()
            .flatten()
            .map(|kv| (kv.key.as_str(), kv.value.as_deref().unwrap_or("")))
            .collect();
        assert_eq!(kv.get("zeroplay.schema_version"), Some(&"1"), "{name}: metadata {kv:?}");
        let fields = meta.schema().get_fields();
        let col = |c: &str| {
            fields.iter().position(|f| f.name() == c).unwrap_or_else(|| panic!("{name}: no column {c}"))
        };
        let (id_col, ply_col) = (col("game_id"), col("ply"));
        for row in reader.get_row_iter(None).unwrap() {
            let row = row.unwrap_or_else(|e| panic!("{name}: {e}"));
            let id = row.get_string(id_col).unwrap().clone();
            let ply = row.get_uint(ply_col).unwrap();
            rows += 1;
            let first = home.entry(id.clone()).or_insert_with(|| name.clone());
            assert_eq!(first, name, "game {id} has rows in two files");
            plies.entry(id).or_default().push(ply);
        }
    }
    for (id, p) in &mut plies {
        p.sort_unstable();
        let expected: Vec<u32> = (0..p.len() as u32).collect();
        assert_eq!(*p, expected, "game {id}: plies are not 0..{} exactly once each", p.len());
    }
    Counted { files: names.len(), games: plies.len(), rows }
}

fn spooled(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.map(|e| e.unwrap().path()).filter(|p| p.to_string_lossy().contains(".pb")).collect::<Vec<_>>()
        })
        .unwrap_or_default()
}

#[test]
fn kill_a_worker_and_restart_the_coordinator_then_count_every_game_once() {
    let started = Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let data_dir = tmp.path().join("data");
    let port = free_port();
    let config = tmp.path().join("coordinator.toml");
    std::fs::write(&config, coordinator_config(port, &data_dir)).unwrap();
    let config = config.to_str().unwrap().to_string();
    let url = format!("http://127.0.0.1:{port}");
    let spool_a = tmp.path().join("spool-a");
    let spool_b = tmp.path().join("spool-b");
    let mut c = Cluster::new(tmp.path(), port);
    let long = Duration::from_secs(30);

    c.spawn("coordinator-1", &["coordinator", "--config", &config]);
    c.wait_for("the coordinator to answer", long, &["coordinator-1"], |_| true);
    for (name, spool) in [("worker-a", &spool_a), ("worker-b", &spool_b)] {
        let spool = spool.to_str().unwrap();
        let args =
            ["worker", "--coordinator", &url, "--token", WORKER_TOKEN, "--slots", "1", "--spool", spool];
        c.spawn(name, &[&args[..], &["--name", name]].concat());
    }
    let all = ["coordinator-1", "worker-a", "worker-b"];
    c.wait_for("both workers to register", long, &all, |s| s.workers_alive == 2);

    // Kill worker A mid-game once a few games are stored; its leases must expire.
    let s = c.wait_for("4 stored games", long, &all, |s| s.games_stored >= 4);
    c.kill9("worker-a");
    let killed_a_at = s.games_stored;
    let running = ["coordinator-1", "worker-b"];
    let s = c.wait_for("worker A's leases to expire", long, &running, |s| s.leases_expired >= 1);
    let expired = s.leases_expired;

    // Kill the coordinator mid-run; restart it on the same port and data directory.
    let before_crash = c.status().expect("status before the crash");
    assert!(
        before_crash.leases_drawn < LEASES || before_crash.leases_active + before_crash.leases_queued > 0,
        "the run finished before the coordinator could be killed (games too fast?): {before_crash:?}"
    );
    c.kill9("coordinator-1");
    c.spawn("coordinator-2", &["coordinator", "--config", &config]);
    let running = ["coordinator-2", "worker-b"];
    let s = c.wait_for("the restarted coordinator to answer", long, &running, |_| true);
    assert!(
        s.games_stored >= before_crash.games_stored,
        "acknowledged games lost in the crash: {} before, {} after",
        before_crash.games_stored,
        s.games_stored
    );
    c.wait_for("worker B to register again", long, &running, |s| s.workers_alive >= 1);

    // Every lease finished: the killed worker's positions were played by the survivor.
    let end = c.wait_for("every lease to finish", Duration::from_secs(90), &running, |s| {
        s.leases_drawn == LEASES && s.leases_active == 0 && s.leases_queued == 0
    });
    let worker_exit = c.terminate("worker-b", Duration::from_secs(20));
    assert!(worker_exit.success(), "worker B exited with {worker_exit}");
    let last = c.status().expect("status after the worker stopped");
    assert!(last.games_stored >= end.games_stored);
    assert_eq!(last.rejected_invalid, 0, "games refused as invalid: {last:?}");
    let coord_exit = c.terminate("coordinator-2", Duration::from_secs(30));
    assert!(coord_exit.success(), "coordinator exited with {coord_exit}");

    let counted = count_parquet(&data_dir.join("games"));
    assert!(last.games_stored >= LEASES, "{} games stored for {LEASES} leases", last.games_stored);
    assert_eq!(counted.games as u64, last.games_stored, "distinct games in Parquet vs games acknowledged");
    assert_eq!(counted.rows, last.positions_stored, "rows in Parquet vs positions acknowledged");
    let left = spooled(&spool_b);
    assert!(left.is_empty(), "worker B's spool still holds {left:?}");
    let rejected = spooled(&spool_b.join("rejected"));
    assert!(rejected.is_empty(), "worker B had games refused: {rejected:?}");
    let report = std::fs::read_to_string(c.log("worker-b", "out")).unwrap();
    let reregistered =
        std::fs::read_to_string(c.log("worker-b", "err")).unwrap().contains("registered again");
    // Informational: acknowledged games the crash left in the write-ahead staging table.
    let recovered = std::fs::read_to_string(c.log("coordinator-2", "err")).unwrap();
    let staged_at_restart = recovered
        .lines()
        .find(|l| l.contains("state recovered"))
        .and_then(|l| l.split_whitespace().find_map(|w| w.strip_prefix("staged=")))
        .unwrap_or("?")
        .to_string();

    eprintln!(
        "distributed: {LEASES} leases -> {} games ({} positions) in {} Parquet files; \
         worker A killed at {killed_a_at} games, {expired} leases expired; \
         coordinator killed at {} games ({staged_at_restart} staged, not yet in Parquet); \
         worker B re-registered: {reregistered}; duplicates refused: {}; worker B report: {}; {:.1} s",
        last.games_stored,
        last.positions_stored,
        counted.files,
        before_crash.games_stored,
        last.rejected_duplicate,
        report.trim(),
        started.elapsed().as_secs_f64()
    );
}
