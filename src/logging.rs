//! Logging set-up: `tracing` output on stderr, filtered by `RUST_LOG` (default `info`, or
//! `debug` with `-v`): human-readable lines, or one JSON object per event
//! (`--log-format json`) for a cluster's log collector.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// How log events are written.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines (coloured on a terminal).
    #[default]
    Text,
    /// One JSON object per line: timestamp, level, message and every field.
    Json,
}

/// Installs the global subscriber. Call once, at start-up.
pub fn init(verbose: bool, format: LogFormat) {
    let default = if verbose { "debug" } else { "info" };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let builder =
        tracing_subscriber::fmt().with_env_filter(filter).with_target(false).with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder.with_ansi(std::io::stderr().is_terminal()).try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
}
