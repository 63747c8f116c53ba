//! Argument types shared by several commands (a game name, a seat, the object-storage flags),
//! apart from `cli.rs` so that a command module defining its own arguments can use them
//! without importing `cli.rs`, which names the command modules (no import cycles).

use clap::{Args, ValueEnum};
use engine::GameKind;

/// Parses a game name on the command line into the engine's [`GameKind`], listing every
/// game (with its full name) in `--help` and in the error for an unknown one.
pub fn game_kind() -> impl clap::builder::TypedValueParser<Value = GameKind> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(GameKind::ALL.map(|k| PossibleValue::new(k.name()).help(k.title())))
        .map(|s| s.parse::<GameKind>().expect("clap accepts only the listed names"))
}

/// Object storage flags of `zeroplay coordinator` and `zeroplay train` (the `[storage]`
/// table of their configs, settable from the environment as Kubernetes and compose do).
#[derive(Debug, Args, Default)]
pub struct StorageArgs {
    /// Mirror games and models to S3-compatible object storage: s3://BUCKET/PREFIX
    /// (overrides [storage] url). Keys come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY.
    #[arg(long, env = "ZEROPLAY_STORAGE_URL")]
    pub storage_url: Option<String>,
    /// Endpoint of an S3-compatible server, e.g. http://minio:9000 (overrides [storage]
    /// endpoint; empty: Amazon S3).
    #[arg(long, env = "ZEROPLAY_STORAGE_ENDPOINT")]
    pub storage_endpoint: Option<String>,
    /// Allow a plain-HTTP storage endpoint (trusted networks only).
    #[arg(long, env = "ZEROPLAY_STORAGE_ALLOW_HTTP")]
    pub storage_allow_http: bool,
}

impl StorageArgs {
    /// Applies the flags to a config's `[storage]` table (creating it for `--storage-url`).
    ///
    /// # Errors
    /// An endpoint or `--storage-allow-http` without a URL to apply it to.
    pub fn apply(self, storage: &mut Option<zeroplay_storage::StorageConfig>) -> anyhow::Result<()> {
        if let Some(url) = self.storage_url.filter(|u| !u.is_empty()) {
            storage.get_or_insert_with(Default::default).url = url;
        }
        let given = self.storage_endpoint.as_ref().is_some_and(|e| !e.is_empty()) || self.storage_allow_http;
        let Some(s) = storage.as_mut() else {
            anyhow::ensure!(
                !given,
                "--storage-endpoint / --storage-allow-http need --storage-url or a [storage] table"
            );
            return Ok(());
        };
        if let Some(e) = self.storage_endpoint.filter(|e| !e.is_empty()) {
            s.endpoint = e;
        }
        if self.storage_allow_http {
            s.allow_http = true;
        }
        Ok(())
    }
}

/// A seat, on the command line.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SeatArg {
    /// Moves first.
    First,
    /// Moves second.
    Second,
}
