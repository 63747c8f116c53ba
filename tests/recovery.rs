//! Issue 45 over real processes: the run directory's database deleted, emptied, a game file
//! restored from a backup, a file truncated, the coordinator killed with SIGKILL again and
//! again — and after each, the games counted by an independent reader (pyarrow,
//! `scripts/check_parquet.py`): none lost, none stored twice, nothing deleted.
//!
//! Every wait is bounded; children are killed (their logs printed) when a test fails.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::cluster::{Cluster, coordinator_config, free_port, worker_args};

/// Files under `dir` ending in `.parquet`, sorted.
fn parquet_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "parquet")).collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// pyarrow's count of `dir`'s files: (games, rows, games repeating another's moves).
fn pyarrow_count(dir: &Path) -> (u64, u64, u64) {
    let files = parquet_files(dir);
    assert!(!files.is_empty(), "no Parquet files in {}", dir.display());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/check_parquet.py");
    let out = Command::new(common::python()).arg(script).args(&files).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "pyarrow check failed: {text}\n{}", String::from_utf8_lossy(&out.stderr));
    let field = |k: &str| -> u64 {
        text.split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{k}=")))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no {k}= in {text}"))
    };
    (field("games"), field("rows"), field("repeated_moves"))
}

struct Run {
    tmp: tempfile::TempDir,
    data: PathBuf,
    config: String,
    url: String,
    cluster: Cluster,
    starts: usize,
}

impl Run {
    fn new(leases: u64) -> Run {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        let port = free_port();
        let config = tmp.path().join("coordinator.toml");
        std::fs::write(&config, coordinator_config("127.0.0.1", port, &data, leases)).unwrap();
        let cluster = Cluster::new(tmp.path(), port);
        Run {
            config: config.to_str().unwrap().to_string(),
            url: format!("http://127.0.0.1:{port}"),
            tmp,
            data,
            cluster,
            starts: 0,
        }
    }

    /// Starts the coordinator (a new name each time, for its log) and waits for it to answer.
    fn start(&mut self) -> String {
        self.starts += 1;
        let name = format!("coordinator-{}", self.starts);
        self.cluster.spawn(&name, &["coordinator", "--config", &self.config]);
        self.cluster
            .wait_for("the coordinator to answer", Duration::from_secs(30), &[name.as_str()], |_| true);
        name
    }

    fn stop(&mut self, name: &str) {
        let exit = self.cluster.terminate(name, Duration::from_secs(30));
        assert!(exit.success(), "{name} exited with {exit}");
    }

    fn log(&self, name: &str) -> String {
        std::fs::read_to_string(self.cluster.log(name, "err")).unwrap()
    }

    fn games(&self) -> PathBuf {
        self.data.join("games")
    }

    /// A start and a clean stop; returns the status the coordinator gave and its log.
    fn start_and_stop(&mut self) -> (zeroplay_proto::v1::StatusResponse, String) {
        let name = self.start();
        let s = self.cluster.status().expect("status");
        self.stop(&name);
        (s, self.log(&name))
    }
}

#[test]
fn a_lost_emptied_or_restored_database_loses_no_game_and_deletes_no_file() {
    let leases = 24;
    let mut run = Run::new(leases);
    let first = run.start();
    let spool = run.tmp.path().join("spool");
    let args = worker_args(&run.url, &spool, "w");
    run.cluster.spawn("w", &args.iter().map(String::as_str).collect::<Vec<_>>());
    run.cluster.wait_for("every lease to finish", Duration::from_secs(120), &[first.as_str(), "w"], |s| {
        s.leases_drawn == leases && s.leases_active == 0 && s.leases_queued == 0
    });
    assert!(run.cluster.terminate("w", Duration::from_secs(20)).success());
    run.stop(&first);
    let (games, rows, repeated) = pyarrow_count(&run.games());
    assert!(games >= leases, "{games} games for {leases} leases");
    assert_eq!(repeated, 0);
    let files = parquet_files(&run.games()).len();
    let backup = run.tmp.path().join("backup");
    std::fs::create_dir_all(&backup).unwrap();
    for f in parquet_files(&run.games()) {
        std::fs::copy(&f, backup.join(f.file_name().unwrap())).unwrap();
    }
    let db = run.data.join("coordinator.redb");

    // 1. The database deleted.
    std::fs::remove_file(&db).unwrap();
    let (s, log) = run.start_and_stop();
    assert!(log.contains("rebuilding the index"), "the rebuild is logged:\n{log}");
    assert_eq!((s.games_stored, s.positions_stored, s.parquet_files), (games, rows, files as u64));
    assert_eq!(pyarrow_count(&run.games()), (games, rows, 0), "after the database was deleted");

    // 2. The database emptied (a recreated volume's file, zero bytes).
    std::fs::write(&db, b"").unwrap();
    let (s, _) = run.start_and_stop();
    assert_eq!((s.games_stored, s.parquet_files), (games, files as u64));
    assert_eq!(pyarrow_count(&run.games()), (games, rows, 0), "after the database was emptied");

    // 3. A file lost, then restored from the backup.
    let victim = parquet_files(&run.games())[0].clone();
    let name = victim.file_name().unwrap().to_owned();
    std::fs::remove_file(&victim).unwrap();
    let (_, log) = run.start_and_stop();
    assert!(log.contains("listed Parquet file is missing"), "{log}");
    std::fs::copy(backup.join(&name), &victim).unwrap();
    let (s, log) = run.start_and_stop();
    assert!(log.contains("adopted a complete Parquet file"), "{log}");
    assert_eq!((s.games_stored, s.parquet_files), (games, files as u64));
    assert_eq!(pyarrow_count(&run.games()), (games, rows, 0), "after a file was restored");

    // 4. A file truncated: moved to quarantine/, not deleted; put back whole, adopted again.
    let bytes = std::fs::read(&victim).unwrap();
    std::fs::write(&victim, &bytes[..bytes.len() / 2]).unwrap();
    let (s, log) = run.start_and_stop();
    assert!(log.contains("moved to quarantine"), "{log}");
    let quarantined = run.data.join("quarantine").join(&name);
    assert_eq!(std::fs::metadata(&quarantined).unwrap().len(), (bytes.len() / 2) as u64, "kept as it was");
    assert_eq!(s.parquet_files, files as u64 - 1);
    std::fs::copy(backup.join(&name), &victim).unwrap();
    // A second copy of a file under another name is not adopted (its games would count twice).
    std::fs::copy(backup.join(&name), run.games().join("copy-of-a-file.parquet")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_zeroplay"))
        .args(["coordinator", "--config", &run.config, "--rebuild-index"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "--rebuild-index: {said}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(said.contains(&format!("{games} games")) && said.contains("1 files adopted"), "{said}");
    assert!(said.contains("quarantine/copy-of-a-file.parquet"), "{said}");
    let (s, _) = run.start_and_stop();
    assert_eq!((s.games_stored, s.parquet_files), (games, files as u64));
    assert_eq!(pyarrow_count(&run.games()), (games, rows, 0), "after the truncated file was restored");
    assert_eq!(parquet_files(&run.data.join("quarantine")).len(), 2, "both quarantined files kept");
}

#[test]
fn repeated_kill_9_of_the_coordinator_stores_no_game_twice() {
    let leases = 90;
    let mut run = Run::new(leases);
    let mut coord = run.start();
    let mut names = Vec::new();
    for w in ["wa", "wb"] {
        let spool = run.tmp.path().join(format!("spool-{w}"));
        let args = worker_args(&run.url, &spool, w);
        run.cluster.spawn(w, &args.iter().map(String::as_str).collect::<Vec<_>>());
        names.push(w.to_string());
    }
    // Kill the coordinator six times mid-run, each time once more games are stored.
    let mut kills = 0;
    let mut at = 0;
    while kills < 6 {
        let running = [coord.as_str(), "wa", "wb"];
        let s = run.cluster.wait_for("more games", Duration::from_secs(60), &running, |s| {
            s.games_stored >= at + 6 || s.leases_drawn == leases && s.leases_active + s.leases_queued == 0
        });
        if s.leases_drawn == leases && s.leases_active + s.leases_queued == 0 {
            break;
        }
        at = s.games_stored;
        run.cluster.kill9(&coord);
        kills += 1;
        coord = run.start();
    }
    assert!(kills >= 2, "the run ended before the coordinator could be killed twice");
    let running = [coord.as_str(), "wa", "wb"];
    run.cluster.wait_for("every lease to finish", Duration::from_secs(120), &running, |s| {
        s.leases_drawn == leases && s.leases_active == 0 && s.leases_queued == 0
    });
    for w in &names {
        assert!(run.cluster.terminate(w, Duration::from_secs(20)).success());
    }
    let s = run.cluster.status().expect("status");
    run.stop(&coord);
    let (games, rows, repeated) = pyarrow_count(&run.games());
    assert_eq!((games, rows), (s.games_stored, s.positions_stored), "Parquet vs acknowledged");
    assert_eq!(repeated, 0, "games stored twice (the same moves under two ids) after {kills} kills");
    eprintln!("recovery: {kills} kill -9 of the coordinator, {games} games, 0 stored twice");
}
