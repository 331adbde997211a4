//! `gpuplan explain`: why the plan is what it is, profile by profile.

use std::path::PathBuf;
use std::process::ExitCode;

use gpuplan::report::explain::{ExplainFormat, explain};

use super::inputs::Data;
use super::CliError;

#[derive(clap::Args)]
pub struct Args {
    /// Only this profile.
    profile: Option<String>,
    /// Profile files or directories.
    #[arg(long = "profiles", default_value = "profiles")]
    profiles: Vec<PathBuf>,
    #[command(flatten)]
    data: Data,
    /// How the explanation is printed.
    #[arg(long, value_enum, default_value_t)]
    format: ExplainFormat,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let compiled = args.data.compile(&args.profiles)?;
    print!("{}", explain(&compiled, args.profile.as_deref(), args.format).map_err(CliError::msg)?);
    Ok(ExitCode::SUCCESS)
}
