//! Fault tests across hosts: real processes on test hosts made with network namespaces on this
//! machine. The coordinator runs on the host (the root namespace) with its data directory on a
//! small tmpfs; two workers run in namespaces of their own, each joined to the host by a veth
//! pair (its own link and subnet), so their traffic crosses a network interface as between
//! machines. Then, one after another, with the run going on:
//!
//! 1. worker A's link is cut mid-game (its interface goes down) and restored;
//! 2. worker B is killed (SIGKILL) and started again on its spool;
//! 3. the coordinator is killed (SIGKILL) and restarted on its data directory;
//! 4. the coordinator's disk fills up (the tmpfs), and is freed again.
//!
//! After each the run must go on; at the end every lease is finished and every game is counted
//! in the Parquet files: none lost (the coordinator stored every game a worker finished, no
//! spool holds one), none duplicated (each game in exactly one file, once).
//!
//! Needs root (network namespaces, veth, tmpfs) and iproute2's `ip`, as CI has.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::cluster::{Cluster, coordinator_config, count_parquet, count_parquet_so_far, free_port, spooled};

/// Positions the coordinator draws: the run's known end.
const LEASES: u64 = 300;

fn sh(args: &[&str]) {
    let out = Command::new(args[0]).args(&args[1..]).output().unwrap_or_else(|e| panic!("{args:?}: {e}"));
    assert!(out.status.success(), "{args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
}

/// Test hosts (network namespaces joined to the host by veth pairs) and a tmpfs, removed on drop.
struct Net {
    id: u32,
    prefix: String,
    namespaces: Vec<String>,
    mounts: Vec<PathBuf>,
}

/// One test host: its namespace, its interface there, the host's address on its link.
struct Host {
    ns: String,
    dev: String,
    gateway: String,
}

impl Net {
    fn new() -> Net {
        let uid = Command::new("id").arg("-u").output().expect("id -u");
        assert_eq!(
            String::from_utf8_lossy(&uid.stdout).trim(),
            "0",
            "the fault tests make network namespaces, veth pairs and a tmpfs: run them as root (CI does)"
        );
        assert!(
            Command::new("ip").arg("-V").output().is_ok_and(|o| o.status.success()),
            "iproute2's `ip` is needed (Debian: apt-get install iproute2)"
        );
        let id = std::process::id() % 100_000;
        Net { id, prefix: format!("10.{}", 100 + id % 100), namespaces: Vec::new(), mounts: Vec::new() }
    }

    /// Host `k` (1, 2, ...): namespace `zp<id>-<k>`, link `zp<id>h<k>` (host side) to
    /// `zp<id>w<k>` (its side), subnet `<prefix>.<k>.0/24`.
    fn host(&mut self, k: u8) -> Host {
        let ns = format!("zp{}-{k}", self.id);
        let (h, w) = (format!("zp{}h{k}", self.id), format!("zp{}w{k}", self.id));
        let (gw, me) = (format!("{}.{k}.1", self.prefix), format!("{}.{k}.2", self.prefix));
        sh(&["ip", "netns", "add", &ns]);
        self.namespaces.push(ns.clone());
        sh(&["ip", "link", "add", &h, "type", "veth", "peer", "name", &w]);
        sh(&["ip", "link", "set", &w, "netns", &ns]);
        sh(&["ip", "addr", "add", &format!("{gw}/24"), "dev", &h]);
        sh(&["ip", "link", "set", &h, "up"]);
        sh(&["ip", "netns", "exec", &ns, "ip", "addr", "add", &format!("{me}/24"), "dev", &w]);
        sh(&["ip", "netns", "exec", &ns, "ip", "link", "set", &w, "up"]);
        sh(&["ip", "netns", "exec", &ns, "ip", "link", "set", "lo", "up"]);
        Host { ns, dev: w, gateway: gw }
    }

    /// Brings a host's link down (cut) or up (restored).
    fn link(&self, host: &Host, up: bool) {
        sh(&[
            "ip",
            "netns",
            "exec",
            &host.ns,
            "ip",
            "link",
            "set",
            &host.dev,
            if up { "up" } else { "down" },
        ]);
    }

    /// A tmpfs of `mb` MiB at `dir`.
    fn tmpfs(&mut self, dir: &Path, mb: u32) {
        std::fs::create_dir_all(dir).unwrap();
        sh(&["mount", "-t", "tmpfs", "-o", &format!("size={mb}m"), "zeroplay-test", dir.to_str().unwrap()]);
        self.mounts.push(dir.to_path_buf());
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        // Deleting a namespace deletes its end of each veth pair, and with it the host's end.
        for ns in &self.namespaces {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
        for m in &self.mounts {
            let _ = Command::new("umount").arg("-l").arg(m).status();
        }
    }
}

/// Fills the file system holding `dir` until it refuses more; returns the filler's size.
fn fill(dir: &Path) -> u64 {
    use std::io::Write;
    let mut f = std::fs::File::create(dir.join("filler")).unwrap();
    let chunk = vec![0xA5u8; 1 << 16];
    let mut n = 0u64;
    while f.write_all(&chunk).is_ok() {
        n += chunk.len() as u64;
    }
    // Also the last partial chunk's room.
    while f.write_all(&chunk[..512]).is_ok() {
        n += 512;
    }
    let _ = f.sync_all();
    n
}

/// After a fault: the games in finished Parquet files so far, each in one file exactly once
/// (else `count_parquet_so_far` panics), are no more than the games acknowledged (asked
/// after the count), and the acknowledged count never went down.
fn checkpoint(what: &str, games_dir: &Path, c: &mut Cluster, last: &mut u64) {
    let so_far = count_parquet_so_far(games_dir);
    let status = c.status().expect("status");
    assert!(
        so_far.games as u64 <= status.games_stored,
        "{what}: {} games in Parquet but {} acknowledged",
        so_far.games,
        status.games_stored
    );
    assert!(
        status.games_stored >= *last,
        "{what}: acknowledged games went from {last} to {}",
        status.games_stored
    );
    assert_eq!(status.rejected_invalid, 0, "{what}: games refused as invalid");
    *last = status.games_stored;
    eprintln!(
        "netns: after {what}: {} games acknowledged, {} in {} finished Parquet files (each once)",
        status.games_stored, so_far.games, so_far.files
    );
}

#[test]
fn cut_kill_restart_and_fill_the_disk_across_hosts_then_count_every_game_once() {
    let started = Instant::now();
    let mut net = Net::new();
    let tmp = tempfile::tempdir().unwrap();
    let disk = tmp.path().join("coordinator-disk");
    net.tmpfs(&disk, 48);
    let data_dir = disk.join("data");
    let port = free_port();
    let config = tmp.path().join("coordinator.toml");
    std::fs::write(&config, coordinator_config("0.0.0.0", port, &data_dir, LEASES)).unwrap();
    let config = config.to_str().unwrap().to_string();
    let a = net.host(1);
    let b = net.host(2);
    let spool_a = tmp.path().join("spool-a");
    let spool_b = tmp.path().join("spool-b");
    let mut c = Cluster::new(tmp.path(), port);
    let long = Duration::from_secs(40);

    c.spawn("coordinator-1", &["coordinator", "--config", &config]);
    c.wait_for("the coordinator to answer", long, &["coordinator-1"], |_| true);
    let worker_args = |host: &Host, spool: &Path, name: &str| -> Vec<String> {
        common::cluster::worker_args(&format!("http://{}:{port}", host.gateway), spool, name)
    };
    let spawn_worker = |c: &mut Cluster, host: &Host, spool: &Path, name: &str| {
        let args = worker_args(host, spool, name);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        c.spawn_in(Some(host.ns.as_str()), name, &args);
    };
    spawn_worker(&mut c, &a, &spool_a, "worker-a");
    spawn_worker(&mut c, &b, &spool_b, "worker-b");
    let all = ["coordinator-1", "worker-a", "worker-b"];
    c.wait_for("both workers to register across their links", long, &all, |s| s.workers_alive == 2);
    let s = c.wait_for("5 stored games", long, &all, |s| s.games_stored >= 5);
    eprintln!("netns: both workers playing across veth links ({} games stored)", s.games_stored);

    // 1. Cut worker A's link mid-game: its games finish into the spool, its leases expire.
    let expired_before = s.leases_expired;
    net.link(&a, false);
    let cut_at = Instant::now();
    let s = c.wait_for("worker A's leases to expire while its link is down", long, &all, |s| {
        s.leases_expired > expired_before
    });
    let deadline = Instant::now() + long;
    while spooled(&spool_a).is_empty() {
        c.assert_running(&all);
        assert!(Instant::now() < deadline, "worker A finished no game while cut off");
        std::thread::sleep(Duration::from_millis(50));
    }
    let held = spooled(&spool_a).len();
    net.link(&a, true);
    let deadline = Instant::now() + long;
    while !spooled(&spool_a).is_empty() {
        c.assert_running(&all);
        assert!(
            Instant::now() < deadline,
            "worker A's spooled games were not submitted after the link came back"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let after_cut =
        c.wait_for("the run to go on after the cut", long, &all, |x| x.games_stored >= s.games_stored + 3);
    let games_dir = data_dir.join("games");
    let mut acked = 0;
    checkpoint("the link cut", &games_dir, &mut c, &mut acked);
    eprintln!(
        "netns: link cut {:.1} s; {held} game(s) spooled meanwhile, submitted after; {} leases expired; {} games stored",
        cut_at.elapsed().as_secs_f64(),
        after_cut.leases_expired - expired_before,
        after_cut.games_stored
    );

    // 2. Kill worker B mid-game; start it again on the same spool (logging JSON, as in a
    // cluster, checked at the end).
    c.kill9("worker-b");
    {
        let mut args = vec!["--log-format".to_string(), "json".to_string()];
        args.extend(worker_args(&b, &spool_b, "worker-b2"));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        c.spawn_in(Some(b.ns.as_str()), "worker-b2", &args);
    }
    let all = ["coordinator-1", "worker-a", "worker-b2"];
    let after_kill = c.wait_for("the run to go on after a worker was killed", long, &all, |x| {
        x.games_stored >= after_cut.games_stored + 3
    });
    checkpoint("the worker kill", &games_dir, &mut c, &mut acked);

    // 3. Kill the coordinator; restart it on its data directory. Time the recovery.
    let before_crash = c.status().expect("status before the crash");
    assert!(
        before_crash.leases_drawn < LEASES,
        "the run finished before the coordinator could be killed: {before_crash:?}"
    );
    c.kill9("coordinator-1");
    let restarted = Instant::now();
    c.spawn("coordinator-2", &["coordinator", "--config", &config]);
    let all = ["coordinator-2", "worker-a", "worker-b2"];
    let up = c.wait_for("the restarted coordinator to answer", long, &all, |_| true);
    let answering = restarted.elapsed();
    assert!(
        up.games_stored >= before_crash.games_stored,
        "acknowledged games lost in the crash: {before_crash:?} {up:?}"
    );
    let resumed = c
        .wait_for("a new game after the restart", long, &all, |x| x.games_stored > before_crash.games_stored);
    let recovery = restarted.elapsed();
    c.wait_for("both workers to register again", long, &all, |x| x.workers_alive >= 2);
    checkpoint("the coordinator restart", &games_dir, &mut c, &mut acked);
    eprintln!(
        "netns: coordinator restart: answering after {:.0} ms, first new game stored after {:.0} ms",
        answering.as_secs_f64() * 1e3,
        recovery.as_secs_f64() * 1e3
    );

    // 4. Fill the coordinator's disk; the coordinator must stay up and refuse or hold games
    // (never acknowledge one it cannot keep); then free it and the run goes on.
    let log_before = std::fs::read_to_string(c.log("coordinator-2", "err")).unwrap().len();
    let filled = fill(&disk);
    let full_at = c.status().expect("status when the disk filled");
    let hold = Instant::now();
    while hold.elapsed() < Duration::from_secs(4) {
        c.assert_running(&all);
        std::thread::sleep(Duration::from_millis(100));
    }
    let log = std::fs::read_to_string(c.log("coordinator-2", "err")).unwrap();
    let hits: Vec<&str> =
        log[log_before..].lines().filter(|l| l.contains("No space left") || l.contains("failed")).collect();
    let noticed = hits.len();
    // What the coordinator said, once per kind of message (without timestamps).
    let mut kinds: Vec<&str> = hits.iter().map(|l| l.split_once(' ').map_or(*l, |x| x.1)).collect();
    kinds.sort_unstable();
    kinds.dedup_by_key(|l| l.split(" error=").next().unwrap_or("").to_string());
    for k in kinds.iter().take(6) {
        eprintln!("netns:   coordinator: {}", &k[..k.len().min(220)]);
    }
    let reopened = log[log_before..].contains("database reopened");
    assert!(noticed > 0, "the coordinator never hit the full disk (filler of {filled} bytes)");
    std::fs::remove_file(disk.join("filler")).unwrap();
    let after_full = c.wait_for("the run to go on after the disk was freed", long, &all, |x| {
        x.games_stored >= full_at.games_stored + 3
    });
    checkpoint("the full disk", &games_dir, &mut c, &mut acked);
    eprintln!(
        "netns: disk full for 4 s ({filled} bytes of filler): {noticed} error lines logged, database reopened: \
         {reopened}; games stored {} -> {}",
        full_at.games_stored, after_full.games_stored
    );

    // The end: every lease finished, then every game counted.
    let end = c.wait_for("every lease to finish", Duration::from_secs(180), &all, |x| {
        x.leases_drawn == LEASES && x.leases_active == 0 && x.leases_queued == 0
    });
    for w in ["worker-a", "worker-b2"] {
        let exit = c.terminate(w, Duration::from_secs(20));
        assert!(exit.success(), "{w} exited with {exit}");
    }
    let last = c.status().expect("status after the workers stopped");
    assert!(last.games_stored >= end.games_stored);
    assert_eq!(last.rejected_invalid, 0, "games refused as invalid: {last:?}");
    let exit = c.terminate("coordinator-2", Duration::from_secs(30));
    assert!(exit.success(), "coordinator exited with {exit}");

    let json_log = std::fs::read_to_string(c.log("worker-b2", "err")).unwrap();
    let events: Vec<serde_json::Value> = json_log
        .lines()
        .map(|l| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("worker-b2 logged a line that is not JSON ({e}): {l}"))
        })
        .collect();
    assert!(
        events.iter().any(|e| e["message"] == "worker registered"
            && e["level"] == "INFO"
            && e["timestamp"].is_string()),
        "no structured registration event in {json_log}"
    );

    let counted = count_parquet(&data_dir.join("games"));
    assert!(last.games_stored >= LEASES, "{} games stored for {LEASES} leases", last.games_stored);
    assert_eq!(counted.games as u64, last.games_stored, "distinct games in Parquet vs games acknowledged");
    assert_eq!(counted.rows, last.positions_stored, "rows in Parquet vs positions acknowledged");
    for spool in [&spool_a, &spool_b] {
        assert!(spooled(spool).is_empty(), "{} still holds {:?}", spool.display(), spooled(spool));
        let rejected = spooled(&spool.join("rejected"));
        assert!(rejected.is_empty(), "games refused: {rejected:?}");
    }
    eprintln!(
        "netns: {LEASES} leases -> {} games ({} positions) in {} Parquet files, each once; duplicates refused: {}; \
         kill: {} stored when worker B died; {:.1} s",
        last.games_stored,
        last.positions_stored,
        counted.files,
        last.rejected_duplicate,
        after_kill.games_stored,
        started.elapsed().as_secs_f64()
    );
    let _ = resumed;
}
