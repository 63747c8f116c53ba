//! The coordinator over real gRPC on 127.0.0.1 port 0, in process: authentication, leases,
//! submissions (valid, illegal, duplicate, oversized), durability across a restart, lease
//! expiry, model publication and download, a real worker end to end, and gating scheduled on
//! a real worker.

use std::path::Path;
use std::time::Duration;

use engine::GameKind;
use engine::battlenumber::BattleNumber;
use engine::eval::Rollout;
use engine::game::Game;
use engine::selfplay::{SelfPlaySettings, play_game};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio_stream::StreamExt;
use tonic::Code;

/// The Battle Number feature version models are trained on.
const FEATURES: u32 = <BattleNumber as engine::Features>::FEATURE_VERSION;
use zeroplay_coordinator::config::CoordinatorConfig;
use zeroplay_proto::v1 as pb;
use zeroplay_worker::{Client, WorkerConfig, client};

const WORKER: &str = "worker-token-0123456789";
const TRAINER: &str = "trainer-token-0123456789";
const ADMIN: &str = "admin-token-0123456789";

struct Running {
    addr: std::net::SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<Result<(), zeroplay_coordinator::RunError>>,
}

impl Running {
    async fn shutdown(mut self) {
        let _ = self.stop.take().unwrap().send(());
        self.task.await.unwrap().unwrap();
    }
}

fn config(dir: &Path) -> CoordinatorConfig {
    let mut cfg = CoordinatorConfig { data_dir: dir.to_path_buf(), ..CoordinatorConfig::default() };
    cfg.auth.worker_token = WORKER.into();
    cfg.auth.trainer_token = TRAINER.into();
    cfg.auth.admin_token = ADMIN.into();
    cfg.parquet.rotate_seconds = 1;
    cfg.limits.max_moves = 400;
    cfg.limits.max_message_bytes = 256 * 1024;
    let g = cfg.games.get_mut(&GameKind::BattleNumber).unwrap();
    g.settings.full_sims = 16;
    g.settings.fast_sims = 4;
    cfg
}

async fn start(cfg: CoordinatorConfig) -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = oneshot::channel();
    let task = tokio::spawn(zeroplay_coordinator::run(cfg, listener, async {
        let _ = rx.await;
    }));
    Running { addr, stop: Some(tx), task }
}

fn connect(addr: std::net::SocketAddr, token: &str) -> Client {
    client(&WorkerConfig {
        coordinator: format!("http://{addr}"),
        token: token.into(),
        ..WorkerConfig::default()
    })
    .unwrap()
}

async fn try_register(c: &mut Client) -> Result<String, tonic::Status> {
    let r = c
        .register(pb::RegisterRequest {
            name: "t".into(),
            slots: 1,
            engine_version: engine::ENGINE_VERSION.into(),
            protocol: zeroplay_proto::PROTOCOL,
        })
        .await?;
    Ok(r.into_inner().worker_id)
}

async fn register(c: &mut Client) -> String {
    try_register(c).await.unwrap()
}

/// Plays a real (tiny) self-play game from a lease and wraps it for submission.
fn game_from(lease: &pb::Lease, id: u128) -> pb::GameRecord {
    let start = BattleNumber::decode(&lease.start_state).unwrap();
    let settings = SelfPlaySettings {
        full_sims: 8,
        fast_sims: 2,
        resign_threshold: -2.0,
        ..SelfPlaySettings::default()
    };
    let g = play_game(&start, &settings, &Rollout::default(), lease.seed);
    zeroplay_worker::game_record(&g, format!("{id:032x}"), lease.seed, 0)
}

async fn status(c: &mut Client) -> pb::StatusResponse {
    c.status(pb::StatusRequest {}).await.unwrap().into_inner()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_and_roles_are_enforced() {
    let dir = tempfile::tempdir().unwrap();
    let run = start(config(dir.path())).await;
    let mut nobody = connect(run.addr, "not-a-valid-token-at-all");
    let e = nobody.status(pb::StatusRequest {}).await.unwrap_err();
    assert_eq!(e.code(), Code::Unauthenticated);
    // No token at all.
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{}", run.addr))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut bare = pb::coordinator_client::CoordinatorClient::new(channel);
    assert_eq!(bare.status(pb::StatusRequest {}).await.unwrap_err().code(), Code::Unauthenticated);
    // A trainer may not lease positions or submit games; a worker may not publish models.
    let mut trainer = connect(run.addr, TRAINER);
    let e = trainer
        .lease_positions(pb::LeaseRequest { worker_id: "x".into(), max_positions: 1 })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied);
    let mut worker = connect(run.addr, WORKER);
    let chunk = pb::PublishModelChunk {
        game_kind: "battlenumber".into(),
        encoding_version: 1,
        sha256: "00".into(),
        total_size: 1,
        data: vec![0],
        gate: None,
    };
    let e = worker.publish_model(tokio_stream::iter(vec![chunk])).await.unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied);
    // Wrong engine version.
    let e = worker
        .register(pb::RegisterRequest {
            name: "w".into(),
            slots: 1,
            engine_version: "0.0.0-other".into(),
            protocol: zeroplay_proto::PROTOCOL,
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    // A worker from before protocol 2 (it sends no protocol) learns why at once.
    let e = worker
        .register(pb::RegisterRequest {
            name: "w".into(),
            slots: 1,
            engine_version: engine::ENGINE_VERSION.into(),
            protocol: 0,
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::FailedPrecondition);
    assert!(
        e.message().contains("protocol 0")
            && e.message().contains(&format!("protocol {}", zeroplay_proto::PROTOCOL)),
        "{}",
        e.message()
    );
    // Unknown worker id.
    let e = worker
        .lease_positions(pb::LeaseRequest { worker_id: "ghost".into(), max_positions: 1 })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::NotFound);
    run.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn submissions_are_validated_deduplicated_durable_and_written_to_parquet() {
    let dir = tempfile::tempdir().unwrap();
    let run = start(config(dir.path())).await;
    let mut w = connect(run.addr, WORKER);
    let id = register(&mut w).await;
    let leases = w
        .lease_positions(pb::LeaseRequest { worker_id: id.clone(), max_positions: 3 })
        .await
        .unwrap()
        .into_inner()
        .leases;
    assert_eq!(leases.len(), 3);
    for l in &leases {
        BattleNumber::decode(&l.start_state).unwrap();
        assert!(l.settings.is_some() && l.ttl_ms > 0 && l.seed != 0);
    }

    // A valid game is acknowledged with its position count.
    let good = game_from(&leases[0], 1);
    let r = w
        .submit_game(pb::SubmitGameRequest {
            worker_id: id.clone(),
            lease_id: leases[0].lease_id,
            game: Some(good.clone()),
        })
        .await
        .unwrap();
    assert_eq!(r.into_inner().positions as usize, good.moves.len());
    // The same game again: ALREADY_EXISTS, stored once.
    let e = w
        .submit_game(pb::SubmitGameRequest { worker_id: id.clone(), lease_id: 0, game: Some(good.clone()) })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::AlreadyExists);

    // An illegal game: one action replaced by another that is not legal there.
    let mut bad = game_from(&leases[1], 2);
    let i = bad.moves.len() / 2;
    bad.moves[i].action = if bad.moves[i].action == "a0" { "g6".into() } else { "a0".into() };
    let e = w
        .submit_game(pb::SubmitGameRequest { worker_id: id.clone(), lease_id: 0, game: Some(bad) })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
    assert!(e.message().contains("illegal") || e.message().contains("cannot read"), "{}", e.message());
    // Malformed: a bad id, an unknown game, a truncated game (not finished).
    for mutate in [
        (|g: &mut pb::GameRecord| g.game_id = "XYZ".into()) as fn(&mut pb::GameRecord),
        |g| g.game_kind = "chess".into(),
        |g| {
            g.moves.pop();
        },
        |g| g.start_state = vec![1, 2, 3],
    ] {
        let mut g = game_from(&leases[2], 3);
        mutate(&mut g);
        let e = w
            .submit_game(pb::SubmitGameRequest { worker_id: id.clone(), lease_id: 0, game: Some(g) })
            .await
            .unwrap_err();
        assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
    }
    // Oversized: more moves than the limit, and a message over the size limit.
    let mut long = game_from(&leases[2], 4);
    while long.moves.len() <= 400 {
        long.moves.push(long.moves[0].clone());
    }
    let e = w
        .submit_game(pb::SubmitGameRequest { worker_id: id.clone(), lease_id: 0, game: Some(long) })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::ResourceExhausted, "{e:?}");
    let mut huge = game_from(&leases[2], 5);
    huge.engine_version = "x".repeat(300 * 1024);
    let e = w
        .submit_game(pb::SubmitGameRequest { worker_id: id.clone(), lease_id: 0, game: Some(huge) })
        .await
        .unwrap_err();
    assert!(matches!(e.code(), Code::ResourceExhausted | Code::OutOfRange | Code::Internal), "{e:?}");

    let s = status(&mut w).await;
    assert_eq!(s.games_stored, 1);
    assert_eq!(s.rejected_duplicate, 1);
    assert_eq!(s.rejected_invalid, 5);
    assert!(s.rejected_oversized >= 1);
    assert_eq!(s.leases_active, 2, "the first lease is finished by its game");

    // Restart: the game is still known (a resubmission is a duplicate) and it reaches Parquet.
    run.shutdown().await;
    let run = start(config(dir.path())).await;
    let mut w = connect(run.addr, WORKER);
    let id = register(&mut w).await;
    let e = w
        .submit_game(pb::SubmitGameRequest { worker_id: id.clone(), lease_id: 0, game: Some(good.clone()) })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::AlreadyExists);
    let s = status(&mut w).await;
    assert_eq!((s.games_stored, s.positions_in_parquet as usize, s.parquet_files), (1, good.moves.len(), 1));
    // The two unfinished leases were recovered and are handed out again first.
    let again = w
        .lease_positions(pb::LeaseRequest { worker_id: id, max_positions: 2 })
        .await
        .unwrap()
        .into_inner()
        .leases;
    let starts: Vec<&Vec<u8>> = again.iter().map(|l| &l.start_state).collect();
    assert!(starts.contains(&&leases[1].start_state) && starts.contains(&&leases[2].start_state));
    run.shutdown().await;
    let files: Vec<_> =
        std::fs::read_dir(dir.path().join("games")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(files.len(), 1, "{files:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unrenewed_leases_expire_and_are_handed_out_again() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    cfg.leases.ttl_ms = 300;
    cfg.leases.heartbeat_interval_ms = 100;
    let run = start(cfg).await;
    let mut w = connect(run.addr, WORKER);
    let a = register(&mut w).await;
    let b = register(&mut w).await;
    let first = w
        .lease_positions(pb::LeaseRequest { worker_id: a.clone(), max_positions: 2 })
        .await
        .unwrap()
        .into_inner()
        .leases;
    // Worker a keeps the first lease alive and lets the second lapse.
    for _ in 0..6 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let r = w
            .heartbeat(pb::HeartbeatRequest {
                worker_id: a.clone(),
                lease_ids: vec![first[0].lease_id],
                games_finished: 0,
            })
            .await
            .unwrap();
        assert!(r.into_inner().unknown_lease_ids.is_empty());
    }
    let s = status(&mut w).await;
    assert_eq!((s.leases_active, s.leases_expired, s.leases_queued), (1, 1, 1));
    let next = w
        .lease_positions(pb::LeaseRequest { worker_id: b, max_positions: 1 })
        .await
        .unwrap()
        .into_inner()
        .leases;
    assert_eq!(next[0].start_state, first[1].start_state, "the lapsed position is handed out again");
    assert_eq!(next[0].seed, first[1].seed);
    // The lapsed lease is unknown to a heartbeat now.
    let r = w
        .heartbeat(pb::HeartbeatRequest {
            worker_id: a,
            lease_ids: vec![first[1].lease_id],
            games_finished: 0,
        })
        .await
        .unwrap();
    assert_eq!(r.into_inner().unknown_lease_ids, vec![first[1].lease_id]);
    run.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn models_are_published_announced_and_downloaded_with_their_hash() {
    let dir = tempfile::tempdir().unwrap();
    let run = start(config(dir.path())).await;
    let mut trainer = connect(run.addr, TRAINER);
    let mut worker = connect(run.addr, WORKER);
    let mut announcements = worker.watch_models(pb::WatchModelsRequest {}).await.unwrap().into_inner();
    // A real model file (a fresh "small" network: several chunks of 100 kB).
    use engine::Features;
    let net_cfg = model::NetConfig::named("small").unwrap();
    let net =
        model::ValueNet::new(&net_cfg, BattleNumber::FEATURE_LEN, BattleNumber::POLICY_LEN, &model::cpu());
    let meta = model::ModelMeta::for_game::<BattleNumber>(net_cfg, 10.0, model::ModelInfo::default());
    let bytes = model::to_bytes(&net, &meta).unwrap();
    assert!(bytes.len() > 300_000);
    let sha = model::sha256_hex(&bytes);
    let chunks = |sha: &str, data: &[u8]| -> Vec<pb::PublishModelChunk> {
        data.chunks(100_000)
            .map(|c| pb::PublishModelChunk {
                game_kind: "battlenumber".into(),
                encoding_version: FEATURES,
                sha256: sha.into(),
                total_size: data.len() as u64,
                data: c.to_vec(),
                gate: None,
            })
            .collect()
    };
    // A wrong hash is refused and stores nothing.
    let e = trainer.publish_model(tokio_stream::iter(chunks(&"0".repeat(64), &bytes))).await.unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    // So is a file that hashes right but is not a model.
    let junk: Vec<u8> = (0..700_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let e = trainer
        .publish_model(tokio_stream::iter(chunks(&model::sha256_hex(&junk), &junk)))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().contains("not a usable model file"), "{}", e.message());
    // And a model whose weights hold a NaN: it would answer NaN for every position.
    let mut nan = bytes.clone();
    let head = u64::from_le_bytes(nan[..8].try_into().unwrap()) as usize;
    nan[8 + head..8 + head + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    let e =
        trainer.publish_model(tokio_stream::iter(chunks(&model::sha256_hex(&nan), &nan))).await.unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().contains("non-finite"), "{}", e.message());
    // And a lone tensor `x` declared as a Battle Number model (issue 42's probe: it became
    // the best model): every tensor the declared network needs is named as missing.
    let lone = {
        let d = [0u8; 4];
        let v = safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![1], &d).unwrap();
        let m: std::collections::HashMap<String, String> = meta.to_map().into_iter().collect();
        safetensors::serialize([("x", v)], Some(m)).unwrap()
    };
    let e = trainer
        .publish_model(tokio_stream::iter(chunks(&model::sha256_hex(&lone), &lone)))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().contains("`input.weight` is missing"), "{}", e.message());
    // And a model announced with another encoding version than it carries.
    let mut wrong = chunks(&sha, &bytes);
    for c in &mut wrong {
        c.encoding_version = 99;
    }
    let e = trainer.publish_model(tokio_stream::iter(wrong)).await.unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert_eq!(status(&mut worker).await.model_version, 0, "nothing was stored");
    let a = trainer.publish_model(tokio_stream::iter(chunks(&sha, &bytes))).await.unwrap().into_inner();
    assert_eq!((a.version, a.size_bytes, a.sha256.as_str()), (1, bytes.len() as u64, sha.as_str()));
    let heard =
        tokio::time::timeout(Duration::from_secs(5), announcements.next()).await.unwrap().unwrap().unwrap();
    assert_eq!(heard.version, 1);
    let mut got = Vec::new();
    let mut stream =
        worker.download_model(pb::DownloadModelRequest { version: 1 }).await.unwrap().into_inner();
    while let Some(c) = stream.next().await {
        let c = c.unwrap();
        assert_eq!(c.offset as usize, got.len());
        assert_eq!(c.sha256, sha);
        got.extend(c.data);
    }
    assert_eq!(got, bytes);
    assert_eq!(
        worker.download_model(pb::DownloadModelRequest { version: 9 }).await.unwrap_err().code(),
        Code::NotFound
    );
    assert_eq!(status(&mut worker).await.model_version, 1);
    // Shutdown ends the open watch stream instead of waiting on it.
    let t = std::time::Instant::now();
    run.shutdown().await;
    assert!(t.elapsed() < zeroplay_coordinator::SHUTDOWN_GRACE, "{:?}", t.elapsed());
    let rest = tokio::time::timeout(Duration::from_secs(5), announcements.next()).await.unwrap();
    assert!(!matches!(rest, Some(Ok(_))), "{rest:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_worker_plays_submits_and_spools_nothing_left_over() {
    let dir = tempfile::tempdir().unwrap();
    let run = start(config(dir.path())).await;
    let spool = dir.path().join("spool");
    let report = zeroplay_worker::run(
        WorkerConfig {
            coordinator: format!("http://{}", run.addr),
            token: WORKER.into(),
            slots: 2,
            spool_dir: spool.clone(),
            max_games: Some(6),
            ..WorkerConfig::default()
        },
        std::future::pending::<()>(),
    )
    .await
    .unwrap();
    assert!(report.games_submitted >= 6, "{report:?}");
    assert_eq!(report.games_spooled, 0);
    let mut w = connect(run.addr, WORKER);
    let s = status(&mut w).await;
    assert_eq!(s.games_stored, report.games_submitted);
    assert_eq!(s.leases_active, 0, "the worker handed back what it did not finish");
    run.shutdown().await;
    // Every stored game made it into Parquet exactly once.
    let total: u64 = std::fs::read_dir(dir.path().join("games"))
        .unwrap()
        .map(|e| {
            let f = std::fs::File::open(e.unwrap().path()).unwrap();
            parquet::file::reader::SerializedFileReader::new(f).map(|r| {
                use parquet::file::reader::FileReader;
                r.metadata().file_metadata().num_rows() as u64
            })
        })
        .map(Result::unwrap)
        .sum();
    assert_eq!(total, s.positions_stored);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_from_config_serves_https_to_a_client_that_trusts_the_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let (cert_pem, key_pem) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert_pem, cert.cert.pem()).unwrap();
    std::fs::write(&key_pem, cert.signing_key.serialize_pem()).unwrap();
    let mut cfg = config(&dir.path().join("run"));
    cfg.tls = Some(zeroplay_coordinator::config::TlsConfig { cert: cert_pem.clone(), key: key_pem });
    let run = start(cfg).await;
    let port = run.addr.port();
    let mut secure = client(&WorkerConfig {
        coordinator: format!("https://localhost:{port}"),
        token: WORKER.into(),
        ca_cert: Some(cert_pem),
        ..WorkerConfig::default()
    })
    .unwrap();
    assert_eq!(status(&mut secure).await.games_stored, 0);
    // Plain HTTP/2 to a TLS port fails.
    let mut plain = connect(run.addr, WORKER);
    assert!(plain.status(pb::StatusRequest {}).await.is_err());
    run.shutdown().await;
}

/// A real worker with 2 slots, running until the sender fires.
fn spawn_worker(
    addr: std::net::SocketAddr,
    spool: &Path,
) -> (
    oneshot::Sender<()>,
    tokio::task::JoinHandle<Result<zeroplay_worker::WorkerReport, zeroplay_worker::WorkerError>>,
) {
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let worker = tokio::spawn(zeroplay_worker::run(
        WorkerConfig {
            coordinator: format!("http://{addr}"),
            token: WORKER.into(),
            slots: 2,
            spool_dir: spool.to_path_buf(),
            ..WorkerConfig::default()
        },
        async {
            let _ = stop_rx.await;
        },
    ));
    (stop_tx, worker)
}

/// Publishes model bytes as the trainer.
async fn publish(c: &mut Client, bytes: &[u8]) -> Result<u64, tonic::Status> {
    zeroplay_worker::publish_model(c, "battlenumber", FEATURES, bytes, None).await
}

/// A fresh network's model file; `declare` overrides the size written into its metadata.
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

/// `model_version` of every stored row.
fn stored_model_versions(dir: &Path) -> Vec<u64> {
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir.join("games")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "parquet") {
            continue;
        }
        let r = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&p).unwrap())
            .unwrap()
            .build()
            .unwrap();
        for b in r {
            let b = b.unwrap();
            let col = b.column_by_name("model_version").unwrap();
            let col = col.as_any().downcast_ref::<arrow_array::UInt64Array>().unwrap();
            out.extend(col.values().iter().copied());
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_hot_load_published_models_and_keep_theirs_when_one_is_bad() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    // The network's value mixed with a playout (the model version is still recorded).
    cfg.games.get_mut(&GameKind::BattleNumber).unwrap().leaf = engine::LeafSettings::served();
    let run = start(cfg).await;
    let mut trainer = connect(run.addr, TRAINER);
    let admin = connect(run.addr, ADMIN);
    assert_eq!(publish(&mut trainer, &model_file(None)).await.unwrap(), 1);
    let (stop_tx, worker) = spawn_worker(run.addr, &dir.path().join("spool"));
    let wait_games = |n: u64| {
        let mut admin = admin.clone();
        async move {
            let t = std::time::Instant::now();
            while status(&mut admin).await.games_stored < n {
                assert!(t.elapsed() < Duration::from_secs(60), "games did not arrive");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    wait_games(4).await;
    // A model whose weights do not fit the network it declares is refused at publication
    // (issue 42: it used to be stored, announced and refused by every worker), gated or not;
    // the workers keep v1.
    let e = publish(&mut trainer, &model_file(Some("small"))).await.unwrap_err();
    assert!(e.code() == Code::InvalidArgument && e.message().contains("has shape"), "{e:?}");
    let gate = engine::gating::GateSettings::default();
    let e = zeroplay_worker::publish_model(
        &mut trainer,
        "battlenumber",
        FEATURES,
        &model_file(Some("small")),
        Some(&gate),
    )
    .await
    .unwrap_err();
    assert!(e.code() == Code::InvalidArgument && e.message().contains("has shape"), "{e:?}");
    assert_eq!(status(&mut admin.clone()).await.model_version, 1);
    let before = status(&mut admin.clone()).await.games_stored;
    wait_games(before + 6).await;
    let _ = stop_tx.send(());
    worker.await.unwrap().unwrap();
    run.shutdown().await;
    let versions = stored_model_versions(dir.path());
    assert!(!versions.is_empty());
    assert!(versions.iter().all(|&v| v <= 1), "a refused model was used: {:?}", versions.iter().max());
    let with_net = versions.iter().filter(|&&v| v == 1).count();
    assert!(
        with_net * 2 > versions.len(),
        "{with_net} of {} positions searched by the network",
        versions.len()
    );
}

async fn gate_status(c: &mut Client, v: u64) -> pb::GateStatusResponse {
    c.gate_status(pb::GateStatusRequest { version: v }).await.unwrap().into_inner()
}

/// Waits until candidate `v` is decided.
async fn decided(c: &mut Client, v: u64) -> pb::GateStatusResponse {
    let t = std::time::Instant::now();
    loop {
        let st = gate_status(c, v).await;
        if st.state != pb::GateState::Running as i32 {
            return st;
        }
        assert!(t.elapsed() < Duration::from_secs(120), "gating of v{v} did not finish: {st:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn candidates_are_gated_on_the_workers_and_only_promoted_ones_become_best() {
    use engine::gating::{GateRule, GateSettings};
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    cfg.games.get_mut(&GameKind::BattleNumber).unwrap().leaf = engine::LeafSettings::net_alone();
    // One worker plays every match here (one_worker_cannot_decide_a_gate bounds the share).
    cfg.leases.max_gate_share = 1.0;
    let run = start(cfg.clone()).await;
    let mut trainer = connect(run.addr, TRAINER);
    assert_eq!(publish(&mut trainer, &model_file(None)).await.unwrap(), 1, "ungated: best at once");
    // A candidate that promotes whatever it scores; published before any worker exists.
    let easy = GateSettings {
        rule: GateRule::Threshold,
        matches: 4,
        threshold: 0.0,
        sims: 8,
        ..GateSettings::default()
    };
    let v2_bytes = model_file(None);
    let v2 = zeroplay_worker::publish_model(&mut trainer, "battlenumber", FEATURES, &v2_bytes, Some(&easy))
        .await
        .unwrap();
    assert_eq!(v2, 2);
    let st = gate_status(&mut trainer, 2).await;
    assert_eq!(
        (st.state, st.opponent_version, st.matches, st.matches_max),
        (pb::GateState::Running as i32, 1, 0, 4)
    );
    assert_eq!(status(&mut trainer).await.model_version, 1, "a candidate is not the best");
    // Bad settings are refused, and so are reports that are not the worker's.
    let bad = GateSettings { sims: 0, ..easy.clone() };
    let e =
        zeroplay_worker::publish_model(&mut trainer, "battlenumber", FEATURES, &model_file(None), Some(&bad))
            .await
            .unwrap_err();
    assert!(e.code() == Code::InvalidArgument && e.message().contains("sims"), "{e:?}");
    let e = trainer.gate_status(pb::GateStatusRequest { version: 99 }).await.unwrap_err();
    assert_eq!(e.code(), Code::NotFound);
    // The coordinator restarts: the run starts again from its first match.
    run.shutdown().await;
    let run = start(cfg).await;
    let mut trainer = connect(run.addr, TRAINER);
    let admin = connect(run.addr, ADMIN);
    assert_eq!(gate_status(&mut trainer, 2).await.state, pb::GateState::Running as i32);
    let mut w = connect(run.addr, WORKER);
    let id = register(&mut w).await;
    let e = w
        .report_match(pb::ReportMatchRequest {
            worker_id: id,
            lease_id: 1 << 62,
            candidate_points: 1.0,
            plies: 0,
            games: vec![],
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::NotFound);
    let mut watch = admin.clone().watch_models(pb::WatchModelsRequest {}).await.unwrap().into_inner();
    assert_eq!(watch.next().await.unwrap().unwrap().version, 1);

    let (stop_tx, worker) = spawn_worker(run.addr, &dir.path().join("spool"));
    let st = decided(&mut trainer, 2).await;
    assert_eq!(st.state, pb::GateState::Promoted as i32, "{st:?}");
    assert_eq!((st.matches, st.opponent_version), (4, 1));
    assert!(st.reason.contains("over 4 matches"), "{st:?}");
    let ann = tokio::time::timeout(Duration::from_secs(10), watch.next()).await.unwrap().unwrap().unwrap();
    assert_eq!(ann.version, 2, "the promoted candidate is announced");
    assert_eq!(status(&mut trainer).await.model_version, 2);

    // A candidate that must win all 24 games of 12 side-swapped matches against the very same
    // weights (v2's bytes again; two different untrained networks are not equal players, and
    // one beat the other 12-0 once): refused, never announced, never used for self-play.
    let hard = GateSettings {
        rule: GateRule::Threshold,
        matches: 12,
        threshold: 1.0,
        sims: 8,
        seed: 11,
        ..GateSettings::default()
    };
    let v3 = zeroplay_worker::publish_model(&mut trainer, "battlenumber", FEATURES, &v2_bytes, Some(&hard))
        .await
        .unwrap();
    let st = decided(&mut trainer, v3).await;
    assert_eq!(st.state, pb::GateState::Rejected as i32, "{st:?}");
    assert_eq!(st.opponent_version, 2, "it played the new best");
    assert_eq!(status(&mut trainer).await.model_version, 2);
    // Self-play goes on with v2 for a few more games.
    let before = status(&mut trainer).await.games_stored;
    let t = std::time::Instant::now();
    while status(&mut trainer).await.games_stored < before + 2 {
        assert!(t.elapsed() < Duration::from_secs(60), "self-play stalled");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let _ = stop_tx.send(());
    let report = worker.await.unwrap().unwrap();
    assert!(report.evaluation_matches >= 5, "{report:?}");
    assert!(
        tokio::time::timeout(Duration::from_millis(300), watch.next()).await.is_err(),
        "nothing announced after v2"
    );
    run.shutdown().await;
    let versions = stored_model_versions(dir.path());
    assert!(versions.iter().all(|&v| v <= 2), "the rejected candidate was used for self-play");
    assert!(versions.contains(&2), "self-play switched to the promoted candidate");
}

/// Issue 42's second hole: a worker that reported 1.0 for every evaluation match it leased
/// got a candidate promoted on its word alone. Now it is handed at most its share of the
/// matches, reports whose games do not replay to their points are refused, and the gate is
/// decided by matches two honest workers played.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_worker_cannot_decide_a_gate() {
    use engine::gating::{GateRule, GateSettings};
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    cfg.games.get_mut(&GameKind::BattleNumber).unwrap().leaf = engine::LeafSettings::net_alone();
    assert_eq!(cfg.leases.max_gate_share, 0.5, "the default");
    let run = start(cfg).await;
    let mut trainer = connect(run.addr, TRAINER);
    assert_eq!(publish(&mut trainer, &model_file(None)).await.unwrap(), 1);
    // Promoted if it scores at least 0.9 of 4 matches: only a forger's wins would do it.
    let gate = GateSettings {
        rule: GateRule::Threshold,
        matches: 4,
        threshold: 0.9,
        sims: 8,
        ..GateSettings::default()
    };
    let v2 = zeroplay_worker::publish_model(
        &mut trainer,
        "battlenumber",
        FEATURES,
        &model_file(None),
        Some(&gate),
    )
    .await
    .unwrap();
    let mut forger = connect(run.addr, WORKER);
    let id = register(&mut forger).await;
    for round in 0..3 {
        let leases = forger
            .lease_positions(pb::LeaseRequest { worker_id: id.clone(), max_positions: 8 })
            .await
            .unwrap()
            .into_inner()
            .leases;
        let eval: Vec<&pb::Lease> = leases.iter().filter(|l| l.evaluation.is_some()).collect();
        assert_eq!(eval.len(), 2, "round {round}: half of the 4 matches, no more");
        for l in &eval {
            // A win with no games, then a win with a game of one placement.
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
                // The first refusal hands the match back, so the second finds no lease.
                assert!(matches!(e.code(), Code::InvalidArgument | Code::NotFound), "round {round}: {e:?}");
                if e.code() == Code::InvalidArgument {
                    assert!(e.message().contains("does not replay"), "{e:?}");
                }
            }
        }
        let st = gate_status(&mut trainer, v2).await;
        assert_eq!(
            (st.state, st.matches),
            (pb::GateState::Running as i32, 0),
            "round {round}: nothing counted"
        );
        let self_play: Vec<u64> =
            leases.iter().filter(|l| l.evaluation.is_none()).map(|l| l.lease_id).collect();
        forger
            .release_leases(pb::ReleaseRequest { worker_id: id.clone(), lease_ids: self_play })
            .await
            .unwrap();
    }
    // Two honest workers play the matches; the forger's refusals left its share free, but it
    // takes no more.
    let (stop_a, a) = spawn_worker(run.addr, &dir.path().join("spool-a"));
    let (stop_b, b) = spawn_worker(run.addr, &dir.path().join("spool-b"));
    let st = decided(&mut trainer, v2).await;
    assert_eq!(st.matches, 4, "{st:?}");
    let _ = (stop_a.send(()), stop_b.send(()));
    let (ra, rb) = (a.await.unwrap().unwrap(), b.await.unwrap().unwrap());
    assert!(ra.evaluation_matches >= 1 && rb.evaluation_matches >= 1, "each played its share: {ra:?} {rb:?}");
    assert_eq!(ra.evaluation_matches + rb.evaluation_matches, 4, "{ra:?} {rb:?}");
    let promoted = st.state == pb::GateState::Promoted as i32;
    assert_eq!(promoted, st.points >= 3.6, "decided by the replayed points: {st:?}");
    run.shutdown().await;
}

/// The test config with `kind` as its only game.
fn config_for(dir: &Path, kind: &str) -> CoordinatorConfig {
    let mut cfg = config(dir);
    let g = cfg.games.remove(&GameKind::BattleNumber).unwrap();
    cfg.games.insert(kind.parse().unwrap(), g);
    cfg
}

/// Registers a worker and leases two start positions, all of game `kind`.
async fn two_leases(run: &Running, kind: &str) -> (Client, String, Vec<pb::Lease>) {
    let mut w = connect(run.addr, WORKER);
    let id = register(&mut w).await;
    let leases = w
        .lease_positions(pb::LeaseRequest { worker_id: id.clone(), max_positions: 2 })
        .await
        .unwrap()
        .into_inner()
        .leases;
    assert_eq!(leases.len(), 2);
    assert!(leases.iter().all(|l| l.game_kind == kind));
    (w, id, leases)
}

/// Plays a lease's game with a small rollout search (no resignation), as a worker would
/// submit it under game id `id`.
fn play_lease<G: Game>(lease: &pb::Lease, id: u128, full_sims: u32) -> pb::GameRecord {
    let start = G::decode(&lease.start_state).unwrap();
    let settings =
        SelfPlaySettings { full_sims, fast_sims: 2, resign_threshold: -2.0, ..SelfPlaySettings::default() };
    let g = play_game(&start, &settings, &Rollout::default(), lease.seed);
    zeroplay_worker::game_record(&g, format!("{id:032x}"), lease.seed, 0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn banqi_games_are_leased_validated_against_their_deal_and_stored() {
    use engine::banqi::{Action, Banqi};
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config_for(dir.path(), "banqi");
    cfg.limits.max_moves = 4096;
    cfg.limits.max_message_bytes = 4 * 1024 * 1024;
    let run = start(cfg).await;
    let (mut w, id, leases) = two_leases(&run, "banqi").await;
    let play = |lease: &pb::Lease, id: u128| play_lease::<Banqi>(lease, id, 8);
    let good = play(&leases[0], 1);
    assert!(good.moves.iter().any(|m| m.chance), "a Banqi game has flips");
    let r = w
        .submit_game(pb::SubmitGameRequest {
            worker_id: id.clone(),
            lease_id: leases[0].lease_id,
            game: Some(good.clone()),
        })
        .await
        .unwrap();
    assert_eq!(r.into_inner().positions as usize, good.moves.len());

    // A worker that reveals another piece than the game's deal holds is refused, even where
    // the piece it claims is still face down (legal in itself).
    let mut forged = play(&leases[1], 2);
    let start = Banqi::decode(&leases[1].start_state).unwrap();
    let mut state = start.clone();
    let mut changed = false;
    for m in &mut forged.moves {
        let a = state.parse_action(&m.action).unwrap();
        if m.chance && !changed {
            let mut legal = Vec::new();
            state.legal_actions(&mut legal);
            if let Some(other) = legal.iter().find(|&&b| b != a) {
                assert!(matches!(other, Action::Reveal(_)));
                m.action = other.to_string();
                changed = true;
                break;
            }
        }
        state.play(a).unwrap();
    }
    assert!(changed);
    let e = w
        .submit_game(pb::SubmitGameRequest { worker_id: id.clone(), lease_id: 0, game: Some(forged) })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
    assert!(e.message().contains("deal"), "{}", e.message());
    run.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trigolden_games_are_leased_replayed_and_stored_and_bad_options_refused() {
    use engine::trigolden::TriGolden;
    let dir = tempfile::tempdir().unwrap();
    let cfg = config_for(dir.path(), "trigolden");
    // A shape table that cannot be read is a configuration error, named, before anything runs.
    let mut bad = cfg.clone();
    let pieces = dir.path().join("no-such-pieces.toml").display().to_string();
    let table = toml::Table::from_iter([("pieces".to_string(), toml::Value::from(pieces))]);
    bad.options = bad.options.with(engine::GameKind::TriGolden, table);
    let e = bad.validate().unwrap_err().to_string();
    assert!(e.contains("options.trigolden") && e.contains("no-such-pieces.toml"), "{e}");

    let run = start(cfg).await;
    let (mut w, id, leases) = two_leases(&run, "trigolden").await;
    let play = |lease: &pb::Lease, id: u128| play_lease::<TriGolden>(lease, id, 4);
    let good = play(&leases[0], 1);
    let r = w
        .submit_game(pb::SubmitGameRequest {
            worker_id: id.clone(),
            lease_id: leases[0].lease_id,
            game: Some(good.clone()),
        })
        .await
        .unwrap();
    assert_eq!(r.into_inner().positions as usize, good.moves.len());

    // A placement on a piece that is not on the board is refused at its ply.
    let mut forged = play(&leases[1], 2);
    let last =
        forged.moves.iter().rposition(|m| m.action.contains(':') && !m.action.starts_with("open")).unwrap();
    forged.moves[last].action = "99.0:A0".into();
    let e = w
        .submit_game(pb::SubmitGameRequest { worker_id: id.clone(), lease_id: 0, game: Some(forged) })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
    assert!(e.message().contains(&format!("ply {last}")), "{}", e.message());
    let s = status(&mut w).await;
    assert_eq!(s.games_stored, 1);
    run.shutdown().await;
    // The stored game's rows are in Parquet, with TriGolden states that decode.
    let files: Vec<_> = std::fs::read_dir(dir.path().join("games"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    assert_eq!(files.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_game_has_its_own_best_model_and_followers_keep_them_apart() {
    use engine::Features;
    use engine::banqi::Banqi;
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    let bn = cfg.games[&GameKind::BattleNumber].clone();
    cfg.games.insert(GameKind::Banqi, bn);
    let run = start(cfg).await;
    let mut trainer = connect(run.addr, TRAINER);
    let net_cfg = model::NetConfig::named("tiny").unwrap();
    let net = model::ValueNet::new(&net_cfg, Banqi::FEATURE_LEN, Banqi::POLICY_LEN, &model::cpu());
    let meta = model::ModelMeta::for_game::<Banqi>(net_cfg, 10.0, model::ModelInfo::default());
    let banqi_model = model::to_bytes(&net, &meta).unwrap();
    assert_eq!(publish(&mut trainer, &model_file(None)).await.unwrap(), 1);
    let v = zeroplay_worker::publish_model(&mut trainer, "banqi", Banqi::FEATURE_VERSION, &banqi_model, None)
        .await
        .unwrap();
    assert_eq!(v, 2);
    // A model of a game this coordinator does not play is refused, and stores nothing.
    {
        use engine::trigolden::TriGolden;
        let tg_cfg = model::NetConfig::named("tiny").unwrap();
        let tg = model::ValueNet::new(&tg_cfg, TriGolden::FEATURE_LEN, TriGolden::POLICY_LEN, &model::cpu());
        let tg_meta = model::ModelMeta::for_game::<TriGolden>(tg_cfg, 10.0, model::ModelInfo::default());
        let bytes = model::to_bytes(&tg, &tg_meta).unwrap();
        let e = zeroplay_worker::publish_model(
            &mut trainer,
            "trigolden",
            TriGolden::FEATURE_VERSION,
            &bytes,
            None,
        )
        .await
        .unwrap_err();
        assert_eq!(e.code(), Code::FailedPrecondition, "{e:?}");
        assert!(e.message().contains("not trigolden"), "{}", e.message());
    }
    // A watcher that connects now hears the best model of each game, not only the newest.
    let mut watcher = connect(run.addr, WORKER);
    let mut stream = watcher.watch_models(pb::WatchModelsRequest {}).await.unwrap().into_inner();
    let mut heard = Vec::new();
    for _ in 0..2 {
        let a =
            tokio::time::timeout(Duration::from_secs(10), stream.message()).await.unwrap().unwrap().unwrap();
        heard.push((a.game_kind, a.version));
    }
    heard.sort();
    assert_eq!(heard, [("banqi".to_string(), 2), ("battlenumber".to_string(), 1)]);
    // A follower puts each into its own slot; a follower of one game ignores the other.
    let slots = zeroplay_worker::ModelSlots::new(&[GameKind::BattleNumber, GameKind::Banqi]);
    let only_bn = zeroplay_worker::ModelSlots::new(&[GameKind::BattleNumber]);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let wcfg = WorkerConfig { coordinator: format!("http://{}", run.addr), ..WorkerConfig::default() };
    let mut tasks = Vec::new();
    for s in [slots.clone(), only_bn.clone()] {
        let (c, w, stop) = (connect(run.addr, WORKER), wcfg.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            let f = move || stop.load(std::sync::atomic::Ordering::Relaxed);
            zeroplay_worker::follow_models(c, s, w.backoff(), &f).await
        }));
    }
    let t = std::time::Instant::now();
    while slots.slot(GameKind::Banqi).unwrap().version() != 2
        || slots.slot(GameKind::BattleNumber).unwrap().version() != 1
        || only_bn.slot(GameKind::BattleNumber).unwrap().version() != 1
    {
        assert!(t.elapsed() < Duration::from_secs(30), "models not followed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(only_bn.slot(GameKind::Banqi).is_none());
    assert_eq!(slots.slot(GameKind::Banqi).unwrap().current().unwrap().model.meta.game, "banqi");
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    drop(stream);
    for t in tasks {
        t.abort();
    }
    run.shutdown().await;
}

/// Scrapes `path` on a metrics endpoint (blocking, off the runtime's threads).
async fn scrape(addr: std::net::SocketAddr, path: &'static str) -> (u16, String) {
    tokio::task::spawn_blocking(move || zeroplay_telemetry::http_get(addr, path)).await.unwrap().unwrap()
}

fn value(text: &str, series: &str) -> f64 {
    zeroplay_telemetry::sample(text, series).unwrap_or_else(|| panic!("no {series} in\n{text}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_and_health_follow_the_coordinator_and_a_worker() {
    let dir = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let metrics = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let maddr = metrics.local_addr().unwrap();
    let (tx, rx) = oneshot::channel::<()>();
    let task = tokio::spawn(zeroplay_coordinator::run_with_metrics(
        config(dir.path()),
        listener,
        Some(metrics),
        async {
            let _ = rx.await;
        },
    ));
    let run = Running { addr, stop: Some(tx), task };
    // Ready once the state is recovered and gRPC serves.
    let mut ready = false;
    for _ in 0..100 {
        if scrape(maddr, "/readyz").await.0 == 200 {
            ready = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(ready, "coordinator never became ready");
    assert_eq!(scrape(maddr, "/healthz").await.0, 200);

    // A worker with its own metrics endpoint (on a listener bound here, at port 0).
    let wlistener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let wport = wlistener.local_addr().unwrap();
    let (wstop, rx) = oneshot::channel::<()>();
    let worker = tokio::spawn(zeroplay_worker::run_with_metrics(
        WorkerConfig {
            coordinator: format!("http://{addr}"),
            token: WORKER.into(),
            slots: 2,
            spool_dir: dir.path().join("spool"),
            ..WorkerConfig::default()
        },
        Some(wlistener),
        async {
            let _ = rx.await;
        },
    ));
    let mut w = connect(addr, WORKER);
    let mut worker_text = String::new();
    for _ in 0..600 {
        // The worker binds its endpoint as it starts: refused until then.
        let got = tokio::task::spawn_blocking(move || zeroplay_telemetry::http_get(wport, "/metrics"))
            .await
            .unwrap();
        let Ok((code, text)) = got else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        if code == 200
            && zeroplay_telemetry::sample(&text, "zeroplay_worker_games_acknowledged_total").unwrap_or(0.0)
                >= 3.0
        {
            worker_text = text;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!worker_text.is_empty(), "the worker's metrics never showed 3 acknowledged games");
    assert_eq!(scrape(wport, "/readyz").await.0, 200, "a registered worker is ready");
    assert!(value(&worker_text, "zeroplay_worker_games_played_total") >= 3.0);
    assert!(value(&worker_text, "zeroplay_worker_positions_played_total") >= 3.0 * 10.0);
    assert_eq!(value(&worker_text, "zeroplay_worker_model_version{game=\"battlenumber\"}"), 0.0);
    wstop.send(()).unwrap();
    let report = worker.await.unwrap().unwrap();
    assert!(
        tokio::task::spawn_blocking(move || zeroplay_telemetry::http_get(wport, "/healthz"))
            .await
            .unwrap()
            .is_err(),
        "the worker's endpoint closes when it stops"
    );

    // The coordinator's counters agree with its Status RPC and with what the worker saw.
    let s = status(&mut w).await;
    let (code, text) = scrape(maddr, "/metrics").await;
    assert_eq!(code, 200);
    assert_eq!(value(&text, "zeroplay_coordinator_games_stored_total"), s.games_stored as f64);
    assert_eq!(s.games_stored, report.games_submitted);
    assert_eq!(value(&text, "zeroplay_coordinator_positions_stored_total"), s.positions_stored as f64);
    assert!(value(&text, "zeroplay_coordinator_submit_seconds_count") >= s.games_stored as f64);
    assert_eq!(value(&text, "zeroplay_coordinator_games_rejected_invalid_total"), 0.0);
    assert_eq!(value(&text, "zeroplay_coordinator_leases_active"), 0.0, "the worker handed its leases back");
    assert_eq!(value(&text, "zeroplay_coordinator_workers_alive"), 1.0);
    assert!(value(&text, "zeroplay_coordinator_leases_drawn_total") >= s.games_stored as f64);
    run.shutdown().await;
    assert!(
        tokio::task::spawn_blocking(move || zeroplay_telemetry::http_get(maddr, "/healthz"))
            .await
            .unwrap()
            .is_err(),
        "the coordinator's endpoint closes when it stops"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn default_tokens_beyond_loopback_and_a_second_coordinator_are_refused_before_writing() {
    // Built-in tokens on an address others can reach: refused, naming each one.
    let dir = tempfile::tempdir().unwrap();
    let open = CoordinatorConfig { data_dir: dir.path().to_path_buf(), ..CoordinatorConfig::default() };
    let wide = TcpListener::bind("0.0.0.0:0").await.unwrap();
    let e = zeroplay_coordinator::run(open.clone(), wide, async {}).await.unwrap_err().to_string();
    assert!(
        e.contains("auth.worker_token, auth.trainer_token, auth.admin_token are still the built-in default"),
        "{e}"
    );
    assert!(!dir.path().join("coordinator.resolved.toml").exists(), "refused before writing anything");
    // One of its own is not enough: every default is named.
    let mut one = open.clone();
    one.auth.admin_token = ADMIN.into();
    let e = zeroplay_coordinator::run(one, TcpListener::bind("0.0.0.0:0").await.unwrap(), async {})
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("auth.worker_token, auth.trainer_token are still"), "{e}");

    // A second coordinator on a running one's directory is refused and leaves its resolved
    // configuration as it was.
    let run = start(config(dir.path())).await;
    let resolved = dir.path().join("coordinator.resolved.toml");
    let mut tries = 0;
    while !resolved.exists() && tries < 100 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        tries += 1;
    }
    let before = std::fs::read_to_string(&resolved).unwrap();
    let mut other = config(dir.path());
    other.limits.max_moves = 77;
    let e = zeroplay_coordinator::run(other, TcpListener::bind("127.0.0.1:0").await.unwrap(), async {})
        .await
        .unwrap_err()
        .to_string();
    assert!(!e.is_empty());
    assert_eq!(
        std::fs::read_to_string(&resolved).unwrap(),
        before,
        "the running coordinator's file was rewritten"
    );
    assert!(before.contains("max_moves = 400"), "{before}");
    run.shutdown().await;

    // A data directory that cannot be made names its path.
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"x").unwrap();
    let mut bad = config(&file.join("sub"));
    bad.data_dir = file.join("sub");
    let e = zeroplay_coordinator::run(bad, TcpListener::bind("127.0.0.1:0").await.unwrap(), async {})
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("a-file/sub"), "{e}");
}

/// Issue 24, finding 4: a worker's game is checked against its lease, the lease's settings
/// and the versions the coordinator knows; each forgery the probe stored is refused now.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_must_match_a_lease_its_worker_holds_and_the_lease_settings() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    // Every lease the initial position, so one game's moves are legal under any lease.
    let g = cfg.games.get_mut(&GameKind::BattleNumber).unwrap();
    g.sources.random_opening = 0.0;
    g.sources.fork = 0.0;
    g.settings.resign_threshold = -0.9;
    g.settings.resign_consecutive = 2;
    let run = start(cfg).await;
    let mut w = connect(run.addr, WORKER);
    let me = register(&mut w).await;
    let other = register(&mut w).await;
    assert!(me.split_once('.').is_some_and(|(_, secret)| secret.len() == 32), "{me}");
    let c = w.clone();
    let lease = |worker: String| {
        let mut w = c.clone();
        async move {
            w.lease_positions(pb::LeaseRequest { worker_id: worker, max_positions: 1 })
                .await
                .unwrap()
                .into_inner()
                .leases
                .remove(0)
        }
    };
    let (l1, l2, theirs) = (lease(me.clone()).await, lease(me.clone()).await, lease(other.clone()).await);
    let submit = |worker: &str, lease_id: u64, game: pb::GameRecord| {
        let mut w = c.clone();
        let req = pb::SubmitGameRequest { worker_id: worker.to_string(), lease_id, game: Some(game) };
        async move { w.submit_game(req).await }
    };
    let refused =
        |r: Result<tonic::Response<pb::SubmitGameResponse>, tonic::Status>, code: Code, says: &str| {
            let e = r.expect_err("refused");
            assert_eq!(e.code(), code, "{e:?}");
            assert!(e.message().contains(says), "{:?} does not say {says:?}", e.message());
        };

    let good = game_from(&l1, 1);
    // Not played under a lease, or under one never handed out.
    refused(submit(&me, 0, good.clone()).await, Code::InvalidArgument, "no lease");
    refused(submit(&me, 9_999, good.clone()).await, Code::InvalidArgument, "never handed out");
    // An unregistered worker id, and the public part of a real one without its secret.
    refused(submit("ghost", l1.lease_id, good.clone()).await, Code::NotFound, "unknown worker");
    let public = me.split_once('.').unwrap().0;
    refused(submit(public, l1.lease_id, good.clone()).await, Code::NotFound, "unknown worker");
    // Another worker's lease: refused while it holds it (FAILED_PRECONDITION: a worker whose
    // lease expired while it played retries, and is taken once the lease is back in the queue).
    refused(
        submit(&me, theirs.lease_id, game_from(&theirs, 2)).await,
        Code::FailedPrecondition,
        "another worker",
    );
    // Seed, start position, engine and model versions, visit counts.
    let mut g = game_from(&l1, 3);
    g.seed ^= 1;
    refused(submit(&me, l1.lease_id, g).await, Code::InvalidArgument, "seed");
    let mut g = game_from(&l1, 3);
    let mut opened = BattleNumber::decode(&g.start_state).unwrap();
    let mut legal = Vec::new();
    opened.legal_actions(&mut legal);
    opened.play(legal[0]).unwrap();
    g.start_state = engine::game::to_bytes(&opened);
    g.moves.remove(0);
    refused(submit(&me, l1.lease_id, g).await, Code::InvalidArgument, "start position");
    let mut g = game_from(&l1, 3);
    g.engine_version = "0.0.0-forged".into();
    refused(submit(&me, l1.lease_id, g).await, Code::InvalidArgument, "0.0.0-forged");
    let mut g = game_from(&l1, 3);
    g.model_version = u64::MAX;
    refused(submit(&me, l1.lease_id, g).await, Code::InvalidArgument, "model version");
    let mut g = game_from(&l1, 3);
    let searched = g.moves.iter_mut().find(|m| !m.visits.is_empty()).unwrap();
    searched.visits[0].visits = u32::MAX;
    refused(submit(&me, l1.lease_id, g).await, Code::InvalidArgument, "root visits");
    // A 2-ply game "resigned" by seat 0, and a resignation without the values behind it.
    let mut g = game_from(&l1, 3);
    g.moves.truncate(2);
    g.resigned = true;
    g.resigned_seat = 0;
    g.resign_root_value = -1.0;
    refused(submit(&me, l1.lease_id, g).await, Code::InvalidArgument, "resigned");
    let s = status(&mut w).await;
    assert_eq!((s.games_stored, s.rejected_invalid), (0, 8), "{s:?}");

    // The real game is stored; its moves again under a new id and another lease are the same
    // game; a second game for a finished lease is a duplicate too.
    submit(&me, l1.lease_id, good.clone()).await.unwrap();
    let mut copy = good.clone();
    copy.game_id = format!("{:032x}", 77);
    copy.seed = l2.seed;
    refused(submit(&me, l2.lease_id, copy).await, Code::AlreadyExists, "same moves");
    refused(submit(&me, l1.lease_id, game_from(&l1, 4)).await, Code::AlreadyExists, "lease");
    // Its holder finishes the other worker's lease.
    submit(&other, theirs.lease_id, game_from(&theirs, 2)).await.unwrap();
    let s = status(&mut w).await;
    assert_eq!((s.games_stored, s.rejected_duplicate, s.rejected_invalid), (2, 2, 8), "{s:?}");
    run.shutdown().await;
}

/// Issue 24, finding 7: an upload goes to a file as it arrives (not into memory), at most
/// `limits.max_concurrent_uploads` are received at once, and an upload cut off leaves no file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_uploads_stream_to_disk_one_at_a_time() {
    use engine::Features;
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    cfg.limits.max_concurrent_uploads = 1;
    let run = start(cfg).await;
    let net_cfg = model::NetConfig::named("small").unwrap();
    let net =
        model::ValueNet::new(&net_cfg, BattleNumber::FEATURE_LEN, BattleNumber::POLICY_LEN, &model::cpu());
    let meta = model::ModelMeta::for_game::<BattleNumber>(net_cfg, 10.0, model::ModelInfo::default());
    let bytes = model::to_bytes(&net, &meta).unwrap();
    let sha = model::sha256_hex(&bytes);
    let chunk = |data: &[u8]| pb::PublishModelChunk {
        game_kind: "battlenumber".into(),
        encoding_version: FEATURES,
        sha256: sha.clone(),
        total_size: bytes.len() as u64,
        data: data.to_vec(),
        gate: None,
    };
    let parts = || -> Vec<std::path::PathBuf> {
        std::fs::read_dir(dir.path().join("models"))
            .map(|d| {
                d.map(|e| e.unwrap().path()).filter(|p| p.to_string_lossy().ends_with(".part")).collect()
            })
            .unwrap_or_default()
    };
    // Upload A sends its first 100 kB and stalls: the bytes are in a file already.
    let (tx, rx) = tokio::sync::mpsc::channel::<pb::PublishModelChunk>(4);
    tx.send(chunk(&bytes[..100_000])).await.unwrap();
    let mut a_client = connect(run.addr, TRAINER);
    let a =
        tokio::spawn(
            async move { a_client.publish_model(tokio_stream::wrappers::ReceiverStream::new(rx)).await },
        );
    let start = std::time::Instant::now();
    while parts().first().is_none_or(|p| std::fs::metadata(p).unwrap().len() < 100_000) {
        assert!(start.elapsed() < Duration::from_secs(10), "upload A's bytes never reached a file");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Upload B, complete, waits for A's turn.
    let mut b_client = connect(run.addr, TRAINER);
    let whole: Vec<_> = bytes.chunks(100_000).map(chunk).collect();
    let b = tokio::spawn(async move { b_client.publish_model(tokio_stream::iter(whole)).await });
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(!b.is_finished(), "upload B was received beside A");
    assert_eq!(parts().len(), 1, "only A's file exists");
    // A is cut off: its file goes, and B is received and stored.
    drop(tx);
    let e = a.await.unwrap().unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
    let stored =
        tokio::time::timeout(Duration::from_secs(20), b).await.unwrap().unwrap().unwrap().into_inner();
    assert_eq!((stored.version, stored.size_bytes), (1, bytes.len() as u64));
    assert!(parts().is_empty(), "no upload file is left: {:?}", parts());
    let kept = std::fs::read(dir.path().join("models/model-000001.bin")).unwrap();
    assert_eq!(model::sha256_hex(&kept), sha);
    run.shutdown().await;
}

/// A config where every lease is the initial position (one game's moves are legal under any).
fn initial_only(dir: &Path) -> CoordinatorConfig {
    let mut cfg = config(dir);
    let g = cfg.games.get_mut(&GameKind::BattleNumber).unwrap();
    g.sources.random_opening = 0.0;
    g.sources.fork = 0.0;
    g.settings.resign_threshold = -2.0;
    cfg
}

/// Issue 45: a position handed out again and finished under its old lease id leaves no lease
/// behind, across a restart too (a lease row left behind hands the finished position out once
/// more, and deterministic self-play then plays the same game twice).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_position_finished_under_an_old_lease_is_not_handed_out_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    cfg.leases.ttl_ms = 300;
    cfg.leases.heartbeat_interval_ms = 100;
    let run = start(cfg.clone()).await;
    let mut w = connect(run.addr, WORKER);
    let (a, b) = (register(&mut w).await, register(&mut w).await);
    let lease = |worker: &String| pb::LeaseRequest { worker_id: worker.clone(), max_positions: 1 };
    let old = w.lease_positions(lease(&a)).await.unwrap().into_inner().leases.remove(0);
    // a's lease lapses while it plays; the position goes to b under a new id.
    tokio::time::sleep(Duration::from_millis(700)).await;
    let again = w.lease_positions(lease(&b)).await.unwrap().into_inner().leases.remove(0);
    assert_eq!((again.seed, &again.start_state), (old.seed, &old.start_state));
    assert_ne!(again.lease_id, old.lease_id);
    // a brings its game under the old id: stored, and the position is done.
    let game = game_from(&old, 1);
    w.submit_game(pb::SubmitGameRequest { worker_id: a, lease_id: old.lease_id, game: Some(game) })
        .await
        .unwrap();
    let s = status(&mut w).await;
    assert_eq!((s.games_stored, s.leases_active, s.leases_queued), (1, 0, 0));
    run.shutdown().await;
    let run = start(cfg).await;
    let mut w = connect(run.addr, WORKER);
    let s = status(&mut w).await;
    assert_eq!(
        (s.games_stored, s.leases_active, s.leases_queued),
        (1, 0, 0),
        "the finished position is not queued again after the restart"
    );
    run.shutdown().await;
}

/// Issue 45: the move digests were kept only in memory, so after a restart a game with a
/// stored game's moves under a new id was stored again; and a lease whose game was refused as
/// such a repeat kept its row, so the restart handed its position out again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_repeating_stored_moves_is_refused_after_a_restart_too() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = initial_only(dir.path());
    let run = start(cfg.clone()).await;
    let mut w = connect(run.addr, WORKER);
    let a = register(&mut w).await;
    let take = |worker: &String, n| pb::LeaseRequest { worker_id: worker.clone(), max_positions: n };
    let leases = w.lease_positions(take(&a, 2)).await.unwrap().into_inner().leases;
    let first = game_from(&leases[0], 1);
    // The first lease's moves under another lease (its seed) and a new id.
    let copy_for = |lease: &pb::Lease, id: u128| {
        let mut g = first.clone();
        g.game_id = format!("{id:032x}");
        g.seed = lease.seed;
        g
    };
    let submit = |worker: &String, lease: &pb::Lease, game: pb::GameRecord| pb::SubmitGameRequest {
        worker_id: worker.clone(),
        lease_id: lease.lease_id,
        game: Some(game),
    };
    w.submit_game(submit(&a, &leases[0], first.clone())).await.unwrap();
    let e = w.submit_game(submit(&a, &leases[1], copy_for(&leases[1], 2))).await.unwrap_err();
    assert_eq!(e.code(), Code::AlreadyExists, "{e}");
    let s = status(&mut w).await;
    assert_eq!((s.games_stored, s.leases_active, s.leases_queued), (1, 0, 0));
    run.shutdown().await;

    let run = start(cfg).await;
    let mut w = connect(run.addr, WORKER);
    let s = status(&mut w).await;
    assert_eq!((s.leases_active, s.leases_queued), (0, 0), "the repeat's lease was finished for good");
    let a = register(&mut w).await;
    let fresh = w.lease_positions(take(&a, 1)).await.unwrap().into_inner().leases;
    let e = w.submit_game(submit(&a, &fresh[0], copy_for(&fresh[0], 3))).await.unwrap_err();
    assert_eq!(e.code(), Code::AlreadyExists, "{e}");
    assert!(e.message().contains("same moves"), "{e}");
    assert_eq!(status(&mut w).await.games_stored, 1);
    run.shutdown().await;
}

/// Issue 45: a holder of the worker token registering and leasing without playing grew the
/// coordinator's memory and database without end. Rounds of it stay bounded now.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registrations_and_leases_stay_bounded_under_churn() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    cfg.leases.ttl_ms = 300;
    cfg.leases.heartbeat_interval_ms = 100;
    cfg.leases.max_per_worker = 6;
    cfg.workers.max_per_address = 4;
    // Long enough that a registration outlives its own round of calls on a loaded machine.
    cfg.workers.forget_after_ms = 1200;
    let run = start(cfg).await;
    let mut w = connect(run.addr, WORKER);
    let db = dir.path().join("coordinator.redb");
    let mut sizes = Vec::new();
    for round in 0..6 {
        let mut ids = Vec::new();
        let mut refused = 0;
        for _ in 0..10 {
            match try_register(&mut w).await {
                Ok(id) => ids.push(id),
                Err(e) => {
                    assert_eq!(e.code(), Code::ResourceExhausted, "{e}");
                    refused += 1;
                }
            }
        }
        assert_eq!((ids.len(), refused), (4, 6), "round {round}: 4 from one address, the rest refused");
        for id in &ids {
            for _ in 0..3 {
                w.lease_positions(pb::LeaseRequest { worker_id: id.clone(), max_positions: 64 })
                    .await
                    .unwrap();
            }
        }
        let s = status(&mut w).await;
        assert_eq!(s.leases_active, 24, "round {round}: 4 workers x max_per_worker 6");
        assert!(
            s.leases_drawn <= 24,
            "round {round}: lapsed positions go out again first ({})",
            s.leases_drawn
        );
        sizes.push(std::fs::metadata(&db).unwrap().len());
        // Nobody plays: leases lapse and registrations are forgotten.
        tokio::time::sleep(Duration::from_millis(1800)).await;
    }
    assert!(
        sizes[5] <= sizes[1] + 512 * 1024,
        "the database grows with churn: {sizes:?} bytes after each round"
    );
    run.shutdown().await;
}
