//! `gpuplan diff`: what compile would change in out/, optionally with the pods whose placement changes.

use std::path::PathBuf;
use std::process::ExitCode;

use gpuplan::emit::{self, diff::DiffFormat};
use gpuplan::simulate::placement_diff::placement_changes;

use super::inputs::Inputs;
use super::CliError;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    inputs: Inputs,
    #[arg(long, default_value = "out")]
    out: PathBuf,
    #[arg(long, value_enum, default_value_t = Format::Unified)]
    format: Format,
    /// Exit 1 when there are differences.
    #[arg(long)]
    exit_code: bool,
    /// Also simulate these pods (Pod/Deployment/StatefulSet/ReplicaSet/Job YAML) on out/ and on the new output,
    /// and list every pod whose placement changes, with the $/h change (see `gpuplan simulate`).
    #[arg(long, num_args = 1..)]
    pods: Vec<PathBuf>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Format {
    Unified,
    Markdown,
    Json,
}

impl From<Format> for DiffFormat {
    fn from(format: Format) -> Self {
        match format {
            Format::Unified => DiffFormat::Unified,
            Format::Markdown => DiffFormat::Markdown,
            Format::Json => DiffFormat::Json,
        }
    }
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let Args { inputs, out, format, exit_code, pods } = args;
    let mut compiled = inputs.compile()?;
    let tree = compiled.take_output_tree();
    let current = emit::read_tree(&out).map_err(CliError::io("read", &out))?;
    emit::transition::refuse(&out, &current, &tree, &compiled.profiles, &compiled.sources)?;
    let placement = if pods.is_empty() { None } else { Some(placement_changes(&current, &tree, &pods, &inputs.data.catalogs).map_err(CliError::msg)?) };
    // Said on stderr whatever the format: a reviewer reading the patch or the JSON still sees it.
    for removed in emit::diff::removed_node_pools(&current, &tree) {
        eprintln!("warning: removes {removed}: {}", emit::diff::REMOVAL_WARNING);
    }
    let placement = placement.as_deref().map(|changes| (changes, pods.as_slice()));
    print!("{}", emit::placement::render_with_placement(&current, &tree, format.into(), placement).map_err(CliError::msg)?);
    Ok(if exit_code && current != tree { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
