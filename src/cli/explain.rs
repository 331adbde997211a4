//! `gpuplan explain`: why the plan is what it is, profile by profile.

use std::path::PathBuf;
use std::process::ExitCode;

use gpuplan::report::explain::{ExplainFormat, explain_why_not};

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
    #[arg(long, value_enum, default_value_t)]
    format: ExplainFormat,
    /// For each NodePool: is this instance type a candidate (its rank and price), and if not, which constraint
    /// removed it, with the numbers and the profile line (repeatable, or a comma-separated list).
    #[arg(long, value_name = "TYPE", value_delimiter = ',')]
    why_not: Vec<String>,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let compiled = args.data.compile(&args.profiles)?;
    print!("{}", explain_why_not(&compiled, args.profile.as_deref(), &args.why_not, args.format).map_err(CliError::msg)?);
    Ok(ExitCode::SUCCESS)
}
