//! # zeroplay coordinator client
//!
//! Everything a process needs to talk to the coordinator, whatever its role: a connection with
//! the role's bearer token ([`connect`]), the retry delay ([`Backoff`]), publishing a model
//! ([`publish_model`]), downloading and checking one ([`download_version`]), following the
//! best model of each game into hot-swappable slots ([`ModelSlots`], [`follow_models`]).
//! The conversions between the wire and the engine are `zeroplay_proto::convert`, shared
//! with the coordinator (which must not link burn, as this crate does to load models).
//!
//! The worker, the trainer and the play server use it; none of them depends on another for
//! it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use engine::GameKind;
use engine::gating::GateSettings;
use model::ModelSlot;
use serde::{Deserialize, Serialize};
use tonic::Status;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};
use tracing::{debug, info, warn};
use zeroplay_proto::v1 as pb;
use zeroplay_proto::v1::coordinator_client::CoordinatorClient;

/// Where the coordinator is and how to prove the role.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClientConfig {
    /// Coordinator URL (`http://host:port`, or `https://` with TLS).
    pub coordinator: String,
    /// The role's bearer token.
    pub token: String,
    /// CA certificate (PEM) to trust for TLS; none: plain HTTP/2 or system roots.
    pub ca_cert: Option<PathBuf>,
}

/// A client that cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// Bad URL, token or certificate, or no runtime to connect from.
    #[error("coordinator client: {0}")]
    Config(String),
}

/// Retry delays: `initial_ms`, doubling per attempt up to `max_ms`.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Backoff {
    /// First delay, in milliseconds.
    pub initial_ms: u64,
    /// Longest delay, in milliseconds.
    pub max_ms: u64,
}

impl Backoff {
    /// The delay before retry number `attempt` (0 first).
    pub fn delay(&self, attempt: u32) -> Duration {
        let ms = self.initial_ms.saturating_mul(1u64 << attempt.min(16)).min(self.max_ms);
        Duration::from_millis(ms.max(1))
    }
}

/// Adds the bearer token to every call.
#[derive(Clone)]
pub struct Bearer(tonic::metadata::MetadataValue<tonic::metadata::Ascii>);

impl tonic::service::Interceptor for Bearer {
    fn call(&mut self, mut req: tonic::Request<()>) -> Result<tonic::Request<()>, Status> {
        req.metadata_mut().insert("authorization", self.0.clone());
        Ok(req)
    }
}

/// A coordinator client that sends the worker's token.
pub type Client = CoordinatorClient<InterceptedService<Channel, Bearer>>;

/// Builds a client for `cfg` (connects lazily and reconnects by itself).
///
/// The lazy channel spawns its connection task on the current Tokio runtime, so the caller
/// must be inside one (in an `async fn`, or under `Runtime::enter`).
///
/// # Errors
/// [`ClientError::Config`] for a bad URL, token or certificate, and when called outside a
/// Tokio runtime (which would otherwise panic deep in the transport).
pub fn connect(cfg: &ClientConfig) -> Result<Client, ClientError> {
    if tokio::runtime::Handle::try_current().is_err() {
        return Err(ClientError::Config(
            "a coordinator client needs a Tokio runtime (call it inside one)".into(),
        ));
    }
    let mut ep = Endpoint::from_shared(cfg.coordinator.clone())
        .map_err(|e| ClientError::Config(format!("coordinator URL {:?}: {e}", cfg.coordinator)))?
        .connect_timeout(Duration::from_secs(5))
        .timeout(Duration::from_secs(60))
        .tcp_nodelay(true);
    if let Some(ca) = &cfg.ca_cert {
        let pem =
            std::fs::read(ca).map_err(|e| ClientError::Config(format!("ca_cert {}: {e}", ca.display())))?;
        ep = ep
            .tls_config(ClientTlsConfig::new().ca_certificate(Certificate::from_pem(pem)))
            .map_err(|e| ClientError::Config(format!("TLS: {e}")))?;
    }
    let token = format!("Bearer {}", cfg.token)
        .parse()
        .map_err(|_| ClientError::Config("token must be printable ASCII".into()))?;
    Ok(CoordinatorClient::with_interceptor(ep.connect_lazy(), Bearer(token))
        .max_decoding_message_size(64 << 20))
}

/// Publishes a model file (trainer or admin token), streamed in 128 KiB chunks (under any
/// sane message limit). With `gate`, it is a candidate the coordinator gates on the workers
/// (follow it with `GateStatus`); without, it becomes the best at once. Returns the version
/// the coordinator gave it.
///
/// # Errors
/// The coordinator's refusal (bad file, wrong role) or a transport failure.
pub async fn publish_model(
    client: &mut Client,
    game_kind: &str,
    feature_version: u32,
    bytes: &[u8],
    gate: Option<&GateSettings>,
) -> Result<u64, Status> {
    let sha256 = model::sha256_hex(bytes);
    let gate = gate.map(zeroplay_proto::convert::gate_to_proto);
    let chunks: Vec<pb::PublishModelChunk> = bytes
        .chunks(128 << 10)
        .map(|c| pb::PublishModelChunk {
            game_kind: game_kind.into(),
            encoding_version: feature_version,
            sha256: sha256.clone(),
            total_size: bytes.len() as u64,
            data: c.to_vec(),
            gate: gate.clone(),
        })
        .collect();
    let r = client.publish_model(tokio_stream::iter(chunks)).await?;
    Ok(r.into_inner().version)
}

/// Downloads model `ann.version` and checks its size and SHA-256 against the announcement.
pub async fn download_model(client: &mut Client, ann: &pb::ModelAnnouncement) -> Result<Vec<u8>, String> {
    download_version(client, ann.version, Some((ann.size_bytes, ann.sha256.as_str()))).await
}

/// Downloads model `version`; checks size and SHA-256 against `expect`, or (without an
/// announcement) against what the chunks declare.
pub async fn download_version(
    client: &mut Client,
    version: u64,
    expect: Option<(u64, &str)>,
) -> Result<Vec<u8>, String> {
    let mut stream = client
        .download_model(pb::DownloadModelRequest { version })
        .await
        .map_err(|s| s.message().to_string())?
        .into_inner();
    let mut bytes = Vec::new();
    let mut declared: Option<(u64, String)> = expect.map(|(n, sha)| (n, sha.to_string()));
    while let Some(chunk) = stream.message().await.map_err(|s| s.message().to_string())? {
        if chunk.offset != bytes.len() as u64 {
            return Err(format!("chunk at offset {} after {} bytes", chunk.offset, bytes.len()));
        }
        let (size, _) = declared.get_or_insert_with(|| (chunk.total_size, chunk.sha256.clone()));
        if bytes.is_empty() {
            bytes.reserve((*size).min(model::file::MAX_MODEL_BYTES as u64) as usize);
        }
        bytes.extend_from_slice(&chunk.data);
        if bytes.len() > model::file::MAX_MODEL_BYTES {
            return Err("model larger than the limit".into());
        }
    }
    let (size, want) = declared.ok_or("empty download")?;
    if bytes.len() as u64 != size {
        return Err(format!("got {} bytes, announced {size}", bytes.len()));
    }
    let sha = model::sha256_hex(&bytes);
    if sha != want {
        return Err(format!("SHA-256 {sha} does not match the announced {want}"));
    }
    Ok(bytes)
}

/// Checks and loads model bytes for `kind` (on a blocking thread: this runs burn).
pub fn load_model(kind: GameKind, bytes: &[u8]) -> Result<model::Model, String> {
    engine::with_game!(kind, |G| model::load::<G>(bytes, &model::cpu()).map_err(|e| e.to_string()))
}

/// One model slot per game kind: a coordinator may run several games, each with its own
/// best model, and a network only ever evaluates positions of its own game.
#[derive(Clone, Debug, Default)]
pub struct ModelSlots(Vec<(GameKind, Arc<ModelSlot>)>);

impl ModelSlots {
    /// A slot for each of `kinds`.
    pub fn new(kinds: &[GameKind]) -> ModelSlots {
        ModelSlots(kinds.iter().map(|&k| (k, Arc::new(ModelSlot::new()))).collect())
    }

    /// Given slots, by kind (the play server's, which its AIs read).
    pub fn from_slots(slots: Vec<(GameKind, Arc<ModelSlot>)>) -> ModelSlots {
        ModelSlots(slots)
    }

    /// The slot of `kind`, if followed.
    pub fn slot(&self, kind: GameKind) -> Option<Arc<ModelSlot>> {
        self.0.iter().find(|(k, _)| *k == kind).map(|(_, s)| s.clone())
    }

    /// Every followed kind with its slot.
    pub fn kinds(&self) -> impl Iterator<Item = (GameKind, &Arc<ModelSlot>)> {
        self.0.iter().map(|(k, s)| (*k, s))
    }
}

/// Follows the coordinator's best model of each kind in `models` until `stop()` says so: every
/// newer model announced on `WatchModels` for a followed kind is downloaded, checked (size,
/// SHA-256, game and encoding version) and published to that kind's slot; a corrupt or
/// mismatched one is refused with a warning and the current one kept; other kinds are
/// ignored. Reconnects with `backoff`. Workers and the play server
/// (`zeroplay serve --coordinator`) both follow models this way.
pub async fn follow_models(
    mut client: Client,
    models: ModelSlots,
    backoff: Backoff,
    stop: &(dyn Fn() -> bool + Sync),
) {
    let mut attempt = 0;
    while !stop() {
        match client.watch_models(pb::WatchModelsRequest {}).await {
            Ok(resp) => {
                attempt = 0;
                let mut stream = resp.into_inner();
                while let Ok(Some(ann)) = stream.message().await {
                    let Some((kind, slot)) =
                        ann.game_kind.parse().ok().and_then(|k| Some((k, models.slot(k)?)))
                    else {
                        debug!(version = ann.version, kind = %ann.game_kind, "a model of a game not followed here");
                        continue;
                    };
                    if ann.version <= slot.version() {
                        continue;
                    }
                    let bytes = match download_model(&mut client, &ann).await {
                        Ok(b) => b,
                        Err(e) => {
                            warn!(version = ann.version, error = %e, "model download failed; keeping the current model");
                            continue;
                        }
                    };
                    match tokio::task::spawn_blocking(move || load_model(kind, &bytes)).await {
                        Ok(Ok(m)) => {
                            info!(version = ann.version, sha256 = %ann.sha256, "new model loaded; games switch at their next move");
                            slot.publish(ann.version, m);
                        }
                        Ok(Err(e)) => {
                            warn!(version = ann.version, error = %e, "model refused; keeping the current model")
                        }
                        Err(e) => {
                            warn!(version = ann.version, error = %e, "model loading crashed; keeping the current model")
                        }
                    }
                }
            }
            Err(s) => debug!(error = %s.message(), "cannot watch models"),
        }
        tokio::time::sleep(backoff.delay(attempt)).await;
        attempt += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_to_its_limit() {
        let b = Backoff { initial_ms: 200, max_ms: 1000 };
        let d: Vec<u128> = (0..5).map(|a| b.delay(a).as_millis()).collect();
        assert_eq!(d, [200, 400, 800, 1000, 1000]);
    }

    #[test]
    fn a_client_needs_a_runtime_and_a_printable_token() {
        let cfg = ClientConfig { coordinator: "http://127.0.0.1:1".into(), token: "t".into(), ca_cert: None };
        assert!(connect(&cfg).unwrap_err().to_string().contains("Tokio runtime"));
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let _in = rt.enter();
        assert!(connect(&cfg).is_ok());
        let bad = ClientConfig { token: "line\nbreak".into(), ..cfg.clone() };
        assert!(connect(&bad).is_err());
        let bad = ClientConfig { coordinator: "not a url".into(), ..cfg };
        assert!(connect(&bad).is_err());
    }
}
