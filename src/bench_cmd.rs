//! `zeroplay bench`: measurements that need the whole system (not criterion micro-benchmarks).

use anyhow::Result;
use clap::Args;

/// `zeroplay bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {}

/// Runs the benchmark.
///
/// # Errors
/// Whatever the benchmark reports.
pub fn run(_args: BenchArgs) -> Result<()> {
    anyhow::bail!("no benchmarks yet")
}
