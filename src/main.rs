//! The `zeroplay` command line: parses arguments and configuration, sets up logging, and hands
//! over to the library (`zeroplay::commands`).

use clap::Parser;

fn main() -> anyhow::Result<()> {
    let cli = zeroplay::cli::Cli::parse_from(zeroplay::cli::normalize_args(std::env::args_os()));
    zeroplay::logging::init(cli.verbose, cli.log_format);
    zeroplay::commands::run(cli)
}
