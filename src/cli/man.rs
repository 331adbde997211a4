//! `gpuplan man`: the man page (roff), generated from the same clap definition as the parser.

use std::process::ExitCode;

use clap::CommandFactory;

use super::{Cli, CliError, docs};

pub fn run() -> Result<ExitCode, CliError> {
    let page = docs::man_page(Cli::command()).map_err(CliError::msg)?;
    std::io::Write::write_all(&mut std::io::stdout(), &page).map_err(CliError::msg)?;
    Ok(ExitCode::SUCCESS)
}
