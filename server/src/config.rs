//! `zeroplay serve`'s configuration: the server's own settings, and one `[games.<name>]` table
//! per game (its model file and its AI), keyed by [`GameKind`] as the coordinator's are. The
//! keys of earlier releases (`model`, `banqi_model`, `trigolden_model`, `banqi_agent`,
//! `trigolden_agent`) are still read, moved into the tables by [`ServeConfig::migrate`] with a
//! deprecation warning.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use engine::spec::AgentSpec;
use engine::{GameKind, LeafSettings};
use serde::{Deserialize, Serialize};

/// One game as the play server serves it (`[games.<name>]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GameServeConfig {
    /// The game's model file, reloaded when it changes. With a coordinator, its best model of
    /// this game is followed instead. Without either, the model built into the binary where
    /// the game has one (Banqi's: `engine/src/banqi/builtin/README.md`), else the game's own AI (Battle
    /// Number: the user's rollout MCTS; TriGolden: `trigolden-user`).
    pub model: Option<PathBuf>,
    /// Without a model file or a coordinator, play with the game's built-in model (true, the
    /// default: the strongest agent measured); false: the game's own AI (Banqi: `banqi-ab`
    /// with its handcrafted evaluation).
    pub builtin: bool,
    /// The game's AI: `auto` (the default) or `net` for every game, or an agent spec where the
    /// game has other agents (its time is replaced by the game's):
    /// - Battle Number: `auto` and `net` are the same, MCTS with the model's leaves (the user's
    ///   rollout AI until there is a model).
    /// - TriGolden: `auto` is MCTS with the model's leaves, the network alone with half the
    ///   root's prior mass on the user's AI's candidate turns, once there is a model, and
    ///   `trigolden-user:clock=turn` until then (a turn fits the time asked); `net` is always
    ///   that MCTS; or `trigolden-user:…`, `trigolden-lite:…`, `mcts:…` without a network.
    /// - Banqi: `auto` is `banqi-ab` with the model at its leaves when it is a one-layer
    ///   `nano` network, else MCTS with the model's leaves, and `banqi-ab` until there is a
    ///   model; `net` is always MCTS (random playouts until there is a model); or
    ///   `banqi-ab[:…]`, always the expectiminimax searcher with its endgame tables.
    pub agent: String,
    /// The options of a new game that names none (`[games.<name>.options]`: the game's
    /// [decision] keys, as the play page sends them); none: the game's defaults.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub options: Option<toml::Table>,
}

/// [`GameServeConfig::builtin`]'s default, also [`ServeConfig::model_source`]'s answer for a
/// game the configuration has no table for.
const BUILTIN_DEFAULT: bool = true;

impl Default for GameServeConfig {
    fn default() -> Self {
        GameServeConfig { model: None, builtin: BUILTIN_DEFAULT, agent: "auto".into(), options: None }
    }
}

impl GameServeConfig {
    /// The options as the JSON a play request carries (`null`: the game's defaults).
    pub fn options_json(&self) -> serde_json::Value {
        self.options
            .as_ref()
            .map_or(serde_json::Value::Null, |t| serde_json::to_value(t).expect("a TOML table is JSON"))
    }
}

/// `zeroplay serve` configuration (see `configs/serve.toml`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServeConfig {
    /// Address to listen on.
    pub listen: String,
    /// Follow the best model of this coordinator (`http://host:port`).
    pub coordinator: Option<String>,
    /// The token for the coordinator (any role may watch and download models).
    pub token: String,
    /// Each game's model file and AI (`[games.<name>]`); a game left out takes
    /// [`GameServeConfig::default`].
    pub games: BTreeMap<GameKind, GameServeConfig>,
    /// How often to look at the model files for changes (milliseconds).
    pub model_poll_ms: u64,
    /// Games held at once, in all.
    pub max_games: usize,
    /// Games held at once per client address, at most. While many addresses play, each gets
    /// its share instead: `max_games` over the addresses holding games (a newcomer counted),
    /// so a flood from a few dozen addresses cannot fill the server.
    pub max_games_per_client: usize,
    /// A game untouched for this long is dropped (seconds).
    pub idle_timeout_s: u64,
    /// With `max_games` held, a new game replaces a game where no click was ever played and
    /// that has been idle at least this long (seconds) — one of the address holding the most
    /// games first: a flood of games nobody plays gives way to new players within seconds.
    pub unplayed_idle_s: u64,
    /// AI time per move when a request names none (milliseconds).
    pub default_ai_ms: u64,
    /// Longest AI time per move a request may ask for (milliseconds).
    pub max_ai_ms: u64,
    /// Largest request body (bytes).
    pub max_body_bytes: usize,
    /// How the AI of a game with a network values its leaves (`[leaf]`; the evaluator is
    /// always the network once a model is loaded). The default, [`LeafSettings::served`], is
    /// what the trainer gates candidates with.
    pub leaf: LeafSettings,
    /// Deprecated: `[games.battlenumber.options]`. Read for one release.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub options: Option<GameDefaults>,
    /// Limits on the connections held (`[connections]`): caps in all and per address,
    /// handshake and idle timeouts. The idle timeout must outlast `max_ai_ms`, as nothing
    /// crosses the connection while the AI thinks.
    pub connections: zeroplay_net::Connections,
    /// The designer's balance report to serve at `/report` (and `/report.json`): the
    /// directory `zeroplay report` wrote (`runs/NAME/report`). Unset: the report of the run a
    /// served model file comes from (`runs/NAME/trainer/models/…` → `runs/NAME/report`), if
    /// there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<PathBuf>,
    /// Deprecated: `[games.battlenumber] model`. Read for one release.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<PathBuf>,
    /// Deprecated: `[games.banqi] model`. Read for one release.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub banqi_model: Option<PathBuf>,
    /// Deprecated: `[games.trigolden] model`. Read for one release.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigolden_model: Option<PathBuf>,
    /// Deprecated: `[games.banqi] agent`. Read for one release.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub banqi_agent: Option<String>,
    /// Deprecated: `[games.trigolden] agent`. Read for one release.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigolden_agent: Option<String>,
}

/// Deprecated `[options.<name>]` tables of earlier releases: options used when a new game
/// names none.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GameDefaults {
    /// Battle Number's [decision] options.
    pub battlenumber: engine::battlenumber::Options,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            listen: "127.0.0.1:8080".into(),
            coordinator: None,
            token: "change-me-worker-token".into(),
            games: GameKind::ALL.into_iter().map(|k| (k, GameServeConfig::default())).collect(),
            model_poll_ms: 2000,
            max_games: 1000,
            max_games_per_client: 20,
            idle_timeout_s: 3600,
            unplayed_idle_s: 2,
            default_ai_ms: 1000,
            max_ai_ms: 10_000,
            max_body_bytes: 16 * 1024,
            leaf: LeafSettings::served(),
            options: None,
            connections: zeroplay_net::Connections::default(),
            report: None,
            model: None,
            banqi_model: None,
            trigolden_model: None,
            banqi_agent: None,
            trigolden_agent: None,
        }
    }
}

impl ServeConfig {
    /// `kind`'s table (the defaults when the configuration leaves it out).
    pub fn game(&self, kind: GameKind) -> GameServeConfig {
        self.games.get(&kind).cloned().unwrap_or_default()
    }

    /// `kind`'s model file, if the configuration names one.
    pub fn model_file(&self, kind: GameKind) -> Option<&Path> {
        self.games.get(&kind).and_then(|g| g.model.as_deref())
    }

    /// Where `kind`'s model comes from: its file, else the coordinator, else the game's
    /// built-in model (where it has one and `builtin` is on), else none.
    pub fn model_source(&self, kind: GameKind) -> ModelSource {
        // Read in place: `game` would clone the table on every `/api/info` request.
        let builtin_on = self.games.get(&kind).map_or(BUILTIN_DEFAULT, |g| g.builtin);
        match self.model_file(kind) {
            Some(path) => ModelSource::File(path.to_path_buf()),
            None if self.coordinator.is_some() => ModelSource::Coordinator,
            None if builtin_on && model::builtin::bytes(kind).is_some() => ModelSource::Builtin,
            None => ModelSource::None,
        }
    }

    /// This configuration with `kind`'s model file set (no coordinator then).
    pub fn with_model(mut self, kind: GameKind, path: impl Into<PathBuf>) -> ServeConfig {
        self.games.entry(kind).or_default().model = Some(path.into());
        self
    }

    /// This configuration with `kind`'s AI set.
    pub fn with_agent(mut self, kind: GameKind, agent: &str) -> ServeConfig {
        self.games.entry(kind).or_default().agent = agent.into();
        self
    }

    /// Forgets every model file (a coordinator's models are followed instead).
    pub fn clear_model_files(&mut self) {
        for g in self.games.values_mut() {
            g.model = None;
        }
    }

    /// Moves the keys of earlier releases into the `[games.<name>]` tables, returning one
    /// warning per key moved (the server logs them).
    ///
    /// # Errors
    /// A key given both ways with different values: which one was meant is not clear.
    pub fn migrate(&mut self) -> Result<Vec<String>, String> {
        let mut warnings = Vec::new();
        let moves = [
            ("model", GameKind::BattleNumber, self.model.take()),
            ("banqi_model", GameKind::Banqi, self.banqi_model.take()),
            ("trigolden_model", GameKind::TriGolden, self.trigolden_model.take()),
        ];
        for (key, kind, path) in moves {
            let Some(path) = path else { continue };
            let g = self.games.entry(kind).or_default();
            if g.model.as_ref().is_some_and(|m| *m != path) {
                return Err(format!(
                    "{key} and [games.{kind}] model name different files: keep the [games.{kind}] one"
                ));
            }
            g.model = Some(path);
            warnings.push(format!("`{key}` is deprecated: write `model` under [games.{kind}]"));
        }
        for (key, kind, agent) in [
            ("banqi_agent", GameKind::Banqi, self.banqi_agent.take()),
            ("trigolden_agent", GameKind::TriGolden, self.trigolden_agent.take()),
        ] {
            let Some(agent) = agent else { continue };
            let g = self.games.entry(kind).or_default();
            if g.agent != "auto" && g.agent != agent {
                return Err(format!("{key} and [games.{kind}] agent differ: keep the [games.{kind}] one"));
            }
            g.agent = agent;
            warnings.push(format!("`{key}` is deprecated: write `agent` under [games.{kind}]"));
        }
        if let Some(GameDefaults { battlenumber }) = self.options.take() {
            let kind = GameKind::BattleNumber;
            let g = self.games.entry(kind).or_default();
            let table = toml::Table::try_from(battlenumber).map_err(|e| e.to_string())?;
            if g.options.as_ref().is_some_and(|o| *o != table) {
                return Err(format!("[options.{kind}] and [games.{kind}.options] differ: keep the second"));
            }
            g.options = Some(table);
            warnings.push(format!("`[options.{kind}]` is deprecated: write [games.{kind}.options]"));
        }
        Ok(warnings)
    }

    /// Checks the settings (after [`ServeConfig::migrate`]).
    ///
    /// # Errors
    /// A message naming the bad setting.
    pub fn validate(&self) -> Result<(), String> {
        if self.model.is_some()
            || self.banqi_model.is_some()
            || self.trigolden_model.is_some()
            || self.banqi_agent.is_some()
            || self.trigolden_agent.is_some()
            || self.options.is_some()
        {
            return Err("deprecated keys are set: call ServeConfig::migrate first".into());
        }
        if self.coordinator.is_some() && self.games.values().any(|g| g.model.is_some()) {
            return Err("give a coordinator or model files, not both".into());
        }
        if self.max_games == 0 || self.max_games_per_client == 0 {
            return Err("max_games and max_games_per_client must be at least 1".into());
        }
        if self.default_ai_ms == 0 || self.default_ai_ms > self.max_ai_ms {
            return Err("default_ai_ms must be between 1 and max_ai_ms".into());
        }
        self.connections.validate().map_err(|e| e.to_string())?;
        if self.connections.idle_s.saturating_mul(1000) <= self.max_ai_ms {
            return Err(format!(
                "connections.idle_s ({} s) must exceed max_ai_ms ({} ms): a connection is silent while the AI thinks",
                self.connections.idle_s, self.max_ai_ms
            ));
        }
        self.leaf.validate().map_err(|e| format!("leaf.{e}"))?;
        if self.leaf.evaluator != engine::LeafEvaluator::Net {
            return Err(
                "leaf.evaluator must be \"net\" (without a model the AI is the rollout AI anyway)".into()
            );
        }
        for (&kind, g) in &self.games {
            check_agent(kind, &g.agent).map_err(|e| format!("[games.{kind}] agent: {e}"))?;
            engine::with_game!(kind, |G| {
                use engine::pack::GamePack;
                G::options_from_json(&g.options_json(), &Default::default()).map(drop)
            })
            .map_err(|e| format!("[games.{kind}.options]: {e}"))?;
        }
        Ok(())
    }
}

/// Whether `agent` is one `kind`'s table may name.
fn check_agent(kind: GameKind, agent: &str) -> Result<(), String> {
    if agent == "auto" || agent == "net" {
        return Ok(());
    }
    let spec = agent.parse::<AgentSpec>().map_err(|e| e.to_string())?;
    if spec.uses_net() {
        return Err("for the network say \"net\" or \"auto\" and give the model".into());
    }
    // The families the game's pack lets the server serve.
    let pack = kind.pack();
    if pack.served_agents.contains(&spec.family()) {
        return Ok(());
    }
    if pack.served_agents.is_empty() {
        return Err(format!("{}'s AI is auto or net", pack.title));
    }
    let listed: Vec<String> = pack.served_agents.iter().map(|f| format!("{f}[:...]")).collect();
    Err(format!("auto, net or {}", listed.join(", ")))
}

/// Where a game's served model comes from ([`ServeConfig::model_source`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelSource {
    /// A model file, reloaded when it changes.
    File(PathBuf),
    /// The coordinator's best model, followed as it is promoted.
    Coordinator,
    /// The model built into the binary ([`model::builtin`]).
    Builtin,
    /// No model: the game's AI plays without a network.
    None,
}

impl ModelSource {
    /// Its name in `/api/info`'s `model_sources` (`null` for none).
    pub fn name(&self) -> Option<&'static str> {
        match self {
            ModelSource::File(_) => Some("file"),
            ModelSource::Coordinator => Some("coordinator"),
            ModelSource::Builtin => Some("builtin"),
            ModelSource::None => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn games_tables_read_and_old_keys_move_into_them_with_a_warning() {
        let cfg: ServeConfig = toml::from_str(
            "[games.banqi]\nmodel = \"bq.safetensors\"\nagent = \"banqi-ab:flips=6\"\n\n[games.trigolden]\nagent = \"net\"\n",
        )
        .unwrap();
        assert_eq!(cfg.model_file(GameKind::Banqi), Some(Path::new("bq.safetensors")));
        assert_eq!(cfg.game(GameKind::Banqi).agent, "banqi-ab:flips=6");
        assert_eq!(cfg.game(GameKind::TriGolden).agent, "net");
        // A table left out is the defaults.
        assert_eq!(cfg.game(GameKind::BattleNumber), GameServeConfig::default());
        cfg.validate().unwrap();

        let mut old: ServeConfig = toml::from_str(
            "model = \"bn.safetensors\"\nbanqi_model = \"bq.safetensors\"\ntrigolden_agent = \"trigolden-lite\"\n",
        )
        .unwrap();
        assert!(old.validate().unwrap_err().contains("migrate"));
        let warnings = old.migrate().unwrap();
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        assert!(
            warnings[0].contains("`model` is deprecated") && warnings[0].contains("[games.battlenumber]")
        );
        assert_eq!(old.model_file(GameKind::BattleNumber), Some(Path::new("bn.safetensors")));
        assert_eq!(old.model_file(GameKind::Banqi), Some(Path::new("bq.safetensors")));
        assert_eq!(old.game(GameKind::TriGolden).agent, "trigolden-lite");
        old.validate().unwrap();
        // Saved, it is written the new way only.
        let text = toml::to_string(&old).unwrap();
        assert!(text.contains("[games.banqi]") && !text.contains("banqi_model"), "{text}");

        // Both ways with different values: refused, naming the table to keep.
        let mut both: ServeConfig =
            toml::from_str("banqi_model = \"a\"\n[games.banqi]\nmodel = \"b\"\n").unwrap();
        assert!(both.migrate().unwrap_err().contains("[games.banqi]"));
        // An unknown game or key is a parse error, as everywhere.
        assert!(toml::from_str::<ServeConfig>("[games.chess]\nmodel = \"x\"\n").is_err());
        assert!(toml::from_str::<ServeConfig>("[games.banqi]\nmodle = \"x\"\n").is_err());
    }

    #[test]
    fn options_live_in_each_games_table_and_are_checked_by_the_game() {
        let mut old: ServeConfig = toml::from_str("[options.battlenumber]\nhole-rule = \"off\"\n").unwrap();
        let warnings = old.migrate().unwrap();
        assert!(warnings[0].contains("[games.battlenumber.options]"), "{warnings:?}");
        old.validate().unwrap();
        let moved = crate::hosted::defaults::<engine::battlenumber::BattleNumber>(&old);
        assert_ne!(moved, engine::battlenumber::Options::default(), "the old table's rule is kept");
        let text = toml::to_string(&old).unwrap();
        assert!(text.contains("[games.battlenumber.options]") && !text.contains("[options"), "{text}");
        // Each game reads its own keys: a wrong one is refused at start, naming the table.
        for (table, bad) in [
            ("[games.trigolden.options]\nscoring = \"nobody\"\n", "[games.trigolden.options]"),
            ("[games.banqi.options]\nrule = 1\n", "[games.banqi.options]"),
            ("[games.battlenumber.options]\nhole-rule = 3\n", "[games.battlenumber.options]"),
        ] {
            let cfg: ServeConfig = toml::from_str(table).unwrap();
            assert!(cfg.validate().unwrap_err().contains(bad), "{table}");
        }
        let ok: ServeConfig = toml::from_str("[games.trigolden.options]\nscoring = \"trigolden\"\n").unwrap();
        ok.validate().unwrap();
        let tg = crate::hosted::defaults::<engine::trigolden::TriGolden>(&ok);
        assert_eq!(tg.scoring, engine::trigolden::ScoringMode::Trigolden);
    }

    #[test]
    fn each_game_accepts_only_its_own_agents() {
        for (kind, agent, ok) in [
            (GameKind::BattleNumber, "auto", true),
            (GameKind::BattleNumber, "net", true),
            (GameKind::BattleNumber, "banqi-ab", false),
            (GameKind::TriGolden, "trigolden-lite", true),
            (GameKind::TriGolden, "mcts:eval=net,model=x", false),
            (GameKind::TriGolden, "banqi-ab", false),
            (GameKind::Banqi, "banqi-ab:flips=6", true),
            (GameKind::Banqi, "random", false),
            (GameKind::Banqi, "banqi-ab:foo=1", false),
            // The server serves its own model only, through `auto` or `net`.
            (GameKind::Banqi, "banqi-ab:model=x.safetensors", false),
        ] {
            let cfg = ServeConfig::default().with_agent(kind, agent);
            let r = cfg.validate();
            assert_eq!(r.is_ok(), ok, "{kind} {agent}: {r:?}");
            if let Err(e) = r {
                assert!(e.contains(&format!("[games.{kind}] agent")), "{e}");
            }
        }
        let cfg = ServeConfig { coordinator: Some("http://x".into()), ..ServeConfig::default() }
            .with_model(GameKind::Banqi, "m");
        assert!(cfg.validate().unwrap_err().contains("not both"));
    }
}
