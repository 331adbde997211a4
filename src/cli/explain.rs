//! `gpuplan explain`: why the plan is what it is, profile by profile.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use gpuplan::report::explain::{ExplainFormat, explain_why_not};

use super::CliError;
use super::inputs::Inputs;

#[derive(clap::Args)]
#[command(mut_arg("paths", |a| a.help("Profile files or directories of *.kdl files, or the name of one profile to explain (an argument that is not an existing path) [default: profiles]").value_name("PATHS|PROFILE")))]
pub struct Args {
    #[command(flatten)]
    inputs: Inputs,
    /// How the explanation is printed.
    #[arg(long, value_enum, default_value_t)]
    format: ExplainFormat,
    /// For each NodePool: is this instance type a candidate (its rank and price), and if not, which constraint
    /// removed it, with the numbers and the profile line (repeatable, or a comma-separated list).
    #[arg(long, value_name = "TYPE", value_delimiter = ',')]
    why_not: Vec<String>,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let Args { mut inputs, format, why_not } = args;
    let profile = take_profile_name(&mut inputs.profiles.paths)?;
    let compiled = inputs.compile()?;
    print!("{}", explain_why_not(&compiled, profile.as_deref(), &why_not, format).map_err(CliError::msg)?);
    Ok(ExitCode::SUCCESS)
}

/// `explain llm-inference` as well as `explain profiles/llm-inference.kdl`: a positional argument that is not an
/// existing path and does not look like one (no `/`, no `.kdl`) names the profile to explain; the rest are paths.
fn take_profile_name(paths: &mut Vec<PathBuf>) -> Result<Option<String>, CliError> {
    let looks_like_a_path = |p: &Path| p.exists() || p.components().count() > 1 || p.extension().is_some_and(|e| e == "kdl");
    let (names, kept): (Vec<PathBuf>, Vec<PathBuf>) = std::mem::take(paths).into_iter().partition(|p| !looks_like_a_path(p));
    *paths = kept;
    match names.as_slice() {
        [] => Ok(None),
        [name] => Ok(Some(name.to_string_lossy().into_owned())),
        several => Err(CliError::msg(format!(
            "explain takes one profile name; {} are neither existing paths nor one name (explain each in turn, or all of them with no name)",
            several.iter().map(|n| format!("`{}`", n.display())).collect::<Vec<_>>().join(", ")
        ))),
    }
}
