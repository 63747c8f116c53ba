//! Coordinator configuration (see `configs/coordinator.toml` for a commented example).

use std::collections::BTreeMap;
use std::path::PathBuf;

use engine::selfplay::SelfPlaySettings;
use serde::{Deserialize, Serialize};

use crate::games::{GameKind, GameOptions};

/// The coordinator's configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CoordinatorConfig {
    /// Address to listen on (`host:port`; port 0 picks a free one).
    pub listen: String,
    /// Address (`host:port`) of the HTTP endpoints `/metrics` (Prometheus), `/healthz` and
    /// `/readyz`; none: not served.
    pub metrics_listen: Option<String>,
    /// Run directory: the database, `games/` (Parquet files) and the resolved config.
    pub data_dir: PathBuf,
    /// Base seed for position generation and game seeds.
    pub seed: u64,
    /// Bearer tokens per role.
    pub auth: AuthConfig,
    /// Lease timing.
    pub leases: LeaseConfig,
    /// Bounds on worker registrations.
    pub workers: WorkersConfig,
    /// Limits on submissions.
    pub limits: LimitsConfig,
    /// Parquet file rotation.
    pub parquet: ParquetConfig,
    /// Optional TLS.
    pub tls: Option<TlsConfig>,
    /// Per-game self-play settings and position sources, keyed by game kind name.
    pub games: BTreeMap<GameKind, GameConfig>,
    /// Rule options of every game (each [decision] of the rules files).
    pub options: GameOptions,
    /// Optional S3-compatible object storage: finished Parquet files (`games/`) and published
    /// models (`models/`) are mirrored to the bucket. Local disk stays the working copy.
    /// Keys come from `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY`, never from this file.
    pub storage: Option<zeroplay_storage::StorageConfig>,
    /// Limits on the connections held (`[connections]`): caps in all and per address,
    /// handshake and idle timeouts, the file descriptors kept for storage.
    pub connections: zeroplay_net::Connections,
    /// Spot checks of the root values workers store (`[checks]`): how many, the tolerance,
    /// when a worker is quarantined.
    pub checks: crate::checks::ChecksConfig,
}

/// Bearer tokens. Each must be at least 16 characters; the three must differ.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AuthConfig {
    /// Token of worker nodes.
    pub worker_token: String,
    /// Token of trainers.
    pub trainer_token: String,
    /// Token of administrators.
    pub admin_token: String,
}

impl Default for AuthConfig {
    fn default() -> Self {
        AuthConfig {
            worker_token: "change-me-worker-token".into(),
            trainer_token: "change-me-trainer-token".into(),
            admin_token: "change-me-admin-token".into(),
        }
    }
}

impl AuthConfig {
    /// The roles whose token is still the built-in default (known to anyone who reads this
    /// source): fine on loopback for a try-out, refused beyond it.
    pub fn defaults_in_use(&self) -> Vec<&'static str> {
        let d = AuthConfig::default();
        [
            ("worker_token", self.worker_token == d.worker_token),
            ("trainer_token", self.trainer_token == d.trainer_token),
            ("admin_token", self.admin_token == d.admin_token),
        ]
        .into_iter()
        .filter_map(|(name, same)| same.then_some(name))
        .collect()
    }
}

/// Largest `limits.max_message_bytes` accepted: a bound on what one message can make the
/// coordinator buffer.
pub const MAX_MESSAGE_BYTES_LIMIT: usize = 64 * 1024 * 1024;

/// Seconds between the HTTP/2 keepalive pings the coordinator sends on each connection: a
/// live peer answers, so a connection silent for longer than the idle timeout is dead.
pub const HTTP2_KEEPALIVE_S: u64 = 10;

/// Lease timing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LeaseConfig {
    /// A lease not renewed within this many milliseconds is handed out again.
    pub ttl_ms: u64,
    /// Workers send a heartbeat this often (milliseconds).
    pub heartbeat_interval_ms: u64,
    /// Most leases one request may take.
    pub max_per_request: u32,
    /// Stop drawing new positions after this many (leases handed back are still handed out
    /// again until finished); none: unlimited. Counted over the run directory's life.
    pub max_leases: Option<u64>,
    /// Most self-play leases one worker registration holds at once; a request beyond it gets
    /// fewer (or none). Bounds what a token holder who leases without playing can take.
    pub max_per_worker: u32,
    /// Most of one gating run's matches a worker registration plays, as a share of the run's
    /// matches (at least one match), so that no single worker decides a gate. 1.0: any (a
    /// single trusted worker; `zeroplay local` runs so). With fewer than `1 / max_gate_share`
    /// workers, gating waits for more.
    pub max_gate_share: f64,
}

impl Default for LeaseConfig {
    fn default() -> Self {
        LeaseConfig {
            ttl_ms: 30_000,
            heartbeat_interval_ms: 5_000,
            max_per_request: 64,
            max_leases: None,
            max_per_worker: 256,
            max_gate_share: 0.5,
        }
    }
}

/// Bounds on worker registrations: every `Register` call makes one, so without them a holder
/// of the worker token could grow the coordinator's memory without end.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorkersConfig {
    /// Most registrations from one IP address at once. At the cap, the address's registration
    /// silent the longest (for over three heartbeat intervals: a worker that died and came
    /// back) makes way; if none is, the call is refused (RESOURCE_EXHAUSTED).
    pub max_per_address: u32,
    /// Most registrations in all, with the same rule.
    pub max_registrations: u32,
    /// A registration that makes no call for this many milliseconds is forgotten (its worker
    /// registers again when it comes back). At least `leases.ttl_ms`.
    pub forget_after_ms: u64,
}

impl Default for WorkersConfig {
    fn default() -> Self {
        WorkersConfig { max_per_address: 64, max_registrations: 4096, forget_after_ms: 300_000 }
    }
}

/// Limits on submitted games.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LimitsConfig {
    /// Largest gRPC message accepted, in bytes.
    pub max_message_bytes: usize,
    /// Most moves (actions) in one game.
    pub max_moves: usize,
    /// A game whose moves from its start position equal a stored game's (under a new id):
    /// `refuse` it as a duplicate, or `store` it and count it
    /// (`games_repeated_moves`; e.g. for deterministic self-play that repeats games).
    pub repeated_games: RepeatedGames,
    /// Model uploads (PublishModel) received at once; more wait their turn. Each is streamed
    /// to disk, then read whole to be checked, so this bounds the memory uploads take.
    pub max_concurrent_uploads: usize,
}

/// What to do with a game that repeats a stored game's moves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RepeatedGames {
    /// Refuse it (ALREADY_EXISTS): the same game is stored once.
    #[default]
    Refuse,
    /// Store it and count it.
    Store,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        LimitsConfig {
            max_message_bytes: 4 * 1024 * 1024,
            max_moves: 4096,
            repeated_games: RepeatedGames::Refuse,
            max_concurrent_uploads: 2,
        }
    }
}

/// When to close a Parquet file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ParquetConfig {
    /// Write a file once this many positions are staged.
    pub rotate_positions: u64,
    /// Or once the oldest staged game is this many seconds old.
    pub rotate_seconds: u64,
}

impl Default for ParquetConfig {
    fn default() -> Self {
        ParquetConfig { rotate_positions: 50_000, rotate_seconds: 60 }
    }
}

/// TLS certificate and key (PEM files).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsConfig {
    /// Certificate chain, PEM.
    pub cert: PathBuf,
    /// Private key, PEM.
    pub key: PathBuf,
}

/// One game's self-play configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GameConfig {
    /// Share of leases for this game, relative to the other games.
    pub weight: f64,
    /// Search and self-play settings handed out with each position.
    pub settings: SelfPlaySettings,
    /// How self-play values its leaves (`[games.<game>.leaf]`): `evaluator = "net"` plays the
    /// latest published model (hot-swapped between moves; the rollout evaluator until one is
    /// published), "rollout" the user's AI, "uniform" nothing; with the network, `lambda` of
    /// one random playout is mixed into each leaf value (0, the default, is the network alone,
    /// which measured stronger after a run than 0.5 did: docs/benchmarks.md).
    pub leaf: engine::LeafSettings,
    /// Where start positions come from.
    pub sources: SourcesConfig,
}

impl Default for GameConfig {
    fn default() -> Self {
        GameConfig {
            weight: 1.0,
            settings: SelfPlaySettings::default(),
            leaf: engine::LeafSettings::rollout(),
            sources: SourcesConfig::default(),
        }
    }
}

impl GameConfig {
    /// The defaults for game `kind`: [`GameConfig::default`] with the game pack's
    /// [`engine::pack::Pack::selfplay`] laid over it (TriGolden: lighter searches; Banqi: taught
    /// by `banqi-ab`).
    ///
    /// # Panics
    /// If the game's pack does not fit this table (a test reads every game's).
    pub fn default_for(kind: GameKind) -> GameConfig {
        engine::pack::overlay(&GameConfig::default(), kind.pack().selfplay)
            .unwrap_or_else(|e| panic!("{kind}'s pack: selfplay: {e}"))
    }
}

/// Relative weights of the position sources.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SourcesConfig {
    /// The initial position.
    pub initial: f64,
    /// The initial position plus random plies.
    pub random_opening: f64,
    /// Fewest random plies.
    pub random_opening_min_plies: u32,
    /// Most random plies.
    pub random_opening_max_plies: u32,
    /// A position from an earlier game.
    pub fork: f64,
    /// A position from `user_file`.
    pub user_file_weight: f64,
    /// JSON lines, one position each: `{"game": "battlenumber", "state_hex": "<Game::encode bytes in hex>"}`.
    pub user_file: Option<PathBuf>,
}

impl Default for SourcesConfig {
    fn default() -> Self {
        SourcesConfig {
            initial: 1.0,
            random_opening: 1.0,
            random_opening_min_plies: 2,
            random_opening_max_plies: 16,
            fork: 0.5,
            user_file_weight: 0.0,
            user_file: None,
        }
    }
}

impl Default for CoordinatorConfig {
    fn default() -> Self {
        let mut games = BTreeMap::new();
        games.insert(GameKind::DEFAULT, GameConfig::default());
        CoordinatorConfig {
            listen: "127.0.0.1:50051".into(),
            metrics_listen: None,
            data_dir: PathBuf::from("runs/default"),
            seed: 1,
            auth: AuthConfig::default(),
            leases: LeaseConfig::default(),
            workers: WorkersConfig::default(),
            limits: LimitsConfig::default(),
            parquet: ParquetConfig::default(),
            tls: None,
            games,
            options: GameOptions::default(),
            storage: None,
            connections: zeroplay_net::Connections::default(),
            checks: crate::checks::ChecksConfig::default(),
        }
    }
}

/// A configuration that cannot run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("coordinator config: {0}")]
pub struct ConfigError(pub String);

impl CoordinatorConfig {
    /// Checks every value the types do not.
    ///
    /// # Errors
    /// [`ConfigError`] naming the bad value.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |m: String| Err(ConfigError(m));
        let a = &self.auth;
        for (name, t) in [
            ("worker_token", &a.worker_token),
            ("trainer_token", &a.trainer_token),
            ("admin_token", &a.admin_token),
        ] {
            if t.len() < 16 {
                return bad(format!("auth.{name} must be at least 16 characters"));
            }
        }
        if a.worker_token == a.trainer_token
            || a.worker_token == a.admin_token
            || a.trainer_token == a.admin_token
        {
            return bad("auth tokens must differ between roles".into());
        }
        self.connections.validate().map_err(|e| ConfigError(e.to_string()))?;
        if !(1..=64).contains(&self.limits.max_concurrent_uploads) {
            return bad("limits.max_concurrent_uploads must be in 1..=64".into());
        }
        if self.connections.idle_s < 2 * HTTP2_KEEPALIVE_S {
            return bad(format!(
                "connections.idle_s must be at least {} (twice the HTTP/2 keepalive ping interval)",
                2 * HTTP2_KEEPALIVE_S
            ));
        }
        if self.leases.ttl_ms < 100
            || self.leases.heartbeat_interval_ms == 0
            || self.leases.heartbeat_interval_ms >= self.leases.ttl_ms
        {
            return bad("leases: need ttl_ms >= 100 and 0 < heartbeat_interval_ms < ttl_ms".into());
        }
        if self.leases.max_per_request == 0 || self.leases.max_per_request > 4096 {
            return bad("leases.max_per_request must be in 1..=4096".into());
        }
        if !(self.leases.max_gate_share > 0.0 && self.leases.max_gate_share <= 1.0) {
            return bad(format!(
                "leases.max_gate_share must be in (0, 1], not {}",
                self.leases.max_gate_share
            ));
        }
        if self.leases.max_per_worker == 0 {
            return bad("leases.max_per_worker must be at least 1".into());
        }
        self.checks.validate().map_err(ConfigError)?;
        let w = &self.workers;
        if w.max_per_address == 0 || w.max_registrations < w.max_per_address {
            return bad("workers: need 1 <= max_per_address <= max_registrations".into());
        }
        if w.forget_after_ms < self.leases.ttl_ms {
            return bad(format!(
                "workers.forget_after_ms ({}) must be at least leases.ttl_ms ({}): a worker holding leases is not forgotten",
                w.forget_after_ms, self.leases.ttl_ms
            ));
        }
        if self.limits.max_message_bytes < 1024
            || self.limits.max_message_bytes > MAX_MESSAGE_BYTES_LIMIT
            || self.limits.max_moves == 0
        {
            return bad(format!(
                "limits: max_message_bytes must be in 1024..={MAX_MESSAGE_BYTES_LIMIT} (is {}) and max_moves >= 1",
                self.limits.max_message_bytes
            ));
        }
        if self.parquet.rotate_positions == 0 || self.parquet.rotate_seconds == 0 {
            return bad("parquet: rotate_positions and rotate_seconds must be positive".into());
        }
        if let Some(s) = &self.storage {
            s.validate().map_err(|e| ConfigError(e.to_string()))?;
        }
        if self.games.is_empty() {
            return bad("at least one game under [games]".into());
        }
        // Each game's options as its own folder reads them (TriGolden's may name a shape table
        // that must read).
        self.options.validate().map_err(ConfigError)?;
        for (name, g) in &self.games {
            g.settings.validate().map_err(|e| ConfigError(format!("games.{name}: {e}")))?;
            g.leaf.validate().map_err(|e| ConfigError(format!("games.{name}.leaf.{e}")))?;
            if let Some(t) =
                g.settings.teacher_spec().map_err(|e| ConfigError(format!("games.{name}: {e}")))?
            {
                // Building it is the check that its game has it; a `model=served` teacher is
                // built over the uniform evaluator here (its worker hands it its model slot).
                engine::with_game!(*name, |G| t
                    .build_with::<G>(&|_, _| {
                        Ok(std::sync::Arc::new(engine::eval::Uniform)
                            as std::sync::Arc<dyn engine::Evaluator<G>>)
                    })
                    .map(|_| ()))
                .map_err(|e| ConfigError(format!("games.{name}.settings.teacher: {e}")))?;
            }
            let s = &g.sources;
            let weights = [g.weight, s.initial, s.random_opening, s.fork, s.user_file_weight];
            if weights.iter().any(|w| !w.is_finite() || *w < 0.0) {
                return bad(format!("games.{name}: weights must be non-negative numbers"));
            }
            if s.initial + s.random_opening + s.fork + s.user_file_weight <= 0.0 {
                return bad(format!("games.{name}.sources: some weight must be positive"));
            }
            if s.random_opening_min_plies > s.random_opening_max_plies {
                return bad(format!("games.{name}.sources: random_opening_min_plies > max"));
            }
            if s.user_file_weight > 0.0 && s.user_file.is_none() {
                return bad(format!("games.{name}.sources: user_file_weight > 0 needs user_file"));
            }
        }
        if self.games.values().map(|g| g.weight).sum::<f64>() <= 0.0 {
            return bad("some game must have a positive weight".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_games_pack_lays_its_selfplay_defaults_over_the_tables() {
        for k in GameKind::ALL {
            let c =
                CoordinatorConfig { games: [(k, GameConfig::default_for(k))].into(), ..Default::default() };
            c.validate().unwrap_or_else(|e| panic!("{k}: {e}"));
        }
        let tg = GameConfig::default_for(GameKind::of::<engine::trigolden::TriGolden>());
        assert_eq!((tg.settings.full_sims, tg.settings.fast_sims), (200, 50));
        let bq = GameConfig::default_for(GameKind::of::<engine::banqi::Banqi>());
        assert_eq!(bq.settings.teacher, "banqi-ab:nodes=20000,model=served");
        assert_eq!(bq.leaf, GameConfig::default().leaf, "what the pack does not say keeps its default");
    }

    #[test]
    fn leaf_evaluator_settings_are_checked() {
        let mut c = CoordinatorConfig::default();
        c.validate().unwrap();
        let g = c.games.get_mut(&GameKind::BattleNumber).unwrap();
        g.leaf = engine::LeafSettings::net_alone();
        c.validate().unwrap();
        for bad_lambda in [-0.1, 1.5, f32::NAN] {
            c.games.get_mut(&GameKind::BattleNumber).unwrap().leaf.lambda = bad_lambda;
            let e = c.validate().unwrap_err().to_string();
            assert!(e.contains("games.battlenumber.leaf.lambda"), "{e}");
        }
        let e = toml::from_str::<CoordinatorConfig>("[games.battlenumber.leaf]\nevaluator = \"network\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("evaluator") && e.contains("rollout"), "{e}");
    }

    #[test]
    fn message_limits_are_bounded_and_default_tokens_are_named() {
        let mut c = CoordinatorConfig::default();
        assert_eq!(c.auth.defaults_in_use(), ["worker_token", "trainer_token", "admin_token"]);
        c.auth.admin_token = "an-admin-token-of-my-own".into();
        assert_eq!(c.auth.defaults_in_use(), ["worker_token", "trainer_token"]);
        for (bytes, ok) in [(1023, false), (1024, true), (MAX_MESSAGE_BYTES_LIMIT, true), (usize::MAX, false)]
        {
            c.limits.max_message_bytes = bytes;
            assert_eq!(c.validate().is_ok(), ok, "{bytes}");
        }
    }

    #[test]
    fn a_teacher_must_be_an_agent_of_its_game() {
        let parse = |text: &str| {
            let c: CoordinatorConfig = toml::from_str(text).unwrap();
            c.validate().map_err(|e| e.to_string())
        };
        parse("[games.banqi.settings]\nteacher = \"banqi-ab:nodes=20000\"\n").unwrap();
        let e = parse("[games.battlenumber.settings]\nteacher = \"banqi-ab:nodes=20000\"\n").unwrap_err();
        assert!(e.contains("games.battlenumber.settings.teacher") && e.contains("not an agent of"), "{e}");
        let e = parse("[games.banqi.settings]\nteacher = \"banqi-ab:nodes=x\"\n").unwrap_err();
        assert!(e.contains("teacher"), "{e}");
        // The worker's own model, not a file a worker would have to find.
        parse("[games.banqi.settings]\nteacher = \"banqi-ab:nodes=20000,model=served\"\n").unwrap();
        let e = parse("[games.banqi.settings]\nteacher = \"banqi-ab:nodes=20000,model=best.safetensors\"\n")
            .unwrap_err();
        assert!(e.contains("model file"), "{e}");
    }
}
