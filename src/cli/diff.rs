//! `gpuplan diff`: what compile would change in out/, optionally with the pods whose placement changes.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use gpuplan::emit::{self, diff::DiffFormat, gitops};
use gpuplan::simulate::placement_diff::placement_changes;

use super::inputs::Inputs;
use super::CliError;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    inputs: Inputs,
    #[arg(long, default_value = "out")]
    out: PathBuf,
    /// Compare with out/ as this git revision holds it (a pull request's base: a sha, `origin/main`), read from git
    /// objects, instead of the work tree's out/. Whether the work tree's out/ is current is said apart.
    #[arg(long, value_name = "REV")]
    base: Option<String>,
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
    let Args { inputs, out, base, format, exit_code, pods } = args;
    let mut compiled = inputs.compile()?;
    let tree = compiled.take_output_tree();
    let current = match &base {
        Some(rev) => gitops::out_at_revision(Path::new("."), &out, rev).map_err(CliError::msg)?,
        None => emit::read_tree(&out).map_err(CliError::io("read", &out))?,
    };
    let stale = base.is_some() && !emit::is_current(&out, &tree).map_err(CliError::io("read", &out))?;
    if stale {
        eprintln!("warning: {}", stale_message(&out));
    }
    emit::transition::refuse(&out, &current, &tree, &compiled.profiles, &compiled.sources)?;
    let placement = if pods.is_empty() { None } else { Some(placement_changes(&current, &tree, &pods, &inputs.data.catalogs).map_err(CliError::msg)?) };
    // Said on stderr whatever the format: a reviewer reading the patch or the JSON still sees it.
    for removed in emit::diff::removed_node_pools(&current, &tree) {
        eprintln!("warning: removes {removed}: {}", emit::diff::REMOVAL_WARNING);
    }
    let placement = placement.as_deref().map(|changes| (changes, pods.as_slice()));
    let rendered = emit::placement::render_with_placement(&current, &tree, format.into(), placement).map_err(CliError::msg)?;
    match format {
        Format::Markdown if stale => print!("> [!CAUTION]\n> {}\n\n{rendered}", stale_message(&out)),
        _ => print!("{rendered}"),
    }
    Ok(if exit_code && current != tree { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// The head's committed out/ is not what its profiles compile to: the diff (from the base) is still right, but the
/// commit is not what Argo CD or Flux would apply.
fn stale_message(out: &Path) -> String {
    format!(
        "{}/ in this checkout is not what its profiles compile to (a stale pull request); the changes shown are from the base's {0}/ to what the profiles compile to: run `gpuplan compile` and commit {0}/",
        out.display()
    )
}
