//! # zeroplay
//!
//! The `zeroplay` command-line tool: arena matches between agents, perft counts, and playing an
//! agent in the terminal. The rules and search live in the `engine` crate; this crate only
//! parses, configures, runs things in parallel and prints.

pub mod agents_cmd;
pub mod arena_cmd;
pub mod args;
pub mod bench_checks;
pub mod bench_cmd;
pub mod bench_depth;
pub mod bench_net;
pub mod bench_serve;
pub mod cli;
pub mod commands;
pub mod config;
pub mod curve_cmd;
pub mod diagnose_cmd;
pub mod draws_cmd;
pub mod fuzz;
mod init_model;
pub mod local_cmd;
pub mod logging;
pub mod match_cmd;
pub mod model_doc;
pub mod netload;
pub mod perft_cmd;
pub mod pipeline_cmd;
pub mod play_cmd;
pub mod render_cmd;
pub mod report_cmd;
pub mod settings_cmd;
pub mod shutdown;
pub mod strength_cmd;
pub mod train_cmd;
pub mod tune_cmd;
pub mod uci_cmd;
