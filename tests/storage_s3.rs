//! Object storage against a real S3-compatible server: moto's standalone server (PyPI
//! `moto[server]`, installed by `scripts/setup-test-tools.sh`), checked with an independent
//! client (boto3 and pyarrow, `scripts/s3_tool.py`).
//!
//! - the mirror's own API: what is pushed, what is skipped, what a second pass and a restart
//!   send again, pulls byte for byte, and clear errors (no bucket, server gone) that leave no
//!   partial file;
//! - real processes: a coordinator and a worker start while the store is down (self-play goes
//!   on, the failures are logged), the store comes up and receives every Parquet file; then a
//!   trainer with an empty data directory learns from the bucket and pushes its models back.

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use common::cluster::{Cluster, coordinator_config, count_parquet, free_port, worker_args};
use zeroplay_storage::{Credentials, Job, Remote, StorageConfig, run_pass};

const KEY: &str = "zeroplay-test-key";
const SECRET: &str = "zeroplay-test-secret";

/// A moto S3 server on 127.0.0.1, killed on drop.
struct Moto {
    child: Child,
    port: u16,
}

impl Moto {
    /// Starts moto on `port` (0: any free port) and waits until it answers.
    fn start(port: u16, log: &Path) -> Moto {
        let mut child = Command::new(common::venv_tool("moto_server"))
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start moto_server");
        // Flask prints " * Running on http://127.0.0.1:PORT" once it listens.
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let log = log.to_path_buf();
        std::thread::spawn(move || {
            let mut all = String::new();
            let mut sent = false;
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                all.push_str(&line);
                all.push('\n');
                let _ = std::fs::write(&log, &all);
                if !sent && let Some(rest) = line.split("Running on http://127.0.0.1:").nth(1) {
                    let _ = tx.send(rest.trim().parse::<u16>().expect("moto's port"));
                    sent = true;
                }
            }
        });
        let port = rx.recv_timeout(Duration::from_secs(60)).expect("moto_server did not start within 60 s");
        Moto { child, port }
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `scripts/s3_tool.py ENDPOINT ARGS…` (boto3), returns its stdout.
fn s3_tool(endpoint: &str, args: &[&str]) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/s3_tool.py");
    let out = Command::new(common::python())
        .arg(script)
        .arg(endpoint)
        .args(args)
        .env("AWS_ACCESS_KEY_ID", KEY)
        .env("AWS_SECRET_ACCESS_KEY", SECRET)
        .output()
        .expect("run s3_tool.py");
    assert!(out.status.success(), "s3_tool.py {args:?} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn ls(endpoint: &str, bucket: &str, prefix: &str) -> BTreeMap<String, u64> {
    serde_json::from_str(&s3_tool(endpoint, &["ls", bucket, prefix])).unwrap()
}

fn creds() -> Credentials {
    Credentials { access_key_id: KEY.into(), secret_access_key: SECRET.into(), session_token: None }
}

fn config(endpoint: &str, url: &str) -> StorageConfig {
    StorageConfig {
        url: url.into(),
        endpoint: endpoint.into(),
        allow_http: true,
        sync_ms: 200,
        timeout_ms: 2_000,
        max_retries: 1,
        ..StorageConfig::default()
    }
}

/// Local files of `dir` with their sizes (names only).
fn local_files(dir: &Path) -> BTreeMap<String, u64> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| (e.file_name().into_string().unwrap(), e.metadata().unwrap().len()))
        .collect()
}

fn with_prefix(files: &BTreeMap<String, u64>, prefix: &str) -> BTreeMap<String, u64> {
    files.iter().map(|(k, v)| (format!("{prefix}{k}"), *v)).collect()
}

#[test]
fn the_mirror_pushes_pulls_and_fails_clearly_against_a_real_s3_server() {
    let tmp = tempfile::tempdir().unwrap();
    let moto = Moto::start(0, &tmp.path().join("moto.log"));
    let ep = moto.endpoint();
    s3_tool(&ep, &["mkbucket", "zeroplay-test"]);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let remote = Remote::open(&config(&ep, "s3://zeroplay-test/unit"), Some(&creds())).unwrap();

    let local = tmp.path().join("games");
    std::fs::create_dir_all(&local).unwrap();
    let big: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(local.join("a.parquet"), &big).unwrap();
    std::fs::write(local.join("b.parquet"), b"version one").unwrap();
    // Never mirrored: other endings, a file being written, a hidden file.
    std::fs::write(local.join("notes.txt"), b"x").unwrap();
    std::fs::write(local.join("c.parquet.tmp"), b"half").unwrap();
    std::fs::write(local.join(".d.parquet"), b"hidden").unwrap();

    let push = Job::push(&local, "games", &[".parquet"]);
    let mut sent = Default::default();
    let r = rt.block_on(run_pass(&remote, &push, &mut sent)).unwrap();
    assert_eq!((r.transferred, r.bytes, r.failed.len()), (2, 300_000 + 11, 0), "{r:?}");
    let expected: BTreeMap<String, u64> =
        [("unit/games/a.parquet".to_string(), 300_000), ("unit/games/b.parquet".to_string(), 11)].into();
    assert_eq!(ls(&ep, "zeroplay-test", "unit/"), expected, "what boto3 sees after the first push");

    // A second pass sends nothing; a changed file (same size, newer) is sent again.
    let r = rt.block_on(run_pass(&remote, &push, &mut sent)).unwrap();
    assert_eq!((r.transferred, r.up_to_date), (0, 2), "{r:?}");
    // (Its time set an hour back: the pass must notice the change itself, not by a newer time.)
    std::fs::write(local.join("b.parquet"), b"version two").unwrap();
    let earlier = SystemTime::now() - Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(local.join("b.parquet"))
        .unwrap()
        .set_modified(earlier)
        .unwrap();
    let r = rt.block_on(run_pass(&remote, &push, &mut sent)).unwrap();
    assert_eq!(r.transferred, 1, "{r:?}");
    // After a restart (nothing remembered) the store's copies are current: nothing is sent.
    let r = rt.block_on(run_pass(&remote, &push, &mut Default::default())).unwrap();
    assert_eq!((r.transferred, r.up_to_date), (0, 2), "{r:?}");

    // Pull into an empty directory: byte for byte, then nothing more to fetch.
    let copy = tmp.path().join("copy");
    let pull = Job::pull("games", &copy, &[".parquet"]);
    let r = rt.block_on(run_pass(&remote, &pull, &mut Default::default())).unwrap();
    assert_eq!((r.transferred, r.failed.len()), (2, 0), "{r:?}");
    assert_eq!(std::fs::read(copy.join("a.parquet")).unwrap(), big);
    assert_eq!(std::fs::read(copy.join("b.parquet")).unwrap(), b"version two");
    assert_eq!(local_files(&copy).len(), 2, "only the two objects, no partial file");
    let r = rt.block_on(run_pass(&remote, &pull, &mut Default::default())).unwrap();
    assert_eq!((r.transferred, r.up_to_date), (0, 2), "{r:?}");
    // boto3 reads back what the mirror wrote.
    let fetched = tmp.path().join("fetched");
    s3_tool(&ep, &["get", "zeroplay-test", "unit/games/a.parquet", fetched.to_str().unwrap()]);
    assert_eq!(std::fs::read(&fetched).unwrap(), big);

    // No such bucket: a clear error from the listing, nothing transferred.
    let missing = Remote::open(&config(&ep, "s3://no-such-bucket/x"), Some(&creds())).unwrap();
    let e = rt.block_on(run_pass(&missing, &push, &mut Default::default())).unwrap_err().to_string();
    assert!(e.contains("list") && e.contains("NoSuchBucket"), "{e}");

    // The server gone: errors within the retry budget, and no partial download left.
    drop(moto);
    let gone = tmp.path().join("gone");
    std::fs::create_dir_all(&gone).unwrap();
    let t0 = Instant::now();
    let e = rt
        .block_on(run_pass(&remote, &Job::pull("games", &gone, &[]), &mut Default::default()))
        .unwrap_err()
        .to_string();
    assert!(e.contains("list unit/games"), "{e}");
    assert!(t0.elapsed() < Duration::from_secs(30), "gave up after {:?}", t0.elapsed());
    assert!(local_files(&gone).is_empty());
    let e = rt.block_on(remote.download("games", "a.parquet", &gone.join("a.parquet"))).unwrap_err();
    assert!(e.to_string().contains("download unit/games/a.parquet"), "{e}");
    assert!(local_files(&gone).is_empty(), "a failed download left {:?}", local_files(&gone));
}

/// The trainer's config: an empty local data directory filled from the bucket.
fn train_config(data_dir: &Path, run_dir: &Path, endpoint: &str) -> String {
    let q = |p: &Path| serde_json::to_string(p.to_str().unwrap()).unwrap();
    format!(
        r#"game = "battlenumber"
data_dir = {}
run_dir = {}
min_new_positions = 1
steps_per_round = 5
poll_ms = 100
gating = false

[rating]
matches = 0

[train]
net = "tiny"
batch_size = 32

[storage]
url = "s3://zeroplay-test/run"
endpoint = "{endpoint}"
allow_http = true
sync_ms = 200
timeout_ms = 2000
max_retries = 1
"#,
        q(data_dir),
        q(run_dir)
    )
}

fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !done() {
        assert!(t0.elapsed() < limit, "timed out after {limit:?} waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn log_has(path: &Path, text: &str) -> bool {
    std::fs::read_to_string(path).is_ok_and(|s| s.contains(text))
}

#[test]
fn coordinator_and_trainer_share_games_and_models_through_s3_and_survive_its_absence() {
    const LEASES: u64 = 40;
    let tmp = tempfile::tempdir().unwrap();
    let data_dir = tmp.path().join("data");
    let games_dir = data_dir.join("games");
    let port = free_port();
    let s3_port = free_port();
    let ep = format!("http://127.0.0.1:{s3_port}");
    let storage = format!(
        "\n[storage]\nurl = \"s3://zeroplay-test/run\"\nendpoint = \"{ep}\"\nallow_http = true\nsync_ms = 200\ntimeout_ms = 2000\nmax_retries = 1\n"
    );
    let config = tmp.path().join("coordinator.toml");
    std::fs::write(&config, coordinator_config("127.0.0.1", port, &data_dir, LEASES) + &storage).unwrap();
    let config = config.to_str().unwrap().to_string();
    let mut c = Cluster::new(tmp.path(), port);
    c.set_env("AWS_ACCESS_KEY_ID", KEY);
    c.set_env("AWS_SECRET_ACCESS_KEY", SECRET);
    let long = Duration::from_secs(60);

    // The store is down at first: the coordinator starts anyway, self-play goes on, Parquet
    // files are written locally and the failed passes are logged.
    c.spawn("coordinator", &["coordinator", "--config", &config]);
    c.wait_for("the coordinator to answer", long, &["coordinator"], |_| true);
    let url = format!("http://127.0.0.1:{port}");
    let spool = tmp.path().join("spool");
    let args = worker_args(&url, &spool, "worker");
    c.spawn("worker", &args.iter().map(String::as_str).collect::<Vec<_>>());
    let all = ["coordinator", "worker"];
    c.wait_for("a Parquet file", long, &all, |s| s.parquet_files >= 1);
    let log = c.log("coordinator", "err");
    wait_until("a failed mirror pass in the log", long, || log_has(&log, "object storage pass failed"));

    // The store comes up (an empty bucket): every file reaches it.
    let moto = Moto::start(s3_port, &tmp.path().join("moto.log"));
    s3_tool(&moto.endpoint(), &["mkbucket", "zeroplay-test"]);
    wait_until("the first upload while the coordinator runs", long, || {
        !ls(&ep, "zeroplay-test", "run/games/").is_empty()
    });
    c.wait_for("every lease to finish", Duration::from_secs(120), &all, |s| {
        s.leases_drawn == LEASES && s.leases_active == 0 && s.leases_queued == 0
    });
    let exit = c.terminate("worker", Duration::from_secs(20));
    assert!(exit.success(), "worker exited with {exit}");
    let exit = c.terminate("coordinator", Duration::from_secs(30));
    assert!(exit.success(), "coordinator exited with {exit}");
    assert!(log_has(&log, "mirrored"), "the coordinator never logged an upload");

    // The bucket holds exactly the local files (the last one sent at shutdown), and pyarrow
    // reads every position from the objects.
    let local = local_files(&games_dir);
    let counted = count_parquet(&games_dir);
    assert!(
        counted.files >= 2 && counted.games as u64 >= LEASES,
        "{} files, {} games",
        counted.files,
        counted.games
    );
    assert_eq!(ls(&ep, "zeroplay-test", "run/games/"), with_prefix(&local, "run/games/"));
    let rows: BTreeMap<String, u64> =
        serde_json::from_str(&s3_tool(&ep, &["rows", "zeroplay-test", "run/games/"])).unwrap();
    assert_eq!(rows.values().sum::<u64>(), counted.rows, "rows pyarrow reads from the bucket");

    // A trainer on another "machine": an empty data directory, the games from the bucket.
    let train_data = tmp.path().join("trainer-games");
    let train_run = tmp.path().join("trainer-run");
    let train_cfg = tmp.path().join("train.toml");
    std::fs::write(&train_cfg, train_config(&train_data, &train_run, &ep)).unwrap();
    c.spawn("trainer", &["train", "--config", train_cfg.to_str().unwrap(), "--rounds", "1"]);
    let t0 = Instant::now();
    let exit = loop {
        if let Some(s) = c.child("trainer").try_wait().unwrap() {
            break s;
        }
        assert!(t0.elapsed() < Duration::from_secs(180), "the trainer did not finish its round");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(exit.success(), "trainer exited with {exit}");
    assert_eq!(local_files(&train_data), local, "the trainer's copy of the games");
    let models: PathBuf = train_run.join("models");
    let pushed = ls(&ep, "zeroplay-test", "run/trainer/");
    for name in ["candidate-0001.safetensors", "best.safetensors"] {
        let size = std::fs::metadata(models.join(name)).unwrap().len();
        assert_eq!(pushed.get(&format!("run/trainer/models/{name}")), Some(&size), "{name} in {pushed:?}");
    }
    for name in ["ratings.json", "ratings.svg", "train.toml"] {
        assert!(pushed.contains_key(&format!("run/trainer/{name}")), "{name} in {pushed:?}");
    }
    drop(moto);
}
