//! `gpuplan completions SHELL`: the completion script, generated from the same clap definition as the parser.

use std::process::ExitCode;

use clap::CommandFactory;

use super::{Cli, CliError, docs};

#[derive(clap::Args)]
pub struct Args {
    /// The shell the script is for.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let script = docs::completions(args.shell, &mut Cli::command());
    std::io::Write::write_all(&mut std::io::stdout(), &script).map_err(CliError::msg)?;
    Ok(ExitCode::SUCCESS)
}
