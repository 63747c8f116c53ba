//! A cluster of real `zeroplay` processes for the distributed tests: children with their logs,
//! a status client for the coordinator, and the counts that prove no game was lost or
//! duplicated (every Parquet file read back).
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

/// The workers' token.
pub const WORKER_TOKEN: &str = "worker-token-distributed-test";
/// The trainers' token.
pub const TRAINER_TOKEN: &str = "trainer-token-distributed-test";
/// The administrators' token (the status client's).
pub const ADMIN_TOKEN: &str = "admin-token-distributed-test";

/// Adds the admin token to every call.
#[derive(Clone)]
pub struct Admin(tonic::metadata::MetadataValue<tonic::metadata::Ascii>);

impl Interceptor for Admin {
    fn call(&mut self, mut req: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        req.metadata_mut().insert("authorization", self.0.clone());
        Ok(req)
    }
}

/// The child processes, their logs, and a status client. Dropping it kills every child still
/// running (and, while panicking, prints the tails of their logs).
pub struct Cluster {
    dir: PathBuf,
    children: Vec<(String, Child)>,
    env: Vec<(String, String)>,
    rt: tokio::runtime::Runtime,
    client: CoordinatorClient<InterceptedService<Channel, Admin>>,
}

impl Cluster {
    pub fn new(dir: &Path, port: u16) -> Cluster {
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
            env: Vec::new(),
            rt,
            client: CoordinatorClient::with_interceptor(channel, Admin(token)),
        }
    }

    /// Sets an environment variable for every child started from now on.
    pub fn set_env(&mut self, key: &str, value: &str) {
        self.env.push((key.to_string(), value.to_string()));
    }

    pub fn log(&self, name: &str, ext: &str) -> PathBuf {
        self.dir.join("logs").join(format!("{name}.{ext}"))
    }

    /// Starts `zeroplay <args>` as `name`, stdout and stderr to `logs/<name>.{out,err}`.
    pub fn spawn(&mut self, name: &str, args: &[&str]) {
        self.spawn_in(None, name, args);
    }

    /// [`Cluster::spawn`] inside network namespace `netns` (`ip netns exec`, which execs the
    /// binary: the child's pid is zeroplay's, so signals reach it).
    pub fn spawn_in(&mut self, netns: Option<&str>, name: &str, args: &[&str]) {
        let bin = env!("CARGO_BIN_EXE_zeroplay");
        let cmd = match netns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns, bin]);
                c
            }
            None => Command::new(bin),
        };
        self.spawn_command(cmd, name, args);
    }

    /// [`Cluster::spawn`] with the open-files limit (soft and hard) set to `nofile` (the
    /// shell execs the binary, so the child's pid is zeroplay's).
    pub fn spawn_with_nofile(&mut self, nofile: u64, name: &str, args: &[&str]) {
        let mut cmd = Command::new("sh");
        cmd.args([
            "-c",
            r#"ulimit -n "$0" && exec "$@""#,
            &nofile.to_string(),
            env!("CARGO_BIN_EXE_zeroplay"),
        ]);
        self.spawn_command(cmd, name, args);
    }

    fn spawn_command(&mut self, mut cmd: Command, name: &str, args: &[&str]) {
        let child = cmd
            .args(args)
            .env("RUST_LOG", "info")
            .env("NO_COLOR", "1")
            .env_remove("ZEROPLAY_WORKER_TOKEN")
            .env_remove("ZEROPLAY_TRAINER_TOKEN")
            .env_remove("ZEROPLAY_ADMIN_TOKEN")
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(File::create(self.log(name, "out")).unwrap())
            .stderr(File::create(self.log(name, "err")).unwrap())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        self.children.push((name.to_string(), child));
    }

    pub fn child(&mut self, name: &str) -> &mut Child {
        &mut self.children.iter_mut().find(|(n, _)| n == name).unwrap_or_else(|| panic!("no child {name}")).1
    }

    /// SIGKILL, then reap.
    pub fn kill9(&mut self, name: &str) {
        let c = self.child(name);
        c.kill().unwrap();
        c.wait().unwrap();
    }

    /// SIGTERM, then wait (bounded) for the exit.
    pub fn terminate(&mut self, name: &str, limit: Duration) -> ExitStatus {
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
    pub fn assert_running(&mut self, names: &[&str]) {
        for name in names {
            if let Some(s) = self.child(name).try_wait().unwrap() {
                panic!("{name} exited unexpectedly: {s}");
            }
        }
    }

    pub fn status(&mut self) -> Option<pb::StatusResponse> {
        let Cluster { rt, client, .. } = self;
        rt.block_on(async {
            let r = tokio::time::timeout(Duration::from_secs(3), client.status(pb::StatusRequest {})).await;
            r.ok()?.ok().map(|r| r.into_inner())
        })
    }

    /// Polls the coordinator's status until `done` holds; panics after `limit` or if one of
    /// `running` exits.
    pub fn wait_for(
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

/// The arguments of a one-slot worker called `name`, playing for the coordinator at
/// `coordinator` (a URL) with its spool in `spool`.
pub fn worker_args(coordinator: &str, spool: &Path, name: &str) -> Vec<String> {
    let spool = spool.to_str().unwrap();
    [
        "worker",
        "--coordinator",
        coordinator,
        "--token",
        WORKER_TOKEN,
        "--slots",
        "1",
        "--spool",
        spool,
        "--name",
        name,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// One series of a server's `/metrics` at `addr` (the metrics port); panics if it is missing.
pub fn metric(addr: std::net::SocketAddr, series: &str) -> f64 {
    let (code, text) = zeroplay_telemetry::http_get(addr, "/metrics").expect("/metrics answers");
    assert_eq!(code, 200);
    zeroplay_telemetry::sample(&text, series).unwrap_or_else(|| panic!("no {series} in /metrics"))
}

/// A port that was free a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A coordinator configuration for these tests: listening on `host:port`, data in
/// `data_dir`, `leases` positions in all (`leases.max_leases`, the run's known end), leases
/// that expire after 2 s without a heartbeat, Parquet files rotated every second, and games
/// of about 0.1 s on one core (slow enough that kills land mid-run).
pub fn coordinator_config(host: &str, port: u16, data_dir: &Path, leases: u64) -> String {
    let data_dir = serde_json::to_string(data_dir.to_str().unwrap()).unwrap();
    format!(
        r#"listen = "{host}:{port}"
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
max_leases = {leases}

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
pub struct Counted {
    /// Parquet files.
    pub files: usize,
    /// Distinct games.
    pub games: usize,
    /// Rows (positions).
    pub rows: u64,
}

/// Reads every Parquet file in `games_dir`: no temporary files, each game in exactly one file,
/// its plies 0..len without gaps or repeats, the schema version stamped.
pub fn count_parquet(games_dir: &Path) -> Counted {
    count_parquet_files(games_dir, false)
}

/// [`count_parquet`] while the coordinator runs: a `.tmp` file being written is passed over.
pub fn count_parquet_so_far(games_dir: &Path) -> Counted {
    count_parquet_files(games_dir, true)
}

fn count_parquet_files(games_dir: &Path, running: bool) -> Counted {
    let mut names: Vec<String> = std::fs::read_dir(games_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !(running && n.ends_with(".parquet.tmp")))
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

pub fn spooled(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.map(|e| e.unwrap().path()).filter(|p| p.to_string_lossy().contains(".pb")).collect::<Vec<_>>()
        })
        .unwrap_or_default()
}
