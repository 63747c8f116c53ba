//! Issue 42's probes against a real `zeroplay coordinator` process (and real `zeroplay worker`
//! processes), each of which a token holder used to get through:
//! 1. PublishModel of a file whose tensors are not the declared network's (a lone tensor `x`
//!    declared as a Battle Number model; a candidate declaring `small` but carrying `tiny`'s
//!    tensors): before, `OK`, and the lone `x` became the best model; now INVALID_ARGUMENT and
//!    nothing stored;
//! 2. a worker that reports a win for every evaluation match it leases: before, it decided
//!    the gate alone (4 reports, promoted); now it gets at most half of a gate's matches, its
//!    reports without games, or with games that do not replay to its points, are refused, and
//!    the gate is decided by the replayed results of the honest workers;
//! 3. a worker that stores games whose root values are all -0.99 (what a resignation at ply
//!    8 of 119 needed): before, stored and trained on; now a real worker process searches
//!    sampled positions of them again, the forger is quarantined (PERMISSION_DENIED) and its
//!    games are listed in a `.set-aside.json` file the trainer skips; and the same for
//!    fabricated visit counts beside honest values (the checker reports its visits too),
//!    while an honest peer checked alongside is not quarantined.
//!
//! (The connection probe, established pinging connections filling the cap, is in
//! `tests/patient_attacker.rs`.)

mod common;

use std::time::Duration;

use common::cluster::{
    Cluster, TRAINER_TOKEN, WORKER_TOKEN, coordinator_config, free_port, metric, worker_args,
};
use engine::Game;
use engine::battlenumber::BattleNumber;
use engine::gating::{GateRule, GateSettings};
use tonic::Code;
use zeroplay_client::{Client, ClientConfig};
use zeroplay_proto::v1 as pb;

const FEATURES: u32 = <BattleNumber as engine::Features>::FEATURE_VERSION;

/// A fresh `tiny` network's model file; `declare` overrides the size in its metadata.
fn model_file(declare: Option<&str>) -> Vec<u8> {
    use engine::Features;
    let cfg = model::NetConfig::named("tiny").unwrap();
    let net = model::ValueNet::new(&cfg, BattleNumber::FEATURE_LEN, BattleNumber::POLICY_LEN, &model::cpu());
    let mut meta = model::ModelMeta::for_game::<BattleNumber>(cfg, 10.0, model::ModelInfo::default());
    if let Some(d) = declare {
        meta.net = model::NetConfig::named(d).unwrap();
    }
    model::to_bytes(&net, &meta).unwrap()
}

/// One tensor `x`, with a real model's metadata (so it is declared as a Battle Number model).
fn lone_tensor() -> Vec<u8> {
    let real = model_file(None);
    let (_, header) = safetensors::SafeTensors::read_metadata(&real).unwrap();
    let meta = header.metadata().clone().expect("a model file has metadata");
    let d = [0u8; 4];
    let v = safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![1], &d).unwrap();
    safetensors::serialize([("x", v)], Some(meta)).unwrap()
}

fn client(port: u16, token: &str) -> Client {
    zeroplay_client::connect(&ClientConfig {
        coordinator: format!("http://127.0.0.1:{port}"),
        token: token.into(),
        ca_cert: None,
    })
    .unwrap()
}

async fn register(c: &mut Client) -> String {
    c.register(pb::RegisterRequest {
        name: "forger".into(),
        slots: 1,
        engine_version: engine::ENGINE_VERSION.into(),
        protocol: zeroplay_proto::PROTOCOL,
    })
    .await
    .unwrap()
    .into_inner()
    .worker_id
}

#[test]
fn forged_models_and_forged_match_reports_are_refused_by_a_real_coordinator() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let port = free_port();
    let config = tmp.path().join("coordinator.toml");
    let mut text = coordinator_config("127.0.0.1", port, &data, 1_000_000);
    // The network alone at the leaves, as `zeroplay local` plays; `max_gate_share` stays at
    // its default (0.5).
    text.push_str("\n[games.battlenumber.leaf]\nevaluator = \"net\"\nlambda = 0.0\n");
    std::fs::write(&config, text).unwrap();
    let mut c = Cluster::new(tmp.path(), port);
    c.spawn("coordinator", &["coordinator", "--config", config.to_str().unwrap()]);
    let long = Duration::from_secs(60);
    c.wait_for("the coordinator to answer", long, &["coordinator"], |_| true);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();

    // 1. Models whose tensors are not the declared network's: a lone `x` as the first model,
    // then (with a real best model) a candidate declaring `small` with `tiny`'s tensors.
    let lone = rt.block_on(async {
        let mut trainer = client(port, TRAINER_TOKEN);
        zeroplay_client::publish_model(&mut trainer, "battlenumber", FEATURES, &lone_tensor(), None).await
    });
    let lone = lone.unwrap_err();
    assert_eq!(lone.code(), Code::InvalidArgument, "{lone:?}");
    assert!(lone.message().contains("`input.weight` is missing"), "{}", lone.message());
    let s = c.status().expect("status");
    assert_eq!(s.model_version, 0, "no forged model became the best");
    let mislabelled = rt.block_on(async {
        let mut trainer = client(port, TRAINER_TOKEN);
        let v1 =
            zeroplay_client::publish_model(&mut trainer, "battlenumber", FEATURES, &model_file(None), None)
                .await
                .unwrap();
        assert_eq!(v1, 1);
        let gate = GateSettings::default();
        let small = model_file(Some("small"));
        zeroplay_client::publish_model(&mut trainer, "battlenumber", FEATURES, &small, Some(&gate)).await
    });
    let mislabelled = mislabelled.unwrap_err();
    assert_eq!(mislabelled.code(), Code::InvalidArgument, "{mislabelled:?}");
    assert_eq!(c.status().expect("status").model_version, 1);

    // 2. A gate one forger tries to decide: promoted only at 0.9 of 4 matches.
    let (v2, leased) = rt.block_on(async {
        let mut trainer = client(port, TRAINER_TOKEN);
        let gate = GateSettings {
            rule: GateRule::Threshold,
            matches: 4,
            threshold: 0.9,
            sims: 8,
            ..Default::default()
        };
        let v2 = zeroplay_client::publish_model(
            &mut trainer,
            "battlenumber",
            FEATURES,
            &model_file(None),
            Some(&gate),
        )
        .await
        .unwrap();
        let mut forger = client(port, WORKER_TOKEN);
        let id = register(&mut forger).await;
        let mut leased = 0;
        for _ in 0..3 {
            let leases = forger
                .lease_positions(pb::LeaseRequest { worker_id: id.clone(), max_positions: 8 })
                .await
                .unwrap()
                .into_inner()
                .leases;
            for l in leases.iter().filter(|l| l.evaluation.is_some()) {
                leased += 1;
                // A win with no games, then (if still leased) a win with one nonsense move.
                for games in [vec![], vec![pb::MatchGame { actions: vec!["nonsense".into()] }]] {
                    let e = forger
                        .report_match(pb::ReportMatchRequest {
                            worker_id: id.clone(),
                            lease_id: l.lease_id,
                            candidate_points: 1.0,
                            plies: 100,
                            games,
                        })
                        .await
                        .unwrap_err();
                    assert!(matches!(e.code(), Code::InvalidArgument | Code::NotFound), "{e:?}");
                }
            }
            let self_play: Vec<u64> =
                leases.iter().filter(|l| l.evaluation.is_none()).map(|l| l.lease_id).collect();
            forger
                .release_leases(pb::ReleaseRequest { worker_id: id.clone(), lease_ids: self_play })
                .await
                .unwrap();
            let st = trainer.gate_status(pb::GateStatusRequest { version: v2 }).await.unwrap().into_inner();
            assert_eq!((st.state, st.matches), (pb::GateState::Running as i32, 0), "nothing counted: {st:?}");
        }
        (v2, leased)
    });
    assert!(leased >= 1, "the forger was handed no evaluation match");

    // Two honest worker processes play the matches; the gate is decided by what they played.
    let running = ["coordinator", "worker-a", "worker-b"];
    for name in ["worker-a", "worker-b"] {
        let args = worker_args(&format!("http://127.0.0.1:{port}"), &tmp.path().join(name), name);
        c.spawn(name, &args.iter().map(String::as_str).collect::<Vec<_>>());
    }
    let start = std::time::Instant::now();
    let st = loop {
        c.assert_running(&running);
        let st = rt.block_on(async {
            let mut trainer = client(port, TRAINER_TOKEN);
            trainer.gate_status(pb::GateStatusRequest { version: v2 }).await.unwrap().into_inner()
        });
        if st.state != pb::GateState::Running as i32 {
            break st;
        }
        assert!(start.elapsed() < long * 2, "the gate was not decided: {st:?}");
        std::thread::sleep(Duration::from_millis(200));
    };
    eprintln!(
        "forged peers: lone-tensor model {:?}, mislabelled candidate {:?}; the forger leased {leased} \
         evaluation matches, all its reports refused; the honest workers decided the gate: {} matches, \
         {} points, state {}",
        lone.code(),
        mislabelled.code(),
        st.matches,
        st.points,
        st.state
    );
    assert_eq!(st.matches, 4, "{st:?}");
    assert_eq!(
        st.state == pb::GateState::Promoted as i32,
        st.points >= 3.6,
        "decided by the replayed points: {st:?}"
    );
    let s = c.status().expect("status");
    assert_eq!(s.model_version, if st.state == pb::GateState::Promoted as i32 { v2 } else { 1 });
    for name in ["worker-a", "worker-b"] {
        assert!(c.terminate(name, long).success());
    }
    assert!(c.terminate("coordinator", long).success());
}

#[test]
fn forged_root_values_are_caught_by_another_workers_checks_and_set_aside() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let port = free_port();
    let config = tmp.path().join("coordinator.toml");
    let mut text = coordinator_config("127.0.0.1", port, &data, 1_000_000);
    // Every stored game has a position checked (the default samples 2%).
    text.push_str("\n[checks]\nrate = 1.0\n");
    std::fs::write(&config, text).unwrap();
    let mut c = Cluster::new(tmp.path(), port);
    c.spawn("coordinator", &["coordinator", "--config", config.to_str().unwrap()]);
    let long = Duration::from_secs(60);
    c.wait_for("the coordinator to answer", long, &["coordinator"], |_| true);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    // The forger plays real games and stores them with every searched root value -0.99.
    let mut forger = rt.block_on(async { client(port, WORKER_TOKEN) });
    let (id, forged) = rt.block_on(async {
        let id = register(&mut forger).await;
        let mut forged = Vec::new();
        for k in 0..8u128 {
            let leases = forger
                .lease_positions(pb::LeaseRequest { worker_id: id.clone(), max_positions: 1 })
                .await
                .unwrap()
                .into_inner()
                .leases;
            let lease = &leases[0];
            let start = BattleNumber::decode(&lease.start_state).unwrap();
            let settings = engine::selfplay::SelfPlaySettings {
                full_sims: 16,
                fast_sims: 4,
                resign_threshold: -2.0,
                ..Default::default()
            };
            let g =
                engine::selfplay::play_game(&start, &settings, &engine::eval::Rollout::default(), lease.seed);
            let mut rec = zeroplay_worker::game_record(&g, format!("{:032x}", 0x42_0000 + k), lease.seed, 0);
            for m in rec.moves.iter_mut().filter(|m| !m.visits.is_empty()) {
                m.root_value = -0.99;
            }
            forged.push(rec.game_id.clone());
            forger
                .submit_game(pb::SubmitGameRequest {
                    worker_id: id.clone(),
                    lease_id: lease.lease_id,
                    game: Some(rec),
                })
                .await
                .unwrap();
        }
        (id, forged)
    });
    assert_eq!(c.status().expect("status").games_stored, 8, "stored: nothing in one game shows the forgery");

    // An honest worker process searches the checks (the forger's games; never its own).
    let args = worker_args(&format!("http://127.0.0.1:{port}"), &tmp.path().join("spool"), "honest");
    c.spawn("honest", &args.iter().map(String::as_str).collect::<Vec<_>>());
    let games_dir = data.join("games");
    let (listed, set_aside) = wait_for_set_aside(&mut c, &games_dir, long);
    assert!(!set_aside.is_empty() && set_aside.iter().all(|g| forged.contains(g)), "{listed}");
    assert_eq!(listed["worker"].as_str(), Some(id.as_str()));
    // From now on the forger is refused, and the trainer's window holds none of its games.
    let refused = rt.block_on(async {
        forger
            .lease_positions(pb::LeaseRequest { worker_id: id.clone(), max_positions: 1 })
            .await
            .unwrap_err()
    });
    assert_eq!(refused.code(), Code::PermissionDenied, "{refused:?}");
    assert!(refused.message().contains("quarantined"), "{}", refused.message());
    assert!(c.terminate("honest", long).success());
    let mut window = trainer::data::Window::new(1_000_000);
    // The coordinator writes the staged games to Parquet every second.
    std::thread::sleep(Duration::from_millis(1500));
    window.refresh::<BattleNumber>(&games_dir).unwrap();
    let aside = trainer::data::set_aside(&games_dir).unwrap();
    assert_eq!(aside.len(), set_aside.len());
    let (train, val) = window.split(0.0);
    assert!(
        train.iter().chain(&val).all(|s| !aside.contains(&s.game_hash)),
        "a set-aside game in the window"
    );
    let log = std::fs::read_to_string(c.log("coordinator", "err")).unwrap();
    eprintln!(
        "forged values: 8 games stored with every root value -0.99; an honest worker process checked them; \
         the forger was quarantined with {} games set aside ({} of its 8)",
        set_aside.len(),
        set_aside.len()
    );
    assert!(log.contains("worker quarantined"), "{log}");
    assert!(c.terminate("coordinator", long).success());
}

/// Waits (up to `long`, while the coordinator and the `honest` worker run) for the first
/// `.set-aside.json` file in `games_dir`; returns it and the games it lists.
fn wait_for_set_aside(
    c: &mut Cluster,
    games_dir: &std::path::Path,
    long: Duration,
) -> (serde_json::Value, Vec<String>) {
    let start = std::time::Instant::now();
    let file = loop {
        c.assert_running(&["coordinator", "honest"]);
        let found = std::fs::read_dir(games_dir)
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| p.to_string_lossy().ends_with(".set-aside.json"));
        if let Some(f) = found {
            break f;
        }
        assert!(start.elapsed() < long, "the forger was not quarantined");
        std::thread::sleep(Duration::from_millis(200));
    };
    let listed: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let set_aside =
        listed["games"].as_array().unwrap().iter().map(|g| g.as_str().unwrap().to_string()).collect();
    (listed, set_aside)
}

/// Probe 3's second half (stop 51's open gap): visit counts forged beside honest values. A
/// model is published, so the moves are searched with a network and their visits are
/// compared. Two peers lease their six positions each before anything is stored (so no check
/// lease is among them) and play them with the model as a worker does; the control stores
/// its games as played, the forger with every searched move's visits piled on its least
/// visited action (the policy target turned upside down; the root values untouched). A real
/// worker process checks them: the forger is quarantined with only its games set aside, the
/// control is not.
#[test]
fn forged_visit_counts_beside_honest_values_are_caught_and_an_honest_peer_is_not() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let port = free_port();
    let metrics_port = free_port();
    let config = tmp.path().join("coordinator.toml");
    let mut text = coordinator_config("127.0.0.1", port, &data, 1_000_000)
        .replacen("seed = 11", &format!("seed = 11\nmetrics_listen = \"127.0.0.1:{metrics_port}\""), 1)
        // The peers' leases must outlive the games this test plays before storing any.
        .replacen("ttl_ms = 2000", "ttl_ms = 120000", 1);
    text.push_str("\n[checks]\nrate = 1.0\n\n[games.battlenumber.leaf]\nevaluator = \"net\"\nlambda = 0.0\n");
    std::fs::write(&config, text).unwrap();
    let mut c = Cluster::new(tmp.path(), port);
    c.spawn("coordinator", &["coordinator", "--config", config.to_str().unwrap()]);
    let long = Duration::from_secs(90);
    c.wait_for("the coordinator to answer", long, &["coordinator"], |_| true);
    let metrics: std::net::SocketAddr = format!("127.0.0.1:{metrics_port}").parse().unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let bytes = model_file(None);
    let (forger_id, control_id, forged) = rt.block_on(async {
        let mut trainer = client(port, TRAINER_TOKEN);
        let v = zeroplay_client::publish_model(&mut trainer, "battlenumber", FEATURES, &bytes, None)
            .await
            .unwrap();
        assert_eq!(v, 1);
        let mut peers = Vec::new();
        for _ in 0..2 {
            let mut peer = client(port, WORKER_TOKEN);
            let id = register(&mut peer).await;
            let mut leases = Vec::new();
            while leases.len() < 6 {
                let req =
                    pb::LeaseRequest { worker_id: id.clone(), max_positions: (6 - leases.len()) as u32 };
                leases.extend(peer.lease_positions(req).await.unwrap().into_inner().leases);
            }
            assert!(leases.iter().all(|l| l.check.is_none() && l.evaluation.is_none()));
            peers.push((peer, id, leases));
        }
        // The control's games are stored first, so their checks are searched before the
        // forger's.
        peers.reverse();
        let mut forged = Vec::new();
        for (k, (peer, id, leases)) in peers.iter_mut().enumerate() {
            let forge = k == 1;
            for (i, lease) in leases.iter().enumerate() {
                let (settings, leaf) =
                    zeroplay_proto::convert::selfplay_from_proto(lease.settings.as_ref().unwrap()).unwrap();
                let m = model::load::<BattleNumber>(&bytes, &model::cpu()).unwrap();
                let net = model::net_leaf::<BattleNumber>(model::NetSource::Fixed(m), &leaf);
                let start = BattleNumber::decode(&lease.start_state).unwrap();
                let g = engine::selfplay::play_game(&start, &settings, net.as_ref(), lease.seed);
                let id_hex = format!("{:032x}", 0x4200_0000 + 100 * k + i);
                let mut rec = zeroplay_worker::game_record(&g, id_hex, lease.seed, 1);
                if forge {
                    for m in rec.moves.iter_mut().filter(|m| m.visits.len() > 1) {
                        let total: u32 = m.visits.iter().map(|v| v.visits).sum();
                        let least = (0..m.visits.len()).min_by_key(|&j| m.visits[j].visits).unwrap();
                        for (j, v) in m.visits.iter_mut().enumerate() {
                            v.visits = if j == least { total } else { 0 };
                        }
                    }
                    forged.push(rec.game_id.clone());
                }
                let req = pb::SubmitGameRequest {
                    worker_id: id.clone(),
                    lease_id: lease.lease_id,
                    game: Some(rec),
                };
                peer.submit_game(req).await.unwrap();
            }
        }
        (peers[1].1.clone(), peers[0].1.clone(), forged)
    });
    assert_eq!(c.status().expect("status").games_stored, 12, "stored: one game shows nothing of the forgery");

    // A real worker process searches the checks (2 slots, so checks and its own games share).
    let mut args = worker_args(&format!("http://127.0.0.1:{port}"), &tmp.path().join("spool"), "honest");
    let slots = args.iter().position(|a| a == "--slots").unwrap() + 1;
    args[slots] = "2".into();
    c.spawn("honest", &args.iter().map(String::as_str).collect::<Vec<_>>());
    let games_dir = data.join("games");
    let start = std::time::Instant::now();
    let (listed, set_aside) = wait_for_set_aside(&mut c, &games_dir, long);
    assert_eq!(listed["worker"].as_str(), Some(forger_id.as_str()));
    assert!(!set_aside.is_empty() && set_aside.iter().all(|g| forged.contains(g)), "{listed}");
    assert!(listed["reason"].as_str().unwrap().contains("visit distributions"), "{listed}");
    // The control's six checks were handed out before the forger's: once they are all in, the
    // control is still served and the forger refused.
    while metric(metrics, "zeroplay_coordinator_checks_agreed_total")
        + metric(metrics, "zeroplay_coordinator_checks_disagreed_total")
        < 9.0
    {
        assert!(start.elapsed() < long, "the control's checks were not all reported");
        std::thread::sleep(Duration::from_millis(200));
    }
    let (control, forger) = rt.block_on(async {
        let mut peer = client(port, WORKER_TOKEN);
        let ask = |id: &str| pb::LeaseRequest { worker_id: id.to_string(), max_positions: 1 };
        (peer.lease_positions(ask(&control_id)).await, peer.lease_positions(ask(&forger_id)).await)
    });
    assert!(control.is_ok(), "the honest control was refused: {control:?}");
    assert_eq!(forger.unwrap_err().code(), Code::PermissionDenied);
    let agreed = metric(metrics, "zeroplay_coordinator_checks_agreed_total");
    let disagreed = metric(metrics, "zeroplay_coordinator_checks_disagreed_total");
    assert!(c.terminate("honest", long).success());
    assert!(c.terminate("coordinator", long).success());
    let log = std::fs::read_to_string(c.log("coordinator", "err")).unwrap();
    assert!(log.contains("a stored move disagrees"), "{log}");
    eprintln!(
        "forged visits: 6 honest and 6 forged games with a network's values; checks agreed {agreed}, \
         disagreed {disagreed}; the forger quarantined with {} of its games set aside",
        set_aside.len()
    );
}
