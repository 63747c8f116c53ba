//! The cluster path as the deployment runs it: coordinator, worker, `train --coordinator` and
//! `serve --coordinator` as four real processes on loopback, with the command lines of
//! `deploy/compose.yaml` (read from it by `scripts/deploy_commands.py`, so the test and the
//! manifests cannot drift; `tests/deploy.rs` checks the Kubernetes manifests run the same
//! flags). Only what a cluster would differ in is rewritten: addresses (loopback, free
//! ports), the volumes under /data (a temporary directory) and the config files under
//! /etc/zeroplay (the image's copy of configs/, scaled down: small searches, a tiny network,
//! two gating matches that promote any candidate). It ends with a candidate gated on the
//! worker, promoted by the coordinator, and played by the play server's AI.
//!
//! Every wait is bounded; children are killed (their logs printed) when the test fails.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::cluster::{ADMIN_TOKEN, Cluster, TRAINER_TOKEN, WORKER_TOKEN, free_port};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `configs/NAME` with `edit` applied to its table.
fn scaled_config(dir: &Path, name: &str, edit: impl FnOnce(&mut toml::Table)) -> String {
    let text = std::fs::read_to_string(root().join("configs").join(name)).unwrap();
    let mut t: toml::Table = toml::from_str(&text).unwrap();
    edit(&mut t);
    let path = dir.join("etc").join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, toml::to_string(&t).unwrap()).unwrap();
    path.to_str().unwrap().to_string()
}

fn table<'a>(t: &'a mut toml::Table, path: &[&str]) -> &'a mut toml::Table {
    path.iter().fold(t, |t, k| {
        t.entry(k.to_string())
            .or_insert_with(|| toml::Value::Table(Default::default()))
            .as_table_mut()
            .unwrap()
    })
}

/// One HTTP/1.1 request on loopback: (status, body).
fn http(addr: &str, method: &str, path: &str, body: &str) -> Option<(u16, String)> {
    http_with(addr, method, path, body, "")
}

/// [`http`] with extra header lines (each ending in `\r\n`).
fn http_with(addr: &str, method: &str, path: &str, body: &str, headers: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(30))).ok()?;
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n{headers}\r\n{body}",
        body.len()
    )
    .ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    let status = out.split_whitespace().nth(1)?.parse().ok()?;
    Some((status, out.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default()))
}

#[test]
fn compose_command_lines_run_the_whole_cluster_path_on_loopback() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let json = Command::new(common::python())
        .arg(root().join("scripts/deploy_commands.py"))
        .arg("--compose")
        .arg(root().join("deploy/compose.yaml"))
        .output()
        .unwrap();
    assert!(json.status.success(), "{}", String::from_utf8_lossy(&json.stderr));
    let commands: Vec<serde_json::Value> = serde_json::from_slice(&json.stdout).unwrap();
    let args_of = |role: &str| -> Vec<String> {
        let c = commands
            .iter()
            .find(|c| c["where"] == format!("compose/{role}"))
            .unwrap_or_else(|| panic!("no compose service {role} in {commands:?}"));
        c["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap().to_string()).collect()
    };

    // The image's /etc/zeroplay is configs/; these are the same files, scaled down.
    let coordinator_toml = scaled_config(dir, "coordinator.toml", |t| {
        let s = table(t, &["games", "battlenumber", "settings"]);
        s.insert("full_sims".into(), 16.into());
        s.insert("fast_sims".into(), 8.into());
        table(t, &["parquet"]).insert("rotate_seconds".into(), 2.into());
        // One worker process here (compose runs two): it may play every gating match.
        table(t, &["leases"]).insert("max_gate_share".into(), 1.0.into());
    });
    let train_toml = scaled_config(dir, "train.toml", |t| {
        t.insert("min_new_positions".into(), 600.into());
        t.insert("steps_per_round".into(), 10.into());
        t.insert("poll_ms".into(), 200.into());
        let train = table(t, &["train"]);
        train.insert("net".into(), "tiny".into());
        train.insert("batch_size".into(), 32.into());
        let gate = table(t, &["gate"]);
        gate.insert("matches".into(), 2.into());
        gate.insert("sims".into(), 8.into());
        // Any candidate passes (a threshold of 0, not the default SPRT): the path is under test.
        gate.insert("rule".into(), "threshold".into());
        gate.insert("threshold".into(), 0.0.into());
        let rating = table(t, &["rating"]);
        rating.insert("matches".into(), 1.into());
        rating.insert("anchors".into(), toml::Value::Array(vec!["random".into()]));
    });
    let serve_toml = scaled_config(dir, "serve.toml", |_| {});
    let coord_port = free_port();
    let serve_addr = format!("127.0.0.1:{}", free_port());
    let rewrite = |args: Vec<String>| -> Vec<String> {
        args.into_iter()
            .map(|a| {
                let a = a
                    .replace("/etc/zeroplay/coordinator.toml", &coordinator_toml)
                    .replace("/etc/zeroplay/train.toml", &train_toml)
                    .replace("/etc/zeroplay/serve.toml", &serve_toml)
                    .replace("http://coordinator:50051", &format!("http://127.0.0.1:{coord_port}"))
                    .replace("0.0.0.0:50051", &format!("127.0.0.1:{coord_port}"))
                    .replace("0.0.0.0:8080", &serve_addr)
                    .replace("=/data/", &format!("={}/data/", dir.display()));
                assert!(!a.contains("/etc/zeroplay/"), "a config file the test does not know: {a}");
                // Each process its own metrics port (one host here, not one container each).
                a.replace("0.0.0.0:9090", &format!("127.0.0.1:{}", free_port()))
            })
            .collect()
    };

    let mut cluster = Cluster::new(dir, coord_port);
    // compose's env_file (deploy/zeroplay.env.example), with this test's tokens.
    let env = std::fs::read_to_string(root().join("deploy/zeroplay.env.example")).unwrap();
    for (k, v) in env.lines().filter(|l| !l.starts_with('#')).filter_map(|l| l.split_once('=')) {
        let v = match k {
            "ZEROPLAY_WORKER_TOKEN" | "ZEROPLAY_TOKEN" => WORKER_TOKEN,
            "ZEROPLAY_TRAINER_TOKEN" => TRAINER_TOKEN,
            "ZEROPLAY_ADMIN_TOKEN" => ADMIN_TOKEN,
            _ => v,
        };
        cluster.set_env(k, v);
    }
    let spawn = |cluster: &mut Cluster, role: &str| {
        let args = rewrite(args_of(role));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        cluster.spawn(role, &args);
    };
    spawn(&mut cluster, "coordinator");
    cluster.wait_for("the coordinator", Duration::from_secs(30), &["coordinator"], |_| true);
    spawn(&mut cluster, "worker");
    spawn(&mut cluster, "trainer");
    spawn(&mut cluster, "serve");

    // The trainer's first round, gated on the worker, promoted, announced to the play server.
    let all = ["coordinator", "worker", "trainer", "serve"];
    let start = Instant::now();
    let served = loop {
        cluster.assert_running(&all);
        let info = http(&serve_addr, "GET", "/api/info", "")
            .and_then(|(st, b)| (st == 200).then_some(b))
            .and_then(|b| serde_json::from_str::<serde_json::Value>(&b).ok());
        if let Some(v) = info.as_ref().and_then(|i| i["model_version"].as_u64()).filter(|&v| v > 0) {
            break v;
        }
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "no promoted model reached the play server: {info:?}"
        );
        std::thread::sleep(Duration::from_millis(250));
    };
    // The trainer learns the decision by polling the coordinator: wait for its record too.
    let promoted = loop {
        cluster.assert_running(&all);
        let ratings = std::fs::read_to_string(dir.join("data/trainer/ratings.json")).unwrap_or_default();
        let ratings: serde_json::Value = serde_json::from_str(&ratings).unwrap_or_default();
        let found = ratings.as_array().and_then(|r| r.iter().find(|e| e["promoted"] == true).cloned());
        if let Some(p) = found {
            break p;
        }
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "the trainer never recorded the promotion: {ratings}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(promoted["version"].as_u64(), Some(served), "{promoted}");
    assert!(promoted["matches"].as_u64().unwrap() >= 1, "gated on the worker: {promoted}");
    let status = cluster.status().expect("coordinator status");
    assert!(status.games_stored > 0, "{status:?}");

    // A person's game: the AI moves with the promoted network.
    let (st, body) =
        http(&serve_addr, "POST", "/api/games", r#"{"game":"battlenumber","ai_seat":"first"}"#).unwrap();
    assert_eq!(st, 201, "{body}");
    let game: serde_json::Value = serde_json::from_str(&body).unwrap();
    let (id, secret) = (game["id"].as_str().unwrap(), game["secret"].as_str().unwrap());
    let mine = format!("X-Game-Secret: {secret}\r\n");
    let (st, body) =
        http_with(&serve_addr, "POST", &format!("/api/games/{id}/ai?ms=200"), "", &mine).unwrap();
    assert_eq!(st, 200, "{body}");
    let done = body.lines().rev().find_map(|l| l.strip_prefix("data:")).expect("server-sent events");
    let done: serde_json::Value = serde_json::from_str(done.trim()).unwrap();
    assert_eq!(done["state"]["model_version"].as_u64(), Some(served), "{done}");

    // Graceful stops, clients first.
    for role in ["serve", "trainer", "worker", "coordinator"] {
        let s = cluster.terminate(role, Duration::from_secs(60));
        assert!(s.success(), "{role} exited with {s} on SIGTERM");
    }
}
