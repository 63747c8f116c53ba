//! The distributed pipeline as real processes on loopback: a coordinator and two workers, one
//! worker killed with SIGKILL mid-game, the coordinator killed with SIGKILL and restarted on the
//! same port and data directory, the surviving worker reconnecting by itself. Then every game
//! is counted in the Parquet files: none lost, none duplicated.
//!
//! Every wait is bounded; every child is killed when the test fails (see [`Cluster`]'s `Drop`),
//! and the tails of their logs are printed.

mod common;

use std::time::{Duration, Instant};

use common::cluster::{Cluster, coordinator_config, count_parquet, free_port, spooled, worker_args};

/// Positions the coordinator draws (`leases.max_leases`): the run's known end.
const LEASES: u64 = 48;

#[test]
fn kill_a_worker_and_restart_the_coordinator_then_count_every_game_once() {
    let started = Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let data_dir = tmp.path().join("data");
    let port = free_port();
    let config = tmp.path().join("coordinator.toml");
    std::fs::write(&config, coordinator_config("127.0.0.1", port, &data_dir, LEASES)).unwrap();
    let config = config.to_str().unwrap().to_string();
    let url = format!("http://127.0.0.1:{port}");
    let spool_a = tmp.path().join("spool-a");
    let spool_b = tmp.path().join("spool-b");
    let mut c = Cluster::new(tmp.path(), port);
    let long = Duration::from_secs(30);

    c.spawn("coordinator-1", &["coordinator", "--config", &config]);
    c.wait_for("the coordinator to answer", long, &["coordinator-1"], |_| true);
    for (name, spool) in [("worker-a", &spool_a), ("worker-b", &spool_b)] {
        let args = worker_args(&url, spool, name);
        c.spawn(name, &args.iter().map(String::as_str).collect::<Vec<_>>());
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
