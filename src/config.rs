//! Typed configuration for each command, read from commented TOML files in `configs/`, with
//! command-line flags layered on top. The resolved configuration is what runs, and what is
//! saved next to a run's results.

use std::path::Path;

use engine::spec::AgentSpec;
use serde::{Deserialize, Serialize};

use crate::args::SeatArg;
use engine::GameKind;

/// Errors reading a configuration file.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The TOML is malformed or has unknown or mistyped keys.
    #[error("config {path}: {source}")]
    Parse {
        /// The file.
        path: String,
        /// Why.
        source: Box<toml::de::Error>,
    },
    /// A value is out of range.
    #[error("config: {0}")]
    Invalid(String),
}

/// Options of every game, one table per game (`[options.battlenumber]`, `[options.trigolden]`):
/// the coordinator's type, so a file's `[options.*]` means the same to every command.
pub use zeroplay_coordinator::games::GameOptions;

/// `zeroplay arena` configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ArenaConfig {
    /// The game to play.
    pub game: GameKind,
    /// Agent A's spec string.
    pub agent_a: String,
    /// Agent B's spec string.
    pub agent_b: String,
    /// Matches to play (two games each, seats swapped).
    pub matches: u32,
    /// Base seed.
    pub seed: u64,
    /// Worker threads; 0 uses one per core.
    pub threads: usize,
    /// Each match starts from its own random opening of this many clicks (0: the initial
    /// position); both games of a match start from the same one.
    pub opening_plies: u32,
    /// Game options.
    pub options: GameOptions,
}

impl Default for ArenaConfig {
    fn default() -> Self {
        ArenaConfig {
            game: GameKind::DEFAULT,
            agent_a: "mcts:sims=800,eval=rollout".into(),
            agent_b: "mcts:sims=100,eval=rollout".into(),
            matches: 20,
            seed: 1,
            threads: 0,
            opening_plies: 0,
            options: GameOptions::default(),
        }
    }
}

impl ArenaConfig {
    /// Checks values that the types do not.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] naming the bad value.
    pub fn validate(&self) -> Result<(AgentSpec, AgentSpec), ConfigError> {
        if self.matches == 0 {
            return Err(ConfigError::Invalid("matches must be at least 1".into()));
        }
        if self.threads > 1024 {
            return Err(ConfigError::Invalid("threads must be at most 1024".into()));
        }
        self.options.validate().map_err(ConfigError::Invalid)?;
        let a = self.agent_a.parse().map_err(|e| ConfigError::Invalid(format!("agent_a: {e}")))?;
        let b = self.agent_b.parse().map_err(|e| ConfigError::Invalid(format!("agent_b: {e}")))?;
        Ok((a, b))
    }
}

/// `zeroplay play` configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PlayConfig {
    /// The agent you play against.
    pub agent: String,
    /// Your seat in game 1.
    pub seat: SeatArg,
    /// Seed for the agent.
    pub seed: u64,
    /// Game options.
    pub options: GameOptions,
}

impl Default for PlayConfig {
    fn default() -> Self {
        PlayConfig {
            agent: "mcts:time=1s,eval=rollout".into(),
            seat: SeatArg::First,
            seed: 1,
            options: GameOptions::default(),
        }
    }
}

/// Reads a TOML config file, or the defaults when `path` is `None`.
///
/// # Errors
/// [`ConfigError`] if the file cannot be read or parsed.
pub fn load<T: Default + for<'de> Deserialize<'de>>(path: Option<&Path>) -> Result<T, ConfigError> {
    let Some(path) = path else { return Ok(T::default()) };
    let text = std::fs::read_to_string(path)
        .map_err(|source| ConfigError::Read { path: path.display().to_string(), source })?;
    toml::from_str(&text)
        .map_err(|e| ConfigError::Parse { path: path.display().to_string(), source: Box::new(e) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_configs_parse() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let a: ArenaConfig = load(Some(&root.join("configs/arena.toml"))).unwrap();
        a.validate().unwrap();
        let p: PlayConfig = load(Some(&root.join("configs/play.toml"))).unwrap();
        p.agent.parse::<AgentSpec>().unwrap();
        let c: zeroplay_coordinator::CoordinatorConfig =
            load(Some(&root.join("configs/coordinator.toml"))).unwrap();
        c.validate().unwrap();
        assert_eq!(c, zeroplay_coordinator::CoordinatorConfig::default(), "the example shows the defaults");
        let w: zeroplay_worker::WorkerConfig = load(Some(&root.join("configs/worker.toml"))).unwrap();
        assert_eq!(w, zeroplay_worker::WorkerConfig::default(), "the example shows the defaults");
        let t: trainer::pipeline::PipelineConfig = load(Some(&root.join("configs/train.toml"))).unwrap();
        t.validate().unwrap();
        assert_eq!(t, trainer::pipeline::PipelineConfig::default(), "the example shows the defaults");
        // The trainer reads what the coordinator writes when both run on their shipped configs.
        assert_eq!(
            t.data_dir,
            c.data_dir.join("games"),
            "train.toml's data_dir is not the coordinator's games"
        );
        assert!(t.run_dir.starts_with(&c.data_dir), "train.toml's run_dir is outside the coordinator's run");
        // Gating measures a candidate as the agent players meet: one leaf recipe for both.
        let s: zeroplay_server::ServeConfig = load(Some(&root.join("configs/serve.toml"))).unwrap();
        s.validate().unwrap();
        assert_eq!(t.gate.leaf, s.leaf, "train.toml's [gate.leaf] is not serve.toml's [leaf]");
        assert_eq!(t.gate.leaf, engine::LeafSettings::served());
        assert_eq!(zeroplay_server::ServeConfig::default().leaf, engine::LeafSettings::served());
    }

    #[test]
    fn deployment_configs_parse_and_validate() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/k8s/base/config");
        let c: zeroplay_coordinator::CoordinatorConfig = load(Some(&root.join("coordinator.toml"))).unwrap();
        c.validate().unwrap();
        assert_eq!(
            c.games[&GameKind::BattleNumber].leaf.evaluator,
            engine::LeafEvaluator::Net,
            "cluster self-play uses the trained network"
        );
        let t: trainer::pipeline::PipelineConfig = load(Some(&root.join("train.toml"))).unwrap();
        t.validate().unwrap();
        let s: zeroplay_server::ServeConfig = load(Some(&root.join("serve.toml"))).unwrap();
        s.validate().unwrap();
        // The Secret's placeholders are valid tokens (so a trial deployment starts) and name
        // every role's variable.
        let env = std::fs::read_to_string(root.join("tokens.env")).unwrap();
        for var in ["ZEROPLAY_WORKER_TOKEN=", "ZEROPLAY_TRAINER_TOKEN=", "ZEROPLAY_ADMIN_TOKEN="] {
            let v = env.lines().find_map(|l| l.strip_prefix(var)).unwrap_or_else(|| panic!("{var} missing"));
            assert!(v.len() >= 16, "{var}{v}");
        }
        // The object-storage component's Secret, applied as the binaries apply it.
        let env = std::fs::read_to_string(root.join("../../components/s3/s3.env")).unwrap();
        let get = |k: &str| env.lines().find_map(|l| l.strip_prefix(&format!("{k}="))).map(str::to_string);
        let args = crate::args::StorageArgs {
            storage_url: get("ZEROPLAY_STORAGE_URL"),
            storage_endpoint: get("ZEROPLAY_STORAGE_ENDPOINT"),
            storage_allow_http: get("ZEROPLAY_STORAGE_ALLOW_HTTP").as_deref() == Some("true"),
        };
        let mut storage = c.storage.clone();
        args.apply(&mut storage).unwrap();
        storage.expect("a [storage] table").validate().unwrap();
        for k in ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"] {
            assert!(get(k).is_some_and(|v| !v.is_empty()), "{k} missing from s3.env");
        }
    }

    #[test]
    fn storage_flags_need_a_url() {
        use crate::args::StorageArgs;
        let mut none = None;
        let e = StorageArgs { storage_endpoint: Some("http://x:9000".into()), ..Default::default() }
            .apply(&mut none)
            .unwrap_err();
        assert!(e.to_string().contains("--storage-url"), "{e}");
        StorageArgs::default().apply(&mut none).unwrap();
        assert!(none.is_none(), "no flag, no [storage]");
        let mut some = None;
        StorageArgs { storage_url: Some("s3://b/p".into()), storage_allow_http: true, ..Default::default() }
            .apply(&mut some)
            .unwrap();
        let s = some.unwrap();
        assert_eq!((s.url.as_str(), s.allow_http), ("s3://b/p", true));
    }

    #[test]
    fn the_commented_storage_examples_parse_and_validate() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
        for file in ["coordinator.toml", "train.toml"] {
            let text = std::fs::read_to_string(root.join(file)).unwrap();
            let start =
                text.find("\n# [storage]\n").unwrap_or_else(|| panic!("{file}: no [storage] example"));
            let table: String = text[start + 1..]
                .lines()
                .take_while(|l| l.starts_with('#'))
                .filter(|l| !l.starts_with("# #"))
                .map(|l| format!("{}\n", l.trim_start_matches("# ")))
                .collect();
            let c: zeroplay_storage::StorageConfig = toml::from_str(table.trim_start_matches("[storage]\n"))
                .unwrap_or_else(|e| panic!("{file}: {e}\n{table}"));
            c.validate().unwrap_or_else(|e| panic!("{file}: {e}"));
        }
    }

    #[test]
    fn unknown_keys_and_bad_values_are_refused() {
        let e = toml::from_str::<ArenaConfig>("matchs = 3").unwrap_err();
        assert!(e.to_string().contains("matchs"), "{e}");
        // A game's options are read by the game itself, when the config is checked.
        let c: ArenaConfig = toml::from_str("[options.battlenumber]\nhole-rule = \"sometimes\"").unwrap();
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("options.battlenumber") && e.contains("sometimes"), "{e}");
        assert!(toml::from_str::<ArenaConfig>("[options.chess]\nx = 1").is_err(), "an unknown game");
        let c: ArenaConfig = toml::from_str("matches = 0").unwrap();
        assert!(c.validate().is_err());
        let c: ArenaConfig = toml::from_str("agent_a = \"mcts:sims=-3\"").unwrap();
        assert!(c.validate().unwrap_err().to_string().contains("agent_a"));
    }

    #[test]
    fn resolved_config_round_trips_through_toml() {
        let c = ArenaConfig::default();
        let text = toml::to_string(&c).unwrap();
        assert_eq!(toml::from_str::<ArenaConfig>(&text).unwrap(), c);
    }
}
