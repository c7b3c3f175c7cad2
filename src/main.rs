//! The `agent-tui` binary: parse the command line, hand it to a front end.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = agent_tui::cli::Cli::parse();
    agent_tui::cli::run(cli).into()
}
