//! Dispatch from parsed arguments to the commands.

use anyhow::Result;

use crate::cli::{Cli, Command};

/// Runs the command named on the command line.
///
/// # Errors
/// Whatever the command reports: bad configuration, bad specs, I/O.
pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Arena(args) => crate::arena_cmd::run(args),
        Command::Perft(args) => crate::perft_cmd::run(args),
        Command::Agents(args) => crate::agents_cmd::run(args),
        Command::Settings(args) => crate::settings_cmd::run(args),
        Command::Play(args) => crate::play_cmd::run(args),
        Command::Render(args) => crate::render_cmd::run(args),
        Command::Local(args) => crate::local_cmd::local(args),
        Command::Coordinator(args) => crate::pipeline_cmd::coordinator(args),
        Command::Serve(args) => crate::pipeline_cmd::serve(args),
        Command::Worker(args) => crate::pipeline_cmd::worker(args),
        Command::Bench(args) => crate::bench_cmd::run(args),
        Command::Train(args) => crate::train_cmd::train(args),
        Command::Export(args) => crate::train_cmd::export(args),
        Command::Uci(args) => crate::uci_cmd::run(args),
        Command::Match(args) => crate::match_cmd::run(args),
        Command::Diagnose(args) => crate::diagnose_cmd::run(args),
        Command::Draws(args) => crate::draws_cmd::run(args),
        Command::Report(args) => crate::report_cmd::run(args),
        Command::Strength(args) => crate::strength_cmd::run(args),
        Command::Curve(args) => crate::curve_cmd::run(args),
        Command::Tune(args) => crate::tune_cmd::run(args),
        Command::Probe(args) => probe(&args),
    }
}

/// `zeroplay probe`: exit 0 on HTTP 200.
fn probe(args: &crate::cli::ProbeArgs) -> Result<()> {
    use std::net::ToSocketAddrs;
    let addr = args
        .addr
        .to_socket_addrs()
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.addr))?
        .next()
        .ok_or_else(|| anyhow::anyhow!("{}: no address", args.addr))?;
    let (status, body) = zeroplay_telemetry::http_get(addr, &args.path)
        .map_err(|e| anyhow::anyhow!("{addr}{}: {e}", args.path))?;
    print!("{body}");
    if status == 200 { Ok(()) } else { anyhow::bail!("{addr}{} answered HTTP {status}", args.path) }
}
